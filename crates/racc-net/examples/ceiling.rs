//! The live bottleneck's rate ceiling (issue 17's report): one NewReno flow of 1500-byte packets
//! through a dumbbell whose bottleneck never idles, at each configured rate, printing the rate
//! delivered at the receiver, the router's delivery lateness, the CPU cost per packet of the
//! router, the hosts and the whole process, and the load average before each rate.
//! Root only. A measuring tool, not a test: the figures depend on the machine and its load.
//!
//! `cargo run --release -p racc-net --example ceiling [--secs S] [--spin NS] [--coalesce NS]
//! [--slack NS] [--no-pin] [--napi] [--host-batch N] [--host-hold NS] [--gather NS] [--uring|--no-uring] [--veth|--tun]
//! [--delayed-ack]
//! [RATE_MBPS]...` (default rates 100 200 350 500 700 1000, 6 s each; the
//! flags change the router loop's `LoopConfig` from its defaults, to measure each choice;
//! `--delayed-ack` has the receiver acknowledge every second packet, RFC 1122, as Linux TCP does,
//! instead of every packet: a third fewer packets for the same rate).
//!
//! The scenario is the rate test's (`tests/live.rs`) scaled up: a first window (400 packets)
//! above the path's bandwidth-delay product at every rate swept, slow start capped at 3 MB and a
//! 20 000-packet buffer, so the window never reaches BDP + buffer (no loss) and the queue never
//! empties after the first round trips: what the receiver gets is what the emulated link sends.

use racc_net::report::quantile;
use racc_sim::bench::process_cpu_s;

fn scenario(rate_mbps: f64, secs: f64, delayed_ack: bool) -> String {
    format!(
        r#"
name = "live-ceiling"
duration = "{secs}s"
seed = 1
packet_size = 1500
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ capacity = "{rate_mbps}Mbps", delay = "1ms", buffer = "20000pkts", router = "droptail" }}
access = {{ capacity = "10Gbps", delay = "100us" }}
[[flows]]
protocol = "newreno"
src = "s0"
dst = "d0"
count = 1
initial_window = 400
initial_ssthresh = "3MB"
delayed_ack = {delayed_ack}
"#
    )
}

/// The machine's 1-minute load average (`/proc/loadavg`), "?" where unreadable: the figures
/// depend on what else runs.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn main() {
    let mut secs = 6.0;
    let mut delayed_ack = false;
    let mut rates = Vec::new();
    let mut cfg = racc_net::config::LoopConfig::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |what: &str| args.next().and_then(|s| s.parse::<f64>().ok()).expect(what);
        match a.as_str() {
            "--secs" => secs = num("--secs SECONDS"),
            "--spin" => cfg.spin_ns = num("--spin NS") as u64,
            "--coalesce" => cfg.coalesce_ns = num("--coalesce NS") as u64,
            "--slack" => cfg.timer_slack_ns = num("--slack NS") as u64,
            "--no-pin" => cfg.pin = false,
            "--host-batch" => cfg.host_batch = num("--host-batch N") as usize,
            "--host-hold" => cfg.host_hold_ns = num("--host-hold NS") as u64,
            "--napi" => cfg.napi = true,
            "--gather" => cfg.gather_ns = num("--gather NS") as u64,
            "--delayed-ack" => delayed_ack = true,
            "--uring" => cfg.uring = true,
            "--no-uring" => cfg.uring = false,
            "--veth" => cfg.veth = true,
            "--tun" => cfg.veth = false,
            _ => rates.push(a.parse::<f64>().expect("a rate in Mb/s")),
        }
    }
    println!("router loop: {cfg:?}");
    // A SCHED_FIFO router that needs a whole CPU is throttled for what exceeds this share of
    // each period (the kernel's RT throttling): at the ceiling it stalls for tens of ms.
    let rt =
        |f: &str| std::fs::read_to_string(format!("/proc/sys/kernel/{f}")).map_or("?".into(), |s| s.trim().to_string());
    println!(
        "RT throttling: sched_rt_runtime_us {} of sched_rt_period_us {}",
        rt("sched_rt_runtime_us"),
        rt("sched_rt_period_us")
    );
    let opts = racc_net::Options { loop_cfg: cfg, ..Default::default() };
    if rates.is_empty() {
        rates = vec![100.0, 200.0, 350.0, 500.0, 700.0, 1000.0];
    }
    if !racc_net::sys::is_root() {
        eprintln!("{}", racc_net::LiveError::NotRoot);
        std::process::exit(1);
    }
    racc_net::install_signal_handlers();
    println!(
        "rate(Mb/s)  delivered(Mb/s)  error   lateness p50/p99 (us)   owd p99-p50 (ms)  router CPU/pkt (us)  hosts CPU/pkt (us)  process CPU/pkt (us)  pkts/s  router runnable-not-running (%)  load avg (1 min, before)"
    );
    for rate in rates {
        let spec =
            racc_sim::scenario::from_toml(&scenario(rate, secs, delayed_ack), "<ceiling>").expect("valid scenario");
        let load = load_average();
        let cpu0 = process_cpu_s().unwrap_or(0.0);
        let rep = match racc_net::run_with(&spec, &opts) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        };
        // Every thread of the process: router and hosts.
        let cpu_s = process_cpu_s().unwrap_or(0.0) - cpu0;
        if racc_net::STOP.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let f = &rep.flows[0];
        let delivered = f.rx_wire_bps(2.0, secs) * 1e-6;
        let r = &rep.router;
        let pkts = r.rx_pkts.max(1) as f64;
        println!(
            "{:>10.0}  {:>15.3}  {:>+5.2}%  {:>9.1}/{:<11.1}  {:>16.3}  {:>19.2}  {:>18.2}  {:>20.2}  {:>6.0}  {:>31.2}  {}",
            rate,
            delivered,
            (delivered / rate - 1.0) * 100.0,
            quantile(&r.lateness_ns, 0.5) * 1e-3,
            quantile(&r.lateness_ns, 0.99) * 1e-3,
            (quantile(&f.owd_ns, 0.99) - quantile(&f.owd_ns, 0.5)) * 1e-6,
            r.cpu_ns as f64 / pkts * 1e-3,
            rep.hosts.cpu_ns as f64 / pkts * 1e-3,
            cpu_s / pkts * 1e6,
            pkts / (rep.duration as f64 * 1e-9),
            r.run_delay_ns as f64 / rep.duration as f64 * 100.0,
            load,
        );
        eprintln!("{rep}");
    }
}
