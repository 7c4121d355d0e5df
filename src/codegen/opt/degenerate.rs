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
    let mut d = Degenerate { count: 0 };
    f.body = rewrite_stmts(&mut d, std::mem::take(&mut f.body));
    d.count
}

/// The rewrite of [`remove_degenerate_loops`]; counts the loops removed.
struct Degenerate {
    count: usize,
}

impl StmtRewrite for Degenerate {
    fn on_for(&mut self, l: ForLoop, out: &mut Vec<Stmt>) {
        let body = rewrite_stmts(self, l.body);
        if let Some(e) = single_value(&l.lower, &l.upper) {
            let mut nb = body.clone();
            let ok = affines_stmts(&mut nb, &mut |a| {
                *a = subst_affine(a, l.var, &e)?;
                Some(())
            });
            if ok.is_some() {
                self.count += 1;
                // The substitution may make inner loops degenerate
                // (`for (w = e; w <= v; ...)`).
                out.extend(rewrite_stmts(self, nb));
                return;
            }
        }
        out.push(Stmt::For(ForLoop { body, ..l }));
    }
}
