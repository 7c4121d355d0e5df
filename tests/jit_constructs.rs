//! Hand-built loop ASTs compiled with the JIT (continued from
//! `jit_kernels`): math functions and draws against the runtime, errors of
//! data arithmetic, in-place recurrences under unrolling, `if`/`else` and
//! blocks, discrete draws, accumulations against Rust folds, the printer's
//! bounds, accesses proven by the loop facts and by a select's condition,
//! and a top-level parallel loop compiled outside the main function.

mod common;

use alphac::codegen::loop_ast::{
    Accumulation, BinOp, Bound, Cast, Distribution, Expr, ForLoop, Function, Local, LoopVar,
    MathFn, RandomDraw, ReduceOp, Stmt, Sym,
};
use alphac::ir::types::ElemType;
use alphac::jit::{host_fns, Buffer, ExecError, JitFunction, JitOptions};

use common::kernels::*;

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
