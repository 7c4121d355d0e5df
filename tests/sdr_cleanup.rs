//! The cleanup after SDR (`sdr::cleanup`): single-point reductions as
//! pointwise equations, reads of empty reductions as identities (and
//! domains shrunk), inlining of pointwise locals, dead locals.
//!
//! Every rewrite is checked where it applies and where it must not, by
//! running the reference interpreter on the original and on the cleaned-up
//! program (seeded random inputs, several parameter values): integers and
//! booleans must be equal, floats equal except for the sign of a zero, a
//! run that succeeds must succeed on both, and a read outside its domain
//! must fail on both (an overflow in an element no output needs may go
//! with the element).
//! The cleaned-up program must pass the static domain checks and print
//! back to `.alpha` that parses. Then the 11 inference samplers: after
//! `sdr::optimize`, the interpreter on small generated data agrees with the
//! original; the cleanup alone agrees exactly with the program SDR made.

mod common;

use alphac::compile::{compile, parse_program, Options};
use alphac::deps::schedule_program;
use alphac::interp;
use alphac::ir::{check_domains, print, ExprKind, Program, VarKind};
use alphac::poly::complexity::complexity;
use alphac::runtime::{rng, Array, ArrayData};
use alphac::schedule::Scheduler;
use alphac::sdr::cleanup::cleanup;
use alphac::sdr::normalize::normalize;
use alphac::sdr::{rewrite, transform, Decision, DecisionKind};
use common::cleanup::{decided, exact, has_var, inputs_for, inputs_in_range, rhs};
use common::{all_close, Tol};
use proptest::prelude::*;
use std::collections::HashMap;

/// The interpreter on `a` and `b` agree exactly (or both fail).
fn agree(a: &Program, b: &Program, params: &[i64], inputs: &HashMap<String, Array>, seed: u64) {
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
        // An error in an element no output depends on (an integer overflow
        // in an unread element of a local that was inlined or removed) may
        // go; a read outside its domain on the way to an output may not.
        (Err(e), Ok(_)) if !format!("{e:?}").contains("outside the domain") => {}
        (w, g) => panic!(
            "params {params:?}, seed {seed}: original {:?}, cleaned {:?}\n{}",
            w.map(|_| ()),
            g.map(|_| ()),
            print::program_to_alpha(b)
        ),
    }
}

/// Cleans up `src` (normalized first) and checks it against the original
/// for every parameter vector and two seeds; the result passes the domain
/// checks and prints back to a program that parses.
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
    if let Err(e) = parse_program(&text) {
        // An identity read can leave a constant expression that overflows
        // (`i64::MAX + 5`, a run-time error of the original too), which
        // lowering folds and refuses.
        let msg = format!("{e:?}");
        assert!(msg.contains("integer overflow"), "{e}\n{text}");
    }
    for ps in params {
        for seed in [1, 7] {
            agree(&p, &q, ps, &inputs_for(&p, ps, seed), seed);
            agree(&p, &q, ps, &inputs_in_range(&p, ps, seed), seed);
        }
    }
    (p, q, ds)
}

/// The JIT on the cleaned-up program (printed, compiled without the
/// optimizer) agrees with the interpreter on the original.
fn jit_agrees(p: &Program, q: &Program, params: &[i64]) {
    let text = print::program_to_alpha(q);
    let options = Options {
        optimize: false,
        ..Options::default()
    };
    let jit = compile(&text, &options).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let inputs = inputs_in_range(p, params, 3);
    let name = &p.systems[0].name;
    let want = interp::run(p, name, params, &inputs, 3).unwrap();
    let got = jit.run(params, &inputs, 3).unwrap();
    for (out, w) in &want {
        let ok = match (w.data(), got[out].data()) {
            (ArrayData::Float(x), ArrayData::Float(y)) => all_close(x, y, Tol::rel(0.0)),
            (x, y) => x == y,
        };
        assert!(ok, "{out}: JIT {:?} vs {:?}", got[out].data(), w.data());
    }
}

const N: &[&[i64]] = &[&[1], &[2], &[5]];

// ------------------------------------------------------------- pointwise

