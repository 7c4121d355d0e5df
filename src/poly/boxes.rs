//! Symbolic bounding boxes: for one dimension of a union of polyhedra, an
//! affine lower and upper bound in the parameters that every integer point
//! of every piece satisfies.
//!
//! Owns [`dim_range`] (on integer row systems, for `codegen::scan`'s array
//! boxes) and [`Set::dim_range`] (on sets, for the range of a result index
//! that `ir` checks selections against). Both give the same bounds for the
//! same domain, so that a selection's range is its array's box.
//!
//! # The math
//! Pieces are systems over `(x_0 .. x_{d-1}, p, 1)`. For dimension `k`,
//! each piece's rational shadow on `(x_k, p)` (Fourier–Motzkin along every
//! other dimension, [`shadow_eliminate`]) has rows `a·x_k + e(p) >= 0`;
//! those with `a = 1` are candidate lower bounds `x_k >= −e(p)`, with
//! `a = −1` candidate upper bounds `x_k <= e(p)` (an equality gives both).
//! A candidate is kept when the solver proves that no integer point of any
//! piece lies beyond it (`lo − x_k − 1 >= 0`, resp. `x_k − up − 1 >= 0`,
//! has no integer solution); the first valid candidate of each side, in
//! the order of the pieces and their rows, is the bound. `None` when a
//! side has no valid unit-coefficient candidate.
//!
//! Must not know about: loops, arrays, names.

use super::bounds::shadow_eliminate;
use super::error::{PolyError, PolyResult};
use super::set::Set;
use super::solver::{self, System};

/// `(lower, upper)` rows over `(p, 1)` bounding dimension `k` of the union
/// of `pieces` (systems over `(x_0 .. x_{d-1}, p, 1)`, `n_par`
/// parameters): `lower·(p, 1) <= x_k <= upper·(p, 1)` at every integer
/// point of every piece (see the module comment); `None` when no such
/// affine pair with unit coefficients is found.
pub fn dim_range(
    pieces: &[System],
    d: usize,
    k: usize,
    n_par: usize,
) -> PolyResult<Option<(Vec<i64>, Vec<i64>)>> {
    let mut lows: Vec<Vec<i64>> = Vec::new();
    let mut ups: Vec<Vec<i64>> = Vec::new();
    for p in pieces {
        let mut q = p.clone();
        for j in 0..d {
            if j != k {
                q = shadow_eliminate(&q, j)?;
            }
        }
        let mut rows = q.ineqs.clone();
        for e in &q.eqs {
            rows.push(e.clone());
            rows.push(e.iter().map(|x| x.saturating_neg()).collect());
        }
        for r in rows {
            // a·x_k + e ≥ 0 with e over the parameters
            let e: Vec<i64> = r[d..].to_vec();
            if r[k] == 1 {
                // x_k ≥ −e
                lows.push(neg(&e)?);
            } else if r[k] == -1 {
                ups.push(e);
            }
        }
    }
    // No integer point of any piece beyond the bound.
    let valid = |bound: &[i64], lower: bool| -> PolyResult<bool> {
        for p in pieces {
            let mut s = p.clone();
            let mut r = vec![0i64; d + n_par + 1];
            // lower: lo − x_k − 1 ≥ 0 ; upper: x_k − up − 1 ≥ 0
            for (j, &b) in bound.iter().enumerate() {
                r[d + j] = if lower { b } else { ovf(b.checked_neg())? };
            }
            r[k] = if lower { -1 } else { 1 };
            r[d + n_par] = ovf(r[d + n_par].checked_sub(1))?;
            s.add_ineq(r);
            if solver::integer_sample(&s)?.is_some() {
                return Ok(false);
            }
        }
        Ok(true)
    };
    let mut lo = None;
    for c in &lows {
        if valid(c, true)? {
            lo = Some(c.clone());
            break;
        }
    }
    let mut up = None;
    for c in &ups {
        if valid(c, false)? {
            up = Some(c.clone());
            break;
        }
    }
    Ok(lo.zip(up))
}

fn ovf(x: Option<i64>) -> PolyResult<i64> {
    x.ok_or(PolyError::Overflow)
}

fn neg(e: &[i64]) -> PolyResult<Vec<i64>> {
    e.iter().map(|x| ovf(x.checked_neg())).collect()
}

impl Set {
    /// The pieces as systems over `(dims, params, 1)` (the layout of
    /// [`dim_range`]; a set's own rows are `[params, dims, 1]`).
    pub fn dims_first_systems(&self) -> Vec<System> {
        let (nd, np) = (self.n_dims(), self.n_params());
        let reorder = |r: &Vec<i64>| -> Vec<i64> {
            let mut out = Vec::with_capacity(r.len());
            out.extend_from_slice(&r[np..np + nd]);
            out.extend_from_slice(&r[..np]);
            out.push(r[np + nd]);
            out
        };
        self.pieces()
            .iter()
            .map(|piece| {
                let mut s = System::new(nd + np);
                s.eqs = piece.eqs().iter().map(reorder).collect();
                s.ineqs = piece.ineqs().iter().map(reorder).collect();
                s
            })
            .collect()
    }

    /// [`dim_range`] of dimension `k` of this set: rows over `(params, 1)`.
    pub fn dim_range(&self, k: usize) -> PolyResult<Option<(Vec<i64>, Vec<i64>)>> {
        dim_range(
            &self.dims_first_systems(),
            self.n_dims(),
            k,
            self.n_params(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rectangle_and_triangle_ranges() {
        let s = Set::parse("[N, K] -> { [k, i] : 0 <= k < K and 0 <= i < N }").unwrap();
        // k: 0 <= k <= K - 1 (rows over (N, K, 1))
        assert_eq!(
            s.dim_range(0).unwrap(),
            Some((vec![0, 0, 0], vec![0, 1, -1]))
        );
        assert_eq!(
            s.dim_range(1).unwrap(),
            Some((vec![0, 0, 0], vec![1, 0, -1]))
        );
        let t = Set::parse("[N] -> { [i, j] : 0 <= j <= i < N }").unwrap();
        // j is bounded by i only: its range over the set is 0..N-1
        assert_eq!(t.dim_range(1).unwrap(), Some((vec![0, 0], vec![1, -1])));
    }

    #[test]
    fn unions_take_a_bound_valid_for_every_piece() {
        let s = Set::parse("[N] -> { [k] : 0 <= k <= N; [k] : 1 <= k <= N + 2 }").unwrap();
        // `k <= N` is not valid for the second piece, `k <= N + 2` is for both
        assert_eq!(s.dim_range(0).unwrap(), Some((vec![0, 0], vec![1, 2])));
        // `k <= 3` fails for the second piece when N > 3, `k <= N` for the
        // first when N < 3: no single affine upper bound
        let u = Set::parse("[N] -> { [k] : 0 <= k <= 3; [k] : 2 <= k <= N }").unwrap();
        assert_eq!(u.dim_range(0).unwrap(), None);
    }

    #[test]
    fn unit_coefficients_only() {
        let s = Set::parse("[N] -> { [k] : 0 <= 2k <= N }").unwrap();
        assert_eq!(s.dim_range(0).unwrap(), None);
    }
}
