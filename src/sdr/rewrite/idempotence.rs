//! Idempotence: an idempotent operator (`max`, `min`, `and`, `or`:
//! `a ⊕ a = a`) over a body that does not change along a reduction
//! direction collapses that direction.
//!
//! With `d` a reduction dimension (a coordinate the projection drops) the
//! body `E` does not depend on, and `P_d` the integer projection of the
//! body domain `P` along `d`:
//!
//! ```text
//! ⊕ { E(y) : y ∈ P, p(y) = x } = ⊕ { E(y') : y' ∈ P_d, p'(y') = x }
//! ```
//!
//! because every `y'` of `P_d` stands for a non-empty line of equal values
//! and `a ⊕ … ⊕ a = a`. `P_d` must be the *exact* integer projection (the
//! rational shadow may contain points with an empty line, which would add
//! a value that is not in the reduction); when Fourier–Motzkin cannot prove
//! exactness the direction is kept. Result points whose reduction was empty
//! stay empty (the identity). `+` and `*` are not idempotent and never go
//! through here (see `higher_order`).

use super::super::SdrError;
use super::decompose::project_out_dim;
use super::subst::{dropping, pullback};
use crate::ir::*;

/// `r` with the reduction dimensions `dims` (body-space numbers, each one
/// the body does not depend on) projected out, one at a time. Returns the
/// new reduction and the dimensions actually removed (a dimension whose
/// projection is not exact is kept; nothing is removed for an operator
/// that is not idempotent).
pub fn collapse(r: &Reduction, dims: &[usize]) -> Result<(Reduction, Vec<String>), SdrError> {
    if !r.op.is_idempotent() {
        return Ok((r.clone(), Vec::new()));
    }
    let mut dims = dims.to_vec();
    dims.sort_unstable();
    let mut cur = r.clone();
    let mut removed = Vec::new();
    // highest first: removing `d` renumbers only the dimensions after it
    for &d in dims.iter().rev() {
        let n = cur.body_domain.n_dims();
        let name = cur.body_domain.dims()[d].clone();
        let keep: Vec<usize> = (0..n).filter(|&k| k != d).collect();
        let body = cur.body.clone();
        let next = project_out_dim(&cur, d, true, |space| {
            pullback(&body, &dropping(space, n, &keep)?)
        })?;
        if let Some(next) = next {
            cur = next;
            removed.push(name);
        }
    }
    removed.reverse();
    Ok((cur, removed))
}
