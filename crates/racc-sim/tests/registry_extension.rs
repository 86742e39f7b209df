//! A protocol defined only here runs through the registry in a simulated dumbbell, with no line
//! of the engine, the bindings or Python written for it: the controller interface, the registry
//! table, packet direction and named metrics are all a new protocol needs.
//!
//! - `toy-aimd`: a window controller on the TCP transport with its own additive step and its
//!   own decrease factor, reporting its decreases as a named metric.
//! - `toy-ping`: its own transport, whose receiver answers every data packet with a data packet
//!   of its own on the return path: the engine must route by the direction the endpoint set,
//!   not by the packet's kind.
//! - `toy-counter`: a router module counting the forward packets that reach it, reported as a named
//!   metric of the links table.

mod common;

use common::last_per_flow;
use racc_proto::cc::{Ack, CongestionControl, Response, SenderCtx, Signal};
use racc_proto::endpoint::{Endpoint, EndpointStats, FlowConfig};
use racc_proto::metrics::{MetricSink, MetricValue};
use racc_proto::packet::{Direction, Kind, Packet, TcpHeader};
use racc_proto::params::{parse, positive, ParamError};
use racc_proto::registry::{
    FlowProtocol, PortIdentity, ProtocolEntry, Registry, Regulation, RouterEntry, RouterFactory,
};
use racc_proto::rng::SimRng;
use racc_proto::router::{PortView, RouterModule, Verdict};
use racc_proto::tcp::{self, Recovery, TcpParams};
use racc_proto::time::Time;
use racc_sim::scenario::from_toml_with;
use racc_sim::Simulator;
use std::sync::Arc;

/// AIMD with its own constants: + `alpha` segments per window of ACKs, × `BETA` on a loss.
#[derive(Debug)]
struct ToyAimd {
    cwnd: f64,
    mss: f64,
    alpha: f64,
    decreases: u64,
}

const BETA: f64 = 0.7;

impl CongestionControl for ToyAimd {
    fn window(&self) -> f64 {
        self.cwnd
    }

    fn set_window(&mut self, window: f64, _ssthresh: f64) {
        self.cwnd = window.max(self.mss);
    }

    fn on_ack(&mut self, ack: &Ack<'_>, _ctx: &SenderCtx) {
        if !ack.is_duplicate() {
            self.cwnd += self.alpha * self.mss * self.mss / self.cwnd;
        }
    }

    fn on_congestion(&mut self, signal: Signal, _ctx: &SenderCtx) -> Response {
        match signal {
            Signal::Loss | Signal::EcnEcho => {
                self.decreases += 1;
                Response::SetWindow(BETA * self.cwnd)
            }
            Signal::Timeout | Signal::SynTimeout => Response::SetWindow(self.mss),
        }
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("toy_decreases", "events", MetricValue::Count(self.decreases));
    }
}

#[derive(serde::Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, default)]
struct ToyParams {
    alpha: f64,
}

impl Default for ToyParams {
    fn default() -> ToyParams {
        ToyParams { alpha: 2.0 }
    }
}

#[derive(Debug)]
struct ToyFlow(ToyParams);

impl FlowProtocol for ToyFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        let mss = tcp::mss_for(cfg, 0) as f64;
        let cc = ToyAimd { cwnd: 2.0 * mss, mss, alpha: self.0.alpha, decreases: 0 };
        tcp::tcp_sender_with(cfg, Recovery::NewReno, &TcpParams::default(), Box::new(cc))
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        tcp::tcp_receiver(cfg)
    }
}

fn parse_toy(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    let p: ToyParams = parse(params)?;
    positive("alpha", p.alpha)?;
    Ok(Arc::new(ToyFlow(p)))
}

/// The `toy-ping` transport: stop and wait, 50 data packets out, one data packet back for each.
struct PingSender {
    flow: u32,
    left: u32,
    /// A ping may go (at the start and after each answer).
    ready: bool,
    answers: u64,
}

struct PingReceiver {
    flow: u32,
    pending: u32,
    got: u64,
}

fn ping_packet(flow: u32, dir: Direction) -> Packet {
    let mut p = Packet::tcp(flow, Kind::Data, 100, 60, TcpHeader::default());
    p.dir = dir;
    p
}

