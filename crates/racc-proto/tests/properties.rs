//! Invariants of the header arithmetic over arbitrary inputs, with proptest (issue 12, item 11):
//! packet ordering round-trips (Alg. 1 for pairs, TPCP's checksum offsets for longer chains),
//! chain encoding carrying the path's maximum load factor (Alg. 2, digit by digit), the load
//! factor's packing, and the SACK range set against a bitmap. A failure shrinks to a minimal
//! case. The in-module tests keep the hand-picked edge cases (0, 2^32 − 1, ties).

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use racc_proto::dpcp::levels::MAX_CHAIN;
use racc_proto::dpcp::ordering::{mark_offset, order, position_n, restore, undo, Anchor, Ordered};
use racc_proto::dpcp::{encode, Flag, Lf, Position};
use racc_proto::packet::{ecn, flags, tcp_checksum, Kind, Packet, TcpHeader};
use racc_proto::tcp::ranges::RangeSet;

fn config(cases: u32) -> ProptestConfig {
    // A fixed seed: the suite runs the same cases everywhere.
    ProptestConfig { cases, rng_seed: RngSeed::Fixed(0x7261_6363), ..ProptestConfig::default() }
}

fn header(seq: u32, ack: u32, src_port: u16, window: u16) -> TcpHeader {
    let mut h = TcpHeader { src_port, dst_port: 80, seq, ack, flags: flags::ACK, window, ..Default::default() };
    h.checksum = tcp_checksum(&h);
    h
}

/// A load-factor code of n digits, each 1..=3.
fn lf(n: u8) -> impl Strategy<Value = Lf> {
    prop::collection::vec(1u8..=3, n as usize)
        .prop_map(move |d| Lf::from_packed(n, d.iter().fold(0, |a, &x| (a << 2) | x)))
}

#[derive(Clone, Debug)]
enum Op {
    Add(u64, u64),
    Advance(u64),
    Absorb(u64),
}

proptest! {
    #![proptest_config(config(4096))]

    /// Alg. 1 then its undoing gives back the header, for either position, at a data receiver
    /// (seq anchored) and at a sender reading ACKs (ack anchored), with the two fields
    /// "sufficiently apart" (seed premise: here at least 2^30) or equal (a tie).
    #[test]
    fn pair_ordering_round_trips(
        anchor: u32, off in -(1i64 << 20)..(1i64 << 20), far_off in (1u32 << 30)..=(3u32 << 30),
        tie in prop::bool::weighted(0.1), msp: bool, data: bool, src_port: u16, window: u16,
    ) {
        let near = anchor.wrapping_add(off as u32);
        let other = if tie { near } else { near.wrapping_add(far_off) };
        let (orig, a) = if data {
            (header(near, other, src_port, window), Anchor::seq(anchor))
        } else {
            (header(other, near, src_port, window), Anchor::ack(anchor))
        };
        let mut h = orig;
        let how = order(&mut h, msp);
        prop_assert_eq!(how == Ordered::Tie, tie);
        prop_assert_eq!(position_n(&Packet::tcp(1, Kind::Data, 100, 60, h), 2).is_msp(), msp);
        let r = restore(&mut h, a);
        prop_assert_eq!(h, orig);
        prop_assert_eq!((r.pos.is_msp(), r.tie, r.checksum_ok), (msp, tie, true));
    }

    /// TPCP's checksum offset: any position k of an n-chain is read back and undone exactly by
    /// the ends, whatever seq and ack are (the wrap at 2^32 included), and the restored header's
    /// checksum verifies.
    #[test]
    fn chain_offsets_round_trip_at_the_ends(n in 3u8..=MAX_CHAIN, k_frac in 0.0f64..1.0, seq: u32, ack: u32, window: u16) {
        let k = ((k_frac * n as f64) as u8).min(n - 1);
        let orig = header(seq, ack, 4000, window);
        let mut wire = orig;
        mark_offset(&mut wire, k);
        // A data packet at its receiver, which knows the ack exactly (its own next seq).
        let mut h = wire;
        prop_assert_eq!(undo(&mut h, n, Anchor::Seq { near: seq, other: Some(ack) }), Position(k));
        prop_assert_eq!(h, orig);
        // An ACK at its sender: the echo's position bits settle the wrap.
        let mut h = TcpHeader { echo: 0b01 | (k << 2), ..wire };
        prop_assert_eq!(undo(&mut h, n, Anchor::Ack { near: ack, other: Some(seq) }), Position(k));
        prop_assert_eq!(TcpHeader { echo: 0, ..h }, orig);
        prop_assert_eq!(tcp_checksum(&h), h.checksum);
    }

    /// Alg. 2 digit by digit: a chain sent at the lowest code (01 …) and crossing routers in
    /// order arrives carrying the largest load factor on the path (docs/PROTOCOLS.md §1).
    #[test]
    fn a_chain_carries_the_paths_maximum_load_factor(
        (n, routers) in (1u8..=MAX_CHAIN).prop_flat_map(|n| (Just(n), prop::collection::vec(lf(n), 1..6))),
        chains in 1usize..4,
    ) {
        let mut flags = vec![Flag::default(); routers.len()];
        let want = routers.iter().map(|l| l.packed()).max().unwrap();
        for _ in 0..chains {
            let mut got = 0u8;
            for k in 0..n {
                let mut x = ecn::ECT1;
                for (r, f) in routers.iter().zip(flags.iter_mut()) {
                    x = encode(*r, x, Position(k), f);
                }
                got = (got << 2) | x;
            }
            prop_assert_eq!(got, want, "routers {:?}", routers);
        }
    }

    /// A code's digits, packing and ρ quantisation agree: packing round-trips, and a larger ρ
    /// never gives a lower code.
    #[test]
    fn load_factor_codes_pack_and_order(n in 1u8..=MAX_CHAIN, a in 0.0f64..2.5, b in 0.0f64..2.5) {
        let (lo, hi) = (Lf::from_rho(a.min(b), n), Lf::from_rho(a.max(b), n));
        prop_assert!(lo.packed() <= hi.packed(), "{:?} {:?}", lo, hi);
        for l in [lo, hi] {
            prop_assert_eq!(Lf::from_packed(n, l.packed()), l);
            let rebuilt = (0..n).fold(Lf::lowest(n), |x, i| x.with_digit(i, l.digit(i)));
            prop_assert_eq!(rebuilt, l);
            prop_assert!((0..n).all(|i| (1..=3).contains(&l.digit(i))));
        }
    }
}

