//! The userspace router: every host's TUN device leads here. It emulates the scenario's
//! topology with the simulator's own ports ([`racc_sim::port::Port`], built by
//! [`racc_sim::engine::build_ports`]): per output port the FIFO with the configured buffer,
//! serialisation at the configured rate, propagation delay, the loss model and the port's
//! router module, called exactly as in the simulator because it is the same code. What is live
//! here is time (the run's clock instead of an event queue) and the packets (real IP packets,
//! parsed into racc [`Packet`]s and written back after the modules' rewrites).
//!
//! Events are run in time order as in the simulator: each loop first reads the TUN devices and
//! offers what arrived to the first port of its path, stamped with the send time it carries
//! (within that port's delay before the events already run: [`sent_at`]) or the clock reading,
//! then takes every port event due by now (the arrival of a FIFO head at the far end of its
//! link, a module's tick); no port sees time go back.

use crate::auth::{Key, Window};
use crate::clock::Clock;
use crate::config::LoopConfig;
use crate::device::{Device, MAX_PKT};
use crate::frame::{self, Frame, Reject};
use crate::schedule::sample_count;
use crate::sys;
use crate::uring::Uring;
use racc_proto::packet::{Direction, Kind, Packet, TcpHeader, Transport};
use racc_proto::time::{Time, NEVER};
use racc_sim::metrics::{PortMark, PortSeries};
use racc_sim::port::{Accept, Packets, Port};
use racc_sim::Spec;
use std::sync::atomic::{AtomicBool, Ordering};

mod capture;
mod samples;
pub mod stats;
pub use stats::RouterStats;

/// The longest the router sleeps without looking at the stop flag.
const MAX_WAIT: Time = 20_000_000;
/// The most packets read from one device in one pass of the loop.
const BATCH: usize = 64;
/// With io_uring or packet rings and at most this many devices, the loop tries every device
/// after a timer sleep rather than asking epoll which are readable.
const TRY_ALL: usize = 8;
/// The fewest reads an io_uring pass asks of a readable device: an empty one answers each at
/// once, in the same system call, and asking too few makes the loop go round again.
const URING_MIN_READS: usize = 8;

pub struct Router {
    pub ports: Vec<Port>,
    /// Each port's clock: the last time it was called at. Every call goes through
    /// [`Router::port_now`], so a port's time never goes back (issue 37 item 9: the end-of-run
    /// settle once ran a port past its last sample time, and the queue integral wrapped).
    port_time: Vec<Time>,
    /// Packets in the emulated network, by slot: the protocol's view, its bytes and where its
    /// headers are. Slots are reused: no allocation per packet after warm-up.
    pub(crate) pkts: Packets,
    frames: Vec<Frame>,
    bytes: Vec<u8>,
    lens: Vec<u16>,
    free: Vec<u32>,
    route_ports: Vec<u32>,
    flow_paths: Vec<[(u32, u32); 2]>,
    /// Per flow, the host index of its sender and of its receiver.
    flow_hosts: Vec<[usize; 2]>,
    addrs: Vec<[u8; 4]>,
    /// The run's key and, per flow and direction, the counters seen (anti-replay, `auth.rs`).
    key: Key,
    windows: Vec<[Window; 2]>,
    pub stats: RouterStats,
    /// The recorded ports' rows, sampled at the simulator's sample times (`links` table).
    pub series: PortSeries,
    record_ports: Vec<usize>,
    prev: Vec<PortMark>,
    /// Sample times: `min(k * interval, duration)` for k = 1..=`samples`.
    interval: Time,
    duration: Time,
    samples: u32,
    next_k: u32,
    last_sample: Time,
    /// `--pcap`: the capture file, the tapped packets being put in time order, a scratch
    /// buffer, and the first write error (the capture stops there, the run goes on).
    capture: Option<Box<racc_sim::pcap::PortCapture>>,
    /// The devices' I/O through io_uring (`LoopConfig::uring`), for the length of a run.
    io: Option<Box<Uring>>,
    /// Per device: how many reads the next io_uring pass asks for (twice what came last time,
    /// at least [`URING_MIN_READS`]).
    io_want: Vec<usize>,
    /// Per pass: the reads' slots, then the packets each device gave.
    io_scratch: Vec<usize>,
    /// Stamp a packet at the send time it carries (`LoopConfig::due_sends`, see [`sent_at`]).
    stamp_sent: bool,
    /// Every port event due by this time has run.
    ran_to: Time,
}

