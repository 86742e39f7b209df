//! Result identity (issue 19): work on the engine's speed must not change any result. A few
//! shipped scenarios, at reduced scale (shorter durations: the engine's code paths are the same
//! at any length), are run and every table a user reads is digested: each series and its named
//! metric columns (all values bit-exact, floats by their bits), the completions, the flow and
//! port information, the per-port summary and the run's counters. The digests are stored in
//! `result_digests.txt` beside this file; any change in any value of any case fails the test
//! and names the case and table.
//!
//! The cases cover: TCP over RED with web-like sources (dccp-vcp-t3), TCP/VCP and DPCP
//! (mpcp-queue and its DPCP case), XCP and RCP on two links (xcc-xcp-maxmin and its RCP case),
//! the shared 802.11-like medium (qfcp-wlan-fairness), DCP-EW through an IPsec tunnel
//! (dcpew-ipsec), DCP-EW under random loss (dcpew-dumbbell-loss) and Poisson arrivals with
//! Pareto sizes (poisson-pareto-newreno, completions).
//!
//! A change of results that a task intends (a model fix) regenerates the file with
//! `RACC_BLESS_DIGESTS=1 cargo test --release -p racc-sim --test result_identity`, and the diff
//! of the file shows which cases and tables moved.

use racc_sim::metrics::{Column, ColumnValues, NamedColumns};
use racc_sim::scenario::from_toml;
use racc_sim::Simulator;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// FNV-1a, 64 bits: stable across platforms and Rust versions (unlike `DefaultHasher`).
struct Digest(u64);

