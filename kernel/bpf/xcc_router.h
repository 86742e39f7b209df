/* The congestion-header family's router module on a real egress, the frame every protocol shares
 * (docs/KERNEL-BPF.md, "The congestion header"): a tc (TCX) egress program that finds the
 * protocol's forward option in each TCP segment (xcc_parse.h), runs the protocol's law on it
 * under one lock with the interval's timers and the virtual queue at the configured rate
 * (vcp_router.bpf.c), and rewrites the option's feedback words in place, fixing the TCP checksum
 * incrementally (bpf_l4_csum_replace: TCP options lie inside the checksum). The timers roll over
 * on packet arrival, as the VCP router's do: their ends run first, then the packet (RCP keeps
 * its ends on the timer grid and reads the queue at them, XCC_TICK_VQ).
 *
 * tc egress runs before the qdisc, so a packet gets the feedback in force when it is queued
 * (racc's `stamp = "arrival"`; XCC-Linux's modules in NF_IP_POST_ROUTING do the same).
 *
 * The including object defines before the include:
 *   XCC_ROUTER_PARAMS  its router_config entry
 *   XCC_LAW_STATE      its law and timers, kept under the lock
 *   XCC_OPT, XCC_OPT_EXID_, XCC_OPT_LEN_   the forward option (xcc_opt.h)
 *   XCC_RW_OFF, XCC_RW_WORDS   the rewritten 32-bit words: offset in the option (even, so that
 *                      they lie on the checksum's 16-bit words), 1 or 2 of them
 *   XCC_ROUTER_PROG    the program's name
 *   XCC_CAPACITY(p)    (optional) the capacity in IP bytes per second, p->capacity_Bps if not set
 *   XCC_AFTER_CLOSE(r, p)  (optional) work after an interval closed, outside the lock (JetMax's
 *                      ring walk with bpf_loop, which the lock does not allow)
 *   XCC_TICK_VQ        (optional) the timers get the virtual queue itself (xcc_law_tick_vq: its
 *                      bytes just after the last packet, and that packet's time), not its bytes
 *                      at this packet's arrival, so that they can read it at their own instants
 * and after it the hooks whose prototypes follow. */
#ifndef RACC_XCC_ROUTER_H
#define RACC_XCC_ROUTER_H

#include "xcc_opt.h"
#include "xcc_parse.h"

#ifndef XCC_CAPACITY
#define XCC_CAPACITY(p) ((p)->capacity_Bps)
#endif

#define TC_ACT_OK 0
#define ETH_P_IP 0x0800
#define ETH_HLEN 14
#define IPPROTO_TCP_ 6

struct router_state {
	struct bpf_spin_lock lock;
	XCC_LAW_STATE law;
	__u64 vq_bytes;
	__u64 vq_stamp_ns;
	__u64 started;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, XCC_ROUTER_PARAMS);
} router_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct router_state);
} router SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XRC_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* A forward header the protocol's senders could have written (1), else 0 (counted malformed). */
static __always_inline int xcc_law_check(const XCC_OPT *opt, __u64 s);
/* The header's H_rtt, µs (0: none yet). */
static __always_inline __u64 xcc_law_rtt(const XCC_OPT *opt);
/* Under the lock. The first packet; then, per packet, the timers that ran out (returns how many
 * control intervals closed); then the packet of `s` IP bytes, `opt` its header when `valid`:
 * returns 1 with `opt`'s rewritable words changed when the feedback is lowered. */
static __always_inline void xcc_law_start(XCC_LAW_STATE *l, const XCC_ROUTER_PARAMS *p, __u64 now);
#ifdef XCC_TICK_VQ
static __always_inline int xcc_law_tick_vq(XCC_LAW_STATE *l, const XCC_ROUTER_PARAMS *p, __u64 now, __u64 vq_bytes,
					   __u64 vq_stamp_ns);
#else
static __always_inline int xcc_law_tick(XCC_LAW_STATE *l, const XCC_ROUTER_PARAMS *p, __u64 now, __u64 q);
#endif
static __always_inline int xcc_law_packet(XCC_LAW_STATE *l, const XCC_ROUTER_PARAMS *p, __u64 s, int valid,
					  XCC_OPT *opt);

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

/* One rewritten word of the option at `at`, its checksum fixed. */
static __always_inline int xcc_rewrite(struct __sk_buff *skb, __u32 csum_at, __u32 at, __u32 old, __u32 new)
{
	if (old == new)
		return 0;
	if (bpf_skb_store_bytes(skb, at, &new, 4, 0) || bpf_l4_csum_replace(skb, csum_at, old, new, 4))
		return -1;
	return 1;
}

