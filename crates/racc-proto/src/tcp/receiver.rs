//! The TCP data receiver: cumulative ACKs (every segment, or delayed: every 2nd segment or
//! after `delack_timeout`; RFC 5681 §4.2, docs/PROTOCOLS.md §10), immediate duplicate ACKs on
//! out-of-order data and when a gap is filled, out-of-order buffering, timestamp echo
//! (RFC 7323 §4.3), ECN-Echo (RFC 3168 §6.1.3), SACK blocks (RFC 2018) when the flow uses
//! them, and a hook (`AckEcho`) through which router-
//! assisted protocols copy their feedback from data packets into ACKs.

use std::collections::VecDeque;

use super::ranges::RangeSet;
use super::seq::SeqSpace;
use crate::endpoint::{Endpoint, EndpointStats, FlowConfig, Transmit};
use crate::packet::{ecn, flags, hdr, tcp_checksum, Direction, Kind, Packet, SackBlocks, TcpHeader, MAX_SACK_BLOCKS};
use crate::time::{Time, NEVER};

const HDRS: u32 = hdr::IP_TCP;
/// The receiver sends no data: its SYN-ACK occupies this number and its ACKs carry the next.
const RCV_ISN: u32 = u32::MAX;

/// What a receiver copies from forward packets into its ACKs (docs/INTERFACES.md, "The protocol interfaces": the receiver's `AckEcho`):
/// VCP's code (max over covered packets), XCP's feedback (summed), QFCP's rate (copied).
pub trait AckEcho: Send {
    /// Every arriving packet, first thing, before the transport reads any field: a protocol
    /// that rearranges header fields on the wire restores them here (DPCP/TPCP, MPCP §3.2,
    /// §5). Default: nothing.
    fn on_wire_arrival(&mut self, _now: Time, _pkt: &mut Packet) {}
    /// Each forward packet (SYN or data) as it arrives, before the ACK it may trigger.
    fn on_forward(&mut self, now: Time, pkt: &Packet);
    /// Fill an outgoing ACK or SYN-ACK (the transport sets its wire size afterwards from the
    /// congestion header's length).
    fn fill_ack(&mut self, now: Time, ack: &mut Packet);
}

pub struct TcpReceiver {
    flow: u32,
    seq: SeqSpace,
    size: Option<u64>,
    ecn_enabled: bool,
    delayed_ack: bool,
    delack_timeout: Time,
    echo: Option<Box<dyn AckEcho>>,

    /// Next in-order byte expected.
    rcv_nxt: u64,
    /// Out-of-order ranges [start, end) above `rcv_nxt`. Empty until the first gap (its
    /// buffer is allocated then, once per flow): most flows of a large run are never
    /// out of order at a given time, and 10,000 buffers of 8 ranges were 1.4 MB.
    ooo: RangeSet,
    /// Report `ooo` in SACK blocks (RFC 2018).
    sack: bool,
    /// Start of the latest out-of-order segment: its block goes first (RFC 2018 §4).
    latest_ooo: u64,
    /// Left edges of the blocks the last ACK reported, in its order: they come next.
    reported: [Option<u64>; MAX_SACK_BLOCKS],
    /// `rcv_nxt` carried by the last ACK sent (RFC 7323's Last.ACK.sent).
    last_ack_sent: u64,
    ts_recent: Time,
    /// In-order segments not yet acknowledged (delayed ACK).
    unacked: u32,
    delack_deadline: Time,
    /// RFC 3168 §6.1.3: set by CE, cleared by CWR.
    ece: bool,
    /// Packets waiting for `poll_transmit`: the engine drains them after every packet and
    /// timeout, each of which makes at most one, so one slot is enough (it grows if ever not).
    out: VecDeque<Packet>,
    /// A cumulative ACK decided at this time (`send_ack`), not yet written: the next poll writes
    /// it straight into the engine's slot (`write_ack`), from the state it was decided in, for
    /// nothing reaches the receiver in between; whatever does first writes it into `out` before
    /// anything changes (`flush_ack`). Issue 19: writing every ACK into `out` and copying it out
    /// again cost two copies of a 120-byte packet per ACK.
    ack_due: Option<Time>,
    ip_id: u16,
    acks_sent: u64,
}

