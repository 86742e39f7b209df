//! The parameter tables of a JetMax flow and of a JetMax router module (docs/PROTOCOLS.md §7, §16).
//! Every constant of §7 is [reconstructed]; the defaults are §7's. Times in seconds.

use crate::params::{positive, ParamError};
use crate::tcp::TcpParams;
use crate::time::secs;

/// How a router turns its per-interval sums into y, b and N.
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Window {
    /// §7's sums over the last Δ for packets with ipt ≤ Δ; packets with a longer ipt are
    /// summed over the earlier intervals their ipt still reaches and stand for their flow over
    /// that ipt (`router.rs`, "Slow flows"), so flows that send less than one packet per Δ are
    /// neither missed nor over-counted. Equal to `delta` while every counted flow sends at
    /// least one packet per Δ.
    #[default]
    Ipt,
    /// §7 read literally: the sums of the last Δ alone.
    Delta,
}

/// A JetMax router's `router_params`. Defaults: docs/PROTOCOLS.md §7.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct JetMaxRouterParams {
    /// Target utilisation γ, 0 < γ ≤ 1 [reconstructed: 0.95].
    pub gamma: f64,
    /// Control interval Δ, s [reconstructed: 10 ms, at most the smallest RTT].
    pub delta: f64,
    /// Floor of the fair share, packets/s of the port's packet size [reconstructed: 1].
    pub f_min: f64,
    /// Measurement window: "ipt" (default) or "delta" (§7 literally; see [`Window`]).
    pub window: Window,
    /// How far back "ipt" may look for slow packets, s: a packet older than this no longer
    /// counts, whatever its ipt (a flow at F_min = 1 pkt/s has an ipt of 1 s) [reconstructed: 2 s].
    pub max_window: f64,
    /// Count the arithmetic of the per-packet path (`ops_*` metrics; XCC-Linux: 3 additions).
    pub count_ops: bool,
}

impl Default for JetMaxRouterParams {
    fn default() -> JetMaxRouterParams {
        JetMaxRouterParams {
            gamma: 0.95,
            delta: 0.01,
            f_min: 1.0,
            window: Window::Ipt,
            max_window: 2.0,
            count_ops: false,
        }
    }
}

impl JetMaxRouterParams {
    /// 0 < γ ≤ 1; Δ at least 1 µs; F_min > 0; max_window ≥ Δ.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            return Err(ParamError::new("gamma", format!("must be in (0, 1], got {}", self.gamma)));
        }
        check_delta(self.delta)?;
        positive("f_min", self.f_min)?;
        positive("max_window", self.max_window)?;
        if self.max_window < self.delta {
            return Err(ParamError::new(
                "max_window",
                format!("must be at least delta = {} s, got {} s", self.delta, self.max_window),
            ));
        }
        if self.max_window / self.delta > 100_000.0 {
            return Err(ParamError::new("max_window", "must span at most 100000 intervals of delta"));
        }
        Ok(())
    }
}

/// Δ must be a finite positive time of at least 1 µs (so that the timers advance).
pub(crate) fn check_delta(delta: f64) -> Result<(), ParamError> {
    positive("delta", delta)?;
    if secs(delta) < 1_000 {
        return Err(ParamError::new("delta", format!("must be at least 1 µs, got {delta} s")));
    }
    Ok(())
}

/// What a data packet's ipt field says.
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Ipt {
    /// The time the packet adds to the flow's announced presence: s/x while the flow paces
    /// steadily, less when it sends before its previous packet's s/x ran out (after a rate
    /// increase), so that routers never count one flow twice (`rate.rs`).
    #[default]
    Presence,
    /// s/x at the current rate, §7 literally.
    Gap,
}

/// A JetMax flow's `params`. Defaults: docs/PROTOCOLS.md §7.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct JetMaxParams {
    /// Gain τ of x += τ(F − x), 0 < τ ≤ 1 [reconstructed: 0.55, (1 − τ)⁶ = 0.0083 for J5].
    pub tau: f64,
    /// The routers' control interval Δ, s: the first update waits for feedback stamped on
    /// packets sent at least 2Δ after the first data packet. Keep it equal to the routers'.
    pub delta: f64,
    /// The RTT assumed before the first sample (handshake off), s: the flow starts at one
    /// packet per this and updates once per it [reconstructed: 100 ms].
    pub initial_rtt: f64,
    /// The ipt field: "presence" (default) or "gap" (s/x, §7 literally; see [`Ipt`]).
    pub ipt: Ipt,
    /// The TCP transport's knobs (RTO bounds, ...); loss recovery is the transport's.
    pub tcp: TcpParams,
}

impl Default for JetMaxParams {
    fn default() -> JetMaxParams {
        JetMaxParams { tau: 0.55, delta: 0.01, initial_rtt: 0.1, ipt: Ipt::Presence, tcp: TcpParams::default() }
    }
}

impl JetMaxParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.tau > 0.0 && self.tau <= 1.0) {
            return Err(ParamError::new("tau", format!("must be in (0, 1], got {}", self.tau)));
        }
        check_delta(self.delta)?;
        positive("initial_rtt", self.initial_rtt)?;
        if secs(self.initial_rtt) < 1_000 {
            return Err(ParamError::new("initial_rtt", format!("must be at least 1 µs, got {} s", self.initial_rtt)));
        }
        self.tcp.validate().map_err(|e| ParamError::new(format!("tcp.{}", e.key), e.reason))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::parse;
    use serde_json::json;

    #[test]
    fn defaults_are_section_7s_and_bad_values_are_refused_with_their_key() {
        let r: JetMaxRouterParams = parse(&serde_json::Value::Null).unwrap();
        assert_eq!((r.gamma, r.delta, r.f_min, r.window, r.count_ops), (0.95, 0.01, 1.0, Window::Ipt, false));
        let f: JetMaxParams = parse(&serde_json::Value::Null).unwrap();
        assert_eq!((f.tau, f.delta, f.initial_rtt), (0.55, 0.01, 0.1));
        for (p, key) in [
            (json!({"gamma": 0.0}), "gamma"),
            (json!({"gamma": 1.2}), "gamma"),
            (json!({"delta": 0.0}), "delta"),
            (json!({"delta": 1e-9}), "delta"),
            (json!({"f_min": -1.0}), "f_min"),
            (json!({"max_window": 0.005}), "max_window"),
        ] {
            let r: JetMaxRouterParams = parse(&p).unwrap();
            assert_eq!(r.validate().unwrap_err().key, key, "{p}");
        }
        for (p, key) in [
            (json!({"tau": 0.0}), "tau"),
            (json!({"tau": 1.5}), "tau"),
            (json!({"delta": -0.01}), "delta"),
            (json!({"initial_rtt": 0.0}), "initial_rtt"),
            (json!({"tcp": {"dupthresh": 0}}), "tcp.dupthresh"),
        ] {
            let f: JetMaxParams = parse(&p).unwrap();
            assert_eq!(f.validate().unwrap_err().key, key, "{p}");
        }
        assert!(parse::<JetMaxRouterParams>(&json!({"gama": 0.9})).unwrap_err().reason.contains("gama"));
        assert_eq!(parse::<JetMaxRouterParams>(&json!({"window": "rtt"})).unwrap_err().key, "window");
        assert!(parse::<JetMaxParams>(&json!({"tao": 0.5})).unwrap_err().reason.contains("tao"));
        assert_eq!(parse::<JetMaxParams>(&json!({"ipt": "gap"})).unwrap().ipt, Ipt::Gap);
        assert_eq!(parse::<JetMaxParams>(&json!({"ipt": "rate"})).unwrap_err().key, "ipt");
    }
}
