//! JetMax's sender: a rate-based controller for the TCP transport (docs/PROTOCOLS.md §7
//! [reconstructed]). The transport paces data at `pacing_rate` = x (wire B/s) with an
//! infinite window and keeps its reliability (retransmission, RTO); the rate is the
//! controller's alone.
//!
//! ```text
//! every packet:     rtt_us = srtt, ipt_ns = s/x, cur_id = last fb_id (none before the first
//!                   update), fb_id = none, feedback = +inf (0xFFFF_FFFF)
//! start:            x = 1 packet per RTT (the SYN-ACK's sample; `initial_rtt` without one)
//! once per RTT:     x += τ(F_fb − x) ; cur_id = fb_id        (F_fb = +inf: keep x, cur_id = none)
//! ```
//!
//! - **Feedback** is read in `on_wire_arrival`, so that ACKs during the transport's fast
//!   recovery (which never reach `on_ack`) and REF answers still deliver it. The SYN-ACK's
//!   feedback is ignored: the handshake gives only the RTT (§7: its F is as stale as the
//!   routers' count of a flow that has not sent yet).
//! - **The first update** uses only feedback stamped on packets sent at least 2Δ after the
//!   first data packet, so that every router on the path has counted the flow over a full
//!   interval (§7's guards). Eligibility is read from the ACK's echoed timestamp (RFC 7323):
//!   the receiver echoes the earliest unacknowledged segment's send time, never a later one
//!   than the packet whose header it echoes, so ts_ecr ≥ first + 2Δ is conservative. The first
//!   update happens as soon as such an ACK arrives; later ones once per RTT (srtt, else the
//!   latest sample, else `initial_rtt`) with the latest feedback received.
//! - s is the full data packet's wire size, and s/x the pacing gap the transport keeps, so a
//!   flow's packets put Σipt = Δ into each router interval. A packet's ipt announces its flow
//!   until the next one; when the rate rises (the first update multiplies it by 10³ or more)
//!   the next packet comes before the last announcement ran out, and a router would count
//!   the flow twice until it did (once for the old packet, once for the new ones: F too low
//!   for everyone for up to one old ipt). So with `ipt = "presence"` (default
//!   [reconstructed]) each data packet carries only what it adds to the announced presence,
//!   max(0, now + s/x − announced_until), and the announcement runs to the later of the two:
//!   s/x exactly while the flow paces steadily, and Σipt = the time the flow was announced.
//!   `ipt = "gap"` is §7 literally, s/x on every packet.
//! - Until the first update x follows the RTT estimate (1 pkt/RTT): with the handshake off it
//!   is 1 packet per `initial_rtt` (100 ms) until the first sample.
//! - Loss: `Response::Keep` (JetMax is loss-free in steady state; the transport retransmits,
//!   the rate stands); a FIN announces the end of a finite flow.

use super::params::{Ipt, JetMaxParams};
use super::NO_ID;
use crate::cc::{Ack, CongestionControl, Response, SenderCtx, Signal};
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{CongHeader, Direction, Kind, Packet};
use crate::time::{secs, to_secs, Dur, Time, NEVER};

/// Bytes the JetMax header adds (docs/PROTOCOLS.md §1).
pub const HEADER_BYTES: u32 = 20;

/// JetMax's sending-rate controller.
#[derive(Clone, Debug)]
pub struct JetMaxRate {
    tau: f64,
    delta: Dur,
    ipt: Ipt,
    /// The flow's presence announced by its data packets' ipt runs to here.
    announced_until: Time,
    initial_rtt: Dur,
    /// Wire bytes of a full data packet (s).
    wire: f64,
    /// Sending rate x, wire B/s; `None` until the first update (then 1 pkt/RTT applies).
    x: Option<f64>,
    /// The RTT the start rate and the update period use.
    rtt: Dur,
    cur_id: u16,
    /// The latest eligible feedback (B/s field, u32::MAX = +inf) and the id that set it.
    fb: Option<(u32, u16)>,
    first_data: Option<Time>,
    next_update: Time,
    updates: u64,
    unconstrained_updates: u64,
}

