/* What the programs on IPv4 packets share (docs/KERNEL-BPF.md): at tc, the header at the fixed
 * offset of an Ethernet frame, the bytes a packet is on the wire, and a rewrite of its ECN
 * field; at tc and cgroup_skb, the packet's full socket. BPF only. */
#ifndef RACC_TC_IP_H
#define RACC_TC_IP_H

#define ETH_P_IP 0x0800
#define ETH_HLEN 14
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17

/* The full socket `skb` belongs to, or NULL (none, or a request or time-wait socket). */
static __always_inline struct bpf_sock *skb_full_sock(struct __sk_buff *skb)
{
	struct bpf_sock *sk = skb->sk;

	return sk ? bpf_sk_fullsock(sk) : NULL;
}

/* The IPv4 header of an Ethernet frame, or NULL (another protocol, or too short). */
static __always_inline struct iphdr *tc_ipv4(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph = (void *)(eth + 1);

	if ((void *)(iph + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return NULL;
	return iph;
}

/* The bytes `skb` is on the wire: skb->len at tc egress (Ethernet header included), plus the
 * headers of the further segments of a GSO packet, which leaves as `segs` frames each with its
 * own headers (what the qdisc meters, qdisc_pkt_len_init). */
static __always_inline __u64 tc_wire_bytes(struct __sk_buff *skb, struct iphdr *iph, __u32 segs)
{
	__u64 wire = skb->len;
	__u32 hdr;
	__u8 doff = 0;

	if (!iph || segs <= 1)
		return wire;
	hdr = ETH_HLEN + iph->ihl * 4;
	if (iph->protocol == IPPROTO_TCP_ && !bpf_skb_load_bytes(skb, hdr + 12, &doff, 1))
		hdr += (doff >> 4) * 4;
	else if (iph->protocol == IPPROTO_UDP_)
		hdr += 8;
	return wire + (__u64)(segs - 1) * hdr;
}

/* The packet's ECN field set to `code`, the header checksum updated (RFC 1624): 0 when written.
 * `iph` is not to be used after (the store may move the packet). */
static __always_inline int tc_write_ecn(struct __sk_buff *skb, struct iphdr *iph, __u8 code)
{
	__u8 tos = iph->tos, new_tos = (tos & ~3) | (code & 3);
	__u16 old_word = bpf_htons(((__u16)(*(__u8 *)iph) << 8) | tos);
	__u16 new_word = bpf_htons(((__u16)(*(__u8 *)iph) << 8) | new_tos);

	if (bpf_skb_store_bytes(skb, ETH_HLEN + offsetof(struct iphdr, tos), &new_tos, 1, 0))
		return -1;
	return bpf_l3_csum_replace(skb, ETH_HLEN + offsetof(struct iphdr, check), old_word, new_word, 2) ? -1 : 0;
}

#endif
