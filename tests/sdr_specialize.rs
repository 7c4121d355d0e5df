//! Data-selected reductions in the cleanup after SDR: a reduction that
//! selects one body point by a label (`reduce(+, [k], if k == c[i] then
//! F else 0)`) becomes a pointwise equation (`sdr::cleanup::selected`),
//! and a reduction-defined table read only at data-selected points
//! (`R[c[i], i]` under a guard, or at a `categorical` label) is computed at
//! those points alone (`sdr::cleanup::specialize`); a choice between two
//! values is not made where they are equal (`sdr::cleanup::arms`), and a
//! reduction read only under a known condition is computed only where it
//! holds (`sdr::cleanup::guard`).
//!
//! Every rewrite is checked where it applies and where it must not, by
//! running the reference interpreter on the original and on the cleaned-up
//! program (seeded random inputs: ints in 0..10, so that labels fall both
//! inside and outside `0..K`; several parameter values; draws at a fixed
//! seed): integers and booleans equal, floats equal except for the sign of
//! a zero, and a run that fails (a label outside a domain) fails on both.
//! The result passes the static domain checks, prints back to `.alpha`
//! that parses, and the JIT on it agrees with the interpreter.

mod common;

use alphac::compile::{compile, parse_program, Options};
use alphac::interp;
use alphac::ir::{check_domains, print, ExprKind, Program};
use alphac::poly::complexity::complexity;
use alphac::runtime::{Array, ArrayData};
use alphac::sdr::cleanup::cleanup;
use alphac::sdr::normalize::normalize;
use alphac::sdr::{Decision, DecisionKind};
use common::cleanup::{decided, exact, has_var, inputs_for, inputs_in_range, rhs};
use common::{all_close, Tol};
use proptest::prelude::*;
use std::collections::HashMap;

/// The interpreter on `a` and `b` agree exactly, or both fail (on random
/// inputs, and on inputs with every int in range of the parameters).
fn agree(a: &Program, b: &Program, params: &[i64], seed: u64) {
    agree_on(a, b, params, seed, &inputs_for(a, params, seed));
    agree_on(a, b, params, seed, &inputs_in_range(a, params, seed));
}

fn agree_on(a: &Program, b: &Program, params: &[i64], seed: u64, inputs: &HashMap<String, Array>) {
    let name = &a.systems[0].name;
    let want = interp::run(a, name, params, inputs, seed);
    let got = interp::run(b, name, params, inputs, seed);
    match (want, got) {
        (Ok(w), Ok(g)) => {
            for (out, x) in &w {
                assert!(
                    exact(x, &g[out]),
                    "{out} (params {params:?}, seed {seed}): {:?} vs {:?}\n{}",
                    g[out].data(),
                    x.data(),
                    print::program_to_alpha(b)
                );
            }
        }
        (Err(_), Err(_)) => {}
        (w, g) => panic!(
            "params {params:?}, seed {seed}: original {:?}, cleaned {:?}\n{}",
            w.map(|_| ()),
            g.map(|_| ()),
            print::program_to_alpha(b)
        ),
    }
}

