//! DCCP's 48-bit sequence numbers (RFC 4340 §7.1): endpoints count in u64 and put the low 48
//! bits on the wire; a wire value is read back as the number nearest a reference.

/// The 48 bits on the wire.
pub const MASK: u64 = (1 << 48) - 1;

/// The wire value of sequence number `x`.
#[inline]
pub fn wire(x: u64) -> u64 {
    x & MASK
}

/// The full number whose low 48 bits are `w`, nearest `near` (within 2^47 either side).
#[inline]
pub fn unwrap(w: u64, near: u64) -> u64 {
    let d = w.wrapping_sub(near) & MASK;
    if d < 1 << 47 {
        near.wrapping_add(d)
    } else {
        near.wrapping_sub((1 << 48) - d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_values_wrap_at_48_bits_and_unwrap_near_a_reference() {
        let x = (1u64 << 48) - 2;
        for k in 0..5 {
            assert_eq!(unwrap(wire(x + k), x), x + k, "forward across the wrap");
            assert_eq!(unwrap(wire(x + k), x + 4), x + k, "backward across the wrap");
        }
        assert_eq!(wire(1 << 48), 0);
        assert_eq!(unwrap(5, 3), 5);
        assert_eq!(unwrap(3, 5), 3);
    }
}
