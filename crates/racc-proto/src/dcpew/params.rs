//! Parameters of the "dcpew" protocol and router module (docs/PROTOCOLS.md §4, §16). DCP-EW keeps
//! DPCP's levels, growth, MD and exceptions (DCP-EW §III.A), so the flow table repeats
//! DPCP's knobs (same defaults) and adds the IP-ID source and the loss-differentiation bit map.
//! Times in seconds.

use crate::dpcp::decode::DecoderParams;
use crate::dpcp::params::ChainLaws;
use crate::dpcp::Growth;
use crate::params::{positive, ParamError};
use crate::tcp::TcpParams;

/// How a DCP-EW host fills the IP ID (DCP-EW §III.B).
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum IpIdMode {
    /// A per-flow counter from 0: positions alternate perfectly [reconstructed: per-flow].
    #[default]
    Increment,
    /// Uniformly random IDs from a per-flow seeded stream: same-parity runs are normal.
    Random,
}

/// What a loss the bit map calls congestion does to cwnd (`ew_loss_md`).
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum LossMd {
    /// The MD factor of the saved load factor (0.875 / 0.6 / 0.43; 0.875 outside overload)
    /// [reconstructed].
    #[default]
    Level,
    /// TCP's halving.
    Half,
    /// No loss cuts cwnd, whatever CF says; with `ew_apply_to_rto` no RTO does either. An
    /// ablation, not DCP-EW: the most a loss response can leave a flow (dcpew-parking-lot's
    /// evidence that the long flows' shortfall under loss is not the loss response's).
    None,
}

crate::vcp_family_params! {
    /// The `params` table of a "dcpew" flow: VCP's window laws, DPCP's knobs (same defaults)
    /// and DCP-EW's own.
    pub struct DcpewParams {
        /// Cap on a level's MI factor ξ (absent: no cap, ξ = h(1/ρ_ub − 1) up to 1.0).
        pub xi_cap: Option<f64> = None,
        /// Only an MSP echo starts an MD (DPCP's `md_on_msp_only`, docs/PROTOCOLS.md §3).
        pub md_on_msp_only: bool = false,
        /// MD factors of the overload levels 11 01, 11 10, 11 11 [MPCP Table 1: 0.875, 0.6,
        /// 0.43]; another set is an ablation, not a reading of the paper (docs/PROTOCOLS.md §3).
        pub md_factors: [f64; 3] = crate::dpcp::levels::MD_FACTORS,
        /// "mi+ai" (default) or "vcp-like".
        pub dpcp_growth: Growth = Growth::MiAi,
        /// Same-position echoes in a row that switch to VCP mode. Absent = 3 [MPCP] with
        /// incrementing IDs and off with random IDs (docs/PROTOCOLS.md §4 [reconstructed]); 0 = off.
        pub exception_limit: Option<u32> = None,
        /// RTTs in VCP mode before retrying chains [reconstructed: 8].
        pub resume_after: f64 = 8.0,
        /// Failed retries after which VCP mode is permanent [reconstructed: 3].
        pub max_resumes: u32 = 3,
        /// "increment" (default) or "random".
        pub ip_id: IpIdMode = IpIdMode::Increment,
        /// Random IDs are drawn from the scenario seed and the flow id; a non-zero value here
        /// draws another stream under the same scenario seed (an extra perturbation, not a seed
        /// of its own).
        pub ip_id_seed: u64 = 0,
        /// Bit-map length N (bits kept) [DCP-EW §III.D: 32].
        pub bm_bits: u32 = 32,
        /// T: the last T ACKs all overload = congestion flag [DCP-EW §III.D: 16].
        pub bm_threshold: u32 = 16,
        /// MD on a congestion loss: "level" (default) or "half" [reconstructed]; "none" is an
        /// ablation (no loss ever cuts cwnd).
        pub ew_loss_md: LossMd = LossMd::Level,
        /// Apply the bit map to RTOs too (off: an RTO is TCP's, cwnd = 1) [reconstructed].
        pub ew_apply_to_rto: bool = false,
        /// The TCP transport's knobs.
        pub tcp: TcpParams = TcpParams::default(),
    }
}

/// The decoder's "never" limit (exceptions are counted but never switch to VCP mode).
pub const EXCEPTIONS_OFF: u32 = u32::MAX;

impl DcpewParams {
    /// The exception limit in force: the given one (0 = off), else 3 for incrementing IDs and
    /// off for random ones.
    pub fn effective_exception_limit(&self) -> u32 {
        match (self.exception_limit, self.ip_id) {
            (Some(0), _) => EXCEPTIONS_OFF,
            (Some(n), _) => n,
            (None, IpIdMode::Increment) => 3,
            (None, IpIdMode::Random) => EXCEPTIONS_OFF,
        }
    }