/// Cleans up `src` (normalized first), checks it against the original for
/// every parameter vector and three seeds, and checks that the result
/// passes the domain checks and prints back to a program that parses.
fn check(src: &str, params: &[&[i64]]) -> (Program, Program, Vec<Decision>) {
    let p = parse_program(src).unwrap();
    let (q, ds) = cleanup(&normalize(&p).unwrap()).unwrap();
    let errors = check_domains::check_program(&q);
    assert!(
        errors.is_empty(),
        "{errors:?}\n{}",
        print::program_to_alpha(&q)
    );
    let text = print::program_to_alpha(&q);
    parse_program(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    for ps in params {
        for seed in [1, 7, 12] {
            agree(&p, &q, ps, seed);
        }
    }
    (p, q, ds)
}

/// The JIT on the cleaned-up program (printed, compiled without the
/// optimizer) agrees with the interpreter on the original, or both fail.
fn jit_agrees(p: &Program, q: &Program, params: &[i64]) {
    let text = print::program_to_alpha(q);
    let options = Options {
        optimize: false,
        ..Options::default()
    };
    let jit = compile(&text, &options).unwrap_or_else(|e| panic!("{e}\n{text}"));
    for seed in [3, 4] {
        let inputs = if seed == 3 {
            inputs_for(p, params, seed)
        } else {
            inputs_in_range(p, params, seed)
        };
        let name = &p.systems[0].name;
        let want = interp::run(p, name, params, &inputs, seed);
        let got = jit.run(params, &inputs, seed);
        let (Ok(want), Ok(got)) = (&want, &got) else {
            assert_eq!(want.is_ok(), got.is_ok(), "{text}");
            continue;
        };
        for (out, w) in want {
            let ok = match (w.data(), got[out].data()) {
                (ArrayData::Float(x), ArrayData::Float(y)) => all_close(x, y, Tol::rel(0.0)),
                (x, y) => x == y,
            };
            assert!(ok, "{out}: JIT {:?} vs {:?}", got[out].data(), w.data());
        }
    }
}

/// `[N, K]` and `[N, K, M]` values: labels (0..10) inside and outside K.
const NK: &[&[i64]] = &[&[1, 1], &[3, 4], &[5, 12], &[6, 7]];
const NKM: &[&[i64]] = &[&[1, 1, 1], &[3, 4, 2], &[5, 12, 3], &[6, 7, 4]];

// ------------------------------------------------------------- selected

#[test]
fn a_reduction_selecting_one_label_becomes_pointwise() {
    // Y: `+` over 0 <= k < K; Z: `*` over i <= k < K (the range depends
    // on i: empty for i >= K), the label on the left; U: an int body in a
    // float reduction, with a condition after the selecting equality.
    let src = "affine sel [N, K] -> { : N > 0 and K > 0 }
        inputs c : int [N]; T : float [K, N]; G : int [K, N];
        outputs Y : float [N]; Z : int [N]; U : float [N];
        let
          Y[i] = reduce(+, [k], {: 0 <= k < K} : if k == c[i] then T[k, i] * 2.0 + float(k) else 0.0);
          Z[i] = reduce(*, [k], {: i <= k < K} : if c[i] == k then G[k, i] + 1 else 1);
          U[i] = reduce(+, [k], {: 0 <= k < K} : if k == c[i] and G[k, i] > 4 then G[k, i] else 0);
    .";
    let (p, q, ds) = check(src, NK);
    for v in ["Y", "Z", "U"] {
        assert_eq!(decided(&ds, v, DecisionKind::Selected), Some(true), "{v}");
        assert!(!matches!(rhs(&q, v), ExprKind::Reduce(_)), "{v}");
    }
    jit_agrees(&p, &q, &[6, 7]);
}

#[test]
fn a_selection_needs_the_identity_an_independent_label_and_unit_steps() {
    // else 1.0 is not the identity of +; the label c[k] depends on k; a
    // draw in the body; a step of 2 along k.
    let src = "affine nsel [N, K] -> { : N > 0 and K > 0 }
        inputs c : int [K]; d : int [N]; T : float [K, N];
        outputs Y1, Y2, Y3, Y4 : float [N];
        let
          Y1[i] = reduce(+, [k], {: 0 <= k < K} : if k == d[i] then T[k, i] else 1.0);
          Y2[i] = reduce(+, [k], {: 0 <= k < K} : if k == c[k] then T[k, i] else 0.0);
          Y3[i] = reduce(+, [k], {: 0 <= k < K} : if k == d[i] then normal(T[k, i], 1.0) else 0.0);
          Y4[i] = reduce(+, [k], {: 0 <= 2 * k < K} : if k == d[i] then T[k, i] else 0.0);
    .";
    let (_, q, ds) = check(src, NK);
    for v in ["Y1", "Y2", "Y3"] {
        assert_eq!(decided(&ds, v, DecisionKind::Selected), None, "{v}");
        assert!(matches!(rhs(&q, v), ExprKind::Reduce(_)), "{v}");
    }
    assert_eq!(decided(&ds, "Y4", DecisionKind::Selected), Some(false));
}

// ------------------------------------------------------------- specialize

#[test]
fn a_table_read_at_a_guarded_label_is_computed_there_alone() {
    // R[k, i] for every k costs K·N·M; Y reads it at c[i] only, under a
    // guard that keeps the read inside R's domain.
    let src = "affine sp [N, K, M] -> { : N > 0 and K > 0 and M > 0 }
        inputs c : int [N]; X : float [K, M]; F : float [N, M];
        outputs Y : float [N];
        locals R : float [K, N];
        let
          R[k, i] = reduce(+, [a], {: 0 <= a < M} : X[k, a] * F[i, a]);
          Y[i] = if c[i] >= 0 and c[i] < K then R[c[i], i] + 1.0 else 0.0;
    .";
    let (p, q, ds) = check(src, NKM);
    assert_eq!(decided(&ds, "R", DecisionKind::Specialize), Some(true));
    assert!(!has_var(&q, "R") && has_var(&q, "R_at"));
    let ExprKind::Reduce(r) = rhs(&q, "R_at") else {
        panic!("R_at is a reduction")
    };
    assert_eq!(
        complexity(&r.body_domain).unwrap().to_string(),
        "O(N*M)",
        "{}",
        print::program_to_alpha(&q)
    );
    jit_agrees(&p, &q, &[5, 12, 3]);
}

#[test]
fn a_sampler_step_selects_then_specializes() {
    // The Metropolis-Hastings form: Lp and Lz select the table at the
    // proposal (a categorical draw) and at the current label (an input,
    // 0..10, sometimes outside K): both become pointwise, then each read of
    // R gets its own specialized reduction.
    let src = "affine mh [N, K, M] -> { : N > 0 and K > 0 and M > 0 }
        inputs z : int [N]; X : float [K, M]; F : float [N, M];
        outputs znew : int [N];
        locals kp : int [N]; R : float [K, N]; Lp, Lz : float [N];
        let
          kp[i] = categorical([k], {: 0 <= k < K} : 1.0);
          R[k, i] = reduce(+, [a], {: 0 <= a < M} : lgamma(X[k, a] + F[i, a]));
          Lp[i] = reduce(+, [k], {: 0 <= k < K} : if k == kp[i] then R[k, i] else 0.0);
          Lz[i] = reduce(+, [k], {: 0 <= k < K} : if k == z[i] then R[k, i] else 0.0);
          znew[i] = if uniform() < exp(Lp[i] - Lz[i]) then kp[i] else z[i];
    .";
    let (p, q, ds) = check(src, NKM);
    assert_eq!(decided(&ds, "Lp", DecisionKind::Selected), Some(true));
    assert_eq!(decided(&ds, "Lz", DecisionKind::Selected), Some(true));
    assert_eq!(decided(&ds, "R", DecisionKind::Specialize), Some(true));
    assert!(!has_var(&q, "R") && has_var(&q, "R_at") && has_var(&q, "R_at2"));
    jit_agrees(&p, &q, &[6, 7, 3]);
}

#[test]
fn a_categorical_label_is_inside_by_its_range() {
    // z is drawn over 0 <= k < K: R[z[i], i] needs no guard to be inside.
    // The body domain couples a with k (a <= k) and with i (a <= i).
    let src = "affine cat [N, K, M] -> { : N > 0 and K > 0 and M > 0 }
        inputs W : float [K]; F : float [N, M]; G : int [K, M];
        outputs z : int [N]; Y : float [N]; Yi : int [N];
        locals R : float [K, N]; S : int [K, N];
        let
          z[i] = categorical([k], {: 0 <= k < K} : W[k] + 0.5);
          R[k, i] = reduce(+, [a], {: 0 <= a < M and a <= k} : F[i, a] * float(k + 1));
          S[k, i] = reduce(max, [a], {: 0 <= a < M and a <= i} : G[k, a] - k);
          Y[i] = R[z[i], i] * 2.0;
          Yi[i] = S[z[i], i];
    .";
    let (p, q, ds) = check(src, NKM);
    assert_eq!(decided(&ds, "R", DecisionKind::Specialize), Some(true));
    assert_eq!(decided(&ds, "S", DecisionKind::Specialize), Some(true));
    assert!(!has_var(&q, "R") && !has_var(&q, "S"));
    jit_agrees(&p, &q, &[6, 7, 4]);
}

#[test]
fn a_table_is_kept_when_a_read_may_fail_or_is_affine() {
    // Y reads R at an input label with no guard (out of domain for
    // c[i] >= K: both programs fail); Y2 reads S also at an affine point;
    // Y3 reads T at a label with arithmetic (c[i] + 1 could overflow).
    let src = "affine keep [N, K, M] -> { : N > 0 and K > 0 and M > 0 }
        inputs c : int [N]; X : float [K, M]; F : float [N, M];
        outputs Y, Y2, Y3 : float [N];
        locals R, S, T : float [K, N];
        let
          R[k, i] = reduce(+, [a], {: 0 <= a < M} : X[k, a] * F[i, a]);
          S[k, i] = reduce(+, [a], {: 0 <= a < M} : X[k, a] + F[i, a]);
          T[k, i] = reduce(+, [a], {: 0 <= a < M} : X[k, a] - F[i, a]);
          Y[i] = R[c[i], i];
          Y2[i] = S[0, i] + (if c[i] >= 0 and c[i] < K then S[c[i], i] else 0.0);
          Y3[i] = if c[i] >= 0 and c[i] + 1 < K then T[c[i] + 1, i] else 0.0;
    .";
    let (_, q, ds) = check(src, NKM);
    for v in ["R", "S", "T"] {
        assert_eq!(
            decided(&ds, v, DecisionKind::Specialize),
            Some(false),
            "{v}"
        );
        assert!(has_var(&q, v), "{v}");
    }
}

// -------------------------------------------------------- random programs

/// A table `R[k, i]` (operator and body domain by `op`, `dom`), read at a
/// label by `Y` in one of four ways (`read`): under a guard on an input
/// label, at a categorical label, through a selecting reduction, or with
/// a guard written as an `or` in the else branch.
fn program(op: usize, dom: usize, read: usize) -> String {
    let (op, ty, body, zero) = [
        ("+", "float", "F[i, a] * X[k, a] + float(a)", "0.0"),
        ("max", "float", "F[i, a] - X[k, a]", "-1.0"),
        ("+", "int", "G[k, a] * (i + 1) - a", "0"),
        ("min", "int", "G[k, a] + k", "7"),
    ][op];
    let dom = [
        "0 <= a < M",
        "0 <= a < M and a <= k",
        "k <= a < M",
        "0 <= a < M and a <= i",
        "0 <= a <= k + 1 and a < M",
        "0 <= a < M and i <= k",
    ][dom];
    // the selecting reduction sums with `+` (whose identity can be written)
    let sum_id = if ty == "float" { "0.0" } else { "0" };
    let y = match read {
        0 => format!("if c[i] >= 0 and c[i] <= K - 1 then R[c[i], i] else {zero}"),
        1 => "R[z[i], i]".to_string(),
        2 => format!("reduce(+, [k], {{: 0 <= k < K}} : if k == c[i] then R[k, i] else {sum_id})"),
        _ => format!("if c[i] < 0 or c[i] >= K then {zero} else R[c[i], i]"),
    };
    source(op, ty, dom, body, &y)
}

fn source(op: &str, ty: &str, dom: &str, body: &str, y: &str) -> String {
    format!(
        "affine rp [N, K, M] -> {{ : N > 0 and K > 0 and M > 0 }}
        inputs c : int [N]; X : float [K, M]; F : float [N, M]; G : int [K, M]; W : float [K];
        outputs Y : {ty} [N]; z : int [N];
        locals R : {ty} [K, N];
        let
          z[i] = categorical([k], {{: 0 <= k < K}} : W[k] + 0.25);
          R[k, i] = reduce({op}, [a], {{: {dom}}} : {body});
          Y[i] = {y};
    ."
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, .. ProptestConfig::default() })]

    #[test]
    fn random_selected_tables_are_specialized_and_preserved(
        op in 0usize..4,
        dom in 0usize..6,
        read in 0usize..4,
    ) {
        let src = program(op, dom, read);
        let (_, q, ds) = check(&src, &[&[1, 1, 1], &[3, 4, 2], &[5, 12, 3], &[7, 6, 5]]);
        prop_assert_eq!(
            decided(&ds, "R", DecisionKind::Specialize),
            Some(true),
            "{}\n{}",
            src,
            print::program_to_alpha(&q)
        );
        prop_assert!(!has_var(&q, "R"));
    }
}