#[test]
fn a_single_point_reduction_is_pointwise() {
    // A[i] sums X[j] over {j = i - 1}: one point for i >= 1, none at
    // i = 0. B uses a projection that is not a coordinate one
    // ((i, j) -> i + 1 on {j = i}), as SDR's `_sub` variables do.
    let src = "affine pw [N] -> { : N > 0 }
        inputs X : float [N]; Z : int [N];
        outputs Y : float [N]; C : int [N];
        locals A : float [N]; B : int {[i] : 1 <= i <= N};
        let
          A[i] = reduce(+, [j], {: j = i - 1} : X[j]);
          B[i] = reduce(+, (i, j -> i + 1), {: j = i and 0 <= i < N} : Z[j] * 2);
          Y[i] = A[i] * 3.0 + X[i];
          C[i] = B[i + 1];
    .";
    let (p, q, ds) = check(src, N);
    assert_eq!(decided(&ds, "A", DecisionKind::Pointwise), Some(true));
    assert_eq!(decided(&ds, "B", DecisionKind::Pointwise), Some(true));
    // A (a case over i = 0 and i >= 1) is read at every point: it stays,
    // without its reduction; B is inlined into C (one piece), then dead.
    assert!(matches!(rhs(&q, "A"), ExprKind::Case(_)));
    assert!(!has_var(&q, "B"));
    jit_agrees(&p, &q, &[5]);
}

#[test]
fn a_reduction_over_many_points_stays_a_reduction() {
    let src = "affine np [N] -> { : N > 0 }
        inputs X : float [N];
        outputs Y : float [N];
        let Y[i] = reduce(+, [j], {: 0 <= j <= i} : X[j]);
    .";
    let (_, q, ds) = check(src, N);
    assert_eq!(decided(&ds, "Y", DecisionKind::Pointwise), None);
    assert!(matches!(rhs(&q, "Y"), ExprKind::Reduce(_)));
}

// ------------------------------------------------------------ empty reads

#[test]
fn reads_of_an_empty_reduction_are_the_identity() {
    // A is non-zero only at i = 0 (its body domain has i = 0): the read
    // in Y's i >= 1 piece is 0, `Y[i-1] + 0 + 1` becomes `Y[i-1] + 1`, and
    // A shrinks to the single point i = 0. M is the same with max: the
    // read is -inf and `max(M2[i-1], -inf)` is `M2[i-1]`.
    let src = "affine er [N] -> { : N > 0 }
        inputs X : int [N]; F : float [N];
        outputs Y : int [N]; M2 : float [N];
        locals A : int [N]; M : float [N];
        let
          A[i] = reduce(+, [j], {: i = 0 and 0 <= j < N} : X[j]);
          M[i] = reduce(max, [j], {: i = 0 and 0 <= j < N} : F[j]);
          Y[i] = case { {: i = 0} : A[i]; {: i >= 1} : Y[i - 1] + A[i] + 1; };
          M2[i] = case { {: i = 0} : M[i]; {: i >= 1} : max(M2[i - 1], M[i]); };
    .";
    let (p, q, ds) = check(src, N);
    assert_eq!(decided(&ds, "Y", DecisionKind::EmptyRead), Some(true));
    assert_eq!(decided(&ds, "M2", DecisionKind::EmptyRead), Some(true));
    assert_eq!(decided(&ds, "A", DecisionKind::Shrink), Some(true));
    assert_eq!(decided(&ds, "M", DecisionKind::Shrink), Some(true));
    let s = &q.systems[0];
    for v in ["A", "M"] {
        let dom = &s.vars[s.var_by_name(v).unwrap()].domain;
        assert_eq!(complexity(dom).unwrap().to_string(), "O(1)", "{v}");
    }
    let ExprKind::Case(pieces) = rhs(&q, "M2") else {
        panic!("M2 is a case")
    };
    assert!(
        pieces
            .iter()
            .all(|(_, e)| !matches!(e.kind, ExprKind::Builtin(..))),
        "max(M2[i - 1], -inf) is M2[i - 1]"
    );
    jit_agrees(&p, &q, &[5]);
}

#[test]
fn reads_inside_the_image_keep_the_reduction() {
    let src = "affine ei [N] -> { : N > 0 }
        inputs X : int [N];
        outputs Y : int [N];
        locals A : int [N];
        let
          A[i] = reduce(+, [j], {: 0 <= j <= i} : X[j]);
          Y[i] = A[i] + 1;
    .";
    let (_, q, ds) = check(src, N);
    assert_eq!(decided(&ds, "Y", DecisionKind::EmptyRead), None);
    assert_eq!(decided(&ds, "A", DecisionKind::Shrink), None);
    assert!(has_var(&q, "A"));
}

