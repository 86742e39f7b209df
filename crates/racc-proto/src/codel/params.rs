//! The `router_params` of a "codel" port (RFC 8289), with the RFC's defaults.

use crate::params::{positive, ParamError};
use crate::time::{secs, Time};

/// MAXPACKET where neither the scenario nor the port gives a packet size: an Ethernet MTU.
pub const DEFAULT_MTU: u32 = 1500;

/// CoDel's settings. Times in seconds, as every racc scenario writes them.
#[derive(serde::Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CodelParams {
    /// TARGET, the acceptable standing queue delay: 5 ms (RFC 8289 §4.3, "Setting TARGET": 5 to
    /// 10% of INTERVAL; §5.3's constant).
    pub target: f64,
    /// INTERVAL, the sliding window over which the minimum sojourn time must stay above TARGET
    /// before CoDel drops, and the control law's base: 100 ms (RFC 8289 §4.2, "Setting
    /// INTERVAL": on the order of a worst-case RTT through the bottleneck; §5.3).
    pub interval: f64,
    /// Mark ECN-capable packets CE instead of dropping them (RFC 8289 §5.7 allows either;
    /// Linux's `ecn` option). Off: drop, the RFC's pseudocode.
    pub ecn: bool,
    /// MAXPACKET in bytes: CoDel never drops while at most this much waits behind the packet
    /// (RFC 8289 §5.5's `bytes() <= MAXPACKET`; §5.3: "should use interface MTU"). Unset: the
    /// port's packet size, else 1500.
    pub mtu_bytes: Option<u32>,
}

impl Default for CodelParams {
    fn default() -> CodelParams {
        CodelParams { target: 0.005, interval: 0.1, ecn: false, mtu_bytes: None }
    }
}

impl CodelParams {
    /// Refuse non-positive times, naming the key; TARGET must lie below INTERVAL (§4.3).
    pub fn validate(&self) -> Result<(), ParamError> {
        positive("target", self.target)?;
        positive("interval", self.interval)?;
        if self.target >= self.interval {
            return Err(ParamError::new("target", "must be below interval (RFC 8289 §4.3: 5-10% of it)"));
        }
        if self.mtu_bytes == Some(0) {
            return Err(ParamError::new("mtu_bytes", "must be at least 1 byte"));
        }
        Ok(())
    }

    /// MAXPACKET on a port whose data packets are `pkt_size` bytes (0: unknown).
    pub fn mtu(&self, pkt_size: u32) -> u32 {
        self.mtu_bytes.unwrap_or(if pkt_size > 0 { pkt_size } else { DEFAULT_MTU })
    }

    pub fn target_ns(&self) -> Time {
        secs(self.target)
    }

    pub fn interval_ns(&self) -> Time {
        secs(self.interval)
    }
}
