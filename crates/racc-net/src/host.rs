//! A host: one thread inside the host's network namespace running the endpoints of every flow
//! end on that host, in real time, with the simulator's endpoint contract (`endpoint.rs`):
//! deliver each arriving packet with `on_packet`, drain `poll_transmit`, keep one timer at
//! `poll_timeout` and call `on_timeout` when it is due. Each flow end has its own UDP socket,
//! read a batch per `recvmmsg`; what the endpoints send in one pass of the loop leaves through
//! the host's raw socket a batch per `sendmmsg`, before the thread waits. After a pass that
//! received packets the thread sleeps through a short hold (`LoopConfig::host_hold_ns`) deaf to
//! its sockets, so that a stream of packets wakes it once per hold rather than once per packet.
//! The thread sleeps in `ppoll` until a socket is readable or the earliest timer, with a 1 µs
//! timer slack, so timers fire tens of microseconds late rather than milliseconds.

use crate::auth::{self, Key, Window};
use crate::clock::Clock;
use crate::config::LoopConfig;
use crate::schedule::{sample_count, sample_time};
use crate::sys;
use crate::udp::{RawSender, RecvBatch, SendBatch, UdpEnd};
use racc_proto::endpoint::{Endpoint, EndpointStats};
use racc_proto::metrics::MetricList;
use racc_proto::packet::{Kind, Transport};
use racc_proto::time::{Time, NEVER};
use racc_proto::wire::datagram::{self, IpFields};
use racc_proto::wire::ip_packet;
use racc_sim::Spec;
use std::io;
use std::net::SocketAddrV4;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;

pub const SENDER: usize = 0;
pub const RECEIVER: usize = 1;
/// Width of the bins of received bytes (the receiver's rate over time).
pub const BIN_NS: Time = 100_000_000;
const MAX_WAIT: Time = 20_000_000;

/// One flow end on this host.
#[derive(Clone, Debug)]
pub struct EndPlan {
    pub flow: usize,
    pub side: usize,
    pub local: SocketAddrV4,
    pub peer: SocketAddrV4,
    /// With due-time sends, how far before the clock reading the endpoint may be called (a
    /// late timer, a packet received earlier): half the delay of the first port it sends into,
    /// so that the router still takes what it sends at its carried time (`router::sent_at`).
    /// A thread held off longer (a stall) goes on from `now - reach`: catching up every
    /// packet a pacer owed would reach the router at once, a burst the simulator never sends.
    pub reach: Time,
}

/// What a flow end did, collected when the run ends.
#[derive(Clone, Debug, Default)]
pub struct EndReport {
    pub flow: usize,
    pub side: usize,
    /// The endpoint's counters at the end of the run (or when its flow completed).
    pub stats: EndpointStats,
    pub started_at: Option<Time>,
    /// When a sized flow had all its data acknowledged (sender).
    pub done_at: Option<Time>,
    pub tx_pkts: u64,
    /// Datagrams the socket refused (its buffer full): lost outside the emulated network.
    pub tx_errors: u64,
    pub rx_pkts: u64,
    /// Datagrams that did not parse as racc packets of this flow.
    pub rx_rejected: u64,
    /// racc datagrams whose tag is not this run's, and ones whose counter this end has seen or
    /// left behind (`auth.rs`): dropped. The router drops them first; these are what got past.
    pub rx_forged: u64,
    pub rx_replayed: u64,
    /// Wire bytes (IP total length) of data packets received, per [`BIN_NS`] bin of run time.
    pub rx_bins: Vec<u64>,
    /// One-way delay of every data packet received, ns: arrival time less the sender's
    /// timestamp (one clock for every host of the run).
    pub owd_ns: Vec<u32>,
    /// The IP ID of every data packet the end sent, in order (what DCP-EW's routers must see).
    pub sent_data_ids: Vec<u16>,
    /// The end's counters and metrics at each of the run's sample times (the simulator's
    /// `record.interval`) at which its endpoint existed, and once more at the first sample
    /// after a sized flow completed (the simulator's last row of a finished flow).
    pub samples: Vec<Snapshot>,
}

