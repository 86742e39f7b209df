// SPDX-License-Identifier: GPL-2.0
/* TCP/JetMax's end hosts on the kernel's own TCP (docs/KERNEL-BPF.md; docs/PROTOCOLS.md §7;
 * racc-proto `jetmax/rate.rs`, `xcc/echo.rs`), the options' part shared with the family
 * (xcc_sockops.h):
 *
 * - `racc_jetmax` (struct_ops with cong_control, as `racc_rcp`): the rate x (B/s of IP bytes)
 *   paced by TCP's internal pacing and a window that does not bind (racc's is infinite); one
 *   packet per RTT until the first update; then once per RTT x += τ(F − x) with the latest
 *   feedback F and cur_id = its fb_id (F = +inf: x kept, cur_id = none). Loss keeps the rate
 *   (`Response::Keep`).
 * - sockops, sender: every data segment carries the JetMax option (H_rtt, ipt = the time it adds
 *   to the flow's announced presence, or s/x with `ipt = "gap"`, cur_id, fb_id 0, feedback +inf);
 *   each echo's (F, fb_id) is kept; the first update takes only an echo that arrives 2Δ + SRTT
 *   after the first data segment (racc: an ACK whose echoed timestamp is 2Δ after it).
 * - sockops, receiver: the feedback and fb_id of the latest data packet go back on every ACK. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "xcc_opt.h"
#include "jetmax_law.h"

struct jetmax_sk {
	__u64 x; /* sender: the rate, B/s of IP bytes (0: before the first update, 1 packet per RTT) */
	__u64 s; /* sender: IP bytes of a full segment */
	__u32 sender;
	__u32 echoing;
	__u64 rtt_ns; /* the RTT the start rate and the updates use */
	__u64 announced_ns; /* the flow's presence announced so far runs to here */
	__u64 first_data_ns;
	__u64 next_update_ns;
	__u32 cur_id;
	__u32 have_fb; /* an eligible echo arrived: updates run */
	__u32 fb; /* the latest echo's feedback and fb_id */
	__u32 fb_id;
	__u32 echo_fb; /* receiver: the latest data packet's feedback and fb_id */
	__u32 echo_fb_id;
};

/* racc-proto `JetMaxParams` (every field a __u64). */
struct jetmax_host_params {
	__u64 tau_q24; /* §7: 0.55 */
	__u64 delta_ns; /* the routers' Δ (§7: 10 ms) */
	__u64 initial_rtt_ns; /* before an RTT sample (§7: 100 ms) */
	__u64 ipt_gap; /* 1: ipt = s/x ("gap"); 0: the presence added ("presence") */
};

#define XCC_SK struct jetmax_sk
#define XCC_PARAMS struct jetmax_host_params
#define XCC_OPT struct jetmax_opt
#define XCC_OPT_EXID_ JETMAX_OPT_EXID
#define XCC_OPT_LEN_ JETMAX_OPT_LEN
#define XCC_ECHO struct jetmax_echo_opt
#define XCC_ECHO_EXID_ JETMAX_ECHO_EXID
#define XCC_ECHO_LEN_ JETMAX_ECHO_LEN
#include "xcc_sockops.h"
#include "xcc_pace.h"

static __always_inline struct jetmax_host_params *params(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&law_config, &zero);
}

/* `JetMaxRate::rate`: x, or one packet per RTT before the first update. */
static __always_inline __u64 rate_of(const struct jetmax_sk *st)
{
	if (st->x)
		return st->x;
	return st->s * 1000000000ULL / (st->rtt_ns ? st->rtt_ns : 1);
}

/* `JetMaxRate::update`. */
static __always_inline void update(struct jetmax_sk *st, const struct jetmax_host_params *p, __u64 now)
{
	if (st->fb == JETMAX_NO_LIMIT) {
		st->cur_id = 0; /* no router constrains the flow: x kept */
		count(XHC_UNROUTED);
	} else {
		st->x = jetmax_rate_step(rate_of(st), st->fb, p->tau_q24);
		if (!st->x)
			st->x = 1;
		st->cur_id = st->fb_id;
		count(XHC_APPLIED);
	}
	st->next_update_ns = now + st->rtt_ns;
}

/* ---- the controller ---------------------------------------------------------------------- */

static __always_inline void observe_rtt(struct tcp_sock *tp, struct jetmax_sk *st, const struct jetmax_host_params *p)
{
	__u64 srtt = (__u64)(tp->srtt_us >> 3) * 1000;

	st->rtt_ns = srtt ? srtt : (st->rtt_ns ? st->rtt_ns : p->initial_rtt_ns);
}

static __always_inline void pace(struct sock *sk, struct tcp_sock *tp, struct jetmax_sk *st)
{
	xcc_pace(sk, tp, rate_of(st), st->s, JETMAX_OPT_LEN, st->rtt_ns / 1000);
}