impl JetMaxRate {
    /// A controller for data packets of `wire` bytes on the wire (headers included).
    /// `p` must be valid.
    pub fn new(p: &JetMaxParams, wire: u32) -> JetMaxRate {
        JetMaxRate {
            tau: p.tau,
            delta: secs(p.delta),
            ipt: p.ipt,
            announced_until: 0,
            initial_rtt: secs(p.initial_rtt),
            wire: wire.max(1) as f64,
            x: None,
            rtt: secs(p.initial_rtt),
            cur_id: NO_ID,
            fb: None,
            first_data: None,
            next_update: NEVER,
            updates: 0,
            unconstrained_updates: 0,
        }
    }

    /// The sending rate, wire B/s.
    pub fn rate(&self) -> f64 {
        self.x.unwrap_or(self.wire / to_secs(self.rtt.max(1)))
    }

    /// The bottleneck this flow names in its packets (0 = none).
    pub fn cur_id(&self) -> u16 {
        self.cur_id
    }

    pub fn updates(&self) -> u64 {
        self.updates
    }

    fn observe_rtt(&mut self, ctx: &SenderCtx) {
        self.rtt = ctx.srtt.or(ctx.latest_rtt).unwrap_or(self.initial_rtt).max(1);
    }

    /// x += τ(F − x), cur_id = fb_id; +inf keeps x and names no bottleneck.
    fn update(&mut self, now: Time) {
        let Some((f, id)) = self.fb else { return };
        self.updates += 1;
        if f == u32::MAX {
            self.unconstrained_updates += 1;
            self.cur_id = NO_ID;
        } else {
            let x = self.rate();
            self.x = Some(x + self.tau * (f as f64 - x));
            self.cur_id = id;
        }
        self.next_update = now.saturating_add(self.rtt);
    }
}

impl CongestionControl for JetMaxRate {
    fn window(&self) -> f64 {
        f64::INFINITY
    }

    fn set_window(&mut self, _window: f64, _ssthresh: f64) {}

    fn on_ack(&mut self, _ack: &Ack<'_>, ctx: &SenderCtx) {
        self.observe_rtt(ctx);
    }

    fn on_congestion(&mut self, _signal: Signal, _ctx: &SenderCtx) -> Response {
        Response::Keep
    }

    fn on_send(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        self.observe_rtt(ctx);
        if pkt.kind == Kind::Data && self.first_data.is_none() {
            self.first_data = Some(ctx.now);
        }
        let gap = (self.wire / self.rate() * 1e9).round().min(u32::MAX as f64) as Time;
        let ipt = match self.ipt {
            Ipt::Gap => gap,
            Ipt::Presence if pkt.kind == Kind::Data => {
                let end = ctx.now.saturating_add(gap);
                let added = end.saturating_sub(self.announced_until.max(ctx.now));
                self.announced_until = self.announced_until.max(end);
                added
            }
            Ipt::Presence => gap,
        } as u32;
        let rtt_us = ctx.srtt.map_or(0, |r| (r / 1000).min(u32::MAX as u64) as u32);
        pkt.cong = CongHeader::JetMax { rtt_us, ipt_ns: ipt, cur_id: self.cur_id, fb_id: NO_ID, feedback: u32::MAX };
    }

    fn on_wire_arrival(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        if pkt.dir != Direction::Return || !matches!(pkt.kind, Kind::Ack | Kind::Ref) {
            return;
        }
        let CongHeader::JetMax { feedback, fb_id, .. } = pkt.cong else { return };
        if self.fb.is_none() {
            // The first update: only feedback stamped on packets sent 2Δ after the first.
            let Some(first) = self.first_data else { return };
            let Some(h) = pkt.tcp_hdr() else { return };
            if h.ts_ecr < first.saturating_add(2 * self.delta) {
                return;
            }
            self.observe_rtt(ctx);
            self.fb = Some((feedback, fb_id));
            self.update(ctx.now);
            return;
        }
        self.fb = Some((feedback, fb_id));
    }

