//! Step marking (the registry's router "step"): CE on every ECN-capable packet that arrives
//! while the instantaneous queue is above K packets or bytes (RFC 8257 §3.1; the DCTCP paper,
//! Alizadeh et al. 2010, §3.1: "marks an arriving packet with CE if the queue occupancy is
//! greater than K upon its arrival"). Not-ECT packets pass, or are dropped above K if
//! `drop_not_ect`; the buffer limit stays the port's.

use crate::packet::{ecn, Packet};
use crate::params::ParamError;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::Time;

/// The `router_params` of a "step" port: exactly one of `k_pkts` and `k_bytes`.
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

impl StepParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        match (self.k_pkts, self.k_bytes) {
            (Some(_), None) | (None, Some(_)) => Ok(()),
            _ => Err(ParamError::new("k_pkts", "give exactly one of k_pkts and k_bytes (the marking threshold K)")),
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
    pub fn new(p: StepParams) -> Result<Step, ParamError> {
        p.validate()?;
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
        assert!(Step::new(both).is_err());
    }
}
