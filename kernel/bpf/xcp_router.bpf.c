// SPDX-License-Identifier: GPL-2.0
/* The XCP router module on a real egress (Katabi et al. 2002 §3.5, App. A; racc-proto
 * `xcp/router.rs`, window form): a tc (TCX) egress program that reads each data packet's XCP
 * option (xcc_opt.h), counts it into the interval's sums, and lowers its H_feedback in place to
 * this router's share, fixing the TCP checksum incrementally (bpf_l4_csum_replace: TCP options
 * lie inside the checksum). The control interval and the persistent-queue window roll over on
 * packet arrival, as the VCP router's timers do (docs/KERNEL-BPF.md): their ends run first,
 * then the packet. The queue is the virtual queue at the configured rate (vcp_router.bpf.c).
 *
 * Departure is arrival here: tc egress runs before the qdisc, so a packet gets its feedback
 * from the budget in force when it is queued (racc-proto writes it at dequeue). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xcc_opt.h"
#include "xcc_parse.h"
#include "xcp_law.h"

#define TC_ACT_OK 0
#define ETH_P_IP 0x0800
#define ETH_HLEN 14
#define IPPROTO_TCP_ 6

struct router_state {
	struct bpf_spin_lock lock;
	struct xcp_router_law law;
	__u64 last_tick_ns;
	__u64 next_ctrl_ns;
	__u64 next_q_ns;
	__u64 q_persistent; /* bytes: the least queue arrivals saw in the last window */
	__u64 q_running_min;
	__u64 vq_bytes;
	__u64 vq_stamp_ns;
	__u64 started;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xcp_router_params);
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
int xcp_router_egress(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct xcp_router_params *p = bpf_map_lookup_elem(&router_config, &zero);
	struct router_state *r = bpf_map_lookup_elem(&router, &zero);
	void *data = (void *)(long)skb->data, *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph;
	struct tcphdr *th;
	struct xcp_opt opt;
	__u64 now = bpf_ktime_get_ns(), s, rtt = 0, cwnd = 0, q, wait;
	__u32 ihl, tcp_off, segs;
	__s64 header = 0, out = 0;
	int off = -1, valid = 0, rewrite = 0, closed = 0;
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
			off = xcc_find_opt(skb, tcp_off, th->doff, XCP_OPT_EXID);
			if (off >= 0) {
				len = off >> 8;
				off &= 0xff;
			}
			if (off >= 0 && len == XCP_OPT_LEN &&
			    !bpf_skb_load_bytes(skb, tcp_off + off, &opt, sizeof(opt))) {
				rtt = bpf_ntohl(opt.rtt_us);
				cwnd = bpf_ntohl(opt.cwnd);
				header = (__s32)bpf_ntohl(opt.feedback);
				/* A sender's H_rtt is its SRTT (≤ 1 s here) and its window at least the packet. */
				if (rtt > XCP_D_MAX_US || (rtt && cwnd < s))
					count(XRC_MALFORMED, 1);
				else
					valid = 1;
			} else if (off >= 0) {
				count(XRC_MALFORMED, 1);
			}
		}
	}

	bpf_spin_lock(&r->lock);
	if (!r->started) {
		r->started = 1;
		r->last_tick_ns = now;
		r->next_ctrl_ns = now + p->initial_d_us * 1000;
		r->next_q_ns = r->next_ctrl_ns;
		r->q_running_min = ~0ULL;
		r->law.d_us = p->initial_d_us;
		r->vq_stamp_ns = now;
	}
	q = vq_at(r->vq_bytes, p->capacity_Bps, now > r->vq_stamp_ns ? now - r->vq_stamp_ns : 0);
	/* `XcpRouter::on_tick`: the queue window first, then the control, then the next window. */
	if (now >= r->next_q_ns)
		r->q_persistent = r->q_running_min < q ? r->q_running_min : q;
	if (now >= r->next_ctrl_ns) {
		xcp_control(&r->law, p, now - r->last_tick_ns, r->q_persistent);
		r->last_tick_ns = now;
		r->next_ctrl_ns = now + r->law.d_us * 1000;
		closed = 1;
	}
	if (now >= r->next_q_ns) {
		/* d − queue/C, at least 1 ms (App. A). */
		wait = p->capacity_Bps ? q * 1000000ULL / p->capacity_Bps : 0;
		wait = r->law.d_us > wait + XCP_D_MIN_US ? r->law.d_us - wait : XCP_D_MIN_US;
		r->next_q_ns = now + wait * 1000;
		r->q_running_min = ~0ULL;
	}
	if (q < r->q_running_min)
		r->q_running_min = q;
	if (valid && rtt) {
		xcp_arrival(&r->law, rtt, s, cwnd);
		out = xcp_departure(&r->law, rtt, s, cwnd, header, p->budget_rule);
		if (out < -(__s64)XCC_FB_INF)
			out = -(__s64)XCC_FB_INF; /* the field's range */
		rewrite = out < header;
	} else {
		xcp_arrival_other(&r->law, s);
		if (valid && header > 0) {
			out = 0; /* no RTT estimate: no share, never more than 0 (`on_departure`) */
			rewrite = 1;
		}
	}
	r->vq_bytes = q + s;
	r->vq_stamp_ns = now;
	bpf_spin_unlock(&r->lock);

	if (closed)
		count(XRC_INTERVALS, 1);
	if (valid) {
		count(XRC_XCP_DATA, 1);
		if (!rtt)
			count(XRC_NO_RTT, 1);
	}
	if (rewrite) {
		__u32 old_fb = opt.feedback, new_fb = bpf_htonl((__u32)(__s32)out);
		__u32 at = ETH_HLEN + ihl + off + XCP_OPT_FB_OFF;

		if (bpf_skb_store_bytes(skb, at, &new_fb, 4, 0) == 0 &&
		    bpf_l4_csum_replace(skb, ETH_HLEN + ihl + offsetof(struct tcphdr, check), old_fb, new_fb, 4) == 0)
			count(XRC_FB_WRITTEN, 1);
		else
			count(XRC_CSUM_FAIL, 1);
	}
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
