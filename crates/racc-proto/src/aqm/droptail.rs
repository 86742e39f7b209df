//! DropTail (docs/PROTOCOLS.md §12): a FIFO with a packet or byte limit that drops arrivals when
//! full. The limit lives in the engine's port, which applies it after the module's verdict
//! (and then calls `on_buffer_drop`), so this module forwards every packet unchanged.

use crate::packet::Packet;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::Time;

/// The DropTail router module: always [`Verdict::Forward`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropTail;

impl DropTail {
    pub fn new() -> DropTail {
        DropTail
    }
}

impl RouterModule for DropTail {
    fn name(&self) -> &'static str {
        "droptail"
    }

    #[inline]
    fn on_arrival(&mut self, _now: Time, _pkt: &mut Packet, _port: &PortView) -> Verdict {
        Verdict::Forward
    }

    /// The buffer limit is the port's: the module has nothing to do per packet.
    fn passive(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{ecn, Kind, TcpHeader};

    #[test]
    fn forwards_everything_untouched() {
        let mut m = DropTail::new();
        assert_eq!(m.name(), "droptail");
        let port = PortView { queue_pkts: 1_000_000, limit_pkts: 10, ..Default::default() };
        let mut p = Packet::tcp(1, Kind::Data, 1000, 960, TcpHeader::default());
        p.ecn = ecn::ECT0;
        let before = p;
        for now in 0..100 {
            assert_eq!(m.on_arrival(now, &mut p, &port), Verdict::Forward);
        }
        assert_eq!(p, before);
        assert_eq!(m.next_tick(), None);
    }
}
