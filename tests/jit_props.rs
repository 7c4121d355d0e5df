//! Property tests of the JIT against brute force:
//! - loop nests with random `max/ceil` lower and `min/floor` upper bounds
//!   visit exactly the integer points satisfying the defining inequalities
//!   (`d·j >= e` for lower terms, `d·j <= e` for upper terms), in
//!   lexicographic order, in fast and in checked mode;
//! - int division operators satisfy their defining inequalities, checked
//!   arithmetic agrees with Rust's `checked_*`.

use alphac::codegen::loop_ast::{
    Accumulation, Affine, Array, BinOp, Bound, BoundTerm, Dim, Expr, ForLoop, Function, Local,
    LoopVar, ReduceOp, Stmt, Sym,
};
use alphac::ir::types::{ElemType, Set, Space};
use alphac::jit::{Buffer, ExecError, JitFunction, JitOptions};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// A bound term `(c_outer·i + c_par·N + k) / d` (for the inner loop) or
/// `(c_par·N + k) / d` (outer loop: `c_outer` ignored).
#[derive(Debug, Clone)]
struct Term {
    c_outer: i64,
    c_par: i64,
    k: i64,
    d: i64,
}

/// Lower terms lean negative and upper terms positive, so that most nests
/// are non-empty.
fn term(upper: bool) -> impl Strategy<Value = Term> {
    let s = if upper { 1 } else { -1 };
    (-3i64..=3, -1i64..=2, -3i64..=12, 1i64..=4).prop_map(move |(c_outer, c_par, k, d)| Term {
        c_outer,
        c_par: s * c_par,
        k: s * k,
        d,
    })
}

fn aff(t: &Term, outer: bool) -> Affine {
    let mut a = Affine::cst(t.k).plus(Sym::Param(0), t.c_par);
    if outer {
        a = a.plus(Sym::Loop(LoopVar(0)), t.c_outer);
    }
    a
}

fn bound(ts: &[Term], outer: bool) -> Bound {
    Bound {
        terms: ts
            .iter()
            .map(|t| BoundTerm {
                expr: aff(t, outer),
                div: t.d,
            })
            .collect(),
    }
}

const LIMIT: usize = 150;

/// Two nested loops writing `(i, j)` into a trace `T` at the position
/// given by a counter (a data-dependent index: an overfull trace is an
/// out-of-bounds error, not a crash).
fn nest(lo_i: &[Term], hi_i: &[Term], lo_j: &[Term], hi_j: &[Term]) -> Function {
    let (i, j) = (LoopVar(0), LoopVar(1));
    let write = |slot: i64, val: Expr| Stmt::Assign {
        array: 0,
        index: vec![Expr::bin(
            BinOp::Add,
            Expr::bin(BinOp::Mul, Expr::Local(0), Expr::Int(2)),
            Expr::Int(slot),
        )],
        value: val,
    };
    Function {
        name: "nest".into(),
        params: vec!["N".into()],
        context: Set::universe(Space::set(&["N"], &[] as &[&str])),
        arrays: vec![Array {
            name: "T".into(),
            ty: ElemType::Int,
            dims: vec![Dim {
                lower: Affine::cst(0),
                extent: Affine::cst(2 * LIMIT as i64),
            }],
            domain: None,
        }],
        externals: vec![],
        loop_vars: vec!["i".into(), "j".into()],
        locals: vec![Local {
            name: "n".into(),
            ty: ElemType::Int,
        }],
        body: vec![Stmt::For(ForLoop {
            var: i,
            parallel: false,
            lower: bound(lo_i, false),
            upper: bound(hi_i, false),
            body: vec![Stmt::For(ForLoop {
                var: j,
                parallel: false,
                lower: bound(lo_j, true),
                upper: bound(hi_j, true),
                body: vec![
                    write(0, Expr::var(i)),
                    write(1, Expr::var(j)),
                    Stmt::SetLocal {
                        local: 0,
                        value: Expr::bin(BinOp::Add, Expr::Local(0), Expr::Int(1)),
                    },
                ],
            })],
        })],
    }
}

