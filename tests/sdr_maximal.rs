//! Splitting reduction domains and maximal simplification of independent
//! reductions (POPL 2025), against the reference interpreter and direct
//! complexity computations.
//!
//! The pass is driven through `normalize` + `transform::simplify` with the
//! lexicographic result order (as `interp_sdr` does), so that these tests
//! do not depend on the scheduler; two small programs also go through
//! `sdr::optimize` end to end.

use alphac::diag::SourceFile;
use alphac::interp;
use alphac::ir::{print::program_to_alpha, Program, VarKind};
use alphac::poly::complexity::Complexity;
use alphac::runtime::{Array, ArrayData};
use alphac::sdr::complexity::equation_costs;
use alphac::sdr::normalize::normalize;
use alphac::sdr::split::split_equation;
use alphac::sdr::transform::{simplify, simplify_with_budget};
use alphac::sdr::{Decision, DecisionKind, LexicographicOrder};
use proptest::prelude::*;
use std::collections::HashMap;

fn lower(name: &str, text: &str) -> Program {
    let file = SourceFile::new(name, text);
    let ast = alphac::syntax::parse(&file).unwrap_or_else(|d| panic!("{name}: {d:?}"));
    alphac::ir::lower::lower(&ast, &file)
        .unwrap_or_else(|d| panic!("{name}: {}", alphac::diag::render_all(&d, &file)))
}

/// Integer-valued inputs (floats hold small integers, so sums are exact
/// and the comparison can be exact too).
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
            ArrayData::Int(v) => Array::from_data(
                &spec,
                ArrayData::Int(v.iter().map(|x| x.rem_euclid(17) - 8).collect()),
            )
            .unwrap(),
            d => Array::from_data(&spec, d).unwrap(),
        };
        out.insert(spec.name.clone(), a);
    }
    out
}

/// The transformed program computes exactly what the original computes.
fn assert_same_results(original: &Program, transformed: &Program, params: &[i64], seed: u64) {
    let ins = inputs(original, params, seed);
    let name = &original.systems[0].name;
    let a = interp::run(original, name, params, &ins, seed).unwrap();
    let b = interp::run(transformed, name, params, &ins, seed)
        .unwrap_or_else(|e| panic!("{e}\n{}", program_to_alpha(transformed)));
    assert_eq!(a.len(), b.len());
    for (var, x) in &a {
        assert_eq!(
            x.data(),
            b[var].data(),
            "output {var} differs at params {params:?}\n{}",
            program_to_alpha(transformed)
        );
    }
}

/// The cost of the whole first system: the sum of its equations' costs.
fn total(p: &Program) -> Complexity {
    let s = &p.systems[0];
    let mut acc = Complexity::new(s.params.clone(), vec![]);
    for c in equation_costs(s).unwrap() {
        acc = acc.add(&c.cost).unwrap();
    }
    acc
}

/// `a = O(b)`: every term of `a` is dominated by a term of `b`.
fn at_most(a: &Complexity, b: &Complexity) -> bool {
    a.terms
        .iter()
        .all(|t| b.terms.iter().any(|u| u.dominates(t)))
}

/// Normalize, then the reduction pass with the lexicographic order.
fn simplified(p: &Program) -> (Program, Program, Vec<Decision>) {
    let n = normalize(p).unwrap();
    let (q, d) = simplify(&n, &LexicographicOrder).unwrap();
    (n, q, d)
}

fn equation_index(p: &Program, var: &str) -> usize {
    let s = &p.systems[0];
    let v = s.var_by_name(var).unwrap();
    s.equations.iter().position(|e| e.var == v).unwrap()
}

/// Normalizes `p` and splits the equation of `var` along `h`.
fn split(p: &Program, var: &str, h: &[i64]) -> (Program, Decision) {
    let mut n = normalize(p).unwrap();
    let eq = equation_index(&n, var);
    let d = split_equation(&mut n.systems[0], eq, h).unwrap();
    (n, d)
}

// ------------------------------------------------------------ splitting

const PREFIX: &str = "affine pre [N] -> { : N >= 1 }
    inputs A : int [N];
    outputs S : int [N]; M : int [N];
    let
      S[i] = reduce(+, [j], {: 0 <= j <= i} : A[j]);
      M[i] = reduce(max, [j], {: 0 <= j <= i} : 2 * A[j] - 1);
.";

