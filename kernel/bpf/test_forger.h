/* Test only: the forging loop of the echo forgers (test_echo_forger.bpf.c, for the load-factor
 * family's one-byte echo; test_xcc_forger.bpf.c, for the congestion header's). A receiver's
 * sockops that, on its ACKs, writes the forger's options in turn, one per ACK, with room for
 * FORGER_ROOM bytes; the sender under test must count each broken one and change no window.
 *
 * A template: the includer defines FORGER_ROOM, FORGER_TURNS (turns in the cycle), FORGER_KIND
 * and FORGER_EXID (the option forged), and
 *   __u32 forge(__u8 *opt, __u32 turn)   fills the rest of opt (FORGER_ROOM bytes: kind and
 *                                        ExID set, the rest zero) for this turn and returns its
 *                                        length (opt[1] too), 0 for none
 * and gets the sockops program FORGER_PROG. */
#ifndef RACC_TEST_FORGER_H
#define RACC_TEST_FORGER_H

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
int FORGER_PROG(struct bpf_sock_ops *skops)
{
	struct bpf_sock *sk = skops->sk;
	struct forger *f;
	__u8 opt[FORGER_ROOM] = { FORGER_KIND, 0, FORGER_EXID >> 8, FORGER_EXID & 0xff };
	__u32 len;

	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		bpf_reserve_hdr_opt(skops, FORGER_ROOM, 0);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		if (!sk)
			break;
		f = bpf_sk_storage_get(&forged, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
		if (!f)
			break;
		len = forge(opt, f->n++ % FORGER_TURNS);
		if (len >= 2 && len <= FORGER_ROOM)
			bpf_store_hdr_opt(skops, opt, len, 0);
		break;
	}
	return 1;
}

#endif
