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
        let n = self.n_loop_vars;
        let mut r = vec![0i128; n + 1];
        r[n] = i128::from(e.constant);
        for &(s, c) in &e.terms {
            match s {
                Sym::Param(p) => {
                    let v = i128::from(*self.params.get(p)?);
                    r[n] = r[n].checked_add(v.checked_mul(i128::from(c))?)?;
                }
                Sym::Loop(v) => {
                    let slot = r.get_mut(v.0).filter(|_| v.0 < n)?;
                    *slot = slot.checked_add(i128::from(c))?;
                }
            }
        }
        Some(r)
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

    /// The facts of a guard that holds: its affine comparisons (the
    /// conjuncts of `&&`); other conditions add nothing.
    pub(super) fn guard(&mut self, cond: &Expr) {
        let Expr::Binary(op, a, b) = cond else {
            return;
        };
        if *op == BinOp::And {
            self.guard(a);
            self.guard(b);
            return;
        }
        let as_aff = |e: &Expr| match e {
            Expr::Aff(x) => Some(x.clone()),
            Expr::Int(k) => Some(Affine::cst(*k)),
            _ => None,
        };
        let (Some(x), Some(y)) = (as_aff(a), as_aff(b)) else {
            return;
        };
        let (Some(rx), Some(ry)) = (self.row(&x), self.row(&y)) else {
            return;
        };
        // x − y and y − x, each minus a shift, must be ≥ 0.
        let diff = |p: &[i128], q: &[i128], shift: i128| -> Vec<i128> {
            let mut r: Vec<i128> = p.iter().zip(q).map(|(a, b)| a - b).collect();
            if let Some(c) = r.last_mut() {
                *c -= shift;
            }
            r
        };
        let rows = match op {
            BinOp::Le => vec![diff(&ry, &rx, 0)],
            BinOp::Lt => vec![diff(&ry, &rx, 1)],
            BinOp::Ge => vec![diff(&rx, &ry, 0)],
            BinOp::Gt => vec![diff(&rx, &ry, 1)],
            BinOp::Eq => vec![diff(&rx, &ry, 0), diff(&ry, &rx, 0)],
            _ => Vec::new(),
        };
        for r in rows {
            self.push(r);
        }
    }

    /// The facts of a guard that does *not* hold (the other branch of an
    /// `if` or a select, which the compiled code takes only then): the
    /// negation of one affine comparison (`¬(x <= y)` is `x >= y + 1`),
    /// of `!c` (the facts of `c`) and of `a || b` (both negated); the
    /// negation of a conjunction or of `==` is a disjunction and adds
    /// nothing.
    pub(super) fn negated_guard(&mut self, cond: &Expr) {
        match cond {
            Expr::Unary(UnOp::Not, c) => self.guard(c),
            Expr::Binary(BinOp::Or, a, b) => {
                self.negated_guard(a);
                self.negated_guard(b);
            }
            Expr::Binary(op, a, b) => {
                let flipped = match op {
                    BinOp::Le => BinOp::Gt,
                    BinOp::Lt => BinOp::Ge,
                    BinOp::Ge => BinOp::Lt,
                    BinOp::Gt => BinOp::Le,
                    BinOp::Ne => BinOp::Eq,
                    _ => return,
                };
                self.guard(&Expr::Binary(flipped, a.clone(), b.clone()));
            }
            _ => {}
        }
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
