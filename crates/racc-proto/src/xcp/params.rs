//! The parameter tables of an XCP flow and of an XCP router module (docs/PROTOCOLS.md §5, §16).

use crate::params::{positive, ParamError};
use crate::tcp::TcpParams;
use crate::xcc::CapacitySource;

/// The `params` table of an "xcp" flow.
#[derive(serde::Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct XcpParams {
    /// r_desired, wire bytes per second: the sender asks for H_feedback =
    /// (r_desired·rtt − cwnd)/(cwnd/s) instead of +inf (docs/PROTOCOLS.md §5). None = as much as
    /// the routers allow.
    pub desired_rate: Option<f64>,
    /// The header's form: "window" (default) or "throughput" ([`XcpForm`]); every XCP router
    /// on the path must use the same (the path contract refuses a mix).
    pub form: XcpForm,
    /// The TCP transport's knobs (dupthresh, RTO bounds, ...).
    pub tcp: TcpParams,
}

/// The form of XCP's header and feedback (docs/PROTOCOLS.md §5, §15).
///
/// - `Window` [checked: Katabi et al. 2002, App. A]: the sender writes H_cwnd (bytes); the router
///   computes rtt·s/cwnd per packet (one division) and writes feedback in **bytes of window**;
///   the sender adds it to cwnd.
/// - `Throughput` [checked: draft-falk-xcp and ns-2.35's header; XCC-Linux's count]: the
///   sender writes X = rtt·s/cwnd (its inter-packet time, ns) in H_cwnd's place, so the router
///   divides by nothing, and the feedback is a **throughput change** in B/s, the window-form
///   feedback divided by the packet's rtt: ξ_p·rtt²·s/cwnd/rtt = ξ_p·X and ξ_n·rtt·s/rtt =
///   ξ_n·s, one product each; the budgets are the window form's divided by d. The sender adds
///   fb·srtt to cwnd. Per packet: 6 additions + 3 multiplications, as XCC-Linux counts.
///   Not bit-identical to `Window`: the sender scales by its srtt when the ACK arrives, not by
///   the H_rtt each router used, and a budget runs out after packets worth P/d in throughput
///   rather than P in window bytes (equal when every rtt equals d).
#[derive(serde::Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum XcpForm {
    #[default]
    Window,
    Throughput,
}

impl XcpForm {
    /// The path contract's value of this form ([`crate::xcp::keys::XCP_FORM`]).
    pub fn contract(self) -> i64 {
        match self {
            XcpForm::Window => 0,
            XcpForm::Throughput => 1,
        }
    }
}

impl XcpParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if let Some(r) = self.desired_rate {
            positive("desired_rate", r)?;
        }
        self.tcp.validate().map_err(|e| ParamError::new(format!("tcp.{}", e.key), e.reason))
    }
}

/// How a router bills the feedback a packet leaves with against the interval's budgets
/// (docs/PROTOCOLS.md §5 "Budget rule").
#[derive(serde::Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum XcpBudget {
    /// Bill what the packet is granted: this router's positive and negative parts when it
    /// writes its feedback; when the header already holds a lower H, H to the positive budget
    /// if H ≥ 0, −H to the negative one if H < 0 [reconstructed; the default].
    #[default]
    Granted,
    /// ns-2.35 `xcpq.cc`: when the header holds a lower H, the shortfall (fb − H) is billed to
    /// the negative budget too, and H plus that to the positive one.
    Ns235,
}

