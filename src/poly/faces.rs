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
use super::error::PolyResult;
use super::set::Set;

/// A face with its ordering key (dimension, canonical text).
struct Keyed {
    dim: i64,
    text: String,
    face: BasicSet,
}

/// Every distinct face of `b`: `b` itself (simplified), the faces of its
/// facets `b ∩ { c = 0 }` for each irredundant inequality `c` of the
/// simplified `b` that involves a set dimension (recursively), and the empty
/// face. Faces are compared as integer sets for all parameter values
/// (`Set::is_equal`). Order: decreasing dimension (`BasicSet::dimension`;
/// the empty face, `-1`, is last), then the canonical text.
///
/// An empty `b` has only the empty face.
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
    let s = b.simplify()?;
    let dim = s.dimension()?;
    let text = s.to_string();
    for k in found.iter() {
        if k.dim == dim && (k.text == text || equal(&k.face, &s)?) {
            return Ok(());
        }
    }
    found.push(Keyed {
        dim,
        text,
        face: s.clone(),
    });
    if dim <= 0 {
        // a vertex (or a parameter-only set) has no non-empty proper face
        return Ok(());
    }
    let np = s.space().n_params();
    let nv = s.space().n_vars();
    for c in s.ineqs() {
        if c[np..nv].iter().all(|&v| v == 0) {
            continue; // parameter-only context constraint
        }
        let mut f = s.clone();
        f.add_eq(c.clone())?;
        collect(&f, found)?;
    }
    Ok(())
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
