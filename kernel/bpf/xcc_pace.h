/* The rate senders of the congestion-header family (RCP, JetMax: racc's infinite window and a
 * pacing rate): TCP's internal pacing at the rate (sk_pacing_status = SK_PACING_NEEDED: this
 * kernel has no fq qdisc) and a window that does not bind. The rate is IP bytes per second and
 * TCP's pacing meters payload (skb->len of the queued segment), so it paces at rate·payload/s
 * with the segment's payload less the forward option. The window is 4 rate·RTT, at least 16
 * packets. Loss keeps the rate (`Response::Keep`), so ssthresh keeps the window. */
#ifndef RACC_XCC_PACE_H
#define RACC_XCC_PACE_H

static __always_inline void xcc_pace(struct sock *sk, struct tcp_sock *tp, __u64 rate, __u64 s, __u64 opt_len,
				     __u64 rtt_us)
{
	__u64 payload = s > 40 + opt_len ? s - 40 - opt_len : 1, w;

	sk->sk_pacing_rate = rate * payload / (s ? s : 1);
	sk->sk_pacing_status = SK_PACING_NEEDED;
	w = 4 * (rate * rtt_us / 1000000) / (s ? s : 1);
	if (w < 16)
		w = 16;
	if (w > tp->snd_cwnd_clamp)
		w = tp->snd_cwnd_clamp;
	tp->snd_cwnd = (__u32)w;
}

static __always_inline __u32 xcc_keep_window(struct tcp_sock *tp)
{
	return tp->snd_cwnd > 2 ? tp->snd_cwnd : 2;
}

#endif
