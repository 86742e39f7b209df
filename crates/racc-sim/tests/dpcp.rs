//! TCP/DPCP and TCP/TPCP on the engine (MPCP §3–§5; docs/PROTOCOLS.md §3), against TCP/VCP on
//! the same topologies.
//!
//! - Dumbbell (scenarios/vcp-dumbbell.toml with the protocol swapped): no drops, a small
//!   standing queue, and a higher whole-run utilisation than VCP (faster start-up, MPCP
//!   §4.2's claim).
//! - Parking lot (MPCP Fig. 1a scaled down: 3 long flows and 1 local flow per link,
//!   links of 4/4/2/4 Mb/s at 100 ms one way, 200 s): per-flow max-min gives the long flows
//!   3 × 0.5 Mb/s of L0's 4 Mb/s, a share of 0.375. Measured on this build (seed 1, t in
//!   (100, 200] s): VCP 0.346, DPCP 0.290, TPCP 0.326, no drops. DPCP and TPCP are **not
//!   closer to max-min than VCP** here: MPCP §4.1's claim (VCP 15:1, DPCP significantly
//!   fairer) is not reproduced, and `parking_lot_known_shortfall_dpcp_not_fairer_than_vcp` says
//!   so (an expected failure, asserted). At the seed's 250 ms per link DPCP's long flows starve
//!   (`parking_lot_at_250ms_long_flows_starve`, ignored: an open issue).
//! - Delayed ACKs (RFC 5681: one ACK per two segments) on the same dumbbell: the receiver's
//!   echo walks one chain per ACK (`racc-proto/src/dpcp/echo.rs`), so the senders still decode
//!   the LSP and run as with one ACK per packet. Measured on this build (seed 1): DPCP
//!   utilisation 0.904 vs 0.907, TPCP 0.910 vs 0.911, 90 % of the link after 3.3 s (DPCP) and
//!   2.4 s (TPCP) vs VCP's 10.2 s; with the echo of the last packet (the former echo) DPCP took
//!   7.4 s and flow 0's window at 1.2 s was 2.8 packets instead of 8.8.
//! - Chains of 4 (`chain = 4` on the tpcp router and flows) on the same dumbbell. Measured on
//!   this build (seed 1): utilisation 0.914 (TPCP 0.911, VCP 0.817), no drops or
//!   retransmissions, queue mean 0.28 max 12 packets, 90 % of the link after 2.1 s (VCP
//!   10.6 s); with delayed ACKs 0.915, queue mean 0.88 max 15, 2.0 s.

mod common;
use common::{goodput_per_flow, port, sim};
use racc_sim::Simulator;

const DUMBBELL: &str = include_str!("../../../scenarios/vcp-dumbbell.toml");

fn dumbbell(proto: &str) -> Simulator {
    dumbbell_acks(proto, false)
}

/// The dumbbell with `delayed_ack` on the flows' receivers (every 2nd segment or 100 ms).
fn dumbbell_acks(proto: &str, delayed_ack: bool) -> Simulator {
    let mut s = sim(&dumbbell_text(proto, delayed_ack));
    s.run();
    s
}

fn dumbbell_text(proto: &str, delayed_ack: bool) -> String {
    let mut t = DUMBBELL
        .replace("router = \"vcp\"", &format!("router = \"{proto}\""))
        .replace("router_params = { t_p = 0.2, t_q = 0.01, k_q = 0.5, a = 0.875, gamma = 0.98 }\n", "")
        .replace("protocol = \"vcp\"", &format!("protocol = \"{proto}\""))
        .replace(
            "params = { t_p = 0.2, mu = 0.0625, alpha = 1.0, beta = 0.875, sigma_mi = 2.5, sigma_ai = 10.0, md_hold = \"t_p\", iw = 2, initial_slow_start = false }\n",
            "",
        );
    assert!(t.contains(&format!("protocol = \"{proto}\"")));
    if delayed_ack {
        t = t.replace("start_spread = \"1s\"", "start_spread = \"1s\"\ndelayed_ack = true");
        assert!(t.contains("delayed_ack = true"));
    }
    t
}

