//! racc-proto: every protocol of the racc family, written once, free of I/O and clocks.
//!
//! Engines (the simulator in `racc-sim`, the live runtime) drive these state machines:
//! they pass `now` in, deliver packets, fire timers, and carry out the decisions returned.
//!
//! - [`packet`]: the packet model (ECN bits, IP ID, TCP/DCCP fields, congestion header, outer IPsec header)
//! - [`endpoint`]: the sender/receiver interface engines drive
//! - [`cc`]: the congestion-controller interface every sender's "how much" implements
//! - [`metrics`]: named counters and gauges a protocol reports to any engine
//! - [`router`]: the per-output-port router module interface
//! - [`protocol`]: what every protocol and router module implements for engines and the registry
//!   (flow and router factories, path requirements); the ground floor every protocol imports
//! - [`dccp`]: DCCP CCID2 (RFC 4341) and DCCP/VCP: sender, receiver with Ack Vectors, Ack Ratio, Eq. 7-9 fluid model
//! - [`tcp`]: TCP Reno/NewReno transport driving any congestion controller (RFC 5681, 6582, 6298)
//! - [`aqm`]: DropTail and RED (gentle, packet/byte mode, drop or ECN mark)
//! - [`codel`]: CoDel (RFC 8289), the AQM that drops at dequeue by sojourn time
//! - [`loss`]: Bernoulli and Gilbert-Elliott loss processes
//! - [`ipsec`]: ESP tunnel-mode encapsulation (outer ECN bits and IP ID only)
//! - [`registry`]: protocol and router-module names to constructors; the top floor, which
//!   imports every protocol and which no protocol imports
//! - [`rng`]: deterministic per-component random streams
//! - [`vcp`]: VCP over TCP: load-factor estimator, router module, window laws, ACK echo
//! - [`coexist`]: VCP and TCP/RED in two sub-queues of one port (VCP-DCCP §4.4), the `vcp-red` module
//! - [`dpcp`]: DPCP and TPCP (MPCP §3, §5) over TCP: the load factor split over chains of 2 or 3
//!   packets, router (Alg. 2), decoder, window; TPCP's entry points in `dpcp/tpcp.rs`
//! - [`dcpew`]: DCP-EW (§III): DPCP ordered by the IP ID, through IPsec tunnels, with
//!   loss differentiation
//! - [`jetmax`]: JetMax (docs/PROTOCOLS.md §7): router module, rate controller, parameters
//! - [`rcp`]: RCP (rate router, paced rate-based sender), docs/PROTOCOLS.md §6
//! - [`piqi_rcp`]: PIQI-RCP's router [reconstructed], docs/PROTOCOLS.md §8 (RCP's sender and receiver);
//!   its rule in `piqi_rcp/pi_law.rs`
//! - [`xcc`]: the congestion-header layer of XCC-Linux (receiver echo, countable router arithmetic)
//! - [`xcp`]: XCP over TCP: router module (efficiency and fairness controllers), feedback-driven window;
//!   XCP-b is its router with the spare bandwidth from the queue (`xcp/xcp_b.rs`)
//! - [`qfcp`]: QFCP over TCP (QFCP): fair-share rate router with flow-count estimate and capacity
//!   probe, window = feedback·rtt, no halving on loss
//! - [`wire`]: racc's headers as bytes (checked views, parsed representations) for the live runtime and pcap

pub mod aqm;
pub mod cc;
pub mod codel;
pub mod coexist;
pub mod dccp;
pub mod dcpew;
pub mod dpcp;
pub mod endpoint;
pub mod ipsec;
pub mod jetmax;
pub mod loss;
pub mod metrics;
pub mod packet;
pub mod params;
pub mod piqi_rcp;
pub mod protocol;
pub mod qfcp;
pub mod rcp;
pub mod registry;
pub mod rng;
pub mod router;
pub mod tcp;
pub mod time;
pub mod vcp;
pub mod wire;
pub mod xcc;
pub mod xcp;

pub use endpoint::{Endpoint, EndpointStats, FlowConfig};
pub use packet::{CongHeader, Kind, Packet, TcpHeader, Transport};
pub use router::{PortView, RouterModule, Verdict};
pub use time::{Dur, Time};
