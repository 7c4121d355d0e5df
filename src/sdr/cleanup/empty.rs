//! Reads of empty reductions as identities, and domains shrunk to where a
//! reduction-defined local is read.
//!
//! For `R[x] = ⊕ { E(y) : y ∈ P, p(y) = x }`, let `S ⊇ p(P)` be the
//! rational shadow of the projection of the graph of `p` on `P` (a
//! superset of the integer image; exact in the usual cases). At a point
//! `x ∉ S`, `R[x]` is the identity of `⊕`. So an affine read `R[f(c)]`
//! evaluated over a context `C` (see `reads`) with `C ∩ f⁻¹(S) = ∅` and
//! `C ⊆ f⁻¹(D_R)` (inside the domain: no run-time error is lost) is the
//! identity constant; the expression around it is then simplified where
//! that is exact ([`simplify`]).
//!
//! When `R` is a local whose every remaining read is affine with
//! `C ⊆ f⁻¹(S')`, where `S'` is `S` without its parameter-only
//! constraints (a superset of `S`: `W >= 2` would exclude the read at
//! `W = 1`, where `R` is the identity), intersected with `D_R`, and
//! `P ⊆ p⁻¹(S')`, then `R`'s domain becomes `S'`: every value read and
//! every body point keeps its place.
//!
//! The same holds for a variable defined by `case { B_k : E_k }` whose
//! piece `E_k` is a constant: an affine read inside `D_X` whose context
//! falls in `B_k` is that constant ([`constant_reads`]; such pieces come
//! from the identity pieces of `pointwise`).
//!
//! Contexts include the system's parameter context.

use super::super::{DecisionKind, SdrError};
use super::reads::{rewrite_reads, walk_reads};
use super::{eq_domain, identity_const, raw_domain, reads_var, Cx};
use crate::ir::*;
use crate::poly::complexity::complexity;
use crate::poly::Constraint;
use crate::vocab::Scalar;

/// Replaces the reads of empty reductions and shrinks domains (see the
/// module comment), one reduction-defined variable at a time; then the
/// reads of constant `case` pieces ([`constant_reads`]).
pub(crate) fn run(cx: &mut Cx, s: &mut System) -> Result<(), SdrError> {
    for v in 0..s.vars.len() {
        let Some(eq) = s.equations.iter().position(|e| e.var == v) else {
            continue;
        };
        if !matches!(
            s.equations[eq].expr.kind,
            ExprKind::Reduce(_) | ExprKind::Case(_)
        ) {
            continue;
        }
        let name = s.vars[v].name.clone();
        let mut work = s.clone();
        let mut found = Vec::new();
        let res = match &s.equations[eq].expr.kind {
            ExprKind::Reduce(r) => process(&mut work, v, eq, r, &mut found),
            ExprKind::Case(_) => constant_reads(&mut work, v, eq, &mut found).map(|()| None),
            _ => continue,
        };
        let Some(shrunk) = cx.declined_on_poly(&name, DecisionKind::EmptyRead, res)? else {
            continue;
        };
        *s = work;
        for reader in found {
            let detail = match &s.equations[eq].expr.kind {
                ExprKind::Reduce(_) => {
                    format!("reads of {name} outside the image of its body domain")
                }
                _ => format!("reads of {name} in a constant piece"),
            };
            cx.decide(&reader, DecisionKind::EmptyRead, true, "applied", detail);
        }
        if let Some(detail) = shrunk {
            cx.decide(&name, DecisionKind::Shrink, true, "applied", detail);
        }
    }
    Ok(())
}

/// For `X[x] = case { B_k : E_k }`: an affine read `X[f(c)]` over a
/// context `C` inside `D_X` (`C ⊆ f⁻¹(D_X)`) and inside one piece
/// (`C ⊆ f⁻¹(B_k)`) whose expression is a constant is that constant
/// (converted to `X`'s type as `case` converts it); `found` gets the
/// readers changed.
fn constant_reads(
    s: &mut System,
    v: VarId,
    eq: usize,
    found: &mut Vec<String>,
) -> Result<(), SdrError> {
    let ExprKind::Case(pieces) = &s.equations[eq].expr.kind else {
        return Ok(());
    };
    let ty = s.vars[v].ty;
    let consts: Vec<(Set, Expr)> = pieces
        .iter()
        .filter_map(|(d, e)| constant_as(e, ty).map(|c| (d.clone(), c)))
        .collect();
    if consts.is_empty() {
        return Ok(());
    }
    let d_x = eq_domain(s, &s.equations[eq])?;
    rewrite_readers(s, v, eq, found, &mut |access, c| {
        if !c.is_subset(&d_x.preimage(access)?)? {
            return Ok(None);
        }
        for (b, k) in &consts {
            if c.is_subset(&b.preimage(access)?)? {
                return Ok(Some(k.clone()));
            }
        }
        Ok(None)
    })
}

