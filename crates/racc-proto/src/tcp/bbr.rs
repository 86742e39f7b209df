//! BBR v1 (Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 2016;
//! draft-cardwell-iccrg-bbr-congestion-control-00, "the BBR draft") as Linux's
//! `net/ipv4/tcp_bbr.c` runs it, a congestion controller on the TCP transport (the registry's
//! "bbr").
//!
//! BBR models the path by two numbers: the bottleneck bandwidth BtlBw, the maximum delivery
//! rate of the last 10 round trips (`bbr_filter.rs` over the samples of `bbr_rate.rs`), and
//! RTprop, the minimum RTT of the last 10 s. It paces at pacing_gain·BtlBw and caps the data in
//! flight at cwnd_gain·BtlBw·RTprop, through four modes: STARTUP (gain 2/ln 2) until the
//! bandwidth stops growing, DRAIN (its inverse) until the queue STARTUP built is gone, PROBE_BW
//! (an 8-phase gain cycle), and PROBE_RTT (4 packets for 200 ms when RTprop is 10 s old).
//!
//! Not done (said where it matters): the long-term ("policer") bandwidth mode of
//! `bbr_lt_bw_sampling`, the ACK-aggregation allowance of `bbr_update_ack_aggregation`,
//! idle-restart handling (`bbr_cwnd_event`) and application-limited samples (racc's senders
//! are window- or size-limited), and TSO's send quantum (racc has no TSO: one segment).
//! ECN is ignored, as BBR v1 does.

use super::bbr_filter::MaxFilter;
use super::bbr_rate::{DeliveryRate, RateSample};
use crate::cc::{Ack, CongestionControl, Response, SenderCtx, Signal};
use crate::endpoint::{Endpoint, FlowConfig};
use crate::packet::{hdr, Kind, Packet};
use crate::params::{parse, ParamError};
use crate::protocol::FlowProtocol;
use crate::rng::SimRng;
use crate::tcp::{initial_window_bytes, mss_for, tcp_receiver, tcp_sender_with, Recovery};
use crate::time::{Time, NS_PER_SEC};
use std::sync::Arc;

pub use super::bbr_params::*;

#[path = "bbr_window.rs"]
mod window;

/// The transport's loss state as BBR tracks it (Linux `icsk_ca_state`: Open, Recovery, Loss).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum LossState {
    Open,
    Recovery,
    Loss,
}

/// BBR's sender state.
#[derive(Clone, Debug)]
pub struct Bbr {
    smss: f64,
    /// Wire bytes of a full data packet per payload byte (pacing counts wire bytes).
    wire_per_payload: f64,
    rate: DeliveryRate,
    mode: Mode,
    /// cwnd, packets (Linux counts packets; the transport sees bytes).
    cwnd: f64,
    /// The cwnd before a loss recovery or PROBE_RTT, restored after (Linux `prior_cwnd`).
    prior_cwnd: f64,
    init_cwnd: f64,
    /// Pacing rate, payload bytes/s.
    pacing_rate: f64,
    has_seen_rtt: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// BtlBw filter over round trips, payload bytes/s.
    bw: MaxFilter,
    rounds: u64,
    round_start: bool,
    next_round_delivered: u64,
    min_rtt: Option<Time>,
    min_rtt_stamp: Time,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    cycle_idx: usize,
    cycle_stamp: Time,
    full_bw: f64,
    full_bw_count: u32,
    full_bw_reached: bool,
    packet_conservation: bool,
    state: LossState,
    prev_state: LossState,
    /// Where the running recovery or timeout ends: one past the highest byte sent when it began.
    recovery_end: u64,
    /// Packets marked lost since the last ACK.
    losses: f64,
    /// Packets the last ACK delivered (the recovery's first window, Linux `bbr_set_cwnd`).
    last_acked: f64,
    rng: SimRng,
    probe_rtt_count: u64,
    cycles: u64,
}

impl Bbr {
    pub fn new(cfg: &FlowConfig, smss: u32) -> Bbr {
        let rng = SimRng::for_component(cfg.seed, &format!("tcp/bbr/cycle/flow{}", cfg.flow));
        Bbr::with(initial_window_bytes(cfg, smss) as f64 / smss as f64, smss, cfg.isn, rng)
    }

