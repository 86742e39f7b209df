//! A short fuzz run in the test suite: random bytes, and valid datagrams with bytes flipped,
//! cut or extended, through every parser ([`super::selfcheck::check`]). The long dedicated run
//! is the `wire` target of `fuzz/` (cargo fuzz).

use super::datagram::{self, IpFields};
use super::selfcheck::check;
use crate::rng::SimRng;

#[test]
fn random_and_mutated_bytes_never_panic() {
    let mut rng = SimRng::for_component(1, "wire/fuzz");
    let mut buf = [0u8; 256];
    let seeds: Vec<Vec<u8>> = super::datagram::tests_samples()
        .iter()
        .map(|p| {
            let n = datagram::emit(p, &mut buf).unwrap();
            buf[..n].to_vec()
        })
        .collect();
    let mut accepted = 0;
    for i in 0..200_000u32 {
        let mut b: Vec<u8> = if i % 2 == 0 {
            let n = rng.below(120) as usize;
            (0..n).map(|_| rng.below(256) as u8).collect()
        } else {
            let mut b = seeds[rng.below(seeds.len() as u64) as usize].clone();
            for _ in 0..1 + rng.below(3) {
                match rng.below(3) {
                    0 if !b.is_empty() => {
                        let at = rng.below(b.len() as u64) as usize;
                        b[at] ^= 1 << rng.below(8);
                    }
                    1 => b.truncate(rng.below(b.len() as u64 + 1) as usize),
                    _ => b.push(rng.below(256) as u8),
                }
            }
            b
        };
        check(&b);
        if datagram::parse(&b, IpFields { ecn: 0, ip_id: 0 }).is_ok() {
            accepted += 1;
        }
        b.clear();
    }
    // The mutated half must reach the parsers' accepting paths, or this run tests little.
    assert!(accepted > 10_000, "only {accepted} inputs parsed");
}
