//! The TCP data sender: sequence bookkeeping, handshake, duplicate-ACK counting, fast
//! retransmit / fast recovery (Reno, RFC 5681 §3.2; NewReno, RFC 6582; the window of the
//! recovery in `recovery.rs`), the RFC 6298 timer with go-back-N on expiry, Karn's rule,
//! spurious-timeout detection (RFC 3522), ECN (RFC 3168), and, when the flow uses SACK,
//! RFC 6675 loss recovery over the scoreboard of `scoreboard.rs`. How much to send outside a
//! recovery is a [`CongestionControl`]'s (`cc.rs`).
//!
//! - this file: the state, the send path (`poll_transmit`) and the `Endpoint` face
//! - [`acks`]: what an arriving ACK does (new, partial, duplicate; recovery entry and exit;
//!   ECN-Echo) and how a controller's [`Response`](crate::cc::Response) is applied
//! - [`timeout`]: the retransmission timer's expiry and the spurious-timeout undo
//! - [`sack`]: RFC 6675's transmission rule during a SACK recovery
//! - [`segments`]: the packets it writes (data, SYN, REF, FIN) and their stamping
//! - [`send_window`]: what the window and pacing allow now
//!
//! Offsets are absolute payload-byte counts from the first data byte (`seq.rs`); `recover` is
//! held *exclusive*: one past RFC 6582's "highest sequence number transmitted".

mod acks;
mod sack;
mod segments;
mod send_window;
mod timeout;

#[cfg(test)]
mod tests;

use super::newreno::NewRenoWindow;
use super::recovery::FastRecovery;
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::seq::SeqSpace;
use super::{
    mss_for, PartialAckTimer, RecoverCheck, Recovery, RtoInRecovery, RttSamples, SpuriousRto, SsthreshFrom, TcpParams,
};
use crate::cc::{CongestionControl, SenderCtx};
use crate::endpoint::{Endpoint, EndpointStats, FlowConfig, Transmit};
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{hdr, Kind, Packet, TcpHeader};
use crate::rng::SimRng;
use crate::time::{secs, Time, NEVER};
use std::collections::VecDeque;
use timeout::RtoUndo;

const HDRS: u32 = hdr::IP_TCP;

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
    cc: Box<dyn CongestionControl>,
    rtt: RttEstimator,
    latest_rtt: Option<Time>,
    state: State,

    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// No new data at or beyond this offset (set by `stop`).
    app_limit: u64,
    recover: u64,
    /// `recover` has been set (by a fast retransmit or a timeout): until then every loss may
    /// start fast retransmit (RFC 6582: recover starts at the ISS).
    recover_set: bool,
    /// The window while fast recovery runs (`Some` exactly while in recovery).
    fast_recovery: Option<FastRecovery>,
    partial_seen: bool,
    partial_ack_timer: PartialAckTimer,
    dupacks: u32,
    /// Duplicate ACKs since snd_una last advanced, timeouts included, less the packets new
    /// ACKs have covered since: the delivered packets the receiver has already reported, which
    /// the next new ACK covers again (`tcp::growth_packets`).
    dupacks_covered: u64,
    /// Retransmit the segment at `snd_una` at the next poll, whatever the window.
    retx_pending: bool,
    /// Bytes the latest new ACK covered (RFC 6582 §4.2's highest_ack − prev_highest_ack).
    last_advance: u64,
    /// One past the highest retransmitted byte (Karn: no RTT sample from ACKs below it).
    retx_hi: u64,
    /// `once-per-rtt` sampling (`TcpParams::rtt_samples`); `timed`: the end offset and send
    /// time of the segment being timed.
    once_per_rtt: bool,
    timed: Option<(u64, Time)>,
    /// `TcpParams::sack_rtt` (with SACK and `once-per-rtt` only), and whether the timed segment
    /// has been retransmitted (Karn: then it gives no sample).
    sack_rtt: bool,
    timed_resent: bool,
    /// `TcpParams::lost_retransmit` (with SACK only), and the retransmissions not yet known
    /// to have arrived, sorted by start.
    lost_retransmit: bool,
    rxt_log: VecDeque<sack::Resent>,
    syn_pending: bool,
    syn_retransmitted: bool,
    rto_deadline: Time,
    consecutive_rtos: u32,
    /// Detect spurious timeouts (RFC 3522).
    eifel: bool,
    /// RFC 3042.
    limited_transmit: bool,
    ssthresh_from: SsthreshFrom,
    rto_in_recovery: RtoInRecovery,
    recover_check: RecoverCheck,
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

    /// When the last paced segment left (`None` before the first): the next may leave one
    /// packet's wire time at the controller's *current* rate later (`pace_due`).
    paced_at: Option<Time>,
    /// A FIN is still to be sent once every byte is acknowledged: set at construction for a
    /// controller that announces its end, cleared when the FIN leaves.
    fin_pending: bool,
    /// The controller sends REF probes (asked once: ACK-clocked ones cost nothing per poll).
    probes: bool,
    /// The controller is a plain window (`CongestionControl::plain_window`, asked once): its
    /// arrival and send hooks, pacing and timer are skipped.
    plain: bool,
    /// The controller paces every segment, retransmissions and a SACK recovery's included
    /// (`CongestionControl::paces_every_segment`, asked once).
    pace_all: bool,
    /// A plain window (`plain`), no SACK, no probes and no send jitter: what the next poll
    /// sends after a segment is the window's alone (`after_segment`).
    lean: bool,
    /// ns-2's `overhead_` (`TcpParams::send_jitter`): the largest random wait, ns, and the
    /// stream it is drawn from (`None`: off).
    jitter: Option<(Time, SimRng)>,
    /// The drawn wait of the next window-released segment ends here (`NEVER`: none drawn).
    jitter_gate: Time,
    ip_id: u16,

    data_pkts_sent: u64,
    retransmits: u64,
    timeouts: u64,
    spurious_timeouts: u64,
    ecn_reactions: u64,
    fast_retransmits: u64,
    /// Timeouts that ended a fast recovery (issue 22 (a)).
    timeouts_in_recovery: u64,
    /// Runs of dupthresh duplicates refused fast retransmit by RFC 6582's `recover` check.
    fast_retransmits_refused: u64,
}

