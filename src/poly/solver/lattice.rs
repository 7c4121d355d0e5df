//! Integer lattice tools: column echelon form by unimodular column
//! operations, and exact elimination of integer equalities.
//!
//! Owns: `col_echelon` (M·U = [H | 0] with U unimodular, H lower
//! triangular with nonzero diagonal) and `eliminate_eqs` (the integer
//! solutions of `E x + e = 0` as `x = x0 + B y`, `y ∈ Z^k`).
//! All arithmetic is checked `i128`; overflow is `PolyError::Overflow`.
//!
//! Must not know about: the simplex tableau, sampling, optimization.

use crate::poly::{PolyError, PolyResult};

fn ck(v: Option<i128>) -> PolyResult<i128> {
    v.ok_or(PolyError::Overflow)
}

/// Result of [`col_echelon`].
pub(crate) struct Echelon {
    /// Unimodular `n × n` matrix `U` (rows indexed by original variable).
    pub u: Vec<Vec<i128>>,
    /// `M·U`: row `i` has nonzeros only in columns `< rank`.
    pub mu: Vec<Vec<i128>>,
    /// Rank of `M`.
    pub rank: usize,
    /// For each pivot column `c < rank`, the row of `M` that created it.
    pub pivot_row: Vec<usize>,
}

/// Column echelon form of the `k × n` matrix `m` by unimodular column
/// operations (swaps, negations, adding integer multiples of a column to
/// another): returns `U` with `det U = ±1` and `M·U` lower "staircase"
/// triangular: the pivot of the `c`-th independent row is in column `c`
/// (nonzero, positive) and all later columns of that row are 0.
pub(crate) fn col_echelon(m: &[Vec<i128>], n: usize) -> PolyResult<Echelon> {
    let mut mu: Vec<Vec<i128>> = m.iter().map(|r| r[..n].to_vec()).collect();
    let mut u: Vec<Vec<i128>> = (0..n)
        .map(|i| (0..n).map(|j| i128::from(i == j)).collect())
        .collect();
    let mut p = 0usize;
    let mut pivot_row = Vec::new();
    // Column operation helpers on both mu and u.
    fn swap_cols(a: &mut [Vec<i128>], x: usize, y: usize) {
        for row in a.iter_mut() {
            row.swap(x, y);
        }
    }
    fn axpy_col(a: &mut [Vec<i128>], dst: usize, src: usize, q: i128) -> PolyResult<()> {
        // col dst -= q * col src
        for row in a.iter_mut() {
            if row[src] != 0 {
                row[dst] = ck(row[dst].checked_sub(ck(q.checked_mul(row[src]))?))?;
            }
        }
        Ok(())
    }
    for i in 0..mu.len() {
        if p == n {
            break;
        }
        for c in p + 1..n {
            while mu[i][c] != 0 {
                if mu[i][p] == 0 {
                    swap_cols(&mut mu, p, c);
                    swap_cols(&mut u, p, c);
                    continue;
                }
                let q = mu[i][c] / mu[i][p];
                axpy_col(&mut mu, c, p, q)?;
                axpy_col(&mut u, c, p, q)?;
                if mu[i][c] != 0 {
                    swap_cols(&mut mu, p, c);
                    swap_cols(&mut u, p, c);
                }
            }
        }
        if mu[i][p] != 0 {
            if mu[i][p] < 0 {
                for row in mu.iter_mut().chain(u.iter_mut()) {
                    row[p] = ck(row[p].checked_neg())?;
                }
            }
            pivot_row.push(i);
            p += 1;
        }
    }
    Ok(Echelon {
        u,
        mu,
        rank: p,
        pivot_row,
    })
}

/// Integer solutions of `Σ_k E[i][k] x_k + E[i][n] = 0` (all `i`):
/// `None` if there is none, else `(x0, B)` with `x = x0 + B·y` for all
/// `y ∈ Z^cols(B)` describing exactly the integer solutions (`B` is `n ×
/// (n - rank)`, given by rows).
pub(crate) type Param = (Vec<i128>, Vec<Vec<i128>>);

pub(crate) fn eliminate_eqs(n: usize, eqs: &[Vec<i64>]) -> PolyResult<Option<Param>> {
    let m: Vec<Vec<i128>> = eqs
        .iter()
        .map(|r| r.iter().map(|&v| v as i128).collect())
        .collect();
    let ech = col_echelon(&m, n)?;
    let rank = ech.rank;
    let mut z = vec![0i128; rank];
    let mut next_pivot = 0usize;
    for (i, row) in ech.mu.iter().enumerate() {
        let is_pivot = next_pivot < rank && ech.pivot_row[next_pivot] == i;
        let upto = next_pivot;
        let mut s = m[i][n];
        for (c, zc) in z.iter().enumerate().take(upto) {
            if row[c] != 0 {
                s = ck(s.checked_add(ck(row[c].checked_mul(*zc))?))?;
            }
        }
        if is_pivot {
            let a = row[next_pivot];
            if s % a != 0 {
                return Ok(None);
            }
            z[next_pivot] = ck(ck(s.checked_neg())?.checked_div(a))?;
            next_pivot += 1;
        } else if s != 0 {
            return Ok(None);
        }
    }
    let mut x0 = vec![0i128; n];
    for (k, x) in x0.iter_mut().enumerate() {
        for (c, zc) in z.iter().enumerate() {
            if ech.u[k][c] != 0 && *zc != 0 {
                *x = ck(x.checked_add(ck(ech.u[k][c].checked_mul(*zc))?))?;
            }
        }
    }
    let b: Vec<Vec<i128>> = ech.u.iter().map(|r| r[rank..].to_vec()).collect();
    Ok(Some((x0, b)))
}

/// `row` (n + 1 entries, affine) composed with `x = x0 + B y`: the affine
/// row over `y` (cols(B) + 1 entries).
pub(crate) fn substitute(row: &[i64], x0: &[i128], b: &[Vec<i128>]) -> PolyResult<Vec<i64>> {
    let n = x0.len();
    let k = b.first().map_or(0, |r| r.len());
    let mut out = vec![0i128; k + 1];
    let mut cst = row[n] as i128;
    for v in 0..n {
        let a = row[v] as i128;
        if a == 0 {
            continue;
        }
        cst = ck(cst.checked_add(ck(a.checked_mul(x0[v]))?))?;
        for (c, o) in out.iter_mut().enumerate().take(k) {
            if b[v][c] != 0 {
                *o = ck(o.checked_add(ck(a.checked_mul(b[v][c]))?))?;
            }
        }
    }
    out[k] = cst;
    out.into_iter().map(super::num::to_i64).collect()
}

/// `x0 + B·y` as i64.
pub(crate) fn apply(x0: &[i128], b: &[Vec<i128>], y: &[i64]) -> PolyResult<Vec<i64>> {
    let mut out = Vec::with_capacity(x0.len());
    for (v, x) in x0.iter().enumerate() {
        let mut s = *x;
        for (c, yc) in y.iter().enumerate() {
            if b[v][c] != 0 && *yc != 0 {
                s = ck(s.checked_add(ck(b[v][c].checked_mul(*yc as i128))?))?;
            }
        }
        out.push(super::num::to_i64(s)?);
    }
    Ok(out)
}
