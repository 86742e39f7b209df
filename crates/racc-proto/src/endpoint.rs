//! The host side of a flow, as the engines see it: a sans-I/O state machine fed with
//! packets and timer expiries, polled for packets to send (the quinn-proto / smoltcp style).
//!
//! Contract for every engine (simulator or live runtime):
//! 1. deliver each arriving packet with `on_packet(now, &pkt)`;
//! 2. then drain `poll_transmit(now)` until it returns `None`, sending each packet (or, the
//!    same packets without a copy, `poll_transmit_into(now, slot)` until it returns
//!    [`Transmit::Idle`] or [`Transmit::Last`]);
//! 3. keep one timer armed at `poll_timeout()`; when it fires call `on_timeout(now)` and
//!    drain again. `poll_timeout` may move later between calls (an RTO restarted by an ACK):
//!    engines are free to fire early, since `on_timeout` ignores expiries not yet due.

use crate::metrics::MetricSink;
use crate::packet::Packet;
use crate::time::Time;

/// What an engine samples from an endpoint at its metric interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EndpointStats {
    /// Sender: payload bytes cumulatively acknowledged. Receiver: payload bytes delivered in
    /// order to the application.
    pub bytes: u64,
    /// Congestion window in bytes (0 where the protocol has none).
    pub cwnd_bytes: f64,
    /// Pacing or allowed sending rate in bits/s (0 where the protocol is window-based only).
    pub rate_bps: f64,
    /// Smoothed RTT in ns (0 before the first sample).
    pub srtt: Time,
    /// Data packets sent, retransmissions included.
    pub data_pkts_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Timeouts later found spurious (RFC 3522) and undone; counted in `timeouts` too.
    pub spurious_timeouts: u64,
    /// True once a finite flow has all its data acknowledged (sender) or delivered (receiver).
    pub done: bool,
}

/// What [`Endpoint::poll_transmit_into`] put in the engine's slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transmit {
    /// Nothing to send now; the slot holds nothing the engine may use.
    Idle,
    /// A packet is in the slot, and another may follow: poll again.
    More,
    /// A packet is in the slot, and it is the last for now: another poll at this instant,
    /// before anything else reaches the endpoint, would find nothing (so the engine need not
    /// make it: issue 19, that empty poll was a sixth of a sender's work per ACK).
    Last,
}

/// A flow endpoint: a sender (with its congestion controller) or a receiver.
pub trait Endpoint: Send {
    /// Called once when the flow starts (at its start time or arrival time).
    fn start(&mut self, now: Time);
    /// The application stops offering new data (an FTP source's stop time). Data already
    /// sent is still recovered; nothing new is sent afterwards.
    fn stop(&mut self, _now: Time) {}
    /// A packet of this flow reached this endpoint.
    fn on_packet(&mut self, now: Time, pkt: &Packet);
    /// The next packet to send now, if any.
    fn poll_transmit(&mut self, now: Time) -> Option<Packet>;
    /// `poll_transmit` written straight into the engine's storage for the packet (`slot`, whose
    /// contents on entry mean nothing), saying whether another may follow: the same packets,
    /// without the copies of a 120-byte value and, where the endpoint knows it sent its last,
    /// without the empty poll that ends a drain. Default: `poll_transmit`, always `More`.
    #[inline]
    fn poll_transmit_into(&mut self, now: Time, slot: &mut Packet) -> Transmit {
        match self.poll_transmit(now) {
            Some(p) => {
                *slot = p;
                Transmit::More
            }
            None => Transmit::Idle,
        }
    }
    /// Earliest time at which `on_timeout` has work to do.
    fn poll_timeout(&self) -> Option<Time>;
    /// A timer expired (possibly early: do nothing that is not due).
    fn on_timeout(&mut self, now: Time);
    /// Counters every endpoint has, for metrics.
    fn stats(&self) -> EndpointStats;
    /// The protocol's own counters and gauges, by name (a congestion controller's, for a
    /// sender), sampled with `stats`. Default: none.
    fn metrics(&self, _out: &mut dyn MetricSink) {}
}

