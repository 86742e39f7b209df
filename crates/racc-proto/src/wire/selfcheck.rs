//! The property every parser keeps, as one function for fuzzers (the `wire` target of `fuzz/`)
//! and the in-suite fuzz run: on any bytes a parser may refuse, never panic, and what it accepts
//! emits back to bytes that parse to the same thing.

use super::datagram::{self, IpFields};
use super::{cong, dccp, ipv4, shim, tcp};

/// Run every parser on `bytes`. Panics only if an accepted input does not round-trip (a bug).
pub fn check(bytes: &[u8]) {
    let ip = IpFields { ecn: 1, ip_id: 2 };
    if let Ok((p, n)) = datagram::parse(bytes, ip) {
        let mut out = [0u8; 512];
        let m = datagram::emit(&p, &mut out).expect("an accepted packet emits");
        assert_eq!(m, n);
        assert_eq!(datagram::parse(&out[..m], ip).map(|(q, _)| format!("{q:?}")), Ok(format!("{p:?}")));
    }
    if let Ok((h, n)) = tcp::parse(bytes) {
        let mut out = [0u8; 128];
        assert_eq!(tcp::emit(&h, &mut out), Ok(n));
        assert_eq!(tcp::parse(&out[..n]), Ok((h, n)));
    }
    if let Ok((h, n)) = dccp::parse(bytes) {
        let mut out = [0u8; 64];
        assert_eq!(dccp::emit(&h, &mut out), Ok(n));
    }
    if let Ok((h, kind, n)) = cong::parse(bytes) {
        if let Some(k) = kind {
            let mut out = [0u8; 64];
            assert_eq!(cong::emit(&h, k, &mut out), Ok(n));
            assert_eq!(format!("{:?}", cong::parse(&out[..n])), format!("{:?}", Ok::<_, ()>((h, kind, n))));
        }
    }
    let _ = shim::ShimRepr::parse(bytes);
    if let Ok((r, _)) = ipv4::Ipv4Repr::parse(bytes) {
        let mut out = [0u8; 20];
        r.emit(&mut out).unwrap();
    }
    let mut copy = [0u8; 64];
    let n = bytes.len().min(64);
    copy[..n].copy_from_slice(&bytes[..n]);
    let _ = ipv4::set_ecn(&mut copy[..n], 3);
    let _ = ipv4::set_ident(&mut copy[..n], 9);
}
