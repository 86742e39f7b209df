//! QFCP flows that start together, one after another, and in numbers (issue 39 item 1;
//! docs/PROTOCOLS.md §9 "Starts"). Rates are compared on the wire, as capacity is (1000 / 944: IPv4
//! 20, TCP 20 and QFCP 16 bytes of every 1000-byte packet).

mod common;
use common::{port, sim};

/// Wire bytes per payload byte of a full QFCP packet.
const WIRE: f64 = 1000.0 / 944.0;

const SIMULTANEOUS: &str = include_str!("scenarios/qfcp-simultaneous.toml");

fn flow_metric(fs: &racc_sim::metrics::FlowSeries, name: &str, j: usize) -> f64 {
    match fs.named.get(name).map(|c| &c.values) {
        Some(racc_sim::metrics::ColumnValues::Gauge(v)) => v[j],
        Some(racc_sim::metrics::ColumnValues::Count(v)) => v[j] as f64,
        _ => f64::NAN,
    }
}

/// What a run gives: each flow's wire rate over (from, to], the bottleneck's utilisation over
/// (from, to] and its drops over the whole run with the packets it took in, and each flow's
/// lowest wire rate over a 2 s window (by 100 ms steps) inside (from, to], b/s.
#[derive(Debug)]
struct Outcome {
    rates: Vec<f64>,
    utilisation: f64,
    drops: u64,
    arrivals: u64,
    worst_2s: Vec<f64>,
}

/// Run `toml` and measure it over (from, to] s. Flows are numbered by the engine; the
/// 2 s windows slide by one record interval.
fn outcome(toml: &str, from: f64, to: f64) -> Outcome {
    let mut s = sim(toml);
    s.run();
    let n = s.spec.flows.len();
    let fs = &s.flow_series;
    let mut series = vec![Vec::new(); n];
    for j in 0..fs.time_s.len() {
        let t = fs.time_s[j];
        if t > from + 1e-9 && t <= to + 1e-9 {
            series[fs.flow[j] as usize].push((t, fs.goodput_bps[j] * WIRE));
        }
    }
    let rates = series.iter().map(|v| v.iter().map(|x| x.1).sum::<f64>() / v.len().max(1) as f64).collect();
    let worst_2s = series
        .iter()
        .map(|v| {
            let k = v.iter().take_while(|x| x.0 <= v[0].0 + 2.0 - 1e-6).count().max(1);
            v.windows(k).map(|w| w.iter().map(|x| x.1).sum::<f64>() / k as f64).fold(f64::INFINITY, f64::min)
        })
        .collect();
    let idx = port(&mut s, "r0->r1").port as u32;
    let p = &s.port_series;
    let (mut busy, mut cnt) = (0.0, 0);
    for i in 0..p.time_s.len() {
        if p.port[i] == idx && p.time_s[i] > from + 1e-9 && p.time_s[i] <= to + 1e-9 {
            busy += p.utilisation[i];
            cnt += 1;
        }
    }
    let ps = port(&mut s, "r0->r1");
    Outcome {
        rates,
        utilisation: busy / cnt.max(1) as f64,
        drops: ps.counters.drops,
        arrivals: ps.counters.arrivals,
        worst_2s,
    }
}

