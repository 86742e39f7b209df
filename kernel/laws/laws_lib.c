// SPDX-License-Identifier: GPL-2.0
/* The kernel programs' law headers built as a user-space library, so that the differential tests
 * (tests/python/test_kernel_bpf_laws.py) run the very arithmetic the BPF objects run. */
#include <linux/types.h>
#include "vcp_law.h"
#include "load_factor.h"

void racc_vcp_on_code(struct vcp_law_state *s, const struct vcp_law_params *p, __u32 code, __u64 k, __u64 rtt_us,
		      __u64 now_us)
{
	vcp_on_code(s, p, code, k, vcp_rtt_clock(p, rtt_us), now_us);
}

__u64 racc_vcp_mi_step(const struct vcp_law_params *p, __u64 rtt_us)
{
	return vcp_mi_step(p, rtt_us);
}

__u64 racc_vcp_ai_step(const struct vcp_law_params *p, __u64 rtt_us, __u64 cwnd)
{
	return vcp_ai_step(p, rtt_us, cwnd);
}

/* `LoadFactor::on_tick(now, queue)` then `on_arrival(bytes)`, as racc-proto's. */
void racc_lf_event(struct lf_state *s, const struct lf_params *p, __u64 now, __u64 queue_bytes, __u64 bytes)
{
	while (lf_next(s) <= now)
		lf_step(s, p, now, queue_bytes);
	s->lambda += bytes;
}

/* DPCP/TPCP (dpcp_law.h, dpcp_encode.h, dpcp_echo.h): what the controller, the router and the
 * receiver run, for tests/python/test_kernel_bpf_dpcp_laws.py. */
#include "dpcp_law.h"
#include "dpcp_encode.h"
#include "dpcp_echo.h"

void racc_dpcp_init(struct dpcp_state *s, const struct dpcp_params *p, __u64 cwnd)
{
	dpcp_init(s, p, cwnd);
}

__u32 racc_dpcp_on_ack(struct dpcp_state *s, const struct dpcp_params *p, __u32 byte, __u64 k, __u64 rtt_us,
		       __u64 now_us)
{
	return dpcp_on_ack(s, p, byte, k, rtt_us, now_us);
}

__u32 racc_dpcp_level(__u64 a, __u64 b, __u32 n)
{
	return lf_from_ratio(a, b, n);
}

__u32 racc_dpcp_encode(__u32 port, __u32 n, __u32 x2, __u32 pos, __u8 *flag)
{
	return dpcp_encode(port, n, x2, pos, flag);
}

__u32 racc_dpcp_position(__u32 seq, __u32 len, __u32 n)
{
	return dpcp_position(seq, len, n);
}

void racc_dpcp_echo_init(struct dpcp_echo *e, __u32 n)
{
	dpcp_echo_init(e, n);
}

void racc_dpcp_echo_on_data(struct dpcp_echo *e, __u32 code, __u32 pos)
{
	dpcp_echo_on_data(e, code, pos);
}

__u32 racc_dpcp_echo_take(struct dpcp_echo *e)
{
	return dpcp_echo_take(e);
}

/* DCP-EW (dcpew_law.h). */
#include "dcpew_law.h"

__u32 racc_dcpew_on_ack(struct dcpew_state *s, const struct dcpew_params *p, __u32 byte, __u64 k, __u64 rtt_us,
			__u64 now_us)
{
	return dcpew_on_ack(s, p, byte, k, rtt_us, now_us);
}

__u32 racc_dcpew_on_loss(struct dcpew_state *s, const struct dcpew_params *p, __u64 now_us, __u64 rtt_us)
{
	return dcpew_on_loss(s, p, now_us, rtt_us);
}
