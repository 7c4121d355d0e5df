//! Unit tests of the loop-AST rewrites (shared helpers: an interpreter of
//! affine conditions and bounds, small loop nests, execution traces).

use super::affine::*;
use super::facts::*;
use super::fold::*;
use super::hoist::*;
use super::walk::*;
use super::*;
use crate::ir::types::ElemType;
use crate::poly::{BasicSet, Set, Space};
use proptest::prelude::*;

const I: LoopVar = LoopVar(0);
const J: LoopVar = LoopVar(1);

/// `ci·i + cj·j + cn·N + k` (zero terms omitted, so that scoping
/// checks only see the symbols used).
fn aff(ci: i64, cj: i64, cn: i64, k: i64) -> Affine {
    let mut a = Affine::cst(k);
    for (s, c) in [(Sym::Loop(I), ci), (Sym::Loop(J), cj), (Sym::Param(0), cn)] {
        if c != 0 {
            a = a.plus(s, c);
        }
    }
    a
}

proptest! {
    /// `a[j := e]` evaluates like `a` with `j` set to the value of `e`.
    #[test]
    fn substitution_is_composition(
        a in (-3i64..4, -3i64..4, -3i64..4, -5i64..6),
        e in (-3i64..4, -3i64..4, -5i64..6),
        i in -4i64..5, n in -4i64..5,
    ) {
        let a = aff(a.0, a.1, a.2, a.3);
        let e = aff(e.0, 0, e.1, e.2);
        let s = subst_affine(&a, J, &e).expect("small");
        prop_assert!(!mentions(&s, J));
        let ej = e.eval(&[i, 0], &[n]).expect("small");
        prop_assert_eq!(s.eval(&[i, 0], &[n]), a.eval(&[i, ej], &[n]));
    }
}

fn int_cond(e: &Expr, env: &[i64], n: i64) -> bool {
    fn v(x: &Expr, env: &[i64], n: i64) -> i64 {
        match x {
            Expr::Aff(a) => a.eval(env, &[n]).expect("small"),
            Expr::Int(k) => *k,
            Expr::Binary(BinOp::FloorDiv, a, b) => v(a, env, n).div_euclid(v(b, env, n)),
            Expr::Binary(BinOp::CeilDiv, a, b) => {
                let (a, b) = (v(a, env, n), v(b, env, n));
                a.div_euclid(b) + i64::from(a.rem_euclid(b) != 0)
            }
            other => panic!("not affine: {other:?}"),
        }
    }
    match e {
        Expr::Bool(b) => *b,
        Expr::Binary(BinOp::And, a, b) => int_cond(a, env, n) && int_cond(b, env, n),
        Expr::Binary(BinOp::Or, a, b) => int_cond(a, env, n) || int_cond(b, env, n),
        Expr::Unary(crate::vocab::UnOp::Not, a) => !int_cond(a, env, n),
        Expr::Binary(op, a, b) => {
            let (x, y) = (v(a, env, n), v(b, env, n));
            match op {
                BinOp::Ge => x >= y,
                BinOp::Gt => x > y,
                BinOp::Le => x <= y,
                BinOp::Lt => x < y,
                BinOp::Eq => x == y,
                BinOp::Ne => x != y,
                _ => panic!("not a comparison"),
            }
        }
        other => panic!("unexpected {other:?}"),
    }
}

fn bound_val(b: &Bound, lower: bool, env: &[i64], n: i64) -> i64 {
    let vals = b.terms.iter().map(|t| {
        let e = t.expr.eval(env, &[n]).expect("small");
        if lower {
            e.div_euclid(t.div) + i64::from(e.rem_euclid(t.div) != 0)
        } else {
            e.div_euclid(t.div)
        }
    });
    if lower {
        vals.max().expect("a term")
    } else {
        vals.min().expect("a term")
    }
}

