//! The PIQI-RCP router module **[reconstructed]** (docs/PROTOCOLS.md §8; the IWQoS 2007 equations are
//! unavailable). The per-packet half is RCP's ([`RateCore`]: arrival bytes, byte-weighted RTT
//! and d0, min(rate, R) written into SYN/REF/DATA at dequeue), so data packets cost what RCP's
//! cost: 2 additions + 2 multiplications (P7).
//!
//! Every Δ (10 ms, first tick at a random phase), with T the interval just ended:
//! ```text
//! y   = in_bytes / T
//! g   = min(1, T/d0)                                  # the interval's share of one RTT
//! N̂   = max(1, y/R̄ + J)                              # flows: usage in units of the rate y reflects, plus newcomers
//! e   = (γC − y) / N̂                                  # per-flow rate error: no queue term
//! R   = clamp(R + K_i·g·e + K_p·(e − e_prev), R_min, γC) ; e_prev = e
//! R̄  += g·(R − R̄) ; J *= 1 − g ; d0 as RCP
//! on a newcomer (a SYN, or a data packet with rtt 0: a flow's first request), on arrival:
//!     answered with its start share, admitted on its traffic (below; `admit_on_traffic`), or
//!     R = R·N̂/(N̂ + 1) ; N̂ += 1 ; J += 1              # room for it before it sends (option off)
//! ```
//! Why each change to §8's controller (R += K_i·e + K_p·Δe every max(10 ms, d0), N̂ = max(1, y/R)),
//! each checked by the fluid check in `piqi_rcp::fluid` (this router and RCP's, driven by
//! 1 ms fluid steps; 1 Gb/s):
//! - **Gain per RTT, not per interval (P8).** Linearised around γC/N, §8's loop is
//!   r(n+1) = r(n) − K_i·r(n − D) with D the feedback delay in intervals, stable only for
//!   K_i < 2 sin(π/(2(2D − 1))): stability hangs on RTT/Δ, which §8 keeps near 1 by stretching Δ
//!   to d0. Scaling the integral step by T/d0 instead gives r'(t) = −(K_i/d0)·r(t − τ), whose
//!   stability depends only on K_i·τ/d0 (< π/2), not on the delay itself: the same K_i is stable
//!   at 10 ms and at 1 s, and with mixed RTTs while K_i·τ_max/d0 < π/2 (K_i = 0.5 allows the
//!   longest RTT to be 3× the byte-weighted mean). A short fixed Δ then only samples the loop
//!   finely. The queue term stays out (queue-independent): the queue drains through γ < 1.
//! - **Newcomers counted from their first request (P2).** §8 learns of new flows only once their
//!   traffic shows in y, after they have started at the old R: ten flows joining a lone flow
//!   start at ≈γC each, and the overshoot outlasts RCP's. The rate request reaches the routers
//!   with the SYN (or, without handshake, with the one packet a flow sends before it knows a
//!   rate, whose rtt is 0), so the router makes room at once, R·N̂/(N̂+1): the newcomer's SYN-ACK
//!   and the old flows' next ACKs carry the lowered rate, and the peak load is about the old
//!   flows' rate for one RTT plus the newcomers' share. J keeps the newcomers in N̂ (decaying
//!   over one d0) until their traffic shows in y. This is feed-forward on a measured event; the
//!   feedback law stays a PI on the rate error. A FIN needs no such step: the flow's traffic
//!   leaves y within one interval. (This is `admit_on_traffic = false`; by default the
//!   request is answered and the room made when the traffic comes, below.)
//! - **N̂ from the rate y reflects.** y measures rates fed back about one RTT earlier; dividing
//!   by the current R undercounts flows while R rises (N̂ floors at 1 and every flow gets the
//!   whole spare capacity), so flows that start together overshoot. R̄, R averaged over d0, is
//!   the rate y reflects; in steady state R̄ = R and N̂ = y/R as in §8, which still counts a
//!   flow by its usage (mice count for what they send, P6).
//!
//! - **Admission on traffic (`admit_on_traffic`, on; P6).** Room made at the request costs ≥ ½·RTT of the link per mouse (a SYN halves a lone flow's R, and the old flows'
//!   stamps for the next RTT are out before any evidence): at 5 mice/s and 50 ms, about 25 % of
//!   the link (xcc-mice quick: 74.0 %, the fluid check 0.749). So a request is answered with its
//!   start share k·F(k) − (k−1)·F(k−1), F(k) = min(R, γC·R/(y + k·R)) (a burst gets < γC in
//!   all: the sum telescopes), R untouched; each tick, traffic shown two intervals running,
//!   x = min(y, y₁) − y₂, admits pending·min(1, x/shares) newcomers, R = min(R, γC·R/(y₂ + m·R));
//!   pending lapses 1.5·d0 + 2Δ after the last request. Mice (a few ms of data) rarely show twice.
//! - **The due cut (`due_cut`, on; P2 with admission on traffic).** A joiner sends its start
//!   share for one RTT and then the rate stamped on its first data; admission comes two
//!   intervals after that data, so alone it stamps the old R on every joiner meanwhile (fluid
//!   P2: 2.06 C and 10.45 C peak load against RCP's 3.00 and 11.00). From `due_lead` (2 ms)
//!   before the data is due (request + d0) the stamps carry F(k) for the k newcomers due
//!   (`due_cut`), until admission takes over; presence checks every `due_window` (2 ms, the
//!   module's own events, not per packet) lift it once the newcomers' excess over the old
//!   traffic falls below half their shares (a mouse's data stopped: it leaves pending too) or
//!   never reached it (no data came: left to admission); windows stretch to hold 8 packets of
//!   the shares on slow links. Newcomers still present when the checks end (one RTT after the
//!   cut began, before the old flows' own rates show the cut) are admitted at F(k): at RTTs
//!   near Δ their excess shows for less than admission's two intervals, and lifting the cut
//!   with R uncut overshot 2× (engine P8 at 12 ms: 24.8 RTTs, 478 drops; now 6.5 RTTs, none).
//!   A mouse then costs F/R of the link for lead + its data + a window or two (≈ 3 ms·C at
//!   50 ms), not an RTT. Measured (fluid, 1 ms steps / engine, quick): mice 0.921 / xcc-mice
//!   92.1 %; P2 peak load 1.43 C and 1.81 C (the floor of the start share: γC + γC/2 while the
//!   first joiner's share runs), queue 2202 and 3322 pkts (RCP 14 195, 52 420); xcc-abrupt
//!   overshoot +18 %, queue 170 pkts (RCP +86 %, 1171). Without the cut: +44 %, 731 pkts.
//!
//! Defaults: γ 0.95, K_i 0.5 per d0, K_p 0, Δ 10 ms, R0 = 0.05·C and d0 = 200 ms as RCP.