/// A selecting reduction over `k` (operator by `op`, range by `dom`,
/// condition by `cond`) and a second output reading the label directly.
fn selecting(op: usize, dom: usize, cond: usize) -> String {
    let (op, ty, then, id) = [
        ("+", "float", "T[k, i] * float(k + 1)", "0.0"),
        ("*", "int", "G[k, i] - k", "1"),
        ("or", "bool", "T[k, i] > 0.5", "false"),
        ("and", "bool", "G[k, i] < 6", "true"),
    ][op];
    let dom = [
        "0 <= k < K",
        "i <= k < K",
        "0 <= k <= i and k < K",
        "1 <= k + i < K and k >= 0",
    ][dom];
    let cond = [
        "k == c[i]",
        "c[i] == k",
        "k == c[i] and G[k, i] > 3",
        "k == c[i] + i",
    ][cond];
    format!(
        "affine rs [N, K] -> {{ : N > 0 and K > 0 }}
        inputs c : int [N]; T : float [K, N]; G : int [K, N];
        outputs Y : {ty} [N];
        let
          Y[i] = reduce({op}, [k], {{: {dom}}} : if {cond} then {then} else {id});
    ."
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    #[test]
    fn random_selecting_reductions_become_pointwise_and_are_preserved(
        op in 0usize..4,
        dom in 0usize..4,
        cond in 0usize..4,
    ) {
        let src = selecting(op, dom, cond);
        let (_, q, ds) = check(&src, NK);
        prop_assert_eq!(decided(&ds, "Y", DecisionKind::Selected), Some(true), "{}", src);
        prop_assert!(!matches!(rhs(&q, "Y"), ExprKind::Reduce(_)));
    }
}

// ------------------------------------------------- equal arms and guards

/// The line of `var`'s equation in the printed program.
fn equation_text(q: &Program, var: &str) -> String {
    let text = print::program_to_alpha(q);
    let head = format!("{var}[");
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with(&head) && l.contains("] = "))
        .unwrap_or_else(|| panic!("no equation of {var}\n{text}"))
        .to_string()
}

