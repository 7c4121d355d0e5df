//! Hand-built loop ASTs compiled with the JIT and compared with the same
//! loops written directly in Rust (bit-exact: same operation order).

use alphac::codegen::loop_ast::{
    Accumulation, Affine, Array, BinOp, Bound, Cast, Dim, Distribution, Expr, ForLoop, Function,
    Local, LoopVar, MathFn, RandomDraw, ReduceOp, Stmt, Sym,
};
use alphac::ir::types::{ElemType, Set, Space};
use alphac::jit::{host_fns, Buffer, ExecError, JitFunction, JitOptions};
use alphac::poly::Constraint;

// ---------------------------------------------------------------------------
// Builders.

fn p(k: usize) -> Affine {
    Affine::param(k)
}
fn v(k: usize) -> Affine {
    Affine::var(LoopVar(k))
}
fn c(x: i64) -> Affine {
    Affine::cst(x)
}
/// `a + k·b` for affine `a`, symbol `b`.
fn plus(a: Affine, s: Sym, k: i64) -> Affine {
    a.plus(s, k)
}
fn pv(k: usize) -> Sym {
    Sym::Param(k)
}
fn ev(k: usize) -> Expr {
    Expr::var(LoopVar(k))
}
fn load(a: usize, idx: Vec<Expr>) -> Expr {
    Expr::load(a, idx)
}
fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::bin(op, a, b)
}
fn for_(var: usize, lo: Bound, hi: Bound, body: Vec<Stmt>) -> Stmt {
    Stmt::For(ForLoop {
        var: LoopVar(var),
        parallel: false,
        lower: lo,
        upper: hi,
        body,
    })
}
/// Constraints `Σ coeffs·p + k >= 0` on the parameters `params`.
fn context(params: &[&str], cons: &[(&[i64], i64)]) -> Set {
    let np = params.len();
    let piece = cons
        .iter()
        .map(|(co, k)| {
            let mut row = vec![0; np + 1];
            row[..co.len()].copy_from_slice(co);
            row[np] = *k;
            Constraint::ineq(row)
        })
        .collect();
    Set::from_constraints(Space::set(params, &[] as &[&str]), vec![piece]).unwrap()
}
/// An array with box `[0, ext_k)` per dimension.
fn array(name: &str, ty: ElemType, exts: Vec<Affine>) -> Array {
    Array {
        name: name.into(),
        ty,
        dims: exts
            .into_iter()
            .map(|e| Dim {
                lower: c(0),
                extent: e,
            })
            .collect(),
        domain: None,
    }
}
fn floats(b: &Buffer) -> &[f64] {
    b.as_float().expect("float buffer")
}
fn ints(b: &Buffer) -> &[i64] {
    b.as_int().expect("int buffer")
}
fn bools(b: &Buffer) -> &[bool] {
    b.as_bool().expect("bool buffer")
}
/// Deterministic pseudo-random floats in [-1, 1).
fn data(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Kernels.

/// `C[i][j] = Σ_k A[i][k]·B[k][j]` with a register accumulator.
fn matmul() -> Function {
    let n1 = p(0).offset(-1).unwrap();
    let (i, j, k) = (0, 1, 2);
    Function {
        name: "matmul".into(),
        params: vec!["N".into()],
        context: context(&["N"], &[(&[1], 0)]),
        arrays: vec![
            array("A", ElemType::Float, vec![p(0), p(0)]),
            array("B", ElemType::Float, vec![p(0), p(0)]),
            array("C", ElemType::Float, vec![p(0), p(0)]),
        ],
        externals: vec![],
        loop_vars: vec!["i".into(), "j".into(), "k".into()],
        locals: vec![Local {
            name: "acc".into(),
            ty: ElemType::Float,
        }],
        body: vec![for_(
            i,
            Bound::aff(c(0)),
            Bound::aff(n1.clone()),
            vec![for_(
                j,
                Bound::aff(c(0)),
                Bound::aff(n1.clone()),
                vec![
                    Stmt::SetLocal {
                        local: 0,
                        value: Expr::Float(0.0),
                    },
                    for_(
                        k,
                        Bound::aff(c(0)),
                        Bound::aff(n1.clone()),
                        vec![Stmt::SetLocal {
                            local: 0,
                            value: bin(
                                BinOp::Add,
                                Expr::Local(0),
                                bin(
                                    BinOp::Mul,
                                    load(0, vec![ev(i), ev(k)]),
                                    load(1, vec![ev(k), ev(j)]),
                                ),
                            ),
                        }],
                    ),
                    Stmt::Assign {
                        array: 2,
                        index: vec![ev(i), ev(j)],
                        value: Expr::Local(0),
                    },
                ],
            )],
        )],
    }
}

fn matmul_rust(n: usize, a: &[f64], b: &[f64], out: &mut [f64]) {
    for i in 0..n {
        for j in 0..n {
            let mut acc = 0.0;
            for k in 0..n {
                acc += a[i * n + k] * b[k * n + j];
            }
            out[i * n + j] = acc;
        }
    }
}

#[test]
fn matmul_matches_rust() {
    let jit = JitFunction::compile(&matmul()).expect("compiles");
    for n in [0usize, 1, 2, 7, 33] {
        let a = data(n * n, 1);
        let b = data(n * n, 2);
        let mut bufs = vec![
            Buffer::Float(a.clone()),
            Buffer::Float(b.clone()),
            Buffer::Float(vec![f64::NAN; n * n]),
        ];
        jit.run(&[n as i64], &mut bufs).expect("runs");
        let mut want = vec![0.0; n * n];
        matmul_rust(n, &a, &b, &mut want);
        let got = floats(&bufs[2]);
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.to_bits(), w.to_bits(), "n = {n}");
        }
    }
}

