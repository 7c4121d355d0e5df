//! Storage mapping after scheduling (`codegen::storage`, issue 15).
//!
//! - A checker independent of the analysis ([`check_mapping`]): for small
//!   parameter values it enumerates every statement instance, runs them in
//!   schedule order and simulates the mapped cells; every read of a point
//!   already written must find that point's value in its cell. It rejects
//!   a deliberately wrong mapping.
//! - Unit programs: an in-place recurrence, a two-step and a three-step
//!   recurrence, a later reader at `i - 1`, a reader far later, an output.
//! - Inference programs: the mapping is legal on their optimized
//!   schedules, reduces bytes, and the JIT with mapping agrees with the
//!   JIT without it and with the interpreter.
//! - A property test on random recurrences (random shifts, random
//!   readers): JIT with mapping against the interpreter and the checker.

mod common;

use alphac::codegen::storage::{self, DimStorage, VarStorage};
use alphac::compile::{self, Compiled, Options};
use alphac::deps::{self, SystemSchedule};
use alphac::interp;
use alphac::ir::{self, StmtId, VarKind};
use alphac::poly::{BasicSet, Set, Space};
use alphac::runtime::{rng, Array, ArrayData};
use alphac::schedule::Scheduler;
use common::{all_close, Tol};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

/// A program's system `name` and the schedule the pipeline uses for it:
/// the SDR optimizer's verified one (`optimize`), else the Pluto
/// schedule of the program as written.
fn scheduled(src: &str, name: &str, optimize: bool) -> (ir::Program, usize, SystemSchedule) {
    let p = compile::parse_program(src).expect("parses");
    let (program, sched) = if optimize {
        let o = alphac::sdr::optimize(&p, Scheduler::Pluto).expect("optimizes");
        (o.program, o.schedule)
    } else {
        let s = deps::schedule_program(&p, Scheduler::Pluto).expect("schedules");
        (p, s)
    };
    let index = program
        .systems
        .iter()
        .position(|s| s.name == name)
        .expect("system");
    let s = sched.systems[index].clone();
    (program, index, s)
}

/// The integer points of a statement domain (a solver system over
/// `(iterators, parameters)`) for `params`.
fn stmt_points(st: &deps::PolyStmt, par_names: &[String], params: &[i64]) -> Vec<Vec<i64>> {
    let k = st.dims.len();
    let m = par_names.len();
    // (iterators, parameters, 1) → (parameters, iterators, 1).
    let perm = |r: &Vec<i64>| -> Vec<i64> {
        let mut out = r[k..k + m].to_vec();
        out.extend_from_slice(&r[..k]);
        out.push(r[k + m]);
        out
    };
    let space = Space::set(par_names, &st.dims);
    let b = BasicSet::from_rows(
        space,
        st.domain.eqs.iter().map(perm).collect(),
        st.domain.ineqs.iter().map(perm).collect(),
    )
    .expect("domain");
    Set::from_basic(b).points(params).expect("points")
}

