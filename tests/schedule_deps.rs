//! Dependence analysis and program scheduling on `.alpha` programs: the
//! example programs get legal sequential schedules (verified independently
//! here by enumerating the instance pairs of every dependence piece for
//! small parameter values), the dependence pieces agree with a brute-force
//! enumeration of reads, and a cyclic program gives the cycle error naming
//! its equations.

use alphac::deps::{analyze_system, schedule_program, DepsError, StmtKind};
use alphac::diag::SourceFile;
use alphac::ir::Program;
use alphac::poly::solver::System;
use alphac::schedule::{Schedule, Scheduler};

fn lower(name: &str, text: &str) -> Program {
    let file = SourceFile::new(name, text.to_string());
    let ast = alphac::syntax::parse(&file).unwrap_or_else(|e| panic!("{e:?}"));
    alphac::ir::lower::lower(&ast, &file).unwrap_or_else(|e| panic!("{e:?}"))
}

fn load(path: &str) -> Program {
    lower(path, &std::fs::read_to_string(path).unwrap())
}

fn satisfies(sys: &System, pt: &[i64]) -> bool {
    let val = |r: &Vec<i64>| {
        r[..pt.len()]
            .iter()
            .zip(pt)
            .map(|(a, b)| a * b)
            .sum::<i64>()
            + r[pt.len()]
    };
    sys.eqs.iter().all(|r| val(r) == 0) && sys.ineqs.iter().all(|r| val(r) >= 0)
}

fn points(d: usize, lo: i64, hi: i64) -> Vec<Vec<i64>> {
    let mut pts = vec![vec![]];
    for _ in 0..d {
        pts = pts
            .into_iter()
            .flat_map(|p| {
                (lo..=hi).map(move |v| {
                    let mut q = p.clone();
                    q.push(v);
                    q
                })
            })
            .collect();
    }
    pts
}

fn time(row: &[Vec<i64>], it: &[i64], params: &[i64]) -> Vec<i64> {
    row.iter()
        .map(|r| {
            let d = it.len();
            r[..d].iter().zip(it).map(|(a, b)| a * b).sum::<i64>()
                + r[d..d + params.len()]
                    .iter()
                    .zip(params)
                    .map(|(a, b)| a * b)
                    .sum::<i64>()
                + r[d + params.len()]
        })
        .collect()
}

/// Enumerate every dependence pair (within the domains) for the given
/// parameter values and check the schedule orders it; returns the number
/// of pairs checked.
fn brute_force(
    deps: &alphac::deps::SystemDeps,
    sched: &Schedule,
    params: &[i64],
    box_hi: i64,
) -> usize {
    let mut count = 0;
    for dep in &deps.model.deps {
        let full = deps.model.dep_with_domains(dep).unwrap();
        let ds = deps.model.statements[dep.source].n_dims;
        let dt = deps.model.statements[dep.target].n_dims;
        for s in points(ds, -1, box_hi) {
            for t in points(dt, -1, box_hi) {
                let mut pt = s.clone();
                pt.extend(&t);
                pt.extend(params);
                if !satisfies(&full, &pt) {
                    continue;
                }
                count += 1;
                let a = time(&sched.rows[dep.source], &s, params);
                let b = time(&sched.rows[dep.target], &t, params);
                assert!(
                    a < b,
                    "{} {s:?} at {a:?} -> {} {t:?} at {b:?}",
                    deps.stmts[dep.source].name,
                    deps.stmts[dep.target].name
                );
            }
        }
    }
    count
}

#[test]
fn matmul_statements_and_schedule() {
    let p = load("examples/matmul.alpha");
    let d = analyze_system(&p, 0).unwrap();
    let names: Vec<&str> = d.stmts.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["C", "C_acc1"]);
    assert_eq!(d.stmts[1].kind, StmtKind::Accumulate);
    assert_eq!(d.stmts[1].dims.len(), 3);
    // One piece: C_acc1[i, j, k] -> C[i, j].
    assert_eq!(d.model.deps.len(), 1);
    assert_eq!((d.model.deps[0].source, d.model.deps[0].target), (1, 0));
    for which in [Scheduler::Feautrier, Scheduler::Pluto] {
        let ps = schedule_program(&p, which).unwrap();
        let s = &ps.systems[0];
        let n = brute_force(&s.deps, &s.schedule, &[2, 3, 2], 3);
        assert_eq!(n, 2 * 3 * 2, "every (i, j, k) feeds C[i, j]");
        let text = ps.to_text();
        assert!(text.contains("{ C[i, j] -> ["), "{text}");
        assert!(text.contains("C_acc1[i, j, k] -> ["), "{text}");
    }
}

