//! Loop-AST optimization: semantics-preserving rewrites of a scanned loop
//! program ([`Function`]) before it is printed or JIT-compiled.
//!
//! Owns three rewrites, applied in this order by [`optimize`]:
//! 1. [`remove_degenerate_loops`]: a `for` whose lower and upper bounds are
//!    syntactically the same single affine value `e` (one term each,
//!    divisor 1, equal after merging terms) runs exactly once with
//!    `v = e`; it is replaced by its body with `v := e` substituted into
//!    every affine expression (bounds, guards, indices, values). No guard
//!    is needed: `e <= e`.
//! 2. [`hoist_accumulators`] (scalar replacement, "register
//!    accumulators"): see its documentation for the exact rule.
//! 3. [`simplify_guards`]: drops affine conjuncts of `if` conditions that
//!    are implied (over the rationals, hence over the integers) by the
//!    parameter context, the bounds of the enclosing loops, the affine
//!    conjuncts of the enclosing `if`s (then-branches) and the conjuncts of
//!    the same condition that are kept; an `if` whose condition becomes
//!    `true` is replaced by its then-branch.
//!
//! Every rewrite is conservative: whenever a precondition cannot be
//! established (an unknown statement form, an overflow while substituting,
//! a solver error) the code is left as it was.
//!
//! Adding a statement or expression form to the loop AST: every walker
//! here matches exhaustively, so the compiler lists the places. The
//! conservative handling is: `affines_expr`/`affines_stmts` visit every
//! affine expression of the new form (or return `None`, which cancels the
//! degenerate-loop rewrite); `only_accesses_at` inspects its expressions
//! (or returns `false`, which cancels the hoisting); `replace_*` and
//! `Facts::expr` rewrite its sub-expressions (or keep it unchanged);
//! `bound_vars` records a loop variable it binds; `Facts::stmts` may
//! keep it unchanged (fewer facts is sound).
//!
//! Must not know about: schedules, the IR, Cranelift. It reads and writes
//! only the loop AST (`super::loop_ast`) and asks `crate::poly::solver`
//! rational implication questions.

use super::loop_ast::{
    AccOp, Affine, ArrayId, AstError, BinOp, Bound, BoundTerm, Expr, Function, Local, LocalId,
    LoopVar, Stmt, Sym,
};
use crate::ir::types::ConstraintKind;
use crate::poly::solver::{self, Optimum, System};
use num_traits::Signed;

/// Why the optimizer refused a program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptError {
    /// The input program is malformed (`Function::check` fails).
    #[error("malformed loop program: {0}")]
    Malformed(AstError),
    /// The rewritten program fails `Function::check` (a bug of this pass;
    /// reported rather than handed to the JIT).
    #[error("internal error: the optimized loop program is malformed: {0}")]
    Internal(AstError),
}

/// How many rewrites each pass applied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OptStats {
    /// Loops replaced by their body ([`remove_degenerate_loops`]).
    pub degenerate_loops: usize,
    /// Array elements replaced by a register local around a loop
    /// ([`hoist_accumulators`]).
    pub accumulators: usize,
    /// Guard conjuncts removed ([`simplify_guards`]).
    pub guard_conjuncts: usize,
}

/// Applies the three rewrites of this module in order (degenerate loops,
/// accumulators, guards) to a copy of `f`. The result computes the same
/// array contents as `f` for every parameter vector of the context, bit for
/// bit (the same operations on the same values in the same order).
pub fn optimize(f: &Function) -> Result<Function, OptError> {
    optimize_with_stats(f).map(|(g, _)| g)
}

/// [`optimize`], also returning how many rewrites were applied.
pub fn optimize_with_stats(f: &Function) -> Result<(Function, OptStats), OptError> {
    f.check().map_err(OptError::Malformed)?;
    let mut g = f.clone();
    let stats = OptStats {
        degenerate_loops: remove_degenerate_loops(&mut g),
        accumulators: hoist_accumulators(&mut g),
        guard_conjuncts: simplify_guards(&mut g),
    };
    g.check().map_err(OptError::Internal)?;
    Ok((g, stats))
}

// ---------------------------------------------------------------------------
// Affine helpers.

/// `a` with equal symbols merged (first occurrence order) and zero
/// coefficients dropped; `None` on overflow.
fn merged(a: &Affine) -> Option<Affine> {
    let mut terms: Vec<(Sym, i64)> = Vec::new();
    for &(s, c) in &a.terms {
        match terms.iter_mut().find(|(t, _)| *t == s) {
            Some((_, k)) => *k = k.checked_add(c)?,
            None => terms.push((s, c)),
        }
    }
    terms.retain(|&(_, c)| c != 0);
    Some(Affine {
        terms,
        constant: a.constant,
    })
}

/// Canonical form for comparing affine functions: merged and sorted.
fn canonical(a: &Affine) -> Option<Affine> {
    let mut m = merged(a)?;
    m.terms.sort();
    Some(m)
}

/// `a − b` (merged); `None` on overflow.
fn sub_affine(a: &Affine, b: &Affine) -> Option<Affine> {
    let mut terms = a.terms.clone();
    for &(s, c) in &b.terms {
        terms.push((s, c.checked_neg()?));
    }
    merged(&Affine {
        terms,
        constant: a.constant.checked_sub(b.constant)?,
    })
}

fn mentions(a: &Affine, v: LoopVar) -> bool {
    a.terms.iter().any(|&(s, c)| c != 0 && s == Sym::Loop(v))
}

