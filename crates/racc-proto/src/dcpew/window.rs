//! DCP-EW's sender window [DCP-EW §III; docs/PROTOCOLS.md §4]: DPCP's chain window
//! ([`ChainWindow`], `dpcp/window.rs`: levels, MI+AI growth from the level's upper bound, MD
//! refinement, exceptions, VCP fallback) with DCP-EW's two changes plugged in.
//!
//! - **Ordering by the IP ID** ([`IpIdSource`], `ordering.rs`): every data packet takes the
//!   next ID of the flow's source (incrementing or seeded random) and its position is the ID's
//!   LSB; the seq/ack order mirrors it (Alg. 1) for the plaintext nodes behind an egress SM. In
//!   VCP mode seq/ack say MSP (routers on the plaintext side read MSP; the ID keeps its value:
//!   it is never chosen for the position). ACKs come back with DPCP's seq/ack position (the
//!   receiver is DPCP's [`crate::dpcp::DpcpEcho`]).
//! - **Loss differentiation** ([`LossDifferentiation`], DCP-EW §III.D): a bit map per flow,
//!   `BM = (BM << 1) | overload` on every ACK that carries an echo (overload = the decoded LF
//!   is in the overload zone, MSP 11, ρ ≥ 1; a bleached echo 00 shifts in 0). CF = the low T
//!   bits all set. On the 3rd duplicate ACK the transport retransmits; CF set: a congestion
//!   loss, MD by `ew_loss_md` (the saved level's factor, or ½); CF clear: an error loss, cwnd
//!   is kept. A loss MD is the episode's MD (docs/PROTOCOLS.md §4 [reconstructed]): the decoder's
//!   hold and AI-for-one-rtt are the one record of it, so a loss inside a running episode
//!   (echo- or loss-triggered) does not cut, and a loss MD starts an episode in which overload
//!   echoes hold, then AI, as after an echo's MD. Either way fast recovery runs NewReno's
//!   inflation and deflation around ssthresh = the kept (or reduced) window, and on exit
//!   cwnd = that window [reconstructed]. RTO: TCP's (cwnd = 1) unless `ew_apply_to_rto`, which
//!   keeps cwnd on an RTO with CF clear.

use super::ordering::IpIdSource;
use super::params::{DcpewParams, LossMd};
use crate::dpcp::decode::Decoder;
use crate::dpcp::levels::VCP_BETA;
use crate::dpcp::window::{ChainWindow, LossResponse};
use crate::endpoint::FlowConfig;
use crate::metrics::{MetricSink, MetricValue};
use crate::time::{Dur, Time};

/// Loss-differentiation counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossStats {
    /// Fast retransmits with CF set (congestion) and clear (error).
    pub congestion_losses: u64,
    pub error_losses: u64,
    /// Congestion losses that cut cwnd (the others fell in an MD episode).
    pub loss_mds: u64,
    /// RTOs whose cwnd was kept (`ew_apply_to_rto` with CF clear).
    pub rtos_kept: u64,
    /// ACK echoes decoded as LSPs in sequence (the 4-bit LF was refined).
    pub lsp_echoes: u64,
}

/// The loss-differentiation bit map (DCP-EW §III.D): N bits of history, CF over the low T.
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

/// DCP-EW's loss response (module docs).
#[derive(Clone, Debug)]
pub struct LossDifferentiation {
    bm: BitMap,
    loss_md: LossMd,
    apply_to_rto: bool,
    stats: LossStats,
}

impl LossDifferentiation {
    pub fn new(p: &DcpewParams) -> LossDifferentiation {
        LossDifferentiation {
            bm: BitMap::new(p.bm_bits, p.bm_threshold),
            loss_md: p.ew_loss_md,
            apply_to_rto: p.ew_apply_to_rto,
            stats: LossStats::default(),
        }
    }
}

impl LossResponse for LossDifferentiation {
    #[inline]
    fn on_echo(&mut self, overload: bool) {
        self.bm.push(overload);
    }

