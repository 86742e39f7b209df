//! The Ack Ratio R (VCP-DCCP's ζ), kept by the sender (RFC 4341 §6.1.2; docs/PROTOCOLS.md §11).
//!
//! - Bounds: "seed" 2 ≤ R ≤ ⌊cwnd⌋ (R = 1 while cwnd < 2), "rfc" 1 ≤ R ≤ ⌈⌊cwnd⌋/2⌉; after any
//!   change of cwnd, R is brought back within them (a halving with R > cwnd sets R = cwnd).
//! - Congestion on the ACK path: ACKs lost (a gap in the receiver's ACK sequence numbers) or
//!   ECN-marked within a window of data double R, once per window.
//! - ⌈cwnd/(R² − R)⌉ consecutive windows of data without a lost or marked ACK lower R by one.
//!
//! A "window of data" runs from the packet sent when it begins to the acknowledgement of that
//! packet, the same clock TCP's once-per-RTT rules use.

use super::params::AckRatioBounds;

#[derive(Clone, Debug)]
pub struct AckRatio {
    r: u16,
    bounds: AckRatioBounds,
    adjust: bool,
    /// The current window of data ends when a packet at or above this is acknowledged.
    window_end: u64,
    congested: bool,
    clean_windows: u64,
    /// Greatest ACK sequence number seen.
    last_ack: Option<u64>,
    ack_losses: u64,
    doublings: u64,
    decrements: u64,
}

impl AckRatio {
    pub fn new(initial: u16, bounds: AckRatioBounds, adjust: bool, cwnd: f64, first_seq: u64) -> AckRatio {
        let mut a = AckRatio {
            r: initial.max(1),
            bounds,
            adjust,
            window_end: first_seq,
            congested: false,
            clean_windows: 0,
            last_ack: None,
            ack_losses: 0,
            doublings: 0,
            decrements: 0,
        };
        a.clamp(cwnd);
        a
    }

    /// The ratio now.
    #[inline]
    pub fn get(&self) -> u16 {
        self.r
    }

    /// (lowest, highest) R allowed at window `cwnd`.
    pub fn bounds(&self, cwnd: f64) -> (u16, u16) {
        let w = cwnd.floor().clamp(1.0, u16::MAX as f64) as u16;
        match self.bounds {
            AckRatioBounds::Seed if w < 2 => (1, 1),
            AckRatioBounds::Seed => (2, w),
            AckRatioBounds::Rfc => (1, w.div_ceil(2)),
        }
    }

    /// Bring R within its bounds at window `cwnd`.
    pub fn clamp(&mut self, cwnd: f64) {
        let (lo, hi) = self.bounds(cwnd);
        self.r = self.r.clamp(lo, hi);
    }

    /// An ACK with sequence number `seq` arrived, ECN-marked or not. A gap since the previous
    /// one counts its ACKs as lost.
    pub fn on_ack(&mut self, seq: u64, marked: bool, cwnd: f64) {
        let lost = match self.last_ack {
            Some(last) if seq <= last => return, // old or duplicate
            Some(last) => seq - last - 1,
            None => 0,
        };
        self.last_ack = Some(seq);
        self.ack_losses += lost;
        if (lost > 0 || marked) && !self.congested {
            self.congested = true;
            if self.adjust {
                let (_, hi) = self.bounds(cwnd);
                let doubled = self.r.saturating_mul(2).min(hi);
                if doubled > self.r {
                    self.r = doubled;
                    self.doublings += 1;
                }
            }
        }
        self.clamp(cwnd);
    }

