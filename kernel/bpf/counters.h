/* The per-CPU counters an object keeps (a PERCPU_ARRAY the loader sums; their names come from
 * python/racc/kernel/ in slot order). The includer defines COUNTER_SLOTS. BPF only. */
#ifndef RACC_COUNTERS_H
#define RACC_COUNTERS_H

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COUNTER_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count_n(__u32 slot, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &slot);

	if (c && n)
		*c += n;
}

static __always_inline void count(__u32 slot)
{
	count_n(slot, 1);
}

#endif
