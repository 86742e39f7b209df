//! The DPCP/TPCP router module of one output port [MPCP §3.3; docs/PROTOCOLS.md §1, §3].
//!
//! - ρ is VCP's (VCP-DCCP A1, A2), from the shared estimator [`LoadFactor`]: every arrival is
//!   counted before the buffer check, the t_q/t_p timers run with a random phase.
//! - At each t_p the port's code is ρ quantised into n digits (MPCP Table 1; TPCP's split).
//! - At dequeue (the freshest code, as VCP) an ECN-capable **data** packet gets Alg. 2 with the
//!   flow's 2-bit flag: its position is read from the packet (seq/ack order, or the checksum
//!   offset for n ≥ 3), never from arrival order. Not-ECT is never touched.
//! - The per-flow flags live in a flat vector indexed by `pkt.flow`, grown on demand (amortised;
//!   no allocation per packet). A flow idle for `evict_after` (10 s [reconstructed]) starts
//!   again from MSP_EQ, as an evicted entry of a real router's table would.
//! - `latch_lsp` (default off) [reconstructed, docs/PROTOCOLS.md §3]: the port's code at a flow's MSP
//!   is kept next to the flag, and the chain's later positions are encoded with it, so a t_p tick
//!   between an MSP and its LSP cannot give the chain the MSP of one load factor and the LSP of
//!   the next (a level the port never had). It holds until the flow's next MSP, as the flag does;
//!   a lone LSP of a flow with no latched code gets the current one.

use super::encode::{encode, Flag};
use super::levels::Lf;
use super::ordering::{position_n, Position};
use super::params::DpcpRouterParams;
use crate::packet::{Kind, Packet};
use crate::params::ParamError;
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::{secs, Dur, Time};
use crate::vcp::LoadFactor;

/// Alg. 2's only per-flow router state: the 2-bit flag, with the time it was last used so that
/// idle flows start afresh (MPCP §3.3; eviction after `evict_after` [reconstructed]). Keys
/// are small integers (flow ids, or tunnel ids on the ciphertext side): a flat table grown on
/// demand, no allocation per packet once grown.
#[derive(Clone, Debug, Default)]
pub(crate) struct FlagTable(Vec<Slot>);

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Slot {
    pub(crate) flag: Flag,
    last: Time,
    /// The port's code when this flow's last MSP was encoded (`latch_lsp`).
    pub(crate) latched: Option<Lf>,
}

impl Slot {
    /// The code to encode position `pos` with: `now` for an MSP (and latched), the latched
    /// code for the chain's later positions when `latch` is on.
    #[inline]
    pub(crate) fn code_for(&mut self, pos: Position, now: Lf, latch: bool) -> Lf {
        if pos.is_msp() {
            self.latched = Some(now);
            now
        } else if latch {
            self.latched.unwrap_or(now)
        } else {
            now
        }
    }
}

impl FlagTable {
    /// The entry of `key` at `now` (flag and latched code), reset if the key was idle for
    /// `evict` or longer.
    #[inline]
    pub(crate) fn slot(&mut self, key: usize, now: Time, evict: Dur) -> &mut Slot {
        if key >= self.0.len() {
            self.0.resize(key + 1, Slot::default());
        }
        let s = &mut self.0[key];
        if now.saturating_sub(s.last) >= evict {
            *s = Slot::default();
        }
        s.last = now;
        s
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

/// What every chain router port shares (DPCP/TPCP's, DCP-EW's NM): VCP's ρ every t_p
/// quantised into the port's n-digit code (MPCP Table 1), and Alg. 2 at dequeue on a flow's flag.
#[derive(Clone, Debug)]
pub(crate) struct ChainCoder {
    pub(crate) est: LoadFactor,
    n: u8,
    pub(crate) lf: Lf,
    pub(crate) evict: Dur,
    latch_lsp: bool,
    pub(crate) marks: u64,
}

impl ChainCoder {
    pub(crate) fn new(est: LoadFactor, n: u8, evict_after: f64, latch_lsp: bool) -> ChainCoder {
        ChainCoder { est, n, lf: Lf::lowest(n), evict: secs(evict_after), latch_lsp, marks: 0 }
    }

    /// Every arrival counts towards ρ, before the buffer check.
    #[inline]
    pub(crate) fn on_arrival(&mut self, pkt: &Packet) -> Verdict {
        self.est.on_arrival(pkt.size);
        Verdict::Forward
    }

    /// Alg. 2 on a packet at position `pos` whose visible ECN bits are `x2`, with its flow's
    /// (or tunnel's) flag in `slot`; true if the bits changed.
    #[inline]
    pub(crate) fn encode(&mut self, pkt: &mut Packet, x2: u8, pos: Position, slot: &mut Slot) -> bool {
        let lf = slot.code_for(pos, self.lf, self.latch_lsp);
        let bits = encode(lf, x2, pos, &mut slot.flag);
        apply_code(pkt, x2, bits, &mut self.marks)
    }

    pub(crate) fn on_tick(&mut self, now: Time, port: &PortView) {
        self.est.on_tick(now, port.queue_bytes, port.capacity_bps);
        self.lf = Lf::from_rho(self.est.rho(), self.n);
    }
}

/// The DPCP (n = 2) or TPCP (n = 3) router module.
#[derive(Clone, Debug)]
pub struct DpcpRouter {
    coder: ChainCoder,
    n: u8,
    flows: FlagTable,
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
            coder: ChainCoder::new(est, p.chain, p.evict_after, p.latch_lsp),
            n: p.chain,
            flows: FlagTable::default(),
            name: if p.chain == 2 { "dpcp" } else { "tpcp" },
        }
    }

