//! The CCID2 receiver (RFC 4340 §11, RFC 4341 §6): one ACK per Ack Ratio data packets, each
//! with the Ack Vector of everything not yet known to the sender to have been reported; the
//! sender's acknowledgements of ACKs let it forget (RFC 4340 §11.4.2), so what it holds stays
//! bounded. Everything received is delivered: DCCP is unreliable.
//!
//! - The Ack Ratio is the one the latest data packet carries (the sender sets it, §6.1.2).
//! - An ACK also goes after `ack_timeout` with data held below the ratio, so a window smaller
//!   than R (a tail, a loss) still gets acknowledged [reconstructed, docs/PROTOCOLS.md §11].
//! - The timestamp echo is the latest data packet's, with the time it was held added
//!   (Timestamp Echo's Elapsed Time, RFC 4340 §13.3): the sender's sample is the path's RTT.
//! - The echo hook copies a VCP code into each ACK (the largest since the previous ACK).

use super::seq;
use crate::endpoint::{Endpoint, EndpointStats, FlowConfig};
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{ecn, hdr, DccpHeader, Direction, Kind, Packet};
use crate::tcp::AckEcho;
use crate::time::{secs, Dur, Time};
use std::collections::VecDeque;

use super::ack_vector::ReceiveLog;
use super::params::DccpParams;

pub struct DccpReceiver {
    flow: u32,
    size: Option<u64>,
    ack_timeout: Dur,
    ack_ecn: u8,
    echo: Option<Box<dyn AckEcho>>,
    log: ReceiveLog,
    /// The Ack Ratio in force.
    ratio: u16,
    /// Data packets since the last ACK, and when the first of them arrived.
    unacked: u32,
    held_since: Option<Time>,
    /// Timestamp of the latest data packet and its arrival time.
    latest_ts: Time,
    latest_at: Time,
    next_ack_seq: u64,
    /// ACKs sent and not yet acknowledged: (ACK sequence number, greatest data packet it reported).
    sent_acks: VecDeque<(u64, u64)>,
    ack_due: bool,
    /// A Request to answer, with its timestamp.
    response_due: Option<Time>,
    bytes: u64,
    pkts: u64,
    acks_sent: u64,
    max_span: u64,
}

impl DccpReceiver {
    pub fn new(cfg: &FlowConfig, p: &DccpParams, echo: Option<Box<dyn AckEcho>>) -> DccpReceiver {
        DccpReceiver {
            flow: cfg.flow,
            size: cfg.size_bytes,
            ack_timeout: secs(p.ack_timeout),
            ack_ecn: if p.ecn_capable { ecn::ECT0 } else { ecn::NOT_ECT },
            echo,
            log: ReceiveLog::new(cfg.isn as u64),
            ratio: p.ack_ratio.max(1),
            unacked: 0,
            held_since: None,
            latest_ts: 0,
            latest_at: 0,
            next_ack_seq: 0,
            sent_acks: VecDeque::with_capacity(16),
            ack_due: false,
            response_due: None,
            bytes: 0,
            pkts: 0,
            acks_sent: 0,
            max_span: 0,
        }
    }

    /// What the Ack Vector record holds now: (packets spanned, runs), and the most packets it
    /// ever spanned.
    pub fn record_size(&self) -> ((u64, usize), u64) {
        (self.log.span(), self.max_span)
    }

    /// ACKs sent and not yet acknowledged by the sender.
    pub fn unacknowledged_acks(&self) -> usize {
        self.sent_acks.len()
    }

    fn on_data(&mut self, now: Time, pkt: &Packet, h: &DccpHeader) {
        let near = self.log.greatest().unwrap_or(h.seq);
        let s = seq::unwrap(h.seq, near);
        if !self.log.on_data(s, pkt.ecn == ecn::CE) {
            return;
        }
        self.max_span = self.max_span.max(self.log.span().0);
        self.bytes += pkt.payload as u64;
        self.pkts += 1;
        self.ratio = h.ack_ratio.max(1);
        if let Some(e) = self.echo.as_mut() {
            e.on_forward(now, pkt);
        }
        self.latest_ts = h.ts_val;
        self.latest_at = now;
        self.unacked += 1;
        self.held_since.get_or_insert(now);
        if self.unacked >= self.ratio as u32 {
            self.ack_due = true;
        }
    }

    /// The sender acknowledged our ACK `a` (and every one before it).
    fn on_ack_of_ack(&mut self, a: u64) {
        let mut upto = None;
        while let Some(&(s, g)) = self.sent_acks.front() {
            if s > a {
                break;
            }
            upto = Some(g);
            self.sent_acks.pop_front();
        }
        if let Some(g) = upto {
            self.log.prune(g);
        }
    }
}

impl Endpoint for DccpReceiver {
    fn start(&mut self, _now: Time) {}

    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        let Some(h) = pkt.dccp_hdr().copied() else { return };
        match pkt.kind {
            Kind::Syn => self.response_due = Some(h.ts_val),
            Kind::Data => self.on_data(now, pkt, &h),
            Kind::Ack => {
                let near = self.next_ack_seq.saturating_sub(1);
                self.on_ack_of_ack(seq::unwrap(h.ack, near));
            }
            _ => {}
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if let Some(ts) = self.response_due.take() {
            let h = DccpHeader { ts_ecr: ts, ..Default::default() };
            let mut p = Packet::dccp(self.flow, Kind::SynAck, hdr::IPV4 + hdr::DCCP_ACK, 0, h);
            p.dir = Direction::Return;
            return Some(p);
        }
        if !self.ack_due {
            return None;
        }
        self.ack_due = false;
        let greatest = self.log.greatest()?;
        let s = self.next_ack_seq;
        self.next_ack_seq += 1;
        let v = self.log.encode();
        let h = DccpHeader {
            seq: seq::wire(s),
            ack: seq::wire(greatest),
            ack_vector: v,
            ts_ecr: self.latest_ts + (now - self.latest_at),
            ..Default::default()
        };
        let mut p = Packet::dccp(self.flow, Kind::Ack, hdr::IPV4 + hdr::DCCP_ACK + v.wire_len(), 0, h);
        p.dir = Direction::Return;
        p.ecn = self.ack_ecn;
        if let Some(e) = self.echo.as_mut() {
            e.fill_ack(now, &mut p);
        }
        self.sent_acks.push_back((s, greatest));
        self.unacked = 0;
        self.held_since = None;
        self.acks_sent += 1;
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.held_since.map(|t| t + self.ack_timeout)
    }

    fn on_timeout(&mut self, now: Time) {
        if self.held_since.is_some_and(|t| t + self.ack_timeout <= now) {
            self.ack_due = true;
        }
    }

    fn stats(&self) -> EndpointStats {
        EndpointStats { bytes: self.bytes, done: self.size.is_some_and(|s| self.bytes >= s), ..Default::default() }
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("dccp_acks_sent", "packets", MetricValue::Count(self.acks_sent));
        out.put("dccp_ack_vector_span", "packets", MetricValue::Gauge(self.log.span().0 as f64));
    }
}
