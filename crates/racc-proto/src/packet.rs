//! The simulated packet: the fields the papers manipulate, at bit level where they work at
//! bit level (ECN bits, IP ID, TCP seq/ack/checksum), plus a typed congestion header of
//! defined wire size and an optional outer header for IPsec ESP tunnel mode (DCP-EW).
//!
//! A `Packet` is a plain `Copy` value (no heap pointers), so engines move it by value through
//! queues and links with no allocation per packet.

use crate::time::Time;

/// ECN codepoints: the two low bits of the IPv4 TOS byte (RFC 3168).
/// VCP-family protocols reuse the same two bits as a load-factor code (docs/PROTOCOLS.md §2).
pub mod ecn {
    pub const NOT_ECT: u8 = 0b00;
    pub const ECT1: u8 = 0b01;
    pub const ECT0: u8 = 0b10;
    pub const CE: u8 = 0b11;
}

/// TCP-like header flags.
pub mod flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const ACK: u8 = 0x10;
    /// ECN-Echo (RFC 3168): the receiver saw CE.
    pub const ECE: u8 = 0x40;
    /// Congestion Window Reduced (RFC 3168): the sender reacted to ECE.
    pub const CWR: u8 = 0x80;
}

/// Wire sizes of the headers, in bytes (docs/PROTOCOLS.md §1).
pub mod hdr {
    pub const IPV4: u32 = 20;
    pub const TCP: u32 = 20;
    pub const DCCP_DATA: u32 = 16;
    pub const DCCP_ACK: u32 = 24;
    /// ESP tunnel mode: outer IPv4 (20) + ESP header (8) + trailer/ICV (≈ 16).
    pub const ESP_TUNNEL: u32 = 44;
    /// IPv4 + TCP without options: what a scenario's `packet_size` (the wire size of a full data
    /// packet) holds besides the payload of a TCP flow without a congestion header
    /// (docs/PROTOCOLS.md §1 "Packet size").
    pub const IP_TCP: u32 = IPV4 + TCP;

    /// The payload of a full data packet of `packet_size` wire bytes: its MSS before any
    /// congestion header (`tcp::mss_for` subtracts that too). `packet_size` must exceed
    /// [`IP_TCP`].
    #[inline]
    pub const fn payload(packet_size: u32) -> u32 {
        packet_size - IP_TCP
    }
}

/// What a packet is, at the transport level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// Carries payload from sender to receiver.
    Data = 0,
    /// Pure acknowledgement from receiver to sender.
    Ack = 1,
    /// Connection opening (sender to receiver).
    Syn = 2,
    /// Answer to a SYN (receiver to sender).
    SynAck = 3,
    /// A header-only probe that asks the routers for feedback and is answered by the receiver
    /// with a `Ref` on the return path (RCP's REF packet, docs/PROTOCOLS.md §6: sent once per RTT
    /// while the pacing gap exceeds the RTT). Carries no sequence space: never a duplicate ACK.
    Ref = 4,
    /// The flow's end, for routers that count flows (XCC-Linux's framework): sent once all data
    /// is acknowledged, by senders whose controller announces it. Not acknowledged.
    Fin = 5,
}

/// Which way a packet travels, set by the endpoint that emits it: engines route by this and
/// never by the packet's kind (a DCCP receiver acknowledges ACKs, a receiver may send data).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Direction {
    /// From the flow's sender to its receiver: the data path.
    Forward = 0,
    /// From the receiver back to the sender: the return (ACK) path.
    Return = 1,
}

/// Transport header: TCP-like fields (32-bit seq/ack as on the wire), or DCCP's
/// 48-bit sequence numbers with an Ack Vector summarised as a bitmap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Transport {
    Tcp(TcpHeader),
    Dccp(DccpHeader),
}

/// TCP-like header. `seq`/`ack` are the 32-bit wire values (they wrap), `checksum` is the
/// Internet checksum over the header fields (see `checksum`), `echo` holds the
/// reserved-bit echo of a load-factor code used by VCP/DPCP receivers (docs/PROTOCOLS.md §1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpHeader {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// Reserved-bit echo: bits 0-1 a 2-bit code, bit 2 its position (0 = MSP, 1 = LSP).
    pub echo: u8,
    pub window: u16,
    pub checksum: u16,
    /// Timestamp option (RFC 7323): sender's send time, echoed back by the receiver.
    pub ts_val: Time,
    pub ts_ecr: Time,
    /// SACK option (RFC 2018), on ACKs of flows that use it.
    pub sack: SackBlocks,
}

/// Most SACK blocks an ACK carries: three fit the 40 option bytes beside the timestamps
/// (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 3;

