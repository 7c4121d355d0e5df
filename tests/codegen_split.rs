//! Index-set splitting in the loop optimizer (`codegen::opt::split_loops`):
//! Jacobi's innermost loops lose their guards, random guarded loops run the
//! same after splitting, and the interval proof of an outer index survives
//! it (split from `codegen_opt`, whose helpers it shares).

mod common;

use alphac::codegen::loop_ast::{
    Accumulation, Affine, BinOp, Bound, Expr, ForLoop, Function, Stmt,
};
use alphac::codegen::opt::{self};
use alphac::compile::{self, Options};
use alphac::jit::{Buffer, JitFunction};
use common::opt::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

// ---------------------------------------------------------------------------
// Index-set splitting.

/// Whether an expression contains a `select`.
fn has_select(e: &Expr) -> bool {
    match e {
        Expr::Select(..) => true,
        Expr::Load { index, .. } => index.iter().any(has_select),
        Expr::Unary(_, a) | Expr::Cast(_, a) => has_select(a),
        Expr::Binary(_, a, b) => has_select(a) || has_select(b),
        Expr::Math(_, xs) => xs.iter().any(has_select),
        _ => false,
    }
}

/// Whether statements contain an `if` or a `select` (outside loops
/// nested in them too).
fn has_guard(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::If { .. } => true,
        Stmt::For(ForLoop { body, .. }) | Stmt::Block(body) => has_guard(body),
        Stmt::Assign { index, value, .. } | Stmt::Accumulate(Accumulation { index, value, .. }) => {
            has_select(value) || index.iter().any(has_select)
        }
        Stmt::SetLocal { value, .. } => has_select(value),
        Stmt::Bind(_) => true,
    })
}

#[test]
fn jacobi_innermost_loops_have_no_guard() {
    let f = scanned(&source("jacobi_1d"), false);
    let innermost = |h: &Function| -> Vec<bool> {
        loops(&h.body)
            .into_iter()
            .filter_map(|s| match s {
                Stmt::For(ForLoop { body, .. }) if loops(body).is_empty() => Some(has_guard(body)),
                _ => None,
            })
            .collect()
    };
    // The scanned program keeps the boundary cases of X as a select in
    // its innermost loop (Y, separated by the scanner, has a loop of its own).
    assert!(innermost(&f).contains(&true), "{}", f.to_c());
    let (g, st) = opt_stats(&f);
    assert!(st.split_loops >= 2, "{st:?}");
    let inner = innermost(&g);
    assert!(inner.len() >= 3, "{}", g.to_c());
    assert!(inner.iter().all(|guarded| !guarded), "{}", g.to_c());
    // No guard or select anywhere.
    assert!(!has_guard(&g.body), "{}", g.to_c());
    // The pipeline (`emit`) prints it.
    let text = compile::emit(
        &compile::parse_program(&source("jacobi_1d")).expect("parses"),
        "jacobi_1d",
        &Options {
            optimize: false,
            ..Options::default()
        },
    )
    .expect("emits");
    assert!(!text.contains("if (") && !text.contains(" ? "), "{text}");
    for params in [[1, 3], [2, 3], [3, 5], [5, 8]] {
        same_runs(&f, &g, &params, 21);
    }
}

/// Guards for the split test: `&&`/`||`/`!` of affine comparisons in `j`
/// and `i`, sometimes with a data-dependent operand first (`X[j] > 1`).
fn split_cond() -> impl Strategy<Value = Expr> {
    let atom = (
        prop_oneof![
            Just(BinOp::Ge),
            Just(BinOp::Gt),
            Just(BinOp::Le),
            Just(BinOp::Lt),
            Just(BinOp::Eq),
            Just(BinOp::Ne)
        ],
        -2i64..3,
        -2i64..3,
        -1i64..2,
        -3i64..4,
    )
        .prop_map(|(op, cj, ci, cn, k)| {
            let mut a = Affine::cst(k);
            if cj != 0 {
                a = a.plus(alphac::codegen::loop_ast::Sym::Loop(J), cj);
            }
            if ci != 0 {
                a = a.plus(alphac::codegen::loop_ast::Sym::Loop(I), ci);
            }
            if cn != 0 {
                a = a.plus(alphac::codegen::loop_ast::Sym::Param(0), cn);
            }
            Expr::bin(op, Expr::Aff(a), Expr::Int(0))
        });
    let leaf = prop_oneof![
        6 => atom,
        1 => Just(Expr::bin(BinOp::Gt, Expr::load(0, vec![aff_j(0)]), Expr::Int(1))),
    ];
    leaf.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::bin(BinOp::And, a, b)),
            (inner.clone(), inner).prop_map(|(a, b)| Expr::bin(BinOp::Or, a, b)),
        ]
    })
}