/// Diagnostic: the simultaneous-start dumbbell, sample by sample.
#[test]
#[ignore = "diagnostic: prints the trace"]
fn trace_of_the_simultaneous_start() {
    let env = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
    let toml = SIMULTANEOUS
        .replace("interval = \"100ms\"", &format!("interval = \"{}\"", env("RACC_TRACE_REC", "100ms")))
        .replace("protocol = \"qfcp\"\n", &format!("protocol = \"qfcp\"\n{}\n", env("RACC_TRACE_PARAMS", "")));
    let mut s = sim(&toml);
    s.run();
    let (from, to): (f64, f64) =
        (env("RACC_TRACE_FROM", "0").parse().unwrap(), env("RACC_TRACE_TO", "30").parse().unwrap());
    let idx = port(&mut s, "r0->r1").port as u32;
    let p = &s.port_series;
    let gauge = |name: &str| match p.named.get(name).map(|c| &c.values) {
        Some(racc_sim::metrics::ColumnValues::Gauge(v)) => v.clone(),
        _ => vec![f64::NAN; p.time_s.len()],
    };
    let (r, n, y, qv) =
        (gauge("fair_rate_bps"), gauge("flow_estimate"), gauge("input_rate_bps"), gauge("virtual_queue_bytes"));
    for i in 0..p.time_s.len() {
        let t = p.time_s[i];
        if p.port[i] == idx && t > from && t <= to {
            println!(
                "t {t:6.2} port R {:5.2} N {:5.2} y {:5.2} q {:3} qv {:6.0} drops {:3} util {:.2}",
                r[i] / 1e6,
                n[i],
                y[i] / 1e6,
                p.queue_pkts[i],
                qv[i],
                p.drops[i],
                p.utilisation[i]
            );
        }
    }
    let fs = &s.flow_series;
    for j in 0..fs.time_s.len() {
        let t = fs.time_s[j];
        if t <= from || t > to {
            continue;
        }
        println!(
            "t {t:6.2} f{} gp {:5.2} w {:6.1}k srtt {:5.1} fb {:5.2} x {} fr {} rto {} rtoR {} acked {}",
            fs.flow[j],
            fs.goodput_bps[j] / 1e6,
            fs.cwnd_bytes[j] / 1000.0,
            fs.srtt_s[j] * 1e3,
            flow_metric(fs, "qfcp_feedback_bps", j) / 1e6,
            fs.retransmits[j],
            flow_metric(fs, "fast_retransmits", j),
            fs.timeouts[j],
            flow_metric(fs, "timeouts_in_recovery", j),
            fs.acked_bytes[j],
        );
    }
    let ps = port(&mut s, "r0->r1");
    println!("utilisation {:.3} drops {}", ps.utilisation, ps.counters.drops);
    println!("{:?}", outcome(&toml, 5.0, 30.0));
}

/// The simultaneous-start dumbbell with `n` flows (`pairs` and `count` replaced) and each
/// flow's start from `starts` (seconds, cycled) when given.
fn dumbbell(n: usize, starts: &[f64]) -> String {
    let extra = std::env::var("RACC_FLOW_EXTRA").unwrap_or_default();
    let mut toml = SIMULTANEOUS
        .replace("pairs = 3", &format!("pairs = {n}"))
        .replace("protocol = \"qfcp\"\n", &format!("protocol = \"qfcp\"\n{extra}\n"));
    if starts.is_empty() {
        return toml.replace("count = 3", &format!("count = {n}"));
    }
    let at = toml.find("[[flows]]").unwrap();
    let rest = toml.split_off(at);
    let record = &rest[rest.find("[record]").unwrap()..];
    for i in 0..n {
        toml.push_str(&format!(
            "[[flows]]\nname = \"q{i}\"\nprotocol = \"qfcp\"\nsrc = \"s{i}\"\ndst = \"d{i}\"\nstart = \"{}s\"\n\n",
            starts[i % starts.len()]
        ));
    }
    toml.push_str(record);
    toml
}

/// Diagnostic: the sweep's numbers.
#[test]
#[ignore = "diagnostic: prints the sweep"]
fn sweep_numbers() {
    for n in [1, 2, 3, 5, 10, 20, 30, 50] {
        let o = outcome(&dumbbell(n, &[]), 5.0, 30.0);
        let fair = 20e6 / n as f64;
        let lo = o.rates.iter().cloned().fold(f64::INFINITY, f64::min) / fair;
        let hi = o.rates.iter().cloned().fold(0.0, f64::max) / fair;
        let w = o.worst_2s.iter().cloned().fold(f64::INFINITY, f64::min) / fair;
        println!(
            "n {n:2} util {:.3} drops {} ({:.2} %) rate/fair {lo:.2}..{hi:.2} worst 2 s {w:.2} Jain {:.3}",
            o.utilisation,
            o.drops,
            100.0 * o.drops as f64 / o.arrivals as f64,
            racc_sim::metrics::jain(&o.rates)
        );
    }
    let o = outcome(&dumbbell(3, &[0.0, 5.0, 10.0]), 15.0, 30.0);
    println!("staggered 0/5/10 s: {o:?}");
}

