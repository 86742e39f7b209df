use super::*;
use racc_proto::packet::{Kind, TcpHeader};
use std::sync::Mutex as StdMutex;

/// One recorded call: its name, the view's queue packets and bytes, and `idle_since`.
type Call = (&'static str, u32, u64, Option<Time>);

/// A module that records the views it is called with and ticks every 10 ns.
struct Recorder {
    seen: Arc<StdMutex<Vec<Call>>>,
    next: Time,
}

impl RouterModule for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, port: &PortView) -> Verdict {
        self.seen.lock().unwrap().push(("arrival", port.queue_pkts, port.queue_bytes, port.idle_since));
        // Size 1 is refused by the module itself.
        if pkt.size == 1 {
            Verdict::Drop
        } else {
            Verdict::Forward
        }
    }
    fn on_buffer_drop(&mut self, _now: Time, _pkt: &Packet, port: &PortView) {
        self.seen.lock().unwrap().push(("drop", port.queue_pkts, port.queue_bytes, port.idle_since));
    }
    fn on_departure(&mut self, _now: Time, _pkt: &mut Packet, port: &PortView) -> bool {
        self.seen.lock().unwrap().push(("departure", port.queue_pkts, port.queue_bytes, port.idle_since));
        false
    }
    fn next_tick(&self) -> Option<Time> {
        Some(self.next)
    }
    fn on_tick(&mut self, now: Time, port: &PortView) {
        self.seen.lock().unwrap().push(("tick", port.queue_pkts, port.queue_bytes, port.idle_since));
        self.next = now + 10;
    }
}

fn view(pkts: u32, bytes: u64, idle_since: Option<Time>) -> PortView {
    PortView { queue_pkts: pkts, queue_bytes: bytes, idle_since, ..PortView::default() }
}

fn pkt(size: u32) -> Packet {
    Packet::tcp(0, Kind::Data, size, size, TcpHeader::default())
}

/// The module sees the medium's queue: every member's last reported queue, plus an arrival
/// the port then queued (it reports the queue before it), minus nothing for one the port's
/// buffer or the module refused.
#[test]
fn the_shared_module_sees_the_sum_of_the_members_queues() {
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let base = PortView { capacity_bps: 11e6, limit_pkts: 100, limit_bytes: u64::MAX, ..PortView::default() };
    let shared = SharedRouter::new(Box::new(Recorder { seen: seen.clone(), next: 10 }), 3, base);
    let (mut a, mut b, mut c) = (shared.member(0), shared.member(1), shared.member(2));
    assert_eq!(a.name(), "recorder");
    // a: 2 packets (2000 B) waiting, a 1000 B one arrives and is queued.
    a.on_arrival(1, &mut pkt(1000), &view(2, 2000, None));
    // b: empty and idle; it sees a's 3 packets.
    b.on_arrival(2, &mut pkt(500), &view(0, 0, Some(0)));
    // c: 1 packet; its arrival finds the buffer full.
    c.on_arrival(3, &mut pkt(700), &view(1, 100, None));
    c.on_buffer_drop(3, &pkt(700), &view(1, 100, None));
    // b's packet wins the channel: b's queue is empty again.
    b.on_departure(4, &mut pkt(500), &view(0, 0, None));
    // a packet the module itself drops is not added.
    c.on_arrival(5, &mut pkt(1), &view(1, 100, None));
    a.on_departure(6, &mut pkt(1000), &view(2, 2000, None));
    let s = seen.lock().unwrap().clone();
    assert_eq!(
        s,
        vec![
            ("arrival", 2, 2000, None),
            ("arrival", 3, 3000, None), // a's 3, b's 0
            ("arrival", 5, 3600, None), // a 3, b 1 (its 500 B queued), c 1 of 100 B
            ("drop", 5, 3600, None),    // c's refused packet is not added
            ("departure", 4, 3100, None),
            ("arrival", 4, 3100, None),
            ("departure", 3, 2100, None),
        ]
    );
}

/// Idle only when every member's link is, since the latest of their idle times.
#[test]
fn the_medium_is_idle_only_when_every_member_is() {
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let shared = SharedRouter::new(Box::new(Recorder { seen: seen.clone(), next: 10 }), 2, PortView::default());
    let (mut a, mut b) = (shared.member(0), shared.member(1));
    a.on_departure(1, &mut pkt(10), &view(0, 0, Some(7)));
    b.on_departure(2, &mut pkt(10), &view(0, 0, Some(9)));
    b.on_departure(3, &mut pkt(10), &view(0, 0, None));
    let idle: Vec<_> = seen.lock().unwrap().iter().map(|s| s.3).collect();
    assert_eq!(idle, vec![Some(7), Some(9), None]);
}

