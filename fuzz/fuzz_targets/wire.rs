//! Fuzz every wire parser of racc-proto (shim, TCP-like, DCCP, congestion headers, IPv4,
//! whole datagrams): no input may panic, and accepted input must round-trip.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    racc_proto::wire::selfcheck::check(data);
});
