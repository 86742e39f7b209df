//! The sender's decoder [MPCP §3.3, §3.4; details reconstructed, docs/PROTOCOLS.md §3]: turns
//! the stream of echoed (code, position) pairs into what the window law needs.
//!
//! - The saved LF starts at 01 01 (low load). An echoed MSP replaces the saved MSP, sets the
//!   rest to 11 (the worst level of that zone) and regulates at once (one RTT of response
//!   instead of two); an echoed LSP in sequence completes the LF and refines.
//! - Exceptions [MPCP §3.4]: two MSPs in a row → the larger MSP with LSP 11; an LSP that
//!   follows no MSP → ignored, the LF falls back to (MSP, 11). `exception_limit` (3) echoes of
//!   the same position in a row, i.e. `exception_limit − 1` back-to-back exceptions → VCP mode:
//!   the sender sends every packet as an MSP and reads each echo as a VCP code (MD 0.875).
//!   After `resume_after` RTTs it retries chains; after `max_resumes` failed retries it stays
//!   in VCP mode (a lossy path) [reconstructed defaults 8 RTT, 3].
//! - MD [reconstructed]: the first overload echo of an episode records cwnd_pre and applies
//!   the factor of the LF known so far (an MSP alone gives 11 11: 0.43); the chain's following
//!   digits, in sequence and within the hold, set cwnd = max(1, β_k·cwnd_pre). VCP's hold and
//!   AI-for-one-rtt rules
//!   (docs/PROTOCOLS.md §2, VCP-DCCP App.) frame the episode: overload within `md_hold` of the MD
//!   does nothing, then AI for one rtt, then a new MD.
//!
//! n-packet generalisation [reconstructed]: an echo is *in sequence* when its position follows
//! the previous echo's (mod n); every other echo is an exception. For n = 2 an exception is
//! exactly "the same position twice in a row". For n ≥ 3 an exception either jumps ahead (a
//! gap: the positions in between were lost or are late) or brings one of the positions the
//! last gap jumped over: a *late* echo, reordering rather than loss. Late echoes count as
//! exceptions but neither extend the run toward the fallback nor move the sequence on, so one
//! swapped pair (0 2 1) never sends a chain sender to VCP mode: MPCP §3.4 wants
//! reordering (multipath) tolerated. A late MSP starts its chain (MSP, 11, …); a late later
//! digit is ignored. For n = 2 a late echo is always in sequence, so DPCP is unchanged.
//!
//! Decisions no seed fixes (stated here so tests can hold them):
//! - after a resume, exceptions are not counted until the first in-sequence non-MSP echo,
//!   because the echoes of packets sent in VCP mode are all MSPs;
//! - a retry *fails* when it falls back within `resume_after` RTTs of resuming; a retry that
//!   lasts longer resets the count;
//! - in VCP mode echoes of non-MSP positions (chain packets sent before the fallback) are
//!   ignored; echo code 00 (no VCP-capable path) carries no information and is ignored.

use super::levels::{Lf, Zone, VCP_BETA};
use super::ordering::Position;
use crate::params::ParamError;
use crate::time::{Dur, Time};

/// Decoder settings (docs/PROTOCOLS.md §16 `dpcp`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecoderParams {
    /// Chain length n (2 = DPCP, 3 = TPCP).
    pub n: u8,
    /// Same-position echoes in a row that switch to VCP mode [seed: 3].
    pub exception_limit: u32,
    /// RTTs in VCP mode before retrying chains [reconstructed: 8].
    pub resume_after: f64,
    /// Failed retries after which VCP mode is permanent [reconstructed: 3].
    pub max_resumes: u32,
    /// Hold after an MD during which further overload does nothing [checked: t_p].
    pub md_hold: Dur,
    /// Only an MSP echo starts an MD; a later digit only refines its own chain's MD
    /// (`md_on_msp_only`, docs/PROTOCOLS.md §3). Off: any overload echo past the episode cuts.
    pub md_on_msp_only: bool,
    /// MD factors of the overload levels 11 01, 11 10, 11 11 (`md_factors`) [MPCP
    /// Table 1: 0.875, 0.6, 0.43].
    pub md_factors: [f64; 3],
}

