//! Loop-AST optimization: semantics-preserving rewrites of a scanned loop
//! program ([`Function`]) before it is printed or JIT-compiled.
//!
//! Owns four rewrites, applied by [`optimize`] in the order: degenerate
//! loops, splitting, degenerate loops again (pieces `[e, e]`), guards,
//! accumulators, guards again (the non-emptiness guards hoisting adds):
//! 1. [`remove_degenerate_loops`]: a `for` whose lower and upper bounds are
//!    syntactically the same single affine value `e` (one term each,
//!    divisor 1, equal after merging terms) runs exactly once with
//!    `v = e`; it is replaced by its body with `v := e` substituted into
//!    every affine expression (bounds, guards, indices, values). No guard
//!    is needed: `e <= e`.
//! 2. [`split_loops`] (index-set splitting): a loop whose body tests
//!    affine conditions on its variable (against parameters and outer
//!    variables) is cut at the thresholds into consecutive loops in each
//!    of which the conditions are decided and folded away; see its
//!    documentation for the exact rule and the proof.
//! 3. [`hoist_accumulators`] (scalar replacement, "register
//!    accumulators"): see its documentation for the exact rule.
//! 4. [`simplify_guards`]: drops affine conjuncts of `if` conditions that
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
//! keep it unchanged (fewer facts is sound); `visit_exprs` visits its
//! expressions (or none: fewer cuts), `fold_*` fold its sub-expressions
//! (or keep it), `Splitter::stmts` may keep it unchanged, `size_*` count
//! it, and `infallible` says `false` unless it can neither fail nor have
//! an effect.
//!
//! Must not know about: schedules, the IR, Cranelift. It reads and writes
//! only the loop AST (`super::loop_ast`) and asks `crate::poly::solver`
//! rational implication questions.

use super::loop_ast::{
    acc_bin_op, Affine, ArrayId, AstError, BinOp, Bound, BoundTerm, Expr, Function, Local, LocalId,
    LoopVar, ReduceOp, Stmt, Sym,
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
    /// Loops replaced by their body ([`remove_degenerate_loops`], both
    /// runs).
    pub degenerate_loops: usize,
    /// Array elements replaced by a register local around a loop
    /// ([`hoist_accumulators`]).
    pub accumulators: usize,
    /// Guard conjuncts removed ([`simplify_guards`], both runs).
    pub guard_conjuncts: usize,
    /// Loops split into pieces ([`split_loops`]).
    pub split_loops: usize,
}

/// Applies the rewrites of this module in order (degenerate loops,
/// splitting, degenerate loops, guards, accumulators, guards) to a copy
/// of `f`. The result computes the same
/// array contents as `f` for every parameter vector of the context, bit for
/// bit (the same operations on the same values in the same order).
pub fn optimize(f: &Function) -> Result<Function, OptError> {
    optimize_with_stats(f).map(|(g, _)| g)
}

