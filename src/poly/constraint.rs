//! Constraint rows and their exact integer arithmetic.
//!
//! Owns: the row layout shared by every polyhedral type, gcd normalization
//! (with integer tightening of inequalities), checked linear combinations
//! and evaluation of rows at integer points.
//!
//! Row layout: a row over `n` variables is a `Vec<i64>` of length `n + 1`:
//! the coefficients of the variables followed by the constant. In sets and
//! maps the variables are ordered **parameters, then dimensions** (for maps:
//! parameters, input dimensions, output dimensions). An equality row `r`
//! means `r · (x, 1) = 0`, an inequality row means `r · (x, 1) >= 0`.
//!
//! Must not know about: spaces, names, sets, parsing or the solver.

use super::error::{PolyError, PolyResult};

/// A system part: a list of rows.
pub type Rows = Vec<Vec<i64>>;

/// A conjunction as (equality rows, inequality rows).
pub type EqsIneqs = (Rows, Rows);

/// Borrowed (equality rows, inequality rows).
pub type EqsIneqsRef<'a> = (&'a [Vec<i64>], &'a [Vec<i64>]);

/// The kind of a constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConstraintKind {
    /// `e = 0`
    Eq,
    /// `e >= 0`
    Ineq,
}

/// One affine constraint `e = 0` or `e >= 0`, with `e` given as a row
/// (coefficients of the variables, then the constant; see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Constraint {
    pub kind: ConstraintKind,
    pub row: Vec<i64>,
}

impl Constraint {
    /// `row · (x, 1) = 0`.
    pub fn eq(row: Vec<i64>) -> Constraint {
        Constraint {
            kind: ConstraintKind::Eq,
            row,
        }
    }
    /// `row · (x, 1) >= 0`.
    pub fn ineq(row: Vec<i64>) -> Constraint {
        Constraint {
            kind: ConstraintKind::Ineq,
            row,
        }
    }
}

/// Result of normalizing one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Norm {
    /// The row is a non-trivial constraint (now normalized in place).
    Keep,
    /// The row holds for every integer point (e.g. `3 >= 0`, `0 = 0`).
    Trivial,
    /// The row holds for no integer point (e.g. `-1 >= 0`, `2x = 1`).
    Infeasible,
}

