//! Closed-loop tests of the whole chain: sender (transport + `DpcpWindow`) → router module →
//! receiver (transport + `DpcpEcho`) → sender, in rounds of one 200 ms RTT (= t_p, so an MI
//! step is ξ and an AI step α/cwnd).

use super::*;
use crate::endpoint::Endpoint;
use crate::packet::{Kind, Packet};
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule};
use crate::time::{Time, NS_PER_MS};
use crate::vcp::{LoadFactor, LoadFactorParams};
use levels::MAX_CHAIN;

const MS: Time = NS_PER_MS;

/// A router whose ρ is fixed at `rho` (one t_p of arrivals at 8 Mb/s, γ = 1).
fn fixed_router(chain: u8, rho: f64) -> (DpcpRouter, PortView) {
    let lfp = LoadFactorParams { t_p: 0.1, t_q: 0.05, gamma: 1.0, ..Default::default() };
    let p = DpcpRouterParams { chain, ..Default::default() };
    let mut r = DpcpRouter::with_estimator(LoadFactor::with_phase(&lfp, 0, 0), &p);
    let port = PortView { capacity_bps: 8e6, limit_pkts: 100, limit_bytes: u64::MAX, ..Default::default() };
    r.on_tick(0, &port);
    let mut p = Packet::tcp(0, Kind::Ack, (rho * 100_000.0) as u32, 0, Default::default());
    r.on_arrival(0, &mut p, &port);
    r.on_tick(50 * MS, &port);
    r.on_tick(100 * MS, &port);
    (r, port)
}

struct Loop {
    s: Box<dyn Endpoint>,
    r: Box<dyn Endpoint>,
    router: DpcpRouter,
    port: PortView,
    now: Time,
    sent: u64,
    dropped: u64,
    /// Data packets sent as an MSP right after an MSP: only VCP mode does that.
    msp_after_msp: u64,
    last_msp: bool,
}

impl Loop {
    fn new(name_params: DpcpParams, rho: f64, handshake: bool) -> Loop {
        let mut cfg = FlowConfig::new(0, 1040);
        cfg.handshake = handshake;
        let flow = DpcpFlow(name_params.clone());
        let (s, r) = (flow.sender(&cfg), flow.receiver(&cfg));
        let (router, port) = fixed_router(name_params.chain, rho);
        let mut l = Loop { s, r, router, port, now: 0, sent: 0, dropped: 0, msp_after_msp: 0, last_msp: false };
        l.s.start(0);
        l.r.start(0);
        l
    }

    /// One RTT: everything the sender has to send crosses the router (dequeue) and reaches the
    /// receiver after 100 ms; the ACKs reach the sender 100 ms later, one by one.
    fn round(&mut self, drop: &mut dyn FnMut(u64) -> bool, mut on_ack: impl FnMut(&dyn Endpoint)) {
        let t = self.now;
        if self.s.poll_timeout().is_some_and(|d| d <= t) {
            self.s.on_timeout(t);
        }
        let out: Vec<Packet> = std::iter::from_fn(|| self.s.poll_transmit(t)).collect();
        let mut acks = vec![];
        for mut p in out {
            if p.kind == Kind::Data {
                self.sent += 1;
                let msp = position_n(&p, self.router.lf().n()).is_msp();
                self.msp_after_msp += (msp && self.last_msp) as u64;
                self.last_msp = msp;
                if drop(self.sent) {
                    self.dropped += 1;
                    continue;
                }
                self.router.on_departure(t, &mut p, &self.port);
            }
            self.r.on_packet(t + 100 * MS, &p);
            acks.extend(std::iter::from_fn(|| self.r.poll_transmit(t + 100 * MS)));
        }
        self.now = t + 200 * MS;
        for a in acks {
            self.s.on_packet(self.now, &a);
            on_ack(self.s.as_ref());
        }
    }
}

/// The growth law replayed by hand for a loss-free chain at a fixed code: the k-th ACK (k from
/// 0) echoes position k mod n; the saved LF is the chain so far with the rest at 11.
fn replay(n: u8, port: Lf, acks: usize, cwnd0: f64) -> f64 {
    let mut cwnd = cwnd0;
    let mut lf = Lf::lowest(n);
    for k in 0..acks {
        let pos = (k % n as usize) as u8;
        lf = if pos == 0 { Lf::zone_worst(n, port.digit(0)) } else { lf.with_digit(pos, port.digit(pos)) };
        cwnd += lf.xi(0.25) + 1.0 / cwnd;
    }
    cwnd
}

