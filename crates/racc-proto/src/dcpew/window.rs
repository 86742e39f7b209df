//! DCP-EW's sender window [seed 003 §III; PROTOCOLS.md §4]: DPCP's window laws and decoder
//! (levels, MI+AI growth from the level's upper bound, MD refinement, exceptions, VCP
//! fallback; see `dpcp/window.rs`, whose rules this repeats) with two changes.
//!
//! - **Ordering by the IP ID**: every data packet takes the next ID of the flow's
//!   [`IpIdSource`] (incrementing or seeded random) and its position is the ID's LSB; the
//!   seq/ack order mirrors it (Alg. 1) for the plaintext nodes behind an egress SM (see
//!   `ordering.rs`). In VCP mode seq/ack say MSP (routers on the plaintext side read MSP; the
//!   ID keeps its value: it is never chosen for the position). ACKs come back with DPCP's
//!   seq/ack position (the receiver is DPCP's [`crate::dpcp::DpcpEcho`]).
//! - **Loss differentiation** (seed 003 §III.D): a bit map per flow, `BM = (BM << 1) |
//!   overload` on every ACK that carries an echo (overload = the decoded LF is in the overload
//!   zone, MSP 11, ρ ≥ 1; a bleached echo 00 shifts in 0). CF = the low T bits all set. On the
//!   3rd duplicate ACK the transport retransmits; CF set: a congestion loss, MD by
//!   `ew_loss_md` (the saved level's factor, or ½) unless an MD (by echo or by loss) happened
//!   within max(md_hold, rtt) [reconstructed: "never cuts twice in one RTT"]; CF clear: an
//!   error loss, cwnd is kept. Either way fast recovery runs NewReno's inflation and
//!   deflation around ssthresh = the kept (or reduced) window, and on exit cwnd = that window
//!   [reconstructed]. RTO: TCP's (cwnd = 1) unless `ew_apply_to_rto`, which keeps cwnd on an
//!   RTO with CF clear.

use super::ordering::IpIdSource;
use super::params::{DcpewParams, LossMd};
use crate::dpcp::decode::{Action, Decoder, Mode};
use crate::dpcp::levels::Zone;
use crate::dpcp::ordering::{order, undo, Anchor};
use crate::dpcp::Growth;
use crate::endpoint::FlowConfig;
use crate::packet::{ecn, tcp_checksum, Kind, Packet};
use crate::tcp::{NewRenoWindow, RecoveryExit, SenderCtx, WindowControl};
use crate::time::{secs, to_secs, Dur, Time};
use crate::vcp::{ai_step, mi_step, MdHold};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Pending {
    Nothing,
    Bleached,
    Act(Action),
}

/// Loss-differentiation counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossStats {
    /// Fast retransmits with CF set (congestion) and clear (error).
    pub congestion_losses: u64,
    pub error_losses: u64,
    /// Congestion losses that cut cwnd (the others fell in an MD's hold).
    pub loss_mds: u64,
    /// RTOs whose cwnd was kept (`ew_apply_to_rto` with CF clear).
    pub rtos_kept: u64,
    /// ACK echoes decoded as LSPs in sequence (the 4-bit LF was refined).
    pub lsp_echoes: u64,
}

/// The loss-differentiation bit map (seed 003 §III.D): N bits of history, CF over the low T.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitMap {
    bits: u64,
    keep: u64,
    t_mask: u64,
}

impl BitMap {
    /// N = `n` bits (1..=64), T = `t` (1..=n).
    pub fn new(n: u32, t: u32) -> BitMap {
        let mask = |k: u32| if k >= 64 { u64::MAX } else { (1u64 << k) - 1 };
        BitMap { bits: 0, keep: mask(n), t_mask: mask(t) }
    }

    /// One ACK: shift in 1 if it reported overload.
    #[inline]
    pub fn push(&mut self, overload: bool) {
        self.bits = ((self.bits << 1) | overload as u64) & self.keep;
    }

    /// The congestion flag: the last T ACKs all reported overload.
    #[inline]
    pub fn cf(&self) -> bool {
        self.bits & self.t_mask == self.t_mask
    }

    pub fn bits(&self) -> u64 {
        self.bits
    }
}

/// DCP-EW's `WindowControl`.
#[derive(Clone, Debug)]
pub struct DcpewWindow {
    h: f64,
    alpha: f64,
    sigma_mi: f64,
    sigma_ai: f64,
    t_p_s: f64,
    growth: Growth,
    md_hold: MdHold,
    hold: Dur,
    mss: f64,
    cwnd: f64,
    recovery: Option<NewRenoWindow>,
    /// cwnd (packets) fast recovery returns to.
    target: f64,
    decoder: Decoder,
    ids: IpIdSource,
    anchor: u32,
    peer_seq: Option<u32>,
    rtt: Dur,
    pending: Pending,
    bm: BitMap,
    loss_md: LossMd,
    apply_to_rto: bool,
    /// Time of the last MD (by echo or by loss).
    last_md: Option<Time>,
    stats: LossStats,
}

