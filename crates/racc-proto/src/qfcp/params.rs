//! The parameter tables of a QFCP flow and of a QFCP router module (docs/PROTOCOLS.md §9, §16).

use crate::params::{parse, positive, ParamError};
use crate::tcp::{RttSamples, TcpParams};
use crate::xcc::CapacitySource;

/// The `params` table of a "qfcp" flow.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct QfcpParams {
    /// The rate the sender asks for, wire bytes per second (QFCP §II step 1: "the desired
    /// sending rate of this sender"). None = as much as the routers allow.
    pub desired_rate: Option<f64>,
    /// The TCP transport's knobs (dupthresh, RTO bounds, ...). Its RFC 3042 Limited Transmit
    /// (on by default) is what inflates the window by the first two duplicate ACKs (eq. 5).
    /// QFCP's defaults are TCP's but for `rtt_samples` and `lost_retransmit`
    /// ([`qfcp_tcp_defaults`]).
    pub tcp: TcpParams,
    /// Pace the first window (feedback·rtt from the SYN-ACK) at cwnd/rtt until the first new
    /// ACK, as Quick-Start's sender paces its approved rate over one RTT (RFC 4782 §4; ns-2's
    /// `qs_approved_`), whose rate-request-and-grant QFCP extends to a flow's lifetime (QFCP §II:
    /// "a similar framework of Quick-Start"). Unset: on without SACK, off with it
    /// (docs/PROTOCOLS.md §9, "Starts"): in one burst, the first window of a flow that reads
    /// R = C on a quiet port fills a one-BDP buffer by itself, the first packets of flows
    /// starting beside it are lost and, without SACK, wait for their timeouts (50 simultaneous
    /// starts: 39.8 % drops, Jain 0.13; paced: 0 drops, Jain 1.000). With SACK (qfcp-lossy)
    /// pacing cost the 1 %-lossy pair its fair share (4.42 / 5.01 Mb/s against 4.76 / 4.88).
    pub pace_first_window: Option<bool>,
    /// Without SACK, pace a timeout's go-back-N at cwnd/rtt until the flight the timeout found
    /// is acknowledged (on by default; docs/PROTOCOLS.md §9, "Starts"): the window comes back at
    /// feedback·rtt with the first ACK after the timeout (§II), and in one burst it resends
    /// data the receiver mostly holds.
    pub pace_go_back_n: bool,
}

impl Default for QfcpParams {
    fn default() -> QfcpParams {
        QfcpParams { desired_rate: None, tcp: qfcp_tcp_defaults(), pace_first_window: None, pace_go_back_n: true }
    }
}

/// The transport QFCP runs on: TCP's defaults, but one RTT sample per round trip
/// (`rtt_samples = "once-per-rtt"`, ns-2's `TcpAgent`, the seed's simulator), not one per ACK.
/// Why (docs/PROTOCOLS.md §9, "RTO"): QFCP keeps the queue short and steady, so per-ACK samples
/// drive RTTVAR to about 0 and the RTO to SRTT + 1 ms; the timer that a fast retransmit arms
/// then expires before the retransmission's ACK whenever the queue has grown by a millisecond,
/// and the spurious timeout's go-back-N resends the window in flight (qfcp-lossy at 0.1 %
/// loss: 10 of the lossy flow's 30 recoveries ended so, none by a lost retransmission). The
/// seed expects a timeout only when a retransmission is lost (§III.C).
///
/// And, with SACK, lost retransmissions found by the SACKs of data sent after them and sent
/// again (`lost_retransmit`, RFC 8985's rule) instead of waiting for the timer. Why
/// (docs/PROTOCOLS.md §9, "Lost retransmissions"): the seed names the lost retransmission as the
/// cause of QFCP's timeouts (§III.C); at 10 % loss one retransmission in ten is lost, the
/// timeouts' go-back-N loses one in ten again, fast retransmit is refused below the timeout's
/// recovery point, and without a clean RTT sample (Karn) the back-off only grows: qfcp-lossy's
/// lossy flow sat out RTOs of 7 and 14 s (0.05 Mb/s against the lossless flow's 9.86).
///
/// And, with SACK, the timed segment's sample from its first report, a SACK block included
/// (`sack_rtt`): cwnd = feedback·RTT needs the RTT, and under steady loss nearly every
/// cumulative ACK covers a retransmission, so Karn's rule left the lossy flow's SRTT at its
/// start-up 202 ms while the real RTT was 210–240 ms (docs/PROTOCOLS.md §9, "RTT under loss").
pub fn qfcp_tcp_defaults() -> TcpParams {
    TcpParams { rtt_samples: RttSamples::OncePerRtt, lost_retransmit: true, sack_rtt: true, ..TcpParams::default() }
}

