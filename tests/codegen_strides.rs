//! Scanning non-unimodular schedules (`codegen::scan`): schedules whose
//! chosen rows `M` have `|det M| > 1` (the statement's iterators are
//! rational functions of the time dimensions) generate code that
//! 1. executes every statement instance exactly once, and in schedule
//!    order (the loop program is instrumented: each assignment becomes a
//!    time stamp from a global clock, checked against brute-force
//!    enumeration of the statement domains and their schedule values);
//! 2. computes what the interpreter computes (JIT against `interp`).
//!
//! Schedules are either written by hand (e.g. `[i + j, i − j]`, det −2) or
//! derived from the scheduler's legal schedule `θ` as `T·θ` with `T` lower
//! triangular with a positive diagonal, applied to every statement's rows:
//! that keeps the lexicographic order of any two instances (so the result
//! is legal and sequential; the tests also verify this with the checker)
//! and multiplies `det M` by the diagonal entries of the chosen rows.

mod common;

use alphac::codegen::loop_ast::{Accumulation, Expr, ForLoop, Function, Local, Stmt};
use alphac::codegen::scan;
use alphac::compile;
use alphac::deps::{self, StmtKind, SystemSchedule};
use alphac::interp;
use alphac::ir::{self, ElemType, VarKind};
use alphac::jit::{Buffer, JitFunction};
use alphac::runtime::{Array, ArrayData, Scalar};
use alphac::schedule::{self, DimInfo, Legality, Scheduler};
use common::{all_close, close, Tol};
use proptest::prelude::*;
use std::collections::HashMap;

// ---------------------------------------------------------------------------
// Schedules.

fn pluto(prog: &ir::Program) -> SystemSchedule {
    deps::schedule_program(prog, Scheduler::Pluto)
        .expect("schedulable")
        .systems
        .remove(0)
}

/// Replaces every statement's rows by `T·rows` (`T` is `n' × n`).
fn transform(s: &SystemSchedule, t: &[Vec<i64>]) -> SystemSchedule {
    let mut out = s.clone();
    for rows in &mut out.schedule.rows {
        let w = rows.first().map_or(0, Vec::len);
        let new: Vec<Vec<i64>> = t
            .iter()
            .map(|trow| {
                (0..w)
                    .map(|c| trow.iter().zip(rows.iter()).map(|(a, r)| a * r[c]).sum())
                    .collect()
            })
            .collect();
        *rows = new;
    }
    out.schedule.dims = vec![DimInfo::default(); t.len()];
    out
}

/// Replaces the rows of statement `name` (all statements must end up with
/// the same number of rows).
fn set_rows(s: &mut SystemSchedule, name: &str, rows: Vec<Vec<i64>>) {
    let k = s
        .deps
        .stmts
        .iter()
        .position(|st| st.name == name)
        .unwrap_or_else(|| panic!("no statement {name}"));
    s.schedule.dims = vec![DimInfo::default(); rows.len()];
    s.schedule.rows[k] = rows;
}

fn assert_legal(s: &SystemSchedule) {
    let l = schedule::check_schedule(&s.deps.model, &s.schedule).expect("checker runs");
    assert!(
        matches!(l, Legality::Legal(_)),
        "illegal test schedule: {l:?}"
    );
    assert!(
        schedule::is_sequential(&s.deps.model, &s.schedule).expect("checker runs"),
        "test schedule is not sequential"
    );
}

/// `|det|` of the iterator parts of the first `d` independent rows would
/// be the old scanner's choice; this is the minimum over all choices of
/// `d` rows (brute force), to assert that a test really is strided.
fn min_abs_det(rows: &[Vec<i64>], d: usize) -> i64 {
    fn det(m: &[Vec<i64>]) -> i64 {
        if m.is_empty() {
            return 1;
        }
        let mut s = 0;
        for c in 0..m.len() {
            let minor: Vec<Vec<i64>> = m[1..]
                .iter()
                .map(|r| {
                    r.iter()
                        .enumerate()
                        .filter(|&(j, _)| j != c)
                        .map(|(_, &x)| x)
                        .collect()
                })
                .collect();
            let sign = if c % 2 == 0 { 1 } else { -1 };
            s += sign * m[0][c] * det(&minor);
        }
        s
    }
    let n = rows.len();
    let mut best = i64::MAX;
    for mask in 0u32..(1 << n) {
        if mask.count_ones() as usize != d {
            continue;
        }
        let m: Vec<Vec<i64>> = (0..n)
            .filter(|&k| mask >> k & 1 == 1)
            .map(|k| rows[k][..d].to_vec())
            .collect();
        let v = det(&m).abs();
        if v != 0 {
            best = best.min(v);
        }
    }
    best
}