/// `a[v := e]`: every term `c·v` replaced by `c·e` (then merged); `a`
/// unchanged when it does not mention `v`; `None` on overflow.
fn subst_affine(a: &Affine, v: LoopVar, e: &Affine) -> Option<Affine> {
    if !a.terms.iter().any(|&(s, _)| s == Sym::Loop(v)) {
        return Some(a.clone());
    }
    let mut terms = Vec::new();
    let mut constant = a.constant;
    for &(s, c) in &a.terms {
        if s == Sym::Loop(v) {
            for &(s2, c2) in &e.terms {
                terms.push((s2, c.checked_mul(c2)?));
            }
            constant = constant.checked_add(c.checked_mul(e.constant)?)?;
        } else {
            terms.push((s, c));
        }
    }
    merged(&Affine { terms, constant })
}

/// Calls `g` on every affine expression of `e` (mutably); stops at the
/// first `None`.
fn affines_expr(e: &mut Expr, g: &mut dyn FnMut(&mut Affine) -> Option<()>) -> Option<()> {
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Local(_) => Some(()),
        Expr::Aff(a) => g(a),
        Expr::Load { index, .. } => index.iter_mut().try_for_each(|x| affines_expr(x, g)),
        Expr::Unary(_, a) | Expr::Cast(_, a) => affines_expr(a, g),
        Expr::Binary(_, a, b) => {
            affines_expr(a, g)?;
            affines_expr(b, g)
        }
        Expr::Select(c, a, b) => {
            affines_expr(c, g)?;
            affines_expr(a, g)?;
            affines_expr(b, g)
        }
        Expr::Math(_, args) => args.iter_mut().try_for_each(|x| affines_expr(x, g)),
        Expr::Random {
            args, seed, point, ..
        } => {
            args.iter_mut().try_for_each(|x| affines_expr(x, g))?;
            affines_expr(seed, g)?;
            point.iter_mut().try_for_each(|x| affines_expr(x, g))
        }
        Expr::External { args, .. } => args.iter_mut().try_for_each(|x| affines_expr(x, g)),
        Expr::Categorical(c) => {
            for t in c.lower.terms.iter_mut().chain(c.upper.terms.iter_mut()) {
                g(&mut t.expr)?;
            }
            affines_expr(&mut c.cond, g)?;
            affines_expr(&mut c.weight, g)?;
            affines_expr(&mut c.seed, g)?;
            c.point.iter_mut().try_for_each(|x| affines_expr(x, g))
        }
    }
}

/// Calls `g` on every affine expression of the statements (bounds,
/// conditions, indices, values).
fn affines_stmts(body: &mut [Stmt], g: &mut dyn FnMut(&mut Affine) -> Option<()>) -> Option<()> {
    for s in body {
        match s {
            Stmt::For {
                lower, upper, body, ..
            } => {
                for t in lower.terms.iter_mut().chain(upper.terms.iter_mut()) {
                    g(&mut t.expr)?;
                }
                affines_stmts(body, g)?;
            }
            Stmt::If { cond, then, els } => {
                affines_expr(cond, g)?;
                affines_stmts(then, g)?;
                affines_stmts(els, g)?;
            }
            Stmt::Assign { index, value, .. } | Stmt::Accumulate { index, value, .. } => {
                index.iter_mut().try_for_each(|x| affines_expr(x, g))?;
                affines_expr(value, g)?;
            }
            Stmt::SetLocal { value, .. } => affines_expr(value, g)?,
            Stmt::Block(b) => affines_stmts(b, g)?,
        }
    }
    Some(())
}

// ---------------------------------------------------------------------------
// 1. Degenerate loops.

