//! Worked scheduling examples from the papers in `shared/papers/`:
//! the isl/PPCG scheduler report (loop coalescing `s += f(i, j)`, jacobi-2d,
//! seidel-2d, matmul) and Feautrier's Examples 1 and 2. Every schedule is
//! also re-checked by the legality checker and for sequentiality.

#[path = "schedule_util.rs"]
mod util;

use alphac::schedule::{
    check_schedule, is_sequential, schedule, Legality, ScheduleError, Scheduler,
};
use util::Builder;

fn legal_and_sequential(b: &Builder, sched: &alphac::schedule::Schedule) {
    match check_schedule(&b.model, sched).unwrap() {
        Legality::Legal(_) => {}
        Legality::Illegal(v) => panic!("illegal schedule: {v:?}"),
    }
    assert!(is_sequential(&b.model, sched).unwrap());
}

/// isl report Listing 15 / Examples 10, 13 and 30: `s += f(i, j)` over a
/// 10000 × 10000 square; the dependences chain consecutive instances
/// including the wrap-around `S[i, 9999] -> S[i + 1, 0]`.
fn coalescing_model(n: i64) -> Builder {
    let mut b = Builder::new(&[]);
    let s = b.stmt("S", &["i", "j"], &format!("0 <= i < {n}; 0 <= j < {n}"));
    b.dep(s, s, &["i0", "j0"], &["i", "j"], "i = i0; j = j0 + 1");
    b.dep(
        s,
        s,
        &["i0", "j0"],
        &["i", "j"],
        &format!("j0 = {}; i = i0 + 1; j = 0", n - 1),
    );
    b
}

#[test]
fn coalescing_repair_feautrier() {
    // Without the repair the first row would be 10000 i + j (it carries both
    // groups); isl §7.5.4 forces the j coefficient to zero: rows i, then j.
    let b = coalescing_model(10000);
    let sched = schedule(&b.model, Scheduler::Feautrier).unwrap();
    assert_eq!(b.rows_text(&sched, 0), vec!["i", "j"]);
    legal_and_sequential(&b, &sched);
    // Level 0 carries the wrap-around piece, level 1 the inner one.
    match check_schedule(&b.model, &sched).unwrap() {
        Legality::Legal(st) => {
            use alphac::schedule::DepStatus::Carried;
            assert_eq!(st, vec![Carried(1), Carried(0)]);
        }
        Legality::Illegal(v) => panic!("{v:?}"),
    }
    assert!(!sched.dims[0].coincident && !sched.dims[1].coincident);
}

#[test]
fn coalescing_avoided_pluto() {
    let b = coalescing_model(10000);
    let sched = schedule(&b.model, Scheduler::Pluto).unwrap();
    assert_eq!(b.rows_text(&sched, 0), vec!["i", "j"]);
    legal_and_sequential(&b, &sched);
}

#[test]
fn coalescing_small_sizes_still_legal() {
    // On a 3 × 3 square the coalescing row 3i + j is even more tempting.
    for which in [Scheduler::Feautrier, Scheduler::Pluto] {
        let b = coalescing_model(3);
        let sched = schedule(&b.model, which).unwrap();
        legal_and_sequential(&b, &sched);
        assert!(
            sched.rows[0]
                .iter()
                .all(|r| r[0].abs() <= 2 && r[1].abs() <= 2),
            "{:?}",
            sched.rows
        );
    }
}

