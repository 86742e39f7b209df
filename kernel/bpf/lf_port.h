/* VCP's load-factor estimator at one output port, rolled over on packet arrival (VCP-DCCP
 * App. A1, A2; load_factor.h), the router modules' common ground (docs/KERNEL-BPF.md): VCP's
 * (vcp_router.bpf.c), shared by the chain family (dpcp_router.bpf.c).
 *
 * No timer runs: each arrival first runs the t_q/t_p timers that fell due since the last one,
 * then counts its bytes into λ (every packet, before any buffer check, as the reference code).
 * The queue a t_q sample reads is a virtual queue: the bytes that arrived at this egress minus
 * what the configured rate C drained since (exact for a FIFO at C that drops nothing; between
 * two arrivals it only drains, so a sample falling between them is exact too). The qdisc's
 * backlog is not used: with netem under htb it includes the delay line. Pure arithmetic, for
 * BPF (under the port's spin lock) and user space alike. */
#ifndef RACC_LF_PORT_H
#define RACC_LF_PORT_H

#include "load_factor.h"

/* Timers rolled over per packet at most; behind by more than this many, the rest waits for the
 * next packets (an idle link catches up within a few). */
#define LF_MAX_STEPS 48

struct lf_port {
	struct lf_state lf;
	__u64 vq_bytes; /* the virtual queue after the last arrival */
	__u64 vq_stamp_ns; /* that arrival's time */
	__u64 started;
};

/* The virtual queue `elapsed_ns` after its last arrival. */
RACC_INLINE __u64 lf_vq_at(__u64 vq, __u64 rate_Bps, __u64 elapsed_ns)
{
	__u64 drained;

	if (elapsed_ns > 1000000000ULL)
		return 0;
	drained = rate_Bps * elapsed_ns / 1000000000ULL;
	return vq > drained ? vq - drained : 0;
}

RACC_INLINE __u64 lf_vq_since(const struct lf_port *r, const struct lf_params *p, __u64 t)
{
	return lf_vq_at(r->vq_bytes, p->rate_Bps, t > r->vq_stamp_ns ? t - r->vq_stamp_ns : 0);
}

/* A packet of `wire` bytes arrives at `now`. Returns 1 for the port's first packet, where both
 * timers start (phase 0) and the code is 01. */
RACC_INLINE int lf_port_arrive(struct lf_port *r, const struct lf_params *p, __u64 now, __u64 wire)
{
	int first = !r->started, i;
	__u64 t;

	if (first) {
		r->started = 1;
		r->lf.next_q_ns = now;
		r->lf.next_p_ns = now;
		r->lf.code = 1;
		r->vq_stamp_ns = now;
	}
	for (i = 0; i < LF_MAX_STEPS; i++) {
		t = lf_next(&r->lf);
		if (t > now)
			break;
		lf_step(&r->lf, p, now, lf_vq_since(r, p, t));
	}
	r->vq_bytes = lf_vq_since(r, p, now) + wire;
	r->vq_stamp_ns = now;
	r->lf.lambda += wire;
	return first;
}

#endif