/// The single value of a loop whose bounds are both one term with divisor
/// 1 and equal affine functions (so it runs exactly once).
fn single_value(lower: &Bound, upper: &Bound) -> Option<Affine> {
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

fn degenerate(body: Vec<Stmt>, n: &mut usize) -> Vec<Stmt> {
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
                        out.extend(nb);
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

// ---------------------------------------------------------------------------
// 2. Register accumulators.

/// Scalar replacement of accumulated array elements.
///
/// Rule (innermost enclosing loop only): let `L = for (v = lo; v <= hi;
/// v++) B` and let `X[idx] op= e` be an accumulation that is a top-level
/// statement of `B` (possibly inside `Block`s, but not inside an `if` or a
/// nested `for` of `B`), where every index of `idx` is affine and mentions
/// neither `v` nor a variable bound inside `B`. If every access to `X`
/// anywhere in `B` (loads, stores, accumulations, in values, guards and
/// indices of other accesses) is affine with the syntactically identical
/// index `idx`, then `L` is replaced by
///
/// ```text
/// if (lo <= hi) { t = X[idx]; L'; X[idx] = t; }
/// ```
///
/// where `t` is a new local of `X`'s type and `L'` is `L` with
/// `X[idx] op= e` → `t = t op e'`, `X[idx] = e` → `t = e'`, loads of
/// `X[idx]` → `t` (`e'` likewise rewritten). The guard is omitted when the
/// bounds are one term each with divisor 1 and `hi − lo` is a non-negative
/// constant.
///
/// Why this is exact: inside `L` the element `X[idx]` is a single memory
/// cell (`idx` is invariant in `L`), no other element of `X` is touched
/// and arrays never alias, so the local mirrors the cell. When `lo <= hi`,
/// `L` runs at least once and its first iteration executes the
/// accumulation unconditionally, so the original program reads and writes
/// `X[idx]` too: the hoisted load and store access an element the
/// original accessed (never an out-of-bounds one it did not), and the
/// JIT's interval proof for it is the same (the index depends only on
/// variables bound outside `L`, at the same guard nesting). When
/// `lo > hi` nothing happens, as in the original. Accumulations under an
/// `if` or in a nested loop (which may be empty) are never hoisted.
///
/// Returns the number of locals introduced.
pub fn hoist_accumulators(f: &mut Function) -> usize {
    let mut h = Hoister {
        locals: std::mem::take(&mut f.locals),
        names: f
            .params
            .iter()
            .chain(&f.loop_vars)
            .chain(f.arrays.iter().map(|a| &a.name))
            .cloned()
            .collect(),
        arrays: f.arrays.iter().map(|a| (a.name.clone(), a.ty)).collect(),
        count: 0,
    };
    f.body = h.stmts(std::mem::take(&mut f.body));
    f.locals = h.locals;
    h.count
}

struct Hoister {
    locals: Vec<Local>,
    /// Names in use (for fresh local names).
    names: Vec<String>,
    arrays: Vec<(String, crate::ir::types::ElemType)>,
    count: usize,
}

impl Hoister {
    fn fresh_local(&mut self, array: ArrayId) -> Option<LocalId> {
        let (name, ty) = self.arrays.get(array)?.clone();
        let base = format!("{name}_acc");
        let mut cand = base.clone();
        let mut k = 2;
        while self.names.contains(&cand) || self.locals.iter().any(|l| l.name == cand) {
            cand = format!("{base}{k}");
            k += 1;
        }
        self.names.push(cand.clone());
        self.locals.push(Local { name: cand, ty });
        Some(self.locals.len() - 1)
    }

    fn stmts(&mut self, body: Vec<Stmt>) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(body.len());
        for s in body {
            match s {
                Stmt::For {
                    var,
                    lower,
                    upper,
                    body,
                } => {
                    let body = self.stmts(body);
                    out.extend(self.around_loop(var, lower, upper, body));
                }
                Stmt::If { cond, then, els } => {
                    let then = self.stmts(then);
                    let els = self.stmts(els);
                    out.push(Stmt::If { cond, then, els });
                }
                Stmt::Block(b) => out.push(Stmt::Block(self.stmts(b))),
                other => out.push(other),
            }
        }
        out
    }

    /// The loop, with its hoistable accumulators in locals (see
    /// [`hoist_accumulators`]).
    fn around_loop(
        &mut self,
        var: LoopVar,
        lower: Bound,
        upper: Bound,
        body: Vec<Stmt>,
    ) -> Vec<Stmt> {
        let keep = |body| {
            vec![Stmt::For {
                var,
                lower: lower.clone(),
                upper: upper.clone(),
                body,
            }]
        };
        let mut inner_vars = vec![var];
        bound_vars(&body, &mut inner_vars);
        let mut cands: Vec<(ArrayId, Vec<Expr>)> = Vec::new();
        top_level_accumulations(&body, &mut cands);
        cands.retain(|(_, idx)| {
            idx.iter().all(|e| match e {
                Expr::Int(_) => true,
                Expr::Aff(a) => !inner_vars.iter().any(|&w| mentions(a, w)),
                _ => false,
            })
        });
        let mut chosen: Vec<(ArrayId, Vec<Expr>)> = Vec::new();
        for (a, idx) in cands {
            if chosen.iter().any(|(b, _)| *b == a) {
                continue;
            }
            if only_accesses_at(&body, a, &idx) {
                chosen.push((a, idx));
            }
        }
        if chosen.is_empty() {
            return keep(body);
        }
        let guard = match nonempty_cond(&lower, &upper) {
            Guard::Never => return keep(body),
            g => g,
        };
        let mut body = body;
        let mut loads = Vec::new();
        let mut stores = Vec::new();
        for (a, idx) in chosen {
            let Some(t) = self.fresh_local(a) else {
                continue;
            };
            body = body
                .into_iter()
                .map(|s| replace_stmt(s, a, &idx, t))
                .collect();
            loads.push(Stmt::SetLocal {
                local: t,
                value: Expr::Load {
                    array: a,
                    index: idx.clone(),
                },
            });
            stores.push(Stmt::Assign {
                array: a,
                index: idx,
                value: Expr::Local(t),
            });
            self.count += 1;
        }
        let mut seq = loads;
        seq.extend(keep(body));
        seq.extend(stores);
        match guard {
            Guard::Always => seq,
            Guard::Cond(cond) => vec![Stmt::If {
                cond,
                then: seq,
                els: Vec::new(),
            }],
            // Handled above.
            Guard::Never => Vec::new(),
        }
    }
}

/// Loop variables bound anywhere in `body`.
fn bound_vars(body: &[Stmt], out: &mut Vec<LoopVar>) {
    for s in body {
        match s {
            Stmt::For { var, body, .. } => {
                out.push(*var);
                bound_vars(body, out);
            }
            Stmt::If { then, els, .. } => {
                bound_vars(then, out);
                bound_vars(els, out);
            }
            Stmt::Block(b) => bound_vars(b, out),
            Stmt::Assign { .. } | Stmt::Accumulate { .. } | Stmt::SetLocal { .. } => {}
        }
    }
}

/// `(array, index)` of the accumulations executed unconditionally by one
/// pass over `body` (top level and `Block`s only), without duplicates.
fn top_level_accumulations(body: &[Stmt], out: &mut Vec<(ArrayId, Vec<Expr>)>) {
    for s in body {
        match s {
            Stmt::Accumulate { array, index, .. }
                if !out.iter().any(|(a, i)| a == array && i == index) =>
            {
                out.push((*array, index.clone()));
            }
            Stmt::Block(b) => top_level_accumulations(b, out),
            _ => {}
        }
    }
}

/// True when every access to `array` in `body` has exactly the index
/// `idx` (syntactically).
fn only_accesses_at(body: &[Stmt], array: ArrayId, idx: &[Expr]) -> bool {
    fn expr_ok(e: &Expr, array: ArrayId, idx: &[Expr]) -> bool {
        match e {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => true,
            Expr::Load { array: a, index } => {
                (*a != array || index.as_slice() == idx)
                    && index.iter().all(|x| expr_ok(x, array, idx))
            }
            Expr::Unary(_, a) | Expr::Cast(_, a) => expr_ok(a, array, idx),
            Expr::Binary(_, a, b) => expr_ok(a, array, idx) && expr_ok(b, array, idx),
            Expr::Select(c, a, b) => {
                expr_ok(c, array, idx) && expr_ok(a, array, idx) && expr_ok(b, array, idx)
            }
            Expr::Math(_, args) => args.iter().all(|x| expr_ok(x, array, idx)),
            Expr::Random {
                args, seed, point, ..
            } => {
                args.iter().chain(point).all(|x| expr_ok(x, array, idx))
                    && expr_ok(seed, array, idx)
            }
            Expr::External { args, .. } => args.iter().all(|x| expr_ok(x, array, idx)),
            // Conservative: its weight is evaluated in a loop of its own.
            Expr::Categorical(_) => false,
        }
    }
    body.iter().all(|s| match s {
        // Bounds are affine: no access.
        Stmt::For { body, .. } | Stmt::Block(body) => only_accesses_at(body, array, idx),
        Stmt::If { cond, then, els } => {
            expr_ok(cond, array, idx)
                && only_accesses_at(then, array, idx)
                && only_accesses_at(els, array, idx)
        }
        Stmt::Assign {
            array: a,
            index,
            value,
        }
        | Stmt::Accumulate {
            array: a,
            index,
            value,
            ..
        } => {
            (*a != array || index.as_slice() == idx)
                && index.iter().all(|x| expr_ok(x, array, idx))
                && expr_ok(value, array, idx)
        }
        Stmt::SetLocal { value, .. } => expr_ok(value, array, idx),
    })
}

/// `e` with loads of `array[idx]` replaced by the local `t`.
fn replace_expr(e: Expr, array: ArrayId, idx: &[Expr], t: LocalId) -> Expr {
    let r = |x: Expr| replace_expr(x, array, idx, t);
    let rb = |x: Box<Expr>| Box::new(replace_expr(*x, array, idx, t));
    match e {
        Expr::Load { array: a, index } if a == array && index.as_slice() == idx => Expr::Local(t),
        Expr::Load { array: a, index } => Expr::Load {
            array: a,
            index: index.into_iter().map(r).collect(),
        },
        Expr::Unary(op, a) => Expr::Unary(op, rb(a)),
        Expr::Cast(c, a) => Expr::Cast(c, rb(a)),
        Expr::Binary(op, a, b) => Expr::Binary(op, rb(a), rb(b)),
        Expr::Select(c, a, b) => Expr::Select(rb(c), rb(a), rb(b)),
        Expr::Math(m, args) => Expr::Math(m, args.into_iter().map(r).collect()),
        Expr::Random {
            dist,
            args,
            seed,
            site,
            point,
        } => Expr::Random {
            dist,
            args: args.into_iter().map(r).collect(),
            seed: rb(seed),
            site,
            point: point.into_iter().map(r).collect(),
        },
        Expr::External { index, args } => Expr::External {
            index,
            args: args.into_iter().map(r).collect(),
        },
        // Never reached with an access to replace (`only_accesses_at`
        // refuses categorical draws); kept as it is.
        Expr::Categorical(c) => Expr::Categorical(c),
        leaf @ (Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_)) => {
            leaf
        }
    }
}