/// The `router_params` table of an "xcp" router module. Defaults: docs/PROTOCOLS.md §5, §16.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct XcpRouterParams {
    /// Efficiency controller gain on spare bandwidth [checked: 0.4].
    pub alpha: f64,
    /// Efficiency controller gain on the persistent queue [checked: 0.226 = α²√2].
    pub beta: f64,
    /// Shuffled fraction of the traffic per interval [checked: 0.1].
    pub gamma: f64,
    /// Control interval before the first RTT sample, s [checked ns-2: 0.05].
    pub initial_d: f64,
    /// Count the per-packet arithmetic (`xcc::ops`) and report it as ops_* metrics.
    pub count_ops: bool,
    /// Budget charging rule: "granted" (default) or "ns235".
    pub xcp_budget: XcpBudget,
    /// "link" (C is the port's capacity, XCP) or "probe" (XCP-b: C probed by QFCP's
    /// eq. 4, `xcc::capacity_probe`; the "xcp-b" router module's default).
    pub capacity: CapacitySource,
    /// The capacity probe's step α [QFCP: 0.1].
    pub probe_alpha: f64,
    /// The capacity C starts from, b/s; default: the port's.
    pub initial_capacity_bps: Option<f64>,
    /// The header's form, "window" (default) or "throughput" ([`XcpForm`]); the flows on this
    /// router must use the same.
    pub form: XcpForm,
    /// Where the efficiency controller's spare bandwidth comes from: "capacity" (C − y, XCP) or
    /// "queue" (XCP-b's queue speed and late probe, [`super::blind`]; the "xcp-b" router
    /// module's default).
    pub spare: XcpSpare,
    /// XCP-b: the persistent queue the controller holds, packets of the port's packet size
    /// ("above-zero queue stabilisation") [reconstructed: 2].
    pub q_target_pkts: f64,
    /// XCP-b: the fixed probe, a fraction of y granted as spare bandwidth per interval once the
    /// link is taken as idle [reconstructed: 0.1].
    pub blind_probe: f64,
    /// XCP-b: intervals in a row ending with an empty queue before the probe ("late
    /// reaction") [reconstructed: 2].
    pub late_intervals: u32,
}

/// Where an XCP router's spare bandwidth comes from (docs/PROTOCOLS.md §5).
#[derive(serde::Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum XcpSpare {
    /// C − y with C the port's capacity or the `capacity` probe's estimate (XCP).
    #[default]
    Capacity,
    /// The queue's speed, and a fixed probe after the queue stayed empty (XCP-b).
    Queue,
}

impl Default for XcpRouterParams {
    fn default() -> XcpRouterParams {
        XcpRouterParams {
            alpha: 0.4,
            beta: 0.226,
            gamma: 0.1,
            initial_d: 0.05,
            count_ops: false,
            xcp_budget: XcpBudget::Granted,
            capacity: CapacitySource::Link,
            probe_alpha: 0.1,
            initial_capacity_bps: None,
            form: XcpForm::Window,
            spare: XcpSpare::Capacity,
            q_target_pkts: 2.0,
            blind_probe: 0.1,
            late_intervals: 2,
        }
    }
}

/// Bounds of the control interval d, s (ns-2 XCP_MIN_INTERVAL, XCP_MAX_INTERVAL).
pub const D_MIN: f64 = 1e-3;
pub const D_MAX: f64 = 1.0;

impl XcpRouterParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        positive("alpha", self.alpha)?;
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return Err(ParamError::new("beta", format!("must be a finite number >= 0, got {}", self.beta)));
        }
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            return Err(ParamError::new("gamma", format!("must be in (0, 1], got {}", self.gamma)));
        }
        if !(self.initial_d >= D_MIN && self.initial_d <= D_MAX) {
            return Err(ParamError::new(
                "initial_d",
                format!("must be in [{D_MIN}, {D_MAX}] s (the control interval's bounds), got {}", self.initial_d),
            ));
        }
        positive("probe_alpha", self.probe_alpha)?;
        if let Some(c) = self.initial_capacity_bps {
            positive("initial_capacity_bps", c)?;
        }
        if !(self.q_target_pkts.is_finite() && self.q_target_pkts >= 0.0) {
            return Err(ParamError::new(
                "q_target_pkts",
                format!("must be a finite number >= 0, got {}", self.q_target_pkts),
            ));
        }
        positive("blind_probe", self.blind_probe)?;
        if self.late_intervals == 0 {
            return Err(ParamError::new("late_intervals", "must be at least 1, got 0".to_string()));
        }
        Ok(())
    }
}
