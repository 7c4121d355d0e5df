//! Reductions that select one body point by data, as pointwise equations.
//!
//! `X[x] = ⊕ { if k == e(x) then F(x, k) else id : (x, k) ∈ P }`, where
//! the reduction runs over one index `k` (the body space is `(x, k)`, the
//! projection keeps `x`), `e` is an int expression that does not depend
//! on `k` (a data-dependent label: `kp[dd]`, `z[i]`), and `id` is the
//! identity of `⊕`, has at most one non-identity body value per result:
//! the one at `k = e(x)`, when `(x, e(x)) ∈ P`. So
//!
//! `X[x] = if (x, e(x)) ∈ P then F(x, e(x)) else id`
//!
//! on the image `p(P)` of the body domain (the identity elsewhere, as a
//! `case` piece, as `pointwise` builds it). `F(x, e(x))` is `F` with the
//! data-dependent coordinate substituted (`subst`: the reads of `F` that
//! involve `k` become indirect reads at `e(x)`, in range under the guard);
//! the membership test is the conjunction of the constraints of `P` (one
//! convex piece) that involve `k`, each `±k + φ(x) (≥ | =) 0` written as a
//! comparison `e(x) (≥ | ≤ | ==) ∓φ(x)` (no arithmetic on `e`, so nothing
//! can overflow that did not; a coefficient other than ±1 is refused).
//! The condition may also be `k == e && rest` (the selecting equality
//! first: `rest` is evaluated only where it holds), which gives
//! `if (x, e) ∈ P and rest(x, e) then F(x, e) else id`.
//!
//! Exact: the interpreter folds the identity with every body value in
//! order; all are the identity but the one at `k = e(x)`, and
//! `id ⊕ v ⊕ id = v` for every operator (`max`/`min` follow IEEE 754-2019,
//! so a NaN survives; `0.0 + v` only turns `-0.0` into `+0.0`). `e` is
//! evaluated once instead of once per point of the slice `P_x` (the same
//! value and the same failure, as it does not depend on `k`; on the image
//! the slice is not empty), and `F` at the same single point. Draws,
//! `categorical`, nested reductions and external calls in `F`, `e` or
//! `rest` are refused (a draw is keyed by its evaluation point).
//!
//! Why: a Metropolis-Hastings sampler written as
//! `Lp[i] = reduce(+, [k], if k == kp[i] then L[k, i] else 0.0)` costs
//! O(K) per point and, worse, keeps `L[k, i]` read at every `k`; as a
//! pointwise equation it reads `L` at one data-selected point, which
//! `specialize` can then compute alone.

use super::super::rewrite::subst::{dropping, independent_of, is_opaque, pullback};
use super::super::rewrite::{coordinate_projection, expr_text, image_in_outer};
use super::super::{DecisionKind, SdrError};
use super::pointwise::one_point_rhs;
use super::subst::{substitute, Access, Coord};
use super::{eq_domain, identity_const, raw_domain, Cx};
use crate::diag::Span;
use crate::ir::*;

/// Rewrites every equation whose right-hand side is a data-selected
/// single-point reduction (see the module comment).
pub(crate) fn run(cx: &mut Cx, s: &mut System) -> Result<(), SdrError> {
    for eq in 0..s.equations.len() {
        let ExprKind::Reduce(r) = &s.equations[eq].expr.kind else {
            continue;
        };
        let r = (**r).clone();
        let Some(shape) = Shape::of(&r) else {
            continue;
        };
        let name = s.vars[s.equations[eq].var].name.clone();
        let res = rewrite_one(s, eq, &r, &shape);
        match cx.declined_on_poly(&name, DecisionKind::Selected, res)? {
            Some(Ok((rhs, detail))) => {
                s.equations[eq].expr = rhs;
                cx.decide(&name, DecisionKind::Selected, true, "applied", detail);
            }
            Some(Err(reason)) => {
                cx.decide(&name, DecisionKind::Selected, false, &reason, String::new());
            }
            None => {}
        }
    }
    Ok(())
}

