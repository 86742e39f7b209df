/* JetMax's router in fixed point (Zhang, Leonard and Loguinov 2008, reconstructed in
 * docs/PROTOCOLS.md §7), the kernel twin of racc-proto's `jetmax/router.rs` (`arrival`,
 * `JetMaxRouter::on_tick`, `slow_window`, `fair_share`, `encode_rate`) with the same constants
 * (`JetMaxRouterParams::default`):
 *
 *   per packet: Y += s; a forward JetMax packet naming this router or none: ipt ≤ Δ: S += s,
 *     Ninv += ipt; else S' += s, Ninv' += ipt, max_ipt = max(max_ipt, ipt)     (3 additions, J1)
 *   every Δ (10 ms), T the interval just ended (racc: Δ exactly):
 *     m = the farthest interval back whose slow packets still reach now (max_ipt ≥ (j − 1)Δ),
 *     D = max(mΔ, their largest ipt) (Δ without them)
 *     u = (Y − S − S')/T ; b = S/T + ΣS'/D ; y = u + b ; N = Ninv/T + ΣNinv'/D
 *     F = (S = S' = 0 and y < γC) ? +inf : max(F_min, (γC − u)/max(N, 1))          (γ 0.95)
 *   per forward JetMax packet: F < feedback: feedback = F, fb_id = this router
 *
 * The sums are whole bytes and ns in both (racc's f64 holds them exactly); F is Q8 B/s, N Q24,
 * γ Q24. The ring of past intervals holds at most JETMAX_RING of them (racc: max_window/Δ, 200 by
 * default); the loader refuses more. */
#ifndef RACC_JETMAX_LAW_H
#define RACC_JETMAX_LAW_H

#include "rcp_law.h"

#define JETMAX_RING 256
#define JETMAX_Q 8
#define JETMAX_F 24
#define JETMAX_INF (~0ULL)

/* Every field a __u64 (the loader passes a list of integers). */
struct jetmax_router_params {
	__u64 id; /* this port's JetMax id, 1..65535 */
	__u64 gamma_q24; /* target utilisation γ (§7: 0.95) */
	__u64 delta_ns; /* control interval Δ (§7: 10 ms) */
	__u64 f_min_Bps; /* F_min: f_min (1) packets/s of the port's packet size */
	__u64 ring_len; /* intervals the slow-flow window may reach back (max_window/Δ; 1 for "delta") */
	__u64 slow_above_ns; /* packets with a larger ipt are slow (Δ; 2^32 for "delta": none) */
	__u64 capacity_Bps; /* C, IP bytes per second */
};

struct jetmax_interval {
	__u64 s_slow;
	__u64 ninv_slow;
	__u64 max_ipt;
};

struct jetmax_router_law {
	__u64 y_bytes; /* the running interval's Y, S, Ninv */
	__u64 s_bytes;
	__u64 ninv_ns;
	struct jetmax_interval cur; /* and its slow sums */
	struct jetmax_interval ring[JETMAX_RING];
	__u64 head;
	__u64 filled;
	__u64 f_q8; /* F, Q8 B/s; JETMAX_INF: unconstrained */
	__u32 f_wire; /* F as the header field */
	__u32 pad;
	__u64 n_q24; /* reported */
	__u64 window_ns;
	/* The closed interval's sums (Y, S, Ninv, S'), kept for `jetmax_fair`. */
	__u64 last_t_ns;
	__u64 last_y;
	__u64 last_s;
	__u64 last_ninv;
	__u64 last_s_slow;
	/* The ring walk: running sums back to j, and the slow window's reach m and sums. */
	__u64 walk_s;
	__u64 walk_n;
	__u64 walk_max;
	__u64 win_m;
	__u64 win_s;
	__u64 win_n;
	__u64 win_max;
};

RACC_INLINE void jetmax_init(struct jetmax_router_law *l)
{
	l->f_q8 = JETMAX_INF;
	l->f_wire = JETMAX_NO_LIMIT;
}

/* `arrival`: a packet of `s` bytes; `counted` when it is forward JetMax data naming this router
 * or none. */
RACC_INLINE void jetmax_arrival(struct jetmax_router_law *l, const struct jetmax_router_params *p, __u64 s,
				int counted, __u64 ipt)
{
	l->y_bytes += s;
	if (!counted)
		return;
	if (ipt > p->slow_above_ns) {
		l->cur.s_slow += s;
		l->cur.ninv_slow += ipt;
		if (ipt > l->cur.max_ipt)
			l->cur.max_ipt = ipt;
	} else {
		l->s_bytes += s;
		l->ninv_ns += ipt;
	}
}

/* `on_departure`: the header's (feedback, fb_id) after this router; returns 1 when lowered. */
RACC_INLINE int jetmax_stamp(const struct jetmax_router_law *l, const struct jetmax_router_params *p,
			     __u32 *feedback, __u16 *fb_id)
{
	if (l->f_wire >= *feedback)
		return 0;
	*feedback = l->f_wire;
	*fb_id = (__u16)p->id;
	return 1;
}

