//! JIT code against the same loops written by hand in Rust, and compile
//! latency (loop AST → callable code). Two kinds of JIT code: loop programs
//! built by hand (`jit`), and the code alphac generates from the examples'
//! `.alpha` source (`alphac`: SDR, scheduling, scanning, loop
//! optimization), each against the same loops written in Rust.
//!
//! Run: `cargo bench --bench jit -- --warm-up-time 1 --measurement-time 5`.

use alphac::codegen::loop_ast::{
    Affine, Array, BinOp, Bound, Dim, Expr, ForLoop, Function, Local, LoopVar, Stmt,
};
use alphac::ir::types::{ElemType, Set, Space};
use alphac::jit::{Buffer, JitFunction};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

fn arr(name: &str, exts: usize, n: Affine) -> Array {
    Array {
        name: name.into(),
        ty: ElemType::Float,
        dims: (0..exts)
            .map(|_| Dim {
                lower: Affine::cst(0),
                extent: n.clone(),
            })
            .collect(),
        domain: None,
    }
}

fn last(p: usize) -> Bound {
    // The invariant: small constants never overflow.
    Bound::aff(Affine::param(p).offset(-1).expect("no overflow"))
}

fn ev(k: usize) -> Expr {
    Expr::var(LoopVar(k))
}

/// `C[i][j] = Σ_k A[i][k]·B[k][j]`, register accumulator, loops i, j, k.
fn matmul() -> Function {
    let zero = || Bound::aff(Affine::cst(0));
    Function {
        name: "matmul".into(),
        params: vec!["N".into()],
        context: Set::universe(Space::set(&["N"], &[] as &[&str])),
        arrays: vec![
            arr("A", 2, Affine::param(0)),
            arr("B", 2, Affine::param(0)),
            arr("C", 2, Affine::param(0)),
        ],
        externals: vec![],
        loop_vars: vec!["i".into(), "j".into(), "k".into()],
        locals: vec![Local {
            name: "acc".into(),
            ty: ElemType::Float,
        }],
        body: vec![Stmt::For(ForLoop {
            var: LoopVar(0),
            parallel: false,
            lower: zero(),
            upper: last(0),
            body: vec![Stmt::For(ForLoop {
                var: LoopVar(1),
                parallel: false,
                lower: zero(),
                upper: last(0),
                body: vec![
                    Stmt::SetLocal {
                        local: 0,
                        value: Expr::Float(0.0),
                    },
                    Stmt::For(ForLoop {
                        var: LoopVar(2),
                        parallel: false,
                        lower: zero(),
                        upper: last(0),
                        body: vec![Stmt::SetLocal {
                            local: 0,
                            value: Expr::bin(
                                BinOp::Add,
                                Expr::Local(0),
                                Expr::bin(
                                    BinOp::Mul,
                                    Expr::load(0, vec![ev(0), ev(2)]),
                                    Expr::load(1, vec![ev(2), ev(1)]),
                                ),
                            ),
                        }],
                    }),
                    Stmt::Assign {
                        array: 2,
                        index: vec![ev(0), ev(1)],
                        value: Expr::Local(0),
                    },
                ],
            })],
        })],
    }
}

fn matmul_rust(n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    for i in 0..n {
        for j in 0..n {
            let mut acc = 0.0;
            for k in 0..n {
                acc += a[i * n + k] * b[k * n + j];
            }
            c[i * n + j] = acc;
        }
    }
}

/// PolyBench jacobi-1d with two arrays.
fn jacobi() -> Function {
    let i = LoopVar(1);
    let sweep = |dst: usize, src: usize| {
        Stmt::For(ForLoop {
            var: i,
            parallel: false,
            lower: Bound::aff(Affine::cst(1)),
            upper: Bound::aff(Affine::param(1).offset(-2).expect("no overflow")),
            body: vec![Stmt::Assign {
                array: dst,
                index: vec![Expr::var(i)],
                value: Expr::bin(
                    BinOp::Mul,
                    Expr::Float(1.0 / 3.0),
                    Expr::bin(
                        BinOp::Add,
                        Expr::bin(
                            BinOp::Add,
                            Expr::load(
                                src,
                                vec![Expr::Aff(Affine::var(i).offset(-1).expect("small"))],
                            ),
                            Expr::load(src, vec![Expr::var(i)]),
                        ),
                        Expr::load(
                            src,
                            vec![Expr::Aff(Affine::var(i).offset(1).expect("small"))],
                        ),
                    ),
                ),
            }],
        })
    };
    Function {
        name: "jacobi1d".into(),
        params: vec!["T".into(), "N".into()],
        context: Set::universe(Space::set(&["T", "N"], &[] as &[&str])),
        arrays: vec![arr("A", 1, Affine::param(1)), arr("B", 1, Affine::param(1))],
        externals: vec![],
        loop_vars: vec!["t".into(), "i".into()],
        locals: vec![],
        body: vec![Stmt::For(ForLoop {
            var: LoopVar(0),
            parallel: false,
            lower: Bound::aff(Affine::cst(0)),
            upper: last(0),
            body: vec![sweep(1, 0), sweep(0, 1)],
        })],
    }
}

fn jacobi_rust(t: usize, a: &mut [f64], b: &mut [f64]) {
    let n = a.len();
    for _ in 0..t {
        for i in 1..n - 1 {
            b[i] = (1.0 / 3.0) * (a[i - 1] + a[i] + a[i + 1]);
        }
        for i in 1..n - 1 {
            a[i] = (1.0 / 3.0) * (b[i - 1] + b[i] + b[i + 1]);
        }
    }
}

