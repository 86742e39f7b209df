/* XCP in fixed point (Katabi, Handley and Rohrs 2002, §3.5 and App. A; docs/PROTOCOLS.md §5), the
 * kernel twin of racc-proto's `xcp/control.rs` (`control`), `xcp/per_packet.rs` (`arrival_xcp`,
 * `carry_terms`, `departure`) and `xcp/window.rs` (`XcpWindow::apply_feedback`), window form,
 * with the same constants (`XcpRouterParams::default`, `D_MIN`, `D_MAX`):
 *
 *   per XCP data packet (H_rtt = rtt µs > 0, wire size s, H_cwnd):
 *     a = rtt·s/cwnd, b = a·rtt, u = rtt·s;  in_bytes += s, Σa += a, Σb += b          App. A
 *     pos = min(ξ_p·b, res_pos), neg = min(ξ_n·u, res_neg), fb = pos − neg;
 *     H_feedback = min(H_feedback, fb), billed as the "granted" or "ns235" rule      App. A
 *   every d:
 *     d = Σb/Σa (byte-weighted mean RTT, [1 ms, 1 s]), y = in_bytes/elapsed
 *     φ = α·d·(C − y) − β·Q      (α 0.4, β 0.226)                                     §3.5
 *     h = max(0, γ·y·d − |φ|)    (γ 0.1)                                              §3.5
 *     ξ_p = (h + max(φ, 0))/(d·Σa), ξ_n = (h + max(−φ, 0))/(d·bytes of XCP data)      §3.5
 *   sender, per ACK: cwnd = max(cwnd + reverse_feedback, s)                           §3.2
 *
 * Units: times µs (the header's), bytes are IP bytes (the wire size racc counts); φ, h, the
 * budgets and every feedback Q8 bytes (signed where a sign can occur); Σa Q8 µs, Σb µs²;
 * ξ_p, ξ_n as `struct fxq` per header unit (per µs² and per µs·B), so that a packet's share is
 * one product each. α, β, γ Q24. No floating point. */
#ifndef RACC_XCP_LAW_H
#define RACC_XCP_LAW_H

#include "xcc_fx.h"

#define XCP_Q 8
#define XCP_D_MIN_US 1000ULL /* ns-2 XCP_MIN_INTERVAL (`xcp::params::D_MIN`) */
#define XCP_D_MAX_US 1000000ULL /* ns-2 XCP_MAX_INTERVAL (`D_MAX`); also the largest H_rtt taken */
#define XCP_BUDGET_GRANTED 0
#define XCP_BUDGET_NS235 1

/* Every field a __u64 (the loader passes a list of integers). */
struct xcp_router_params {
	__u64 alpha_q24; /* efficiency gain on spare bandwidth (§3.5: 0.4) */
	__u64 beta_q24; /* gain on the persistent queue (§3.5: 0.226 = α²√2) */
	__u64 gamma_q24; /* shuffled fraction (§3.5: 0.1) */
	__u64 initial_d_us; /* d before the first RTT sample (ns-2: 50 ms) */
	__u64 capacity_Bps; /* C, IP bytes per second */
	__u64 budget_rule; /* XCP_BUDGET_* (`XcpBudget`) */
};

/* The interval's sums (`Sums`) and the decision in force (`Control`, `Budget`). */
struct xcp_router_law {
	__u64 in_bytes;
	__u64 other_bytes;
	__u64 sum_a_q8;
	__u64 sum_b;
	__u64 d_us;
	__s64 phi_q8; /* reported */
	__u64 y_Bps; /* reported */
	struct fxq k_p;
	struct fxq k_n;
	__s64 res_pos_q8;
	__s64 res_neg_q8;
};

/* `carry_terms`: (u, b) of a packet, b = ⌊a_q8·rtt/2^8⌋ µs² with a_q8 = ⌊rtt·s·2^8/cwnd⌋.
 * Needs rtt ≤ 1e6 and cwnd ≥ s (so a ≤ rtt, b < 2^40, u < 2^36). */
RACC_INLINE __u64 xcp_a_q8(__u64 rtt_us, __u64 s, __u64 cwnd)
{
	return cwnd ? ((rtt_us * s) << XCP_Q) / cwnd : 0;
}

/* App. A, arrival: the packet's bytes and terms into the interval's sums. */
RACC_INLINE void xcp_arrival(struct xcp_router_law *l, __u64 rtt_us, __u64 s, __u64 cwnd)
{
	__u64 a = xcp_a_q8(rtt_us, s, cwnd);

	l->in_bytes += s;
	l->sum_a_q8 += a;
	l->sum_b += (a * rtt_us) >> XCP_Q;
}

/* A packet outside the ξ sums (not XCP data, or no RTT): its bytes only. */
RACC_INLINE void xcp_arrival_other(struct xcp_router_law *l, __u64 s)
{
	l->in_bytes += s;
	l->other_bytes += s;
}

/* App. A, departure (`departure`): the feedback the packet leaves with, given H_feedback
 * `header` (Q8, XCC_FB_INF for +inf), and the budgets billed. */