#[test]
fn an_acceptance_is_skipped_where_the_proposal_is_the_label() {
    // The Metropolis-Hastings step of `a_sampler_step_selects_then_specializes`
    // with a table of inputs (`len`) in the ratio: the choice becomes
    // `if kp[i] == z[i] then z[i] else ...`, and the sum at the proposal
    // (`R_at`, which reads `kp`) is computed only where `kp[i] != z[i]`.
    // The sum at the current label and `len` read inputs only: a guard by
    // `kp` would add a dependence on the proposal, so they are kept.
    let src = "affine mh [N, K, M] -> { : N > 0 and K > 0 and M > 0 }
        inputs z : int [N]; X : float [K, M]; F : float [N, M]; G : int [N, M];
        outputs znew : int [N];
        locals kp, len : int [N]; R : float [K, N]; Lp, Lz : float [N];
        let
          kp[i] = categorical([k], {: 0 <= k < K} : 1.0);
          len[i] = reduce(+, [a], {: 0 <= a < M} : G[i, a]);
          R[k, i] = reduce(+, [a], {: 0 <= a < M} : lgamma(X[k, a] + F[i, a]));
          Lp[i] = reduce(+, [k], {: 0 <= k < K} : if k == kp[i] then R[k, i] else 0.0);
          Lz[i] = reduce(+, [k], {: 0 <= k < K} : if k == z[i] then R[k, i] else 0.0);
          znew[i] = if uniform() < exp(Lp[i] - Lz[i] - 0.01 * float(len[i])) then kp[i] else z[i];
    .";
    let (p, q, ds) = check(src, NKM);
    assert_eq!(decided(&ds, "znew", DecisionKind::EqualArms), Some(true));
    let znew = equation_text(&q, "znew");
    assert!(
        znew.starts_with("znew[i] = if kp[i] == z[i] then z[i] else if uniform() <"),
        "{znew}"
    );
    assert_eq!(decided(&ds, "R_at", DecisionKind::Guard), Some(true));
    let eq = equation_text(&q, "R_at");
    assert!(eq.contains("kp[i] != z[i] then lgamma("), "{eq}");
    for v in ["R_at2", "len"] {
        assert_eq!(decided(&ds, v, DecisionKind::Guard), None, "{v}");
        assert!(!equation_text(&q, v).contains("kp"), "{v}");
    }
    jit_agrees(&p, &q, &[6, 3, 3]);
    jit_agrees(&p, &q, &[5, 1, 2]);
}

