//! Conversion between IR [`Domain`]s (structural constraint lists) and
//! `poly::Set`s, and the canonical form of domains.
//!
//! Row layout of a `poly` constraint over a domain with `P` parameters and
//! `D` dimensions: `[p_0 .. p_{P-1}, x_0 .. x_{D-1}, constant]`, which is
//! exactly `AffExpr { par, idx, constant }` in that order.

use super::types::{AffConstraint, AffExpr, ConstraintKind, Domain};
use crate::poly::{BasicSet, MultiAff, PolyResult, Set, Space, Tuple};

/// The space of a domain: the system's parameters and the domain's dims.
pub fn space_of(d: &Domain, params: &[String]) -> Space {
    Space::set(params, &d.dims)
}

/// The constraint row `[par, idx, constant]` of an affine expression.
pub fn aff_row(a: &AffExpr) -> Vec<i64> {
    let mut row = Vec::with_capacity(a.par.len() + a.idx.len() + 1);
    row.extend_from_slice(&a.par);
    row.extend_from_slice(&a.idx);
    row.push(a.constant);
    row
}

/// The affine expression of a row `[par, idx, constant]`.
pub fn row_aff(row: &[i64], n_par: usize) -> AffExpr {
    let n = row.len().saturating_sub(1);
    AffExpr {
        par: row[..n_par.min(n)].to_vec(),
        idx: row[n_par.min(n)..n].to_vec(),
        constant: row.get(n).copied().unwrap_or(0),
    }
}

/// `⋃_pieces { x : ∧ constraints }` as a `poly::Set`.
pub fn to_set(d: &Domain, params: &[String]) -> PolyResult<Set> {
    let space = space_of(d, params);
    let mut pieces = Vec::with_capacity(d.pieces.len());
    for piece in &d.pieces {
        let mut b = BasicSet::universe(space.clone());
        for c in piece {
            let row = aff_row(&c.aff);
            match c.kind {
                ConstraintKind::Ineq => b.add_ineq(row)?,
                ConstraintKind::Eq => b.add_eq(row)?,
            }
        }
        pieces.push(b);
    }
    Set::from_basics(space, pieces)
}

/// [`to_set`] with anonymous parameters `p0, p1, ...` (for questions that
/// fix the parameter values).
pub fn to_set_anon(d: &Domain, n_params: usize) -> PolyResult<Set> {
    let np = d
        .pieces
        .iter()
        .flatten()
        .map(|c| c.aff.par.len())
        .fold(n_params, usize::max);
    let names: Vec<String> = (0..np).map(|k| format!("p{k}")).collect();
    let space = space_of(d, &names);
    let mut pieces = Vec::with_capacity(d.pieces.len());
    for piece in &d.pieces {
        let mut b = BasicSet::universe(space.clone());
        for c in piece {
            let mut row = c.aff.par.clone();
            row.resize(np, 0);
            row.extend_from_slice(&c.aff.idx);
            row.resize(np + d.dims.len(), 0);
            row.push(c.aff.constant);
            match c.kind {
                ConstraintKind::Ineq => b.add_ineq(row)?,
                ConstraintKind::Eq => b.add_eq(row)?,
            }
        }
        pieces.push(b);
    }
    Set::from_basics(space, pieces)
}

/// The affine functions `fs` of a domain's space (`n_dims` dimensions) as a
/// `MultiAff` with anonymous parameters (see [`to_set_anon`]).
pub fn multi_aff_anon(fs: &[AffExpr], n_dims: usize, n_params: usize) -> PolyResult<MultiAff> {
    let names: Vec<String> = (0..n_params).map(|k| format!("p{k}")).collect();
    let dims: Vec<String> = (0..n_dims).map(|k| format!("i{k}")).collect();
    let rows = fs
        .iter()
        .map(|f| {
            let mut row = f.par.clone();
            row.resize(n_params, 0);
            row.extend_from_slice(&f.idx);
            row.resize(n_params + n_dims, 0);
            row.push(f.constant);
            row
        })
        .collect();
    MultiAff::new(
        Space::set(&names, &dims),
        Tuple::anonymous("o", fs.len()),
        rows,
    )
}

/// The domain of a `poly::Set` (its constraint rows as written in the set),
/// over the given dimension names.
pub fn from_set(s: &Set, dims: &[String]) -> Domain {
    let n_par = s.space().params.len();
    let pieces = s
        .pieces()
        .iter()
        .map(|b| {
            let mut cs: Vec<AffConstraint> = b
                .eqs()
                .iter()
                .map(|r| AffConstraint {
                    aff: row_aff(r, n_par),
                    kind: ConstraintKind::Eq,
                })
                .collect();
            cs.extend(b.ineqs().iter().map(|r| AffConstraint {
                aff: row_aff(r, n_par),
                kind: ConstraintKind::Ineq,
            }));
            cs
        })
        .collect();
    Domain {
        dims: dims.to_vec(),
        pieces,
    }
}

/// The canonical form of a domain: exact simplification through `poly`
/// (integer-empty pieces dropped, implicit equalities detected, redundant
/// constraints removed, pieces contained in others dropped, deterministic
/// order). Two calls on equal sets written the same way give equal domains,
/// and `canonical_domain(canonical_domain(d)) == canonical_domain(d)`.
pub fn canonical_domain(d: &Domain, params: &[String]) -> PolyResult<Domain> {
    let s = to_set(d, params)?.simplify()?;
    Ok(from_set(&s, &d.dims))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ge(idx: Vec<i64>, par: Vec<i64>, constant: i64) -> AffConstraint {
        AffConstraint {
            aff: AffExpr { idx, par, constant },
            kind: ConstraintKind::Ineq,
        }
    }

    #[test]
    fn round_trip_keeps_points_and_canonical_is_idempotent() {
        // { [i, j] : 0 <= j <= i < N } written with a redundant constraint i >= 0
        let d = Domain {
            dims: vec!["i".into(), "j".into()],
            pieces: vec![vec![
                ge(vec![0, 1], vec![0], 0),
                ge(vec![1, -1], vec![0], 0),
                ge(vec![-1, 0], vec![1], -1),
                ge(vec![1, 0], vec![0], 0),
            ]],
        };
        let params = vec!["N".to_string()];
        let c = canonical_domain(&d, &params).unwrap();
        assert_eq!(c.pieces[0].len(), 3, "the redundant i >= 0 is removed");
        assert_eq!(canonical_domain(&c, &params).unwrap(), c);
        for n in 0..5 {
            for i in -1..6 {
                for j in -1..6 {
                    assert_eq!(d.contains(&[i, j], &[n]), c.contains(&[i, j], &[n]));
                    let s = to_set(&d, &params).unwrap();
                    assert_eq!(s.contains(&[n], &[i, j]), d.contains(&[i, j], &[n]));
                }
            }
        }
    }
}