RACC_INLINE __s64 xcp_departure(struct xcp_router_law *l, __u64 rtt_us, __u64 s, __u64 cwnd, __s64 header,
				__u64 rule)
{
	__u64 a = xcp_a_q8(rtt_us, s, cwnd);
	__s64 pos = (__s64)fxq_mul(l->k_p, (a * rtt_us) >> XCP_Q);
	__s64 neg = (__s64)fxq_mul(l->k_n, rtt_us * s);
	__s64 fb, out, neg2;

	if (pos > l->res_pos_q8)
		pos = l->res_pos_q8;
	if (neg > l->res_neg_q8)
		neg = l->res_neg_q8;
	fb = pos - neg;
	if (header >= fb) {
		l->res_pos_q8 -= pos;
		l->res_neg_q8 -= neg;
		out = fb;
	} else {
		if (rule == XCP_BUDGET_NS235) {
			neg2 = neg + (fb - header);
			if (neg2 > l->res_neg_q8)
				neg2 = l->res_neg_q8;
			l->res_pos_q8 -= header + neg2;
			l->res_neg_q8 -= neg2;
		} else if (header >= 0) {
			l->res_pos_q8 -= header;
		} else {
			l->res_neg_q8 += header;
		}
		out = header;
	}
	if (l->res_pos_q8 <= 0) {
		l->res_pos_q8 = 0;
		l->k_p.m = 0;
	}
	if (l->res_neg_q8 <= 0) {
		l->res_neg_q8 = 0;
		l->k_n.m = 0;
	}
	return out;
}

/* |a|·b/1e6 for a duration b in µs: a quantity per second over b, Q8 (a < 2^34, b ≤ 2^20). */
RACC_INLINE __u64 xcp_over_us_q8(__u64 a, __u64 b_us)
{
	return ((a * b_us) << XCP_Q) / 1000000ULL;
}

/* App. A, end of interval (`control`): `elapsed_ns` since the last one, persistent queue
 * `q_bytes`. The sums restart. */
RACC_INLINE void xcp_control(struct xcp_router_law *l, const struct xcp_router_params *p, __u64 elapsed_ns,
			     __u64 q_bytes)
{
	__u64 y = elapsed_ns ? l->in_bytes * 1000000000ULL / elapsed_ns : 0;
	__u64 d = l->d_us ? l->d_us : p->initial_d_us;
	__u64 spare, gyd, h, pos, neg, xcp_bytes, absphi;
	__s64 phi;

	if (l->sum_a_q8) {
		/* Σb/Σa: Σb·2^8 fits unless Σb ≥ 2^55, then Σa gives up its 8 bits instead. */
		d = (l->sum_b >> 55) ? l->sum_b / ((l->sum_a_q8 >> XCP_Q) ? (l->sum_a_q8 >> XCP_Q) : 1)
				     : (l->sum_b << XCP_Q) / l->sum_a_q8;
		d = d < XCP_D_MIN_US ? XCP_D_MIN_US : d > XCP_D_MAX_US ? XCP_D_MAX_US : d;
	}
	spare = p->capacity_Bps > y ? p->capacity_Bps - y : y - p->capacity_Bps;
	spare = (p->alpha_q24 * xcp_over_us_q8(spare, d)) >> 24; /* < 2^61 up to C = 10 Gb/s, d = 1 s */
	phi = p->capacity_Bps >= y ? (__s64)spare : -(__s64)spare;
	q_bytes = q_bytes > 0xffffffffULL ? 0xffffffffULL : q_bytes;
	phi -= (__s64)((p->beta_q24 * (q_bytes << XCP_Q)) >> 24); /* φ = α·d·(C − y) − β·Q */
	absphi = phi < 0 ? (__u64)(-phi) : (__u64)phi;
	gyd = (p->gamma_q24 * xcp_over_us_q8(y, d)) >> 24;
	h = gyd > absphi ? gyd - absphi : 0; /* h = max(0, γ·y·d − |φ|) */
	pos = h + (phi > 0 ? (__u64)phi : 0);
	neg = h + (phi < 0 ? (__u64)(-phi) : 0);
	xcp_bytes = l->in_bytes - l->other_bytes;
	/* Per packet pos·b/(d·Σa) and neg·u/(d·XCP bytes) (ξ_p, ξ_n in header units). */
	l->k_p = l->sum_a_q8 ? fxq_over(fxq_div(pos, d, XCP_Q), l->sum_a_q8) : (struct fxq){ 0, 0 };
	l->k_n = xcp_bytes ? fxq_over(fxq_div(neg, d, 0), xcp_bytes) : (struct fxq){ 0, 0 };
	l->res_pos_q8 = (__s64)pos;
	l->res_neg_q8 = (__s64)neg;
	l->d_us = d;
	l->phi_q8 = phi;
	l->y_Bps = y;
	l->in_bytes = 0;
	l->other_bytes = 0;
	l->sum_a_q8 = 0;
	l->sum_b = 0;
}

/* §3.2, the sender (`XcpWindow::apply_feedback`): cwnd (Q8 wire bytes) after an echo of `fb`
 * (Q8; XCC_FB_INF leaves it alone), at least one packet of `s` bytes. */
RACC_INLINE __u64 xcp_apply_feedback(__u64 cwnd_q8, __s64 fb, __u64 s)
{
	__s64 w;

	if (fb >= XCC_FB_INF)
		return cwnd_q8;
	w = (__s64)cwnd_q8 + fb;
	return w < (__s64)(s << XCP_Q) ? s << XCP_Q : (__u64)w;
}

#endif