impl Endpoint for PingSender {
    fn start(&mut self, _now: Time) {}
    fn on_packet(&mut self, _now: Time, pkt: &Packet) {
        assert_eq!((pkt.kind, pkt.dir), (Kind::Data, Direction::Return), "only the answers reach the sender");
        self.answers += 1;
        self.ready = true;
    }
    fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        (self.ready && self.left > 0).then(|| {
            (self.left, self.ready) = (self.left - 1, false);
            ping_packet(self.flow, Direction::Forward)
        })
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn on_timeout(&mut self, _now: Time) {}
    fn stats(&self) -> EndpointStats {
        EndpointStats { bytes: self.answers, ..Default::default() }
    }
    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("ping_answers", "packets", MetricValue::Count(self.answers));
    }
}

impl Endpoint for PingReceiver {
    fn start(&mut self, _now: Time) {}
    fn on_packet(&mut self, _now: Time, pkt: &Packet) {
        assert_eq!(pkt.dir, Direction::Forward, "only the pings reach the receiver");
        self.got += 1;
        self.pending += 1;
    }
    fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        (self.pending > 0).then(|| {
            self.pending -= 1;
            ping_packet(self.flow, Direction::Return)
        })
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn on_timeout(&mut self, _now: Time) {}
    fn stats(&self) -> EndpointStats {
        EndpointStats { bytes: self.got, ..Default::default() }
    }
}

#[derive(Debug)]
struct PingFlow;

impl FlowProtocol for PingFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        Box::new(PingSender { flow: cfg.flow, left: 50, ready: true, answers: 0 })
    }
    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        Box::new(PingReceiver { flow: cfg.flow, pending: 0, got: 0 })
    }
}

fn parse_ping(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    #[derive(serde::Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    struct NoParams {}
    let _: NoParams = parse(params)?;
    Ok(Arc::new(PingFlow))
}

/// Counts forward packets (SYNs and data); forwards everything.
struct ToyCounter(u64);

impl RouterModule for ToyCounter {
    fn name(&self) -> &'static str {
        "toy-counter"
    }
    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, _port: &PortView) -> Verdict {
        if pkt.dir == Direction::Forward {
            self.0 += 1;
        }
        Verdict::Forward
    }
    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("toy_forward_arrivals", "packets", MetricValue::Count(self.0));
    }
}

#[derive(Debug)]
struct ToyCounterFactory;

impl RouterFactory for ToyCounterFactory {
    fn build(&self, _port: &PortIdentity<'_>, _rng: SimRng) -> Box<dyn RouterModule> {
        Box::new(ToyCounter(0))
    }
}

fn parse_counter(_params: &serde_json::Value) -> Result<Arc<dyn racc_proto::registry::RouterFactory>, ParamError> {
    Ok(Arc::new(ToyCounterFactory))
}

fn registry() -> Registry {
    Registry::standard()
        .clone()
        .with_router(RouterEntry { name: "toy-counter", description: "a test's counter", parse: parse_counter })
        .with_protocol(ProtocolEntry {
            name: "toy-aimd",
            aliases: &[],
            regulation: Regulation::Window,
            description: "a test's AIMD",
            parse: parse_toy,
        })
        .with_protocol(ProtocolEntry {
            name: "toy-ping",
            aliases: &[],
            regulation: Regulation::Window,
            description: "a test's transport whose receiver sends data",
            parse: parse_ping,
        })
}

const DUMBBELL: &str = r#"
duration = "30s"
[topology]
kind = "dumbbell"
pairs = 4
bottleneck = { capacity = "10Mbps", delay = "20ms", buffer = 50 }
[[flows]]
protocol = "toy-aimd"
params = { alpha = 2.0 }
src = "s{i}"
dst = "d{i}"
count = 4
[record]
interval = "1s"
"#;

fn count_column<'a>(s: &'a Simulator, name: &str) -> &'a [u64] {
    s.flow_series.named.counts(name).unwrap_or_else(|| panic!("no count column {name}"))
}

