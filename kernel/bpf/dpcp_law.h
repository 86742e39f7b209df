/* DPCP/TPCP's load-factor levels, the sender's decoder and its window laws in fixed point
 * (MPCP §3.1–§3.4, §5; Table 1), the kernel twin of racc-proto's `dpcp/levels.rs` (`Lf`),
 * `dpcp/decode.rs` (`Decoder::on_echo`) and `dpcp/window.rs` (`ChainWindow::apply`), with the
 * same constants. Windows are Q20 packets, times microseconds, ρ a ratio of two integers.
 *
 * A level is a chain of n 2-bit digits (01, 10, 11; MSP first), packed MSP-major; n is 2
 * (DPCP) or 3 (TPCP). Every constant that is a real number (ξ per level, Table 1's MD
 * factors, resume_after) arrives precomputed from the loader (`struct dpcp_params`). */
#ifndef RACC_DPCP_LAW_H
#define RACC_DPCP_LAW_H

#include "fixed.h"
#include "vcp_law.h"

#define DPCP_MAX_CHAIN 3 /* racc-proto allows 4 (MAX_CHAIN); the kernel stops at TPCP */
#define DPCP_LEVELS 27 /* 3^DPCP_MAX_CHAIN */
#define DPCP_NONE 0xff

/* MPCP Table 1: level j holds ρ < T[j]/20 (0.20 0.40 0.80 0.85 0.95 1.00 1.05 1.40 2.00);
 * the last one also everything above 2.0 (`levels::THRESHOLDS`). In twentieths, so that a
 * level is decided exactly in integers. */
RACC_INLINE __u64 dpcp_threshold20(__u32 j)
{
	switch (j) {
	case 0: return 4;
	case 1: return 8;
	case 2: return 16;
	case 3: return 17;
	case 4: return 19;
	case 5: return 20;
	case 6: return 21;
	case 7: return 28;
	default: return 40;
	}
}

/* VCP's β, the MD of VCP mode (`levels::VCP_BETA`, VCP-DCCP A5: 0.875), Q24. */
#define DPCP_VCP_BETA_Q24 14680064ULL

#define DPCP_MODE_CHAINS 0
#define DPCP_MODE_VCP 1 /* VCP mode until resume_at (MPCP §3.4) */
#define DPCP_MODE_VCP_FOREVER 2

#define DPCP_ACT_NONE 0
#define DPCP_ACT_GROW 1
#define DPCP_ACT_HOLD 2
#define DPCP_ACT_AI 3
#define DPCP_ACT_SET 4

/* Every field a __u64 (the loader passes a list of integers). */
struct dpcp_params {
	struct vcp_law_params law; /* VCP's window laws: t_p, α, σ_MI, the AI law, md_hold, iw (MPCP §3.1) */
	__u64 n; /* chain length: 2 DPCP (MPCP §3), 3 TPCP (MPCP §5) */
	__u64 exception_limit; /* same-position echoes in a row that switch to VCP mode (MPCP §3.4: 3) */
	__u64 resume_after_q8; /* RTTs in VCP mode before chains again [reconstructed: 8] */
	__u64 max_resumes; /* failed retries, then VCP mode for good [reconstructed: 3] */
	__u64 md_on_msp_only; /* [reconstructed: off] */
	__u64 vcp_like; /* growth "vcp-like" (1) or "mi+ai" (0, MPCP §3.1) */
	__u64 md_q24[3]; /* MD factors of 11 01, 11 10, 11 11 (MPCP Table 1: 0.875, 0.6, 0.43) */
	__u64 log2_1xi_q30[DPCP_LEVELS]; /* log2(1 + ξ) per level, ξ = h(1/max(ρ_ub, 0.2) − 1), capped */
};

/* The decoder's state (`Decoder`), every time in µs. */
struct dpcp_decoder {
	__u64 hold_until;
	__u64 ai_until;
	__u64 cwnd_pre; /* Q20 */
	__u64 resume_at;
	__u64 resumed_at;
	__u32 run;
	__u32 failed_retries;
	__u8 lf; /* the saved LF, packed */
	__u8 last; /* the last position seen, DPCP_NONE before any */
	__u8 skipped; /* positions skipped by an exception (bit k) */
	__u8 mode;
	__u8 warmup;
	__u8 refine_next; /* DPCP_NONE: none */
	__u8 has_resumed_at;
	__u8 pad;
};

