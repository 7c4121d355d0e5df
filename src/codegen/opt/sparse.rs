//! Rewrite 5 (issue 15): sparse in-place updates ([`sparse_updates`]):
//! guarded updates (`A[x] = A[x] + (c ? d : 0)` → `if (c) A[x] = A[x] +
//! d`) and loops that select one iteration by a data-dependent equality
//! (`for (v ...) if (... && v == e && ...) S` → a [`Binding`] `v := e`),
//! so that a count updated once per step costs O(1), not O(V·K).
//!
//! Must not know about: facts, the solver, accumulators.

use super::hoist::{nonempty_cond, Guard};
use super::walk::*;
use super::*;
use crate::vocab::ElemType;

/// Sparse updates: guarded updates and selected loops.
///
/// # (a) Guarded updates
/// A statement `A[x] = A[x] op (c ? d : id)` — the load of the same array
/// at the syntactically same index `x`, every index affine, `op` one of
/// `+ − * max min && ||` and `id` its right identity at `A`'s type (`0`,
/// `0`, `1`, `i64::MIN`/`−∞`, `i64::MAX`/`+∞`, `true`, `false`) — becomes
/// `if (c) A[x] = A[x] op d`; an accumulation `A[x] op= (c ? d : id)`
/// becomes `if (c) A[x] op= d`; and `A[x] = (A[x] op1 (c1 ? d1 : id)) op2
/// (c2 ? d2 : id)` (both identities equal, e.g. `+` then `−`) becomes
/// `if (c1) A[x] = A[x] op1 d1; if (c2) A[x] = A[x] op2 d2`.
/// Preconditions: no `c`, `d` reads `A`; for `&&`/`||` (where the
/// original does not evaluate `c` when `A[x]` decides) `c` cannot fail.
///
/// Why this is exact: when `c` is false the original stores
/// `A[x] op id = A[x]` back, which is nothing; when true, the same value.
/// The loads of `A[x]` are affine (they cannot fail under the access
/// contract) and `c`, `d` do not read `A`, so evaluating `c` before the
/// load, or `c2`, `d2` after the first store, reads the same values, and
/// the fallible steps (`c1`, `d1`, `op1`, `c2`, `d2`, `op2`) run in the
/// same order (`A[x] op id` cannot overflow). For ints the result is
/// identical; for floats `x + 0.0` and `x` differ only when `x` is `−0.0`
/// (the results are equal values, `+0.0` against `−0.0`), which is
/// accepted; `x * 1.0`, `max(x, −∞)`, `min(x, +∞)` are `x` bit for bit.
///
/// # (b) Selected loops
/// Let `L = for (v = lo; v <= hi; v++) S` where `S` is one statement that
/// executes as `if (c_1 && ... && c_n) R` with lazy conjuncts in this
/// order: an `if` without `else` (its conjuncts, then, when none selects
/// `v` and its branch is one statement, that statement's), or a
/// [`Binding`] whose bounds do not mention `v` (the conjuncts of its
/// non-emptiness `lo' <= hi'`, then those of its guard). When some `c_j`
/// is `v == e` or `e == v`, where `e` and every `c_i` (`i < j`) do not
/// mention `v`, read no array or local that `S` writes and call no
/// external function (nor contain a categorical draw), `L` becomes
/// `Bind v := e in [lo, hi] if (c_1 && ... && c_{j−1}) { R' }` where `R'`
/// is what remains: the `if` with conjuncts `c_{j+1} ... c_n` (none: its
/// branch), or the inner binding with the rest of its guard.
///
/// Why this is exact: every iteration of `L` evaluates `c_1 ... c_{j−1}`
/// and then `e` (lazily, in this order) to the same values, with the same
/// failures, since they neither depend on `v` nor read what the
/// iterations write; an inner binding's non-emptiness is the same in
/// every iteration (its bounds do not mention `v`) and cannot fail. So
/// when they hold, only the iteration `v = e` (if `lo <= e <= hi`) gets
/// past `c_j`, and it runs exactly `R'`; the binding evaluates the same
/// conjuncts once, `e` once, and runs `R'` with `v = e` under the same
/// range check. External functions are excluded because they are called
/// fewer times.
///
/// A loop whose body is several statements `S_1 ... S_m` is first split
/// into `m` loops over the same range (*fission*) when each of the
/// loops then becomes a binding as above, and: no statement sets a local;
/// every access is affine (data-dependent indices only as binding
/// values) and no operation can fail except by an integer overflow (no
/// draws, external calls, divisions other than by a constant `>= 1`);
/// and every array written in the body is accessed, everywhere in it,
/// with one index position holding the syntactically same affine `a·v +
/// r` (`a ≠ 0`, `r` free of variables bound in the body). Then distinct
/// iterations touch disjoint elements of the written arrays and read
/// nothing another iteration writes, so running all first statements,
/// then all second ones, ..., stores the same values; a run that fails
/// fails in both orders (each statement instance sees the same values);
/// when several instances would fail, the first in the new order reports
/// (an overflow carries no location, a selection names its value: the
/// order, as everywhere, is the compiler's choice).
///
/// # (c) Where
/// Loops are processed inside out. In the body of each loop, (a) is
/// applied tentatively (to its statements and to the statements the `if`s
/// without `else` of a selection chain lead to); it is kept only when
/// (b) then succeeds on that loop, otherwise the branch-free `select`
/// form stays (it vectorizes and hoists into registers).
///
/// Under the access contract (affine accesses are in bounds) the
/// rewritten program computes the same arrays; a program that violates
/// it may report a contract violation in an iteration the binding skips.
///
/// # (d) Scatter interchange
/// A loop `for (k ...) { for (j_1 ...) { ... for (j_m ...) B } }` (a
/// perfect nest: each body exactly one loop, whose bounds do not mention
/// `k`) that is not selected itself is interchanged into
/// `for (j_1 ...) { ... for (j_m ...) { for (k ...) B } }`, with the
/// smallest `m` for which the inner loop over `k` then becomes bindings as
/// above, when the body of the loop over `k` passes the checks of fission
/// (no local set, failures only by overflow, every written array accessed
/// everywhere at one index position `a·k + r` with `r` free of the `j_i`
/// and of the variables bound in `B`): then the iterations of `k` touch
/// disjoint elements of the written arrays and read none another writes,
/// so each element still receives its contributions in the same
/// lexicographic order of `(j_1, ..., j_m)`, and the results are
/// identical, floats included. E.g. a histogram
/// `for k { for j { h[k] += (z[j] == k) ? 1 : 0 } }` becomes
/// `for j { Bind k := z[j] { h[k] += 1 } }`, and a per-term one
/// `for k { for a { for j { n[k][a] += (z[j] == k) ? X[j][a] : 0 } } }`
/// becomes `for a { for j { Bind k := z[j] { n[k][a] += X[j][a] } } }`.
///
/// Returns the counts of the rewrites applied.
pub fn sparse_updates(f: &mut Function) -> SparseCounts {
    let mut s = Sparse {
        types: f.arrays.iter().map(|a| a.ty).collect(),
        counts: SparseCounts::default(),
    };
    f.body = rewrite_stmts(&mut s, std::mem::take(&mut f.body));
    s.counts
}

