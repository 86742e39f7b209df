//! `racc-live SCENARIO.toml [--duration SECONDS] [--compare] [--results FILE.json]`: run a
//! scenario on real packets between network namespaces (root needed) and print per-flow goodput
//! and per-port figures; `--compare` also runs the simulator on the same scenario and prints its
//! figures beside them; `--results` writes the run's tables and summary in the simulator's
//! results shape (`racc live run` reads it). A scenario file ending in `.json` is read as the
//! JSON form that `racc` hands the engine (overrides applied). `--pcap FILE` captures what the
//! router's ports send (every port, or those named by `--pcap-port`) as a pcapng file.

use racc_sim::Simulator;
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: racc-live SCENARIO.toml|SCENARIO.json [--duration SECONDS] [--compare] [--results FILE.json] [--pcap FILE [--pcap-port NAME]...]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut file = None;
    let mut duration = None;
    let mut compare = false;
    let mut results = None;
    let mut pcap = None;
    let mut pcap_ports: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--compare" => compare = true,
            "--pcap" => match it.next() {
                Some(f) => pcap = Some(std::path::PathBuf::from(f)),
                None => return usage(),
            },
            "--pcap-port" => match it.next() {
                Some(n) => pcap_ports.push(n.clone()),
                None => return usage(),
            },
            "--results" => match it.next() {
                Some(f) => results = Some(f.clone()),
                None => return usage(),
            },
            "--duration" => match it.next().and_then(|s| s.parse::<f64>().ok()) {
                Some(d) if d > 0.0 => duration = Some((d * 1e9) as u64),
                _ => return usage(),
            },
            _ if file.is_none() && !a.starts_with('-') => file = Some(a.clone()),
            _ => return usage(),
        }
    }
    let Some(file) = file else { return usage() };
    if !racc_net::sys::is_root() {
        eprintln!("{}", racc_net::LiveError::NotRoot);
        return ExitCode::FAILURE;
    }
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let parsed = if file.ends_with(".json") {
        racc_sim::scenario::from_json(&text, &file)
    } else {
        racc_sim::scenario::from_toml(&text, &file)
    };
    let mut spec = match parsed {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(d) = duration {
        spec.duration = d;
    }
    racc_net::install_signal_handlers();
    let opts = racc_net::Options {
        pcap: pcap.map(|p| (p, (!pcap_ports.is_empty()).then_some(pcap_ports))),
        ..Default::default()
    };
    let rep = match racc_net::run_with(&spec, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{rep}");
    if let Some((counts, err)) = &rep.pcap {
        println!(
            "pcap: {} packets{}",
            counts.iter().sum::<u64>(),
            err.as_ref().map_or(String::new(), |e| format!(", stopped: {e}"))
        );
    }
    if let Some(out) = results {
        let doc = racc_net::results::to_json(&spec, &rep);
        if let Err(e) = std::fs::write(&out, doc.to_string()) {
            eprintln!("{out}: {e}");
            return ExitCode::FAILURE;
        }
    }
    if compare {
        let dur_s = spec.duration as f64 * 1e-9;
        let mut sim = match Simulator::new(spec) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        };
        sim.run();
        let live_goodput: f64 = rep.flows.iter().map(|f| f.rx_bytes as f64).sum::<f64>() * 8.0 / dur_s;
        let sim_goodput = sim.goodput_bytes() as f64 * 8.0 / dur_s;
        println!("aggregate goodput: live {:.3} Mb/s, simulated {:.3} Mb/s", live_goodput * 1e-6, sim_goodput * 1e-6);
        println!("port              live util  sim util  live drops  sim drops  live marks  sim marks");
        for (l, s) in rep.ports.iter().zip(sim.port_summary()) {
            if l.arrivals == 0 && s.counters.arrivals == 0 {
                continue;
            }
            println!(
                "{:<17} {:>9.3} {:>9.3} {:>11} {:>10} {:>11} {:>10}",
                l.name, l.utilisation, s.utilisation, l.drops, s.counters.drops, l.marks, s.counters.marks
            );
        }
    }
    ExitCode::SUCCESS
}
