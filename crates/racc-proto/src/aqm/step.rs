//! Step marking (the registry's router "step"): CE on every ECN-capable packet that arrives
//! while the instantaneous queue is above K packets or bytes (RFC 8257 §3.1; the DCTCP paper,
//! Alizadeh et al. 2010, §3.1: "marks an arriving packet with CE if the queue occupancy is
//! greater than K upon its arrival"). Not-ECT packets pass, or are dropped above K if
//! `drop_not_ect`; the buffer limit stays the port's.

use crate::packet::{ecn, Packet};
use crate::params::ParamError;
use crate::protocol::PortIdentity;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::Time;

/// The `router_params` of a "step" port: at most one of `k_pkts` and `k_bytes`; with neither,
/// K is set from the port's rate as the DCTCP paper set it (§4: "K = 20 packets for 1Gbps and
/// K = 65 packets for 10Gbps ports"): 20 packets up to 1 Gb/s, 65 above.
#[derive(serde::Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct StepParams {
    /// K in packets.
    pub k_pkts: Option<u32>,
    /// K in bytes.
    pub k_bytes: Option<u64>,
    /// Drop Not-ECT packets that arrive above K (RFC 3168 §7's rule for a marking queue);
    /// off: they pass to the buffer.
    pub drop_not_ect: bool,
}

/// K in packets where a scenario gives none: the DCTCP paper's settings by the port's rate.
pub fn default_k_pkts(capacity_bps: f64) -> u32 {
    if capacity_bps > 1e9 {
        65
    } else {
        20
    }
}

impl StepParams {
    /// Refuse both thresholds at once, naming the key (neither is fine: set from the port).
    pub fn validate(&self) -> Result<(), ParamError> {
        match (self.k_pkts, self.k_bytes) {
            (Some(_), Some(_)) => {
                Err(ParamError::new("k_pkts", "give at most one of k_pkts and k_bytes (the marking threshold K)"))
            }
            _ => Ok(()),
        }
    }

    /// The parameters a port runs with: K as given, else [`default_k_pkts`] of the port's rate.
    pub fn for_port(&self, port: &PortIdentity<'_>) -> StepParams {
        match (self.k_pkts, self.k_bytes) {
            (None, None) => StepParams { k_pkts: Some(default_k_pkts(port.capacity_bps)), ..self.clone() },
            _ => self.clone(),
        }
    }
}

/// The step-marking module.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    p: StepParams,
    marks: u64,
}

impl Step {
    /// A module with K given in `p` (one of the two; [`StepParams::for_port`] sets a default).
    pub fn new(p: StepParams) -> Result<Step, ParamError> {
        p.validate()?;
        if p.k_pkts.is_none() && p.k_bytes.is_none() {
            return Err(ParamError::new("k_pkts", "no marking threshold K for this port"));
        }
        Ok(Step { p, marks: 0 })
    }

    fn above_k(&self, port: &PortView) -> bool {
        match (self.p.k_pkts, self.p.k_bytes) {
            (Some(k), _) => port.queue_pkts > k,
            (_, Some(k)) => port.queue_bytes > k,
            _ => false,
        }
    }
}

impl RouterModule for Step {
    fn name(&self) -> &'static str {
        "step"
    }

    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, port: &PortView) -> Verdict {
        if !self.above_k(port) {
            return Verdict::Forward;
        }
        if pkt.is_ect() {
            pkt.set_visible_ecn(ecn::CE);
            self.marks += 1;
            Verdict::Mark
        } else if self.p.drop_not_ect {
            Verdict::Drop
        } else {
            Verdict::Forward
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Kind, TcpHeader};

    #[test]
    fn marks_ect_above_k_only() {
        let mut m = Step::new(StepParams { k_pkts: Some(20), ..Default::default() }).unwrap();
        let mut p = Packet::tcp(1, Kind::Data, 1000, 960, TcpHeader::default());
        p.ecn = ecn::ECT0;
        let at = |q: u32| PortView { queue_pkts: q, limit_pkts: 100, ..Default::default() };
        assert_eq!(m.on_arrival(0, &mut p, &at(20)), Verdict::Forward, "at K: not above it");
        assert_eq!(p.ecn, ecn::ECT0);
        assert_eq!(m.on_arrival(0, &mut p, &at(21)), Verdict::Mark);
        assert_eq!(p.ecn, ecn::CE);
        let mut n = Packet::tcp(1, Kind::Data, 1000, 960, TcpHeader::default());
        assert_eq!(m.on_arrival(0, &mut n, &at(50)), Verdict::Forward, "Not-ECT passes by default");
        let mut d = Step::new(StepParams { k_bytes: Some(30_000), drop_not_ect: true, ..Default::default() }).unwrap();
        let b = |q: u64| PortView { queue_bytes: q, ..Default::default() };
        assert_eq!(d.on_arrival(0, &mut n, &b(30_000)), Verdict::Forward);
        assert_eq!(d.on_arrival(0, &mut n, &b(30_001)), Verdict::Drop);
        assert_eq!(Step::new(StepParams::default()).unwrap_err().key, "k_pkts");
        let both = StepParams { k_pkts: Some(1), k_bytes: Some(1), ..Default::default() };
        assert_eq!(both.validate().unwrap_err().key, "k_pkts");
    }

    #[test]
    fn without_k_the_port_rate_sets_the_dctcp_papers_k() {
        use crate::protocol::ANY_PORT;
        let at = |c: f64| StepParams::default().for_port(&PortIdentity { capacity_bps: c, ..ANY_PORT }).k_pkts;
        assert_eq!((at(1e8), at(1e9), at(1e10)), (Some(20), Some(20), Some(65)));
        let given = StepParams { k_bytes: Some(9000), ..Default::default() };
        assert_eq!(given.for_port(&PortIdentity { capacity_bps: 1e10, ..ANY_PORT }), given);
        assert!(StepParams::default().validate().is_ok());
    }
}