    /// Explicit starting window (packets), MSS and initial sequence number (tests).
    pub fn with(init_cwnd: f64, smss: u32, isn: u32, rng: SimRng) -> Bbr {
        let smss_f = smss as f64;
        let mut b = Bbr {
            smss: smss_f,
            wire_per_payload: (smss + hdr::IP_TCP) as f64 / smss_f,
            rate: DeliveryRate::new(isn, smss),
            mode: Mode::Startup,
            cwnd: init_cwnd,
            prior_cwnd: 0.0,
            init_cwnd,
            pacing_rate: 0.0,
            has_seen_rtt: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            bw: MaxFilter::default(),
            rounds: 0,
            round_start: false,
            next_round_delivered: 0,
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            cycle_idx: 0,
            cycle_stamp: 0,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_reached: false,
            packet_conservation: false,
            state: LossState::Open,
            prev_state: LossState::Open,
            recovery_end: 0,
            losses: 0.0,
            last_acked: 0.0,
            rng,
            probe_rtt_count: 0,
            cycles: 0,
        };
        b.init_pacing_rate(None);
        b
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// BtlBw, payload bytes/s (Linux `bbr_max_bw`).
    pub fn btl_bw(&self) -> f64 {
        self.bw.get()
    }

    /// RTprop, ns.
    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt
    }

    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }

    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// cwnd, packets.
    pub fn cwnd_packets(&self) -> f64 {
        self.cwnd
    }

    /// Payload bytes/s the controller paces at.
    pub fn pacing_rate_payload(&self) -> f64 {
        self.pacing_rate
    }

    /// The delivery-rate sampler (tests).
    pub fn sampler(&self) -> &DeliveryRate {
        &self.rate
    }

    /// Packets in flight after the last ACK.
    fn in_flight(&self) -> f64 {
        self.rate.in_flight() as f64 / self.smss
    }

    /// gain·BtlBw·RTprop, packets, rounded up (BBR draft §4.2.3.2; Linux `bbr_bdp`); the
    /// initial window before the first RTT sample.
    pub fn bdp(&self, bw: f64, gain: f64) -> f64 {
        match self.min_rtt {
            None => self.init_cwnd,
            Some(r) => (bw * r as f64 / NS_PER_SEC as f64 * gain / self.smss).ceil(),
        }
    }

    /// The bdp with room for the send quantum, rounded up to even, plus 2 in the probing
    /// phase (Linux `bbr_quantization_budget`; BBR draft §4.2.3.2).
    pub fn quantization_budget(&self, cwnd: f64) -> f64 {
        let mut c = cwnd + 3.0 * QUANTUM_SEGS;
        c = (c / 2.0).ceil() * 2.0;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            c += 2.0;
        }
        c
    }

    /// The in-flight target at `gain` (Linux `bbr_inflight`).
    pub fn inflight_target(&self, bw: f64, gain: f64) -> f64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// pacing = gain·bw·(1 − margin), payload bytes/s (Linux `bbr_bw_to_pacing_rate`).
    pub fn pacing_for(bw: f64, gain: f64) -> f64 {
        bw * gain * (1.0 - PACING_MARGIN)
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: high_gain·cwnd/RTT, with the smoothed RTT once
    /// there is one, else 1 ms.
    fn init_pacing_rate(&mut self, srtt: Option<Time>) {
        let rtt = match srtt {
            Some(r) if r > 0 => {
                self.has_seen_rtt = true;
                r
            }
            _ => DEFAULT_RTT,
        };
        let bw = self.cwnd * self.smss * NS_PER_SEC as f64 / rtt as f64;
        self.pacing_rate = Bbr::pacing_for(bw, HIGH_GAIN);
    }

    /// One ACK, whatever the transport's state (Linux `bbr_main`).
    pub fn on_ack_sample(&mut self, now: Time, rs: &RateSample, srtt: Option<Time>) {
        if self.state != LossState::Open && self.rate.snd_una() >= self.recovery_end {
            self.state = LossState::Open;
        }
        self.update_model(now, rs);
        let bw = self.btl_bw();
        self.set_pacing_rate(bw, self.pacing_gain, srtt);
        self.set_cwnd(rs, bw);
    }

    fn update_model(&mut self, now: Time, rs: &RateSample) {
        self.update_bw(rs);
        self.update_cycle_phase(rs);
        self.check_full_bw_reached(rs);
        self.check_drain();
        self.update_min_rtt(now, rs);
        self.update_gains();
    }

    /// Round counting and the BtlBw filter (BBR draft §4.5.1, §4.5.2; Linux `bbr_update_bw`).
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let Some(bw) = rs.bw() else { return };
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = self.rate.delivered();
            self.rounds += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        // No sample is application-limited here (module docs): every one enters the filter.
        self.bw.update(BW_WINDOW_ROUNDS, self.rounds, bw);
    }

    /// PROBE_BW's gain cycle (BBR draft §4.3.3; Linux `bbr_update_cycle_phase`).
    fn update_cycle_phase(&mut self, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs) {
            self.advance_cycle_phase();
        }
    }

    /// A phase lasts an RTprop; the probing phase also until losses or the flight reaches
    /// 5/4 of the BDP, the draining one ends early once the flight is down to the BDP (Linux
    /// `bbr_is_next_cycle_phase`).
    fn is_next_cycle_phase(&self, rs: &RateSample) -> bool {
        let full_length = self.rate.delivered_at().saturating_sub(self.cycle_stamp) > self.min_rtt.unwrap_or(0);
        let gain = self.pacing_gain;
        let prior = rs.prior_in_flight as f64 / self.smss;
        if gain == 1.0 {
            return full_length;
        }
        if gain > 1.0 {
            return full_length
                && (self.losses > 0.0 || rs.lost > 0 || prior >= self.inflight_target(self.btl_bw(), gain));
        }
        full_length || prior <= self.inflight_target(self.btl_bw(), 1.0)
    }

    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = self.rate.delivered_at();
        self.cycles += 1;
    }

    /// STARTUP's end: BtlBw grew less than 25 % in three rounds in a row (BBR draft §4.3.1.2;
    /// Linux `bbr_check_full_bw_reached`).
    fn check_full_bw_reached(&mut self, _rs: &RateSample) {
        if self.full_bw_reached || !self.round_start {
            return;
        }
        let bw = self.btl_bw();
        if bw >= self.full_bw * FULL_BW_GROWTH {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= FULL_BW_COUNT;
    }

    /// STARTUP → DRAIN once the pipe is full; DRAIN → PROBE_BW once the flight is down to
    /// one BDP (BBR draft §4.3.2; Linux `bbr_check_drain`).
    fn check_drain(&mut self) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
        }
        if self.mode == Mode::Drain && self.in_flight() <= self.inflight_target(self.btl_bw(), 1.0) {
            self.reset_probe_bw_mode();
        }
    }

    /// Enter PROBE_BW at a random phase other than the draining one (Linux
    /// `bbr_reset_probe_bw_mode`: idx = CYCLE_LEN − 1 − rand(CYCLE_RAND), then advance).
    fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND) as usize;
        self.advance_cycle_phase();
    }

    /// Back to STARTUP or PROBE_BW after PROBE_RTT (Linux `bbr_reset_mode`).
    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// RTprop and PROBE_RTT (BBR draft §4.3.4, §4.5.3; Linux `bbr_update_min_rtt`).
    fn update_min_rtt(&mut self, now: Time, rs: &RateSample) {
        let expired = now > self.min_rtt_stamp.saturating_add(MIN_RTT_WINDOW);
        if let Some(r) = rs.rtt {
            if self.min_rtt.is_none_or(|m| r < m) || expired {
                self.min_rtt = Some(r);
                self.min_rtt_stamp = now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.probe_rtt_count += 1;
            self.save_cwnd();
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            match self.probe_rtt_done {
                // Hold 4 packets for 200 ms and at least one round once the flight is down.
                None if self.in_flight() <= MIN_CWND => {
                    self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                    self.probe_rtt_round_done = false;
                    self.next_round_delivered = self.rate.delivered();
                }
                Some(_) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done {
                        self.check_probe_rtt_done(now);
                    }
                }
                None => {}
            }
        }
    }

    /// Linux `bbr_check_probe_rtt_done`: the min RTT is fresh again; restore the window.
    fn check_probe_rtt_done(&mut self, now: Time) {
        if self.probe_rtt_done.is_none_or(|d| now <= d) {
            return;
        }
        self.min_rtt_stamp = now;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode();
    }

    /// The gains of the mode (BBR draft §4.3; Linux `bbr_update_gains`).
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// Linux `bbr_set_pacing_rate`: the first smoothed RTT resets the initial rate; STARTUP
    /// never lowers the rate.
    fn set_pacing_rate(&mut self, bw: f64, gain: f64, srtt: Option<Time>) {
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate(srtt);
        }
        let rate = Bbr::pacing_for(bw, gain);
        if rate > 0.0 && (self.full_bw_reached || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }
}