#[test]
fn a_controller_defined_in_a_test_runs_through_the_registry_and_reports_its_metric() {
    let r = registry();
    let spec = from_toml_with(DUMBBELL, "toy.toml", &r).unwrap_or_else(|e| panic!("{e}"));
    let mut s = Simulator::new(spec).unwrap();
    s.run();
    // Its metric is a column of the flows table, unit and all.
    let col = s.flow_series.named.get("toy_decreases").expect("the toy's metric");
    assert_eq!(col.unit, "events");
    assert!(col.present.iter().all(|&p| p), "every row is a toy flow");
    let dec = count_column(&s, "toy_decreases");
    let last: Vec<u64> = last_per_flow(&s, dec, f64::INFINITY).into_values().collect();
    assert_eq!(last.len(), 4);
    // A 50-packet buffer on a 10 Mb/s, ~100 ms path (~83 packets) overflows again and again
    // over 30 s of additive increase: every flow has cut, and AIMD keeps the link busy.
    assert!(last.iter().all(|&d| d >= 3), "decreases per flow: {last:?}");
    let bn = s.port_summary().into_iter().find(|p| p.name == "r0->r1").unwrap();
    assert!(bn.utilisation > 0.85 && bn.utilisation <= 1.0 + 1e-9, "utilisation {}", bn.utilisation);
    // The standard registry does not know it, and its parameters are checked like any.
    let e = racc_sim::scenario::from_toml(DUMBBELL, "toy.toml").unwrap_err();
    assert_eq!(e.key, "flows[0].protocol");
    assert!(e.reason.contains("unknown protocol 'toy-aimd'"), "{e}");
    let e = from_toml_with(&DUMBBELL.replace("alpha = 2.0", "alpha = -1.0"), "toy.toml", &r).unwrap_err();
    assert_eq!(e.key, "flows[0].params.alpha");
    let e = from_toml_with(&DUMBBELL.replace("alpha = 2.0", "beta = 0.5"), "toy.toml", &r).unwrap_err();
    assert!(e.key.starts_with("flows[0].params") && e.reason.contains("beta"), "{e}");
}

/// A larger additive step grows faster between losses: the toy's own constant reaches the run.
#[test]
fn the_toys_constant_changes_its_behaviour() {
    let r = registry();
    let run = |alpha: &str| {
        let text = DUMBBELL.replace("alpha = 2.0", &format!("alpha = {alpha}"));
        let mut s = Simulator::new(from_toml_with(&text, "toy.toml", &r).unwrap()).unwrap();
        s.run();
        count_column(&s, "toy_decreases").iter().sum::<u64>()
    };
    assert!(run("8.0") > run("0.5"), "more increase, more decreases");
}

#[test]
fn the_engine_routes_by_the_direction_the_endpoint_set() {
    let text = DUMBBELL.replace("protocol = \"toy-aimd\"\nparams = { alpha = 2.0 }", "protocol = \"toy-ping\"");
    let mut s = Simulator::new(from_toml_with(&text, "ping.toml", &registry()).unwrap()).unwrap();
    s.run();
    // Every ping reached its receiver and every answer (a data packet) its sender.
    let answers = count_column(&s, "ping_answers");
    let last = last_per_flow(&s, answers, f64::INFINITY);
    assert_eq!(last, (0..4).map(|f| (f, 50)).collect(), "answers per flow");
    let c = s.conservation();
    assert_eq!((c.sent, c.delivered, c.dropped), (400, 400, 0));
}

/// A router module's own counter reaches the links table as a named column, on the ports that
/// run it (both directions of the bottleneck link) and on no other.
#[test]
fn a_router_modules_metric_is_a_column_of_the_links_table() {
    let text = DUMBBELL.replace("buffer = 50 }", "buffer = 50, router = \"toy-counter\" }");
    let mut s = Simulator::new(from_toml_with(&text, "counter.toml", &registry()).unwrap()).unwrap();
    s.run();
    let ps = &s.port_series;
    let col = ps.named.get("toy_forward_arrivals").expect("the module's metric");
    assert_eq!(col.unit, "packets");
    let port = |name: &str| s.ports().iter().position(|p| p.name == name).unwrap() as u32;
    let (bn, back) = (port("r0->r1"), port("r1->r0"));
    let counts = ps.named.counts("toy_forward_arrivals").unwrap();
    let (mut seen, mut arrivals) = (0, 0);
    #[allow(clippy::needless_range_loop)] // `i` indexes five parallel columns
    for i in 0..ps.time_s.len() {
        assert_eq!(col.present[i], ps.port[i] == bn || ps.port[i] == back, "present exactly on the bottleneck's rows");
        if ps.port[i] == back {
            assert_eq!(counts[i], 0, "only ACKs, on the return path, cross r1->r0");
        }
        if ps.port[i] == bn {
            arrivals += ps.arrivals[i];
            // Only SYNs and data cross r0->r1 (ACKs return on r1->r0): the count is the port's arrivals.
            assert_eq!(counts[i], arrivals, "row {i}");
            seen += 1;
        }
    }
    assert!(seen >= 30 && arrivals > 1000, "{seen} rows, {arrivals} arrivals");
}
