//! DCP-EW: DPCP for encrypted wireless networks [seed 003 §III; PROTOCOLS.md §4]. It keeps
//! DPCP's 4-bit load factor over 2-packet chains (levels, Alg. 2, decoder, exceptions) and
//! changes two things:
//!
//! - [`ordering`]: the position is the IP ID's LSB (0 = MSP), read passively; inside an IPsec
//!   tunnel the outer ID's. Hosts draw IDs per flow, incrementing or seeded random.
//! - [`router`]: [`DcpewRouter`], the NM (Alg. 2 by the visible ID, the tunnel as one flow)
//!   and the SM at gateways (PROTOCOLS.md §4 steps 1–5 through the tunnel hooks).
//! - [`window`]: [`DcpewWindow`], DPCP's laws plus the loss-differentiation bit map
//!   (N = 32, T = 16): a loss without T overload ACKs before it keeps cwnd.
//! - [`params`]: [`DcpewParams`], [`DcpewRouterParams`].
//!
//! The receiver is DPCP's ([`crate::dpcp::DpcpEcho`]): it reads the position from seq/ack,
//! which a DCP-EW host sets from its ID's parity and an egress SM re-marks, and its ACKs carry
//! the echo's position by seq/ack [reconstructed: the receiver cannot choose its ACKs' IDs].

pub mod ordering;
pub mod params;
pub mod router;
pub mod window;

pub use ordering::{id_position, plaintext_position, position, IpIdSource};
pub use params::{DcpewParams, DcpewRouterParams, IpIdMode, LossMd};
pub use router::{DcpewRouter, SmStats};
pub use window::{BitMap, DcpewWindow, LossStats};

use crate::dpcp::{dpcp_flow, DpcpEcho};
use crate::endpoint::{Endpoint, FlowConfig};
use crate::params::ParamError;
use crate::tcp::{self, Recovery};

/// A TCP/DCP-EW sender. Validates `p`. The flow's data sequence space starts 2³¹ on, as
/// DPCP's ([`dpcp_flow`]), so that seq and ack are far apart.
pub fn dcpew_sender(cfg: &FlowConfig, p: &DcpewParams) -> Result<Box<dyn Endpoint>, ParamError> {
    p.validate()?;
    let cfg = dpcp_flow(cfg);
    let w = DcpewWindow::new(&cfg, tcp::mss_for(&cfg, 0), p);
    Ok(tcp::tcp_sender_with(&cfg, Recovery::NewReno, &p.tcp, Box::new(w)))
}

/// A TCP/DCP-EW receiver: DPCP's echo for chains of 2.
pub fn dcpew_receiver(cfg: &FlowConfig, p: &DcpewParams) -> Result<Box<dyn Endpoint>, ParamError> {
    p.validate()?;
    let cfg = dpcp_flow(cfg);
    Ok(tcp::tcp_receiver_with(&cfg, Box::new(DpcpEcho::new(2, cfg.isn))))
}

#[cfg(test)]
mod tests;
