//! The algebraic rewrites of reductions (`sdr::rewrite`): merge,
//! idempotence, higher-order operators, decomposition, factorization, and
//! totals read off a running count (endpoint).
//!
//! Every program is checked three ways against the reference interpreter
//! on the ORIGINAL program (no optimization): the interpreter on the
//! optimized program and the JIT (which compiles the optimized program),
//! on seeded random inputs, for several parameter values including the
//! context's edge (`N = 1`). Complexities are asserted against the counts
//! worked out by hand in each test's comment; decisions are asserted to be
//! applied where the rewrite is valid and absent where it is not.

mod common;

use alphac::compile::{compile, parse_program, Options};
use alphac::interp;
use alphac::ir::{ExprKind, Program};
use alphac::poly::complexity::Complexity;
use alphac::runtime::{Array, ArrayData};
use alphac::schedule::Scheduler;
use alphac::sdr::complexity::report;
use alphac::sdr::normalize::normalize;
use alphac::sdr::rewrite::decompose::decompose;
use alphac::sdr::{optimize, DecisionKind, Optimized};
use common::cleanup::{inputs_for, inputs_in_range};
use common::{all_close, Tol};
use proptest::prelude::*;

fn same(a: &Array, b: &Array) -> bool {
    match (a.data(), b.data()) {
        (ArrayData::Float(x), ArrayData::Float(y)) => all_close(x, y, Tol::rel_or_abs(1e-9)),
        (x, y) => x == y,
    }
}

/// Optimizes `src` and checks the optimized program (interpreter) and the
/// JIT against the interpreter on the original program, for every
/// parameter vector of `params` and two seeds. Returns the optimization.
fn check(src: &str, params: &[&[i64]]) -> (Program, Optimized) {
    let p = parse_program(src).unwrap();
    let o = optimize(&p, Scheduler::Pluto).unwrap();
    let jit = compile(src, &Options::default()).unwrap();
    let name = p.systems[0].name.clone();
    for ps in params {
        for (seed, inputs) in [1, 7].into_iter().flat_map(|seed| {
            [
                (seed, inputs_for(&p, ps, seed)),
                (seed, inputs_in_range(&p, ps, seed)),
            ]
        }) {
            let want = match interp::run(&p, &name, ps, &inputs, seed) {
                Ok(w) => w,
                // a run-time error of the program as written (a label out
                // of range): the optimized program and the JIT fail too
                Err(e) => {
                    let got = interp::run(&o.program, &name, ps, &inputs, seed);
                    assert!(got.is_err(), "{e}: the optimized program runs");
                    assert!(jit.run(ps, &inputs, seed).is_err(), "{e}: the JIT runs");
                    continue;
                }
            };
            let got = interp::run(&o.program, &name, ps, &inputs, seed).unwrap();
            let got_jit = jit.run(ps, &inputs, seed).unwrap();
            for (out, w) in &want {
                assert!(
                    same(w, &got[out]),
                    "{out} (params {ps:?}, seed {seed}): interpreter on the optimized program \
                     {:?} differs from the original {:?}\n{:#?}",
                    got[out].data(),
                    w.data(),
                    o.decisions
                );
                assert!(
                    same(w, &got_jit[out]),
                    "{out} (params {ps:?}, seed {seed}): JIT {:?} differs from the original {:?}",
                    got_jit[out].data(),
                    w.data()
                );
            }
        }
    }
    (p, o)
}

/// Whether a decision of `kind` about `var` was applied (`Some(true)`),
/// only declined (`Some(false)`) or never considered (`None`).
fn decided(o: &Optimized, var: &str, kind: DecisionKind) -> Option<bool> {
    let ds: Vec<_> = o
        .decisions
        .iter()
        .filter(|d| d.kind == kind && d.var == var)
        .collect();
    if ds.is_empty() {
        None
    } else {
        Some(ds.iter().any(|d| d.applied))
    }
}

fn totals(p: &Program, o: &Optimized) -> (String, String) {
    let r = report(p, o).unwrap();
    (r.before.to_string(), r.after.to_string())
}

