//! The DPCP/TPCP router module of one output port [seed 000 §3.3; PROTOCOLS.md §1, §3].
//!
//! - ρ is VCP's (seed 001 A1, A2), from the shared estimator [`LoadFactor`]: every arrival is
//!   counted before the buffer check, the t_q/t_p timers run with a random phase.
//! - At each t_p the port's code is ρ quantised into n digits (seed 000 Table 1; TPCP's split).
//! - At dequeue (the freshest code, as VCP) an ECN-capable **data** packet gets Alg. 2 with the
//!   flow's 2-bit flag: its position is read from the packet (seq/ack order, or the checksum
//!   offset for n ≥ 3), never from arrival order. Not-ECT is never touched.
//! - The per-flow flags live in a flat vector indexed by `pkt.flow`, grown on demand (amortised;
//!   no allocation per packet). A flow idle for `evict_after` (10 s [reconstructed]) starts
//!   again from MSP_EQ, as an evicted entry of a real router's table would.

use super::encode::{encode, Flag};
use super::levels::Lf;
use super::ordering::position_n;
use super::params::DpcpRouterParams;
use crate::packet::{Kind, Packet};
use crate::params::ParamError;
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::{secs, Dur, Time};
use crate::vcp::LoadFactor;

/// Alg. 2's only per-flow router state: the 2-bit flag, with the time it was last used so that
/// idle flows start afresh (seed 000 §3.3; eviction after `evict_after` [reconstructed]). Keys
/// are small integers (flow ids, or tunnel ids on the ciphertext side): a flat table grown on
/// demand, no allocation per packet once grown.
#[derive(Clone, Debug, Default)]
pub(crate) struct FlagTable(Vec<Slot>);

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    flag: Flag,
    last: Time,
}

impl FlagTable {
    /// The flag of `key` at `now`, reset if the key was idle for `evict` or longer.
    #[inline]
    pub(crate) fn flag(&mut self, key: usize, now: Time, evict: Dur) -> &mut Flag {
        if key >= self.0.len() {
            self.0.resize(key + 1, Slot::default());
        }
        let s = &mut self.0[key];
        if now.saturating_sub(s.last) >= evict {
            s.flag = Flag::default();
        }
        s.last = now;
        &mut s.flag
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Write Alg. 2's result into the packet's visible ECN bits; true (and `marks` counted) if they
/// changed.
#[inline]
pub(crate) fn apply_code(pkt: &mut Packet, old: u8, new: u8, marks: &mut u64) -> bool {
    if new == old {
        return false;
    }
    pkt.set_visible_ecn(new);
    *marks += 1;
    true
}

/// The DPCP (n = 2) or TPCP (n = 3) router module.
#[derive(Clone, Debug)]
pub struct DpcpRouter {
    est: LoadFactor,
    n: u8,
    lf: Lf,
    evict: Dur,
    flows: FlagTable,
    marks: u64,
    name: &'static str,
}

impl DpcpRouter {
    /// A module whose timers start at time 0 with a random phase from `rng`. Validates `p`.
    pub fn new(p: &DpcpRouterParams, mut rng: SimRng) -> Result<DpcpRouter, ParamError> {
        p.validate()?;
        let est = LoadFactor::new(&p.load_factor(), 0, &mut rng);
        Ok(DpcpRouter::with_estimator(est, p))
    }

    /// A module around a given estimator (tests: a fixed phase).
    pub fn with_estimator(est: LoadFactor, p: &DpcpRouterParams) -> DpcpRouter {
        DpcpRouter {
            est,
            n: p.chain,
            lf: Lf::lowest(p.chain),
            evict: secs(p.evict_after),
            flows: FlagTable::default(),
            marks: 0,
            name: if p.chain == 2 { "dpcp" } else { "tpcp" },
        }
    }

    pub fn estimator(&self) -> &LoadFactor {
        &self.est
    }

    /// The port's current code.
    pub fn lf(&self) -> Lf {
        self.lf
    }

    /// Data packets whose bits this port changed.
    pub fn marks(&self) -> u64 {
        self.marks
    }
}

impl RouterModule for DpcpRouter {
    fn name(&self) -> &'static str {
        self.name
    }

    #[inline]
    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, _port: &PortView) -> Verdict {
        self.est.on_arrival(pkt.size);
        Verdict::Forward
    }

    #[inline]
    fn on_departure(&mut self, now: Time, pkt: &mut Packet, _port: &PortView) -> bool {
        let x2 = pkt.visible_ecn();
        if pkt.kind != Kind::Data || x2 == 0 {
            return false;
        }
        let pos = position_n(pkt, self.n);
        let bits = encode(self.lf, x2, pos, self.flows.flag(pkt.flow as usize, now, self.evict));
        apply_code(pkt, x2, bits, &mut self.marks)
    }

    fn next_tick(&self) -> Option<Time> {
        Some(self.est.next_tick())
    }

