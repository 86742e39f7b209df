//! TCP/DCP-EW on the engine (DCP-EW §III–IV; docs/PROTOCOLS.md §4), against TCP/DPCP and TCP/VCP
//! on the same topologies.
//!
//! - (a) Loss-free dumbbell (scenarios/vcp-dumbbell.toml, protocol swapped): DCP-EW ≈ DPCP.
//! - (b) The same dumbbell with 5 % Gilbert–Elliott loss (mean burst 2) on the bottleneck:
//!   DCP-EW's bit map keeps cwnd on error losses; DPCP and VCP halve on every one.
//! - (c) The tunnel claim: s_i - g1 - r - g2 - d_i with an IPsec tunnel g1 ⇄ g2 and the
//!   bottleneck r -> g2 inside it. DCP-EW orders by the outer IP ID and its SMs carry the 4-bit
//!   LF across the boundaries; DPCP's routers cannot read seq/ack inside the tunnel, so every
//!   packet reads as an MSP there and the senders' LSP echoes only repeat the MSP digit.
//!
//! Bounds come from DCP-EW's wording, read by one rule (issue 12): "nearly identical" and
//! "comparable" mean within 0.03 of utilisation (the tolerance of the experiments' "equal"
//! claims); "higher", "better", "outperform" mean strictly greater; "significantly" means at
//! least 1.5 times. Where racc falls short of a claim, a `known_shortfall` test asserts the
//! shortfall with the measured numbers, so that it fails (and must become the claim's test)
//! the day the claim holds.

mod common;
use common::{goodput_per_flow, port, sim};
use racc_sim::Simulator;

const DUMBBELL: &str = include_str!("../../../scenarios/vcp-dumbbell.toml");

fn dumbbell_text(proto: &str, loss: Option<&str>, params: &str) -> String {
    let mut t = DUMBBELL
        .replace("router = \"vcp\"", &format!("router = \"{proto}\""))
        .replace("router_params = { t_p = 0.2, t_q = 0.01, k_q = 0.5, a = 0.875, gamma = 0.98 }\n", "")
        .replace("protocol = \"vcp\"", &format!("protocol = \"{proto}\""))
        .replace(
            "params = { t_p = 0.2, mu = 0.0625, alpha = 1.0, beta = 0.875, sigma_mi = 2.5, sigma_ai = 10.0, md_hold = \"t_p\", iw = 2, initial_slow_start = false }\n",
            params,
        );
    if let Some(l) = loss {
        t = t.replace("buffer = \"1bdp\"\n", &format!("buffer = \"1bdp\"\nloss = {l}\n"));
        assert!(t.contains("loss = "));
    }
    assert!(t.contains(&format!("protocol = \"{proto}\"")));
    t
}

fn run(text: &str) -> Simulator {
    let mut s = sim(text);
    s.run();
    s
}

const GE5: &str = "{ model = \"gilbert_elliott\", loss = 0.05, burst = 2 }";

/// Whole-run bottleneck summary, per-flow goodput over (20, 60] s, and the coefficient of
/// variation of the sampled cwnds over the same span.
struct Run {
    util: f64,
    drops: u64,
    losses: u64,
    queue_mean: f64,
    queue_max: u32,
    goodput: Vec<f64>,
    cwnd_cv: f64,
}

fn measure(text: &str, bottleneck: &str) -> Run {
    let mut s = run(text);
    let b = port(&mut s, bottleneck);
    let goodput = goodput_per_flow(&s, 4, 20.0, 60.0);
    let fs = &s.flow_series;
    let cw: Vec<f64> = (0..fs.time_s.len()).filter(|&i| fs.time_s[i] > 20.0).map(|i| fs.cwnd_bytes[i]).collect();
    let mean = cw.iter().sum::<f64>() / cw.len() as f64;
    let sd = (cw.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / cw.len() as f64).sqrt();
    Run {
        util: b.utilisation,
        drops: b.counters.drops,
        losses: b.counters.losses,
        queue_mean: b.mean_queue_pkts,
        queue_max: b.max_queue_pkts,
        goodput,
        cwnd_cv: sd / mean,
    }
}