/* One flow's controller state: the window and the decoder, and the decoder's counts. */
struct dpcp_state {
	__u64 cwnd; /* Q20 packets */
	struct dpcp_decoder d;
	__u32 mds;
	__u32 exceptions;
	__u32 fallbacks;
	__u32 resumes;
	__u32 refinements;
	__u32 pad;
};

/* ---- levels (`Lf`) -------------------------------------------------------------------- */

RACC_INLINE __u32 lf_digit(__u32 lf, __u32 n, __u32 i)
{
	return (lf >> (2 * (n - 1 - i))) & 3;
}

RACC_INLINE __u32 lf_with_digit(__u32 lf, __u32 n, __u32 i, __u32 d)
{
	__u32 s = 2 * (n - 1 - i);

	return (lf & ~(3U << s)) | (d << s);
}

/* Digits from..n−1 set to 11. */
RACC_INLINE __u32 lf_tail_worst(__u32 lf, __u32 n, __u32 from)
{
	__u32 i;

	for (i = 1; i < DPCP_MAX_CHAIN; i++)
		if (i >= from && i < n)
			lf = lf_with_digit(lf, n, i, 3);
	return lf;
}

RACC_INLINE __u32 lf_lowest(__u32 n)
{
	return n == 3 ? 0x15 : 0x5;
}

RACC_INLINE __u32 lf_zone_worst(__u32 n, __u32 msp)
{
	return lf_tail_worst(lf_with_digit(lf_lowest(n), n, 0, msp), n, 1);
}

/* The level's index 0..3^n−1 (base-3 digits, MSP first): the row of `log2_1xi_q30`. */
RACC_INLINE __u32 lf_index(__u32 lf, __u32 n)
{
	__u32 i, idx = 0;

	for (i = 0; i < DPCP_MAX_CHAIN; i++)
		if (i < n)
			idx = idx * 3 + (lf_digit(lf, n, i) - 1);
	return idx;
}

/* `Lf::from_rho` for ρ = a/b exactly (a, b ≥ 0 in the same unit; b > 0): Table 1's nine
 * levels, then for n = 3 each level split in three equal parts (TPCP; bounds in sixtieths). */
RACC_INLINE __u32 lf_from_ratio(__u64 a, __u64 b, __u32 n)
{
	__u32 j = 0, lf, d;
	__u64 lo, hi;

#pragma unroll
	for (d = 0; d < 8; d++)
		if (20 * a >= dpcp_threshold20(d) * b)
			j = d + 1;
	lf = ((j / 3 + 1) << 2) | (j % 3 + 1);
	if (n < 3)
		return lf;
	lo = j ? dpcp_threshold20(j - 1) : 0;
	hi = dpcp_threshold20(j);
	d = 1 + (60 * a >= (3 * lo + (hi - lo)) * b) + (60 * a >= (3 * lo + 2 * (hi - lo)) * b);
	return (lf << 2) | d;
}

RACC_INLINE __u32 lf_zone_over(__u32 lf, __u32 n)
{
	return lf_digit(lf, n, 0) == 3;
}

/* ---- the decoder (`Decoder::on_echo`) ------------------------------------------------ */

struct dpcp_action {
	__u32 kind;
	__u32 lf; /* GROW: the level */
	__u32 vcp; /* GROW: in VCP mode */
	__u64 cwnd; /* SET: the window, Q20 */
};

RACC_INLINE void dpcp_init(struct dpcp_state *s, const struct dpcp_params *p, __u64 cwnd)
{
	__builtin_memset(s, 0, sizeof(*s));
	s->cwnd = cwnd;
	s->d.lf = lf_lowest(p->n);
	s->d.last = DPCP_NONE;
	s->d.refine_next = DPCP_NONE;
}

/* `Decoder::chains`: back to chains once VCP mode's time is up. */
RACC_INLINE int dpcp_chains(struct dpcp_state *s, __u64 now)
{
	struct dpcp_decoder *d = &s->d;

	if (d->mode == DPCP_MODE_VCP && now >= d->resume_at) {
		d->mode = DPCP_MODE_CHAINS;
		d->last = DPCP_NONE;
		d->run = 0;
		d->skipped = 0;
		d->warmup = 1;
		d->resumed_at = now;
		d->has_resumed_at = 1;
		s->resumes++;
	}
	return d->mode == DPCP_MODE_CHAINS;
}