impl DecoderParams {
    pub fn dpcp(md_hold: Dur) -> DecoderParams {
        DecoderParams {
            n: 2,
            exception_limit: 3,
            resume_after: 8.0,
            max_resumes: 3,
            md_hold,
            md_on_msp_only: false,
            md_factors: super::levels::MD_FACTORS,
        }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        if !(1..=super::levels::MAX_CHAIN).contains(&self.n) {
            return Err(ParamError::new("chain", format!("must be 1 to 4, got {}", self.n)));
        }
        if self.exception_limit < 2 {
            return Err(ParamError::new("exception_limit", "must be at least 2"));
        }
        if !(self.resume_after.is_finite() && self.resume_after >= 0.0) {
            return Err(ParamError::new(
                "resume_after",
                format!("must be a finite number >= 0, got {}", self.resume_after),
            ));
        }
        if let Some(b) = self.md_factors.iter().find(|b| !(**b > 0.0 && **b < 1.0)) {
            return Err(ParamError::new("md_factors", format!("each must be in (0, 1), got {b}")));
        }
        Ok(())
    }
}

/// What the window law does with one ACK's echo.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// No information (code 00, or an echo VCP mode ignores).
    None,
    /// Low or high zone: grow per acknowledged packet from `lf`'s upper bound; `vcp` = the
    /// sender is in VCP mode (VCP's pure MI / pure AI).
    Grow { lf: Lf, vcp: bool },
    /// Overload within the hold after an MD: nothing.
    Hold,
    /// Overload after the hold, within one rtt: AI (VCP-DCCP App.).
    Ai,
    /// Multiplicative decrease: set cwnd to this many packets.
    SetCwnd(f64),
}

/// Sending mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// n-packet chains.
    Chains,
    /// VCP mode until `resume_at`.
    Vcp { resume_at: Time },
    /// VCP mode for good (too many failed retries).
    VcpForever,
}

/// Counters, for tests and metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecoderStats {
    pub exceptions: u64,
    pub fallbacks: u64,
    pub resumes: u64,
    pub mds: u64,
    pub refinements: u64,
}

/// The running MD episode: what a spurious-RTO undo puts back (an MD that started on the
/// timeout's one-packet window cut nothing worth keeping).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Episode {
    hold_until: Time,
    ai_until: Time,
    cwnd_pre: f64,
    refine_next: Option<u8>,
}

/// The sender's decoder. No allocation; O(1) per echo.
#[derive(Clone, Debug)]
pub struct Decoder {
    p: DecoderParams,
    lf: Lf,
    /// Position of the previous echo (`None` at the start and after a resume).
    last: Option<u8>,
    /// Back-to-back exceptions, late echoes not counted.
    run: u32,
    /// Positions the last gap jumped over (bit k = position k): their echoes are late.
    skipped: u8,
    mode: Mode,
    warmup: bool,
    resumed_at: Option<Time>,
    failed_retries: u32,
    hold_until: Time,
    ai_until: Time,
    cwnd_pre: f64,
    /// The position whose in-sequence echo refines the running MD.
    refine_next: Option<u8>,
    stats: DecoderStats,
}

impl Decoder {
    pub fn new(p: DecoderParams) -> Decoder {
        let n = p.n.clamp(1, super::levels::MAX_CHAIN);
        Decoder {
            p: DecoderParams { n, ..p },
            lf: Lf::lowest(n),
            last: None,
            run: 0,
            skipped: 0,
            mode: Mode::Chains,
            warmup: false,
            resumed_at: None,
            failed_retries: 0,
            hold_until: 0,
            ai_until: 0,
            cwnd_pre: 0.0,
            refine_next: None,
            stats: DecoderStats::default(),
        }
    }

    /// Change the MD hold (a window whose hold is one RTT updates it as the RTT moves).
    pub fn set_md_hold(&mut self, hold: Dur) {
        self.p.md_hold = hold;
    }

    /// The saved LF.
    pub fn lf(&self) -> Lf {
        self.lf
    }