/// Feautrier's Example 1: `a(i, i+j+1) = a(i-1, 2i-1) + a(j, 2j)`; the
/// dependence e2 cannot be carried by any first dimension, so two
/// dimensions are needed: i (carrying e1), then j (carrying the rest of e2,
/// its part with i = j).
#[test]
fn feautrier_example_1_needs_two_dimensions() {
    let mut b = Builder::new(&["N"]);
    let s = b.stmt("S", &["i", "j"], "1 <= i <= N; 1 <= j <= i");
    b.dep(
        s,
        s,
        &["i0", "j0"],
        &["i", "j"],
        "i0 = i - 1; j0 = i - 1; 2 <= i <= N; 1 <= j <= i",
    );
    b.dep(
        s,
        s,
        &["i0", "j0"],
        &["i", "j"],
        "i0 = j; j0 = j - 1; 1 <= i <= N; 2 <= j <= i",
    );
    let sched = schedule(&b.model, Scheduler::Feautrier).unwrap();
    assert_eq!(b.rows_text(&sched, 0), vec!["i", "j"]);
    legal_and_sequential(&b, &sched);
    match check_schedule(&b.model, &sched).unwrap() {
        Legality::Legal(st) => {
            use alphac::schedule::DepStatus::Carried;
            assert_eq!(st, vec![Carried(0), Carried(1)]);
        }
        Legality::Illegal(v) => panic!("{v:?}"),
    }
    // No one-dimensional schedule exists: any single row leaves a violation.
    for a in -3i64..=3 {
        for c in -3i64..=3 {
            let one = alphac::schedule::Schedule {
                rows: vec![vec![vec![a, c, 0, 0]]],
                dims: vec![Default::default()],
                budget_spent: false,
            };
            assert!(matches!(
                check_schedule(&b.model, &one).unwrap(),
                Legality::Illegal(_)
            ));
        }
    }
}

/// Feautrier's Example 2: `x(i) = x(2n - i)`, 0 <= i <= 2n. Every
/// dependence goes from the first half to the second: one dimension (i)
/// carries all of them.
#[test]
fn feautrier_example_2_one_dimension() {
    let mut b = Builder::new(&["n"]);
    let s = b.stmt("S", &["i"], "0 <= i <= 2n; n >= 1");
    b.dep(s, s, &["s"], &["t"], "s + t = 2n; s < t");
    for which in [Scheduler::Feautrier, Scheduler::Pluto] {
        let sched = schedule(&b.model, which).unwrap();
        assert_eq!(b.rows_text(&sched, 0), vec!["i"], "{which:?}");
        legal_and_sequential(&b, &sched);
        assert!(!sched.dims[0].coincident);
    }
}

/// Matrix multiplication as an augmented reduction: the accumulation
/// `S[i, j, k]` (C[i][j] += A[i][k] B[k][j]) and the completion `R[i, j]`
/// reading the accumulator after the last k.
fn matmul() -> Builder {
    let mut b = Builder::new(&["N"]);
    let s = b.stmt("S", &["i", "j", "k"], "0 <= i < N; 0 <= j < N; 0 <= k < N");
    let r = b.stmt("R", &["i", "j"], "0 <= i < N; 0 <= j < N");
    b.dep(
        s,
        s,
        &["i0", "j0", "k0"],
        &["i", "j", "k"],
        "i = i0; j = j0; k = k0 + 1",
    );
    b.dep(
        s,
        r,
        &["i0", "j0", "k0"],
        &["i", "j"],
        "i = i0; j = j0; k0 = N - 1",
    );
    b
}

#[test]
fn matmul_pluto_parallel_outer_loops() {
    let b = matmul();
    let sched = schedule(&b.model, Scheduler::Pluto).unwrap();
    legal_and_sequential(&b, &sched);
    let s = b.rows_text(&sched, 0);
    let r = b.rows_text(&sched, 1);
    assert_eq!(&s[..3], &["i", "j", "k"]);
    assert_eq!(&r[..2], &["i", "j"]);
    assert!(sched.dims[0].coincident && sched.dims[1].coincident);
    assert!(!sched.dims[2].coincident);
}

/// `examples/NAME.alpha`, parsed and checked.
fn example(name: &str) -> alphac::ir::Program {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).unwrap();
    alphac::compile::parse_program(&src).unwrap()
}

