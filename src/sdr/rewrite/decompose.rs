//! Reduction decomposition: one projection as two successive projections.
//!
//! For a reduction `X[x] = ⊕ { E(y) : y ∈ P, p(y) = x }` whose projection
//! `p` keeps some coordinates of the body space (a coordinate projection,
//! see `super::coordinate_projection`) and a set `K` of its reduction
//! dimensions, let `p1` drop the dimensions `K` and `p2` the remaining
//! reduction dimensions, so that `p = p2 ∘ p1`. Then
//!
//! ```text
//! X[x]   = ⊕ { Xd[y'] : y' ∈ P1, p2(y') = x }
//! Xd[y'] = ⊕ { E(y)   : y ∈ P,   p1(y) = y' }
//! ```
//!
//! for any `P1 ⊇ p1(P)`: a point of `P1` outside `p1(P)` has an empty
//! inner reduction, the identity, which changes nothing. `P1` is the
//! (rational, tightened) shadow of `P` along `K`, a bounded superset.
//!
//! The rewrites use decomposition implicitly when a body is constant along
//! only some reduction directions: the inner reduction along those
//! directions is collapsed (idempotence, higher-order operator) and the
//! outer one keeps the others ([`project_out_dim`] is that step).
//! [`decompose`] is the standalone rewrite, as two equations.

use super::super::normalize::identity_read;
use super::super::SdrError;
use super::{coordinate_projection, Cx};
use crate::ir::*;

/// The reduction `r` with body dimension `d` projected out: body domain
/// `P'` = the projection of `P` along `d`, the projection `p` without its
/// (zero) column `d`, and the body `new_body(space of P')`. `None` when the
/// projection of `P` is not known to be the exact integer projection and
/// `need_exact` is set, or when `d` appears in `p`.
pub fn project_out_dim(
    r: &Reduction,
    d: usize,
    need_exact: bool,
    new_body: impl FnOnce(&Space) -> Result<Option<Expr>, SdrError>,
) -> Result<Option<Reduction>, SdrError> {
    let np = r.body_domain.n_params();
    let col = np + d;
    if r.proj.rows().iter().any(|row| row[col] != 0) {
        return Ok(None);
    }
    let (projected, exact) = r.body_domain.project_out(d, 1)?;
    if need_exact && !exact {
        return Ok(None);
    }
    let projected = projected.simplify()?;
    let space = projected.space().clone();
    let rows: Vec<Vec<i64>> = r
        .proj
        .rows()
        .iter()
        .map(|row| {
            row.iter()
                .enumerate()
                .filter(|(k, _)| *k != col)
                .map(|(_, &c)| c)
                .collect()
        })
        .collect();
    let proj = MultiAff::new(space.clone(), r.proj.space().output.clone(), rows)?;
    let Some(body) = new_body(&space)? else {
        return Ok(None);
    };
    Ok(Some(Reduction {
        id: r.id,
        op: r.op,
        proj,
        body_domain: projected,
        body,
    }))
}

