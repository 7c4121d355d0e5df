//! A choice between two values, not made when the values are equal.
//!
//! `if C then a else b`, with `a` and `b` int or bool *atoms* (constants,
//! affine functions of the indices, affine reads) that are not the same
//! expression, is
//!
//! `if a == b then b else (if C then a else b)`:
//!
//! where the arms are equal either choice gives `b`. Exact: ints and
//! bools compare exactly, and no value changes.
//!
//! Why: a Metropolis–Hastings acceptance `znew = if u < exp(Lp − Lz) then
//! kp else z` evaluates its ratio only for a proposal `kp` that differs
//! from the current label, as a hand-written sampler does, and the `guard`
//! pass then computes the reductions the ratio reads (`Σ_a lgamma(...)`
//! at the proposed and at the current label) only there. Applied when `C`
//! reads a local defined by a reduction (a costly condition); elsewhere
//! the extra comparison would buy nothing.
//!
//! Errors: both arms are now evaluated, and an atom cannot fail (an affine
//! read is inside its variable's domain over the whole context of the
//! `if`: the IR's domain checks prove it there, not per branch). `C` is no
//! longer evaluated where the arms are equal, so it must have nothing that
//! fails: every indirect read provably inside its domain ([`inside`]), no
//! integer division or remainder by a non-constant, no `int(...)`,
//! selection value, `categorical`, external call, nested reduction, `case`
//! or draw other than `uniform()`. Integer overflow is the one failure not
//! excluded (as for every pass that leaves a value unread: only what is
//! read is evaluated, in the reference interpreter too).

use super::super::{DecisionKind, SdrError};
use super::known::{children_known_mut, inside, same, walk_reads_known, Known};
use super::{eq_domain, Cx};
use crate::ir::*;
use crate::vocab::Distribution;

/// Rewrites every qualifying choice of every equation (see the module
/// comment); one decision per equation changed.
pub(crate) fn run(cx: &mut Cx, s: &mut System) -> Result<(), SdrError> {
    for k in 0..s.equations.len() {
        // The contexts and known conditions only where a choice may qualify.
        if !has_candidate(s, &s.equations[k].expr) {
            continue;
        }
        let ctx = eq_domain(s, &s.equations[k])?;
        let mut expr = s.equations[k].expr.clone();
        let mut made = Vec::new();
        rewrite(s, &mut expr, &ctx, &Known::default(), &mut made)?;
        if made.is_empty() {
            continue;
        }
        s.equations[k].expr = expr;
        let name = s.vars[s.equations[k].var].name.clone();
        cx.decide(
            &name,
            DecisionKind::EqualArms,
            true,
            "applied",
            format!("the choice skipped where {}", made.join("; ")),
        );
    }
    Ok(())
}

/// Rewrites the qualifying choices in `e` (evaluated over `ctx` where
/// `known` holds), outermost first; `made` gets `a == b` per rewrite.
fn rewrite(
    s: &System,
    e: &mut Expr,
    ctx: &Set,
    known: &Known,
    made: &mut Vec<String>,
) -> Result<(), SdrError> {
    if let ExprKind::If(c, a, b) = &e.kind {
        if qualifies(s, e.ty, c, a, b, ctx, known)? {
            made.push(format!(
                "{} == {}",
                super::super::rewrite::expr_text(a, s),
                super::super::rewrite::expr_text(b, s)
            ));
            let (ty, span) = (e.ty, e.span);
            let eq = Expr {
                kind: ExprKind::Binary(BinOp::Eq, a.clone(), b.clone()),
                ty: ElemType::Bool,
                span,
            };
            let b = b.clone();
            let inner = Expr {
                kind: std::mem::replace(&mut e.kind, ExprKind::BoolConst(false)),
                ty,
                span,
            };
            e.kind = ExprKind::If(Box::new(eq), b, Box::new(inner));
            return Ok(());
        }
    }
    children_known_mut(e, ctx, known, &mut |c, cx, kn| rewrite(s, c, cx, kn, made))
}