// ---------------------------------------------------------------- inlining

#[test]
fn a_pointwise_local_read_once_per_point_is_inlined() {
    let src = "affine il [N] -> { : N > 0 }
        inputs X : float [N];
        outputs Y : float [N];
        locals T : float [N];
        let
          T[i] = X[i] * 2.0 + 1.0;
          Y[i] = T[i] - X[i];
    .";
    let (p, q, ds) = check(src, N);
    assert_eq!(decided(&ds, "T", DecisionKind::Inline), Some(true));
    assert_eq!(decided(&ds, "T", DecisionKind::Dead), Some(true));
    assert!(!has_var(&q, "T"));
    jit_agrees(&p, &q, &[5]);
}

#[test]
fn a_local_read_at_many_points_in_a_reduction_is_not_inlined() {
    // T[j] is read once per body point (N^2), computing T costs N.
    let src = "affine nr [N] -> { : N > 0 }
        inputs X : float [N];
        outputs Y : float [N];
        locals T : float [N];
        let
          T[i] = exp(X[i]);
          Y[i] = reduce(+, [j], {: 0 <= j <= i} : T[j]);
    .";
    let (_, q, ds) = check(src, N);
    assert_eq!(decided(&ds, "T", DecisionKind::Inline), Some(false));
    assert!(has_var(&q, "T"));
}

#[test]
fn a_local_with_a_random_draw_is_not_inlined() {
    let src = "affine rd [N] -> { : N > 0 }
        inputs X : float [N];
        outputs Y : float [N];
        locals T : float [N];
        let
          T[i] = normal(X[i], 1.0);
          Y[i] = T[i] + 1.0;
    .";
    let (_, q, ds) = check(src, N);
    assert_eq!(decided(&ds, "T", DecisionKind::Inline), None);
    assert!(has_var(&q, "T"));
}

#[test]
fn a_case_local_is_inlined_when_the_read_is_in_one_piece() {
    // D is read only where i >= 1 (its second piece) by Y; E is read at
    // every point by Z, across both pieces: E stays.
    let src = "affine cp [N] -> { : N > 0 }
        inputs X : float [N];
        outputs Y : float [N]; Z : float [N];
        locals D : float [N]; E : float [N];
        let
          D[i] = case { {: i = 0} : X[0]; {: i >= 1} : X[i] - X[i - 1]; };
          E[i] = case { {: i = 0} : 1.0; {: i >= 1} : X[i] * X[i - 1]; };
          Y[i] = case { {: i = 0} : 0.0; {: i >= 1} : D[i] * 2.0; };
          Z[i] = E[i] + 1.0;
    .";
    let (p, q, ds) = check(src, N);
    assert_eq!(decided(&ds, "D", DecisionKind::Inline), Some(true));
    assert_eq!(decided(&ds, "E", DecisionKind::Inline), Some(false));
    assert!(!has_var(&q, "D"));
    assert!(has_var(&q, "E"));
    jit_agrees(&p, &q, &[5]);
}

#[test]
fn inlining_through_an_indirect_read_keeps_its_domain_check() {
    // T[c[i], i] with c in 0..10: out of T's domain when K <= c[i] (both
    // programs fail), inside otherwise. T reads X and Z at its own point
    // over the same domain: inlined (indirect reads of X and Z).
    let src = "affine ir [N, K, M] -> { : N > 0 and K > 0 and M > 0 }
        inputs X : float [K, N]; Z : float [K, N]; c : int [N];
        outputs Y : float [N];
        locals T : float [K, N];
        let
          T[k, i] = X[k, i] + Z[k, i];
          Y[i] = T[c[i], i] * 2.0;
    .";
    // (M, in the context only, makes T's domain within the context differ
    // from its declared one.)
    let (p, q, ds) = check(src, &[&[3, 10, 1], &[5, 4, 2], &[1, 1, 1]]);
    assert_eq!(decided(&ds, "T", DecisionKind::Inline), Some(true));
    assert!(!has_var(&q, "T"));
    jit_agrees(&p, &q, &[4, 10, 1]);
}

