//! The DCP-EW router module of one output port: the Normal Module (NM) everywhere and the
//! Security Module (SM) at IPsec gateways [DCP-EW §III.C; docs/PROTOCOLS.md §4].
//!
//! **NM** (steps 3 and 5): DPCP's router (VCP's ρ every t_p, MPCP Table 1, Alg. 2 at
//! dequeue on ECN-capable data), with the position from the visible IP ID ([`position`]): the
//! outer header's inside a tunnel, where **the tunnel is the flow** of Alg. 2's flag (its
//! packets alternate by the outer ID, whatever inner flows they carry).
//!
//! **SM** (through the engine's tunnel hooks, so it acts only where the port is a gateway):
//! 1. `before_encapsulation`: the inner packet's position and ECN bits go into the tunnel's
//!    saved ingress LF (4 bits, starts at 01 01).
//! 2. `after_encapsulation`: the outer ECN becomes the half of that LF the **outer** ID's LSB
//!    selects, for every ECN-capable packet entering the tunnel whatever its protocol (a
//!    Not-ECT packet stays Not-ECT, RFC 3168 [reconstructed]). The NM of this port (step 3)
//!    then runs on the outer header.
//! 4. `before_decapsulation`: the tunnel's saved upstream LF takes the outer ECN at the outer
//!    ID's position. Decryption copies the outer ECN into the inner header [seed].
//!    `after_decapsulation`: the inner ECN is compared with the saved MSP and LSP and the inner
//!    seq/ack order is set to the match (Alg. 1; tie: the outer parity [reconstructed]). No
//!    other bit crosses. (Because the saved half at the outer parity was just set to this very
//!    value, the comparison resolves to the outer parity whenever the two halves differ too;
//!    with the tie rule it always does.)
//!
//! The SM's state is per tunnel [seed]; `per_inner_flow` keys it by (tunnel, inner flow).
//! Hash maps grow only when a new tunnel (or inner flow) appears: no allocation per packet.

use std::collections::HashMap;

use super::ordering::{id_position, plaintext_position, position};
use super::params::DcpewRouterParams;
use crate::dpcp::levels::Lf;
use crate::dpcp::ordering::{order, Position};
use crate::dpcp::router::{ChainCoder, FlagTable};
use crate::packet::{ecn, Kind, Packet};
use crate::params::ParamError;
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::Time;
use crate::vcp::LoadFactor;

/// SM counters (tests, inspection).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SmStats {
    /// Packets whose inner position/ECN the ingress SM saved (step 1).
    pub saved: u64,
    /// Outer headers the ingress SM wrote (step 2).
    pub encoded: u64,
    /// Inner packets the egress SM ordered (step 4), and how many as LSPs.
    pub ordered: u64,
    pub ordered_lsp: u64,
}

/// The "dcpew" router module.
#[derive(Clone, Debug)]
pub struct DcpewRouter {
    coder: ChainCoder,
    flows: FlagTable,
    tunnels: FlagTable,
    per_inner_flow: bool,
    ingress: HashMap<u64, Lf>,
    egress: HashMap<u64, Lf>,
    /// The outer ID's position of the packet between `before_` and `after_decapsulation`.
    decap_pos: Position,
    sm: SmStats,
}

impl DcpewRouter {
    /// A module whose timers start at 0 with a random phase from `rng`. Validates `p`.
    pub fn new(p: &DcpewRouterParams, mut rng: SimRng) -> Result<DcpewRouter, ParamError> {
        p.validate()?;
        let est = LoadFactor::new(&p.load_factor(), 0, &mut rng);
        Ok(DcpewRouter::with_estimator(est, p))
    }

    /// A module around a given estimator (tests: a fixed phase).
    pub fn with_estimator(est: LoadFactor, p: &DcpewRouterParams) -> DcpewRouter {
        DcpewRouter {
            coder: ChainCoder::new(est, 2, p.evict_after, p.latch_lsp),
            flows: FlagTable::default(),
            tunnels: FlagTable::default(),
            per_inner_flow: p.per_inner_flow,
            ingress: HashMap::new(),
            egress: HashMap::new(),
            decap_pos: Position::MSP,
            sm: SmStats::default(),
        }
    }

