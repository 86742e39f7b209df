//! The hosts' UDP sockets: one per flow end, bound to the host's address and connected to the
//! peer's, sending each datagram with its ECN bits in an IP_TOS control message and reading the
//! arriving TOS byte (ECN included, as routers left it) with IP_RECVTOS.

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

    /// One datagram into `buf`: its length and the arriving TOS byte; `Ok(None)` when none waits.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<(usize, u8)>> {
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
        let mut cbuf = [0u64; CMSG_BUF / 8];
        // SAFETY: as in `send`; the kernel fills at most msg_controllen bytes and CMSG_NXTHDR
        // stops inside them.
        unsafe {
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = cbuf.as_mut_ptr().cast();
            msg.msg_controllen = CMSG_BUF;
            let n = libc::recvmsg(self.fd.as_raw_fd(), &mut msg, 0);
            if n < 0 {
                let e = io::Error::last_os_error();
                return match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                    _ => Err(e),
                };
            }
            let mut tos = 0u8;
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::IPPROTO_IP && (*c).cmsg_type == libc::IP_TOS {
                    tos = *libc::CMSG_DATA(c);
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
            Ok(Some((n as usize, tos)))
        }
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

    /// Send the whole IPv4 packet `pkt` (header included) to `dst`.
    pub fn send(&self, pkt: &[u8], dst: std::net::Ipv4Addr) -> io::Result<()> {
        let to = sockaddr(SocketAddrV4::new(dst, 0));
        // SAFETY: a valid buffer and sockaddr_in.
        let n = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                pkt.as_ptr().cast(),
                pkt.len(),
                0,
                (&to as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}