#[test]
fn an_indirect_read_is_not_inlined_when_it_would_lose_its_check() {
    // U2 reads V2[i] (its `k` is not checked by any read: an out-of-domain
    // c[i] would no longer fail), W reads nothing: both stay.
    let src = "affine nc [N, K] -> { : N > 0 and K > 0 }
        inputs V2 : float [N]; c : int [N];
        outputs Y : float [N]; Y2 : int [N];
        locals U2 : float [K, N]; W : int [K, N];
        let
          U2[k, i] = V2[i] + 1.0;
          W[k, i] = k + i;
          Y[i] = U2[c[i], i];
          Y2[i] = W[c[i], i];
    .";
    let (_, q, ds) = check(src, &[&[3, 10], &[5, 4]]);
    assert_eq!(decided(&ds, "U2", DecisionKind::Inline), Some(false));
    assert_eq!(decided(&ds, "W", DecisionKind::Inline), Some(false));
    assert!(has_var(&q, "U2") && has_var(&q, "W"));
}

/// With every `c[i]` inside `0..K` both programs run and agree.
fn c_in_range_runs(p: &Program, q: &Program) {
    let mut inputs = inputs_for(p, &[5, 4], 1);
    let c = inputs.get_mut("c").and_then(|a| a.ints_mut()).unwrap();
    c.copy_from_slice(&[0, 1, 3, 2, 3]);
    let want = interp::run(p, "ck", &[5, 4], &inputs, 1).unwrap();
    let got = interp::run(q, "ck", &[5, 4], &inputs, 1).unwrap();
    for (name, w) in &want {
        assert!(exact(w, &got[name]), "{name}");
    }
}

#[test]
fn an_indirect_read_is_inlined_when_another_read_checks_the_same_index() {
    // U[k, i] = V[k] + 1.0 read at U[c[i], i]: inlined, `V[c[i]]` fails
    // exactly when `c[i]` is outside 0..K, as the read of U did (c takes
    // values 0..10, so K = 4 fails and K = 10 does not: `check` compares
    // both programs' results and failures). Under an `if` branch the read
    // of V does not always run: not a check.
    let src = "affine ck [N, K] -> { : N > 0 and K > 0 }
        inputs V : float [K]; c : int [N]; b : bool [N];
        outputs Y : float [N]; Y3 : float [N];
        locals U : float [K, N]; U3 : float [K, N];
        let
          U[k, i] = V[k] + 1.0;
          U3[k, i] = if b[i] then V[k] else 0.0;
          Y[i] = U[c[i], i];
          Y3[i] = U3[c[i], i];
    .";
    let (p, q, ds) = check(src, &[&[3, 10], &[5, 4], &[6, 11]]);
    assert_eq!(decided(&ds, "U", DecisionKind::Inline), Some(true));
    assert!(!has_var(&q, "U"));
    assert_eq!(decided(&ds, "U3", DecisionKind::Inline), Some(false));
    jit_agrees(&p, &q, &[4, 10]);
    // c[2] = 7 is outside 0..4: both fail, the cleaned program at V
    let mut inputs = inputs_for(&p, &[5, 4], 1);
    let c = inputs.get_mut("c").and_then(|a| a.ints_mut()).unwrap();
    c.copy_from_slice(&[0, 1, 7, 2, 3]);
    let e = interp::run(&q, "ck", &[5, 4], &inputs, 1).unwrap_err();
    assert!(format!("{e}").contains("outside the domain"), "{e}");
    assert!(interp::run(&p, "ck", &[5, 4], &inputs, 1).is_err());
    c_in_range_runs(&p, &q);
}

// ------------------------------------------------------------- dead locals