    /// The MD factor of the saved level under this decoder's `md_factors` (`None` outside the
    /// overload zone).
    pub fn md_factor(&self) -> Option<f64> {
        self.lf.md_factor_of(&self.p.md_factors)
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Chain length n.
    pub fn n(&self) -> u8 {
        self.p.n
    }

    /// Whether `now` falls in the running MD episode (its hold or the AI-for-one-rtt after
    /// it), where overload does not cut again (docs/PROTOCOLS.md §2).
    #[inline]
    pub fn in_episode(&self, now: Time) -> bool {
        now < self.ai_until
    }

    /// An MD the echoes did not ask for (DCP-EW's loss-triggered MD, DCP-EW §III.D) is the
    /// episode's MD (docs/PROTOCOLS.md §4 [reconstructed]): the hold and the AI-for-one-rtt run from
    /// `now`, as after an echo's MD. `cwnd` = the window before the cut. No chain digit
    /// refines it: the factor came from the loss response, not from this chain.
    pub fn note_md(&mut self, now: Time, rtt: Dur, cwnd: f64) {
        self.start_episode(now, rtt, cwnd);
        self.refine_next = None;
    }

    /// The MD episode as it stands.
    pub fn episode(&self) -> Episode {
        Episode {
            hold_until: self.hold_until,
            ai_until: self.ai_until,
            cwnd_pre: self.cwnd_pre,
            refine_next: self.refine_next,
        }
    }

    /// Put back an episode saved by [`Decoder::episode`].
    pub fn restore_episode(&mut self, e: Episode) {
        self.hold_until = e.hold_until;
        self.ai_until = e.ai_until;
        self.cwnd_pre = e.cwnd_pre;
        self.refine_next = e.refine_next;
    }

    fn start_episode(&mut self, now: Time, rtt: Dur, cwnd: f64) {
        self.cwnd_pre = cwnd;
        self.hold_until = now.saturating_add(self.p.md_hold);
        self.ai_until = self.hold_until.saturating_add(rtt);
    }

    pub fn stats(&self) -> DecoderStats {
        self.stats
    }

    /// Whether the next packet goes out as part of a chain (false in VCP mode). Resumes
    /// chains when `resume_after` has passed; the caller restarts its sequencer then.
    pub fn chains(&mut self, now: Time) -> bool {
        if let Mode::Vcp { resume_at } = self.mode {
            if now >= resume_at {
                self.mode = Mode::Chains;
                self.last = None;
                self.run = 0;
                self.skipped = 0;
                self.warmup = true;
                self.resumed_at = Some(now);
                self.stats.resumes += 1;
            }
        }
        self.mode == Mode::Chains
    }

    fn fall_back(&mut self, now: Time, rtt: Dur) {
        self.stats.fallbacks += 1;
        let span = (self.p.resume_after * rtt as f64) as Dur;
        if let Some(t) = self.resumed_at.take() {
            if now.saturating_sub(t) < span {
                self.failed_retries += 1;
            } else {
                self.failed_retries = 0;
            }
        }
        self.mode = if self.failed_retries >= self.p.max_resumes {
            Mode::VcpForever
        } else {
            Mode::Vcp { resume_at: now.saturating_add(span) }
        };
        self.refine_next = None;
    }

    /// One ACK's echo: its 2-bit code, the position the ACK carried, the sender's smoothed RTT
    /// (ns, > 0) and cwnd (packets, used only to record cwnd_pre).
    pub fn on_echo(&mut self, now: Time, code: u8, pos: Position, rtt: Dur, cwnd: f64) -> Action {
        let code = code & 0b11;
        let n = self.p.n;
        if code == 0 || pos.0 >= n {
            return Action::None;
        }
        self.chains(now);
        if self.mode != Mode::Chains {
            if !pos.is_msp() {
                return Action::None;
            }
            self.lf = Lf::zone_worst(n, code);
            return self.regulate(now, 0, rtt, cwnd, true, false);
        }
        let k = pos.0;
        let in_seq = match self.last {
            None => k == 0,
            Some(l) => k == (l + 1) % n,
        };
        if in_seq {
            self.lf = if k == 0 { Lf::zone_worst(n, code) } else { self.lf.with_digit(k, code) };
            self.run = 0;
            self.skipped = 0;
            if k != 0 {
                self.warmup = false;
            }
        } else if self.warmup && k == 0 {
            // Echoes of packets sent in VCP mode: fresh VCP codes, not exceptions.
            self.lf = Lf::zone_worst(n, code);
        } else if self.skipped & (1 << k) != 0 {
            // Late: a position the last gap jumped over (module docs). The sequence stays where
            // the gap left it.
            self.stats.exceptions += 1;
            self.skipped &= !(1 << k);
            if k == 0 {
                self.lf = Lf::zone_worst(n, code);
            }
            return self.regulate(now, k, rtt, cwnd, false, false);
        } else {
            // The very first echo has nothing to repeat: not an exception, just ignored.
            if let Some(l) = self.last {
                self.stats.exceptions += 1;
                if !self.warmup {
                    self.run += 1;
                }
                // The positions from the expected one up to k (a repeat: all but k).
                self.skipped = 0;
                let mut p = (l + 1) % n;
                while p != k {
                    self.skipped |= 1 << p;
                    p = (p + 1) % n;
                }
            }
            self.lf = if k != 0 {
                // An LSP that follows no MSP: ignore it, keep (MSP, 11).
                self.lf.with_tail_worst(1)
            } else if self.last == Some(0) {
                // Two MSPs in a row: the larger MSP, LSP 11.
                Lf::zone_worst(n, self.lf.digit(0).max(code))
            } else {
                // A new chain after an incomplete one (n ≥ 3).
                Lf::zone_worst(n, code)
            };
        }
        self.last = Some(k);
        // Only the chain's next digit, and only while the MD's hold lasts: a digit that comes a
        // whole RTT later (a window of one packet) is news, not a refinement.
        let refine = in_seq && self.refine_next == Some(k) && now < self.hold_until;
        if self.run >= self.p.exception_limit - 1 {
            self.fall_back(now, rtt);
            return self.regulate(now, k, rtt, cwnd, true, false);
        }
        self.regulate(now, k, rtt, cwnd, false, refine)
    }

    fn regulate(&mut self, now: Time, k: u8, rtt: Dur, cwnd: f64, vcp: bool, refine: bool) -> Action {
        let lf = self.lf;
        if lf.zone() != Zone::Over {
            self.refine_next = None;
            return Action::Grow { lf, vcp };
        }
        let n = self.p.n;
        let beta = if vcp { VCP_BETA } else { lf.md_factor_of(&self.p.md_factors).unwrap_or(VCP_BETA) };
        if refine {
            // The chain's next digit refines the episode's MD (MPCP §3.3 "finer adjustment").
            self.refine_next = (k + 1 < n).then_some(k + 1);
            self.stats.refinements += 1;
            return Action::SetCwnd((beta * self.cwnd_pre).max(1.0));
        }
        self.refine_next = None;
        if now < self.hold_until {
            return Action::Hold;
        }
        if now < self.ai_until {
            return Action::Ai;
        }
        if self.p.md_on_msp_only && k != 0 && !vcp {
            // The chain's MSP was echoed within the episode just ended (or was lost): this
            // digit completes a code whose overload the episode already answered. MPCP
            // §3.3: the MSP regulates, the LSP refines; a chain straddling the episode's end
            // reports load from before the MD (its MSP crossed the router up to t_p before
            // the LSP took its digit). No MD, no growth.
            return Action::Hold;
        }
        self.start_episode(now, rtt, cwnd);
        self.refine_next = (!vcp && k + 1 < n).then_some(k + 1);
        self.stats.mds += 1;
        Action::SetCwnd((beta * cwnd).max(1.0))
    }
}

#[cfg(test)]
mod chains_of_n;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NS_PER_MS;

