//! DPCP's steady state on dumbbells in MPCP's range (issue 13 item 4): MPCP §4.1 says
//! "DPCP achieves slightly better bandwidth utilizations in steady status ... than VCP". Read
//! as: once both have converged, DPCP's bottleneck utilisation is at least VCP's, and nothing
//! lost means no timeout (every timeout there is spurious).
//!
//! Set-up: scenarios/mpcp-dumbbell.toml (1000-byte packets, access 100 Mb/s 1 ms, a one-BDP
//! buffer, SACK) with the flows, capacity and RTT, 90 s, utilisation over (45, 90] s.
//! Measured on this build (seed 1), DPCP vs VCP: 3 flows / 5 Mb/s / 300 ms 0.837 vs 0.933,
//! 0 timeouts; 5 / 6 / 400 0.845 vs 0.963, 32 timeouts, all spurious; 4 / 3 / 900 0.807 vs
//! 0.988, 11 timeouts, all spurious; no drops in any.
//!
//! What was found (traced per ACK: echoes, decoder actions, ρ per t_p, RTO; not fixed yet, see
//! `dpcp_steady_state_at_least_vcp`). Three mechanisms, each measured on its own:
//! - **Spurious timeouts: RTO ≈ SRTT against MI's queue growth.** Every ACK is an RTT sample
//!   (RFC 7323 timestamps), so RTTVAR falls to 1–2 ms and the RTO to SRTT + 4–30 ms (5 / 6 /
//!   400: SRTT 0.405–0.453 s, RTO 0.410–0.501 s at the timeouts). The timer fires when a flow's
//!   next packets meet a queue that grew by more than that within one round trip, and DPCP's
//!   lowest level grows the window (1 + ξ)^min(rtt/t_p, σ_MI) = 2² = 4× per RTT at 400 ms
//!   (ξ = 1, reconstructed) on the echo of an interval the synchronised MDs left empty: one
//!   flow went 54 → 502 packets in one second, the queue 0 → 300 packets, and four flows timed
//!   out within 75 ms. `rto_rule = "linux"` leaves 10 of 11 on 4 / 3 / 900; a 100 ms clock
//!   granularity 9 / 13; ns-2's one timed segment per RTT (`tcp.rtt_samples = "once-per-rtt"`,
//!   RTTVAR 10–30 ms) 0 / 23 / 5 (utilisation 0.860 / 0.832 / 0.795). With ξ capped at the
//!   reference sender's 1/16 (`xi_cap`; `vcp-src.cc`, `recv_newack_helper`, LF_BOUND) as well,
//!   no timeout is left (`dpcp_without_its_overshoot_takes_no_timeout_yet_stays_below_vcp`).
//! - **A second, deep MD from a chain split across a sending pause.** After an MD the window
//!   is below the flight and the sender pauses; its last packet before the pause was an MSP
//!   marked overload (flag MSP_LOW at the router), the first after it an LSP that crosses the
//!   router a t_p later and takes that interval's LSP (11 of 01 11 at ρ = 0.56). The decoder
//!   reads 11 11 and cuts to 0.43 just after the hold and its AI rtt (300 ms dumbbell, flow 0:
//!   93.5 → 40.2 → 56.1 at 67.417 s, 58.5 → 25.2 at 67.939 s, ai_until 67.925 s). The
//!   router's `latch_lsp` (the LSP of the MSP's interval) gives 0.913 on the 300 ms dumbbell;
//!   an MD hold of one RTT (MPCP §2.2, `md_hold = "rtt"`) 0.928.
//! - **Deep MDs at RTT ≫ t_p.** With the timeouts gone (all four changes above), 0.914 / 0.807
//!   / 0.799: the MI overshoot queues 100–170 packets, k_q·q_l lifts ρ above 1.4, every flow
//!   cuts to 0.43 (Table 1) and the link empties for 0.2–0.4 s before the next MI. VCP's
//!   single 0.875 keeps its link busy (0.933 / 0.963 / 0.988). Staleness adds to it: an MD
//!   at t0 reaches the router at once (the router is the sender's first hop) but echoes of ρ
//!   measured before t0 keep arriving until t0 + 2·t_p + RTT, beyond the hold + AI rtt
//!   (t_p + RTT) of the reference code.
//!
//! Candidates evaluated (issue 13 item 4's decision; numbers over (45, 90] s, 300 / 400 /
//! 900 ms, utilisation and timeouts; VCP 0.933 / 0.963 / 0.988, none):
//! - `md_hold = "2t_p+rtt"` (a hold until the last echo of a pre-MD ρ, argued in
//!   `vcp/params.rs`): 0.885 (0) / 0.863 (14) / 0.859 (40).
//! - `md_on_msp_only` (the MSP regulates, the LSP only refines: a chain straddling the
//!   episode's end cuts nothing): 0.940 (0) / 0.847 (45) / 0.817 (18): the 300 ms dumbbell
//!   meets VCP, the others do not.
//! - both, with `latch_lsp` and ns-2's RTT sampling: 0.888 (0) / 0.874 (19, 29 drops) /
//!   0.840 (2); with ξ capped at 1/16 as well, no timeout: 0.915 / 0.851 / 0.711. Over 72
//!   combinations of these (hold t_p / rtt / 2t_p+rtt, MSP-only, latch, RTT sampling, ξ
//!   cap none / 1/8 / 1/16) the best are 0.940, 0.874 and 0.883: none meets VCP at 400 or
//!   900 ms, and none without timeouts comes within 0.1 of VCP there.
//! - **What stands in the way: ρ sampled every t_p < RTT on a window that arrives as one
//!   burst.** After a deep cut a flow pauses for (1 − β) of its RTT, and the ACK clock keeps
//!   that gap: the bottleneck idles for tens of ms every RTT (5 / 6 / 400, 52.94–52.99 s:
//!   idle 60 ms while the five windows sum to 241 packets, 0.8 BDP). A t_p interval inside
//!   the busy part counts λ = C·t_p, so ρ ≥ 1/γ = 1.02 plus k_q·q_l of the burst's queue,
//!   overload (11 10 at 8.7 packets of queue, a 0.6 cut), although the link is underused
//!   over the RTT; the interval after an idle stretch reads ρ < 0.2 and stamps ξ = 1 on the
//!   next busy interval's packets. Over (45, 90] s (10 ms samples, 200 ms bins), t_p bins
//!   fully busy (≥ 0.98) inside an RTT whose mean utilisation is below 0.9: VCP 1 / 0 / 0,
//!   DPCP 15 / 19 / 63 (`dpcp_reads_busy_t_p_intervals_of_underused_rtts`). VCP's single
//!   0.875 cut never opens such gaps. With t_p at least the RTT (router and flows, t_p =
//!   0.5 s at 400 ms, 1 s at 900 ms) the same DPCP reaches 0.930 and 0.930 with no timeout
//!   (VCP there: 0.931 and 0.735), which is not the seeds' t_p = 200 ms.
//!
//! Why VCP does not suffer equally: **the depth of Table 1's cuts at
//! the overloads the queue term makes.** A1 reads ρ = (λ + k_q·q_l)/(γ·C·t_p): a full link
//! reads 1/γ = 1.02 and every packet of standing queue adds k_q/(γ·C·t_p), so 4.4 packets at
//! 3 Mb/s (7.4 at 5 Mb/s) already make ρ ≥ 1.05, level 11 10, a cut to 0.6. The window's real
//! excess over the BDP is q/(C·RTT), so ρ − 1 overstates it k_q·RTT/t_p-fold (0.75 at
//! 300 ms, 1 at 400, 2.25 at 900 ms): the longer the RTT, the deeper a cut below the BDP.
//! VCP's one code cuts 0.875 whatever the excess and its one-BDP queue refills the gap; after
//! DPCP's 0.6 the link runs near 0.6–0.7 until MI (ξ = 1/16 at ρ < 0.8) climbs back, 3.4
//! RTTs at 900 ms. Measured with `md_factors = [0.875, 0.875, 0.875]` (VCP's β at every
//! overload level; an ablation, Table 1 is explicit): 0.941 / 0.970 / 0.993 (0 / 1 / 4
//! spurious timeouts), at least VCP on all three; paced as well, 0.939 / 0.987 / 0.998 and no
//! timeout (`dpcp_with_vcps_cut_at_every_overload_level_meets_vcp`). No other candidate
//! reaches VCP at 400 and 900 ms:
//!
//! | candidate (DPCP unless named) | 300 ms | 400 ms | 900 ms |
//! |---|---|---|---|
//! | VCP (the bar) | 0.933 (0) | 0.963 (0) | 0.988 (0) |
//! | VCP, `pacing_gain = 1` | 0.936 (0) | 0.986 (0) | 0.978 (0) |
//! | VCP, `pacing_gain = 1.2` | 0.871 (0) | 0.940 (0) | 1.000 (0) |
//! | default | 0.837 (0) | 0.845 (32) | 0.807 (11) |
//! | `pacing_gain = 1` | 0.938 (0) | 0.866 (0) | 0.802 (0) |
//! | `pacing_gain = 1.2` | 0.857 (0) | 0.860 (0, 27 drops) | 0.815 (0) |
//! | `md_on_msp_only` | 0.940 (0) | 0.847 (45) | 0.817 (18) |
//! | paced 1, `md_on_msp_only` | 0.938 (0) | 0.914 (0) | 0.809 (0) |
//! | paced 1, `md_on_msp_only`, hold `2t_p+rtt` | 0.927 (0) | 0.802 (0) | 0.836 (0) |
//! | paced 1, `md_on_msp_only`, `latch_lsp` | 0.939 (0) | 0.872 (0) | 0.814 (0) |
//! | paced 1, hold `rtt`, `latch_lsp` | 0.942 (0) | 0.852 (0) | 0.803 (0) |
//! | paced 1, `vcp-like` growth | 0.937 (0) | 0.882 (0) | 0.975 (0) |
//! | paced 1, `vcp-like`, `md_on_msp_only`, `latch_lsp` | 0.937 (0) | 0.836 (0) | 0.978 (0) |
//! | `vcp-like`, `md_on_msp_only` (unpaced) | 0.889 (0) | 0.805 (65) | 0.754 (37) |
//! | router `k_q = 0` (ablation), paced 1 | 0.939 (0) | 0.922 (0, 950 drops) | 0.946 (0, 117 drops) |
//! | `md_factors` all 0.875 (ablation) | 0.941 (0) | 0.970 (1) | 0.993 (4) |
//! | same, paced 1 | 0.939 (0) | 0.987 (0) | 0.998 (0) |
//!
//! | router `queue_term = "ns2"` (the reference router's) | 0.885 (0) | 0.870 (38, 225 drops) | 0.877 (26, 603 drops) |
//! | VCP, router `queue_term = "ns2"` | 0.939 (0) | 0.966 (0) | 0.999 (0) |
//! | reference profile (below) | 0.909 (0) | 0.989 (0) | 0.959 (0) |
//! | same, router γ = 0.95 (the reference router's) | 0.881 (0) | 0.957 (0) | 0.936 (0) |
//! | VCP, reference profile | 1.000 (0, 219 drops) | 1.000 (0, 556 drops) | 1.000 (0, 63 drops) |
//!
//! (utilisation over (45, 90] s, timeouts in brackets, all spurious; seed 1.) Seeds 2 and 3
//! agree: VCP 0.929 / 0.967 / 0.979 and 0.935 / 0.965 / 0.990; DPCP default 0.889 / 0.824 /
//! 0.818 and 0.836 / 0.822 / 0.805 (0 / 52 / 27 and 0 / 18 / 31 timeouts); paced 0.938 /
//! 0.884 / 0.819 and 0.938 / 0.885 / 0.814 (none); all-0.875 cuts paced 0.938 / 0.985 / 0.998
//! and 0.938 / 0.981 / 0.997 (none). Pacing
//! (`pacing_gain`, `vcp/pacing.rs`) removes every timeout but not the shortfall; the deep cuts
//! are MPCP Table 1's own, so no grounded default meets the bound and the defaults stay.
//! The VCP authors' ns-2 sender paces only windows of at most 64 packets whose spacing
//! RTT/2^⌈log₂ cwnd⌉ exceeds t_p/2 (`vcp-src.cc`, `send_much`, `pacing_for_big_rtt_`), never
//! the 100–300-packet windows here, so it does not ground `pacing_gain` as a default either.
//!
//! **The reference code (issue 13 item 4, lead 1).** The VCP authors' ns-2 router
//! (`vcp-queue.cc`, `VcpQueueLoadMeasurementTimer::expire`) computes A1 with λ counted at
//! enqueue, γ = 0.95 (`dynamic_target_utilization_`; the adjusting code is commented out) and a
//! queue term built from the mean of the interval's 10 ms samples by `moving_avg_int`
//! (`vcp-queue.h`), which C's precedence turns into mean >> 4: k_q·q̄/16, no memory
//! (`queue_term = "ns2"`, `vcp/queue_term.rs`). It rounds ρ up to a whole per cent
//! (`lfi = (unsigned short)(lfd + 1.0)`) before comparing with 80 and 100, so its codes switch
//! at ρ = 0.79 and 0.99. Its sender (`vcp-src.cc`) is racc's VCP sender: on a first overload
//! echo one MD of β = 0.875, overload echoes then frozen for t_ρ (`md_wait_interval_1_`) and
//! answered by AI for one RTT (`md_wait_interval_2_`); its AI law is `ai_law = "ns2"` and its
//! only multi-bit mode (`encode_load_factor_ = 0`) caps MI at 1/16 below ρ = 0.8 and has no
//! MD at all. No DPCP/MPCP code is published with it. Run with all of it (router queue term,
//! ns-2 AI, ξ ≤ 1/16, ns-2's one timed segment per RTT: the *reference profile*) DPCP takes no
//! timeout and drops nothing, meets VCP at 400 ms and not at 300 or 900 ms; VCP under the
//! same profile fills the link and drops. What is left is Table 1 itself: the MI/AI overshoot
//! that carries a flow into overload (ρ of one t_p rises 0.96 → 1.18 within one interval at
//! 300 ms, traced) is read from arrivals alone as level 11 10, and the synchronised 0.6 cuts
//! leave the link at 0.65 for two intervals; VCP's 0.875 leaves it near 1.
//! The reference router's queue term is therefore a labelled variant, default unchanged
//! (MPCP does not say which router it ran, and its γ 0.95 makes a full link read
//! 1/0.95 = 1.053, level 11 10, for DPCP: worse, as the table shows).