/// [`optimize`], also returning how many rewrites were applied.
pub fn optimize_with_stats(f: &Function) -> Result<(Function, OptStats), OptError> {
    f.check().map_err(OptError::Malformed)?;
    let mut g = f.clone();
    let mut stats = OptStats {
        degenerate_loops: remove_degenerate_loops(&mut g),
        ..OptStats::default()
    };
    stats.split_loops = split_loops(&mut g);
    // Pieces `[e, e]` of split loops run once.
    stats.degenerate_loops += remove_degenerate_loops(&mut g);
    // Guards made redundant by the pieces' bounds go before hoisting
    // (an accumulation under an `if` is not hoisted), and the guards
    // hoisting adds are simplified after it.
    stats.guard_conjuncts = simplify_guards(&mut g);
    stats.accumulators = hoist_accumulators(&mut g);
    stats.guard_conjuncts += simplify_guards(&mut g);
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
fn acc_value(op: ReduceOp, t: LocalId, v: Expr) -> Expr {
    Expr::bin(acc_bin_op(op), Expr::Local(t), v)
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
    let mut facts = Facts::of_context(f);
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
    /// The facts that hold everywhere in `f`: its parameter context when
    /// it is one conjunction (nothing otherwise).
    fn of_context(f: &Function) -> Facts {
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
        facts
    }

    /// True when the facts and `extra` have no rational point (hence no
    /// integer point). Solver errors count as "not shown": `false`.
    fn infeasible(&self, extra: &[Vec<i64>]) -> bool {
        let zero = vec![0i64; self.nv + self.np + 1];
        let (sys, obj) = self.system(extra, &zero);
        matches!(solver::rational_min(&sys, &obj), Ok(Optimum::Empty))
    }

    /// The facts and `extra` as a solver system, with the objective row
    /// `obj`, over only the columns some row or `obj` mentions (the loop
    /// variables of a whole function are many, the facts at one place
    /// mention few): a column no row mentions is a free variable, so
    /// dropping it changes neither emptiness nor the minimum.
    fn system(&self, extra: &[Vec<i64>], obj: &[i64]) -> (System, Vec<i64>) {
        let n = self.nv + self.np;
        let mut used = vec![false; n];
        for r in self
            .rows
            .iter()
            .map(Vec::as_slice)
            .chain(extra.iter().map(Vec::as_slice))
            .chain([obj])
        {
            for (u, &x) in used.iter_mut().zip(r) {
                *u |= x != 0;
            }
        }
        let cols: Vec<usize> = (0..n).filter(|&c| used[c]).collect();
        let pick = |r: &[i64]| -> Vec<i64> {
            let mut out: Vec<i64> = cols.iter().map(|&c| r[c]).collect();
            out.push(r[n]);
            out
        };
        let mut sys = System::new(cols.len());
        for r in self.rows.iter().chain(extra) {
            sys.add_ineq(pick(r));
        }
        (sys, pick(obj))
    }

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
        let (sys, obj) = self.system(extra, row);
        match solver::rational_min(&sys, &obj) {
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

// ---------------------------------------------------------------------------
// 4. Index-set splitting.

/// At most this many cuts (thresholds) are applied to one loop, so a loop
/// becomes at most `2^3 = 8` pieces.
pub const SPLIT_MAX_CUTS: usize = 3;
/// A loop whose body has more nodes than this (statements plus expression
/// nodes, see `size_stmts`) is never split.
pub const SPLIT_MAX_BODY: usize = 400;
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
        budget,
        count: 0,
    };
    let mut scope = Vec::new();
    f.body = sp.stmts(std::mem::take(&mut f.body), &mut scope);
    sp.count
}

/// A cut of a loop over `v`: the half-line `d·v >= e` (`d >= 1`; `e` free
/// of `v` and of the variables bound inside the loop), `e` canonical.
#[derive(Debug, Clone, PartialEq)]
struct Cut {
    e: Affine,
    d: i64,
}

/// `−a`; `None` on overflow.
fn neg_affine(a: &Affine) -> Option<Affine> {
    Some(Affine {
        terms: a
            .terms
            .iter()
            .map(|&(s, c)| Some((s, c.checked_neg()?)))
            .collect::<Option<_>>()?,
        constant: a.constant.checked_neg()?,
    })
}

/// `k·a`; `None` on overflow.
fn scale_affine(a: &Affine, k: i64) -> Option<Affine> {
    Some(Affine {
        terms: a
            .terms
            .iter()
            .map(|&(s, c)| Some((s, c.checked_mul(k)?)))
            .collect::<Option<_>>()?,
        constant: a.constant.checked_mul(k)?,
    })
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    // The gcd of values whose absolute values are at most 2^63 is at
    // most 2^63; it is 2^63 only for (i64::MIN, 0 or i64::MIN), where
    // saturating to i64::MAX makes the caller skip the division.
    i64::try_from(a).unwrap_or(i64::MAX)
}

/// `(op, x − y)` for an affine comparison `x op y` (`op` one of
/// `>= > <= < == !=`, both operands `Aff` or `Int`), the difference
/// merged; `None` otherwise or on overflow.
fn affine_comparison(e: &Expr) -> Option<(BinOp, Affine)> {
    let Expr::Binary(op, a, b) = e else {
        return None;
    };
    if !matches!(
        op,
        BinOp::Ge | BinOp::Gt | BinOp::Le | BinOp::Lt | BinOp::Eq | BinOp::Ne
    ) {
        return None;
    }
    let aff = |x: &Expr| match x {
        Expr::Aff(a) => Some(a.clone()),
        Expr::Int(k) => Some(Affine::cst(*k)),
        _ => None,
    };
    Some((*op, sub_affine(&aff(a)?, &aff(b)?)?))
}

/// Affine `g_k` with `diff op 0 ⇔ ∧_k g_k >= 0` over the integers (for
/// `!=`, those of `==`: the caller negates); `None` on overflow.
fn comparison_ineqs(op: BinOp, diff: &Affine) -> Option<Vec<Affine>> {
    let neg = neg_affine(diff)?;
    Some(match op {
        BinOp::Ge => vec![diff.clone()],
        BinOp::Gt => vec![diff.clone().offset(-1)?],
        BinOp::Le => vec![neg],
        BinOp::Lt => vec![neg.offset(-1)?],
        BinOp::Eq | BinOp::Ne => vec![diff.clone(), neg],
        _ => return None,
    })
}

/// True when `a` mentions `v` and every other loop variable it mentions
/// is in `scope`.
fn atom_in_scope(a: &Affine, v: LoopVar, scope: &[LoopVar]) -> bool {
    mentions(a, v)
        && a.terms.iter().all(|&(s, c)| match s {
            Sym::Loop(w) => c == 0 || w == v || scope.contains(&w),
            Sym::Param(_) => true,
        })
}

/// The cuts of an atom of a loop over `v` whose outer variables are
/// `scope` (see [`split_loops`]); `None` when `e` is not such an atom or
/// on overflow.
fn cuts_of(e: &Expr, v: LoopVar, scope: &[LoopVar]) -> Option<Vec<Cut>> {
    let (op, diff) = affine_comparison(e)?;
    if !atom_in_scope(&diff, v, scope) {
        return None;
    }
    let mut out = Vec::new();
    for g in comparison_ineqs(op, &diff)? {
        let g = merged(&g)?;
        let a: i64 = g
            .terms
            .iter()
            .filter(|(s, _)| *s == Sym::Loop(v))
            .map(|&(_, c)| c)
            .sum();
        let r = Affine {
            terms: g
                .terms
                .iter()
                .filter(|(s, _)| *s != Sym::Loop(v))
                .copied()
                .collect(),
            constant: g.constant,
        };
        let cut = if a > 0 {
            Cut {
                e: neg_affine(&r)?,
                d: a,
            }
        } else {
            Cut {
                e: r.offset(1)?,
                d: a.checked_neg()?,
            }
        };
        out.push(normalize_cut(cut)?);
    }
    Some(out)
}

/// `d·v >= E + c` as `(d/g)·v >= E/g + ⌈c/g⌉` with `g` the gcd of `d`
/// and `E`'s coefficients (exact over the integers), terms canonical.
fn normalize_cut(c: Cut) -> Option<Cut> {
    let mut e = canonical(&c.e)?;
    let g = e.terms.iter().fold(c.d, |g, &(_, k)| gcd(g, k));
    if g <= 1 || g == i64::MAX {
        return Some(Cut { e, d: c.d });
    }
    for t in e.terms.iter_mut() {
        t.1 /= g;
    }
    let q = e.constant.div_euclid(g);
    e.constant = if e.constant.rem_euclid(g) != 0 {
        q.checked_add(1)?
    } else {
        q
    };
    Some(Cut { e, d: c.d / g })
}

/// Calls `g` on every expression node of the statements (pre-order;
/// not inside categorical draws).
fn visit_exprs(body: &[Stmt], g: &mut dyn FnMut(&Expr)) {
    fn expr(e: &Expr, g: &mut dyn FnMut(&Expr)) {
        g(e);
        match e {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => {}
            Expr::Load { index, .. } => index.iter().for_each(|x| expr(x, g)),
            Expr::Unary(_, a) | Expr::Cast(_, a) => expr(a, g),
            Expr::Binary(_, a, b) => {
                expr(a, g);
                expr(b, g);
            }
            Expr::Select(c, a, b) => {
                expr(c, g);
                expr(a, g);
                expr(b, g);
            }
            Expr::Math(_, args) | Expr::External { args, .. } => {
                args.iter().for_each(|x| expr(x, g))
            }
            Expr::Random {
                args, seed, point, ..
            } => {
                args.iter().chain(point).for_each(|x| expr(x, g));
                expr(seed, g);
            }
            // Its condition binds a variable of its own: left alone.
            Expr::Categorical(_) => {}
        }
    }
    for s in body {
        match s {
            Stmt::For { body, .. } | Stmt::Block(body) => visit_exprs(body, g),
            Stmt::If { cond, then, els } => {
                expr(cond, g);
                visit_exprs(then, g);
                visit_exprs(els, g);
            }
            Stmt::Assign { index, value, .. } | Stmt::Accumulate { index, value, .. } => {
                index.iter().for_each(|x| expr(x, g));
                expr(value, g);
            }
            Stmt::SetLocal { value, .. } => expr(value, g),
        }
    }
}

/// Size of an expression: its number of nodes (a categorical draw counts
/// its condition and weight).
fn size_expr(e: &Expr) -> usize {
    1 + match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => 0,
        Expr::Load { index, .. } => index.iter().map(size_expr).sum(),
        Expr::Unary(_, a) | Expr::Cast(_, a) => size_expr(a),
        Expr::Binary(_, a, b) => size_expr(a) + size_expr(b),
        Expr::Select(c, a, b) => size_expr(c) + size_expr(a) + size_expr(b),
        Expr::Math(_, args) | Expr::External { args, .. } => args.iter().map(size_expr).sum(),
        Expr::Random {
            args, seed, point, ..
        } => args.iter().chain(point).map(size_expr).sum::<usize>() + size_expr(seed),
        Expr::Categorical(c) => size_expr(&c.cond) + size_expr(&c.weight),
    }
}