impl QfcpParams {
    /// A flow's `params` table, checked, with QFCP's transport defaults for the `tcp` keys it
    /// leaves out ([`qfcp_tcp_defaults`]).
    pub fn from_value(v: &serde_json::Value) -> Result<QfcpParams, ParamError> {
        let mut p: QfcpParams = parse(v)?;
        let d = qfcp_tcp_defaults();
        if v.pointer("/tcp/rtt_samples").is_none() {
            p.tcp.rtt_samples = d.rtt_samples;
        }
        if v.pointer("/tcp/lost_retransmit").is_none() {
            p.tcp.lost_retransmit = d.lost_retransmit;
        }
        if v.pointer("/tcp/sack_rtt").is_none() {
            p.tcp.sack_rtt = d.sack_rtt;
        }
        p.validate()?;
        Ok(p)
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        if let Some(r) = self.desired_rate {
            positive("desired_rate", r)?;
        }
        self.tcp.validate().map_err(|e| ParamError::new(format!("tcp.{}", e.key), e.reason))
    }
}

/// The `router_params` table of a "qfcp" router module. Defaults: docs/PROTOCOLS.md §9, §16.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct QfcpRouterParams {
    /// Gain on the virtual queue in R = (C − β·q/T)/N [seed: 0.5].
    pub beta: f64,
    /// The capacity probe's step, C·(1 + α) while the minimum queue is below one packet
    /// [seed: 0.1].
    pub alpha: f64,
    /// "link" (the router is told the port's capacity) or "probe" (eq. 4).
    pub capacity: CapacitySource,
    /// The capacity the router starts from, b/s (qfcp-lossy: a wrong 1 Mb/s, QFCP
    /// §III.C); default: the port's.
    pub initial_capacity_bps: Option<f64>,
    /// The control interval T before the first RTT is seen, s [reconstructed: 0.1].
    pub initial_t: f64,
    /// Gain of T's moving average of the RTTs seen, per interval [reconstructed: 0.25].
    pub t_gain: f64,
    /// R_min, packets of the port's data packet size per T [reconstructed: 1].
    pub r_min_pkts: f64,
    /// Count the SYNs beyond an interval's usual number as flows at once and grant them from
    /// the interval's headroom [racc; docs/PROTOCOLS.md §9, "Starts"]. Off: every SYN reads R.
    pub count_joins: bool,
    /// The share of the free buffer, per T, that the headroom of an interval's excess joins adds
    /// to C − y [racc: 0.5].
    pub join_buffer: f64,
}

impl Default for QfcpRouterParams {
    fn default() -> QfcpRouterParams {
        QfcpRouterParams {
            beta: 0.5,
            alpha: 0.1,
            capacity: CapacitySource::Link,
            initial_capacity_bps: None,
            initial_t: 0.1,
            t_gain: 0.25,
            r_min_pkts: 1.0,
            count_joins: true,
            join_buffer: 0.5,
        }
    }
}

/// Bounds of the control interval T, s [reconstructed, as XCP's d].
pub const T_MIN: f64 = 1e-3;
pub const T_MAX: f64 = 1.0;

impl QfcpRouterParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return Err(ParamError::new("beta", format!("must be a finite number >= 0, got {}", self.beta)));
        }
        positive("alpha", self.alpha)?;
        if let Some(c) = self.initial_capacity_bps {
            positive("initial_capacity_bps", c)?;
        }
        if !(T_MIN..=T_MAX).contains(&self.initial_t) {
            return Err(ParamError::new(
                "initial_t",
                format!("must be in [{T_MIN}, {T_MAX}] s (the control interval's bounds), got {}", self.initial_t),
            ));
        }
        if !(self.t_gain > 0.0 && self.t_gain <= 1.0) {
            return Err(ParamError::new("t_gain", format!("must be in (0, 1], got {}", self.t_gain)));
        }
        if !(self.join_buffer.is_finite() && self.join_buffer >= 0.0) {
            return Err(ParamError::new(
                "join_buffer",
                format!("must be a finite number >= 0, got {}", self.join_buffer),
            ));
        }
        positive("r_min_pkts", self.r_min_pkts)
    }
}
