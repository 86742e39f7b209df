//! A shared half-duplex medium: one channel that an access point and its stations take turns
//! on, by a simplified IEEE 802.11 DCF (802.11-2016 §10.3.2-§10.3.4). A point-to-point link
//! knows each packet's departure the moment it is queued (`port.rs`); here a departure is
//! decided by contention between the members' queues, so the medium is driven by its own event:
//! the time at which the next contention round resolves.
//!
//! The model, per frame:
//! - each member with a waiting packet (its port's FIFO head: one FIFO per member, so the access
//!   point contends as one station however many stations it sends to) counts down a backoff of
//!   `b` slots, `b` drawn uniformly from [0, CW] from the member's own [`SimRng`] stream;
//! - the countdown starts DIFS after the channel falls idle (slot 0 begins at `origin`); a
//!   member that gets a packet while the channel is idle starts at the first slot boundary at
//!   least DIFS later;
//! - the member whose countdown ends first transmits: PHY header + (packet + MAC overhead) at
//!   the PHY rate, then SIFS + ACK. The channel is busy for all of it, so one frame's airtime
//!   is DIFS + b·slot + PHY header + bits/rate + SIFS + ACK. The packet reaches the far end at
//!   the end of its bits plus the medium's delay;
//! - members whose countdowns end in the same slot collide: the channel is busy for the PHY
//!   header + the longest of their frames + SIFS + ACK (the ACK timeout), each doubles its CW
//!   (up to CWmax) and draws again; a frame whose `retry_limit`-th attempt collides is dropped
//!   (counted as lost on the wire) and its member's CW goes back to CWmin;
//! - the others freeze their counters and resume them DIFS after the channel is idle again
//!   (so a long wait is credited, which is what gives long-run equal transmission
//!   opportunities); a member that transmitted draws a new backoff from CWmin for its next one;
//! - a frame that gets through may still be lost by its member's loss process (the loss the
//!   transport sees after the MAC's retries); it costs its airtime all the same.
//!
//! Not modelled: hidden and exposed terminals (every member hears every other), RTS/CTS,
//! capture, rate adaptation, EIFS after a corrupted frame, fragmentation, beacons and
//! management frames, power save, the MAC's retries after a loss (the loss process is the
//! residual loss), and the head-of-line order across destinations beyond one FIFO per member.

use crate::plan::PortPlan;
use crate::port::{Packets, Port, PortRole};
use crate::scenario::{DcfSpec, PortMap, RouterScope, ScenarioError, Spec};
use crate::shared_router::SharedRouter;
use racc_proto::metrics::{MetricSink, MetricValue};
use racc_proto::registry::PortIdentity;
use racc_proto::rng::SimRng;
use racc_proto::router::PortView;
use racc_proto::time::{Time, NEVER, NS_PER_SEC};

/// Whole-run counts of a medium.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MediumCounters {
    /// Frames that won the channel alone (delivered, or lost by the loss process).
    pub transmissions: u64,
    /// Contention rounds that ended in a collision.
    pub collisions: u64,
    /// Frames dropped after `retry_limit` collided attempts.
    pub retry_drops: u64,
    /// Time the channel was busy (transmissions and collisions with their SIFS + ACK), ns.
    pub busy_ns: u64,
}

/// One member's contention state.
#[derive(Debug)]
pub struct Member {
    /// Its port onto the medium (the engine's port number).
    pub port: u32,
    cw: u32,
    /// Attempts of the head frame that collided so far.
    attempts: u32,
    contending: bool,
    /// First slot (from `origin`) of its countdown, and the slots left to count from there.
    start: u64,
    backoff: u64,
    rng: SimRng,
    /// Transmission opportunities won (frames sent alone).
    pub frames: u64,
    /// Attempts that collided.
    pub collisions: u64,
    /// Frames dropped after `retry_limit` collided attempts.
    pub retry_drops: u64,
    /// Channel time of the frames it sent alone (PHY header, bits, SIFS, ACK), ns.
    pub airtime_ns: u64,
}

pub struct Medium {
    pub name: String,
    dcf: DcfSpec,
    /// Nanoseconds per byte at the PHY rate.
    ns_per_byte: f64,
    delay: Time,
    pub members: Vec<Member>,
    /// The channel is busy until then (the end of the last frame's ACK or ACK timeout).
    busy_until: Time,
    /// `busy_until` + DIFS: where slot 0 of the countdowns begins.
    origin: Time,
    /// The decision time of the event the medium has in the engine's queue (`NEVER`: none).
    scheduled: Time,
    pub c: MediumCounters,
    /// Ports whose FIFO gained a head in the last decision, with its arrival time: the engine
    /// schedules their delivery.
    pub started: Vec<(u32, Time)>,
    /// Members whose countdowns end in the slot being decided (reused).
    winners: Vec<usize>,
}