/// What [`sparse_updates`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SparseCounts {
    /// Guarded updates kept ((a); a statement with two selects counts
    /// once).
    pub updates: usize,
    /// Bindings made of loops ((b), (d)).
    pub selected: usize,
    /// Loop pairs interchanged ((d)).
    pub interchanged: usize,
}

/// The rewrite of [`sparse_updates`]: the arrays' element types and the
/// counts so far.
struct Sparse {
    types: Vec<ElemType>,
    counts: SparseCounts,
}

impl StmtRewrite for Sparse {
    fn on_for(&mut self, l: ForLoop, out: &mut Vec<Stmt>) {
        let l = l.map_body(|b| rewrite_stmts(self, b));
        if let Some(binds) = self.select(&l) {
            out.extend(binds);
        } else if let Some(scatter) = self.interchange(&l) {
            out.push(scatter);
        } else if let Some(pieces) = self.split_scatters(&l) {
            out.extend(pieces);
        } else {
            out.push(Stmt::For(l));
        }
    }
}

impl Sparse {
    /// (a) tentatively, then (b) on the loop `l` (see [`sparse_updates`]);
    /// counts what is kept.
    fn select(&mut self, l: &ForLoop) -> Option<Vec<Stmt>> {
        let mut updates = 0;
        let cand: Vec<Stmt> = l
            .body
            .iter()
            .flat_map(|s| guarded_chain(s, &self.types, &mut updates))
            .collect();
        let binds = select_loop(l.var, &l.lower, &l.upper, &cand)?;
        self.counts.updates += updates;
        self.counts.selected += binds.len();
        Some(binds)
    }

