//! The JIT's range tests as one unsigned comparison: a data-dependent
//! index against its array's box (`lo <= x < lo + extent`, boxes with any
//! lower bound, empty boxes included), a selection against a range known
//! to be nonempty (`Selection::nonempty`, marked by the loop rewrites from
//! the facts where it stands), and a binding's value against its bounds.
//! Every test compares with the range test written out over the integers
//! (`i128`), at the extreme values of `i64` too.

mod common;

use alphac::codegen::loop_ast::{
    Affine, Array, Binding, Bound, Dim, ElemType, Expr, Function, LoopVar, Selection, Stmt, Sym,
};
use alphac::codegen::opt;
use alphac::jit::{Buffer, ExecError, JitFunction, JitOptions};
use alphac::poly::{Set, Space};
use proptest::prelude::*;

/// Parameters `[LO, E, HI]`; arrays `w : int[1]` (the value), `out :
/// int[1]`, and `h : int[LO : LO + E]` (a box with lower bound `LO`;
/// `E = 0` where `h` is not used).
fn func(body: Vec<Stmt>) -> Function {
    let param = |k: usize| Affine {
        terms: vec![(Sym::Param(k), 1)],
        constant: 0,
    };
    let one = || Dim {
        lower: Affine::cst(0),
        extent: Affine::cst(1),
    };
    let arr = |name: &str, dims| Array {
        name: name.into(),
        ty: ElemType::Int,
        dims,
        domain: None,
    };
    Function {
        name: "ranges".into(),
        params: vec!["LO".into(), "E".into(), "HI".into()],
        context: Set::universe(Space::set(&["LO", "E", "HI"], &[] as &[&str])),
        arrays: vec![
            arr("w", vec![one()]),
            arr("out", vec![one()]),
            arr(
                "h",
                vec![Dim {
                    lower: param(0),
                    extent: param(1),
                }],
            ),
        ],
        externals: vec![],
        loop_vars: vec!["k".into()],
        locals: vec![],
        body,
    }
}

const W: usize = 0;
const OUT: usize = 1;
const H: usize = 2;

fn w0() -> Expr {
    Expr::load(W, vec![Expr::Int(0)])
}

fn param(k: usize) -> Expr {
    Expr::param(k)
}

/// Runs `f` with `w[0] = value` (checked and fast variants, which must
/// agree) and returns the result and `out[0]` and `h`.
fn run(f: &Function, params: &[i64], value: i64) -> (Result<(), ExecError>, Vec<Buffer>) {
    let mut results = Vec::new();
    for checked in [false, true] {
        let j = JitFunction::compile_with(f, JitOptions { checked }).expect("compiles");
        let mut bufs = match j.zeroed_buffers(params) {
            Ok(b) => b,
            Err(e) => return (Err(e), Vec::new()),
        };
        if let Buffer::Int(w) = &mut bufs[W] {
            w[0] = value;
        }
        let r = j.run(params, &mut bufs);
        results.push((r, bufs));
    }
    let second = results.pop().expect("two runs");
    let first = results.pop().expect("two runs");
    assert_eq!(
        format!("{:?}", first.0),
        format!("{:?}", second.0),
        "the checked variant agrees"
    );
    first
}

/// `h[w[0]] = 7`: the box test of a data-dependent index.
fn store_through_w() -> Function {
    func(vec![Stmt::Assign {
        array: H,
        index: vec![w0()],
        value: Expr::Int(7),
    }])
}

fn check_box(lo: i64, extent: i64, x: i64) {
    let f = store_through_w();
    let params = [lo, extent, 0];
    let (r, bufs) = run(&f, &params, x);
    if i128::from(lo) + i128::from(extent.max(0)) > i128::from(i64::MAX) {
        assert!(matches!(r, Err(ExecError::TooLarge(_))), "{r:?}");
        return;
    }
    let inside = i128::from(lo) <= i128::from(x)
        && i128::from(x) < i128::from(lo) + i128::from(extent.max(0));
    if inside {
        assert_eq!(r, Ok(()), "lo {lo}, extent {extent}, x {x}");
        let Buffer::Int(h) = &bufs[H] else {
            panic!("int h")
        };
        let at = usize::try_from(i128::from(x) - i128::from(lo)).expect("inside");
        assert_eq!(h[at], 7);
    } else {
        assert!(
            matches!(&r, Err(ExecError::OutOfBounds { point, .. }) if point == &vec![x]),
            "lo {lo}, extent {extent}, x {x}: {r:?}"
        );
    }
}

