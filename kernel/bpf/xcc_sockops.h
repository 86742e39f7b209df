/* The congestion-header family's end hosts, the part every protocol shares (docs/KERNEL-BPF.md,
 * "The congestion header"): the socket storage, the counters, and the sockops program that
 * reserves room for the options, writes the forward header on data and the echo on ACKs, and
 * parses both. Included by each protocol's host object (xcp_host.bpf.c, rcp_host.bpf.c), which
 * defines before the include:
 *
 *   XCC_SK            its socket storage (struct with __u64 s, __u32 sender, __u32 echoing)
 *   XCC_PARAMS        its law_config entry
 *   XCC_OPT, XCC_OPT_EXID_, XCC_OPT_LEN_      the forward option (xcc_opt.h)
 *   XCC_ECHO, XCC_ECHO_EXID_, XCC_ECHO_LEN_   the echo option
 *
 * and after it the four laws of its option (prototypes below): the sender's fields of the
 * forward header, the receiver's record of it, the receiver's echo, the sender's use of it. */
#ifndef RACC_XCC_SOCKOPS_H
#define RACC_XCC_SOCKOPS_H

#include "xcc_opt.h"

#define ENOMSG_ 42

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, XCC_SK);
} sk_store SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, XCC_PARAMS);
} law_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XHC_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 slot)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &slot);

	if (c)
		*c += 1;
}

/* Sender: the protocol's fields of a data segment's forward header (kind, length, ExID set). */
static __always_inline void xcc_fill_data(struct bpf_sock_ops *skops, XCC_SK *st, XCC_OPT *data);
/* Receiver: a forward header of the right length arrived. */
static __always_inline void xcc_on_data(XCC_SK *st, const XCC_OPT *data);
/* Receiver: the echo's fields; after it is written, xcc_echo_sent. */
static __always_inline void xcc_fill_echo(XCC_SK *st, XCC_ECHO *echo);
static __always_inline void xcc_echo_sent(XCC_SK *st);
/* Sender: an echo of the right length arrived (counts XHC_APPLIED or XHC_UNROUTED). */
static __always_inline void xcc_on_echo(XCC_SK *st, const XCC_ECHO *echo);

static __always_inline void xcc_parse(struct bpf_sock_ops *skops)
{
	XCC_OPT data = { .kind = XCC_OPT_KIND, .len = 4, .exid = bpf_htons(XCC_OPT_EXID_) };
	XCC_ECHO echo = { .kind = XCC_OPT_KIND, .len = 4, .exid = bpf_htons(XCC_ECHO_EXID_) };
	struct bpf_sock *sk = skops->sk;
	XCC_SK *st;
	long n;

	if (!sk)
		return;
	n = bpf_load_hdr_opt(skops, &echo, sizeof(echo), 0);
	if (n != -ENOMSG_) {
		st = bpf_sk_storage_get(&sk_store, sk, 0, 0);
		if (n != XCC_ECHO_LEN_) {
			count(XHC_ECHO_MALFORMED); /* our kind and ExID, a wrong length: ignored */
		} else if (st && st->sender && st->s) {
			count(XHC_ECHO_PARSED);
			xcc_on_echo(st, &echo);
		}
	}
	n = bpf_load_hdr_opt(skops, &data, sizeof(data), 0);
	if (n == -ENOMSG_)
		return;
	if (n != XCC_OPT_LEN_) {
		count(XHC_DATA_MALFORMED);
		return;
	}
	st = bpf_sk_storage_get(&sk_store, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!st)
		return;
	xcc_on_data(st, &data);
	st->echoing = 1; /* the header arrived once: every ACK carries the echo */
}

static __always_inline int xcc_has_payload(struct bpf_sock_ops *skops)
{
	struct tcphdr *th = skops->skb_data;

	if ((void *)(th + 1) > skops->skb_data_end)
		return 0;
	return skops->skb_len > (__u32)th->doff * 4;
}

SEC("sockops")
int xcc_sockops(struct bpf_sock_ops *skops)
{
	struct bpf_sock *sk = skops->sk;
	XCC_SK *st;
	XCC_OPT data = {};
	XCC_ECHO echo = {};
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
		/* The sender's room on every segment (so that the MSS leaves it: data segments are then
		 * shorter by the option, as racc's `mss_for(cfg, header)`), the receiver's on every one too. */
		if (st->sender)
			room += XCC_OPT_LEN_;
		if (st->echoing)
			room += XCC_ECHO_LEN_;
		if (room)
			bpf_reserve_hdr_opt(skops, room, 0);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		if (!sk)
			break;
		st = bpf_sk_storage_get(&sk_store, sk, 0, 0);
		if (!st)
			break;
		if (st->sender && xcc_has_payload(skops)) {
			data.kind = XCC_OPT_KIND;
			data.len = XCC_OPT_LEN_;
			data.exid = bpf_htons(XCC_OPT_EXID_);
			xcc_fill_data(skops, st, &data);
			if (bpf_store_hdr_opt(skops, &data, sizeof(data), 0) == 0)
				count(XHC_HDR_WRITTEN);
		}
		if (st->echoing) {
			echo.kind = XCC_OPT_KIND;
			echo.len = XCC_ECHO_LEN_;
			echo.exid = bpf_htons(XCC_ECHO_EXID_);
			xcc_fill_echo(st, &echo);
			if (bpf_store_hdr_opt(skops, &echo, sizeof(echo), 0) == 0) {
				xcc_echo_sent(st);
				count(XHC_ECHO_WRITTEN);
			}
		}
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		xcc_parse(skops);
		break;
	}
	return 1;
}

#endif
