//! The CCID2 sender (RFC 4341; VCP-DCCP §2 and Fig. 2; docs/PROTOCOLS.md §11).
//!
//! - Sends a data packet while pipe < cwnd (pipe: data packets sent and neither acknowledged
//!   nor found lost; a packet goes only if pipe + 1 ≤ cwnd, which for a whole cwnd is the same
//!   thing and for a VCP window of fractional packets never lets pipe pass cwnd). The literal
//!   pipe < cwnd on a fractional window lets every flow send ⌈cwnd⌉, which an MD of 0.875
//!   seldom lowers when windows are about 2 packets (VCP-DCCP's T3 share): measured on the quick
//!   T3 run, DCCP/VCP's mean queue went from 14 to 91 packets with 1.5 % drops. pipe + 1 ≤ cwnd
//!   is also TCP/VCP's rule (in bytes), so the two VCP transports compare alike.
//! - Never retransmits: each sequence number leaves once. A finite flow is done when every
//!   packet has been sent and is acknowledged, lost or given up by a timeout.
//! - Loss: a packet is lost once `numdupack` packets sent after it are acknowledged (Ack
//!   Vector, RFC 4341 §5); an ECN-marked packet is a congestion event too (not under VCP, whose
//!   CE is the overload code). The response (cwnd halved) comes at most once per window: a
//!   loss or mark of a packet sent before the last response is part of it.
//! - RTO: RFC 6298's estimator on timestamp echoes (no retransmissions, so every sample is
//!   valid), floored at the run's `min_rto`. On expiry: ssthresh = max(cwnd/2, 2), cwnd = 1,
//!   pipe = 0 (what was outstanding is forgotten), back-off ×2.
//! - Ack Ratio: [`AckRatio`], written into every data packet.
//! - Acknowledgements of ACKs (RFC 4341 §6.1.1: at least once per window): a DCCP-Ack on the
//!   data path after every window's worth of ACKs, carrying the greatest ACK sequence number
//!   received. Only data packets take sequence numbers here (RFC 4340 numbers every packet), so
//!   the Ack Vector and pipe speak of data alone.
//! - With `handshake`, a Request (`Kind::Syn`) and the Response open the connection.

use super::ack_ratio::AckRatio;
use super::ack_vector::ranges;
use super::params::DccpParams;
use super::seq;
use super::window::DccpWindow;
use crate::endpoint::{Endpoint, EndpointStats, FlowConfig};
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{ack_state, ecn, hdr, DccpHeader, Kind, Packet};
use crate::tcp::RttEstimator;
use crate::time::{secs, to_secs, Time, NS_PER_MS};
use std::collections::VecDeque;

/// What became of a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Outstanding,
    Acked,
    Lost,
    /// Outstanding at a timeout: no longer in pipe, never counted again.
    Forgotten,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Requesting,
    Open,
}

pub struct DccpSender {
    flow: u32,
    packet_size: u32,
    mss: u32,
    /// Data packets the application offers (None: always more), and the last one's payload.
    total_pkts: Option<u64>,
    last_payload: u32,
    stopped: bool,
    handshake: bool,
    phase: Phase,
    data_ecn: u8,
    numdupack: u32,
    window: DccpWindow,
    ratio: AckRatio,
    rtt: RttEstimator,
    /// Sequence number of the first data packet, of `fates[0]`, and of the next to send.
    first: u64,
    base: u64,
    next: u64,
    fates: VecDeque<Fate>,
    pipe: u64,
    /// Losses and marks of packets below this belong to the last response's window.
    recover: u64,
    rto_at: Option<Time>,
    request_at: Option<Time>,
    request_due: bool,
    /// Greatest ACK sequence number received, ACKs since the last ack-of-ack, one due.
    greatest_ack: Option<u64>,
    acks_since_aoa: u64,
    aoa_due: bool,
    last_code: u8,
    // Counters.
    acked_pkts: u64,
    acked_bytes: u64,
    lost_pkts: u64,
    marked_pkts: u64,
    forgotten_pkts: u64,
    timeouts: u64,
    aoa_sent: u64,
}

