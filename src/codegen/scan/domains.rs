//! IR domains and constraints as scanner rows over `(dims, params, 1)`,
//! and symbolic bounding boxes (per dimension an affine lower bound and
//! extent in the parameters, proven with the solver) of unions of them.
//!
//! Must not know about: schedules, statements, loop generation.

use super::*;

/// A constraint row of `poly` (`[params, dims, 1]`, `set_np` parameters)
/// as a scanner row over `(dims, params, 1)` with `n_idx` dimensions and
/// `n_par` parameters (missing coefficients are zero, extra ones dropped).
pub(super) fn constraint_row(row: &[i64], set_np: usize, n_idx: usize, n_par: usize) -> Vec<i64> {
    let (par, dims, constant) = row_parts(row, set_np);
    let mut r = vec![0i64; n_idx + n_par + 1];
    for (k, &x) in dims.iter().enumerate().take(n_idx) {
        r[k] = x;
    }
    for (k, &x) in par.iter().enumerate().take(n_par) {
        r[n_idx + k] = x;
    }
    r[n_idx + n_par] = constant;
    r
}

/// The parameter coefficients, dimension coefficients and constant of a
/// `poly` row `[params, dims, 1]` with `n_par` parameters.
pub(super) fn row_parts(row: &[i64], n_par: usize) -> (&[i64], &[i64], i64) {
    let Some((&constant, vars)) = row.split_last() else {
        return (&[], &[], 0);
    };
    let (par, dims) = vars.split_at(n_par.min(vars.len()));
    (par, dims, constant)
}

/// A symbolic box of a union of polyhedra over `(x_0..x_{d-1}, p)`: per
/// dimension an affine lower bound and extent in the parameters, proven
/// (solver) to contain every piece (`poly::boxes::dim_range`).
pub(super) fn symbolic_box(pieces: &[System], d: usize, n_par: usize, name: &str) -> R<Vec<Dim>> {
    let mut dims = Vec::new();
    for k in 0..d {
        let Some((lo, up)) = boxes::dim_range(pieces, d, k, n_par)? else {
            if pieces.is_empty() {
                dims.push(Dim {
                    lower: Affine::cst(0),
                    extent: Affine::cst(0),
                });
                continue;
            }
            return Err(ScanError::Unsupported(format!(
                "array `{name}`: no affine bounding box in dimension {k}"
            )));
        };
        let to_aff = |v: &[i64]| -> Affine {
            let mut a = Affine::cst(v[n_par]);
            for (p, &c) in v[..n_par].iter().enumerate() {
                if c != 0 {
                    a.terms.push((Sym::Param(p), c));
                }
            }
            a
        };
        // extent = up − lo + 1
        let ext: Vec<i64> = ov(up
            .iter()
            .zip(&lo)
            .map(|(u, l)| u.checked_sub(*l))
            .collect::<Option<Vec<i64>>>())?;
        let mut ext = ext;
        ext[n_par] = ov(ext[n_par].checked_add(1))?;
        dims.push(Dim {
            lower: to_aff(&lo),
            extent: to_aff(&ext),
        });
    }
    Ok(dims)
}

/// Whether a domain of one piece without equalities, `pieces`, holds
/// every point of its box `dims` for the parameters of the context `ctx`
/// (scanner rows as [`domain_polys`] gives them, the context with no
/// dimension): then a check against the box checks the domain. Each
/// inequality of the piece is a row of the box or of the context, or the
/// solver proves that no integer point of box ∩ context violates it.
/// `false` for other domains.
pub(super) fn box_is_domain(
    pieces: &[System],
    dims: &[Dim],
    ctx: &[System],
    n_par: usize,
) -> R<bool> {
    let [piece] = pieces else {
        return Ok(false);
    };
    let d = dims.len();
    if !piece.eqs.is_empty() || ctx.len() != 1 || !ctx[0].eqs.is_empty() {
        return Ok(false);
    }
    // `x_k − lo_k >= 0` and `lo_k + extent_k − 1 − x_k >= 0`.
    let mut rows = Vec::new();
    for (k, dim) in dims.iter().enumerate() {
        let (Some(lo), Some(up)) = (
            param_row(&dim.lower, n_par),
            param_row(&dim_upper(dim)?, n_par),
        ) else {
            return Ok(false);
        };
        let mut r = vec![0i64; d + n_par + 1];
        r[k] = 1;
        for (j, &c) in lo.iter().enumerate() {
            r[d + j] = ov(c.checked_neg())?;
        }
        rows.push(r);
        let mut r = vec![0i64; d + n_par + 1];
        r[k] = -1;
        r[d..].copy_from_slice(&up);
        rows.push(r);
    }
    for c in &ctx[0].ineqs {
        let mut r = vec![0i64; d];
        r.extend_from_slice(c);
        rows.push(r);
    }
    for q in &piece.ineqs {
        if rows.contains(q) {
            continue;
        }
        // box ∩ context ∩ {q <= −1} has no integer point
        let mut s = System::new(d + n_par);
        for r in &rows {
            s.add_ineq(r.clone());
        }
        let mut neg: Vec<i64> = ov(q.iter().map(|x| x.checked_neg()).collect())?;
        if let Some(c) = neg.last_mut() {
            *c = ov(c.checked_sub(1))?;
        }
        s.add_ineq(neg);
        if solver::integer_sample(&s)?.is_some() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The row `(params, 1)` of an affine function of the parameters (`None`
/// when it mentions a loop variable).
fn param_row(a: &Affine, n_par: usize) -> Option<Vec<i64>> {
    let mut r = vec![0i64; n_par + 1];
    for &(s, c) in &a.terms {
        let Sym::Param(p) = s else { return None };
        let slot = r.get_mut(p)?;
        *slot = slot.checked_add(c)?;
    }
    r[n_par] = a.constant;
    Some(r)
}

/// The pieces of a domain as scanner rows over `(dims, params, 1)`
/// (equalities first, as in the set).
pub(super) fn domain_polys(d: &Set, n_par: usize) -> Vec<System> {
    let nd = d.n_dims();
    let np = d.n_params();
    d.pieces()
        .iter()
        .map(|piece| {
            let mut p = System::new(nd + n_par);
            for r in piece.eqs() {
                p.eqs.push(constraint_row(r, np, nd, n_par));
            }
            for r in piece.ineqs() {
                p.ineqs.push(constraint_row(r, np, nd, n_par));
            }
            p
        })
        .collect()
}

/// The last index `lower + extent − 1` of a box dimension (terms
/// concatenated, not merged); checked.
pub(super) fn dim_upper(d: &Dim) -> R<Affine> {
    let mut up = d.lower.clone();
    up.terms.extend(d.extent.terms.iter().cloned());
    up.constant = ov(up
        .constant
        .checked_add(d.extent.constant)
        .and_then(|c| c.checked_sub(1)))?;
    Ok(up)
}