/// Brute force: the points `(i, j)` with `d·x >= e` for every lower term
/// and `d·x <= e` for every upper term, in lexicographic order.
fn brute(n: i64, lo_i: &[Term], hi_i: &[Term], lo_j: &[Term], hi_j: &[Term]) -> Vec<(i64, i64)> {
    let val = |t: &Term, i: i64| t.c_outer * i + t.c_par * n + t.k;
    let val0 = |t: &Term| t.c_par * n + t.k;
    let mut pts = Vec::new();
    // Outer bounds are within 2·6 + 12 = 24 of zero, so |i| <= 24; inner
    // ones within 3·24 + 24 = 96, so |j| <= 96.
    for i in -200..=200i64 {
        if !lo_i.iter().all(|t| t.d * i >= val0(t)) || !hi_i.iter().all(|t| t.d * i <= val0(t)) {
            continue;
        }
        for j in -1000..=1000i64 {
            if lo_j.iter().all(|t| t.d * j >= val(t, i))
                && hi_j.iter().all(|t| t.d * j <= val(t, i))
            {
                pts.push((i, j));
            }
        }
    }
    pts
}

#[test]
fn loop_bounds_scan_exactly_the_defining_inequalities() {
    let terms = |upper| prop::collection::vec(term(upper), 1..=2);
    let strat = (
        terms(false),
        terms(true),
        terms(false),
        terms(true),
        -6i64..=6,
    );
    let mut runner = TestRunner::new(Config::with_cases(300));
    // (empty, fits, overfull) outcomes seen: the generator must exercise
    // all three.
    let seen = std::cell::Cell::new((0, 0, 0));
    runner
        .run(&strat, |(lo_i, hi_i, lo_j, hi_j, n)| {
            let f = nest(&lo_i, &hi_i, &lo_j, &hi_j);
            let want = brute(n, &lo_i, &hi_i, &lo_j, &hi_j);
            let (e, m, o) = seen.get();
            seen.set(match want.len() {
                0 => (e + 1, m, o),
                l if l <= LIMIT => (e, m + 1, o),
                _ => (e, m, o + 1),
            });
            for checked in [false, true] {
                let jit = JitFunction::compile_with(&f, JitOptions { checked }).expect("compiles");
                let mut bufs = vec![Buffer::Int(vec![0; 2 * LIMIT])];
                let r = jit.run(&[n], &mut bufs);
                if want.len() > LIMIT {
                    prop_assert_eq!(
                        r,
                        Err(ExecError::OutOfBounds {
                            array: "T".into(),
                            point: vec![2 * LIMIT as i64],
                        })
                    );
                } else {
                    prop_assert_eq!(r, Ok(()));
                    let t = bufs[0].as_int().expect("int");
                    let got: Vec<(i64, i64)> =
                        (0..want.len()).map(|k| (t[2 * k], t[2 * k + 1])).collect();
                    prop_assert_eq!(&got, &want);
                    prop_assert!(t[2 * want.len()..].iter().all(|&x| x == 0));
                }
            }
            Ok(())
        })
        .expect("property holds");
    let (e, m, o) = seen.get();
    assert!(e > 0 && m > 20 && o > 0, "outcomes {:?}", (e, m, o));
}

/// `Z[k] = X[k] op Y[k]` for ints.
fn elementwise(op: BinOp) -> Function {
    let k = LoopVar(0);
    let arr = |name: &str| Array {
        name: name.into(),
        ty: ElemType::Int,
        dims: vec![Dim {
            lower: Affine::cst(0),
            extent: Affine::param(0),
        }],
        domain: None,
    };
    Function {
        name: "elementwise".into(),
        params: vec!["N".into()],
        context: Set::universe(Space::set(&["N"], &[] as &[&str])),
        arrays: vec![arr("X"), arr("Y"), arr("Z")],
        externals: vec![],
        loop_vars: vec!["k".into()],
        locals: vec![],
        body: vec![Stmt::For(ForLoop {
            var: k,
            parallel: false,
            lower: Bound::aff(Affine::cst(0)),
            upper: Bound::aff(Affine::param(0).offset(-1).expect("no overflow")),
            body: vec![Stmt::Assign {
                array: 2,
                index: vec![Expr::var(k)],
                value: Expr::bin(
                    op,
                    Expr::load(0, vec![Expr::var(k)]),
                    Expr::load(1, vec![Expr::var(k)]),
                ),
            }],
        })],
    }
}