impl Router {
    /// `flow_hosts[f]` = (sender's host, receiver's host), indices into `addrs`.
    pub fn new(
        spec: &Spec,
        flow_hosts: Vec<[usize; 2]>,
        addrs: Vec<[u8; 4]>,
    ) -> Result<Router, racc_sim::ScenarioError> {
        let ports = racc_sim::engine::build_ports(spec)?;
        let mut route_ports = Vec::new();
        let mut spans = Vec::with_capacity(spec.routes.len());
        for r in &spec.routes {
            spans.push((route_ports.len() as u32, r.len() as u32));
            route_ports.extend(r.iter().map(|&p| p as u32));
        }
        let flow_paths = spec.flows.iter().map(|f| [spans[f.fwd_route], spans[f.rev_route]]).collect();
        Ok(Router {
            series: PortSeries::default(),
            record_ports: spec.record_ports.clone(),
            prev: vec![PortMark::default(); ports.len()],
            interval: spec.sample_interval.max(1),
            duration: spec.duration,
            samples: sample_count(spec),
            next_k: 1,
            last_sample: 0,
            capture: None,
            io: None,
            io_want: Vec::new(),
            io_scratch: Vec::new(),
            stamp_sent: false,
            ran_to: 0,
            port_time: vec![0; ports.len()],
            ports,
            pkts: Packets::default(),
            frames: Vec::new(),
            bytes: Vec::new(),
            lens: Vec::new(),
            free: Vec::new(),
            route_ports,
            flow_paths,
            windows: vec![[Window::default(); 2]; flow_hosts.len()],
            flow_hosts,
            addrs,
            key: Key::from_bytes([0; 16]),
            stats: RouterStats::default(),
        })
    }

    /// The propagation delay of the first port flow `f`'s `side` (0 sender, 1 receiver) sends
    /// into: how far back the router takes a packet's carried send time ([`sent_at`]).
    pub fn first_delay(&self, f: usize, side: usize) -> Time {
        self.ports[self.route_ports[self.flow_paths[f][side].0 as usize] as usize].delay
    }

    /// The run's key, which the hosts seal their packets with (until set, all zero).
    pub fn set_key(&mut self, key: Key) {
        self.key = key;
    }

    fn alloc(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        // Slots of packets a port dropped at dequeue (CoDel) come back first.
        self.free.extend(self.pkts.reclaim());
        if let Some(i) = self.free.pop() {
            return i;
        }
        self.pkts.push(blank());
        self.frames.push(Frame { pkt: blank(), src: [0; 4], dst: [0; 4], ihl: 0, racc_len: 0 });
        self.bytes.resize(self.bytes.len() + MAX_PKT, 0);
        self.lens.push(0);
        (self.pkts.len() - 1) as u32
    }

    fn buf(&mut self, i: u32) -> &mut [u8] {
        let at = i as usize * MAX_PKT;
        &mut self.bytes[at..at + MAX_PKT]
    }

