//! Quantities with units in scenario files: "100Mbps", "48ms", "1250pkt", "1.5MB".
//! A bare number is taken in base units (b/s, seconds, packets for buffers, bytes for sizes).

use serde::{Deserialize, Deserializer};

/// Either a number or a string with a unit, as written in the file.
#[derive(Deserialize)]
#[serde(untagged)]
enum NumOrStr {
    Num(f64),
    Str(String),
}

fn split_unit(s: &str) -> Result<(f64, String), String> {
    let s = s.trim();
    let idx = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
        .unwrap_or(s.len());
    // "1e3ms": 'e' belongs to the number only when followed by a digit or sign.
    let (mut num, mut unit) = s.split_at(idx);
    if num.ends_with(['e', 'E']) {
        num = &s[..idx - 1];
        unit = &s[idx - 1..];
    }
    let v: f64 = num.parse().map_err(|_| format!("'{s}' does not start with a number"))?;
    Ok((v, unit.trim().to_string()))
}

/// A link capacity in bits per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate(pub f64);

impl Rate {
    pub fn parse(s: &str) -> Result<Rate, String> {
        let (v, unit) = split_unit(s)?;
        let mult = match unit.as_str() {
            "" | "bps" | "b/s" => 1.0,
            "kbps" | "Kbps" | "kb/s" | "Kb/s" => 1e3,
            "Mbps" | "mbps" | "Mb/s" => 1e6,
            "Gbps" | "gbps" | "Gb/s" => 1e9,
            "Tbps" | "Tb/s" => 1e12,
            u => return Err(format!("unknown rate unit '{u}' in '{s}' (use bps, kbps, Mbps, Gbps)")),
        };
        Ok(Rate(v * mult))
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match NumOrStr::deserialize(d)? {
            NumOrStr::Num(v) => Ok(Rate(v)),
            NumOrStr::Str(s) => Rate::parse(&s).map_err(serde::de::Error::custom),
        }
    }
}

/// A duration in seconds (kept as f64 here; converted to integer ns when the run is built).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seconds(pub f64);

impl Seconds {
    pub fn parse(s: &str) -> Result<Seconds, String> {
        let (v, unit) = split_unit(s)?;
        let mult = match unit.as_str() {
            "" | "s" | "sec" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            "min" => 60.0,
            u => return Err(format!("unknown time unit '{u}' in '{s}' (use s, ms, us, ns)")),
        };
        Ok(Seconds(v * mult))
    }

    pub fn ns(self) -> u64 {
        racc_proto::time::secs(self.0)
    }
}

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match NumOrStr::deserialize(d)? {
            NumOrStr::Num(v) => Ok(Seconds(v)),
            NumOrStr::Str(s) => Seconds::parse(&s).map_err(serde::de::Error::custom),
        }
    }
}

/// A byte count: bytes, or packets of the scenario's packet size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    Bytes(f64),
    Packets(f64),
    /// Buffers only: multiples of the port's bandwidth-delay product.
    Bdp(f64),
}

impl Amount {
    pub fn parse(s: &str) -> Result<Amount, String> {
        let (v, unit) = split_unit(s)?;
        Ok(match unit.as_str() {
            "" | "B" | "bytes" => Amount::Bytes(v),
            "KB" | "kB" => Amount::Bytes(v * 1e3),
            "MB" => Amount::Bytes(v * 1e6),
            "GB" => Amount::Bytes(v * 1e9),
            "KiB" => Amount::Bytes(v * 1024.0),
            "MiB" => Amount::Bytes(v * 1024.0 * 1024.0),
            "pkt" | "pkts" | "packets" => Amount::Packets(v),
            "bdp" | "BDP" => Amount::Bdp(v),
            u => return Err(format!("unknown size unit '{u}' in '{s}' (use B, KB, MB, KiB, MiB, pkt, bdp)")),
        })
    }

    pub fn value(&self) -> f64 {
        match *self {
            Amount::Bytes(v) | Amount::Packets(v) | Amount::Bdp(v) => v,
        }
    }
}

/// A flow or file size: bare numbers are bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size(pub Amount);

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match NumOrStr::deserialize(d)? {
            NumOrStr::Num(v) => Ok(Size(Amount::Bytes(v))),
            NumOrStr::Str(s) => Amount::parse(&s).map(Size).map_err(serde::de::Error::custom),
        }
    }
}

/// A buffer limit: bare numbers are packets (ns-2's queue-limit convention).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Buffer(pub Amount);

impl<'de> Deserialize<'de> for Buffer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match NumOrStr::deserialize(d)? {
            NumOrStr::Num(v) => Ok(Buffer(Amount::Packets(v))),
            NumOrStr::Str(s) => Amount::parse(&s).map(Buffer).map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(Rate::parse("100Mbps").unwrap().0, 100e6);
        assert_eq!(Rate::parse("1Gbps").unwrap().0, 1e9);
        assert_eq!(Rate::parse("2.5 Mb/s").unwrap().0, 2.5e6);
        assert!(Rate::parse("10 furlongs").is_err());
        assert!(Rate::parse("fast").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(Seconds::parse("48ms").unwrap().ns(), 48_000_000);
        assert_eq!(Seconds::parse("1.5s").unwrap().ns(), 1_500_000_000);
        assert_eq!(Seconds::parse("1e3ms").unwrap().ns(), 1_000_000_000);
        assert_eq!(Seconds::parse("-1ms").unwrap().0, -0.001);
        assert!(Seconds::parse("3 fortnights").is_err());
    }

    #[test]
    fn amounts() {
        assert_eq!(Amount::parse("1250pkt").unwrap(), Amount::Packets(1250.0));
        assert_eq!(Amount::parse("1.5MB").unwrap(), Amount::Bytes(1.5e6));
        assert_eq!(Amount::parse("64KiB").unwrap(), Amount::Bytes(65536.0));
        assert_eq!(Amount::parse("1bdp").unwrap(), Amount::Bdp(1.0));
    }
}
