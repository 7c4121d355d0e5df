//! Rewrite 6: loop-invariant guards out of loops ([`unswitch_guards`]).
//!
//! Must not know about: facts, the solver, accumulators.

use super::affine::mentions;
use super::hoist::{nonempty_cond, Guard};
use super::sparse::selected_operand;
use super::walk::*;
use super::*;
use crate::vocab::{ElemType, UnOp};

/// Moves affine guards that do not depend on a loop out of it.
///
/// Rule (bottom-up, so a guard leaves a whole nest level by level): let
/// `L = for (v = lo; v <= hi; v++) B` where every statement of `B` is an
/// `if` without `else`, `if (c_j) S_j`, and let `G` be the top-level `&&`
/// conjuncts common to every `c_j` (syntactically equal) that are affine
/// comparisons (`a op b`, `a` and `b` affine ints, `op` one of `== != <
/// <= > >=`) mentioning neither `v` nor a variable bound inside `B`. When
/// `G` is not empty, `L` is replaced by
///
/// ```text
/// if (G) { for (v = lo; v <= hi; v++) { if (c_j \ G) S_j ... } }
/// ```
///
/// (an `if` left without conjuncts becomes its then-branch). Two-way
/// form: a body that is one `if`/`else`, or one assignment of a `?:`,
/// whose condition is made of such comparisons only, becomes an
/// `if`/`else` of two copies of the loop (see [`two_way`]), and a small
/// body of several statements holding such a choice anywhere becomes two
/// copies of the loop with the choice decided in each
/// ([`choose_in_body`]).
///
/// Why this is exact: a conjunct of `G` is an affine comparison, which
/// cannot fail and has no effect, and it has the same value at every
/// iteration of `L` (nothing it mentions changes inside `L`). When it is
/// false, no `S_j` runs at any iteration and `L` does nothing but count
/// (its bounds are affine: no effect either); when every conjunct of `G`
/// holds, `c_j` and `c_j \ G` have the same value (`&&` is lazy and the
/// removed conjuncts have no effects), so each `S_j` runs exactly when it
/// did. What it buys: `for (i) for (j) if (t == 0) S` costs one test per
/// `t` instead of one per `(t, i, j)`.
///
/// Returns the number of guards moved.
pub fn unswitch_guards(f: &mut Function) -> usize {
    let mut u = Unswitch {
        moved: 0,
        types: f.arrays.iter().map(|a| a.ty).collect(),
    };
    f.body = rewrite_stmts(&mut u, std::mem::take(&mut f.body));
    u.moved
}

/// The rewrite of [`unswitch_guards`] and the number of guards moved.
struct Unswitch {
    moved: usize,
    /// The element type of each array.
    types: Vec<ElemType>,
}

impl StmtRewrite for Unswitch {
    fn on_for(&mut self, l: ForLoop, out: &mut Vec<Stmt>) {
        let l = l.map_body(|b| rewrite_stmts(self, b));
        let mut inner = vec![l.var];
        bound_vars(&l.body, &mut inner);
        let l = match two_way(l, &inner, &self.types) {
            Ok(s) => {
                self.moved += 1;
                out.push(s);
                return;
            }
            Err(l) => l,
        };
        let Some((common, reads_data)) = common_invariant_conjuncts(&l.body, &inner) else {
            match choose_in_body(l, &inner) {
                Ok(s) => {
                    self.moved += 1;
                    out.push(s);
                }
                Err(l) => out.push(Stmt::For(l)),
            }
            return;
        };
        self.moved += common.len();
        let l = l.map_body(|body| {
            let mut kept = Vec::with_capacity(body.len());
            for s in body {
                let Stmt::If { cond, then, .. } = s else {
                    // `common_invariant_conjuncts` saw only `if`s.
                    kept.push(s);
                    continue;
                };
                let rest: Vec<Expr> = conjuncts(&cond)
                    .into_iter()
                    .filter(|c| !common.contains(c))
                    .cloned()
                    .collect();
                if rest.is_empty() {
                    kept.extend(then);
                } else {
                    kept.push(Stmt::If {
                        cond: Expr::chain(BinOp::And, rest, Expr::Bool(true)),
                        then,
                        els: Vec::new(),
                    });
                }
            }
            kept
        });
        let (lower, upper) = (l.lower.clone(), l.upper.clone());
        let moved = Stmt::If {
            cond: Expr::chain(BinOp::And, common, Expr::Bool(true)),
            then: vec![Stmt::For(l)],
            els: Vec::new(),
        };
        // Data is read only where the loop runs (as in `two_way`).
        out.push(if reads_data {
            where_loop_runs(&lower, &upper, moved)
        } else {
            moved
        });
    }
}