    /// Run until `end` or until `stop` is set, reading and writing `tuns` (host i's device is
    /// `tuns[i]`).
    ///
    /// Each pass: the samples due, the devices epoll reported readable, each read until it is
    /// empty (at most [`BATCH`] packets a pass, so that due events are not held up), then the
    /// port events due, then a wait for the next event or a device. A wait up to
    /// `loop_cfg.coalesce_ns` sleeps straight to the timer and reads the devices then (one
    /// wake-up instead of two); one up to `loop_cfg.spin_ns` (off by default) polls instead.
    pub fn run(
        &mut self,
        tuns: &[&Device],
        clock: &Clock,
        end: Time,
        stop: &AtomicBool,
        loop_cfg: &LoopConfig,
    ) -> std::io::Result<()> {
        let cpu0 = sys::thread_cpu_ns();
        let delay0 = sys::thread_run_delay_ns();
        self.stamp_sent = loop_cfg.due_sends;
        let epoll = sys::Epoll::new()?;
        for (h, t) in tuns.iter().enumerate() {
            epoll.add(t.fd(), h as u64)?;
        }
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; tuns.len().max(1)];
        let mut ready = vec![true; tuns.len()];
        if loop_cfg.uring {
            let fds: Vec<_> = tuns.iter().map(|t| t.fd()).collect();
            self.io = Some(Box::new(Uring::new(&fds)?));
            // A ring device's reads are loads, not system calls: they stay out of io_uring.
            self.io_want = tuns.iter().map(|t| if t.reads_by_syscall() { URING_MIN_READS } else { 0 }).collect();
            self.io_scratch = vec![0; tuns.len()];
        }
        loop {
            let now = clock.now();
            if now >= end || stop.load(Ordering::Relaxed) {
                break;
            }
            if let Some(e) = self.io.as_mut().and_then(|io| io.error.take()) {
                self.io = None;
                return Err(e);
            }
            self.stats.loops += 1;
            self.sample_due(now, tuns, clock);
            // The devices before the events due: a packet sent while the router was held off
            // its CPU then enters its first port at its carried time, ahead of the events it
            // precedes (`sent_at`), instead of all at once after them.
            let t = clock.now();
            let mut more = false;
            if self.io.is_some() {
                more = self.read_uring(t, &mut ready, clock);
            }
            for (h, tun) in tuns.iter().enumerate() {
                if !ready[h] || (self.io.is_some() && tun.reads_by_syscall()) {
                    continue;
                }
                for _ in 0..BATCH {
                    let i = self.alloc();
                    let t0 = clock.now();
                    let r = tun.recv(self.buf(i));
                    self.stats.read_ns += clock.now() - t0;
                    match r {
                        Ok(Some(n)) => {
                            self.lens[i as usize] = n as u16;
                            self.accept(t, h, i);
                        }
                        _ => {
                            self.free.push(i);
                            ready[h] = false;
                            break;
                        }
                    }
                }
                more |= ready[h];
            }
            let now = clock.now();
            self.run_due(now, tuns, clock);
            self.ran_to = now;
            self.write_capture();
            let next = self.next_event().min(self.next_sample()).min(end);
            let now = clock.now();
            // The next event plus the gather window: events that close run in one wake-up.
            let wait = if more { 0 } else { (next + loop_cfg.gather_ns).saturating_sub(now).min(MAX_WAIT) };
            let n = if wait > 0 && wait <= loop_cfg.spin_ns {
                self.stats.spins += 1;
                loop {
                    let n = epoll.wait(&mut events, 0).unwrap_or(0);
                    if n > 0 || clock.now() >= next {
                        break n;
                    }
                    std::hint::spin_loop();
                }
            } else if wait > 0 && wait <= loop_cfg.coalesce_ns {
                // Asleep until the timer, deaf to the devices: what they receive meanwhile
                // is read at the timer, one wake-up for both.
                self.stats.coalesced += 1;
                sys::sleep_ns(wait);
                if tuns.len() <= TRY_ALL && (self.io.is_some() || tuns.iter().all(|d| !d.reads_by_syscall())) {
                    // A few devices: trying each (in the next submission, or in its ring)
                    // costs less than a system call to ask which are readable.
                    ready.fill(true);
                    0
                } else {
                    epoll.wait(&mut events, 0).unwrap_or(0)
                }
            } else {
                epoll.wait(&mut events, wait).unwrap_or(0)
            };
            for e in &events[..n] {
                ready[e.u64 as usize] = true;
            }
        }
        // Departures due by now are settled before the last samples, so that the samples'
        // per-port rows add up to the port counters (a wake-up can land up to the gather
        // window past the end).
        self.settle_all(clock.now());
        if let Some(mut io) = self.io.take() {
            // The last pass's writes.
            io.submit(clock, &mut self.stats);
        }
        if !stop.load(Ordering::Relaxed) {
            // The run's last samples, at its end.
            self.sample_due(NEVER, tuns, clock);
        }
        self.write_capture();
        if let Some(cap) = self.capture.as_mut() {
            cap.flush();
        }
        self.stats.cpu_ns = sys::thread_cpu_ns() - cpu0;
        self.stats.run_delay_ns = sys::thread_run_delay_ns().saturating_sub(delay0);
        self.stats.ring_drops = tuns.iter().map(|d| d.drops()).sum();
        Ok(())
    }

    /// The devices marked `ready` read through io_uring, in one submission with the writes
    /// queued since the last: up to `io_want[h]` packets each, straight into slots, accepted
    /// at `t` in the order read. Returns whether a device gave all that was asked (it may
    /// hold more: the loop reads again before it waits).
    fn read_uring(&mut self, t: Time, ready: &mut [bool], clock: &Clock) -> bool {
        let Some(mut io) = self.io.take() else { return false };
        io.clear_reads();
        // Every slot first: the slots' storage may grow (and move) while they are taken.
        let mut slots = std::mem::take(&mut self.io_scratch);
        slots.clear();
        for (h, &r) in ready.iter().enumerate() {
            let n = if r { self.io_want[h] } else { 0 };
            for _ in 0..n {
                let i = self.alloc();
                slots.push(i as usize);
            }
        }
        let mut k = 0;
        for (h, &r) in ready.iter().enumerate() {
            let n = if r { self.io_want[h] } else { 0 };
            for _ in 0..n {
                let i = slots[k] as u32;
                k += 1;
                let at = i as usize * MAX_PKT;
                let buf = &mut self.bytes[at..at + MAX_PKT];
                // SAFETY: no slot is taken or freed (nor the storage grown) until `submit`
                // has read every completion.
                unsafe { io.read(h as u16, i, buf, clock, &mut self.stats) };
            }
        }
        io.submit(clock, &mut self.stats);
        slots.clear();
        slots.resize(ready.len(), 0);
        for k in 0..io.reads.len() {
            let (i, h) = io.reads[k];
            let r = io.results[k];
            if r > 0 {
                self.lens[i as usize] = r as u16;
                self.accept(t, h as usize, i);
                slots[h as usize] += 1;
            } else {
                self.free.push(i);
            }
        }
        let mut more = false;
        for (h, r) in ready.iter_mut().enumerate() {
            if !*r || self.io_want[h] == 0 {
                continue;
            }
            let got = slots[h];
            *r = got == self.io_want[h];
            more |= *r;
            self.io_want[h] = (got * 2).clamp(URING_MIN_READS, BATCH);
        }
        self.io_scratch = slots;
        self.io = Some(io);
        more
    }

    /// Port `p`'s clock at a call meant for `t`: never behind its last call.
    #[inline]
    fn port_now(&mut self, p: usize, t: Time) -> Time {
        let t = t.max(self.port_time[p]);
        self.port_time[p] = t;
        t
    }

    /// The earliest port event: a FIFO head's arrival or a module tick.
    fn next_event(&self) -> Time {
        self.ports
            .iter()
            .map(|p| p.head_arrival().unwrap_or(NEVER).min(p.next_tick().unwrap_or(NEVER)))
            .min()
            .unwrap_or(NEVER)
    }

    /// Every port event due by `now`, in time order.
    fn run_due(&mut self, now: Time, tuns: &[&Device], clock: &Clock) {
        loop {
            let mut best = (NEVER, usize::MAX, false);
            for (p, port) in self.ports.iter().enumerate() {
                if let Some(t) = port.head_arrival() {
                    if t < best.0 {
                        best = (t, p, false);
                    }
                }
                if let Some(t) = port.next_tick() {
                    if t < best.0 {
                        best = (t, p, true);
                    }
                }
            }
            let (t, p, tick) = best;
            if t > now {
                return;
            }
            let t = self.port_now(p, t);
            if tick {
                self.ports[p].tick(t, &mut self.pkts);
            } else {
                self.head(p, t, tuns, clock);
            }
        }
    }

    /// Port `p`'s FIFO head reaches the far end of its link at `t`: the next port of its path,
    /// or its destination host (as the simulator's `port_head`).
    fn head(&mut self, p: usize, t: Time, tuns: &[&Device], clock: &Clock) {
        let slot = self.ports[p].pop_head(t, &mut self.pkts);
        if slot.lost {
            self.free.push(slot.pkt);
            return;
        }
        let pkt = &self.pkts[slot.pkt as usize];
        let f = pkt.flow as usize;
        let side = if pkt.dir == Direction::Forward { 0 } else { 1 };
        let (start, len) = self.flow_paths[f][side];
        let next = slot.hop + 1;
        if next < len {
            let np = self.route_ports[(start + next) as usize] as usize;
            self.offer(np, t, slot.pkt, next);
        } else {
            self.deliver(slot.pkt, 1 - side, t, tuns, clock);
        }
    }

    /// Offer slot `i` to port `p` as hop `hop` of its path at `t`.
    fn offer(&mut self, p: usize, t: Time, i: u32, hop: u32) {
        let t = self.port_now(p, t);
        if let Accept::Dropped = self.ports[p].enqueue(t, i, &mut self.pkts, hop, 0) {
            self.free.push(i);
        }
    }

    /// A packet read from host `h`'s device at `t`, in slot `i`.
    fn accept(&mut self, t: Time, h: usize, i: u32) {
        self.stats.rx_pkts += 1;
        let n = self.lens[i as usize] as usize;
        let at = i as usize * MAX_PKT;
        let fr = match frame::parse(&self.bytes[at..at + n]) {
            Ok(fr) => fr,
            Err(r) => {
                match r {
                    Reject::NotIpv4 => self.stats.not_ipv4 += 1,
                    Reject::NotUdp => self.stats.not_udp += 1,
                    Reject::NotRacc => self.stats.not_racc += 1,
                    Reject::BadVersion => self.stats.bad_version += 1,
                }
                self.free.push(i);
                return;
            }
        };
        // Issue 37 item 8: a packet not tied to this run never reaches a port.
        let payload = at + fr.ihl as usize + frame::UDP_LEN;
        let Some(counter) = self.key.open(&self.bytes[payload..at + n], fr.racc_len as usize) else {
            self.stats.forged += 1;
            self.free.push(i);
            return;
        };
        let f = fr.pkt.flow as usize;
        let side = if fr.pkt.dir == Direction::Forward { 0 } else { 1 };
        let ok = self.flow_hosts.get(f).is_some_and(|hosts| {
            hosts[side] == h && self.addrs[hosts[side]] == fr.src && self.addrs[hosts[1 - side]] == fr.dst
        });
        if !ok {
            self.stats.misrouted += 1;
            self.free.push(i);
            return;
        }
        if !self.windows[f][side].accept(counter) {
            self.stats.replayed += 1;
            self.free.push(i);
            return;
        }
        self.pkts[i as usize] = fr.pkt;
        self.frames[i as usize] = fr;
        let first = self.route_ports[self.flow_paths[f][side].0 as usize] as usize;
        let t = if self.stamp_sent {
            let at = sent_at(&fr.pkt, t, self.ran_to.saturating_sub(self.ports[first].delay));
            self.stats.stamped_sent += u64::from(at < t);
            self.stats.stamp_back_ns += t - at;
            at
        } else {
            t
        };
        self.offer(first, t, i, 0);
    }

    /// Write slot `i` to host `to`'s device: the modules' rewrites put back into its bytes.
    fn deliver(&mut self, i: u32, to: usize, due: Time, tuns: &[&Device], clock: &Clock) {
        let hosts = self.flow_hosts[self.pkts[i as usize].flow as usize];
        let n = self.lens[i as usize] as usize;
        let at = i as usize * MAX_PKT;
        let (fr, pkt) = (self.frames[i as usize], self.pkts[i as usize]);
        let buf = &mut self.bytes[at..at + n];
        if frame::write_back(buf, &fr, &pkt).is_err() {
            self.stats.write_back_errors += 1;
            self.free.push(i);
            return;
        }
        if pkt.transport != fr.pkt.transport || pkt.cong != fr.pkt.cong {
            // A module rewrote the racc headers: sealed again, with the sender's counter, so
            // the receiving host's check passes (ECN bits and IP ID are not under the tag).
            let payload = &mut buf[fr.ihl as usize + frame::UDP_LEN..];
            let racc_len = fr.racc_len as usize;
            let counter = u64::from_be_bytes(payload[racc_len..racc_len + 8].try_into().expect("8 bytes"));
            self.key.seal(payload, racc_len, counter);
        }
        if let Some(io) = self.io.as_mut() {
            // Written with the pass's next submission (which counts it delivered).
            io.write(tuns[hosts[to]].header(), buf, hosts[to] as u16, due, clock, &mut self.stats);
            self.free.push(i);
            return;
        }
        let t0 = clock.now();
        let sent = tuns[hosts[to]].send(buf);
        let t1 = clock.now();
        self.stats.write_ns += t1 - t0;
        if sent.is_err() {
            self.stats.write_errors += 1;
        } else {
            self.stats.delivered += 1;
            let late = t0.saturating_sub(due);
            self.stats.lateness_ns.push(late.min(u32::MAX as u64) as u32);
        }
        self.free.push(i);
    }
}

