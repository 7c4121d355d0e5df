//! Loop interchange for locality ([`interchange_loops`]): the innermost
//! loop of an accumulation nest moves out by one level when the loop it
//! crosses walks memory more contiguously.
//!
//! Must not know about: schedules, accumulators, the JIT.

use super::affine::mentions;
use super::facts::{constraint_at, Facts};
use super::sparse::{reads_array, Uses};
use super::walk::*;
use super::*;
use crate::codegen::loop_ast::{Cast, MathFn};
use crate::poly::Set;
use crate::vocab::{ElemType, UnOp};

/// Cost of a load that walks memory with a stride other than 1 in the
/// inner loop (a new cache line per iteration), against 1 for a
/// contiguous one and 0 for one the inner loop does not move.
const STRIDED: usize = 4;

/// Swaps `for (o ...) { for (i ...) { N } }` into `for (i ...) { for (o
/// ...) { N } }`, where `N` is `A[x] op= E` or a perfect nest of loops
/// `for (b_1 ...) { ... for (b_k ...) { A[x] op= E } }` around it, where
/// that walks memory better.
///
/// Rule: the loop over `i`'s bounds do not mention `o`, and the bounds of
/// the `b_j` do not mention `i`; the accumulation's affine index `x` does
/// not mention `i` and determines `o` whatever the `b_j` (`o` is a linear
/// function of `x` and outer variables; for `k = 0`: `x` mentions `o`);
/// `E` reads neither `A` nor anything with a draw, `categorical` or
/// external call; and every operation of `E` that may fail (an int
/// operation, a data-dependent load) mentions none of `o, b_1, ..., b_k`
/// and is not evaluated under a condition that mentions one of them (a
/// `select` branch, the right operand of `&&`, `||`), except that a
/// data-dependent load may have affine index positions that mention them
/// when its array has no domain predicate or every constraint of its
/// (convex) domain that involves such a position involves no
/// data-dependent one and is implied by the context and the loops'
/// bounds.
///
/// The accumulation may also stand in bindings (`Bind u := e ... { A[x]
/// op= E }`, directly in the loop over `i`, `k = 0`) whose bounds, guard
/// and value mention neither `o` nor read `A`: each is one value per `i`
/// (DMM's per-term counts rebuilt, `for a { for d { Bind k := z[d] {
/// n[k][a] += X[d][a] } } }`, run the documents outside). Their failures,
/// like `E`'s, then depend on `i` and outer variables only, and the
/// argument below holds with `u` a function of `i`; a load or an
/// accumulation that mentions `u` moves with `i` (costed [`STRIDED`] with
/// `i` inside, never a register). The binding stays around the
/// accumulation; [`super::hoist_bindings`] later moves it out of `o`.
///
/// Profitability, `k = 0`: the sum over `E`'s loads and the accumulation
/// (costed as a load and a store when `o` is inner, free when `i` is: a
/// register) of 0 when the inner loop does not move them, 1 when their
/// last index is the inner variable plus terms free of it (other
/// positions free of it), [`STRIDED`] otherwise, is lower with `o` inside
/// than with `i` inside (`C[i][j] += A[i][k] * B[k][j]` becomes the `i, k,
/// j` order; CoxPH's `I[a][b] += … R2[first[i]][a][b] …` runs the
/// subjects outside the entries). `k >= 1`: the loop crossed becomes the
/// middle one, around the `b_j`; a load it moves is loaded anew (another
/// row) at each of its iterations, one it does not move once around the
/// `b_j`. Swapped when fewer of `E`'s loads and the accumulation (counted
/// twice, a load and a store) mention `o` than mention `i` (CoxPH's
/// nest, `a, i, b` after the first swap, becomes `i, a, b`: `event[i]`,
/// `f[i]`, `first[i]`, `m[i]`, `S0[i]` are read once per subject instead
/// of once per row `a`, and the rows `R2[first[i]][a]` of consecutive `a`
/// are adjacent; matmul's `i, k, j` stays: `C[i][j]` would move too).
///
/// Why this is exact: distinct `o` update distinct elements of `A` that
/// `E` does not read, so an element's terms all come from one `o`, and
/// it receives them in the lexicographic order of `(i, b_1, ..., b_k)` in
/// both orders; each term is computed from the same values: the results
/// are identical, floats included. A run that fails: whether `E` fails at a
/// point does not depend on `o` and the `b_j` (the operations that may
/// fail, and whether they run, depend on `i` and outer variables only; an
/// affine position is inside the domain at every point of the loops), and
/// whether the `b_j` nest runs at all depends on `o` only, so the first
/// failing point in either order is the first `o` whose nest runs, the
/// first failing `i`, the first point of the nest, with the same error.
/// (Affine accesses are in bounds under the access contract. An int
/// accumulation that overflows may do so first at another element in
/// the new order; the error, "integer overflow", names no point.)
///
/// Returns the number of nests interchanged.
pub fn interchange_loops(f: &mut Function) -> usize {
    let mut x = Interchange::new(f);
    f.body = rewrite_stmts(&mut x, std::mem::take(&mut f.body));
    x.swapped
}