SEC("struct_ops/racc_jetmax_init")
void BPF_PROG(racc_jetmax_init, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct jetmax_sk *st = bpf_sk_storage_get(&sk_store, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	struct jetmax_host_params *p = params();

	if (!st || !p)
		return;
	st->sender = 1;
	st->s = (__u64)tp->mss_cache + tp->tcp_header_len + 20;
	observe_rtt(tp, st, p);
	pace(sk, tp, st);
}

SEC("struct_ops/racc_jetmax_cong_control")
void BPF_PROG(racc_jetmax_cong_control, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct jetmax_sk *st = bpf_sk_storage_get(&sk_store, sk, 0, 0);
	struct jetmax_host_params *p = params();
	__u64 now = bpf_ktime_get_ns();

	count(XHC_ACKS);
	if (!st || !st->sender || !p)
		return;
	st->s = (__u64)tp->mss_cache + tp->tcp_header_len + 20;
	observe_rtt(tp, st, p);
	/* Once per RTT with the latest feedback (racc: a timer; here the next ACK after it). */
	if (st->have_fb && now >= st->next_update_ns)
		update(st, p, now);
	pace(sk, tp, st);
}

/* Loss never changes the rate (`Response::Keep`): the window is the controller's anyway. */
SEC("struct_ops/racc_jetmax_ssthresh")
__u32 BPF_PROG(racc_jetmax_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	count(XHC_LOSS);
	return xcc_keep_window(tp);
}

SEC("struct_ops/racc_jetmax_undo_cwnd")
__u32 BPF_PROG(racc_jetmax_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	return tp->snd_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops racc_jetmax = {
	.init = (void *)racc_jetmax_init,
	.cong_control = (void *)racc_jetmax_cong_control,
	.ssthresh = (void *)racc_jetmax_ssthresh,
	.undo_cwnd = (void *)racc_jetmax_undo_cwnd,
	.name = "racc_jetmax",
};

/* ---- the option's laws (xcc_sockops.h) ---------------------------------------------------- */

static __always_inline void xcc_fill_data(struct bpf_sock_ops *skops, struct jetmax_sk *st, struct jetmax_opt *data)
{
	struct jetmax_host_params *p = params();
	__u64 now = bpf_ktime_get_ns(), gap, end, from, ipt;

	if (!st->first_data_ns)
		st->first_data_ns = now;
	gap = st->s * 1000000000ULL / (rate_of(st) ? rate_of(st) : 1);
	if (p && p->ipt_gap) {
		ipt = gap;
	} else {
		/* `Ipt::Presence`: what this packet adds to the announced presence. */
		end = now + gap;
		from = st->announced_ns > now ? st->announced_ns : now;
		ipt = end > from ? end - from : 0;
		if (end > st->announced_ns)
			st->announced_ns = end;
	}
	data->rtt_us = bpf_htonl(skops->srtt_us >> 3);
	data->ipt_ns = bpf_htonl(ipt > 0xffffffffULL ? 0xffffffffU : (__u32)ipt);
	data->cur_id = bpf_htons((__u16)st->cur_id);
	data->fb_id = 0;
	data->feedback = bpf_htonl(JETMAX_NO_LIMIT);
}

static __always_inline void xcc_on_data(struct jetmax_sk *st, const struct jetmax_opt *data)
{
	st->echo_fb = bpf_ntohl(data->feedback);
	st->echo_fb_id = bpf_ntohs(data->fb_id);
}

static __always_inline void xcc_fill_echo(struct jetmax_sk *st, struct jetmax_echo_opt *echo)
{
	echo->fb_id = bpf_htons((__u16)st->echo_fb_id);
	echo->zero = 0;
	echo->feedback = bpf_htonl(st->echo_fb);
}

static __always_inline void xcc_echo_sent(struct jetmax_sk *st)
{
}

/* `JetMaxRate::on_wire_arrival`: the latest feedback kept; the first update as soon as an
 * eligible echo arrives. */
static __always_inline void xcc_on_echo(struct jetmax_sk *st, const struct jetmax_echo_opt *echo)
{
	struct jetmax_host_params *p = params();
	__u64 now = bpf_ktime_get_ns();

	if (!p)
		return;
	if (!st->have_fb) {
		if (!st->first_data_ns || now < st->first_data_ns + 2 * p->delta_ns + st->rtt_ns)
			return;
		st->have_fb = 1;
		st->fb = bpf_ntohl(echo->feedback);
		st->fb_id = bpf_ntohs(echo->fb_id);
		update(st, p, now);
		return;
	}
	st->fb = bpf_ntohl(echo->feedback);
	st->fb_id = bpf_ntohs(echo->fb_id);
}

char LICENSE[] SEC("license") = "GPL";
