//! The affine facts that hold at a point of a loop program for given
//! parameter values, and the exact in-bounds proof of an access from them
//! (the fallback of the interval analysis, whose intervals lose the
//! correlation between loop variables: in a skewed nest such as
//! `for t { for s = ceild(t − 9, 4) .. { for i = ceild(t − s − 9, 3) .. } }`
//! the interval of `t − s` is much wider than its true range).
//!
//! A fact is an integer inequality `Σ c_v·v + c ≥ 0` over the loop
//! variables in scope: each enclosing loop `v = max_k ⌈e_k/d_k⌉ ..=
//! min_k ⌊e_k/d_k⌋` gives `d_k·v − e_k ≥ 0` and `e_k − d_k·v ≥ 0` (exact
//! for `d_k > 0`), and each enclosing guard that is a conjunction of
//! affine comparisons gives its comparisons (and the other branch of an
//! `if` or a select, which the compiled code takes only when the guard
//! fails, gets its negation when that is one comparison). Every point at which the
//! compiled code executes an access satisfies the facts in scope there,
//! so an access index `e` is within `[lo, hi]` when both `facts ∧ e ≤ lo − 1`
//! and `facts ∧ e ≥ hi + 1` have no integer point (exact integer emptiness
//! from `poly::solver`): sound, and as precise as the loop bounds allow.
//!
//! Must not know about: Cranelift.

use crate::codegen::loop_ast::{Affine, BinOp, Bound, Expr, Sym, UnOp};
use crate::poly::solver::{self, System};
use std::collections::BTreeMap;

/// Most facts kept in scope, and most variables in one proof: beyond
/// them an access stays unproven (checked at run time), which is sound.
const MAX_FACTS: usize = 256;
const MAX_VARS: usize = 32;

/// The facts in scope: rows over the function's loop variables
/// (`coefs[v]` for loop variable `v`, then the constant), parameters
/// substituted.
pub(super) struct Facts<'a> {
    params: &'a [i64],
    n_loop_vars: usize,
    rows: Vec<Vec<i128>>,
}

