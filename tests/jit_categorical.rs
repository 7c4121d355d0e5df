//! Categorical draws in compiled code evaluate each weight exactly once
//! (issue 16: the weights go to a scratch buffer, which is then scanned),
//! and still draw what the interpreter draws, bit for bit. The number of
//! evaluations is counted through an external function in the weight;
//! the draws are compared with the interpreter's on random weights (zeros,
//! one nonzero weight, subnormal and huge ones, long ranges that make the
//! buffer grow in the middle of a draw, ranges that depend on the outer
//! point, non-convex ranges), on draws nested in a weight, and on draws
//! inside parallel loops split into chunks on several threads.

mod common;

use alphac::compile::{self, Compiled, Options, RunError};
use alphac::interp::{self, ExternalFn};
use alphac::jit::parallel::{set_split_mode, SplitMode};
use alphac::jit::ExecError;
use alphac::runtime::{Array, ArrayData};
use common::option_sets;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The split mode is process-wide: the tests that set it take turns.
static MODE: Mutex<()> = Mutex::new(());

/// An external `h(x) = x² + 0.25` (positive) that counts its calls.
fn counting_h() -> (Arc<AtomicUsize>, HashMap<String, ExternalFn>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let h: ExternalFn = Arc::new(move |a: &[f64]| {
        c.fetch_add(1, Ordering::Relaxed);
        a[0] * a[0] + 0.25
    });
    (calls, HashMap::from([("h".to_string(), h)]))
}

/// Float inputs of `c` for `params`, element `j` of each from `value(j)`.
fn float_inputs(
    c: &Compiled,
    params: &[i64],
    mut value: impl FnMut(usize) -> f64,
) -> HashMap<String, Array> {
    let mut m = HashMap::new();
    for v in &c.system().vars {
        if v.kind == alphac::ir::VarKind::Input {
            let spec = interp::array_spec(v, params).expect("a spec");
            let n = spec.len().expect("small");
            let data = ArrayData::Float((0..n).map(&mut value).collect());
            m.insert(
                v.name.clone(),
                Array::from_data(&spec, data).expect("an array"),
            );
        }
    }
    m
}

/// The interpreter's and the compiled code's outputs for `c` agree bit for
/// bit, or both runs fail (the compiled one with an invalid categorical).
/// Returns whether the runs succeeded.
fn same_as_interpreter(
    c: &Compiled,
    params: &[i64],
    ins: &HashMap<String, Array>,
    seed: u64,
) -> Result<bool, String> {
    let want = interp::run(c.program(), &c.system().name, params, ins, seed);
    let got = c.run(params, ins, seed);
    match (want, got) {
        (Ok(w), Ok(g)) => {
            for (n, a) in &w {
                if a.data() != g[n].data() {
                    return Err(format!(
                        "params {params:?} seed {seed}: {n} differs\n{:?}\n{:?}",
                        a.data(),
                        g[n].data()
                    ));
                }
            }
            Ok(true)
        }
        (Err(_), Err(RunError::Jit(ExecError::BadCategorical { .. }))) => Ok(false),
        (w, g) => Err(format!(
            "params {params:?} seed {seed}: interpreter {:?}, compiled {:?}",
            w.err().map(|e| e.to_string()),
            g.err().map(|e| e.to_string())
        )),
    }
}

#[test]
fn each_weight_is_evaluated_once() {
    // A full range, a range that depends on the point, and a non-convex
    // range with a condition; K = 150 makes the buffer grow mid-draw.
    let src = "external h(1)
    affine once [N, K] -> { : N > 0 and K > 2 }
    inputs W : { [i, k] : 0 <= i < N and 0 <= k < K }
    outputs
        A : int { [i] : 0 <= i < N }
        B : int { [i] : 0 <= i < N }
        C : int { [i] : 0 <= i < N }
    let
        A[i] = categorical([k], {: 0 <= k < K} : h(W[i, k]));
        B[i] = categorical([k], {: 0 <= k <= i and k < K} : h(W[i, k]));
        C[i] = categorical([k], {: 0 <= k < K and (k < 2 or i < k)} : h(W[i, k]));
.";
    for opts in option_sets() {
        let c = compile::compile(src, &opts).unwrap_or_else(|e| panic!("{e}"));
        for (n, k) in [(1i64, 3i64), (7, 5), (5, 150)] {
            // Weights per draw: K, min(i + 1, K), and 2 + (K − 1 − i)
            // for i >= 1 (K at i = 0).
            let expected: i64 = (0..n)
                .map(|i| k + (i + 1).min(k) + if i == 0 { k } else { 2 + (k - 1 - i).max(0) })
                .sum();
            let params = [n, k];
            let ins = float_inputs(&c, &params, |j| (j % 13) as f64 * 0.1);
            let (calls, ext) = counting_h();
            let iopts = interp::Options {
                externals: ext.clone(),
                ..interp::Options::default()
            };
            let want = interp::run_with(c.program(), "once", &params, &ins, 5, &iopts)
                .unwrap_or_else(|e| panic!("{e}"));
            let by_interp = calls.swap(0, Ordering::Relaxed);
            let got = c
                .run_with(&params, &ins, 5, &ext)
                .unwrap_or_else(|e| panic!("{e}"));
            let by_jit = calls.load(Ordering::Relaxed);
            assert_eq!(by_interp as i64, expected, "interpreter, N={n} K={k}");
            assert_eq!(
                by_jit as i64, expected,
                "compiled code (optimize={}, checked={}), N={n} K={k}",
                opts.optimize, opts.checked
            );
            for (name, a) in &want {
                assert_eq!(a.data(), got[name].data(), "{name}, N={n} K={k}");
            }
        }
    }
}