    fn header_bytes(&self) -> u32 {
        HEADER_BYTES
    }

    fn pacing_rate(&self) -> Option<f64> {
        Some(self.rate())
    }

    fn poll_timer(&self) -> Option<Time> {
        (self.next_update != NEVER).then_some(self.next_update)
    }

    fn on_timer(&mut self, ctx: &SenderCtx) {
        if ctx.now >= self.next_update {
            self.observe_rtt(ctx);
            self.update(ctx.now);
        }
    }

    fn announces_end(&self) -> bool {
        true
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("bottleneck_id", "", MetricValue::Gauge(self.cur_id as f64));
        out.put("rate_updates", "events", MetricValue::Count(self.updates));
        out.put("unconstrained_updates", "events", MetricValue::Count(self.unconstrained_updates));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TcpHeader;
    use crate::time::NS_PER_MS;

    const MS: Time = NS_PER_MS;

    fn ctx(now: Time, srtt: Option<Dur>) -> SenderCtx {
        SenderCtx { now, mss: 940, srtt, latest_rtt: srtt, ..Default::default() }
    }

    fn data() -> Packet {
        Packet::tcp(1, Kind::Data, 980, 940, TcpHeader::default())
    }

    fn ack(ts_ecr: Time, feedback: u32, fb_id: u16) -> Packet {
        let mut a = Packet::tcp(1, Kind::Ack, 60, 0, TcpHeader { ts_ecr, ..Default::default() });
        a.dir = Direction::Return;
        a.cong = CongHeader::JetMax { rtt_us: 0, ipt_ns: 0, cur_id: 0, fb_id, feedback };
        a
    }

    fn header(p: &Packet) -> (u32, u16, u16, u32) {
        match p.cong {
            CongHeader::JetMax { ipt_ns, cur_id, fb_id, feedback, .. } => (ipt_ns, cur_id, fb_id, feedback),
            _ => panic!("no JetMax header"),
        }
    }

    #[test]
    fn starts_at_one_packet_per_rtt_and_steps_tau_of_the_way_once_per_rtt() {
        let mut c = JetMaxRate::new(&JetMaxParams::default(), 1000);
        assert_eq!(c.window(), f64::INFINITY);
        // Handshake off, no sample: 1 packet per 100 ms = 10 000 B/s, ipt 100 ms.
        assert_eq!(c.rate(), 10_000.0);
        let rtt = 50 * MS;
        let mut p = data();
        c.on_send(&mut p, &ctx(0, Some(rtt)));
        assert_eq!(c.rate(), 20_000.0, "1 packet per 50 ms once the RTT is known");
        assert_eq!(header(&p), (50_000_000, NO_ID, NO_ID, u32::MAX));
        // Feedback stamped on the first packet (sent at 0 < 2Δ = 20 ms) is not eligible.
        c.on_wire_arrival(&mut ack(0, 1_000_000, 4), &ctx(50 * MS, Some(rtt)));
        assert_eq!((c.updates(), c.rate()), (0, 20_000.0));
        // A packet sent at 50 ms: its ACK (F = 1e6 B/s from router 4) updates at once.
        c.on_send(&mut data(), &ctx(50 * MS, Some(rtt)));
        c.on_wire_arrival(&mut ack(50 * MS, 1_000_000, 4), &ctx(100 * MS, Some(rtt)));
        let x1 = 20_000.0 + 0.55 * (1e6 - 20_000.0);
        assert_eq!((c.updates(), c.rate(), c.cur_id()), (1, x1, 4));
        assert_eq!(c.poll_timer(), Some(150 * MS));
        let mut p = data();
        c.on_send(&mut p, &ctx(101 * MS, Some(rtt)));
        assert_eq!(header(&p), ((1000.0 / x1 * 1e9).round() as u32, 4, NO_ID, u32::MAX));
        // Later feedback is just remembered until the timer; the timer steps once.
        c.on_wire_arrival(&mut ack(110 * MS, 2_000_000, 5), &ctx(140 * MS, Some(rtt)));
        c.on_timer(&ctx(149 * MS, Some(rtt)));
        assert_eq!(c.updates(), 1, "not due yet");
        c.on_timer(&ctx(150 * MS, Some(rtt)));
        let x2 = x1 + 0.55 * (2e6 - x1);
        assert_eq!((c.updates(), c.rate(), c.cur_id()), (2, x2, 5));
        // Within 1 % of a constant F, from below, after six steps towards it: (1 − τ)^6 = 0.0083.
        for k in 0..5 {
            c.on_timer(&ctx((200 + 50 * k) * MS, Some(rtt)));
        }
        assert!((c.rate() / 2e6 - 1.0).abs() < 0.01 && c.rate() < 2e6, "{}", c.rate());
        // +inf: keep x, name no bottleneck.
        let x = c.rate();
        c.on_wire_arrival(&mut ack(440 * MS, u32::MAX, 0), &ctx(445 * MS, Some(rtt)));
        c.on_timer(&ctx(450 * MS, Some(rtt)));
        assert_eq!((c.rate(), c.cur_id()), (x, NO_ID));
    }

    #[test]
    fn ipt_announces_presence_once_even_when_the_rate_rises() {
        let p = JetMaxParams::default();
        let (mut c, mut g) = (JetMaxRate::new(&p, 1000), JetMaxRate::new(&JetMaxParams { ipt: Ipt::Gap, ..p }, 1000));
        let rtt = Some(50 * MS);
        let ipt = |c: &mut JetMaxRate, now: Time| {
            let mut d = data();
            c.on_send(&mut d, &ctx(now, rtt));
            header(&d).0
        };
        assert_eq!((ipt(&mut c, 0), ipt(&mut g, 0)), (50_000_000, 50_000_000));
        // Sent on time: the full gap.
        assert_eq!((ipt(&mut c, 50 * MS), ipt(&mut g, 50 * MS)), (50_000_000, 50_000_000));
        // The rate rises to 1e6 B/s (s/x = 1 ms) at 60 ms: packets every 1 ms from 60 ms add
        // nothing until the announcement of the packet sent at 50 ms runs out at 100 ms, then
        // 1 ms each; Σipt = the time announced. "gap" says 1 ms on every packet.
        c.x = Some(1_000_000.0);
        g.x = Some(1_000_000.0);
        let sent: Vec<u32> = (60..=101).map(|k| ipt(&mut c, k * MS)).collect();
        assert!(sent[..40].iter().all(|&t| t == 0), "{sent:?}");
        assert_eq!(&sent[40..], &[1_000_000, 1_000_000], "then s/x again");
        assert_eq!(c.announced_until, 102 * MS);
        assert!((60..=101).map(|k| ipt(&mut g, k * MS)).all(|t| t == 1_000_000), "gap: s/x on every packet");
    }

    #[test]
    fn syn_ack_feedback_and_forward_packets_are_ignored_and_losses_keep_the_rate() {
        let mut c = JetMaxRate::new(&JetMaxParams::default(), 1000);
        let mut sa = ack(0, 5, 3);
        sa.kind = Kind::SynAck;
        c.on_wire_arrival(&mut sa, &ctx(50 * MS, Some(50 * MS)));
        c.on_send(&mut data(), &ctx(50 * MS, Some(50 * MS)));
        let mut fwd = ack(200 * MS, 5, 3);
        fwd.dir = Direction::Forward;
        c.on_wire_arrival(&mut fwd, &ctx(300 * MS, Some(50 * MS)));
        assert_eq!(c.updates(), 0);
        for s in [Signal::Loss, Signal::Timeout, Signal::EcnEcho, Signal::SynTimeout] {
            assert_eq!(c.on_congestion(s, &ctx(0, None)), Response::Keep);
        }
        assert!(c.announces_end());
        assert_eq!(c.header_bytes(), 20);
    }
}