use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{CongHeader, Direction, Kind, Packet};
use crate::params::ParamError;
use crate::rcp::router::{header_rate, r_min, RateController, RateCore};
use crate::rng::SimRng;
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::{secs, Time};
use crate::xcc::ops::{self, Counted, OpCounts};

use super::due_cut::{CutTiming, DueCut, Outcome};
use super::params::PiqiRouterParams;
pub use super::pi_law::{admit, admit_on_traffic, fair_with, file_newcomer, pi_step, start_share, PiState};

/// Is this packet a flow's first request: a SYN, or data carrying no RTT yet?
#[inline]
fn newcomer(pkt: &Packet) -> bool {
    pkt.dir == Direction::Forward
        && matches!(pkt.kind, Kind::Syn | Kind::Data)
        && matches!(pkt.cong, CongHeader::Rcp { rtt_us: 0, .. })
}

/// The PIQI-RCP router module.
#[derive(Clone, Debug)]
pub struct PiqiRouter {
    core: RateCore,
    p: PiqiRouterParams,
    /// R averaged over d0 (0 until the first tick after C is known, which starts it at R0).
    r_bar: f64,
    /// The flow count of the last interval, raised by newcomers since.
    n_hat: f64,
    /// Newcomers not yet in y (decaying over d0).
    j: f64,
    e_prev: f64,
    newcomers: u64,
    /// Admission on traffic: newcomers answered but not yet seen in y, their start shares
    /// (B/s), when the last one came, and y of the last two intervals.
    pend: f64,
    pend_rate: f64,
    pend_since: Time,
    y1: f64,
    y2: f64,
    admitted: f64,
    /// The due cut (`due_cut`) and the rate it holds stamps to (∞: none).
    due: DueCut,
    ceiling: f64,
    /// d0 less the lead, ns: a request's data is due this long after it (set at each tick).
    due_after: Time,
}