/// The standalone decomposition of the reduction equation number `eq` of
/// `s` (see the module comment) along its reduction dimensions `inner`
/// (body-space dimension numbers): adds the local `Xd` (named
/// `X_dec...`) over the shadow `P1`, defined by the inner reduction, and
/// makes `X`'s equation the outer reduction of `Xd`. Returns the new
/// local's id, or `None` (nothing changed) when the equation is not a
/// reduction with a coordinate projection, `inner` is empty or not made
/// of reduction dimensions, or the body domain is not convex.
pub(crate) fn decompose_eq(
    cx: &mut Cx,
    s: &mut System,
    eq: usize,
    inner: &[usize],
) -> Result<Option<VarId>, SdrError> {
    let Some(equation) = s.equations.get(eq) else {
        return Ok(None);
    };
    let ExprKind::Reduce(r) = &equation.expr.kind else {
        return Ok(None);
    };
    let r = (**r).clone();
    let (ty, span, var) = (equation.expr.ty, equation.expr.span, equation.var);
    let n = r.body_domain.n_dims();
    let Some(kept) = coordinate_projection(&r.proj) else {
        return Ok(None);
    };
    let mut inner: Vec<usize> = inner.to_vec();
    inner.sort_unstable();
    inner.dedup();
    if inner.is_empty()
        || inner.iter().any(|d| *d >= n || kept.contains(d))
        || r.body_domain.pieces().len() != 1
    {
        return Ok(None);
    }
    // P1: the shadow of P along the inner dimensions (highest first, so
    // that the lower dimension numbers stay valid).
    let mut p1 = r.body_domain.clone();
    for &d in inner.iter().rev() {
        p1 = p1.project_out(d, 1)?.0.simplify()?;
    }
    let outer_space = p1.space().clone();
    let np = outer_space.n_params();
    let remaining: Vec<usize> = (0..n).filter(|d| !inner.contains(d)).collect();
    // p1: y -> y' (keeps `remaining`), rows over the body space.
    let p1_rows: Vec<Vec<i64>> = remaining
        .iter()
        .map(|&d| {
            let mut row = vec![0; np + n + 1];
            row[np + d] = 1;
            row
        })
        .collect();
    let p1_map = MultiAff::from_rows(r.body_domain.space().clone(), p1_rows)?;
    // p2: y' -> x, the rows of p without the inner columns.
    let p2_rows: Vec<Vec<i64>> = r
        .proj
        .rows()
        .iter()
        .map(|row| {
            row.iter()
                .enumerate()
                .filter(|(k, _)| *k < np || *k >= np + n || !inner.contains(&(*k - np)))
                .map(|(_, &c)| c)
                .collect()
        })
        .collect();
    let p2 = MultiAff::new(outer_space.clone(), r.proj.space().output.clone(), p2_rows)?;
    let base = s.vars[var].name.clone();
    let inner_red = Reduction {
        id: r.id,
        op: r.op,
        proj: p1_map,
        body_domain: r.body_domain.clone(),
        body: r.body.clone(),
    };
    let dec = cx.new_local(s, &base, "dec", p1.clone(), ty, span);
    s.equations.push(Equation {
        var: dec,
        indices: outer_space.output.dims.to_vec(),
        expr: Expr {
            kind: ExprKind::Reduce(Box::new(inner_red)),
            ty,
            span,
        },
        span,
    });
    let read = identity_read(dec, &outer_space, ty, span)?;
    let outer = Reduction {
        id: r.id,
        op: r.op,
        proj: p2,
        body_domain: p1,
        body: read,
    };
    s.equations[eq].expr = Expr {
        kind: ExprKind::Reduce(Box::new(outer)),
        ty,
        span,
    };
    Ok(Some(dec))
}

/// The standalone decomposition on a (normalized) program: the reduction
/// equation of variable `var` in system number `system` split along its
/// reduction dimensions named `inner` (see [`decompose_eq`]). `None` when
/// it does not apply.
pub fn decompose(
    p: &Program,
    system: usize,
    var: &str,
    inner: &[&str],
) -> Result<Option<Program>, SdrError> {
    let mut out = p.clone();
    let Some(s) = out.systems.get_mut(system) else {
        return Ok(None);
    };
    let Some(v) = s.var_by_name(var) else {
        return Ok(None);
    };
    let Some(eq) = s.equations.iter().position(|e| e.var == v) else {
        return Ok(None);
    };
    let ExprKind::Reduce(r) = &s.equations[eq].expr.kind else {
        return Ok(None);
    };
    let mut dims = Vec::with_capacity(inner.len());
    for name in inner {
        let Some(d) = r.dims().iter().position(|x| x == name) else {
            return Ok(None);
        };
        dims.push(d);
    }
    let mut cx = Cx::new(s);
    let done = decompose_eq(&mut cx, s, eq, &dims)?;
    s.number_reductions();
    Ok(done.map(|_| out))
}
