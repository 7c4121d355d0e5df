//! Run-time interval analysis of a loop program for given parameter
//! values: proves that no affine evaluation overflows `i64` and decides
//! whether every affine index is inside its array's box: every index of an
//! affine access, and the affine indices of a data-dependent access (whose
//! other indices compiled code checks at run time). An index `mod(a, m)`
//! (`a` affine, `m > 0` constant: an array stored modulo `m`) counts as
//! affine here, with values in `0 .. m`.
//!
//! Owns: the soundness argument of unchecked JIT code. Compiled code
//! evaluates affine expressions, loop bounds and domain predicates with
//! plain (wrapping) `i64` instructions and does not bounds-check affine
//! accesses; both are safe only if this analysis succeeds for the
//! parameters of the run (otherwise `jit::mod` refuses the run or uses the
//! checked variant).
//!
//! Must not know about: Cranelift.
//!
//! Method: every loop variable gets the interval `[max_k lo_k, min_k hi_k]`
//! from the intervals of its bound terms (a sound over-approximation of
//! the values it takes: the lower bound is at least `max_k lo_k` and the
//! upper bound at most `min_k hi_k`); loops whose interval is empty never
//! run and are skipped. A `Bind` variable gets the interval of its bounds
//! too (the compiled code checks `lower <= value <= upper` before the
//! body runs). Guards are ignored or only narrow intervals (sound: more
//! points, not fewer). Arithmetic is in `i128`, and every intermediate value that the
//! compiled code computes must lie in `i64`. An access the intervals do
//! not prove in bounds gets an exact proof from the affine facts of its
//! enclosing loops and guards (`facts`: integer emptiness, as precise as
//! the loop bounds), which skewed schedules need.
//!
//! The walk also bounds the number of executions of each step of a count
//! array (`counts`: the product of the enclosing loops' trip counts); when
//! some count array's bound exceeds `counts::LIMIT`, the run needs the
//! checked variant (the fast one adds to count arrays without overflow
//! tests).

use crate::codegen::loop_ast::{Accumulation, Affine, Bound, Expr, Function, Stmt, Sym};

mod counts;
mod facts;
pub(crate) use counts::{small as small_step, Counts};
use facts::Facts;

/// An integer interval `[lo, hi]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Iv {
    lo: i128,
    hi: i128,
}

const MIN: i128 = i64::MIN as i128;
const MAX: i128 = i64::MAX as i128;

fn fits(v: Iv) -> bool {
    v.lo >= MIN && v.hi <= MAX
}

/// Outcome of the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No overflow; every affine access is proven inside its box.
    Safe,
    /// No overflow; some affine access could not be proven in bounds.
    NeedsChecks,
    /// Some affine evaluation may overflow `i64`.
    MayOverflow,
}

/// Array boxes for the run: per array, per dimension `(lo, extent)`.
pub(crate) type Boxes = Vec<Vec<(i64, i64)>>;

struct An<'a> {
    f: &'a Function,
    params: &'a [i64],
    boxes: &'a Boxes,
    env: Vec<Option<Iv>>,
    /// The affine facts in scope, for accesses the intervals cannot
    /// prove in bounds (`facts`).
    facts: Facts<'a>,
    overflow: bool,
    unproven: bool,
    /// The count arrays (`counts`), the product of the trip counts of the
    /// enclosing loops, and per array `Σ m_s · runs(s)` over its steps.
    counts: &'a Counts,
    trips: i128,
    growth: Vec<i128>,
}

/// Analyses `f` for parameter values `params` and array boxes `boxes`.
/// The analysis takes no fact from `cond` as the condition of a select
/// (no affine comparison in it, negated or not): the accesses of the
/// select's branches are then proven, or not, from the facts of the
/// select's own point, so the fast variant may evaluate an affine load of
/// either branch whichever way the condition goes
/// (`lower::expr::Lower::expr` on `Expr::Select`).
pub(crate) fn gives_no_facts(cond: &Expr) -> bool {
    facts::comparisons(cond).is_empty() && facts::negated_comparisons(cond).is_empty()
}

pub(crate) fn analyse(f: &Function, counts: &Counts, params: &[i64], boxes: &Boxes) -> Verdict {
    let mut an = An {
        f,
        params,
        boxes,
        env: vec![None; f.loop_vars.len()],
        facts: Facts::new(params, f.loop_vars.len()),
        overflow: false,
        unproven: false,
        counts,
        trips: 1,
        growth: vec![0; f.arrays.len()],
    };
    an.domains();
    an.stmts(&f.body);
    // The fast variant adds to count arrays without overflow tests.
    if !an.counts.fit(&an.growth) {
        an.unproven = true;
    }
    if an.overflow {
        Verdict::MayOverflow
    } else if an.unproven {
        Verdict::NeedsChecks
    } else {
        Verdict::Safe
    }
}

