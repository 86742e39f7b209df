//! Every class of malformed scenario is refused before the run, naming the file, the key
//! and the reason (issue 2, item 10).

use racc_sim::scenario::from_toml;

const GOOD: &str = r#"
duration = "10s"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { capacity = "10Mbps", delay = "10ms", buffer = 100 }
[[flows]]
protocol = "newreno"
src = "s{i}"
dst = "d{i}"
count = 2
"#;

/// Refusal of `text` must name `key` and contain `reason_part`.
fn refused(text: &str, key: &str, reason_part: &str) {
    let e = from_toml(text, "bad.toml").expect_err("scenario should be refused");
    assert_eq!(e.source, "bad.toml");
    assert_eq!(e.key, key, "wrong key in: {e}");
    assert!(e.reason.contains(reason_part), "reason '{}' lacks '{reason_part}'", e.reason);
    let msg = e.to_string();
    assert!(msg.starts_with("bad.toml: key `"), "{msg}");
}

#[test]
fn the_good_scenario_is_accepted() {
    let s = from_toml(GOOD, "good.toml").expect("valid");
    assert_eq!(s.flows.len(), 2);
    assert_eq!(s.nodes.len(), 6);
    assert_eq!(s.links.len(), 5);
}

#[test]
fn unknown_key() {
    refused(&GOOD.replace("pairs = 2", "pairs = 2\ncapactiy = 3"), "topology.capactiy", "unknown field");
    refused(&format!("{GOOD}\ncolour = \"red\""), "flows[0].colour", "unknown field");
}

#[test]
fn missing_field() {
    refused(&GOOD.replace("duration = \"10s\"", ""), "duration", "missing: `duration` is required");
    refused(&GOOD.replace("capacity = \"10Mbps\", ", ""), "topology.bottleneck.capacity", "missing");
    refused(&GOOD.replace("protocol = \"newreno\"\n", ""), "flows[0].protocol", "missing");
}

#[test]
fn wrong_type() {
    refused(&GOOD.replace("pairs = 2", "pairs = \"two\""), "topology.pairs", "invalid type");
    refused(&GOOD.replace("count = 2", "count = true"), "flows[0].count", "invalid type");
    refused(&GOOD.replace("\"10Mbps\"", "\"ten\""), "topology.bottleneck.capacity", "does not start with a number");
    refused(&GOOD.replace("\"10Mbps\"", "\"10 furlongs\""), "topology.bottleneck.capacity", "unknown rate unit");
}

#[test]
fn impossible_values() {
    refused(&GOOD.replace("\"10Mbps\"", "0"), "topology.bottleneck.capacity", "must be > 0");
    refused(&GOOD.replace("\"10Mbps\"", "\"-5Mbps\""), "topology.bottleneck.capacity", "must be > 0");
    refused(&GOOD.replace("delay = \"10ms\"", "delay = \"-1ms\""), "topology.bottleneck.delay", "delay >= 0");
    refused(&GOOD.replace("buffer = 100", "buffer = 0"), "topology.bottleneck.buffer", "must be > 0");
    refused(&GOOD.replace("\"10s\"", "\"0s\""), "duration", "must be > 0");
    refused(&GOOD.replace("count = 2", "count = 0"), "flows[0].count", "must be");
    refused(&GOOD.replace("duration", "packet_size = 20\nduration"), "packet_size", "between");
}

#[test]
fn flows_between_unconnected_or_unknown_nodes() {
    let islands = r#"
duration = 1
[topology]
kind = "explicit"
nodes = [ { name = "a", kind = "host" }, { name = "r", kind = "router" }, { name = "b", kind = "host" },
          { name = "c", kind = "host" } ]
links = [ { a = "a", b = "r", capacity = 1e6, delay = 0.01 }, { a = "r", b = "b", capacity = 1e6, delay = 0.01 } ]
[[flows]]
protocol = "newreno"
src = "a"
dst = "c"
"#;
    refused(islands, "flows[0].dst", "not connected");
    refused(&islands.replace("dst = \"c\"", "dst = \"zz\""), "flows[0].dst", "no node named 'zz'");
    refused(&islands.replace("dst = \"c\"", "dst = \"r\""), "flows[0].dst", "is a router");
    refused(&islands.replace("b = \"b\"", "b = \"q\""), "topology.links[1].b", "no node named 'q'");
}

