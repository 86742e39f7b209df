//! VCP's window laws on the TCP NewReno transport (TCP/VCP; seed 001 App. A3–A5, PROTOCOLS.md
//! §2). cwnd is held in packets (f64) and exposed to the transport in bytes (× MSS).
//!
//! Per new ACK outside fast recovery, with k = packets it newly acknowledges and rtt the
//! sender's smoothed RTT:
//! ```text
//! mi_step = (1+μ)^min(rtt/t_p, σ_MI) − 1                 A3, added per acknowledged packet
//! ai_step = α·min((rtt/t_p)², σ_AI)/cwnd                  A4, added per acknowledged packet
//! code 01: cwnd += k·mi_step         code 10: cwnd += k·ai_step
//! code 11: now < hold_until → nothing; now < ai_until → cwnd += k·ai_step;
//!          else cwnd = max(1, β·cwnd) (A5), hold_until = now + md_hold, ai_until = hold_until + rtt
//! ```
//! At most one MD per ACK. Data packets leave with ECN 01 (PROTOCOLS.md §1). Loss is
//! NewReno's: fast retransmit halves (the transport's hooks, delegated to [`FastRecovery`], NewReno in
//! bytes for the length of the recovery), an RTO sets cwnd to 1 packet; afterwards the VCP laws
//! resume, with no slow start [checked: reference code].
//!
//! Choices where the sources are silent [reconstructed]:
//! - An echo of 00 means the path bleached the code (PROTOCOLS.md §2 pitfalls: "ECN bleached to
//!   00 → plain TCP"): the sender then grows as TCP congestion avoidance, cwnd += k/cwnd.
//! - `rtt` is SRTT, else the latest sample, else t_p (no sample yet: one MI step = μ).
//! - Retransmissions are sent at 01 as well (unlike RFC 3168's Not-ECT rule for TCP): the code
//!   on their ACKs is as current as any other.
//! - RFC 3168 ECN-Echo is ignored: VCP reads the code from the ACK's echo field.
//! - A lost SYN leaves a window of one packet (as RFC 5681 §3.1 for TCP).

use crate::endpoint::FlowConfig;
use crate::packet::{ecn, Kind, Packet};
use crate::params::{positive, ParamError};
use crate::tcp::{growth_packets, FastRecovery, RecoveryExit, SenderCtx, TcpParams, WindowControl};
use crate::time::{secs, to_secs, Dur, Time};

/// How long an MD holds off further MDs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MdHold {
    /// One load-factor interval t_p (the default [checked: reference code]).
    Tp,
    /// One smoothed RTT (seed 000 §2.2's reading).
    Rtt,
    /// A fixed time in seconds; 0 is seed 001's literal wording.
    Secs(f64),
}

impl<'de> serde::Deserialize<'de> for MdHold {
    /// `md_hold = "t_p"`, `"rtt"` or a number of seconds.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<MdHold, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(f64),
            Name(String),
        }
        match Raw::deserialize(d) {
            Ok(Raw::Num(x)) => Ok(MdHold::Secs(x)),
            Ok(Raw::Name(s)) if s == "t_p" => Ok(MdHold::Tp),
            Ok(Raw::Name(s)) if s == "rtt" => Ok(MdHold::Rtt),
            Ok(Raw::Name(s)) => {
                Err(serde::de::Error::custom(format!("must be \"t_p\", \"rtt\" or a number of seconds, got \"{s}\"")))
            }
            Err(_) => Err(serde::de::Error::custom("must be \"t_p\", \"rtt\" or a number of seconds")),
        }
    }
}