/// `examples/matmul.alpha` (`C = A B` over `P × Q × R`): the band of
/// the accumulation ends in favour of a split (its next member would have
/// distances growing with `Q`): the driver splits at once, with one band
/// search in all, where it used to search the same statements again after
/// the band's members and reach the same split. The schedule is the one
/// of the two searches.
#[test]
fn a_band_ending_in_a_split_is_not_searched_again() {
    let program = example("matmul");
    alphac::timing::start();
    let text = alphac::deps::schedule_text(&program, Scheduler::Pluto).unwrap();
    let report = alphac::timing::finish().expect("recording was started");
    let searches: usize = report
        .lines
        .iter()
        .filter(|(_, name, _, _)| *name == "band search")
        .map(|(_, _, _, n)| n)
        .sum();
    assert_eq!(searches, 1, "{report}");
    insta::assert_snapshot!(text);
}

#[test]
fn matmul_feautrier_legal() {
    let b = matmul();
    let sched = schedule(&b.model, Scheduler::Feautrier).unwrap();
    legal_and_sequential(&b, &sched);
    // The accumulation chain forces k into the first row of S.
    assert_eq!(sched.rows[0][0][2], 1, "{:?}", b.rows_text(&sched, 0));
}

/// jacobi-2d (isl report Listing 11), with all memory-based dependences of
/// the C code (flow, anti, output) as validity constraints.
fn jacobi_2d() -> Builder {
    let mut b = Builder::new(&["T", "N"]);
    let dom = "0 <= t < T; 1 <= i <= N - 2; 1 <= j <= N - 2";
    let s = b.stmt("S", &["t", "i", "j"], dom);
    let t = b.stmt("T", &["t", "i", "j"], dom);
    let nb = [(0, 0), (0, -1), (0, 1), (1, 0), (-1, 0)];
    let src = ["t0", "i0", "j0"];
    let dst = ["t", "i", "j"];
    for (di, dj) in nb {
        // T[t, i, j] reads B[i + di][j + dj] written by S[t, i + di, j + dj].
        b.dep(
            s,
            t,
            &src,
            &dst,
            &format!("t0 = t; i0 = i + {di}; j0 = j + {dj}"),
        );
        // S[t + 1, i, j] reads A[i + di][j + dj] written by T[t, ...].
        b.dep(
            t,
            s,
            &src,
            &dst,
            &format!("t = t0 + 1; i0 = i + {di}; j0 = j + {dj}"),
        );
        // Anti: T[t] reads B[i+di][j+dj]; S[t + 1] overwrites it.
        b.dep(
            t,
            s,
            &src,
            &dst,
            &format!("t = t0 + 1; i = i0 + {di}; j = j0 + {dj}"),
        );
        // Anti: S[t] reads A[i+di][j+dj]; T[t] overwrites it.
        b.dep(
            s,
            t,
            &src,
            &dst,
            &format!("t = t0; i = i0 + {di}; j = j0 + {dj}"),
        );
    }
    // Output dependences.
    b.dep(s, s, &src, &dst, "t = t0 + 1; i = i0; j = j0");
    b.dep(t, t, &src, &dst, "t = t0 + 1; i = i0; j = j0");
    b
}

/// Every row in `rows` (dimension indices) weakly satisfies every
/// dependence piece on its own: the rows form a permutable band.
fn permutable(
    b: &Builder,
    sched: &alphac::schedule::Schedule,
    dims: std::ops::Range<usize>,
) -> bool {
    dims.into_iter().all(|k| {
        let one = alphac::schedule::Schedule {
            rows: sched.rows.iter().map(|r| vec![r[k].clone()]).collect(),
            dims: vec![Default::default()],
            budget_spent: false,
        };
        !matches!(
            check_schedule(&b.model, &one).unwrap(),
            Legality::Illegal(alphac::schedule::Violation { level: Some(0), .. })
        )
    })
}

