//! The legality checker: for a schedule and the dependence pieces of a
//! model, the schedule level at which each piece is carried, or an integer
//! counterexample (a dependence instance pair the schedule violates); and
//! the sequentiality test. Every scheduler result passes through here
//! before it is returned.
//!
//! Owns: legality and sequentiality of given schedules. Must not know how
//! schedules are found.

use super::error::{ScheduleError, ScheduleResult};
use super::model::{DepPiece, DimInfo, Model, Schedule};
use crate::poly::linalg;
use crate::poly::memo::{memoized, Memo, SystemKey};
use crate::poly::solver::{self, System};

/// Status of one dependence piece under a legal schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepStatus {
    /// The piece has no integer instance pair (within the domains).
    Empty,
    /// Carried at this schedule level: the first level after which no
    /// instance pair is tied. The pairs tied at every earlier level are
    /// strictly ordered here; others may have been ordered at an earlier
    /// level already (see [`dim_flags`]).
    Carried(usize),
}

/// A dependence instance pair the schedule gets wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Index of the dependence piece in the model.
    pub dep: usize,
    /// The first level where the target runs strictly before the source,
    /// or `None` when source and target get equal times at every level.
    pub level: Option<usize>,
    /// Source iteration vector.
    pub source: Vec<i64>,
    /// Target iteration vector.
    pub target: Vec<i64>,
    /// Parameter values.
    pub params: Vec<i64>,
}

/// Result of the legality check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Legality {
    /// Every piece is empty or carried; one status per piece.
    Legal(Vec<DepStatus>),
    /// A counterexample.
    Illegal(Violation),
}

/// Check the shape of a schedule against a model.
pub fn validate_schedule(model: &Model, sched: &Schedule) -> ScheduleResult<()> {
    if sched.rows.len() != model.statements.len() {
        return Err(ScheduleError::InvalidModel(format!(
            "schedule has rows for {} statements, the model has {}",
            sched.rows.len(),
            model.statements.len()
        )));
    }
    for (s, rows) in model.statements.iter().zip(&sched.rows) {
        if rows.len() != sched.dims.len() {
            return Err(ScheduleError::InvalidModel(format!(
                "statement {} has {} schedule rows, expected {}",
                s.name,
                rows.len(),
                sched.dims.len()
            )));
        }
        let w = s.n_dims + model.n_params + 1;
        if rows.iter().any(|r| r.len() != w) {
            return Err(ScheduleError::InvalidModel(format!(
                "a schedule row of {} does not have {w} entries",
                s.name
            )));
        }
    }
    Ok(())
}

/// The row over `(s, t, p, 1)` of `θ_T(t) − θ_S(s)` for the given rows of
/// the source and target statements.
pub(crate) fn diff_row(
    model: &Model,
    dep: &DepPiece,
    src_row: &[i64],
    tgt_row: &[i64],
) -> ScheduleResult<Vec<i64>> {
    let m = model.n_params;
    let ds = model.statements[dep.source].n_dims;
    let dt = model.statements[dep.target].n_dims;
    let n = ds + dt + m;
    let mut r = vec![0i64; n + 1];
    for k in 0..ds {
        r[k] = src_row[k].checked_neg().ok_or(ScheduleError::Overflow)?;
    }
    r[ds..ds + dt].copy_from_slice(&tgt_row[..dt]);
    for k in 0..m {
        r[ds + dt + k] = tgt_row[dt + k]
            .checked_sub(src_row[ds + k])
            .ok_or(ScheduleError::Overflow)?;
    }
    r[n] = tgt_row[dt + m]
        .checked_sub(src_row[ds + m])
        .ok_or(ScheduleError::Overflow)?;
    Ok(r)
}

fn split_point(
    model: &Model,
    dep: &DepPiece,
    dep_idx: usize,
    level: Option<usize>,
    pt: &[i64],
) -> Violation {
    let ds = model.statements[dep.source].n_dims;
    let dt = model.statements[dep.target].n_dims;
    Violation {
        dep: dep_idx,
        level,
        source: pt[..ds].to_vec(),
        target: pt[ds..ds + dt].to_vec(),
        params: pt[ds + dt..].to_vec(),
    }
}

