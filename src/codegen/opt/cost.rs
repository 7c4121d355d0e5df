//! The cost of a loop program as it will run: how often its loops iterate
//! and its statements execute, as an asymptotic complexity in the
//! parameters (`O(W*K + V*K)`), so that `alphac complexity` describes the
//! generated code and not only the equations.
//!
//! Method: every loop iteration and every statement execution is a point of
//! an *execution set* over the enclosing loop variables and the parameters:
//! the parameter context, the bounds of the enclosing loops (`for`, a
//! categorical draw's range) and the affine conjuncts of the enclosing
//! `if`s' conditions (then-branches; data-dependent conjuncts are ignored,
//! and an else-branch gets the negated condition only when it is one
//! affine inequality, so the count is an upper bound). A
//! data-selected one-trip loop (`Stmt::Bind`) contributes one point: its
//! variable is pinned to one value of its range. The cost is the sum of
//! `poly::complexity::basic_bounds` over these sets (dominated terms
//! dropped; where a set has several incomparable bounds, such as a
//! triangle `min(N, K) * K`, the one that adds least to the sum:
//! `poly::complexity::sum_of_bounds`).
//!
//! Must not know about: schedules, the IR, Cranelift.

use super::super::loop_ast::CategoricalDraw;
use super::facts::Facts;
use super::*;
use crate::poly::complexity::{basic_bounds, sum_of_bounds, Complexity};
use crate::poly::{BasicSet, PolyError, Space};
use std::collections::HashSet;

/// The asymptotic number of loop iterations and statement executions of
/// `f` (see the module comment): an upper bound, exact for loop nests with
/// affine bounds and guards.
pub fn loop_cost(f: &Function) -> Result<Complexity, PolyError> {
    let mut w = CostWalk {
        f,
        facts: Facts::of_context(f),
        scope: Vec::new(),
        sets: Vec::new(),
    };
    w.stmts(&f.body)?;
    let mut seen = HashSet::new();
    let mut bounds = Vec::new();
    for s in &w.sets {
        if seen.insert(s) {
            bounds.push(basic_bounds(s)?);
        }
    }
    sum_of_bounds(&f.params, &bounds)
}

struct CostWalk<'a> {
    f: &'a Function,
    facts: Facts,
    /// The loop variables bound here, outermost first.
    scope: Vec<LoopVar>,
    /// One execution set per loop body and statement.
    sets: Vec<BasicSet>,
}

impl CostWalk<'_> {
    /// The facts as a basic set over the variables in scope: rows
    /// `(loop vars, params, 1)` reordered to `poly`'s `(params, dims, 1)`.
    fn record(&mut self) -> Result<(), PolyError> {
        let (nv, np) = (self.facts.nv, self.facts.np);
        let names: Vec<String> = self
            .scope
            .iter()
            .map(|v| self.f.loop_vars.get(v.0).cloned().unwrap_or_default())
            .collect();
        // Distinct names: loop variables may share a printed name.
        let names: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(k, n)| format!("{n}_{k}"))
            .collect();
        let space = Space::set(&self.f.params, &names);
        let mut ineqs = Vec::new();
        'rows: for r in &self.facts.rows {
            // A row over a loop variable not in scope (none should
            // remain) is dropped: fewer facts, a larger count.
            for (c, &x) in r.iter().enumerate().take(nv) {
                if x != 0 && !self.scope.iter().any(|v| v.0 == c) {
                    continue 'rows;
                }
            }
            let mut row = Vec::with_capacity(np + self.scope.len() + 1);
            row.extend_from_slice(&r[nv..nv + np]);
            row.extend(self.scope.iter().map(|v| r[v.0]));
            row.push(r[nv + np]);
            ineqs.push(row);
        }
        self.sets
            .push(BasicSet::from_rows(space, Vec::new(), ineqs)?);
        Ok(())
    }

    fn stmts(&mut self, body: &[Stmt]) -> Result<(), PolyError> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), PolyError> {
        match s {
            Stmt::For(l) => {
                let mark = self.facts.push_loop(l.var, &l.lower, &l.upper);
                self.scope.push(l.var);
                self.record()?;
                self.stmts(&l.body)?;
                self.scope.pop();
                self.facts.rows.truncate(mark);
            }
            Stmt::If { cond, then, els } => {
                let mark = self.facts.push_conds(cond);
                self.stmts(then)?;
                self.facts.rows.truncate(mark);
                let mark = self.facts.push_negated(cond);
                self.stmts(els)?;
                self.facts.rows.truncate(mark);
            }
            Stmt::Block(b) => self.stmts(b)?,
            Stmt::Bind(b) => {
                // One point: `var` pinned to one value of its range (its
                // lower bound's first term, `d·var − e ∈ [0, d − 1]`).
                let mark = self.facts.push_loop(b.var, &b.lower, &b.upper);
                if let Some(t) = b.lower.terms.first() {
                    if let Some(row) = self.facts.row(&t.expr) {
                        let pin = (|| {
                            let v = b.var.0;
                            // e + d − 1 − d·var >= 0
                            let mut up = row;
                            let last = up.len() - 1;
                            up[last] = up[last].checked_add(t.div.checked_sub(1)?)?;
                            up[v] = up[v].checked_sub(t.div)?;
                            Some(up)
                        })();
                        if let Some(up) = pin {
                            self.facts.rows.push(up);
                        }
                    }
                }
                self.scope.push(b.var);
                self.expr(&b.guard)?;
                self.expr(&b.value)?;
                self.stmts(&b.body)?;
                self.scope.pop();
                self.facts.rows.truncate(mark);
            }
            Stmt::Assign { index, value, .. } => {
                self.record()?;
                index.iter().try_for_each(|e| self.expr(e))?;
                self.expr(value)?;
            }
            Stmt::Accumulate(a) => {
                self.record()?;
                a.index.iter().try_for_each(|e| self.expr(e))?;
                self.expr(&a.value)?;
            }
            Stmt::SetLocal { value, .. } => {
                self.record()?;
                self.expr(value)?;
            }
        }
        Ok(())
    }

    /// The categorical draws in `e`: each scans its range once (a uniform one
    /// costs O(1)).
    fn expr(&mut self, e: &Expr) -> Result<(), PolyError> {
        let mut draws = Vec::new();
        collect_categoricals(e, &mut draws);
        for c in draws {
            let mark = self.facts.push_loop(c.var, &c.lower, &c.upper);
            self.scope.push(c.var);
            self.record()?;
            self.scope.pop();
            self.facts.rows.truncate(mark);
        }
        Ok(())
    }
}

/// The categorical draws of `e` (outermost first; a draw inside a draw's
/// weight is counted with its enclosing draw's range only).
fn collect_categoricals<'e>(e: &'e Expr, out: &mut Vec<&'e CategoricalDraw>) {
    match e {
        // A uniform draw is O(1) (`CategoricalDraw::is_uniform`); its
        // weight is a constant.
        Expr::Categorical(c) if c.is_uniform() => {}
        Expr::Categorical(c) => out.push(c),
        _ => e
            .children()
            .into_iter()
            .for_each(|x| collect_categoricals(x, out)),
    }
}
