//! Generalized basis reduction (Lovász and Scarf; the algorithm of Cook,
//! Rutherford, Scarf and Shallcross, "An implementation of the generalized
//! basis reduction algorithm for integer programming", 1993, as in isl's
//! `isl_tab_compute_reduced_basis`) and the integer search along a reduced
//! basis. Plain branch and bound on the coordinates can need a number of
//! nodes proportional to a polytope's *length* when the polytope is thin
//! in a direction that is not a coordinate (a sliver with no integer point
//! along a long diagonal); along a reduced basis the search at each level
//! enumerates at most `⌊F_i(b_i)⌋ + 1` values, and the widths of a reduced
//! basis are within a constant factor of the polytope's lattice widths.
//!
//! Owns: `reduced_basis` and `search_along` (called by the integer
//! sampler when its branch and bound goes deep).
//!
//! Must not know about: the public API types, lexicographic optimization.
//!
//! Definitions. For a polytope `P ⊆ Q^n` bounded in its first `r`
//! coordinates and directions `x` supported on them, the width of `P` in
//! direction `x` given directions `b_0, …, b_{i-1}` is
//! `F_i(x) = max { x·(s − t) : s, t ∈ P, b_j·(s − t) = 0 for j < i }`
//! (a linear program over `P × P`); `F_i` is a norm on the directions
//! independent of the `b_j` (a seminorm when `P` is not full-dimensional).
//! A basis `b_0, …, b_{r-1}` of `Z^r` is *reduced* (with `ε = 1/4`) when
//! for every `i`: `F_i(b_{i+1} + μ b_i) >= F_i(b_{i+1})` for every integer
//! `μ`, and `F_i(b_{i+1}) >= (1 − ε) F_i(b_i)`.

use super::integer::{build_tab, charge_node};
use super::num::{Int, OResult, Ovf};
use super::tableau::{MaxOutcome, Mode, Tab};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;

/// Swaps (and size reductions) the reduction may make before it settles
/// for the basis it has: the basis stays unimodular whenever it stops, so
/// a cap costs search nodes, never correctness.
const REDUCTION_STEPS: usize = 256;

/// `a + μ·b`, checked.
fn combine(a: &[i64], mu: i64, b: &[i64]) -> OResult<Vec<i64>> {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| y.checked_mul(mu).and_then(|p| x.checked_add(p)).ok_or(Ovf))
        .collect()
}

/// The coefficients of `x·(s − t)` over the pair `(s, t)`.
fn difference<T: Int>(x: &[i64]) -> OResult<Vec<T>> {
    let n = x.len();
    let mut c = vec![T::zero(); 2 * n];
    for (k, &v) in x.iter().enumerate() {
        c[k] = T::from_i64(v);
        c[n + k] = T::from_i64(v).neg()?;
    }
    Ok(c)
}

/// The pair tableau of `{x : row·(x, 1) >= 0}`: `(s, t)`, `2n` variables,
/// `s` and `t` each satisfying every row.
pub(super) fn pair_tab<T: Int>(n: usize, rows: &[Vec<i64>]) -> OResult<Tab<T>> {
    let mut pair_rows = Vec::with_capacity(2 * rows.len());
    for row in rows {
        let mut s = row[..n].to_vec();
        s.extend(std::iter::repeat_n(0, n));
        s.push(row[n]);
        let mut t = vec![0; n];
        t.extend_from_slice(&row[..n]);
        t.push(row[n]);
        pair_rows.push(s);
        pair_rows.push(t);
    }
    Ok(build_tab::<T>(2 * n, &[], &pair_rows)?.0)
}

/// The pair tableau restricted to `b·(s − t) = 0` (the next level's).
pub(super) fn fix_difference<T: Int>(pair: &Tab<T>, b: &[i64]) -> OResult<Tab<T>> {
    let mut next = pair.clone();
    next.add_constraint(&difference::<T>(b)?, &T::zero(), true)?;
    Ok(next)
}