/// Simulates the mapped cells of `mapped` (the storage of some variables
/// of system `index`) over every statement instance of `sched` for
/// `params`, in time order (ties: statement index). Each instance first
/// reads (each read access of a mapped variable: the point its affine
/// indices give; a coordinate that depends on an expression-local index
/// or on data takes every value of the domain), then writes (an equation
/// statement of a mapped variable writes its point into its cell). A read
/// of a point already written must find that point in its cell. Returns
/// the first violation.
fn check_mapping(
    program: &ir::Program,
    index: usize,
    sched: &SystemSchedule,
    mapped: &[VarStorage],
    params: &[i64],
) -> Result<usize, String> {
    let sys = &program.systems[index];
    let by_var: HashMap<usize, &VarStorage> = mapped.iter().map(|s| (s.var, s)).collect();
    let mut events: Vec<(Vec<i64>, usize, Vec<i64>)> = Vec::new();
    for (k, st) in sched.deps.stmts.iter().enumerate() {
        for p in stmt_points(st, &sys.params, params) {
            let mut x = p.clone();
            x.extend_from_slice(params);
            x.push(1);
            let t: Vec<i64> = sched.schedule.rows[k]
                .iter()
                .map(|r| r.iter().zip(&x).map(|(a, b)| a * b).sum())
                .collect();
            events.push((t, k, p));
        }
    }
    events.sort();
    let domains: HashMap<usize, Vec<Vec<i64>>> = by_var
        .keys()
        .map(|&v| (v, sys.vars[v].domain.points(params).expect("points")))
        .collect();
    let mut cells: HashMap<(usize, Vec<i64>), Vec<i64>> = HashMap::new();
    let mut written: HashSet<(usize, Vec<i64>)> = HashSet::new();
    let mut reads = 0;
    for (t, k, q) in &events {
        for a in sched
            .deps
            .accesses
            .iter()
            .filter(|a| a.stmt == *k && !a.write)
        {
            let Some(s) = by_var.get(&a.var) else {
                continue;
            };
            let nq = q.len();
            let coords: Vec<Option<i64>> = a
                .map
                .iter()
                .map(|f| {
                    let f = f.as_ref()?;
                    if f.dim_coeffs()[nq..].iter().any(|&c| c != 0) {
                        return None;
                    }
                    let mut pt = q.clone();
                    pt.resize(f.n_dims(), 0);
                    Some(f.eval(params, &pt).expect("eval"))
                })
                .collect();
            for p in &domains[&a.var] {
                if !coords.iter().zip(p).all(|(c, x)| c.is_none_or(|c| c == *x)) {
                    continue;
                }
                if !written.contains(&(a.var, p.clone())) {
                    continue;
                }
                reads += 1;
                let held = cells.get(&(a.var, s.cell(p)));
                if held != Some(p) {
                    return Err(format!(
                        "{} at {:?} (time {t:?}) reads {}{p:?} but cell {:?} holds {held:?}",
                        sched.deps.stmts[*k].name,
                        q,
                        s.name,
                        s.cell(p)
                    ));
                }
            }
        }
        let st = &sched.deps.stmts[*k];
        if let StmtId::Equation(v) = st.key.id {
            if let Some(s) = by_var.get(&v) {
                cells.insert((v, s.cell(q)), q.clone());
                written.insert((v, q.clone()));
            }
        }
    }
    Ok(reads)
}

/// The storage chosen for variable `name` (`None`: not mapped).
fn storage_of(
    program: &ir::Program,
    index: usize,
    sched: &SystemSchedule,
    name: &str,
) -> Option<Vec<DimStorage>> {
    storage::choose_storage(&program.systems[index], sched)
        .into_iter()
        .find(|s| s.name == name)
        .map(|s| s.dims)
}

/// Checks the chosen mapping of every variable for each parameter vector.
fn assert_legal(
    program: &ir::Program,
    index: usize,
    sched: &SystemSchedule,
    all_params: &[Vec<i64>],
) {
    let chosen = storage::choose_storage(&program.systems[index], sched);
    for params in all_params {
        if let Err(e) = check_mapping(program, index, sched, &chosen, params) {
            panic!("params {params:?}: {e}");
        }
    }
}

/// Random inputs of system `index` for `params`.
fn inputs(
    program: &ir::Program,
    index: usize,
    params: &[i64],
    seed: u64,
) -> HashMap<String, Array> {
    let sys = &program.systems[index];
    interp::specs(sys, params, VarKind::Input)
        .expect("specs")
        .iter()
        .enumerate()
        .map(|(k, s)| {
            (
                s.name.clone(),
                Array::random(s, seed + k as u64).expect("random"),
            )
        })
        .collect()
}

fn compiled(src: &str, system: &str, optimize: bool, map_storage: bool) -> Compiled {
    compile::compile(
        src,
        &Options {
            optimize,
            system: Some(system.to_string()),
            checked: true,
            map_storage,
            ..Options::default()
        },
    )
    .unwrap_or_else(|e| panic!("{system}: {e}\n{src}"))
}

/// Outputs agree: ints and bools exactly, floats within `tol`.
fn assert_agree(what: &str, want: &HashMap<String, Array>, got: &HashMap<String, Array>, tol: Tol) {
    for (n, w) in want {
        let g = &got[n];
        match (w.data(), g.data()) {
            (ArrayData::Float(x), ArrayData::Float(y)) => {
                assert!(all_close(x, y, tol), "{what}: {n}\n{x:?}\n{y:?}")
            }
            (x, y) => assert_eq!(x, y, "{what}: {n}"),
        }
    }
}