proptest! {
    #![proptest_config(config(1024))]

    /// The SACK scoreboard's range set against a bitmap of received bytes: the same content
    /// after any sequence of adds, advances and absorbs, with the ranges sorted, disjoint and
    /// never touching.
    #[test]
    fn range_set_matches_a_bitmap(ops in prop::collection::vec(prop_oneof![
        3 => (0u64..400, 1u64..40).prop_map(|(a, len)| Op::Add(a, (a + len).min(400))),
        1 => (0u64..30).prop_map(Op::Advance),
        1 => (0u64..30).prop_map(Op::Absorb),
    ], 0..60)) {
        const N: u64 = 400;
        let mut set = RangeSet::default();
        let mut bits = [false; N as usize];
        let mut low = 0u64;
        for op in ops {
            match op {
                Op::Add(a, b) => {
                    let (a, b) = (a.max(low), b.max(low));
                    if a == b {
                        continue;
                    }
                    set.add(a, b);
                    bits[a as usize..b as usize].iter_mut().for_each(|x| *x = true);
                }
                Op::Advance(by) => {
                    low = (low + by).min(N);
                    set.advance(low);
                    bits[..low as usize].iter_mut().for_each(|x| *x = false);
                }
                Op::Absorb(by) => {
                    let to = (low + by).min(N);
                    let mut want = to;
                    while want < N && bits[want as usize] {
                        want += 1;
                    }
                    prop_assert_eq!(set.absorb(to), want);
                    bits[..want as usize].iter_mut().for_each(|x| *x = false);
                    low = want;
                }
            }
            let r = set.ranges();
            prop_assert!(r.windows(2).all(|w| w[0].1 < w[1].0), "sorted, disjoint, apart: {:?}", r);
            prop_assert!(r.iter().all(|&(a, b)| a < b));
            for x in 0..N {
                prop_assert_eq!(set.end_of_range_holding(x).is_some(), bits[x as usize], "byte {} in {:?}", x, r);
            }
        }
    }
}
