//! Parallel loops (issue 16): which loops of a loop program may run their
//! iterations concurrently ([`is_parallel`], the proof), the pass that
//! marks the outermost such loops ([`mark_parallel`]), and the estimate
//! of a loop's work that decides at run time whether running it on
//! several threads pays ([`work`]).
//!
//! Must not know about: schedules, Cranelift, threads. The schedule's
//! coincidence flags are not trusted here: storage mapping (arrays
//! contracted in place or modulo a window), register accumulators and
//! sparse updates all create memory-based dependences after scheduling,
//! and a coincident dimension of the augmented program may still
//! accumulate into one cell from several iterations. The decision is made
//! on the final loop program.
//!
//! # The rule (a sufficient condition, checked syntactically)
//! Let `L = for v in [lo, hi] body`. Its iterations are independent —
//! every order, and every interleaving of them on several threads, gives
//! the same memory and the same values as the sequential loop — when
//! 1. for every array `A` that `body` writes (an assignment or an
//!    accumulation, at any depth), some dimension `d` is *pinned*: every
//!    access of `A` in `body` (reads included) has at position `d` one and
//!    the same affine index `c·v + g` with `c ≠ 0` and `g` an affine
//!    function of the parameters and of loop variables bound outside `L`
//!    (so `g` is constant while `L` runs). Then a cell of `A` that
//!    iteration `v` touches has `d`-th coordinate `c·v + g`, which differs
//!    for `v ≠ v'`: no cell of a written array is touched by two
//!    iterations (no flow, anti or output dependence through memory). The
//!    other coordinates are unrestricted (data-dependent ones included:
//!    they are bounds-checked, and the pinned coordinate alone separates
//!    the iterations). A written array without dimensions (a scalar) has
//!    no pinned dimension: refused.
//! 2. every local that `body` reads is written earlier in the same
//!    iteration on every path (must-definition, with an inner loop's body
//!    possibly not running and an `if` defining what both branches
//!    define): no value flows between iterations through a local, and the
//!    iteration does not depend on the local's value before the loop;
//! 3. no local that `body` writes is read anywhere outside `L` (so its
//!    value after the loop does not matter);
//! 4. `body` calls no external function (its implementation may have
//!    effects or not be thread-safe). Counter-based draws are allowed:
//!    they are pure functions of `(seed, site, point)`.
//!
//! Reads of arrays that `body` does not write are unrestricted. A `Bind`
//! and a categorical draw's variable count as variables bound inside `L`.

use super::{
    Accumulation, ArrayId, Bound, CategoricalDraw, Expr, ForLoop, Function, LocalId, LoopVar, Stmt,
    Sym,
};
use std::collections::{BTreeMap, BTreeSet};

/// Why a loop may not run in parallel.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("it calls an external function")]
    External,
    #[error("it writes the scalar `{0}`")]
    ScalarWrite(String),
    #[error("no dimension of `{0}` is indexed by the loop variable alone in every access")]
    NotPinned(String),
    #[error("local `{0}` is read before it is written in an iteration")]
    CarriedLocal(String),
    #[error("local `{0}` is written in the loop and read outside it")]
    LocalLiveOut(String),
}

/// Loops whose trip count is known to stay below this are not marked
/// (their body is searched for a parallel loop instead).
pub const MIN_CONSTANT_TRIP: i64 = 8;

/// What the proof needs to know of the whole function.
struct Context {
    /// Per array: name and number of dimensions.
    arrays: Vec<(String, usize)>,
    /// Per local: name and number of reads in the whole function.
    locals: Vec<(String, usize)>,
}

impl Context {
    fn of(f: &Function) -> Context {
        let mut reads = vec![0usize; f.locals.len()];
        count_local_reads(&f.body, &mut reads);
        Context {
            arrays: f
                .arrays
                .iter()
                .map(|a| (a.name.clone(), a.dims.len()))
                .collect(),
            locals: f
                .locals
                .iter()
                .zip(reads)
                .map(|(l, n)| (l.name.clone(), n))
                .collect(),
        }
    }