mod common;
use common::{port_window, sim};
use racc_sim::Simulator;

const DUMBBELL: &str = include_str!("../../../scenarios/mpcp-dumbbell.toml");

/// The three dumbbells: (flows, Mb/s, round-trip propagation delay in ms).
const DUMBBELLS: [(u32, u32, u32); 3] = [(3, 5, 300), (5, 6, 400), (4, 3, 900)];

/// mpcp-dumbbell with `flows` flows over `mbps` Mb/s and a round-trip propagation delay of
/// `rtt_ms` (2 × (1 + d + 1) ms), one-BDP buffer, `secs` long, `params` added to the flows.
fn text(proto: &str, flows: u32, mbps: u32, rtt_ms: u32, secs: u32, params: &str) -> String {
    let d = rtt_ms / 2 - 2;
    let t = DUMBBELL
        .replace("pairs = 2", &format!("pairs = {flows}"))
        .replace("count = 2", &format!("count = {flows}{params}"))
        .replace("capacity = \"10Mbps\", delay = \"248ms\"", &format!("capacity = \"{mbps}Mbps\", delay = \"{d}ms\""))
        .replace("duration = \"60s\"", &format!("duration = \"{secs}s\""))
        .replace("router = \"vcp\"", &format!("router = \"{proto}\""))
        .replace("protocol = \"vcp\"", &format!("protocol = \"{proto}\""));
    assert!(t.contains(&format!("pairs = {flows}")) && t.contains(&format!("\"{d}ms\"")));
    t
}

