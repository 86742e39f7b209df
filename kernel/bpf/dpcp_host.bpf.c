// SPDX-License-Identifier: GPL-2.0
/* TCP/DPCP's end hosts on the kernel's own TCP (MPCP §3; docs/KERNEL-BPF.md; racc-proto
 * `dpcp/window.rs`, `dpcp/echo.rs`), one object so that its programs share the socket storage.
 * tpcp_host.bpf.c builds the same source as TCP/TPCP (MPCP §5): chains of 3; dcpew_host.bpf.c
 * as TCP/DCP-EW (DCP-EW §III): pairs by the IP ID's LSB, and loss differentiation (dcpew_law.h).
 *
 * - `racc_dpcp` (struct_ops tcp_congestion_ops): the decoder and Table 1's laws on the
 *   (code, position) the ACK echoed (dpcp_law.h); a loss is TCP's halving, as VCP's.
 * - sender egress (tc): data of `racc_dpcp` sockets leaves ECN-capable, 01.
 * - receiver ingress (cgroup_skb): each data segment's code and position (its index in the
 *   sequence space, `dpcp_position`) into the socket's chain reassembly (dpcp_echo.h).
 * - sockops: the receiver writes one (code, position) per ACK into the echo option (kind 253,
 *   ExID, one byte: code | position << 2); the sender parses it with the ACK number it rides. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "common.h"
#include "dpcp_common.h"
#include "dpcp_law.h"
#include "dpcp_echo.h"
#ifdef RACC_DCPEW
#include "dcpew_law.h"
typedef struct dcpew_params host_params;
typedef struct dcpew_state host_state;
#define DP(p) (&(p)->dp)
#define ST(s) (&(s)->st)
#else
typedef struct dpcp_params host_params;
typedef struct dpcp_state host_state;
#define DP(p) (p)
#define ST(s) (s)
#endif

#ifndef RACC_CC
#define RACC_CC racc_dpcp
#endif
#define RACC_STR_(x) #x
#define RACC_STR(x) RACC_STR_(x)

#define TC_ACT_OK 0
#define ETH_P_IP 0x0800
#define ETH_HLEN 14
#define IPPROTO_TCP_ 6
#define ENOMSG_ 42
#define MAX_GRO_SEGS 64

struct dpcp_sk {
	struct bpf_spin_lock lock;
	struct dpcp_echo echo; /* receiver: the chains arriving */
	__u32 echoing; /* receiver: a coded data packet arrived once: every ACK carries the option */
	__u32 echo_ack; /* sender: the ACK number whose option gave echo_byte */
	__u32 echo_byte;
	__u32 echo_valid;
};

/* The controller's private state (inet_csk_ca, 104 bytes). */
struct dpcp_ca {
	host_state st;
	__u32 last_set;
};
_Static_assert(sizeof(struct dpcp_ca) <= 104, "icsk_ca_priv holds 104 bytes");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dpcp_sk);
} sk_store SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, host_params);
} law_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DHC_MAX);
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

static __always_inline void count_n(__u32 slot, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &slot);

	if (c && n)
		*c += n;
}

static __always_inline void count(__u32 slot)
{
	count_n(slot, 1);
}

static __always_inline host_params *law_params(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&law_config, &zero);
}

/* ---- the controller ---------------------------------------------------------------------- */

#ifdef RACC_DCPEW
#define HOST_ON_ACK dcpew_on_ack
#else
#define HOST_ON_ACK dpcp_on_ack
#endif