impl<'a> Facts<'a> {
    pub(super) fn new(params: &'a [i64], n_loop_vars: usize) -> Facts<'a> {
        Facts {
            params,
            n_loop_vars,
            rows: Vec::new(),
        }
    }

    /// A mark to return to with [`Facts::restore`] when leaving a scope.
    pub(super) fn mark(&self) -> usize {
        self.rows.len()
    }

    pub(super) fn restore(&mut self, mark: usize) {
        self.rows.truncate(mark);
    }

    /// `e` as a row (parameters substituted), `None` on a symbol out of
    /// range.
    fn row(&self, e: &Affine) -> Option<Vec<i128>> {
        self.comparison_row(&Comparison {
            terms: e.terms.iter().map(|&(s, c)| (s, i128::from(c))).collect(),
            constant: i128::from(e.constant),
        })
    }

    fn push(&mut self, row: Vec<i128>) {
        if self.rows.len() < MAX_FACTS {
            self.rows.push(row);
        }
    }

    /// The facts of `var` ranging over `lower ..= upper` (see the module
    /// comment).
    pub(super) fn range(&mut self, var: usize, lower: &Bound, upper: &Bound) {
        for (b, is_lower) in [(lower, true), (upper, false)] {
            for t in &b.terms {
                let (Some(mut r), true) = (self.row(&t.expr), t.div > 0) else {
                    continue;
                };
                // lower: d·v − e ≥ 0; upper: e − d·v ≥ 0.
                if is_lower {
                    r.iter_mut().for_each(|x| *x = -*x);
                    r[var] += i128::from(t.div);
                } else {
                    r[var] -= i128::from(t.div);
                }
                self.push(r);
            }
        }
    }

    /// The facts of a guard that holds: its affine comparisons (see
    /// [`comparisons`]).
    pub(super) fn guard(&mut self, cond: &Expr) {
        for c in comparisons(cond) {
            if let Some(r) = self.comparison_row(&c) {
                self.push(r);
            }
        }
    }

    /// The facts of a guard that does *not* hold (the other branch of an
    /// `if` or a select, which the compiled code takes only then): see
    /// [`negated_comparisons`].
    pub(super) fn negated_guard(&mut self, cond: &Expr) {
        for c in negated_comparisons(cond) {
            if let Some(r) = self.comparison_row(&c) {
                self.push(r);
            }
        }
    }

    /// A comparison's left side `Σ c·s + constant` as a row (parameters
    /// substituted), `None` on a symbol out of range or an overflow.
    fn comparison_row(&self, c: &Comparison) -> Option<Vec<i128>> {
        let n = self.n_loop_vars;
        let mut r = vec![0i128; n + 1];
        r[n] = c.constant;
        for &(s, co) in &c.terms {
            match s {
                Sym::Param(p) => {
                    let v = i128::from(*self.params.get(p)?);
                    r[n] = r[n].checked_add(v.checked_mul(co)?)?;
                }
                Sym::Loop(v) => {
                    let slot = r.get_mut(v.0).filter(|_| v.0 < n)?;
                    *slot = slot.checked_add(co)?;
                }
            }
        }
        Some(r)
    }

    /// Whether the facts prove `lo <= e <= hi` for every point where they
    /// hold; `false` when they do not (or the proof is out of reach).
    pub(super) fn prove_within(&self, e: &Affine, lo: i128, hi: i128) -> bool {
        let Some(r) = self.row(e) else {
            return false;
        };
        // e ≤ lo − 1: (lo − 1) − e ≥ 0.   e ≥ hi + 1: e − (hi + 1) ≥ 0.
        let below: Vec<i128> = r
            .iter()
            .enumerate()
            .map(|(k, &x)| {
                if k == self.n_loop_vars {
                    lo - 1 - x
                } else {
                    -x
                }
            })
            .collect();
        let mut above = r.clone();
        if let Some(c) = above.last_mut() {
            *c -= hi + 1;
        }
        self.empty_with(below) == Some(true) && self.empty_with(above) == Some(true)
    }

    /// Whether the facts and `extra` have no integer point (`None`: the
    /// question is out of reach: too many variables, coefficients beyond
    /// `i64`, or a solver error).
    fn empty_with(&self, extra: Vec<i128>) -> Option<bool> {
        let n = self.n_loop_vars;
        let rows: Vec<&Vec<i128>> = self.rows.iter().chain(std::iter::once(&extra)).collect();
        // Columns of the variables the rows mention, compacted.
        let used: Vec<usize> = (0..n).filter(|&v| rows.iter().any(|r| r[v] != 0)).collect();
        if used.len() > MAX_VARS {
            return None;
        }
        let mut sys = System::new(used.len());
        for r in rows {
            let mut row = Vec::with_capacity(used.len() + 1);
            for &v in &used {
                row.push(i64::try_from(r[v]).ok()?);
            }
            row.push(i64::try_from(r[n]).ok()?);
            sys.add_ineq(row);
        }
        solver::integer_sample(&sys).ok().map(|s| s.is_none())
    }
}

/// An affine comparison in the form `Σ c·s + constant >= 0` (merged terms,
/// no zero coefficient).
pub(super) struct Comparison {
    pub(super) terms: Vec<(Sym, i128)>,
    pub(super) constant: i128,
}

/// The affine comparisons a condition asserts when it holds: those of a
/// comparison of two affine expressions (`x <= y` is `y − x >= 0`, `x < y`
/// is `y − x − 1 >= 0`, `x == y` both directions), and of each conjunct of
/// `&&`; other conditions assert nothing usable (an empty list: sound).
pub(super) fn comparisons(cond: &Expr) -> Vec<Comparison> {
    let Expr::Binary(op, a, b) = cond else {
        return Vec::new();
    };
    if *op == BinOp::And {
        let mut out = comparisons(a);
        out.extend(comparisons(b));
        return out;
    }
    let as_aff = |e: &Expr| match e {
        Expr::Aff(x) => Some(x.clone()),
        Expr::Int(k) => Some(Affine::cst(*k)),
        _ => None,
    };
    let (Some(x), Some(y)) = (as_aff(a), as_aff(b)) else {
        return Vec::new();
    };
    // `sign·(x − y) − shift >= 0`.
    let make = |sign: i128, shift: i128| {
        let mut merged: BTreeMap<Sym, i128> = BTreeMap::new();
        for &(s, c) in &x.terms {
            *merged.entry(s).or_insert(0) += sign * i128::from(c);
        }
        for &(s, c) in &y.terms {
            *merged.entry(s).or_insert(0) -= sign * i128::from(c);
        }
        Comparison {
            terms: merged.into_iter().filter(|&(_, c)| c != 0).collect(),
            constant: sign * (i128::from(x.constant) - i128::from(y.constant)) - shift,
        }
    };
    match op {
        BinOp::Le => vec![make(-1, 0)],
        BinOp::Lt => vec![make(-1, 1)],
        BinOp::Ge => vec![make(1, 0)],
        BinOp::Gt => vec![make(1, 1)],
        BinOp::Eq => vec![make(1, 0), make(-1, 0)],
        _ => Vec::new(),
    }
}

/// The affine comparisons a condition asserts when it does *not* hold:
/// the negation of one comparison (`¬(x <= y)` is `x >= y + 1`, `¬(x != y)`
/// is `x == y`), of `!c` (those of `c`) and of `a || b` (both negated); the
/// negation of a conjunction or of `==` is a disjunction and asserts
/// nothing usable.
pub(super) fn negated_comparisons(cond: &Expr) -> Vec<Comparison> {
    match cond {
        Expr::Unary(UnOp::Not, c) => comparisons(c),
        Expr::Binary(BinOp::Or, a, b) => {
            let mut out = negated_comparisons(a);
            out.extend(negated_comparisons(b));
            out
        }
        Expr::Binary(op, a, b) => {
            let flipped = match op {
                BinOp::Le => BinOp::Gt,
                BinOp::Lt => BinOp::Ge,
                BinOp::Ge => BinOp::Lt,
                BinOp::Gt => BinOp::Le,
                BinOp::Ne => BinOp::Eq,
                _ => return Vec::new(),
            };
            comparisons(&Expr::Binary(flipped, a.clone(), b.clone()))
        }
        _ => Vec::new(),
    }
}
