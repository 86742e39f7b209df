// SPDX-License-Identifier: GPL-2.0
/* The PIQI-RCP router module on a real egress (docs/PROTOCOLS.md §8; racc-proto
 * `piqi_rcp/router.rs`), in the congestion-header frame (xcc_router.h): RCP's header and
 * per-packet half (every packet counts into the interval, each data segment's RCP option gets
 * min(rate, R) in place), PIQI's PI law every Δ (piqi_law.h). The flows are RCP's (`racc_rcp`,
 * rcp_host.bpf.c). racc-proto stamps at dequeue; here at arrival (xcc_router.h). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xcc_opt.h"
#include "piqi_law.h"

struct piqi_router_state {
	struct piqi_router_law law;
	__u64 last_tick_ns;
	__u64 next_tick_ns;
};

#define XCC_ROUTER_PARAMS struct piqi_router_params
#define XCC_LAW_STATE struct piqi_router_state
#define XCC_OPT struct rcp_opt
#define XCC_OPT_EXID_ RCP_OPT_EXID
#define XCC_OPT_LEN_ RCP_OPT_LEN
#define XCC_RW_OFF RCP_OPT_RATE_OFF
#define XCC_RW_WORDS 1
#define XCC_ROUTER_PROG piqi_router_egress
#define XCC_CAPACITY(p) ((p)->rcp.capacity_Bps)
#include "xcc_router.h"

static __always_inline int xcc_law_check(const struct rcp_opt *opt, __u64 s)
{
	return 1; /* any rate and RTT a sender may write */
}

static __always_inline __u64 xcc_law_rtt(const struct rcp_opt *opt)
{
	return bpf_ntohl(opt->rtt_us);
}

static __always_inline void xcc_law_start(struct piqi_router_state *r, const struct piqi_router_params *p, __u64 now)
{
	piqi_init(&r->law, p);
	r->last_tick_ns = now;
	r->next_tick_ns = now + (p->rcp.t_slot_ns ? p->rcp.t_slot_ns : 1);
}

static __always_inline int xcc_law_tick(struct piqi_router_state *r, const struct piqi_router_params *p, __u64 now,
					__u64 q)
{
	if (now < r->next_tick_ns)
		return 0;
	piqi_control(&r->law, p, now - r->last_tick_ns); /* queue-independent: q unused */
	r->last_tick_ns = now;
	r->next_tick_ns = now + (p->rcp.t_slot_ns ? p->rcp.t_slot_ns : 1);
	return 1;
}

static __always_inline int xcc_law_packet(struct piqi_router_state *r, const struct piqi_router_params *p, __u64 s,
					  int valid, struct rcp_opt *opt)
{
	__u32 header = bpf_ntohl(opt->rate), out;

	rcp_arrival(&r->law.rcp, s, valid ? bpf_ntohl(opt->rtt_us) : 0);
	if (!valid)
		return 0;
	out = rcp_stamp(&r->law.rcp, header);
	if (out >= header)
		return 0;
	opt->rate = bpf_htonl(out);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
