//! The hosts' UDP sockets: one per flow end, bound to the host's address and connected to the
//! peer's, sending each datagram with its ECN bits in an IP_TOS control message and reading the
//! arriving TOS byte (ECN included, as routers left it) with IP_RECVTOS, several datagrams per
//! `recvmmsg` ([`RecvBatch`]); and the host's raw socket, whose whole IPv4 packets go out several
//! per `sendmmsg` ([`SendBatch`]).

use crate::sys::{cvt, owned};
use std::io;
use std::net::SocketAddrV4;
use std::os::fd::{AsRawFd, OwnedFd};

pub struct UdpEnd {
    pub fd: OwnedFd,
}

fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
        sin_zero: [0; 8],
    }
}

fn setsockopt_int(fd: &OwnedFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: an int option value of the right size.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

const CMSG_BUF: usize = 64;

impl UdpEnd {
    /// A non-blocking socket in the calling thread's network namespace.
    pub fn open(local: SocketAddrV4, peer: SocketAddrV4) -> io::Result<UdpEnd> {
        // SAFETY: plain socket creation.
        let fd = owned(cvt(unsafe {
            libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0)
        })?);
        setsockopt_int(&fd, libc::IPPROTO_IP, libc::IP_RECVTOS, 1)?;
        // When the kernel received each datagram (written by the router): the host's
        // due-time receive (`host::receive`).
        setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)?;
        // Room for a whole window in flight on a fast path: a drop here would be a loss the
        // emulated network did not cause.
        setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 8 << 20)?;
        setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, 8 << 20)?;
        let l = sockaddr(local);
        let p = sockaddr(peer);
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        // SAFETY: valid sockaddr_in pointers and length.
        unsafe {
            cvt(libc::bind(fd.as_raw_fd(), (&l as *const libc::sockaddr_in).cast(), len))?;
            cvt(libc::connect(fd.as_raw_fd(), (&p as *const libc::sockaddr_in).cast(), len))?;
        }
        Ok(UdpEnd { fd })
    }

    /// Send `data` with the IP header's TOS byte (ECN bits) set to `tos`.
    pub fn send(&self, data: &[u8], tos: u8) -> io::Result<()> {
        let mut iov = libc::iovec { iov_base: data.as_ptr() as *mut libc::c_void, iov_len: data.len() };
        let mut cbuf = [0u64; CMSG_BUF / 8];
        // SAFETY: msghdr over our iovec and control buffer; CMSG_* walk inside that buffer,
        // which is large enough for one int-sized message.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = cbuf.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) as usize;
            let c = libc::CMSG_FIRSTHDR(&msg);
            (*c).cmsg_level = libc::IPPROTO_IP;
            (*c).cmsg_type = libc::IP_TOS;
            (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as usize;
            std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<libc::c_int>(), tos as libc::c_int);
            let n = libc::sendmsg(self.fd.as_raw_fd(), &msg, 0);
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// A host's raw IPv4 socket (IPPROTO_RAW, which implies IP_HDRINCL): packets go out with the
/// IPv4 header racc writes, so the IP ID is the endpoint's own (DCP-EW orders its two-packet
/// chains by it) and the TOS byte carries the ECN bits, with no control message. Linux fills in
/// the header checksum and total length, and an IP ID of 0 (raw(7)): a packet whose endpoint
/// chose ID 0 leaves with the kernel's. Replies still arrive on the flow end's UDP socket.
pub struct RawSender {
    pub fd: OwnedFd,
}

impl RawSender {
    /// A raw socket in the calling thread's network namespace.
    pub fn open() -> io::Result<RawSender> {
        // SAFETY: plain socket creation.
        let fd = owned(cvt(unsafe {
            libc::socket(libc::AF_INET, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, libc::IPPROTO_RAW)
        })?);
        setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, 8 << 20)?;
        Ok(RawSender { fd })
    }
}

/// Bytes of one datagram slot in a batch (the devices' MTU is 1500).
pub const SLOT: usize = 2048;

/// Several datagrams read from one socket with one `recvmmsg`, each with its arriving TOS byte
/// (IP_RECVTOS control message): one system call for what has queued while the host was busy.
pub struct RecvBatch {
    bufs: Vec<u8>,
    cmsgs: Vec<u64>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    n: usize,
}

impl RecvBatch {
    /// Room for `size` datagrams a call (at least one).
    pub fn new(size: usize) -> RecvBatch {
        let size = size.max(1);
        // SAFETY: an all-zero mmsghdr is valid (null pointers, zero lengths).
        let hdr: libc::mmsghdr = unsafe { std::mem::zeroed() };
        RecvBatch {
            bufs: vec![0; size * SLOT],
            cmsgs: vec![0; size * CMSG_BUF / 8],
            iovs: vec![libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; size],
            hdrs: vec![hdr; size],
            n: 0,
        }
    }

