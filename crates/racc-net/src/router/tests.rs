//! The router's port clocks, without devices (no root needed).

use super::*;

const MS: Time = 1_000_000;

/// One pair through a 1 Mb/s bottleneck (8 ms per 1000-byte packet), 1 s long, sampled every
/// 100 ms.
fn spec() -> Spec {
    racc_sim::scenario::from_toml(
        r#"
name = "clock"
duration = "1s"
packet_size = 1000
[record]
interval = "100ms"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { capacity = "1Mbps", delay = "10ms", buffer = "50pkts" }
access = { capacity = "100Mbps", delay = "1ms" }
[[flows]]
protocol = "newreno"
src = "s{i}"
dst = "d{i}"
"#,
        "<test>",
    )
    .expect("valid scenario")
}

/// Issue 37 item 9: a run's loop ends a little past the scenario's end (a wake-up lands up to
/// the gather window late); the end-of-run settle then runs every port to that time, and the
/// last sample, at the scenario's end, must not take a port back. Before the fix the
/// bottleneck's queue integral wrapped: a mean queue of about 3·2^64 ns / 1 s with 4 queued.
#[test]
fn the_last_sample_after_the_end_of_run_settle_keeps_the_queue_integral() {
    let spec = spec();
    let mut r = Router::new(&spec, vec![[0, 1]], vec![[10, 99, 0, 1], [10, 99, 0, 2]]).unwrap();
    let p = r.ports.iter().position(|p| p.name == "r0->r1").expect("the bottleneck");
    assert!(spec.record_ports.contains(&p));
    // Five packets offered to the port 1 ms before the end: one on the wire, four queued,
    // none reaching the far end before the run is over.
    let t0 = spec.duration - MS;
    for _ in 0..5 {
        let i = r.alloc();
        r.pkts[i as usize] = Packet::tcp(0, Kind::Data, 1000, 960, TcpHeader::default());
        r.offer(p, t0, i, 0);
    }
    assert_eq!(r.ports[p].queue().0, 4);
    let clock = Clock::start();
    r.settle_all(spec.duration + 50_000);
    r.sample_due(NEVER, &[], &clock);
    let c = &r.ports[p].c;
    let mean = c.queue_pkt_ns as f64 / spec.duration as f64;
    println!("mean queue {mean} packets, max {}", c.max_queue_pkts);
    assert!(mean <= c.max_queue_pkts as f64, "mean queue {mean} above the maximum {}", c.max_queue_pkts);
}

/// The port's own guard: a clock that goes back is a bug (a debug build stops there); a
/// release build adds nothing for the negative interval instead of wrapping.
#[test]
#[cfg_attr(debug_assertions, should_panic(expected = "port time went back"))]
fn a_port_fed_a_backwards_clock_does_not_wrap_its_queue_integral() {
    let spec = spec();
    let mut r = Router::new(&spec, vec![[0, 1]], vec![[10, 99, 0, 1], [10, 99, 0, 2]]).unwrap();
    let p = r.ports.iter().position(|p| p.name == "r0->r1").expect("the bottleneck");
    for _ in 0..5 {
        let i = r.alloc();
        r.pkts[i as usize] = Packet::tcp(0, Kind::Data, 1000, 960, TcpHeader::default());
        r.ports[p].enqueue(MS, i, &mut r.pkts, 0, 0);
    }
    r.ports[p].settle(2 * MS, &mut r.pkts);
    r.ports[p].settle(MS + MS / 2, &mut r.pkts);
    r.ports[p].settle(3 * MS, &mut r.pkts);
    // 4 packets queued from 1 ms to 3 ms (none departs: 8 ms each).
    assert_eq!(r.ports[p].c.queue_pkt_ns, 4 * 2 * MS as u128);
}

/// Due-time sends: a packet enters its first port at the send time it carries, if that is no
/// earlier than the floor (the port's delay before the time events have run to); otherwise
/// (none carried, too old, or ahead of the read) at the read.
#[test]
fn a_packet_is_stamped_at_its_carried_send_time_within_the_first_ports_delay() {
    let with = |ts_val| Packet::tcp(0, Kind::Data, 1000, 0, TcpHeader { ts_val, ..Default::default() });
    let read = 50 * MS;
    let floor = read - MS;
    assert_eq!(sent_at(&with(read - 180_000), read, floor), read - 180_000);
    assert_eq!(sent_at(&with(read - MS), read, floor), read - MS);
    assert_eq!(sent_at(&with(read - MS - 1), read, floor), read);
    assert_eq!(sent_at(&with(0), read, floor), read);
    assert_eq!(sent_at(&with(read + 1), read, floor), read);
    // A router held off its CPU: events ran only to 20 ms, so a packet sent at 30 ms is
    // taken at its time though read 20 ms later.
    assert_eq!(sent_at(&with(30 * MS), read, 20 * MS - MS), 30 * MS);
    let dccp = Packet::dccp(
        0,
        Kind::Data,
        1000,
        0,
        racc_proto::packet::DccpHeader { ts_val: read - 7_000, ..Default::default() },
    );
    assert_eq!(sent_at(&dccp, read, floor), read - 7_000);
}
