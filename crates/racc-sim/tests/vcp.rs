//! TCP/VCP on the engine (docs/PROTOCOLS.md §2; VCP-DCCP App. A1–A5): N VCP flows through one VCP
//! router fill the link near γ·C with no loss and almost no queue, each at about γC/N; TCP
//! NewReno through the same router is left alone.

mod common;
use common::{goodput_per_flow, port, port_window, sim};
use racc_sim::metrics::jain;

const SCENARIO: &str = include_str!("../../../scenarios/vcp-dumbbell.toml");
const C: f64 = 10e6;
const GAMMA: f64 = 0.98;
/// Wire bytes per payload byte: 1000-byte packets carry 960 bytes of payload.
const WIRE: f64 = 1000.0 / 960.0;

/// The scenario file with some lines replaced.
fn scenario(edits: &[(&str, &str)]) -> String {
    let mut t = SCENARIO.to_string();
    for (from, to) in edits {
        assert!(t.contains(from), "scenario has no '{from}'");
        t = t.replace(from, to);
    }
    t
}

#[test]
fn vcp_flows_fill_the_link_fairly_without_loss() {
    // scenarios/vcp-dumbbell.toml as shipped: 4 flows, 10 Mb/s, RTT 100 ms, 60 s.
    let mut s = sim(SCENARIO);
    s.run();
    let (util, drops, q_mean, q_max) = port_window(&s, "r0->r1", 20.0, 60.0);
    let bn = port(&mut s, "r0->r1");
    let g = goodput_per_flow(&s, 4, 20.0, 60.0);
    let share = GAMMA * C / 4.0; // docs/PROTOCOLS.md §2 oracle r* ≈ γC/N
    let rates: Vec<f64> = g.iter().map(|x| x * WIRE).collect();
    eprintln!(
        "t in (20, 60] s: utilisation {util:.4} ({:.3}·γ), drops {drops} (whole run {}), queue mean {q_mean:.2} max {q_max} pkts \
         (whole run max {}); wire rate per flow {:?} Mb/s vs γC/N {:.3}; Jain {:.4}",
        util / GAMMA,
        bn.counters.drops,
        bn.max_queue_pkts,
        rates.iter().map(|r| (r / 1e4).round() / 100.0).collect::<Vec<_>>(),
        share / 1e6,
        jain(&g)
    );
    // High utilisation: MI fills the pipe within ~15 s, then AI/MD keeps ρ around 1.
    assert!(util > 0.9 * GAMMA, "utilisation {util}");
    assert!(util <= 1.0);
    // No loss after start-up (and none during it: VCP has no slow start), a small queue.
    assert_eq!(drops, 0, "drops after start-up");
    assert!(bn.counters.drops <= 5, "drops over the whole run: {}", bn.counters.drops);
    assert!(q_mean < 5.0, "mean sampled queue {q_mean} pkts");
    assert!(q_max < 25, "max sampled queue {q_max} pkts (the buffer is 125)");
    // Each flow near γC/N ± 10 % (wire rate, as the load factor counts wire bytes).
    for (i, r) in rates.iter().enumerate() {
        assert!((r / share - 1.0).abs() < 0.10, "flow {i}: {:.3} Mb/s vs γC/N {:.3}", r / 1e6, share / 1e6);
    }
    assert!(jain(&g) > 0.95, "Jain {}", jain(&g));
}

#[test]
fn late_flows_converge_to_the_fair_share() {
    // Starts spread over 30 s: the early flows take the link by MI, the late ones catch up by
    // AIMD (AI adds the same α per t_p to every flow, MD takes 12.5 % of each).
    let text =
        scenario(&[("duration = \"60s\"", "duration = \"120s\""), ("start_spread = \"1s\"", "start_spread = \"30s\"")]);
    let mut s = sim(&text);
    s.run();
    let early = jain(&goodput_per_flow(&s, 4, 20.0, 30.0));
    let g = goodput_per_flow(&s, 4, 90.0, 120.0);
    let (util, drops, _, _) = port_window(&s, "r0->r1", 30.0, 120.0);
    eprintln!("Jain (20, 30] s {early:.3}, (90, 120] s {:.4}; utilisation {util:.4}, drops {drops}", jain(&g));
    assert!(early < 0.8, "the late flows should start behind (Jain {early})");
    assert!(jain(&g) > 0.99, "Jain {}", jain(&g));
    assert!(util > 0.9 * GAMMA);
    assert_eq!(drops, 0);
}