/// The `params` table of a "vcp" flow. Defaults: PROTOCOLS.md §2 and §16. Times in seconds.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct VcpParams {
    /// The routers' load-factor interval t_p, s, used for the RTT scaling [seed 001: 200 ms].
    /// Keep it equal to the routers' `t_p`.
    pub t_p: f64,
    /// h in F(x) = h(1−x)/x, 0 < h ≤ 0.5 [seed 001: 0.25]; sets μ when `mu` is not given.
    pub h: f64,
    /// MI factor μ per t_p; default h(1/0.8 − 1) = 0.0625 [seed 001].
    pub mu: Option<f64>,
    /// AI step α, packets per t_p [seed 001: 1].
    pub alpha: f64,
    /// MD factor β [seed 001: 0.875].
    pub beta: f64,
    /// Cap σ_MI on rtt/t_p in the MI exponent [seed 001: 2.5].
    pub sigma_mi: f64,
    /// Cap σ_AI on (rtt/t_p)² in AI [seed 001: 10].
    pub sigma_ai: f64,
    /// Hold after an MD: "t_p" (default [checked]), "rtt" (seed 000) or seconds (0 = seed 001).
    pub md_hold: MdHold,
    /// Initial window, packets [reconstructed: 2]; a flow's `initial_window` overrides it.
    pub iw: f64,
    /// Slow start until the first loss (seed 001 Fig. 7's start-up burst) [reconstructed].
    pub initial_slow_start: bool,
    /// The TCP transport's knobs (dupthresh, RTO bounds, ...).
    pub tcp: TcpParams,
}

impl Default for VcpParams {
    fn default() -> VcpParams {
        VcpParams {
            t_p: 0.2,
            h: 0.25,
            mu: None,
            alpha: 1.0,
            beta: 0.875,
            sigma_mi: 2.5,
            sigma_ai: 10.0,
            md_hold: MdHold::Tp,
            iw: 2.0,
            initial_slow_start: false,
            tcp: TcpParams::default(),
        }
    }
}

impl VcpParams {
    /// μ: `mu` if given, else h(1/0.8 − 1) (seed 001 §2: μ = h(1/ρ₀ − 1) at ρ₀ = 0.8).
    pub fn mu(&self) -> f64 {
        self.mu.unwrap_or(self.h * (1.0 / super::RHO_HIGH - 1.0))
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        check_window_laws(self.t_p, self.h, self.alpha, self.sigma_mi, self.sigma_ai, self.md_hold, self.iw)?;
        if let Some(mu) = self.mu {
            positive("mu", mu)?;
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(ParamError::new("beta", format!("must be in (0, 1), got {}", self.beta)));
        }
        self.tcp.validate().map_err(|e| ParamError::new(format!("tcp.{}", e.key), e.reason))
    }
}

/// Checks of the VCP window-law parameters shared by VCP, DPCP/TPCP and DCP-EW senders
/// (seed 001 A3–A5): t_p at least 1 µs, 0 < h ≤ 0.5, positive α and σ caps, a finite
/// non-negative hold, an initial window of at least one packet.
#[allow(clippy::too_many_arguments)]
pub fn check_window_laws(
    t_p: f64,
    h: f64,
    alpha: f64,
    sigma_mi: f64,
    sigma_ai: f64,
    md_hold: MdHold,
    iw: f64,
) -> Result<(), ParamError> {
    positive("t_p", t_p)?;
    if secs(t_p) < 1_000 {
        return Err(ParamError::new("t_p", format!("must be at least 1 µs, got {t_p} s")));
    }
    if !(h > 0.0 && h <= 0.5) {
        return Err(ParamError::new("h", format!("must be in (0, 0.5], got {h}")));
    }
    positive("alpha", alpha)?;
    positive("sigma_mi", sigma_mi)?;
    positive("sigma_ai", sigma_ai)?;
    if let MdHold::Secs(s) = md_hold {
        if !(s.is_finite() && s >= 0.0) {
            return Err(ParamError::new("md_hold", format!("must be a finite number of seconds >= 0, got {s}")));
        }
    }
    if !(iw.is_finite() && iw >= 1.0) {
        return Err(ParamError::new("iw", format!("must be at least 1 packet, got {iw}")));
    }
    Ok(())
}

