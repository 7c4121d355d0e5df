//! Merging nested reductions of one operator into one reduction: the
//! inverse of decomposition.
//!
//! After normalization a nested reduction is a local of its own, so the
//! pattern is two equations (both projections coordinate projections):
//!
//! ```text
//! X[x] = ⊕ { L[a(y)] : y ∈ P2, p2(y) = x }
//! L[u] = ⊕ { E(z)    : z ∈ P1, p1(z) = u }
//! ```
//!
//! Write `z = (u, w)` (the kept coordinates `u` of `p1` and its reduction
//! coordinates `w`). For each `y` the inner slice is `{ w : (a(y), w) ∈ P1
//! }`, so with the body space `(y, w)`:
//!
//! ```text
//! X[x] = ⊕ { E(a(y), w) : (y, w) ∈ P,  p2(y) = x },
//! P    = { (y, w) : y ∈ P2, (a(y), w) ∈ P1 }
//! ```
//!
//! by associativity and commutativity of `⊕` (the pairs `(y, z)` with
//! `p1(z) = a(y)` are in bijection with `P`). Both reductions must have the
//! same operator and `X`, `L` and `E` the same type (a coerced inner result
//! would change values). The merged reduction is what the other rewrites
//! need to see a body constant along directions of both projections.

use super::super::SdrError;
use super::coordinate_projection;
use super::subst::{is_opaque, pullback};
use crate::ir::*;

/// The merged reduction of `r` (the right-hand side of an equation, of
/// type `ty`) with the reduction defining the local its body reads, and
/// that local's id; `None` when the pattern does not apply.
pub fn merged(
    s: &System,
    r: &Reduction,
    ty: ElemType,
) -> Result<Option<(Reduction, VarId)>, SdrError> {
    let ExprKind::Read { var: l, access } = &r.body.kind else {
        return Ok(None);
    };
    if s.vars[*l].kind != VarKind::Local || r.body.ty != ty || s.vars[*l].ty != ty {
        return Ok(None);
    }
    let Some(l_eq) = s.equation_of(*l) else {
        return Ok(None);
    };
    let ExprKind::Reduce(inner) = &l_eq.expr.kind else {
        return Ok(None);
    };
    if inner.op != r.op
        || l_eq.expr.ty != ty
        || inner.body.ty != ty
        || is_opaque(&inner.body)
        || inner.body_domain.pieces().len() != 1
        || r.body_domain.pieces().len() != 1
    {
        return Ok(None);
    }
    let (Some(_), Some(kept1)) = (
        coordinate_projection(&r.proj),
        coordinate_projection(&inner.proj),
    ) else {
        return Ok(None);
    };
    let np = s.params.len();
    let n2 = r.body_domain.n_dims();
    let n1 = inner.body_domain.n_dims();
    let free1: Vec<usize> = (0..n1).filter(|d| !kept1.contains(d)).collect();
    // Names of the merged space: y's, then w's (renamed apart from y's).
    let mut names: Vec<String> = r.body_domain.dims().to_vec();
    for &d in &free1 {
        let base = inner.body_domain.dims()[d].clone();
        let mut name = base.clone();
        let mut k = 1;
        while names.contains(&name) || s.params.contains(&name) {
            k += 1;
            name = format!("{base}{k}");
        }
        names.push(name);
    }
    let space = Space::set(&s.params, &names);
    let nm = names.len();
    // z(y, w): z_{kept1[k]} = a_k(y), z_{free1[j]} = w_j.
    let mut z_rows = vec![vec![0; np + nm + 1]; n1];
    for (k, &d) in kept1.iter().enumerate() {
        let a = &access.rows()[k];
        let row = &mut z_rows[d];
        row[..np].copy_from_slice(&a[..np]);
        row[np..np + n2].copy_from_slice(&a[np..np + n2]);
        row[np + nm] = a[np + n2];
    }
    for (j, &d) in free1.iter().enumerate() {
        z_rows[d][np + n2 + j] = 1;
    }
    let z_map = MultiAff::from_rows(space.clone(), z_rows)?;
    // π(y, w) = y
    let pi_rows: Vec<Vec<i64>> = (0..n2)
        .map(|k| {
            let mut row = vec![0; np + nm + 1];
            row[np + k] = 1;
            row
        })
        .collect();
    let pi = MultiAff::from_rows(space.clone(), pi_rows)?;
    let domain = r
        .body_domain
        .preimage(&pi)?
        .intersect(&inner.body_domain.preimage(&z_map)?)?
        .simplify()?;
    if domain.pieces().len() != 1 {
        return Ok(None);
    }
    let Some(body) = pullback(&inner.body, &z_map)? else {
        return Ok(None);
    };
    let proj = r.proj.pullback(&pi)?;
    Ok(Some((
        Reduction {
            id: r.id,
            op: r.op,
            proj,
            body_domain: domain,
            body,
        },
        *l,
    )))
}