    /// (d) after fission: a loop over `k` whose body is several statements
    /// (two histograms fused over `k`), split into one loop per statement
    /// (legal by [`fission_ok`], as in (b)) when every piece then becomes
    /// bindings, directly or by the interchange of (d); `None`, nothing
    /// counted, otherwise.
    fn split_scatters(&mut self, l: &ForLoop) -> Option<Vec<Stmt>> {
        if l.body.len() < 2 || !fission_ok(l.var, &l.body) {
            return None;
        }
        let before = self.counts;
        let mut out = Vec::new();
        for s in &l.body {
            let piece = ForLoop {
                var: l.var,
                parallel: false,
                lower: l.lower.clone(),
                upper: l.upper.clone(),
                body: vec![s.clone()],
            };
            if let Some(binds) = self.select(&piece) {
                out.extend(binds);
            } else if let Some(scatter) = self.interchange(&piece) {
                out.push(scatter);
            } else {
                self.counts = before;
                return None;
            }
        }
        Some(out)
    }

    /// (d) on the loop `l` (see [`sparse_updates`]): the loop over `k`
    /// sunk below the shallowest loop of its perfect nest where it becomes
    /// bindings.
    fn interchange(&mut self, l: &ForLoop) -> Option<Stmt> {
        // the perfect nest below `l`: each body exactly one loop
        let mut chain: Vec<&ForLoop> = Vec::new();
        let mut body = &l.body;
        while let [Stmt::For(inner)] = body.as_slice() {
            chain.push(inner);
            body = &inner.body;
        }
        if chain.is_empty() || !fission_ok(l.var, &l.body) {
            return None;
        }
        for depth in 0..chain.len() {
            let mentions_k = chain[depth]
                .lower
                .terms
                .iter()
                .chain(&chain[depth].upper.terms)
                .any(|t| affine::mentions(&t.expr, l.var));
            if mentions_k {
                return None;
            }
            let swapped = ForLoop {
                var: l.var,
                parallel: false,
                lower: l.lower.clone(),
                upper: l.upper.clone(),
                body: chain[depth].body.clone(),
            };
            let Some(binds) = self.select(&swapped) else {
                continue;
            };
            self.counts.interchanged += 1;
            // the loops above the binding, innermost first
            let mut stmts = binds;
            for inner in chain[..=depth].iter().rev() {
                stmts = vec![Stmt::For(ForLoop {
                    var: inner.var,
                    parallel: false,
                    lower: inner.lower.clone(),
                    upper: inner.upper.clone(),
                    body: stmts,
                })];
            }
            return stmts.pop();
        }
        None
    }
}

// ---------------------------------------------------------------------------
// (a) Guarded updates.

/// `s` with (a) applied to it when it is a guarded update, or to the
/// single statement its `if`s without `else` lead to; `n` counts the
/// updates rewritten.
fn guarded_chain(s: &Stmt, types: &[ElemType], n: &mut usize) -> Vec<Stmt> {
    match s {
        Stmt::If { cond, then, els } if els.is_empty() && then.len() == 1 => {
            let then = guarded_chain(&then[0], types, n);
            vec![Stmt::If {
                cond: cond.clone(),
                then,
                els: Vec::new(),
            }]
        }
        leaf => match guarded_update(leaf, types) {
            Some(v) => {
                *n += 1;
                v
            }
            None => vec![leaf.clone()],
        },
    }
}

