// SPDX-License-Identifier: GPL-2.0
/* TCP/VCP's end hosts on the kernel's own TCP (docs/KERNEL-BPF.md; racc-proto `vcp/window.rs`,
 * `vcp/echo.rs`): one object, so that its programs share the socket storage.
 *
 * - `racc_vcp` (struct_ops tcp_congestion_ops): MI/AI/MD (VCP-DCCP A3–A5) on the code the ACK
 *   echoed, in fixed point (`vcp_law.h`); a loss is TCP's halving, an RTO the kernel's one
 *   packet, then the laws resume without slow start (as `VcpWindow`).
 * - sender egress (tc): data of `racc_vcp` sockets leaves with ECN 01 (the kernel clears the
 *   ECN bits a TCP socket asks for through IP_TOS, so the codepoint is written on the wire).
 * - receiver ingress (cgroup_skb): the code of every arriving data packet, kept per socket as
 *   the set of codes seen since the last ACK (an atomic OR; max taken when the ACK is written).
 * - sockops: the receiver writes the largest code since its last ACK into each ACK as the echo
 *   option (kind 253, ExID, 1 byte); the sender parses it into socket storage with the ACK
 *   number it belongs to, so the controller uses an echo only for the very ACK that carried it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "common.h"
#include "vcp_law.h"
#include "cc_window.h"

#define RACC_CC racc_vcp

/* Per-socket storage shared by sockops, the ingress program and the controller. */
struct vcp_sk {
	__u32 seen_mask; /* receiver: bit c set when a data packet arrived with code c since the last ACK */
	__u32 echoing; /* receiver: a coded data packet arrived once: every ACK carries the option */
	__u32 echo_ack; /* sender: the ACK number whose option gave echo_code */
	__u32 echo_code;
	__u32 echo_valid;
};

/* The controller's private state (inet_csk_ca, 104 bytes). */
struct vcp_ca {
	struct vcp_law_state law;
	__u32 last_set; /* the snd_cwnd this controller last wrote */
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vcp_sk);
} sk_store SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vcp_law_params);
} law_config SEC(".maps");

#define COUNTER_SLOTS HC_MAX
#include "counters.h"

/* The sender's egress: ECN 01 on this controller's data. */
#define ECT1_SENT HC_SENT_ECT1
#include "ect1_egress.h"

static __always_inline struct vcp_law_params *law_params(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&law_config, &zero);
}

/* ---- the controller ---------------------------------------------------------------------- */