/// `if c then a else b` (of type `ty`) qualifies: int or bool atoms that
/// differ, not already under `a != b`, a costly condition that cannot fail
/// (see the module comment).
fn qualifies(
    s: &System,
    ty: ElemType,
    c: &Expr,
    a: &Expr,
    b: &Expr,
    ctx: &Set,
    known: &Known,
) -> Result<bool, SdrError> {
    if !matches!(ty, ElemType::Int | ElemType::Bool)
        || a.ty != b.ty
        || !atom(a)
        || !atom(b)
        || same(a, b)
    {
        return Ok(false);
    }
    let differ = |x: &Expr, y: &Expr| {
        known.atoms.iter().any(
            |k| matches!(&k.kind, ExprKind::Binary(BinOp::Ne, u, v) if same(u, x) && same(v, y)),
        )
    };
    if differ(a, b) || differ(b, a) || !reads_reduction(s, c) || !cannot_fail(c) {
        return Ok(false);
    }
    let mut proven = true;
    walk_reads_known(c, ctx, known, &mut |node, c_ctx, c_known| {
        if let ExprKind::IndirectRead { var, .. } = &node.kind {
            if proven {
                let d = s.vars[*var].domain.intersect_params(&s.context)?;
                proven = inside(s, node, c_ctx, c_known, &d)?;
            }
        }
        Ok(())
    })?;
    Ok(proven)
}

/// `e` has a choice between two different int or bool atoms whose
/// condition reads a reduction-defined local (the syntactic part of
/// [`qualifies`]).
fn has_candidate(s: &System, e: &Expr) -> bool {
    if let ExprKind::If(c, a, b) = &e.kind {
        if matches!(e.ty, ElemType::Int | ElemType::Bool)
            && atom(a)
            && atom(b)
            && !same(a, b)
            && reads_reduction(s, c)
        {
            return true;
        }
    }
    let mut found = false;
    e.for_each_child(&mut |c| found = found || has_candidate(s, c));
    found
}

/// A constant, an affine function of the indices or an affine read.
fn atom(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::IntConst(_) | ExprKind::BoolConst(_) | ExprKind::Index(_) | ExprKind::Read { .. }
    )
}

/// `e` reads a local defined by a reduction.
fn reads_reduction(s: &System, e: &Expr) -> bool {
    let mut found = match &e.kind {
        ExprKind::Read { var, .. } | ExprKind::IndirectRead { var, .. } => {
            s.vars[*var].kind == VarKind::Local
                && s.equation_of(*var)
                    .is_some_and(|eq| matches!(eq.expr.kind, ExprKind::Reduce(_)))
        }
        _ => false,
    };
    if !found {
        e.for_each_child(&mut |c| found |= reads_reduction(s, c));
    }
    found
}

/// Nothing in `e` fails but integer overflow and indirect reads (proven
/// separately): see the module comment for the forms refused.
fn cannot_fail(e: &Expr) -> bool {
    let ok = match &e.kind {
        ExprKind::IntConst(_)
        | ExprKind::FloatConst(_)
        | ExprKind::BoolConst(_)
        | ExprKind::Index(_)
        | ExprKind::Read { .. }
        | ExprKind::IndirectRead { .. }
        | ExprKind::Unary(..)
        | ExprKind::If(..) => true,
        ExprKind::Binary(BinOp::Div | BinOp::Rem, x, y) => {
            x.ty == ElemType::Float
                || y.ty == ElemType::Float
                || matches!(y.kind, ExprKind::IntConst(v) if v != 0)
        }
        ExprKind::Binary(..) => true,
        ExprKind::Builtin(f, _) => *f != Builtin::ToInt,
        ExprKind::Random(d, _, _) => *d == Distribution::Uniform,
        ExprKind::Case(_)
        | ExprKind::Restrict(..)
        | ExprKind::Reduce(_)
        | ExprKind::External(..)
        | ExprKind::Categorical(_)
        | ExprKind::Selection(_) => false,
    };
    let mut all = ok;
    if all {
        e.for_each_child(&mut |c| all &= cannot_fail(c));
    }
    all
}
