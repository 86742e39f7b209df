/* Fixed point with a per-value exponent, for the congestion-header family's per-interval
 * coefficients (XCP's ξ_p, ξ_n), which span many orders of magnitude: a value is m·2^e with a
 * 24-bit mantissa m, so a per-packet product m·x (x < 2^40) fits 64 bits. Pure functions: the
 * same header builds into the BPF objects and the user-space library of the differential tests.
 * Relative error of one `fxq_div`: below 2^-23. */
#ifndef RACC_XCC_FX_H
#define RACC_XCC_FX_H

#ifndef RACC_INLINE
#define RACC_INLINE static inline __attribute__((always_inline))
#endif

struct fxq {
	__u64 m;
	__s64 e;
};

/* Significant bits of x (0 for 0), without branches (each step's test is an addition's carry):
 * the verifier walks one path, not 2^6. */
RACC_INLINE __s64 fx_bits(__u64 x)
{
	__u64 n = 0, t;

	t = ((x >> 32) + 0xffffffffULL) >> 32 << 5; /* 32 if x ≥ 2^32 */
	x >>= t;
	n += t;
	t = ((x >> 16) + 0xffffULL) >> 16 << 4;
	x >>= t;
	n += t;
	t = ((x >> 8) + 0xffULL) >> 8 << 3;
	x >>= t;
	n += t;
	t = ((x >> 4) + 0xfULL) >> 4 << 2;
	x >>= t;
	n += t;
	t = ((x >> 2) + 0x3ULL) >> 2 << 1;
	x >>= t;
	n += t;
	t = ((x >> 1) + 0x1ULL) >> 1;
	x >>= t;
	n += t;
	return (__s64)(n + x);
}

/* num/den · 2^e0 as m·2^e: the denominator cut to 32 bits, the numerator spread over 63, the
 * quotient (at least 2^30) cut to 24 bits. 0 if either is 0. */
RACC_INLINE struct fxq fxq_div(__u64 num, __u64 den, __s64 e0)
{
	struct fxq r = { 0, 0 };
	__s64 bn, bd, bq;
	__u64 q;

	if (!num || !den)
		return r;
	r.e = e0;
	bn = fx_bits(num);
	bd = fx_bits(den);
	if (bd > 32) {
		den >>= (bd - 32); /* a smaller denominator, a larger quotient: the exponent falls */
		r.e -= bd - 32;
	}
	num <<= (63 - bn);
	r.e -= 63 - bn;
	q = num / den;
	bq = fx_bits(q);
	if (bq > 24) {
		q >>= (bq - 24);
		r.e += bq - 24;
	}
	r.m = q;
	return r;
}

/* a / den. */
RACC_INLINE struct fxq fxq_over(struct fxq a, __u64 den)
{
	return fxq_div(a.m, den, a.e);
}

/* ⌊a·x⌋ for x < 2^40, saturating at 2^62. */
RACC_INLINE __u64 fxq_mul(struct fxq a, __u64 x)
{
	__u64 p = a.m * x;

	if (!p)
		return 0;
	if (a.e >= 0) {
		if (a.e >= 62 || fx_bits(p) + a.e > 62)
			return 1ULL << 62;
		return p << a.e;
	}
	if (a.e <= -64)
		return 0;
	return p >> (-a.e);
}

#endif