/// PolyBench jacobi-1d: two arrays, `T` sweeps; both inner loops reuse
/// the loop variable `i` (siblings).
fn jacobi() -> Function {
    let (t, i) = (0, 1);
    let n2 = p(1).offset(-2).unwrap();
    let third = Expr::Float(1.0 / 3.0);
    let sweep = |dst: usize, src: usize| Stmt::Assign {
        array: dst,
        index: vec![ev(i)],
        value: bin(
            BinOp::Mul,
            third.clone(),
            bin(
                BinOp::Add,
                bin(
                    BinOp::Add,
                    load(src, vec![Expr::Aff(v(i).offset(-1).unwrap())]),
                    load(src, vec![ev(i)]),
                ),
                load(src, vec![Expr::Aff(v(i).offset(1).unwrap())]),
            ),
        ),
    };
    Function {
        name: "jacobi1d".into(),
        params: vec!["T".into(), "N".into()],
        context: context(&["T", "N"], &[(&[1], 0), (&[0, 1], -2)]),
        arrays: vec![
            array("A", ElemType::Float, vec![p(1)]),
            array("B", ElemType::Float, vec![p(1)]),
        ],
        externals: vec![],
        loop_vars: vec!["t".into(), "i".into()],
        locals: vec![],
        body: vec![for_(
            t,
            Bound::aff(c(0)),
            Bound::aff(p(0).offset(-1).unwrap()),
            vec![
                for_(
                    i,
                    Bound::aff(c(1)),
                    Bound::aff(n2.clone()),
                    vec![sweep(1, 0)],
                ),
                for_(
                    i,
                    Bound::aff(c(1)),
                    Bound::aff(n2.clone()),
                    vec![sweep(0, 1)],
                ),
            ],
        )],
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

#[test]
fn jacobi_matches_rust() {
    let jit = JitFunction::compile(&jacobi()).expect("compiles");
    for (t, n) in [(0usize, 2usize), (1, 3), (5, 10), (20, 257)] {
        let a = data(n, 3);
        let b = data(n, 4);
        let mut bufs = vec![Buffer::Float(a.clone()), Buffer::Float(b.clone())];
        jit.run(&[t as i64, n as i64], &mut bufs).expect("runs");
        let (mut wa, mut wb) = (a, b);
        jacobi_rust(t, &mut wa, &mut wb);
        let bits = |x: &[f64]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(floats(&bufs[0])), bits(&wa), "T={t} N={n}");
        assert_eq!(bits(floats(&bufs[1])), bits(&wb), "T={t} N={n}");
    }
    // N = 1 violates the context N >= 2.
    let mut bufs = vec![Buffer::Float(vec![0.0]), Buffer::Float(vec![0.0])];
    assert!(matches!(
        jit.run(&[1, 1], &mut bufs),
        Err(ExecError::ParamsOutsideContext(_))
    ));
}

/// Prefix sum of ints with a register accumulator: `S[i] = Σ_{k<=i} X[k]`.
fn prefix_sum() -> Function {
    Function {
        name: "prefix".into(),
        params: vec!["N".into()],
        context: context(&["N"], &[(&[1], 0)]),
        arrays: vec![
            array("X", ElemType::Int, vec![p(0)]),
            array("S", ElemType::Int, vec![p(0)]),
        ],
        externals: vec![],
        loop_vars: vec!["i".into()],
        locals: vec![Local {
            name: "s".into(),
            ty: ElemType::Int,
        }],
        body: vec![for_(
            0,
            Bound::aff(c(0)),
            Bound::aff(p(0).offset(-1).unwrap()),
            vec![
                Stmt::SetLocal {
                    local: 0,
                    value: bin(BinOp::Add, Expr::Local(0), load(0, vec![ev(0)])),
                },
                Stmt::Assign {
                    array: 1,
                    index: vec![ev(0)],
                    value: Expr::Local(0),
                },
            ],
        )],
    }
}

#[test]
fn prefix_sum_matches_rust_and_reports_overflow() {
    let jit = JitFunction::compile(&prefix_sum()).expect("compiles");
    let x: Vec<i64> = (0..1000).map(|k| (k * 7919 % 2003) - 1000).collect();
    let mut bufs = vec![Buffer::Int(x.clone()), Buffer::Int(vec![0; 1000])];
    jit.run(&[1000], &mut bufs).expect("runs");
    let mut s = 0;
    let want: Vec<i64> = x
        .iter()
        .map(|v| {
            s += v;
            s
        })
        .collect();
    assert_eq!(ints(&bufs[1]), &want[..]);

    let mut bufs = vec![Buffer::Int(vec![i64::MAX, 1]), Buffer::Int(vec![0; 2])];
    assert_eq!(jit.run(&[2], &mut bufs), Err(ExecError::Overflow));

    // Wrong buffer length and type are refused before running.
    let mut bufs = vec![Buffer::Int(vec![0; 3]), Buffer::Int(vec![0; 2])];
    assert!(matches!(
        jit.run(&[2], &mut bufs),
        Err(ExecError::BufferSize { .. })
    ));
    let mut bufs = vec![Buffer::Float(vec![0.0; 2]), Buffer::Int(vec![0; 2])];
    assert!(matches!(
        jit.run(&[2], &mut bufs),
        Err(ExecError::BufferType { .. })
    ));
    assert!(matches!(
        jit.run(&[2, 3], &mut []),
        Err(ExecError::ParamCount { .. })
    ));
}

/// `for i in 0..N-1; for j from ceil(i/2) to floor((i+N)/3)`: records the
/// visit order in `O[i][j]` (a counter local) and the visit count.
fn triangular() -> Function {
    Function {
        name: "tri".into(),
        params: vec!["N".into()],
        context: context(&["N"], &[(&[1], 0)]),
        arrays: vec![array("O", ElemType::Int, vec![p(0), p(0)])],
        externals: vec![],
        loop_vars: vec!["i".into(), "j".into()],
        locals: vec![Local {
            name: "n".into(),
            ty: ElemType::Int,
        }],
        body: vec![for_(
            0,
            Bound::aff(c(0)),
            Bound::aff(p(0).offset(-1).unwrap()),
            vec![for_(
                1,
                Bound::div(v(0), 2),
                Bound::div(plus(v(0), pv(0), 1), 3),
                vec![
                    Stmt::SetLocal {
                        local: 0,
                        value: bin(BinOp::Add, Expr::Local(0), Expr::Int(1)),
                    },
                    Stmt::Assign {
                        array: 0,
                        index: vec![ev(0), ev(1)],
                        value: Expr::Local(0),
                    },
                ],
            )],
        )],
    }
}

#[test]
fn triangular_floor_ceil_bounds_match_rust() {
    let f = triangular();
    let jit = JitFunction::compile(&f).expect("compiles");
    for n in 0..20i64 {
        let nu = n as usize;
        let mut bufs = vec![Buffer::Int(vec![0; nu * nu])];
        jit.run(&[n], &mut bufs).expect("runs");
        let mut want = vec![0i64; nu * nu];
        let mut cnt = 0;
        for i in 0..n {
            // ceil(i/2) and floor((i+N)/3) for non-negative numerators.
            let lo = (i + 1) / 2;
            let hi = (i + n) / 3;
            for j in lo..=hi {
                cnt += 1;
                want[(i * n + j) as usize] = cnt;
            }
        }
        assert_eq!(ints(&bufs[0]), &want[..], "N = {n}");
    }
    assert_eq!(
        f.to_c(),
        "// requires N >= 0\n\
         void tri(long N, long O[0 : N][0 : N]) {\n\
         \x20 long n = 0;\n\
         \x20 for (i = 0; i <= N - 1; i++) {\n\
         \x20   for (j = ceild(i, 2); j <= floord(i + N, 3); j++) {\n\
         \x20     n = (n + 1);\n\
         \x20     O[i][j] = n;\n\
         \x20   }\n\
         \x20 }\n\
         }\n"
    );
}

/// Max-reductions: into a register (`m = max(m, X[i])`) and into memory
/// (`R[0] max= X[i]`), plus a min into memory.
fn max_reduce() -> Function {
    Function {
        name: "maxred".into(),
        params: vec!["N".into()],
        context: context(&["N"], &[(&[1], -1)]),
        arrays: vec![
            array("X", ElemType::Float, vec![p(0)]),
            array("R", ElemType::Float, vec![c(3)]),
        ],
        externals: vec![],
        loop_vars: vec!["i".into()],
        locals: vec![Local {
            name: "m".into(),
            ty: ElemType::Float,
        }],
        body: vec![
            Stmt::SetLocal {
                local: 0,
                value: Expr::Float(f64::NEG_INFINITY),
            },
            Stmt::Assign {
                array: 1,
                index: vec![Expr::Int(1)],
                value: Expr::Float(f64::NEG_INFINITY),
            },
            Stmt::Assign {
                array: 1,
                index: vec![Expr::Int(2)],
                value: Expr::Float(f64::INFINITY),
            },
            for_(
                0,
                Bound::aff(c(0)),
                Bound::aff(p(0).offset(-1).unwrap()),
                vec![
                    Stmt::SetLocal {
                        local: 0,
                        value: bin(BinOp::Max, Expr::Local(0), load(0, vec![ev(0)])),
                    },
                    Stmt::Accumulate(Accumulation {
                        array: 1,
                        index: vec![Expr::Int(1)],
                        op: ReduceOp::Max,
                        value: load(0, vec![ev(0)]),
                    }),
                    Stmt::Accumulate(Accumulation {
                        array: 1,
                        index: vec![Expr::Int(2)],
                        op: ReduceOp::Min,
                        value: load(0, vec![ev(0)]),
                    }),
                ],
            ),
            Stmt::Assign {
                array: 1,
                index: vec![Expr::Int(0)],
                value: Expr::Local(0),
            },
        ],
    }
}

#[test]
fn max_reduction_matches_rust() {
    let jit = JitFunction::compile(&max_reduce()).expect("compiles");
    for n in [1usize, 2, 100, 1001] {
        let x = data(n, n as u64);
        let mut bufs = vec![Buffer::Float(x.clone()), Buffer::Float(vec![0.0; 3])];
        jit.run(&[n as i64], &mut bufs).expect("runs");
        let mx = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mn = x.iter().copied().fold(f64::INFINITY, f64::min);
        assert_eq!(floats(&bufs[1]), &[mx, mx, mn]);
    }
    // NaN propagates (IEEE maximum), unlike Rust's f64::max.
    let mut bufs = vec![
        Buffer::Float(vec![1.0, f64::NAN, 2.0]),
        Buffer::Float(vec![0.0; 3]),
    ];
    jit.run(&[3], &mut bufs).expect("runs");
    assert!(floats(&bufs[1]).iter().all(|x| x.is_nan()));
}

/// Ints and bools: `E[i] = X[i] mod 3 == 0 || X[i] < 0`,
/// `Y[i] = E[i] ? floord(X[i], 4) : ceild(X[i], -3) + i`,
/// `Z[i] = !E[i] && (X[i] % 5 != 0)`, `W = (Σ E) as int` via accumulate.
fn int_bool() -> Function {
    let x = || load(0, vec![ev(0)]);
    let e = || load(1, vec![ev(0)]);
    Function {
        name: "intbool".into(),
        params: vec!["N".into()],
        context: context(&["N"], &[(&[1], 0)]),
        arrays: vec![
            array("X", ElemType::Int, vec![p(0)]),
            array("E", ElemType::Bool, vec![p(0)]),
            array("Y", ElemType::Int, vec![p(0)]),
            array("Z", ElemType::Bool, vec![p(0)]),
            array("W", ElemType::Int, vec![c(1)]),
            array("All", ElemType::Bool, vec![c(1)]),
        ],
        externals: vec![],
        loop_vars: vec!["i".into()],
        locals: vec![],
        body: vec![
            Stmt::Assign {
                array: 5,
                index: vec![Expr::Int(0)],
                value: Expr::Bool(true),
            },
            for_(
                0,
                Bound::aff(c(0)),
                Bound::aff(p(0).offset(-1).unwrap()),
                vec![
                    Stmt::Assign {
                        array: 1,
                        index: vec![ev(0)],
                        value: bin(
                            BinOp::Or,
                            bin(BinOp::Eq, bin(BinOp::Mod, x(), Expr::Int(3)), Expr::Int(0)),
                            bin(BinOp::Lt, x(), Expr::Int(0)),
                        ),
                    },
                    Stmt::Assign {
                        array: 2,
                        index: vec![ev(0)],
                        value: Expr::select(
                            e(),
                            bin(BinOp::FloorDiv, x(), Expr::Int(4)),
                            bin(BinOp::Add, bin(BinOp::CeilDiv, x(), Expr::Int(-3)), ev(0)),
                        ),
                    },
                    Stmt::Assign {
                        array: 3,
                        index: vec![ev(0)],
                        value: bin(
                            BinOp::And,
                            Expr::Unary(alphac::codegen::loop_ast::UnOp::Not, Box::new(e())),
                            bin(BinOp::Ne, bin(BinOp::Rem, x(), Expr::Int(5)), Expr::Int(0)),
                        ),
                    },
                    Stmt::Accumulate(Accumulation {
                        array: 4,
                        index: vec![Expr::Int(0)],
                        op: ReduceOp::Add,
                        value: Expr::cast(Cast::BoolToInt, e()),
                    }),
                    Stmt::Accumulate(Accumulation {
                        array: 5,
                        index: vec![Expr::Int(0)],
                        op: ReduceOp::And,
                        value: bin(BinOp::Ge, x(), Expr::Int(-50)),
                    }),
                ],
            ),
        ],
    }
}

#[test]
fn int_bool_program_matches_rust() {
    let jit = JitFunction::compile(&int_bool()).expect("compiles");
    let n = 200usize;
    let x: Vec<i64> = (0..n as i64).map(|k| (k * 37) % 151 - 60).collect();
    let mut bufs = vec![
        Buffer::Int(x.clone()),
        Buffer::Bool(vec![false; n]),
        Buffer::Int(vec![0; n]),
        Buffer::Bool(vec![false; n]),
        Buffer::Int(vec![0]),
        Buffer::Bool(vec![false]),
    ];
    jit.run(&[n as i64], &mut bufs).expect("runs");
    let floord = |a: i64, b: i64| (a as f64 / b as f64).floor() as i64; // exact for small ints
    let ceild = |a: i64, b: i64| (a as f64 / b as f64).ceil() as i64;
    let mut w = 0;
    for (i, &xi) in x.iter().enumerate() {
        let e = xi.rem_euclid(3) == 0 || xi < 0;
        assert_eq!(bools(&bufs[1])[i], e, "E[{i}] x={xi}");
        let y = if e {
            floord(xi, 4)
        } else {
            ceild(xi, -3) + i as i64
        };
        assert_eq!(ints(&bufs[2])[i], y, "Y[{i}] x={xi}");
        assert_eq!(bools(&bufs[3])[i], !e && xi % 5 != 0, "Z[{i}]");
        w += i64::from(e);
    }
    assert_eq!(ints(&bufs[4]), &[w]);
    assert_eq!(bools(&bufs[5]), &[x.iter().all(|&v| v >= -50)]);
}

/// `Y[i] = X[I[i]]` where `X` lives on `{[a] : 0 <= a < M}` and, in the
/// 2-D variant, `Z[i] = T[I[i], J[i]]` with `T` on the triangle
/// `{[a, b] : 0 <= b <= a < M}` inside its `M × M` box.
fn indirect() -> Function {
    // Rows [N, M, a, b, constant].
    let ge = |idx: [i64; 2], par: [i64; 2], k: i64| {
        Constraint::ineq([&par[..], &idx[..], &[k]].concat())
    };
    let mut t = array("T", ElemType::Float, vec![p(1), p(1)]);
    let space = Space::set(&["N", "M"], &["a", "b"]);
    let piece = vec![
        ge([0, 1], [0, 0], 0),
        ge([1, -1], [0, 0], 0),
        ge([-1, 0], [0, 1], -1),
    ];
    t.domain = Some(Set::from_constraints(space, vec![piece]).unwrap());
    Function {
        name: "gather".into(),
        params: vec!["N".into(), "M".into()],
        context: context(&["N", "M"], &[(&[1], 0), (&[0, 1], 0)]),
        arrays: vec![
            array("I", ElemType::Int, vec![p(0)]),
            array("X", ElemType::Float, vec![p(1)]),
            array("Y", ElemType::Float, vec![p(0)]),
            array("J", ElemType::Int, vec![p(0)]),
            t,
            array("Z", ElemType::Float, vec![p(0)]),
        ],
        externals: vec![],
        loop_vars: vec!["i".into()],
        locals: vec![],
        body: vec![for_(
            0,
            Bound::aff(c(0)),
            Bound::aff(p(0).offset(-1).unwrap()),
            vec![
                Stmt::Assign {
                    array: 2,
                    index: vec![ev(0)],
                    value: load(1, vec![load(0, vec![ev(0)])]),
                },
                Stmt::Assign {
                    array: 5,
                    index: vec![ev(0)],
                    value: load(4, vec![load(0, vec![ev(0)]), load(3, vec![ev(0)])]),
                },
            ],
        )],
    }
}

#[test]
fn indirect_reads_are_bounds_checked() {
    let jit = JitFunction::compile(&indirect()).expect("compiles");
    let (n, m) = (6usize, 4usize);
    assert_eq!(
        jit.boxes(&[6, 4]),
        Ok(vec![
            vec![(0, 6)],
            vec![(0, 4)],
            vec![(0, 6)],
            vec![(0, 6)],
            vec![(0, 4), (0, 4)],
            vec![(0, 6)]
        ])
    );
    let z = jit.zeroed_buffers(&[6, 4]).expect("fits");
    assert_eq!(
        z.iter().map(Buffer::len).collect::<Vec<_>>(),
        [6, 4, 6, 6, 16, 6]
    );
    assert_eq!(z[0], Buffer::from(vec![0i64; 6]));
    assert_eq!(z[4], Buffer::from(vec![0.0f64; 16]));
    assert!(matches!(
        jit.zeroed_buffers(&[-1, 4]),
        Err(ExecError::ParamsOutsideContext(_))
    ));
    let x = data(m, 9);
    let t = data(m * m, 10);
    let run = |i: Vec<i64>, j: Vec<i64>| {
        let mut bufs = vec![
            Buffer::Int(i),
            Buffer::Float(x.clone()),
            Buffer::Float(vec![0.0; n]),
            Buffer::Int(j),
            Buffer::Float(t.clone()),
            Buffer::Float(vec![0.0; n]),
        ];
        jit.run(&[n as i64, m as i64], &mut bufs).map(|()| bufs)
    };
    let i = vec![3, 0, 1, 2, 3, 1];
    let j = vec![3, 0, 0, 2, 1, 1];
    let bufs = run(i.clone(), j.clone()).expect("in bounds");
    for k in 0..n {
        assert_eq!(floats(&bufs[2])[k], x[i[k] as usize]);
        assert_eq!(floats(&bufs[5])[k], t[i[k] as usize * m + j[k] as usize]);
    }
    // Outside the box of X.
    let err = run(vec![3, 0, 4, 2, 3, 1], j.clone()).unwrap_err();
    assert_eq!(
        err,
        ExecError::OutOfBounds {
            array: "X".into(),
            point: vec![4]
        }
    );
    assert!(err.to_string().contains("`X` at [4]"), "{err}");
    let err = run(vec![3, 0, 1, -1, 3, 1], j.clone()).unwrap_err();
    assert_eq!(
        err,
        ExecError::OutOfBounds {
            array: "X".into(),
            point: vec![-1]
        }
    );
    // Inside T's box but outside its triangular domain (b > a).
    let err = run(i.clone(), vec![3, 0, 0, 2, 1, 2]).unwrap_err();
    assert_eq!(
        err,
        ExecError::OutOfBounds {
            array: "T".into(),
            point: vec![1, 2]
        }
    );
}

/// `A[i + 1] = A[i]` for `i` up to `N − 1`: the last write is outside the
/// box, a violated access contract, reported (never undefined behaviour)
/// in both modes. With a guard `if (i + 1 <= N − 1)` the run succeeds (the
/// guard narrows `i` for the interval analysis, which then proves the
/// access); with the data-dependent guard `if (A[i] < A[N−1])` the
/// analysis cannot narrow, the checked variant runs, and succeeds too.
#[test]
fn affine_contract_violations_are_errors() {
    let mk = |guard: u8| {
        let assign = Stmt::Assign {
            array: 0,
            index: vec![Expr::Aff(v(0).offset(1).unwrap())],
            value: bin(BinOp::Add, load(0, vec![ev(0)]), Expr::Int(1)),
        };
        let cond = match guard {
            0 => None,
            1 => Some(bin(
                BinOp::Le,
                Expr::Aff(v(0).offset(1).unwrap()),
                Expr::Aff(p(0).offset(-1).unwrap()),
            )),
            _ => Some(bin(
                BinOp::Lt,
                load(0, vec![ev(0)]),
                load(0, vec![Expr::Aff(p(0).offset(-1).unwrap())]),
            )),
        };
        let body = match cond {
            Some(cond) => vec![Stmt::If {
                cond,
                then: vec![assign],
                els: vec![],
            }],
            None => vec![assign],
        };
        Function {
            name: "shift".into(),
            params: vec!["N".into()],
            context: context(&["N"], &[(&[1], -1)]),
            arrays: vec![array("A", ElemType::Int, vec![p(0)])],
            externals: vec![],
            loop_vars: vec!["i".into()],
            locals: vec![],
            body: vec![for_(
                0,
                Bound::aff(c(0)),
                Bound::aff(p(0).offset(-1).unwrap()),
                body,
            )],
        }
    };
    for checked in [false, true] {
        let jit = JitFunction::compile_with(&mk(0), JitOptions { checked }).expect("compiles");
        assert_eq!(jit.proves_affine_accesses(&[5]), Ok(false));
        let mut bufs = vec![Buffer::Int(vec![0; 5])];
        assert_eq!(
            jit.run(&[5], &mut bufs),
            Err(ExecError::ContractViolation {
                array: "A".into(),
                point: vec![5]
            })
        );
        let jit = JitFunction::compile_with(&mk(1), JitOptions { checked }).expect("compiles");
        assert_eq!(jit.proves_affine_accesses(&[5]), Ok(true));
        let mut bufs = vec![Buffer::Int(vec![0; 5])];
        jit.run(&[5], &mut bufs).expect("guarded access runs");
        assert_eq!(ints(&bufs[0]), &[0, 1, 2, 3, 4]);
        let jit = JitFunction::compile_with(&mk(2), JitOptions { checked }).expect("compiles");
        assert_eq!(jit.proves_affine_accesses(&[5]), Ok(false));
        let mut bufs = vec![Buffer::Int(vec![0, 0, 0, 0, 9])];
        jit.run(&[5], &mut bufs).expect("guarded access runs");
        assert_eq!(ints(&bufs[0]), &[0, 1, 2, 3, 4]);
    }
}

#[test]
fn huge_parameters_are_refused_before_running() {
    // Loop to N - 1 over an array of extent 1: the bound arithmetic
    // `2·N` overflows for N near i64::MAX / 2.
    let f = Function {
        name: "big".into(),
        params: vec!["N".into()],
        context: context(&["N"], &[(&[1], 0)]),
        arrays: vec![array("A", ElemType::Int, vec![c(1)])],
        externals: vec![],
        loop_vars: vec!["i".into()],
        locals: vec![],
        body: vec![for_(
            0,
            Bound::aff(c(0)),
            Bound::div(p(0).plus(pv(0), 1), 2),
            vec![Stmt::Accumulate(Accumulation {
                array: 0,
                index: vec![Expr::Int(0)],
                op: ReduceOp::Add,
                value: Expr::Int(1),
            })],
        )],
    };
    let jit = JitFunction::compile(&f).expect("compiles");
    let mut bufs = vec![Buffer::Int(vec![0])];
    assert_eq!(
        jit.run(&[i64::MAX / 2 + 1], &mut bufs),
        Err(ExecError::MayOverflow)
    );
    jit.run(&[10], &mut bufs).expect("runs");
    assert_eq!(ints(&bufs[0]), &[11]);
    // A box whose size does not fit in memory.
    let f2 = Function {
        arrays: vec![array("A", ElemType::Int, vec![p(0), p(0)])],
        body: vec![],
        ..f
    };
    let jit = JitFunction::compile(&f2).expect("compiles");
    assert!(matches!(
        jit.run(&[1 << 40], &mut [Buffer::Int(vec![])]),
        Err(ExecError::TooLarge(_))
    ));
}

/// Math routines and the counter-based RNG agree with the Rust runtime
/// called directly (the same functions: bit-exact).
#[test]
fn math_and_rng_match_runtime() {
    let x = || load(0, vec![ev(0)]);
    let math = |f: MathFn| Expr::Math(f, vec![x()]);
    let outs = vec![
        math(MathFn::Exp),
        math(MathFn::Log),
        math(MathFn::Sqrt),
        Expr::Math(MathFn::Pow, vec![x(), Expr::Float(1.7)]),
        math(MathFn::Lgamma),
        math(MathFn::Floor),
        math(MathFn::Ceil),
        math(MathFn::Abs),
        Expr::Random(Box::new(RandomDraw {
            dist: Distribution::Uniform,
            args: vec![],
            seed: Expr::param(1),
            site: 3,
            point: vec![ev(0)],
        })),
        Expr::Random(Box::new(RandomDraw {
            dist: Distribution::Normal,
            args: vec![x(), Expr::Float(2.0)],
            seed: Expr::param(1),
            site: 4,
            point: vec![ev(0), Expr::Int(7)],
        })),
        Expr::Random(Box::new(RandomDraw {
            dist: Distribution::Gamma,
            args: vec![Expr::Float(2.5), Expr::Float(1.5)],
            seed: Expr::param(1),
            site: 5,
            point: vec![ev(0)],
        })),
        bin(BinOp::Rem, x(), Expr::Float(0.3)),
        Expr::cast(
            Cast::IntToFloat,
            Expr::cast(Cast::FloatToInt, bin(BinOp::Mul, x(), Expr::Float(10.0))),
        ),
    ];
    let k = outs.len();
    let mut arrays = vec![array("X", ElemType::Float, vec![p(0)])];
    let mut body = Vec::new();
    for (o, e) in outs.into_iter().enumerate() {
        arrays.push(array(&format!("O{o}"), ElemType::Float, vec![p(0)]));
        body.push(Stmt::Assign {
            array: o + 1,
            index: vec![ev(0)],
            value: e,
        });
    }
    let f = Function {
        name: "math".into(),
        params: vec!["N".into(), "seed".into()],
        context: context(&["N", "seed"], &[(&[1], 0)]),
        arrays,
        externals: vec![],
        loop_vars: vec!["i".into()],
        locals: vec![],
        body: vec![for_(
            0,
            Bound::aff(c(0)),
            Bound::aff(p(0).offset(-1).unwrap()),
            body,
        )],
    };
    let jit = JitFunction::compile(&f).expect("compiles");
    let n = 64;
    let xs: Vec<f64> = data(n, 5).iter().map(|v| v * 20.0).collect();
    let seed = 12345i64;
    let mut bufs = vec![Buffer::Float(xs.clone())];
    bufs.extend((0..k).map(|_| Buffer::Float(vec![0.0; n])));
    jit.run(&[n as i64, seed], &mut bufs).expect("runs");
    // The key of a draw is the interpreter's (`runtime::rng::Stream::new`):
    // the loop AST's `site` packs `(var << 16) | ordinal`.
    let key = |site: i64, pt: &[i64]| {
        let prefix = alphac::runtime::rng::key_prefix(
            seed as u64,
            (site >> 16) as u64,
            (site & 0xffff) as u64,
            pt.len() as u64,
        ) as i64;
        pt.iter().fold(prefix, |h, &q| host_fns::rt_rng_mix(h, q))
    };
    for (i, &xi) in xs.iter().enumerate() {
        let want = [
            xi.exp(),
            xi.ln(),
            xi.sqrt(),
            xi.powf(1.7),
            host_fns::rt_lgamma(xi),
            xi.floor(),
            xi.ceil(),
            xi.abs(),
            host_fns::rt_uniform(key(3, &[i as i64])),
            host_fns::rt_normal(key(4, &[i as i64, 7]), xi, 2.0),
            host_fns::rt_gamma(key(5, &[i as i64]), 2.5, 1.5),
            xi % 0.3,
            ((xi * 10.0) as i64) as f64,
        ];
        for (o, w) in want.iter().enumerate() {
            let g = floats(&bufs[o + 1])[i];
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "output {o} at x = {xi}: {g} vs {w}"
            );
        }
    }
}