impl An<'_> {
    /// Domain predicates are evaluated on points inside the box: their
    /// terms must fit in `i64` there.
    fn domains(&mut self) {
        for (a, arr) in self.f.arrays.iter().enumerate() {
            let Some(dom) = &arr.domain else { continue };
            let np = dom.n_params();
            for c in dom.pieces().iter().flat_map(|p| p.constraints()) {
                // Rows are `[params, dims, 1]` over the function's
                // parameters and the array's dimensions (checked).
                let (par, rest) = c.row.split_at(np.min(c.row.len()));
                let (&constant, idx) = rest.split_last().unwrap_or((&0, &[]));
                let mut acc = Iv {
                    lo: i128::from(constant),
                    hi: i128::from(constant),
                };
                let mut terms = Vec::new();
                for (k, &co) in idx.iter().enumerate() {
                    let (lo, ext) = self.boxes[a][k];
                    let x = Iv {
                        lo: i128::from(lo),
                        hi: i128::from(lo) + i128::from(ext) - 1, // both i64: no i128 overflow
                    };
                    terms.push((co, x));
                }
                for (p, &co) in par.iter().enumerate() {
                    let v = i128::from(self.params[p]);
                    terms.push((co, Iv { lo: v, hi: v }));
                }
                for (co, x) in terms {
                    if co == 0 {
                        continue;
                    }
                    let t = scale(x, co);
                    acc = add(acc, t);
                    self.need(t);
                    self.need(acc);
                }
            }
        }
    }

    fn need(&mut self, v: Iv) {
        if !fits(v) {
            self.overflow = true;
        }
    }

    fn affine(&mut self, e: &Affine) -> Iv {
        let c = i128::from(e.constant);
        let mut acc = Iv { lo: c, hi: c };
        for &(s, co) in &e.terms {
            if co == 0 {
                continue;
            }
            let x = match s {
                Sym::Param(p) => {
                    let v = i128::from(self.params[p]);
                    Iv { lo: v, hi: v }
                }
                // `Function::check` puts every use inside its loop, whose
                // interval is set; an unset one means the loop is skipped.
                Sym::Loop(v) => self.env[v.0].unwrap_or(Iv { lo: 0, hi: 0 }),
            };
            let t = scale(x, co);
            self.need(t);
            acc = add(acc, t);
            self.need(acc);
        }
        acc
    }

    fn bound(&mut self, b: &Bound, lower: bool) -> Option<Iv> {
        let mut acc: Option<Iv> = None;
        for t in &b.terms {
            let e = self.affine(&t.expr);
            let d = i128::from(t.div);
            // The compiled code adds `±(d − 1)` before dividing.
            let shifted = if lower {
                Iv {
                    lo: e.lo,
                    hi: e.hi.saturating_add(d - 1),
                }
            } else {
                Iv {
                    lo: e.lo.saturating_sub(d - 1),
                    hi: e.hi,
                }
            };
            self.need(shifted);
            let v = if lower {
                Iv {
                    lo: ceil_div(e.lo, d),
                    hi: ceil_div(e.hi, d),
                }
            } else {
                Iv {
                    lo: floor_div(e.lo, d),
                    hi: floor_div(e.hi, d),
                }
            };
            acc = Some(match acc {
                None => v,
                Some(a) if lower => Iv {
                    lo: a.lo.max(v.lo),
                    hi: a.hi.max(v.hi),
                },
                Some(a) => Iv {
                    lo: a.lo.min(v.lo),
                    hi: a.hi.min(v.hi),
                },
            });
        }
        acc
    }

    /// The interval of a variable ranging over `lower ..= upper` (from the
    /// smallest lower bound to the largest upper bound) and the interval
    /// of the upper bound; `None` when a bound is unknown or the range is
    /// empty for every value of the outer variables (`min lower > max
    /// upper`).
    fn range(&mut self, lower: &Bound, upper: &Bound) -> Option<(Iv, Iv)> {
        let (Some(l), Some(u)) = (self.bound(lower, true), self.bound(upper, false)) else {
            return None;
        };
        (l.lo <= u.hi).then_some((Iv { lo: l.lo, hi: u.hi }, u))
    }

    fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    fn access(&mut self, array: usize, index: &[Expr]) {
        for (k, e) in index.iter().enumerate() {
            let iv = match e {
                Expr::Aff(a) => self.affine(a),
                Expr::Int(v) => Iv {
                    lo: i128::from(*v),
                    hi: i128::from(*v),
                },
                // `mod(a, m)`, `m > 0`: `a` is evaluated (and must not
                // overflow), the value is in `0 .. m`.
                other => match other.modular() {
                    Some((a, m)) => {
                        self.expr(a);
                        Iv {
                            lo: 0,
                            hi: i128::from(m) - 1,
                        }
                    }
                    None => {
                        self.expr(other);
                        continue;
                    }
                },
            };
            let (lo, ext) = self.boxes[array][k];
            let (lo, hi) = (i128::from(lo), i128::from(lo) + i128::from(ext) - 1);
            if iv.lo < lo || iv.hi > hi {
                // The intervals lose correlations between loop variables:
                // try the exact proof from the facts.
                let proven = match e {
                    Expr::Aff(a) => self.facts.prove_within(a, lo, hi),
                    _ => false,
                };
                if !proven {
                    self.unproven = true;
                }
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::For(l) => {
                let Some((range, hi)) = self.range(&l.lower, &l.upper) else {
                    return; // never runs, or unknown bounds
                };
                // The increment `i + 1` after the last iteration, and the
                // bound `hi − 3` of an unrolled main loop.
                if hi.hi >= MAX || hi.lo.saturating_sub(3) < MIN {
                    self.overflow = true;
                }
                let saved = self.env[l.var.0];
                self.env[l.var.0] = Some(range);
                let mark = self.facts.mark();
                self.facts.range(l.var.0, &l.lower, &l.upper);
                let outer = self.trips;
                let n = range.hi.saturating_sub(range.lo).saturating_add(1).max(0);
                self.trips = outer.saturating_mul(n);
                self.stmts(&l.body);
                self.trips = outer;
                self.facts.restore(mark);
                self.env[l.var.0] = saved;
            }
            Stmt::If { cond, then, els } => {
                self.expr(cond);
                let saved = self.env.clone();
                if self.refine(cond) {
                    let mark = self.facts.mark();
                    self.facts.guard(cond);
                    self.stmts(then);
                    self.facts.restore(mark);
                }
                self.env = saved;
                let mark = self.facts.mark();
                self.facts.negated_guard(cond);
                self.stmts(els);
                self.facts.restore(mark);
            }
            Stmt::Assign {
                array,
                index,
                value,
            }
            | Stmt::Accumulate(Accumulation {
                array,
                index,
                value,
                ..
            }) => {
                self.expr(value);
                self.access(*array, index);
                if let Some((a, m)) = counts::step(s) {
                    if self.counts.contains(a) {
                        let g = &mut self.growth[a];
                        *g = g.saturating_add(m.saturating_mul(self.trips));
                    }
                }
            }
            Stmt::SetLocal { value, .. } => self.expr(value),
            Stmt::Block(b) => self.stmts(b),
            Stmt::Bind(b) => {
                // Like a `for` over `[lower, upper]` whose body is
                // `if (guard) { value; body }`: the compiled code runs the
                // body only with `lower <= var <= upper` (checked at run
                // time), so inside it `var` lies in the loop interval.
                let Some((range, _)) = self.range(&b.lower, &b.upper) else {
                    return; // never runs, or unknown bounds
                };
                self.expr(&b.guard);
                let saved = self.env.clone();
                if self.refine(&b.guard) {
                    self.expr(&b.value);
                    self.env[b.var.0] = Some(range);
                    let mark = self.facts.mark();
                    self.facts.guard(&b.guard);
                    self.facts.range(b.var.0, &b.lower, &b.upper);
                    self.stmts(&b.body);
                    self.facts.restore(mark);
                }
                self.env = saved;
            }
        }
    }

    /// Narrows the loop-variable intervals by a guard that holds: a
    /// conjunction of comparisons of affine expressions. For a constraint
    /// `c·v + r <= 0` with `r` the other terms, `c·v <= −min(r)`, so
    /// `v <= ⌊−min(r)/c⌋` for `c > 0` and `v >= ⌈−min(r)/c⌉` for `c < 0`.
    /// Returns false when the guard cannot hold (a variable's interval
    /// becomes empty). Other conditions are ignored (sound: no narrowing).
    fn refine(&mut self, cond: &Expr) -> bool {
        for cmp in facts::comparisons(cond) {
            // `Σ c·s + k >= 0` is `Σ (−c)·s + (−k) <= 0`.
            let t: Vec<(Sym, i128)> = cmp.terms.iter().map(|&(s, c)| (s, -c)).collect();
            let kk = -cmp.constant;
            for (idx, &(s, c)) in t.iter().enumerate() {
                let Sym::Loop(v) = s else { continue };
                let Some(cur) = self.env[v.0] else { continue };
                // min of the other terms plus the constant.
                let mut rmin = kk;
                let mut known = true;
                for (jdx, &(s2, c2)) in t.iter().enumerate() {
                    if jdx == idx {
                        continue;
                    }
                    let iv = match s2 {
                        Sym::Param(p) => {
                            let q = i128::from(self.params[p]);
                            Iv { lo: q, hi: q }
                        }
                        Sym::Loop(w) => match self.env[w.0] {
                            Some(iv) => iv,
                            None => {
                                known = false;
                                break;
                            }
                        },
                    };
                    let lo = iv.lo.saturating_mul(c2).min(iv.hi.saturating_mul(c2));
                    rmin = rmin.saturating_add(lo);
                }
                if !known {
                    continue;
                }
                let rhs = rmin.saturating_neg();
                let new = if c > 0 {
                    Iv {
                        lo: cur.lo,
                        hi: cur.hi.min(floor_div(rhs, c)),
                    }
                } else {
                    Iv {
                        lo: cur.lo.max(ceil_div(rhs.saturating_neg(), -c)),
                        hi: cur.hi,
                    }
                };
                if new.lo > new.hi {
                    return false;
                }
                self.env[v.0] = Some(new);
            }
        }
        true
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Local(_) => {}
            Expr::Aff(a) => {
                self.affine(a);
            }
            Expr::Load { array, index } => self.access(*array, index),
            Expr::Unary(_, a) | Expr::Cast(_, a) => self.expr(a),
            Expr::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            Expr::Select(c, a, b) => {
                // A select whose branches access memory is compiled with
                // branches (`lower::expr::speculable`: loads are not
                // speculated), so each branch's accesses happen only when
                // its guard holds; except, in the fast variant, affine
                // loads of a select whose condition gives no facts
                // ([`gives_no_facts`]): the facts of the branches are then
                // those of the select's point.
                self.expr(c);
                let mark = self.facts.mark();
                self.facts.guard(c);
                self.expr(a);
                self.facts.restore(mark);
                self.facts.negated_guard(c);
                self.expr(b);
                self.facts.restore(mark);
            }
            Expr::Math(_, args) => args.iter().for_each(|a| self.expr(a)),
            Expr::Selection(s) => {
                self.expr(&s.value);
                self.expr(&s.lower);
                self.expr(&s.upper);
            }
            Expr::Random(r) => {
                r.args.iter().for_each(|a| self.expr(a));
                self.expr(&r.seed);
                r.point.iter().for_each(|a| self.expr(a));
            }
            Expr::External { args, .. } => args.iter().for_each(|a| self.expr(a)),
            Expr::Categorical(c) => {
                self.expr(&c.seed);
                c.point.iter().for_each(|a| self.expr(a));
                // Like a `For` over `var` whose body is `if cond { weight }`.
                let Some((range, hi)) = self.range(&c.lower, &c.upper) else {
                    return; // no point (the weights are never evaluated), or unknown bounds
                };
                // The increment `k + 1` after the last point.
                if hi.hi >= MAX {
                    self.overflow = true;
                }
                let saved = self.env.clone();
                self.env[c.var.0] = Some(range);
                let mark = self.facts.mark();
                self.facts.range(c.var.0, &c.lower, &c.upper);
                self.expr(&c.cond);
                if self.refine(&c.cond) {
                    self.facts.guard(&c.cond);
                    self.expr(&c.weight);
                }
                self.facts.restore(mark);
                self.env = saved;
            }
        }
    }
}

fn scale(x: Iv, c: i64) -> Iv {
    let c = i128::from(c);
    let (a, b) = (x.lo.saturating_mul(c), x.hi.saturating_mul(c));
    Iv {
        lo: a.min(b),
        hi: a.max(b),
    }
}

fn add(a: Iv, b: Iv) -> Iv {
    Iv {
        lo: a.lo.saturating_add(b.lo),
        hi: a.hi.saturating_add(b.hi),
    }
}

fn floor_div(a: i128, d: i128) -> i128 {
    let q = a / d;
    if a % d != 0 && a < 0 {
        q - 1
    } else {
        q
    }
}

fn ceil_div(a: i128, d: i128) -> i128 {
    let q = a / d;
    if a % d != 0 && a > 0 {
        q + 1
    } else {
        q
    }
}
