//! Alg. 2 at a router [MPCP §3.3]: write this port's load factor into a chain of packets
//! so that the chain carries the **max** LF over the path (docs/PROTOCOLS.md §1 router rules),
//! with one 2-bit flag of state per flow.
//!
//! ```text
//! MSP packet: if MSP1 > X2: ecn = MSP1 ; flag = MSP_LOW     # worst so far: we own the chain
//!             elif MSP1 < X2: flag = MSP_HIGH               # upstream worse: leave the LSP alone
//!             else: flag = MSP_EQ                           # same zone: the LSP decides
//! LSP packet: if flag == MSP_LOW: ecn = LSP1                # may LOWER the LSP (MSP rose)
//!             elif flag == MSP_EQ and LSP1 > X2: ecn = LSP1
//! ```
//! The extracted seed sets MSP_HIGH in the equal branch but tests MSP_EQ in the LSP branch;
//! we read the equal branch as MSP_EQ (docs/PROTOCOLS.md §3). The flag starts at MSP_EQ, so a lone
//! LSP can only raise the code [reconstructed].
//!
//! n-packet chains [reconstructed, generalising Alg. 2 digit by digit]: the flag records how
//! the chain's prefix so far compares with ours. At position k < n − 1: LOW → write our digit;
//! EQ → compare (ours larger: write, LOW; smaller: HIGH; equal: stay EQ); HIGH → leave it.
//! The last position writes under LOW, or under EQ when ours is larger, and leaves the flag
//! alone, exactly as Alg. 2's LSP branch. For n = 2 this is Alg. 2; for n = 1 it is VCP's
//! "raise only".

use super::levels::Lf;
use super::ordering::Position;
use crate::packet::ecn;

/// The per-flow router flag (2 bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Flag {
    /// This router's LF is worse so far: it owns the rest of the chain.
    MspLow = 0,
    /// Upstream is worse: leave the rest of the chain alone.
    MspHigh = 1,
    /// Equal so far: the next digit decides.
    #[default]
    MspEq = 2,
}

