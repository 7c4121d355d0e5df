//! Faces of parametric polyhedra (SDR paper, Definition 5.1 and Eq. 16).
//!
//! Owns: the enumeration of the faces of a basic set and of the pieces of a
//! set. A face of `P = { x : M·(p, x, 1) >= 0 }` is `P` with a subset of its
//! inequalities turned into equalities (and not empty).
//!
//! Parametric reading: parameters are not dimensions of the face lattice.
//! Only inequalities that involve at least one set dimension (after the
//! equalities are eliminated) define facets; a parameter-only constraint
//! such as `N >= 1` is context, and `P ∩ { N = 1 }` is not a face. So the
//! triangle `[N] -> { [i, j] : 0 <= j <= i < N }` has the seven non-empty
//! faces of the paper (triangle, three edges, three vertices), not the
//! eight of the cone in `(i, j, N)` space.
//!
//! Must not know about: text (beyond the `Display` used for the order),
//! reductions or anything above `poly`.

use super::basic_set::BasicSet;
use super::constraint::{combine_sub, gcd128};
use super::error::PolyResult;
use super::set::Set;

/// A face with its ordering key (dimension, canonical text).
struct Keyed {
    dim: i64,
    text: String,
    face: BasicSet,
}

/// Every distinct face of `b`: the non-empty sets `P ∩ { c = 0 : c ∈ S }`
/// for subsets `S` of the irredundant inequalities of `P = b.simplify()`,
/// and the empty face. Found level by level: the faces of dimension `d - 1`
/// are `G ∩ { c = 0 }` for the faces `G` of dimension `d` and the
/// inequalities `c` of `P`, kept when non-empty (integer points) and when
/// `c`, reduced modulo `G`'s equalities, still involves a set dimension (a
/// constraint that only restricts the parameters on `G`, like `N = 1` on a
/// vertex or on an edge of the cube `0 <= i, j < N`, is context, not a
/// face).
/// Faces are compared as integer sets for all parameter values
/// (`Set::is_equal`). Order: decreasing dimension (`BasicSet::dimension`;
/// the empty face, `-1`, is last), then the canonical text.
///
/// An empty `b` has only the empty face. Note: the inequalities are those
/// of `P`, not the integer-tightened rows of a face, so a face of a face
/// (computed by `faces` on the face itself) is a face of `P` when `P`'s
/// vertices are integral, but may not be otherwise (e.g. a lattice point
/// at the end of an edge whose rational end point is not integral).
pub fn faces(b: &BasicSet) -> PolyResult<Vec<BasicSet>> {
    let mut found: Vec<Keyed> = Vec::new();
    collect(b, &mut found)?;
    finish(b, found)
}

/// The faces of every piece of `s` (see [`faces`]), deduplicated across
/// pieces, in the same order, the empty face last.
pub fn set_faces(s: &Set) -> PolyResult<Vec<BasicSet>> {
    let mut found: Vec<Keyed> = Vec::new();
    for p in s.pieces() {
        collect(p, &mut found)?;
    }
    finish(&BasicSet::empty(s.space().clone()), found)
}

/// Sorts the collected non-empty faces and appends the empty face.
fn finish(b: &BasicSet, mut found: Vec<Keyed>) -> PolyResult<Vec<BasicSet>> {
    found.sort_by(|a, b| b.dim.cmp(&a.dim).then_with(|| a.text.cmp(&b.text)));
    let mut out: Vec<BasicSet> = found.into_iter().map(|k| k.face).collect();
    out.push(BasicSet::empty(b.space().clone()));
    Ok(out)
}

/// Adds the non-empty faces of `b` not yet in `found`.
fn collect(b: &BasicSet, found: &mut Vec<Keyed>) -> PolyResult<()> {
    if b.is_empty()? {
        return Ok(());
    }
    let p = b.simplify()?;
    let ins = p.ineqs().to_vec();
    let mut level = Vec::new();
    if let Some(k) = add(p, found)? {
        level.push(k);
    }
    while !level.is_empty() {
        let mut next = Vec::new();
        for gi in level {
            let (g, d) = (found[gi].face.clone(), found[gi].dim);
            if d <= 0 {
                continue; // a vertex (or parameter-only set): no proper face
            }
            for c in &ins {
                if !involves_dims(&g, c)? {
                    continue; // c is tight on g, or only restricts parameters
                }
                let mut h = g.clone();
                h.add_eq(c.clone())?;
                if h.is_empty()? {
                    continue;
                }
                let h = h.simplify()?;
                if let Some(k) = add(h, found)? {
                    next.push(k);
                }
            }
        }
        level = next;
    }
    Ok(())
}

/// Records the non-empty simplified face `f` unless an equal one is known;
/// returns its index when new.
fn add(f: BasicSet, found: &mut Vec<Keyed>) -> PolyResult<Option<usize>> {
    let dim = f.dimension()?;
    let text = f.to_string();
    for k in found.iter() {
        if k.dim == dim && (k.text == text || equal(&k.face, &f)?) {
            return Ok(None);
        }
    }
    found.push(Keyed { dim, text, face: f });
    Ok(Some(found.len() - 1))
}

/// True when the row `c`, reduced modulo the equalities of the simplified
/// face `g` (reduced echelon form: each pivot column, the last non-zero
/// one, appears in its own row only), still has a non-zero coefficient on
/// a set dimension: on `g`'s affine hull, `c = 0` then cuts the dimensions,
/// not only the parameters.
fn involves_dims(g: &BasicSet, c: &[i64]) -> PolyResult<bool> {
    let np = g.space().n_params();
    let nv = g.space().n_vars();
    let mut r = c.to_vec();
    for e in g.eqs() {
        let Some(p) = (0..nv).rev().find(|&k| e[k] != 0) else {
            continue;
        };
        if r[p] != 0 {
            let mut nr = combine_sub(e[p], &r, r[p], e)?;
            // keep the numbers small: divide by the gcd of the row
            let gcd = nr.iter().fold(0i128, |a, &v| gcd128(a, v as i128));
            if gcd > 1 {
                for v in nr.iter_mut() {
                    *v = (*v as i128 / gcd) as i64; // |v / gcd| <= |v|
                }
            }
            r = nr;
        }
    }
    Ok(r[np..nv].iter().any(|&v| v != 0))
}

/// Integer equality of two basic sets for all parameter values.
fn equal(a: &BasicSet, b: &BasicSet) -> PolyResult<bool> {
    Set::from_basic(a.clone()).is_equal(&Set::from_basic(b.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_has_three_faces() {
        let b = BasicSet::parse("{ [i] : 0 <= i <= 5 }").unwrap();
        let f = faces(&b).unwrap();
        let t: Vec<String> = f.iter().map(|x| x.to_string()).collect();
        assert_eq!(t.len(), 4, "{t:?}");
        assert!(f[3].is_empty().unwrap());
    }
}
