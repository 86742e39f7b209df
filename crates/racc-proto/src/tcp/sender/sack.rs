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
    /// timer.
    pub(super) fn sack_transmit(&mut self, now: Time, slot: &mut Packet) -> Transmit {
        let more_than = self.lost_threshold();
        let pipe = self.board.pipe(self.snd_una, self.snd_max, self.high_rxt, more_than);
        // A NaN window sends nothing, as in `window_allows`.
        let room = (pipe + self.mss as u64) as f64 <= self.cwnd();
        if pipe > 0 && !room {
            return Transmit::Idle;
        }
        if let Some(off) = self.board.next_lost(self.snd_una.max(self.high_rxt), more_than) {
            if off < self.snd_max {
                self.segment(now, off, slot);
                return Transmit::More;
            }
        }
        if self.snd_nxt < self.snd_max || self.snd_nxt >= self.data_end() {
            return Transmit::Idle;
        }
        let off = self.snd_nxt;
        let len = self.segment(now, off, slot);
        self.snd_nxt = off + len as u64;
        Transmit::More
    }
}
