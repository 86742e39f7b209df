//! The JetMax router module of one output port l (docs/PROTOCOLS.md §7 [reconstructed]).
//!
//! ```text
//! on_arrival(p):  Y += wire ; if p.cur_id in {l, none}: { S += wire ; Ninv += p.ipt }   # 3 additions
//! every Δ:        y = Y/Δ ; b = S/Δ ; N = Ninv/Δ            # packets with ipt > Δ: below
//!                 F = (S == 0 and y < γC) ? +inf : max(F_min, (γC − (y − b))/max(N, 1))
//! on_departure(p): if F < p.feedback: p.feedback = F ; p.fb_id = l
//! ```
//!
//! - **Arrivals.** Y counts every arriving packet's wire bytes, whatever its protocol and
//!   direction, including those the buffer then drops (docs/PROTOCOLS.md §1 router rules). S and
//!   Ninv count forward JetMax data whose sender names this port, or no port yet, as its
//!   bottleneck. That is the whole per-packet arithmetic: one addition for other packets,
//!   three for these, written once over [`Arith`] ([`arrival`]) and counted on the code that
//!   runs when `count_ops` is set. The fast path also compares the ipt with Δ and keeps the
//!   largest ipt of the slow packets (comparisons, not arithmetic: [`crate::xcc::ops`] counts
//!   additions, multiplications and divisions only).
//! - **Flow count.** A flow sending steadily at x puts Δ·x/s packets of ipt s/x into an
//!   interval: Σipt = Δ, one flow whatever its rate (§7; that is what makes J7).
//! - **Slow flows** [reconstructed, `window = "ipt"`]. §7's sums over one Δ assume every
//!   counted flow sends at least one packet per Δ. A flow that starts at one packet per RTT
//!   (RTT > Δ) does not: in the intervals between its packets S = 0, so F = +inf, and the
//!   packet that follows departs with the +inf of an interval that did not contain it. A lone
//!   flow then never receives a finite F and stays at 1 pkt/RTT for ever (`window = "delta"`
//!   reproduces this; racc-sim test `literal_delta_window_starves_a_lone_starting_flow`). So a
//!   counted packet whose ipt exceeds Δ goes to a second pair of sums (S', Ninv'): the same
//!   one addition each, chosen by one comparison. Fast packets are §7's one-Δ sums. Slow ones
//!   are summed over the last m intervals, m the largest j such that interval j back (j = 1:
//!   the one just ended) holds a slow packet whose ipt still reaches the present, ipt ≥ (j −
//!   1)Δ, and divided by D = max(mΔ, the largest such ipt): a packet of ipt t stands for its
//!   flow over t, so one slow flow counts 1 (1.67 in the one interval in t/Δ where its previous
//!   packet is still in the window: F errs low, never high). With every counted flow at one
//!   packet per Δ or more this is §7 exactly:
//!   ```text
//!   u = (Y − S − S')/Δ                        # traffic of flows bottlenecked elsewhere, last Δ
//!   b = S/Δ + ΣS'/D ;  N = Ninv/Δ + ΣNinv'/D ;  y = u + b
//!   ```
//!   The ring holds `max_window`/Δ intervals (2 s by default), allocated when the port is
//!   built; the per-tick work is O(m). The sender's ipt is the time its packet adds to the
//!   flow's announced presence (`rate.rs`), so a flow that speeds up does not count twice.
//! - **First tick** at a phase drawn uniformly in [0, Δ) from the port's stream
//!   (docs/PROTOCOLS.md §1); it only opens the first interval. Until the first full interval
//!   F = +inf: nothing is known to constrain.
//! - **Feedback** on departure, to forward data, SYN and REF packets with a JetMax header
//!   (docs/PROTOCOLS.md §1: rate protocols take the min along the path): F in B/s of wire,
//!   rounded to the u32 field, 0xFFFF_FFFF for +inf (which never lowers anything).
//!   Returns `false`: lowering feedback is not an ECN mark.
//! - **F_min** is `f_min` packets/s of the port's typical packet size
//!   (`PortView::mean_pkt_size`, the scenario's packet size).