    /// Data up to `acked` is acknowledged; `next` is the next sequence number to send. Closes
    /// the window of data when its first packet is acknowledged.
    pub fn on_data_acked(&mut self, acked: u64, next: u64, cwnd: f64) {
        if acked < self.window_end {
            return;
        }
        if self.congested {
            self.clean_windows = 0;
        } else {
            self.clean_windows += 1;
            let r = self.r as f64;
            if self.adjust && self.r > 1 && self.clean_windows as f64 >= (cwnd / (r * r - r)).ceil() {
                let (lo, _) = self.bounds(cwnd);
                if self.r > lo {
                    self.r -= 1;
                    self.decrements += 1;
                }
                self.clean_windows = 0;
            }
        }
        self.congested = false;
        self.window_end = next;
        self.clamp(cwnd);
    }

    /// ACKs found lost so far.
    pub fn ack_losses(&self) -> u64 {
        self.ack_losses
    }

    /// Times R was doubled and lowered by one.
    pub fn changes(&self) -> (u64, u64) {
        (self.doublings, self.decrements)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_follow_the_window() {
        let a = AckRatio::new(2, AckRatioBounds::Seed, true, 10.0, 0);
        assert_eq!(a.bounds(1.0), (1, 1));
        assert_eq!(a.bounds(1.9), (1, 1));
        assert_eq!(a.bounds(2.0), (2, 2));
        assert_eq!(a.bounds(7.6), (2, 7));
        let r = AckRatio::new(2, AckRatioBounds::Rfc, true, 10.0, 0);
        assert_eq!(r.bounds(1.0), (1, 1));
        assert_eq!(r.bounds(7.0), (1, 4));
        assert_eq!(AckRatio::new(9, AckRatioBounds::Seed, true, 5.0, 0).get(), 5, "R > cwnd is cut to cwnd");
        assert_eq!(AckRatio::new(2, AckRatioBounds::Seed, true, 1.0, 0).get(), 1);
    }

    #[test]
    fn lost_acks_double_once_per_window_and_clean_windows_step_down() {
        let cwnd = 20.0;
        let mut a = AckRatio::new(2, AckRatioBounds::Seed, true, cwnd, 0);
        a.on_ack(0, false, cwnd);
        a.on_ack(1, false, cwnd);
        assert_eq!(a.get(), 2);
        a.on_ack(4, false, cwnd); // ACKs 2 and 3 lost
        assert_eq!((a.get(), a.ack_losses()), (4, 2));
        a.on_ack(6, false, cwnd); // another loss in the same window: no second doubling
        assert_eq!((a.get(), a.ack_losses()), (4, 3));
        a.on_data_acked(0, 20, cwnd); // the window ends
        a.on_ack(7, true, cwnd); // a marked ACK in the next window
        assert_eq!(a.get(), 8);
        a.on_data_acked(20, 40, cwnd);
        // Clean windows: ⌈20/(8²−8)⌉ = 1 per step at R = 8, ⌈20/42⌉ = 1 at 7, ... ⌈20/2⌉ = 10 at 2... R never below 2.
        let mut end = 40;
        for _ in 0..200 {
            a.on_data_acked(end, end + 20, cwnd);
            end += 20;
        }
        assert_eq!(a.get(), 2);
        let (d, m) = a.changes();
        assert_eq!((d, m), (2, 6));
    }

    #[test]
    fn r_steps_down_after_cwnd_over_r2_minus_r_clean_windows() {
        let cwnd = 24.0;
        let mut a = AckRatio::new(4, AckRatioBounds::Seed, true, cwnd, 0);
        // ⌈24/(16−4)⌉ = 2 clean windows at R = 4.
        a.on_data_acked(0, 10, cwnd);
        assert_eq!(a.get(), 4);
        a.on_data_acked(10, 20, cwnd);
        assert_eq!(a.get(), 3);
        // ⌈24/6⌉ = 4 at R = 3.
        for (i, end) in [20u64, 30, 40].into_iter().enumerate() {
            a.on_data_acked(end, end + 10, cwnd);
            assert_eq!(a.get(), 3, "window {i}");
        }
        a.on_data_acked(50, 60, cwnd);
        assert_eq!(a.get(), 2);
    }
}