#[test]
fn end_to_end_chain_decodes_every_digit() {
    for (chain, rho) in [(2u8, 0.1), (2, 0.5), (2, 0.9), (3, 0.05), (3, 0.3), (3, 0.97), (4, 0.02), (4, 0.5), (4, 0.93)]
    {
        let p = DpcpParams { chain, ..Default::default() };
        let mut l = Loop::new(p, rho, false);
        let port = l.router.lf();
        assert_eq!(port, Lf::from_rho(rho, chain));
        let mut acks = 0;
        let mut cwnds = vec![];
        for _ in 0..4 {
            l.round(&mut |_| false, |s| {
                acks += 1;
                cwnds.push(s.stats().cwnd_bytes / 1000.0);
            });
        }
        // The first round's ACKs carry no RTT sample yet, so rtt = t_p holds from the start.
        let want = replay(chain, port, acks, 2.0);
        let got = *cwnds.last().unwrap();
        assert!((got - want).abs() < 1e-9 * want, "chain {chain} ρ {rho}: cwnd {got} vs {want} after {acks} ACKs");
        let st = l.s.stats();
        assert_eq!((st.retransmits, st.timeouts), (0, 0));
        assert_eq!(st.bytes, acks as u64 * 1000, "every ACK restored and accepted");
        assert_eq!(l.r.stats().bytes, st.bytes);
        assert_eq!(l.msp_after_msp, 0, "no exceptions on a clean path: chains throughout");
    }
}

#[test]
fn end_to_end_with_handshake_and_overload() {
    // ρ = 1.2 → 11 10: the MSP applies 0.43, its LSP refines to 0.6·cwnd_pre.
    let mut l = Loop::new(DpcpParams::default(), 1.2, true);
    l.round(&mut |_| false, |_| {}); // SYN / SYN-ACK
    let mut seen = vec![];
    l.round(&mut |_| false, |s| seen.push(s.stats().cwnd_bytes / 1000.0));
    assert_eq!(seen.len(), 2);
    assert!((seen[0] - 1.0).abs() < 1e-12, "max(1, 0.43·2): {seen:?}");
    assert!((seen[1] - 1.2).abs() < 1e-12, "0.6·2: {seen:?}");
}

#[test]
fn lossy_path_delivers_everything_and_falls_back_to_vcp_mode() {
    for chain in 2..=MAX_CHAIN {
        let mut rng = SimRng::for_component(3, "dpcp/lossy");
        let p = DpcpParams { chain, ..Default::default() };
        let mut l = Loop::new(p, 0.5, false);
        for _ in 0..300 {
            l.round(&mut |_| rng.bernoulli(0.1), |_| {});
        }
        let st = l.s.stats();
        assert!(l.dropped > 50, "{}", l.dropped);
        assert!(st.bytes > 200_000, "chain {chain}: progress despite 10 % loss: {} B", st.bytes);
        // The receiver delivered what the sender saw acknowledged (no misplaced seq).
        assert!(l.r.stats().bytes >= st.bytes);
        assert!(l.r.stats().bytes - st.bytes <= 100 * 1000);
        assert!(l.msp_after_msp > 10, "chain {chain}: VCP mode was entered ({} MSP pairs)", l.msp_after_msp);
    }
}

#[test]
fn parses_and_checks_dpcp_and_tpcp() {
    use crate::params::ParamError;
    use crate::protocol::{FlowProtocol, RouterFactory, ANY_PORT};
    use serde_json::json;
    type Flow = fn(&serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError>;
    type Router = fn(&serde_json::Value) -> Result<Arc<dyn RouterFactory>, ParamError>;
    let both: [(&str, Flow, Router); 2] =
        [("dpcp", parse_dpcp_flow, parse_dpcp_router), ("tpcp", parse_tpcp_flow, parse_tpcp_router)];
    for (name, flow, router) in both {
        assert_eq!(flow(&serde_json::Value::Null).map(drop), Ok(()));
        assert_eq!(flow(&json!({"chain": 4})).map(drop), Ok(()));
        assert_eq!(flow(&json!({"chain": 1})).unwrap_err().key, "chain");
        assert_eq!(flow(&json!({"tcp": {"dupthresh": 0}})).unwrap_err().key, "tcp.dupthresh");
        assert!(flow(&json!({"mu": 0.1})).unwrap_err().reason.contains("mu"));
        assert_eq!(router(&serde_json::Value::Null).map(drop), Ok(()));
        assert_eq!(router(&json!({"chain": 7})).unwrap_err().key, "chain");
        assert_eq!(router(&json!({"gamma": 2.0})).unwrap_err().key, "gamma");
        let r = router(&serde_json::Value::Null).unwrap().build(&ANY_PORT, SimRng::for_component(1, "router/port0"));
        assert_eq!(r.name(), name, "tpcp defaults to chains of 3");
    }
    let r = parse_tpcp_router(&json!({"chain": 2})).map(|f| f.build(&ANY_PORT, SimRng::for_component(1, "p"))).unwrap();
    assert_eq!(r.name(), "dpcp");
    // TPCP end to end through its factory: position offsets on the data.
    let cfg = FlowConfig::new(0, 1040);
    let mut s = parse_tpcp_flow(&serde_json::Value::Null).map(|p| p.sender(&cfg)).unwrap();
    s.start(0);
    let mut ks = vec![];
    for _ in 0..2 {
        ks.extend(std::iter::from_fn(|| s.poll_transmit(0)).map(|p| position_n(&p, 3).0));
    }
    assert_eq!(ks, vec![0, 1]);
    assert!(parse_tpcp_flow(&json!({"chain": 9})).map(|p| p.receiver(&cfg)).is_err());
}