    pub fn estimator(&self) -> &LoadFactor {
        &self.coder.est
    }

    /// The port's current code.
    pub fn lf(&self) -> Lf {
        self.coder.lf
    }

    /// Data packets whose bits this port changed.
    pub fn marks(&self) -> u64 {
        self.coder.marks
    }
}

impl RouterModule for DpcpRouter {
    fn name(&self) -> &'static str {
        self.name
    }

    #[inline]
    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, _port: &PortView) -> Verdict {
        self.coder.on_arrival(pkt)
    }

    #[inline]
    fn on_departure(&mut self, now: Time, pkt: &mut Packet, _port: &PortView) -> bool {
        let x2 = pkt.visible_ecn();
        if pkt.kind != Kind::Data || x2 == 0 {
            return false;
        }
        let pos = position_n(pkt, self.n);
        let slot = self.flows.slot(pkt.flow as usize, now, self.coder.evict);
        self.coder.encode(pkt, x2, pos, slot)
    }

    fn next_tick(&self) -> Option<Time> {
        Some(self.coder.est.next_tick())
    }

    fn on_tick(&mut self, now: Time, port: &PortView) {
        self.coder.on_tick(now, port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dpcp::ordering::Sequencer;
    use crate::packet::{ecn, tcp_checksum, TcpHeader};
    use crate::time::NS_PER_MS;
    use crate::vcp::LoadFactorParams;

    const MS: Time = NS_PER_MS;

    /// 8 Mb/s (1e6 B/s), γ = 1, t_p = 100 ms, t_q = 50 ms, phase 0: ρ = λ/100 000 B.
    fn router(chain: u8) -> (DpcpRouter, PortView) {
        router_with(DpcpRouterParams { chain, ..Default::default() })
    }

    fn router_with(p: DpcpRouterParams) -> (DpcpRouter, PortView) {
        let p = DpcpRouterParams { t_p: 0.1, t_q: 0.05, gamma: 1.0, ..p };
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

    /// A t_p tick between a chain's MSP and its LSP: with `latch_lsp` the LSP gets the digit of
    /// the load factor its MSP was encoded with, without it the new one.
    #[test]
    fn latch_lsp_keeps_the_chain_on_one_load_factor() {
        // (old ρ, new ρ): the same MSP digit with another LSP digit; and a zone change.
        for (rho0, rho1, want_on, want_off) in [(0.82, 0.97, 0b01, 0b11), (1.2, 0.82, 0b10, 0b01)] {
            for latch_lsp in [true, false] {
                let (mut r, port) = router_with(DpcpRouterParams { chain: 2, latch_lsp, ..Default::default() });
                r.on_tick(0, &port);
                load(&mut r, &port, 0, (rho0 * 100_000.0) as u32);
                let old = r.lf();
                let mut s = Sequencer::new(2);
                let mut m = chain(&mut s, 5, 0, ecn::ECT1);
                r.on_departure(150 * MS, &mut m, &port);
                assert_eq!(m.ecn, old.digit(0));
                load(&mut r, &port, 100 * MS, (rho1 * 100_000.0) as u32); // the t_p tick at 200 ms
                assert_ne!(r.lf(), old);
                let mut l = chain(&mut s, 5, 1000, ecn::ECT1);
                r.on_departure(201 * MS, &mut l, &port);
                let want = if latch_lsp { want_on } else { want_off };
                assert_eq!(l.ecn, want, "ρ {rho0} → {rho1}, latch_lsp {latch_lsp}: chain {:02b} {:02b}", m.ecn, l.ecn);
                assert_eq!(want, if latch_lsp { old.digit(1) } else { r.lf().digit(1) });
                // The next chain starts on the new load factor either way.
                let mut m = chain(&mut s, 5, 2000, ecn::ECT1);
                let mut l = chain(&mut s, 5, 3000, ecn::ECT1);
                r.on_departure(202 * MS, &mut m, &port);
                r.on_departure(202 * MS, &mut l, &port);
                assert_eq!(Lf::dpcp(m.ecn, l.ecn), r.lf(), "latch_lsp {latch_lsp}");
            }
        }
        // TPCP: both later positions keep the MSP's code; a lone LSP of a new flow gets the
        // current one.
        let (mut r, port) = router_with(DpcpRouterParams { chain: 3, latch_lsp: true, ..Default::default() });
        r.on_tick(0, &port);
        load(&mut r, &port, 0, 170_000); // 11 11 10
        let old = r.lf();
        let mut s = Sequencer::new(3);
        let mut p0 = chain(&mut s, 1, 0, ecn::ECT1);
        r.on_departure(150 * MS, &mut p0, &port);
        load(&mut r, &port, 100 * MS, 110_000); // 11 10 01
        assert_ne!(r.lf().digit(1), old.digit(1));
        let got: Vec<u8> = (1..3)
            .map(|i| {
                let mut p = chain(&mut s, 1, i * 1000, ecn::ECT1);
                r.on_departure(201 * MS, &mut p, &port);
                p.ecn
            })
            .collect();
        assert_eq!(got, vec![old.digit(1), old.digit(2)]);
        let mut s2 = Sequencer::new(3);
        let _skip = chain(&mut s2, 2, 0, ecn::ECT1);
        let mut lone = chain(&mut s2, 2, 1000, ecn::ECT1);
        r.on_departure(201 * MS, &mut lone, &port);
        assert_eq!(lone.ecn, r.lf().digit(1).max(ecn::ECT1), "no latch: the current code (raise only, flag EQ)");
    }
}
