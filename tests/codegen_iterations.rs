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

use alphac::codegen::loop_ast::{Affine, Array, BinOp, Dim, Expr, ForLoop, Function, Local, Stmt};
use alphac::compile::{self, Options};
use alphac::ir::ElemType;
use alphac::jit::{Buffer, JitFunction};

fn source(name: &str) -> String {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("example exists")
}

/// `f` counting its loop iterations into a new last array `iterations[1]`.
fn counting(f: &Function) -> Function {
    fn walk(s: &mut Stmt, tick: &Stmt) {
        match s {
            // The counter is carried from iteration to iteration: the
            // instrumented loops are sequential.
            Stmt::For(ForLoop { body, parallel, .. }) => {
                *parallel = false;
                body.iter_mut().for_each(|b| walk(b, tick));
                body.insert(0, tick.clone());
            }
            Stmt::Block(body) => body.iter_mut().for_each(|b| walk(b, tick)),
            Stmt::If { then, els, .. } => {
                then.iter_mut().for_each(|b| walk(b, tick));
                els.iter_mut().for_each(|b| walk(b, tick));
            }
            _ => {}
        }
    }
    let mut g = f.clone();
    g.locals.push(Local {
        name: "iterations".into(),
        ty: ElemType::Int,
    });
    let n = g.locals.len() - 1;
    let tick = Stmt::SetLocal {
        local: n,
        value: Expr::bin(BinOp::Add, Expr::Local(n), Expr::Int(1)),
    };
    g.body.iter_mut().for_each(|s| walk(s, &tick));
    g.arrays.push(Array {
        name: "iterations".into(),
        ty: ElemType::Int,
        dims: vec![Dim {
            lower: Affine::cst(0),
            extent: Affine::cst(1),
        }],
        domain: None,
    });
    g.body.push(Stmt::Assign {
        array: g.arrays.len() - 1,
        index: vec![Expr::Int(0)],
        value: Expr::Local(n),
    });
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