impl PiqiRouter {
    /// A module for a port of `capacity_bps` (0: learnt from the first `PortView`), first tick
    /// at a random phase in [0, Δ) from `rng`. Validates `p`.
    pub fn new(p: &PiqiRouterParams, capacity_bps: f64, mut rng: SimRng) -> Result<PiqiRouter, ParamError> {
        p.validate()?;
        let phase = secs(rng.uniform() * p.delta);
        Ok(PiqiRouter::with_phase(p, capacity_bps, phase))
    }

    /// A module whose first tick is at `first_tick` (tests).
    pub fn with_phase(p: &PiqiRouterParams, capacity_bps: f64, first_tick: Time) -> PiqiRouter {
        PiqiRouter {
            core: RateCore::new(p.d0, p.rcp_d0_gain, p.count_ops, first_tick, p.initial_rate, capacity_bps),
            p: p.clone(),
            r_bar: 0.0,
            n_hat: 1.0,
            j: 0.0,
            e_prev: 0.0,
            newcomers: 0,
            pend: 0.0,
            pend_rate: 0.0,
            pend_since: 0,
            y1: 0.0,
            y2: 0.0,
            admitted: 0.0,
            due: DueCut::default(),
            ceiling: f64::INFINITY,
            due_after: secs((p.d0 - p.due_lead).max(0.0)),
        }
    }

    /// The flow count N̂ in force.
    pub fn n_hat(&self) -> f64 {
        self.n_hat
    }

    /// Newcomers counted so far.
    pub fn newcomers(&self) -> u64 {
        self.newcomers
    }

    /// Newcomers answered and not yet seen in y.
    pub fn pending(&self) -> f64 {
        self.pend
    }

    fn cutting(&self) -> bool {
        self.p.admit_on_traffic && self.p.due_cut
    }

    /// A newcomer's first request under admission on traffic: answered with its start share
    /// (written into its header now; the dequeue stamp only lowers it), R untouched.
    #[cold]
    fn answer_newcomer(&mut self, now: Time, pkt: &mut Packet) {
        self.newcomers += 1;
        let cap = self.p.gamma * self.core.capacity();
        if cap <= 0.0 {
            return;
        }
        let (k, share, pend_rate) = if self.core.counting() {
            let ((k, s, p), done) = ops::count(|| {
                let (k, s, p) = file_newcomer(
                    Counted(self.core.rate),
                    Counted(self.y1),
                    Counted(self.pend),
                    Counted(self.pend_rate),
                    Counted(cap),
                );
                (k.0, s.0, p.0)
            });
            self.core.add_ops(done);
            (k, s, p)
        } else {
            file_newcomer(self.core.rate, self.y1, self.pend, self.pend_rate, cap)
        };
        (self.pend, self.pend_rate, self.pend_since) = (k, pend_rate, now);
        if self.cutting() {
            // Its data is due one d0 from now (`due_after`, set at each tick): 1 addition, and
            // the cohort's bookkeeping (`DueCut::expect`).
            let due = now + self.due_after;
            let adds = 1 + self.due.expect(due, share, secs(self.p.due_window));
            if self.core.counting() {
                self.core.add_ops(OpCounts { adds, muls: 0, divs: 0 });
            }
        }
        if let CongHeader::Rcp { rate, .. } = &mut pkt.cong {
            *rate = (*rate).min(header_rate(share));
        }
    }

