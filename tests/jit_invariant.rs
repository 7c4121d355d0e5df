//! Loop-invariant loads (`jit::lower::invariant`): the sub-expressions of
//! a loop body that read memory, have one value while the loop runs and
//! cannot fail are computed once before the loop's first iteration, in
//! the fast variant. The checked variant computes everything where it is,
//! so the two must agree bit for bit (outcomes and buffers).

mod common;

use alphac::codegen::loop_ast::{Affine, BinOp, Bound, Cast, Expr, Function, Stmt};
use alphac::jit::{JitFunction, JitOptions};
use common::loops::*;

/// `for v < V { for k in lo..K { F[v][k] = value } }`.
fn nest(k_lower: Bound, value: Expr) -> Function {
    func(vec![for_(
        V,
        range(p(1)),
        vec![for_(
            K,
            (k_lower, below(2, 1)),
            vec![Stmt::Assign {
                array: F,
                index: vec![var(V), var(K)],
                value,
            }],
        )],
    )])
}

/// `x[v + c]`.
fn x_at_v(c: i64) -> Expr {
    Expr::load(X, vec![aff(V, c)])
}

/// `float(A[v][k])`.
fn count_vk() -> Expr {
    Expr::Cast(Cast::IntToFloat, Box::new(at_vk(A)))
}

/// The fast and the checked variant of `f` agree on every parameter
/// vector and seed: same outcome, bit-identical buffers.
fn fast_matches_checked(f: &Function) {
    for params in PARAMS {
        for seed in 0..4 {
            let (fast, bf) = run(f, &params, seed, false);
            let (checked, bc) = run(f, &params, seed, true);
            assert_eq!(fast, checked, "params {params:?}\n{}", f.to_c());
            assert!(
                bitwise_equal(&bf, &bc),
                "params {params:?} seed {seed}\n{}",
                f.to_c()
            );
        }
    }
}

/// The number of float loads in the optimized Cranelift IR of `f`.
fn float_loads(f: &Function, checked: bool) -> usize {
    let d = JitFunction::disassemble(f, JitOptions { checked }).expect("compiles");
    let clif = d.split("\nVCode").next().unwrap_or(&d);
    clif.lines()
        .filter(|l| l.contains("= load.f64") || l.contains("= load.f64 "))
        .count()
}

#[test]
fn an_invariant_load_is_read_once_per_loop() {
    // `x[v]` does not change while `k` runs: one load before the loop
    // instead of one per unrolled copy and in the remainder loop.
    let f = nest(zero(), Expr::bin(BinOp::Mul, x_at_v(0), count_vk()));
    fast_matches_checked(&f);
    let (fast, checked) = (float_loads(&f, false), float_loads(&f, true));
    assert_eq!(fast, 1, "fast variant: {fast} float loads");
    assert!(checked > 1, "checked variant: {checked} float loads");
}

#[test]
fn a_load_of_an_array_the_loop_writes_stays_in_the_loop() {
    // `F[v][0]` is written at `k = 0`: read at every `k`, so later
    // iterations see the new value.
    let f = nest(
        zero(),
        Expr::bin(
            BinOp::Add,
            Expr::load(F, vec![var(V), Expr::Int(0)]),
            count_vk(),
        ),
    );
    fast_matches_checked(&f);
    for params in PARAMS {
        let (r, bufs) = run(&f, &params, 3, false);
        assert!(r.is_ok());
        let (a, fl) = (
            bufs[A].as_int().expect("ints"),
            bufs[F].as_float().expect("floats"),
        );
        let k = params[2] as usize;
        for v in 0..params[1] as usize {
            // F[v][0] = F0 + A[v][0]; F[v][j] = F[v][0] + A[v][j]
            let f0 = fl[v * k];
            for j in 1..k {
                assert_eq!(fl[v * k + j], f0 + a[v * k + j] as f64);
            }
        }
    }
}

#[test]
fn loads_of_an_empty_loop_or_under_a_branch_agree() {
    // `x[v − 1]` is out of the box at `v = 0`, where the loop
    // `k in 0..v−1` is empty: the invariant is computed only when the
    // loop runs (the fast variant's proof covers the loads it performs).
    let empty_at_zero = func(vec![for_(
        V,
        range(p(1)),
        vec![for_(
            K,
            (
                zero(),
                Bound::aff(Affine::var(V).offset(-1).expect("small")),
            ),
            vec![Stmt::Assign {
                array: F,
                index: vec![var(V), var(K)],
                value: Expr::bin(BinOp::Mul, x_at_v(-1), count_vk()),
            }],
        )],
    )]);
    fast_matches_checked(&empty_at_zero);
    // Under a data condition: the branch is not hoisted from, its
    // condition's load is.
    let branch = func(vec![for_(
        V,
        range(p(1)),
        vec![for_(
            K,
            range(p(2)),
            vec![Stmt::If {
                cond: Expr::load(B, vec![var(V), Expr::Int(0)]),
                then: vec![Stmt::Assign {
                    array: F,
                    index: vec![var(V), var(K)],
                    value: Expr::bin(BinOp::Div, count_vk(), x_at_v(0)),
                }],
                els: vec![],
            }],
        )],
    )]);
    fast_matches_checked(&branch);
}

/// The `select` instructions in the optimized Cranelift IR of `f`.
fn selects(f: &Function, checked: bool) -> usize {
    let d = JitFunction::disassemble(f, JitOptions { checked }).expect("compiles");
    let clif = d.split("\nVCode").next().unwrap_or(&d);
    clif.lines().filter(|l| l.contains("= select")).count()
}

/// `cond ? a : b`.
fn pick(cond: Expr, a: Expr, b: Expr) -> Expr {
    Expr::Select(Box::new(cond), Box::new(a), Box::new(b))
}

#[test]
fn a_select_on_data_reads_both_affine_branches_without_a_branch() {
    // `F[v][k] > 0.5 ? G[v][k] : F[v][k]`: the interval analysis takes no
    // fact from a condition on data, so it proved both loads at the
    // select's own point; the fast variant loads both and selects (no
    // branch to mispredict), the checked variant, where a load may fail,
    // branches.
    let on_data = pick(
        Expr::bin(BinOp::Gt, at_vk(F), Expr::Float(0.5)),
        at_vk(G),
        at_vk(F),
    );
    let f = nest(zero(), on_data);
    assert!(selects(&f, false) > selects(&f, true), "{}", f.to_c());
    fast_matches_checked(&f);
    // `k >= 1 ? G[v][k - 1] : 0.0`: the load is proven only under its
    // branch's fact `k >= 1`; it is not evaluated where `k = 0`.
    let on_index = pick(
        Expr::bin(BinOp::Ge, var(K), Expr::Int(1)),
        Expr::load(G, vec![var(V), aff(K, -1)]),
        Expr::Float(0.0),
    );
    let g = nest(zero(), on_index);
    assert_eq!(selects(&g, false), selects(&g, true), "{}", g.to_c());
    fast_matches_checked(&g);
}
