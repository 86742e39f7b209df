//! CUBIC (RFC 9438) as a congestion controller on the TCP transport (the registry's "cubic").
//!
//! The window grows along W_cubic(t) = C·(t − K)³ + W_max (RFC 9438 §4.2, eq. 1) from the
//! last congestion event, never slower than the Reno-friendly estimate W_est (§4.3); a
//! congestion event (loss or ECN-Echo) multiplies it by β_cubic (§4.6) and remembers W_max,
//! lowered by fast convergence (§4.7) when the window did not regain the last one. The curve
//! counts segments, as RFC 9438 and Linux `tcp_cubic.c` do; the window the transport sees is
//! bytes. Fast recovery and the retransmission timer are the transport's (RFC 9438 §4.9, §4.10
//! leave them to Reno's rules); slow start is Reno's with HyStart++ (RFC 9406,
//! `cubic_hystart.rs`) deciding when it ends, on by default as Linux's HyStart is.

use super::cubic_hystart::{Growth, HyStartPp, CSS_GROWTH_DIVISOR};
use crate::cc::{Ack, CongestionControl, Response, SenderCtx, Signal};
use crate::endpoint::{Endpoint, FlowConfig};
use crate::params::{parse, ParamError};
use crate::protocol::FlowProtocol;
use crate::tcp::{
    initial_window_bytes, mss_for, tcp_receiver, tcp_sender_with, PartialAckTimer, Recovery, RtoRule, TcpParams,
};
use crate::time::{to_secs, Time};
use std::sync::Arc;

/// C, segments/s³ (RFC 9438 §5.1; Linux `tcp_cubic.c`: `bic_scale` 41 = 0.4·1024/10.24).
pub const C: f64 = 0.4;
/// β_cubic (RFC 9438 §4.6; Linux `tcp_cubic.c`: `beta` 717/1024).
pub const BETA: f64 = 0.7;

/// The `params` table of a "cubic" flow.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CubicParams {
    /// C in W_cubic(t) = C·(t − K)³ + W_max, segments/s³ (RFC 9438 §4.2, §5.1).
    pub c: f64,
    /// β_cubic, the window kept after a congestion event (RFC 9438 §4.6).
    pub beta: f64,
    /// Fast convergence (RFC 9438 §4.7; Linux `fast_convergence` = 1).
    pub fast_convergence: bool,
    /// The Reno-friendly region (RFC 9438 §4.3; Linux `tcp_friendliness` = 1).
    pub reno_friendly: bool,
    /// HyStart++ (RFC 9406) ends the initial slow start (Linux `hystart` = 1, its own HyStart).
    pub hystart: bool,
    /// The TCP transport's knobs (dupthresh, RTO bounds, ...); keys left out take
    /// [`cubic_tcp_defaults`], Linux's transport.
    pub tcp: TcpParams,
}

/// The transport CUBIC runs on: the shared TCP defaults (ns-2's, which the papers' baselines
/// used) but Linux's where a CUBIC flow meets them, since racc's CUBIC stands for Linux's:
///
/// - `partial_ack_timer = "every"`: Linux re-arms the retransmission timer on every ACK that
///   acknowledges new data, partial ACKs in recovery included (`tcp_input.c`:
///   `tcp_clean_rtx_queue` sets `FLAG_SET_XMIT_TIMER` for `FLAG_ACKED`, and `tcp_ack` then
///   calls `tcp_set_xmit_timer` → `tcp_rearm_rto`), RFC 6582 §4's "Slow-but-Steady". The default "Impatient" timer starts at the first partial
///   ACK only, so a recovery that repairs one hole per RTT times out at its second or third
///   hole whenever RTTVAR is small; CUBIC's β = 0.7 keeps a DropTail queue near full, where
///   overflows lose several segments of a window and per-ACK samples shrink RTTVAR, and each
///   such timeout went back N over a window the receiver mostly held (issue 41: 10 CUBIC
///   flows on a 0.5 s, 815-packet DropTail link, 120 s: 62 of 218 timeouts ended a recovery,
///   8379 retransmissions; with these defaults 12 timeouts, none in recovery, 518).
/// - `rto_rule = "linux"`: RTO = SRTT + max(min_rto, 4·RTTVAR) (`tcp_set_rto`, RTTVAR floored
///   at `tcp_rto_min` in `tcp_rtt_estimator`), not RFC 6298's clamp of the sum, which on a
///   2 s queue-filled RTT leaves the RTO a millisecond above SRTT.
pub fn cubic_tcp_defaults() -> TcpParams {
    TcpParams { partial_ack_timer: PartialAckTimer::Every, rto_rule: RtoRule::Linux, ..TcpParams::default() }
}