/// `s` run only where the loop with bounds `lower`, `upper` runs at least
/// once: `s` itself when it always does, nothing when it never does,
/// else `if (lower <= upper) { s }`.
fn where_loop_runs(lower: &Bound, upper: &Bound, s: Stmt) -> Stmt {
    match nonempty_cond(lower, upper) {
        Guard::Always => s,
        Guard::Never => Stmt::Block(Vec::new()),
        Guard::Cond(c) => Stmt::If {
            cond: c,
            then: vec![s],
            els: Vec::new(),
        },
    }
}

/// The two-way form of the rule of [`unswitch_guards`], for a loop `l`
/// whose body is one statement choosing by a condition `c` whose
/// conjuncts are all invariant affine comparisons (`inner`: the loop's
/// and the inner variables):
/// - `for v { if (c) A else B }` becomes
///   `if (c) { for v { A } } else { for v { B } }`;
/// - `for v { X[idx] = c ? a : b }` (likewise an accumulation) becomes
///   `if (c) { for v { X[idx] = a } } else { for v { X[idx] = b } }`.
///
/// Exact for the same reasons: `c` has no effect, cannot fail and has
/// one value over the whole loop, and `?:` is lazy like `if`. `Err(l)`
/// when the loop has another form.
///
/// In the first two forms a conjunct may also read data
/// ([`invariant_data`]: `valid[i][d]` around a loop over `k`), and in the
/// third when the other side is the operator's identity and no conjunct
/// selects a value of a loop variable (`znew[t] == k` is left to the
/// sparse updates): `for v { X[idx] op= c ? a : id }` becomes `if (c) {
/// for v { X[idx] op= a } }` (where `c` is false the original stores `X[idx]
/// op id`, the same value but for a `−0.0` made `+0.0`, as in
/// `sparse_updates`). The result is then guarded by the loop's
/// non-emptiness, `if (lo <= hi) { if (c) … else … }`, so that `c`'s loads
/// run only where the original evaluates `c` (first in the loop's first
/// iteration: `if` and `?:` evaluate their condition first, an assignment
/// its value before its address, an accumulation after its affine
/// address and load), on the same values (nothing they read is written in
/// the loop).
fn two_way(l: ForLoop, inner: &[LoopVar], types: &[ElemType]) -> Result<Stmt, ForLoop> {
    let written = Writes::of(&l.body);
    // Whether `c` reads data (then it is evaluated only where the loop
    // runs: see `data_guard`).
    let mut reads_data = false;
    let mut all_invariant = |c: &Expr| {
        conjuncts(c).into_iter().all(|x| {
            if invariant_comparison(x, inner) {
                return true;
            }
            let data = invariant_data(x, inner, &written);
            reads_data |= data;
            data
        })
    };
    let arms = match &l.body[..] {
        [Stmt::If { cond, then, els }] if !els.is_empty() && all_invariant(cond) => {
            Some((cond.clone(), then.clone(), els.clone()))
        }
        [Stmt::Assign {
            array,
            index,
            value: Expr::Select(c, a, b),
        }] if all_invariant(c) => {
            let arm = |v: &Expr| Stmt::Assign {
                array: *array,
                index: index.clone(),
                value: v.clone(),
            };
            Some(((**c).clone(), vec![arm(a)], vec![arm(b)]))
        }
        [Stmt::Accumulate(acc)] => match &acc.value {
            // A data condition with the identity on the other side: `if (c)
            // { for v { A[x] op= d } }` (a condition that selects a value
            // of an enclosing variable, `znew[t] == k`, is left to the
            // sparse updates' selected loops).
            Expr::Select(c, _, _)
                if !conjuncts(c).into_iter().any(selects_loop_var)
                    && conjuncts(c).into_iter().all(|x| {
                        invariant_comparison(x, inner) || invariant_data(x, inner, &written)
                    })
                    && types.get(acc.array).is_some_and(|&ty| {
                        selected_operand(&acc.value, acc_bin_op(acc.op), ty).is_some()
                    }) =>
            {
                reads_data = true;
                let d = match &acc.value {
                    Expr::Select(_, d, _) => (**d).clone(),
                    other => other.clone(),
                };
                let arm = Stmt::Accumulate(Accumulation {
                    value: d,
                    ..acc.clone()
                });
                Some(((**c).clone(), vec![arm], Vec::new()))
            }
            // Otherwise affine conditions only: `A[x] op= (c ? d : id)` with
            // a data `c` is a sparse update's (`sparse_updates`: `if (c)
            // A[x] op= d`), cheaper than two loops.
            Expr::Select(c, a, b)
                if conjuncts(c)
                    .into_iter()
                    .all(|x| invariant_comparison(x, inner)) =>
            {
                let arm = |v: &Expr| {
                    Stmt::Accumulate(Accumulation {
                        value: v.clone(),
                        ..acc.clone()
                    })
                };
                Some(((**c).clone(), vec![arm(a)], vec![arm(b)]))
            }
            _ => None,
        },
        _ => None,
    };
    let Some((cond, then, els)) = arms else {
        return Err(l);
    };
    let with = |body: Vec<Stmt>| {
        Stmt::For(ForLoop {
            var: l.var,
            lower: l.lower.clone(),
            upper: l.upper.clone(),
            body,
            parallel: l.parallel,
        })
    };
    let two = Stmt::If {
        cond,
        then: vec![with(then)],
        els: if els.is_empty() {
            Vec::new()
        } else {
            vec![with(els)]
        },
    };
    if !reads_data {
        return Ok(two);
    }
    Ok(where_loop_runs(&l.lower, &l.upper, two))
}

