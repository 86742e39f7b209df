//! The chain window: DPCP/TPCP's window laws on the TCP NewReno transport (MPCP §3;
//! docs/PROTOCOLS.md §3), which DCP-EW keeps (DCP-EW §III.A; docs/PROTOCOLS.md §4). cwnd is held in
//! packets (f64) and exposed in bytes (× MSS), as VCP's (`vcp/window.rs`). DCP-EW changes two
//! things, the two type parameters of [`ChainWindow`]:
//!
//! - [`ChainOrder`]: how a data packet takes its chain position. [`TcpOrder`] (DPCP/TPCP): the
//!   flag flips per packet sent (Alg. 1 for n = 2, the checksum offset for n ≥ 3); DCP-EW: the
//!   IP ID's LSB (`dcpew/ordering.rs`).
//! - [`LossResponse`]: what a fast retransmit and an RTO do to cwnd. [`NewRenoLoss`]
//!   (DPCP/TPCP): TCP's halving; DCP-EW: the loss-differentiation bit map (`dcpew/window.rs`).
//!
//! The laws both share:
//! - **Sending** (MPCP §3.2): every data packet leaves at ECN 01 and takes its position,
//!   after the transport computed the checksum over the original fields. In VCP mode every
//!   packet is sent as an MSP. Retransmissions are positioned like any packet.
//! - **ACKs**: `on_wire_arrival` restores the ACK's seq/ack (its ack lies near the last data
//!   seq sent) before the transport reads it, reads the echoed code and the position the ACK
//!   carried, and runs the decoder; the transport's hook for that ACK then applies the action.
//! - **Growth** per acknowledged packet (k per ACK), from the saved level's upper bound
//!   [MPCP §3.1; ξ reconstructed]: `mi+ai`: cwnd += (1+ξ)^min(rtt/t_p, σ_MI) − 1 +
//!   α·min((rtt/t_p)², σ_AI)/cwnd; `vcp-like` (and VCP mode): the MI term alone in the low
//!   zone, the AI term alone in the high zone.
//! - **Overload**: the decoder's MD (0.43 on an MSP alone, β_k·cwnd_pre once the LSP
//!   arrives), VCP's hold and AI-for-one-rtt (docs/PROTOCOLS.md §2).
//! - **Fast recovery** is the TCP transport's (NewReno's, `tcp/recovery.rs`), around TCP's
//!   halving or the loss response's window; on its exit the chain laws resume without slow
//!   start [checked for VCP; same for DPCP, reconstructed].
//!
//! Choices [reconstructed]: growth and MD act on new ACKs; a duplicate ACK outside recovery
//! applies an MD (its echo is as fresh as any) but never grows; during fast recovery the
//! decoder keeps tracking positions and NewReno alone sets the window. An echo of 00 (the path
//! bleached the code) grows as TCP congestion avoidance, as VCP does.

use super::decode::{Action, Decoder, DecoderParams, Episode, Mode};
use super::levels::Zone;
use super::ordering::{undo, Anchor, Sequencer};
use super::params::{ChainLaws, DpcpParams, Growth};
use crate::cc::{Ack, CongestionControl, Response, SenderCtx, Signal};
use crate::endpoint::FlowConfig;
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{ecn, tcp_checksum, Kind, Packet};
use crate::time::{secs, to_secs, Dur, Time};
use crate::vcp::{mi_step, AiLaw, MdHold};

/// How a data packet takes its chain position (MPCP §3.2; DCP-EW §III.B).
pub trait ChainOrder: Clone + std::fmt::Debug + Send + 'static {
    /// Position the data packet `pkt` (its checksum already over the original fields) and put
    /// the position on the wire. `chains` false: VCP mode, the packet goes out as an MSP.
    fn stamp(&mut self, pkt: &mut Packet, chains: bool);
}

/// What a loss does to the window (docs/PROTOCOLS.md §3 "as VCP's"; §4 loss differentiation).
pub trait LossResponse: Clone + std::fmt::Debug + Send + 'static {
    /// Every decoded ACK echo: `overload` = the saved LF is in the overload zone (false for a
    /// bleached echo).
    #[inline]
    fn on_echo(&mut self, _overload: bool) {}

    /// The dupthresh-th duplicate ACK at `now` with `cwnd` packets: the window (packets) fast
    /// recovery runs around and returns to, or `None` for TCP's halving from the flight. A cut
    /// that is the episode's MD tells the decoder ([`Decoder::note_md`]).
    fn on_fast_retransmit(&mut self, now: Time, cwnd: f64, rtt: Dur, decoder: &mut Decoder) -> Option<f64>;

    /// An RTO: true keeps cwnd, false is TCP's (cwnd = 1 packet).
    fn keeps_cwnd_on_rto(&mut self) -> bool;

    /// The loss response's own counters, for the results.
    fn metrics(&self, _out: &mut dyn MetricSink) {}
}