#[test]
fn unknown_protocol_router_or_loss_model() {
    refused(&GOOD.replace("\"newreno\"", "\"tcp-vegas\""), "flows[0].protocol", "unknown protocol 'tcp-vegas'");
    refused(
        &GOOD.replace("buffer = 100", "buffer = 100, router = \"blue\""),
        "topology.bottleneck.router",
        "unknown router module 'blue'",
    );
    refused(
        &GOOD.replace("buffer = 100", "buffer = 100, router = \"red\", router_params = { max_q = 3 }"),
        "topology.bottleneck.router_params.max_q",
        "unknown field",
    );
    let e =
        from_toml(&GOOD.replace("buffer = 100", "buffer = 100, loss = { model = \"pink\" }"), "bad.toml").unwrap_err();
    assert!(e.key.starts_with("topology.bottleneck.loss"), "{e}");
    assert!(e.reason.contains("pink"), "{e}");
    refused(&GOOD.replace("count = 2", "count = 2\nparams = { dupthresh = 0 }"), "flows[0].params.dupthresh", "");
}

#[test]
fn toml_syntax_error_names_the_file() {
    let e = from_toml("duration = [", "broken.toml").unwrap_err();
    assert_eq!(e.source, "broken.toml");
    assert!(e.reason.contains("not valid TOML"), "{e}");
}

#[test]
fn record_ports_selection() {
    let s = from_toml(&format!("{GOOD}\n[record]\nports = [\"r0->r1\", \"r1->r0\"]"), "good.toml").unwrap();
    assert_eq!(s.record_ports.len(), 2);
    let r = from_toml(&format!("{GOOD}\n[record]\nports = \"routers\""), "good.toml").unwrap();
    // r0 and r1 each have three links (two hosts + the bottleneck).
    assert_eq!(r.record_ports.len(), 6);
    refused(&format!("{GOOD}\n[record]\nports = [\"r0->r9\"]"), "record.ports[0]", "no port named 'r0->r9'");
    refused(&format!("{GOOD}\n[record]\nports = \"some\""), "record.ports", "must be");
}

#[test]
fn tunnel_errors() {
    let base = format!("{GOOD}\n[[tunnels]]\nid = 1\nbetween = [\"r0\", \"r1\"]\n");
    let s = from_toml(&base, "good.toml").unwrap();
    // r0 encapsulates toward r1 (port 2*2 = r0->r1) and decapsulates on its host ports, and
    // the other way round at r1.
    assert_eq!(s.tunnels[0].encap_ports.len(), 2);
    assert_eq!(s.tunnels[0].decap_ports.len(), 4);
    refused(&base.replace("\"r1\"]", "\"r9\"]"), "tunnels[0].between[1]", "no node named 'r9'");
    refused(&base.replace("\"r1\"]", "\"s0\"]"), "tunnels[0].between[1]", "is a host");
    refused(&base.replace("id = 1", "id = 0"), "tunnels[0].id", "must be 1..65535");
    refused(&base.replace("[\"r0\", \"r1\"]", "[\"r0\"]"), "tunnels[0].between", "exactly two");
}

/// A VCP-family sender scales MI/AI by rtt/t_p of the routers' interval (VCP-DCCP A3/A4): a
/// flow whose t_p differs from a router module's on its forward path is refused, naming the
/// flow's key, both values and the port; equal values (given or defaulted) are accepted, and
/// routers without a load factor or on the reverse path only do not count.
#[test]
fn sender_and_router_load_factor_intervals_must_agree() {
    let vcp = GOOD.replace("buffer = 100 }", "buffer = 100, router = \"vcp\" }").replace("\"newreno\"", "\"vcp\"");
    from_toml(&vcp, "ok.toml").expect("defaults agree (0.2 s both)");
    let both = vcp.replace("router = \"vcp\" }", "router = \"vcp\", router_params = { t_p = 0.1 } }");
    refused(&both, "flows[0].params.t_p", "differs from t_p = 0.1 s of the 'vcp' router module on r0->r1");
    from_toml(&both.replace("count = 2", "count = 2\nparams = { t_p = 0.1 }"), "ok.toml").expect("set on both");
    refused(&vcp.replace("count = 2", "count = 2\nparams = { t_p = 0.25 }"), "flows[0].params.t_p", "t_p = 0.25 s");
    for (proto, router) in [("dpcp", "dpcp"), ("tpcp", "tpcp"), ("dcpew", "dcpew")] {
        let text = both
            .replace("\"vcp\"", &format!("\"{proto}\""))
            .replace(&format!("router = \"{proto}\""), &format!("router = \"{router}\""));
        refused(&text, "flows[0].params.t_p", &format!("'{router}' router module"));
    }
    // TCP senders have no t_p; a VCP router in their path is not their concern.
    let tcp = both.replace("protocol = \"vcp\"", "protocol = \"newreno\"");
    from_toml(&tcp, "ok.toml").expect("newreno through a vcp router");
}

