//! The affine form of Farkas' lemma, as used by both schedulers (isl report
//! §6.3): the set of affine forms `c·z + d` that are non-negative on a
//! non-empty polyhedron `P = {z : E z + e = 0, A z + a >= 0}` is the cone
//!
//! ```text
//! K(P) = { (c, d) : ∃ λ0 >= 0, λ >= 0, μ :  c = Aᵀλ + Eᵀμ,  d = λ0 + a·λ + e·μ }.
//! ```
//!
//! We compute `K(P)` explicitly, as a homogeneous system over `(c, d)`, by
//! eliminating the multipliers exactly: equalities by substitution, the
//! rest by Fourier–Motzkin (rational projection is exact; the multipliers
//! are rational, so they must not end up as variables of an integer
//! program). Redundant constraints are pruned with the exact solver. The
//! elimination is `poly::cone::project_cone`; this module builds the
//! system over `(c, d, λ, μ)` it is applied to.
//! The cone only depends on `P`, so it is computed once per dependence
//! piece; [`instantiate`] then substitutes the unknown schedule
//! coefficients for `(c, d)`.
//!
//! Owns: the Farkas cone and its instantiation. Must not know about
//! statements or schedules (callers build the linear forms).

use super::error::{ScheduleError, ScheduleResult};
use crate::poly::cone;
use crate::poly::constraint::EqsIneqs;
use crate::poly::linalg::{dot, normalize_row};
use crate::poly::solver::{self, System};

/// The cone `K(P)` of valid affine forms over `(c_0..c_{n-1}, d)`:
/// `(c, d) ∈ K(P)` iff `eqs·(c,d) = 0` and `ineqs·(c,d) >= 0` (rows of
/// length `n + 1`, no constant: the cone is homogeneous).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FarkasCone {
    /// Number of variables of `P` (the cone lives in dimension `n + 1`).
    pub n: usize,
    pub eqs: Vec<Vec<i64>>,
    pub ineqs: Vec<Vec<i64>>,
}

