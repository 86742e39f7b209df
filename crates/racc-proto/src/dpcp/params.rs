//! Parameters of the "dpcp" / "tpcp" protocols and router modules (docs/PROTOCOLS.md §3, §16).
//! Defaults are MPCP's where it gives them, else VCP's (VCP-DCCP) and the reconstructed
//! values of docs/PROTOCOLS.md §16. Times in seconds.

use super::decode::DecoderParams;
use super::levels::MAX_CHAIN;
use crate::params::{parse, positive, ParamError};
use crate::tcp::TcpParams;
use crate::time::{secs, Dur};
use crate::vcp::{AiLaw, MdHold, WindowLaws};

/// Growth law in the low and high zones (docs/PROTOCOLS.md §3 `dpcp_growth`).
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Growth {
    /// MI and AI together, each from the level's upper bound [MPCP §3.1].
    #[default]
    #[serde(rename = "mi+ai")]
    MiAi,
    /// Pure MI (with the level's ξ) in the low zone, pure AI in the high zone (VCP's split).
    #[serde(rename = "vcp-like")]
    VcpLike,
}

crate::vcp_family_params! {
    /// The `params` table of a "dpcp" (chain 2) or "tpcp" (chain 3) flow: VCP's window laws
    /// and DPCP's own knobs.
    pub struct DpcpParams {
        /// Packets per chain: 2 = DPCP, 3 = TPCP, 4 [reconstructed]. Must match the routers'.
        pub chain: u8 = 2,
        /// Cap on a level's MI factor ξ (absent: no cap, ξ = h(1/ρ_ub − 1) up to 1.0).
        pub xi_cap: Option<f64> = None,
        /// Only an MSP echo starts an MD; a chain's later digits only refine it (docs/PROTOCOLS.md §3)
        /// [reconstructed: off].
        pub md_on_msp_only: bool = false,
        /// MD factors of the overload levels 11 01, 11 10, 11 11 [MPCP Table 1: 0.875, 0.6,
        /// 0.43]; another set is an ablation, not a reading of the paper (docs/PROTOCOLS.md §3).
        pub md_factors: [f64; 3] = crate::dpcp::levels::MD_FACTORS,
        /// "mi+ai" (default) or "vcp-like".
        pub dpcp_growth: Growth = Growth::MiAi,
        /// Same-position echoes in a row that switch to VCP mode [MPCP: 3].
        pub exception_limit: u32 = 3,
        /// RTTs in VCP mode before retrying chains [reconstructed: 8].
        pub resume_after: f64 = 8.0,
        /// Failed retries after which VCP mode is permanent [reconstructed: 3].
        pub max_resumes: u32 = 3,
        /// The TCP transport's knobs.
        pub tcp: TcpParams = TcpParams::default(),
    }
}

/// The window laws of a chain protocol (DPCP/TPCP, DCP-EW): VCP's ([`WindowLaws`]), the cap on
/// a level's MI factor ξ and the growth law.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainLaws {
    pub window: WindowLaws,
    /// Cap on a level's MI factor ξ (`xi_cap`; `None`: ξ as the level gives it).
    pub xi_cap: Option<f64>,
    pub growth: Growth,
}

impl ChainLaws {
    pub fn validate(&self) -> Result<(), crate::params::ParamError> {
        self.window.validate()?;
        if let Some(c) = self.xi_cap {
            crate::params::positive("xi_cap", c)?;
        }
        Ok(())
    }

    /// The MI factor of level `lf`: h(1/ρ_ub − 1) [reconstructed], at most `xi_cap`. The VCP
    /// reference sender's multi-bit mode (`vcp-src.cc`, `VcpSrcAgent::recv_newack_helper`
    /// with `encode_load_factor_` off) caps its MI factor at 1/16 for ρ ≤ 0.8; MPCP gives
    /// no cap for DPCP.
    #[inline]
    pub fn xi(&self, lf: super::levels::Lf) -> f64 {
        let xi = lf.xi(self.window.h);
        self.xi_cap.map_or(xi, |c| xi.min(c))
    }

    /// The additive-increase law with its constants.
    pub fn ai(&self) -> AiLaw {
        self.window.ai()
    }

    /// The MD hold before the first RTT sample, ns (a hold of one RTT starts at t_p, 2·t_p +
    /// one RTT at 3·t_p: the RTT estimate starts at t_p).
    pub fn initial_hold(&self) -> Dur {
        match self.window.md_hold {
            MdHold::Tp | MdHold::Rtt => secs(self.window.t_p),
            MdHold::TwoTpRtt => secs(3.0 * self.window.t_p),
            MdHold::Secs(s) => secs(s),
        }
    }
}

/// A parameter table whose `chain` defaults to `n` unless given (DPCP 2, TPCP 3).
pub(crate) fn with_chain_default<T: serde::de::DeserializeOwned + Default>(
    params: &serde_json::Value,
    n: u8,
) -> Result<T, ParamError> {
    let mut v = if params.is_null() { serde_json::json!({}) } else { params.clone() };
    if let Some(m) = v.as_object_mut() {
        m.entry("chain").or_insert(serde_json::json!(n));
    }
    parse(&v)
}

/// Chain lengths the protocols accept (n = 1 would be VCP itself).
pub fn check_chain(n: u8) -> Result<(), ParamError> {
    if (2..=MAX_CHAIN).contains(&n) {
        Ok(())
    } else {
        Err(ParamError::new("chain", format!("must be 2, 3 or 4, got {n}")))
    }
}

