//! Small exact linear algebra on integer matrices (rows of `i64`): rank, a
//! normalized integer basis of the kernel (the scheduler's test of linear
//! independence of new schedule rows, isl report §6.5.6), checked dot
//! products and gcd normalization of whole rows.
//!
//! Rank and kernel are computed over `BigRational`, so nothing overflows
//! inside; results are converted back to `i64` with a checked conversion
//! (`PolyError::Overflow` when they do not fit).
//!
//! Must not know about: statements, dependences, schedules, the solver.

use super::error::{PolyError, PolyResult};
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};

fn to_rat(m: &[Vec<i64>], ncols: usize) -> Vec<Vec<BigRational>> {
    m.iter()
        .map(|r| {
            (0..ncols)
                .map(|j| BigRational::from_integer(BigInt::from(r.get(j).copied().unwrap_or(0))))
                .collect()
        })
        .collect()
}

/// Reduced row echelon form in place; returns the pivot columns.
fn rref(a: &mut [Vec<BigRational>], ncols: usize) -> Vec<usize> {
    let mut pivots = Vec::new();
    let mut row = 0;
    for col in 0..ncols {
        if row >= a.len() {
            break;
        }
        let Some(p) = (row..a.len()).find(|&r| !a[r][col].is_zero()) else {
            continue;
        };
        a.swap(row, p);
        let inv = BigRational::one() / a[row][col].clone();
        for v in a[row].iter_mut() {
            *v = v.clone() * inv.clone();
        }
        for r in 0..a.len() {
            if r != row && !a[r][col].is_zero() {
                let f = a[r][col].clone();
                let pivot_row = a[row].clone();
                for (x, p) in a[r].iter_mut().zip(&pivot_row) {
                    *x = x.clone() - f.clone() * p.clone();
                }
            }
        }
        pivots.push(col);
        row += 1;
    }
    pivots
}

/// Rank of the matrix formed by the first `ncols` entries of each row
/// (missing entries count as zero).
pub fn rank(m: &[Vec<i64>], ncols: usize) -> usize {
    let mut a = to_rat(m, ncols);
    rref(&mut a, ncols).len()
}

/// Scale a rational vector to the primitive integer vector with the same
/// direction (entries coprime).
fn primitive(v: &[BigRational]) -> PolyResult<Vec<i64>> {
    let mut l = BigInt::one();
    for x in v {
        l = l.lcm(x.denom());
    }
    let ints: Vec<BigInt> = v
        .iter()
        .map(|x| (x * BigRational::from_integer(l.clone())).to_integer())
        .collect();
    let mut g = BigInt::zero();
    for x in &ints {
        g = g.gcd(x);
    }
    if g.is_zero() {
        g = BigInt::one();
    }
    ints.iter()
        .map(|x| (x / &g).to_i64().ok_or(PolyError::Overflow))
        .collect()
}

/// A basis `K` of the rational kernel `{x : C x = 0}` of `C` (first `ncols`
/// columns), as primitive integer rows normalized as in the isl report
/// §6.5.6: Gaussian elimination from the last column (so rows have as many
/// trailing zeros as possible), each row lexicographically positive, rows
/// sorted by the position of their last non-zero entry. A vector `y` is
/// linearly independent of the rows of `C` iff `K y != 0`.
pub fn kernel_basis(c: &[Vec<i64>], ncols: usize) -> PolyResult<Vec<Vec<i64>>> {
    let mut a = to_rat(c, ncols);
    let pivots = rref(&mut a, ncols);
    // Kernel vectors: one per free column f: x_f = 1, x_p = -a[row(p)][f].
    let mut basis: Vec<Vec<BigRational>> = Vec::new();
    for f in (0..ncols).filter(|f| !pivots.contains(f)) {
        let mut v = vec![BigRational::zero(); ncols];
        v[f] = BigRational::one();
        for (r, &p) in pivots.iter().enumerate() {
            v[p] = -a[r][f].clone();
        }
        basis.push(v);
    }
    // Echelon form from the right: eliminate last columns first.
    let mut out: Vec<Vec<BigRational>> = Vec::new();
    let mut rest = basis;
    for col in (0..ncols).rev() {
        let Some(p) = rest.iter().position(|v| !v[col].is_zero()) else {
            continue;
        };
        let piv = rest.remove(p);
        for v in rest.iter_mut() {
            if !v[col].is_zero() {
                let f = v[col].clone() / piv[col].clone();
                for k in 0..ncols {
                    let sub = f.clone() * piv[k].clone();
                    v[k] = v[k].clone() - sub;
                }
            }
        }
        out.push(piv);
    }
    // `out` is ordered by decreasing last-nonzero position; reverse it.
    out.reverse();
    let mut res = Vec::new();
    for v in out {
        let mut r = primitive(&v)?;
        if let Some(first) = r.iter().find(|x| **x != 0) {
            if *first < 0 {
                for x in r.iter_mut() {
                    *x = -*x;
                }
            }
        }
        res.push(r);
    }
    Ok(res)
}

