//! Rewrite 3: register accumulators ([`hoist_accumulators`]), and the
//! non-emptiness condition of a loop's bounds ([`nonempty_cond`]) that it
//! and index-set splitting guard with.
//!
//! Must not know about: facts, the solver.

use super::affine::*;
use super::walk::*;
use super::*;

/// Scalar replacement of accumulated array elements.
///
/// Rule (innermost enclosing loop only): let `L = for (v = lo; v <= hi;
/// v++) B` and let `X[idx] op= e` be an accumulation that is a top-level
/// statement of `B` (possibly inside `Block`s, but not inside an `if`, a
/// `Bind` or a nested `for` of `B`), where every index of `idx` is affine and mentions
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
    f.body = rewrite_stmts(&mut h, std::mem::take(&mut f.body));
    f.locals = h.locals;
    h.count
}

pub(super) struct Hoister {
    locals: Vec<Local>,
    /// Names in use (for fresh local names).
    names: Vec<String>,
    arrays: Vec<(String, crate::ir::types::ElemType)>,
    count: usize,
}

impl StmtRewrite for Hoister {
    fn on_for(&mut self, l: ForLoop, out: &mut Vec<Stmt>) {
        let l = l.map_body(|b| rewrite_stmts(self, b));
        out.extend(self.around_loop(l));
    }
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

    /// The loop, with its hoistable accumulators in locals (see
    /// [`hoist_accumulators`]).
    fn around_loop(&mut self, l: ForLoop) -> Vec<Stmt> {
        let mut inner_vars = vec![l.var];
        bound_vars(&l.body, &mut inner_vars);
        let mut cands: Vec<(ArrayId, Vec<Expr>)> = Vec::new();
        top_level_accumulations(&l.body, &mut cands);
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
            if only_accesses_at(&l.body, a, &idx) {
                chosen.push((a, idx));
            }
        }
        if chosen.is_empty() {
            return vec![Stmt::For(l)];
        }
        let guard = match nonempty_cond(&l.lower, &l.upper) {
            Guard::Never => return vec![Stmt::For(l)],
            g => g,
        };
        let mut body = l.body;
        let mut loads = Vec::new();
        let mut stores = Vec::new();
        for (a, idx) in chosen {
            let Some(t) = self.fresh_local(a) else {
                continue;
            };
            body = replace_accesses(body, a, &idx, t);
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
        seq.push(Stmt::For(ForLoop { body, ..l }));
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

/// `(array, index)` of the accumulations executed unconditionally by one
/// pass over `body` (top level and `Block`s only), without duplicates.
pub(super) fn top_level_accumulations(body: &[Stmt], out: &mut Vec<(ArrayId, Vec<Expr>)>) {
    for s in body {
        match s {
            Stmt::Accumulate(a) if !out.iter().any(|(b, i)| *b == a.array && *i == a.index) => {
                out.push((a.array, a.index.clone()));
            }
            Stmt::Block(b) => top_level_accumulations(b, out),
            _ => {}
        }
    }
}

/// True when every access to `array` in `body` has exactly the index
/// `idx` (syntactically).
pub(super) fn only_accesses_at(body: &[Stmt], array: ArrayId, idx: &[Expr]) -> bool {
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
            Expr::Random(r) => {
                r.args
                    .iter()
                    .chain(&r.point)
                    .all(|x| expr_ok(x, array, idx))
                    && expr_ok(&r.seed, array, idx)
            }
            Expr::External { args, .. } => args.iter().all(|x| expr_ok(x, array, idx)),
            Expr::Selection(s) => [&s.value, &s.lower, &s.upper]
                .into_iter()
                .all(|x| expr_ok(x, array, idx)),
            // Its weight is evaluated in a loop of its own, which
            // `replace_expr` does not enter: allowed only when nothing in
            // it (condition, weight, seed, point) touches `array`.
            Expr::Categorical(_) => !loads_inside(e, array),
        }
    }
    body.iter().all(|s| match s {
        // Bounds are affine: no access.
        Stmt::For(ForLoop { body, .. }) | Stmt::Block(body) => only_accesses_at(body, array, idx),
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
        | Stmt::Accumulate(Accumulation {
            array: a,
            index,
            value,
            ..
        }) => {
            (*a != array || index.as_slice() == idx)
                && index.iter().all(|x| expr_ok(x, array, idx))
                && expr_ok(value, array, idx)
        }
        Stmt::SetLocal { value, .. } => expr_ok(value, array, idx),
        // Bounds are affine: no access.
        Stmt::Bind(b) => {
            expr_ok(&b.guard, array, idx)
                && expr_ok(&b.value, array, idx)
                && only_accesses_at(&b.body, array, idx)
        }
    })
}

