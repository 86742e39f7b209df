//! racc-net: the racc protocols on real packets (issue 17). Linux only; needs root.
//!
//! One process runs a whole live experiment:
//! - [`netns`]: a network namespace per host, joined to the router by a TUN device;
//! - [`host`]: a thread per host inside its namespace, driving the same [`Endpoint`]s the
//!   simulator builds (from the scenario's flow factories) over UDP sockets in real time;
//! - [`router`]: a thread in the original namespace that reads every host's device and emulates
//!   the scenario's ports with the simulator's own `Port` (queue, rate, delay, loss, router
//!   module) on real IP packets ([`frame`]: IPv4 + UDP + racc datagram, the wire layer of
//!   `racc_proto::wire`);
//! - [`config`] (how both kinds of thread wait and batch) and [`schedule`] (the sample times
//!   both keep) sit below them, so neither imports the other.
//!
//! [`Endpoint`]: racc_proto::endpoint::Endpoint

pub mod auth;
pub mod check;
pub mod clock;
pub mod config;
pub mod device;
pub mod frame;
pub mod host;
pub mod netns;
pub mod packet;
pub mod report;
pub mod results;
pub mod router;
pub mod schedule;
pub mod sys;
pub mod tun;
pub mod udp;
pub mod uring;

use clock::Clock;
use host::{EndPlan, RECEIVER, SENDER};
use racc_proto::time::Time;
use racc_sim::Spec;
use report::LiveReport;
use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Barrier, OnceLock};

/// Real-time priorities (SCHED_FIFO): the router above the hosts, whose packets it times.
const ROUTER_PRIO: i32 = 20;
pub(crate) const HOST_PRIO: i32 = 10;

/// Set by SIGINT/SIGTERM (after [`install_signal_handlers`]): every loop of the run ends
/// within milliseconds and the run tears down as on a normal exit.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// The signal that set [`STOP`] (0: none).
pub static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The longest live run, ns: a day. Live time is real time; a longer one is a mistake (issue
/// 37 item 5: `--duration 1e300` ran forever).
pub const MAX_DURATION: Time = 86_400 * 1_000_000_000;

extern "C" fn on_signal(sig: libc::c_int) {
    STOP_SIGNAL.store(sig, Ordering::Relaxed);
    STOP.store(true, Ordering::Relaxed);
}

/// The name of a signal that stops a run.
pub fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        s => format!("signal {s}"),
    }
}

/// Route SIGINT and SIGTERM to [`STOP`], so Ctrl-C cleans up.
pub fn install_signal_handlers() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

/// Why a live run did not happen or broke off.
#[derive(Debug)]
pub enum LiveError {
    NotRoot,
    Scenario(racc_sim::ScenarioError),
    Io(String),
}

impl std::fmt::Display for LiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LiveError::NotRoot => write!(
                f,
                "racc live needs root: it creates network namespaces and TUN devices (run it as root, e.g. with sudo)"
            ),
            LiveError::Scenario(e) => write!(f, "{e}"),
            LiveError::Io(e) => write!(f, "live run failed: {e}"),
        }
    }
}

impl std::error::Error for LiveError {}

/// Which hosts get a namespace (those that a flow uses, in node order) and each flow's pair.
fn plan_hosts(spec: &Spec) -> (Vec<usize>, Vec<[usize; 2]>) {
    let mut nodes: Vec<usize> = spec.flows.iter().flat_map(|f| [f.src, f.dst]).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let idx = |n: usize| nodes.binary_search(&n).expect("listed");
    let pairs = spec.flows.iter().map(|f| [idx(f.src), idx(f.dst)]).collect();
    (nodes, pairs)
}

/// What a live run does beyond the scenario.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Capture the packets the router's ports send into this pcapng file: the ports named
    /// (every port if `None`).
    pub pcap: Option<(std::path::PathBuf, Option<Vec<String>>)>,
    /// How the router's loop waits (the defaults are the measured best).
    pub loop_cfg: config::LoopConfig,
}

/// Run `spec` live for its duration; namespaces and devices are removed before this returns.
pub fn run(spec: &Spec) -> Result<LiveReport, LiveError> {
    run_with(spec, &Options::default())
}

