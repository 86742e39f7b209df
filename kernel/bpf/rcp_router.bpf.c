// SPDX-License-Identifier: GPL-2.0
/* The RCP router module on a real egress (Dukkipati et al.; docs/PROTOCOLS.md §6; racc-proto
 * `rcp/router.rs`), in the congestion-header frame (xcc_router.h): every packet counts into the
 * interval (bytes, and rtt·bytes of those whose RCP option carries an RTT), the interval T =
 * min(T_slot, d0) rolls over on packet arrival, and each data segment's RCP option gets
 * min(rate, R) in place. Stamping at arrival is racc's `stamp = "arrival"`, not the default
 * "departure" (xcc_router.h). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xcc_opt.h"
#include "rcp_law.h"

struct rcp_router_state {
	struct rcp_router_law law;
	__u64 last_tick_ns;
	__u64 next_tick_ns;
};

#define XCC_ROUTER_PARAMS struct rcp_router_params
#define XCC_LAW_STATE struct rcp_router_state
#define XCC_OPT struct rcp_opt
#define XCC_OPT_EXID_ RCP_OPT_EXID
#define XCC_OPT_LEN_ RCP_OPT_LEN
#define XCC_RW_OFF RCP_OPT_RATE_OFF
#define XCC_RW_WORDS 1
#define XCC_ROUTER_PROG rcp_router_egress
#include "xcc_router.h"

static __always_inline int xcc_law_check(const struct rcp_opt *opt, __u64 s)
{
	return 1; /* any rate and RTT a sender may write */
}

static __always_inline __u64 xcc_law_rtt(const struct rcp_opt *opt)
{
	return bpf_ntohl(opt->rtt_us);
}

static __always_inline __u64 rcp_interval_ns(const struct rcp_router_state *r, const struct rcp_router_params *p)
{
	__u64 t = p->t_slot_ns < r->law.d0_ns ? p->t_slot_ns : r->law.d0_ns;

	return t ? t : 1;
}

static __always_inline void xcc_law_start(struct rcp_router_state *r, const struct rcp_router_params *p, __u64 now)
{
	rcp_init(&r->law, p);
	r->last_tick_ns = now;
	r->next_tick_ns = now + rcp_interval_ns(r, p);
}

static __always_inline int xcc_law_tick(struct rcp_router_state *r, const struct rcp_router_params *p, __u64 now,
					__u64 q)
{
	if (now < r->next_tick_ns)
		return 0;
	rcp_control(&r->law, p, now - r->last_tick_ns, q);
	r->last_tick_ns = now;
	r->next_tick_ns = now + rcp_interval_ns(r, p);
	return 1;
}

static __always_inline int xcc_law_packet(struct rcp_router_state *r, const struct rcp_router_params *p, __u64 s,
					  int valid, struct rcp_opt *opt)
{
	__u32 header = bpf_ntohl(opt->rate), out;

	rcp_arrival(&r->law, s, valid ? bpf_ntohl(opt->rtt_us) : 0);
	if (!valid)
		return 0;
	out = rcp_stamp(&r->law, header);
	if (out >= header)
		return 0;
	opt->rate = bpf_htonl(out);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