/// Largest body ([`size_stmts`]) [`choose_in_body`] copies.
const CHOICE_MAX_BODY: usize = 80;

/// The form of the rule of [`unswitch_guards`] for a body of several
/// statements: let `c` be the first condition of a `?:` or of an `if`
/// (in the statements' evaluation order, the loop's own body only: no
/// nested loop or binding in it) whose conjuncts are all invariant
/// affine comparisons or invariant data ([`invariant_data`]) that does
/// not select a value of a loop variable. Then
///
/// ```text
/// for v { B }  →  if (c) { for v { B[c := true] } } else { for v { B[c := false] } }
/// ```
///
/// where `B[c := x]` replaces each `c ? a : b` by the arm `x` takes and
/// each `if (c) T else E` by its statements `T` or `E` (only conditions
/// syntactically equal to `c`). When `c` reads data the result is guarded
/// by the loop's non-emptiness, as in [`two_way`].
///
/// Why this is exact: `c` cannot fail, has no effect and has one value
/// over the whole loop (nothing it reads is written in it, it mentions no
/// variable bound there), so wherever the original evaluates `c` it gets
/// the value tested once before the loop, and `?:` and `if` are lazy: the
/// arm not taken was never evaluated. Every other operation runs as
/// before, in the same order; a `c` that the original never evaluates
/// changes nothing either. What it buys: DMM's `nt += (z in 0..K) ? n[z][a]
/// : 0` beside the per-term predictive tests the label's range once per
/// document, and the load of `n[z][a]`, now in every iteration, gets its
/// row checked once before the loop (`jit::lower::rows`).
///
/// `Err(l)` when the body has one statement (see [`two_way`]), holds a
/// loop or a binding, is larger than [`CHOICE_MAX_BODY`], or has no such
/// condition.
fn choose_in_body(l: ForLoop, inner: &[LoopVar]) -> Result<Stmt, ForLoop> {
    fn nested(body: &[Stmt]) -> bool {
        body.iter().any(|s| match s {
            Stmt::For(_) | Stmt::Bind(_) => true,
            Stmt::If { then, els, .. } => nested(then) || nested(els),
            Stmt::Block(b) => nested(b),
            _ => false,
        })
    }
    if l.body.len() < 2 || nested(&l.body) || size_stmts(&l.body) > CHOICE_MAX_BODY {
        return Err(l);
    }
    let written = Writes::of(&l.body);
    // The `?:` conditions first (in evaluation order), then the `if`s'.
    let mut selects = Vec::new();
    visit_exprs(&l.body, &mut |e| {
        if let Expr::Select(c, _, _) = e {
            selects.push((**c).clone());
        }
    });
    let mut ifs = Vec::new();
    if_conditions(&l.body, &mut ifs);
    let chosen = selects
        .iter()
        .chain(ifs)
        .find_map(|c| choice_reads_data(c, inner, &written).map(|data| (c.clone(), data)));
    let Some((c, reads_data)) = chosen else {
        return Err(l);
    };
    let copy = |value: bool| {
        Stmt::For(ForLoop {
            var: l.var,
            lower: l.lower.clone(),
            upper: l.upper.clone(),
            body: decide_stmts(l.body.clone(), &c, value),
            parallel: l.parallel,
        })
    };
    let two = Stmt::If {
        cond: c.clone(),
        then: vec![copy(true)],
        els: vec![copy(false)],
    };
    if !reads_data {
        return Ok(two);
    }
    Ok(where_loop_runs(&l.lower, &l.upper, two))
}