impl Digest {
    fn new() -> Digest {
        Digest(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= x as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn u64(&mut self, x: u64) {
        self.bytes(&x.to_le_bytes());
    }
    fn f64(&mut self, x: f64) {
        self.u64(x.to_bits());
    }
    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes(s.as_bytes());
    }
    fn column(&mut self, name: &str, c: Column<'_>) {
        self.str(name);
        match c {
            Column::F64(v) => v.iter().for_each(|&x| self.f64(x)),
            Column::U64(v) => v.iter().for_each(|&x| self.u64(x)),
            Column::U32(v) => v.iter().for_each(|&x| self.u64(x as u64)),
            Column::U16(v) => v.iter().for_each(|&x| self.u64(x as u64)),
        }
    }
    fn named(&mut self, n: &NamedColumns) {
        for c in &n.columns {
            self.str(c.name);
            self.str(c.unit);
            match &c.values {
                ColumnValues::Count(v) => v.iter().for_each(|&x| self.u64(x)),
                ColumnValues::Gauge(v) => v.iter().for_each(|&x| self.f64(x)),
                ColumnValues::Flag(v) => v.iter().for_each(|&x| self.u64(x as u64)),
            }
            c.present.iter().for_each(|&x| self.u64(x as u64));
        }
    }
    fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// Every table of a finished run, digested: (table, rows, digest).
fn digests(sim: &mut Simulator) -> Vec<(&'static str, usize, String)> {
    let mut out = Vec::new();
    let ports = sim.port_summary();

    let mut d = Digest::new();
    for (name, c) in sim.port_series.columns() {
        d.column(name, c);
    }
    d.named(&sim.port_series.named);
    out.push(("links", sim.port_series.time_s.len(), d.hex()));

    let mut d = Digest::new();
    for (name, c) in sim.flow_series.columns() {
        d.column(name, c);
    }
    d.named(&sim.flow_series.named);
    out.push(("flows", sim.flow_series.time_s.len(), d.hex()));

    let g = &sim.group_series;
    let mut d = Digest::new();
    sim.groups.iter().for_each(|n| d.str(n));
    d.column("time_s", Column::F64(&g.time_s));
    d.column("port", Column::U32(&g.port));
    d.column("group", Column::U16(&g.group));
    d.column("tx_bytes", Column::U64(&g.tx_bytes));
    d.column("share", Column::F64(&g.share));
    out.push(("group_links", g.time_s.len(), d.hex()));

    let c = &sim.completions;
    let mut d = Digest::new();
    d.column("flow", Column::U32(&c.flow));
    d.column("size_bytes", Column::U64(&c.size_bytes));
    d.column("start_s", Column::F64(&c.start_s));
    d.column("end_s", Column::F64(&c.end_s));
    d.column("fct_s", Column::F64(&c.fct_s));
    out.push(("completions", c.flow.len(), d.hex()));

    let mut d = Digest::new();
    let n = sim.flow_count();
    for i in 0..n {
        let info = sim.flow_info(i);
        d.str(&info.spec.protocol);
        d.str(&info.spec.group);
        d.u64(info.spec.src as u64);
        d.u64(info.spec.dst as u64);
        d.u64(info.start);
        d.u64(info.size_bytes.unwrap_or(u64::MAX));
        d.u64(info.source.map_or(u64::MAX, |s| s as u64));
    }
    out.push(("flow_info", n, d.hex()));

    let mut d = Digest::new();
    let cons = sim.conservation();
    for x in [
        sim.now(),
        sim.events(),
        sim.time_reversals(),
        sim.goodput_bytes(),
        cons.sent,
        cons.delivered,
        cons.dropped,
        cons.lost,
        cons.in_flight,
    ] {
        d.u64(x);
    }
    for p in &ports {
        d.u64(p.port as u64);
        d.str(&p.name);
        d.str(p.router);
        for x in [p.capacity_bps, p.utilisation, p.mean_queue_pkts, p.mean_queue_bytes, p.drop_rate] {
            d.f64(x);
        }
        let k = &p.counters;
        for x in [k.arrivals, k.tx_pkts, k.tx_bytes, k.drops, k.losses, k.marks, k.max_queue_bytes] {
            d.u64(x);
        }
        d.u64(k.max_queue_pkts as u64);
        d.bytes(&k.queue_pkt_ns.to_le_bytes());
        d.bytes(&k.queue_byte_ns.to_le_bytes());
    }
    for p in sim.ports() {
        d.f64(p.delay as f64);
        d.u64(p.limit_pkts as u64);
        d.u64(p.limit_bytes);
    }
    out.push(("summary", ports.len(), d.hex()));
    out
}

/// A shipped scenario, shortened to `duration`, with `(key, from, to)` string values replaced
/// wherever they occur (a protocol or router swapped, as `racc reproduce` does for its cases).
fn case(file: &str, duration: &str, swaps: &[(&str, &str, &str)]) -> Simulator {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut v: toml::Table = text.parse().unwrap_or_else(|e| panic!("{file}: {e}"));
    v.insert("duration".into(), toml::Value::String(duration.into()));
    fn swap(v: &mut toml::Value, swaps: &[(&str, &str, &str)]) {
        match v {
            toml::Value::Table(t) => {
                for (k, x) in t.iter_mut() {
                    for &(key, from, to) in swaps {
                        if k == key && x.as_str() == Some(from) {
                            *x = toml::Value::String(to.into());
                        }
                    }
                    swap(x, swaps);
                }
            }
            toml::Value::Array(a) => a.iter_mut().for_each(|x| swap(x, swaps)),
            _ => {}
        }
    }
    let mut v = toml::Value::Table(v);
    swap(&mut v, swaps);
    let spec = from_toml(&toml::to_string(&v).unwrap(), file).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulator::new(spec).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    sim
}

fn cases() -> Vec<(&'static str, Simulator)> {
    vec![
        ("dccp-vcp-t3", case("dccp-vcp-t3.toml", "15s", &[])),
        ("mpcp-queue-vcp", case("mpcp-queue.toml", "60s", &[])),
        ("mpcp-queue-dpcp", case("mpcp-queue.toml", "60s", &[("protocol", "vcp", "dpcp"), ("router", "vcp", "dpcp")])),
        ("xcc-xcp-maxmin", case("xcc-xcp-maxmin.toml", "10s", &[])),
        ("xcc-rcp-maxmin", case("xcc-xcp-maxmin.toml", "10s", &[("protocol", "xcp", "rcp"), ("router", "xcp", "rcp")])),
        ("qfcp-wlan-fairness", case("qfcp-wlan-fairness.toml", "20s", &[])),
        ("dcpew-ipsec", case("dcpew-ipsec.toml", "30s", &[])),
        ("dcpew-dumbbell-loss", case("dcpew-dumbbell-loss.toml", "30s", &[])),
        ("poisson-pareto-newreno", case("poisson-pareto-newreno.toml", "60s", &[])),
    ]
}

#[test]
fn shipped_scenarios_give_their_stored_results() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/result_digests.txt");
    let mut got = BTreeMap::new();
    for (name, mut sim) in cases() {
        assert_eq!(sim.time_reversals(), 0, "{name}");
        for (table, rows, hex) in digests(&mut sim) {
            got.insert(format!("{name} {table}"), format!("{rows} {hex}"));
        }
    }
    let text: String = got.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
    if std::env::var_os("RACC_BLESS_DIGESTS").is_some() {
        let head =
            "# case table rows digest (tests/result_identity.rs; regenerate only for an intended change of results)\n";
        std::fs::write(&file, format!("{head}{text}")).unwrap();
        return;
    }
    let stored = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let want: BTreeMap<String, String> = stored
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (format!("{} {}", w[0], w[1]), w[2..].join(" "))
        })
        .collect();
    let mut diffs = Vec::new();
    for (k, v) in &got {
        match want.get(k) {
            Some(w) if w == v => {}
            Some(w) => diffs.push(format!("{k}: stored {w}, now {v}")),
            None => diffs.push(format!("{k}: not stored (now {v})")),
        }
    }
    for k in want.keys().filter(|k| !got.contains_key(*k)) {
        diffs.push(format!("{k}: stored, not produced"));
    }
    assert!(diffs.is_empty(), "results changed:\n{}", diffs.join("\n"));
}

/// The digest sees a change in any single value: a guard against a digest that reads nothing.
#[test]
fn the_digest_sees_one_changed_value() {
    let mut sim = case("mpcp-queue.toml", "2s", &[]);
    let before = digests(&mut sim);
    let last = sim.port_series.queue_bytes.len() - 1;
    sim.port_series.queue_bytes[last] += 1;
    let after = digests(&mut sim);
    let changed: Vec<&str> = before.iter().zip(&after).filter(|(a, b)| a != b).map(|(a, _)| a.0).collect();
    assert_eq!(changed, vec!["links"]);
}
