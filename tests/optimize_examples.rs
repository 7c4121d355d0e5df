//! The whole optimizer (`sdr::optimize`: rewrites, maximal simplification,
//! SDR, scheduling), end to end on issue 13's example programs: the
//! optimized program, run natively, equals the reference interpreter on
//! the *original* program (floats up to reassociation: 1e-9 relative or
//! absolute), and its complexity is the minimum the issue names.

mod common;

use alphac::compile::{self, Options};
use alphac::diag::SourceFile;
use alphac::interp;
use alphac::runtime::{Array, ArrayData};
use common::{all_close, Tol};
use std::collections::HashMap;

fn source(name: &str) -> String {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("example exists")
}

fn original(name: &str, text: &str) -> alphac::ir::Program {
    let src = SourceFile::new(name, text);
    let ast = alphac::syntax::parse(&src).expect("parses");
    alphac::ir::lower::lower(&ast, &src).expect("checks")
}

fn close(a: &Array, b: &Array) -> bool {
    a.shape() == b.shape()
        && match (a.data(), b.data()) {
            (ArrayData::Float(x), ArrayData::Float(y)) => all_close(x, y, Tol::rel_or_abs(1e-9)),
            (x, y) => x == y,
        }
}

/// Optimized native code against the interpreter on the original program,
/// for every parameter vector of `param_sets`; returns the complexity
/// report's totals line.
fn check(name: &str, param_sets: &[Vec<i64>]) -> String {
    let text = source(name);
    let orig = original(name, &text);
    let sys = orig.systems.last().expect("a system").clone();
    let opts = Options {
        optimize: true,
        checked: true,
        ..Options::default()
    };
    let c = compile::compile(&text, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    for (k, params) in param_sets.iter().enumerate() {
        let mut inputs = HashMap::new();
        for (vi, v) in sys.vars.iter().enumerate() {
            if v.kind == alphac::ir::VarKind::Input {
                let spec = interp::array_spec(v, params).unwrap();
                let seed = 31 + vi as u64 + 100 * k as u64;
                inputs.insert(v.name.clone(), Array::random(&spec, seed).unwrap());
            }
        }
        let want = interp::run(&orig, &sys.name, params, &inputs, 9).expect("interpreter runs");
        let got = c.run(params, &inputs, 9).expect("native code runs");
        assert_eq!(want.len(), got.len(), "{name}: outputs");
        for (n, a) in &want {
            assert!(
                close(a, &got[n]),
                "{name} params {params:?}: output {n} differs\noriginal (interp) {:?}\noptimized (jit)  {:?}",
                a.data(),
                got[n].data()
            );
        }
    }
    let report = c.complexity().expect("a complexity report").to_string();
    report
        .lines()
        .find(|l| l.starts_with("total:"))
        .expect("a totals line")
        .to_string()
}

#[test]
fn constant_sum_is_a_product_with_the_count() {
    // Sizes where the count 2i + 2 runs past N (the domain of j is not
    // limited by N: the body reads X[i] only).
    let total = check("constant_sum", &[vec![1], vec![2], vec![9]]);
    assert_eq!(total, "total: O(N^2) -> O(N)");
}

#[test]
fn constant_max_is_the_body() {
    let total = check("constant_max", &[vec![1], vec![3], vec![6]]);
    assert_eq!(total, "total: O(N^3) -> O(N^2)");
}

#[test]
fn window_sums_reach_two_dimensional_prefix_sums() {
    let total = check("window_sum_2d", &[vec![1], vec![2], vec![5]]);
    assert_eq!(total, "total: O(N^4) -> O(N^2)");
}

/// Issue 13 (compile time): the window sums' schedules, before and after
/// simplification (the latter a Pluto band search of hundreds of integer
/// lexicographic minima over 181 variables), are found within a
/// deterministic simplex work budget (tableau cells pivoted, the same on
/// every machine), without any band spending its own budget. Before the
/// search dived on one tableau per node (`poly::solver::Dive`), the
/// post-simplification schedule alone pivoted about 1.8e10 cells; at
/// 1f2937c the whole optimization pivoted 1.5e8, since rows count
/// modulo the domains' equalities (ea61774) 6.1e7.
#[test]
fn window_sums_schedule_within_a_work_budget() {
    let text = source("window_sum_2d");
    let orig = original("window_sum_2d", &text);
    let (r, spent) = alphac::poly::solver::with_work_budget(WINDOW_SUMS_WORK, || {
        alphac::sdr::optimize(&orig, alphac::schedule::Scheduler::Pluto)
    });
    let opt = r.expect("optimizes");
    eprintln!("window_sum_2d: {} cells", spent.used);
    assert!(!spent.exhausted, "spent {spent:?}");
    assert!(opt.notes.is_empty(), "{:?}", opt.notes);
}

/// See [`window_sums_schedule_within_a_work_budget`].
const WINDOW_SUMS_WORK: u64 = 120_000_000;