/// A3: the window added per acknowledged packet in MI: (1+μ)^min(rtt/t_p, σ_MI) − 1.
#[inline]
pub fn mi_step(mu: f64, rtt_s: f64, t_p_s: f64, sigma_mi: f64) -> f64 {
    (1.0 + mu).powf((rtt_s / t_p_s).min(sigma_mi)) - 1.0
}

/// A4: the window added per acknowledged packet in AI: α·min((rtt/t_p)², σ_AI)/cwnd.
#[inline]
pub fn ai_step(alpha: f64, rtt_s: f64, t_p_s: f64, sigma_ai: f64, cwnd_pkts: f64) -> f64 {
    let r = rtt_s / t_p_s;
    alpha * (r * r).min(sigma_ai) / cwnd_pkts
}

/// VCP's `WindowControl` for the TCP transport.
#[derive(Clone, Debug)]
pub struct VcpWindow {
    mu: f64,
    alpha: f64,
    beta: f64,
    sigma_mi: f64,
    sigma_ai: f64,
    t_p_s: f64,
    md_hold: MdHold,
    mss: f64,
    /// Congestion window, packets.
    cwnd: f64,
    /// Packets; bounds the optional initial slow start (`cfg.initial_ssthresh`, else ∞).
    ssthresh: f64,
    slow_start: bool,
    /// NewReno's byte-window arithmetic while in fast recovery.
    recovery: FastRecovery,
    /// cwnd (packets), slow start, hold_until and ai_until before the first RTO of a timeout
    /// episode, for a spurious-RTO undo.
    before_rto: Option<(f64, bool, Time, Time)>,
    hold_until: Time,
    ai_until: Time,
    last_code: u8,
    mds: u64,
}

impl VcpWindow {
    /// A window for `mss`-byte segments: cwnd = `cfg.initial_window` or `p.iw` packets.
    /// `p` must be valid.
    pub fn new(cfg: &FlowConfig, mss: u32, p: &VcpParams) -> VcpWindow {
        let cwnd = cfg.initial_window.map_or(p.iw, |w| w.max(1) as f64);
        let mss_f = mss.max(1) as f64;
        VcpWindow {
            mu: p.mu(),
            alpha: p.alpha,
            beta: p.beta,
            sigma_mi: p.sigma_mi,
            sigma_ai: p.sigma_ai,
            t_p_s: p.t_p,
            md_hold: p.md_hold,
            mss: mss_f,
            cwnd,
            ssthresh: cfg.initial_ssthresh.map_or(f64::INFINITY, |b| b as f64 / mss_f),
            slow_start: p.initial_slow_start,
            recovery: FastRecovery::default(),
            before_rto: None,
            hold_until: 0,
            ai_until: 0,
            last_code: ecn::NOT_ECT,
            mds: 0,
        }
    }

    /// Congestion window in packets (outside recovery; in recovery NewReno's, in packets).
    pub fn cwnd_pkts(&self) -> f64 {
        self.cwnd_bytes() / self.mss
    }

    /// The code echoed by the last new ACK.
    pub fn last_code(&self) -> u8 {
        self.last_code
    }

    /// Multiplicative decreases (A5) so far.
    pub fn md_count(&self) -> u64 {
        self.mds
    }

    /// Overload reports before this time are ignored (the MD hold).
    pub fn hold_until(&self) -> Time {
        self.hold_until
    }

    /// Overload reports before this time (and after `hold_until`) give AI.
    pub fn ai_until(&self) -> Time {
        self.ai_until
    }

    pub fn in_recovery(&self) -> bool {
        self.recovery.active()
    }

    pub fn in_slow_start(&self) -> bool {
        self.slow_start && self.cwnd < self.ssthresh
    }

    fn rtt_s(&self, ctx: &SenderCtx) -> f64 {
        ctx.srtt.or(ctx.latest_rtt).map_or(self.t_p_s, to_secs)
    }

    fn hold(&self, rtt_s: f64) -> Dur {
        match self.md_hold {
            MdHold::Tp => secs(self.t_p_s),
            MdHold::Rtt => secs(rtt_s),
            MdHold::Secs(s) => secs(s),
        }
    }

