//! A "piqi-rcp" router port's `router_params` (docs/PROTOCOLS.md §8 and §16) [reconstructed].
//! Times in seconds, rates as fractions of the port's capacity.

use crate::params::{positive, ParamError};
use crate::rcp::params::{fraction, interval, D0Gain};

/// Defaults and why: see `piqi_rcp::router`.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PiqiRouterParams {
    /// Control interval Δ, s [reconstructed: 10 ms, fixed; the gain, not the interval, follows d0].
    pub delta: f64,
    /// Target utilisation γ [reconstructed: 0.95]; the queue drains only through 1 − γ.
    pub gamma: f64,
    /// Integral gain K_i per d0 (per interval K_i·Δ/d0) [reconstructed: 0.5].
    pub k_i: f64,
    /// Proportional gain K_p on the change of the error [reconstructed: 0, as §8].
    pub k_p: f64,
    /// d0 before the first RTT sample, s [as RCP: 200 ms].
    pub d0: f64,
    /// How d0 follows the measured mean RTT [as RCP: symmetric].
    pub rcp_d0_gain: D0Gain,
    /// Initial rate as a fraction of C [as RCP: 0.05, for a fair comparison].
    pub initial_rate: f64,
    /// R_min in packets per d0 [as RCP: 0.01].
    pub r_min_pkts: f64,
    /// Count a flow from its first request (a SYN, or the first data packet of a flow without
    /// handshake: rtt 0 in the header) and make room for it at once [reconstructed: on].
    pub count_newcomers: bool,
    /// Make a counted newcomer's room only once its traffic shows in y (two intervals running):
    /// its first request is answered with its start share and the old flows keep R until then
    /// [reconstructed: on; off: room made at the request, R·N̂/(N̂ + 1), xcc-mice quick 74.0 %
    /// instead of 92.1 %; see router docs].
    pub admit_on_traffic: bool,
    /// With `admit_on_traffic`: from `due_lead` before a newcomer's data is due (d0 after its
    /// request) until it is admitted, stamp the fair rate with it counted; lifted once its
    /// traffic stops or never shows, judged on windows of `due_window` (`piqi_rcp::due_cut`)
    /// [reconstructed: on; without it admission on traffic fails P2's peak load].
    pub due_cut: bool,
    /// How long before the data is due the cut begins, s [reconstructed: 2 ms].
    pub due_lead: f64,
    /// The presence window, s [reconstructed: 2 ms].
    pub due_window: f64,
    /// N̂ = y / R̄ with R̄ the rate averaged over the last d0 (the rate y reflects) instead of
    /// the current R [reconstructed: on].
    pub smoothed_count: bool,
    /// Run the per-packet path on counted numbers and report "ops_*" (xcc::ops).
    pub count_ops: bool,
}

impl Default for PiqiRouterParams {
    fn default() -> PiqiRouterParams {
        PiqiRouterParams {
            delta: 0.01,
            gamma: 0.95,
            k_i: 0.5,
            k_p: 0.0,
            d0: 0.2,
            rcp_d0_gain: D0Gain::Symmetric,
            initial_rate: 0.05,
            r_min_pkts: 0.01,
            count_newcomers: true,
            admit_on_traffic: true,
            due_cut: true,
            due_lead: 0.002,
            due_window: 0.002,
            smoothed_count: true,
            count_ops: false,
        }
    }
}

impl PiqiRouterParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        interval("delta", self.delta)?;
        fraction("gamma", self.gamma)?;
        // The normalised loop r' = −(K_i/d0)·r(t − d0) is stable for K_i < π/2 (router notes).
        if !(self.k_i > 0.0 && self.k_i < std::f64::consts::FRAC_PI_2) {
            return Err(ParamError::new("k_i", format!("must be in (0, π/2), got {}", self.k_i)));
        }
        if !(self.k_p.is_finite() && (0.0..1.0).contains(&self.k_p)) {
            return Err(ParamError::new("k_p", format!("must be in [0, 1), got {}", self.k_p)));
        }
        interval("d0", self.d0)?;
        if !(self.due_lead.is_finite() && self.due_lead >= 0.0) {
            return Err(ParamError::new("due_lead", format!("must be a finite number >= 0, got {}", self.due_lead)));
        }
        interval("due_window", self.due_window)?;
        fraction("initial_rate", self.initial_rate)?;
        positive("r_min_pkts", self.r_min_pkts)?;
        Ok(())
    }
}
