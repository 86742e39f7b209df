//! `topology.media`: shared media, checked and converted into [`MediumSpec`]s. The defaults are
//! IEEE 802.11b DSSS with the long preamble (802.11-2016 §16.4.4 Table 16-4, §16.2.2): slot
//! 20 µs, SIFS 10 µs, DIFS = SIFS + 2 slots = 50 µs, CW 31..1023, PLCP preamble and header
//! 192 µs, an ACK of 14 B at 1 Mb/s after its 192 µs PLCP = 304 µs; MAC header and FCS 28 B;
//! 7 transmission attempts of a frame at most (dot11ShortRetryLimit).

use super::ctx::Ctx;
use super::error::ScenarioError;
use super::limits;
use super::links::{buffer, delay, loss, rate, router};
use super::raw::RawMedium;
use super::spec::{BufferSpec, DcfSpec, MediumSpec, NodeSpec, RouterScope};
use super::units::Amount;
use racc_proto::time::Time;
use std::collections::{HashMap, HashSet};

const US: f64 = 1e-6;

pub(super) fn media(
    cx: &Ctx,
    raw: &[RawMedium],
    nodes: &[NodeSpec],
    packet_size: u32,
) -> Result<Vec<MediumSpec>, ScenarioError> {
    if raw.is_empty() {
        return Ok(Vec::new()); // no name table to build (20,002 nodes at 10,000 flows)
    }
    let names: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let mut out: Vec<MediumSpec> = Vec::new();
    for (i, m) in raw.iter().enumerate() {
        let key = format!("topology.media[{i}]");
        out.push(medium(cx, &key, m, nodes, &names, packet_size)?);
        let name = &m.name;
        if name.is_empty() {
            return Err(cx.err(format!("{key}.name"), "must not be empty"));
        }
        if names.contains_key(name.as_str()) {
            return Err(cx.err(
                format!("{key}.name"),
                format!("'{name}' is also a node's name; ports onto the medium are named \"node->{name}\""),
            ));
        }
        if out[..i].iter().any(|o| o.name == *name) {
            return Err(cx.err(format!("{key}.name"), format!("duplicate medium name '{name}'")));
        }
    }
    Ok(out)
}