#[test]
fn jacobi_2d_pluto_band() {
    // isl report (6): S → (t, 2t + i, 2t + i + j), T → (t, 2t + i + 1,
    // 2t + i + j + 1). The first two members agree. For the third, isl's
    // linear-independence rule (§6.5.6) only asks for a non-zero j
    // coefficient, and 2t + j has the same proximity bound (2) and a smaller
    // coefficient sum (objective 4 of §6.5.5) than 2t + i + j, so our
    // lexicographic ILP picks it; both are valid band members.
    let b = jacobi_2d();
    let sched = schedule(&b.model, Scheduler::Pluto).unwrap();
    legal_and_sequential(&b, &sched);
    let s = b.rows_text(&sched, 0);
    let t = b.rows_text(&sched, 1);
    assert_eq!(&s[..3], &["t", "2t + i", "2t + j"], "S: {s:?} T: {t:?}");
    assert_eq!(
        &t[..3],
        &["t", "2t + i + 1", "2t + j + 1"],
        "S: {s:?} T: {t:?}"
    );
    assert!(permutable(&b, &sched, 0..3));
    // No member is parallel (every one carries some dependence)...
    assert!(!sched.dims[0].coincident);
}

#[test]
fn jacobi_2d_feautrier() {
    // isl report (8): the standard Feautrier scheduler's first row is
    // S → 2t, T → 2t + 1; the driver's last pass writes that stride-2 row
    // as the unit row t followed by the scalar row 0 (S) or 1 (T).
    let b = jacobi_2d();
    let sched = schedule(&b.model, Scheduler::Feautrier).unwrap();
    legal_and_sequential(&b, &sched);
    assert_eq!(&b.rows_text(&sched, 0)[..2], &["t", "0"]);
    assert_eq!(&b.rows_text(&sched, 1)[..2], &["t", "1"]);
    assert!(sched.dims[1].scalar);
    // After it, S and T instances of one time step are independent except
    // for the ordering between them: the remaining rows are parallel.
    assert!(!sched.dims[0].coincident);
}

/// seidel-2d (isl report Listing 17): the in-place 9-point stencil, as
/// uniform dependences (flow, anti and output) of the C code.
fn seidel_2d() -> Builder {
    let mut b = Builder::new(&["T", "N"]);
    let s = b.stmt(
        "S",
        &["t", "i", "j"],
        "0 <= t < T; 1 <= i <= N - 2; 1 <= j <= N - 2",
    );
    let dists = [
        (0, 0, 1),
        (0, 1, -1),
        (0, 1, 0),
        (0, 1, 1),
        (1, -1, -1),
        (1, -1, 0),
        (1, -1, 1),
        (1, 0, -1),
        (1, 0, 0),
    ];
    for (dt, di, dj) in dists {
        b.dep(
            s,
            s,
            &["t0", "i0", "j0"],
            &["t", "i", "j"],
            &format!("t = t0 + {dt}; i = i0 + {di}; j = j0 + {dj}"),
        );
    }
    b
}

#[test]
fn seidel_2d_feautrier() {
    // isl report (46), (53), (57): 4t + 2i + j, then t, then i.
    let b = seidel_2d();
    let sched = schedule(&b.model, Scheduler::Feautrier).unwrap();
    legal_and_sequential(&b, &sched);
    assert_eq!(b.rows_text(&sched, 0), vec!["4t + 2i + j", "t", "i"]);
    assert!(!sched.dims[0].coincident && sched.dims[1].coincident && sched.dims[2].coincident);
}

#[test]
fn seidel_2d_pluto() {
    // Pluto without forced outer coincidence: one permutable band of three
    // skewed members (the time-tiling band of Pluto), no fallback needed.
    let b = seidel_2d();
    let sched = schedule(&b.model, Scheduler::Pluto).unwrap();
    legal_and_sequential(&b, &sched);
    assert_eq!(sched.n_dims(), 3, "{:?}", b.rows_text(&sched, 0));
    assert!(permutable(&b, &sched, 0..3), "{:?}", b.rows_text(&sched, 0));
    // The classic Pluto time-tiling hyperplanes for seidel-2d.
    assert_eq!(b.rows_text(&sched, 0), vec!["t", "t + i", "2t + i + j"]);
}

