// SPDX-License-Identifier: GPL-2.0
/* Test only (tests/python/test_kernel_bpf_e2e.py, test_kernel_dpcp_run.py): a receiver that
 * forges the load-factor family's echo. On its ACKs it writes, in turn: our kind and ExID with
 * length 6; with code 9; with no code byte (length 4); another experiment's ExID; nothing. A
 * sender must count each and change no window. The loop is test_forger.h's. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "common.h"

#define FORGER_ROOM 8
#define FORGER_TURNS 5
#define FORGER_PROG echo_forger
#define FORGER_KIND ECHO_OPT_KIND
#define FORGER_EXID ECHO_OPT_EXID

static __always_inline __u32 forge(__u8 *opt, __u32 turn)
{
	if (turn == 0) { /* length 6 */
		opt[4] = 1;
		return opt[1] = 6;
	}
	if (turn == 1) { /* unknown code */
		opt[4] = 9;
		return opt[1] = 5;
	}
	if (turn == 2) /* no code byte */
		return opt[1] = 4;
	if (turn == 3) { /* not our experiment */
		opt[2] = 0x12;
		opt[4] = 1;
		return opt[1] = 5;
	}
	return 0;
}

#include "test_forger.h"

char LICENSE[] SEC("license") = "GPL";