/// One control interval is one tick of the module, whichever member's tick event comes first;
/// every member then asks for the module's next tick.
#[test]
fn one_interval_ticks_the_module_once() {
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let shared = SharedRouter::new(Box::new(Recorder { seen: seen.clone(), next: 10 }), 2, PortView::default());
    let (mut a, mut b) = (shared.member(0), shared.member(1));
    assert_eq!((a.next_tick(), b.next_tick()), (Some(10), Some(10)));
    b.on_tick(10, &view(0, 0, Some(0)));
    a.on_tick(10, &view(0, 0, Some(0)));
    assert_eq!((a.next_tick(), b.next_tick()), (Some(20), Some(20)));
    a.on_tick(20, &view(0, 0, Some(0)));
    assert_eq!(seen.lock().unwrap().iter().filter(|s| s.0 == "tick").count(), 2);
}

/// A module that lowers a packet's size field to its cap (a stand-in for a rate stamp: the
/// lower of two caps survives), counts its calls and reports one metric.
struct Cap {
    cap: u32,
    calls: Arc<StdMutex<Vec<(&'static str, u32)>>>,
    next: Time,
}

impl RouterModule for Cap {
    fn name(&self) -> &'static str {
        "cap"
    }
    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, port: &PortView) -> Verdict {
        self.calls.lock().unwrap().push(("arrival", port.queue_pkts));
        pkt.size = pkt.size.min(self.cap);
        Verdict::Forward
    }
    fn on_buffer_drop(&mut self, _now: Time, _pkt: &Packet, port: &PortView) {
        self.calls.lock().unwrap().push(("drop", port.queue_pkts));
    }
    fn on_departure(&mut self, _now: Time, _pkt: &mut Packet, port: &PortView) -> bool {
        self.calls.lock().unwrap().push(("departure", port.queue_pkts));
        false
    }
    fn next_tick(&self) -> Option<Time> {
        Some(self.next)
    }
    fn on_tick(&mut self, now: Time, port: &PortView) {
        self.calls.lock().unwrap().push(("tick", port.queue_pkts));
        self.next = now + self.cap as Time;
    }
    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("cap", "bytes", MetricValue::Count(self.cap as u64));
    }
}

/// `router_scope = "both"`: a packet passes the member's own module (with the port's own view)
/// and then the medium's (with the medium's view), so the lower cap survives whichever module
/// holds it; drops and departures reach both; each module ticks on its own schedule; the row
/// reports the member's module under its names and the medium's with a `medium_` prefix.
#[test]
fn a_member_s_own_module_sits_in_front_of_the_medium_s() {
    let own_calls = Arc::new(StdMutex::new(Vec::new()));
    let med_calls = Arc::new(StdMutex::new(Vec::new()));
    let shared =
        SharedRouter::new(Box::new(Cap { cap: 700, calls: med_calls.clone(), next: 30 }), 2, PortView::default());
    let own = |cap, next| Box::new(Cap { cap, calls: own_calls.clone(), next });
    let mut a = shared.member_with(0, own(500, 20));
    let mut b = shared.member(1);
    assert_eq!(a.name(), "cap");
    let mut p = pkt(1000);
    a.on_arrival(1, &mut p, &view(3, 3000, None));
    assert_eq!(p.size, 500, "the member's cap is the lower");
    let mut p = pkt(1000);
    b.on_arrival(2, &mut p, &view(0, 0, Some(0)));
    assert_eq!(p.size, 700, "a member without its own module has the medium's only");
    // a's next arrival finds its buffer full.
    a.on_arrival(3, &mut pkt(1000), &view(4, 4000, None));
    a.on_buffer_drop(3, &pkt(1000), &view(4, 4000, None));
    a.on_departure(4, &mut pkt(1000), &view(3, 3000, None));
    // The member's own module sees its port's queue, the medium's the members' summed.
    assert_eq!(*own_calls.lock().unwrap(), vec![("arrival", 3), ("arrival", 4), ("drop", 4), ("departure", 3)]);
    assert_eq!(
        *med_calls.lock().unwrap(),
        vec![("arrival", 3), ("arrival", 4), ("arrival", 5), ("drop", 5), ("departure", 4)],
        "a 3; a 4 (its arrival queued) + b 0; a 4 + b 1; the refused one not added; a 3 + b 1"
    );
    // Ticks: the earlier of the two, each module only when its own is due.
    assert_eq!((a.next_tick(), b.next_tick()), (Some(20), Some(30)));
    a.on_tick(20, &view(2, 2000, None));
    assert_eq!(a.next_tick(), Some(30), "own ticked (next 520), the medium's at 30 is next");
    a.on_tick(30, &view(2, 2000, None));
    let ticks =
        |c: &Arc<StdMutex<Vec<(&'static str, u32)>>>| c.lock().unwrap().iter().filter(|x| x.0 == "tick").count();
    assert_eq!((ticks(&own_calls), ticks(&med_calls)), (1, 1));
    let mut m = racc_proto::metrics::MetricList::default();
    a.metrics(&mut m);
    let names: Vec<_> = m.0.iter().map(|x| x.0).collect();
    assert_eq!(names, vec!["cap", "medium_cap"]);
    let mut m = racc_proto::metrics::MetricList::default();
    b.metrics(&mut m);
    assert_eq!(m.0.iter().map(|x| x.0).collect::<Vec<_>>(), vec!["cap"], "the medium's module alone: its own names");
}
