//! A protocol's own metrics share their table with the standard columns: a named metric called
//! like a standard column would silently replace it in the results (the bindings key columns by
//! name). Every standard protocol, run briefly through its own router module (or DropTail), must
//! report names of its own.

mod common;

use racc_proto::registry::Registry;
use racc_sim::metrics::{FlowSeries, PortSeries};

#[test]
fn no_named_metric_shadows_a_standard_column() {
    let reg = Registry::standard();
    let flow_std: Vec<&str> = FlowSeries::default().columns().iter().map(|(n, _)| *n).collect();
    let port_std: Vec<&str> = PortSeries::default().columns().iter().map(|(n, _)| *n).collect();
    let mut checked = 0;
    for p in reg.protocols() {
        let router = if reg.router(p.name).is_some() { p.name } else { "droptail" };
        let toml = format!(
            r#"
duration = "2s"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = {{ capacity = "10Mbps", delay = "10ms", buffer = "1bdp", router = "{router}", router_params = {{ count_ops = {count} }} }}
[[flows]]
protocol = "{name}"
src = "s{{i}}"
dst = "d{{i}}"
count = 2
[record]
interval = "100ms"
"#,
            name = p.name,
            count = matches!(p.name, "xcp" | "rcp" | "piqi-rcp" | "jetmax"),
        );
        let toml = if router == "droptail" || !matches!(p.name, "xcp" | "rcp" | "piqi-rcp" | "jetmax") {
            toml.replace(", router_params = { count_ops = false }", "")
        } else {
            toml
        };
        let mut s = common::sim(&toml);
        s.run();
        for c in &s.flow_series.named.columns {
            assert!(!flow_std.contains(&c.name), "{}: sender metric '{}' shadows a flows column", p.name, c.name);
        }
        for c in &s.port_series.named.columns {
            assert!(!port_std.contains(&c.name), "{}: router metric '{}' shadows a links column", p.name, c.name);
        }
        checked += 1;
    }
    assert!(checked >= 9, "{checked} protocols");
}
