//! Sum terms that vanish where an int datum is zero
//! (`codegen::opt::skip_zero_terms`): `Σ_a [f(n_a + X_a + c) − f(n_a + c)]`
//! is guarded by `X_a != 0` (or `f`'s argument outside the band where `f`
//! is finite), as a hand-written DMM sampler keeps each document as its
//! non-zero terms. Where the rewrite applies the emitted code shows the
//! guard; where it must not, it does not; and in every case the compiled
//! program equals the interpreter's, NaNs, infinities and overflow errors
//! included.

mod common;

use alphac::compile::{self, Compiled, Options};
use alphac::interp;
use alphac::runtime::{Array, ArrayData};
use common::cleanup::exact;
use common::option_sets;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::collections::HashMap;

/// `S[i] = Σ_a [F(a) − G(a)]` over `0 <= a < A` from the int data `n`
/// and `X`: the two terms given as `.alpha` expressions.
fn program(f: &str, g: &str) -> String {
    format!(
        "affine zero [N, A] -> {{ : N > 0 and A > 0 }}
    inputs
        n : int [A];
        X : int [N, A];
    outputs
        S : float [N];
    let
        S[i] = reduce(+, [a], {{: 0 <= a < A}} : {f} - {g});
."
    )
}

/// The DMM term `lgamma(n + X + 0.1) − lgamma(n + 0.1)`.
fn dmm_term() -> String {
    program(
        "lgamma(float(n[a] + X[i, a]) + 0.1)",
        "lgamma(float(n[a]) + 0.1)",
    )
}