#[test]
fn delayed_acks_keep_the_same_dynamics() {
    // Per-packet credit (k packets per ACK) and the receiver's max-code echo keep the laws
    // independent of the ACK ratio (docs/PROTOCOLS.md §2).
    let text = scenario(&[("start_spread = \"1s\"", "start_spread = \"1s\"\ndelayed_ack = true")]);
    let mut s = sim(&text);
    s.run();
    let (util, drops, q_mean, _) = port_window(&s, "r0->r1", 20.0, 60.0);
    let g = goodput_per_flow(&s, 4, 20.0, 60.0);
    let acks = port(&mut s, "r1->r0").counters.tx_pkts as f64 / port(&mut s, "r0->r1").counters.tx_pkts as f64;
    eprintln!("delayed ACK: {acks:.2} ACKs per data packet, utilisation {util:.4}, drops {drops}, queue {q_mean:.2}, Jain {:.4}", jain(&g));
    assert!(acks < 0.6, "delayed ACKs should halve the ACK count ({acks})");
    assert!(util > 0.9 * GAMMA, "utilisation {util}");
    assert_eq!(drops, 0);
    assert!(jain(&g) > 0.95);
}

#[test]
fn newreno_through_a_vcp_router_is_unaffected() {
    // Not-ECT TCP traffic: the VCP module counts it into the load factor but never drops or
    // delays it, so the run is identical, sample for sample, to the same run through DropTail.
    // (A receiver without ECN ignores the ECN bits, so "never marks Not-ECT" itself is checked
    // by racc-proto's vcp::router tests; the next test shows that ECT traffic is marked.)
    let tcp = |router: &str| {
        scenario(&[
            ("router = \"vcp\"", &format!("router = \"{router}\"")),
            ("router_params = { t_p = 0.2, t_q = 0.01, k_q = 0.5, a = 0.875, gamma = 0.98 }\n", ""),
            ("protocol = \"vcp\"", "protocol = \"newreno\""),
            ("params = { t_p = 0.2, mu = 0.0625, alpha = 1.0, beta = 0.875, sigma_mi = 2.5, sigma_ai = 10.0, md_hold = \"t_p\", iw = 2, initial_slow_start = false }\n", ""),
            ("duration = \"60s\"", "duration = \"30s\""),
        ])
    };
    let mut v = sim(&tcp("vcp"));
    v.run();
    let mut d = sim(&tcp("droptail"));
    d.run();
    let (bv, bd) = (port(&mut v, "r0->r1"), port(&mut d, "r0->r1"));
    eprintln!(
        "NewReno via vcp: util {:.4} drops {} marks {}; via droptail: util {:.4} drops {} marks {}",
        bv.utilisation, bv.counters.drops, bv.counters.marks, bd.utilisation, bd.counters.drops, bd.counters.marks
    );
    assert_eq!(bv.router, "vcp");
    assert!(bd.counters.drops > 0, "NewReno should fill the DropTail buffer");
    assert_eq!(bv.counters, bd.counters);
    assert_eq!(v.flow_series, d.flow_series);
    assert_eq!(v.port_series, d.port_series);
}

#[test]
fn ecn_capable_newreno_is_marked_by_a_vcp_router() {
    // The contrast case, showing that the identity above is not vacuous: the same router
    // raises ECT(0) (10) data to 11 (CE) on overload, NewReno halves on the echo (RFC 3168),
    // and the run changes, with fewer drops.
    let tcp = |ecn: bool| {
        scenario(&[
            ("protocol = \"vcp\"", &format!("protocol = \"newreno\"\necn = {ecn}")),
            ("params = { t_p = 0.2, mu = 0.0625, alpha = 1.0, beta = 0.875, sigma_mi = 2.5, sigma_ai = 10.0, md_hold = \"t_p\", iw = 2, initial_slow_start = false }\n", ""),
            ("duration = \"60s\"", "duration = \"30s\""),
        ])
    };
    let mut plain = sim(&tcp(false));
    plain.run();
    let mut ecn = sim(&tcp(true));
    ecn.run();
    let (bp, be) = (port(&mut plain, "r0->r1"), port(&mut ecn, "r0->r1"));
    eprintln!(
        "NewReno via vcp, ECN on: drops {}, util {:.4}; ECN off: drops {}, util {:.4}",
        be.counters.drops, be.utilisation, bp.counters.drops, bp.utilisation
    );
    assert_ne!(ecn.flow_series, plain.flow_series);
    assert!((be.counters.drops as f64) < 0.8 * bp.counters.drops as f64, "CE marks should replace some drops");
}

