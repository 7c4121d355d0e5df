//! The generated loops run as many iterations as the program's complexity
//! (up to a constant factor): the loop program is instrumented (a counter
//! incremented at the start of every loop body, stored into an extra
//! one-element array at the end) and run with the JIT at growing sizes.
//!
//! gmm_gs after SDR is O(N·K): its statements' domains are `N·K` points
//! (a few statements per point) plus `O(N + K)`. Scanning used to run
//! every statement under one time loop over the union of their ranges, so
//! the `t1 = 0` statements' inner loop over `N` ran at every `t1`:
//! O(N²·K) iterations.
//!
//! For every system of every example, optimized and as written: the
//! iterations per statement instance (the points of the statements'
//! domains, reduction accumulations included, counted exactly with
//! `poly`) stay below a small constant and do not grow when every size
//! parameter triples.

use alphac::codegen::loop_ast::{Affine, Array, BinOp, Dim, Expr, ForLoop, Function, Local, Stmt};
use alphac::compile::{self, Options};
use alphac::deps::{self, StmtKind, SystemSchedule};
use alphac::ir::{ElemType, VarKind};
use alphac::jit::{Buffer, JitFunction};
use alphac::poly::{BasicSet, Set, Space};
use alphac::runtime::rng;
use std::collections::HashMap;

fn source(name: &str) -> String {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("example exists")
}

/// `f` counting into a new last array `iterations[2]`: its loop
/// iterations (every entry into a loop body, data-selected one-trip
/// bindings included) at index 0, and its statement executions (array
/// assignments, accumulations, local assignments) at index 1.
fn counting(f: &Function) -> Function {
    fn walk(s: &mut Stmt, ticks: &[Stmt; 2]) {
        fn each(body: &mut Vec<Stmt>, ticks: &[Stmt; 2]) {
            let old = std::mem::take(body);
            for mut b in old {
                if matches!(
                    b,
                    Stmt::Assign { .. } | Stmt::Accumulate(_) | Stmt::SetLocal { .. }
                ) {
                    body.push(ticks[1].clone());
                }
                walk(&mut b, ticks);
                body.push(b);
            }
        }
        match s {
            // The counter is carried from iteration to iteration: the
            // instrumented loops are sequential.
            Stmt::For(ForLoop { body, parallel, .. }) => {
                *parallel = false;
                each(body, ticks);
                body.insert(0, ticks[0].clone());
            }
            Stmt::Bind(b) => {
                each(&mut b.body, ticks);
                b.body.insert(0, ticks[0].clone());
            }
            Stmt::Block(body) => each(body, ticks),
            Stmt::If { then, els, .. } => {
                each(then, ticks);
                each(els, ticks);
            }
            _ => {}
        }
    }
    let mut g = f.clone();
    let mut counters = Vec::new();
    for name in ["iterations", "executions"] {
        g.locals.push(Local {
            name: name.into(),
            ty: ElemType::Int,
        });
        counters.push(g.locals.len() - 1);
    }
    let tick = |n: usize| Stmt::SetLocal {
        local: n,
        value: Expr::bin(BinOp::Add, Expr::Local(n), Expr::Int(1)),
    };
    let ticks = [tick(counters[0]), tick(counters[1])];
    let mut top = Stmt::Block(std::mem::take(&mut g.body));
    walk(&mut top, &ticks);
    g.body = vec![top];
    g.arrays.push(Array {
        name: "iterations".into(),
        ty: ElemType::Int,
        dims: vec![Dim {
            lower: Affine::cst(0),
            extent: Affine::cst(2),
        }],
        domain: None,
    });
    for (k, &n) in counters.iter().enumerate() {
        g.body.push(Stmt::Assign {
            array: g.arrays.len() - 1,
            index: vec![Expr::Int(k as i64)],
            value: Expr::Local(n),
        });
    }
    g.check().expect("instrumented program is well formed");
    g
}

/// Loop iterations of `f` at `params` (inputs all zero: valid for gmm_gs,
/// every label 0).
fn iterations(jit: &JitFunction, params: &[i64]) -> i64 {
    let mut bufs = jit.zeroed_buffers(params).expect("buffers");
    jit.run(params, &mut bufs).expect("runs");
    match bufs.last() {
        Some(Buffer::Int(v)) => v[0],
        _ => panic!("counter array"),
    }
}

#[test]
fn gmm_gs_iterations_are_linear_in_n() {
    let src = source("gmm_gs");
    let program = compile::parse_program(&src).expect("parses");
    let options = Options {
        system: Some("gmm_gs".into()),
        ..Options::default()
    };
    let (f, _, _) = compile::loop_program(&program, &options).expect("compiles");
    let g = counting(&f);
    let jit = JitFunction::compile(&g).expect("JIT");
    let k = 3;
    let mut per_point = Vec::new();
    for n in [25i64, 100, 400] {
        // Parameters N, K and the seed.
        let it = iterations(&jit, &[n, k, 1]);
        per_point.push(it as f64 / (n * k) as f64);
    }
    // A constant number of iterations per (i, k) point, whatever N: at
    // most a few dozen (one per statement and schedule offset), and not
    // growing (O(N²·K) would grow 16-fold from N = 100 to N = 400).
    for &p in &per_point {
        assert!(p < 64.0, "iterations per point: {per_point:?}");
    }
    assert!(
        per_point[2] < 1.5 * per_point[1],
        "iterations per point grow with N: {per_point:?}"
    );
}