    /// Read what waits on `sock`, up to the batch's size; returns how many (0 when none).
    pub fn recv(&mut self, sock: &UdpEnd) -> io::Result<usize> {
        self.n = 0;
        let size = self.hdrs.len();
        // The kernel rewrites lengths: every header is set afresh (pointers into our own
        // buffers, which never move once made).
        for i in 0..size {
            self.iovs[i] = libc::iovec { iov_base: self.bufs[i * SLOT..].as_mut_ptr().cast(), iov_len: SLOT };
            let h = &mut self.hdrs[i];
            h.msg_len = 0;
            h.msg_hdr.msg_name = std::ptr::null_mut();
            h.msg_hdr.msg_namelen = 0;
            h.msg_hdr.msg_iov = &mut self.iovs[i];
            h.msg_hdr.msg_iovlen = 1;
            h.msg_hdr.msg_control = self.cmsgs[i * CMSG_BUF / 8..].as_mut_ptr().cast();
            h.msg_hdr.msg_controllen = CMSG_BUF;
            h.msg_hdr.msg_flags = 0;
        }
        // SAFETY: `size` valid mmsghdrs over buffers of the lengths given; no timeout.
        let r = unsafe {
            libc::recvmmsg(sock.fd.as_raw_fd(), self.hdrs.as_mut_ptr(), size as libc::c_uint, 0, std::ptr::null_mut())
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        self.n = r as usize;
        Ok(self.n)
    }

    /// The most datagrams one call reads.
    pub fn size(&self) -> usize {
        self.hdrs.len()
    }

    /// Datagram `i` of the last read, its arriving TOS byte and when the kernel received it
    /// (CLOCK_REALTIME ns, SO_TIMESTAMPNS; `None` if the kernel gave no timestamp).
    pub fn get(&self, i: usize) -> (&[u8], u8, Option<i128>) {
        assert!(i < self.n);
        let h = &self.hdrs[i];
        let mut tos = 0u8;
        let mut stamp = None;
        // SAFETY: the kernel filled msg_controllen bytes of this message's control buffer;
        // CMSG_NXTHDR stops inside them.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&h.msg_hdr);
            while !c.is_null() {
                if (*c).cmsg_level == libc::IPPROTO_IP && (*c).cmsg_type == libc::IP_TOS {
                    tos = *libc::CMSG_DATA(c);
                } else if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                    let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                    stamp = Some(ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128);
                }
                c = libc::CMSG_NXTHDR(&h.msg_hdr, c);
            }
        }
        let len = (h.msg_len as usize).min(SLOT);
        (&self.bufs[i * SLOT..i * SLOT + len], tos, stamp)
    }
}

/// Whole IPv4 packets queued for a host's raw socket and sent with one `sendmmsg`, each tagged
/// with the flow end it belongs to (for that end's sent and refused counts). Every packet keeps
/// its own header: IP ID and ECN bits are exact per packet, as with one `sendto` each.
pub struct SendBatch {
    bufs: Vec<u8>,
    lens: Vec<usize>,
    dsts: Vec<libc::sockaddr_in>,
    tags: Vec<u32>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

impl SendBatch {
    /// Room for `size` packets (at least one).
    pub fn new(size: usize) -> SendBatch {
        let size = size.max(1);
        // SAFETY: an all-zero mmsghdr is valid (null pointers, zero lengths).
        let hdr: libc::mmsghdr = unsafe { std::mem::zeroed() };
        SendBatch {
            bufs: vec![0; size * SLOT],
            lens: Vec::with_capacity(size),
            dsts: Vec::with_capacity(size),
            tags: Vec::with_capacity(size),
            iovs: vec![libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; size],
            hdrs: vec![hdr; size],
        }
    }

    pub fn is_full(&self) -> bool {
        self.lens.len() == self.hdrs.len()
    }

    /// The buffer of the next packet (see [`SendBatch::push`]); the batch must not be full.
    pub fn next_buf(&mut self) -> &mut [u8] {
        let i = self.lens.len();
        &mut self.bufs[i * SLOT..(i + 1) * SLOT]
    }

    /// Queue the `len` bytes written into [`SendBatch::next_buf`], for `dst`, tagged `tag`.
    pub fn push(&mut self, len: usize, dst: std::net::Ipv4Addr, tag: u32) {
        assert!(!self.is_full() && len <= SLOT);
        self.lens.push(len);
        self.dsts.push(sockaddr(SocketAddrV4::new(dst, 0)));
        self.tags.push(tag);
    }

    /// Send every queued packet through `raw`, in order, calling `done(tag, sent)` for each; a
    /// packet the socket refuses is counted and skipped (as a failed `sendto` would be).
    pub fn flush(&mut self, raw: &RawSender, mut done: impl FnMut(u32, bool)) {
        let n = self.lens.len();
        for i in 0..n {
            self.iovs[i] = libc::iovec { iov_base: self.bufs[i * SLOT..].as_mut_ptr().cast(), iov_len: self.lens[i] };
            let h = &mut self.hdrs[i];
            h.msg_len = 0;
            h.msg_hdr.msg_name = (&mut self.dsts[i] as *mut libc::sockaddr_in).cast();
            h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            h.msg_hdr.msg_iov = &mut self.iovs[i];
            h.msg_hdr.msg_iovlen = 1;
            h.msg_hdr.msg_control = std::ptr::null_mut();
            h.msg_hdr.msg_controllen = 0;
            h.msg_hdr.msg_flags = 0;
        }
        let mut k = 0;
        while k < n {
            // SAFETY: hdrs[k..n] are valid mmsghdrs over our buffers and addresses.
            let r =
                unsafe { libc::sendmmsg(raw.fd.as_raw_fd(), self.hdrs[k..].as_mut_ptr(), (n - k) as libc::c_uint, 0) };
            if r <= 0 {
                // Packet k was refused (the error is reported for the first message only).
                done(self.tags[k], false);
                k += 1;
            } else {
                for i in k..k + r as usize {
                    done(self.tags[i], true);
                }
                k += r as usize;
            }
        }
        self.lens.clear();
        self.dsts.clear();
        self.tags.clear();
    }
}
