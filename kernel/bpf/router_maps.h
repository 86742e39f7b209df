/* The maps of a router module with one output port (docs/KERNEL-BPF.md): its configuration
 * `lf_config` (the loader writes it), its port's state `router`, and its counters; and the
 * metering every packet gets first. VCP's (vcp_router.bpf.c), shared by the chain family's
 * (dpcp_router.bpf.c). The includer defines ROUTER_PARAMS (the configuration's type), struct
 * router_state and COUNTER_SLOTS; its first two counters are the packets and the bytes. BPF only. */
#ifndef RACC_ROUTER_MAPS_H
#define RACC_ROUTER_MAPS_H

#include "counters.h"
#include "tc_ip.h"

#define ROUTER_PACKETS 0
#define ROUTER_BYTES 1

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, ROUTER_PARAMS);
} lf_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct router_state);
} router SEC(".maps");

static __always_inline ROUTER_PARAMS *router_params(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&lf_config, &zero);
}

static __always_inline struct router_state *router_port(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&router, &zero);
}

/* A packet leaving by the port: its frames (*segs, a GSO packet's several) and wire bytes
 * counted, the bytes returned; *iph its IPv4 header, NULL for another protocol. */
static __always_inline __u64 router_meter(struct __sk_buff *skb, struct iphdr **iph, __u32 *segs)
{
	__u32 n = *(volatile __u32 *)&skb->gso_segs; /* one plain context load (the verifier wants it so) */
	__u64 wire;

	*iph = tc_ipv4(skb);
	wire = tc_wire_bytes(skb, *iph, n);
	count_n(ROUTER_PACKETS, n > 1 ? n : 1);
	count_n(ROUTER_BYTES, wire);
	*segs = n;
	return wire;
}

#endif
