//! The "codel" router module: CoDel (RFC 8289) on a port's one FIFO, acting at dequeue.

use super::law::{Action, CodelLaw};
use super::params::CodelParams;
use crate::metrics::{MetricSink, MetricValue};
use crate::packet::{ecn, Packet};
use crate::router::{PortView, RouterModule, Verdict};
use crate::time::Time;

/// CoDel on one port. Arrivals pass (the buffer limit stays the port's tail drop, as RFC 8289
/// §5.4's enqueue routine leaves it); every packet meets [`CodelLaw`] when it leaves the queue.
#[derive(Clone, Debug)]
pub struct Codel {
    law: CodelLaw,
    ecn: bool,
    drops: u64,
    marks: u64,
    /// Packets dequeued (sent or dropped) and the sum of their sojourn times: the mean
    /// standing delay over any sampled interval.
    dequeues: u64,
    sojourn_ns: u64,
}

impl Codel {
    /// A module with `p` (checked) on a port whose data packets are `pkt_size` bytes (0: unknown).
    pub fn new(p: &CodelParams, pkt_size: u32) -> Codel {
        let mtu = p.mtu(pkt_size);
        Codel {
            law: CodelLaw::new(p.target_ns(), p.interval_ns(), mtu as u64),
            ecn: p.ecn,
            drops: 0,
            marks: 0,
            dequeues: 0,
            sojourn_ns: 0,
        }
    }

    /// The control state (tests).
    pub fn law(&self) -> &CodelLaw {
        &self.law
    }
}

impl RouterModule for Codel {
    fn name(&self) -> &'static str {
        "codel"
    }

    fn on_arrival(&mut self, _now: Time, _pkt: &mut Packet, _port: &PortView) -> Verdict {
        Verdict::Forward
    }

    fn acts_at_dequeue(&self) -> bool {
        true
    }

    fn on_dequeue(&mut self, now: Time, pkt: &mut Packet, sojourn: Time, _queue: usize, port: &PortView) -> Verdict {
        self.dequeues += 1;
        self.sojourn_ns += sojourn;
        let can_mark = self.ecn && pkt.is_ect();
        match self.law.dequeue(now, sojourn, port.queue_bytes, port.queue_pkts == 0, can_mark) {
            Action::Send => Verdict::Forward,
            Action::Drop => {
                self.drops += 1;
                Verdict::Drop
            }
            Action::Mark => {
                pkt.set_visible_ecn(ecn::CE);
                self.marks += 1;
                Verdict::Mark
            }
        }
    }

    fn metrics(&self, out: &mut dyn MetricSink) {
        out.put("codel_drops", "packets", MetricValue::Count(self.drops));
        out.put("codel_marks", "packets", MetricValue::Count(self.marks));
        out.put("codel_dequeues", "packets", MetricValue::Count(self.dequeues));
        out.put("codel_sojourn_ns", "ns", MetricValue::Count(self.sojourn_ns));
        out.put("codel_dropping", "", MetricValue::Flag(self.law.dropping));
        out.put("codel_count", "packets", MetricValue::Gauge(self.law.count as f64));
    }
}