use super::params::{JetMaxRouterParams, Window};
use super::NO_ID;
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{CongHeader, Direction, Kind, Packet};
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::{secs, Dur, Time};
use crate::xcc::ops::{self, Arith, Counted, OpCounts};

/// How an arriving packet counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Not counted here (another protocol, another bottleneck, not forward data): Y only.
    Other,
    /// Counted, ipt ≤ Δ: S and Ninv.
    Fast,
    /// Counted, ipt > Δ: S' and Ninv'.
    Slow,
}

/// Index of Y, S, Ninv, S', Ninv' in an interval's sums.
const Y: usize = 0;
const S: usize = 1;
const NINV: usize = 2;
const S_SLOW: usize = 3;
const NINV_SLOW: usize = 4;

/// The per-packet arithmetic: `[Y, S, Ninv, S', Ninv']` after a packet of `wire` bytes and
/// inter-packet time `ipt` (ns) arrives. Three additions for a counted packet, one otherwise.
#[inline]
pub fn arrival<N: Arith>(sums: [N; 5], wire: N, ipt: N, class: Class) -> [N; 5] {
    let [y, s, ninv, s_slow, ninv_slow] = sums;
    match class {
        Class::Other => [y + wire, s, ninv, s_slow, ninv_slow],
        Class::Fast => [y + wire, s + wire, ninv + ipt, s_slow, ninv_slow],
        Class::Slow => [y + wire, s, ninv, s_slow + wire, ninv_slow + ipt],
    }
}

/// §7's fair share in B/s, given γC (B/s), the arrival rate y and the rate b of the flows
/// counted here (B/s), the flow count N, whether S was 0, and F_min (B/s): +inf when nobody
/// is bottlenecked here and the link is below γC, else max(F_min, (γC − (y − b))/max(N, 1)).
#[inline]
pub fn fair_share(gamma_c: f64, y: f64, b: f64, n: f64, s_zero: bool, f_min: f64) -> f64 {
    if s_zero && y < gamma_c {
        f64::INFINITY
    } else {
        f_min.max((gamma_c - (y - b)) / n.max(1.0))
    }
}

/// A rate in B/s as the header's u32 field: +inf (and anything beyond the field) is
/// 0xFFFF_FFFF, "no limit"; a finite rate is rounded and kept below that.
#[inline]
pub fn encode_rate(f: f64) -> u32 {
    if f.is_nan() || f >= (u32::MAX - 1) as f64 {
        if f.is_finite() {
            u32::MAX - 1
        } else {
            u32::MAX
        }
    } else {
        f.round().max(1.0) as u32
    }
}

/// One control interval's sums.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Interval {
    /// [Y, S, Ninv, S', Ninv']: bytes, bytes, ns, bytes, ns.
    sums: [f64; 5],
    /// The largest ipt (ns) of a slow packet.
    max_ipt: u32,
}

/// The JetMax router module.
#[derive(Clone, Debug)]
pub struct JetMaxRouter {
    id: u16,
    p: JetMaxRouterParams,
    delta: Dur,
    next_tick: Time,
    /// The tick at the phase has passed: the running interval is a full one.
    opened: bool,
    /// Packets with a larger ipt (ns) count as slow (Δ; never with `window = "delta"`).
    slow_above: u32,
    cur: Interval,
    /// Past intervals, newest at `head - 1` (mod len); `filled` of them valid.
    ring: Vec<Interval>,
    head: usize,
    filled: usize,
    /// F, B/s (+inf: unconstrained), and as the header field.
    f: f64,
    f_wire: u32,
    // The last interval's estimates.
    y: f64,
    b: f64,
    n: f64,
    window: Dur,
    ticks: u64,
    stamps: u64,
    ops: OpCounts,
    ops_packets: u64,
}

impl JetMaxRouter {
    /// A module for the port whose JetMax identity is `id` (nonzero), first tick at a phase
    /// drawn uniformly in [0, Δ) from `rng`. `p` must be valid.
    pub fn new(p: &JetMaxRouterParams, id: u16, mut rng: SimRng) -> JetMaxRouter {
        let delta = secs(p.delta).max(1);
        let phase = rng.below(delta);
        JetMaxRouter::with_phase(p, id, phase)
    }

