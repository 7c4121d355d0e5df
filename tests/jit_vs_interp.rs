//! Every example program, compiled to native code (`alphac::compile`), against
//! the reference interpreter on random inputs: bit-exact for int and bool,
//! 1e-12 relative for floats (NaN equals NaN), with and without the SDR
//! optimizer; random draws (the same counter-based generator in both
//! engines) are identical.

mod common;

use alphac::compile::{self, Options};
use alphac::interp;
use alphac::runtime::{Array, ArrayData};
use common::{all_close, Tol};
use std::collections::HashMap;

fn source(name: &str) -> String {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("example exists")
}

/// Floats: 1e-12 relative.
const TOL: Tol = Tol::rel(1e-12);

fn same(a: &Array, b: &Array) -> bool {
    a.shape() == b.shape()
        && match (a.data(), b.data()) {
            (ArrayData::Int(x), ArrayData::Int(y)) => x == y,
            (ArrayData::Bool(x), ArrayData::Bool(y)) => x == y,
            (ArrayData::Float(x), ArrayData::Float(y)) => all_close(x, y, TOL),
            _ => false,
        }
}

/// `src` compiled with the default options, optimized or not.
fn compiled(src: &str, optimize: bool) -> compile::Compiled {
    let opts = Options {
        optimize,
        ..Options::default()
    };
    compile::compile(src, &opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Compiles `src` with and without optimization and compares against the
/// interpreter for every parameter vector of `param_sets`.
fn check(name: &str, src: &str, param_sets: &[Vec<i64>]) {
    for optimize in [false, true] {
        let opts = Options {
            optimize,
            checked: true,
            ..Options::default()
        };
        let c = match compile::compile(src, &opts) {
            Ok(c) => c,
            Err(e) => panic!("{name} (optimize={optimize}): {e}"),
        };
        let prog = c.program().clone();
        let sys = c.system().clone();
        for (k, params) in param_sets.iter().enumerate() {
            let mut inputs = HashMap::new();
            for (vi, v) in sys.vars.iter().enumerate() {
                if v.kind == alphac::ir::VarKind::Input {
                    let spec = interp::array_spec(v, params).unwrap();
                    let a = Array::random(&spec, 17 + vi as u64 + 100 * k as u64).unwrap();
                    inputs.insert(v.name.clone(), a);
                }
            }
            let want = interp::run(&prog, &sys.name, params, &inputs, 5);
            let got = c.run(params, &inputs, 5);
            match (want, got) {
                (Ok(w), Ok(g)) => {
                    assert_eq!(w.len(), g.len(), "{name}: outputs");
                    for (n, a) in &w {
                        let b = &g[n];
                        assert!(
                            same(a, b),
                            "{name} (optimize={optimize}) params {params:?}: output {n} differs\ninterp {:?}\njit    {:?}\n{}",
                            a.data(),
                            b.data(),
                            c.function().to_c()
                        );
                    }
                }
                (Err(_), Err(_)) => {}
                (w, g) => panic!(
                    "{name} (optimize={optimize}) params {params:?}: interp {:?} vs jit {:?}",
                    w.err(),
                    g.err()
                ),
            }
        }
    }
}

#[test]
fn prefix_sum() {
    check(
        "prefix_sum",
        &source("prefix_sum"),
        &[vec![1], vec![2], vec![7]],
    );
}

#[test]
fn prefix_sum_dependent() {
    check(
        "prefix_sum_dependent",
        &source("prefix_sum_dependent"),
        &[vec![1], vec![2], vec![6]],
    );
}

#[test]
fn prefix_max() {
    check("prefix_max", &source("prefix_max"), &[vec![1], vec![5]]);
}

#[test]
fn segment_sum() {
    check(
        "segment_sum",
        &source("segment_sum"),
        &[vec![1, 1], vec![6, 2], vec![4, 9]],
    );
}

#[test]
fn matmul() {
    check("matmul", &source("matmul"), &[vec![1, 1, 1], vec![3, 4, 2]]);
}

#[test]
fn jacobi_1d() {
    check("jacobi_1d", &source("jacobi_1d"), &[vec![1, 3], vec![4, 7]]);
}

#[test]
fn cholesky() {
    check("cholesky", &source("cholesky"), &[vec![1], vec![4]]);
}

#[test]
fn nussinov() {
    check(
        "nussinov",
        &source("nussinov"),
        &[vec![1], vec![2], vec![6]],
    );
}

#[test]
fn triangle_sums() {
    let src = source("triangle_sums");
    let n = compile::parse_program(&src).unwrap().systems[0]
        .params
        .len();
    check("triangle_sums", &src, &[vec![3; n], vec![5; n]]);
}

#[test]
fn gmm_counts() {
    // Categorical draws compiled: the same draws as the interpreter.
    check(
        "gmm_counts",
        &source("gmm_counts"),
        &[vec![1, 1], vec![7, 3], vec![40, 4]],
    );
}

/// Random draws: the JIT calls the interpreter's generator
/// (`runtime::rng::abi`), so outputs are identical for every seed.
#[test]
fn stochastic_program_matches_for_several_seeds() {
    let src = "affine sto [N, K] -> { : N > 0 and K > 1 }
    inputs
        W : { [i, k] : 0 <= i < N and 0 <= k < K }
    outputs
        U : [N]
        S : [N]
        B : bool [N]
        P : int [N]
        G : [N, K]
    let
        U[i] = normal(1.0, 2.0) + uniform();
        S[i] = reduce(+, [j], {: 0 <= j < K} : gamma(2.0, W[i, j] + 1.0));
        B[i] = bernoulli(0.3);
        P[i] = poisson(3.5) + 1;
        G[i, k] = lgamma(W[i, k] + 0.5) + normal(0.0, 1.0);
.";
    for optimize in [false, true] {
        let c = compiled(src, optimize);
        let prog = c.program().clone();
        let sys = c.system().clone();
        let params = [6, 3];
        let w = &sys.vars[sys.var_by_name("W").unwrap()];
        let a = Array::random(&interp::array_spec(w, &params).unwrap(), 3).unwrap();
        let inputs: HashMap<String, Array> = [("W".to_string(), a)].into();
        let mut distinct = Vec::new();
        for seed in [0u64, 1, 42, u64::MAX] {
            let want = interp::run(&prog, &sys.name, &params, &inputs, seed).unwrap();
            let got = c.run(&params, &inputs, seed).unwrap();
            for (n, a) in &want {
                assert_eq!(a.data(), got[n].data(), "seed {seed}: {n}");
            }
            distinct.push(format!("{:?}", got["U"].data()));
        }
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "different seeds give different draws");
    }
}

/// A data-dependent read of a count table at the point's own column
/// (`C[z[i], i]`, with `C[., i]` counting the earlier outputs): scheduled
/// with exact affine indices, compiled code equals the interpreter, with
/// and without the optimizer (which turns the counts into a running count).
#[test]
fn indirect_read_of_earlier_counts() {
    let src = "affine r1 [N, K] -> { : N > 0 and K > 0 }
    inputs
        z : int [N];
    outputs
        znew : int [N];
    locals
        C : int {[k, i] : 0 <= k < K and 0 <= i < N};
    let
        C[k, i] = reduce(+, [j], {: 0 <= j < i} : if znew[j] == k then 1 else 0);
        znew[i] = (C[z[i], i] + z[i]) % K;
.";
    for optimize in [false, true] {
        let c = compile::compile(
            src,
            &Options {
                optimize,
                checked: true,
                ..Options::default()
            },
        )
        .unwrap_or_else(|e| panic!("optimize={optimize}: {e}"));
        let prog = c.program().clone();
        let sys = c.system().clone();
        let zv = &sys.vars[sys.var_by_name("z").unwrap()];
        for (n, k) in [(1i64, 1i64), (5, 2), (23, 4)] {
            let params = [n, k];
            let spec = interp::array_spec(zv, &params).unwrap();
            let z: Vec<i64> = (0..n).map(|i| (7 * i + 3) % k).collect();
            let z = Array::from_data(&spec, ArrayData::Int(z)).unwrap();
            let inputs: HashMap<String, Array> = [("z".to_string(), z)].into();
            let want = interp::run(&prog, &sys.name, &params, &inputs, 0).unwrap();
            let got = c.run(&params, &inputs, 0).unwrap();
            assert_eq!(want["znew"].data(), got["znew"].data(), "{params:?}");
        }
        // An out-of-domain row is the same run-time error in both engines.
        let params = [4i64, 2];
        let spec = interp::array_spec(zv, &params).unwrap();
        let z = Array::from_data(&spec, ArrayData::Int(vec![0, 1, 2, 0])).unwrap();
        let inputs: HashMap<String, Array> = [("z".to_string(), z)].into();
        assert!(interp::run(&prog, &sys.name, &params, &inputs, 0).is_err());
        assert!(c.run(&params, &inputs, 0).is_err());
    }
}

/// Math calls whose arguments are all constants (`lgamma(0.01)` in a
/// log-joint's sum over the non-zero counts) are computed when the code
/// is compiled, by the routines the compiled code calls: the results
/// equal the interpreter's bit for bit, in a branch and out of one, for
/// `lgamma` at a pole and `log` of a negative number too.
#[test]
fn math_of_constants_is_folded_to_the_values_computed_at_run_time() {
    let src = "affine mc [N] -> { : N > 0 }
    inputs
        X : float [N];
    outputs
        Y : float [N];
        Z : float [N];
    let
        Y[i] = if X[i] > 0.0 then X[i] * lgamma(0.01) - lgamma(2.5) + exp(1.5) * log(2.5)
               else pow(2.0, 0.5) * X[i] + lgamma(-3.0) + log(-1.0);
        Z[i] = reduce(+, [j], {: 0 <= j <= i} : if X[j] != 0.0 then lgamma(X[j] + 0.1) - lgamma(0.1) else 0.0);
.";
    for optimize in [false, true] {
        let c = compiled(src, optimize);
        let prog = c.program().clone();
        let sys = c.system().clone();
        let params = [9];
        let x = &sys.vars[sys.var_by_name("X").expect("X")];
        let spec = interp::array_spec(x, &params).expect("a spec");
        let data: Vec<f64> = (0..9).map(|k| 0.75 * k as f64 - 3.0).collect();
        let a = Array::from_data(&spec, ArrayData::Float(data)).expect("an array");
        let inputs: HashMap<String, Array> = [("X".to_string(), a)].into();
        let want = interp::run(&prog, &sys.name, &params, &inputs, 0).expect("interp");
        let got = c.run(&params, &inputs, 0).expect("jit");
        for (n, w) in &want {
            let (ArrayData::Float(w), ArrayData::Float(g)) = (w.data(), got[n].data()) else {
                panic!("{n}: float outputs");
            };
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(w), bits(g), "optimize={optimize}: {n}");
        }
    }
}
