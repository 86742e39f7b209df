//! Bare engine benchmark:
//! `racc-bench [--flows N] [--simtime S] [--seed N] [--bottleneck-mbps M] [--access-mbps M]
//! [--min-rto S] [--no-limited-transmit]`.
//! Without --flows it runs N = 1, 10, 100, 1000, each in a fresh process so that the peak
//! memory figure belongs to that run alone. The last two align the TCP model with the htsim
//! anchor's (a 250 ms RTO floor, no Limited Transmit: `bench::TcpModel`).

use racc_sim::bench::{self, BenchConfig, TcpModel};
use std::process::{exit, Command};

const USAGE: &str = "usage: racc-bench [--flows N] [--simtime SECONDS] [--seed N] [--bottleneck-mbps M] [--access-mbps M] [--min-rto SECONDS] [--no-limited-transmit]";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut flows: Option<u32> = None;
    let mut c = BenchConfig::new(1, 60.0, 1);
    let mut m = TcpModel::default();
    let mut i = 1;
    while i < args.len() {
        let opt = args[i].as_str();
        if matches!(opt, "-h" | "--help") {
            println!("{USAGE}");
            return;
        }
        if opt == "--no-limited-transmit" {
            m.limited_transmit = false;
            i += 1;
            continue;
        }
        let Some(val) = args.get(i + 1) else { usage(&format!("{opt} needs a value")) };
        let bad = |what: &str| -> ! { usage(&format!("{opt} needs {what}, got '{val}'")) };
        match opt {
            "--flows" => flows = Some(val.parse().unwrap_or_else(|_| bad("a positive integer"))),
            "--simtime" => c.simtime_s = val.parse().unwrap_or_else(|_| bad("seconds")),
            "--seed" => c.seed = val.parse().unwrap_or_else(|_| bad("an integer")),
            "--bottleneck-mbps" => c.bottleneck_mbps = val.parse().unwrap_or_else(|_| bad("a rate in Mb/s")),
            "--access-mbps" => c.access_mbps = val.parse().unwrap_or_else(|_| bad("a rate in Mb/s")),
            "--min-rto" => m.min_rto_s = Some(val.parse().unwrap_or_else(|_| bad("seconds"))),
            other => usage(&format!("unknown argument '{other}'")),
        }
        i += 2;
    }
    c.flows = flows.unwrap_or(1);
    if let Err(e) = c.check().and_then(|_| m.check()) {
        usage(&e);
    }
    match flows {
        Some(_) => match bench::run_model(&c, &m) {
            Ok(r) => println!("{}", r.line()),
            Err(e) => {
                eprintln!("error: {e}");
                exit(2);
            }
        },
        None => {
            let me = std::env::current_exe().expect("own path");
            for n in [1, 10, 100, 1000] {
                let st = Command::new(&me)
                    .args([
                        "--flows",
                        &n.to_string(),
                        "--simtime",
                        &c.simtime_s.to_string(),
                        "--seed",
                        &c.seed.to_string(),
                    ])
                    .args([
                        "--bottleneck-mbps",
                        &c.bottleneck_mbps.to_string(),
                        "--access-mbps",
                        &c.access_mbps.to_string(),
                    ])
                    .args(m.min_rto_s.map(|v| ["--min-rto".to_string(), v.to_string()]).into_iter().flatten())
                    .args((!m.limited_transmit).then_some("--no-limited-transmit"))
                    .status()
                    .expect("run benchmark child");
                if !st.success() {
                    exit(1);
                }
            }
        }
    }
}

fn usage(msg: &str) -> ! {
    eprintln!("error: {msg}\n{USAGE}");
    exit(2);
}