#[test]
fn a_choice_is_kept_when_its_arms_or_its_condition_do_not_allow_it() {
    // Y1: float arms; Y2: an arm that is not an atom; Y3: a condition that
    // reads no reduction; Y4: a table read at an unguarded label (it may
    // fail); Y5: an integer division by data (c[i] = 3 divides by zero:
    // both programs fail); Y6: a draw other than `uniform()`; Y7: the
    // same arm twice.
    let src = "affine keep2 [N, K, M] -> { : N > 0 and K > 0 and M > 0 }
        inputs z, c : int [N]; F : float [N, M]; X : float [K, M];
        outputs Y1 : float [N]; Y2, Y3, Y4, Y5, Y6, Y7 : int [N];
        locals kp : int [N]; S : float [N]; T : float [K, N];
        let
          kp[i] = categorical([k], {: 0 <= k < K} : 1.0);
          S[i] = reduce(+, [a], {: 0 <= a < M} : F[i, a]);
          T[k, i] = reduce(+, [a], {: 0 <= a < M} : X[k, a] * F[i, a]);
          Y1[i] = if S[i] > 0.5 then F[i, 0] else S[i];
          Y2[i] = if S[i] > 0.5 then kp[i] + 1 else z[i];
          Y3[i] = if uniform() < 0.5 then kp[i] else z[i];
          Y4[i] = if T[c[i], i] > 0.5 then kp[i] else z[i];
          Y5[i] = if S[i] > 0.0 and 10 / (c[i] - 3) > 1 then kp[i] else z[i];
          Y6[i] = if normal(S[i], 1.0) > 0.0 then kp[i] else z[i];
          Y7[i] = if S[i] > 0.5 then z[i] else z[i];
    .";
    let (p, q, ds) = check(src, NKM);
    for v in ["Y1", "Y2", "Y3", "Y4", "Y5", "Y6", "Y7"] {
        assert_eq!(decided(&ds, v, DecisionKind::EqualArms), None, "{v}");
        assert!(!equation_text(&q, v).contains(" == "), "{v}");
    }
    jit_agrees(&p, &q, &[6, 3, 3]);
}