/// The context `N >= k`.
fn n_at_least(k: i64) -> Set {
    let space = Space::set(&["N"], &[] as &[&str]);
    let b = BasicSet::from_rows(space, vec![], vec![vec![1, -k]]).expect("a valid row");
    Set::from_basic(b)
}

/// `for i in 0 ..= N-1 { for j in lo ..= hi { if (cond) Y[0] = 1;
/// Y[0] = cond ? 1 : 2; } }` over the context `N >= 1`.
fn nest(lo: Bound, hi: Bound, cond: Expr) -> Function {
    Function {
        name: "t".into(),
        params: vec!["N".into()],
        context: n_at_least(1),
        arrays: vec![super::super::loop_ast::Array {
            name: "Y".into(),
            ty: ElemType::Int,
            dims: vec![super::super::loop_ast::Dim {
                lower: Affine::cst(0),
                extent: Affine::cst(1),
            }],
            domain: None,
        }],
        externals: vec![],
        loop_vars: vec!["i".into(), "j".into()],
        locals: vec![],
        body: vec![Stmt::For(ForLoop {
            var: I,
            parallel: false,
            lower: Bound::aff(Affine::cst(0)),
            upper: Bound::aff(aff(0, 0, 1, -1)),
            body: vec![Stmt::For(ForLoop {
                var: J,
                parallel: false,
                lower: lo,
                upper: hi,
                body: vec![
                    Stmt::If {
                        cond: cond.clone(),
                        then: vec![Stmt::Assign {
                            array: 0,
                            index: vec![Expr::Int(0)],
                            value: Expr::Int(1),
                        }],
                        els: vec![],
                    },
                    Stmt::Assign {
                        array: 0,
                        index: vec![Expr::Int(0)],
                        value: Expr::select(cond, Expr::Int(1), Expr::Int(2)),
                    },
                ],
            })],
        })],
    }
}

/// The inner loop's bounds, the `if` condition (`true` when the `if`
/// was removed) and the `select` condition (`true` when the `select`
/// was removed) of `nest`.
fn guard_of(f: &Function) -> (Bound, Bound, Expr, Expr) {
    let Stmt::For(outer) = &f.body[0] else {
        panic!("outer loop")
    };
    let Stmt::For(inner) = &outer.body[0] else {
        panic!("inner loop")
    };
    let (lower, upper, body) = (&inner.lower, &inner.upper, &inner.body);
    let cond = match &body[0] {
        Stmt::If { cond, .. } => cond.clone(),
        Stmt::Assign { .. } => Expr::Bool(true),
        other => panic!("unexpected {other:?}"),
    };
    let sel = match body.last() {
        Some(Stmt::Assign {
            value: Expr::Select(c, ..),
            ..
        }) => (**c).clone(),
        Some(Stmt::Assign {
            value: Expr::Int(1),
            ..
        }) => Expr::Bool(true),
        other => panic!("unexpected {other:?}"),
    };
    (lower.clone(), upper.clone(), cond, sel)
}

fn cmp_strategy() -> impl Strategy<Value = Expr> {
    (
        prop_oneof![
            Just(BinOp::Ge),
            Just(BinOp::Gt),
            Just(BinOp::Le),
            Just(BinOp::Lt),
            Just(BinOp::Eq)
        ],
        (-2i64..3, -2i64..3, -1i64..2, -3i64..4),
    )
        .prop_map(|(op, (ci, cj, cn, k))| {
            Expr::bin(op, Expr::Aff(aff(ci, cj, cn, k)), Expr::Int(0))
        })
}

/// Lower bounds of the inner loop `j` of the property tests (over
/// `i`, `N`).
fn lower_bounds() -> impl Strategy<Value = Bound> {
    prop_oneof![
        Just(Bound::aff(Affine::cst(0))),
        Just(Bound::aff(aff(1, 0, 0, 0))),
        Just(Bound::aff(aff(1, 0, 0, -1)).and(Affine::cst(0), 1)),
        Just(Bound::div(aff(1, 0, 0, 0), 2)),
    ]
}

