//! Single-point reductions as pointwise equations.
//!
//! `X[x] = ⊕ { E(y) : y ∈ P, p(y) = x }` where every result point has at
//! most one body point: `p` is injective on `P`. This is decided from the
//! affine hull `H` of the graph `G = { (y, x) : y ∈ P, x = p(y) }`: when,
//! for every body dimension `y_d`, eliminating the other body dimensions
//! from `H` leaves an equality `c·y_d + φ(x) = 0` with `c` dividing every
//! coefficient of `φ`, then `y = g(x)` with `g_d = -φ/c` on all of `G`
//! (equalities valid on the rational hull hold on its integer points), so
//! `y = g(p(y))` for every `y ∈ P` (checked again on `P`, exactly). Then
//! `X[x] = case { I : E(g(x)); D_X − I : identity }` with
//! `I = { x : g(x) ∈ P, p(g(x)) = x }` the image `p(P)` (no `case` when
//! a piece is empty within the parameter context). Exact: the
//! interpreter combines the identity with the single body value, which is
//! that value (`0.0 + v` only turns `-0.0` into `+0.0`); an int body of a
//! float reduction is converted as the reduction converts it.

use super::super::rewrite::identity_case;
use super::super::rewrite::subst::pullback;
use super::super::{DecisionKind, SdrError};
use super::{eq_domain, identity_const, multi_aff_text, raw_domain, Cx};
use crate::diag::Span;
use crate::ir::*;
use crate::poly::{Constraint, PolyError, Tuple};

/// Rewrites every equation whose right-hand side is an injective
/// reduction (see the module comment).
pub(crate) fn run(cx: &mut Cx, s: &mut System) -> Result<(), SdrError> {
    for eq in 0..s.equations.len() {
        let ExprKind::Reduce(r) = &s.equations[eq].expr.kind else {
            continue;
        };
        let r = (**r).clone();
        let name = s.vars[s.equations[eq].var].name.clone();
        let res = rewrite_one(s, eq, &r);
        let Some(Some((rhs, g))) = cx.declined_on_poly(&name, DecisionKind::Pointwise, res)? else {
            continue;
        };
        s.equations[eq].expr = rhs;
        let detail = format!("one body point {}", multi_aff_text(&g, &s.params));
        cx.decide(&name, DecisionKind::Pointwise, true, "applied", detail);
    }
    Ok(())
}

/// The right-hand side of a reduction with at most one body value per
/// result point: `body` on the image of its body domain, the identity of
/// `op` elsewhere in the declared domain `d_x` (`case`), or one of the two
/// alone when the image covers, or misses, the domain within the parameter
/// context (`d_ctx`). The type is `body`'s.
pub(crate) fn one_point_rhs(
    d_ctx: &Set,
    d_x: &Set,
    image: &Set,
    body: Expr,
    op: ReduceOp,
    span: Span,
) -> Result<Expr, SdrError> {
    Ok(if d_ctx.subtract(image)?.is_empty()? {
        body
    } else if d_ctx.intersect(image)?.is_empty()? {
        identity_const(op, body.ty, span)
    } else {
        identity_case(d_x, image, body, op, span)?
    })
}

/// The pointwise right-hand side of equation `eq` (defined by `r`) and the
/// inverse `g`, or `None` when the projection is not injective with an
/// integer affine inverse or the body cannot move.
fn rewrite_one(s: &System, eq: usize, r: &Reduction) -> Result<Option<(Expr, MultiAff)>, SdrError> {
    let equation = &s.equations[eq];
    let (ty, span) = (equation.expr.ty, equation.expr.span);
    let d_x = raw_domain(s, equation)?;
    let d_ctx = eq_domain(s, equation)?;
    let x_space = d_x.space().clone();
    let Some(g) = inverse(r, &x_space)? else {
        return Ok(None);
    };
    let Some(mut body) = pullback(&r.body, &g)? else {
        return Ok(None);
    };
    if body.ty != ty {
        if ty != ElemType::Float || body.ty != ElemType::Int {
            return Ok(None);
        }
        body = Expr {
            kind: ExprKind::Builtin(Builtin::ToFloat, vec![body]),
            ty,
            span,
        };
    }
    let image = image_of(r, &g, &x_space)?;
    let rhs = one_point_rhs(&d_ctx, &d_x, &image, body, r.op, span)?;
    Ok(Some((rhs, g)))
}

/// The inverse `g : X → Y` of the projection on the body domain (see the
/// module comment), or `None`.
fn inverse(r: &Reduction, x_space: &Space) -> Result<Option<MultiAff>, SdrError> {
    let n = r.body_domain.n_dims();
    let np = x_space.n_params();
    // the graph over [y, x]
    let graph = r.proj.to_map()?.intersect_domain(&r.body_domain)?.wrap();
    let hull = graph.affine_hull()?;
    if hull.is_obviously_empty() {
        return Ok(None);
    }
    let mut rows = Vec::with_capacity(n);
    for d in 0..n {
        let (h, _) = hull.project_out(d + 1, n - d - 1)?;
        let (h, _) = h.project_out(0, d)?;
        // h is over [y_d, x]: find c·y_d + φ(x) = 0
        let Some(row) = h.eqs().iter().find(|row| row[np] != 0) else {
            return Ok(None);
        };
        let c = row[np];
        let mut g_row = Vec::with_capacity(row.len() - 1);
        for (k, &v) in row.iter().enumerate() {
            if k == np {
                continue;
            }
            if v.checked_rem(c) != Some(0) {
                return Ok(None);
            }
            let q = v
                .checked_div(c)
                .and_then(i64::checked_neg)
                .ok_or(PolyError::Overflow)?;
            g_row.push(q);
        }
        rows.push(g_row);
    }
    let g = MultiAff::new(x_space.clone(), Tuple::new(r.dims()), rows)?;
    // y = g(p(y)) on P, checked exactly.
    let back = g.pullback(&r.proj)?;
    let body_space = r.body_domain.space().clone();
    for (d, row) in back.rows().iter().enumerate() {
        let mut diff = row.clone();
        diff[np + d] = diff[np + d].checked_sub(1).ok_or(PolyError::Overflow)?;
        for sign in [1i64, -1] {
            // sign·diff - 1 >= 0
            let mut c = diff
                .iter()
                .map(|v| v.checked_mul(sign))
                .collect::<Option<Vec<i64>>>()
                .ok_or(PolyError::Overflow)?;
            let last = c.len() - 1;
            c[last] = c[last].checked_sub(1).ok_or(PolyError::Overflow)?;
            let off = Set::from_constraints(body_space.clone(), vec![vec![Constraint::ineq(c)]])?;
            if !r.body_domain.intersect(&off)?.is_empty()? {
                return Ok(None);
            }
        }
    }
    Ok(Some(g))
}

/// The image `{ x : g(x) ∈ P, p(g(x)) = x }` over `x_space`.
fn image_of(r: &Reduction, g: &MultiAff, x_space: &Space) -> Result<Set, SdrError> {
    let np = x_space.n_params();
    let pre = r.body_domain.preimage(g)?;
    let back = r.proj.pullback(g)?;
    let eqs = back
        .rows()
        .iter()
        .enumerate()
        .map(|(k, row)| {
            let mut e = row.clone();
            e[np + k] = e[np + k].checked_sub(1).ok_or(PolyError::Overflow)?;
            Ok(Constraint::eq(e))
        })
        .collect::<Result<_, PolyError>>()?;
    let fixed = Set::from_constraints(x_space.clone(), vec![eqs])?;
    Ok(pre.renamed(x_space.clone())?.intersect(&fixed)?)
}
