//! The VCP router module of one output port (VCP-DCCP App. A1, A2; docs/PROTOCOLS.md §1 router
//! rules, §2).
//!
//! - `on_arrival`: every packet's wire bytes go into λ before the buffer check, so packets the
//!   buffer then drops are counted [checked: VCP reference code]. VCP never drops or marks on
//!   arrival.
//! - `on_departure`: data packets are marked at dequeue with the freshest code, as the
//!   reference code does. The code is only ever raised (the path carries the max), Not-ECT
//!   (00) is never touched (RFC 3168), and the bits written are the ones a router can reach:
//!   the outer header's inside an IPsec tunnel (`Packet::visible_ecn`).
//! - `next_tick`/`on_tick`: the estimator's t_q and t_p timers ([`LoadFactor`]).

use super::load_factor::{LoadFactor, LoadFactorParams};
use crate::packet::{ecn, Kind, Packet};
use crate::params::ParamError;
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::Time;

/// A VCP router's `router_params`: the estimator's (A1, A2).
pub type VcpRouterParams = LoadFactorParams;

/// The VCP router module.
#[derive(Clone, Debug)]
pub struct VcpRouter {
    lf: LoadFactor,
    /// Data packets whose code this port raised.
    marks: u64,
}

impl VcpRouter {
    /// A module whose timers start at time 0 with a random phase drawn from `rng` (the port's
    /// own stream). Validates `p`.
    pub fn new(p: &VcpRouterParams, mut rng: SimRng) -> Result<VcpRouter, ParamError> {
        p.validate()?;
        Ok(VcpRouter { lf: LoadFactor::new(p, 0, &mut rng), marks: 0 })
    }

    /// A module around a given estimator (tests: a fixed phase).
    pub fn with_estimator(lf: LoadFactor) -> VcpRouter {
        VcpRouter { lf, marks: 0 }
    }

    pub fn estimator(&self) -> &LoadFactor {
        &self.lf
    }

    /// Data packets whose code this port raised so far.
    pub fn marks(&self) -> u64 {
        self.marks
    }

    /// Raise the visible code of a data packet to `code` if it is larger; never touch Not-ECT
    /// or non-data packets. True if the packet was changed.
    #[inline]
    pub fn mark(pkt: &mut Packet, code: u8) -> bool {
        if pkt.kind != Kind::Data {
            return false;
        }
        let cur = pkt.visible_ecn();
        if cur == ecn::NOT_ECT || code <= cur {
            return false;
        }
        pkt.set_visible_ecn(code);
        true
    }
}

