//! Rewrite 2: index-set splitting ([`split_loops`]): a loop is cut at the
//! thresholds of the affine conditions on its variable into consecutive
//! pieces in which the conditions are decided and folded (`fold`).
//!
//! Must not know about: accumulators, guard simplification.

use super::affine::*;
use super::facts::*;
use super::fold::*;
use super::hoist::{nonempty_cond, Guard};
use super::walk::*;
use super::*;

/// At most this many cuts (thresholds) are applied to one loop, so a loop
/// becomes at most `2^3 = 8` pieces.
pub const SPLIT_MAX_CUTS: usize = 3;
/// A loop whose body has more nodes than this (statements plus expression
/// nodes, see `size_stmts`) is never split.
pub const SPLIT_MAX_BODY: usize = 400;
/// A piece of a split loop that provably runs at most this many
/// iterations is *short*: when all pieces but one are short, the loop
/// becomes three pieces instead (see [`split_loops`]).
pub const SPLIT_SHORT_TRIPS: i64 = 8;
/// The pass as a whole adds at most this many times the function's
/// original size (in nodes): every split pays its growth (size of the
/// folded pieces minus size of the original body) from this budget.
pub const SPLIT_GROWTH: usize = 3;

/// Index-set splitting of loops on affine guards.
///
/// # What is split
/// Let `L = for (v = lo; v <= hi; v++) B`. An *atom* of `B` is an affine
/// comparison `x op y` (`op` one of `>= > <= < == !=`, `x`, `y` affine)
/// occurring anywhere in an expression of `B` — in `if` conditions,
/// `select` conditions, values, at any depth of nested `for`/`if`/blocks
/// (not inside categorical draws) — whose difference `x − y` mentions `v`
/// and otherwise only parameters and loop variables bound *outside* `L`.
/// Over the integers such an atom is a conjunction of one or two
/// inequalities `a·v + r >= 0` (`a ≠ 0`, `r` free of `v`), each of which is
/// true exactly on one side of a *cut*, a half-line `H = {v : d·v >= e}`
/// with `d >= 1`:
/// - `a > 0`: `a·v + r >= 0 ⇔ a·v >= −r`, the cut `(e, d) = (−r, a)`;
/// - `a < 0`: `a·v + r >= 0 ⇔ |a|·v <= r ⇔ ¬(|a|·v >= r + 1)`, the cut
///   `(r + 1, |a|)`;
///
/// (`>` is `>= 1`, `<=`/`<` are the negated difference, `==`/`!=` give
/// both inequalities of the equality), divided by the gcd `g` of `d` and the
/// coefficients of `e`'s terms: `d·v >= E + c ⇔ (d/g)·v >= E/g + ⌈c/g⌉`.
/// A cut is *useful* when it divides the loop: neither `H` nor its
/// complement contains every point of `[lo, hi]` under the known facts
/// (rational implication from the parameter context, the bounds of the
/// enclosing loops and of `L`, and the affine conjuncts of the enclosing
/// `if`s, as in [`simplify_guards`]). Cuts are taken atom by atom in the
/// order of appearance, all the useful cuts of an atom or none, while at
/// most [`SPLIT_MAX_CUTS`] are taken.
///
/// # Short pieces
/// A piece is short when the facts with its bounds imply that it runs at
/// most [`SPLIT_SHORT_TRIPS`] iterations (`u/d_u − l/d_l <= T − 1` for a
/// lower term `⌈l/d_l⌉` and an upper term `⌊u/d_u⌋`). When there are more
/// than three pieces and all but one, `L = [⌈a/d_a⌉, ⌊b/d_b⌋]` (one term
/// each), are short, their copies of the body buy nothing at run time but
/// cost compile time (each is compiled in full): the loop becomes three
/// pieces, `[lo, min(hi, ⌊(a − 1)/d_a⌋)]`, `L` and
/// `[max(lo, ⌈a/d_a⌉, ⌈(b + 1)/d_b⌉), hi]`, each folded under its own
/// bounds. When `L` is not empty they are the points below it, it and the
/// points above it (`⌈a/d⌉ − 1 = ⌊(a − 1)/d⌋`, `⌊b/d⌋ + 1 = ⌈(b + 1)/d⌉`);
/// when it is empty, the first and the last split `[lo, hi]` at
/// `⌈a/d_a⌉`. Either way they run `[lo, hi]` once, in increasing order.
///
/// # The pieces, and why they cover `[lo, hi]` exactly once, in order
/// Splitting a loop `[lo, hi]` at a cut `H = (e, d)` gives two consecutive
/// loops with the same variable and body:
/// `[lo, min(hi, ⌊(e − 1)/d⌋)]` then `[max(lo, ⌈e/d⌉), hi]`. For an integer
/// `v`, `v <= ⌊(e − 1)/d⌋ ⇔ d·v <= e − 1 ⇔ ¬(d·v >= e) ⇔ ¬(v >= ⌈e/d⌉)`
/// (floor/ceiling of exact rationals, `d >= 1`), so the first loop runs
/// exactly the points of `[lo, hi]` outside `H`, the second exactly those
/// inside `H`, every point of the first is smaller than every point of the
/// second (`v < e/d <= w`), and each runs its points in increasing order:
/// the concatenation runs `[lo, hi]` once, in increasing order, whatever
/// the run-time order of `lo`, `hi` and `e/d` (an empty piece does not
/// run; bounds are `max`/`min` of `ceild`/`floord` terms, as the loop AST
/// allows). Applying the next cut to each piece keeps the property (by
/// induction), so the sequence of pieces runs the same iterations of `B`
/// in the same order as `L`: the program is unchanged, operation for
/// operation. A cut that does not divide a piece (it or its complement
/// is implied there) is not applied to that piece, and a piece whose
/// bounds have no rational point with the facts (hence no integer point)
/// is dropped. Bound terms implied by another term of the same bound are
/// removed (`⌈e_k/d_k⌉ <= ⌈e_m/d_m⌉` follows from `d_k·e_m − d_m·e_k >= 0`).
///
/// # What the pieces gain
/// In each piece, every atom whose difference mentions `v` (and otherwise
/// only variables bound outside `L` and parameters) is decided where the
/// facts with the piece's bounds imply it or its negation, and the
/// expression is folded: `false && x → false`, `true && x → x`,
/// `x && true → x`, `x && false → false` only when `x` is infallible (made
/// of constants, affine values, comparisons and `&& || !` of those);
/// dually for `||`; `!b`; `b ? p : q → p` or `q`; `if (true) T else E → T`,
/// `if (false) T else E → E`; a loop whose folded body is empty, an `if`
/// with empty branches and an infallible condition, and a piece whose
/// folded body is empty are dropped (they do nothing). These preserve
/// lazy evaluation: a folded
/// expression evaluates to the same value, with the same failures, as the
/// original wherever the piece runs. The split is kept only when at least
/// one atom is decided, and only when its growth fits the budget
/// ([`SPLIT_GROWTH`], and bodies larger than [`SPLIT_MAX_BODY`] are never
/// split). When a loop is cut into several pieces, a piece whose
/// non-emptiness condition `lo' <= hi'` (as in [`hoist_accumulators`], one
/// conjunct per pair of bound terms) has conjuncts mentioning loop
/// variables is wrapped in `if` those conjuncts: exact, since a piece
/// whose bounds cross runs nothing, and it gives the JIT's interval
/// analysis (which narrows outer variables by guards, not by inner loop
/// bounds) the facts the removed guards gave it, e.g. `i <= N − 2` from
/// `i + 1 <= N − 1` for a piece `j ∈ [i + 1, N − 1]` that replaced
/// `if (j >= i + 1)`; [`simplify_guards`] later drops the conjuncts the
/// enclosing loops imply. A loop with atoms but no useful cut is one piece: its atoms
/// decided over the whole range are folded the same way (not counted as
/// a split). Loops are processed outside in: the pieces of an outer loop
/// are folded first, then the loops nested in each piece are considered
/// with the piece's bounds among the facts.
///
/// Every computation is checked: an overflow while forming a cut, a bound
/// or a row leaves that atom, bound term or loop as it was; a solver error
/// counts as "not implied".
///
/// Returns the number of loops split.
pub fn split_loops(f: &mut Function) -> usize {
    let budget = SPLIT_GROWTH.saturating_mul(size_stmts(&f.body));
    let mut sp = Splitter {
        facts: Facts::of_context(f),
        scope: Vec::new(),
        budget,
        count: 0,
    };
    f.body = rewrite_stmts(&mut sp, std::mem::take(&mut f.body));
    sp.count
}