/// The JIT with mapping against the interpreter (programs as written).
fn jit_agrees(src: &str, system: &str, params: &[i64]) -> Compiled {
    let c = compiled(src, system, false, true);
    let p = compile::parse_program(src).expect("parses");
    let index = p
        .systems
        .iter()
        .position(|s| s.name == system)
        .expect("system");
    let ins = inputs(&p, index, params, 7);
    let want = interp::run(&p, system, params, &ins, 0).expect("interp");
    let got = c.run(params, &ins, 0).expect("jit");
    assert_agree(system, &want, &got, Tol::rel(1e-12));
    c
}

const IN_PLACE: &str = "affine ip [N] -> { : N > 0 }
    inputs
        a : float [N];
    outputs
        Y : float {};
    locals
        X : float [N];
    let
        X[i] = case {
            {: i == 0} : a[i];
            {: i > 0} : X[i - 1] + a[i];
        };
        Y = X[N - 1];
.";

const FIB: &str = "affine fib [N] -> { : N > 0 }
    inputs
        a : float [N];
    outputs
        Z : float {};
    locals
        Y : float [N];
    let
        Y[i] = case {
            {: i < 2} : a[i];
            {: i >= 2} : Y[i - 1] + Y[i - 2] * 0.5;
        };
        Z = Y[N - 1];
.";

/// `Y[i] = Y[i - 1] * 0.5 + Y[i - k]` (`a[i]` for `i < k`), `Z = Y[N - 1]`:
/// `Y` needs `k` cells (system `name`).
fn k_step(name: &str, k: usize) -> String {
    format!(
        "affine {name} [N] -> {{ : N > 0 }}
    inputs
        a : float [N];
    outputs
        Z : float {{}};
    locals
        Y : float [N];
    let
        Y[i] = case {{
            {{: i < {k}}} : a[i];
            {{: i >= {k}}} : Y[i - 1] * 0.5 + Y[i - {k}];
        }};
        Z = Y[N - 1];
."
    )
}

const LATER: &str = "affine later [N] -> { : N > 0 }
    inputs
        a : float [N];
    outputs
        Z : float [N];
    locals
        X : float [N];
    let
        X[i] = case {
            {: i == 0} : a[i];
            {: i > 0} : X[i - 1] * 0.5 + a[i];
        };
        Z[i] = case {
            {: i == 0} : X[i];
            {: i > 0} : X[i] + X[i - 1];
        };
.";

const FAR: &str = "affine far [N] -> { : N > 0 }
    inputs
        a : float [N];
    outputs
        Z : float [N];
    locals
        X : float [N];
    let
        X[i] = case {
            {: i == 0} : a[i];
            {: i > 0} : X[i - 1] * 0.5 + a[i];
        };
        Z[i] = X[N - 1 - i] * 2.0;
.";

const OUTPUT: &str = "affine out [N] -> { : N > 0 }
    inputs
        a : float [N];
    outputs
        X : float [N];
    let
        X[i] = case {
            {: i == 0} : a[i];
            {: i > 0} : X[i - 1] + a[i];
        };
.";

const SMALL: [[i64; 1]; 4] = [[1], [2], [3], [6]];

fn small() -> Vec<Vec<i64>> {
    SMALL.iter().map(|p| p.to_vec()).collect()
}

#[test]
fn a_recurrence_read_only_by_itself_is_in_place() {
    let (p, k, s) = scheduled(IN_PLACE, "ip", false);
    assert_eq!(storage_of(&p, k, &s, "X"), Some(vec![DimStorage::Drop]));
    assert_legal(&p, k, &s, &small());
    let c = jit_agrees(IN_PLACE, "ip", &[9]);
    let x = &c.function().arrays[p.systems[k].var_by_name("X").unwrap()];
    assert!(x.dims.is_empty(), "X is one cell: {:?}", x.dims);
}

/// `Y[i] = Y[i-1] + Y[i-2]`: the cell of `Y[i-2]` is read by the very
/// instance that overwrites it with `Y[i]` (a statement reads before it
/// writes), so two cells suffice: mod 2, not 3.
#[test]
fn a_two_step_recurrence_keeps_two_cells() {
    let (p, k, s) = scheduled(FIB, "fib", false);
    assert_eq!(
        storage_of(&p, k, &s, "Y"),
        Some(vec![DimStorage::Modulo(2)])
    );
    assert_legal(&p, k, &s, &small());
    jit_agrees(FIB, "fib", &[10]);
}

#[test]
fn a_three_step_recurrence_keeps_three_cells() {
    let three = k_step("three", 3);
    let (p, k, s) = scheduled(&three, "three", false);
    assert_eq!(
        storage_of(&p, k, &s, "Y"),
        Some(vec![DimStorage::Modulo(3)])
    );
    assert_legal(&p, k, &s, &small());
    jit_agrees(&three, "three", &[10]);
}