/// `max c·y` over the tableau `t` (which keeps the pivots, not the row);
/// `Ovf` if unbounded (impossible for the forms asked here, supported on
/// bounded coordinates: then it is a broken invariant, and the caller's
/// widening ends it as an error rather than a wrong answer).
fn max_of<T: Int>(t: &mut Tab<T>, c: &[T]) -> OResult<BigRational> {
    let v = t.add_free_row(c, &T::zero())?;
    if t.maximize(v, Mode::Full)? == MaxOutcome::Unbounded {
        return Err(Ovf);
    }
    let max = t.value(v);
    t.drop_row_var(v);
    Ok(max)
}

/// `max { x·(s − t) }` over the pair tableau `pair` (over `(s, t)`, `2n`
/// variables).
pub(super) fn width<T: Int>(pair: &Tab<T>, x: &[i64]) -> OResult<BigRational> {
    max_of(&mut pair.clone(), &difference::<T>(x)?)
}

/// The integer `μ` minimizing `g(μ) = F(a + μ b)` (a convex function of
/// `μ`, as `F` is a seminorm), with `g(μ)`: from 0, the descending side
/// is followed with doubling steps until `g` stops decreasing, then the
/// last doubling interval is bisected on the sign of `g(k + 1) − g(k)`.
fn best_multiple<T: Int>(pair: &Tab<T>, a: &[i64], b: &[i64]) -> OResult<(i64, BigRational)> {
    let g = |mu: i64| -> OResult<BigRational> { width(pair, &combine(a, mu, b)?) };
    let g0 = g(0)?;
    let dir = if g(1)? < g0 {
        1
    } else if g(-1)? < g0 {
        -1
    } else {
        return Ok((0, g0));
    };
    // h(k) = g(dir·k) is convex with h(1) < h(0): its minimizer is >= 1.
    let h = |k: i64| g(k.checked_mul(dir).ok_or(Ovf)?);
    // Doubling: find hi with h(hi + 1) >= h(hi) (the slope turns).
    let mut lo = 1i64; // h(lo) < h(lo - 1)
    let mut hi = 1i64;
    loop {
        if h(hi.checked_add(1).ok_or(Ovf)?)? >= h(hi)? {
            break;
        }
        lo = hi;
        hi = hi.checked_mul(2).ok_or(Ovf)?;
    }
    // The minimizer is the least k in [lo, hi] with h(k + 1) >= h(k).
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if h(mid + 1)? >= h(mid)? {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let mu = lo.checked_mul(dir).ok_or(Ovf)?;
    Ok((mu, h(lo)?))
}

/// A reduced basis (see the module comment) of `Z^r × {0}^{n−r}` for the
/// polyhedron `{x : row·(x, 1) >= 0}` (bounded in its first `r`
/// coordinates), as `r` rows of length `n`; the rows form a unimodular
/// matrix on the first `r` coordinates. After [`REDUCTION_STEPS`] steps
/// the basis reached so far is returned.
pub(crate) fn reduced_basis<T: Int>(
    n: usize,
    r: usize,
    rows: &[Vec<i64>],
) -> OResult<Vec<Vec<i64>>> {
    let mut b: Vec<Vec<i64>> = (0..r)
        .map(|i| (0..n).map(|k| i64::from(k == i)).collect())
        .collect();
    if r <= 1 {
        return Ok(b);
    }
    let pair = pair_tab::<T>(n, rows)?;
    if pair.empty {
        return Ok(b);
    }
    // levels[i]: the pair tableau with b_j·(s − t) = 0 for j < i.
    let mut levels = vec![pair];
    let three_quarters = BigRational::new(BigInt::from(3), BigInt::from(4));
    let mut i = 0usize;
    let mut steps = 0usize;
    while i + 1 < r && steps < REDUCTION_STEPS {
        steps += 1;
        levels.truncate(i + 1);
        let f_i = width(&levels[i], &b[i])?;
        let (mu, f_next) = best_multiple(&levels[i], &b[i + 1], &b[i])?;
        if mu != 0 {
            b[i + 1] = combine(&b[i + 1], mu, &b[i])?;
        }
        if f_next < &f_i * &three_quarters {
            b.swap(i, i + 1);
            i = i.saturating_sub(1);
        } else {
            let next = fix_difference(&levels[i], &b[i])?;
            levels.push(next);
            i += 1;
        }
    }
    Ok(b)
}

/// The least and the greatest value of `x·y` over the tableau `tab`
/// (rounded inwards to integers), or `None` when no integer lies between.
fn integer_range<T: Int>(tab: &Tab<T>, x: &[i64]) -> OResult<Option<(i64, i64)>> {
    let mut c: Vec<T> = x.iter().map(|&v| T::from_i64(v)).collect();
    let mut t = tab.clone();
    let hi = max_of(&mut t, &c)?.floor().to_integer();
    for e in c.iter_mut() {
        *e = e.neg()?;
    }
    let lo = (-max_of(&mut t, &c)?).ceil().to_integer();
    let (Some(lo), Some(hi)) = (lo.to_i64(), hi.to_i64()) else {
        return Err(Ovf);
    };
    Ok((lo <= hi).then_some((lo, hi)))
}

/// The integer values of `[lo, hi]` from the middle outwards (`mid`,
/// `mid + 1`, `mid − 1`, …): points near a polytope's middle are the
/// likeliest to lie in a thick part of it.
struct MiddleOut {
    lo: i64,
    hi: i64,
    mid: i64,
    k: u64,
}

impl MiddleOut {
    fn new(lo: i64, hi: i64) -> Self {
        let mid = (lo as i128 + (hi as i128 - lo as i128) / 2) as i64;
        MiddleOut { lo, hi, mid, k: 0 }
    }
}

impl Iterator for MiddleOut {
    type Item = i64;
    fn next(&mut self) -> Option<i64> {
        // Offsets 0, +1, -1, +2, -2, ...; every value of [lo, hi] is within
        // hi - lo of mid, so k beyond 2(hi - lo) + 1 yields nothing new.
        let span = (self.hi as i128 - self.lo as i128) as u128;
        while (self.k as u128) <= 2 * span + 1 {
            let k = self.k as i128;
            self.k += 1;
            let off = if k % 2 == 1 { (k + 1) / 2 } else { -(k / 2) };
            let v = self.mid as i128 + off;
            if v >= self.lo as i128 && v <= self.hi as i128 {
                return Some(v as i64);
            }
        }
        None
    }
}

/// An integer point (in its first `r` coordinates) of the feasible
/// tableau `tab`, found by depth-first enumeration along `basis`: level
/// `l` fixes `b_l·x` to each integer of its range over the node (an
/// equality row), the first `r` levels fix `x_0..x_{r−1}` (the basis is
/// unimodular on them), and a node at level `r` is a point. Every integer
/// point of `tab` has integral `b_l·x` at every level, so the search is
/// exhaustive; it is finite because every level's range is (the first
/// `r` coordinates are bounded). Returns the LP point of the first leaf.
pub(crate) fn search_along<T: Int>(
    tab: Tab<T>,
    basis: &[Vec<i64>],
) -> OResult<Option<Vec<BigRational>>> {
    let r = basis.len();
    if r == 0 {
        return Ok(Some(tab.point()));
    }
    let mut nodes = 0usize;
    let mut stack: Vec<(Tab<T>, MiddleOut)> = Vec::new();
    let Some((lo, hi)) = integer_range(&tab, &basis[0])? else {
        return Ok(None);
    };
    stack.push((tab, MiddleOut::new(lo, hi)));
    while let Some(level) = stack.len().checked_sub(1) {
        let (node, values) = &mut stack[level];
        let Some(v) = values.next() else {
            stack.pop();
            continue;
        };
        let mut child = node.clone();
        let c: Vec<T> = basis[level].iter().map(|&x| T::from_i64(x)).collect();
        child.add_constraint(&c, &T::from_i64(v).neg()?, true)?;
        charge_node(&mut nodes, level + 1, &child)?;
        if child.empty {
            continue;
        }
        if level + 1 == r {
            return Ok(Some(child.point()));
        }
        if let Some((lo, hi)) = integer_range(&child, &basis[level + 1])? {
            stack.push((child, MiddleOut::new(lo, hi)));
        }
    }
    Ok(None)
}
