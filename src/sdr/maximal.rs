//! Maximal simplification of independent reductions (Narmour, Yuki and
//! Rajopadhye, "Maximal Simplification of Polyhedral Reductions", POPL
//! 2025): a bounded search over reuse directions and domain splits, with
//! the asymptotic cost of the produced equations as the objective.
//!
//! A reduction is *independent* when its body does not read the variable
//! it defines, directly or through other equations ([`is_independent`]).
//! Then the recurrence `X[x] = X[x − r_X] ⊕ Add[x] ⊖ Sub[x]` adds only the
//! uniform self-dependence `x − r_X → x` to the program, which is acyclic
//! whatever the sign of `r`: the direction need not agree with any
//! schedule (dependent reductions keep the schedule-guided choice of
//! `transform`). For a face `P` of the body (the whole body first, then
//! every shell piece the transformation creates, recursively) the search
//! evaluates, in this order:
//!
//! 1. every share-basis vector `b` with `proj_lin·b ≠ 0` in its preferred
//!    orientation (the schedule's, or the one without a removed shell
//!    when nothing reads the target at affine indices: `Cx::directions`),
//!    then reversed, when legal (profitable; no subtraction for
//!    operators without an inverse);
//! 2. leaving the face as it is;
//! 3. splitting `P` along a candidate hyperplane ([`candidate_splits`]) and
//!    searching each side again (at most [`MAX_SPLITS`] nested splits).
//!
//! Each candidate is built on a copy of the system; its cost is the sum of
//! the costs (`sdr::complexity`) of the equations it produced, including
//! the face's own. The first candidate whose cost is strictly lower than
//! every earlier one wins, so ties go to the earlier candidate: the
//! preferred orientation before the reversed one, one piece before a split.
//! The search stops early when a candidate costs `O(|D_X|)` (no equation
//! defining `X` can cost less). At most [`MAX_CANDIDATES`] candidates
//! (piece, direction or split) are evaluated per reduction of the input
//! program; when the budget is spent the best candidate found so far is
//! kept (or, if none was evaluated at that face, the schedule-guided
//! choice) and a decision records it.

use super::complexity::equation_costs;
use super::split::{self, Names};
use super::transform::{Cx, Job};
use super::{Decision, DecisionKind, SdrError};
use crate::ir::*;
use crate::poly::complexity::{complexity, Complexity};
use crate::poly::solver::integer_kernel;
use crate::poly::BasicSet;
use std::collections::HashSet;

/// The budget: candidate evaluations (a reuse direction or a split of one
/// face) per reduction of the input program.
pub const MAX_CANDIDATES: usize = 64;

/// Nested splits allowed along one chain of pieces.
pub const MAX_SPLITS: usize = 2;

/// Whether the body of the reduction defining `target` reads `target`
/// neither directly nor through the equations of the variables it reads.
pub fn is_independent(s: &System, target: VarId, body: &Expr) -> bool {
    !reaches(s, body, target)
}

/// Whether `e` reads `target` directly or through the equations of the
/// variables it reads.
pub fn reaches(s: &System, e: &Expr, target: VarId) -> bool {
    let mut stack = Vec::new();
    reads(e, &mut stack);
    let mut seen = HashSet::new();
    while let Some(v) = stack.pop() {
        if v == target {
            return true;
        }
        if seen.insert(v) {
            if let Some(eq) = s.equation_of(v) {
                reads(&eq.expr, &mut stack);
            }
        }
    }
    false
}

fn reads(e: &Expr, out: &mut Vec<VarId>) {
    match &e.kind {
        ExprKind::Read { var, .. } | ExprKind::IndirectRead { var, .. } => out.push(*var),
        _ => {}
    }
    e.for_each_child(&mut |c| reads(c, out));
}

/// `a` is asymptotically smaller than `b`: every term of `a` is dominated
/// by a term of `b` and not conversely; for incomparable costs, a lower
/// total degree.
pub fn better(a: &Complexity, b: &Complexity) -> bool {
    let le = |x: &Complexity, y: &Complexity| {
        x.terms
            .iter()
            .all(|t| y.terms.iter().any(|u| u.dominates(t)))
    };
    match (le(a, b), le(b, a)) {
        (true, false) => true,
        (false, false) => a.degree() < b.degree(),
        _ => false,
    }
}

/// The cost of defining `target` by `expr` plus the cost of every
/// equation from number `first` on (those a candidate added).
fn cost_of(
    s: &mut System,
    target: VarId,
    expr: &Expr,
    first: usize,
) -> Result<Complexity, SdrError> {
    let indices = s.vars[target].domain.dims().to_vec();
    let mut scratch: Vec<Equation> = s.equations.get(first..).unwrap_or(&[]).to_vec();
    scratch.push(Equation {
        var: target,
        indices,
        span: expr.span,
        expr: expr.clone(),
    });
    let saved = std::mem::replace(&mut s.equations, scratch);
    let costs = equation_costs(s);
    s.equations = saved;
    let mut acc = Complexity::new(s.params.clone(), Vec::new());
    for c in costs? {
        acc = acc.add(&c.cost)?;
    }
    Ok(acc)
}