/// Upper bounds of the inner loop `j` of the property tests.
fn upper_bounds() -> impl Strategy<Value = Bound> {
    prop_oneof![
        Just(Bound::aff(aff(0, 0, 1, -1))),
        Just(Bound::aff(aff(1, 0, 0, 1))),
        Just(Bound::aff(aff(0, 0, 1, -1)).and(aff(1, 0, 0, 2), 1)),
        Just(Bound::div(aff(1, 0, 1, 0), 2)),
    ]
}

proptest! {
    /// Simplified guards agree with the original ones at every point
    /// the loops reach (brute force over small `N`), and never grow.
    #[test]
    fn simplified_guards_are_equivalent_where_reached(
        lo in lower_bounds(),
        hi in upper_bounds(),
        conds in prop::collection::vec(cmp_strategy(), 1..5),
    ) {
        let mut cond = conds[conds.len() - 1].clone();
        for c in conds[..conds.len() - 1].iter().rev() {
            cond = Expr::bin(BinOp::And, c.clone(), cond);
        }
        let f = nest(lo, hi, cond.clone());
        prop_assert!(f.check().is_ok());
        let mut g = f.clone();
        let removed = simplify_guards(&mut g);
        prop_assert!(g.check().is_ok());
        let (lo, hi, new, sel) = guard_of(&g);
        let count = |c: &Expr| if *c == Expr::Bool(true) { 0 } else { conjuncts(c).len() };
        prop_assert_eq!(count(&new) + count(&sel) + removed, 2 * conds.len());
        for n in 1..6 {
            for i in 0..n {
                let env = [i, 0];
                let (l, h) = (bound_val(&lo, true, &env, n), bound_val(&hi, false, &env, n));
                for j in l..=h {
                    let env = [i, j];
                    prop_assert_eq!(
                        int_cond(&cond, &env, n),
                        int_cond(&new, &env, n),
                        "N={} i={} j={}\n{}\n{}", n, i, j, f.to_c(), g.to_c()
                    );
                    prop_assert_eq!(
                        int_cond(&cond, &env, n),
                        int_cond(&sel, &env, n),
                        "select: N={} i={} j={}\n{}\n{}", n, i, j, f.to_c(), g.to_c()
                    );
                }
            }
        }
    }
}

#[test]
fn implied_conjuncts_go_and_true_ifs_disappear() {
    // j >= i and j <= N - 1 inside `for j in i ..= N-1`: both implied.
    let cond = Expr::bin(
        BinOp::And,
        Expr::bin(BinOp::Ge, Expr::Aff(aff(-1, 1, 0, 0)), Expr::Int(0)),
        Expr::bin(
            BinOp::Le,
            Expr::Aff(aff(0, 1, 0, 0)),
            Expr::Aff(aff(0, 0, 1, -1)),
        ),
    );
    let mut f = nest(
        Bound::aff(aff(1, 0, 0, 0)),
        Bound::aff(aff(0, 0, 1, -1)),
        cond,
    );
    assert_eq!(simplify_guards(&mut f), 4);
    assert_eq!(guard_of(&f).2, Expr::Bool(true));
    assert_eq!(guard_of(&f).3, Expr::Bool(true));
    // Of two equivalent conjuncts exactly one is kept.
    let c = Expr::bin(BinOp::Ge, Expr::Aff(aff(0, 1, 0, -1)), Expr::Int(0));
    let mut f = nest(
        Bound::aff(Affine::cst(0)),
        Bound::aff(aff(0, 0, 1, -1)),
        Expr::bin(BinOp::And, c.clone(), c.clone()),
    );
    assert_eq!(simplify_guards(&mut f), 2);
    assert_eq!(guard_of(&f).2, c);
    assert_eq!(guard_of(&f).3, c);
    // Not implied: kept.
    let mut f = nest(
        Bound::aff(Affine::cst(0)),
        Bound::aff(aff(0, 0, 1, -1)),
        c.clone(),
    );
    assert_eq!(simplify_guards(&mut f), 0);
    assert_eq!(guard_of(&f).2, c);
    assert_eq!(guard_of(&f).3, c);
}

