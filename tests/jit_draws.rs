//! Categorical draws and external functions in compiled code, against the
//! reference interpreter: identical draws for every seed, over domains whose
//! range depends on the point, non-convex domains, equalities and zero
//! weights; the same errors for invalid weights; externals called with the
//! same arguments, and a missing or panicking implementation reported by
//! name.

use alphac::compile::{self, Options, RunError};
use alphac::interp::{self, ExternalFn};
use alphac::jit;
use alphac::runtime::Array;
use std::collections::HashMap;
use std::sync::Arc;

fn inputs(c: &compile::Compiled, params: &[i64], seed: u64) -> HashMap<String, Array> {
    let sys = c.system();
    let mut m = HashMap::new();
    for (vi, v) in sys.vars.iter().enumerate() {
        if v.kind == alphac::ir::VarKind::Input {
            let spec = interp::array_spec(v, params).unwrap();
            m.insert(
                v.name.clone(),
                Array::random(&spec, seed + vi as u64).unwrap(),
            );
        }
    }
    m
}

/// Both engines, with and without the optimizer, for several seeds and
/// parameter vectors: identical outputs, or both fail.
fn agree(src: &str, param_sets: &[Vec<i64>], externals: &HashMap<String, ExternalFn>) {
    for optimize in [false, true] {
        for checked in [false, true] {
            let opts = Options {
                optimize,
                checked,
                ..Options::default()
            };
            let c = compile::compile(src, &opts).unwrap_or_else(|e| panic!("{e}"));
            let prog = c.program().clone();
            let sys = c.system().clone();
            let iopts = interp::Options {
                externals: externals.clone(),
                ..interp::Options::default()
            };
            for params in param_sets {
                for seed in [0u64, 3, 77] {
                    let ins = inputs(&c, params, seed);
                    let want = interp::run_with(&prog, &sys.name, params, &ins, seed, &iopts);
                    let got = c.run_with(params, &ins, seed, externals);
                    match (want, got) {
                        (Ok(w), Ok(g)) => {
                            for (n, a) in &w {
                                assert_eq!(
                                    a.data(),
                                    g[n].data(),
                                    "optimize={optimize} params {params:?} seed {seed}: {n}\n{}",
                                    c.function().to_c()
                                );
                            }
                        }
                        (w, g) => panic!(
                            "params {params:?} seed {seed}: interp {:?} vs jit {:?}",
                            w.err().map(|e| e.to_string()),
                            g.err().map(|e| e.to_string())
                        ),
                    }
                }
            }
        }
    }
}

#[test]
fn categorical_over_a_range_that_depends_on_the_point() {
    // k ranges over 0..=i: the bounds mention the outer index.
    let src = "affine tri [N] -> { : N > 0 }
    inputs W : { [i] : 0 <= i < N }
    outputs Z : int { [i] : 0 <= i < N }
    let Z[i] = categorical([k], {: 0 <= k <= i} : W[k] + 0.01);
.";
    agree(src, &[vec![1], vec![5], vec![30]], &HashMap::new());
}

