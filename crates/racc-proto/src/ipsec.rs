//! IPsec ESP tunnel mode, as the seeds need it (DCP-EW §III.C): between two gateways the
//! whole inner packet is encrypted, so routers inside the tunnel see only the outer IPv4
//! header — its two ECN bits and its own IP ID. Engines apply `encapsulate` at the port where
//! a packet enters the tunnel and `decapsulate` where it leaves; router modules that take part
//! (DCP-EW's security module) hook in before and after each step (`RouterModule`'s tunnel
//! hooks). Nothing here is protocol specific.

use crate::packet::{hdr, OuterIp, Packet};

/// One direction of a tunnel (an IPsec SA): its id and the outer IP ID counter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tunnel {
    pub id: u16,
    next_ip_id: u16,
}

impl Tunnel {
    /// A tunnel whose outer IP IDs start at `first_ip_id` (engines draw it from the run's
    /// random stream, as a real stack starts from an arbitrary value).
    pub fn new(id: u16, first_ip_id: u16) -> Tunnel {
        Tunnel { id, next_ip_id: first_ip_id }
    }

    /// Wrap `pkt` in an outer header: ECN copied from the inner header (RFC 4301 §5.1.2.1,
    /// RFC 6040 normal mode), a fresh outer IP ID (incrementing per SA), ESP overhead added to
    /// the wire size. A packet already in a tunnel is left alone (no nesting).
    pub fn encapsulate(&mut self, pkt: &mut Packet) -> bool {
        if pkt.outer.is_some() {
            return false;
        }
        pkt.outer = Some(OuterIp { tunnel: self.id, ecn: pkt.ecn, ip_id: self.next_ip_id });
        self.next_ip_id = self.next_ip_id.wrapping_add(1);
        pkt.size += hdr::ESP_TUNNEL;
        true
    }
}

/// Unwrap a packet of tunnel `id`: the outer ECN bits are copied into the inner header (seed
/// 003 §III.C: "the IPsec module will copy the ECN bits from the new IP header to the original
/// IP header"); nothing else crosses. Returns false (and changes nothing) for a packet that is
/// not in this tunnel.
pub fn decapsulate(pkt: &mut Packet, id: u16) -> bool {
    match pkt.outer {
        Some(o) if o.tunnel == id => {
            pkt.ecn = o.ecn;
            pkt.outer = None;
            pkt.size -= hdr::ESP_TUNNEL;
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{ecn, Kind, TcpHeader};

    fn data() -> Packet {
        let mut p = Packet::tcp(3, Kind::Data, 1000, 960, TcpHeader { seq: 10, ack: 20, ..Default::default() });
        p.ecn = ecn::ECT1;
        p.ip_id = 77;
        p
    }

    #[test]
    fn encapsulation_hides_the_inner_header_and_round_trips() {
        let mut t = Tunnel::new(5, 0xFFFF);
        let orig = data();
        let mut p = orig;
        assert!(t.encapsulate(&mut p));
        let o = p.outer.unwrap();
        assert_eq!((o.tunnel, o.ecn, o.ip_id), (5, ecn::ECT1, 0xFFFF));
        assert_eq!(p.size, 1000 + hdr::ESP_TUNNEL);
        assert_eq!(p.visible_ecn(), ecn::ECT1);
        // A router inside the tunnel marks the outer header only.
        p.set_visible_ecn(ecn::CE);
        assert_eq!(p.ecn, ecn::ECT1);
        // No nesting; the outer IP ID increments (and wraps) per packet.
        assert!(!t.encapsulate(&mut p));
        let mut q = data();
        t.encapsulate(&mut q);
        assert_eq!(q.outer.unwrap().ip_id, 0);
        // Decapsulation copies the outer ECN in and restores everything else.
        assert!(!decapsulate(&mut p, 6));
        assert!(decapsulate(&mut p, 5));
        assert_eq!(p.ecn, ecn::CE);
        assert_eq!(Packet { ecn: orig.ecn, ..p }, orig);
    }
}