#[test]
fn runtime_errors_of_data_arithmetic() {
    // Y[i] = X[i] / D[i] (ints): division by zero and MIN / -1.
    let f = Function {
        name: "div".into(),
        params: vec!["N".into()],
        context: context(&["N"], &[(&[1], 0)]),
        arrays: vec![
            array("X", ElemType::Int, vec![p(0)]),
            array("D", ElemType::Int, vec![p(0)]),
            array("Y", ElemType::Int, vec![p(0)]),
        ],
        externals: vec![],
        loop_vars: vec!["i".into()],
        locals: vec![],
        body: vec![for_(
            0,
            Bound::aff(c(0)),
            Bound::aff(p(0).offset(-1).unwrap()),
            vec![Stmt::Assign {
                array: 2,
                index: vec![ev(0)],
                value: bin(BinOp::Div, load(0, vec![ev(0)]), load(1, vec![ev(0)])),
            }],
        )],
    };
    let jit = JitFunction::compile(&f).expect("compiles");
    let run = |x: Vec<i64>, d: Vec<i64>| {
        let n = x.len();
        let mut bufs = vec![Buffer::Int(x), Buffer::Int(d), Buffer::Int(vec![0; n])];
        jit.run(&[n as i64], &mut bufs).map(|()| bufs)
    };
    let b = run(vec![7, -7, 9], vec![2, 2, -4]).expect("runs");
    assert_eq!(ints(&b[2]), &[3, -3, -2]);
    assert_eq!(
        run(vec![1, 2], vec![1, 0]).unwrap_err(),
        ExecError::DivisionByZero
    );
    assert_eq!(
        run(vec![i64::MIN], vec![-1]).unwrap_err(),
        ExecError::Overflow
    );
}

