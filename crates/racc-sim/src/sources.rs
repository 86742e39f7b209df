//! Closed-loop flow sources: traffic whose next flow depends on when the previous one finished,
//! so its flows cannot be listed before the run (the web-like on/off source of VCP-DCCP §4,
//! `web.rs`). The engine makes each flow a source asks for at its arrival time, from the
//! source's flow template (`scenario::SourceSpec`), and tells the source when that flow
//! completes; the source answers with its next arrival. A source has at most one flow or one
//! pending arrival at a time. Nothing here is looked at per packet.

use crate::traffic::Arrival;
use racc_proto::time::Time;

/// One source's state during a run.
pub trait FlowSource: Send {
    /// The source's first flow, or `None` if it makes none.
    fn first(&mut self) -> Option<Arrival>;
    /// Its flow completed at `now` (every byte acknowledged): the next one, at `now` or later,
    /// or `None` when the source is done.
    fn on_complete(&mut self, now: Time) -> Option<Arrival>;
}

/// What a scenario keeps of a source: its law and parameters, from which each run builds a
/// fresh [`FlowSource`] with its own random streams (same scenario and seed, same draws).
pub trait SourceLaw: Send + Sync + std::fmt::Debug {
    fn source(&self, seed: u64) -> Box<dyn FlowSource>;
}
