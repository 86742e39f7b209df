// SPDX-License-Identifier: GPL-2.0
/* Test only (tests/python/test_kernel_bpf_e2e.py): a receiver that forges the VCP echo. On its
 * ACKs it writes, in turn: our kind and ExID with length 6; with code 9; with no code byte
 * (length 4); another experiment's ExID; nothing. A sender must count each and change no window. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "common.h"

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
int echo_forger(struct bpf_sock_ops *skops)
{
	struct bpf_sock *sk = skops->sk;
	struct forger *f;
	__u8 opt[8] = { ECHO_OPT_KIND, 0, ECHO_OPT_EXID >> 8, ECHO_OPT_EXID & 0xff, 0, 0, 0, 0 };
	__u32 turn;

	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		bpf_reserve_hdr_opt(skops, 6, 0);
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
			opt[4] = 1;
			bpf_store_hdr_opt(skops, opt, 6, 0);
		} else if (turn == 1) { /* unknown code */
			opt[1] = 5;
			opt[4] = 9;
			bpf_store_hdr_opt(skops, opt, 5, 0);
		} else if (turn == 2) { /* no code byte */
			opt[1] = 4;
			bpf_store_hdr_opt(skops, opt, 4, 0);
		} else if (turn == 3) { /* not our experiment */
			opt[1] = 5;
			opt[2] = 0x12;
			opt[4] = 1;
			bpf_store_hdr_opt(skops, opt, 5, 0);
		}
		break;
	}
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