#[test]
fn split_along_the_result_is_a_case_on_the_result_domain() {
    let p = lower("pre.alpha", PREFIX);
    // body space (i, j), params [N]: h = i - 3 (i >= 3 | i <= 2): one
    // side is empty for N <= 3, including the context's edge N = 1.
    for var in ["S", "M"] {
        let (q, d) = split(&p, var, &[0, 1, 0, -3]);
        assert!(d.applied, "{d:?}");
        assert_eq!(d.kind, DecisionKind::Split);
        assert_eq!(d.reason, "result domain split (case)");
        assert!(d.detail.contains("i >= 3"), "{}", d.detail);
        let text = program_to_alpha(&q);
        assert!(text.contains(&format!("{var}_split2")), "{text}");
        for n in 1..8 {
            assert_same_results(&p, &q, &[n], 11 * n as u64);
        }
    }
}

#[test]
fn split_across_the_body_combines_the_pieces_with_the_operator() {
    let p = lower("pre.alpha", PREFIX);
    // h = 2 - j (j <= 2 | j >= 3): every slice i >= 3 meets both sides,
    // slices i <= 2 only the first; the second piece is the identity there.
    for (var, op) in [("S", " + "), ("M", "max(")] {
        let (q, d) = split(&p, var, &[0, 0, -1, 2]);
        assert!(d.applied, "{d:?}");
        assert_eq!(d.reason, "body split, pieces combined with the operator");
        let text = program_to_alpha(&q);
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{var}[i] =")))
            .unwrap();
        assert!(line.contains(op), "{line}");
        for n in 1..8 {
            assert_same_results(&p, &q, &[n], 3 + n as u64);
        }
    }
}

#[test]
fn split_with_parameters_in_the_hyperplane() {
    // h = N - 2i - j over a triangle: a slanted cut through the body
    // (not constant on the slices), sides empty for no parameter value.
    let p = lower(
        "tri.alpha",
        "affine tri [N] -> { : N >= 1 }
            inputs A : float [N];
            outputs Y : float [N];
            let Y[i] = reduce(+, [j], {: i <= j < N} : A[j] * A[j]);
        .",
    );
    let (q, d) = split(&p, "Y", &[1, -2, -1, 0]);
    assert!(d.applied, "{d:?}");
    assert_eq!(d.reason, "body split, pieces combined with the operator");
    for n in 1..9 {
        assert_same_results(&p, &q, &[n], n as u64);
    }
}

#[test]
fn trivial_splits_are_declined_and_change_nothing() {
    let p = lower("pre.alpha", PREFIX);
    let n = normalize(&p).unwrap();
    // j >= 0 holds on the whole body: the side j <= -1 is empty.
    let (q, d) = split(&p, "S", &[0, 0, 1, 0]);
    assert!(!d.applied);
    assert_eq!(d.kind, DecisionKind::Split);
    assert_eq!(program_to_alpha(&q), program_to_alpha(&n));
    // N - i - 1 >= 0 too (i < N); written with the parameter.
    let (q, d) = split(&p, "M", &[1, -1, 0, -1]);
    assert!(!d.applied);
    assert_eq!(program_to_alpha(&q), program_to_alpha(&n));
}

#[test]
fn split_pieces_still_simplify() {
    // The split program, simplified: each piece is a prefix reduction of
    // its own and the whole stays linear.
    let p = lower("pre.alpha", PREFIX);
    let (q, d) = split(&p, "M", &[0, 1, 0, -3]);
    assert!(d.applied);
    let (r, decisions) = simplify(&q, &LexicographicOrder).unwrap();
    assert!(
        decisions.iter().filter(|d| d.reuse.is_some()).count() >= 2,
        "{decisions:?}"
    );
    let n = normalize(&p).unwrap();
    assert_eq!(total(&n).to_string(), "O(N^2)");
    assert_eq!(total(&r).to_string(), "O(N)");
    for n in 1..8 {
        assert_same_results(&p, &r, &[n], n as u64);
    }
}

// ------------------------------------------------ maximal simplification