    #[cold]
    fn admit_newcomer(&mut self) {
        self.newcomers += 1;
        if self.core.counting() {
            let ((r, n, j), done) = ops::count(|| admit(Counted(self.core.rate), Counted(self.n_hat), Counted(self.j)));
            (self.core.rate, self.n_hat, self.j) = (r.0, n.0, j.0);
            self.core.add_ops(done);
        } else {
            (self.core.rate, self.n_hat, self.j) = admit(self.core.rate, self.n_hat, self.j);
        }
    }
}

impl PiqiRouter {
    /// Admission on traffic at a tick (y the interval's rate): the pending newcomers' traffic
    /// that has shown for two intervals running, x = min(y, y₁) − y₂, makes their room
    /// ([`admit_on_traffic`]); what never shows lapses 1.5·d0 + 2Δ after the last request.
    fn admit_seen(&mut self, now: Time, y: f64, c: f64, d0: f64) {
        let x = (y.min(self.y1) - self.y2).max(0.0);
        let cap = self.p.gamma * c;
        let (r, m, unseen) = admit_on_traffic(self.core.rate, self.y2, x, self.pend, self.pend_rate, cap);
        if m > 0.0 {
            let left = 1.0 - m / self.pend;
            self.core.rate = r;
            self.j += m * unseen;
            self.admitted += m;
            self.pend -= m;
            self.pend_rate *= left;
            self.due.admitted(m);
        }
        if self.pend > 0.0 && now.saturating_sub(self.pend_since) > secs(1.5 * d0 + 2.0 * self.p.delta) {
            (self.pend, self.pend_rate) = (0.0, 0.0);
            self.due.clear();
        }
        (self.y2, self.y1) = (self.y1, y);
    }
}

impl PiqiRouter {
    /// `k` newcomers with start shares `share` leave admission's pending.
    fn unpend(&mut self, k: f64, share: f64) {
        self.pend = (self.pend - k).max(0.0);
        self.pend_rate = if self.pend > 0.0 { (self.pend_rate - share).max(0.0) } else { 0.0 };
    }

    /// A control interval ends at `now`: admission on traffic, then the PI law.
    fn interval(&mut self, now: Time, port: &PortView) {
        let Some((t, y, mean)) = self.core.due(now, port) else { return };
        let c = self.core.capacity();
        if t > 0.0 && c > 0.0 {
            if self.r_bar <= 0.0 {
                // R̄ starts at R0, the rate when C became known (R itself may have made room
                // for newcomers since).
                self.r_bar = self.p.initial_rate * c;
            }
            let d0 = self.core.d0;
            let g = (t / d0).min(1.0);
            if self.p.admit_on_traffic {
                self.due.interval_closed(y * t);
                self.admit_seen(now, y, c, d0);
            }
            let r_min = r_min(self.p.r_min_pkts, port, d0).min(self.p.gamma * c);
            let r_ref = if self.p.smoothed_count { self.r_bar } else { self.core.rate };
            let s = PiState { r: self.core.rate, r_bar: r_ref, j: self.j, e_prev: self.e_prev };
            let (r, n_hat, e) = pi_step(&self.p, s, c, y, g, r_min);
            self.core.rate = r;
            (self.n_hat, self.e_prev) = (n_hat, e);
            self.r_bar += g * (r - self.r_bar);
            self.j *= 1.0 - g;
            self.core.update_d0(t, mean, r / c);
            self.due_after = secs((self.core.d0 - self.p.due_lead).max(0.0));
        }
        self.core.next_tick = now + secs(self.p.delta).max(1);
    }
}

impl RateController for PiqiRouter {
    #[inline]
    fn core(&self) -> &RateCore {
        &self.core
    }
}

