//! TCP Reno / NewReno (RFC 5681, 6582, 6298; ECN RFC 3168; docs/PROTOCOLS.md §10), sans-I/O.
//!
//! - [`seq`]: u64 byte offsets inside, wrapping u32 on the wire
//! - [`rtt`]: RFC 6298 estimator
//! - [`newreno`]: NewReno's congestion controller (a `cc::CongestionControl`, as VCP's, DPCP's, ...)
//! - [`bbr`]: BBR v1's (Linux `tcp_bbr.c`), the registry's "bbr", over [`bbr_rate`]'s delivery-rate
//!   samples and [`bbr_filter`]'s windowed max filter
//! - [`cubic`]: CUBIC's (RFC 9438), the registry's "cubic", with [`cubic_hystart`]'s HyStart++
//!   (RFC 9406)
//! - [`dctcp`]: DCTCP's (RFC 8257) and its exact ECN echo, the registry's "dctcp"
//! - [`recovery`]: the transport's fast-recovery window (inflation, deflation, exit)
//! - [`ranges`]: sorted byte ranges above a cumulative point (out-of-order data, SACKed data)
//! - [`scoreboard`]: RFC 6675's SACK scoreboard (IsLost, NextSeg, pipe)
//! - [`sender`]: the transport (loss detection and recovery, RTO, go-back-N, Karn, ECN, SACK)
//! - [`receiver`]: cumulative/delayed ACKs, out-of-order buffer, echo hook
//!
//! Units: cwnd and ssthresh in bytes; MSS = packet_size − 40 (IPv4 + TCP) − the congestion
//! header, if any; data packets are payload + 40 (+ header) bytes on the wire, ACK/SYN 40.

/// `CongestionControl`'s `window`, `ssthresh` and `set_window` for a controller that keeps
/// `cwnd` and `ssthresh` in bytes as fields of its own (NewReno's, CUBIC's).
macro_rules! cwnd_fields_as_window {
    () => {
        fn window(&self) -> f64 {
            self.cwnd
        }

        fn ssthresh(&self) -> f64 {
            self.ssthresh
        }

        fn set_window(&mut self, window: f64, ssthresh: f64) {
            (self.cwnd, self.ssthresh) = (window, ssthresh);
        }
    };
}

pub mod bbr;
pub mod bbr_filter;
pub mod bbr_params;
pub mod bbr_rate;
pub mod cubic;
pub mod cubic_hystart;
pub mod dctcp;
pub mod newreno;
pub mod ranges;
pub mod receiver;
pub mod recovery;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
pub mod seq;

#[cfg(test)]
mod tests;

pub use newreno::{initial_window_bytes, rfc5681_iw, slow_start, NewRenoWindow};
pub use receiver::{AckEcho, TcpReceiver};
pub use recovery::{FastRecovery, RecoveryExit};
pub use rtt::{RtoRule, RttEstimator};
pub use sender::TcpSender;
pub use seq::SeqSpace;

use crate::cc::CongestionControl;
use crate::endpoint::{Endpoint, FlowConfig};
use crate::packet::hdr;
use crate::params::{parse, positive, ParamError};
use crate::protocol::FlowProtocol;
use std::sync::Arc;

/// How fast recovery ends (the transport's variant; window rules are the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 5681: exit at the first new ACK with cwnd = ssthresh.
    Reno,
    /// RFC 6582: stay in recovery until `recover` is acknowledged, retransmitting on partial ACKs.
    NewReno,
}

