// SPDX-License-Identifier: GPL-2.0
/* The VCP router module on a real egress (VCP-DCCP App. A1, A2; racc-proto `vcp/router.rs`):
 * a tc (TCX) egress program that counts every packet's bytes into λ, keeps the t_q/t_p timers
 * by rolling them over on packet arrival, and raises the IP ECN code of ECT packets to the
 * port's code (never touching Not-ECT, never lowering: the path carries the maximum).
 *
 * The estimator and its virtual queue are lf_port.h's, shared with the chain family's router. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "common.h"
#include "lf_port.h"

#define TC_ACT_OK 0

struct router_state {
	struct bpf_spin_lock lock;
	struct lf_port port;
};

#define ROUTER_PARAMS struct lf_params
#define COUNTER_SLOTS RC_MAX
#include "router_maps.h"

SEC("tc")
int vcp_router_egress(struct __sk_buff *skb)
{
	struct lf_params *p = router_params();
	struct router_state *r = router_port();
	struct iphdr *iph;
	__u64 now = bpf_ktime_get_ns(), code, wire;
	__u32 segs;
	__u8 cur, next;

	if (!p || !r)
		return TC_ACT_OK;
	wire = router_meter(skb, &iph, &segs);

	bpf_spin_lock(&r->lock);
	lf_port_arrive(&r->port, p, now, wire);
	code = r->port.lf.code;
	bpf_spin_unlock(&r->lock);

	if (!iph)
		return TC_ACT_OK;
	cur = iph->tos & 3;
	if (cur == 0) {
		count(RC_NOT_ECT); /* RFC 3168: Not-ECT is never marked */
		return TC_ACT_OK;
	}
	next = cur;
	if (code > cur && tc_write_ecn(skb, iph, (__u8)code) == 0) {
		next = (__u8)code;
		count(RC_MARKED);
	}
	count(next == 1 ? RC_CODES_LOW : next == 2 ? RC_CODES_HIGH : RC_CODES_OVERLOAD);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
