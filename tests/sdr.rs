//! The reduction optimizer (SDR) against the reference interpreter, the
//! paper's worked cases, and re-parseability of its output.

use alphac::diag::SourceFile;
use alphac::interp;
use alphac::ir::{print::program_to_alpha, Program, VarKind};
use alphac::runtime::{Array, ArrayData, ArraySpec};
use alphac::schedule::Scheduler;
use alphac::sdr::{optimize, Optimized};
use proptest::prelude::*;
use std::collections::HashMap;

fn lower(name: &str, text: &str) -> Program {
    let file = SourceFile::new(name, text);
    let ast = alphac::syntax::parse(&file).unwrap_or_else(|d| panic!("{name}: {d:?}"));
    alphac::ir::lower::lower(&ast, &file)
        .unwrap_or_else(|d| panic!("{name}: {}", alphac::diag::render_all(&d, &file)))
}

fn example(name: &str) -> Program {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    lower(name, &std::fs::read_to_string(&path).unwrap())
}

/// Integer-valued inputs (floats hold small integers, so float sums are
/// exact and the comparison below can be exact too).
fn inputs(p: &Program, params: &[i64], seed: u64) -> HashMap<String, Array> {
    let sys = &p.systems[0];
    let mut out = HashMap::new();
    for spec in interp::specs(sys, params, VarKind::Input).unwrap() {
        let a = Array::random(&spec, seed).unwrap();
        let a = match a.into_data() {
            ArrayData::Float(v) => Array::from_data(
                &spec,
                ArrayData::Float(v.iter().map(|x| (x * 8.0).floor() - 3.0).collect()),
            )
            .unwrap(),
            d => Array::from_data(&spec, d).unwrap(),
        };
        out.insert(spec.name.clone(), a);
    }
    out
}

fn run(
    p: &Program,
    params: &[i64],
    ins: &HashMap<String, Array>,
    seed: u64,
) -> HashMap<String, Array> {
    interp::run(p, &p.systems[0].name, params, ins, seed).unwrap()
}

/// The optimized program computes exactly what the original computes.
fn assert_same_results(original: &Program, optimized: &Program, params: &[i64], seed: u64) {
    let ins = inputs(original, params, seed);
    assert_same_results_on(original, optimized, params, &ins, seed);
}

/// [`assert_same_results`] on the inputs `ins`.
fn assert_same_results_on(
    original: &Program,
    optimized: &Program,
    params: &[i64],
    ins: &HashMap<String, Array>,
    seed: u64,
) {
    let ins = ins.clone();
    let a = run(original, params, &ins, seed);
    let b = run(optimized, params, &ins, seed);
    assert_eq!(a.len(), b.len());
    for (name, x) in &a {
        assert_eq!(
            x.data(),
            b[name].data(),
            "output {name} differs at params {params:?}"
        );
    }
}

/// `alphac optimize` output must be valid `.alpha` that checks and lowers
/// to a program printing the same way.
fn assert_reparses(o: &Optimized) {
    let text = program_to_alpha(&o.program);
    let again = lower("optimized.alpha", &text);
    assert_eq!(
        program_to_alpha(&again),
        text,
        "printing the re-lowered program is a fixpoint"
    );
}

fn opt(p: &Program) -> Optimized {
    optimize(p, Scheduler::Pluto).unwrap()
}

fn reuse_of(o: &Optimized, var: &str) -> Option<Vec<i64>> {
    o.decisions
        .iter()
        .find(|d| d.var == var)
        .and_then(|d| d.reuse.clone())
}

#[test]
fn prefix_sum_reuses_the_previous_sum() {
    let p = example("prefix_sum");
    let o = opt(&p);
    assert_eq!(reuse_of(&o, "B"), Some(vec![1, 0]));
    let text = program_to_alpha(&o.program);
    assert!(text.contains("B[i - 1]"), "{text}");
    assert_reparses(&o);
    for n in 1..8 {
        assert_same_results(&p, &o.program, &[n], n as u64);
    }
}

#[test]
fn dependent_prefix_sum_chooses_the_schedule_direction() {
    // Paper Equation 4: [1, 0] keeps the program acyclic, [-1, 0] would not.
    let p = example("prefix_sum_dependent");
    let o = opt(&p);
    assert_eq!(reuse_of(&o, "B"), Some(vec![1, 0]));
    assert!(o.decisions.iter().all(|d| d.reuse != Some(vec![-1, 0])));
    // `optimize` re-schedules its result; it is acyclic.
    assert!(alphac::deps::schedule_program(&o.program, Scheduler::Pluto).is_ok());
    assert_reparses(&o);
    for n in 1..8 {
        assert_same_results(&p, &o.program, &[n], 7 + n as u64);
    }
}

