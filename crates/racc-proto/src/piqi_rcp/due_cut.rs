//! The due cut of PIQI-RCP's admission on traffic **[reconstructed]** (router docs, P2 and P6):
//! a newcomer answered with its start share sends that share for one RTT, and the rate stamped
//! on its first data is the rate it sends at from its second RTT on. Admission (R cut once its
//! traffic has shown two intervals running) comes after those stamps, so before it the joiners
//! would be told the old R. The due cut lowers the stamped rate to the fair rate
//! F(k) = min(R, γC·R/(y_old + k·R)) from just before the newcomers' data is due (their SYN + d0)
//! until admission takes over, and lifts it as soon as their traffic is seen to stop (a mouse
//! of a few milliseconds), or never shows.
//!
//! Everything here runs at the module's own events (ticks, presence checks), never per packet;
//! a SYN only files its newcomer under the time its data is due ([`DueCut::expect`]).
//!
//! Presence is judged on windows of `w`: the old flows' traffic y_old (the last interval before
//! the cut) against the arrival rate over the window. While waiting for the data, a window whose
//! excess reaches half the due newcomers' start shares makes them present; no such window by
//! `w` after the due time releases them (no data came). Once present, a window with less
//! excess than that releases them (their traffic stopped). Admitted newcomers leave the cut
//! (R itself is cut by then), and so do cohorts not yet due whose traffic admission has already
//! seen (while d0 is still its initial 200 ms, a joiner's data comes long before its due time).
//! Newcomers still present when the last clean window ends, about one RTT after the cut began,
//! last: the cut hands them to R ([`Outcome::Lasting`]). At RTTs near Δ admission on traffic
//! cannot see them (their excess shows for about one RTT, less than its two intervals), and
//! lifting the cut with R uncut overshot 2× (P8 at 12 ms: 24.8 RTTs to settle, 478 drops).

use super::pi_law::fair_with;
use crate::time::{secs, to_secs, Dur, Time};

/// Cohorts of newcomers whose data is not yet due (SYNs whose due times lie within one window
/// share a cohort; a full ring merges into its last cohort).
const COHORTS: usize = 8;

/// Packets of the newcomers' start shares a presence window must hold at least: the judgement
/// (excess over y_old against half their shares) then has a margin of four packets against the
/// ±1 packet by which a window's count can miss its rate. A window of `due_window` (2 ms) holds
/// hundreds at 1 Gb/s; on slow links it is stretched (P8's 200 ms run: 24 Mb/s, where 2 ms holds
/// two of a joiner's packets and one missing packet took it for gone).
const PRESENCE_PKTS: f64 = 8.0;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Cohort {
    due: Time,
    k: f64,
    share: f64,
}

/// Where the newcomers under the cut stand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Presence {
    /// No newcomer under the cut.
    #[default]
    None,
    /// Cut, their data due by `until`.
    Waiting { until: Time },
    /// Their traffic has been seen.
    Present,
}

/// What a run of [`DueCut::advance`] decided about the newcomers under the cut.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// `k` newcomers with start shares `share` (B/s) judged not to last (their traffic was
    /// seen and stopped): they leave admission's pending too.
    Released { k: f64, share: f64 },
    /// `k` newcomers with start shares `share` still present when the checks end, one d0
    /// after the cut began: they last, and the cut becomes R's (admitted at the fair rate
    /// F(k) with the old flows' traffic `y_old`). Admission on traffic needs their excess two
    /// intervals running, which the cut itself ends within about one RTT: at RTTs near Δ it
    /// never sees it, and without this the cut would lift with R uncut.
    Lasting { k: f64, share: f64, y_old: f64 },
}

/// The cut's timing: the presence-check window `w`, the `lead` before a cohort's data is due,
/// the mean RTT `d0`, and the port's mean packet size `pkt` (B; 0 if unknown).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CutTiming {
    pub w: Dur,
    pub lead: Dur,
    pub d0: Dur,
    pub pkt: f64,
}

/// The due cut's state.
#[derive(Clone, Debug, Default)]
pub struct DueCut {
    ring: [Cohort; COHORTS],
    head: usize,
    len: usize,
    /// Newcomers under the cut (data due, not yet admitted or released) and their start shares, B/s.
    k: f64,
    share: f64,
    presence: Presence,
    /// The old flows' traffic when the cut began, B/s.
    y_old: f64,
    /// The presence window: when it began, the bytes its interval had counted by then, and
    /// the bytes of intervals closed since.
    win_at: Time,
    win_b0: f64,
    win_carry: f64,
    /// The next presence check, and when the last judged window must end: about one
    /// (propagation) RTT after the cut began the old flows' own rates have taken it and y_old
    /// no longer tells the newcomers' traffic apart, so windows end by d0 less one window (d0,
    /// a mean RTT with queueing, is the later of the two).
    check_at: Option<Time>,
    checks_until: Time,
    /// Newcomers released without admission (their traffic stopped or never came).
    released: f64,
}

