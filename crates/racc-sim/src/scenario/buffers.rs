//! What each port's buffer resolves to: a BDP buffer is sized from the mean round-trip
//! propagation delay of the flows crossing the port. Checking refuses a scenario whose BDP
//! buffer cannot be held (`build.rs`); both engines size their ports here (`crate::plan`).

use super::error::ScenarioError;
use super::spec::{BufferSpec, Spec};

/// Per port, the sum of the round-trip propagation delays of the flows (listed and made by
/// sources) that cross it, and their number: a BDP buffer is sized from their mean.
pub(crate) fn port_rtts(spec: &Spec) -> (Vec<f64>, Vec<u64>) {
    let n_ports = spec.port_map().count();
    let mut rtt_sum = vec![0f64; n_ports];
    let mut rtt_n = vec![0u64; n_ports];
    for f in spec.flows.iter().chain(spec.sources.iter().map(|s| &s.flow)) {
        let rtt = spec.propagation_rtt(f) as f64;
        for &p in spec.routes[f.fwd_route].iter().chain(&spec.routes[f.rev_route]) {
            rtt_sum[p] += rtt;
            rtt_n[p] += 1;
        }
    }
    (rtt_sum, rtt_n)
}

/// Every BDP buffer of a checked scenario resolves to a size a port can hold (scenario checking
/// calls this once routes are known, so such a scenario is refused before anything runs).
pub(crate) fn check_bdp_buffers(spec: &Spec) -> Result<(), ScenarioError> {
    let (rtt_sum, rtt_n) = port_rtts(spec);
    let pm = spec.port_map();
    // Port order as `PortMap` numbers them: two per link, then one per medium member. The key
    // is written out only for a refusal (40,002 ports at 10,000 flows).
    let link_ports = spec.links.iter().flat_map(|l| [0, 1].map(|_| (None, l.capacity_bps, l.buffer)));
    let medium_ports = spec
        .media
        .iter()
        .enumerate()
        .flat_map(|(mi, m)| m.members.iter().map(move |_| (Some(mi), m.capacity_bps, m.buffer)));
    for (p, (medium, capacity_bps, buffer)) in link_ports.chain(medium_ports).enumerate() {
        if let BufferSpec::Bdp(_) = buffer {
            buffer_limits(buffer, capacity_bps, rtt_sum[p], rtt_n[p], spec.packet_size).map_err(|reason| {
                let key = match medium {
                    Some(mi) => format!("topology.media[{mi}]"),
                    None => spec.links[p / 2].key.to_string(),
                };
                ScenarioError {
                    source: spec.name.clone(),
                    key: format!("{key}.buffer"),
                    reason: format!("port {}: {reason}", pm.name(p)),
                }
            })?;
        }
    }
    Ok(())
}

/// A port's buffer limit in packets and bytes; a BDP buffer counts the mean round-trip
/// propagation delay of the flows crossing the port (`rtt_sum` over `rtt_n` flows, ns).
/// A BDP multiple that resolves to less than one packet, or to more packets than a port can
/// count, is refused (issue 12 item 5: never silently clamped). A port no flow crosses has no
/// BDP; it carries no packet, and gets a nominal 100-packet buffer.
pub(crate) fn buffer_limits(
    b: BufferSpec,
    capacity_bps: f64,
    rtt_sum: f64,
    rtt_n: u64,
    packet_size: u32,
) -> Result<(u32, u64), String> {
    Ok(match b {
        BufferSpec::Packets(n) => (n, u64::MAX),
        BufferSpec::Bytes(b) => (u32::MAX, b),
        BufferSpec::Bdp(_) if rtt_n == 0 => (100, u64::MAX),
        BufferSpec::Bdp(x) => {
            let rtt = rtt_sum / rtt_n as f64;
            let exact = x * capacity_bps * rtt * 1e-9 / 8.0 / packet_size as f64;
            let pkts = exact.round();
            if pkts.is_nan() || pkts < 1.0 {
                return Err(format!(
                    "{x} bdp is {exact:.3} packets of {packet_size} B (capacity {capacity_bps} b/s, mean RTT {:.6} s): \
                     less than one packet",
                    rtt * 1e-9
                ));
            }
            if pkts > u32::MAX as f64 {
                return Err(format!("{x} bdp is {pkts:e} packets, more than 2^32 - 1"));
            }
            (pkts as u32, u64::MAX)
        }
    })
}