fn show(tag: &str, r: &Run) {
    eprintln!(
        "{tag}: utilisation {:.3}, drops {}, losses {}, queue mean {:.2} max {}, goodput {:?} Mb/s (Jain {:.3}), cwnd cv {:.3}",
        r.util,
        r.drops,
        r.losses,
        r.queue_mean,
        r.queue_max,
        r.goodput.iter().map(|x| (x / 1e4).round() / 100.0).collect::<Vec<_>>(),
        racc_sim::metrics::jain(&r.goodput),
        r.cwnd_cv
    );
}

/// DCP-EW §IV.A: "if no wireless loss is introduced, DCP-EW and DPCP achieve nearly identical
/// performance". Measured on this build (seed 1): VCP 0.817, DPCP 0.907, DCP-EW 0.907 (the very
/// same run: with incrementing IDs the positions are DPCP's).
#[test]
fn a_loss_free_dumbbell_dcpew_matches_dpcp() {
    let v = measure(&dumbbell_text("vcp", None, ""), "r0->r1");
    let d = measure(&dumbbell_text("dpcp", None, ""), "r0->r1");
    let e = measure(&dumbbell_text("dcpew", None, ""), "r0->r1");
    show("(a) vcp", &v);
    show("(a) dpcp", &d);
    show("(a) dcpew", &e);
    assert!((e.util - d.util).abs() < 0.03, "DCP-EW {} vs DPCP {}", e.util, d.util);
    let (je, jd) = (racc_sim::metrics::jain(&e.goodput), racc_sim::metrics::jain(&d.goodput));
    assert!((je - jd).abs() < 0.03, "Jain DCP-EW {je} vs DPCP {jd}");
    assert_eq!(e.drops, 0);
    // DCP-EW §VI: both "significantly outperform VCP in terms of [...] efficiency".
    assert!(e.util > v.util && d.util > v.util, "DCP-EW {} DPCP {} VCP {}", e.util, d.util, v.util);
}

/// DCP-EW §III.B: with random IP IDs "it is safe to assume that bit flips, with a probability of
/// 0.5, occur quick enough", so random-ID DCP-EW is still DPCP's equal (within 0.03). **racc falls
/// short**: half the echoes are out of sequence and read as (MSP, 11), so growth in the low and
/// high zones is slower. Measured on this build (seeds 1-6): utilisation 0.798-0.818 against
/// DPCP's 0.902-0.907 (VCP 0.813-0.817), Jain 0.886-0.986, loss-free, queue under 2 packets.
/// What holds is asserted (no drops, a queue under 2 packets); the gap to
/// DPCP is asserted as the shortfall, over seeds 1-3 on the mean.
#[test]
fn a_random_ip_ids_known_shortfall_below_dpcp() {
    let mut gaps = Vec::new();
    for seed in 1..=3 {
        let with_seed = |t: String| t.replacen("seed = 1\n", &format!("seed = {seed}\n"), 1);
        let d = measure(&with_seed(dumbbell_text("dpcp", None, "")), "r0->r1");
        let er = measure(&with_seed(dumbbell_text("dcpew", None, "params = { ip_id = \"random\" }\n")), "r0->r1");
        show(&format!("(a) seed {seed} dcpew random IDs"), &er);
        assert_eq!(er.drops, 0, "random IDs, seed {seed}");
        assert!(er.queue_mean < 2.0, "random IDs, seed {seed}");
        gaps.push(d.util - er.util);
    }
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    assert!(
        mean >= 0.03,
        "random-ID DCP-EW is now within 0.03 of DPCP on the mean (gaps {gaps:?}): DCP-EW §III.B's claim holds; \
         turn this expected failure into the claim's test"
    );
}