    const MS: Time = NS_PER_MS;
    const RTT: Dur = 100 * MS;
    const M: Position = Position::MSP;
    const L: Position = Position::LSP;

    fn dec() -> Decoder {
        Decoder::new(DecoderParams::dpcp(200 * MS))
    }

    fn grow(m: u8, l: u8) -> Action {
        Action::Grow { lf: Lf::dpcp(m, l), vcp: false }
    }

    #[test]
    fn msp_decides_at_once_lsp_refines() {
        let mut d = dec();
        assert_eq!(d.lf(), Lf::dpcp(0b01, 0b01), "saved LF starts at 01 01");
        assert_eq!(d.on_echo(0, 0b10, M, RTT, 10.0), grow(0b10, 0b11), "MSP alone: worst level of the zone");
        assert_eq!(d.on_echo(1, 0b01, L, RTT, 10.0), grow(0b10, 0b01));
        assert_eq!(d.on_echo(2, 0b01, M, RTT, 10.0), grow(0b01, 0b11), "a new MSP replaces the LSP by 11");
        assert_eq!(d.on_echo(3, 0b10, L, RTT, 10.0), grow(0b01, 0b10));
        assert_eq!(d.on_echo(4, 0b00, M, RTT, 10.0), Action::None, "no code: nothing");
        assert_eq!(d.lf(), Lf::dpcp(0b01, 0b10));
        assert_eq!(d.stats().exceptions, 0);
    }