#[cfg(test)]
mod tests;

/// When a packet read at `read` entered its first port: the send time it carries (its
/// transport's `ts_val`, the sending host's reading of the run's clock when the endpoint sent
/// it, or the time its timer was due: `host::fire`), if that is no earlier than `floor`, else
/// `read`. The floor is the first port's delay before the time every event has run to: the
/// packet then reaches the port's far end no earlier than events already run, so no port
/// sees time go back. The host's wake-up, the kernel, the device and the router's own
/// wake-up (p50 22 µs, p99 85 µs between send and read on a loaded 2-core VM, docs/LIVE.md),
/// and a router held off its CPU for less than that delay, are then not part of the emulated
/// path, as they are not in the simulator. A time outside (none carried: a DCCP or DCTCP
/// ACK's 0) is not trusted.
fn sent_at(pkt: &Packet, read: Time, floor: Time) -> Time {
    let sent = match &pkt.transport {
        Transport::Tcp(h) => h.ts_val,
        Transport::Dccp(h) => h.ts_val,
    };
    if sent > 0 && sent <= read && sent >= floor {
        sent
    } else {
        read
    }
}

/// What an unused slot holds.
fn blank() -> Packet {
    Packet::tcp(0, Kind::Data, 0, 0, TcpHeader::default())
}