/// Last sample's cumulative (timeouts, spurious timeouts), summed over flows.
fn timeouts(s: &Simulator) -> (u64, u64) {
    let fs = &s.flow_series;
    let last = *fs.time_s.last().unwrap();
    let at_end = |v: &[u64]| (0..v.len()).filter(|&i| fs.time_s[i] == last).map(|i| v[i]).sum::<u64>();
    (at_end(&fs.timeouts), at_end(&fs.spurious_timeouts))
}

/// (utilisation over (45, 90] s, timeouts, spurious timeouts, drops).
fn steady(proto: &str, (n, c, r): (u32, u32, u32), params: &str) -> (f64, u64, u64, u64) {
    let mut s = sim(&text(proto, n, c, r, 90, params));
    s.run();
    let drops = s.port_summary().iter().map(|p| p.counters.drops).sum();
    let (to, sp) = timeouts(&s);
    (port_window(&s, "r0->r1", 45.0, 90.0).0, to, sp, drops)
}

/// As `steady`, on routers with `router_params` (a TOML inline table's body) on every port.
fn steady_routed(proto: &str, (n, c, r): (u32, u32, u32), params: &str, router: &str) -> (f64, u64, u64, u64) {
    let t = text(proto, n, c, r, 90, params)
        .replace(&format!("router = \"{proto}\""), &format!("router = \"{proto}\", router_params = {{ {router} }}"));
    assert!(t.contains(router));
    let mut s = sim(&t);
    s.run();
    let drops = s.port_summary().iter().map(|p| p.counters.drops).sum();
    let (to, sp) = timeouts(&s);
    (port_window(&s, "r0->r1", 45.0, 90.0).0, to, sp, drops)
}