#[test]
fn bad_vcp_parameters_are_refused_with_their_key() {
    use racc_sim::scenario::from_toml;
    for (from, to, key) in [
        ("gamma = 0.98 }", "gamma = 1.5 }", "topology.bottleneck.router_params.gamma"),
        ("k_q = 0.5,", "kq = 0.5,", "topology.bottleneck.router_params.kq"),
        ("beta = 0.875,", "beta = 1.5,", "flows[0].params.beta"),
        ("md_hold = \"t_p\"", "md_hold = \"never\"", "flows[0].params.md_hold"),
    ] {
        let e = from_toml(&scenario(&[(from, to)]), "bad.toml").expect_err("should be refused");
        assert_eq!(e.key, key, "{e}");
    }
}

/// A dumbbell of `n` flows of `proto` through a 4 Mb/s, 250 ms bottleneck with a one-BDP
/// buffer (the links of the mpcp-parking-lot), 200 s.
fn many_flows(proto: &str, n: usize) -> String {
    format!(
        r#"
duration = "200s"
seed = 1
packet_size = 1000
[topology]
kind = "dumbbell"
pairs = {n}
access = {{ capacity = "100Mbps", delay = "1ms" }}
bottleneck = {{ capacity = "4Mbps", delay = "250ms", buffer = "1bdp", router = "{proto}" }}
[[flows]]
protocol = "{proto}"
src = "s{{i}}"
dst = "d{{i}}"
count = {n}
start_spread = "5s"
[record]
interval = "1s"
"#
    )
}

/// Why VCP-family routers overflow the parking lot's links (issue 3 notes). After an MD the
/// sender holds for t_p, then grows by AI for one RTT even while overload is still reported
/// (VCP-DCCP App.), then cuts again: per cycle w → β·w + A with A = α·min((rtt/t_p)², σ_AI)
/// packets, whose fixed point is w* = A/(1 − β). While every flow's share of the
/// bandwidth-delay product b = C·rtt/N exceeds w*, repeated MDs bring the load below 1; when
/// b < w* no sequence of single MDs can, and only buffer overflow (NewReno's halving) limits
/// the flows. Checked on both sides of the boundary: 4 flows (b = 63 > w* = 51 packets) run
/// loss-free with a short queue; 40 flows (b = 6.3 packets) overflow the buffer, for VCP and for
/// DPCP even with its strongest MD (β = 0.43: w* = 11 packets).
#[test]
fn repeated_md_cannot_hold_the_load_when_ai_exceeds_the_per_flow_window() {
    let rtt = 2.0 * (0.250 + 2.0 * 0.001);
    let a = (rtt / 0.2f64).powi(2).min(10.0); // α = 1, t_p = 200 ms, σ_AI = 10
    let per_flow = |n: f64| 4e6 / 8000.0 * rtt / n;
    assert!(per_flow(4.0) > a / (1.0 - 0.875) && per_flow(40.0) < a / (1.0 - 0.43));
    let buffer = (4e6 / 8000.0 * rtt) as u32;
    for (proto, n, overloaded) in [("vcp", 4, false), ("vcp", 40, true), ("dpcp", 40, true)] {
        let mut s = sim(&many_flows(proto, n));
        s.run();
        let (util, drops, q_mean, q_max) = port_window(&s, "r0->r1", 50.0, 200.0);
        eprintln!(
            "{proto} n={n}: b = {:.1} pkts, w* = {:.1} (β 0.875) / {:.1} (β 0.43); t in (50, 200]: utilisation \
             {util:.3}, drops {drops}, queue mean {q_mean:.1} max {q_max} of {buffer}",
            per_flow(n as f64),
            a / 0.125,
            a / 0.57
        );
        if overloaded {
            assert!(drops > 100, "{proto} n={n}: {drops} drops");
            assert!(q_max + 2 >= buffer, "{proto} n={n}: queue max {q_max} of {buffer}");
            assert!(q_mean > 0.25 * buffer as f64, "{proto} n={n}: standing queue {q_mean:.1}");
        } else {
            assert_eq!(drops, 0, "{proto} n={n}");
            assert!(q_mean < 0.1 * buffer as f64, "{proto} n={n}: standing queue {q_mean:.1}");
            assert!(util > 0.8, "{proto} n={n}: utilisation {util:.3}");
        }
    }
}
