//! Packet captures (`--pcap`): the packets that start serialisation on chosen ports, written as
//! a pcapng file that Wireshark and tcpdump read, one interface per port (named after it, so a
//! capture of every port keeps them apart), raw IPv4 link type, nanosecond timestamps. The
//! simulator writes its packets' bytes from the wire layer (`racc_proto::wire::ip_packet`) at
//! simulated times; the live runtime writes the bytes its router holds, with the router modules'
//! rewrites, at its clock's times. A record keeps the IPv4, UDP and racc headers; its original
//! length is the IPv4 total length (the application bytes, zeros in racc, are not stored).
//!
//! The writer is the `pcap-file` crate's (see docs/LIVE.md, "Packet captures"). Both engines
//! drain their ports' taps through one [`PortCapture`]; only how a packet becomes bytes differs.

use crate::port::{Port, Tapped};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;
use racc_proto::time::Time;
use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::Duration;

/// Bytes kept of each packet: the largest IPv4 + UDP + racc headers with room to spare.
pub const SNAPLEN: usize = 512;

pub struct Capture {
    writer: PcapNgWriter<BufWriter<File>>,
    /// Interface id of each port, `None` for ports not captured.
    iface: Vec<Option<u32>>,
    /// Added to every timestamp (ns since 1970): 0 in the simulator, the start of a live run.
    epoch_ns: u64,
    /// Records written per port.
    pub counts: Vec<u64>,
}

fn pcap_err(e: pcap_file::PcapError) -> io::Error {
    io::Error::other(e.to_string())
}

impl Capture {
    /// A new file at `path` capturing `ports` (index, name) of a run with `n_ports` ports.
    pub fn create(path: &Path, ports: &[(usize, &str)], n_ports: usize, epoch_ns: u64) -> io::Result<Capture> {
        let file = File::create(path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let mut writer = PcapNgWriter::new(BufWriter::with_capacity(1 << 16, file)).map_err(pcap_err)?;
        let mut iface = vec![None; n_ports];
        for (id, &(p, name)) in ports.iter().enumerate() {
            let idb = InterfaceDescriptionBlock {
                linktype: DataLink::RAW,
                snaplen: SNAPLEN as u32,
                options: vec![
                    InterfaceDescriptionOption::IfName(Cow::Owned(name.to_string())),
                    // Timestamps in nanoseconds (the default is microseconds).
                    InterfaceDescriptionOption::IfTsResol(9),
                ],
            };
            writer.write_pcapng_block(idb).map_err(pcap_err)?;
            iface[p] = Some(id as u32);
        }
        Ok(Capture { writer, iface, epoch_ns, counts: vec![0; n_ports] })
    }

    /// Whether port `p` is captured.
    pub fn captures(&self, p: usize) -> bool {
        self.iface.get(p).is_some_and(|i| i.is_some())
    }

    /// One packet of port `p` at `t`: its first bytes `data` (at most [`SNAPLEN`] are kept) of
    /// `original_len` on the wire.
    pub fn write(&mut self, p: usize, t: Time, data: &[u8], original_len: usize) -> io::Result<()> {
        let Some(id) = self.iface.get(p).copied().flatten() else { return Ok(()) };
        let epb = EnhancedPacketBlock {
            interface_id: id,
            timestamp: Duration::from_nanos(self.epoch_ns + t),
            original_len: original_len as u32,
            data: Cow::Borrowed(&data[..data.len().min(SNAPLEN)]),
            options: vec![],
        };
        self.writer.write_pcapng_block(epb).map_err(pcap_err)?;
        self.counts[p] += 1;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.writer.get_mut().flush()
    }
}

/// A capture in progress, the one both engines drive: the file, the tapped packets being put in
/// time order, a buffer for a record's bytes, and the first error (the capture stops there; the
/// run goes on).
pub struct PortCapture {
    pub file: Capture,
    batch: Vec<(u32, Tapped)>,
    buf: Vec<u8>,
    pub error: Option<String>,
}

impl PortCapture {
    /// Capture the packets that start serialisation on `which` of `ports` (every port if `None`)
    /// into a new file at `path`, with timestamps from `epoch_ns`; `max_len` bytes is the
    /// longest packet a record is built from.
    pub fn start(
        path: &Path,
        ports: &mut [Port],
        which: Option<&[usize]>,
        epoch_ns: u64,
        max_len: usize,
    ) -> io::Result<PortCapture> {
        let all: Vec<usize> = (0..ports.len()).collect();
        let which = which.unwrap_or(&all);
        let named: Vec<(usize, &str)> = which.iter().map(|&p| (p, ports[p].name.as_str())).collect();
        let file = Capture::create(path, &named, ports.len(), epoch_ns)?;
        for &p in which {
            ports[p].start_tap();
        }
        Ok(PortCapture { file, batch: Vec::new(), buf: vec![0; max_len], error: None })
    }

    /// Write what the tapped `ports` sent since the last call, in time order (ties by port).
    /// `record` puts a packet's bytes as it left its port into the buffer and returns how many
    /// to keep and its length on the wire. After the first error the rest is dropped.
    pub fn drain(
        &mut self,
        ports: &mut [Port],
        mut record: impl FnMut(&Tapped, &mut [u8]) -> Result<(usize, usize), String>,
    ) {
        for (p, port) in ports.iter_mut().enumerate() {
            if let Some(tap) = port.tap_mut() {
                self.batch.extend(tap.drain(..).map(|t| (p as u32, t)));
            }
        }
        self.batch.sort_by_key(|&(p, t)| (t.t, p));
        for (p, t) in self.batch.drain(..) {
            if self.error.is_some() {
                break;
            }
            let r = record(&t, &mut self.buf).and_then(|(keep, total)| {
                self.file.write(p as usize, t.t, &self.buf[..keep], total).map_err(|e| e.to_string())
            });
            if let Err(e) = r {
                self.error = Some(e);
            }
        }
        self.batch.clear();
    }

    /// Everything written so far on disk (an error is kept unless one came first).
    pub fn flush(&mut self) {
        if let Err(e) = self.file.flush() {
            self.error.get_or_insert(e.to_string());
        }
    }
}