    #[test]
    fn reordered_and_lost_msp_lsp() {
        // A lone LSP first: ignored, (01, 11); nothing to repeat, so not an exception.
        let mut d = dec();
        assert_eq!(d.on_echo(0, 0b01, L, RTT, 10.0), grow(0b01, 0b11));
        assert_eq!(d.stats().exceptions, 0);
        // Lost LSP: two MSPs in a row → the larger MSP with LSP 11.
        let mut d = dec();
        d.on_echo(0, 0b10, M, RTT, 10.0);
        assert_eq!(d.on_echo(1, 0b01, M, RTT, 10.0), grow(0b10, 0b11));
        assert_eq!(d.on_echo(2, 0b01, L, RTT, 10.0), grow(0b10, 0b01), "then the chain's LSP refines");
        // Lost MSP: M L [M lost] L → the second LSP is ignored, LF back to (MSP, 11).
        let mut d = dec();
        d.on_echo(0, 0b10, M, RTT, 10.0);
        d.on_echo(1, 0b01, L, RTT, 10.0);
        assert_eq!(d.on_echo(2, 0b10, L, RTT, 10.0), grow(0b10, 0b11));
        // Reordered chain: M1 L1 L2 M2 → L2 ignored, then M2 (in sequence after an LSP).
        assert_eq!(d.on_echo(3, 0b01, M, RTT, 10.0), grow(0b01, 0b11));
        assert_eq!(d.on_echo(4, 0b01, L, RTT, 10.0), grow(0b01, 0b01));
        assert_eq!((d.stats().exceptions, d.mode()), (1, Mode::Chains));
    }

    #[test]
    fn three_same_positions_fall_back_to_vcp_then_resume() {
        let mut d = dec();
        d.on_echo(0, 0b01, M, RTT, 10.0);
        d.on_echo(MS, 0b01, M, RTT, 10.0); // exception 1
        assert!(d.chains(MS));
        // Third MSP in a row: VCP mode, for resume_after = 8 RTTs.
        let a = d.on_echo(2 * MS, 0b01, M, RTT, 10.0);
        assert_eq!(a, Action::Grow { lf: Lf::dpcp(0b01, 0b11), vcp: true });
        assert_eq!(d.mode(), Mode::Vcp { resume_at: 2 * MS + 8 * RTT });
        assert!(!d.chains(3 * MS));
        // In VCP mode: MSP echoes are VCP codes, LSP echoes are ignored, MD is VCP's 0.875.
        assert_eq!(d.on_echo(3 * MS, 0b11, L, RTT, 10.0), Action::None);
        assert_eq!(d.on_echo(3 * MS, 0b10, M, RTT, 10.0), Action::Grow { lf: Lf::dpcp(0b10, 0b11), vcp: true });
        assert_eq!(d.on_echo(4 * MS, 0b11, M, RTT, 40.0), Action::SetCwnd(35.0));
        // Three LSPs in a row would do the same (checked on a fresh decoder).
        let mut e = dec();
        for t in 0..3 {
            e.on_echo(t, 0b01, L, RTT, 10.0);
        }
        assert_eq!(e.stats().fallbacks, 1);
        // M M L L is two separate exceptions: no fallback.
        let mut e = dec();
        for (t, p) in [M, M, L, L, M, L].into_iter().enumerate() {
            e.on_echo(t as Time, 0b01, p, RTT, 10.0);
        }
        assert_eq!((e.stats().exceptions, e.stats().fallbacks), (2, 0));
        // Recovery: chains again after 8 RTTs; echoes of VCP-mode packets (all MSPs) do not
        // count until the first in-sequence LSP.
        let t0 = 2 * MS + 8 * RTT;
        assert!(!d.chains(t0 - 1));
        assert!(d.chains(t0));
        for i in 0..5 {
            d.on_echo(t0 + i, 0b01, M, RTT, 10.0);
        }
        assert_eq!((d.mode(), d.stats().resumes), (Mode::Chains, 1));
        assert_eq!(d.on_echo(t0 + 6, 0b10, L, RTT, 10.0), grow(0b01, 0b10));
        assert_eq!(d.on_echo(t0 + 7, 0b10, M, RTT, 10.0), grow(0b10, 0b11));
        assert_eq!(d.on_echo(t0 + 8, 0b01, L, RTT, 10.0), grow(0b10, 0b01));
        assert_eq!(d.stats().fallbacks, 1);
    }

