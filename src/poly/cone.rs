//! Rational projection of a polyhedral cone: exact elimination of variables
//! from a homogeneous system (rows without a constant column), equalities
//! by substitution, then Fourier–Motzkin on the inequalities.
//!
//! Owns: [`project_cone`]. Unlike `project` (integer projection of sets,
//! with tightening and an exactness test), this is the *rational* shadow:
//! exact for cones, whose eliminated variables range over the rationals
//! (e.g. the multipliers of Farkas' lemma, `schedule::farkas`). Rows are
//! combined with checked arithmetic and divided by the gcd of all their
//! entries, so the result is the same cone for any scaling of the input.
//!
//! Must not know about: what the variables mean (multipliers, schedule
//! coefficients).

use super::constraint::{combine_sub, drop_rows, EqsIneqs};
use super::error::{PolyError, PolyResult};
use super::linalg::normalize_row;
use super::solver::{self, System};
use super::sys;

/// The cone `{x : eqs·x = 0, ineqs·x >= 0}` (rows of length `nv`, no
/// constant column) projected onto its first `keep` variables: the rows
/// `(eqs, ineqs)` of length `keep` of `{y : ∃ z rational, (y, z) in the
/// cone}`. With `prune`, redundant inequalities are removed with the exact
/// solver after every Fourier–Motzkin step and at the end (keeps the
/// systems small; without it the result is the same cone, possibly with
/// redundant rows). All-zero rows are dropped.
pub fn project_cone(
    nv: usize,
    keep: usize,
    mut eqs: Vec<Vec<i64>>,
    mut ineqs: Vec<Vec<i64>>,
    prune: bool,
) -> PolyResult<EqsIneqs> {
    // 1. Equalities: substitute out one eliminated variable per equality
    //    (the one with the smallest coefficient).
    loop {
        let mut best: Option<(usize, usize, i64)> = None;
        for (ei, r) in eqs.iter().enumerate() {
            for (v, &cv) in r.iter().enumerate().skip(keep) {
                if cv != 0 && best.is_none_or(|(_, _, b)| cv.unsigned_abs() < b.unsigned_abs()) {
                    best = Some((ei, v, cv));
                }
            }
        }
        let Some((ei, v, pv)) = best else { break };
        let p = eqs.remove(ei);
        let sign = pv.signum();
        let apv = pv.checked_abs().ok_or(PolyError::Overflow)?;
        for r in eqs.iter_mut().chain(ineqs.iter_mut()) {
            if r[v] != 0 {
                // |pv| r - sign(pv) r_v p: kills v, positive multiplier on r.
                let b = sign.checked_mul(r[v]).ok_or(PolyError::Overflow)?;
                *r = combine(r, apv, &p, b)?;
            }
        }
    }
    // 2. Fourier–Motzkin on the remaining eliminated variables
    //    (inequalities only), cheapest (fewest new rows) first.
    loop {
        dedup(&mut ineqs);
        let mut best: Option<(usize, usize)> = None;
        for v in keep..nv {
            let pos = ineqs.iter().filter(|r| r[v] > 0).count();
            let negc = ineqs.iter().filter(|r| r[v] < 0).count();
            if pos + negc == 0 {
                continue;
            }
            let cost = pos * negc;
            if best.is_none_or(|(_, c)| cost < c) {
                best = Some((v, cost));
            }
        }
        let Some((v, _)) = best else { break };
        let (with, without): (Vec<_>, Vec<_>) = ineqs.into_iter().partition(|r| r[v] != 0);
        let mut next = without;
        let pos: Vec<&Vec<i64>> = with.iter().filter(|r| r[v] > 0).collect();
        let negs: Vec<&Vec<i64>> = with.iter().filter(|r| r[v] < 0).collect();
        for p in &pos {
            for nrow in &negs {
                // b p + a n with a = p_v > 0, b = -n_v > 0.
                next.push(combine(p, -nrow[v], nrow, -p[v])?);
            }
        }
        ineqs = next;
        dedup(&mut ineqs);
        if prune && ineqs.len() > 2 * keep {
            ineqs = prune_rows(nv, &eqs, ineqs)?;
        }
    }
    // Project the rows onto the kept variables.
    let cut = |r: Vec<i64>| -> Vec<i64> { r[..keep].to_vec() };
    let eqs: Vec<Vec<i64>> = eqs
        .into_iter()
        .map(cut)
        .filter(|r| r.iter().any(|x| *x != 0))
        .collect();
    let mut ineqs: Vec<Vec<i64>> = ineqs.into_iter().map(cut).collect();
    dedup(&mut ineqs);
    if prune && !ineqs.is_empty() {
        ineqs = prune_rows(keep, &eqs, ineqs)?;
    }
    Ok((eqs, ineqs))
}