/// Issue 13's acceptance: DPCP's steady-state utilisation at least VCP's, and no timeout, on
/// each of the three dumbbells. Windows from the paper's words, written before measuring.
#[test]
#[ignore = "shortfall: DPCP 0.837/0.845/0.807 vs VCP 0.933/0.963/0.988 over (45, 90] s; 0/32/11 spurious timeouts; in the way: Table 1's 0.6/0.43 cuts at the mild overloads the queue term reads, and rho sampled every t_p < RTT on bursty windows (module docs)"]
fn dpcp_steady_state_at_least_vcp() {
    for d in DUMBBELLS {
        let (vu, _, _, _) = steady("vcp", d, "");
        let (du, to, sp, drops) = steady("dpcp", d, "");
        eprintln!("{d:?}: DPCP {du:.3} (VCP {vu:.3}), timeouts {to} (spurious {sp}), drops {drops}");
        assert!(du >= vu, "{d:?}: DPCP {du:.3} below VCP {vu:.3}");
        assert_eq!(to, 0, "{d:?}: {to} timeouts ({sp} spurious)");
    }
}

/// The shortfall as it stands, so a change to it is seen: on every dumbbell DPCP loses nothing
/// yet uses the link less than VCP once both have converged (the known shortfall above).
#[test]
fn dpcp_steady_state_shortfall_is_known() {
    for d in DUMBBELLS {
        let (vu, ..) = steady("vcp", d, "");
        let (du, to, sp, drops) = steady("dpcp", d, "");
        eprintln!("{d:?}: DPCP {du:.3} (VCP {vu:.3}), timeouts {to} (spurious {sp}), drops {drops}");
        assert_eq!(drops, 0, "{d:?}");
        assert_eq!(to, sp, "{d:?}: nothing lost, every timeout spurious");
        assert!(du < vu, "{d:?}: DPCP {du:.3} now at least VCP {vu:.3}: un-ignore dpcp_steady_state_at_least_vcp");
    }
}