pub(super) struct Interchange {
    facts: Facts,
    arrays: Vec<(ElemType, Option<Set>)>,
    locals: Vec<ElemType>,
    np: usize,
    swapped: usize,
}

impl StmtRewrite for Interchange {
    fn on_for(&mut self, l: ForLoop, out: &mut Vec<Stmt>) {
        let l = l.map_body(|b| rewrite_stmts(self, b));
        match self.swap(&l) {
            Some(s) => {
                self.swapped += 1;
                out.push(s);
            }
            None => out.push(Stmt::For(l)),
        }
    }
}

impl Interchange {
    pub(super) fn new(f: &Function) -> Interchange {
        Interchange {
            facts: Facts::of_context(f),
            arrays: f.arrays.iter().map(|a| (a.ty, a.domain.clone())).collect(),
            locals: f.locals.iter().map(|l| l.ty).collect(),
            np: f.params.len(),
            swapped: 0,
        }
    }

    /// Whether `e` can neither fail nor have an effect: its loads are
    /// affine (in bounds under the access contract), its arithmetic is
    /// float (an int operation may overflow), and it holds no draw or
    /// call ([`Self::safe`] with every operation under a condition on the
    /// moving loop).
    pub(super) fn cannot_fail(&self, e: &Expr) -> bool {
        self.safe(e, &[], true)
    }

    /// Whether the statements `body` can neither fail nor have an effect
    /// beyond their stores: every expression [`Self::cannot_fail`], every
    /// store and accumulation at an affine index, accumulations into
    /// float arrays or by `min`/`max` (an int sum may overflow), and no
    /// local set or binding.
    pub(super) fn stmts_cannot_fail(&self, body: &[Stmt]) -> bool {
        let ok = |e: &Expr| self.cannot_fail(e);
        body.iter().all(|s| match s {
            Stmt::For(l) => self.stmts_cannot_fail(&l.body),
            Stmt::If { cond, then, els } => {
                ok(cond) && self.stmts_cannot_fail(then) && self.stmts_cannot_fail(els)
            }
            Stmt::Assign { index, value, .. } => index.iter().all(Expr::is_affine) && ok(value),
            Stmt::Accumulate(acc) => {
                let float = self
                    .arrays
                    .get(acc.array)
                    .is_some_and(|a| a.0 == ElemType::Float);
                acc.index.iter().all(Expr::is_affine)
                    && ok(&acc.value)
                    && (float || matches!(acc.op, ReduceOp::Min | ReduceOp::Max))
            }
            Stmt::Block(b) => self.stmts_cannot_fail(b),
            Stmt::SetLocal { .. } | Stmt::Bind(_) => false,
        })
    }