impl DpcpParams {
    /// TPCP's defaults: chains of 3.
    pub fn tpcp() -> DpcpParams {
        DpcpParams { chain: 3, ..DpcpParams::default() }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        check_chain(self.chain)?;
        self.chain_laws().validate()?;
        self.decoder(0).validate()?;
        self.tcp.validate().map_err(|e| ParamError::new(format!("tcp.{}", e.key), e.reason))
    }

    /// The window laws (VCP's, ξ's cap, the growth law).
    pub fn chain_laws(&self) -> ChainLaws {
        ChainLaws { window: self.laws(), xi_cap: self.xi_cap, growth: self.dpcp_growth }
    }

    /// The decoder's settings, with the hold resolved to `md_hold_ns`.
    pub fn decoder(&self, md_hold_ns: u64) -> DecoderParams {
        DecoderParams {
            n: self.chain,
            exception_limit: self.exception_limit,
            resume_after: self.resume_after,
            max_resumes: self.max_resumes,
            md_hold: md_hold_ns,
            md_on_msp_only: self.md_on_msp_only,
            md_factors: self.md_factors,
        }
    }
}

crate::load_factor_router_params! {
    /// The `router_params` of a "dpcp" or "tpcp" port: VCP's estimator (A1, A2) plus the chain
    /// length and the idle-flow eviction time of the per-flow flag.
    pub struct DpcpRouterParams {
        pub chain: u8 = 2,
        /// A flow idle this long (s) has its flag reset to MSP_EQ [reconstructed: 10 s].
        pub evict_after: f64 = 10.0,
        /// Encode a chain's later positions with the code current at its MSP, so that a t_p tick
        /// cannot split a chain (docs/PROTOCOLS.md §3) [reconstructed: off].
        pub latch_lsp: bool = false,
    }
}

impl DpcpRouterParams {
    pub fn tpcp() -> DpcpRouterParams {
        DpcpRouterParams { chain: 3, ..DpcpRouterParams::default() }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        check_chain(self.chain)?;
        self.load_factor().validate()?;
        positive("evict_after", self.evict_after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::parse;
    use crate::vcp::MdHold;
    use serde_json::json;

    #[test]
    fn defaults_parse_and_validation() {
        let p: DpcpParams = parse(&serde_json::Value::Null).unwrap();
        assert_eq!(p, DpcpParams::default());
        assert_eq!((p.chain, p.exception_limit, p.resume_after, p.max_resumes), (2, 3, 8.0, 3));
        let p: DpcpParams = parse(&json!({"chain": 3, "dpcp_growth": "vcp-like", "md_hold": "rtt"})).unwrap();
        assert_eq!((p.chain, p.dpcp_growth, p.md_hold), (3, Growth::VcpLike, MdHold::Rtt));
        assert!(parse::<DpcpParams>(&json!({"dpcp_growth": "mi"})).is_err());
        assert!(parse::<DpcpParams>(&json!({"chian": 3})).unwrap_err().reason.contains("chian"));
        let bad = |p: DpcpParams| p.validate().unwrap_err().key;
        assert_eq!(bad(DpcpParams { chain: 1, ..Default::default() }), "chain");
        assert_eq!(bad(DpcpParams { chain: 5, ..Default::default() }), "chain");
        assert_eq!(bad(DpcpParams { h: 0.0, ..Default::default() }), "h");
        assert_eq!(bad(DpcpParams { exception_limit: 1, ..Default::default() }), "exception_limit");
        assert_eq!(bad(DpcpParams { resume_after: -1.0, ..Default::default() }), "resume_after");
        assert_eq!(bad(DpcpParams { iw: 0.5, ..Default::default() }), "iw");
        let r: DpcpRouterParams = parse(&json!({"chain": 4, "gamma": 0.95})).unwrap();
        assert_eq!((r.chain, r.gamma, r.t_p), (4, 0.95, 0.2));
        assert_eq!(DpcpRouterParams { chain: 0, ..Default::default() }.validate().unwrap_err().key, "chain");
        assert_eq!(DpcpRouterParams { t_q: 0.0, ..Default::default() }.validate().unwrap_err().key, "t_q");
        assert_eq!(DpcpRouterParams::tpcp().validate(), Ok(()));
        // latch_lsp: off by default, a boolean (a number is refused with its key).
        assert!(!DpcpRouterParams::default().latch_lsp);
        let r: DpcpRouterParams = parse(&json!({"latch_lsp": true})).unwrap();
        assert!(r.latch_lsp);
        assert_eq!(r.validate(), Ok(()));
        assert_eq!(parse::<DpcpRouterParams>(&json!({"latch_lsp": 1})).unwrap_err().key, "latch_lsp");
        // md_factors (Table 1 by default) and pacing_gain (off by default) reach the laws and
        // the decoder; bad values are refused under their keys.
        assert_eq!((p.md_factors, p.pacing_gain), ([0.875, 0.6, 0.43], None));
        let p: DpcpParams = parse(&json!({"md_factors": [0.875, 0.875, 0.875], "pacing_gain": 1.0})).unwrap();
        assert_eq!(p.validate(), Ok(()));
        assert_eq!((p.decoder(0).md_factors, p.laws().pacing_gain), ([0.875; 3], Some(1.0)));
        assert_eq!(bad(DpcpParams { md_factors: [0.875, 0.6, 1.2], ..Default::default() }), "md_factors");
        assert_eq!(bad(DpcpParams { pacing_gain: Some(0.5), ..Default::default() }), "pacing_gain");
        assert!(parse::<DpcpParams>(&json!({"md_factors": [0.875, 0.6]})).is_err());
    }
}