impl DcpewWindow {
    /// A window for `mss`-byte segments of flow `cfg.flow`. `p` must be valid.
    pub fn new(cfg: &FlowConfig, mss: u32, p: &DcpewParams) -> DcpewWindow {
        let t_p = secs(p.t_p);
        let hold = match p.md_hold {
            MdHold::Tp | MdHold::Rtt => t_p,
            MdHold::Secs(s) => secs(s),
        };
        DcpewWindow {
            h: p.h,
            alpha: p.alpha,
            sigma_mi: p.sigma_mi,
            sigma_ai: p.sigma_ai,
            t_p_s: p.t_p,
            growth: p.dpcp_growth,
            md_hold: p.md_hold,
            hold,
            mss: mss.max(1) as f64,
            cwnd: cfg.initial_window.map_or(p.iw, |w| w.max(1) as f64),
            recovery: None,
            target: 1.0,
            decoder: Decoder::new(p.decoder(hold)),
            ids: IpIdSource::new(p.ip_id, p.ip_id_seed, cfg.flow),
            anchor: cfg.isn,
            peer_seq: None,
            rtt: t_p,
            pending: Pending::Nothing,
            bm: BitMap::new(p.bm_bits, p.bm_threshold),
            loss_md: p.ew_loss_md,
            apply_to_rto: p.ew_apply_to_rto,
            last_md: None,
            stats: LossStats::default(),
        }
    }

    pub fn cwnd_pkts(&self) -> f64 {
        self.cwnd_bytes() / self.mss
    }

    pub fn decoder(&self) -> &Decoder {
        &self.decoder
    }

    pub fn bit_map(&self) -> BitMap {
        self.bm
    }

    pub fn loss_stats(&self) -> LossStats {
        self.stats
    }

    pub fn in_recovery(&self) -> bool {
        self.recovery.is_some()
    }

    fn note_rtt(&mut self, ctx: &SenderCtx) {
        if let Some(r) = ctx.srtt.or(ctx.latest_rtt) {
            self.rtt = r.max(1);
            if self.md_hold == MdHold::Rtt {
                self.hold = self.rtt;
                self.decoder.set_md_hold(self.rtt);
            }
        }
    }

    fn mi_ai(&self, xi: f64) -> (f64, f64) {
        let rtt = to_secs(self.rtt);
        (mi_step(xi, rtt, self.t_p_s, self.sigma_mi), ai_step(self.alpha, rtt, self.t_p_s, self.sigma_ai, self.cwnd))
    }