impl RouterModule for VcpRouter {
    fn name(&self) -> &'static str {
        "vcp"
    }

    #[inline]
    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, _port: &PortView) -> Verdict {
        self.lf.on_arrival(pkt.size);
        Verdict::Forward
    }

    #[inline]
    fn on_departure(&mut self, _now: Time, pkt: &mut Packet, _port: &PortView) -> bool {
        let marked = VcpRouter::mark(pkt, self.lf.code());
        if marked {
            self.marks += 1;
        }
        marked
    }

    fn next_tick(&self) -> Option<Time> {
        Some(self.lf.next_tick())
    }

    fn on_tick(&mut self, now: Time, port: &PortView) {
        self.lf.on_tick(now, port.queue_bytes, port.capacity_bps);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{OuterIp, TcpHeader};
    use crate::time::NS_PER_MS;

    const MS: Time = NS_PER_MS;

    fn pkt(kind: Kind, e: u8) -> Packet {
        let mut p = Packet::tcp(1, kind, 1000, 960, TcpHeader::default());
        p.ecn = e;
        p
    }

    /// A router at 8 Mb/s (1e6 B/s), γ = 1, t_p = 100 ms, t_q = 50 ms, phase 0: each 100 ms
    /// interval's ρ is λ/100 000 B plus the queue term (0 here).
    fn router() -> (VcpRouter, PortView) {
        let p = LoadFactorParams { t_p: 0.1, t_q: 0.05, gamma: 1.0, ..Default::default() };
        let r = VcpRouter::with_estimator(LoadFactor::with_phase(&p, 0, 0));
        (r, PortView { capacity_bps: 8e6, limit_pkts: 10, limit_bytes: u64::MAX, ..Default::default() })
    }

    /// Feed `bytes` of 1000-byte packets in one interval and close it.
    fn interval(r: &mut VcpRouter, port: &PortView, start: Time, bytes: u32) {
        for _ in 0..bytes / 1000 {
            assert_eq!(r.on_arrival(start + MS, &mut pkt(Kind::Data, ecn::ECT1), port), Verdict::Forward);
        }
        while r.next_tick().unwrap() <= start + 100 * MS {
            let t = r.next_tick().unwrap();
            r.on_tick(t, port);
        }
    }

    #[test]
    fn counts_arrivals_that_the_buffer_drops() {
        let (mut r, port) = router();
        r.on_tick(0, &port); // open the first interval
                             // 90 packets arrive; the port tail-drops the last 30 (on_buffer_drop): all count.
        for i in 0..90 {
            let mut p = pkt(Kind::Data, ecn::ECT1);
            r.on_arrival(MS, &mut p, &port);
            if i >= 60 {
                r.on_buffer_drop(MS, &p, &port);
            }
        }
        assert_eq!(r.estimator().lambda(), 90_000);
        r.on_tick(50 * MS, &port);
        r.on_tick(100 * MS, &port);
        assert!((r.estimator().rho() - 0.9).abs() < 1e-12);
        assert_eq!(r.estimator().code(), ecn::ECT0);
    }

    #[test]
    fn marks_data_only_raises_only_never_not_ect() {
        let (mut r, port) = router();
        r.on_tick(0, &port);
        // Before the first t_p the code is 01: an 01 packet stays 01.
        let mut p = pkt(Kind::Data, ecn::ECT1);
        r.on_departure(MS, &mut p, &port);
        assert_eq!((p.ecn, r.marks()), (ecn::ECT1, 0));
        // Overload: ρ = 1.1 → 11.
        interval(&mut r, &port, 0, 110_000);
        assert_eq!(r.estimator().code(), ecn::CE);
        for (kind, before, after) in [
            (Kind::Data, ecn::ECT1, ecn::CE),         // raised
            (Kind::Data, ecn::ECT0, ecn::CE),         // raised
            (Kind::Data, ecn::CE, ecn::CE),           // already the max
            (Kind::Data, ecn::NOT_ECT, ecn::NOT_ECT), // RFC 3168: never mark Not-ECT
            (Kind::Ack, ecn::ECT1, ecn::ECT1),        // routers touch data packets only
            (Kind::Syn, ecn::ECT1, ecn::ECT1),
            (Kind::SynAck, ecn::ECT1, ecn::ECT1),
        ] {
            let mut p = pkt(kind, before);
            r.on_departure(101 * MS, &mut p, &port);
            assert_eq!(p.ecn, after, "{kind:?} {before:02b}");
        }
        assert_eq!(r.marks(), 2);
        // High load (ρ = 0.85 → 10): never lowers an 11 set upstream, raises 01.
        interval(&mut r, &port, 100 * MS, 85_000);
        assert_eq!(r.estimator().code(), ecn::ECT0);
        let mut hi = pkt(Kind::Data, ecn::CE);
        r.on_departure(201 * MS, &mut hi, &port);
        assert_eq!(hi.ecn, ecn::CE, "only raise: the path carries the max");
        let mut lo = pkt(Kind::Data, ecn::ECT1);
        r.on_departure(201 * MS, &mut lo, &port);
        assert_eq!(lo.ecn, ecn::ECT0);
        // Low load (ρ = 0.5 → 01): nothing is raised.
        interval(&mut r, &port, 200 * MS, 50_000);
        assert_eq!(r.estimator().code(), ecn::ECT1);
        let mut hi = pkt(Kind::Data, ecn::ECT0);
        r.on_departure(301 * MS, &mut hi, &port);
        assert_eq!(hi.ecn, ecn::ECT0);
    }

    #[test]
    fn marks_the_outer_header_inside_a_tunnel() {
        let (mut r, port) = router();
        r.on_tick(0, &port);
        interval(&mut r, &port, 0, 120_000);
        assert_eq!(r.estimator().code(), ecn::CE);
        // The inner header is encrypted: only the outer ECN bits change.
        let mut p = pkt(Kind::Data, ecn::ECT1);
        p.outer = Some(OuterIp { tunnel: 3, ecn: ecn::ECT1, ip_id: 9 });
        r.on_departure(101 * MS, &mut p, &port);
        assert_eq!((p.ecn, p.outer.unwrap().ecn, p.outer.unwrap().ip_id), (ecn::ECT1, ecn::CE, 9));
        // A Not-ECT outer header is left alone even if the inner one is ECN-capable.
        let mut p = pkt(Kind::Data, ecn::ECT1);
        p.outer = Some(OuterIp { tunnel: 3, ecn: ecn::NOT_ECT, ip_id: 9 });
        r.on_departure(101 * MS, &mut p, &port);
        assert_eq!((p.ecn, p.outer.unwrap().ecn), (ecn::ECT1, ecn::NOT_ECT));
    }

    #[test]
    fn registry_shape() {
        let r = VcpRouter::new(&VcpRouterParams::default(), SimRng::for_component(1, "router/port0")).unwrap();
        assert_eq!(r.name(), "vcp");
        assert!(r.next_tick().unwrap() < 200 * MS);
        let e = VcpRouter::new(&VcpRouterParams { gamma: 0.0, ..Default::default() }, SimRng::for_component(1, "x"))
            .unwrap_err();
        assert_eq!(e.key, "gamma");
    }
}
