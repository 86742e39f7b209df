//! racc-sim: a deterministic packet-level discrete-event simulator for the racc protocols.
//!
//! - [`scenario`]: TOML/JSON scenario files, checked and resolved into a [`scenario::Spec`]
//! - [`engine`]: the event loop, flows and metrics sampling
//! - [`plan`]: what both engines build from a spec: ports (buffers, router modules, loss) and flows
//! - [`port`]: output queue + link + router module + loss, with lazy departures
//! - [`medium`]: shared media whose departures contention decides (802.11 DCF-like)
//! - [`shared_router`]: one router module for all of a medium's member ports
//! - [`routing`]: static shortest-path routes
//! - [`traffic`]: seeded flow-arrival generators
//! - [`sources`]: closed-loop flow sources, whose next flow follows the previous one's completion
//! - [`web`]: the web-like on/off source of VCP-DCCP §4
//! - [`bench`]: the standard benchmark scenario

pub mod bench;
pub mod engine;
pub mod event;
pub mod medium;
pub mod metrics;
mod names;
pub mod notes;
pub mod pcap;
pub mod plan;
pub mod port;
pub mod routing;
pub mod scenario;
pub mod shared_router;
pub mod sources;
pub mod traffic;
pub mod web;

pub use engine::Simulator;
pub use scenario::{ScenarioError, Spec};
