//! Hand-built loop ASTs compiled with the JIT and compared with the same
//! loops written directly in Rust (bit-exact: same operation order): the
//! kernels (matmul, Jacobi, prefix sums, triangular bounds, reductions,
//! int and bool data, indirect reads), the contract checks, malformed
//! programs, listings. Statement forms, draws and access proofs are in
//! `jit_constructs`.

mod common;

use alphac::codegen::loop_ast::{
    Accumulation, BinOp, Bound, Cast, Expr, ForLoop, Function, Local, ReduceOp, Stmt,
};
use alphac::ir::types::{ElemType, Set, Space};
use alphac::jit::{Buffer, ExecError, JitFunction, JitOptions};
use alphac::poly::Constraint;

use common::kernels::*;

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
