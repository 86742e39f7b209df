// SPDX-License-Identifier: GPL-2.0
/* The RCP router module on a real egress (Dukkipati et al.; docs/PROTOCOLS.md §6; racc-proto
 * `rcp/router.rs`), in the congestion-header frame (xcc_router.h): every packet counts into the
 * interval (bytes, and rtt·bytes of those whose RCP option carries an RTT), the interval T =
 * min(T_slot, d0) closes on the first packet after its end but runs free on the simulator's
 * timer grid, with the queue read at the end's own instant (xcc_law_tick_vq), and each data
 * segment's RCP option gets min(rate, R) in place. Stamping at arrival is racc's `stamp = "arrival"`, not the default
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
	__u64 last_pkt_bytes; /* the tail's size, the queue's packet size for rcp_waiting */
};

#define XCC_ROUTER_PARAMS struct rcp_router_params
#define XCC_LAW_STATE struct rcp_router_state
#define XCC_OPT struct rcp_opt
#define XCC_OPT_EXID_ RCP_OPT_EXID
#define XCC_OPT_LEN_ RCP_OPT_LEN
#define XCC_RW_OFF RCP_OPT_RATE_OFF
#define XCC_RW_WORDS 1
#define XCC_ROUTER_PROG rcp_router_egress
#define XCC_TICK_VQ
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

/* The bytes waiting at an instant when `vq` bytes are not yet sent: without the packet being
 * serialised (the ns-2 convention racc-proto's `PortView::queue_bytes` keeps), i.e. whole packets
 * behind the head's rest, exact when the queued packets have the tail's size (bulk data). */
static __always_inline __u64 rcp_waiting(const struct rcp_router_state *r, __u64 vq)
{
	__u64 s = r->last_pkt_bytes ? r->last_pkt_bytes : 1;

	return vq ? (vq - 1) / s * s : 0;
}

/* The interval's end is a timer instant, next += T as racc-proto's `RcpRouter::on_tick` timer
 * fires, and §6's q is the bytes waiting at that instant (rcp_waiting). Anchoring the end to the first packet
 * after it and reading the queue just before that packet (the frame's default) locks the reading
 * to a phase of the flows' packet trains: on scenario A it read 200 B on average where the
 * simulator's timer reads 280 B, and RCP's equilibrium 1 - y/C = (β/α)·q/(C·d0) then held the
 * kernel at 0.951-0.973 utilisation against the simulator's 0.936 (docs/KERNEL.md, RCP). */
static __always_inline int xcc_law_tick_vq(struct rcp_router_state *r, const struct rcp_router_params *p, __u64 now,
					   __u64 vq_bytes, __u64 vq_stamp_ns)
{
	__u64 end = r->next_tick_ns, t, idle_end;

	if (now < end)
		return 0;
	rcp_control(&r->law, p, end - r->last_tick_ns,
		    rcp_waiting(r, vq_at(vq_bytes, XCC_CAPACITY(p), end > vq_stamp_ns ? end - vq_stamp_ns : 0)));
	r->last_tick_ns = end;
	t = rcp_interval_ns(r, p);
	r->next_tick_ns = end + t;
	if (now < r->next_tick_ns)
		return 1;
	/* No packet for whole intervals: they close as one (y = 0, no RTT sample so T stays), its
	 * factor (T/d0)·α linear in their number where the simulator's timer compounds it. */
	idle_end = end + (now - end) / t * t;
	rcp_control(&r->law, p, idle_end - end,
		    rcp_waiting(r, vq_at(vq_bytes, XCC_CAPACITY(p), idle_end > vq_stamp_ns ? idle_end - vq_stamp_ns : 0)));
	r->last_tick_ns = idle_end;
	r->next_tick_ns = idle_end + rcp_interval_ns(r, p);
	return 2;
}

static __always_inline int xcc_law_packet(struct rcp_router_state *r, const struct rcp_router_params *p, __u64 s,
					  int valid, struct rcp_opt *opt)
{
	__u32 header = bpf_ntohl(opt->rate), out;

	r->last_pkt_bytes = s;
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
