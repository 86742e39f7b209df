//! The TCP data sender: sequence bookkeeping, handshake, duplicate-ACK counting, fast
//! retransmit / fast recovery (Reno, RFC 5681 §3.2; NewReno, RFC 6582), the RFC 6298 timer
//! with go-back-N on expiry, Karn's rule, ECN (RFC 3168), and, when the flow uses SACK,
//! RFC 6675 loss recovery over the scoreboard of `scoreboard.rs` (the go-back-N after a
//! timeout then skips what the receiver has reported). The window arithmetic is a
//! `WindowControl` (window.rs).
//!
//! Offsets are absolute payload-byte counts from the first data byte (`seq.rs`); `recover` is
//! held *exclusive*: one past RFC 6582's "highest sequence number transmitted".

use super::newreno::NewRenoWindow;
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::seq::SeqSpace;
use super::window::{RecoveryExit, SenderCtx, WindowControl};
use super::{mss_for, PartialAckTimer, Recovery, SpuriousRto, TcpParams};
use crate::endpoint::{Endpoint, EndpointStats, FlowConfig};
use crate::packet::{ecn, flags, hdr, tcp_checksum, Kind, Packet, TcpHeader};
use crate::time::{secs, Time, NEVER};

const HDRS: u32 = hdr::IPV4 + hdr::TCP;

/// What the first timeout of an episode (outside fast recovery) found: RFC 3522's
/// RetransmitTS and the transport state an undo puts back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RtoUndo {
    /// When the timeout retransmitted: an ACK of new data echoing an older timestamp
    /// acknowledges an original transmission.
    retransmit_ts: Time,
    /// RFC 6582's `recover` before the timeout moved it to snd_max: after an undo at most one
    /// segment was resent, so later duplicates are news and may start fast retransmit.
    recover: u64,
    /// The ECN gate (RFC 3168 §6.1.2) before the timeout closed it for the whole window.
    ecn_high: u64,
    cwr_pending: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    SynSent,
    Established,
}

pub struct TcpSender {
    flow: u32,
    mss: u32,
    seq: SeqSpace,
    size: Option<u64>,
    handshake: bool,
    ecn_wanted: bool,
    recovery: Recovery,
    dupthresh: u32,
    window: Box<dyn WindowControl>,
    rtt: RttEstimator,
    latest_rtt: Option<Time>,
    state: State,

    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// No new data at or beyond this offset (set by `stop`).
    app_limit: u64,
    recover: u64,
    in_recovery: bool,
    partial_seen: bool,
    partial_ack_timer: PartialAckTimer,
    dupacks: u32,
    /// See `SenderCtx::dupacks_covered`.
    dupacks_covered: u64,
    /// Retransmit the segment at `snd_una` at the next poll, whatever the window.
    retx_pending: bool,
    /// One past the highest retransmitted byte (Karn: no RTT sample from ACKs below it).
    retx_hi: u64,
    syn_pending: bool,
    syn_retransmitted: bool,
    rto_deadline: Time,
    consecutive_rtos: u32,
    /// Detect spurious timeouts (RFC 3522).
    eifel: bool,
    /// RFC 3042.
    limited_transmit: bool,
    /// SACK (RFC 2018) and RFC 6675 recovery.
    sack: bool,
    board: Scoreboard,
    /// RFC 6675 HighRxt, exclusive: one past the highest byte retransmitted in this recovery.
    high_rxt: u64,
    /// Set by the first timeout of an episode outside fast recovery, taken by the next ACK of
    /// new data.
    rto_undo: Option<RtoUndo>,
    /// snd_max when the first duplicate ACK of a run arrived: what Limited Transmit sends after
    /// it stays out of the FlightSize that sets ssthresh (RFC 5681 §3.2 step 2, RFC 3042).
    snd_max_at_first_dupack: u64,

    ecn_on: bool,
    /// ECE on ACKs up to here belongs to a window already reacted to (RFC 3168 §6.1.2).
    ecn_high: u64,
    cwr_pending: bool,

    pace_next: Time,
    ip_id: u16,

    data_pkts_sent: u64,
    retransmits: u64,
    timeouts: u64,
    spurious_timeouts: u64,
    ecn_reactions: u64,
}

impl TcpSender {
    /// Reno or NewReno with NewReno's window rules.
    pub fn new(cfg: &FlowConfig, recovery: Recovery, params: &TcpParams) -> TcpSender {
        let mss = mss_for(cfg, 0);
        TcpSender::with_window(cfg, recovery, params, Box::new(NewRenoWindow::new(cfg, mss)))
    }

    /// The transport with another protocol's window arithmetic. The window must be built for
    /// `mss_for(cfg, window.header_bytes())` bytes per segment.
    pub fn with_window(
        cfg: &FlowConfig,
        recovery: Recovery,
        params: &TcpParams,
        window: Box<dyn WindowControl>,
    ) -> TcpSender {
        let mss = mss_for(cfg, window.header_bytes());
        let rtt = RttEstimator::new(
            secs(params.initial_rto),
            cfg.min_rto,
            secs(params.max_rto),
            secs(params.clock_granularity),
            params.rto_rule,
        );
        TcpSender {
            flow: cfg.flow,
            mss,
            seq: SeqSpace::new(cfg.isn),
            size: cfg.size_bytes,
            handshake: cfg.handshake,
            ecn_wanted: cfg.ecn,
            recovery,
            dupthresh: params.dupthresh.max(1),
            partial_ack_timer: params.partial_ack_timer,
            window,
            rtt,
            latest_rtt: None,
            state: State::Idle,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_limit: u64::MAX,
            recover: 0,
            in_recovery: false,
            partial_seen: false,
            dupacks: 0,
            dupacks_covered: 0,
            retx_pending: false,
            retx_hi: 0,
            syn_pending: false,
            syn_retransmitted: false,
            rto_deadline: NEVER,
            consecutive_rtos: 0,
            eifel: params.spurious_rto == SpuriousRto::Eifel,
            limited_transmit: params.limited_transmit,
            sack: cfg.sack,
            board: Scoreboard::with_capacity(if cfg.sack { 16 } else { 0 }),
            high_rxt: 0,
            rto_undo: None,
            snd_max_at_first_dupack: 0,
            ecn_on: false,
            ecn_high: 0,
            cwr_pending: false,
            pace_next: 0,
            ip_id: 0,
            data_pkts_sent: 0,
            retransmits: 0,
            timeouts: 0,
            spurious_timeouts: 0,
            ecn_reactions: 0,
        }
    }

    pub fn window(&self) -> &dyn WindowControl {
        self.window.as_ref()
    }

    pub fn mss(&self) -> u32 {
        self.mss
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }

    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    pub fn rto(&self) -> Time {
        self.rtt.rto()
    }

    /// Armed retransmission deadline (`None` when the timer is off).
    pub fn rto_deadline(&self) -> Option<Time> {
        (self.rto_deadline != NEVER).then_some(self.rto_deadline)
    }

    /// Congestion reactions to ECN-Echo so far.
    pub fn ecn_reactions(&self) -> u64 {
        self.ecn_reactions
    }

    fn ctx(&self, now: Time) -> SenderCtx {
        SenderCtx {
            now,
            mss: self.mss,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            snd_max: self.snd_max,
            flight: self.snd_nxt - self.snd_una,
            srtt: self.rtt.srtt(),
            latest_rtt: self.latest_rtt,
            rto: self.rtt.rto(),
            dupacks: self.dupacks,
            dupacks_covered: self.dupacks_covered,
            consecutive_rtos: self.consecutive_rtos,
            in_recovery: self.in_recovery,
            recover: self.recover,
            sack: self.sack,
        }
    }