/// TCP knobs of a scenario's parameter table. Times in seconds.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TcpParams {
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681: 3).
    pub dupthresh: u32,
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s).
    pub initial_rto: f64,
    /// Upper bound on the RTO (RFC 6298 §2.5: at least 60 s).
    pub max_rto: f64,
    /// Clock granularity G in RTO = SRTT + max(G, 4·RTTVAR) (RFC 6298 §2.3).
    pub clock_granularity: f64,
    /// Where the run's min_rto applies: `rfc6298` (default, ns-2) clamps the RTO from below;
    /// `linux` floors the variance term, RTO = SRTT + max(min_rto, 4·RTTVAR), as Linux does.
    pub rto_rule: RtoRule,
    /// NewReno partial ACKs restart the RTO timer on the `first` one only (RFC 6582 §3.2,
    /// the "Impatient" variant of RFC 3782 §4; docs/PROTOCOLS.md §10) or on `every` one
    /// ("Slow-but-Steady", ns-2's and Linux's behaviour), or `sparse`: the first and each that
    /// covered more than dupthresh segments (racc's own rule, measured for QFCP in docs/PROTOCOLS.md §9;
    /// no protocol's default).
    pub partial_ack_timer: PartialAckTimer,
    /// Spurious retransmission timeouts: `eifel` detects them by the echoed timestamp (RFC
    /// 3522) and undoes the timeout's reduction without a go-back-N, as Linux does; `off` is
    /// ns-2's TCP, which always goes back N and keeps the reduction.
    pub spurious_rto: SpuriousRto,
    /// RFC 3042 Limited Transmit: the first two duplicate ACKs each let one new segment go
    /// beyond cwnd, so that a small window still collects the dupthresh duplicates fast
    /// retransmit needs. On in Linux and in ns-2 (`singledup_`, the default since 2001).
    pub limited_transmit: bool,
    /// What TCP's halving halves on a loss, an ECN-Echo or a timeout: `cwnd` (ns-2's
    /// `slowdown`, Linux's `tcp_reno_ssthresh`: the window, which is what the papers' systems
    /// did) or `flight` (RFC 5681 eq. 4's FlightSize, racc's rule before).
    pub ssthresh_from: SsthreshFrom,
    /// A timeout during fast recovery: `halve-window` halves the recovery's window, its
    /// ssthresh (ns-2, whose cwnd_ is ssthresh during recovery); `keep` keeps that ssthresh
    /// (Linux `tcp_enter_loss`, which does not reduce twice in one window); `halve-flight`
    /// halves the flight inflated by the recovery (RFC 5681 read literally, racc before).
    pub rto_in_recovery: RtoInRecovery,
    /// Fast retransmit after a recovery or a timeout: `beyond` needs an ACK covering more
    /// than `recover` (RFC 6582 §3.2 step 1, ns-2's `highest_ack_ > recover_`); `at`
    /// accepted an ACK reaching it (racc before); `off` has no such check: every
    /// dupthresh-th duplicate retransmits (QFCP §II read literally); `heuristic` is `beyond`
    /// or else RFC 6582 §4.2's ACK heuristic: duplicates start it when cwnd > SMSS and the
    /// latest ACK advanced at most 4·SMSS (docs/PROTOCOLS.md §9 weighs them for QFCP).
    pub recover_check: RecoverCheck,
    /// Random send overhead, s: each window-released segment waits a uniform [0, send_jitter)
    /// before it leaves, one at a time (ns-2's `overhead_`; fast retransmits are not delayed).
    /// Off (0) by default, which keeps runs bit-identical to racc without it. Use it where a
    /// few long-lived flows share a DropTail queue and their results depend on sub-millisecond
    /// changes of delay or seed (deterministic phase effects, Floyd & Jacobson 1992); a value
    /// near one bottleneck packet time is enough.
    pub send_jitter: f64,
    /// Which ACKs give RTT samples: `every-ack` (RFC 7323 timestamps, racc's rule before) or
    /// `once-per-rtt`, one timed segment per round trip as ns-2's `TcpAgent` does without
    /// timestamps (`rtt_active_`/`rtt_seq_` in `tcp.cc`), the rate RFC 6298's gains were set
    /// for (RFC 7323 App. G: per-ACK samples shorten the RTTVAR history to a few ACKs).
    pub rtt_samples: RttSamples,
    /// With SACK: a retransmission of the lowest hole is lost once more than (DupThresh − 1)
    /// segments sent after it are SACKed, and is sent again instead of waiting for the timer
    /// (RFC 8985's RACK finds lost retransmissions by the same order of sending; Linux's
    /// `tcp_mark_lost_retrans` before RACK). RFC 6675 repairs a hole once, so a lost repair
    /// waits for the RTO. Off by default (RFC 6675 as written); QFCP's transport turns it on.
    pub lost_retransmit: bool,
    /// With SACK and `once-per-rtt` samples: the timed segment gives its sample when it is first
    /// reported, by a SACK block or by the cumulative ACK, unless it was itself retransmitted
    /// (Karn's rule is about the timed segment; Linux's `tcp_sacktag_one` samples a never
    /// retransmitted segment from the SACK that reports it). Off by default: a cumulative ACK
    /// that covers any retransmitted byte gives no sample, so under steady random loss, with a
    /// hole below nearly every timed segment, SRTT stays where it was (docs/PROTOCOLS.md §9).
    pub sack_rtt: bool,
}

/// Which ACKs give RTT samples (`TcpParams::rtt_samples`).
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RttSamples {
    /// Every ACK of new data that covers no retransmission (RFC 7323 timestamps).
    #[default]
    EveryAck,
    /// One segment timed per round trip (ns-2 `TcpAgent`): the first new segment sent while
    /// none is timed; its ACK gives the sample unless it covers a retransmission (Karn); a
    /// timeout stops the timing.
    OncePerRtt,
}

/// What TCP's halving halves.
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum SsthreshFrom {
    #[default]
    Cwnd,
    Flight,
}

