//! Broadcast: a reduction whose result does not change along one of its
//! result dimensions is computed once, without that dimension, and read
//! back at every value of it.
//!
//! For `X[x] = ⊕ { E(y) : y ∈ P, p(y) = x }` with `p` a coordinate
//! projection, result dimension `x_j = y_d`, a body `E` independent of
//! `y_d`, and a body domain that is a product along `y_d`,
//! `P = { y : y_{−d} ∈ P' ∧ y_d ∈ S }` (every constraint of `P` that
//! involves `y_d` involves no other dimension):
//!
//! ```text
//! X[x] = X'[x_{−j}],   X'[x'] = ⊕ { E'(y') : y' ∈ P', p'(y') = x' }
//! ```
//!
//! for every `x` of `X`'s domain `D_X` with `x_j ∈ S`: the slice of `P` at
//! `x` is the slice of `P'` at `x_{−j}` (times the point `x_j`). The
//! rewrite requires `D_X ⊆ { x_j ∈ S }`, so that it holds on all of `D_X`,
//! and `S` is non-empty wherever `D_X` is (`E'` is evaluated only at body
//! points the original evaluates). `X'` is defined over the exact
//! projection of `D_X` along `x_j`.
//!
//! Example: the total of a leave-one-out sum after `complement`,
//! `all[p, s, k] = Σ_t m[p, t, k]`, is `all'[p, k]`: `N·K` values instead
//! of `N·D·K`, computed in `O(N·D·K)` once instead of copied along `s`.
//! The cost of the equation never grows (`|D_X'| <= |D_X|`, `|P'| <=
//! |P|`), and the values are the same: the same body values reduced in
//! the same order.
//!
//! Owns: `broadcast_eq`. Must not know about: SDR, schedules.

use super::super::SdrError;
use super::subst::{dropping, independent_of, pullback};
use super::{reduction_eq, Cx, ReductionEq};
use crate::ir::*;
use crate::poly::{BasicSet, Constraint, ConstraintKind, MultiAff, Set};

/// The result dimension `j` of `r` (body dimension `kept[j]`) along which
/// it broadcasts, given `X`'s domain `d_x` (over the result space): see
/// the module comment.
fn broadcast_dim(r: &Reduction, kept: &[usize], d_x: &Set) -> Result<Option<usize>, SdrError> {
    let [piece] = r.body_domain.pieces() else {
        return Ok(None);
    };
    let np = r.body_domain.n_params();
    let n = r.body_domain.n_dims();
    for (j, &d) in kept.iter().enumerate() {
        if !independent_of(&r.body, n, d) {
            continue;
        }
        let rows: Vec<(ConstraintKind, &Vec<i64>)> = piece
            .eqs()
            .iter()
            .map(|r| (ConstraintKind::Eq, r))
            .chain(piece.ineqs().iter().map(|r| (ConstraintKind::Ineq, r)))
            .collect();
        let mut range = Vec::new();
        let mut product = true;
        for (kind, row) in rows {
            if row[np + d] == 0 {
                continue;
            }
            if (0..n).any(|k| k != d && row[np + k] != 0) {
                product = false;
                break;
            }
            // The same constraint on `x_j` in the result space.
            let mut xr = vec![0; np + kept.len() + 1];
            xr[..np].copy_from_slice(&row[..np]);
            xr[np + j] = row[np + d];
            xr[np + kept.len()] = row[np + n];
            range.push(Constraint { kind, row: xr });
        }
        if !product {
            continue;
        }
        let mut s_j = BasicSet::universe(d_x.space().clone());
        for c in range {
            s_j.add_constraint(c)?;
        }
        if d_x.is_subset(&Set::from_basic(s_j))? {
            return Ok(Some(j));
        }
    }
    Ok(None)
}

/// Broadcasts the reduction equation number `eq` of `s` (coordinate
/// projection `kept`) along a result dimension when one qualifies (see
/// the module comment): adds the local `X'` (named `X_bc…`), makes `X`'s
/// equation the read of it, and returns the new local with the dimension's
/// name. `None` when nothing qualifies (nothing changed).
pub(crate) fn broadcast_eq(
    cx: &mut Cx,
    s: &mut System,
    eq: usize,
    kept: &[usize],
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
    let d_x = s.vars[var].domain.renamed(x_space.clone())?;
    let Some(j) = broadcast_dim(&r, kept, &d_x)? else {
        return Ok(None);
    };
    let d = kept[j];
    let n = r.body_domain.n_dims();
    // X' over the exact projection of D_X along x_j.
    let (d_small, exact) = d_x.project_out(j, 1)?;
    if !exact {
        return Ok(None);
    }
    let d_small = d_small.simplify()?;
    let small_space = d_small.space().clone();
    // The body without y_d (it does not depend on it).
    let (p_small, exact) = r.body_domain.project_out(d, 1)?;
    if !exact {
        return Ok(None);
    }
    let p_small = p_small.simplify()?;
    let keep_body: Vec<usize> = (0..n).filter(|&k| k != d).collect();
    let Some(body) = pullback(&r.body, &dropping(p_small.space(), n, &keep_body)?)? else {
        return Ok(None);
    };
    let np = r.body_domain.n_params();
    let proj_rows: Vec<Vec<i64>> = r
        .proj
        .rows()
        .iter()
        .enumerate()
        .filter(|&(o, _)| o != j)
        .map(|(_, row)| {
            row.iter()
                .enumerate()
                .filter(|&(k, _)| k != np + d)
                .map(|(_, &c)| c)
                .collect()
        })
        .collect();
    let proj = MultiAff::new(
        p_small.space().clone(),
        small_space.output.clone(),
        proj_rows,
    )?;
    let small = Reduction {
        id: r.id,
        op: r.op,
        proj,
        body_domain: p_small,
        body,
    };
    let base = s.vars[var].name.clone();
    let name = x_space.output.dims[j].clone();
    let bc = cx.new_local(s, &base, "bc", d_small, ty, span);
    s.equations.push(Equation {
        var: bc,
        indices: small_space.output.dims.to_vec(),
        expr: Expr {
            kind: ExprKind::Reduce(Box::new(small)),
            ty,
            span,
        },
        span,
    });
    let keep_x: Vec<usize> = (0..kept.len()).filter(|&k| k != j).collect();
    let access_rows: Vec<Vec<i64>> = keep_x
        .iter()
        .map(|&k| {
            let mut row = vec![0; np + kept.len() + 1];
            row[np + k] = 1;
            row
        })
        .collect();
    let access = MultiAff::from_rows(x_space, access_rows)?;
    s.equations[eq].expr = Expr {
        kind: ExprKind::Read { var: bc, access },
        ty,
        span,
    };
    Ok(Some((bc, name)))
}
