//! Classic queue management for router output ports (PROTOCOLS.md §12).
//!
//! - [`DropTail`]: forward everything; the engine's port enforces the buffer limit after the
//!   module's verdict, so a DropTail module only gives the port a name and its counters.
//! - [`Red`]: Random Early Detection (Floyd & Jacobson 1993) with ns-2's gentle mode, packet or
//!   byte mode, drop or ECN mark (RFC 3168).

pub mod droptail;
pub mod red;

pub use droptail::DropTail;
pub use red::{red_byte_scale, red_ewma, red_idle_decay, red_pa, red_pb, Red, RedAction, RedMode, RedParams};
