//! Window pacing for the VCP family (`pacing_gain`, off by default): the ACK-clocked window
//! spread over one smoothed RTT, through the controller's `pacing_rate` (the machinery the
//! rate-based senders of the congestion-header family use; XCC-Linux: "pacing for rate-based
//! methods"). Neither VCP-DCCP nor MPCP paces its window [reconstructed: an option].
//!
//! Why it is offered (issue 13 item 4; `racc-sim/tests/dpcp_steady.rs`): routers measure ρ
//! every t_p = 200 ms (VCP-DCCP A1). At an RTT well above t_p an ACK-clocked window crosses
//! the bottleneck as one burst followed by an idle gap, so a t_p interval inside the burst
//! reads overload while the link is underused over the RTT. Paced, a window of W packets
//! leaves at W·wire/srtt and every t_p interval sees the window's mean rate.
//!
//! The rate is `gain · cwnd · (IPv4 + TCP + MSS) / srtt` in wire bytes per second: the
//! transport spaces full segments by their wire size at this rate (`tcp/sender`), so
//! `gain = 1` sends exactly one window per srtt. Linux paces congestion avoidance at 1.2 ×
//! cwnd/srtt (`tcp_update_pacing_rate`, `tcp_pacing_ca_ratio = 120`) so that pacing never
//! becomes the binding limit while the window grows; that is the value to try first.

use crate::packet::hdr;
use crate::params::ParamError;
use crate::time::{to_secs, Dur};

/// Wire bytes per second for a window of `cwnd_pkts` `mss`-byte segments spread over `rtt`
/// at `gain` (`None` when pacing is off).
#[inline]
pub fn window_pacing_rate(gain: Option<f64>, cwnd_pkts: f64, mss: f64, rtt: Dur) -> Option<f64> {
    let g = gain?;
    let wire = mss + hdr::IP_TCP as f64;
    Some(g * cwnd_pkts.max(1.0) * wire / to_secs(rtt.max(1)))
}

/// `pacing_gain`, when given, is finite and at least 1 (a lower gain would cap the window
/// below what it allows).
pub fn check_pacing_gain(gain: Option<f64>) -> Result<(), ParamError> {
    match gain {
        Some(g) if !(g.is_finite() && g >= 1.0) => {
            Err(ParamError::new("pacing_gain", format!("must be a number >= 1 (or absent: no pacing), got {g}")))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NS_PER_MS;

    /// 50 packets of 1000 B over 400 ms at gain 1: 50 · 1040 B / 0.4 s = 130 000 B/s, i.e. one
    /// 1040-byte packet every 8 ms (= 400 ms / 50); at 1.2, 156 000 B/s.
    #[test]
    fn one_window_per_srtt_times_the_gain() {
        let r = window_pacing_rate(Some(1.0), 50.0, 1000.0, 400 * NS_PER_MS).unwrap();
        assert!((r - 130_000.0).abs() < 1e-6, "{r}");
        assert!((1040.0 / r - 0.008).abs() < 1e-12);
        let r = window_pacing_rate(Some(1.2), 50.0, 1000.0, 400 * NS_PER_MS).unwrap();
        assert!((r - 156_000.0).abs() < 1e-6, "{r}");
        assert_eq!(window_pacing_rate(None, 50.0, 1000.0, 400 * NS_PER_MS), None);
        assert_eq!(check_pacing_gain(None), Ok(()));
        assert_eq!(check_pacing_gain(Some(1.2)), Ok(()));
        assert_eq!(check_pacing_gain(Some(0.9)).unwrap_err().key, "pacing_gain");
        assert_eq!(check_pacing_gain(Some(f64::NAN)).unwrap_err().key, "pacing_gain");
    }
}