/// The syntactic shape `if k == e && rest then F else id` of a body over
/// `(x, k)`.
struct Shape {
    /// The selected label `e`, in the body space.
    label: Expr,
    /// The conjuncts after the selecting equality, if any.
    rest: Option<Expr>,
    /// `F`.
    then: Expr,
}

impl Shape {
    /// The shape of `r`'s body, when `r` reduces one index `k` (the last
    /// body dimension) with a projection keeping the others in order.
    fn of(r: &Reduction) -> Option<Shape> {
        let n = r.body_domain.n_dims();
        let kept = coordinate_projection(&r.proj)?;
        if n == 0 || kept != (0..n - 1).collect::<Vec<_>>() {
            return None;
        }
        let ExprKind::If(c, then, els) = &r.body.kind else {
            return None;
        };
        if !is_identity(els, r.op) {
            return None;
        }
        let (label, rest) = selector(c, n, n - 1)?;
        if is_opaque(then) || rest.as_ref().is_some_and(is_opaque) || has_external(then) {
            return None;
        }
        Some(Shape {
            label,
            rest,
            then: (**then).clone(),
        })
    }
}

/// `e` is the identity constant of `op` at its own type (`0.0` and
/// `-0.0` both count for `+`: see the module comment).
fn is_identity(e: &Expr, op: ReduceOp) -> bool {
    let id = identity_const(op, e.ty, e.span);
    match (&e.kind, &id.kind) {
        (ExprKind::FloatConst(a), ExprKind::FloatConst(b)) => a == b,
        (a, b) => a == b,
    }
}

/// `(e, rest)` when the condition `c` is `k == e` or `e == k` (`k` the
/// body dimension `d` of `n`), possibly as the leftmost conjunct of an
/// `and` chain (`rest`: the other conjuncts, in order), with `e` an int
/// expression independent of `k`.
fn selector(c: &Expr, n: usize, d: usize) -> Option<(Expr, Option<Expr>)> {
    match &c.kind {
        ExprKind::Binary(BinOp::Eq, a, b) => {
            let pick = |dim: &Expr, e: &Expr| {
                (is_dim(dim, d) && e.ty == ElemType::Int && independent_of(e, n, d))
                    .then(|| e.clone())
            };
            pick(a, b).or_else(|| pick(b, a)).map(|e| (e, None))
        }
        ExprKind::Binary(BinOp::And, l, r) => {
            let (e, rest) = selector(l, n, d)?;
            let rest = match rest {
                Some(x) => and(x, (**r).clone()),
                None => (**r).clone(),
            };
            Some((e, Some(rest)))
        }
        _ => None,
    }
}

/// `e` is the index `y_d` itself.
fn is_dim(e: &Expr, d: usize) -> bool {
    let ExprKind::Index(a) = &e.kind else {
        return false;
    };
    a.constant_term() == 0
        && a.param_coeffs().iter().all(|&c| c == 0)
        && a.dim_coeffs()
            .iter()
            .enumerate()
            .all(|(k, &c)| c == i64::from(k == d))
}

/// `e` calls an external function.
fn has_external(e: &Expr) -> bool {
    let mut found = matches!(e.kind, ExprKind::External(..));
    if !found {
        e.for_each_child(&mut |c| found |= has_external(c));
    }
    found
}

/// `a and b`.
pub(crate) fn and(a: Expr, b: Expr) -> Expr {
    let span = a.span.join(b.span);
    Expr {
        kind: ExprKind::Binary(BinOp::And, Box::new(a), Box::new(b)),
        ty: ElemType::Bool,
        span,
    }
}