/// [`nonempty_cond`]) that mention a loop variable, or `None` when there
/// are none (see [`split_loops`]: they keep the JIT's interval analysis as
/// precise as the guards it replaces).
pub(super) fn piece_guard(lo: &Bound, hi: &Bound) -> Option<Expr> {
    let Guard::Cond(c) = nonempty_cond(lo, hi) else {
        return None;
    };
    let kept: Vec<Expr> = conjuncts(&c)
        .into_iter()
        .filter(|x| {
            let mut loops = false;
            let mut x = (*x).clone();
            let _ = affines_expr(&mut x, &mut |a| {
                loops |= !a.is_param_only();
                Some(())
            });
            loops
        })
        .cloned()
        .collect();
    (!kept.is_empty()).then(|| Expr::and_all(kept))
}

pub(super) struct Splitter {
    /// Facts that hold at the current statement.
    facts: Facts,
    /// The loop variables bound around the current statement.
    scope: Vec<LoopVar>,
    /// Nodes the pass may still add.
    budget: usize,
    /// Loops split.
    count: usize,
}

impl StmtRewrite for Splitter {
    fn on_for(&mut self, l: ForLoop, out: &mut Vec<Stmt>) {
        let Some(pieces) = self.try_split(&l) else {
            out.push(self.descend(l));
            return;
        };
        let several = pieces.len() > 1;
        if several {
            self.count += 1;
        }
        for (lower, upper, body) in pieces {
            if body.is_empty() {
                continue; // a piece that does nothing
            }
            let guard = if several {
                piece_guard(&lower, &upper)
            } else {
                None
            };
            let piece = self.descend(ForLoop {
                var: l.var,
                parallel: false,
                lower,
                upper,
                body,
            });
            out.push(match guard {
                Some(cond) => Stmt::If {
                    cond,
                    then: vec![piece],
                    els: Vec::new(),
                },
                None => piece,
            });
        }
    }

