//! VCP's additive increase, in the two readings the VCP family can run (`ai_law`):
//!
//! - `"seed001"` (the default): the law VCP-DCCP App. A4 prints, per acknowledged packet
//!   α·min((rtt/t_p)², σ_AI)/cwnd (docs/PROTOCOLS.md §2).
//! - `"ns2"`: the law of the VCP authors' ns-2 sender, with which the MPCP and DCP-EW figures
//!   were simulated. Read from the VCP distribution's `vcp-src.cc` (`VcpSrcAgent::rtt_update`
//!   builds the RTT scale, `VcpSrcAgent::opencwnd` case 10 applies it per new ACK) and
//!   `vcp-src.h` (the constants): per acknowledged packet α·w·S(q)/cwnd with q = rtt/t_d and
//!   ```text
//!   S(q) = (rtt_low/t_d)·q                       rtt ≤ rtt_low    (linear below)
//!   S(q) = q²                                    rtt_low < rtt ≤ rtt_high
//!   S(q) = (q − rtt_high/t_d) + (rtt_high/t_d)²  rtt > rtt_high   (linear beyond, no cap)
//!   ```
//!   t_d = 100 ms (`TYPICAL_RTT`), rtt_low = 20 ms, rtt_high = 500 ms, w = 1. The scale is
//!   continuous at both joints. It is the RTT over t_d, not over t_p: at rtt = t_p = 200 ms a
//!   flow adds 4α packets per RTT where seed001's adds α. The MI exponent's cap there
//!   (`MAX_RTT_BY_TRHO` = 2.5) is σ_MI's default, so MI is the same under both laws.
//!   The reference sender also truncates srtt to whole `tcp_tick_` (10 ms in ns-2) before it
//!   scales MI, AI and its post-MD timer (`VcpSrcAgent::rtt_update`: `rtt_ = (t_srtt_ >> 3) ·
//!   tcp_tick_`, at least one tick): `ai_ns2.tick` (default 0, racc's exact srtt), read by TCP/VCP's
//!   window (`window.rs`) under this law. Not carried over: it scales by t_d (q = 1) before the
//!   first RTT sample, where racc uses t_p.

use crate::params::{positive, ParamError};

/// A4: the window added per acknowledged packet in AI: α·min((rtt/t_p)², σ_AI)/cwnd.
#[inline]
pub fn ai_step(alpha: f64, rtt_s: f64, t_p_s: f64, sigma_ai: f64, cwnd_pkts: f64) -> f64 {
    let r = rtt_s / t_p_s;
    alpha * (r * r).min(sigma_ai) / cwnd_pkts
}

/// The `ai_law` key of a VCP-family flow.
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AiLawName {
    /// VCP-DCCP App. A4 as printed.
    #[default]
    #[serde(rename = "seed001")]
    Seed001,
    /// The reference ns-2 sender's law (module docs).
    #[serde(rename = "ns2")]
    Ns2,
}

/// The constants of the `"ns2"` law (the `ai_ns2` table), seconds; defaults from `vcp-src.h`
/// and the agent's `w_` [checked: reference code].
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Ns2Ai {
    /// t_d, the RTT the scale is relative to (`TYPICAL_RTT`) [reference code: 0.1 s].
    pub t_d: f64,
    /// Below this RTT the scale is linear in q (`RTT_LEFT`) [reference code: 0.02 s].
    pub rtt_low: f64,
    /// Above this RTT the scale grows linearly again (`RTT_RIGHT`) [reference code: 0.5 s].
    pub rtt_high: f64,
    /// Weight w multiplying α (`w_`) [reference code: 1.0].
    pub w: f64,
    /// The sender's RTT clock, s: srtt truncated to whole ticks (at least one) before MI, AI and
    /// the MD timer scale by it; 0 = exact (racc's default) [reference code: ns-2's `tcpTick_`,
    /// 0.01]. Read by TCP/VCP's window.
    pub tick: f64,
}

impl Default for Ns2Ai {
    fn default() -> Ns2Ai {
        Ns2Ai { t_d: 0.1, rtt_low: 0.02, rtt_high: 0.5, w: 1.0, tick: 0.0 }
    }
}

impl Ns2Ai {
    /// The RTT the reference sender scales by: `rtt_s` truncated to whole ticks, at least one
    /// (`tick` 0: `rtt_s` itself).
    pub fn clock(&self, rtt_s: f64) -> f64 {
        if self.tick > 0.0 {
            ((rtt_s / self.tick).floor() * self.tick).max(self.tick)
        } else {
            rtt_s
        }
    }

    /// S(rtt/t_d), the packets per RTT the law adds for α·w = 1 (module docs).
    pub fn scale(&self, rtt_s: f64) -> f64 {
        let q = rtt_s / self.t_d;
        let (left, right) = (self.rtt_low / self.t_d, self.rtt_high / self.t_d);
        if q <= left {
            q * left
        } else if q <= right {
            q * q
        } else {
            (q - right) + right * right
        }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        positive("ai_ns2.t_d", self.t_d)?;
        positive("ai_ns2.rtt_low", self.rtt_low)?;
        positive("ai_ns2.rtt_high", self.rtt_high)?;
        positive("ai_ns2.w", self.w)?;
        if !(self.tick.is_finite() && self.tick >= 0.0) {
            return Err(ParamError::new("ai_ns2.tick", format!("must be a finite number >= 0, got {}", self.tick)));
        }
        if self.rtt_low > self.rtt_high {
            return Err(ParamError::new(
                "ai_ns2.rtt_low",
                format!("must not exceed rtt_high ({} s), got {} s", self.rtt_high, self.rtt_low),
            ));
        }
        Ok(())
    }
}