RACC_INLINE void dpcp_fall_back(struct dpcp_state *s, const struct dpcp_params *p, __u64 now, __u64 rtt)
{
	struct dpcp_decoder *d = &s->d;
	__u64 span = (p->resume_after_q8 * rtt) >> 8;

	s->fallbacks++;
	if (d->has_resumed_at) {
		d->has_resumed_at = 0;
		if (now - d->resumed_at < span)
			d->failed_retries++;
		else
			d->failed_retries = 0;
	}
	if (d->failed_retries >= p->max_resumes) {
		d->mode = DPCP_MODE_VCP_FOREVER;
	} else {
		d->mode = DPCP_MODE_VCP;
		d->resume_at = now + span;
	}
	d->refine_next = DPCP_NONE;
}

RACC_INLINE struct dpcp_action dpcp_set(__u64 beta_q24, __u64 cwnd)
{
	struct dpcp_action a = { .kind = DPCP_ACT_SET };

	a.cwnd = fx_max((beta_q24 * cwnd) >> FX_RATIO_SHIFT, FX_ONE_CWND);
	return a;
}

/* `Decoder::regulate`: MPCP Table 1's action for the saved LF. */
RACC_INLINE struct dpcp_action dpcp_regulate(struct dpcp_state *s, const struct dpcp_params *p, __u64 now, __u32 k,
					     __u64 rtt, __u64 md_hold, __u64 cwnd, __u32 vcp, __u32 refine)
{
	struct dpcp_decoder *d = &s->d;
	struct dpcp_action a = { .kind = DPCP_ACT_NONE };
	__u32 n = p->n, lsp;
	__u64 beta;

	if (!lf_zone_over(d->lf, n)) {
		d->refine_next = DPCP_NONE;
		a.kind = DPCP_ACT_GROW;
		a.lf = d->lf;
		a.vcp = vcp;
		return a;
	}
	lsp = lf_digit(d->lf, n, 1);
	beta = vcp || lsp == 0 ? DPCP_VCP_BETA_Q24 : lsp == 1 ? p->md_q24[0] : lsp == 2 ? p->md_q24[1] : p->md_q24[2];
	if (refine) {
		d->refine_next = k + 1 < n ? k + 1 : DPCP_NONE;
		s->refinements++;
		return dpcp_set(beta, d->cwnd_pre);
	}
	d->refine_next = DPCP_NONE;
	if (now < d->hold_until) {
		a.kind = DPCP_ACT_HOLD;
		return a;
	}
	if (now < d->ai_until) {
		a.kind = DPCP_ACT_AI;
		return a;
	}
	if (p->md_on_msp_only && k != 0 && !vcp) {
		a.kind = DPCP_ACT_HOLD;
		return a;
	}
	d->cwnd_pre = cwnd; /* the episode (`start_episode`) */
	d->hold_until = now + md_hold;
	d->ai_until = d->hold_until + rtt;
	d->refine_next = !vcp && k + 1 < n ? k + 1 : DPCP_NONE;
	s->mds++;
	return dpcp_set(beta, cwnd);
}

/* `Decoder::on_echo`: the echo of code `code` at chain position `pos` (MPCP §3.3, §3.4), at
 * `now` with RTT `rtt`, MD hold `md_hold` and window `cwnd` (Q20). */
RACC_INLINE struct dpcp_action dpcp_on_echo(struct dpcp_state *s, const struct dpcp_params *p, __u64 now,
					    __u32 code, __u32 pos, __u64 rtt, __u64 md_hold, __u64 cwnd)
{
	struct dpcp_decoder *d = &s->d;
	struct dpcp_action none = { .kind = DPCP_ACT_NONE };
	__u32 n = p->n, k = pos, in_seq, refine, q, i, msp;

	code &= 3;
	if (code == 0 || pos >= n || n < 2 || n > DPCP_MAX_CHAIN)
		return none;
	dpcp_chains(s, now);
	if (d->mode != DPCP_MODE_CHAINS) {
		/* VCP mode: MSPs only, each the worst level of its zone. */
		if (pos != 0)
			return none;
		d->lf = lf_zone_worst(n, code);
		return dpcp_regulate(s, p, now, 0, rtt, md_hold, cwnd, 1, 0);
	}
	in_seq = d->last == DPCP_NONE ? k == 0 : k == (d->last + 1) % n;
	if (in_seq) {
		d->lf = k == 0 ? lf_zone_worst(n, code) : lf_with_digit(d->lf, n, k, code);
		d->run = 0;
		d->skipped = 0;
		if (k != 0)
			d->warmup = 0;
	} else if (d->warmup && k == 0) {
		d->lf = lf_zone_worst(n, code);
	} else if (d->skipped & (1U << k)) {
		/* The late position an exception skipped: it regulates, the sequence stays. */
		s->exceptions++;
		d->skipped &= ~(1U << k);
		if (k == 0)
			d->lf = lf_zone_worst(n, code);
		return dpcp_regulate(s, p, now, k, rtt, md_hold, cwnd, 0, 0);
	} else {
		if (d->last != DPCP_NONE) {
			s->exceptions++;
			if (!d->warmup)
				d->run++;
			d->skipped = 0;
			q = (d->last + 1) % n;
			for (i = 0; i < DPCP_MAX_CHAIN; i++) {
				if (q == k)
					break;
				d->skipped |= 1U << q;
				q = (q + 1) % n;
			}
		}
		if (k != 0) {
			d->lf = lf_tail_worst(d->lf, n, 1);
		} else if (d->last == 0) {
			msp = lf_digit(d->lf, n, 0);
			d->lf = lf_zone_worst(n, msp > code ? msp : code);
		} else {
			d->lf = lf_zone_worst(n, code);
		}
	}
	d->last = k;
	refine = in_seq && d->refine_next == k && now < d->hold_until;
	if (d->run + 1 >= p->exception_limit) {
		dpcp_fall_back(s, p, now, rtt);
		return dpcp_regulate(s, p, now, k, rtt, md_hold, cwnd, 1, 0);
	}
	return dpcp_regulate(s, p, now, k, rtt, md_hold, cwnd, 0, refine);
}