/// The optimized C-like code of `src`.
fn emit(src: &str) -> String {
    let p = compile::parse_program(src).unwrap_or_else(|e| panic!("{e}"));
    compile::emit(&p, "zero", &Options::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// The inputs `n` and `X` of a program of [`program`].
fn inputs(c: &Compiled, params: &[i64], n: &[i64], x: &[i64]) -> HashMap<String, Array> {
    let mut m = HashMap::new();
    for v in &c.system().vars {
        if v.kind == alphac::ir::VarKind::Input {
            let spec = interp::array_spec(v, params).expect("a spec");
            let data = if v.name == "n" { n } else { x };
            let a = Array::from_data(&spec, ArrayData::Int(data.to_vec())).expect("an array");
            m.insert(v.name.clone(), a);
        }
    }
    m
}

/// The interpreter and the compiled code agree on `c` with these data:
/// equal outputs (NaNs alike) or both runs failing.
fn agree(c: &Compiled, params: &[i64], n: &[i64], x: &[i64]) -> Result<(), String> {
    let ins = inputs(c, params, n, x);
    let want = interp::run(c.program(), "zero", params, &ins, 0);
    let got = c.run(params, &ins, 0);
    match (want, got) {
        (Ok(w), Ok(g)) => {
            for (name, a) in &w {
                if !exact(a, &g[name]) {
                    return Err(format!(
                        "n {n:?} X {x:?}: {name} differs\n{:?}\n{:?}",
                        a.data(),
                        g[name].data()
                    ));
                }
            }
            Ok(())
        }
        (Err(_), Err(_)) => Ok(()),
        (w, g) => Err(format!(
            "n {n:?} X {x:?}: interpreter {:?}, compiled {:?}",
            w.err().map(|e| e.to_string()),
            g.err().map(|e| e.to_string())
        )),
    }
}

/// Runs `src` on the data under every option set.
fn agree_everywhere(src: &str, params: &[i64], n: &[i64], x: &[i64]) {
    for opts in option_sets() {
        let c = compile::compile(src, &opts).unwrap_or_else(|e| panic!("{e}"));
        agree(&c, params, n, x).unwrap_or_else(|e| panic!("{opts:?}: {e}"));
    }
}

#[test]
fn the_dmm_term_is_skipped_where_the_count_is_zero() {
    let code = emit(&dmm_term());
    assert!(
        code.contains("if ((X[t0][t2] != 0) || !(n[t2] >= 0)) {"),
        "{code}"
    );
    // Ordinary counts, zeros among them; a negative count inside the
    // band's complement (lgamma finite there: computed, 0); a count whose
    // float is a pole (lgamma = inf: inf − inf = NaN, which a skip would
    // lose); one where n + X overflows (an error in both engines).
    let params = [3, 4];
    let x = [0, 2, 0, 1, 0, 0, 0, 0, 5, 0, 3, 0];
    agree_everywhere(&dmm_term(), &params, &[0, 7, 1, 3], &x);
    agree_everywhere(&dmm_term(), &params, &[-3, 0, 2, 1], &x);
    agree_everywhere(&dmm_term(), &params, &[0, -(1 << 60), 2, 1], &x);
    agree_everywhere(&dmm_term(), &params, &[0, 0, 2, i64::MAX], &x);
    let c = compile::compile(&dmm_term(), &Options::default()).expect("compiles");
    let pole = inputs(&c, &params, &[0, -(1 << 60), 0, 0], &x);
    let out = c.run(&params, &pole, 0).expect("runs");
    let ArrayData::Float(s) = out["S"].data() else {
        panic!("floats")
    };
    assert!(s.iter().all(|v| v.is_nan()), "{s:?}");
}

#[test]
fn a_constant_argument_needs_only_the_datum() {
    // logp's `Σ lgamma(nf + 0.1) − lgamma(0.1)`: the band is decided now
    let src = program("lgamma(float(X[i, a]) + 0.1)", "lgamma(0.1)");
    let code = emit(&src);
    assert!(code.contains("if (X[t0][t2] != 0) {"), "{code}");
    agree_everywhere(&src, &[2, 3], &[0, 0, 0], &[0, 4, 0, 0, 0, 1]);
}

#[test]
fn a_count_plus_its_last_step_is_the_datum() {
    // logp's `Σ lgamma(float(n + last) + 0.1) − lgamma(0.1)` once a final
    // count is read off a running count (`sdr::rewrite::endpoint`): the
    // whole int operand of the cast is the datum. n + 1 overflows at
    // i64::MAX: an error in both engines, the guard's or the term's.
    let src = program(
        "lgamma(float(n[a] + (if X[i, a] > 2 then 1 else 0)) + 0.1)",
        "lgamma(0.1)",
    );
    let code = emit(&src);
    assert!(
        code.contains("if ((n[t2] + ((X[t0][t2] > 2) ? 1 : 0)) != 0) {"),
        "{code}"
    );
    agree_everywhere(&src, &[2, 3], &[0, 0, 5], &[0, 4, 0, 3, 0, 1]);
    agree_everywhere(&src, &[2, 3], &[-1, 0, i64::MAX], &[3, 0, 0, 0, 0, 3]);
    // a cast under a `select` branch is not always evaluated: no datum
    let src = program(
        "lgamma(if X[i, a] > 2 then float(n[a] + 1) + 0.1 else 0.1)",
        "lgamma(0.1)",
    );
    let code = emit(&src);
    assert!(!code.contains("!= 0)"), "{code}");
    agree_everywhere(&src, &[2, 3], &[0, 0, 5], &[0, 4, 0, 3, 0, 1]);
}

#[test]
fn a_term_that_does_not_vanish_is_kept() {
    for (f, g) in [
        // another constant: f(n + 0.1) − f(n + 0.2) is not zero at X = 0
        (
            "lgamma(float(n[a] + X[i, a]) + 0.1)",
            "lgamma(float(n[a]) + 0.2)",
        ),
        // X multiplied: n * 0 is not n
        ("log(float(n[a] * X[i, a]) + 0.5)", "log(float(n[a]) + 0.5)"),
        // two functions
        (
            "lgamma(float(n[a] + X[i, a]) + 0.1)",
            "log(float(n[a]) + 0.1)",
        ),
        // sqrt is not guarded
        ("sqrt(float(n[a] + X[i, a]))", "sqrt(float(n[a]))"),
    ] {
        let src = program(f, g);
        let code = emit(&src);
        assert!(!code.contains("!= 0)"), "{f} − {g}:\n{code}");
        agree_everywhere(&src, &[2, 3], &[1, 2, 3], &[0, 4, 0, 0, 0, 1]);
    }
}

#[test]
fn a_selected_term_keeps_its_condition_first() {
    // `if n >= 0 then lgamma(..) − lgamma(..) else 0.0`: the guard is the
    // condition, then the datum
    let src = program(
        "(if n[a] >= 0 then lgamma(float(n[a] + X[i, a]) + 0.1)",
        "lgamma(float(n[a]) + 0.1) else 0.0)",
    );
    let code = emit(&src);
    assert!(
        code.contains("if ((n[t2] >= 0) && ((X[t0][t2] != 0) ||"),
        "{code}"
    );
    agree_everywhere(&src, &[2, 3], &[-1, 2, 0], &[0, 4, 0, 0, 3, 1]);
}

#[test]
fn random_terms_agree_with_the_interpreter() {
    // f(n + X + c) − f(n + c) for f in lgamma, log, exp; data with many
    // zeros and extremes.
    let fs = ["lgamma", "log", "exp"];
    let cs = ["0.1", "1.0", "-0.5", "0.0"];
    let systems: Vec<(String, Vec<Compiled>)> = fs
        .iter()
        .flat_map(|f| cs.iter().map(move |c| (f, c)))
        .map(|(f, c)| {
            let src = program(
                &format!("{f}(float(n[a] + X[i, a]) + {c})"),
                &format!("{f}(float(n[a]) + {c})"),
            );
            let compiled = option_sets()
                .iter()
                .map(|o| compile::compile(&src, o).unwrap_or_else(|e| panic!("{e}")))
                .collect();
            (src, compiled)
        })
        .collect();
    let datum = prop_oneof![
        4 => Just(0i64),
        4 => -3i64..20,
        1 => Just(-(1i64 << 60)),
        1 => Just(1i64 << 62),
        1 => Just(800),
    ];
    let strategy = (
        0..systems.len(),
        proptest::collection::vec(datum.clone(), 3),
        proptest::collection::vec(datum, 6),
    );
    let mut runner = TestRunner::new(Config {
        cases: 96,
        ..Config::default()
    });
    runner
        .run(&strategy, |(s, n, x)| {
            for c in &systems[s].1 {
                agree(c, &[2, 3], &n, &x)
                    .map_err(|e| TestCaseError::fail(format!("{}\n{e}", systems[s].0)))?;
            }
            Ok(())
        })
        .unwrap();
}