#[test]
fn dead_locals_go_unless_a_call_site_names_a_later_variable() {
    // U is dead but G (after it) draws: its site names G's number, so U
    // stays declared (its number kept) with an empty domain: nothing of it
    // is computed. H (after G) is dead and goes.
    let src = "affine dl [N] -> { : N > 0 }
        inputs X : float [N];
        outputs Y : float [N];
        locals U : float [N]; G : float [N]; H : float [N];
        let
          U[i] = X[i] * 3.0;
          G[i] = normal(0.0, 1.0);
          H[i] = X[i] + 2.0;
          Y[i] = G[i] + X[i];
    .";
    let (_, q, ds) = check(src, N);
    assert_eq!(decided(&ds, "U", DecisionKind::Dead), Some(true));
    assert_eq!(decided(&ds, "H", DecisionKind::Dead), Some(true));
    assert!(has_var(&q, "U") && has_var(&q, "G") && !has_var(&q, "H"));
    let u = q.systems[0].vars.iter().find(|v| v.name == "U").unwrap();
    assert!(u.domain.is_empty().unwrap(), "U keeps its points");
    let g = q.systems[0].vars.iter().find(|v| v.name == "G").unwrap();
    assert!(!g.domain.is_empty().unwrap());
}

// -------------------------------------------------------- random programs

/// A reduction `A` (one point, none, or many per result, by `dom`), a
/// pointwise local `T` reading it, and an output reading both, affinely or
/// through data.
fn program(op: usize, dom: usize, tbody: usize, ybody: usize) -> String {
    let (op, ty, zero) = [
        ("+", "float", "0.0"),
        ("max", "float", "-1.0"),
        ("+", "int", "0"),
        ("min", "int", "5"),
    ][op];
    let dom = [
        "j = i - 1",
        "j = i + 2 and j < N",
        "i = 0 and 0 <= j < N",
        "0 <= j <= i",
        "i = 1 and j = 0",
    ][dom];
    let body = if ty == "float" { "F[j]" } else { "G[j]" };
    let tbody = [
        format!("A[i] + {zero}"),
        "A[i] * A[i]".to_string(),
        format!("case {{ {{: i = 0}} : {zero}; {{: i >= 1}} : A[i - 1]; }}"),
        format!(
            "{op2}(A[i], {zero})",
            op2 = if op == "min" { "min" } else { "max" }
        ),
    ][tbody]
        .clone();
    let ybody = [
        "T[i] + A[i]",
        "T[c[i]]",
        "case { {: i = 0} : A[i]; {: i >= 1} : Y[i - 1] + T[i]; }",
        "T[i] + A[c[i]]",
    ][ybody];
    format!(
        "affine rp [N] -> {{ : N > 0 }}
        inputs F : float [N]; G : int [N]; c : int [N];
        outputs Y : {ty} [N];
        locals A : {ty} [N]; T : {ty} [N];
        let
          A[i] = reduce({op}, [j], {{: {dom}}} : {body});
          T[i] = {tbody};
          Y[i] = {ybody};
    ."
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn random_programs_are_preserved(
        op in 0usize..4,
        dom in 0usize..5,
        tbody in 0usize..4,
        ybody in 0usize..4,
    ) {
        let src = program(op, dom, tbody, ybody);
        check(&src, &[&[1], &[3], &[12]]);
    }
}

// ----------------------------------------------------- the inference suite

/// The 11 samplers with small parameter values.
const SUITE: [(&str, &[(&str, i64)]); 11] = [
    ("gmm_gs", &[("N", 8), ("K", 2)]),
    ("gmm_mh", &[("N", 8), ("K", 2)]),
    ("gmm_lw", &[("N", 8), ("K", 2)]),
    ("lda_gs", &[("W", 10), ("K", 2), ("V", 4), ("D", 2)]),
    ("lda_mh", &[("W", 10), ("K", 2), ("V", 4), ("D", 2)]),
    ("lda_lw", &[("W", 10), ("K", 2), ("V", 4), ("D", 2)]),
    ("dmm_gs", &[("D", 4), ("A", 3), ("K", 2), ("L", 3)]),
    ("dmm_mh", &[("D", 4), ("A", 3), ("K", 2), ("L", 3)]),
    ("dmm_lw", &[("D", 4), ("A", 3), ("K", 2), ("L", 3)]),
    ("lbp_stereo", &[("N", 8), ("K", 3), ("D", 4)]),
    ("coxph", &[("N", 6), ("K", 2)]),
];

fn params_of(p: &Program, system: &str, values: &[(&str, i64)]) -> Vec<i64> {
    let s = p.systems.iter().find(|s| s.name == system).unwrap();
    let by: HashMap<String, i64> = values
        .iter()
        .filter(|(k, _)| s.params.iter().any(|q| q == k))
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    s.resolve_params(&by).unwrap()
}

/// SDR as `sdr::optimize` runs it, then the cleanup: the cleaned-up
/// program agrees exactly with SDR's and, to 1e-9 (SDR reassociates sums),
/// with the original, on data from the file's generator. (That the
/// result is schedulable is `sdr::optimize`'s own verification, run on
/// every sampler by `inference_complexity`.)
fn sampler_agrees(name: &str) {
    let (_, values) = SUITE.iter().find(|(n, _)| *n == name).unwrap();
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    let p = parse_program(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let normalized = normalize(&p).unwrap();
    let (rewritten, _, _) = rewrite::rewrite(&normalized).unwrap();
    let schedule = schedule_program(&rewritten, Scheduler::Pluto).unwrap();
    let (sdr, _, _) = transform::simplify_with_origins(&rewritten, &schedule).unwrap();
    let (clean, ds) = cleanup(&sdr).unwrap();
    assert!(ds.iter().any(|d| d.applied), "{name}: nothing cleaned up");
    let s = clean.systems.iter().find(|s| s.name == name).unwrap();
    let before = sdr.systems.iter().find(|s| s.name == name).unwrap();
    assert!(s.vars.len() < before.vars.len(), "{name}: no local removed");
    // The full-size tables the issue names are gone.
    let gone: &[&str] = match name {
        "lda_gs" => &["NWK", "NDK", "NK", "Wt", "NWK_red_add", "NWK_red2_sub"],
        "gmm_gs" => &["C", "S", "Wt", "C_red_add", "C_red2_sub"],
        _ => &[],
    };
    for v in gone {
        assert!(s.var_by_name(v).is_none(), "{name}: {v} is still there");
    }
    let gen = format!("{name}_data");
    let params = params_of(&p, name, values);
    for seed in [1u64, 2] {
        let data = interp::run(
            &p,
            &gen,
            &params_of(&p, &gen, values),
            &HashMap::new(),
            rng::data_seed(seed),
        )
        .unwrap();
        let inputs: HashMap<String, Array> = s
            .vars
            .iter()
            .filter(|v| v.kind == VarKind::Input)
            .map(|v| (v.name.clone(), data[&v.name].clone()))
            .collect();
        let want = interp::run(&p, name, &params, &inputs, seed).unwrap();
        let mid = interp::run(&sdr, name, &params, &inputs, seed).unwrap();
        let got = interp::run(&clean, name, &params, &inputs, seed).unwrap();
        for (out, w) in &want {
            assert!(
                exact(&mid[out], &got[out]),
                "{name} {out}: cleanup changed SDR's values"
            );
            let ok = match (w.data(), got[out].data()) {
                (ArrayData::Float(x), ArrayData::Float(y)) => {
                    all_close(x, y, Tol::rel_or_abs(1e-9))
                }
                (x, y) => x == y,
            };
            assert!(
                ok,
                "{name} {out} seed {seed}: {:?} vs {:?}",
                got[out].data(),
                w.data()
            );
        }
    }
}

macro_rules! suite {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                sampler_agrees(stringify!($name));
            }
        )*
    };
}