    /// Fall back from chain mode at `t` (three MSPs in a row, no warm-up pending).
    fn force_fallback(d: &mut Decoder, t: Time) {
        d.on_echo(t, 0b01, L, RTT, 10.0); // clears any warm-up (in sequence or not)
        d.on_echo(t, 0b01, M, RTT, 10.0);
        d.on_echo(t, 0b01, L, RTT, 10.0);
        for _ in 0..3 {
            d.on_echo(t, 0b01, M, RTT, 10.0);
        }
        assert!(matches!(d.mode(), Mode::Vcp { .. } | Mode::VcpForever), "{:?}", d.mode());
    }

    #[test]
    fn max_resumes_failed_retries_then_vcp_for_good() {
        let mut d = dec();
        let mut t = 0;
        force_fallback(&mut d, t);
        for retry in 1..=3 {
            t += 8 * RTT;
            assert!(d.chains(t), "retry {retry}");
            t += RTT;
            force_fallback(&mut d, t); // fails within 8 RTTs
        }
        assert_eq!(d.mode(), Mode::VcpForever);
        assert!(!d.chains(t + 1000 * RTT));
        assert_eq!((d.stats().resumes, d.stats().fallbacks), (3, 4));
        // A retry that lasts beyond resume_after resets the count.
        let mut d = dec();
        force_fallback(&mut d, 0);
        t = 8 * RTT;
        assert!(d.chains(t));
        t += RTT;
        force_fallback(&mut d, t); // failed 1
        t += 8 * RTT;
        assert!(d.chains(t));
        t += 20 * RTT;
        force_fallback(&mut d, t); // lasted: count back to 0
        for _ in 0..2 {
            t += 8 * RTT;
            assert!(d.chains(t));
            t += RTT;
            force_fallback(&mut d, t); // failed 1, 2
        }
        assert!(matches!(d.mode(), Mode::Vcp { .. }), "2 failed retries so far: {:?}", d.mode());
        // max_resumes = 0: the first fallback is for good.
        let mut d = Decoder::new(DecoderParams { max_resumes: 0, ..DecoderParams::dpcp(200 * MS) });
        force_fallback(&mut d, 0);
        assert_eq!(d.mode(), Mode::VcpForever);
    }

    #[test]
    fn md_episode_first_msp_then_lsp_refines_hold_ai() {
        for (lsp, beta) in [(0b01, 0.875), (0b10, 0.6), (0b11, 0.43)] {
            let mut d = dec();
            assert_eq!(d.on_echo(0, 0b11, M, RTT, 100.0), Action::SetCwnd(43.0), "MSP 11 alone: 0.43");
            assert_eq!(d.on_echo(MS, lsp, L, RTT, 43.0), Action::SetCwnd(beta * 100.0), "LSP {lsp:02b}");
            // Within the hold (t_p = 200 ms): nothing; then AI for one rtt; then a new MD.
            assert_eq!(d.on_echo(100 * MS, 0b11, M, RTT, 50.0), Action::Hold);
            assert_eq!(d.on_echo(101 * MS, 0b01, L, RTT, 50.0), Action::Hold, "LSP of a later chain: no refinement");
            assert_eq!(d.on_echo(200 * MS, 0b11, M, RTT, 50.0), Action::Ai);
            assert_eq!(d.on_echo(299 * MS, 0b11, L, RTT, 50.0), Action::Ai);
            assert_eq!(d.on_echo(300 * MS, 0b11, M, RTT, 50.0), Action::SetCwnd(21.5));
            assert_eq!(d.stats().mds, 2);
            assert_eq!(d.stats().refinements, 1);
        }
        // Lost LSP: the MSP's 0.43 stands (the next MSP falls in the hold).
        let mut d = dec();
        assert_eq!(d.on_echo(0, 0b11, M, RTT, 100.0), Action::SetCwnd(43.0));
        assert_eq!(d.on_echo(MS, 0b11, M, RTT, 43.0), Action::Hold);
        assert_eq!(d.on_echo(2 * MS, 0b01, L, RTT, 43.0), Action::Hold, "belongs to the second chain");
        // Low and high echoes keep acting during the hold.
        assert_eq!(d.on_echo(3 * MS, 0b10, M, RTT, 43.0), grow(0b10, 0b11));
        // cwnd never below 1 packet.
        let mut d = dec();
        assert_eq!(d.on_echo(0, 0b11, M, RTT, 1.5), Action::SetCwnd(1.0));
        assert_eq!(d.on_echo(1, 0b11, L, RTT, 1.0), Action::SetCwnd(1.0));
        // An episode that starts at an LSP (its MSP fell in the AI period) uses the full LF.
        let mut d = dec();
        d.on_echo(0, 0b11, M, RTT, 100.0);
        d.on_echo(1, 0b11, L, RTT, 43.0);
        assert_eq!(d.on_echo(250 * MS, 0b11, M, RTT, 43.0), Action::Ai);
        assert_eq!(d.on_echo(300 * MS, 0b01, L, RTT, 40.0), Action::SetCwnd(35.0));
    }