/// Issue 13: `ai_law` ("seed001" | "ns2") on every VCP-family flow; another value is refused
/// before the run with the file, the key path and the accepted names, as is a bad `ai_ns2`
/// constant.
#[test]
fn unknown_ai_law_is_refused() {
    let vcp = GOOD.replace("buffer = 100 }", "buffer = 100, router = \"vcp\" }").replace("\"newreno\"", "\"vcp\"");
    for (proto, router) in [("vcp", "vcp"), ("dpcp", "dpcp"), ("tpcp", "tpcp"), ("dcpew", "dcpew"), ("dccp-vcp", "vcp")]
    {
        let text = vcp
            .replace("protocol = \"vcp\"", &format!("protocol = \"{proto}\""))
            .replace("router = \"vcp\"", &format!("router = \"{router}\""));
        for law in ["seed001", "ns2"] {
            from_toml(&text.replace("count = 2", &format!("count = 2\nparams = {{ ai_law = \"{law}\" }}")), "ok.toml")
                .unwrap_or_else(|e| panic!("{proto} {law}: {e}"));
        }
        let bad = text.replace("count = 2", "count = 2\nparams = { ai_law = \"ns-2\" }");
        refused(&bad, "flows[0].params.ai_law", "unknown variant `ns-2`, expected `seed001` or `ns2`");
        let bad = text.replace("count = 2", "count = 2\nparams = { ai_law = \"ns2\", ai_ns2 = { t_d = -0.1 } }");
        refused(&bad, "flows[0].params.ai_ns2.t_d", "must be a finite number > 0");
    }
}

/// The routers write a load factor's digits over chains of their length and the sender decodes
/// chains of its own (MPCP §3.2, §5): a DPCP flow with chains of 3 through DPCP routers with
/// chains of 2 ran wrong before; it is refused naming the flow's key, both values and the port.
/// The check is the registry's path contract, so TPCP defaults (3 on both) and explicit equal
/// values pass, and a DCP-EW router (pairs) counts as chains of 2.
#[test]
fn sender_and_router_chain_lengths_must_agree() {
    let dpcp = GOOD.replace("buffer = 100 }", "buffer = 100, router = \"dpcp\" }").replace("\"newreno\"", "\"dpcp\"");
    from_toml(&dpcp, "ok.toml").expect("chains of 2 on both");
    let three = dpcp.replace("count = 2", "count = 2\nparams = { chain = 3 }");
    refused(
        &three,
        "flows[0].params.chain",
        "the sender's chain = 3 differs from chain = 2 of the 'dpcp' router module on r0->r1",
    );
    refused(&three, "flows[0].params.chain", "decodes chains of its own");
    from_toml(&three.replace("router = \"dpcp\"", "router = \"dpcp\", router_params = { chain = 3 }"), "ok.toml")
        .expect("3 on both");
    let tpcp = dpcp.replace("\"dpcp\"", "\"tpcp\"");
    from_toml(&tpcp, "ok.toml").expect("TPCP's default chains of 3 on both");
    refused(&tpcp.replace("router = \"tpcp\"", "router = \"dpcp\""), "flows[0].params.chain", "chain = 3 differs");
    refused(&tpcp.replace("router = \"tpcp\"", "router = \"dcpew\""), "flows[0].params.chain", "'dcpew' router module");
}

