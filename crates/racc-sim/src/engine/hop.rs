//! The event loop and the per-hop path: each event dispatched, a port's head taken off the wire
//! and forwarded or delivered, an endpoint's answers sent, timers armed and fired. Kept in one
//! file (one codegen unit) with its inlining as measured (docs/SIMULATOR.md, the per-hop path).

use super::*;

impl Simulator {
    /// Run every event up to and including time `t` (capped at the end of the run).
    /// Returns true once the run is complete.
    pub fn run_until(&mut self, t: Time) -> bool {
        self.run_events::<false>(t, u64::MAX);
        self.finished()
    }

    /// [`Self::run_until`] `t`, but stop after at most `max_events` events; true once `t` is
    /// reached. Slices bound the wall time between two looks at Ctrl-C at any event density;
    /// where a run is sliced does not change it (events run in the same order).
    pub fn run_slice(&mut self, t: Time, max_events: u64) -> bool {
        self.run_events::<true>(t, max_events)
    }

    /// The event loop. `SLICED` is a constant so that `run_until` (the bare benchmark's loop)
    /// carries no per-event budget compare: measured +1 % instructions per event with it.
    #[inline(always)]
    fn run_events<const SLICED: bool>(&mut self, t: Time, max_events: u64) -> bool {
        let t = t.min(self.spec.duration);
        let stop = self.events.saturating_add(max_events);
        loop {
            if SLICED && self.events >= stop {
                return false;
            }
            let Some(ev) = self.q.pop_due(t) else { break };
            // Causality: checked on every event (one compare), reported by `time_reversals`.
            if ev.time < self.now {
                self.time_reversals += 1;
            }
            self.now = ev.time;
            self.events += 1;
            let i = ev.idx() as usize;
            match ev.what() {
                What::PortHead => self.port_head(i),
                What::SenderTimer => self.timer(i, SENDER),
                What::ReceiverTimer => self.timer(i, RECEIVER),
                What::Tick => {
                    self.ports[i].tick(self.now, &mut self.slab.pkts);
                    if let Some(nt) = self.ports[i].next_tick() {
                        self.q.push(nt.max(self.now + 1), What::Tick, i as u32);
                    }
                }
                What::FlowStart => self.flow_start(),
                What::SourceFlow => self.source_flow(i),
                What::FlowStop => {
                    if let Some(s) = self.flows[i].sender.as_mut() {
                        s.stop(self.now);
                    }
                }
                // The run's last sample is taken below, after every event at the end time.
                What::Sample if self.now >= self.spec.duration => {}
                What::Sample => {
                    self.sample();
                    self.write_capture();
                }
                What::Medium => self.medium_event(i),
            }
        }
        self.now = self.now.max(t);
        if self.now >= self.spec.duration && self.last_sample < self.spec.duration {
            // Last, so that what events at the end time deliver is in the samples too.
            self.sample();
        }
        if self.capture.is_some() {
            self.write_capture();
        }
        true
    }

    #[inline]
    pub(super) fn port_head(&mut self, p: usize) {
        let port = &mut self.ports[p];
        let slot = port.pop_head(self.now, &mut self.slab.pkts);
        if let Some(t) = port.head_arrival() {
            self.q.push(t, What::PortHead, p as u32);
        }
        if slot.lost {
            self.cons.lost += 1;
            self.slab.release(slot.pkt);
            return;
        }
        // The slot's position in the route table: the next entry is the next port, or the
        // route's end. Only delivery reads the packet.
        let next = slot.hop + 1;
        let np = self.route_ports[next as usize];
        if np != ROUTE_END {
            self.forward(np as usize, slot.pkt, next, slot.group, slot.size);
        } else {
            let pkt = &self.slab.pkts[slot.pkt as usize];
            // The direction the emitting endpoint set: the data path or the return path.
            let (f, forward_dir) = (pkt.flow as usize, pkt.dir == Direction::Forward);
            self.deliver(f, slot.pkt, forward_dir, slot.group);
        }
    }

