//! The load-factor family's laws one step at a time, for the differential tests of the kernel's
//! fixed-point twins (`kernel/bpf/`, docs/KERNEL-BPF.md): conversion and replay only, the laws
//! are racc-proto's (`vcp::VcpLaws`, `vcp::LoadFactor`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use racc_proto::params::parse;
use racc_proto::vcp::{LoadFactor, LoadFactorParams, VcpLaws, VcpParams};

fn json(text: &str, what: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| PyValueError::new_err(format!("{what}: not JSON: {e}")))
}

/// The chain senders' traces (DPCP's, DCP-EW's) run one flow of this MSS from this ISN.
const CHAIN_MSS: u32 = 1000;
const CHAIN_ISN: u32 = 0x8000_0000;

/// The context of a chain sender's trace step at `now` with smoothed RTT `rtt_s`, the RTT noted
/// on a send first (`note_rtt`), as the kernel reads srtt at the ACK.
fn chain_step<W: racc_proto::cc::CongestionControl>(w: &mut W, rtt_s: f64, now: u64) -> racc_proto::cc::SenderCtx {
    use racc_proto::packet::{Kind, Packet, TcpHeader};
    let rtt = (rtt_s * 1e9).round() as u64;
    let ctx = racc_proto::cc::SenderCtx {
        now,
        mss: CHAIN_MSS,
        cwnd: w.window(),
        srtt: Some(rtt),
        latest_rtt: Some(rtt),
        ..Default::default()
    };
    let mut probe = Packet::tcp(0, Kind::Ack, 40, 0, TcpHeader { seq: CHAIN_ISN, ..Default::default() });
    w.on_send(&mut probe, &ctx);
    ctx
}

/// An ACK at chain position `pos` of an `n`-chain (MPCP §3.3: the position in the seq/ack order)
/// echoing `code` and reporting `k` packets, through the wire hook and the window.
fn chain_ack<W: racc_proto::cc::CongestionControl>(
    w: &mut W,
    (code, pos, n, k): (u8, u8, u8, f64),
    ctx: &racc_proto::cc::SenderCtx,
) {
    use racc_proto::cc::Ack;
    use racc_proto::dpcp::ordering::impose;
    use racc_proto::dpcp::Position;
    use racc_proto::packet::{tcp_checksum, Kind, Packet, TcpHeader};
    let mut h = TcpHeader { seq: 0, ack: CHAIN_ISN, echo: code | (pos << 2), ..Default::default() };
    h.checksum = tcp_checksum(&h);
    impose(&mut h, Position(pos), n);
    let mut a = Packet::tcp(0, Kind::Ack, 40, 0, h);
    w.on_wire_arrival(&mut a, ctx);
    w.on_ack(&Ack { packet: &a, acked_bytes: (k * CHAIN_MSS as f64) as u64, reported_pkts: k }, ctx);
}

/// The window (packets) after each step `(code, k, rtt_s, now_ns)` of `VcpLaws::on_code`, from
/// `cwnd`, for the VCP flow parameters `params` (a JSON object); also each step's MD count.
#[pyfunction]
pub(crate) fn vcp_laws_trace(params: &str, cwnd: f64, steps: Vec<(u8, f64, f64, u64)>) -> PyResult<Vec<(f64, u64)>> {
    let p: VcpParams = parse(&json(params, "params")?).map_err(|e| PyValueError::new_err(e.to_string()))?;
    p.validate().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut laws = VcpLaws::new(&p);
    let mut w = cwnd;
    Ok(steps
        .into_iter()
        .map(|(code, k, rtt_s, now)| {
            w = laws.on_code(w, code, k, rtt_s, now);
            (w, laws.md_count())
        })
        .collect())
}

/// The estimator's (ρ, code, q_l) after each event `(now_ns, queue_bytes, arrival_bytes)`: the
/// t_q samples and t_p boundaries due by `now_ns` run first with that queue, then the arrival is
/// counted. Timers start at 0 with phase 0; `capacity_bps` is the link rate.
#[pyfunction]
pub(crate) fn vcp_load_factor_trace(
    params: &str,
    capacity_bps: f64,
    events: Vec<(u64, u64, u32)>,
) -> PyResult<Vec<(f64, u8, f64)>> {
    let p: LoadFactorParams = parse(&json(params, "params")?).map_err(|e| PyValueError::new_err(e.to_string()))?;
    p.validate().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut lf = LoadFactor::with_phase(&p, 0, 0);
    Ok(events
        .into_iter()
        .map(|(now, queue, bytes)| {
            lf.on_tick(now, queue, capacity_bps);
            lf.on_arrival(bytes);
            (lf.rho(), lf.code(), lf.q_l())
        })
        .collect())
}

