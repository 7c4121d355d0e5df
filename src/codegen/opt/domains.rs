//! Domain predicates implied at every data-dependent access
//! ([`drop_implied_domains`]): an array whose domain is not its box
//! (CoxPH's `R2[i][a][b]`, `b <= a`) has its domain checked on every
//! data-dependent access; where the loops around each such access already
//! keep its affine indices inside the domain, the box check is the whole
//! check.
//!
//! Must not know about: schedules, the JIT's checks (only that they check
//! the box, then the domain, of a data-dependent access).

use super::facts::{constraint_at, neg_row, Facts};
use super::*;
use crate::poly::ConstraintKind;

/// Drops the domain predicate of an array when it is implied at each of
/// its data-dependent accesses.
///
/// Rule: the array's domain is one convex piece, and each of its
/// constraints either involves only positions whose index is data
/// dependent at every data-dependent access of the array and is implied
/// (over the rationals) by the array's box and the parameter context,
/// or, at each data-dependent access, involves only affine index
/// positions and is implied, the indices substituted, by the facts
/// there: the context, the bounds of the enclosing loops, bindings and
/// `categorical` ranges, and the affine conjuncts of the enclosing `if`s
/// and `select`s (then-branches; in else-branches the negation of a
/// single affine comparison) and of the left operands of `&&`.
///
/// Why this is exact: the JIT checks a data-dependent access against the
/// box, then the domain. Where the box check passes, every constraint of
/// the first kind holds (implied by the box), and every constraint of the
/// second kind holds at every execution of the access (implied by facts
/// that hold there), so the domain check passes too and dropping it
/// changes no run. Affine accesses are not checked against the domain.
///
/// Returns the number of domains dropped.
pub fn drop_implied_domains(f: &mut Function) -> usize {
    let mut dropped = 0;
    for a in 0..f.arrays.len() {
        let Some(domain) = f.arrays[a].domain.clone() else {
            continue;
        };
        let [piece] = domain.pieces() else {
            continue;
        };
        let np = f.params.len();
        let nd = f.arrays[a].dims.len();
        if domain.n_params() != np || domain.n_dims() != nd {
            continue;
        }
        let rows: Vec<(Vec<i64>, ConstraintKind)> = piece
            .constraints()
            .into_iter()
            .map(|c| (c.row, c.kind))
            .collect();
        let boxed = box_facts(f, a);
        let mut walk = Walk {
            array: a,
            np,
            rows: &rows,
            boxed: &boxed,
            facts: Facts::of_context(f),
            ok: true,
        };
        walk.stmts(&f.body);
        if walk.ok {
            f.arrays[a].domain = None;
            dropped += 1;
        }
    }
    dropped
}

/// The facts of array `a`'s box and the context, over its dimensions
/// (as loop variables `0 .. nd`) and the parameters.
fn box_facts(f: &Function, a: usize) -> Facts {
    let nd = f.arrays[a].dims.len();
    let np = f.params.len();
    let ctx = Facts::of_context(f);
    let nv = ctx.nv;
    let mut facts = Facts {
        nv: nd,
        np,
        rows: ctx
            .rows
            .iter()
            .map(|r| {
                let mut row = vec![0; nd];
                row.extend_from_slice(&r[nv..]);
                row
            })
            .collect(),
    };
    for (k, d) in f.arrays[a].dims.iter().enumerate() {
        // lower + extent − 1
        let upper = super::affine::neg_affine(&d.extent)
            .and_then(|ne| super::affine::sub_affine(&d.lower, &ne))
            .and_then(|u| u.offset(-1));
        let (Some(lo), Some(hi)) = (facts.row(&d.lower), upper.and_then(|u| facts.row(&u))) else {
            continue;
        };
        // x_k − lo >= 0, hi − x_k >= 0
        if let Some(mut r) = neg_row(&lo) {
            r[k] = 1;
            facts.rows.push(r);
        }
        let mut r = hi;
        r[k] = -1;
        facts.rows.push(r);
    }
    facts
}