impl DueCut {
    /// File a newcomer with start share `share` whose data is due at `due` (its SYN + d0, less
    /// the lead); within `w` of the last cohort's due time it joins that cohort. Returns the
    /// additions done (the bound, and a cohort's count and shares): 0 to 3.
    pub fn expect(&mut self, due: Time, share: f64, w: Dur) -> u64 {
        if self.len > 0 {
            let last = (self.head + self.len - 1) % COHORTS;
            let full = self.len == COHORTS;
            if full || due <= self.ring[last].due.saturating_add(w) {
                self.ring[last].k += 1.0;
                self.ring[last].share += share;
                return if full { 2 } else { 3 };
            }
        }
        self.ring[(self.head + self.len) % COHORTS] = Cohort { due, k: 1.0, share };
        self.len += 1;
        u64::from(self.len > 1)
    }

    /// The next event: a cohort coming due, or a presence check.
    pub fn next_event(&self) -> Option<Time> {
        let due = (self.len > 0).then(|| self.ring[self.head].due);
        match (due, self.check_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Newcomers under the cut.
    pub fn k(&self) -> f64 {
        self.k
    }

    pub fn presence(&self) -> Presence {
        self.presence
    }

    /// Newcomers released without admission so far.
    pub fn released(&self) -> f64 {
        self.released
    }

    /// The rate to stamp: F(k) = min(R, γC·R/(y_old + k·R)) under the cut, else R.
    pub fn stamp_rate(&self, r: f64, cap: f64) -> f64 {
        if self.k > 0.0 {
            fair_with(r, self.y_old, self.k, cap)
        } else {
            r
        }
    }

    /// An interval of `bytes` closed: the window keeps its part of them.
    pub fn interval_closed(&mut self, bytes: f64) {
        if self.check_at.is_some() {
            self.win_carry += bytes - self.win_b0;
            self.win_b0 = 0.0;
        }
    }

    /// `m` newcomers admitted (R cut for them): they leave the cut, the first ones first, and
    /// then the cohorts not yet due (a newcomer whose traffic shows before d0 has passed, as
    /// while d0 is still its initial 200 ms, must not be cut again when its due time comes).
    pub fn admitted(&mut self, mut m: f64) {
        if m <= 0.0 {
            return;
        }
        if self.k > 0.0 {
            if m >= self.k {
                m -= self.k;
                self.end_cut();
            } else {
                self.share *= 1.0 - m / self.k;
                self.k -= m;
                return;
            }
        }
        while m > 0.0 && self.len > 0 {
            let c = &mut self.ring[self.head];
            if m >= c.k {
                m -= c.k;
                (self.head, self.len) = ((self.head + 1) % COHORTS, self.len - 1);
            } else {
                c.share *= 1.0 - m / c.k;
                c.k -= m;
                return;
            }
        }
    }

    /// Everything pending lapsed: no cut, no cohort.
    pub fn clear(&mut self) {
        self.end_cut();
        self.len = 0;
    }

    fn end_cut(&mut self) {
        (self.k, self.share, self.presence, self.check_at) = (0.0, 0.0, Presence::None, None);
    }

    /// The presence window: `w`, or long enough for [`PRESENCE_PKTS`] of the shares under
    /// the cut (or, before a cut, of the next cohort's).
    fn window(&self, w: Dur, pkt: f64) -> Dur {
        let share = if self.k > 0.0 {
            self.share
        } else if self.len > 0 {
            self.ring[self.head].share
        } else {
            0.0
        };
        if share > 0.0 && pkt > 0.0 {
            w.max(secs(PRESENCE_PKTS * pkt / share))
        } else {
            w
        }
    }

    fn open_window(&mut self, now: Time, in_bytes: f64, w: Dur) {
        (self.win_at, self.win_b0, self.win_carry, self.check_at) =
            (now, in_bytes, 0.0, Some(now.saturating_add(w.max(1))));
    }

    /// Run the events due by `now`: cohorts coming due join the cut (`lead` before their data;
    /// the first starts it with y_old = `y1`, the last interval's rate), and a presence check
    /// judges the window just ended (windows end by `d0` − `w` after the cut began; newcomers
    /// still present then last). `in_bytes`: the
    /// current interval's bytes so far; `pkt`: the port's mean packet size, B (windows hold at
    /// least [`PRESENCE_PKTS`] of the newcomers' shares). Returns what was decided about the
    /// newcomers under the cut, if anything ([`Outcome`]).
    pub fn advance(&mut self, now: Time, in_bytes: f64, y1: f64, timing: &CutTiming) -> Option<Outcome> {
        let CutTiming { w, lead, d0, pkt } = *timing;
        let w = self.window(w, pkt);
        while self.len > 0 && self.ring[self.head].due <= now {
            let c = self.ring[self.head];
            (self.head, self.len) = ((self.head + 1) % COHORTS, self.len - 1);
            // Saturating: a window from a vanishing share is "practically forever", never a wrap.
            let until = c.due.saturating_add(lead).saturating_add(w);
            match self.presence {
                Presence::None => {
                    self.y_old = y1;
                    self.checks_until = now.saturating_add(d0.saturating_sub(w));
                    self.presence = Presence::Waiting { until };
                    self.open_window(now, in_bytes, w);
                }
                Presence::Waiting { .. } => self.presence = Presence::Waiting { until },
                // Already present: the newcomers' data of the next cohort is judged with theirs.
                Presence::Present => {}
            }
            self.k += c.k;
            self.share += c.share;
        }
        let at = self.check_at.filter(|&t| t <= now)?;
        let span = to_secs(now.saturating_sub(self.win_at));
        let rate = if span > 0.0 { (self.win_carry + in_bytes - self.win_b0) / span } else { 0.0 };
        let seen = rate - self.y_old >= 0.5 * self.share;
        match (self.presence, seen) {
            (Presence::Waiting { .. }, true) => self.presence = Presence::Present,
            (Presence::Waiting { until }, false) if at < until => {}
            (_, false) => {
                // Seen and gone: they leave pending; never seen: admission may still find them.
                let out =
                    (self.presence == Presence::Present).then_some(Outcome::Released { k: self.k, share: self.share });
                self.released += self.k;
                self.end_cut();
                return out;
            }
            _ => {}
        }
        if now.saturating_add(w.max(1)) <= self.checks_until {
            self.open_window(now, in_bytes, w);
        } else if self.presence == Presence::Present {
            let out = Outcome::Lasting { k: self.k, share: self.share, y_old: self.y_old };
            self.end_cut();
            return Some(out);
        } else {
            self.check_at = None;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NS_PER_MS;

    /// 2 ms windows and lead, d0 = 50 ms, no packet size.
    const TIMING: CutTiming = CutTiming { w: 2 * NS_PER_MS, lead: 2 * NS_PER_MS, d0: 50 * NS_PER_MS, pkt: 0.0 };

    const MS: u64 = NS_PER_MS;

    /// Old traffic 1000 B/s, one newcomer with share 500 B/s due at 50 ms, windows of 2 ms,
    /// lead 2 ms; γC = 950, R = 950.
    #[test]
    fn a_mouse_is_released_once_its_data_stops_a_long_flow_stays_cut() {
        let mut d = DueCut::default();
        d.expect(48 * MS, 500.0, 2 * MS);
        assert_eq!(d.next_event(), Some(48 * MS));
        d.advance(48 * MS, 0.0, 1000.0, &TIMING);
        assert_eq!((d.k(), d.presence()), (1.0, Presence::Waiting { until: 52 * MS }));
        // F(1) = 950·950/(1000 + 950) = 462.8
        assert!((d.stamp_rate(950.0, 950.0) - 950.0 * 950.0 / 1950.0).abs() < 1e-9);
        // 48-50 ms: old traffic only (2 B in 2 ms = 1000 B/s): still waiting.
        d.advance(50 * MS, 2.0, 1000.0, &TIMING);
        assert_eq!(d.presence(), Presence::Waiting { until: 52 * MS });
        // 50-52 ms: 2 + 1.2 B (1600 B/s, excess 600 ≥ 250): present.
        d.advance(52 * MS, 5.2, 1000.0, &TIMING);
        assert_eq!(d.presence(), Presence::Present);
        // An interval closes at 53 ms with 6.2 B (the window had 5.2 of them by 52 ms), then
        // 54 ms: 1 B since (the window: 1 + 1 = 2 B in 2 ms, no excess): released.
        d.interval_closed(6.2);
        d.advance(54 * MS, 1.0, 1000.0, &TIMING);
        assert_eq!((d.k(), d.presence(), d.released()), (0.0, Presence::None, 1.0));
        assert_eq!(d.stamp_rate(950.0, 950.0), 950.0);
        assert_eq!(d.next_event(), None);
        // A long flow: present and staying present until admitted.
        let mut d = DueCut::default();
        d.expect(48 * MS, 500.0, 2 * MS);
        d.advance(48 * MS, 0.0, 1000.0, &TIMING);
        d.advance(50 * MS, 3.0, 1000.0, &TIMING);
        assert_eq!(d.presence(), Presence::Present);
        d.advance(52 * MS, 6.0, 1000.0, &TIMING);
        assert_eq!((d.k(), d.presence()), (1.0, Presence::Present));
        d.admitted(0.5);
        assert_eq!((d.k(), d.share), (0.5, 250.0));
        d.admitted(1.0);
        assert_eq!((d.k(), d.next_event()), (0.0, None));
        // Data that never comes: released at the due time + lead + w.
        let mut d = DueCut::default();
        d.expect(48 * MS, 500.0, 2 * MS);
        for t in [48, 50, 52] {
            d.advance(t * MS, 0.0, 1000.0, &TIMING);
        }
        assert_eq!((d.k(), d.released()), (0.0, 1.0));
    }

    /// A cohort admitted before it is due never starts a cut.
    #[test]
    fn newcomers_admitted_before_their_due_time_are_not_cut() {
        let mut d = DueCut::default();
        d.expect(48 * MS, 500.0, 2 * MS);
        d.expect(60 * MS, 500.0, 2 * MS);
        d.admitted(1.5);
        assert_eq!(d.next_event(), Some(60 * MS));
        d.advance(60 * MS, 0.0, 1000.0, &TIMING);
        assert_eq!((d.k(), d.share), (0.5, 250.0));
    }

    /// Present through every clean window (d0 10 ms, w 2 ms: windows end by 48 + 8 = 56 ms):
    /// the cut hands them to R. Old traffic 1000 B/s, the window's 1500 B/s (excess 500 ≥ 250).
    #[test]
    fn newcomers_present_through_the_checks_last() {
        let mut d = DueCut::default();
        d.expect(48 * MS, 500.0, 2 * MS);
        d.advance(48 * MS, 0.0, 1000.0, &CutTiming { w: 2 * MS, lead: 2 * MS, d0: 10 * MS, pkt: 0.0 });
        for (t, b) in [(50, 3.0), (52, 6.0), (54, 9.0)] {
            assert_eq!(
                d.advance(t * MS, b, 1000.0, &CutTiming { w: 2 * MS, lead: 2 * MS, d0: 10 * MS, pkt: 0.0 }),
                None
            );
        }
        assert_eq!(d.presence(), Presence::Present);
        let out = d.advance(56 * MS, 12.0, 1000.0, &CutTiming { w: 2 * MS, lead: 2 * MS, d0: 10 * MS, pkt: 0.0 });
        assert_eq!(out, Some(Outcome::Lasting { k: 1.0, share: 500.0, y_old: 1000.0 }));
        assert_eq!((d.k(), d.next_event(), d.released()), (0.0, None, 0.0));
    }

    /// A window holds at least eight packets of the shares: 8·1000 B / 1 MB/s = 8 ms > 2 ms.
    #[test]
    fn slow_shares_stretch_the_window() {
        let mut d = DueCut::default();
        d.expect(48 * MS, 1e6, 2 * MS);
        d.advance(48 * MS, 0.0, 0.0, &CutTiming { w: 2 * MS, lead: 2 * MS, d0: 50 * MS, pkt: 1000.0 });
        assert_eq!(d.next_event(), Some(56 * MS));
        assert_eq!(d.presence(), Presence::Waiting { until: 48 * MS + 2 * MS + 8 * MS });
    }

    #[test]
    fn newcomers_due_within_a_window_share_a_cohort() {
        let mut d = DueCut::default();
        d.expect(10 * MS, 100.0, 2 * MS);
        d.expect(11 * MS, 100.0, 2 * MS);
        d.expect(20 * MS, 50.0, 2 * MS);
        assert_eq!(d.len, 2);
        d.advance(10 * MS, 0.0, 0.0, &TIMING);
        assert_eq!((d.k(), d.share), (2.0, 200.0));
        assert_eq!(d.next_event(), Some(12 * MS));
    }
}