    /// The window laws (VCP's, ξ's cap, the growth law).
    pub fn chain_laws(&self) -> ChainLaws {
        ChainLaws { window: self.laws(), xi_cap: self.xi_cap, growth: self.dpcp_growth }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        self.chain_laws().validate()?;
        if self.exception_limit == Some(1) {
            return Err(ParamError::new("exception_limit", "must be 0 (off) or at least 2"));
        }
        if !(1..=64).contains(&self.bm_bits) {
            return Err(ParamError::new("bm_bits", format!("must be 1 to 64, got {}", self.bm_bits)));
        }
        if !(1..=self.bm_bits).contains(&self.bm_threshold) {
            return Err(ParamError::new(
                "bm_threshold",
                format!("must be 1 to bm_bits ({}), got {}", self.bm_bits, self.bm_threshold),
            ));
        }
        self.decoder(0).validate()?;
        self.tcp.validate().map_err(|e| ParamError::new(format!("tcp.{}", e.key), e.reason))
    }

    /// DPCP's decoder settings (chains of 2), with the hold resolved to `md_hold_ns`.
    pub fn decoder(&self, md_hold_ns: u64) -> DecoderParams {
        DecoderParams {
            n: 2,
            exception_limit: self.effective_exception_limit(),
            resume_after: self.resume_after,
            max_resumes: self.max_resumes,
            md_hold: md_hold_ns,
            md_on_msp_only: self.md_on_msp_only,
            md_factors: self.md_factors,
        }
    }
}

crate::load_factor_router_params! {
    /// The `router_params` of a "dcpew" port: VCP's estimator (A1, A2), the idle-flow eviction
    /// of Alg. 2's flags, and whether the security module keeps its LF per inner flow.
    pub struct DcpewRouterParams {
        /// A flow (or tunnel) idle this long, s, has its flag reset to MSP_EQ [reconstructed: 10 s].
        pub evict_after: f64 = 10.0,
        /// SM: saved LFs per (tunnel, inner flow) instead of per tunnel [reconstructed: off].
        pub per_inner_flow: bool = false,
        /// NM: encode a chain's LSP with the code current at its MSP, as DPCP's `latch_lsp`
        /// (docs/PROTOCOLS.md §3) [reconstructed: off].
        pub latch_lsp: bool = false,
    }
}

impl DcpewRouterParams {
    pub fn validate(&self) -> Result<(), ParamError> {
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
        let p: DcpewParams = parse(&serde_json::Value::Null).unwrap();
        assert_eq!(p, DcpewParams::default());
        assert_eq!(
            (p.bm_bits, p.bm_threshold, p.ip_id, p.ew_loss_md, p.ew_apply_to_rto),
            (32, 16, IpIdMode::Increment, LossMd::Level, false)
        );
        assert_eq!(p.effective_exception_limit(), 3);
        let p: DcpewParams = parse(&json!({"ip_id": "random", "ew_loss_md": "half"})).unwrap();
        assert_eq!((p.ip_id, p.ew_loss_md), (IpIdMode::Random, LossMd::Half));
        assert_eq!(p.effective_exception_limit(), EXCEPTIONS_OFF, "random IDs: exceptions off");
        let p: DcpewParams = parse(&json!({"ew_loss_md": "none"})).unwrap();
        assert_eq!(p.ew_loss_md, LossMd::None);
        let p: DcpewParams = parse(&json!({"ip_id": "random", "exception_limit": 8})).unwrap();
        assert_eq!(p.effective_exception_limit(), 8);
        let p: DcpewParams = parse(&json!({"exception_limit": 0})).unwrap();
        assert_eq!(p.effective_exception_limit(), EXCEPTIONS_OFF);
        assert!(parse::<DcpewParams>(&json!({"ip_id": "sequential"})).is_err());
        assert!(parse::<DcpewParams>(&json!({"chain": 2})).unwrap_err().reason.contains("chain"));
        let bad = |p: DcpewParams| p.validate().unwrap_err().key;
        assert_eq!(bad(DcpewParams { bm_threshold: 33, ..Default::default() }), "bm_threshold");
        assert_eq!(bad(DcpewParams { bm_threshold: 0, ..Default::default() }), "bm_threshold");
        assert_eq!(bad(DcpewParams { bm_bits: 65, ..Default::default() }), "bm_bits");
        assert_eq!(bad(DcpewParams { exception_limit: Some(1), ..Default::default() }), "exception_limit");
        assert_eq!(bad(DcpewParams { h: 0.0, ..Default::default() }), "h");
        assert_eq!(DcpewParams { bm_bits: 8, bm_threshold: 8, ..Default::default() }.validate(), Ok(()));
        let r: DcpewRouterParams = parse(&json!({"gamma": 0.95, "per_inner_flow": true})).unwrap();
        assert_eq!((r.gamma, r.per_inner_flow, r.t_p), (0.95, true, 0.2));
        assert!(parse::<DcpewRouterParams>(&json!({"chain": 2})).is_err());
        assert_eq!(DcpewRouterParams { t_q: 0.0, ..Default::default() }.validate().unwrap_err().key, "t_q");
    }
}
