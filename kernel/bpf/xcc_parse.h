/* Finding a congestion-header option in a TCP header from a tc program (the routers): the
 * options area is copied to the stack and walked (NOP, EOL, length-prefixed), at most 40 bytes.
 * Returns the option's length byte << 8 | its offset from the start of the TCP header, or -1
 * (none of `exid`). BPF only (needs the skb helpers). A global function: the verifier checks its
 * loop once, not once per path of the program that calls it. */
#ifndef RACC_XCC_PARSE_H
#define RACC_XCC_PARSE_H

#include "xcc_opt.h"

__noinline int xcc_find_opt(struct __sk_buff *skb, __u32 tcp_off, __u32 doff, __u32 exid)
{
	__u8 buf[64] = {};
	__u32 olen = doff * 4, i = 0;
	int n;

	if (olen <= 20 || olen > 60)
		return -1;
	olen = (olen - 21) & 63; /* the options' length less one, so that the verifier sees [1, 40] */
	if (olen > 39)
		return -1;
	olen += 1;
	if (bpf_skb_load_bytes(skb, tcp_off + 20, buf, olen))
		return -1;
	for (n = 0; n < 40; n++) {
		__u8 kind, l;

		if (i >= olen || i >= 40)
			break;
		kind = buf[i & 63];
		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= olen)
			break;
		l = buf[(i + 1) & 63];
		if (l < 2)
			break;
		if (kind == XCC_OPT_KIND && l >= 4 && i + 3 < olen && buf[(i + 2) & 63] == (exid >> 8) &&
		    buf[(i + 3) & 63] == (exid & 0xff)) {
			return (int)((__u32)l << 8 | (20 + i));
		}
		i += l;
	}
	return -1;
}

#endif