/// The two new candidates on their own and together (module docs): neither meets VCP on the
/// 400 and 900 ms dumbbells; only the MSP-only rule is enough at 300 ms.
#[test]
fn dpcp_hold_and_msp_only_candidates_stay_below_vcp_at_400_and_900_ms() {
    for (d, vu) in DUMBBELLS.into_iter().map(|d| (d, steady("vcp", d, "").0)) {
        let msp = steady("dpcp", d, "\nparams = { md_on_msp_only = true }");
        let both = steady("dpcp", d, "\nparams = { md_on_msp_only = true, md_hold = \"2t_p+rtt\" }");
        eprintln!("{d:?}: VCP {vu:.3}; MSP-only {msp:?}; with the 2t_p+rtt hold {both:?}");
        assert_eq!((msp.3, both.3), (0, 0), "{d:?}: nothing dropped");
        if d.2 == 300 {
            assert!(msp.0 >= vu && msp.1 == 0, "{d:?}: MSP-only {msp:?} vs VCP {vu:.3}");
        } else {
            assert!(msp.0 < vu && both.0 < vu, "{d:?}: a candidate now meets VCP {vu:.3}: {msp:?} {both:?}");
        }
    }
}

/// What stands in the way (module docs), pinned: with 10 ms samples, DPCP's link has far more
/// 200 ms intervals that are fully busy although the RTT around them averages below 0.9 than
/// VCP's (VCP 1 / 0 / 0, DPCP 15 / 19 / 63 measured): ρ reads overload there.
#[test]
fn dpcp_reads_busy_t_p_intervals_of_underused_rtts() {
    let count = |proto: &str, (n, c, r): (u32, u32, u32)| {
        let t = text(proto, n, c, r, 90, "").replace("interval = \"100ms\"", "interval = \"10ms\"");
        let mut s = sim(&t);
        s.run();
        let ps = &s.port_series;
        let p = s.ports().iter().position(|x| x.name == "r0->r1").unwrap() as u32;
        let u: Vec<f64> = (0..ps.time_s.len())
            .filter(|&j| ps.port[j] == p && ps.time_s[j] > 45.0 && ps.time_s[j] <= 90.0)
            .map(|j| ps.utilisation[j])
            .collect();
        let (bin, rtt) = (20, (r / 10) as usize); // t_p = 200 ms and the RTT, in samples
        (0..u.len() / bin)
            .map(|b| b * bin)
            .filter(|&a| a + rtt <= u.len())
            .filter(|&a| u[a..a + bin].iter().sum::<f64>() / bin as f64 >= 0.98)
            .filter(|&a| u[a..a + rtt].iter().sum::<f64>() / (rtt as f64) < 0.9)
            .count()
    };
    for d in DUMBBELLS {
        let (v, p) = (count("vcp", d), count("dpcp", d));
        eprintln!("{d:?}: busy t_p intervals in underused RTTs: VCP {v}, DPCP {p}");
        assert!(v <= 2 && p >= 10, "{d:?}: VCP {v}, DPCP {p}");
    }
}

