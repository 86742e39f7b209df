//! `--pcap` in the live router: the packets that start serialisation on the captured ports,
//! drained by the simulator's [`PortCapture`] and written with the bytes the router holds and
//! the modules' rewrites as they left the port.

use super::Router;
use crate::device::MAX_PKT;
use crate::frame;
use racc_sim::pcap::PortCapture;

impl Router {
    /// Capture the packets that start serialisation on `ports` (every port if `None`) into a
    /// pcapng file at `path`: the bytes the router holds for each, with the router modules'
    /// rewrites as they stand when it departs, at the run's clock (plus the wall time it
    /// started, `epoch_ns`).
    pub fn capture(&mut self, path: &std::path::Path, ports: Option<&[usize]>, epoch_ns: u64) -> std::io::Result<()> {
        self.capture = Some(Box::new(PortCapture::start(path, &mut self.ports, ports, epoch_ns, MAX_PKT)?));
        Ok(())
    }

    pub fn capture_status(&self) -> Option<&PortCapture> {
        self.capture.as_deref()
    }

    /// Write what the captured ports sent since the last call. Called before any slot a tapped
    /// packet held can be reused (slots are taken only when reading the devices).
    pub(super) fn write_capture(&mut self) {
        let Some(cap) = self.capture.as_mut() else { return };
        let (lens, frames, bytes) = (&self.lens, &self.frames, &self.bytes);
        cap.drain(&mut self.ports, |t, buf| {
            let i = t.slot as usize;
            let (n, fr) = (lens[i] as usize, frames[i]);
            let b = &mut buf[..n];
            b.copy_from_slice(&bytes[i * MAX_PKT..i * MAX_PKT + n]);
            // The packet as it left this port: every field a module may change is written
            // (delivery may already have put a later state into the router's copy).
            frame::write_tapped(b, &fr, &t.pkt).map_err(|e| e.to_string())?;
            Ok(((fr.ihl as usize + frame::UDP_LEN + fr.racc_len as usize).min(n), n))
        });
    }
}
