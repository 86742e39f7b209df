//! The `params` table of a VCP flow (VCP-DCCP A3–A5; docs/PROTOCOLS.md §2 and §16) and the checks
//! the VCP family's window-law parameters share.

use super::ai_law::{check_ai_law, AiLaw, AiLawName, Ns2Ai};
use crate::params::{positive, ParamError};
use crate::tcp::TcpParams;
use crate::time::secs;

/// How long an MD holds off further MDs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MdHold {
    /// One load-factor interval t_p (the default [checked: reference code]).
    Tp,
    /// One smoothed RTT (MPCP §2.2's reading).
    Rtt,
    /// 2·t_p + one smoothed RTT: until the last echo of a load factor measured before the MD
    /// has come back (`"2t_p+rtt"`, docs/PROTOCOLS.md §3). A router publishes ρ of [T, T + t_p) at
    /// T + t_p and stamps it until T + 2·t_p, so the interval holding the MD's instant t0
    /// reaches packets at the bottleneck up to t0 + 2·t_p, whose echoes return by
    /// t0 + 2·t_p + rtt [reconstructed from VCP-DCCP A1 and MPCP §3.3].
    TwoTpRtt,
    /// A fixed time in seconds; 0 is VCP-DCCP's literal wording.
    Secs(f64),
}

impl<'de> serde::Deserialize<'de> for MdHold {
    /// `md_hold = "t_p"`, `"rtt"`, `"2t_p+rtt"` or a number of seconds.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<MdHold, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(f64),
            Name(String),
        }
        match Raw::deserialize(d) {
            Ok(Raw::Num(x)) => Ok(MdHold::Secs(x)),
            Ok(Raw::Name(s)) if s == "t_p" => Ok(MdHold::Tp),
            Ok(Raw::Name(s)) if s == "rtt" => Ok(MdHold::Rtt),
            Ok(Raw::Name(s)) if s == "2t_p+rtt" => Ok(MdHold::TwoTpRtt),
            Ok(Raw::Name(s)) => Err(serde::de::Error::custom(format!(
                "must be \"t_p\", \"rtt\", \"2t_p+rtt\" or a number of seconds, got \"{s}\""
            ))),
            Err(_) => Err(serde::de::Error::custom("must be \"t_p\", \"rtt\", \"2t_p+rtt\" or a number of seconds")),
        }
    }
}

/// The window-law parameters every VCP-family sender takes (VCP-DCCP A3–A5: VCP, DCCP/VCP,
/// DPCP/TPCP, DCP-EW), with their defaults (docs/PROTOCOLS.md §2 and §16). Times in seconds. Each
/// protocol's table has these fields at its top level ([`vcp_family_params!`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowLaws {
    pub t_p: f64,
    pub h: f64,
    pub alpha: f64,
    pub sigma_mi: f64,
    pub sigma_ai: f64,
    pub ai_law: AiLawName,
    pub ai_ns2: Ns2Ai,
    pub md_hold: MdHold,
    pub pacing_gain: Option<f64>,
    pub iw: f64,
}

impl Default for WindowLaws {
    fn default() -> WindowLaws {
        WindowLaws {
            t_p: 0.2,
            h: 0.25,
            alpha: 1.0,
            sigma_mi: 2.5,
            sigma_ai: 10.0,
            ai_law: AiLawName::Seed001,
            ai_ns2: Ns2Ai::default(),
            md_hold: MdHold::Tp,
            pacing_gain: None,
            iw: 2.0,
        }
    }
}

impl WindowLaws {
    /// The additive-increase law with its constants.
    pub fn ai(&self) -> AiLaw {
        AiLaw::new(self.ai_law, self.sigma_ai, self.ai_ns2)
    }