/// Size of statements: one per statement plus the sizes of its
/// expressions (a loop counts its bound terms).
fn size_stmts(body: &[Stmt]) -> usize {
    body.iter()
        .map(|s| {
            1 + match s {
                Stmt::For {
                    lower, upper, body, ..
                } => lower.terms.len() + upper.terms.len() + size_stmts(body),
                Stmt::If { cond, then, els } => {
                    size_expr(cond) + size_stmts(then) + size_stmts(els)
                }
                Stmt::Assign { index, value, .. } | Stmt::Accumulate { index, value, .. } => {
                    index.iter().map(size_expr).sum::<usize>() + size_expr(value)
                }
                Stmt::SetLocal { value, .. } => size_expr(value),
                Stmt::Block(b) => size_stmts(b),
            }
        })
        .sum()
}

/// True when evaluating `e` can neither fail nor have an effect: constants,
/// affine values, locals and comparisons / `&& || !` of those.
fn infallible(e: &Expr) -> bool {
    match e {
        Expr::Int(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => true,
        Expr::Unary(crate::vocab::UnOp::Not, a) => infallible(a),
        Expr::Binary(op, a, b) => {
            matches!(
                op,
                BinOp::And
                    | BinOp::Or
                    | BinOp::Eq
                    | BinOp::Ne
                    | BinOp::Lt
                    | BinOp::Le
                    | BinOp::Gt
                    | BinOp::Ge
            ) && infallible(a)
                && infallible(b)
        }
        _ => false,
    }
}

/// Decides the atom `e` (see [`split_loops`]) of a loop over `v` from the
/// facts: `Some(true)` / `Some(false)` when they imply it / its negation.
fn decide(facts: &Facts, e: &Expr, v: LoopVar, scope: &[LoopVar]) -> Option<bool> {
    let (op, diff) = affine_comparison(e)?;
    if !atom_in_scope(&diff, v, scope) {
        return None;
    }
    let rows: Vec<Vec<i64>> = comparison_ineqs(op, &diff)?
        .iter()
        .map(|g| facts.row(g))
        .collect::<Option<_>>()?;
    // g >= 0 fails (over the integers) iff −g − 1 >= 0.
    let fails = |r: &Vec<i64>| -> bool {
        let Some(mut n) = neg_row(r) else {
            return false;
        };
        match n.last_mut().and_then(|c| c.checked_sub(1)) {
            Some(c) => {
                if let Some(last) = n.last_mut() {
                    *last = c;
                }
                facts.implies(&[], &n)
            }
            None => false,
        }
    };
    let holds = if rows.iter().all(|r| facts.implies(&[], r)) {
        Some(true)
    } else if rows.iter().any(fails) {
        Some(false)
    } else {
        None
    };
    if op == BinOp::Ne {
        holds.map(|b| !b)
    } else {
        holds
    }
}

/// Folds the decided atoms of `e` (see [`split_loops`]); `n` counts them.
fn fold_expr(facts: &Facts, e: Expr, v: LoopVar, scope: &[LoopVar], n: &mut usize) -> Expr {
    if affine_comparison(&e).is_some() {
        return match decide(facts, &e, v, scope) {
            Some(b) => {
                *n += 1;
                Expr::Bool(b)
            }
            None => e,
        };
    }
    let mut f = |x: Expr| fold_expr(facts, x, v, scope, n);
    match e {
        Expr::Binary(BinOp::And, a, b) => match (f(*a), f(*b)) {
            (Expr::Bool(false), _) => Expr::Bool(false),
            (Expr::Bool(true), y) => y,
            (x, Expr::Bool(true)) => x,
            (x, Expr::Bool(false)) if infallible(&x) => Expr::Bool(false),
            (x, y) => Expr::bin(BinOp::And, x, y),
        },
        Expr::Binary(BinOp::Or, a, b) => match (f(*a), f(*b)) {
            (Expr::Bool(true), _) => Expr::Bool(true),
            (Expr::Bool(false), y) => y,
            (x, Expr::Bool(false)) => x,
            (x, Expr::Bool(true)) if infallible(&x) => Expr::Bool(true),
            (x, y) => Expr::bin(BinOp::Or, x, y),
        },
        Expr::Unary(crate::vocab::UnOp::Not, a) => match f(*a) {
            Expr::Bool(b) => Expr::Bool(!b),
            x => Expr::Unary(crate::vocab::UnOp::Not, Box::new(x)),
        },
        Expr::Select(c, a, b) => match f(*c) {
            Expr::Bool(true) => f(*a),
            Expr::Bool(false) => f(*b),
            c => {
                let a = f(*a);
                Expr::select(c, a, f(*b))
            }
        },
        Expr::Load { array, index } => Expr::Load {
            array,
            index: index.into_iter().map(f).collect(),
        },
        Expr::Unary(op, a) => Expr::Unary(op, Box::new(f(*a))),
        Expr::Cast(c, a) => Expr::Cast(c, Box::new(f(*a))),
        Expr::Binary(op, a, b) => {
            let a = f(*a);
            Expr::bin(op, a, f(*b))
        }
        Expr::Math(m, args) => Expr::Math(m, args.into_iter().map(f).collect()),
        Expr::Random {
            dist,
            args,
            seed,
            site,
            point,
        } => {
            let args = args.into_iter().map(&mut f).collect();
            let seed = Box::new(f(*seed));
            Expr::Random {
                dist,
                args,
                seed,
                site,
                point: point.into_iter().map(f).collect(),
            }
        }
        Expr::External { index, args } => Expr::External {
            index,
            args: args.into_iter().map(f).collect(),
        },
        c @ Expr::Categorical(_) => c,
        leaf @ (Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_)) => {
            leaf
        }
    }
}

