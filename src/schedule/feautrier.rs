//! One Feautrier step (isl report §6.4): a single affine schedule row for
//! every statement of a subproblem that weakly satisfies every remaining
//! dependence piece and strongly satisfies (carries) as many pieces as
//! possible, with loop-coalescing recovery (§7.5.4).
//!
//! ILP: variables `e_g ∈ {0, 1}` per piece `g` and the schedule
//! coefficients of [`super::ilp::Layout`]; constraints
//! `θ_T(t) − θ_S(s) − e_g >= 0` on piece `g` (Farkas, [`super::farkas`]);
//! lexicographic objectives `Σ(1 − e_g)`, `Σ b`, `Σ |a|`, then every
//! coefficient in layout order. Solved as an exact ILP, so the `e_g` are
//! 0/1 and the coefficients integral without rescaling (§6.4.3).
//!
//! Owns: the step. Must not know about bands, SCC splitting or completion.

use super::driver::Sub;
use super::error::{ScheduleError, ScheduleResult};
use super::farkas::instantiate;
use super::ilp::{add, lexmin, Layout};
use crate::poly::solver::{self, Optimum, Prepared, System};
use crate::poly::PolyError;

/// The row found by a Feautrier step: one row per local statement, and for
/// every piece whether it is carried (`θ_T − θ_S >= 1` on all of it).
pub(crate) struct Step {
    pub rows: Vec<Vec<i64>>,
    pub carried: Vec<bool>,
}

/// The constraints of the step's ILP (see the module comment), with the
/// coefficients of `forced_zero` fixed at 0.
fn system(sub: &Sub, layout: &Layout, forced_zero: &[(usize, usize)]) -> ScheduleResult<System> {
    let np = sub.pieces.len();
    let e0 = layout.suffix_start();
    let mut sys = System::new(layout.n_vars);
    for r in layout.nonneg_rows() {
        sys.add_ineq(r);
    }
    let mut neg_sum_e = layout.zero();
    for g in 0..np {
        sys.add_ineq(layout.var(e0 + g));
        let mut up = layout.zero();
        up[e0 + g] = -1;
        up[layout.n_vars] = 1;
        sys.add_ineq(up);
        neg_sum_e[e0 + g] = -1;
    }
    for (g, p) in sub.pieces.iter().enumerate() {
        let (ls, lt) = (sub.local(p.src)?, sub.local(p.tgt)?);
        let mut forms = layout.diff_forms(ls, lt, 1)?;
        let last = forms.len() - 1;
        let mut minus_e = layout.zero();
        minus_e[e0 + g] = -1;
        forms[last] = add(&forms[last], &minus_e)?;
        let (eqs, ineqs) = instantiate(&p.cone, &forms)?;
        for r in eqs {
            sys.add_eq(r);
        }
        for r in ineqs {
            sys.add_ineq(r);
        }
    }
    for &(s, j) in forced_zero {
        sys.add_eq(layout.var(layout.a_plus(s, j)));
        sys.add_eq(layout.var(layout.a_minus(s, j)));
    }
    Ok(sys)
}

/// The rows and carried pieces of a solution of the step's ILP.
fn step_of(sub: &Sub, layout: &Layout, sol: &[i64]) -> ScheduleResult<Step> {
    let e0 = layout.suffix_start();
    let rows = (0..layout.dims.len())
        .map(|s| layout.extract_row(sol, s))
        .collect::<ScheduleResult<Vec<_>>>()?;
    let carried = (0..sub.pieces.len()).map(|g| sol[e0 + g] == 1).collect();
    Ok(Step { rows, carried })
}

fn solve(sub: &Sub, layout: &Layout, forced_zero: &[(usize, usize)]) -> ScheduleResult<Step> {
    let sys = system(sub, layout, forced_zero)?;
    let e0 = layout.suffix_start();
    let mut neg_sum_e = layout.zero();
    for g in 0..sub.pieces.len() {
        neg_sum_e[e0 + g] = -1;
    }
    let mut objs = vec![neg_sum_e, layout.sum_params(), layout.sum_abs_coefs()];
    objs.extend(layout.block_objectives());
    let sol = match lexmin(&Prepared::new(sys)?, &[], &[], &objs)? {
        Optimum::Value(v) => v,
        // All-zero coefficients with every e_g = 0 is always feasible, and
        // every objective is bounded below by the non-negativity rows.
        other => {
            return Err(ScheduleError::Internal(format!(
                "Feautrier ILP is not solvable ({other:?})"
            )))
        }
    };
    step_of(sub, layout, &sol)
}

