//! Sequence-number space. Inside, the transport counts absolute `u64` byte offsets from the
//! first data byte (offset 0); on the wire seq/ack are 32-bit values that wrap
//! (`wire = isn + offset mod 2^32`). A received 32-bit value is unwrapped to the offset
//! nearest to the one the endpoint expects (within ±2^31, the RFC 1982/9293 comparison).
//!
//! Convention: `FlowConfig::isn` is the wire sequence number of the **first data byte**; the
//! SYN occupies the number just before it (`isn - 1`), as real TCP's SYN consumes ISN and data
//! starts at ISN + 1.

/// Maps byte offsets to 32-bit wire values and back for one direction of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqSpace {
    isn: u32,
}

impl SeqSpace {
    /// `isn` is the wire value of offset 0 (the first data byte).
    pub fn new(isn: u32) -> SeqSpace {
        SeqSpace { isn }
    }

    /// Wire value of offset 0.
    #[inline]
    pub fn isn(&self) -> u32 {
        self.isn
    }

    /// The SYN's sequence number (one before the first data byte).
    #[inline]
    pub fn syn_seq(&self) -> u32 {
        self.isn.wrapping_sub(1)
    }

    /// 32-bit wire value of an absolute offset.
    #[inline]
    pub fn wire(&self, off: u64) -> u32 {
        self.isn.wrapping_add(off as u32)
    }

    /// The absolute offset whose wire value is `w`, chosen nearest to `near` (the offset the
    /// caller expects, e.g. `rcv_nxt` or `snd_una`). Values before offset 0 clamp to 0.
    #[inline]
    pub fn unwrap(&self, w: u32, near: u64) -> u64 {
        let d = w.wrapping_sub(self.wire(near)) as i32;
        if d >= 0 {
            near + d as u64
        } else {
            near.saturating_sub(d.unsigned_abs() as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_and_unwraps_across_2_32() {
        let s = SeqSpace::new(u32::MAX - 100);
        assert_eq!(s.wire(0), u32::MAX - 100);
        assert_eq!(s.wire(100), u32::MAX);
        assert_eq!(s.wire(101), 0);
        assert_eq!(s.syn_seq(), u32::MAX - 101);
        // Unwrap relative to an expected offset on either side of the wrap.
        for &near in &[0u64, 50, 101, 5_000, (1 << 32) + 7, 3 << 32] {
            for &delta in &[-40i64, -1, 0, 1, 960, 1 << 20] {
                let off = (near as i64 + delta).max(0) as u64;
                assert_eq!(s.unwrap(s.wire(off), near), off, "near {near} delta {delta}");
            }
        }
    }

    #[test]
    fn before_offset_zero_clamps() {
        let s = SeqSpace::new(10);
        assert_eq!(s.unwrap(s.syn_seq(), 0), 0);
    }
}