/// Alg. 2, generalised to n digits (module docs). `port` is this port's LF (n digits),
/// `x2` the packet's visible ECN bits, `pos` its position; returns the new ECN bits.
/// Not-ECT (00) is never touched (RFC 3168), nor is a position beyond the chain.
#[inline]
pub fn encode(port: Lf, x2: u8, pos: Position, flag: &mut Flag) -> u8 {
    let n = port.n();
    if x2 == ecn::NOT_ECT || pos.0 >= n {
        return x2;
    }
    let mine = port.digit(pos.0);
    let last = pos.0 == n - 1;
    if pos.0 == 0 {
        // MSP branch (for n = 1 the MSP is also the last digit: raise only, no flag needed).
        if mine > x2 {
            *flag = Flag::MspLow;
            return mine;
        }
        if n > 1 {
            *flag = if mine < x2 { Flag::MspHigh } else { Flag::MspEq };
        }
        return x2;
    }
    match *flag {
        Flag::MspLow => mine,
        Flag::MspHigh => x2,
        Flag::MspEq if mine > x2 => {
            if !last {
                *flag = Flag::MspLow;
            }
            mine
        }
        Flag::MspEq => {
            if !last && mine < x2 {
                *flag = Flag::MspHigh;
            }
            x2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dpcp::levels::MAX_CHAIN;

    const D: [u8; 3] = [0b01, 0b10, 0b11];

    fn all_lf(n: u8) -> Vec<Lf> {
        let count = 3usize.pow(n as u32);
        (0..count)
            .map(|mut i| {
                let mut packed = 0u8;
                for _ in 0..n {
                    packed = (packed << 2) | D[i % 3];
                    i /= 3;
                }
                Lf::from_packed(n, packed)
            })
            .collect()
    }

    #[test]
    fn alg2_every_branch() {
        use Flag::*;
        let lf = |m, l| Lf::dpcp(m, l);
        // (port LF, packet bits, position, flag before) → (bits after, flag after)
        let cases = [
            // MSP: ours larger → write, LOW.
            (lf(0b11, 0b01), 0b10, 0, MspEq, 0b11, MspLow),
            // MSP: ours smaller → keep, HIGH.
            (lf(0b01, 0b11), 0b10, 0, MspLow, 0b10, MspHigh),
            // MSP: equal → keep, EQ.
            (lf(0b10, 0b01), 0b10, 0, MspHigh, 0b10, MspEq),
            // LSP under LOW: always ours, even when lower (MSP rose, LSP lowers).
            (lf(0b11, 0b01), 0b11, 1, MspLow, 0b01, MspLow),
            (lf(0b11, 0b10), 0b01, 1, MspLow, 0b10, MspLow),
            // LSP under HIGH: untouched, even when ours is larger.
            (lf(0b01, 0b11), 0b01, 1, MspHigh, 0b01, MspHigh),
            // LSP under EQ: raise only.
            (lf(0b10, 0b11), 0b01, 1, MspEq, 0b11, MspEq),
            (lf(0b10, 0b01), 0b11, 1, MspEq, 0b11, MspEq),
            (lf(0b10, 0b10), 0b10, 1, MspEq, 0b10, MspEq),
            // Not-ECT is never marked, whatever the branch.
            (lf(0b11, 0b11), 0b00, 0, MspEq, 0b00, MspEq),
            (lf(0b11, 0b11), 0b00, 1, MspLow, 0b00, MspLow),
        ];
        for (port, x2, pos, before, want, flag_after) in cases {
            let mut f = before;
            assert_eq!(encode(port, x2, Position(pos), &mut f), want, "{port:?} {x2:02b} {pos} {before:?}");
            assert_eq!(f, flag_after, "{port:?} {x2:02b} {pos} {before:?}");
        }
        assert_eq!(Flag::default(), Flag::MspEq, "a lone LSP can only raise the code");
    }

    #[test]
    fn msp_rises_lsp_lowers() {
        // Upstream 10 11, this router 11 01: the chain must read 11 01 (the max LF), which
        // lowers the LSP from 11 to 01.
        let mut f = Flag::default();
        let msp = encode(Lf::dpcp(0b11, 0b01), 0b10, Position::MSP, &mut f);
        let lsp = encode(Lf::dpcp(0b11, 0b01), 0b11, Position::LSP, &mut f);
        assert_eq!((msp, lsp), (0b11, 0b01));
    }

    /// A path of routers with LFs `path`, a chain starting at 01 01 …: every router sees the
    /// MSP before the LSP of the chain, but any interleaving between routers is allowed: each
    /// router's flag is its own, so `order` (a permutation respecting per-packet hop order and
    /// per-router position order) must not matter.
    fn run_chain(path: &[Lf], schedule: &[(usize, u8)]) -> Lf {
        let n = path[0].n();
        let mut bits = vec![0b01u8; n as usize];
        let mut flags = vec![Flag::default(); path.len()];
        let mut hop = vec![0usize; n as usize];
        for &(router, pos) in schedule {
            assert_eq!(hop[pos as usize], router, "packet {pos} travels the routers in order");
            bits[pos as usize] = encode(path[router], bits[pos as usize], Position(pos), &mut flags[router]);
            hop[pos as usize] += 1;
        }
        Lf::from_packed(n, bits.iter().fold(0, |a, &b| (a << 2) | b))
    }

    /// Every schedule of an n-chain over r routers where, at each router, packet k arrives
    /// after packet k − 1 (chain order; FIFO links keep it).
    fn schedules(n: u8, r: usize) -> Vec<Vec<(usize, u8)>> {
        fn rec(n: u8, r: usize, hop: &mut Vec<usize>, cur: &mut Vec<(usize, u8)>, out: &mut Vec<Vec<(usize, u8)>>) {
            if hop.iter().all(|&h| h == r) {
                out.push(cur.clone());
                return;
            }
            for k in 0..n as usize {
                let h = hop[k];
                if h < r && (k == 0 || hop[k - 1] > h) {
                    hop[k] += 1;
                    cur.push((h, k as u8));
                    rec(n, r, hop, cur, out);
                    cur.pop();
                    hop[k] -= 1;
                }
            }
        }
        let mut out = vec![];
        rec(n, r, &mut vec![0; n as usize], &mut vec![], &mut out);
        out
    }

    /// Which of the `m` schedules path number `i` runs under: all of them up to n = 3 (42 for
    /// n = 3). n = 4 has 462 (the standard Young tableaux of a 3 × 4 rectangle) over 81³
    /// paths, about 30 s in release; each path runs instead under the two extreme schedules
    /// (router by router, and packet by packet) and two that rotate through the rest, so that
    /// every schedule still runs on over a thousand paths.
    fn schedules_for(i: usize, m: usize, n: u8) -> Vec<usize> {
        if n <= 3 {
            (0..m).collect()
        } else {
            vec![0, m - 1, i % m, (i / m + 7 * i) % m]
        }
    }

    #[test]
    fn three_router_chain_gives_the_max_lf_in_any_arrival_pattern() {
        for n in 1..=MAX_CHAIN {
            let lfs = all_lf(n);
            let scheds = schedules(n, 3);
            assert_eq!(scheds.len(), [1, 5, 42, 462][n as usize - 1], "n {n}: schedules");
            let l = lfs.len();
            let mut runs = vec![0usize; scheds.len()];
            for i in 0..l.pow(3) {
                let path = [lfs[i / (l * l)], lfs[i / l % l], lfs[i % l]];
                let want = path.iter().max_by_key(|l| l.packed()).unwrap();
                for j in schedules_for(i, scheds.len(), n) {
                    runs[j] += 1;
                    assert_eq!(run_chain(&path, &scheds[j]), *want, "n {n} path {path:?} schedule {:?}", scheds[j]);
                }
            }
            assert!(runs.iter().all(|&r| r >= 1000.min(l.pow(3))), "n {n}: every schedule on many paths");
        }
    }

    #[test]
    fn flags_survive_chains_back_to_back_and_lost_msps() {
        // Router A (10 10) then B (11 01), two chains; the second chain's MSP is lost between
        // A and B: B's flag is still LOW from chain 1, so the orphan LSP gets B's 01. The
        // sender ignores an LSP that follows no MSP (MPCP §3.4), so this is harmless.
        let a = Lf::dpcp(0b10, 0b10);
        let b = Lf::dpcp(0b11, 0b01);
        let (mut fa, mut fb) = (Flag::default(), Flag::default());
        let m = encode(b, encode(a, 0b01, Position::MSP, &mut fa), Position::MSP, &mut fb);
        let l = encode(b, encode(a, 0b01, Position::LSP, &mut fa), Position::LSP, &mut fb);
        assert_eq!((m, l), (0b11, 0b01));
        let _lost = encode(a, 0b01, Position::MSP, &mut fa);
        let l2 = encode(b, encode(a, 0b01, Position::LSP, &mut fa), Position::LSP, &mut fb);
        assert_eq!(l2, 0b01);
        // A position beyond the chain is left alone.
        let mut f = Flag::default();
        assert_eq!(encode(a, 0b01, Position(2), &mut f), 0b01);
    }
}
