// SPDX-License-Identifier: GPL-2.0
/* TCP/VCP's end hosts on the kernel's own TCP (docs/KERNEL-BPF.md; racc-proto `vcp/window.rs`,
 * `vcp/echo.rs`): one object, so that its programs share the socket storage.
 *
 * - `racc_vcp` (struct_ops tcp_congestion_ops): MI/AI/MD (VCP-DCCP A3–A5) on the code the ACK
 *   echoed, in fixed point (`vcp_law.h`); a loss is TCP's halving, an RTO the kernel's one
 *   packet, then the laws resume without slow start (as `VcpWindow`).
 * - sender egress (tc): data of `racc_vcp` sockets leaves with ECN 01 (the kernel clears the
 *   ECN bits a TCP socket asks for through IP_TOS, so the codepoint is written on the wire).
 * - receiver ingress (cgroup_skb): the code of every arriving data packet, kept per socket as
 *   the set of codes seen since the last ACK (an atomic OR; max taken when the ACK is written).
 * - sockops: the receiver writes the largest code since its last ACK into each ACK as the echo
 *   option (kind 253, ExID, 1 byte); the sender parses it into socket storage with the ACK
 *   number it belongs to, so the controller uses an echo only for the very ACK that carried it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "common.h"
#include "vcp_law.h"

#define TC_ACT_OK 0
#define ETH_P_IP 0x0800
#define ETH_HLEN 14
#define IPPROTO_TCP_ 6
#define ENOMSG_ 42

/* Per-socket storage shared by sockops, the ingress program and the controller. */
struct vcp_sk {
	__u32 seen_mask; /* receiver: bit c set when a data packet arrived with code c since the last ACK */
	__u32 echoing; /* receiver: a coded data packet arrived once: every ACK carries the option */
	__u32 echo_ack; /* sender: the ACK number whose option gave echo_code */
	__u32 echo_code;
	__u32 echo_valid;
};

/* The controller's private state (inet_csk_ca, 104 bytes). */
struct vcp_ca {
	struct vcp_law_state law;
	__u32 last_set; /* the snd_cwnd this controller last wrote */
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vcp_sk);
} sk_store SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vcp_law_params);
} law_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HC_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct echo_opt {
	__u8 kind;
	__u8 len;
	__u16 exid;
	__u8 code;
	__u8 pad[3];
} __attribute__((packed));

static __always_inline void count(__u32 slot)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &slot);

	if (c)
		*c += 1;
}

static __always_inline struct vcp_law_params *law_params(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&law_config, &zero);
}

/* ---- the controller ---------------------------------------------------------------------- */