/// The right-hand side of `var` in the optimized program has no reduction.
fn reduction_free(o: &Optimized, var: &str) -> bool {
    let s = &o.program.systems[0];
    let v = s.var_by_name(var).unwrap();
    s.equation_of(v).unwrap().expr.reductions().is_empty()
}

const N: &[&[i64]] = &[&[1], &[2], &[5], &[8]];

// ---------------------------------------------------------------- idempotence

#[test]
fn idempotence_max_of_a_constant_body_is_the_body() {
    // The example: for j >= 0 the slice {k : 0 <= k <= j} is never
    // empty, so Y is X*2 itself: O(N^3) (N^2 results times N) -> O(N^2).
    let src = "affine idem [N] -> { : N > 0 }
        inputs X : float [N, N];
        outputs Y : float [N, N];
        let Y[i, j] = reduce(max, [k], {: 0 <= k <= j} : X[i, j] * 2.0);
    .";
    let (p, o) = check(src, N);
    assert_eq!(decided(&o, "Y", DecisionKind::Idempotence), Some(true));
    assert!(reduction_free(&o, "Y"));
    assert_eq!(totals(&p, &o), ("O(N^3)".into(), "O(N^2)".into()));
}

#[test]
fn idempotence_keeps_the_identity_where_slices_are_empty() {
    // W: {j : 2j >= i + 3, j < N} is empty for i + 4 >= 2N (int max:
    // identity i64::MIN there); A: {j : 0 <= j < i} is empty at i = 0
    // (`and`: true); M: `min` over two directions, one of them (k) the
    // body's.
    let src = "affine idem2 [N] -> { : N > 0 }
        inputs X : int [N]; B : bool [N]; F : float [N];
        outputs W : int [N]; A : bool [N]; M : float [N];
        let
            W[i] = reduce(max, [j], {: 2j >= i + 3 and j < N} : X[i] - 1);
            A[i] = reduce(and, [j], {: 0 <= j < i} : B[i]);
            M[i] = reduce(min, [j, k], {: 0 <= j <= i and 0 <= k <= j} : F[k]);
    .";
    let (_, o) = check(src, N);
    assert_eq!(decided(&o, "W", DecisionKind::Idempotence), Some(true));
    assert_eq!(decided(&o, "A", DecisionKind::Idempotence), Some(true));
    // M's body depends on k only: j collapses, k stays (a decomposition)
    assert_eq!(decided(&o, "M", DecisionKind::Idempotence), Some(true));
    assert_eq!(decided(&o, "M", DecisionKind::Decomposition), Some(true));
    assert!(reduction_free(&o, "W") && reduction_free(&o, "A"));
}

#[test]
fn idempotence_is_not_applied_to_sums_or_varying_bodies() {
    // S: `+` over a body that varies along j; X: `max` over a body that
    // varies along its only direction.
    let src = "affine noidem [N] -> { : N > 0 }
        inputs X : float [N];
        outputs S : float [N]; T : float [N];
        let
            S[i] = reduce(+, [j], {: 0 <= j <= i} : X[j]);
            T[i] = reduce(max, [j], {: 0 <= j <= i} : X[j] * X[j]);
    .";
    let (_, o) = check(src, N);
    for v in ["S", "T"] {
        for k in [
            DecisionKind::Idempotence,
            DecisionKind::HigherOrder,
            DecisionKind::Factorization,
        ] {
            assert_ne!(decided(&o, v, k), Some(true), "{v}: {k:?}");
        }
    }
}

// ------------------------------------------------------------------ broadcast

const ND: &[&[i64]] = &[&[1, 1], &[2, 3], &[5, 4], &[3, 1]];