#[test]
fn dumbbell_no_drops_small_queue_faster_than_vcp() {
    let mut v = dumbbell("vcp");
    let vb = port(&mut v, "r0->r1");
    for proto in ["dpcp", "tpcp"] {
        let mut s = dumbbell(proto);
        let b = port(&mut s, "r0->r1");
        let g = goodput_per_flow(&s, 4, 20.0, 60.0);
        eprintln!(
            "{proto}: utilisation {:.3} (VCP {:.3}), drops {}, queue mean {:.2} max {} pkts (VCP {:.2} / {}), \
             goodput per flow {:?} Mb/s",
            b.utilisation,
            vb.utilisation,
            b.counters.drops,
            b.mean_queue_pkts,
            b.max_queue_pkts,
            vb.mean_queue_pkts,
            vb.max_queue_pkts,
            g.iter().map(|x| (x / 1e4).round() / 100.0).collect::<Vec<_>>()
        );
        assert_eq!(b.router, proto);
        assert_eq!(b.counters.drops, 0, "{proto}: drops");
        assert!(b.mean_queue_pkts < 2.0 && b.max_queue_pkts < 25, "{proto}: queue (buffer 125)");
        assert!(b.utilisation > vb.utilisation + 0.05, "{proto}: {} vs VCP {}", b.utilisation, vb.utilisation);
        let total: f64 = g.iter().sum();
        assert!(total > 0.85 * 10e6, "{proto}: goodput {total}");
        assert!(g.iter().all(|&x| x > 0.8 * total / 4.0), "{proto}: unfair {g:?}");
    }
}

fn parking_lot(proto: &str, delay: &str, dur: u32) -> String {
    format!(
        r#"
name = "dpcp-parking-lot"
duration = "{dur}s"
seed = 1
packet_size = 1000
[topology]
kind = "parking_lot"
access = {{ capacity = "100Mbps", delay = "1ms" }}
links = [
  {{ capacity = "4Mbps", delay = "{delay}", buffer = "1bdp", router = "{proto}" }},
  {{ capacity = "4Mbps", delay = "{delay}", buffer = "1bdp", router = "{proto}" }},
  {{ capacity = "2Mbps", delay = "{delay}", buffer = "1bdp", router = "{proto}" }},
  {{ capacity = "4Mbps", delay = "{delay}", buffer = "1bdp", router = "{proto}" }},
]
[[flows]]
name = "long"
protocol = "{proto}"
src = "long_src"
dst = "long_dst"
count = 3
start_spread = "1s"
[[flows]]
name = "local"
protocol = "{proto}"
src = "src{{i}}"
dst = "dst{{i}}"
count = 4
start_spread = "1s"
[record]
interval = "500ms"
"#
    )
}

/// Long flows' share of L0's goodput over (from, to], and the whole run's drops.
fn long_share(proto: &str, delay: &str, dur: u32) -> (f64, Vec<f64>, u64) {
    let mut s = sim(&parking_lot(proto, delay, dur));
    s.run();
    let fl = &s.spec.flows;
    let n = fl.len();
    let g = goodput_per_flow(&s, n, dur as f64 / 2.0, dur as f64);
    // L0 forward is port 0 (the parking-lot shortcut numbers L_i forward as port 2i).
    let on_l0: Vec<bool> = (0..n).map(|i| s.spec.routes[fl[i].fwd_route].contains(&0)).collect();
    let long: f64 = (0..n).filter(|&i| fl[i].group == "long").map(|i| g[i]).sum();
    let all: f64 = (0..n).filter(|&i| on_l0[i]).map(|i| g[i]).sum();
    let names: Vec<String> = s.ports().iter().map(|p| p.name.clone()).collect();
    let drops = names.iter().map(|nm| port(&mut s, nm).counters.drops).sum();
    (long / all, g, drops)
}

/// Per-flow max-min on the scaled lot: L2 (2 Mb/s) is shared by 3 long flows and 1 local flow,
/// 0.5 Mb/s each; on L0 the long flows then hold 1.5 of 4 Mb/s.
const MAXMIN_LONG_SHARE: f64 = 0.375;

/// The scaled lot at 100 ms per link for VCP, DPCP and TPCP (in that order), run once for the
/// two tests below: (long share of L0, per-flow goodput, drops).
fn lot_100ms() -> &'static [(f64, Vec<f64>, u64)] {
    static RUNS: std::sync::OnceLock<Vec<(f64, Vec<f64>, u64)>> = std::sync::OnceLock::new();
    RUNS.get_or_init(|| ["vcp", "dpcp", "tpcp"].map(|p| long_share(p, "100ms", 200)).into())
}

/// What holds on the scaled lot: the VCP family loses nothing (no drops) and no flow starves
/// (each keeps more than 30 % of its max-min rate, 0.5 Mb/s for the long flows).
#[test]
fn parking_lot_no_drops_no_starvation() {
    for (proto, (d, g, drops)) in ["vcp", "dpcp", "tpcp"].into_iter().zip(lot_100ms()) {
        eprintln!(
            "{proto}: long share of L0 {d:.3} (max-min {MAXMIN_LONG_SHARE}), drops {drops}, goodput {:?} Mb/s",
            mb(g)
        );
        assert_eq!(*drops, 0, "{proto}: drops");
        assert!(g.iter().all(|&x| x > 0.3 * 0.5e6), "{proto}: a flow starves: {g:?}");
    }
}