impl TcpSender {
    /// Reno or NewReno with NewReno's congestion control.
    pub fn new(cfg: &FlowConfig, recovery: Recovery, params: &TcpParams) -> TcpSender {
        let mss = mss_for(cfg, 0);
        TcpSender::with_controller(cfg, recovery, params, Box::new(NewRenoWindow::new(cfg, mss)))
    }

    /// The transport with another protocol's congestion controller, which must be built for
    /// `mss_for(cfg, cc.header_bytes())` bytes per segment.
    pub fn with_controller(
        cfg: &FlowConfig,
        recovery: Recovery,
        params: &TcpParams,
        cc: Box<dyn CongestionControl>,
    ) -> TcpSender {
        let mss = mss_for(cfg, cc.header_bytes());
        let rtt = RttEstimator::new(
            secs(params.initial_rto),
            cfg.min_rto,
            secs(params.max_rto),
            secs(params.clock_granularity),
            params.rto_rule,
        );
        let jitter = (params.send_jitter > 0.0).then(|| {
            let label = format!("tcp/send-jitter/flow{}", cfg.flow);
            (secs(params.send_jitter), SimRng::for_component(cfg.seed, &label))
        });
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
            probes: cc.probes(),
            plain: cc.plain_window(),
            pace_all: !cc.plain_window() && cc.paces_every_segment(),
            lean: cc.plain_window() && !cc.probes() && !cfg.sack && jitter.is_none(),
            fin_pending: cc.announces_end(),
            cc,
            rtt,
            latest_rtt: None,
            state: State::Idle,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_limit: u64::MAX,
            recover: 0,
            recover_set: false,
            fast_recovery: None,
            partial_seen: false,
            dupacks: 0,
            dupacks_covered: 0,
            retx_pending: false,
            last_advance: 0,
            retx_hi: 0,
            once_per_rtt: params.rtt_samples == RttSamples::OncePerRtt,
            timed: None,
            sack_rtt: cfg.sack && params.sack_rtt && params.rtt_samples == RttSamples::OncePerRtt,
            timed_resent: false,
            lost_retransmit: cfg.sack && params.lost_retransmit,
            rxt_log: VecDeque::new(),
            syn_pending: false,
            syn_retransmitted: false,
            rto_deadline: NEVER,
            consecutive_rtos: 0,
            eifel: params.spurious_rto == SpuriousRto::Eifel,
            limited_transmit: params.limited_transmit,
            ssthresh_from: params.ssthresh_from,
            rto_in_recovery: params.rto_in_recovery,
            recover_check: params.recover_check,
            sack: cfg.sack,
            board: Scoreboard::with_capacity(if cfg.sack { 16 } else { 0 }),
            high_rxt: 0,
            rto_undo: None,
            snd_max_at_first_dupack: 0,
            ecn_on: false,
            ecn_high: 0,
            cwr_pending: false,
            paced_at: None,
            jitter,
            jitter_gate: NEVER,
            ip_id: 0,
            data_pkts_sent: 0,
            retransmits: 0,
            timeouts: 0,
            spurious_timeouts: 0,
            ecn_reactions: 0,
            fast_retransmits: 0,
            timeouts_in_recovery: 0,
            fast_retransmits_refused: 0,
        }
    }

    /// The congestion controller.
    pub fn controller(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// The window in force, bytes: the recovery's while fast recovery runs, else the
    /// controller's.
    #[inline]
    pub fn cwnd(&self) -> f64 {
        match &self.fast_recovery {
            Some(r) => r.cwnd(),
            None => self.cc.window(),
        }
    }

    /// The slow-start threshold in force, bytes (the recovery's while it runs).
    pub fn ssthresh(&self) -> f64 {
        match &self.fast_recovery {
            Some(r) => r.ssthresh(),
            None => self.cc.ssthresh(),
        }
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
        self.fast_recovery.is_some()
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
            cwnd: self.cwnd(),
            flight: self.snd_nxt - self.snd_una,
            srtt: self.rtt.srtt(),
            latest_rtt: self.latest_rtt,
            dupacks: self.dupacks,
            consecutive_rtos: self.consecutive_rtos,
        }
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

    /// With `pace_all`: a segment that only pacing holds back, outside `window_allows` (a fast
    /// retransmission, or a SACK recovery's next segment).
    fn paced_send_waits(&self) -> bool {
        self.pace_all && (self.retx_pending || (self.sack && self.in_recovery() && self.sack_next().is_some()))
    }

    /// Would `poll_transmit`'s new-data path send a segment, but for pacing and send jitter? Not
    /// in a SACK recovery, where `sack_transmit` decides by RFC 6675's pipe, which can be full
    /// while the flight-based window still allows (retransmissions count in the pipe): asking for
    /// a wake-up there gave one due now at which nothing went, asked again at once, and the
    /// engine spun at one instant (four BBR flows over 20-80 ms, docs/CROSSCHECK-BASELINES.md).
    /// What a recovery sends under pacing is `paced_send_waits`'s.
    fn new_data_may_go(&self) -> bool {
        !(self.sack && self.in_recovery()) && self.window_allows().is_some()
    }

    /// The controller's own timer, if it asked for one.
    fn cc_timer(&self) -> Time {
        if self.plain {
            return NEVER;
        }
        self.cc.poll_timer().unwrap_or(NEVER)
    }

    /// An arriving packet, after the controller's `on_wire_arrival` (if any) restored it.
    #[inline]
    fn receive(&mut self, now: Time, pkt: &Packet) {
        let Some(h) = pkt.tcp_hdr() else { return };
        match pkt.kind {
            Kind::SynAck => self.on_syn_ack(now, h),
            Kind::Ack if self.state == State::Established => self.on_ack(now, pkt, h),
            _ => {}
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
        if self.plain {
            return self.receive(now, pkt);
        }
        // The controller may restore fields rearranged on the wire before anything reads them.
        let mut wire = *pkt;
        let ctx = self.ctx(now);
        self.cc.on_wire_arrival(&mut wire, &ctx);
        self.receive(now, &wire);
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        let mut pkt = Packet::tcp(self.flow, Kind::Data, 0, 0, TcpHeader::default());
        (self.poll_transmit_into(now, &mut pkt) != Transmit::Idle).then_some(pkt)
    }

    fn poll_transmit_into(&mut self, now: Time, slot: &mut Packet) -> Transmit {
        match self.state {
            State::Idle => Transmit::Idle,
            State::SynSent => {
                if self.syn_pending {
                    self.syn_pending = false;
                    self.syn(now, slot);
                    Transmit::Last
                } else {
                    Transmit::Idle
                }
            }
            State::Established => {
                // Fast retransmit / partial-ACK hole first, outside the window (RFC 5681 §3.2).
                if self.retx_pending && (!self.pace_all || self.pace_allows(now)) {
                    self.retx_pending = false;
                    if self.snd_una < self.snd_max {
                        self.segment(now, self.snd_una, slot);
                        return self.after_segment(self.cwnd());
                    }
                }
                // A retransmission found lost goes again, ahead of new data, outside the
                // window as a fast retransmit does (`TcpParams::lost_retransmit`).
                if self.lost_retransmit {
                    if let Some(off) = self.next_lost_retransmission() {
                        if off < self.snd_max {
                            self.segment(now, off, slot);
                            return self.after_segment(self.cwnd());
                        }
                    }
                }
                if self.sack {
                    if self.in_recovery() {
                        return self.sack_transmit(now, slot);
                    }
                    // Going back N after a timeout: skip what the receiver has SACKed.
                    if let Some(end) = self.board.sacked_end(self.snd_nxt) {
                        self.snd_nxt = end.min(self.snd_max);
                    }
                }
                if self.probes {
                    let ctx = self.ctx(now);
                    if self.cc.probe_due(&ctx) {
                        self.control_packet(now, Kind::Ref, slot);
                        return Transmit::More;
                    }
                }
                if self.fin_pending && self.size.is_some_and(|n| self.snd_una >= n) {
                    self.fin_pending = false;
                    self.control_packet(now, Kind::Fin, slot);
                    return Transmit::More;
                }
                let cwnd = self.cwnd();
                let Some(len) = self.window_allows_in(cwnd) else { return Transmit::Idle };
                if !self.pace_allows(now) {
                    return Transmit::Idle;
                }
                if let Some((max, rng)) = self.jitter.as_mut() {
                    if self.jitter_gate == NEVER {
                        self.jitter_gate = now.saturating_add((rng.uniform() * *max as f64) as Time);
                    }
                    if now < self.jitter_gate {
                        return Transmit::Idle;
                    }
                    self.jitter_gate = NEVER;
                }
                // `len` is the segment's length (`window_allows` sizes it as `segment` does).
                let off = self.snd_nxt;
                self.segment(now, off, slot);
                self.snd_nxt = off + len as u64;
                self.after_segment(cwnd)
            }
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        // A lean sender has no controller timer, no pacing and no send jitter: only the RTO.
        if self.lean {
            return (self.rto_deadline != NEVER).then_some(self.rto_deadline);
        }
        let mut t = self.rto_deadline.min(self.cc_timer());
        if let Some(due) = self.pace_due().filter(|_| self.new_data_may_go() || self.paced_send_waits()) {
            t = t.min(due);
        }
        if self.jitter_gate != NEVER && self.new_data_may_go() {
            t = t.min(self.jitter_gate);
        }
        (t != NEVER).then_some(t)
    }

    fn on_timeout(&mut self, now: Time) {
        // Engines may fire early: only an RTO or a controller timer that is due does anything.
        // A pacing wake-up needs no work here; the engine drains poll_transmit afterwards.
        if self.rto_deadline != NEVER && now >= self.rto_deadline {
            self.rto_deadline = NEVER;
            self.on_rto(now);
        }
        if now >= self.cc_timer() {
            let ctx = self.ctx(now);
            self.cc.on_timer(&ctx);
        }
    }

    fn stats(&self) -> EndpointStats {
        EndpointStats {
            bytes: self.snd_una,
            // A rate-based controller has no window (an infinite one): report none.
            cwnd_bytes: if self.cwnd().is_finite() { self.cwnd() } else { 0.0 },
            rate_bps: self.cc.pacing_rate().map_or(0.0, |r| r * 8.0),
            srtt: self.rtt.srtt().unwrap_or(0),
            data_pkts_sent: self.data_pkts_sent,
            retransmits: self.retransmits,
            timeouts: self.timeouts,
            spurious_timeouts: self.spurious_timeouts,
            done: self.state == State::Established && self.size.is_some_and(|n| self.snd_una >= n),
        }
    }

    /// The transport's loss-recovery counters, then the controller's own metrics.
    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("fast_retransmits", "events", MetricValue::Count(self.fast_retransmits));
        out.put("timeouts_in_recovery", "events", MetricValue::Count(self.timeouts_in_recovery));
        out.put("fast_retransmits_refused", "events", MetricValue::Count(self.fast_retransmits_refused));
        self.cc.metrics(out);
    }
}
