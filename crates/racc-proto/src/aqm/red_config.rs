//! RED as a scenario writes it. A threshold or weight the scenario leaves out is set from the
//! port, as ns-2.35 sets it when `thresh_`, `maxthresh_` are 0 and `q_weight_` is -1 (its
//! defaults; `REDQueue::initialize_params` in `queue/red.cc`, after Floyd's "RED: Discussions
//! of Setting Parameters", 1997, and "Adaptive RED", 2001):
//!
//! ```text
//! ptc    = C / (8·s)                          packets per second at the link's rate
//! min_th = max(5, target_delay·ptc / 2)       target_delay = 5 ms
//! max_th = 3·min_th
//! w_q    = 1 − exp(−1 / (10·rtt·ptc)),        rtt = max(0.1 s, 3·(delay + 1/ptc))
//! ```
//!
//! So RED acts on any link it is put on: a fixed min_th of 150 packets (VCP-DCCP's T3 set-up,
//! the default before) made RED a DropTail on every buffer under 150 packets, silently.

use super::red::{RedAction, RedMode, RedParams};
use crate::params::ParamError;
use crate::protocol::{PortIdentity, ANY_PORT};

/// ns-2's `targetdelay_`: the queueing delay the automatic min_th aims at twice over, s.
pub const TARGET_DELAY_S: f64 = 0.005;
/// The smallest automatic min_th, packets (ns-2).
pub const MIN_TH_FLOOR: f64 = 5.0;
/// w_q where the port's rate is unknown (F&J's 0.002).
pub const FALLBACK_W_Q: f64 = 0.002;

/// RED's `router_params`: any of `min_th`, `max_th`, `w_q` left out is set per port by ns-2's
/// automatic configuration (module docs).
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RedConfig {
    /// Lower threshold on avg, packets (× mean packet size in byte mode); automatic if absent.
    pub min_th: Option<f64>,
    /// Upper threshold, packets; automatic (3·min_th) if absent.
    pub max_th: Option<f64>,
    /// p_b at avg = max_th (ns-2's `linterm_` 10).
    pub max_p: f64,
    /// EWMA weight of the average queue; automatic if absent.
    pub w_q: Option<f64>,
    pub gentle: bool,
    pub mode: RedMode,
    pub action: RedAction,
    /// Mean packet size s in bytes; `None` = the scenario's packet size.
    pub mean_pkt_size: Option<u32>,
}

impl Default for RedConfig {
    fn default() -> RedConfig {
        RedConfig {
            min_th: None,
            max_th: None,
            max_p: 0.1,
            w_q: None,
            gentle: true,
            mode: RedMode::Packet,
            action: RedAction::Drop,
            mean_pkt_size: None,
        }
    }
}

/// Packets per second the link sends at packets of `s` bytes (ns-2's `ptc`); 0 if unknown.
pub fn packet_rate(capacity_bps: f64, s: u32) -> f64 {
    if s == 0 || !(capacity_bps > 0.0 && capacity_bps.is_finite()) {
        0.0
    } else {
        capacity_bps / (8.0 * s as f64)
    }
}

/// ns-2's automatic min_th, packets: half the queue that drains in 5 ms, at least 5.
pub fn auto_min_th(ptc: f64) -> f64 {
    (TARGET_DELAY_S * ptc / 2.0).max(MIN_TH_FLOOR)
}

/// ns-2's automatic w_q (`q_weight_ = -1`): a time constant of ten round trips, the round trip
/// taken as three times the link's delay plus one packet time, at least 100 ms.
pub fn auto_w_q(ptc: f64, delay_s: f64) -> f64 {
    if ptc.is_nan() || ptc <= 0.0 {
        return FALLBACK_W_Q;
    }
    let rtt = (3.0 * (delay_s + 1.0 / ptc)).max(0.1);
    -(-1.0 / (10.0 * rtt * ptc)).exp_m1()
}