// ---------------------------------------------------------------------------
// Running.

fn offset(bx: &[(i64, i64)], p: &[i64]) -> Option<usize> {
    let mut off: i64 = 0;
    for (&(lo, ext), &x) in bx.iter().zip(p) {
        let d = x - lo;
        if d < 0 || d >= ext {
            return None;
        }
        off = off * ext + d;
    }
    usize::try_from(off).ok()
}

/// Every integer point of the box `lo ..= hi`.
fn box_points(lo: &[i64], hi: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![Vec::new()];
    for (&l, &h) in lo.iter().zip(hi) {
        let mut next = Vec::new();
        for p in &out {
            for x in l..=h {
                let mut q = p.clone();
                q.push(x);
                next.push(q);
            }
        }
        out = next;
    }
    out
}

fn jit_box_points(bx: &[(i64, i64)]) -> Vec<Vec<i64>> {
    let lo: Vec<i64> = bx.iter().map(|b| b.0).collect();
    let hi: Vec<i64> = bx.iter().map(|b| b.0 + b.1 - 1).collect();
    box_points(&lo, &hi)
}

fn inputs(sys: &ir::System, params: &[i64], seed: u64) -> HashMap<String, Array> {
    let mut m = HashMap::new();
    for (vi, v) in sys.vars.iter().enumerate() {
        if v.kind == VarKind::Input {
            let spec = interp::array_spec(v, params).expect("spec");
            let a = Array::random(&spec, seed + vi as u64).expect("random input");
            m.insert(v.name.clone(), a.with_lo(spec.lo.clone()));
        }
    }
    m
}

/// Runs the loop program `f` of `sys` (checked JIT) on `ins`; returns the
/// outputs over their domains, as `(point, value)` lists.
fn run_jit(
    f: &Function,
    sys: &ir::System,
    params: &[i64],
    ins: &HashMap<String, Array>,
) -> HashMap<String, Vec<(Vec<i64>, f64)>> {
    let jit = JitFunction::compile(f).unwrap_or_else(|e| panic!("JIT: {e}\n{}", f.to_c()));
    let boxes = jit.boxes(params).expect("boxes");
    let mut bufs = jit.zeroed_buffers(params).expect("buffers");
    for (id, v) in sys.vars.iter().enumerate() {
        if v.kind != VarKind::Input {
            continue;
        }
        let a = &ins[&v.name];
        for p in jit_box_points(&boxes[id]) {
            if !v.domain.contains(params, &p) {
                continue;
            }
            let (Some(off), Ok(src)) = (offset(&boxes[id], &p), a.offset(&p)) else {
                continue;
            };
            match (&mut bufs[id], a.data()) {
                (Buffer::Int(d), ArrayData::Int(s)) => d[off] = s[src],
                (Buffer::Float(d), ArrayData::Float(s)) => d[off] = s[src],
                (Buffer::Bool(d), ArrayData::Bool(s)) => d[off] = s[src],
                _ => panic!("input type"),
            }
        }
    }
    jit.run(params, &mut bufs)
        .unwrap_or_else(|e| panic!("run: {e}\n{}", f.to_c()));
    let mut out = HashMap::new();
    for (id, v) in sys.vars.iter().enumerate() {
        if v.kind != VarKind::Output {
            continue;
        }
        let mut vals = Vec::new();
        for p in jit_box_points(&boxes[id]) {
            if !v.domain.contains(params, &p) {
                continue;
            }
            let off = offset(&boxes[id], &p).expect("in box");
            let x = match &bufs[id] {
                Buffer::Int(d) => d[off] as f64,
                Buffer::Float(d) => d[off],
                Buffer::Bool(d) => f64::from(u8::from(d[off])),
            };
            vals.push((p, x));
        }
        out.insert(v.name.clone(), vals);
    }
    out
}

/// Floats: 1e-9 relative.
const TOL: Tol = Tol::rel(1e-9);

