//! The congestion controller: the small part of a sender that decides *how much* it may send,
//! independent of the transport that decides *which* bytes go (the TCP transport in `tcp/`).
//! DCCP's endpoints (`dccp/`) do not use it: CCID2's window counts packets and lives in
//! `dccp::window`, which takes VCP's laws directly (`vcp::VcpLaws`).
//!
//! A transport owns sequence space, loss detection and loss recovery (for TCP: duplicate ACKs,
//! NewReno's inflation and deflation during fast recovery, the retransmission timer, spurious
//! timeout detection). It tells the controller three things and asks it one question:
//! - [`CongestionControl::on_ack`]: an acknowledgement the controller's window governs (bytes
//!   newly acked, the packets it reports first, the feedback it carries; 0 bytes for a
//!   duplicate). ACKs that arrive while the transport runs a loss recovery are not passed on:
//!   the recovery owns the window until it ends.
//! - [`CongestionControl::on_congestion`]: a congestion signal (a loss found by duplicate ACKs,
//!   a timeout, an ECN echo, a lost SYN), answered with a [`Response`] the transport applies
//!   the same way for every controller: TCP's halving, a window of the controller's choosing,
//!   or nothing.
//! - [`CongestionControl::set_window`]: the window (and threshold) that applying a response or
//!   ending a recovery gives.
//!
//! On the send side the controller writes its ECN bits and congestion header into each packet
//! (`on_send`), and may ask for a pacing rate and a timer of its own (rate-based control).
//! Everything it wants reported reaches the results through [`CongestionControl::metrics`].
//! The shape follows ns-3's split between `TcpCongestionOps` (the controller) and
//! `TcpRecoveryOps` (the transport's recovery), with quinn-proto's controller-owned window.

use crate::metrics::MetricSink;
use crate::packet::Packet;
use crate::time::{Dur, Time};

/// Transport state handed to every controller call, in transport-neutral terms.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenderCtx {
    pub now: Time,
    /// Maximum segment size: payload bytes of a full data packet.
    pub mss: u32,
    /// The window in force, bytes: the controller's own, or the transport's while it runs a
    /// loss recovery (the only way a controller sees the recovery's window).
    pub cwnd: f64,
    /// Bytes in flight (RFC 5681 FlightSize) as the transport counts them for this event.
    pub flight: u64,
    /// Smoothed RTT, `None` before the first sample.
    pub srtt: Option<Dur>,
    /// Latest RTT sample, `None` before the first.
    pub latest_rtt: Option<Dur>,
    /// Duplicate ACKs counted since the last new ACK (QFCP's num_dupACK).
    pub dupacks: u32,
    /// Timeouts since the last ACK of new data, not counting the current one (RFC 5681 §3.1:
    /// ssthresh is held on repeated timeouts of the same segment).
    pub consecutive_rtos: u32,
}

/// One acknowledgement, as the controller sees it.
#[derive(Clone, Copy, Debug)]
pub struct Ack<'a> {
    /// The ACK itself, after the controller's own `on_wire_arrival` restored its fields.
    pub packet: &'a Packet,
    /// Payload bytes it newly acknowledges; 0 for a duplicate ACK.
    pub acked_bytes: u64,
    /// Packets whose delivery it reports for the first time: those it covers less those
    /// duplicate ACKs already reported, at least one for a new ACK, 0 for a duplicate
    /// (`tcp::growth_packets`). Per-packet laws (the VCP family) grow by this, so that growth
    /// depends neither on the ACK ratio nor on lost ACKs.
    pub reported_pkts: f64,
}

impl Ack<'_> {
    pub fn is_duplicate(&self) -> bool {
        self.acked_bytes == 0
    }
}

/// A congestion signal the transport detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// The dupthresh-th duplicate ACK (or RFC 6675's IsLost): the transport retransmits and
    /// runs its loss recovery around the window the response gives.
    Loss,
    /// The retransmission timer expired with data outstanding; the transport goes back N.
    Timeout,
    /// An ECN-Echo, gated by the transport to one reaction per window (RFC 3168 §6.1.2).
    EcnEcho,
    /// The connection request timed out and is sent again.
    SynTimeout,
}

/// What the transport does about a [`Signal`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Response {
    /// Nothing: the controller has adjusted its own state, or ignores the signal.
    Keep,
    /// TCP's decrease, ssthresh = max(FlightSize/2, 2·MSS) (RFC 5681 eq. 4). After a loss the
    /// transport recovers around it (with NewReno's exit window); after an ECN echo the window
    /// becomes ssthresh; after a timeout the window restarts at one segment, ssthresh held on
    /// a repeated timeout of one segment; after a lost SYN the window is one segment.
    Halve,
    /// A window in bytes of the controller's choosing. After a loss the transport recovers
    /// around it (ssthresh = it) and returns to it; after any other signal the window becomes
    /// it and ssthresh stays.
    SetWindow(f64),
}

/// A sender's congestion controller. Window figures are bytes (f64, so that per-ACK
/// increments accumulate without rounding).
pub trait CongestionControl: Send {
    /// The window the transport may have in flight, bytes.
    fn window(&self) -> f64;

