//! A total as the endpoint of a running count: an int sum over a whole
//! range that another variable already accumulates up to one point.
//!
//! A collapsed Gibbs sampler keeps leave-one-out counts along its sweep and
//! states the counts of the final labels separately, for its diagnostic:
//!
//! ```text
//! C[x, i] = Σ { E(x, j) : (x, i, j) ∈ P1 } + Σ { E2(x, j) : (x, i, j) ∈ P2 }
//! F[x]    = Σ { E(x, j) : (x, j) ∈ Q }
//! ```
//!
//! (LDA's `NWK[v, k, i] = Σ_{j < i} [w_j = v ∧ z'_j = k] + Σ_{j > i} [w_j =
//! v ∧ z_j = k]` and `nvk[v, k] = Σ_{j < W} [w_j = v ∧ z'_j = k]`). After
//! normalization `C`'s terms are locals `R_m[x, i]` defined by reductions
//! over `P_m`. When, at a point `i0` of `C`'s last dimension (an affine
//! function of the parameters), one term's body is `F`'s body with the same
//! slice inside `Q`, `P_1(i0) = {(x, j) : (x, i0, j) ∈ P1} ⊆ Q`, and every
//! other term's slice `P_m(i0)` is empty, then for every `x` of `F`'s
//! domain (with `(x, i0)` in `C`'s)
//!
//! ```text
//! F[x] = C[x, i0] + Σ { E(x, j) : (x, j) ∈ Q − P_1(i0) }
//! ```
//!
//! by associativity and commutativity of `+` (the sum over `Q` split into
//! the part `P_1(i0)` and the rest; the empty terms add `0`). The rest is a
//! new local `F_last` (for LDA the single point `j = W − 1`, which cleanup
//! makes a pointwise equation). `F` is then read off the running count the
//! sampler maintains anyway, instead of a second pass over the data and a
//! second table updated per step.
//!
//! Conditions: `F`, `C` and every term are int (an int sum in another order
//! is the same number; it overflows only where counts reach 2^63); `F`'s
//! dimensions are `C`'s but the last (in order); the bodies are equal up
//! to source locations after substituting `i = i0` (the term's body must
//! not depend on `i`); the rest `Q − P_1(i0)` is convex and of lower
//! complexity than `Q`; `C` does not depend on `F`, directly or through
//! other equations (no cycle appears). `i0` is tried at each bound of
//! `C`'s last dimension, `i <= u(params)` and `i >= l(params)`.

use super::super::maximal::{better, reaches};
use super::super::normalize::identity_read;
use super::super::{DecisionKind, SdrError};
use super::subst::{is_opaque, pullback};
use super::{coordinate_projection, Cx};
use crate::ir::*;
use crate::poly::complexity::complexity;

/// Rewrites every int sum of the system that is the endpoint of a running
/// count (see the module comment).
pub(crate) fn run(cx: &mut Cx, s: &mut System) -> Result<(), SdrError> {
    let totals: Vec<VarId> = s
        .equations
        .iter()
        .filter(|e| matches!(e.expr.kind, ExprKind::Reduce(_)))
        .map(|e| e.var)
        .collect();
    for f in totals {
        let Some(found) = find(s, f)? else {
            continue;
        };
        let name = s.vars[f].name.clone();
        let detail = format!(
            "{name} = {}[.., {}] + its last part",
            s.vars[found.count].name, found.at_text
        );
        apply(cx, s, f, found)?;
        cx.decide(
            &name,
            DecisionKind::Endpoint,
            true,
            "a running count ends at this total",
            &detail,
        );
    }
    Ok(())
}

/// A rewrite found for a total `F`: the count `C` read at `(x, i0)` and the
/// rest of `F`'s body domain.
struct Found {
    count: VarId,
    /// `x ↦ (x, i0)` over `F`'s index space.
    access: MultiAff,
    /// `i0`, for the decision.
    at_text: String,
    /// `Q − P_1(i0)` over `F`'s body space.
    rest: Set,
}

