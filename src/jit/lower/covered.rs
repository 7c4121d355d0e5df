//! Rows past the first failure: a loop body such as DMM's
//! `if (X[d][a] != 0 || !(n[z][a] >= 0)) s += lgamma(n[z][a] + X[d][a]) …;
//! t = t + n[z][a]` reads the row `n[z]` at every iteration, but only in
//! its last statement: [`Lower::body_row_loads`] stops at the `||` (lazy)
//! and finds no row. Yet everything that may fail before the last
//! statement's load is a load of the same row (same array, same indices),
//! or an operation evaluated after such a load (`n[z][a] + X[d][a]`, whose
//! overflow needs the load to have succeeded), so the row may still be
//! checked once before the loop ([`Lower::covered_row`]). And a checked
//! row serves every load with its indices in the body, lazy ones included
//! ([`Lower::share_rows`]): each is then in bounds.
//!
//! Must not know about: how the checks and the loads are emitted (`rows`
//! declares, checks and addresses the rows; `loops` calls these).

use super::draws::mentions;
use super::rows::Scope;
use super::Lower;
use crate::codegen::loop_ast::{BinOp, Expr, LoopVar, ReduceOp, Stmt};
use crate::vocab::ElemType;
use cranelift_frontend::Variable;

/// What a walk of a loop body in evaluation order meets ([`walk_stmts`]).
enum Step<'e> {
    /// An expression node, after the operands it evaluates first, and
    /// whether every iteration evaluates it (not in a lazy operand or a
    /// branch).
    Node(&'e Expr),
    /// A store or an accumulation, after its index and value: its array,
    /// its index, and for an accumulation its operator and value.
    Update {
        array: usize,
        index: &'e [Expr],
        acc: Option<(ReduceOp, &'e Expr)>,
    },
    /// A nested loop or binding (not entered).
    Nested,
}

/// Calls `f` on the nodes of `e` in evaluation order (operands first, a
/// lazy operand after the eager ones), with whether they are evaluated
/// at every iteration when `e` is (`must`); stops when `f` returns
/// `false`. The arguments of draws and selections are not entered (the
/// draw itself is met).
fn walk_expr<'e>(e: &'e Expr, must: bool, f: &mut dyn FnMut(Step<'e>, bool) -> bool) -> bool {
    let go = match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => true,
        Expr::Load { index, .. } => index.iter().all(|x| walk_expr(x, must, f)),
        Expr::Unary(_, a) | Expr::Cast(_, a) => walk_expr(a, must, f),
        Expr::Binary(BinOp::And | BinOp::Or, a, b) => {
            walk_expr(a, must, f) && walk_expr(b, false, f)
        }
        Expr::Binary(_, a, b) => walk_expr(a, must, f) && walk_expr(b, must, f),
        Expr::Select(c, a, b) => {
            walk_expr(c, must, f) && walk_expr(a, false, f) && walk_expr(b, false, f)
        }
        Expr::Math(_, args) | Expr::External { args, .. } => {
            args.iter().all(|x| walk_expr(x, must, f))
        }
        Expr::Random(_) | Expr::Categorical(_) | Expr::Selection(_) => true,
    };
    go && f(Step::Node(e), must)
}

/// [`walk_expr`] over statements in the order the lowering evaluates
/// them: an assignment's value, then its index; an accumulation's index,
/// then its value; an `if`'s condition, then its branches (not at every
/// iteration).
fn walk_stmts<'e>(body: &'e [Stmt], must: bool, f: &mut dyn FnMut(Step<'e>, bool) -> bool) -> bool {
    body.iter().all(|s| match s {
        Stmt::Assign {
            array,
            index,
            value,
        } => {
            walk_expr(value, must, f)
                && index.iter().all(|x| walk_expr(x, must, f))
                && f(
                    Step::Update {
                        array: *array,
                        index,
                        acc: None,
                    },
                    must,
                )
        }
        Stmt::Accumulate(a) => {
            a.index.iter().all(|x| walk_expr(x, must, f))
                && walk_expr(&a.value, must, f)
                && f(
                    Step::Update {
                        array: a.array,
                        index: &a.index,
                        acc: Some((a.op, &a.value)),
                    },
                    must,
                )
        }
        Stmt::SetLocal { value, .. } => walk_expr(value, must, f),
        Stmt::Block(b) => walk_stmts(b, must, f),
        Stmt::If { cond, then, els } => {
            walk_expr(cond, must, f) && walk_stmts(then, false, f) && walk_stmts(els, false, f)
        }
        Stmt::For(_) | Stmt::Bind(_) => f(Step::Nested, must),
    })
}

/// `a` and `b` load the same element at every point: the same array and
/// syntactically equal indices.
fn same_load(a: &Expr, b: &Expr) -> bool {
    matches!((a, b), (
        Expr::Load { array: x, index: i },
        Expr::Load { array: y, index: j },
    ) if x == y && i == j)
}

/// Evaluating `e` evaluates a load like `r` ([`same_load`]) first, in
/// every case (not in a lazy operand).
fn must_load(e: &Expr, r: &Expr) -> bool {
    if same_load(e, r) {
        return true;
    }
    match e {
        Expr::Load { index, .. } => index.iter().any(|x| must_load(x, r)),
        Expr::Unary(_, a) | Expr::Cast(_, a) => must_load(a, r),
        Expr::Binary(BinOp::And | BinOp::Or, a, _) | Expr::Select(a, _, _) => must_load(a, r),
        Expr::Binary(_, a, b) => must_load(a, r) || must_load(b, r),
        Expr::Math(_, args) | Expr::External { args, .. } => args.iter().any(|x| must_load(x, r)),
        _ => false,
    }
}