    /// `md_on_msp_only`: the same straddling chain (MSP in the AI period, LSP after it) starts
    /// no episode: the LSP neither cuts nor grows; the next chain's MSP cuts as usual. Its
    /// refinement within the hold is unchanged.
    #[test]
    fn md_on_msp_only_a_straddling_lsp_does_not_cut() {
        let mut d = Decoder::new(DecoderParams { md_on_msp_only: true, ..DecoderParams::dpcp(200 * MS) });
        assert_eq!(d.on_echo(0, 0b11, M, RTT, 100.0), Action::SetCwnd(43.0));
        assert_eq!(d.on_echo(1, 0b10, L, RTT, 43.0), Action::SetCwnd(60.0), "refined: 0.6 · 100");
        assert_eq!(d.on_echo(250 * MS, 0b11, M, RTT, 60.0), Action::Ai);
        assert_eq!(d.on_echo(300 * MS, 0b01, L, RTT, 60.0), Action::Hold, "the code's MSP was answered");
        assert_eq!(d.on_echo(301 * MS, 0b11, M, RTT, 60.0), Action::SetCwnd(0.43 * 60.0), "a new MSP cuts");
        assert_eq!(d.on_echo(302 * MS, 0b01, L, RTT, 25.8), Action::SetCwnd(0.875 * 60.0));
        assert_eq!(d.stats().mds, 2);
        // A lone LSP after the episode (its MSP lost) with a saved overload MSP: no cut either.
        let mut d = Decoder::new(DecoderParams { md_on_msp_only: true, ..DecoderParams::dpcp(200 * MS) });
        d.on_echo(0, 0b11, M, RTT, 100.0);
        d.on_echo(1, 0b11, L, RTT, 43.0);
        assert_eq!(d.on_echo(400 * MS, 0b11, L, RTT, 43.0), Action::Hold);
        assert_eq!(d.stats().mds, 1);
    }

    /// `md_factors` replaces Table 1's cuts level by level: with VCP's 0.875 at every level an
    /// MSP 11 cuts 100 → 87.5 at once and its LSP 10 refines to 0.875 · 100, not 0.6 · 100;
    /// a factor outside (0, 1) is refused under its key.
    #[test]
    fn md_factors_replace_table_1s_cuts() {
        let p = DecoderParams { md_factors: [0.875, 0.7, 0.5], ..DecoderParams::dpcp(200 * MS) };
        let mut d = Decoder::new(p);
        assert_eq!(d.on_echo(0, 0b11, M, RTT, 100.0), Action::SetCwnd(50.0), "MSP alone: 11 11's factor");
        assert_eq!(d.md_factor(), Some(0.5));
        assert_eq!(d.on_echo(1, 0b10, L, RTT, 50.0), Action::SetCwnd(70.0), "refined: 11 10's factor · 100");
        assert_eq!(d.md_factor(), Some(0.7));
        let mut d = Decoder::new(DecoderParams { md_factors: [0.875; 3], ..DecoderParams::dpcp(200 * MS) });
        assert_eq!(d.on_echo(0, 0b11, M, RTT, 100.0), Action::SetCwnd(87.5));
        assert_eq!(d.on_echo(1, 0b10, L, RTT, 87.5), Action::SetCwnd(87.5));
        assert_eq!(DecoderParams::dpcp(0).md_factors, [0.875, 0.6, 0.43], "MPCP Table 1");
        for bad in [[0.875, 1.0, 0.43], [0.0, 0.6, 0.43], [0.875, 0.6, f64::NAN]] {
            let e = DecoderParams { md_factors: bad, ..DecoderParams::dpcp(0) }.validate().unwrap_err();
            assert_eq!(e.key, "md_factors", "{bad:?}");
        }
    }