/// Check `sched` against every dependence piece of `model` (intersected
/// with the statement domains): for piece `D` and levels `l = 0, 1, ...`,
/// a violation is an integer point of `D ∧ (δ_k = 0 for k < l) ∧ δ_l <= −1`
/// with `δ_k = θ_T,k(t) − θ_S,k(s)`; the piece is carried at the first `l`
/// where `D ∧ (δ_k = 0 for k <= l)` has no integer point; if that never
/// happens the pair equal at all levels is the counterexample.
pub fn check_schedule(model: &Model, sched: &Schedule) -> ScheduleResult<Legality> {
    model.validate()?;
    validate_schedule(model, sched)?;
    let mut statuses = Vec::with_capacity(model.deps.len());
    for k in 0..model.deps.len() {
        match dep_status(model, sched, k)? {
            Ok(st) => statuses.push(st),
            Err(v) => return Ok(Legality::Illegal(v)),
        }
    }
    Ok(Legality::Legal(statuses))
}

/// Whether `sched` is legal on the dependence pieces `deps` (indices into
/// `model.deps`) alone: [`check_schedule`] restricted to them.
pub(crate) fn legal_on(model: &Model, sched: &Schedule, deps: &[usize]) -> ScheduleResult<bool> {
    validate_schedule(model, sched)?;
    for &k in deps {
        if dep_status(model, sched, k)?.is_err() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The status of piece `k` under `sched`, or a violation of it (the
/// per-piece test of [`check_schedule`]).
///
/// Level by level, with `P` the piece's polyhedron restricted to the pairs
/// tied at every earlier level and `δ_l = θ_T,l(t) − θ_S,l(s)`: a point of
/// `P ∧ δ_l <= −1` is a violation at `l`; otherwise, when `P ∧ δ_l = 0` is
/// integer-empty, the piece is carried at `l`; else `P` becomes
/// `P ∧ δ_l = 0`. A constant `δ_l = c >= 0` needs no solver (`c > 0`
/// carries all of `P`, `c = 0` ties all of it), and the other steps are
/// memoized per thread on `(P, δ_l)`: the driver checks a schedule again
/// after each post-pass, and most pieces keep their rows.
fn dep_status(
    model: &Model,
    sched: &Schedule,
    k: usize,
) -> ScheduleResult<Result<DepStatus, Violation>> {
    let Some(dep) = model.deps.get(k) else {
        return Err(ScheduleError::InvalidModel(format!(
            "dependence piece {k} does not exist"
        )));
    };
    let mut sys: System = model.dep_with_domains(dep)?;
    let Some(mut witness) = solver::integer_sample(&sys)? else {
        return Ok(Ok(DepStatus::Empty));
    };
    for l in 0..sched.n_dims() {
        let delta = level_delta(model, sched, dep, l)?;
        let n = delta.len() - 1;
        if is_constant(&delta) && delta[n] >= 0 {
            if delta[n] > 0 {
                return Ok(Ok(DepStatus::Carried(l)));
            }
            continue;
        }
        match level_step(&sys, &delta)? {
            Step::Violated(pt) => return Ok(Err(split_point(model, dep, k, Some(l), &pt))),
            Step::Carried => return Ok(Ok(DepStatus::Carried(l))),
            Step::Tied(pt) => witness = pt,
        }
        sys.add_eq(delta);
    }
    Ok(Err(split_point(model, dep, k, None, &witness)))
}

/// `δ_l = θ_T,l(t) − θ_S,l(s)` of `dep` under `sched`, as a row over the
/// piece's variables and the constant (see [`diff_row`]).
fn level_delta(
    model: &Model,
    sched: &Schedule,
    dep: &DepPiece,
    l: usize,
) -> ScheduleResult<Vec<i64>> {
    diff_row(
        model,
        dep,
        &sched.rows[dep.source][l],
        &sched.rows[dep.target][l],
    )
}

/// Is the row (variables, then the constant) a constant?
fn is_constant(row: &[i64]) -> bool {
    row[..row.len() - 1].iter().all(|&c| c == 0)
}

/// One level of [`dep_status`] on the tied pairs `P` and the distance `δ`.
#[derive(Clone, Debug)]
enum Step {
    /// A point of `P ∧ δ <= −1`.
    Violated(Vec<i64>),
    /// `δ >= 1` on every integer point of `P`.
    Carried,
    /// `δ >= 0` on `P`, and this point of `P ∧ δ = 0`.
    Tied(Vec<i64>),
}

type StepKey = (SystemKey, Vec<i64>);

thread_local! {
    static STEPS: Memo<StepKey, Step> = Memo::default();
}

fn level_step(sys: &System, delta: &[i64]) -> ScheduleResult<Step> {
    memoized(
        &STEPS,
        || {
            (
                (sys.n_vars, sys.eqs.clone(), sys.ineqs.clone()),
                delta.to_vec(),
            )
        },
        || {
            let mut viol = sys.clone();
            let mut neg: Vec<i64> = delta
                .iter()
                .map(|x| x.checked_neg().ok_or(ScheduleError::Overflow))
                .collect::<ScheduleResult<_>>()?;
            let last = neg.len() - 1;
            neg[last] = neg[last].checked_sub(1).ok_or(ScheduleError::Overflow)?;
            viol.add_ineq(neg);
            if let Some(pt) = solver::integer_sample(&viol)? {
                return Ok(Step::Violated(pt));
            }
            let mut tied = sys.clone();
            tied.add_eq(delta.to_vec());
            Ok(match solver::integer_sample(&tied)? {
                None => Step::Carried,
                Some(pt) => Step::Tied(pt),
            })
        },
    )
}

/// Is the schedule sequential: does every statement's iterator-coefficient
/// matrix (its rows restricted to the iterator columns) have full column
/// rank `n_dims`? Then distinct instances of a statement get distinct
/// times.
pub fn is_sequential(model: &Model, sched: &Schedule) -> ScheduleResult<bool> {
    validate_schedule(model, sched)?;
    Ok(model
        .statements
        .iter()
        .zip(&sched.rows)
        .all(|(s, rows)| linalg::rank(rows, s.n_dims) == s.n_dims))
}

/// The per-dimension flags of a legal schedule (`statuses` its pieces'
/// statuses, see [`check_schedule`]): scalar when every row there is
/// constant; coincident when no piece orders any of its pairs there.
///
/// A piece carried at `c` orders all its pairs still tied at `c`, and it
/// may order some of them at an earlier level `l` already: `δ_l >= 0` on
/// the pairs tied before `l`, zero on some, positive on others (`X[i, j]`
/// reading `X[0, j − 1]` under `(i, j)`: carried at `j` for `i = 0`, at
/// `i` for every other `i`). So `l` is coincident when no piece is
/// carried at `l` and, for every piece carried later, `δ_l` is zero on
/// its pairs tied before `l`: a constant zero, or an integer-empty
/// `P ∧ (δ_k = 0 for k < l) ∧ δ_l >= 1`.
pub fn dim_flags(
    model: &Model,
    sched: &Schedule,
    statuses: &[DepStatus],
) -> ScheduleResult<Vec<DimInfo>> {
    let n = sched.n_dims();
    let mut coincident: Vec<bool> = (0..n)
        .map(|l| !statuses.contains(&DepStatus::Carried(l)))
        .collect();
    for (dep, status) in model.deps.iter().zip(statuses) {
        let DepStatus::Carried(c) = *status else {
            continue;
        };
        let mut tied: Option<System> = None;
        for (l, par) in coincident.iter_mut().enumerate().take(c) {
            let delta = level_delta(model, sched, dep, l)?;
            let w = delta.len() - 1;
            if is_constant(&delta) {
                // A constant: zero on the tied pairs (the piece is not
                // carried before `c`).
                continue;
            }
            let sys = match tied.as_mut() {
                Some(sys) => sys,
                None => tied.insert(model.dep_with_domains(dep)?),
            };
            if *par {
                let mut ordered = sys.clone();
                let mut pos = delta.clone();
                pos[w] = pos[w].checked_sub(1).ok_or(ScheduleError::Overflow)?;
                ordered.add_ineq(pos);
                if solver::integer_sample(&ordered)?.is_some() {
                    *par = false;
                }
            }
            sys.add_eq(delta);
        }
    }
    Ok((0..n)
        .map(|l| DimInfo {
            coincident: coincident[l],
            scalar: is_scalar_level(model, &sched.rows, l),
        })
        .collect())
}

/// Whether level `l` of `rows` (one row list per statement of `model`) is
/// a statement-ordering level: every statement's row there is a constant
/// (no iterator and no parameter coefficient).
pub(crate) fn is_scalar_level(model: &Model, rows: &[Vec<Vec<i64>>], l: usize) -> bool {
    model.statements.iter().zip(rows).all(|(s, rows)| {
        let r = &rows[l];
        r[..s.n_dims + model.n_params].iter().all(|x| *x == 0)
    })
}
