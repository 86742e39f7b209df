/* DCP-EW's loss differentiation in fixed point (DCP-EW §III.D), the kernel twin of racc-proto's
 * `dcpew/window.rs` (`BitMap`, `LossDifferentiation::on_fast_retransmit`). Everything else of
 * DCP-EW's sender is DPCP's (dpcp_law.h: levels, decoder, growth, MD; DCP-EW §III.A).
 *
 *   every ACK with an echo:  BM = (BM << 1) | overload, kept to N bits (overload: the decoded
 *                            LF's MSP is 11; a bleached echo shifts in 0)
 *   a fast retransmit:       CF = the low T bits all set (N = 32, T = 16);
 *                            CF clear: an error (wireless) loss, cwnd kept;
 *                            CF set: a congestion loss; within an MD episode cwnd kept, else
 *                            cwnd = f·cwnd (f: the saved level's Table 1 factor, VCP's β
 *                            outside overload; or ½; or none) and the episode starts. */
#ifndef RACC_DCPEW_LAW_H
#define RACC_DCPEW_LAW_H

#include "dpcp_law.h"

#define DCPEW_LOSS_MD_LEVEL 0
#define DCPEW_LOSS_MD_HALF 1
#define DCPEW_LOSS_MD_NONE 2

/* What a loss was (the return of `dcpew_on_loss`). */
#define DCPEW_LOSS_ERROR 0 /* CF clear: cwnd kept */
#define DCPEW_LOSS_IN_EPISODE 1 /* congestion, inside an MD episode: cwnd kept */
#define DCPEW_LOSS_MD 2 /* congestion: cwnd cut, an episode started */
#define DCPEW_LOSS_KEPT 3 /* congestion, ew_loss_md "none": cwnd kept */

struct dcpew_params {
	struct dpcp_params dp; /* n = 2; exception_limit 2^32 − 1 for "off" */
	__u64 bm_keep; /* (1 << N) − 1, N = bm_bits (DCP-EW §III.D: 32) */
	__u64 bm_t_mask; /* (1 << T) − 1, T = bm_threshold (DCP-EW §III.D: 16) */
	__u64 loss_md; /* DCPEW_LOSS_MD_* (`ew_loss_md`, default "level") */
};

/* DPCP's state and the bit map (its counts are the controller's counters, not state: the
 * whole must fit icsk_ca_priv). */
struct dcpew_state {
	struct dpcp_state st;
	__u64 bm;
};

RACC_INLINE void dcpew_push(struct dcpew_state *s, const struct dcpew_params *p, __u32 overload)
{
	s->bm = ((s->bm << 1) | (overload ? 1 : 0)) & p->bm_keep;
}

/* One ACK as DPCP's `dpcp_on_ack`, then the bit map (`ChainWindow::on_wire_arrival`). */
RACC_INLINE __u32 dcpew_on_ack(struct dcpew_state *s, const struct dcpew_params *p, __u32 byte, __u64 k,
			       __u64 rtt_us, __u64 now)
{
	__u32 kind = dpcp_on_ack(&s->st, &p->dp, byte, k, rtt_us, now);

	dcpew_push(s, p, (byte & 3) && lf_zone_over(s->st.d.lf, p->dp.n));
	return kind;
}

/* A fast retransmit at `now` (`LossDifferentiation::on_fast_retransmit`): sets the window
 * recovery exits to (Q20) and says which case it was. */
RACC_INLINE __u32 dcpew_on_loss(struct dcpew_state *s, const struct dcpew_params *p, __u64 now, __u64 rtt_us)
{
	struct dpcp_decoder *d = &s->st.d;
	__u64 f;
	__u32 lsp;

	if ((s->bm & p->bm_t_mask) != p->bm_t_mask)
		return DCPEW_LOSS_ERROR;
	if (now < d->ai_until)
		return DCPEW_LOSS_IN_EPISODE;
	if (p->loss_md == DCPEW_LOSS_MD_NONE)
		return DCPEW_LOSS_KEPT;
	if (p->loss_md == DCPEW_LOSS_MD_HALF) {
		f = FX_ONE_RATIO / 2;
	} else if (lf_zone_over(d->lf, p->dp.n)) {
		lsp = lf_digit(d->lf, p->dp.n, 1);
		f = lsp == 1 ? p->dp.md_q24[0] : lsp == 2 ? p->dp.md_q24[1] : p->dp.md_q24[2];
	} else {
		f = DPCP_VCP_BETA_Q24;
	}
	/* `Decoder::note_md`: the loss MD is the episode's. */
	d->cwnd_pre = s->st.cwnd;
	d->hold_until = now + vcp_md_hold_us(&p->dp.law, rtt_us);
	d->ai_until = d->hold_until + rtt_us;
	d->refine_next = DPCP_NONE;
	s->st.cwnd = fx_max((f * s->st.cwnd) >> FX_RATIO_SHIFT, FX_ONE_CWND);
	return DCPEW_LOSS_MD;
}

#endif
