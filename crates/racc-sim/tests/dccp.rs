//! DCCP CCID2 and DCCP/VCP on the engine (RFC 4341; VCP-DCCP §2–3; docs/PROTOCOLS.md §2, §11):
//! finite transfers complete through DropTail, RED with ECN marking and a VCP router; N
//! long-lived DCCP/VCP flows through a VCP router hold the steady rate of VCP-DCCP Eq. 9.

mod common;
use common::{goodput_per_flow, port, sim};
use racc_proto::dccp::fluid::{equilibrium, FluidParams};
use racc_sim::Simulator;

/// Wire bytes of a data packet and its payload (IPv4 20 + DCCP 16 bytes of header).
const PKT: f64 = 1024.0;
const MSS: f64 = 1024.0 - 36.0;

/// A dumbbell of `pairs` flows of `protocol` through `router` at `capacity`, RTPD
/// 2·(2·access + bottleneck delay), 1024-byte packets.
#[derive(Clone, Copy)]
struct Dumbbell<'a> {
    protocol: &'a str,
    pairs: usize,
    capacity: &'a str,
    access_ms: f64,
    bottleneck_ms: f64,
    router: &'a str,
    size: Option<&'a str>,
    duration: &'a str,
}

fn dumbbell(d: &Dumbbell) -> String {
    let Dumbbell { protocol, pairs, capacity, access_ms, bottleneck_ms, router, size, duration } = *d;
    let size = size.map_or(String::new(), |s| format!("size = \"{s}\""));
    format!(
        r#"
duration = "{duration}"
seed = 1
packet_size = 1024
min_rto = "200ms"

[topology]
kind = "dumbbell"
pairs = {pairs}
access = {{ capacity = "1Gbps", delay = "{access_ms}ms" }}

[topology.bottleneck]
capacity = "{capacity}"
delay = "{bottleneck_ms}ms"
buffer = "1bdp"
{router}

[[flows]]
protocol = "{protocol}"
src = "s{{i}}"
dst = "d{{i}}"
count = {pairs}
start_spread = "1s"
{size}

[record]
interval = "100ms"
"#
    )
}

/// Finite transfers of 1 MB: every flow completes, nothing is ever resent, and what arrives
/// is at most what was sent (DCCP is unreliable: losses are not repaired).
fn complete(text: &str, flows: usize) -> Simulator {
    let mut s = sim(text);
    s.run();
    let c = &s.completions;
    assert_eq!(c.flow.len(), flows, "every flow completes");
    assert!(c.size_bytes.iter().all(|&b| b == 1_000_000));
    let fs = &s.flow_series;
    assert!(fs.retransmits.iter().all(|&r| r == 0), "CCID2 never retransmits");
    assert!(s.goodput_bytes() <= flows as u64 * 1_000_000);
    s
}

#[test]
fn dccp_completes_a_finite_transfer_over_droptail() {
    let mut s = complete(
        &dumbbell(&Dumbbell {
            protocol: "dccp",
            pairs: 3,
            capacity: "10Mbps",
            access_ms: 5.0,
            bottleneck_ms: 20.0,
            router: "",
            size: Some("1MB"),
            duration: "30s",
        }),
        3,
    );
    let bn = port(&mut s, "r0->r1");
    eprintln!(
        "droptail: FCT {:?} s, delivered {} B, drops {}",
        s.completions.fct_s,
        s.goodput_bytes(),
        bn.counters.drops
    );
    // Slow start overflows the one-BDP buffer: the lost packets stay lost.
    assert!(s.goodput_bytes() + bn.counters.drops * MSS as u64 >= 3_000_000);
}

#[test]
fn dccp_completes_a_finite_transfer_over_red_with_ecn_marks() {
    let red = r#"router = "red"
router_params = { min_th = 5, max_th = 30, max_p = 0.1, w_q = 0.002, gentle = true, mode = "packet", action = "mark" }"#;
    let mut s = complete(
        &dumbbell(&Dumbbell {
            protocol: "dccp",
            pairs: 3,
            capacity: "10Mbps",
            access_ms: 5.0,
            bottleneck_ms: 20.0,
            router: red,
            size: Some("1MB"),
            duration: "30s",
        }),
        3,
    );
    let bn = port(&mut s, "r0->r1");
    eprintln!(
        "red: FCT {:?} s, delivered {} B, marks {}, drops {}",
        s.completions.fct_s,
        s.goodput_bytes(),
        bn.counters.marks,
        bn.counters.drops
    );
    assert!(bn.counters.marks > 0, "DCCP data is ECN-capable: RED marks it");
}