/// Greatest common divisor of absolute values (gcd(0, 0) = 0), in i128 so
/// that `i64::MIN` is handled.
pub fn gcd128(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

/// Converts an i128 to i64 or reports overflow.
pub fn to_i64(v: i128) -> PolyResult<i64> {
    i64::try_from(v).map_err(|_| PolyError::Overflow)
}

/// Floor division `floor(a / b)` for `b != 0`.
pub fn floor_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// Ceiling division `ceil(a / b)` for `b != 0`.
pub fn ceil_div(a: i128, b: i128) -> i128 {
    -floor_div(-a, b)
}

/// Normalizes an equality `e = 0`: divides by the gcd `g` of the variable
/// coefficients (infeasible when `g` does not divide the constant) and makes
/// the first non-zero coefficient positive (`e = 0` iff `-e = 0`).
pub fn normalize_eq(row: &mut [i64]) -> PolyResult<Norm> {
    let n = row.len() - 1;
    let g = row[..n].iter().fold(0i128, |g, &c| gcd128(g, c as i128));
    if g == 0 {
        return Ok(if row[n] == 0 {
            Norm::Trivial
        } else {
            Norm::Infeasible
        });
    }
    if (row[n] as i128) % g != 0 {
        return Ok(Norm::Infeasible);
    }
    let first_neg = row[..n].iter().find(|&&c| c != 0).is_some_and(|&c| c < 0);
    let s = if first_neg { -g } else { g };
    for c in row.iter_mut() {
        // the quotient only overflows for i64::MIN / -1
        *c = to_i64((*c as i128) / s)?;
    }
    Ok(Norm::Keep)
}

/// Normalizes an inequality `e >= 0` over the integers: with `g` the gcd of
/// the variable coefficients, `a·x + c >= 0` becomes `(a/g)·x + floor(c/g) >= 0`
/// (exact on integer points: `a/g · x` is an integer). A row without
/// variables is trivial (`c >= 0`) or infeasible (`c < 0`).
pub fn normalize_ineq(row: &mut [i64]) -> Norm {
    let n = row.len() - 1;
    let g = row[..n].iter().fold(0i128, |g, &c| gcd128(g, c as i128));
    if g == 0 {
        return if row[n] >= 0 {
            Norm::Trivial
        } else {
            Norm::Infeasible
        };
    }
    if g != 1 {
        for c in row[..n].iter_mut() {
            *c = ((*c as i128) / g) as i64; // |c/g| <= |c| since g >= 2
        }
        row[n] = floor_div(row[n] as i128, g) as i64; // |floor(c/g)| <= |c|
    }
    Norm::Keep
}

/// Normalizes a row as a constraint of `kind` ([`normalize_eq`] or
/// [`normalize_ineq`]).
pub fn normalize(kind: ConstraintKind, row: &mut [i64]) -> PolyResult<Norm> {
    match kind {
        ConstraintKind::Eq => normalize_eq(row),
        ConstraintKind::Ineq => Ok(normalize_ineq(row)),
    }
}

/// `a * r1 + b * r2`, exactly, or `Overflow`.
pub fn combine(a: i64, r1: &[i64], b: i64, r2: &[i64]) -> PolyResult<Vec<i64>> {
    combine_wide(a as i128, r1, b as i128, r2)
}

/// `a * r1 - b * r2`, exactly, or `Overflow`: [`combine`] with `-b`, the
/// negation taken in i128 (so `b = i64::MIN` is exact too).
pub fn combine_sub(a: i64, r1: &[i64], b: i64, r2: &[i64]) -> PolyResult<Vec<i64>> {
    combine_wide(a as i128, r1, -(b as i128), r2)
}

/// `a * r1 + b * r2` entry by entry in checked i128 (`|a|, |b| <= 2^63`,
/// so a product fits and only the sum can overflow), each result checked
/// to fit i64.
fn combine_wide(a: i128, r1: &[i64], b: i128, r2: &[i64]) -> PolyResult<Vec<i64>> {
    r1.iter()
        .zip(r2)
        .map(|(&x, &y)| {
            let v = a
                .checked_mul(x as i128)
                .and_then(|p| p.checked_add(b.checked_mul(y as i128)?))
                .ok_or(PolyError::Overflow)?;
            to_i64(v)
        })
        .collect()
}

/// Splits `rows` by index: the rows whose index is listed in `idx`, then
/// the others, each in their original order (e.g. the implicit equalities
/// or the redundant inequalities a solver query returned, and the rest).
pub fn split_rows<T>(rows: Vec<T>, idx: &[usize]) -> (Vec<T>, Vec<T>) {
    let mut listed = Vec::with_capacity(idx.len());
    let mut rest = Vec::with_capacity(rows.len().saturating_sub(idx.len()));
    for (k, r) in rows.into_iter().enumerate() {
        if idx.contains(&k) {
            listed.push(r);
        } else {
            rest.push(r);
        }
    }
    (listed, rest)
}

/// `rows` without the rows whose index is listed in `idx` (order kept).
pub fn drop_rows<T>(rows: Vec<T>, idx: &[usize]) -> Vec<T> {
    split_rows(rows, idx).1
}

/// The integer interval `lo <= x <= hi` that a set of constraints on one
/// integer variable `x` allows (`None`: unbounded on that side). Starts
/// unbounded; every constraint can only shrink it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntRange {
    pub lo: Option<i128>,
    pub hi: Option<i128>,
}

impl IntRange {
    /// Adds `x >= v`.
    pub fn at_least(&mut self, v: i128) {
        self.lo = Some(self.lo.map_or(v, |l| l.max(v)));
    }
    /// Adds `x <= v`.
    pub fn at_most(&mut self, v: i128) {
        self.hi = Some(self.hi.map_or(v, |h| h.min(v)));
    }
    /// Adds `a·x + rest >= 0` for `a != 0`: over the integers `x >=
    /// ceil(-rest / a)` when `a > 0`, `x <= floor(rest / -a)` when `a < 0`.
    pub fn add_ineq(&mut self, a: i128, rest: i128) {
        if a > 0 {
            self.at_least(ceil_div(-rest, a));
        } else {
            self.at_most(floor_div(rest, -a));
        }
    }
}

/// `(∨_i A_i) ∧ (∨_j B_j) = ∨_{i,j} (A_i ∧ B_j)`: the conjunction of two
/// formulas in disjunctive normal form (a list of conjunctions, each a list
/// of atoms), by distributivity; `a.len() · b.len()` conjunctions, `a`'s
/// index outermost.
pub fn dnf_and<T: Clone>(a: &[Vec<T>], b: &[Vec<T>]) -> Vec<Vec<T>> {
    let mut out = Vec::new();
    for x in a {
        for y in b {
            let mut c = x.clone();
            c.extend(y.iter().cloned());
            out.push(c);
        }
    }
    out
}

