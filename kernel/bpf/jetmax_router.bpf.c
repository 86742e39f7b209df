// SPDX-License-Identifier: GPL-2.0
/* The JetMax router module on a real egress (docs/PROTOCOLS.md §7; racc-proto
 * `jetmax/router.rs`), in the congestion-header frame (xcc_router.h): every packet counts into Y,
 * forward JetMax data naming this router (or none) into S and Ninv (jetmax_law.h); every Δ the
 * fair share F; each JetMax data segment whose feedback is above F leaves with F and this
 * router's id (the words cur_id|fb_id and feedback rewritten in place). The interval rolls over
 * on the first packet after it ends and is divided by its actual length (racc: Δ at its
 * instant); the ring walk and F follow outside the lock (XCC_AFTER_CLOSE). The first interval starts at the first packet (racc: at a random phase). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xcc_opt.h"
#include "jetmax_law.h"

struct jetmax_router_state {
	struct jetmax_router_law law;
	__u64 last_tick_ns;
	__u64 next_tick_ns;
};

#define XCC_ROUTER_PARAMS struct jetmax_router_params
#define XCC_LAW_STATE struct jetmax_router_state
#define XCC_OPT struct jetmax_opt
#define XCC_OPT_EXID_ JETMAX_OPT_EXID
#define XCC_OPT_LEN_ JETMAX_OPT_LEN
#define XCC_RW_OFF JETMAX_OPT_RW_OFF
#define XCC_RW_WORDS 2
#define XCC_ROUTER_PROG jetmax_router_egress
#define XCC_AFTER_CLOSE jetmax_after_close
struct router_state;
static __always_inline void jetmax_after_close(struct router_state *r, const struct jetmax_router_params *p);
#include "xcc_router.h"

struct walk_ctx {
	struct jetmax_router_law *l;
	const struct jetmax_router_params *p;
};

static long walk_cb(__u64 i, void *ctx)
{
	struct walk_ctx *c = ctx;

	return jetmax_walk_step(c->l, c->p, i + 1);
}

/* The slow window and F, outside the lock: only the CPU that closed the interval writes them
 * (the next close is Δ later); a packet meanwhile is stamped with the F before (a u32). */
static __always_inline void jetmax_after_close(struct router_state *r, const struct jetmax_router_params *p)
{
	struct walk_ctx c = { &r->law.law, p };

	bpf_loop(JETMAX_RING, walk_cb, &c, 0);
	jetmax_fair(&r->law.law, p);
}

static __always_inline int xcc_law_check(const struct jetmax_opt *opt, __u64 s)
{
	return 1; /* any ipt, id and feedback a sender may write */
}

static __always_inline __u64 xcc_law_rtt(const struct jetmax_opt *opt)
{
	return bpf_ntohl(opt->rtt_us);
}

static __always_inline void xcc_law_start(struct jetmax_router_state *r, const struct jetmax_router_params *p,
					  __u64 now)
{
	jetmax_init(&r->law);
	r->last_tick_ns = now;
	r->next_tick_ns = now + (p->delta_ns ? p->delta_ns : 1);
}

static __always_inline int xcc_law_tick(struct jetmax_router_state *r, const struct jetmax_router_params *p,
					__u64 now, __u64 q)
{
	if (now < r->next_tick_ns)
		return 0;
	jetmax_close(&r->law, p, now - r->last_tick_ns);
	r->last_tick_ns = now;
	r->next_tick_ns = now + (p->delta_ns ? p->delta_ns : 1);
	return 1;
}

static __always_inline int xcc_law_packet(struct jetmax_router_state *r, const struct jetmax_router_params *p,
					  __u64 s, int valid, struct jetmax_opt *opt)
{
	__u16 cur_id = bpf_ntohs(opt->cur_id), fb_id = bpf_ntohs(opt->fb_id);
	__u32 feedback = bpf_ntohl(opt->feedback);

	jetmax_arrival(&r->law, p, s, valid && (cur_id == p->id || cur_id == 0), valid ? bpf_ntohl(opt->ipt_ns) : 0);
	if (!valid || !jetmax_stamp(&r->law, p, &feedback, &fb_id))
		return 0;
	opt->feedback = bpf_htonl(feedback);
	opt->fb_id = bpf_htons(fb_id);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
