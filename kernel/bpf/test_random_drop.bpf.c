// SPDX-License-Identifier: GPL-2.0
/* Test only (tests/python/test_kernel_dpcp_run.py): a lossy link (DCP-EW §III.D's wireless
 * errors), a tc egress program dropping TCP data segments at random, each with probability
 * lf_config[0] / 2^32, independent of any queue. Counts: data seen, dropped. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define TC_ACT_OK 0
#define TC_ACT_SHOT 2

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lf_config SEC(".maps"); /* the loader's configuration map (one integer: the drop threshold) */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

SEC("tc")
int random_drop(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph = (void *)(eth + 1);
	__u32 zero = 0, one = 1;
	__u64 *p, *c;

	if ((void *)(iph + 1) > data_end || eth->h_proto != bpf_htons(0x0800) || iph->protocol != 6)
		return TC_ACT_OK;
	if (bpf_ntohs(iph->tot_len) <= iph->ihl * 4 + 20)
		return TC_ACT_OK; /* no payload (the TCP header is 20 bytes at least) */
	c = bpf_map_lookup_elem(&counters, &zero);
	if (c)
		*c += 1;
	p = bpf_map_lookup_elem(&lf_config, &zero);
	if (!p || bpf_get_prandom_u32() >= *p)
		return TC_ACT_OK;
	c = bpf_map_lookup_elem(&counters, &one);
	if (c)
		*c += 1;
	return TC_ACT_SHOT;
}

char LICENSE[] SEC("license") = "GPL";
