//! Parameters of the "dpcp" / "tpcp" protocols and router modules (PROTOCOLS.md §3, §16).
//! Defaults are seed 000's where it gives them, else VCP's (seed 001) and the reconstructed
//! values of PROTOCOLS.md §16. Times in seconds.

use super::decode::DecoderParams;
use super::levels::MAX_CHAIN;
use crate::params::{parse, positive, ParamError};
use crate::tcp::TcpParams;
use crate::vcp::{AiLawName, LoadFactorParams, MdHold, Ns2Ai, QueueTerm};

/// Growth law in the low and high zones (PROTOCOLS.md §3 `dpcp_growth`).
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Growth {
    /// MI and AI together, each from the level's upper bound [seed 000 §3.1].
    #[default]
    #[serde(rename = "mi+ai")]
    MiAi,
    /// Pure MI (with the level's ξ) in the low zone, pure AI in the high zone (VCP's split).
    #[serde(rename = "vcp-like")]
    VcpLike,
}

/// The `params` table of a "dpcp" (chain 2) or "tpcp" (chain 3) flow.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DpcpParams {
    /// Packets per chain: 2 = DPCP, 3 = TPCP, 4 [reconstructed]. Must match the routers'.
    pub chain: u8,
    /// The routers' load-factor interval t_p, s [seed 001: 200 ms].
    pub t_p: f64,
    /// h in ξ = h(1/ρ_ub − 1) [seed 001: 0.25].
    pub h: f64,
    /// AI step α, packets per t_p [seed 001: 1].
    pub alpha: f64,
    /// Caps σ_MI, σ_AI [seed 001: 2.5, 10].
    pub sigma_mi: f64,
    pub sigma_ai: f64,
    /// The AI law: "seed001" (default) or "ns2" (the reference ns-2 sender's; `vcp/ai_law.rs`).
    pub ai_law: AiLawName,
    /// The `"ns2"` law's constants.
    pub ai_ns2: Ns2Ai,
    /// Cap on a level's MI factor ξ (absent: no cap, ξ = h(1/ρ_ub − 1) up to 1.0).
    pub xi_cap: Option<f64>,
    /// Hold after an MD, as VCP's: "t_p" (default [checked]), "rtt" or seconds.
    pub md_hold: MdHold,
    /// Only an MSP echo starts an MD; a chain's later digits only refine it (PROTOCOLS.md §3)
    /// [reconstructed: off].
    pub md_on_msp_only: bool,
    /// MD factors of the overload levels 11 01, 11 10, 11 11 [seed 000 Table 1: 0.875, 0.6,
    /// 0.43]; another set is an ablation, not a reading of the seed (PROTOCOLS.md §3).
    pub md_factors: [f64; 3],
    /// Pace the window over one smoothed RTT at this gain (`vcp/pacing.rs`); absent: ACK
    /// clock only [reconstructed].
    pub pacing_gain: Option<f64>,
    /// Initial window, packets [reconstructed: 2, as VCP].
    pub iw: f64,
    /// "mi+ai" (default) or "vcp-like".
    pub dpcp_growth: Growth,
    /// Same-position echoes in a row that switch to VCP mode [seed: 3].
    pub exception_limit: u32,
    /// RTTs in VCP mode before retrying chains [reconstructed: 8].
    pub resume_after: f64,
    /// Failed retries after which VCP mode is permanent [reconstructed: 3].
    pub max_resumes: u32,
    /// The TCP transport's knobs.
    pub tcp: TcpParams,
}

impl Default for DpcpParams {
    fn default() -> DpcpParams {
        DpcpParams {
            chain: 2,
            t_p: 0.2,
            h: 0.25,
            alpha: 1.0,
            sigma_mi: 2.5,
            sigma_ai: 10.0,
            ai_law: AiLawName::Seed001,
            ai_ns2: Ns2Ai::default(),
            xi_cap: None,
            md_hold: MdHold::Tp,
            md_on_msp_only: false,
            md_factors: crate::dpcp::levels::MD_FACTORS,
            pacing_gain: None,
            iw: 2.0,
            dpcp_growth: Growth::MiAi,
            exception_limit: 3,
            resume_after: 8.0,
            max_resumes: 3,
            tcp: TcpParams::default(),
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
        crate::chain_laws!(self).validate()?;
        self.decoder(0).validate()?;
        self.tcp.validate().map_err(|e| ParamError::new(format!("tcp.{}", e.key), e.reason))
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

/// The `router_params` of a "dpcp" or "tpcp" port: VCP's estimator (A1, A2) plus the chain
/// length and the idle-flow eviction time of the per-flow flag.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DpcpRouterParams {
    pub chain: u8,
    /// Load-factor interval t_p, s [seed 001: 200 ms].
    pub t_p: f64,
    /// Queue-sampling interval t_q, s [seed 001: 10 ms].
    pub t_q: f64,
    pub k_q: f64,
    pub a: f64,
    pub gamma: f64,
    /// A1's queue term: "a2" (default [seed 001]) or "ns2" (the reference router's;
    /// `vcp/queue_term.rs`), with its shift.
    pub queue_term: QueueTerm,
    pub ns2_queue_shift: u32,
    /// A flow idle this long (s) has its flag reset to MSP_EQ [reconstructed: 10 s].
    pub evict_after: f64,
    /// Encode a chain's later positions with the code current at its MSP, so that a t_p tick
    /// cannot split a chain (PROTOCOLS.md §3) [reconstructed: off].
    pub latch_lsp: bool,
}

impl Default for DpcpRouterParams {
    fn default() -> DpcpRouterParams {
        let lf = LoadFactorParams::default();
        DpcpRouterParams {
            chain: 2,
            t_p: lf.t_p,
            t_q: lf.t_q,
            k_q: lf.k_q,
            a: lf.a,
            gamma: lf.gamma,
            queue_term: lf.queue_term,
            ns2_queue_shift: lf.ns2_queue_shift,
            evict_after: 10.0,
            latch_lsp: false,
        }
    }
}

impl DpcpRouterParams {
    pub fn tpcp() -> DpcpRouterParams {
        DpcpRouterParams { chain: 3, ..DpcpRouterParams::default() }
    }

    pub fn load_factor(&self) -> LoadFactorParams {
        LoadFactorParams {
            t_p: self.t_p,
            t_q: self.t_q,
            k_q: self.k_q,
            a: self.a,
            gamma: self.gamma,
            queue_term: self.queue_term,
            ns2_queue_shift: self.ns2_queue_shift,
        }
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
        assert_eq!((p.decoder(0).md_factors, crate::chain_laws!(p).pacing_gain), ([0.875; 3], Some(1.0)));
        assert_eq!(bad(DpcpParams { md_factors: [0.875, 0.6, 1.2], ..Default::default() }), "md_factors");
        assert_eq!(bad(DpcpParams { pacing_gain: Some(0.5), ..Default::default() }), "pacing_gain");
        assert!(parse::<DpcpParams>(&json!({"md_factors": [0.875, 0.6]})).is_err());
    }
}