/// Fair share of the 20 Mb/s bottleneck among `n` flows, b/s (wire).
fn fair(n: usize) -> f64 {
    20e6 / n as f64
}

/// The bounds of issue 39 over (from, 30] s: utilisation at least 0.95 and no flow below a
/// quarter of its fair share over any 2 s window. Panics naming the first that fails.
fn assert_fills_and_shares(o: &Outcome, n: usize) {
    assert!(o.utilisation >= 0.95, "utilisation {:.3} below 0.95: {o:?}", o.utilisation);
    for (f, w) in o.worst_2s.iter().enumerate() {
        assert!(
            *w >= 0.25 * fair(n),
            "flow {f}: {:.2} Mb/s over a 2 s window, below a quarter of {:.2}",
            w / 1e6,
            fair(n) / 1e6
        );
    }
}

fn assert_few_drops(o: &Outcome) {
    let share = o.drops as f64 / o.arrivals as f64;
    assert!(share < 0.005, "drops {} of {} arrivals ({:.2} %), not below 0.5 %", o.drops, o.arrivals, 100.0 * share);
}

/// Issue 39's dumbbell: three flows starting at 0 s. Before the go-back-N was paced two flows
/// sat out RTO back-offs for most of the run (over (5, 30] s 0.88 / 12.7 / 0.34 Mb/s,
/// utilisation 0.79, 5701 drops); measured now 6.66 / 6.66 / 6.67 Mb/s, utilisation 0.999.
#[test]
fn three_simultaneous_starts_fill_the_link_and_share_it() {
    let o = outcome(SIMULTANEOUS, 5.0, 30.0);
    eprintln!("{o:?}");
    assert_fills_and_shares(&o, 3);
}

/// The same run's drops, below 0.5 % of the bottleneck's arrivals (issue 39). Not met: the
/// first windows (feedback·rtt = C·rtt each, three BDPs into a one-BDP buffer) and the
/// recoveries of the first 3 s drop 949 of 73,922 (1.28 %; 247 in the first 100 ms); from 4 s
/// on there are none. A strict expected failure until the start is fixed (docs/PROTOCOLS.md §9,
/// "Starts").
#[test]
#[should_panic(expected = "not below 0.5 %")]
fn three_simultaneous_starts_drop_little() {
    assert_few_drops(&outcome(SIMULTANEOUS, 5.0, 30.0));
}

/// Three flows starting at 0, 5 and 10 s: over (15, 30] s the bounds, each flow
/// within ±10 % of C/3, and drops below 0.5 % (measured 84 drops of 74,474).
#[test]
fn staggered_starts_fill_the_link_and_share_it() {
    let o = outcome(&dumbbell(3, &[0.0, 5.0, 10.0]), 15.0, 30.0);
    eprintln!("{o:?}");
    assert_fills_and_shares(&o, 3);
    for r in &o.rates {
        assert!((r - fair(3)).abs() <= 0.1 * fair(3), "rate {r} against {}", fair(3));
    }
    assert_few_drops(&o);
}

/// 1, 2 and 3 flows starting together: the fill-and-share bounds over (5, 30] s.
#[test]
fn up_to_three_simultaneous_starts_fill_the_link_and_share_it() {
    for n in [1, 2, 3] {
        let o = outcome(&dumbbell(n, &[]), 5.0, 30.0);
        eprintln!("n {n}: {o:?}");
        assert_fills_and_shares(&o, n);
    }
}

/// 5 to 50 flows starting together: the same bounds are not met (`sweep_numbers`: with 5
/// flows utilisation 0.81 and Jain 0.51, from 10 flows some flows starve, drops 8 to 29 %).
/// n first windows of C·rtt overflow a one-BDP buffer n-fold; SACK alone does not cure it
/// (50 flows: utilisation 0.93, Jain 0.46). A strict expected failure (docs/PROTOCOLS.md §9, "Starts").
#[test]
#[should_panic(expected = "below")]
fn five_to_fifty_simultaneous_starts_fill_the_link_and_share_it() {
    for n in [5, 10, 20, 50] {
        assert_fills_and_shares(&outcome(&dumbbell(n, &[]), 5.0, 30.0), n);
    }
}