/// The SACK option: up to three blocks [left, right) of wire sequence numbers, the first the
/// block holding the segment that triggered the ACK (RFC 2018 §4). Not covered by
/// [`tcp_checksum`], which models only the fields the MPCP orderings touch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    len: u8,
    blocks: [(u32, u32); MAX_SACK_BLOCKS],
}

impl SackBlocks {
    /// Append a block; false (and nothing changes) once three are there.
    pub fn push(&mut self, left: u32, right: u32) -> bool {
        if self.len as usize == MAX_SACK_BLOCKS {
            return false;
        }
        self.blocks[self.len as usize] = (left, right);
        self.len += 1;
        true
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.blocks[..self.len as usize].iter().copied()
    }

    /// Option bytes on the wire: kind, length and 8 per block, padded to 4 with two NOPs.
    pub fn wire_len(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            4 + 8 * self.len as u32
        }
    }
}

/// DCCP header (RFC 4340): 48-bit sequence numbers (the wire values, held in u64), the
/// Ack Vector option on acknowledgements, the Ack Ratio the sender asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DccpHeader {
    /// This packet's sequence number (48 bits).
    pub seq: u64,
    /// Acknowledgement number (48 bits): on an ACK the greatest data sequence number received;
    /// on the sender's acknowledgement of ACKs the greatest ACK sequence number received.
    pub ack: u64,
    /// Ack Vector (RFC 4340 §11.4), from `ack` downward.
    pub ack_vector: AckVector,
    /// The Ack Ratio the sender asks the receiver to use (RFC 4341 §6.1.2), on data packets.
    pub ack_ratio: u16,
    /// Reserved-bit echo of a VCP code (bits 0-1), on ACKs.
    pub echo: u8,
    /// Timestamp and Timestamp Echo options (RFC 4340 §13.1, §13.3).
    pub ts_val: Time,
    pub ts_ecr: Time,
}

/// Ack Vector states (RFC 4340 §11.4).
pub mod ack_state {
    pub const RECEIVED: u8 = 0;
    pub const ECN_MARKED: u8 = 1;
    pub const NOT_RECEIVED: u8 = 3;
}

/// Most runs an Ack Vector carries here. RFC 4340 allows up to 253 bytes; a fixed array keeps
/// `Packet` a small `Copy` value. A run holds up to 2^14 packets (its wire size is still the
/// RFC's, one byte per 64 packets), so 12 runs describe any region with at most 5 holes; an
/// older part that does not fit is left out, as an implementation with a short option would.
pub const MAX_ACK_VECTOR_RUNS: usize = 12;

/// The Ack Vector option: runs of packets in one state, the first ending at the header's
/// `ack` and each next one just below the previous (RFC 4340 §11.4's run-length encoding).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckVector {
    len: u8,
    /// State in the top 2 bits, run length − 1 in the low 14.
    runs: [u16; MAX_ACK_VECTOR_RUNS],
}

impl AckVector {
    /// Longest run one entry holds.
    pub const MAX_RUN: u64 = 1 << 14;

    /// Append a run of `len` (1..=MAX_RUN) packets in `state`, below the previous run; false
    /// (and nothing changes) when the vector is full.
    pub fn push(&mut self, state: u8, len: u64) -> bool {
        debug_assert!((1..=Self::MAX_RUN).contains(&len), "{len}");
        if self.len as usize == MAX_ACK_VECTOR_RUNS {
            return false;
        }
        self.runs[self.len as usize] = ((state as u16 & 0b11) << 14) | (len - 1) as u16;
        self.len += 1;
        true
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The runs as (state, number of packets), from the acknowledgement number downward.
    pub fn iter(&self) -> impl Iterator<Item = (u8, u64)> + '_ {
        self.runs[..self.len as usize].iter().map(|&r| ((r >> 14) as u8, (r & 0x3fff) as u64 + 1))
    }

    /// The runs as stored: state in the top 2 bits, run length − 1 in the low 14 (the wire
    /// layer's form).
    pub fn raw(&self) -> &[u16] {
        &self.runs[..self.len as usize]
    }

    /// A vector from runs in [`AckVector::raw`]'s form; `None` if there are too many.
    pub fn from_raw(runs: &[u16]) -> Option<AckVector> {
        if runs.len() > MAX_ACK_VECTOR_RUNS {
            return None;
        }
        let mut v = AckVector { len: runs.len() as u8, ..Default::default() };
        v.runs[..runs.len()].copy_from_slice(runs);
        Some(v)
    }

