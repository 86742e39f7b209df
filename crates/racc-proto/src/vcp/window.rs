//! VCP's congestion controller for the TCP transport (TCP/VCP; VCP-DCCP App. A3–A5,
//! docs/PROTOCOLS.md §2): [`VcpLaws`] on a window held in packets (f64), exposed in bytes (× MSS).
//! Data packets leave with ECN 01 (docs/PROTOCOLS.md §1). Loss is TCP's: the transport's fast
//! recovery halves (`Response::Halve`) and on its exit the VCP laws resume from NewReno's exit
//! window, with no slow start [checked: reference code]; a timeout sets cwnd to 1 packet.
//!
//! Choices where the sources are silent [reconstructed]:
//! - `rtt` is SRTT, else the latest sample, else t_p (no sample yet: one MI step = μ).
//! - Retransmissions are sent at 01 as well (unlike RFC 3168's Not-ECT rule for TCP): the code
//!   on their ACKs is as current as any other.
//! - RFC 3168 ECN-Echo is ignored: VCP reads the code from the ACK's echo field.
//! - A lost SYN leaves a window of one packet (as RFC 5681 §3.1 for TCP).

use super::ai_law::{AiLawName, Ns2Ai};
use super::laws::{MdEpisode, VcpLaws};
use super::params::VcpParams;
use crate::cc::{Ack, CongestionControl, Response, SenderCtx, Signal};
use crate::endpoint::FlowConfig;
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{ecn, Kind, Packet};
use crate::time::{secs, to_secs, Dur, Time};

/// TCP/VCP's controller.
#[derive(Clone, Debug)]
pub struct VcpWindow {
    laws: VcpLaws,
    mss: f64,
    /// Congestion window, packets.
    cwnd: f64,
    /// Packets; bounds the optional initial slow start (`cfg.initial_ssthresh`, else ∞).
    ssthresh: f64,
    slow_start: bool,
    /// cwnd (packets), slow start and the MD episode before the first timeout of an episode,
    /// for a spurious-timeout undo.
    before_rto: Option<(f64, bool, MdEpisode)>,
    last_code: u8,
    /// `pacing_gain` (`vcp/pacing.rs`).
    pacing_gain: Option<f64>,
    /// SRTT, else the latest sample, else t_p, ns: what pacing spreads the window over.
    rtt: Dur,
    /// `ai_ns2` under `ai_law = "ns2"`: its `tick` is the RTT clock the laws scale by.
    clock: Option<Ns2Ai>,
}

impl VcpWindow {
    /// A window for `mss`-byte segments: cwnd = `cfg.initial_window` or `p.iw` packets.
    /// `p` must be valid.
    pub fn new(cfg: &FlowConfig, mss: u32, p: &VcpParams) -> VcpWindow {
        let cwnd = cfg.initial_window.map_or(p.iw, |w| w.max(1) as f64);
        let mss_f = mss.max(1) as f64;
        VcpWindow {
            laws: VcpLaws::new(p),
            mss: mss_f,
            cwnd,
            ssthresh: cfg.initial_ssthresh.map_or(f64::INFINITY, |b| b as f64 / mss_f),
            slow_start: p.initial_slow_start,
            before_rto: None,
            last_code: ecn::NOT_ECT,
            pacing_gain: p.pacing_gain,
            rtt: secs(p.t_p),
            clock: (p.ai_law == AiLawName::Ns2).then_some(p.ai_ns2),
        }
    }

    /// Congestion window in packets (outside the transport's recovery).
    pub fn cwnd_pkts(&self) -> f64 {
        self.cwnd
    }

    /// The code echoed by the last new ACK.
    pub fn last_code(&self) -> u8 {
        self.last_code
    }

    pub fn laws(&self) -> &VcpLaws {
        &self.laws
    }

    /// Multiplicative decreases (A5) so far.
    pub fn md_count(&self) -> u64 {
        self.laws.md_count()
    }

    /// Overload reports before this time are ignored (the MD hold).
    pub fn hold_until(&self) -> Time {
        self.laws.episode().hold_until
    }

