/* VCP's load-factor estimator of one output port in fixed point (VCP-DCCP App. A1, A2), the
 * kernel twin of racc-proto's `vcp/load_factor.rs` (`LoadFactor::on_tick`, `vcp_code`) and
 * `vcp/queue_term.rs`, with the same constants (docs/VCP-CONSTANTS.md):
 *
 *   every t_q:  q_l = a·q_l + (1−a)·q            A2 (queue_term "a2"; "ns2": the interval's
 *                                                    mean sample >> ns2_queue_shift at each t_p)
 *   every t_p:  ρ = (λ + k_q·q_l)/(γ·C·t_p), λ = 0   A1
 *   code: 01 for ρ < 0.8, 10 for 0.8 ≤ ρ < 1, 11 for ρ ≥ 1
 *
 * Times are nanoseconds, bytes are bytes; q_l is Q16 bytes; the loader precomputes
 * γ·C·t_p/8 (bytes per interval at the target utilisation) in Q8. The first t_p boundary only
 * opens the first interval (λ reset); ρ is 0 and the code 01 until the second. Samples run
 * before a boundary at the same instant, as in racc-proto. */
#ifndef RACC_LOAD_FACTOR_H
#define RACC_LOAD_FACTOR_H

#include "fixed.h"

#define LF_Q_SHIFT 16
#define LF_QUEUE_A2 0
#define LF_QUEUE_NS2 1

/* Every field a __u64 (the loader passes a list of integers). */
struct lf_params {
	__u64 t_p_ns; /* VCP-DCCP A1: 200 ms */
	__u64 t_q_ns; /* VCP-DCCP A2: 10 ms */
	__u64 k_q_q16; /* k_q (VCP-DCCP A1: 0.5) */
	__u64 a_q16; /* a, the old value's weight (VCP-DCCP A2: 0.875) */
	__u64 interval_bytes_q8; /* γ·C·t_p/8 (γ = 0.98, VCP-DCCP), Q8 bytes */
	__u64 queue_term; /* LF_QUEUE_A2 or LF_QUEUE_NS2 */
	__u64 ns2_queue_shift; /* reference router: 4 (`NS2_QUEUE_SHIFT`) */
	__u64 rate_Bps; /* the port's rate C/8, bytes per second (the virtual queue's drain) */
};

struct lf_state {
	__u64 lambda; /* bytes since the last t_p boundary (λ) */
	__u64 q_l; /* Q16 bytes */
	__u64 q_sum; /* "ns2": this interval's t_q samples and their count */
	__u64 q_samples;
	__u64 next_q_ns;
	__u64 next_p_ns;
	__u64 opened; /* the first boundary has passed */
	__u64 rho_q16; /* the latest ρ, Q16 (reported; the code is decided exactly) */
	__u64 code;
	__u64 estimates;
	__u64 num_q16; /* the latest λ + k_q·q_l (Q16 bytes): ρ = num_q16 / (interval_bytes_q8 << 8) */
};

/* The code of ρ = num/den without rounding ρ: num Q16 bytes, den Q8 bytes (`vcp_code`). */
RACC_INLINE __u64 lf_code(__u64 num_q16, __u64 den_q8)
{
	__u64 n = num_q16 << 8; /* Q24, as den << 16 */

	if (5 * n < (den_q8 << 18)) /* ρ < 0.8 */
		return 1;
	if (n < (den_q8 << 16)) /* ρ < 1 */
		return 2;
	return 3;
}

/* One t_q sample of the queue (bytes). */
RACC_INLINE void lf_sample(struct lf_state *s, const struct lf_params *p, __u64 queue_bytes)
{
	if (p->queue_term == LF_QUEUE_NS2) {
		s->q_sum += queue_bytes;
		s->q_samples++;
	} else {
		s->q_l = (p->a_q16 * s->q_l + ((1ULL << LF_Q_SHIFT) - p->a_q16) * (queue_bytes << LF_Q_SHIFT)) >>
			 LF_Q_SHIFT; /* A2 */
	}
}

/* One t_p boundary. */
RACC_INLINE void lf_boundary(struct lf_state *s, const struct lf_params *p)
{
	__u64 num;

	if (p->queue_term == LF_QUEUE_NS2) {
		__u64 mean = s->q_samples ? s->q_sum / s->q_samples : 0;

		s->q_l = (mean >> (p->ns2_queue_shift & 63)) << LF_Q_SHIFT;
		s->q_sum = 0;
		s->q_samples = 0;
	}
	if (s->opened) {
		num = (s->lambda << LF_Q_SHIFT) + ((p->k_q_q16 * s->q_l) >> LF_Q_SHIFT); /* A1 */
		s->rho_q16 = p->interval_bytes_q8 ? (num << 8) / p->interval_bytes_q8 : 0;
		s->code = lf_code(num, p->interval_bytes_q8);
		s->num_q16 = num;
		s->estimates++;
	}
	s->opened = 1;
	s->lambda = 0;
	s->next_p_ns += p->t_p_ns;
}

/* Run the next timer due at or before `now` (`queue_bytes`: the queue at that timer's instant,
 * `lf_next`); 0 when none is due. */
RACC_INLINE int lf_step(struct lf_state *s, const struct lf_params *p, __u64 now, __u64 queue_bytes)
{
	if (s->next_q_ns <= now && s->next_q_ns <= s->next_p_ns) {
		lf_sample(s, p, queue_bytes);
		s->next_q_ns += p->t_q_ns;
		return 1;
	}
	if (s->next_p_ns <= now) {
		lf_boundary(s, p);
		return 1;
	}
	return 0;
}

/* When the next timer falls (the queue sample of `lf_step` is taken at this instant). */
RACC_INLINE __u64 lf_next(const struct lf_state *s)
{
	return fx_min(s->next_q_ns, s->next_p_ns);
}

#endif
