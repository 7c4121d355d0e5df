//! Rewrite 1: degenerate loops (`for v in e..=e`) replaced by their body
//! with `v := e` substituted ([`remove_degenerate_loops`]).
//!
//! Must not know about: facts, the solver.

use super::affine::*;
use super::walk::*;
use super::*;

/// The single value of a loop whose bounds are both one term with divisor
/// 1 and equal affine functions (so it runs exactly once).
pub(super) fn single_value(lower: &Bound, upper: &Bound) -> Option<Affine> {
    let ([lo], [hi]) = (lower.terms.as_slice(), upper.terms.as_slice()) else {
        return None;
    };
    if lo.div != 1 || hi.div != 1 {
        return None;
    }
    let (a, b) = (canonical(&lo.expr)?, canonical(&hi.expr)?);
    (a == b).then(|| merged(&lo.expr)).flatten()
}

/// Replaces every loop `for (v = e; v <= e; v++) B` (bounds one term each,
/// divisor 1, equal affine functions `e`) by `B[v := e]`, spliced into the
/// enclosing statement list. Exact: such a loop runs once, with `v = e`.
/// Returns the number of loops removed.
pub fn remove_degenerate_loops(f: &mut Function) -> usize {
    let mut n = 0;
    f.body = degenerate(std::mem::take(&mut f.body), &mut n);
    n
}

pub(super) fn degenerate(body: Vec<Stmt>, n: &mut usize) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        match s {
            Stmt::For {
                var,
                lower,
                upper,
                body,
            } => {
                let body = degenerate(body, n);
                if let Some(e) = single_value(&lower, &upper) {
                    let mut nb = body.clone();
                    let ok = affines_stmts(&mut nb, &mut |a| {
                        *a = subst_affine(a, var, &e)?;
                        Some(())
                    });
                    if ok.is_some() {
                        *n += 1;
                        // The substitution may make inner loops
                        // degenerate (`for (w = e; w <= v; ...)`).
                        out.extend(degenerate(nb, n));
                        continue;
                    }
                }
                out.push(Stmt::For {
                    var,
                    lower,
                    upper,
                    body,
                });
            }
            Stmt::If { cond, then, els } => out.push(Stmt::If {
                cond,
                then: degenerate(then, n),
                els: degenerate(els, n),
            }),
            Stmt::Block(b) => out.push(Stmt::Block(degenerate(b, n))),
            other => out.push(other),
        }
    }
    out
}
