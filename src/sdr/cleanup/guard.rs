//! A reduction computed only where its readers use it.
//!
//! Let `R[x] = ⊕ { E(y) : y ∈ P, p(y) = x }` be a local, not reading
//! itself, whose every read is an affine read `R[f(c)]` with `f` a
//! translation of the reader's indices up to their order (so `x = f(c)`
//! exactly when `c = g(x)`, `g` the inverse translation), and let `G(c)`
//! be a condition known to hold at each of those reads (`known`: the
//! reader evaluates `R[f(c)]` only inside `if G then ...`, or in the
//! `else` branch of `if not G ...`), the same condition `G(g(x))` at all
//! of them once moved to `R`'s indices. The values of `R` at the points
//! where `G(g(x))` is false are never read, and
//!
//! `R[x] = ⊕ { if G(g(p(y))) then E(y) else id : y ∈ P, p(y) = x }`
//!
//! equals the old `R[x]` wherever `G(g(x))` holds (the same body values
//! folded in the same order) — so at every point read. Where it is false
//! it is the identity, computed for nothing: code generation hoists the
//! condition, constant along the reduction, out of the accumulation loop,
//! and the sum is not computed at all. (A body already of the form `if c
//! then F else id` gets the new conjuncts after `c`.)
//!
//! `G` is the conjunction of the comparisons known at every read that
//! - compare *atoms* (constants, affine functions of the indices, affine
//!   reads), at least one a read: nothing in them can fail, now that they
//!   are evaluated at every point of `R`'s domain;
//! - read no variable that depends on `R`, directly or not (the new reads
//!   add dependences to `R`'s statement: no cycle may appear), and only
//!   inputs and variables `R` already depends on: the guard adds no
//!   dependence between variables, so the schedule keeps its shape (a
//!   table of inputs such as a document's length, computed before the
//!   sweep, is not made to wait for the proposals);
//! - are not already conjuncts of the body's condition.
//!
//! The new reads must lie inside their variables' domains at every point
//! of `R`'s domain (`G`'s reads are affine: an exact inclusion test).
//!
//! Why: after [`super::arms`], a Metropolis–Hastings sweep reads the
//! proposal's and the current label's sums
//! `Σ_a lgamma(n[k, a] + X[d, a] + β) − lgamma(n[k, a] + β)` only where
//! `kp[d] != z[d]`: the sums are
//! skipped for a proposal equal to the label, as a hand-written sweep
//! skips that document.

use super::super::rewrite::subst::pullback;
use super::super::{DecisionKind, SdrError};
use super::known::{conjuncts, same, walk_reads_known, Known};
use super::reads::read_var;
use super::{eq_domain, identity_const, reads_var, Cx};
use crate::ir::*;

/// Guards every candidate reduction by its readers' common condition (see
/// the module comment).
pub(crate) fn run(cx: &mut Cx, s: &mut System) -> Result<(), SdrError> {
    for x in 0..s.vars.len() {
        if !candidate(s, x) {
            continue;
        }
        let name = s.vars[x].name.clone();
        let res = try_guard(s, x);
        match cx.declined_on_poly(&name, DecisionKind::Guard, res)? {
            Some(Ok((next, detail))) => {
                *s = next;
                cx.decide(&name, DecisionKind::Guard, true, "applied", detail);
            }
            Some(Err(Some(reason))) => {
                cx.decide(&name, DecisionKind::Guard, false, &reason, String::new());
            }
            Some(Err(None)) | None => {}
        }
    }
    Ok(())
}

/// A local defined by a reduction, not reading itself, read elsewhere.
fn candidate(s: &System, x: VarId) -> bool {
    s.vars[x].kind == VarKind::Local
        && s.equation_of(x).is_some_and(|eq| {
            matches!(eq.expr.kind, ExprKind::Reduce(_)) && !reads_var(&eq.expr, x)
        })
        && s.equations
            .iter()
            .any(|e| e.var != x && reads_var(&e.expr, x))
}

/// The guarded system and the decision's detail; `Err(None)` when no
/// condition is known at the reads (nothing to decide), `Err(Some(..))`
/// with the reason it is declined.
type Guarded = Result<(System, String), Option<String>>;