#[test]
fn non_emptiness_condition_of_bounds() {
    let b = |e: Affine| Bound::aff(e);
    assert!(matches!(
        nonempty_cond(&b(Affine::cst(0)), &b(Affine::cst(3))),
        Guard::Always
    ));
    assert!(matches!(
        nonempty_cond(&b(Affine::cst(4)), &b(Affine::cst(3))),
        Guard::Never
    ));
    // max(0, i - 1) <= min(N - 1, floor((i + N) / 2)): four conjuncts.
    let lo = b(Affine::cst(0)).and(aff(1, 0, 0, -1), 1);
    let hi = b(aff(0, 0, 1, -1)).and(aff(1, 0, 1, 0), 2);
    let Guard::Cond(c) = nonempty_cond(&lo, &hi) else {
        panic!("a condition")
    };
    assert_eq!(conjuncts(&c).len(), 4);
}

/// The assignments a program built by `nest` (or its rewrites, which
/// keep its statement forms) executes for `N = n`, in order: the values
/// of `(i, j)` and the value stored (an `Int` or a `select` of
/// `Int`s).
fn trace(f: &Function, n: i64) -> Vec<(i64, i64, i64)> {
    fn go(body: &[Stmt], env: &mut Vec<i64>, n: i64, out: &mut Vec<(i64, i64, i64)>) {
        for s in body {
            match s {
                Stmt::For(l) => {
                    let lo = bound_val(&l.lower, true, env, n);
                    let hi = bound_val(&l.upper, false, env, n);
                    for x in lo..=hi {
                        env[l.var.0] = x;
                        go(&l.body, env, n, out);
                    }
                }
                Stmt::If { cond, then, els } => {
                    if int_cond(cond, env, n) {
                        go(then, env, n, out);
                    } else {
                        go(els, env, n, out);
                    }
                }
                Stmt::Block(b) => go(b, env, n, out),
                Stmt::Assign { value, .. } => {
                    fn val(e: &Expr, env: &[i64], n: i64) -> i64 {
                        match e {
                            Expr::Int(k) => *k,
                            Expr::Select(c, a, b) => {
                                if int_cond(c, env, n) {
                                    val(a, env, n)
                                } else {
                                    val(b, env, n)
                                }
                            }
                            other => panic!("unexpected {other:?}"),
                        }
                    }
                    out.push((env[0], env[1], val(value, env, n)));
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }
    let mut out = Vec::new();
    go(&f.body, &mut vec![0, 0], n, &mut out);
    out
}

/// Conditions: `&&`, `||`, `!` of comparisons (as in `cmp_strategy`,
/// plus `!=`).
fn cond_strategy() -> impl Strategy<Value = Expr> {
    let atom = prop_oneof![
        4 => cmp_strategy(),
        1 => (-2i64..3, -1i64..2, -3i64..4).prop_map(|(cj, cn, k)| Expr::bin(
            BinOp::Ne,
            Expr::Aff(aff(0, cj, cn, k)),
            Expr::Int(0)
        )),
    ];
    atom.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::bin(BinOp::And, a, b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::bin(BinOp::Or, a, b)),
            inner.prop_map(|a| Expr::Unary(crate::vocab::UnOp::Not, Box::new(a))),
        ]
    })
}

