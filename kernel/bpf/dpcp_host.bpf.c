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

#include "cc_window.h"

#ifndef RACC_CC
#define RACC_CC racc_dpcp
#endif

#define MAX_GRO_SEGS 64

struct dpcp_sk {
	struct bpf_spin_lock lock;
	struct dpcp_echo echo; /* receiver: the chains arriving */
	__u32 echoing; /* receiver: a coded data packet arrived once: every ACK carries the option */
	__u32 echo_ack; /* sender: the ACK number whose option gave echo_code */
	__u32 echo_code; /* code | position << 2 */
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

#define COUNTER_SLOTS DHC_MAX
#include "counters.h"

/* The sender's egress: ECN 01 on this controller's data. */
#define ECT1_SENT DHC_SENT_ECT1
#include "ect1_egress.h"

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
	ca->last_set = cc_set_cwnd(tp, &ST(&ca->st)->cwnd);
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
	byte = st->echo_code;
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
		return cc_halved(tp);
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
	return cc_halved(tp);
#endif
}

CC_STRUCT_OPS(RACC_CC, racc_dpcp, RACC_STR(RACC_CC));

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
	sk = skb_full_sock(skb);
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

/* ---- sockops: write the echo (receiver), parse it (sender); echo_sockops.h ----------- */

/* One (code, position) per ACK (`DpcpEcho::take`). */
static __always_inline __u8 echo_take(struct dpcp_sk *st)
{
	__u8 byte;

	bpf_spin_lock(&st->lock);
	byte = dpcp_echo_take(&st->echo);
	bpf_spin_unlock(&st->lock);
	return byte;
}

/* No room in this ACK: that digit is not echoed (the chain's reassembly has moved on). */
static __always_inline void echo_untake(struct dpcp_sk *st, __u8 byte)
{
}

/* No spare bits set, and a position within the chain. */
static __always_inline int echo_byte_ok(__u8 byte)
{
	host_params *p = law_params();

	return p && !(byte >> 4) && ((byte >> 2) & 3) < DP(p)->n;
}

#define ECHO_SK struct dpcp_sk
#define ECHO_WRITTEN DHC_ECHO_WRITTEN
#define ECHO_MALFORMED DHC_ECHO_MALFORMED
#include "echo_sockops.h"

char LICENSE[] SEC("license") = "GPL";
