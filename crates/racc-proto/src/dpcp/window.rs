//! DPCP/TPCP's window laws on the TCP NewReno transport (seed 000 §3; PROTOCOLS.md §3). cwnd
//! is held in packets (f64) and exposed in bytes (× MSS), as VCP's (`vcp/window.rs`).
//!
//! - **Sending** (seed 000 §3.2): every data packet leaves at ECN 01 and takes the next
//!   position of its chain (Alg. 1 for n = 2, the checksum offset for n ≥ 3), after the
//!   transport computed the checksum over the original fields. In VCP mode every packet is
//!   sent as an MSP. Retransmissions are chained like any packet (the flag flips per packet
//!   sent).
//! - **ACKs**: `on_wire_arrival` restores the ACK's seq/ack (its ack lies near the last data
//!   seq sent) before the transport reads it, reads the echoed code and the position the ACK
//!   carried, and runs the decoder; the transport's hook for that ACK then applies the action.
//! - **Growth** per acknowledged packet (k per ACK), from the saved level's upper bound
//!   [seed 000 §3.1; ξ reconstructed]: `mi+ai`: cwnd += (1+ξ)^min(rtt/t_p, σ_MI) − 1 +
//!   α·min((rtt/t_p)², σ_AI)/cwnd; `vcp-like` (and VCP mode): the MI term alone in the low
//!   zone, the AI term alone in the high zone.
//! - **Overload**: the decoder's MD (0.43 on an MSP alone, β_k·cwnd_pre once the LSP
//!   arrives), VCP's hold and AI-for-one-rtt (PROTOCOLS.md §2).
//! - **Loss**: as VCP's: NewReno fast retransmit and halving, RTO → cwnd = 1 packet, then the
//!   DPCP laws resume without slow start [checked for VCP; same for DPCP, reconstructed].
//!
//! Choices [reconstructed]: growth and MD act on new ACKs; a duplicate ACK outside recovery
//! applies an MD (its echo is as fresh as any) but never grows; during fast recovery the
//! decoder keeps tracking positions and NewReno alone sets the window. An echo of 00 (the path
//! bleached the code) grows as TCP congestion avoidance, as VCP does.

use super::decode::{Action, Decoder};
use super::levels::Zone;
use super::ordering::{undo, Anchor, Sequencer};
use super::params::{DpcpParams, Growth};
use crate::endpoint::FlowConfig;
use crate::packet::{ecn, tcp_checksum, Kind, Packet};
use crate::tcp::{NewRenoWindow, RecoveryExit, SenderCtx, WindowControl};
use crate::time::{secs, to_secs, Dur, Time};
use crate::vcp::{ai_step, mi_step, MdHold};

/// What the last arriving ACK asked for, applied by the transport's hook for that ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Pending {
    Nothing,
    /// Echo 00: plain TCP congestion avoidance.
    Bleached,
    Act(Action),
}

/// DPCP's `WindowControl`.
#[derive(Clone, Debug)]
pub struct DpcpWindow {
    h: f64,
    alpha: f64,
    sigma_mi: f64,
    sigma_ai: f64,
    t_p_s: f64,
    growth: Growth,
    md_hold: MdHold,
    mss: f64,
    /// Congestion window, packets.
    cwnd: f64,
    recovery: Option<NewRenoWindow>,
    decoder: Decoder,
    seq: Sequencer,
    n: u8,
    chains_before: bool,
    /// Wire seq of the last data packet sent (before ordering): ACKs' ack lies near it.
    anchor: u32,
    /// The receiver's seq, which every ACK carries (it sends no data): from the SYN-ACK, else
    /// from the first restored ACK.
    peer_seq: Option<u32>,
    /// SRTT, else the latest sample, else t_p, ns.
    rtt: Dur,
    pending: Pending,
}

impl DpcpWindow {
    /// A window for `mss`-byte segments: cwnd = `cfg.initial_window` or `p.iw` packets.
    /// `p` must be valid.
    pub fn new(cfg: &FlowConfig, mss: u32, p: &DpcpParams) -> DpcpWindow {
        let t_p = secs(p.t_p);
        let hold = match p.md_hold {
            MdHold::Tp | MdHold::Rtt => t_p,
            MdHold::Secs(s) => secs(s),
        };
        DpcpWindow {
            h: p.h,
            alpha: p.alpha,
            sigma_mi: p.sigma_mi,
            sigma_ai: p.sigma_ai,
            t_p_s: p.t_p,
            growth: p.dpcp_growth,
            md_hold: p.md_hold,
            mss: mss.max(1) as f64,
            cwnd: cfg.initial_window.map_or(p.iw, |w| w.max(1) as f64),
            recovery: None,
            decoder: Decoder::new(p.decoder(hold)),
            seq: Sequencer::new(p.chain),
            n: p.chain,
            chains_before: true,
            anchor: cfg.isn,
            peer_seq: None,
            rtt: t_p,
            pending: Pending::Nothing,
        }
    }