    /// A binding is not split; the loops of its body are, with its
    /// variable in scope and its bounds and guard among the facts (they
    /// hold wherever the body runs).
    fn on_bind(&mut self, b: Binding, out: &mut Vec<Stmt>) {
        let saved = self.facts.push_loop(b.var, &b.lower, &b.upper);
        self.facts.push_conds(&b.guard);
        self.scope.push(b.var);
        let b = b.map_body(|x| rewrite_stmts(self, x));
        self.scope.pop();
        self.facts.rows.truncate(saved);
        out.push(Stmt::from(b));
    }

    fn on_if(&mut self, cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>, out: &mut Vec<Stmt>) {
        let saved = self.facts.push_conds(&cond);
        let then = rewrite_stmts(self, then);
        self.facts.rows.truncate(saved);
        let els = rewrite_stmts(self, els);
        out.push(Stmt::If { cond, then, els });
    }
}

impl Splitter {
    /// The loop, with the loops of its body processed (its bounds among
    /// the facts).
    fn descend(&mut self, l: ForLoop) -> Stmt {
        let saved = self.facts.push_loop(l.var, &l.lower, &l.upper);
        self.scope.push(l.var);
        let l = l.map_body(|b| rewrite_stmts(self, b));
        self.scope.pop();
        self.facts.rows.truncate(saved);
        Stmt::For(l)
    }

    /// The row of `d·v − e` (`>= 0` is the cut); `None` on overflow.
    fn cut_row(&self, v: LoopVar, c: &Cut) -> Option<Vec<i64>> {
        let dv = scale_affine(&Affine::var(v), c.d)?;
        self.facts.row(&sub_affine(&dv, &c.e)?)
    }

    /// Whether the facts imply `d·v >= e` (`Some(true)`), its complement
    /// `d·v <= e − 1` (`Some(false)`), or neither (`None`).
    fn cut_side(&self, v: LoopVar, c: &Cut) -> Option<bool> {
        let row = self.cut_row(v, c)?;
        if self.facts.implies(&[], &row) {
            return Some(true);
        }
        let mut neg = neg_row(&row)?;
        let last = neg.last_mut()?;
        *last = last.checked_sub(1)?;
        self.facts.implies(&[], &neg).then_some(false)
    }

