//! Available loads (`jit::lower::avail`): a load (or a selection of a
//! loaded label) that one loop iteration computes again, with no store to
//! the arrays it reads in between, reuses the first value; a store, a
//! loop that writes the array, or the end of a branch ends that.
//!
//! Each program runs beside the same statements each under `if (true)`
//! (a scope: nothing is reused from one statement to the next), fast and
//! checked, bit for bit; the kill tests also check the values by hand,
//! and the shape test counts the loads in the optimized IR.

mod common;

use alphac::codegen::loop_ast::{
    BinOp, Binding, Cast, CategoricalDraw, Expr, Function, Selection, Stmt,
};
use alphac::jit::{ExecError, JitFunction, JitOptions};
use common::loops::*;

fn fl(e: Expr) -> Expr {
    Expr::cast(Cast::IntToFloat, e)
}

/// `a[w[i]][z[i]]`: a data-selected cell of a `[V][K]` array.
fn at_wz(a: usize) -> Expr {
    Expr::load(a, vec![data(W, 0), data(Z, 0)])
}

fn set_wz(array: usize, value: Expr) -> Stmt {
    set(array, vec![data(W, 0), data(Z, 0)], value)
}

/// `for i < N { stmts }`, each statement under `if (true)` when `apart`.
fn over_i(stmts: Vec<Stmt>, apart: bool) -> Function {
    let body = if apart {
        stmts
            .into_iter()
            .map(|s| Stmt::If {
                cond: Expr::Bool(true),
                then: vec![s],
                els: vec![],
            })
            .collect()
    } else {
        stmts
    };
    func(vec![for_(I, range(p(0)), body)])
}

/// `f` and `apart` (its statements under `if (true)`) agree, fast and
/// checked, on every parameter vector and a few seeds; `f` passes
/// Cranelift's verifier (its values are used only where defined).
fn agrees_with_apart(f: &Function, apart: &Function) {
    JitFunction::disassemble(f, JitOptions { checked: false }).expect("verifies");
    JitFunction::disassemble(f, JitOptions { checked: true }).expect("verifies");
    for params in PARAMS {
        for seed in 0..3 {
            for checked in [false, true] {
                let (rf, _, bf) = run_in_range(f, &params, seed, checked);
                let (ra, _, ba) = run_in_range(apart, &params, seed, checked);
                assert_eq!(rf, Ok(()), "params {params:?}\n{}", f.to_c());
                assert_eq!(ra, Ok(()), "params {params:?}\n{}", apart.to_c());
                assert!(
                    bitwise_equal(&bf, &ba),
                    "params {params:?} seed {seed} checked {checked}\n{}",
                    f.to_c()
                );
            }
        }
    }
}

#[test]
fn labels_read_by_several_statements_of_an_iteration_are_loaded_once() {
    // for i { for k { G[0][k] = 2 }; F[w][z] = w + z; h[z] += 1;
    // F[w][z] = w·z }: the last statement reads `w[i]` and `z[i]` after
    // stores in their alias categories (`F` shares `w`'s, `h` shares
    // `z`'s), where Cranelift would load them again; they are still
    // available, so it adds no int load to the function. (The inner loop
    // keeps the loop over `i` from being unrolled.)
    let wz = |op| fl(Expr::bin(op, data(W, 0), data(Z, 0)));
    let stmts = |last: bool| {
        let mut s = vec![
            for_(
                K,
                range(p(2)),
                vec![set(G, vec![Expr::Int(0), aff(K, 0)], Expr::Float(2.0))],
            ),
            set_wz(F, wz(BinOp::Add)),
            set(
                H,
                vec![data(Z, 0)],
                Expr::bin(BinOp::Add, Expr::load(H, vec![data(Z, 0)]), Expr::Int(1)),
            ),
        ];
        if last {
            s.push(set_wz(F, wz(BinOp::Mul)));
        }
        s
    };
    let f = over_i(stmts(true), false);
    let (with, without) = (int_loads(&f), int_loads(&over_i(stmts(false), false)));
    assert_eq!(
        with,
        without,
        "the last statement loads again\n{}",
        f.to_c()
    );
    agrees_with_apart(&f, &over_i(stmts(true), true));
}