/// The largest modulus, `MAX_MODULUS = 4`: the choice tests it first
/// (a conflict there means a conflict at every smaller one), then the
/// smaller ones, which all conflict here.
#[test]
fn a_four_step_recurrence_keeps_four_cells() {
    let four = k_step("four", 4);
    let (p, k, s) = scheduled(&four, "four", false);
    assert_eq!(
        storage_of(&p, k, &s, "Y"),
        Some(vec![DimStorage::Modulo(4)])
    );
    assert_legal(&p, k, &s, &small());
    jit_agrees(&four, "four", &[11]);
}

#[test]
fn a_later_reader_at_i_minus_1_needs_mod_2() {
    let (p, k, s) = scheduled(LATER, "later", false);
    assert_eq!(
        storage_of(&p, k, &s, "X"),
        Some(vec![DimStorage::Modulo(2)])
    );
    assert_legal(&p, k, &s, &small());
    jit_agrees(LATER, "later", &[8]);
}

#[test]
fn a_reader_far_later_keeps_the_variable_whole() {
    let (p, k, s) = scheduled(FAR, "far", false);
    assert_eq!(storage_of(&p, k, &s, "X"), None);
    let c = jit_agrees(FAR, "far", &[8]);
    assert!(c.storage().arrays.is_empty());
}

#[test]
fn an_output_is_never_mapped() {
    let (p, k, s) = scheduled(OUTPUT, "out", false);
    assert!(storage::choose_storage(&p.systems[k], &s).is_empty());
    let c = jit_agrees(OUTPUT, "out", &[8]);
    assert!(c.storage().arrays.is_empty());
}

/// The checker is not vacuous: it reads, and it rejects a mapping that
/// keeps one cell where two are needed (and one where the far reader
/// needs them all).
#[test]
fn the_checker_rejects_wrong_mappings() {
    let (p, k, s) = scheduled(LATER, "later", false);
    let x = p.systems[k].var_by_name("X").unwrap();
    let wrong = |dims: Vec<DimStorage>| VarStorage {
        var: x,
        name: "X".into(),
        dim_names: vec!["i0".into()],
        dims,
    };
    let reads = check_mapping(&p, k, &s, &[wrong(vec![DimStorage::Modulo(2)])], &[6]);
    assert!(reads.expect("mod 2 is legal") >= 5);
    let e = check_mapping(&p, k, &s, &[wrong(vec![DimStorage::Drop])], &[6]);
    assert!(e.is_err(), "in place must be rejected: {e:?}");
    let (p, k, s) = scheduled(FAR, "far", false);
    let e = check_mapping(&p, k, &s, &[wrong(vec![DimStorage::Modulo(4)])], &[6]);
    assert!(
        e.is_err(),
        "mod 4 must be rejected for the far reader: {e:?}"
    );
}

