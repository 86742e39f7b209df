//! The decoder over every chain length, n = 2 (DPCP), 3 (TPCP) and 4: the chain a router's
//! Alg. 2 writes decodes to the router's load factor, and the exception rules of MPCP §3.4
//! (module docs of `decode`) hold at every chain position. The n = 2 and n = 3 tests in
//! `decode.rs` fix single cases by hand; these run the same rules over n.

use super::*;
use crate::dpcp::encode::{encode, Flag};
use crate::dpcp::levels::{MAX_CHAIN, MD_FACTORS};
use crate::time::NS_PER_MS;

const MS: Time = NS_PER_MS;
const RTT: Dur = 100 * MS;

fn decoder(n: u8) -> Decoder {
    Decoder::new(DecoderParams { n, ..DecoderParams::dpcp(200 * MS) })
}

/// Every n-digit load factor, in packed (ρ) order.
fn all_lf(n: u8) -> Vec<Lf> {
    let lf = |i: usize| (0..n).fold(0u8, |a, k| (a << 2) | (i / 3usize.pow((n - 1 - k) as u32) % 3 + 1) as u8);
    (0..3usize.pow(n as u32)).map(|i| Lf::from_packed(n, lf(i))).collect()
}

/// The chain one router with load factor `port` writes over packets sent as 01 (the sender's
/// ECN), chain position by chain position: what the receiver echoes, in order.
fn chain(port: Lf, flag: &mut Flag) -> Vec<(u8, Position)> {
    (0..port.n()).map(|k| (encode(port, 0b01, Position(k), flag), Position(k))).collect()
}

#[test]
fn in_order_chains_decode_to_the_routers_load_factor() {
    for n in 2..=MAX_CHAIN {
        let mut d = decoder(n);
        let mut flag = Flag::default();
        let (mut overload, mut t) = (0, 0);
        // Every level back to back, one chain a second (past any MD's hold and AI period).
        for port in all_lf(n) {
            t += 1000 * MS;
            for (code, pos) in chain(port, &mut flag) {
                let k = pos.0;
                let a = d.on_echo(t + k as Time * MS, code, pos, RTT, 100.0);
                // The digits so far, the rest at 11: the worst level still possible.
                let known = port.with_tail_worst(k + 1);
                assert_eq!(d.lf(), known, "n {n} port {port:?} position {k}");
                let want = match (port.zone(), k) {
                    (Zone::Over, 0) => Action::SetCwnd(MD_FACTORS[2] * 100.0),
                    (Zone::Over, _) => Action::SetCwnd(port.md_factor().unwrap() * 100.0),
                    _ => Action::Grow { lf: known, vcp: false },
                };
                assert_eq!(a, want, "n {n} port {port:?} position {k}");
            }
            assert_eq!(d.lf(), port, "n {n}: the whole chain is the router's load factor");
            overload += (port.zone() == Zone::Over) as u64;
        }
        let st = d.stats();
        assert_eq!((st.exceptions, st.fallbacks, d.mode()), (0, 0, Mode::Chains), "n {n}");
        // Each overload chain: one MD by its MSP, refined by each of its n − 1 further digits.
        assert_eq!((st.mds, st.refinements), (overload, overload * (n as u64 - 1)), "n {n}");
    }
}

/// Four chains: c0 (MSP 11), c1 (MSP 10), c2 (MSP 01), c3; their MSPs all differ, c1's is
/// larger than c2's, so "the larger MSP" and "the new MSP" differ, and no digit of c1 is 11,
/// so "(MSP, 11 …)" differs from c1's digits before a gap.
fn four_chains(n: u8) -> [Lf; 4] {
    [1.2, 0.9, 0.3, 0.1].map(|rho| Lf::from_rho(rho, n))
}

#[test]
fn a_lost_chain_position_is_one_exception_then_the_next_chain_decodes() {
    for n in 2..=MAX_CHAIN {
        let c = four_chains(n);
        for lost in 0..n {
            let mut d = decoder(n);
            let mut flag = Flag::default();
            let mut echoes = vec![];
            for (i, &lf) in c.iter().enumerate() {
                echoes.extend(chain(lf, &mut flag).into_iter().map(|(code, pos)| (i, code, pos)));
            }
            echoes.retain(|&(i, _, pos)| !(i == 1 && pos.0 == lost));
            // The first echo after the gap, and what the exception rules make of it.
            let gap = n as usize + lost as usize;
            let (_, _, after) = echoes[gap];
            let want = if lost == 0 {
                // c1's MSP lost: its position 1 follows no MSP, ignored; c0's saved MSP, 11 ….
                c[0].with_tail_worst(1)
            } else if lost < n - 1 {
                // A skipped position inside c1: ignored, (c1's MSP, 11 …).
                c[1].with_tail_worst(1)
            } else if n == 2 {
                // c1's LSP lost: two MSPs in a row, the larger one with LSP 11.
                Lf::zone_worst(n, c[1].digit(0).max(c[2].digit(0)))
            } else {
                // c1's last position lost: c2's MSP starts a new chain after an incomplete one.
                Lf::zone_worst(n, c[2].digit(0))
            };
            for (j, &(i, code, pos)) in echoes.iter().enumerate() {
                d.on_echo(j as Time * MS, code, pos, RTT, 100.0);
                assert_eq!(d.stats().exceptions, (j >= gap) as u64, "n {n} lost {lost}: echo {j}");
                if j == gap {
                    assert_eq!(d.lf(), want, "n {n} lost {lost}: echo of position {} after the gap", after.0);
                }
                if i == 1 && pos.0 > 0 && j > gap {
                    // Later digits of the broken chain: never below c1's load factor (the
                    // positions before them are taken as 11) when c1's own MSP arrived.
                    assert!(lost == 0 || d.lf().packed() >= c[1].packed(), "n {n} lost {lost}: {:?}", d.lf());
                }
            }
            let st = d.stats();
            assert_eq!((st.exceptions, st.fallbacks, d.mode()), (1, 0, Mode::Chains), "n {n} lost {lost}");
            assert_eq!(d.lf(), c[3], "n {n} lost {lost}: the next whole chain decodes");
        }
    }
}

