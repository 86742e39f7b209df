//! When the sender may send: what the window allows (RFC 5681 §2, RFC 3042 Limited Transmit),
//! when pacing lets the next segment leave (a controller's pacing rate), and whether a poll
//! right after a segment would send another.

use super::{TcpSender, HDRS};
use crate::endpoint::Transmit;
use crate::time::{secs, Time};

impl TcpSender {
    /// The next new (or go-back-N) segment's length if the window allows it now: the whole
    /// segment must fit (RFC 5681 §2: never beyond snd_una + cwnd), plus one segment for each
    /// of the first two duplicate ACKs outside recovery (RFC 3042 Limited Transmit; new data
    /// only). With nothing in flight one segment may always go, so that a window below one MSS
    /// cannot stall the ACK clock.
    pub(super) fn window_allows(&self) -> Option<u32> {
        self.window_allows_in(self.cwnd())
    }

    /// `window_allows` with the window in force already read: a segment leaving does not move a
    /// plain window, so a poll reads it once for its segment and the next (`after_segment`).
    #[inline(always)]
    pub(super) fn window_allows_in(&self, cwnd: f64) -> Option<u32> {
        let end = self.data_end().max(self.snd_max);
        if self.snd_nxt >= end {
            return None;
        }
        let len = (end - self.snd_nxt).min(self.mss as u64);
        let flight = self.snd_nxt - self.snd_una;
        let limited = self.limited_transmit
            && !self.in_recovery()
            && self.dupacks < self.dupthresh
            && self.snd_nxt >= self.snd_max;
        let extra = if limited { self.dupacks.min(2) as f64 * self.mss as f64 } else { 0.0 };
        (flight == 0 || (flight + len) as f64 <= cwnd + extra).then_some(len as u32)
    }

    /// When pacing lets the next full segment leave: the last paced departure plus one packet's
    /// wire time at the rate the controller asks for now (a rate change moves it at once).
    /// `None` when the controller does not pace or nothing has been paced yet.
    pub(super) fn pace_due(&self) -> Option<Time> {
        let rate = self.pacing_rate()?;
        Some(self.paced_after(self.paced_at?, rate))
    }

    /// The controller's pacing rate, B/s, if it paces now (never for a plain window).
    #[inline]
    pub(super) fn pacing_rate(&self) -> Option<f64> {
        if self.plain {
            return None;
        }
        self.cc.pacing_rate().filter(|r| r.is_finite() && *r > 0.0)
    }

    /// Pacing lets a segment leave now (or the controller does not pace): stamp its departure.
    /// The gate of new data outside a recovery, and of every segment for `pace_all`.
    #[inline]
    pub(super) fn pace_allows(&mut self, now: Time) -> bool {
        if let Some(rate) = self.pacing_rate() {
            if self.paced_at.is_some_and(|at| now < self.paced_after(at, rate)) {
                return false;
            }
            self.paced_at = Some(now);
        }
        true
    }

    /// One full packet's wire time at `rate` (B/s) after `at`.
    #[inline]
    pub(super) fn paced_after(&self, at: Time, rate: f64) -> Time {
        let wire = HDRS + self.mss + self.cc.header_bytes();
        at.saturating_add(secs(wire as f64 / rate))
    }

    /// Whether a poll right after a segment left would send another. The window alone decides
    /// it for a plain window without SACK, send jitter or a FIN to come (`lean`): the next poll
    /// finds no retransmission pending (the segment took it) and goes straight to
    /// `window_allows`, with the same window in force (`cwnd`: a segment does not move a plain
    /// window). Otherwise the engine asks (`More`).
    #[inline]
    pub(super) fn after_segment(&self, cwnd: f64) -> Transmit {
        if self.lean && !self.fin_pending && self.window_allows_in(cwnd).is_none() {
            Transmit::Last
        } else {
            Transmit::More
        }
    }
}