proptest! {
    /// A cut `d·v >= e` of an atom separates exactly: each inequality
    /// `g >= 0` of the atom is, at every `v`, either "`v` in the cut"
    /// or "`v` not in the cut" (brute force over small values).
    #[test]
    fn cuts_are_exact(
        op in prop_oneof![
            Just(BinOp::Ge), Just(BinOp::Gt), Just(BinOp::Le), Just(BinOp::Lt), Just(BinOp::Eq)
        ],
        (ci, cj, cn, k) in (-3i64..4, -4i64..5, -2i64..3, -6i64..7),
        scale in 1i64..4,
    ) {
        // scale·(ci·i + cj·j + cn·N + k) op 0, cut on j with i outer.
        let a = aff(ci * scale, cj * scale, cn * scale, k);
        let e = Expr::bin(op, Expr::Aff(a.clone()), Expr::Int(0));
        let cuts = cuts_of(&e, J, &[I]);
        if cj == 0 {
            prop_assert!(cuts.is_none());
            return Ok(());
        }
        let cuts = cuts.expect("an atom");
        let ineqs = comparison_ineqs(op, &merged(&a).expect("small")).expect("small");
        prop_assert_eq!(cuts.len(), ineqs.len());
        for (c, g) in cuts.iter().zip(&ineqs) {
            prop_assert!(c.d >= 1);
            prop_assert!(!mentions(&c.e, J));
            for i in -3..4 {
                for n in -3..4 {
                    for j in -12..13 {
                        let inside = c.d * j >= c.e.eval(&[i, j], &[n]).expect("small");
                        let holds = g.eval(&[i, j], &[n]).expect("small") >= 0;
                        // The cut is the inequality or its complement,
                        // the same side for every point.
                        let same = g.terms.iter().any(|&(s, x)| s == Sym::Loop(J) && x > 0);
                        prop_assert_eq!(inside, holds == same, "{:?} {:?} i={} j={} N={}", c, g, i, j, n);
                    }
                }
            }
        }
    }

    /// Splitting never changes what runs: the assignments executed
    /// (their `(i, j)` and values) are the same, in the same order, for
    /// every small `N`; and the rewritten program is well formed.
    #[test]
    fn split_loops_preserves_the_trace(
        lo in lower_bounds(),
        hi in upper_bounds(),
        cond in cond_strategy(),
    ) {
        let f = nest(lo, hi, cond);
        let mut g = f.clone();
        let n_split = split_loops(&mut g);
        prop_assert!(g.check().is_ok(), "{}", g.to_c());
        for n in 1..7 {
            prop_assert_eq!(trace(&f, n), trace(&g, n), "N={}\n{}\n{}", n, f.to_c(), g.to_c());
        }
        if n_split > 0 {
            prop_assert_ne!(&f, &g);
        }
    }
}

#[test]
fn split_removes_guards_on_the_loop_variable() {
    // for j in 0 ..= N-1 { if (j >= 1 && j != N - 1) ...; select }:
    // pieces [0, 0], [1, N-2], [N-1, N-1], no condition left.
    let c = Expr::bin(
        BinOp::And,
        Expr::bin(BinOp::Ge, Expr::Aff(aff(0, 1, 0, 0)), Expr::Int(1)),
        Expr::bin(
            BinOp::Ne,
            Expr::Aff(aff(0, 1, 0, 0)),
            Expr::Aff(aff(0, 0, 1, -1)),
        ),
    );
    let mut f = nest(Bound::aff(Affine::cst(0)), Bound::aff(aff(0, 0, 1, -1)), c);
    // N >= 3 (so that the three pieces are non-empty).
    f.context = n_at_least(3);
    let mut g = f.clone();
    assert_eq!(split_loops(&mut g), 1);
    let Stmt::For(outer) = &g.body[0] else {
        panic!("outer loop")
    };
    assert_eq!(outer.body.len(), 3, "{}", g.to_c());
    let text = g.to_c();
    assert!(!text.contains("if (") && !text.contains(" ? "), "{text}");
    assert!(text.contains("for (j = 1; j <= N - 2; j++)"), "{text}");
    for n in 3..7 {
        assert_eq!(trace(&f, n), trace(&g, n));
    }
    // Nothing to decide: unchanged.
    let c = Expr::bin(BinOp::Ge, Expr::Aff(aff(0, 1, 0, 0)), Expr::Int(0));
    let f = nest(Bound::aff(Affine::cst(0)), Bound::aff(aff(0, 0, 1, -1)), c);
    let mut g = f.clone();
    assert_eq!(split_loops(&mut g), 0);
}