    /// Option bytes on the wire: type and length, then one byte per run of up to 64 packets
    /// (RFC 4340 §11.4: 2 state bits, 6 run-length bits). 0 without runs (no option).
    pub fn wire_len(&self) -> u32 {
        if self.len == 0 {
            return 0;
        }
        2 + self.iter().map(|(_, n)| n.div_ceil(64) as u32).sum::<u32>()
    }
}

/// A typed congestion header carried between the transport and IP (XCC-Linux's layer).
/// Field layouts and sizes follow docs/PROTOCOLS.md §1.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum CongHeader {
    #[default]
    None,
    /// XCP: rtt µs, cwnd bytes, feedback and reverse feedback in bytes (20 B).
    Xcp { rtt_us: u32, cwnd: u32, feedback: f32, reverse_feedback: f32 },
    /// RCP and PIQI-RCP: rate in B/s (0xFFFF_FFFF = no limit), rtt µs (12 B).
    Rcp { rate: u32, rtt_us: u32 },
    /// JetMax: rtt µs, inter-packet time ns, bottleneck ids, feedback B/s (20 B).
    JetMax { rtt_us: u32, ipt_ns: u32, cur_id: u16, fb_id: u16, feedback: u32 },
    /// QFCP: rtt µs, rate request and rate feedback in B/s (16 B).
    Qfcp { rtt_us: u32, rate_request: u32, rate_feedback: u32 },
}

impl CongHeader {
    /// Bytes this header adds on the wire.
    pub fn wire_len(&self) -> u32 {
        match self {
            CongHeader::None => 0,
            CongHeader::Xcp { .. } => 20,
            CongHeader::Rcp { .. } => 12,
            CongHeader::JetMax { .. } => 20,
            CongHeader::Qfcp { .. } => 16,
        }
    }
}

/// Outer IPv4 header added by an IPsec ESP tunnel (DCP-EW §III.C). Inside the tunnel only
/// these fields are visible to routers: the inner IP and transport headers are encrypted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OuterIp {
    pub tunnel: u16,
    pub ecn: u8,
    pub ip_id: u16,
}

/// One packet. `size` is its full wire size (every header and the shim included); it is what
/// links serialise and queues count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    /// Flow (connection) this packet belongs to; dense small integers in the simulator.
    pub flow: u32,
    pub kind: Kind,
    /// The path it travels (data or return), set by the emitting endpoint.
    pub dir: Direction,
    /// Wire size in bytes.
    pub size: u32,
    /// Transport payload bytes (0 for pure ACKs).
    pub payload: u32,
    /// The two ECN bits of the (inner) IP header.
    pub ecn: u8,
    /// The 16-bit IP identification field of the (inner) IP header.
    pub ip_id: u16,
    pub transport: Transport,
    pub cong: CongHeader,
    /// Present while the packet travels inside an IPsec tunnel.
    pub outer: Option<OuterIp>,
}

impl Packet {
    /// A TCP-like packet with the given kind and sizes; ECN Not-ECT, IP ID 0, on the data path
    /// (a receiver sets `dir` to `Return` on what it emits).
    pub fn tcp(flow: u32, kind: Kind, size: u32, payload: u32, hdr: TcpHeader) -> Packet {
        Packet {
            flow,
            kind,
            dir: Direction::Forward,
            size,
            payload,
            ecn: ecn::NOT_ECT,
            ip_id: 0,
            transport: Transport::Tcp(hdr),
            cong: CongHeader::None,
            outer: None,
        }
    }

    /// The TCP header, if this is a TCP-like packet.
    #[inline]
    pub fn tcp_hdr(&self) -> Option<&TcpHeader> {
        match &self.transport {
            Transport::Tcp(h) => Some(h),
            _ => None,
        }
    }

    #[inline]
    pub fn tcp_hdr_mut(&mut self) -> Option<&mut TcpHeader> {
        match &mut self.transport {
            Transport::Tcp(h) => Some(h),
            _ => None,
        }
    }

    /// A DCCP packet with the given kind and sizes; ECN Not-ECT, IP ID 0, on the data path.
    pub fn dccp(flow: u32, kind: Kind, size: u32, payload: u32, hdr: DccpHeader) -> Packet {
        Packet { transport: Transport::Dccp(hdr), ..Packet::tcp(flow, kind, size, payload, TcpHeader::default()) }
    }

    /// The DCCP header, if this is a DCCP packet.
    #[inline]
    pub fn dccp_hdr(&self) -> Option<&DccpHeader> {
        match &self.transport {
            Transport::Dccp(h) => Some(h),
            _ => None,
        }
    }

    #[inline]
    pub fn dccp_hdr_mut(&mut self) -> Option<&mut DccpHeader> {
        match &mut self.transport {
            Transport::Dccp(h) => Some(h),
            _ => None,
        }
    }

