//! The web-like on/off sources of VCP-DCCP §4 (`[[traffic]] kind = "web"`) in the engine:
//! sources switch on and off, each thinking a think time after its previous transfer
//! completes; their flows are made during the run and released when done; runs replay; bad
//! parameters are refused naming the key. (The laws themselves are tested against their CDFs
//! in `racc_sim::web`.)

mod common;

use racc_sim::scenario::from_toml;
use racc_sim::web::ThinkTime;
use racc_sim::Simulator;
use std::collections::BTreeMap;

/// `n` web sources s{i} -> d{i} on a 100 Mb/s dumbbell, RTT 2·(1+10+1) ms = 24 ms, 120 s.
fn on_off(n: usize, extra: &str) -> String {
    format!(
        r#"
duration = "120s"
seed = 5
packet_size = 1024
[topology]
kind = "dumbbell"
pairs = {n}
bottleneck = {{ capacity = "100Mbps", delay = "10ms", buffer = 500 }}
access = {{ capacity = "1Gbps", delay = "1ms" }}
[[traffic]]
name = "web"
kind = "web"
protocol = "newreno"
src = "s{{i}}"
dst = "d{{i}}"
sources = {n}
{extra}
[record]
interval = "100ms"
"#
    )
}

/// Per source (index into `spec.sources`): its flows' (start, end or None, size), in order made.
type Transfers = BTreeMap<usize, Vec<(u64, Option<u64>, u64)>>;

fn transfers(s: &Simulator) -> Transfers {
    let c = &s.completions;
    let ends: BTreeMap<u32, u64> = c.flow.iter().zip(&c.end_s).map(|(&f, &e)| (f, (e * 1e9).round() as u64)).collect();
    let mut out = Transfers::new();
    for f in 0..s.flow_count() {
        let info = s.flow_info(f);
        let src = info.source.expect("only web flows here");
        let size = info.size_bytes.expect("a web transfer has a size");
        out.entry(src).or_default().push((info.start, ends.get(&(f as u32)).copied(), size));
    }
    out
}

#[test]
fn sources_switch_on_and_off() {
    let n = 20;
    let mut s = common::sim(&on_off(n, ""));
    let seed = s.spec.seed;
    // Run in steps: the live endpoints never exceed one flow per source.
    let mut most_alive = 0;
    let mut t = 0;
    while !s.run_until(t) {
        most_alive = most_alive.max(s.running_flows());
        t += 50_000_000;
    }
    assert!(most_alive <= n, "{most_alive} flows alive at once from {n} sources");
    let tr = transfers(&s);
    let made = s.flow_count();
    assert!(made > 20 * n, "only {made} transfers from {n} sources in 120 s");

    for (&src, list) in &tr {
        // Replay the source's law from its completions: each transfer starts exactly one think
        // time (this source's next draw) after the previous one completes, with the drawn size.
        let mut law = s.spec.sources[src].law.source(seed);
        let first = law.first().expect("first transfer");
        assert_eq!((first.time, first.bytes), (list[0].0, list[0].2), "source {src}'s first transfer");
        for k in 0..list.len() {
            let (start, end, _) = list[k];
            let Some(end) = end else {
                // Never two at once: only a source's last transfer may still be running.
                assert_eq!(k, list.len() - 1, "source {src}: transfer {k} unfinished but followed by another");
                break;
            };
            assert!(end > start);
            let next = law.on_complete(end);
            match list.get(k + 1) {
                Some(&(next_start, _, next_size)) => {
                    let a = next.expect("the law gives the transfer the engine made");
                    assert_eq!((a.time, a.bytes), (next_start, next_size), "source {src}, transfer {}", k + 1);
                    assert!(next_start >= end, "source {src}: transfer {} starts before {k} completes", k + 1);
                }
                // After its last completion, the next think ends at or after the end of the run.
                None => assert_eq!(next, None, "source {src}: a transfer due before the end was not made"),
            }
        }
    }

    // The count against the renewal expectation: per source, 120 s / (E[T'] + mean transfer
    // time), where T' = min(T, 120 s): a think longer than the run ends the source's run
    // whatever its length, and the heavy component (η_h = 1.24) puts 0.63 s of E[T] = 2.18 s
    // beyond 120 s. "Roughly": within ±30 %, as that component has infinite variance, so its
    // sample mean over ~60 draws per source wanders.
    let c = &s.completions;
    let mean_fct = c.fct_s.iter().sum::<f64>() / c.fct_s.len() as f64;
    let think = truncated_mean(&ThinkTime::PAPER, 120.0);
    let expected = n as f64 * 120.0 / (think + mean_fct);
    let ratio = made as f64 / expected;
    println!("transfers {made}, expected {expected:.0} (E[min(T, 120 s)] {think:.3} s, mean FCT {mean_fct:.3} s), ratio {ratio:.3}");
    assert!((0.7..=1.3).contains(&ratio), "{made} transfers vs about {expected:.0} expected");
}