/// The variables `targets` as integer affine functions of the others on
/// the solutions of the equalities `eqs` (rows over `n` variables, then
/// the constant): for each `j` in `targets`, a row `f_j` over `(x, 1)`
/// with zeros in every target column such that `x_j = f_j·(x, 1)` whenever
/// `eqs·(x, 1) = 0`. `None` when the equalities do not determine some
/// target, or determine it only with a non-integer coefficient.
///
/// Reduced row echelon form over the rationals with the target columns
/// first: target `j` is determined iff it is a pivot column whose row has
/// zeros in the non-pivot target columns.
pub fn solve_for(
    eqs: &[Vec<i64>],
    n: usize,
    targets: &[usize],
) -> PolyResult<Option<Vec<Vec<i64>>>> {
    Ok(solve_each(eqs, n, targets)?.into_iter().collect())
}

/// [`solve_for`] target by target: entry `k` is `Some(f)` with `x_j =
/// f·(x, 1)` (`j = targets[k]`, zeros in every target column) when the
/// equalities determine `x_j` as an integer affine function of the
/// non-target variables, else `None`.
pub fn solve_each(
    eqs: &[Vec<i64>],
    n: usize,
    targets: &[usize],
) -> PolyResult<Vec<Option<Vec<i64>>>> {
    if targets.iter().any(|&j| j >= n) {
        return Err(PolyError::Invalid(format!(
            "solve_for: a target column is not among the {n} variables"
        )));
    }
    // Column order: targets, the other variables, the constant.
    let mut order: Vec<usize> = targets.to_vec();
    order.extend((0..=n).filter(|c| !targets.contains(c)));
    let permuted: Vec<Vec<i64>> = eqs
        .iter()
        .map(|r| {
            order
                .iter()
                .map(|&c| r.get(c).copied().unwrap_or(0))
                .collect()
        })
        .collect();
    let mut a = to_rat(&permuted, n + 1);
    let pivots = rref(&mut a, n + 1);
    let nt = targets.len();
    let mut out = Vec::with_capacity(nt);
    'target: for pos in 0..nt {
        let Some(r) = pivots.iter().position(|&p| p == pos) else {
            out.push(None);
            continue;
        };
        // Row r: x_pos + Σ_{c > pos} a[r][c]·x_c = 0 (pivot normalized to 1).
        if (0..nt).any(|c| c != pos && !a[r][c].is_zero()) {
            out.push(None);
            continue;
        }
        let mut f = vec![0i64; n + 1];
        for (c, &orig) in order.iter().enumerate().skip(nt) {
            let v = -a[r][c].clone();
            if !v.is_integer() {
                out.push(None);
                continue 'target;
            }
            f[orig] = v.to_integer().to_i64().ok_or(PolyError::Overflow)?;
        }
        out.push(Some(f));
    }
    Ok(out)
}

