//! The facts known at a statement: linear inequalities over the loop
//! variables and parameters (the parameter context, enclosing loop
//! bounds, enclosing `if` conjuncts), and the rational questions asked of
//! `crate::poly::solver` about them (implication, emptiness).
//!
//! Must not know about: which rewrite asks, statements' effects.

use super::affine::*;
use super::walk::conjuncts;
use super::*;
use crate::poly::solver::{self, Optimum, System};
use crate::poly::ConstraintKind;
use num_traits::Signed;

/// Inequalities `row·(loop vars, params, 1) >= 0` that hold here.
pub(super) struct Facts {
    pub(super) nv: usize,
    pub(super) np: usize,
    pub(super) rows: Vec<Vec<i64>>,
}

pub(super) fn neg_row(r: &[i64]) -> Option<Vec<i64>> {
    r.iter().map(|v| v.checked_neg()).collect()
}

impl Facts {
    /// The facts that hold everywhere in `f`: its parameter context when
    /// it is one conjunction (nothing otherwise).
    pub(super) fn of_context(f: &Function) -> Facts {
        let nv = f.loop_vars.len();
        let np = f.params.len();
        let mut facts = Facts {
            nv,
            np,
            rows: Vec::new(),
        };
        if let ([piece], true) = (f.context.pieces(), f.context.n_params() == np) {
            for c in piece.constraints() {
                // A context row is `[params, 1]` (no dimensions: checked).
                let (Some(par), Some(&constant)) = (c.row.get(..np), c.row.last()) else {
                    continue;
                };
                let mut row = vec![0i64; nv + np + 1];
                row[nv..nv + np].copy_from_slice(par);
                row[nv + np] = constant;
                match c.kind {
                    ConstraintKind::Ineq => facts.rows.push(row),
                    ConstraintKind::Eq => {
                        if let Some(neg) = neg_row(&row) {
                            facts.rows.push(row);
                            facts.rows.push(neg);
                        }
                    }
                }
            }
        }
        facts
    }

    /// True when the facts and `extra` have no rational point (hence no
    /// integer point). Solver errors count as "not shown": `false`.
    pub(super) fn infeasible(&self, extra: &[Vec<i64>]) -> bool {
        let zero = vec![0i64; self.nv + self.np + 1];
        let (sys, obj) = self.system(extra, &zero);
        matches!(solver::rational_min(&sys, &obj), Ok(Optimum::Empty))
    }

    /// The facts and `extra` as a solver system, with the objective row
    /// `obj`, over only the columns some row or `obj` mentions (the loop
    /// variables of a whole function are many, the facts at one place
    /// mention few): a column no row mentions is a free variable, so
    /// dropping it changes neither emptiness nor the minimum.
    pub(super) fn system(&self, extra: &[Vec<i64>], obj: &[i64]) -> (System, Vec<i64>) {
        let n = self.nv + self.np;
        let mut used = vec![false; n];
        for r in self
            .rows
            .iter()
            .map(Vec::as_slice)
            .chain(extra.iter().map(Vec::as_slice))
            .chain([obj])
        {
            for (u, &x) in used.iter_mut().zip(r) {
                *u |= x != 0;
            }
        }
        let cols: Vec<usize> = (0..n).filter(|&c| used[c]).collect();
        let pick = |r: &[i64]| -> Vec<i64> {
            let mut out: Vec<i64> = cols.iter().map(|&c| r[c]).collect();
            out.push(r[n]);
            out
        };
        let mut sys = System::new(cols.len());
        for r in self.rows.iter().chain(extra) {
            sys.add_ineq(pick(r));
        }
        (sys, pick(obj))
    }

    /// `a` as a row; `None` on an unknown symbol.
    pub(super) fn row(&self, a: &Affine) -> Option<Vec<i64>> {
        let mut row = vec![0i64; self.nv + self.np + 1];
        for &(s, c) in &a.terms {
            let k = match s {
                Sym::Loop(v) if v.0 < self.nv => v.0,
                Sym::Param(p) if p < self.np => self.nv + p,
                _ => return None,
            };
            row[k] = row[k].checked_add(c)?;
        }
        row[self.nv + self.np] = a.constant;
        Some(row)
    }

    /// The inequalities equivalent to an affine comparison (over the
    /// integers), or `None` when `e` is not one.
    pub(super) fn comparison(&self, e: &Expr) -> Option<Vec<Vec<i64>>> {
        let Expr::Binary(op, a, b) = e else {
            return None;
        };
        let aff = |x: &Expr| match x {
            Expr::Aff(a) => Some(a.clone()),
            Expr::Int(k) => Some(Affine::cst(*k)),
            _ => None,
        };
        let (x, y) = (aff(a)?, aff(b)?);
        // d = x − y.
        let d = sub_affine(&x, &y)?;
        let ge = |d: &Affine, shift: i64| -> Option<Vec<i64>> {
            // d − shift >= 0
            self.row(&d.clone().offset(shift.checked_neg()?)?)
        };
        let nd = sub_affine(&y, &x)?;
        Some(match op {
            BinOp::Ge => vec![ge(&d, 0)?],
            BinOp::Gt => vec![ge(&d, 1)?],
            BinOp::Le => vec![ge(&nd, 0)?],
            BinOp::Lt => vec![ge(&nd, 1)?],
            BinOp::Eq => vec![ge(&d, 0)?, ge(&nd, 0)?],
            _ => return None,
        })
    }

    /// True when `row >= 0` holds on every rational point of the facts and
    /// `extra` (an empty system counts as not implied: be conservative).
    pub(super) fn implies(&self, extra: &[Vec<i64>], row: &[i64]) -> bool {
        let (sys, obj) = self.system(extra, row);
        match solver::rational_min(&sys, &obj) {
            Ok(Optimum::Value(v)) => !v.is_negative(),
            _ => false,
        }
    }

