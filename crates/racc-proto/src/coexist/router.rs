//! The two-sub-queue router module (VCP-DCCP §4.4): VCP traffic in one sub-queue under VCP's
//! load-factor router, TCP traffic in the other under RED, one link shared between them by
//! deficit round robin ([`super::drr`]).
//!
//! Each sub-queue is, to its controller, a router of its own on its share of the link: VCP's
//! load factor (A1) is computed against w·C and its own queue (A2), RED's average follows its
//! own queue and decays over its own idle time at (1 − w)·C, and each holds at most its share of
//! the port's buffer (a drop there is the module's). VCP's λ counts every VCP arrival, the ones
//! then dropped too, as on a VCP router of its own.

use super::drr::Drr;
use super::CoexistParams;
use crate::aqm::Red;
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{ecn, Packet};
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::{Time, NS_PER_SEC};
use crate::vcp::{LoadFactor, VcpRouter};

/// The VCP sub-queue's index.
pub const VCP: usize = 0;
/// The RED (TCP) sub-queue's index.
pub const RED: usize = 1;

/// The sub-queue of a packet. VCP-DCCP §4.4 separates "VCP controlled traffic" from "TCP/RED
/// controlled traffic" without saying how a router tells them apart; the packets say it
/// themselves: a VCP sender sends every data packet ECN-capable, the 2-bit load-factor code
/// (01 at the sender, only ever raised on the way, never to or from 00), while the TCP that RED
/// regulates by loss (§4.4: "RED employs packet loss") is not ECN-capable. So an ECN-capable
/// packet (the visible bits: the outer header's in a tunnel) is VCP's, anything else (Not-ECT
/// data, pure ACKs, SYNs) TCP's. An ECN-capable TCP (ECT(0), RFC 3168) would be classed VCP:
/// this module is for the paper's non-ECN TCP/RED.
#[inline]
pub fn sub_queue_of(pkt: &Packet) -> usize {
    if pkt.visible_ecn() != ecn::NOT_ECT {
        VCP
    } else {
        RED
    }
}

/// One sub-queue's books: what waits in it, and what it has sent and lost.
#[derive(Clone, Debug, Default)]
struct Books {
    pkts: u32,
    bytes: u64,
    /// When it last became empty (the end of its last packet's serialisation); `None` while
    /// packets wait.
    idle_since: Option<Time>,
    /// Packets of this sub-queue dropped: by RED, by the sub-queue's buffer share, by the port.
    drops: u64,
    tx_pkts: u64,
    tx_bytes: u64,
    /// Packet limit and byte limit of its buffer share.
    limit_pkts: u32,
    limit_bytes: u64,
}

/// The module: VCP's router and RED, each on its sub-queue, and the scheduler between them.
#[derive(Clone, Debug)]
pub struct SubQueues {
    share: [f64; 2],
    vcp: VcpRouter,
    red: Red,
    drr: Drr,
    books: [Books; 2],
    /// The port's limits, for the buffer shares (set from the first view: the port's are fixed).
    limits_set: bool,
}

impl SubQueues {
    /// VCP's sub-queue gets `p.vcp_share` of the link and the buffer, RED's the rest.
    pub fn new(p: &CoexistParams, vcp: VcpRouter, red: Red) -> SubQueues {
        let share = [p.vcp_share, 1.0 - p.vcp_share];
        SubQueues {
            share,
            vcp,
            red,
            drr: Drr::new(&share, p.quantum as f64),
            books: [
                Books { idle_since: Some(0), ..Books::default() },
                Books { idle_since: Some(0), ..Books::default() },
            ],
            limits_set: false,
        }
    }

    /// The VCP sub-queue's load-factor estimator.
    pub fn estimator(&self) -> &LoadFactor {
        self.vcp.estimator()
    }

    /// RED's state.
    pub fn red(&self) -> &Red {
        &self.red
    }

    /// Packets and bytes waiting in sub-queue `q`.
    pub fn queue(&self, q: usize) -> (u32, u64) {
        (self.books[q].pkts, self.books[q].bytes)
    }

    /// Packets of sub-queue `q` dropped so far (by its controller, its buffer share or the port).
    pub fn drops(&self, q: usize) -> u64 {
        self.books[q].drops
    }

    /// The capacity sub-queue `q`'s controller works against: its share of the link, b/s.
    pub fn capacity_of(&self, q: usize, port: &PortView) -> f64 {
        self.share[q] * port.capacity_bps
    }

    /// Sub-queue `q` as its controller sees it: its own queue, idle time and share of the link.
    fn view_of(&self, q: usize, now: Time, port: &PortView) -> PortView {
        let b = &self.books[q];
        PortView {
            queue_pkts: b.pkts,
            queue_bytes: b.bytes,
            capacity_bps: self.capacity_of(q, port),
            limit_pkts: b.limit_pkts,
            limit_bytes: b.limit_bytes,
            idle_since: b.idle_since.filter(|&t| now >= t),
            ..*port
        }
    }