SEC("tc")
int XCC_ROUTER_PROG(struct __sk_buff *skb)
{
	__u32 zero = 0;
	XCC_ROUTER_PARAMS *p = bpf_map_lookup_elem(&router_config, &zero);
	struct router_state *r = bpf_map_lookup_elem(&router, &zero);
	void *data = (void *)(long)skb->data, *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph;
	struct tcphdr *th;
	XCC_OPT opt = {};
	__u32 old[2] = {}, *w = (__u32 *)((__u8 *)&opt + XCC_RW_OFF);
	__u64 now = bpf_ktime_get_ns(), s, q;
	__u32 ihl, tcp_off = 0, segs, at, csum_at;
	int off = -1, valid = 0, rewrite = 0, closed = 0, i, rc, failed = 0, wrote = 0;
	__u8 len = 0;

	if (!p || !r)
		return TC_ACT_OK;
	if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;
	iph = (void *)(eth + 1);
	if ((void *)(iph + 1) > data_end)
		return TC_ACT_OK;
	s = bpf_ntohs(iph->tot_len); /* IP bytes: what the shaper meters (size table) */
	segs = *(volatile __u32 *)&skb->gso_segs;
	ihl = iph->ihl * 4;
	count(XRC_PACKETS, 1);
	count(XRC_BYTES, s);
	if (segs > 1) {
		count(XRC_GSO, 1);
		s = skb->len - ETH_HLEN; /* every segment's bytes, headers approximated by one */
	} else if (iph->protocol == IPPROTO_TCP_ && ihl >= sizeof(*iph)) {
		tcp_off = ETH_HLEN + ihl;
		th = (void *)iph + ihl;
		if ((void *)(th + 1) <= data_end && s > ihl + th->doff * 4) {
			off = xcc_find_opt(skb, tcp_off, th->doff, XCC_OPT_EXID_);
			if (off >= 0) {
				len = off >> 8;
				off &= 0xff;
			}
			if (off >= 0 && len == XCC_OPT_LEN_ && !bpf_skb_load_bytes(skb, tcp_off + off, &opt, sizeof(opt))) {
				if (xcc_law_check(&opt, s))
					valid = 1;
				else
					count(XRC_MALFORMED, 1);
			} else if (off >= 0) {
				count(XRC_MALFORMED, 1);
			}
		}
	}
	old[0] = w[0];
	if (XCC_RW_WORDS > 1)
		old[1] = w[1];

	bpf_spin_lock(&r->lock);
	if (!r->started) {
		r->started = 1;
		r->vq_stamp_ns = now;
		xcc_law_start(&r->law, p, now);
	}
	q = vq_at(r->vq_bytes, XCC_CAPACITY(p), now > r->vq_stamp_ns ? now - r->vq_stamp_ns : 0);
#ifdef XCC_TICK_VQ
	closed = xcc_law_tick_vq(&r->law, p, now, r->vq_bytes, r->vq_stamp_ns);
#else
	closed = xcc_law_tick(&r->law, p, now, q);
#endif
	rewrite = xcc_law_packet(&r->law, p, s, valid, &opt);
	r->vq_bytes = q + s;
	r->vq_stamp_ns = now;
	bpf_spin_unlock(&r->lock);

	if (closed) {
#ifdef XCC_AFTER_CLOSE
		XCC_AFTER_CLOSE(r, p);
#endif
		count(XRC_INTERVALS, closed);
	}
	if (valid) {
		count(XRC_DATA, 1);
		if (!xcc_law_rtt(&opt))
			count(XRC_NO_RTT, 1);
	}
	if (!rewrite || off < 0)
		return TC_ACT_OK;
	csum_at = tcp_off + offsetof(struct tcphdr, check);
	at = tcp_off + off + XCC_RW_OFF;
	for (i = 0; i < XCC_RW_WORDS && i < 2; i++) {
		rc = xcc_rewrite(skb, csum_at, at + 4 * i, old[i], w[i]);
		if (rc < 0)
			failed = 1;
		else if (rc > 0)
			wrote = 1;
	}
	if (failed)
		count(XRC_CSUM_FAIL, 1);
	else if (wrote)
		count(XRC_WRITTEN, 1);
	return TC_ACT_OK;
}

#endif