    /// t_p at least 1 µs, 0 < h ≤ 0.5, positive α and σ caps, a finite non-negative hold, an
    /// initial window of at least one packet, a valid AI law and pacing gain.
    pub fn validate(&self) -> Result<(), ParamError> {
        positive("t_p", self.t_p)?;
        if secs(self.t_p) < 1_000 {
            return Err(ParamError::new("t_p", format!("must be at least 1 µs, got {} s", self.t_p)));
        }
        if !(self.h > 0.0 && self.h <= 0.5) {
            return Err(ParamError::new("h", format!("must be in (0, 0.5], got {}", self.h)));
        }
        positive("alpha", self.alpha)?;
        positive("sigma_mi", self.sigma_mi)?;
        positive("sigma_ai", self.sigma_ai)?;
        if let MdHold::Secs(s) = self.md_hold {
            if !(s.is_finite() && s >= 0.0) {
                return Err(ParamError::new("md_hold", format!("must be a finite number of seconds >= 0, got {s}")));
            }
        }
        if !(self.iw.is_finite() && self.iw >= 1.0) {
            return Err(ParamError::new("iw", format!("must be at least 1 packet, got {}", self.iw)));
        }
        check_ai_law(&self.ai_ns2)?;
        super::check_pacing_gain(self.pacing_gain)
    }
}

/// Declares a VCP-family flow's `params` table: the [`WindowLaws`] fields (documented and
/// defaulted here, once) followed by the protocol's own, each with its default; `laws()` reads
/// them back as one [`WindowLaws`] (`params_with_shared!`).
#[macro_export]
macro_rules! vcp_family_params {
    ($($table:tt)*) => {
        $crate::params_with_shared! {
            shared $crate::vcp::WindowLaws,
            /// The window-law parameters of this table.
            fn laws {
                /// The routers' load-factor interval t_p, s, for the RTT scaling [VCP-DCCP: 200 ms].
                /// Keep it equal to the routers' `t_p`.
                t_p: f64,
                /// h in F(x) = h(1−x)/x (DPCP: ξ = h(1/ρ_ub − 1)), 0 < h ≤ 0.5 [VCP-DCCP: 0.25].
                h: f64,
                /// AI step α, packets per t_p [VCP-DCCP: 1].
                alpha: f64,
                /// Cap σ_MI on rtt/t_p in the MI exponent [VCP-DCCP: 2.5].
                sigma_mi: f64,
                /// Cap σ_AI on (rtt/t_p)² in AI [VCP-DCCP: 10]; the `"seed001"` law's.
                sigma_ai: f64,
                /// The additive-increase law: "seed001" (default, A4 as printed) or "ns2" (the VCP
                /// authors' ns-2 sender; `vcp/ai_law.rs`).
                ai_law: $crate::vcp::AiLawName,
                /// The `"ns2"` law's constants.
                ai_ns2: $crate::vcp::Ns2Ai,
                /// Hold after an MD: "t_p" (default [checked]), "rtt" (MPCP), "2t_p+rtt" or seconds
                /// (0 = VCP-DCCP's wording).
                md_hold: $crate::vcp::MdHold,
                /// Pace the window over one smoothed RTT at this gain (`vcp/pacing.rs`); absent: ACK
                /// clock only (the default: no paper paces) [reconstructed].
                pacing_gain: Option<f64>,
                /// Initial window, packets [reconstructed: 2]; a flow's `initial_window` overrides it.
                iw: f64,
            }
            $($table)*
        }
    };
}

crate::vcp_family_params! {
    /// The `params` table of a "vcp" flow. Defaults: docs/PROTOCOLS.md §2 and §16.
    pub struct VcpParams {
        /// MI factor μ per t_p; default h(1/0.8 − 1) = 0.0625 [VCP-DCCP].
        pub mu: Option<f64> = None,
        /// MD factor β [VCP-DCCP: 0.875].
        pub beta: f64 = 0.875,
        /// Slow start until the first loss (VCP-DCCP Fig. 7's start-up burst) [reconstructed].
        pub initial_slow_start: bool = false,
        /// The TCP transport's knobs (dupthresh, RTO bounds, ...).
        pub tcp: TcpParams = TcpParams::default(),
    }
}

impl VcpParams {
    /// μ: `mu` if given, else h(1/0.8 − 1) (VCP-DCCP §2: μ = h(1/ρ₀ − 1) at ρ₀ = 0.8).
    pub fn mu(&self) -> f64 {
        self.mu.unwrap_or(self.h * (1.0 / super::RHO_HIGH - 1.0))
    }

    /// The additive-increase law with its constants.
    pub fn ai(&self) -> AiLaw {
        self.laws().ai()
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        self.laws().validate()?;
        if let Some(mu) = self.mu {
            positive("mu", mu)?;
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(ParamError::new("beta", format!("must be in (0, 1), got {}", self.beta)));
        }
        self.tcp.validate().map_err(|e| ParamError::new(format!("tcp.{}", e.key), e.reason))
    }
}