/// The guarded form of an update (see [`sparse_updates`] (a)), or `None`
/// when `s` is not one.
pub(super) fn guarded_update(s: &Stmt, types: &[ElemType]) -> Option<Vec<Stmt>> {
    match s {
        Stmt::Assign {
            array,
            index,
            value,
        } => {
            let ty = *types.get(*array)?;
            if !index.iter().all(Expr::is_affine) {
                return None;
            }
            let Expr::Binary(op2, lhs, rhs) = value else {
                return None;
            };
            let (c2, d2) = selected_operand(rhs, *op2, ty)?;
            let target = Expr::load(*array, index.clone());
            let update = |op: BinOp, c: &Expr, d: &Expr| Stmt::If {
                cond: c.clone(),
                then: vec![Stmt::Assign {
                    array: *array,
                    index: index.clone(),
                    value: Expr::bin(op, target.clone(), d.clone()),
                }],
                els: Vec::new(),
            };
            let mut parts = Vec::new();
            if **lhs == target {
                parts.push((*op2, c2, d2));
            } else {
                let Expr::Binary(op1, inner, rhs1) = &**lhs else {
                    return None;
                };
                if **inner != target {
                    return None;
                }
                let (c1, d1) = selected_operand(rhs1, *op1, ty)?;
                parts.push((*op1, c1, d1));
                parts.push((*op2, c2, d2));
            }
            let ok = parts.iter().all(|(op, c, d)| {
                !reads_array(c, *array)
                    && !reads_array(d, *array)
                    && (!matches!(op, BinOp::And | BinOp::Or) || fold::infallible(c))
            });
            ok.then(|| parts.iter().map(|(op, c, d)| update(*op, c, d)).collect())
        }
        Stmt::Accumulate(a) => {
            let ty = *types.get(a.array)?;
            if !a.index.iter().all(Expr::is_affine) {
                return None;
            }
            let op = acc_bin_op(a.op);
            let (c, d) = selected_operand(&a.value, op, ty)?;
            let lazy = matches!(a.op, ReduceOp::And | ReduceOp::Or);
            if reads_array(c, a.array) || reads_array(d, a.array) || (lazy && !fold::infallible(c))
            {
                return None;
            }
            Some(vec![Stmt::If {
                cond: c.clone(),
                then: vec![Stmt::Accumulate(Accumulation {
                    value: d.clone(),
                    ..a.clone()
                })],
                els: Vec::new(),
            }])
        }
        _ => None,
    }
}

/// `(c, d)` when `e` is `c ? d : id` with `id` the right identity of `op`
/// at type `ty` (see [`sparse_updates`]).
pub(super) fn selected_operand(e: &Expr, op: BinOp, ty: ElemType) -> Option<(&Expr, &Expr)> {
    let Expr::Select(c, d, id) = e else {
        return None;
    };
    let is_id = match (op, ty, &**id) {
        (BinOp::Add | BinOp::Sub, ElemType::Int, Expr::Int(0)) => true,
        (BinOp::Mul, ElemType::Int, Expr::Int(1)) => true,
        (BinOp::Max, ElemType::Int, Expr::Int(k)) => *k == i64::MIN,
        (BinOp::Min, ElemType::Int, Expr::Int(k)) => *k == i64::MAX,
        // `0.0` or `−0.0`: see the float remark of `sparse_updates`.
        (BinOp::Add | BinOp::Sub, ElemType::Float, Expr::Float(x)) => *x == 0.0,
        (BinOp::Mul, ElemType::Float, Expr::Float(x)) => *x == 1.0,
        (BinOp::Max, ElemType::Float, Expr::Float(x)) => *x == f64::NEG_INFINITY,
        (BinOp::Min, ElemType::Float, Expr::Float(x)) => *x == f64::INFINITY,
        (BinOp::And, ElemType::Bool, Expr::Bool(b)) => *b,
        (BinOp::Or, ElemType::Bool, Expr::Bool(b)) => !*b,
        _ => false,
    };
    is_id.then_some((&**c, &**d))
}