#[test]
fn max_prefix_uses_no_subtraction() {
    let p = example("prefix_max");
    let o = opt(&p);
    assert_eq!(reuse_of(&o, "B"), Some(vec![1, 0]));
    let text = program_to_alpha(&o.program);
    assert!(!text.contains(" - B") && !text.contains("_sub"), "{text}");
    assert!(text.contains("max(B[i - 1]"), "{text}");
    assert_reparses(&o);
    for n in 1..8 {
        assert_same_results(&p, &o.program, &[n], n as u64);
    }
}

#[test]
fn suffix_max_cannot_reuse_against_the_boundary() {
    // B[i] = max_{i <= j < N} A[j]: the only direction without a
    // subtraction is B[i] from B[i+1]. Whatever the schedule picks, no
    // subtraction may appear and the values must agree.
    let src = "affine suffix_max [N] -> { : N > 0 }
        inputs A : int [N];
        outputs B : int [N];
        let B[i] = reduce(max, [j], {: i <= j < N} : A[j]);
    .";
    let p = lower("suffix_max.alpha", src);
    let o = opt(&p);
    let text = program_to_alpha(&o.program);
    assert!(!text.contains("_sub"), "{text}");
    assert_reparses(&o);
    for n in 1..8 {
        assert_same_results(&p, &o.program, &[n], n as u64);
    }
}

#[test]
fn segment_sum_with_two_parameters() {
    let p = example("segment_sum");
    let o = opt(&p);
    assert_eq!(reuse_of(&o, "C"), Some(vec![1, 0]));
    assert_reparses(&o);
    for n in 1..7 {
        for w in 1..5 {
            assert_same_results(&p, &o.program, &[n, w], (n * 10 + w) as u64);
        }
    }
}

#[test]
fn two_dimensional_body_recurses_on_faces() {
    let p = example("triangle_sums");
    let o = opt(&p);
    assert_eq!(reuse_of(&o, "Y"), Some(vec![1, 0, 0]));
    // the face j = i is itself simplified (a face of a face)
    assert_eq!(reuse_of(&o, "Y_add"), Some(vec![1, 1, 0]));
    assert_reparses(&o);
    for n in 1..7 {
        assert_same_results(&p, &o.program, &[n], n as u64);
    }
}

#[test]
fn gmm_leave_one_out_counts_are_incremental_and_draws_agree() {
    let p = example("gmm_counts");
    let o = opt(&p);
    let applied: Vec<_> = o.decisions.iter().filter(|d| d.reuse.is_some()).collect();
    assert_eq!(applied.len(), 2, "{:?}", o.decisions);
    // the prefix count (new labels) must reuse C[k, i-1]
    assert_eq!(reuse_of(&o, "C_red"), Some(vec![0, 1, 0]));
    assert_reparses(&o);
    for n in 1..6 {
        for k in 1..4 {
            // ints and categorical draws: exact, draw for draw; the old
            // labels in 0..k (a label out of range is an error, in both)
            let seed = (n * 7 + k) as u64;
            let mut ins = inputs(&p, &[n, k], seed);
            let labels = ins["zold"].data().clone();
            let ArrayData::Int(z) = labels else {
                panic!("int labels")
            };
            let spec = interp::specs(&p.systems[0], &[n, k], VarKind::Input).unwrap();
            let in_range = Array::from_data(
                &spec[0],
                ArrayData::Int(z.iter().map(|l| l.rem_euclid(k)).collect()),
            )
            .unwrap();
            ins.insert("zold".into(), in_range);
            assert_same_results_on(&p, &o.program, &[n, k], &ins, seed);
            if n > 1 {
                let mut bad: Vec<i64> = z.iter().map(|l| l.rem_euclid(k)).collect();
                bad[n as usize - 1] = k;
                let bad = Array::from_data(&spec[0], ArrayData::Int(bad)).unwrap();
                ins.insert("zold".into(), bad);
                let sys = &p.systems[0].name;
                for prog in [&p, &o.program] {
                    let e = interp::run(prog, sys, &[n, k], &ins, seed).unwrap_err();
                    assert!(e.to_string().contains("selection value"), "{e}");
                }
            }
        }
    }
}

#[test]
fn nothing_to_share_leaves_programs_alone() {
    for name in ["matmul", "nussinov", "jacobi_1d", "cholesky"] {
        let p = example(name);
        let o = opt(&p);
        assert!(
            o.decisions.iter().all(|d| d.reuse.is_none()),
            "{name}: {:?}",
            o.decisions
        );
        assert_reparses(&o);
    }
}

// ---------------------------------------------------------------- random

/// A random affine bound on `j` as text: `a*i + b*N + c`.
fn bound(a: i64, b: i64, c: i64) -> String {
    format!("{a}*i + {b}*N + {c}")
}