#[test]
fn malformed_programs_are_rejected() {
    let mut f = prefix_sum();
    // Use of the loop variable outside its loop.
    f.body.push(Stmt::Assign {
        array: 1,
        index: vec![ev(0)],
        value: Expr::Int(0),
    });
    assert!(JitFunction::compile(&f).is_err());
    let mut f = prefix_sum();
    // Storing a float into an int array.
    f.body = vec![Stmt::Assign {
        array: 1,
        index: vec![Expr::Int(0)],
        value: Expr::Float(1.0),
    }];
    assert!(JitFunction::compile(&f).is_err());
    let mut f = triangular();
    if let Stmt::For(ForLoop { lower, .. }) = &mut f.body[0] {
        lower.terms[0].div = 0;
    }
    assert!(JitFunction::compile(&f).is_err());
}

#[test]
fn disassembly_is_available() {
    let d = JitFunction::disassemble(&jacobi(), JitOptions::default()).expect("compiles");
    if std::env::var_os("ALPHAC_SHOW_ASM").is_some() {
        println!("{d}");
    }
    // The loop body stores and loads floats.
    assert!(
        d.contains("movsd") || d.contains("str") || d.contains("fst"),
        "{d}"
    );
}

#[test]
fn printer_shows_c_like_code() {
    let text = matmul().to_c();
    if std::env::var_os("ALPHAC_SHOW_C").is_some() {
        println!("{text}\n{}\n{}", indirect().to_c(), int_bool().to_c());
    }
    assert_eq!(
        text,
        "// requires N >= 0\n\
         void matmul(long N, double A[0 : N][0 : N], double B[0 : N][0 : N], double C[0 : N][0 : N]) {\n\
         \x20 double acc = 0.0;\n\
         \x20 for (i = 0; i <= N - 1; i++) {\n\
         \x20   for (j = 0; j <= N - 1; j++) {\n\
         \x20     acc = 0.0;\n\
         \x20     for (k = 0; k <= N - 1; k++) {\n\
         \x20       acc = (acc + (A[i][k] * B[k][j]));\n\
         \x20     }\n\
         \x20     C[i][j] = acc;\n\
         \x20   }\n\
         \x20 }\n\
         }\n"
    );
}

