//! Unit tests of the parallel-legality proof and the marking pass: loops
//! that must run in parallel and loops that must not (one cell
//! accumulated from every iteration, an array contracted in place, a
//! modulo window, a neighbour's cell, a carried or live-out local, an
//! indirect write, an external call).

use super::*;
use crate::codegen::loop_ast::{
    Affine, Array, BinOp, Binding, Dim, Distribution, ElemType, ExternalDecl, Local, RandomDraw,
    ReduceOp,
};
use crate::poly::{Set, Space};

const I: LoopVar = LoopVar(0);
const J: LoopVar = LoopVar(1);
const K: LoopVar = LoopVar(2);

// Arrays: X[N][N] (read), Y[N], C[N], S[1], s (scalar), idx[N] (int), M[N][N].
const X: usize = 0;
const Y: usize = 1;
const C: usize = 2;
const S: usize = 3;
const SCALAR: usize = 4;
const IDX: usize = 5;
const M: usize = 6;

fn n_dim() -> Dim {
    Dim {
        lower: Affine::cst(0),
        extent: Affine::param(0),
    }
}

fn arr(name: &str, ty: ElemType, dims: Vec<Dim>) -> Array {
    Array {
        name: name.into(),
        ty,
        dims,
        domain: None,
    }
}

/// A function over `N` with the arrays above, two float locals `acc`,
/// `t` and the body `body`.
fn func(body: Vec<Stmt>) -> Function {
    let one = Dim {
        lower: Affine::cst(0),
        extent: Affine::cst(1),
    };
    Function {
        name: "p".into(),
        params: vec!["N".into()],
        context: Set::universe(Space::set(&["N"], &[] as &[&str])),
        arrays: vec![
            arr("X", ElemType::Float, vec![n_dim(), n_dim()]),
            arr("Y", ElemType::Float, vec![n_dim()]),
            arr("C", ElemType::Float, vec![n_dim()]),
            arr("S", ElemType::Float, vec![one]),
            arr("s", ElemType::Float, vec![]),
            arr("idx", ElemType::Int, vec![n_dim()]),
            arr("M", ElemType::Float, vec![n_dim(), n_dim()]),
        ],
        loop_vars: vec!["i".into(), "j".into(), "k".into()],
        locals: vec![
            Local {
                name: "acc".into(),
                ty: ElemType::Float,
            },
            Local {
                name: "t".into(),
                ty: ElemType::Float,
            },
        ],
        externals: vec![ExternalDecl {
            name: "h".into(),
            arity: 1,
        }],
        body,
    }
}

fn for_n(var: LoopVar, body: Vec<Stmt>) -> ForLoop {
    ForLoop {
        var,
        lower: Bound::aff(Affine::cst(0)),
        upper: Bound::aff(Affine::param(0).offset(-1).expect("small")),
        body,
        parallel: false,
    }
}

fn v(x: LoopVar) -> Expr {
    Expr::var(x)
}

fn assign(array: usize, index: Vec<Expr>, value: Expr) -> Stmt {
    Stmt::Assign {
        array,
        index,
        value,
    }
}

fn add(array: usize, index: Vec<Expr>, value: Expr) -> Stmt {
    Stmt::Accumulate(Accumulation {
        array,
        index,
        op: ReduceOp::Add,
        value,
    })
}

/// `is_parallel` of the first statement of `f`, a loop.
fn verdict(f: &Function) -> Result<(), Refusal> {
    let Some(Stmt::For(l)) = f.body.first() else {
        panic!("the first statement is a loop");
    };
    f.check().expect("well formed");
    is_parallel(f, l)
}

/// `k := idx[i]` (when in `0 .. N − 1`) `{ M[i][k] += 1.0 }`.
fn bind_row() -> Binding {
    Binding {
        var: K,
        lower: Bound::aff(Affine::cst(0)),
        upper: Bound::aff(Affine::param(0).offset(-1).expect("small")),
        guard: Expr::Bool(true),
        value: Expr::load(IDX, vec![v(I)]),
        body: vec![add(M, vec![v(I), v(K)], Expr::Float(1.0))],
        nonempty: false,
    }
}

fn xij() -> Expr {
    Expr::load(X, vec![v(I), v(J)])
}

#[test]
fn pointwise_loop_is_parallel() {
    // for i: Y[i] = X[i][0] * 2
    let f = func(vec![for_n(
        I,
        vec![assign(
            Y,
            vec![v(I)],
            Expr::bin(
                BinOp::Mul,
                Expr::load(X, vec![v(I), Expr::Int(0)]),
                Expr::Float(2.0),
            ),
        )],
    )
    .into()]);
    assert_eq!(verdict(&f), Ok(()));
}

