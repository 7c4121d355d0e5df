//! The bridge from constraint rows to the exact solver.
//!
//! Owns: building `solver::System`s from rows (same layout: variables then
//! constant) and the few questions the set operations ask of the solver.
//!
//! Must not know about: spaces, names, parsing or printing.

use super::error::PolyResult;
use super::memo::{self, Question};
use super::solver::{self, Optimum, System};

/// A system over `nv` variables.
pub fn system(nv: usize, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> System {
    let mut s = System::new(nv);
    for e in eqs {
        s.add_eq(e.clone());
    }
    for i in ineqs {
        s.add_ineq(i.clone());
    }
    s
}

/// True when the system has no integer solution.
pub fn int_empty(nv: usize, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> PolyResult<bool> {
    if ineqs.iter().any(|r| is_contradiction(r)) || eqs.iter().any(|r| is_eq_contradiction(r)) {
        return Ok(true);
    }
    memo::bool_answer(Question::IntEmpty, nv, eqs, ineqs, || {
        Ok(solver::integer_sample(&system(nv, eqs, ineqs))?.is_none())
    })
}

/// An integer solution, if any.
pub fn int_sample(nv: usize, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> PolyResult<Option<Vec<i64>>> {
    if ineqs.iter().any(|r| is_contradiction(r)) || eqs.iter().any(|r| is_eq_contradiction(r)) {
        return Ok(None);
    }
    solver::integer_sample(&system(nv, eqs, ineqs))
}

/// True when the system has a rational solution.
pub fn rat_feasible(nv: usize, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> PolyResult<bool> {
    solver::rational_feasible(&system(nv, eqs, ineqs))
}

/// Indices of inequalities tight at every rational solution.
pub fn implicit_eqs(nv: usize, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> PolyResult<Vec<usize>> {
    memo::indices_answer(Question::ImplicitEqs, nv, eqs, ineqs, || {
        solver::implicit_equalities(&system(nv, eqs, ineqs))
    })
}

/// Indices of inequalities that can be removed all together without
/// changing the rational solution set.
pub fn redundant(nv: usize, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> PolyResult<Vec<usize>> {
    memo::indices_answer(Question::Redundant, nv, eqs, ineqs, || {
        solver::redundant_ineqs(&system(nv, eqs, ineqs))
    })
}

/// [`redundant`] of a system with a rational point, `None` when it has
/// none (one tableau for both questions).
pub fn redundant_if_feasible(
    nv: usize,
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
) -> PolyResult<Option<Vec<usize>>> {
    memo::opt_indices_answer(Question::Redundant, nv, eqs, ineqs, || {
        solver::redundant_ineqs_if_feasible(&system(nv, eqs, ineqs))
    })
}

/// Rows given as variable coefficients only (length `nv`) with a zero
/// constant appended (objectives, homogeneous cone rows), as the solver
/// expects `nv + 1` entries.
pub fn with_const(rows: &[Vec<i64>]) -> Vec<Vec<i64>> {
    rows.iter()
        .map(|o| {
            let mut v = o.clone();
            v.push(0);
            v
        })
        .collect()
}

/// Integer lexicographic minimum (`max = false`) or maximum (`max = true`)
/// of the objectives (coefficient vectors of length `nv`); the optimum is
/// the point.
pub fn int_lexopt(
    nv: usize,
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
    objs: &[Vec<i64>],
    max: bool,
) -> PolyResult<Optimum<Vec<i64>>> {
    let s = system(nv, eqs, ineqs);
    if max {
        solver::integer_lexmax(&s, &with_const(objs))
    } else {
        solver::integer_lexmin(&s, &with_const(objs))
    }
}

/// Integer minimum and maximum of one objective (coefficients of length
/// `nv`), over one system.
pub fn int_min_max(
    nv: usize,
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
    obj: &[i64],
) -> PolyResult<(Optimum<i64>, Optimum<i64>)> {
    let s = system(nv, eqs, ineqs);
    let o = &with_const(&[obj.to_vec()])[0];
    Ok((solver::integer_min(&s, o)?, solver::integer_max(&s, o)?))
}

/// `c >= 0` with no variables and `c < 0`.
pub fn is_contradiction(r: &[i64]) -> bool {
    let n = r.len() - 1;
    r[..n].iter().all(|&c| c == 0) && r[n] < 0
}

fn is_eq_contradiction(r: &[i64]) -> bool {
    let n = r.len() - 1;
    r[..n].iter().all(|&c| c == 0) && r[n] != 0
}
