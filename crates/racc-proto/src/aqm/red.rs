//! Random Early Detection, exactly as docs/PROTOCOLS.md §12: Floyd & Jacobson, "Random Early
//! Detection Gateways for Congestion Avoidance", IEEE/ACM ToN 1993 (the "F&J" below), with
//! ns-2's gentle mode (Floyd 2000) and Floyd's byte mode; marking per RFC 3168.
//!
//! Per arrival (F&J Fig. 2):
//! ```text
//! avg  = busy ? (1-w_q)·avg + w_q·q : (1-w_q)^m · avg,  m = idle/(s/C)
//! if avg ≥ min_th:  count += 1; p_b = f(avg) [×size/s in byte mode]; p_a = p_b/(1-count·p_b)
//!                   drop/mark with p_a, then count = 0
//! else:             count = -1
//! ```
//! The arithmetic is in small pure functions (`red_*`) so it can be checked by hand.

use crate::packet::{ecn, Packet};
use crate::params::ParamError;
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::{Dur, Time, NS_PER_SEC};

/// Whether RED measures the queue in packets or bytes.
#[derive(serde::Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RedMode {
    /// q = packets waiting; thresholds in packets.
    #[default]
    Packet,
    /// q = bytes waiting; thresholds (given in packets) × mean packet size; p_b scaled by
    /// pkt.size / mean packet size (Floyd's byte mode).
    Byte,
}

/// What RED does to a packet it selects.
#[derive(serde::Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RedAction {
    #[default]
    Drop,
    /// Set CE on ECN-capable packets; Not-ECT packets are dropped instead (RFC 3168 §7).
    Mark,
}

/// The parameters one RED queue runs with, every one resolved: a scenario's `router_params`
/// are a [`super::RedConfig`], which sets what they leave out from the port. `Default` is
/// VCP-DCCP's T3 set-up (docs/PROTOCOLS.md §12, §16): max_p 0.1, min_th 150 pkts, max_th 700
/// pkts, w_q 0.002, gentle on [reconstructed], packet mode, drop.
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    /// Lower threshold on avg, packets (× mean_pkt_size in byte mode).
    pub min_th: f64,
    /// Upper threshold on avg, packets (× mean_pkt_size in byte mode).
    pub max_th: f64,
    /// p_b at avg = max_th.
    pub max_p: f64,
    /// EWMA weight of the average queue.
    pub w_q: f64,
    /// ns-2 gentle mode: p_b rises linearly from max_p to 1 between max_th and 2·max_th.
    pub gentle: bool,
    pub mode: RedMode,
    pub action: RedAction,
    /// Mean packet size s in bytes for the idle decay and byte mode; `None` = the port's
    /// `PortView::mean_pkt_size`.
    pub mean_pkt_size: Option<u32>,
}

impl Default for RedParams {
    fn default() -> RedParams {
        RedParams {
            min_th: 150.0,
            max_th: 700.0,
            max_p: 0.1,
            w_q: 0.002,
            gentle: true,
            mode: RedMode::Packet,
            action: RedAction::Drop,
            mean_pkt_size: None,
        }
    }
}

impl RedParams {
    /// Refuse impossible settings, naming the key: 0 < min_th < max_th (finite),
    /// 0 < max_p ≤ 1, 0 < w_q ≤ 1, mean_pkt_size > 0 if given.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.min_th > 0.0 && self.min_th.is_finite()) {
            return Err(ParamError::new("min_th", format!("must be a finite number > 0, got {}", self.min_th)));
        }
        if !(self.max_th > self.min_th && self.max_th.is_finite()) {
            return Err(ParamError::new(
                "max_th",
                format!("must be finite and > min_th ({}), got {}", self.min_th, self.max_th),
            ));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(ParamError::new("max_p", format!("must be in (0, 1], got {}", self.max_p)));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(ParamError::new("w_q", format!("must be in (0, 1], got {}", self.w_q)));
        }
        if self.mean_pkt_size == Some(0) {
            return Err(ParamError::new("mean_pkt_size", "must be > 0 bytes"));
        }
        Ok(())
    }
}

