//! Router modules: the per-output-port logic of a router (queue management, load-factor
//! computation, explicit feedback). One instance per output port; the engine owns the queue
//! and the link and calls the module at the points below, handing it a read-only view of the
//! port. The same module runs in the simulator and in the live runtime's userspace router.

use crate::metrics::MetricSink;
use crate::packet::Packet;
use crate::time::Time;

/// What the module decides for an arriving packet. A mark has already been written into the
/// packet by the module; the verdict lets the engine count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Forward,
    Mark,
    Drop,
}

/// Read-only state of the output port, as of `now`. Queue figures count packets waiting,
/// not the one being serialised (the ns-2 convention the papers' numbers use).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PortView {
    pub queue_pkts: u32,
    pub queue_bytes: u64,
    /// Link capacity in bits per second.
    pub capacity_bps: f64,
    /// Propagation delay of the link, ns.
    pub delay: Time,
    /// Buffer limit: packets (`u32::MAX` if limited in bytes) and bytes (`u64::MAX` if in packets).
    pub limit_pkts: u32,
    pub limit_bytes: u64,
    /// When the queue last became empty with the link idle; `None` while busy.
    pub idle_since: Option<Time>,
    /// Wire size of a typical data packet on this port (RED's idle decay uses s/C).
    pub mean_pkt_size: u32,
}

/// The per-port logic of a router.
pub trait RouterModule: Send {
    /// Registry name ("droptail", "red", "vcp", ...).
    fn name(&self) -> &'static str;
    /// Every arriving packet, before the buffer check: arrival counters see packets the
    /// buffer then drops (docs/PROTOCOLS.md §1 router rules). May rewrite header fields.
    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, port: &PortView) -> Verdict;
    /// The module accepted the packet but the buffer was full (tail drop).
    fn on_buffer_drop(&mut self, _now: Time, _pkt: &Packet, _port: &PortView) {}
    /// The packet starts serialisation on the link (dequeue); may rewrite header fields,
    /// e.g. VCP marks at dequeue with the freshest code. Returns true if it changed the
    /// packet's congestion marking, so that the engine counts the mark like an arrival mark.
    fn on_departure(&mut self, _now: Time, _pkt: &mut Packet, _port: &PortView) -> bool {
        false
    }
    /// Does the module decide at dequeue ([`Self::on_dequeue`]), as CoDel does (RFC 8289 §5.5)?
    /// A constant of the module, asked once when its port is built. Such a port decides each
    /// departure when the link falls free, as a port with sub-queues does, and stamps each
    /// waiting packet with its enqueue time for the sojourn. Default: no.
    fn acts_at_dequeue(&self) -> bool {
        false
    }

    /// Only if [`Self::acts_at_dequeue`]: the head of sub-queue `queue` is about to start
    /// serialisation at `now` after `sojourn` ns in the queue (0 for a packet that found the
    /// link idle; it is asked too). It has left the queue: `port` counts the packets waiting
    /// behind it. `Drop`: the engine drops it (counted with the port's drops) and asks again
    /// about the next head at the same `now`; `Mark`: the module wrote a mark, counted.
    /// [`Self::on_departure`] follows for the packet that is sent.
    fn on_dequeue(
        &mut self,
        _now: Time,
        _pkt: &mut Packet,
        _sojourn: Time,
        _queue: usize,
        _port: &PortView,
    ) -> Verdict {
        Verdict::Forward
    }

    /// Next control-interval tick wanted, if any.
    fn next_tick(&self) -> Option<Time> {
        None
    }
    /// A control interval ended.
    fn on_tick(&mut self, _now: Time, _port: &PortView) {}

    /// Does the module leave every packet alone: `on_arrival` always forwards it untouched,
    /// `on_departure` and `on_buffer_drop` do nothing? A constant of the module, asked once
    /// when its port is built, so that the engine skips those calls and the view they are
    /// given on every packet-hop (issue 19). Tunnel hooks and ticks are called as always.
    /// Default: no.
    fn passive(&self) -> bool {
        false
    }

    /// Sub-queues the module serves, each a FIFO of its own behind one link (VCP-DCCP §4.4: VCP
    /// and TCP/RED traffic in two sub-queues). A constant of the module, asked once when its
    /// port is built. Default 1: the port is one FIFO and [`Self::sub_queue`] and [`Self::pick`]
    /// are never called.
    fn sub_queues(&self) -> usize {
        1
    }

    /// The sub-queue (below [`Self::sub_queues`]) of a packet `on_arrival` admitted; called
    /// only for a packet that has to wait (the link is busy). The module's own buffer limits
    /// per sub-queue are its `on_arrival`'s business (a drop there); the port's limit is
    /// checked over all sub-queues after it.
    fn sub_queue(&self, _pkt: &Packet) -> usize {
        0
    }

    /// The link fell free at `now` and packets wait: which sub-queue's head starts
    /// serialisation. `heads[i]` is the wire size of sub-queue `i`'s head, `None` if it is
    /// empty; at least one is `Some`, and the answer must be one of those. Default: the first.
    fn pick(&mut self, _now: Time, heads: &[Option<u32>]) -> usize {
        heads.iter().position(Option::is_some).unwrap_or(0)
    }

    /// The module's own counters and gauges, by name (a fair-share rate, the arithmetic
    /// operations it did per packet), sampled with the port's series. Default: none.
    fn metrics(&self, _out: &mut dyn MetricSink) {}

    // IPsec tunnel hooks (DCP-EW §III.C). On a port where packets enter a tunnel the engine
    // calls `before_encapsulation`, encapsulates (`ipsec::Tunnel::encapsulate`), calls
    // `after_encapsulation`, then `on_arrival`; where they leave it, `before_decapsulation`,
    // `ipsec::decapsulate`, `after_decapsulation`, then `on_arrival`. A security module (DCP-EW's
    // SM) uses them to carry its load factor across the encryption boundary; plain modules
    // ignore them, which is exactly what a tunnel does to them.

    /// A plaintext packet is about to be encrypted into tunnel `tunnel`.
    fn before_encapsulation(&mut self, _now: Time, _pkt: &mut Packet, _tunnel: u16) {}
    /// The packet now has its outer header (`pkt.outer`).
    fn after_encapsulation(&mut self, _now: Time, _pkt: &mut Packet, _tunnel: u16) {}
    /// A packet of tunnel `tunnel` is about to be decrypted (its outer header is still on).
    fn before_decapsulation(&mut self, _now: Time, _pkt: &mut Packet, _tunnel: u16) {}
    /// The packet is plaintext again; the outer ECN bits were copied into the inner header.
    fn after_decapsulation(&mut self, _now: Time, _pkt: &mut Packet, _tunnel: u16) {}
}
