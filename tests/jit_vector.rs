//! The vector form of innermost loops (`jit::lower::vector`): `f64x2`
//! lanes for assignments and `+=`/`*=` accumulations at contiguous
//! indices, reading affine loads, rows of data-selected loads checked
//! before the loop, and rows of a written array disjoint from the written
//! ones. The checked variant never vectorizes, so fast and checked runs
//! must agree bit for bit (outcomes, with their error points, and
//! buffers).

mod common;

use alphac::codegen::loop_ast::{
    Accumulation, Affine, BinOp, Bound, Expr, Function, ReduceOp, Stmt,
};
use alphac::jit::{JitFunction, JitOptions};
use common::loops::*;

/// `for v in lo..V { for k < K { s } }`.
fn nest(v_lower: i64, s: Stmt) -> Function {
    func(vec![for_(
        V,
        (Bound::aff(Affine::cst(v_lower)), below(1, 1)),
        vec![for_(K, range(p(2)), vec![s])],
    )])
}

fn assign_f(value: Expr) -> Stmt {
    Stmt::Assign {
        array: F,
        index: vec![var(V), var(K)],
        value,
    }
}

/// Fast and checked runs agree on every parameter vector and seed;
/// returns how many runs failed (with the same error on both sides).
fn fast_matches_checked(f: &Function) -> usize {
    let mut failures = 0;
    for params in PARAMS {
        for seed in 0..6 {
            let (fast, bf) = run(f, &params, seed, false);
            let (checked, bc) = run(f, &params, seed, true);
            assert_eq!(fast, checked, "params {params:?} seed {seed}\n{}", f.to_c());
            if fast.is_ok() {
                assert!(
                    bitwise_equal(&bf, &bc),
                    "params {params:?} seed {seed}\n{}",
                    f.to_c()
                );
            } else {
                failures += 1;
            }
        }
    }
    failures
}

/// Whether the fast variant's Cranelift IR holds `f64x2` operations.
fn vectorized(f: &Function) -> bool {
    let d = JitFunction::disassemble(f, JitOptions { checked: false }).expect("compiles");
    d.split("\nVCode").next().unwrap_or(&d).contains("f64x2")
}

#[test]
fn an_accumulation_runs_as_vectors() {
    // F[v][k] += x[v] * G[v][k]
    let f = nest(
        0,
        Stmt::Accumulate(Accumulation {
            array: F,
            index: vec![var(V), var(K)],
            op: ReduceOp::Add,
            value: Expr::bin(BinOp::Mul, data_v(X), at_vk(G)),
        }),
    );
    assert!(vectorized(&f), "{}", f.to_c());
    assert_eq!(fast_matches_checked(&f), 0);
    // `max` is not a lane operation here: scalar.
    let g = nest(
        0,
        Stmt::Accumulate(Accumulation {
            array: F,
            index: vec![var(V), var(K)],
            op: ReduceOp::Max,
            value: at_vk(G),
        }),
    );
    assert!(!vectorized(&g), "{}", g.to_c());
    assert_eq!(fast_matches_checked(&g), 0);
}

#[test]
fn a_data_selected_row_runs_as_vectors_after_its_check() {
    // F[v][k] = G[z[v]][k] * x[v]: `z[v]` is checked once per `v` (some
    // are out of range: the same error, at the same point, as checking
    // every access).
    let row = Expr::load(G, vec![Expr::load(Z, vec![var(V)]), var(K)]);
    let f = nest(0, assign_f(Expr::bin(BinOp::Mul, row, data_v(X))));
    assert!(vectorized(&f), "{}", f.to_c());
    assert!(
        fast_matches_checked(&f) > 0,
        "the data puts some z[v] out of range"
    );
}

#[test]
fn rows_of_a_written_array_are_read_only_when_disjoint() {
    // F[v][k] = F[v − 1][k] + x[v]: row v − 1 is never the row written.
    let prev = Expr::load(F, vec![aff(V, -1), var(K)]);
    let f = nest(1, assign_f(Expr::bin(BinOp::Add, prev, data_v(X))));
    assert!(vectorized(&f), "{}", f.to_c());
    assert_eq!(fast_matches_checked(&f), 0);
    // F[v][k] = F[v][k − 1]-like reads of the written row stay scalar:
    // F[v][0] is written at k = 0 and read at every k.
    let first = Expr::load(F, vec![var(V), Expr::Int(0)]);
    let g = nest(0, assign_f(Expr::bin(BinOp::Add, first, data_v(X))));
    assert!(!vectorized(&g), "{}", g.to_c());
    assert_eq!(fast_matches_checked(&g), 0);
}

/// `a[v]` for an `[N]` array (`V <= N` in every parameter vector).
fn data_v(a: usize) -> Expr {
    Expr::load(a, vec![var(V)])
}

#[test]
fn a_load_at_a_modular_index_free_of_the_loop_is_broadcast() {
    // F[v][k] = G[v][k] + x[mod(v + 1, 2)] (x stored modulo 2, as a
    // storage-mapped weight): the load is the same at every k.
    let md = Expr::bin(BinOp::Mod, aff(V, 1), Expr::Int(2));
    let f = nest(
        0,
        assign_f(Expr::bin(BinOp::Add, at_vk(G), Expr::load(X, vec![md]))),
    );
    assert!(vectorized(&f), "{}", f.to_c());
    // N = 1 (the first parameter vector, six seeds) leaves x[1] outside
    // x's box: the same broken contract on both sides.
    assert_eq!(fast_matches_checked(&f), 6);
    // x[mod(k, 2)] moves with k (not contiguous): scalar.
    let mk = Expr::bin(BinOp::Mod, var(K), Expr::Int(2));
    let g = nest(
        0,
        assign_f(Expr::bin(BinOp::Add, at_vk(G), Expr::load(X, vec![mk]))),
    );
    assert!(!vectorized(&g), "{}", g.to_c());
    assert_eq!(fast_matches_checked(&g), 0);
}

#[test]
fn the_two_rows_of_an_array_stored_modulo_two_are_disjoint() {
    // F[mod(v, 2)][k] = F[mod(v + 1, 2)][k] + G[v][k]: the row read is
    // never the row written (1 ≢ 0 mod 2), as in a two-row stencil.
    let row = |c: i64| Expr::bin(BinOp::Mod, aff(V, c), Expr::Int(2));
    let stencil = |c: i64| {
        nest(
            0,
            Stmt::Assign {
                array: F,
                index: vec![row(0), var(K)],
                value: Expr::bin(BinOp::Add, Expr::load(F, vec![row(c), var(K)]), at_vk(G)),
            },
        )
    };
    let f = stencil(1);
    assert!(vectorized(&f), "{}", f.to_c());
    // V = 1 (the first parameter vector, six seeds) puts row 1 outside
    // F's box: the same broken contract on both sides.
    assert_eq!(fast_matches_checked(&f), 6);
    // mod(v + 2, 2) is the written row itself: scalar.
    let g = stencil(2);
    assert!(!vectorized(&g), "{}", g.to_c());
    assert_eq!(fast_matches_checked(&g), 0);
}