    pub fn estimator(&self) -> &LoadFactor {
        &self.coder.est
    }

    /// The port's current 4-bit load factor.
    pub fn lf(&self) -> Lf {
        self.coder.lf
    }

    /// Set the port's LF directly (tests of the SM and NM without a load).
    pub fn set_lf(&mut self, lf: Lf) {
        self.coder.lf = lf;
    }

    /// Data packets whose visible bits the NM changed.
    pub fn marks(&self) -> u64 {
        self.coder.marks
    }

    pub fn sm_stats(&self) -> SmStats {
        self.sm
    }

    /// The tunnel's saved ingress LF (step 1), if any packet entered it here.
    pub fn ingress_lf(&self, tunnel: u16, inner_flow: u32) -> Option<Lf> {
        self.ingress.get(&self.key(tunnel, inner_flow)).copied()
    }

    /// The tunnel's saved upstream LF at the egress (step 4).
    pub fn egress_lf(&self, tunnel: u16, inner_flow: u32) -> Option<Lf> {
        self.egress.get(&self.key(tunnel, inner_flow)).copied()
    }

    #[inline]
    fn key(&self, tunnel: u16, flow: u32) -> u64 {
        if self.per_inner_flow {
            ((tunnel as u64) << 32) | flow as u64
        } else {
            (tunnel as u64) << 32 | u32::MAX as u64
        }
    }
}