/// `s` with every access to `array[idx]` turned into uses and definitions
/// of the local `t`.
fn replace_stmt(s: Stmt, array: ArrayId, idx: &[Expr], t: LocalId) -> Stmt {
    let re = |x: Expr| replace_expr(x, array, idx, t);
    let rs = |b: Vec<Stmt>| -> Vec<Stmt> {
        b.into_iter()
            .map(|s| replace_stmt(s, array, idx, t))
            .collect()
    };
    match s {
        Stmt::For {
            var,
            lower,
            upper,
            body,
        } => Stmt::For {
            var,
            lower,
            upper,
            body: rs(body),
        },
        Stmt::If { cond, then, els } => Stmt::If {
            cond: re(cond),
            then: rs(then),
            els: rs(els),
        },
        Stmt::Block(b) => Stmt::Block(rs(b)),
        Stmt::Assign {
            array: a,
            index,
            value,
        } if a == array && index.as_slice() == idx => Stmt::SetLocal {
            local: t,
            value: re(value),
        },
        Stmt::Accumulate {
            array: a,
            index,
            op,
            value,
        } if a == array && index.as_slice() == idx => Stmt::SetLocal {
            local: t,
            value: acc_value(op, t, re(value)),
        },
        Stmt::Assign {
            array: a,
            index,
            value,
        } => Stmt::Assign {
            array: a,
            index: index.into_iter().map(re).collect(),
            value: re(value),
        },
        Stmt::Accumulate {
            array: a,
            index,
            op,
            value,
        } => Stmt::Accumulate {
            array: a,
            index: index.into_iter().map(re).collect(),
            op,
            value: re(value),
        },
        Stmt::SetLocal { local, value } => Stmt::SetLocal {
            local,
            value: re(value),
        },
    }
}