    fn array_name(&self, a: ArrayId) -> String {
        self.arrays
            .get(a)
            .map_or_else(|| format!("#{a}"), |x| x.0.clone())
    }

    fn local_name(&self, l: LocalId) -> String {
        self.locals
            .get(l)
            .map_or_else(|| format!("#{l}"), |x| x.0.clone())
    }
}

/// Whether the iterations of `l`, a loop of `f`, may run concurrently
/// (see the module comment for the rule and its proof); the first reason
/// found when not.
pub fn is_parallel(f: &Function, l: &ForLoop) -> Result<(), Refusal> {
    check(&Context::of(f), l)
}

fn check(cx: &Context, l: &ForLoop) -> Result<(), Refusal> {
    let mut acc = Accesses::default();
    acc.stmts(&l.body);
    if acc.external {
        return Err(Refusal::External);
    }
    // 1. A pinned dimension per written array.
    let written: BTreeSet<ArrayId> = acc
        .list
        .iter()
        .filter(|a| a.write)
        .map(|a| a.array)
        .collect();
    for &a in &written {
        let ndims = cx.arrays.get(a).map_or(0, |x| x.1);
        if ndims == 0 {
            return Err(Refusal::ScalarWrite(cx.array_name(a)));
        }
        let of_a: Vec<&Access> = acc.list.iter().filter(|x| x.array == a).collect();
        let pinned = (0..ndims).any(|d| {
            let mut first: Option<Norm> = None;
            of_a.iter().all(|x| {
                let Some(Expr::Aff(e)) = x.index.get(d) else {
                    return false;
                };
                let n = norm(e);
                let ok = n.0.get(&Sym::Loop(l.var)).is_some_and(|&c| c != 0)
                    && n.0
                        .keys()
                        .all(|s| !matches!(s, Sym::Loop(w) if acc.inner.contains(w)));
                ok && match &first {
                    None => {
                        first = Some(n);
                        true
                    }
                    Some(f0) => *f0 == n,
                }
            })
        });
        if !pinned {
            return Err(Refusal::NotPinned(cx.array_name(a)));
        }
    }
    // 2. Locals: written before read in every iteration.
    let mut defined = BTreeSet::new();
    must_define(&l.body, &mut defined).map_err(|x| Refusal::CarriedLocal(cx.local_name(x)))?;
    // 3. Locals written here are not read outside.
    let mut inside = vec![0usize; cx.locals.len()];
    count_local_reads(&l.body, &mut inside);
    let mut wrote = BTreeSet::new();
    locals_written(&l.body, &mut wrote);
    for x in wrote {
        let total = cx.locals.get(x).map_or(0, |y| y.1);
        if total > inside.get(x).copied().unwrap_or(0) {
            return Err(Refusal::LocalLiveOut(cx.local_name(x)));
        }
    }
    Ok(())
}

/// An affine expression normalized: coefficients per symbol (non-zero,
/// ordered) and the constant.
#[derive(Debug, PartialEq, Eq)]
struct Norm(BTreeMap<Sym, i128>, i128);

fn norm(e: &super::Affine) -> Norm {
    let mut m: BTreeMap<Sym, i128> = BTreeMap::new();
    for &(s, c) in &e.terms {
        *m.entry(s).or_insert(0) += i128::from(c);
    }
    m.retain(|_, c| *c != 0);
    Norm(m, i128::from(e.constant))
}

/// One array access of a loop body.
struct Access<'a> {
    array: ArrayId,
    index: &'a [Expr],
    write: bool,
}

/// The array accesses of a loop body, the loop variables it binds, and
/// whether it calls an external function.
#[derive(Default)]
struct Accesses<'a> {
    list: Vec<Access<'a>>,
    inner: BTreeSet<LoopVar>,
    external: bool,
}