/// The walk over the statements with the facts that hold at each.
struct Walk<'a> {
    array: ArrayId,
    np: usize,
    /// The domain's constraints, rows over (parameters, dimensions, 1).
    rows: &'a [(Vec<i64>, ConstraintKind)],
    boxed: &'a Facts,
    facts: Facts,
    ok: bool,
}

impl Walk<'_> {
    fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            if !self.ok {
                return;
            }
            match s {
                Stmt::For(l) => {
                    let mark = self.facts.push_loop(l.var, &l.lower, &l.upper);
                    self.stmts(&l.body);
                    self.facts.rows.truncate(mark);
                }
                Stmt::If { cond, then, els } => {
                    self.expr(cond);
                    let mark = self.facts.push_conds(cond);
                    self.stmts(then);
                    self.facts.rows.truncate(mark);
                    let mark = self.facts.push_negated(cond);
                    self.stmts(els);
                    self.facts.rows.truncate(mark);
                }
                Stmt::Assign {
                    array,
                    index,
                    value,
                } => {
                    self.access(*array, index);
                    self.expr(value);
                }
                Stmt::Accumulate(acc) => {
                    self.access(acc.array, &acc.index);
                    self.expr(&acc.value);
                }
                Stmt::SetLocal { value, .. } => self.expr(value),
                Stmt::Block(b) => self.stmts(b),
                Stmt::Bind(b) => {
                    self.expr(&b.guard);
                    self.expr(&b.value);
                    let mark = self.facts.push_loop(b.var, &b.lower, &b.upper);
                    self.stmts(&b.body);
                    self.facts.rows.truncate(mark);
                }
            }
        }
    }

    fn expr(&mut self, e: &Expr) {
        if !self.ok {
            return;
        }
        match e {
            Expr::Load { array, index } => self.access(*array, index),
            Expr::Categorical(c) => {
                for x in &c.point {
                    self.expr(x);
                }
                self.expr(&c.seed);
                let mark = self.facts.push_loop(c.var, &c.lower, &c.upper);
                self.expr(&c.cond);
                self.expr(&c.weight);
                self.facts.rows.truncate(mark);
                return;
            }
            // the branch runs only where the condition holds
            Expr::Select(c, a, b) => {
                self.expr(c);
                let mark = self.facts.push_conds(c);
                self.expr(a);
                self.facts.rows.truncate(mark);
                let mark = self.facts.push_negated(c);
                self.expr(b);
                self.facts.rows.truncate(mark);
                return;
            }
            Expr::Binary(BinOp::And, a, b) => {
                self.expr(a);
                let mark = self.facts.push_conds(a);
                self.expr(b);
                self.facts.rows.truncate(mark);
                return;
            }
            _ => {}
        }
        for c in e.children() {
            self.expr(c);
        }
    }

    /// An access of the array at `index`: when data dependent, every
    /// domain constraint must be implied as the rule says.
    fn access(&mut self, array: ArrayId, index: &[Expr]) {
        for x in index {
            self.expr(x);
        }
        if array != self.array || index.iter().all(Expr::is_affine) {
            return;
        }
        let np = self.np;
        for (row, kind) in self.rows {
            let on: Vec<usize> = (0..index.len()).filter(|&p| row[np + p] != 0).collect();
            let data = on.iter().filter(|&&p| !index[p].is_affine()).count();
            let implied = if data == on.len() {
                // data positions (or none): implied by the box
                let mut r: Vec<i64> = row[np..np + index.len()].to_vec();
                r.extend_from_slice(&row[..np]);
                r.push(row[np + index.len()]);
                self.boxed.holds(&r, *kind)
            } else if data == 0 {
                constraint_at(np, row, index)
                    .and_then(|a| self.facts.row(&a))
                    .is_some_and(|r| self.facts.holds(&r, *kind))
            } else {
                false
            };
            if !implied {
                self.ok = false;
                return;
            }
        }
    }
}
