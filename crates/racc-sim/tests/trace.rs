//! `[[traffic]] kind = "trace"` in the engine: a given arrival list runs exactly as the same
//! flows written as `[[flows]]` entries, rows may come in any order and may name their own
//! hosts and protocol, and every malformed row is refused before the run with the file, the
//! row, the column and the reason. (Reading CSV and Parquet files is the front end's: the rows
//! arrive here as the entry's `arrivals` columns; `tests/python/test_trace.py` covers files.)

mod common;

use racc_sim::scenario::from_toml;

/// A two-pair 20 Mb/s dumbbell run for 20 s, with `body` appended.
fn scenario(body: &str) -> String {
    format!(
        r#"
duration = "20s"
seed = 3
packet_size = 1000
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = {{ capacity = "20Mbps", delay = "20ms", buffer = 60 }}
access = {{ capacity = "1Gbps", delay = "1ms" }}
[record]
interval = "500ms"
{body}
"#
    )
}

/// Hand-written flows: (start s, size B, pair).
const FLOWS: [(f64, u64, usize); 6] =
    [(0.0, 200_000, 0), (0.25, 960, 1), (0.5, 48_000, 0), (1.125, 1_500_000, 1), (2.0, 9_600, 0), (2.0, 30_000, 1)];

fn trace_entry(rows: &[(f64, u64, usize)], extra: &str) -> String {
    let col = |f: &dyn Fn(&(f64, u64, usize)) -> String| rows.iter().map(f).collect::<Vec<_>>().join(", ");
    format!(
        r#"
[[traffic]]
name = "list"
kind = "trace"
file = "list.csv"
protocol = "newreno"
src = "s0"
dst = "d0"
{extra}
[traffic.arrivals]
rows = "line"
start = [{}]
size = [{}]
src = [{}]
dst = [{}]
"#,
        col(&|r| format!("{:?}", r.0)),
        col(&|r| format!("{}.0", r.1)),
        col(&|r| format!("\"s{}\"", r.2)),
        col(&|r| format!("\"d{}\"", r.2)),
    )
}

/// (flow, size, start, end) of every completion, in the order flows finished.
fn completions(toml: &str) -> Vec<(u32, u64, f64, f64)> {
    let mut s = common::sim(toml);
    s.run();
    let c = &s.completions;
    (0..c.flow.len()).map(|i| (c.flow[i], c.size_bytes[i], c.start_s[i], c.end_s[i])).collect()
}

#[test]
fn a_trace_runs_as_the_same_flows_written_out() {
    let listed: String = FLOWS
        .iter()
        .map(|(start, size, pair)| {
            format!(
                "[[flows]]\nname = \"list\"\nprotocol = \"newreno\"\nsrc = \"s{pair}\"\ndst = \"d{pair}\"\n\
                 start = {start:?}\nsize = \"{size}B\"\n"
            )
        })
        .collect();
    let a = completions(&scenario(&listed));
    let b = completions(&scenario(&trace_entry(&FLOWS, "")));
    assert_eq!(a.len(), FLOWS.len(), "every flow finishes in 20 s");
    assert_eq!(a, b, "the trace's completions are the listed flows'");
    // Rows in any order: the engine starts flows by start time, ties in the list's order.
    let mut shuffled = FLOWS.to_vec();
    shuffled.swap(0, 3);
    shuffled.swap(1, 2);
    let c = completions(&scenario(&trace_entry(&shuffled, "")));
    let key = |v: &[(u32, u64, f64, f64)]| {
        let mut k: Vec<(u64, u64, u64)> =
            v.iter().map(|r| (r.1, (r.2 * 1e9).round() as u64, (r.3 * 1e9).round() as u64)).collect();
        k.sort_unstable();
        k
    };
    assert_eq!(key(&a), key(&c), "the same flows with the same completion times");
}

#[test]
fn a_row_may_name_its_own_protocol() {
    let body = trace_entry(&FLOWS, "").replace(
        "rows = \"line\"\n",
        "rows = \"line\"\nprotocol = [\"reno\", \"newreno\", \"reno\", \"newreno\", \"vcp\", \"newreno\"]\n",
    );
    let spec = from_toml(&scenario(&body.replace("buffer = 60", "buffer = 60, router = \"vcp\"")), "t.toml")
        .expect("per-row protocols");
    let protocols: Vec<&str> = spec.flows.iter().map(|f| f.protocol.as_str()).collect();
    assert_eq!(protocols, ["reno", "newreno", "reno", "newreno", "vcp", "newreno"]);
}