/// Simplex work one integer sample of [`sampled_step`] may spend.
const SAMPLE_WORK: u64 = 2_000_000;

/// The fallback when the step's ILP spends its budget (its lexicographic
/// minimum can need a long branch and bound, since the coefficients are
/// unbounded above): for each piece in turn, any integer solution of the
/// step's constraints that carries it (`e_g = 1`), by integer sampling,
/// which terminates on unbounded systems. The row is legal (every piece
/// is weakly satisfied) but not optimal; `None` when no piece can be
/// carried, exactly as for the ILP (a sample that spends its own budget
/// counts as none, so a cycle is still reported as one).
fn sampled_step(sub: &Sub, layout: &Layout) -> ScheduleResult<Option<Step>> {
    let sys = system(sub, layout, &[])?;
    let e0 = layout.suffix_start();
    for g in 0..sub.pieces.len() {
        let mut one = sys.clone();
        let mut e = layout.var(e0 + g);
        e[layout.n_vars] = -1;
        one.add_eq(e);
        let (r, _) = solver::with_work_budget(SAMPLE_WORK, || solver::integer_sample(&one));
        match r {
            Ok(Some(sol)) => return Ok(Some(step_of(sub, layout, &sol)?)),
            Ok(None) | Err(PolyError::Budget(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(None)
}

/// A pair `(s, j)`: in the row of local statement `s`, the coefficient of
/// iterator `j` makes the row coalesce loops (isl (105)):
/// `|a_i| > ceil(S_j / 2)·|a_j|` for some `i != j`, `a_j != 0`, with `S_j`
/// the (finite) size of the domain of `s` in direction `j`.
fn coalescing(sub: &Sub, rows: &[Vec<i64>]) -> Option<(usize, usize)> {
    for (s, row) in rows.iter().enumerate() {
        let g = sub.stmts[s];
        let d = sub.model.statements[g].n_dims;
        for j in 0..d {
            let Some(size) = sub.sizes[g][j] else {
                continue;
            };
            if row[j] == 0 {
                continue;
            }
            let half = size.max(0) / 2 + size.max(0) % 2;
            let lim = (half as i128) * (row[j] as i128).abs();
            if (0..d).any(|i| i != j && (row[i] as i128).abs() > lim) {
                return Some((s, j));
            }
        }
    }
    None
}

/// One Feautrier step on the subproblem; `None` when no piece can be
/// carried. Coalescing rows are repaired by forcing the offending
/// coefficient to zero and solving again, as long as something is still
/// carried (isl §7.5.4).
pub(crate) fn step(sub: &Sub) -> ScheduleResult<Option<Step>> {
    let dims: Vec<usize> = sub
        .stmts
        .iter()
        .map(|&g| sub.model.statements[g].n_dims)
        .collect();
    let layout = Layout::new(sub.model.n_params, dims, 0, sub.pieces.len());
    let mut forced = Vec::new();
    let mut best = match solve(sub, &layout, &forced) {
        Err(ScheduleError::Poly(PolyError::Budget(_))) => return sampled_step(sub, &layout),
        r => r?,
    };
    if !best.carried.iter().any(|c| *c) {
        return Ok(None);
    }
    while let Some(pair) = coalescing(sub, &best.rows) {
        forced.push(pair);
        let next = match solve(sub, &layout, &forced) {
            // The repair is an improvement only: keep the row found.
            Err(ScheduleError::Poly(PolyError::Budget(_))) => break,
            r => r?,
        };
        if !next.carried.iter().any(|c| *c) {
            break;
        }
        best = next;
    }
    Ok(Some(best))
}