    /// Congestion window in packets (NewReno's during fast recovery).
    pub fn cwnd_pkts(&self) -> f64 {
        self.cwnd_bytes() / self.mss
    }

    pub fn decoder(&self) -> &Decoder {
        &self.decoder
    }

    pub fn in_recovery(&self) -> bool {
        self.recovery.is_some()
    }

    fn note_rtt(&mut self, ctx: &SenderCtx) {
        if let Some(r) = ctx.srtt.or(ctx.latest_rtt) {
            self.rtt = r.max(1);
            if self.md_hold == MdHold::Rtt {
                self.decoder.set_md_hold(self.rtt);
            }
        }
    }

    fn mi_ai(&self, xi: f64) -> (f64, f64) {
        let rtt = to_secs(self.rtt);
        (mi_step(xi, rtt, self.t_p_s, self.sigma_mi), ai_step(self.alpha, rtt, self.t_p_s, self.sigma_ai, self.cwnd))
    }

    /// Apply the pending action for an ACK of `k` new packets (k = 0: a duplicate ACK).
    fn apply(&mut self, k: f64) {
        match std::mem::replace(&mut self.pending, Pending::Nothing) {
            Pending::Nothing | Pending::Act(Action::None) | Pending::Act(Action::Hold) => {}
            Pending::Bleached => self.cwnd += k / self.cwnd,
            Pending::Act(Action::SetCwnd(c)) => self.cwnd = c,
            Pending::Act(Action::Ai) => self.cwnd += k * self.mi_ai(0.0).1,
            Pending::Act(Action::Grow { lf, vcp }) => {
                let (mi, ai) = self.mi_ai(lf.xi(self.h));
                let step = match (vcp || self.growth == Growth::VcpLike, lf.zone()) {
                    (false, _) => mi + ai,
                    (true, Zone::Low) => mi,
                    (true, _) => ai,
                };
                self.cwnd += k * step;
            }
        }
    }
}

impl WindowControl for DpcpWindow {
    fn cwnd_bytes(&self) -> f64 {
        match &self.recovery {
            Some(nr) => nr.cwnd(),
            None => self.cwnd * self.mss,
        }
    }

    fn ssthresh_bytes(&self) -> f64 {
        self.recovery.as_ref().map_or(f64::INFINITY, |nr| nr.ssthresh())
    }

    /// ECN 01 and the chain position on every data packet (module docs).
    fn on_send(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        self.note_rtt(ctx);
        if pkt.kind != Kind::Data {
            return;
        }
        pkt.ecn = ecn::ECT1;
        let chains = self.decoder.chains(ctx.now);
        if chains && !self.chains_before {
            self.seq.reset(); // back from VCP mode: the next packet is an MSP
        }
        self.chains_before = chains;
        if let Some(h) = pkt.tcp_hdr_mut() {
            self.anchor = h.seq;
            self.seq.stamp(h, chains);
        }
    }

    /// Restore the ACK's fields and decode its echo (module docs).
    fn on_wire_arrival(&mut self, now: Time, pkt: &mut Packet) {
        if pkt.kind == Kind::SynAck {
            self.peer_seq = pkt.tcp_hdr().map(|h| h.seq.wrapping_add(1));
        }
        if pkt.kind != Kind::Ack {
            return;
        }
        let cwnd = self.cwnd_pkts();
        let Some(h) = pkt.tcp_hdr_mut() else { return };
        let pos = undo(h, self.n, Anchor::Ack { near: self.anchor, other: self.peer_seq });
        if self.peer_seq.is_none() && tcp_checksum(h) == h.checksum {
            self.peer_seq = Some(h.seq);
        }
        let code = h.echo & 0b11;
        self.pending = if code == ecn::NOT_ECT {
            Pending::Bleached
        } else {
            Pending::Act(self.decoder.on_echo(now, code, pos, self.rtt, cwnd))
        };
    }

    fn on_syn_timeout(&mut self, _ctx: &SenderCtx) {
        self.cwnd = 1.0;
    }

