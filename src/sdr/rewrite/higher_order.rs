//! Higher-order operators: `+` over a body constant along a reduction
//! direction is a multiplication by the number of points on the line, `*`
//! a power.
//!
//! With `d` a reduction dimension the body `E` does not depend on, `P_d`
//! the exact integer projection of the body domain `P` along `d` and
//! `c(y') = #{ y_d : (y', y_d) ∈ P }` (`count::line_count`, an integer
//! expression of the other indices and the parameters, `>= 1` on `P_d`):
//!
//! ```text
//! Σ { E(y) : y ∈ P, p(y) = x } = Σ { c(y') · E(y') : y' ∈ P_d, p'(y') = x }
//! Π { E(y) : y ∈ P, p(y) = x } = Π { E(y')^c(y')   : y' ∈ P_d, p'(y') = x }
//! ```
//!
//! Exactness of `P_d` matters: the body is evaluated at every point of
//! `P_d`, so a point with an empty line could read outside an array.
//!
//! Types: for an int `+`, `c·E` overflows exactly when the repeated sum
//! does (all partial sums `k·E`, `k <= c`, lie between `0` and `c·E`). The
//! power is used for float `*` only: the JIT computes `pow` in floating
//! point, so an int power would lose the overflow check of the repeated
//! product. Float results agree up to rounding (the language allows
//! reassociation inside reductions; `pow` is exact where the repeated
//! product is, e.g. for small integers and halves).

use super::super::SdrError;
use super::count::line_count;
use super::decompose::project_out_dim;
use super::subst::{dropping, pullback};
use crate::ir::*;

/// `r` (operator `+`, or `*` with `ty` float, `ty` the reduction's result
/// type) with the reduction dimension `d` (the body does not depend on it)
/// replaced by the count of its line. Returns the new reduction and the
/// count's text, or `None` when the count is not expressible (an equality
/// on `d`) or the projection is not exact.
pub fn collapse_one(
    r: &Reduction,
    d: usize,
    ty: ElemType,
) -> Result<Option<(Reduction, String)>, SdrError> {
    let Some(piece) = r.body_domain.pieces().first() else {
        return Ok(None);
    };
    if r.body_domain.pieces().len() != 1 {
        return Ok(None);
    }
    let piece = piece.simplify()?;
    let n = r.body_domain.n_dims();
    let keep: Vec<usize> = (0..n).filter(|&k| k != d).collect();
    let body = r.body.clone();
    let span = body.span;
    let mut text = String::new();
    let next = project_out_dim(r, d, true, |space| {
        let Some((count, t)) = line_count(&piece, d, space, span)? else {
            return Ok(None);
        };
        text = t;
        let Some(mut e) = pullback(&body, &dropping(space, n, &keep)?)? else {
            return Ok(None);
        };
        if ty == ElemType::Float && e.ty == ElemType::Int {
            e = Expr {
                kind: ExprKind::Builtin(Builtin::ToFloat, vec![e]),
                ty: ElemType::Float,
                span,
            };
        }
        let kind = match r.op {
            ReduceOp::Add => ExprKind::Binary(BinOp::Mul, Box::new(count), Box::new(e)),
            ReduceOp::Mul if ty == ElemType::Float => {
                ExprKind::Builtin(Builtin::Pow, vec![e, count])
            }
            _ => return Ok(None),
        };
        Ok(Some(Expr { kind, ty, span }))
    })?;
    Ok(next.map(|r| (r, text)))
}