/// What a host thread's loop cost, summed over the hosts in a [`crate::report::LiveReport`].
#[derive(Clone, Copy, Debug, Default)]
pub struct HostStats {
    /// The host threads' CPU time, ns.
    pub cpu_ns: u64,
    /// Passes of the loop (each one wait at most).
    pub loops: u64,
    /// Waits slept through without watching the sockets after a pass that received packets.
    pub held: u64,
}

impl HostStats {
    pub fn add(&mut self, o: &HostStats) {
        self.cpu_ns += o.cpu_ns;
        self.loops += o.loops;
        self.held += o.held;
    }
}

/// An endpoint's figures at sample `k` (time `min(k * interval, duration)`).
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub k: u32,
    pub stats: EndpointStats,
    pub metrics: MetricList,
}

struct End {
    plan: EndPlan,
    sock: UdpEnd,
    ep: Option<Box<dyn Endpoint>>,
    stopped: bool,
    /// The sized flow's completion was sampled (its last row).
    final_sampled: bool,
    /// The counter of the next packet this end sends, and the peer's counters seen.
    counter: u64,
    window: Window,
    /// The time of the last call to the endpoint: what it is called at never goes back.
    last: Time,
    rep: EndReport,
}

/// Snapshot every end at sample `k`.
fn sample(ends: &mut [End], k: u32) {
    for e in ends.iter_mut() {
        if let Some(ep) = &e.ep {
            let mut metrics = MetricList::default();
            ep.metrics(&mut metrics);
            e.rep.samples.push(Snapshot { k, stats: ep.stats(), metrics });
        } else if e.rep.done_at.is_some() && !e.final_sampled {
            e.final_sampled = true;
            e.rep.samples.push(Snapshot { k, stats: e.rep.stats, metrics: MetricList::default() });
        }
    }
}

/// What every host thread of a run is handed at spawn, the same for all: the scenario, the
/// run's key, the barrier of the start, the run's clock (set between the barrier's two waits),
/// the stop flag and the loop's settings.
#[derive(Clone, Copy)]
pub struct HostRun<'a> {
    pub spec: &'a Spec,
    pub key: Key,
    pub ready: &'a Barrier,
    pub clock: &'a std::sync::OnceLock<Clock>,
    pub stop: &'a AtomicBool,
    pub loop_cfg: &'a LoopConfig,
}

