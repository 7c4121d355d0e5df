//! Count arrays (`jit::analysis::counts`): an int array initialized over
//! its whole box by its first statement and changed afterwards only by
//! small steps (`A[x] = A[y] ± c`) holds values bounded by the number of
//! steps, so the fast variant adds to its loads without an overflow test
//! when that bound, for the run's parameters, is far from `i64`'s limits
//! (otherwise the run takes the checked variant).
//!
//! Each program runs fast and checked on the same buffers (outcomes with
//! their failing point, buffers bit for bit); the shape tests count the
//! overflow tests in the fast variant's optimized IR.

mod common;

use alphac::codegen::loop_ast::{BinOp, Cast, Expr, Function, Stmt};
use alphac::jit::{ExecError, JitFunction};
use common::loops::*;
use proptest::prelude::*;

/// `A[v][k] = c` for `v < V`, `k <= K − less` (`less = 1`: `A`'s box).
fn init_a(c: i64, less: i64) -> Stmt {
    let a_vk = set(A, vec![var(V), var(K)], Expr::Int(c));
    for_(
        V,
        range(p(1)),
        vec![for_(K, (zero(), below(2, less)), vec![a_vk])],
    )
}

/// `A[w[i]][z[i]]`.
fn a_wz() -> Vec<Expr> {
    vec![data(W, 0), data(Z, 0)]
}

/// `for i { A[w[i]][z[i]] = value }`.
fn over_i(value: Expr) -> Stmt {
    for_(I, range(p(0)), vec![set(A, a_wz(), value)])
}

/// `A[w[i]][z[i]] op c`.
fn step(op: BinOp, c: i64) -> Expr {
    Expr::bin(op, Expr::load(A, a_wz()), Expr::Int(c))
}

/// `for i { x[i] = float(A[w[i]][z[i]] − 1) }`: a read of the counts
/// that subtracts a small value.
fn read_back() -> Stmt {
    let v = Expr::cast(Cast::IntToFloat, step(BinOp::Sub, 1));
    for_(I, range(p(0)), vec![set(X, vec![var(I)], v)])
}

/// The sampler's shape: counts cleared, one up per token, one down per
/// token, read back.
fn counts_program(first: Vec<Stmt>, down: Expr) -> Function {
    let mut body = first;
    body.extend([over_i(step(BinOp::Add, 1)), over_i(down), read_back()]);
    func(body)
}

/// Fast and checked runs of `f` agree (outcome, buffers bit for bit) on
/// in-range labels for every parameter vector and a few seeds.
fn fast_is_checked(f: &Function) {
    for params in PARAMS {
        for seed in 0..3 {
            let (rf, _, bf) = run_in_range(f, &params, seed, false);
            let (rc, _, bc) = run_in_range(f, &params, seed, true);
            assert_eq!(rf, rc, "params {params:?}\n{}", f.to_c());
            assert!(bitwise_equal(&bf, &bc), "params {params:?}\n{}", f.to_c());
        }
    }
}

#[test]
fn steps_of_a_cleared_count_array_are_not_tested_for_overflow() {
    // The three statements' sums (`+ 1`, `− 1`, the read's `− 1`) are
    // untested when the counts are cleared first; each change below makes
    // `A` an ordinary array, whose sums are all tested again.
    let sums = 3;
    let counts = counts_program(vec![init_a(0, 1)], step(BinOp::Sub, 1));
    assert_eq!(overflow_tests(&counts), 0, "{}", counts.to_c());
    fast_is_checked(&counts);
    let (r, _, after) = run_in_range(&counts, &[9, 4, 4], 1, false);
    assert_eq!(r, Ok(()));
    // Each token's cell went up and down: the counts are 0 again.
    assert!(ints(&after[A]).iter().all(|&n| n == 0), "{}", counts.to_c());
    let x = floats(&after[X]);
    assert!(x.iter().all(|&v| v == -1.0), "{x:?}");
    let not_counts = [
        // no clearing: `A`'s first statement is a step
        counts_program(vec![], step(BinOp::Sub, 1)),
        // cleared but for the last column
        counts_program(vec![init_a(0, 2)], step(BinOp::Sub, 1)),
        // read before it is cleared
        counts_program(vec![read_back(), init_a(0, 1)], step(BinOp::Sub, 1)),
        // a step by data, not by a small constant
        counts_program(
            vec![init_a(0, 1)],
            Expr::bin(BinOp::Sub, Expr::load(A, a_wz()), data(W, 0)),
        ),
        // a write that is not a step
        counts_program(vec![init_a(0, 1)], step(BinOp::Mul, 2)),
    ];
    for g in &not_counts {
        assert!(
            overflow_tests(g) >= sums,
            "{}\n{}",
            overflow_tests(g),
            g.to_c()
        );
        fast_is_checked(g);
    }
}