/// The diagnosis above, pinned: without the two transport and MI effects that make DPCP's
/// queue jump (one RTT sample per round trip as ns-2 times it, ξ capped at the reference
/// sender's 1/16) and without the split chain (latched LSP, an RTT hold), DPCP takes no
/// timeout on any of the three dumbbells; what is left below VCP is the deep MDs'.
#[test]
fn dpcp_without_its_overshoot_takes_no_timeout_yet_stays_below_vcp() {
    let flows = "\nparams = { md_hold = \"rtt\", xi_cap = 0.0625, tcp = { rtt_samples = \"once-per-rtt\" } }";
    for d in DUMBBELLS {
        let (vu, ..) = steady("vcp", d, "");
        let mut s = sim(&text("dpcp", d.0, d.1, d.2, 90, flows)
            .replace("router = \"dpcp\"", "router = \"dpcp\", router_params = { latch_lsp = true }"));
        s.run();
        let drops: u64 = s.port_summary().iter().map(|p| p.counters.drops).sum();
        let (to, _) = timeouts(&s);
        let du = port_window(&s, "r0->r1", 45.0, 90.0).0;
        eprintln!("{d:?}: DPCP {du:.3} (VCP {vu:.3}), timeouts {to}, drops {drops}");
        assert_eq!((to, drops), (0, 0), "{d:?}");
        assert!(du < vu, "{d:?}: DPCP {du:.3} now at least VCP {vu:.3}");
    }
}