    /// The first loss ends the optional initial slow start for good.
    fn end_slow_start(&mut self) {
        self.slow_start = false;
    }
}

impl WindowControl for VcpWindow {
    fn cwnd_bytes(&self) -> f64 {
        self.recovery.cwnd().unwrap_or(self.cwnd * self.mss)
    }

    fn ssthresh_bytes(&self) -> f64 {
        match self.recovery.ssthresh() {
            Some(s) => s,
            None if self.slow_start => self.ssthresh * self.mss,
            None => f64::INFINITY,
        }
    }

    /// Data packets carry the VCP-capable codepoint 01 (PROTOCOLS.md §1); SYNs stay Not-ECT.
    fn on_send(&mut self, pkt: &mut Packet, _ctx: &SenderCtx) {
        if pkt.kind == Kind::Data {
            pkt.ecn = ecn::ECT1;
        }
    }

    fn on_syn_timeout(&mut self, _ctx: &SenderCtx) {
        self.cwnd = 1.0;
    }

    fn on_new_ack(&mut self, acked: u64, ack: &Packet, ctx: &SenderCtx) {
        // k: the packets this ACK reports delivered for the first time (`growth_packets`).
        let k = growth_packets(acked, ctx);
        let code = ack.tcp_hdr().map_or(ecn::NOT_ECT, |h| h.echo & 0b11);
        self.last_code = code;
        if self.in_slow_start() {
            // RFC 5681 eq. (2): + min(acked, SMSS) per ACK, codes ignored until the first loss.
            self.cwnd += (acked as f64 / self.mss).min(1.0);
            return;
        }
        let rtt = self.rtt_s(ctx);
        match code {
            ecn::ECT1 => self.cwnd += k * mi_step(self.mu, rtt, self.t_p_s, self.sigma_mi),
            ecn::ECT0 => self.cwnd += k * ai_step(self.alpha, rtt, self.t_p_s, self.sigma_ai, self.cwnd),
            ecn::CE => {
                let now = ctx.now;
                if now < self.hold_until {
                    // The load factor still measures the load from before the MD.
                } else if now < self.ai_until {
                    // AI for one rtt after the hold (seed 001 App.).
                    self.cwnd += k * ai_step(self.alpha, rtt, self.t_p_s, self.sigma_ai, self.cwnd);
                } else {
                    self.cwnd = (self.beta * self.cwnd).max(1.0); // A5
                    self.mds += 1;
                    self.hold_until = now.saturating_add(self.hold(rtt));
                    self.ai_until = self.hold_until.saturating_add(secs(rtt));
                }
            }
            // 00: the code was bleached on the path; behave as TCP congestion avoidance.
            _ => self.cwnd += k / self.cwnd,
        }
    }

    fn on_fast_retransmit(&mut self, ack: &Packet, ctx: &SenderCtx) {
        self.end_slow_start();
        self.recovery.start_halving(self.cwnd * self.mss, self.mss as u32, ack, ctx);
    }

    fn on_recovery_dupack(&mut self, ack: &Packet, ctx: &SenderCtx) {
        self.recovery.on_dupack(ack, ctx);
    }

    fn on_partial_ack(&mut self, acked: u64, ack: &Packet, ctx: &SenderCtx) {
        self.recovery.on_partial_ack(acked, ack, ctx);
    }

    /// NewReno's exit window (RFC 6582 §3.2 step 3 / RFC 5681 step 6), back into packets; the
    /// VCP laws take over from there.
    fn on_recovery_exit(&mut self, how: RecoveryExit, ack: &Packet, ctx: &SenderCtx) {
        if let Some(bytes) = self.recovery.exit(how, ack, ctx) {
            self.cwnd = (bytes / self.mss).max(1.0);
        }
    }

    /// cwnd = 1 packet; the VCP laws resume without slow start.
    fn on_rto(&mut self, ctx: &SenderCtx) {
        if ctx.consecutive_rtos == 0 {
            self.before_rto = Some((self.cwnd, self.slow_start, self.hold_until, self.ai_until));
        }
        self.end_slow_start();
        self.recovery.abort();
        self.cwnd = 1.0;
    }

