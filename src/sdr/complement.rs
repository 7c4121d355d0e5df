//! Reductions over a domain with a hole: `⊕` over `F \ H`, where `F` is
//! convex and `H = F ∩ {e = 0}` is one hyperplane section of it, as
//! `(⊕ over F) ⊖ (⊕ over H)` for an operator with an inverse.
//!
//! The leave-one-out sums of message passing and of collapsed samplers
//! are written with such a domain: `reduce(+, [t], {: t != s} : m[t])`.
//! Its body domain is the union of `F ∧ e <= -1` and `F ∧ e >= 1` (`e = t
//! − s`); normalization would make each piece a reduction of its own, and
//! SDR a running sum per piece (a prefix and a suffix, two arrays as large
//! as the result). The total over `F` minus the one point of `H` is the
//! manual algorithm: the total often does not depend on `s` at all (it is
//! then computed once, `rewrite::broadcast`), and the hole is a
//! single-point reduction, a pointwise read after cleanup.
//!
//! Exact for every integer point: each satisfies exactly one of `e <= -1`,
//! `e = 0`, `e >= 1`, so `F = (F \ H) ⊎ H`, and `a = (a ⊕ b) ⊖ b` in a
//! group. Only `+` is used (a `*` hole would divide by the body's value,
//! which may be zero); on floats `(Σ_F) − m[s]` rounds differently from
//! `Σ_{F \ H}`, as SDR's own running sums with subtraction do.
//!
//! Owns: [`hole`]. Must not know about: how the pieces are then simplified.

use super::SdrError;
use crate::poly::{BasicSet, MultiAff, PolyError, Set};
use crate::vocab::ReduceOp;

/// For a reduction of `op` and projection `proj` whose body domain `dom`
/// (canonical, over the body space) is a union of two disjoint pieces, the pair `(F, H)` of the
/// module comment when it exists: `dom = (F ∧ e <= -1) ∪ (F ∧ e >= 1)`,
/// `H = F ∧ e = 0`, where `e` has a non-zero coefficient on a reduction
/// dimension (a body dimension the projection does not read), so that `H`
/// has fewer points per result than `F`. `None` for other operators than
/// `+`, other domains, and when `H` is empty.
pub(crate) fn hole(
    op: ReduceOp,
    proj: &MultiAff,
    dom: &Set,
) -> Result<Option<(Set, Set)>, SdrError> {
    if op != ReduceOp::Add || dom.pieces().len() != 2 {
        return Ok(None);
    }
    let space = dom.space().clone();
    let np = space.n_params();
    let nd = space.n_dims();
    // Body dimensions the projection reads.
    let mut read = vec![false; nd];
    for row in proj.rows() {
        for (d, flag) in read.iter_mut().enumerate() {
            if row.get(np + d).copied().unwrap_or(0) != 0 {
                *flag = true;
            }
        }
    }
    // Without redundant rows, so that the cut is one row of each piece.
    let pieces = [
        dom.pieces()[0].remove_redundancies()?,
        dom.pieces()[1].remove_redundancies()?,
    ];
    for (first, second) in [(&pieces[0], &pieces[1]), (&pieces[1], &pieces[0])] {
        if !first.eqs().is_empty() || !second.eqs().is_empty() {
            continue;
        }
        for (i, row) in first.ineqs().iter().enumerate() {
            // `row >= 0` is `e <= -1` for `e = -row - 1`.
            let on_reduction_dim = (0..nd).any(|d| !read[d] && row[np + d] != 0);
            if !on_reduction_dim {
                continue;
            }
            // e >= 1  ⇔  -row - 2 >= 0 (normalized like the pieces' rows).
            let overflow = || SdrError::Poly(PolyError::Overflow);
            let mut above = row
                .iter()
                .map(|&c| c.checked_neg().ok_or_else(overflow))
                .collect::<Result<Vec<i64>, SdrError>>()?;
            let last = above.len() - 1;
            above[last] = above[last].checked_sub(2).ok_or_else(overflow)?;
            let mut cut = BasicSet::universe(space.clone());
            cut.add_ineq(above)?;
            let above = cut.ineqs().first().cloned();
            // F: both pieces' other constraints.
            let mut f = BasicSet::universe(space.clone());
            for (j, r) in first.ineqs().iter().enumerate() {
                if j != i {
                    f.add_ineq(r.clone())?;
                }
            }
            for r in second.ineqs() {
                if Some(r) != above.as_ref() {
                    f.add_ineq(r.clone())?;
                }
            }
            let (mut below_f, mut above_f) = (f.clone(), f.clone());
            below_f.add_ineq(row.clone())?;
            if let Some(a) = &above {
                above_f.add_ineq(a.clone())?;
            }
            let two = Set::from_basics(space.clone(), vec![below_f, above_f])?;
            if !two.is_equal(dom)? {
                continue;
            }
            // H = F ∧ e = 0  ⇔  row + 1 = 0.
            let mut eq = row.clone();
            eq[last] = eq[last].checked_add(1).ok_or_else(overflow)?;
            let mut h = f.clone();
            h.add_eq(eq)?;
            let h = Set::from_basic(h).simplify()?;
            if h.is_empty()? {
                return Ok(None);
            }
            return Ok(Some((Set::from_basic(f).simplify()?, h)));
        }
    }
    Ok(None)
}