    /// Appends the pieces of `[lo, hi]` cut by `cuts` (in order; see
    /// [`split_loops`]) to `out`; `None` on overflow.
    fn pieces(
        &mut self,
        v: LoopVar,
        lo: Bound,
        hi: Bound,
        cuts: &[Cut],
        out: &mut Vec<(Bound, Bound)>,
    ) -> Option<()> {
        let saved = self.facts.push_loop(v, &lo, &hi);
        if self.facts.infeasible(&[]) {
            self.facts.rows.truncate(saved);
            return Some(());
        }
        let Some((c, rest)) = cuts.split_first() else {
            self.facts.rows.truncate(saved);
            out.push((lo, hi));
            return Some(());
        };
        let side = self.cut_side(v, c);
        self.facts.rows.truncate(saved);
        if side.is_some() {
            return self.pieces(v, lo, hi, rest, out);
        }
        let below = hi.clone().and(c.e.clone().offset(-1)?, c.d);
        let above = lo.clone().and(c.e.clone(), c.d);
        self.pieces(v, lo, below, rest, out)?;
        self.pieces(v, above, hi, rest, out)
    }

    /// `b` without the terms implied by another of its terms under the
    /// facts (a lower term `⌈e_k/d_k⌉` goes when some kept `⌈e_m/d_m⌉`
    /// satisfies `d_k·e_m − d_m·e_k >= 0`; an upper term when
    /// `d_m·e_k − d_k·e_m >= 0`), and without duplicates.
    fn simplify_bound(&self, b: Bound, lower: bool) -> Bound {
        let mut terms: Vec<BoundTerm> = Vec::new();
        for t in b.terms {
            let key = canonical(&t.expr);
            if key.is_some()
                && terms
                    .iter()
                    .any(|u| u.div == t.div && canonical(&u.expr) == key)
            {
                continue;
            }
            terms.push(t);
        }
        let mut keep = vec![true; terms.len()];
        for k in 0..terms.len() {
            for m in 0..terms.len() {
                if m == k || !keep[m] {
                    continue;
                }
                let (tk, tm) = (&terms[k], &terms[m]);
                let diff = (|| {
                    let a = scale_affine(&tm.expr, tk.div)?;
                    let b = scale_affine(&tk.expr, tm.div)?;
                    if lower {
                        sub_affine(&a, &b)
                    } else {
                        sub_affine(&b, &a)
                    }
                })();
                let implied = diff
                    .and_then(|d| self.facts.row(&d))
                    .is_some_and(|r| self.facts.implies(&[], &r));
                if implied {
                    keep[k] = false;
                    break;
                }
            }
        }
        Bound {
            terms: terms
                .into_iter()
                .zip(keep)
                .filter_map(|(t, k)| k.then_some(t))
                .collect(),
        }
    }