#[test]
fn dccp_vcp_completes_a_finite_transfer_through_a_vcp_router() {
    let mut s = complete(
        &dumbbell(&Dumbbell {
            protocol: "dccp-vcp",
            pairs: 3,
            capacity: "10Mbps",
            access_ms: 5.0,
            bottleneck_ms: 20.0,
            router: r#"router = "vcp""#,
            size: Some("1MB"),
            duration: "60s",
        }),
        3,
    );
    let bn = port(&mut s, "r0->r1");
    eprintln!("vcp: FCT {:?} s, delivered {} B, drops {}", s.completions.fct_s, s.goodput_bytes(), bn.counters.drops);
    assert_eq!(bn.counters.drops, 0, "no slow start, no overflow");
    assert_eq!(s.goodput_bytes(), 3_000_000, "nothing lost, every byte delivered");
}

/// VCP-DCCP §3: N DCCP/VCP flows with the same RTT through one VCP router settle at Eq. 9's
/// r* (= γC/N + (ζ−1)sγ/(2NR) + α/(hR), `racc_proto::dccp::fluid`); §4 checks it against the
/// measured rate of a 60 ms flow ("matches well"). We hold the mean wire rate per flow over the
/// last 40 s of 60 to within 10 % of r* (docs/PROTOCOLS.md §2's oracle window) for three (N, C,
/// RTPD) settings at reduced scale (the equilibrium is per-flow γC/N whatever the scale).
/// R_q is taken as 0: VCP's queue stays near empty, and R_q moves r* by under 0.1 % here.
fn eq9(pairs: usize, capacity_bps: f64, access_ms: f64, bottleneck_ms: f64) -> (f64, f64) {
    let cap = format!("{}Mbps", capacity_bps / 1e6);
    let text = dumbbell(&Dumbbell {
        protocol: "dccp-vcp",
        pairs,
        capacity: &cap,
        access_ms,
        bottleneck_ms,
        router: r#"router = "vcp""#,
        size: None,
        duration: "60s",
    });
    let mut s = sim(&text);
    s.run();
    let rtpd = 2.0 * (2.0 * access_ms + bottleneck_ms) / 1e3;
    let want = equilibrium(&FluidParams::seed(pairs as f64, capacity_bps, rtpd)).rate_bps;
    let rates: Vec<f64> = goodput_per_flow(&s, pairs, 20.0, 60.0).iter().map(|g| g * PKT / MSS).collect();
    let mean = rates.iter().sum::<f64>() / pairs as f64;
    let bn = port(&mut s, "r0->r1");
    eprintln!(
        "N {pairs}, C {cap}, RTPD {:.0} ms: mean {:.1} kb/s vs Eq. 9 {:.1} kb/s ({:+.1} %); per flow {:?} kb/s; drops {}, mean queue {:.1} pkts",
        rtpd * 1e3,
        mean / 1e3,
        want / 1e3,
        100.0 * (mean / want - 1.0),
        rates.iter().map(|r| (r / 100.0).round() / 10.0).collect::<Vec<_>>(),
        bn.counters.drops,
        bn.mean_queue_pkts
    );
    (mean, want)
}

#[test]
fn dccp_vcp_holds_eq9_rate_4_flows_10mbps_100ms() {
    let (got, want) = eq9(4, 10e6, 5.0, 40.0);
    assert!((got / want - 1.0).abs() <= 0.10, "{got} vs {want}");
}

#[test]
fn dccp_vcp_holds_eq9_rate_10_flows_20mbps_60ms() {
    let (got, want) = eq9(10, 20e6, 5.0, 20.0);
    assert!((got / want - 1.0).abs() <= 0.10, "{got} vs {want}");
}

#[test]
fn dccp_vcp_holds_eq9_rate_3_flows_5mbps_200ms() {
    let (got, want) = eq9(3, 5e6, 20.0, 60.0);
    assert!((got / want - 1.0).abs() <= 0.10, "{got} vs {want}");
}
