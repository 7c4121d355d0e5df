//! Helpers of the loop-optimizer tests (`codegen_opt`, `codegen_split`):
//! example sources scanned before the loop optimizer, the optimizer with
//! its statistics, walks over the loop AST, runs of two functions on the
//! same random buffers, builders of hand-made loop nests and strategies
//! of random ones.

use alphac::codegen::loop_ast::{
    Accumulation, Affine, Array, BinOp, Bound, Dim, Expr, ForLoop, Function, Local, LoopVar,
    ReduceOp, Stmt,
};
use alphac::codegen::opt::{self, OptStats};
use alphac::codegen::scan;
use alphac::compile::{self};
use alphac::ir::types::{ElemType, Set, Space};
use alphac::jit::{Buffer, JitFunction, JitOptions};
use alphac::schedule::Scheduler;
use proptest::prelude::*;

pub fn source(name: &str) -> String {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("example exists")
}

/// The scanned loop program of the first system, before the loop
/// optimizer (the steps of `compile::loop_program` without `opt`).
pub fn scanned(src: &str, optimize: bool) -> Function {
    let p = compile::parse_program(src).expect("parses");
    let p = if optimize {
        alphac::sdr::optimize(&p, Scheduler::Pluto)
            .expect("optimizes")
            .program
    } else {
        p
    };
    let sched = alphac::deps::schedule_program(&p, Scheduler::Pluto).expect("schedules");
    scan::scan_system(&p, 0, &sched.systems[0]).expect("scans")
}

pub fn opt_stats(f: &Function) -> (Function, OptStats) {
    opt::optimize_with_stats(f).expect("optimizer accepts the program")
}

/// Every `For` of a statement list (pre-order).
pub fn loops(body: &[Stmt]) -> Vec<&Stmt> {
    let mut out = Vec::new();
    for s in body {
        match s {
            Stmt::For(ForLoop { body, .. }) => {
                out.push(s);
                out.extend(loops(body));
            }
            Stmt::If { then, els, .. } => {
                out.extend(loops(then));
                out.extend(loops(els));
            }
            Stmt::Block(b) => out.extend(loops(b)),
            _ => {}
        }
    }
    out
}

/// Whether `body` accesses array `a` (any statement or expression).
pub fn touches(body: &[Stmt], a: usize) -> bool {
    fn e(x: &Expr, a: usize) -> bool {
        match x {
            Expr::Load { array, index } => *array == a || index.iter().any(|i| e(i, a)),
            Expr::Unary(_, p) | Expr::Cast(_, p) => e(p, a),
            Expr::Binary(_, p, q) => e(p, a) || e(q, a),
            Expr::Select(c, p, q) => e(c, a) || e(p, a) || e(q, a),
            Expr::Math(_, xs) => xs.iter().any(|i| e(i, a)),
            Expr::Random(r) => r.args.iter().chain(&r.point).any(|i| e(i, a)) || e(&r.seed, a),
            _ => false,
        }
    }
    body.iter().any(|s| match s {
        Stmt::For(ForLoop { body, .. }) | Stmt::Block(body) => touches(body, a),
        Stmt::If { cond, then, els } => e(cond, a) || touches(then, a) || touches(els, a),
        Stmt::Assign {
            array,
            index,
            value,
        }
        | Stmt::Accumulate(Accumulation {
            array,
            index,
            value,
            ..
        }) => *array == a || index.iter().any(|i| e(i, a)) || e(value, a),
        Stmt::SetLocal { value, .. } => e(value, a),
        Stmt::Bind(b) => e(&b.guard, a) || e(&b.value, a) || touches(&b.body, a),
    })
}

pub fn is_degenerate(s: &Stmt) -> bool {
    let Stmt::For(ForLoop { lower, upper, .. }) = s else {
        return false;
    };
    lower.terms.len() == 1
        && upper.terms.len() == 1
        && lower.terms[0].div == 1
        && upper.terms[0].div == 1
        && lower.terms[0].expr == upper.terms[0].expr
}

/// Runs `f` and `g` (checked and fast variants) on the same random
/// buffers for `params`; both must succeed or fail alike, and on success
/// produce bit-identical buffers.
pub fn same_runs(f: &Function, g: &Function, params: &[i64], seed: u64) {
    for checked in [false, true] {
        let jf = JitFunction::compile_with(f, JitOptions { checked }).expect("compiles");
        let jg = JitFunction::compile_with(g, JitOptions { checked }).expect("compiles");
        let mut bf = jf.zeroed_buffers(params).expect("buffers");
        let mut r = seed;
        for b in bf.iter_mut() {
            match b {
                Buffer::Float(v) => v.iter_mut().for_each(|x| {
                    r = r
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    *x = ((r >> 33) % 1000) as f64 / 7.0;
                }),
                Buffer::Int(v) => v.iter_mut().for_each(|x| {
                    r = r
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    *x = ((r >> 33) % 5) as i64;
                }),
                Buffer::Bool(v) => v.iter_mut().for_each(|x| {
                    r = r
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    *x = (r >> 40).is_multiple_of(2);
                }),
            }
        }
        let mut bg = bf.clone();
        let rf = jf.run(params, &mut bf);
        let rg = jg.run(params, &mut bg);
        assert_eq!(rf, rg, "checked {checked} params {params:?}\n{}", g.to_c());
        if rf.is_ok() {
            for (x, y) in bf.iter().zip(&bg) {
                let same = match (x, y) {
                    (Buffer::Float(p), Buffer::Float(q)) => {
                        p.len() == q.len()
                            && p.iter().zip(q).all(|(a, b)| a.to_bits() == b.to_bits())
                    }
                    _ => x == y,
                };
                assert!(same, "checked {checked} params {params:?}\n{}", g.to_c());
            }
        }
        // The interval proof of unchecked affine accesses is not lost.
        if jf.proves_affine_accesses(params) == Ok(true) {
            assert_eq!(jg.proves_affine_accesses(params), Ok(true), "{}", g.to_c());
        }
    }
}

