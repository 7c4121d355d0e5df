//! Loop-invariant code motion of loads: the sub-expressions of a loop
//! body that have one value while the loop runs, read memory (or call a
//! math routine) and cannot fail, evaluated once before the loop's first
//! iteration instead of in every iteration.
//!
//! Cranelift moves pure arithmetic out of loops itself, but not loads
//! (it cannot know that the loop does not store to them) nor calls; a
//! body such as CoxPH's information matrix
//! `I[a][b] += ((1 − f[i])·R2[first[i]][a][b] + f[i]·R2[…][a][b]) / S0[i]
//! − S1[i][a]·S1[i][b] / (S0[i]·S0[i])` over `b` re-read `f[i]`,
//! `first[i]`, `S0[i]` and `S1[i][a]` at every `b`.
//!
//! Which sub-expressions (the fast variant only, where affine accesses are
//! proven in bounds; a vector loop broadcasts the values, `vector`):
//! - *fixed* while the loop runs ([`Scope`]: no variable bound in the
//!   loop, no array or local the body writes, no draw or call);
//! - *safe*: no operation that may fail (checked int arithmetic, an int
//!   `abs`, a data-dependent load, unless its row was checked before the
//!   loop's first iteration and its offset does not move: `rows`), no
//!   lazy operation (`?:`, `&&`, `||`, but for the branch this copy of
//!   the loop takes of a `?:` evaluated before it: `loops`);
//! - evaluated in *every* iteration: reached from the body's statements
//!   without entering a branch of an `if`, a nested loop or binding, the
//!   lazy operand of `?:`, `&&`, `||` or an `&&`/`||` accumulation, or a
//!   draw;
//! - *costly*: a load or a math call (anything else Cranelift hoists).
//!
//! Why it is exact: the values are computed after the test that the loop
//! runs at least once; the first iteration evaluates the same
//! expressions, on the same values (they are fixed), so every load is one
//! the program performs (in bounds by the fast variant's proof), and
//! nothing safe can fail or have an effect. Each later iteration would
//! compute the same values again.
//!
//! Must not know about: how loops are unrolled or rotated (`loops` calls
//! [`Lower::loop_invariants`] and records the values in
//! `Lower::invariant`, which [`Lower::expr`] consults).

use super::draws::{costly, mentions};
use super::rows::Scope;
use super::Lower;
use crate::codegen::loop_ast::{Accumulation, BinOp, Expr, ReduceOp, Stmt};

impl Lower<'_, '_> {
    /// The maximal invariant sub-expressions of `body` for the loop of
    /// `scope` (see the module comment), in evaluation order, skipping
    /// those an enclosing loop already computed.
    pub(super) fn loop_invariants<'e>(
        &self,
        body: &'e [Stmt],
        scope: &Scope,
        out: &mut Vec<&'e Expr>,
    ) {
        for s in body {
            match s {
                Stmt::Assign { index, value, .. } => {
                    self.invariant_parts(value, scope, out);
                    index
                        .iter()
                        .for_each(|x| self.invariant_parts(x, scope, out));
                }
                Stmt::Accumulate(Accumulation {
                    index, op, value, ..
                }) => {
                    index
                        .iter()
                        .for_each(|x| self.invariant_parts(x, scope, out));
                    if !matches!(op, ReduceOp::And | ReduceOp::Or) {
                        self.invariant_parts(value, scope, out);
                    }
                }
                Stmt::SetLocal { value, .. } => self.invariant_parts(value, scope, out),
                Stmt::If { cond, .. } => self.invariant_parts(cond, scope, out),
                Stmt::Block(b) => self.loop_invariants(b, scope, out),
                Stmt::For(_) | Stmt::Bind(_) => {}
            }
        }
    }

    /// The maximal invariant sub-expressions of `e`, evaluated whenever
    /// `e` is.
    fn invariant_parts<'e>(&self, e: &'e Expr, scope: &Scope, out: &mut Vec<&'e Expr>) {
        if self.invariant.iter().any(|(p, _)| std::ptr::eq(*p, e)) {
            return;
        }
        if costly(e) && scope.fixed(e) && self.safe(e) {
            out.push(e);
            return;
        }
        match e {
            Expr::Select(c, a, b) => match self.resolution(e) {
                Some(then) => self.invariant_parts(if then { a } else { b }, scope, out),
                None => self.invariant_parts(c, scope, out),
            },
            Expr::Binary(BinOp::And | BinOp::Or, c, _) => self.invariant_parts(c, scope, out),
            Expr::Random(_) | Expr::Categorical(_) => {}
            _ => e
                .children()
                .into_iter()
                .for_each(|x| self.invariant_parts(x, scope, out)),
        }
    }

    /// `index` is that of a load whose row was checked before the loop
    /// of `k` (`rows`) and mentions no `k`: the load reads one checked
    /// cell while that loop runs.
    fn fixed_checked_row(&self, index: &[Expr]) -> bool {
        self.rows.iter().any(|&(p, k, _)| {
            std::ptr::eq(p, index.as_ptr()) && !index.iter().any(|x| mentions(x, k))
        })
    }

    /// `e` cannot fail where the program evaluates it (in the fast
    /// variant) and evaluates all of its operands.
    fn safe(&self, e: &Expr) -> bool {
        match e {
            Expr::Load { index, .. } => {
                (index.iter().all(Expr::is_data_free_index) || self.fixed_checked_row(index))
                    && index.iter().all(|x| self.safe(x))
            }
            Expr::Select(_, a, b) => match self.resolution(e) {
                Some(then) => self.safe(if then { a } else { b }),
                None => false,
            },
            Expr::Binary(BinOp::And | BinOp::Or, _, _) => false,
            _ => !self.op_may_fail(e) && e.children().into_iter().all(|a| self.safe(a)),
        }
    }
}