impl DccpSender {
    pub fn new(cfg: &FlowConfig, p: &DccpParams, window: DccpWindow, data_ecn: u8) -> DccpSender {
        let mss = cfg.packet_size.saturating_sub(hdr::IPV4 + hdr::DCCP_DATA).max(1);
        let (total_pkts, last_payload) = match cfg.size_bytes {
            Some(b) => {
                let n = b.div_ceil(mss as u64);
                (Some(n), (b - n.saturating_sub(1) * mss as u64) as u32)
            }
            None => (None, mss),
        };
        let first = cfg.isn as u64;
        let ratio = AckRatio::new(p.ack_ratio, p.ack_ratio_bounds, p.ack_ratio_adjust, window.cwnd(), first);
        let rtt = RttEstimator::new(
            secs(p.initial_rto),
            cfg.min_rto,
            secs(p.max_rto),
            NS_PER_MS / 1000,
            crate::tcp::RtoRule::Rfc6298,
        );
        DccpSender {
            flow: cfg.flow,
            packet_size: cfg.packet_size,
            mss,
            total_pkts,
            last_payload,
            stopped: false,
            handshake: cfg.handshake,
            phase: Phase::Idle,
            data_ecn,
            numdupack: p.numdupack,
            window,
            ratio,
            rtt,
            first,
            base: first,
            next: first,
            fates: VecDeque::with_capacity(64),
            pipe: 0,
            recover: first,
            rto_at: None,
            request_at: None,
            request_due: false,
            greatest_ack: None,
            acks_since_aoa: 0,
            aoa_due: false,
            last_code: ecn::NOT_ECT,
            acked_pkts: 0,
            acked_bytes: 0,
            lost_pkts: 0,
            marked_pkts: 0,
            forgotten_pkts: 0,
            timeouts: 0,
            aoa_sent: 0,
        }
    }

    /// Congestion window, packets.
    pub fn cwnd(&self) -> f64 {
        self.window.cwnd()
    }

    /// Data packets in flight by the sender's estimate.
    pub fn pipe(&self) -> u64 {
        self.pipe
    }

    /// The Ack Ratio in force.
    pub fn ack_ratio(&self) -> u16 {
        self.ratio.get()
    }

    pub fn window(&self) -> &DccpWindow {
        &self.window
    }

    /// Data packets found lost, and given up at timeouts.
    pub fn losses(&self) -> (u64, u64) {
        (self.lost_pkts, self.forgotten_pkts)
    }

    fn has_data(&self) -> bool {
        !self.stopped && self.total_pkts.is_none_or(|n| self.next - self.first < n)
    }

    fn payload(&self, s: u64) -> u32 {
        match self.total_pkts {
            Some(n) if s - self.first + 1 == n => self.last_payload,
            _ => self.mss,
        }
    }

    fn rtt_s(&self) -> f64 {
        self.rtt.srtt().map_or(0.1, to_secs)
    }

    /// Resolved packets leave the front of the record.
    fn advance_base(&mut self) {
        while self.fates.front().is_some_and(|&f| f != Fate::Outstanding) {
            self.fates.pop_front();
            self.base += 1;
        }
    }

    /// A congestion event on packet `s`: halve unless the last response already covers it.
    fn congestion(&mut self, s: u64) -> bool {
        if s < self.recover {
            return false;
        }
        self.window.halve();
        self.recover = self.next;
        self.ratio.clamp(self.window.cwnd());
        true
    }