fn int_operand() -> impl Strategy<Value = i64> {
    prop_oneof![
        -20i64..=20,
        any::<i64>(),
        Just(i64::MIN),
        Just(i64::MAX),
        Just(-1i64),
    ]
}

#[test]
fn int_operators_satisfy_their_definitions() {
    let ops = [
        BinOp::FloorDiv,
        BinOp::CeilDiv,
        BinOp::Mod,
        BinOp::Div,
        BinOp::Rem,
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Min,
        BinOp::Max,
    ];
    let jits: Vec<JitFunction> = ops
        .iter()
        .map(|&op| JitFunction::compile(&elementwise(op)).expect("compiles"))
        .collect();
    let mut runner = TestRunner::new(Config::with_cases(2000));
    runner
        .run(&(int_operand(), int_operand()), |(a, b)| {
            for (op, jit) in ops.iter().zip(&jits) {
                let mut bufs = vec![
                    Buffer::Int(vec![a]),
                    Buffer::Int(vec![b]),
                    Buffer::Int(vec![0]),
                ];
                let r = jit.run(&[1], &mut bufs);
                let z = bufs[2].as_int().expect("int")[0];
                let (a2, b2, z2) = (i128::from(a), i128::from(b), i128::from(z));
                let is_div = matches!(
                    op,
                    BinOp::FloorDiv | BinOp::CeilDiv | BinOp::Mod | BinOp::Div | BinOp::Rem
                );
                if is_div && b == 0 {
                    prop_assert_eq!(r, Err(ExecError::DivisionByZero));
                    continue;
                }
                if is_div && a == i64::MIN && b == -1 {
                    prop_assert_eq!(r, Err(ExecError::Overflow));
                    continue;
                }
                let exact = match op {
                    BinOp::Add => Some(a2 + b2),
                    BinOp::Sub => Some(a2 - b2),
                    BinOp::Mul => Some(a2 * b2),
                    _ => None,
                };
                if let Some(e) = exact {
                    if e < i128::from(i64::MIN) || e > i128::from(i64::MAX) {
                        prop_assert_eq!(r, Err(ExecError::Overflow));
                    } else {
                        prop_assert_eq!(r, Ok(()));
                        prop_assert_eq!(z2, e);
                    }
                    continue;
                }
                prop_assert_eq!(r, Ok(()));
                match op {
                    // q = ⌊a/b⌋  ⟺  q ≤ a/b < q + 1  ⟺ (for b > 0)
                    // b·q ≤ a < b·q + b, (for b < 0) b·q ≥ a > b·q + b.
                    BinOp::FloorDiv => {
                        if b > 0 {
                            prop_assert!(b2 * z2 <= a2 && a2 < b2 * z2 + b2);
                        } else {
                            prop_assert!(b2 * z2 >= a2 && a2 > b2 * z2 + b2);
                        }
                    }
                    // q = ⌈a/b⌉  ⟺  q − 1 < a/b ≤ q.
                    BinOp::CeilDiv => {
                        if b > 0 {
                            prop_assert!(b2 * (z2 - 1) < a2 && a2 <= b2 * z2);
                        } else {
                            prop_assert!(b2 * (z2 - 1) > a2 && a2 >= b2 * z2);
                        }
                    }
                    // r = a − b·⌊a/b⌋: same sign as b (or 0), |r| < |b|,
                    // and b divides a − r.
                    BinOp::Mod => {
                        prop_assert!(z2.abs() < b2.abs());
                        prop_assert!(z2 == 0 || (z2 > 0) == (b2 > 0));
                        prop_assert_eq!((a2 - z2) % b2, 0);
                    }
                    BinOp::Div => prop_assert_eq!(Some(z), a.checked_div(b)),
                    BinOp::Rem => prop_assert_eq!(Some(z), a.checked_rem(b)),
                    BinOp::Min => prop_assert_eq!(z, a.min(b)),
                    BinOp::Max => prop_assert_eq!(z, a.max(b)),
                    _ => {}
                }
            }
            Ok(())
        })
        .expect("property holds");
}

/// A guarded affine access `A[α·i + β·j + γ] += 1` inside a random nest,
/// under the guard `a·i + b·j + c·N + k >= 0` (sometimes `== 0`).
#[derive(Debug, Clone)]
struct Guarded {
    lo_i: Vec<Term>,
    hi_i: Vec<Term>,
    lo_j: Vec<Term>,
    hi_j: Vec<Term>,
    guard: (i64, i64, i64, i64, bool),
    access: (i64, i64, i64),
}