    /// A module whose first tick is at `phase` (tests).
    pub fn with_phase(p: &JetMaxRouterParams, id: u16, phase: Time) -> JetMaxRouter {
        assert_ne!(id, NO_ID, "0 means no router");
        let delta = secs(p.delta).max(1);
        let len = match p.window {
            Window::Delta => 1,
            Window::Ipt => (secs(p.max_window) / delta).max(1) as usize,
        };
        JetMaxRouter {
            id,
            p: p.clone(),
            delta,
            next_tick: phase,
            opened: false,
            slow_above: match p.window {
                Window::Delta => u32::MAX,
                Window::Ipt => delta.min(u32::MAX as u64) as u32,
            },
            cur: Interval::default(),
            ring: vec![Interval::default(); len],
            head: 0,
            filled: 0,
            f: f64::INFINITY,
            f_wire: u32::MAX,
            y: 0.0,
            b: 0.0,
            n: 0.0,
            window: 0,
            ticks: 0,
            stamps: 0,
            ops: OpCounts::default(),
            ops_packets: 0,
        }
    }

    pub fn id(&self) -> u16 {
        self.id
    }

    /// The fair share F, B/s (+inf: unconstrained).
    pub fn fair_share(&self) -> f64 {
        self.f
    }

    /// The last interval's (y B/s, b B/s, N, slow-flow window D in ns; Δ without slow flows).
    pub fn estimates(&self) -> (f64, f64, f64, Dur) {
        (self.y, self.b, self.n, self.window)
    }

    /// Arithmetic counted so far (with `count_ops`) and the packets it ran for.
    pub fn op_counts(&self) -> (OpCounts, u64) {
        (self.ops, self.ops_packets)
    }

    /// The interval `j` back (1 = the newest stored).
    fn back(&self, j: usize) -> &Interval {
        let len = self.ring.len();
        &self.ring[(self.head + len - j) % len]
    }

    /// The slow flows' window: how many stored intervals (0 without slow packets that still
    /// reach the present) and the largest ipt among them.
    fn slow_window(&self) -> (usize, u32) {
        let (mut m, mut max_ipt) = (0, 0);
        for j in 1..=self.filled {
            let ipt = self.back(j).max_ipt;
            if ipt > 0 && ipt as u64 >= (j as u64 - 1) * self.delta {
                m = j;
            }
        }
        for j in 1..=m {
            max_ipt = max_ipt.max(self.back(j).max_ipt);
        }
        (m, max_ipt)
    }
}