/// `-row` (checked).
pub fn negate(row: &[i64]) -> PolyResult<Vec<i64>> {
    row.iter()
        .map(|&c| c.checked_neg().ok_or(PolyError::Overflow))
        .collect()
}

/// The inequalities whose union is the integer complement of `c`: `−r − 1
/// >= 0` for `r >= 0`; `r − 1 >= 0` and `−r − 1 >= 0` for `r = 0`.
pub fn complement_ineqs(c: &Constraint) -> PolyResult<Vec<Vec<i64>>> {
    Ok(match c.kind {
        ConstraintKind::Eq => {
            let mut up = c.row.clone();
            let n = up.len() - 1;
            up[n] = up[n].checked_sub(1).ok_or(PolyError::Overflow)?;
            vec![up, negate_ineq(&c.row)?]
        }
        ConstraintKind::Ineq => vec![negate_ineq(&c.row)?],
    })
}

/// The integer negation of `e >= 0`: `-e - 1 >= 0` (i.e. `e <= -1`).
pub fn negate_ineq(row: &[i64]) -> PolyResult<Vec<i64>> {
    let mut r = negate(row)?;
    let n = r.len() - 1;
    r[n] = r[n].checked_sub(1).ok_or(PolyError::Overflow)?;
    Ok(r)
}

/// Evaluates `row · (x, 1)` exactly in i128 (`x.len() == row.len() - 1`;
/// missing values count as 0). With i64 inputs and fewer than 2^60 terms the
/// sum cannot overflow i128.
pub fn eval(row: &[i64], x: &[i64]) -> i128 {
    let n = row.len() - 1;
    let mut s = row[n] as i128;
    for (c, v) in row[..n].iter().zip(x) {
        s += (*c as i128) * (*v as i128);
    }
    s
}

/// [`eval`] at the point `(params, point)` given in two parts (no
/// allocation): `row · (params, point, 1)`.
pub fn eval_at(row: &[i64], params: &[i64], point: &[i64]) -> i128 {
    let n = row.len() - 1;
    let mut s = row[n] as i128;
    for (c, v) in row[..n].iter().zip(params.iter().chain(point)) {
        s += (*c as i128) * (*v as i128);
    }
    s
}

/// Substitutes the first `k = vals.len()` variables by the given values:
/// returns a row over the remaining variables.
pub fn substitute_prefix(row: &[i64], vals: &[i64]) -> PolyResult<Vec<i64>> {
    let k = vals.len();
    let n = row.len() - 1;
    let mut c = row[n] as i128;
    for (a, v) in row[..k].iter().zip(vals) {
        c += (*a as i128) * (*v as i128);
    }
    let mut out = row[k..n].to_vec();
    out.push(to_i64(c)?);
    Ok(out)
}

/// Inserts `count` zero columns at variable position `at`.
pub fn insert_cols(row: &[i64], at: usize, count: usize) -> Vec<i64> {
    let mut out = Vec::with_capacity(row.len() + count);
    out.extend_from_slice(&row[..at]);
    out.extend(std::iter::repeat_n(0, count));
    out.extend_from_slice(&row[at..]);
    out
}

/// Removes `count` columns starting at variable position `at`.
pub fn remove_cols(row: &[i64], at: usize, count: usize) -> Vec<i64> {
    let mut out = Vec::with_capacity(row.len() - count);
    out.extend_from_slice(&row[..at]);
    out.extend_from_slice(&row[at + count..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tightening() {
        let mut r = vec![2, -1]; // 2i - 1 >= 0  ->  i - 1 >= 0
        assert_eq!(normalize_ineq(&mut r), Norm::Keep);
        assert_eq!(r, vec![1, -1]);
        let mut r = vec![-2, 1]; // -2i + 1 >= 0 -> -i >= 0
        normalize_ineq(&mut r);
        assert_eq!(r, vec![-1, 0]);
        let mut e = vec![2, 2, -7];
        assert_eq!(normalize_eq(&mut e), Ok(Norm::Infeasible));
        let mut e = vec![-2, 4, 6];
        assert_eq!(normalize_eq(&mut e), Ok(Norm::Keep));
        assert_eq!(e, vec![1, -2, -3]);
    }

    #[test]
    fn divisions() {
        assert_eq!(floor_div(-7, 2), -4);
        assert_eq!(ceil_div(-7, 2), -3);
        assert_eq!(floor_div(7, -2), -4);
        assert_eq!(ceil_div(7, 2), 4);
    }
}