/// The columns of `candidates`, tried in that order, that the equalities
/// `eqs` (rows over `n` variables, then the constant) determine together:
/// a greedy maximal set `J` such that every `x_j`, `j ∈ J`, is an integer
/// affine function `f_j·(x, 1)` of the variables outside `J` and outside
/// `excluded` ([`solve_for`] with the targets `J`, each `f_j` zero in the
/// columns `excluded`).
pub fn determined_columns(
    eqs: &[Vec<i64>],
    n: usize,
    candidates: &[usize],
    excluded: &[usize],
) -> PolyResult<Vec<usize>> {
    let mut set: Vec<usize> = Vec::new();
    if eqs.is_empty() {
        return Ok(set);
    }
    for &j in candidates {
        let mut trial = set.clone();
        trial.push(j);
        if let Some(fs) = solve_for(eqs, n, &trial)? {
            if fs.iter().all(|f| excluded.iter().all(|&c| f[c] == 0)) {
                set = trial;
            }
        }
    }
    Ok(set)
}

/// `Σ a_k b_k` with checked arithmetic.
pub fn dot(a: &[i64], b: &[i64]) -> PolyResult<i64> {
    let mut s: i64 = 0;
    for (x, y) in a.iter().zip(b) {
        s = x
            .checked_mul(*y)
            .and_then(|p| s.checked_add(p))
            .ok_or(PolyError::Overflow)?;
    }
    Ok(s)
}

/// Absolute value that reports overflow instead of wrapping.
pub fn abs(x: i64) -> PolyResult<i64> {
    x.checked_abs().ok_or(PolyError::Overflow)
}

/// The non-zero entries `(k, row[k])` of `row`, in order. Zeros are
/// skipped a block of eight at a time (one OR of the block, which the
/// compiler vectorizes): the scheduling systems' rows have a handful of
/// non-zero entries among hundreds.
pub fn nonzeros(row: &[i64]) -> NonZeros<'_> {
    NonZeros { row, k: 0 }
}

/// The iterator of [`nonzeros`].
pub struct NonZeros<'a> {
    row: &'a [i64],
    /// The next entry to look at.
    k: usize,
}

impl Iterator for NonZeros<'_> {
    type Item = (usize, i64);

    fn next(&mut self) -> Option<(usize, i64)> {
        const BLOCK: usize = 8;
        while let Some(&x) = self.row.get(self.k) {
            if self.k.is_multiple_of(BLOCK) {
                if let Some(block) = self.row.get(self.k..self.k + BLOCK) {
                    if block.iter().fold(0, |acc, &y| acc | y) == 0 {
                        self.k += BLOCK;
                        continue;
                    }
                }
            }
            self.k += 1;
            if x != 0 {
                return Some((self.k - 1, x));
            }
        }
        None
    }
}

