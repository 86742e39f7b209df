/* RCP in fixed point (Dukkipati et al.; docs/PROTOCOLS.md §6), the kernel twin of racc-proto's
 * `rcp/router.rs` (`RateCore::on_arrival`, `close_interval`, `update_d0`, `rcp_rate`, `r_min`),
 * with the same constants (`RcpRouterParams::default`):
 *
 *   per forward packet (wire size s, H_rtt = rtt µs): in_bytes += s; rtt > 0: Σ rtt·s += rtt·s,
 *     else no_rtt += s                                                          §6 (2 + 2 ops)
 *   stamped: H_rate = min(H_rate, R)
 *   every T = min(T_slot, d0) (T_slot 10 ms, d0 from 200 ms):
 *     y = in_bytes/T, mean = Σ rtt·s/(in_bytes − no_rtt)
 *     R = clamp(R·(1 + (T/d0)·(α(C − y) − β·q/d0)/C), R_min, C)   (α 0.1, β 1)       §6
 *     d0 += g·(mean − d0), g = min(1, T/d0) ("symmetric"; "ns2": below d0, (R/C)·(mean/d0)·g)
 *   R_min = r_min_pkts (0.01) packets per d0; R starts at initial_rate (0.05)·C.
 *
 * Units: rates Q8 bytes per second, times ns, α β and the gains Q24, the factor (T/d0)·(…)/C
 * Q24 and signed. No floating point. */
#ifndef RACC_RCP_LAW_H
#define RACC_RCP_LAW_H

#include "xcc_fx.h"

#define RCP_Q 8
#define RCP_F 24
#define RCP_NO_LIMIT 0xffffffffU
#define RCP_GAIN_SYMMETRIC 0
#define RCP_GAIN_NS2 1

/* Every field a __u64 (the loader passes a list of integers). */
struct rcp_router_params {
	__u64 t_slot_ns; /* §6: 10 ms */
	__u64 d0_ns; /* d0 before the first RTT sample (§6: 200 ms) */
	__u64 alpha_q24; /* §6: 0.1 */
	__u64 beta_q24; /* §6: 1.0 */
	__u64 initial_rate_q24; /* R's start as a fraction of C (§6: 0.05) */
	__u64 r_min_pkts_q24; /* R_min in packets per d0 (§6: 0.01) */
	__u64 capacity_Bps; /* C, IP bytes per second */
	__u64 gain; /* RCP_GAIN_* (`D0Gain`) */
	__u64 pkt_bytes; /* the port's data packet size for R_min (racc: the port's; 1000 if unknown) */
};

struct rcp_router_law {
	__u64 rate_q8; /* R */
	__u64 d0_ns;
	__u64 in_bytes;
	__u64 rtt_w; /* Σ rtt·s, µs·B */
	__u64 no_rtt_bytes;
};

RACC_INLINE void rcp_init(struct rcp_router_law *l, const struct rcp_router_params *p)
{
	l->rate_q8 = (p->initial_rate_q24 * (p->capacity_Bps << RCP_Q)) >> RCP_F;
	l->d0_ns = p->d0_ns;
	l->in_bytes = 0;
	l->rtt_w = 0;
	l->no_rtt_bytes = 0;
}

/* `RateCore::on_arrival` (a forward packet; rtt 0: none). */
RACC_INLINE void rcp_arrival(struct rcp_router_law *l, __u64 s, __u64 rtt_us)
{
	l->in_bytes += s;
	if (rtt_us)
		l->rtt_w += rtt_us * s;
	else
		l->no_rtt_bytes += s;
}

/* `stamp_with`: the header's rate after this router (B/s; RCP_NO_LIMIT stays above any R). */
RACC_INLINE __u32 rcp_stamp(const struct rcp_router_law *l, __u32 header)
{
	__u64 r = l->rate_q8 >> RCP_Q;

	if (r < 1)
		r = 1;
	if (r > RCP_NO_LIMIT - 1)
		r = RCP_NO_LIMIT - 1;
	return header > r ? (__u32)r : header;
}

/* a·b/c; when a·b would not fit 64 bits, (a/c)·b + (a mod c)·b/c (callers keep (a mod c)·b, i.e.
 * c·b, below 2^64). */
RACC_INLINE __u64 rcp_muldiv(__u64 a, __u64 b, __u64 c)
{
	if (!c)
		return 0;
	if (fx_bits(a) + fx_bits(b) > 63) /* bit counts, not a·b: clang would reach for __multi3 */
		return a / c * b + (a % c) * b / c;
	return a * b / c;
}

/* `RateCore::close_interval`: the interval's arrival rate y (B/s) and byte-weighted mean RTT
 * (ns, 0 without a sample) over `t_ns`; the counters restart. */
