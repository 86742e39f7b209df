//! Fast recovery with SACK (RFC 6675 §5): the transport sends by its `pipe` estimate.

use super::TcpSender;
use crate::endpoint::Transmit;
use crate::packet::Packet;
use crate::time::Time;

impl TcpSender {
    /// RFC 6675 IsLost: more than (DupThresh − 1)·SMSS bytes SACKed above.
    #[inline]
    pub(super) fn lost_threshold(&self) -> u64 {
        (self.dupthresh.saturating_sub(1)) as u64 * self.mss as u64
    }

    /// Steps 4.3–4.4: while cwnd leaves room for a segment beside `pipe`, retransmit the first
    /// lost hole above HighRxt, else send new data. With an empty pipe one segment may always
    /// go (as `window_allows`), so that a window below one MSS cannot stall recovery until the
    /// timer. A controller that paces every segment (`pace_all`) paces these too.
    pub(super) fn sack_transmit(&mut self, now: Time, slot: &mut Packet) -> Transmit {
        let Some(off) = self.sack_next() else { return Transmit::Idle };
        if self.pace_all && !self.pace_allows(now) {
            return Transmit::Idle;
        }
        let new_data = off >= self.snd_max;
        let len = self.segment(now, off, slot);
        if new_data {
            self.snd_nxt = off + len as u64;
        }
        Transmit::More
    }

    /// The offset `sack_transmit` would send now (a lost hole or new data), if any.
    pub(super) fn sack_next(&self) -> Option<u64> {
        let more_than = self.lost_threshold();
        let pipe = self.board.pipe(self.snd_una, self.snd_max, self.high_rxt, more_than);
        // A NaN window sends nothing, as in `window_allows`.
        let room = (pipe + self.mss as u64) as f64 <= self.cwnd();
        if pipe > 0 && !room {
            return None;
        }
        if let Some(off) = self.board.next_lost(self.snd_una.max(self.high_rxt), more_than) {
            if off < self.snd_max {
                return Some(off);
            }
        }
        if self.snd_nxt < self.snd_max || self.snd_nxt >= self.data_end() {
            return None;
        }
        Some(self.snd_nxt)
    }

    /// Record a retransmission of [start, end) sent while snd_max was what it is now.
    pub(super) fn log_retransmission(&mut self, start: u64, end: u64) {
        let e = Resent { start, end, mark: self.snd_max, lost: false };
        let i = self.rxt_log.partition_point(|r| r.start < start);
        match self.rxt_log.get_mut(i) {
            Some(r) if r.start == start => *r = e,
            _ => self.rxt_log.insert(i, e),
        }
    }

    /// `TcpParams::lost_retransmit`: forget the retransmissions that arrived (acknowledged or
    /// SACKed) and mark lost each one still missing while more than (DupThresh − 1)·SMSS of
    /// data sent after it has been SACKed (RFC 8985 §6.2: a segment is lost when one sent after
    /// it was delivered; DupThresh's margin for reordering instead of RACK's time window).
    /// Returns whether the lowest hole's retransmission is among them.
    pub(super) fn detect_lost_retransmissions(&mut self) -> bool {
        let (una, more_than) = (self.snd_una, self.lost_threshold());
        let board = &self.board;
        self.rxt_log.retain(|r| r.start >= una && board.sacked_end(r.start).is_none_or(|e| e < r.end));
        let mut head = false;
        for r in self.rxt_log.iter_mut().filter(|r| !r.lost) {
            if board.sacked_above(r.mark) > more_than {
                r.lost = true;
                head |= r.start <= una;
            }
        }
        head
    }

    /// The lowest retransmission found lost and not yet sent again.
    pub(super) fn next_lost_retransmission(&self) -> Option<u64> {
        self.rxt_log.iter().find(|r| r.lost).map(|r| r.start)
    }
}

/// A retransmission not yet known to have arrived (`TcpParams::lost_retransmit`): its bytes,
/// snd_max when it left, and whether SACKs of later data showed it lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Resent {
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) mark: u64,
    pub(super) lost: bool,
}
