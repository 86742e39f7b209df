//! `racc-live SCENARIO.toml [--duration SECONDS] [--compare] [--results FILE.json]`: run a
//! scenario on real packets between network namespaces (root needed) and print per-flow goodput
//! and per-port figures; `--compare` also runs the simulator on the same scenario and prints its
//! figures beside them; `--results` writes the run's tables and summary in the simulator's
//! results shape (`racc live run` reads it). A scenario file ending in `.json` is read as the
//! JSON form that `racc` hands the engine (overrides applied). `--pcap FILE` captures what the
//! router's ports send (every port, or those named by `--pcap-port`) as a pcapng file.
//! `--parent PID` ends the run (as SIGTERM does) when that process dies.
//!
//! SIGINT or SIGTERM stops the run early: the namespaces are torn down, the results go to
//! `FILE.incomplete` with `"complete": false`, and the exit status is 128 + the signal.

use racc_sim::Simulator;
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: racc-live SCENARIO.toml|SCENARIO.json [--duration SECONDS] [--compare] [--results FILE.json] [--pcap FILE [--pcap-port NAME]...] [--clock-sends] [--parent PID]");
    ExitCode::from(2)
}

/// `--duration`: seconds, finite, positive, at most [`racc_net::MAX_DURATION`].
fn parse_duration(s: &str) -> Result<u64, String> {
    let max = racc_net::MAX_DURATION as f64 * 1e-9;
    match s.parse::<f64>() {
        Ok(d) if d.is_finite() && d > 0.0 && d <= max => Ok((d * 1e9).round() as u64),
        Ok(_) => Err(format!("must be a number of seconds above 0 and at most {max} (a day)")),
        Err(_) => Err("not a number of seconds".into()),
    }
}

/// `--results FILE`: checked writable before the run; written atomically (a temporary
/// sibling renamed into place), to `FILE` only for a complete run and to `FILE.incomplete`
/// for one broken off by a signal.
struct Output {
    path: std::path::PathBuf,
    incomplete: std::path::PathBuf,
}

impl Output {
    fn check(path: &str) -> Result<Output, String> {
        let path = std::path::PathBuf::from(path);
        let mut incomplete = path.clone().into_os_string();
        incomplete.push(".incomplete");
        let out = Output { incomplete: incomplete.into(), path };
        if out.path.is_dir() {
            return Err(format!("--results {}: is a directory", out.path.display()));
        }
        // A trial file where the document will be written: the folder exists and takes files.
        let probe = out.temp(&out.path);
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
            .map_err(|e| format!("--results {}: cannot write there ({e})", out.path.display()))?;
        let _ = std::fs::remove_file(&probe);
        Ok(out)
    }

    fn temp(&self, dest: &std::path::Path) -> std::path::PathBuf {
        let mut t = dest.as_os_str().to_owned();
        t.push(format!(".tmp-{}", std::process::id()));
        t.into()
    }

    fn write(&self, text: &str, complete: bool) -> Result<(), String> {
        let dest = if complete { &self.path } else { &self.incomplete };
        let tmp = self.temp(dest);
        std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, dest)).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("--results {}: {e}", dest.display())
        })
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut file = None;
    let mut duration = None;
    let mut compare = false;
    let mut clock_sends = false;
    let mut results = None;
    let mut pcap = None;
    let mut pcap_ports: Vec<String> = Vec::new();
    let mut parent = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--compare" => compare = true,
            "--clock-sends" => clock_sends = true,
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
            "--duration" => match it.next() {
                Some(s) => match parse_duration(s) {
                    Ok(d) => duration = Some(d),
                    Err(e) => {
                        eprintln!("--duration {s}: {e}");
                        return ExitCode::from(2);
                    }
                },
                None => return usage(),
            },
            "--parent" => match it.next().and_then(|s| s.parse::<u32>().ok()) {
                Some(p) => parent = Some(p),
                None => return usage(),
            },
            _ if file.is_none() && !a.starts_with('-') => file = Some(a.clone()),
            _ => return usage(),
        }
    }
    let Some(file) = file else { return usage() };
    // First, before anything is set up: a run started for a parent that is already gone
    // would have nobody to report to.
    if let Some(p) = parent {
        if !racc_net::sys::die_with_parent(p) {
            eprintln!("--parent {p}: the parent process has already exited");
            return ExitCode::FAILURE;
        }
    }
    let results = match results.map(|r| Output::check(&r)) {
        Some(Ok(o)) => Some(o),
        Some(Err(e)) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
        None => None,
    };
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
        loop_cfg: racc_net::config::LoopConfig { due_sends: !clock_sends, ..Default::default() },
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
    if let Some(out) = &results {
        let doc = racc_net::results::to_json(&spec, &rep);
        if let Err(e) = out.write(&doc.to_string(), rep.stopped.is_none()) {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    }
    if rep.forged() + rep.replayed() > 0 {
        // Issue 37 item 8. They were dropped before any port saw them, so the results are the
        // scenario's and the exit status stays 0; but something else sent racc packets into
        // this run, and its CPU cost may have disturbed the timing: said on one line.
        eprintln!(
            "racc-live: warning: {} forged and {} replayed racc packets arrived and were dropped; something else is sending into this run",
            rep.forged(),
            rep.replayed()
        );
    }
    if let Some(why) = &rep.stopped {
        // Never a success: a run cut short is not the scenario's result.
        eprintln!(
            "racc-live: stopped by {why} at {:.3} s of {:.3} s; the run is incomplete{}",
            rep.duration as f64 * 1e-9,
            spec.duration as f64 * 1e-9,
            results.as_ref().map_or(String::new(), |o| format!(" (written to {})", o.incomplete.display()))
        );
        let sig = racc_net::STOP_SIGNAL.load(std::sync::atomic::Ordering::Relaxed);
        return ExitCode::from(if sig > 0 { (128 + sig).min(255) as u8 } else { 1 });
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
