//! The router's end of a veth pair (`LoopConfig::veth`), read through an AF_PACKET receive ring
//! (`Documentation/networking/packet_mmap.rst`, TPACKET_V2) and written with `send`.
//!
//! A host's packet crosses the veth pair in the host's own system call (its `sendmmsg`): the
//! kernel copies it into a frame of the ring that this process maps, so the router reads it
//! with a memory load and a copy, no system call. TPACKET_V2 rather than V3: V3 hands frames
//! over a block at a time, when the block fills or its timer (milliseconds) expires, which would
//! delay a packet on an idle path by milliseconds; V2 hands over each frame as it is written.
//!
//! The hosts reach the router through a gateway whose link-layer address is no device's: what
//! they send arrives here as `PACKET_OTHERHOST`, which this namespace's IP layer drops at once
//! (`ip_rcv`), so only the ring sees it. Written packets carry the host device's address.

use crate::sys::{cvt, owned};
use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// The link-layer addresses of the router's end, the host's end and the gateway (no device's).
pub const ROUTER_MAC: [u8; 6] = [0x02, 0x72, 0x63, 0, 0, 0x01];
pub const HOST_MAC: [u8; 6] = [0x02, 0x72, 0x63, 0, 0, 0x02];
pub const GATEWAY_MAC: [u8; 6] = [0x02, 0x72, 0x63, 0, 0, 0xfe];
pub const ETH_LEN: usize = 14;

/// `if_packet.h`.
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_STATISTICS: libc::c_int = 6;
const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
/// A frame: the tpacket2 header, padding, then the Ethernet frame (1514 bytes at most).
const FRAME: usize = 2048;
const BLOCK: usize = 1 << 16;

#[repr(C)]
struct TpacketReq {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
}

#[repr(C)]
struct Tpacket2Hdr {
    status: u32,
    len: u32,
    snaplen: u32,
    mac: u16,
    net: u16,
    sec: u32,
    nsec: u32,
    vlan_tci: u16,
    vlan_tpid: u16,
    _pad: [u8; 4],
}

pub struct PacketPort {
    pub fd: OwnedFd,
    ring: *mut u8,
    frames: usize,
    /// The next frame the kernel fills.
    next: Cell<usize>,
    /// The Ethernet header of every written packet: to the host's end, from the router's, IPv4.
    header: [u8; ETH_LEN],
}