// ---------------------------------------------------------------------------
// What expressions and statements read and write.

/// The symbols an expression uses: arrays read, locals read, loop
/// variables mentioned; `opaque` when it calls an external function or
/// contains a categorical draw (whose reads are not inspected).
#[derive(Default)]
pub(super) struct Uses {
    pub(super) arrays: Vec<ArrayId>,
    pub(super) locals: Vec<LocalId>,
    pub(super) vars: Vec<LoopVar>,
    pub(super) opaque: bool,
}

impl Uses {
    /// The uses of `e`.
    pub(super) fn of(e: &Expr) -> Uses {
        let mut u = Uses::default();
        u.add(e);
        u
    }

    fn add_affine(&mut self, a: &Affine) {
        for &(s, c) in &a.terms {
            if let (Sym::Loop(v), true) = (s, c != 0) {
                self.vars.push(v);
            }
        }
    }

    /// Adds the uses of `e`.
    pub(super) fn add(&mut self, e: &Expr) {
        match e {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) => {}
            Expr::Aff(a) => self.add_affine(a),
            Expr::Local(l) => self.locals.push(*l),
            Expr::Load { array, index } => {
                self.arrays.push(*array);
                index.iter().for_each(|x| self.add(x));
            }
            Expr::Unary(_, a) | Expr::Cast(_, a) => self.add(a),
            Expr::Binary(_, a, b) => {
                self.add(a);
                self.add(b);
            }
            Expr::Select(c, a, b) => {
                self.add(c);
                self.add(a);
                self.add(b);
            }
            Expr::Math(_, args) => args.iter().for_each(|x| self.add(x)),
            Expr::Random(r) => {
                r.args.iter().chain(&r.point).for_each(|x| self.add(x));
                self.add(&r.seed);
            }
            Expr::Selection(s) => {
                self.add(&s.value);
                self.add(&s.lower);
                self.add(&s.upper);
            }
            Expr::External { .. } | Expr::Categorical(_) => self.opaque = true,
        }
    }
}

/// Whether `e` loads from `array` (conservatively `true` when opaque).
pub(super) fn reads_array(e: &Expr, array: ArrayId) -> bool {
    let u = Uses::of(e);
    u.opaque || u.arrays.contains(&array)
}

/// Whether `e` may be evaluated once instead of once per iteration of a
/// loop over `v` whose body writes `w`: it does not mention `v`, reads
/// nothing `w` writes, and is not opaque.
fn movable(e: &Expr, v: LoopVar, w: &Writes) -> bool {
    let u = Uses::of(e);
    !u.opaque
        && !u.vars.contains(&v)
        && !u.arrays.iter().any(|&a| w.array(a))
        && !u.locals.iter().any(|l| w.locals.contains(l))
}

// ---------------------------------------------------------------------------
// (b) Selected loops.

/// The parts of a selected loop: the conjuncts evaluated before the
/// selecting equality, its other side, and what runs for `v = value`.
struct SelectedLoop {
    prefix: Vec<Expr>,
    value: Expr,
    body: Vec<Stmt>,
}

/// `e` when `c` is `v == e` or `e == v` (`v` exactly, on one side).
fn equality_on(c: &Expr, v: LoopVar) -> Option<&Expr> {
    let Expr::Binary(BinOp::Eq, a, b) = c else {
        return None;
    };
    let is_v = |x: &Expr| match x {
        Expr::Aff(a) => affine::merged(a).is_some_and(|m| m == Affine::var(v)),
        _ => false,
    };
    if is_v(a) {
        Some(b)
    } else if is_v(b) {
        Some(a)
    } else {
        None
    }
}

/// A conjunction cut at its selecting equality `v == e`: the conjuncts
/// before it, `e`, the conjuncts after it.
type Split = (Vec<Expr>, Expr, Vec<Expr>);

