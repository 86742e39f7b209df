//! CoDel's arithmetic against values worked by hand from RFC 8289 §5.5–§5.6.

use super::*;
use crate::packet::{ecn, Kind, Packet, TcpHeader};
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::NS_PER_MS;

const MS: u64 = NS_PER_MS;
/// A queue well above MAXPACKET behind the head.
const BEHIND: u64 = 15_000;

fn law() -> CodelLaw {
    let p = CodelParams::default();
    CodelLaw::new(p.target_ns(), p.interval_ns(), 1500)
}

#[test]
fn the_rfcs_constants_are_the_defaults() {
    let p = CodelParams::default();
    assert_eq!((p.target_ns(), p.interval_ns()), (5 * MS, 100 * MS));
    assert!(p.validate().is_ok());
    assert_eq!((p.mtu(1000), p.mtu(0)), (1000, 1500));
}

/// interval / sqrt(count) in ns, truncated: 100 ms, 70.710678 ms, 57.735026 ms, 50 ms,
/// 33.333333 ms, 10 ms.
#[test]
fn control_law_spaces_drops_by_interval_over_sqrt_count() {
    let i = 100 * MS;
    assert_eq!(control_law(0, i, 1), 100_000_000);
    assert_eq!(control_law(0, i, 2), 70_710_678);
    assert_eq!(control_law(0, i, 3), 57_735_026);
    assert_eq!(control_law(7, i, 4), 50_000_007);
    assert_eq!(control_law(0, i, 9), 33_333_333);
    assert_eq!(control_law(0, i, 100), 10_000_000);
}

/// Above TARGET for a whole INTERVAL before the first drop; then drops at 100 ms, then
/// 70.71 ms, then 57.74 ms apart; a sojourn below TARGET leaves the drop state; re-entry
/// within 16 INTERVALs starts count at the last cycle's drops, count − lastcount.
#[test]
fn drop_state_entry_control_law_exit_and_re_entry() {
    let mut c = law();
    let d = |c: &mut CodelLaw, t: u64, sojourn: u64| c.dequeue(t, sojourn, BEHIND, false, false);
    assert_eq!(d(&mut c, 0, 10 * MS), Action::Send, "first above: first_above_time = 100 ms");
    assert_eq!(d(&mut c, 50 * MS, 10 * MS), Action::Send, "not yet an INTERVAL above");
    assert_eq!(d(&mut c, 100 * MS, 10 * MS), Action::Drop, "an INTERVAL above: enter the drop state");
    assert_eq!((c.count, c.lastcount, c.drop_next, c.dropping), (1, 1, 200 * MS, true));
    assert_eq!(d(&mut c, 100 * MS, 9 * MS), Action::Send, "the entry drop's dodequeue() is sent");
    assert_eq!(d(&mut c, 150 * MS, 10 * MS), Action::Send, "before drop_next");
    assert_eq!(d(&mut c, 200 * MS, 10 * MS), Action::Drop, "drop_next reached: count 2");
    assert_eq!(d(&mut c, 200 * MS, 10 * MS), Action::Send, "next drop scheduled");
    assert_eq!((c.count, c.drop_next), (2, 270_710_678));
    assert_eq!(d(&mut c, 270_710_678, 10 * MS), Action::Drop);
    assert_eq!(d(&mut c, 270_710_678, 10 * MS), Action::Send);
    assert_eq!((c.count, c.drop_next), (3, 270_710_678 + 57_735_026));
    assert_eq!(d(&mut c, 300 * MS, 3 * MS), Action::Send, "below TARGET");
    assert!(!c.dropping, "left the drop state");
    // Above again at 310 ms, so ok to drop at 410 ms: 410 − 328.4 ms < 16 INTERVALs and
    // count − lastcount = 3 − 1 = 2 > 1, so count restarts at 2: drop_next = 410 + 70.71 ms.
    assert_eq!(d(&mut c, 310 * MS, 10 * MS), Action::Send);
    assert_eq!(d(&mut c, 410 * MS, 10 * MS), Action::Drop);
    assert_eq!((c.count, c.lastcount, c.drop_next), (2, 2, 410 * MS + 70_710_678));
    assert_eq!(d(&mut c, 410 * MS, 10 * MS), Action::Send);
    // Leave, and come back after more than 16 INTERVALs: count restarts at 1.
    assert_eq!(d(&mut c, 500 * MS, 0), Action::Send);
    assert_eq!(d(&mut c, 500 * MS + 1, 0), Action::Send);
    // (480.7 ms was drop_next: a dequeue at 500 ms found the sojourn below TARGET first.)
    assert!(!c.dropping);
    let t = 410 * MS + 70_710_678 + 1600 * MS;
    assert_eq!(d(&mut c, t, 10 * MS), Action::Send);
    assert_eq!(d(&mut c, t + 100 * MS, 10 * MS), Action::Drop);
    assert_eq!((c.count, c.drop_next), (1, t + 200 * MS));
}