impl FarkasCone {
    /// Is `c·z + d >= 0` valid on `P`? (`cd = (c, d)`.)
    pub fn contains(&self, cd: &[i64]) -> ScheduleResult<bool> {
        for r in &self.eqs {
            if dot(r, cd).map_err(ScheduleError::from_rows)? != 0 {
                return Ok(false);
            }
        }
        for r in &self.ineqs {
            if dot(r, cd).map_err(ScheduleError::from_rows)? < 0 {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// `K(P)` for `P = poly`, or `None` when `P` is rationally empty (then every
/// affine form is valid on it and the caller drops the piece).
pub fn valid_cone(poly: &System) -> ScheduleResult<Option<FarkasCone>> {
    if !solver::rational_feasible(poly)? {
        return Ok(None);
    }
    fm_cone(poly, true).map(Some)
}

/// The Farkas cone by explicit elimination of the multipliers. With
/// `prune`, redundant inequalities are removed with the exact solver after
/// every Fourier–Motzkin step (keeps the systems small; without it the
/// result is the same cone, possibly with redundant rows).
pub(crate) fn fm_cone(poly: &System, prune: bool) -> ScheduleResult<FarkasCone> {
    let n = poly.n_vars;
    let nk = n + 1;
    let m = poly.ineqs.len();
    let q = poly.eqs.len();
    let nv = nk + m + q;
    // Rows over (c, d, λ, μ), no constant column (homogeneous).
    let mut eqs: Vec<Vec<i64>> = Vec::new();
    let mut ineqs: Vec<Vec<i64>> = Vec::new();
    let neg = |x: i64| x.checked_neg().ok_or(ScheduleError::Overflow);
    for k in 0..=n {
        let mut r = vec![0i64; nv];
        r[k] = 1;
        for (i, a) in poly.ineqs.iter().enumerate() {
            r[nk + i] = neg(a[k])?;
        }
        for (j, e) in poly.eqs.iter().enumerate() {
            r[nk + m + j] = neg(e[k])?;
        }
        if k < n {
            eqs.push(r);
        } else {
            // d - a·λ - e·μ = λ0 >= 0.
            ineqs.push(r);
        }
    }
    for i in 0..m {
        let mut r = vec![0i64; nv];
        r[nk + i] = 1;
        ineqs.push(r);
    }
    // Eliminate the multipliers: equalities by substitution, the rest by
    // Fourier–Motzkin (rational projection, exact for the cone).
    let (eqs, ineqs) =
        cone::project_cone(nv, nk, eqs, ineqs, prune).map_err(ScheduleError::from_rows)?;
    Ok(FarkasCone { n, eqs, ineqs })
}

/// Substitute linear forms for the cone variables: `forms[k]` (a row over
/// the caller's `nv` variables plus a constant) is the value of the `k`-th
/// cone variable (`c_k`, then `d` last). Returns `(eqs, ineqs)` (rows over
/// the caller's variables plus a constant) expressing `(forms) ∈ K(P)`.
pub fn instantiate(cone: &FarkasCone, forms: &[Vec<i64>]) -> ScheduleResult<EqsIneqs> {
    if forms.len() != cone.n + 1 {
        return Err(ScheduleError::Internal(format!(
            "Farkas instantiation with {} forms for a cone of dimension {}",
            forms.len(),
            cone.n + 1
        )));
    }
    let width = forms.first().map_or(0, |f| f.len());
    // The forms are sparse (a schedule coefficient or two of a statement
    // pair among hundreds of variables): only their non-zero entries are
    // combined.
    let sparse: Vec<Vec<(usize, i64)>> = forms
        .iter()
        .map(|f| {
            f.iter()
                .enumerate()
                .filter(|&(_, &x)| x != 0)
                .map(|(i, &x)| (i, x))
                .collect()
        })
        .collect();
    let apply = |g: &Vec<i64>| -> ScheduleResult<Vec<i64>> {
        let mut out = vec![0i64; width];
        for (k, f) in sparse.iter().enumerate() {
            if g[k] == 0 {
                continue;
            }
            for &(i, x) in f {
                out[i] = g[k]
                    .checked_mul(x)
                    .and_then(|p| out[i].checked_add(p))
                    .ok_or(ScheduleError::Overflow)?;
            }
        }
        normalize_row(&mut out);
        Ok(out)
    };
    let eqs = cone
        .eqs
        .iter()
        .map(apply)
        .collect::<ScheduleResult<Vec<_>>>()?;
    let ineqs = cone
        .ineqs
        .iter()
        .map(apply)
        .collect::<ScheduleResult<Vec<_>>>()?;
    Ok((eqs, ineqs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Brute force: min of c·z + d over the integer points of a box with
    /// integer corners (the box's vertices are integral, so the rational
    /// and integer minima agree).
    fn valid_on_points(points: &[Vec<i64>], cd: &[i64]) -> bool {
        let n = cd.len() - 1;
        points
            .iter()
            .all(|z| (0..n).map(|k| cd[k] * z[k]).sum::<i64>() + cd[n] >= 0)
    }

    fn box_system(lo: &[i64], hi: &[i64], extra_eq: Option<Vec<i64>>) -> System {
        let n = lo.len();
        let mut s = System::new(n);
        for k in 0..n {
            let mut r = vec![0; n + 1];
            r[k] = 1;
            r[n] = -lo[k];
            s.add_ineq(r);
            let mut r = vec![0; n + 1];
            r[k] = -1;
            r[n] = hi[k];
            s.add_ineq(r);
        }
        if let Some(e) = extra_eq {
            s.add_eq(e);
        }
        s
    }

    fn points(lo: &[i64], hi: &[i64]) -> Vec<Vec<i64>> {
        let mut pts = vec![vec![]];
        for k in 0..lo.len() {
            let mut next = Vec::new();
            for p in &pts {
                for v in lo[k]..=hi[k] {
                    let mut q: Vec<i64> = p.clone();
                    q.push(v);
                    next.push(q);
                }
            }
            pts = next;
        }
        pts
    }

    #[test]
    fn interval_cone() {
        // P = [0, 10]: valid iff d >= 0 and 10c + d >= 0.
        let cone = fm_cone(&box_system(&[0], &[10], None), false).unwrap();
        for c in -3..=3 {
            for d in -40..=40 {
                assert_eq!(
                    cone.contains(&[c, d]).unwrap(),
                    d >= 0 && 10 * c + d >= 0,
                    "c={c} d={d}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn cone_matches_enumeration_on_boxes(
            lo in proptest::collection::vec(-3i64..3, 1..=3),
            ext in proptest::collection::vec(0i64..4, 3),
            cd in proptest::collection::vec(-4i64..5, 4),
        ) {
            let n = lo.len();
            let hi: Vec<i64> = (0..n).map(|k| lo[k] + ext[k]).collect();
            let cone = fm_cone(&box_system(&lo, &hi, None), false).unwrap();
            let cd = &cd[..=n];
            prop_assert_eq!(cone.contains(cd).unwrap(), valid_on_points(&points(&lo, &hi), cd));
        }

        #[test]
        fn cone_matches_enumeration_with_equality(
            lo in proptest::collection::vec(-3i64..3, 2),
            ext in proptest::collection::vec(0i64..4, 2),
            shift in -2i64..3,
            cd in proptest::collection::vec(-4i64..5, 3),
        ) {
            // P = box ∩ {z1 = z0 + shift}: a segment with integer ends.
            let hi: Vec<i64> = (0..2).map(|k| lo[k] + ext[k]).collect();
            let pts: Vec<Vec<i64>> = points(&lo, &hi).into_iter().filter(|z| z[1] == z[0] + shift).collect();
            prop_assume!(!pts.is_empty());
            let cone = fm_cone(&box_system(&lo, &hi, Some(vec![1, -1, shift])), false).unwrap();
            // The segment's ends are integral, so enumeration is exact.
            prop_assert_eq!(cone.contains(&cd).unwrap(), valid_on_points(&pts, &cd));
        }
    }

    #[test]
    fn instantiate_substitutes() {
        // Cone of [0,10]: {d >= 0, 10c + d >= 0}; c = x0 - x1, d = x2 - 1.
        let cone = fm_cone(&box_system(&[0], &[10], None), false).unwrap();
        let (e, i) = instantiate(&cone, &[vec![1, -1, 0, 0], vec![0, 0, 1, -1]]).unwrap();
        assert!(e.is_empty());
        let mut i = i;
        i.sort();
        let mut want = vec![vec![0, 0, 1, -1], vec![10, -10, 1, -1]];
        want.sort();
        assert_eq!(i, want);
    }
}