impl RouterModule for PiqiRouter {
    fn name(&self) -> &'static str {
        "piqi-rcp"
    }

    #[inline]
    fn on_arrival(&mut self, now: Time, pkt: &mut Packet, port: &PortView) -> Verdict {
        self.core.arrive(pkt, port);
        if self.p.count_newcomers && newcomer(pkt) {
            if self.p.admit_on_traffic {
                self.answer_newcomer(now, pkt);
            } else {
                self.admit_newcomer();
            }
        }
        Verdict::Forward
    }

    #[inline]
    fn on_departure(&mut self, _now: Time, pkt: &mut Packet, port: &PortView) -> bool {
        self.core.depart_under(pkt, port, self.ceiling)
    }

    /// The next interval's end, or the due cut's next event if sooner.
    fn next_tick(&self) -> Option<Time> {
        let t = self.core.next_tick;
        Some(self.due.next_event().map_or(t, |e| e.min(t)))
    }

    fn on_tick(&mut self, now: Time, port: &PortView) {
        if now >= self.core.next_tick {
            self.interval(now, port);
        }
        if self.cutting() {
            let timing = CutTiming {
                w: secs(self.p.due_window),
                lead: secs(self.p.due_lead),
                d0: secs(self.core.d0),
                pkt: f64::from(port.mean_pkt_size),
            };
            match self.due.advance(now, self.core.in_bytes(), self.y1, &timing) {
                // Judged not to last: no longer pending admission either.
                Some(Outcome::Released { k, share }) => self.unpend(k, share),
                // Present through the checks: admitted at the fair rate the cut stamped.
                Some(Outcome::Lasting { k, share, y_old }) => {
                    let cap = self.p.gamma * self.core.capacity();
                    self.core.rate = fair_with(self.core.rate, y_old, k, cap);
                    self.admitted += k;
                    self.unpend(k, share);
                }
                None => {}
            }
            self.ceiling = if self.due.k() > 0.0 {
                self.due.stamp_rate(self.core.rate, self.p.gamma * self.core.capacity())
            } else {
                f64::INFINITY
            };
        }
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        self.core.metrics(out);
        out.put("n_hat", "flows", MetricValue::Gauge(self.n_hat));
        out.put("admitted", "flows", MetricValue::Gauge(self.admitted));
        out.put("newcomers", "flows", MetricValue::Count(self.newcomers));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand values, γC = 95, R = 95 unless said.
    #[test]
    fn admission_on_traffic_by_hand() {
        // A full link (y = γC): one newcomer's fair rate 95·95/(95 + 95) = 47.5; an empty link
        // cuts nobody: 95·50/(0 + 50) = 95 > R = 50, so R.
        assert_eq!(fair_with(95.0, 95.0, 1.0, 95.0), 47.5);
        assert_eq!(fair_with(50.0, 0.0, 1.0, 95.0), 50.0);
        // Start shares: 1·F(1) − 0 = 47.5; 2·F(2) − F(1) = 2·95·95/285 − 47.5 = 95/6; on an
        // empty link each newcomer gets R while k·R ≤ γC.
        assert_eq!(start_share(95.0, 95.0, 1.0, 95.0), 47.5);
        assert!((start_share(95.0, 95.0, 2.0, 95.0) - 95.0 / 6.0).abs() < 1e-12);
        assert_eq!(start_share(30.0, 0.0, 3.0, 95.0), 30.0);
        // Traffic shows: all of the pending share (47.5 of 47.5): m = 1, R = 47.5, and the
        // newcomer, at half of R, is half a flow short of its count.
        assert_eq!(admit_on_traffic(95.0, 95.0, 47.5, 1.0, 47.5, 95.0), (47.5, 1.0, 0.5));
        // Half of it: m = 0.5, R = 95·95/(95 + 47.5) = 63.33.
        let (r, m, _) = admit_on_traffic(95.0, 95.0, 23.75, 1.0, 47.5, 95.0);
        assert!((r - 95.0 * 95.0 / 142.5).abs() < 1e-12 && m == 0.5);
        // Nothing pending, or nothing new: no change.
        assert_eq!(admit_on_traffic(95.0, 95.0, 47.5, 0.0, 0.0, 95.0), (95.0, 0.0, 0.0));
        assert_eq!(admit_on_traffic(95.0, 95.0, 0.0, 1.0, 47.5, 95.0), (95.0, 0.0, 0.0));
    }
}