/// DPCP/TPCP's sender one ACK at a time (`DpcpWindow`, racc-proto `dpcp/window.rs`): for each
/// step `(code, position, k, rtt_s, now_ns)` an ACK echoing `code` at `position` arrives and
/// reports `k` packets, with smoothed RTT `rtt_s` noted before it. The window starts at
/// `params.iw`. Returns after each step the window (packets) and the decoder's counts (MDs,
/// exceptions, fallbacks to VCP mode, refinements).
#[pyfunction]
#[allow(clippy::type_complexity)]
pub(crate) fn dpcp_window_trace(
    params: &str,
    steps: Vec<(u8, u8, f64, f64, u64)>,
) -> PyResult<Vec<(f64, u64, u64, u64, u64)>> {
    use racc_proto::dpcp::{DpcpParams, DpcpWindow};
    use racc_proto::endpoint::FlowConfig;

    let p: DpcpParams = parse(&json(params, "params")?).map_err(|e| PyValueError::new_err(e.to_string()))?;
    p.validate().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut cfg = FlowConfig::new(0, CHAIN_MSS + 40);
    cfg.isn = CHAIN_ISN;
    let mut w = DpcpWindow::new(&cfg, CHAIN_MSS, &p);
    Ok(steps
        .into_iter()
        .map(|(code, pos, k, rtt_s, now)| {
            let ctx = chain_step(&mut w, rtt_s, now);
            chain_ack(&mut w, (code, pos, p.chain, k), &ctx);
            let d = w.decoder().stats();
            (w.cwnd_pkts(), d.mds, d.exceptions, d.fallbacks, d.refinements)
        })
        .collect())
}

/// `Lf::from_rho(ρ, n)` packed, for each ρ (MPCP Table 1; TPCP's split for n = 3).
#[pyfunction]
pub(crate) fn dpcp_levels(rhos: Vec<f64>, n: u8) -> PyResult<Vec<u8>> {
    racc_proto::dpcp::params::check_chain(n).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(rhos.into_iter().map(|r| racc_proto::dpcp::Lf::from_rho(r, n).packed()).collect())
}

/// Alg. 2 (`dpcp::encode`) for each case `(port level packed, x2, position, flag)`, flag 0
/// MSP_LOW, 1 MSP_HIGH, 2 MSP_EQ: the new bits and the flag after.
#[pyfunction]
pub(crate) fn dpcp_encode_cases(n: u8, cases: Vec<(u8, u8, u8, u8)>) -> PyResult<Vec<(u8, u8)>> {
    use racc_proto::dpcp::{encode, Flag, Lf, Position};
    racc_proto::dpcp::params::check_chain(n).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(cases
        .into_iter()
        .map(|(port, x2, pos, flag)| {
            let mut f = match flag {
                0 => Flag::MspLow,
                1 => Flag::MspHigh,
                _ => Flag::MspEq,
            };
            let bits = encode(Lf::from_packed(n, port), x2, Position(pos), &mut f);
            (bits, f as u8)
        })
        .collect())
}

/// DCP-EW's sender one event at a time (`DcpewWindow`, racc-proto `dcpew/window.rs`): each step
/// `(loss, code, position, k, rtt_s, now_ns)` is an ACK as in `dpcp_window_trace` (loss 0), or
/// a fast retransmit (loss 1) whose recovery exits at once (`set_window`: the window the loss
/// response chose). Returns after each step the window (packets), the decoder's MDs, exceptions,
/// fallbacks and refinements, and the congestion losses, error losses and loss MDs.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub(crate) fn dcpew_window_trace(
    params: &str,
    steps: Vec<(u8, u8, u8, f64, f64, u64)>,
) -> PyResult<Vec<(f64, u64, u64, u64, u64, u64, u64, u64)>> {
    use racc_proto::cc::{CongestionControl, Signal};
    use racc_proto::dcpew::{DcpewParams, DcpewWindow};
    use racc_proto::endpoint::FlowConfig;

    let p: DcpewParams = parse(&json(params, "params")?).map_err(|e| PyValueError::new_err(e.to_string()))?;
    p.validate().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut cfg = FlowConfig::new(0, CHAIN_MSS + 40);
    cfg.isn = CHAIN_ISN;
    let mut w = DcpewWindow::new(&cfg, CHAIN_MSS, &p);
    Ok(steps
        .into_iter()
        .map(|(loss, code, pos, k, rtt_s, now)| {
            let ctx = chain_step(&mut w, rtt_s, now);
            if loss != 0 {
                w.on_congestion(Signal::Loss, &ctx);
                w.set_window(w.window(), w.window());
            } else {
                chain_ack(&mut w, (code, pos, 2, k), &ctx);
            }
            let d = w.decoder().stats();
            let l = w.loss_stats();
            (
                w.cwnd_pkts(),
                d.mds,
                d.exceptions,
                d.fallbacks,
                d.refinements,
                l.congestion_losses,
                l.error_losses,
                l.loss_mds,
            )
        })
        .collect())
}