/// [`run`] with [`Options`].
pub fn run_with(spec: &Spec, opts: &Options) -> Result<LiveReport, LiveError> {
    if !sys::is_root() {
        return Err(LiveError::NotRoot);
    }
    check::check(spec).map_err(LiveError::Scenario)?;
    let (nodes, pairs) = plan_hosts(spec);
    let mut router =
        router::Router::new(spec, pairs.clone(), (0..nodes.len()).map(|i| netns::host_addr(i).octets()).collect())
            .map_err(LiveError::Scenario)?;
    if let Some((path, names)) = &opts.pcap {
        let idx = match names {
            None => None,
            Some(names) => Some(
                names
                    .iter()
                    .map(|n| {
                        router.ports.iter().position(|p| p.name == *n).ok_or_else(|| {
                            let all: Vec<&str> = router.ports.iter().map(|p| p.name.as_str()).collect();
                            LiveError::Scenario(racc_sim::ScenarioError {
                                source: spec.name.clone(),
                                key: "--pcap-port".into(),
                                reason: format!("no port named {n} (ports: {})", all.join(", ")),
                            })
                        })
                    })
                    .collect::<Result<Vec<usize>, _>>()?,
            ),
        };
        let epoch =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        router.capture(path, idx.as_deref(), epoch).map_err(|e| LiveError::Io(e.to_string()))?;
    }
    // The run's key: every packet a host sends carries a tag under it (`auth.rs`).
    let key = auth::Key::random().map_err(|e| LiveError::Io(format!("no random key for the run: {e}")))?;
    router.set_key(key);
    let swept = netns::sweep_stale();
    let net = netns::Network::create(nodes.len(), opts.loop_cfg.napi, opts.loop_cfg.veth)
        .map_err(|e| LiveError::Io(e.to_string()))?;
    let mut plans: Vec<Vec<EndPlan>> = vec![Vec::new(); nodes.len()];
    for (f, &[s, d]) in pairs.iter().enumerate() {
        let port = |side: usize| 10_000 + 2 * f as u16 + side as u16;
        let addr = |h: usize, side: usize| SocketAddrV4::new(net.hosts[h].addr, port(side));
        // Half the first port's delay: the rest is the margin for the way to the router.
        let reach = |side: usize| router.first_delay(f, side) / 2;
        plans[s].push(EndPlan {
            flow: f,
            side: SENDER,
            local: addr(s, SENDER),
            peer: addr(d, RECEIVER),
            reach: reach(SENDER),
        });
        plans[d].push(EndPlan {
            flow: f,
            side: RECEIVER,
            local: addr(d, RECEIVER),
            peer: addr(s, SENDER),
            reach: reach(RECEIVER),
        });
    }
    let ready = Barrier::new(nodes.len() + 1);
    let clock_cell = OnceLock::new();
    let tuns: Vec<&device::Device> = net.hosts.iter().map(|h| &h.dev).collect();
    // The router's CPU, kept free of host threads (only with two CPUs or more).
    let cpus = sys::cpus();
    let router_cpu = if opts.loop_cfg.pin && cpus.len() >= 2 { cpus.last().copied() } else { None };
    let host_run =
        host::HostRun { spec, key, ready: &ready, clock: &clock_cell, stop: &STOP, loop_cfg: &opts.loop_cfg };
    let (host_results, wall, routed) = std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .into_iter()
            .enumerate()
            .map(|(h, p)| {
                let ns = net.hosts[h].ns.clone();
                let host_run = &host_run;
                s.spawn(move || {
                    if let Some(c) = router_cpu {
                        sys::avoid_cpu(c);
                    }
                    host::run(&ns, p, host_run)
                })
            })
            .collect();
        ready.wait();
        let clock = Clock::start();
        clock_cell.set(clock).expect("set once");
        ready.wait();
        sys::set_timer_slack(opts.loop_cfg.timer_slack_ns);
        let realtime = sys::set_realtime(ROUTER_PRIO);
        let pinned = router_cpu.is_some_and(|c| sys::set_affinity(&[c]));
        let routed = router.run(&tuns, &clock, spec.duration, &STOP, &opts.loop_cfg);
        if pinned {
            // The main thread goes on with ordinary work, on any CPU.
            sys::set_affinity(&cpus);
        }
        if realtime {
            // Back to normal scheduling: the main thread goes on with ordinary work.
            let p = libc::sched_param { sched_priority: 0 };
            // SAFETY: the calling thread, a valid sched_param.
            unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &p) };
        }
        let wall = clock.now();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().expect("host thread panicked")).collect();
        (results, wall, routed)
    });
    drop(tuns);
    drop(net);
    routed.map_err(|e| LiveError::Io(format!("router: {e}")))?;
    let mut ends = Vec::new();
    let mut hosts = host::HostStats::default();
    for r in host_results {
        let (reps, hs) = r.map_err(|e| LiveError::Io(e.to_string()))?;
        ends.extend(reps);
        hosts.add(&hs);
    }
    let mut rep = report::build(spec, router, ends, wall, swept);
    rep.hosts = hosts;
    // Broken off by a signal before the scenario's end: the report says so, and nothing may
    // take it for a finished run.
    let sig = STOP_SIGNAL.load(Ordering::Relaxed);
    if STOP.load(Ordering::Relaxed) && wall < spec.duration {
        rep.stopped = Some(if sig != 0 { signal_name(sig) } else { "a stop request".into() });
    }
    Ok(rep)
}
