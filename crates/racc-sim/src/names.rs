//! Set-up's numbered names and labels (`s17`, `router/port40001`) written without the
//! formatting machinery: at 10,000 flows set-up writes 20,000 node names, 40,002 port names
//! and two random-stream labels per port, and `format!` was a third of its instructions
//! (issue 19).

/// `prefix` followed by `n` in decimal, in `buf`, without allocating (a random stream's label).
pub(crate) fn label<'a>(buf: &'a mut [u8; 40], prefix: &str, n: usize) -> &'a str {
    let mut digits = [0u8; 20];
    let d = decimal(&mut digits, n);
    let len = prefix.len() + d.len();
    buf[..prefix.len()].copy_from_slice(prefix.as_bytes());
    buf[prefix.len()..len].copy_from_slice(d);
    std::str::from_utf8(&buf[..len]).expect("a prefix and ASCII digits")
}

/// `prefix` followed by `n` in decimal (a node's name).
pub(crate) fn numbered(prefix: &str, n: usize) -> String {
    let mut digits = [0u8; 20];
    let d = decimal(&mut digits, n);
    let mut s = String::with_capacity(prefix.len() + d.len());
    s.push_str(prefix);
    s.push_str(std::str::from_utf8(d).expect("ASCII digits"));
    s
}

/// `a->b` (a port's name).
pub(crate) fn arrow(a: &str, b: &str) -> String {
    let mut s = String::with_capacity(a.len() + 2 + b.len());
    s.push_str(a);
    s.push_str("->");
    s.push_str(b);
    s
}

fn decimal(digits: &mut [u8; 20], mut n: usize) -> &[u8] {
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &digits[i..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_as_format() {
        let mut buf = [0u8; 40];
        for n in [0, 1, 9, 10, 99, 100, 40_001, 1_000_000, usize::MAX] {
            assert_eq!(label(&mut buf, "router/port", n), format!("router/port{n}"));
            assert_eq!(numbered("s", n), format!("s{n}"));
        }
        assert_eq!(label(&mut buf, "", 7), "7");
        assert_eq!(arrow("r0", "r1"), "r0->r1");
    }
}