    /// Overload reports before this time (and after `hold_until`) give AI.
    pub fn ai_until(&self) -> Time {
        self.laws.episode().ai_until
    }

    pub fn in_slow_start(&self) -> bool {
        self.slow_start && self.cwnd < self.ssthresh
    }

    /// The RTT the laws scale by: SRTT, else the latest sample, else t_p; under `ai_law =
    /// "ns2"` truncated to `ai_ns2.tick` as the reference sender does (`ai_law.rs`).
    fn rtt_s(&self, ctx: &SenderCtx) -> f64 {
        let rtt = ctx.srtt.or(ctx.latest_rtt).map_or(self.laws.t_p_s(), to_secs);
        self.clock.map_or(rtt, |c| c.clock(rtt))
    }
}

impl CongestionControl for VcpWindow {
    fn window(&self) -> f64 {
        self.cwnd * self.mss
    }

    fn ssthresh(&self) -> f64 {
        if self.slow_start {
            self.ssthresh * self.mss
        } else {
            f64::INFINITY
        }
    }

    /// NewReno's exit window after a loss, or one segment after a timeout, back into packets.
    fn set_window(&mut self, window: f64, _ssthresh: f64) {
        self.cwnd = (window / self.mss).max(1.0);
    }

    fn on_ack(&mut self, ack: &Ack<'_>, ctx: &SenderCtx) {
        if let Some(r) = ctx.srtt.or(ctx.latest_rtt) {
            self.rtt = r.max(1);
        }
        if ack.is_duplicate() {
            return;
        }
        let code = ack.packet.tcp_hdr().map_or(ecn::NOT_ECT, |h| h.echo & 0b11);
        self.last_code = code;
        if self.in_slow_start() {
            // RFC 5681 eq. (2): + min(acked, SMSS) per ACK, codes ignored until the first loss.
            self.cwnd += (ack.acked_bytes as f64 / self.mss).min(1.0);
            return;
        }
        let rtt = self.rtt_s(ctx);
        self.cwnd = self.laws.on_code(self.cwnd, code, ack.reported_pkts, rtt, ctx.now);
    }

    /// A loss: TCP's halving (and the end of the optional initial slow start); a timeout or a
    /// lost SYN: one packet, the laws resume without slow start; ECN-Echo is not VCP's signal.
    fn on_congestion(&mut self, signal: Signal, ctx: &SenderCtx) -> Response {
        match signal {
            Signal::Loss => {
                self.slow_start = false;
                Response::Halve
            }
            Signal::Timeout => {
                if ctx.consecutive_rtos == 0 {
                    self.before_rto = Some((self.cwnd, self.slow_start, self.laws.episode()));
                }
                self.slow_start = false;
                Response::SetWindow(self.mss)
            }
            Signal::SynTimeout => Response::SetWindow(self.mss),
            Signal::EcnEcho => Response::Keep,
        }
    }

    /// The timeout was spurious (the transport never undoes one that came during fast
    /// recovery): back to the window and the MD hold it found. An MD of the one-packet window
    /// since then cut nothing, and its hold must not shield the restored window from the next
    /// overload code.
    fn on_spurious_timeout(&mut self, _ctx: &SenderCtx) {
        if let Some((cwnd, slow_start, episode)) = self.before_rto.take() {
            (self.cwnd, self.slow_start) = (cwnd, slow_start);
            self.laws.restore_episode(episode);
        }
    }

    /// Data packets carry the VCP-capable codepoint 01 (docs/PROTOCOLS.md §1); SYNs stay Not-ECT.
    fn on_send(&mut self, pkt: &mut Packet, _ctx: &SenderCtx) {
        if pkt.kind == Kind::Data {
            pkt.ecn = ecn::ECT1;
        }
    }