    /// The interchanged nest of the loop `l` over `o`, when the rule
    /// holds.
    fn swap(&mut self, l: &ForLoop) -> Option<Stmt> {
        let [Stmt::For(inner)] = l.body.as_slice() else {
            return None;
        };
        // The loops between `inner` and the accumulation: a perfect nest,
        // or bindings.
        let mut nest: Vec<&ForLoop> = Vec::new();
        let mut binds: Vec<&Binding> = Vec::new();
        let mut body = &inner.body;
        let acc = loop {
            match body.as_slice() {
                [Stmt::Accumulate(acc)] => break acc,
                [Stmt::For(b)] if binds.is_empty() => {
                    nest.push(b);
                    body = &b.body;
                }
                [Stmt::Bind(b)] if nest.is_empty() => {
                    binds.push(b);
                    body = &b.body;
                }
                _ => return None,
            }
        };
        let (o, i) = (l.var, inner.var);
        for b in &binds {
            let parts = [&b.guard, &b.value];
            if bound_mentions(&b.lower, o)
                || bound_mentions(&b.upper, o)
                || parts
                    .iter()
                    .any(|e| expr_mentions(e, o) || reads_array(e, acc.array))
            {
                return None;
            }
        }
        let bound: Vec<LoopVar> = binds.iter().map(|b| b.var).collect();
        if bound_mentions(&inner.lower, o) || bound_mentions(&inner.upper, o) {
            return None;
        }
        let idx: Vec<&Affine> = acc
            .index
            .iter()
            .map(|e| match e {
                Expr::Aff(a) => Some(a),
                _ => None,
            })
            .collect::<Option<_>>()?;
        if idx.iter().any(|a| mentions(a, i)) || reads_array(&acc.value, acc.array) {
            return None;
        }
        // The loops whose iterations the accumulation's elements tell
        // apart: `o` and the nest below `inner`.
        let moving: Vec<LoopVar> = std::iter::once(o)
            .chain(nest.iter().map(|b| b.var))
            .collect();
        let inner_bounds_free_of_i = nest
            .iter()
            .all(|b| !bound_mentions(&b.lower, i) && !bound_mentions(&b.upper, i));
        if !inner_bounds_free_of_i || !determines(&idx, &moving) {
            return None;
        }
        let mark = self.facts.push_loop(o, &l.lower, &l.upper);
        self.facts.push_loop(i, &inner.lower, &inner.upper);
        for b in &nest {
            self.facts.push_loop(b.var, &b.lower, &b.upper);
        }
        let safe = self.safe(&acc.value, &moving, false);
        self.facts.rows.truncate(mark);
        if !safe {
            return None;
        }
        let target = Expr::Load {
            array: acc.array,
            index: acc.index.clone(),
        };
        let mut loads = Vec::new();
        collect_loads(&acc.value, &mut loads);
        if nest.is_empty() {
            let cost = |v: LoopVar| loads.iter().map(|e| load_cost(e, v)).sum::<usize>();
            let with_o_inside = cost(o) + 2 * load_cost(&target, o);
            // With `i` inside, what mentions a bound variable moves.
            let with_i_inside = loads
                .iter()
                .map(|e| {
                    if mentions_any(e, &bound) {
                        STRIDED
                    } else {
                        load_cost(e, i)
                    }
                })
                .sum::<usize>()
                + if mentions_any(&target, &bound) {
                    2 * STRIDED
                } else {
                    0
                };
            if with_o_inside >= with_i_inside {
                return None;
            }
        } else {
            // The middle loop of the nest: `i` as it stands, `o` swapped.
            // A load that the middle loop moves is reloaded (a new row) at
            // each of its iterations; one it does not move is loaded
            // once around the inner nest.
            let moved = |v: LoopVar| {
                loads.iter().filter(|e| expr_mentions(e, v)).count()
                    + if expr_mentions(&target, v) { 2 } else { 0 }
            };
            if moved(o) >= moved(i) {
                return None;
            }
        }
        Some(Stmt::For(swapped_nest(l, inner)))
    }

    /// Whether `e`'s failures do not depend on the loops `o` (see
    /// [`interchange_loops`]); `guarded` when `e` runs under a condition
    /// that mentions one of them.
    pub(super) fn safe(&self, e: &Expr, o: &[LoopVar], guarded: bool) -> bool {
        let here = mentions_any(e, o);
        match e {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => true,
            Expr::Load { array, index } => {
                if index.iter().all(Expr::is_affine) {
                    return true;
                }
                if guarded || !self.positions_inside(*array, index, o) {
                    return false;
                }
                index
                    .iter()
                    .all(|x| x.is_affine() || self.safe(x, o, false))
            }
            Expr::Unary(op, a) => {
                let fails = *op == UnOp::Neg && self.ty(a) != Some(ElemType::Float);
                !(fails && (here || guarded)) && self.safe(a, o, guarded)
            }
            Expr::Binary(op, a, b) => {
                let fails = !op.is_comparison()
                    && !matches!(op, BinOp::And | BinOp::Or)
                    && self.ty(a) != Some(ElemType::Float);
                if fails && (here || guarded) {
                    return false;
                }
                let lazy = matches!(op, BinOp::And | BinOp::Or);
                self.safe(a, o, guarded) && self.safe(b, o, guarded || (lazy && mentions_any(a, o)))
            }
            Expr::Select(c, a, b) => {
                let g = guarded || mentions_any(c, o);
                self.safe(c, o, guarded) && self.safe(a, o, g) && self.safe(b, o, g)
            }
            Expr::Cast(_, a) => self.safe(a, o, guarded),
            Expr::Math(f, args) => {
                let fails =
                    *f == MathFn::Abs && args.iter().any(|x| self.ty(x) != Some(ElemType::Float));
                !(fails && (here || guarded)) && args.iter().all(|x| self.safe(x, o, guarded))
            }
            // fails by its value, like an int operation
            Expr::Selection(s) => {
                !(here || guarded)
                    && [&s.value, &s.lower, &s.upper]
                        .into_iter()
                        .all(|x| self.safe(x, o, guarded))
            }
            Expr::Random(_) | Expr::Categorical(_) | Expr::External { .. } => false,
        }
    }

