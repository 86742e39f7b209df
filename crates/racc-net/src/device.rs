//! A host's link to the router, as the router sees it: a TUN device (the default) or the
//! router's end of a veth pair read through a packet ring (`LoopConfig::veth`).

use crate::packet::PacketPort;
use crate::tun::Tun;
use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// Largest packet the router takes (the devices' MTU is 1500).
pub const MAX_PKT: usize = 2048;

pub enum Device {
    Tun(Tun),
    Veth(PacketPort),
}

impl Device {
    /// The fd epoll watches (readable when a packet waits) and io_uring writes to.
    pub fn fd(&self) -> RawFd {
        match self {
            Device::Tun(t) => t.fd.as_raw_fd(),
            Device::Veth(p) => p.fd.as_raw_fd(),
        }
    }

    /// One IPv4 packet into `buf`; `Ok(None)` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match self {
            Device::Tun(t) => t.recv(buf),
            Device::Veth(p) => p.recv(buf),
        }
    }

    /// Hand one IPv4 packet to the host.
    pub fn send(&self, pkt: &[u8]) -> io::Result<()> {
        match self {
            Device::Tun(t) => t.send(pkt),
            Device::Veth(p) => p.send(pkt),
        }
    }

    /// What a write to `fd()` puts before the IPv4 packet (the Ethernet header on a veth).
    pub fn header(&self) -> &[u8] {
        match self {
            Device::Tun(_) => &[],
            Device::Veth(p) => p.header(),
        }
    }

    /// Packets lost outside the emulated network since the last call: a veth's ring full.
    pub fn drops(&self) -> u64 {
        match self {
            Device::Tun(_) => 0,
            Device::Veth(p) => p.drops(),
        }
    }

    /// Whether reads are a system call each (TUN) rather than loads from a ring (veth).
    pub fn reads_by_syscall(&self) -> bool {
        matches!(self, Device::Tun(_))
    }
}