fn medium(
    cx: &Ctx,
    key: &str,
    m: &RawMedium,
    nodes: &[NodeSpec],
    names: &HashMap<&str, usize>,
    packet_size: u32,
) -> Result<MediumSpec, ScenarioError> {
    match m.kind.as_deref().unwrap_or("wlan") {
        "wlan" => {}
        k => return Err(cx.err(format!("{key}.kind"), format!("unknown medium kind '{k}' (known: wlan)"))),
    }
    let node = |k: String, n: &str| -> Result<usize, ScenarioError> {
        names.get(n).copied().ok_or_else(|| cx.err(k, format!("no node named '{n}'")))
    };
    let ap = node(format!("{key}.ap"), &m.ap)?;
    if nodes[ap].host {
        return Err(cx.err(
            format!("{key}.ap"),
            format!(
                "'{}' is a host; the access point forwards between the medium and the rest, so it must be a router",
                m.ap
            ),
        ));
    }
    if m.stations.is_empty() {
        return Err(cx.err(format!("{key}.stations"), "needs at least one station"));
    }
    let mut members = vec![ap];
    let mut seen = HashSet::from([ap]);
    for (j, s) in m.stations.iter().enumerate() {
        let k = format!("{key}.stations[{j}]");
        let n = node(k.clone(), s)?;
        if !seen.insert(n) {
            let why = if n == ap { "is the access point" } else { "is listed twice" };
            return Err(cx.err(k, format!("'{s}' {why}")));
        }
        members.push(n);
    }
    let phy = m.phy_rate.ok_or_else(|| cx.err(format!("{key}.phy_rate"), "missing: the PHY rate, e.g. \"11Mbps\""))?;
    rate(cx, &format!("{key}.phy_rate"), phy.0, packet_size)?;
    let capacity = match m.capacity {
        Some(c) => {
            rate(cx, &format!("{key}.capacity"), c.0, packet_size)?;
            c.0
        }
        None => phy.0,
    };
    let time = |k: &str, v: Option<super::units::Seconds>, default_us: f64| -> Result<Time, ScenarioError> {
        delay(cx, &format!("{key}.{k}"), v.map_or(default_us * US, |s| s.0))
    };
    let slot = time("slot", m.slot, 20.0)?;
    if slot == 0 {
        return Err(cx.err(format!("{key}.slot"), "must be > 0: backoff counts in slots"));
    }
    let sifs = time("sifs", m.sifs, 10.0)?;
    let difs = time("difs", m.difs, 50.0)?;
    let phy_header = time("phy_header", m.phy_header, 192.0)?;
    let ack = time("ack", m.ack, 304.0)?;
    let mac_overhead = match m.mac_overhead {
        None => 28,
        Some(s) => match s.0 {
            Amount::Bytes(b) if b.is_finite() && (0.0..=65_535.0).contains(&b) => b.round() as u32,
            Amount::Bytes(b) => {
                return Err(cx.err(format!("{key}.mac_overhead"), format!("must be 0..65535 bytes, got {b}")))
            }
            _ => return Err(cx.err(format!("{key}.mac_overhead"), "must be a number of bytes, e.g. \"28B\"")),
        },
    };
    let int = |k: &str, v: Option<i64>, default: i64, max: i64| -> Result<u32, ScenarioError> {
        let v = v.unwrap_or(default);
        if !(0..=max).contains(&v) {
            return Err(cx.err(format!("{key}.{k}"), format!("must be between 0 and {max}, got {v}")));
        }
        Ok(v as u32)
    };
    let cw_min = int("cw_min", m.cw_min, 31, 65_535)?;
    let cw_max = int("cw_max", m.cw_max, 1023, 65_535)?;
    if cw_max < cw_min {
        return Err(cx.err(format!("{key}.cw_max"), format!("must be at least cw_min = {cw_min}, got {cw_max}")));
    }
    let retry_limit = int("retry_limit", m.retry_limit, 7, 255)?;
    if retry_limit == 0 {
        return Err(cx.err(format!("{key}.retry_limit"), "must be at least 1 (transmission attempts of a frame)"));
    }
    let d = time("delay", m.delay, 1.0)?;
    // The longest airtime of one frame must be a representable time too.
    let longest = difs + cw_max as u64 * slot + phy_header + sifs + ack;
    limits::clock_ns(cx, key, longest as f64 * 1e-9)?;
    let buffer = buffer(cx, &format!("{key}.buffer"), m.buffer, packet_size, BufferSpec::Packets(50))?;
    let (router, router_params, router_factory) = router(cx, key, &m.router, &m.router_params)?;
    let router_scope = match m.router_scope.as_deref() {
        None | Some("member") => RouterScope::Member,
        Some("medium") => RouterScope::Medium,
        Some("both") => RouterScope::Both,
        Some(s) => {
            return Err(cx.err(
                format!("{key}.router_scope"),
                format!(
                    "unknown router scope '{s}' (known: member, a module per member's port; medium, one for the \
                 medium; both, each member's own and the medium's)"
                ),
            ))
        }
    };
    let all = loss(cx, &format!("{key}.loss"), m.loss.as_ref())?;
    let mut per_member = vec![all; members.len()];
    for (name, l) in m.station_loss.iter().flatten() {
        let k = format!("{key}.station_loss.{name}");
        let n = node(k.clone(), name)?;
        let j = members.iter().position(|&x| x == n).ok_or_else(|| {
            cx.err(k.clone(), format!("'{name}' is neither the access point nor a station of this medium"))
        })?;
        per_member[j] = loss(cx, &k, Some(l))?;
    }
    Ok(MediumSpec {
        name: m.name.clone(),
        members,
        phy_rate_bps: phy.0,
        capacity_bps: capacity,
        delay: d,
        buffer,
        dcf: DcfSpec { slot, sifs, difs, phy_header, ack, mac_overhead, cw_min, cw_max, retry_limit },
        router,
        router_params,
        router_factory,
        router_scope,
        loss: per_member,
    })
}