/// For a condition `c` [`choose_in_body`] may decide (every conjunct an
/// invariant affine comparison or invariant data that does not select a
/// value of a loop variable): whether it reads data.
fn choice_reads_data(c: &Expr, inner: &[LoopVar], written: &Writes) -> Option<bool> {
    let mut data = false;
    for x in conjuncts(c) {
        if invariant_comparison(x, inner) {
            continue;
        }
        // `znew[t] == k` is left to the sparse updates' selected loops.
        if selects_loop_var(x) || !invariant_data(x, inner, written) {
            return None;
        }
        data = true;
    }
    Some(data)
}

/// The conditions of the `if`s of `body`, outermost first.
fn if_conditions<'a>(body: &'a [Stmt], out: &mut Vec<&'a Expr>) {
    for s in body {
        match s {
            Stmt::If { cond, then, els } => {
                out.push(cond);
                if_conditions(then, out);
                if_conditions(els, out);
            }
            Stmt::Block(b) => if_conditions(b, out),
            _ => {}
        }
    }
}

/// `body` with `c` decided to be `value` (see [`choose_in_body`]; no loop
/// or binding in `body`).
fn decide_stmts(body: Vec<Stmt>, c: &Expr, value: bool) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        match s {
            Stmt::If { cond, then, els } if cond == *c => {
                out.extend(decide_stmts(if value { then } else { els }, c, value))
            }
            Stmt::If { cond, then, els } => out.push(Stmt::If {
                cond: decide_expr(cond, c, value),
                then: decide_stmts(then, c, value),
                els: decide_stmts(els, c, value),
            }),
            Stmt::Block(b) => out.push(Stmt::Block(decide_stmts(b, c, value))),
            s => match map_leaf_exprs(s, |e| decide_expr(e, c, value)) {
                Ok(s) | Err(s) => out.push(s),
            },
        }
    }
    out
}