    fn on_new_ack(&mut self, acked: u64, _ack: &Packet, ctx: &SenderCtx) {
        self.note_rtt(ctx);
        let k = acked.div_ceil(ctx.mss.max(1) as u64) as f64;
        self.apply(k);
    }

    fn on_dupack(&mut self, _ack: &Packet, ctx: &SenderCtx) {
        self.note_rtt(ctx);
        self.apply(0.0);
    }

    fn on_fast_retransmit(&mut self, ack: &Packet, ctx: &SenderCtx) {
        self.pending = Pending::Nothing;
        let mut nr = NewRenoWindow::with(self.cwnd * self.mss, f64::INFINITY, self.mss as u32);
        nr.on_fast_retransmit(ack, ctx);
        self.recovery = Some(nr);
    }

    fn on_recovery_dupack(&mut self, ack: &Packet, ctx: &SenderCtx) {
        self.pending = Pending::Nothing;
        if let Some(nr) = self.recovery.as_mut() {
            nr.on_recovery_dupack(ack, ctx);
        }
    }

    fn on_partial_ack(&mut self, acked: u64, ack: &Packet, ctx: &SenderCtx) {
        self.pending = Pending::Nothing;
        if let Some(nr) = self.recovery.as_mut() {
            nr.on_partial_ack(acked, ack, ctx);
        }
    }

    fn on_recovery_exit(&mut self, how: RecoveryExit, ack: &Packet, ctx: &SenderCtx) {
        self.pending = Pending::Nothing;
        if let Some(mut nr) = self.recovery.take() {
            nr.on_recovery_exit(how, ack, ctx);
            self.cwnd = (nr.cwnd() / self.mss).max(1.0);
        }
    }

    fn on_rto(&mut self, _ctx: &SenderCtx) {
        self.pending = Pending::Nothing;
        self.recovery = None;
        self.cwnd = 1.0;
    }

    fn on_ecn_echo(&mut self, _ack: &Packet, _ctx: &SenderCtx) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dpcp::levels::Lf;
    use crate::dpcp::ordering::{impose, wire_position, Position};
    use crate::packet::TcpHeader;
    use crate::time::NS_PER_MS;

    const MS: Time = NS_PER_MS;
    const MSS: u32 = 1000;
    const ISN: u32 = 0x8000_0000;

    fn ctx(now: Time, rtt_ms: u64) -> SenderCtx {
        SenderCtx {
            now,
            mss: MSS,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            flight: 0,
            srtt: Some(rtt_ms * MS),
            latest_rtt: Some(rtt_ms * MS),
            rto: 0,
            dupacks: 0,
            consecutive_rtos: 0,
            in_recovery: false,
            recover: 0,
        }
    }

    fn window(p: &DpcpParams, cwnd: f64) -> DpcpWindow {
        let mut cfg = FlowConfig::new(0, 1040);
        cfg.isn = ISN;
        let mut w = DpcpWindow::new(&cfg, MSS, p);
        w.cwnd = cwnd;
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
        w.on_wire_arrival(now, &mut a);
        assert_eq!(a.tcp_hdr().unwrap().ack, ISN.wrapping_add(off + MSS), "ACK restored");
        w.on_new_ack(MSS as u64, &a, &ctx(now, 200));
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
        w.on_wire_arrival(0, &mut a);
        w.on_dupack(&a, &ctx(0, 200));
        assert_eq!(w.cwnd, 100.0);
        let mut a = ack(2, 0, 0b11, Position::LSP);
        w.on_wire_arrival(0, &mut a);
        let mut a = ack(2, 0, 0b11, Position::MSP);
        w.on_wire_arrival(0, &mut a);
        w.on_dupack(&a, &ctx(0, 200));
        assert!((w.cwnd - 43.0).abs() < 1e-9);
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
        let a = ack(2, 0, 0b01, Position::MSP);
        let mut c = ctx(0, 200);
        c.flight = 20_000;
        c.dupacks = 3;
        w.on_fast_retransmit(&a, &c);
        assert!(w.in_recovery());
        assert_eq!(w.cwnd_bytes(), 13_000.0, "ssthresh 10 000 + 3 MSS");
        c.flight = 0;
        w.on_recovery_exit(RecoveryExit::FullAck, &a, &c);
        assert!((w.cwnd_pkts() - 2.0).abs() < 1e-12);
        w.on_rto(&c);
        assert_eq!(w.cwnd_pkts(), 1.0);
    }
}