/* ---- the window (`ChainWindow::apply`) ------------------------------------------------ */

/* (1 + ξ)^min(rtt/t_p, σ_MI) − 1 per acknowledged packet (`vcp::mi_step`), Q20 packets. */
RACC_INLINE __u64 dpcp_mi_step(const struct dpcp_params *p, __u64 log2_1xi_q30, __u64 rtt_us)
{
	__u64 x = fx_min(fx_ratio(rtt_us, p->law.t_p_us), p->law.sigma_mi_q24);

	return fx_exp2m1_q30((x * log2_1xi_q30) >> FX_RATIO_SHIFT) >> (FX_EXP_SHIFT - FX_CWND_SHIFT);
}

/* The window after `a` for an ACK of `k` packets; `bleached`: the echo's code was 00
 * (TCP congestion avoidance, k/cwnd). */
RACC_INLINE void dpcp_apply(struct dpcp_state *s, const struct dpcp_params *p, struct dpcp_action a, __u32 bleached,
			    __u64 k, __u64 rtt_us)
{
	__u64 mi, ai;
	__u32 idx;

	if (bleached) {
		if (s->cwnd)
			s->cwnd += (k << (2 * FX_CWND_SHIFT)) / s->cwnd;
		return;
	}
	switch (a.kind) {
	case DPCP_ACT_SET:
		s->cwnd = a.cwnd;
		break;
	case DPCP_ACT_AI:
		s->cwnd += k * vcp_ai_step(&p->law, rtt_us, s->cwnd);
		break;
	case DPCP_ACT_GROW:
		idx = lf_index(a.lf, p->n);
		mi = idx < DPCP_LEVELS ? dpcp_mi_step(p, p->log2_1xi_q30[idx], rtt_us) : 0;
		ai = vcp_ai_step(&p->law, rtt_us, s->cwnd);
		if (!a.vcp && !p->vcp_like)
			s->cwnd += k * (mi + ai); /* MI and AI together (MPCP §3.1) */
		else if (lf_digit(a.lf, p->n, 0) == 1)
			s->cwnd += k * mi;
		else
			s->cwnd += k * ai;
		break;
	default:
		break;
	}
}

/* One ACK whose echo byte is `byte` (code | position << 2) reporting `k` packets, at `now`
 * with RTT `rtt_us` (`ChainWindow::on_wire_arrival` then `on_ack`): what the controller runs.
 * Returns the action's kind (DPCP_ACT_NONE for a bleached echo). */
RACC_INLINE __u32 dpcp_on_ack(struct dpcp_state *s, const struct dpcp_params *p, __u32 byte, __u64 k, __u64 rtt_us,
			      __u64 now)
{
	struct dpcp_action a = { .kind = DPCP_ACT_NONE };

	if ((byte & 3) == 0) {
		dpcp_apply(s, p, a, 1, k, rtt_us); /* 00: bleached on the path */
		return DPCP_ACT_NONE;
	}
	a = dpcp_on_echo(s, p, now, byte & 3, (byte >> 2) & 3, rtt_us, vcp_md_hold_us(&p->law, rtt_us), s->cwnd);
	dpcp_apply(s, p, a, 0, k, rtt_us);
	return a.kind;
}

#endif