prop_compose! {
    fn reduction_program()(
        lo in (-1i64..=1, 0i64..=1, -2i64..=2),
        hi in (-1i64..=1, 0i64..=1, -2i64..=2),
        op in prop::sample::select(vec!["+", "max", "min"]),
        body in prop::sample::select(vec!["A[j]", "A[j] * A[j]", "A[j] + 1", "2 * A[j] - A[N - 1 - j]"]),
        dependent in any::<bool>(),
    ) -> String {
        let lo = bound(lo.0, lo.1, lo.2);
        let hi = bound(hi.0, hi.1, hi.2);
        if dependent {
            // (A body reading A[N - 1 - j] would make this program cyclic.)
            let body = if body.contains("N - 1") { "A[j] - 1" } else { body };
            // A feeds on earlier results (paper Equation 4 shape).
            format!("affine r [N] -> {{ : N > 0 }}
                inputs X : int [N];
                outputs B : int [N];
                locals A : int [N];
                let
                  A[i] = case {{ {{: i == 0}} : X[0]; {{: i > 0}} : B[i - 1] % 7 + X[i]; }};
                  B[i] = reduce({op}, [j], {{: {lo} <= j <= {hi} and 0 <= j <= i}} : {body});
            .")
        } else {
            format!("affine r [N] -> {{ : N > 0 }}
                inputs A : int [N];
                outputs B : int [N];
                let B[i] = reduce({op}, [j], {{: {lo} <= j <= {hi} and 0 <= j < N}} : {body});
            .")
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Random reductions (independent and dependent): the optimized
    /// program is schedulable, re-parses, and equals the original on every
    /// small parameter value.
    #[test]
    fn random_reductions_keep_their_values(src in reduction_program(), seed in 0u64..1000) {
        let p = lower("random.alpha", &src);
        let o = opt(&p);
        assert_reparses(&o);
        for n in 1..7 {
            assert_same_results(&p, &o.program, &[n], seed + n as u64);
        }
    }
}

#[allow(dead_code)]
fn spec_of(p: &Program, name: &str, params: &[i64]) -> ArraySpec {
    let sys = &p.systems[0];
    let v = sys.var_by_name(name).unwrap();
    interp::array_spec(&sys.vars[v], params).unwrap()
}

#[test]
fn reductions_of_reductions_are_normalized_and_simplified() {
    // The inner reduction is moved into a local over the outer body's
    // domain; both are then simplified, and the values do not change.
    let src = "affine nested [N] -> { : N > 0 }
        inputs A : int [N];
        outputs Y : int [N];
        let Y[i] = reduce(+, [j], {: 0 <= j <= i} : 2 * reduce(+, [k], {: 0 <= k <= j} : A[k]));
    .";
    let p = lower("nested.alpha", src);
    let o = opt(&p);
    let text = program_to_alpha(&o.program);
    // every reduction is the whole right-hand side of its own equation
    for line in text.lines().filter(|l| l.contains("reduce(")) {
        assert_eq!(line.matches("reduce(").count(), 1, "{line}");
        assert!(
            line.trim_start()
                .split(" = ")
                .nth(1)
                .unwrap()
                .starts_with("reduce("),
            "{line}"
        );
    }
    assert!(
        o.decisions.iter().filter(|d| d.reuse.is_some()).count() >= 2,
        "{:?}",
        o.decisions
    );
    assert_reparses(&o);
    for n in 1..8 {
        assert_same_results(&p, &o.program, &[n], n as u64);
    }
}

#[test]
fn non_convex_bodies_are_split_into_disjoint_pieces() {
    // j != i and j != i + 1 is a union: the sum is split in two
    // reductions, each simplified (a prefix and a suffix running sum).
    // (A gap of two points is not a hyperplane hole: `complement`, which
    // makes `j != i` alone the total minus A[i], does not apply.)
    let src = "affine loo [N] -> { : N > 0 }
        inputs A : int [N];
        outputs S : int [N];
        let S[i] = reduce(+, [j], {: 0 <= j < N and j != i and j != i + 1} : A[j]);
    .";
    let p = lower("loo.alpha", src);
    let o = opt(&p);
    assert_eq!(
        o.decisions.iter().filter(|d| d.reuse.is_some()).count(),
        2,
        "{:?}",
        o.decisions
    );
    let report = alphac::sdr::complexity::report(&p, &o).unwrap();
    assert_eq!(
        report.to_string().lines().last().unwrap(),
        "total: O(N^2) -> O(N)"
    );
    assert_reparses(&o);
    for n in 1..8 {
        assert_same_results(&p, &o.program, &[n], n as u64);
    }
}
