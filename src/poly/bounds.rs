//! Rational shadows and variable bounds of integer row systems, and the
//! exact small-matrix algebra of loop generation.
//!
//! Owns (for `codegen::scan`, the polyhedral scanner):
//! * [`shadow_eliminate`]: the *rational* projection (shadow) of a system
//!   along one variable, and [`prune`], which removes trivial, duplicate
//!   and (exactly, with the LP solver) redundant rows. Unlike
//!   [`super::project::eliminate`] (integer tightening of the result,
//!   opposite pairs merged into equalities, an exactness test), the rows
//!   stay as Fourier–Motzkin produces them: the scanner reads its loop
//!   bounds off these rows, so their form is part of the generated code.
//! * [`var_bounds`]: the lower and upper bound terms of one variable.
//! * [`det`], [`rank`] and [`rational_inverse`] of small integer matrices,
//!   and [`gcd`] / [`lcm`] on `i64`.
//!
//! # The math
//! Rows use the layout of [`super::constraint`]: over `n` variables, `n`
//! coefficients then the constant; an equality row means `r·(x, 1) = 0`,
//! an inequality row `r·(x, 1) >= 0`.
//!
//! *Shadow along `x_c`.* If an equality `e` has `e_c = a ≠ 0` (one with
//! `|a| = 1` preferred), `x_c = −(e − a·x_c)/a` is substituted: every other
//! equality `r` becomes `a·r − r_c·e` and every inequality `r` becomes
//! `|a|·r − sign(a)·r_c·e` (the factor `|a| > 0` keeps the direction);
//! column `c` is then zero and the result is the exact rational
//! projection. Otherwise (Fourier–Motzkin) the inequalities with `r_c = 0`
//! stay, and every pair of a lower bound `l` (`l_c > 0`) and an upper bound
//! `u` (`u_c < 0`) gives `(−u_c)·l + l_c·u >= 0` (positive factors,
//! column `c` cancels); by Fourier's theorem these rows describe exactly
//! the rational projection. An inequality `g·y + k >= 0` with `g` the gcd
//! of its coefficients is replaced by `y + floor(k/g) >= 0` (the same
//! integer points), an equality by the row divided by the gcd of all its
//! entries (the same rational points). The result is the rational shadow,
//! a superset of the integer projection, with the column kept (zeroed).
//!
//! *Bounds of `x_k`.* An inequality `a·x_k + e >= 0` with `a > 0` is the
//! lower bound `x_k >= ceil(−e/a)`, with `a < 0` the upper bound
//! `x_k <= floor(e/|a|)` (integer `x_k`); an equality gives both.
//!
//! *Matrices.* The determinant by Bareiss' fraction-free elimination
//! (every intermediate is a minor, every division exact); the rank as
//! `n − dim ker` from the lattice kernel of [`super::solver::integer_kernel`];
//! the inverse by Gauss–Jordan on `[M | I]` with integer row operations,
//! rows divided by their gcd, so that row `j` of `M⁻¹` is
//! `num_j / den_j` in lowest terms.
//!
//! Must not know about: spaces, names, loops, schedules.

use super::constraint::{combine, drop_rows, gcd128, normalize_ineq};
use super::error::{PolyError, PolyResult};
use super::solver::{self, System};

/// `gcd(|a|, |b|)` on `i64` (`gcd(0, 0) = 0`), and `1` in the one case
/// whose value does not fit, `gcd(i64::MIN, 0 or i64::MIN) = 2^63`.
pub fn gcd(a: i64, b: i64) -> i64 {
    i64::try_from(gcd128(i128::from(a), i128::from(b))).unwrap_or(1)
}

/// `lcm(a, b)` for `a, b >= 1`, or `Overflow`.
pub fn lcm(a: i64, b: i64) -> PolyResult<i64> {
    a.checked_mul(b / gcd(a, b)).ok_or(PolyError::Overflow)
}

/// An equality row divided by the gcd of all its entries (the same
/// rational points; no tightening).
pub fn reduce_eq(mut r: Vec<i64>) -> Vec<i64> {
    let g = r.iter().fold(0, |g, &x| gcd(g, x));
    if g > 1 {
        for x in &mut r {
            *x /= g;
        }
    }
    r
}

/// An inequality row with its coefficients divided by their gcd and the
/// constant floored (the same integer points).
pub fn reduce_ineq(mut r: Vec<i64>) -> Vec<i64> {
    // Trivial and infeasible rows (no coefficient) are kept as they are.
    let _ = normalize_ineq(&mut r);
    r
}