#[test]
fn broadcast_computes_a_result_constant_along_a_dimension_once() {
    // The total of a leave-one-out sum: Y_red[p, s] = Σ_t m[p, t] does not
    // depend on s (neither the body nor the domain {0 <= t < D} does), so
    // it is Y_red_bc[p], N values instead of N·D; Z: the same for `max`
    // at the top of an output's equation.
    let src = "affine bc [N, D] -> { : N > 0 and D > 0 }
        inputs X : float [N, D]; v : bool [N, D];
        outputs Y, Z : float [N, D];
        let
            Y[p, s] = reduce(+, [t], {: 0 <= t < D} : if v[p, t] then X[p, t] else 0.0)
                    - (if v[p, s] then X[p, s] else 0.0);
            Z[p, s] = reduce(max, [t], {: 0 <= t < D} : X[p, t]);
    .";
    let (_, o) = check(src, ND);
    assert_eq!(decided(&o, "Y_red", DecisionKind::Broadcast), Some(true));
    assert_eq!(decided(&o, "Z", DecisionKind::Broadcast), Some(true));
    let s = &o.program.systems[0];
    for (v, dims) in [("Y_red_bc", 1), ("Z_bc", 1)] {
        let id = s.var_by_name(v).unwrap_or_else(|| panic!("{v} exists"));
        assert_eq!(s.vars[id].domain.n_dims(), dims, "{v}");
    }
    assert!(reduction_free(&o, "Z"));
}

#[test]
fn broadcast_is_declined_where_the_result_varies_along_the_dimension() {
    // A: the domain links t and s; B: the body depends on s through a
    // condition (nothing to factor out); C: C[p, D] is an empty sum (0)
    // while C[p, s < D] is the total, so C is not one value along s.
    let src = "affine nobc [N, D] -> { : N > 0 and D > 0 }
        inputs X : float [N, D];
        outputs
            A, B : float [N, D];
            C : float {[p, s] : 0 <= p < N and 0 <= s <= D};
        let
            A[p, s] = reduce(+, [t], {: 0 <= t <= s} : X[p, t]);
            B[p, s] = reduce(+, [t], {: 0 <= t < D} : if t < s then X[p, t] else 1.0);
            C[p, s] = reduce(+, [t], {: 0 <= t < D and s < D} : X[p, t]);
    .";
    let (_, o) = check(src, ND);
    for v in ["A", "B", "C"] {
        assert_ne!(decided(&o, v, DecisionKind::Broadcast), Some(true), "{v}");
    }
}

#[test]
fn a_broadcast_total_is_inlined_before_its_reader_is_read_indirectly() {
    // all[p, s] becomes all_bc[p] (a pointwise read), h[p, s] reads it,
    // and out reads h at data-selected points. Inlined in that order, the
    // read of h at (nbr, rev) keeps its domain check through X[nbr, rev];
    // all read at (nbr, rev) directly would have nothing checking rev.
    let src = "affine bcin [N, D] -> { : N > 0 and D > 0 }
        inputs X : float [N, D]; nbr, rev : int [N, D];
        outputs out : float [N, D];
        locals h, all : float [N, D];
        let
            all[p, s] = reduce(+, [t], {: 0 <= t < D} : X[p, t]);
            h[p, s] = all[p, s] - X[p, s];
            out[q, t] = h[nbr[q, t], rev[q, t]];
    .";
    let (_, o) = check(src, ND);
    assert_eq!(decided(&o, "all", DecisionKind::Broadcast), Some(true));
    assert_eq!(decided(&o, "all", DecisionKind::Inline), Some(true));
    assert_eq!(decided(&o, "h", DecisionKind::Inline), Some(true));
    assert!(o.program.systems[0].var_by_name("all").is_none());
}

// ----------------------------------------------------------------- complement

#[test]
fn complement_is_the_total_minus_the_hole() {
    // Leave-one-out sums: Y (float, the LBP shape) and C (int). Each is the
    // total over the whole range (then computed once per p, broadcast)
    // minus the body at t = s (a single point, inlined).
    let src = "affine loo [N, D] -> { : N > 0 and D > 0 }
        inputs X : float [N, D]; v : bool [N, D]; A : int [N, D];
        outputs Y : float [N, D]; C : int [N, D];
        let
            Y[p, s] = 0.5 + reduce(+, [t], {: t != s} : if v[p, t] then X[p, t] else 0.0);
            C[p, s] = reduce(+, [t], {: t != s} : A[p, t] * A[p, t]);
    .";
    let (p, o) = check(src, ND);
    assert_eq!(decided(&o, "Y", DecisionKind::Complement), Some(true));
    assert_eq!(decided(&o, "C", DecisionKind::Complement), Some(true));
    let s = &o.program.systems[0];
    for v in ["Y_all_bc", "C_all_bc"] {
        let id = s.var_by_name(v).unwrap_or_else(|| panic!("{v} exists"));
        assert_eq!(s.vars[id].domain.n_dims(), 1, "{v}");
    }
    // no N·D intermediate is left
    for v in &s.vars {
        assert!(!v.name.contains("part"), "{}", v.name);
    }
    assert_eq!(totals(&p, &o), ("O(N*D^2)".into(), "O(N*D)".into()));
}

