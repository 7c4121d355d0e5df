//! Selections (issue 15, LANGUAGE "selections"): in a reduction body, the
//! data-dependent side `e` of a guard `e == k`, `k` an index of the result,
//! must lie in `k`'s range; a value outside is a run-time error naming the
//! variable and the index, in the interpreter and in the generated code
//! (optimized or not, scatter loop or not). Where the rule does not apply
//! (the compared index is reduced, `e` mentions `k`, `e` reads no data),
//! an unmatched value contributes nothing, as before.

use alphac::compile::{compile, parse_program, Options, RunError};
use alphac::interp;
use alphac::ir::ExprKind;
use alphac::jit::ExecError;
use alphac::runtime::{Array, ArrayData};
use std::collections::HashMap;

const HIST: &str = "affine hist [N, K] -> { : N > 0 and K > 0 }
    inputs
        z : int [N];
        x : float [N];
    outputs
        n : int [K];
        s : float [K];
    let
        n[k] = reduce(+, [j], {: 0 <= j < N} : if z[j] == k then 1 else 0);
        s[k] = reduce(+, [j], {: 0 <= j < N} : if k == z[j] and x[j] > 0.0 then x[j] else 0.0);
.";

fn inputs(
    src: &str,
    sys: &str,
    params: &[i64],
    data: &[(&str, ArrayData)],
) -> HashMap<String, Array> {
    let program = parse_program(src).unwrap();
    let s = program.systems.iter().find(|s| s.name == sys).unwrap();
    data.iter()
        .map(|(name, d)| {
            let spec = interp::array_spec(&s.vars[s.var_by_name(name).unwrap()], params).unwrap();
            (
                name.to_string(),
                Array::from_data(&spec, d.clone()).unwrap(),
            )
        })
        .collect()
}

/// The outputs (or the error message) of the interpreter and of the JIT
/// without and with optimization.
fn run_all(
    src: &str,
    sys: &str,
    params: &[i64],
    ins: &HashMap<String, Array>,
) -> Vec<Result<HashMap<String, Array>, String>> {
    let program = parse_program(src).unwrap();
    let mut out = vec![interp::run(&program, sys, params, ins, 0).map_err(|e| e.to_string())];
    for optimize in [false, true] {
        let c = compile(
            src,
            &Options {
                optimize,
                system: Some(sys.to_string()),
                ..Default::default()
            },
        )
        .unwrap();
        out.push(c.run(params, ins, 0).map_err(|e| {
            if let RunError::Jit(ExecError::SelectionOutOfRange {
                var, index, value, ..
            }) = &e
            {
                assert!(!var.is_empty() && !index.is_empty() && *value != i64::MIN);
            }
            e.to_string()
        }));
    }
    out
}

fn hist_inputs(z: Vec<i64>) -> HashMap<String, Array> {
    let n = z.len();
    let x: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
    inputs(
        HIST,
        "hist",
        &[n as i64, 3],
        &[("z", ArrayData::Int(z)), ("x", ArrayData::Float(x))],
    )
}

#[test]
fn lowering_wraps_the_data_side_of_a_guard_on_a_result_index() {
    let program = parse_program(HIST).unwrap();
    let text = format!("{:?}", program.systems[0].equations);
    assert_eq!(text.matches("Selection(").count(), 2, "{text}");
    // the printed program has the plain guard and lowers to the same IR
    let printed = alphac::ir::print::program_to_alpha(&program);
    assert!(printed.contains("z[j] == k"), "{printed}");
    let again = parse_program(&printed).unwrap();
    let mut a = program.systems[0].equations.clone();
    let mut b = again.systems[0].equations.clone();
    a.iter_mut().for_each(|e| e.expr.clear_spans());
    b.iter_mut().for_each(|e| e.expr.clear_spans());
    assert_eq!(
        a.iter().map(|e| &e.expr).collect::<Vec<_>>(),
        b.iter().map(|e| &e.expr).collect::<Vec<_>>()
    );
}

#[test]
fn in_range_labels_give_the_same_histogram_everywhere() {
    let ins = hist_inputs(vec![0, 1, 2, 1, 0, 2, 2]);
    let runs = run_all(HIST, "hist", &[7, 3], &ins);
    let first = runs[0].as_ref().unwrap();
    assert_eq!(first["n"].data(), &ArrayData::Int(vec![2, 2, 3]));
    for r in &runs[1..] {
        let r = r.as_ref().unwrap();
        assert_eq!(r["n"].data(), first["n"].data());
        assert_eq!(r["s"].data(), first["s"].data());
    }
}

#[test]
fn an_out_of_range_label_is_an_error_in_every_engine() {
    for bad in [3, -1, i64::MAX] {
        let ins = hist_inputs(vec![0, 1, bad, 1, 0]);
        for (engine, r) in
            ["interpreter", "JIT", "optimized JIT"]
                .iter()
                .zip(run_all(HIST, "hist", &[5, 3], &ins))
        {
            let msg = r
                .err()
                .unwrap_or_else(|| panic!("{engine}: no error for label {bad}"));
            assert!(
                msg.contains(&format!(
                    "selection value {bad} is outside the range 0..=2 of `k`"
                )),
                "{engine}: {msg}"
            );
            assert!(
                msg.contains("domain of n") || msg.contains("domain of s"),
                "{engine}: {msg}"
            );
        }
    }
}