fn mb(g: &[f64]) -> Vec<f64> {
    g.iter().map(|x| (x / 1e4).round() / 100.0).collect()
}

/// MPCP §4.1: "VCP exhibits a biased fairness characteristic [...] In contrast, DPCP
/// demonstrates a significantly better fairness characteristic". Its least reading: DPCP's long
/// flows are closer to their max-min share of L0 than VCP's. **racc falls short**: measured on
/// this build (seed 1, t in (100, 200] s), long share VCP 0.346, DPCP 0.290, TPCP 0.326 against
/// max-min 0.375: VCP is the closest. An expected failure, asserted as such: this test fails when
/// DPCP or TPCP comes closer to max-min than VCP, and then becomes the claim's test (assert
/// `dist(proto) < dist(vcp)`).
#[test]
fn parking_lot_known_shortfall_dpcp_not_fairer_than_vcp() {
    let dist = |share: f64| (share - MAXMIN_LONG_SHARE).abs();
    let v = lot_100ms()[0].0;
    for (proto, &(d, _, _)) in ["dpcp", "tpcp"].into_iter().zip(&lot_100ms()[1..]) {
        eprintln!("{proto}: long share {d:.3}, VCP {v:.3}, max-min {MAXMIN_LONG_SHARE}");
        assert!(
            dist(d) >= dist(v),
            "{proto}'s long share {d:.3} is now closer to max-min {MAXMIN_LONG_SHARE} than VCP's {v:.3}: MPCP \
             §4.1's claim holds; turn this expected failure into the claim's test"
        );
    }
}

/// MPCP §4.1's delays (250 ms per link) on the scaled lot. Measured on this build (seed 1,
/// 300 s, no drops for any protocol): VCP's long flows hold 0.25 of L0 (0.28 Mb/s each), DPCP's
/// 0.025 and TPCP's 0.016. With one local flow per link, DPCP's local windows swing widely
/// (s.d. 80 packets about a mean of 222; queues up to 300 packets; 500 ms utilisation between
/// 0.6 and 1.0), where VCP's hold steady (s.d. 10 about 163). The long flows read the max of
/// four such links and sit at 8 packets per 2.6 s RTT. An open issue, not a claim: run with
/// `--ignored` to see the figures.
#[test]
#[ignore]
fn parking_lot_at_250ms_long_flows_starve() {
    for proto in ["vcp", "dpcp", "tpcp"] {
        let (share, g, drops) = long_share(proto, "250ms", 300);
        eprintln!("250 ms {proto}: long share of L0 {share:.3}, drops {drops}, goodput {:?}", g);
    }
}

/// First sample time at which `port`'s utilisation exceeds `frac`.
fn time_to(s: &Simulator, port: &str, frac: f64) -> f64 {
    let ps = &s.port_series;
    let p = s.ports().iter().position(|x| x.name == port).unwrap() as u32;
    (0..ps.time_s.len()).find(|&i| ps.port[i] == p && ps.utilisation[i] > frac).map_or(f64::INFINITY, |i| ps.time_s[i])
}

/// Flow `flow`'s window in packets at the last sample at or before `t` s.
fn cwnd_pkts_at(s: &Simulator, flow: u32, t: f64) -> f64 {
    let fs = &s.flow_series;
    let i = (0..fs.time_s.len()).rfind(|&i| fs.flow[i] == flow && fs.time_s[i] <= t).unwrap();
    fs.cwnd_bytes[i] / 1000.0
}