#[test]
fn a_reduction_is_not_guarded_when_read_elsewhere_or_by_a_condition_on_itself() {
    // S is read under the acceptance (kp[i] != z[i]) and also in Y, with no
    // condition: no condition is known at every read. R is read only under
    // `q[i - 1] != z[i]`, but q depends on R: the guard would add a
    // dependence of R on q.
    let src = "affine ng [N, K, M] -> { : N > 0 and K > 0 and M > 0 }
        inputs z : int [N]; F : float [N, M];
        outputs znew, q : int [N]; Y : float [N];
        locals kp : int [N]; S, R : float [N];
        let
          kp[i] = categorical([k], {: 0 <= k < K} : 1.0);
          S[i] = reduce(+, [a], {: 0 <= a < M} : F[i, a] * float(kp[i]));
          R[i] = reduce(+, [a], {: 0 <= a < M} : F[i, a] * F[i, a]);
          znew[i] = if uniform() < S[i] then kp[i] else z[i];
          Y[i] = S[i] * 2.0;
          q[i] = case {
            {: i >= 1} : if q[i - 1] != z[i] then (if R[i - 1] > 1.0 then 1 else 0) else 2;
            {: i = 0} : 0;
          };
    .";
    let (p, q, ds) = check(src, NKM);
    assert_eq!(decided(&ds, "znew", DecisionKind::EqualArms), Some(true));
    for v in ["S", "R"] {
        assert_eq!(decided(&ds, v, DecisionKind::Guard), None, "{v}");
        assert!(!equation_text(&q, v).contains(" if "), "{v}");
    }
    jit_agrees(&p, &q, &[6, 3, 3]);
}

