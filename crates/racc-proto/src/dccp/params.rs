//! The `params` table of a DCCP CCID2 flow (RFC 4341; docs/PROTOCOLS.md §11 and §16).

use crate::params::{positive, ParamError};

/// Where the Ack Ratio R is kept (`ack_ratio_bounds`).
#[derive(serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum AckRatioBounds {
    /// 2 ≤ R ≤ cwnd: VCP-DCCP §2 ("ζ cannot be smaller than 2 and cannot exceed cwnd"), the
    /// bounds its analysis assumes; R = 1 while cwnd < 2, where both cannot hold.
    #[default]
    Seed,
    /// RFC 4341 §6.1.2 and Linux: 1 ≤ R ≤ ⌈cwnd/2⌉.
    Rfc,
}

/// The `params` table of a "dccp" flow (and the `dccp` sub-table of a "dccp-vcp" flow).
/// Times in seconds.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DccpParams {
    /// The Ack Ratio a connection starts with [RFC 4340 §11.3, VCP-DCCP §4: 2].
    pub ack_ratio: u16,
    /// Bounds on the Ack Ratio: "seed" (2 ≤ R ≤ cwnd, default) or "rfc" (1 ≤ R ≤ ⌈cwnd/2⌉).
    pub ack_ratio_bounds: AckRatioBounds,
    /// Change the Ack Ratio on congestion of the ACK path (RFC 4341 §6.1.2); off keeps R fixed
    /// within its bounds.
    pub ack_ratio_adjust: bool,
    /// A data packet is lost once this many packets sent after it are acknowledged
    /// [RFC 4341 §5: NUMDUPACK = 3].
    pub numdupack: u32,
    /// The receiver acknowledges data it has held this long without reaching the Ack Ratio, s:
    /// a deadlock guard when fewer than R packets are left in flight [reconstructed: 0.2 s].
    pub ack_timeout: f64,
    /// Data leaves ECN-capable, ECT(0) (RFC 4340 §12: the "ECN Incapable" feature is 0 by
    /// default). A DCCP/VCP sender writes the VCP code 01 instead.
    pub ecn_capable: bool,
    /// Initial window, packets; default RFC 4341 §5's min(4, max(2, ⌊4380/MSS⌋)). A flow's
    /// `initial_window` overrides it.
    pub iw: Option<u32>,
    /// RFC 6298 estimator: the RTO before any sample and its ceiling, s (the floor is the
    /// run's `min_rto`: RFC 4341 drops TCP's 1 s minimum).
    pub initial_rto: f64,
    pub max_rto: f64,
}

impl Default for DccpParams {
    fn default() -> DccpParams {
        DccpParams {
            ack_ratio: 2,
            ack_ratio_bounds: AckRatioBounds::Seed,
            ack_ratio_adjust: true,
            numdupack: 3,
            ack_timeout: 0.1,
            ecn_capable: true,
            iw: None,
            initial_rto: 1.0,
            max_rto: 60.0,
        }
    }
}

impl DccpParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.ack_ratio == 0 {
            return Err(ParamError::new("ack_ratio", "must be at least 1"));
        }
        if self.numdupack == 0 {
            return Err(ParamError::new("numdupack", "must be at least 1"));
        }
        positive("ack_timeout", self.ack_timeout)?;
        if self.iw == Some(0) {
            return Err(ParamError::new("iw", "must be at least 1 packet"));
        }
        positive("initial_rto", self.initial_rto)?;
        positive("max_rto", self.max_rto)?;
        Ok(())
    }

    /// The initial window for `mss`-byte payloads (RFC 4341 §5), unless `iw` is given.
    pub fn initial_window(&self, mss: u32) -> u32 {
        self.iw.unwrap_or_else(|| (4380 / mss.max(1)).clamp(2, 4))
    }
}