#[test]
fn counts_whose_bound_does_not_fit_take_the_checked_variant() {
    // Steps of 2^61 (the largest small value): one token keeps the bound
    // at 2^61, the fast variant runs; from two tokens on the bound is
    // over it and the run is checked, and four steps of 2^61 on one cell
    // overflow, as the checked variant reports.
    let big = 1i64 << 61;
    let f = func(vec![init_a(0, 1), over_i(step(BinOp::Add, big))]);
    let j = JitFunction::compile(&f).expect("compiles");
    assert_eq!(j.proves_affine_accesses(&[1, 1, 1]), Ok(true));
    assert_eq!(j.proves_affine_accesses(&[4, 1, 1]), Ok(false));
    // One word and one label: every token steps `A[0][0]`.
    let (r, _, _) = run_in_range(&f, &[4, 1, 1], 0, false);
    assert_eq!(r, Err(ExecError::Overflow), "{}", f.to_c());
    let (r, _, after) = run_in_range(&f, &[3, 1, 1], 0, false);
    assert_eq!(r, Ok(()));
    assert_eq!(ints(&after[A]), &[3 * big]);
    fast_is_checked(&f);
}

/// A small value of the count property tests: near 0, or near the
/// largest step (`2^61`), so that some runs overflow.
fn small_value() -> impl Strategy<Value = i64> {
    prop_oneof![
        -3i64..=3,
        Just(1i64 << 60),
        Just(1i64 << 61),
        Just(-(1i64 << 61))
    ]
}

/// One statement over the tokens: a step `A[w][z] = A[w][z] ± c` (`c +
/// A[w][z]` too), or a read `x[i] = float(A[w][z] ± c)`.
fn token_stmt() -> impl Strategy<Value = Stmt> {
    (0..4u8, small_value()).prop_map(|(kind, c)| {
        let load = || Expr::load(A, a_wz());
        match kind {
            0 => over_i(Expr::bin(BinOp::Add, load(), Expr::Int(c))),
            1 => over_i(Expr::bin(BinOp::Sub, load(), Expr::Int(c))),
            2 => over_i(Expr::bin(BinOp::Add, Expr::Int(c), load())),
            _ => {
                let v = Expr::cast(
                    Cast::IntToFloat,
                    Expr::bin(BinOp::Sub, load(), Expr::Int(c)),
                );
                for_(I, range(p(0)), vec![set(X, vec![var(I)], v)])
            }
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Counts cleared to `c0`, then random steps and reads: the fast
    /// variant (sums untested while the run's bound fits, the checked
    /// variant otherwise) runs exactly as the checked one, overflows
    /// included, on every parameter vector.
    #[test]
    fn random_steps_run_as_the_checked_variant(
        c0 in small_value(),
        stmts in proptest::collection::vec(token_stmt(), 1..5),
        seed in 0u64..1000,
    ) {
        let f = func([vec![init_a(c0, 1)], stmts].concat());
        for params in PARAMS {
            let (rf, _, bf) = run_in_range(&f, &params, seed, false);
            let (rc, _, bc) = run_in_range(&f, &params, seed, true);
            prop_assert_eq!(&rf, &rc, "params {:?}\n{}", params, f.to_c());
            prop_assert!(bitwise_equal(&bf, &bc), "params {:?}\n{}", params, f.to_c());
        }
    }
}
