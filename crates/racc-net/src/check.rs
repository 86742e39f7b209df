//! What a scenario needs that the live runtime cannot give, refused before anything is set up.

use crate::frame::IP_UDP_LEN;
use racc_sim::{ScenarioError, Spec};

/// More flows than one 2-core machine can run as real sockets with faithful timing: every flow
/// of the run, listed or arriving from a `[[traffic]]` entry, holds its own socket pair from the
/// start (docs/LIVE.md).
pub const MAX_FLOWS: usize = 50;
/// Packets must fit the TUN devices' 1500-byte MTU without fragmentation.
pub const MAX_PACKET: u32 = 1500;

/// Why a run has too many flows for live, saying where they come from: a `[[traffic]]` entry's
/// arrivals are flows too, which a user who wrote no `[[flows]]` would not guess.
fn too_many_flows(spec: &Spec) -> String {
    let mut groups: Vec<(&str, usize)> = Vec::new();
    for f in &spec.flows {
        match groups.iter_mut().find(|(g, _)| *g == f.group) {
            Some((_, n)) => *n += 1,
            None => groups.push((&f.group, 1)),
        }
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.1));
    let named: Vec<String> = groups.iter().take(3).map(|(g, n)| format!("{n} in group {g:?}")).collect();
    let more = if groups.len() > 3 { format!(" and {} more groups", groups.len() - 3) } else { String::new() };
    format!(
        "{} flows ({}{more}; a [[traffic]] entry's arrivals over the run count as flows); live runs take at \
         most {MAX_FLOWS}, since each flow holds a real socket pair for the whole run, driven in real time on \
         this machine's cores: shorten the run, lower the arrival rate or use fewer flows",
        spec.flows.len(),
        named.join(", ")
    )
}

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
        return refuse("flows", too_many_flows(spec));
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