impl RedConfig {
    /// The parameters RED runs with on `port`.
    pub fn for_port(&self, port: &PortIdentity<'_>) -> RedParams {
        let s = self.mean_pkt_size.unwrap_or(port.mean_pkt_size);
        let ptc = packet_rate(port.capacity_bps, s);
        let (min_th, max_th) = match (self.min_th, self.max_th) {
            (Some(lo), Some(hi)) => (lo, hi),
            (Some(lo), None) => (lo, 3.0 * lo),
            // Keep ns-2's ratio under a given max_th the automatic min_th would reach.
            (None, Some(hi)) => (auto_min_th(ptc).min(hi / 3.0), hi),
            (None, None) => {
                let lo = auto_min_th(ptc);
                (lo, 3.0 * lo)
            }
        };
        RedParams {
            min_th,
            max_th,
            max_p: self.max_p,
            w_q: self.w_q.unwrap_or_else(|| auto_w_q(ptc, port.delay as f64 * 1e-9)),
            gentle: self.gentle,
            mode: self.mode,
            action: self.action,
            mean_pkt_size: self.mean_pkt_size,
        }
    }

    /// Refuse impossible settings, naming the key. The automatic values are always valid, so
    /// an error names a key the scenario gave.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.for_port(&ANY_PORT).validate()
    }

    /// What the settings provably cannot do on `port`: RED acts only while its average queue
    /// is at or above min_th, and the average never exceeds the buffer.
    pub fn warnings(&self, port: &PortIdentity<'_>) -> Vec<String> {
        let p = self.for_port(port);
        let buffer = port.buffer_pkts();
        if !buffer.is_finite() {
            return Vec::new();
        }
        let given = |v: Option<f64>| if v.is_some() { "" } else { " (automatic)" };
        // At most four decimals, trailing zeros cut: "150", "31.25".
        let num = |x: f64| {
            let t = format!("{x:.4}");
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        if p.min_th >= buffer {
            vec![format!(
                "RED never acts on port {}: min_th {}{} packets is at or above the buffer of {buffer:.0} \
                 packets, so the average queue cannot reach it and the port drops as DropTail would",
                port.name,
                num(p.min_th),
                given(self.min_th)
            )]
        } else if p.max_th > buffer {
            vec![format!(
                "RED on port {}: max_th {}{} packets is above the buffer of {buffer:.0} packets, so its drop \
                 probability never reaches max_p {} before the buffer overflows",
                port.name,
                num(p.max_th),
                given(self.max_th),
                p.max_p
            )]
        } else {
            Vec::new()
        }
    }

    /// The settings RED runs with on `port`, for the run's summary.
    pub fn settings(&self, port: &PortIdentity<'_>) -> Vec<(&'static str, f64)> {
        let p = self.for_port(port);
        vec![("min_th", p.min_th), ("max_th", p.max_th), ("max_p", p.max_p), ("w_q", p.w_q)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(capacity_bps: f64, delay_ms: u64, limit_pkts: u32) -> PortIdentity<'static> {
        PortIdentity {
            name: "r0->r1",
            capacity_bps,
            delay: delay_ms * 1_000_000,
            limit_pkts,
            limit_bytes: u64::MAX,
            mean_pkt_size: 1000,
            ..ANY_PORT
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
    }

    /// Hand-computed from ns-2.35's rule (module docs) for 1000-byte packets.
    #[test]
    fn automatic_settings_follow_ns2() {
        // 10 Mb/s: ptc 1250 pkt/s; 5 ms of queue is 6.25 packets, half of it below the floor 5.
        // rtt = max(0.1, 3·(0.010 + 0.0008)) = 0.1 s; w_q = 1 − exp(−1/(10·0.1·1250)).
        let p = RedConfig::default().for_port(&port(10e6, 10, 100));
        assert_eq!((p.min_th, p.max_th), (5.0, 15.0));
        assert!(close(p.w_q, 1.0 - (-1.0f64 / 1250.0).exp()), "{}", p.w_q);
        // 100 Mb/s, 48 ms: ptc 12,500; min_th 31.25, max_th 93.75;
        // rtt = 3·(0.048 + 0.00008) = 0.14424 s; w_q = 1 − exp(−1/(10·0.14424·12,500)).
        let p = RedConfig::default().for_port(&port(100e6, 48, 1000));
        assert!(close(p.min_th, 31.25) && close(p.max_th, 93.75), "{p:?}");
        assert!(close(p.w_q, 1.0 - (-1.0 / (10.0 * 0.14424 * 12_500.0f64)).exp()), "{}", p.w_q);
        // 1 Gb/s: min_th = 0.005·125,000/2 = 312.5.
        assert!(close(RedConfig::default().for_port(&port(1e9, 1, 10_000)).min_th, 312.5));
    }

    #[test]
    fn given_values_are_kept_and_fill_the_rest_as_ns2_does() {
        let c = RedConfig { min_th: Some(150.0), max_th: Some(700.0), w_q: Some(0.002), ..Default::default() };
        let p = c.for_port(&port(45e6, 10, 1400));
        assert_eq!((p.min_th, p.max_th, p.w_q), (150.0, 700.0, 0.002));
        let p = RedConfig { min_th: Some(20.0), ..Default::default() }.for_port(&port(10e6, 10, 100));
        assert_eq!((p.min_th, p.max_th), (20.0, 60.0));
        // A given max_th below 3·(automatic min_th) keeps the 1:3 ratio.
        let p = RedConfig { max_th: Some(30.0), ..Default::default() }.for_port(&port(100e6, 48, 1000));
        assert_eq!((p.min_th, p.max_th), (10.0, 30.0));
    }

    #[test]
    fn unknown_rate_falls_back_to_floor_and_fj_weight() {
        let p = RedConfig::default().for_port(&ANY_PORT);
        assert_eq!((p.min_th, p.max_th, p.w_q), (5.0, 15.0, FALLBACK_W_Q));
        assert!(p.validate().is_ok());
    }

    #[test]
    fn validation_names_the_given_key() {
        let bad = |c: RedConfig| c.validate().unwrap_err().key;
        assert_eq!(bad(RedConfig { min_th: Some(0.0), ..Default::default() }), "min_th");
        assert_eq!(bad(RedConfig { min_th: Some(20.0), max_th: Some(10.0), ..Default::default() }), "max_th");
        assert_eq!(bad(RedConfig { w_q: Some(2.0), ..Default::default() }), "w_q");
        assert_eq!(bad(RedConfig { max_p: 0.0, ..Default::default() }), "max_p");
        assert!(RedConfig::default().validate().is_ok());
    }

    #[test]
    fn warns_only_where_a_threshold_cannot_be_reached() {
        let paper = RedConfig { min_th: Some(150.0), max_th: Some(700.0), ..Default::default() };
        let w = paper.warnings(&port(10e6, 10, 100));
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("never acts") && w[0].contains("min_th 150 packets") && w[0].contains("r0->r1"), "{w:?}");
        let w = paper.warnings(&port(45e6, 10, 400));
        assert!(w.len() == 1 && w[0].contains("max_th 700") && !w[0].contains("never acts"), "{w:?}");
        assert!(paper.warnings(&port(45e6, 10, 1400)).is_empty());
        // The automatic thresholds fit any buffer of 15 packets or more at 10 Mb/s.
        assert!(RedConfig::default().warnings(&port(10e6, 10, 20)).is_empty());
        assert!(RedConfig::default().warnings(&port(10e6, 10, 4))[0].contains("(automatic)"));
        // A byte-limited buffer is counted in mean-sized packets; no limit, no warning.
        let bytes = PortIdentity { limit_pkts: u32::MAX, limit_bytes: 100_000, ..port(10e6, 10, 0) };
        assert_eq!(paper.warnings(&bytes).len(), 1);
        assert!(paper.warnings(&PortIdentity { limit_pkts: u32::MAX, ..port(10e6, 10, 0) }).is_empty());
    }
}