    /// RFC 6675 IsLost: more than (DupThresh − 1)·SMSS bytes SACKed above.
    #[inline]
    fn lost_threshold(&self) -> u64 {
        (self.dupthresh.saturating_sub(1)) as u64 * self.mss as u64
    }

    /// Fast recovery with SACK (RFC 6675 §5 steps 4.3–4.4): while cwnd leaves room for a
    /// segment beside `pipe`, retransmit the first lost hole above HighRxt, else send new data.
    /// With an empty pipe one segment may always go (as `window_allows`), so that a window
    /// below one MSS cannot stall recovery until the timer.
    fn sack_transmit(&mut self, now: Time) -> Option<Packet> {
        let more_than = self.lost_threshold();
        let pipe = self.board.pipe(self.snd_una, self.snd_max, self.high_rxt, more_than);
        // A NaN window sends nothing, as in `window_allows`.
        let room = (pipe + self.mss as u64) as f64 <= self.window.cwnd_bytes();
        if pipe > 0 && !room {
            return None;
        }
        if let Some(off) = self.board.next_lost(self.snd_una.max(self.high_rxt), more_than) {
            if off < self.snd_max {
                return Some(self.segment(now, off));
            }
        }
        if self.snd_nxt < self.snd_max || self.snd_nxt >= self.data_end() {
            return None;
        }
        let off = self.snd_nxt;
        let pkt = self.segment(now, off);
        self.snd_nxt = off + pkt.payload as u64;
        Some(pkt)
    }

    /// End of the data the application offers.
    #[inline]
    fn data_end(&self) -> u64 {
        self.size.unwrap_or(u64::MAX).min(self.app_limit)
    }

    fn arm_rto(&mut self, now: Time) {
        self.rto_deadline = now.saturating_add(self.rtt.rto());
    }

    fn sample_rtt(&mut self, r: Time) {
        self.rtt.sample(r);
        self.latest_rtt = Some(r);
    }

    fn next_ip_id(&mut self) -> u16 {
        let id = self.ip_id;
        self.ip_id = self.ip_id.wrapping_add(1);
        id
    }

    /// Stamp, let the window see it, and size the packet.
    fn finish(&mut self, now: Time, mut pkt: Packet) -> Packet {
        pkt.ip_id = self.next_ip_id();
        if let Some(h) = pkt.tcp_hdr_mut() {
            h.checksum = tcp_checksum(h);
        }
        let ctx = self.ctx(now);
        self.window.on_send(&mut pkt, &ctx);
        pkt.size = HDRS + pkt.payload + pkt.cong.wire_len();
        pkt
    }

    fn syn(&mut self, now: Time) -> Packet {
        // RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR; the SYN itself is Not-ECT.
        let f = flags::SYN | if self.ecn_wanted { flags::ECE | flags::CWR } else { 0 };
        let h = TcpHeader { seq: self.seq.syn_seq(), flags: f, window: u16::MAX, ts_val: now, ..Default::default() };
        let pkt = Packet::tcp(self.flow, Kind::Syn, HDRS, 0, h);
        if self.rto_deadline == NEVER {
            self.arm_rto(now);
        }
        self.finish(now, pkt)
    }

    /// One data segment starting at `off`.
    fn segment(&mut self, now: Time, off: u64) -> Packet {
        let len = (self.data_end().max(self.snd_max) - off).min(self.mss as u64) as u32;
        let retx = off < self.snd_max;
        let mut f = flags::ACK;
        // RFC 3168 §6.1.2: CWR on the first new data packet after a window reduction.
        if !retx && self.cwr_pending {
            f |= flags::CWR;
            self.cwr_pending = false;
        }
        let h = TcpHeader { seq: self.seq.wire(off), flags: f, window: u16::MAX, ts_val: now, ..Default::default() };
        let mut pkt = Packet::tcp(self.flow, Kind::Data, HDRS + len, len, h);
        // RFC 3168 §6.1.5: retransmissions are Not-ECT.
        if self.ecn_on && !retx {
            pkt.ecn = ecn::ECT0;
        }
        let end = off + len as u64;
        if retx {
            self.retransmits += 1;
            self.retx_hi = self.retx_hi.max(end);
            if self.in_recovery {
                self.high_rxt = self.high_rxt.max(end);
            }
        }
        self.snd_max = self.snd_max.max(end);
        self.data_pkts_sent += 1;
        // RFC 6298 §5.1: start the timer if it is not running.
        if self.rto_deadline == NEVER {
            self.arm_rto(now);
        }
        self.finish(now, pkt)
    }

    /// The next new (or go-back-N) segment's length if the window allows it now: the whole
    /// segment must fit (RFC 5681 §2: never beyond snd_una + cwnd), plus one segment for each
    /// of the first two duplicate ACKs outside recovery (RFC 3042 Limited Transmit; new data
    /// only). With nothing in flight one segment may always go, so that a window below one MSS
    /// cannot stall the ACK clock.
    fn window_allows(&self) -> Option<u32> {
        let end = self.data_end().max(self.snd_max);
        if self.snd_nxt >= end {
            return None;
        }
        let len = (end - self.snd_nxt).min(self.mss as u64);
        let flight = self.snd_nxt - self.snd_una;
        let limited =
            self.limited_transmit && !self.in_recovery && self.dupacks < self.dupthresh && self.snd_nxt >= self.snd_max;
        let extra = if limited { self.dupacks.min(2) as f64 * self.mss as f64 } else { 0.0 };
        (flight == 0 || (flight + len) as f64 <= self.window.cwnd_bytes() + extra).then_some(len as u32)
    }

    fn on_syn_ack(&mut self, now: Time, pkt: &Packet, h: &TcpHeader) {
        if self.state != State::SynSent {
            return;
        }
        self.state = State::Established;
        self.syn_pending = false;
        // The SYN/SYN-ACK exchange gives the first RTT sample, unless the SYN was resent (Karn).
        if !self.syn_retransmitted {
            self.sample_rtt(now.saturating_sub(h.ts_ecr));
        }
        self.ecn_on = self.ecn_wanted && h.flags & flags::ECE != 0;
        self.rto_deadline = NEVER;
        self.consecutive_rtos = 0;
        let ctx = self.ctx(now);
        self.window.on_handshake(pkt, &ctx);
    }

    fn on_new_ack(&mut self, now: Time, ack: u64, pkt: &Packet, h: &TcpHeader) {
        let acked = ack - self.snd_una;
        let old_una = self.snd_una;
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.consecutive_rtos = 0;
        // Karn (RFC 6298 §3): sample only from ACKs that cover no retransmitted byte.
        if old_una >= self.retx_hi {
            self.sample_rtt(now.saturating_sub(h.ts_ecr));
        }
        let mut restart = true;
        if self.in_recovery {
            if ack >= self.recover || self.recovery == Recovery::Reno {
                self.in_recovery = false;
                self.retx_pending = false;
                let how = if self.recovery == Recovery::Reno { RecoveryExit::Reno } else { RecoveryExit::FullAck };
                self.dupacks = 0;
                let ctx = self.ctx(now);
                self.window.on_recovery_exit(how, pkt, &ctx);
            } else {
                // RFC 6582 §3.2 step 4: retransmit the next hole; restart the timer only on
                // the first partial ACK. With SACK, NextSeg finds the lost holes; the one at
                // snd_una still goes at once if this recovery has not resent it (fewer than
                // DupThresh segments may have been SACKed above it).
                self.retx_pending = !self.sack || self.snd_una >= self.high_rxt;
                restart = !self.partial_seen || self.partial_ack_timer == PartialAckTimer::Every || self.sack;
                self.partial_seen = true;
                let ctx = self.ctx(now);
                self.window.on_partial_ack(acked, pkt, &ctx);
            }
        } else {
            self.dupacks = 0;
            let ctx = self.ctx(now);
            self.window.on_new_ack(acked, pkt, &ctx);
        }
        // Up to all but one of the packets this ACK covered had been reported by duplicates.
        let covered = acked.div_ceil(self.mss.max(1) as u64);
        self.dupacks_covered = self.dupacks_covered.saturating_sub(covered.saturating_sub(1));
        // RFC 6298 §5.2/5.3.
        if self.snd_una >= self.snd_max {
            self.rto_deadline = NEVER;
        } else if restart {
            self.arm_rto(now);
        }
    }