impl Lower<'_, '_> {
    /// `e` cannot fail: affine loads and operations that cannot fail only.
    fn infallible(&self, e: &Expr) -> bool {
        let own = match e {
            Expr::Load { index, .. } => index.iter().all(Expr::is_affine),
            Expr::Random(_) | Expr::Categorical(_) | Expr::Selection(_) => false,
            _ => !self.op_may_fail(e),
        };
        own && e.children().into_iter().all(|x| self.infallible(x))
    }

    /// The row of a loop body read at every iteration after where
    /// [`Lower::body_row_loads`] stopped (its rows are `rows`): the first
    /// data-dependent load `R` at every iteration (in evaluation order)
    /// that is a row of `scope` (an array without a domain predicate, its
    /// data-dependent indices fixed while the loop runs and unable to
    /// fail, its other indices affine) not loaded like one of `rows`,
    /// provided that everything evaluated before it that may fail (in
    /// any branch) is
    /// - a load like `R` or like one of `rows` ([`same_load`]), or
    /// - an operation (or an int accumulation) that evaluates a load like
    ///   `R` before itself ([`must_load`]);
    ///
    /// and nothing before it is a nested loop, a binding or a
    /// data-dependent store.
    ///
    /// Why checking `R`'s row before the loop (after `rows`') is exact:
    /// when it passes, every load like `R` is in bounds (its indices are
    /// fixed) and nothing changes. When it fails, the original's first
    /// iteration reaches, after the checks of `rows` (which passed), no
    /// failure before the first load like `R` it evaluates: the loads
    /// like one of `rows` pass, the other operations that may fail come
    /// after a load like `R`; and it evaluates one (`R` itself at the
    /// latest), which fails with the same array and point (same indices
    /// at the loop's first value). Only one such row: an operation
    /// evaluated after it may fail, and would come before a second one.
    pub(super) fn covered_row<'e>(
        &self,
        body: &'e [Stmt],
        scope: &Scope,
        rows: &[&'e Expr],
    ) -> Option<&'e Expr> {
        let mut found = None;
        walk_stmts(body, true, &mut |step, must| match step {
            Step::Node(e @ Expr::Load { array, index }) if must => {
                let row = !index.iter().all(Expr::is_affine)
                    && self.f.arrays[*array].domain.is_none()
                    && (scope.whole || index.iter().any(|x| mentions(x, scope.var)))
                    && index
                        .iter()
                        .all(|x| x.is_affine() || (scope.fixed(x) && self.infallible(x)))
                    && !rows.iter().any(|r| same_load(r, e));
                if row {
                    found = Some(e);
                }
                !row
            }
            Step::Node(_) => true,
            Step::Update { index, .. } => index.iter().all(Expr::is_affine),
            Step::Nested => false,
        });
        let r = found?;
        let mut reached = false;
        walk_stmts(body, true, &mut |step, _| {
            let allowed = match step {
                Step::Node(e) if std::ptr::eq(e, r) => {
                    reached = true;
                    return false;
                }
                Step::Node(e @ Expr::Load { index, .. }) => {
                    index.iter().all(Expr::is_affine)
                        || same_load(e, r)
                        || rows.iter().any(|x| same_load(x, e))
                }
                Step::Node(e) => {
                    !self.op_may_fail(e) || e.children().into_iter().any(|x| must_load(x, r))
                }
                Step::Update { array, index, acc } => {
                    let int = self.f.arrays[array].ty == ElemType::Int;
                    index.iter().all(Expr::is_affine)
                        && match acc {
                            Some((op, value))
                                if int && matches!(op, ReduceOp::Add | ReduceOp::Mul) =>
                            {
                                must_load(value, r)
                            }
                            _ => true,
                        }
                }
                Step::Nested => false,
            };
            allowed
        });
        reached.then_some(r)
    }

    /// Every other load of `body` (outside nested loops and bindings)
    /// like one of the rows `loads` ([`same_load`]), declared as `vars` by
    /// [`Lower::declare_rows`] for the loop variable `k`, addressed from
    /// the same checked row: once the row's check before the loop passed,
    /// each such load is in bounds wherever it is evaluated (its indices
    /// that do not mention `k` are those checked, and do not change while
    /// the loop runs; the others are affine).
    pub(super) fn share_rows(
        &mut self,
        body: &[Stmt],
        loads: &[&Expr],
        vars: &[Variable],
        k: LoopVar,
    ) {
        let mut shared = Vec::new();
        walk_stmts(body, true, &mut |step, _| {
            if let Step::Node(e @ Expr::Load { index, .. }) = step {
                let first = loads.iter().zip(vars).find(|(r, _)| same_load(r, e));
                if let Some((r, &v)) = first {
                    if !std::ptr::eq(*r, e) {
                        shared.push((index.as_ptr(), v));
                    }
                }
            }
            true
        });
        self.rows.extend(shared.into_iter().map(|(p, v)| (p, k, v)));
    }
}
