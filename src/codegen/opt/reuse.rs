//! Loop interchange for reuse ([`interchange_for_reuse`]): a loop nest
//! `for o { for i { B } }` whose iterations of `i` are independent of
//! each other across every `o` runs as `for i { for o { B } }` when the
//! arrays `B` touches are laid out with `i` outside `o`.
//!
//! Must not know about: schedules, the JIT, threads.

use super::interchange::{bound_mentions, expr_mentions, swapped_nest, Interchange};
use super::walk::{rewrite_stmts, StmtRewrite};
use super::*;
use crate::codegen::loop_ast::parallel::is_parallel;

/// Swaps `for (o ...) { for (i ...) { B } }` into `for (i ...) { for (o
/// ...) { B } }` (the body of the `o` loop is the `i` loop alone).
///
/// Rule:
/// 1. the bounds of `i` do not mention `o`;
/// 2. the swapped outer loop `for i { for o { B } }` passes the parallel
///    proof ([`is_parallel`]): every array `B` writes has a dimension
///    that every access of `B` to it indexes by one and the same affine
///    function of `i` (free of `o` and of everything bound inside), and
///    `B` reads no local it does not define first and calls nothing
///    external;
/// 3. `B` sets no local, binds nothing, and cannot fail: its loads and
///    stores are affine, its arithmetic is float, its accumulations are
///    into float arrays (or `min`, `max`), it draws nothing
///    ([`Interchange::stmts_cannot_fail`]);
/// 4. profitability: over the accesses of `B` that mention `i` or `o`,
///    the layout favours `i` outside: an access that mentions `i` and not
///    `o` (a row `i` then stays in cache across `o`) counts +1, one that
///    mentions `o` and not `i` −1, one that mentions both +1 when the
///    first position mentioning `i` comes before the first one
///    mentioning `o` (row-major: `i` is the slower index), −1 when after;
///    the sum must be positive.
///
/// Why this is exact: by 2, the cells of the written arrays that
/// iteration `i` touches (reads included) are touched by no other
/// iteration `i' ≠ i`, whatever `o`; so the points `(o, i)` for one `i`
/// see, in either order, the values left by the earlier points `(o', i)`
/// of the same `i` and by nothing else, and every cell ends with the same
/// value, floats included (each `i` runs its `o` in the same order, each
/// operation on the same operands). Nothing fails (3), so no first error
/// can move. LBP's prefix and suffix sums over the directions of a pixel
/// `for t1 { for p { for k { h_part[p][t1 − 2][k] = … } } }` become `for
/// p { for t1 { … } }`: one pixel's `D × K` tables stay in cache instead
/// of `D + 1` passes over all pixels.
///
/// A swapped nest is then split on its own ([`Reuse::resplit`]): the
/// loop that moved inside may be cut at its guards.
///
/// Returns the number of nests interchanged.
pub fn interchange_for_reuse(f: &mut Function) -> usize {
    let snapshot = f.clone();
    let mut x = Reuse {
        f: &snapshot,
        checks: Interchange::new(&snapshot),
        swapped: 0,
    };
    f.body = rewrite_stmts(&mut x, std::mem::take(&mut f.body));
    x.swapped
}

struct Reuse<'a> {
    /// The function before the rewrite (arrays, locals, their reads).
    f: &'a Function,
    /// Whose [`Interchange::cannot_fail`] decides rule 3.
    checks: Interchange,
    swapped: usize,
}

impl StmtRewrite for Reuse<'_> {
    fn on_for(&mut self, l: ForLoop, out: &mut Vec<Stmt>) {
        let l = l.map_body(|b| rewrite_stmts(self, b));
        match self.swap(&l) {
            Some(s) => {
                self.swapped += 1;
                out.extend(self.resplit(s));
            }
            None => out.push(Stmt::For(l)),
        }
    }
}

impl Reuse<'_> {
    fn swap(&self, l: &ForLoop) -> Option<Stmt> {
        let [Stmt::For(inner)] = l.body.as_slice() else {
            return None;
        };
        let (o, i) = (l.var, inner.var);
        if bound_mentions(&inner.lower, o) || bound_mentions(&inner.upper, o) {
            return None;
        }
        if !self.checks.stmts_cannot_fail(&inner.body) {
            return None;
        }
        let mut score = 0i64;
        accesses(&inner.body, &mut |index| score += layout_vote(index, i, o));
        if score <= 0 {
            return None;
        }
        let swapped = swapped_nest(l, inner);
        is_parallel(self.f, &swapped).ok()?;
        Some(Stmt::For(swapped))
    }

    /// The swapped nest `s` after index-set splitting ([`split_loops`]),
    /// degenerate loops and guards, on its own: the loop that moved
    /// inside is cut at the thresholds of its guards, which the split of
    /// the whole function could not do when it was outside (its cuts went
    /// to the pieces of the outer range). LBP's `if (t1 >= 3) hmin[p][t1 −
    /// 3] = min(…)` then runs unguarded in the piece `t1 >= 3`, where its
    /// accumulator is a register. Each pass is exact on its own; the
    /// facts of loops and guards around the nest are not used (fewer
    /// facts: fewer cuts and guards decided, never a wrong one).
    fn resplit(&self, s: Stmt) -> Vec<Stmt> {
        let mut g = Function {
            body: vec![s],
            ..self.f.clone()
        };
        split_loops(&mut g);
        remove_degenerate_loops(&mut g);
        simplify_guards(&mut g);
        g.body
    }
}

/// Rule 4's vote of one access at `index`.
fn layout_vote(index: &[Expr], i: LoopVar, o: LoopVar) -> i64 {
    let first = |v: LoopVar| index.iter().position(|x| expr_mentions(x, v));
    match (first(i), first(o)) {
        (Some(_), None) => 1,
        (None, Some(_)) => -1,
        (Some(pi), Some(po)) => match pi.cmp(&po) {
            std::cmp::Ordering::Less => 1,
            std::cmp::Ordering::Greater => -1,
            std::cmp::Ordering::Equal => 0,
        },
        (None, None) => 0,
    }
}

/// Calls `g` on the index of every load and store of `body`.
fn accesses(body: &[Stmt], g: &mut dyn FnMut(&[Expr])) {
    fn expr(e: &Expr, g: &mut dyn FnMut(&[Expr])) {
        if let Expr::Load { index, .. } = e {
            g(index);
        }
        for c in e.children() {
            expr(c, g);
        }
    }
    for s in body {
        match s {
            Stmt::For(l) => accesses(&l.body, g),
            Stmt::If { cond, then, els } => {
                expr(cond, g);
                accesses(then, g);
                accesses(els, g);
            }
            Stmt::Assign { index, value, .. } => {
                g(index);
                expr(value, g);
            }
            Stmt::Accumulate(acc) => {
                g(&acc.index);
                expr(&acc.value, g);
            }
            Stmt::SetLocal { value, .. } => expr(value, g),
            Stmt::Block(b) => accesses(b, g),
            Stmt::Bind(b) => {
                expr(&b.guard, g);
                expr(&b.value, g);
                accesses(&b.body, g);
            }
        }
    }
}