    fn on_dup_ack(&mut self, now: Time, pkt: &Packet) {
        self.dupacks = self.dupacks.saturating_add(1);
        self.dupacks_covered += 1;
        if self.dupacks == 1 {
            self.snd_max_at_first_dupack = self.snd_max;
        }
        // RFC 6675 §5 step 2 (C): with SACK, loss is also declared once IsLost(snd_una),
        // though duplicates (or the ACKs that carried them) fell short of DupThresh.
        let sack_lost = self.sack
            && self.dupacks < self.dupthresh
            && self.board.next_lost(self.snd_una, self.lost_threshold()) == Some(self.snd_una);
        if self.in_recovery {
            let ctx = self.ctx(now);
            self.window.on_recovery_dupack(pkt, &ctx);
        } else if (self.dupacks == self.dupthresh || sack_lost) && self.snd_una >= self.recover {
            // RFC 5681 §3.2 step 2 with RFC 6582 §3.2 step 1: only if the ACK covers more
            // than `recover` (so not for the old window after an RTO or a Reno exit).
            self.in_recovery = true;
            self.partial_seen = false;
            self.recover = self.snd_max;
            self.high_rxt = self.snd_una;
            self.retx_pending = true;
            // Time the retransmission from now, as Linux (tcp_xmit_retransmit_queue re-arms
            // the timer for the head segment) and ns-2 (dupack_action: reset_rtx_timer) do.
            // Otherwise, when the queue is full and RTTVAR small, the RTO set by the last new
            // ACK expires before the retransmission can be acknowledged one queue-full RTT
            // later: a spurious timeout and a go-back-N burst.
            self.arm_rto(now);
            if self.ecn_on {
                self.ecn_high = self.snd_max;
                self.cwr_pending = true;
            }
            let mut ctx = self.ctx(now);
            if self.limited_transmit {
                ctx.flight = ctx.flight.min(self.snd_max_at_first_dupack.saturating_sub(self.snd_una));
            }
            self.window.on_fast_retransmit(pkt, &ctx);
        } else {
            let ctx = self.ctx(now);
            self.window.on_dupack(pkt, &ctx);
        }
    }

    fn on_ack(&mut self, now: Time, pkt: &Packet, h: &TcpHeader) {
        let ack = self.seq.unwrap(h.ack, self.snd_una);
        if ack > self.snd_max || ack < self.snd_una {
            return; // acks unsent data, or an old ACK
        }
        if self.sack {
            for (l, r) in h.sack.iter() {
                let (start, end) = (self.seq.unwrap(l, self.snd_una), self.seq.unwrap(r, self.snd_una));
                if ack <= start && start < end && end <= self.snd_max {
                    self.board.add(start, end);
                }
            }
            self.board.advance(ack);
        }
        if ack > self.snd_una {
            // RFC 4015 §3.2: no undo when the detecting ACK signals congestion itself.
            if let Some(u) = self.rto_undo.take() {
                if h.ts_ecr < u.retransmit_ts && h.flags & flags::ECE == 0 {
                    self.undo_spurious_rto(now, h, u);
                }
            }
            self.on_new_ack(now, ack, pkt, h);
        } else if self.snd_max > self.snd_una && pkt.payload == 0 {
            self.on_dup_ack(now, pkt);
        }
        // RFC 3168 §6.1.2: react to ECE at most once per window of data, never in recovery.
        if self.ecn_on && h.flags & flags::ECE != 0 && !self.in_recovery && ack > self.ecn_high {
            self.ecn_high = self.snd_max;
            self.cwr_pending = true;
            self.ecn_reactions += 1;
            let ctx = self.ctx(now);
            self.window.on_ecn_echo(pkt, &ctx);
        }
    }

    /// RFC 3522 detected a spurious timeout: the originals were only delayed. Resume with new
    /// data at snd_max instead of going back N (RFC 4015 §3.2 step 5), take the RTT sample the
    /// echoed timestamp gives (RFC 7323: it names the original transmission, so Karn's rule
    /// does not apply), and let the window undo.
    fn undo_spurious_rto(&mut self, now: Time, h: &TcpHeader, u: RtoUndo) {
        self.spurious_timeouts += 1;
        self.snd_nxt = self.snd_max;
        self.consecutive_rtos = 0;
        (self.recover, self.ecn_high, self.cwr_pending) = (u.recover, u.ecn_high, u.cwr_pending);
        self.sample_rtt(now.saturating_sub(h.ts_ecr));
        let ctx = self.ctx(now);
        self.window.on_spurious_rto(&ctx);
    }

    fn on_rto(&mut self, now: Time) {
        match self.state {
            State::Idle => {}
            State::SynSent => {
                self.timeouts += 1;
                self.rtt.backoff();
                self.syn_pending = true;
                self.syn_retransmitted = true;
                let ctx = self.ctx(now);
                self.window.on_syn_timeout(&ctx);
                self.arm_rto(now);
            }
            State::Established => {
                if self.snd_una >= self.snd_max {
                    return;
                }
                self.timeouts += 1;
                // The go-back-N retransmission leaves at this instant, stamped `now`. Not inside
                // fast recovery: there the timeout is NewReno's deliberate way out of repairing
                // one hole per RTT (the "impatient" timer, RFC 6582 §4), and its go-back-N
                // repairs the rest of the window, which no undo could without SACK.
                if self.eifel && self.consecutive_rtos == 0 && !self.in_recovery {
                    self.rto_undo = Some(RtoUndo {
                        retransmit_ts: now,
                        recover: self.recover,
                        ecn_high: self.ecn_high,
                        cwr_pending: self.cwr_pending,
                    });
                }
                let ctx = self.ctx(now);
                self.window.on_rto(&ctx);
                // RFC 6582 §3.2 step 1 / PROTOCOLS.md §10: recover = highest seq sent; go-back-N.
                self.recover = self.snd_max;
                self.in_recovery = false;
                self.dupacks = 0;
                self.retx_pending = false;
                self.snd_nxt = self.snd_una;
                self.consecutive_rtos += 1;
                if self.ecn_on {
                    self.ecn_high = self.snd_max;
                    self.cwr_pending = true;
                }
                // RFC 6298 §5.5–5.6.
                self.rtt.backoff();
                self.arm_rto(now);
            }
        }
    }
}

impl Endpoint for TcpSender {
    fn start(&mut self, _now: Time) {
        if self.state != State::Idle {
            return;
        }
        if self.handshake {
            self.state = State::SynSent;
            self.syn_pending = true;
        } else {
            self.state = State::Established;
            self.ecn_on = self.ecn_wanted;
        }
    }