#[test]
fn cycle_is_reported() {
    // S[i] -> T[i] and T[i] -> S[i]: no schedule can order them.
    let mut b = Builder::new(&["N"]);
    let s = b.stmt("S", &["i"], "0 <= i < N");
    let t = b.stmt("T", &["i"], "0 <= i < N");
    let u = b.stmt("U", &["i"], "0 <= i < N");
    b.dep(s, t, &["a"], &["b"], "a = b");
    b.dep(t, s, &["a"], &["b"], "a = b");
    b.dep(t, u, &["a"], &["b"], "a = b");
    for which in [Scheduler::Feautrier, Scheduler::Pluto] {
        match schedule(&b.model, which) {
            Err(ScheduleError::Cycle { statements }) => assert_eq!(statements, vec!["S", "T"]),
            other => panic!("expected a cycle error, got {other:?}"),
        }
    }
}

#[test]
fn self_cycle_is_reported() {
    let mut b = Builder::new(&["N"]);
    let s = b.stmt("S", &["i"], "0 <= i < N");
    b.dep(s, s, &["a"], &["b"], "b = a + 1");
    b.dep(s, s, &["a"], &["b"], "b = a - 1");
    match schedule(&b.model, Scheduler::Feautrier) {
        Err(ScheduleError::Cycle { statements }) => assert_eq!(statements, vec!["S"]),
        other => panic!("expected a cycle error, got {other:?}"),
    }
}

#[test]
fn checker_finds_counterexamples() {
    let b = coalescing_model(4);
    // Row j alone: the wrap-around dependence goes backwards in j.
    let bad = alphac::schedule::Schedule {
        rows: vec![vec![vec![0, 1, 0], vec![1, 0, 0]]],
        dims: vec![Default::default(); 2],
        budget_spent: false,
    };
    match check_schedule(&b.model, &bad).unwrap() {
        Legality::Illegal(v) => {
            assert_eq!(v.dep, 1);
            assert_eq!(v.level, Some(0));
            assert_eq!(v.source[1], 3);
            assert_eq!(v.target, vec![v.source[0] + 1, 0]);
        }
        Legality::Legal(_) => panic!("accepted an illegal schedule"),
    }
    // Row i alone ties the inner dependence at every level.
    let tie = alphac::schedule::Schedule {
        rows: vec![vec![vec![1, 0, 0]]],
        dims: vec![Default::default()],
        budget_spent: false,
    };
    match check_schedule(&b.model, &tie).unwrap() {
        Legality::Illegal(v) => {
            assert_eq!(v.dep, 0);
            assert_eq!(v.level, None);
            assert_eq!(v.target, vec![v.source[0], v.source[1] + 1]);
        }
        Legality::Legal(_) => panic!("accepted an illegal schedule"),
    }
}

/// A statement of an imperative loop nest for memory-based dependences:
/// its original (2d+1) schedule rows and its accesses to one array (rows
/// over the iterators, parameters and constant), writes first.
struct Imp {
    rows: Vec<&'static str>,
    write: Vec<&'static str>,
    reads: Vec<Vec<&'static str>>,
}