#[test]
fn a_store_to_the_array_makes_the_next_read_load_again() {
    // x[i] = w[i]; w[i] = w[i] + 5; x[i] = x[i] + 10·w[i]: the second
    // statement's store changes `w[i]` (and the third reads `x[i]` after
    // the first stored it): x[i] = w0 + 10·(w0 + 5).
    let stmts = || {
        vec![
            set(X, vec![aff(I, 0)], fl(data(W, 0))),
            set(
                W,
                vec![aff(I, 0)],
                Expr::bin(BinOp::Add, data(W, 0), Expr::Int(5)),
            ),
            set(
                X,
                vec![aff(I, 0)],
                Expr::bin(
                    BinOp::Add,
                    data(X, 0),
                    Expr::bin(BinOp::Mul, Expr::Float(10.0), fl(data(W, 0))),
                ),
            ),
        ]
    };
    let f = over_i(stmts(), false);
    for params in PARAMS {
        for checked in [false, true] {
            let (r, before, after) = run_in_range(&f, &params, 1, checked);
            assert_eq!(r, Ok(()));
            for (i, &w0) in ints(&before[W]).iter().enumerate() {
                assert_eq!(ints(&after[W])[i], w0 + 5);
                let want = w0 as f64 + 10.0 * (w0 + 5) as f64;
                assert_eq!(floats(&after[X])[i], want, "i = {i}\n{}", f.to_c());
            }
        }
    }
    agrees_with_apart(&f, &over_i(stmts(), true));
}

#[test]
fn a_loop_that_writes_the_array_makes_reads_around_it_load_again() {
    // x[i] = h[0]; for j < N { h[0] = h[0] + 1 }; x[i] = x[i] + 1000·h[0]:
    // with h[0] = c before the loop over i, x[i] = (c + iN) + 1000·(c +
    // (i + 1)N), and h[0] ends at c + N². The inner loop is unrolled and
    // makes several trips at N = 9 and 12: every trip reads h[0] anew.
    let h0 = || Expr::load(H, vec![Expr::Int(0)]);
    let stmts = || {
        vec![
            set(X, vec![aff(I, 0)], fl(h0())),
            for_(
                J,
                range(p(0)),
                vec![set(
                    H,
                    vec![Expr::Int(0)],
                    Expr::bin(BinOp::Add, h0(), Expr::Int(1)),
                )],
            ),
            set(
                X,
                vec![aff(I, 0)],
                Expr::bin(
                    BinOp::Add,
                    data(X, 0),
                    Expr::bin(BinOp::Mul, Expr::Float(1000.0), fl(h0())),
                ),
            ),
        ]
    };
    let f = over_i(stmts(), false);
    for params in PARAMS.into_iter().chain([[12, 2, 3]]) {
        let n = params[0];
        for checked in [false, true] {
            let (r, before, after) = run_in_range(&f, &params, 2, checked);
            assert_eq!(r, Ok(()));
            let c = ints(&before[H])[0];
            assert_eq!(ints(&after[H])[0], c + n * n, "{}", f.to_c());
            for i in 0..n {
                let want = (c + i * n) as f64 + 1000.0 * (c + (i + 1) * n) as f64;
                assert_eq!(floats(&after[X])[i as usize], want, "i = {i}\n{}", f.to_c());
            }
        }
    }
    agrees_with_apart(&f, &over_i(stmts(), true));
}

#[test]
fn a_load_in_a_branch_is_not_reused_after_the_branch() {
    // Loads first made inside an `if`, a lazy `?:` and the right operand
    // of a lazy `&&`, then read again after them: the later reads load
    // again (a value defined in a branch does not dominate the join; the
    // verifier would refuse the IR).
    let big = |e: Expr, t: f64| Expr::bin(BinOp::Gt, e, Expr::Float(t));
    let stmts = || {
        vec![
            Stmt::If {
                cond: big(data(X, 0), 20.0),
                then: vec![set_wz(F, fl(data(W, 0)))],
                els: vec![set_wz(G, fl(data(W, 0)))],
            },
            set_wz(G, fl(Expr::bin(BinOp::Add, data(W, 0), data(Z, 0)))),
            set(
                X,
                vec![aff(I, 0)],
                Expr::select(
                    big(data(X, 0), 50.0),
                    fl(at_wz(A)),
                    Expr::bin(BinOp::Mul, fl(at_wz(A)), Expr::Float(0.5)),
                ),
            ),
            set_wz(
                B,
                Expr::bin(
                    BinOp::And,
                    big(data(X, 0), 30.0),
                    Expr::bin(BinOp::Gt, at_wz(A), Expr::Int(2)),
                ),
            ),
            set_wz(F, Expr::bin(BinOp::Add, fl(at_wz(A)), data(X, 0))),
        ]
    };
    let f = over_i(stmts(), false);
    agrees_with_apart(&f, &over_i(stmts(), true));
}