#[test]
fn complement_is_declined_without_an_inverse_or_a_reduction_hole() {
    // M: `max` has no inverse; R: the hole i = j is on result indices
    // only (the diagonal's results are empty sums, not a total minus a
    // term); T: a gap of two points (j = i, i + 1), not a hyperplane.
    let src = "affine nocomp [N] -> { : N > 0 }
        inputs X : float [N];
        outputs M : float [N]; R : float [N, N]; T : float [N];
        let
            M[i] = reduce(max, [j], {: j != i and 0 <= j < N} : X[j]);
            R[i, j] = reduce(+, [k], {: i != j and 0 <= k < N} : X[k]);
            T[i] = reduce(+, [j], {: j != i and j != i + 1 and 0 <= j < N} : X[j]);
    .";
    let (_, o) = check(src, N);
    for v in ["M", "R", "T"] {
        assert_ne!(decided(&o, v, DecisionKind::Complement), Some(true), "{v}");
    }
}

// ---------------------------------------------------------- higher-order ops

#[test]
fn higher_order_sum_of_a_constant_is_a_product() {
    // The example: |{j : i <= j <= 3i + 1}| = 2i + 2, so
    // Y[i] = (2i + 2) * X[i]: O(N^2) -> O(N).
    let src = "affine ho [N] -> { : N > 0 }
        inputs X : float [N];
        outputs Y : float [N];
        let Y[i] = reduce(+, [j], {: i <= j <= 3i + 1} : X[i]);
    .";
    let (p, o) = check(src, N);
    assert_eq!(decided(&o, "Y", DecisionKind::HigherOrder), Some(true));
    assert!(reduction_free(&o, "Y"));
    assert_eq!(totals(&p, &o), ("O(N^2)".into(), "O(N)".into()));
    // The count in the decision is the number of points: check it against
    // a direct count for a few i.
    let d = o
        .decisions
        .iter()
        .find(|d| d.kind == DecisionKind::HigherOrder && d.applied)
        .unwrap();
    assert!(d.detail.contains("2*i + 2"), "{}", d.detail);
}

#[test]
fn higher_order_with_floor_bounds_and_int_values() {
    // 0 <= 2j <= i + 1 and 3j >= i - 4: the count is
    // floor((i+1)/2) + min(floor((4-i)/3), 0) + 1, with floor divisions of
    // negative numbers for large i; int sums are exact, so the comparison
    // is exact. Z sums an int body into a float result.
    let src = "affine hofl [N] -> { : N > 0 }
        inputs X : int [N];
        outputs Y : int [N]; Z : float [N];
        let
            Y[i] = reduce(+, [j], {: 0 <= 2j <= i + 1 and 3j >= i - 4} : X[i]);
            Z[i] = reduce(+, [j], {: i <= 3j <= 2i + 5} : X[i] * 3);
    .";
    let (p, o) = check(src, &[&[1], &[4], &[13], &[30]]);
    assert_eq!(decided(&o, "Y", DecisionKind::HigherOrder), Some(true));
    assert_eq!(decided(&o, "Z", DecisionKind::HigherOrder), Some(true));
    assert_eq!(totals(&p, &o).1, "O(N)");
}

#[test]
fn higher_order_float_product_is_a_power() {
    // Π_{0 <= j <= i} (X[i] + 0.5) = (X[i] + 0.5)^(i + 1).
    let src = "affine pw [N] -> { : N > 0 }
        inputs X : float [N];
        outputs Y : float [N];
        let Y[i] = reduce(*, [j], {: 0 <= j <= i} : X[i] + 0.5);
    .";
    let (p, o) = check(src, N);
    assert_eq!(decided(&o, "Y", DecisionKind::HigherOrder), Some(true));
    assert_eq!(totals(&p, &o), ("O(N^2)".into(), "O(N)".into()));
}