suite!(gmm_gs, gmm_mh, gmm_lw, lda_gs, lda_mh, lda_lw, dmm_gs, dmm_mh, dmm_lw, lbp_stereo, coxph);

// ------------------------------------------------------ one running count

/// A forward and a backward running count along `i` (what SDR makes of a
/// leave-one-out count), read by `READ`.
fn two_counts(read: &str, b_step: &str) -> String {
    format!(
        "affine sums [N, K] -> {{ : N > 0 and K > 0 }}
        inputs z, zn : int [N]; x : float [N];
        outputs Y : int {{[k, i] : 0 <= k < K and 0 <= i < N}}; F : float [N];
        locals
          A, B : int {{[k, i] : 0 <= k < K and 0 <= i < N}};
          H : int [K];
        let
          H[k] = reduce(+, [j], {{: 1 <= j < N}} : if z[j] == k then 1 else 0);
          A[k, i] = case {{ {{: i >= 1}} : A[k, i - 1] + (if zn[i - 1] == k then 1 else 0);
                             {{: i = 0}} : 0; }};
          B[k, i] = case {{ {{: i >= 1}} : {b_step};
                             {{: i = 0}} : H[k]; }};
          Y[k, i] = {read};
          F[i] = x[i] * 2.0;
    ."
    )
}