/// The JIT of `f` against the interpreter on `prog`, for every parameter
/// vector.
fn agree(prog: &ir::Program, f: &Function, param_sets: &[Vec<i64>]) {
    let sys = &prog.systems[0];
    for (k, params) in param_sets.iter().enumerate() {
        let ins = inputs(sys, params, 7 + 31 * k as u64);
        let want = interp::run(prog, &sys.name, params, &ins, 0)
            .unwrap_or_else(|e| panic!("interp {params:?}: {e}"));
        let got = run_jit(f, sys, params, &ins);
        assert_eq!(want.len(), got.len());
        for (name, w) in &want {
            let g = &got[name];
            assert!(!g.is_empty() || w.is_empty());
            for (p, x) in g {
                let y = match w.get(p).expect("interp value") {
                    Scalar::Int(v) => v as f64,
                    Scalar::Float(v) => v,
                    Scalar::Bool(v) => f64::from(u8::from(v)),
                };
                assert!(
                    close(*x, y, TOL),
                    "{name}{p:?} params {params:?}: jit {x} interp {y}\n{}",
                    f.to_c()
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Instrumentation: every assignment to a variable becomes a time stamp.

/// `f` with every assignment to a (non-input) variable replaced by
/// `clock = clock + 1; X[x] = clock` when `X` is in `stamp` (removed
/// otherwise), the variables made int arrays and the accumulations
/// removed.
fn stamped(f: &Function, n_vars: usize, stamp: &[usize]) -> Function {
    fn walk(s: &mut Stmt, n_vars: usize, stamp: &[usize], clock: usize) {
        match s {
            Stmt::For(ForLoop { body, .. }) | Stmt::Block(body) => {
                body.iter_mut().for_each(|b| walk(b, n_vars, stamp, clock))
            }
            Stmt::If { then, els, .. } => {
                then.iter_mut().for_each(|b| walk(b, n_vars, stamp, clock));
                els.iter_mut().for_each(|b| walk(b, n_vars, stamp, clock));
            }
            // Initializations of variables that are reductions.
            Stmt::Assign { array, .. } if *array < n_vars && !stamp.contains(array) => {
                *s = Stmt::Block(Vec::new())
            }
            Stmt::Assign { array, index, .. } if *array < n_vars => {
                let tick = Stmt::SetLocal {
                    local: clock,
                    value: Expr::bin(
                        alphac::codegen::loop_ast::BinOp::Add,
                        Expr::Local(clock),
                        Expr::Int(1),
                    ),
                };
                let set = Stmt::Assign {
                    array: *array,
                    index: index.clone(),
                    value: Expr::Local(clock),
                };
                *s = Stmt::Block(vec![tick, set]);
            }
            // Accumulations read variables (now stamps): not part of
            // this check.
            Stmt::Accumulate(Accumulation { .. }) => *s = Stmt::Block(Vec::new()),
            _ => {}
        }
    }
    let mut g = f.clone();
    g.locals.push(Local {
        name: "clock".into(),
        ty: ElemType::Int,
    });
    let clock = g.locals.len() - 1;
    for a in g.arrays.iter_mut().take(n_vars) {
        a.ty = ElemType::Int;
    }
    g.body
        .iter_mut()
        .for_each(|s| walk(s, n_vars, stamp, clock));
    g.check().expect("instrumented program is well formed");
    g
}

fn eval_row(r: &[i64], x: &[i64], params: &[i64]) -> i64 {
    let n = x.len() + params.len();
    r[..x.len()].iter().zip(x).map(|(a, b)| a * b).sum::<i64>()
        + r[x.len()..n]
            .iter()
            .zip(params)
            .map(|(a, b)| a * b)
            .sum::<i64>()
        + r[n]
}

/// Every instance of every assigning equation statement runs exactly once
/// (its variable's cell gets a stamp ≥ 1, the cells of no instance stay
/// 0, all stamps distinct), and in the lexicographic order of the schedule
/// (ties between statements in any order).
fn exactly_once_in_order(prog: &ir::Program, s: &SystemSchedule, f: &Function, params: &[i64]) {
    let sys = &prog.systems[0];
    let n_vars = sys.vars.len();
    // The assigning statements: equations whose right-hand side is not a
    // reduction (those are completed in place).
    let assigning: Vec<usize> = sys
        .equations
        .iter()
        .filter(|e| !matches!(e.expr.kind, ir::ExprKind::Reduce(_)))
        .map(|e| e.var)
        .collect();
    let g = stamped(f, n_vars, &assigning);
    let jit = JitFunction::compile(&g).unwrap_or_else(|e| panic!("JIT: {e}\n{}", g.to_c()));
    let boxes = jit.boxes(params).expect("boxes");
    let mut bufs = jit.zeroed_buffers(params).expect("buffers");
    jit.run(params, &mut bufs)
        .unwrap_or_else(|e| panic!("run: {e}\n{}", g.to_c()));
    // Per variable: (point, schedule time) of its instances.
    type Instances = Vec<(Vec<i64>, Vec<i64>)>;
    let mut expected: HashMap<usize, Instances> = HashMap::new();
    for (k, st) in s.deps.stmts.iter().enumerate() {
        if st.kind != StmtKind::Equation || !assigning.contains(&st.var) {
            continue;
        }
        let bx = &boxes[st.var];
        for p in jit_box_points(bx) {
            let inside = st.domain.ineqs.iter().all(|r| eval_row(r, &p, params) >= 0)
                && st.domain.eqs.iter().all(|r| eval_row(r, &p, params) == 0);
            if inside {
                let theta: Vec<i64> = s.schedule.rows[k]
                    .iter()
                    .map(|r| eval_row(r, &p, params))
                    .collect();
                expected.entry(st.var).or_default().push((p, theta));
            }
        }
    }
    let mut timeline: Vec<(Vec<i64>, i64)> = Vec::new();
    let mut n_inst = 0;
    for &v in &assigning {
        let Buffer::Int(stamps) = &bufs[v] else {
            panic!("stamps are ints")
        };
        let inst = expected.remove(&v).unwrap_or_default();
        n_inst += inst.len();
        let mut seen = vec![false; stamps.len()];
        for (p, theta) in inst {
            let off = offset(&boxes[v], &p).expect("instance inside its array's box");
            assert!(!seen[off], "two statements claim {}{p:?}", sys.vars[v].name);
            seen[off] = true;
            let stamp = stamps[off];
            assert!(
                stamp > 0,
                "{}{p:?} (params {params:?}) never executed\n{}",
                sys.vars[v].name,
                f.to_c()
            );
            timeline.push((theta, stamp));
        }
        for (off, &st) in stamps.iter().enumerate() {
            assert!(
                seen[off] || st == 0,
                "{}: a cell outside every statement domain was written\n{}",
                sys.vars[v].name,
                f.to_c()
            );
        }
    }
    // Exactly once: the clock advanced once per instance and the stamps
    // are distinct (a re-execution would leave a gap or overwrite).
    let mut stamps: Vec<i64> = timeline.iter().map(|t| t.1).collect();
    stamps.sort_unstable();
    let want: Vec<i64> = (1..=n_inst as i64).collect();
    assert_eq!(stamps, want, "params {params:?}: executions\n{}", f.to_c());
    // In schedule order: every instance of an earlier time ran before
    // every instance of a later time (instances of different statements
    // may share a time: they are independent, in any order).
    timeline.sort();
    let mut groups: Vec<(Vec<i64>, i64, i64)> = Vec::new(); // (time, min, max stamp)
    for (theta, stamp) in timeline {
        match groups.last_mut() {
            Some(g) if g.0 == theta => {
                g.1 = g.1.min(stamp);
                g.2 = g.2.max(stamp);
            }
            _ => groups.push((theta, stamp, stamp)),
        }
    }
    for w in groups.windows(2) {
        assert!(
            w[0].2 < w[1].1,
            "params {params:?}: an instance at time {:?} ran after one at {:?}\n{}",
            w[0].0,
            w[1].0,
            f.to_c()
        );
    }
}

fn parse(src: &str) -> ir::Program {
    compile::parse_program(src).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

fn scan_of(prog: &ir::Program, s: &SystemSchedule) -> Function {
    let f = scan::scan_system(prog, 0, s).unwrap_or_else(|e| panic!("scan: {e}"));
    f.check().expect("well-formed loop program");
    f
}

/// True when some scanned statement (an accumulation, or an equation
/// whose right-hand side is not a reduction) has no unimodular choice of
/// rows: the old scanner rejected such schedules.
fn strided(prog: &ir::Program, s: &SystemSchedule) -> bool {
    let sys = &prog.systems[0];
    s.deps.stmts.iter().enumerate().any(|(k, st)| {
        let scanned = match st.kind {
            StmtKind::Accumulate => true,
            StmtKind::Equation => sys
                .equations
                .iter()
                .any(|e| e.var == st.var && !matches!(e.expr.kind, ir::ExprKind::Reduce(_))),
            _ => false,
        };
        scanned && min_abs_det(&s.schedule.rows[k], st.dims.len()) > 1
    })
}

/// Both properties for every parameter vector.
fn check_all(prog: &ir::Program, s: &SystemSchedule, param_sets: &[Vec<i64>]) -> Function {
    assert_legal(s);
    assert!(
        strided(prog, s),
        "not a strided test: {:?}",
        s.schedule.rows
    );
    let f = scan_of(prog, s);
    for p in param_sets {
        exactly_once_in_order(prog, s, &f, p);
    }
    agree(prog, &f, param_sets);
    f
}

// ---------------------------------------------------------------------------
// Programs.

const STENCIL: &str = "
affine stencil [N, M] -> { : N > 0 and M > 0 }
    inputs
        A : float [N, M];
    outputs
        X : float [N, M];
    let
        X[i, j] = case {
            {: i == 0 or j == 0} : A[i, j];
            {: i > 0 and j > 0} : X[i - 1, j] * 0.5 + X[i, j - 1] * 0.25 + A[i, j];
        };
.
";

const PLAIN: &str = "
affine plain [N, M] -> { : N > 0 and M > 0 }
    inputs
        A : int [N, M];
        B : int [M, N];
    outputs
        X : int [N, M];
    let
        X[i, j] = A[i, j] * 2 + B[j, i];
.
";

const TWO_VARS: &str = "
affine two [N] -> { : N > 1 }
    inputs
        A : int [N, N];
    outputs
        Y : int [N, N];
    locals
        X : int [N, N];
    let
        X[i, j] = case {
            {: i == 0 or j == 0} : A[i, j];
            {: i > 0 and j > 0} : X[i - 1, j] + 2 * X[i, j - 1] - A[i, j];
        };
        Y[i, j] = X[i, j] * 3 + A[j, i];
.
";

const CUBE: &str = "
affine cube [N] -> { : N > 0 }
    inputs
        A : int [N, N, N];
    outputs
        X : int [N, N, N];
    let
        X[i, j, k] = case {
            {: i == 0 or j == 0 or k == 0} : A[i, j, k];
            {: i > 0 and j > 0 and k > 0} : X[i - 1, j, k] - X[i, j - 1, k] + 2 * X[i, j, k - 1];
        };
.
";

const REDUCE: &str = "
affine red [N] -> { : N > 0 }
    inputs
        A : int [N, N];
    outputs
        S : int [N];
        T : int [N];
    let
        S[i] = reduce(+, [k], {: 0 <= k <= i} : A[i, k] * (k + 1));
        T[i] = case {
            {: i == 0} : S[i];
            {: i > 0} : T[i - 1] + reduce(max, [k], {: 0 <= k <= i} : A[k, i] - S[k]);
        };
.
";

fn params2() -> Vec<Vec<i64>> {
    vec![vec![1, 1], vec![2, 5], vec![5, 4], vec![6, 6]]
}

fn params1() -> Vec<Vec<i64>> {
    vec![vec![2], vec![3], vec![6]]
}

// ---------------------------------------------------------------------------
// Hand-written schedules.

#[test]
fn det_minus_2_diagonals() {
    let prog = parse(STENCIL);
    let mut s = pluto(&prog);
    // X_0 (boundary) and X_1 (interior): [i + j, i − j].
    let names: Vec<String> = s.deps.stmts.iter().map(|st| st.name.clone()).collect();
    for n in &names {
        set_rows(&mut s, n, vec![vec![1, 1, 0, 0, 0], vec![1, -1, 0, 0, 0]]);
    }
    assert_eq!(min_abs_det(&s.schedule.rows[0], 2), 2);
    let f = check_all(&prog, &s, &params2());
    // The integrality guard is a one-trip loop per rational iterator.
    assert!(f.loop_vars.len() > 2, "{}", f.to_c());
}

/// The JIT's interval analysis proves every affine access in bounds
/// under a strided schedule (the one-trip loops carry the statement's
/// bounding box; the interval of `(t0 + t1)/2` alone is too wide): the
/// fast, unchecked variant runs. (Reads under a `case` branch, like
/// `X[i − 1, j]` above, are not provable by that analysis under any
/// schedule.)
#[test]
fn strided_accesses_are_proven_in_bounds() {
    let prog = parse(PLAIN);
    for rows in [
        vec![vec![1, 1, 0, 0, 0], vec![1, -1, 0, 0, 0]],
        vec![vec![2, 1, 0, 0, 0], vec![1, 2, 0, 0, 0]],
    ] {
        let mut s = pluto(&prog);
        let names: Vec<String> = s.deps.stmts.iter().map(|st| st.name.clone()).collect();
        for n in &names {
            set_rows(&mut s, n, rows.clone());
        }
        let f = check_all(&prog, &s, &params2());
        let jit = JitFunction::compile(&f).expect("JIT");
        for p in params2() {
            assert!(
                jit.proves_affine_accesses(&p).expect("analysis runs"),
                "params {p:?}: accesses not proven\n{}",
                f.to_c()
            );
        }
    }
}

/// A lone statement's integrality loop is placed as soon as the time
/// dimensions it depends on are bound: with `[2i, j]`, `i = t0/2` encloses
/// the `t1` loop, which then runs only at even `t0`.
#[test]
fn integrality_loops_are_hoisted_for_a_lone_statement() {
    let prog = parse(PLAIN);
    let mut s = pluto(&prog);
    let names: Vec<String> = s.deps.stmts.iter().map(|st| st.name.clone()).collect();
    for n in &names {
        set_rows(&mut s, n, vec![vec![2, 0, 0, 0, 0], vec![0, 1, 0, 0, 0]]);
    }
    let f = check_all(&prog, &s, &params2());
    let c = f.to_c();
    let at = |needle: &str| c.find(needle).unwrap_or_else(|| panic!("{needle}?\n{c}"));
    assert!(at("for (i0 =") < at("for (t1 ="), "{c}");
}

#[test]
fn det_2_and_3() {
    let prog = parse(STENCIL);
    for (rows, det) in [
        (vec![vec![2, 1, 0, 0, 0], vec![0, 1, 0, 0, 0]], 2),
        (vec![vec![2, 1, 0, 0, 0], vec![1, 2, 0, 0, 0]], 3),
        (vec![vec![1, 2, 0, 0, 0], vec![1, -1, 0, 0, 0]], 3),
        // Parameters and constants in the rows.
        (vec![vec![3, 1, 1, 0, 2], vec![0, 2, 0, 1, -1]], 6),
    ] {
        let mut s = pluto(&prog);
        let names: Vec<String> = s.deps.stmts.iter().map(|st| st.name.clone()).collect();
        for n in &names {
            set_rows(&mut s, n, rows.clone());
        }
        assert_eq!(min_abs_det(&rows, 2), det);
        check_all(&prog, &s, &params2());
    }
}

#[test]
fn a_unimodular_choice_is_preferred() {
    let prog = parse(STENCIL);
    let mut s = pluto(&prog);
    // The first two rows have det −2; rows 0 and 2 are unimodular.
    let rows = vec![
        vec![1, 1, 0, 0, 0],
        vec![1, -1, 0, 0, 0],
        vec![1, 0, 0, 0, 0],
    ];
    let names: Vec<String> = s.deps.stmts.iter().map(|st| st.name.clone()).collect();
    for n in &names {
        set_rows(&mut s, n, rows.clone());
    }
    assert_legal(&s);
    let f = scan_of(&prog, &s);
    for p in params2() {
        exactly_once_in_order(&prog, &s, &f, &p);
    }
    agree(&prog, &f, &params2());
    // No integrality loops: only the three time loops.
    assert_eq!(f.loop_vars.len(), 3, "{}", f.to_c());
}

#[test]
fn two_statements_share_strided_loops() {
    let prog = parse(TWO_VARS);
    let base = pluto(&prog);
    // [2·θ_0, θ_0 + θ_1, θ_2, ...]: scales the first row, mixes the second.
    let n = base.schedule.n_dims();
    let t = lower_triangular(n, &[2, 1, 1, 1], &[1, 0, 0, 0]);
    let s = transform(&base, &t);
    check_all(&prog, &s, &params1());
}

#[test]
fn three_dimensional_det_2() {
    let prog = parse(CUBE);
    let mut s = pluto(&prog);
    let rows = vec![
        vec![1, 1, 0, 0, 0],
        vec![0, 1, 1, 0, 0],
        vec![1, 0, 1, 0, 0],
    ];
    assert_eq!(min_abs_det(&rows, 3), 2);
    let names: Vec<String> = s.deps.stmts.iter().map(|st| st.name.clone()).collect();
    for n in &names {
        set_rows(&mut s, n, rows.clone());
    }
    check_all(&prog, &s, &[vec![1], vec![2], vec![4]]);
}

#[test]
fn reductions_under_scaled_schedules() {
    let prog = parse(REDUCE);
    let base = pluto(&prog);
    let n = base.schedule.n_dims();
    for diag in [2, 3] {
        // [θ_0, diag·θ_1, θ_1 + θ_2, ...] (θ_0 is the Pluto schedule's
        // constant dimension here; θ_1 the reduction's outer loop).
        let t = lower_triangular(n, &[1, diag, 1, 1], &[0, 0, 1, 0, 0, 0]);
        let s = transform(&base, &t);
        check_all(&prog, &s, &params1());
    }
}

// ---------------------------------------------------------------------------
// Every example program under random legality-preserving transformations.

fn example(name: &str) -> String {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("example exists")
}

/// A lower-triangular `n × n` matrix: diagonal entries from `diag`, the
/// entries below from `below` (both cycled).
fn lower_triangular(n: usize, diag: &[i64], below: &[i64]) -> Vec<Vec<i64>> {
    let mut t = vec![vec![0; n]; n];
    let mut b = below.iter().cycle();
    for (k, row) in t.iter_mut().enumerate() {
        row[k] = diag[k % diag.len()];
        for x in row.iter_mut().take(k) {
            *x = *b.next().unwrap_or(&0);
        }
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn examples_under_scaled_schedules(
        which in 0usize..4,
        diag in proptest::collection::vec(1i64..=3, 1..4),
        below in proptest::collection::vec(-2i64..=2, 1..6),
    ) {
        let (name, params): (&str, Vec<Vec<i64>>) = match which {
            0 => ("prefix_sum", vec![vec![1], vec![5]]),
            1 => ("matmul", vec![vec![1, 1, 1], vec![2, 3, 2]]),
            2 => ("cholesky", vec![vec![1], vec![4]]),
            _ => ("triangle_sums", vec![vec![1], vec![4]]),
        };
        let src = example(name);
        let prog = parse(&src);
        let base = pluto(&prog);
        let t = lower_triangular(base.schedule.n_dims(), &diag, &below);
        let s = transform(&base, &t);
        assert_legal(&s);
        let f = scan_of(&prog, &s);
        for p in &params {
            exactly_once_in_order(&prog, &s, &f, p);
        }
        agree(&prog, &f, &params);
    }
}

/// Every example (but `gmm_counts`: categorical draws are not compiled),
/// as written and after SDR, under `[d·θ_0, θ_0 + θ_1, θ_2, ...]` for
/// `d = 2, 3`: exact execution and agreement with the interpreter. Most of
/// these schedules have no unimodular choice of rows for some statement.
#[test]
fn every_example_under_scaled_schedules() {
    let examples: [(&str, Vec<Vec<i64>>); 9] = [
        ("cholesky", vec![vec![1], vec![4]]),
        ("jacobi_1d", vec![vec![1, 3], vec![4, 7]]),
        ("matmul", vec![vec![1, 1, 1], vec![3, 4, 2]]),
        ("nussinov", vec![vec![2], vec![6]]),
        ("prefix_max", vec![vec![1], vec![5]]),
        ("prefix_sum", vec![vec![1], vec![6]]),
        ("prefix_sum_dependent", vec![vec![1], vec![6]]),
        ("segment_sum", vec![vec![1, 1], vec![6, 2], vec![4, 9]]),
        ("triangle_sums", vec![vec![1], vec![5]]),
    ];
    let mut runs = 0;
    let mut strided_runs = 0;
    for (name, params) in &examples {
        let prog0 = parse(&example(name));
        for optimize in [false, true] {
            let prog = if optimize {
                alphac::sdr::optimize(&prog0, Scheduler::Pluto)
                    .unwrap_or_else(|e| panic!("{name}: {e}"))
                    .program
            } else {
                prog0.clone()
            };
            let base = pluto(&prog);
            // Scale the outermost loop dimension by d and skew the next
            // loop dimension by it (scalar, statement-ordering dimensions
            // are left alone: scaling them changes no loop's stride).
            let loops: Vec<usize> = (0..base.schedule.n_dims())
                .filter(|&k| !base.schedule.dims[k].scalar)
                .collect();
            for d in [2, 3] {
                let n = base.schedule.n_dims();
                let mut t: Vec<Vec<i64>> = (0..n)
                    .map(|r| (0..n).map(|c| i64::from(r == c)).collect())
                    .collect();
                if let Some(&a) = loops.first() {
                    t[a][a] = d;
                    if let Some(&b) = loops.get(1) {
                        t[b][a] = 1;
                    }
                }
                let s = transform(&base, &t);
                assert_legal(&s);
                let f = scan_of(&prog, &s);
                for p in params {
                    exactly_once_in_order(&prog, &s, &f, p);
                }
                agree(&prog, &f, params);
                runs += 1;
                strided_runs += usize::from(strided(&prog, &s));
            }
        }
    }
    eprintln!("{strided_runs} of {runs} runs strided");
    assert_eq!(runs, 36);
    // At least half the runs exercise non-unimodular scanning.
    assert!(strided_runs * 2 >= runs, "{strided_runs} of {runs} strided");
}

/// Feautrier's scheduler produces non-unimodular schedules on its own
/// (e.g. `cholesky`: `L[i, j] -> [i + 4j + 1, i, 0]`, det −4; `nussinov`:
/// `S[i, j] -> [−2i + 3j + 2, i, 0]`, det −3). Every example, as written
/// and after SDR, compiled through the public API with that scheduler,
/// equals the interpreter; the scanned code runs every instance once, in
/// schedule order.
#[test]
fn feautrier_schedules_of_every_example() {
    let examples: [(&str, Vec<Vec<i64>>); 9] = [
        ("cholesky", vec![vec![1], vec![5]]),
        ("jacobi_1d", vec![vec![1, 3], vec![4, 7]]),
        ("matmul", vec![vec![1, 1, 1], vec![3, 4, 2]]),
        ("nussinov", vec![vec![2], vec![7]]),
        ("prefix_max", vec![vec![1], vec![5]]),
        ("prefix_sum", vec![vec![1], vec![6]]),
        ("prefix_sum_dependent", vec![vec![1], vec![6]]),
        ("segment_sum", vec![vec![1, 1], vec![6, 2], vec![4, 9]]),
        ("triangle_sums", vec![vec![1], vec![5]]),
    ];
    let mut strided_names = Vec::new();
    for (name, params) in &examples {
        let src = example(name);
        for optimize in [false, true] {
            let opts = compile::Options {
                optimize,
                scheduler: Scheduler::Feautrier,
                checked: true,
                ..compile::Options::default()
            };
            let c = compile::compile(&src, &opts)
                .unwrap_or_else(|e| panic!("{name} (optimize={optimize}): {e}"));
            let prog = c.program().clone();
            let sys = c.system().clone();
            let s = deps::schedule_program(&prog, Scheduler::Feautrier)
                .expect("schedulable")
                .systems
                .remove(0);
            if strided(&prog, &s) {
                strided_names.push(format!("{name}/{optimize}"));
            }
            for (k, p) in params.iter().enumerate() {
                // The scanned program itself (`c.function()` is the
                // loop-optimized one, whose register accumulators the
                // instrumentation does not model).
                exactly_once_in_order(&prog, &s, &scan_of(&prog, &s), p);
                let ins = inputs(&sys, p, 3 + k as u64);
                let want = interp::run(&prog, &sys.name, p, &ins, 0).expect("interp");
                let got = c.run(p, &ins, 0).expect("jit run");
                for (n, w) in &want {
                    let g = &got[n];
                    let vals = |a: &Array| -> Vec<f64> {
                        match a.data() {
                            ArrayData::Int(v) => v.iter().map(|&x| x as f64).collect(),
                            ArrayData::Float(v) => v.clone(),
                            ArrayData::Bool(v) => {
                                v.iter().map(|&x| f64::from(u8::from(x))).collect()
                            }
                        }
                    };
                    let (x, y) = (vals(w), vals(g));
                    assert!(
                        all_close(&x, &y, TOL),
                        "{name} (optimize={optimize}) {p:?}: {n}\ninterp {x:?}\njit {y:?}\n{}",
                        c.function().to_c()
                    );
                }
            }
        }
    }
    // A schedule level whose rows share a stride is split into a unit
    // level and a scalar one (`schedule::stride`), so only statements
    // with a non-unit coefficient among unit ones (cholesky's `2i`) still
    // need integrality loops; prefix_sum_dependent's `2i + 1` no longer
    // does.
    for must in ["cholesky/false", "nussinov/false"] {
        assert!(
            strided_names.iter().any(|n| n == must),
            "{must} is no longer strided: {strided_names:?}"
        );
    }
}
