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