    /// A data-dependent load of `array` at `index` (its data-dependent
    /// positions free of the loops `o`): every domain constraint that
    /// involves an affine position mentioning one of them involves no
    /// data-dependent position and is implied by the facts.
    fn positions_inside(&self, array: ArrayId, index: &[Expr], o: &[LoopVar]) -> bool {
        let moving: Vec<bool> = index.iter().map(|x| mentions_any(x, o)).collect();
        if index.iter().zip(&moving).any(|(x, &m)| m && !x.is_affine()) {
            return false;
        }
        let Some((_, domain)) = self.arrays.get(array) else {
            return false;
        };
        let Some(domain) = domain else {
            return true;
        };
        if !moving.contains(&true) {
            return true;
        }
        let [piece] = domain.pieces() else {
            return false;
        };
        let n = index.len();
        for c in piece.constraints() {
            let row = &c.row;
            let on = |p: usize| row[self.np + p] != 0;
            if !(0..n).any(|p| on(p) && moving[p]) {
                continue;
            }
            if (0..n).any(|p| on(p) && !index[p].is_affine()) {
                return false;
            }
            let holds = constraint_at(self.np, row, index)
                .and_then(|a| self.facts.row(&a))
                .is_some_and(|r| self.facts.holds(&r, c.kind));
            if !holds {
                return false;
            }
        }
        true
    }

    /// The type of a plain expression, when known without a scope.
    fn ty(&self, e: &Expr) -> Option<ElemType> {
        Some(match e {
            Expr::Int(_) | Expr::Aff(_) => ElemType::Int,
            Expr::Float(_) => ElemType::Float,
            Expr::Bool(_) => ElemType::Bool,
            Expr::Local(l) => *self.locals.get(*l)?,
            Expr::Load { array, .. } => self.arrays.get(*array)?.0,
            Expr::Unary(UnOp::Not, _) => ElemType::Bool,
            Expr::Unary(UnOp::Neg, a) => self.ty(a)?,
            Expr::Binary(op, a, _) => {
                if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
                    ElemType::Bool
                } else {
                    self.ty(a)?
                }
            }
            Expr::Select(_, a, _) => self.ty(a)?,
            Expr::Cast(c, _) => match c {
                Cast::IntToFloat | Cast::BoolToFloat => ElemType::Float,
                Cast::FloatToInt | Cast::BoolToInt => ElemType::Int,
            },
            Expr::Math(f, args) => match f {
                MathFn::Abs => self.ty(args.first()?)?,
                _ => ElemType::Float,
            },
            Expr::Selection(_) => ElemType::Int,
            Expr::Random(_) | Expr::Categorical(_) | Expr::External { .. } => return None,
        })
    }
}

/// `for (i ...) { for (o ...) { B } }` from `outer = for (o ...) { inner
/// }` and `inner = for (i ...) { B }` (both unmarked: the parallel marks
/// are set on the final program).
pub(super) fn swapped_nest(outer: &ForLoop, inner: &ForLoop) -> ForLoop {
    ForLoop {
        var: inner.var,
        lower: inner.lower.clone(),
        upper: inner.upper.clone(),
        parallel: false,
        body: vec![Stmt::For(ForLoop {
            var: outer.var,
            lower: outer.lower.clone(),
            upper: outer.upper.clone(),
            parallel: false,
            body: inner.body.clone(),
        })],
    }
}

pub(super) fn bound_mentions(b: &Bound, v: LoopVar) -> bool {
    b.terms.iter().any(|t| mentions(&t.expr, v))
}