/// Sizes at scale 1 per system (parameters by name); scale `s` multiplies
/// each by `s`, except the ones listed as fixed.
const SIZES: &[(&str, &[(&str, i64)])] = &[
    ("cholesky", &[("N", 4)]),
    ("constant_max", &[("N", 4)]),
    ("constant_sum", &[("N", 4)]),
    ("coxph", &[("N", 12), ("K", 3)]),
    ("dmm_gs", &[("D", 6), ("A", 4), ("K", 2), ("L", 4)]),
    ("dmm_lw", &[("D", 6), ("A", 4), ("K", 2), ("L", 4)]),
    ("dmm_mh", &[("D", 6), ("A", 4), ("K", 2), ("L", 4)]),
    ("gmm_counts", &[("N", 8), ("K", 2)]),
    ("gmm_gs", &[("N", 8), ("K", 2)]),
    ("gmm_lw", &[("N", 8), ("K", 2)]),
    ("gmm_mh", &[("N", 8), ("K", 2)]),
    ("jacobi_1d", &[("T", 4), ("N", 5)]),
    ("lbp_stereo", &[("N", 10), ("K", 3), ("D", 4)]),
    ("lda_gs", &[("W", 12), ("K", 2), ("V", 3), ("D", 2)]),
    ("lda_lw", &[("W", 12), ("K", 2), ("V", 3), ("D", 2)]),
    ("lda_mh", &[("W", 12), ("K", 2), ("V", 3), ("D", 2)]),
    ("matmul", &[("P", 3), ("Q", 3), ("R", 3)]),
    ("nussinov", &[("N", 4)]),
    ("prefix_max", &[("N", 8)]),
    ("prefix_sum", &[("N", 8)]),
    ("prefix_sum_dependent", &[("N", 8)]),
    ("segment_sum", &[("N", 8), ("W", 3)]),
    ("triangle_sums", &[("N", 6)]),
    ("window_sum_2d", &[("N", 3)]),
];

/// Parameters that keep their value at every scale (the data generator
/// of `lbp_stereo` needs `D == 4`).
const FIXED: &[&str] = &["D@lbp_stereo"];

fn sizes(file: &str, scale: i64) -> HashMap<String, i64> {
    let (_, base) = SIZES
        .iter()
        .find(|(f, _)| *f == file)
        .unwrap_or_else(|| panic!("no sizes for {file}"));
    base.iter()
        .map(|(p, v)| {
            let fixed = FIXED.contains(&format!("{p}@{file}").as_str());
            (p.to_string(), if fixed { *v } else { v * scale })
        })
        .collect()
}

/// Integer points of every statement of `sched` at `params` (the system's
/// parameters in order): the instances the program's own loops execute.
/// `None` when a domain of the dependence model is unbounded: a
/// reduction's accumulation inside a `case` branch is modelled without
/// the branch's bounds (a conservative superset for the dependences; the
/// scanner restricts it to the completion's domain).
fn instances(sched: &SystemSchedule, params: &[i64]) -> Option<usize> {
    let m = sched.deps.params.len();
    sched
        .deps
        .model
        .statements
        .iter()
        .zip(&sched.deps.stmts)
        // A reduction's completion inside a larger expression is an
        // identity node of the dependence graph: no code runs for it (the
        // enclosing statement reads the accumulator).
        .filter(|(_, ps)| ps.kind != StmtKind::Complete)
        .map(|(st, _)| {
            let d = st.n_dims;
            let dims: Vec<String> = (0..d).map(|j| format!("i{j}")).collect();
            let space = Space::set(&sched.deps.params, &dims);
            // Domain rows are over (iterators, parameters, 1); sets take
            // (parameters, iterators, 1).
            let reorder = |r: &Vec<i64>| -> Vec<i64> {
                let mut v = r[d..d + m].to_vec();
                v.extend_from_slice(&r[..d]);
                v.push(r[d + m]);
                v
            };
            let eqs: Vec<Vec<i64>> = st.domain.eqs.iter().map(reorder).collect();
            let ineqs: Vec<Vec<i64>> = st.domain.ineqs.iter().map(reorder).collect();
            let set = Set::from_basic(BasicSet::from_rows(space, eqs, ineqs).expect("rows"));
            alphac::poly::points::points(&set, params).map(|p| p.len())
        })
        .sum::<Result<usize, _>>()
        .ok()
}