/// Memory-based dependences (flow, anti and output) of statements
/// accessing one array: every pair of accesses of which one is a write,
/// touching the same element, source before target in the original
/// schedule, one piece per level of the original schedule.
fn memory_deps(b: &mut Builder, stmts: &[(usize, Imp)]) {
    for (s, si) in stmts {
        for (t, ti) in stmts {
            let s_names: Vec<String> = b.iters[*s].iter().map(|x| format!("{x}0")).collect();
            let t_names: Vec<String> = b.iters[*t].clone();
            let rename = |e: &str, names: &[String], orig: &[String]| -> String {
                // Rename iterators in an expression (single-letter names).
                e.chars()
                    .map(|c| {
                        let cs = c.to_string();
                        match orig.iter().position(|o| *o == cs) {
                            Some(k) => names[k].clone(),
                            None => cs,
                        }
                    })
                    .collect()
            };
            let mut s_acc: Vec<(bool, Vec<&str>)> = vec![(true, si.write.clone())];
            s_acc.extend(si.reads.iter().map(|r| (false, r.clone())));
            let mut t_acc: Vec<(bool, Vec<&str>)> = vec![(true, ti.write.clone())];
            t_acc.extend(ti.reads.iter().map(|r| (false, r.clone())));
            for (sw, sa) in &s_acc {
                for (tw, ta) in &t_acc {
                    if !sw && !tw {
                        continue;
                    }
                    for level in 0..si.rows.len() {
                        let mut cons = Vec::new();
                        for (x, y) in sa.iter().zip(ta) {
                            cons.push(format!("{} = {}", rename(x, &s_names, &b.iters[*s]), y));
                        }
                        for l in 0..level {
                            cons.push(format!(
                                "{} = {}",
                                rename(si.rows[l], &s_names, &b.iters[*s]),
                                ti.rows[l]
                            ));
                        }
                        cons.push(format!(
                            "{} < {}",
                            rename(si.rows[level], &s_names, &b.iters[*s]),
                            ti.rows[level]
                        ));
                        let sn: Vec<&str> = s_names.iter().map(|x| x.as_str()).collect();
                        let tn: Vec<&str> = t_names.iter().map(|x| x.as_str()).collect();
                        b.dep(*s, *t, &sn, &tn, &cons.join("; "));
                    }
                }
            }
        }
    }
}

/// PolyBench cholesky (isl report Listing 14), in place on one array, with
/// all memory-based dependences.
fn cholesky() -> Builder {
    let mut b = Builder::new(&["n"]);
    let a = b.stmt("A", &["i", "j", "k"], "0 <= k < j; j < i < n");
    let bb = b.stmt("B", &["i", "j"], "0 <= j < i < n");
    let c = b.stmt("C", &["i", "k"], "0 <= k < i < n");
    let d = b.stmt("D", &["i"], "0 <= i < n");
    let stmts = vec![
        (
            a,
            Imp {
                rows: vec!["i", "0", "j", "0", "k"],
                write: vec!["i", "j"],
                reads: vec![vec!["i", "j"], vec!["i", "k"], vec!["j", "k"]],
            },
        ),
        (
            bb,
            Imp {
                rows: vec!["i", "0", "j", "1", "0"],
                write: vec!["i", "j"],
                reads: vec![vec!["i", "j"], vec!["j", "j"]],
            },
        ),
        (
            c,
            Imp {
                rows: vec!["i", "1", "k", "0", "0"],
                write: vec!["i", "i"],
                reads: vec![vec!["i", "i"], vec!["i", "k"]],
            },
        ),
        (
            d,
            Imp {
                rows: vec!["i", "2", "0", "0", "0"],
                write: vec!["i", "i"],
                reads: vec![vec!["i", "i"]],
            },
        ),
    ];
    memory_deps(&mut b, &stmts);
    b
}

#[test]
fn cholesky_feautrier() {
    // isl report (27) / (73): the minimal integral Feautrier row is
    // A → i + j + k, B → i + 2j, C → 2i + k, D → 3i.
    let b = cholesky();
    let sched = schedule(&b.model, Scheduler::Feautrier).unwrap();
    legal_and_sequential(&b, &sched);
    let first: Vec<String> = (0..4).map(|s| b.rows_text(&sched, s)[0].clone()).collect();
    assert_eq!(first, vec!["i + j + k", "i + 2j", "2i + k", "3i"]);
}