/// The rational shadow of `p` along variable `col` (see the module doc);
/// column `col` stays, zeroed. The result is [`prune`]d.
pub fn shadow_eliminate(p: &System, col: usize) -> PolyResult<System> {
    let n = p.n_vars;
    // Exact substitution through an equality when one mentions `col`.
    if let Some(k) = p
        .eqs
        .iter()
        .position(|r| r[col].abs() == 1)
        .or_else(|| p.eqs.iter().position(|r| r[col] != 0))
    {
        let e = p.eqs[k].clone();
        let a = e[col];
        let mut out = System::new(n);
        for (j, r) in p.eqs.iter().enumerate() {
            if j == k {
                continue;
            }
            let r2 = if r[col] == 0 {
                r.clone()
            } else {
                combine(a, r, -r[col], &e)?
            };
            out.eqs.push(reduce_eq(r2));
        }
        for r in &p.ineqs {
            let r2 = if r[col] == 0 {
                r.clone()
            } else {
                // |a|·r − sign(a)·r[col]·e keeps the direction.
                combine(a.abs(), r, -a.signum() * r[col], &e)?
            };
            out.ineqs.push(reduce_ineq(r2));
        }
        return prune(out);
    }
    let mut out = System::new(n);
    out.eqs = p.eqs.clone();
    let (mut pos, mut neg) = (Vec::new(), Vec::new());
    for r in &p.ineqs {
        match r[col].signum() {
            0 => out.ineqs.push(r.clone()),
            1 => pos.push(r),
            _ => neg.push(r),
        }
    }
    for a in &pos {
        for b in &neg {
            out.ineqs.push(reduce_ineq(combine(-b[col], a, a[col], b)?));
        }
    }
    prune(out)
}

/// `p` without trivial rows (`c >= 0`, `0 = 0`), duplicates (rows sorted)
/// and inequalities redundant over the rationals (LP).
pub fn prune(mut p: System) -> PolyResult<System> {
    let n = p.n_vars;
    p.ineqs
        .retain(|r| !(r[..n].iter().all(|&x| x == 0) && r[n] >= 0));
    p.eqs.retain(|r| !r.iter().all(|&x| x == 0));
    p.ineqs.sort();
    p.ineqs.dedup();
    p.eqs.sort();
    p.eqs.dedup();
    if p.ineqs.len() > 1 {
        let red = solver::redundant_ineqs(&p)?;
        if red.len() < p.ineqs.len() {
            p.ineqs = drop_rows(std::mem::take(&mut p.ineqs), &red);
        }
    }
    Ok(p)
}

/// A bound term `(e, d)` on a variable `x_k`: `x_k >= ceil(e·(x, 1)/d)`
/// (lower) or `x_k <= floor(e·(x, 1)/d)` (upper), `d >= 1`, `e_k = 0`.
pub type VarBound = (Vec<i64>, i64);

/// The bound terms on `x_k` of the rows of `p`: (lowers, uppers), in the
/// order of the inequalities, then of the equalities (each giving a lower
/// and an upper term). Coefficients are negated saturating.
pub fn var_bounds(p: &System, k: usize) -> (Vec<VarBound>, Vec<VarBound>) {
    let mut lo = Vec::new();
    let mut up = Vec::new();
    let mut add = |r: &Vec<i64>| {
        let a = r[k];
        if a > 0 {
            // a x + e ≥ 0 → x ≥ ceil(−e/a)
            let mut e: Vec<i64> = r.iter().map(|x| x.saturating_neg()).collect();
            e[k] = 0;
            lo.push((e, a));
        } else if a < 0 {
            let mut e = r.clone();
            e[k] = 0;
            up.push((e, a.saturating_neg()));
        }
    };
    for r in &p.ineqs {
        add(r);
    }
    for r in &p.eqs {
        add(r);
        let neg: Vec<i64> = r.iter().map(|x| x.saturating_neg()).collect();
        add(&neg);
    }
    (lo, up)
}

/// The determinant of the square integer matrix `m` (Bareiss'
/// fraction-free elimination: every intermediate is a minor of `m`, and
/// every division is exact). `None` on `i128` overflow (only).
pub fn det(m: &[Vec<i64>]) -> Option<i128> {
    let d = m.len();
    let mut a: Vec<Vec<i128>> = m
        .iter()
        .map(|r| r.iter().map(|&x| i128::from(x)).collect())
        .collect();
    let mut sign = 1i128;
    let mut prev = 1i128;
    for c in 0..d {
        let Some(p) = (c..d).find(|&r| a[r][c] != 0) else {
            return Some(0);
        };
        if p != c {
            a.swap(p, c);
            sign = -sign;
        }
        for r in c + 1..d {
            for j in c + 1..d {
                let x = a[r][j]
                    .checked_mul(a[c][c])?
                    .checked_sub(a[r][c].checked_mul(a[c][j])?)?;
                a[r][j] = x.checked_div(prev)?;
            }
            a[r][c] = 0;
        }
        prev = a[c][c];
    }
    if d == 0 {
        return Some(1);
    }
    a[d - 1][d - 1].checked_mul(sign)
}

