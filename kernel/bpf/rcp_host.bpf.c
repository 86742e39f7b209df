// SPDX-License-Identifier: GPL-2.0
/* TCP/RCP's end hosts on the kernel's own TCP (docs/KERNEL-BPF.md; racc-proto `rcp/sender.rs`,
 * `xcc/echo.rs`): one object, so that its programs share the socket storage.
 *
 * - `racc_rcp` (struct_ops tcp_congestion_ops with cong_control, so that it owns the window and
 *   the pacing rate on every ACK, recovery included): one packet until a rate is known, then the
 *   rate fed back paced by TCP's internal pacing (sk_pacing_status = SK_PACING_NEEDED: this
 *   kernel has no fq qdisc) and a window that does not bind (4 rate·RTT, at least 16 packets:
 *   racc's is infinite). Loss never changes the rate (`Response::Keep`).
 * - sockops, sender: every data segment carries the RCP option (rate = no limit, H_rtt = SRTT µs);
 *   every echo's rate applies at once (`RcpSender::on_wire_arrival`); "no limit" changes nothing.
 * - sockops, receiver: the rate of the latest data packet goes back in every ACK (`HeaderEcho`). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "xcc_opt.h"

#define ENOMSG_ 42

struct rcp_sk {
	__u64 rate; /* sender: the rate fed back, B/s of IP bytes (0: none yet) */
	__u64 s; /* sender: IP bytes of a full segment */
	__u32 sender;
	__u32 echo_rate; /* receiver: the latest data packet's rate */
	__u32 echoing;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct rcp_sk);
} sk_store SEC(".maps");

struct rcp_host_params {
	__u64 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rcp_host_params);
} law_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RHC_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 slot)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &slot);

	if (c)
		*c += 1;
}

/* ---- the controller ---------------------------------------------------------------------- */

SEC("struct_ops/racc_rcp_init")
void BPF_PROG(racc_rcp_init, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct rcp_sk *st = bpf_sk_storage_get(&sk_store, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);

	if (!st)
		return;
	st->sender = 1;
	st->s = (__u64)tp->mss_cache + tp->tcp_header_len + 20;
	tp->snd_cwnd = 1; /* one packet carries the first request; its answer sets the rate */
	sk->sk_pacing_status = SK_PACING_NEEDED; /* TCP's own pacing timer (no fq here) */
}

SEC("struct_ops/racc_rcp_cong_control")
void BPF_PROG(racc_rcp_cong_control, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct rcp_sk *st = bpf_sk_storage_get(&sk_store, sk, 0, 0);
	__u64 s, payload, pace, bdp, w;

	count(RHC_ACKS);
	if (!st || !st->sender)
		return;
	s = (__u64)tp->mss_cache + tp->tcp_header_len + 20;
	st->s = s;
	if (!st->rate) {
		tp->snd_cwnd = 1;
		return;
	}
	/* The rate is in IP bytes; TCP's pacing meters payload (skb->len of the queued segment), so
	 * pace at rate·payload/s with the segment's payload less the RCP option. */
	payload = s > 40 + RCP_OPT_LEN ? s - 40 - RCP_OPT_LEN : 1;
	pace = st->rate * payload / (s ? s : 1);
	sk->sk_pacing_rate = pace;
	sk->sk_pacing_status = SK_PACING_NEEDED;
	bdp = st->rate * (tp->srtt_us >> 3) / 1000000;
	w = 4 * bdp / (s ? s : 1);
	if (w < 16)
		w = 16;
	if (w > tp->snd_cwnd_clamp)
		w = tp->snd_cwnd_clamp;
	tp->snd_cwnd = (__u32)w;
}

/* Loss never changes the rate (docs/PROTOCOLS.md §6): the window is the controller's anyway. */
SEC("struct_ops/racc_rcp_ssthresh")
__u32 BPF_PROG(racc_rcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	count(RHC_LOSS);
	return tp->snd_cwnd > 2 ? tp->snd_cwnd : 2;
}