/// The pointwise right-hand side of equation `eq` with its decision
/// detail, or the reason it cannot be built.
fn rewrite_one(
    s: &System,
    eq: usize,
    r: &Reduction,
    shape: &Shape,
) -> Result<Result<(Expr, String), String>, SdrError> {
    let equation = &s.equations[eq];
    let (ty, span) = (equation.expr.ty, equation.expr.span);
    let d_x = raw_domain(s, equation)?;
    let d_ctx = eq_domain(s, equation)?;
    let x_space = d_x.space().clone();
    let n = r.body_domain.n_dims();
    let kept: Vec<usize> = (0..n - 1).collect();
    // x ↦ (x, 0): the label does not depend on k.
    let g = dropping(&x_space, n, &kept)?;
    let Some(label) = pullback(&shape.label, &g)? else {
        return Ok(Err("the selected label cannot be moved".into()));
    };
    let mut coords: Vec<Coord> = (0..n - 1)
        .map(|k| Coord::Affine(Aff::dim(x_space.clone(), k)))
        .collect();
    coords.push(Coord::Data(label.clone()));
    let access = Access {
        space: x_space.clone(),
        coords,
    };
    let Some(mut then) = substitute(&shape.then, &access)? else {
        return Ok(Err("the selected body cannot be moved to the label".into()));
    };
    let rest = match &shape.rest {
        Some(rest) => match substitute(rest, &access)? {
            Some(x) => Some(x),
            None => return Ok(Err("the condition cannot be moved to the label".into())),
        },
        None => None,
    };
    let Some(guard) = membership(r, &g, &label, span)? else {
        return Ok(Err(
            "the body domain is not one convex piece with unit coefficients on the reduced index"
                .into(),
        ));
    };
    let cond = match (guard, rest) {
        (Some(a), Some(b)) => Some(and(a, b)),
        (a, b) => a.or(b),
    };
    if then.ty != ty {
        if ty != ElemType::Float || then.ty != ElemType::Int {
            return Ok(Err("the body's type differs from the reduction's".into()));
        }
        then = Expr {
            span: then.span,
            kind: ExprKind::Builtin(Builtin::ToFloat, vec![then]),
            ty,
        };
    }
    let body = match cond {
        Some(c) => Expr {
            kind: ExprKind::If(
                Box::new(c),
                Box::new(then),
                Box::new(identity_const(r.op, ty, span)),
            ),
            ty,
            span,
        },
        None => then,
    };
    let Some(image) = image_in_outer(r, &kept, &x_space)? else {
        return Ok(Err("the image of the body domain is not exact".into()));
    };
    let rhs = one_point_rhs(&d_ctx, &d_x, &image, body, r.op, span)?;
    let detail = format!(
        "one body point at {} = {}",
        r.dims()[n - 1],
        expr_text(&label, s)
    );
    Ok(Ok((rhs, detail)))
}

/// The test `(x, label) ∈ P` over the result space (`g : x ↦ (x, 0)`):
/// `Some(None)` when no constraint of `P` involves `k`, `None` when `P` is
/// not one convex piece or a coefficient of `k` is not ±1.
fn membership(
    r: &Reduction,
    g: &MultiAff,
    label: &Expr,
    span: Span,
) -> Result<Option<Option<Expr>>, SdrError> {
    let [piece] = r.body_domain.pieces() else {
        return Ok(None);
    };
    let space = r.body_domain.space().clone();
    let d = space.n_dims() - 1;
    let mut atoms: Vec<Expr> = Vec::new();
    for (rows, is_eq) in [(piece.eqs(), true), (piece.ineqs(), false)] {
        for row in rows {
            let mut phi = Aff::new(space.clone(), row.to_vec())?;
            let c = phi.dim_coeffs()[d];
            if c == 0 {
                continue;
            }
            if c.abs() != 1 {
                return Ok(None);
            }
            phi.dim_coeffs_mut()[d] = 0;
            // c·k + φ ⋈ 0  ⟺  k ⋈' −c·φ (c = ±1)
            let bound = phi.pullback(g)?.scaled(-c)?;
            let op = match (is_eq, c > 0) {
                (true, _) => BinOp::Eq,
                (false, true) => BinOp::Ge,
                (false, false) => BinOp::Le,
            };
            let bound = Expr {
                kind: ExprKind::Index(bound),
                ty: ElemType::Int,
                span,
            };
            atoms.push(Expr {
                kind: ExprKind::Binary(op, Box::new(label.clone()), Box::new(bound)),
                ty: ElemType::Bool,
                span,
            });
        }
    }
    Ok(Some(atoms.into_iter().reduce(and)))
}