/// DPCP/TPCP's position: a per-packet counter, imposed by Alg. 1 (n = 2) or the checksum
/// offset (n ≥ 3) [MPCP §3.2, §5].
#[derive(Clone, Debug)]
pub struct TcpOrder {
    seq: Sequencer,
    chains_before: bool,
}

impl TcpOrder {
    pub fn new(n: u8) -> TcpOrder {
        TcpOrder { seq: Sequencer::new(n), chains_before: true }
    }
}

impl ChainOrder for TcpOrder {
    #[inline]
    fn stamp(&mut self, pkt: &mut Packet, chains: bool) {
        if chains && !self.chains_before {
            self.seq.reset(); // back from VCP mode: the next packet is an MSP
        }
        self.chains_before = chains;
        if let Some(h) = pkt.tcp_hdr_mut() {
            self.seq.stamp(h, chains);
        }
    }
}

/// DPCP/TPCP's loss response: VCP's, i.e. NewReno's fast retransmit and halving; an RTO sets
/// cwnd to 1 packet [checked for VCP; same for DPCP, reconstructed].
#[derive(Clone, Copy, Debug, Default)]
pub struct NewRenoLoss;

impl LossResponse for NewRenoLoss {
    fn on_fast_retransmit(&mut self, _now: Time, _cwnd: f64, _rtt: Dur, _decoder: &mut Decoder) -> Option<f64> {
        None
    }

    fn keeps_cwnd_on_rto(&mut self) -> bool {
        false
    }
}

/// What the last arriving ACK asked for, applied by the transport's hook for that ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Pending {
    Nothing,
    /// Echo 00: plain TCP congestion avoidance.
    Bleached,
    Act(Action),
}

/// The chain window's congestion controller, generic over the ordering and the loss response.
#[derive(Clone, Debug)]
pub struct ChainWindow<O: ChainOrder, L: LossResponse> {
    laws: ChainLaws,
    /// `laws.ai()`, resolved once.
    ai: AiLaw,
    mss: f64,
    /// Congestion window, packets.
    cwnd: f64,
    /// The window (packets) the transport's running recovery returns to, if the loss response
    /// chose one: kept here exact, since bytes ÷ MSS would not round-trip.
    exit_to: Option<f64>,
    /// cwnd (packets) and the MD episode before the first RTO of a timeout episode, for a
    /// spurious-RTO undo.
    before_rto: Option<(f64, Episode)>,
    decoder: Decoder,
    order: O,
    loss: L,
    /// Chain length the ACKs' positions are read with.
    n: u8,
    /// Wire seq of the last data packet sent (before ordering): ACKs' ack lies near it.
    anchor: u32,
    /// The receiver's seq, which every ACK carries (it sends no data): from the SYN-ACK, else
    /// from the first restored ACK.
    peer_seq: Option<u32>,
    /// SRTT, else the latest sample, else t_p, ns.
    rtt: Dur,
    pending: Pending,
    /// ACK echoes decoded as LSPs in sequence (the LF was refined).
    lsp_echoes: u64,
}

/// TCP/DPCP and TCP/TPCP.
pub type DpcpWindow = ChainWindow<TcpOrder, NewRenoLoss>;

impl DpcpWindow {
    /// A window for `mss`-byte segments: cwnd = `cfg.initial_window` or `p.iw` packets.
    /// `p` must be valid.
    pub fn new(cfg: &FlowConfig, mss: u32, p: &DpcpParams) -> DpcpWindow {
        let laws = p.chain_laws();
        ChainWindow::with(cfg, mss, &laws, p.decoder(laws.initial_hold()), TcpOrder::new(p.chain), NewRenoLoss)
    }
}

