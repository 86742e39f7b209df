// SPDX-License-Identifier: GPL-2.0
/* Test only (tests/python/test_kernel_xcp_forged.py): a receiver that forges the XCP echo. On its
 * ACKs it writes, in turn: our kind and echo ExID with length 6; with length 10; with length 4
 * (no feedback); another experiment's ExID with a large negative feedback; nothing. A sender
 * must count the first three, take none of them, and keep its window. The loop is
 * test_forger.h's. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xcc_opt.h"

#define FORGER_ROOM 12
#define FORGER_TURNS 5
#define FORGER_PROG xcc_echo_forger
#define FORGER_KIND XCC_OPT_KIND
#define FORGER_EXID XCP_ECHO_EXID

static __always_inline __u32 forge(__u8 *opt, __u32 turn)
{
	opt[4] = 0x80; /* the feedback's sign: a large negative one */
	if (turn == 0) /* length 6 */
		return opt[1] = 6;
	if (turn == 1) /* length 10 */
		return opt[1] = 10;
	if (turn == 2) /* no feedback */
		return opt[1] = 4;
	if (turn == 3) { /* not our experiment: a large negative feedback, ignored */
		opt[2] = 0x12;
		return opt[1] = 8;
	}
	return 0;
}

#include "test_forger.h"

char LICENSE[] SEC("license") = "GPL";