/// Run the ends of one host until `end` or `stop`. The thread enters namespace `ns`, opens its
/// sockets, waits at `run.ready` (every thread set up), then reads the run's clock.
pub fn run(ns: &str, plans: Vec<EndPlan>, run: &HostRun) -> io::Result<(Vec<EndReport>, HostStats)> {
    let HostRun { spec, key, ready, clock, stop, loop_cfg } = *run;
    let (batch, hold_ns) = (loop_cfg.host_batch, loop_cfg.host_hold_ns);
    let cpu0 = sys::thread_cpu_ns();
    let mut hs = HostStats::default();
    sys::set_timer_slack(1_000);
    sys::set_realtime(crate::HOST_PRIO);
    let setup = (|| {
        sys::enter_netns(ns)?;
        let raw = RawSender::open()?;
        let mut ends = Vec::with_capacity(plans.len());
        for p in plans {
            let sock = UdpEnd::open(p.local, p.peer)?;
            let rep = EndReport { flow: p.flow, side: p.side, ..Default::default() };
            ends.push(End {
                plan: p,
                sock,
                ep: None,
                stopped: false,
                final_sampled: false,
                counter: 0,
                window: Window::default(),
                last: 0,
                rep,
            });
        }
        Ok::<_, io::Error>((raw, ends))
    })();
    ready.wait();
    ready.wait(); // the clock is set between the two
    let (raw, mut ends) = setup?;
    let mut tx = Tx { raw: &raw, batch: SendBatch::new(batch), sent: vec![[0; 2]; ends.len()], key };
    let mut rx = RecvBatch::new(batch);
    let clock = *clock.get().expect("clock set before the second barrier");
    // The kernel's receive timestamps on the run's clock (due-time receives, `receive`).
    let rt_off = loop_cfg.due_sends.then(|| {
        let a = clock.now();
        let r = sys::realtime_ns();
        let b = clock.now();
        r - (a as i128 + b as i128) / 2
    });
    let end_time = spec.duration;
    let mut fds: Vec<libc::pollfd> = ends.iter().map(|e| sys::pollfd(e.sock.fd.as_raw_fd())).collect();
    let samples = sample_count(spec);
    let mut next_k = 1u32;
    // The last wait was a `ppoll` that timed out (no socket readable).
    let mut quiet = false;
    loop {
        let now = clock.now();
        // Every sample due (a stalled thread catches up with the same figures).
        while next_k <= samples && sample_time(spec, next_k) <= now && sample_time(spec, next_k) < end_time {
            sample(&mut ends, next_k);
            next_k += 1;
        }
        if now >= end_time || stop.load(Ordering::Relaxed) {
            break;
        }
        hs.loops += 1;
        for (i, e) in ends.iter_mut().enumerate() {
            let fs = &spec.flows[e.plan.flow];
            if e.rep.started_at.is_none() && fs.start <= now {
                let cfg = racc_sim::engine::flow_config(spec, e.plan.flow);
                let mut ep = if e.plan.side == SENDER { fs.factory.sender(&cfg) } else { fs.factory.receiver(&cfg) };
                ep.start(now);
                e.last = now;
                e.ep = Some(ep);
                e.rep.started_at = Some(now);
                drain(e, i, &mut tx, now);
            }
            if e.plan.side == SENDER && !e.stopped && fs.stop.is_some_and(|s| s <= now) {
                e.stopped = true;
                if let Some(ep) = e.ep.as_mut() {
                    e.last = now;
                    ep.stop(now);
                }
                drain(e, i, &mut tx, now);
            }
        }
        if quiet {
            // The last wait timed out with the sockets quiet: whatever they hold now came
            // after the timers due, which therefore run first, at their own time (`fire`).
            // After any other wait a packet may have come before a timer (an ACK before its
            // RTO), and the packets go first.
            for (i, e) in ends.iter_mut().enumerate() {
                fire(e, i, &mut tx, spec, now, loop_cfg.due_sends);
            }
        }
        let mut got = 0;
        for (i, e) in ends.iter_mut().enumerate() {
            got += receive(e, i, &mut rx, &mut tx, &clock, spec, rt_off);
        }
        let now = clock.now();
        let mut next = if next_k <= samples { sample_time(spec, next_k).min(end_time) } else { end_time };
        for (i, e) in ends.iter_mut().enumerate() {
            fire(e, i, &mut tx, spec, now, loop_cfg.due_sends);
            if let Some(t) = e.ep.as_ref().and_then(|ep| ep.poll_timeout()) {
                next = next.min(t);
            }
            let fs = &spec.flows[e.plan.flow];
            if e.rep.started_at.is_none() {
                next = next.min(fs.start);
            } else if e.plan.side == SENDER && !e.stopped {
                next = next.min(fs.stop.unwrap_or(NEVER));
            }
        }
        // What this pass queued goes out before the wait.
        tx.flush();
        let now = clock.now();
        if next > now && got > 0 && hold_ns > 0 {
            // Packets are streaming in: sleep a while without watching the sockets and read
            // what queued meanwhile in one batch, instead of being woken (from the router's
            // CPU) for each packet. An idle path's packet finds the thread in `ppoll`.
            hs.held += 1;
            quiet = false;
            sys::sleep_ns((next - now).min(hold_ns));
        } else if next > now {
            for f in fds.iter_mut() {
                f.revents = 0;
            }
            quiet = sys::ppoll(&mut fds, (next - now).min(MAX_WAIT))? == 0;
        } else {
            quiet = false;
        }
    }
    // The run's last samples, at its end (those left if it was stopped early).
    if !stop.load(Ordering::Relaxed) {
        while next_k <= samples {
            sample(&mut ends, next_k);
            next_k += 1;
        }
    }
    tx.flush();
    hs.cpu_ns = sys::thread_cpu_ns() - cpu0;
    let reps = ends
        .into_iter()
        .zip(tx.sent)
        .map(|(mut e, [ok, refused])| {
            e.rep.tx_pkts += ok;
            e.rep.tx_errors += refused;
            if let Some(ep) = &e.ep {
                e.rep.stats = ep.stats();
            }
            e.rep
        })
        .collect();
    Ok((reps, hs))
}

