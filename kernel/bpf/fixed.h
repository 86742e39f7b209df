/* Fixed-point arithmetic for the kernel twins of racc-proto's laws (docs/KERNEL-BPF.md).
 * BPF has no floating point, so every real number is an unsigned integer scaled by 2^shift.
 * Pure functions of their arguments: the same header builds into the BPF objects and into the
 * user-space library the differential tests call (tests/python/test_kernel_bpf_laws.py).
 * The includer defines __u64/__u32 (vmlinux.h in BPF, <linux/types.h> in user space). */
#ifndef RACC_FIXED_H
#define RACC_FIXED_H

#ifndef RACC_INLINE
#define RACC_INLINE static inline __attribute__((always_inline))
#endif

/* Ratios (rtt/t_p, rtt/t_d, α, β, σ) are Q24; windows are Q20 packets; exponents Q30. */
#define FX_RATIO_SHIFT 24
#define FX_ONE_RATIO (1ULL << FX_RATIO_SHIFT)
#define FX_CWND_SHIFT 20
#define FX_ONE_CWND (1ULL << FX_CWND_SHIFT)
#define FX_EXP_SHIFT 30
#define FX_ONE_EXP (1ULL << FX_EXP_SHIFT)
/* ln 2 in Q30: round(0.6931471805599453 * 2^30). */
#define FX_LN2_Q30 744261118ULL

/* a/b in Q24 (a, b in the same unit; b > 0, a < 2^39). */
RACC_INLINE __u64 fx_ratio(__u64 a, __u64 b)
{
	return b ? (a << FX_RATIO_SHIFT) / b : 0;
}

RACC_INLINE __u64 fx_min(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

RACC_INLINE __u64 fx_max(__u64 a, __u64 b)
{
	return a > b ? a : b;
}

/* 2^y − 1 for y ≥ 0 in Q30, result Q30: 2^y = 2^⌊y⌋ · e^(frac·ln 2), the exponential by its
 * Taylor series to the 10th power (frac·ln 2 < 0.694: truncation below 3e-9). ⌊y⌋ ≤ 30. */
RACC_INLINE __u64 fx_exp2m1_q30(__u64 y)
{
	__u64 ip = y >> FX_EXP_SHIFT;
	__u64 z = ((y & (FX_ONE_EXP - 1)) * FX_LN2_Q30) >> FX_EXP_SHIFT;
	__u64 term = z, sum = z;
	__u64 i;

	if (ip > 30)
		ip = 30;
#pragma unroll
	for (i = 2; i <= 10; i++) {
		term = ((term * z) >> FX_EXP_SHIFT) / i;
		sum += term;
	}
	return ((FX_ONE_EXP + sum) << ip) - FX_ONE_EXP;
}

#endif