#[test]
fn register_accumulator_private_to_the_iteration_is_parallel() {
    // for i: { acc = Y[i]; for j: acc = acc + X[i][j]; Y[i] = acc }
    let f = func(vec![for_n(
        I,
        vec![
            Stmt::SetLocal {
                local: 0,
                value: Expr::load(Y, vec![v(I)]),
            },
            for_n(
                J,
                vec![Stmt::SetLocal {
                    local: 0,
                    value: Expr::bin(BinOp::Add, Expr::Local(0), xij()),
                }],
            )
            .into(),
            assign(Y, vec![v(I)], Expr::Local(0)),
        ],
    )
    .into()]);
    assert_eq!(verdict(&f), Ok(()));
}

#[test]
fn skewed_pinned_index_and_draws_are_parallel() {
    // for i: for j: M[2i + 3][j] = normal(M[2i + 3][j], 1; point [i, j])
    let pinned = Expr::Aff(
        Affine::var(I)
            .plus(Sym::Loop(I), 1)
            .offset(3)
            .expect("small"),
    );
    let draw = Expr::Random(Box::new(RandomDraw {
        dist: Distribution::Normal,
        args: vec![Expr::load(M, vec![pinned.clone(), v(J)]), Expr::Float(1.0)],
        seed: Expr::Int(7),
        site: 1,
        point: vec![v(I), v(J)],
    }));
    let f = func(vec![for_n(
        I,
        vec![for_n(J, vec![assign(M, vec![pinned, v(J)], draw)]).into()],
    )
    .into()]);
    assert_eq!(verdict(&f), Ok(()));
}

#[test]
fn data_selected_write_in_the_iterations_own_row_is_parallel() {
    // for i: bind k := idx[i] in [0, N-1]: M[i][k] += 1
    let bind = bind_row();
    let f = func(vec![for_n(I, vec![bind.into()]).into()]);
    assert_eq!(verdict(&f), Ok(()));
}

#[test]
fn accumulation_into_one_cell_is_not_parallel() {
    // for i: S[0] += X[i][0]  (a reduction loop)
    let f = func(vec![for_n(
        I,
        vec![add(
            S,
            vec![Expr::Int(0)],
            Expr::load(X, vec![v(I), Expr::Int(0)]),
        )],
    )
    .into()]);
    assert_eq!(verdict(&f), Err(Refusal::NotPinned("S".into())));
    // for i: s += X[i][0]  (a scalar)
    let f = func(vec![for_n(
        I,
        vec![add(SCALAR, vec![], Expr::load(X, vec![v(I), Expr::Int(0)]))],
    )
    .into()]);
    assert_eq!(verdict(&f), Err(Refusal::ScalarWrite("s".into())));
}

#[test]
fn array_contracted_in_place_is_not_parallel() {
    // X[i, k] stored as C[k], updated in place along i:
    // for i: for j: C[j] = C[j] + X[i][j]
    let f = func(vec![for_n(
        I,
        vec![for_n(
            J,
            vec![assign(
                C,
                vec![v(J)],
                Expr::bin(BinOp::Add, Expr::load(C, vec![v(J)]), xij()),
            )],
        )
        .into()],
    )
    .into()]);
    assert_eq!(verdict(&f), Err(Refusal::NotPinned("C".into())));
}

#[test]
fn modulo_window_and_neighbour_reads_are_not_parallel() {
    // for i: M[i mod 2][0] = M[(i + 1) mod 2][0] + 1
    let m = |c: i64| {
        Expr::bin(
            BinOp::Mod,
            Expr::Aff(Affine::var(I).offset(c).expect("small")),
            Expr::Int(2),
        )
    };
    let f = func(vec![for_n(
        I,
        vec![assign(
            M,
            vec![m(0), Expr::Int(0)],
            Expr::bin(
                BinOp::Add,
                Expr::load(M, vec![m(1), Expr::Int(0)]),
                Expr::Float(1.0),
            ),
        )],
    )
    .into()]);
    assert_eq!(verdict(&f), Err(Refusal::NotPinned("M".into())));
    // for i: Y[i] = Y[i - 1] + 1 (a flow dependence between iterations)
    let prev = Expr::Aff(Affine::var(I).offset(-1).expect("small"));
    let f = func(vec![for_n(
        I,
        vec![assign(
            Y,
            vec![v(I)],
            Expr::bin(BinOp::Add, Expr::load(Y, vec![prev]), Expr::Float(1.0)),
        )],
    )
    .into()]);
    assert_eq!(verdict(&f), Err(Refusal::NotPinned("Y".into())));
}

