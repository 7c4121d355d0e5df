//! Factorization (distributivity): a factor that does not change along the
//! reduction moves out of it.
//!
//! For a body `f(y) ⊗ g(y)` where `f` depends only on the kept
//! coordinates of a coordinate projection `p` (so `f(y) = f'(p(y))`) and
//! `⊗` distributes over the reduction operator `⊕`:
//!
//! ```text
//! Σ   { f·g : y ∈ P, p(y) = x } = f'(x) · Σ   { g : … }     (⊗ = ·, ⊕ = +)
//! max { f+g : y ∈ P, p(y) = x } = f'(x) + max { g : … }     (⊗ = +, ⊕ = max)
//! min { f+g : y ∈ P, p(y) = x } = f'(x) + min { g : … }
//! ```
//!
//! for every `x` with a non-empty slice, i.e. `x ∈ p(P)` (exact image).
//! Elsewhere the reduction is empty (the identity) and `f'(x)` may not even
//! be defined (its reads may leave their arrays), so the result is guarded:
//! `case { p(P) : f'(x) ⊗ Xf[x]; D_X − p(P) : identity }`, with the new
//! local `Xf[x] = ⊕ { g : … }` (every reduction stays the whole right-hand
//! side of an equation, the normal form later passes expect). `*` over
//! `max` (only valid for non-negative factors) is never used.
//!
//! The rewrite keeps the cost of the equation (`|D_X| + |P|`) and exposes
//! `g` alone to the other rewrites and to SDR (its share space is larger).
//! Float results agree up to rounding (`+`/`*` reassociation); `x ↦ f + x`
//! is monotone, so `max`/`min` of finite values are exact.

use super::super::normalize::identity_read;
use super::super::SdrError;
use super::subst::{dropping, independent_of, is_opaque, pullback};
use super::{expr_text, identity_const, image_in_outer, reduction_eq, Cx, ReductionEq};
use crate::ir::*;

/// The operator that distributes over `op` and may be factored out of it.
fn distributing(op: ReduceOp) -> Option<BinOp> {
    match op {
        ReduceOp::Add => Some(BinOp::Mul),
        ReduceOp::Max | ReduceOp::Min => Some(BinOp::Add),
        _ => None,
    }
}

fn flatten(e: &Expr, op: BinOp, ty: ElemType, out: &mut Vec<Expr>) {
    match &e.kind {
        ExprKind::Binary(o, a, b) if *o == op && e.ty == ty => {
            flatten(a, op, ty, out);
            flatten(b, op, ty, out);
        }
        _ => out.push(e.clone()),
    }
}

/// `a ⊗ b` typed as the source would type it (float if either is).
fn apply(op: BinOp, a: Expr, b: Expr) -> Expr {
    let ty = if a.ty == ElemType::Float || b.ty == ElemType::Float {
        ElemType::Float
    } else {
        a.ty
    };
    let span = a.span.join(b.span);
    Expr {
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
        ty,
        span,
    }
}

fn fold(op: BinOp, xs: Vec<Expr>) -> Option<Expr> {
    let mut it = xs.into_iter();
    let first = it.next()?;
    Some(it.fold(first, |acc, x| apply(op, acc, x)))
}

/// The body of `r` (result type `ty`) as `f ⊗ g` with `f` the product
/// (sum) of the factors (terms) constant along every dimension of `free`
/// and `g` the others; `None` when either is empty or `f` depends on no
/// index.
pub fn split(r: &Reduction, ty: ElemType, free: &[usize]) -> Option<(Expr, Expr, BinOp)> {
    let op = distributing(r.op)?;
    if r.body.ty != ty {
        return None;
    }
    let n = r.body_domain.n_dims();
    let mut factors = Vec::new();
    flatten(&r.body, op, ty, &mut factors);
    let (f, g): (Vec<Expr>, Vec<Expr>) = factors
        .into_iter()
        .partition(|x| !is_opaque(x) && free.iter().all(|&d| independent_of(x, n, d)));
    let f = fold(op, f)?;
    // A factor that depends on no index (a literal, a parameter) leaves
    // the share space of the rest unchanged: moving it out gains nothing.
    if (0..n).all(|d| independent_of(&f, n, d)) {
        return None;
    }
    Some((f, fold(op, g)?, op))
}

/// Factors the reduction equation number `eq` of `s` (see the module
/// comment): returns the new local `Xf` (whose equation the caller may
/// rewrite further) and the factor's text, or `None` when there is no
/// constant factor, the factor cannot be moved to the result space, or the
/// image `p(P)` is not exact.
pub(crate) fn factor_eq(
    cx: &mut Cx,
    s: &mut System,
    eq: usize,
    kept: &[usize],
    free: &[usize],
) -> Result<Option<(VarId, String)>, SdrError> {
    let Some(ReductionEq {
        r,
        ty,
        span,
        var,
        x_space,
    }) = reduction_eq(s, eq)
    else {
        return Ok(None);
    };
    let Some((f, g, op)) = split(&r, ty, free) else {
        return Ok(None);
    };
    let n = r.body_domain.n_dims();
    let Some(f_out) = pullback(&f, &dropping(&x_space, n, kept)?)? else {
        return Ok(None);
    };
    let Some(image) = image_in_outer(&r, kept, &x_space)? else {
        return Ok(None);
    };
    let d_x = s.vars[var].domain.renamed(x_space.clone())?;
    let text = expr_text(&f_out, s);
    let base = s.vars[var].name.clone();
    let fac = cx.new_local(s, &base, "fac", s.vars[var].domain.clone(), ty, span);
    let inner = Reduction { body: g, ..r };
    s.equations.push(Equation {
        var: fac,
        indices: x_space.output.dims.to_vec(),
        expr: Expr {
            kind: ExprKind::Reduce(Box::new(inner)),
            ty,
            span,
        },
        span,
    });
    let combined = apply(op, f_out, identity_read(fac, &x_space, ty, span)?);
    let outside = d_x.subtract(&image)?.simplify()?;
    let rhs = if outside.is_empty()? {
        combined
    } else {
        let inside = d_x.intersect(&image)?.simplify()?;
        Expr {
            kind: ExprKind::Case(vec![
                (inside, combined),
                (outside, identity_const(r.op, ty, span)),
            ]),
            ty,
            span,
        }
    };
    s.equations[eq].expr = rhs;
    Ok(Some((fac, text)))
}