static __always_inline struct vcp_ca *ca_of(struct sock *sk)
{
	return (struct vcp_ca *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline void set_cwnd(struct tcp_sock *tp, struct vcp_ca *ca)
{
	__u64 w = ca->law.cwnd >> FX_CWND_SHIFT; /* the kernel's window is whole packets */

	if (w < 1)
		w = 1;
	if (w > tp->snd_cwnd_clamp) {
		w = tp->snd_cwnd_clamp;
		ca->law.cwnd = w << FX_CWND_SHIFT; /* the law state stops at the clamp too */
	}
	tp->snd_cwnd = (__u32)w;
	ca->last_set = (__u32)w;
}

SEC("struct_ops/racc_vcp_init")
void BPF_PROG(racc_vcp_init, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct vcp_ca *ca = ca_of(sk);
	struct vcp_law_params *p = law_params();
	__u64 iw = p && p->iw ? p->iw : 2;

	ca->law.cwnd = iw << FX_CWND_SHIFT; /* racc's iw (2 packets), not Linux's 10 */
	ca->law.hold_until_us = 0;
	ca->law.ai_until_us = 0;
	ca->law.mds = 0;
	set_cwnd(tp, ca);
}

SEC("struct_ops/racc_vcp_cong_avoid")
void BPF_PROG(racc_vcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct vcp_ca *ca = ca_of(sk);
	struct vcp_law_params *p = law_params();
	struct vcp_sk *st;
	__u64 rtt_us, mds;
	__u32 code;
	int held;

	if (!p)
		return;
	count(HC_ACKS);
	/* The kernel moved the window itself (recovery's exit, an undo, an RTO): resume from it. */
	if (tp->snd_cwnd != ca->last_set)
		ca->law.cwnd = (__u64)tp->snd_cwnd << FX_CWND_SHIFT;
	st = bpf_sk_storage_get(&sk_store, sk, 0, 0);
	if (!st || !st->echo_valid || st->echo_ack != ack) {
		count(HC_ECHO_ABSENT); /* no code for this ACK: ignored, the window unchanged */
		return;
	}
	st->echo_valid = 0;
	code = st->echo_code & 3;
	rtt_us = tp->srtt_us >> 3; /* SRTT, else t_p (`VcpWindow::rtt_s`) */
	if (!rtt_us)
		rtt_us = p->t_p_us;
	rtt_us = vcp_rtt_clock(p, rtt_us);
	mds = ca->law.mds;
	held = code == VCP_CODE_OVERLOAD && tp->tcp_mstamp < ca->law.hold_until_us;
	vcp_on_code(&ca->law, p, code, acked, rtt_us, tp->tcp_mstamp);
	if (code == VCP_CODE_LOW)
		count(HC_MI);
	else if (code == VCP_CODE_NONE)
		count(HC_BLEACHED);
	else if (held)
		count(HC_HELD);
	else if (ca->law.mds != mds)
		count(HC_MD);
	else
		count(HC_AI); /* 10, or 11 within AI-for-one-rtt */
	set_cwnd(tp, ca);
}

/* A loss (or an ECN-Echo, not VCP's signal but TCP's): NewReno's halving (`Response::Halve`). */
SEC("struct_ops/racc_vcp_ssthresh")
__u32 BPF_PROG(racc_vcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	count(HC_LOSS);
	return tp->snd_cwnd >> 1 > 2 ? tp->snd_cwnd >> 1 : 2;
}

SEC("struct_ops/racc_vcp_undo_cwnd")
__u32 BPF_PROG(racc_vcp_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops racc_vcp = {
	.init = (void *)racc_vcp_init,
	.cong_avoid = (void *)racc_vcp_cong_avoid,
	.ssthresh = (void *)racc_vcp_ssthresh,
	.undo_cwnd = (void *)racc_vcp_undo_cwnd,
	.name = "racc_vcp",
};

/* ---- the sender's egress: ECN 01 on racc_vcp data -------------------------------------- */

static __always_inline int runs_racc_vcp(struct __sk_buff *skb)
{
	struct bpf_sock *bsk = skb->sk;
	struct tcp_sock *tp;
	const struct tcp_congestion_ops *ops;
	char n[9];

	if (!bsk)
		return 0;
	bsk = bpf_sk_fullsock(bsk);
	if (!bsk)
		return 0;
	tp = bpf_skc_to_tcp_sock(bsk);
	if (!tp)
		return 0;
	ops = tp->inet_conn.icsk_ca_ops;
	if (!ops || bpf_probe_read_kernel(n, sizeof(n), ops->name))
		return 0;
	return n[0] == 'r' && n[1] == 'a' && n[2] == 'c' && n[3] == 'c' && n[4] == '_' && n[5] == 'v' &&
	       n[6] == 'c' && n[7] == 'p' && n[8] == 0;
}

SEC("tc")
int vcp_host_egress(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph;
	struct tcphdr *th;
	__u32 ihl, payload;
	__u8 tos, new_tos;
	__u16 old_word, new_word;

	if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;
	iph = (void *)(eth + 1);
	if ((void *)(iph + 1) > data_end || iph->protocol != IPPROTO_TCP_ || (iph->tos & 3))
		return TC_ACT_OK;
	ihl = iph->ihl * 4;
	if (ihl < sizeof(*iph))
		return TC_ACT_OK;
	th = (void *)iph + ihl;
	if ((void *)(th + 1) > data_end)
		return TC_ACT_OK;
	payload = bpf_ntohs(iph->tot_len);
	if (payload <= ihl + th->doff * 4) /* only data carries the code (SYNs, pure ACKs stay Not-ECT) */
		return TC_ACT_OK;
	if (!runs_racc_vcp(skb))
		return TC_ACT_OK;
	tos = iph->tos;
	new_tos = tos | VCP_CODE_LOW;
	old_word = bpf_htons(((__u16)(*(__u8 *)iph) << 8) | tos);
	new_word = bpf_htons(((__u16)(*(__u8 *)iph) << 8) | new_tos);
	if (bpf_skb_store_bytes(skb, ETH_HLEN + offsetof(struct iphdr, tos), &new_tos, 1, 0) == 0 &&
	    bpf_l3_csum_replace(skb, ETH_HLEN + offsetof(struct iphdr, check), old_word, new_word, 2) == 0)
		count(HC_SENT_ECT1);
	return TC_ACT_OK;
}

/* ---- the receiver's ingress: remember each data packet's code ------------------------- */

SEC("cgroup_skb/ingress")
int vcp_host_ingress(struct __sk_buff *skb)
{
	struct iphdr iph;
	__u8 doff_byte;
	__u32 ihl, code;
	struct bpf_sock *sk;
	struct vcp_sk *st;

	if (bpf_skb_load_bytes(skb, 0, &iph, sizeof(iph)) || iph.version != 4 || iph.protocol != IPPROTO_TCP_)
		return 1;
	code = iph.tos & 3;
	if (!code)
		return 1;
	ihl = iph.ihl * 4;
	if (bpf_skb_load_bytes(skb, ihl + 12, &doff_byte, 1))
		return 1;
	if (bpf_ntohs(iph.tot_len) <= ihl + (doff_byte >> 4) * 4)
		return 1; /* no payload: not data */
	sk = skb->sk;
	if (!sk)
		return 1;
	sk = bpf_sk_fullsock(sk);
	if (!sk)
		return 1;
	st = bpf_sk_storage_get(&sk_store, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st)
		return 1;
	__sync_fetch_and_or(&st->seen_mask, 1U << code);
	st->echoing = 1;
	count(HC_DATA_CODED);
	return 1;
}

/* ---- sockops: write the echo (receiver), parse it (sender) ---------------------------- */

static __always_inline void parse_echo(struct bpf_sock_ops *skops)
{
	struct echo_opt opt = { .kind = ECHO_OPT_KIND, .len = 4, .exid = bpf_htons(ECHO_OPT_EXID) };
	struct tcphdr *th = skops->skb_data;
	struct bpf_sock *sk = skops->sk;
	struct vcp_sk *st;
	long n;

	if (!sk || (void *)(th + 1) > skops->skb_data_end)
		return;
	n = bpf_load_hdr_opt(skops, &opt, sizeof(opt), 0);
	if (n == -ENOMSG_)
		return; /* not ours; the controller counts an ACK without an echo */
	st = bpf_sk_storage_get(&sk_store, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st)
		return;
	if (n != ECHO_OPT_LEN || opt.code > 3) {
		/* Our kind and ExID but a wrong length or an unknown code: forged or broken. */
		st->echo_valid = 0;
		count(HC_ECHO_MALFORMED);
		return;
	}
	st->echo_ack = bpf_ntohl(th->ack_seq);
	st->echo_code = opt.code;
	st->echo_valid = 1;
}

static __always_inline __u32 highest_code(__u32 mask)
{
	return mask & 8 ? 3 : mask & 4 ? 2 : mask & 2 ? 1 : 0;
}

SEC("sockops")
int vcp_sockops(struct bpf_sock_ops *skops)
{
	struct bpf_sock *sk = skops->sk;
	struct vcp_sk *st;
	struct echo_opt opt;
	__u32 mask;

	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
							 BPF_SOCK_OPS_PARSE_UNKNOWN_HDR_OPT_CB_FLAG |
							 BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		if (!sk)
			break;
		st = bpf_sk_storage_get(&sk_store, sk, 0, 0);
		if (st && st->echoing)
			bpf_reserve_hdr_opt(skops, ECHO_OPT_LEN, 0);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		if (!sk)
			break;
		st = bpf_sk_storage_get(&sk_store, sk, 0, 0);
		if (!st || !st->echoing)
			break;
		/* The largest code since the last ACK (`VcpEcho::fill_ack`); 0 if none came. */
		opt.kind = ECHO_OPT_KIND;
		opt.len = ECHO_OPT_LEN;
		opt.exid = bpf_htons(ECHO_OPT_EXID);
		mask = __sync_lock_test_and_set(&st->seen_mask, 0);
		opt.code = highest_code(mask);
		if (bpf_store_hdr_opt(skops, &opt, ECHO_OPT_LEN, 0) == 0)
			count(HC_ECHO_WRITTEN);
		else
			__sync_fetch_and_or(&st->seen_mask, mask); /* no room (SACK blocks): the next ACK */
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		parse_echo(skops);
		break;
	}
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
