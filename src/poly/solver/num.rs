//! Exact integer arithmetic for the simplex tableau.
//!
//! Owns: the [`Int`] trait (checked ring operations that report overflow as
//! [`Ovf`] instead of wrapping) and its three implementations, tried in
//! this order: `i64` (the fast path: every tableau of the examples' and
//! inference programs' scheduling stays in it), `i128` (the wide path) and
//! `BigInt` (the slow path, which never overflows).
//!
//! Must not know about: tableaux, constraint systems, or anything above.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::fmt::Debug;

/// Overflow of the fast-path integer type: the caller redoes the whole
/// computation with big integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ovf;

/// Result of a fast-path computation.
pub(crate) type OResult<T> = Result<T, Ovf>;

/// An exact integer type with checked operations.
pub(crate) trait Int: Clone + Eq + Ord + Debug + Default + 'static {
    fn zero() -> Self;
    fn one() -> Self;
    fn from_i64(v: i64) -> Self;
    /// Conversion from a big integer; `Ovf` if it does not fit.
    fn from_big(v: &BigInt) -> OResult<Self>;
    fn to_big(&self) -> BigInt;
    fn add(&self, o: &Self) -> OResult<Self>;
    fn mul(&self, o: &Self) -> OResult<Self>;
    fn neg(&self) -> OResult<Self>;
    /// Non-negative gcd (gcd(0, 0) = 0).
    fn gcd(&self, o: &Self) -> OResult<Self>;
    /// Exact division (`o` divides `self`, `o != 0`).
    fn div_exact(&self, o: &Self) -> OResult<Self>;

    fn is_zero(&self) -> bool;
    fn is_neg(&self) -> bool;
    fn is_pos(&self) -> bool;
    fn is_one(&self) -> bool;
    /// `|self| < |o|`.
    fn abs_lt(&self, o: &Self) -> bool;
    /// The non-negative gcd of `den` and every entry of `nums` (the divisor
    /// of [`normalize`]).
    fn row_gcd(nums: &[Self], den: &Self) -> OResult<Self> {
        row_gcd_generic(nums, den)
    }
}

impl Int for i64 {
    fn zero() -> Self {
        0
    }
    fn one() -> Self {
        1
    }
    fn from_i64(v: i64) -> Self {
        v
    }
    fn from_big(v: &BigInt) -> OResult<Self> {
        v.to_i64().ok_or(Ovf)
    }
    fn to_big(&self) -> BigInt {
        BigInt::from(*self)
    }
    fn add(&self, o: &Self) -> OResult<Self> {
        self.checked_add(*o).ok_or(Ovf)
    }
    fn mul(&self, o: &Self) -> OResult<Self> {
        self.checked_mul(*o).ok_or(Ovf)
    }
    fn neg(&self) -> OResult<Self> {
        self.checked_neg().ok_or(Ovf)
    }
    fn gcd(&self, o: &Self) -> OResult<Self> {
        // The gcd of `i64::MIN` and 0 (2^63) is the one result that does
        // not fit.
        i64::try_from(gcd_u64(self.unsigned_abs(), o.unsigned_abs())).map_err(|_| Ovf)
    }
    fn div_exact(&self, o: &Self) -> OResult<Self> {
        self.checked_div(*o).ok_or(Ovf)
    }

    fn is_zero(&self) -> bool {
        *self == 0
    }
    fn is_neg(&self) -> bool {
        *self < 0
    }
    fn is_pos(&self) -> bool {
        *self > 0
    }
    fn is_one(&self) -> bool {
        *self == 1
    }
    fn abs_lt(&self, o: &Self) -> bool {
        self.unsigned_abs() < o.unsigned_abs()
    }
    /// One pass, stopping as soon as the gcd is 1 (usually at the first
    /// non-zero entries: the tableau's rows are long and mostly zero, and a
    /// scan of the whole row for its least entry costs more than the
    /// Euclid steps it saves).
    fn row_gcd(nums: &[Self], den: &Self) -> OResult<Self> {
        let mut g = den.unsigned_abs();
        for v in nums {
            if *v != 0 {
                g = gcd_u64(g, v.unsigned_abs());
                if g == 1 {
                    break;
                }
            }
        }
        i64::try_from(g).map_err(|_| Ovf)
    }
}

