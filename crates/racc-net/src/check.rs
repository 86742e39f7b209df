//! What a scenario needs that the live runtime cannot give, refused before anything is set up.

use crate::frame::IP_UDP_LEN;
use racc_sim::{ScenarioError, Spec};

/// More flows than one 2-core machine can run as real sockets with faithful timing.
pub const MAX_FLOWS: usize = 50;
/// Packets must fit the TUN devices' 1500-byte MTU without fragmentation.
pub const MAX_PACKET: u32 = 1500;

/// Refuse `spec` with the key and the reason if it cannot run live.
pub fn check(spec: &Spec) -> Result<(), ScenarioError> {
    let refuse = |key: &str, reason: String| {
        Err(ScenarioError { source: spec.name.clone(), key: key.into(), reason: format!("cannot run live: {reason}") })
    };
    if spec.duration > crate::MAX_DURATION {
        return refuse(
            "duration",
            format!(
                "{} s; a live run lasts at most {} s (a day: live time is real time)",
                spec.duration as f64 * 1e-9,
                crate::MAX_DURATION / 1_000_000_000
            ),
        );
    }
    if spec.flows.is_empty() {
        return refuse("flows", "the scenario has no flows".into());
    }
    if spec.flows.len() > MAX_FLOWS {
        return refuse(
            "flows",
            format!(
                "{} flows; live runs take at most {MAX_FLOWS} (each flow end is a real socket driven in real time)",
                spec.flows.len()
            ),
        );
    }
    if !spec.tunnels.is_empty() {
        return refuse(
            "tunnels",
            "IPsec tunnels are modelled by the simulator only (a live tunnel would be real ESP)".into(),
        );
    }
    if !spec.media.is_empty() {
        return refuse(
            "topology.media",
            "shared wireless media are modelled by the simulator only (the router emulates point-to-point ports)"
                .into(),
        );
    }
    if !spec.sources.is_empty() {
        return refuse(
            "traffic",
            "closed-loop sources (web-like traffic) make flows while the simulator runs; the live hosts run a fixed list".into(),
        );
    }
    if spec.packet_size > MAX_PACKET || (spec.packet_size as usize) < IP_UDP_LEN {
        return refuse(
            "packet_size",
            format!(
                "{} bytes; live packets are real IPv4/UDP datagrams of {IP_UDP_LEN}..={MAX_PACKET} bytes",
                spec.packet_size
            ),
        );
    }
    for (i, f) in spec.flows.iter().enumerate() {
        if f.src == f.dst {
            return refuse(&format!("flows[{i}]"), "a flow from a host to itself".into());
        }
    }
    Ok(())
}