/// EWMA step on a busy port (F&J §4): `(1-w_q)·avg + w_q·q`.
#[inline]
pub fn red_ewma(avg: f64, w_q: f64, q: f64) -> f64 {
    (1.0 - w_q) * avg + w_q * q
}

/// Decay of avg over an idle period (F&J §4, Fig. 2): `(1-w_q)^m · avg` with
/// `m = idle / (s/C)`, the number of packets of size `mean_pkt_size` bytes the link
/// (`capacity_bps`) could have sent while idle. m is real-valued (ns-2 truncates it to an
/// integer). A zero capacity means no decay; a zero packet size a full decay.
#[inline]
pub fn red_idle_decay(avg: f64, w_q: f64, idle: Dur, mean_pkt_size: u32, capacity_bps: f64) -> f64 {
    if idle == 0 || capacity_bps.is_nan() || capacity_bps <= 0.0 {
        return avg;
    }
    let pkt_time_ns = mean_pkt_size as f64 * 8.0 * NS_PER_SEC as f64 / capacity_bps;
    let m = idle as f64 / pkt_time_ns; // +inf if the packet size is 0
    avg * (1.0 - w_q).powf(m)
}

/// Base drop probability p_b from avg (F&J §4, ns-2 gentle), thresholds in the unit of avg.
#[inline]
pub fn red_pb(avg: f64, min_th: f64, max_th: f64, max_p: f64, gentle: bool) -> f64 {
    if avg < min_th {
        0.0
    } else if avg < max_th {
        max_p * (avg - min_th) / (max_th - min_th)
    } else if gentle && avg < 2.0 * max_th {
        max_p + (1.0 - max_p) * (avg - max_th) / max_th
    } else {
        1.0
    }
}

/// Floyd's byte mode: p_b · size / mean_size, at most 1.
#[inline]
pub fn red_byte_scale(p_b: f64, size: u32, mean_size: u32) -> f64 {
    (p_b * size as f64 / mean_size.max(1) as f64).min(1.0)
}

/// Actual drop probability (F&J §4): `p_b / (1 - count·p_b)`, or 1 once `count·p_b ≥ 1`
/// (also clamped to 1 just below that point, where the quotient exceeds 1).
#[inline]
pub fn red_pa(p_b: f64, count: i64) -> f64 {
    if p_b <= 0.0 {
        return 0.0;
    }
    let c = count as f64 * p_b;
    if c >= 1.0 {
        1.0
    } else {
        (p_b / (1.0 - c)).min(1.0)
    }
}

/// The RED router module for one output port.
#[derive(Clone, Debug)]
pub struct Red {
    p: RedParams,
    rng: SimRng,
    /// Average queue, in packets (packet mode) or bytes (byte mode).
    avg: f64,
    /// Arrivals since the last drop/mark while avg ≥ min_th; -1 after avg < min_th (F&J).
    count: i64,
}

impl Red {
    /// A RED queue drawing from `rng` (the port's own stream). Validates `p`.
    pub fn new(p: RedParams, rng: SimRng) -> Result<Red, ParamError> {
        p.validate()?;
        Ok(Red { p, rng, avg: 0.0, count: -1 })
    }

    /// Current average queue (packets, or bytes in byte mode).
    #[inline]
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// The F&J `count` variable.
    #[inline]
    pub fn count(&self) -> i64 {
        self.count
    }

    pub fn params(&self) -> &RedParams {
        &self.p
    }

    /// Update avg for an arrival at `now` (F&J Fig. 2, first step).
    #[inline]
    fn update_avg(&mut self, now: Time, q: f64, s: u32, port: &PortView) {
        match port.idle_since {
            // Empty queue and idle link: decay over the idle time.
            Some(t) if q == 0.0 => {
                self.avg = red_idle_decay(self.avg, self.p.w_q, now.saturating_sub(t), s, port.capacity_bps)
            }
            _ => self.avg = red_ewma(self.avg, self.p.w_q, q),
        }
    }
}

