//! Delivery-rate sampling for BBR (draft-cheng-iccrg-delivery-rate-estimation §3; Linux
//! `tcp_rate.c`), kept by the controller from the packets it sees leave (`on_send`) and the
//! ACKs it sees arrive (`on_wire_arrival`, which sees every ACK, also those of a loss recovery),
//! so that the transport stays as it is.
//!
//! Each data transmission records the connection's delivered count and its time when it left;
//! an ACK that newly delivers (cumulatively or by SACK) some transmissions takes the record of
//! the most recently sent one and gives delivered bytes over max(send interval, ACK interval)
//! (draft §3.3; `tcp_rate_gen`). Counts are payload bytes. Application-limited marking is
//! not done: racc's senders are limited by their window or by the flow's size alone.

use crate::packet::{Kind, Packet};
use crate::tcp::seq::SeqSpace;
use crate::time::Time;
use std::collections::VecDeque;

/// One transmission still unacknowledged (draft §3.2's per-packet state).
#[derive(Clone, Copy, Debug)]
struct Sent {
    start: u64,
    end: u64,
    /// When it (last) left.
    sent_at: u64,
    /// `first_sent_time` and `delivered_time` of the connection when it left (draft §3.2:
    /// P.first_sent_time, P.delivered_time).
    first_sent_at: Time,
    delivered_at: Time,
    /// `C.delivered` when it left.
    delivered: u64,
    retransmitted: bool,
    sacked: bool,
    /// Marked lost (by a timeout or a fast retransmit), so not in flight until resent.
    lost: bool,
}

/// A rate sample: what one ACK says about the delivery rate (draft §3.3; Linux `rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Bytes delivered over `interval`; `None` when the ACK delivered nothing timed.
    pub delivered: Option<u64>,
    /// max(send interval, ACK interval), ns; `None` if shorter than the min RTT (an ACK
    /// compression artefact, `tcp_rate_gen`) or unknown.
    pub interval: Option<Time>,
    /// `C.delivered` when the newest delivered packet left (round counting, BBR draft §4.5.1).
    pub prior_delivered: u64,
    /// Bytes this ACK newly delivered (acked or SACKed).
    pub acked_sacked: u64,
    /// RTT of the newest delivered packet that was not retransmitted (Karn), ns.
    pub rtt: Option<Time>,
    /// Bytes in flight before this ACK.
    pub prior_in_flight: u64,
    /// Bytes this ACK's SACK blocks newly showed lost (`DeliveryRate::on_ack`).
    pub lost: u64,
}

impl RateSample {
    /// delivered / interval, bytes per second (`None` for an invalid sample).
    pub fn bw(&self) -> Option<f64> {
        match (self.delivered, self.interval) {
            (Some(d), Some(i)) if i > 0 => Some(d as f64 * 1e9 / i as f64),
            _ => None,
        }
    }
}

/// The connection's delivery state and its unacknowledged transmissions, sorted by offset
/// (new data is appended; a retransmission updates its record in place).
#[derive(Clone, Debug)]
pub struct DeliveryRate {
    seq: SeqSpace,
    sent: VecDeque<Sent>,
    /// C.delivered: bytes delivered so far.
    delivered: u64,
    /// C.delivered_time and C.first_sent_time.
    delivered_at: Time,
    first_sent_at: Time,
    /// Cumulative ACK point and one past the highest byte sent.
    snd_una: u64,
    high: u64,
    /// Bytes sent, not delivered, not marked lost (Linux `tcp_packets_in_flight`).
    in_flight: u64,
    /// One past the highest SACKed byte, and the offset below which every transmission has
    /// been checked for loss (each is checked once, as RFC 6675 marks a hole once).
    sacked_high: u64,
    lost_scan: u64,
    /// (DupThresh − 1)·SMSS: SACKed bytes above a hole beyond this make it lost (RFC 6675 §4
    /// IsLost, with DupThresh 3).
    lost_after: u64,
}

