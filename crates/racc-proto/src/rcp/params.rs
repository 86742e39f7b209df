//! The parameter tables of RCP (docs/PROTOCOLS.md §6 and §16): a flow's (`params`) and a router
//! port's (`router_params`). Times in seconds, rates as fractions of the port's capacity.

use crate::params::{positive, ParamError};
use crate::tcp::TcpParams;

/// How d0 (the router's mean RTT estimate) follows the byte-weighted mean RTT of an interval.
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum D0Gain {
    /// d0 += min(1, T/d0)·(mean − d0), rising and falling alike [reconstructed: our
    /// simplification, docs/PROTOCOLS.md §6].
    #[default]
    Symmetric,
    /// ns-2's rule [checked]: gain T/d0 when the mean is at least d0; below d0 the gain is
    /// (R/C)·(mean/d0)·(T/d0), so d0 rises fast and falls slowly.
    Ns2,
}

/// Where a rate router writes min(rate, R) into passing headers.
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Stamp {
    /// At dequeue [checked: ns-2's RCP queue]: the packet leaves with the R in force then, so
    /// the feedback is one propagation RTT old whatever the queue.
    #[default]
    Departure,
    /// At arrival, before the buffer [reconstructed: XCC-Linux's modules run in netfilter's
    /// NF_IP_POST_ROUTING hook, which Linux passes before the egress queueing discipline]: the
    /// feedback is also one queueing delay older.
    Arrival,
}

/// A "rcp" flow's `params`: the TCP transport's knobs (RCP itself has none at the sender).
#[derive(serde::Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RcpParams {
    /// The TCP transport's knobs (RTO bounds, ...); loss never changes the rate.
    pub tcp: TcpParams,
}

impl RcpParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.tcp.validate().map_err(|e| ParamError::new(format!("tcp.{}", e.key), e.reason))
    }
}

/// An "rcp" router port's `router_params`. Defaults: docs/PROTOCOLS.md §6 and §16.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RcpRouterParams {
    /// Longest control interval T_slot, s [checked: 10 ms]; T = min(T_slot, d0).
    pub t_slot: f64,
    /// d0 before the first RTT sample, s [checked: 200 ms].
    pub d0: f64,
    /// α, the gain on spare capacity [reconstructed: 0.1, the published value].
    pub alpha: f64,
    /// β, the gain on the queue [reconstructed: 1.0, the published value].
    pub beta: f64,
    /// Initial rate as a fraction of C [checked: 0.05].
    pub initial_rate: f64,
    /// R_min in packets (of the port's data packet size) per d0 [checked: 0.01].
    pub r_min_pkts: f64,
    /// How d0 follows the measured mean RTT.
    pub rcp_d0_gain: D0Gain,
    /// Where R is written into passing headers: "departure" (default) or "arrival" ([`Stamp`]).
    pub stamp: Stamp,
    /// Run the per-packet path on counted numbers and report "ops_*" (xcc::ops).
    pub count_ops: bool,
}

impl Default for RcpRouterParams {
    fn default() -> RcpRouterParams {
        RcpRouterParams {
            t_slot: 0.01,
            d0: 0.2,
            alpha: 0.1,
            beta: 1.0,
            initial_rate: 0.05,
            r_min_pkts: 0.01,
            rcp_d0_gain: D0Gain::Symmetric,
            stamp: Stamp::Departure,
            count_ops: false,
        }
    }
}

/// A time of at least 1 µs.
pub(crate) fn interval(key: &str, s: f64) -> Result<(), ParamError> {
    positive(key, s)?;
    if s < 1e-6 {
        return Err(ParamError::new(key, format!("must be at least 1 µs, got {s} s")));
    }
    Ok(())
}

/// A fraction in (0, 1].
pub(crate) fn fraction(key: &str, x: f64) -> Result<(), ParamError> {
    if x > 0.0 && x <= 1.0 {
        Ok(())
    } else {
        Err(ParamError::new(key, format!("must be in (0, 1], got {x}")))
    }
}

impl RcpRouterParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        interval("t_slot", self.t_slot)?;
        interval("d0", self.d0)?;
        positive("alpha", self.alpha)?;
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return Err(ParamError::new("beta", format!("must be a finite number >= 0, got {}", self.beta)));
        }
        fraction("initial_rate", self.initial_rate)?;
        positive("r_min_pkts", self.r_min_pkts)?;
        Ok(())
    }
}