/// Delayed ACKs cover an MSP and its LSP with one ACK. At start-up the bottleneck's LF is
/// 01 01 (ρ < 0.2: ξ = 1, cwnd ×√2 per 100 ms RTT) or 01 10 (ξ = 0.375); a sender that sees no
/// LSP holds 01 11 (ξ = 0.0625, VCP's MI), as does VCP mode after a fallback. So a window that
/// grows several-fold in the first half second of sending shows the LSP decoded, and a run that
/// matches the per-packet-ACK run throughout shows no fallback.
#[test]
fn delayed_acks_decode_the_4_bit_lf_without_vcp_fallback() {
    let mut v = dumbbell_acks("vcp", true);
    let v90 = time_to(&v, "r0->r1", 0.9);
    let vb = port(&mut v, "r0->r1");
    let v_grow = cwnd_pkts_at(&v, 0, 1.2) / cwnd_pkts_at(&v, 0, 0.5);
    for proto in ["dpcp", "tpcp"] {
        let mut a = dumbbell_acks(proto, false);
        let mut d = dumbbell_acks(proto, true);
        let (ab, db) = (port(&mut a, "r0->r1"), port(&mut d, "r0->r1"));
        let acks = port(&mut d, "r1->r0").counters.tx_pkts as f64 / db.counters.tx_pkts as f64;
        let (a90, d90) = (time_to(&a, "r0->r1", 0.9), time_to(&d, "r0->r1", 0.9));
        let grow = cwnd_pkts_at(&d, 0, 1.2) / cwnd_pkts_at(&d, 0, 0.5);
        let g = goodput_per_flow(&d, 4, 20.0, 60.0);
        eprintln!(
            "{proto} delayed ACKs: {acks:.2} ACKs per data packet, utilisation {:.3} (per-packet ACKs {:.3}, VCP {:.3}), \
             90 % after {d90:.1} s ({a90:.1} s, VCP {v90:.1} s), flow 0 cwnd ×{grow:.1} in (0.5, 1.2] s (VCP ×{v_grow:.1}), \
             drops {}, queue mean {:.2}, goodput {:?} Mb/s",
            db.utilisation,
            ab.utilisation,
            vb.utilisation,
            db.counters.drops,
            db.mean_queue_pkts,
            g.iter().map(|x| (x / 1e4).round() / 100.0).collect::<Vec<_>>()
        );
        assert!(acks < 0.6, "{proto}: delayed ACKs are on ({acks})");
        assert!(grow > 2.5 && v_grow < 1.5, "{proto}: start-up growth ×{grow} (VCP ×{v_grow}): the LSP is decoded");
        assert!(d90 <= a90 + 0.5 && d90 < 0.5 * v90, "{proto}: transition {d90} s vs {a90} s (VCP {v90} s)");
        assert!((db.utilisation - ab.utilisation).abs() < 0.02, "{proto}: {} vs {}", db.utilisation, ab.utilisation);
        assert_eq!(db.counters.drops, 0, "{proto}: drops");
        assert!(db.mean_queue_pkts < 2.0, "{proto}: queue");
        let total: f64 = g.iter().sum();
        assert!(g.iter().all(|&x| x > 0.8 * total / 4.0), "{proto}: unfair {g:?}");
    }
}

const MPCP_QUEUE: &str = include_str!("../../../scenarios/mpcp-queue.toml");

/// Last sample's cumulative (retransmits, timeouts, spurious timeouts), summed over flows.
fn loss_counters(s: &Simulator) -> (u64, u64, u64) {
    let fs = &s.flow_series;
    let last = *fs.time_s.last().expect("samples");
    let at_end = |v: &[u64]| (0..v.len()).filter(|&i| fs.time_s[i] == last).map(|i| v[i]).sum::<u64>();
    (at_end(&fs.retransmits), at_end(&fs.timeouts), at_end(&fs.spurious_timeouts))
}

/// mpcp-queue (10 Mb/s, 500 ms RTT, 60 s) with DPCP: MI at ξ = 1 (×5.7 per RTT) fills the
/// 625-packet buffer within an RTT, so the RTT jumps by up to 0.5 s faster than RTTVAR follows
/// and the RTO fires with nothing lost. Measured on this build (seed 1): no drops anywhere;
/// 10 timeouts, all found spurious by the echoed timestamp (RFC 3522) and undone, each costing
/// one retransmission; with `spurious_rto = "off"` the same run goes back N 8 times and
/// retransmits 1448 packets the receiver already had.
#[test]
fn spurious_timeouts_are_undone_without_going_back_n() {
    let text = |mode: &str| {
        let t = MPCP_QUEUE
            .replace("router = \"vcp\"", "router = \"dpcp\"")
            .replace("protocol = \"vcp\"", "protocol = \"dpcp\"");
        t.replace("count = 2\n", &format!("count = 2\nparams = {{ tcp = {{ spurious_rto = \"{mode}\" }} }}\n"))
    };
    let mut s = sim(&text("eifel"));
    s.run();
    let drops: u64 = s.port_summary().iter().map(|p| p.counters.drops).sum();
    let (retx, rtos, spurious) = loss_counters(&s);
    eprintln!("eifel: drops {drops}, retransmits {retx}, timeouts {rtos}, spurious {spurious}");
    assert_eq!(drops, 0);
    assert!(rtos > 0, "the scenario still provokes timeouts");
    assert_eq!(spurious, rtos, "nothing was lost: every timeout is spurious");
    assert_eq!(retx, rtos, "one retransmission per timeout, no go-back-N");
    let mut s = sim(&text("off"));
    s.run();
    let (retx, rtos, spurious) = loss_counters(&s);
    eprintln!("off: retransmits {retx}, timeouts {rtos}, spurious {spurious}");
    assert_eq!(spurious, 0);
    assert!(retx > 20 * rtos, "go-back-N resends whole windows: {retx} for {rtos} timeouts");
}

