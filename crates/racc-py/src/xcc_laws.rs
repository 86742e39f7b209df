//! The congestion-header family's laws one step at a time, for the differential tests of the
//! kernel's fixed-point twins (`kernel/bpf/xcp_law.h`, docs/KERNEL-BPF.md): conversion and
//! replay only, the laws are racc-proto's (`xcp::control`, `xcp::arrival_xcp`,
//! `xcp::departure`, `XcpWindow::apply_feedback`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use racc_proto::endpoint::FlowConfig;
use racc_proto::params::parse;
use racc_proto::xcp::{arrival_xcp, control, departure, Budget, Sums, XcpParams, XcpRouterParams, XcpWindow};

fn json(text: &str, what: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| PyValueError::new_err(format!("{what}: not JSON: {e}")))
}

fn err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// An XCP router port (window form) replayed on events, as `XcpRouter` drives the laws:
/// `(0, rtt_us, s, cwnd, header)` an XCP data packet (arrival's sums, then its departure's
/// feedback from the budget; header +inf allowed), `(1, elapsed_s, q_bytes, _, _)` the end of
/// a control interval, `(2, s, _, _, _)` a packet outside the ξ sums. Answers per event: for a
/// packet (feedback it leaves with, res_pos, res_neg), for an interval (d, φ, pos), for other
/// bytes (0, 0, 0). `capacity_bps` is C.
#[pyfunction]
pub(crate) fn xcp_router_trace(
    params: &str,
    capacity_bps: f64,
    events: Vec<(u8, f64, f64, f64, f64)>,
) -> PyResult<Vec<(f64, f64, f64)>> {
    let p: XcpRouterParams = parse(&json(params, "router_params")?).map_err(err)?;
    p.validate().map_err(err)?;
    let c = capacity_bps / 8.0;
    let mut sums = Sums::default();
    let mut d = p.initial_d;
    let mut budget = Budget { k_p: 0.0, k_n: 0.0, res_pos: 0.0, res_neg: 0.0 };
    let mut out = Vec::with_capacity(events.len());
    for (kind, a, b, cw, header) in events {
        match kind {
            0 => {
                let ((i, sa, sb), (u, bb)) = arrival_xcp(sums.in_bytes, sums.sum_a, sums.sum_b, a, b, cw.max(1.0));
                (sums.in_bytes, sums.sum_a, sums.sum_b) = (i, sa, sb);
                let fb = departure(&mut budget, u, bb, header, p.xcp_budget);
                out.push((fb, budget.res_pos, budget.res_neg));
            }
            1 => {
                let ctrl = control(&p, &sums, a, c, b, d);
                d = ctrl.d;
                budget = Budget { k_p: ctrl.xi_p / 1e12, k_n: ctrl.xi_n / 1e6, res_pos: ctrl.pos, res_neg: ctrl.neg };
                sums = Sums::default();
                out.push((ctrl.d, ctrl.phi, ctrl.pos));
            }
            2 => {
                sums.in_bytes += a;
                sums.other_bytes += a;
                out.push((0.0, 0.0, 0.0));
            }
            k => return Err(PyValueError::new_err(format!("events: kind {k} is not 0, 1 or 2"))),
        }
    }
    Ok(out)
}

/// XCP's window (wire bytes) after each echoed feedback (bytes; +inf leaves it), from
/// `initial_window` packets of `packet_size` wire bytes, for the flow parameters `params`.
#[pyfunction]
pub(crate) fn xcp_window_trace(
    params: &str,
    packet_size: u32,
    initial_window: u32,
    feedback: Vec<f64>,
) -> PyResult<Vec<f64>> {
    let p: XcpParams = parse(&json(params, "params")?).map_err(err)?;
    p.validate().map_err(err)?;
    let mut cfg = FlowConfig::new(1, packet_size);
    cfg.initial_window = Some(initial_window);
    let mut w = XcpWindow::new(&cfg, packet_size.saturating_sub(60).max(1), &p);
    Ok(feedback
        .into_iter()
        .map(|fb| {
            w.apply_feedback(fb);
            w.cwnd_wire()
        })
        .collect())
}

/// Checks an XCP router's parameter table as racc-proto does (the kernel's loader calls it).
#[pyfunction]
pub(crate) fn xcp_router_check(params: &str) -> PyResult<()> {
    let p: XcpRouterParams = parse(&json(params, "router_params")?).map_err(err)?;
    p.validate().map_err(err)
}