    #[test]
    fn a_noted_md_starts_the_episode_like_an_echo_md() {
        // A loss MD at 1 s (hold 200 ms, rtt 100 ms): overload within the hold does nothing,
        // then AI for one rtt, then the next MD; an LSP right after never refines it.
        let mut d = dec();
        d.on_echo(0, 0b11, M, RTT, 100.0);
        assert!(d.in_episode(299 * MS) && !d.in_episode(300 * MS));
        d.note_md(1000 * MS, RTT, 80.0);
        assert!(d.in_episode(1000 * MS));
        assert_eq!(d.on_echo(1001 * MS, 0b11, M, RTT, 40.0), Action::Hold);
        assert_eq!(d.on_echo(1002 * MS, 0b11, L, RTT, 40.0), Action::Hold, "no refinement of a loss MD");
        assert_eq!(d.on_echo(1200 * MS, 0b11, M, RTT, 40.0), Action::Ai);
        assert!(!d.in_episode(1300 * MS));
        let Action::SetCwnd(c) = d.on_echo(1300 * MS, 0b11, L, RTT, 40.0) else { panic!("an MD after hold + rtt") };
        assert!((c - 0.43 * 40.0).abs() < 1e-9, "{c}");
        assert_eq!(d.stats().mds, 2, "echo MDs only");
    }

    #[test]
    fn tpcp_chains_of_three() {
        let p = DecoderParams { n: 3, ..DecoderParams::dpcp(200 * MS) };
        let mut d = Decoder::new(p);
        let g = |x: u8| Action::Grow { lf: Lf::from_packed(3, x), vcp: false };
        assert_eq!(d.lf().packed(), 0b01_01_01);
        assert_eq!(d.on_echo(0, 0b10, Position(0), RTT, 10.0), g(0b10_11_11));
        assert_eq!(d.on_echo(1, 0b01, Position(1), RTT, 10.0), g(0b10_01_11));
        assert_eq!(d.on_echo(2, 0b10, Position(2), RTT, 10.0), g(0b10_01_10));
        // Position 2 lost: M L1 M → a new chain, one exception.
        d.on_echo(3, 0b01, Position(0), RTT, 10.0);
        d.on_echo(4, 0b01, Position(1), RTT, 10.0);
        assert_eq!(d.on_echo(5, 0b01, Position(0), RTT, 10.0), g(0b01_11_11));
        assert_eq!(d.stats().exceptions, 1);
        // Skipped position: M [L1 lost] L2 → ignored, (MSP, 11, 11).
        d.on_echo(6, 0b10, Position(1), RTT, 10.0);
        d.on_echo(7, 0b10, Position(2), RTT, 10.0);
        assert_eq!(d.on_echo(8, 0b01, Position(0), RTT, 10.0), g(0b01_11_11));
        assert_eq!(d.on_echo(9, 0b01, Position(2), RTT, 10.0), g(0b01_11_11));
        assert_eq!((d.stats().exceptions, d.stats().fallbacks), (2, 0));
        // Two out-of-sequence echoes back to back (the n = 3 reading of "three in a row").
        assert_eq!(
            d.on_echo(10, 0b01, Position(2), RTT, 10.0),
            Action::Grow { lf: Lf::from_packed(3, 0b01_11_11), vcp: true }
        );
        assert_eq!(d.stats().fallbacks, 1);
        // MD: the MSP applies 0.43, L1 refines by the parent level, L2 keeps that factor.
        let mut d = Decoder::new(p);
        assert_eq!(d.on_echo(0, 0b11, Position(0), RTT, 100.0), Action::SetCwnd(43.0));
        assert_eq!(d.on_echo(1, 0b01, Position(1), RTT, 43.0), Action::SetCwnd(87.5));
        assert_eq!(d.on_echo(2, 0b10, Position(2), RTT, 87.5), Action::SetCwnd(87.5));
        assert_eq!(d.on_echo(3, 0b11, Position(0), RTT, 87.5), Action::Hold);
        assert_eq!(d.stats().refinements, 2);
    }

    #[test]
    fn validation() {
        assert_eq!(DecoderParams::dpcp(0).validate(), Ok(()));
        let bad = |p: DecoderParams| p.validate().unwrap_err().key;
        assert_eq!(bad(DecoderParams { n: 5, ..DecoderParams::dpcp(0) }), "chain");
        assert_eq!(bad(DecoderParams { exception_limit: 1, ..DecoderParams::dpcp(0) }), "exception_limit");
        assert_eq!(bad(DecoderParams { resume_after: f64::NAN, ..DecoderParams::dpcp(0) }), "resume_after");
    }
}