#[test]
fn carried_and_live_out_locals_are_not_parallel() {
    // for i: acc = acc + X[i][0]  (acc carried across iterations)
    let f = func(vec![for_n(
        I,
        vec![Stmt::SetLocal {
            local: 0,
            value: Expr::bin(
                BinOp::Add,
                Expr::Local(0),
                Expr::load(X, vec![v(I), Expr::Int(0)]),
            ),
        }],
    )
    .into()]);
    assert_eq!(verdict(&f), Err(Refusal::CarriedLocal("acc".into())));
    // for i: { for j: t = X[i][j]; Y[i] = t }: t is defined only if the
    // inner loop runs
    let f = func(vec![for_n(
        I,
        vec![
            for_n(
                J,
                vec![Stmt::SetLocal {
                    local: 1,
                    value: xij(),
                }],
            )
            .into(),
            assign(Y, vec![v(I)], Expr::Local(1)),
        ],
    )
    .into()]);
    assert_eq!(verdict(&f), Err(Refusal::CarriedLocal("t".into())));
    // for i: { t = X[i][0]; Y[i] = t }; C[0] = t  (t live after the loop)
    let f = func(vec![
        for_n(
            I,
            vec![
                Stmt::SetLocal {
                    local: 1,
                    value: Expr::load(X, vec![v(I), Expr::Int(0)]),
                },
                assign(Y, vec![v(I)], Expr::Local(1)),
            ],
        )
        .into(),
        assign(C, vec![Expr::Int(0)], Expr::Local(1)),
    ]);
    assert_eq!(verdict(&f), Err(Refusal::LocalLiveOut("t".into())));
}

#[test]
fn indirect_write_and_external_are_not_parallel() {
    // for i: C[idx[i]] += 1  (a scatter: two iterations may hit one cell)
    let f = func(vec![for_n(
        I,
        vec![add(C, vec![Expr::load(IDX, vec![v(I)])], Expr::Float(1.0))],
    )
    .into()]);
    assert_eq!(verdict(&f), Err(Refusal::NotPinned("C".into())));
    // for i: Y[i] = h(X[i][0])
    let f = func(vec![for_n(
        I,
        vec![assign(
            Y,
            vec![v(I)],
            Expr::External {
                index: 0,
                args: vec![Expr::load(X, vec![v(I), Expr::Int(0)])],
            },
        )],
    )
    .into()]);
    assert_eq!(verdict(&f), Err(Refusal::External));
}

/// The `parallel` flags of the loops, in pre-order.
fn marks(body: &[Stmt], out: &mut Vec<bool>) {
    for s in body {
        if let Stmt::For(l) = s {
            out.push(l.parallel);
            marks(&l.body, out);
        }
    }
}

#[test]
fn marking_takes_the_outermost_parallel_loop() {
    // for i: for j: M[i][j] = X[i][j]  → i marked, j not.
    let mut f = func(vec![for_n(
        I,
        vec![for_n(J, vec![assign(M, vec![v(I), v(J)], xij())]).into()],
    )
    .into()]);
    assert_eq!(mark_parallel(&mut f), 1);
    let mut m = Vec::new();
    marks(&f.body, &mut m);
    assert_eq!(m, vec![true, false]);
    f.check().expect("a proven mark passes the check");
    // for i: for j: C[j] = C[j] + X[i][j] → i refused, j marked.
    let mut f = func(vec![for_n(
        I,
        vec![for_n(
            J,
            vec![assign(
                C,
                vec![v(J)],
                Expr::bin(BinOp::Add, Expr::load(C, vec![v(J)]), xij()),
            )],
        )
        .into()],
    )
    .into()]);
    assert_eq!(mark_parallel(&mut f), 1);
    let mut m = Vec::new();
    marks(&f.body, &mut m);
    assert_eq!(m, vec![false, true]);
}

#[test]
fn short_constant_loops_are_not_marked() {
    let mut l = for_n(I, vec![assign(Y, vec![v(I)], Expr::Float(1.0))]);
    l.upper = Bound::aff(Affine::cst(MIN_CONSTANT_TRIP - 2));
    let mut f = func(vec![l.into()]);
    assert_eq!(mark_parallel(&mut f), 0);
}