/// Folds the decided atoms of the statements; an `if` whose condition is
/// decided is replaced by the branch taken.
fn fold_stmts(
    facts: &Facts,
    body: Vec<Stmt>,
    v: LoopVar,
    scope: &[LoopVar],
    n: &mut usize,
) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        match s {
            Stmt::For {
                var,
                lower,
                upper,
                body,
            } => {
                let body = fold_stmts(facts, body, v, scope, n);
                // A loop that does nothing goes (its bounds are affine:
                // evaluating them cannot fail).
                if !body.is_empty() {
                    out.push(Stmt::For {
                        var,
                        lower,
                        upper,
                        body,
                    });
                }
            }
            Stmt::If { cond, then, els } => match fold_expr(facts, cond, v, scope, n) {
                Expr::Bool(true) => out.extend(fold_stmts(facts, then, v, scope, n)),
                Expr::Bool(false) => out.extend(fold_stmts(facts, els, v, scope, n)),
                cond => {
                    let then = fold_stmts(facts, then, v, scope, n);
                    let els = fold_stmts(facts, els, v, scope, n);
                    // An `if` that does nothing goes when evaluating its
                    // condition cannot fail.
                    if !(then.is_empty() && els.is_empty() && infallible(&cond)) {
                        out.push(Stmt::If { cond, then, els });
                    }
                }
            },
            Stmt::Assign {
                array,
                index,
                value,
            } => out.push(Stmt::Assign {
                array,
                index: index
                    .into_iter()
                    .map(|x| fold_expr(facts, x, v, scope, n))
                    .collect(),
                value: fold_expr(facts, value, v, scope, n),
            }),
            Stmt::Accumulate {
                array,
                index,
                op,
                value,
            } => out.push(Stmt::Accumulate {
                array,
                index: index
                    .into_iter()
                    .map(|x| fold_expr(facts, x, v, scope, n))
                    .collect(),
                op,
                value: fold_expr(facts, value, v, scope, n),
            }),
            Stmt::SetLocal { local, value } => out.push(Stmt::SetLocal {
                local,
                value: fold_expr(facts, value, v, scope, n),
            }),
            Stmt::Block(b) => out.push(Stmt::Block(fold_stmts(facts, b, v, scope, n))),
        }
    }
    out
}

