//! Rewrite 4: redundant guard conjuncts ([`simplify_guards`]): affine
//! conjuncts implied by the facts are dropped, `if (true)` is unwrapped,
//! a binding's range implied non-empty is marked known.
//!
//! Must not know about: loop splitting, accumulators.

use super::facts::*;
use super::walk::*;
use super::*;

/// Removes affine conjuncts of `if` conditions implied by what is known
/// where the `if` stands, and replaces an `if` whose condition becomes
/// `true` by its then-branch.
///
/// The conditions of `Select` expressions in statements are simplified
/// the same way, with the facts of the enclosing statement (a `Select`
/// whose condition becomes `true` is replaced by its first arm).
///
/// Known facts (linear constraints over loop variables and parameters):
/// the parameter context when it is one conjunction; for each enclosing
/// `for (v = max_k ⌈e_k/d_k⌉; v <= min_m ⌊f_m/d_m⌋; ...)` the constraints
/// `d_k·v − e_k >= 0` and `f_m − d_m·v >= 0` (exact for integer `v`); the
/// affine conjuncts of enclosing `if` conditions (then-branches only).
/// A conjunct `a >= 0` (likewise `a > 0` as `a − 1 >= 0`, `a == 0` as two
/// inequalities, `a <= b`, `a < b`) of a condition `c_1 && ... && c_n`
/// (top-level `&&`s) is dropped when the rational minimum of `a` over the
/// facts and the kept affine conjuncts is `>= 0` (rational implication
/// implies integer implication). Conjuncts are examined left to right and
/// each dropped one is implied by what remains, so the final condition is
/// equivalent wherever the `if` is reached. Only affine conjuncts (no
/// effects, no failure) are removed, so lazy evaluation of the others is
/// unchanged where the condition's value matters.
///
/// Returns the number of conjuncts removed.
pub fn simplify_guards(f: &mut Function) -> usize {
    let mut g = Guards {
        facts: Facts::of_context(f),
        removed: 0,
    };
    f.body = rewrite_stmts(&mut g, std::mem::take(&mut f.body));
    g.removed
}

/// The rewrite of [`simplify_guards`]: the facts that hold at the current
/// statement, and the number of conjuncts removed so far.
struct Guards {
    facts: Facts,
    removed: usize,
}

impl StmtRewrite for Guards {
    fn on_for(&mut self, l: ForLoop, out: &mut Vec<Stmt>) {
        let saved = self.facts.push_loop(l.var, &l.lower, &l.upper);
        let l = l.map_body(|b| rewrite_stmts(self, b));
        self.facts.rows.truncate(saved);
        out.push(Stmt::For(l));
    }

    /// The guard is simplified like an `if` condition (the facts where
    /// the binding stands hold wherever it is evaluated); in the body the
    /// bounds of the variable (checked before the body runs) and the
    /// guard's affine conjuncts hold too.
    ///
    /// The binding's range test `lower <= upper` is marked known
    /// ([`Binding::nonempty`]) when the facts imply it ([`Facts::nonempty`]).
    fn on_bind(&mut self, b: Binding, out: &mut Vec<Stmt>) {
        let nonempty = self.facts.nonempty(&b.lower, &b.upper);
        let (guard, removed) = self.facts.simplify_cond(b.guard);
        let guard = self.facts.marked(guard);
        self.removed += removed;
        let value = self.facts.expr(b.value, &mut self.removed);
        let saved = self.facts.push_loop(b.var, &b.lower, &b.upper);
        self.facts.push_conds(&guard);
        let body = rewrite_stmts(self, b.body);
        self.facts.rows.truncate(saved);
        out.push(Stmt::from(Binding {
            guard,
            value,
            body,
            nonempty,
            ..b
        }));
    }

    fn on_if(&mut self, cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>, out: &mut Vec<Stmt>) {
        let (cond, removed) = self.facts.simplify_cond(cond);
        let cond = self.facts.marked(cond);
        self.removed += removed;
        let saved = self.facts.push_conds(&cond);
        let then = rewrite_stmts(self, then);
        self.facts.rows.truncate(saved);
        let els = rewrite_stmts(self, els);
        if cond == Expr::Bool(true) {
            out.extend(then);
        } else {
            out.push(Stmt::If { cond, then, els });
        }
    }