impl Int for i128 {
    fn zero() -> Self {
        0
    }
    fn one() -> Self {
        1
    }
    fn from_i64(v: i64) -> Self {
        v as i128
    }
    fn from_big(v: &BigInt) -> OResult<Self> {
        v.to_i128().ok_or(Ovf)
    }
    fn to_big(&self) -> BigInt {
        BigInt::from(*self)
    }
    fn add(&self, o: &Self) -> OResult<Self> {
        self.checked_add(*o).ok_or(Ovf)
    }
    fn mul(&self, o: &Self) -> OResult<Self> {
        // Fast path: a product of two i64 values always fits an i128 (and
        // avoids the slow generic 128-bit overflow check).
        if let (Ok(x), Ok(y)) = (i64::try_from(*self), i64::try_from(*o)) {
            return Ok(i128::from(x) * i128::from(y));
        }
        self.checked_mul(*o).ok_or(Ovf)
    }
    fn neg(&self) -> OResult<Self> {
        self.checked_neg().ok_or(Ovf)
    }
    fn gcd(&self, o: &Self) -> OResult<Self> {
        let mut a = self.checked_abs().ok_or(Ovf)?;
        let mut b = o.checked_abs().ok_or(Ovf)?;
        if let (Ok(mut x), Ok(mut y)) = (u64::try_from(a), u64::try_from(b)) {
            // Euclid: O(log min(x, y)) steps, fast when one side is small.
            while y != 0 {
                let t = x % y;
                x = y;
                y = t;
            }
            return Ok(i128::from(x));
        }
        while b != 0 {
            let t = a % b;
            a = b;
            b = t;
        }
        Ok(a)
    }
    fn div_exact(&self, o: &Self) -> OResult<Self> {
        if let (Ok(x), Ok(y)) = (i64::try_from(*self), i64::try_from(*o)) {
            if y != 0 && !(x == i64::MIN && y == -1) {
                return Ok(i128::from(x / y));
            }
        }
        self.checked_div(*o).ok_or(Ovf)
    }

    fn is_zero(&self) -> bool {
        *self == 0
    }
    fn is_neg(&self) -> bool {
        *self < 0
    }
    fn is_pos(&self) -> bool {
        *self > 0
    }
    fn is_one(&self) -> bool {
        *self == 1
    }
    fn abs_lt(&self, o: &Self) -> bool {
        self.unsigned_abs() < o.unsigned_abs()
    }
}

impl Int for BigInt {
    fn zero() -> Self {
        Zero::zero()
    }
    fn one() -> Self {
        One::one()
    }
    fn from_i64(v: i64) -> Self {
        BigInt::from(v)
    }
    fn from_big(v: &BigInt) -> OResult<Self> {
        Ok(v.clone())
    }
    fn to_big(&self) -> BigInt {
        self.clone()
    }
    fn add(&self, o: &Self) -> OResult<Self> {
        Ok(self + o)
    }
    fn mul(&self, o: &Self) -> OResult<Self> {
        Ok(self * o)
    }
    fn neg(&self) -> OResult<Self> {
        Ok(-self)
    }
    fn gcd(&self, o: &Self) -> OResult<Self> {
        Ok(Integer::gcd(self, o))
    }
    fn div_exact(&self, o: &Self) -> OResult<Self> {
        if Zero::is_zero(o) {
            return Err(Ovf);
        }
        Ok(self / o)
    }

    fn is_zero(&self) -> bool {
        Zero::is_zero(self)
    }
    fn is_neg(&self) -> bool {
        Signed::is_negative(self)
    }
    fn is_pos(&self) -> bool {
        Signed::is_positive(self)
    }
    fn is_one(&self) -> bool {
        One::is_one(self)
    }
    fn abs_lt(&self, o: &Self) -> bool {
        self.magnitude() < o.magnitude()
    }
}

/// Divide a fraction-free row `nums / den` by the gcd of all its entries and
/// `den` (`den > 0` stays positive).
pub(crate) fn normalize<T: Int>(nums: &mut [T], den: &mut T) -> OResult<()> {
    if den.is_one() {
        return Ok(());
    }
    let g = T::row_gcd(nums, den)?;
    if g.is_one() || g.is_zero() {
        return Ok(());
    }
    for v in nums.iter_mut() {
        if !v.is_zero() {
            *v = v.div_exact(&g)?;
        }
    }
    *den = den.div_exact(&g)?;
    Ok(())
}

/// The gcd of `den` and every entry of `nums`, the generic way: from the
/// smallest entry (gcd steps are O(log min) and the gcd is usually 1 after
/// this first step), then the others until it is 1.
fn row_gcd_generic<T: Int>(nums: &[T], den: &T) -> OResult<T> {
    let mut small: Option<&T> = None;
    for v in nums.iter() {
        if !v.is_zero() && small.is_none_or(|s| v.abs_lt(s)) {
            small = Some(v);
        }
    }
    let mut g = den.clone();
    if let Some(s) = small {
        g = g.gcd(s)?;
    }
    for v in nums.iter() {
        if g.is_one() {
            return Ok(g);
        }
        if !v.is_zero() {
            g = g.gcd(v)?;
        }
    }
    Ok(g)
}

/// Euclid's gcd of two magnitudes: O(log min(x, y)) division steps.
fn gcd_u64(mut x: u64, mut y: u64) -> u64 {
    while y != 0 {
        let t = x % y;
        x = y;
        y = t;
    }
    x
}

/// Checked i64 helpers used by the lattice code.
pub(crate) fn to_i64(v: i128) -> crate::poly::PolyResult<i64> {
    i64::try_from(v).map_err(|_| crate::poly::PolyError::Overflow)
}
