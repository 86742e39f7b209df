// SPDX-License-Identifier: GPL-2.0
/* Test only (tests/python/test_kernel_xcp_forged.py): a receiver that forges the XCP echo. On its
 * ACKs it writes, in turn: our kind and echo ExID with length 6; with length 10; with length 4
 * (no feedback); another experiment's ExID with a large negative feedback; nothing. A sender
 * must count the first three, take none of them, and keep its window. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xcc_opt.h"

struct forger {
	__u32 n;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct forger);
} forged SEC(".maps");

SEC("sockops")
int xcc_echo_forger(struct bpf_sock_ops *skops)
{
	struct bpf_sock *sk = skops->sk;
	struct forger *f;
	__u8 opt[12] = { XCC_OPT_KIND, 0, XCP_ECHO_EXID >> 8, XCP_ECHO_EXID & 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0 };
	__u32 turn;

	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		bpf_reserve_hdr_opt(skops, 12, 0);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		if (!sk)
			break;
		f = bpf_sk_storage_get(&forged, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (!f)
			break;
		turn = f->n++ % 5;
		if (turn == 0) { /* length 6 */
			opt[1] = 6;
			bpf_store_hdr_opt(skops, opt, 6, 0);
		} else if (turn == 1) { /* length 10 */
			opt[1] = 10;
			bpf_store_hdr_opt(skops, opt, 10, 0);
		} else if (turn == 2) { /* no feedback */
			opt[1] = 4;
			bpf_store_hdr_opt(skops, opt, 4, 0);
		} else if (turn == 3) { /* not our experiment: a large negative feedback, ignored */
			opt[1] = 8;
			opt[2] = 0x12;
			bpf_store_hdr_opt(skops, opt, 8, 0);
		}
		break;
	}
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
