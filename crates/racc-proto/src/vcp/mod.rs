//! VCP, the Variable-structure congestion Control Protocol, over the TCP NewReno transport
//! (TCP/VCP; seed 001 App. A1–A5, seed 000 §2; PROTOCOLS.md §2).
//!
//! - [`load_factor`]: the per-port load-factor estimator (A1, A2), reusable by DPCP and DCP-EW
//! - [`router`]: [`VcpRouter`], the router module (counts arrivals, marks at dequeue)
//! - [`laws`]: [`VcpLaws`], MI/AI/MD (A3–A5) on a window in packets, for any transport
//! - [`window`]: [`VcpWindow`], those laws as the TCP transport's congestion controller
//! - [`params`]: [`VcpParams`], a VCP flow's parameter table and the family's shared checks
//! - [`echo`]: [`VcpEcho`], the receiver's echo of the largest code into each ACK
//!
//! The 2-bit code travels in the IP ECN bits (01 low, 10 high, 11 overload; 00 = not VCP) and
//! back in the ACK's reserved-bit echo field.

pub mod echo;
pub mod laws;
pub mod load_factor;
pub mod params;
pub mod router;
pub mod window;

pub use echo::VcpEcho;
pub use laws::{ai_step, mi_step, MdEpisode, VcpLaws};
pub use load_factor::{load_factor, queue_ewma, vcp_code, LoadFactor, LoadFactorParams, RHO_HIGH, RHO_OVERLOAD};
pub use params::{check_window_laws, MdHold, VcpParams};
pub use router::{VcpRouter, VcpRouterParams};
pub use window::VcpWindow;

use crate::endpoint::{Endpoint, FlowConfig};
use crate::params::ParamError;
use crate::tcp::{self, Recovery};

/// A TCP/VCP sender: the NewReno transport with VCP's window laws. Validates `p`.
pub fn vcp_sender(cfg: &FlowConfig, p: &VcpParams) -> Result<Box<dyn Endpoint>, ParamError> {
    p.validate()?;
    let w = VcpWindow::new(cfg, tcp::mss_for(cfg, 0), p);
    Ok(tcp::tcp_sender_with(cfg, Recovery::NewReno, &p.tcp, Box::new(w)))
}

/// A TCP/VCP receiver: the TCP receiver echoing the largest code per ACK.
pub fn vcp_receiver(cfg: &FlowConfig) -> Box<dyn Endpoint> {
    tcp::tcp_receiver_with(cfg, Box::new(VcpEcho::new()))
}

#[cfg(test)]
mod tests {
    use crate::endpoint::FlowConfig;
    use crate::packet::{ecn, Kind};
    use crate::registry;
    use crate::rng::SimRng;
    use crate::time::NS_PER_MS;
    use serde_json::json;

    #[test]
    fn registry_builds_and_checks_vcp() {
        assert_eq!(registry::canonical_protocol("tcp-vcp"), Some("vcp"));
        assert_eq!(registry::check_protocol("vcp", &serde_json::Value::Null), Ok(()));
        assert_eq!(registry::check_protocol("vcp", &json!({"beta": 2.0})).unwrap_err().key, "beta");
        assert_eq!(registry::check_protocol("vcp", &json!({"tcp": {"max_rto": 0}})).unwrap_err().key, "tcp.max_rto");
        assert!(registry::check_protocol("vcp", &json!({"gama": 1})).unwrap_err().reason.contains("gama"));
        assert_eq!(registry::check_router("vcp", &serde_json::Value::Null), Ok(()));
        assert_eq!(registry::check_router("vcp", &json!({"t_q": -0.01})).unwrap_err().key, "t_q");
        assert!(registry::check_router("vcp", &json!({"mu": 0.1})).unwrap_err().reason.contains("mu"));
        let r = registry::router("vcp", &json!({"gamma": 0.95}), SimRng::for_component(1, "router/port0")).unwrap();
        assert_eq!(r.name(), "vcp");
        assert!(registry::ROUTER_MODULES.iter().any(|m| m.name == "vcp"));
    }

    /// Sender and receiver built by the registry, wired back to back: 2 packets at 01, ACKs
    /// echo the code, MI grows the window by one mi_step per acknowledged packet.
    #[test]
    fn sender_and_receiver_back_to_back() {
        let cfg = FlowConfig::new(3, 1040); // MSS 1000
        let mut s = registry::sender("vcp", &cfg, &serde_json::Value::Null).unwrap();
        let mut r = registry::receiver("vcp", &cfg, &serde_json::Value::Null).unwrap();
        s.start(0);
        r.start(0);
        let out: Vec<_> = std::iter::from_fn(|| s.poll_transmit(0)).collect();
        assert_eq!(out.len(), 2, "initial window 2 packets");
        assert!(out.iter().all(|p| p.kind == Kind::Data && p.ecn == ecn::ECT1 && p.size == 1040));
        // A router raised the second packet to 10 (high load).
        let mut second = out[1];
        second.ecn = ecn::ECT0;
        let t = 200 * NS_PER_MS; // rtt = t_p: mi_step = μ, ai_step = α/cwnd
        r.on_packet(t, &out[0]);
        r.on_packet(t, &second);
        let acks: Vec<_> = std::iter::from_fn(|| r.poll_transmit(t)).collect();
        assert_eq!(acks.iter().map(|a| a.tcp_hdr().unwrap().echo).collect::<Vec<_>>(), vec![0b01, 0b10]);
        s.on_packet(t, &acks[0]);
        assert!((s.stats().cwnd_bytes - 2062.5).abs() < 1e-9, "MI: 2 + 0.0625 packets");
        s.on_packet(t, &acks[1]);
        let want = (2.0625 + 1.0 / 2.0625) * 1000.0;
        assert!((s.stats().cwnd_bytes - want).abs() < 1e-9, "AI: + 1/cwnd packets");
    }
}