/// The constant `e` as a value of type `ty` (an int constant in a float
/// variable converted as the interpreter converts it), or `None`.
fn constant_as(e: &Expr, ty: ElemType) -> Option<Expr> {
    let kind = match (&e.kind, ty) {
        (ExprKind::IntConst(x), ElemType::Int) => ExprKind::IntConst(*x),
        (ExprKind::IntConst(x), ElemType::Float) => ExprKind::FloatConst(*x as f64),
        (ExprKind::FloatConst(x), ElemType::Float) => ExprKind::FloatConst(*x),
        (ExprKind::BoolConst(x), ElemType::Bool) => ExprKind::BoolConst(*x),
        _ => return None,
    };
    Some(Expr {
        kind,
        ty,
        span: e.span,
    })
}

/// Given a read's access and context, the expression replacing the read.
type Replacer<'a> = dyn FnMut(&MultiAff, &Set) -> Result<Option<Expr>, SdrError> + 'a;

/// Replaces, in every equation but `eq`, each affine read of `v` for which
/// `replace(access, context)` gives an expression by that expression,
/// simplifying the equations changed ([`simplify`]); `found` gets their
/// variables' names.
fn rewrite_readers(
    s: &mut System,
    v: VarId,
    eq: usize,
    found: &mut Vec<String>,
    replace: &mut Replacer<'_>,
) -> Result<(), SdrError> {
    for k in 0..s.equations.len() {
        // Contexts are computed only for equations that read `v`.
        if k == eq || !reads_var(&s.equations[k].expr, v) {
            continue;
        }
        let ctx = eq_domain(s, &s.equations[k])?;
        let mut expr = s.equations[k].expr.clone();
        let mut changed = false;
        rewrite_reads(&mut expr, &ctx, &mut |e, c| {
            let ExprKind::Read { var, access } = &e.kind else {
                return Ok(());
            };
            if *var != v {
                return Ok(());
            }
            if let Some(new) = replace(access, c)? {
                *e = Expr {
                    span: e.span,
                    ..new
                };
                changed = true;
            }
            Ok(())
        })?;
        if changed {
            simplify(&mut expr);
            s.equations[k].expr = expr;
            found.push(s.vars[s.equations[k].var].name.clone());
        }
    }
    Ok(())
}

/// The work on variable `v` defined by `r` in equation `eq`: `found` gets
/// the readers whose reads became the identity; returns the detail of the
/// shrink when the domain was shrunk.
fn process(
    s: &mut System,
    v: VarId,
    eq: usize,
    r: &Reduction,
    found: &mut Vec<String>,
) -> Result<Option<String>, SdrError> {
    let d_r = eq_domain(s, &s.equations[eq])?;
    let x_space = d_r.space().clone();
    let (shadow, _) = r
        .proj
        .to_map()?
        .intersect_domain(&r.body_domain)?
        .range_with_exactness()?;
    let image = shadow.renamed(x_space.clone())?;
    let ty = s.vars[v].ty;
    let id = identity_const(r.op, ty, s.equations[eq].expr.span);
    rewrite_readers(s, v, eq, found, &mut |access, c| {
        let inside = c.is_subset(&d_r.preimage(access)?)?;
        let empty = inside && c.intersect(&image.preimage(access)?)?.is_empty()?;
        Ok(empty.then(|| id.clone()))
    })?;
    if s.vars[v].kind != VarKind::Local {
        return Ok(None);
    }
    shrink(s, v, eq, r, &d_r, &image)
}

