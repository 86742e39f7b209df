//! VCP, the Variable-structure congestion Control Protocol, over the TCP NewReno transport
//! (TCP/VCP; seed 001 App. A1–A5, seed 000 §2; PROTOCOLS.md §2).
//!
//! - [`load_factor`]: the per-port load-factor estimator (A1, A2), reusable by DPCP and DCP-EW
//! - [`router`]: [`VcpRouter`], the router module (counts arrivals, marks at dequeue)
//!
//! The 2-bit code travels in the IP ECN bits (01 low, 10 high, 11 overload; 00 = not VCP).

pub mod load_factor;
pub mod router;

pub use load_factor::{load_factor, queue_ewma, vcp_code, LoadFactor, LoadFactorParams, RHO_HIGH, RHO_OVERLOAD};
pub use router::{VcpRouter, VcpRouterParams};

#[cfg(test)]
mod tests {
    use crate::registry;
    use crate::rng::SimRng;
    use serde_json::json;

    #[test]
    fn registry_builds_and_checks_the_router() {
        assert_eq!(registry::check_router("vcp", &serde_json::Value::Null), Ok(()));
        assert_eq!(registry::check_router("vcp", &json!({"t_q": -0.01})).unwrap_err().key, "t_q");
        assert!(registry::check_router("vcp", &json!({"mu": 0.1})).unwrap_err().reason.contains("mu"));
        let r = registry::router("vcp", &json!({"gamma": 0.95}), SimRng::for_component(1, "router/port0")).unwrap();
        assert_eq!(r.name(), "vcp");
        assert!(registry::ROUTER_MODULES.iter().any(|m| m.name == "vcp"));
    }
}