SEC("struct_ops/racc_rcp_undo_cwnd")
__u32 BPF_PROG(racc_rcp_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	return tp->snd_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops racc_rcp = {
	.init = (void *)racc_rcp_init,
	.cong_control = (void *)racc_rcp_cong_control,
	.ssthresh = (void *)racc_rcp_ssthresh,
	.undo_cwnd = (void *)racc_rcp_undo_cwnd,
	.name = "racc_rcp",
};

/* ---- sockops ---------------------------------------------------------------------------- */

static __always_inline void parse(struct bpf_sock_ops *skops)
{
	struct rcp_opt data = { .kind = XCC_OPT_KIND, .len = 4, .exid = bpf_htons(RCP_OPT_EXID) };
	struct rcp_echo_opt echo = { .kind = XCC_OPT_KIND, .len = 4, .exid = bpf_htons(RCP_ECHO_EXID) };
	struct bpf_sock *sk = skops->sk;
	struct rcp_sk *st;
	__u32 rate;
	long n;

	if (!sk)
		return;
	n = bpf_load_hdr_opt(skops, &echo, sizeof(echo), 0);
	if (n != -ENOMSG_) {
		st = bpf_sk_storage_get(&sk_store, sk, 0, 0);
		rate = bpf_ntohl(echo.rate);
		if (n != RCP_ECHO_LEN) {
			count(RHC_ECHO_MALFORMED);
		} else if (st && st->sender) {
			count(RHC_ECHO_PARSED);
			if (rate == RCP_NO_LIMIT_ || rate == 0) {
				count(RHC_UNROUTED); /* no RCP router on the path: nothing changes */
			} else if (st->rate != rate) {
				st->rate = rate;
				count(RHC_RATE_UPDATES);
			}
		}
	}
	n = bpf_load_hdr_opt(skops, &data, sizeof(data), 0);
	if (n == -ENOMSG_)
		return;
	if (n != RCP_OPT_LEN) {
		count(RHC_DATA_MALFORMED);
		return;
	}
	st = bpf_sk_storage_get(&sk_store, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st)
		return;
	st->echo_rate = bpf_ntohl(data.rate);
	st->echoing = 1;
}

static __always_inline int has_payload(struct bpf_sock_ops *skops)
{
	struct tcphdr *th = skops->skb_data;

	if ((void *)(th + 1) > skops->skb_data_end)
		return 0;
	return skops->skb_len > (__u32)th->doff * 4;
}

SEC("sockops")
int rcp_sockops(struct bpf_sock_ops *skops)
{
	struct bpf_sock *sk = skops->sk;
	struct rcp_sk *st;
	struct rcp_opt data;
	struct rcp_echo_opt echo;
	__u32 room = 0;

	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
							 BPF_SOCK_OPS_PARSE_UNKNOWN_HDR_OPT_CB_FLAG |
							 BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		if (!sk)
			break;
		st = bpf_sk_storage_get(&sk_store, sk, 0, 0);
		if (!st)
			break;
		if (st->sender)
			room += RCP_OPT_LEN;
		if (st->echoing)
			room += RCP_ECHO_LEN;
		if (room)
			bpf_reserve_hdr_opt(skops, room, 0);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		if (!sk)
			break;
		st = bpf_sk_storage_get(&sk_store, sk, 0, 0);
		if (!st)
			break;
		if (st->sender && has_payload(skops)) {
			data.kind = XCC_OPT_KIND;
			data.len = RCP_OPT_LEN;
			data.exid = bpf_htons(RCP_OPT_EXID);
			data.rate = bpf_htonl(RCP_NO_LIMIT_); /* as much as the path allows */
			data.rtt_us = bpf_htonl(skops->srtt_us >> 3);
			if (bpf_store_hdr_opt(skops, &data, sizeof(data), 0) == 0)
				count(RHC_HDR_WRITTEN);
		}
		if (st->echoing) {
			echo.kind = XCC_OPT_KIND;
			echo.len = RCP_ECHO_LEN;
			echo.exid = bpf_htons(RCP_ECHO_EXID);
			echo.rate = bpf_htonl(st->echo_rate);
			if (bpf_store_hdr_opt(skops, &echo, sizeof(echo), 0) == 0)
				count(RHC_ECHO_WRITTEN);
		}
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		parse(skops);
		break;
	}
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