/// In-place recurrences through memory across unrolled copies:
/// `A[i] = A[i − 1] + A[i]` and `B[i] = B[i + 1] − B[i]` (reads of the
/// element the previous iteration wrote, and of one it has not written),
/// for lengths covering every remainder of the unrolled loop.
#[test]
fn in_place_recurrences_survive_unrolling() {
    let f = Function {
        name: "inplace".into(),
        params: vec!["N".into()],
        context: context(&["N"], &[(&[1], 0)]),
        arrays: vec![
            array("A", ElemType::Int, vec![p(0)]),
            array("B", ElemType::Float, vec![p(0)]),
        ],
        externals: vec![],
        loop_vars: vec!["i".into()],
        locals: vec![],
        body: vec![for_(
            0,
            Bound::aff(c(1)),
            Bound::aff(p(0).offset(-1).unwrap()),
            vec![
                Stmt::Assign {
                    array: 0,
                    index: vec![ev(0)],
                    value: bin(
                        BinOp::Add,
                        load(0, vec![Expr::Aff(v(0).offset(-1).unwrap())]),
                        load(0, vec![ev(0)]),
                    ),
                },
                Stmt::Assign {
                    array: 1,
                    index: vec![Expr::Aff(v(0).offset(-1).unwrap())],
                    value: bin(
                        BinOp::Sub,
                        load(1, vec![ev(0)]),
                        load(1, vec![Expr::Aff(v(0).offset(-1).unwrap())]),
                    ),
                },
            ],
        )],
    };
    let jit = JitFunction::compile(&f).expect("compiles");
    for n in 0..23usize {
        let a: Vec<i64> = (0..n as i64).map(|k| k * k - 7).collect();
        let b = data(n, 11);
        let mut bufs = vec![Buffer::Int(a.clone()), Buffer::Float(b.clone())];
        jit.run(&[n as i64], &mut bufs).expect("runs");
        let (mut wa, mut wb) = (a, b);
        for i in 1..n {
            wa[i] += wa[i - 1];
            wb[i - 1] = wb[i] - wb[i - 1];
        }
        assert_eq!(ints(&bufs[0]), &wa[..], "N = {n}");
        assert_eq!(floats(&bufs[1]), &wb[..], "N = {n}");
    }
}