/// What every sender and receiver is built from, whatever its protocol. The scenario layer
/// fills it; protocol-specific knobs arrive separately as a parameter table.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowConfig {
    pub flow: u32,
    /// Full wire size of a data packet (docs/PROTOCOLS.md §1: headers included).
    pub packet_size: u32,
    /// Bytes to transfer; `None` = unbounded (FTP-like) until the flow is stopped.
    pub size_bytes: Option<u64>,
    /// Initial window in packets; `None` = the protocol's own default (RFC 5681 IW for TCP).
    pub initial_window: Option<u32>,
    /// Initial slow-start threshold in bytes; `None` = unbounded.
    pub initial_ssthresh: Option<u64>,
    /// RFC 6298 lower bound on the RTO, ns (one value for a whole run, docs/PROTOCOLS.md §1).
    pub min_rto: Time,
    /// Negotiate ECN (RFC 3168) where the protocol supports it.
    pub ecn: bool,
    /// Receiver: delayed ACKs (every 2nd segment or after `delack_timeout`).
    pub delayed_ack: bool,
    pub delack_timeout: Time,
    /// SACK (RFC 2018): the receiver reports out-of-order blocks, the TCP sender recovers by
    /// RFC 6675. Both ends of a flow read the same value (no option negotiation is modelled).
    pub sack: bool,
    /// Open with SYN / SYN-ACK (docs/PROTOCOLS.md §1 host rules).
    pub handshake: bool,
    /// Initial sequence number on the wire (tests use values near 2^32 to exercise wrap).
    pub isn: u32,
    /// The scenario seed, for a protocol's own random streams (`SimRng::for_component(seed,
    /// label)`, e.g. DCP-EW's random IP IDs): same scenario and seed, same draws.
    pub seed: u64,
}

impl FlowConfig {
    /// Defaults for a flow of id `flow` with `packet_size`-byte data packets.
    pub fn new(flow: u32, packet_size: u32) -> FlowConfig {
        FlowConfig {
            flow,
            packet_size,
            size_bytes: None,
            initial_window: None,
            initial_ssthresh: None,
            min_rto: 200 * crate::time::NS_PER_MS,
            ecn: false,
            delayed_ack: false,
            delack_timeout: 100 * crate::time::NS_PER_MS,
            sack: false,
            handshake: false,
            isn: 0,
            seed: 0,
        }
    }

    /// The start of a window counted in wire bytes (XCP's and QFCP's): a packet's wire size s
    /// and the first window, `initial_window` packets (one if unset, at least one) of s bytes.
    pub fn first_window(&self) -> (f64, f64) {
        let s = self.packet_size.max(1) as f64;
        (s, self.initial_window.map_or(1, |w| w.max(1)) as f64 * s)
    }
}

/// Drain `ep` as an engine does, through `poll_transmit_into` into a slot holding garbage,
/// checking the hint on the way: after `Last`, another poll at the same instant finds nothing.
#[cfg(test)]
pub(crate) fn drain_into(ep: &mut dyn Endpoint, now: Time) -> Vec<Packet> {
    use crate::packet::{Kind, TcpHeader};
    let garbage = || {
        let h = TcpHeader { seq: 0xdead_beef, flags: 0xff, ts_val: 77, ..Default::default() };
        Packet { ecn: 3, ip_id: 0xbeef, ..Packet::tcp(u32::MAX, Kind::Ref, 9999, 999, h) }
    };
    let mut out = Vec::new();
    loop {
        let mut slot = garbage();
        match ep.poll_transmit_into(now, &mut slot) {
            Transmit::Idle => return out,
            Transmit::More => out.push(slot),
            Transmit::Last => {
                out.push(slot);
                let mut again = garbage();
                assert_eq!(ep.poll_transmit_into(now, &mut again), Transmit::Idle, "a packet after Last");
                return out;
            }
        }
    }
}