/// The endpoint rewrite of the total `f`, when some count ends at it.
fn find(s: &System, f: VarId) -> Result<Option<Found>, SdrError> {
    let Some(eq_f) = s.equation_of(f) else {
        return Ok(None);
    };
    let ExprKind::Reduce(rf) = &eq_f.expr.kind else {
        return Ok(None);
    };
    let n_x = eq_f.indices.len();
    if rf.op != ReduceOp::Add
        || eq_f.expr.ty != ElemType::Int
        || rf.body.ty != ElemType::Int
        || is_opaque(&rf.body)
        || rf.body_domain.pieces().len() != 1
        || coordinate_projection(&rf.proj) != Some((0..n_x).collect())
    {
        return Ok(None);
    }
    let cost_q = complexity(&rf.body_domain)?;
    for eq_c in &s.equations {
        let c = eq_c.var;
        if c == f || s.vars[c].ty != ElemType::Int || eq_c.indices.len() != n_x + 1 {
            continue;
        }
        let Some(terms) = sum_terms(s, c, &eq_c.expr) else {
            continue;
        };
        if reaches(s, &eq_c.expr, f) {
            continue;
        }
        for i0 in bounds_of_last(&s.vars[c].domain, n_x)? {
            if let Some(found) = at_point(s, f, rf, c, &terms, &i0, &cost_q)? {
                return Ok(Some(found));
            }
        }
    }
    Ok(None)
}

/// The rewrite with `C = c` (of terms `terms`) read at `i = i0` (a row
/// over the parameters and the constant), when its conditions hold.
fn at_point(
    s: &System,
    f: VarId,
    rf: &Reduction,
    c: VarId,
    terms: &[&Reduction],
    i0: &[i64],
    cost_q: &crate::poly::complexity::Complexity,
) -> Result<Option<Found>, SdrError> {
    let np = s.params.len();
    let n_x = s.vars[f].domain.n_dims();
    let n_b = rf.body_domain.n_dims();
    // g: F's body space (x, j) → a term's body space (x, i0, j)
    let g_rows: Vec<Vec<i64>> = (0..n_b + 1)
        .map(|d| {
            let mut row = vec![0; np + n_b + 1];
            if d < n_x {
                row[np + d] = 1;
            } else if d == n_x {
                row[..np].copy_from_slice(&i0[..np]);
                row[np + n_b] = i0[np];
            } else {
                row[np + d - 1] = 1;
            }
            row
        })
        .collect();
    let g = MultiAff::from_rows(rf.body_domain.space().clone(), g_rows)?;
    let mut matched: Option<Set> = None;
    for r in terms {
        if r.body_domain.n_dims() != n_b + 1 {
            return Ok(None);
        }
        let slice = r
            .body_domain
            .preimage(&g)?
            .intersect_params(&s.context)?
            .simplify()?;
        if slice.is_empty()? {
            continue;
        }
        let Some(body) = pullback(&r.body, &g)? else {
            return Ok(None);
        };
        if matched.is_some() || !super::subst::independent_of(&r.body, n_b + 1, n_x) {
            return Ok(None);
        }
        if !body.same_as(&rf.body) || !slice.is_subset(&rf.body_domain)? {
            return Ok(None);
        }
        matched = Some(slice);
    }
    let Some(slice) = matched else {
        return Ok(None);
    };
    let rest = rf
        .body_domain
        .intersect_params(&s.context)?
        .subtract(&slice)?
        .simplify()?;
    if rest.pieces().len() > 1 || !better(&complexity(&rest)?, cost_q) {
        return Ok(None);
    }
    // every x of F's domain reads C at a point of C's domain
    let x_space = s.vars[f].domain.space().clone();
    let a_rows: Vec<Vec<i64>> = (0..n_x + 1)
        .map(|d| {
            let mut row = vec![0; np + n_x + 1];
            if d < n_x {
                row[np + d] = 1;
            } else {
                row[..np].copy_from_slice(&i0[..np]);
                row[np + n_x] = i0[np];
            }
            row
        })
        .collect();
    let access = MultiAff::from_rows(x_space, a_rows)?;
    let d_f = s.vars[f].domain.intersect_params(&s.context)?;
    if !d_f.is_subset(&s.vars[c].domain.preimage(&access)?)? {
        return Ok(None);
    }
    Ok(Some(Found {
        count: c,
        at_text: crate::ir::print::aff_to_alpha(
            &Aff::from_parts(
                Space::set(&s.params, &[] as &[String]),
                &i0[..np],
                &[],
                i0[np],
            )?,
            &[],
            &s.params,
        ),
        access,
        rest,
    }))
}