/// Shrinks the domain of the local `v` (see the module comment); returns
/// the detail of the decision when it did.
fn shrink(
    s: &mut System,
    v: VarId,
    eq: usize,
    r: &Reduction,
    d_r: &Set,
    image: &Set,
) -> Result<Option<String>, SdrError> {
    let raw = raw_domain(s, &s.equations[eq])?;
    let target = drop_param_constraints(image)?.intersect(&raw)?.simplify()?;
    let body = r.body_domain.intersect_params(&s.context)?;
    if d_r.is_subset(&target)? || !body.is_subset(&target.preimage(&r.proj)?)? {
        return Ok(None);
    }
    for k in 0..s.equations.len() {
        if !reads_var(&s.equations[k].expr, v) {
            continue;
        }
        let ctx = eq_domain(s, &s.equations[k])?;
        let mut ok = true;
        walk_reads(&s.equations[k].expr, &ctx, &mut |e, c| {
            match &e.kind {
                ExprKind::Read { var, access } if *var == v => {
                    ok &= k != eq && c.is_subset(&target.preimage(access)?)?;
                }
                ExprKind::IndirectRead { var, .. } if *var == v => ok = false,
                _ => {}
            }
            Ok(())
        })?;
        if !ok {
            return Ok(None);
        }
    }
    let before = complexity(&raw)?;
    let after = complexity(&target)?;
    s.vars[v].domain = target.renamed(s.vars[v].domain.space().clone())?;
    Ok(Some(format!("domain {before} -> {after}")))
}

/// `s` without the constraints that involve no dimension (a superset).
pub(crate) fn drop_param_constraints(s: &Set) -> Result<Set, SdrError> {
    let np = s.n_params();
    let nd = s.n_dims();
    let pieces: Vec<Vec<Constraint>> = s
        .pieces()
        .iter()
        .map(|b| {
            b.constraints()
                .into_iter()
                .filter(|c| c.row[np..np + nd].iter().any(|&x| x != 0))
                .collect()
        })
        .collect();
    Ok(Set::from_constraints(s.space().clone(), pieces)?)
}

/// True when `e` is the constant `v` (ints exactly; a float equal to `v`,
/// so both zeros match 0).
fn is_const(e: &Expr, v: i64) -> bool {
    match e.kind {
        ExprKind::IntConst(x) => x == v,
        ExprKind::FloatConst(x) => x == v as f64,
        _ => false,
    }
}

/// True when `e` is the identity of `max` (`is_max`) or `min` at its type.
fn is_extremum_identity(e: &Expr, is_max: bool) -> bool {
    let op = if is_max { ReduceOp::Max } else { ReduceOp::Min };
    match (&e.kind, op.identity(e.ty)) {
        (ExprKind::IntConst(x), Scalar::Int(y)) => *x == y,
        (ExprKind::FloatConst(x), Scalar::Float(y)) => *x == y,
        _ => false,
    }
}

/// Removes the neutral operands, bottom-up, where the result is the other
/// operand at the same type: `x + 0`, `0 + x`, `x - 0`, `x * 1`, `1 * x`,
/// `x and true`, `true and x`, `x or false`, `false or x`, and the
/// identity arguments of `max`/`min` (`-inf`, `i64::MIN`; `+inf`,
/// `i64::MAX`). Exact, except that a float `-0.0 + 0.0` was `+0.0`.
pub(crate) fn simplify(e: &mut Expr) {
    e.for_each_child_mut(&mut simplify);
    let ty = e.ty;
    let keep = |x: &Expr| x.ty == ty;
    let replacement = match &mut e.kind {
        ExprKind::Binary(op, a, b) => {
            let bool_is = |x: &Expr, v: bool| matches!(x.kind, ExprKind::BoolConst(y) if y == v);
            match op {
                BinOp::Add if is_const(b, 0) && keep(a) => Some((**a).clone()),
                BinOp::Add if is_const(a, 0) && keep(b) => Some((**b).clone()),
                BinOp::Sub if is_const(b, 0) && keep(a) => Some((**a).clone()),
                BinOp::Mul if is_const(b, 1) && keep(a) => Some((**a).clone()),
                BinOp::Mul if is_const(a, 1) && keep(b) => Some((**b).clone()),
                BinOp::And if bool_is(b, true) => Some((**a).clone()),
                BinOp::And if bool_is(a, true) => Some((**b).clone()),
                BinOp::Or if bool_is(b, false) => Some((**a).clone()),
                BinOp::Or if bool_is(a, false) => Some((**b).clone()),
                _ => None,
            }
        }
        ExprKind::Builtin(b @ (Builtin::Max | Builtin::Min), args) => {
            let is_max = *b == Builtin::Max;
            let kept: Vec<Expr> = args
                .iter()
                .filter(|x| !is_extremum_identity(x, is_max))
                .cloned()
                .collect();
            match kept.as_slice() {
                [x] if keep(x) => Some(x.clone()),
                xs if xs.len() >= 2 => {
                    *args = kept;
                    None
                }
                _ => None,
            }
        }
        _ => None,
    };
    if let Some(r) = replacement {
        *e = r;
    }
}