#[test]
fn nested_draws_evaluate_each_weight_once_with_their_own_buffers() {
    // The inner draw runs once per weight of the outer one (a point of its
    // own, `[i, k]`), while the outer draw's buffer is being filled; its
    // range (K = 100) makes its buffer grow in the middle.
    let src = "external h(1)
    affine nest [N, K] -> { : N > 0 and K > 0 }
    inputs W : { [i, k] : 0 <= i < N and 0 <= k < K }
    outputs Z : int { [i] : 0 <= i < N }
    let Z[i] = categorical([k], {: 0 <= k < K} :
        h(W[i, k]) + float(categorical([j], {: 0 <= j < K} : h(W[i, j] + float(k)))));
.";
    for opts in option_sets() {
        let c = compile::compile(src, &opts).unwrap_or_else(|e| panic!("{e}"));
        for (n, k) in [(1i64, 1i64), (4, 6), (3, 100)] {
            let params = [n, k];
            let ins = float_inputs(&c, &params, |j| ((j * 7) % 11) as f64 * 0.05);
            let (calls, ext) = counting_h();
            let iopts = interp::Options {
                externals: ext.clone(),
                ..interp::Options::default()
            };
            let want = interp::run_with(c.program(), "nest", &params, &ins, 9, &iopts)
                .unwrap_or_else(|e| panic!("{e}"));
            let by_interp = calls.swap(0, Ordering::Relaxed) as i64;
            let got = c
                .run_with(&params, &ins, 9, &ext)
                .unwrap_or_else(|e| panic!("{e}"));
            let by_jit = calls.load(Ordering::Relaxed) as i64;
            // N·K outer weights, each with an inner draw of K weights.
            assert_eq!(by_interp, n * k * (k + 1), "interpreter, N={n} K={k}");
            assert_eq!(by_jit, n * k * (k + 1), "compiled code, N={n} K={k}");
            assert_eq!(want["Z"].data(), got["Z"].data(), "N={n} K={k}");
        }
    }
}

/// Random weights from the words `bits`: each zero with probability
/// `zeros / 4`, else (by other bits of its word) uniform in (0, 1],
/// subnormal, tiny, or huge (so that some sums overflow to infinity);
/// with `single`, each row of `K` has only its `pick`-th weight nonzero.
#[derive(Debug, Clone)]
struct Weights {
    zeros: u32,
    single: bool,
    pick: usize,
    bits: Vec<u64>,
}

impl Weights {
    fn value(&self, j: usize, k: usize) -> f64 {
        let r = self.bits[j % self.bits.len()];
        if self.single {
            return if j % k == self.pick % k {
                (r >> 11) as f64 / (1u64 << 53) as f64 + 1e-3
            } else {
                0.0
            };
        }
        if (r % 4) < u64::from(self.zeros) {
            return 0.0;
        }
        match (r >> 2) % 16 {
            0 => 5e-324,
            1 => 1e-300,
            2 => 1e300,
            _ => ((r >> 11) as f64 + 1.0) / (1u64 << 53) as f64,
        }
    }
}

fn weights() -> impl Strategy<Value = Weights> {
    (
        0u32..3,
        any::<bool>(),
        0usize..1000,
        prop::collection::vec(any::<u64>(), 1..64),
    )
        .prop_map(|(zeros, single, pick, bits)| Weights {
            zeros,
            single,
            pick,
            bits,
        })
}