/// The host's sends: packets queued in a [`SendBatch`] and sent together with one system call
/// when it is full or before the thread waits, and per flow end the packets sent and refused.
struct Tx<'a> {
    raw: &'a RawSender,
    batch: SendBatch,
    sent: Vec<[u64; 2]>,
    /// The run's key: what the ends send is sealed with it, what they receive checked.
    key: Key,
}

impl Tx<'_> {
    fn flush(&mut self) {
        let sent = &mut self.sent;
        self.batch.flush(self.raw, |end, ok| sent[end as usize][usize::from(!ok)] += 1);
    }
}

/// End `e`'s timer if it is due by `now`. With `at_due` the endpoint is called at the time its
/// timer was due (never before its last call) rather than at the clock reading, so the thread's
/// wake-up lateness (p50 7 µs, p99 180 µs on a loaded 2-core VM, docs/LIVE.md) neither delays
/// the packets a pacer sends, as the send times they carry say, nor moves its schedule: a pacer
/// stamps each departure with the time it is called at (`paced_at`), so a late call pushed every
/// later packet back by the lateness. The router stamps a packet by the send time it carries,
/// so the emulated network sees it leave when it was due, as in the simulator.
fn fire(e: &mut End, idx: usize, tx: &mut Tx, spec: &Spec, now: Time, at_due: bool) {
    let Some(t) = e.ep.as_ref().and_then(|ep| ep.poll_timeout()) else { return };
    if t > now {
        return;
    }
    let at = if at_due { t.max(e.last).max(now.saturating_sub(e.plan.reach)).min(now) } else { now };
    e.last = at;
    e.ep.as_mut().expect("has a timer").on_timeout(at);
    drain(e, idx, tx, at);
    check_done(e, spec, at);
}

/// Read every waiting datagram of end `e` (the host's end `idx`) into its endpoint, a batch
/// per system call.
/// Returns how many it read.
///
/// With `rt_off` (due-time sends on: the wall clock less the run's), each packet is handed to
/// its endpoint at the time the kernel received it from the router (SO_TIMESTAMPNS, on the
/// run's clock; never before the endpoint's last call nor after now), after the end's timer
/// if that was due first, so that neither the thread's wake-up nor its receive hold
/// (`LoopConfig::host_hold_ns`) delays the packet as its endpoint sees it, nor the ACKs or
/// data it sends in answer (stamped by the router at their carried time, `router::sent_at`).
fn receive(
    e: &mut End,
    idx: usize,
    rx: &mut RecvBatch,
    tx: &mut Tx,
    clock: &Clock,
    spec: &Spec,
    rt_off: Option<i128>,
) -> usize {
    let mut total = 0;
    loop {
        let got = match e.sock_recv(rx) {
            Some(n) => n,
            None => return total,
        };
        total += got;
        let now = clock.now();
        for k in 0..got {
            let (bytes, tos, stamp) = rx.get(k);
            let at = match (rt_off, stamp) {
                (Some(off), Some(st)) => {
                    let floor = e.last.max(now.saturating_sub(e.plan.reach));
                    (st - off).clamp(floor as i128, now as i128) as Time
                }
                _ => now,
            };
            e.rep.rx_pkts += 1;
            // The receiving socket cannot see the IP ID; no endpoint reads it on arrival. The
            // packet's size is its modelled one, from the shim.
            let ip = IpFields { ecn: tos & 0b11, ip_id: 0 };
            let Ok((pkt, racc_len)) = datagram::parse(bytes, ip) else {
                e.rep.rx_rejected += 1;
                continue;
            };
            let Some(counter) = tx.key.open(bytes, racc_len) else {
                e.rep.rx_forged += 1;
                continue;
            };
            if pkt.flow as usize != e.plan.flow {
                e.rep.rx_rejected += 1;
                continue;
            }
            if !e.window.accept(counter) {
                e.rep.rx_replayed += 1;
                continue;
            }
            if pkt.kind == Kind::Data {
                let bin = (now / BIN_NS) as usize;
                if e.rep.rx_bins.len() <= bin {
                    e.rep.rx_bins.resize(bin + 1, 0);
                }
                e.rep.rx_bins[bin] += pkt.size as u64;
                let sent = match &pkt.transport {
                    Transport::Tcp(h) => h.ts_val,
                    Transport::Dccp(h) => h.ts_val,
                };
                e.rep.owd_ns.push(at.saturating_sub(sent).min(u32::MAX as u64) as u32);
            }
            if rt_off.is_some() {
                // A timer due before the packet arrived goes first.
                fire(e, idx, tx, spec, at, true);
            }
            let Some(ep) = e.ep.as_mut() else { continue };
            e.last = at;
            ep.on_packet(at, &pkt);
            drain(e, idx, tx, at);
            check_done(e, spec, at);
        }
        if got < rx.size() {
            // Fewer than asked for: the socket was empty (what arrives since is read next pass).
            return total;
        }
    }
}