#[test]
fn cholesky_pluto() {
    // isl report (79): the validity-only Pluto ILP gives the outer band
    // member i for every statement.
    let b = cholesky();
    let sched = schedule(&b.model, Scheduler::Pluto).unwrap();
    legal_and_sequential(&b, &sched);
    let first: Vec<String> = (0..4).map(|s| b.rows_text(&sched, s)[0].clone()).collect();
    assert_eq!(first, vec!["i", "i", "i", "i"]);
    assert!(permutable(&b, &sched, 0..1));
}

/// A Pluto band that runs out of its simplex work budget keeps what it
/// found (or hands over to the Feautrier steps): the schedule is still
/// legal and sequential, and records that the budget was spent. With the
/// default budget the same problems are scheduled in full.
#[test]
fn spent_band_budget_still_gives_a_legal_schedule() {
    for (name, b) in [
        ("jacobi_2d", jacobi_2d()),
        ("seidel_2d", seidel_2d()),
        ("cholesky", cholesky()),
    ] {
        let full = schedule(&b.model, Scheduler::Pluto).unwrap();
        legal_and_sequential(&b, &full);
        assert!(!full.budget_spent, "{name}: the default budget suffices");
        for work in [0, 100, 2_000] {
            let cut =
                alphac::schedule::schedule_with_budget(&b.model, Scheduler::Pluto, work).unwrap();
            legal_and_sequential(&b, &cut);
            assert!(cut.budget_spent, "{name}: budget {work} was spent");
        }
    }
}

/// The accumulation of a reduction over a single point per result (SDR's
/// prefix sum before cleanup: `B_add[i] = Σ_{j = i} A[j]`), its domain
/// `{[i, j] : j = i}` one-dimensional in two iterators, and the running
/// sum `B[i] = B[i − 1] + B_add[i]`. The band needs one row: `i` orders
/// both statements (rank 2 for the accumulation modulo `j = i`), with no
/// coefficient on `j` (which the equality determines); the completion
/// adds `j` innermost. Scheduled as if the accumulation had both
/// iterators free, the band searched for a second member independent of
/// `i` in the coefficients, e.g. `j − i`, constant on the domain.
#[test]
fn a_domain_equality_leaves_its_direction_to_the_completion() {
    let mut b = Builder::new(&["N"]);
    let acc = b.stmt("Acc", &["i", "j"], "0 <= i < N; j = i");
    let res = b.stmt("B", &["i"], "0 <= i < N");
    b.dep(acc, res, &["i0", "j0"], &["i"], "i = i0");
    b.dep(res, res, &["i0"], &["i"], "i = i0 + 1");
    let sched = schedule(&b.model, Scheduler::Pluto).unwrap();
    legal_and_sequential(&b, &sched);
    let a = b.rows_text(&sched, acc);
    let r = b.rows_text(&sched, res);
    assert_eq!(a[0], "i", "{a:?} {r:?}");
    assert_eq!(r[0], "i", "{a:?} {r:?}");
    assert_eq!(a.last().map(String::as_str), Some("j"), "{a:?} {r:?}");
    assert_eq!(sched.dims.len(), 3, "{a:?} {r:?}");
}