    /// Whether the facts imply `max_k ⌈e_k/d_k⌉ <= min_m ⌊f_m/d'_m⌋` (a
    /// loop with these bounds runs at least once). Per pair of terms,
    /// `⌈e/d⌉ <= e/d + (d − 1)/d` and `⌊f/d'⌋ >= f/d' − (d' − 1)/d'`, so
    /// `d·f − d'·e − (d'·(d − 1) + d·(d' − 1)) >= 0` (times `d·d' > 0`)
    /// suffices; with `d = d' = 1` it is `f − e >= 0`, exact.
    pub(super) fn nonempty(&self, lower: &Bound, upper: &Bound) -> bool {
        let pair = |lo: &BoundTerm, hi: &BoundTerm| -> Option<bool> {
            let (e, f) = (self.row(&lo.expr)?, self.row(&hi.expr)?);
            let (d, dp) = (lo.div, hi.div);
            let slack = dp
                .checked_mul(d.checked_sub(1)?)?
                .checked_add(d.checked_mul(dp.checked_sub(1)?)?)?;
            let mut row = Vec::with_capacity(e.len());
            for (x, y) in f.iter().zip(&e) {
                row.push(d.checked_mul(*x)?.checked_sub(dp.checked_mul(*y)?)?);
            }
            let last = row.len() - 1;
            row[last] = row[last].checked_sub(slack)?;
            Some(self.implies(&[], &row))
        };
        !lower.terms.is_empty()
            && !upper.terms.is_empty()
            && lower.terms.iter().all(|lo| {
                upper
                    .terms
                    .iter()
                    .all(|hi| lo.div > 0 && hi.div > 0 && pair(lo, hi) == Some(true))
            })
    }

    /// Whether the facts imply `row >= 0` (`kind` inequality) or `row ==
    /// 0` (equality).
    pub(super) fn holds(&self, row: &[i64], kind: ConstraintKind) -> bool {
        match kind {
            ConstraintKind::Ineq => self.implies(&[], row),
            ConstraintKind::Eq => {
                neg_row(row).is_some_and(|neg| self.implies(&[], row) && self.implies(&[], &neg))
            }
        }
    }

    /// Adds the facts of the bounds of a loop over `var` (see
    /// [`Facts::bound_facts`]); returns the number of rows before, to
    /// truncate back to when leaving the loop.
    pub(super) fn push_loop(&mut self, var: LoopVar, lower: &Bound, upper: &Bound) -> usize {
        let mark = self.rows.len();
        self.bound_facts(var, lower, true);
        self.bound_facts(var, upper, false);
        mark
    }

    /// Adds the negation of `cond` when it is one affine inequality
    /// (true in an `if`'s else-branch: `¬(r >= 0)` is `−r − 1 >= 0` over
    /// the integers); nothing otherwise (fewer facts). Returns the number
    /// of rows before.
    pub(super) fn push_negated(&mut self, cond: &Expr) -> usize {
        let mark = self.rows.len();
        if let Some([r]) = self.comparison(cond).as_deref() {
            let neg = neg_row(r).and_then(|mut n| {
                let last = n.len() - 1;
                n[last] = n[last].checked_sub(1)?;
                Some(n)
            });
            if let Some(n) = neg {
                self.rows.push(n);
            }
        }
        mark
    }

    /// Adds the inequalities of the affine conjuncts of `cond` (true in an
    /// `if`'s then-branch); returns the number of rows before.
    pub(super) fn push_conds(&mut self, cond: &Expr) -> usize {
        let mark = self.rows.len();
        for c in conjuncts(cond) {
            if let Some(rows) = self.comparison(c) {
                self.rows.extend(rows);
            }
        }
        mark
    }

    /// Facts of one loop bound: `d·v − e >= 0` (lower), `e − d·v >= 0`
    /// (upper), for each term (skipped on overflow: fewer facts is sound).
    pub(super) fn bound_facts(&mut self, var: LoopVar, b: &Bound, lower: bool) {
        if var.0 >= self.nv {
            return;
        }
        for t in &b.terms {
            let Some(mut row) = self.row(&t.expr) else {
                continue;
            };
            // row = e; want lower: d·v − e, upper: e − d·v.
            let ok = (|| {
                if lower {
                    row = neg_row(&row)?;
                    row[var.0] = row[var.0].checked_add(t.div)?;
                } else {
                    row[var.0] = row[var.0].checked_sub(t.div)?;
                }
                Some(())
            })();
            if ok.is_some() {
                self.rows.push(row);
            }
        }
    }
}

/// The constraint `row` of an array's domain (over the parameters
/// (`np`), the array's dimensions and the constant) at an access whose
/// indices `index` are affine where the row is non-zero: the affine
/// function of the loop variables and parameters it becomes; `None` on a
/// data-dependent index there or an overflow.
pub(super) fn constraint_at(np: usize, row: &[i64], index: &[Expr]) -> Option<Affine> {
    let mut acc = Affine {
        terms: (0..np)
            .filter(|&p| row[p] != 0)
            .map(|p| (Sym::Param(p), row[p]))
            .collect(),
        constant: *row.get(np + index.len())?,
    };
    for (p, x) in index.iter().enumerate() {
        let c = row[np + p];
        if c == 0 {
            continue;
        }
        let a = match x {
            Expr::Aff(a) => a.clone(),
            Expr::Int(k) => Affine::cst(*k),
            _ => return None,
        };
        acc = sub_affine(&acc, &scale_affine(&a, c.checked_neg()?)?)?;
    }
    Some(acc)
}