/// `e` with each `c ? a : b` replaced by the arm `value` takes.
fn decide_expr(e: Expr, c: &Expr, value: bool) -> Expr {
    match e {
        Expr::Select(k, a, b) if *k == *c => decide_expr(if value { *a } else { *b }, c, value),
        e => map_children(e, |x| decide_expr(x, c, value)),
    }
}

/// `e` is made of affine loads whose indices mention none of `inner`, of
/// arrays not in `written`, locals not in `written`, and constants, affine
/// values mentioning none of `inner`, comparisons, `!`, `&&` and `||`: it cannot fail (affine
/// accesses are in bounds where the loop runs, by the access contract),
/// has no effect, and has one value over the whole loop.
pub(super) fn invariant_data(e: &Expr, inner: &[LoopVar], written: &Writes) -> bool {
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) => true,
        Expr::Aff(a) => inner.iter().all(|&v| !mentions(a, v)),
        Expr::Local(l) => !written.locals.contains(l),
        Expr::Load { array, index } => {
            !written.array(*array)
                && index.iter().all(|x| match x {
                    Expr::Int(_) => true,
                    Expr::Aff(a) => inner.iter().all(|&v| !mentions(a, v)),
                    _ => false,
                })
        }
        Expr::Unary(UnOp::Not, a) => invariant_data(a, inner, written),
        Expr::Binary(op, a, b) if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) => {
            invariant_data(a, inner, written) && invariant_data(b, inner, written)
        }
        _ => false,
    }
}

/// `e` is `a == b` with one side an affine value that mentions a loop
/// variable (a data-dependent selection of that variable's value).
fn selects_loop_var(e: &Expr) -> bool {
    let Expr::Binary(BinOp::Eq, a, b) = e else {
        return false;
    };
    let loop_aff = |x: &Expr| match x {
        Expr::Aff(a) => a
            .terms
            .iter()
            .any(|&(s, c)| c != 0 && matches!(s, Sym::Loop(_))),
        _ => false,
    };
    loop_aff(a) || loop_aff(b)
}