/// `examples/window_sum_2d.alpha` after simplification: the accumulations
/// of its window pieces live on domains with equalities (`k = 2i + 1`,
/// `l = 2j`, `i = j`). With coefficients on the iterators those equalities
/// determine, the band's rational relaxations mix `k` and `2i` with
/// fractional weights, its integer dives fail on their caps, and the
/// schedule fell back to a wavefront (`Y` at `i + j`, `O(N²)` storage for
/// its running sums) or, with the band searched over every coefficient
/// direction, to rows `2i` scanned with strides. Each statement's rows are
/// now plain: the outer level is `i` (plus a constant) for every
/// statement of the result's triangle, and no coefficient exceeds 1.
#[test]
fn window_sums_after_simplification_are_scheduled_row_by_row() {
    let program = example("window_sum_2d");
    let opt = alphac::sdr::optimize(&program, Scheduler::Pluto).unwrap();
    let text = opt.schedule.to_text();
    for line in text.lines().filter(|l| l.contains("->")) {
        let stmt = line.split('[').nth(1).unwrap_or("");
        let rows = line.split("-> [").nth(1).unwrap_or("");
        assert!(
            !rows.contains("2i") && !rows.contains("2j"),
            "strided row: {line}\n{text}"
        );
        if line.contains("{ Y") && !line.contains("_acc") {
            let first = rows.split(',').next().unwrap_or("").trim();
            assert!(
                first == "i" || first.starts_with("i + ") || first.starts_with("i - "),
                "{stmt}: {line}\n{text}"
            );
        }
    }
}

/// A band search that stops once no better member can exist
/// (`pluto::Search::better_possible`) must not stop while one can. Here
/// the first member the search meets, `i` (its branch `a_i >= 1` comes
/// first), has a distance growing with `N` (`X[i, j]` reads `X[0, j - 1]`
/// at every `i`), and a member without one, `j`, exists: the band's first
/// row is `j`, as without the test. Stopping at the first member with a
/// parametric distance gives `[i, j]`.
#[test]
fn a_member_without_parametric_distance_is_found_after_one_with() {
    let src = "affine bcast [N] -> {: N >= 1}
    inputs  A : float [N + 1];
    outputs X : float {[i, j] : 0 <= i <= N and 0 <= j <= N};
    let
        X[i, j] = case {
            {: j == 0} : A[i];
            {: j > 0} : X[0, j - 1] + 1.0;
        };
.
";
    let program = alphac::compile::parse_program(src).unwrap();
    let text = alphac::deps::schedule_text(&program, Scheduler::Pluto).unwrap();
    assert!(text.contains("{ X[i, j] -> [j, i] }"), "{text}");
}

/// A dimension is parallel (coincident) only when no dependence orders
/// any pair there. `S[i, j]` reads `S[0, j - 1]` at every `i`; under the
/// schedule `(i, j)` the piece is carried at `j` for the pairs with
/// `i = 0` and already at `i` for the others, so neither dimension is
/// parallel; under `(j, i)` every pair is carried at `j` and `i` is
/// parallel. (The flags used to look only at the level where each piece
/// ends, and called `i` parallel in `(i, j)`.)
#[test]
fn a_dimension_ordering_some_pairs_of_a_piece_is_not_parallel() {
    use alphac::schedule::check::dim_flags;
    use alphac::schedule::{DepStatus::Carried, Schedule};
    let mut b = Builder::new(&[]);
    let s = b.stmt("S", &["i", "j"], "0 <= i <= 4; 0 <= j <= 4");
    b.dep(s, s, &["i0", "j0"], &["i", "j"], "i0 = 0; j = j0 + 1");
    let flags = |rows: Vec<Vec<i64>>| {
        let sched = Schedule {
            rows: vec![rows],
            dims: vec![Default::default(); 2],
            budget_spent: false,
        };
        legal_and_sequential(&b, &sched);
        let Legality::Legal(st) = check_schedule(&b.model, &sched).unwrap() else {
            unreachable!("checked legal above")
        };
        let dims = dim_flags(&b.model, &sched, &st).unwrap();
        (st, dims.iter().map(|d| d.coincident).collect::<Vec<_>>())
    };
    // Rows over (i, j, 1).
    let (st, par) = flags(vec![vec![1, 0, 0], vec![0, 1, 0]]);
    assert_eq!(st, vec![Carried(1)]);
    assert_eq!(par, vec![false, false]);
    let (st, par) = flags(vec![vec![0, 1, 0], vec![1, 0, 0]]);
    assert_eq!(st, vec![Carried(0)]);
    assert_eq!(par, vec![false, true]);
}