impl PacketPort {
    /// A packet socket on interface `ifname` (in the calling thread's namespace) taking IPv4
    /// frames into a receive ring of about `frames` frames.
    pub fn open(ifname: &str, frames: usize) -> io::Result<PacketPort> {
        let proto = (libc::ETH_P_IP as u16).to_be();
        // SAFETY: socket has no pointer arguments.
        let fd = owned(cvt(unsafe {
            libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK, proto as i32)
        })?);
        let set = |opt: libc::c_int, v: &libc::c_int| {
            // SAFETY: a valid int option of the given size.
            cvt(unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_PACKET,
                    opt,
                    (v as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as u32,
                )
            })
        };
        set(PACKET_VERSION, &TPACKET_V2)?;
        // Written frames go straight to the device's transmit (a veth has no queue to keep).
        set(PACKET_QDISC_BYPASS, &1)?;
        let per_block = BLOCK / FRAME;
        let blocks = frames.div_ceil(per_block).max(1);
        let req = TpacketReq {
            block_size: BLOCK as u32,
            block_nr: blocks as u32,
            frame_size: FRAME as u32,
            frame_nr: (blocks * per_block) as u32,
        };
        // SAFETY: PACKET_RX_RING takes a tpacket_req, which `req` lays out.
        cvt(unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_PACKET,
                PACKET_RX_RING,
                (&req as *const TpacketReq).cast(),
                std::mem::size_of::<TpacketReq>() as u32,
            )
        })?;
        let len = blocks * BLOCK;
        // SAFETY: mapping the ring the kernel just allocated for this socket.
        let ring = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                0,
            )
        };
        if ring == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut port =
            PacketPort { fd, ring: ring.cast(), frames: blocks * per_block, next: Cell::new(0), header: [0; 14] };
        port.header[..6].copy_from_slice(&HOST_MAC);
        port.header[6..12].copy_from_slice(&ROUTER_MAC);
        port.header[12..].copy_from_slice(&(libc::ETH_P_IP as u16).to_be_bytes());
        let ifindex = {
            let name = std::ffi::CString::new(ifname).map_err(|_| io::Error::other("bad interface name"))?;
            // SAFETY: a NUL-terminated name.
            unsafe { libc::if_nametoindex(name.as_ptr()) }
        };
        if ifindex == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: sockaddr_ll is plain data; zeroed is a valid value.
        let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sa.sll_family = libc::AF_PACKET as u16;
        sa.sll_protocol = proto;
        sa.sll_ifindex = ifindex as i32;
        // SAFETY: binding to a valid sockaddr_ll of the given size.
        cvt(unsafe {
            libc::bind(
                port.fd.as_raw_fd(),
                (&sa as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        })?;
        Ok(port)
    }

    fn frame(&self, i: usize) -> *mut u8 {
        // SAFETY: i < frames: within the mapping.
        unsafe { self.ring.add(i * FRAME) }
    }

    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: the frame's first word is its status, shared with the kernel; 16-aligned.
        unsafe { &*(self.frame(i) as *const AtomicU32) }
    }

    /// One IPv4 packet into `buf` from the ring; `Ok(None)` when none is waiting. A packet
    /// longer than `buf` is cut to it (the router's parser then refuses it).
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        let i = self.next.get();
        // Acquire: the frame's bytes are the kernel's until it sets TP_STATUS_USER.
        if self.status(i).load(Ordering::Acquire) & TP_STATUS_USER == 0 {
            return Ok(None);
        }
        let f = self.frame(i);
        // SAFETY: the kernel filled this frame's header (status USER) within the frame.
        let (snap, net, mac) = unsafe {
            let h = &*(f as *const Tpacket2Hdr);
            (h.snaplen as usize, h.net as usize, h.mac as usize)
        };
        let n = (snap + mac).saturating_sub(net).min(buf.len()).min(FRAME.saturating_sub(net));
        // SAFETY: net + n <= FRAME: within the frame.
        unsafe { std::ptr::copy_nonoverlapping(f.add(net), buf.as_mut_ptr(), n) };
        // Release: the frame goes back to the kernel after the copy.
        self.status(i).store(TP_STATUS_KERNEL, Ordering::Release);
        self.next.set((i + 1) % self.frames);
        Ok(Some(n))
    }

    /// Send one IPv4 packet to the host's end: the Ethernet header, then `pkt` (two pieces,
    /// no copy here).
    pub fn send(&self, pkt: &[u8]) -> io::Result<()> {
        let iov = [
            libc::iovec { iov_base: self.header.as_ptr() as *mut libc::c_void, iov_len: ETH_LEN },
            libc::iovec { iov_base: pkt.as_ptr() as *mut libc::c_void, iov_len: pkt.len() },
        ];
        // SAFETY: msghdr is plain data; zeroed is valid; the iovecs outlive the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
        msg.msg_iovlen = 2;
        // SAFETY: a valid socket and msghdr.
        let n = unsafe { libc::sendmsg(self.fd.as_raw_fd(), &msg, 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Packets the kernel dropped because the ring was full since the last call
    /// (PACKET_STATISTICS, which resets the count).
    pub fn drops(&self) -> u64 {
        let mut st = [0u32; 2];
        let mut len = std::mem::size_of_val(&st) as libc::socklen_t;
        // SAFETY: PACKET_STATISTICS fills a tpacket_stats (two u32: packets, drops).
        let r = unsafe {
            libc::getsockopt(self.fd.as_raw_fd(), libc::SOL_PACKET, PACKET_STATISTICS, st.as_mut_ptr().cast(), &mut len)
        };
        if r == 0 {
            st[1] as u64
        } else {
            0
        }
    }

    /// The Ethernet header written before each packet.
    pub fn header(&self) -> &[u8; ETH_LEN] {
        &self.header
    }
}

impl Drop for PacketPort {
    fn drop(&mut self) {
        // SAFETY: unmapping what `open` mapped.
        unsafe { libc::munmap(self.ring.cast(), self.frames / (BLOCK / FRAME) * BLOCK) };
    }
}