#[test]
fn higher_order_is_declined_for_int_products_and_varying_bodies() {
    // Q: an int power would lose the overflow check (declined, recorded);
    // V: the body varies along j.
    let src = "affine nho [N] -> { : N > 0 }
        inputs X : float [N];
        outputs Q : int [N]; V : float [N];
        let
            Q[i] = reduce(*, [j], {: 0 <= j <= i} : 2);
            V[i] = reduce(+, [j], {: 0 <= j <= i} : X[j] * X[i - j]);
    .";
    let (_, o) = check(src, N);
    assert_eq!(decided(&o, "Q", DecisionKind::HigherOrder), Some(false));
    assert_ne!(decided(&o, "V", DecisionKind::HigherOrder), Some(true));
}

#[test]
fn higher_order_over_two_directions_and_an_empty_context_edge() {
    // Y: X[i] is constant along j and k over {0 <= k < i, 0 <= j < N}: the
    // count of j is N, then the count of k is i (0 at i = 0, where the
    // slice is empty: a guard keeps the sum's 0): O(N^3) -> O(N).
    // T: over {0 <= j < i, 0 <= k <= j} one line count makes the body
    // depend on the other reduction index and the sum of counts is not a
    // line count: the partial collapse would hide j from SDR, so it is
    // left to SDR (no rewrite applied), which simplifies T alone.
    let src = "affine ho2 [N] -> { : N > 0 }
        inputs X : float [N];
        outputs Y : float [N]; T : float [N];
        let
            Y[i] = reduce(+, [j, k], {: 0 <= k < i and 0 <= j < N} : X[i]);
            T[i] = reduce(+, [j, k], {: 0 <= j < i and 0 <= k <= j} : X[i]);
    .";
    let (p, o) = check(src, N);
    assert_eq!(decided(&o, "Y", DecisionKind::HigherOrder), Some(true));
    assert!(reduction_free(&o, "Y"));
    assert_eq!(decided(&o, "T", DecisionKind::HigherOrder), None);
    let r = report(&p, &o).unwrap();
    assert_eq!(r.lines[0].after.to_string(), "O(N)");
    assert_eq!(r.lines[1].before.to_string(), "O(N^3)");
}

// -------------------------------------------------------------- decomposition

#[test]
fn decomposition_collapses_the_constant_part_of_the_reduction() {
    // X[i, j] is constant along k only: the inner reduction along k
    // becomes a count (min(2j + 1, N - 1) - j + 1), the outer one along j
    // stays: O(N^3) -> O(N^2).
    let src = "affine part [N] -> { : N > 0 }
        inputs X : float [N, N];
        outputs Y : float [N];
        let Y[i] = reduce(+, [j, k], {: 0 <= j <= i and j <= k <= 2j + 1 and k < N} : X[i, j]);
    .";
    let (p, o) = check(src, N);
    assert_eq!(decided(&o, "Y", DecisionKind::HigherOrder), Some(true));
    assert_eq!(decided(&o, "Y", DecisionKind::Decomposition), Some(true));
    assert_eq!(totals(&p, &o), ("O(N^3)".into(), "O(N^2)".into()));
}

#[test]
fn standalone_decomposition_is_two_equal_reductions() {
    // reduce(+, [j, k], X[j, k]) split into an inner reduction along k and
    // an outer one along j, for each operator; `decompose` refuses a kept
    // dimension and unknown names.
    for op in ["+", "max", "min", "*"] {
        let src = format!(
            "affine dec [N] -> {{ : N > 0 }}
            inputs X : float [N, N];
            outputs Y : float [N];
            let Y[i] = reduce({op}, [j, k], {{: 0 <= j <= i and j <= k < N}} : X[j, k] + 0.5);
        ."
        );
        let p = parse_program(&src).unwrap();
        let n = normalize(&p).unwrap();
        let d = decompose(&n, 0, "Y", &["k"]).unwrap().expect("applies");
        let s = &d.systems[0];
        assert_eq!(s.equations.len(), 2, "{op}: one more equation");
        assert!(s
            .equations
            .iter()
            .all(|e| matches!(e.expr.kind, ExprKind::Reduce(_))));
        for ps in N {
            let inputs = inputs_for(&p, ps, 3);
            let want = interp::run(&p, "dec", ps, &inputs, 3).unwrap();
            let got = interp::run(&d, "dec", ps, &inputs, 3).unwrap();
            assert!(same(&want["Y"], &got["Y"]), "{op} {ps:?}");
        }
        assert!(decompose(&n, 0, "Y", &["i"]).unwrap().is_none());
        assert!(decompose(&n, 0, "Y", &["q"]).unwrap().is_none());
    }
}