impl End {
    /// One batch from this end's socket: how many, or `None` when none waits.
    fn sock_recv(&self, rx: &mut RecvBatch) -> Option<usize> {
        match rx.recv(&self.sock) {
            Ok(n) if n > 0 => Some(n),
            _ => None,
        }
    }
}

/// Queue everything the endpoint has to send now, as whole IPv4 packets for the host's raw
/// socket: the IPv4 header (the endpoint's IP ID and ECN bits), UDP, the racc headers, then zero
/// bytes up to the packet's wire size (`wire::ip_packet`, the simulator's captures' layout),
/// with the run's trailer after the racc headers (`auth.rs`): in the padding of a data packet,
/// a pure ACK's [`auth::TRAILER`] bytes longer than its headers.
fn drain(e: &mut End, idx: usize, tx: &mut Tx, now: Time) {
    let Some(ep) = e.ep.as_mut() else { return };
    let (local, peer) = (e.plan.local.ip().octets(), e.plan.peer.ip().octets());
    let addrs = if e.plan.side == SENDER { [local, peer] } else { [peer, local] };
    while let Some(pkt) = ep.poll_transmit(now) {
        let buf = tx.batch.next_buf();
        let sealed = match ip_packet::emit(&pkt, addrs, buf) {
            Ok((n, total)) if total <= buf.len() => {
                buf[n..total].fill(0);
                auth::make_room(buf, n, total).map(|total| (n, total))
            }
            _ => None,
        };
        let Some((n, total)) = sealed else {
            e.rep.tx_errors += 1;
            continue;
        };
        let racc_len = n - crate::frame::IP_UDP_LEN;
        tx.key.seal(&mut buf[crate::frame::IP_UDP_LEN..total], racc_len, e.counter);
        e.counter += 1;
        if pkt.kind == Kind::Data {
            e.rep.sent_data_ids.push(pkt.ip_id);
        }
        tx.batch.push(total, *e.plan.peer.ip(), idx as u32);
        if tx.batch.is_full() {
            tx.flush();
        }
    }
}

/// A sized flow's sender that has all its data acknowledged is finished (the simulator frees it).
fn check_done(e: &mut End, spec: &Spec, now: Time) {
    if e.plan.side != SENDER || spec.flows[e.plan.flow].size_bytes.is_none() || e.rep.done_at.is_some() {
        return;
    }
    if let Some(ep) = &e.ep {
        if ep.stats().done {
            e.rep.done_at = Some(now);
            e.rep.stats = ep.stats();
            e.ep = None;
        }
    }
}
