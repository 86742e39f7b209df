//! VCP's window laws (VCP-DCCP App. A3–A5; docs/PROTOCOLS.md §2) as a plain type any transport can
//! drive: the TCP transport through [`super::VcpWindow`], DCCP's next. The window is in
//! packets; the caller owns it and hands it in.
//!
//! Per acknowledged packet (k per ACK), rtt the sender's smoothed RTT:
//! ```text
//! mi_step = (1+μ)^min(rtt/t_p, σ_MI) − 1                 A3
//! ai_step = α·min((rtt/t_p)², σ_AI)/cwnd                  A4 (`ai_law = "seed001"`;
//!           "ns2": the reference code's α·w·S(rtt/t_d)/cwnd, `ai_law.rs`)
//! code 01: cwnd += k·mi_step         code 10: cwnd += k·ai_step
//! code 11: now < hold_until → nothing; now < ai_until → cwnd += k·ai_step;
//!          else cwnd = max(1, β·cwnd) (A5), hold_until = now + md_hold, ai_until = hold_until + rtt
//! code 00: the path bleached the code: cwnd += k/cwnd (TCP congestion avoidance) [reconstructed]
//! ```

use super::ai_law::AiLaw;
use super::params::{MdHold, VcpParams};
use crate::packet::ecn;
use crate::time::{secs, Dur, Time};

/// A3: the window added per acknowledged packet in MI: (1+μ)^min(rtt/t_p, σ_MI) − 1.
#[inline]
pub fn mi_step(mu: f64, rtt_s: f64, t_p_s: f64, sigma_mi: f64) -> f64 {
    (1.0 + mu).powf((rtt_s / t_p_s).min(sigma_mi)) - 1.0
}

/// The MD hold of an episode: overload codes before `hold_until` are ignored, those before
/// `ai_until` give AI (VCP-DCCP App.).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MdEpisode {
    pub hold_until: Time,
    pub ai_until: Time,
}

/// VCP's MI/AI/MD laws with their MD episode.
#[derive(Clone, Debug)]
pub struct VcpLaws {
    mu: f64,
    alpha: f64,
    beta: f64,
    sigma_mi: f64,
    ai: AiLaw,
    t_p_s: f64,
    md_hold: MdHold,
    episode: MdEpisode,
    mds: u64,
}

impl VcpLaws {
    /// `p` must be valid.
    pub fn new(p: &VcpParams) -> VcpLaws {
        VcpLaws {
            mu: p.mu(),
            alpha: p.alpha,
            beta: p.beta,
            sigma_mi: p.sigma_mi,
            ai: p.ai(),
            t_p_s: p.t_p,
            md_hold: p.md_hold,
            episode: MdEpisode::default(),
            mds: 0,
        }
    }

    /// The routers' load-factor interval t_p, s.
    pub fn t_p_s(&self) -> f64 {
        self.t_p_s
    }

    /// Multiplicative decreases (A5) so far.
    pub fn md_count(&self) -> u64 {
        self.mds
    }

    pub fn episode(&self) -> MdEpisode {
        self.episode
    }

    /// Put back an episode (a spurious timeout's undo).
    pub fn restore_episode(&mut self, e: MdEpisode) {
        self.episode = e;
    }

    fn hold(&self, rtt_s: f64) -> Dur {
        match self.md_hold {
            MdHold::Tp => secs(self.t_p_s),
            MdHold::Rtt => secs(rtt_s),
            MdHold::TwoTpRtt => secs(2.0 * self.t_p_s + rtt_s),
            MdHold::Secs(s) => secs(s),
        }
    }

    /// The window (packets) after an ACK echoing `code` that reports `k` packets, at `now`
    /// with RTT `rtt_s`. At most one MD per ACK.
    pub fn on_code(&mut self, cwnd: f64, code: u8, k: f64, rtt_s: f64, now: Time) -> f64 {
        match code {
            ecn::ECT1 => cwnd + k * mi_step(self.mu, rtt_s, self.t_p_s, self.sigma_mi),
            ecn::ECT0 => cwnd + k * self.ai.step(self.alpha, rtt_s, self.t_p_s, cwnd),
            ecn::CE => {
                if now < self.episode.hold_until {
                    // The load factor still measures the load from before the MD.
                    cwnd
                } else if now < self.episode.ai_until {
                    // AI for one rtt after the hold (VCP-DCCP App.).
                    cwnd + k * self.ai.step(self.alpha, rtt_s, self.t_p_s, cwnd)
                } else {
                    self.mds += 1;
                    let hold_until = now.saturating_add(self.hold(rtt_s));
                    self.episode = MdEpisode { hold_until, ai_until: hold_until.saturating_add(secs(rtt_s)) };
                    (self.beta * cwnd).max(1.0) // A5
                }
            }
            // 00: the code was bleached on the path; behave as TCP congestion avoidance.
            _ => cwnd + k / cwnd,
        }
    }
}