#[test]
fn two_running_counts_read_as_their_sum_become_one() {
    let src = two_counts(
        "A[k, i] + B[k, i]",
        "B[k, i - 1] - (if z[i] == k then 1 else 0)",
    );
    let (p, q, ds) = check(&src, &[&[6, 3], &[1, 2], &[9, 4]]);
    assert_eq!(decided(&ds, "A", DecisionKind::Sums), Some(true));
    assert!(!has_var(&q, "B"), "{}", print::program_to_alpha(&q));
    jit_agrees(&p, &q, &[7, 3]);
    // the other order of the terms, and the sum inside a larger expression
    let src = two_counts(
        "2 * (B[k, i] + A[k, i]) + 1",
        "B[k, i - 1] - (if z[i] == k then 1 else 0)",
    );
    let (p, q, ds) = check(&src, &[&[6, 3], &[9, 4]]);
    // (the first term names the count that is kept)
    assert_eq!(decided(&ds, "B", DecisionKind::Sums), Some(true));
    assert!(!has_var(&q, "A"));
    jit_agrees(&p, &q, &[7, 3]);
}

#[test]
fn running_counts_are_kept_apart_when_read_alone_or_stepped_differently() {
    // A read on its own: merging would lose it
    let src = two_counts(
        "A[k, i] + B[k, i] + A[k, i]",
        "B[k, i - 1] - (if z[i] == k then 1 else 0)",
    );
    let (_, q, ds) = check(&src, &[&[6, 3], &[9, 4]]);
    assert_eq!(decided(&ds, "A", DecisionKind::Sums), Some(false));
    assert!(has_var(&q, "A") && has_var(&q, "B"));
    // B steps by two: T[i - 1] + dA - dB is not A + B
    let src = "affine st [N, K] -> { : N > 0 and K > 0 }
        inputs z, zn : int [N];
        outputs Y : int {[k, i] : 0 <= k < K and 0 <= i < N};
        locals A, B : int {[k, i] : 0 <= k < K and 0 <= i < N};
        let
          A[k, i] = case { {: i >= 2} : A[k, i - 1] + (if zn[i - 1] == k then 1 else 0);
                           {: i <= 1} : i; };
          B[k, i] = case { {: i >= 2} : B[k, i - 2] - (if z[i] == k then 1 else 0);
                           {: i <= 1} : k; };
          Y[k, i] = A[k, i] + B[k, i];
    .";
    let (_, q, ds) = check(src, &[&[6, 3], &[9, 4]]);
    assert_eq!(decided(&ds, "A", DecisionKind::Sums), Some(false));
    assert!(has_var(&q, "B"));
    // read at different points
    let src = two_counts(
        "A[k, i] + B[k, N - 1 - i]",
        "B[k, i - 1] - (if z[i] == k then 1 else 0)",
    );
    let (_, q, ds) = check(&src, &[&[6, 3], &[9, 4]]);
    assert_ne!(decided(&ds, "A", DecisionKind::Sums), Some(true));
    assert!(has_var(&q, "B"));
}

#[test]
fn float_running_sums_are_not_combined() {
    // in floats (a + d) + (b - e) and ((a + b) + d) - e differ: left alone
    let src = "affine fs [N, K] -> { : N > 0 and K > 0 }
        inputs z, zn : int [N]; x : float [N];
        outputs Y : float {[k, i] : 0 <= k < K and 0 <= i < N};
        locals A, B : float {[k, i] : 0 <= k < K and 0 <= i < N};
        let
          A[k, i] = case { {: i >= 1} : A[k, i - 1] + (if zn[i - 1] == k then x[i - 1] else 0.0);
                           {: i = 0} : 0.0; };
          B[k, i] = case { {: i >= 1} : B[k, i - 1] - (if z[i] == k then x[i] else 0.0);
                           {: i = 0} : 1.5; };
          Y[k, i] = A[k, i] + B[k, i];
    .";
    let (_, q, ds) = check(src, &[&[6, 3]]);
    assert_eq!(decided(&ds, "A", DecisionKind::Sums), None);
    assert!(has_var(&q, "A") && has_var(&q, "B"));
}