/// The ssthresh a timeout during fast recovery leaves.
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RtoInRecovery {
    #[default]
    HalveWindow,
    Keep,
    HalveFlight,
}

/// Which ACKs may start fast retransmit after `recover` was set.
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum RecoverCheck {
    #[default]
    Beyond,
    At,
    Off,
    Heuristic,
}

/// What the sender does about a retransmission timeout that turns out spurious.
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum SpuriousRto {
    /// RFC 3522 detection; on detection resume at snd_max and let the window undo (RFC 4015's
    /// "continue with new data", Linux `tcp_try_undo_loss`).
    #[default]
    Eifel,
    /// No detection.
    Off,
}

/// When a NewReno partial ACK restarts the retransmission timer.
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum PartialAckTimer {
    #[default]
    First,
    Every,
    /// The first, and every one that covered more than dupthresh segments: an isolated hole,
    /// whose repair is worth the round trip the restart allows, unlike a burst of holes (a
    /// queue overflow), which a timeout's go-back-N repairs faster [racc's; an option, not a default].
    Sparse,
}

impl Default for TcpParams {
    fn default() -> TcpParams {
        TcpParams {
            dupthresh: 3,
            initial_rto: 1.0,
            max_rto: 60.0,
            clock_granularity: 0.001,
            rto_rule: RtoRule::Rfc6298,
            partial_ack_timer: PartialAckTimer::First,
            spurious_rto: SpuriousRto::Eifel,
            limited_transmit: true,
            ssthresh_from: SsthreshFrom::Cwnd,
            rto_in_recovery: RtoInRecovery::HalveWindow,
            recover_check: RecoverCheck::Beyond,
            send_jitter: 0.0,
            rtt_samples: RttSamples::EveryAck,
            lost_retransmit: false,
            sack_rtt: false,
        }
    }
}

impl TcpParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.dupthresh == 0 {
            return Err(ParamError::new("dupthresh", "must be at least 1"));
        }
        positive("initial_rto", self.initial_rto)?;
        positive("max_rto", self.max_rto)?;
        if !(self.send_jitter.is_finite() && (0.0..=1.0).contains(&self.send_jitter)) {
            return Err(ParamError::new(
                "send_jitter",
                format!("must be a number of seconds in [0, 1], got {}", self.send_jitter),
            ));
        }
        if !(self.clock_granularity.is_finite() && self.clock_granularity >= 0.0) {
            return Err(ParamError::new(
                "clock_granularity",
                format!("must be a finite number >= 0, got {}", self.clock_granularity),
            ));
        }
        Ok(())
    }
}

/// Payload bytes of a full data packet: `packet_size` minus IPv4 + TCP headers and a
/// congestion header of `cong_header` bytes (at least 1).
pub fn mss_for(cfg: &FlowConfig, cong_header: u32) -> u32 {
    cfg.packet_size.saturating_sub(hdr::IP_TCP + cong_header).max(1)
}

/// Packets whose delivery one ACK of `acked` new bytes reports for the first time: the
/// packets it newly acknowledges (a short last segment counts as one) less those the receiver
/// already reported with duplicate ACKs (`dupacks_covered`), at least one. The VCP family
/// grows per reported packet, so that growth does not depend on the ACK ratio or on lost ACKs
/// (docs/PROTOCOLS.md §2); counting the covered packets again would let the cumulative ACK that
/// repairs a hole (after a timeout's go-back-N, hundreds of packets at once) multiply cwnd in
/// one step: at ξ = 1 and rtt/t_p ≥ 2.5 each packet adds 4.7, so one ACK for 300 packets
/// added 1400 and the next window overflowed every buffer.
#[inline]
pub fn growth_packets(acked: u64, mss: u32, dupacks_covered: u64) -> f64 {
    if acked == 0 {
        return 0.0;
    }
    segments(acked, mss).saturating_sub(dupacks_covered).max(1) as f64
}

/// Segments of `mss` bytes that `bytes` span (a short last one counts), `bytes.div_ceil(mss)`:
/// without a division for the ACK of at most one segment, nearly every one (issue 19).
#[inline]
pub(crate) fn segments(bytes: u64, mss: u32) -> u64 {
    let m = mss.max(1) as u64;
    if bytes <= m {
        (bytes > 0) as u64
    } else {
        bytes.div_ceil(m)
    }
}

/// A Reno or NewReno flow's checked parameters (the registry's "newreno" and "reno").
#[derive(Debug)]
struct TcpFlow {
    recovery: Recovery,
    params: TcpParams,
}

impl FlowProtocol for TcpFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        tcp_sender(cfg, self.recovery, &self.params)
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        tcp_receiver(cfg)
    }
}

fn parse_tcp(recovery: Recovery, params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    let p: TcpParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(TcpFlow { recovery, params: p }))
}