/// A system compiled (optimized or not) with its loops counting their
/// iterations, and its schedule (the statements the loops execute).
struct Counted {
    file: &'static str,
    system: String,
    optimize: bool,
    lowered: alphac::ir::Program,
    k: usize,
    sched: SystemSchedule,
    jit: JitFunction,
    /// The function's parameters: the system's, then the seed if it draws.
    n_params: usize,
}

fn counted(file: &'static str, system: &str, optimize: bool) -> Counted {
    let src = source(file);
    let options = Options {
        optimize,
        system: Some(system.into()),
        ..Options::default()
    };
    let program = compile::parse_program(&src).expect("parses");
    let (f, lowered, _) = compile::loop_program(&program, &options)
        .unwrap_or_else(|e| panic!("{system} (optimize={optimize}): {e}"));
    let k = lowered
        .systems
        .iter()
        .position(|s| s.name == system)
        .expect("system kept");
    let mut scheds =
        deps::schedule_program(&lowered, alphac::schedule::Scheduler::Pluto).expect("schedules");
    Counted {
        file,
        system: system.to_string(),
        optimize,
        sched: scheds.systems.swap_remove(k),
        lowered,
        k,
        jit: JitFunction::compile(&counting(&f)).expect("JIT"),
        n_params: f.params.len(),
    }
}

/// Iterations of the counted loops, statement executions, and instances
/// of the statements (see [`instances`]) at `values`.
fn measure(c: &Counted, values: &HashMap<String, i64>) -> (i64, i64, Option<usize>) {
    let sys = &c.lowered.systems[c.k];
    let params = sys.resolve_params(values).expect("parameters in context");
    let n = instances(&c.sched, &params);
    // Inputs: drawn by the file's generator when there is one, else zero.
    let src = source(c.file);
    let data_name = format!("{}_data", c.system);
    let inputs: HashMap<String, alphac::runtime::Array> =
        if src.contains(&format!("affine {data_name} ")) {
            let g = compile::compile(
                &src,
                &Options {
                    system: Some(data_name.clone()),
                    ..Options::default()
                },
            )
            .expect("generator compiles");
            g.run_named(values, &HashMap::new(), rng::data_seed(1))
                .expect("generator runs")
        } else {
            HashMap::new()
        };
    let mut jit_params = params.clone();
    jit_params.resize(c.n_params, 1);
    let mut bufs = c.jit.zeroed_buffers(&jit_params).expect("buffers");
    for (id, var) in sys.vars.iter().enumerate() {
        if var.kind != VarKind::Input {
            continue;
        }
        if let Some(a) = inputs.get(&var.name) {
            assert_eq!(
                a.data().len(),
                bufs[id].len(),
                "{}: input {}",
                c.system,
                var.name
            );
            bufs[id] = a.data().clone();
        }
    }
    c.jit
        .run(&jit_params, &mut bufs)
        .unwrap_or_else(|e| panic!("{} (optimize={}): {e}", c.system, c.optimize));
    match bufs.last() {
        Some(Buffer::Int(v)) => (v[0], v[1], n),
        _ => panic!("counter array"),
    }
}

/// Every system of every example, optimized and as written, at scales 1
/// and 3: loop iterations per statement execution at most `BOUND` (no
/// loop runs mostly empty), and neither iterations nor executions per
/// statement instance grow by more than 1.5 from scale 1 to scale 3 (a
/// loop nest of a higher complexity than the statements' would triple
/// them at least).
#[test]
fn every_program_loops_at_its_own_complexity() {
    const BOUND: f64 = 4.0;
    let mut report = Vec::new();
    let mut bad = Vec::new();
    for (file, _) in SIZES {
        let program = compile::parse_program(&source(file)).expect("parses");
        for system in program.systems.iter().map(|s| s.name.clone()) {
            for optimize in [true, false] {
                let c = counted(file, &system, optimize);
                let m: Vec<(i64, i64, Option<usize>)> = [1, 3]
                    .iter()
                    .map(|&s| measure(&c, &sizes(file, s)))
                    .collect();
                let per_exec: Vec<f64> = m
                    .iter()
                    .map(|&(it, ex, _)| it as f64 / ex.max(1) as f64)
                    .collect();
                let mut fail = per_exec.iter().any(|&r| r > BOUND);
                let mut growth = Vec::new();
                if let [(i1, e1, Some(n1)), (i3, e3, Some(n3))] = m[..] {
                    let g = |a1: i64, a3: i64| (a3 as f64 / n3 as f64) / (a1 as f64 / n1 as f64);
                    growth = vec![g(i1, i3), g(e1, e3)];
                    fail |= growth.iter().any(|&x| x > 1.5);
                }
                let line = format!(
                    "{system} optimize={optimize}: {m:?}, iterations per execution {per_exec:.2?}, growth per instance {growth:.2?}"
                );
                if fail {
                    bad.push(line.clone());
                }
                report.push(line);
            }
        }
    }
    println!("{}", report.join("\n"));
    assert!(bad.is_empty(), "{bad:#?}");
}