impl<O: ChainOrder, L: LossResponse> ChainWindow<O, L> {
    /// A window for `mss`-byte segments: cwnd = `cfg.initial_window` or `laws.iw` packets.
    pub fn with(cfg: &FlowConfig, mss: u32, laws: &ChainLaws, dp: DecoderParams, order: O, loss: L) -> Self {
        ChainWindow {
            laws: *laws,
            ai: laws.ai(),
            mss: mss.max(1) as f64,
            cwnd: cfg.initial_window.map_or(laws.window.iw, |w| w.max(1) as f64),
            exit_to: None,
            before_rto: None,
            decoder: Decoder::new(dp),
            order,
            loss,
            n: dp.n,
            anchor: cfg.isn,
            peer_seq: None,
            rtt: secs(laws.window.t_p),
            pending: Pending::Nothing,
            lsp_echoes: 0,
        }
    }

    /// Congestion window in packets (outside the transport's fast recovery).
    pub fn cwnd_pkts(&self) -> f64 {
        self.cwnd
    }

    pub fn decoder(&self) -> &Decoder {
        &self.decoder
    }

    pub fn loss_response(&self) -> &L {
        &self.loss
    }

    /// ACK echoes decoded as LSPs in sequence.
    pub fn lsp_echoes(&self) -> u64 {
        self.lsp_echoes
    }

    /// Set cwnd (packets) outside recovery: tests of the window laws start from a given window.
    #[cfg(test)]
    pub(crate) fn set_cwnd(&mut self, pkts: f64) {
        self.cwnd = pkts;
    }

    fn note_rtt(&mut self, ctx: &SenderCtx) {
        if let Some(r) = ctx.srtt.or(ctx.latest_rtt) {
            self.rtt = r.max(1);
            match self.laws.window.md_hold {
                MdHold::Rtt => self.decoder.set_md_hold(self.rtt),
                MdHold::TwoTpRtt => self.decoder.set_md_hold(2 * secs(self.laws.window.t_p) + self.rtt),
                MdHold::Tp | MdHold::Secs(_) => {}
            }
        }
    }

    fn mi_ai(&self, xi: f64) -> (f64, f64) {
        let rtt = to_secs(self.rtt);
        let l = &self.laws.window;
        (mi_step(xi, rtt, l.t_p, l.sigma_mi), self.ai.step(l.alpha, rtt, l.t_p, self.cwnd))
    }

    /// Apply the pending action for an ACK of `k` new packets (k = 0: a duplicate ACK).
    fn apply(&mut self, k: f64) {
        match std::mem::replace(&mut self.pending, Pending::Nothing) {
            Pending::Nothing | Pending::Act(Action::None) | Pending::Act(Action::Hold) => {}
            Pending::Bleached => self.cwnd += k / self.cwnd,
            Pending::Act(Action::SetCwnd(c)) => self.cwnd = c,
            Pending::Act(Action::Ai) => self.cwnd += k * self.mi_ai(0.0).1,
            Pending::Act(Action::Grow { lf, vcp }) => {
                let (mi, ai) = self.mi_ai(self.laws.xi(lf));
                let step = match (vcp || self.laws.growth == Growth::VcpLike, lf.zone()) {
                    (false, _) => mi + ai,
                    (true, Zone::Low) => mi,
                    (true, _) => ai,
                };
                self.cwnd += k * step;
            }
        }
    }
}

impl<O: ChainOrder, L: LossResponse> CongestionControl for ChainWindow<O, L> {
    fn window(&self) -> f64 {
        self.cwnd * self.mss
    }

    /// The window after the transport's recovery (the one the loss response chose, exact in
    /// packets, else NewReno's exit window) or after a timeout, back into packets.
    fn set_window(&mut self, window: f64, _ssthresh: f64) {
        self.pending = Pending::Nothing;
        self.cwnd = self.exit_to.take().unwrap_or(window / self.mss).max(1.0);
    }

    /// Growth and MD act on new ACKs; a duplicate applies an MD but never grows (k = 0).
    fn on_ack(&mut self, ack: &Ack<'_>, ctx: &SenderCtx) {
        self.note_rtt(ctx);
        self.apply(ack.reported_pkts);
    }