    fn apply(&mut self, now: Time, k: f64) {
        match std::mem::replace(&mut self.pending, Pending::Nothing) {
            Pending::Nothing | Pending::Act(Action::None) | Pending::Act(Action::Hold) => {}
            Pending::Bleached => self.cwnd += k / self.cwnd,
            Pending::Act(Action::SetCwnd(c)) => {
                self.cwnd = c;
                self.last_md = Some(now);
            }
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

    /// The window after a loss the bit map calls congestion (`cf`) or error.
    fn after_loss(&mut self, now: Time, cf: bool) -> f64 {
        if !cf {
            self.stats.error_losses += 1;
            return self.cwnd;
        }
        self.stats.congestion_losses += 1;
        let span = self.hold.max(self.rtt);
        if self.last_md.is_some_and(|t| now < t.saturating_add(span)) {
            return self.cwnd;
        }
        let f = match self.loss_md {
            LossMd::Half => 0.5,
            LossMd::Level => self.decoder.lf().md_factor().unwrap_or(crate::dpcp::levels::VCP_BETA),
        };
        self.last_md = Some(now);
        self.stats.loss_mds += 1;
        (f * self.cwnd).max(1.0)
    }
}

impl WindowControl for DcpewWindow {
    fn cwnd_bytes(&self) -> f64 {
        match &self.recovery {
            Some(nr) => nr.cwnd(),
            None => self.cwnd * self.mss,
        }
    }

    fn ssthresh_bytes(&self) -> f64 {
        self.recovery.as_ref().map_or(f64::INFINITY, |nr| nr.ssthresh())
    }

    /// ECN 01, the next IP ID, and seq/ack mirroring its parity (module docs).
    fn on_send(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        self.note_rtt(ctx);
        if pkt.kind != Kind::Data {
            return;
        }
        pkt.ecn = ecn::ECT1;
        pkt.ip_id = self.ids.next_id();
        let chains = self.decoder.chains(ctx.now);
        let msp = !chains || pkt.ip_id & 1 == 0;
        if let Some(h) = pkt.tcp_hdr_mut() {
            self.anchor = h.seq;
            order(h, msp);
        }
    }

    /// Restore the ACK's fields, decode its echo, shift the bit map.
    fn on_wire_arrival(&mut self, now: Time, pkt: &mut Packet) {
        if pkt.kind == Kind::SynAck {
            self.peer_seq = pkt.tcp_hdr().map(|h| h.seq.wrapping_add(1));
        }
        if pkt.kind != Kind::Ack {
            return;
        }
        let cwnd = self.cwnd_pkts();
        let Some(h) = pkt.tcp_hdr_mut() else { return };
        let pos = undo(h, 2, Anchor::Ack { near: self.anchor, other: self.peer_seq });
        if self.peer_seq.is_none() && tcp_checksum(h) == h.checksum {
            self.peer_seq = Some(h.seq);
        }
        let code = h.echo & 0b11;
        if code == ecn::NOT_ECT {
            self.pending = Pending::Bleached;
            self.bm.push(false);
            return;
        }
        let before = self.decoder.stats().exceptions;
        self.pending = Pending::Act(self.decoder.on_echo(now, code, pos, self.rtt, cwnd));
        if !pos.is_msp() && self.decoder.stats().exceptions == before && self.decoder.mode() == Mode::Chains {
            self.stats.lsp_echoes += 1;
        }
        self.bm.push(self.decoder.lf().zone() == Zone::Over);
    }

    fn on_syn_timeout(&mut self, _ctx: &SenderCtx) {
        self.cwnd = 1.0;
    }

    fn on_new_ack(&mut self, acked: u64, _ack: &Packet, ctx: &SenderCtx) {
        self.note_rtt(ctx);
        let k = acked.div_ceil(ctx.mss.max(1) as u64) as f64;
        self.apply(ctx.now, k);
    }

    fn on_dupack(&mut self, _ack: &Packet, ctx: &SenderCtx) {
        self.note_rtt(ctx);
        self.apply(ctx.now, 0.0);
    }

    /// The bit map decides: congestion → the episode's MD, error → keep cwnd.
    fn on_fast_retransmit(&mut self, _ack: &Packet, ctx: &SenderCtx) {
        self.pending = Pending::Nothing;
        let target = self.after_loss(ctx.now, self.bm.cf());
        self.target = target;
        let ssthresh = target * self.mss;
        self.recovery = Some(NewRenoWindow::with(ssthresh + ctx.dupacks as f64 * self.mss, ssthresh, self.mss as u32));
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

    fn on_recovery_exit(&mut self, _how: RecoveryExit, _ack: &Packet, _ctx: &SenderCtx) {
        self.pending = Pending::Nothing;
        if self.recovery.take().is_some() {
            self.cwnd = self.target.max(1.0);
        }
    }

    fn on_rto(&mut self, ctx: &SenderCtx) {
        self.pending = Pending::Nothing;
        self.recovery = None;
        if self.apply_to_rto && !self.bm.cf() {
            self.stats.rtos_kept += 1;
            return;
        }
        let _ = ctx;
        self.cwnd = 1.0;
    }

    fn on_ecn_echo(&mut self, _ack: &Packet, _ctx: &SenderCtx) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dcpew::ordering::id_position;
    use crate::dcpew::params::IpIdMode;
    use crate::dpcp::levels::Lf;
    use crate::dpcp::ordering::{impose, wire_position, Position};
    use crate::packet::TcpHeader;
    use crate::time::NS_PER_MS;

    const MS: Time = NS_PER_MS;
    const MSS: u32 = 1000;
    const ISN: u32 = 0x8000_0000;

    fn ctx(now: Time) -> SenderCtx {
        SenderCtx {
            now,
            mss: MSS,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            flight: 20_000,
            srtt: Some(200 * MS),
            latest_rtt: Some(200 * MS),
            rto: 0,
            dupacks: 3,
            consecutive_rtos: 0,
            in_recovery: false,
            recover: 0,
        }
    }

    fn window(p: &DcpewParams, cwnd: f64) -> DcpewWindow {
        let mut cfg = FlowConfig::new(0, 1040);
        cfg.isn = ISN;
        let mut w = DcpewWindow::new(&cfg, MSS, p);
        w.cwnd = cwnd;
        w
    }

    fn ack(ack_off: u32, code: u8, pos: Position) -> Packet {
        let mut h =
            TcpHeader { seq: 0, ack: ISN.wrapping_add(ack_off), echo: code | (pos.0 << 2), ..Default::default() };
        h.checksum = tcp_checksum(&h);
        impose(&mut h, pos, 2);
        Packet::tcp(0, Kind::Ack, 40, 0, h)
    }

    fn data(off: u32) -> Packet {
        let mut h = TcpHeader { seq: ISN.wrapping_add(off), ..Default::default() };
        h.checksum = tcp_checksum(&h);
        Packet::tcp(0, Kind::Data, 1040, 1000, h)
    }

    /// Echo `code` at `pos` on a new ACK of one packet.
    fn echo(w: &mut DcpewWindow, now: Time, i: u32, code: u8, pos: Position) {
        let mut a = ack(i * MSS, code, pos);
        w.on_wire_arrival(now, &mut a);
        w.on_new_ack(MSS as u64, &a, &ctx(now));
    }

    #[test]
    fn positions_follow_the_ip_id_and_seq_ack_mirrors_it() {
        for mode in [IpIdMode::Increment, IpIdMode::Random] {
            let p = DcpewParams { ip_id: mode, ip_id_seed: 5, ..Default::default() };
            let mut w = window(&p, 10.0);
            let mut ids = Vec::new();
            for i in 0..200u32 {
                let mut d = data(i * MSS);
                let sum = d.tcp_hdr().unwrap().checksum;
                w.on_send(&mut d, &ctx(0));
                let h = d.tcp_hdr().unwrap();
                assert_eq!(d.ecn, ecn::ECT1);
                assert_eq!(wire_position(h), id_position(d.ip_id), "{mode:?} packet {i}");
                assert_eq!(h.checksum, sum);
                ids.push(d.ip_id);
            }
            match mode {
                IpIdMode::Increment => assert_eq!(ids[..4], [0, 1, 2, 3]),
                IpIdMode::Random => {
                    let runs = ids.windows(2).filter(|w| w[0] & 1 == w[1] & 1).count();
                    assert!((60..140).contains(&runs), "same-parity neighbours {runs}");
                }
            }
        }
    }

    #[test]
    fn random_mode_decodes_without_falling_back() {
        // Echoes at random positions: with the exception limit off (the random-mode default)
        // the decoder stays in chain mode and refines on every in-sequence LSP.
        let p = DcpewParams { ip_id: IpIdMode::Random, ..Default::default() };
        let mut w = window(&p, 10.0);
        let mut ids = IpIdSource::new(IpIdMode::Random, 9, 0);
        for i in 1..=400 {
            let pos = id_position(ids.next_id());
            echo(&mut w, i as Time * MS, i, if pos.is_msp() { 0b10 } else { 0b01 }, pos);
        }
        assert_eq!(w.decoder().mode(), Mode::Chains);
        assert!(w.decoder().stats().exceptions > 100);
        assert!(w.loss_stats().lsp_echoes > 50, "{:?}", w.loss_stats());
        assert_eq!(w.decoder().lf().digit(0), 0b10);
        // The same stream with DPCP's limit of 3 falls back to VCP mode.
        let mut w =
            window(&DcpewParams { ip_id: IpIdMode::Random, exception_limit: Some(3), ..Default::default() }, 10.0);
        let mut ids = IpIdSource::new(IpIdMode::Random, 9, 0);
        for i in 1..=400 {
            let pos = id_position(ids.next_id());
            echo(&mut w, i as Time * MS, i, 0b01, pos);
        }
        assert!(w.decoder().stats().fallbacks > 0);
    }

    #[test]
    fn bit_map_cf_and_the_t_boundary() {
        let mut b = BitMap::new(32, 16);
        for _ in 0..15 {
            b.push(true);
        }
        assert!(!b.cf(), "15 overload ACKs: not yet");
        b.push(true);
        assert!(b.cf(), "16: CF set");
        b.push(false);
        assert!(!b.cf(), "one non-overload ACK clears it");
        for _ in 0..15 {
            b.push(true);
        }
        assert!(!b.cf());
        b.push(true);
        assert!(b.cf());
        assert_eq!(b.bits() >> 32, 0, "N = 32 bits kept");
        let mut b = BitMap::new(64, 64);
        (0..64).for_each(|_| b.push(true));
        assert!(b.cf());
    }

    fn overload_acks(w: &mut DcpewWindow, t0: Time, n: u32) {
        for i in 0..n {
            let pos = if i % 2 == 0 { Position::MSP } else { Position::LSP };
            echo(w, t0, i, 0b11, pos);
        }
    }

    #[test]
    fn error_loss_keeps_cwnd_congestion_loss_cuts_once() {
        // CF clear (low-load echoes): a fast retransmit keeps cwnd.
        let mut w = window(&DcpewParams::default(), 40.0);
        for i in 0..20 {
            echo(&mut w, 0, i, 0b01, if i % 2 == 0 { Position::MSP } else { Position::LSP });
        }
        let c = w.cwnd;
        let a = ack(0, 0b01, Position::MSP);
        w.on_fast_retransmit(&a, &ctx(MS));
        assert!(w.in_recovery());
        assert!((w.cwnd_bytes() - (c + 3.0) * MSS as f64).abs() < 1e-6, "ssthresh = cwnd, inflated by 3");
        w.on_recovery_dupack(&a, &ctx(MS));
        w.on_recovery_exit(RecoveryExit::FullAck, &a, &ctx(MS));
        assert!((w.cwnd - c).abs() < 1e-9, "error loss: cwnd kept");
        assert_eq!(w.loss_stats().error_losses, 1);
        // CF set: 16 overload ACKs in a row. The first overload echo already cut (decoder MD),
        // so a loss within the hold does not cut again.
        let mut w = window(&DcpewParams::default(), 100.0);
        overload_acks(&mut w, 0, 16);
        assert!(w.bit_map().cf());
        let after_echo_md = w.cwnd;
        assert!(after_echo_md < 100.0);
        w.on_fast_retransmit(&a, &ctx(10 * MS));
        w.on_recovery_exit(RecoveryExit::FullAck, &a, &ctx(10 * MS));
        assert_eq!(w.cwnd, after_echo_md, "within the hold: no second cut");
        assert_eq!(w.loss_stats(), LossStats { congestion_losses: 1, lsp_echoes: 8, ..Default::default() });
        // After the hold: the loss cuts by the saved level's factor (11 11: 0.43), or ½.
        w.on_fast_retransmit(&a, &ctx(1_000 * MS));
        w.on_recovery_exit(RecoveryExit::FullAck, &a, &ctx(1_000 * MS));
        assert!((w.cwnd - 0.43 * after_echo_md).abs() < 1e-9, "{}", w.cwnd);
        let mut w = window(&DcpewParams { ew_loss_md: LossMd::Half, ..Default::default() }, 100.0);
        overload_acks(&mut w, 0, 16);
        let c = w.cwnd;
        w.on_fast_retransmit(&a, &ctx(1_000 * MS));
        w.on_recovery_exit(RecoveryExit::FullAck, &a, &ctx(1_000 * MS));
        assert!((w.cwnd - 0.5 * c).abs() < 1e-9);
        // T boundary: 15 overload ACKs after a low one is an error loss.
        let mut w = window(&DcpewParams::default(), 100.0);
        echo(&mut w, 0, 0, 0b01, Position::MSP);
        overload_acks(&mut w, 0, 15);
        assert!(!w.bit_map().cf());
        w.on_fast_retransmit(&a, &ctx(1_000 * MS));
        assert_eq!(w.loss_stats().error_losses, 1);
    }

    #[test]
    fn rto_is_tcp_unless_applied() {
        let mut w = window(&DcpewParams::default(), 30.0);
        w.on_rto(&ctx(0));
        assert_eq!(w.cwnd_pkts(), 1.0);
        let mut w = window(&DcpewParams { ew_apply_to_rto: true, ..Default::default() }, 30.0);
        w.on_rto(&ctx(0));
        assert_eq!(w.cwnd_pkts(), 30.0);
        overload_acks(&mut w, 0, 16);
        w.on_rto(&ctx(0));
        assert_eq!(w.cwnd_pkts(), 1.0, "CF set: TCP's RTO");
    }

    #[test]
    fn dpcp_laws_on_alternating_echoes() {
        // The same arithmetic as DPCP's window (rtt = t_p: mi_step = ξ, ai_step = α/cwnd).
        let mut w = window(&DcpewParams::default(), 10.0);
        echo(&mut w, 0, 1, 0b10, Position::MSP);
        let xi = Lf::dpcp(0b10, 0b11).xi(0.25);
        assert!((w.cwnd - (10.0 + xi + 0.1)).abs() < 1e-12);
        let c = w.cwnd;
        echo(&mut w, 0, 2, 0b01, Position::LSP);
        assert!((w.cwnd - (c + Lf::dpcp(0b10, 0b01).xi(0.25) + 1.0 / c)).abs() < 1e-12);
        assert_eq!(w.decoder().lf(), Lf::dpcp(0b10, 0b01));
        assert_eq!(w.loss_stats().lsp_echoes, 1);
    }
}