/* The end of an interval of `t_ns` (`on_tick` after the first), in three steps so that the BPF
 * router walks the ring outside its lock with bpf_loop (one verification of the step, not one
 * per interval): `jetmax_close` (the interval into the ring, its sums kept, the running ones
 * restarted), `jetmax_walk_step` for j = 1..filled (`slow_window`), `jetmax_fair` (F). */
RACC_INLINE void jetmax_close(struct jetmax_router_law *l, const struct jetmax_router_params *p, __u64 t_ns)
{
	__u64 len = p->ring_len < 1 || p->ring_len > JETMAX_RING ? 1 : p->ring_len;

	l->ring[l->head & (JETMAX_RING - 1)] = l->cur;
	l->head = (l->head + 1) % len;
	l->filled = l->filled + 1 < len ? l->filled + 1 : len;
	l->last_t_ns = t_ns;
	l->last_y = l->y_bytes;
	l->last_s = l->s_bytes;
	l->last_ninv = l->ninv_ns;
	l->last_s_slow = l->cur.s_slow;
	l->y_bytes = 0;
	l->s_bytes = 0;
	l->ninv_ns = 0;
	l->cur.s_slow = 0;
	l->cur.ninv_slow = 0;
	l->cur.max_ipt = 0;
	l->win_m = 0;
	l->win_s = 0;
	l->win_n = 0;
	l->win_max = 0;
	l->walk_s = 0;
	l->walk_n = 0;
	l->walk_max = 0;
}

/* Interval j back (1: the one just closed): into the running sums, and the window reaches it
 * when its slow packets still reach now (max_ipt ≥ (j − 1)Δ). Returns 1 past the last one. */
RACC_INLINE int jetmax_walk_step(struct jetmax_router_law *l, const struct jetmax_router_params *p, __u64 j)
{
	__u64 len = p->ring_len < 1 || p->ring_len > JETMAX_RING ? 1 : p->ring_len;
	struct jetmax_interval *e;
	__u64 idx;

	if (j < 1 || j > l->filled)
		return 1;
	idx = (l->head + len - j) % len;
	asm volatile("" : "+r"(idx)); /* keep the mask below: the verifier needs it, clang drops it */
	e = &l->ring[idx & (JETMAX_RING - 1)];
	l->walk_s += e->s_slow;
	l->walk_n += e->ninv_slow;
	if (e->max_ipt > l->walk_max)
		l->walk_max = e->max_ipt;
	if (e->max_ipt > 0 && e->max_ipt >= (j - 1) * p->delta_ns) {
		l->win_m = j;
		l->win_s = l->walk_s;
		l->win_n = l->walk_n;
		l->win_max = l->walk_max;
	}
	return 0;
}

/* F from the closed interval and the slow window. */
RACC_INLINE void jetmax_fair(struct jetmax_router_law *l, const struct jetmax_router_params *p)
{
	__u64 t = l->last_t_ns, delta = p->delta_ns, m = l->win_m, other, u, b, y, n, gc, f, w;

	if (!t || !delta)
		return;
	w = m ? (m * delta > l->win_max ? m * delta : l->win_max) : delta;
	l->window_ns = w;
	other = l->last_y - l->last_s - l->last_s_slow;
	u = rcp_muldiv(other << JETMAX_Q, 1000000000ULL, t); /* Q8 B/s */
	b = rcp_muldiv(l->last_s << JETMAX_Q, 1000000000ULL, t) + rcp_muldiv(l->win_s << JETMAX_Q, 1000000000ULL, w);
	y = u + b;
	n = rcp_muldiv(l->last_ninv, 1ULL << JETMAX_F, t) + rcp_muldiv(l->win_n, 1ULL << JETMAX_F, w);
	l->n_q24 = n;
	gc = (p->gamma_q24 * (p->capacity_Bps << JETMAX_Q)) >> JETMAX_F;
	if (l->last_s == 0 && l->win_s == 0 && y < gc) {
		l->f_q8 = JETMAX_INF; /* nobody to constrain here */
		l->f_wire = JETMAX_NO_LIMIT;
		return;
	}
	f = gc > u ? rcp_muldiv(gc - u, 1ULL << JETMAX_F, n > (1ULL << JETMAX_F) ? n : 1ULL << JETMAX_F) : 0;
	if (f < (p->f_min_Bps << JETMAX_Q))
		f = p->f_min_Bps << JETMAX_Q;
	l->f_q8 = f;
	/* `encode_rate`: rounded, at least 1, below "no limit". */
	f = (f + (1ULL << (JETMAX_Q - 1))) >> JETMAX_Q;
	l->f_wire = f < 1 ? 1 : f > JETMAX_NO_LIMIT - 1 ? JETMAX_NO_LIMIT - 1 : (__u32)f;
}

/* The sender (`JetMaxRate::update`): x += τ(F − x), B/s of IP bytes (F finite). */
RACC_INLINE __u64 jetmax_rate_step(__u64 x, __u64 f, __u64 tau_q24)
{
	__u64 d = f > x ? f - x : x - f;

	d = rcp_muldiv(d, tau_q24, 1ULL << JETMAX_F);
	return f > x ? x + d : x - d;
}

#endif