/// The TPCP dumbbell with chains of 4 (`chain = 4` on the router and the flows), optionally
/// with delayed ACKs.
fn dumbbell_chain_4(delayed_ack: bool) -> Simulator {
    let t = dumbbell_text("tpcp", delayed_ack)
        .replace("router = \"tpcp\"\n", "router = \"tpcp\"\nrouter_params = { chain = 4 }\n")
        .replace("protocol = \"tpcp\"\n", "protocol = \"tpcp\"\nparams = { chain = 4 }\n");
    assert!(t.contains("router_params = { chain = 4 }") && t.contains("params = { chain = 4 }"));
    let mut s = sim(&t);
    s.run();
    s
}

/// Chains of 4 (an 8-bit load factor) on the dumbbell hold what DPCP and TPCP hold there: no
/// drops, a small queue, a whole-run utilisation above VCP's. The first second's window growth
/// shows the digits after the MSP decoded (module docs of the delayed-ACK test: a sender
/// without them grows at VCP's ξ = 0.0625), with one ACK per packet and with delayed ACKs.
#[test]
fn dumbbell_with_chains_of_4() {
    let mut v = dumbbell("vcp");
    let v90 = time_to(&v, "r0->r1", 0.9);
    let vb = port(&mut v, "r0->r1");
    let v_grow = cwnd_pkts_at(&v, 0, 1.2) / cwnd_pkts_at(&v, 0, 0.5);
    let mut t3 = dumbbell("tpcp");
    let t3b = port(&mut t3, "r0->r1");
    for delayed_ack in [false, true] {
        let mut s = dumbbell_chain_4(delayed_ack);
        let b = port(&mut s, "r0->r1");
        let s90 = time_to(&s, "r0->r1", 0.9);
        let grow = cwnd_pkts_at(&s, 0, 1.2) / cwnd_pkts_at(&s, 0, 0.5);
        let g = goodput_per_flow(&s, 4, 20.0, 60.0);
        let (retx, rtos, _) = loss_counters(&s);
        eprintln!(
            "chain 4{}: utilisation {:.3} (TPCP {:.3}, VCP {:.3}), drops {}, queue mean {:.2} max {} pkts \
             (TPCP {:.2} / {}), 90 % after {s90:.1} s (VCP {v90:.1} s), flow 0 cwnd ×{grow:.1} in (0.5, 1.2] s \
             (VCP ×{v_grow:.1}), retransmits {retx}, timeouts {rtos}, goodput {:?} Mb/s",
            if delayed_ack { " delayed ACKs" } else { "" },
            b.utilisation,
            t3b.utilisation,
            vb.utilisation,
            b.counters.drops,
            b.mean_queue_pkts,
            b.max_queue_pkts,
            t3b.mean_queue_pkts,
            t3b.max_queue_pkts,
            g.iter().map(|x| (x / 1e4).round() / 100.0).collect::<Vec<_>>()
        );
        assert_eq!(b.router, "tpcp");
        assert_eq!(b.counters.drops, 0, "chain 4: drops");
        assert_eq!((retx, rtos), (0, 0), "chain 4: nothing lost, nothing resent");
        assert!(b.mean_queue_pkts < 2.0 && b.max_queue_pkts < 25, "chain 4: queue (buffer 125)");
        assert!(b.utilisation > vb.utilisation + 0.05, "chain 4: {} vs VCP {}", b.utilisation, vb.utilisation);
        assert!(
            (b.utilisation - t3b.utilisation).abs() < 0.02,
            "chain 4: {} vs TPCP {}",
            b.utilisation,
            t3b.utilisation
        );
        assert!(grow > 2.5 && v_grow < 1.5, "chain 4: start-up growth ×{grow} (VCP ×{v_grow}): the digits are decoded");
        assert!(s90 < 0.5 * v90, "chain 4: transition {s90} s vs VCP {v90} s");
        let total: f64 = g.iter().sum();
        assert!(total > 0.85 * 10e6, "chain 4: goodput {total}");
        assert!(g.iter().all(|&x| x > 0.8 * total / 4.0), "chain 4: unfair {g:?}");
    }
}
