/* VCP's sender laws MI/AI/MD in fixed point (VCP-DCCP App. A3–A5; MPCP §2), the kernel twin of
 * racc-proto's `vcp/laws.rs` (`VcpLaws::on_code`) and `vcp/ai_law.rs` (`AiLaw`), with the same
 * constants (docs/VCP-CONSTANTS.md). The window is Q20 packets; times are microseconds.
 *
 * Per ACK reporting k packets, rtt the sender's smoothed RTT:
 *   mi_step = (1+μ)^min(rtt/t_p, σ_MI) − 1                       A3
 *   ai_step = α·min((rtt/t_p)², σ_AI)/cwnd                        A4, ai_law "seed001"
 *           = α·w·S(rtt/t_d)/cwnd                                 ai_law "ns2" (reference code)
 *   code 01: cwnd += k·mi_step        code 10: cwnd += k·ai_step
 *   code 11: now < hold_until: keep; now < ai_until: AI; else cwnd = max(1, β·cwnd)  A5,
 *            hold_until = now + md_hold, ai_until = hold_until + rtt
 *   code 00: cwnd += k/cwnd (the path bleached the code; TCP congestion avoidance)
 * Every constant arrives precomputed by the loader (`struct vcp_law_params`), so this header
 * has no floating point. */
#ifndef RACC_VCP_LAW_H
#define RACC_VCP_LAW_H

#include "fixed.h"

/* The 2-bit codes in the IP ECN field (VCP-DCCP App.; `packet::ecn`). */
#define VCP_CODE_NONE 0 /* 00: not VCP (or bleached) */
#define VCP_CODE_LOW 1 /* 01: ρ < 0.8, MI */
#define VCP_CODE_HIGH 2 /* 10: 0.8 ≤ ρ < 1, AI */
#define VCP_CODE_OVERLOAD 3 /* 11: ρ ≥ 1, MD */

#define VCP_AI_SEED001 0
#define VCP_AI_NS2 1

#define VCP_HOLD_TP 0 /* md_hold = "t_p" (default) */
#define VCP_HOLD_RTT 1 /* "rtt" */
#define VCP_HOLD_TWO_TP_RTT 2 /* "2t_p+rtt" */
#define VCP_HOLD_SECS 3 /* a number of seconds */

/* Every field a __u64, so that the loader can pass the struct as a list of integers. */
struct vcp_law_params {
	__u64 t_p_us; /* the routers' interval t_p (VCP-DCCP A1: 200 ms) */
	__u64 log2_1mu_q30; /* log2(1 + μ), μ = h(1/0.8 − 1) = 0.0625 (VCP-DCCP A3) */
	__u64 sigma_mi_q24; /* σ_MI, the MI exponent's cap (VCP-DCCP: 2.5) */
	__u64 alpha_q24; /* α (VCP-DCCP: 1 packet); under "ns2" α·w */
	__u64 beta_q24; /* β (VCP-DCCP A5: 0.875) */
	__u64 ai_law; /* VCP_AI_SEED001 or VCP_AI_NS2 */
	__u64 sqrt_sigma_ai_q24; /* √σ_AI (VCP-DCCP: σ_AI = 10): min(r², σ) = min(r, √σ)² */
	__u64 t_d_us; /* "ns2": t_d (reference code TYPICAL_RTT 100 ms) */
	__u64 left_q24; /* "ns2": rtt_low/t_d (RTT_LEFT 20 ms) */
	__u64 right_q24; /* "ns2": rtt_high/t_d (RTT_RIGHT 500 ms) */
	__u64 tick_us; /* "ns2": the sender's RTT clock (0 = exact srtt; ns-2's tcp_tick_) */
	__u64 md_hold; /* VCP_HOLD_* */
	__u64 md_hold_us; /* VCP_HOLD_SECS: the hold */
	__u64 iw; /* initial window, packets (racc: 2) */
};

/* One flow's law state (`VcpLaws`' episode and counter, plus the window). */
struct vcp_law_state {
	__u64 cwnd; /* Q20 packets */
	__u64 hold_until_us;
	__u64 ai_until_us;
	__u64 mds;
};

/* The RTT the laws scale by: under "ns2" truncated to whole ticks, at least one
 * (`Ns2Ai::clock`; reference code `VcpSrcAgent::rtt_update`). */