    /// CF clear: an error loss, keep cwnd. CF set: the episode's MD, unless one is running.
    fn on_fast_retransmit(&mut self, now: Time, cwnd: f64, rtt: Dur, decoder: &mut Decoder) -> Option<f64> {
        if !self.bm.cf() {
            self.stats.error_losses += 1;
            return Some(cwnd);
        }
        self.stats.congestion_losses += 1;
        if decoder.in_episode(now) {
            return Some(cwnd);
        }
        let f = match self.loss_md {
            LossMd::Half => 0.5,
            LossMd::Level => decoder.md_factor().unwrap_or(VCP_BETA),
            LossMd::None => return Some(cwnd),
        };
        decoder.note_md(now, rtt, cwnd);
        self.stats.loss_mds += 1;
        Some((f * cwnd).max(1.0))
    }

    fn keeps_cwnd_on_rto(&mut self) -> bool {
        let keep = self.apply_to_rto && (!self.bm.cf() || self.loss_md == LossMd::None);
        self.stats.rtos_kept += keep as u64;
        keep
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("congestion_losses", "events", MetricValue::Count(self.stats.congestion_losses));
        out.put("error_losses", "events", MetricValue::Count(self.stats.error_losses));
        out.put("loss_mds", "events", MetricValue::Count(self.stats.loss_mds));
        out.put("rtos_kept", "events", MetricValue::Count(self.stats.rtos_kept));
    }
}

/// DCP-EW's congestion controller.
pub type DcpewWindow = ChainWindow<IpIdSource, LossDifferentiation>;

impl DcpewWindow {
    /// A window for `mss`-byte segments of flow `cfg.flow`; random IP IDs are drawn from the
    /// scenario seed `cfg.seed` (`IpIdSource::new`). `p` must be valid.
    pub fn new(cfg: &FlowConfig, mss: u32, p: &DcpewParams) -> DcpewWindow {
        let laws = p.chain_laws();
        let ids = IpIdSource::new(p.ip_id, cfg.seed, cfg.flow, p.ip_id_seed);
        ChainWindow::with(cfg, mss, &laws, p.decoder(laws.initial_hold()), ids, LossDifferentiation::new(p))
    }

    pub fn bit_map(&self) -> BitMap {
        self.loss_response().bm
    }