/// DCP-EW §IV.B's claim on the vcp-dumbbell (5 % GE loss): DCP-EW > DPCP > VCP, DCP-EW
/// significantly above DPCP. Measured on this build (seed 1, 5 % GE loss, burst 2, forward
/// direction of the bottleneck):
/// VCP 0.033, DPCP 0.178, DCP-EW 0.239 whole-run utilisation (no SACK here). (0.207 and 0.392
/// before the VCP family's growth stopped counting the packets duplicate ACKs had already
/// reported (`tcp::growth_packets`): DCP-EW's timeouts were followed by one cumulative ACK for
/// the whole repaired window, whose per-packet MI rebuilt cwnd at once. ns-2, the seed's
/// simulator, grows once per ACK, so the old gap was in part that artefact.)
/// DCP-EW's 1.30 times DPCP (0.223 / 0.172 now) is short of "significantly" (1.5): asserted as a
/// known shortfall.
#[test]
fn b_lossy_dumbbell_dcpew_above_dpcp_and_vcp_known_shortfall_significantly() {
    let v = measure(&dumbbell_text("vcp", Some(GE5), ""), "r0->r1");
    let d = measure(&dumbbell_text("dpcp", Some(GE5), ""), "r0->r1");
    let e = measure(&dumbbell_text("dcpew", Some(GE5), ""), "r0->r1");
    show("(b) vcp", &v);
    show("(b) dpcp", &d);
    show("(b) dcpew", &e);
    assert!(e.losses > 500, "the loss model is on");
    // DCP-EW §IV: "DPCP achieves a higher bandwidth utilization than VCP"; DCP-EW "can
    // significantly outperform DPCP": the order holds ...
    assert!(e.util > d.util && d.util > v.util, "DCP-EW {} > DPCP {} > VCP {}", e.util, d.util, v.util);
    assert_eq!(e.drops, 0, "error losses kept cwnd, yet no queue overflow");
    // ... but not "significantly" (1.5 times): a known shortfall, measured 0.223 / 0.172 = 1.30.
    assert!(
        e.util < 1.5 * d.util,
        "DCP-EW {} is now at least 1.5 x DPCP {}: DCP-EW's 'significantly' holds on this dumbbell; assert it instead",
        e.util,
        d.util
    );
}

fn tunnel_text(proto: &str, params: &str) -> String {
    format!(
        r#"
name = "dcpew-ipsec-test"
duration = "60s"
seed = 1
packet_size = 1000
[topology]
kind = "explicit"
nodes = [
  {{ name = "s0", kind = "host" }}, {{ name = "s1", kind = "host" }}, {{ name = "s2", kind = "host" }}, {{ name = "s3", kind = "host" }},
  {{ name = "g1" }}, {{ name = "r" }}, {{ name = "g2" }},
  {{ name = "d0", kind = "host" }}, {{ name = "d1", kind = "host" }}, {{ name = "d2", kind = "host" }}, {{ name = "d3", kind = "host" }},
]
links = [
  {{ a = "s0", b = "g1", capacity = "100Mbps", delay = "2ms" }},
  {{ a = "s1", b = "g1", capacity = "100Mbps", delay = "2ms" }},
  {{ a = "s2", b = "g1", capacity = "100Mbps", delay = "2ms" }},
  {{ a = "s3", b = "g1", capacity = "100Mbps", delay = "2ms" }},
  {{ a = "g1", b = "r", capacity = "100Mbps", delay = "3ms", router = "{proto}" }},
  {{ a = "r", b = "g2", capacity = "10Mbps", delay = "40ms", buffer = "1bdp", router = "{proto}" }},
  {{ a = "g2", b = "d0", capacity = "100Mbps", delay = "5ms", router = "{proto}" }},
  {{ a = "g2", b = "d1", capacity = "100Mbps", delay = "5ms", router = "{proto}" }},
  {{ a = "g2", b = "d2", capacity = "100Mbps", delay = "5ms", router = "{proto}" }},
  {{ a = "g2", b = "d3", capacity = "100Mbps", delay = "5ms", router = "{proto}" }},
]
[[tunnels]]
id = 1
between = ["g1", "g2"]
[[flows]]
protocol = "{proto}"
src = "s{{i}}"
dst = "d{{i}}"
count = 4
start_spread = "1s"
{params}
[record]
interval = "100ms"
"#
    )
}