impl RouterModule for DcpewRouter {
    fn name(&self) -> &'static str {
        "dcpew"
    }

    #[inline]
    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, _port: &PortView) -> Verdict {
        self.coder.on_arrival(pkt)
    }

    /// NM: Alg. 2 with the visible ID's position; a tunnel is one flow.
    #[inline]
    fn on_departure(&mut self, now: Time, pkt: &mut Packet, _port: &PortView) -> bool {
        let x2 = pkt.visible_ecn();
        if x2 == ecn::NOT_ECT {
            return false;
        }
        let slot = match pkt.outer {
            // Inside the tunnel the payload's kind is unreadable: every ECN-capable packet counts.
            Some(o) => self.tunnels.slot(o.tunnel as usize, now, self.coder.evict),
            None if pkt.kind == Kind::Data => self.flows.slot(pkt.flow as usize, now, self.coder.evict),
            None => return false,
        };
        self.coder.encode(pkt, x2, position(pkt), slot)
    }

    fn next_tick(&self) -> Option<Time> {
        Some(self.coder.est.next_tick())
    }

    fn on_tick(&mut self, now: Time, port: &PortView) {
        self.coder.on_tick(now, port)
    }

    /// SM step 1.
    fn before_encapsulation(&mut self, _now: Time, pkt: &mut Packet, tunnel: u16) {
        if pkt.kind != Kind::Data || pkt.ecn == ecn::NOT_ECT {
            return;
        }
        let pos = plaintext_position(pkt);
        let k = self.key(tunnel, pkt.flow);
        let lf = self.ingress.entry(k).or_insert(Lf::lowest(2));
        *lf = lf.with_digit(pos.0, pkt.ecn & 0b11);
        self.sm.saved += 1;
    }

    /// SM step 2.
    fn after_encapsulation(&mut self, _now: Time, pkt: &mut Packet, tunnel: u16) {
        let k = self.key(tunnel, pkt.flow);
        let Some(o) = pkt.outer.as_mut() else { return };
        if o.ecn == ecn::NOT_ECT {
            return;
        }
        let lf = self.ingress.get(&k).copied().unwrap_or(Lf::lowest(2));
        o.ecn = lf.digit(id_position(o.ip_id).0);
        self.sm.encoded += 1;
    }

    /// SM step 4, before decryption: save the upstream LF by the outer ID.
    fn before_decapsulation(&mut self, _now: Time, pkt: &mut Packet, tunnel: u16) {
        let Some(o) = pkt.outer else { return };
        self.decap_pos = id_position(o.ip_id);
        if o.ecn == ecn::NOT_ECT {
            return;
        }
        let k = self.key(tunnel, pkt.flow);
        let lf = self.egress.entry(k).or_insert(Lf::lowest(2));
        *lf = lf.with_digit(self.decap_pos.0, o.ecn);
    }

    /// SM step 4, after decryption: order the inner seq/ack to match the saved LF.
    fn after_decapsulation(&mut self, _now: Time, pkt: &mut Packet, tunnel: u16) {
        let v = pkt.ecn & 0b11;
        if pkt.kind != Kind::Data || v == ecn::NOT_ECT {
            return;
        }
        let Some(lf) = self.egress.get(&self.key(tunnel, pkt.flow)).copied() else { return };
        let pos = match (v == lf.digit(0), v == lf.digit(1)) {
            (true, false) => Position::MSP,
            (false, true) => Position::LSP,
            _ => self.decap_pos,
        };
        if let Some(h) = pkt.tcp_hdr_mut() {
            order(h, pos.is_msp());
            self.sm.ordered += 1;
            self.sm.ordered_lsp += (!pos.is_msp()) as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dpcp::ordering::wire_position;
    use crate::ipsec::{decapsulate, Tunnel};
    use crate::packet::{tcp_checksum, TcpHeader};
    use crate::vcp::LoadFactorParams;

    fn router(lf: Lf) -> (DcpewRouter, PortView) {
        let p = DcpewRouterParams::default();
        let mut r = DcpewRouter::with_estimator(LoadFactor::with_phase(&LoadFactorParams::default(), 0, 0), &p);
        r.set_lf(lf);
        (r, PortView { capacity_bps: 8e6, limit_pkts: 10, limit_bytes: u64::MAX, ..Default::default() })
    }

    /// A data packet as a DCP-EW host sends it: ID `id`, seq/ack mirroring its parity, ECN `bits`.
    fn data(flow: u32, id: u16, bits: u8) -> Packet {
        let mut h = TcpHeader { seq: 0x8000_0000 + id as u32 * 1000, ack: 0, ..Default::default() };
        h.checksum = tcp_checksum(&h);
        order(&mut h, id & 1 == 0);
        let mut p = Packet::tcp(flow, Kind::Data, 1040, 1000, h);
        p.ip_id = id;
        p.ecn = bits;
        p
    }

    #[test]
    fn nm_is_alg2_by_the_ip_id() {
        let (mut r, port) = router(Lf::dpcp(0b11, 0b10));
        let mut m = data(1, 4, ecn::ECT1);
        let mut l = data(1, 5, ecn::ECT1);
        r.on_departure(0, &mut m, &port);
        r.on_departure(0, &mut l, &port);
        assert_eq!((m.ecn, l.ecn, r.marks()), (0b11, 0b10, 2));
        // Upstream worse MSP: the LSP is left alone (MSP_HIGH), per flow.
        let (mut r, port) = router(Lf::dpcp(0b10, 0b11));
        let mut m = data(2, 0, 0b11);
        let mut l = data(2, 1, 0b01);
        r.on_departure(0, &mut m, &port);
        r.on_departure(0, &mut l, &port);
        assert_eq!((m.ecn, l.ecn), (0b11, 0b01));
        // Never Not-ECT; never plaintext ACKs.
        let mut n = data(2, 2, ecn::NOT_ECT);
        r.on_departure(0, &mut n, &port);
        assert_eq!(n.ecn, 0);
        let mut a = Packet::tcp(2, Kind::Ack, 40, 0, TcpHeader::default());
        a.ecn = ecn::ECT1;
        r.on_departure(0, &mut a, &port);
        assert_eq!(a.ecn, ecn::ECT1);
    }

    /// `latch_lsp` as DPCP's: a load-factor change between a chain's MSP and LSP (ID 6, 7)
    /// leaves the LSP on the MSP's code when on, and gives it the new code when off.
    #[test]
    fn nm_latch_lsp_keeps_the_chain_on_one_load_factor() {
        for latch_lsp in [true, false] {
            let p = DcpewRouterParams { latch_lsp, ..Default::default() };
            let mut r = DcpewRouter::with_estimator(LoadFactor::with_phase(&LoadFactorParams::default(), 0, 0), &p);
            let port = PortView { capacity_bps: 8e6, limit_pkts: 10, limit_bytes: u64::MAX, ..Default::default() };
            r.set_lf(Lf::dpcp(0b10, 0b01));
            let mut m = data(3, 6, ecn::ECT1);
            r.on_departure(0, &mut m, &port);
            r.set_lf(Lf::dpcp(0b10, 0b11)); // a t_p tick between the two packets
            let mut l = data(3, 7, ecn::ECT1);
            r.on_departure(0, &mut l, &port);
            assert_eq!((m.ecn, l.ecn), (0b10, if latch_lsp { 0b01 } else { 0b11 }), "latch_lsp {latch_lsp}");
        }
        let e = crate::params::parse::<DcpewRouterParams>(&serde_json::json!({"latch_lsp": 1})).unwrap_err();
        assert_eq!(e.key, "latch_lsp");
    }

    #[test]
    fn nm_in_the_tunnel_uses_the_outer_id_and_the_tunnel_as_flow() {
        let (mut r, port) = router(Lf::dpcp(0b10, 0b10));
        let mut t = Tunnel::new(9, 100);
        // Two inner flows interleaved; inner IDs all even (inner MSPs): the outer IDs alternate.
        let mut got = Vec::new();
        for (i, flow) in [1u32, 2, 1, 2].into_iter().enumerate() {
            let mut p = data(flow, 2 * i as u16, ecn::ECT1);
            t.encapsulate(&mut p);
            r.on_departure(0, &mut p, &port);
            got.push((p.outer.unwrap().ecn, p.ecn));
        }
        // Outer MSP 10, LSP 10 written on the outer header; inner bits untouched.
        assert_eq!(got, vec![(0b10, 1), (0b10, 1), (0b10, 1), (0b10, 1)]);
        assert_eq!(r.tunnels.len(), 10);
        assert!(r.flows.is_empty(), "the tunnel, not the inner flows, holds the flag");
    }

    #[test]
    fn sm_steps_1_to_4() {
        let (mut g1, port) = router(Lf::dpcp(0b01, 0b01));
        let mut t = Tunnel::new(3, 7); // first outer ID odd: an outer LSP
                                       // Step 1: inner MSP 10, inner LSP 11 saved.
        let mut m = data(1, 0, 0b10);
        let mut l = data(1, 1, 0b11);
        g1.before_encapsulation(0, &mut m, 3);
        assert_eq!(g1.ingress_lf(3, 1), Some(Lf::dpcp(0b10, 0b01)));
        t.encapsulate(&mut m);
        // Step 2: the outer ID (7, odd) selects the LSP half of the saved LF (01 so far).
        g1.after_encapsulation(0, &mut m, 3);
        assert_eq!(m.outer.unwrap().ecn, 0b01);
        g1.before_encapsulation(0, &mut l, 3);
        assert_eq!(g1.ingress_lf(3, 1), Some(Lf::dpcp(0b10, 0b11)));
        t.encapsulate(&mut l);
        g1.after_encapsulation(0, &mut l, 3);
        assert_eq!(l.outer.unwrap().ecn, 0b10, "outer ID 8: the MSP half");
        // Not-ECT packets (ACKs) stay Not-ECT.
        let mut a = Packet::tcp(1, Kind::Ack, 40, 0, TcpHeader::default());
        g1.before_encapsulation(0, &mut a, 3);
        t.encapsulate(&mut a);
        g1.after_encapsulation(0, &mut a, 3);
        assert_eq!(a.outer.unwrap().ecn, 0);
        assert_eq!(g1.sm_stats().encoded, 2);
        // Step 3 (NM at g1's output): our 01 01 is lower: unchanged.
        g1.on_departure(0, &mut m, &port);
        g1.on_departure(0, &mut l, &port);
        assert_eq!((m.outer.unwrap().ecn, l.outer.unwrap().ecn), (0b01, 0b10));
        // A ciphertext router at 11 01 owns the outer chain from the MSP (outer ID 8) on:
        // the outer MSP rises to 11 and the next outer LSP gets 01.
        let (mut r, _) = router(Lf::dpcp(0b11, 0b01));
        r.on_departure(0, &mut l, &port); // outer 8: MSP → 11, flag LOW
        let mut l2 = data(1, 3, 0b11);
        t.encapsulate(&mut l2); // outer 10 (the ACK took 9): an MSP, so take one more
        let mut l2 = data(1, 3, 0b11);
        t.encapsulate(&mut l2); // outer 11: LSP
        l2.outer.as_mut().unwrap().ecn = 0b11;
        r.on_departure(0, &mut l2, &port);
        assert_eq!((l.outer.unwrap().ecn, l2.outer.unwrap().ecn), (0b11, 0b01));
        // Step 4 at g2: save by the outer ID, decrypt (ECN copied), order the inner seq/ack.
        let (mut g2, _) = router(Lf::dpcp(0b01, 0b01));
        for (p, want) in [(&mut l, Position::MSP), (&mut l2, Position::LSP)] {
            let inner_id = p.ip_id;
            g2.before_decapsulation(0, p, 3);
            assert!(decapsulate(p, 3));
            g2.after_decapsulation(0, p, 3);
            assert_eq!(wire_position(p.tcp_hdr().unwrap()), want);
            assert_eq!(position(p), want, "downstream reads the SM's order");
            assert_eq!(p.ip_id, inner_id, "the inner IP header is not touched");
        }
        assert_eq!((l.ecn, l2.ecn), (0b11, 0b01));
        assert_eq!(g2.egress_lf(3, 1), Some(Lf::dpcp(0b11, 0b01)));
        // l2 was an inner LSP by ID anyway; l (inner ID 1, an LSP) became an MSP.
        assert_eq!(g2.sm_stats(), SmStats { saved: 0, encoded: 0, ordered: 2, ordered_lsp: 1 });
        // The checksum survives the re-ordering (a swap): the receiver restores the fields.
        let h = *l.tcp_hdr().unwrap();
        let mut r2 = h;
        crate::dpcp::ordering::restore(&mut r2, crate::dpcp::ordering::Anchor::seq(0x8000_0000));
        assert_eq!(tcp_checksum(&r2), r2.checksum);
    }

    #[test]
    fn sm_tie_goes_to_the_outer_parity_and_state_is_per_tunnel_or_inner_flow() {
        let (mut g2, _) = router(Lf::lowest(2));
        // Saved 10 10: a value equal to both halves is a tie → outer parity.
        for (outer_id, want) in [(4u16, Position::MSP), (5, Position::LSP), (6, Position::MSP)] {
            let mut p = data(1, 0, ecn::ECT1);
            p.outer = Some(crate::packet::OuterIp { tunnel: 2, ecn: 0b10, ip_id: outer_id });
            g2.before_decapsulation(0, &mut p, 2);
            decapsulate(&mut p, 2);
            g2.after_decapsulation(0, &mut p, 2);
            assert_eq!(wire_position(p.tcp_hdr().unwrap()), want, "outer id {outer_id}");
        }
        assert_eq!(g2.egress_lf(2, 1), Some(Lf::dpcp(0b10, 0b10)));
        assert_eq!(g2.egress_lf(2, 99), Some(Lf::dpcp(0b10, 0b10)), "per tunnel: all inner flows share it");
        assert_eq!(g2.egress_lf(5, 1), None);
        let p = DcpewRouterParams { per_inner_flow: true, ..Default::default() };
        let mut g = DcpewRouter::with_estimator(LoadFactor::with_phase(&LoadFactorParams::default(), 0, 0), &p);
        let mut m = data(1, 0, 0b11);
        g.before_encapsulation(0, &mut m, 2);
        assert_eq!(g.ingress_lf(2, 1), Some(Lf::dpcp(0b11, 0b01)));
        assert_eq!(g.ingress_lf(2, 2), None);
    }
}