/// E[min(T, d)] = ∫_0^d P{T > t} dt, by the trapezoid rule on a grid fine near 0 (the light
/// component's median is 24.5 ms).
fn truncated_mean(law: &ThinkTime, d: f64) -> f64 {
    let n = 200_000;
    let x = |i: usize| d * (i as f64 / n as f64).powi(3);
    (0..n).map(|i| (x(i + 1) - x(i)) * (2.0 - law.cdf(x(i)) - law.cdf(x(i + 1))) / 2.0).sum()
}

#[test]
fn every_transfer_is_a_completion_and_runs_replay() {
    let text = on_off(5, "start = \"1s\"\nstop = \"60s\"");
    let run = || {
        let mut s = common::sim(&text);
        s.run();
        s
    };
    let (a, b) = (run(), run());
    assert_eq!(a.completions, b.completions);
    assert_eq!(a.flow_series, b.flow_series);
    assert_eq!(a.port_series, b.port_series);
    let made = a.flow_count();
    assert!(made > 25, "{made} transfers");
    // Every transfer but those still running at the end is in the completions table, with its
    // start and size; none starts before `start` or at/after `stop`.
    let c = &a.completions;
    assert!(c.flow.len() + 5 >= made && c.flow.len() <= made);
    for (i, &f) in c.flow.iter().enumerate() {
        let info = a.flow_info(f as usize);
        assert_eq!(info.size_bytes, Some(c.size_bytes[i]));
        assert_eq!((info.start as f64 * 1e-9), c.start_s[i]);
        assert!(info.start >= 1_000_000_000 && info.start < 60_000_000_000);
        assert_eq!(info.spec.group, "web");
    }
    // A made flow's receiver delivered exactly its file: the flow table's rows add up to it.
    let mut got: BTreeMap<u32, f64> = BTreeMap::new();
    let fs = &a.flow_series;
    for i in 0..fs.flow.len() {
        // Every row covers one 100 ms interval.
        *got.entry(fs.flow[i]).or_default() += fs.goodput_bps[i] * 0.1 / 8.0;
    }
    for (i, &f) in c.flow.iter().enumerate() {
        let g = got.get(&f).copied().unwrap_or(0.0);
        assert!(
            (g - c.size_bytes[i] as f64).abs() < 1e-6 * c.size_bytes[i] as f64,
            "flow {f}: {g} of {}",
            c.size_bytes[i]
        );
    }
}