RACC_INLINE __u64 rcp_close(struct rcp_router_law *l, __u64 t_ns, __u64 *mean_ns)
{
	__u64 y = t_ns ? l->in_bytes * 1000000000ULL / t_ns : 0, w = l->in_bytes - l->no_rtt_bytes;

	*mean_ns = w ? l->rtt_w / w * 1000 + (l->rtt_w % w) * 1000 / w : 0;
	l->in_bytes = 0;
	l->rtt_w = 0;
	l->no_rtt_bytes = 0;
	return y;
}

/* `r_min`: r_min_pkts packets of pkt_bytes per d0, Q8 B/s, at most `cap_q8`. */
RACC_INLINE __u64 rcp_r_min(const struct rcp_router_params *p, __u64 d0_ns, __u64 cap_q8)
{
	__u64 rmin = rcp_muldiv(p->r_min_pkts_q24 * p->pkt_bytes, 1000000000ULL, d0_ns) >> (RCP_F - RCP_Q);

	return rmin > cap_q8 ? cap_q8 : rmin;
}

/* `update_d0`: d0 follows the interval's byte-weighted mean RTT, with the gain g = min(1, T/d0)
 * ("symmetric"), or below d0 (R/C)·(mean/d0)·g ("ns2"). */
RACC_INLINE void rcp_update_d0(struct rcp_router_law *l, const struct rcp_router_params *p, __u64 t_ns,
			       __u64 mean_ns)
{
	__u64 d0 = l->d0_ns, g, gain, dq;

	if (!mean_ns || !d0)
		return;
	g = rcp_muldiv(t_ns, 1ULL << RCP_F, d0);
	if (g > (1ULL << RCP_F))
		g = 1ULL << RCP_F;
	gain = g;
	if (p->gain == RCP_GAIN_NS2 && mean_ns < d0) {
		gain = rcp_muldiv(l->rate_q8, 1ULL << RCP_F, p->capacity_Bps << RCP_Q); /* R/C */
		gain = (gain * rcp_muldiv(mean_ns, 1ULL << RCP_F, d0)) >> RCP_F;
		gain = (gain * g) >> RCP_F;
		if (gain > (1ULL << RCP_F))
			gain = 1ULL << RCP_F;
	}
	dq = mean_ns > d0 ? mean_ns - d0 : d0 - mean_ns;
	dq = rcp_muldiv(gain, dq, 1ULL << RCP_F);
	l->d0_ns = mean_ns > d0 ? d0 + dq : d0 - dq;
}

/* The end of an interval of `t_ns` (> 0) with the queue `q_bytes`: R, then d0
 * (`RcpRouter::on_tick`). The counters restart. */
RACC_INLINE void rcp_control(struct rcp_router_law *l, const struct rcp_router_params *p, __u64 t_ns, __u64 q_bytes)
{
	__u64 c = p->capacity_Bps, y, mean_ns = 0, d0 = l->d0_ns, rmin, cq, mag, x;
	__s64 sum, f, r, delta;

	y = rcp_close(l, t_ns, &mean_ns);
	if (!c || !t_ns || !d0)
		return;
	/* α(C − y) − β·q/d0 in Q24 B/s, then ·(T/d0)/C: the factor f, Q24. */
	q_bytes = q_bytes > 0xffffffffULL ? 0xffffffffULL : q_bytes;
	sum = c >= y ? (__s64)(p->alpha_q24 * (c - y)) : -(__s64)(p->alpha_q24 * (y - c));
	sum -= (__s64)rcp_muldiv(p->beta_q24 * q_bytes, 1000000000ULL, d0);
	mag = sum < 0 ? (__u64)(-sum) : (__u64)sum;
	x = rcp_muldiv(mag, t_ns, d0); /* Q24 B/s */
	x = x / c;
	if (x > (1ULL << (RCP_F + 2)))
		x = 1ULL << (RCP_F + 2); /* |f| ≤ 4: below −1 R falls to R_min anyway */
	f = sum < 0 ? -(__s64)x : (__s64)x;
	/* R·(1 + f), within [R_min, C]. */
	delta = (__s64)rcp_muldiv(l->rate_q8, x, 1ULL << RCP_F); /* R < 2^39, x ≤ 2^26 */
	r = (__s64)l->rate_q8 + (f < 0 ? -delta : delta);
	cq = c << RCP_Q;
	rmin = rcp_r_min(p, d0, cq);
	if (r < (__s64)rmin)
		r = (__s64)rmin;
	if (r > (__s64)cq)
		r = (__s64)cq;
	l->rate_q8 = (__u64)r;
	rcp_update_d0(l, p, t_ns, mean_ns);
}

#endif