/// The conjuncts of the non-emptiness condition of a piece (see
/// [`nonempty_cond`]) that mention a loop variable, or `None` when there
/// are none (see [`split_loops`]: they keep the JIT's interval analysis as
/// precise as the guards it replaces).
fn piece_guard(lo: &Bound, hi: &Bound) -> Option<Expr> {
    let Guard::Cond(c) = nonempty_cond(lo, hi) else {
        return None;
    };
    let mut kept: Vec<Expr> = conjuncts(&c)
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
    let mut c = kept.pop()?;
    while let Some(d) = kept.pop() {
        c = Expr::bin(BinOp::And, d, c);
    }
    Some(c)
}

struct Splitter {
    /// Facts that hold at the current statement.
    facts: Facts,
    /// Nodes the pass may still add.
    budget: usize,
    /// Loops split.
    count: usize,
}

impl Splitter {
    fn stmts(&mut self, body: Vec<Stmt>, scope: &mut Vec<LoopVar>) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(body.len());
        for s in body {
            match s {
                Stmt::For {
                    var,
                    lower,
                    upper,
                    body,
                } => match self.try_split(var, &lower, &upper, &body, scope) {
                    Some(pieces) => {
                        if pieces.len() > 1 {
                            self.count += 1;
                        }
                        let several = pieces.len() > 1;
                        for (lo, hi, b) in pieces {
                            if b.is_empty() {
                                continue; // a piece that does nothing
                            }
                            let guard = if several { piece_guard(&lo, &hi) } else { None };
                            let l = self.descend(var, lo, hi, b, scope);
                            out.push(match guard {
                                Some(cond) => Stmt::If {
                                    cond,
                                    then: vec![l],
                                    els: Vec::new(),
                                },
                                None => l,
                            });
                        }
                    }
                    None => out.push(self.descend(var, lower, upper, body, scope)),
                },
                Stmt::If { cond, then, els } => {
                    let saved = self.facts.rows.len();
                    for c in conjuncts(&cond) {
                        if let Some(rows) = self.facts.comparison(c) {
                            self.facts.rows.extend(rows);
                        }
                    }
                    let then = self.stmts(then, scope);
                    self.facts.rows.truncate(saved);
                    let els = self.stmts(els, scope);
                    out.push(Stmt::If { cond, then, els });
                }
                Stmt::Block(b) => out.push(Stmt::Block(self.stmts(b, scope))),
                other => out.push(other),
            }
        }
        out
    }

    /// The loop, with the loops of its body processed (its bounds among
    /// the facts).
    fn descend(
        &mut self,
        var: LoopVar,
        lower: Bound,
        upper: Bound,
        body: Vec<Stmt>,
        scope: &mut Vec<LoopVar>,
    ) -> Stmt {
        let saved = self.facts.rows.len();
        self.facts.bound_facts(var, &lower, true);
        self.facts.bound_facts(var, &upper, false);
        scope.push(var);
        let body = self.stmts(body, scope);
        scope.pop();
        self.facts.rows.truncate(saved);
        Stmt::For {
            var,
            lower,
            upper,
            body,
        }
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
        let saved = self.facts.rows.len();
        self.facts.bound_facts(v, &lo, true);
        self.facts.bound_facts(v, &hi, false);
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

    /// The pieces of the loop (one or more) with their folded bodies,
    /// when splitting it is allowed and decides at least one atom (see
    /// [`split_loops`]).
    fn try_split(
        &mut self,
        var: LoopVar,
        lower: &Bound,
        upper: &Bound,
        body: &[Stmt],
        scope: &[LoopVar],
    ) -> Option<Vec<(Bound, Bound, Vec<Stmt>)>> {
        if var.0 >= self.facts.nv {
            return None;
        }
        let size = size_stmts(body);
        if size > SPLIT_MAX_BODY {
            return None;
        }
        let mut groups: Vec<Vec<Cut>> = Vec::new();
        visit_exprs(body, &mut |e| {
            if let Some(cs) = cuts_of(e, var, scope) {
                groups.push(cs);
            }
        });
        if groups.is_empty() {
            return None;
        }
        let saved = self.facts.rows.len();
        self.facts.bound_facts(var, lower, true);
        self.facts.bound_facts(var, upper, false);
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
        let mut inner = scope.to_vec();
        inner.push(var);
        let mut out = Vec::with_capacity(pieces.len());
        let mut decided = 0;
        let mut new_size = 0usize;
        for (lo, hi) in pieces {
            let lo = self.simplify_bound(lo, true);
            let hi = self.simplify_bound(hi, false);
            let saved = self.facts.rows.len();
            self.facts.bound_facts(var, &lo, true);
            self.facts.bound_facts(var, &hi, false);
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
        fn v(x: &Expr, env: &[i64], n: i64) -> i64 {
            match x {
                Expr::Aff(a) => a.eval(env, &[n]).expect("small"),
                Expr::Int(k) => *k,
                Expr::Binary(BinOp::FloorDiv, a, b) => v(a, env, n).div_euclid(v(b, env, n)),
                Expr::Binary(BinOp::CeilDiv, a, b) => {
                    let (a, b) = (v(a, env, n), v(b, env, n));
                    a.div_euclid(b) + i64::from(a.rem_euclid(b) != 0)
                }
                other => panic!("not affine: {other:?}"),
            }
        }
        match e {
            Expr::Bool(b) => *b,
            Expr::Binary(BinOp::And, a, b) => int_cond(a, env, n) && int_cond(b, env, n),
            Expr::Binary(BinOp::Or, a, b) => int_cond(a, env, n) || int_cond(b, env, n),
            Expr::Unary(crate::vocab::UnOp::Not, a) => !int_cond(a, env, n),
            Expr::Binary(op, a, b) => {
                let (x, y) = (v(a, env, n), v(b, env, n));
                match op {
                    BinOp::Ge => x >= y,
                    BinOp::Gt => x > y,
                    BinOp::Le => x <= y,
                    BinOp::Lt => x < y,
                    BinOp::Eq => x == y,
                    BinOp::Ne => x != y,
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

    /// Lower bounds of the inner loop `j` of the property tests (over
    /// `i`, `N`).
    fn lower_bounds() -> impl Strategy<Value = Bound> {
        prop_oneof![
            Just(Bound::aff(Affine::cst(0))),
            Just(Bound::aff(aff(1, 0, 0, 0))),
            Just(Bound::aff(aff(1, 0, 0, -1)).and(Affine::cst(0), 1)),
            Just(Bound::div(aff(1, 0, 0, 0), 2)),
        ]
    }

    /// Upper bounds of the inner loop `j` of the property tests.
    fn upper_bounds() -> impl Strategy<Value = Bound> {
        prop_oneof![
            Just(Bound::aff(aff(0, 0, 1, -1))),
            Just(Bound::aff(aff(1, 0, 0, 1))),
            Just(Bound::aff(aff(0, 0, 1, -1)).and(aff(1, 0, 0, 2), 1)),
            Just(Bound::div(aff(1, 0, 1, 0), 2)),
        ]
    }

    proptest! {
        /// Simplified guards agree with the original ones at every point
        /// the loops reach (brute force over small `N`), and never grow.
        #[test]
        fn simplified_guards_are_equivalent_where_reached(
            lo in lower_bounds(),
            hi in upper_bounds(),
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

    /// The assignments a program built by `nest` (or its rewrites, which
    /// keep its statement forms) executes for `N = n`, in order: the values
    /// of `(i, j)` and the value stored (an `Int` or a `select` of
    /// `Int`s).
    fn trace(f: &Function, n: i64) -> Vec<(i64, i64, i64)> {
        fn go(body: &[Stmt], env: &mut Vec<i64>, n: i64, out: &mut Vec<(i64, i64, i64)>) {
            for s in body {
                match s {
                    Stmt::For {
                        var,
                        lower,
                        upper,
                        body,
                    } => {
                        let (l, h) = (
                            bound_val(lower, true, env, n),
                            bound_val(upper, false, env, n),
                        );
                        for x in l..=h {
                            env[var.0] = x;
                            go(body, env, n, out);
                        }
                    }
                    Stmt::If { cond, then, els } => {
                        if int_cond(cond, env, n) {
                            go(then, env, n, out);
                        } else {
                            go(els, env, n, out);
                        }
                    }
                    Stmt::Block(b) => go(b, env, n, out),
                    Stmt::Assign { value, .. } => {
                        fn val(e: &Expr, env: &[i64], n: i64) -> i64 {
                            match e {
                                Expr::Int(k) => *k,
                                Expr::Select(c, a, b) => {
                                    if int_cond(c, env, n) {
                                        val(a, env, n)
                                    } else {
                                        val(b, env, n)
                                    }
                                }
                                other => panic!("unexpected {other:?}"),
                            }
                        }
                        out.push((env[0], env[1], val(value, env, n)));
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
        let mut out = Vec::new();
        go(&f.body, &mut vec![0, 0], n, &mut out);
        out
    }

    /// Conditions: `&&`, `||`, `!` of comparisons (as in `cmp_strategy`,
    /// plus `!=`).
    fn cond_strategy() -> impl Strategy<Value = Expr> {
        let atom = prop_oneof![
            4 => cmp_strategy(),
            1 => (-2i64..3, -1i64..2, -3i64..4).prop_map(|(cj, cn, k)| Expr::bin(
                BinOp::Ne,
                Expr::Aff(aff(0, cj, cn, k)),
                Expr::Int(0)
            )),
        ];
        atom.prop_recursive(2, 6, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::bin(BinOp::And, a, b)),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::bin(BinOp::Or, a, b)),
                inner.prop_map(|a| Expr::Unary(crate::vocab::UnOp::Not, Box::new(a))),
            ]
        })
    }

    proptest! {
        /// A cut `d·v >= e` of an atom separates exactly: each inequality
        /// `g >= 0` of the atom is, at every `v`, either "`v` in the cut"
        /// or "`v` not in the cut" (brute force over small values).
        #[test]
        fn cuts_are_exact(
            op in prop_oneof![
                Just(BinOp::Ge), Just(BinOp::Gt), Just(BinOp::Le), Just(BinOp::Lt), Just(BinOp::Eq)
            ],
            (ci, cj, cn, k) in (-3i64..4, -4i64..5, -2i64..3, -6i64..7),
            scale in 1i64..4,
        ) {
            // scale·(ci·i + cj·j + cn·N + k) op 0, cut on j with i outer.
            let a = aff(ci * scale, cj * scale, cn * scale, k);
            let e = Expr::bin(op, Expr::Aff(a.clone()), Expr::Int(0));
            let cuts = cuts_of(&e, J, &[I]);
            if cj == 0 {
                prop_assert!(cuts.is_none());
                return Ok(());
            }
            let cuts = cuts.expect("an atom");
            let ineqs = comparison_ineqs(op, &merged(&a).expect("small")).expect("small");
            prop_assert_eq!(cuts.len(), ineqs.len());
            for (c, g) in cuts.iter().zip(&ineqs) {
                prop_assert!(c.d >= 1);
                prop_assert!(!mentions(&c.e, J));
                for i in -3..4 {
                    for n in -3..4 {
                        for j in -12..13 {
                            let inside = c.d * j >= c.e.eval(&[i, j], &[n]).expect("small");
                            let holds = g.eval(&[i, j], &[n]).expect("small") >= 0;
                            // The cut is the inequality or its complement,
                            // the same side for every point.
                            let same = g.terms.iter().any(|&(s, x)| s == Sym::Loop(J) && x > 0);
                            prop_assert_eq!(inside, holds == same, "{:?} {:?} i={} j={} N={}", c, g, i, j, n);
                        }
                    }
                }
            }
        }

        /// Splitting never changes what runs: the assignments executed
        /// (their `(i, j)` and values) are the same, in the same order, for
        /// every small `N`; and the rewritten program is well formed.
        #[test]
        fn split_loops_preserves_the_trace(
            lo in lower_bounds(),
            hi in upper_bounds(),
            cond in cond_strategy(),
        ) {
            let f = nest(lo, hi, cond);
            let mut g = f.clone();
            let n_split = split_loops(&mut g);
            prop_assert!(g.check().is_ok(), "{}", g.to_c());
            for n in 1..7 {
                prop_assert_eq!(trace(&f, n), trace(&g, n), "N={}\n{}\n{}", n, f.to_c(), g.to_c());
            }
            if n_split > 0 {
                prop_assert_ne!(&f, &g);
            }
        }
    }

    #[test]
    fn split_removes_guards_on_the_loop_variable() {
        // for j in 0 ..= N-1 { if (j >= 1 && j != N - 1) ...; select }:
        // pieces [0, 0], [1, N-2], [N-1, N-1], no condition left.
        let c = Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Ge, Expr::Aff(aff(0, 1, 0, 0)), Expr::Int(1)),
            Expr::bin(
                BinOp::Ne,
                Expr::Aff(aff(0, 1, 0, 0)),
                Expr::Aff(aff(0, 0, 1, -1)),
            ),
        );
        let mut f = nest(Bound::aff(Affine::cst(0)), Bound::aff(aff(0, 0, 1, -1)), c);
        // N >= 3 (so that the three pieces are non-empty).
        f.context.pieces[0][0].aff.constant = -3;
        let mut g = f.clone();
        assert_eq!(split_loops(&mut g), 1);
        let Stmt::For { body, .. } = &g.body[0] else {
            panic!("outer loop")
        };
        assert_eq!(body.len(), 3, "{}", g.to_c());
        let text = g.to_c();
        assert!(!text.contains("if (") && !text.contains(" ? "), "{text}");
        assert!(text.contains("for (j = 1; j <= N - 2; j++)"), "{text}");
        for n in 3..7 {
            assert_eq!(trace(&f, n), trace(&g, n));
        }
        // Nothing to decide: unchanged.
        let c = Expr::bin(BinOp::Ge, Expr::Aff(aff(0, 1, 0, 0)), Expr::Int(0));
        let f = nest(Bound::aff(Affine::cst(0)), Bound::aff(aff(0, 0, 1, -1)), c);
        let mut g = f.clone();
        assert_eq!(split_loops(&mut g), 0);
    }

    #[test]
    fn data_dependent_conjunct_keeps_its_evaluation() {
        // `Y[0] > 0 && j >= 1` where `j >= 1` is false: the load is still
        // evaluated (`x && false` folds only for infallible `x`).
        let load = Expr::bin(BinOp::Gt, Expr::load(0, vec![Expr::Int(0)]), Expr::Int(0));
        let j_ge_1 = Expr::bin(BinOp::Ge, Expr::Aff(aff(0, 1, 0, 0)), Expr::Int(1));
        let facts = Facts {
            nv: 2,
            np: 1,
            // j <= 0
            rows: vec![vec![0, -1, 0, 0]],
        };
        let mut n = 0;
        let e = fold_expr(
            &facts,
            Expr::bin(BinOp::And, load.clone(), j_ge_1.clone()),
            J,
            &[I, J],
            &mut n,
        );
        assert_eq!(n, 1);
        assert_eq!(e, Expr::bin(BinOp::And, load.clone(), Expr::Bool(false)));
        // Infallible left operand: folds to false.
        let e = fold_expr(
            &facts,
            Expr::bin(BinOp::And, j_ge_1.clone(), j_ge_1),
            J,
            &[I, J],
            &mut n,
        );
        assert_eq!(e, Expr::Bool(false));
    }
}