/// `if`/`else` chains and blocks: `A[i] = i mod 3 == 0 ? 1 : (i >= 5 ? 2 : 3)`
/// written with statements.
#[test]
fn if_else_and_blocks() {
    let set = |k: i64| Stmt::Assign {
        array: 0,
        index: vec![ev(0)],
        value: Expr::Int(k),
    };
    let f = Function {
        name: "ifelse".into(),
        params: vec!["N".into()],
        context: context(&["N"], &[(&[1], 0)]),
        arrays: vec![array("A", ElemType::Int, vec![p(0)])],
        externals: vec![],
        loop_vars: vec!["i".into()],
        locals: vec![],
        body: vec![for_(
            0,
            Bound::aff(c(0)),
            Bound::aff(p(0).offset(-1).unwrap()),
            vec![Stmt::If {
                cond: bin(
                    BinOp::Eq,
                    bin(BinOp::Mod, ev(0), Expr::Int(3)),
                    Expr::Int(0),
                ),
                then: vec![set(1)],
                els: vec![Stmt::Block(vec![Stmt::If {
                    cond: bin(BinOp::Ge, ev(0), Expr::Int(5)),
                    then: vec![set(2)],
                    els: vec![set(3)],
                }])],
            }],
        )],
    };
    let jit = JitFunction::compile(&f).expect("compiles");
    let n = 13;
    let mut bufs = vec![Buffer::Int(vec![0; n])];
    jit.run(&[n as i64], &mut bufs).expect("runs");
    let want: Vec<i64> = (0..n as i64)
        .map(|i| {
            if i % 3 == 0 {
                1
            } else if i >= 5 {
                2
            } else {
                3
            }
        })
        .collect();
    assert_eq!(ints(&bufs[0]), &want[..]);
}

/// Discrete and beta draws agree with the runtime; invalid arguments of
/// discrete distributions are run-time errors.
#[test]
fn discrete_draws_match_runtime() {
    let x = || load(0, vec![ev(0)]);
    let draw = |dist: Distribution, args: Vec<Expr>, site: u32| {
        Expr::Random(Box::new(RandomDraw {
            dist,
            args,
            seed: Expr::Int(99),
            site,
            point: vec![ev(0)],
        }))
    };
    let f = Function {
        name: "draws".into(),
        params: vec!["N".into()],
        context: context(&["N"], &[(&[1], 0)]),
        arrays: vec![
            array("P", ElemType::Float, vec![p(0)]),
            array("Bern", ElemType::Bool, vec![p(0)]),
            array("Pois", ElemType::Int, vec![p(0)]),
            array("Beta", ElemType::Float, vec![p(0)]),
        ],
        externals: vec![],
        loop_vars: vec!["i".into()],
        locals: vec![],
        body: vec![for_(
            0,
            Bound::aff(c(0)),
            Bound::aff(p(0).offset(-1).unwrap()),
            vec![
                Stmt::Assign {
                    array: 1,
                    index: vec![ev(0)],
                    value: draw(Distribution::Bernoulli, vec![x()], 0),
                },
                Stmt::Assign {
                    array: 2,
                    index: vec![ev(0)],
                    value: draw(
                        Distribution::Poisson,
                        vec![bin(BinOp::Mul, x(), Expr::Float(60.0))],
                        1,
                    ),
                },
                Stmt::Assign {
                    array: 3,
                    index: vec![ev(0)],
                    value: draw(Distribution::Beta, vec![Expr::Float(2.0), x()], 2),
                },
            ],
        )],
    };
    let jit = JitFunction::compile(&f).expect("compiles");
    let n = 50;
    let ps: Vec<f64> = (0..n).map(|k| (k as f64 + 0.5) / n as f64).collect();
    let mut bufs = vec![
        Buffer::Float(ps.clone()),
        Buffer::Bool(vec![false; n]),
        Buffer::Int(vec![0; n]),
        Buffer::Float(vec![0.0; n]),
    ];
    jit.run(&[n as i64], &mut bufs).expect("runs");
    // The interpreter's key construction (see `math_and_rng_match_runtime`).
    let key = |site: i64, i: usize| {
        let prefix =
            alphac::runtime::rng::key_prefix(99, (site >> 16) as u64, (site & 0xffff) as u64, 1)
                as i64;
        host_fns::rt_rng_mix(prefix, i as i64)
    };
    for (i, &pi) in ps.iter().enumerate() {
        assert_eq!(
            bools(&bufs[1])[i],
            host_fns::rt_bernoulli(key(0, i), pi) == 1
        );
        assert_eq!(
            ints(&bufs[2])[i],
            host_fns::rt_poisson(key(1, i), pi * 60.0)
        );
        assert_eq!(
            floats(&bufs[3])[i].to_bits(),
            host_fns::rt_beta(key(2, i), 2.0, pi).to_bits()
        );
    }
    // p = 1.5 is not a probability.
    let mut bad = ps.clone();
    bad[7] = 1.5;
    let mut bufs = vec![
        Buffer::Float(bad),
        Buffer::Bool(vec![false; n]),
        Buffer::Int(vec![0; n]),
        Buffer::Float(vec![0.0; n]),
    ];
    assert_eq!(
        jit.run(&[n as i64], &mut bufs),
        Err(ExecError::BadDistributionArgument)
    );
}

