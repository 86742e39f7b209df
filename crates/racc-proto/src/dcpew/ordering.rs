//! DCP-EW's packet ordering by the IP ID's least significant bit [DCP-EW §III.B; docs/PROTOCOLS.md
//! §4]: LSB 0 = MSP, LSB 1 = LSP. Routers read it passively and never write it.
//!
//! - Inside an IPsec tunnel the **outer** header's ID is the only one visible: it decides.
//! - On the plaintext side the inner ID decides. DCP-EW hosts mirror the ID's parity into
//!   DPCP's seq/ack order (Alg. 1) on every data packet they send, so that an egress security
//!   module can re-mark the position after decryption without touching the IP header (seed
//!   003 §III.C step 4: "DCP-EW SM manipulates the seq and ack numbers"), and the nodes
//!   downstream of it read the SM's decision "as in DPCP" (step 5). The two agree on every
//!   packet a host sent; where they disagree an SM re-marked the packet and **seq/ack wins**
//!   [reconstructed]. A non-TCP packet (no seq/ack) goes by its ID alone.
//! - [`IpIdSource`]: the host's per-flow ID, incrementing (default) or seeded random.

use crate::dpcp::ordering::{order, wire_position, Position};
use crate::dpcp::window::ChainOrder;
use crate::packet::Packet;
use crate::rng::SimRng;

use super::params::IpIdMode;

/// The position an IP ID stands for: LSB 0 = MSP, 1 = LSP.
#[inline]
pub fn id_position(ip_id: u16) -> Position {
    Position((ip_id & 1) as u8)
}

/// A DCP-EW router's reading of a packet's position (module docs).
#[inline]
pub fn position(pkt: &Packet) -> Position {
    if let Some(o) = pkt.outer {
        return id_position(o.ip_id);
    }
    plaintext_position(pkt)
}

/// The position of a plaintext packet: its IP ID's LSB, unless the seq/ack order says
/// otherwise (an egress SM re-marked it).
#[inline]
pub fn plaintext_position(pkt: &Packet) -> Position {
    let id = id_position(pkt.ip_id);
    match pkt.tcp_hdr() {
        Some(h) if h.seq != h.ack && wire_position(h) != id => wire_position(h),
        _ => id,
    }
}

/// A host's per-flow IP ID (DCP-EW §III.B: "either monotonically increasing or chosen
/// uniformly at random"). The counter starts at 0, so a flow's first data packet is an MSP as
/// in DPCP.
#[derive(Clone, Debug)]
pub enum IpIdSource {
    Increment { next: u16 },
    Random(SimRng),
}

impl IpIdSource {
    /// Random IDs come from the scenario seed (same scenario and seed, same IDs; another seed,
    /// other IDs): `SimRng::for_component(seed, "ipid/flow<flow>")`. A non-zero `perturb` (the
    /// `ip_id_seed` parameter) draws another stream under the same seed, labelled
    /// "ipid/flow<flow>/<perturb>". The label is formatted once, at construction.
    pub fn new(mode: IpIdMode, seed: u64, flow: u32, perturb: u64) -> IpIdSource {
        match mode {
            IpIdMode::Increment => IpIdSource::Increment { next: 0 },
            IpIdMode::Random => {
                let label = match perturb {
                    0 => format!("ipid/flow{flow}"),
                    k => format!("ipid/flow{flow}/{k}"),
                };
                IpIdSource::Random(SimRng::for_component(seed, &label))
            }
        }
    }

    #[inline]
    pub fn next_id(&mut self) -> u16 {
        match self {
            IpIdSource::Increment { next } => {
                let id = *next;
                *next = next.wrapping_add(1);
                id
            }
            IpIdSource::Random(r) => r.below(1 << 16) as u16,
        }
    }
}