/// Divide a row by the gcd of its entries (all of them, constant included)
/// so that equal constraints compare equal. Leaves a zero row unchanged.
pub fn normalize_row(row: &mut [i64]) {
    // Zeros do not change the gcd, and once it is 1 nothing will: sparse
    // rows of hundreds of entries (the scheduling systems') are scanned
    // without a gcd step per entry.
    let mut g = 0i64;
    for &x in row.iter() {
        if x != 0 {
            g = g.gcd(&x);
            if g == 1 {
                return;
            }
        }
    }
    if g > 1 {
        for x in row.iter_mut() {
            *x /= g;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonzeros_lists_every_non_zero_entry_in_order() {
        let mut row = vec![0i64; 37];
        for (k, x) in [(0, 3), (7, -1), (8, 5), (20, i64::MIN), (36, 2)] {
            row[k] = x;
        }
        let got: Vec<(usize, i64)> = nonzeros(&row).collect();
        assert_eq!(got, vec![(0, 3), (7, -1), (8, 5), (20, i64::MIN), (36, 2)]);
        assert_eq!(nonzeros(&[]).count(), 0);
        assert_eq!(nonzeros(&[0; 16]).count(), 0);
    }

    #[test]
    fn determined_columns_of_a_statement_domain() {
        // Over (i, j, k, l, N, 1): i = j and k = 2i + 1 determine k and
        // j from i (tried innermost first; l is free, and i is left once j
        // and k are taken).
        let eqs = vec![vec![1, -1, 0, 0, 0, 0], vec![2, 0, -1, 0, 0, 1]];
        assert_eq!(
            determined_columns(&eqs, 5, &[3, 2, 1, 0], &[4]).unwrap(),
            vec![2, 1]
        );
        // i = N: i is determined only through the parameter, excluded.
        let eqs = vec![vec![1, 0, 0, 0, -1, 0]];
        assert!(determined_columns(&eqs, 5, &[3, 2, 1, 0], &[4])
            .unwrap()
            .is_empty());
        // 2j = l: l = 2j is integer, j = l/2 is not (j is kept once l is
        // taken, and alone it would not be integer either).
        let eqs = vec![vec![0, 2, 0, -1, 0, 0]];
        assert_eq!(
            determined_columns(&eqs, 5, &[3, 2, 1, 0], &[4]).unwrap(),
            vec![3]
        );
        assert!(determined_columns(&eqs, 5, &[1], &[4]).unwrap().is_empty());
        // No equalities: nothing.
        assert!(determined_columns(&[], 5, &[0, 1], &[]).unwrap().is_empty());
    }

    #[test]
    fn kernel_of_isl_example_11() {
        // C = [4 2 1] → normalized kernel rows [1 -2 0], [1 0 -4].
        let k = kernel_basis(&[vec![4, 2, 1]], 3).unwrap();
        assert_eq!(k, vec![vec![1, -2, 0], vec![1, 0, -4]]);
        // C = [[4 2 1],[1 0 0]] → [0 1 -2].
        let k = kernel_basis(&[vec![4, 2, 1], vec![1, 0, 0]], 3).unwrap();
        assert_eq!(k, vec![vec![0, 1, -2]]);
    }

    #[test]
    fn solve_for_access_equalities() {
        // Over (s0, s1, t0, 1): t0 = s1 - 1 from s1 - t0 - 1 = 0.
        let f = solve_for(&[vec![0, 1, -1, -1]], 3, &[2]).unwrap().unwrap();
        assert_eq!(f, vec![vec![0, 1, 0, -1]]);
        // 2 t0 = s0 determines t0 only with a coefficient 1/2.
        assert_eq!(solve_for(&[vec![1, 0, -2, 0]], 3, &[2]).unwrap(), None);
        // Nothing ties t0 to the sources.
        assert_eq!(solve_for(&[vec![1, -1, 0, 0]], 3, &[2]).unwrap(), None);
        // Two targets tied together and to the sources: t0 + t1 = s0, t0 - t1 = 0
        // gives t0 = t1 = s0 / 2 (not integral); with t1 = s1: t0 = s0 - s1.
        assert_eq!(
            solve_for(&[vec![1, 0, -1, -1, 0], vec![0, 0, 1, -1, 0]], 4, &[2, 3]).unwrap(),
            None
        );
        let f = solve_for(&[vec![1, 0, -1, -1, 0], vec![0, 1, 0, -1, 0]], 4, &[2, 3])
            .unwrap()
            .unwrap();
        assert_eq!(f, vec![vec![1, -1, 0, 0, 0], vec![0, 1, 0, 0, 0]]);
    }

    #[test]
    fn kernel_of_empty_is_identity() {
        let k = kernel_basis(&[], 2).unwrap();
        assert_eq!(k, vec![vec![1, 0], vec![0, 1]]);
    }

    #[test]
    fn rank_and_kernel_agree() {
        // Property on a grid of small matrices: rank + dim ker = ncols and
        // every kernel row is orthogonal to every row of C.
        let vals = [-2i64, -1, 0, 1, 3];
        for a in vals {
            for b in vals {
                for c in vals {
                    for d in vals {
                        let m = vec![vec![a, b, 1], vec![c, d, a]];
                        let k = kernel_basis(&m, 3).unwrap();
                        assert_eq!(rank(&m, 3) + k.len(), 3);
                        for kr in &k {
                            for r in &m {
                                assert_eq!(dot(kr, r).unwrap(), 0);
                            }
                            assert!(kr.iter().any(|x| *x != 0));
                        }
                    }
                }
            }
        }
    }
}