/// `t op v`: the value an accumulation `x op= v` stores, with the old
/// value in the local `t` (`And`/`Or` stay lazy in `v`, as accumulations
/// are).
fn acc_value(op: AccOp, t: LocalId, v: Expr) -> Expr {
    Expr::bin(op.bin_op(), Expr::Local(t), v)
}

/// Whether a loop with these bounds runs at least once.
enum Guard {
    /// Provably (`hi − lo` a non-negative constant).
    Always,
    /// Provably never (`hi − lo` a negative constant).
    Never,
    /// When this condition holds.
    Cond(Expr),
}

/// The condition `max_k ⌈e_k/d_k⌉ <= min_m ⌊f_m/d'_m⌋` as a conjunction of
/// `⌈e_k/d_k⌉ <= ⌊f_m/d'_m⌋` over all pairs: `e <= f` when both divisors
/// are 1 (dropped when `f − e` is a non-negative constant), with
/// `ceild`/`floord` otherwise.
fn nonempty_cond(lower: &Bound, upper: &Bound) -> Guard {
    let mut conds = Vec::new();
    for lo in &lower.terms {
        for hi in &upper.terms {
            if lo.div == 1 && hi.div == 1 {
                if let Some(d) = sub_affine(&hi.expr, &lo.expr) {
                    if d.terms.is_empty() {
                        if d.constant < 0 {
                            return Guard::Never;
                        }
                        continue;
                    }
                    // `e <= f` rather than `f − e >= 0`: no new affine
                    // arithmetic that could overflow where the bounds
                    // themselves do not.
                    conds.push(Expr::bin(
                        BinOp::Le,
                        Expr::Aff(lo.expr.clone()),
                        Expr::Aff(hi.expr.clone()),
                    ));
                    continue;
                }
            }
            conds.push(Expr::bin(
                BinOp::Le,
                bound_value(lo, true),
                bound_value(hi, false),
            ));
        }
    }
    if conds.is_empty() {
        return Guard::Always;
    }
    let mut c = conds.pop().unwrap_or(Expr::Bool(true));
    while let Some(d) = conds.pop() {
        c = Expr::bin(BinOp::And, d, c);
    }
    Guard::Cond(c)
}

/// The value of one bound term: `⌈e/d⌉` (lower) or `⌊e/d⌋` (upper).
fn bound_value(t: &BoundTerm, lower: bool) -> Expr {
    let e = Expr::Aff(t.expr.clone());
    if t.div == 1 {
        e
    } else {
        let op = if lower {
            BinOp::CeilDiv
        } else {
            BinOp::FloorDiv
        };
        Expr::bin(op, e, Expr::Int(t.div))
    }
}

// ---------------------------------------------------------------------------
// 3. Redundant guard conjuncts.

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
    let nv = f.loop_vars.len();
    let np = f.params.len();
    let mut facts = Facts {
        nv,
        np,
        rows: Vec::new(),
    };
    if f.context.pieces.len() == 1 {
        for c in &f.context.pieces[0] {
            if c.aff.par.len() != np {
                continue;
            }
            let mut row = vec![0i64; nv + np + 1];
            row[nv..nv + np].copy_from_slice(&c.aff.par);
            row[nv + np] = c.aff.constant;
            match c.kind {
                ConstraintKind::Ge => facts.rows.push(row),
                ConstraintKind::Eq => {
                    if let Some(neg) = neg_row(&row) {
                        facts.rows.push(row);
                        facts.rows.push(neg);
                    }
                }
            }
        }
    }
    let mut n = 0;
    f.body = facts.stmts(std::mem::take(&mut f.body), &mut n);
    n
}

/// Inequalities `row·(loop vars, params, 1) >= 0` that hold here.
struct Facts {
    nv: usize,
    np: usize,
    rows: Vec<Vec<i64>>,
}

fn neg_row(r: &[i64]) -> Option<Vec<i64>> {
    r.iter().map(|v| v.checked_neg()).collect()
}

impl Facts {
    /// `a` as a row; `None` on an unknown symbol.
    fn row(&self, a: &Affine) -> Option<Vec<i64>> {
        let mut row = vec![0i64; self.nv + self.np + 1];
        for &(s, c) in &a.terms {
            let k = match s {
                Sym::Loop(v) if v.0 < self.nv => v.0,
                Sym::Param(p) if p < self.np => self.nv + p,
                _ => return None,
            };
            row[k] = row[k].checked_add(c)?;
        }
        row[self.nv + self.np] = a.constant;
        Some(row)
    }

    /// The inequalities equivalent to an affine comparison (over the
    /// integers), or `None` when `e` is not one.
    fn comparison(&self, e: &Expr) -> Option<Vec<Vec<i64>>> {
        let Expr::Binary(op, a, b) = e else {
            return None;
        };
        let aff = |x: &Expr| match x {
            Expr::Aff(a) => Some(a.clone()),
            Expr::Int(k) => Some(Affine::cst(*k)),
            _ => None,
        };
        let (x, y) = (aff(a)?, aff(b)?);
        // d = x − y.
        let d = sub_affine(&x, &y)?;
        let ge = |d: &Affine, shift: i64| -> Option<Vec<i64>> {
            // d − shift >= 0
            self.row(&d.clone().offset(shift.checked_neg()?)?)
        };
        let nd = sub_affine(&y, &x)?;
        Some(match op {
            BinOp::Ge => vec![ge(&d, 0)?],
            BinOp::Gt => vec![ge(&d, 1)?],
            BinOp::Le => vec![ge(&nd, 0)?],
            BinOp::Lt => vec![ge(&nd, 1)?],
            BinOp::Eq => vec![ge(&d, 0)?, ge(&nd, 0)?],
            _ => return None,
        })
    }