impl Default for CubicParams {
    fn default() -> CubicParams {
        CubicParams {
            c: C,
            beta: BETA,
            fast_convergence: true,
            reno_friendly: true,
            hystart: true,
            tcp: cubic_tcp_defaults(),
        }
    }
}

impl CubicParams {
    /// A flow's `params` table, checked, with CUBIC's transport defaults for the `tcp` keys it
    /// leaves out ([`cubic_tcp_defaults`]).
    pub fn from_value(v: &serde_json::Value) -> Result<CubicParams, ParamError> {
        let mut p: CubicParams = parse(v)?;
        let d = cubic_tcp_defaults();
        if v.pointer("/tcp/partial_ack_timer").is_none() {
            p.tcp.partial_ack_timer = d.partial_ack_timer;
        }
        if v.pointer("/tcp/rto_rule").is_none() {
            p.tcp.rto_rule = d.rto_rule;
        }
        p.validate()?;
        Ok(p)
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(ParamError::new("c", format!("must be a number > 0, got {}", self.c)));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(ParamError::new("beta", format!("must be in (0, 1), got {}", self.beta)));
        }
        self.tcp.validate().map_err(|e| ParamError::new(format!("tcp.{}", e.key), e.reason))
    }
}

/// K = ∛((W_max − cwnd_epoch)/C), s: the time the curve takes from cwnd_epoch back to W_max
/// (RFC 9438 §4.2, eq. 2); 0 when the window starts at or above W_max (Linux `bictcp_update`).
pub fn k(w_max: f64, cwnd_epoch: f64, c: f64) -> f64 {
    ((w_max - cwnd_epoch).max(0.0) / c).cbrt()
}

/// W_cubic(t) = C·(t − K)³ + W_max, segments (RFC 9438 §4.2, eq. 1).
pub fn w_cubic(t: f64, k: f64, w_max: f64, c: f64) -> f64 {
    c * (t - k).powi(3) + w_max
}

/// α_cubic = 3·(1 − β)/(1 + β): the additive increase per RTT that gives Reno's average
/// window at CUBIC's β (RFC 9438 §4.3, eq. 4).
pub fn alpha(beta: f64) -> f64 {
    3.0 * (1.0 - beta) / (1.0 + beta)
}

/// One congestion-avoidance stage: from its first ACK to the next congestion event.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Epoch {
    start: Time,
    /// K, s.
    k: f64,
    /// The W_max the curve returns to, segments (the window at the stage's start when that
    /// is higher: RFC 9438 §4.8, Linux `bictcp_update`).
    origin: f64,
    /// W_est, segments (RFC 9438 §4.3).
    w_est: f64,
}

/// CUBIC's window.
#[derive(Clone, Debug, PartialEq)]
pub struct Cubic {
    cwnd: f64,
    ssthresh: f64,
    smss: f64,
    c: f64,
    beta: f64,
    fast_convergence: bool,
    reno_friendly: bool,
    /// W_max, segments: the window at the last congestion event, after fast convergence.
    w_max: f64,
    /// cwnd_prior, segments: the window before the last reduction (RFC 9438 §4.6), where
    /// W_est switches to Reno's own α = 1 (§4.3).
    cwnd_prior: f64,
    epoch: Option<Epoch>,
    /// The state before the first timeout of an episode, for a spurious-timeout undo.
    before_rto: Option<Box<Cubic>>,
    congestion_events: u64,
    /// HyStart++ while the initial slow start runs (`None`: off).
    hystart: Option<HyStartPp>,
}