RACC_INLINE __u64 vcp_rtt_clock(const struct vcp_law_params *p, __u64 rtt_us)
{
	if (p->ai_law == VCP_AI_NS2 && p->tick_us)
		return fx_max(rtt_us / p->tick_us * p->tick_us, p->tick_us);
	return rtt_us;
}

/* A3 per acknowledged packet, Q20 packets. */
RACC_INLINE __u64 vcp_mi_step(const struct vcp_law_params *p, __u64 rtt_us)
{
	__u64 x = fx_min(fx_ratio(rtt_us, p->t_p_us), p->sigma_mi_q24);

	return fx_exp2m1_q30((x * p->log2_1mu_q30) >> FX_RATIO_SHIFT) >> (FX_EXP_SHIFT - FX_CWND_SHIFT);
}

/* The AI scale in Q24: min((rtt/t_p)², σ_AI) (A4) or S(rtt/t_d) (`Ns2Ai::scale`). */
RACC_INLINE __u64 vcp_ai_scale(const struct vcp_law_params *p, __u64 rtt_us)
{
	__u64 q;

	if (p->ai_law == VCP_AI_NS2) {
		q = fx_ratio(rtt_us, p->t_d_us);
		if (q <= p->left_q24)
			return (q * p->left_q24) >> FX_RATIO_SHIFT;
		if (q <= p->right_q24)
			return (q * q) >> FX_RATIO_SHIFT;
		return (q - p->right_q24) + ((p->right_q24 * p->right_q24) >> FX_RATIO_SHIFT);
	}
	q = fx_min(fx_ratio(rtt_us, p->t_p_us), p->sqrt_sigma_ai_q24);
	return (q * q) >> FX_RATIO_SHIFT;
}

/* A4 per acknowledged packet at window `cwnd` (Q20), Q20 packets. */
RACC_INLINE __u64 vcp_ai_step(const struct vcp_law_params *p, __u64 rtt_us, __u64 cwnd)
{
	__u64 a = (p->alpha_q24 * vcp_ai_scale(p, rtt_us)) >> FX_RATIO_SHIFT; /* Q24 packets² */

	return cwnd ? (a << (2 * FX_CWND_SHIFT - FX_RATIO_SHIFT)) / cwnd : 0;
}

RACC_INLINE __u64 vcp_md_hold_us(const struct vcp_law_params *p, __u64 rtt_us)
{
	switch (p->md_hold) {
	case VCP_HOLD_RTT:
		return rtt_us;
	case VCP_HOLD_TWO_TP_RTT:
		return 2 * p->t_p_us + rtt_us;
	case VCP_HOLD_SECS:
		return p->md_hold_us;
	default:
		return p->t_p_us;
	}
}

/* `VcpLaws::on_code`: the window after an ACK echoing `code` that reports `k` packets, at
 * `now_us` with RTT `rtt_us` (already through `vcp_rtt_clock`). At most one MD per ACK. */
RACC_INLINE void vcp_on_code(struct vcp_law_state *s, const struct vcp_law_params *p, __u32 code, __u64 k,
			     __u64 rtt_us, __u64 now_us)
{
	switch (code) {
	case VCP_CODE_LOW:
		s->cwnd += k * vcp_mi_step(p, rtt_us);
		break;
	case VCP_CODE_HIGH:
		s->cwnd += k * vcp_ai_step(p, rtt_us, s->cwnd);
		break;
	case VCP_CODE_OVERLOAD:
		if (now_us < s->hold_until_us) {
			/* The load factor still measures the load from before the MD. */
		} else if (now_us < s->ai_until_us) {
			/* AI for one rtt after the hold (VCP-DCCP App.). */
			s->cwnd += k * vcp_ai_step(p, rtt_us, s->cwnd);
		} else {
			s->mds++;
			s->hold_until_us = now_us + vcp_md_hold_us(p, rtt_us);
			s->ai_until_us = s->hold_until_us + rtt_us;
			s->cwnd = fx_max((s->cwnd * p->beta_q24) >> FX_RATIO_SHIFT, FX_ONE_CWND); /* A5 */
		}
		break;
	default:
		/* 00: bleached on the path; TCP congestion avoidance, k/cwnd. */
		if (s->cwnd)
			s->cwnd += (k << (2 * FX_CWND_SHIFT)) / s->cwnd;
		break;
	}
}

#endif