    fn on_ack(&mut self, now: Time, pkt: &Packet, h: &DccpHeader) {
        // The ACK path: sequence gaps are lost ACKs, CE a marked one.
        let a = seq::unwrap(h.seq, self.greatest_ack.unwrap_or(0));
        self.ratio.on_ack(a, pkt.ecn == ecn::CE, self.window.cwnd());
        if self.greatest_ack.is_none_or(|g| a > g) {
            self.greatest_ack = Some(a);
        }
        self.acks_since_aoa += 1;
        if h.ts_ecr > 0 && h.ts_ecr <= now {
            self.rtt.sample(now - h.ts_ecr);
        }
        if self.next == self.base {
            return; // nothing outstanding
        }
        // The Ack Vector: every outstanding packet it reports received is acknowledged.
        let top = self.next - 1;
        let ack = seq::unwrap(h.ack, top);
        let (mut k, mut marked, mut acked_top) = (0u64, None, None);
        for (lo, hi, state) in ranges(&h.ack_vector, ack) {
            if hi < self.base {
                break;
            }
            if state == ack_state::NOT_RECEIVED || lo > top {
                continue;
            }
            for s in lo.max(self.base)..=hi.min(top) {
                let f = &mut self.fates[(s - self.base) as usize];
                if *f == Fate::Outstanding {
                    *f = Fate::Acked;
                    self.pipe -= 1;
                    k += 1;
                    self.acked_pkts += 1;
                    self.acked_bytes += self.payload(s) as u64;
                    acked_top = acked_top.max(Some(s));
                    if state == ack_state::ECN_MARKED {
                        self.marked_pkts += 1;
                        marked = marked.or(Some(s));
                    }
                }
            }
        }
        let lost = self.detect_losses(ack.min(top));
        let code = h.echo & 0b11;
        self.last_code = code;
        let mut responded = false;
        if let Some(s) = lost {
            responded = self.congestion(s);
        }
        if let Some(s) = marked.filter(|_| !self.window.reads_codes()) {
            responded |= self.congestion(s);
        }
        if !responded {
            let rtt = self.rtt_s();
            self.window.on_ack(k, code, self.ratio.get(), rtt, now);
            self.ratio.clamp(self.window.cwnd());
        }
        if let Some(t) = acked_top {
            self.ratio.on_data_acked(t, self.next, self.window.cwnd());
        }
        self.advance_base();
        if k > 0 || lost.is_some() {
            self.rto_at = (self.pipe > 0).then(|| now + self.rtt.rto());
        }
        // Acknowledge ACKs once per window's worth of them.
        let per_window = (self.window.cwnd() / self.ratio.get() as f64).floor().max(1.0) as u64;
        if self.acks_since_aoa >= per_window {
            self.aoa_due = true;
        }
    }

    /// Outstanding packets below the `numdupack`-th acknowledged packet counted down from
    /// `top` are lost. Returns the lowest of those newly lost.
    fn detect_losses(&mut self, top: u64) -> Option<u64> {
        if top < self.base {
            return None;
        }
        let mut seen = 0;
        let mut i = (top - self.base) as usize + 1;
        while i > 0 && seen < self.numdupack {
            i -= 1;
            if self.fates[i] == Fate::Acked {
                seen += 1;
            }
        }
        if seen < self.numdupack {
            return None;
        }
        let mut first = None;
        for j in 0..i {
            if self.fates[j] == Fate::Outstanding {
                self.fates[j] = Fate::Lost;
                self.pipe -= 1;
                self.lost_pkts += 1;
                first = first.or(Some(self.base + j as u64));
            }
        }
        first
    }

    fn send_data(&mut self, now: Time) -> Packet {
        let s = self.next;
        self.next += 1;
        self.fates.push_back(Fate::Outstanding);
        self.pipe += 1;
        let payload = self.payload(s);
        let h = DccpHeader { seq: seq::wire(s), ack_ratio: self.ratio.get(), ts_val: now, ..Default::default() };
        let size = if payload == self.mss { self.packet_size } else { hdr::IPV4 + hdr::DCCP_DATA + payload };
        let mut p = Packet::dccp(self.flow, Kind::Data, size, payload, h);
        p.ecn = self.data_ecn;
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rtt.rto());
        }
        p
    }
}