impl Cubic {
    pub fn new(cfg: &FlowConfig, smss: u32, p: &CubicParams) -> Cubic {
        let ssthresh = cfg.initial_ssthresh.map_or(f64::INFINITY, |b| b as f64);
        Cubic::with(initial_window_bytes(cfg, smss) as f64, ssthresh, smss, p)
    }

    /// Explicit starting state (tests).
    pub fn with(cwnd: f64, ssthresh: f64, smss: u32, p: &CubicParams) -> Cubic {
        Cubic {
            cwnd,
            ssthresh,
            smss: smss as f64,
            c: p.c,
            beta: p.beta,
            fast_convergence: p.fast_convergence,
            reno_friendly: p.reno_friendly,
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch: None,
            before_rto: None,
            congestion_events: 0,
            hystart: p.hystart.then(HyStartPp::default),
        }
    }

    /// HyStart++'s state (`None` when off).
    pub fn hystart(&self) -> Option<&HyStartPp> {
        self.hystart.as_ref()
    }

    /// W_max, segments.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K of the running stage, s (`None` outside congestion avoidance).
    pub fn epoch_k(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }

    /// W_est of the running stage, segments.
    pub fn w_est(&self) -> Option<f64> {
        self.epoch.map(|e| e.w_est)
    }

    /// A loss or an ECN-Echo (RFC 9438 §4.6, §4.7; Linux `cubictcp_recalc_ssthresh`): W_max
    /// and the new ssthresh = max(β·cwnd, 2 segments), in bytes.
    fn reduce(&mut self) -> f64 {
        let w = self.cwnd / self.smss;
        self.w_max = if self.fast_convergence && w < self.w_max { w * (1.0 + self.beta) / 2.0 } else { w };
        self.cwnd_prior = w;
        self.epoch = None;
        self.congestion_events += 1;
        // RFC 9406 §4.2: a congestion signal ends slow start, and HyStart++ with it (§4.3).
        if let Some(h) = self.hystart.as_mut() {
            h.stop();
        }
        self.ssthresh = (self.cwnd * self.beta).max(2.0 * self.smss);
        self.ssthresh
    }

    /// Congestion avoidance per new ACK (RFC 9438 §4.2-§4.5), `acked` segments.
    fn avoid(&mut self, now: Time, rtt: f64, acked: f64) {
        let w = self.cwnd / self.smss;
        let e = *self.epoch.get_or_insert_with(|| {
            let (k, origin) = if self.w_max > w { (k(self.w_max, w, self.c), self.w_max) } else { (0.0, w) };
            Epoch { start: now, k, origin, w_est: w }
        });
        let t = to_secs(now.saturating_sub(e.start));
        // §4.2: aim at the curve one RTT ahead, kept within [cwnd, 1.5·cwnd].
        let target = w_cubic(t + rtt, e.k, e.origin, self.c).clamp(w, 1.5 * w);
        // §4.3: W_est grows by α_cubic per window of ACKs, by Reno's 1 once it regained cwnd_prior.
        let a = if e.w_est >= self.cwnd_prior { 1.0 } else { alpha(self.beta) };
        let w_est = e.w_est + a * acked / w;
        self.epoch = Some(Epoch { w_est, ..e });
        let next = if self.reno_friendly && w_cubic(t, e.k, e.origin, self.c) < w_est {
            w_est.max(w)
        } else {
            // §4.4, §4.5: (target − cwnd)/cwnd per segment acknowledged (Linux `bictcp_update`'s
            // cnt = cwnd/(target − cwnd), applied by `tcp_cong_avoid_ai` per acked segment).
            w + (target - w) / w * acked
        };
        self.cwnd = next * self.smss;
    }
}