/// Candidate split hyperplanes of a face `P` (a row over `[params..,
/// body dims.., const]` each, gcd-normalized, no duplicates up to sign):
/// for each pair of inequalities `a ≥ 0`, `b ≥ 0` of `P` and each of two
/// subspaces `K` — the kernel of the projection within the face's span
/// (splits of the result domain, whose new facets are boundaries) and the
/// share space (splits whose new facets are invariant along the reuse) —
/// the combination `h = λ·a + μ·b` with `(λ·a_lin + μ·b_lin)·k = 0` for
/// every `k ∈ K`, when `λ` and `μ` are unique up to scale and both
/// non-zero: the hyperplane through the intersection of the two facets
/// that contains `K`, where the facet active on one side changes.
pub fn candidate_splits(
    n_params: usize,
    piece: &BasicSet,
    proj: &MultiAff,
    basis: &[Vec<i64>],
) -> Result<Vec<Vec<i64>>, SdrError> {
    let np = n_params;
    let n = piece.space().n_dims();
    let lin = |r: &[i64]| r[np..np + n].to_vec();
    let mut fixed: Vec<Vec<i64>> = proj
        .affs()
        .iter()
        .map(|a| a.dim_coeffs().to_vec())
        .collect();
    fixed.extend(piece.eqs().iter().map(|r| lin(r)));
    let kernels = [integer_kernel(&fixed, n)?, basis.to_vec()];
    let ineqs = piece.ineqs();
    let mut out: Vec<Vec<i64>> = Vec::new();
    for k in kernels.iter().filter(|k| !k.is_empty()) {
        for (ia, a) in ineqs.iter().enumerate() {
            for b in &ineqs[ia + 1..] {
                let m: Vec<Vec<i64>> = k
                    .iter()
                    .map(|kv| Ok(vec![dot(&lin(a), kv)?, dot(&lin(b), kv)?]))
                    .collect::<Result<_, SdrError>>()?;
                let lam = integer_kernel(&m, 2)?;
                let [l] = lam.as_slice() else {
                    continue;
                };
                if l[0] == 0 || l[1] == 0 {
                    continue;
                }
                let mut h = Vec::with_capacity(a.len());
                for (x, y) in a.iter().zip(b) {
                    let v = l[0]
                        .checked_mul(*x)
                        .zip(l[1].checked_mul(*y))
                        .and_then(|(p, q)| p.checked_add(q))
                        .ok_or(crate::poly::PolyError::Overflow)?;
                    h.push(v);
                }
                if h[np..np + n].iter().all(|&c| c == 0) {
                    continue;
                }
                crate::poly::linalg::normalize_row(&mut h);
                let neg: Vec<i64> = h.iter().map(|&c| -c).collect();
                if !out.contains(&h) && !out.contains(&neg) {
                    out.push(h);
                }
            }
        }
    }
    Ok(out)
}

fn dot(a: &[i64], b: &[i64]) -> Result<i64, SdrError> {
    Ok(crate::poly::linalg::dot(a, b)?)
}

/// One evaluated candidate: the system and pass state it produced.
struct Candidate {
    cost: Complexity,
    cx: Cx,
    s: System,
    expr: Expr,
    /// Index in `cx.decisions` of the decision that describes the choice.
    decision: usize,
}

/// Builds a candidate on copies of `cx` and `s` with `make`, and costs it.
fn evaluate(
    cx: &mut Cx,
    s: &System,
    target: VarId,
    make: impl FnOnce(&mut Cx, &mut System) -> Result<(Expr, usize), SdrError>,
) -> Result<Candidate, SdrError> {
    let mut c2 = cx.clone();
    let mut s2 = s.clone();
    let first = s2.equations.len();
    let (expr, decision) = make(&mut c2, &mut s2)?;
    let cost = cost_of(&mut s2, target, &expr, first)?;
    cx.evaluations = c2.evaluations;
    Ok(Candidate {
        cost,
        cx: c2,
        s: s2,
        expr,
        decision,
    })
}