fn guarded_fn(g: &Guarded) -> Function {
    let (i, j) = (LoopVar(0), LoopVar(1));
    let (ga, gb, gc, gk, eq) = g.guard;
    let lhs = Affine::cst(gk)
        .plus(Sym::Loop(i), ga)
        .plus(Sym::Loop(j), gb)
        .plus(Sym::Param(0), gc);
    let cond = Expr::bin(
        if eq { BinOp::Eq } else { BinOp::Ge },
        Expr::Aff(lhs),
        Expr::Int(0),
    );
    let (al, be, ga2) = g.access;
    let idx = Affine::cst(ga2)
        .plus(Sym::Loop(i), al)
        .plus(Sym::Loop(j), be);
    Function {
        name: "guarded".into(),
        params: vec!["N".into(), "M".into()],
        context: Set::universe(Space::set(&["N", "M"], &[] as &[&str])),
        arrays: vec![Array {
            name: "A".into(),
            ty: ElemType::Int,
            dims: vec![Dim {
                lower: Affine::cst(0),
                extent: Affine::param(1),
            }],
            domain: None,
        }],
        externals: vec![],
        loop_vars: vec!["i".into(), "j".into()],
        locals: vec![],
        body: vec![Stmt::For(ForLoop {
            var: i,
            parallel: false,
            lower: bound(&g.lo_i, false),
            upper: bound(&g.hi_i, false),
            body: vec![Stmt::For(ForLoop {
                var: j,
                parallel: false,
                lower: bound(&g.lo_j, true),
                upper: bound(&g.hi_j, true),
                body: vec![Stmt::If {
                    cond,
                    then: vec![Stmt::Accumulate(Accumulation {
                        array: 0,
                        index: vec![Expr::Aff(idx)],
                        op: alphac::codegen::loop_ast::ReduceOp::Add,
                        value: Expr::Int(1),
                    })],
                    els: vec![],
                }],
            })],
        })],
    }
}

/// Soundness of the interval analysis: whenever it proves the affine
/// accesses in bounds (fast, unchecked variant), the fully checked
/// variant finds no violation either, and both compute the same array;
/// when it does not, the run still agrees with the checked mode.
#[test]
fn interval_analysis_is_sound() {
    let terms = |upper| prop::collection::vec(term(upper), 1..=2);
    let strat = (
        terms(false),
        terms(true),
        terms(false),
        terms(true),
        (-2i64..=2, -2i64..=2, -1i64..=1, -10i64..=10, any::<bool>()),
        (-2i64..=2, -2i64..=2, -5i64..=30),
        (-6i64..=6, 0i64..=40),
    );
    let mut runner = TestRunner::new(Config::with_cases(300));
    let proven = std::cell::Cell::new((0, 0));
    runner
        .run(&strat, |(lo_i, hi_i, lo_j, hi_j, guard, access, (n, m))| {
            let g = Guarded {
                lo_i,
                hi_i,
                lo_j,
                hi_j,
                guard,
                access,
            };
            let f = guarded_fn(&g);
            let fast = JitFunction::compile(&f).expect("compiles");
            let checked =
                JitFunction::compile_with(&f, JitOptions { checked: true }).expect("compiles");
            let mu = m as usize;
            let mut b1 = vec![Buffer::Int(vec![0; mu])];
            let mut b2 = vec![Buffer::Int(vec![0; mu])];
            let r1 = fast.run(&[n, m], &mut b1);
            let r2 = checked.run(&[n, m], &mut b2);
            let p = fast.proves_affine_accesses(&[n, m]).expect("no overflow");
            let (yes, no) = proven.get();
            proven.set(if p { (yes + 1, no) } else { (yes, no + 1) });
            if p {
                prop_assert_eq!(&r2, &Ok(()));
            }
            prop_assert_eq!(&r1, &r2);
            if r1.is_ok() {
                prop_assert_eq!(&b1, &b2);
            }
            Ok(())
        })
        .expect("property holds");
    let (yes, no) = proven.get();
    assert!(yes > 30 && no > 30, "proven/unproven {yes}/{no}");
}

