//! CCID2's congestion window in packets (RFC 4341 §5; VCP-DCCP Fig. 2), growing either by
//! TCP-like slow start and congestion avoidance or, for DCCP/VCP, by VCP's laws
//! ([`VcpLaws`], VCP-DCCP A3–A5: the same code TCP/VCP runs). Loss, ECN marks and timeouts
//! are CCID2's in both (docs/PROTOCOLS.md §2: "DCCP/VCP: CCID2 loss, timeout and Ack Ratio rules,
//! with A3–A5 in place of slow start and congestion avoidance").

use crate::vcp::VcpLaws;

/// How the window grows on acknowledged packets.
#[derive(Clone, Debug)]
pub enum Growth {
    /// Fig. 2: slow start +1 per acknowledged packet (at most R per ACK, RFC 4341 §5) while
    /// cwnd < ssthresh; then +1 per cwnd acknowledged packets.
    Ccid2,
    /// VCP's MI/AI/MD on the echoed code, per acknowledged packet; `slow_start` runs Fig. 2's
    /// slow start until the first loss first (VCP's `initial_slow_start`).
    Vcp { laws: VcpLaws, slow_start: bool },
}

#[derive(Clone, Debug)]
pub struct DccpWindow {
    cwnd: f64,
    ssthresh: f64,
    /// Packets acknowledged toward the next +1 of congestion avoidance.
    ca_acked: f64,
    growth: Growth,
    halvings: u64,
}

impl DccpWindow {
    pub fn new(iw: f64, ssthresh: f64, growth: Growth) -> DccpWindow {
        DccpWindow { cwnd: iw.max(1.0), ssthresh, ca_acked: 0.0, growth, halvings: 0 }
    }

    /// Congestion window, packets.
    #[inline]
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Slow-start threshold, packets (∞ under VCP without its initial slow start).
    pub fn ssthresh(&self) -> f64 {
        match self.growth {
            Growth::Vcp { slow_start: false, .. } => f64::INFINITY,
            _ => self.ssthresh,
        }
    }

    pub fn in_slow_start(&self) -> bool {
        match self.growth {
            Growth::Ccid2 => self.cwnd < self.ssthresh,
            Growth::Vcp { slow_start, .. } => slow_start && self.cwnd < self.ssthresh,
        }
    }

    /// Halvings (loss or mark responses) so far.
    pub fn halvings(&self) -> u64 {
        self.halvings
    }

    /// VCP's MDs so far (0 for CCID2).
    pub fn vcp_mds(&self) -> Option<u64> {
        match &self.growth {
            Growth::Vcp { laws, .. } => Some(laws.md_count()),
            Growth::Ccid2 => None,
        }
    }

    /// True when ECN marks are VCP codes rather than congestion marks.
    pub fn reads_codes(&self) -> bool {
        matches!(self.growth, Growth::Vcp { .. })
    }

    /// An ACK reported `k` packets received for the first time, echoing `code`, with Ack Ratio
    /// `ratio`, the sender's RTT `rtt_s`.
    pub fn on_ack(&mut self, k: u64, code: u8, ratio: u16, rtt_s: f64, now: crate::time::Time) {
        if k == 0 {
            return;
        }
        if self.in_slow_start() {
            self.cwnd += k.min(ratio.max(1) as u64) as f64;
            return;
        }
        match &mut self.growth {
            Growth::Ccid2 => {
                self.ca_acked += k as f64;
                while self.ca_acked >= self.cwnd {
                    self.ca_acked -= self.cwnd;
                    self.cwnd += 1.0;
                }
            }
            Growth::Vcp { laws, .. } => self.cwnd = laws.on_code(self.cwnd, code, k as f64, rtt_s, now),
        }
    }

