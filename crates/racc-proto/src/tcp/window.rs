//! The pluggable window arithmetic of the TCP transport.
//!
//! The transport (`sender.rs`) owns everything about *which* bytes to send: sequence
//! bookkeeping, duplicate-ACK counting, `recover`, the segment to retransmit, the RTO timer and
//! its back-off, Karn's rule, the once-per-RTT ECN gate. A `WindowControl` owns *how much*:
//! cwnd (bytes), ssthresh, an optional pacing rate, and what goes into each packet's ECN bits
//! and congestion header. NewReno (`newreno.rs`, RFC 5681/6582) is one implementation; VCP over
//! TCP (PROTOCOLS.md §2), QFCP (§9) and XCP (§5) replace the growth and loss rules while
//! reusing the transport.
//!
//! Call order on an ACK: the transport first updates `snd_una`/`snd_nxt`, the RTT estimator
//! and its dup-ACK state, then calls exactly one of `on_new_ack`, `on_dupack`,
//! `on_fast_retransmit`, `on_recovery_dupack`, `on_partial_ack`, `on_recovery_exit`; then, if
//! the ACK carries an ECN-Echo that passes the once-per-RTT gate, `on_ecn_echo`. The
//! `ctx` always describes the state *after* the ACK was applied.

use crate::packet::Packet;
use crate::time::{Dur, Time};

/// Transport state handed to every hook. Offsets are absolute payload-byte offsets. The
/// sender fills every field; `Default` (all zero, no RTT sample) is for tests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenderCtx {
    pub now: Time,
    /// Sender maximum segment size: payload bytes of a full data packet.
    pub mss: u32,
    /// Oldest unacknowledged byte.
    pub snd_una: u64,
    /// Next byte to send (moves back to `snd_una` on an RTO: go-back-N).
    pub snd_nxt: u64,
    /// One past the highest byte ever sent.
    pub snd_max: u64,
    /// RFC 5681 FlightSize: `snd_nxt - snd_una`.
    pub flight: u64,
    /// Smoothed RTT, `None` before the first sample.
    pub srtt: Option<Dur>,
    /// Latest RTT sample, `None` before the first.
    pub latest_rtt: Option<Dur>,
    /// Current RTO (back-off included).
    pub rto: Dur,
    /// Duplicate ACKs counted since the last new ACK (QFCP's num_dupACK).
    pub dupacks: u32,
    /// Duplicate ACKs since snd_una last advanced, timeouts included, less the packets new
    /// ACKs have covered since: the delivered packets the receiver has already reported, which
    /// the next new ACK covers again (`tcp::growth_packets`).
    pub dupacks_covered: u64,
    /// RTO expiries since the last ACK of new data, not counting the current one
    /// (RFC 5681 §3.1: ssthresh is held on repeated timeouts of the same segment).
    pub consecutive_rtos: u32,
    pub in_recovery: bool,
    /// One past the highest byte outstanding when recovery (or the last RTO) began.
    pub recover: u64,
    /// The flow uses SACK: fast recovery is RFC 6675's, where the transport sends by its
    /// `pipe` estimate and the window stays at ssthresh (no RFC 5681 inflation, no RFC 6582
    /// deflation).
    pub sack: bool,
}

/// How fast recovery ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryExit {
    /// NewReno (RFC 6582 §3.2 step 3): an ACK covers everything up to `recover`.
    FullAck,
    /// Reno (RFC 5681 §3.2 step 6): the first ACK of new data, full or partial.
    Reno,
}

/// Window arithmetic plugged into the TCP transport. cwnd and ssthresh are in bytes (f64, so
/// that SMSS²/cwnd and XCP's byte feedback accumulate without rounding).
pub trait WindowControl: Send {
    /// Congestion window in bytes; the transport sends a segment while
    /// `flight + segment <= cwnd`.
    fn cwnd_bytes(&self) -> f64;