/// A forward data packet of `s` wire bytes with H_rtt `rtt_us` (0: none) through a rate router's
/// `RateCore` (RCP's, PIQI-RCP's): counted, then stamped from "no limit"; the rate it leaves with.
fn rate_packet(core: &mut racc_proto::rcp::RateCore, s: f64, rtt_us: f64) -> f64 {
    use racc_proto::packet::{CongHeader, Kind, Packet, TcpHeader};

    let mut pkt = Packet::tcp(1, Kind::Data, s as u32, 0, TcpHeader::default());
    pkt.cong = CongHeader::Rcp { rate: u32::MAX, rtt_us: rtt_us as u32 };
    core.on_arrival(&pkt);
    core.stamp(&mut pkt);
    let CongHeader::Rcp { rate, .. } = pkt.cong else { unreachable!() };
    rate as f64
}

/// An RCP router port replayed on events, as `RcpRouter` drives `RateCore` and `rcp_rate`:
/// `(0, s, rtt_us)` a forward data packet of `s` wire bytes with H_rtt (0: none), answering the
/// rate it leaves with from a "no limit" header; `(1, t_s, q_bytes)` the end of an interval
/// `t_s` after the previous one with the queue `q_bytes`, answering (R, d0). R_min takes
/// `pkt_bytes` as the port's packet size. Rates B/s, times s.
#[pyfunction]
pub(crate) fn rcp_router_trace(
    params: &str,
    capacity_bps: f64,
    pkt_bytes: f64,
    events: Vec<(u8, f64, f64)>,
) -> PyResult<Vec<(f64, f64)>> {
    use racc_proto::rcp::router::{rcp_rate, RateInterval};
    use racc_proto::rcp::{RateCore, RcpRouterParams};

    let p: RcpRouterParams = parse(&json(params, "router_params")?).map_err(err)?;
    p.validate().map_err(err)?;
    let mut core = RateCore::new(p.d0, p.rcp_d0_gain, false, 0, p.initial_rate, capacity_bps);
    let c = core.capacity();
    let mut now: u64 = 0;
    let mut out = Vec::with_capacity(events.len());
    for (kind, a, b) in events {
        match kind {
            0 => out.push((rate_packet(&mut core, a, b), 0.0)),
            1 => {
                now += (a * 1e9).round() as u64;
                let (t, y, mean) = core.close_interval(now);
                if t > 0.0 && c > 0.0 {
                    let d0 = core.d0;
                    // `r_min`: r_min_pkts packets of the port's size per d0, at most C.
                    let r_min = (p.r_min_pkts * pkt_bytes / d0).min(c);
                    let i = RateInterval { t, d0, c, y, q: b, r_min };
                    core.rate = rcp_rate(core.rate, p.alpha, p.beta, &i);
                    core.update_d0(t, mean, core.rate / c);
                }
                out.push((core.rate, core.d0));
            }
            k => return Err(PyValueError::new_err(format!("events: kind {k} is not 0 or 1"))),
        }
    }
    Ok(out)
}

/// Checks an RCP router's parameter table as racc-proto does.
#[pyfunction]
pub(crate) fn rcp_router_check(params: &str) -> PyResult<()> {
    let p: racc_proto::rcp::RcpRouterParams = parse(&json(params, "router_params")?).map_err(err)?;
    p.validate().map_err(err)
}

/// A PIQI-RCP router port replayed on events, as `PiqiRouter::interval` drives `RateCore` and
/// `pi_step` (with `count_newcomers` off, so J = 0 and admission never acts): `(0, s, rtt_us)` a
/// forward data packet, answering the rate it leaves with from a "no limit" header; `(1, t_s,
/// _)` the end of an interval `t_s` after the previous one, answering (R, d0). R_min takes
/// `pkt_bytes` as the port's packet size. Rates B/s, times s.
#[pyfunction]
pub(crate) fn piqi_router_trace(
    params: &str,
    capacity_bps: f64,
    pkt_bytes: f64,
    events: Vec<(u8, f64, f64)>,
) -> PyResult<Vec<(f64, f64)>> {
    use racc_proto::piqi_rcp::router::{pi_step, PiState};
    use racc_proto::piqi_rcp::PiqiRouterParams;
    use racc_proto::rcp::RateCore;

    let p: PiqiRouterParams = parse(&json(params, "router_params")?).map_err(err)?;
    p.validate().map_err(err)?;
    if p.count_newcomers {
        return Err(PyValueError::new_err(
            "router_params.count_newcomers: the trace replays the law without newcomers",
        ));
    }
    let mut core = RateCore::new(p.d0, p.rcp_d0_gain, false, 0, p.initial_rate, capacity_bps);
    let c = core.capacity();
    let (mut r_bar, mut e_prev) = (0.0, 0.0);
    let mut now: u64 = 0;
    let mut out = Vec::with_capacity(events.len());
    for (kind, a, b) in events {
        match kind {
            0 => out.push((rate_packet(&mut core, a, b), 0.0)),
            1 => {
                now += (a * 1e9).round() as u64;
                let (t, y, mean) = core.close_interval(now);
                if t > 0.0 && c > 0.0 {
                    if r_bar <= 0.0 {
                        r_bar = p.initial_rate * c;
                    }
                    let d0 = core.d0;
                    let g = (t / d0).min(1.0);
                    let r_min = (p.r_min_pkts * pkt_bytes / d0).min(c).min(p.gamma * c);
                    let r_ref = if p.smoothed_count { r_bar } else { core.rate };
                    let s = PiState { r: core.rate, r_bar: r_ref, j: 0.0, e_prev };
                    let (r, _n_hat, e) = pi_step(&p, s, c, y, g, r_min);
                    core.rate = r;
                    e_prev = e;
                    r_bar += g * (r - r_bar);
                    core.update_d0(t, mean, r / c);
                }
                out.push((core.rate, core.d0));
            }
            k => return Err(PyValueError::new_err(format!("events: kind {k} is not 0 or 1"))),
        }
    }
    Ok(out)
}