    fn set_limits(&mut self, port: &PortView) {
        if self.limits_set {
            return;
        }
        for (b, w) in self.books.iter_mut().zip(self.share) {
            b.limit_pkts =
                if port.limit_pkts == u32::MAX { u32::MAX } else { ((port.limit_pkts as f64 * w) as u32).max(1) };
            b.limit_bytes =
                if port.limit_bytes == u64::MAX { u64::MAX } else { ((port.limit_bytes as f64 * w) as u64).max(1) };
        }
        self.limits_set = true;
    }
}

impl RouterModule for SubQueues {
    fn name(&self) -> &'static str {
        "vcp-red"
    }

    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, port: &PortView) -> Verdict {
        self.set_limits(port);
        let q = sub_queue_of(pkt);
        let view = self.view_of(q, now, port);
        let verdict =
            if q == VCP { self.vcp.on_arrival(now, pkt, &view) } else { self.red.on_arrival(now, pkt, &view) };
        if verdict == Verdict::Drop {
            self.books[q].drops += 1;
            return Verdict::Drop;
        }
        // A packet that goes straight onto an idle link never waits (the port's rule).
        let waits = port.idle_since.is_none();
        let b = &mut self.books[q];
        if waits && (b.pkts + 1 > b.limit_pkts || b.bytes + pkt.size as u64 > b.limit_bytes) {
            b.drops += 1;
            if q == RED {
                self.red.on_buffer_drop(now, pkt, &view);
            }
            return Verdict::Drop;
        }
        b.pkts += 1;
        b.bytes += pkt.size as u64;
        b.idle_since = None;
        verdict
    }

    fn on_buffer_drop(&mut self, now: Time, pkt: &Packet, port: &PortView) {
        let q = sub_queue_of(pkt);
        let b = &mut self.books[q];
        b.pkts -= 1;
        b.bytes -= pkt.size as u64;
        b.drops += 1;
        if b.pkts == 0 {
            b.idle_since = Some(now);
        }
        if q == RED {
            let view = self.view_of(q, now, port);
            self.red.on_buffer_drop(now, pkt, &view);
        }
    }

    fn on_departure(&mut self, now: Time, pkt: &mut Packet, port: &PortView) -> bool {
        let q = sub_queue_of(pkt);
        let b = &mut self.books[q];
        b.pkts -= 1;
        b.bytes -= pkt.size as u64;
        b.tx_pkts += 1;
        b.tx_bytes += pkt.size as u64;
        if b.pkts == 0 {
            // Empty once this packet's last bit is on the link.
            b.idle_since = Some(now + (pkt.size as f64 * 8.0 * NS_PER_SEC as f64 / port.capacity_bps).ceil() as Time);
        }
        if q == VCP {
            let view = self.view_of(q, now, port);
            self.vcp.on_departure(now, pkt, &view)
        } else {
            false
        }
    }

    fn next_tick(&self) -> Option<Time> {
        self.vcp.next_tick()
    }

    fn on_tick(&mut self, now: Time, port: &PortView) {
        let view = self.view_of(VCP, now, port);
        self.vcp.on_tick(now, &view);
    }

    fn sub_queues(&self) -> usize {
        2
    }

    fn sub_queue(&self, pkt: &Packet) -> usize {
        sub_queue_of(pkt)
    }

    fn pick(&mut self, _now: Time, heads: &[Option<u32>]) -> usize {
        self.drr.pick(heads)
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        let [v, r] = &self.books;
        out.put("vcp_queue_pkts", "packets", MetricValue::Gauge(v.pkts as f64));
        out.put("red_queue_pkts", "packets", MetricValue::Gauge(r.pkts as f64));
        out.put("vcp_rho", "", MetricValue::Gauge(self.vcp.estimator().rho()));
        out.put("red_avg", "packets", MetricValue::Gauge(self.red.avg()));
        out.put("vcp_drops", "packets", MetricValue::Count(v.drops));
        out.put("red_drops", "packets", MetricValue::Count(r.drops));
        out.put("vcp_tx_bytes", "bytes", MetricValue::Count(v.tx_bytes));
        out.put("red_tx_bytes", "bytes", MetricValue::Count(r.tx_bytes));
        out.put("vcp_marks", "packets", MetricValue::Count(self.vcp.marks()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::RedParams;
    use crate::coexist::CoexistParams;
    use crate::packet::{Kind, OuterIp, TcpHeader};
    use crate::time::NS_PER_MS;
    use crate::vcp::{LoadFactor, LoadFactorParams};

    const MS: Time = NS_PER_MS;

    fn pkt(e: u8) -> Packet {
        let mut p = Packet::tcp(1, Kind::Data, 1000, 960, TcpHeader::default());
        p.ecn = e;
        p
    }

    /// A module at share `w`, γ = 1, t_p = 100 ms, t_q = 50 ms, phase 0, and RED with thresholds
    /// 5 / 15 packets and w_q = 0.5 (so its average follows its queue in a few arrivals).
    fn module(w: f64) -> SubQueues {
        let lf = LoadFactorParams { t_p: 0.1, t_q: 0.05, gamma: 1.0, ..Default::default() };
        let red = RedParams { min_th: 5.0, max_th: 15.0, w_q: 0.5, ..Default::default() };
        let p = CoexistParams { vcp_share: w, vcp: lf.clone(), ..Default::default() };
        let vcp = VcpRouter::with_estimator(LoadFactor::with_phase(&lf, 0, 0));
        SubQueues::new(&p, vcp, Red::new(red, crate::rng::SimRng::for_component(1, "t")).unwrap())
    }

    /// A busy 8 Mb/s port (1e6 B/s) with a 20-packet buffer.
    fn busy() -> PortView {
        PortView { capacity_bps: 8e6, limit_pkts: 20, limit_bytes: u64::MAX, idle_since: None, ..Default::default() }
    }

    #[test]
    fn ecn_capable_packets_are_vcps_and_the_rest_red_s() {
        for (e, q) in [(ecn::NOT_ECT, RED), (ecn::ECT1, VCP), (ecn::ECT0, VCP), (ecn::CE, VCP)] {
            assert_eq!(sub_queue_of(&pkt(e)), q, "ecn {e:02b}");
        }
        let mut ack = Packet::tcp(1, Kind::Ack, 40, 0, TcpHeader::default());
        assert_eq!(sub_queue_of(&ack), RED, "a pure ACK (Not-ECT) is TCP's");
        ack.ecn = ecn::ECT1;
        assert_eq!(sub_queue_of(&ack), VCP);
        // Inside an IPsec tunnel the router sees the outer bits only.
        let mut tunnelled = pkt(ecn::NOT_ECT);
        tunnelled.outer = Some(OuterIp { tunnel: 1, ecn: ecn::ECT1, ip_id: 0 });
        assert_eq!(sub_queue_of(&tunnelled), VCP);
        let m = module(0.5);
        assert_eq!((m.sub_queues(), m.sub_queue(&pkt(ecn::ECT1)), m.sub_queue(&pkt(0))), (2, VCP, RED));
    }

    #[test]
    fn the_link_splits_by_the_share_between_backlogged_sub_queues() {
        // Both sub-queues always backlogged with 1000-byte packets: DRR gives VCP 30 % of the bytes.
        let mut m = module(0.3);
        let mut sent = [0u64; 2];
        for _ in 0..10_000 {
            sent[m.pick(0, &[Some(1000), Some(1000)])] += 1000;
        }
        let share = sent[VCP] as f64 / (sent[VCP] + sent[RED]) as f64;
        assert!((share - 0.3).abs() < 0.001, "VCP's share {share}");
        // RED's sub-queue idle: VCP gets the whole link (work-conserving).
        assert!((0..100).all(|_| m.pick(0, &[Some(1000), None]) == VCP));
    }

    #[test]
    fn vcps_load_factor_is_against_its_share_and_counts_only_its_packets() {
        // Share 0.25 of 1e6 B/s: 25 000 B of VCP arrivals in a 100 ms interval is ρ = 1 on the
        // share (0.25 against the whole link); 50 000 B of TCP arrivals in the same interval add
        // nothing to λ.
        let mut m = module(0.25);
        let port = PortView { idle_since: Some(0), ..busy() };
        m.on_tick(0, &port);
        for _ in 0..25 {
            let mut p = pkt(ecn::ECT1);
            assert_eq!(m.on_arrival(MS, &mut p, &port), Verdict::Forward);
            m.on_departure(MS, &mut p, &port);
        }
        for _ in 0..50 {
            let mut p = pkt(ecn::NOT_ECT);
            m.on_arrival(MS, &mut p, &port);
            m.on_departure(MS, &mut p, &port);
        }
        m.on_tick(50 * MS, &port);
        m.on_tick(100 * MS, &port);
        assert!((m.estimator().rho() - 1.0).abs() < 1e-12, "ρ {}", m.estimator().rho());
        assert_eq!(m.estimator().code(), ecn::CE, "ρ = 1: overload");
        // ... which a departing VCP packet now carries; a TCP packet is left alone.
        let mut v = pkt(ecn::ECT1);
        m.on_arrival(101 * MS, &mut v, &port);
        assert!(m.on_departure(101 * MS, &mut v, &port));
        assert_eq!(v.ecn, ecn::CE);
        let mut t = pkt(ecn::NOT_ECT);
        m.on_arrival(101 * MS, &mut t, &port);
        assert!(!m.on_departure(101 * MS, &mut t, &port));
        assert_eq!(t.ecn, ecn::NOT_ECT);
        // The next interval, 12 500 B with the one above: ρ = 0.5 on the share.
        for size in [1000; 11].into_iter().chain([500]) {
            let mut p = Packet { size, ..pkt(ecn::ECT1) };
            m.on_arrival(102 * MS, &mut p, &port);
            m.on_departure(102 * MS, &mut p, &port);
        }
        m.on_tick(150 * MS, &port);
        m.on_tick(200 * MS, &port);
        assert!((m.estimator().rho() - 0.5).abs() < 1e-12, "ρ {}", m.estimator().rho());
    }

    #[test]
    fn vcps_queue_term_is_its_own_sub_queue() {
        // 10 VCP packets (10 000 B) wait through a whole interval with 40 TCP packets: A2's q_l
        // follows the 10 000 B, not the port's 50 000.
        let mut m = module(0.5);
        let port = busy();
        m.on_tick(0, &port);
        for _ in 0..10 {
            m.on_arrival(MS, &mut pkt(ecn::ECT1), &port);
        }
        for _ in 0..40 {
            m.on_arrival(MS, &mut pkt(ecn::NOT_ECT), &port);
        }
        assert_eq!(m.queue(VCP), (10, 10_000), "VCP holds its share of the 20-packet buffer");
        assert!(m.queue(RED).0 >= 5, "TCP packets wait too: {:?}", m.queue(RED));
        m.on_tick(50 * MS, &port);
        assert!((m.estimator().q_l() - 0.125 * 10_000.0).abs() < 1e-9, "q_l {}", m.estimator().q_l());
    }

    #[test]
    fn reds_average_follows_its_own_sub_queue() {
        let mut m = module(0.5);
        let port = busy();
        // Nine VCP packets waiting do not move RED's average.
        for _ in 0..9 {
            m.on_arrival(MS, &mut pkt(ecn::ECT1), &port);
        }
        m.on_arrival(MS, &mut pkt(ecn::NOT_ECT), &port);
        assert_eq!(m.red().avg(), 0.0);
        // RED's own queue of 1, 2, 3 ...: avg = 0.5·avg + 0.5·q, below min_th 5 no drop.
        let mut avg = 0.0;
        for q in 1..6u32 {
            assert_eq!(m.on_arrival(MS, &mut pkt(ecn::NOT_ECT), &port), Verdict::Forward);
            avg = 0.5 * avg + 0.5 * q as f64;
            assert!((m.red().avg() - avg).abs() < 1e-12, "q {q}: {} vs {avg}", m.red().avg());
        }
    }

    #[test]
    fn each_sub_queue_holds_its_share_of_the_buffer() {
        // A 20-packet buffer at share 0.3: VCP holds 6 waiting packets, RED 14; a seventh VCP
        // arrival is the module's drop, counted against VCP. On an idle link nothing waits.
        let mut m = module(0.3);
        let port = PortView { limit_pkts: 20, ..busy() };
        let v: Vec<Verdict> = (0..7).map(|_| m.on_arrival(MS, &mut pkt(ecn::ECT1), &port)).collect();
        assert_eq!(v[..6], [Verdict::Forward; 6]);
        assert_eq!(v[6], Verdict::Drop);
        assert_eq!((m.queue(VCP).0, m.drops(VCP), m.drops(RED)), (6, 1, 0));
        let red_params = RedParams { min_th: 100.0, max_th: 200.0, ..Default::default() };
        let mut m = SubQueues::new(
            &CoexistParams { vcp_share: 0.3, ..Default::default() },
            VcpRouter::with_estimator(LoadFactor::with_phase(&LoadFactorParams::default(), 0, 0)),
            Red::new(red_params, crate::rng::SimRng::for_component(1, "t")).unwrap(),
        );
        let v: Vec<Verdict> = (0..15).map(|_| m.on_arrival(MS, &mut pkt(ecn::NOT_ECT), &port)).collect();
        assert_eq!(v.iter().filter(|&&x| x == Verdict::Drop).count(), 1);
        assert_eq!((m.queue(RED).0, m.drops(RED)), (14, 1));
        // The port's tail drop of an admitted packet takes it off the sub-queue's books.
        m.on_buffer_drop(MS, &pkt(ecn::NOT_ECT), &port);
        assert_eq!((m.queue(RED).0, m.drops(RED)), (13, 2));
    }
}
