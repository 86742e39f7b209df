//! The congestion-header layer of XCC-Linux's explicit congestion control framework: a typed
//! header ([`CongHeader`](crate::packet::CongHeader)) of defined wire size between the
//! transport and IP, written by the sender's controller (`CongestionControl::on_send`), read
//! and rewritten by each router module on the path, and echoed by the receiver
//! ([`HeaderEcho`]) into ACKs, SYN-ACKs and REF answers. Any transport that takes an
//! `AckEcho` carries it. XCP, RCP, JetMax and PIQI-RCP (and QFCP) are its users.
//!
//! - [`capacity_probe`]: [`CapacityProbe`], QFCP's eq. (4) for ports whose capacity the
//!   router is not told (QFCP and XCP-b)
//! - [`echo`]: [`HeaderEcho`], the receiver half, for every header shape
//! - [`ops`]: [`Arith`], the number type router fast paths are written over, so that the
//!   arithmetic operations they do per packet can be counted on the code that runs (XCC-Linux
//!   states them: XCP 6 additions + 3 multiplications, JetMax 3 additions, RCP 2 + 2)

pub mod capacity_probe;
pub mod echo;
pub mod ops;

pub use capacity_probe::{CapacityProbe, CapacitySource};
pub use echo::HeaderEcho;
pub use ops::{Arith, Counted, OpCounts};