/// The conjuncts `G` of the rule of [`unswitch_guards`] for a loop body
/// `body` whose loop and inner variables are `inner`, in the order of the
/// first `if`, and whether one reads data; `None` when the body is not
/// all `if`s without `else` or `G` is empty. Besides affine comparisons,
/// a conjunct may be invariant data ([`invariant_data`], not selecting a
/// value of a loop variable: those are the sparse updates'), as in
/// [`two_way`]: the moved guard is then evaluated only where the loop
/// runs (CoxPH's `event[i] == 1` around its information matrix's row
/// loop).
fn common_invariant_conjuncts(body: &[Stmt], inner: &[LoopVar]) -> Option<(Vec<Expr>, bool)> {
    let conds: Vec<&Expr> = body
        .iter()
        .map(|s| match s {
            Stmt::If { cond, els, .. } if els.is_empty() => Some(cond),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let first = conds.first()?;
    let written = Writes::of(body);
    let mut reads_data = false;
    let common: Vec<Expr> = conjuncts(first)
        .into_iter()
        .filter(|c| conds[1..].iter().all(|d| conjuncts(d).contains(c)))
        .filter(|c| {
            if invariant_comparison(c, inner) {
                return true;
            }
            let data = !selects_loop_var(c) && invariant_data(c, inner, &written);
            reads_data |= data;
            data
        })
        .cloned()
        .collect();
    (!common.is_empty()).then_some((common, reads_data))
}

/// `e` is `a op b` with `a`, `b` affine ints mentioning none of `inner`
/// and `op` a comparison.
fn invariant_comparison(e: &Expr, inner: &[LoopVar]) -> bool {
    let Expr::Binary(op, a, b) = e else {
        return false;
    };
    let comparison = op.is_comparison();
    let invariant = |x: &Expr| match x {
        Expr::Int(_) => true,
        Expr::Aff(a) => inner.iter().all(|&v| !mentions(a, v)),
        _ => false,
    };
    comparison && invariant(a) && invariant(b)
}

/// Moves a data-selected binding whose selection does not change in a
/// loop out of it.
///
/// Rule: `for (v = lo; v <= hi; v++) { Bind u := e in [blo, bhi] if (g)
/// { S } }` (the loop body is the one binding) where `blo`, `bhi`, `g` and
/// `e` do not mention `v` or a variable bound in `S`, and `g`, `e` read
/// nothing `S` writes and cannot fail (constants, affine values, locals,
/// affine loads, comparisons, `!`, `&&`, `||`), becomes `Bind u := e in
/// [blo, bhi] if (g) { for (v = lo; v <= hi; v++) { S } }`. When `e` is a
/// selection of such parts (which fails by its value alone), the guard
/// becomes `lo <= hi && g`: `e` is then evaluated only when the loop would
/// have evaluated it, and fails exactly when its first iteration would. (The scatter
/// interchange of `sparse_updates` leaves `for a { Bind k := z[d] { n[k][a]
/// += X[d][a] } }`: one range check per document, not per term.)
///
/// Why this is exact: `g` and `e` have no effect, cannot fail, and have
/// one value over the whole loop (nothing they read changes in it), so
/// every iteration of the original takes the same decision as the
/// binding does once: run `S` with `u = e` (in order of `v`), or nothing.
/// An empty loop runs nothing in either form.
///
/// Returns the number of bindings moved.
pub fn hoist_bindings(f: &mut Function) -> usize {
    let mut h = HoistBindings { moved: 0 };
    f.body = rewrite_stmts(&mut h, std::mem::take(&mut f.body));
    h.moved
}

struct HoistBindings {
    moved: usize,
}

impl StmtRewrite for HoistBindings {
    fn on_for(&mut self, l: ForLoop, out: &mut Vec<Stmt>) {
        let l = l.map_body(|b| rewrite_stmts(self, b));
        let [Stmt::Bind(b)] = l.body.as_slice() else {
            out.push(Stmt::For(l));
            return;
        };
        let mut inner = vec![l.var];
        bound_vars(&b.body, &mut inner);
        let writes = Writes::of(&b.body);
        let fixed = |e: &Expr| invariant_data(e, &inner, &writes);
        let bounds_fixed = [&b.lower, &b.upper].iter().all(|bd| {
            bd.terms
                .iter()
                .all(|t| inner.iter().all(|&x| !mentions(&t.expr, x)))
        });
        // A selection value fails by its value alone: evaluated once, it
        // fails exactly when every iteration's would, provided there is
        // one (the loop's non-emptiness then guards it).
        let selection = match &b.value {
            Expr::Selection(s) => [&s.value, &s.lower, &s.upper].into_iter().all(fixed),
            _ => false,
        };
        if !(bounds_fixed && fixed(&b.guard) && (fixed(&b.value) || selection)) {
            out.push(Stmt::For(l));
            return;
        }
        let mut b = (**b).clone();
        if selection {
            match nonempty_cond(&l.lower, &l.upper) {
                Guard::Always => {}
                Guard::Never => {
                    out.push(Stmt::For(l));
                    return;
                }
                Guard::Cond(c) => b.guard = Expr::and_all(vec![c, b.guard]),
            }
        }
        self.moved += 1;
        let body = vec![Stmt::For(ForLoop {
            var: l.var,
            lower: l.lower,
            upper: l.upper,
            parallel: false,
            body: b.body,
        })];
        // Out of the loop, the facts that proved `lower <= upper` (the
        // loop's bounds among them) may no longer hold.
        out.push(Stmt::from(Binding {
            body,
            nonempty: false,
            ..b
        }));
    }
}