    /// The timeout was spurious (RFC 3522; the transport never undoes one that came during
    /// fast recovery): back to the window and the MD hold it found. An MD of the one-packet
    /// window since then cut nothing, and its hold must not shield the restored window from
    /// the next overload code.
    fn on_spurious_rto(&mut self, _ctx: &SenderCtx) {
        if let Some((cwnd, slow_start, hold_until, ai_until)) = self.before_rto.take() {
            (self.cwnd, self.slow_start) = (cwnd, slow_start);
            (self.hold_until, self.ai_until) = (hold_until, ai_until);
        }
    }

    fn on_ecn_echo(&mut self, _ack: &Packet, _ctx: &SenderCtx) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TcpHeader;
    use crate::time::NS_PER_MS;

    const MS: Time = NS_PER_MS;
    const MSS: u32 = 1000;

    fn ack(code: u8) -> Packet {
        let h = TcpHeader { echo: code, ..Default::default() };
        Packet::tcp(0, Kind::Ack, 40, 0, h)
    }

    fn ctx(now: Time, rtt_ms: u64) -> SenderCtx {
        SenderCtx { now, mss: MSS, srtt: Some(rtt_ms * MS), latest_rtt: Some(rtt_ms * MS), ..Default::default() }
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
        assert_eq!((w.cwnd_pkts(), w.cwnd_bytes()), (2.0, 2000.0));
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
            w.on_new_ack(1000, &ack(0b01), &ctx(MS, rtt));
            assert!(close(w.cwnd_pkts(), 20.0 + mi), "rtt {rtt}: {}", w.cwnd_pkts());
            w.on_new_ack(3000, &ack(0b01), &ctx(MS, rtt));
            assert!(close(w.cwnd_pkts(), 20.0 + 4.0 * mi), "rtt {rtt}: {}", w.cwnd_pkts());
            w.on_new_ack(3000, &ack(0b01), &SenderCtx { dupacks_covered: 2, ..ctx(MS, rtt) });
            assert!(close(w.cwnd_pkts(), 20.0 + 5.0 * mi), "rtt {rtt}: {}", w.cwnd_pkts());
            // AI: α·min((rtt/t_p)², σ_AI)/cwnd per packet, cwnd read before the ACK.
            let mut w = window(20.0, &p);
            w.on_new_ack(2000, &ack(0b10), &ctx(MS, rtt));
            assert!(close(w.cwnd_pkts(), 20.0 + 2.0 * ai_num / 20.0), "rtt {rtt}: {}", w.cwnd_pkts());
        }
        // Per t_p, MI multiplies the window by (1+μ) whatever the RTT below the cap: one RTT of
        // ACKs (cwnd of them) multiplies it by ≈ 1 + cwnd·mi_step per rtt.
        for rtt in [50u64, 100, 200] {
            let mut w = window(1000.0, &p);
            for _ in 0..1000 {
                w.on_new_ack(1000, &ack(0b01), &ctx(MS, rtt));
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

    #[test]
    fn md_once_then_hold_then_ai_for_one_rtt() {
        let p = VcpParams::default(); // md_hold = t_p = 200 ms
        let rtt = 50;
        let mut w = window(16.0, &p);
        // First overload report at 1 s: A5, cwnd = 0.875·16 = 14.
        let t0 = 1000 * MS;
        w.on_new_ack(3000, &ack(0b11), &ctx(t0, rtt));
        assert_eq!((w.cwnd_pkts(), w.md_count()), (14.0, 1), "one MD however many packets the ACK covers");
        assert_eq!((w.hold_until(), w.ai_until()), (t0 + 200 * MS, t0 + 250 * MS));
        // Overload reports within t_p: nothing (the LF still measures the pre-MD load).
        for t in [t0, t0 + 50 * MS, t0 + 199 * MS] {
            w.on_new_ack(1000, &ack(0b11), &ctx(t, rtt));
            assert_eq!((w.cwnd_pkts(), w.md_count()), (14.0, 1), "at {t}");
        }
        // LOW and HIGH reports keep acting during the hold.
        w.on_new_ack(1000, &ack(0b01), &ctx(t0 + 100 * MS, rtt));
        let mi = mi_step(0.0625, 0.05, 0.2, 2.5);
        assert!(close(w.cwnd_pkts(), 14.0 + mi));
        w.cwnd = 14.0;
        // After the hold, for one rtt: AI, α(rtt/t_p)²/cwnd per packet.
        w.on_new_ack(2000, &ack(0b11), &ctx(t0 + 200 * MS, rtt));
        assert!(close(w.cwnd_pkts(), 14.0 + 2.0 * 0.0625 / 14.0), "{}", w.cwnd_pkts());
        w.cwnd = 14.0;
        w.on_new_ack(1000, &ack(0b11), &ctx(t0 + 250 * MS - 1, rtt));
        assert!(close(w.cwnd_pkts(), 14.0 + 0.0625 / 14.0));
        assert_eq!(w.md_count(), 1);
        // Then the next overload report is a new MD.
        w.cwnd = 16.0;
        w.on_new_ack(1000, &ack(0b11), &ctx(t0 + 250 * MS, rtt));
        assert_eq!((w.cwnd_pkts(), w.md_count()), (14.0, 2));
        // Floor at one packet.
        let mut w = window(1.0, &p);
        w.on_new_ack(1000, &ack(0b11), &ctx(t0, rtt));
        assert_eq!(w.cwnd_pkts(), 1.0);
    }

    #[test]
    fn md_hold_alternatives() {
        let t0 = 1000 * MS;
        // Seed 001's literal wording (hold 0): AI for one rtt, then MD again.
        let p = VcpParams { md_hold: MdHold::Secs(0.0), ..Default::default() };
        let mut w = window(16.0, &p);
        w.on_new_ack(1000, &ack(0b11), &ctx(t0, 100));
        assert_eq!((w.hold_until(), w.ai_until()), (t0, t0 + 100 * MS));
        w.on_new_ack(1000, &ack(0b11), &ctx(t0 + 99 * MS, 100));
        assert_eq!(w.md_count(), 1);
        assert!(w.cwnd_pkts() > 14.0);
        w.on_new_ack(1000, &ack(0b11), &ctx(t0 + 100 * MS, 100));
        assert_eq!(w.md_count(), 2);
        // Seed 000's reading (hold one rtt).
        let p = VcpParams { md_hold: MdHold::Rtt, ..Default::default() };
        let mut w = window(16.0, &p);
        w.on_new_ack(1000, &ack(0b11), &ctx(t0, 100));
        assert_eq!((w.hold_until(), w.ai_until()), (t0 + 100 * MS, t0 + 200 * MS));
    }

    #[test]
    fn loss_halves_via_newreno_then_vcp_resumes_without_slow_start() {
        let p = VcpParams::default();
        let mut w = window(20.0, &p);
        let mut c = ctx(MS, 100);
        c.flight = 20_000;
        c.dupacks = 3;
        w.on_fast_retransmit(&ack(0b01), &c);
        assert!(w.in_recovery());
        // RFC 5681: ssthresh = flight/2 = 10 pkts, cwnd = ssthresh + 3.
        assert_eq!((w.cwnd_pkts(), w.ssthresh_bytes()), (13.0, 10_000.0));
        w.on_recovery_dupack(&ack(0b01), &c);
        assert_eq!(w.cwnd_pkts(), 14.0);
        // Full ACK with 9 packets outstanding: min(ssthresh, flight + 1) = 10 pkts.
        c.flight = 9000;
        w.on_recovery_exit(RecoveryExit::FullAck, &ack(0b01), &c);
        assert!(!w.in_recovery());
        assert_eq!(w.cwnd_pkts(), 10.0);
        // VCP's MI continues from there.
        w.on_new_ack(1000, &ack(0b01), &ctx(2 * MS, 200));
        assert!(close(w.cwnd_pkts(), 10.0625));
        // RTO: one packet, then MI (not slow start).
        w.on_rto(&ctx(3 * MS, 200));
        assert_eq!(w.cwnd_pkts(), 1.0);
        w.on_new_ack(1000, &ack(0b01), &ctx(4 * MS, 200));
        assert!(close(w.cwnd_pkts(), 1.0625));
        assert_eq!(w.ssthresh_bytes(), f64::INFINITY);
    }

    #[test]
    fn optional_initial_slow_start_until_first_loss() {
        let p = VcpParams { initial_slow_start: true, ..Default::default() };
        let mut w = window(2.0, &p);
        // Slow start ignores the codes: +1 packet per ACK even on overload.
        for _ in 0..6 {
            w.on_new_ack(1000, &ack(0b11), &ctx(MS, 100));
        }
        assert_eq!((w.cwnd_pkts(), w.md_count()), (8.0, 0));
        let mut c = ctx(MS, 100);
        c.flight = 8000;
        c.dupacks = 3;
        w.on_fast_retransmit(&ack(0b11), &c);
        w.on_recovery_exit(RecoveryExit::FullAck, &ack(0b11), &ctx(MS, 100));
        assert!(!w.in_slow_start());
        let before = w.cwnd_pkts();
        w.on_new_ack(1000, &ack(0b11), &ctx(10 * MS, 100));
        assert_eq!((w.cwnd_pkts(), w.md_count()), (before * 0.875, 1), "VCP laws after the first loss");
        // Default: no slow start, codes act from the first ACK.
        let mut w = window(2.0, &VcpParams::default());
        w.on_new_ack(1000, &ack(0b01), &ctx(MS, 200));
        assert!(close(w.cwnd_pkts(), 2.0625));
    }

    #[test]
    fn bleached_code_grows_like_tcp_and_data_leaves_at_01() {
        let mut w = window(10.0, &VcpParams::default());
        w.on_new_ack(1000, &ack(0b00), &ctx(MS, 100));
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
        w.on_ecn_echo(&ack(0b00), &ctx(MS, 100));
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
        // window's runs between `on_rto` and `on_spurious_rto` but duplicate ACKs.
        let p = VcpParams { initial_slow_start: true, ..Default::default() };
        let mut w = window(40.0, &p);
        w.on_new_ack(1000, &ack(0b11), &ctx(MS, 200));
        assert_eq!(w.cwnd_pkts(), 41.0, "slow start ignores codes until the first loss");
        w.on_rto(&ctx(2 * MS, 200));
        // A repeated timeout keeps what the first one saved.
        w.on_rto(&SenderCtx { consecutive_rtos: 1, ..ctx(3 * MS, 200) });
        assert_eq!(w.cwnd_pkts(), 1.0);
        w.on_spurious_rto(&ctx(4 * MS, 200));
        assert_eq!(w.cwnd_pkts(), 41.0);
        w.on_new_ack(1000, &ack(0b11), &ctx(5 * MS, 200));
        assert_eq!(w.cwnd_pkts(), 42.0, "still in slow start");
        // An MD episode running at the timeout comes back with the window: its hold still
        // shields it from a second MD.
        let mut w = window(40.0, &VcpParams::default());
        w.on_new_ack(1000, &ack(0b11), &ctx(MS, 200));
        assert!(close(w.cwnd_pkts(), 35.0));
        w.on_rto(&ctx(2 * MS, 200));
        w.on_spurious_rto(&ctx(3 * MS, 200));
        w.on_new_ack(1000, &ack(0b11), &ctx(4 * MS, 200));
        assert!(close(w.cwnd_pkts(), 35.0), "hold: {}", w.cwnd_pkts());
        // Without a timeout there is nothing to undo.
        w.on_spurious_rto(&ctx(5 * MS, 200));
        assert!(close(w.cwnd_pkts(), 35.0));
    }
}