#[test]
fn a_data_dependent_index_is_tested_against_its_box_at_the_extremes() {
    let xs = |lo: i64, e: i64| {
        vec![
            i64::MIN,
            i64::MIN + 1,
            -1,
            0,
            1,
            lo.saturating_sub(1),
            lo,
            lo.saturating_add(1),
            lo.saturating_add(e).saturating_sub(1),
            lo.saturating_add(e),
            i64::MAX - 1,
            i64::MAX,
        ]
    };
    for (lo, e) in [
        (0, 5),
        (-3, 4),
        (10, 3),
        (-7, 0),
        (4, -2),
        (i64::MIN, 3),
        (i64::MAX - 5, 5),
        (i64::MAX - 5, 6),
    ] {
        for x in xs(lo, e) {
            check_box(lo, e, x);
        }
    }
}

/// `selected(w[0], LO, HI)` with the given mark.
fn sel(nonempty: bool) -> Expr {
    Expr::Selection(Box::new(Selection {
        value: w0(),
        lower: param(0),
        upper: param(2),
        var: "out".into(),
        index: "k".into(),
        nonempty,
    }))
}

/// `out[0] = selected(w[0], LO, HI)` with the given mark.
fn select(nonempty: bool) -> Function {
    func(vec![Stmt::Assign {
        array: OUT,
        index: vec![Expr::Int(0)],
        value: sel(nonempty),
    }])
}

fn check_selection(lo: i64, hi: i64, v: i64) {
    let inside = lo <= v && v <= hi;
    // The unmarked test always; the marked one where its premise holds.
    for nonempty in [false, lo <= hi] {
        let (r, bufs) = run(&select(nonempty), &[lo, 0, hi], v);
        if inside {
            assert_eq!(r, Ok(()), "[{lo}, {hi}] {v} nonempty {nonempty}");
            let Buffer::Int(out) = &bufs[OUT] else {
                panic!("int out")
            };
            assert_eq!(out[0], v);
        } else {
            assert!(
                matches!(
                    r,
                    Err(ExecError::SelectionOutOfRange { value, lower, upper, .. })
                        if (value, lower, upper) == (v, lo, hi)
                ),
                "[{lo}, {hi}] {v} nonempty {nonempty}: {r:?}"
            );
        }
    }
}

#[test]
fn a_selection_in_a_nonempty_range_is_tested_at_the_extremes() {
    let ends = [
        i64::MIN,
        i64::MIN + 1,
        -2,
        -1,
        0,
        1,
        2,
        i64::MAX - 1,
        i64::MAX,
    ];
    for lo in ends {
        for hi in ends {
            for v in ends {
                check_selection(lo, hi, v);
            }
        }
    }
}

/// `Bind k := w[0] in [LO, HI] { out[0] = k + 1 }`: the binding's own range
/// test (its value is not a selection).
fn bind() -> Function {
    let param = |k: usize| Affine {
        terms: vec![(Sym::Param(k), 1)],
        constant: 0,
    };
    let bound = |k: usize| Bound::aff(param(k));
    func(vec![Stmt::from(Binding {
        var: LoopVar(0),
        lower: bound(0),
        upper: bound(2),
        guard: Expr::Bool(true),
        value: w0(),
        body: vec![Stmt::Assign {
            array: OUT,
            index: vec![Expr::Int(0)],
            value: Expr::Aff(Affine {
                terms: vec![(Sym::Loop(LoopVar(0)), 1)],
                constant: 1,
            }),
        }],
        nonempty: false,
    })])
}

