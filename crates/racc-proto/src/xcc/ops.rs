//! Counting a router's arithmetic per packet on the code that runs. A router module writes its
//! per-packet path once, generic over [`Arith`]; it runs on `f64` (no cost) and, when asked to
//! count (`count_ops`), on [`Counted`], which does the same arithmetic and tallies every
//! addition, subtraction, multiplication and division in a thread-local [`OpCounts`]. The
//! module reports the tallies as named metrics, so a test can hold them against XCC-Linux's
//! figures (XCP 6 additions + 3 multiplications, JetMax 3 additions, RCP 2 + 2).
//! Comparisons and assignments are not arithmetic and are not counted; a subtraction counts
//! as an addition, as in the slides.

use crate::metrics::{MetricSink, MetricValue};
use std::cell::Cell;
use std::ops::{Add, Div, Mul, Sub};

/// Operations counted, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCounts {
    /// Additions and subtractions.
    pub adds: u64,
    pub muls: u64,
    pub divs: u64,
}

impl OpCounts {
    pub fn total(&self) -> u64 {
        self.adds + self.muls + self.divs
    }

    /// Report these counts and the packets they were counted over as a router module's named
    /// metrics (`ops_adds`, `ops_muls`, `ops_divs` in "ops", `ops_packets`): the one set of
    /// names every counting router uses, and experiments read.
    pub fn report(&self, packets: u64, out: &mut dyn MetricSink) {
        out.put("ops_adds", "ops", MetricValue::Count(self.adds));
        out.put("ops_muls", "ops", MetricValue::Count(self.muls));
        out.put("ops_divs", "ops", MetricValue::Count(self.divs));
        out.put("ops_packets", "packets", MetricValue::Count(packets));
    }
}

impl Add for OpCounts {
    type Output = OpCounts;
    fn add(self, o: OpCounts) -> OpCounts {
        OpCounts { adds: self.adds + o.adds, muls: self.muls + o.muls, divs: self.divs + o.divs }
    }
}

thread_local! {
    static TALLY: Cell<OpCounts> = const { Cell::new(OpCounts { adds: 0, muls: 0, divs: 0 }) };
}

/// The number type of a router's per-packet path: `f64` to run, [`Counted`] to count.
pub trait Arith:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + From<f64>
    + Into<f64>
{
}

impl Arith for f64 {}
impl Arith for Counted {}

/// An `f64` whose arithmetic is tallied.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Counted(pub f64);

impl From<f64> for Counted {
    fn from(x: f64) -> Counted {
        Counted(x)
    }
}

impl From<Counted> for f64 {
    fn from(c: Counted) -> f64 {
        c.0
    }
}

fn tally(f: impl FnOnce(&mut OpCounts)) {
    TALLY.with(|t| {
        let mut c = t.get();
        f(&mut c);
        t.set(c);
    });
}

impl Add for Counted {
    type Output = Counted;
    fn add(self, o: Counted) -> Counted {
        tally(|c| c.adds += 1);
        Counted(self.0 + o.0)
    }
}

// The `+=` counts the operation (clippy flags any `+` inside an arithmetic impl).
#[allow(clippy::suspicious_arithmetic_impl)]
impl Sub for Counted {
    type Output = Counted;
    fn sub(self, o: Counted) -> Counted {
        tally(|c| c.adds += 1);
        Counted(self.0 - o.0)
    }
}

// The `+=` counts the operation (clippy flags any `+` inside an arithmetic impl).
#[allow(clippy::suspicious_arithmetic_impl)]
impl Mul for Counted {
    type Output = Counted;
    fn mul(self, o: Counted) -> Counted {
        tally(|c| c.muls += 1);
        Counted(self.0 * o.0)
    }
}

// The `+=` counts the operation (clippy flags any `+` inside an arithmetic impl).
#[allow(clippy::suspicious_arithmetic_impl)]
impl Div for Counted {
    type Output = Counted;
    fn div(self, o: Counted) -> Counted {
        tally(|c| c.divs += 1);
        Counted(self.0 / o.0)
    }
}

/// Run `f` on [`Counted`] numbers and return its result with the operations it did.
pub fn count<R>(f: impl FnOnce() -> R) -> (R, OpCounts) {
    let before = TALLY.with(|t| t.replace(OpCounts::default()));
    let r = f();
    let done = TALLY.with(|t| t.replace(before));
    (r, done)
}

/// The `ops_*` metrics a counting router module reports: (adds, muls, divs, packets) (tests).
#[cfg(test)]
pub(crate) fn op_metrics(r: &dyn crate::router::RouterModule) -> (u64, u64, u64, u64) {
    let mut m = crate::metrics::MetricList::default();
    r.metrics(&mut m);
    let n = |k: &str| match m.get(k) {
        Some(crate::metrics::MetricValue::Count(n)) => n,
        other => panic!("{k}: {other:?}"),
    };
    (n("ops_adds"), n("ops_muls"), n("ops_divs"), n("ops_packets"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn affine<N: Arith>(a: N, x: N, b: N) -> N {
        a * x + b - N::from(1.0)
    }

    #[test]
    fn counts_what_the_generic_code_does_and_computes_the_same() {
        let (r, ops) = count(|| affine(Counted(2.0), Counted(3.0), Counted(4.0)));
        assert_eq!(r.0, affine(2.0, 3.0, 4.0));
        assert_eq!(ops, OpCounts { adds: 2, muls: 1, divs: 0 });
        // Nested counts do not leak into each other.
        let (_, outer) = count(|| {
            let _ = Counted(1.0) / Counted(2.0);
            let (_, inner) = count(|| Counted(1.0) + Counted(1.0));
            assert_eq!(inner.adds, 1);
        });
        assert_eq!(outer, OpCounts { adds: 0, muls: 0, divs: 1 });
    }
}
