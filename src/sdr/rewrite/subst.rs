//! Changes of index space for expressions: the pullback of an expression by
//! an affine function, and the test of which indices an expression reads.
//!
//! An expression `E` evaluated in the index space `Y` becomes, for an affine
//! `g : Z → Y`, the expression `E ∘ g` evaluated in `Z`: every affine
//! function `f` it contains (index values, access functions) becomes
//! `f ∘ g`, every domain `D` (restrictions, case pieces) becomes the
//! preimage `g⁻¹(D)`. This is exact substitution; nothing is evaluated.
//!
//! Bodies with stochastic calls or nested reductions are never moved: a
//! draw is keyed by the point it is evaluated at, and nested reductions and
//! categorical draws have index spaces of their own.

use super::super::share::linear_parts;
use super::super::SdrError;
use crate::ir::*;

/// `E ∘ g` (see the module comment), or `None` when `e` contains a
/// stochastic call, a `categorical` draw or a nested reduction.
pub fn pullback(e: &Expr, g: &MultiAff) -> Result<Option<Expr>, SdrError> {
    let kind = match &e.kind {
        ExprKind::IntConst(_) | ExprKind::FloatConst(_) | ExprKind::BoolConst(_) => e.kind.clone(),
        ExprKind::Index(a) => ExprKind::Index(a.pullback(g)?),
        ExprKind::Read { var, access } => ExprKind::Read {
            var: *var,
            access: access.pullback(g)?,
        },
        ExprKind::IndirectRead { var, indices } => {
            let Some(indices) = pull_all(indices, g)? else {
                return Ok(None);
            };
            ExprKind::IndirectRead { var: *var, indices }
        }
        ExprKind::Unary(op, x) => {
            let Some(x) = pullback(x, g)? else {
                return Ok(None);
            };
            ExprKind::Unary(*op, Box::new(x))
        }
        ExprKind::Binary(op, a, b) => {
            let (Some(a), Some(b)) = (pullback(a, g)?, pullback(b, g)?) else {
                return Ok(None);
            };
            ExprKind::Binary(*op, Box::new(a), Box::new(b))
        }
        ExprKind::If(c, a, b) => {
            let (Some(c), Some(a), Some(b)) = (pullback(c, g)?, pullback(a, g)?, pullback(b, g)?)
            else {
                return Ok(None);
            };
            ExprKind::If(Box::new(c), Box::new(a), Box::new(b))
        }
        ExprKind::Case(pieces) => {
            let mut out = Vec::with_capacity(pieces.len());
            for (d, x) in pieces {
                let Some(x) = pullback(x, g)? else {
                    return Ok(None);
                };
                out.push((d.preimage(g)?.simplify()?, x));
            }
            ExprKind::Case(out)
        }
        ExprKind::Restrict(d, x) => {
            let Some(x) = pullback(x, g)? else {
                return Ok(None);
            };
            ExprKind::Restrict(d.preimage(g)?.simplify()?, Box::new(x))
        }
        ExprKind::Builtin(b, xs) => {
            let Some(xs) = pull_all(xs, g)? else {
                return Ok(None);
            };
            ExprKind::Builtin(*b, xs)
        }
        ExprKind::External(f, xs) => {
            let Some(xs) = pull_all(xs, g)? else {
                return Ok(None);
            };
            ExprKind::External(*f, xs)
        }
        ExprKind::Selection(x) => match x.try_map(|e| pullback(e, g))? {
            Some(s) => ExprKind::Selection(Box::new(s)),
            None => return Ok(None),
        },
        ExprKind::Random(..) | ExprKind::Categorical(_) | ExprKind::Reduce(_) => return Ok(None),
    };
    Ok(Some(Expr {
        kind,
        ty: e.ty,
        span: e.span,
    }))
}

fn pull_all(xs: &[Expr], g: &MultiAff) -> Result<Option<Vec<Expr>>, SdrError> {
    let mut out = Vec::with_capacity(xs.len());
    for x in xs {
        let Some(x) = pullback(x, g)? else {
            return Ok(None);
        };
        out.push(x);
    }
    Ok(Some(out))
}

/// True when `e`'s value at `y` cannot depend on the index `y_d` of its
/// `n`-dimensional index space: every affine function and domain
/// constraint in `e` has a zero coefficient on `d` (the unit direction
/// `e_d` is in the share space, `share::linear_parts`), and `e` has no
/// stochastic call, `categorical` draw or nested reduction.
pub fn independent_of(e: &Expr, n: usize, d: usize) -> bool {
    match linear_parts(e, n) {
        Some(rows) => rows.iter().all(|r| r.get(d).copied().unwrap_or(0) == 0),
        None => false,
    }
}

/// True when `e` contains a stochastic call, a `categorical` draw or a
/// reduction (an expression no rewrite may move or duplicate).
pub fn is_opaque(e: &Expr) -> bool {
    let mut found = matches!(
        e.kind,
        ExprKind::Random(..) | ExprKind::Categorical(_) | ExprKind::Reduce(_)
    );
    if !found {
        e.for_each_child(&mut |c| found |= is_opaque(c));
    }
    found
}

/// The function `Z → Y` that keeps the dimensions `keep` of `Y` (in
/// order, the dimensions of `Z = z_space`) and gives the others the value
/// 0: `y_d = z_k` when `keep[k] = d`, else `y_d = 0`. Used to move an
/// expression that does not depend on the dropped dimensions into the
/// smaller space.
pub fn dropping(z_space: &Space, y_dims: usize, keep: &[usize]) -> Result<MultiAff, SdrError> {
    let np = z_space.n_params();
    let nz = z_space.n_dims();
    let rows = (0..y_dims)
        .map(|d| {
            let mut r = vec![0; np + nz + 1];
            if let Some(k) = keep.iter().position(|&x| x == d) {
                r[np + k] = 1;
            }
            r
        })
        .collect();
    Ok(MultiAff::from_rows(z_space.clone(), rows)?)
}