/// Issue 12, item 5: values outside what the clock (integer ns up to 2^53), memory and sampling
/// can represent are refused naming the key, not clamped or rounded.
#[test]
fn times_outside_the_clock_are_refused() {
    for d in ["1e300", "\"1e300s\"", "9223372036854775807", "9.223372036854775808e18", "1.8446744073709552e19"] {
        refused(&GOOD.replace("\"10s\"", d), "duration", "beyond the longest time a run can represent");
    }
    // 2^53 ns is the last time accepted (an interval as long keeps the sample count small), once
    // `limits.events` allows 104 days of a saturated 10 Mb/s dumbbell (about 10^11 events).
    let longest = GOOD.replace("\"10s\"", "\"9007199254740992ns\"") + "\n[record]\ninterval = \"9007199254740992ns\"";
    refused(&longest, "limits.events", "raise `limits.events`");
    let longest = longest + "\n[limits]\nevents = 1e12";
    assert_eq!(from_toml(&longest, "ok.toml").expect("2^53 ns").duration, 1 << 53);
    refused(
        &longest.replace("duration = \"9007199254740992ns\"", "duration = \"9007199254741100ns\""),
        "duration",
        "2^53",
    );
    // Below the 1 ns resolution, anywhere a time is written.
    let rec = |i: &str| format!("{GOOD}\n[record]\ninterval = \"{i}\"");
    refused(&rec("1e-300s"), "record.interval", "below the clock's resolution of 1 ns");
    refused(&rec("0.1ns"), "record.interval", "below the clock's resolution of 1 ns");
    refused(&GOOD.replace("delay = \"10ms\"", "delay = \"0.5ns\""), "topology.bottleneck.delay", "1 ns");
    refused(&GOOD.replace("count = 2", "count = 2\nstart = \"1e-12s\""), "flows[0].start", "1 ns");
    refused(&GOOD.replace("count = 2", "count = 2\nstop = 1e300"), "flows[0].stop", "2^53 ns");
    refused(&GOOD.replace("duration", "min_rto = \"0.1ns\"\nduration"), "min_rto", "1 ns");
    // Zero stays allowed where it was, and 1 ns is the finest time.
    from_toml(&GOOD.replace("delay = \"10ms\"", "delay = 0"), "ok.toml").expect("zero delay");
    from_toml(&GOOD.replace("count = 2", "count = 2\nstart = 0"), "ok.toml").expect("start at 0");
    let fine = GOOD.replace("\"10s\"", "\"1ms\"") + "\n[record]\ninterval = \"1ns\"";
    assert_eq!(from_toml(&fine, "ok.toml").expect("1 ns interval over 1 ms").sample_interval, 1);
}

#[test]
fn sizes_rates_and_buffers_outside_their_representation_are_refused() {
    refused(&GOOD.replace("\"10Mbps\"", "1e-300"), "topology.bottleneck.capacity", "too slow");
    refused(&GOOD.replace("buffer = 100", "buffer = 1e300"), "topology.bottleneck.buffer", "more than 2^32 - 1");
    refused(&GOOD.replace("buffer = 100", "buffer = 0.3"), "topology.bottleneck.buffer", "cannot hold one packet");
    refused(&GOOD.replace("buffer = 100", "buffer = \"1e300B\""), "topology.bottleneck.buffer", "2^53 bytes");
    refused(&GOOD.replace("count = 2", "count = 2\nsize = 1e300"), "flows[0].size", "2^53 bytes");
    let web = traffic("rate = 10.0", "dist = \"fixed\", size = \"1e300pkt\"");
    refused(&web, "traffic[0].size.size", "2^40 packets");
}

/// A `[[traffic]]` generator from s0 to d0 (flows of GOOD still present).
fn traffic(rate: &str, size: &str) -> String {
    format!("{GOOD}\n[[traffic]]\nprotocol = \"newreno\"\nsrc = \"s0\"\ndst = \"d0\"\n{rate}\nsize = {{ {size} }}\n")
}

#[test]
fn runaway_arrivals_are_refused_before_they_are_drawn() {
    let fixed = "dist = \"fixed\", size = \"10pkt\"";
    // 1e12 per second: a mean gap below 1 ns, even when max_flows bounds the count.
    refused(&traffic("rate = 1e12", fixed), "traffic[0].rate", "mean gap under the clock's resolution");
    refused(&traffic("rate = 1e12\nmax_flows = 10", fixed), "traffic[0].rate", "1 ns");
    // 1e8 per second for 10 s: about 1e9 flows, refused from the expectation (quickly).
    let t = std::time::Instant::now();
    refused(&traffic("rate = 1e8", fixed), "traffic[0].rate", "raise `limits.flows`");
    assert!(t.elapsed().as_secs_f64() < 1.0, "refused only after {:?}", t.elapsed());
    // max_flows below the limit makes the same rate acceptable (samples off, to keep the rows small).
    let capped = traffic("rate = 1e8\nmax_flows = 1000", fixed) + "\n[record]\nflows = false";
    assert_eq!(from_toml(&capped, "ok.toml").expect("bounded by max_flows").flows.len(), 1002);
    // The limit is configurable, and counts every group and generator.
    let small = |n: &str| format!("{}\n[limits]\nflows = {n}\n", traffic("rate = 100.0", fixed));
    refused(&small("500"), "traffic[0].rate", "limit of 500 flows");
    let s = from_toml(&small("5000"), "ok.toml").expect("about 1000 arrivals fit 5000");
    assert!((900..1100).contains(&(s.flows.len() - 2)), "{} flows", s.flows.len());
    refused(&format!("{GOOD}\n[limits]\nflows = 1"), "flows[0].count", "limit of 1 flows");
    refused(&format!("{GOOD}\n[limits]\nflows = 0"), "limits.flows", "whole number");
    refused(&format!("{GOOD}\n[limits]\nflows = 2.5"), "limits.flows", "whole number");
    refused(&format!("{GOOD}\n[limits]\nmemory = 2"), "limits.memory", "more than `limits.memory` = 0.00 GB");
    refused(&format!("{GOOD}\n[limits]\nmemory = \"1bdp\""), "limits.memory", "must be bytes");
}

