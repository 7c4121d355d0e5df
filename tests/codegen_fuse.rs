//! Loop fusion (`codegen::opt::fuse_loops`): consecutive loops over the
//! same range whose iterations touch their own cells of what they write
//! become one loop. Where it applies the results are the same bit for
//! bit (and a failing run fails alike); where one loop reads another
//! iteration's cells, or where both bodies may fail, the loops stay
//! apart; and on random pairs of loops the fused function runs like the
//! original.

mod common;

use alphac::codegen::loop_ast::{Affine, BinOp, Bound, Expr, Function, LoopVar, Stmt};
use alphac::codegen::opt;
use common::loops::*;
use proptest::prelude::*;

/// `a[r + dr][k + dk] = value`.
fn store_at(r: LoopVar, a: usize, dr: i64, dk: i64, value: Expr) -> Stmt {
    Stmt::Assign {
        array: a,
        index: vec![aff(r, dr), aff(K, dk)],
        value,
    }
}

fn load_at(r: LoopVar, a: usize, dr: i64, dk: i64) -> Expr {
    Expr::load(a, vec![aff(r, dr), aff(K, dk)])
}

fn store(a: usize, dv: i64, dk: i64, value: Expr) -> Stmt {
    store_at(V, a, dv, dk, value)
}

fn load(a: usize, dv: i64, dk: i64) -> Expr {
    load_at(V, a, dv, dk)
}

fn add(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Add, a, b)
}

/// `x[v]` (`V <= N` in every parameter vector of the tests).
fn x_v() -> Expr {
    x_at(V)
}

fn x_at(r: LoopVar) -> Expr {
    Expr::load(X, vec![var(r)])
}

/// `for (r in 1 ..= V − 2) { for (k in 1 ..= K − 2) { body } }` over the
/// rows `r` (`V` or `J`): offsets of ±1 stay in bounds.
fn rows(r: LoopVar, body: Vec<Stmt>) -> Stmt {
    let one = || Bound::aff(Affine::cst(1));
    for_(
        r,
        (one(), below(1, 2)),
        vec![for_(K, (one(), below(2, 2)), body)],
    )
}

/// `f` after the pass alone (checked), and how many fusions it made.
fn fused(f: &Function) -> (Function, usize) {
    let mut g = f.clone();
    let n = opt::fuse_loops(&mut g);
    g.check().unwrap_or_else(|e| panic!("{e}\n{}", g.to_c()));
    (g, n)
}

/// A row written then updated in a second pass: one pass over the rows.
#[test]
fn two_passes_over_rows_become_one() {
    let f = func(vec![
        rows(V, vec![store(F, 0, 0, x_v())]),
        rows(
            J,
            vec![store_at(
                J,
                F,
                0,
                0,
                add(load_at(J, F, 0, 0), Expr::Float(1.0)),
            )],
        ),
    ]);
    let (g, n) = fused(&f);
    assert_eq!(n, 1, "{}", g.to_c());
    assert_eq!(g.body.len(), 1, "{}", g.to_c());
    same_all(&f, &g, 5);
}

/// The second pass reads the next row, which the first pass writes at
/// the next iteration: fused, it would read it before it is written.
#[test]
fn a_read_of_another_iterations_row_keeps_the_passes_apart() {
    let f = func(vec![
        rows(V, vec![store(F, 0, 0, x_v())]),
        rows(
            V,
            vec![store(
                B,
                0,
                0,
                Expr::bin(BinOp::Gt, load(F, 1, 0), Expr::Float(3.0)),
            )],
        ),
    ]);
    let (g, n) = fused(&f);
    assert_eq!(n, 0, "{}", g.to_c());
    assert_eq!(g, f);
}

/// Two bodies that may both fail (int sums) stay apart: the first error
/// of the fused loop could be the second pass's; with one fallible body
/// they fuse and fail alike.
#[test]
fn two_fallible_passes_stay_apart() {
    let int_pass = |c: i64| rows(V, vec![store(A, 0, 0, add(load(A, 0, 0), Expr::Int(c)))]);
    let both = func(vec![int_pass(1), int_pass(2)]);
    assert_eq!(fused(&both).1, 0);
    let one = func(vec![
        int_pass(i64::MAX),
        rows(V, vec![store(F, 0, 0, add(load(F, 0, 0), x_v()))]),
    ]);
    let (g, n) = fused(&one);
    assert_eq!(n, 1, "{}", g.to_c());
    same_all(&one, &g, 9);
}

/// A loop under an invariant guard (`if (K >= 3) { for v … }`) fuses
/// with its neighbour, the guard moving inside.
#[test]
fn a_guarded_loop_fuses_with_its_neighbour() {
    let guarded = Stmt::If {
        cond: ge(Expr::Aff(p(2)), Expr::Int(3)),
        then: vec![rows(V, vec![store(F, 0, 0, add(load(F, 0, 0), x_v()))])],
        els: vec![],
    };
    let f = func(vec![rows(V, vec![store(F, 0, 0, x_v())]), guarded]);
    let (g, n) = fused(&f);
    assert_eq!(n, 1, "{}", g.to_c());
    same_all(&f, &g, 13);
}

/// A random pass over the rows: a float store into `F` at offsets of a
/// sum of `F` reads at offsets and of `x[v]`.
fn pass_strategy() -> impl Strategy<Value = Stmt> {
    let off = -1i64..=1;
    (
        (off.clone(), off.clone()),
        prop::collection::vec((off.clone(), off), 0..3),
        any::<bool>(),
    )
        .prop_map(|((sv, sk), reads, second_var)| {
            let r = if second_var { J } else { V };
            let mut value = x_at(r);
            for (dv, dk) in reads {
                value = add(value, load_at(r, F, dv, dk));
            }
            rows(r, vec![store_at(r, F, sv, sk, value)])
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// On random sequences of passes (row-local and row-sharing offsets),
    /// the fused function runs like the original, bit for bit, checked
    /// and unchecked.
    #[test]
    fn random_passes_run_the_same(passes in prop::collection::vec(pass_strategy(), 2..4)) {
        let f = func(passes);
        let (g, _) = fused(&f);
        same_all(&f, &g, 21);
    }
}