/// Candidate (b), sender pacing (`pacing_gain = 1`: one window per SRTT, `vcp/pacing.rs`):
/// DPCP then takes no timeout and drops nothing on any dumbbell, but still uses the 400 and
/// 900 ms links less than VCP, paced or not (measured 0.938 / 0.866 / 0.802; VCP 0.933 /
/// 0.963 / 0.988, VCP paced 0.936 / 0.986 / 0.978).
#[test]
fn dpcp_paced_takes_no_timeout_yet_stays_below_vcp_at_400_and_900_ms() {
    let paced = "\nparams = { pacing_gain = 1.0 }";
    for d in DUMBBELLS {
        let (vu, ..) = steady("vcp", d, "");
        let vp = steady("vcp", d, paced);
        let (du, to, _, drops) = steady("dpcp", d, paced);
        eprintln!("{d:?}: DPCP paced {du:.3}, timeouts {to}, drops {drops}; VCP {vu:.3}, VCP paced {vp:?}");
        assert_eq!((to, drops), (0, 0), "{d:?}");
        assert_eq!((vp.1, vp.3), (0, 0), "{d:?}: VCP paced");
        if d.2 != 300 {
            assert!(du < vu && du < vp.0, "{d:?}: DPCP paced {du:.3} now meets VCP {vu:.3} / paced {:.3}", vp.0);
        }
    }
}

/// Why VCP does not suffer (module docs), pinned: with VCP's own cut, 0.875, at every overload
/// level (`md_factors`, an ablation of MPCP Table 1) DPCP's utilisation is at least VCP's
/// on all three dumbbells, and paced as well it takes no timeout (measured 0.941 / 0.970 /
/// 0.993 with 0 / 1 / 4 timeouts; paced 0.939 / 0.987 / 0.998, none).
#[test]
fn dpcp_with_vcps_cut_at_every_overload_level_meets_vcp() {
    let cut = "\nparams = { md_factors = [0.875, 0.875, 0.875] }";
    let paced = "\nparams = { md_factors = [0.875, 0.875, 0.875], pacing_gain = 1.0 }";
    for d in DUMBBELLS {
        let (vu, ..) = steady("vcp", d, "");
        let c = steady("dpcp", d, cut);
        let p = steady("dpcp", d, paced);
        eprintln!("{d:?}: VCP {vu:.3}; DPCP with 0.875 cuts {c:?}, paced {p:?}");
        assert!(c.0 >= vu, "{d:?}: {c:?} vs VCP {vu:.3}");
        assert!(p.0 >= vu && (p.1, p.3) == (0, 0), "{d:?}: paced {p:?} vs VCP {vu:.3}");
    }
}