#[test]
fn short_pieces_around_the_long_one_become_two_guarded_loops() {
    // for j in 0 ..= N-1 { if (j >= 1 && j >= 3 && j <= N - 2) ... }:
    // pieces [0, 0], [1, 2], [3, N-2], [N-1, N-1], all short but the
    // third, which become [0, 2] (still guarded), [3, N-2] (no guard),
    // [N-1, N-1].
    let ge = |k: i64| Expr::bin(BinOp::Ge, Expr::Aff(aff(0, 1, 0, 0)), Expr::Int(k));
    let c = Expr::bin(
        BinOp::And,
        Expr::bin(BinOp::And, ge(1), ge(3)),
        Expr::bin(
            BinOp::Le,
            Expr::Aff(aff(0, 1, 0, 0)),
            Expr::Aff(aff(0, 0, 1, -2)),
        ),
    );
    for least in [1, 10] {
        let mut f = nest(
            Bound::aff(Affine::cst(0)),
            Bound::aff(aff(0, 0, 1, -1)),
            c.clone(),
        );
        f.context = n_at_least(least);
        let mut g = f.clone();
        assert_eq!(split_loops(&mut g), 1);
        assert!(g.check().is_ok(), "{}", g.to_c());
        // N from the least the context allows: for N <= 4 the long
        // piece is empty, and the first and last loops meet at j = 3.
        for n in least..least + 8 {
            assert_eq!(trace(&f, n), trace(&g, n), "N={n}\n{}", g.to_c());
        }
        if least == 10 {
            let Stmt::For(outer) = &g.body[0] else {
                panic!("outer loop")
            };
            let text = g.to_c();
            assert_eq!(outer.body.len(), 3, "{text}");
            assert!(text.contains("for (j = 0; j <= 2; j++)"), "{text}");
            assert!(text.contains("for (j = 3; j <= N - 2; j++)"), "{text}");
        }
    }
}

#[test]
fn data_dependent_conjunct_keeps_its_evaluation() {
    // `Y[0] > 0 && j >= 1` where `j >= 1` is false: the load is still
    // evaluated (`x && false` folds only for infallible `x`).
    let load = Expr::bin(BinOp::Gt, Expr::load(0, vec![Expr::Int(0)]), Expr::Int(0));
    let j_ge_1 = Expr::bin(BinOp::Ge, Expr::Aff(aff(0, 1, 0, 0)), Expr::Int(1));
    let facts = Facts {
        nv: 2,
        np: 1,
        // j <= 0
        rows: vec![vec![0, -1, 0, 0]],
    };
    let mut n = 0;
    let e = fold_expr(
        &facts,
        Expr::bin(BinOp::And, load.clone(), j_ge_1.clone()),
        J,
        &[I, J],
        &mut n,
    );
    assert_eq!(n, 1);
    assert_eq!(e, Expr::bin(BinOp::And, load.clone(), Expr::Bool(false)));
    // Infallible left operand: folds to false.
    let e = fold_expr(
        &facts,
        Expr::bin(BinOp::And, j_ge_1.clone(), j_ge_1),
        J,
        &[I, J],
        &mut n,
    );
    assert_eq!(e, Expr::Bool(false));
}

/// `nest` with the inner body replaced by `body`.
fn nest_with(lo: Bound, hi: Bound, body: Vec<Stmt>) -> Function {
    let mut f = nest(lo, hi, Expr::Bool(true));
    let Stmt::For(outer) = &mut f.body[0] else {
        panic!("outer loop")
    };
    let Stmt::For(inner) = &mut outer.body[0] else {
        panic!("inner loop")
    };
    inner.body = body;
    f
}