/// The tunnel claim. Measured on this build (seed 1, 60 s, bottleneck r -> g2 inside the
/// tunnel): DCP-EW utilisation 0.903, queue mean 0.25 pkts, cwnd cv 0.15, Jain 0.98; DPCP
/// 0.791, queue mean 11.6 (max 49), cwnd cv 0.69, goodput 3.5/1.1/0.7/2.1 Mb/s; VCP 0.817.
/// DPCP's routers read every tunnel packet as an MSP, so its LSP echoes repeat the MSP digit
/// (01 01: ξ = 1, the fastest MI; 11 11: MD 0.43) — the protocol-level proof is
/// `racc-proto/src/dcpew/tests.rs`; here the consequence: a bursty, unfair loop with a
/// standing queue, no better than VCP. DCP-EW keeps its loss-free-dumbbell behaviour.
#[test]
fn c_through_an_ipsec_tunnel_dcpew_keeps_the_4_bit_lf() {
    let v = measure(&tunnel_text("vcp", ""), "r->g2");
    let d = measure(&tunnel_text("dpcp", ""), "r->g2");
    let e = measure(&tunnel_text("dcpew", ""), "r->g2");
    // Behind the ingress gateway the positions are the outer IDs' parity and the egress SM sets
    // the inner seq/ack order the receiver echoes, so the senders' own IP ID generator plays no
    // part: random IDs (with the exception limit off, their setting) give the same run.
    let e0 = measure(&tunnel_text("dcpew", "params = { ip_id = \"random\", exception_limit = 0 }"), "r->g2");
    show("(c) vcp", &v);
    show("(c) dpcp", &d);
    show("(c) dcpew", &e);
    show("(c) dcpew random IP IDs", &e0);
    assert_eq!((e0.goodput.clone(), e0.util, e0.queue_max), (e.goodput.clone(), e.util, e.queue_max));
    assert_eq!(e.drops, 0);
    assert!(e.util > 0.88, "{}", e.util);
    assert!(e.util > d.util + 0.05, "DCP-EW {} vs DPCP {}", e.util, d.util);
    assert!(e.queue_mean < 1.0 && e.queue_max < 20);
    assert!(racc_sim::metrics::jain(&e.goodput) > 0.95);
    // DPCP inside the tunnel: a standing queue, large cwnd swings, unfair shares.
    assert!(d.queue_mean > 10.0 * e.queue_mean, "DPCP queue {} vs DCP-EW {}", d.queue_mean, e.queue_mean);
    assert!(d.cwnd_cv > 3.0 * e.cwnd_cv, "DPCP cwnd cv {} vs DCP-EW {}", d.cwnd_cv, e.cwnd_cv);
    assert!(racc_sim::metrics::jain(&d.goodput) < 0.9);
    assert!(d.util < v.util + 0.02, "DPCP in the tunnel is no better than VCP");
}

const LOSS_SCENARIO: &str = include_str!("../../../scenarios/dcpew-dumbbell-loss.toml");
const IPSEC_SCENARIO: &str = include_str!("../../../scenarios/dcpew-ipsec.toml");

fn swap(text: &str, proto: &str) -> String {
    let t = text
        .replace("router = \"dcpew\"", &format!("router = \"{proto}\""))
        .replace("protocol = \"dcpew\"", &format!("protocol = \"{proto}\""));
    if proto == "dcpew" {
        t
    } else {
        t.replace("router_params = { per_inner_flow = false }", "")
            .replace("params = { ip_id = \"increment\", bm_bits = 32, bm_threshold = 16, ew_loss_md = \"level\", ew_apply_to_rto = false }\n", "")
    }
}

