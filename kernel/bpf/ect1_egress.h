/* The senders' egress of the load-factor family (docs/KERNEL-BPF.md): data of sockets that run
 * this object's controller leaves with VCP's ECN-capable codepoint 01, written on the wire (the
 * kernel clears the ECN bits a TCP socket asks for through IP_TOS). SYNs and pure ACKs stay
 * Not-ECT. VCP's (vcp_host.bpf.c), shared by the chain family (dpcp_host.bpf.c), whose chains
 * also start at 01. The includer defines RACC_CC, the name its struct_ops registers, count()
 * and ECT1_SENT, the counter slot of a packet marked, and gets the tc program `ect1_egress`.
 * BPF only. */
#ifndef RACC_ECT1_EGRESS_H
#define RACC_ECT1_EGRESS_H

#include "tc_ip.h"

#define RACC_STR_(x) #x
#define RACC_STR(x) RACC_STR_(x)

/* The socket of `skb` is a TCP socket whose congestion control is RACC_CC. */
static __always_inline int ect1_runs_ours(struct __sk_buff *skb)
{
	static const char want[] = RACC_STR(RACC_CC);
	struct bpf_sock *bsk = skb_full_sock(skb);
	struct tcp_sock *tp;
	const struct tcp_congestion_ops *ops;
	char n[sizeof(want)];
	int i;

	if (!bsk)
		return 0;
	tp = bpf_skc_to_tcp_sock(bsk);
	if (!tp)
		return 0;
	ops = tp->inet_conn.icsk_ca_ops;
	if (!ops || bpf_probe_read_kernel(n, sizeof(n), ops->name))
		return 0;
#pragma unroll
	for (i = 0; i < sizeof(want); i++)
		if (n[i] != want[i])
			return 0;
	return 1;
}

/* 1 when `skb` was a Not-ECT TCP data packet of ours and now leaves with 01. */
static __always_inline int ect1_mark_data(struct __sk_buff *skb)
{
	void *data_end = (void *)(long)skb->data_end;
	struct iphdr *iph = tc_ipv4(skb);
	struct tcphdr *th;
	__u32 ihl;

	if (!iph || iph->protocol != IPPROTO_TCP_ || (iph->tos & 3))
		return 0;
	ihl = iph->ihl * 4;
	if (ihl < sizeof(*iph))
		return 0;
	th = (void *)iph + ihl;
	if ((void *)(th + 1) > data_end)
		return 0;
	if (bpf_ntohs(iph->tot_len) <= ihl + th->doff * 4) /* only data carries the code */
		return 0;
	if (!ect1_runs_ours(skb))
		return 0;
	return tc_write_ecn(skb, iph, 1) == 0;
}

SEC("tc")
int ect1_egress(struct __sk_buff *skb)
{
	if (ect1_mark_data(skb))
		count(ECT1_SENT);
	return 0; /* TC_ACT_OK */
}

#endif
