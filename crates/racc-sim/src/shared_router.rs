//! One router module for a whole shared medium (`router_scope = "medium"`): every member's port
//! hands its packets to the same module, which therefore sees all packets in both directions on
//! the channel (QFCP §III.B: the controller "takes control of all packets in both directions on
//! simplex wireless links"), where a module per member sees only its own queue.
//!
//! Each member's port holds a [`MemberRouter`], a handle on the shared module. The module is
//! called with the medium's view rather than the member's: the queue is the sum of every
//! member's queue (the medium's interface queues together), the buffer limit the sum of their
//! limits, the capacity the medium's. The sum is kept exact without asking the ports: on a
//! medium port every queue change passes through the module (an arrival the port then queues,
//! a departure when the packet wins the channel), so the handle records each member's queue
//! as the port reports it and adds the arriving packet once the port has accepted it.
//!
//! Ticks: every member's port asks for the module's next tick, so one control interval is one
//! tick event per member; the first to arrive runs it, the rest find it done.
//!
//! `router_scope = "both"`: each member's port also keeps its own module, which sees that
//! member's queue and output only (an interface queue's controller, as on ns-2's wireless
//! nodes), and a packet passes its member's module, then the medium's. A rate-stamping
//! protocol's sender then gets the lower of the two (QFCP §II: the request ends as the minimum
//! along the path), so the access point's own controller holds the downloads to what its one
//! station's share of the channel carries while the medium's holds every flow to the medium's
//! fair share. The port's row reports its own module's metrics under their names and the
//! medium's module's with a `medium_` prefix.
//!
//! Only the simulator builds media, one thread per run: the lock is never contended and costs
//! an uncontended atomic pair per call, on medium ports only.

use racc_proto::metrics::{MetricSink, MetricValue};
use racc_proto::packet::Packet;
use racc_proto::router::{PortView, RouterModule, Verdict};
use racc_proto::time::Time;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// A member's last reported queue and whether its link was idle then.
#[derive(Clone, Copy, Debug, Default)]
struct MemberQueue {
    pkts: u32,
    bytes: u64,
    idle_since: Option<Time>,
}

struct Shared {
    module: Box<dyn RouterModule>,
    members: Vec<MemberQueue>,
    /// The medium's view, but for the queue figures and `idle_since` (set per call).
    base: PortView,
    /// The member whose arrival is pending the port's buffer check, and the packet's size.
    pending: Option<(usize, u32)>,
}

impl Shared {
    /// The medium as the module sees it, after member `j` reported `port`.
    fn view(&mut self, j: usize, port: &PortView) -> PortView {
        if let Some((p, size)) = self.pending.take() {
            // The port queued the arrival (it would have called `on_buffer_drop` otherwise).
            let m = &mut self.members[p];
            m.pkts += 1;
            m.bytes += size as u64;
            m.idle_since = None;
        }
        self.members[j] = MemberQueue { pkts: port.queue_pkts, bytes: port.queue_bytes, idle_since: port.idle_since };
        let mut v = self.base;
        v.queue_pkts = self.members.iter().map(|m| m.pkts).sum();
        v.queue_bytes = self.members.iter().map(|m| m.bytes).sum();
        // Idle only if every member's link is: since the latest of their idle times.
        v.idle_since = self.members.iter().try_fold(0, |t: Time, m| m.idle_since.map(|s| t.max(s)));
        v
    }
}

/// The shared module of one medium; [`SharedRouter::member`] makes each member's handle.
#[derive(Clone)]
pub struct SharedRouter(Arc<Mutex<Shared>>);

impl SharedRouter {
    /// `module` for a medium of `members` members; `base` is the medium's view (its capacity,
    /// delay, packet size, and its members' buffer limits summed), queue figures aside.
    pub fn new(module: Box<dyn RouterModule>, members: usize, base: PortView) -> SharedRouter {
        let members = vec![MemberQueue { idle_since: Some(0), ..MemberQueue::default() }; members];
        SharedRouter(Arc::new(Mutex::new(Shared { module, members, base, pending: None })))
    }