    /// Offer slab packet `idx` (`size` bytes on the wire) to port `p`, the entry `hop` of the
    /// route table. Inlined into its two callers (the per-hop path and `transmit`): as a call
    /// its register saves cost more than its body's bookkeeping.
    #[inline(always)]
    pub(super) fn forward(&mut self, p: usize, idx: u32, hop: u32, group: u16, size: u32) {
        match self.ports[p].enqueue_sized(self.now, idx, &mut self.slab.pkts, hop, group, size) {
            Accept::Queued { was_empty: true } => {
                let t = self.ports[p].head_arrival().expect("just queued");
                self.q.push(t, What::PortHead, p as u32);
            }
            Accept::Queued { was_empty: false } => {}
            other => self.not_queued(p, idx, other),
        }
    }

    /// The rare outcomes of `forward`, out of line so that the per-hop path stays as short as
    /// it was before media existed.
    #[cold]
    #[inline(never)]
    pub(super) fn not_queued(&mut self, p: usize, idx: u32, a: Accept) {
        match a {
            Accept::Dropped => {
                self.cons.dropped += 1;
                self.slab.release(idx);
            }
            Accept::Contend => self.contend(p),
            Accept::Queued { .. } => unreachable!(),
        }
    }

    /// Port `p`, a member's port onto a medium, has a packet waiting: the member contends,
    /// which may bring the medium's next decision forward.
    pub(super) fn contend(&mut self, p: usize) {
        let (m, member) = self.ports[p].medium().expect("a medium port");
        if let Some(t) = self.media[m].join(self.now, member) {
            self.q.push(t, What::Medium, m as u32);
        }
    }

    /// Medium `m` decides its channel at `now` (a transmission or a collision starts).
    #[inline(never)]
    pub(super) fn medium_event(&mut self, m: usize) {
        let med = &mut self.media[m];
        let next = med.decide(self.now, &mut self.ports, &mut self.slab.pkts);
        for (p, t) in med.started.drain(..) {
            self.q.push(t, What::PortHead, p);
        }
        if let Some(t) = next {
            self.q.push(t, What::Medium, m as u32);
        }
    }

    /// Packet `idx` of flow `f` (in flow group `group`, from its slot) reaches its endpoint.
    pub(super) fn deliver(&mut self, f: usize, idx: u32, forward_dir: bool, group: u16) {
        self.cons.delivered += 1;
        if !self.flows[f].running() {
            self.slab.release(idx);
            return; // a straggler of a finished flow
        }
        let side = if forward_dir { RECEIVER } else { SENDER };
        let now = self.now;
        {
            let fl = &mut self.flows[f];
            let ep = if side == SENDER { fl.sender.as_mut() } else { fl.receiver.as_mut() };
            ep.expect("running flow has endpoints").on_packet(now, &self.slab.pkts[idx as usize]);
        }
        self.slab.release(idx);
        self.send(f, side, group);
        if side == SENDER {
            self.check_done(f);
        }
    }

    /// `send` with the flow's group looked up (a flow's start, a timer): out of line, so that
    /// `send` is inlined only into the per-delivery path.
    #[inline(never)]
    pub(super) fn transmit(&mut self, f: usize, side: usize) {
        self.send(f, side, self.flow_group[f]);
    }

    /// Drain an endpoint's `poll_transmit_into` onto the first port of its path (each packet
    /// written straight into its slab slot; a drain ends at `Last` without an empty poll), then
    /// re-arm its timer. Flow `f` is in flow group `group`.
    #[inline(always)]
    pub(super) fn send(&mut self, f: usize, side: usize, group: u16) {
        debug_assert_eq!(group, self.flow_group[f]);
        let now = self.now;
        let hop = self.flows[f].routes[side];
        let first = self.route_ports[hop as usize] as usize;
        loop {
            let fl = &mut self.flows[f];
            let ep = if side == SENDER { fl.sender.as_mut() } else { fl.receiver.as_mut() };
            let Some(ep) = ep else { return };
            let idx = self.slab.vacant();
            let sent = ep.poll_transmit_into(now, &mut self.slab.pkts[idx as usize]);
            if sent == Transmit::Idle {
                break;
            }
            self.slab.take();
            let pkt = &self.slab.pkts[idx as usize];
            debug_assert_eq!(pkt.flow as usize, f);
            // A sender emits onto the data path, a receiver onto the return path.
            debug_assert_eq!(pkt.dir == Direction::Forward, side == SENDER, "flow {f}: {:?}", pkt.dir);
            self.cons.sent += 1;
            let size = pkt.size;
            self.forward(first, idx, hop, group, size);
            if sent == Transmit::Last {
                break;
            }
        }
        self.arm(f, side);
    }