    /// True when `row >= 0` holds on every rational point of the facts and
    /// `extra` (an empty system counts as not implied: be conservative).
    fn implies(&self, extra: &[Vec<i64>], row: &[i64]) -> bool {
        let mut sys = System::new(self.nv + self.np);
        for r in self.rows.iter().chain(extra) {
            sys.add_ineq(r.clone());
        }
        match solver::rational_min(&sys, row) {
            Ok(Optimum::Value(v)) => !v.is_negative(),
            _ => false,
        }
    }

    fn stmts(&mut self, body: Vec<Stmt>, n: &mut usize) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(body.len());
        for s in body {
            match s {
                Stmt::For {
                    var,
                    lower,
                    upper,
                    body,
                } => {
                    let saved = self.rows.len();
                    self.bound_facts(var, &lower, true);
                    self.bound_facts(var, &upper, false);
                    let body = self.stmts(body, n);
                    self.rows.truncate(saved);
                    out.push(Stmt::For {
                        var,
                        lower,
                        upper,
                        body,
                    });
                }
                Stmt::If { cond, then, els } => {
                    let (cond, removed) = self.simplify_cond(cond);
                    *n += removed;
                    let saved = self.rows.len();
                    for c in conjuncts(&cond) {
                        if let Some(rows) = self.comparison(c) {
                            self.rows.extend(rows);
                        }
                    }
                    let then = self.stmts(then, n);
                    self.rows.truncate(saved);
                    let els = self.stmts(els, n);
                    if cond == Expr::Bool(true) {
                        out.extend(then);
                    } else {
                        out.push(Stmt::If { cond, then, els });
                    }
                }
                Stmt::Block(b) => {
                    let b = self.stmts(b, n);
                    out.push(Stmt::Block(b));
                }
                Stmt::Assign {
                    array,
                    index,
                    value,
                } => out.push(Stmt::Assign {
                    array,
                    index: index.into_iter().map(|e| self.expr(e, n)).collect(),
                    value: self.expr(value, n),
                }),
                Stmt::Accumulate {
                    array,
                    index,
                    op,
                    value,
                } => out.push(Stmt::Accumulate {
                    array,
                    index: index.into_iter().map(|e| self.expr(e, n)).collect(),
                    op,
                    value: self.expr(value, n),
                }),
                Stmt::SetLocal { local, value } => out.push(Stmt::SetLocal {
                    local,
                    value: self.expr(value, n),
                }),
            }
        }
        out
    }

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
            Expr::Load { array, index } => Expr::Load {
                array,
                index: index.into_iter().map(|x| self.expr(x, n)).collect(),
            },
            Expr::Unary(op, a) => Expr::Unary(op, Box::new(self.expr(*a, n))),
            Expr::Cast(c, a) => Expr::Cast(c, Box::new(self.expr(*a, n))),
            Expr::Binary(op, a, b) => {
                Expr::Binary(op, Box::new(self.expr(*a, n)), Box::new(self.expr(*b, n)))
            }
            Expr::Math(m, args) => {
                Expr::Math(m, args.into_iter().map(|x| self.expr(x, n)).collect())
            }
            Expr::Random {
                dist,
                args,
                seed,
                site,
                point,
            } => Expr::Random {
                dist,
                args: args.into_iter().map(|x| self.expr(x, n)).collect(),
                seed: Box::new(self.expr(*seed, n)),
                site,
                point: point.into_iter().map(|x| self.expr(x, n)).collect(),
            },
            Expr::External { index, args } => Expr::External {
                index,
                args: args.into_iter().map(|x| self.expr(x, n)).collect(),
            },
            // Kept as it is (its condition mentions its own variable,
            // about which the facts know nothing): fewer rewrites, sound.
            c @ Expr::Categorical(_) => c,
            leaf @ (Expr::Int(_)
            | Expr::Float(_)
            | Expr::Bool(_)
            | Expr::Aff(_)
            | Expr::Local(_)) => leaf,
        }
    }

    /// Facts of one loop bound: `d·v − e >= 0` (lower), `e − d·v >= 0`
    /// (upper), for each term (skipped on overflow: fewer facts is sound).
    fn bound_facts(&mut self, var: LoopVar, b: &Bound, lower: bool) {
        if var.0 >= self.nv {
            return;
        }
        for t in &b.terms {
            let Some(mut row) = self.row(&t.expr) else {
                continue;
            };
            // row = e; want lower: d·v − e, upper: e − d·v.
            let ok = (|| {
                if lower {
                    row = neg_row(&row)?;
                    row[var.0] = row[var.0].checked_add(t.div)?;
                } else {
                    row[var.0] = row[var.0].checked_sub(t.div)?;
                }
                Some(())
            })();
            if ok.is_some() {
                self.rows.push(row);
            }
        }
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
        let mut kept: Vec<Expr> = cs
            .into_iter()
            .zip(keep)
            .filter_map(|(c, k)| k.then_some(c))
            .collect();
        let mut c = match kept.pop() {
            Some(c) => c,
            None => return (Expr::Bool(true), removed),
        };
        while let Some(d) = kept.pop() {
            c = Expr::bin(BinOp::And, d, c);
        }
        (c, removed)
    }
}