impl<'a> Accesses<'a> {
    fn stmts(&mut self, body: &'a [Stmt]) {
        for s in body {
            match s {
                Stmt::For(l) => {
                    self.inner.insert(l.var);
                    self.stmts(&l.body);
                }
                Stmt::If { cond, then, els } => {
                    self.expr(cond);
                    self.stmts(then);
                    self.stmts(els);
                }
                Stmt::Assign {
                    array,
                    index,
                    value,
                } => {
                    self.access(*array, index, true);
                    self.expr(value);
                }
                Stmt::Accumulate(Accumulation {
                    array,
                    index,
                    value,
                    ..
                }) => {
                    self.access(*array, index, true);
                    self.expr(value);
                }
                Stmt::SetLocal { value, .. } => self.expr(value),
                Stmt::Block(b) => self.stmts(b),
                Stmt::Bind(b) => {
                    self.inner.insert(b.var);
                    self.expr(&b.guard);
                    self.expr(&b.value);
                    self.stmts(&b.body);
                }
            }
        }
    }

    fn access(&mut self, array: ArrayId, index: &'a [Expr], write: bool) {
        self.list.push(Access {
            array,
            index,
            write,
        });
        for e in index {
            self.expr(e);
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        match e {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => {}
            Expr::Load { array, index } => self.access(*array, index, false),
            Expr::Unary(_, a) | Expr::Cast(_, a) => self.expr(a),
            Expr::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            Expr::Select(c, a, b) => {
                self.expr(c);
                self.expr(a);
                self.expr(b);
            }
            Expr::Math(_, args) => args.iter().for_each(|x| self.expr(x)),
            Expr::Random(r) => {
                r.args.iter().for_each(|x| self.expr(x));
                self.expr(&r.seed);
                r.point.iter().for_each(|x| self.expr(x));
            }
            Expr::Categorical(c) => {
                self.inner.insert(c.var);
                self.expr(&c.cond);
                self.expr(&c.weight);
                self.expr(&c.seed);
                c.point.iter().for_each(|x| self.expr(x));
            }
            Expr::External { args, .. } => {
                self.external = true;
                args.iter().for_each(|x| self.expr(x));
            }
            Expr::Selection(s) => {
                self.expr(&s.value);
                self.expr(&s.lower);
                self.expr(&s.upper);
            }
        }
    }
}

/// Calls `g` on every local an expression reads.
fn expr_locals(e: &Expr, g: &mut dyn FnMut(LocalId)) {
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) => {}
        Expr::Local(l) => g(*l),
        Expr::Load { index, .. } => index.iter().for_each(|x| expr_locals(x, g)),
        Expr::Unary(_, a) | Expr::Cast(_, a) => expr_locals(a, g),
        Expr::Binary(_, a, b) => {
            expr_locals(a, g);
            expr_locals(b, g);
        }
        Expr::Select(c, a, b) => {
            expr_locals(c, g);
            expr_locals(a, g);
            expr_locals(b, g);
        }
        Expr::Math(_, args) | Expr::External { args, .. } => {
            args.iter().for_each(|x| expr_locals(x, g))
        }
        Expr::Selection(s) => {
            [&s.value, &s.lower, &s.upper]
                .into_iter()
                .for_each(|x| expr_locals(x, g));
        }
        Expr::Random(r) => {
            r.args
                .iter()
                .chain(std::iter::once(&r.seed))
                .chain(&r.point)
                .for_each(|x| expr_locals(x, g));
        }
        Expr::Categorical(c) => {
            let CategoricalDraw {
                cond,
                weight,
                seed,
                point,
                ..
            } = &**c;
            [cond, weight, seed]
                .into_iter()
                .chain(point)
                .for_each(|x| expr_locals(x, g));
        }
    }
}

/// The expressions a statement evaluates itself (not those of nested
/// statements).
fn own_exprs(s: &Stmt) -> Vec<&Expr> {
    match s {
        Stmt::For(_) | Stmt::Block(_) => Vec::new(),
        Stmt::If { cond, .. } => vec![cond],
        Stmt::Assign { index, value, .. } | Stmt::Accumulate(Accumulation { index, value, .. }) => {
            index.iter().chain(std::iter::once(value)).collect()
        }
        Stmt::SetLocal { value, .. } => vec![value],
        Stmt::Bind(b) => vec![&b.guard, &b.value],
    }
}