fn source(name: &str) -> String {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// GMM-GS (optimized, as the pipeline compiles it): the running sums,
/// forward (`S_red`: new labels before `i`) and backward (`S_red2`: old
/// labels after `i`, placed just before their reader by the scheduler's
/// late placement), and the leave-one-out count (`C_red`: the forward and
/// backward counts as one, `sdr::cleanup::sums`) are one row of K cells,
/// the mapping is legal for
/// small sizes, `emit` shows it, the bytes drop, and one sweep of the JIT
/// with mapping equals the JIT without it and the interpreter.
#[test]
fn gmm_gs_keeps_k_cells_and_runs_the_same() {
    let src = source("gmm_gs");
    let (p, k, s) = scheduled(&src, "gmm_gs", true);
    assert!(!p.systems[k].vars.iter().any(|v| v.name == "C_red2"));
    for name in ["C_red", "S_red", "S_red2"] {
        assert_eq!(
            storage_of(&p, k, &s, name),
            Some(vec![DimStorage::Keep, DimStorage::Drop]),
            "{name}"
        );
    }
    assert_legal(&p, k, &s, &[vec![1, 1], vec![5, 2], vec![7, 3]]);
    let text = compile::emit(
        &compile::parse_program(&src).unwrap(),
        "gmm_gs",
        &Options::default(),
    )
    .expect("emits");
    assert!(
        text.contains("// storage of C_red: [k, i] -> [k] (in place along i)")
            && text.contains("// storage of S_red2: [k, i] -> [k] (in place along i)"),
        "{text}"
    );
    let mapped = compiled(&src, "gmm_gs", true, true);
    let plain = compiled(&src, "gmm_gs", true, false);
    let params = [40i64, 3];
    let bytes = mapped.array_bytes(&params, 0).unwrap();
    let c_red = bytes.iter().find(|b| b.name == "C_red").unwrap();
    assert_eq!(c_red.bytes, 3 * 8);
    assert_eq!(c_red.was.as_ref().map(|w| w.1), Some(40 * 3 * 8));
    let s_red2 = bytes.iter().find(|b| b.name == "S_red2").unwrap();
    assert_eq!(s_red2.bytes, 3 * 8);
    let total: u128 = bytes.iter().map(|b| b.bytes).sum();
    let before: u128 = plain
        .array_bytes(&params, 0)
        .unwrap()
        .iter()
        .map(|b| b.bytes)
        .sum();
    assert!(total < before, "{total} >= {before}");
    // One sweep on data drawn by the generator.
    let g = compiled(&src, "gmm_gs_data", true, true);
    let data = g.run(&params, &HashMap::new(), rng::data_seed(1)).unwrap();
    let ins: HashMap<String, Array> = ["x", "z"]
        .iter()
        .map(|n| (n.to_string(), data[*n].clone()))
        .collect();
    let a = mapped.run(&params, &ins, 5).unwrap();
    let b = plain.run(&params, &ins, 5).unwrap();
    assert_agree("mapped vs unmapped", &b, &a, Tol::rel(0.0));
    let want = interp::run(mapped.program(), "gmm_gs", &params, &ins, 5).unwrap();
    assert_agree("mapped vs interpreter", &want, &a, Tol::rel_or_abs(1e-9));
}

/// LDA-GS: the three leave-one-out count tables (each the forward and the
/// backward count as one, `sdr::cleanup::sums`) are updated in place along
/// the token index (`[v, k, i] -> [v, k]`), so a sweep needs the V×K, D×K
/// and K tables and nothing of size W×K.
#[test]
fn lda_gs_count_tables_are_in_place() {
    let src = source("lda_gs");
    let (p, k, s) = scheduled(&src, "lda_gs", true);
    for gone in ["NWK_red2", "NDK_red2", "NK_red2"] {
        assert!(!p.systems[k].vars.iter().any(|v| v.name == gone), "{gone}");
    }
    for name in ["NWK_red", "NDK_red"] {
        assert_eq!(
            storage_of(&p, k, &s, name),
            Some(vec![DimStorage::Keep, DimStorage::Keep, DimStorage::Drop]),
            "{name}"
        );
    }
    assert_eq!(
        storage_of(&p, k, &s, "NK_red"),
        Some(vec![DimStorage::Keep, DimStorage::Drop]),
        "NK_red"
    );
}

/// Other programs: every chosen mapping is legal on the optimized
/// schedule for small sizes — LDA's count tables read at a data-dependent
/// word (`NWK_red[w[i], k, i]`, kept `[v, k]`), LDA-MH's (read at the
/// proposed and the current topic), the Jacobi sweep's time dimension
/// (modulo 2). (LBP's partial sums were kept modulo 4 along the slot
/// while its messages `out` were a table of their own; since `out` is
/// inlined into `msgnew`, which reads them at the neighbours' slots, they
/// stay whole.) The inference programs' JIT runs against the interpreter
/// are `tests/inference_suite.rs`, with mapping on.
#[test]
fn inference_mappings_are_legal() {
    let cases: [(&str, &[(&str, i64)]); 4] = [
        ("gmm_counts", &[("N", 6), ("K", 2)]),
        ("lda_gs", &[("W", 6), ("K", 2), ("V", 3), ("D", 2)]),
        ("lda_mh", &[("W", 6), ("K", 2), ("V", 3), ("D", 2)]),
        ("jacobi_1d", &[("T", 4), ("N", 5)]),
    ];
    for (name, values) in cases {
        let src = source(name);
        let (p, k, s) = scheduled(&src, name, true);
        let sys = &p.systems[k];
        let by: HashMap<String, i64> = values.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        let params = sys.resolve_params(&by).unwrap();
        let chosen = storage::choose_storage(sys, &s);
        assert!(!chosen.is_empty(), "{name}: nothing mapped");
        match check_mapping(&p, k, &s, &chosen, &params) {
            Ok(reads) => assert!(reads > 0, "{name}: no read checked"),
            Err(e) => panic!("{name}: {e}"),
        }
    }
}

/// `alphac run --stats` prints the bytes per array with the unmapped
/// figure for a mapped local.
#[test]
fn run_stats_prints_bytes() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_alphac"))
        .args([
            "run",
            &format!("{}/examples/gmm_counts.alpha", env!("CARGO_MANIFEST_DIR")),
            "--generate-inputs",
            "--param",
            "N=1000",
            "--param",
            "K=4",
            "--stats",
        ])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let line = err
        .lines()
        .find(|l| l.trim_start().starts_with("C_red "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains("32 B") && line.contains("was [K][N] = 32,000 B"),
        "{line}"
    );
    assert!(err.contains("total"), "{err}");
}

/// A random recurrence along `i` (1-D `X[i]`, or 2-D `X[k, i]` with rows
/// `k < K`): `X` reads itself at the given shifts (each >= 1), and the
/// output `Z` reads `X` at the given offsets (negative: earlier, positive:
/// later), or, for an offset of 9, reversed (`N - 1 - i`, or the row
/// `K - 1 - k` in 2-D).
fn recurrence(shifts: &[i64], offsets: &[i64], two_d: bool) -> String {
    let (idx, decl, ctx, pre) = if two_d {
        (
            "k, i",
            "{[k, i] : 0 <= k < K and 0 <= i < N}",
            "[N, K] -> { : N > 0 and K > 0 }",
            "k, ",
        )
    } else {
        ("i", "{[i] : 0 <= i < N}", "[N] -> { : N > 0 }", "")
    };
    let s = shifts.iter().copied().max().unwrap_or(1);
    let rec: Vec<String> = shifts
        .iter()
        .enumerate()
        .map(|(j, d)| format!("X[{pre}i - {d}] * 0.{}", j + 3))
        .collect();
    let (mut lo, mut hi) = (0i64, 0i64);
    let terms: Vec<String> = offsets
        .iter()
        .map(|&o| {
            if o == 9 {
                if two_d {
                    "X[K - 1 - k, i]".to_string()
                } else {
                    "X[N - 1 - i]".to_string()
                }
            } else {
                lo = lo.max(-o);
                hi = hi.max(o);
                if o < 0 {
                    format!("X[{pre}i - {}]", -o)
                } else {
                    format!("X[{pre}i + {o}]")
                }
            }
        })
        .collect();
    let z = if lo == 0 && hi == 0 {
        format!("{} + a[{idx}]", terms.join(" + "))
    } else {
        format!(
            "case {{\n            {{: {lo} <= i < N - {hi}}} : {} + a[{idx}];\n            {{: i < {lo} or i >= N - {hi}}} : a[{idx}];\n        }}",
            terms.join(" + ")
        )
    };
    format!(
        "affine rec {ctx}
    inputs
        a : float {decl};
    outputs
        Z : float {decl};
    locals
        X : float {decl};
    let
        X[{idx}] = case {{
            {{: i < {s}}} : a[{idx}] + 1.0;
            {{: i >= {s}}} : {} + a[{idx}];
        }};
        Z[{idx}] = {z};
.",
        rec.join(" + ")
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn random_recurrences_map_legally_and_run_the_same(
        shifts in proptest::collection::vec(1i64..=4, 1..=2),
        offsets in proptest::collection::vec(prop_oneof![-3i64..=2, Just(9)], 1..=2),
        two_d in any::<bool>(),
    ) {
        let src = recurrence(&shifts, &offsets, two_d);
        let params: Vec<i64> = if two_d { vec![7, 3] } else { vec![9] };
        let (p, k, s) = scheduled(&src, "rec", false);
        let chosen = storage::choose_storage(&p.systems[k], &s);
        for ps in [params.clone(), params.iter().map(|_| 2).collect()] {
            if let Err(e) = check_mapping(&p, k, &s, &chosen, &ps) {
                panic!("{e}\n{src}");
            }
        }
        let c = jit_agrees(&src, "rec", &params);
        // The pipeline applied exactly the mapping the analysis chose.
        let applied: Vec<Vec<DimStorage>> =
            c.storage().arrays.iter().map(|m| m.storage.dims.clone()).collect();
        let want: Vec<Vec<DimStorage>> = chosen.iter().map(|v| v.dims.clone()).collect();
        prop_assert_eq!(applied, want, "{}", src);
    }
}