impl CongestionControl for Cubic {
    cwnd_fields_as_window!();

    /// Slow start as Reno's (RFC 9438 §4.10: cwnd += min(acked, SMSS)), a quarter of it in
    /// HyStart++'s CSS, which may end it with ssthresh = cwnd (RFC 9406 §4.2); above ssthresh
    /// the curve. The RTT is the smoothed one (RFC 9438 §4.2).
    fn on_ack(&mut self, ack: &Ack<'_>, ctx: &SenderCtx) {
        if ack.is_duplicate() {
            return;
        }
        if self.cwnd < self.ssthresh {
            let inc = (ack.acked_bytes as f64).min(self.smss);
            let growth = match self.hystart.as_mut() {
                Some(h) => h.on_ack(ack.acked_bytes, ctx.flight, ctx.latest_rtt),
                None => Growth::Off,
            };
            match growth {
                Growth::Full | Growth::Off => self.cwnd += inc,
                Growth::Css => self.cwnd += inc / CSS_GROWTH_DIVISOR,
                Growth::EnterAvoidance => self.ssthresh = self.cwnd,
            }
            return;
        }
        let rtt = ctx.srtt.or(ctx.latest_rtt).map_or(0.0, to_secs);
        self.avoid(ctx.now, rtt, ack.acked_bytes as f64 / self.smss);
    }

    /// Loss and ECN-Echo: cwnd = ssthresh = β·cwnd (RFC 9438 §4.6), recovered around by the
    /// transport. Timeout: one segment, ssthresh = β·cwnd (§4.8), and the curve forgotten as
    /// Linux's `cubictcp_state` (TCP_CA_Loss → `bictcp_reset`) does, so that the next stage
    /// starts with K = 0 at its own window (§4.8).
    fn on_congestion(&mut self, signal: Signal, ctx: &SenderCtx) -> Response {
        match signal {
            Signal::Loss | Signal::EcnEcho => Response::SetWindow(self.reduce()),
            Signal::Timeout => {
                if ctx.consecutive_rtos == 0 {
                    let mut saved = self.clone();
                    saved.before_rto = None;
                    self.before_rto = Some(Box::new(saved));
                    self.reduce();
                }
                (self.w_max, self.cwnd_prior, self.epoch) = (0.0, 0.0, None);
                Response::SetWindow(self.smss)
            }
            Signal::SynTimeout => Response::SetWindow(self.smss),
        }
    }

    /// Back to the state the first timeout of the episode found (Linux `tcp_undo_cwnd_reduction`
    /// with `cubictcp_undo_cwnd`).
    fn on_spurious_timeout(&mut self, _ctx: &SenderCtx) {
        if let Some(saved) = self.before_rto.take() {
            *self = *saved;
        }
    }

    fn plain_window(&self) -> bool {
        true
    }

    fn metrics(&self, out: &mut dyn crate::metrics::MetricSink) {
        use crate::metrics::MetricValue;
        out.put("cubic_w_max", "packets", MetricValue::Gauge(self.w_max));
        out.put("cubic_events", "events", MetricValue::Count(self.congestion_events));
        if let Some(h) = &self.hystart {
            out.put("cubic_css_entries", "events", MetricValue::Count(h.css_entries()));
            out.put("cubic_css_returns", "events", MetricValue::Count(h.css_returns()));
        }
    }
}

/// A "cubic" flow's checked parameters.
#[derive(Debug)]
struct CubicFlow(CubicParams);

impl FlowProtocol for CubicFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        let cc = Cubic::new(cfg, mss_for(cfg, 0), &self.0);
        tcp_sender_with(cfg, Recovery::NewReno, &self.0.tcp, Box::new(cc))
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        tcp_receiver(cfg)
    }
}

/// The registry's "cubic".
pub fn parse_cubic(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    Ok(Arc::new(CubicFlow(CubicParams::from_value(params)?)))
}

#[cfg(test)]
#[path = "cubic_tests.rs"]
mod tests;