    /// A loss or ECN mark (the sender calls this at most once per window): cwnd =
    /// max(1, ⌊cwnd/2⌋), ssthresh = max(cwnd, 2) (RFC 4341 §5).
    pub fn halve(&mut self) {
        self.cwnd = (self.cwnd / 2.0).floor().max(1.0);
        self.ssthresh = self.cwnd.max(2.0);
        self.ca_acked = 0.0;
        self.halvings += 1;
        if let Growth::Vcp { slow_start, .. } = &mut self.growth {
            *slow_start = false;
        }
    }

    /// The RTO expired: ssthresh = max(cwnd/2, 2), cwnd = 1 (RFC 4341 §5, TCP-like).
    pub fn on_timeout(&mut self) {
        self.ssthresh = (self.cwnd / 2.0).floor().max(2.0);
        self.cwnd = 1.0;
        self.ca_acked = 0.0;
        if let Growth::Vcp { slow_start, .. } = &mut self.growth {
            *slow_start = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::ecn;
    use crate::vcp::VcpParams;

    #[test]
    fn ccid2_slow_start_then_one_packet_per_window() {
        let mut w = DccpWindow::new(2.0, 8.0, Growth::Ccid2);
        w.on_ack(2, 0, 2, 0.1, 0);
        assert_eq!(w.cwnd(), 4.0, "+1 per acknowledged packet");
        w.on_ack(5, 0, 2, 0.1, 0);
        assert_eq!(w.cwnd(), 6.0, "at most R = 2 per ACK");
        w.on_ack(2, 0, 2, 0.1, 0);
        assert_eq!(w.cwnd(), 8.0);
        assert!(!w.in_slow_start());
        w.on_ack(7, 0, 2, 0.1, 0);
        assert_eq!(w.cwnd(), 8.0);
        w.on_ack(1, 0, 2, 0.1, 0);
        assert_eq!(w.cwnd(), 9.0, "+1 after a window of 8");
        w.halve();
        assert_eq!((w.cwnd(), w.ssthresh()), (4.0, 4.0));
        w.on_timeout();
        assert_eq!((w.cwnd(), w.ssthresh()), (1.0, 2.0));
        w.halve();
        assert_eq!((w.cwnd(), w.ssthresh()), (1.0, 2.0), "never below one packet");
    }

    #[test]
    fn vcp_growth_is_vcp_laws() {
        let p = VcpParams::default();
        let mut w = DccpWindow::new(2.0, f64::INFINITY, Growth::Vcp { laws: VcpLaws::new(&p), slow_start: false });
        let mut laws = VcpLaws::new(&p);
        let mut c = 2.0;
        for (code, k, t) in [(ecn::ECT1, 2, 0), (ecn::ECT0, 3, 1), (ecn::CE, 1, 2), (ecn::CE, 2, 3)] {
            w.on_ack(k, code, 2, 0.12, t);
            c = laws.on_code(c, code, k as f64, 0.12, t);
            assert_eq!(w.cwnd(), c);
        }
        assert_eq!(w.vcp_mds(), Some(1), "one MD, then the hold");
        assert!(w.reads_codes());
    }

    /// DCCP/VCP takes `ai_law` with the rest of VCP's table: code 10 at rtt 300 ms adds
    /// α·S(3)/cwnd = 9/cwnd per packet under "ns2", (0.3/0.2)²/cwnd = 2.25/cwnd under seed001.
    #[test]
    fn vcp_growth_follows_ai_law() {
        for (law, s) in [(crate::vcp::AiLawName::Ns2, 9.0), (crate::vcp::AiLawName::Seed001, 2.25)] {
            let p = VcpParams { ai_law: law, ..Default::default() };
            let mut w = DccpWindow::new(10.0, f64::INFINITY, Growth::Vcp { laws: VcpLaws::new(&p), slow_start: false });
            w.on_ack(2, ecn::ECT0, 2, 0.3, 0);
            assert!((w.cwnd() - (10.0 + 2.0 * s / 10.0)).abs() < 1e-12, "{law:?}: {}", w.cwnd());
        }
    }
}