#[test]
fn check_refuses_an_unproven_mark() {
    let mut l = for_n(
        I,
        vec![add(
            S,
            vec![Expr::Int(0)],
            Expr::load(X, vec![v(I), Expr::Int(0)]),
        )],
    );
    l.parallel = true;
    let f = func(vec![l.into()]);
    assert!(matches!(
        f.check(),
        Err(crate::codegen::loop_ast::AstError::NotParallel { .. })
    ));
}

#[test]
fn work_counts_nested_trips() {
    // for i: for j: M[i][j] = X[i][j]: 1 + (1 + 3 + 3) per j.
    let l = for_n(
        I,
        vec![for_n(J, vec![assign(M, vec![v(I), v(J)], xij())]).into()],
    );
    let mut loops = vec![0; 3];
    let w = work(&l, 0, 9, &mut loops, &[5]);
    // per i: the j loop statement (1) + 5 × (assign 1 + two indices 2 +
    // load with two indices 3) = 1 + 5 × 6.
    assert_eq!(w, 10 * (1 + 5 * 6));
    assert_eq!(loops, vec![0; 3]);
}

/// The static work of a flat body (no loop, no categorical; a binding
/// counts its body once) is the work of one iteration for any values,
/// so that `trip · static_work` is what [`work`] computes; a body with a
/// loop has none.
#[test]
fn static_work_is_the_work_of_every_iteration() {
    let bind = bind_row();
    let flat = vec![
        assign(
            Y,
            vec![v(I)],
            Expr::bin(BinOp::Add, xij(), Expr::Float(2.0)),
        ),
        bind.into(),
    ];
    let s = static_work(&flat).expect("a flat body");
    let l = for_n(I, flat);
    for (lo, hi, n, j) in [(0, 0, 1, 0), (0, 9, 10, 3), (5, 104, 200, 7)] {
        let mut loops = vec![0, j, 0];
        assert_eq!(
            work(&l, lo, hi, &mut loops, &[n]),
            s * (hi - lo + 1) as u128
        );
    }
    let nested = vec![for_n(J, vec![assign(Y, vec![v(I)], xij())]).into()];
    assert_eq!(static_work(&nested), None);
}

/// `for (i = ceild(N + a, d); i <= floord(N + a + c, d); i++)` with a
/// pointwise body (parallel when marked).
fn div_loop(a: i64, c: i64, d: i64) -> ForLoop {
    let mut l = for_n(I, vec![assign(Y, vec![v(I)], Expr::Float(1.0))]);
    let n_plus = |k: i64| Affine::param(0).offset(k).expect("small");
    l.lower = Bound::div(n_plus(a), d);
    l.upper = Bound::div(n_plus(a + c), d);
    l
}

#[test]
fn wavefront_loops_of_few_iterations_are_not_marked() {
    // `ceild(N − 5, 4) .. floord(N − 5, 4)`: at most one iteration (the
    // skewed schedules' wavefront loops), whatever N.
    let mut f = func(vec![div_loop(-5, 0, 4).into()]);
    assert_eq!(mark_parallel(&mut f), 0);
    // Just below the threshold, and at it.
    let below = 4 * (MIN_CONSTANT_TRIP - 2);
    let mut f = func(vec![div_loop(-5, below, 4).into()]);
    assert_eq!(mark_parallel(&mut f), 0);
    let mut f = func(vec![div_loop(-5, 4 * (MIN_CONSTANT_TRIP - 1), 4).into()]);
    assert_eq!(mark_parallel(&mut f), 1);
    // Different divisors tell nothing: marked.
    let mut l = div_loop(-5, 0, 4);
    l.upper = Bound::div(Affine::param(0).offset(-5).expect("small"), 2);
    let mut f = func(vec![l.into()]);
    assert_eq!(mark_parallel(&mut f), 1);
}

#[test]
fn trip_bound_of_divided_terms_is_the_largest_trip_count() {
    // Against the loops' trip counts for every N over a few periods: the
    // bound is never below a trip count, and some N reaches it.
    for d in 1..=5 {
        for c in -7..=13 {
            let l = div_loop(3, c, d);
            let bound = known_trip_bound(&l).expect("same divisor, constant apart");
            let mut most = 0;
            for n in -3 * d..=3 * d {
                let lo = eval_bound(&l.lower, true, &[], &[n]).expect("small");
                let hi = eval_bound(&l.upper, false, &[], &[n]).expect("small");
                let trips = (hi - lo + 1).max(0);
                assert!(trips <= bound, "d {d} c {c} N {n}: {trips} > {bound}");
                most = most.max(trips);
            }
            assert_eq!(most, bound, "d {d} c {c}");
        }
    }
}