fn set_y(v: i64) -> Stmt {
    Stmt::Assign {
        array: 0,
        index: vec![Expr::Int(0)],
        value: Expr::Int(v),
    }
}

/// Inner loop bodies of the unswitching tests, from two conditions:
/// two guarded statements sharing `a` (`if (a && b) Y = 1; if (a) Y =
/// 2`), an `if`/`else` on `a`, a `select` on `a`, and the last two
/// beside another statement (`Y = 3`, after and before).
fn unswitch_body(shape: usize, a: Expr, b: Expr) -> Vec<Stmt> {
    match shape {
        3 => {
            let mut body = unswitch_body(1, a, b);
            body.push(set_y(3));
            body
        }
        4 => {
            let mut body = vec![set_y(3)];
            body.extend(unswitch_body(2, a, b));
            body
        }
        0 => vec![
            Stmt::If {
                cond: Expr::bin(BinOp::And, a.clone(), b),
                then: vec![set_y(1)],
                els: vec![],
            },
            Stmt::If {
                cond: a,
                then: vec![set_y(2)],
                els: vec![],
            },
        ],
        1 => vec![Stmt::If {
            cond: a,
            then: vec![set_y(1)],
            els: vec![set_y(2)],
        }],
        _ => vec![Stmt::Assign {
            array: 0,
            index: vec![Expr::Int(0)],
            value: Expr::select(a, Expr::Int(1), Expr::Int(2)),
        }],
    }
}

proptest! {
    /// Unswitching never changes what runs (the assignments executed,
    /// their `(i, j)` and values, in order, for every small `N`), and it
    /// moves a condition out exactly when the condition does not mention
    /// the inner loop's variable.
    #[test]
    fn unswitched_guards_keep_the_trace(
        lo in lower_bounds(),
        hi in upper_bounds(),
        shape in 0usize..5,
        a in cmp_strategy(),
        b in cond_strategy(),
    ) {
        let f = nest_with(lo, hi, unswitch_body(shape, a.clone(), b));
        let mut g = f.clone();
        let moved = unswitch_guards(&mut g);
        prop_assert!(g.check().is_ok(), "{}", g.to_c());
        for n in 1..7 {
            prop_assert_eq!(trace(&f, n), trace(&g, n), "N={}\n{}\n{}", n, f.to_c(), g.to_c());
        }
        let Expr::Binary(_, x, _) = &a else { panic!("a comparison") };
        let Expr::Aff(x) = &**x else { panic!("affine") };
        prop_assert_eq!(moved > 0, !mentions(x, J), "{}", g.to_c());
    }
}

#[test]
fn an_invariant_guard_leaves_a_whole_nest() {
    // for i { for j { if (N >= 2) Y = 1; } } → if (N >= 2) { for i { for j { Y = 1 } } }.
    let n_ge_2 = Expr::bin(BinOp::Ge, Expr::Aff(aff(0, 0, 1, 0)), Expr::Int(2));
    let body = vec![Stmt::If {
        cond: n_ge_2.clone(),
        then: vec![set_y(1)],
        els: vec![],
    }];
    let mut g = nest_with(
        Bound::aff(Affine::cst(0)),
        Bound::aff(aff(0, 0, 1, -1)),
        body,
    );
    assert_eq!(unswitch_guards(&mut g), 2);
    let [Stmt::If { cond, then, els }] = &g.body[..] else {
        panic!("{}", g.to_c())
    };
    assert_eq!(cond, &n_ge_2);
    assert!(els.is_empty());
    let [Stmt::For(outer)] = &then[..] else {
        panic!("{}", g.to_c())
    };
    let [Stmt::For(inner)] = &outer.body[..] else {
        panic!("{}", g.to_c())
    };
    assert_eq!(inner.body, vec![set_y(1)]);
}
