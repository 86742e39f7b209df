//! Bare engine benchmark: `racc-bench [--flows N] [--simtime S] [--seed N]`.
//! Without --flows it runs N = 1, 10, 100, 1000, each in a fresh process so that the peak
//! memory figure belongs to that run alone.

use racc_sim::bench;
use std::process::{exit, Command};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut flows: Option<u32> = None;
    let mut simtime = 60.0;
    let mut seed = 1u64;
    let mut i = 1;
    while i < args.len() {
        let val = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--flows" => flows = val.parse().ok().or_else(|| usage("--flows needs a positive integer")),
            "--simtime" => simtime = val.parse().unwrap_or_else(|_| usage("--simtime needs seconds").unwrap()),
            "--seed" => seed = val.parse().unwrap_or_else(|_| usage("--seed needs an integer").unwrap()),
            "-h" | "--help" => {
                println!("usage: racc-bench [--flows N] [--simtime SECONDS] [--seed N]");
                return;
            }
            other => {
                usage::<()>(&format!("unknown argument '{other}'"));
            }
        }
        i += 2;
    }
    match flows {
        Some(n) => match bench::run(n, simtime, seed) {
            Ok(r) => println!("{} peak_rss_kb={}", r.line(), bench::peak_rss_kb().unwrap_or(0)),
            Err(e) => {
                eprintln!("error: {e}");
                exit(2);
            }
        },
        None => {
            let me = std::env::current_exe().expect("own path");
            for n in [1, 10, 100, 1000] {
                let st = Command::new(&me)
                    .args(["--flows", &n.to_string(), "--simtime", &simtime.to_string(), "--seed", &seed.to_string()])
                    .status()
                    .expect("run benchmark child");
                if !st.success() {
                    exit(1);
                }
            }
        }
    }
}

fn usage<T>(msg: &str) -> Option<T> {
    eprintln!("error: {msg}\nusage: racc-bench [--flows N] [--simtime SECONDS] [--seed N]");
    exit(2);
}