/// Three systems (a run fails as a whole when one of its draws has no
/// positive weight): a full range, a range that depends on the point, a
/// non-convex range with a condition.
const PROP_SRC: &str = "affine pa [N, K] -> { : N > 0 and K > 0 }
    inputs W : { [i, k] : 0 <= i < N and 0 <= k < K }
    outputs Z : int { [i] : 0 <= i < N }
    let Z[i] = categorical([k], {: 0 <= k < K} : W[i, k]);
.
affine pb [N, K] -> { : N > 0 and K > 0 }
    inputs W : { [i, k] : 0 <= i < N and 0 <= k < K }
    outputs Z : int { [i] : 0 <= i < N }
    let Z[i] = categorical([k], {: 0 <= k < K and k <= 3i} : W[i, k] + W[i, k]);
.
affine pc [N, K] -> { : N > 0 and K > 0 }
    inputs W : { [i, k] : 0 <= i < N and 0 <= k < K }
    outputs Z : int { [i] : 0 <= i < N }
    let Z[i] = categorical([k], {: 0 <= k < K and (k < 1 or i < k)} : W[i, k] * 2.0);
.";

/// Every system of [`PROP_SRC`] under every option set.
fn prop_systems() -> Vec<Compiled> {
    let mut out = Vec::new();
    for system in ["pa", "pb", "pc"] {
        for o in option_sets() {
            let o = Options {
                system: Some(system.to_string()),
                ..o
            };
            out.push(compile::compile(PROP_SRC, &o).unwrap_or_else(|e| panic!("{e}")));
        }
    }
    out
}