impl RouterModule for JetMaxRouter {
    fn name(&self) -> &'static str {
        "jetmax"
    }

    #[inline]
    fn on_arrival(&mut self, _now: Time, pkt: &mut Packet, _port: &PortView) -> Verdict {
        let (class, ipt) = match pkt.cong {
            CongHeader::JetMax { cur_id, ipt_ns, .. }
                if pkt.kind == Kind::Data
                    && pkt.dir == Direction::Forward
                    && (cur_id == self.id || cur_id == NO_ID) =>
            {
                if ipt_ns > self.slow_above {
                    if ipt_ns > self.cur.max_ipt {
                        self.cur.max_ipt = ipt_ns;
                    }
                    (Class::Slow, ipt_ns)
                } else {
                    (Class::Fast, ipt_ns)
                }
            }
            _ => (Class::Other, 0),
        };
        let wire = pkt.size as f64;
        if self.p.count_ops {
            let sums = self.cur.sums.map(Counted);
            let (after, done) = ops::count(|| arrival(sums, Counted(wire), Counted(ipt as f64), class));
            self.cur.sums = after.map(f64::from);
            self.ops = self.ops + done;
            self.ops_packets += 1;
        } else {
            self.cur.sums = arrival(self.cur.sums, wire, ipt as f64, class);
        }
        Verdict::Forward
    }

    #[inline]
    fn on_departure(&mut self, _now: Time, pkt: &mut Packet, _port: &PortView) -> bool {
        if pkt.dir != Direction::Forward || !matches!(pkt.kind, Kind::Data | Kind::Syn | Kind::Ref) {
            return false;
        }
        if let CongHeader::JetMax { feedback, fb_id, .. } = &mut pkt.cong {
            if self.f_wire < *feedback {
                *feedback = self.f_wire;
                *fb_id = self.id;
                self.stamps += 1;
            }
        }
        false
    }

    fn next_tick(&self) -> Option<Time> {
        Some(self.next_tick)
    }

    fn on_tick(&mut self, now: Time, port: &PortView) {
        if now < self.next_tick {
            return;
        }
        self.next_tick = self.next_tick.saturating_add(self.delta);
        let ended = std::mem::take(&mut self.cur);
        if !self.opened {
            self.opened = true;
            return;
        }
        self.ticks += 1;
        let len = self.ring.len();
        self.ring[self.head] = ended;
        self.head = (self.head + 1) % len;
        self.filled = (self.filled + 1).min(len);
        let (m, max_ipt) = self.slow_window();
        let (mut s_slow, mut ninv_slow) = (0.0, 0.0);
        for j in 1..=m {
            let x = self.back(j).sums;
            s_slow += x[S_SLOW];
            ninv_slow += x[NINV_SLOW];
        }
        self.window = if m == 0 { self.delta } else { (m as Dur * self.delta).max(max_ipt as Dur) };
        let (delta_s, d_s) = (self.delta as f64 * 1e-9, self.window as f64 * 1e-9);
        let last = ended.sums;
        let u = (last[Y] - last[S] - last[S_SLOW]) / delta_s;
        self.b = last[S] / delta_s + s_slow / d_s;
        self.y = u + self.b;
        self.n = last[NINV] / self.delta as f64 + ninv_slow / self.window as f64;
        let s_zero = last[S] == 0.0 && s_slow == 0.0;
        let gamma_c = self.p.gamma * port.capacity_bps / 8.0;
        let f_min = self.p.f_min * port.mean_pkt_size.max(1) as f64;
        self.f = fair_share(gamma_c, self.y, self.b, self.n, s_zero, f_min);
        self.f_wire = encode_rate(self.f);
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("router_id", "", MetricValue::Gauge(self.id as f64));
        // +inf (nobody to constrain) is reported as absent, with the flag below.
        if self.f.is_finite() {
            out.put("fair_share_bps", "bit/s", MetricValue::Gauge(self.f * 8.0));
        }
        out.put("unconstrained", "", MetricValue::Flag(!self.f.is_finite()));
        out.put("flow_count", "flows", MetricValue::Gauge(self.n));
        out.put("arrival_bps", "bit/s", MetricValue::Gauge(self.y * 8.0));
        out.put("bottlenecked_bps", "bit/s", MetricValue::Gauge(self.b * 8.0));
        out.put("slow_window_s", "s", MetricValue::Gauge(self.window as f64 * 1e-9));
        out.put("feedback_stamps", "packets", MetricValue::Count(self.stamps));
        if self.p.count_ops {
            self.ops.report(self.ops_packets, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricList;
    use crate::packet::TcpHeader;
    use crate::time::NS_PER_MS;

    const MS: Time = NS_PER_MS;

    /// 8 Mb/s = 1e6 B/s, 1000-byte packets: γC = 950 000 B/s at γ = 0.95, F_min = 1000 B/s.
    fn port() -> PortView {
        PortView {
            capacity_bps: 8e6,
            mean_pkt_size: 1000,
            limit_pkts: 100,
            limit_bytes: u64::MAX,
            ..Default::default()
        }
    }

    fn router(p: JetMaxRouterParams) -> JetMaxRouter {
        let mut r = JetMaxRouter::with_phase(&p, 7, 0);
        r.on_tick(0, &port()); // opens the first interval
        r
    }

    fn data(cur_id: u16, ipt_ns: u32) -> Packet {
        let mut p = Packet::tcp(1, Kind::Data, 1000, 940, TcpHeader::default());
        p.cong = CongHeader::JetMax { rtt_us: 0, ipt_ns, cur_id, fb_id: 0, feedback: u32::MAX };
        p
    }

    fn arrive(r: &mut JetMaxRouter, pkts: impl IntoIterator<Item = Packet>) {
        for mut p in pkts {
            assert_eq!(r.on_arrival(MS, &mut p, &port()), Verdict::Forward);
        }
    }

    #[test]
    fn the_interval_computation_against_hand_computed_values() {
        // Δ = 10 ms. Two flows counted here, 10 packets each of ipt 1 ms (Σipt = 20 ms, N = 2);
        // 30 packets of a flow bottlenecked elsewhere (cur_id 9); 5 non-JetMax packets.
        let mut r = router(JetMaxRouterParams::default());
        arrive(&mut r, (0..20).map(|_| data(7, 1_000_000)));
        arrive(&mut r, (0..30).map(|_| data(9, 333_333)));
        arrive(&mut r, (0..5).map(|_| Packet::tcp(2, Kind::Data, 1000, 960, TcpHeader::default())));
        r.on_tick(10 * MS, &port());
        let (y, b, n, w) = r.estimates();
        // y = 55 000 B / 10 ms = 5.5e6 B/s; b = 20 000 B / 10 ms = 2e6 B/s; N = 20 ms / 10 ms = 2.
        assert!((y - 5.5e6).abs() < 1e-6 && (b - 2e6).abs() < 1e-6 && (n - 2.0).abs() < 1e-12, "{y} {b} {n}");
        assert_eq!(w, 10 * MS);
        // y ≥ γC: F = max(F_min, (950 000 − 3.5e6)/2) = F_min = 1000 B/s.
        assert_eq!(r.fair_share(), 1000.0);
        // Next interval: 4 counted packets of ipt 2.5 ms (N = 1), 2 packets elsewhere-bottlenecked:
        // y = 6000 B/10 ms = 600 000, b = 400 000 → F = (950 000 − 200 000)/1 = 750 000 B/s.
        arrive(&mut r, (0..4).map(|_| data(NO_ID, 2_500_000)));
        arrive(&mut r, (0..2).map(|_| data(3, 5_000_000)));
        r.on_tick(20 * MS, &port());
        assert!((r.fair_share() - 750_000.0).abs() < 1e-6, "{}", r.fair_share());
        // N < 1 is floored at 1: one counted packet of ipt 4 ms (N = 0.4), y = b = 100 000:
        // F = 950 000 / 1.
        arrive(&mut r, [data(7, 4_000_000)]);
        r.on_tick(30 * MS, &port());
        assert!((r.estimates().2 - 0.4).abs() < 1e-12);
        assert!((r.fair_share() - 950_000.0).abs() < 1e-6);
        // S = 0 and y < γC (5 packets bottlenecked elsewhere: y = 500 000): +inf. S = 0 and
        // y ≥ γC (1000 such packets): max(F_min, γC − y) = F_min.
        arrive(&mut r, (0..5).map(|_| data(3, 100_000)));
        r.on_tick(40 * MS, &port());
        assert_eq!(r.fair_share(), f64::INFINITY);
        assert_eq!(r.f_wire, u32::MAX);
        arrive(&mut r, (0..1000).map(|_| data(3, 10_000)));
        r.on_tick(50 * MS, &port());
        assert_eq!(r.fair_share(), 1000.0);
    }

    #[test]
    fn fair_share_formula() {
        assert_eq!(fair_share(100.0, 50.0, 0.0, 0.0, true, 1.0), f64::INFINITY);
        assert_eq!(fair_share(100.0, 100.0, 0.0, 0.0, true, 1.0), 1.0, "S = 0 but y ≥ γC");
        assert_eq!(fair_share(100.0, 80.0, 60.0, 3.0, false, 1.0), 80.0 / 3.0);
        assert_eq!(fair_share(100.0, 150.0, 10.0, 2.0, false, 1.0), 1.0, "floored at F_min");
        assert_eq!(fair_share(100.0, 30.0, 30.0, 0.5, false, 1.0), 100.0, "N floored at 1");
        assert_eq!(encode_rate(f64::INFINITY), u32::MAX);
        assert_eq!(encode_rate(1e12), u32::MAX - 1);
        assert_eq!(encode_rate(1234.4), 1234);
        assert_eq!(encode_rate(0.2), 1);
    }

    #[test]
    fn three_additions_per_counted_packet_one_otherwise() {
        let p = JetMaxRouterParams { count_ops: true, ..Default::default() };
        let mut r = router(p);
        arrive(&mut r, (0..10).map(|_| data(7, 1000)));
        assert_eq!(r.op_counts(), (OpCounts { adds: 30, muls: 0, divs: 0 }, 10));
        arrive(&mut r, (0..4).map(|_| data(NO_ID, 1000)));
        arrive(&mut r, (0..6).map(|_| data(8, 1000)));
        assert_eq!(r.op_counts(), (OpCounts { adds: 30 + 12 + 6, muls: 0, divs: 0 }, 20));
        // Departures do no arithmetic; the counted path computes what the f64 path computes.
        let mut q = router(JetMaxRouterParams::default());
        arrive(&mut q, (0..10).map(|_| data(7, 1000)));
        arrive(&mut q, (0..4).map(|_| data(NO_ID, 1000)));
        arrive(&mut q, (0..6).map(|_| data(8, 1000)));
        assert_eq!(q.cur, r.cur);
        let mut list = MetricList::default();
        r.metrics(&mut list);
        assert_eq!(list.get("ops_adds"), Some(MetricValue::Count(48)));
        assert_eq!(list.get("ops_packets"), Some(MetricValue::Count(20)));
        assert_eq!(list.get("ops_muls"), Some(MetricValue::Count(0)));
        let mut list = MetricList::default();
        q.metrics(&mut list);
        assert_eq!(list.get("ops_adds"), None, "only reported when counting");
    }

    #[test]
    fn feedback_is_lowered_and_stamped_on_forward_data_syn_and_ref_only() {
        let mut r = router(JetMaxRouterParams::default());
        arrive(&mut r, (0..4).map(|_| data(7, 2_500_000)));
        r.on_tick(10 * MS, &port());
        let f = encode_rate(r.fair_share());
        assert_eq!(f, 950_000);
        let fb = |p: &Packet| match p.cong {
            CongHeader::JetMax { feedback, fb_id, .. } => (feedback, fb_id),
            _ => unreachable!(),
        };
        let mut p = data(7, 0);
        assert!(!r.on_departure(11 * MS, &mut p, &port()), "not an ECN mark");
        assert_eq!(fb(&p), (950_000, 7));
        // A lower value set upstream stays, with its id.
        let mut p = data(NO_ID, 0);
        p.cong = CongHeader::JetMax { rtt_us: 0, ipt_ns: 0, cur_id: 0, fb_id: 3, feedback: 5 };
        r.on_departure(11 * MS, &mut p, &port());
        assert_eq!(fb(&p), (5, 3));
        for kind in [Kind::Syn, Kind::Ref] {
            let mut p = data(NO_ID, 0);
            p.kind = kind;
            r.on_departure(11 * MS, &mut p, &port());
            assert_eq!(fb(&p), (950_000, 7), "{kind:?}");
        }
        for (kind, dir) in
            [(Kind::Ack, Direction::Return), (Kind::Fin, Direction::Forward), (Kind::Data, Direction::Return)]
        {
            let mut p = data(NO_ID, 0);
            p.kind = kind;
            p.dir = dir;
            r.on_departure(11 * MS, &mut p, &port());
            assert_eq!(fb(&p), (u32::MAX, 0), "{kind:?} {dir:?}");
        }
        let mut list = MetricList::default();
        r.metrics(&mut list);
        assert_eq!(list.get("feedback_stamps"), Some(MetricValue::Count(3)));
        assert_eq!(list.get("fair_share_bps"), Some(MetricValue::Gauge(950_000.0 * 8.0)));
        assert_eq!(list.get("unconstrained"), Some(MetricValue::Flag(false)));
    }

    #[test]
    fn arrivals_the_buffer_drops_still_count() {
        let mut r = router(JetMaxRouterParams::default());
        for _ in 0..10 {
            let mut p = data(7, 1_000_000);
            r.on_arrival(MS, &mut p, &port());
            r.on_buffer_drop(MS, &p, &port());
        }
        r.on_tick(10 * MS, &port());
        assert!((r.estimates().0 - 1e6).abs() < 1e-6);
    }

    #[test]
    fn a_flow_slower_than_one_packet_per_delta_stays_counted_in_the_ipt_window() {
        // One flow at 1 packet per 50 ms (ipt 50 ms), Δ = 10 ms: packets in intervals 1, 6, 11, ...
        let run = |window: Window| {
            let mut r = router(JetMaxRouterParams { window, ..Default::default() });
            let mut fs = Vec::new();
            for k in 0..20u64 {
                if k % 5 == 0 {
                    arrive(&mut r, [data(NO_ID, 50_000_000)]);
                }
                r.on_tick((k + 1) * 10 * MS, &port());
                fs.push((r.fair_share(), r.estimates().2, r.estimates().3));
            }
            fs
        };
        // §7 literally: F = +inf in 4 intervals of 5, which is what the next packet carries.
        let literal = run(Window::Delta);
        assert_eq!(literal.iter().filter(|(f, _, _)| f.is_infinite()).count(), 16);
        // The slow sums: always finite, N = 1 (the packet of ipt 50 ms stands for its flow over
        // D = 50 ms), 5/3 in the one interval of five whose 60 ms window still holds the
        // previous packet (errs low); F = γC/N.
        let ipt = run(Window::Ipt);
        for (k, &(f, n, w)) in ipt.iter().enumerate() {
            let want = if k % 5 == 0 && k > 0 { 100.0 / 60.0 } else { 1.0 };
            assert!((n - want).abs() < 1e-9, "interval {k}: N {n}");
            assert!((f - 950_000.0 / n).abs() < 1e-6, "interval {k}: F {f}");
            assert_eq!(w, if k % 5 == 0 && k > 0 { 60 * MS } else { 50 * MS });
        }
        // The flow speeds up (sender: ipt 0 while its announced presence lasts, then 1 ms per
        // packet): its last slow packet and its fast packets make one flow, not two.
        let mut r = router(JetMaxRouterParams::default());
        arrive(&mut r, [data(NO_ID, 50_000_000)]);
        r.on_tick(10 * MS, &port());
        for k in 2..=8u64 {
            let ipt = if k <= 5 { 0 } else { 1_000_000 };
            arrive(&mut r, (0..10).map(|_| data(7, ipt)));
            r.on_tick(k * 10 * MS, &port());
            let n = r.estimates().2;
            assert!((n - 1.0).abs() < 1e-9 || (k == 6 && (n - (1.0 + 50.0 / 60.0)).abs() < 1e-9), "k {k}: N {n}");
        }
        // A flow at ≥ 1 packet per Δ: the window is Δ exactly (§7).
        let mut r = router(JetMaxRouterParams::default());
        for k in 1..=5u64 {
            arrive(&mut r, (0..10).map(|_| data(7, 1_000_000)));
            r.on_tick(k * 10 * MS, &port());
            assert_eq!(r.estimates().3, 10 * MS);
        }
    }

    #[test]
    fn first_tick_has_a_random_phase_below_delta() {
        let p = JetMaxRouterParams::default();
        let phases: Vec<Time> = (0..8)
            .map(|i| JetMaxRouter::new(&p, 1, SimRng::for_component(i, "router/port0")).next_tick().unwrap())
            .collect();
        assert!(phases.iter().all(|&t| t < 10 * MS));
        assert!(phases.windows(2).any(|w| w[0] != w[1]));
        // The phase tick only opens the interval: F stays +inf.
        let mut r = JetMaxRouter::with_phase(&p, 1, 3 * MS);
        arrive(&mut r, (0..50).map(|_| data(1, 100_000)));
        r.on_tick(3 * MS, &port());
        assert_eq!(r.fair_share(), f64::INFINITY);
        assert_eq!(r.next_tick(), Some(13 * MS));
    }
}
