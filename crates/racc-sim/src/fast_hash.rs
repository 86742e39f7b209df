//! A fast hash for set-up's lookup tables (node names, routes by host pair, a router's port to
//! each host): keys hashed with SipHash were a sixth of the instructions of building the
//! 10,000-flow benchmark (issue 19). The tables are only looked into, never iterated, so the
//! hash cannot change a result; none of their keys come from outside the scenario being
//! checked, so flooding resistance buys nothing here. The multiply-rotate word hash of
//! rustc's own tables (FxHash).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

#[derive(Clone, Copy, Default)]
pub struct FastHasher(u64);

const K: u64 = 0x517c_c1b7_2722_0a95;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_apart_what_the_tables_hold() {
        let names = ["s1", "s10", "s1\0", "d1", "r0", "r1", "", "a-long-node-name-of-more-than-8"];
        let m: FastMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        for (i, n) in names.iter().enumerate() {
            assert_eq!(m.get(n), Some(&i));
        }
        assert_eq!(m.get("s100"), None);
        let pairs: FastMap<(usize, usize), usize> =
            (0..100).flat_map(|a| (0..100).map(move |b| ((a, b), a * 100 + b))).collect();
        assert_eq!(pairs.len(), 10_000);
        assert!((0..100).all(|a| (0..100).all(|b| pairs[&(a, b)] == a * 100 + b)));
    }
}