fn count_local_reads(body: &[Stmt], n: &mut [usize]) {
    for s in body {
        for e in own_exprs(s) {
            expr_locals(e, &mut |l| {
                if let Some(c) = n.get_mut(l) {
                    *c += 1;
                }
            });
        }
        match s {
            Stmt::For(l) => count_local_reads(&l.body, n),
            Stmt::If { then, els, .. } => {
                count_local_reads(then, n);
                count_local_reads(els, n);
            }
            Stmt::Block(b) => count_local_reads(b, n),
            Stmt::Bind(b) => count_local_reads(&b.body, n),
            _ => {}
        }
    }
}

/// Adds to `out` the locals `body` assigns (`SetLocal`), nested
/// statements included.
pub fn locals_written(body: &[Stmt], out: &mut BTreeSet<LocalId>) {
    for s in body {
        match s {
            Stmt::SetLocal { local, .. } => {
                out.insert(*local);
            }
            Stmt::For(l) => locals_written(&l.body, out),
            Stmt::If { then, els, .. } => {
                locals_written(then, out);
                locals_written(els, out);
            }
            Stmt::Block(b) => locals_written(b, out),
            Stmt::Bind(b) => locals_written(&b.body, out),
            _ => {}
        }
    }
}

/// Must-definition: walks `body` in program order with `defined` the
/// locals written on every path so far; the first local read while not
/// defined is the error. A loop's or a binding's body may not run, so it
/// defines nothing after it (its reads are checked with what is defined
/// before it plus its own earlier writes); an `if` defines what both
/// branches define.
fn must_define(body: &[Stmt], defined: &mut BTreeSet<LocalId>) -> Result<(), LocalId> {
    for s in body {
        let mut bad = None;
        for e in own_exprs(s) {
            expr_locals(e, &mut |l| {
                if bad.is_none() && !defined.contains(&l) {
                    bad = Some(l);
                }
            });
        }
        if let Some(l) = bad {
            return Err(l);
        }
        match s {
            Stmt::SetLocal { local, .. } => {
                defined.insert(*local);
            }
            Stmt::For(l) => must_define(&l.body, &mut defined.clone())?,
            Stmt::Bind(b) => must_define(&b.body, &mut defined.clone())?,
            Stmt::Block(b) => must_define(b, defined)?,
            Stmt::If { then, els, .. } => {
                let mut t = defined.clone();
                must_define(then, &mut t)?;
                let mut e = defined.clone();
                must_define(els, &mut e)?;
                *defined = t.intersection(&e).copied().collect();
            }
            Stmt::Assign { .. } | Stmt::Accumulate(_) => {}
        }
    }
    Ok(())
}

/// An upper bound on the trip count of a loop known without the
/// parameters, from a term `⌈e_l / d⌉` of the lower bound and a term
/// `⌊e_u / d⌋` of the upper bound with the same divisor `d` whose
/// expressions differ by a constant `c = e_u − e_l`: the loop runs at
/// most `max(0, ⌊c / d⌋ + 1)` times (e.g. `for (t = i; t <= min(N − 1,
/// i); t++)` at most once, and so does the wavefront's `for (t =
/// ceild(s − N, 4); t <= floord(s − N, 4); t++)`). With `e_l = d·q + r`
/// (`0 <= r < d`), `⌊(e_l + c) / d⌋ − ⌈e_l / d⌉ = ⌊(r + c) / d⌋ − [r > 0]`,
/// at most `⌊c / d⌋` (at `r = 0`). The smallest such bound over the pairs
/// of terms, `None` when there is no pair.
fn known_trip_bound(l: &ForLoop) -> Option<i64> {
    let mut best: Option<i64> = None;
    for lt in &l.lower.terms {
        for ut in l.upper.terms.iter().filter(|t| t.div == lt.div) {
            let (nl, nu) = (norm(&lt.expr), norm(&ut.expr));
            if nl.0 == nu.0 && lt.div >= 1 {
                let trip = (nu.1 - nl.1).div_euclid(i128::from(lt.div)) + 1;
                let trip = i64::try_from(trip.max(0)).unwrap_or(i64::MAX);
                best = Some(best.map_or(trip, |b| b.min(trip)));
            }
        }
    }
    best
}

