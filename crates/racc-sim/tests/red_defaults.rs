//! RED's defaults act on the link they are on, and a setting that cannot act is a warning
//! (issue 39 item 3; docs/PROTOCOLS.md §12).
//!
//! Before, RED's defaults were VCP-DCCP's min_th 150 / max_th 700 packets: on a 50-packet buffer
//! RED never reached min_th and ran exactly as DropTail, with nothing said. Now the thresholds
//! left out are ns-2.35's automatic ones (at 10 Mb/s and 1000-byte packets: min_th 5, max_th 15),
//! so RED marks, and the queue it keeps is below DropTail's.

mod common;
use common::{port, sim};
use racc_sim::notes;
use racc_sim::scenario::from_toml;

fn scenario(buffer: &str, router: &str) -> String {
    format!(
        r#"
name = "red-defaults"
duration = "20s"
seed = 1
packet_size = 1000
[topology]
kind = "dumbbell"
pairs = 4
bottleneck = {{ capacity = "10Mbps", delay = "10ms", buffer = "{buffer}", {router} }}
access = {{ capacity = "100Mbps", delay = "5ms" }}
[[flows]]
protocol = "newreno"
src = "s{{i}}"
dst = "d{{i}}"
count = 4
ecn = true
start_spread = "1s"
"#
    )
}

#[test]
fn default_red_acts_on_a_small_buffer_where_the_old_defaults_were_droptail() {
    let red = r#"router = "red", router_params = { action = "mark" }"#;
    let old = r#"router = "red", router_params = { action = "mark", min_th = 150, max_th = 700, w_q = 0.002 }"#;
    let run = |router: &str| {
        let mut s = sim(&scenario("50pkt", router));
        s.run();
        port(&mut s, "r0->r1")
    };
    let (auto, paper, droptail) = (run(red), run(old), run(r#"router = "droptail""#));
    // The old defaults: never a mark, the buffer's tail drops as DropTail's.
    assert_eq!(paper.counters.marks, 0);
    assert!(paper.counters.drops > 0);
    // The automatic thresholds mark, and hold the queue below DropTail's (min_th 5, max_th 15:
    // the average stays near 2·max_th at most, under two thirds of the 50-packet buffer).
    assert!(auto.counters.marks > 50, "{:?}", auto.counters);
    assert!(
        auto.mean_queue_pkts < 0.5 * droptail.mean_queue_pkts,
        "{} vs {}",
        auto.mean_queue_pkts,
        droptail.mean_queue_pkts
    );
}

#[test]
fn warnings_name_the_key_and_the_port_and_come_before_the_run() {
    let warn = |buffer: &str, router: &str| {
        let spec = from_toml(&scenario(buffer, router), "w.toml").unwrap();
        notes::warnings(&spec).unwrap()
    };
    let paper = r#"router = "red", router_params = { min_th = 150, max_th = 700 }"#;
    let w = warn("40pkt", paper);
    // Both directions of the bottleneck: one warning each, on the link's router_params.
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w.iter().all(|w| w.key == "topology.bottleneck.router_params" && w.reason.contains("never acts")));
    assert!(w[0].reason.contains("r0->r1") && w[1].reason.contains("r1->r0"), "{w:?}");
    assert!(w[0].reason.contains("buffer of 40 packets"), "{w:?}");
    // max_th alone above the buffer: a different warning.
    let w = warn("400pkt", paper);
    assert!(w.len() == 2 && w[0].reason.contains("max_th 700") && !w[0].reason.contains("never acts"), "{w:?}");
    // Fitting thresholds, automatic ones on a buffer of at least max_th, and DropTail: none.
    assert!(warn("1000pkt", paper).is_empty());
    assert!(warn("40pkt", r#"router = "red""#).is_empty());
    assert!(warn("10pkt", r#"router = "droptail""#).is_empty());
}

#[test]
fn empty_measurements_are_warned_of() {
    let lossy = scenario("40pkt", r#"router = "droptail", loss = { model = "bernoulli", p = 1.0 }"#);
    let w = notes::warnings(&from_toml(&lossy, "w.toml").unwrap()).unwrap();
    assert!(w.iter().any(|w| w.key == "topology.bottleneck.loss" && w.reason.contains("every packet")), "{w:?}");
}

#[test]
fn the_settings_a_run_used_are_reported_per_port() {
    let spec = from_toml(&scenario("40pkt", r#"router = "red""#), "s.toml").unwrap();
    let s = notes::port_settings(&spec).unwrap();
    let r0 = s.iter().find(|p| p.port == "r0->r1").expect("the bottleneck's port");
    let get = |k: &str| r0.settings.iter().find(|(n, _)| *n == k).unwrap().1;
    assert_eq!((get("min_th"), get("max_th"), get("max_p")), (5.0, 15.0, 0.1));
    // DropTail ports derive nothing.
    assert!(s.iter().all(|p| p.port.starts_with("r0->r1") || p.port.starts_with("r1->r0")), "{s:?}");
}