    /// One window per smoothed RTT times `pacing_gain`, when set (`vcp/pacing.rs`).
    fn pacing_rate(&self) -> Option<f64> {
        super::window_pacing_rate(self.pacing_gain, self.cwnd, self.mss, self.rtt)
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("vcp_mds", "events", MetricValue::Count(self.laws.md_count()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TcpHeader;
    use crate::tcp::recovery::drive;
    use crate::tcp::{growth_packets, FastRecovery, RecoveryExit};
    use crate::time::NS_PER_MS;
    use crate::vcp::{ai_step, mi_step, MdHold};

    const MS: Time = NS_PER_MS;
    const MSS: u32 = 1000;

    fn ack(code: u8) -> Packet {
        let h = TcpHeader { echo: code, ..Default::default() };
        Packet::tcp(0, Kind::Ack, 40, 0, h)
    }

    fn ctx(now: Time, rtt_ms: u64) -> SenderCtx {
        SenderCtx { now, mss: MSS, srtt: Some(rtt_ms * MS), latest_rtt: Some(rtt_ms * MS), ..Default::default() }
    }

    /// A new ACK of `acked` bytes, `covered` of whose packets duplicates already reported.
    fn new_ack_covered(w: &mut VcpWindow, acked: u64, covered: u64, a: &Packet, c: &SenderCtx) {
        w.on_ack(&Ack { packet: a, acked_bytes: acked, reported_pkts: growth_packets(acked, MSS, covered) }, c);
    }

    fn new_ack(w: &mut VcpWindow, acked: u64, a: &Packet, c: &SenderCtx) {
        new_ack_covered(w, acked, 0, a, c);
    }

    /// A timeout, its response applied as the transport does.
    fn timeout(w: &mut VcpWindow, c: &SenderCtx) {
        drive::signal(w, Signal::Timeout, c);
    }

    fn window(cwnd: f64, p: &VcpParams) -> VcpWindow {
        let mut w = VcpWindow::new(&FlowConfig::new(0, 1040), MSS, p);
        w.cwnd = cwnd;
        w
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn defaults_are_the_seed_values() {
        let p = VcpParams::default();
        assert_eq!((p.t_p, p.h, p.alpha, p.beta, p.sigma_mi, p.sigma_ai), (0.2, 0.25, 1.0, 0.875, 2.5, 10.0));
        assert!(close(p.mu(), 0.0625), "μ = h(1/0.8 − 1)");
        assert_eq!((p.md_hold, p.iw, p.initial_slow_start), (MdHold::Tp, 2.0, false));
        let w = VcpWindow::new(&FlowConfig::new(0, 1040), MSS, &p);
        assert_eq!((w.cwnd_pkts(), w.window()), (2.0, 2000.0));
        let mut cfg = FlowConfig::new(0, 1040);
        cfg.initial_window = Some(5);
        assert_eq!(VcpWindow::new(&cfg, MSS, &p).cwnd_pkts(), 5.0);
    }

    /// A3/A4 arithmetic at rtt = 50, 200 and 800 ms (t_p = 200 ms, μ = 0.0625, α = 1):
    /// rtt/t_p = 0.25, 1 and 4, so the MI exponent is 0.25, 1 and min(4, σ_MI = 2.5), and the
    /// AI factor (rtt/t_p)² is 0.0625, 1 and min(16, σ_AI = 10).
    #[test]
    fn mi_and_ai_with_rtt_scaling_and_caps() {
        let p = VcpParams::default();
        let cases =
            [(50, 1.0625f64.powf(0.25) - 1.0, 0.0625), (200, 0.0625, 1.0), (800, 1.0625f64.powf(2.5) - 1.0, 10.0)];
        for (rtt, mi, ai_num) in cases {
            assert!(close(mi_step(0.0625, rtt as f64 / 1e3, 0.2, 2.5), mi));
            assert!(close(ai_step(1.0, rtt as f64 / 1e3, 0.2, 10.0, 20.0), ai_num / 20.0));
            // MI: additive per acknowledged packet (k = 1, then k = 3), never compounding; the
            // packets duplicates already reported count once (`growth_packets`).
            let mut w = window(20.0, &p);
            new_ack(&mut w, 1000, &ack(0b01), &ctx(MS, rtt));
            assert!(close(w.cwnd_pkts(), 20.0 + mi), "rtt {rtt}: {}", w.cwnd_pkts());
            new_ack(&mut w, 3000, &ack(0b01), &ctx(MS, rtt));
            assert!(close(w.cwnd_pkts(), 20.0 + 4.0 * mi), "rtt {rtt}: {}", w.cwnd_pkts());
            new_ack_covered(&mut w, 3000, 2, &ack(0b01), &ctx(MS, rtt));
            assert!(close(w.cwnd_pkts(), 20.0 + 5.0 * mi), "rtt {rtt}: {}", w.cwnd_pkts());
            // AI: α·min((rtt/t_p)², σ_AI)/cwnd per packet, cwnd read before the ACK.
            let mut w = window(20.0, &p);
            new_ack(&mut w, 2000, &ack(0b10), &ctx(MS, rtt));
            assert!(close(w.cwnd_pkts(), 20.0 + 2.0 * ai_num / 20.0), "rtt {rtt}: {}", w.cwnd_pkts());
        }
        // Per t_p, MI multiplies the window by (1+μ) whatever the RTT below the cap: one RTT of
        // ACKs (cwnd of them) multiplies it by ≈ 1 + cwnd·mi_step per rtt.
        for rtt in [50u64, 100, 200] {
            let mut w = window(1000.0, &p);
            for _ in 0..1000 {
                new_ack(&mut w, 1000, &ack(0b01), &ctx(MS, rtt));
            }
            let per_tp = (w.cwnd_pkts() / 1000.0).powf(200.0 / rtt as f64);
            assert!((per_tp - 1.0625).abs() < 0.002, "rtt {rtt}: ×{per_tp} per t_p");
        }
        // The caps bind beyond rtt = 500 ms (σ_MI) and √10·200 ≈ 632 ms (σ_AI).
        assert!(close(mi_step(0.0625, 0.5, 0.2, 2.5), mi_step(0.0625, 0.9, 0.2, 2.5)));
        assert!(mi_step(0.0625, 0.49, 0.2, 2.5) < mi_step(0.0625, 0.5, 0.2, 2.5));
        assert!(close(ai_step(1.0, 0.64, 0.2, 10.0, 1.0), 10.0));
        assert!(ai_step(1.0, 0.63, 0.2, 10.0, 1.0) < 10.0);
    }

    /// `ai_law = "ns2"` through TCP/VCP's controller: AI (code 10, and 11 within AI-for-one-rtt)
    /// adds α·w·S(rtt/t_d)/cwnd per packet, S = 0.2q below 20 ms, q² to 500 ms, (q − 5) + 25
    /// beyond (q = rtt/100 ms): 10 ms → 0.02, 300 ms → 9, 900 ms → 29. MI is unchanged.
    #[test]
    fn ns2_ai_law_in_the_three_rtt_regimes() {
        use crate::vcp::AiLawName;
        let p = VcpParams { ai_law: AiLawName::Ns2, ..Default::default() };
        for (rtt, s) in [(10u64, 0.02), (300, 9.0), (900, 29.0)] {
            let mut w = window(20.0, &p);
            new_ack(&mut w, 2000, &ack(0b10), &ctx(MS, rtt));
            assert!(close(w.cwnd_pkts(), 20.0 + 2.0 * s / 20.0), "rtt {rtt}: {}", w.cwnd_pkts());
            // MI as seed001's (the reference code's exponent cap 2.5 = σ_MI).
            let mut w = window(20.0, &p);
            new_ack(&mut w, 1000, &ack(0b01), &ctx(MS, rtt));
            assert!(close(w.cwnd_pkts(), 20.0 + mi_step(0.0625, rtt as f64 / 1e3, 0.2, 2.5)));
            // Overload after the hold, within one rtt: AI by the same law.
            let mut w = window(16.0, &p);
            new_ack(&mut w, 1000, &ack(0b11), &ctx(1000 * MS, rtt));
            new_ack(&mut w, 1000, &ack(0b11), &ctx(1200 * MS, rtt));
            assert!(close(w.cwnd_pkts(), 14.0 + s / 14.0), "rtt {rtt}: {}", w.cwnd_pkts());
        }
    }

    /// `ai_ns2.tick` (the reference sender's 10 ms RTT clock, `vcp-src.cc` rtt_update): srtt
    /// 109 ms scales MI, AI and the AI-for-one-rtt window as 100 ms, 5 ms as one tick; off by
    /// default and under `ai_law = "seed001"`.
    #[test]
    fn ns2_rtt_clock_truncates_srtt_to_whole_ticks() {
        use crate::vcp::{AiLawName, Ns2Ai};
        let ns2 = |tick| VcpParams {
            ai_law: AiLawName::Ns2,
            ai_ns2: Ns2Ai { tick, ..Default::default() },
            ..Default::default()
        };
        for (rtt, as_ms) in [(109u64, 100.0), (110, 110.0), (5, 10.0)] {
            let mut w = window(20.0, &ns2(0.01));
            new_ack(&mut w, 1000, &ack(0b10), &ctx(MS, rtt));
            let s = Ns2Ai::default().scale(as_ms / 1e3);
            assert!(close(w.cwnd_pkts(), 20.0 + s / 20.0), "rtt {rtt}: {}", w.cwnd_pkts());
            let mut w = window(20.0, &ns2(0.01));
            new_ack(&mut w, 1000, &ack(0b01), &ctx(MS, rtt));
            assert!(close(w.cwnd_pkts(), 20.0 + mi_step(0.0625, as_ms / 1e3, 0.2, 2.5)), "rtt {rtt}");
        }
        let t0 = 1000 * MS;
        let mut w = window(16.0, &ns2(0.01));
        new_ack(&mut w, 1000, &ack(0b11), &ctx(t0, 109));
        assert_eq!(w.ai_until(), t0 + 300 * MS, "t_p + the truncated rtt");
        // Exact by default, and the seed001 law never reads the tick.
        for p in [ns2(0.0), VcpParams { ai_ns2: Ns2Ai { tick: 0.01, ..Default::default() }, ..Default::default() }] {
            let mut w = window(20.0, &p);
            new_ack(&mut w, 1000, &ack(0b01), &ctx(MS, 109));
            assert!(close(w.cwnd_pkts(), 20.0 + mi_step(0.0625, 0.109, 0.2, 2.5)));
        }
        let e = crate::params::parse::<VcpParams>(&serde_json::json!({"ai_ns2": {"tick": -0.01}})).unwrap();
        assert_eq!(e.validate().unwrap_err().key, "ai_ns2.tick");
    }

    #[test]
    fn md_once_then_hold_then_ai_for_one_rtt() {
        let p = VcpParams::default(); // md_hold = t_p = 200 ms
        let rtt = 50;
        let mut w = window(16.0, &p);
        // First overload report at 1 s: A5, cwnd = 0.875·16 = 14.
        let t0 = 1000 * MS;
        new_ack(&mut w, 3000, &ack(0b11), &ctx(t0, rtt));
        assert_eq!((w.cwnd_pkts(), w.md_count()), (14.0, 1), "one MD however many packets the ACK covers");
        assert_eq!((w.hold_until(), w.ai_until()), (t0 + 200 * MS, t0 + 250 * MS));
        // Overload reports within t_p: nothing (the LF still measures the pre-MD load).
        for t in [t0, t0 + 50 * MS, t0 + 199 * MS] {
            new_ack(&mut w, 1000, &ack(0b11), &ctx(t, rtt));
            assert_eq!((w.cwnd_pkts(), w.md_count()), (14.0, 1), "at {t}");
        }
        // LOW and HIGH reports keep acting during the hold.
        new_ack(&mut w, 1000, &ack(0b01), &ctx(t0 + 100 * MS, rtt));
        let mi = mi_step(0.0625, 0.05, 0.2, 2.5);
        assert!(close(w.cwnd_pkts(), 14.0 + mi));
        w.cwnd = 14.0;
        // After the hold, for one rtt: AI, α(rtt/t_p)²/cwnd per packet.
        new_ack(&mut w, 2000, &ack(0b11), &ctx(t0 + 200 * MS, rtt));
        assert!(close(w.cwnd_pkts(), 14.0 + 2.0 * 0.0625 / 14.0), "{}", w.cwnd_pkts());
        w.cwnd = 14.0;
        new_ack(&mut w, 1000, &ack(0b11), &ctx(t0 + 250 * MS - 1, rtt));
        assert!(close(w.cwnd_pkts(), 14.0 + 0.0625 / 14.0));
        assert_eq!(w.md_count(), 1);
        // Then the next overload report is a new MD.
        w.cwnd = 16.0;
        new_ack(&mut w, 1000, &ack(0b11), &ctx(t0 + 250 * MS, rtt));
        assert_eq!((w.cwnd_pkts(), w.md_count()), (14.0, 2));
        // Floor at one packet.
        let mut w = window(1.0, &p);
        new_ack(&mut w, 1000, &ack(0b11), &ctx(t0, rtt));
        assert_eq!(w.cwnd_pkts(), 1.0);
    }

    #[test]
    fn md_hold_alternatives() {
        let t0 = 1000 * MS;
        // VCP-DCCP's literal wording (hold 0): AI for one rtt, then MD again.
        let p = VcpParams { md_hold: MdHold::Secs(0.0), ..Default::default() };
        let mut w = window(16.0, &p);
        new_ack(&mut w, 1000, &ack(0b11), &ctx(t0, 100));
        assert_eq!((w.hold_until(), w.ai_until()), (t0, t0 + 100 * MS));
        new_ack(&mut w, 1000, &ack(0b11), &ctx(t0 + 99 * MS, 100));
        assert_eq!(w.md_count(), 1);
        assert!(w.cwnd_pkts() > 14.0);
        new_ack(&mut w, 1000, &ack(0b11), &ctx(t0 + 100 * MS, 100));
        assert_eq!(w.md_count(), 2);
        // MPCP's reading (hold one rtt).
        let p = VcpParams { md_hold: MdHold::Rtt, ..Default::default() };
        let mut w = window(16.0, &p);
        new_ack(&mut w, 1000, &ack(0b11), &ctx(t0, 100));
        assert_eq!((w.hold_until(), w.ai_until()), (t0 + 100 * MS, t0 + 200 * MS));
        // Until the last echo of a pre-MD load factor (2·t_p + rtt = 500 ms), then AI one rtt.
        let p: VcpParams = crate::params::parse(&serde_json::json!({"md_hold": "2t_p+rtt"})).unwrap();
        let mut w = window(16.0, &p);
        new_ack(&mut w, 1000, &ack(0b11), &ctx(t0, 100));
        assert_eq!((w.hold_until(), w.ai_until()), (t0 + 500 * MS, t0 + 600 * MS));
        let e = crate::params::parse::<VcpParams>(&serde_json::json!({"md_hold": "2rtt"})).unwrap_err();
        assert!(e.reason.contains("2t_p+rtt"), "{}", e.reason);
    }

    /// What the transport does with VCP's responses (its own tests check the recovery).
    #[test]
    fn loss_halves_via_newreno_then_vcp_resumes_without_slow_start() {
        let p = VcpParams::default();
        let mut w = window(20.0, &p);
        let mut c = ctx(MS, 100);
        c.flight = 20_000;
        c.dupacks = 3;
        assert_eq!(w.on_congestion(Signal::Loss, &c), Response::Halve);
        // RFC 5681: ssthresh = flight/2 = 10 pkts, cwnd = ssthresh + 3; the recovery's exit
        // with 9 packets outstanding: min(ssthresh, flight + 1) = 10 pkts.
        let mut r = FastRecovery::halving(c.flight as f64, 3, MSS, false);
        assert_eq!((r.cwnd(), r.ssthresh()), (13_000.0, 10_000.0));
        r.on_dupack();
        w.set_window(r.exit(RecoveryExit::FullAck, 9000), r.ssthresh());
        assert_eq!(w.cwnd_pkts(), 10.0);
        assert_eq!(w.ssthresh(), f64::INFINITY, "VCP has no slow-start threshold");
        // VCP's MI continues from there.
        new_ack(&mut w, 1000, &ack(0b01), &ctx(2 * MS, 200));
        assert!(close(w.cwnd_pkts(), 10.0625));
        // RTO: one packet, then MI (not slow start).
        assert_eq!(w.on_congestion(Signal::Timeout, &ctx(3 * MS, 200)), Response::SetWindow(1000.0));
        w.set_window(1000.0, f64::INFINITY);
        assert_eq!(w.cwnd_pkts(), 1.0);
        new_ack(&mut w, 1000, &ack(0b01), &ctx(4 * MS, 200));
        assert!(close(w.cwnd_pkts(), 1.0625));
        // A lost SYN leaves one packet; ECN-Echo is not VCP's signal.
        assert_eq!(w.on_congestion(Signal::SynTimeout, &c), Response::SetWindow(1000.0));
        assert_eq!(w.on_congestion(Signal::EcnEcho, &c), Response::Keep);
        assert!(close(w.cwnd_pkts(), 1.0625));
    }

    #[test]
    fn optional_initial_slow_start_until_first_loss() {
        let p = VcpParams { initial_slow_start: true, ..Default::default() };
        let mut w = window(2.0, &p);
        // Slow start ignores the codes: +1 packet per ACK even on overload.
        for _ in 0..6 {
            new_ack(&mut w, 1000, &ack(0b11), &ctx(MS, 100));
        }
        assert_eq!((w.cwnd_pkts(), w.md_count()), (8.0, 0));
        let mut c = ctx(MS, 100);
        c.flight = 8000;
        c.dupacks = 3;
        assert_eq!(w.on_congestion(Signal::Loss, &c), Response::Halve);
        let r = FastRecovery::halving(c.flight as f64, 3, MSS, false);
        w.set_window(r.exit(RecoveryExit::FullAck, 0), r.ssthresh());
        assert!(!w.in_slow_start());
        let before = w.cwnd_pkts();
        new_ack(&mut w, 1000, &ack(0b11), &ctx(10 * MS, 100));
        assert_eq!((w.cwnd_pkts(), w.md_count()), (before * 0.875, 1), "VCP laws after the first loss");
        // Default: no slow start, codes act from the first ACK.
        let mut w = window(2.0, &VcpParams::default());
        new_ack(&mut w, 1000, &ack(0b01), &ctx(MS, 200));
        assert!(close(w.cwnd_pkts(), 2.0625));
    }

    #[test]
    fn bleached_code_grows_like_tcp_and_data_leaves_at_01() {
        let mut w = window(10.0, &VcpParams::default());
        new_ack(&mut w, 1000, &ack(0b00), &ctx(MS, 100));
        assert!(close(w.cwnd_pkts(), 10.1));
        // Data at 01 (retransmissions too); SYNs untouched.
        let mut d = Packet::tcp(0, Kind::Data, 1040, 1000, TcpHeader::default());
        d.ecn = ecn::ECT0;
        w.on_send(&mut d, &ctx(MS, 100));
        assert_eq!(d.ecn, ecn::ECT1);
        let mut s = Packet::tcp(0, Kind::Syn, 40, 0, TcpHeader::default());
        w.on_send(&mut s, &ctx(MS, 100));
        assert_eq!(s.ecn, ecn::NOT_ECT);
        // RFC 3168 ECE is not VCP's signal.
        assert_eq!(w.on_congestion(Signal::EcnEcho, &ctx(MS, 100)), Response::Keep);
        assert!(close(w.cwnd_pkts(), 10.1));
    }

    #[test]
    fn params_parse_and_validate() {
        use crate::params::parse;
        let p: VcpParams = parse(&serde_json::json!({"md_hold": "rtt", "tcp": {"dupthresh": 4}})).unwrap();
        assert_eq!((p.md_hold, p.tcp.dupthresh), (MdHold::Rtt, 4));
        let p: VcpParams = parse(&serde_json::json!({"md_hold": 0, "h": 0.5})).unwrap();
        assert_eq!(p.md_hold, MdHold::Secs(0.0));
        assert!(close(p.mu(), 0.125));
        let p: VcpParams = parse(&serde_json::json!({"md_hold": "t_p", "mu": 0.1})).unwrap();
        assert_eq!((p.md_hold, p.mu()), (MdHold::Tp, 0.1));
        let e = parse::<VcpParams>(&serde_json::json!({"md_hold": "forever"})).unwrap_err();
        assert_eq!(e.key, "md_hold");
        let e = parse::<VcpParams>(&serde_json::json!({"sigma": 1})).unwrap_err();
        assert!(e.reason.contains("sigma"), "{e}");
        let e = parse::<VcpParams>(&serde_json::json!({"tcp": {"dupthres": 1}})).unwrap_err();
        assert!(e.key.starts_with("tcp"), "{e:?}");
        let bad = |p: VcpParams| p.validate().unwrap_err().key;
        assert_eq!(VcpParams::default().validate(), Ok(()));
        assert_eq!(bad(VcpParams { h: 0.6, ..Default::default() }), "h");
        assert_eq!(bad(VcpParams { beta: 1.0, ..Default::default() }), "beta");
        assert_eq!(bad(VcpParams { mu: Some(0.0), ..Default::default() }), "mu");
        assert_eq!(bad(VcpParams { sigma_ai: -1.0, ..Default::default() }), "sigma_ai");
        assert_eq!(bad(VcpParams { md_hold: MdHold::Secs(-1.0), ..Default::default() }), "md_hold");
        assert_eq!(bad(VcpParams { iw: 0.5, ..Default::default() }), "iw");
        let mut t = VcpParams::default();
        t.tcp.dupthresh = 0;
        assert_eq!(bad(t), "tcp.dupthresh");
    }

    #[test]
    fn a_spurious_rto_is_undone_with_its_hold_and_slow_start() {
        // The transport undoes at the first new ACK, before that ACK's growth: nothing of the
        // window's runs between the timeout and `on_spurious_timeout` but duplicate ACKs.
        let p = VcpParams { initial_slow_start: true, ..Default::default() };
        let mut w = window(40.0, &p);
        new_ack(&mut w, 1000, &ack(0b11), &ctx(MS, 200));
        assert_eq!(w.cwnd_pkts(), 41.0, "slow start ignores codes until the first loss");
        timeout(&mut w, &ctx(2 * MS, 200));
        // A repeated timeout keeps what the first one saved.
        timeout(&mut w, &SenderCtx { consecutive_rtos: 1, ..ctx(3 * MS, 200) });
        assert_eq!(w.cwnd_pkts(), 1.0);
        w.on_spurious_timeout(&ctx(4 * MS, 200));
        assert_eq!(w.cwnd_pkts(), 41.0);
        new_ack(&mut w, 1000, &ack(0b11), &ctx(5 * MS, 200));
        assert_eq!(w.cwnd_pkts(), 42.0, "still in slow start");
        // An MD episode running at the timeout comes back with the window: its hold still
        // shields it from a second MD.
        let mut w = window(40.0, &VcpParams::default());
        new_ack(&mut w, 1000, &ack(0b11), &ctx(MS, 200));
        assert!(close(w.cwnd_pkts(), 35.0));
        timeout(&mut w, &ctx(2 * MS, 200));
        w.on_spurious_timeout(&ctx(3 * MS, 200));
        new_ack(&mut w, 1000, &ack(0b11), &ctx(4 * MS, 200));
        assert!(close(w.cwnd_pkts(), 35.0), "hold: {}", w.cwnd_pkts());
        // Without a timeout there is nothing to undo.
        w.on_spurious_timeout(&ctx(5 * MS, 200));
        assert!(close(w.cwnd_pkts(), 35.0));
    }

    /// `pacing_gain`: off by default; set, one window per SRTT times the gain in wire bytes:
    /// 50 packets at SRTT 400 ms, gain 1.2 → 1.2 · 50 · 1040 / 0.4 = 156 000 B/s.
    #[test]
    fn pacing_spreads_the_window_over_srtt() {
        assert_eq!(window(50.0, &VcpParams::default()).pacing_rate(), None);
        let mut w = window(50.0, &VcpParams { pacing_gain: Some(1.2), ..Default::default() });
        new_ack(&mut w, 0, &ack(0b10), &ctx(MS, 400));
        assert!((w.pacing_rate().unwrap() - 156_000.0).abs() < 1e-6, "{:?}", w.pacing_rate());
        let e = crate::params::parse::<VcpParams>(&serde_json::json!({"pacing_gain": 0.5})).unwrap();
        assert_eq!(e.validate().unwrap_err().key, "pacing_gain");
    }
}
