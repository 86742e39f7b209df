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