// -------------------------------------------------------------- factorization

#[test]
fn factorization_moves_a_constant_factor_out() {
    // X[i - 1] does not depend on j: Y[i] = X[i - 1] * Σ_{j < i} Z[j]; at
    // i = 0 the slice is empty and X[-1] does not exist, so the factor is
    // guarded (0 there). The remaining sum is a prefix sum for SDR:
    // O(N^2) -> O(N). M: max(X[i-1] + Z[j]) = X[i-1] + max(Z[j]).
    let src = "affine fac [N] -> { : N > 0 }
        inputs X : float [N]; Z : float [N];
        outputs Y : float [N]; M : float [N];
        let
            Y[i] = reduce(+, [j], {: 0 <= j < i} : X[i - 1] * Z[j]);
            M[i] = reduce(max, [j], {: 0 <= j < i} : X[i - 1] + Z[j]);
    .";
    let (p, o) = check(src, N);
    assert_eq!(decided(&o, "Y", DecisionKind::Factorization), Some(true));
    assert_eq!(decided(&o, "M", DecisionKind::Factorization), Some(true));
    assert_eq!(totals(&p, &o), ("O(N^2)".into(), "O(N)".into()));
}

#[test]
fn factorization_is_not_applied_without_a_constant_factor() {
    // Every factor depends on j; `*` is never factored out of `max`.
    let src = "affine nofac [N] -> { : N > 0 }
        inputs X : float [N]; Z : float [N];
        outputs Y : float [N]; M : float [N];
        let
            Y[i] = reduce(+, [j], {: 0 <= j <= i} : X[j] * Z[i - j]);
            M[i] = reduce(max, [j], {: 0 <= j <= i} : X[i] * Z[j]);
    .";
    let (_, o) = check(src, N);
    assert_ne!(decided(&o, "Y", DecisionKind::Factorization), Some(true));
    assert_ne!(decided(&o, "M", DecisionKind::Factorization), Some(true));
}

// ---------------------------------------------------------------------- merge

#[test]
fn merge_lets_the_other_rewrites_see_the_whole_reduction() {
    // Σ_{0 <= j <= i} Σ_{0 <= k < N} X[i]: merged into one reduction over
    // (j, k), constant along both: Y[i] = (i + 1) * (N * X[i]), O(N).
    // Without the merge the inner sum collapses to N * X[i] but the outer
    // one still reads a local indexed by j: O(N^2). The inner local is
    // removed.
    let src = "affine mrg [N] -> { : N > 0 }
        inputs X : float [N];
        outputs Y : float [N];
        let Y[i] = reduce(+, [j], {: 0 <= j <= i} : reduce(+, [k], {: 0 <= k < N} : X[i]));
    .";
    let (p, o) = check(src, N);
    assert_eq!(decided(&o, "Y", DecisionKind::Merge), Some(true));
    assert!(reduction_free(&o, "Y"));
    assert_eq!(totals(&p, &o), ("O(N^3)".into(), "O(N)".into()));
    let s = &o.program.systems[0];
    assert!(
        s.vars.iter().all(|v| v.name != "Y_red"),
        "inner local removed"
    );
}

#[test]
fn merge_is_declined_when_nothing_simplifies_or_operators_differ() {
    // Y: the merged body X[j, k] varies along both directions (declined,
    // recorded); Z: `max` of a `+` reduction (different operators: never
    // merged).
    let src = "affine nomrg [N] -> { : N > 0 }
        inputs X : float [N, N];
        outputs Y : float [N]; Z : float [N];
        let
            Y[i] = reduce(+, [j], {: 0 <= j <= i} : reduce(+, [k], {: 0 <= k <= j} : X[j, k]));
            Z[i] = reduce(max, [j], {: 0 <= j <= i} : reduce(+, [k], {: 0 <= k <= j} : X[j, k]));
    .";
    let (_, o) = check(src, N);
    assert_eq!(decided(&o, "Y", DecisionKind::Merge), Some(false));
    assert_eq!(decided(&o, "Z", DecisionKind::Merge), None);
}