/// Marks the outermost loops of `f` that may run in parallel (see the
/// module comment) and are not known to be short (a trip count bounded
/// below [`MIN_CONSTANT_TRIP`] whatever the parameters: constant bounds,
/// or a lower and an upper bound term with one divisor a constant apart,
/// see `known_trip_bound`); the loops inside
/// a marked loop stay unmarked. Returns the number of loops marked.
pub fn mark_parallel(f: &mut Function) -> usize {
    let cx = Context::of(f);
    mark(&cx, &mut f.body)
}

fn mark(cx: &Context, body: &mut [Stmt]) -> usize {
    let mut n = 0;
    for s in body {
        match s {
            Stmt::For(l) => {
                let short = known_trip_bound(l).is_some_and(|t| t < MIN_CONSTANT_TRIP);
                if !short && check(cx, l).is_ok() {
                    l.parallel = true;
                    n += 1;
                } else {
                    n += mark(cx, &mut l.body);
                }
            }
            Stmt::If { then, els, .. } => {
                n += mark(cx, then);
                n += mark(cx, els);
            }
            Stmt::Block(b) => n += mark(cx, b),
            Stmt::Bind(b) => n += mark(cx, &mut b.body),
            Stmt::Assign { .. } | Stmt::Accumulate(_) | Stmt::SetLocal { .. } => {}
        }
    }
    n
}

/// The value of a bound with loop variables `loops` (by index; a missing
/// one is 0) and parameters `params`: `max_k ⌈e_k / d_k⌉` for a lower
/// bound, `min_k ⌊e_k / d_k⌋` for an upper bound; `None` on overflow.
pub fn eval_bound(b: &Bound, lower: bool, loops: &[i64], params: &[i64]) -> Option<i64> {
    let mut acc: Option<i64> = None;
    for t in &b.terms {
        let mut v = t.expr.constant;
        for &(s, c) in &t.expr.terms {
            let x = match s {
                Sym::Loop(w) => loops.get(w.0).copied().unwrap_or(0),
                Sym::Param(p) => params.get(p).copied().unwrap_or(0),
            };
            v = v.checked_add(c.checked_mul(x)?)?;
        }
        let d = t.div.max(1);
        let q = if lower {
            v.checked_add(d - 1)?.div_euclid(d)
        } else {
            v.div_euclid(d)
        };
        acc = Some(match acc {
            None => q,
            Some(a) if lower => a.max(q),
            Some(a) => a.min(q),
        });
    }
    acc
}

/// An estimate of the work of running `l` over `[lo, hi]`, in expression
/// and statement nodes executed: `(hi − lo + 1) ×` the work of one
/// iteration at `v = lo`, where the work of a nested loop is its trip
/// count (at its first iteration's enclosing values) times the work of
/// its body, an `if` counts its larger branch, and a categorical draw its
/// range twice. `loops` holds the values of the enclosing loop variables
/// (it is used as scratch space for the inner ones and restored);
/// saturating, so an overflow reads as "much work".
pub fn work(l: &ForLoop, lo: i64, hi: i64, loops: &mut [i64], params: &[i64]) -> u128 {
    let trip = u128::try_from(i128::from(hi) - i128::from(lo) + 1).unwrap_or(0);
    let saved = set_var(loops, l.var, lo);
    let w = stmts_work(&l.body, loops, params);
    restore(loops, l.var, saved);
    trip.saturating_mul(w)
}