impl DeliveryRate {
    pub fn new(isn: u32, mss: u32) -> DeliveryRate {
        DeliveryRate {
            sacked_high: 0,
            lost_scan: 0,
            lost_after: 2 * mss as u64,
            seq: SeqSpace::new(isn),
            sent: VecDeque::new(),
            delivered: 0,
            delivered_at: 0,
            first_sent_at: 0,
            snd_una: 0,
            high: 0,
            in_flight: 0,
        }
    }

    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// C.delivered_time: when the last ACK that delivered data arrived.
    pub fn delivered_at(&self) -> Time {
        self.delivered_at
    }

    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// One past the highest byte sent (the transport's snd_max).
    pub fn high(&self) -> u64 {
        self.high
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// A packet leaves (draft §3.2, `tcp_rate_skb_sent`): data segments are recorded.
    pub fn on_send(&mut self, now: Time, pkt: &Packet) {
        let Some(h) = pkt.tcp_hdr() else { return };
        if pkt.kind != Kind::Data || pkt.payload == 0 {
            return;
        }
        let start = self.seq.unwrap(h.seq, self.snd_una);
        let end = start + pkt.payload as u64;
        if end <= self.snd_una {
            return;
        }
        // Nothing outstanding: the sample's intervals start now (draft §3.2).
        if self.sent.is_empty() {
            (self.first_sent_at, self.delivered_at) = (now, now);
        }
        let (first_sent_at, delivered_at, delivered) = (self.first_sent_at, self.delivered_at, self.delivered);
        if start < self.high {
            // A retransmission: its record takes the new send's state (Linux stamps the skb
            // again). Records are sorted by start.
            let i = self.sent.partition_point(|s| s.end <= start);
            if let Some(s) = self.sent.get_mut(i).filter(|s| s.start <= start && !s.sacked) {
                if s.lost {
                    s.lost = false;
                    self.in_flight += s.end - s.start;
                }
                *s = Sent { sent_at: now, first_sent_at, delivered_at, delivered, retransmitted: true, ..*s };
            }
            return;
        }
        self.sent.push_back(Sent {
            start,
            end,
            sent_at: now,
            first_sent_at,
            delivered_at,
            delivered,
            retransmitted: false,
            sacked: false,
            lost: false,
        });
        self.high = end;
        self.in_flight += end - start;
    }

    /// Mark the lowest unacknowledged transmission lost (a fast retransmit's segment); its
    /// bytes leave the flight until it is resent. Returns whether one was marked.
    pub fn mark_first_lost(&mut self) -> bool {
        if let Some(s) = self.sent.iter_mut().find(|s| !s.sacked) {
            if !s.lost {
                s.lost = true;
                self.in_flight -= s.end - s.start;
                return true;
            }
        }
        false
    }

    /// A timeout: every unacknowledged transmission is lost (Linux `tcp_enter_loss`).
    pub fn mark_all_lost(&mut self) {
        for s in self.sent.iter_mut().filter(|s| !s.sacked && !s.lost) {
            s.lost = true;
        }
        self.in_flight = 0;
        self.lost_scan = self.high;
    }

    /// Holes with more than (DupThresh − 1)·SMSS SACKed above them are lost (RFC 6675 §4
    /// IsLost, the scoreboard the transport's recovery also keeps): out of the flight until
    /// resent. Returns the bytes newly marked.
    fn mark_sack_losses(&mut self) -> u64 {
        let limit = self.sacked_high.saturating_sub(self.lost_after);
        let from = self.lost_scan.max(self.snd_una);
        let mut i = self.sent.partition_point(|s| s.end <= from);
        let mut lost = 0;
        while let Some(s) = self.sent.get_mut(i) {
            if s.end >= limit {
                break;
            }
            if !s.sacked && !s.lost {
                s.lost = true;
                lost += s.end - s.start;
            }
            self.lost_scan = s.end;
            i += 1;
        }
        self.in_flight -= lost;
        lost
    }

    /// An ACK arrives: deliver what it newly covers and make the rate sample (draft §3.3,
    /// `tcp_rate_skb_delivered` per packet then `tcp_rate_gen`). `min_rtt` bounds the interval
    /// from below.
    pub fn on_ack(&mut self, now: Time, pkt: &Packet, min_rtt: Option<Time>) -> RateSample {
        let mut rs = RateSample { prior_in_flight: self.in_flight, ..Default::default() };
        let Some(h) = pkt.tcp_hdr() else { return rs };
        if pkt.kind != Kind::Ack {
            return rs;
        }
        let ack = self.seq.unwrap(h.ack, self.snd_una);
        if ack > self.high {
            return rs;
        }
        let mut newest: Option<Sent> = None;
        let take = |s: &Sent, rs: &mut RateSample, newest: &mut Option<Sent>| {
            rs.acked_sacked += s.end - s.start;
            let newer = match newest {
                None => true,
                Some(n) => s.delivered > n.delivered || (s.delivered == n.delivered && s.sent_at > n.sent_at),
            };
            if newer {
                *newest = Some(*s);
            }
            if !s.retransmitted {
                let r = now.saturating_sub(s.sent_at);
                rs.rtt = Some(rs.rtt.map_or(r, |x: Time| x.min(r)));
            }
        };
        // Cumulatively acknowledged (a partly acknowledged record stays until it is whole).
        if ack > self.snd_una {
            self.snd_una = ack;
            while let Some(s) = self.sent.front().copied() {
                if s.end > ack {
                    break;
                }
                self.sent.pop_front();
                if !s.sacked {
                    take(&s, &mut rs, &mut newest);
                    if !s.lost {
                        self.in_flight -= s.end - s.start;
                    }
                }
            }
        }
        // SACKed.
        for (l, r) in h.sack.iter() {
            let (l, r) = (self.seq.unwrap(l, self.snd_una), self.seq.unwrap(r, self.snd_una));
            if r <= l || r > self.high {
                continue;
            }
            let mut i = self.sent.partition_point(|s| s.start < l);
            while let Some(s) = self.sent.get_mut(i) {
                if s.end > r {
                    break;
                }
                if !s.sacked {
                    s.sacked = true;
                    if !s.lost {
                        self.in_flight -= s.end - s.start;
                    }
                    let copy = *s;
                    take(&copy, &mut rs, &mut newest);
                }
                i += 1;
            }
            self.sacked_high = self.sacked_high.max(r);
        }
        rs.lost = self.mark_sack_losses();
        self.delivered += rs.acked_sacked;
        if rs.acked_sacked > 0 {
            self.delivered_at = now;
        }
        let Some(p) = newest else { return rs };
        // The newest delivered packet's send time starts the next send interval.
        self.first_sent_at = p.sent_at;
        rs.prior_delivered = p.delivered;
        rs.delivered = Some(self.delivered - p.delivered);
        let send_elapsed = p.sent_at.saturating_sub(p.first_sent_at);
        let ack_elapsed = now.saturating_sub(p.delivered_at);
        let interval = send_elapsed.max(ack_elapsed);
        rs.interval = (interval > 0 && min_rtt.is_none_or(|m| interval >= m)).then_some(interval);
        rs
    }
}