static __always_inline struct dpcp_ca *ca_of(struct sock *sk)
{
	return (struct dpcp_ca *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline void set_cwnd(struct tcp_sock *tp, struct dpcp_ca *ca)
{
	__u64 w = ST(&ca->st)->cwnd >> FX_CWND_SHIFT;

	if (w < 1)
		w = 1;
	if (w > tp->snd_cwnd_clamp) {
		w = tp->snd_cwnd_clamp;
		ST(&ca->st)->cwnd = w << FX_CWND_SHIFT;
	}
	tp->snd_cwnd = (__u32)w;
	ca->last_set = (__u32)w;
}

SEC("struct_ops/racc_dpcp_init")
void BPF_PROG(racc_dpcp_init, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct dpcp_ca *ca = ca_of(sk);
	host_params *p = law_params();
	__u64 iw;

	if (!p)
		return;
	iw = DP(p)->law.iw ? DP(p)->law.iw : 2;
	dpcp_init(ST(&ca->st), DP(p), iw << FX_CWND_SHIFT);
#ifdef RACC_DCPEW
	ca->st.bm = 0;
#endif
	set_cwnd(tp, ca);
}

SEC("struct_ops/racc_dpcp_cong_avoid")
void BPF_PROG(racc_dpcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct dpcp_ca *ca = ca_of(sk);
	host_params *p = law_params();
	struct dpcp_state *ds = ST(&ca->st);
	struct dpcp_sk *st;
	__u32 byte, code, pos, exc, fb, res, ref, kind;
	__u64 rtt_us;

	if (!p)
		return;
	count(DHC_ACKS);
	if (tp->snd_cwnd != ca->last_set)
		ds->cwnd = (__u64)tp->snd_cwnd << FX_CWND_SHIFT;
	st = bpf_sk_storage_get(&sk_store, sk, 0, 0);
	if (!st || !st->echo_valid || st->echo_ack != ack) {
		count(DHC_ECHO_ABSENT);
		return;
	}
	st->echo_valid = 0;
	byte = st->echo_byte;
	code = byte & 3;
	pos = (byte >> 2) & 3;
	rtt_us = tp->srtt_us >> 3; /* SRTT, else t_p (`ChainWindow::rtt`) */
	if (!rtt_us)
		rtt_us = DP(p)->law.t_p_us;
	if (code == 0) {
		HOST_ON_ACK(&ca->st, p, byte, acked, rtt_us, tp->tcp_mstamp);
		count(DHC_BLEACHED);
		set_cwnd(tp, ca);
		return;
	}
	if (pos)
		count(DHC_ECHO_LSP);
	exc = ds->exceptions;
	fb = ds->fallbacks;
	res = ds->resumes;
	ref = ds->refinements;
	kind = HOST_ON_ACK(&ca->st, p, byte, acked, rtt_us, tp->tcp_mstamp);
	count(kind == DPCP_ACT_GROW ? DHC_GROW :
	      kind == DPCP_ACT_AI   ? DHC_AI :
	      kind == DPCP_ACT_SET  ? DHC_MD :
				      DHC_HELD);
	count_n(DHC_EXCEPTIONS, ds->exceptions - exc);
	count_n(DHC_FALLBACKS, ds->fallbacks - fb);
	count_n(DHC_RESUMES, ds->resumes - res);
	count_n(DHC_REFINEMENTS, ds->refinements - ref);
	set_cwnd(tp, ca);
}

SEC("struct_ops/racc_dpcp_ssthresh")
__u32 BPF_PROG(racc_dpcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
#ifdef RACC_DCPEW
	/* DCP-EW §III.D: the loss is told apart by the bit map; recovery exits to the window
	 * dcpew_on_loss leaves (kept, or cut by the level's factor). */
	struct dpcp_ca *ca = ca_of(sk);
	host_params *p = law_params();
	__u64 rtt_us = tp->srtt_us >> 3, w;
	__u32 what;

	count(DHC_LOSS);
	if (!p)
		return tp->snd_cwnd >> 1 > 2 ? tp->snd_cwnd >> 1 : 2;
	if (!rtt_us)
		rtt_us = DP(p)->law.t_p_us;
	if (tp->snd_cwnd != ca->last_set)
		ca->st.st.cwnd = (__u64)tp->snd_cwnd << FX_CWND_SHIFT;
	what = dcpew_on_loss(&ca->st, p, tp->tcp_mstamp, rtt_us);
	count(what == DCPEW_LOSS_ERROR ? DHC_ERROR_LOSSES : DHC_CONGESTION_LOSSES);
	if (what == DCPEW_LOSS_MD)
		count(DHC_LOSS_MDS);
	w = ca->st.st.cwnd >> FX_CWND_SHIFT;
	return w > 2 ? (__u32)w : 2;
#else
	count(DHC_LOSS);
	return tp->snd_cwnd >> 1 > 2 ? tp->snd_cwnd >> 1 : 2;
#endif
}

SEC("struct_ops/racc_dpcp_undo_cwnd")
__u32 BPF_PROG(racc_dpcp_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops RACC_CC = {
	.init = (void *)racc_dpcp_init,
	.cong_avoid = (void *)racc_dpcp_cong_avoid,
	.ssthresh = (void *)racc_dpcp_ssthresh,
	.undo_cwnd = (void *)racc_dpcp_undo_cwnd,
	.name = RACC_STR(RACC_CC),
};

/* ---- the sender's egress: ECN 01 on this controller's data ----------------------------- */

static __always_inline int runs_ours(struct __sk_buff *skb)
{
	static const char want[] = RACC_STR(RACC_CC);
	struct bpf_sock *bsk = skb->sk;
	struct tcp_sock *tp;
	const struct tcp_congestion_ops *ops;
	char n[sizeof(want)];
	int i;

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
#pragma unroll
	for (i = 0; i < sizeof(want); i++)
		if (n[i] != want[i])
			return 0;
	return 1;
}

SEC("tc")
int dpcp_host_egress(struct __sk_buff *skb)
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
	if (payload <= ihl + th->doff * 4)
		return TC_ACT_OK;
	if (!runs_ours(skb))
		return TC_ACT_OK;
	tos = iph->tos;
	new_tos = tos | 1;
	old_word = bpf_htons(((__u16)(*(__u8 *)iph) << 8) | tos);
	new_word = bpf_htons(((__u16)(*(__u8 *)iph) << 8) | new_tos);
	if (bpf_skb_store_bytes(skb, ETH_HLEN + offsetof(struct iphdr, tos), &new_tos, 1, 0) == 0 &&
	    bpf_l3_csum_replace(skb, ETH_HLEN + offsetof(struct iphdr, check), old_word, new_word, 2) == 0)
		count(DHC_SENT_ECT1);
	return TC_ACT_OK;
}

/* ---- the receiver's ingress: each data segment into the chain reassembly --------------- */

SEC("cgroup_skb/ingress")
int dpcp_host_ingress(struct __sk_buff *skb)
{
	host_params *p = law_params();
	struct iphdr iph;
	__u8 th[16];
	__u32 ihl, code, payload, seq, seg, segs, len, i, n;
	struct bpf_sock *sk;
	struct dpcp_sk *st;

	if (!p || bpf_skb_load_bytes(skb, 0, &iph, sizeof(iph)) || iph.version != 4 || iph.protocol != IPPROTO_TCP_)
		return 1;
	code = iph.tos & 3;
	ihl = iph.ihl * 4;
	if (bpf_skb_load_bytes(skb, ihl, th, sizeof(th)))
		return 1;
	payload = bpf_ntohs(iph.tot_len);
	if (payload <= ihl + (th[12] >> 4) * 4)
		return 1; /* no payload: not data */
	payload -= ihl + (th[12] >> 4) * 4;
	sk = skb->sk;
	if (!sk)
		return 1;
	sk = bpf_sk_fullsock(sk);
	if (!sk)
		return 1;
	st = bpf_sk_storage_get(&sk_store, sk, 0, code ? BPF_SK_STORAGE_GET_F_CREATE : 0);
	if (!st)
		return 1;
	n = DP(p)->n;
	seq = ((__u32)th[4] << 24) | ((__u32)th[5] << 16) | ((__u32)th[6] << 8) | th[7];
	/* A GRO'd skb: its segments, each at its own position (GRO merges equal TOS only). */
	segs = skb->gso_segs > 1 ? skb->gso_segs : 1;
	seg = segs > 1 && skb->gso_size ? skb->gso_size : payload;
	bpf_spin_lock(&st->lock);
	if (!st->echoing && code) {
		dpcp_echo_init(&st->echo, n);
		st->echoing = 1;
	}
	if (st->echoing) {
		for (i = 0; i < MAX_GRO_SEGS; i++) {
			if (i >= segs || payload == 0)
				break;
			len = payload < seg ? payload : seg;
#ifdef RACC_DCPEW
			/* DCP-EW §III.B: the IP ID's LSB (GRO'd segments: consecutive IDs). */
			dpcp_echo_on_data(&st->echo, code, (bpf_ntohs(iph.id) + i) & 1);
#else
			dpcp_echo_on_data(&st->echo, code, dpcp_position(seq, len, n));
#endif
			seq += len;
			payload -= len;
		}
	}
	bpf_spin_unlock(&st->lock);
	if (code)
		count_n(DHC_DATA_CODED, segs);
	return 1;
}

/* ---- sockops: write the echo (receiver), parse it (sender) ---------------------------- */

static __always_inline void parse_echo(struct bpf_sock_ops *skops, __u32 n)
{
	struct echo_opt opt = { .kind = ECHO_OPT_KIND, .len = 4, .exid = bpf_htons(ECHO_OPT_EXID) };
	struct tcphdr *th = skops->skb_data;
	struct bpf_sock *sk = skops->sk;
	struct dpcp_sk *st;
	long len;

	if (!sk || (void *)(th + 1) > skops->skb_data_end)
		return;
	len = bpf_load_hdr_opt(skops, &opt, sizeof(opt), 0);
	if (len == -ENOMSG_)
		return;
	st = bpf_sk_storage_get(&sk_store, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st)
		return;
	if (len != ECHO_OPT_LEN || (opt.code >> 4) || ((opt.code >> 2) & 3) >= n) {
		/* Our kind and ExID, but a wrong length, spare bits set or a position past the chain. */
		st->echo_valid = 0;
		count(DHC_ECHO_MALFORMED);
		return;
	}
	st->echo_ack = bpf_ntohl(th->ack_seq);
	st->echo_byte = opt.code;
	st->echo_valid = 1;
}

SEC("sockops")
int dpcp_sockops(struct bpf_sock_ops *skops)
{
	host_params *p = law_params();
	struct bpf_sock *sk = skops->sk;
	struct dpcp_sk *st;
	struct echo_opt opt;

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
		opt.kind = ECHO_OPT_KIND;
		opt.len = ECHO_OPT_LEN;
		opt.exid = bpf_htons(ECHO_OPT_EXID);
		bpf_spin_lock(&st->lock);
		opt.code = dpcp_echo_take(&st->echo); /* `DpcpEcho::take` */
		bpf_spin_unlock(&st->lock);
		if (bpf_store_hdr_opt(skops, &opt, ECHO_OPT_LEN, 0) == 0)
			count(DHC_ECHO_WRITTEN);
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		if (p)
			parse_echo(skops, DP(p)->n);
		break;
	}
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