    fn on_tick(&mut self, now: Time, port: &PortView) {
        self.est.on_tick(now, port.queue_bytes, port.capacity_bps);
        self.lf = Lf::from_rho(self.est.rho(), self.n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dpcp::ordering::{Position, Sequencer};
    use crate::packet::{ecn, tcp_checksum, TcpHeader};
    use crate::time::NS_PER_MS;
    use crate::vcp::LoadFactorParams;

    const MS: Time = NS_PER_MS;

    /// 8 Mb/s (1e6 B/s), γ = 1, t_p = 100 ms, t_q = 50 ms, phase 0: ρ = λ/100 000 B.
    fn router(chain: u8) -> (DpcpRouter, PortView) {
        let p = DpcpRouterParams { chain, t_p: 0.1, t_q: 0.05, gamma: 1.0, ..Default::default() };
        let lfp = LoadFactorParams { t_p: 0.1, t_q: 0.05, gamma: 1.0, ..Default::default() };
        let r = DpcpRouter::with_estimator(LoadFactor::with_phase(&lfp, 0, 0), &p);
        (r, PortView { capacity_bps: 8e6, limit_pkts: 10, limit_bytes: u64::MAX, ..Default::default() })
    }

    fn load(r: &mut DpcpRouter, port: &PortView, start: Time, bytes: u32) {
        for _ in 0..bytes / 1000 {
            let mut p = Packet::tcp(9, Kind::Ack, 1000, 0, TcpHeader::default());
            r.on_arrival(start + MS, &mut p, port);
        }
        while r.next_tick().unwrap() <= start + 100 * MS {
            let t = r.next_tick().unwrap();
            r.on_tick(t, port);
        }
    }

    fn chain(seq: &mut Sequencer, flow: u32, off: u32, bits: u8) -> Packet {
        let mut h = TcpHeader { seq: 0x8000_0000 + off, ..Default::default() };
        h.checksum = tcp_checksum(&h);
        seq.stamp(&mut h, true);
        let mut p = Packet::tcp(flow, Kind::Data, 1040, 1000, h);
        p.ecn = bits;
        p
    }

    #[test]
    fn marks_chains_with_the_quantised_load_factor() {
        let (mut r, port) = router(2);
        r.on_tick(0, &port);
        load(&mut r, &port, 0, 120_000); // ρ = 1.2 → 11 10
        assert_eq!(r.lf(), Lf::dpcp(0b11, 0b10));
        let mut s = Sequencer::new(2);
        let mut m = chain(&mut s, 3, 0, ecn::ECT1);
        let mut l = chain(&mut s, 3, 1000, ecn::ECT1);
        r.on_departure(101 * MS, &mut m, &port);
        r.on_departure(101 * MS, &mut l, &port);
        assert_eq!((m.ecn, l.ecn, r.marks()), (0b11, 0b10, 2));
        // Not-ECT, ACKs and SYNs are never touched.
        let mut p = chain(&mut s, 3, 2000, ecn::NOT_ECT);
        r.on_departure(101 * MS, &mut p, &port);
        assert_eq!(p.ecn, ecn::NOT_ECT);
        let mut a = Packet::tcp(3, Kind::Ack, 40, 0, TcpHeader::default());
        a.ecn = ecn::ECT1;
        r.on_departure(101 * MS, &mut a, &port);
        assert_eq!(a.ecn, ecn::ECT1);
        // Flows have their own flags: an upstream 11 11 on flow 4 is left alone (our MSP 10 is
        // lower: MSP_HIGH, the LSP is not touched).
        load(&mut r, &port, 100 * MS, 90_000); // ρ = 0.9 → 10 10
        let mut s4 = Sequencer::new(2);
        let mut m = chain(&mut s4, 4, 0, 0b11);
        let mut l = chain(&mut s4, 4, 1000, 0b11);
        r.on_departure(201 * MS, &mut m, &port);
        r.on_departure(201 * MS, &mut l, &port);
        assert_eq!((m.ecn, l.ecn), (0b11, 0b11));
        assert_eq!(r.flows.len(), 5, "grown on demand to the largest flow id");
    }

    #[test]
    fn idle_flows_start_again_from_eq() {
        let (mut r, port) = router(2);
        r.on_tick(0, &port);
        load(&mut r, &port, 0, 120_000); // 11 10
        let mut s = Sequencer::new(2);
        let mut m = chain(&mut s, 0, 0, ecn::ECT1);
        r.on_departure(101 * MS, &mut m, &port); // flag LOW
                                                 // A lone LSP 11 s later: the evicted flag is EQ, so the LSP is only raised (11 stays).
        let mut l = chain(&mut s, 0, 1000, 0b11);
        r.on_departure(101 * MS + 11_000 * MS, &mut l, &port);
        assert_eq!(l.ecn, 0b11);
        // Within 10 s the LOW flag would have written 10.
        let mut m = chain(&mut s, 0, 2000, ecn::ECT1);
        r.on_departure(12_000 * MS, &mut m, &port);
        let mut l = chain(&mut s, 0, 3000, 0b11);
        r.on_departure(12_001 * MS, &mut l, &port);
        assert_eq!(l.ecn, 0b10);
    }

    #[test]
    fn tpcp_reads_positions_from_the_checksum() {
        let (mut r, port) = router(3);
        assert_eq!(r.name(), "tpcp");
        r.on_tick(0, &port);
        load(&mut r, &port, 0, 170_000); // ρ = 1.7 ∈ [1.6, 1.8) → 11 11 10
        assert_eq!(r.lf().packed(), 0b11_11_10);
        let mut s = Sequencer::new(3);
        let got: Vec<u8> = (0..3)
            .map(|i| {
                let mut p = chain(&mut s, 1, i * 1000, ecn::ECT1);
                assert_eq!(position_n(&p, 3), Position(i as u8));
                r.on_departure(101 * MS, &mut p, &port);
                p.ecn
            })
            .collect();
        assert_eq!(got, vec![0b11, 0b11, 0b10]);
    }
}