impl TcpReceiver {
    pub fn new(cfg: &FlowConfig) -> TcpReceiver {
        TcpReceiver {
            flow: cfg.flow,
            seq: SeqSpace::new(cfg.isn),
            size: cfg.size_bytes,
            ecn_enabled: cfg.ecn,
            delayed_ack: cfg.delayed_ack,
            delack_timeout: cfg.delack_timeout,
            echo: None,
            rcv_nxt: 0,
            ooo: RangeSet::default(),
            sack: cfg.sack,
            latest_ooo: 0,
            reported: [None; MAX_SACK_BLOCKS],
            last_ack_sent: 0,
            ts_recent: 0,
            unacked: 0,
            delack_deadline: NEVER,
            ece: false,
            out: VecDeque::with_capacity(1),
            ack_due: None,
            ip_id: 0,
            acks_sent: 0,
        }
    }

    /// A receiver whose ACKs carry a protocol's feedback.
    pub fn with_echo(cfg: &FlowConfig, echo: Box<dyn AckEcho>) -> TcpReceiver {
        TcpReceiver { echo: Some(echo), ..TcpReceiver::new(cfg) }
    }

    /// Next in-order byte expected.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Out-of-order ranges currently buffered.
    pub fn ooo_ranges(&self) -> &[(u64, u64)] {
        self.ooo.ranges()
    }

    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }

    /// Address, number, let the echo hook fill it, and size a packet about to leave.
    fn stamp(&mut self, now: Time, pkt: &mut Packet) {
        pkt.dir = Direction::Return;
        pkt.ip_id = self.ip_id;
        self.ip_id = self.ip_id.wrapping_add(1);
        if let Some(h) = pkt.tcp_hdr_mut() {
            h.checksum = tcp_checksum(h);
        }
        if let Some(e) = self.echo.as_mut() {
            e.fill_ack(now, pkt);
        }
        let options = pkt.tcp_hdr().map_or(0, |h| h.sack.wire_len());
        pkt.size = HDRS + options + pkt.cong.wire_len();
    }

    /// Queue a packet other than a cumulative ACK (a SYN-ACK, a probe's answer), after the
    /// ACK decided before it.
    fn finish(&mut self, now: Time, mut pkt: Packet) {
        self.flush_ack();
        self.stamp(now, &mut pkt);
        self.out.push_back(pkt);
    }

    /// Decide a cumulative ACK now; it is written when polled (`ack_due`).
    fn send_ack(&mut self, now: Time) {
        self.flush_ack();
        self.last_ack_sent = self.rcv_nxt;
        self.unacked = 0;
        self.delack_deadline = NEVER;
        self.acks_sent += 1;
        self.ack_due = Some(now);
    }

    /// Write the ACK decided at `now` into `pkt`, from the state it was decided in.
    #[inline]
    fn write_ack(&mut self, now: Time, pkt: &mut Packet) {
        let f = flags::ACK | if self.ece { flags::ECE } else { 0 };
        let h = TcpHeader {
            seq: RCV_ISN.wrapping_add(1),
            ack: self.seq.wire(self.last_ack_sent),
            flags: f,
            window: u16::MAX,
            ts_val: now,
            ts_ecr: self.ts_recent,
            sack: self.sack_blocks(),
            ..Default::default()
        };
        *pkt = Packet::tcp(self.flow, Kind::Ack, HDRS, 0, h);
        self.stamp(now, pkt);
    }

    /// Something other than a poll reached the receiver: the ACK still due goes into `out`
    /// first, before anything it was decided from changes.
    #[inline]
    fn flush_ack(&mut self) {
        if self.ack_due.is_some() {
            self.queue_due_ack();
        }
    }

    /// `flush_ack`'s work, out of line: in a simulation every ACK is polled before anything
    /// else arrives.
    #[cold]
    #[inline(never)]
    fn queue_due_ack(&mut self) {
        if let Some(t) = self.ack_due.take() {
            let mut pkt = Packet::tcp(self.flow, Kind::Ack, HDRS, 0, TcpHeader::default());
            self.write_ack(t, &mut pkt);
            self.out.push_back(pkt);
        }
    }

    /// A REF probe (docs/PROTOCOLS.md §6) is answered at once by a `Ref` carrying the echoed
    /// feedback and the probe's timestamp; it acknowledges nothing, so the sender can never
    /// take it for a duplicate ACK.
    fn answer_probe(&mut self, now: Time, probe: &TcpHeader) {
        let h = TcpHeader {
            seq: RCV_ISN.wrapping_add(1),
            ack: self.seq.wire(self.rcv_nxt),
            flags: flags::ACK,
            window: u16::MAX,
            ts_val: now,
            ts_ecr: probe.ts_val,
            ..Default::default()
        };
        self.finish(now, Packet::tcp(self.flow, Kind::Ref, HDRS, 0, h));
    }

    fn on_syn(&mut self, now: Time, h: &TcpHeader) {
        // The SYN fixes the sender's sequence space (the first data byte follows it).
        if self.rcv_nxt == 0 && self.ooo.is_empty() {
            self.seq = SeqSpace::new(h.seq.wrapping_add(1));
        }
        // RFC 3168 §6.1.1: agree to ECN only if asked (ECE and CWR on the SYN).
        let ecn_setup = self.ecn_enabled && h.flags & (flags::ECE | flags::CWR) == flags::ECE | flags::CWR;
        let f = flags::SYN | flags::ACK | if ecn_setup { flags::ECE } else { 0 };
        let sa = TcpHeader {
            seq: RCV_ISN,
            ack: self.seq.wire(0),
            flags: f,
            window: u16::MAX,
            ts_val: now,
            ts_ecr: h.ts_val,
            ..Default::default()
        };
        self.finish(now, Packet::tcp(self.flow, Kind::SynAck, HDRS, 0, sa));
    }

    /// RFC 2018 §4: the block holding the latest out-of-order segment first, then the blocks
    /// the last ACK reported (where they are now, after merges), then the others from the
    /// highest down, at most three. No allocation.
    fn sack_blocks(&mut self) -> SackBlocks {
        let mut b = SackBlocks::default();
        if !self.sack || self.ooo.is_empty() {
            return b;
        }
        let ooo = self.ooo.ranges();
        let holding = |x: u64| ooo.iter().position(|r| r.0 <= x && x < r.1);
        let mut chosen = [usize::MAX; MAX_SACK_BLOCKS];
        let mut n = 0;
        let candidates = std::iter::once(holding(self.latest_ooo))
            .chain(self.reported.iter().map(|s| s.and_then(holding)))
            .flatten()
            .chain((0..ooo.len()).rev());
        for i in candidates {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if !chosen[..n].contains(&i) {
                chosen[n] = i;
                n += 1;
            }
        }
        self.reported = [None; MAX_SACK_BLOCKS];
        for (k, &i) in chosen[..n].iter().enumerate() {
            let (l, r) = ooo[i];
            b.push(self.seq.wire(l), self.seq.wire(r));
            self.reported[k] = Some(l);
        }
        b
    }

    fn on_data(&mut self, now: Time, pkt: &Packet, h: &TcpHeader) {
        // RFC 3168 §6.1.3: CWR clears the echo, then CE (on this same packet too) sets it.
        if h.flags & flags::CWR != 0 {
            self.ece = false;
        }
        if self.ecn_enabled && pkt.ecn == ecn::CE {
            self.ece = true;
        }
        let start = self.seq.unwrap(h.seq, self.rcv_nxt);
        let end = start + pkt.payload as u64;
        // RFC 7323 §4.3: TS.Recent follows segments at or before Last.ACK.sent, so a delayed
        // ACK echoes the earliest unacknowledged segment and a dup ACK the last in-order one.
        if start <= self.last_ack_sent && h.ts_val >= self.ts_recent {
            self.ts_recent = h.ts_val;
        }
        if end <= self.rcv_nxt {
            // Entirely old (a spurious retransmission): ACK at once.
            self.send_ack(now);
        } else if start <= self.rcv_nxt {
            let had_gap = !self.ooo.is_empty();
            self.rcv_nxt = if had_gap { self.ooo.absorb(end) } else { end };
            self.unacked += 1;
            let complete = self.size.is_some_and(|n| self.rcv_nxt >= n);
            // RFC 5681 §4.2: immediate ACK when a segment fills all or part of a gap; the
            // last byte of a finite flow is ACKed at once (as a FIN would be).
            if !self.delayed_ack || had_gap || complete || self.unacked >= 2 {
                self.send_ack(now);
            } else if self.delack_deadline == NEVER {
                self.delack_deadline = now.saturating_add(self.delack_timeout);
            }
        } else {
            // Out of order: buffer it and send an immediate duplicate ACK.
            self.ooo.add(start, end);
            self.latest_ooo = start;
            self.send_ack(now);
        }
    }
}