/// The example: a two-dimensional window sum over a triangle of
/// results; O(N^4) as written, O(N^2) (the size of the result) with
/// two-dimensional running sums.
#[test]
fn window_sums_over_a_triangle_reach_the_size_of_the_result() {
    let p = lower(
        "win.alpha",
        "affine win [N] -> { : N >= 0 }
            inputs X : float [2N + 2, 2N + 2];
            outputs Y : float { [i, j] : 0 <= i <= j <= N };
            let Y[i, j] = reduce(+, [k, l], {: i <= k <= 2i + 1 and j <= l <= 2j + 1} : X[k, l]);
        .",
    );
    let t = std::time::Instant::now();
    let (n, q, d) = simplified(&p);
    let elapsed = t.elapsed();
    assert_eq!(total(&n).to_string(), "O(N^4)");
    // The minimum: every element of Y is computed at least once.
    let y = &p.systems[0].vars[p.systems[0].var_by_name("Y").unwrap()].domain;
    let floor = alphac::poly::complexity::complexity(y).unwrap();
    assert_eq!(floor.to_string(), "O(N^2)");
    assert_eq!(total(&q), floor, "{d:?}");
    assert!(elapsed.as_secs() < 5, "{elapsed:?}");
    for n in 0..5 {
        assert_same_results(&p, &q, &[n], 5 + n as u64);
    }
}

/// A suffix maximum: the schedule's lexicographic order would reuse
/// `B[i - 1]`, which needs a subtraction `max` does not have; the
/// reduction is independent, so the search takes `B[i + 1]` instead.
#[test]
fn independent_reductions_may_reuse_against_the_schedule() {
    let p = lower(
        "suf.alpha",
        "affine suf [N] -> { : N >= 1 }
            inputs A : int [N];
            outputs B : int [N];
            let B[i] = reduce(max, [j], {: i <= j < N} : A[j]);
        .",
    );
    let (n, q, d) = simplified(&p);
    assert_eq!(total(&n).to_string(), "O(N^2)");
    assert_eq!(total(&q).to_string(), "O(N)");
    let top = d.iter().find(|d| d.var == "B").unwrap();
    assert_eq!(top.reuse, Some(vec![-1, 0]), "{d:?}");
    assert!(program_to_alpha(&q).contains("B[i + 1]"));
    for n in 1..9 {
        assert_same_results(&p, &q, &[n], n as u64);
    }
}

/// A suffix sum nothing reads at affine indices (an output here) has two
/// recurrences of the same cost: along the schedule (`+1`: the total,
/// then one subtraction per step) and against it (`-1`: from the empty
/// end, one addition per step). The search takes the one without a
/// removed shell: no inverse, no cancellation, no pass for the total.
#[test]
fn unread_suffix_sums_accumulate_from_their_empty_end() {
    let p = lower(
        "suf.alpha",
        "affine suf [N] -> { : N >= 1 }
            inputs A : float [N];
            outputs B : float {[i] : 0 <= i <= N};
            let B[i] = reduce(+, [j], {: i <= j < N} : A[j]);
        .",
    );
    let (n, q, d) = simplified(&p);
    assert_eq!(total(&n).to_string(), "O(N^2)");
    assert_eq!(total(&q).to_string(), "O(N)");
    let top = d.iter().find(|d| d.var == "B" && d.applied).unwrap();
    assert_eq!(top.reuse, Some(vec![-1, 0]), "{d:?}");
    let shells = top.shells.as_ref().unwrap();
    assert!(shells.subtracted.is_empty(), "{d:?}");
    let text = program_to_alpha(&q);
    assert!(text.contains("B[i + 1]"), "{text}");
    for n in 1..9 {
        assert_same_results(&p, &q, &[n], n as u64);
    }
}

/// The same suffix sum as a local read only at data-selected points
/// (CoxPH's risk sets, read at `first[i]`) is free too; read at affine
/// indices, it keeps the schedule's orientation, where a reader running
/// forward can be fused with the recurrence (GMM's leave-one-out counts).
#[test]
fn suffix_sums_read_at_affine_indices_keep_the_schedules_direction() {
    let program = |read: &str| {
        format!(
            "affine suf [N] -> {{ : N >= 1 }}
                inputs A : float [N]; p : int [N];
                outputs C : float [N];
                locals B : float {{[i] : 0 <= i <= N}};
                let
                  B[i] = reduce(+, [j], {{: i <= j < N}} : A[j]);
                  C[i] = {read};
            ."
        )
    };
    for (read, reuse) in [
        ("B[(p[i] * p[i]) % N] + 1.0", vec![-1, 0]),
        ("B[i] + 1.0", vec![1, 0]),
    ] {
        let p = lower("suf.alpha", &program(read));
        let (_, q, d) = simplified(&p);
        let top = d.iter().find(|d| d.var == "B" && d.applied).unwrap();
        assert_eq!(top.reuse, Some(reuse.clone()), "{read}: {d:?}");
        let shells = top.shells.as_ref().unwrap();
        assert_eq!(shells.subtracted.is_empty(), reuse[0] < 0, "{read}: {d:?}");
        assert_eq!(total(&q).to_string(), "O(N)", "{read}");
        for n in 1..9 {
            assert_same_results(&p, &q, &[n], n as u64);
        }
    }
}

