/* PIQI-RCP's router rule in fixed point (Jain and Loguinov, IWQoS 2007, reconstructed in
 * docs/PROTOCOLS.md §8), the kernel twin of racc-proto's `piqi_rcp/pi_law.rs` (`pi_step`) and
 * `PiqiRouter::interval`, with the same constants (`PiqiRouterParams::default`). The per-packet
 * half and d0 are RCP's (rcp_law.h: `RateCore`):
 *
 *   every Δ (10 ms), T the interval just ended:
 *     y = in_bytes/T, g = min(1, T/d0)
 *     N̂ = max(1, y/R̄)                    (R̄: R averaged over d0; R with smoothed_count off)
 *     e = (γC − y)/N̂                      (γ 0.95; no queue term)
 *     R = clamp(R + K_i·g·e + K_p·(e − e_prev), R_min, γC) ; e_prev = e    (K_i 0.5, K_p 0)
 *     R̄ += g·(R − R̄) ; d0 as RCP
 *
 * Newcomers (`count_newcomers`: the feed-forward room, admission on traffic, the due cut) are not
 * here: the kernel's first request is its first data segment, which carries an RTT, so no
 * router could tell it; the loader refuses `count_newcomers = true`, and with it off racc-proto's
 * J stays 0 and the other two never act.
 *
 * Units: rates Q8 B/s, N̂ Q24, e Q8 B/s signed, the gains Q24, times ns. No floating point. */
#ifndef RACC_PIQI_LAW_H
#define RACC_PIQI_LAW_H

#include "rcp_law.h"

/* Every field a __u64 (the loader passes a list of integers). RCP's table first: t_slot_ns is
 * Δ, alpha and beta are unused (0). */
struct piqi_router_params {
	struct rcp_router_params rcp;
	__u64 gamma_q24; /* §8: 0.95 */
	__u64 k_i_q24; /* per d0 (per interval K_i·T/d0): 0.5 */
	__u64 k_p_q24; /* on the change of the error: 0 */
	__u64 smoothed; /* N̂ from R̄ (1) or from R (0) */
};

struct piqi_router_law {
	struct rcp_router_law rcp; /* R, d0 and the interval's counters */
	__u64 r_bar_q8;
	__u64 n_hat_q24; /* reported */
	__s64 e_prev_q8;
};

RACC_INLINE void piqi_init(struct piqi_router_law *l, const struct piqi_router_params *p)
{
	rcp_init(&l->rcp, &p->rcp);
	l->r_bar_q8 = l->rcp.rate_q8; /* R̄ starts at R0 */
	l->n_hat_q24 = 1ULL << RCP_F;
	l->e_prev_q8 = 0;
}

/* |a|·b/c with a's sign. */
RACC_INLINE __s64 piqi_smul(__s64 a, __u64 b, __u64 c)
{
	__s64 m = (__s64)rcp_muldiv(a < 0 ? (__u64)(-a) : (__u64)a, b, c);

	return a < 0 ? -m : m;
}

/* The end of an interval of `t_ns` (`PiqiRouter::interval`): R, R̄, then d0. */
RACC_INLINE void piqi_control(struct piqi_router_law *l, const struct piqi_router_params *p, __u64 t_ns)
{
	__u64 c = p->rcp.capacity_Bps, mean_ns = 0, d0 = l->rcp.d0_ns, y, g, gc, rmin, r_ref, n_hat, kig;
	__s64 e, next;

	y = rcp_close(&l->rcp, t_ns, &mean_ns);
	if (!c || !t_ns || !d0)
		return;
	g = rcp_muldiv(t_ns, 1ULL << RCP_F, d0);
	if (g > (1ULL << RCP_F))
		g = 1ULL << RCP_F;
	gc = (p->gamma_q24 * (c << RCP_Q)) >> RCP_F; /* γC, Q8 */
	rmin = rcp_r_min(&p->rcp, d0, gc);
	r_ref = p->smoothed ? l->r_bar_q8 : l->rcp.rate_q8;
	n_hat = r_ref ? rcp_muldiv(y << RCP_Q, 1ULL << RCP_F, r_ref) : 0;
	if (n_hat < (1ULL << RCP_F))
		n_hat = 1ULL << RCP_F;
	e = piqi_smul((__s64)gc - (__s64)(y << RCP_Q), 1ULL << RCP_F, n_hat);
	kig = (p->k_i_q24 * g) >> RCP_F;
	next = (__s64)l->rcp.rate_q8 + piqi_smul(e, kig, 1ULL << RCP_F) +
	       piqi_smul(e - l->e_prev_q8, p->k_p_q24, 1ULL << RCP_F);
	if (next < (__s64)rmin)
		next = (__s64)rmin;
	if (next > (__s64)gc)
		next = (__s64)gc;
	l->rcp.rate_q8 = (__u64)next;
	l->n_hat_q24 = n_hat;
	l->e_prev_q8 = e;
	l->r_bar_q8 = (__u64)((__s64)l->r_bar_q8 + piqi_smul(next - (__s64)l->r_bar_q8, g, 1ULL << RCP_F));
	rcp_update_d0(&l->rcp, &p->rcp, t_ns, mean_ns);
}

#endif