/// The refusal of `rows` (with `extra` entry keys) names the file's line and column.
fn refused(rows: &[(f64, u64, usize)], extra: &str, edit: &dyn Fn(String) -> String, reason: &str) {
    let text = scenario(&edit(trace_entry(rows, extra)));
    let e = from_toml(&text, "bad.toml").expect_err("refused");
    assert_eq!(e.source, "bad.toml");
    assert_eq!(e.key, "traffic[0].file", "{e}");
    assert!(e.reason.contains(reason), "'{}' lacks '{reason}'", e.reason);
}

#[test]
fn each_malformed_row_is_refused_with_file_line_column_and_reason() {
    let same = |s: String| s;
    let mut rows = FLOWS.to_vec();
    rows[2].0 = -0.5;
    refused(&rows, "", &same, "list.csv: line 4, column `start`: must be >= 0 s");
    rows[2].0 = 20.0;
    refused(&rows, "", &same, "list.csv: line 4, column `start`: 20 s is at or after the end of the run (20 s)");
    rows[2].0 = 1e6;
    refused(&rows, "", &same, "line 4, column `start`: 1000000 s is at or after the end of the run");
    let mut rows = FLOWS.to_vec();
    rows[5].1 = 0;
    refused(&rows, "", &same, "list.csv: line 7, column `size`: must be at least 1 byte, got 0");
    refused(&FLOWS, "", &|s| s.replace("960.0", "960.5"), "line 3, column `size`: must be a whole number of bytes");
    refused(&FLOWS, "", &|s| s.replace("960.0", "1e17"), "line 3, column `size`: 100000000000000000 B is more than");
    refused(&FLOWS, "", &|s| s.replacen("\"s1\"", "\"s7\"", 1), "line 3, column `src`: no node named 's7'");
    refused(&FLOWS, "", &|s| s.replacen("\"d1\"", "\"r0\"", 1), "line 3, column `dst`: 'r0' is a router");
    refused(&FLOWS, "", &|s| s.replacen("\"d1\"", "\"s1\"", 1), "line 3, column `dst`: a flow needs two different");
    let protocol = |p: &str| {
        let p = p.to_string();
        move |s: String| {
            s.replace(
                "rows = \"line\"\n",
                &format!("rows = \"row\"\nprotocol = [\"reno\", \"{p}\", \"reno\", \"reno\", \"reno\", \"reno\"]\n"),
            )
        }
    };
    refused(&FLOWS, "", &protocol("tcp-vegas"), "list.csv: row 2, column `protocol`: unknown protocol");
    // A protocol the entry's params do not fit.
    refused(
        &FLOWS,
        "params = { dupthresh = 4 }",
        &protocol("xcp"),
        "row 2, column `protocol`: the entry's `traffic[0].params",
    );
    // Columns of different lengths.
    let e = from_toml(&scenario(&trace_entry(&FLOWS, "").replace("size = [200000.0, ", "size = [")), "bad.toml")
        .expect_err("refused");
    assert_eq!(e.key, "traffic[0].arrivals.size");
    assert!(e.reason.contains("has 5 values, but `start` has 6"), "{e}");
}

#[test]
fn trace_keys_are_checked() {
    let ok = scenario(&trace_entry(&FLOWS, ""));
    from_toml(&ok, "ok.toml").expect("a valid trace");
    let e = from_toml(&ok.replace("[traffic.arrivals]", "rate = 3.0\n[traffic.arrivals]"), "bad.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.reason.contains("not a key of the 'trace' kind")), ("traffic[0].rate", true));
    let no_rows: String = ok.split("[traffic.arrivals]").next().unwrap().to_string();
    let e = from_toml(&no_rows, "bad.toml").unwrap_err();
    assert_eq!(e.key, "traffic[0].file");
    assert!(e.reason.contains("read by the front end"), "{e}");
    let e = from_toml(&no_rows.replace("file = \"list.csv\"\n", ""), "bad.toml").unwrap_err();
    assert_eq!((e.key.as_str(), e.reason.contains("missing")), ("traffic[0].file", true));
    let e = from_toml(&format!("{ok}\n[limits]\nflows = 5\n"), "bad.toml").unwrap_err();
    assert!(e.reason.contains("raise `limits.flows`"), "{e}");
    // A Poisson entry does not take a file.
    let poisson = "[[traffic]]\nkind = \"poisson\"\nprotocol = \"reno\"\nsrc = \"s0\"\ndst = \"d0\"\nrate = 1.0\n\
                   size = { dist = \"fixed\", size = \"1pkt\" }\nfile = \"x.csv\"\n";
    let e = from_toml(&scenario(poisson), "bad.toml").unwrap_err();
    assert_eq!(e.key, "traffic[0].file");
}
