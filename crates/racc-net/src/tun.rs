//! A TUN device (Linux `Documentation/networking/tuntap.rst`): an IP interface whose packets
//! the router reads and writes through a file descriptor. Created with the TUNSETIFF ioctl on
//! /dev/net/tun, without packet information (IFF_NO_PI: every read is one bare IP packet). The
//! device lives as long as the fd: when the router exits, however it exits, the kernel removes it.

use crate::sys::{cvt, owned, set_nonblocking};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

pub struct Tun {
    pub fd: OwnedFd,
    /// The name the kernel gave it.
    pub name: String,
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
/// `if_tun.h`: the kernel's receive path of a written packet runs through NAPI.
const IFF_NAPI: libc::c_int = 0x0010;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

impl Tun {
    /// A new non-blocking TUN device named from `template` (e.g. "racc%d": the kernel picks the
    /// number, so concurrent runs never clash); with IFF_NAPI if `napi`.
    pub fn create(template: &str, napi: bool) -> io::Result<Tun> {
        if template.len() >= libc::IFNAMSIZ {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "interface name too long"));
        }
        // SAFETY: open with a NUL-terminated path.
        let fd = cvt(unsafe { libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) })?;
        let fd = owned(fd);
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: (libc::IFF_TUN | libc::IFF_NO_PI | if napi { IFF_NAPI } else { 0 }) as libc::c_short,
            _pad: [0; 22],
        };
        req.name[..template.len()].copy_from_slice(template.as_bytes());
        // SAFETY: TUNSETIFF reads and writes an ifreq, which `req` lays out.
        cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF, &mut req as *mut IfReq) })?;
        let end = req.name.iter().position(|&b| b == 0).unwrap_or(libc::IFNAMSIZ);
        let name = String::from_utf8_lossy(&req.name[..end]).into_owned();
        set_nonblocking(&fd)?;
        Ok(Tun { fd, name })
    }

    /// One packet into `buf`; `Ok(None)` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: reading into a valid buffer of the given length.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                _ => Err(e),
            };
        }
        Ok(Some(n as usize))
    }

    /// Hand one IP packet to the kernel as if it arrived on the device.
    pub fn send(&self, pkt: &[u8]) -> io::Result<()> {
        // SAFETY: writing from a valid buffer of the given length.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), pkt.as_ptr().cast(), pkt.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}