    /// Member `j`'s handle, for its port.
    pub fn member(&self, j: usize) -> MemberRouter {
        MemberRouter { shared: self.clone(), j, name: self.lock().module.name(), own: None }
    }

    /// Member `j`'s handle in front of the port's own module `own` (`router_scope = "both"`).
    pub fn member_with(&self, j: usize, own: Box<dyn RouterModule>) -> MemberRouter {
        MemberRouter { own: Some(own), ..self.member(j) }
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // A panic while holding the lock ends the run anyway: its state is not read after.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A member port's handle on its medium's shared module, behind the port's own module if any.
pub struct MemberRouter {
    shared: SharedRouter,
    j: usize,
    name: &'static str,
    /// The port's own module (`router_scope = "both"`), called with the port's own view.
    own: Option<Box<dyn RouterModule>>,
}

/// `medium_<name>`: the name a medium's module reports a metric under beside a member's own
/// module. Made once per distinct name for the process (a handful: the modules' metric names).
fn medium_name(name: &'static str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashMap<&'static str, &'static str>>> = OnceLock::new();
    let mut m = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    m.entry(name).or_insert_with(|| Box::leak(format!("medium_{name}").into_boxed_str()))
}

/// A sink that puts a medium's module's metrics under [`medium_name`].
struct MediumNames<'a>(&'a mut dyn MetricSink);

impl MetricSink for MediumNames<'_> {
    fn put(&mut self, name: &'static str, unit: &'static str, value: MetricValue) {
        self.0.put(medium_name(name), unit, value);
    }
}

impl RouterModule for MemberRouter {
    fn name(&self) -> &'static str {
        self.name
    }

    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, port: &PortView) -> Verdict {
        let mine = match &mut self.own {
            Some(own) => own.on_arrival(now, pkt, port),
            None => Verdict::Forward,
        };
        if mine == Verdict::Drop {
            return mine; // the medium's module never sees it, as a packet dropped upstream
        }
        let mut s = self.shared.lock();
        let v = s.view(self.j, port);
        let verdict = s.module.on_arrival(now, pkt, &v);
        if verdict != Verdict::Drop {
            s.pending = Some((self.j, pkt.size));
        }
        if verdict == Verdict::Forward {
            mine
        } else {
            verdict
        }
    }

    fn on_buffer_drop(&mut self, now: Time, pkt: &Packet, port: &PortView) {
        if let Some(own) = &mut self.own {
            own.on_buffer_drop(now, pkt, port);
        }
        let mut s = self.shared.lock();
        s.pending = None;
        let v = s.view(self.j, port);
        s.module.on_buffer_drop(now, pkt, &v);
    }

    fn on_departure(&mut self, now: Time, pkt: &mut Packet, port: &PortView) -> bool {
        let mine = match &mut self.own {
            Some(own) => own.on_departure(now, pkt, port),
            None => false,
        };
        let mut s = self.shared.lock();
        let v = s.view(self.j, port);
        s.module.on_departure(now, pkt, &v) | mine
    }

    fn next_tick(&self) -> Option<Time> {
        let medium = self.shared.lock().module.next_tick();
        match self.own.as_ref().and_then(|o| o.next_tick()) {
            Some(t) => Some(medium.map_or(t, |m| m.min(t))),
            None => medium,
        }
    }

    fn on_tick(&mut self, now: Time, port: &PortView) {
        if let Some(own) = &mut self.own {
            if own.next_tick().is_some_and(|t| now >= t) {
                own.on_tick(now, port);
            }
        }
        let mut s = self.shared.lock();
        // Another member's tick event may have run this interval already.
        if s.module.next_tick().is_some_and(|t| now >= t) {
            let v = s.view(self.j, port);
            s.module.on_tick(now, &v);
        }
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        match &self.own {
            Some(own) => {
                own.metrics(out);
                self.shared.lock().module.metrics(&mut MediumNames(out));
            }
            None => self.shared.lock().module.metrics(out),
        }
    }
}

#[cfg(test)]
#[path = "shared_router_tests.rs"]
mod tests;
