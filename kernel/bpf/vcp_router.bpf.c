// SPDX-License-Identifier: GPL-2.0
/* The VCP router module on a real egress (VCP-DCCP App. A1, A2; racc-proto `vcp/router.rs`):
 * a tc (TCX) egress program that counts every packet's bytes into λ, keeps the t_q/t_p timers
 * by rolling them over on packet arrival, and raises the IP ECN code of ECT packets to the
 * port's code (never touching Not-ECT, never lowering: the path carries the maximum).
 *
 * The queue q is a virtual queue: the bytes that arrived at this egress minus what the
 * configured rate C drained since (exact for a FIFO at C that drops nothing; between two
 * arrivals it only drains, so a t_q sample falling between them is exact too). The qdisc's
 * backlog is not used: with netem under htb it includes the delay line. docs/KERNEL-BPF.md.
 * Bytes are skb->len at tc egress (Ethernet header included), plus the headers of the further
 * segments of a GSO packet: what the qdisc meters. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "common.h"
#include "load_factor.h"

#define TC_ACT_OK 0
#define ETH_P_IP 0x0800
#define ETH_HLEN 14
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17
/* Timers rolled over per packet at most; behind by more than this many, the rest waits for the
 * next packets (an idle link catches up within a few). */
#define LF_MAX_STEPS 48

struct router_state {
	struct bpf_spin_lock lock;
	struct lf_state lf;
	__u64 vq_bytes; /* the virtual queue after the last arrival */
	__u64 vq_stamp_ns; /* that arrival's time */
	__u64 started;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lf_params);
} lf_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct router_state);
} router SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RC_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 slot, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &slot);

	if (c)
		*c += n;
}

/* The virtual queue `elapsed_ns` after its last arrival. */
static __always_inline __u64 vq_at(__u64 vq, __u64 rate_Bps, __u64 elapsed_ns)
{
	__u64 drained;

	if (elapsed_ns > 1000000000ULL)
		return 0;
	drained = rate_Bps * elapsed_ns / 1000000000ULL;
	return vq > drained ? vq - drained : 0;
}

SEC("tc")
int vcp_router_egress(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct lf_params *p = bpf_map_lookup_elem(&lf_config, &zero);
	struct router_state *r = bpf_map_lookup_elem(&router, &zero);
	void *data, *data_end;
	struct ethhdr *eth;
	struct iphdr *iph;
	__u64 now = bpf_ktime_get_ns(), code, t, wire;
	__u32 segs;
	__u8 tos, cur, next;
	int i;

	if (!p || !r)
		return TC_ACT_OK;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	eth = data;
	iph = (void *)(eth + 1);
	if ((void *)(iph + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		iph = NULL;
	wire = skb->len;
	segs = *(volatile __u32 *)&skb->gso_segs; /* one plain context load (the verifier wants it so) */
	if (iph && segs > 1) {
		/* A GSO packet is gso_segs frames on the wire, each with its own headers, as the qdisc
		 * counts it (qdisc_pkt_len_init). */
		__u32 hdr = ETH_HLEN + iph->ihl * 4;
		__u8 doff = 0;

		if (iph->protocol == IPPROTO_TCP_ && !bpf_skb_load_bytes(skb, hdr + 12, &doff, 1))
			hdr += (doff >> 4) * 4;
		else if (iph->protocol == IPPROTO_UDP_)
			hdr += 8;
		wire += (__u64)(segs - 1) * hdr;
	}
	count(RC_PACKETS, segs > 1 ? segs : 1);
	count(RC_BYTES, wire);

	bpf_spin_lock(&r->lock);
	if (!r->started) {
		/* Both timers start at the first packet (phase 0). */
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
		lf_step(&r->lf, p, now, vq_at(r->vq_bytes, p->rate_Bps, t > r->vq_stamp_ns ? t - r->vq_stamp_ns : 0));
	}
	r->vq_bytes = vq_at(r->vq_bytes, p->rate_Bps, now > r->vq_stamp_ns ? now - r->vq_stamp_ns : 0) + wire;
	r->vq_stamp_ns = now;
	r->lf.lambda += wire; /* every packet, before any buffer check (reference code) */
	code = r->lf.code;
	bpf_spin_unlock(&r->lock);

	if (!iph)
		return TC_ACT_OK;
	tos = iph->tos;
	cur = tos & 3;
	if (cur == 0) {
		count(RC_NOT_ECT, 1); /* RFC 3168: Not-ECT is never marked */
		return TC_ACT_OK;
	}
	next = cur;
	if (code > cur) {
		__u16 old_word = bpf_htons(((__u16)(*(__u8 *)iph) << 8) | tos);
		__u8 new_tos = (tos & ~3) | (__u8)code;
		__u16 new_word = bpf_htons(((__u16)(*(__u8 *)iph) << 8) | new_tos);

		if (bpf_skb_store_bytes(skb, ETH_HLEN + offsetof(struct iphdr, tos), &new_tos, 1, 0) == 0 &&
		    bpf_l3_csum_replace(skb, ETH_HLEN + offsetof(struct iphdr, check), old_word, new_word, 2) == 0) {
			next = (__u8)code;
			count(RC_MARKED, 1);
		}
	}
	count(next == 1 ? RC_CODES_LOW : next == 2 ? RC_CODES_HIGH : RC_CODES_OVERLOAD, 1);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