#[test]
fn reuse_does_not_cross_unrolled_copies_or_loops_over_the_same_variable() {
    // An innermost loop is unrolled: `z[k]` in one copy is another cell
    // than in the next. Two sibling loops over `k` bind it anew.
    let at_k = |a: usize| Expr::load(a, vec![aff(K, 0)]);
    let inner = |a: usize| {
        for_(
            K,
            range(p(0)),
            vec![set(
                X,
                vec![aff(K, 0)],
                Expr::bin(BinOp::Add, fl(at_k(a)), fl(at_k(Z))),
            )],
        )
    };
    let stmts = || vec![inner(W), inner(Z)];
    let f = func(stmts());
    let apart = func(
        stmts()
            .into_iter()
            .map(|s| Stmt::If {
                cond: Expr::Bool(true),
                then: vec![s],
                els: vec![],
            })
            .collect(),
    );
    agrees_with_apart(&f, &apart);
    for params in PARAMS {
        let (r, before, after) = run_in_range(&f, &params, 3, false);
        assert_eq!(r, Ok(()));
        let (z, x) = (ints(&before[Z]), floats(&after[X]));
        for (k, (&zk, &xk)) in z.iter().zip(x).enumerate() {
            assert_eq!(xk, (zk + zk) as f64, "k = {k}");
        }
    }
}

/// `Bind k := selected(z[i], 0, K − 1) { body }`, the selection naming
/// the result variable `var` (its error message's); its range is marked
/// non-empty, as the loop rewrites prove it in a sampler (`K >= 1` in
/// every parameter vector of the tests).
fn bind_z(var: &str, body: Vec<Stmt>) -> Stmt {
    let sel = Expr::Selection(Box::new(Selection {
        value: data(Z, 0),
        lower: Expr::Int(0),
        upper: Expr::Aff(p(2).offset(-1).expect("small")),
        var: var.into(),
        index: "k".into(),
        nonempty: false,
    }));
    Stmt::from(Binding {
        var: K,
        lower: zero(),
        upper: below(2, 1),
        guard: Expr::Bool(true),
        value: sel,
        body,
        nonempty: true,
    })
}

#[test]
fn one_label_selected_for_two_tables_is_checked_once() {
    // for i { Bind k := selected(z[i]) naming A { A[0][k] += 1 };
    // Bind k := selected(z[i]) naming h { h[k] += 1 } }: the second
    // selection has the first's value and range (only the variable its
    // message names differs), so it reuses the first's checked value: as
    // many failure exits as one binding around both updates. A label out
    // of range fails at the first selection, naming `A`, in both forms.
    let inc = |a: usize, index: Vec<Expr>| {
        set(
            a,
            index.clone(),
            Expr::bin(BinOp::Add, Expr::load(a, index), Expr::Int(1)),
        )
    };
    let a_k = || vec![Expr::Int(0), var(K)];
    let two = |apart| {
        over_i(
            vec![
                bind_z("A", vec![inc(A, a_k())]),
                bind_z("h", vec![inc(H, vec![var(K)])]),
            ],
            apart,
        )
    };
    let one = over_i(
        vec![bind_z("A", vec![inc(A, a_k()), inc(H, vec![var(K)])])],
        false,
    );
    let f = two(false);
    assert_eq!(cold_blocks(&f), cold_blocks(&one), "{}", f.to_c());
    assert!(cold_blocks(&two(true)) > cold_blocks(&f));
    for params in PARAMS {
        for seed in 0..3 {
            // random labels (0..10: some outside 0..K, a failure naming A)
            same_runs(&f, &two(true), &params, seed);
            same_runs(&f, &one, &params, seed);
        }
    }
    agrees_with_apart(&f, &two(true));
}

/// `G[0][k]` for the label `k` (the constant 0 is in `G`'s box: `V >= 1`
/// in every parameter vector of the tests).
fn g_at(label: Expr) -> Stmt {
    set(G, vec![Expr::Int(0), label], Expr::Float(2.0))
}