/// Examines the local `x` (see the module comment).
fn try_guard(s: &System, x: VarId) -> Result<Guarded, SdrError> {
    let Some(eq_x) = s.equations.iter().position(|e| e.var == x) else {
        return Ok(Err(None));
    };
    let ExprKind::Reduce(r) = &s.equations[eq_x].expr.kind else {
        return Ok(Err(None));
    };
    if !s
        .equations
        .iter()
        .enumerate()
        .all(|(k, eq)| k == eq_x || reads_only_under_conditions(&eq.expr, x, false))
    {
        return Ok(Err(None));
    }
    let x_space = Space::set(&s.params, &s.equations[eq_x].indices);
    // the conditions known at every read, over x's indices
    let mut common: Option<Vec<Expr>> = None;
    let mut refusal: Option<String> = None;
    for (k, eq) in s.equations.iter().enumerate() {
        if k == eq_x || !reads_var(&eq.expr, x) || refusal.is_some() {
            continue;
        }
        let ctx = eq_domain(s, eq)?;
        walk_reads_known(&eq.expr, &ctx, &Known::default(), &mut |e, c, known| {
            if read_var(e) != Some(x) || refusal.is_some() {
                return Ok(());
            }
            let ExprKind::Read { access, .. } = &e.kind else {
                refusal = Some(format!("an indirect read in {}", s.vars[eq.var].name));
                return Ok(());
            };
            let Some(g) = inverse_translation(access, &x_space, c.space())? else {
                refusal = Some(format!(
                    "a read in {} that is not a translation of its indices",
                    s.vars[eq.var].name
                ));
                return Ok(());
            };
            let mut here = Vec::new();
            for a in &known.atoms {
                if plain_comparison(a) {
                    if let Some(p) = pullback(a, &g)? {
                        here.push(p);
                    }
                }
            }
            common = Some(match common.take() {
                None => here,
                Some(prev) => prev
                    .into_iter()
                    .filter(|p| here.iter().any(|h| same(p, h)))
                    .collect(),
            });
            Ok(())
        })?;
    }
    if let Some(reason) = refusal {
        return Ok(Err(Some(reason)));
    }
    let Some(common) = common else {
        return Ok(Err(None));
    };
    // the body's own condition, when it is `if c then F else id`
    let id = identity_const(r.op, r.body.ty, r.body.span);
    let (cond, inner) = match &r.body.kind {
        ExprKind::If(c, f, e) if same(e, &id) => (Some((**c).clone()), (**f).clone()),
        _ => (None, r.body.clone()),
    };
    let have = cond.as_ref().map(conjuncts).unwrap_or_default();
    let downstream = depends_on(s, x);
    let mut allowed = read_by(s, x);
    for (v, var) in s.vars.iter().enumerate() {
        allowed[v] = (allowed[v] || var.kind == VarKind::Input) && !downstream[v];
    }
    let mut added = Vec::new();
    let mut new_atoms = Vec::new();
    let mut texts = Vec::new();
    for a in &common {
        if !reads_only(a, &allowed) {
            continue;
        }
        let Some(b) = pullback(a, &r.proj)? else {
            continue;
        };
        if have.iter().chain(&added).any(|h| same(h, &b)) {
            continue;
        }
        texts.push(super::super::rewrite::expr_text(a, s));
        new_atoms.push(a.clone());
        added.push(b);
    }
    if added.is_empty() {
        return Ok(Err(None));
    }
    let span = r.body.span;
    let and = |l: Expr, r: Expr| Expr {
        kind: ExprKind::Binary(BinOp::And, Box::new(l), Box::new(r)),
        ty: ElemType::Bool,
        span,
    };
    let mut guard = cond;
    for b in added {
        guard = Some(match guard {
            None => b,
            Some(g) => and(g, b),
        });
    }
    let Some(guard) = guard else {
        return Err(SdrError::Internal("guard: no condition".into()));
    };
    let body = Expr {
        kind: ExprKind::If(Box::new(guard), Box::new(inner), Box::new(id)),
        ty: r.body.ty,
        span,
    };
    // the new reads, inside their variables' domains at every point of R
    let d_x = eq_domain(s, &s.equations[eq_x])?;
    for a in &new_atoms {
        if !reads_inside(s, a, &d_x)? {
            return Ok(Err(Some(
                "the condition reads outside a domain at a point of the reduction".into(),
            )));
        }
    }
    let mut out = s.clone();
    if let ExprKind::Reduce(r) = &mut out.equations[eq_x].expr.kind {
        r.body = body;
    }
    Ok(Ok((
        out,
        format!("computed only where {}", texts.join(" and ")),
    )))
}

/// Every affine read of `e` is inside its variable's domain at every
/// point of `d` (`e` over `d`'s space).
fn reads_inside(s: &System, e: &Expr, d: &Set) -> Result<bool, SdrError> {
    if let ExprKind::Read { var, access } = &e.kind {
        let dom = s.vars[*var].domain.intersect_params(&s.context)?;
        if !d.is_subset(&dom.preimage(access)?)? {
            return Ok(false);
        }
    }
    let mut res = Ok(true);
    e.for_each_child(&mut |c| {
        if matches!(res, Ok(true)) {
            res = reads_inside(s, c, d);
        }
    });
    res
}