    /// A loss: the loss response's window (DCP-EW) or TCP's halving (DPCP/TPCP); a timeout:
    /// one packet unless the loss response keeps cwnd; a lost SYN: one packet. ECN-Echo is
    /// not the chain protocols' signal.
    fn on_congestion(&mut self, signal: Signal, ctx: &SenderCtx) -> Response {
        match signal {
            Signal::Loss => {
                self.pending = Pending::Nothing;
                self.exit_to = self.loss.on_fast_retransmit(ctx.now, self.cwnd, self.rtt, &mut self.decoder);
                match self.exit_to {
                    None => Response::Halve,
                    Some(w) => Response::SetWindow(w * self.mss),
                }
            }
            Signal::Timeout => {
                if ctx.consecutive_rtos == 0 {
                    self.before_rto = Some((self.cwnd, self.decoder.episode()));
                }
                self.pending = Pending::Nothing;
                self.exit_to = None;
                if self.loss.keeps_cwnd_on_rto() {
                    Response::Keep
                } else {
                    Response::SetWindow(self.mss)
                }
            }
            Signal::SynTimeout => Response::SetWindow(self.mss),
            Signal::EcnEcho => Response::Keep,
        }
    }

    /// The timeout was spurious (RFC 3522; the transport never undoes one that came during
    /// fast recovery): back to the window and the MD episode it found. An MD that an echo
    /// started on the one-packet window since then is forgotten with it;
    /// otherwise its hold would keep the restored window from the next overload's MD, and its
    /// refinement would set the restored window to β times one packet. The detecting ACK's own
    /// action was decided on the one-packet window too, and is dropped.
    fn on_spurious_timeout(&mut self, _ctx: &SenderCtx) {
        if let Some((cwnd, episode)) = self.before_rto.take() {
            self.cwnd = cwnd;
            self.decoder.restore_episode(episode);
            self.pending = Pending::Nothing;
        }
    }

    /// ECN 01 and the chain position on every data packet (module docs).
    fn on_send(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        self.note_rtt(ctx);
        if pkt.kind != Kind::Data {
            return;
        }
        pkt.ecn = ecn::ECT1;
        let chains = self.decoder.chains(ctx.now);
        if let Some(h) = pkt.tcp_hdr() {
            self.anchor = h.seq;
        }
        self.order.stamp(pkt, chains);
    }

    /// Restore the ACK's fields and decode its echo (module docs).
    fn on_wire_arrival(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        let now = ctx.now;
        if pkt.kind == Kind::SynAck {
            self.peer_seq = pkt.tcp_hdr().map(|h| h.seq.wrapping_add(1));
        }
        if pkt.kind != Kind::Ack {
            return;
        }
        // The window in force: during the transport's recovery, its window [as before the
        // controller interface; the decoder's MD base].
        let cwnd = ctx.cwnd / self.mss;
        let Some(h) = pkt.tcp_hdr_mut() else { return };
        let pos = undo(h, self.n, Anchor::Ack { near: self.anchor, other: self.peer_seq });
        if self.peer_seq.is_none() && tcp_checksum(h) == h.checksum {
            self.peer_seq = Some(h.seq);
        }
        let code = h.echo & 0b11;
        if code == ecn::NOT_ECT {
            self.pending = Pending::Bleached;
            self.loss.on_echo(false);
            return;
        }
        let before = self.decoder.stats().exceptions;
        self.pending = Pending::Act(self.decoder.on_echo(now, code, pos, self.rtt, cwnd));
        if !pos.is_msp() && self.decoder.stats().exceptions == before && self.decoder.mode() == Mode::Chains {
            self.lsp_echoes += 1;
        }
        self.loss.on_echo(self.decoder.lf().zone() == Zone::Over);
    }

    /// One window per smoothed RTT times `pacing_gain`, when set (`vcp/pacing.rs`).
    fn pacing_rate(&self) -> Option<f64> {
        crate::vcp::window_pacing_rate(self.laws.window.pacing_gain, self.cwnd, self.mss, self.rtt)
    }