/// The search for one face of an independent reduction (see the module
/// comment); `piece` is its body domain restricted to where it is used
/// and `basis` its share space. Returns the new right-hand side of the
/// job's target; `cx` and `s` become those of the winning candidate.
pub(super) fn search(
    cx: &mut Cx,
    s: &mut System,
    job: Job,
    depth: usize,
    piece: &BasicSet,
    basis: &[Vec<i64>],
    face_dim: i64,
) -> Result<Expr, SdrError> {
    let target_name = s.vars[job.target].name.clone();
    let original = job.original();
    let floor = complexity(&s.vars[job.target].domain)?;
    let at_floor = |c: &Complexity| !better(&floor, c);
    let mut best: Option<Candidate> = None;
    let mut tried = 0usize;
    let mut exhausted = false;
    let mut reason = "share directions lie in the projection's kernel";
    // 1. reuse directions
    for r in cx.directions(s, &job, piece, basis)? {
        if best.as_ref().is_some_and(|b| at_floor(&b.cost)) {
            break;
        }
        if cx.evaluations >= cx.budget {
            exhausted = true;
            break;
        }
        let prep = match cx.prepare(s, &job, piece, &r)? {
            Ok(p) => p,
            Err(why) => {
                reason = why;
                continue;
            }
        };
        cx.evaluations += 1;
        tried += 1;
        let c = evaluate(cx, s, job.target, |c2, s2| {
            let at = c2.decisions.len();
            c2.decide_applied(&target_name, face_dim, piece, r.clone(), &prep);
            Ok((c2.build(s2, &job, depth, prep)?, at))
        })?;
        if best.as_ref().is_none_or(|b| better(&c.cost, &b.cost)) {
            best = Some(c);
        }
    }
    // 2. the face as it is: the incumbent when no direction beats it
    let none_cost = {
        let first = s.equations.len();
        cost_of(s, job.target, &original, first)?
    };
    let mut keep_none = match &best {
        None => true,
        Some(b) => better(&none_cost, &b.cost),
    };
    let incumbent = |best: &Option<Candidate>, keep_none: bool| match best {
        Some(b) if !keep_none => b.cost.clone(),
        _ => none_cost.clone(),
    };
    // 3. splits
    if job.splits_left > 0 {
        let np = cx.params.len();
        for h in candidate_splits(np, piece, &job.red.proj, basis)? {
            if at_floor(&incumbent(&best, keep_none)) {
                break;
            }
            if cx.evaluations >= cx.budget {
                exhausted = true;
                break;
            }
            let red = Reduction {
                body_domain: Set::from_basic(piece.clone())
                    .renamed(job.red.body_domain.space().clone())?,
                ..job.red.clone()
            };
            let Some(plan) = split::plan(&red, &h, &cx.context)? else {
                continue;
            };
            cx.evaluations += 1;
            tried += 1;
            let c = evaluate(cx, s, job.target, |c2, s2| {
                split_candidate(c2, s2, &job, &red, &plan, depth, &target_name)
            })?;
            if better(&c.cost, &incumbent(&best, keep_none)) {
                best = Some(c);
                keep_none = false;
            }
        }
    }
    let spent = cx.evaluations;
    let expr = match best {
        Some(mut b) if !keep_none => {
            if let Some(d) = b.cx.decisions.get_mut(b.decision) {
                d.complexity_after = Some(b.cost.to_string());
                if d.kind == DecisionKind::Simplification {
                    d.detail = format!("minimum cost among {tried} candidates");
                }
            }
            let noted = cx.budget_noted || b.cx.budget_noted;
            *cx = b.cx;
            cx.evaluations = spent;
            cx.budget_noted = noted;
            *s = b.s;
            b.expr
        }
        _ if exhausted && tried == 0 => {
            // Nothing evaluated at this face: the schedule-guided choice.
            let job = Job {
                independent: false,
                ..job
            };
            cx.process(s, job, depth)?
        }
        _ => {
            let why = if tried > 0 {
                "no candidate lowers the cost"
            } else {
                reason
            };
            cx.decide(&target_name, face_dim, None, why);
            if let Some(d) = cx.decisions.last_mut() {
                d.complexity_after = Some(none_cost.to_string());
            }
            original
        }
    };
    if exhausted && !cx.budget_noted {
        cx.budget_noted = true;
        cx.decisions.push(Decision {
            detail: format!("budget: {} candidate evaluations", cx.budget),
            ..Decision::new(
                &cx.sys_name,
                &target_name,
                DecisionKind::Simplification,
                false,
                "search budget spent: kept the best candidate found so far",
            )
        });
    }
    Ok(expr)
}

/// Splits the face (`red`, the job's reduction restricted to the face)
/// along `plan`, searches each side as a reduction of its own and returns
/// the combining expression and the index of the split decision.
fn split_candidate(
    cx: &mut Cx,
    s: &mut System,
    job: &Job,
    red: &Reduction,
    plan: &split::Split,
    depth: usize,
    target_name: &str,
) -> Result<(Expr, usize), SdrError> {
    let at = cx.decisions.len();
    let form = if plan.result_row.is_some() {
        "result domain split (case)"
    } else {
        "body split, pieces combined with the operator"
    };
    cx.decisions.push(Decision {
        detail: split::hyperplane_text(red.body_domain.space(), &plan.h),
        ..Decision::new(&cx.sys_name, target_name, DecisionKind::Split, true, form)
    });
    let built = split::build(
        s,
        job.target,
        red,
        job.ty,
        job.span,
        plan,
        Names {
            used: &mut cx.used,
            born: &mut cx.born,
        },
    )?;
    for (id, piece, indices) in built.pieces {
        let sub = Job {
            target: id,
            red: piece,
            splits_left: job.splits_left.saturating_sub(1),
            ..job.clone()
        };
        let e = cx.process(s, sub, depth + 1)?;
        cx.define(s, id, &indices, e);
    }
    Ok((built.expr, at))
}