    /// Slow-start threshold in bytes (`f64::INFINITY` where there is none); for metrics.
    fn ssthresh_bytes(&self) -> f64 {
        f64::INFINITY
    }

    /// Pace data packets at this many wire bytes per second; `None` = ACK-clocked only.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }

    /// A chain controller's exception handling, for metrics; zero for the others.
    fn chain_stats(&self) -> crate::endpoint::ChainStats {
        crate::endpoint::ChainStats::default()
    }

    /// Bytes this controller's congestion header adds to every data packet; the transport
    /// subtracts them from the MSS so that a full data packet stays `packet_size` on the wire.
    fn header_bytes(&self) -> u32 {
        0
    }

    /// Every packet the sender emits (SYN and data, retransmissions included; check
    /// `pkt.kind` and `ctx`), after the transport has filled seq, flags, ECN (ECT(0) on new
    /// data when ECN is on) and the checksum. May set ECN bits and the congestion header; the
    /// transport then sets the wire size from payload and header length.
    fn on_send(&mut self, _pkt: &mut Packet, _ctx: &SenderCtx) {}

    /// Every arriving packet, first thing, before the transport reads any field. A protocol
    /// that rearranges header fields on the wire puts them back here (DPCP's seq/ack order and
    /// TPCP's checksum offsets, seed 000 §3.2, §5). Default: nothing.
    fn on_wire_arrival(&mut self, _now: Time, _pkt: &mut Packet) {}

    /// The SYN-ACK arrived (handshake done); QFCP/RCP take their first rate here.
    fn on_handshake(&mut self, _synack: &Packet, _ctx: &SenderCtx) {}

    /// The SYN timed out and is being retransmitted.
    fn on_syn_timeout(&mut self, _ctx: &SenderCtx) {}

    /// An ACK of `acked` new bytes outside fast recovery.
    fn on_new_ack(&mut self, acked: u64, ack: &Packet, ctx: &SenderCtx);

    /// A duplicate ACK outside recovery that does not start fast retransmit (`ctx.dupacks` is
    /// its count: below dupthresh, or beyond it when RFC 6582's `recover` check refused).
    fn on_dupack(&mut self, _ack: &Packet, _ctx: &SenderCtx) {}

    /// The dupthresh-th duplicate ACK: fast retransmit starts now (the transport retransmits
    /// the segment at `snd_una` whatever the window).
    fn on_fast_retransmit(&mut self, ack: &Packet, ctx: &SenderCtx);

    /// A further duplicate ACK during fast recovery.
    fn on_recovery_dupack(&mut self, ack: &Packet, ctx: &SenderCtx);

    /// NewReno partial ACK (new data, below `recover`) of `acked` bytes; the transport
    /// retransmits the next hole.
    fn on_partial_ack(&mut self, acked: u64, ack: &Packet, ctx: &SenderCtx);

    /// Fast recovery ends with this ACK.
    fn on_recovery_exit(&mut self, how: RecoveryExit, ack: &Packet, ctx: &SenderCtx);

    /// The retransmission timer expired with data outstanding; the transport goes back to
    /// `snd_una` (go-back-N). `ctx.flight` is the flight before the reset.
    fn on_rto(&mut self, ctx: &SenderCtx);

    /// The RTO that `on_rto` reacted to was spurious: the first ACK of new data after it
    /// echoes a timestamp older than the retransmission (RFC 3522 Eifel detection), so the
    /// original segments were only delayed. Undo what the first `on_rto` of the episode did,
    /// as Linux does (`tcp_try_undo_loss`). Called before that ACK's `on_new_ack`, with `ctx`
    /// already back at `snd_nxt = snd_max`. Default: keep the reduction.
    fn on_spurious_rto(&mut self, _ctx: &SenderCtx) {}

    /// ECN-Echo, already gated by the transport to at most one reaction per window of data
    /// and never during fast recovery (RFC 3168 §6.1.2).
    fn on_ecn_echo(&mut self, ack: &Packet, ctx: &SenderCtx);
}
