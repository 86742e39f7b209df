//! A packet capture of some ports during a run, written in time order as pcapng
//! ([`crate::pcap::PortCapture`]), each packet's bytes built by the wire layer.

use super::*;

impl Simulator {
    /// Capture the packets that start serialisation on `ports` (every port if `None`) into a
    /// pcapng file at `path` ([`crate::pcap`]); call before running. Written as the run goes
    /// (at each sample and when `run_until` returns); a write error stops the capture, not the
    /// run ([`Self::capture_status`]).
    pub fn capture(&mut self, path: &std::path::Path, ports: Option<&[usize]>) -> std::io::Result<()> {
        self.capture = Some(Box::new(PortCapture::start(path, &mut self.ports, ports, 0, 2048)?));
        Ok(())
    }

    /// Packets written to the capture per port, and the error that stopped it, if any.
    pub fn capture_status(&self) -> Option<(&[u64], Option<&str>)> {
        self.capture.as_ref().map(|c| (&c.file.counts[..], c.error.as_deref()))
    }

    /// Write what the captured ports sent since the last call, in time order.
    pub(super) fn write_capture(&mut self) {
        let Some(cap) = self.capture.as_mut() else { return };
        let (spec, made) = (&self.spec, &self.made);
        cap.drain(&mut self.ports, |t, buf| {
            let info = match (t.pkt.flow as usize).checked_sub(spec.flows.len()) {
                None => &spec.flows[t.pkt.flow as usize],
                Some(m) => &spec.sources[made[m].source as usize].flow,
            };
            let addrs = [ip_packet::host_addr(info.src), ip_packet::host_addr(info.dst)];
            ip_packet::emit(&t.pkt, addrs, buf).map_err(|e| e.to_string())
        });
        if self.now >= self.spec.duration {
            cap.flush();
        }
    }
}