/// `a*p - b*q` entrywise, divided by the gcd of its entries.
fn combine(p: &[i64], a: i64, q: &[i64], b: i64) -> PolyResult<Vec<i64>> {
    let mut r = combine_sub(a, p, b, q)?;
    normalize_row(&mut r);
    Ok(r)
}

/// Drop all-zero rows (`0 >= 0`) and duplicates.
fn dedup(rows: &mut Vec<Vec<i64>>) {
    rows.retain(|r| r.iter().any(|x| *x != 0));
    rows.sort();
    rows.dedup();
}

/// Remove redundant homogeneous inequalities (rows without a constant
/// column) using the exact solver.
fn prune_rows(nv: usize, eqs: &[Vec<i64>], ineqs: Vec<Vec<i64>>) -> PolyResult<Vec<Vec<i64>>> {
    let red = solver::redundant_ineqs(&cone_system(nv, eqs, &ineqs))?;
    Ok(drop_rows(ineqs, &red))
}

/// The solver system of the cone `{x : eqs·x = 0, ineqs·x >= 0}` (rows
/// without a constant column get a zero constant).
fn cone_system(nv: usize, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> System {
    sys::system(nv, &sys::with_const(eqs), &sys::with_const(ineqs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Is `y` in the projection? Asked of the solver: the cone with the
    /// kept variables fixed to `y` is rationally feasible.
    fn in_shadow(nv: usize, eqs: &[Vec<i64>], ineqs: &[Vec<i64>], y: &[i64]) -> bool {
        let mut sys = cone_system(nv, eqs, ineqs);
        for (k, &v) in y.iter().enumerate() {
            let mut r = vec![0; nv + 1];
            r[k] = 1;
            r[nv] = -v;
            sys.add_eq(r);
        }
        solver::rational_feasible(&sys).unwrap()
    }

    fn holds(eqs: &[Vec<i64>], ineqs: &[Vec<i64>], y: &[i64]) -> bool {
        let dot = |r: &Vec<i64>| r.iter().zip(y).map(|(a, b)| a * b).sum::<i64>();
        eqs.iter().all(|r| dot(r) == 0) && ineqs.iter().all(|r| dot(r) >= 0)
    }

    #[test]
    fn chain_through_an_eliminated_variable() {
        // a >= t >= b  ⇒  a - b >= 0.
        let (e, i) =
            project_cone(3, 2, vec![], vec![vec![1, 0, -1], vec![0, -1, 1]], false).unwrap();
        assert!(e.is_empty());
        assert_eq!(i, vec![vec![1, -1]]);
    }

    #[test]
    fn equality_substitution() {
        // a = 2t, t >= 0, b >= t  ⇒  a >= 0, 2b - a >= 0.
        let (e, mut i) = project_cone(
            3,
            2,
            vec![vec![1, 0, -2]],
            vec![vec![0, 0, 1], vec![0, 1, -1]],
            true,
        )
        .unwrap();
        i.sort();
        assert!(e.is_empty());
        assert_eq!(i, vec![vec![-1, 2], vec![1, 0]]);
    }

    proptest! {
        #[test]
        fn projection_is_the_rational_shadow(
            ineqs in proptest::collection::vec(proptest::collection::vec(-2i64..3, 4), 1..5),
            eq in proptest::collection::vec(-2i64..3, 4),
            with_eq in any::<bool>(),
            prune in any::<bool>(),
            y in proptest::collection::vec(-3i64..4, 2),
        ) {
            let eqs = if with_eq { vec![eq] } else { vec![] };
            let (pe, pi) = project_cone(4, 2, eqs.clone(), ineqs.clone(), prune).unwrap();
            prop_assert_eq!(holds(&pe, &pi, &y), in_shadow(4, &eqs, &ineqs, &y));
        }
    }
}