impl Endpoint for DccpSender {
    fn start(&mut self, now: Time) {
        if self.handshake {
            self.phase = Phase::Requesting;
            self.request_due = true;
            self.request_at = Some(now + self.rtt.rto());
        } else {
            self.phase = Phase::Open;
        }
    }

    fn stop(&mut self, _now: Time) {
        self.stopped = true;
    }

    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        let Some(h) = pkt.dccp_hdr().copied() else { return };
        match pkt.kind {
            Kind::SynAck if self.phase == Phase::Requesting => {
                self.phase = Phase::Open;
                self.request_at = None;
                if h.ts_ecr > 0 && h.ts_ecr <= now {
                    self.rtt.sample(now - h.ts_ecr);
                }
            }
            Kind::Ack if self.phase == Phase::Open => self.on_ack(now, pkt, &h),
            _ => {}
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if self.request_due {
            self.request_due = false;
            let h = DccpHeader { seq: seq::wire(self.first), ts_val: now.max(1), ..Default::default() };
            return Some(Packet::dccp(self.flow, Kind::Syn, hdr::IPV4 + hdr::DCCP_DATA, 0, h));
        }
        if self.phase != Phase::Open {
            return None;
        }
        if self.aoa_due {
            self.aoa_due = false;
            self.acks_since_aoa = 0;
            self.aoa_sent += 1;
            let h = DccpHeader { ack: seq::wire(self.greatest_ack.unwrap_or(0)), ..Default::default() };
            return Some(Packet::dccp(self.flow, Kind::Ack, hdr::IPV4 + hdr::DCCP_ACK, 0, h));
        }
        if self.has_data() && (self.pipe + 1) as f64 <= self.window.cwnd() {
            return Some(self.send_data(now));
        }
        None
    }

    fn poll_timeout(&self) -> Option<Time> {
        match (self.rto_at, self.request_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_timeout(&mut self, now: Time) {
        if self.request_at.is_some_and(|t| t <= now) {
            self.rtt.backoff();
            self.request_due = true;
            self.request_at = Some(now + self.rtt.rto());
        }
        if self.rto_at.is_some_and(|t| t <= now) {
            self.rto_at = None;
            if self.pipe == 0 {
                return;
            }
            self.timeouts += 1;
            for f in self.fates.iter_mut() {
                if *f == Fate::Outstanding {
                    *f = Fate::Forgotten;
                    self.forgotten_pkts += 1;
                }
            }
            self.pipe = 0;
            self.advance_base();
            self.window.on_timeout();
            self.recover = self.next;
            self.ratio.clamp(self.window.cwnd());
            self.rtt.backoff();
        }
    }

    fn stats(&self) -> EndpointStats {
        EndpointStats {
            bytes: self.acked_bytes,
            cwnd_bytes: self.window.cwnd() * self.mss as f64,
            srtt: self.rtt.srtt().unwrap_or(0),
            data_pkts_sent: self.next - self.first,
            retransmits: 0,
            timeouts: self.timeouts,
            done: self.phase == Phase::Open && self.total_pkts.is_some() && !self.has_data() && self.pipe == 0,
            ..Default::default()
        }
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("dccp_pipe", "packets", MetricValue::Gauge(self.pipe as f64));
        out.put("dccp_ack_ratio", "packets", MetricValue::Gauge(self.ratio.get() as f64));
        out.put("dccp_lost_pkts", "packets", MetricValue::Count(self.lost_pkts));
        out.put("dccp_marked_pkts", "packets", MetricValue::Count(self.marked_pkts));
        out.put("dccp_halvings", "events", MetricValue::Count(self.window.halvings()));
        out.put("dccp_ack_losses", "packets", MetricValue::Count(self.ratio.ack_losses()));
        out.put("dccp_acks_of_acks", "packets", MetricValue::Count(self.aoa_sent));
        if let Some(m) = self.window.vcp_mds() {
            out.put("vcp_mds", "events", MetricValue::Count(m));
            out.put("vcp_code", "", MetricValue::Gauge(self.last_code as f64));
        }
    }
}
