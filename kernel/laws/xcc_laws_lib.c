// SPDX-License-Identifier: GPL-2.0
/* The congestion-header family's law headers built as a user-space library, so that the
 * differential tests (tests/python/test_kernel_xcc_laws.py) run the very arithmetic the BPF
 * objects run. */
#include <linux/types.h>
#include "xcc_opt.h"
#include "xcp_law.h"

/* An XCP data packet at the router: its arrival, then its departure's feedback (Q8). */
__s64 racc_xcp_packet(struct xcp_router_law *l, const struct xcp_router_params *p, __u64 rtt_us, __u64 s,
		      __u64 cwnd, __s64 header)
{
	xcp_arrival(l, rtt_us, s, cwnd);
	return xcp_departure(l, rtt_us, s, cwnd, header, p->budget_rule);
}

void racc_xcp_other(struct xcp_router_law *l, __u64 s)
{
	xcp_arrival_other(l, s);
}

void racc_xcp_control(struct xcp_router_law *l, const struct xcp_router_params *p, __u64 elapsed_ns, __u64 q_bytes)
{
	xcp_control(l, p, elapsed_ns, q_bytes);
}

__u64 racc_xcp_apply_feedback(__u64 cwnd_q8, __s64 fb, __u64 s)
{
	return xcp_apply_feedback(cwnd_q8, fb, s);
}

#include "rcp_law.h"

void racc_rcp_init(struct rcp_router_law *l, const struct rcp_router_params *p)
{
	rcp_init(l, p);
}

/* A forward packet at the RCP router: counted, then stamped from "no limit". */
__u32 racc_rcp_packet(struct rcp_router_law *l, __u64 s, __u64 rtt_us)
{
	rcp_arrival(l, s, rtt_us);
	return rcp_stamp(l, RCP_NO_LIMIT);
}

void racc_rcp_control(struct rcp_router_law *l, const struct rcp_router_params *p, __u64 t_ns, __u64 q_bytes)
{
	rcp_control(l, p, t_ns, q_bytes);
}

#include "piqi_law.h"

void racc_piqi_init(struct piqi_router_law *l, const struct piqi_router_params *p)
{
	piqi_init(l, p);
}

/* A forward packet at the PIQI-RCP router: counted as RCP's, then stamped from "no limit". */
__u32 racc_piqi_packet(struct piqi_router_law *l, __u64 s, __u64 rtt_us)
{
	rcp_arrival(&l->rcp, s, rtt_us);
	return rcp_stamp(&l->rcp, RCP_NO_LIMIT);
}

/* RCP's signature; PIQI-RCP's law takes no queue. */
void racc_piqi_control(struct piqi_router_law *l, const struct piqi_router_params *p, __u64 t_ns, __u64 q_bytes)
{
	piqi_control(l, p, t_ns);
}

#include "jetmax_law.h"

void racc_jetmax_init(struct jetmax_router_law *l)
{
	jetmax_init(l);
}

/* A forward JetMax data packet (feedback +inf) at the router: counted, then stamped; returns
 * feedback | fb_id << 32. */
__u64 racc_jetmax_packet(struct jetmax_router_law *l, const struct jetmax_router_params *p, __u64 s, __u64 ipt,
			 __u64 cur_id)
{
	__u32 feedback = JETMAX_NO_LIMIT;
	__u16 fb_id = 0;

	jetmax_arrival(l, p, s, cur_id == p->id || cur_id == 0, ipt);
	jetmax_stamp(l, p, &feedback, &fb_id);
	return feedback | (__u64)fb_id << 32;
}

/* The end of an interval: close, the ring walk, F (as the BPF router does in three steps). */
void racc_jetmax_control(struct jetmax_router_law *l, const struct jetmax_router_params *p, __u64 t_ns)
{
	__u64 j;

	jetmax_close(l, p, t_ns);
	for (j = 1; j <= JETMAX_RING; j++)
		if (jetmax_walk_step(l, p, j))
			break;
	jetmax_fair(l, p);
}

__u64 racc_jetmax_rate_step(__u64 x, __u64 f, __u64 tau_q24)
{
	return jetmax_rate_step(x, f, tau_q24);
}