/// The loops alphac generates for `examples/jacobi_1d.alpha` without
/// storage mapping, by hand: `X` is the `(T+1) × N` array of every step
/// (with the mapping, `alphac emit` stores `X` modulo 2 in time).
fn jacobi_full_rust(t: usize, x0: &[f64], x: &mut [f64], y: &mut [f64]) {
    let n = x0.len();
    x[..n].copy_from_slice(x0);
    for s in 1..=t {
        let (prev, cur) = x.split_at_mut(s * n);
        let p = &prev[(s - 1) * n..];
        cur[0] = p[0];
        for i in 1..n - 1 {
            cur[i] = 0.33333 * ((p[i - 1] + p[i]) + p[i + 1]);
        }
        cur[n - 1] = p[n - 1];
    }
    y.copy_from_slice(&x[t * n..(t + 1) * n]);
}

/// The JIT function alphac generates for an example (default options).
fn generated(name: &str) -> JitFunction {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).expect("example exists");
    let prog = alphac::compile::parse_program(&src).expect("parses");
    let (f, _, _) = alphac::compile::loop_program(&prog, &alphac::compile::Options::default())
        .expect("compiles");
    JitFunction::compile(&f).expect("JIT compiles")
}

/// Fills the buffer of array `name` with `v` (same row-major layout).
fn fill(jit: &JitFunction, bufs: &mut [Buffer], name: &str, v: &[f64]) {
    let k = jit
        .function()
        .arrays
        .iter()
        .position(|a| a.name == name)
        .expect("array exists");
    let Buffer::Float(b) = &mut bufs[k] else {
        panic!("float array")
    };
    b.copy_from_slice(v);
}

fn out<'a>(jit: &JitFunction, bufs: &'a [Buffer], name: &str) -> &'a [f64] {
    let k = jit
        .function()
        .arrays
        .iter()
        .position(|a| a.name == name)
        .expect("array exists");
    bufs[k].as_float().expect("float")
}

fn data(n: usize) -> Vec<f64> {
    (0..n)
        .map(|k| ((k * 7919) % 1009) as f64 / 1009.0)
        .collect()
}

fn benches(c: &mut Criterion) {
    let n = 512usize;
    let mm = matmul();
    let jit = JitFunction::compile(&mm).expect("compiles");
    let (a, b) = (data(n * n), data(n * n + 1)[1..].to_vec());
    let mut g = c.benchmark_group("matmul_512");
    g.sample_size(10);
    let mut bufs = vec![
        Buffer::Float(a.clone()),
        Buffer::Float(b.clone()),
        Buffer::Float(vec![0.0; n * n]),
    ];
    g.bench_function("jit", |bch| {
        bch.iter(|| jit.run(black_box(&[n as i64]), &mut bufs).expect("runs"))
    });
    let mut out_c = vec![0.0; n * n];
    g.bench_function("rust", |bch| {
        bch.iter(|| matmul_rust(black_box(n), &a, &b, &mut out_c))
    });
    let gen = generated("matmul");
    let np = [n as i64; 3];
    let mut gbufs = gen.zeroed_buffers(&np).expect("buffers");
    fill(&gen, &mut gbufs, "A", &a);
    fill(&gen, &mut gbufs, "B", &b);
    g.bench_function("alphac", |bch| {
        bch.iter(|| gen.run(black_box(&np), &mut gbufs).expect("runs"))
    });
    g.finish();
    assert_eq!(bufs[2].as_float().expect("float"), &out_c[..]);
    assert_eq!(out(&gen, &gbufs, "C"), &out_c[..]);

    let (t, n) = (100usize, 100_000usize);
    let jf = jacobi();
    let jit = JitFunction::compile(&jf).expect("compiles");
    let mut g = c.benchmark_group("jacobi1d_T100_N100000");
    g.sample_size(20);
    let mut bufs = vec![Buffer::Float(data(n)), Buffer::Float(data(n))];
    g.bench_function("jit", |bch| {
        bch.iter(|| {
            jit.run(black_box(&[t as i64, n as i64]), &mut bufs)
                .expect("runs")
        })
    });
    let (mut ra, mut rb) = (data(n), data(n));
    g.bench_function("rust", |bch| {
        bch.iter(|| jacobi_rust(black_box(t), &mut ra, &mut rb))
    });
    // The code alphac generates from examples/jacobi_1d.alpha (`X` stored
    // modulo 2 in time, two rows) against its loops by hand with all T + 1
    // steps stored.
    let gen = generated("jacobi_1d");
    let jp = [t as i64, n as i64];
    let mut gbufs = gen.zeroed_buffers(&jp).expect("buffers");
    let x0 = data(n);
    fill(&gen, &mut gbufs, "X0", &x0);
    g.bench_function("alphac", |bch| {
        bch.iter(|| gen.run(black_box(&jp), &mut gbufs).expect("runs"))
    });
    let (mut x, mut y) = (vec![0.0; (t + 1) * n], vec![0.0; n]);
    g.bench_function("rust_same_loops", |bch| {
        bch.iter(|| jacobi_full_rust(black_box(t), &x0, &mut x, &mut y))
    });
    g.finish();
    assert_eq!(out(&gen, &gbufs, "Y"), &y[..]);

    let mut g = c.benchmark_group("cranelift_compile");
    g.bench_function("matmul", |bch| {
        bch.iter(|| JitFunction::compile(black_box(&mm)).expect("compiles"))
    });
    g.bench_function("jacobi1d", |bch| {
        bch.iter(|| JitFunction::compile(black_box(&jf)).expect("compiles"))
    });
    g.finish();
}

criterion_group!(jit_benches, benches);
criterion_main!(jit_benches);