/// The first conjunct of `cs` that selects `v` (see [`sparse_updates`]
/// (b)) with the conjuncts before it and after it; `Err(())` when a
/// conjunct before it cannot be moved (the search stops there), `Ok(None)`
/// when every conjunct can be moved and none selects.
fn split_at_selection(cs: Vec<Expr>, v: LoopVar, w: &Writes) -> Result<Option<Split>, ()> {
    for (j, c) in cs.iter().enumerate() {
        if let Some(e) = equality_on(c, v) {
            if !movable(e, v, w) {
                return Err(());
            }
            let e = e.clone();
            let mut prefix = cs;
            let rest = prefix.split_off(j + 1);
            prefix.pop();
            return Ok(Some((prefix, e, rest)));
        }
        if !movable(c, v, w) {
            return Err(());
        }
    }
    Ok(None)
}

/// The selection of `v` by statement `s` (the body of a loop over `v`,
/// writing `w`), see [`sparse_updates`] (b).
fn extract(s: &Stmt, v: LoopVar, w: &Writes) -> Option<SelectedLoop> {
    match s {
        Stmt::If { cond, then, els } if els.is_empty() => {
            let cs: Vec<Expr> = conjuncts(cond).into_iter().cloned().collect();
            match split_at_selection(cs.clone(), v, w).ok()? {
                Some((prefix, value, rest)) => {
                    let body = if rest.is_empty() {
                        then.clone()
                    } else {
                        vec![Stmt::If {
                            cond: Expr::and_all(rest),
                            then: then.clone(),
                            els: Vec::new(),
                        }]
                    };
                    Some(SelectedLoop {
                        prefix,
                        value,
                        body,
                    })
                }
                None => {
                    let [inner] = then.as_slice() else {
                        return None;
                    };
                    let mut sel = extract(inner, v, w)?;
                    let mut prefix = cs;
                    prefix.append(&mut sel.prefix);
                    sel.prefix = prefix;
                    Some(sel)
                }
            }
        }
        Stmt::Bind(b) => {
            let mentions_v = b
                .lower
                .terms
                .iter()
                .chain(&b.upper.terms)
                .any(|t| affine::mentions(&t.expr, v));
            if mentions_v || b.var == v {
                return None;
            }
            let mut prefix: Vec<Expr> = match nonempty_cond(&b.lower, &b.upper) {
                Guard::Always => Vec::new(),
                Guard::Never => return None,
                Guard::Cond(c) => conjuncts(&c).into_iter().cloned().collect(),
            };
            let gs: Vec<Expr> = conjuncts(&b.guard).into_iter().cloned().collect();
            let (mut before, value, rest) = split_at_selection(gs, v, w).ok()??;
            prefix.append(&mut before);
            let inner = Binding {
                guard: Expr::and_all(rest),
                nonempty: false,
                ..(**b).clone()
            };
            Some(SelectedLoop {
                prefix,
                value,
                body: vec![Stmt::from(inner)],
            })
        }
        _ => None,
    }
}

