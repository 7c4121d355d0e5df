//! Loop-AST test programs for the sparse-update and scatter tests
//! (`codegen_sparse`, `codegen_scatter`): loop variables, the test arrays
//! (data, counts, histograms), builders of loops and updates, and running
//! a function with the JIT on seeded buffers (bit-for-bit comparison of
//! two functions' runs, checked and unchecked).

use alphac::codegen::loop_ast::{
    Affine, Array, BinOp, Binding, Bound, Dim, Expr, ForLoop, Function, LoopVar, Stmt,
};
use alphac::codegen::opt;
use alphac::ir::types::{ElemType, Set, Space};
use alphac::jit::{Buffer, ExecError, JitFunction, JitOptions};

pub const I: LoopVar = LoopVar(0);
pub const V: LoopVar = LoopVar(1);
pub const K: LoopVar = LoopVar(2);
pub const J: LoopVar = LoopVar(3);

/// Arrays of the test programs.
pub const W: usize = 0; // int [N]: data
pub const Z: usize = 1; // int [N]: data
pub const X: usize = 2; // float [N]: data
pub const A: usize = 3; // int [V][K]: counts
pub const F: usize = 4; // float [V][K]
pub const H: usize = 5; // int [K + 1]: histogram
pub const B: usize = 6; // bool [V][K]
pub const G: usize = 7; // float [V][K]

/// Parameters: `N`, `V`, `K`.
pub fn p(k: usize) -> Affine {
    Affine::param(k)
}

pub fn var(v: LoopVar) -> Expr {
    Expr::var(v)
}

pub fn aff(v: LoopVar, c: i64) -> Expr {
    Expr::Aff(Affine::var(v).offset(c).expect("small"))
}

pub fn eq(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Eq, a, b)
}

pub fn and(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::And, a, b)
}

pub fn ge(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Ge, a, b)
}

pub fn gt(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Gt, a, b)
}

/// The loop bound `param − c`.
pub fn below(param: usize, c: i64) -> Bound {
    Bound::aff(p(param).offset(-c).expect("small"))
}

/// The loop bound `0`.
pub fn zero() -> Bound {
    Bound::aff(Affine::cst(0))
}

/// `0 ..= e − 1`.
pub fn range(e: Affine) -> (Bound, Bound) {
    (zero(), Bound::aff(e.offset(-1).expect("small")))
}

pub fn for_(var: LoopVar, (lower, upper): (Bound, Bound), body: Vec<Stmt>) -> Stmt {
    Stmt::For(ForLoop {
        var,
        parallel: false,
        lower,
        upper,
        body,
    })
}

pub fn dim(extent: Affine) -> Dim {
    Dim {
        lower: Affine::cst(0),
        extent,
    }
}

/// A function over the test arrays with the given body.
pub fn func(body: Vec<Stmt>) -> Function {
    let arr = |name: &str, ty, dims| Array {
        name: name.into(),
        ty,
        dims,
        domain: None,
    };
    let vk = || vec![dim(p(1)), dim(p(2))];
    Function {
        name: "t".into(),
        params: vec!["N".into(), "V".into(), "K".into()],
        context: Set::universe(Space::set(&["N", "V", "K"], &[] as &[&str])),
        arrays: vec![
            arr("w", ElemType::Int, vec![dim(p(0))]),
            arr("z", ElemType::Int, vec![dim(p(0))]),
            arr("x", ElemType::Float, vec![dim(p(0))]),
            arr("A", ElemType::Int, vk()),
            arr("F", ElemType::Float, vk()),
            arr(
                "h",
                ElemType::Int,
                vec![dim(p(2).offset(1).expect("small"))],
            ),
            arr("Bo", ElemType::Bool, vk()),
            arr("G", ElemType::Float, vk()),
        ],
        externals: vec![],
        loop_vars: vec!["i".into(), "v".into(), "k".into(), "j".into()],
        locals: vec![],
        body,
    }
}

/// `A[v][k]` (or another `[V][K]` array).
pub fn at_vk(a: usize) -> Expr {
    Expr::load(a, vec![var(V), var(K)])
}

/// `a[v][k] = a[v][k] op value`.
pub fn update_vk(a: usize, op: BinOp, value: Expr) -> Stmt {
    Stmt::Assign {
        array: a,
        index: vec![var(V), var(K)],
        value: Expr::bin(op, at_vk(a), value),
    }
}