/// `h[z[i]] += 1` (`h` is `[K + 1]`: its box along the label is `[0, K]`).
fn inc_h_z() -> Stmt {
    let at = || vec![data(Z, 0)];
    set(
        H,
        at(),
        Expr::bin(BinOp::Add, Expr::load(H, at()), Expr::Int(1)),
    )
}

/// [`over_i`] with a first statement `for v < V { F[v][0] = 1 }`, which
/// keeps the loop over `i` from being unrolled (the failure exits are
/// then those of one copy of the body).
fn rolled(stmts: Vec<Stmt>, apart: bool) -> Function {
    let fill = for_(
        V,
        range(p(1)),
        vec![set(F, vec![aff(V, 0), Expr::Int(0)], Expr::Float(1.0))],
    );
    over_i([vec![fill], stmts].concat(), apart)
}

#[test]
fn a_label_checked_in_a_range_is_not_checked_again_in_one_containing_it() {
    // for i { Bind k := selected(z[i], 0, K − 1) { h[k] += 1 }; G[0][z[i]]
    // = 2 }: the selection proved 0 <= z[i] <= K − 1, `G`'s box along the
    // label: its access is not checked again (one failure exit fewer than
    // with the statements apart). In the other order, `G`'s check proves
    // the selection's range. `h[z[i]] += 1` (box `[0, K]`) before `G`'s
    // access proves too little: both checks stay, and a label `K` fails at
    // `G`. Runs equal to the statements apart, fast and checked, failures
    // included (labels in `[−1, max(V, K)]`).
    let sel_h = || {
        let h_k = || vec![var(K)];
        let inc = Expr::bin(BinOp::Add, Expr::load(H, h_k()), Expr::Int(1));
        bind_z("h", vec![set(H, h_k(), inc)])
    };
    let g = || g_at(data(Z, 0));
    let cases = [
        (vec![sel_h(), g()], true),
        (vec![g(), sel_h()], true),
        (vec![g(), inc_h_z()], true),
        (vec![inc_h_z(), g()], false),
    ];
    for (stmts, saves) in cases {
        let (f, apart) = (rolled(stmts.clone(), false), rolled(stmts, true));
        let (n, m) = (cold_blocks(&f), cold_blocks(&apart));
        assert_eq!(n + usize::from(saves), m, "{}", f.to_c());
        let mut failed_at_g = false;
        for params in PARAMS {
            for seed in 0..6 {
                same_runs(&f, &apart, &params, seed);
                let (r, _) = run(&f, &params, seed, false);
                failed_at_g |=
                    matches!(r, Err(ExecError::OutOfBounds { array, .. }) if array == "G");
            }
        }
        if !saves {
            assert!(failed_at_g, "no run reached a label K at G\n{}", f.to_c());
        }
    }
}

/// `k ~ uniform(0 ..= K − 1 + extra)` (a uniform categorical draw over
/// loop variable `j`, at the point `i`).
fn uniform_label(extra: i64) -> Expr {
    Expr::Categorical(Box::new(CategoricalDraw {
        var: J,
        lower: zero(),
        upper: below(2, 1 - extra),
        cond: Expr::Bool(true),
        weight: Expr::Float(1.0),
        seed: Expr::Int(7),
        site: 3 << 16,
        point: vec![var(I)],
        array: Some(H),
    }))
}

#[test]
fn a_stored_uniform_label_is_read_back_without_a_check() {
    // for i { h[0] = k ~ uniform(0 ..= K − 1); G[0][h[0]] = 2 }: the load
    // of `h[0]` is the value just stored, a point of the draw's range,
    // inside `G`'s box: no load, no check (one failure exit and one int
    // load fewer than apart). Drawn over `0 ..= K` instead, the label may
    // be `K`: the check stays, and runs fail at `G` exactly as apart.
    let h0 = || vec![Expr::Int(0)];
    for extra in [0, 1] {
        let stmts = vec![
            set(H, h0(), uniform_label(extra)),
            g_at(Expr::load(H, h0())),
        ];
        let (f, apart) = (rolled(stmts.clone(), false), rolled(stmts, true));
        let saves = usize::from(extra == 0);
        assert_eq!(cold_blocks(&f) + saves, cold_blocks(&apart), "{}", f.to_c());
        assert_eq!(int_loads(&f) + 1, int_loads(&apart), "{}", f.to_c());
        for params in PARAMS {
            for seed in 0..3 {
                same_runs(&f, &apart, &params, seed);
            }
        }
    }
}