/// Checks a PIQI-RCP router's parameter table as racc-proto does.
#[pyfunction]
pub(crate) fn piqi_router_check(params: &str) -> PyResult<()> {
    let p: racc_proto::piqi_rcp::PiqiRouterParams = parse(&json(params, "router_params")?).map_err(err)?;
    p.validate().map_err(err)
}

/// A JetMax router port (id 7, first tick at 0) replayed on events through racc-proto's
/// `JetMaxRouter`: `(0, wire, ipt_ns, cur_id)` a forward JetMax data packet with feedback +inf,
/// answering (feedback, fb_id) it leaves with; `(1, t_s, _, _)` the tick at `t_s` (a whole number
/// of Δ), answering (F as the header field, N). Port: `capacity_bps`, packets of `pkt_bytes`.
#[pyfunction]
pub(crate) fn jetmax_router_trace(
    params: &str,
    capacity_bps: f64,
    pkt_bytes: u32,
    events: Vec<(u8, f64, f64, f64)>,
) -> PyResult<Vec<(f64, f64)>> {
    use racc_proto::jetmax::router::encode_rate;
    use racc_proto::jetmax::{JetMaxRouter, JetMaxRouterParams};
    use racc_proto::packet::{CongHeader, Kind, Packet, TcpHeader};
    use racc_proto::router::{PortView, RouterModule};

    let p: JetMaxRouterParams = parse(&json(params, "router_params")?).map_err(err)?;
    p.validate().map_err(err)?;
    let port = PortView { capacity_bps, mean_pkt_size: pkt_bytes, ..Default::default() };
    let mut r = JetMaxRouter::with_phase(&p, 7, 0);
    r.on_tick(0, &port);
    let mut out = Vec::with_capacity(events.len());
    for (kind, a, b, c) in events {
        match kind {
            0 => {
                let mut pkt = Packet::tcp(1, Kind::Data, a as u32, 0, TcpHeader::default());
                pkt.cong =
                    CongHeader::JetMax { rtt_us: 0, ipt_ns: b as u32, cur_id: c as u16, fb_id: 0, feedback: u32::MAX };
                r.on_arrival(0, &mut pkt, &port);
                r.on_departure(0, &mut pkt, &port);
                let CongHeader::JetMax { feedback, fb_id, .. } = pkt.cong else { unreachable!() };
                out.push((feedback as f64, fb_id as f64));
            }
            1 => {
                r.on_tick((a * 1e9).round() as u64, &port);
                out.push((encode_rate(r.fair_share()) as f64, r.estimates().2));
            }
            k => return Err(PyValueError::new_err(format!("events: kind {k} is not 0 or 1"))),
        }
    }
    Ok(out)
}

/// Checks a JetMax router's parameter table as racc-proto does.
#[pyfunction]
pub(crate) fn jetmax_router_check(params: &str) -> PyResult<()> {
    let p: racc_proto::jetmax::JetMaxRouterParams = parse(&json(params, "router_params")?).map_err(err)?;
    p.validate().map_err(err)
}

/// Checks a JetMax flow's parameter table as racc-proto does.
#[pyfunction]
pub(crate) fn jetmax_flow_check(params: &str) -> PyResult<()> {
    let p: racc_proto::jetmax::JetMaxParams = parse(&json(params, "params")?).map_err(err)?;
    p.validate().map_err(err)
}