/// `for i in 0..N { for v in 0..V { for k in 0..K { s } } }`.
pub fn ivk(s: Stmt) -> Function {
    func(vec![for_(
        I,
        range(p(0)),
        vec![for_(V, range(p(1)), vec![for_(K, range(p(2)), vec![s])])],
    )])
}

/// `w[i + c]`, `z[i + c]`, `x[i + c]`.
pub fn data(a: usize, c: i64) -> Expr {
    Expr::load(a, vec![aff(I, c)])
}

/// `A[v][k] = A[v][k] + (c ? 1 : 0)`.
pub fn count_if(c: Expr) -> Stmt {
    update_vk(A, BinOp::Add, Expr::select(c, Expr::Int(1), Expr::Int(0)))
}

/// The LDA count update of token `i − 1`, guarded by `i >= 1`.
pub fn lda_update() -> Stmt {
    let c = and(
        ge(var(I), Expr::Int(1)),
        and(eq(data(W, -1), var(V)), eq(data(Z, -1), var(K))),
    );
    count_if(c)
}

/// Deterministic pseudo-random buffers for `f` at `params`: data ints in
/// `[−1, max(V, K)]` (so that some selected values are out of range),
/// counts in `[0, 4]`, floats positive, bools alternating.
pub fn buffers(j: &JitFunction, params: &[i64], seed: u64) -> Vec<Buffer> {
    let mut bufs = j.zeroed_buffers(params).expect("buffers");
    let mut r = seed
        .wrapping_mul(2862933555777941757)
        .wrapping_add(3037000493);
    let mut next = |n: i64| {
        r = r
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((r >> 33) % n as u64) as i64
    };
    let top = params[1].max(params[2]);
    for (a, b) in bufs.iter_mut().enumerate() {
        match b {
            Buffer::Int(v) => v.iter_mut().for_each(|x| {
                *x = if a < A { next(top + 2) - 1 } else { next(5) };
            }),
            Buffer::Float(v) => v
                .iter_mut()
                .for_each(|x| *x = 0.25 + next(1000) as f64 / 7.0),
            Buffer::Bool(v) => v.iter_mut().for_each(|x| *x = next(2) == 0),
        }
    }
    bufs
}

/// Runs `f` (checked or not) on the buffers of `seed`.
pub fn run(
    f: &Function,
    params: &[i64],
    seed: u64,
    checked: bool,
) -> (Result<(), ExecError>, Vec<Buffer>) {
    let j = JitFunction::compile_with(f, JitOptions { checked }).expect("compiles");
    let mut bufs = buffers(&j, params, seed);
    let r = j.run(params, &mut bufs);
    (r, bufs)
}

/// Whether two buffer lists are equal, floats bit for bit.
pub fn bitwise_equal(x: &[Buffer], y: &[Buffer]) -> bool {
    x.len() == y.len()
        && x.iter().zip(y).all(|(p, q)| match (p, q) {
            (Buffer::Float(a), Buffer::Float(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(s, t)| s.to_bits() == t.to_bits())
            }
            _ => p == q,
        })
}

/// `f` and `g` run alike (checked and unchecked): same outcome, and on
/// success bit-identical buffers; `g` keeps `f`'s proof that affine
/// accesses are in bounds.
pub fn same_runs(f: &Function, g: &Function, params: &[i64], seed: u64) {
    for checked in [false, true] {
        let (rf, bf) = run(f, params, seed, checked);
        let (rg, bg) = run(g, params, seed, checked);
        assert_eq!(rf, rg, "params {params:?}\n{}\n{}", f.to_c(), g.to_c());
        if rf.is_ok() {
            assert!(
                bitwise_equal(&bf, &bg),
                "params {params:?} seed {seed}\n{}\n{}",
                f.to_c(),
                g.to_c()
            );
        }
    }
    let jf = JitFunction::compile(f).expect("compiles");
    let jg = JitFunction::compile(g).expect("compiles");
    if jf.proves_affine_accesses(params) == Ok(true) {
        assert_eq!(jg.proves_affine_accesses(params), Ok(true), "{}", g.to_c());
    }
}

pub const PARAMS: [[i64; 3]; 4] = [[1, 1, 1], [4, 2, 3], [7, 3, 2], [9, 4, 4]];