#[test]
fn stochastic_bodies_are_never_rewritten() {
    // normal(...) is constant syntactically along j but is a new draw at
    // every point: no rewrite may collapse it.
    let src = "affine rnd [N] -> { : N > 0 }
        inputs X : float [N];
        outputs Y : float [N];
        let Y[i] = reduce(+, [j], {: 0 <= j <= i} : normal(X[i], 1.0));
    .";
    let (_, o) = check(src, N);
    assert!(o
        .decisions
        .iter()
        .all(|d| !(d.applied && d.kind == DecisionKind::HigherOrder)));
}

// ------------------------------------------------------------------- property

/// Every term of `after` is dominated by a term of `before`.
fn not_worse(after: &Complexity, before: &Complexity) -> bool {
    after
        .terms
        .iter()
        .all(|t| before.terms.iter().any(|u| u.dominates(t)))
}

/// A random reduction: `Y[i] = reduce(op, [j, k], D : body)` (or `[j]`).
fn program(
    op: usize,
    two: bool,
    lo: usize,
    hi: usize,
    klo: usize,
    khi: usize,
    body: usize,
) -> String {
    let (op, ty) = [
        ("+", "float"),
        ("*", "float"),
        ("max", "float"),
        ("min", "float"),
        ("and", "bool"),
        ("or", "bool"),
    ][op];
    let j_lo = ["0 <= j", "i <= j", "i - 2 <= j", "i <= 2j"][lo];
    let j_hi = ["j <= i", "j < N", "j <= 2i + 1", "2j <= i + 3"][hi];
    let k_dom = if two {
        let k_lo = ["0 <= k", "j <= k", "i <= 2k"][klo];
        let k_hi = ["k < N", "k <= j + 2", "k <= i"][khi];
        format!(" and {k_lo} and {k_hi}")
    } else {
        String::new()
    };
    let dims = if two { "[j, k]" } else { "[j]" };
    // (`0 <= j and 3j <= 2i + 4` is avoided: SDR alone takes 35 s on it.)
    // Bodies constant along: everything, k only, j only, nothing; and a
    // factorable product.
    let fbodies = [
        "F[i] + 0.25",
        "F[j] * 0.5",
        "G[i, k]",
        "G[j, k] + F[i]",
        "F[i] * G[j, k]",
    ];
    let bbodies = [
        "B[i]",
        "B[j]",
        "C[i, k]",
        "C[j, k] or B[i]",
        "B[i] and C[j, k]",
    ];
    let mut b = if ty == "float" {
        fbodies[body]
    } else {
        bbodies[body]
    }
    .to_string();
    if !two {
        b = b.replace(", k]", ", j]");
    }
    format!(
        "affine rr [N] -> {{ : N > 0 }}
        inputs F : float [N]; G : float [N, N]; B : bool [N]; C : bool [N, N];
        outputs Y : {ty} [N];
        let Y[i] = reduce({op}, {dims}, {{: {j_lo} and {j_hi} and j < N{k_dom}}} : {b});
    ."
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn random_reductions_are_preserved(
        op in 0usize..6,
        two in any::<bool>(),
        lo in 0usize..4,
        hi in 0usize..4,
        klo in 0usize..3,
        khi in 0usize..3,
        body in 0usize..5,
    ) {
        let src = program(op, two, lo, hi, klo, khi, body);
        let (p, o) = check(&src, &[&[1], &[3], &[6]]);
        let r = report(&p, &o).unwrap();
        prop_assert!(
            not_worse(&r.after, &r.before),
            "{src}\ncomplexity {} -> {}", r.before, r.after
        );
    }
}

// ------------------------------------------------------------------- endpoint

/// A leave-one-out count `C` (labels `y` before `i`, `z` after) with the
/// equations `totals` of the outputs `outputs`.
fn counts(totals: &str, outputs: &str) -> String {
    format!(
        "affine ep [N, K] -> {{ : N > 0 and K > 0 }}
        inputs y, z : int [N]; X : int [N, K];
        outputs C : int [K, N]; {outputs}
        let
            C[k, i] = reduce(+, [j], {{: 0 <= j < i}} : if y[j] == k then 1 else 0)
                    + reduce(+, [j], {{: i < j < N}} : if z[j] == k then 1 else 0);
            {totals}
    ."
    )
}

const NK: &[&[i64]] = &[&[1, 1], &[2, 3], &[5, 2], &[9, 4]];

#[test]
fn endpoint_reads_a_total_off_the_running_count() {
    // F (the labels y, all of them) is C at i = N - 1 plus the last label;
    // G (the labels z) is C at i = 0 plus the first one, where the prefix
    // part is empty. Both were O(N K) passes of their own; now O(K).
    let src = counts(
        "F[k] = reduce(+, [j], {: 0 <= j < N} : if y[j] == k then 1 else 0);
         G[k] = reduce(+, [j], {: 0 <= j < N} : if z[j] == k then 1 else 0);",
        "F, G : int [K];",
    );
    let (_, o) = check(&src, NK);
    assert_eq!(decided(&o, "F", DecisionKind::Endpoint), Some(true));
    assert_eq!(decided(&o, "G", DecisionKind::Endpoint), Some(true));
    assert!(reduction_free(&o, "F") && reduction_free(&o, "G"));
    let text: Vec<&str> = o
        .decisions
        .iter()
        .filter(|d| d.kind == DecisionKind::Endpoint)
        .map(|d| d.detail.as_str())
        .collect();
    assert_eq!(
        text,
        [
            "F = C[.., N - 1] + its last part",
            "G = C[.., 0] + its last part"
        ]
    );
}

#[test]
fn endpoint_is_declined_where_a_total_is_not_a_count_end() {
    // H: another body (2 per label); P: a float sum (another order is
    // another number); Q: E's body, but E at N - 1 covers only half the
    // range (the rest costs as much as the total).
    let src = "affine ep2 [N, K] -> { : N > 0 and K > 0 }
        inputs y : int [N]; Y : float [N];
        outputs H : int [K]; P : float [K]; Q : int [K];
                C : int [K, N]; D : float [K, N]; E : int [K, N];
        let
            C[k, i] = reduce(+, [j], {: 0 <= j < i} : if y[j] == k then 1 else 0);
            D[k, i] = reduce(+, [j], {: 0 <= j < i} : if y[j] == k then Y[j] else 0.0);
            E[k, i] = reduce(+, [j], {: 0 <= 2j < i} : if y[j] == k then 3 else 0);
            H[k] = reduce(+, [j], {: 0 <= j < N} : if y[j] == k then 2 else 0);
            P[k] = reduce(+, [j], {: 0 <= j < N} : if y[j] == k then Y[j] else 0.0);
            Q[k] = reduce(+, [j], {: 0 <= j < N} : if y[j] == k then 3 else 0);
    .";
    let (_, o) = check(src, NK);
    for v in ["H", "P", "Q"] {
        assert_eq!(decided(&o, v, DecisionKind::Endpoint), None, "{v}");
    }
}

#[test]
fn endpoint_never_makes_a_cycle() {
    // C's suffix part reads G, which reads F: reading F off C would make F
    // depend on itself (the suffix part is empty at i = N - 1, so only the
    // dependence test stops that). F is read off C's prefix part instead,
    // the local normalization gave it.
    let src = "affine ep3 [N, K] -> { : N > 0 and K > 0 }
        inputs y : int [N];
        outputs C : int [K, N]; F : int [K];
        locals G : int [N, K];
        let
            F[k] = reduce(+, [j], {: 0 <= j < N} : if y[j] == k then 1 else 0);
            G[j, k] = F[k] + j;
            C[k, i] = reduce(+, [j], {: 0 <= j < i} : if y[j] == k then 1 else 0)
                    + reduce(+, [j], {: i < j < N} : G[j, k]);
    .";
    let (_, o) = check(src, NK);
    let d = o
        .decisions
        .iter()
        .find(|d| d.kind == DecisionKind::Endpoint && d.var == "F")
        .expect("F read off a count");
    assert_eq!(d.detail, "F = C_red[.., N - 1] + its last part");
}