#[test]
fn prefix_sum_dependent_is_scheduled_in_order() {
    let p = load("examples/prefix_sum_dependent.alpha");
    for which in [Scheduler::Feautrier, Scheduler::Pluto] {
        let ps = schedule_program(&p, which).unwrap();
        let s = &ps.systems[0];
        let n = brute_force(&s.deps, &s.schedule, &[4], 4);
        assert!(n > 10, "only {n} dependence pairs");
        // B must be computed left to right: Θ_B · (+1) > 0.
        let b = p.systems[0].var_by_name("B").unwrap();
        let rows = ps.result_rows(0, b).unwrap();
        let first = rows.iter().map(|r| r[0]).find(|x| *x != 0).unwrap();
        assert!(first > 0, "{}", ps.to_text());
    }
}

#[test]
fn jacobi_1d_and_other_examples_schedule() {
    for (path, params) in [
        ("examples/jacobi_1d.alpha", vec![2, 4]),
        ("examples/prefix_sum.alpha", vec![4]),
    ] {
        let p = load(path);
        for which in [Scheduler::Feautrier, Scheduler::Pluto] {
            let ps = schedule_program(&p, which).unwrap_or_else(|e| panic!("{path}: {e}"));
            let s = &ps.systems[0];
            let n = brute_force(&s.deps, &s.schedule, &params, 4);
            assert!(n > 0, "{path}: no dependence pair");
        }
    }
}

#[test]
fn all_examples_schedule() {
    for entry in std::fs::read_dir("examples").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("alpha") {
            continue;
        }
        let p = load(path.to_str().unwrap());
        for which in [Scheduler::Feautrier, Scheduler::Pluto] {
            let ps =
                schedule_program(&p, which).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(!ps.to_text().is_empty());
        }
    }
}

/// Brute force against the analysis: for jacobi_1d with T = 2, N = 4, the
/// dependence pairs into X[t, i] (t > 0, interior) are exactly the three
/// neighbours at t - 1.
#[test]
fn jacobi_1d_pieces_match_reads() {
    let p = load("examples/jacobi_1d.alpha");
    let d = analyze_system(&p, 0).unwrap();
    let x = d.stmts.iter().position(|s| s.name == "X").unwrap();
    let params = [2i64, 4];
    let mut pairs = std::collections::BTreeSet::new();
    for dep in &d.model.deps {
        if dep.source != x || dep.target != x {
            continue;
        }
        let full = d.model.dep_with_domains(dep).unwrap();
        for s in points(2, -1, 4) {
            for t in points(2, -1, 4) {
                let mut pt = s.clone();
                pt.extend(&t);
                pt.extend(params);
                if satisfies(&full, &pt) {
                    pairs.insert((s.clone(), t.clone()));
                }
            }
        }
    }
    let mut want = std::collections::BTreeSet::new();
    for t in 1..=2i64 {
        for i in 0..4i64 {
            let srcs: Vec<i64> = if i == 0 || i == 3 {
                vec![i]
            } else {
                vec![i - 1, i, i + 1]
            };
            for si in srcs {
                want.insert((vec![t - 1, si], vec![t, i]));
            }
        }
    }
    assert_eq!(pairs, want);
}

#[test]
fn cyclic_program_names_its_equations() {
    let text = "affine cyc [N] -> { : N > 0 }
    inputs
        A : [N]
    outputs
        X : [N]
    locals
        Y : [N]
    let
        X[i] = Y[i] + A[i];
        Y[i] = X[i];
.
";
    let p = lower("cyc.alpha", text);
    for which in [Scheduler::Feautrier, Scheduler::Pluto] {
        match schedule_program(&p, which) {
            Err(DepsError::Cycle { system, equations }) => {
                assert_eq!(system, "cyc");
                assert_eq!(equations, vec!["X", "Y"]);
            }
            other => panic!("expected a cycle error, got {other:?}"),
        }
    }
}