    /// The ECN bits a router on the path sees: the outer header's inside a tunnel.
    #[inline]
    pub fn visible_ecn(&self) -> u8 {
        match &self.outer {
            Some(o) => o.ecn,
            None => self.ecn,
        }
    }

    /// Set the ECN bits a router on the path can reach.
    #[inline]
    pub fn set_visible_ecn(&mut self, bits: u8) {
        match &mut self.outer {
            Some(o) => o.ecn = bits & 0b11,
            None => self.ecn = bits & 0b11,
        }
    }

    /// True if ECN-capable (ECT(0), ECT(1) or CE) as seen by a router: RFC 3168 forbids
    /// marking Not-ECT packets.
    #[inline]
    pub fn is_ect(&self) -> bool {
        self.visible_ecn() != ecn::NOT_ECT
    }
}

/// Internet checksum (RFC 1071) over the 16-bit words of a TCP-like header's fields that the
/// papers manipulate (ports, seq, ack, flags, window). MPCP's ordering tricks (MPCP
/// §3.2, §5) rely on the real ones'-complement arithmetic, so this is the real algorithm over
/// these words rather than a hash.
pub fn tcp_checksum(h: &TcpHeader) -> u16 {
    let words = [
        h.src_port,
        h.dst_port,
        (h.seq >> 16) as u16,
        h.seq as u16,
        (h.ack >> 16) as u16,
        h.ack as u16,
        h.flags as u16,
        h.window,
    ];
    let mut sum: u32 = 0;
    for w in words {
        sum += w as u32;
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sack_blocks_hold_three_and_size_the_option() {
        let mut s = SackBlocks::default();
        assert_eq!((s.len(), s.is_empty(), s.wire_len()), (0, true, 0));
        assert!(s.push(10, 20));
        assert_eq!(s.wire_len(), 12);
        assert!(s.push(30, 40) && s.push(50, 60));
        assert!(!s.push(70, 80), "a fourth block does not fit");
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![(10, 20), (30, 40), (50, 60)]);
        assert_eq!(s.wire_len(), 28);
    }

    #[test]
    fn ack_vector_runs_and_wire_size() {
        let mut v = AckVector::default();
        assert_eq!(v.wire_len(), 0);
        assert!(v.push(ack_state::RECEIVED, 130));
        assert!(v.push(ack_state::NOT_RECEIVED, 1));
        assert!(v.push(ack_state::ECN_MARKED, AckVector::MAX_RUN));
        let runs: Vec<_> = v.iter().collect();
        assert_eq!(runs, vec![(0, 130), (3, 1), (1, 1 << 14)]);
        // 130 packets take 3 bytes of 64, the lone loss 1, 2^14 packets 256; plus type and length.
        assert_eq!(v.wire_len(), 2 + 3 + 1 + 256);
        for _ in 3..MAX_ACK_VECTOR_RUNS {
            assert!(v.push(ack_state::RECEIVED, 1));
        }
        assert!(!v.push(ack_state::RECEIVED, 1), "full");
        assert_eq!(v.len(), MAX_ACK_VECTOR_RUNS);
    }

    #[test]
    fn packet_is_small_and_copy() {
        // Engines move packets by value; keep them within two cache lines.
        assert!(std::mem::size_of::<Packet>() <= 128, "{}", std::mem::size_of::<Packet>());
        assert_eq!(std::mem::size_of::<Direction>(), 1);
    }

    #[test]
    fn checksum_survives_seq_ack_swap() {
        // MPCP §3.2: swapping the two 32-bit fields leaves the checksum valid.
        let h = TcpHeader { seq: 0x1234_5678, ack: 0x9abc_def0, flags: flags::ACK, window: 100, ..Default::default() };
        let mut s = h;
        std::mem::swap(&mut s.seq, &mut s.ack);
        assert_eq!(tcp_checksum(&h), tcp_checksum(&s));
        let mut t = h;
        t.ack -= 1;
        assert_ne!(tcp_checksum(&h), tcp_checksum(&t));
    }

    #[test]
    fn tunnel_hides_inner_ecn() {
        let mut p = Packet::tcp(1, Kind::Data, 1000, 960, TcpHeader::default());
        p.ecn = ecn::ECT1;
        p.outer = Some(OuterIp { tunnel: 1, ecn: ecn::ECT0, ip_id: 7 });
        assert_eq!(p.visible_ecn(), ecn::ECT0);
        p.set_visible_ecn(ecn::CE);
        assert_eq!(p.ecn, ecn::ECT1);
        assert_eq!(p.visible_ecn(), ecn::CE);
    }
}