#[test]
fn random_weights_draw_as_in_the_interpreter() {
    let compiled = prop_systems();
    let succeeded = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config {
        cases: 96,
        ..Config::default()
    });
    let strategy = (
        1i64..6,
        prop_oneof![1i64..8, 60i64..300],
        weights(),
        0u64..1000,
    );
    runner
        .run(&strategy, |(n, k, w, seed)| {
            for c in &compiled {
                let params = [n, k];
                let ins = float_inputs(c, &params, |j| w.value(j, k as usize));
                let ok =
                    same_as_interpreter(c, &params, &ins, seed).map_err(TestCaseError::fail)?;
                succeeded.fetch_add(usize::from(ok), Ordering::Relaxed);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    // Most runs draw, rather than fail on a zero or infinite sum (about
    // three in four do).
    let succeeded = succeeded.into_inner();
    let runs = 96 * compiled.len();
    assert!(
        2 * succeeded >= runs,
        "only {succeeded} of {runs} runs drew"
    );
}

#[test]
fn draws_in_parallel_chunks_are_the_interpreters() {
    let _turn = MODE.lock().unwrap_or_else(|p| p.into_inner());
    for (mode, threads) in [(SplitMode::Always, 4), (SplitMode::AlwaysReversed, 2)] {
        set_split_mode(mode);
        for c in prop_systems() {
            let c = c.with_threads(Some(threads));
            assert!(c.parallel_loops() > 0, "{}", c.function().to_c());
            for (n, k) in [(40i64, 3i64), (17, 90), (64, 200)] {
                let params = [n, k];
                let ins = float_inputs(&c, &params, |j| ((j * 37) % 101) as f64 / 50.0 + 1e-3);
                for seed in [1u64, 8] {
                    assert_eq!(same_as_interpreter(&c, &params, &ins, seed), Ok(true));
                }
            }
        }
    }
    set_split_mode(SplitMode::WhenItPays);
}

#[test]
fn a_condition_free_of_the_drawn_index_holds_at_all_points_or_none() {
    // `2 <= i` does not mention `k`: compiled code tests it once per draw.
    // Where it holds, the K weights are evaluated once each; where it does
    // not, the draw is empty, the error of an empty categorical.
    let guarded = "external h(1)
    affine g [N, K] -> { : N > 2 and K > 0 }
    inputs W : { [i, k] : 0 <= i < N and 0 <= k < K }
    outputs Z : int { [i] : 0 <= i < N }
    let Z[i] = if i >= 2 then categorical([k], {: 0 <= k < K and 2 <= i} : h(W[i, k])) else -1;
.";
    let empty = guarded
        .replace("if i >= 2 then ", "")
        .replace(" else -1", "");
    for opts in option_sets() {
        let c = compile::compile(guarded, &opts).unwrap_or_else(|e| panic!("{e}"));
        let params = [6, 70];
        let ins = float_inputs(&c, &params, |j| (j % 5) as f64);
        let (calls, ext) = counting_h();
        let iopts = interp::Options {
            externals: ext.clone(),
            ..interp::Options::default()
        };
        let want = interp::run_with(c.program(), "g", &params, &ins, 3, &iopts)
            .unwrap_or_else(|e| panic!("{e}"));
        calls.store(0, Ordering::Relaxed);
        let got = c
            .run_with(&params, &ins, 3, &ext)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(calls.load(Ordering::Relaxed), 4 * 70);
        assert_eq!(want["Z"].data(), got["Z"].data());

        let c = compile::compile(&empty, &opts).unwrap_or_else(|e| panic!("{e}"));
        let (_, ext) = counting_h();
        match c.run_with(&params, &ins, 3, &ext) {
            Err(RunError::Jit(ExecError::BadCategorical { array, point })) => {
                assert_eq!((array.as_str(), point), ("Z", vec![0]));
            }
            other => panic!("{other:?}"),
        }
    }
}

/// Inputs of `c` at `params`: floats in `[0.1, 1.1)` from the index, `c`
/// from `cs`, `b[i]` true exactly where `cs[i]` is inside `0..n`.
fn invariant_inputs(c: &Compiled, params: &[i64], cs: &[i64]) -> HashMap<String, Array> {
    let n = params[0];
    let mut m = HashMap::new();
    for v in &c.system().vars {
        if v.kind != alphac::ir::VarKind::Input {
            continue;
        }
        let spec = interp::array_spec(v, params).expect("a spec");
        let len = spec.len().expect("small");
        let data = match v.name.as_str() {
            "c" => ArrayData::Int(cs.to_vec()),
            "b" => ArrayData::Bool(cs.iter().map(|&x| (0..n).contains(&x)).collect()),
            _ => ArrayData::Float((0..len).map(|j| 0.1 + (j % 7) as f64 / 7.0).collect()),
        };
        m.insert(
            v.name.clone(),
            Array::from_data(&spec, data).expect("an array"),
        );
    }
    m
}

#[test]
fn parts_of_a_weight_free_of_the_drawn_index_are_read_where_the_weight_reads_them() {
    // Compiled code evaluates `x[i]`, `exp(x[i])` and `x[c[i]]` once per
    // draw, before the weights (`jit::lower::draws::invariant_parts`):
    // the draws must stay the interpreter's, a part under a branch that
    // does not run (`x[c[i]]` where `b[i]` is false, `c[i]` out of range)
    // must not be read, and a part that fails must fail the run.
    let src = "affine inv [N, K] -> { : N > 0 and K > 0 }
    inputs x : float [N]; c : int [N]; b : bool [N]; A : float [K];
    outputs z : int [N]; z2 : int [N];
    let
      z[i] = categorical([k], {: 0 <= k < K} : A[k] * x[i] + exp(x[i]));
      z2[i] = categorical([k], {: 0 <= k < K} : if b[i] then x[c[i]] + A[k] else A[k]);
.";
    let failing = "affine fail [N, K] -> { : N > 0 and K > 0 }
    inputs x : float [N]; c : int [N]; A : float [K];
    outputs z : int [N];
    let z[i] = categorical([k], {: 0 <= k < K} : A[k] + x[c[i]]);
.";
    let params = [5, 6];
    let in_range = [0, 4, 2, 1, 3];
    let out_of_range = [0, 9, 2, -1, 3];
    for opts in option_sets() {
        let c = compile::compile(src, &opts).unwrap_or_else(|e| panic!("{e}"));
        for cs in [in_range, out_of_range] {
            let ins = invariant_inputs(&c, &params, &cs);
            for seed in [1, 2, 3] {
                assert_eq!(same_as_interpreter(&c, &params, &ins, seed), Ok(true));
            }
        }
        let c = compile::compile(failing, &opts).unwrap_or_else(|e| panic!("{e}"));
        let ins = invariant_inputs(&c, &params, &in_range);
        assert_eq!(same_as_interpreter(&c, &params, &ins, 1), Ok(true));
        let ins = invariant_inputs(&c, &params, &out_of_range);
        assert!(interp::run(c.program(), "fail", &params, &ins, 1).is_err());
        match c.run(&params, &ins, 1) {
            Err(RunError::Jit(e)) => assert!(format!("{e}").contains("x"), "{e}"),
            other => panic!("{opts:?}: {other:?}"),
        }
    }
}

#[test]
fn invalid_weights_fail_in_both_engines() {
    // One bad weight among good ones, at the start, the middle or the end
    // of the range: a negative one, -0.0 (valid), NaN, +inf, -inf, and
    // huge ones whose sum overflows. Compiled code checks only "below 0"
    // per weight and lets NaN and infinities show in the total: it must
    // refuse exactly what the interpreter refuses.
    let src = "affine bad [N, K] -> { : N > 0 and K > 0 }
    inputs W : { [i, k] : 0 <= i < N and 0 <= k < K }
    outputs Z : int { [i] : 0 <= i < N }
    let Z[i] = categorical([k], {: 0 <= k < K} : W[i, k]);
.";
    let bads = [
        -1.0,
        -1e-300,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1.7e308,
    ];
    for opts in option_sets() {
        let c = compile::compile(src, &opts).unwrap_or_else(|e| panic!("{e}"));
        let params = [1, 5];
        for &bad in &bads {
            for at in [0usize, 2, 4] {
                let ins = float_inputs(&c, &params, |j| {
                    if j == at {
                        bad
                    } else if bad == 1.7e308 {
                        1.7e308
                    } else {
                        0.5
                    }
                });
                let ok = same_as_interpreter(&c, &params, &ins, 1)
                    .unwrap_or_else(|e| panic!("{opts:?} weight {bad} at {at}: {e}"));
                // -0.0 is a zero weight; the others fail the draw
                assert_eq!(ok, bad == -0.0, "{opts:?} weight {bad} at {at}");
            }
        }
    }
}

#[test]
fn rows_of_a_weight_are_checked_once_where_the_weight_reads_them_first() {
    // `T[c[i], k]` and `U[k, c[i]]` read one row (column) chosen by `c[i]`:
    // compiled code checks `c[i]` once per draw and then only adds `k`
    // (`jit::lower::rows`). The draws stay the interpreter's; an
    // out-of-range `c[i]` fails at the point the weight reads first
    // (`k = 0`); and where something that may fail comes first in the
    // weight (`x[e[k]]`), that is what fails.
    let src = "affine rows [N, V, K] -> { : N > 0 and V > 0 and K > 0 }
    inputs x : float [N]; c : int [N]; e : int [K]; T : float [V, K]; U : float [K, V];
    outputs z : int [N];
    let z[i] = categorical([k], {: 0 <= k < K} : T[c[i], k] * U[k, c[i]] + x[i]);
.";
    let first = src.replace(
        "T[c[i], k] * U[k, c[i]] + x[i]",
        "x[e[k]] + T[c[i], k] * U[k, c[i]]",
    );
    let params = [5, 4, 3];
    let ins = |c: &Compiled, cs: [i64; 5], es: [i64; 3]| {
        let mut m = HashMap::new();
        for v in &c.system().vars {
            if v.kind != alphac::ir::VarKind::Input {
                continue;
            }
            let spec = interp::array_spec(v, &params).expect("a spec");
            let len = spec.len().expect("small");
            let data = match v.name.as_str() {
                "c" => ArrayData::Int(cs.to_vec()),
                "e" => ArrayData::Int(es.to_vec()),
                _ => ArrayData::Float((0..len).map(|j| 0.1 + (j % 7) as f64 / 7.0).collect()),
            };
            m.insert(
                v.name.clone(),
                Array::from_data(&spec, data).expect("an array"),
            );
        }
        m
    };
    let oob = |r: Result<HashMap<String, Array>, RunError>| match r {
        Err(RunError::Jit(ExecError::OutOfBounds { array, point })) => (array, point),
        other => panic!("{other:?}"),
    };
    for opts in option_sets() {
        let c = compile::compile(src, &opts).unwrap_or_else(|e| panic!("{e}"));
        for seed in [1, 2, 3] {
            let good = ins(&c, [0, 3, 2, 1, 3], [0, 1, 2]);
            assert_eq!(same_as_interpreter(&c, &params, &good, seed), Ok(true));
        }
        let bad = ins(&c, [0, 7, 2, 1, 3], [0, 1, 2]);
        let want = interp::run(c.program(), "rows", &params, &bad, 1).expect_err("fails");
        assert!(want.to_string().contains('T'), "{want}");
        assert_eq!(oob(c.run(&params, &bad, 1)), ("T".to_string(), vec![7, 0]));

        let c = compile::compile(&first, &opts).unwrap_or_else(|e| panic!("{e}"));
        // at the first point both `x[e[0]]` and `T[c[0], 0]` are out
        let bad = ins(&c, [7, 1, 2, 1, 3], [9, 1, 2]);
        let want = interp::run(c.program(), "rows", &params, &bad, 1).expect_err("fails");
        assert!(want.to_string().contains('x'), "{want}");
        assert_eq!(oob(c.run(&params, &bad, 1)), ("x".to_string(), vec![9]));
    }
}