impl CongestionControl for Bbr {
    fn window(&self) -> f64 {
        self.cwnd * self.smss
    }

    fn set_window(&mut self, window: f64, _ssthresh: f64) {
        self.cwnd = window / self.smss;
    }

    /// Everything happens in `on_wire_arrival`, which sees every ACK (BBR runs on each,
    /// in a loss recovery too: Linux `tcp_cong_control` → `bbr_main`).
    fn on_ack(&mut self, _ack: &Ack<'_>, _ctx: &SenderCtx) {}

    fn on_congestion(&mut self, signal: Signal, ctx: &SenderCtx) -> Response {
        match signal {
            Signal::Loss => {
                self.enter_recovery();
                Response::SetWindow(self.window())
            }
            Signal::Timeout => {
                self.enter_loss(ctx.consecutive_rtos == 0);
                Response::SetWindow(self.window())
            }
            // BBR v1 does not react to ECN.
            Signal::EcnEcho => Response::Keep,
            Signal::SynTimeout => Response::SetWindow(self.smss),
        }
    }

    /// The recovery's window is BBR's own, re-read at every ACK.
    fn recovery_base(&self, _ctx: &SenderCtx) -> Option<f64> {
        Some(self.window())
    }

    /// Linux `bbr_undo_cwnd`: the plateau count starts again; the window before the timeout
    /// comes back (`tcp_undo_cwnd_reduction`).
    fn on_spurious_timeout(&mut self, _ctx: &SenderCtx) {
        self.full_bw = 0.0;
        self.full_bw_count = 0;
        self.state = LossState::Open;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    fn on_send(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        self.rate.on_send(ctx.now, pkt);
    }

    fn on_wire_arrival(&mut self, pkt: &mut Packet, ctx: &SenderCtx) {
        if pkt.kind != Kind::Ack {
            return;
        }
        let rs = self.rate.on_ack(ctx.now, pkt, self.min_rtt);
        self.on_ack_sample(ctx.now, &rs, ctx.srtt);
    }

    fn pacing_rate(&self) -> Option<f64> {
        Some(self.pacing_rate * self.wire_per_payload)
    }

    /// Linux paces BBR's every segment (`tcp_bbr.c` sets `sk_pacing_status`), recovery's too.
    fn paces_every_segment(&self) -> bool {
        true
    }

    fn metrics(&self, out: &mut dyn crate::metrics::MetricSink) {
        use crate::metrics::MetricValue;
        out.put("bbr_mode", "mode", MetricValue::Gauge(self.mode.code()));
        out.put("bbr_btl_bw", "bps", MetricValue::Gauge(self.btl_bw() * 8.0));
        let rtprop = self.min_rtt.map_or(0.0, |r| r as f64 / NS_PER_SEC as f64);
        out.put("bbr_min_rtt", "s", MetricValue::Gauge(rtprop));
        out.put("bbr_pacing_gain", "ratio", MetricValue::Gauge(self.pacing_gain));
        out.put("bbr_probe_rtt", "events", MetricValue::Count(self.probe_rtt_count));
        out.put("bbr_cycle_phases", "events", MetricValue::Count(self.cycles));
    }
}

/// A "bbr" flow's checked parameters.
#[derive(Debug)]
struct BbrFlow(BbrParams);

impl FlowProtocol for BbrFlow {
    fn sender(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        let cc = Bbr::new(cfg, mss_for(cfg, 0));
        tcp_sender_with(cfg, Recovery::NewReno, &self.0.tcp, Box::new(cc))
    }

    fn receiver(&self, cfg: &FlowConfig) -> Box<dyn Endpoint> {
        tcp_receiver(cfg)
    }
}

/// The registry's "bbr".
pub fn parse_bbr(params: &serde_json::Value) -> Result<Arc<dyn FlowProtocol>, ParamError> {
    let p: BbrParams = parse(params)?;
    p.validate()?;
    Ok(Arc::new(BbrFlow(p)))
}

#[cfg(test)]
#[path = "bbr_tests.rs"]
mod tests;