/// `e` has a load from `array` anywhere, inside draws too (unlike
/// `sparse`'s conservative `reads_array`, which counts any draw as a read:
/// the hoisted accumulator is a plain array here, which a draw can only
/// read through a load).
fn loads_inside(e: &Expr, array: ArrayId) -> bool {
    matches!(e, Expr::Load { array: a, .. } if *a == array)
        || e.children().into_iter().any(|x| loads_inside(x, array))
}

/// `e` with loads of `array[idx]` replaced by the local `t`.
pub(super) fn replace_expr(e: Expr, array: ArrayId, idx: &[Expr], t: LocalId) -> Expr {
    match e {
        Expr::Load { array: a, index } if a == array && index.as_slice() == idx => Expr::Local(t),
        // A categorical draw is never reached with an access to replace
        // (`only_accesses_at` refuses them); `map_children` keeps it.
        e => map_children(e, |x| replace_expr(x, array, idx, t)),
    }
}

/// `body` with every access to `array[idx]` turned into uses and
/// definitions of the local `t`.
pub(super) fn replace_accesses(
    body: Vec<Stmt>,
    array: ArrayId,
    idx: &[Expr],
    t: LocalId,
) -> Vec<Stmt> {
    rewrite_stmts(&mut Replace { array, idx, t }, body)
}

/// The rewrite of [`replace_accesses`].
struct Replace<'a> {
    array: ArrayId,
    idx: &'a [Expr],
    t: LocalId,
}

impl Replace<'_> {
    fn expr(&self, e: Expr) -> Expr {
        replace_expr(e, self.array, self.idx, self.t)
    }
    /// True when `array[index]` is the replaced element.
    fn is_target(&self, array: ArrayId, index: &[Expr]) -> bool {
        array == self.array && index == self.idx
    }
}

impl StmtRewrite for Replace<'_> {
    fn on_bind(&mut self, b: Binding, out: &mut Vec<Stmt>) {
        let guard = self.expr(b.guard);
        let value = self.expr(b.value);
        let body = rewrite_stmts(self, b.body);
        out.push(Stmt::from(Binding {
            guard,
            value,
            body,
            ..b
        }));
    }

    fn on_if(&mut self, cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>, out: &mut Vec<Stmt>) {
        let cond = self.expr(cond);
        let then = rewrite_stmts(self, then);
        let els = rewrite_stmts(self, els);
        out.push(Stmt::If { cond, then, els });
    }

    fn on_leaf(&mut self, s: Stmt, out: &mut Vec<Stmt>) {
        let t = self.t;
        out.push(match s {
            Stmt::Assign {
                array,
                index,
                value,
            } if self.is_target(array, &index) => Stmt::SetLocal {
                local: t,
                value: self.expr(value),
            },
            Stmt::Accumulate(a) if self.is_target(a.array, &a.index) => Stmt::SetLocal {
                local: t,
                value: acc_value(a.op, t, self.expr(a.value)),
            },
            leaf => map_leaf_exprs(leaf, |x| self.expr(x)).unwrap_or_else(|s| s),
        });
    }
}

/// `t op v`: the value an accumulation `x op= v` stores, with the old
/// value in the local `t` (`And`/`Or` stay lazy in `v`, as accumulations
/// are).
pub(super) fn acc_value(op: ReduceOp, t: LocalId, v: Expr) -> Expr {
    Expr::bin(acc_bin_op(op), Expr::Local(t), v)
}

/// Whether a loop with these bounds runs at least once.
pub(super) enum Guard {
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
pub(super) fn nonempty_cond(lower: &Bound, upper: &Bound) -> Guard {
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
    Guard::Cond(Expr::and_all(conds))
}

/// The value of one bound term: `⌈e/d⌉` (lower) or `⌊e/d⌋` (upper).
pub(super) fn bound_value(t: &BoundTerm, lower: bool) -> Expr {
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
