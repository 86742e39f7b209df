//! BBR v1's constants, modes and `params` table (`bbr.rs` is the state machine). Each constant
//! cites the BBR draft (draft-cardwell-iccrg-bbr-congestion-control-00) and Linux's
//! `net/ipv4/tcp_bbr.c`.

use crate::params::ParamError;
use crate::tcp::TcpParams;
use crate::time::{Time, NS_PER_MS, NS_PER_SEC};

/// STARTUP's pacing and cwnd gain, 2/ln 2 ≈ 2.885: the smallest that doubles the delivery
/// rate each round (BBR draft §4.3.1.1 BBRHighGain; Linux `bbr_high_gain` = 739/256).
pub const HIGH_GAIN: f64 = 2.0 / std::f64::consts::LN_2;
/// DRAIN's pacing gain, ln 2/2, STARTUP's inverse (BBR draft §4.3.2; Linux `bbr_drain_gain`).
pub const DRAIN_GAIN: f64 = std::f64::consts::LN_2 / 2.0;
/// PROBE_BW's cwnd gain (BBR draft §4.3.3; Linux `bbr_cwnd_gain` = 2).
pub const CWND_GAIN: f64 = 2.0;
/// PROBE_BW's pacing gain cycle: probe at 5/4, drain at 3/4, cruise at 1 for six rounds
/// (BBR draft §4.3.3; Linux `bbr_pacing_gain[]`).
pub const PACING_GAIN: [f64; CYCLE_LEN] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Phases of the gain cycle (Linux `CYCLE_LEN`).
pub const CYCLE_LEN: usize = 8;
/// The cycle starts at a random phase among all but the 0.75 one: the phase before the one
/// entered is drawn from the last `CYCLE_RAND` (Linux `bbr_cycle_rand` = 7, in
/// `bbr_reset_probe_bw_mode`).
pub const CYCLE_RAND: u64 = 7;
/// Round trips the BtlBw max filter spans (BBR draft §4.5.2.2 BtlBwFilterLen; Linux
/// `bbr_bw_rtts` = CYCLE_LEN + 2).
pub const BW_WINDOW_ROUNDS: u64 = CYCLE_LEN as u64 + 2;
/// How long an RTprop sample stays valid (BBR draft §4.5.3 RTpropFilterLen; Linux
/// `bbr_min_rtt_win_sec`).
pub const MIN_RTT_WINDOW: Time = 10 * NS_PER_SEC;
/// PROBE_RTT holds the small window this long (BBR draft §4.3.4 ProbeRTTDuration; Linux
/// `bbr_probe_rtt_mode_ms`).
pub const PROBE_RTT_TIME: Time = 200 * NS_PER_MS;
/// The smallest cwnd, packets, and PROBE_RTT's (BBR draft §4.3.4 BBRMinPipeCwnd; Linux
/// `bbr_cwnd_min_target`).
pub const MIN_CWND: f64 = 4.0;
/// STARTUP ends after this many rounds without ... (Linux `bbr_full_bw_cnt`, BBR draft
/// §4.3.1.2) ... growth of at least this factor (Linux `bbr_full_bw_thresh` = 5/4).
pub const FULL_BW_COUNT: u32 = 3;
pub const FULL_BW_GROWTH: f64 = 1.25;
/// Pace this fraction below the model's rate, so that the bottleneck queue drains (Linux
/// `bbr_pacing_margin_percent` = 1, in `bbr_rate_bytes_per_sec`).
pub const PACING_MARGIN: f64 = 0.01;
/// The RTT assumed for the first pacing rate before any sample (Linux
/// `bbr_init_pacing_rate_from_rtt`: USEC_PER_MSEC).
pub const DEFAULT_RTT: Time = NS_PER_MS;
/// Segments of send quantum the cwnd allows for (Linux `bbr_quantization_budget`: 3 ×
/// `bbr_tso_segs_goal`; racc has no TSO, so one segment).
pub const QUANTUM_SEGS: f64 = 1.0;

/// BBR's modes (BBR draft §4.3; Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl Mode {
    /// The number reported in the results (`bbr_mode`): Linux's enum order.
    pub fn code(self) -> f64 {
        match self {
            Mode::Startup => 0.0,
            Mode::Drain => 1.0,
            Mode::ProbeBw => 2.0,
            Mode::ProbeRtt => 3.0,
        }
    }
}

/// The `params` table of a "bbr" flow.
#[derive(serde::Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct BbrParams {
    /// The TCP transport's knobs.
    pub tcp: TcpParams,
}

impl BbrParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.tcp.validate().map_err(|e| ParamError::new(format!("tcp.{}", e.key), e.reason))
    }
}