#[test]
fn runs_that_would_sample_more_than_the_limit_are_refused() {
    // 10 s at 1 us: 10^7 sample times x (10 ports x 3 rows + 2 flows), far over 2*10^7 rows.
    let fine = format!("{GOOD}\n[record]\ninterval = \"1us\"");
    refused(&fine, "record.interval", "raise `limits.samples`");
    refused(&fine, "record.interval", "sample rows");
    // Without an interval (the default, duration / 1000, is never too fine), the many flows are what
    // counts, and the key named is the limit.
    let many = GOOD.replace(
        "count = 2",
        "count = 2\n[[flows]]\nprotocol = \"newreno\"\nsrc = \"s1\"\ndst = \"d1\"\ncount = 40000",
    );
    // 1001 sample times; each of the 40002 unbounded flows may have a row at each, plus its last.
    refused(&many, "limits.samples", "40082004 flow rows");
    // About 4*10^7 rows at a few hundred bytes each: over the default `limits.memory` too.
    refused(&format!("{many}\n[limits]\nsamples = 1e8"), "limits.memory", "raise `limits.memory`");
    let raised = format!("{many}\n[limits]\nsamples = 1e8\nmemory = \"20GB\"");
    assert_eq!(from_toml(&raised, "ok.toml").expect("under a raised limit").flows.len(), 40002);
    // No per-flow series and few ports: the same run fits.
    let few = format!("{many}\n[record]\nflows = false\nports = [\"r0->r1\"]");
    from_toml(&few, "ok.toml").expect("1001 times x 1 port x 3 rows");
}

/// A BDP buffer is sized once routes are known; a multiple that comes to less than one packet
/// (or to more than a port can count) is refused with the link's key, never clamped (issue 12,
/// item 5). 10 Mb/s x 20 ms RTT = 25,000 B = 25 packets of 1000 B (the default packet size).
#[test]
fn a_bdp_buffer_below_one_packet_or_beyond_a_port_is_refused() {
    let bdp = |x: &str| GOOD.replace("buffer = 100", &format!("buffer = \"{x}bdp\""));
    let one = from_toml(&bdp("1"), "good.toml").expect("1 bdp is 25 packets");
    assert_eq!(one.links.len(), 5);
    refused(&bdp("0.01"), "topology.bottleneck.buffer", "less than one packet");
    refused(&bdp("1e12"), "topology.bottleneck.buffer", "more than 2^32 - 1");
    // An access link left at its default (1 bdp) on a path of a few hundred bytes of BDP.
    let slow = GOOD
        .replace("\"10ms\"", "\"10us\"")
        .replace("pairs = 2", "pairs = 2\naccess = { capacity = \"64kbps\", delay = \"1us\" }");
    let e = from_toml(&slow, "bad.toml").expect_err("a BDP of a fraction of a packet");
    assert!(e.key.ends_with(".buffer") && e.reason.contains("less than one packet"), "{e}");
}

/// Every scenario the project ships is accepted as written (a check that a stricter rule, such as
/// the BDP refusal above, refuses nothing a user is given).
#[test]
fn every_shipped_scenario_is_accepted() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/racc/scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("the shipped scenarios") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        if text.contains("kind = \"trace\"") || text.contains("kind = \"connection_matrix\"") {
            // A trace's or connection matrix's file is read by the front end (tests/python/test_core.py checks every
            // shipped scenario through it); the engine alone takes its rows inline (tests/trace.rs).
            continue;
        }
        if let Err(e) = from_toml(&text, &path.display().to_string()) {
            panic!("{e}");
        }
        n += 1;
    }
    assert!(n >= 20, "{n} shipped scenarios");
}
