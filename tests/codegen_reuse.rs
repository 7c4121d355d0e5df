//! Loop interchange for reuse (`codegen::opt::interchange_for_reuse`): a
//! nest `for o { for i { B } }` whose iterations of `i` touch disjoint
//! cells of the arrays `B` writes runs as `for i { for o { B } }` when the
//! layout puts `i` outside `o`. Where it applies the results are the same
//! bit for bit; where a cell is shared across `i`, where `B` may fail, or
//! where the layout favours `o` outside, the nest is left alone; and on
//! random nests the rewritten function runs like the original.

mod common;

use alphac::codegen::loop_ast::{Affine, BinOp, Bound, Expr, ForLoop, Function, LoopVar, Stmt};
use alphac::codegen::opt;
use common::loops::*;
use proptest::prelude::*;

/// `F[v][k]`-style store into `a` at `(v + dv, k + dk)`.
fn store(a: usize, dv: i64, dk: i64, value: Expr) -> Stmt {
    Stmt::Assign {
        array: a,
        index: vec![aff(V, dv), aff(K, dk)],
        value,
    }
}

fn load(a: usize, dv: i64, dk: i64) -> Expr {
    Expr::load(a, vec![aff(V, dv), aff(K, dk)])
}

fn add(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Add, a, b)
}

/// `for outer in 1 ..= X − 2 { for inner in 1 ..= Y − 2 { body } }` over
/// `v` (`0 ..= V − 1`) and `k` (`0 ..= K − 1`): offsets of ±1 stay in
/// bounds.
fn nest(outer: LoopVar, body: Vec<Stmt>) -> Function {
    let bounds = |v: LoopVar| {
        let param = if v == V { 1 } else { 2 };
        (Bound::aff(Affine::cst(1)), below(param, 2))
    };
    let inner = if outer == V { K } else { V };
    func(vec![for_(
        outer,
        bounds(outer),
        vec![for_(inner, bounds(inner), body)],
    )])
}

/// `f` after the pass alone (checked), and how many nests it swapped.
fn reused(f: &Function) -> (Function, usize) {
    let mut g = f.clone();
    let n = opt::interchange_for_reuse(&mut g);
    g.check().unwrap_or_else(|e| panic!("{e}\n{}", g.to_c()));
    (g, n)
}

/// The variable of the outermost loop of `f`.
fn outer_var(f: &Function) -> LoopVar {
    match f.body.as_slice() {
        [Stmt::For(ForLoop { var, .. })] => *var,
        _ => panic!("one loop expected:\n{}", f.to_c()),
    }
}

/// The running sum along `k` of each row `v`, written `k` outside:
/// `F[v][k] = F[v][k − 1] + x[v]`. Rows are independent, and the layout
/// (`v` the major index) wants `v` outside.
#[test]
fn a_recurrence_along_the_minor_index_runs_row_by_row() {
    let f = nest(K, vec![store(F, 0, 0, add(load(F, 0, -1), data_v(X)))]);
    let (g, n) = reused(&f);
    assert_eq!(n, 1, "{}", g.to_c());
    assert_eq!(outer_var(&g), V, "{}", g.to_c());
    same_all(&f, &g, 11);
}

/// Whether some `if` of `body` (at any depth) tests a condition.
fn has_if(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::If { .. } => true,
        Stmt::For(ForLoop { body, .. }) | Stmt::Block(body) => has_if(body),
        Stmt::Bind(b) => has_if(&b.body),
        _ => false,
    })
}

/// A guard on the loop that moves inside (`if (k >= 2)`, LBP's
/// `if (t1 >= 3)`) is split away once that loop is inner: the
/// whole-function split could only cut the outer range.
#[test]
fn a_guard_of_the_loop_moved_inside_is_split_away() {
    let f = nest(
        K,
        vec![Stmt::If {
            cond: ge(var(K), Expr::Int(2)),
            then: vec![store(F, 0, 0, add(load(F, 0, -1), data_v(X)))],
            els: vec![],
        }],
    );
    let (g, n) = reused(&f);
    assert_eq!(n, 1, "{}", g.to_c());
    assert!(!has_if(&g.body), "{}", g.to_c());
    same_all(&f, &g, 17);
}

/// Cross-row reads (`F[v + 1][k − 1]`): iteration `v` reads what `v + 1`
/// wrote at the previous `k`, so swapping would read stale values.
#[test]
fn a_cell_shared_across_the_inner_loop_keeps_the_order() {
    let f = nest(
        K,
        vec![store(F, 0, 0, add(load(F, 1, -1), Expr::Float(1.0)))],
    );
    let (g, n) = reused(&f);
    assert_eq!(n, 0, "{}", g.to_c());
    assert_eq!(g, f);
}

/// The layout favours the outer loop as it is: `v` outside `k` already
/// walks rows.
#[test]
fn a_nest_already_in_layout_order_stays() {
    let f = nest(V, vec![store(F, 0, 0, add(load(F, -1, 0), data_v(X)))]);
    let (g, n) = reused(&f);
    assert_eq!(n, 0, "{}", g.to_c());
}

/// Bodies that may fail keep the order (the first error must not move):
/// an int update (overflow) and a data-dependent load.
#[test]
fn a_body_that_may_fail_keeps_the_order() {
    let int_update = nest(K, vec![store(A, 0, 0, add(load(A, 0, -1), Expr::Int(1)))]);
    assert_eq!(reused(&int_update).1, 0);
    let gathered = nest(
        K,
        vec![store(
            F,
            0,
            0,
            add(
                load(F, 0, -1),
                Expr::load(X, vec![Expr::load(W, vec![var(V)])]),
            ),
        )],
    );
    assert_eq!(reused(&gathered).1, 0);
}

/// `x[v]`-style load of a `[N]` array at `v` (`V <= N` in every
/// parameter vector of the tests).
fn data_v(a: usize) -> Expr {
    Expr::load(a, vec![var(V)])
}

/// A random statement of a nest body: a float store into `F` at offsets
/// `(sv, sk)` of a sum of `F` reads at offsets and of `x[v]`, possibly
/// under a guard on the outer loop, possibly selected by a bool.
fn stmt_strategy() -> impl Strategy<Value = Stmt> {
    let off = -1i64..=1;
    (
        (off.clone(), off.clone()),
        prop::collection::vec((off.clone(), off), 1..3),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|((sv, sk), reads, guarded, selected)| {
            let mut value = data_v(X);
            for (dv, dk) in reads {
                value = add(value, load(F, dv, dk));
            }
            if selected {
                value = Expr::select(load(B, 0, 0), value, Expr::Float(0.5));
            }
            let s = store(F, sv, sk, value);
            if guarded {
                Stmt::If {
                    cond: ge(var(K), Expr::Int(2)),
                    then: vec![s],
                    els: vec![],
                }
            } else {
                s
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// On random nests (either loop outside, one to three statements with
    /// row-sharing and row-local offsets), the pass's result runs like the
    /// original, bit for bit, checked and unchecked.
    #[test]
    fn random_nests_run_the_same(
        outer_is_k in any::<bool>(),
        body in prop::collection::vec(stmt_strategy(), 1..4),
    ) {
        let f = nest(if outer_is_k { K } else { V }, body);
        let (g, _) = reused(&f);
        same_all(&f, &g, 3);
    }
}