/// Both histograms (fused over `k` by the loop rewrites) become scatter
/// loops: the selection is a binding's value, checked once per `j`.
#[test]
fn the_optimized_code_scatters_and_checks_once_per_point() {
    let c = compile(HIST, &Options::default()).unwrap();
    let text = c.function().to_c();
    assert_eq!(text.matches(" = selected(z[").count(), 2, "{text}");
    assert_eq!(text.matches("selected(").count(), 2, "{text}");
}

/// The GMM sampler's counts select by the labels: an initial labelling
/// with a label `K` is an error, not a silently dropped point.
#[test]
fn a_sampler_rejects_an_initial_label_out_of_range() {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/gmm_gs.alpha"
    ))
    .unwrap();
    let (n, k) = (6i64, 3i64);
    let mut z = vec![0i64, 1, 2, 0, 1, 2];
    let x: Vec<f64> = (0..n).map(|i| i as f64 * 0.25).collect();
    let ok = inputs(
        &src,
        "gmm_gs",
        &[n, k],
        &[
            ("z", ArrayData::Int(z.clone())),
            ("x", ArrayData::Float(x.clone())),
        ],
    );
    let good = run_all(&src, "gmm_gs", &[n, k], &ok);
    let znew = good[0].as_ref().unwrap()["znew"].data().clone();
    for r in &good[1..] {
        assert_eq!(r.as_ref().unwrap()["znew"].data(), &znew);
    }
    z[4] = k;
    let bad = inputs(
        &src,
        "gmm_gs",
        &[n, k],
        &[("z", ArrayData::Int(z)), ("x", ArrayData::Float(x))],
    );
    for (engine, r) in
        ["interpreter", "JIT", "optimized JIT"]
            .iter()
            .zip(run_all(&src, "gmm_gs", &[n, k], &bad))
    {
        let msg = r.err().unwrap_or_else(|| panic!("{engine}: no error"));
        assert!(
            msg.contains("selection value 3 is outside the range 0..=2 of `k`"),
            "{engine}: {msg}"
        );
    }
}

/// Where the rule does not apply, nothing is wrapped and an unmatched
/// value contributes nothing: the compared index is reduced (a
/// data-selected single point), the value mentions the index, or the value
/// reads no data.
#[test]
fn other_equalities_are_not_selections() {
    let src = "affine other [N, K] -> { : N > 0 and K > 0 }
    inputs
        z : int [N];
        L : float [K, N];
    outputs
        pick : float [N];
        shifted : int [K];
        diag : int [K];
    let
        pick[i] = reduce(+, [k], {: 0 <= k < K} : if k == z[i] then L[k, i] else 0.0);
        shifted[k] = reduce(+, [j], {: 0 <= j < N} : if z[j] - k == k then 1 else 0);
        diag[k] = reduce(+, [j], {: 0 <= j < N} : if j == k then 1 else 0);
.";
    let program = parse_program(src).unwrap();
    for eq in &program.systems[0].equations {
        let mut found = false;
        fn walk(e: &alphac::ir::Expr, found: &mut bool) {
            *found |= matches!(e.kind, ExprKind::Selection(_));
            e.for_each_child(&mut |c| walk(c, found));
        }
        walk(&eq.expr, &mut found);
        assert!(!found, "{:?}", eq.expr);
    }
    let (n, k) = (4i64, 2i64);
    let l: Vec<f64> = (0..n * k).map(|v| v as f64).collect();
    let ins = inputs(
        src,
        "other",
        &[n, k],
        &[
            ("z", ArrayData::Int(vec![0, 9, 1, -3])),
            ("L", ArrayData::Float(l)),
        ],
    );
    let runs = run_all(src, "other", &[n, k], &ins);
    let first = runs[0].as_ref().unwrap();
    // z[1] = 9 and z[3] = -3 pick nothing
    assert_eq!(
        first["pick"].data(),
        &ArrayData::Float(vec![0.0, 0.0, 6.0, 0.0])
    );
    for r in &runs[1..] {
        let r = r.as_ref().unwrap();
        for name in ["pick", "shifted", "diag"] {
            assert_eq!(r[name].data(), first[name].data(), "{name}");
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Random labels, some out of range: the interpreter and the JIT
    /// (without and with optimization) all fail, with a selection error,
    /// exactly when some label is outside `0..K`, and otherwise agree.
    #[test]
    fn engines_agree_on_random_labels(
        k in 1i64..5,
        z in proptest::collection::vec(-2i64..7, 1..12),
    ) {
        let n = z.len() as i64;
        let bad = z.iter().any(|&l| l < 0 || l >= k);
        let x: Vec<f64> = (0..n).map(|i| (i as f64) - 2.5).collect();
        let ins = inputs(
            HIST,
            "hist",
            &[n, k],
            &[("z", ArrayData::Int(z.clone())), ("x", ArrayData::Float(x))],
        );
        let runs = run_all(HIST, "hist", &[n, k], &ins);
        for r in &runs {
            match r {
                Ok(_) => proptest::prop_assert!(!bad, "no error for {z:?}, K = {k}"),
                Err(e) => {
                    proptest::prop_assert!(bad, "{e}");
                    proptest::prop_assert!(e.contains("selection value"), "{e}");
                }
            }
        }
        if !bad {
            let first = runs[0].as_ref().unwrap();
            for r in &runs[1..] {
                let r = r.as_ref().unwrap();
                proptest::prop_assert_eq!(r["n"].data(), first["n"].data());
                proptest::prop_assert_eq!(r["s"].data(), first["s"].data());
            }
        }
    }
}
