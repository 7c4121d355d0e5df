//! The contexts of reads: for every read in an equation, a set of points
//! of the read's index space that contains every point where the read may
//! be evaluated (the same propagation as `ir::check_domains`):
//! - the right-hand side of `X[x] = E` is evaluated over `D_X`;
//! - a `case` piece `D_k : E_k` over `ctx ∩ D_k`, a restriction
//!   `{: D} : E` over `ctx ∩ D`;
//! - a reduction body over `P ∩ proj⁻¹(ctx)` (once per body point);
//! - a `categorical` weight over `D_cat ∩ (ctx × Z)`;
//! - anything else (the branches of `if` included) over `ctx` itself: a
//!   superset, which keeps every use of a context sound (a test that all
//!   points avoid, or all lie in, a set holds for the real points too).

use super::super::SdrError;
use crate::ir::*;

/// The contexts of the direct children of `e` (in the order of
/// [`Expr::for_each_child`]) when `e` is evaluated over `ctx`; `None` when
/// every child is evaluated over `ctx` itself (most nodes: no copy).
pub(crate) fn child_contexts(e: &Expr, ctx: &Set) -> Result<Option<Vec<Set>>, SdrError> {
    Ok(Some(match &e.kind {
        ExprKind::Case(pieces) => pieces
            .iter()
            .map(|(d, _)| ctx.intersect(d))
            .collect::<Result<_, _>>()?,
        ExprKind::Restrict(d, _) => vec![ctx.intersect(d)?],
        ExprKind::Reduce(r) => vec![r.body_domain.intersect(&ctx.preimage(&r.proj)?)?],
        ExprKind::Categorical(c) => {
            let space = c.domain.space().clone();
            let n_outer = ctx.n_dims();
            let rows = (0..n_outer)
                .map(|k| Aff::dim(space.clone(), k).row().to_vec())
                .collect();
            let outer = MultiAff::from_rows(space, rows)?;
            vec![c.domain.intersect(&ctx.preimage(&outer)?)?]
        }
        _ => return Ok(None),
    }))
}

/// Child `k`'s context from [`child_contexts`]' answer over `ctx`.
pub(crate) fn nth_context<'a>(ctxs: &'a Option<Vec<Set>>, ctx: &'a Set, k: usize) -> &'a Set {
    ctxs.as_ref().and_then(|v| v.get(k)).unwrap_or(ctx)
}

/// Calls `f(node, ctx)` on every affine or indirect read in `e` (evaluated
/// over `ctx`), the indices of an indirect read before the read itself.
pub(crate) fn walk_reads(
    e: &Expr,
    ctx: &Set,
    f: &mut dyn FnMut(&Expr, &Set) -> Result<(), SdrError>,
) -> Result<(), SdrError> {
    match &e.kind {
        ExprKind::Read { .. } => f(e, ctx),
        ExprKind::IndirectRead { indices, .. } => {
            for ix in indices {
                walk_reads(ix, ctx, f)?;
            }
            f(e, ctx)
        }
        _ => {
            let ctxs = child_contexts(e, ctx)?;
            let mut k = 0;
            let mut res = Ok(());
            e.for_each_child(&mut |c| {
                if res.is_ok() {
                    res = walk_reads(c, nth_context(&ctxs, ctx, k), f);
                }
                k += 1;
            });
            res
        }
    }
}

/// Like [`walk_reads`] on a mutable expression: `f(node, ctx)` may replace
/// the read node (it is not visited again).
pub(crate) fn rewrite_reads(
    e: &mut Expr,
    ctx: &Set,
    f: &mut dyn FnMut(&mut Expr, &Set) -> Result<(), SdrError>,
) -> Result<(), SdrError> {
    match &mut e.kind {
        ExprKind::Read { .. } => f(e, ctx),
        ExprKind::IndirectRead { indices, .. } => {
            for ix in indices.iter_mut() {
                rewrite_reads(ix, ctx, f)?;
            }
            f(e, ctx)
        }
        _ => {
            let ctxs = child_contexts(e, ctx)?;
            let mut k = 0;
            let mut res = Ok(());
            e.for_each_child_mut(&mut |c| {
                if res.is_ok() {
                    res = rewrite_reads(c, nth_context(&ctxs, ctx, k), f);
                }
                k += 1;
            });
            res
        }
    }
}

/// The variable a read node reads (`None` for any other node).
pub(crate) fn read_var(e: &Expr) -> Option<VarId> {
    match &e.kind {
        ExprKind::Read { var, .. } | ExprKind::IndirectRead { var, .. } => Some(*var),
        _ => None,
    }
}
