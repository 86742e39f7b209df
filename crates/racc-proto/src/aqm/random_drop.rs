//! Random drop near a full buffer (the registry's router "random-drop"): htsim's `RandomQueue`
//! (`sim/randomqueue.cpp`, `receivePacket`), the switch queue of htsim's fat trees
//! (`FatTreeTopology::alloc_queue`, queue type `RANDOM`, `main_tcp.cpp`). An arrival that would
//! take the occupancy (the queue, the packet in service and the arrival) above the buffer limit
//! less a drop zone (`RANDOM_BUFFER` = 3 packets in htsim's `main.h`) is dropped with
//! probability p = 0.1; the limit itself stays the port's. The early drops break up the
//! synchronised tail-drop bursts of flows that meet in an 8-packet buffer, which is what lets
//! most of htsim's permutation flows finish without a retransmission timeout (docs/PERFORMANCE.md).

use crate::packet::Packet;
use crate::params::ParamError;
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::Time;

/// The `router_params` of a "random-drop" port.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RandomDropParams {
    /// The drop zone below the buffer limit, in data packets (`RANDOM_BUFFER`, htsim `main.h`).
    pub zone_pkts: u32,
    /// The drop probability inside the zone (`drop_prob = 0.1`, `RandomQueue::receivePacket`).
    pub p: f64,
}

impl Default for RandomDropParams {
    fn default() -> Self {
        RandomDropParams { zone_pkts: 3, p: 0.1 }
    }
}

impl RandomDropParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(0.0..=1.0).contains(&self.p) {
            return Err(ParamError::new("p", format!("must be a probability in [0, 1], got {}", self.p)));
        }
        Ok(())
    }
}

/// The random-drop module: one port's parameters and its own random stream.
#[derive(Clone, Debug)]
pub struct RandomDrop {
    p: RandomDropParams,
    rng: SimRng,
}

impl RandomDrop {
    pub fn new(p: RandomDropParams, rng: SimRng) -> Result<RandomDrop, ParamError> {
        p.validate()?;
        Ok(RandomDrop { p, rng })
    }

    /// Would `pkt` take the occupancy into the zone? In the unit the buffer is limited in: htsim
    /// compares bytes (`_queuesize + pkt.size() > _maxsize - _drop`), its zone being
    /// `memFromPkt(3)` = three data packets.
    fn in_zone(&self, pkt: &Packet, port: &PortView) -> bool {
        if port.limit_bytes != u64::MAX {
            let zone = u64::from(self.p.zone_pkts) * u64::from(port.mean_pkt_size);
            port.queue_bytes + u64::from(pkt.size) > port.limit_bytes.saturating_sub(zone)
        } else {
            port.queue_pkts.saturating_add(1) > port.limit_pkts.saturating_sub(self.p.zone_pkts)
        }
    }
}

impl RouterModule for RandomDrop {
    fn name(&self) -> &'static str {
        "random-drop"
    }

    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, port: &PortView) -> Verdict {
        // The draw is taken only inside the zone, as htsim's `drand() < drop_prob` with
        // drop_prob = 0 outside it never decides anything.
        if self.in_zone(pkt, port) && self.rng.uniform() < self.p.p {
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

    fn module(p: f64) -> RandomDrop {
        RandomDrop::new(RandomDropParams { p, ..Default::default() }, SimRng::for_component(3, "random-drop/test"))
            .unwrap()
    }

    fn data() -> Packet {
        Packet::tcp(1, Kind::Data, 1500, 1460, TcpHeader::default())
    }

    #[test]
    fn packet_limit_zone_is_the_top_three_places() {
        let m = module(1.0);
        let at = |q: u32| PortView { queue_pkts: q, limit_pkts: 8, limit_bytes: u64::MAX, ..Default::default() };
        // 8 places, zone 3: an arrival is in the zone when it would be the 6th or later.
        assert!(!m.in_zone(&data(), &at(4)));
        assert!(m.in_zone(&data(), &at(5)));
        assert!(m.in_zone(&data(), &at(7)));
    }

    #[test]
    fn byte_limit_zone_counts_the_arrival_as_htsim_does() {
        let m = module(1.0);
        let at = |b: u64| PortView {
            queue_bytes: b,
            limit_pkts: u32::MAX,
            limit_bytes: 12_000,
            mean_pkt_size: 1500,
            ..Default::default()
        };
        // maxsize 12000, zone 4500: drop_th 7500; 6000 + 1500 = 7500 is not above it.
        assert!(!m.in_zone(&data(), &at(6000)));
        assert!(m.in_zone(&data(), &at(6001)));
        // A 64-byte ACK on the same queue is still outside.
        let ack = Packet::tcp(1, Kind::Ack, 64, 0, TcpHeader::default());
        assert!(!m.in_zone(&ack, &at(7436)));
        assert!(m.in_zone(&ack, &at(7437)));
    }

    #[test]
    fn drops_a_tenth_inside_the_zone_and_nothing_outside() {
        let mut m = module(0.1);
        let inside = PortView { queue_pkts: 6, limit_pkts: 8, limit_bytes: u64::MAX, ..Default::default() };
        let outside = PortView { queue_pkts: 2, ..inside };
        let n = 100_000;
        let dropped = (0..n).filter(|_| m.on_arrival(0, &mut data(), &inside) == Verdict::Drop).count();
        // Binomial(1e5, 0.1): sd 95; 5 sd either side.
        assert!((9_525..=10_475).contains(&dropped), "{dropped}");
        assert!((0..1000).all(|_| m.on_arrival(0, &mut data(), &outside) == Verdict::Forward));
    }

    #[test]
    fn refuses_a_probability_outside_0_1() {
        let e = RandomDrop::new(RandomDropParams { p: 1.5, ..Default::default() }, SimRng::for_component(0, "x"))
            .unwrap_err();
        assert_eq!(e.key, "p");
    }
}
