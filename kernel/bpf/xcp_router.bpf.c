// SPDX-License-Identifier: GPL-2.0
/* The XCP router module on a real egress (Katabi et al. 2002 §3.5, App. A; racc-proto
 * `xcp/router.rs`, window form), in the congestion-header frame (xcc_router.h): each data
 * packet's XCP option is counted into the interval's sums and its H_feedback lowered in place to
 * this router's share. The control interval and the persistent-queue window roll over on packet
 * arrival. Departure is arrival here: a packet gets its feedback from the budget in force when
 * it is queued (racc-proto writes it at dequeue). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xcc_opt.h"
#include "xcp_law.h"

struct xcp_router_state {
	struct xcp_router_law law;
	__u64 last_tick_ns;
	__u64 next_ctrl_ns;
	__u64 next_q_ns;
	__u64 q_persistent; /* bytes: the least queue arrivals saw in the last window */
	__u64 q_running_min;
};

#define XCC_ROUTER_PARAMS struct xcp_router_params
#define XCC_LAW_STATE struct xcp_router_state
#define XCC_OPT struct xcp_opt
#define XCC_OPT_EXID_ XCP_OPT_EXID
#define XCC_OPT_LEN_ XCP_OPT_LEN
#define XCC_RW_OFF XCP_OPT_FB_OFF
#define XCC_RW_WORDS 1
#define XCC_ROUTER_PROG xcp_router_egress
#include "xcc_router.h"

/* A sender's H_rtt is its SRTT (≤ 1 s here) and its window at least the packet. */
static __always_inline int xcc_law_check(const struct xcp_opt *opt, __u64 s)
{
	__u64 rtt = bpf_ntohl(opt->rtt_us);

	return !(rtt > XCP_D_MAX_US || (rtt && bpf_ntohl(opt->cwnd) < s));
}

static __always_inline __u64 xcc_law_rtt(const struct xcp_opt *opt)
{
	return bpf_ntohl(opt->rtt_us);
}

static __always_inline void xcc_law_start(struct xcp_router_state *r, const struct xcp_router_params *p, __u64 now)
{
	r->last_tick_ns = now;
	r->next_ctrl_ns = now + p->initial_d_us * 1000;
	r->next_q_ns = r->next_ctrl_ns;
	r->q_running_min = ~0ULL;
	r->law.d_us = p->initial_d_us;
}

/* `XcpRouter::on_tick`: the queue window first, then the control, then the next window. */
static __always_inline int xcc_law_tick(struct xcp_router_state *r, const struct xcp_router_params *p, __u64 now,
					__u64 q)
{
	__u64 wait;
	int closed = 0;

	if (now >= r->next_q_ns)
		r->q_persistent = r->q_running_min < q ? r->q_running_min : q;
	if (now >= r->next_ctrl_ns) {
		xcp_control(&r->law, p, now - r->last_tick_ns, r->q_persistent);
		r->last_tick_ns = now;
		r->next_ctrl_ns = now + r->law.d_us * 1000;
		closed = 1;
	}
	if (now >= r->next_q_ns) {
		/* d − queue/C, at least 1 ms (App. A). */
		wait = p->capacity_Bps ? q * 1000000ULL / p->capacity_Bps : 0;
		wait = r->law.d_us > wait + XCP_D_MIN_US ? r->law.d_us - wait : XCP_D_MIN_US;
		r->next_q_ns = now + wait * 1000;
		r->q_running_min = ~0ULL;
	}
	if (q < r->q_running_min)
		r->q_running_min = q;
	return closed;
}

static __always_inline int xcc_law_packet(struct xcp_router_state *r, const struct xcp_router_params *p, __u64 s,
					  int valid, struct xcp_opt *opt)
{
	__u64 rtt = valid ? bpf_ntohl(opt->rtt_us) : 0, cwnd = bpf_ntohl(opt->cwnd);
	__s64 header = (__s32)bpf_ntohl(opt->feedback), out;

	if (valid && rtt) {
		xcp_arrival(&r->law, rtt, s, cwnd);
		out = xcp_departure(&r->law, rtt, s, cwnd, header, p->budget_rule);
		if (out < -(__s64)XCC_FB_INF)
			out = -(__s64)XCC_FB_INF; /* the field's range */
	} else {
		xcp_arrival_other(&r->law, s);
		if (!valid || header <= 0)
			return 0;
		out = 0; /* no RTT estimate: no share, never more than 0 (`on_departure`) */
	}
	if (out >= header)
		return 0;
	opt->feedback = bpf_htonl((__u32)(__s32)out);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
