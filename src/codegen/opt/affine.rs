//! Checked arithmetic on affine expressions of the loop AST ([`Affine`]):
//! merging, canonical form, difference, negation, scaling, substitution.
//! Every operation returns `None` on overflow.
//!
//! Must not know about: statements, facts, the solver.

use super::super::loop_ast::{Affine, LoopVar, Sym};

/// [`Affine::merged`].
pub(super) fn merged(a: &Affine) -> Option<Affine> {
    a.merged()
}

/// [`Affine::canonical`].
pub(super) fn canonical(a: &Affine) -> Option<Affine> {
    a.canonical()
}

/// `a − b` (merged); `None` on overflow.
pub(super) fn sub_affine(a: &Affine, b: &Affine) -> Option<Affine> {
    let mut terms = a.terms.clone();
    for &(s, c) in &b.terms {
        terms.push((s, c.checked_neg()?));
    }
    merged(&Affine {
        terms,
        constant: a.constant.checked_sub(b.constant)?,
    })
}

pub(super) fn mentions(a: &Affine, v: LoopVar) -> bool {
    a.terms.iter().any(|&(s, c)| c != 0 && s == Sym::Loop(v))
}

/// `a[v := e]`: every term `c·v` replaced by `c·e` (then merged); `a`
/// unchanged when it does not mention `v`; `None` on overflow.
pub(super) fn subst_affine(a: &Affine, v: LoopVar, e: &Affine) -> Option<Affine> {
    if !a.terms.iter().any(|&(s, _)| s == Sym::Loop(v)) {
        return Some(a.clone());
    }
    let mut terms = Vec::new();
    let mut constant = a.constant;
    for &(s, c) in &a.terms {
        if s == Sym::Loop(v) {
            for &(s2, c2) in &e.terms {
                terms.push((s2, c.checked_mul(c2)?));
            }
            constant = constant.checked_add(c.checked_mul(e.constant)?)?;
        } else {
            terms.push((s, c));
        }
    }
    merged(&Affine { terms, constant })
}

pub(super) fn neg_affine(a: &Affine) -> Option<Affine> {
    Some(Affine {
        terms: a
            .terms
            .iter()
            .map(|&(s, c)| Some((s, c.checked_neg()?)))
            .collect::<Option<_>>()?,
        constant: a.constant.checked_neg()?,
    })
}

/// `k·a`; `None` on overflow.
pub(super) fn scale_affine(a: &Affine, k: i64) -> Option<Affine> {
    Some(Affine {
        terms: a
            .terms
            .iter()
            .map(|&(s, c)| Some((s, c.checked_mul(k)?)))
            .collect::<Option<_>>()?,
        constant: a.constant.checked_mul(k)?,
    })
}