    /// Keep one timer event per endpoint ([`Timer`]): only schedule when the wanted time is
    /// earlier than the one already queued. A later deadline (an RTO pushed back by an ACK) is
    /// left to the earlier event, which finds nothing due and re-arms (lazy timers).
    #[inline]
    pub(super) fn arm(&mut self, f: usize, side: usize) {
        let fl = &mut self.flows[f];
        let ep = if side == SENDER { fl.sender.as_ref() } else { fl.receiver.as_ref() };
        let Some(ep) = ep else { return };
        if let Some(t) = ep.poll_timeout() {
            let what = if side == SENDER { What::SenderTimer } else { What::ReceiverTimer };
            fl.timer[side].arm(&mut self.q, t.max(self.now), what, f as u32);
        }
    }

    pub(super) fn timer(&mut self, f: usize, side: usize) {
        if !self.flows[f].timer[side].fire(self.now) {
            return; // superseded by an earlier event
        }
        let now = self.now;
        if now == self.spin_at {
            self.spin_n += 1;
            if self.spin_n > SPIN_LIMIT {
                self.spinning(f);
            }
        } else {
            (self.spin_at, self.spin_n) = (now, 0);
        }
        {
            let fl = &mut self.flows[f];
            let ep = if side == SENDER { fl.sender.as_mut() } else { fl.receiver.as_mut() };
            match ep {
                Some(ep) => ep.on_timeout(now),
                None => return,
            }
        }
        self.transmit(f, side);
        if side == SENDER {
            self.check_done(f);
        }
    }

    /// More endpoint timers fired at one instant than any scenario has flows: one of them is
    /// due again each time it fires and nothing moves (a protocol's `poll_timeout` asking for a
    /// time at which its `poll_transmit` sends nothing). Stop with the flow's name rather than
    /// spin for ever.
    #[cold]
    #[inline(never)]
    fn spinning(&self, f: usize) -> ! {
        let group = self.groups[self.flow_group[f] as usize].as_str();
        panic!(
            "flow {f} (of {group}): its timer fired {SPIN_LIMIT} times at {} ns with simulated time standing still; \
             a protocol bug (poll_timeout asks for a time at which poll_transmit sends nothing)",
            self.now
        );
    }

    pub(super) fn check_done(&mut self, f: usize) {
        let fl = &self.flows[f];
        let Some(size) = fl.size() else { return };
        if fl.sender.as_ref().is_some_and(|s| s.stats().done) {
            self.complete(f, size);
        }
    }

    /// Flow `f` has all its `size` bytes acknowledged: count them, record it, free its endpoints.
    /// Out of line: it runs once per flow, its caller once per ACK.
    #[cold]
    #[inline(never)]
    pub(super) fn complete(&mut self, f: usize, size: u64) {
        let made = f.checked_sub(self.spec.flows.len()).map(|m| self.made[m]);
        let start = made.map_or_else(|| self.spec.flows[f].start, |m| m.start);
        let fl = &mut self.flows[f];
        let rb = fl.receiver.as_ref().map_or(0, |r| r.stats().bytes);
        let delta = rb - self.last_bytes[f];
        self.goodput_bytes += delta;
        self.done_bytes += rb;
        self.last_bytes[f] = rb;
        if self.spec.record_flows {
            // The flow has no row after this: what it delivered since its last row goes into
            // one at the next sample time, so its series adds up to every byte. (The run's last
            // sample comes after every event, so that time is still ahead.)
            let next = (self.last_sample + self.spec.sample_interval).min(self.spec.duration);
            let dt = (next - self.last_sample) as f64 * 1e-9;
            self.flow_series.push(next as f64 * 1e-9, f as u32, delta, dt, fl.sender.as_deref());
        }
        fl.sender = None;
        fl.receiver = None;
        self.completions.push(f as u32, size, start, self.now);
        if let Some(m) = made {
            // Its source answers with its next flow (VCP-DCCP §4: a think time after this one).
            let s = m.source as usize;
            let next = self.sources[s].source.on_complete(self.now);
            self.schedule_source(s, next);
        }
    }
}