/// `F[x] = C[x, i0] + F_last[x]` with `F_last` the sum over the rest.
fn apply(cx: &mut Cx, s: &mut System, f: VarId, found: Found) -> Result<(), SdrError> {
    let Some(eq) = s.equations.iter().position(|e| e.var == f) else {
        return Err(SdrError::Internal("a total without equation".into()));
    };
    let ExprKind::Reduce(rf) = &s.equations[eq].expr.kind else {
        return Err(SdrError::Internal("a total that is not a reduction".into()));
    };
    let rest = Reduction {
        body_domain: found.rest,
        ..(**rf).clone()
    };
    let (ty, span) = (s.equations[eq].expr.ty, s.equations[eq].expr.span);
    let indices = s.equations[eq].indices.clone();
    let x_space = Space::set(&s.params, &indices);
    let base = s.vars[f].name.clone();
    let last = cx.new_local(s, &base, "last", s.vars[f].domain.clone(), ty, span);
    s.equations.push(Equation {
        var: last,
        indices,
        expr: Expr {
            kind: ExprKind::Reduce(Box::new(rest)),
            ty,
            span,
        },
        span,
    });
    let read_c = Expr {
        kind: ExprKind::Read {
            var: found.count,
            access: found.access,
        },
        ty,
        span,
    };
    s.equations[eq].expr = Expr {
        kind: ExprKind::Binary(
            crate::vocab::BinOp::Add,
            Box::new(read_c),
            Box::new(identity_read(last, &x_space, ty, span)?),
        ),
        ty,
        span,
    };
    Ok(())
}

/// The reductions whose results `C`'s right-hand side `e` adds: `e` a sum
/// (`+`) of identity reads of int locals defined by coordinate-projection
/// `+` reductions over one convex piece, or such a reduction itself.
fn sum_terms<'a>(s: &'a System, c: VarId, e: &'a Expr) -> Option<Vec<&'a Reduction>> {
    let n = s.vars[c].domain.n_dims();
    let ok = |r: &Reduction| {
        r.op == ReduceOp::Add
            && r.body.ty == ElemType::Int
            && r.body_domain.pieces().len() == 1
            && coordinate_projection(&r.proj) == Some((0..n).collect())
    };
    if let ExprKind::Reduce(r) = &e.kind {
        return ok(r).then(|| vec![&**r]);
    }
    let mut leaves = Vec::new();
    flatten_sum(e, &mut leaves);
    let np = s.params.len();
    let mut out = Vec::new();
    for leaf in leaves {
        let ExprKind::Read { var, access } = &leaf.kind else {
            return None;
        };
        let identity = access.n_out() == n
            && access.rows().iter().enumerate().all(|(t, row)| {
                row.iter()
                    .enumerate()
                    .all(|(k, &v)| v == i64::from(k == np + t))
            });
        let ExprKind::Reduce(r) = &s.equation_of(*var)?.expr.kind else {
            return None;
        };
        if !identity || s.vars[*var].ty != ElemType::Int || !ok(r) {
            return None;
        }
        out.push(&**r);
    }
    Some(out)
}

fn flatten_sum<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match &e.kind {
        ExprKind::Binary(crate::vocab::BinOp::Add, a, b) => {
            flatten_sum(a, out);
            flatten_sum(b, out);
        }
        _ => out.push(e),
    }
}

/// The values `i0` (rows over the parameters and the constant) of the
/// bounds `±i + a(params) >= 0` of the last dimension (number `n_x`) of
/// `domain` that involve no other dimension.
fn bounds_of_last(domain: &Set, n_x: usize) -> Result<Vec<Vec<i64>>, SdrError> {
    let np = domain.n_params();
    let mut out: Vec<Vec<i64>> = Vec::new();
    for piece in domain.pieces() {
        for row in piece.ineqs() {
            let others = (0..n_x).any(|d| row[np + d] != 0);
            let coef = row[np + n_x];
            if others || coef.abs() != 1 {
                continue;
            }
            // coef·i + a >= 0: i = a (coef = 1, lower) or i = a (coef = -1, upper)
            let mut at: Vec<i64> = row[..np].to_vec();
            at.push(row[np + n_x + 1]);
            if coef == 1 {
                for v in &mut at {
                    *v = v.checked_neg().ok_or_else(overflow)?;
                }
            }
            if !out.contains(&at) {
                out.push(at);
            }
        }
    }
    Ok(out)
}

fn overflow() -> SdrError {
    SdrError::Internal("overflow in a bound".into())
}