/// The collapsed-sampler pattern: `znew[i]` reads the count table `C` at a
/// data-dependent row `z[i]` but at its own column `i`, and `C[., i]`
/// depends only on `znew[j]` for `j < i`.
const INDIRECT_COUNTS: &str = "affine r1 [N, K] -> { : N > 0 and K > 0 }
    inputs
        z : int [N];
    outputs
        znew : int [N];
    locals
        C : int {[k, i] : 0 <= k < K and 0 <= i < N};
    let
        C[k, i] = reduce(+, [j], {: 0 <= j < i} : if znew[j] == k then 1 else 0);
        znew[i] = C[z[i], i] % K;
.
";

/// An indirect read keeps its affine indices exact: the program has no
/// cycle, both schedulers order every dependence pair, and the pieces into
/// `znew[i]` from `C` are exactly `C[k, i] -> znew[i]` for every row `k`
/// (the data-dependent row is free within `C`'s domain, the column is `i`).
#[test]
fn indirect_read_keeps_affine_indices_exact() {
    let p = lower("r1.alpha", INDIRECT_COUNTS);
    let d = analyze_system(&p, 0).unwrap();
    let c = d.stmts.iter().position(|s| s.name == "C").unwrap();
    let znew = d.stmts.iter().position(|s| s.name == "znew").unwrap();
    let read = d
        .accesses
        .iter()
        .find(|a| a.stmt == znew && !a.write && !a.is_affine())
        .expect("the indirect read of C");
    assert!(read.map[0].is_none() && read.map[1].is_some());
    let params = [3i64, 2];
    let mut pairs = std::collections::BTreeSet::new();
    for dep in &d.model.deps {
        if dep.source != c || dep.target != znew {
            continue;
        }
        let full = d.model.dep_with_domains(dep).unwrap();
        for s in points(2, -1, 3) {
            for t in points(1, -1, 3) {
                let mut pt = s.clone();
                pt.extend(&t);
                pt.extend(params);
                if satisfies(&full, &pt) {
                    pairs.insert((s.clone(), t.clone()));
                }
            }
        }
    }
    let want: std::collections::BTreeSet<_> = (0..3i64)
        .flat_map(|i| (0..2i64).map(move |k| (vec![k, i], vec![i])))
        .collect();
    assert_eq!(pairs, want);
    for which in [Scheduler::Feautrier, Scheduler::Pluto] {
        let ps = schedule_program(&p, which).unwrap_or_else(|e| panic!("{which:?}: {e}"));
        let s = &ps.systems[0];
        assert!(brute_force(&s.deps, &s.schedule, &[3, 2], 3) > 0);
        assert!(brute_force(&s.deps, &s.schedule, &[4, 3], 4) > 0);
    }
}

/// Cycles through an indirect read are still found: through its affine
/// column (`C[., i]` now counts `znew[i]` itself), and through its
/// data-dependent index alone (`X[i]` may read any `Y[m]`, and `Y[m]` sums
/// `X` below `m`).
#[test]
fn real_cycles_through_indirect_reads_are_rejected() {
    let column = INDIRECT_COUNTS.replace("0 <= j < i}", "0 <= j <= i}");
    let data = "affine cyc [N] -> { : N > 0 }
    inputs
        z : int [N];
    outputs
        X : [N]
    locals
        Y : [N]
    let
        X[i] = Y[z[i]] + 1.0;
        Y[m] = reduce(+, [j], {: 0 <= j < m} : X[j]);
.
";
    for (text, system, want) in [
        (column.as_str(), "r1", vec!["C", "znew"]),
        (data, "cyc", vec!["X", "Y"]),
    ] {
        let p = lower("cyc.alpha", text);
        for which in [Scheduler::Feautrier, Scheduler::Pluto] {
            match schedule_program(&p, which) {
                Err(DepsError::Cycle {
                    system: s,
                    equations,
                }) => {
                    assert_eq!(s, system);
                    assert_eq!(equations, want);
                }
                other => panic!("expected a cycle error, got {other:?}"),
            }
        }
    }
}