/// The registry's "newreno".
pub fn parse_newreno(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    parse_tcp(Recovery::NewReno, params)
}

/// The registry's "reno".
pub fn parse_reno(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    parse_tcp(Recovery::Reno, params)
}

/// A Reno or NewReno sender.
pub fn tcp_sender(cfg: &FlowConfig, recovery: Recovery, params: &TcpParams) -> Box<dyn Endpoint> {
    Box::new(TcpSender::new(cfg, recovery, params))
}

/// A TCP receiver (ACK every segment, or delayed ACKs per `cfg.delayed_ack`).
pub fn tcp_receiver(cfg: &FlowConfig) -> Box<dyn Endpoint> {
    Box::new(TcpReceiver::new(cfg))
}

/// The TCP transport driving another protocol's congestion controller (VCP, DPCP, ... over
/// TCP). Build `cc` for `mss_for(cfg, cc.header_bytes())`-byte segments.
pub fn tcp_sender_with(
    cfg: &FlowConfig,
    recovery: Recovery,
    params: &TcpParams,
    cc: Box<dyn CongestionControl>,
) -> Box<dyn Endpoint> {
    Box::new(TcpSender::with_controller(cfg, recovery, params, cc))
}

/// A TCP receiver whose ACKs carry a protocol's feedback.
pub fn tcp_receiver_with(cfg: &FlowConfig, echo: Box<dyn AckEcho>) -> Box<dyn Endpoint> {
    Box::new(TcpReceiver::with_echo(cfg, echo))
}

#[cfg(test)]
mod params_tests {
    use super::*;
    use crate::params::parse;

    #[test]
    fn params_defaults_unknown_keys_and_validation() {
        let p: TcpParams = parse(&serde_json::Value::Null).unwrap();
        assert_eq!(p, TcpParams::default());
        assert_eq!((p.dupthresh, p.initial_rto, p.max_rto), (3, 1.0, 60.0));
        let p: TcpParams = parse(&serde_json::json!({"dupthresh": 4, "max_rto": 120.0})).unwrap();
        assert_eq!((p.dupthresh, p.max_rto, p.initial_rto), (4, 120.0, 1.0));
        assert_eq!((p.spurious_rto, p.limited_transmit), (SpuriousRto::Eifel, true));
        let p: TcpParams = parse(&serde_json::json!({"spurious_rto": "off", "rto_rule": "linux"})).unwrap();
        assert_eq!((p.spurious_rto, p.rto_rule), (SpuriousRto::Off, RtoRule::Linux));
        assert_eq!(TcpParams::default().rto_rule, RtoRule::Rfc6298);
        let e = parse::<TcpParams>(&serde_json::json!({"spurious_rto": "frto"})).unwrap_err();
        assert!(e.reason.contains("frto"), "{e}");
        let e = parse::<TcpParams>(&serde_json::json!({"dupthres": 4})).unwrap_err();
        assert!(e.reason.contains("dupthres"), "{e}");
        let e = TcpParams { dupthresh: 0, ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.key, "dupthresh");
        let e = TcpParams { max_rto: -1.0, ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.key, "max_rto");
        let e = TcpParams { clock_granularity: f64::NAN, ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.key, "clock_granularity");
    }

    #[test]
    fn growth_counts_the_packets_an_ack_reports_first() {
        assert_eq!(growth_packets(0, 1000, 0), 0.0);
        assert_eq!(growth_packets(1, 1000, 0), 1.0, "a short segment is one packet");
        assert_eq!(growth_packets(1000, 1000, 0), 1.0);
        assert_eq!(growth_packets(2000, 1000, 0), 2.0, "a delayed ACK");
        assert_eq!(growth_packets(5000, 1000, 0), 5.0, "after four lost ACKs");
        assert_eq!(growth_packets(300_000, 1000, 299), 1.0, "the ACK that repairs a hole");
        assert_eq!(growth_packets(300_000, 1000, 500), 1.0, "at least one");
    }

    #[test]
    fn mss_and_constructors() {
        let c = FlowConfig::new(1, 1500);
        assert_eq!(mss_for(&c, 0), 1460);
        assert_eq!(mss_for(&c, 20), 1440);
        assert_eq!(mss_for(&FlowConfig::new(1, 30), 0), 1);
        let mut s = tcp_sender(&c, Recovery::NewReno, &TcpParams::default());
        s.start(0);
        // IW for SMSS 1460 is 3 segments of 1500 B on the wire.
        let sizes: Vec<u32> = std::iter::from_fn(|| s.poll_transmit(0)).map(|p| p.size).collect();
        assert_eq!(sizes, vec![1500; 3]);
        assert_eq!(s.stats().cwnd_bytes, 3.0 * 1460.0);
        assert_eq!(tcp_receiver(&c).poll_timeout(), None);
    }
}