/// Every read of `x` in `e` is under a condition: in a branch of an `if`,
/// or the right operand of `and`/`or` (`under` says whether `e` is). A
/// quick test before the known conditions are collected.
fn reads_only_under_conditions(e: &Expr, x: VarId, under: bool) -> bool {
    match &e.kind {
        ExprKind::Read { var, .. } | ExprKind::IndirectRead { var, .. } if *var == x => under,
        ExprKind::If(c, a, b) => {
            reads_only_under_conditions(c, x, under)
                && reads_only_under_conditions(a, x, true)
                && reads_only_under_conditions(b, x, true)
        }
        ExprKind::Binary(BinOp::And | BinOp::Or, a, b) => {
            reads_only_under_conditions(a, x, under) && reads_only_under_conditions(b, x, true)
        }
        _ => {
            let mut ok = true;
            e.for_each_child(&mut |c| ok &= reads_only_under_conditions(c, x, under));
            ok
        }
    }
}

/// For an access `f` from the reader's space `c_space` to `x_space` that
/// is a translation of the reader's indices up to their order (`x_k =
/// c_{π(k)} + t_k`, no parameter, `π` a permutation), the inverse `g :
/// x_space → c_space` (`c_{π(k)} = x_k − t_k`); `None` otherwise.
fn inverse_translation(
    f: &MultiAff,
    x_space: &Space,
    c_space: &Space,
) -> Result<Option<MultiAff>, SdrError> {
    let (np, n) = (c_space.n_params(), c_space.n_dims());
    if f.n_out() != n || x_space.n_dims() != n || f.n_in() != n {
        return Ok(None);
    }
    let mut rows: Vec<Option<Vec<i64>>> = vec![None; n];
    for (k, row) in f.rows().iter().enumerate() {
        if row[..np].iter().any(|&v| v != 0) {
            return Ok(None);
        }
        let dims = &row[np..np + n];
        let ones: Vec<usize> = (0..n).filter(|&j| dims[j] == 1).collect();
        if ones.len() != 1 || dims.iter().filter(|&&v| v != 0).count() != 1 {
            return Ok(None);
        }
        let j = ones[0];
        if rows[j].is_some() {
            return Ok(None);
        }
        let mut g = vec![0; np + n + 1];
        g[np + k] = 1;
        g[np + n] = row[np + n]
            .checked_neg()
            .ok_or(crate::poly::PolyError::Overflow)?;
        rows[j] = Some(g);
    }
    let rows: Option<Vec<Vec<i64>>> = rows.into_iter().collect();
    let Some(rows) = rows else {
        return Ok(None);
    };
    Ok(Some(MultiAff::new(
        x_space.clone(),
        c_space.output.clone(),
        rows,
    )?))
}

/// A comparison of two atoms (constants, affine functions of the indices,
/// affine reads), at least one of them a read.
fn plain_comparison(e: &Expr) -> bool {
    let ExprKind::Binary(op, u, v) = &e.kind else {
        return false;
    };
    let atom = |a: &Expr| {
        matches!(
            a.kind,
            ExprKind::IntConst(_) | ExprKind::Index(_) | ExprKind::Read { .. }
        )
    };
    let read = |a: &Expr| matches!(a.kind, ExprKind::Read { .. });
    matches!(
        op,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
    ) && atom(u)
        && atom(v)
        && (read(u) || read(v))
}

/// The variables that depend on `x`, directly or not, `x` included.
fn depends_on(s: &System, x: VarId) -> Vec<bool> {
    let mut dep = vec![false; s.vars.len()];
    dep[x] = true;
    let mut changed = true;
    while changed {
        changed = false;
        for eq in &s.equations {
            if !dep[eq.var] && reads_any(&eq.expr, &dep) {
                dep[eq.var] = true;
                changed = true;
            }
        }
    }
    dep
}

/// The variables `x` depends on, directly or not (not `x` itself unless
/// it is on a cycle).
fn read_by(s: &System, x: VarId) -> Vec<bool> {
    let mut up = vec![false; s.vars.len()];
    let mut todo = vec![x];
    while let Some(v) = todo.pop() {
        let Some(eq) = s.equation_of(v) else {
            continue;
        };
        for_each_read(&eq.expr, &mut |w| {
            if !up[w] {
                up[w] = true;
                todo.push(w);
            }
        });
    }
    up
}

/// Calls `f` with the variable of every read in `e`.
fn for_each_read(e: &Expr, f: &mut dyn FnMut(VarId)) {
    if let Some(v) = read_var(e) {
        f(v);
    }
    e.for_each_child(&mut |c| for_each_read(c, f));
}

/// Every read in `e` is of a variable marked in `vars`.
fn reads_only(e: &Expr, vars: &[bool]) -> bool {
    let mut ok = read_var(e).is_none_or(|v| vars[v]);
    if ok {
        e.for_each_child(&mut |c| ok &= reads_only(c, vars));
    }
    ok
}

/// `e` reads a variable marked in `vars`.
fn reads_any(e: &Expr, vars: &[bool]) -> bool {
    let mut found = matches!(
        &e.kind,
        ExprKind::Read { var, .. } | ExprKind::IndirectRead { var, .. } if vars[*var]
    );
    if !found {
        e.for_each_child(&mut |c| found |= reads_any(c, vars));
    }
    found
}