static __always_inline struct vcp_ca *ca_of(struct sock *sk)
{
	return (struct vcp_ca *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline void set_cwnd(struct tcp_sock *tp, struct vcp_ca *ca)
{
	ca->last_set = cc_set_cwnd(tp, &ca->law.cwnd);
}

SEC("struct_ops/racc_vcp_init")
void BPF_PROG(racc_vcp_init, struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct vcp_ca *ca = ca_of(sk);
	struct vcp_law_params *p = law_params();
	__u64 iw = p && p->iw ? p->iw : 2;

	ca->law.cwnd = iw << FX_CWND_SHIFT; /* racc's iw (2 packets), not Linux's 10 */
	ca->law.hold_until_us = 0;
	ca->law.ai_until_us = 0;
	ca->law.mds = 0;
	set_cwnd(tp, ca);
}

SEC("struct_ops/racc_vcp_cong_avoid")
void BPF_PROG(racc_vcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct vcp_ca *ca = ca_of(sk);
	struct vcp_law_params *p = law_params();
	struct vcp_sk *st;
	__u64 rtt_us, mds;
	__u32 code;
	int held;

	if (!p)
		return;
	count(HC_ACKS);
	/* The kernel moved the window itself (recovery's exit, an undo, an RTO): resume from it. */
	if (tp->snd_cwnd != ca->last_set)
		ca->law.cwnd = (__u64)tp->snd_cwnd << FX_CWND_SHIFT;
	st = bpf_sk_storage_get(&sk_store, sk, 0, 0);
	if (!st || !st->echo_valid || st->echo_ack != ack) {
		count(HC_ECHO_ABSENT); /* no code for this ACK: ignored, the window unchanged */
		return;
	}
	st->echo_valid = 0;
	code = st->echo_code & 3;
	rtt_us = tp->srtt_us >> 3; /* SRTT, else t_p (`VcpWindow::rtt_s`) */
	if (!rtt_us)
		rtt_us = p->t_p_us;
	rtt_us = vcp_rtt_clock(p, rtt_us);
	mds = ca->law.mds;
	held = code == VCP_CODE_OVERLOAD && tp->tcp_mstamp < ca->law.hold_until_us;
	vcp_on_code(&ca->law, p, code, acked, rtt_us, tp->tcp_mstamp);
	if (code == VCP_CODE_LOW)
		count(HC_MI);
	else if (code == VCP_CODE_NONE)
		count(HC_BLEACHED);
	else if (held)
		count(HC_HELD);
	else if (ca->law.mds != mds)
		count(HC_MD);
	else
		count(HC_AI); /* 10, or 11 within AI-for-one-rtt */
	set_cwnd(tp, ca);
}

/* A loss (or an ECN-Echo, not VCP's signal but TCP's): NewReno's halving (`Response::Halve`). */
SEC("struct_ops/racc_vcp_ssthresh")
__u32 BPF_PROG(racc_vcp_ssthresh, struct sock *sk)
{
	count(HC_LOSS);
	return cc_halved((struct tcp_sock *)sk);
}

CC_STRUCT_OPS(racc_vcp, racc_vcp, "racc_vcp");

/* ---- the receiver's ingress: remember each data packet's code ------------------------- */

SEC("cgroup_skb/ingress")
int vcp_host_ingress(struct __sk_buff *skb)
{
	struct iphdr iph;
	__u8 doff_byte;
	__u32 ihl, code;
	struct bpf_sock *sk;
	struct vcp_sk *st;

	if (bpf_skb_load_bytes(skb, 0, &iph, sizeof(iph)) || iph.version != 4 || iph.protocol != IPPROTO_TCP_)
		return 1;
	code = iph.tos & 3;
	if (!code)
		return 1;
	ihl = iph.ihl * 4;
	if (bpf_skb_load_bytes(skb, ihl + 12, &doff_byte, 1))
		return 1;
	if (bpf_ntohs(iph.tot_len) <= ihl + (doff_byte >> 4) * 4)
		return 1; /* no payload: not data */
	sk = skb_full_sock(skb);
	if (!sk)
		return 1;
	st = bpf_sk_storage_get(&sk_store, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st)
		return 1;
	__sync_fetch_and_or(&st->seen_mask, 1U << code);
	st->echoing = 1;
	count(HC_DATA_CODED);
	return 1;
}

/* ---- sockops: write the echo (receiver), parse it (sender); echo_sockops.h ----------- */

/* The largest code since the last ACK (`VcpEcho::fill_ack`); 0 if none came. */
static __always_inline __u8 echo_take(struct vcp_sk *st)
{
	__u32 mask = __sync_lock_test_and_set(&st->seen_mask, 0);

	return mask & 8 ? 3 : mask & 4 ? 2 : mask & 2 ? 1 : 0;
}

/* No room in this ACK: the codes wait for the next one. */
static __always_inline void echo_untake(struct vcp_sk *st, __u8 code)
{
	if (code)
		__sync_fetch_and_or(&st->seen_mask, 1U << code);
}

static __always_inline int echo_byte_ok(__u8 code)
{
	return code <= 3;
}

#define ECHO_SK struct vcp_sk
#define ECHO_WRITTEN HC_ECHO_WRITTEN
#define ECHO_MALFORMED HC_ECHO_MALFORMED
#include "echo_sockops.h"

char LICENSE[] SEC("license") = "GPL";