/// The reference router's queue term (`queue_term = "ns2"`, `vcp/queue_term.rs`): the VCP
/// authors' ns-2 router weighs each t_p's mean queue by k_q/16 and keeps no memory, so a
/// standing queue no longer reads as the 0.6/0.43 levels of Table 1. Acceptance as issue 13's
/// (MPCP §4.1, written before measuring): on each dumbbell DPCP on those routers uses the
/// link at least as well as VCP on the same routers and as VCP on A2's, and takes no timeout.
#[test]
#[ignore = "shortfall: DPCP on queue_term = ns2 routers 0.885/0.870/0.877 with 0/38/26 timeouts and 0/225/603 drops vs VCP 0.939/0.966/0.999 on the same routers, 0.933/0.963/0.988 on A2's; the remaining deep cuts answer rho of 1.05-1.4 from arrivals alone (module docs)"]
fn dpcp_on_the_reference_routers_queue_term_meets_vcp() {
    let ns2 = "queue_term = \"ns2\"";
    for d in DUMBBELLS {
        let (va, ..) = steady("vcp", d, "");
        let v = steady_routed("vcp", d, "", ns2);
        let p = steady_routed("dpcp", d, "", ns2);
        eprintln!("{d:?}: DPCP on ns2 routers {p:?}; VCP on ns2 routers {v:?}; VCP on A2 routers {va:.3}");
        assert!(p.0 >= v.0 && p.0 >= va, "{d:?}: DPCP {p:?} vs VCP {v:?} / {va:.3}");
        assert_eq!(p.1, 0, "{d:?}: DPCP {p:?}");
    }
}

/// Everything the VCP authors' ns-2 code does differently, on both sides (module docs): the
/// router's queue term (`queue_term = "ns2"`), the sender's AI law (`ai_law = "ns2"`), its
/// multi-bit MI cap 1/16 (`xi_cap`, `vcp-src.cc` LF_BOUND) and ns-2's one timed segment per
/// RTT (`tcp.rtt_samples`).
const NS2_ROUTER: &str = "queue_term = \"ns2\"";
const NS2_FLOWS: &str = "\nparams = { ai_law = \"ns2\", xi_cap = 0.0625, tcp = { rtt_samples = \"once-per-rtt\" } }";
const NS2_VCP_FLOWS: &str = "\nparams = { ai_law = \"ns2\", tcp = { rtt_samples = \"once-per-rtt\" } }";

/// Issue 13's acceptance (MPCP §4.1, written before measuring) with DPCP run as the
/// reference code runs it: at least VCP's utilisation, VCP run either way, and no timeout.
#[test]
#[ignore = "shortfall: DPCP as the reference code runs it 0.909/0.989/0.959 (no timeout, no drop) vs VCP 0.933/0.963/0.988 (defaults) and 1.000/1.000/1.000 with 219/556/63 drops (the same reference profile)"]
fn dpcp_as_the_reference_code_runs_it_meets_vcp() {
    for d in DUMBBELLS {
        let (va, ..) = steady("vcp", d, "");
        let v = steady_routed("vcp", d, NS2_VCP_FLOWS, NS2_ROUTER);
        let p = steady_routed("dpcp", d, NS2_FLOWS, NS2_ROUTER);
        eprintln!("{d:?}: DPCP (reference profile) {p:?}; VCP (reference profile) {v:?}; VCP {va:.3}");
        assert!(p.0 >= v.0 && p.0 >= va, "{d:?}: DPCP {p:?} vs VCP {v:?} / {va:.3}");
        assert_eq!(p.1, 0, "{d:?}: DPCP {p:?}");
    }
}

/// What the reference profile does, pinned (module docs): DPCP takes no timeout and drops
/// nothing on any dumbbell and meets VCP's defaults at 400 ms, but stays below them at 300
/// and 900 ms (measured 0.909 / 0.989 / 0.959 against 0.933 / 0.963 / 0.988).
#[test]
fn dpcp_as_the_reference_code_runs_it_meets_vcp_at_400_ms_only() {
    for d in DUMBBELLS {
        let (va, ..) = steady("vcp", d, "");
        let p = steady_routed("dpcp", d, NS2_FLOWS, NS2_ROUTER);
        eprintln!("{d:?}: DPCP (reference profile) {p:?}; VCP {va:.3}");
        assert_eq!((p.1, p.3), (0, 0), "{d:?}: DPCP {p:?}");
        if d.2 == 400 {
            assert!(p.0 >= va, "{d:?}: {p:?} vs VCP {va:.3}");
        } else {
            assert!(
                p.0 < va,
                "{d:?}: {p:?} now meets VCP {va:.3}: un-ignore dpcp_as_the_reference_code_runs_it_meets_vcp"
            );
        }
    }
}
