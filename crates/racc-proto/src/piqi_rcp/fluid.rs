//! The fluid check behind PIQI-RCP's design (router docs): the real router modules (PIQI-RCP's
//! and RCP's) driven in 1 ms steps by fluid flows. Each step every flow sends one "packet" of
//! rate·1 ms bytes carrying its RTT (propagation + queueing), the queue integrates y − C, ticks
//! run with the instantaneous queue, and a flow's rate is the R the router wrote one
//! propagation RTT earlier (rates are stamped at dequeue, so the queueing delay does not delay
//! feedback). A flow's SYN reaches the router at its start; its data follows one RTT later at
//! the SYN's rate, and from its second RTT on it follows R. 1 Gb/s, 1500-byte packets.

use super::{PiqiRouter, PiqiRouterParams};
use crate::packet::{CongHeader, Kind, Packet, TcpHeader};
use crate::rcp::{RcpRouter, RcpRouterParams, NO_LIMIT};
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule};
use crate::time::{secs, NS_PER_MS};

const C_BPS: f64 = 1e9;
const C: f64 = C_BPS / 8.0;
const PKT: f64 = 1500.0;
const DT: f64 = 1e-3;

#[derive(Clone, Copy)]
struct FluidFlow {
    rtt: f64,
    join: f64,
    leave: Option<f64>,
    /// A finite flow: it stops once it has sent this many bytes.
    bytes: Option<f64>,
}

fn flow(rtt: f64, join: f64) -> FluidFlow {
    FluidFlow { rtt, join, leave: None, bytes: None }
}

/// y (B/s), q (bytes) per step.
struct Trace {
    y: Vec<f64>,
    q: Vec<f64>,
}

impl Trace {
    fn at(t: f64) -> usize {
        (t / DT).round() as usize
    }
    fn peak_y(&self, from: f64) -> f64 {
        self.y[Trace::at(from)..].iter().cloned().fold(0.0, f64::max) / C
    }
    fn peak_q_pkts(&self, from: f64) -> f64 {
        self.q[Trace::at(from)..].iter().cloned().fold(0.0, f64::max) / PKT
    }
    /// Seconds from `from` until y stays within `tol` of `target` (B/s).
    fn settle(&self, from: f64, target: f64, tol: f64) -> f64 {
        let i0 = Trace::at(from);
        let last = (i0..self.y.len()).rev().find(|&i| (self.y[i] / target - 1.0).abs() > tol).unwrap_or(i0);
        (last - i0) as f64 * DT
    }
    /// First time from `from` at which y reaches `frac`·C.
    fn reach(&self, from: f64, frac: f64) -> Option<f64> {
        let i0 = Trace::at(from);
        (i0..self.y.len()).find(|&i| self.y[i] >= frac * C).map(|i| (i - i0) as f64 * DT)
    }
    /// max − min of y over [from, to], relative to `target`.
    fn swing(&self, from: f64, to: f64, target: f64) -> f64 {
        let s = &self.y[Trace::at(from)..Trace::at(to)];
        (s.iter().cloned().fold(0.0, f64::max) - s.iter().cloned().fold(f64::MAX, f64::min)) / target
    }
}

fn pkt(kind: Kind, size: f64, rtt: f64) -> Packet {
    let mut p = Packet::tcp(0, kind, size.round().max(1.0) as u32, 0, TcpHeader::default());
    p.cong = CongHeader::Rcp { rate: NO_LIMIT, rtt_us: (rtt * 1e6).round() as u32 };
    p
}

fn run(router: &mut dyn RouterModule, flows: &[FluidFlow], t_end: f64) -> Trace {
    let steps = (t_end / DT) as usize;
    let mut hist = Vec::with_capacity(steps);
    let mut r0 = vec![None; flows.len()];
    let mut sent = vec![0.0; flows.len()];
    let (mut q, mut tr) = (0.0, Trace { y: Vec::with_capacity(steps), q: Vec::with_capacity(steps) });
    let view = |q: f64| PortView {
        queue_bytes: q as u64,
        queue_pkts: (q / PKT) as u32,
        capacity_bps: C_BPS,
        mean_pkt_size: PKT as u32,
        ..Default::default()
    };
    for k in 0..steps {
        let (t, now) = (k as f64 * DT, k as u64 * NS_PER_MS);
        let v = view(q);
        for (i, f) in flows.iter().enumerate() {
            if r0[i].is_none() && t >= f.join {
                let mut syn = pkt(Kind::Syn, 52.0, 0.0);
                router.on_arrival(now, &mut syn, &v);
                router.on_departure(now, &mut syn, &v);
                let CongHeader::Rcp { rate, .. } = syn.cong else { unreachable!() };
                r0[i] = Some(rate as f64);
            }
        }
        let mut probe = pkt(Kind::Data, PKT, 0.1);
        router.on_departure(now, &mut probe, &v);
        let CongHeader::Rcp { rate, .. } = probe.cong else { unreachable!() };
        hist.push(rate as f64);
        let mut y = 0.0;
        for (i, f) in flows.iter().enumerate() {
            let Some(first) = r0[i] else { continue };
            let start = f.join + f.rtt;
            if t < start || f.leave.is_some_and(|l| t >= l) {
                continue;
            }
            let x = if t < start + f.rtt { first } else { hist[k - (f.rtt / DT).round() as usize] };
            let x = match f.bytes {
                Some(b) if sent[i] >= b => continue,
                Some(b) => x.min((b - sent[i]) / DT),
                None => x,
            };
            sent[i] += x * DT;
            let mut p = pkt(Kind::Data, x * DT, f.rtt + q / C);
            router.on_arrival(now, &mut p, &v);
            y += x;
        }
        q = (q + (y - C) * DT).max(0.0);
        tr.y.push(y);
        tr.q.push(q);
        let v = view(q);
        while let Some(tick) = router.next_tick().filter(|&n| n < now + NS_PER_MS) {
            router.on_tick(tick, &v);
        }
    }
    tr
}