/// Whether `e` mentions the loop variable `v` anywhere (conservatively
/// `true` when it holds a draw or a call).
pub(super) fn expr_mentions(e: &Expr, v: LoopVar) -> bool {
    let u = Uses::of(e);
    u.opaque || u.vars.contains(&v)
}

/// Whether `e` mentions one of the loop variables `vs` (conservatively
/// `true` when it holds a draw or a call).
fn mentions_any(e: &Expr, vs: &[LoopVar]) -> bool {
    let u = Uses::of(e);
    u.opaque || vs.iter().any(|v| u.vars.contains(v))
}

/// Whether the affine index `idx` determines the loop variable `vs[0]`
/// over the loops `vs` (the other variables fixed): two points with
/// different `vs[0]` reach different elements, whatever the other `vs`.
/// With `M` the coefficient matrix of `idx` on `vs` (a row per position),
/// that holds when the unit row of `vs[0]` is in `M`'s row space
/// (`rank [M; e_0] = rank M`): then `vs[0] = λ·(idx − c)` for some `λ`.
/// For `vs = [o]` alone: `idx` mentions `o`. (`false` when a coefficient
/// overflows: the rewrite is then not made.)
fn determines(idx: &[&Affine], vs: &[LoopVar]) -> bool {
    let coef = |a: &Affine, v: LoopVar| {
        a.terms
            .iter()
            .filter(|(s, _)| *s == Sym::Loop(v))
            .try_fold(0i64, |acc, &(_, c)| acc.checked_add(c))
    };
    let rows: Option<Vec<Vec<i64>>> = idx
        .iter()
        .map(|a| vs.iter().map(|&v| coef(a, v)).collect())
        .collect();
    let Some(mut rows) = rows else {
        return false;
    };
    let n = vs.len();
    let r = crate::poly::linalg::rank(&rows, n);
    let mut unit = vec![0; n];
    unit[0] = 1;
    rows.push(unit);
    r > 0 && crate::poly::linalg::rank(&rows, n) == r
}

/// The loads of `e`, nested ones (in indices) included.
fn collect_loads<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    if matches!(e, Expr::Load { .. }) {
        out.push(e);
    }
    for c in e.children() {
        collect_loads(c, out);
    }
}

/// The cost of the load `e` with `v` the inner loop variable (see
/// [`interchange_loops`]).
fn load_cost(e: &Expr, v: LoopVar) -> usize {
    let Expr::Load { index, .. } = e else {
        return 0;
    };
    let Some((last, rest)) = index.split_last() else {
        return 0;
    };
    if !index.iter().any(|x| expr_mentions(x, v)) {
        return 0;
    }
    let unit = match last {
        Expr::Aff(a) => {
            a.terms
                .iter()
                .filter(|(s, _)| *s == Sym::Loop(v))
                .map(|(_, c)| *c)
                .sum::<i64>()
                .abs()
                == 1
        }
        _ => false,
    };
    if unit && !rest.iter().any(|x| expr_mentions(x, v)) {
        1
    } else {
        STRIDED
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aff(terms: &[(usize, i64)]) -> Affine {
        Affine {
            terms: terms
                .iter()
                .map(|&(v, c)| (Sym::Loop(LoopVar(v)), c))
                .collect(),
            constant: 0,
        }
    }

    /// `A[a][b]` and `A[a + b][b]` tell the rows `a` apart whatever `b`;
    /// `A[a + b]` (a diagonal: `(0, 1)` and `(1, 0)` meet) and `A[b]` do
    /// not; with no inner loop, an index that mentions `a` does.
    #[test]
    fn an_index_determines_the_crossed_loop_when_its_unit_row_is_in_the_row_space() {
        let (a, b) = (LoopVar(0), LoopVar(1));
        let det = |idx: &[Affine], vs: &[LoopVar]| {
            let refs: Vec<&Affine> = idx.iter().collect();
            determines(&refs, vs)
        };
        assert!(det(&[aff(&[(0, 1)]), aff(&[(1, 1)])], &[a, b]));
        assert!(det(&[aff(&[(0, 1), (1, 1)]), aff(&[(1, 1)])], &[a, b]));
        assert!(det(&[aff(&[(0, 2), (2, 1)])], &[a]));
        assert!(!det(&[aff(&[(0, 1), (1, 1)])], &[a, b]));
        assert!(!det(&[aff(&[(1, 1)])], &[a, b]));
        assert!(!det(&[aff(&[(2, 1)])], &[a]));
    }
}