/// The rank of the integer matrix `m` (rows of equal length): the number
/// of columns minus the dimension of its integer kernel.
pub fn rank(m: &[Vec<i64>]) -> PolyResult<usize> {
    let cols = m.first().map_or(0, Vec::len);
    Ok(cols - solver::integer_kernel(m, cols)?.len())
}

/// A rational row `num / den` (`den >= 1`).
pub type RatRow = (Vec<i64>, i64);

/// `gcd` on `i128` that never overflows (`1` for the one value that does
/// not fit, `gcd(i128::MIN, 0)`).
fn gcd_wide(a: i128, b: i128) -> i128 {
    if a == i128::MIN || b == i128::MIN {
        let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
        while b != 0 {
            (a, b) = (b, a % b);
        }
        return i128::try_from(a).unwrap_or(1);
    }
    gcd128(a, b)
}

/// The exact inverse of the square integer matrix `m`: row `j` of `m⁻¹` is
/// `num_j / den_j` with `num_j` integer, `den_j >= 1` and
/// `gcd(num_j, den_j) = 1`. `Ok(None)` when `m` is singular; `Overflow`
/// when an intermediate does not fit `i128` or a result `i64`.
///
/// Gauss–Jordan elimination on `[m | I]` with integer row operations
/// (`row_r ← a·row_r − b·row_c`, each row divided by the gcd of its
/// entries afterwards); at the end the left block is diagonal, so row `j`
/// of the right block divided by the diagonal entry is row `j` of `m⁻¹`.
pub fn rational_inverse(m: &[Vec<i64>]) -> PolyResult<Option<Vec<RatRow>>> {
    let d = m.len();
    let mut a: Vec<Vec<i128>> = m
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut row: Vec<i128> = r.iter().map(|&x| i128::from(x)).collect();
            row.extend((0..d).map(|j| i128::from(i == j)));
            row
        })
        .collect();
    let reduce = |row: &mut Vec<i128>| {
        let g = row.iter().fold(0i128, |g, &x| gcd_wide(g, x));
        if g > 1 {
            row.iter_mut().for_each(|x| *x /= g);
        }
    };
    for c in 0..d {
        let Some(p) = (c..d)
            .filter(|&r| a[r][c] != 0)
            .min_by_key(|&r| a[r][c].unsigned_abs())
        else {
            return Ok(None);
        };
        a.swap(c, p);
        let pivot = a[c].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r == c || row[c] == 0 {
                continue;
            }
            let g = gcd_wide(pivot[c], row[c]);
            let (pa, rb) = (pivot[c] / g, row[c] / g);
            for (x, &y) in row.iter_mut().zip(&pivot) {
                let v = x
                    .checked_mul(pa)
                    .and_then(|u| y.checked_mul(rb).and_then(|w| u.checked_sub(w)));
                *x = v.ok_or(PolyError::Overflow)?;
            }
            reduce(row);
        }
    }
    let mut inv = Vec::with_capacity(d);
    for (j, row) in a.iter().enumerate() {
        let mut den = row[j];
        let mut num: Vec<i128> = row[d..].to_vec();
        if den < 0 {
            den = den.checked_neg().ok_or(PolyError::Overflow)?;
            for x in &mut num {
                *x = x.checked_neg().ok_or(PolyError::Overflow)?;
            }
        }
        let g = num.iter().fold(den, |g, &x| gcd_wide(g, x));
        let conv = |x: i128| i64::try_from(x / g).map_err(|_| PolyError::Overflow);
        inv.push((
            num.iter()
                .map(|&x| conv(x))
                .collect::<PolyResult<Vec<i64>>>()?,
            conv(den)?,
        ));
    }
    Ok(Some(inv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Determinant by cofactor expansion (small matrices, small entries).
    fn det_ref(m: &[Vec<i64>]) -> i128 {
        if m.is_empty() {
            return 1;
        }
        (0..m.len())
            .map(|c| {
                let minor: Vec<Vec<i64>> = m[1..]
                    .iter()
                    .map(|r| {
                        r.iter()
                            .enumerate()
                            .filter(|&(j, _)| j != c)
                            .map(|(_, &x)| x)
                            .collect()
                    })
                    .collect();
                let sign = if c % 2 == 0 { 1 } else { -1 };
                sign * i128::from(m[0][c]) * det_ref(&minor)
            })
            .sum()
    }

    fn matrix(d: usize) -> impl Strategy<Value = Vec<Vec<i64>>> {
        proptest::collection::vec(proptest::collection::vec(-3i64..=3, d), d)
    }

    #[test]
    fn inverse_of_a_non_unimodular_triangle() {
        // Row reduction that only reduces below the pivot would never
        // clear the 1 above the 2 here.
        let inv = rational_inverse(&[vec![1, 1], vec![0, 2]])
            .unwrap()
            .unwrap();
        assert_eq!(inv, vec![(vec![2, -1], 2), (vec![0, 1], 2)]);
        assert_eq!(det(&[vec![1, 1], vec![0, 2]]), Some(2));
    }

    #[test]
    fn shadow_of_a_triangle() {
        // 0 <= i, i <= j, j <= N - 1 over (i, j, N): along j, i <= N - 1.
        let mut s = System::new(3);
        s.add_ineq(vec![1, 0, 0, 0]);
        s.add_ineq(vec![-1, 1, 0, 0]);
        s.add_ineq(vec![0, -1, 1, -1]);
        let p = shadow_eliminate(&s, 1).unwrap();
        assert!(p.eqs.is_empty());
        assert_eq!(p.ineqs, vec![vec![-1, 0, 1, -1], vec![1, 0, 0, 0]]);
        let (lo, up) = var_bounds(&p, 0);
        assert_eq!(lo, vec![(vec![0, 0, 0, 0], 1)]);
        assert_eq!(up, vec![(vec![0, 0, 1, -1], 1)]);
        // Through an equality 2i = j: j substituted, inequalities scaled.
        let mut s = System::new(2);
        s.add_eq(vec![2, -1, 0]);
        s.add_ineq(vec![0, 1, -3]);
        let p = shadow_eliminate(&s, 1).unwrap();
        assert_eq!(p.ineqs, vec![vec![1, 0, -2]]);
        // Equalities are reduced without tightening: 2i + 4j + 2 = 0.
        assert_eq!(reduce_eq(vec![2, 4, 2]), vec![1, 2, 1]);
        assert_eq!(reduce_ineq(vec![2, 4, 3]), vec![1, 2, 1]);
    }

    #[test]
    fn gcd_lcm_and_rank() {
        assert_eq!(gcd(12, -18), 6);
        assert_eq!(gcd(0, 0), 0);
        assert_eq!(gcd(i64::MIN, 0), 1);
        assert_eq!(lcm(4, 6), Ok(12));
        assert_eq!(lcm(i64::MAX, 2), Err(PolyError::Overflow));
        assert_eq!(rank(&[vec![1, 2], vec![2, 4]]), Ok(1));
        assert_eq!(rank(&[vec![1, 2], vec![0, 3]]), Ok(2));
        assert_eq!(rank(&[]), Ok(0));
    }

    proptest! {
        /// `det` agrees with cofactor expansion.
        #[test]
        fn det_is_exact(m in (0usize..=4).prop_flat_map(matrix)) {
            prop_assert_eq!(det(&m), Some(det_ref(&m)));
        }

        /// `rank` is the size of the largest non-singular square
        /// submatrix (brute force over row and column subsets).
        #[test]
        fn rank_is_exact(m in (1usize..=3).prop_flat_map(matrix)) {
            let d = m.len();
            let mut best = 0;
            for rows in 0u32..(1 << d) {
                for cols in 0u32..(1 << d) {
                    let k = rows.count_ones();
                    if k != cols.count_ones() || k as usize <= best {
                        continue;
                    }
                    let sub: Vec<Vec<i64>> = (0..d)
                        .filter(|&r| rows >> r & 1 == 1)
                        .map(|r| (0..d).filter(|&c| cols >> c & 1 == 1).map(|c| m[r][c]).collect())
                        .collect();
                    if det_ref(&sub) != 0 {
                        best = k as usize;
                    }
                }
            }
            prop_assert_eq!(rank(&m).unwrap(), best);
        }

        /// `m⁻¹·m = I` row by row, rows in lowest terms; `None` exactly
        /// for singular matrices.
        #[test]
        fn inverse_is_exact(m in (1usize..=4).prop_flat_map(matrix)) {
            let d = m.len();
            let inv = rational_inverse(&m).unwrap();
            prop_assert_eq!(inv.is_none(), det_ref(&m) == 0);
            let Some(inv) = inv else { return Ok(()) };
            for (j, (num, den)) in inv.iter().enumerate() {
                prop_assert!(*den >= 1);
                prop_assert_eq!(num.iter().fold(*den, |g, &x| gcd(g, x)), 1);
                for c in 0..d {
                    let s: i64 = num.iter().zip(&m).map(|(x, row)| x * row[c]).sum();
                    prop_assert_eq!(s, if j == c { *den } else { 0 });
                }
            }
        }
    }
}