/// Float expression trees over `A[i + k]` (contiguous), `B[k]`
/// (invariant) and constants.
#[derive(Debug, Clone)]
enum FE {
    A(i64),
    B(i64),
    K(f64),
    Neg(Box<FE>),
    Bin(u8, Box<FE>, Box<FE>),
}

fn fe() -> impl Strategy<Value = FE> {
    let leaf = prop_oneof![
        (-4i64..=4).prop_map(FE::A),
        (0i64..3).prop_map(FE::B),
        prop_oneof![Just(0.0), Just(1.5), Just(-0.25), Just(1e300)].prop_map(FE::K),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| FE::Neg(Box::new(e))),
            (0u8..4, inner.clone(), inner).prop_map(|(o, a, b)| FE::Bin(
                o,
                Box::new(a),
                Box::new(b)
            )),
        ]
    })
}

fn fe_expr(e: &FE, i: LoopVar) -> Expr {
    match e {
        FE::A(k) => Expr::load(
            0,
            vec![Expr::Aff(Affine::var(i).offset(*k).expect("small"))],
        ),
        FE::B(k) => Expr::load(1, vec![Expr::Int(*k)]),
        FE::K(c) => Expr::Float(*c),
        FE::Neg(a) => Expr::Unary(
            alphac::codegen::loop_ast::UnOp::Neg,
            Box::new(fe_expr(a, i)),
        ),
        FE::Bin(o, a, b) => Expr::bin(
            [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div][*o as usize],
            fe_expr(a, i),
            fe_expr(b, i),
        ),
    }
}

/// The vector form of innermost loops (fast variant) computes bit for bit
/// what the scalar, fully checked variant computes, for every trip count
/// (remainders included) and two statements per body, the second an
/// assignment, a `+=` or a `*=`.
#[test]
fn vector_loops_match_scalar_loops() {
    let strat = (fe(), fe(), 0i64..=40, any::<bool>(), 0u8..3);
    let mut runner = TestRunner::new(Config::with_cases(300));
    runner
        .run(&strat, |(e1, e2, n, two, form)| {
            let i = LoopVar(0);
            let farr = |name: &str, lo: i64, ext: Affine| Array {
                name: name.into(),
                ty: ElemType::Float,
                dims: vec![Dim {
                    lower: Affine::cst(lo),
                    extent: ext,
                }],
                domain: None,
            };
            let mut body = vec![Stmt::Assign {
                array: 2,
                index: vec![Expr::var(i)],
                value: fe_expr(&e1, i),
            }];
            if two {
                let index = vec![Expr::Aff(Affine::var(i).offset(1).expect("small"))];
                let value = fe_expr(&e2, i);
                body.push(match form {
                    0 => Stmt::Assign {
                        array: 3,
                        index,
                        value,
                    },
                    _ => Stmt::Accumulate(Accumulation {
                        array: 3,
                        index,
                        op: if form == 1 {
                            ReduceOp::Add
                        } else {
                            ReduceOp::Mul
                        },
                        value,
                    }),
                });
            }
            let f = Function {
                name: "vec".into(),
                params: vec!["N".into()],
                context: Set::universe(Space::set(&["N"], &[] as &[&str])),
                arrays: vec![
                    farr("A", -4, Affine::param(0).offset(8).expect("small")),
                    farr("B", 0, Affine::cst(3)),
                    farr("C", 0, Affine::param(0)),
                    farr("D", 0, Affine::param(0).offset(1).expect("small")),
                ],
                externals: vec![],
                loop_vars: vec!["i".into()],
                locals: vec![],
                body: vec![Stmt::For(ForLoop {
                    var: i,
                    parallel: false,
                    lower: Bound::aff(Affine::cst(0)),
                    upper: Bound::aff(Affine::param(0).offset(-1).expect("small")),
                    body,
                })],
            };
            let nu = n as usize;
            let a: Vec<f64> = (0..nu + 8)
                .map(|k| ((k * 37 % 17) as f64 - 8.0) / 4.0)
                .collect();
            let mk = || {
                vec![
                    Buffer::Float(a.clone()),
                    Buffer::Float(vec![0.5, -3.0, 0.0]),
                    Buffer::Float(vec![7.0; nu]),
                    Buffer::Float(vec![7.0; nu + 1]),
                ]
            };
            let fast = JitFunction::compile(&f).expect("compiles");
            let checked =
                JitFunction::compile_with(&f, JitOptions { checked: true }).expect("compiles");
            let (mut b1, mut b2) = (mk(), mk());
            prop_assert_eq!(fast.run(&[n], &mut b1), Ok(()));
            prop_assert_eq!(checked.run(&[n], &mut b2), Ok(()));
            for k in 2..4 {
                let (x, y) = (b1[k].as_float().expect("f"), b2[k].as_float().expect("f"));
                for (p, q) in x.iter().zip(y) {
                    prop_assert!(
                        p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()),
                        "{} vs {}",
                        p,
                        q
                    );
                }
            }
            Ok(())
        })
        .expect("property holds");
}

