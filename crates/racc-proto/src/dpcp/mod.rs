//! MPCP: DPCP (n = 2) and TPCP (n = 3) router-assisted congestion control [seed 000 §3, §5;
//! PROTOCOLS.md §3]. A 2n-bit load-factor code travels split over n consecutive packets, two
//! ECN bits each; the packet's place in its chain rides in the TCP header (seq/ack order for
//! n = 2, a checksum offset for n ≥ 3).
//!
//! - [`levels`]: seed 000 Table 1, ρ → code, ξ, MD factors; the TPCP refinement
//! - [`ordering`]: Alg. 1 (sender / receiver) and TPCP's checksum offsets; `position(&Packet)`
//! - [`encode`]: Alg. 2 at a router, one 2-bit flag per flow
//! - [`decode`]: the sender's decoder (saved LF, exceptions, VCP fallback, MD bookkeeping)
//! - [`router`]: [`DpcpRouter`], the router module (VCP's ρ, Alg. 2 at dequeue)
//! - [`window`]: [`DpcpWindow`], the sender's window laws over the TCP NewReno transport
//! - [`echo`]: [`DpcpEcho`], the receiver's restore and echo
//! - [`params`]: the scenario parameters of flows and ports

pub mod decode;
pub mod echo;
pub mod encode;
pub mod levels;
pub mod ordering;
pub mod params;
pub mod router;
pub mod window;

pub use decode::{Action, Decoder, DecoderParams, DecoderStats, Mode};
pub use echo::DpcpEcho;
pub use encode::{encode, Flag};
pub use levels::{Lf, Zone};
pub use ordering::{position, position_n, Anchor, Position, Sequencer};
pub use params::{DpcpParams, DpcpRouterParams, Growth};
pub use router::DpcpRouter;
pub use window::DpcpWindow;

use crate::endpoint::{Endpoint, FlowConfig};
use crate::params::ParamError;
use crate::tcp::{self, Recovery};

/// The flow as DPCP runs it. Seed 000 §3.2 rests on seq and ack being "sufficiently apart"
/// (random ISNs). The simulator's receiver numbers its own side from 2³² − 1, so data packets
/// carry ack 0 and ACKs seq 0, while flows start their data at `isn` (0 by default): seq and
/// ack would start equal. DPCP flows therefore start their data sequence space 2³¹ further on
/// (both ends, from the same `FlowConfig`) [reconstructed].
pub fn dpcp_flow(cfg: &FlowConfig) -> FlowConfig {
    FlowConfig { isn: cfg.isn.wrapping_add(1 << 31), ..cfg.clone() }
}

/// A TCP/DPCP (or TPCP, per `p.chain`) sender. Validates `p`.
pub fn dpcp_sender(cfg: &FlowConfig, p: &DpcpParams) -> Result<Box<dyn Endpoint>, ParamError> {
    p.validate()?;
    let cfg = dpcp_flow(cfg);
    let w = DpcpWindow::new(&cfg, tcp::mss_for(&cfg, 0), p);
    Ok(tcp::tcp_sender_with(&cfg, Recovery::NewReno, &p.tcp, Box::new(w)))
}

/// A TCP/DPCP receiver. Validates `p` (only `chain` matters here).
pub fn dpcp_receiver(cfg: &FlowConfig, p: &DpcpParams) -> Result<Box<dyn Endpoint>, ParamError> {
    p.validate()?;
    let cfg = dpcp_flow(cfg);
    Ok(tcp::tcp_receiver_with(&cfg, Box::new(DpcpEcho::new(p.chain, cfg.isn))))
}

#[cfg(test)]
mod tests;