impl TcpReceiver {
    /// An arriving packet, after the echo hook (if any) restored it.
    #[inline]
    fn receive(&mut self, now: Time, pkt: &Packet) {
        let Some(h) = pkt.tcp_hdr() else { return };
        if pkt.dir != Direction::Forward {
            return;
        }
        if let Some(e) = self.echo.as_mut() {
            e.on_forward(now, pkt);
        }
        match pkt.kind {
            Kind::Syn => self.on_syn(now, h),
            Kind::Data if pkt.payload > 0 => self.on_data(now, pkt, h),
            Kind::Ref => self.answer_probe(now, h),
            _ => {}
        }
    }
}

impl Endpoint for TcpReceiver {
    fn start(&mut self, _now: Time) {}

    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        self.flush_ack();
        // The echo hook may restore fields rearranged on the wire before anything reads them;
        // without one the packet is read where it is (a copy is 120 bytes).
        if let Some(e) = self.echo.as_mut() {
            let mut wire = *pkt;
            e.on_wire_arrival(now, &mut wire);
            return self.receive(now, &wire);
        }
        self.receive(now, pkt);
    }

    fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        self.flush_ack();
        self.out.pop_front()
    }

    /// Queued packets first (they were made before the ACK now due), then that ACK.
    fn poll_transmit_into(&mut self, _now: Time, slot: &mut Packet) -> Transmit {
        if let Some(p) = self.out.pop_front() {
            *slot = p;
            return if self.out.is_empty() && self.ack_due.is_none() { Transmit::Last } else { Transmit::More };
        }
        match self.ack_due.take() {
            Some(t) => {
                self.write_ack(t, slot);
                Transmit::Last
            }
            None => Transmit::Idle,
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        (self.delack_deadline != NEVER).then_some(self.delack_deadline)
    }

    fn on_timeout(&mut self, now: Time) {
        self.flush_ack();
        if self.delack_deadline != NEVER && now >= self.delack_deadline {
            self.send_ack(now);
        }
    }

    fn stats(&self) -> EndpointStats {
        EndpointStats {
            bytes: self.size.map_or(self.rcv_nxt, |n| self.rcv_nxt.min(n)),
            done: self.size.is_some_and(|n| self.rcv_nxt >= n),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NS_PER_MS;

    const MS: Time = NS_PER_MS;
    const ISN: u32 = u32::MAX - 1500;

    fn cfg(delayed: bool) -> FlowConfig {
        let mut c = FlowConfig::new(3, 1040);
        c.isn = ISN;
        c.delayed_ack = delayed;
        c.ecn = true;
        c
    }

    fn data(off: u64, len: u32, ts: Time, ecn_bits: u8, f: u8) -> Packet {
        let h =
            TcpHeader { seq: ISN.wrapping_add(off as u32), flags: flags::ACK | f, ts_val: ts, ..Default::default() };
        let mut p = Packet::tcp(3, Kind::Data, len + 40, len, h);
        p.ecn = ecn_bits;
        p
    }

    fn drain(r: &mut TcpReceiver) -> Vec<Packet> {
        crate::endpoint::drain_into(r, 0)
    }

    /// An ACK is written when polled, from the state it was decided in: two segments before a
    /// poll give two ACKs in order (the first written when the second arrived), each with its
    /// own cumulative point, timestamps and IP ID, the second marked as the last.
    #[test]
    fn acks_written_when_polled_leave_in_order_the_last_marked() {
        let mut r = TcpReceiver::new(&cfg(false));
        r.on_packet(3 * MS, &data(0, 1000, 5, ecn::NOT_ECT, 0));
        r.on_packet(4 * MS, &data(1000, 1000, 6, ecn::NOT_ECT, 0));
        let mut slot = data(7000, 1, 9, ecn::CE, flags::CWR);
        let mut polled = Vec::new();
        for _ in 0..3 {
            let t = r.poll_transmit_into(9 * MS, &mut slot);
            let h = slot.tcp_hdr().unwrap();
            polled.push((t, h.ack.wrapping_sub(ISN), h.ts_val, h.ts_ecr, slot.ip_id, slot.kind, slot.size, slot.dir));
        }
        let ack = |off, ts_val, ts_ecr, id| (off, ts_val, ts_ecr, id, Kind::Ack, 40, Direction::Return);
        let with = |t: Transmit, (a, b, c, d, e, f, g)| (t, a, b, c, d, e, f, g);
        assert_eq!(polled[0], with(Transmit::More, ack(1000, 3 * MS, 5, 0)));
        assert_eq!(polled[1], with(Transmit::Last, ack(2000, 4 * MS, 6, 1)));
        assert_eq!(polled[2].0, Transmit::Idle);
        assert_eq!(r.acks_sent(), 2);
        // By value, the same packets.
        let mut r = TcpReceiver::new(&cfg(false));
        r.on_packet(3 * MS, &data(0, 1000, 5, ecn::NOT_ECT, 0));
        let by_value = r.poll_transmit(9 * MS).unwrap();
        let mut r2 = TcpReceiver::new(&cfg(false));
        r2.on_packet(3 * MS, &data(0, 1000, 5, ecn::NOT_ECT, 0));
        assert_eq!(r2.poll_transmit_into(9 * MS, &mut slot), Transmit::Last);
        assert_eq!(by_value, slot);
    }

    /// SACK blocks of each ACK, as offsets, and the ACK's wire size.
    fn sacks(r: &mut TcpReceiver) -> Vec<(Vec<(u64, u64)>, u32)> {
        let sp = SeqSpace::new(ISN);
        drain(r)
            .iter()
            .map(|p| {
                let h = p.tcp_hdr().unwrap();
                (h.sack.iter().map(|(l, r)| (sp.unwrap(l, 0), sp.unwrap(r, 0))).collect(), p.size)
            })
            .collect()
    }

    #[test]
    fn sack_blocks_latest_first_then_the_last_reported_at_most_three() {
        let mut c = cfg(false);
        c.sack = true;
        let mut r = TcpReceiver::new(&c);
        r.on_packet(0, &data(0, 1000, 0, ecn::NOT_ECT, 0));
        assert_eq!(sacks(&mut r), vec![(vec![], 40)], "in order: no option");
        // Holes at 1000, 3000, 5000 and 7000; segments arrive out of order.
        r.on_packet(MS, &data(2000, 1000, 0, ecn::NOT_ECT, 0));
        assert_eq!(sacks(&mut r), vec![(vec![(2000, 3000)], 52)]);
        r.on_packet(MS, &data(6000, 1000, 0, ecn::NOT_ECT, 0));
        r.on_packet(MS, &data(4000, 1000, 0, ecn::NOT_ECT, 0));
        let s = sacks(&mut r);
        assert_eq!(s[1], (vec![(4000, 5000), (6000, 7000), (2000, 3000)], 68), "latest, then highest down");
        r.on_packet(MS, &data(8000, 1000, 0, ecn::NOT_ECT, 0));
        let want = vec![(8000, 9000), (4000, 5000), (6000, 7000)];
        assert_eq!(sacks(&mut r)[0].0, want, "latest, then the last ACK's blocks in its order");
        // Filling the first hole: 2000..3000 is now in order and leaves the report.
        r.on_packet(MS, &data(1000, 1000, 0, ecn::NOT_ECT, 0));
        assert_eq!(sacks(&mut r)[0].0, want);
        assert_eq!(r.rcv_nxt(), 3000);
        // 5000 joins two reported blocks: the merged block is reported where its parts were.
        r.on_packet(MS, &data(5000, 1000, 0, ecn::NOT_ECT, 0));
        assert_eq!(sacks(&mut r)[0].0, vec![(4000, 7000), (8000, 9000)]);
        // Without SACK no option, whatever the holes.
        let mut r = TcpReceiver::new(&cfg(false));
        r.on_packet(MS, &data(2000, 1000, 0, ecn::NOT_ECT, 0));
        assert_eq!(sacks(&mut r), vec![(vec![], 40)]);
    }

    /// (ack offset, ts_ecr, ECE) of each ACK.
    fn acks(r: &mut TcpReceiver) -> Vec<(u64, Time, bool)> {
        drain(r)
            .iter()
            .map(|p| {
                assert_eq!((p.kind, p.size, p.payload, p.ecn), (Kind::Ack, 40, 0, ecn::NOT_ECT));
                let h = p.tcp_hdr().unwrap();
                (SeqSpace::new(ISN).unwrap(h.ack, 0), h.ts_ecr, h.flags & flags::ECE != 0)
            })
            .collect()
    }

    #[test]
    fn acks_every_segment_by_default() {
        let mut r = TcpReceiver::new(&cfg(false));
        for i in 0..4u64 {
            r.on_packet(i * MS, &data(i * 1000, 1000, i, ecn::ECT0, 0));
            assert_eq!(acks(&mut r), vec![((i + 1) * 1000, i, false)]);
        }
        assert_eq!(r.stats().bytes, 4000);
        assert_eq!(r.poll_timeout(), None);
    }

    #[test]
    fn out_of_order_gives_immediate_dupacks_and_fill_acks_at_once() {
        let mut r = TcpReceiver::new(&cfg(true)); // immediate even with delayed ACKs
        r.on_packet(0, &data(0, 1000, 10, ecn::ECT0, 0));
        r.on_packet(MS, &data(1000, 1000, 11, ecn::ECT0, 0));
        assert_eq!(acks(&mut r), vec![(2000, 10, false)], "delayed ACK echoes the earliest ts");
        // 2000 lost; 3000, 4000, 6000 arrive: three duplicate ACKs for 2000, echoing the
        // last in-order segment's timestamp.
        for (o, ts) in [(3000, 13), (4000, 14), (6000, 16)] {
            r.on_packet(ts * MS, &data(o, 1000, ts, ecn::ECT0, 0));
            assert_eq!(acks(&mut r), vec![(2000, 10, false)]);
        }
        assert_eq!(r.ooo_ranges(), &[(3000, 5000), (6000, 7000)]);
        // The retransmission fills the first gap: immediate cumulative ACK to 5000.
        r.on_packet(20 * MS, &data(2000, 1000, 20, ecn::NOT_ECT, 0));
        assert_eq!(acks(&mut r), vec![(5000, 20, false)]);
        r.on_packet(21 * MS, &data(5000, 1000, 21, ecn::ECT0, 0));
        assert_eq!(acks(&mut r), vec![(7000, 21, false)]);
        assert!(r.ooo_ranges().is_empty());
        // An old duplicate is ACKed at once (its TSval becomes TS.Recent, RFC 7323 §4.3).
        r.on_packet(22 * MS, &data(1000, 1000, 22, ecn::ECT0, 0));
        assert_eq!(acks(&mut r), vec![(7000, 22, false)]);
        assert_eq!(r.stats().bytes, 7000);
    }

    #[test]
    fn ooo_ranges_merge() {
        let mut r = TcpReceiver::new(&cfg(false));
        for (o, l) in [(5000, 1000), (3000, 1000), (9000, 500), (4000, 1000), (2500, 3000), (8000, 2000)] {
            r.on_packet(0, &data(o, l, 0, 0, 0));
        }
        assert_eq!(r.ooo_ranges(), &[(2500, 6000), (8000, 10_000)]);
        r.on_packet(0, &data(0, 2600, 0, 0, 0));
        assert_eq!(r.rcv_nxt(), 6000);
        assert_eq!(r.ooo_ranges(), &[(8000, 10_000)]);
    }

    #[test]
    fn delayed_ack_every_second_segment_or_timeout() {
        let mut c = cfg(true);
        c.delack_timeout = 100 * MS;
        let mut r = TcpReceiver::new(&c);
        let mut n_acks = 0;
        for i in 0..10u64 {
            r.on_packet(i * MS, &data(i * 1000, 1000, i, ecn::ECT0, 0));
            let a = acks(&mut r);
            if i % 2 == 1 {
                assert_eq!(a, vec![((i + 1) * 1000, i - 1, false)]);
                n_acks += 1;
            } else {
                assert!(a.is_empty());
                assert_eq!(r.poll_timeout(), Some(i * MS + 100 * MS));
            }
        }
        assert_eq!(n_acks, 5);
        // A lone segment waits for the timer; an early timer fire does nothing.
        r.on_packet(20 * MS, &data(10_000, 1000, 20, ecn::ECT0, 0));
        assert!(acks(&mut r).is_empty());
        r.on_timeout(119 * MS);
        assert!(acks(&mut r).is_empty());
        r.on_timeout(120 * MS);
        assert_eq!(acks(&mut r), vec![(11_000, 20, false)]);
        assert_eq!(r.poll_timeout(), None);
        assert_eq!(r.acks_sent(), 6);
    }

    #[test]
    fn last_segment_of_a_finite_flow_is_acked_at_once() {
        let mut c = cfg(true);
        c.size_bytes = Some(2500);
        let mut r = TcpReceiver::new(&c);
        r.on_packet(0, &data(0, 1000, 0, 0, 0));
        r.on_packet(0, &data(1000, 1000, 0, 0, 0));
        assert_eq!(acks(&mut r).len(), 1);
        assert!(!r.stats().done);
        r.on_packet(0, &data(2000, 500, 0, 0, 0));
        assert_eq!(acks(&mut r), vec![(2500, 0, false)]);
        assert!(r.stats().done);
        assert_eq!(r.stats().bytes, 2500);
    }

    #[test]
    fn ece_from_ce_until_cwr() {
        let mut r = TcpReceiver::new(&cfg(false));
        r.on_packet(0, &data(0, 1000, 0, ecn::ECT0, 0));
        r.on_packet(0, &data(1000, 1000, 0, ecn::CE, 0));
        r.on_packet(0, &data(2000, 1000, 0, ecn::ECT0, 0));
        assert_eq!(acks(&mut r).iter().map(|a| a.2).collect::<Vec<_>>(), vec![false, true, true]);
        r.on_packet(0, &data(3000, 1000, 0, ecn::ECT0, flags::CWR));
        r.on_packet(0, &data(4000, 1000, 0, ecn::ECT0, 0));
        // CWR together with a new CE keeps the echo on.
        r.on_packet(0, &data(5000, 1000, 0, ecn::CE, flags::CWR));
        assert_eq!(acks(&mut r).iter().map(|a| a.2).collect::<Vec<_>>(), vec![false, false, true]);
        // Without ECN negotiated, CE is not echoed.
        let mut c = cfg(false);
        c.ecn = false;
        let mut r = TcpReceiver::new(&c);
        r.on_packet(0, &data(0, 1000, 0, ecn::CE, 0));
        assert!(!acks(&mut r)[0].2);
    }

    #[test]
    fn syn_gets_syn_ack_and_fixes_the_sequence_space() {
        let mut c = cfg(false);
        c.isn = 0; // the receiver learns the sender's ISN from the SYN
        let mut r = TcpReceiver::new(&c);
        let syn =
            TcpHeader { seq: ISN - 1, flags: flags::SYN | flags::ECE | flags::CWR, ts_val: 5, ..Default::default() };
        r.on_packet(MS, &Packet::tcp(3, Kind::Syn, 40, 0, syn));
        let p = drain(&mut r);
        assert_eq!((p.len(), p[0].kind, p[0].size), (1, Kind::SynAck, 40));
        let h = p[0].tcp_hdr().unwrap();
        assert_eq!((h.ack, h.ts_ecr, h.flags), (ISN, 5, flags::SYN | flags::ACK | flags::ECE));
        r.on_packet(2 * MS, &data(0, 1000, 6, ecn::ECT0, 0));
        assert_eq!(acks(&mut r), vec![(1000, 6, false)]);
    }

    /// Sums a per-packet value into the next ACK, as XCP's delayed-ACK echo does.
    struct SumEcho(u32);
    impl AckEcho for SumEcho {
        fn on_forward(&mut self, _now: Time, pkt: &Packet) {
            self.0 += pkt.payload;
        }
        fn fill_ack(&mut self, _now: Time, ack: &mut Packet) {
            ack.cong = crate::packet::CongHeader::Rcp { rate: self.0, rtt_us: 0 };
            self.0 = 0;
        }
    }

    #[test]
    fn echo_hook_fills_acks_and_sets_their_size() {
        let mut r = TcpReceiver::with_echo(&cfg(true), Box::new(SumEcho(0)));
        r.on_packet(0, &data(0, 1000, 0, 0, 0));
        r.on_packet(0, &data(1000, 700, 0, 0, 0));
        let p = drain(&mut r);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].cong, crate::packet::CongHeader::Rcp { rate: 1700, rtt_us: 0 });
        assert_eq!(p[0].size, 52);
    }
}