/// `max` over `j >= max(i, N - i)`: the active lower bound decreases with
/// `i` below `N/2` and increases above it, so each direction needs a
/// subtraction on one half. Splitting the results at `2i = N` (through the
/// vertex where the two facets meet, along the projection) lets each half
/// reuse in its own direction: O(N) instead of O(N^2).
#[test]
fn a_face_without_a_single_direction_is_split() {
    let p = lower(
        "vee.alpha",
        "affine vee [N] -> { : N >= 1 }
            inputs A : int [N + 1];
            outputs B : int [N + 1];
            let B[i] = reduce(max, [j], {: i <= j <= N and N - i <= j} : A[j]);
        .",
    );
    let (n, q, d) = simplified(&p);
    assert_eq!(total(&n).to_string(), "O(N^2)");
    assert_eq!(total(&q).to_string(), "O(N)");
    let s = d
        .iter()
        .find(|d| d.kind == DecisionKind::Split && d.applied)
        .unwrap_or_else(|| panic!("{d:?}"));
    assert_eq!(s.var, "B");
    assert!(s.detail.contains("2i <= N"), "{}", s.detail);
    let mut reuses: Vec<Vec<i64>> = d.iter().filter_map(|d| d.reuse.clone()).collect();
    reuses.sort();
    assert_eq!(reuses, vec![vec![-1, 0], vec![1, 0]]);
    for n in 1..10 {
        assert_same_results(&p, &q, &[n], 7 * n as u64);
    }
}

/// The mirror image, with upper bounds: `j <= min(2i, N)` and `j >= 2i - N`.
#[test]
fn a_window_sliding_at_twice_the_speed_is_split_in_two() {
    let p = lower(
        "fast.alpha",
        "affine fast [N] -> { : N >= 1 }
            inputs A : int [N + 1];
            outputs B : int [N + 1];
            let B[i] = reduce(min, [j], {: 0 <= j <= N and 2i - N <= j <= 2i} : A[j] + 1);
        .",
    );
    let (n, q, d) = simplified(&p);
    assert_eq!(total(&n).to_string(), "O(N^2)");
    assert_eq!(total(&q).to_string(), "O(N)", "{d:?}");
    assert!(d.iter().any(|d| d.kind == DecisionKind::Split && d.applied));
    for n in 1..10 {
        assert_same_results(&p, &q, &[n], 3 * n as u64);
    }
}

/// A diamond of results `|k − i| <= j`, `k <= 2N − i − j`: each of the
/// four facets needs a subtraction in one of the two reuse directions, so
/// no direction suits the whole body; two nested splits of the results
/// (`j <= i`, then `j <= N − i`) give four quadrants, each with a
/// direction of its own. O(N^3) -> O(N^2).
const DIAMOND: &str = "affine dia [N] -> { : N >= 1 }
    inputs A : int [N + 1];
    outputs B : int [N + 1, N + 1];
    let B[i, j] = reduce(max, [k], {: 0 <= k <= N and i - j <= k <= i + j and j - i <= k <= 2N - i - j} : A[k]);
.";

#[test]
fn a_diamond_is_split_twice() {
    let p = lower("dia.alpha", DIAMOND);
    let (n, q, d) = simplified(&p);
    assert_eq!(total(&n).to_string(), "O(N^3)");
    assert_eq!(total(&q).to_string(), "O(N^2)", "{d:?}");
    let splits = d
        .iter()
        .filter(|d| d.kind == DecisionKind::Split && d.applied)
        .count();
    assert!(splits >= 2, "{d:?}");
    for n in 1..7 {
        assert_same_results(&p, &q, &[n], n as u64);
    }
}

