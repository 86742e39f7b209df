/* What the load-factor family's controllers do alike with the kernel's window
 * (docs/KERNEL-BPF.md): the law's Q20 window written as whole packets, TCP's halving on a loss,
 * and the undo with the struct_ops that registers them. VCP's (vcp_host.bpf.c), shared by the
 * chain family (dpcp_host.bpf.c). BPF only. */
#ifndef RACC_CC_WINDOW_H
#define RACC_CC_WINDOW_H

#include "fixed.h"

/* snd_cwnd from the law's window `*cwnd_fx` (Q20 packets): at least 1, at most the clamp, where
 * the law's window stops too. Returns what was written (the controller's `last_set`, by which
 * it tells the kernel's own moves: recovery's exit, an undo, an RTO). */
static __always_inline __u32 cc_set_cwnd(struct tcp_sock *tp, __u64 *cwnd_fx)
{
	__u64 w = *cwnd_fx >> FX_CWND_SHIFT; /* the kernel's window is whole packets */

	if (w < 1)
		w = 1;
	if (w > tp->snd_cwnd_clamp) {
		w = tp->snd_cwnd_clamp;
		*cwnd_fx = w << FX_CWND_SHIFT;
	}
	tp->snd_cwnd = (__u32)w;
	return (__u32)w;
}

/* A loss (or an ECN-Echo, TCP's signal, not the family's): NewReno's halving, at least 2
 * (`Response::Halve`). */
static __always_inline __u32 cc_halved(struct tcp_sock *tp)
{
	return tp->snd_cwnd >> 1 > 2 ? tp->snd_cwnd >> 1 : 2;
}

/* The controller `ops`, registered as `cc_name` (a string), of the programs PREFIX_init,
 * PREFIX_cong_avoid and PREFIX_ssthresh, with the undo they share: the window before the loss
 * that turned out spurious, or the present one if larger. */
#define CC_STRUCT_OPS(ops, prefix, cc_name)                                                         \
	SEC("struct_ops/" #prefix "_undo_cwnd")                                                  \
	__u32 BPF_PROG(prefix##_undo_cwnd, struct sock *sk)                                      \
	{                                                                                        \
		struct tcp_sock *tp = (struct tcp_sock *)sk;                                     \
                                                                                                 \
		return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;            \
	}                                                                                        \
	SEC(".struct_ops")                                                                       \
	struct tcp_congestion_ops ops = {                                                        \
		.init = (void *)prefix##_init,                                                   \
		.cong_avoid = (void *)prefix##_cong_avoid,                                       \
		.ssthresh = (void *)prefix##_ssthresh,                                           \
		.undo_cwnd = (void *)prefix##_undo_cwnd,                                         \
		.name = cc_name,                                                                  \
	}

#endif