fn piqi() -> PiqiRouter {
    PiqiRouter::with_phase(&PiqiRouterParams::default(), C_BPS, secs(0.003))
}

fn rcp() -> RcpRouter {
    RcpRouter::with_phase(&RcpRouterParams::default(), C_BPS, secs(0.003))
}

/// 1 → 11 flows at 50 ms (XCC-Linux's xcc-abrupt shape): ten join over `spread` s from 6 s.
fn abrupt(router: &mut dyn RouterModule, spread: f64) -> Trace {
    let mut f = vec![flow(0.05, 0.0)];
    f.extend((0..10).map(|i| flow(0.05, 6.0 + spread * i as f64 / 10.0)));
    run(router, &f, 12.0)
}

/// P2, written before measuring: when ten flows join one, PIQI-RCP's peak load and peak
/// queue are "far smaller" than RCP's (here: at most half), for joins 0.5 s apart in all and for
/// joins at one instant. XCC-Linux reports RCP at 300 % overshoot and ≈11 000 packets.
/// (Admission on traffic without the due cut fails the peak load on 1 ms steps: 2.06 vs 3.00 C,
/// 10.45 vs 11.00 C: each joiner is stamped with the old R until its traffic has shown.)
#[test]
fn p2_ten_joins_overshoot_far_less_than_rcp() {
    for spread in [0.5, 0.0] {
        let (tp, tr) = (abrupt(&mut piqi(), spread), abrupt(&mut rcp(), spread));
        let (py_p, py_r) = (tp.peak_y(6.0), tr.peak_y(6.0));
        let (pq_p, pq_r) = (tp.peak_q_pkts(6.0), tr.peak_q_pkts(6.0));
        let settle = tp.settle(6.0, 0.95 * C, 0.05);
        eprintln!(
            "joins over {spread} s: peak y/C PIQI {py_p:.2} RCP {py_r:.2}; peak queue PIQI {pq_p:.0} RCP {pq_r:.0} pkts; \
             PIQI within 5 % of γC after {settle:.2} s"
        );
        assert!(py_p <= 0.5 * py_r, "peak y/C: PIQI {py_p} vs RCP {py_r}");
        assert!(pq_p <= 0.5 * pq_r, "peak queue: PIQI {pq_p} vs RCP {pq_r}");
        assert!(settle < 2.0, "PIQI settles {settle} s after the joins");
    }
}

/// P8, written before measuring: after an abrupt change (one of five flows vanishes without a
/// FIN) the loop settles within 5 % of γC in the same number of RTTs whatever the delay (at most
/// 15 RTTs, from 10 ms to 1 s), overshoots γC by at most 10 %, and does not oscillate after
/// (swing under 2 %). The §8 loop's stability depends on RTT/Δ; this one's on K_i·τ/d0 only.
#[test]
fn p8_settling_in_rtts_does_not_depend_on_the_delay() {
    let mut rows = Vec::new();
    for (name, rtts) in [
        ("5 x 10 ms", vec![0.01; 5]),
        ("5 x 50 ms", vec![0.05; 5]),
        ("5 x 200 ms", vec![0.2; 5]),
        ("5 x 1 s", vec![1.0; 5]),
        ("3 x 30 ms + 3 x 200 ms", vec![0.03, 0.2, 0.03, 0.2, 0.03, 0.2]),
    ] {
        let m = rtts.iter().cloned().fold(0.0, f64::max);
        // Staggered starts (one per 2 RTTs), a long settle, then flow 0 vanishes.
        let mut fl: Vec<_> = rtts.iter().enumerate().map(|(i, &r)| flow(r, 2.0 * m * i as f64)).collect();
        let leave = (40.0 * m).max(6.0);
        fl[0].leave = Some(leave);
        let end = leave + (30.0 * m).max(3.0);
        let t = run(&mut piqi(), &fl, end);
        let target = 0.95 * C;
        let before = t.swing(leave - 1.0, leave, target);
        let settle = t.settle(leave, target, 0.05) / m;
        let over = t.peak_y(leave) * C / target;
        let tail = t.swing(end - 0.3 * (end - leave), end, target);
        rows.push(format!(
            "{name}: swing before {before:.3}, settle {settle:.1} RTTs, peak {over:.3} γC, tail swing {tail:.4}"
        ));
        assert!(before < 0.02 && tail < 0.02, "{}", rows.last().unwrap());
        assert!(settle <= 15.0 && over <= 1.10, "{}", rows.last().unwrap());
    }
    eprintln!("{}", rows.join("\n"));
}