#[test]
fn a_binding_runs_its_body_exactly_for_values_in_its_range() {
    let ends = [i64::MIN, -2, -1, 0, 1, 2, i64::MAX - 1];
    for lo in ends {
        for hi in ends {
            for v in ends {
                let (r, bufs) = run(&bind(), &[lo, 0, hi], v);
                assert_eq!(r, Ok(()), "[{lo}, {hi}] {v}");
                let Buffer::Int(out) = &bufs[OUT] else {
                    panic!("int out")
                };
                let want = if lo <= v && v <= hi { v + 1 } else { 0 };
                assert_eq!(out[0], want, "[{lo}, {hi}] {v}");
            }
        }
    }
}

/// The selections of `f`'s body, in order.
fn selections(f: &Function) -> Vec<Selection> {
    fn expr(e: &Expr, out: &mut Vec<Selection>) {
        if let Expr::Selection(s) = e {
            out.push((**s).clone());
        }
        for c in e.children() {
            expr(c, out);
        }
    }
    let mut out = Vec::new();
    alphac::codegen::loop_ast::for_each_stmt_expr(&f.body, &mut |e| expr(e, &mut out));
    out
}

#[test]
fn the_rewrites_mark_a_selection_nonempty_only_where_the_facts_imply_it() {
    // Without facts on LO and HI: unknown. Inside `if (LO <= HI)`: known.
    let marks = |f: &Function| {
        let g = opt::optimize(f).expect("optimizes");
        let m: Vec<bool> = selections(&g).iter().map(|s| s.nonempty).collect();
        (m, g)
    };
    let f = select(false);
    let (m, g) = marks(&f);
    assert_eq!(m, vec![false], "{}", g.to_c());
    let mut f = select(false);
    let body = std::mem::take(&mut f.body);
    f.body = vec![Stmt::If {
        cond: Expr::bin(alphac::codegen::loop_ast::BinOp::Le, param(0), param(2)),
        then: body,
        els: vec![],
    }];
    let (m, g) = marks(&f);
    assert_eq!(m, vec![true], "{}", g.to_c());
    // A selection in a condition is marked as well, from the facts there.
    let le = |a, b| Expr::bin(alphac::codegen::loop_ast::BinOp::Le, a, b);
    let store = vec![Stmt::Assign {
        array: OUT,
        index: vec![Expr::Int(0)],
        value: Expr::Int(1),
    }];
    let in_cond = |nonempty| Stmt::If {
        cond: le(sel(nonempty), Expr::Int(3)),
        then: store.clone(),
        els: vec![],
    };
    // A stale mark is recomputed (no facts here: unknown).
    let (m, g) = marks(&func(vec![in_cond(true)]));
    assert_eq!(m, vec![false], "{}", g.to_c());
    let (m, g) = marks(&func(vec![Stmt::If {
        cond: le(param(0), param(2)),
        then: vec![in_cond(false)],
        els: vec![],
    }]));
    assert_eq!(m, vec![true], "{}", g.to_c());
    // And the optimized program tests the range like the original.
    for (lo, hi, v) in [(0, 3, 2), (0, 3, 4), (0, 3, -1), (5, 2, 3), (-4, -4, -4)] {
        let (a, _) = run(&f, &[lo, 0, hi], v);
        let (b, _) = run(&g, &[lo, 0, hi], v);
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "[{lo}, {hi}] {v}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn box_tests_agree_with_the_integers(
        lo in prop_oneof![-20i64..20, any::<i64>()],
        // Small or negative extents (the buffer is allocated).
        extent in prop_oneof![-3i64..10, i64::MIN..-3],
        x in prop_oneof![-30i64..30, any::<i64>()],
    ) {
        check_box(lo, extent, x);
    }

    #[test]
    fn selection_tests_agree_with_the_integers(
        lo in prop_oneof![-20i64..20, any::<i64>()],
        hi in prop_oneof![-20i64..20, any::<i64>()],
        v in prop_oneof![-30i64..30, any::<i64>()],
    ) {
        check_selection(lo, hi, v);
    }
}