impl Medium {
    /// The media of a scenario and their members' ports (numbered after the links' ports, as
    /// `PortMap` says). `rtt_sum`/`rtt_n`: per port, the flows' round-trip propagation delays
    /// (for BDP buffers). An error names the scenario key.
    pub fn build(spec: &Spec, rtt_sum: &[f64], rtt_n: &[u64]) -> Result<(Vec<Medium>, Vec<Port>), ScenarioError> {
        let pm: PortMap = spec.port_map();
        let mut media = Vec::new();
        let mut ports = Vec::new();
        for (mi, m) in spec.media.iter().enumerate() {
            let base = pm.medium_base(mi);
            let key = format!("topology.media[{mi}]");
            let mut members = Vec::new();
            let mut member_ports = Vec::new();
            for (j, &node) in m.members.iter().enumerate() {
                let p = base + j;
                let name = pm.name(p);
                let plan = PortPlan {
                    key: &key,
                    node,
                    capacity_bps: m.capacity_bps,
                    delay: m.delay,
                    buffer: m.buffer,
                    router_factory: m.router_factory.as_ref(),
                    loss: &m.loss[j],
                };
                let mut port = plan.build(spec, p, name, rtt_sum, rtt_n)?;
                port.set_role(PortRole::Medium { medium: mi as u16, member: j as u16 });
                member_ports.push(port);
                members.push(Member {
                    port: p as u32,
                    cw: m.dcf.cw_min,
                    attempts: 0,
                    contending: false,
                    start: 0,
                    backoff: 0,
                    rng: SimRng::for_component(spec.seed, &format!("backoff/port{p}")),
                    frames: 0,
                    collisions: 0,
                    retry_drops: 0,
                    airtime_ns: 0,
                });
            }
            if m.router_scope != RouterScope::Member {
                share_router(spec, mi, &mut member_ports);
            }
            ports.extend(member_ports);
            media.push(Medium::new(m.name.clone(), m.dcf, m.phy_rate_bps, m.delay, members));
        }
        Ok((media, ports))
    }

    fn new(name: String, dcf: DcfSpec, phy_rate_bps: f64, delay: Time, members: Vec<Member>) -> Medium {
        Medium {
            name,
            dcf,
            ns_per_byte: 8.0 * NS_PER_SEC as f64 / phy_rate_bps,
            delay,
            members,
            busy_until: 0,
            origin: dcf.difs,
            scheduled: NEVER,
            c: MediumCounters::default(),
            started: Vec::new(),
            winners: Vec::new(),
        }
    }

    /// Airtime of a packet's bits with the MAC overhead at the PHY rate, rounded up to 1 ns.
    pub fn data_ns(&self, size: u32) -> Time {
        ((size + self.dcf.mac_overhead) as f64 * self.ns_per_byte).ceil() as Time
    }

    /// The first slot a member that starts contending at `now` can count: its DIFS must have
    /// passed, on the channel's slot grid.
    fn slot_at(&self, now: Time) -> u64 {
        let ready = now + self.dcf.difs;
        if ready <= self.origin {
            0
        } else {
            (ready - self.origin).div_ceil(self.dcf.slot)
        }
    }

    /// The slot in which the earliest countdown ends.
    fn next_slot(&self) -> Option<u64> {
        self.members.iter().filter(|m| m.contending).map(|m| m.start + m.backoff).min()
    }

    fn next_decision(&self) -> Time {
        self.next_slot().map_or(NEVER, |w| self.origin + w * self.dcf.slot)
    }

    /// Member `member` has a packet waiting at `now`. If it was not contending, it draws a
    /// backoff and starts counting; returns the medium's next decision time if that moved
    /// earlier than the event it already has (the engine must schedule it).
    pub fn join(&mut self, now: Time, member: usize) -> Option<Time> {
        if self.members[member].contending {
            return None; // its head packet is already counting down
        }
        let start = self.slot_at(now);
        let m = &mut self.members[member];
        m.contending = true;
        m.backoff = m.rng.below(m.cw as u64 + 1);
        m.start = start;
        let next = self.next_decision();
        (next < self.scheduled).then(|| {
            self.scheduled = next;
            next
        })
    }