/// The nest of [`nest`] writing 1 at `A[a·i + b·j + c]` (an affine access
/// into a box `0 .. 60`).
fn nest_access(
    lo_i: &[Term],
    hi_i: &[Term],
    lo_j: &[Term],
    hi_j: &[Term],
    abc: (i64, i64, i64),
) -> Function {
    let (i, j) = (LoopVar(0), LoopVar(1));
    let (a, b, c) = abc;
    let index = Affine::cst(c).plus(Sym::Loop(i), a).plus(Sym::Loop(j), b);
    let mut f = nest(lo_i, hi_i, lo_j, hi_j);
    f.arrays[0] = Array {
        name: "A".into(),
        ty: ElemType::Int,
        dims: vec![Dim {
            lower: Affine::cst(0),
            extent: Affine::cst(60),
        }],
        domain: None,
    };
    f.locals.clear();
    if let Stmt::For(outer) = &mut f.body[0] {
        if let Stmt::For(inner) = &mut outer.body[0] {
            inner.body = vec![Stmt::Assign {
                array: 0,
                index: vec![Expr::Aff(index)],
                value: Expr::Int(1),
            }];
        }
    }
    f
}

/// The analysis' exact fallback (affine facts of the loop bounds, integer
/// emptiness) proves an affine access in bounds exactly when every point
/// of the nest (brute force) accesses inside the box: never a false proof
/// (soundness: the fast variant then runs unchecked), and no false refusal
/// either. The run agrees: it succeeds exactly then, in both variants.
#[test]
fn affine_accesses_are_proven_exactly_when_every_point_is_in_bounds() {
    let terms = |upper| prop::collection::vec(term(upper), 1..=2);
    let strat = (
        terms(false),
        terms(true),
        terms(false),
        terms(true),
        -6i64..=6,
        (-2i64..=2, -2i64..=2, -10i64..=30),
    );
    let mut runner = TestRunner::new(Config::with_cases(300));
    // (proven with points, refused) outcomes: both must be exercised.
    let seen = std::cell::Cell::new((0, 0));
    runner
        .run(&strat, |(lo_i, hi_i, lo_j, hi_j, n, abc)| {
            let pts = brute(n, &lo_i, &hi_i, &lo_j, &hi_j);
            let (a, b, c) = abc;
            let inside = pts
                .iter()
                .all(|&(i, j)| (0..60).contains(&(a * i + b * j + c)));
            let f = nest_access(&lo_i, &hi_i, &lo_j, &hi_j, abc);
            for checked in [false, true] {
                let jit = JitFunction::compile_with(&f, JitOptions { checked }).expect("compiles");
                let proven = jit.proves_affine_accesses(&[n]).expect("no overflow");
                prop_assert_eq!(proven, inside, "points {:?}", &pts);
                let mut bufs = vec![Buffer::Int(vec![0; 60])];
                let r = jit.run(&[n], &mut bufs);
                prop_assert_eq!(r.is_ok(), inside);
                if inside {
                    let hit: Vec<i64> = pts.iter().map(|&(i, j)| a * i + b * j + c).collect();
                    let t = bufs[0].as_int().expect("int");
                    for (x, &v) in t.iter().enumerate() {
                        prop_assert_eq!(v == 1, hit.contains(&(x as i64)));
                    }
                }
            }
            let (p, r) = seen.get();
            seen.set(if inside && !pts.is_empty() {
                (p + 1, r)
            } else if inside {
                (p, r)
            } else {
                (p, r + 1)
            });
            Ok(())
        })
        .expect("property holds");
    let (p, r) = seen.get();
    assert!(p > 20 && r > 20, "outcomes {:?}", (p, r));
}