    pub fn loss_stats(&self) -> LossStats {
        LossStats { lsp_echoes: self.lsp_echoes(), ..self.loss_response().stats }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{Ack, CongestionControl, SenderCtx, Signal};
    use crate::dcpew::ordering::id_position;
    use crate::dcpew::params::IpIdMode;
    use crate::dpcp::decode::Mode;
    use crate::dpcp::levels::Lf;
    use crate::dpcp::ordering::{impose, wire_position, Position};
    use crate::packet::{ecn, tcp_checksum, Kind, Packet, TcpHeader};
    use crate::tcp::recovery::drive;
    use crate::time::NS_PER_MS;

    const MS: Time = NS_PER_MS;
    const MSS: u32 = 1000;
    const ISN: u32 = 0x8000_0000;

    fn ctx(now: Time) -> SenderCtx {
        SenderCtx {
            now,
            mss: MSS,
            flight: 20_000,
            srtt: Some(200 * MS),
            latest_rtt: Some(200 * MS),
            dupacks: 3,
            ..Default::default()
        }
    }

    fn window(p: &DcpewParams, cwnd: f64) -> DcpewWindow {
        let mut cfg = FlowConfig::new(0, 1040);
        cfg.isn = ISN;
        let mut w = DcpewWindow::new(&cfg, MSS, p);
        w.set_cwnd(cwnd);
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
        w.on_wire_arrival(&mut a, &SenderCtx { cwnd: w.window(), ..ctx(now) });
        w.on_ack(&Ack { packet: &a, acked_bytes: MSS as u64, reported_pkts: 1.0 }, &ctx(now));
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
        let mut ids = IpIdSource::new(IpIdMode::Random, 9, 0, 0);
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
        let mut ids = IpIdSource::new(IpIdMode::Random, 9, 0, 0);
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
        let c = w.cwnd_pkts();
        let mut r = drive::loss(&mut w, &ctx(MS));
        assert!((r.cwnd() - (c + 3.0) * MSS as f64).abs() < 1e-6, "ssthresh = cwnd, inflated by 3");
        r.on_dupack();
        drive::exit(&mut w, &r, 20_000);
        assert!((w.cwnd_pkts() - c).abs() < 1e-9, "error loss: cwnd kept");
        assert_eq!(w.loss_stats().error_losses, 1);
        // CF set: 16 overload ACKs in a row. The first overload echo already cut (decoder MD),
        // so a loss within the hold does not cut again.
        let mut w = window(&DcpewParams::default(), 100.0);
        overload_acks(&mut w, 0, 16);
        assert!(w.bit_map().cf());
        let after_echo_md = w.cwnd_pkts();
        assert!(after_echo_md < 100.0);
        let r = drive::loss(&mut w, &ctx(10 * MS));
        drive::exit(&mut w, &r, 20_000);
        assert_eq!(w.cwnd_pkts(), after_echo_md, "within the hold: no second cut");
        assert_eq!(w.loss_stats(), LossStats { congestion_losses: 1, lsp_echoes: 8, ..Default::default() });
        // After the hold: the loss cuts by the saved level's factor (11 11: 0.43), or ½.
        let r = drive::loss(&mut w, &ctx(1_000 * MS));
        drive::exit(&mut w, &r, 20_000);
        assert!((w.cwnd_pkts() - 0.43 * after_echo_md).abs() < 1e-9, "{}", w.cwnd_pkts());
        let mut w = window(&DcpewParams { ew_loss_md: LossMd::Half, ..Default::default() }, 100.0);
        overload_acks(&mut w, 0, 16);
        let c = w.cwnd_pkts();
        let r = drive::loss(&mut w, &ctx(1_000 * MS));
        drive::exit(&mut w, &r, 20_000);
        assert!((w.cwnd_pkts() - 0.5 * c).abs() < 1e-9);
        // T boundary: 15 overload ACKs after a low one is an error loss.
        let mut w = window(&DcpewParams::default(), 100.0);
        echo(&mut w, 0, 0, 0b01, Position::MSP);
        overload_acks(&mut w, 0, 15);
        assert!(!w.bit_map().cf());
        drive::loss(&mut w, &ctx(1_000 * MS));
        assert_eq!(w.loss_stats().error_losses, 1);
    }

    #[test]
    fn a_loss_md_is_the_episodes_md_for_the_decoder() {
        // 16 overload echoes at t = 0 set CF (and cut once, by echo: 100 → 43). A congestion
        // loss at 1 s, after that episode (hold 200 ms + rtt 200 ms), cuts by the level (11 11:
        // 0.43) and starts a new episode in the decoder: overload echoes within its hold do
        // nothing, then AI for one rtt, and only after hold + rtt cut again (docs/PROTOCOLS.md §4).
        let mut w = window(&DcpewParams::default(), 100.0);
        overload_acks(&mut w, 0, 16);
        let before = w.cwnd_pkts();
        let r = drive::loss(&mut w, &ctx(1_000 * MS));
        drive::exit(&mut w, &r, 20_000);
        let after_loss = w.cwnd_pkts();
        assert!((after_loss - 0.43 * before).abs() < 1e-9, "{after_loss}");
        assert_eq!((w.loss_stats().loss_mds, w.decoder().stats().mds), (1, 1));
        assert!(w.decoder().in_episode(1_399 * MS) && !w.decoder().in_episode(1_400 * MS));
        echo(&mut w, 1_010 * MS, 16, 0b11, Position::MSP);
        echo(&mut w, 1_011 * MS, 17, 0b11, Position::LSP);
        echo(&mut w, 1_199 * MS, 18, 0b11, Position::MSP);
        assert_eq!(w.cwnd_pkts(), after_loss, "overload within the loss MD's hold: no second cut");
        echo(&mut w, 1_200 * MS, 19, 0b11, Position::LSP);
        let ai = w.cwnd_pkts();
        assert!((ai - (after_loss + 1.0 / after_loss)).abs() < 1e-9, "then AI for one rtt: {ai}");
        echo(&mut w, 1_400 * MS, 20, 0b11, Position::MSP);
        assert!((w.cwnd_pkts() - 0.43 * ai).abs() < 1e-9, "after hold + rtt: the next MD");
        assert_eq!(w.decoder().stats().mds, 2);
        // A second loss inside the new episode does not cut either.
        let c = w.cwnd_pkts();
        let r = drive::loss(&mut w, &ctx(1_500 * MS));
        drive::exit(&mut w, &r, 20_000);
        assert_eq!(w.cwnd_pkts(), c);
        assert_eq!((w.loss_stats().congestion_losses, w.loss_stats().loss_mds), (2, 1));
    }

    #[test]
    fn rto_is_tcp_unless_applied() {
        let mut w = window(&DcpewParams::default(), 30.0);
        drive::signal(&mut w, Signal::Timeout, &ctx(0));
        assert_eq!(w.cwnd_pkts(), 1.0);
        let mut w = window(&DcpewParams { ew_apply_to_rto: true, ..Default::default() }, 30.0);
        drive::signal(&mut w, Signal::Timeout, &ctx(0));
        assert_eq!(w.cwnd_pkts(), 30.0);
        overload_acks(&mut w, 0, 16);
        drive::signal(&mut w, Signal::Timeout, &ctx(0));
        assert_eq!(w.cwnd_pkts(), 1.0, "CF set: TCP's RTO");
    }

    #[test]
    fn loss_md_none_never_cuts_on_a_loss() {
        // The ablation: CF set (16 overload ACKs), past the echo's episode, a fast retransmit
        // still keeps cwnd (counted as a congestion loss, no loss MD); with ew_apply_to_rto an
        // RTO keeps it too, CF or not.
        let p = DcpewParams { ew_loss_md: LossMd::None, ew_apply_to_rto: true, ..Default::default() };
        let mut w = window(&p, 100.0);
        overload_acks(&mut w, 0, 16);
        assert!(w.bit_map().cf());
        let c = w.cwnd_pkts();
        let r = drive::loss(&mut w, &ctx(1_000 * MS));
        drive::exit(&mut w, &r, 20_000);
        assert_eq!(w.cwnd_pkts(), c);
        assert_eq!((w.loss_stats().congestion_losses, w.loss_stats().loss_mds), (1, 0));
        drive::signal(&mut w, Signal::Timeout, &ctx(2_000 * MS));
        assert_eq!(w.cwnd_pkts(), c, "RTO with CF set: kept");
        assert_eq!(w.loss_stats().rtos_kept, 1);
        // Without ew_apply_to_rto the RTO is TCP's.
        let mut w = window(&DcpewParams { ew_loss_md: LossMd::None, ..Default::default() }, 30.0);
        drive::signal(&mut w, Signal::Timeout, &ctx(0));
        assert_eq!(w.cwnd_pkts(), 1.0);
    }

    #[test]
    fn dpcp_laws_on_alternating_echoes() {
        // The same arithmetic as DPCP's window (rtt = t_p: mi_step = ξ, ai_step = α/cwnd).
        let mut w = window(&DcpewParams::default(), 10.0);
        echo(&mut w, 0, 1, 0b10, Position::MSP);
        let xi = Lf::dpcp(0b10, 0b11).xi(0.25);
        assert!((w.cwnd_pkts() - (10.0 + xi + 0.1)).abs() < 1e-12);
        let c = w.cwnd_pkts();
        echo(&mut w, 0, 2, 0b01, Position::LSP);
        assert!((w.cwnd_pkts() - (c + Lf::dpcp(0b10, 0b01).xi(0.25) + 1.0 / c)).abs() < 1e-12);
        assert_eq!(w.decoder().lf(), Lf::dpcp(0b10, 0b01));
        assert_eq!(w.loss_stats().lsp_echoes, 1);
    }
}
