//! Flows during a run: listed flows started in order, flows made by closed-loop sources, and
//! their endpoints built and run.

use super::*;

impl Simulator {
    pub(super) fn flow_start(&mut self) {
        let i = self.next_start;
        self.next_start += 1;
        if let Some(n) = self.spec.flows.get(self.next_start) {
            self.q.push(n.start, What::FlowStart, self.next_start as u32);
        }
        let (snd, rcv) = self.endpoints(&self.spec.flows[i], i, self.spec.flows[i].size_bytes);
        self.run_flow(i, snd, rcv);
    }

    /// A source's next flow arrives: make it from the source's template, with the next id.
    pub(super) fn source_flow(&mut self, s: usize) {
        let f = self.flows.len();
        let size = self.sources[s].next_bytes;
        self.flows.push(FlowRt::pending(Some(size), self.sources[s].routes));
        self.flow_group.push(self.sources[s].group);
        self.last_bytes.push(0);
        self.made.push(Made { source: s as u32, start: self.now });
        let (snd, rcv) = self.endpoints(&self.spec.sources[s].flow, f, Some(size));
        self.run_flow(f, snd, rcv);
    }

    /// Schedule a source's next flow, if it has one.
    pub(super) fn schedule_source(&mut self, s: usize, next: Option<crate::traffic::Arrival>) {
        if let Some(a) = next {
            // Ids are u32 (`Packet::flow`); `limits.flows` keeps runs far below.
            assert!(self.flows.len() < u32::MAX as usize, "flow ids exhausted");
            self.sources[s].next_bytes = a.bytes;
            self.q.push(a.time.max(self.now), What::SourceFlow, s as u32);
        }
    }

    /// The sender and receiver of flow `id` as `spec` describes it, sending `size` bytes.
    pub(super) fn endpoints(
        &self,
        spec: &FlowSpec,
        id: usize,
        size: Option<u64>,
    ) -> (Box<dyn Endpoint>, Box<dyn Endpoint>) {
        let cfg = flow_config_for(&self.spec, spec, id, size);
        // The factory holds the parameters checked when the scenario was built.
        (spec.factory.sender(&cfg), spec.factory.receiver(&cfg))
    }

    /// Start flow `f` with its endpoints.
    pub(super) fn run_flow(&mut self, f: usize, mut snd: Box<dyn Endpoint>, mut rcv: Box<dyn Endpoint>) {
        let now = self.now;
        rcv.start(now);
        snd.start(now);
        let fl = &mut self.flows[f];
        fl.sender = Some(snd);
        fl.receiver = Some(rcv);
        self.transmit(f, SENDER);
        self.transmit(f, RECEIVER);
    }

    /// Flows so far: the listed ones and those sources have made.
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }

    /// What the results say of flow `f` (< [`Self::flow_count`]).
    pub fn flow_info(&self, f: usize) -> FlowInfo<'_> {
        match f.checked_sub(self.spec.flows.len()) {
            None => {
                let spec = &self.spec.flows[f];
                FlowInfo { spec, start: spec.start, size_bytes: spec.size_bytes, source: None }
            }
            Some(m) => {
                let Made { source, start } = self.made[m];
                let spec = &self.spec.sources[source as usize].flow;
                FlowInfo { spec, start, size_bytes: self.flows[f].size(), source: Some(source as usize) }
            }
        }
    }

    /// Flows whose endpoints exist now (started, not yet completed).
    pub fn running_flows(&self) -> usize {
        self.flows.iter().filter(|f| f.running()).count()
    }
}