/// The additive-increase law a controller runs, with its constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AiLaw {
    /// α·min((rtt/t_p)², σ_AI)/cwnd.
    Seed001 { sigma_ai: f64 },
    /// α·w·S(rtt/t_d)/cwnd.
    Ns2(Ns2Ai),
}

impl AiLaw {
    pub fn new(name: AiLawName, sigma_ai: f64, ns2: Ns2Ai) -> AiLaw {
        match name {
            AiLawName::Seed001 => AiLaw::Seed001 { sigma_ai },
            AiLawName::Ns2 => AiLaw::Ns2(ns2),
        }
    }

    /// The window added per acknowledged packet in AI, packets.
    #[inline]
    pub fn step(&self, alpha: f64, rtt_s: f64, t_p_s: f64, cwnd_pkts: f64) -> f64 {
        match self {
            AiLaw::Seed001 { sigma_ai } => ai_step(alpha, rtt_s, t_p_s, *sigma_ai, cwnd_pkts),
            AiLaw::Ns2(c) => alpha * c.w * c.scale(rtt_s) / cwnd_pkts,
        }
    }
}

/// Checks of the `ai_law` constants a flow table carries (the `"ns2"` ones are checked
/// whichever law is chosen, so a typo never waits for the law to change).
pub fn check_ai_law(ns2: &Ns2Ai) -> Result<(), ParamError> {
    ns2.validate()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::parse;
    use serde_json::json;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12 * b.abs().max(1.0)
    }

    /// The reference code's law at hand-computed points in its three RTT regimes (α = 1,
    /// w = 1, t_d = 100 ms, cwnd = 20 packets):
    /// - rtt = 10 ms: q = 0.1 ≤ 0.2, S = 0.2·0.1 = 0.02, step = 0.001;
    /// - rtt = 20 ms (the left joint): q = 0.2, S = 0.04 either way;
    /// - rtt = 300 ms: q = 3, S = 9, step = 0.45 (seed001: (0.3/0.2)² = 2.25, step 0.1125);
    /// - rtt = 500 ms (the right joint): S = 25;
    /// - rtt = 900 ms: q = 9, S = (9 − 5) + 25 = 29, step = 1.45 (seed001 capped: 10/20 = 0.5);
    /// - rtt = 2 s: q = 20, S = 40: no cap.
    #[test]
    fn ns2_law_in_its_three_regimes() {
        let law = AiLaw::new(AiLawName::Ns2, 10.0, Ns2Ai::default());
        for (rtt, s) in [(0.010, 0.02), (0.020, 0.04), (0.300, 9.0), (0.500, 25.0), (0.900, 29.0), (2.0, 40.0)] {
            assert!(close(Ns2Ai::default().scale(rtt), s), "rtt {rtt}: S = {}", Ns2Ai::default().scale(rtt));
            assert!(close(law.step(1.0, rtt, 0.2, 20.0), s / 20.0), "rtt {rtt}");
        }
        // Continuous just either side of both joints.
        let c = Ns2Ai::default();
        assert!((c.scale(0.020 + 1e-9) - c.scale(0.020)).abs() < 1e-6);
        assert!((c.scale(0.500 + 1e-9) - c.scale(0.500)).abs() < 1e-6);
        // α and w multiply; t_p plays no part.
        let law = AiLaw::Ns2(Ns2Ai { w: 0.5, ..Default::default() });
        assert!(close(law.step(2.0, 0.3, 0.05, 10.0), 2.0 * 0.5 * 9.0 / 10.0));
        // seed001 is A4: α·min((rtt/t_p)², σ_AI)/cwnd.
        let law = AiLaw::new(AiLawName::Seed001, 10.0, Ns2Ai::default());
        assert!(close(law.step(1.0, 0.3, 0.2, 20.0), 2.25 / 20.0));
        assert!(close(law.step(1.0, 0.9, 0.2, 20.0), 10.0 / 20.0));
        assert!(close(law.step(1.0, 0.01, 0.2, 20.0), 0.0025 / 20.0));
        // Other constants move the joints: t_d = 200 ms, rtt_low = 50 ms, rtt_high = 1 s.
        let c = Ns2Ai { t_d: 0.2, rtt_low: 0.05, rtt_high: 1.0, w: 1.0, tick: 0.0 };
        assert!(close(c.scale(0.04), 0.2 * 0.25)); // q = 0.2 ≤ 0.25
        assert!(close(c.scale(0.6), 9.0)); // q = 3
        assert!(close(c.scale(1.4), (7.0 - 5.0) + 25.0)); // q = 7 > 5
    }

    #[test]
    fn parse_and_validate() {
        assert_eq!(parse::<AiLawName>(&json!("ns2")).unwrap(), AiLawName::Ns2);
        assert_eq!(parse::<AiLawName>(&json!("seed001")).unwrap(), AiLawName::Seed001);
        let e = parse::<AiLawName>(&json!("ns3")).unwrap_err();
        assert!(e.reason.contains("seed001") && e.reason.contains("ns2"), "{e}");
        let c: Ns2Ai = parse(&json!({"t_d": 0.2})).unwrap();
        assert_eq!(c, Ns2Ai { t_d: 0.2, ..Default::default() });
        assert!(parse::<Ns2Ai>(&json!({"td": 0.2})).is_err());
        let bad = |c: Ns2Ai| check_ai_law(&c).unwrap_err().key;
        assert_eq!(check_ai_law(&Ns2Ai::default()), Ok(()));
        assert_eq!(bad(Ns2Ai { t_d: 0.0, ..Default::default() }), "ai_ns2.t_d");
        assert_eq!(bad(Ns2Ai { w: -1.0, ..Default::default() }), "ai_ns2.w");
        assert_eq!(bad(Ns2Ai { rtt_low: 0.6, ..Default::default() }), "ai_ns2.rtt_low");
    }
}
