//! A packet capture of some ports during a run, written in time order as pcapng (`crate::pcap`).

use super::*;

impl Simulator {
    /// Capture the packets that start serialisation on `ports` (every port if `None`) into a
    /// pcapng file at `path` ([`crate::pcap`]); call before running. Written as the run goes
    /// (at each sample and when `run_until` returns); a write error stops the capture, not the
    /// run ([`Self::capture_error`]).
    pub fn capture(&mut self, path: &std::path::Path, ports: Option<&[usize]>) -> std::io::Result<()> {
        let all: Vec<usize> = (0..self.ports.len()).collect();
        let ports = ports.unwrap_or(&all);
        let named: Vec<(usize, &str)> = ports.iter().map(|&p| (p, self.ports[p].name.as_str())).collect();
        let file = crate::pcap::Capture::create(path, &named, self.ports.len(), 0)?;
        for &p in ports {
            self.ports[p].start_tap();
        }
        self.capture = Some(Box::new(CaptureState { file, batch: Vec::new(), buf: vec![0; 2048], error: None }));
        Ok(())
    }

    /// Packets written to the capture per port, and the error that stopped it, if any.
    pub fn capture_status(&self) -> Option<(&[u64], Option<&str>)> {
        self.capture.as_ref().map(|c| (&c.file.counts[..], c.error.as_deref()))
    }

    /// Write what the captured ports sent since the last call, in time order.
    pub(super) fn write_capture(&mut self) {
        let Some(cap) = self.capture.as_mut() else { return };
        for (p, port) in self.ports.iter_mut().enumerate() {
            if let Some(tap) = port.tap_mut() {
                cap.batch.extend(tap.drain(..).map(|t| (p as u32, t)));
            }
        }
        cap.batch.sort_by_key(|&(p, t)| (t.t, p));
        for (p, t) in cap.batch.drain(..) {
            if cap.error.is_some() {
                break;
            }
            let info = match (t.pkt.flow as usize).checked_sub(self.spec.flows.len()) {
                None => &self.spec.flows[t.pkt.flow as usize],
                Some(m) => &self.spec.sources[self.made[m].source as usize].flow,
            };
            let addrs = [ip_packet::host_addr(info.src), ip_packet::host_addr(info.dst)];
            let r = ip_packet::emit(&t.pkt, addrs, &mut cap.buf).map_err(|e| e.to_string()).and_then(|(n, total)| {
                cap.file.write(p as usize, t.t, &cap.buf[..n], total).map_err(|e| e.to_string())
            });
            if let Err(e) = r {
                cap.error = Some(e);
            }
        }
        cap.batch.clear();
        if self.now >= self.spec.duration {
            if let Err(e) = cap.file.flush() {
                cap.error.get_or_insert(e.to_string());
            }
        }
    }
}