/// The bindings that replace `for (v = lower; v <= upper; v++) body`
/// (one, or one per statement after fission), or `None` when (b) does
/// not apply (see [`sparse_updates`]).
fn select_loop(v: LoopVar, lower: &Bound, upper: &Bound, body: &[Stmt]) -> Option<Vec<Stmt>> {
    if body.len() > 1 && !fission_ok(v, body) {
        return None;
    }
    if body.is_empty() {
        return None;
    }
    body.iter()
        .map(|s| {
            let w = Writes::of(std::slice::from_ref(s));
            let sel = extract(s, v, &w)?;
            Some(Stmt::from(Binding {
                var: v,
                lower: lower.clone(),
                upper: upper.clone(),
                guard: Expr::and_all(sel.prefix),
                value: sel.value,
                body: sel.body,
                nonempty: false,
            }))
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Fission.

/// Whether evaluating `e` can fail only by an integer overflow or a
/// selection out of range (both independent of the order the instances
/// run in) under the access contract: affine loads, no draws, no external
/// calls, divisions only by a constant `>= 1`.
pub(super) fn overflow_only(e: &Expr) -> bool {
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => true,
        Expr::Load { index, .. } => index.iter().all(Expr::is_affine),
        Expr::Unary(_, a) | Expr::Cast(_, a) => overflow_only(a),
        Expr::Binary(op, a, b) => {
            let divides = matches!(
                op,
                BinOp::Div | BinOp::Rem | BinOp::FloorDiv | BinOp::CeilDiv | BinOp::Mod
            );
            (!divides || matches!(**b, Expr::Int(d) if d >= 1))
                && overflow_only(a)
                && overflow_only(b)
        }
        Expr::Select(c, a, b) => overflow_only(c) && overflow_only(a) && overflow_only(b),
        Expr::Math(_, args) => args.iter().all(overflow_only),
        Expr::Selection(s) => [&s.value, &s.lower, &s.upper]
            .into_iter()
            .all(overflow_only),
        Expr::Random(_) | Expr::Categorical(_) | Expr::External { .. } => false,
    }
}

/// Checks the statements for fission (see [`sparse_updates`]): no local
/// set, every expression [`overflow_only`] (a binding's value may be
/// anything else in range or not: out of range it skips the body, it does
/// not fail), stores affine; collects every access `(array, index)` (loads
/// and stores) into `acc`. `false` when a check fails.
fn fission_scan(body: &[Stmt], acc: &mut Vec<(ArrayId, Vec<Expr>)>) -> bool {
    fn loads(e: &Expr, acc: &mut Vec<(ArrayId, Vec<Expr>)>) {
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            match x {
                Expr::Load { array, index } => {
                    acc.push((*array, index.clone()));
                    stack.extend(index);
                }
                Expr::Unary(_, a) | Expr::Cast(_, a) => stack.push(a),
                Expr::Binary(_, a, b) => stack.extend([&**a, &**b]),
                Expr::Select(c, a, b) => stack.extend([&**c, &**a, &**b]),
                Expr::Math(_, args) | Expr::External { args, .. } => stack.extend(args),
                Expr::Selection(s) => stack.extend([&s.value, &s.lower, &s.upper]),
                Expr::Random(r) => {
                    stack.extend(&r.args);
                    stack.extend(&r.point);
                    stack.push(&r.seed);
                }
                _ => {}
            }
        }
    }
    let check = |e: &Expr, acc: &mut Vec<(ArrayId, Vec<Expr>)>| {
        loads(e, acc);
        overflow_only(e)
    };
    body.iter().all(|s| match s {
        Stmt::For(ForLoop { body, .. }) | Stmt::Block(body) => fission_scan(body, acc),
        Stmt::If { cond, then, els } => {
            check(cond, acc) && fission_scan(then, acc) && fission_scan(els, acc)
        }
        Stmt::Bind(b) => check(&b.guard, acc) && check(&b.value, acc) && fission_scan(&b.body, acc),
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
            acc.push((*array, index.clone()));
            index.iter().all(Expr::is_affine) && check(value, acc)
        }
        Stmt::SetLocal { .. } => false,
    })
}

/// Whether the loop over `v` with statements `body` may be split into
/// one loop per statement (see [`sparse_updates`]).
fn fission_ok(v: LoopVar, body: &[Stmt]) -> bool {
    let mut acc = Vec::new();
    if !fission_scan(body, &mut acc) {
        return false;
    }
    let mut inner = Vec::new();
    bound_vars(body, &mut inner);
    let w = Writes::of(body);
    let mut written: Vec<ArrayId> = w.arrays.iter().map(|(a, _)| *a).collect();
    written.dedup();
    written.iter().all(|&a| {
        let idxs: Vec<&Vec<Expr>> = acc
            .iter()
            .filter(|(b, _)| *b == a)
            .map(|(_, i)| i)
            .collect();
        let Some(first) = idxs.first() else {
            return false;
        };
        (0..first.len()).any(|p| {
            let Some(Expr::Aff(x)) = first.get(p) else {
                return false;
            };
            let Some(key) = affine::canonical(x) else {
                return false;
            };
            let varies =
                affine::mentions(&key, v) && !inner.iter().any(|&u| affine::mentions(&key, u));
            varies
                && idxs.iter().all(|i| match i.get(p) {
                    Some(Expr::Aff(y)) => affine::canonical(y).as_ref() == Some(&key),
                    _ => false,
                })
        })
    })
}
