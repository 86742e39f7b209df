//! The packets the sender writes: data segments (new and retransmitted, with RFC 3168's ECN
//! and CWR rules and the bookkeeping a retransmission updates), the SYN, header-only REF and
//! FIN packets, and the stamping every packet gets (IP ID, checksum, the controller's header,
//! wire size).

use super::{TcpSender, HDRS};
use crate::packet::{ecn, flags, tcp_checksum, Direction, Kind, Packet, TcpHeader};
use crate::time::{Time, NEVER};

impl TcpSender {
    pub(super) fn next_ip_id(&mut self) -> u16 {
        let id = self.ip_id;
        self.ip_id = self.ip_id.wrapping_add(1);
        id
    }

    /// Stamp, let the controller see it, and size the packet (in place: a `Packet` is 120
    /// bytes, and every move of it is a copy).
    #[inline]
    pub(super) fn finish(&mut self, now: Time, pkt: &mut Packet) {
        pkt.dir = Direction::Forward;
        pkt.ip_id = self.next_ip_id();
        if let Some(h) = pkt.tcp_hdr_mut() {
            h.checksum = tcp_checksum(h);
        }
        if !self.plain {
            let ctx = self.ctx(now);
            self.cc.on_send(pkt, &ctx);
        }
        pkt.size = HDRS + pkt.payload + pkt.cong.wire_len();
    }

    pub(super) fn syn(&mut self, now: Time, pkt: &mut Packet) {
        // RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR; the SYN itself is Not-ECT.
        let f = flags::SYN | if self.ecn_wanted { flags::ECE | flags::CWR } else { 0 };
        let h = TcpHeader { seq: self.seq.syn_seq(), flags: f, window: u16::MAX, ts_val: now, ..Default::default() };
        *pkt = Packet::tcp(self.flow, Kind::Syn, HDRS, 0, h);
        if self.rto_deadline == NEVER {
            self.arm_rto(now);
        }
        self.finish(now, pkt);
    }

    /// One data segment starting at `off`, written into `pkt`; returns its payload length.
    #[inline(always)]
    pub(super) fn segment(&mut self, now: Time, off: u64, pkt: &mut Packet) -> u32 {
        let len = (self.data_end().max(self.snd_max) - off).min(self.mss as u64) as u32;
        let retx = off < self.snd_max;
        let mut f = flags::ACK;
        // RFC 3168 §6.1.2: CWR on the first new data packet after a window reduction.
        if !retx && self.cwr_pending {
            f |= flags::CWR;
            self.cwr_pending = false;
        }
        let h = TcpHeader { seq: self.seq.wire(off), flags: f, window: u16::MAX, ts_val: now, ..Default::default() };
        *pkt = Packet::tcp(self.flow, Kind::Data, HDRS + len, len, h);
        // RFC 3168 §6.1.5: retransmissions are Not-ECT.
        if self.ecn_on && !retx {
            pkt.ecn = ecn::ECT0;
        }
        let end = off + len as u64;
        if retx {
            self.retransmits += 1;
            self.retx_hi = self.retx_hi.max(end);
            if self.in_recovery() {
                self.high_rxt = self.high_rxt.max(end);
            }
            if self.lost_retransmit {
                self.log_retransmission(off, end);
            }
            if self.sack_rtt && self.timed.is_some_and(|(e, _)| off < e && e <= end) {
                self.timed_resent = true;
            }
        }
        if self.once_per_rtt && !retx && self.timed.is_none() {
            self.timed = Some((end, now));
            self.timed_resent = false;
        }
        self.snd_max = self.snd_max.max(end);
        self.data_pkts_sent += 1;
        // RFC 6298 §5.1: start the timer if it is not running.
        if self.rto_deadline == NEVER {
            self.arm_rto(now);
        }
        self.finish(now, pkt);
        len
    }

    /// A header-only packet of `kind` (a REF probe or a FIN) at the current send point.
    pub(super) fn control_packet(&mut self, now: Time, kind: Kind, pkt: &mut Packet) {
        let h = TcpHeader {
            seq: self.seq.wire(self.snd_nxt),
            flags: flags::ACK,
            window: u16::MAX,
            ts_val: now,
            ..Default::default()
        };
        *pkt = Packet::tcp(self.flow, kind, HDRS, 0, h);
        self.finish(now, pkt);
    }
}