/// The budget: with room for a few evaluations only, the search keeps the
/// best program found, says so, and stays correct; with none, the
/// schedule-guided heuristic alone runs.
#[test]
fn a_spent_budget_keeps_the_best_found_and_says_so() {
    let p = lower("dia.alpha", DIAMOND);
    let n = normalize(&p).unwrap();
    for budget in [0, 1, 3, 6] {
        let (q, d) = simplify_with_budget(&n, &LexicographicOrder, budget).unwrap();
        let spent: Vec<&Decision> = d
            .iter()
            .filter(|d| d.reason.starts_with("search budget spent"))
            .collect();
        assert_eq!(spent.len(), 1, "budget {budget}: {d:?}");
        assert_eq!(spent[0].var, "B");
        assert!(at_most(&total(&q), &total(&n)));
        for n in 1..6 {
            assert_same_results(&p, &q, &[n], n as u64);
        }
    }
    // the default budget is not spent on this program
    let (_, d) = simplify(&n, &LexicographicOrder).unwrap();
    assert!(d.iter().all(|d| !d.reason.starts_with("search budget")));
    const { assert!(alphac::sdr::maximal::MAX_CANDIDATES > 6) };
}

/// A rectangle of sums with its corners moving in both directions: the
/// body and its faces are split where the active facet changes. O(N^4)
/// -> O(N^2).
#[test]
fn moving_rectangles_are_split_on_their_faces() {
    let p = lower(
        "rect.alpha",
        "affine rect [N] -> { : N >= 1 }
            inputs A : int [N + 1, N + 1];
            outputs B : int [N + 1, N + 1];
            let B[i, l] = reduce(min, [j, k], {: 0 <= j <= N and 0 <= k <= N and i <= j + k <= N + i and j - k <= l and k - j <= N - l } : A[j, k]);
        .",
    );
    let (n, q, d) = simplified(&p);
    assert_eq!(total(&n).to_string(), "O(N^4)");
    assert_eq!(total(&q).to_string(), "O(N^2)", "{d:?}");
    for n in 1..5 {
        assert_same_results(&p, &q, &[n], n as u64);
    }
}

/// Where a single direction is enough, nothing is split (ties go to fewer
/// pieces) and the schedule's direction is kept.
#[test]
fn prefix_sums_are_not_split() {
    let p = lower("pre.alpha", PREFIX);
    let (_, q, d) = simplified(&p);
    assert!(d.iter().all(|d| d.kind != DecisionKind::Split), "{d:?}");
    for var in ["S", "M"] {
        let top = d.iter().find(|d| d.var == var).unwrap();
        assert_eq!(top.reuse, Some(vec![1, 0]));
        assert_eq!(top.complexity_after.as_deref(), Some("O(N)"));
    }
    for n in 1..6 {
        assert_same_results(&p, &q, &[n], n as u64);
    }
}

/// A sliding-window maximum cannot be simplified without an inverse in any
/// direction or split: the search says so, and the program keeps its
/// values and its cost.
#[test]
fn sliding_window_max_stays_as_it_is() {
    let p = lower(
        "slide.alpha",
        "affine slide [N, W] -> { : N >= 1 and W >= 1 }
            inputs A : int [N + W];
            outputs B : int [N];
            let B[i] = reduce(max, [j], {: i <= j <= i + W} : A[j]);
        .",
    );
    let (n, q, d) = simplified(&p);
    assert_eq!(total(&q), total(&n), "{d:?}");
    assert!(d.iter().all(|d| !d.applied), "{d:?}");
    for (n, w) in [(1, 1), (4, 2), (6, 3)] {
        assert_same_results(&p, &q, &[n, w], (n + w) as u64);
    }
}

/// Dependent reductions are left to the schedule-guided heuristic: the
/// search never runs on them (no decision records a search).
#[test]
fn dependent_reductions_keep_the_schedule_guided_choice() {
    let p = lower(
        "dep.alpha",
        "affine dep [N] -> { : N > 0 }
            inputs X : int [N];
            outputs B : int [N];
            locals A : int [N];
            let
              A[i] = case { {: i == 0} : X[0]; {: i > 0} : B[i - 1] % 7 + X[i]; };
              B[i] = reduce(+, [j], {: 0 <= j <= i} : A[j]);
        .",
    );
    let (_, q, d) = simplified(&p);
    let top = d.iter().find(|d| d.var == "B").unwrap();
    assert_eq!(top.reuse, Some(vec![1, 0]));
    // The schedule chose (no search): the decision says so, and no
    // decision comes from the maximal search.
    assert!(top.detail.starts_with("dependent reduction"), "{d:?}");
    assert!(
        d.iter()
            .all(|d| d.detail.is_empty() || d.detail.starts_with("dependent reduction")),
        "{d:?}"
    );
    for n in 1..8 {
        assert_same_results(&p, &q, &[n], n as u64);
    }
}