/// The work of one iteration of a loop over `body` (as [`work`] counts
/// it) when it is the same for every iteration and every parameter
/// vector: `body` holds no loop or categorical draw, the only forms
/// whose work depends on values (a binding counts its body once). Compiled code then decides
/// `work < MIN` from the trip count alone, without calling the host.
pub fn static_work(body: &[Stmt]) -> Option<u128> {
    fn flat(body: &[Stmt]) -> bool {
        body.iter().all(|s| {
            own_exprs(s).into_iter().all(|e| !has_categorical(e))
                && match s {
                    Stmt::For(_) => false,
                    // One trip (or none) whatever its bounds' values.
                    Stmt::Bind(b) => flat(&b.body),
                    Stmt::If { then, els, .. } => flat(then) && flat(els),
                    Stmt::Block(b) => flat(b),
                    Stmt::Assign { .. } | Stmt::Accumulate(_) | Stmt::SetLocal { .. } => true,
                }
        })
    }
    fn has_categorical(e: &Expr) -> bool {
        matches!(e, Expr::Categorical(_)) || e.children().into_iter().any(has_categorical)
    }
    // No variable is read by the work of a flat body: empty environments.
    flat(body).then(|| stmts_work(body, &mut [], &[]))
}

fn set_var(loops: &mut [i64], v: LoopVar, x: i64) -> Option<i64> {
    loops.get_mut(v.0).map(|slot| std::mem::replace(slot, x))
}

fn restore(loops: &mut [i64], v: LoopVar, saved: Option<i64>) {
    if let (Some(slot), Some(x)) = (loops.get_mut(v.0), saved) {
        *slot = x;
    }
}

fn stmts_work(body: &[Stmt], loops: &mut [i64], params: &[i64]) -> u128 {
    let mut w: u128 = 0;
    for s in body {
        let own: u128 = own_exprs(s)
            .into_iter()
            .map(|e| expr_work(e, loops, params))
            .fold(1, u128::saturating_add);
        let nested = match s {
            Stmt::For(l) => {
                let lo = eval_bound(&l.lower, true, loops, params);
                let hi = eval_bound(&l.upper, false, loops, params);
                match (lo, hi) {
                    (Some(lo), Some(hi)) => work(l, lo, hi, loops, params),
                    _ => u128::MAX,
                }
            }
            Stmt::If { then, els, .. } => {
                stmts_work(then, loops, params).max(stmts_work(els, loops, params))
            }
            Stmt::Block(b) => stmts_work(b, loops, params),
            Stmt::Bind(b) => {
                let lo = eval_bound(&b.lower, true, loops, params).unwrap_or(0);
                let saved = set_var(loops, b.var, lo);
                let x = stmts_work(&b.body, loops, params);
                restore(loops, b.var, saved);
                x
            }
            Stmt::Assign { .. } | Stmt::Accumulate(_) | Stmt::SetLocal { .. } => 0,
        };
        w = w.saturating_add(own).saturating_add(nested);
    }
    w
}

fn expr_work(e: &Expr, loops: &mut [i64], params: &[i64]) -> u128 {
    let sub = |xs: &mut dyn Iterator<Item = &Expr>, loops: &mut [i64]| {
        xs.map(|x| expr_work(x, loops, params))
            .fold(0u128, u128::saturating_add)
    };
    1u128.saturating_add(match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => 0,
        Expr::Load { index, .. } => sub(&mut index.iter(), loops),
        Expr::Unary(_, a) | Expr::Cast(_, a) => expr_work(a, loops, params),
        Expr::Binary(_, a, b) => sub(&mut [&**a, &**b].into_iter(), loops),
        Expr::Select(c, a, b) => sub(&mut [&**c, &**a, &**b].into_iter(), loops),
        Expr::Math(_, args) | Expr::External { args, .. } => sub(&mut args.iter(), loops),
        Expr::Selection(s) => sub(&mut [&s.value, &s.lower, &s.upper].into_iter(), loops),
        Expr::Random(r) => sub(&mut r.args.iter().chain(&r.point), loops),
        Expr::Categorical(c) => {
            let lo = eval_bound(&c.lower, true, loops, params);
            let hi = eval_bound(&c.upper, false, loops, params);
            let trip = match (lo, hi) {
                (Some(lo), Some(hi)) => {
                    u128::try_from(i128::from(hi) - i128::from(lo) + 1).unwrap_or(0)
                }
                _ => u128::MAX,
            };
            let body = sub(&mut [&c.cond, &c.weight].into_iter(), loops);
            trip.saturating_mul(body).saturating_mul(2)
        }
    })
}

#[cfg(test)]
mod tests;