    /// Does the piece `[lo, hi]` of the loop over `v` provably run at most
    /// [`SPLIT_SHORT_TRIPS`] iterations (see [`split_loops`])?
    fn short(&mut self, v: LoopVar, lo: &Bound, hi: &Bound) -> bool {
        let saved = self.facts.push_loop(v, lo, hi);
        let mut short = false;
        'pairs: for l in &lo.terms {
            for u in &hi.terms {
                // (T − 1)·d_l·d_u − (d_l·u − d_u·l) >= 0.
                let row = (|| {
                    let span = sub_affine(
                        &scale_affine(&u.expr, l.div)?,
                        &scale_affine(&l.expr, u.div)?,
                    )?;
                    let room = (SPLIT_SHORT_TRIPS - 1)
                        .checked_mul(l.div)?
                        .checked_mul(u.div)?;
                    self.facts.row(&scale_affine(&span, -1)?.offset(room)?)
                })();
                if row.is_some_and(|r| self.facts.implies(&[], &r)) {
                    short = true;
                    break 'pairs;
                }
            }
        }
        self.facts.rows.truncate(saved);
        short
    }

    /// `[lower, upper]` as the points below the one piece that is not
    /// short, that piece, and the points above it, when every other piece
    /// is short and that piece's bounds have one term each (see
    /// [`split_loops`]); `None` otherwise or on overflow. Pieces without
    /// a point under the facts are left out.
    fn around_long(
        &mut self,
        v: LoopVar,
        lower: &Bound,
        upper: &Bound,
        pieces: &[(Bound, Bound)],
    ) -> Option<Vec<(Bound, Bound)>> {
        let mut long = None;
        for (k, (lo, hi)) in pieces.iter().enumerate() {
            if !self.short(v, lo, hi) {
                if long.is_some() {
                    return None;
                }
                long = Some(k);
            }
        }
        let (llo, lhi) = &pieces[long?];
        let ([a], [b]) = (llo.terms.as_slice(), lhi.terms.as_slice()) else {
            return None;
        };
        let below = upper.clone().and(a.expr.clone().offset(-1)?, a.div);
        let above = lower
            .clone()
            .and(a.expr.clone(), a.div)
            .and(b.expr.clone().offset(1)?, b.div);
        let mut out = Vec::with_capacity(3);
        for (lo, hi) in [
            (lower.clone(), below),
            (llo.clone(), lhi.clone()),
            (above, upper.clone()),
        ] {
            let saved = self.facts.push_loop(v, &lo, &hi);
            let empty = self.facts.infeasible(&[]);
            self.facts.rows.truncate(saved);
            if !empty {
                out.push((
                    self.simplify_bound(lo, true),
                    self.simplify_bound(hi, false),
                ));
            }
        }
        Some(out)
    }

    /// The pieces of the loop (one or more) with their folded bodies,
    /// when splitting it is allowed and decides at least one atom (see
    /// [`split_loops`]).
    fn try_split(&mut self, l: &ForLoop) -> Option<Vec<(Bound, Bound, Vec<Stmt>)>> {
        let (var, lower, upper, body) = (l.var, &l.lower, &l.upper, &l.body);
        if var.0 >= self.facts.nv {
            return None;
        }
        let size = size_stmts(body);
        if size > SPLIT_MAX_BODY {
            return None;
        }
        let mut groups: Vec<Vec<Cut>> = Vec::new();
        visit_exprs(body, &mut |e| {
            if let Some(cs) = cuts_of(e, var, &self.scope) {
                groups.push(cs);
            }
        });
        if groups.is_empty() {
            return None;
        }
        let saved = self.facts.push_loop(var, lower, upper);
        let mut chosen: Vec<Cut> = Vec::new();
        for g in groups {
            let mut new: Vec<Cut> = Vec::new();
            for c in g {
                if chosen.contains(&c) || new.contains(&c) {
                    continue;
                }
                if self.cut_side(var, &c).is_none() {
                    new.push(c);
                }
            }
            if !new.is_empty() && chosen.len() + new.len() <= SPLIT_MAX_CUTS {
                chosen.extend(new);
            }
        }
        self.facts.rows.truncate(saved);
        let mut pieces = Vec::new();
        self.pieces(var, lower.clone(), upper.clone(), &chosen, &mut pieces)?;
        if pieces.is_empty() {
            return None;
        }
        let mut pieces: Vec<(Bound, Bound)> = pieces
            .into_iter()
            .map(|(lo, hi)| {
                (
                    self.simplify_bound(lo, true),
                    self.simplify_bound(hi, false),
                )
            })
            .collect();
        if pieces.len() > 3 {
            if let Some(three) = self.around_long(var, lower, upper, &pieces) {
                pieces = three;
            }
        }
        let mut inner = self.scope.clone();
        inner.push(var);
        let mut out = Vec::with_capacity(pieces.len());
        let mut decided = 0;
        let mut new_size = 0usize;
        for (lo, hi) in pieces {
            let saved = self.facts.push_loop(var, &lo, &hi);
            let b = fold_stmts(&self.facts, body.to_vec(), var, &inner, &mut decided);
            self.facts.rows.truncate(saved);
            new_size = new_size.saturating_add(size_stmts(&b) + lo.terms.len() + hi.terms.len());
            out.push((lo, hi, b));
        }
        if decided == 0 {
            return None;
        }
        let old_size = size + lower.terms.len() + upper.terms.len();
        let growth = new_size.saturating_sub(old_size);
        if growth > self.budget {
            return None;
        }
        self.budget -= growth;
        Some(out)
    }
}