/// The scenario files as shipped, with the protocol swapped. dcpew-dumbbell-loss (10 % GE, SACK
/// on as on the seed's Linux testbed), mean utilisation over seeds 1–3, measured on this build:
/// VCP 0.041, DPCP 0.221, DCP-EW 0.358 (1.62 times DPCP). Without SACK (`sack = false`): DPCP 0.231, DCP-EW 0.275:
/// NewReno repairs one hole per RTT, its impatient timer fires, and at a timeout both protocols
/// use TCP's rule (`ew_apply_to_rto` off), so the bit map decides only on the few fast
/// retransmits that complete. With SACK most loss episodes end in recovery, where DCP-EW keeps
/// its window.
/// dcpew-ipsec: as test (c).
#[test]
fn scenario_files_run_and_order_the_protocols() {
    let mut u = Vec::new();
    for proto in ["vcp", "dpcp", "dcpew"] {
        let mut mean = 0.0;
        for seed in 1..=3 {
            let text = swap(LOSS_SCENARIO, proto).replacen("seed = 1\n", &format!("seed = {seed}\n"), 1);
            let mut s = run(&text);
            let b = port(&mut s, "r0->r1");
            eprintln!(
                "dcpew-dumbbell-loss (10 %) {proto} seed {seed}: utilisation {:.3}, losses {}",
                b.utilisation, b.counters.losses
            );
            mean += b.utilisation / 3.0;
        }
        u.push(mean);
    }
    // DCP-EW §IV.B: DCP-EW "significantly better [...] than both DPCP and VCP" (1.5 times),
    // "DPCP achieves a higher bandwidth utilization than VCP".
    assert!(u[2] >= 1.5 * u[1] && u[1] > u[0], "DCP-EW >= 1.5 x DPCP, DPCP > VCP: {u:?}");
    let mut u = Vec::new();
    for proto in ["dpcp", "dcpew"] {
        let mut s = run(&swap(IPSEC_SCENARIO, proto));
        let b = port(&mut s, "r->g2");
        eprintln!("dcpew-ipsec {proto}: utilisation {:.3}, queue mean {:.2}", b.utilisation, b.mean_queue_pkts);
        u.push((b.utilisation, b.mean_queue_pkts));
    }
    assert!(u[1].0 > u[0].0 + 0.05 && u[1].1 < u[0].1, "{u:?}");
}

/// DCP-EW §IV.B's upper end: 20 % and 30 % GE loss on the scenario file's dumbbell. Not a
/// claim we fully reproduce: measured on this build (seed 1, 120 s, SACK as in the file), 20 %:
/// VCP 0.020, DPCP 0.101, DCP-EW 0.149 — 0.218 when its bit map also governs timeouts
/// (`ew_apply_to_rto`); 30 %: VCP 0.021, DPCP 0.024, DCP-EW 0.023 (0.051), all collapsed to
/// timeouts. Lost retransmissions end in timeouts that back the RTO off, and TCP's timeout rule,
/// which DCP-EW keeps by default, resets the window whatever the bit map says. An open issue:
/// run with `--ignored` to see the figures.
#[test]
#[ignore]
fn heavy_loss_collapses_to_timeouts() {
    for l in ["loss = 0.2,", "loss = 0.3,"] {
        for proto in ["vcp", "dpcp", "dcpew"] {
            let mut s = run(&swap(LOSS_SCENARIO, proto).replace("loss = 0.1,", l));
            let b = port(&mut s, "r0->r1");
            eprintln!("{l} {proto}: utilisation {:.3}, losses {}", b.utilisation, b.counters.losses);
        }
        let t = LOSS_SCENARIO.replace("loss = 0.1,", l).replace("ew_apply_to_rto = false", "ew_apply_to_rto = true");
        let mut s = run(&t);
        eprintln!("{l} dcpew ew_apply_to_rto: utilisation {:.3}", port(&mut s, "r0->r1").utilisation);
    }
}
