//! The equilibrium of VCP-DCCP's fluid model of DCCP/VCP (§3, Eqs. 1–9): N flows with the same
//! RTT through one VCP router, window dynamics ẇ_i = (F(ρ)·w_i + α)/R' (Eq. 3).
//!
//! ```text
//! R  = R_p + R_q + s/C                                       (the RTT, below Eq. 9)
//! w* = γ·(2C·(R_p + R_q) + (ζ+1)·s)/2 + N·α/h                Eq. 7 (all N windows)
//! w_i* = w*/N                                                Eq. 8
//! r_i* = w_i*/R = γC/N + (ζ−1)·s·γ/(2N·R) + α/(h·R)          Eq. 9
//! ```
//!
//! **Units of the last term.** The window here is in bits (Eq. 5 divides it by R' and by γC in
//! b/s), so Eqs. 7–9 hold only if α is in bits too. We use that reading, the one the paper's
//! number needs: α = 1 *bit* per RTT, α/(h·R) = 49.9 b/s at R ≈ 80 ms, and Eq. 9 gives the
//! paper's r* = 220.8 kb/s for the T3 setting. Read as VCP's α = 1 *packet* (s bits), the term
//! is 409 kb/s and N·r* would exceed C: the laws' α cannot be what Eq. 9 adds (docs/PROTOCOLS.md §2,
//! "units pitfall"). Either way r* ≈ γC/N, which is the rate the test holds racc to.

/// The parameters of Eqs. 7–9 (SI units: b/s, s, bits).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FluidParams {
    /// Number of flows N.
    pub flows: f64,
    /// Link capacity C, b/s.
    pub capacity_bps: f64,
    /// Round-trip propagation delay R_p, s.
    pub rtpd_s: f64,
    /// Queueing delay R_q, s (VCP-DCCP §4 estimates 20 ms for its T3 run).
    pub queue_delay_s: f64,
    /// VCP's target utilisation γ, AI step α (bits, see the module note) and h of F(x).
    pub gamma: f64,
    pub alpha_bits: f64,
    pub h: f64,
    /// Ack Ratio ζ.
    pub ack_ratio: f64,
    /// Packet size s, bits.
    pub packet_bits: f64,
}

impl FluidParams {
    /// VCP-DCCP §4's values for `flows` flows over `capacity_bps` at RTPD `rtpd_s`: γ 0.98,
    /// α 1, h 0.25, ζ 2, 1024-byte packets, R_q = 0.
    pub fn seed(flows: f64, capacity_bps: f64, rtpd_s: f64) -> FluidParams {
        FluidParams {
            flows,
            capacity_bps,
            rtpd_s,
            queue_delay_s: 0.0,
            gamma: 0.98,
            alpha_bits: 1.0,
            h: 0.25,
            ack_ratio: 2.0,
            packet_bits: 8.0 * 1024.0,
        }
    }
}

/// The equilibrium of Eqs. 7–9.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Equilibrium {
    /// R = R_p + R_q + s/C, s.
    pub rtt_s: f64,
    /// w*, the sum of the windows, bits (Eq. 7).
    pub total_window_bits: f64,
    /// w_i*, one flow's window, bits (Eq. 8) and packets.
    pub window_bits: f64,
    pub window_pkts: f64,
    /// r_i*, one flow's rate, b/s (Eq. 9).
    pub rate_bps: f64,
}

/// Eqs. 7–9 for `p`.
pub fn equilibrium(p: &FluidParams) -> Equilibrium {
    let (n, c, s) = (p.flows, p.capacity_bps, p.packet_bits);
    let rtt = p.rtpd_s + p.queue_delay_s + s / c;
    let total =
        p.gamma * (2.0 * c * (p.rtpd_s + p.queue_delay_s) + (p.ack_ratio + 1.0) * s) / 2.0 + n * p.alpha_bits / p.h;
    let w = total / n;
    Equilibrium { rtt_s: rtt, total_window_bits: total, window_bits: w, window_pkts: w / s, rate_bps: w / rtt }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// VCP-DCCP §4: "Using Equation (9), we can obtain the steady source sending rate of
    /// DCCP/VCP source with RTPD = 60 ms as r* = 220.8 Kbps" (N 200, T3, R_q ≈ 20 ms, ζ 2,
    /// 1024-byte packets). By hand: R = 0.08 + 8192/45e6 = 0.0801820 s; γC/N = 220 500;
    /// (ζ−1)sγ/(2NR) = 8028.16/32.0728 = 250.31; α/(hR) = 1/0.0200455 = 49.89 b/s.
    #[test]
    fn eq9_gives_the_papers_rate_for_the_t3_setting() {
        let p = FluidParams { queue_delay_s: 0.02, ..FluidParams::seed(200.0, 45e6, 0.06) };
        let e = equilibrium(&p);
        assert!((e.rtt_s - 0.080_182_04).abs() < 1e-8, "{}", e.rtt_s);
        let by_hand = 220_500.0 + 250.31 + 49.89;
        assert!((e.rate_bps - by_hand).abs() < 0.05, "{} vs {by_hand}", e.rate_bps);
        assert_eq!((e.rate_bps / 100.0).round() / 10.0, 220.8, "the paper's 220.8 kb/s");
        // Eq. 8 is Eq. 7 over N, and Eq. 9 is Eq. 8 over R.
        assert!((e.window_bits * 200.0 - e.total_window_bits).abs() < 1e-6);
        assert!((e.window_bits / e.rtt_s - e.rate_bps).abs() < 1e-6);
        // w_i* = (0.98·(7.2e6 + 3·8192)/2 + 200·4)/200 = 17 704.21 bits, 2.16 packets of 1024 bytes.
        assert!((e.window_pkts - 17_704.211 / 8192.0).abs() < 1e-3, "{}", e.window_pkts);
    }

    /// Eq. 9's trends as §3 states them: the rate falls with N and the RTT and rises with C,
    /// ζ, s and γ.
    #[test]
    fn eq9_moves_as_section_3_says() {
        let base = FluidParams::seed(20.0, 10e6, 0.1);
        let r = |p: FluidParams| equilibrium(&p).rate_bps;
        let r0 = r(base);
        assert!(r(FluidParams { flows: 40.0, ..base }) < r0);
        assert!(r(FluidParams { rtpd_s: 0.2, ..base }) < r0);
        assert!(r(FluidParams { capacity_bps: 20e6, ..base }) > r0);
        assert!(r(FluidParams { ack_ratio: 4.0, ..base }) > r0);
        assert!(r(FluidParams { packet_bits: 16_000.0, ..base }) > r0);
        assert!(r(FluidParams { gamma: 0.99, ..base }) > r0);
    }
}
