// SPDX-License-Identifier: GPL-2.0
/* TCP/RCP's end hosts on the kernel's own TCP (docs/KERNEL-BPF.md; racc-proto `rcp/sender.rs`,
 * `xcc/echo.rs`): one object, so that its programs share the socket storage.
 *
 * - `racc_rcp` (struct_ops tcp_congestion_ops with cong_control, so that it owns the window and
 *   the pacing rate on every ACK, recovery included): one packet until a rate is known, then the
 *   rate fed back paced by TCP's internal pacing (sk_pacing_status = SK_PACING_NEEDED: this
 *   kernel has no fq qdisc) and a window that does not bind (4 rate·RTT, at least 16 packets:
 *   racc's is infinite). Loss never changes the rate (`Response::Keep`).
 * - sockops, sender: every data segment carries the RCP option (rate = no limit, H_rtt = SRTT µs);
 *   every echo's rate applies at once (`RcpSender::on_wire_arrival`); "no limit" changes nothing.
 * - sockops, receiver: the rate of the latest data packet goes back in every ACK (`HeaderEcho`). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "xcc_opt.h"

struct rcp_sk {
	__u64 rate; /* sender: the rate fed back, B/s of IP bytes (0: none yet) */
	__u64 s; /* sender: IP bytes of a full segment */
	__u32 sender;
	__u32 echo_rate; /* receiver: the latest data packet's rate */
	__u32 echoing;
	__u32 pad;
};

struct rcp_host_params {
	__u64 reserved;
};

#define XCC_SK struct rcp_sk
#define XCC_PARAMS struct rcp_host_params
#define XCC_OPT struct rcp_opt
#define XCC_OPT_EXID_ RCP_OPT_EXID
#define XCC_OPT_LEN_ RCP_OPT_LEN
#define XCC_ECHO struct rcp_echo_opt
#define XCC_ECHO_EXID_ RCP_ECHO_EXID
#define XCC_ECHO_LEN_ RCP_ECHO_LEN
#include "xcc_sockops.h"
#include "xcc_pace.h"

/* ---- the controller ---------------------------------------------------------------------- */

SEC("struct_ops/racc_rcp_init")
void BPF_PROG(racc_rcp_init, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct rcp_sk *st = bpf_sk_storage_get(&sk_store, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);

	if (!st)
		return;
	st->sender = 1;
	st->s = (__u64)tp->mss_cache + tp->tcp_header_len + 20;
	tp->snd_cwnd = 1; /* one packet carries the first request; its answer sets the rate */
	sk->sk_pacing_status = SK_PACING_NEEDED; /* TCP's own pacing timer (no fq here) */
}

SEC("struct_ops/racc_rcp_cong_control")
void BPF_PROG(racc_rcp_cong_control, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct rcp_sk *st = bpf_sk_storage_get(&sk_store, sk, 0, 0);

	count(XHC_ACKS);
	if (!st || !st->sender)
		return;
	st->s = (__u64)tp->mss_cache + tp->tcp_header_len + 20;
	if (!st->rate) {
		tp->snd_cwnd = 1;
		return;
	}
	xcc_pace(sk, tp, st->rate, st->s, RCP_OPT_LEN, tp->srtt_us >> 3);
}

/* Loss never changes the rate (docs/PROTOCOLS.md §6): the window is the controller's anyway. */
SEC("struct_ops/racc_rcp_ssthresh")
__u32 BPF_PROG(racc_rcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	count(XHC_LOSS);
	return xcc_keep_window(tp);
}

SEC("struct_ops/racc_rcp_undo_cwnd")
__u32 BPF_PROG(racc_rcp_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	return tp->snd_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops racc_rcp = {
	.init = (void *)racc_rcp_init,
	.cong_control = (void *)racc_rcp_cong_control,
	.ssthresh = (void *)racc_rcp_ssthresh,
	.undo_cwnd = (void *)racc_rcp_undo_cwnd,
	.name = "racc_rcp",
};

/* ---- the option's laws (xcc_sockops.h) ---------------------------------------------------- */

static __always_inline void xcc_fill_data(struct bpf_sock_ops *skops, struct rcp_sk *st, struct rcp_opt *data)
{
	data->rate = bpf_htonl(RCP_NO_LIMIT_); /* as much as the path allows */
	data->rtt_us = bpf_htonl(skops->srtt_us >> 3);
}

static __always_inline void xcc_on_data(struct rcp_sk *st, const struct rcp_opt *data)
{
	st->echo_rate = bpf_ntohl(data->rate);
}

static __always_inline void xcc_fill_echo(struct rcp_sk *st, struct rcp_echo_opt *echo)
{
	echo->rate = bpf_htonl(st->echo_rate);
}

static __always_inline void xcc_echo_sent(struct rcp_sk *st)
{
}

/* `RcpSender::on_wire_arrival`: the echoed rate applies at once; "no limit" changes nothing. */
static __always_inline void xcc_on_echo(struct rcp_sk *st, const struct rcp_echo_opt *echo)
{
	__u32 rate = bpf_ntohl(echo->rate);

	if (rate == RCP_NO_LIMIT_ || rate == 0) {
		count(XHC_UNROUTED); /* no RCP router on the path: nothing changes */
		return;
	}
	if (st->rate != rate) {
		st->rate = rate;
		count(XHC_APPLIED); /* "rate_updates": echoes that changed the rate */
	}
}

char LICENSE[] SEC("license") = "GPL";