/// The loop variables of the hand-built programs.
pub const I: LoopVar = LoopVar(0);
pub const J: LoopVar = LoopVar(1);

pub fn aff_i(k: i64) -> Expr {
    Expr::Aff(Affine::var(I).offset(k).expect("small"))
}
pub fn aff_j(k: i64) -> Expr {
    Expr::Aff(Affine::var(J).offset(k).expect("small"))
}
pub fn n_minus(k: i64) -> Affine {
    Affine::param(0).offset(-k).expect("small")
}

/// Arrays `X` (input), `Y`, `Z` of ints over `0 .. N + 3`; loop variables
/// `i`, `j`; `for i in 0 ..= N-1 { for j in lo ..= hi { body } }`.
pub fn two_loops(lo: Bound, hi: Bound, body: Vec<Stmt>) -> Function {
    let arr = |name: &str| Array {
        name: name.into(),
        ty: ElemType::Int,
        dims: vec![Dim {
            lower: Affine::cst(0),
            extent: Affine::param(0).offset(4).expect("small"),
        }],
        domain: None,
    };
    Function {
        name: "t".into(),
        params: vec!["N".into()],
        context: Set::universe(Space::set(&["N"], &[] as &[&str])),
        arrays: vec![arr("X"), arr("Y"), arr("Z")],
        externals: vec![],
        loop_vars: vec!["i".into(), "j".into()],
        locals: vec![Local {
            name: "s".into(),
            ty: ElemType::Int,
        }],
        body: vec![Stmt::For(ForLoop {
            var: I,
            parallel: false,
            lower: Bound::aff(Affine::cst(0)),
            upper: Bound::aff(n_minus(1)),
            body: vec![Stmt::For(ForLoop {
                var: J,
                parallel: false,
                lower: lo,
                upper: hi,
                body,
            })],
        })],
    }
}

pub fn acc_z(index: Expr, value: Expr) -> Stmt {
    Stmt::Accumulate(Accumulation {
        array: 2,
        index: vec![index],
        op: ReduceOp::Add,
        value,
    })
}

pub fn hoisted(f: &Function) -> usize {
    let mut g = f.clone();
    opt::hoist_accumulators(&mut g)
}

// Random loop programs.

pub fn lo_bound() -> impl Strategy<Value = Bound> {
    prop_oneof![
        Just(Bound::aff(Affine::cst(0))),
        Just(Bound::aff(Affine::var(I))),
        Just(Bound::aff(Affine::var(I).offset(1).expect("small"))),
        Just(Bound::aff(Affine::var(I).offset(2).expect("small"))),
        Just(Bound::aff(Affine::cst(0)).and(Affine::var(I).offset(-1).expect("small"), 1)),
        Just(Bound::div(Affine::var(I), 2)),
    ]
}

pub fn hi_bound() -> impl Strategy<Value = Bound> {
    prop_oneof![
        Just(Bound::aff(n_minus(1))),
        Just(Bound::aff(Affine::var(I))),
        Just(Bound::aff(Affine::var(I).offset(2).expect("small"))),
        Just(Bound::aff(Affine::var(I).offset(-1).expect("small"))),
        Just(Bound::aff(n_minus(1)).and(Affine::var(I).offset(1).expect("small"), 1)),
        Just(Bound::div(n_minus(1), 2)),
    ]
}

/// Indices of Z: loop-invariant in j (the candidates) or not.
pub fn z_index() -> impl Strategy<Value = Expr> {
    prop_oneof![
        12 => Just(aff_i(0)),
        1 => Just(Expr::Int(0)),
        1 => Just(aff_i(1)),
        1 => Just(aff_j(0)),
    ]
}

pub fn value() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        Just(Expr::load(0, vec![aff_j(0)])),
        Just(Expr::load(0, vec![aff_i(0)])),
        z_index().prop_map(|i| Expr::load(2, vec![i])),
        (-2i64..3).prop_map(Expr::Int),
        Just(aff_j(0)),
        Just(Expr::Local(0)),
    ];
    leaf.prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::bin(BinOp::Add, a, b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::bin(BinOp::Mul, a, b)),
            (inner.clone(), inner).prop_map(|(a, b)| Expr::bin(BinOp::Max, a, b)),
        ]
    })
}

pub fn inner_stmt() -> impl Strategy<Value = Stmt> {
    let simple = prop_oneof![
        4 => (
            prop_oneof![Just(ReduceOp::Add), Just(ReduceOp::Mul), Just(ReduceOp::Max), Just(ReduceOp::Min)],
            z_index(),
            value()
        )
            .prop_map(|(op, i, v)| Stmt::Accumulate(Accumulation {
                array: 2,
                index: vec![i],
                op,
                value: v
            })),
        2 => value().prop_map(|v| Stmt::Assign {
            array: 1,
            index: vec![aff_j(0)],
            value: v
        }),
        1 => (z_index(), value()).prop_map(|(i, v)| Stmt::Assign {
            array: 2,
            index: vec![i],
            value: v
        }),
        1 => value().prop_map(|v| Stmt::SetLocal { local: 0, value: v }),
    ];
    let guarded = (-1i64..3, simple.clone(), simple.clone()).prop_map(|(k, t, e)| Stmt::If {
        cond: Expr::bin(BinOp::Ge, aff_j(0), aff_i(k)),
        then: vec![t],
        els: vec![e],
    });
    prop_oneof![3 => simple, 1 => guarded]
}