/// The operands of the top-level `&&`s of `e`, left to right.
fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Binary(BinOp::And, a, b) => {
            let mut v = conjuncts(a);
            v.extend(conjuncts(b));
            v
        }
        _ => vec![e],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::types::{AffConstraint, AffExpr, Domain, ElemType};
    use proptest::prelude::*;

    const I: LoopVar = LoopVar(0);
    const J: LoopVar = LoopVar(1);

    /// `ci·i + cj·j + cn·N + k` (zero terms omitted, so that scoping
    /// checks only see the symbols used).
    fn aff(ci: i64, cj: i64, cn: i64, k: i64) -> Affine {
        let mut a = Affine::cst(k);
        for (s, c) in [(Sym::Loop(I), ci), (Sym::Loop(J), cj), (Sym::Param(0), cn)] {
            if c != 0 {
                a = a.plus(s, c);
            }
        }
        a
    }

    proptest! {
        /// `a[j := e]` evaluates like `a` with `j` set to the value of `e`.
        #[test]
        fn substitution_is_composition(
            a in (-3i64..4, -3i64..4, -3i64..4, -5i64..6),
            e in (-3i64..4, -3i64..4, -5i64..6),
            i in -4i64..5, n in -4i64..5,
        ) {
            let a = aff(a.0, a.1, a.2, a.3);
            let e = aff(e.0, 0, e.1, e.2);
            let s = subst_affine(&a, J, &e).expect("small");
            prop_assert!(!mentions(&s, J));
            let ej = e.eval(&[i, 0], &[n]).expect("small");
            prop_assert_eq!(s.eval(&[i, 0], &[n]), a.eval(&[i, ej], &[n]));
        }
    }

    fn int_cond(e: &Expr, env: &[i64], n: i64) -> bool {
        let v = |x: &Expr| match x {
            Expr::Aff(a) => a.eval(env, &[n]).expect("small"),
            Expr::Int(k) => *k,
            other => panic!("not affine: {other:?}"),
        };
        match e {
            Expr::Bool(b) => *b,
            Expr::Binary(BinOp::And, a, b) => int_cond(a, env, n) && int_cond(b, env, n),
            Expr::Binary(op, a, b) => {
                let (x, y) = (v(a), v(b));
                match op {
                    BinOp::Ge => x >= y,
                    BinOp::Gt => x > y,
                    BinOp::Le => x <= y,
                    BinOp::Lt => x < y,
                    BinOp::Eq => x == y,
                    _ => panic!("not a comparison"),
                }
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    fn bound_val(b: &Bound, lower: bool, env: &[i64], n: i64) -> i64 {
        let vals = b.terms.iter().map(|t| {
            let e = t.expr.eval(env, &[n]).expect("small");
            if lower {
                e.div_euclid(t.div) + i64::from(e.rem_euclid(t.div) != 0)
            } else {
                e.div_euclid(t.div)
            }
        });
        if lower {
            vals.max().expect("a term")
        } else {
            vals.min().expect("a term")
        }
    }

    /// `for i in 0 ..= N-1 { for j in lo ..= hi { if (cond) Y[0] = 1;
    /// Y[0] = cond ? 1 : 2; } }` over the context `N >= 1`.
    fn nest(lo: Bound, hi: Bound, cond: Expr) -> Function {
        Function {
            name: "t".into(),
            params: vec!["N".into()],
            context: Domain {
                dims: vec![],
                pieces: vec![vec![AffConstraint {
                    aff: AffExpr {
                        idx: vec![],
                        par: vec![1],
                        constant: -1,
                    },
                    kind: ConstraintKind::Ge,
                }]],
            },
            arrays: vec![super::super::loop_ast::Array {
                name: "Y".into(),
                ty: ElemType::Int,
                dims: vec![super::super::loop_ast::Dim {
                    lower: Affine::cst(0),
                    extent: Affine::cst(1),
                }],
                domain: None,
            }],
            externals: vec![],
            loop_vars: vec!["i".into(), "j".into()],
            locals: vec![],
            body: vec![Stmt::For {
                var: I,
                lower: Bound::aff(Affine::cst(0)),
                upper: Bound::aff(aff(0, 0, 1, -1)),
                body: vec![Stmt::For {
                    var: J,
                    lower: lo,
                    upper: hi,
                    body: vec![
                        Stmt::If {
                            cond: cond.clone(),
                            then: vec![Stmt::Assign {
                                array: 0,
                                index: vec![Expr::Int(0)],
                                value: Expr::Int(1),
                            }],
                            els: vec![],
                        },
                        Stmt::Assign {
                            array: 0,
                            index: vec![Expr::Int(0)],
                            value: Expr::select(cond, Expr::Int(1), Expr::Int(2)),
                        },
                    ],
                }],
            }],
        }
    }

    /// The inner loop's bounds, the `if` condition (`true` when the `if`
    /// was removed) and the `select` condition (`true` when the `select`
    /// was removed) of `nest`.
    fn guard_of(f: &Function) -> (Bound, Bound, Expr, Expr) {
        let Stmt::For { body, .. } = &f.body[0] else {
            panic!("outer loop")
        };
        let Stmt::For {
            lower, upper, body, ..
        } = &body[0]
        else {
            panic!("inner loop")
        };
        let cond = match &body[0] {
            Stmt::If { cond, .. } => cond.clone(),
            Stmt::Assign { .. } => Expr::Bool(true),
            other => panic!("unexpected {other:?}"),
        };
        let sel = match body.last() {
            Some(Stmt::Assign {
                value: Expr::Select(c, ..),
                ..
            }) => (**c).clone(),
            Some(Stmt::Assign {
                value: Expr::Int(1),
                ..
            }) => Expr::Bool(true),
            other => panic!("unexpected {other:?}"),
        };
        (lower.clone(), upper.clone(), cond, sel)
    }

    fn cmp_strategy() -> impl Strategy<Value = Expr> {
        (
            prop_oneof![
                Just(BinOp::Ge),
                Just(BinOp::Gt),
                Just(BinOp::Le),
                Just(BinOp::Lt),
                Just(BinOp::Eq)
            ],
            (-2i64..3, -2i64..3, -1i64..2, -3i64..4),
        )
            .prop_map(|(op, (ci, cj, cn, k))| {
                Expr::bin(op, Expr::Aff(aff(ci, cj, cn, k)), Expr::Int(0))
            })
    }

    proptest! {
        /// Simplified guards agree with the original ones at every point
        /// the loops reach (brute force over small `N`), and never grow.
        #[test]
        fn simplified_guards_are_equivalent_where_reached(
            lo in prop_oneof![
                Just(Bound::aff(Affine::cst(0))),
                Just(Bound::aff(aff(1, 0, 0, 0))),
                Just(Bound::aff(aff(1, 0, 0, -1)).and(Affine::cst(0), 1)),
                Just(Bound::div(aff(1, 0, 0, 0), 2)),
            ],
            hi in prop_oneof![
                Just(Bound::aff(aff(0, 0, 1, -1))),
                Just(Bound::aff(aff(1, 0, 0, 1))),
                Just(Bound::aff(aff(0, 0, 1, -1)).and(aff(1, 0, 0, 2), 1)),
                Just(Bound::div(aff(1, 0, 1, 0), 2)),
            ],
            conds in prop::collection::vec(cmp_strategy(), 1..5),
        ) {
            let mut cond = conds[conds.len() - 1].clone();
            for c in conds[..conds.len() - 1].iter().rev() {
                cond = Expr::bin(BinOp::And, c.clone(), cond);
            }
            let f = nest(lo, hi, cond.clone());
            prop_assert!(f.check().is_ok());
            let mut g = f.clone();
            let removed = simplify_guards(&mut g);
            prop_assert!(g.check().is_ok());
            let (lo, hi, new, sel) = guard_of(&g);
            let count = |c: &Expr| if *c == Expr::Bool(true) { 0 } else { conjuncts(c).len() };
            prop_assert_eq!(count(&new) + count(&sel) + removed, 2 * conds.len());
            for n in 1..6 {
                for i in 0..n {
                    let env = [i, 0];
                    let (l, h) = (bound_val(&lo, true, &env, n), bound_val(&hi, false, &env, n));
                    for j in l..=h {
                        let env = [i, j];
                        prop_assert_eq!(
                            int_cond(&cond, &env, n),
                            int_cond(&new, &env, n),
                            "N={} i={} j={}\n{}\n{}", n, i, j, f.to_c(), g.to_c()
                        );
                        prop_assert_eq!(
                            int_cond(&cond, &env, n),
                            int_cond(&sel, &env, n),
                            "select: N={} i={} j={}\n{}\n{}", n, i, j, f.to_c(), g.to_c()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn implied_conjuncts_go_and_true_ifs_disappear() {
        // j >= i and j <= N - 1 inside `for j in i ..= N-1`: both implied.
        let cond = Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Ge, Expr::Aff(aff(-1, 1, 0, 0)), Expr::Int(0)),
            Expr::bin(
                BinOp::Le,
                Expr::Aff(aff(0, 1, 0, 0)),
                Expr::Aff(aff(0, 0, 1, -1)),
            ),
        );
        let mut f = nest(
            Bound::aff(aff(1, 0, 0, 0)),
            Bound::aff(aff(0, 0, 1, -1)),
            cond,
        );
        assert_eq!(simplify_guards(&mut f), 4);
        assert_eq!(guard_of(&f).2, Expr::Bool(true));
        assert_eq!(guard_of(&f).3, Expr::Bool(true));
        // Of two equivalent conjuncts exactly one is kept.
        let c = Expr::bin(BinOp::Ge, Expr::Aff(aff(0, 1, 0, -1)), Expr::Int(0));
        let mut f = nest(
            Bound::aff(Affine::cst(0)),
            Bound::aff(aff(0, 0, 1, -1)),
            Expr::bin(BinOp::And, c.clone(), c.clone()),
        );
        assert_eq!(simplify_guards(&mut f), 2);
        assert_eq!(guard_of(&f).2, c);
        assert_eq!(guard_of(&f).3, c);
        // Not implied: kept.
        let mut f = nest(
            Bound::aff(Affine::cst(0)),
            Bound::aff(aff(0, 0, 1, -1)),
            c.clone(),
        );
        assert_eq!(simplify_guards(&mut f), 0);
        assert_eq!(guard_of(&f).2, c);
        assert_eq!(guard_of(&f).3, c);
    }

    #[test]
    fn non_emptiness_condition_of_bounds() {
        let b = |e: Affine| Bound::aff(e);
        assert!(matches!(
            nonempty_cond(&b(Affine::cst(0)), &b(Affine::cst(3))),
            Guard::Always
        ));
        assert!(matches!(
            nonempty_cond(&b(Affine::cst(4)), &b(Affine::cst(3))),
            Guard::Never
        ));
        // max(0, i - 1) <= min(N - 1, floor((i + N) / 2)): four conjuncts.
        let lo = b(Affine::cst(0)).and(aff(1, 0, 0, -1), 1);
        let hi = b(aff(0, 0, 1, -1)).and(aff(1, 0, 1, 0), 2);
        let Guard::Cond(c) = nonempty_cond(&lo, &hi) else {
            panic!("a condition")
        };
        assert_eq!(conjuncts(&c).len(), 4);
    }
}
