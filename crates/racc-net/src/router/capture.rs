//! `--pcap` in the live router: the packets that start serialisation on the captured ports,
//! written with the bytes the router holds and the modules' rewrites as they left the port.

use super::Router;
use crate::device::MAX_PKT;
use crate::frame;
use racc_sim::pcap::Capture;
use racc_sim::port::Tapped;

pub struct LiveCapture {
    pub file: Capture,
    batch: Vec<(u32, Tapped)>,
    buf: Vec<u8>,
    pub error: Option<String>,
}

impl Router {
    /// Capture the packets that start serialisation on `ports` (every port if `None`) into a
    /// pcapng file at `path`: the bytes the router holds for each, with the router modules'
    /// rewrites as they stand when it departs, at the run's clock (plus the wall time it
    /// started, `epoch_ns`).
    pub fn capture(&mut self, path: &std::path::Path, ports: Option<&[usize]>, epoch_ns: u64) -> std::io::Result<()> {
        let all: Vec<usize> = (0..self.ports.len()).collect();
        let ports = ports.unwrap_or(&all);
        let named: Vec<(usize, &str)> = ports.iter().map(|&p| (p, self.ports[p].name.as_str())).collect();
        let file = Capture::create(path, &named, self.ports.len(), epoch_ns)?;
        for &p in ports {
            self.ports[p].start_tap();
        }
        self.capture = Some(Box::new(LiveCapture { file, batch: Vec::new(), buf: vec![0; MAX_PKT], error: None }));
        Ok(())
    }

    pub fn capture_status(&self) -> Option<&LiveCapture> {
        self.capture.as_deref()
    }

    /// Write what the captured ports sent since the last call. Called before any slot a tapped
    /// packet held can be reused (slots are taken only when reading the devices).
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
                continue;
            }
            let i = t.slot as usize;
            let (n, fr) = (self.lens[i] as usize, self.frames[i]);
            let b = &mut cap.buf[..n];
            b.copy_from_slice(&self.bytes[i * MAX_PKT..i * MAX_PKT + n]);
            // The packet as it left this port: every field a module may change is written
            // (delivery may already have put a later state into the router's copy).
            if let Err(e) = frame::write_tapped(b, &fr, &t.pkt) {
                cap.error = Some(e.to_string());
                continue;
            }
            let keep = (fr.ihl as usize + frame::UDP_LEN + fr.racc_len as usize).min(n);
            if let Err(e) = cap.file.write(p as usize, t.t, &b[..keep], n) {
                cap.error = Some(e.to_string());
            }
        }
    }
}