fn split_stmt() -> impl Strategy<Value = Stmt> {
    (split_cond(), split_cond(), value(), value(), 0usize..3).prop_map(|(c, d, v, w, kind)| {
        let sel = Expr::select(d, v.clone(), w.clone());
        match kind {
            0 => Stmt::If {
                cond: c,
                then: vec![acc_z(aff_i(0), v)],
                els: vec![Stmt::Assign {
                    array: 1,
                    index: vec![aff_j(0)],
                    value: sel,
                }],
            },
            1 => Stmt::Assign {
                array: 1,
                index: vec![aff_j(0)],
                value: sel,
            },
            _ => Stmt::If {
                cond: c,
                then: vec![Stmt::Assign {
                    array: 1,
                    index: vec![aff_j(0)],
                    value: sel,
                }],
                els: vec![],
            },
        }
    })
}

#[test]
fn random_guarded_loops_run_the_same_after_splitting() {
    let mut runner = TestRunner::new(Config {
        cases: 120,
        ..Config::default()
    });
    let strat = (
        lo_bound(),
        hi_bound(),
        prop::collection::vec(split_stmt(), 1..4),
    );
    let splits = std::cell::Cell::new(0usize);
    runner
        .run(&strat, |(lo, hi, body)| {
            let f = two_loops(lo, hi, body);
            f.check().expect("well formed");
            let mut g = f.clone();
            splits.set(splits.get() + opt::split_loops(&mut g));
            g.check().expect("split program well formed");
            let h = opt::optimize(&f).expect("ok");
            for n in [0, 1, 2, 3, 6] {
                same_runs(&f, &g, &[n], n as u64 + 3);
                same_runs(&f, &h, &[n], n as u64 + 5);
            }
            Ok(())
        })
        .expect("property holds");
    assert!(splits.get() > 60, "only {} splits", splits.get());
}

/// Not a test: timings of jacobi_1d through the pipeline at T = 100,
/// N = 100,000 with and without splitting (run with `--ignored
/// --nocapture` in release mode).
#[test]
#[ignore]
fn measure_jacobi_1d() {
    let f = scanned(&source("jacobi_1d"), false);
    let g = opt::optimize(&f).expect("ok");
    // The other passes only: the same pipeline without `split_loops`.
    let mut h = f.clone();
    opt::remove_degenerate_loops(&mut h);
    opt::hoist_accumulators(&mut h);
    opt::simplify_guards(&mut h);
    let params = [100i64, 100_000];
    let time = |p: &Function| {
        let j = JitFunction::compile(p).expect("compiles");
        println!(
            "proves affine accesses: {:?}",
            j.proves_affine_accesses(&params)
        );
        let mut bufs = j.zeroed_buffers(&params).expect("buffers");
        for b in bufs.iter_mut() {
            if let Buffer::Float(v) = b {
                for (k, x) in v.iter_mut().enumerate() {
                    *x = (k % 17) as f64 * 0.25;
                }
            }
        }
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let t = std::time::Instant::now();
            j.run(&params, &mut bufs).expect("runs");
            best = best.min(t.elapsed().as_secs_f64());
        }
        best
    };
    let (tf, th, tg) = (time(&f), time(&h), time(&g));
    println!(
        "jacobi_1d T=100 N=100000: scanned {:.2} ms, optimized without splitting {:.2} ms, with splitting {:.2} ms (speed-up {:.2}x)",
        tf * 1e3,
        th * 1e3,
        tg * 1e3,
        th / tg
    );
}

#[test]
fn interval_proof_of_an_outer_index_survives_splitting() {
    // for i in 0 ..= N-1 { for j in 0 ..= N-1 { if (j >= i + 1) Z[i] += X[j] } }
    // with Z over 0 .. N-2: only the guard bounds i (i <= j - 1 <= N - 2).
    let mut f = two_loops(
        Bound::aff(Affine::cst(0)),
        Bound::aff(n_minus(1)),
        vec![Stmt::If {
            cond: Expr::bin(BinOp::Ge, aff_j(0), aff_i(1)),
            then: vec![acc_z(aff_i(0), Expr::load(0, vec![aff_j(0)]))],
            els: vec![],
        }],
    );
    f.arrays[2].dims[0].extent = n_minus(1);
    let mut g = f.clone();
    assert_eq!(opt::split_loops(&mut g), 1);
    let h = opt::optimize(&f).expect("ok");
    for n in [2, 5] {
        let jf = JitFunction::compile(&f).expect("compiles");
        assert_eq!(jf.proves_affine_accesses(&[n]), Ok(true));
        same_runs(&f, &g, &[n], 7);
        same_runs(&f, &h, &[n], 8);
    }
}
