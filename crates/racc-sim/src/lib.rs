//! racc-sim: a deterministic packet-level discrete-event simulator for the racc protocols.
//!
//! - [`scenario`]: TOML/JSON scenario files, checked and resolved into a [`scenario::Spec`]
//! - [`engine`]: the event loop, flows and metrics sampling
//! - [`port`]: output queue + link + router module + loss, with lazy departures
//! - [`medium`]: shared media whose departures contention decides (802.11 DCF-like)
//! - [`routing`]: static shortest-path routes
//! - [`traffic`]: seeded flow-arrival generators
//! - [`bench`]: the standard benchmark scenario

pub mod bench;
pub mod engine;
pub mod event;
pub mod medium;
pub mod metrics;
pub mod port;
pub mod routing;
pub mod scenario;
pub mod traffic;

pub use engine::Simulator;
pub use scenario::{ScenarioError, Spec};