/// A backlog far behind schedule: the RFC's `while` loop drops head after head at one instant
/// until drop_next passes now. From drop_next = 200 ms, count 1, a dequeue at 500 ms drops
/// while drop_next = 200, 270.71, 328.45, 378.45, 423.17, 463.99 ms (count 2..7 after each),
/// and sends when drop_next = 463.99 + 37.80 = 501.79 ms > 500 ms: six drops.
#[test]
fn a_late_dequeue_drops_until_the_schedule_catches_up() {
    let mut c = law();
    c.dequeue(0, 10 * MS, BEHIND, false, false);
    assert_eq!(c.dequeue(100 * MS, 10 * MS, BEHIND, false, false), Action::Drop);
    assert_eq!(c.dequeue(100 * MS, 10 * MS, BEHIND, false, false), Action::Send);
    let mut drops = 0;
    while c.dequeue(500 * MS, 10 * MS, BEHIND, false, false) == Action::Drop {
        drops += 1;
    }
    assert_eq!(drops, 6);
    assert_eq!((c.count, c.drop_next), (7, 501_788_339));
}

/// MAXPACKET: with an MTU or less behind the head, no drop, and the INTERVAL restarts.
#[test]
fn no_drop_with_an_mtu_or_less_behind() {
    let mut c = law();
    assert_eq!(c.dequeue(0, 10 * MS, 1500, false, false), Action::Send);
    assert_eq!(c.dequeue(100 * MS, 10 * MS, 1500, false, false), Action::Send);
    assert_eq!(c.dequeue(100 * MS, 10 * MS, 1501, false, false), Action::Send, "first above again");
    assert_eq!(c.dequeue(200 * MS, 10 * MS, 1501, false, false), Action::Drop);
}

/// A drop that empties the queue: the RFC's next dodequeue() finds nothing, which ends the drop
/// state's loop (and the drop state) but not the entry drop's.
#[test]
fn a_drop_that_empties_the_queue() {
    let mut c = law();
    c.dequeue(0, 10 * MS, BEHIND, false, false);
    assert_eq!(c.dequeue(100 * MS, 10 * MS, BEHIND, true, false), Action::Drop);
    assert!(c.dropping, "the entry drop keeps the drop state");
    // The empty queue reset first_above_time: the next head above TARGET is not yet ok to
    // drop, which leaves the drop state.
    assert_eq!(c.dequeue(150 * MS, 10 * MS, BEHIND, false, false), Action::Send);
    assert!(!c.dropping);
    let mut c = law();
    c.dequeue(0, 10 * MS, BEHIND, false, false);
    assert_eq!(c.dequeue(100 * MS, 10 * MS, BEHIND, false, false), Action::Drop);
    c.dequeue(100 * MS, 10 * MS, BEHIND, false, false);
    assert_eq!(c.dequeue(200 * MS, 10 * MS, BEHIND, true, false), Action::Drop);
    assert!(!c.dropping, "the loop's dodequeue() found the queue empty");
}

/// ECN mode marks ECN-capable packets where it would drop, and the schedule goes on.
#[test]
fn ecn_mode_marks_instead_of_dropping() {
    let p = CodelParams { ecn: true, ..CodelParams::default() };
    let mut m = Codel::new(&p, 1000);
    assert!(m.acts_at_dequeue());
    let view = PortView { queue_pkts: 20, queue_bytes: 20_000, ..Default::default() };
    let mut ect = Packet::tcp(1, Kind::Data, 1000, 960, TcpHeader::default());
    ect.ecn = ecn::ECT0;
    let mut plain = Packet::tcp(1, Kind::Data, 1000, 960, TcpHeader::default());
    assert_eq!(m.on_dequeue(0, &mut ect, 10 * MS, 0, &view), Verdict::Forward);
    assert_eq!(m.on_dequeue(100 * MS, &mut ect, 10 * MS, 0, &view), Verdict::Mark);
    assert_eq!(ect.ecn, ecn::CE);
    assert_eq!((m.law().count, m.law().drop_next), (1, 200 * MS));
    assert_eq!(m.on_dequeue(200 * MS, &mut plain, 10 * MS, 0, &view), Verdict::Drop, "Not-ECT is dropped");
    assert_eq!(m.law().count, 2);
}

#[test]
fn bad_settings_name_their_key() {
    let e = |v: serde_json::Value| parse_router(&v).unwrap_err().key;
    assert_eq!(e(serde_json::json!({"target": 0.0})), "target");
    assert_eq!(e(serde_json::json!({"target": 0.2})), "target");
    assert_eq!(e(serde_json::json!({"interval": -1.0})), "interval");
    assert_eq!(e(serde_json::json!({"mtu_bytes": 0})), "mtu_bytes");
    assert_eq!(e(serde_json::json!({"tagret": 0.01})), "tagret");
    assert!(parse_router(&serde_json::json!({"target": 0.01, "interval": 0.2, "ecn": true})).is_ok());
}