/// Every accumulation operator on every type it applies to, into memory
/// (`R[0] op= X[i]`) and into a register (`r = r op X[i]`), against a Rust
/// fold in the same order.
#[test]
fn accumulations_match_rust_folds() {
    let ops = [
        ReduceOp::Add,
        ReduceOp::Mul,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::And,
        ReduceOp::Or,
    ];
    for ty in [ElemType::Int, ElemType::Float, ElemType::Bool] {
        for op in ops {
            let bool_op = matches!(op, ReduceOp::And | ReduceOp::Or);
            if bool_op != (ty == ElemType::Bool) {
                continue;
            }
            let f = Function {
                name: "acc".into(),
                params: vec!["N".into()],
                context: context(&["N"], &[(&[1], 0)]),
                arrays: vec![array("X", ty, vec![p(0)]), array("R", ty, vec![c(2)])],
                externals: vec![],
                loop_vars: vec!["i".into()],
                locals: vec![Local {
                    name: "r".into(),
                    ty,
                }],
                body: vec![
                    Stmt::SetLocal {
                        local: 0,
                        value: load(1, vec![Expr::Int(1)]),
                    },
                    for_(
                        0,
                        Bound::aff(c(0)),
                        Bound::aff(p(0).offset(-1).unwrap()),
                        vec![
                            Stmt::Accumulate(Accumulation {
                                array: 1,
                                index: vec![Expr::Int(0)],
                                op,
                                value: load(0, vec![ev(0)]),
                            }),
                            Stmt::SetLocal {
                                local: 0,
                                value: bin(
                                    alphac::codegen::loop_ast::acc_bin_op(op),
                                    Expr::Local(0),
                                    load(0, vec![ev(0)]),
                                ),
                            },
                        ],
                    ),
                    Stmt::Assign {
                        array: 1,
                        index: vec![Expr::Int(1)],
                        value: Expr::Local(0),
                    },
                ],
            };
            let jit = JitFunction::compile(&f).expect("compiles");
            let n = 37usize;
            match ty {
                ElemType::Int => {
                    let x: Vec<i64> = (0..n as i64)
                        .map(|k| (k * 13) % 7 - 3 + i64::from(k == 5))
                        .collect();
                    let x: Vec<i64> = if op == ReduceOp::Mul {
                        x.iter().map(|v| v.signum() * (1 + v.abs() % 2)).collect()
                    } else {
                        x
                    };
                    let init = if op == ReduceOp::Mul { 1 } else { 0 };
                    let mut bufs = vec![Buffer::Int(x.clone()), Buffer::Int(vec![init, init])];
                    jit.run(&[n as i64], &mut bufs).expect("runs");
                    let want = x.iter().fold(init, |a, &v| match op {
                        ReduceOp::Add => a + v,
                        ReduceOp::Mul => a * v,
                        ReduceOp::Max => a.max(v),
                        _ => a.min(v),
                    });
                    assert_eq!(ints(&bufs[1]), &[want, want], "{op:?}");
                }
                ElemType::Float => {
                    let x: Vec<f64> = data(n, 21).iter().map(|v| v + 1.0).collect();
                    let init = if op == ReduceOp::Mul { 1.0 } else { 0.0 };
                    let mut bufs = vec![Buffer::Float(x.clone()), Buffer::Float(vec![init, init])];
                    jit.run(&[n as i64], &mut bufs).expect("runs");
                    let want = x.iter().fold(init, |a, &v| match op {
                        ReduceOp::Add => a + v,
                        ReduceOp::Mul => a * v,
                        ReduceOp::Max => a.max(v),
                        _ => a.min(v),
                    });
                    assert_eq!(floats(&bufs[1]), &[want, want], "{op:?}");
                }
                ElemType::Bool => {
                    for pattern in [0u32, 1, 2] {
                        let x: Vec<bool> = (0..n)
                            .map(|k| match pattern {
                                0 => true,
                                1 => k != 17,
                                _ => k == 17,
                            })
                            .collect();
                        let init = op == ReduceOp::And;
                        let mut bufs =
                            vec![Buffer::Bool(x.clone()), Buffer::Bool(vec![init, init])];
                        jit.run(&[n as i64], &mut bufs).expect("runs");
                        let want = if op == ReduceOp::And {
                            x.iter().all(|&b| b)
                        } else {
                            x.iter().any(|&b| b)
                        };
                        assert_eq!(bools(&bufs[1]), &[want, want], "{op:?} {pattern}");
                    }
                }
            }
        }
    }
}

/// Compiled code is freed with its `JitFunction`: compiling and dropping
/// many functions keeps working, and live ones keep running.
#[test]
fn many_compilations_and_drops() {
    let keep = JitFunction::compile(&prefix_sum()).expect("compiles");
    for k in 0..300 {
        let jit = JitFunction::compile(&prefix_sum()).expect("compiles");
        let mut bufs = vec![Buffer::Int(vec![k, 1]), Buffer::Int(vec![0; 2])];
        jit.run(&[2], &mut bufs).expect("runs");
        assert_eq!(ints(&bufs[1]), &[k, k + 1]);
    }
    let mut bufs = vec![Buffer::Int(vec![2, 3]), Buffer::Int(vec![0; 2])];
    keep.run(&[2], &mut bufs).expect("runs");
    assert_eq!(ints(&bufs[1]), &[2, 5]);
}

#[test]
fn printer_shows_max_min_bounds_and_guards() {
    let f = Function {
        name: "bounds".into(),
        params: vec!["N".into(), "M".into()],
        context: context(&["N", "M"], &[(&[1, -1], 0)]),
        arrays: vec![array("A", ElemType::Float, vec![p(0)])],
        externals: vec![],
        loop_vars: vec!["i".into()],
        locals: vec![],
        body: vec![for_(
            0,
            Bound::aff(c(0)).and(plus(p(1), pv(0), -2), 3),
            Bound::aff(p(0).offset(-1).unwrap()).and(plus(c(7), pv(1), 2), 2),
            vec![Stmt::If {
                cond: bin(BinOp::Ge, Expr::Aff(v(0).plus(pv(1), -1)), Expr::Int(0)),
                then: vec![Stmt::Assign {
                    array: 0,
                    index: vec![ev(0)],
                    value: Expr::select(
                        bin(BinOp::Lt, load(0, vec![ev(0)]), Expr::Float(0.5)),
                        Expr::Math(MathFn::Sqrt, vec![Expr::Float(2.0)]),
                        Expr::Unary(
                            alphac::codegen::loop_ast::UnOp::Neg,
                            Box::new(Expr::Float(1.0)),
                        ),
                    ),
                }],
                els: vec![Stmt::Accumulate(Accumulation {
                    array: 0,
                    index: vec![ev(0)],
                    op: ReduceOp::Max,
                    value: Expr::cast(Cast::IntToFloat, ev(0)),
                })],
            }],
        )],
    };
    assert_eq!(
        f.to_c(),
        "// requires N - M >= 0\n\
         void bounds(long N, long M, double A[0 : N]) {\n\
         \x20 for (i = max(0, ceild(M - 2*N, 3)); i <= min(N - 1, floord(2*M + 7, 2)); i++) {\n\
         \x20   if ((i - M) >= 0) {\n\
         \x20     A[i] = ((A[i] < 0.5) ? sqrt(2.0) : -1.0);\n\
         \x20   } else {\n\
         \x20     A[i] = max(A[i], (double)i);\n\
         \x20   }\n\
         \x20 }\n\
         }\n"
    );
    assert!(JitFunction::compile(&f).is_ok());
}

