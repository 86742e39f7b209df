// SPDX-License-Identifier: GPL-2.0
/* The DPCP/TPCP router module on a real egress (MPCP §3.3, §5; racc-proto `dpcp/router.rs`):
 * VCP's estimator of ρ (VCP-DCCP A1, A2; lf_port.h, rolled over on packet arrival with the
 * virtual queue, as vcp_router.bpf.c), ρ quantised into n digits at each t_p (MPCP Table 1,
 * TPCP's split; dpcp_law.h), and Alg. 2 on every ECT TCP data packet with its flow's 2-bit
 * flag (dpcp_encode.h). The position is the segment's index in the sequence space
 * (dpcp_echo.h, `dpcp_position`), or for DCP-EW the IP ID's LSB (DCP-EW §III.B; racc-proto
 * `dcpew/router.rs`, the NM: Alg. 2 by the visible ID). The chain's bits are written at the egress hook, before the
 * qdisc (as VCP's: no BPF dequeue hook here). docs/KERNEL-BPF.md. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "dpcp_common.h"
#include "lf_port.h"
#include "dpcp_encode.h"
#include "dpcp_echo.h"

/* TCX_NEXT: the next program on this hook decides (the last passes), so that a test can chain a
 * lossy link after the router (test_random_drop.bpf.c). */
#define TC_ACT_OK (-1)

struct dpcp_router_params {
	struct lf_params lf; /* VCP's estimator (VCP-DCCP A1, A2) */
	__u64 n; /* chain length (MPCP §3: 2; §5: 3) */
	__u64 evict_ns; /* a flow idle this long starts again from MSP_EQ [reconstructed: 10 s] */
	__u64 latch_lsp; /* later positions use the level at the flow's MSP [reconstructed: off] */
	__u64 pos_by_ip_id; /* DCP-EW: the position is the IP ID's LSB (DCP-EW §III.B) */
};

struct router_state {
	struct bpf_spin_lock lock;
	struct lf_port port;
	__u64 level; /* the port's load factor, n digits packed */
	__u64 seen_estimates;
};

struct flow_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
};

struct flow_slot {
	__u64 last_ns;
	__u8 flag;
	__u8 latched;
	__u8 has_latched;
};

/* The per-flow flags; an LRU table, as a real router's would evict. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct flow_key);
	__type(value, struct flow_slot);
} flows SEC(".maps");

#define ROUTER_PARAMS struct dpcp_router_params
#define COUNTER_SLOTS DRC_MAX
#include "router_maps.h"

SEC("tc")
int dpcp_router_egress(struct __sk_buff *skb)
{
	struct dpcp_router_params *p = router_params();
	struct router_state *r = router_port();
	struct iphdr *iph;
	__u64 now = bpf_ktime_get_ns(), wire, level;
	__u32 segs, n, ihl, payload, seq, len, pos, lf, next, cur;
	struct flow_key key = {};
	struct flow_slot *slot, fresh = { .flag = DPCP_FLAG_MSP_EQ };
	__u8 hdr[16];

	if (!p || !r)
		return TC_ACT_OK;
	n = p->n;
	if (n < 2 || n > DPCP_MAX_CHAIN)
		return TC_ACT_OK;
	wire = router_meter(skb, &iph, &segs);

	bpf_spin_lock(&r->lock);
	if (lf_port_arrive(&r->port, &p->lf, now, wire))
		r->level = lf_lowest(n);
	if (r->port.lf.estimates != r->seen_estimates) {
		/* A t_p boundary: ρ = num / (γ·C·t_p) into n digits, exactly (`Lf::from_rho`). */
		r->seen_estimates = r->port.lf.estimates;
		r->level = lf_from_ratio(r->port.lf.num_q16, p->lf.interval_bytes_q8 << 8, n);
	}
	level = r->level;
	bpf_spin_unlock(&r->lock);

	if (!iph)
		return TC_ACT_OK;
	cur = iph->tos & 3;
	if (cur == 0) {
		count(DRC_NOT_ECT);
		return TC_ACT_OK;
	}
	if (iph->protocol != IPPROTO_TCP_)
		return TC_ACT_OK;
	ihl = iph->ihl * 4;
	if (ihl < sizeof(*iph) || bpf_skb_load_bytes(skb, ETH_HLEN + ihl, hdr, sizeof(hdr)))
		return TC_ACT_OK;
	payload = bpf_ntohs(iph->tot_len);
	if (payload <= ihl + (hdr[12] >> 4) * 4)
		return TC_ACT_OK; /* not data: Alg. 2 marks data packets only (`on_departure`) */
	payload -= ihl + (hdr[12] >> 4) * 4;
	len = payload;
	if (segs > 1) {
		count(DRC_GSO);
		len = skb->gso_size ? skb->gso_size : payload;
	}
	seq = ((__u32)hdr[4] << 24) | ((__u32)hdr[5] << 16) | ((__u32)hdr[6] << 8) | hdr[7];
	pos = p->pos_by_ip_id ? bpf_ntohs(iph->id) & 1 : dpcp_position(seq, len, n);
	count(pos == 0 ? DRC_MSP : DRC_LATER);

	key.saddr = iph->saddr;
	key.daddr = iph->daddr;
	key.sport = ((__u16)hdr[0] << 8) | hdr[1];
	key.dport = ((__u16)hdr[2] << 8) | hdr[3];
	slot = bpf_map_lookup_elem(&flows, &key);
	if (!slot) {
		fresh.last_ns = now;
		bpf_map_update_elem(&flows, &key, &fresh, BPF_NOEXIST);
		slot = bpf_map_lookup_elem(&flows, &key);
		if (!slot)
			return TC_ACT_OK;
	}
	if (now - slot->last_ns >= p->evict_ns && slot->last_ns != now) {
		slot->flag = DPCP_FLAG_MSP_EQ;
		slot->has_latched = 0;
		count(DRC_FLOWS_EVICTED);
	}
	slot->last_ns = now;
	/* `Slot::code_for`: the MSP latches the port's level; later positions use it if asked. */
	lf = (__u32)level;
	if (pos == 0) {
		slot->latched = lf;
		slot->has_latched = 1;
	} else if (p->latch_lsp && slot->has_latched) {
		lf = slot->latched;
	}
	next = dpcp_encode(lf, n, cur, pos, &slot->flag);
	if (lf_zone_over((__u32)level, n))
		count(DRC_OVER);
	if (next != cur && tc_write_ecn(skb, iph, (__u8)next) == 0) {
		count(DRC_MARKED);
		if (next < cur)
			count(DRC_LOWERED);
	}
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
