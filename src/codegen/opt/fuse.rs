//! Loop fusion ([`fuse_loops`]): two consecutive loops over the same
//! range whose iterations are independent of each other's other
//! iterations become one loop, so that one iteration's data is used by
//! both bodies while it is in cache.
//!
//! Must not know about: schedules, the JIT, threads.

use super::affine::subst_affine;
use super::interchange::Interchange;
use super::walk::{affines_stmts, rewrite_stmts, StmtRewrite};
use super::*;
use crate::codegen::loop_ast::parallel::is_parallel;

/// Fuses `for (v1 in [lo, hi]) { B1 }` followed by `for (v2 in [lo, hi])
/// { B2 }` (the same bounds, syntactically) into `for (v1 in [lo, hi]) {
/// B1; B2[v2 := v1] }`, repeatedly along a statement list.
///
/// Rule:
/// 1. each body holds a loop (the fused loop is an outer loop: inner
///    loops keep their own shape and what the JIT makes of it), and sets
///    no local;
/// 2. the fused loop passes the parallel proof ([`is_parallel`]): every
///    array the two bodies write has a dimension that every access of
///    both bodies indexes by one and the same affine function of `v1`;
///    no local flows between iterations; nothing external is called;
/// 3. at most one of the two bodies may fail
///    ([`Interchange::stmts_cannot_fail`] holds for the other).
///
/// Why this is exact: by 2, what iteration `v` of either body touches in
/// the written arrays is touched by no other iteration of either body, so
/// `B1(v)` and `B2(v')` commute for `v ≠ v'`, and the fused order (`B1(v)`
/// then `B2(v)`, `v` increasing) is a reordering of the original one (all
/// `B1`, then all `B2`) that keeps `B1(v)` before `B2(v)`: every cell ends
/// with the same value, floats included. Errors: when only `B1` may fail,
/// both orders stop at its first failing iteration with its error (what
/// `B2` did before is not observable after a failed run); when only `B2`
/// may fail, both run `B1` up to and including `B2`'s first failing
/// iteration, then report that error.
///
/// LBP's per-pixel passes (the costs, the initial prefix and suffix
/// tables, the sums over a pixel's directions, the beliefs, their minimum
/// and argmin) become a few loops over the pixels instead of one each.
///
/// Returns the number of fusions.
pub fn fuse_loops(f: &mut Function) -> usize {
    let snapshot = f.clone();
    let mut x = Fuse {
        f: &snapshot,
        checks: Interchange::new(&snapshot),
        fused: 0,
    };
    f.body = rewrite_stmts(&mut x, std::mem::take(&mut f.body));
    let body = std::mem::take(&mut f.body);
    f.body = x.list(body);
    x.fused
}

struct Fuse<'a> {
    f: &'a Function,
    checks: Interchange,
    fused: usize,
}

impl StmtRewrite for Fuse<'_> {
    fn on_for(&mut self, l: ForLoop, out: &mut Vec<Stmt>) {
        let l = l.map_body(|b| {
            let b = rewrite_stmts(self, b);
            self.list(b)
        });
        out.push(Stmt::For(l));
    }

    fn on_if(&mut self, cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>, out: &mut Vec<Stmt>) {
        let then = rewrite_stmts(self, then);
        let then = self.list(then);
        let els = rewrite_stmts(self, els);
        let els = self.list(els);
        out.push(Stmt::If { cond, then, els });
    }
}

impl Fuse<'_> {
    /// The statement list `body` with consecutive fusable loops fused.
    fn list(&mut self, body: Vec<Stmt>) -> Vec<Stmt> {
        let mut out: Vec<Stmt> = Vec::with_capacity(body.len());
        for s in body {
            let pair = out
                .last()
                .and_then(|p| self.as_loop(p))
                .zip(self.as_loop(&s));
            if let Some((a, b)) = pair {
                if let Some(fused) = self.fuse(&a, &b) {
                    self.fused += 1;
                    out.pop();
                    out.push(Stmt::For(fused));
                    continue;
                }
            }
            out.push(s);
        }
        out
    }

    /// `s` as a loop: a loop itself, or `if (c) { for (v ...) { B } }`
    /// with `c` unable to fail as `for (v ...) { if (c) { B } }` (the same
    /// runs: `c` is fixed while the loop runs, `v` not being bound when
    /// it is evaluated, and evaluating it once or per iteration makes no
    /// difference).
    fn as_loop(&self, s: &Stmt) -> Option<ForLoop> {
        match s {
            Stmt::For(l) => Some(l.clone()),
            Stmt::If { cond, then, els } if els.is_empty() && self.checks.cannot_fail(cond) => {
                let [Stmt::For(l)] = then.as_slice() else {
                    return None;
                };
                Some(ForLoop {
                    body: vec![Stmt::If {
                        cond: cond.clone(),
                        then: l.body.clone(),
                        els: Vec::new(),
                    }],
                    ..l.clone()
                })
            }
            _ => None,
        }
    }

    fn fuse(&self, a: &ForLoop, b: &ForLoop) -> Option<ForLoop> {
        if a.lower != b.lower || a.upper != b.upper {
            return None;
        }
        if !(holds_loop(&a.body) && holds_loop(&b.body)) {
            return None;
        }
        if sets_local(&a.body) || sets_local(&b.body) {
            return None;
        }
        if !self.checks.stmts_cannot_fail(&a.body) && !self.checks.stmts_cannot_fail(&b.body) {
            return None;
        }
        let mut second = b.body.clone();
        if b.var != a.var {
            // `v1` bound inside `B2` would capture the renamed `v2`.
            let mut inner = Vec::new();
            bound_vars(&b.body, &mut inner);
            if inner.contains(&a.var) {
                return None;
            }
            let to = Affine::var(a.var);
            affines_stmts(&mut second, &mut |x| {
                *x = subst_affine(x, b.var, &to)?;
                Some(())
            })?;
        }
        let mut body = a.body.clone();
        body.extend(second);
        let fused = ForLoop {
            var: a.var,
            lower: a.lower.clone(),
            upper: a.upper.clone(),
            parallel: false,
            body,
        };
        is_parallel(self.f, &fused).ok()?;
        Some(fused)
    }
}

/// Whether `body` holds a loop at its top level or under `if`s and blocks.
fn holds_loop(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::For(_) => true,
        Stmt::If { then, els, .. } => holds_loop(then) || holds_loop(els),
        Stmt::Block(b) => holds_loop(b),
        _ => false,
    })
}

/// Whether `body` sets a local anywhere.
fn sets_local(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::SetLocal { .. } => true,
        Stmt::For(l) => sets_local(&l.body),
        Stmt::If { then, els, .. } => sets_local(then) || sets_local(els),
        Stmt::Block(b) => sets_local(b),
        Stmt::Bind(b) => sets_local(&b.body),
        Stmt::Assign { .. } | Stmt::Accumulate(_) => false,
    })
}