#[test]
fn three_echoes_of_one_chain_position_in_a_row_fall_back_to_vcp_mode() {
    for n in 2..=MAX_CHAIN {
        for k in 0..n {
            let mut d = decoder(n);
            let mut flag = Flag::default();
            let c = four_chains(n);
            // The chain up to position k, then position k twice more (the rest of the chain
            // and what follows lost, or a path that reorders).
            let mut echoes = chain(c[0], &mut flag)[..=k as usize].to_vec();
            echoes.extend([(0b10, Position(k)); 2]);
            for (t, &(code, pos)) in echoes.iter().enumerate() {
                d.on_echo(t as Time * MS, code, pos, RTT, 100.0);
            }
            let st = d.stats();
            assert_eq!((st.exceptions, st.fallbacks), (2, 1), "n {n} position {k}");
            assert!(matches!(d.mode(), Mode::Vcp { .. }), "n {n} position {k}: {:?}", d.mode());
        }
    }
}

#[test]
fn a_swapped_pair_of_chain_positions() {
    for n in 2..=MAX_CHAIN {
        let c = four_chains(n);
        // Swap c1's positions `at` and `at + 1` (the last with c2's MSP when at = n − 1).
        for at in 0..n {
            let mut d = decoder(n);
            let mut flag = Flag::default();
            let mut echoes: Vec<(u8, Position)> = c.iter().flat_map(|&lf| chain(lf, &mut flag)).collect();
            echoes.swap(n as usize + at as usize, n as usize + at as usize + 1);
            let mut t = 0;
            for &(code, pos) in &echoes {
                d.on_echo(t, code, pos, RTT, 100.0);
                t += MS;
            }
            // Two exceptions (the jump ahead and the late echo), never a fallback: reordering
            // is tolerated at every chain length, and the next chain decodes.
            let st = d.stats();
            assert_eq!((st.exceptions, st.fallbacks, d.mode()), (2, 0, Mode::Chains), "n {n} at {at}");
            assert_eq!(d.lf(), c[3], "n {n} at {at}");
        }
    }
}

/// Property: under one router's constant load factor L, whatever the echo stream loses,
/// reorders or repeats, once an MSP has arrived every digit the decoder holds is L's digit or
/// 11, so the saved LF is
/// never below L digit by digit (the decoder errs only toward the conservative side), and
/// the decoder never panics. Random streams from the project's seeded generator: each chain's
/// echoes with 10 % loss, 10 % neighbour swaps and 2 % duplicates, for every L at n = 2..4.
#[test]
fn property_any_echo_stream_decodes_at_or_above_the_true_lf() {
    use crate::rng::SimRng;
    let mut rng = SimRng::for_component(11, "dpcp/decode/property");
    for n in 2..=MAX_CHAIN {
        for port in all_lf(n) {
            let mut d = decoder(n);
            let mut flag = Flag::default();
            let mut echoes: Vec<(u8, Position)> = Vec::new();
            for _ in 0..60 {
                for e in chain(port, &mut flag) {
                    if rng.bernoulli(0.1) {
                        continue;
                    }
                    echoes.push(e);
                    if rng.bernoulli(0.02) {
                        echoes.push(e);
                    }
                }
            }
            for i in 1..echoes.len() {
                if rng.bernoulli(0.1) {
                    echoes.swap(i - 1, i);
                }
            }
            let mut t = 0;
            let mut seen_msp = false;
            for &(code, pos) in &echoes {
                d.on_echo(t, code, pos, RTT, 100.0);
                t += 7 * MS;
                // Before the first MSP the decoder holds its starting 01 01, not a reading.
                seen_msp |= pos.is_msp();
                if !seen_msp {
                    continue;
                }
                let lf = d.lf();
                for k in 0..n {
                    let (have, truth) = (lf.digit(k), port.digit(k));
                    assert!(have == truth || have == 0b11, "n {n} L {port:?}: digit {k} is {have:#b} in {lf:?}");
                }
            }
        }
    }
}
