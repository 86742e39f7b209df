//! MPCP: DPCP (n = 2) and TPCP (n = 3) router-assisted congestion control [seed 000 §3, §5;
//! PROTOCOLS.md §3]. A 2n-bit load-factor code travels split over n consecutive packets, two
//! ECN bits each; the packet's place in its chain rides in the TCP header (seq/ack order for
//! n = 2, a checksum offset for n ≥ 3).
//!
//! - [`levels`]: seed 000 Table 1, ρ → code, ξ, MD factors; the TPCP refinement
//! - [`ordering`]: Alg. 1 (sender / receiver) and TPCP's checksum offsets; `position(&Packet)`
//! - [`encode`]: Alg. 2 at a router, one 2-bit flag per flow
//! - [`decode`]: the sender's decoder (saved LF, exceptions, VCP fallback, MD bookkeeping)

pub mod decode;
pub mod encode;
pub mod levels;
pub mod ordering;

pub use decode::{Action, Decoder, DecoderParams, DecoderStats, Mode};
pub use encode::{encode, Flag};
pub use levels::{Lf, Zone};
pub use ordering::{position, position_n, Anchor, Position, Sequencer};
