// SPDX-License-Identifier: GPL-2.0
/* The RCP router module on a real egress (Dukkipati et al.; docs/PROTOCOLS.md §6; racc-proto
 * `rcp/router.rs`): a tc (TCX) egress program that counts every packet into the interval
 * (bytes, and rtt·bytes of those whose RCP option carries an RTT), rolls the interval T =
 * min(T_slot, d0) over on packet arrival (as the VCP router's timers), and writes min(rate, R)
 * into each data segment's RCP option in place, fixing the TCP checksum incrementally.
 *
 * tc egress runs before the qdisc, so this is racc's `stamp = "arrival"` (XCC-Linux's modules in
 * NF_IP_POST_ROUTING do the same), not the default "departure". The queue q is the virtual
 * queue at the configured rate (vcp_router.bpf.c). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xcc_opt.h"
#include "xcc_parse.h"
#include "rcp_law.h"

#define TC_ACT_OK 0
#define ETH_P_IP 0x0800
#define ETH_HLEN 14
#define IPPROTO_TCP_ 6

struct router_state {
	struct bpf_spin_lock lock;
	struct rcp_router_law law;
	__u64 last_tick_ns;
	__u64 next_tick_ns;
	__u64 vq_bytes;
	__u64 vq_stamp_ns;
	__u64 started;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rcp_router_params);
} router_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct router_state);
} router SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RRC_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 slot, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &slot);

	if (c)
		*c += n;
}

static __always_inline __u64 vq_at(__u64 vq, __u64 rate_Bps, __u64 elapsed_ns)
{
	__u64 drained;

	if (elapsed_ns > 1000000000ULL)
		return 0;
	drained = rate_Bps * elapsed_ns / 1000000000ULL;
	return vq > drained ? vq - drained : 0;
}

SEC("tc")
int rcp_router_egress(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct rcp_router_params *p = bpf_map_lookup_elem(&router_config, &zero);
	struct router_state *r = bpf_map_lookup_elem(&router, &zero);
	void *data = (void *)(long)skb->data, *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph;
	struct tcphdr *th;
	struct rcp_opt opt;
	__u64 now = bpf_ktime_get_ns(), s, rtt = 0, q, t;
	__u32 ihl, tcp_off, header = 0, out = 0, segs;
	int off = -1, valid = 0, closed = 0;
	__u8 len = 0;

	if (!p || !r)
		return TC_ACT_OK;
	if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;
	iph = (void *)(eth + 1);
	if ((void *)(iph + 1) > data_end)
		return TC_ACT_OK;
	s = bpf_ntohs(iph->tot_len);
	segs = *(volatile __u32 *)&skb->gso_segs;
	if (segs > 1)
		s = skb->len - ETH_HLEN;
	ihl = iph->ihl * 4;
	count(RRC_PACKETS, 1);
	count(RRC_BYTES, s);
	if (segs <= 1 && iph->protocol == IPPROTO_TCP_ && ihl >= sizeof(*iph)) {
		tcp_off = ETH_HLEN + ihl;
		th = (void *)iph + ihl;
		if ((void *)(th + 1) <= data_end && s > ihl + th->doff * 4) {
			off = xcc_find_opt(skb, tcp_off, th->doff, RCP_OPT_EXID);
			if (off >= 0) {
				len = off >> 8;
				off &= 0xff;
			}
			if (off >= 0 && len == RCP_OPT_LEN &&
			    !bpf_skb_load_bytes(skb, tcp_off + off, &opt, sizeof(opt))) {
				header = bpf_ntohl(opt.rate);
				rtt = bpf_ntohl(opt.rtt_us);
				valid = 1;
			} else if (off >= 0) {
				count(RRC_MALFORMED, 1);
			}
		}
	}

	bpf_spin_lock(&r->lock);
	if (!r->started) {
		r->started = 1;
		rcp_init(&r->law, p);
		r->last_tick_ns = now;
		t = p->t_slot_ns < r->law.d0_ns ? p->t_slot_ns : r->law.d0_ns;
		r->next_tick_ns = now + t;
		r->vq_stamp_ns = now;
	}
	q = vq_at(r->vq_bytes, p->capacity_Bps, now > r->vq_stamp_ns ? now - r->vq_stamp_ns : 0);
	if (now >= r->next_tick_ns) {
		rcp_control(&r->law, p, now - r->last_tick_ns, q);
		r->last_tick_ns = now;
		t = p->t_slot_ns < r->law.d0_ns ? p->t_slot_ns : r->law.d0_ns;
		r->next_tick_ns = now + (t ? t : 1);
		closed = 1;
	}
	rcp_arrival(&r->law, s, valid ? rtt : 0);
	if (valid)
		out = rcp_stamp(&r->law, header);
	r->vq_bytes = q + s;
	r->vq_stamp_ns = now;
	bpf_spin_unlock(&r->lock);

	if (closed)
		count(RRC_INTERVALS, 1);
	if (valid) {
		count(RRC_RCP_DATA, 1);
		if (out < header) {
			__u32 old_rate = opt.rate, new_rate = bpf_htonl(out);
			__u32 at = ETH_HLEN + ihl + off + RCP_OPT_RATE_OFF;

			if (bpf_skb_store_bytes(skb, at, &new_rate, 4, 0) == 0 &&
			    bpf_l4_csum_replace(skb, ETH_HLEN + ihl + offsetof(struct tcphdr, check), old_rate, new_rate,
						4) == 0)
				count(RRC_STAMPED, 1);
			else
				count(RRC_CSUM_FAIL, 1);
		}
	}
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