#[test]
fn the_t3_experiment_has_one_web_source_per_subnet() {
    // SCENARIOS.md dccp-vcp-t3: 200 long-lived flows in 10 subnets of 20, plus web-like
    // sources as background; the shipped scenario puts one source in each subnet (on s0, s20,
    // ..., s180: `index_stride = 20`).
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/dccp-vcp-t3.toml"))
        .expect("T3 scenario");
    let spec = from_toml(&text, "dccp-vcp-t3.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(spec.flows.len(), 200);
    assert_eq!(spec.sources.len(), 10);
    for (k, s) in spec.sources.iter().enumerate() {
        // Node i is host s{i} in a dumbbell.
        assert_eq!(s.flow.src, 20 * k, "source {k} sits in subnet {k}");
        // It shares its subnet's RTPD (60 + 160·k/9 ms) with the long-lived flow on its host.
        let f = spec.flows.iter().find(|f| f.src == s.flow.src).expect("a long-lived flow on the host");
        assert_eq!((f.dst, f.fwd_route, f.rev_route), (s.flow.dst, s.flow.fwd_route, s.flow.rev_route));
        let want = 0.060 + 0.160 * k as f64 / 9.0;
        let got = spec.propagation_rtt(&s.flow) as f64 * 1e-9;
        assert!((got - want).abs() < 1e-5, "source {k}: RTPD {got} s, want {want}");
    }
    // Short runs of it build and run (a second of the whole experiment).
    let mut sim = Simulator::new(
        from_toml(&text.replace("duration = \"120s\"", "duration = \"1s\""), "dccp-vcp-t3.toml").unwrap(),
    )
    .unwrap();
    sim.run();
    assert!(sim.flow_count() > 200, "web transfers within the first second");
}

/// Refusal of `text` must name `key` and contain `reason_part`.
fn refused(text: &str, key: &str, reason_part: &str) {
    let e = from_toml(text, "bad.toml").expect_err("scenario should be refused");
    assert_eq!(e.source, "bad.toml");
    assert_eq!(e.key, key, "wrong key in: {e}");
    assert!(e.reason.contains(reason_part), "reason '{}' lacks '{reason_part}'", e.reason);
}

#[test]
fn bad_web_generators_are_refused() {
    let web = |extra: &str| on_off(3, extra);
    from_toml(&web(""), "ok.toml").expect("paper defaults");
    refused(&web("rate = 3.0"), "traffic[0].rate", "not a key of the 'web' kind");
    refused(&web("max_flows = 3"), "traffic[0].max_flows", "not a key of the 'web' kind");
    refused(&web("size = { dist = \"fixed\", size = 1000 }"), "traffic[0].size", "not a key");
    refused(&on_off(3, "").replace("sources = 3\n", ""), "traffic[0].sources", "missing");
    refused(&web("").replace("sources = 3", "sources = 0"), "traffic[0].sources", "must be 1..");
    refused(&web("index_offset = -1"), "traffic[0].index_offset", ">= 0");
    refused(&web("index_stride = 0"), "traffic[0].index_stride", "must be 1..");
    // Stride 2 puts 3 sources on s0, s2, s4: there is no s4 among 3 pairs.
    refused(&web("index_stride = 2"), "traffic[0].src", "no node named 's4'");
    refused(&web("").replace("sources = 3", "sources = 4"), "traffic[0].src", "no node named 's3'");
    refused(&web("start = \"130s\""), "traffic[0].start", "no time left");
    refused(&web("start = \"10s\"\nstop = \"5s\""), "traffic[0].start", "no time left");
    refused(&web("think = { p_h = 1.5 }"), "traffic[0].think.p_h", "probability");
    refused(&web("think = { p_h = 0.5, p_l = 0.4 }"), "traffic[0].think.p_l", "p_h + p_l must be 1");
    refused(&web("think = { pi_h = \"0s\" }"), "traffic[0].think.pi_h", "time > 0");
    refused(&web("think = { eta_l = 0.9 }"), "traffic[0].think.eta_l", "mean is finite only");
    refused(&web("think = { tau = 1 }"), "traffic[0].think.tau", "unknown field");
    refused(&web("file = { pi = -5 }"), "traffic[0].file.pi", "size > 0");
    refused(&web("file = { pi = \"1bdp\" }"), "traffic[0].file.pi", "only meaningful for buffers");
    refused(&web("file = { eta = 0 }"), "traffic[0].file.eta", "must be > 0");
    refused(&web("").replace("kind = \"web\"", "kind = \"webby\""), "traffic[0].kind", "known: poisson, web");
    // 3 sources for 120 s with a 1 ms mean think time: about 360 000 flows.
    refused(
        &format!("{}\n[limits]\nflows = 1000\n", web("think = { pi_h = \"1ms\", pi_l = \"1ms\" }")),
        "traffic[0].sources",
        "raise `limits.flows`",
    );
    // index_stride spaces the sources' hosts: 2 sources with stride 2 and offset 1 on s1, s3
    // (node i is s{i} in a dumbbell).
    let strided = on_off(4, "index_stride = 2\nindex_offset = 1").replace("sources = 4", "sources = 2");
    let spec = from_toml(&strided, "ok.toml").unwrap();
    assert_eq!(spec.sources.iter().map(|s| s.flow.src).collect::<Vec<_>>(), [1, 3]);
    // One of p_h, p_l alone sets the other.
    let spec = from_toml(&web("think = { p_h = 0.25 }"), "ok.toml").unwrap();
    assert_eq!(spec.sources[0].law_params["think"]["p_l"], 0.75);
    // Web keys on a Poisson generator.
    let poisson = web("").replace("kind = \"web\"", "kind = \"poisson\"");
    refused(&poisson, "traffic[0].sources", "a key of the 'web' kind");
    let strided = poisson.replace("sources = 3\n", "index_stride = 2\n");
    refused(&strided, "traffic[0].index_stride", "a key of the 'web' kind");
    let one_pair = poisson.replace("s{i}", "s0").replace("d{i}", "d0");
    refused(&one_pair.replace("sources = 3\n", "rate = 1.0\n"), "traffic[0].size", "missing: `size` is required");
    refused(&one_pair.replace("sources = 3\n", ""), "traffic[0].rate", "missing: `rate` is required");
}