    fn stop(&mut self, _now: Time) {
        self.app_limit = self.app_limit.min(self.snd_max);
    }

    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        // The window may restore fields rearranged on the wire before anything reads them.
        let mut wire = *pkt;
        self.window.on_wire_arrival(now, &mut wire);
        let pkt = &wire;
        let Some(h) = pkt.tcp_hdr() else { return };
        let h = *h;
        match pkt.kind {
            Kind::SynAck => self.on_syn_ack(now, pkt, &h),
            Kind::Ack if self.state == State::Established => self.on_ack(now, pkt, &h),
            _ => {}
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        match self.state {
            State::Idle => None,
            State::SynSent => {
                if self.syn_pending {
                    self.syn_pending = false;
                    Some(self.syn(now))
                } else {
                    None
                }
            }
            State::Established => {
                // Fast retransmit / partial-ACK hole first, outside the window (RFC 5681 §3.2).
                if self.retx_pending {
                    self.retx_pending = false;
                    if self.snd_una < self.snd_max {
                        return Some(self.segment(now, self.snd_una));
                    }
                }
                if self.sack {
                    if self.in_recovery {
                        return self.sack_transmit(now);
                    }
                    // Going back N after a timeout: skip what the receiver has SACKed.
                    if let Some(end) = self.board.sacked_end(self.snd_nxt) {
                        self.snd_nxt = end.min(self.snd_max);
                    }
                }
                self.window_allows()?;
                if let Some(rate) = self.window.pacing_rate().filter(|r| r.is_finite() && *r > 0.0) {
                    if now < self.pace_next {
                        return None;
                    }
                    let wire = HDRS + self.mss + self.window.header_bytes();
                    self.pace_next = self.pace_next.max(now).saturating_add(secs(wire as f64 / rate));
                }
                let off = self.snd_nxt;
                let pkt = self.segment(now, off);
                self.snd_nxt = off + pkt.payload as u64;
                Some(pkt)
            }
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        let mut t = self.rto_deadline;
        if self.window.pacing_rate().is_some() && self.pace_next > 0 && self.window_allows().is_some() {
            t = t.min(self.pace_next);
        }
        (t != NEVER).then_some(t)
    }

    fn on_timeout(&mut self, now: Time) {
        // Engines may fire early: only an RTO that is due does anything. A pacing wake-up
        // needs no work here; the engine drains poll_transmit afterwards.
        if self.rto_deadline != NEVER && now >= self.rto_deadline {
            self.rto_deadline = NEVER;
            self.on_rto(now);
        }
    }

    fn stats(&self) -> EndpointStats {
        EndpointStats {
            bytes: self.snd_una,
            cwnd_bytes: self.window.cwnd_bytes(),
            rate_bps: self.window.pacing_rate().unwrap_or(0.0),
            srtt: self.rtt.srtt().unwrap_or(0),
            data_pkts_sent: self.data_pkts_sent,
            retransmits: self.retransmits,
            timeouts: self.timeouts,
            spurious_timeouts: self.spurious_timeouts,
            chain: self.window.chain_stats(),
            done: self.state == State::Established && self.size.is_some_and(|n| self.snd_una >= n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{NS_PER_MS, NS_PER_SEC};

    const MS: Time = NS_PER_MS;
    const ISN: u32 = u32::MAX - 2500; // wraps inside the third segment

    fn cfg() -> FlowConfig {
        let mut c = FlowConfig::new(7, 1040); // MSS 1000
        c.isn = ISN;
        c
    }

    /// RFC 5681 / 6582 as written: the recovery arithmetic below is checked without RFC 3042,
    /// which has its own test.
    fn sender(c: &FlowConfig, r: Recovery) -> TcpSender {
        let mut s = TcpSender::new(c, r, &TcpParams { limited_transmit: false, ..Default::default() });
        s.start(0);
        s
    }

    fn drain(s: &mut TcpSender, now: Time) -> Vec<Packet> {
        std::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    /// Offsets of data packets.
    fn offs(pkts: &[Packet]) -> Vec<u64> {
        let sp = SeqSpace::new(ISN);
        pkts.iter().map(|p| sp.unwrap(p.tcp_hdr().unwrap().seq, 0)).collect()
    }

    fn ack(off: u64, ts_ecr: Time, f: u8) -> Packet {
        let h = TcpHeader {
            seq: 0,
            ack: SeqSpace::new(ISN).wire(off),
            flags: flags::ACK | f,
            ts_ecr,
            ..Default::default()
        };
        Packet::tcp(7, Kind::Ack, 40, 0, h)
    }

    fn cwnd(s: &TcpSender) -> f64 {
        s.window().cwnd_bytes()
    }

    #[test]
    fn initial_window_and_slow_start_per_ack() {
        let mut s = sender(&cfg(), Recovery::NewReno);
        let p = drain(&mut s, 0);
        // RFC 5681 IW for SMSS 1000 is 4 segments; wire size = payload + 40.
        assert_eq!(offs(&p), vec![0, 1000, 2000, 3000]);
        assert!(p.iter().all(|p| p.kind == Kind::Data && p.size == 1040 && p.payload == 1000));
        assert!(p.iter().all(|p| p.ecn == ecn::NOT_ECT));
        assert_eq!(p[2].tcp_hdr().unwrap().seq, u32::MAX - 500);
        assert_eq!(p[3].tcp_hdr().unwrap().seq, 499, "wrapped");
        let h = p[0].tcp_hdr().unwrap();
        assert_eq!(h.checksum, tcp_checksum(&TcpHeader { checksum: 0, ..*h }));
        // Each ACK in slow start adds one SMSS and releases two segments.
        s.on_packet(50 * MS, &ack(1000, 0, 0));
        assert_eq!(cwnd(&s), 5000.0);
        assert_eq!(offs(&drain(&mut s, 50 * MS)), vec![4000, 5000]);
        assert_eq!(s.stats().srtt, 50 * MS);
        s.on_packet(51 * MS, &ack(3000, 1, 0)); // stretch ACK: + min(2000, SMSS)
        assert_eq!(cwnd(&s), 6000.0);
        assert_eq!(offs(&drain(&mut s, 51 * MS)), vec![6000, 7000, 8000]);
        assert_eq!(s.stats().bytes, 3000);
    }

    #[test]
    fn congestion_avoidance_through_transport() {
        let mut c = cfg();
        c.initial_window = Some(4);
        c.initial_ssthresh = Some(4000);
        let mut s = sender(&c, Recovery::NewReno);
        drain(&mut s, 0);
        s.on_packet(10 * MS, &ack(1000, 0, 0));
        assert_eq!(cwnd(&s), 4250.0); // 4000 + 1000²/4000
        assert_eq!(drain(&mut s, 10 * MS).len(), 1);
    }

    /// Send 10 segments, ACK the first (cwnd 11 000 → 2 more), then three duplicates.
    fn into_recovery(r: Recovery) -> TcpSender {
        let mut c = cfg();
        c.initial_window = Some(10);
        let mut s = sender(&c, r);
        assert_eq!(drain(&mut s, 0).len(), 10);
        s.on_packet(100 * MS, &ack(1000, 0, 0));
        assert_eq!(offs(&drain(&mut s, 100 * MS)), vec![10_000, 11_000]);
        for i in 1..=2 {
            s.on_packet(101 * MS, &ack(1000, 0, 0));
            assert!(!s.in_recovery(), "dupack {i}");
            assert!(drain(&mut s, 101 * MS).is_empty());
        }
        s.on_packet(102 * MS, &ack(1000, 0, 0));
        assert!(s.in_recovery());
        s
    }

    /// An ACK for `off` carrying SACK blocks given as offsets.
    fn sack_ack(off: u64, blocks: &[(u64, u64)]) -> Packet {
        sack_ack_ts(off, 0, blocks)
    }

    fn sack_ack_ts(off: u64, ts_ecr: Time, blocks: &[(u64, u64)]) -> Packet {
        let mut p = ack(off, ts_ecr, 0);
        let sp = SeqSpace::new(ISN);
        let h = p.tcp_hdr_mut().unwrap();
        for &(l, r) in blocks {
            h.sack.push(sp.wire(l), sp.wire(r));
        }
        p
    }

    fn sack_sender(iw: u32) -> TcpSender {
        let mut c = cfg();
        c.initial_window = Some(iw);
        c.sack = true;
        let mut s = TcpSender::new(&c, Recovery::NewReno, &TcpParams::default());
        s.start(0);
        s
    }

    /// Ten segments out; 0 and 4000 are lost. With SACK the second hole is resent as soon as
    /// three segments above it are SACKed (RFC 6675 IsLost), not one RTT later on the partial
    /// ACK, and the window is held at ssthresh instead of inflating.
    #[test]
    fn sack_recovery_repairs_a_second_hole_within_the_same_round_trip() {
        let mut s = sack_sender(10);
        assert_eq!(drain(&mut s, 0).len(), 10);
        let t = 100 * MS;
        s.on_packet(t, &sack_ack(0, &[(1000, 2000)]));
        s.on_packet(t, &sack_ack(0, &[(1000, 3000)]));
        assert_eq!(offs(&drain(&mut s, t)), vec![10_000, 11_000], "Limited Transmit");
        s.on_packet(t, &sack_ack(0, &[(1000, 4000)]));
        assert!(s.in_recovery());
        // ssthresh from the 10 000 bytes in flight before Limited Transmit (RFC 5681 §3.2
        // step 2); no inflation.
        assert_eq!((s.window().ssthresh_bytes(), cwnd(&s)), (5000.0, 5000.0));
        assert_eq!(offs(&drain(&mut s, t)), vec![0], "fast retransmit");
        // Segments 5000.. arrive: after three SACKed segments above it, 4000 is lost.
        s.on_packet(t, &sack_ack(0, &[(5000, 6000), (1000, 4000)]));
        s.on_packet(t, &sack_ack(0, &[(5000, 7000), (1000, 4000)]));
        s.on_packet(t, &sack_ack(0, &[(5000, 8000), (1000, 4000)]));
        assert!(drain(&mut s, t).is_empty(), "pipe 5000 = cwnd");
        s.on_packet(t, &sack_ack(0, &[(5000, 9000), (1000, 4000)]));
        assert_eq!(offs(&drain(&mut s, t)), vec![4000], "NextSeg: the lost second hole, pipe 4000");
        assert_eq!(cwnd(&s), 5000.0);
        // Further SACKs free the pipe for new data.
        s.on_packet(t, &sack_ack(0, &[(5000, 10_000), (1000, 4000)]));
        assert_eq!(offs(&drain(&mut s, t)), vec![12_000]);
        s.on_packet(t, &sack_ack(0, &[(5000, 12_000), (1000, 4000)]));
        assert_eq!(offs(&drain(&mut s, t)), vec![13_000, 14_000]);
        // The retransmission of 0 is acknowledged (a partial ACK; 4000 was already resent),
        // then that of 4000: recovery ends one window of data later, without a timeout.
        s.on_packet(200 * MS, &sack_ack(4000, &[(5000, 12_000)]));
        assert!(s.in_recovery());
        assert_eq!(s.stats().retransmits, 2);
        s.on_packet(201 * MS, &sack_ack(15_000, &[]));
        assert!(!s.in_recovery());
        assert_eq!(s.stats().timeouts, 0);
    }

    #[test]
    fn go_back_n_after_a_timeout_skips_sacked_data() {
        let mut c = cfg();
        c.initial_window = Some(6);
        c.sack = true;
        let mut s = sender(&c, Recovery::NewReno);
        assert_eq!(drain(&mut s, 0).len(), 6);
        // 0, 2000, 3000 and 4000 lost: two duplicates only, so the timer repairs it.
        s.on_packet(100 * MS, &sack_ack(0, &[(1000, 2000)]));
        s.on_packet(100 * MS, &sack_ack(0, &[(5000, 6000), (1000, 2000)]));
        assert!(!s.in_recovery());
        let deadline = s.rto_deadline().unwrap();
        s.on_timeout(deadline);
        assert_eq!(offs(&drain(&mut s, deadline)), vec![0]);
        // The retransmission fills 0..2000 (its ACK echoes its timestamp: not spurious); slow
        // start from one segment resends the holes.
        let t = deadline + 100 * MS;
        s.on_packet(t, &sack_ack_ts(2000, deadline, &[(5000, 6000)]));
        assert_eq!(offs(&drain(&mut s, t)), vec![2000, 3000]);
        // Go-back-N reaches the SACKed 5000 and steps over it.
        s.on_packet(t + 100 * MS, &sack_ack_ts(4000, t, &[(5000, 6000)]));
        assert_eq!(offs(&drain(&mut s, t + 100 * MS)), vec![4000, 6000]);
        assert_eq!(s.stats().retransmits, 4, "0, 2000, 3000, 4000; never 1000 or 5000");
    }

    #[test]
    fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_dupacks() {
        let mut c = cfg();
        c.initial_window = Some(4);
        let mut s = TcpSender::new(&c, Recovery::NewReno, &TcpParams::default());
        s.start(0);
        assert_eq!(drain(&mut s, 0).len(), 4);
        // The first segment is lost: three duplicates come back for the others.
        s.on_packet(100 * MS, &ack(0, 0, 0));
        assert_eq!(offs(&drain(&mut s, 100 * MS)), vec![4000], "dupack 1: one new segment");
        s.on_packet(101 * MS, &ack(0, 0, 0));
        assert_eq!(offs(&drain(&mut s, 101 * MS)), vec![5000], "dupack 2: one more");
        assert_eq!(cwnd(&s), 4000.0, "cwnd itself is unchanged");
        s.on_packet(102 * MS, &ack(0, 0, 0));
        assert!(s.in_recovery());
        // RFC 5681 §3.2 step 2: FlightSize 4000 before Limited Transmit, halved.
        assert_eq!(s.window().ssthresh_bytes(), 2000.0);
        assert_eq!(offs(&drain(&mut s, 102 * MS)), vec![0], "fast retransmit");
        // Without it, a window of 4 with two losses would have only one duplicate in reserve.
        let mut s = sender(&c, Recovery::NewReno);
        drain(&mut s, 0);
        s.on_packet(100 * MS, &ack(0, 0, 0));
        assert!(drain(&mut s, 100 * MS).is_empty());
    }

    #[test]
    fn fast_retransmit_on_third_dupack_and_inflation() {
        let mut s = into_recovery(Recovery::NewReno);
        // ssthresh = max(FlightSize/2, 2 SMSS) = 11 000/2; cwnd = ssthresh + 3 SMSS.
        assert_eq!(s.window().ssthresh_bytes(), 5500.0);
        assert_eq!(cwnd(&s), 8500.0);
        let p = drain(&mut s, 102 * MS);
        assert_eq!(offs(&p), vec![1000], "retransmit the segment at snd_una, outside the window");
        assert_eq!(s.stats().retransmits, 1);
        // Each further duplicate inflates by SMSS; new data once flight + SMSS <= cwnd.
        for (i, want) in [(4, 9500.0), (5, 10_500.0), (6, 11_500.0)] {
            s.on_packet(103 * MS, &ack(1000, 0, 0));
            assert_eq!(cwnd(&s), want, "dupack {i}");
            assert!(drain(&mut s, 103 * MS).is_empty());
        }
        s.on_packet(104 * MS, &ack(1000, 0, 0));
        assert_eq!(cwnd(&s), 12_500.0);
        assert_eq!(offs(&drain(&mut s, 104 * MS)), vec![12_000]);
    }

    #[test]
    fn newreno_partial_ack_then_full_ack() {
        let mut s = into_recovery(Recovery::NewReno);
        drain(&mut s, 102 * MS);
        let rto0 = s.rto_deadline().unwrap();
        // Partial ACK (a second hole at 4000): deflate 8500 - 3000 + 1000, retransmit 4000,
        // restart the timer (first partial ACK only).
        s.on_packet(200 * MS, &ack(4000, 0, 0));
        assert!(s.in_recovery());
        assert_eq!(cwnd(&s), 6500.0);
        assert_eq!(offs(&drain(&mut s, 200 * MS)), vec![4000]);
        assert_eq!(s.rto_deadline(), Some(200 * MS + s.rto()));
        assert!(s.rto_deadline().unwrap() > rto0);
        // A second partial ACK does not restart the timer.
        s.on_packet(210 * MS, &ack(5000, 0, 0));
        assert_eq!(offs(&drain(&mut s, 210 * MS)), vec![5000]);
        assert_eq!(s.rto_deadline(), Some(200 * MS + s.rto()));
        // Karn: ACKs covering retransmitted data gave no RTT sample (only the first ACK did).
        assert_eq!(s.stats().srtt, 100 * MS);
        // Full ACK (≥ recover = 12 000) leaving nothing outstanding:
        // cwnd = min(ssthresh 5500, max(0, SMSS) + SMSS) = 2000.
        s.on_packet(300 * MS, &ack(12_000, 0, 0));
        assert!(!s.in_recovery());
        assert_eq!(cwnd(&s), 2000.0);
        assert_eq!(s.rto_deadline(), None, "all data acknowledged");
        assert_eq!(offs(&drain(&mut s, 300 * MS)), vec![12_000, 13_000]);
        assert_eq!(s.stats().retransmits, 3);
    }

    #[test]
    fn newreno_full_ack_with_data_outstanding() {
        let mut s = into_recovery(Recovery::NewReno);
        drain(&mut s, 102 * MS);
        for _ in 0..4 {
            s.on_packet(103 * MS, &ack(1000, 0, 0)); // cwnd 12 500, sends 12 000
        }
        assert_eq!(offs(&drain(&mut s, 103 * MS)), vec![12_000]);
        s.on_packet(200 * MS, &ack(12_000, 0, 0));
        // FlightSize after the ACK is 1000: min(5500, 1000 + 1000).
        assert_eq!(cwnd(&s), 2000.0);
    }

    #[test]
    fn reno_exits_at_first_new_ack_then_times_out() {
        let mut s = into_recovery(Recovery::Reno);
        drain(&mut s, 102 * MS);
        s.on_packet(200 * MS, &ack(4000, 0, 0));
        assert!(!s.in_recovery());
        assert_eq!(cwnd(&s), 5500.0, "cwnd = ssthresh");
        assert!(drain(&mut s, 200 * MS).is_empty(), "no hole retransmission, flight 8000 > cwnd");
        // Three more duplicates below `recover` do not start another fast retransmit.
        for _ in 0..3 {
            s.on_packet(210 * MS, &ack(4000, 0, 0));
        }
        assert!(!s.in_recovery());
        assert!(drain(&mut s, 210 * MS).is_empty());
        // The hole is recovered by the timer.
        let t = s.poll_timeout().unwrap();
        s.on_timeout(t);
        assert_eq!(s.stats().timeouts, 1);
        assert_eq!(offs(&drain(&mut s, t)), vec![4000]);
    }

    #[test]
    fn rto_go_back_n_backoff_and_karn() {
        let mut s = sender(&cfg(), Recovery::NewReno);
        assert_eq!(drain(&mut s, 0).len(), 4);
        // Initial RTO 1 s; an early (lazy) timer fire does nothing.
        assert_eq!(s.poll_timeout(), Some(NS_PER_SEC));
        s.on_timeout(500 * MS);
        assert_eq!(s.stats().timeouts, 0);
        s.on_timeout(NS_PER_SEC);
        assert_eq!(s.stats().timeouts, 1);
        assert_eq!((s.window().ssthresh_bytes(), cwnd(&s)), (2000.0, 1000.0));
        assert_eq!(s.snd_nxt(), 0);
        let p = drain(&mut s, NS_PER_SEC);
        assert_eq!(offs(&p), vec![0], "go-back-N from snd_una, one segment");
        assert_eq!(s.poll_timeout(), Some(3 * NS_PER_SEC), "backed off to 2 s");
        // Second expiry: ssthresh held, RTO 4 s.
        s.on_timeout(3 * NS_PER_SEC);
        assert_eq!((s.window().ssthresh_bytes(), cwnd(&s)), (2000.0, 1000.0));
        assert_eq!(offs(&drain(&mut s, 3 * NS_PER_SEC)), vec![0]);
        assert_eq!(s.poll_timeout(), Some(7 * NS_PER_SEC));
        // The receiver had 0..2000: the ACK jumps; no RTT sample (Karn), RTO stays backed off.
        let t = 3 * NS_PER_SEC + 100 * MS;
        s.on_packet(t, &ack(2000, 3 * NS_PER_SEC, 0));
        assert_eq!(s.stats().srtt, 0);
        assert_eq!(s.rto(), 4 * NS_PER_SEC);
        assert_eq!(s.poll_timeout(), Some(t + 4 * NS_PER_SEC));
        assert_eq!(cwnd(&s), 2000.0);
        // Go-back-N resends 2000 and 3000 (retransmissions), nothing beyond the window.
        assert_eq!(offs(&drain(&mut s, t)), vec![2000, 3000]);
        assert_eq!(s.stats().retransmits, 4);
        s.on_packet(t + 100 * MS, &ack(4000, t, 0));
        assert_eq!(s.stats().srtt, 0, "covers retransmitted bytes");
        // New data, then a clean ACK: a valid sample resets the back-off.
        let p = drain(&mut s, t + 100 * MS);
        assert_eq!(cwnd(&s), 2500.0, "cwnd reached ssthresh: congestion avoidance, 2000 + 1000²/2000");
        assert_eq!(offs(&p), vec![4000, 5000]);
        s.on_packet(t + 200 * MS, &ack(5000, t + 100 * MS, 0));
        assert_eq!(s.stats().srtt, 100 * MS);
        assert_eq!(s.rto(), 300 * MS);
    }

    /// Ten segments at t = 0, the first ACKed at 100 ms (two more go out), then the RTO at
    /// 400 ms retransmits offset 1000 stamped 400 ms.
    fn after_rto(params: &TcpParams) -> TcpSender {
        let mut c = cfg();
        c.initial_window = Some(10);
        let mut s = TcpSender::new(&c, Recovery::NewReno, params);
        s.start(0);
        assert_eq!(drain(&mut s, 0).len(), 10);
        s.on_packet(100 * MS, &ack(1000, 0, 0));
        assert_eq!(drain(&mut s, 100 * MS).len(), 2);
        assert_eq!(s.poll_timeout(), Some(400 * MS), "SRTT 100 ms + max(G, 4·50 ms)");
        s.on_timeout(400 * MS);
        assert_eq!((cwnd(&s), s.window().ssthresh_bytes()), (1000.0, 5500.0));
        let p = drain(&mut s, 400 * MS);
        assert_eq!(offs(&p), vec![1000]);
        assert_eq!(p[0].tcp_hdr().unwrap().ts_val, 400 * MS);
        s
    }

    #[test]
    fn eifel_undoes_a_spurious_timeout_and_resumes_with_new_data() {
        let mut s = after_rto(&TcpParams::default());
        // The ACK echoes the original transmission (sent at 0, before the retransmission at
        // 400 ms): the segments were only delayed (RFC 3522).
        s.on_packet(450 * MS, &ack(3000, 0, 0));
        assert_eq!((s.stats().timeouts, s.stats().spurious_timeouts), (1, 1));
        // Undo: cwnd 11 000 and ssthresh ∞ again, then slow start's + SMSS for this ACK.
        assert_eq!((cwnd(&s), s.window().ssthresh_bytes()), (12_000.0, f64::INFINITY));
        // No go-back-N: flight 12 000 − 3000 leaves room for three new segments.
        assert_eq!(offs(&drain(&mut s, 450 * MS)), vec![12_000, 13_000, 14_000]);
        assert_eq!(s.stats().retransmits, 1);
        // The echoed timestamp names the original, so the 450 ms sample is taken (and the
        // back-off dropped): SRTT (7·100 + 450)/8.
        assert_eq!(s.stats().srtt, 143_750_000);
        // Later ACKs do not undo again.
        s.on_packet(460 * MS, &ack(4000, 0, 0));
        assert_eq!(s.stats().spurious_timeouts, 1);
    }

    #[test]
    fn after_an_undo_a_real_loss_gets_fast_retransmit_and_ece_is_heard() {
        let mut c = cfg();
        c.initial_window = Some(10);
        c.ecn = true;
        let mut s = sender(&c, Recovery::NewReno);
        drain(&mut s, 0);
        s.on_packet(100 * MS, &ack(1000, 0, 0));
        drain(&mut s, 100 * MS);
        s.on_timeout(400 * MS);
        assert_eq!(offs(&drain(&mut s, 400 * MS)), vec![1000]);
        s.on_packet(450 * MS, &ack(3000, 0, 0));
        assert_eq!(s.stats().spurious_timeouts, 1);
        drain(&mut s, 450 * MS);
        // ECE on the restored window is a congestion signal again.
        s.on_packet(451 * MS, &ack(4000, 0, flags::ECE));
        assert_eq!(s.ecn_reactions(), 1);
        // A loss in the restored window: three duplicates start fast retransmit (the timeout's
        // `recover` was put back).
        for i in 0..3 {
            s.on_packet(452 * MS + i, &ack(4000, 0, 0));
        }
        assert!(s.in_recovery());
        // An ACK that signals congestion itself is never the occasion of an undo.
        let mut s = sender(&c, Recovery::NewReno);
        drain(&mut s, 0);
        s.on_packet(100 * MS, &ack(1000, 0, 0));
        drain(&mut s, 100 * MS);
        s.on_timeout(400 * MS);
        drain(&mut s, 400 * MS);
        s.on_packet(450 * MS, &ack(3000, 0, flags::ECE));
        assert_eq!(s.stats().spurious_timeouts, 0);
    }

    #[test]
    fn a_timeout_inside_fast_recovery_is_never_undone() {
        let mut s = into_recovery(Recovery::NewReno);
        drain(&mut s, 102 * MS);
        // Partial ACK: the hole at 4000 is retransmitted at 200 ms.
        s.on_packet(200 * MS, &ack(4000, 0, 0));
        assert_eq!(offs(&drain(&mut s, 200 * MS)), vec![4000]);
        // The impatient timer fires before that retransmission is acknowledged: go-back-N.
        let t = s.rto_deadline().unwrap();
        s.on_timeout(t);
        assert_eq!(offs(&drain(&mut s, t)), vec![4000]);
        // The ACK for the 200 ms retransmission predates the timeout's, but the timeout is
        // NewReno's exit from one hole per RTT: no undo, go-back-N goes on.
        s.on_packet(t + 10 * MS, &ack(5000, 200 * MS, 0));
        assert_eq!(s.stats().spurious_timeouts, 0);
        assert!(!s.in_recovery());
        assert_eq!(cwnd(&s), 2000.0);
        assert_eq!(offs(&drain(&mut s, t + 10 * MS)), vec![5000, 6000]);
    }

    #[test]
    fn a_genuine_loss_or_eifel_off_keeps_the_timeout() {
        // The ACK echoes the retransmission: the original was lost.
        let mut s = after_rto(&TcpParams::default());
        s.on_packet(450 * MS, &ack(3000, 400 * MS, 0));
        assert_eq!(s.stats().spurious_timeouts, 0);
        assert_eq!(cwnd(&s), 2000.0, "slow start from one segment");
        assert_eq!(offs(&drain(&mut s, 450 * MS)), vec![3000, 4000], "go-back-N");
        // Detection off (ns-2): the same late original ACK leaves the timeout's reduction.
        let mut s = after_rto(&TcpParams { spurious_rto: SpuriousRto::Off, ..Default::default() });
        s.on_packet(450 * MS, &ack(3000, 0, 0));
        assert_eq!((s.stats().spurious_timeouts, cwnd(&s)), (0, 2000.0));
        assert_eq!(offs(&drain(&mut s, 450 * MS)), vec![3000, 4000]);
        assert_eq!(s.stats().retransmits, 3);
    }

    #[test]
    fn handshake_first_rtt_sample_and_syn_retransmission() {
        let mut c = cfg();
        c.handshake = true;
        let mut s = sender(&c, Recovery::NewReno);
        let p = drain(&mut s, 0);
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].kind, p[0].size), (Kind::Syn, 40));
        assert_eq!(p[0].tcp_hdr().unwrap().seq, ISN - 1);
        // The SYN-ACK after 80 ms gives SRTT 80 ms, RTO max(80 + 160, 200) = 240 ms.
        let sa = TcpHeader { ack: ISN, flags: flags::SYN | flags::ACK, ts_ecr: 0, ..Default::default() };
        s.on_packet(80 * MS, &Packet::tcp(7, Kind::SynAck, 40, 0, sa));
        assert_eq!(s.stats().srtt, 80 * MS);
        assert_eq!(s.rto(), 240 * MS);
        assert_eq!(drain(&mut s, 80 * MS).len(), 4);

        // Lost SYN: retransmitted on the RTO; no sample from the SYN-ACK (Karn); IW = 1 SMSS.
        let mut s = sender(&c, Recovery::NewReno);
        drain(&mut s, 0);
        s.on_timeout(NS_PER_SEC);
        let p = drain(&mut s, NS_PER_SEC);
        assert_eq!((p.len(), p[0].kind), (1, Kind::Syn));
        assert_eq!(s.poll_timeout(), Some(3 * NS_PER_SEC));
        s.on_packet(NS_PER_SEC + 80 * MS, &Packet::tcp(7, Kind::SynAck, 40, 0, sa));
        assert_eq!(s.stats().srtt, 0);
        assert_eq!(s.stats().timeouts, 1);
        assert_eq!(s.poll_timeout(), None);
        assert_eq!(drain(&mut s, NS_PER_SEC + 80 * MS).len(), 1);
        // A duplicate SYN-ACK changes nothing.
        s.on_packet(NS_PER_SEC + 90 * MS, &Packet::tcp(7, Kind::SynAck, 40, 0, sa));
        assert_eq!(s.snd_nxt(), 1000);
    }

    #[test]
    fn ecn_reaction_once_per_window_and_cwr() {
        let mut c = cfg();
        c.ecn = true;
        c.initial_window = Some(10);
        let mut s = sender(&c, Recovery::NewReno);
        let p = drain(&mut s, 0);
        assert!(p.iter().all(|p| p.ecn == ecn::ECT0));
        // ECE: halve like a loss (flight after the ACK 9000 → 4500), no retransmission.
        s.on_packet(100 * MS, &ack(1000, 0, flags::ECE));
        assert_eq!(s.ecn_reactions(), 1);
        assert_eq!((s.window().ssthresh_bytes(), cwnd(&s)), (4500.0, 4500.0));
        assert!(drain(&mut s, 100 * MS).is_empty());
        assert_eq!(s.stats().retransmits, 0);
        // More ECE within the same window (acks ≤ 10 000): ignored.
        for a in (2000..=6000).step_by(1000) {
            s.on_packet(101 * MS, &ack(a, 0, flags::ECE));
        }
        assert_eq!(s.ecn_reactions(), 1);
        // The first new data packet carries CWR, later ones do not.
        let p = drain(&mut s, 101 * MS);
        assert!(!p.is_empty());
        assert_eq!(offs(&p)[0], 10_000);
        assert!(p[0].tcp_hdr().unwrap().flags & flags::CWR != 0);
        assert!(p[1..].iter().all(|p| p.tcp_hdr().unwrap().flags & flags::CWR == 0));
        // ECE on an ACK beyond the reacted window: a new reaction.
        s.on_packet(200 * MS, &ack(11_000, 0, flags::ECE));
        assert_eq!(s.ecn_reactions(), 2);
    }

    #[test]
    fn ecn_retransmissions_are_not_ect_and_ecn_needs_syn_ack_agreement() {
        let mut c = cfg();
        c.ecn = true;
        let mut s = sender(&c, Recovery::NewReno);
        drain(&mut s, 0);
        s.on_timeout(NS_PER_SEC);
        let p = drain(&mut s, NS_PER_SEC);
        assert_eq!(p[0].ecn, ecn::NOT_ECT);
        // Handshake: SYN asks with ECE|CWR; a SYN-ACK without ECE leaves ECN off.
        c.handshake = true;
        let mut s = sender(&c, Recovery::NewReno);
        let syn = drain(&mut s, 0);
        assert_eq!(syn[0].tcp_hdr().unwrap().flags, flags::SYN | flags::ECE | flags::CWR);
        let sa = TcpHeader { ack: ISN, flags: flags::SYN | flags::ACK, ..Default::default() };
        s.on_packet(MS, &Packet::tcp(7, Kind::SynAck, 40, 0, sa));
        assert!(drain(&mut s, MS).iter().all(|p| p.ecn == ecn::NOT_ECT));
    }

    #[test]
    fn finite_flow_done_and_stop() {
        let mut c = cfg();
        c.size_bytes = Some(2500);
        let mut s = sender(&c, Recovery::NewReno);
        let p = drain(&mut s, 0);
        assert_eq!(p.iter().map(|p| p.payload).collect::<Vec<_>>(), vec![1000, 1000, 500]);
        assert_eq!(p[2].size, 540);
        s.on_packet(MS, &ack(2000, 0, 0));
        assert!(!s.stats().done);
        s.on_packet(MS, &ack(2500, 0, 0));
        assert!(s.stats().done);
        assert_eq!(s.stats().bytes, 2500);
        assert_eq!(s.poll_timeout(), None);
        // Unbounded flow: after stop nothing new, but the outstanding data is still recovered.
        let mut s = sender(&cfg(), Recovery::NewReno);
        drain(&mut s, 0);
        s.stop(MS);
        s.on_packet(10 * MS, &ack(1000, 0, 0));
        assert!(drain(&mut s, 10 * MS).is_empty());
        s.on_timeout(10 * MS + s.rto());
        assert_eq!(offs(&drain(&mut s, 2 * NS_PER_SEC)), vec![1000]);
        assert!(!s.stats().done);
    }

    /// The `WindowControl` hooks a test window hands to the NewReno window in its field 0
    /// unchanged (the loss, recovery and ECN rules).
    macro_rules! newreno_loss_rules {
        () => {
            fn cwnd_bytes(&self) -> f64 {
                self.0.cwnd_bytes()
            }
            fn on_fast_retransmit(&mut self, p: &Packet, c: &SenderCtx) {
                self.0.on_fast_retransmit(p, c)
            }
            fn on_recovery_dupack(&mut self, p: &Packet, c: &SenderCtx) {
                self.0.on_recovery_dupack(p, c)
            }
            fn on_partial_ack(&mut self, a: u64, p: &Packet, c: &SenderCtx) {
                self.0.on_partial_ack(a, p, c)
            }
            fn on_recovery_exit(&mut self, h: RecoveryExit, p: &Packet, c: &SenderCtx) {
                self.0.on_recovery_exit(h, p, c)
            }
            fn on_rto(&mut self, c: &SenderCtx) {
                self.0.on_rto(c)
            }
            fn on_ecn_echo(&mut self, p: &Packet, c: &SenderCtx) {
                self.0.on_ecn_echo(p, c)
            }
        };
    }

    /// A controller that paces, to check the transport honours `pacing_rate`.
    struct Paced(NewRenoWindow);
    impl WindowControl for Paced {
        newreno_loss_rules!();
        fn pacing_rate(&self) -> Option<f64> {
            Some(1_040_000.0) // one 1040-byte packet per ms
        }
        fn header_bytes(&self) -> u32 {
            20
        }
        fn on_send(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
            if pkt.kind == Kind::Data {
                pkt.cong = crate::packet::CongHeader::Xcp {
                    rtt_us: 0,
                    cwnd: self.0.cwnd_bytes() as u32,
                    feedback: f32::INFINITY,
                    reverse_feedback: 0.0,
                };
                assert_eq!(ctx.mss, 980);
            }
        }
        fn on_new_ack(&mut self, a: u64, p: &Packet, c: &SenderCtx) {
            self.0.on_new_ack(a, p, c)
        }
    }

    /// NewReno's rules, recording `ctx.dupacks_covered` on each new ACK.
    struct CoveredRecorder(NewRenoWindow, std::sync::Arc<std::sync::atomic::AtomicU64>);
    impl WindowControl for CoveredRecorder {
        newreno_loss_rules!();
        fn on_new_ack(&mut self, a: u64, p: &Packet, c: &SenderCtx) {
            self.1.store(c.dupacks_covered, std::sync::atomic::Ordering::Relaxed);
            self.0.on_new_ack(a, p, c)
        }
    }

    #[test]
    fn new_acks_see_the_duplicates_that_already_reported_their_packets() {
        use std::sync::atomic::Ordering::Relaxed;
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(u64::MAX));
        let mut c = cfg();
        c.initial_window = Some(5);
        let w = CoveredRecorder(NewRenoWindow::new(&c, 1000), seen.clone());
        let params = TcpParams { limited_transmit: false, ..Default::default() };
        let mut s = TcpSender::with_window(&c, Recovery::NewReno, &params, Box::new(w));
        s.start(0);
        drain(&mut s, 0);
        // Segment 0 lost, 1000..4999 arrive: two duplicates, then the timer (a timeout does
        // not forget them), then the ACK of everything once 0 is resent.
        s.on_packet(100 * MS, &ack(0, 0, 0));
        s.on_packet(100 * MS, &ack(0, 0, 0));
        let t = s.rto_deadline().unwrap();
        s.on_timeout(t);
        drain(&mut s, t);
        s.on_packet(t + 100 * MS, &ack(5000, t, 0));
        assert_eq!(seen.load(Relaxed), 2, "five packets covered, two already reported");
        // The count is spent: the next plain ACK reports its packet afresh.
        drain(&mut s, t + 100 * MS);
        s.on_packet(t + 200 * MS, &ack(6000, t, 0));
        assert_eq!(seen.load(Relaxed), 0);
    }

    #[test]
    fn window_below_one_mss_still_sends_one_segment() {
        let c = cfg();
        let w = NewRenoWindow::with(10.0, f64::INFINITY, 1000);
        let mut s = TcpSender::with_window(&c, Recovery::NewReno, &TcpParams::default(), Box::new(w));
        s.start(0);
        assert_eq!(offs(&drain(&mut s, 0)), vec![0]);
    }

    #[test]
    fn plugged_window_paces_and_adds_header_bytes() {
        let c = cfg();
        let w = Paced(NewRenoWindow::new(&c, mss_for(&c, 20)));
        let mut s = TcpSender::with_window(&c, Recovery::NewReno, &TcpParams::default(), Box::new(w));
        s.start(0);
        assert_eq!(s.mss(), 980);
        let p = drain(&mut s, 0);
        assert_eq!(p.len(), 1, "paced: one packet now");
        assert_eq!((p[0].payload, p[0].size), (980, 1040), "full packet stays packet_size on the wire");
        assert_eq!(s.poll_timeout(), Some(MS));
        assert!(drain(&mut s, MS - 1).is_empty());
        assert_eq!(drain(&mut s, MS).len(), 1);
        assert_eq!(s.stats().rate_bps, 1_040_000.0);
    }
}