/// [`same_runs`] for every parameter vector of `PARAMS` (seeds from
/// `seed`).
pub fn same_all(f: &Function, g: &Function, seed: u64) {
    for (k, params) in PARAMS.iter().enumerate() {
        same_runs(f, g, params, seed + k as u64);
    }
}

/// Every binding of a statement list (pre-order).
pub fn bindings(body: &[Stmt]) -> Vec<&Binding> {
    let mut out = Vec::new();
    for s in body {
        match s {
            Stmt::Bind(b) => {
                out.push(&**b);
                out.extend(bindings(&b.body));
            }
            Stmt::For(ForLoop { body, .. }) | Stmt::Block(body) => out.extend(bindings(body)),
            Stmt::If { then, els, .. } => {
                out.extend(bindings(then));
                out.extend(bindings(els));
            }
            _ => {}
        }
    }
    out
}

/// `f` after the sparse rewrite alone, checked, with its counts of
/// guarded updates and bindings.
pub fn sparse(f: &Function) -> (Function, (usize, usize)) {
    let (g, n) = sparse_counts(f);
    (g, (n.updates, n.selected))
}

/// Updates, bindings, interchanges.
pub fn triple(n: opt::SparseCounts) -> (usize, usize, usize) {
    (n.updates, n.selected, n.interchanged)
}

/// `f` after the sparse rewrite alone, checked, with its counts.
pub fn sparse_counts(f: &Function) -> (Function, opt::SparseCounts) {
    let mut g = f.clone();
    let n = opt::sparse_updates(&mut g);
    g.check().unwrap_or_else(|e| panic!("{e}\n{}", g.to_c()));
    (g, n)
}

/// The buffers of `seed` with the labels `w`, `z` in range (`w < V`,
/// `z < K`), so that runs get past the data-selected accesses.
pub fn in_range(j: &JitFunction, params: &[i64], seed: u64) -> Vec<Buffer> {
    let mut bufs = buffers(j, params, seed);
    for (a, m) in [(W, params[1]), (Z, params[2])] {
        if let Buffer::Int(v) = &mut bufs[a] {
            v.iter_mut().for_each(|x| *x = x.rem_euclid(m));
        }
    }
    bufs
}

/// Runs `f` (checked or not) on [`in_range`] buffers: the outcome, the
/// buffers before and after.
pub fn run_in_range(
    f: &Function,
    params: &[i64],
    seed: u64,
    checked: bool,
) -> (Result<(), ExecError>, Vec<Buffer>, Vec<Buffer>) {
    let j = JitFunction::compile_with(f, JitOptions { checked }).expect("compiles");
    let before = in_range(&j, params, seed);
    let mut after = before.clone();
    let r = j.run(params, &mut after);
    (r, before, after)
}

/// `array[index] = value`.
pub fn set(array: usize, index: Vec<Expr>, value: Expr) -> Stmt {
    Stmt::Assign {
        array,
        index,
        value,
    }
}

/// The values of an int buffer.
pub fn ints(b: &Buffer) -> &[i64] {
    match b {
        Buffer::Int(v) => v,
        _ => panic!("an int buffer"),
    }
}

/// The values of a float buffer.
pub fn floats(b: &Buffer) -> &[f64] {
    match b {
        Buffer::Float(v) => v,
        _ => panic!("a float buffer"),
    }
}

/// The number of int loads in the optimized IR of `f` (fast variant).
pub fn int_loads(f: &Function) -> usize {
    clif_lines(f, "= load.i64")
}

/// The number of cold blocks (failure exits) in the optimized IR of `f`
/// (fast variant).
pub fn cold_blocks(f: &Function) -> usize {
    clif_lines(f, " cold:")
}

/// The number of overflow tests of int arithmetic in the optimized IR of
/// `f` (fast variant).
pub fn overflow_tests(f: &Function) -> usize {
    clif_lines(f, "_overflow")
}

/// The lines of the optimized Cranelift IR of `f` (fast variant) that
/// contain `pattern`.
fn clif_lines(f: &Function, pattern: &str) -> usize {
    let d = JitFunction::disassemble(f, JitOptions { checked: false }).expect("compiles");
    let clif = d.split("\nVCode").next().unwrap_or(&d);
    clif.lines().filter(|l| l.contains(pattern)).count()
}