    /// MPCP §3.4's exception handling, and the loss response's own counters.
    fn metrics(&self, out: &mut dyn MetricSink) {
        let d = self.decoder.stats();
        out.put("chain_exceptions", "events", MetricValue::Count(d.exceptions));
        out.put("vcp_fallbacks", "events", MetricValue::Count(d.fallbacks));
        out.put("chain_resumes", "events", MetricValue::Count(d.resumes));
        out.put("vcp_mode", "", MetricValue::Flag(self.decoder.mode() != Mode::Chains));
        out.put("lsp_echoes", "packets", MetricValue::Count(self.lsp_echoes));
        self.loss.metrics(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dpcp::levels::Lf;
    use crate::dpcp::ordering::{impose, wire_position, Position};
    use crate::packet::TcpHeader;
    use crate::tcp::recovery::drive;
    use crate::tcp::{FastRecovery, RecoveryExit};
    use crate::time::NS_PER_MS;
    use crate::vcp::{AiLawName, Ns2Ai};

    const MS: Time = NS_PER_MS;
    const MSS: u32 = 1000;
    const ISN: u32 = 0x8000_0000;

    fn ctx(now: Time, rtt_ms: u64) -> SenderCtx {
        SenderCtx { now, mss: MSS, srtt: Some(rtt_ms * MS), latest_rtt: Some(rtt_ms * MS), ..Default::default() }
    }

    /// The ACK as the transport hands it: new (`acked` bytes, one packet each) or duplicate.
    fn on_ack(w: &mut DpcpWindow, acked: u64, a: &Packet, c: &SenderCtx) {
        w.on_ack(&Ack { packet: a, acked_bytes: acked, reported_pkts: acked.div_ceil(MSS as u64) as f64 }, c);
    }

    fn arrive(w: &mut DpcpWindow, now: Time, a: &mut Packet) {
        let c = SenderCtx { now, mss: MSS, cwnd: w.window(), ..Default::default() };
        w.on_wire_arrival(a, &c);
    }

    /// A timeout, its response applied as the transport does.
    fn timeout(w: &mut DpcpWindow, c: &SenderCtx) {
        drive::signal(w, Signal::Timeout, c);
    }

    fn window(p: &DpcpParams, cwnd: f64) -> DpcpWindow {
        let mut cfg = FlowConfig::new(0, 1040);
        cfg.isn = ISN;
        let mut w = DpcpWindow::new(&cfg, MSS, p);
        w.set_cwnd(cwnd);
        w
    }

    /// The receiver's ACK for data up to `ack_off`, echoing `code` at position `pos`.
    fn ack(n: u8, ack_off: u32, code: u8, pos: Position) -> Packet {
        let mut h =
            TcpHeader { seq: 0, ack: ISN.wrapping_add(ack_off), echo: code | (pos.0 << 2), ..Default::default() };
        h.checksum = tcp_checksum(&h);
        impose(&mut h, pos, n);
        Packet::tcp(0, Kind::Ack, 40, 0, h)
    }

    fn data(off: u32) -> Packet {
        let mut h = TcpHeader { seq: ISN.wrapping_add(off), ..Default::default() };
        h.checksum = tcp_checksum(&h);
        Packet::tcp(0, Kind::Data, 1040, 1000, h)
    }

    /// Send one data packet at `off`, then feed back an ACK of it through the hooks.
    fn round(w: &mut DpcpWindow, now: Time, off: u32, code: u8, pos: Position) -> Packet {
        let mut p = data(off);
        w.on_send(&mut p, &ctx(now, 200));
        let mut a = ack(w.n, off + MSS, code, pos);
        arrive(w, now, &mut a);
        assert_eq!(a.tcp_hdr().unwrap().ack, ISN.wrapping_add(off + MSS), "ACK restored");
        on_ack(w, MSS as u64, &a, &ctx(now, 200));
        p
    }

    #[test]
    fn sends_01_in_alternating_positions_checksum_over_the_original() {
        let mut w = window(&DpcpParams::default(), 10.0);
        for i in 0..6u32 {
            let mut p = data(i * MSS);
            let orig = *p.tcp_hdr().unwrap();
            w.on_send(&mut p, &ctx(0, 200));
            assert_eq!(p.ecn, ecn::ECT1);
            let h = p.tcp_hdr().unwrap();
            assert_eq!(wire_position(h).0, (i % 2) as u8, "first data packet is an MSP");
            assert_eq!(h.checksum, orig.checksum);
        }
        // SYNs are left alone.
        let mut syn = Packet::tcp(0, Kind::Syn, 40, 0, TcpHeader { seq: 5, ..Default::default() });
        w.on_send(&mut syn, &ctx(0, 200));
        assert_eq!((syn.ecn, syn.tcp_hdr().unwrap().seq), (ecn::NOT_ECT, 5));
    }

    /// `xi_cap` bounds the level's ξ: with a cap of 0.2, level 01 01 (ξ = 1.0) and 01 10
    /// (0.375) grow by ξ = 0.2, level 10 01 (0.0441) is below the cap and unchanged. rtt = t_p:
    /// mi_step = ξ, ai_step = α/cwnd.
    #[test]
    fn xi_cap_bounds_the_level_mi_factor() {
        let p = DpcpParams { xi_cap: Some(0.2), ..Default::default() };
        for (m, l, xi) in [(0b01, 0b01, 0.2), (0b01, 0b10, 0.2), (0b10, 0b01, Lf::dpcp(0b10, 0b01).xi(0.25))] {
            let mut w = window(&p, 10.0);
            round(&mut w, 0, 0, m, Position::MSP);
            let after_msp = w.cwnd;
            round(&mut w, 0, MSS, l, Position::LSP);
            assert!((w.cwnd - (after_msp + xi + 1.0 / after_msp)).abs() < 1e-12, "{m:02b} {l:02b}: {}", w.cwnd);
        }
        assert_eq!(DpcpParams { xi_cap: Some(0.0), ..Default::default() }.validate().unwrap_err().key, "xi_cap");
    }

    #[test]
    fn mi_plus_ai_from_the_level_upper_bound() {
        // rtt = t_p: mi_step = ξ, ai_step = α/cwnd.
        for (m, l) in [(0b01, 0b01), (0b01, 0b10), (0b01, 0b11), (0b10, 0b01), (0b10, 0b10), (0b10, 0b11)] {
            let mut w = window(&DpcpParams::default(), 10.0);
            round(&mut w, 0, 0, m, Position::MSP);
            let after_msp = w.cwnd;
            let xi_msp = Lf::dpcp(m, 0b11).xi(0.25);
            assert!((after_msp - (10.0 + xi_msp + 0.1)).abs() < 1e-12, "MSP {m:02b}: LSP assumed 11");
            round(&mut w, 0, MSS, l, Position::LSP);
            let xi = Lf::dpcp(m, l).xi(0.25);
            assert!((w.cwnd - (after_msp + xi + 1.0 / after_msp)).abs() < 1e-12, "{m:02b} {l:02b}: {}", w.cwnd);
        }
        // vcp-like: pure MI in the low zone, pure AI in the high zone.
        let p = DpcpParams { dpcp_growth: Growth::VcpLike, ..Default::default() };
        let mut w = window(&p, 10.0);
        round(&mut w, 0, 0, 0b01, Position::MSP);
        round(&mut w, 0, MSS, 0b01, Position::LSP);
        assert!((w.cwnd - (10.0 + 0.0625 + 1.0)).abs() < 1e-12, "{}", w.cwnd);
        round(&mut w, 0, 2 * MSS, 0b10, Position::MSP);
        assert!((w.cwnd - (11.0625 + 1.0 / 11.0625)).abs() < 1e-12, "{}", w.cwnd);
        // A bleached echo grows as TCP congestion avoidance.
        let mut w = window(&DpcpParams::default(), 10.0);
        round(&mut w, 0, 0, 0b00, Position::MSP);
        assert!((w.cwnd - 10.1).abs() < 1e-12);
    }

    /// `ai_law = "ns2"`: the AI term is the reference code's α·w·S(rtt/t_d)/cwnd (hand values
    /// in `vcp/ai_law.rs`): an MSP 10 alone reads level 10 11 (ρ < 1, ξ = 0), so the step is
    /// the AI term alone. rtt 10 / 300 / 900 ms: S = 0.02 / 9 / 29; seed001: (rtt/t_p)² =
    /// 0.0025 / 2.25 / min(20.25, 10).
    #[test]
    fn ns2_ai_law_in_the_three_rtt_regimes() {
        for (rtt, s_ns2, s_seed) in [(10u64, 0.02, 0.0025), (300, 9.0, 2.25), (900, 29.0, 10.0)] {
            for (law, s) in [(AiLawName::Ns2, s_ns2), (AiLawName::Seed001, s_seed)] {
                let mut w = window(&DpcpParams { ai_law: law, ..Default::default() }, 10.0);
                let mut p = data(0);
                w.on_send(&mut p, &ctx(0, rtt));
                let mut a = ack(2, MSS, 0b10, Position::MSP);
                arrive(&mut w, 0, &mut a);
                on_ack(&mut w, 2 * MSS as u64, &a, &ctx(0, rtt));
                assert!((w.cwnd - (10.0 + 2.0 * s / 10.0)).abs() < 1e-12, "{law:?} rtt {rtt}: {}", w.cwnd);
            }
        }
        // The ns2 constants are parameters: w = 2 doubles the step.
        let p =
            DpcpParams { ai_law: AiLawName::Ns2, ai_ns2: Ns2Ai { w: 2.0, ..Default::default() }, ..Default::default() };
        let mut w = window(&p, 10.0);
        round(&mut w, 0, 0, 0b10, Position::MSP); // rtt 200 ms: q = 2, S = 4
        assert!((w.cwnd - (10.0 + 2.0 * 4.0 / 10.0)).abs() < 1e-12, "{}", w.cwnd);
    }

    #[test]
    fn md_refined_by_the_lsp_then_hold_and_ai() {
        let mut w = window(&DpcpParams::default(), 100.0);
        round(&mut w, 0, 0, 0b11, Position::MSP);
        assert!((w.cwnd - 43.0).abs() < 1e-9, "MSP 11 alone: 0.43");
        round(&mut w, MS, MSS, 0b01, Position::LSP);
        assert!((w.cwnd - 87.5).abs() < 1e-9, "11 01: 0.875·cwnd_pre");
        round(&mut w, 100 * MS, 2 * MSS, 0b11, Position::MSP);
        assert!((w.cwnd - 87.5).abs() < 1e-9, "hold");
        round(&mut w, 250 * MS, 3 * MSS, 0b11, Position::LSP);
        assert!((w.cwnd - (87.5 + 1.0 / 87.5)).abs() < 1e-9, "AI for one rtt after the hold");
        assert_eq!(w.decoder().stats().mds, 1);
        // A duplicate ACK with an overload MSP applies the MD but a low one never grows.
        let mut w = window(&DpcpParams::default(), 100.0);
        let mut a = ack(2, 0, 0b01, Position::MSP);
        arrive(&mut w, 0, &mut a);
        on_ack(&mut w, 0, &a, &ctx(0, 200));
        assert_eq!(w.cwnd, 100.0);
        let mut a = ack(2, 0, 0b11, Position::LSP);
        arrive(&mut w, 0, &mut a);
        let mut a = ack(2, 0, 0b11, Position::MSP);
        arrive(&mut w, 0, &mut a);
        on_ack(&mut w, 0, &a, &ctx(0, 200));
        assert!((w.cwnd - 43.0).abs() < 1e-9);
    }

    /// `md_hold = "2t_p+rtt"`: the MD's hold lasts 2·t_p + SRTT (200 ms t_p, 400 ms SRTT:
    /// 800 ms), then AI for one SRTT. Hand values: chain 11 11 at 0 cuts 100 → 43, overload
    /// at 799 ms holds, at 800 ms is AI (α(rtt/t_p)²/cwnd = 4/43), at 1200 ms cuts again.
    #[test]
    fn md_hold_2tp_rtt_covers_the_stale_echoes() {
        let p: DpcpParams = crate::params::parse(&serde_json::json!({"md_hold": "2t_p+rtt"})).unwrap();
        assert_eq!(p.md_hold, MdHold::TwoTpRtt);
        let mut w = window(&p, 100.0);
        let at = |w: &mut DpcpWindow, t: Time, off: u32, code: u8, pos: Position| {
            let mut d = data(off);
            w.on_send(&mut d, &ctx(t, 400));
            let mut a = ack(2, off + MSS, code, pos);
            arrive(w, t, &mut a);
            on_ack(w, MSS as u64, &a, &ctx(t, 400));
        };
        at(&mut w, 0, 0, 0b11, Position::MSP);
        at(&mut w, MS, MSS, 0b11, Position::LSP); // refines: 0.43 · 100
        assert!((w.cwnd - 43.0).abs() < 1e-9);
        at(&mut w, 799 * MS, 2 * MSS, 0b11, Position::MSP);
        at(&mut w, 799 * MS, 3 * MSS, 0b11, Position::LSP);
        assert!((w.cwnd - 43.0).abs() < 1e-9, "hold: {}", w.cwnd);
        at(&mut w, 800 * MS, 4 * MSS, 0b11, Position::MSP);
        assert!((w.cwnd - (43.0 + 2.0_f64.powi(2) / 43.0)).abs() < 1e-9, "AI (rtt/t_p = 2): {}", w.cwnd);
        at(&mut w, 800 * MS, 5 * MSS, 0b11, Position::LSP);
        let c = w.cwnd;
        at(&mut w, 1200 * MS, 6 * MSS, 0b11, Position::MSP);
        assert!((w.cwnd - 0.43 * c).abs() < 1e-9, "a new MD: {}", w.cwnd);
        assert_eq!(w.decoder().stats().mds, 2);
    }

    #[test]
    fn tpcp_offsets_on_data_and_acks() {
        let mut w = window(&DpcpParams::tpcp(), 10.0);
        for i in 0..6u32 {
            let p = round(&mut w, 0, i * MSS, 0b01, Position((i % 3) as u8));
            let k = crate::dpcp::ordering::position_n(&p, 3);
            assert_eq!(k, Position((i % 3) as u8));
        }
        assert_eq!(w.decoder().stats().exceptions, 0);
        assert_eq!(w.decoder().lf(), Lf::from_packed(3, 0b01_01_01));
    }

    #[test]
    fn loss_is_newreno_then_dpcp_resumes() {
        let mut w = window(&DpcpParams::default(), 20.0);
        let mut c = ctx(0, 200);
        c.flight = 20_000;
        c.dupacks = 3;
        assert_eq!(w.on_congestion(Signal::Loss, &c), Response::Halve);
        // The transport's recovery: ssthresh 10 000 + 3 MSS, exit with nothing outstanding.
        let r = FastRecovery::halving(c.flight as f64, 3, MSS, false);
        assert_eq!(r.cwnd(), 13_000.0);
        w.set_window(r.exit(RecoveryExit::FullAck, 0), r.ssthresh());
        assert!((w.cwnd_pkts() - 2.0).abs() < 1e-12);
        timeout(&mut w, &c);
        assert_eq!(w.cwnd_pkts(), 1.0);
        assert_eq!(w.on_congestion(Signal::EcnEcho, &c), Response::Keep);
    }

    #[test]
    fn a_spurious_rto_is_undone_with_the_md_episode_it_found() {
        // An RTO (cwnd 1), then a duplicate ACK echoing an overload MSP starts an MD episode
        // on the one-packet window (the transport undoes at the first new ACK, so only
        // duplicates reach the window in between).
        let mut w = window(&DpcpParams::default(), 100.0);
        timeout(&mut w, &ctx(0, 200));
        assert_eq!(w.cwnd, 1.0);
        let mut a = ack(2, 0, 0b11, Position::MSP);
        arrive(&mut w, MS, &mut a);
        on_ack(&mut w, 0, &a, &ctx(MS, 200));
        assert_eq!((w.cwnd, w.decoder().stats().mds), (1.0, 1));
        // The undo brings back 100 packets and no episode: the chain's LSP does not "refine"
        // the restored window to β·1 packet; level 11 01 starts a fresh MD of the restored one.
        w.on_spurious_timeout(&ctx(2 * MS, 200));
        assert_eq!(w.cwnd, 100.0);
        round(&mut w, 3 * MS, MSS, 0b01, Position::LSP);
        assert!((w.cwnd - 87.5).abs() < 1e-9, "0.875 · 100, not 0.875 · 1: {}", w.cwnd);
        assert_eq!(w.decoder().stats().mds, 2);
        // An episode that was running when the timeout came is put back with the window: its
        // hold still shields the window from a second MD.
        let mut w = window(&DpcpParams::default(), 100.0);
        round(&mut w, 0, 0, 0b11, Position::MSP);
        round(&mut w, MS, MSS, 0b01, Position::LSP);
        assert!((w.cwnd - 87.5).abs() < 1e-9);
        timeout(&mut w, &ctx(50 * MS, 200));
        w.on_spurious_timeout(&ctx(60 * MS, 200));
        assert!((w.cwnd - 87.5).abs() < 1e-9);
        round(&mut w, 70 * MS, 2 * MSS, 0b11, Position::MSP);
        assert!((w.cwnd - 87.5).abs() < 1e-9, "hold: {}", w.cwnd);
    }

    /// `pacing_gain`: off by default; set, one window per SRTT times the gain, in wire bytes
    /// (IPv4 + TCP + MSS): 50 packets at SRTT 400 ms and gain 1 → 50 · 1040 / 0.4 = 130 000 B/s;
    /// with no RTT sample yet, over t_p (200 ms).
    #[test]
    fn pacing_spreads_the_window_over_srtt() {
        assert_eq!(window(&DpcpParams::default(), 50.0).pacing_rate(), None);
        let p = DpcpParams { pacing_gain: Some(1.0), ..Default::default() };
        let mut w = window(&p, 50.0);
        assert!((w.pacing_rate().unwrap() - 260_000.0).abs() < 1e-6, "over t_p before any sample");
        on_ack(&mut w, 0, &Packet::tcp(0, Kind::Ack, 40, 0, TcpHeader::default()), &ctx(MS, 400));
        assert!((w.pacing_rate().unwrap() - 130_000.0).abs() < 1e-6, "{:?}", w.pacing_rate());
    }
}