    /// The medium's event at `now`: the countdowns ending now win the channel (one: it
    /// transmits; several: they collide). Returns the next decision time, if any, to schedule;
    /// `started` lists the ports whose delivery the engine must schedule.
    pub fn decide(&mut self, now: Time, ports: &mut [Port], pkts: &mut Packets) -> Option<Time> {
        if now != self.scheduled {
            return None; // superseded by an earlier decision
        }
        let w = self.next_slot().expect("a scheduled decision has contenders");
        debug_assert_eq!(self.origin + w * self.dcf.slot, now);
        let mut winners = std::mem::take(&mut self.winners);
        winners.clear();
        for (i, m) in self.members.iter_mut().enumerate() {
            if !m.contending {
                continue;
            }
            if m.start + m.backoff == w {
                winners.push(i);
            } else {
                // Frozen: resume with what is left once the channel is idle again.
                m.backoff -= w.saturating_sub(m.start);
                m.start = 0;
            }
        }
        let d = self.dcf;
        let end = if let [i] = winners[..] {
            let p = self.members[i].port as usize;
            let size = ports[p].waiting_head(pkts).expect("a contending member has a packet");
            let data_end = now + d.phy_header + self.data_ns(size);
            let lost = ports[p].lose();
            self.start(p, now, data_end, lost, ports, pkts);
            let m = &mut self.members[i];
            m.frames += 1;
            m.airtime_ns += data_end + d.sifs + d.ack - now;
            m.attempts = 0;
            m.cw = d.cw_min;
            self.c.transmissions += 1;
            data_end + d.sifs + d.ack
        } else {
            self.c.collisions += 1;
            let mut longest = 0;
            for &i in &winners {
                let p = self.members[i].port as usize;
                let size = ports[p].waiting_head(pkts).expect("a contending member has a packet");
                let data = self.data_ns(size);
                longest = longest.max(data);
                let m = &mut self.members[i];
                m.collisions += 1;
                m.attempts += 1;
                if m.attempts >= d.retry_limit {
                    m.attempts = 0;
                    m.cw = d.cw_min;
                    m.retry_drops += 1;
                    self.c.retry_drops += 1;
                    self.start(p, now, now + d.phy_header + data, true, ports, pkts);
                } else {
                    m.cw = (2 * m.cw + 1).min(d.cw_max);
                }
            }
            now + d.phy_header + longest + d.sifs + d.ack
        };
        for &i in &winners {
            let p = self.members[i].port as usize;
            let m = &mut self.members[i];
            m.contending = ports[p].waiting_head(pkts).is_some();
            if m.contending {
                m.backoff = m.rng.below(m.cw as u64 + 1);
                m.start = 0;
            }
        }
        self.winners = winners;
        self.c.busy_ns += end - now;
        self.busy_until = end;
        self.origin = end + d.difs;
        let next = self.next_decision();
        self.scheduled = next;
        (next != NEVER).then_some(next)
    }

    /// Port `p`'s head packet goes on the air at `now`, its bits until `data_end`.
    fn start(&mut self, p: usize, now: Time, data_end: Time, lost: bool, ports: &mut [Port], pkts: &mut Packets) {
        let arrive = data_end + self.delay;
        if ports[p].start_contended(now, data_end, arrive, lost, pkts) {
            self.started.push((p as u32, arrive));
        }
    }

    /// Member `member`'s counters and its medium's, so far in the run, as named metrics of the
    /// member's port (sampled into the links table with the port's row; the channel's figures
    /// repeat on every member's row of the medium). Whole-run counts, as router modules' counts
    /// are: the difference of two rows is the interval's.
    pub fn metrics(&self, member: usize, out: &mut dyn MetricSink) {
        let m = &self.members[member];
        out.put("medium_frames", "frames", MetricValue::Count(m.frames));
        out.put("medium_collisions", "attempts", MetricValue::Count(m.collisions));
        out.put("medium_retry_drops", "frames", MetricValue::Count(m.retry_drops));
        out.put("medium_airtime_s", "s", MetricValue::Gauge(m.airtime_ns as f64 * 1e-9));
        out.put("medium_channel_collisions", "rounds", MetricValue::Count(self.c.collisions));
        out.put("medium_channel_busy_s", "s", MetricValue::Gauge(self.c.busy_ns as f64 * 1e-9));
    }

    /// When the channel is next idle (the end of the last frame's ACK or ACK timeout).
    pub fn busy_until(&self) -> Time {
        self.busy_until
    }
}

/// `router_scope = "medium"`: one module of the medium's router for all of medium `mi`'s
/// member ports (built from the medium's identity and its own stream `router/medium{mi}`), each
/// port holding a handle on it in place of its own module; `"both"`: the handle sits behind the
/// port's own module.
fn share_router(spec: &Spec, mi: usize, ports: &mut [Port]) {
    let m = &spec.media[mi];
    let limit_pkts = ports.iter().fold(0u32, |s, p| s.saturating_add(p.limit_pkts));
    let limit_bytes = ports.iter().fold(0u64, |s, p| s.saturating_add(p.limit_bytes));
    let identity = PortIdentity {
        node: &spec.nodes[m.members[0]].name,
        port: spec.port_map().medium_base(mi) as u32,
        name: &m.name,
        capacity_bps: m.capacity_bps,
        delay: m.delay,
        limit_pkts,
        limit_bytes,
        mean_pkt_size: spec.packet_size,
    };
    let module = m.router_factory.build(&identity, SimRng::for_component(spec.seed, &format!("router/medium{mi}")));
    let base = PortView {
        queue_pkts: 0,
        queue_bytes: 0,
        capacity_bps: m.capacity_bps,
        delay: m.delay,
        limit_pkts,
        limit_bytes,
        idle_since: Some(0),
        mean_pkt_size: spec.packet_size,
    };
    let shared = SharedRouter::new(module, ports.len(), base);
    for (j, p) in ports.iter_mut().enumerate() {
        let own = p.replace_module(Box::new(shared.member(j)));
        if m.router_scope == RouterScope::Both {
            p.replace_module(Box::new(shared.member_with(j, own)));
        }
    }
}

#[cfg(test)]
#[path = "medium_tests.rs"]
mod tests;