/// P1, written before measuring: a lone 200 ms flow at 1 Gb/s reaches 90 % of C in under 1 s
/// under PIQI-RCP; under RCP it needs several seconds to reach 95 % (XCC-Linux ≈10 s,
/// docs/PROTOCOLS.md §6 ≈11 s: asserted as 3 to 20 s).
#[test]
fn p1_fill_much_faster_than_rcp() {
    let f = [flow(0.2, 0.0)];
    let tp = run(&mut piqi(), &f, 3.0).reach(0.0, 0.9);
    let tr = run(&mut rcp(), &f, 25.0).reach(0.0, 0.95);
    eprintln!("lone 200 ms flow: PIQI-RCP 90 % at {tp:?} s, RCP 95 % at {tr:?} s");
    assert!(tp.is_some_and(|t| t < 1.0), "{tp:?}");
    assert!(tr.is_some_and(|t| (3.0..20.0).contains(&t)), "{tr:?}");
}

/// The design's weak spot, measured and stated rather than hidden: flows that start at one
/// instant with a long RTT (five at 200 ms) are counted by their SYNs, but J fades over one d0
/// while their data takes one RTT to show, so N̂ can dip and R overshoot once. Asserted before
/// measuring: settled within 5 % of γC by 5 s, and a peak load below RCP's join overshoot
/// (3·C, `p2_ten_joins_overshoot_far_less_than_rcp`).
#[test]
fn simultaneous_long_rtt_starts_settle() {
    let f = vec![flow(0.2, 0.0); 5];
    let t = run(&mut piqi(), &f, 8.0);
    let (peak, q, settle) = (t.peak_y(0.0), t.peak_q_pkts(0.0), t.settle(0.0, 0.95 * C, 0.05));
    eprintln!("5 flows at 200 ms starting together: peak y/C {peak:.2}, peak queue {q:.0} pkts, within 5 % of γC after {settle:.2} s");
    assert!(settle < 5.0 && peak < 3.0, "peak {peak}, settle {settle}");
}

/// P6, written before measuring (XCC-Linux: PIQI-RCP "performs reasonably well" with mice; the
/// experiments' rule for that is utilisation ≥ 90 %): xcc-mice's load, one long 50 ms flow and
/// Poisson mice (5/s, Pareto shape 1.4, mean 100 packets) from 1 s, keeps the link at least
/// 90 % busy over 5-30 s with admission on traffic and the due cut (not the default: the
/// engine's P8 test fails with it at 12 ms). Printed beside
/// RCP's, admission on traffic without the due cut, and admission at the request (every
/// mouse's SYN halves the long flow's rate).
#[test]
fn p6_mice_do_not_cost_utilisation() {
    let mut rng = SimRng::for_component(1, "fluid-mice");
    let mut f = vec![flow(0.05, 0.0)];
    let (mut t, x_m) = (1.0, 100.0 * PKT * 0.4 / 1.4);
    while t < 30.0 {
        f.push(FluidFlow { bytes: Some(rng.pareto(x_m, 1.4)), ..flow(0.05, t) });
        t += rng.exponential(0.2);
    }
    // Served: C while a queue is left, else what arrived.
    let util = |tr: &Trace| {
        let i0 = Trace::at(5.0);
        let served: f64 = (i0..tr.y.len()).map(|i| if tr.q[i] > 0.0 { C } else { tr.y[i].min(C) }).sum();
        served / C / (tr.y.len() - i0) as f64
    };
    let with = |p: PiqiRouterParams| util(&run(&mut PiqiRouter::with_phase(&p, C_BPS, secs(0.003)), &f, 30.0));
    let up = with(PiqiRouterParams::default());
    let no_cut = with(PiqiRouterParams { due_cut: false, ..Default::default() });
    let at_request = with(PiqiRouterParams { admit_on_traffic: false, ..Default::default() });
    let ur = util(&run(&mut rcp(), &f, 30.0));
    eprintln!(
        "mice ({} of them): utilisation PIQI-RCP {up:.3} (no due cut {no_cut:.3}, admission at the request \
         {at_request:.3}), RCP {ur:.3}",
        f.len() - 1
    );
    assert!(up >= 0.90, "{up}");
}