    fn on_leaf(&mut self, s: Stmt, out: &mut Vec<Stmt>) {
        let (facts, n) = (&self.facts, &mut self.removed);
        out.push(map_leaf_exprs(s, |e| facts.expr(e, n)).unwrap_or_else(|s| s));
    }
}

impl Facts {
    /// `e` with the conditions of its `Select`s simplified like `if`
    /// conditions (with the facts of the enclosing statement only); a
    /// `Select` whose condition becomes `true` is replaced by its first
    /// arm.
    fn expr(&self, e: Expr, n: &mut usize) -> Expr {
        match e {
            Expr::Select(c, a, b) => {
                let c = self.expr(*c, n);
                let (c, removed) = self.simplify_cond(c);
                *n += removed;
                if c == Expr::Bool(true) {
                    self.expr(*a, n)
                } else {
                    Expr::Select(
                        Box::new(c),
                        Box::new(self.expr(*a, n)),
                        Box::new(self.expr(*b, n)),
                    )
                }
            }
            // The range of a selection is marked nonempty (or not) anew
            // here, from the facts where it stands: this pass runs last
            // among the rewrites, so the mark is about the final program.
            Expr::Selection(s) => match map_children(Expr::Selection(s), |x| self.expr(x, n)) {
                Expr::Selection(mut s) => {
                    s.nonempty = self.below(&s.lower, &s.upper);
                    Expr::Selection(s)
                }
                e => e,
            },
            // A categorical draw is kept as it is (its condition mentions
            // its own variable, about which the facts know nothing): fewer
            // rewrites, sound.
            e => map_children(e, |x| self.expr(x, n)),
        }
    }

    /// `e` with every selection in it marked nonempty (or not) from the
    /// facts here (`loop_ast::Selection::nonempty`), and nothing else changed:
    /// for the conditions and guards, which the other rewrites may have
    /// moved since a mark was made.
    fn marked(&self, e: Expr) -> Expr {
        match map_children(e, |x| self.marked(x)) {
            Expr::Selection(mut s) => {
                s.nonempty = self.below(&s.lower, &s.upper);
                Expr::Selection(s)
            }
            e => e,
        }
    }

    /// Whether the facts imply `lo <= hi` for two affine int expressions
    /// (`false` when either is not affine).
    fn below(&self, lo: &Expr, hi: &Expr) -> bool {
        let affine = |e: &Expr| match e {
            Expr::Aff(a) => self.row(a),
            Expr::Int(c) => self.row(&Affine::cst(*c)),
            _ => None,
        };
        let (Some(l), Some(h)) = (affine(lo), affine(hi)) else {
            return false;
        };
        let diff: Option<Vec<i64>> = h.iter().zip(&l).map(|(x, y)| x.checked_sub(*y)).collect();
        diff.is_some_and(|d| self.implies(&[], &d))
    }

    /// The condition with implied affine conjuncts removed, and how many
    /// were removed.
    fn simplify_cond(&self, cond: Expr) -> (Expr, usize) {
        let cs: Vec<Expr> = conjuncts(&cond).into_iter().cloned().collect();
        let rows: Vec<Option<Vec<Vec<i64>>>> = cs.iter().map(|c| self.comparison(c)).collect();
        let mut keep = vec![true; cs.len()];
        for i in 0..cs.len() {
            let Some(mine) = &rows[i] else { continue };
            let others: Vec<Vec<i64>> = (0..cs.len())
                .filter(|&j| j != i && keep[j])
                .filter_map(|j| rows[j].clone())
                .flatten()
                .collect();
            if mine.iter().all(|r| self.implies(&others, r)) {
                keep[i] = false;
            }
        }
        let removed = keep.iter().filter(|k| !**k).count();
        if removed == 0 {
            return (cond, 0);
        }
        let kept: Vec<Expr> = cs
            .into_iter()
            .zip(keep)
            .filter_map(|(c, k)| k.then_some(c))
            .collect();
        (Expr::and_all(kept), removed)
    }
}
