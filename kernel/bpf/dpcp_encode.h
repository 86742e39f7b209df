/* Alg. 2 at a router (MPCP §3.3), the kernel twin of racc-proto's `dpcp/encode.rs` (`encode`),
 * generalised digit by digit to chains of n as there: a chain carries the largest load factor
 * of the path, with one 2-bit flag of state per flow. */
#ifndef RACC_DPCP_ENCODE_H
#define RACC_DPCP_ENCODE_H

#include "dpcp_law.h"

#define DPCP_FLAG_MSP_LOW 0 /* this router's LF is worse so far: it owns the rest of the chain */
#define DPCP_FLAG_MSP_HIGH 1 /* upstream is worse: leave the rest alone */
#define DPCP_FLAG_MSP_EQ 2 /* equal so far: the next digit decides (the initial flag) */

/* The new ECN bits of a packet showing `x2` at position `pos`, this port's level `port`
 * (n digits); `flag` is the flow's. Not-ECT, and a position beyond the chain, stay. */
RACC_INLINE __u32 dpcp_encode(__u32 port, __u32 n, __u32 x2, __u32 pos, __u8 *flag)
{
	__u32 mine, last;

	if (x2 == 0 || pos >= n)
		return x2;
	mine = lf_digit(port, n, pos);
	last = pos == n - 1;
	if (pos == 0) {
		if (mine > x2) {
			*flag = DPCP_FLAG_MSP_LOW;
			return mine;
		}
		if (n > 1)
			*flag = mine < x2 ? DPCP_FLAG_MSP_HIGH : DPCP_FLAG_MSP_EQ;
		return x2;
	}
	switch (*flag) {
	case DPCP_FLAG_MSP_LOW:
		return mine;
	case DPCP_FLAG_MSP_HIGH:
		return x2;
	default:
		if (mine > x2) {
			if (!last)
				*flag = DPCP_FLAG_MSP_LOW;
			return mine;
		}
		if (!last && mine < x2)
			*flag = DPCP_FLAG_MSP_HIGH;
		return x2;
	}
}

#endif
