//! DPCP's steady state on dumbbells in MPCP's range (issue 13 item 4): seed 000 §4.1 says
//! "DPCP achieves slightly better bandwidth utilizations in steady status ... than VCP". Read
//! as: once both have converged, DPCP's bottleneck utilisation is at least VCP's, and nothing
//! lost means no timeout (every timeout there is spurious).
//!
//! Set-up: scenarios/mpcp-dumbbell.toml (1000-byte packets, access 100 Mb/s 1 ms, a one-BDP
//! buffer, SACK) with the flows, capacity and RTT, 90 s, utilisation over (45, 90] s.
//! Measured on this build (seed 1), DPCP vs VCP: 3 flows / 5 Mb/s / 300 ms 0.837 vs 0.933,
//! 0 timeouts; 5 / 6 / 400 0.845 vs 0.963, 32 timeouts, all spurious; 4 / 3 / 900 0.807 vs
//! 0.988, 11 timeouts, all spurious; no drops in any.
//!
//! What was found (not fixed yet, see `dpcp_steady_state_at_least_vcp`):
//! - The spurious timeouts are the RTO estimator's: every ACK is an RTT sample (RFC 7323
//!   timestamps), so a flow whose own packets meet an empty queue drives RTTVAR to 0–2 ms and
//!   its RTO to SRTT + a few ms (measured on mpcp-dumbbell, flow 1: RTO 0.502–0.520 s for SRTT
//!   0.501–0.514 s); the next time its burst lands behind another flow's 30–45 packets (the
//!   RTT sample after the undo: 0.534–0.544 s) the timer fires with nothing lost.
//!   `rto_rule = "linux"` (variance floored at min_rto) leaves 10 of 11 on 4 / 3 / 900.
//! - The under-utilisation is not ξ's size alone: capping ξ at VCP's 0.0625 (`xi_cap`) gives
//!   0.864 / 0.788 / 0.778 (worse at 400 and 900 ms). The MD episode is: with `md_hold = "rtt"`
//!   instead of t_p the 300 ms dumbbell reaches 0.928 (VCP 0.933), 900 ms 0.850: with RTT > t_p
//!   the load factor still reports the pre-MD window after the t_p hold and its AI rtt, so a
//!   second deep MD (0.6 or 0.43) follows the first.

mod common;
use common::sim;
use racc_sim::Simulator;

const DUMBBELL: &str = include_str!("../../../scenarios/mpcp-dumbbell.toml");

/// The three dumbbells: (flows, Mb/s, round-trip propagation delay in ms).
const DUMBBELLS: [(u32, u32, u32); 3] = [(3, 5, 300), (5, 6, 400), (4, 3, 900)];

/// mpcp-dumbbell with `flows` flows over `mbps` Mb/s and a round-trip propagation delay of
/// `rtt_ms` (2 × (1 + d + 1) ms), one-BDP buffer, `secs` long, `params` added to the flows.
fn text(proto: &str, flows: u32, mbps: u32, rtt_ms: u32, secs: u32, params: &str) -> String {
    let d = rtt_ms / 2 - 2;
    let t = DUMBBELL
        .replace("pairs = 2", &format!("pairs = {flows}"))
        .replace("count = 2", &format!("count = {flows}{params}"))
        .replace("capacity = \"10Mbps\", delay = \"248ms\"", &format!("capacity = \"{mbps}Mbps\", delay = \"{d}ms\""))
        .replace("duration = \"60s\"", &format!("duration = \"{secs}s\""))
        .replace("router = \"vcp\"", &format!("router = \"{proto}\""))
        .replace("protocol = \"vcp\"", &format!("protocol = \"{proto}\""));
    assert!(t.contains(&format!("pairs = {flows}")) && t.contains(&format!("\"{d}ms\"")));
    t
}

/// Mean utilisation of the bottleneck over samples in (from, to].
fn utilisation(s: &Simulator, from: f64, to: f64) -> f64 {
    let ps = &s.port_series;
    let p = s.ports().iter().position(|x| x.name == "r0->r1").unwrap() as u32;
    let v: Vec<f64> = (0..ps.time_s.len())
        .filter(|&i| ps.port[i] == p && ps.time_s[i] > from && ps.time_s[i] <= to)
        .map(|i| ps.utilisation[i])
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

/// Last sample's cumulative (timeouts, spurious timeouts), summed over flows.
fn timeouts(s: &Simulator) -> (u64, u64) {
    let fs = &s.flow_series;
    let last = *fs.time_s.last().unwrap();
    let at_end = |v: &[u64]| (0..v.len()).filter(|&i| fs.time_s[i] == last).map(|i| v[i]).sum::<u64>();
    (at_end(&fs.timeouts), at_end(&fs.spurious_timeouts))
}

/// (utilisation over (45, 90] s, timeouts, spurious timeouts, drops).
fn steady(proto: &str, (n, c, r): (u32, u32, u32), params: &str) -> (f64, u64, u64, u64) {
    let mut s = sim(&text(proto, n, c, r, 90, params));
    s.run();
    let drops = s.port_summary().iter().map(|p| p.counters.drops).sum();
    let (to, sp) = timeouts(&s);
    (utilisation(&s, 45.0, 90.0), to, sp, drops)
}

/// Issue 13's acceptance: DPCP's steady-state utilisation at least VCP's, and no timeout, on
/// each of the three dumbbells. Windows from the paper's words, written before measuring.
#[test]
#[ignore = "shortfall: DPCP 0.837/0.845/0.807 vs VCP 0.933/0.963/0.988 over (45, 90] s; 0/32/11 spurious timeouts"]
fn dpcp_steady_state_at_least_vcp() {
    for d in DUMBBELLS {
        let (vu, _, _, _) = steady("vcp", d, "");
        let (du, to, sp, drops) = steady("dpcp", d, "");
        eprintln!("{d:?}: DPCP {du:.3} (VCP {vu:.3}), timeouts {to} (spurious {sp}), drops {drops}");
        assert!(du >= vu, "{d:?}: DPCP {du:.3} below VCP {vu:.3}");
        assert_eq!(to, 0, "{d:?}: {to} timeouts ({sp} spurious)");
    }
}

/// The shortfall as it stands, so a change to it is seen: on every dumbbell DPCP loses nothing
/// yet uses the link less than VCP once both have converged (the known shortfall above).
#[test]
fn dpcp_steady_state_shortfall_is_known() {
    for d in DUMBBELLS {
        let (vu, ..) = steady("vcp", d, "");
        let (du, to, sp, drops) = steady("dpcp", d, "");
        eprintln!("{d:?}: DPCP {du:.3} (VCP {vu:.3}), timeouts {to} (spurious {sp}), drops {drops}");
        assert_eq!(drops, 0, "{d:?}");
        assert_eq!(to, sp, "{d:?}: nothing lost, every timeout spurious");
        assert!(du < vu, "{d:?}: DPCP {du:.3} now at least VCP {vu:.3}: un-ignore dpcp_steady_state_at_least_vcp");
    }
}