/// An acceptance-like choice (arms by `arms`, condition by `cond`) over a
/// reduction `S` that reads the proposal, with another read of `S` by
/// `extra`: none, unguarded, or under `kp[i] != z[i]`.
fn choosing(arms: usize, cond: usize, extra: usize) -> String {
    let (a, b) = [
        ("kp[i]", "z[i]"),
        ("0", "z[i]"),
        ("i", "kp[i]"),
        ("z[i]", "z[i]"),
    ][arms];
    let cond = [
        "uniform() < exp(S[i])",
        "S[i] > 0.5 and c[i] > 2",
        "S[i] / float(c[i]) > 0.1",
        "S[i] > 0.0 and 10 / (c[i] - 3) > 1",
    ][cond];
    let extra = ["0.0", "S[i] * 2.0", "if kp[i] != z[i] then S[i] else 1.0"][extra];
    format!(
        "affine ch [N, K, M] -> {{ : N > 0 and K > 0 and M > 0 }}
        inputs z, c : int [N]; F : float [N, M];
        outputs Y : int [N]; E : float [N];
        locals kp : int [N]; S : float [N];
        let
          kp[i] = categorical([k], {{: 0 <= k < K}} : 1.0);
          S[i] = reduce(+, [a], {{: 0 <= a < M}} : F[i, a] * float(kp[i] + 1));
          Y[i] = if {cond} then {a} else {b};
          E[i] = {extra};
    ."
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    #[test]
    fn random_choices_skip_equal_arms_and_guard_exactly_when_allowed(
        arms in 0usize..4,
        cond in 0usize..4,
        extra in 0usize..3,
    ) {
        let src = choosing(arms, cond, extra);
        let (p, q, ds) = check(&src, NKM);
        let skip = arms != 3 && cond != 3;
        prop_assert_eq!(decided(&ds, "Y", DecisionKind::EqualArms), skip.then_some(true), "{}", src);
        // S reads kp and inputs: a condition on kp, z and i adds no
        // dependence
        let guard = skip && (extra == 0 || (extra == 2 && arms == 0));
        prop_assert_eq!(decided(&ds, "S", DecisionKind::Guard), guard.then_some(true), "{}", src);
        jit_agrees(&p, &q, &[6, 3, 3]);
    }
}
