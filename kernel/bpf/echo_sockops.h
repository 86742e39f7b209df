/* The load-factor family's echo on sockops (docs/KERNEL-BPF.md; the option's format in
 * common.h): the receiver writes one byte into every ACK once a coded data packet has arrived,
 * the sender parses it into socket storage with the ACK number it rode, so that the controller
 * uses an echo only for the very ACK that carried it. VCP's (vcp_host.bpf.c), shared by the chain
 * family (dpcp_host.bpf.c), which differ only in the byte: VCP's code, or a chain's
 * code | position << 2.
 *
 * A template: the includer defines, before including it,
 *   ECHO_SK        its socket storage's type, with __u32 echoing, echo_ack, echo_code, echo_valid
 *   sk_store       its SK_STORAGE map of ECHO_SK, and count(slot) on its counters
 *   ECHO_WRITTEN, ECHO_MALFORMED   the counter slots of an option written, of one ignored
 *   __u8 echo_take(ECHO_SK *st)            the byte for the ACK being written (receiver)
 *   void echo_untake(ECHO_SK *st, __u8 b)  that ACK had no room for it (SACK blocks)
 *   int echo_byte_ok(__u8 b)               a byte the sender may use (else counted, ignored)
 * and gets the sockops program `echo_sockops`. BPF only. */
#ifndef RACC_ECHO_SOCKOPS_H
#define RACC_ECHO_SOCKOPS_H

#define ENOMSG_ 42

struct echo_opt {
	__u8 kind;
	__u8 len;
	__u16 exid;
	__u8 code;
	__u8 pad[3];
} __attribute__((packed));

static __always_inline void echo_parse(struct bpf_sock_ops *skops)
{
	struct echo_opt opt = { .kind = ECHO_OPT_KIND, .len = 4, .exid = bpf_htons(ECHO_OPT_EXID) };
	struct tcphdr *th = skops->skb_data;
	struct bpf_sock *sk = skops->sk;
	ECHO_SK *st;
	long n;

	if (!sk || (void *)(th + 1) > skops->skb_data_end)
		return;
	n = bpf_load_hdr_opt(skops, &opt, sizeof(opt), 0);
	if (n == -ENOMSG_)
		return; /* not ours; the controller counts an ACK without an echo */
	st = bpf_sk_storage_get(&sk_store, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st)
		return;
	if (n != ECHO_OPT_LEN || !echo_byte_ok(opt.code)) {
		/* Our kind and ExID but a wrong length or a byte out of range: forged or broken. */
		st->echo_valid = 0;
		count(ECHO_MALFORMED);
		return;
	}
	st->echo_ack = bpf_ntohl(th->ack_seq);
	st->echo_code = opt.code;
	st->echo_valid = 1;
}

static __always_inline void echo_write(struct bpf_sock_ops *skops, ECHO_SK *st)
{
	struct echo_opt opt = { .kind = ECHO_OPT_KIND, .len = ECHO_OPT_LEN, .exid = bpf_htons(ECHO_OPT_EXID) };

	opt.code = echo_take(st);
	if (bpf_store_hdr_opt(skops, &opt, ECHO_OPT_LEN, 0) == 0)
		count(ECHO_WRITTEN);
	else
		echo_untake(st, opt.code);
}

SEC("sockops")
int echo_sockops(struct bpf_sock_ops *skops)
{
	struct bpf_sock *sk = skops->sk;
	ECHO_SK *st;

	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
							 BPF_SOCK_OPS_PARSE_UNKNOWN_HDR_OPT_CB_FLAG |
							 BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		st = sk ? bpf_sk_storage_get(&sk_store, sk, 0, 0) : NULL;
		if (!st || !st->echoing)
			break;
		if (skops->op == BPF_SOCK_OPS_HDR_OPT_LEN_CB)
			bpf_reserve_hdr_opt(skops, ECHO_OPT_LEN, 0);
		else
			echo_write(skops, st);
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		echo_parse(skops);
		break;
	}
	return 1;
}

#endif