/// DCP-EW's chain position: the next ID's LSB, mirrored into the seq/ack order (Alg. 1) for
/// the plaintext nodes behind an egress SM (module docs). In VCP mode seq/ack say MSP and the
/// ID keeps its drawn value.
impl ChainOrder for IpIdSource {
    #[inline]
    fn stamp(&mut self, pkt: &mut Packet, chains: bool) {
        pkt.ip_id = self.next_id();
        let msp = !chains || id_position(pkt.ip_id).is_msp();
        if let Some(h) = pkt.tcp_hdr_mut() {
            order(h, msp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{tcp_checksum, Kind, OuterIp, TcpHeader};

    fn pkt(id: u16, msp_order: bool) -> Packet {
        let mut h = TcpHeader { seq: 0x8000_0000, ack: 5, ..Default::default() };
        h.checksum = tcp_checksum(&h);
        order(&mut h, msp_order);
        let mut p = Packet::tcp(0, Kind::Data, 1040, 1000, h);
        p.ip_id = id;
        p
    }

    #[test]
    fn incrementing_ids_alternate_from_an_msp() {
        let mut s = IpIdSource::new(IpIdMode::Increment, 0, 3, 0);
        let pos: Vec<u8> = (0..6).map(|_| id_position(s.next_id()).0).collect();
        assert_eq!(pos, vec![0, 1, 0, 1, 0, 1]);
        // Wrap keeps the alternation (2^16 is even).
        let mut s = IpIdSource::Increment { next: u16::MAX };
        assert_eq!((id_position(s.next_id()), id_position(s.next_id())), (Position::LSP, Position::MSP));
    }

    #[test]
    fn random_ids_are_seeded_per_flow_and_half_msp() {
        let draw = |seed, flow, perturb| {
            let mut s = IpIdSource::new(IpIdMode::Random, seed, flow, perturb);
            (0..10_000).map(|_| s.next_id()).collect::<Vec<u16>>()
        };
        let a = draw(1, 0, 0);
        assert_eq!(a, draw(1, 0, 0), "same seed and flow, same IDs");
        assert_ne!(a, draw(1, 1, 0), "another flow");
        assert_ne!(a, draw(2, 0, 0), "another scenario seed");
        assert_ne!(a, draw(1, 0, 7), "ip_id_seed perturbs");
        assert_eq!(draw(2, 0, 7), draw(2, 0, 7));
        assert_ne!(draw(1, 0, 7), draw(2, 0, 7), "the scenario seed still counts under a perturbation");
        let mut r = SimRng::for_component(1, "ipid/flow0");
        assert_eq!(a[..4], [0; 4].map(|_: u16| r.below(1 << 16) as u16), "the documented label");
        let msp = a.iter().filter(|&&i| id_position(i).is_msp()).count();
        assert!((4_800..5_200).contains(&msp), "{msp}");
        // Same-parity runs happen (they are why the exception limit is off in this mode).
        let longest = a.windows(4).filter(|w| w.iter().all(|&i| i & 1 == w[0] & 1)).count();
        assert!(longest > 100);
    }

    #[test]
    fn routers_read_the_visible_id() {
        // Plaintext: the ID's LSB (the host mirrored it into seq/ack).
        assert_eq!(position(&pkt(10, true)), Position::MSP);
        assert_eq!(position(&pkt(11, false)), Position::LSP);
        // An egress SM re-marked seq/ack: seq/ack wins over the inner ID.
        assert_eq!(position(&pkt(10, false)), Position::LSP);
        assert_eq!(position(&pkt(11, true)), Position::MSP);
        // Inside a tunnel only the outer ID counts.
        let mut p = pkt(10, true);
        p.outer = Some(OuterIp { tunnel: 1, ecn: 1, ip_id: 7 });
        assert_eq!(position(&p), Position::LSP);
        p.outer = Some(OuterIp { tunnel: 1, ecn: 1, ip_id: 8 });
        assert_eq!(position(&p), Position::MSP);
        // A DPCP router (seq/ack) cannot see a position in the tunnel: everything reads MSP.
        p.outer = Some(OuterIp { tunnel: 1, ecn: 1, ip_id: 7 });
        assert_eq!(crate::dpcp::position(&p), Position::MSP);
    }
}