/// End to end through `sdr::optimize` (scheduling, then verification of
/// the result's schedule): the split program and the reversed direction
/// are schedulable.
#[test]
fn optimize_schedules_split_and_reversed_programs() {
    for (name, src) in [
        (
            "vee.alpha",
            "affine vee [N] -> { : N >= 1 }
                inputs A : int [N + 1];
                outputs B : int [N + 1];
                let B[i] = reduce(max, [j], {: i <= j <= N and N - i <= j} : A[j]);
            .",
        ),
        (
            "suf.alpha",
            "affine suf [N] -> { : N >= 1 }
                inputs A : int [N];
                outputs B : int [N];
                let B[i] = reduce(max, [j], {: i <= j < N} : A[j]);
            .",
        ),
    ] {
        let p = lower(name, src);
        let o = alphac::sdr::optimize(&p, alphac::schedule::Scheduler::Pluto).unwrap();
        let report = alphac::sdr::complexity::report(&p, &o).unwrap().to_string();
        assert_eq!(
            report.lines().last().unwrap(),
            "total: O(N^2) -> O(N)",
            "{name}"
        );
        for n in 1..8 {
            assert_same_results(&p, &o.program, &[n], n as u64);
        }
    }
}

// ---------------------------------------------------------------- random

/// A random affine form `a*i + b*j + c*N + d` as text.
fn form(a: i64, b: i64, c: i64, d: i64) -> String {
    format!("{a}*i + {b}*j + {c}*N + {d}")
}

prop_compose! {
    /// Random independent reductions: one- and two-dimensional bodies over
    /// one- and two-dimensional results, two random facets besides a box,
    /// random operators and bodies.
    fn independent_reduction()(
        shape in 0usize..3,
        f1 in (-2i64..=2, -2i64..=2, -1i64..=1, -2i64..=3),
        f2 in (-2i64..=2, -2i64..=2, -1i64..=1, -2i64..=3),
        op in prop::sample::select(vec!["+", "max", "min"]),
        body in 0usize..3,
    ) -> String {
        let c1 = form(f1.0, f1.1, f1.2, f1.3);
        let c2 = form(f2.0, f2.1, f2.2, f2.3);
        match shape {
            // B[i] = ⊕_j
            0 => {
                let body = ["A[j]", "A[j] * A[j] + 1", "2 * A[N - 1 - j]"][body];
                format!("affine r [N] -> {{ : N > 0 }}
                    inputs A : int [N];
                    outputs B : int [N];
                    let B[i] = reduce({op}, [j], {{: 0 <= j < N and {c1} >= 0 and {c2} >= 0}} : {body});
                .")
            }
            // B[i] = ⊕_{j, k}
            1 => {
                let body = ["A[k]", "A[j] + A[k]", "A[k] * 3"][body];
                format!("affine r [N] -> {{ : N > 0 }}
                    inputs A : int [N];
                    outputs B : int [N];
                    let B[i] = reduce({op}, [j, k], {{: 0 <= j < N and 0 <= k <= j and {c1} >= 0 and {c2} >= 0}} : {body});
                .")
            }
            // B[i, j] = ⊕_k
            _ => {
                let body = ["A[k]", "A[k] - A[j]", "A[k] * A[k]"][body];
                format!("affine r [N] -> {{ : N > 0 }}
                    inputs A : int [N];
                    outputs B : int {{ [i, j] : 0 <= i < N and 0 <= j < N }};
                    let B[i, j] = reduce({op}, [k], {{: 0 <= k < N and {c1} + k >= 0 and {c2} - k >= 0}} : {body});
                .")
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// The simplified program equals the interpreter on the original, and
    /// its complexity is never worse than the original's.
    #[test]
    fn random_independent_reductions(src in independent_reduction(), seed in 0u64..1000) {
        let p = lower("random.alpha", &src);
        let (n, q, d) = simplified(&p);
        let (before, after) = (total(&n), total(&q));
        prop_assert!(at_most(&after, &before), "{before} -> {after}\n{src}\n{d:?}");
        for n in 1..6 {
            assert_same_results(&p, &q, &[n], seed + n as u64);
        }
    }
}