impl RouterModule for Red {
    fn name(&self) -> &'static str {
        "red"
    }

    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, port: &PortView) -> Verdict {
        let s = self.p.mean_pkt_size.unwrap_or(port.mean_pkt_size).max(1);
        let (q, scale) = match self.p.mode {
            RedMode::Packet => (port.queue_pkts as f64, 1.0),
            RedMode::Byte => (port.queue_bytes as f64, s as f64),
        };
        self.update_avg(now, q, s, port);
        let min_th = self.p.min_th * scale;
        if self.avg < min_th {
            self.count = -1;
            return Verdict::Forward;
        }
        self.count += 1;
        let mut p_b = red_pb(self.avg, min_th, self.p.max_th * scale, self.p.max_p, self.p.gentle);
        if self.p.mode == RedMode::Byte && p_b < 1.0 {
            // Forced drops (p_b = 1) are not scaled down for small packets (ns-2).
            p_b = red_byte_scale(p_b, pkt.size, s);
        }
        let p_a = red_pa(p_b, self.count);
        // No draw when the outcome is certain.
        let hit = if p_a >= 1.0 {
            true
        } else if p_a <= 0.0 {
            false
        } else {
            self.rng.uniform() < p_a
        };
        if !hit {
            return Verdict::Forward;
        }
        self.count = 0;
        match self.p.action {
            RedAction::Mark if pkt.is_ect() => {
                pkt.set_visible_ecn(ecn::CE);
                Verdict::Mark
            }
            // RFC 3168: never mark Not-ECT, drop it.
            _ => Verdict::Drop,
        }
    }

    /// A tail drop by the full buffer is a drop too: count restarts (ns-2 red.cc).
    fn on_buffer_drop(&mut self, _now: Time, _pkt: &Packet, _port: &PortView) {
        self.count = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{hdr, Kind, OuterIp, TcpHeader};
    use crate::time::NS_PER_MS;

    fn pkt(size: u32, ecn_bits: u8) -> Packet {
        let mut p = Packet::tcp(1, Kind::Data, size, size.saturating_sub(hdr::IP_TCP), TcpHeader::default());
        p.ecn = ecn_bits;
        p
    }

    fn busy(q: u32) -> PortView {
        PortView {
            queue_pkts: q,
            queue_bytes: q as u64 * 1000,
            capacity_bps: 10e6,
            limit_pkts: 10_000,
            limit_bytes: u64::MAX,
            idle_since: None,
            mean_pkt_size: 1000,
            ..Default::default()
        }
    }

    fn red(p: RedParams) -> Red {
        Red::new(p, SimRng::for_component(1, "red/test")).unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn defaults_are_seed_001() {
        let p = RedParams::default();
        assert_eq!((p.max_p, p.min_th, p.max_th, p.w_q), (0.1, 150.0, 700.0, 0.002));
        assert!(p.gentle);
        assert_eq!((p.mode, p.action, p.mean_pkt_size), (RedMode::Packet, RedAction::Drop, None));
        let r = red(p);
        assert_eq!(r.name(), "red");
        assert_eq!((r.avg(), r.count()), (0.0, -1));
    }

    #[test]
    fn parse_from_table_and_validation_names_key() {
        use crate::aqm::RedConfig;
        use crate::params::parse;
        use crate::protocol::ANY_PORT;
        let v = serde_json::json!({"min_th": 5, "max_th": 15, "max_p": 0.2, "w_q": 0.5,
            "gentle": false, "mode": "byte", "action": "mark", "mean_pkt_size": 500});
        let p = parse::<RedConfig>(&v).unwrap().for_port(&ANY_PORT);
        assert_eq!((p.min_th, p.max_th, p.w_q), (5.0, 15.0, 0.5));
        assert_eq!((p.mode, p.action, p.mean_pkt_size, p.gentle), (RedMode::Byte, RedAction::Mark, Some(500), false));
        let c: RedConfig = parse(&serde_json::json!({"max_p": 0.05})).unwrap();
        assert_eq!((c.max_p, c.min_th), (0.05, None));
        assert_eq!(parse::<RedConfig>(&serde_json::json!({"bogus": 1})).unwrap_err().key, "bogus");
        assert_eq!(parse::<RedConfig>(&serde_json::json!({"mode": "bits"})).unwrap_err().key, "mode");

        let bad = |f: fn(&mut RedParams)| {
            let mut p = RedParams::default();
            f(&mut p);
            Red::new(p, SimRng::for_component(0, "x")).unwrap_err().key
        };
        assert_eq!(bad(|p| p.min_th = 0.0), "min_th");
        assert_eq!(bad(|p| p.min_th = f64::NAN), "min_th");
        assert_eq!(bad(|p| p.max_th = 150.0), "max_th");
        assert_eq!(bad(|p| p.max_th = f64::INFINITY), "max_th");
        assert_eq!(bad(|p| p.max_p = 0.0), "max_p");
        assert_eq!(bad(|p| p.max_p = 1.5), "max_p");
        assert_eq!(bad(|p| p.w_q = 0.0), "w_q");
        assert_eq!(bad(|p| p.w_q = 1.01), "w_q");
        assert_eq!(bad(|p| p.mean_pkt_size = Some(0)), "mean_pkt_size");
        assert!(
            Red::new(RedParams { max_p: 1.0, w_q: 1.0, ..Default::default() }, SimRng::for_component(0, "x")).is_ok()
        );
    }

    #[test]
    fn avg_by_hand_over_a_few_arrivals() {
        // w_q = 0.5, queue 4, 8, 0 (link still busy), 2:
        // avg 0 → 2 → 5 → 2.5 → 2.25.
        let mut r = red(RedParams { w_q: 0.5, ..Default::default() });
        let mut p = pkt(1000, ecn::NOT_ECT);
        for (q, want) in [(4, 2.0), (8, 5.0), (0, 2.5), (2, 2.25)] {
            assert_eq!(r.on_arrival(0, &mut p, &busy(q)), Verdict::Forward);
            assert!(close(r.avg(), want), "q {q}: avg {} want {want}", r.avg());
            assert_eq!(r.count(), -1); // below min_th
        }
        // Seed-001 weight: after 3 arrivals at q = 100, avg = 100·(1 - 0.998³).
        let mut r = red(RedParams::default());
        for _ in 0..3 {
            r.on_arrival(0, &mut p, &busy(100));
        }
        assert!(close(r.avg(), 100.0 * (1.0 - 0.998f64.powi(3))));
    }

    #[test]
    fn avg_decays_over_idle_period() {
        // 10 Mb/s, s = 1000 B → s/C = 0.8 ms. Idle 8 ms → m = 10: avg·(1-w_q)^10.
        let mut r = red(RedParams { w_q: 0.1, ..Default::default() });
        let mut p = pkt(1000, ecn::NOT_ECT);
        r.on_arrival(0, &mut p, &busy(50)); // avg = 5
        assert!(close(r.avg(), 5.0));
        let idle = PortView { queue_pkts: 0, queue_bytes: 0, idle_since: Some(2 * NS_PER_MS), ..busy(0) };
        r.on_arrival(10 * NS_PER_MS, &mut p, &idle);
        assert!(close(r.avg(), 5.0 * 0.9f64.powi(10)), "{}", r.avg());
        // Fractional m: idle 0.4 ms → m = 0.5.
        let mut r2 = red(RedParams { w_q: 0.1, ..Default::default() });
        r2.on_arrival(0, &mut p, &busy(50));
        r2.on_arrival(NS_PER_MS, &mut p, &PortView { idle_since: Some(600_000), ..busy(0) });
        assert!(close(r2.avg(), 5.0 * 0.9f64.sqrt()));
        // Idle since exactly now: no decay. A busy link with an empty queue uses the EWMA.
        let a = r2.avg();
        r2.on_arrival(NS_PER_MS, &mut p, &PortView { idle_since: Some(NS_PER_MS), ..busy(0) });
        assert_eq!(r2.avg(), a);
        r2.on_arrival(NS_PER_MS, &mut p, &busy(0));
        assert!(close(r2.avg(), 0.9 * a));
        // The explicit mean_pkt_size overrides the port's: s = 500 B → s/C = 0.4 ms, m = 20.
        let mut r3 = red(RedParams { w_q: 0.1, mean_pkt_size: Some(500), ..Default::default() });
        r3.on_arrival(0, &mut p, &busy(50));
        r3.on_arrival(10 * NS_PER_MS, &mut p, &idle);
        assert!(close(r3.avg(), 5.0 * 0.9f64.powi(20)));
        // Pure function edge cases.
        assert_eq!(red_idle_decay(3.0, 0.1, 0, 1000, 1e6), 3.0);
        assert_eq!(red_idle_decay(3.0, 0.1, 5, 1000, 0.0), 3.0);
        assert_eq!(red_idle_decay(3.0, 0.1, 5, 0, 1e6), 0.0);
    }

    #[test]
    fn pb_regions() {
        let (min, max, mp) = (150.0, 700.0, 0.1);
        assert_eq!(red_pb(0.0, min, max, mp, true), 0.0);
        assert_eq!(red_pb(149.9, min, max, mp, true), 0.0);
        assert_eq!(red_pb(150.0, min, max, mp, true), 0.0);
        // Linear: 0.1·(425-150)/550 = 0.05.
        assert!(close(red_pb(425.0, min, max, mp, true), 0.05));
        assert!(close(red_pb(425.0, min, max, mp, false), 0.05));
        // Gentle: 0.1 + 0.9·(1050-700)/700 = 0.55; at max_th exactly: max_p.
        assert!(close(red_pb(700.0, min, max, mp, true), 0.1));
        assert!(close(red_pb(1050.0, min, max, mp, true), 0.55));
        // Not gentle: 1 from max_th on. Beyond 2·max_th: 1 either way.
        assert_eq!(red_pb(700.0, min, max, mp, false), 1.0);
        assert_eq!(red_pb(1400.0, min, max, mp, true), 1.0);
        assert_eq!(red_pb(1e9, min, max, mp, true), 1.0);
    }

    #[test]
    fn pa_with_count() {
        assert_eq!(red_pa(0.0, 5), 0.0);
        assert_eq!(red_pa(0.05, 0), 0.05);
        assert!(close(red_pa(0.05, 10), 0.1)); // 0.05/(1-0.5)
        assert!(close(red_pa(0.05, 18), 0.5)); // 0.05/(1-0.9)
        assert_eq!(red_pa(0.05, 19), 1.0); // 0.05/0.05
        assert_eq!(red_pa(0.05, 20), 1.0); // count·p_b ≥ 1
        assert_eq!(red_pa(0.3, 3), 1.0); // 0.3/0.1 = 3 → clamped
        assert_eq!(red_pa(1.0, 0), 1.0);
    }

    #[test]
    fn byte_scale() {
        assert!(close(red_byte_scale(0.05, 500, 1000), 0.025));
        assert!(close(red_byte_scale(0.05, 1500, 1000), 0.075));
        assert_eq!(red_byte_scale(0.8, 1500, 500), 1.0);
    }

    /// A RED with w_q = 1, so avg = q exactly at every arrival.
    fn instant(min_th: f64, max_th: f64, max_p: f64) -> Red {
        red(RedParams { min_th, max_th, max_p, w_q: 1.0, gentle: true, ..Default::default() })
    }

    #[test]
    fn count_rules() {
        // min 10, max 20, max_p 0.02: avg 15 → p_b = 0.01; avg 45 → p_b = 1 (beyond 2·max_th).
        let mut r = instant(10.0, 20.0, 0.02);
        let mut p = pkt(1000, ecn::NOT_ECT);
        assert_eq!(r.count(), -1);
        r.on_arrival(0, &mut p, &busy(5));
        assert_eq!(r.count(), -1); // below min_th: -1
                                   // First arrival at/above min_th: count -1 → 0, p_a = p_b; then +1 per arrival.
        let mut forwarded = 0;
        while r.on_arrival(0, &mut p, &busy(15)) == Verdict::Forward {
            forwarded += 1;
            assert_eq!(r.count(), forwarded - 1);
        }
        assert_eq!(r.count(), 0); // after a drop
        r.on_arrival(0, &mut p, &busy(15));
        assert!(r.count() <= 1);
        // Forced drop beyond 2·max_th: count goes to 0 every time, no draw needed.
        for _ in 0..5 {
            assert_eq!(r.on_arrival(0, &mut p, &busy(45)), Verdict::Drop);
            assert_eq!(r.count(), 0);
        }
        // Back below min_th: -1 again.
        r.on_arrival(0, &mut p, &busy(3));
        assert_eq!(r.count(), -1);
        // A tail drop by the full buffer restarts count (ns-2).
        r.on_arrival(0, &mut p, &busy(15));
        r.on_arrival(0, &mut p, &busy(15));
        r.on_buffer_drop(0, &p, &busy(15));
        assert_eq!(r.count(), 0);
    }

    #[test]
    fn count_forces_a_drop_within_one_over_pb() {
        // p_b = 0.1 → p_a reaches 1 by count 9 (0.1/(1-0.9)): never more than 9 forwards in a row.
        let mut r = instant(10.0, 20.0, 0.2);
        let mut p = pkt(1000, ecn::NOT_ECT);
        r.on_arrival(0, &mut p, &busy(15)); // count 0
        let mut run = 0;
        let mut max_run = 0;
        for _ in 0..100_000 {
            if r.on_arrival(0, &mut p, &busy(15)) == Verdict::Forward {
                run += 1;
                max_run = max_run.max(run);
            } else {
                run = 0;
            }
        }
        assert_eq!(max_run, 8);
    }

    #[test]
    fn byte_mode_thresholds_and_scaling() {
        // Byte mode, s = 1000 B (port's): thresholds 10 000 B and 20 000 B, avg in bytes.
        let params =
            RedParams { min_th: 10.0, max_th: 20.0, max_p: 0.1, w_q: 1.0, mode: RedMode::Byte, ..Default::default() };
        let mut r = red(params.clone());
        let mut p = pkt(1000, ecn::NOT_ECT);
        // queue_pkts is ignored: 5 packets but 15 000 bytes.
        let port = PortView { queue_pkts: 5, queue_bytes: 15_000, ..busy(0) };
        r.on_arrival(0, &mut p, &port);
        assert_eq!(r.avg(), 15_000.0);
        assert_eq!(r.count(), 0); // 15 000 ≥ min_th·s
                                  // In packet mode the same port is below min_th.
        let mut rp = red(RedParams { mode: RedMode::Packet, ..params.clone() });
        rp.on_arrival(0, &mut p, &port);
        assert_eq!((rp.avg(), rp.count()), (5.0, -1));
        // Scaling: p_b = 0.05 at 15 000 B; a 250 B packet sees 0.0125 and a 2000 B one 0.1.
        // Measure the early-drop rate with count held at 0 (reset before each arrival).
        let rate = |size: u32| {
            let mut r = red(params.clone());
            let mut q = pkt(size, ecn::NOT_ECT);
            let n = 400_000;
            let mut drops = 0;
            for _ in 0..n {
                r.count = -1;
                if r.on_arrival(0, &mut q, &port) == Verdict::Drop {
                    drops += 1;
                }
            }
            drops as f64 / n as f64
        };
        // s.d. of the rate: sqrt(p(1-p)/n) ≤ 4.7e-4; tolerance ≥ 5 s.d.
        assert!((rate(250) - 0.0125).abs() < 1e-3);
        assert!((rate(1000) - 0.05).abs() < 2e-3);
        assert!((rate(2000) - 0.1).abs() < 2.5e-3);
        // Forced drops (avg ≥ 2·max_th) are not scaled down for small packets.
        let mut r = red(params);
        let full = PortView { queue_bytes: 40_000, ..busy(0) };
        let mut tiny = pkt(40, ecn::NOT_ECT);
        for _ in 0..100 {
            assert_eq!(r.on_arrival(0, &mut tiny, &full), Verdict::Drop);
        }
    }

    #[test]
    fn mark_vs_drop() {
        let params = RedParams { min_th: 10.0, max_th: 20.0, w_q: 1.0, action: RedAction::Mark, ..Default::default() };
        let full = busy(100); // beyond 2·max_th: p_a = 1
        let mut r = red(params.clone());
        // ECT(0) and ECT(1) get CE and a Mark verdict.
        for bits in [ecn::ECT0, ecn::ECT1, ecn::CE] {
            let mut p = pkt(1000, bits);
            assert_eq!(r.on_arrival(0, &mut p, &full), Verdict::Mark);
            assert_eq!(p.ecn, ecn::CE);
            assert_eq!(r.count(), 0);
        }
        // Not-ECT is dropped, never marked (RFC 3168), and left untouched.
        let mut p = pkt(1000, ecn::NOT_ECT);
        assert_eq!(r.on_arrival(0, &mut p, &full), Verdict::Drop);
        assert_eq!(p.ecn, ecn::NOT_ECT);
        // Inside an IPsec tunnel the outer header is what is seen and marked.
        let mut t = pkt(1000, ecn::NOT_ECT);
        t.outer = Some(OuterIp { tunnel: 1, ecn: ecn::ECT0, ip_id: 0 });
        assert_eq!(r.on_arrival(0, &mut t, &full), Verdict::Mark);
        assert_eq!((t.ecn, t.visible_ecn()), (ecn::NOT_ECT, ecn::CE));
        // action = drop drops ECT packets too, leaving the bits alone.
        let mut rd = red(RedParams { action: RedAction::Drop, ..params });
        let mut p = pkt(1000, ecn::ECT0);
        assert_eq!(rd.on_arrival(0, &mut p, &full), Verdict::Drop);
        assert_eq!(p.ecn, ecn::ECT0);
        // Forwarded packets are untouched.
        let mut p = pkt(1000, ecn::ECT0);
        assert_eq!(rd.on_arrival(0, &mut p, &busy(1)), Verdict::Forward);
        assert_eq!(p.ecn, ecn::ECT0);
    }

    /// Exact distribution of the gap X (arrivals from one drop to the next, inclusive) with
    /// avg fixed and §12's count rules: the n-th arrival after a drop has count n and is
    /// dropped with p_a(n) = min(1, p_b/(1-n·p_b)); P(X = n) = Π_{i<n}(1-p_a(i))·p_a(n).
    /// For 1/p_b an integer this telescopes to X uniform on {1, …, 1/p_b − 1}
    /// (P = p_b/(1-p_b) each), E[X] = 1/(2p_b). F&J §7 index count from the packet after
    /// the mark (p_b/(1-(n-1)p_b)), giving uniform {1, …, 1/p_b}, E[X] = (1/p_b + 1)/2: the
    /// two differ by half a packet, i.e. by p_b/2 relative.
    fn exact_gap_pmf(p_b: f64) -> Vec<f64> {
        let mut pmf = vec![0.0]; // index 0 unused
        let mut survive = 1.0;
        let mut n = 1;
        while survive > 1e-15 {
            let pa = red_pa(p_b, n);
            pmf.push(survive * pa);
            survive *= 1.0 - pa;
            n += 1;
        }
        pmf
    }

    #[test]
    fn inter_drop_gaps_are_uniform() {
        // min 100, max 200, max_p 0.1, avg held at 150 (w_q = 1, q = 150) → p_b = 0.05.
        let mut r = instant(100.0, 200.0, 0.1);
        let mut p = pkt(1000, ecn::NOT_ECT);
        let port = busy(150);
        // Hand computation: 19 equally likely gaps 1..19, mean 10, drop fraction 0.1.
        let pmf = exact_gap_pmf(0.05);
        assert_eq!(pmf.len(), 20);
        for &x in &pmf[1..] {
            assert!(close(x, 0.05 / 0.95));
        }
        let mean_exact: f64 = pmf.iter().enumerate().map(|(n, x)| n as f64 * x).sum();
        assert!(close(mean_exact, 10.0));
        let fj = (1.0 / 0.05 + 1.0) / 2.0; // F&J §7's (1/p_b + 1)/2 = 10.5

        // Start right after a drop so every counted gap is a full one.
        while r.on_arrival(0, &mut p, &port) != Verdict::Drop {}
        let n_arrivals = 1_000_000;
        let mut hist = [0u64; 21];
        let mut gap = 0usize;
        let mut drops = 0u64;
        for _ in 0..n_arrivals {
            gap += 1;
            if r.on_arrival(0, &mut p, &port) == Verdict::Drop {
                hist[gap.min(20)] += 1;
                drops += 1;
                gap = 0;
            }
        }
        assert_eq!(hist[20], 0, "no gap may exceed 1/p_b - 1 = 19");
        assert_eq!(hist[0], 0);
        let gaps: u64 = hist.iter().sum();
        let mean_gap = hist.iter().enumerate().map(|(n, &c)| n as f64 * c as f64).sum::<f64>() / gaps as f64;
        // ~1e5 gaps; Var(X) = (19²-1)/12 = 30, s.d. of the mean gap ≈ sqrt(30/1e5) = 0.017
        // (0.17 %). A 1 % bound is ~6 s.d. yet would catch the half-packet shift (5 %).
        assert!((mean_gap - mean_exact).abs() / mean_exact < 0.01, "mean gap {mean_gap}, exact {mean_exact}");
        assert!((mean_gap - fj).abs() / fj < 0.06, "roughly F&J's (1/p_b+1)/2: {mean_gap} vs {fj}");
        let frac = drops as f64 / n_arrivals as f64;
        assert!((frac - 1.0 / mean_exact).abs() < 0.001, "drop fraction {frac}");
        // Uniformity: each of the 19 cells holds ~1/19 of the gaps; a cell count has
        // s.d. ≈ sqrt(gaps·(1/19)(18/19)) ≈ 70 of ~5300; allow 5 %, ~4 s.d.
        let expect = gaps as f64 / 19.0;
        for (n, &c) in hist.iter().enumerate().take(20).skip(1) {
            assert!((c as f64 - expect).abs() / expect < 0.05, "gap {n}: {c} vs {expect}");
        }
    }

    #[test]
    fn inter_drop_gap_for_non_integer_one_over_pb() {
        // p_b = 0.03 (1/p_b = 33.3): exact E[X] from the product formula, checked by simulation.
        let mut r = instant(100.0, 200.0, 0.06);
        let mut p = pkt(1000, ecn::NOT_ECT);
        let port = busy(150);
        let pmf = exact_gap_pmf(0.03);
        assert!(close(pmf.iter().sum::<f64>(), 1.0));
        let mean_exact: f64 = pmf.iter().enumerate().map(|(n, x)| n as f64 * x).sum();
        while r.on_arrival(0, &mut p, &port) != Verdict::Drop {}
        let (mut drops, n) = (0u64, 1_000_000u64);
        for _ in 0..n {
            if r.on_arrival(0, &mut p, &port) == Verdict::Drop {
                drops += 1;
            }
        }
        let mean_gap = n as f64 / drops as f64;
        // ~6e4 gaps, s.d. of the mean ≈ sqrt(Var/gaps) ≈ 0.04 (0.25 %); bound 1 %.
        assert!((mean_gap - mean_exact).abs() / mean_exact < 0.01, "{mean_gap} vs {mean_exact}");
    }

    #[test]
    fn deterministic_per_seed() {
        let run = |seed| {
            let mut r = Red::new(
                RedParams { min_th: 10.0, max_th: 20.0, w_q: 0.3, ..Default::default() },
                SimRng::for_component(seed, "red/port0"),
            )
            .unwrap();
            let mut p = pkt(1000, ecn::NOT_ECT);
            (0..5000u32)
                .map(|i| r.on_arrival(i as u64, &mut p, &busy(10 + i % 15)) == Verdict::Drop)
                .collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }
}
