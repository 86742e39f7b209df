// SPDX-License-Identifier: GPL-2.0
/* TCP/XCP's end hosts on the kernel's own TCP (docs/KERNEL-BPF.md; racc-proto `xcp/window.rs`,
 * `xcc/echo.rs`): one object, so that its programs share the socket storage.
 *
 * - `racc_xcp` (struct_ops tcp_congestion_ops): the window law of §3.2, cwnd = max(cwnd +
 *   reverse_feedback, s), kept in wire bytes (Q8) in socket storage and given to the kernel as
 *   whole packets; a loss halves (NewReno's `Response::Halve`), an RTO is the kernel's one packet.
 * - sockops, sender: every data segment of a `racc_xcp` socket carries the XCP option (H_rtt =
 *   SRTT µs, H_cwnd = the window in wire bytes, H_feedback = +inf: as much as the routers allow);
 *   every echo that comes back is applied to the window at once (duplicate ACKs included: each
 *   reports packets, `XcpWindow::on_ack`).
 * - sockops, receiver: the feedback of arriving data is summed (`HeaderEcho::on_forward`) and the
 *   sum goes back in the echo option of the next ACK, then restarts (`fill_ack`). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "xcc_opt.h"
#include "xcp_law.h"

struct xcp_sk {
	__u64 cwnd_q8; /* sender: the window, Q8 wire bytes (the law's state) */
	__u64 s; /* sender: wire bytes of a full segment (the MTU's worth) */
	__u32 sender; /* the socket runs racc_xcp */
	__u32 last_set; /* the snd_cwnd the controller last wrote */
	__s64 echo_sum; /* receiver: Q8 feedback of the data since the last ACK */
	__u32 echo_inf; /* receiver: a packet since the last ACK met no XCP router */
	__u32 echoing; /* receiver: XCP data arrived once: every ACK carries the echo */
};

/* The controller takes no parameters yet (desired_rate is refused); one word keeps the loader's
 * configuration step alike for every object. */
struct xcp_host_params {
	__u64 reserved;
};

#define XCC_SK struct xcp_sk
#define XCC_PARAMS struct xcp_host_params
#define XCC_OPT struct xcp_opt
#define XCC_OPT_EXID_ XCP_OPT_EXID
#define XCC_OPT_LEN_ XCP_OPT_LEN
#define XCC_ECHO struct xcp_echo_opt
#define XCC_ECHO_EXID_ XCP_ECHO_EXID
#define XCC_ECHO_LEN_ XCP_ECHO_LEN
#include "xcc_sockops.h"

/* ---- the controller ---------------------------------------------------------------------- */

static __always_inline __u64 seg_wire(struct tcp_sock *tp)
{
	/* mss_cache is the MTU less the IP and TCP headers (no BPF option room): the full segment's
	 * IP bytes are the MTU, racc's packet size. */
	return (__u64)tp->mss_cache + tp->tcp_header_len + 20;
}

static __always_inline void set_cwnd(struct tcp_sock *tp, struct xcp_sk *st)
{
	__u64 w = st->s ? st->cwnd_q8 / (st->s << XCP_Q) : 1;

	if (w < 1)
		w = 1;
	if (w > tp->snd_cwnd_clamp) {
		w = tp->snd_cwnd_clamp;
		st->cwnd_q8 = (w * st->s) << XCP_Q;
	}
	tp->snd_cwnd = (__u32)w;
	st->last_set = (__u32)w;
}

SEC("struct_ops/racc_xcp_init")
void BPF_PROG(racc_xcp_init, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct xcp_sk *st = bpf_sk_storage_get(&sk_store, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);

	if (!st)
		return;
	st->sender = 1;
	st->s = seg_wire(tp);
	/* The route's initcwnd: racc's one packet, or the flow's initial_window (plan.initcwnd). */
	st->cwnd_q8 = ((__u64)tp->snd_cwnd * st->s) << XCP_Q;
	st->last_set = tp->snd_cwnd;
}

SEC("struct_ops/racc_xcp_cong_avoid")
void BPF_PROG(racc_xcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct xcp_sk *st = bpf_sk_storage_get(&sk_store, sk, 0, 0);

	count(XHC_ACKS);
	if (!st || !st->sender)
		return;
	st->s = seg_wire(tp);
	/* The kernel moved the window (recovery's exit, an undo, an RTO): resume from it; feedback
	 * that came during the recovery is lost with it, as racc's controller never sees it. */
	if (tp->snd_cwnd != st->last_set)
		st->cwnd_q8 = ((__u64)tp->snd_cwnd * st->s) << XCP_Q;
	set_cwnd(tp, st);
}

/* A loss: XCP keeps TCP's halving (docs/PROTOCOLS.md §5, NewReno's `Response::Halve`). */
SEC("struct_ops/racc_xcp_ssthresh")
__u32 BPF_PROG(racc_xcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	count(XHC_LOSS);
	return tp->snd_cwnd >> 1 > 2 ? tp->snd_cwnd >> 1 : 2;
}

SEC("struct_ops/racc_xcp_undo_cwnd")
__u32 BPF_PROG(racc_xcp_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops racc_xcp = {
	.init = (void *)racc_xcp_init,
	.cong_avoid = (void *)racc_xcp_cong_avoid,
	.ssthresh = (void *)racc_xcp_ssthresh,
	.undo_cwnd = (void *)racc_xcp_undo_cwnd,
	.name = "racc_xcp",
};

/* ---- the option's laws (xcc_sockops.h) ---------------------------------------------------- */

static __always_inline void xcc_fill_data(struct bpf_sock_ops *skops, struct xcp_sk *st, struct xcp_opt *data)
{
	__u64 cw = skops->snd_cwnd == st->last_set ? st->cwnd_q8 >> XCP_Q : (__u64)skops->snd_cwnd * st->s;

	data->rtt_us = bpf_htonl(skops->srtt_us >> 3);
	data->cwnd = bpf_htonl(cw > 0xffffffffULL ? 0xffffffffU : (__u32)cw);
	data->feedback = bpf_htonl(XCC_FB_INF); /* no desired rate: as much as allowed */
}

static __always_inline void xcc_on_data(struct xcp_sk *st, const struct xcp_opt *data)
{
	__s64 fb = (__s32)bpf_ntohl(data->feedback);

	if (fb >= XCC_FB_INF)
		st->echo_inf = 1; /* +inf stays +inf in the sum */
	else
		st->echo_sum += fb;
}

static __always_inline void xcc_fill_echo(struct xcp_sk *st, struct xcp_echo_opt *echo)
{
	__s64 sum = st->echo_sum;

	if (st->echo_inf || sum >= XCC_FB_INF)
		sum = XCC_FB_INF;
	else if (sum < -(__s64)XCC_FB_INF)
		sum = -(__s64)XCC_FB_INF;
	echo->feedback = bpf_htonl((__u32)(__s32)sum);
}

static __always_inline void xcc_echo_sent(struct xcp_sk *st)
{
	st->echo_sum = 0;
	st->echo_inf = 0;
}

static __always_inline void xcc_on_echo(struct xcp_sk *st, const struct xcp_echo_opt *echo)
{
	__s64 fb = (__s32)bpf_ntohl(echo->feedback);

	if (fb >= XCC_FB_INF) {
		count(XHC_UNROUTED);
		return;
	}
	st->cwnd_q8 = xcp_apply_feedback(st->cwnd_q8, fb, st->s);
	count(XHC_APPLIED);
}

char LICENSE[] SEC("license") = "GPL";