/// A skewed nest — `for t in 0 ..= 2N − 2 { for i in max(0, t − N + 1)
/// ..= min(t, N − 1) { A[i][t − i] = t } }` — whose access `t − i` the
/// loop intervals alone cannot bound (`t − i ∈ [−(N − 1), 2N − 2]` by
/// intervals): the affine facts of the loops prove it within `0 ..= N − 1`,
/// so the fast variant runs. With the lower bound `t − N` instead the
/// access really leaves the box at `i = t − N`, and it is not proven.
#[test]
fn skewed_accesses_are_proven_by_the_loop_facts() {
    let mk = |shift: i64| Function {
        name: "skew".into(),
        params: vec!["N".into()],
        context: context(&["N"], &[(&[1], -1)]),
        arrays: vec![array("A", ElemType::Int, vec![p(0), p(0)])],
        externals: vec![],
        loop_vars: vec!["t".into(), "i".into()],
        locals: vec![],
        body: vec![for_(
            0,
            Bound::aff(c(0)),
            Bound::aff(plus(c(-2), pv(0), 2)),
            vec![for_(
                1,
                Bound::aff(c(0)).and(plus(plus(c(shift), Sym::Loop(LoopVar(0)), 1), pv(0), -1), 1),
                Bound::aff(v(0)).and(plus(c(-1), pv(0), 1), 1),
                vec![Stmt::Assign {
                    array: 0,
                    index: vec![ev(1), Expr::Aff(plus(v(0), Sym::Loop(LoopVar(1)), -1))],
                    value: ev(0),
                }],
            )],
        )],
    };
    let n = 6i64;
    let jit = JitFunction::compile(&mk(1)).expect("compiles");
    assert_eq!(jit.proves_affine_accesses(&[n]), Ok(true));
    let mut bufs = vec![Buffer::Int(vec![0; 36])];
    jit.run(&[n], &mut bufs).expect("runs");
    let expected: Vec<i64> = (0..6).flat_map(|i| (0..6).map(move |j| i + j)).collect();
    assert_eq!(ints(&bufs[0]), expected.as_slice());
    let jit = JitFunction::compile(&mk(0)).expect("compiles");
    assert_eq!(jit.proves_affine_accesses(&[n]), Ok(false));
    let mut bufs = vec![Buffer::Int(vec![0; 36])];
    assert!(matches!(
        jit.run(&[n], &mut bufs),
        Err(ExecError::ContractViolation { .. })
    ));
}

/// `B[i] = (i >= 1) ? A[i − 1] : A[i]` over `0 ..= N − 1`: intervals give
/// `i − 1 ∈ [−1, N − 2]`, but the select's first branch runs only when
/// `i >= 1` (loads are never speculated), so the access is proven and the
/// fast variant runs. Swapped (`(i >= 1) ? A[i] : A[i − 1]`), the second
/// branch reads `A[−1]` at `i = 0`: not proven, and an error when run.
#[test]
fn accesses_under_a_select_are_proven_by_its_condition() {
    let mk = |swap: bool| {
        let shifted = load(0, vec![Expr::Aff(v(0).offset(-1).unwrap())]);
        let same = load(0, vec![ev(0)]);
        let (a, b) = if swap {
            (same, shifted)
        } else {
            (shifted, same)
        };
        Function {
            name: "select".into(),
            params: vec!["N".into()],
            context: context(&["N"], &[(&[1], -1)]),
            arrays: vec![
                array("A", ElemType::Int, vec![p(0)]),
                array("B", ElemType::Int, vec![p(0)]),
            ],
            externals: vec![],
            loop_vars: vec!["i".into()],
            locals: vec![],
            body: vec![for_(
                0,
                Bound::aff(c(0)),
                Bound::aff(p(0).offset(-1).unwrap()),
                vec![Stmt::Assign {
                    array: 1,
                    index: vec![ev(0)],
                    value: Expr::Select(
                        Box::new(bin(BinOp::Ge, ev(0), Expr::Int(1))),
                        Box::new(a),
                        Box::new(b),
                    ),
                }],
            )],
        }
    };
    let jit = JitFunction::compile(&mk(false)).expect("compiles");
    assert_eq!(jit.proves_affine_accesses(&[5]), Ok(true));
    let mut bufs = vec![
        Buffer::Int(vec![10, 11, 12, 13, 14]),
        Buffer::Int(vec![0; 5]),
    ];
    jit.run(&[5], &mut bufs).expect("runs");
    assert_eq!(ints(&bufs[1]), &[10, 10, 11, 12, 13]);
    let jit = JitFunction::compile(&mk(true)).expect("compiles");
    assert_eq!(jit.proves_affine_accesses(&[5]), Ok(false));
    let mut bufs = vec![
        Buffer::Int(vec![10, 11, 12, 13, 14]),
        Buffer::Int(vec![0; 5]),
    ];
    assert!(matches!(
        jit.run(&[5], &mut bufs),
        Err(ExecError::ContractViolation { .. })
    ));
}

/// `B[i] = 3 · A[i]` over `0 <= i < N` as a parallel loop, alone or
/// nested in a sequential loop `t < T`.
fn scale(nested: bool) -> Function {
    let (t, i) = (0, 1);
    let mut body = vec![Stmt::For(ForLoop {
        var: LoopVar(i),
        parallel: true,
        lower: Bound::aff(c(0)),
        upper: Bound::aff(p(1).offset(-1).unwrap()),
        body: vec![Stmt::Assign {
            array: 1,
            index: vec![ev(i)],
            value: bin(BinOp::Mul, Expr::Float(3.0), load(0, vec![ev(i)])),
        }],
    })];
    if nested {
        body = vec![for_(
            t,
            Bound::aff(c(0)),
            Bound::aff(p(0).offset(-1).unwrap()),
            body,
        )];
    }
    Function {
        name: "scale".into(),
        params: vec!["T".into(), "N".into()],
        context: context(&["T", "N"], &[(&[1], 0), (&[0, 1], 0)]),
        arrays: vec![
            array("A", ElemType::Float, vec![p(1)]),
            array("B", ElemType::Float, vec![p(1)]),
        ],
        externals: vec![],
        loop_vars: vec!["t".into(), "i".into()],
        locals: vec![],
        body,
    }
}

/// The main function's optimized Cranelift IR (before the machine code).
fn main_clif(f: &Function) -> String {
    let d = JitFunction::disassemble(f, JitOptions::default()).expect("compiles");
    d.split("\nVCode").next().unwrap_or(&d).to_string()
}

#[test]
fn a_top_level_parallel_loop_is_compiled_once_outside_the_main_function() {
    // Run once per call, the loop is only in its outlined function: the
    // main function calls the host, which runs it on the calling thread
    // or splits it, and has no multiplication of its own.
    let alone = main_clif(&scale(false));
    assert!(!alone.contains("fmul"), "{alone}");
    assert!(alone.contains("call"), "{alone}");
    // Inside a sequential loop it runs once per `t`: short ones stay
    // inline (no host call below the minimum trip count).
    let nested = main_clif(&scale(true));
    assert!(nested.contains("fmul"), "{nested}");
    // Same results either way, on one thread and on several.
    for f in [scale(false), scale(true)] {
        let j = JitFunction::compile(&f).expect("compiles");
        for n in [0i64, 1, 5, 40] {
            let a: Vec<f64> = (0..n).map(|k| k as f64 + 0.5).collect();
            let mut bufs = vec![
                Buffer::Float(a.clone()),
                Buffer::Float(vec![0.0; n as usize]),
            ];
            j.run(&[2, n], &mut bufs).expect("runs");
            let want: Vec<f64> = a.iter().map(|x| 3.0 * x).collect();
            assert_eq!(bufs[1], Buffer::Float(want), "n = {n}");
        }
    }
}
