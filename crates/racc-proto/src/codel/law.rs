//! CoDel's dequeue-time state machine (RFC 8289 §5.5), one packet at a time.
//!
//! The RFC's `dequeue()` may drop several packets in one call (its `while` loop). A racc port
//! asks its module about one head at a time and, after a drop, asks again about the next head at
//! the same instant; so the loop is unrolled here into [`Phase`]s, and each call does what the
//! RFC does between two `dodequeue()`s. A drop that leaves the queue empty does at once what the
//! RFC's next `dodequeue()` would do on finding no packet.

use crate::time::Time;

/// RFC 8289 §3.3 and §5.6, `control_law()`: the next drop `interval / sqrt(count)` after `t`,
/// so that the drop rate rises with the square root of the drops (a linear fall of a TCP
/// flow's throughput). Exact square root, as the RFC's pseudocode; truncated to the nanosecond.
pub fn control_law(t: Time, interval: Time, count: u32) -> Time {
    t + (interval as f64 / (count.max(1) as f64).sqrt()) as Time
}

/// Where the current dequeue is: what the RFC's code does with the next `dodequeue()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// A new dequeue: the first `dodequeue()` of `dequeue()`.
    Start,
    /// The packet before was dropped in the drop state's loop: the loop's `dodequeue()`.
    DropLoop,
    /// The packet before was the drop that entered the drop state: its `dodequeue()`, whose
    /// packet is sent whatever it says.
    AfterEntry,
}

/// What to do with the head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Send,
    Drop,
    /// Mark CE and send (ECN mode, an ECN-capable packet: Linux `codel_dequeue`).
    Mark,
}

/// The per-queue state (RFC 8289 §5.2) and the constants it works with (§5.3).
#[derive(Clone, Debug, PartialEq)]
pub struct CodelLaw {
    target: Time,
    interval: Time,
    /// MAXPACKET: no drop while at most this many bytes wait behind the head.
    mtu: u64,
    /// When the sojourn time will have been above TARGET for INTERVAL; 0 while below.
    first_above_time: Time,
    /// When the next drop is due in the drop state.
    pub drop_next: Time,
    /// Drops since the drop state was entered (with the re-entry rule's carry-over).
    pub count: u32,
    /// `count` when the drop state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    phase: Phase,
}

impl CodelLaw {
    pub fn new(target: Time, interval: Time, mtu: u64) -> CodelLaw {
        CodelLaw {
            target,
            interval,
            mtu,
            first_above_time: 0,
            drop_next: 0,
            count: 0,
            lastcount: 0,
            dropping: false,
            phase: Phase::Start,
        }
    }

    /// RFC 8289 §5.5 `dodequeue()`'s test on a packet that waited `sojourn` with `behind` bytes
    /// after it: has the sojourn time been at or above TARGET for a whole INTERVAL? (The backlog
    /// term keeps a slow link busy: an MTU or less behind is never dropped, §5.5's comment.)
    fn ok_to_drop(&mut self, now: Time, sojourn: Time, behind: u64) -> bool {
        if sojourn < self.target || behind <= self.mtu {
            // Went below: stay below for at least INTERVAL.
            self.first_above_time = 0;
            false
        } else if self.first_above_time == 0 {
            self.first_above_time = now + self.interval;
            false
        } else {
            now >= self.first_above_time
        }
    }

    /// The head at `now`, after `sojourn` in the queue, with `behind` bytes waiting after it
    /// (`last`: none). `can_mark`: the module marks instead of dropping and the packet is
    /// ECN-capable.
    pub fn dequeue(&mut self, now: Time, sojourn: Time, behind: u64, last: bool, can_mark: bool) -> Action {
        let ok = self.ok_to_drop(now, sojourn, behind);
        let (act, next) = match self.phase {
            Phase::Start if self.dropping => {
                if !ok {
                    // Sojourn time below TARGET: leave the drop state.
                    self.dropping = false;
                }
                self.drop_loop(now, can_mark)
            }
            Phase::Start if ok => self.enter_drop_state(now, can_mark),
            Phase::Start | Phase::AfterEntry => (Action::Send, Phase::Start),
            Phase::DropLoop => {
                if ok {
                    self.drop_next = control_law(self.drop_next, self.interval, self.count);
                } else {
                    self.dropping = false;
                }
                self.drop_loop(now, can_mark)
            }
        };
        self.phase = next;
        if act == Action::Drop && last {
            // The RFC's next dodequeue() finds the queue empty: below TARGET; inside the drop
            // state's loop that also leaves the drop state.
            self.first_above_time = 0;
            if next == Phase::DropLoop {
                self.dropping = false;
            }
            self.phase = Phase::Start;
        }
        act
    }

    /// The drop state's `while (now >= drop_next && dropping)`: drop this head (`++count`), or
    /// send it. In ECN mode a mark ends the dequeue and schedules the next (Linux).
    fn drop_loop(&mut self, now: Time, can_mark: bool) -> (Action, Phase) {
        if !(self.dropping && now >= self.drop_next) {
            return (Action::Send, Phase::Start);
        }
        self.count += 1;
        if can_mark {
            self.drop_next = control_law(self.drop_next, self.interval, self.count);
            (Action::Mark, Phase::Start)
        } else {
            (Action::Drop, Phase::DropLoop)
        }
    }

    /// Enter the drop state (RFC 8289 §5.5): the re-entry rule starts `count` at the drops of
    /// the last cycle, `count - lastcount`, if that exceeds 1 and the last drop was less than
    /// 16 INTERVALs ago ("the drop rate that controlled the queue on the last cycle is a good
    /// starting point"; `now - drop_next` stands for the time since the last drop); else at 1.
    fn enter_drop_state(&mut self, now: Time, can_mark: bool) -> (Action, Phase) {
        self.dropping = true;
        let delta = self.count.wrapping_sub(self.lastcount);
        let recent = (now as i128 - self.drop_next as i128) < 16 * self.interval as i128;
        self.count = if delta > 1 && recent { delta } else { 1 };
        self.lastcount = self.count;
        self.drop_next = control_law(now, self.interval, self.count);
        if can_mark {
            (Action::Mark, Phase::Start)
        } else {
            (Action::Drop, Phase::AfterEntry)
        }
    }
}