#[test]
fn a_parameter_named_seed_does_not_clash_with_the_draws_seed() {
    // Compiled code takes the draws' seed as one more parameter; it is
    // named apart from the system's own `seed`.
    let src = "affine s [seed] -> { : seed > 0 }
    inputs W : { [k] : 0 <= k < seed }
    outputs Z : int { [i] : 0 <= i < seed }
    let Z[i] = categorical([k], {: 0 <= k <= i} : W[k] + 0.01); .";
    let c = compile::compile(src, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let f = c.function();
    assert_eq!(f.params, ["seed", "seed1"]);
    agree(src, &[vec![1], vec![7]], &HashMap::new());
}

#[test]
fn categorical_over_a_shifted_strided_and_nonconvex_domain() {
    // A shifted range with a divisibility-free equality piece, a union of
    // two ranges (non-convex: box bounds and a membership condition), and
    // weights that are zero on some points.
    let src = "affine odd [N, K] -> { : N > 0 and K > 5 }
    inputs W : { [k] : 0 <= k < K }
    outputs
        A : int { [i] : 0 <= i < N }
        B : int { [i] : 0 <= i < N }
        C : int { [i] : 0 <= i < N }
    let
        A[i] = categorical([k], {: 2 <= k < K} : if k == 3 then 0.0 else W[k] + 0.5);
        B[i] = categorical([k], {: k < 2 or 4 < k < K} : W[k] + 0.1);
        C[i] = categorical([k], {: 2k == 4} : 1.0);
.";
    agree(src, &[vec![1, 6], vec![20, 9]], &HashMap::new());
}

#[test]
fn categorical_draws_are_distinct_per_point_and_seed_and_follow_the_weights() {
    let src = "affine d [N] -> { : N > 0 }
    outputs Z : int { [i] : 0 <= i < N }
    let Z[i] = categorical([k], {: 0 <= k < 4} : float(k) + 1.0);
.";
    let c = compile::compile(src, &Options::default()).unwrap();
    let n = 40_000;
    let z = c.run(&[n], &HashMap::new(), 11).unwrap();
    let alphac::runtime::ArrayData::Int(z) = z["Z"].data() else {
        panic!("int output")
    };
    // Frequencies proportional to 1:2:3:4 (±4 standard deviations).
    for k in 0..4 {
        let f = z.iter().filter(|&&v| v == k).count() as f64 / n as f64;
        let p = (k as f64 + 1.0) / 10.0;
        let sd = (p * (1.0 - p) / n as f64).sqrt();
        assert!((f - p).abs() < 4.0 * sd, "k={k}: {f} vs {p}");
    }
    let z2 = c.run(&[n], &HashMap::new(), 12).unwrap();
    assert_ne!(
        z2["Z"].data(),
        c.run(&[n], &HashMap::new(), 11).unwrap()["Z"].data()
    );
}

#[test]
fn invalid_weights_are_errors_naming_the_variable_and_point() {
    for (weights, what) in [
        ("if i == 2 and k == 1 then -1.0 else 1.0", "negative"),
        ("if i == 2 then 0.0 else 1.0", "zero sum"),
        ("if i == 2 and k == 0 then 1.0 / 0.0 else 1.0", "infinite"),
    ] {
        let src = format!(
            "affine bad [N] -> {{ : N > 3 }}
    outputs Z : int {{ [i] : 0 <= i < N }}
    let Z[i] = categorical([k], {{: 0 <= k < 3}} : {weights});
."
        );
        let c = compile::compile(&src, &Options::default()).unwrap();
        let prog = c.program().clone();
        let want = interp::run(&prog, "bad", &[5], &HashMap::new(), 1);
        assert!(want.is_err(), "{what}: the interpreter rejects it");
        match c.run(&[5], &HashMap::new(), 1) {
            Err(RunError::Jit(jit::ExecError::BadCategorical { array, point })) => {
                assert_eq!(array, "Z", "{what}");
                assert_eq!(point, vec![2], "{what}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
}

#[test]
fn externals_are_called_with_the_interpreters_arguments() {
    let src = "external f(2)
    external g(1)
    affine ext [N] -> { : N > 0 }
    inputs X : { [i] : 0 <= i < N }
    outputs
        Y : { [i] : 0 <= i < N }
        S : {[]}
    let
        Y[i] = f(X[i], float(i)) + g(1.5);
        S[] = reduce(+, [i], {: 0 <= i < N} : g(X[i]));
.";
    let mut ext: HashMap<String, ExternalFn> = HashMap::new();
    ext.insert(
        "f".into(),
        Arc::new(|a: &[f64]| a[0] * a[0] + 3.0 * a[1] - 1.0),
    );
    ext.insert("g".into(), Arc::new(|a: &[f64]| (a[0] * 7.0).sin()));
    agree(src, &[vec![1], vec![17]], &ext);
}

#[test]
fn a_missing_or_panicking_external_is_an_error_naming_it() {
    let src = "external h(1)
    affine ext [N] -> { : N > 0 }
    outputs Y : { [i] : 0 <= i < N }
    let Y[i] = h(float(i));
.";
    let c = compile::compile(src, &Options::default()).unwrap();
    match c.run(&[3], &HashMap::new(), 0) {
        Err(RunError::Jit(jit::ExecError::ExternalMissing(name))) => assert_eq!(name, "h"),
        other => panic!("{other:?}"),
    }
    let mut ext: HashMap<String, ExternalFn> = HashMap::new();
    ext.insert(
        "h".into(),
        Arc::new(|a: &[f64]| {
            assert!(a[0] < 2.0, "an implementation that panics at i = 2");
            a[0]
        }),
    );
    match c.run_with(&[3], &HashMap::new(), 0, &ext) {
        Err(RunError::Jit(jit::ExecError::ExternalPanicked(name))) => assert_eq!(name, "h"),
        other => panic!("{other:?}"),
    }
    // a program that never calls its external needs no implementation
    let src = "external h(1)
    affine ext [N] -> { : N > 0 }
    outputs Y : { [i] : 0 <= i < N }
    let Y[i] = if i > N then h(1.0) else 2.0;
.";
    let c = compile::compile(src, &Options::default()).unwrap();
    assert!(c.run(&[3], &HashMap::new(), 0).is_ok());
}

#[test]
fn uniform_categorical_draws_in_constant_time_agree_with_the_scan() {
    // Weight 1.0 over the whole range: the JIT draws `lo + min(⌊u·n⌋, n −
    // 1)` without scanning (`CategoricalDraw::is_uniform`), the interpreter
    // scans; the ranges depend on the point, the parameter and an offset.
    let src = "affine uni [N] -> { : N > 0 }
    outputs
        Z : int { [i] : 0 <= i < N }
        Y : int { [i] : 0 <= i < N }
    let
        Z[i] = categorical([k], {: 0 <= k < N} : 1.0);
        Y[i] = categorical([k], {: i - 3 <= k <= 2i} : 1.0);
.";
    let c = compile::compile(src, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    // Both draws are in the uniform form (condition `true`, weight 1.0).
    let text = c.function().to_c();
    assert_eq!(text.matches("if true : 1.0;").count(), 2, "{text}");
    agree(
        src,
        &[vec![1], vec![2], vec![7], vec![300]],
        &HashMap::new(),
    );
}

#[test]
fn an_empty_uniform_categorical_is_the_error_of_an_empty_scan() {
    // k in 0 ..= i − 2 is empty at i = 0 and i = 1.
    let src = "affine empty [N] -> { : N > 3 }
    outputs Z : int { [i] : 0 <= i < N }
    let Z[i] = categorical([k], {: 0 <= k <= i - 2} : 1.0);
.";
    let c = compile::compile(src, &Options::default()).unwrap();
    let prog = c.program().clone();
    assert!(interp::run(&prog, "empty", &[5], &HashMap::new(), 1).is_err());
    match c.run(&[5], &HashMap::new(), 1) {
        Err(RunError::Jit(jit::ExecError::BadCategorical { array, point })) => {
            assert_eq!(array, "Z");
            assert_eq!(point, vec![0]);
        }
        other => panic!("{other:?}"),
    }
}