    /// Slow-start threshold in bytes (`f64::INFINITY` where there is none).
    fn ssthresh(&self) -> f64 {
        f64::INFINITY
    }

    /// The transport applies a [`Response`] or ends its loss recovery: the window and the
    /// slow-start threshold are now these (bytes). A controller that keeps its window in other
    /// units converts, or keeps the exact value it chose in its last `SetWindow`.
    fn set_window(&mut self, window: f64, ssthresh: f64);

    /// An acknowledgement outside the transport's loss recovery (module docs).
    fn on_ack(&mut self, ack: &Ack<'_>, ctx: &SenderCtx);

    /// A congestion signal; the transport applies the response.
    fn on_congestion(&mut self, signal: Signal, ctx: &SenderCtx) -> Response;

    /// The window a running loss recovery is built around, re-read at every ACK that arrives
    /// during the recovery (after `on_wire_arrival` has read its feedback): the recovery keeps
    /// its inflation and deflation and moves its base to this value. QFCP sets cwnd =
    /// feedback·rtt + num_dupACK on every duplicate ACK with that ACK's feedback (QFCP
    /// eq. 5). `None` (the default): the window the response to the loss chose, fixed for the
    /// whole recovery. Only a recovery around a chosen window (`Response::SetWindow`) moves.
    fn recovery_base(&self, _ctx: &SenderCtx) -> Option<f64> {
        None
    }

    /// The last timeout was spurious (RFC 3522: the first ACK of new data after it echoes a
    /// timestamp older than the retransmission): undo what `on_congestion(Timeout)` changed
    /// for the first timeout of the episode (Linux `tcp_try_undo_loss`). Called before that
    /// ACK's `on_ack`. Default: keep the reduction.
    fn on_spurious_timeout(&mut self, _ctx: &SenderCtx) {}

    /// Every packet the sender emits, after the transport filled its fields (ECT(0) on new
    /// data when ECN is on). May set ECN bits and the congestion header; the transport then
    /// sizes the packet.
    fn on_send(&mut self, _pkt: &mut Packet, _ctx: &SenderCtx) {}

    /// Every arriving packet, before the transport reads any field: a protocol that
    /// rearranges header fields on the wire puts them back here (DPCP's seq/ack order and
    /// TPCP's checksum offsets, MPCP §3.2, §5), and may read its feedback.
    fn on_wire_arrival(&mut self, _pkt: &mut Packet, _ctx: &SenderCtx) {}

    /// Bytes the congestion header adds to every data packet (taken from the MSS so that a
    /// full data packet stays `packet_size` on the wire).
    fn header_bytes(&self) -> u32 {
        0
    }

    /// Pace data packets at this many wire bytes per second; `None` = ACK-clocked only. The
    /// gap after a packet is recomputed from the current rate whenever the transport asks, so
    /// that a rate change takes effect at once, not only after the next packet. A rate-based
    /// controller (RCP) returns an infinite `window` and regulates by this alone.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }

    /// Pace every data segment at `pacing_rate`: retransmissions and a SACK recovery's sends
    /// too, as a host's pacing (Linux's internal pacing or `sch_fq`) spaces every packet. A
    /// constant of the controller, asked once when the transport is built. Default: no, only
    /// new data outside a loss recovery is paced.
    fn paces_every_segment(&self) -> bool {
        false
    }

    /// The controller's own timer (a rate-based control interval), if it wants one.
    fn poll_timer(&self) -> Option<Time> {
        None
    }

    /// The controller's timer expired (possibly early: do nothing that is not due).
    fn on_timer(&mut self, _ctx: &SenderCtx) {}

    /// Is a header-only probe (`Kind::Ref`) due now? Asked whenever the transport may send;
    /// on `true` the transport sends one, after `on_send` filled its header. A rate-based
    /// controller whose pacing gap exceeds the RTT uses it to learn the rate once per RTT
    /// (RCP's REF, docs/PROTOCOLS.md §6), keeps its own record of when it last said yes, and sets
    /// `poll_timer` to the next probe. Asked only of a controller whose `probes` is true.
    /// Default: never.
    fn probe_due(&mut self, _ctx: &SenderCtx) -> bool {
        false
    }

    /// Does this controller ever send REF probes? A constant of the controller, asked once
    /// when the transport is built, so that ACK-clocked controllers cost nothing per poll.
    fn probes(&self) -> bool {
        false
    }

    /// Send a FIN once every byte of a finite flow is acknowledged, so that routers that count
    /// flows see it leave (XCC-Linux's framework). A constant of the controller, asked once when
    /// the transport is built. Default: no FIN.
    fn announces_end(&self) -> bool {
        false
    }

    /// Is this a plain window controller: one whose `on_wire_arrival` and `on_send` do nothing,
    /// that never paces (`pacing_rate` is always `None`) and has no timer of its own
    /// (`poll_timer` is always `None`)? A constant of the controller, asked once when the
    /// transport is built, so that the transport skips those calls, the copy of every arriving
    /// packet and the context built for them (issue 19: they were a fifth of the sender's work
    /// per ACK). Default: no.
    fn plain_window(&self) -> bool {
        false
    }

    /// The controller's own counters and gauges, by name, for the results.
    fn metrics(&self, _out: &mut dyn MetricSink) {}
}
