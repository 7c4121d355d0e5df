//! The share space of a reduction body (Gautam and Rajopadhye 2006,
//! section 5.2; SDR paper section 4.3): the directions `r` of the body
//! space along which the body's value cannot change.
//!
//! The body's value at `y` is a function of the values of the affine
//! functions it contains (access functions of reads, index values, the
//! constraints of nested restrictions and case pieces, the affine parts of
//! indirect indices and data-dependent guards). If every such function `f`
//! has a linear part `F` with `F·r = 0`, then `body(y + r) = body(y)`. The
//! share space is therefore the kernel of all those linear parts stacked.
//! Bodies with stochastic calls are never shared: a draw depends on the
//! whole iteration point.

use super::normalize::visit_children;
use super::SdrError;
use crate::ir::*;
use crate::poly::solver::integer_kernel;

/// The linear parts (over the body space's `n` indices) of every affine
/// function in `e`, or `None` when `e` cannot be shared along any direction
/// (stochastic calls, nested reductions).
pub fn linear_parts(e: &Expr, n: usize) -> Option<Vec<Vec<i64>>> {
    let mut rows = Vec::new();
    let mut shareable = true;
    collect(e, n, &mut rows, &mut shareable);
    shareable.then_some(rows)
}

fn push_domain(d: &Set, n: usize, rows: &mut Vec<Vec<i64>>) {
    let np = d.n_params();
    for piece in d.pieces() {
        for c in piece.constraints() {
            let end = c.row.len().saturating_sub(1);
            rows.push(c.row[np.min(end)..end].iter().copied().take(n).collect());
        }
    }
}

fn collect(e: &Expr, n: usize, rows: &mut Vec<Vec<i64>>, shareable: &mut bool) {
    match &e.kind {
        ExprKind::Index(a) => rows.push(a.dim_coeffs().to_vec()),
        ExprKind::Read { access, .. } => {
            rows.extend(access.affs().iter().map(|a| a.dim_coeffs().to_vec()))
        }
        ExprKind::Case(pieces) => {
            for (d, _) in pieces {
                push_domain(d, n, rows);
            }
        }
        ExprKind::Restrict(d, _) => push_domain(d, n, rows),
        ExprKind::Random(..) | ExprKind::Categorical(_) | ExprKind::Reduce(_) => {
            *shareable = false;
        }
        _ => {}
    }
    visit_children(e, &mut |c| collect(c, n, rows, shareable));
}

/// A lattice basis of the share space of a body over `n` indices,
/// restricted to the linear span of the body domain (`equalities` are the
/// linear parts of the domain's equalities, so that `P + r` meets `P`).
/// Empty when nothing is shared.
pub fn share_space(
    body: &Expr,
    n: usize,
    equalities: &[Vec<i64>],
) -> Result<Vec<Vec<i64>>, SdrError> {
    let Some(mut rows) = linear_parts(body, n) else {
        return Ok(Vec::new());
    };
    rows.extend(equalities.iter().cloned());
    for r in &mut rows {
        r.resize(n, 0);
    }
    Ok(integer_kernel(&rows, n)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Span;

    /// Index `k` of an index space of `n` indices with `n_par` parameters.
    fn index(n: usize, n_par: usize, k: usize) -> Aff {
        let params: Vec<String> = (0..n_par).map(|p| format!("p{p}")).collect();
        let dims: Vec<String> = (0..n).map(|d| format!("i{d}")).collect();
        Aff::dim(Space::set(&params, &dims), k)
    }

    fn read(var: VarId, access: Vec<Aff>) -> Expr {
        let space = access[0].space().clone();
        let access = MultiAff::from_affs(space, &access).unwrap();
        Expr {
            kind: ExprKind::Read { var, access },
            ty: ElemType::Float,
            span: Span::default(),
        }
    }

    #[test]
    fn prefix_sum_body_is_shared_along_i() {
        // body A[j] over (i, j): kernel of [0 1] is spanned by (±1, 0)
        let body = read(0, vec![index(2, 1, 1)]);
        let s = share_space(&body, 2, &[]).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0][1], 0);
        assert_eq!(s[0][0].abs(), 1);
    }

    #[test]
    fn product_of_two_reads_shares_nothing_when_all_indices_used() {
        // A[i, k] * B[k, j] over (i, j, k): nothing shared
        let a = read(0, vec![index(3, 0, 0), index(3, 0, 2)]);
        let b = read(1, vec![index(3, 0, 2), index(3, 0, 1)]);
        let body = Expr {
            kind: ExprKind::Binary(BinOp::Mul, Box::new(a), Box::new(b)),
            ty: ElemType::Float,
            span: Span::default(),
        };
        assert!(share_space(&body, 3, &[]).unwrap().is_empty());
    }

    #[test]
    fn random_bodies_are_never_shared() {
        let body = Expr {
            kind: ExprKind::Random(
                Distribution::Uniform,
                vec![],
                CallSite { var: 0, ordinal: 0 },
            ),
            ty: ElemType::Float,
            span: Span::default(),
        };
        assert!(share_space(&body, 2, &[]).unwrap().is_empty());
    }
}
