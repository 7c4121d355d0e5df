//! Sparse in-place updates (`codegen::opt::sparse_updates`, issue 15): a
//! count updated through `A[v][k] = A[v][k] + (w == v && z == k ? 1 : 0)`
//! inside `for v { for k { ... } }` becomes two data-selected one-trip
//! bindings (`Stmt::Bind`); where the rewrite must not apply it does not;
//! and the JIT runs the rewritten programs exactly like the originals
//! (buffers bit for bit, errors alike), including bindings whose value is
//! out of range and data-dependent values used in affine indices.

mod common;

use alphac::codegen::loop_ast::{
    Accumulation, Affine, BinOp, Binding, Bound, Expr, Function, ReduceOp, Stmt, Sym,
};
use alphac::codegen::opt;
use alphac::jit::{Buffer, ExecError, JitFunction, JitOptions};
use common::loops::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

// ---------------------------------------------------------------------------
// Where the rewrite applies.

#[test]
fn lda_count_update_becomes_two_bindings() {
    let f = ivk(lda_update());
    let (g, (updates, selected)) = sparse(&f);
    assert_eq!((updates, selected), (1, 2), "{}", g.to_c());
    // for i { Bind v := w[i − 1] if i >= 1 { Bind k := z[i − 1] { A += 1 } } }
    let Stmt::For(outer) = &g.body[0] else {
        panic!("{}", g.to_c())
    };
    let [Stmt::Bind(bv)] = outer.body.as_slice() else {
        panic!("{}", g.to_c())
    };
    assert_eq!(bv.var, V);
    assert_eq!(bv.value, data(W, -1));
    // The k binding's non-emptiness (its guard ran only then), then the
    // conjunct that guards the load `w[i − 1]`, in front of it.
    let k_nonempty = Expr::bin(
        BinOp::Le,
        Expr::Aff(Affine::cst(0)),
        Expr::Aff(p(2).offset(-1).expect("small")),
    );
    assert_eq!(bv.guard, and(k_nonempty, ge(var(I), Expr::Int(1))));
    let [Stmt::Bind(bk)] = bv.body.as_slice() else {
        panic!("{}", g.to_c())
    };
    assert_eq!(
        (bk.var, &bk.value, &bk.guard),
        (K, &data(Z, -1), &Expr::Bool(true))
    );
    assert_eq!(
        bk.body,
        vec![update_vk(A, BinOp::Add, Expr::Int(1))],
        "{}",
        g.to_c()
    );
    let text = g.to_c();
    println!("{text}");
    assert!(
        text.contains(
            "if (0 <= V - 1 && (0 <= (K - 1)) && (i >= 1)) { v = w[(i - 1)]; if (0 <= v && v <= V - 1) {"
        ),
        "{text}"
    );
    assert!(text.contains("A[v][k] = (A[v][k] + 1);"), "{text}");
    assert!(!text.contains("for (v ="), "{text}");
    same_all(&f, &g, 0);
    // The whole optimizer does the same and counts it.
    let (h, st) = opt::optimize_with_stats(&f).expect("optimizes");
    assert_eq!((st.guarded_updates, st.selected_loops), (1, 2));
    assert_eq!(bindings(&h.body).len(), 2, "{}", h.to_c());
    same_all(&f, &h, 10);
}

#[test]
fn add_then_sub_becomes_two_updates_and_four_bindings() {
    // A[v][k] = (A[v][k] + (w[i] == v && z[i] == k ? 1 : 0))
    //                  − (w[i] == v && x[i] > 3 && k == z[i + 1] ? 2 : 0)
    let add = Expr::select(
        and(eq(data(W, 0), var(V)), eq(data(Z, 0), var(K))),
        Expr::Int(1),
        Expr::Int(0),
    );
    let sub = Expr::select(
        and(
            eq(data(W, 0), var(V)),
            and(gt(data(X, 0), Expr::Float(3.0)), eq(var(K), data(Z, 1))),
        ),
        Expr::Int(2),
        Expr::Int(0),
    );
    let s = Stmt::Assign {
        array: A,
        index: vec![var(V), var(K)],
        value: Expr::bin(BinOp::Sub, Expr::bin(BinOp::Add, at_vk(A), add), sub),
    };
    // `z[i + 1]` needs a guard `i <= N − 2`: the loop stops there.
    let f = func(vec![for_(
        I,
        (zero(), below(0, 2)),
        vec![for_(V, range(p(1)), vec![for_(K, range(p(2)), vec![s])])],
    )]);
    let (g, (updates, selected)) = sparse(&f);
    assert_eq!((updates, selected), (1, 4), "{}", g.to_c());
    let Stmt::For(outer) = &g.body[0] else {
        panic!("{}", g.to_c())
    };
    assert_eq!(outer.body.len(), 2, "{}", g.to_c());
    // The second k binding keeps `x[i] > 3` as its guard (after the
    // equality on v moved out).
    let ks: Vec<&Binding> = bindings(&g.body)
        .into_iter()
        .filter(|b| b.var == K)
        .collect();
    assert_eq!(ks.len(), 2);
    assert_eq!(ks[1].value, data(Z, 1));
    assert_eq!(ks[1].guard, gt(data(X, 0), Expr::Float(3.0)));
    same_all(&f, &g, 20);
}

#[test]
fn histogram_becomes_a_scatter() {
    // for j { for k in 0..=K { h[k] += (z[j] == k) ? 1 : 0 } }
    let f = func(vec![for_(
        J,
        range(p(0)),
        vec![for_(K, (zero(), below(2, 0)), histograms()[..1].to_vec())],
    )]);
    let (g, (updates, selected)) = sparse(&f);
    assert_eq!((updates, selected), (1, 1), "{}", g.to_c());
    assert!(g.to_c().contains("h[k] += 1;"), "{}", g.to_c());
    same_all(&f, &g, 30);
}

#[test]
fn float_max_mul_and_bool_updates_are_exact() {
    let c = || and(eq(data(W, 0), var(V)), eq(var(K), data(Z, 0)));
    let cases = vec![
        update_vk(
            F,
            BinOp::Max,
            Expr::select(c(), data(X, 0), Expr::Float(f64::NEG_INFINITY)),
        ),
        update_vk(
            F,
            BinOp::Mul,
            Expr::select(c(), data(X, 0), Expr::Float(1.0)),
        ),
        update_vk(
            F,
            BinOp::Add,
            Expr::select(c(), data(X, 0), Expr::Float(0.0)),
        ),
        update_vk(
            A,
            BinOp::Min,
            Expr::select(c(), Expr::Int(-3), Expr::Int(i64::MAX)),
        ),
        // `||` with an infallible condition only.
        Stmt::Accumulate(Accumulation {
            array: B,
            index: vec![var(V), var(K)],
            op: ReduceOp::Or,
            value: Expr::select(
                and(eq(var(V), Expr::Int(1)), eq(var(K), Expr::Int(0))),
                Expr::Bool(true),
                Expr::Bool(false),
            ),
        }),
    ];
    for (n, s) in cases.into_iter().enumerate() {
        let f = ivk(s);
        let (g, (updates, selected)) = sparse(&f);
        assert_eq!((updates, selected), (1, 2), "case {n}\n{}", g.to_c());
        same_all(&f, &g, 10 * n as u64);
    }
}

// ---------------------------------------------------------------------------
// Where it must not apply.

/// `f` is left exactly as it was by the sparse rewrite.
fn untouched(f: &Function) {
    let (g, n) = sparse_counts(f);
    assert_eq!(n, opt::SparseCounts::default(), "{}", g.to_c());
    assert_eq!(&g, f);
    assert!(bindings(&g.body).is_empty());
}

#[test]
fn equality_depending_on_the_variable_is_not_selected() {
    // z[k] == k: the other side reads at `k`.
    let c = and(
        eq(data(W, 0), var(V)),
        eq(Expr::load(Z, vec![var(K)]), var(K)),
    );
    let f = ivk(count_if(c));
    // The k loop is not selected; the v loop (whose body is a loop) is,
    // once interchanged with it: `for k { Bind v := w[i] { ... } }`.
    let (g, n) = sparse_counts(&f);
    assert_eq!(triple(n), (1, 1, 1), "{}", g.to_c());
    let bs = bindings(&g.body);
    assert!(bs.iter().all(|b| b.var == V), "{}", g.to_c());
    assert!(g.to_c().contains("if (z[k] == k) {"), "{}", g.to_c());
    same_all(&f, &g, 120);
    // k == k + v: the other side mentions k, and v is not selected.
    let c = eq(Expr::Aff(Affine::var(K).plus(Sym::Loop(V), 1)), var(K));
    untouched(&ivk(count_if(c)));
}

#[test]
fn guard_prefix_depending_on_the_variable_blocks_the_selection() {
    // k >= 1 comes before the equality on k: it must be evaluated first
    // (it could guard a load), and it depends on k.
    let c = and(ge(var(K), Expr::Int(1)), eq(data(Z, 0), var(K)));
    let f = ivk(count_if(c));
    untouched(&f);
    // After the equality it is fine: it stays in the body.
    let c = and(eq(data(Z, 0), var(K)), ge(var(K), Expr::Int(1)));
    let f = ivk(count_if(c));
    let (g, (u, s)) = sparse(&f);
    assert_eq!((u, s), (1, 1), "{}", g.to_c());
    same_all(&f, &g, 40);
}

#[test]
fn selecting_value_read_from_a_written_array_is_not_moved() {
    // for k { if (h[0] == k) h[k] = h[k] + 5 }: h[0] changes at k = 0.
    let s = Stmt::If {
        cond: eq(Expr::load(H, vec![Expr::Int(0)]), var(K)),
        then: vec![Stmt::Assign {
            array: H,
            index: vec![var(K)],
            value: Expr::bin(BinOp::Add, Expr::load(H, vec![var(K)]), Expr::Int(5)),
        }],
        els: vec![],
    };
    let f = func(vec![for_(K, range(p(2)), vec![s.clone()])]);
    untouched(&f);
    // The same with h[0] replaced by a read-only array is selected.
    let s = Stmt::If {
        cond: eq(Expr::load(Z, vec![Expr::Int(0)]), var(K)),
        then: vec![Stmt::Assign {
            array: H,
            index: vec![var(K)],
            value: Expr::bin(BinOp::Add, Expr::load(H, vec![var(K)]), Expr::Int(5)),
        }],
        els: vec![],
    };
    let f = func(vec![for_(K, range(p(2)), vec![s])]);
    let (g, n) = sparse(&f);
    assert_eq!(n, (0, 1), "{}", g.to_c());
    same_all(&f, &g, 50);
}

#[test]
fn select_without_an_enclosing_selection_stays_branch_free() {
    // The condition selects no loop variable: (a) alone is not applied.
    let c = gt(data(X, 0), Expr::Float(2.0));
    untouched(&ivk(count_if(c)));
    // Not the identity of the operator: not an update.
    let c = and(eq(data(W, 0), var(V)), eq(data(Z, 0), var(K)));
    untouched(&ivk(update_vk(
        A,
        BinOp::Add,
        Expr::select(c.clone(), Expr::Int(1), Expr::Int(1)),
    )));
    // The condition reads the updated array.
    let c2 = and(c, gt(at_vk(A), Expr::Int(2)));
    untouched(&ivk(count_if(c2)));
    // A body of two statements touching another cell of the array in
    // another iteration is not split.
    let c = eq(Expr::load(Z, vec![Expr::Int(0)]), var(K));
    let s1 = Stmt::Assign {
        array: H,
        index: vec![var(K)],
        value: Expr::bin(
            BinOp::Add,
            Expr::load(H, vec![var(K)]),
            Expr::select(c.clone(), Expr::Int(1), Expr::Int(0)),
        ),
    };
    let s2 = Stmt::If {
        cond: c,
        then: vec![Stmt::Assign {
            array: H,
            index: vec![aff(K, 1)],
            value: Expr::load(H, vec![var(K)]),
        }],
        els: vec![],
    };
    untouched(&func(vec![for_(K, range(p(2)), vec![s1, s2])]));
}

// ---------------------------------------------------------------------------
// Scatter interchange.

/// `for k in 0..=K { for j in 0..j_hi { body } }`.
fn k_then_j(j_hi: Bound, body: Vec<Stmt>) -> Function {
    func(vec![for_(
        K,
        (zero(), below(2, 0)),
        vec![for_(J, (zero(), j_hi), body)],
    )])
}

/// `h[k] += (z[j] == k) ? 1 : 0` and `F[0][k − 1] += (k == w[j] + 1 &&
/// x[j] > 30) ? x[j] : 0.0` (floats: the order of the sums matters).
fn histograms() -> Vec<Stmt> {
    vec![
        Stmt::Accumulate(Accumulation {
            array: H,
            index: vec![var(K)],
            op: ReduceOp::Add,
            value: Expr::select(
                eq(Expr::load(Z, vec![var(J)]), var(K)),
                Expr::Int(1),
                Expr::Int(0),
            ),
        }),
        Stmt::Assign {
            array: F,
            index: vec![Expr::Int(0), aff(K, -1)],
            value: Expr::bin(
                BinOp::Add,
                Expr::load(F, vec![Expr::Int(0), aff(K, -1)]),
                Expr::select(
                    and(
                        eq(
                            var(K),
                            Expr::bin(BinOp::Add, Expr::load(W, vec![var(J)]), Expr::Int(1)),
                        ),
                        gt(Expr::load(X, vec![var(J)]), Expr::Float(30.0)),
                    ),
                    Expr::load(X, vec![var(J)]),
                    Expr::Float(0.0),
                ),
            ),
        },
    ]
}

#[test]
fn histogram_loops_are_interchanged_into_a_scatter() {
    // F[0][k − 1] needs k >= 1: guard the second histogram's loop.
    let mut body = histograms();
    body[1] = Stmt::If {
        cond: ge(var(K), Expr::Int(1)),
        then: vec![body[1].clone()],
        els: vec![],
    };
    // The guard `k >= 1` comes before the equality on k: fission keeps
    // the first histogram, the second one is not selected. Without it:
    let f = k_then_j(below(0, 1), histograms()[..1].to_vec());
    let (g, n) = sparse_counts(&f);
    assert_eq!(triple(n), (1, 1, 1), "{}", g.to_c());
    let Stmt::For(outer) = &g.body[0] else {
        panic!("{}", g.to_c())
    };
    assert_eq!(outer.var, J, "{}", g.to_c());
    assert!(g.to_c().contains("h[k] += 1;"), "{}", g.to_c());
    same_all(&f, &g, 100);
    // Both histograms, the float one over k in 1..=K.
    let f = func(vec![for_(
        K,
        (Bound::aff(Affine::cst(1)), below(2, 0)),
        vec![for_(J, range(p(0)), histograms())],
    )]);
    let (g, n) = sparse_counts(&f);
    assert_eq!(triple(n), (2, 2, 1), "{}", g.to_c());
    same_all(&f, &g, 110);
    // The guarded variant is not interchanged (k >= 1 is in the way).
    let f = k_then_j(below(0, 1), body);
    untouched(&f);
}

/// Two histograms fused over `k` (`for k { for j { h } for j { F } }`,
/// which is not a perfect nest) are split over `k` and each interchanged
/// into a scatter; when one piece cannot be, the loop stays whole.
#[test]
fn fused_histograms_are_split_into_scatters() {
    let [h, fl] = <[Stmt; 2]>::try_from(histograms()).unwrap();
    let f = func(vec![for_(
        K,
        (Bound::aff(Affine::cst(1)), below(2, 0)),
        vec![
            for_(J, range(p(0)), vec![h.clone()]),
            for_(J, range(p(0)), vec![fl.clone()]),
        ],
    )]);
    let (g, n) = sparse_counts(&f);
    assert_eq!(triple(n), (2, 2, 2), "{}", g.to_c());
    assert_eq!(g.body.len(), 2, "{}", g.to_c());
    for s in &g.body {
        let Stmt::For(outer) = s else {
            panic!("{}", g.to_c())
        };
        assert_eq!(outer.var, J, "{}", g.to_c());
    }
    same_all(&f, &g, 120);
    // The second piece's loop over j depends on k: no scatter for it, and
    // the first is not split off alone.
    let f = func(vec![for_(
        K,
        (Bound::aff(Affine::cst(1)), below(2, 0)),
        vec![
            for_(J, range(p(0)), vec![h]),
            for_(J, (zero(), Bound::aff(Affine::var(K))), vec![fl]),
        ],
    )]);
    untouched(&f);
}

#[test]
fn scatter_interchange_needs_independent_bounds_and_private_cells() {
    // The j loop's bounds depend on k.
    untouched(&k_then_j(
        Bound::aff(Affine::var(K)),
        histograms()[..1].to_vec(),
    ));
    // h is also read at another cell in the nest.
    let mut body = histograms()[..1].to_vec();
    body.push(Stmt::Assign {
        array: A,
        index: vec![Expr::Int(0), Expr::Int(0)],
        value: Expr::load(H, vec![Expr::Int(0)]),
    });
    untouched(&k_then_j(below(0, 1), body));
}

/// `for k in 0..K { for v in 0..V { for j in 0..j_hi { body } } }`: a
/// per-row histogram (the sampler's term counts `n[k][a] = Σ_j [z_j = k]
/// X[j][a]`), the selecting equality two loops down.
fn k_v_j(j_hi: Bound, body: Vec<Stmt>) -> Function {
    func(vec![for_(
        K,
        (zero(), below(2, 1)),
        vec![for_(V, range(p(1)), vec![for_(J, (zero(), j_hi), body)])],
    )])
}

/// `A[v][k] += (z[j] == k) ? w[j] : 0` and `F[v][k] = F[v][k] + ((z[j] ==
/// k) ? x[j] : 0.0)` (floats: the order of each cell's sum matters).
fn row_histograms() -> Vec<Stmt> {
    let sel = || eq(Expr::load(Z, vec![var(J)]), var(K));
    vec![
        Stmt::Accumulate(Accumulation {
            array: A,
            index: vec![var(V), var(K)],
            op: ReduceOp::Add,
            value: Expr::select(sel(), Expr::load(W, vec![var(J)]), Expr::Int(0)),
        }),
        update_vk(
            F,
            BinOp::Add,
            Expr::select(sel(), Expr::load(X, vec![var(J)]), Expr::Float(0.0)),
        ),
    ]
}

#[test]
fn scatter_interchange_sinks_the_selected_loop_through_a_nest() {
    for body in [row_histograms()[..1].to_vec(), row_histograms()] {
        let f = k_v_j(below(0, 1), body.clone());
        let (g, n) = sparse_counts(&f);
        // for v { for j { Bind k := z[j] { ... } } }, each statement its
        // own binding
        assert_eq!(triple(n), (body.len(), body.len(), 1), "{}", g.to_c());
        let Stmt::For(outer) = &g.body[0] else {
            panic!("{}", g.to_c())
        };
        let [Stmt::For(inner)] = outer.body.as_slice() else {
            panic!("{}", g.to_c())
        };
        assert_eq!((outer.var, inner.var), (V, J), "{}", g.to_c());
        assert_eq!(bindings(&g.body).len(), body.len(), "{}", g.to_c());
        same_all(&f, &g, 200 + body.len() as u64);
    }
    // Not when a loop of the nest has bounds that mention k, nor when a
    // cell is shared between iterations of k.
    untouched(&k_v_j(Bound::aff(Affine::var(K)), row_histograms()));
    let mut shared = row_histograms()[..1].to_vec();
    shared.push(Stmt::Assign {
        array: H,
        index: vec![Expr::Int(0)],
        value: Expr::load(A, vec![Expr::Int(0), Expr::Int(0)]),
    });
    untouched(&k_v_j(below(0, 1), shared));
}

// ---------------------------------------------------------------------------
// The statement form in the JIT and the checker.

/// `Bind k := w[0] in [0, K − 1] if guard { h[k + 1] = h[k + 1] + 1 }`.
fn bind_h(guard: Expr) -> Function {
    let idx = || vec![aff(K, 1)];
    func(vec![Stmt::from(Binding {
        var: K,
        lower: zero(),
        upper: below(2, 1),
        guard,
        value: Expr::load(W, vec![Expr::Int(0)]),
        body: vec![Stmt::Assign {
            array: H,
            index: idx(),
            value: Expr::bin(BinOp::Add, Expr::load(H, idx()), Expr::Int(1)),
        }],
        nonempty: false,
    })])
}

#[test]
fn jit_binding_skips_out_of_range_values_and_proves_affine_indices() {
    let f = bind_h(Expr::Bool(true));
    f.check().expect("well formed");
    let params = [3, 1, 4];
    for checked in [false, true] {
        let j = JitFunction::compile_with(&f, JitOptions { checked }).expect("compiles");
        // `h[k + 1]` with k in [0, K − 1] is inside `h[0 : K + 1]`.
        assert_eq!(j.proves_affine_accesses(&params), Ok(true));
        for (w0, want) in [
            (-1, None),
            (0, Some(1)),
            (2, Some(3)),
            (3, Some(4)),
            (4, None),
            (i64::MIN, None),
            (i64::MAX, None),
        ] {
            let mut bufs = j.zeroed_buffers(&params).expect("buffers");
            if let Buffer::Int(w) = &mut bufs[W] {
                w[0] = w0;
            }
            j.run(&params, &mut bufs).expect("runs");
            let Buffer::Int(h) = &bufs[H] else {
                panic!("int h")
            };
            let mut expect = vec![0; 5];
            if let Some(k) = want {
                expect[k] = 1;
            }
            assert_eq!(h, &expect, "w[0] = {w0}, checked {checked}");
        }
    }
    // A false guard or empty bounds: nothing, and the value is not read
    // (w[N] would be out of bounds).
    let mut f = bind_h(ge(Expr::param(0), Expr::Int(5)));
    let Stmt::Bind(b) = &mut f.body[0] else {
        panic!()
    };
    b.value = Expr::load(W, vec![Expr::param(0)]);
    let j = JitFunction::compile_with(&f, JitOptions { checked: true }).expect("compiles");
    let mut bufs = j.zeroed_buffers(&params).expect("buffers");
    j.run(&params, &mut bufs)
        .expect("guard false: value not evaluated");
    let mut bufs = j.zeroed_buffers(&[6, 1, 0]).expect("buffers");
    j.run(&[6, 1, 0], &mut bufs)
        .expect("bounds empty: nothing evaluated");
    // With the guard true the out-of-bounds value is reported.
    let mut bufs = j.zeroed_buffers(&[6, 1, 2]).expect("buffers");
    assert!(matches!(
        j.run(&[6, 1, 2], &mut bufs),
        Err(ExecError::ContractViolation { .. } | ExecError::OutOfBounds { .. })
    ));
}

/// `f` with its first statement, a binding, changed by `edit`.
fn edited(f: &Function, edit: impl FnOnce(&mut Binding)) -> Function {
    let mut g = f.clone();
    let Stmt::Bind(b) = &mut g.body[0] else {
        panic!("a binding first")
    };
    edit(b);
    g
}

#[test]
fn binding_scope_and_types_are_checked() {
    let f = bind_h(Expr::Bool(true));
    f.check().expect("well formed");
    // The variable is not in scope in its own guard or value.
    assert!(edited(&f, |b| b.guard = eq(var(K), Expr::Int(0)))
        .check()
        .is_err());
    assert!(edited(&f, |b| b.value = var(K)).check().is_err());
    // An int value and a bool guard.
    assert!(edited(&f, |b| b.value = Expr::Float(1.0)).check().is_err());
    assert!(edited(&f, |b| b.guard = Expr::Int(1)).check().is_err());
    // A nested binding may not rebind it.
    let inner = f.body.clone();
    assert!(edited(&f, |b| b.body = inner).check().is_err());
}

/// `Bind k := z[e] in [0, K − 1] if guard { body }`.
fn bind_k(e: Expr, guard: Expr, body: Vec<Stmt>) -> Stmt {
    Stmt::from(Binding {
        var: K,
        lower: zero(),
        upper: below(2, 1),
        guard,
        value: Expr::load(Z, vec![e]),
        body,
        nonempty: false,
    })
}

/// `h[k] = h[k] + value`.
fn bump_h(value: Expr) -> Stmt {
    Stmt::Assign {
        array: H,
        index: vec![var(K)],
        value: Expr::bin(BinOp::Add, Expr::load(H, vec![var(K)]), value),
    }
}

#[test]
fn other_passes_see_through_bindings() {
    // Degenerate loop: `j := i` inside the binding's guard, value, body.
    let f = func(vec![for_(
        I,
        (zero(), below(0, 1)),
        vec![for_(
            J,
            (Bound::aff(Affine::var(I)), Bound::aff(Affine::var(I))),
            vec![bind_k(
                var(J),
                gt(Expr::load(X, vec![var(J)]), Expr::Float(20.0)),
                vec![bump_h(var(J))],
            )],
        )],
    )]);
    let mut g = f.clone();
    assert_eq!(opt::remove_degenerate_loops(&mut g), 1);
    g.check().expect("well formed");
    assert!(!g.to_c().contains('j'), "{}", g.to_c());
    same_all(&f, &g, 60);
    // Guards: the binding's guard `i >= 0` is implied by the loop, and in
    // its body `k >= 0` by the binding's bounds.
    let f = func(vec![for_(
        I,
        (zero(), below(0, 1)),
        vec![bind_k(
            var(I),
            ge(var(I), Expr::Int(0)),
            vec![Stmt::If {
                cond: and(
                    ge(var(K), Expr::Int(0)),
                    gt(Expr::load(X, vec![var(I)]), Expr::Float(20.0)),
                ),
                then: vec![bump_h(Expr::Int(1))],
                els: vec![],
            }],
        )],
    )]);
    let mut g = f.clone();
    assert_eq!(opt::simplify_guards(&mut g), 2, "{}", g.to_c());
    let [b] = bindings(&g.body)[..] else {
        panic!("{}", g.to_c())
    };
    assert_eq!(b.guard, Expr::Bool(true));
    same_all(&f, &g, 70);
    // Hoisting: an accumulation next to a binding that does not touch its
    // array is hoisted; one whose array the binding touches is not.
    let acc = |a: usize| {
        Stmt::Accumulate(Accumulation {
            array: a,
            index: vec![Expr::Int(0)],
            op: ReduceOp::Add,
            value: var(J),
        })
    };
    for (target, hoisted) in [(W, 1), (H, 0)] {
        let f = func(vec![for_(
            J,
            (zero(), below(0, 1)),
            vec![
                acc(target),
                bind_k(var(J), Expr::Bool(true), vec![bump_h(Expr::Int(1))]),
            ],
        )]);
        let mut g = f.clone();
        assert_eq!(opt::hoist_accumulators(&mut g), hoisted, "{}", g.to_c());
        g.check().expect("well formed");
        same_all(&f, &g, 80);
    }
    // Splitting on an atom of a binding's guard: `j >= i`.
    let f = func(vec![for_(
        I,
        (zero(), below(0, 1)),
        vec![for_(
            J,
            (zero(), below(0, 1)),
            vec![bind_k(var(J), ge(var(J), var(I)), vec![bump_h(var(J))])],
        )],
    )]);
    let mut g = f.clone();
    assert_eq!(opt::split_loops(&mut g), 1, "{}", g.to_c());
    g.check().expect("well formed");
    assert!(!g.to_c().contains("(j >= i)"), "{}", g.to_c());
    same_all(&f, &g, 90);
}

// ---------------------------------------------------------------------------
// Random nests: the rewrite never changes a run.

/// A conjunct of the random conditions.
fn conjunct() -> impl Strategy<Value = Expr> {
    prop_oneof![
        3 => Just(eq(data(W, 0), var(V))),
        2 => Just(eq(var(V), data(Z, 0))),
        3 => Just(eq(data(Z, 0), var(K))),
        2 => Just(eq(var(K), data(W, 0))),
        1 => Just(eq(var(K), aff(I, -1))),
        2 => Just(ge(var(I), Expr::Int(1))),
        1 => Just(gt(data(X, 0), Expr::Float(40.0))),
        1 => Just(ge(var(K), Expr::Int(1))),
        1 => Just(Expr::bin(BinOp::Le, var(V), var(K))),
        1 => Just(eq(Expr::load(A, vec![Expr::Int(0), Expr::Int(0)]), var(K))),
    ]
}

/// The increment of the random updates.
fn increment() -> impl Strategy<Value = Expr> {
    prop_oneof![
        Just(Expr::Int(1)),
        Just(Expr::Int(-2)),
        Just(var(K)),
        Just(Expr::Aff(Affine::var(V).plus(Sym::Loop(I), 2))),
        Just(Expr::bin(BinOp::Mul, data(W, 0), Expr::Int(3))),
    ]
}

/// A random update of `A[v][k]` whose conditions are chains of
/// conjuncts (some selecting, some not, some in the way).
fn random_update() -> impl Strategy<Value = Stmt> {
    let cond = || {
        prop::collection::vec(conjunct(), 1..4).prop_map(|cs| {
            let mut it = cs.into_iter().rev();
            let last = it.next().expect("one");
            it.fold(last, |acc, c| and(c, acc))
        })
    };
    (
        cond(),
        increment(),
        cond(),
        increment(),
        0u8..6,
        any::<bool>(),
    )
        .prop_map(|(c1, d1, c2, d2, form, wrong_id)| {
            let id = Expr::Int(i64::from(wrong_id));
            let sel = |c: Expr, d: Expr, op: BinOp| match op {
                BinOp::Mul => Expr::select(c, d, Expr::Int(1)),
                BinOp::Max => Expr::select(c, d, Expr::Int(i64::MIN)),
                _ => Expr::select(c, d, id.clone()),
            };
            match form {
                0 => update_vk(A, BinOp::Add, sel(c1, d1, BinOp::Add)),
                1 => update_vk(A, BinOp::Sub, sel(c1, d1, BinOp::Sub)),
                2 => update_vk(A, BinOp::Max, sel(c1, d1, BinOp::Max)),
                3 => Stmt::Assign {
                    array: A,
                    index: vec![var(V), var(K)],
                    value: Expr::bin(
                        BinOp::Sub,
                        Expr::bin(BinOp::Add, at_vk(A), sel(c1, d1, BinOp::Add)),
                        sel(c2, d2, BinOp::Sub),
                    ),
                },
                4 => Stmt::Accumulate(Accumulation {
                    array: A,
                    index: vec![var(V), var(K)],
                    op: ReduceOp::Mul,
                    value: sel(c1, d1, BinOp::Mul),
                }),
                _ => Stmt::If {
                    cond: c2,
                    then: vec![update_vk(A, BinOp::Add, sel(c1, d1, BinOp::Add))],
                    els: vec![],
                },
            }
        })
}

#[test]
fn random_nests_run_the_same_after_the_rewrite() {
    let mut runner = TestRunner::new(Config {
        cases: 48,
        ..Config::default()
    });
    let fired = std::cell::Cell::new((0usize, 0usize));
    runner
        .run(&(random_update(), any::<bool>()), |(s, optimize)| {
            let f = ivk(s);
            let g = if optimize {
                opt::optimize(&f).expect("optimizes")
            } else {
                sparse(&f).0
            };
            let n = bindings(&g.body).len();
            let (a, b) = fired.get();
            fired.set((a + 1, b + usize::from(n > 0)));
            for (k, params) in PARAMS.iter().enumerate().skip(1) {
                same_runs(&f, &g, params, k as u64);
            }
            Ok(())
        })
        .expect("property holds");
    let (cases, with_bindings) = fired.get();
    assert!(
        with_bindings * 5 >= cases,
        "only {with_bindings} of {cases} nests selected"
    );
}

/// The histogram `for j { for k in 0 ..= K − 1 { h[k] += (z[j] == k) ? 1
/// : 0 } }` through the whole loop optimizer (`opt::optimize`): over the
/// context `K >= 1` the binding's range `0 <= K − 1` is implied, so it is
/// neither tested (`Binding::nonempty`) nor printed; over the universe it
/// may be empty and stays, and with `K = 0` nothing is selected whatever
/// the labels. Both run like the original on every parameter vector.
#[test]
fn binding_ranges_implied_by_the_context_are_not_tested() {
    use alphac::poly::{BasicSet, Set, Space};
    let hist = |context: Set| {
        let mut f = func(vec![for_(
            J,
            range(p(0)),
            vec![for_(K, range(p(2)), histograms()[..1].to_vec())],
        )]);
        f.context = context;
        f
    };
    let space = Space::set(&["N", "V", "K"], &[] as &[&str]);
    let k_pos =
        BasicSet::from_rows(space.clone(), vec![], vec![vec![0, 0, 1, -1]]).expect("a valid row");
    for (context, known) in [
        (Set::from_basic(k_pos), true),
        (Set::universe(space), false),
    ] {
        let f = hist(context);
        let g = opt::optimize(&f).expect("optimizes");
        let bs = bindings(&g.body);
        assert_eq!(bs.len(), 1, "{}", g.to_c());
        assert_eq!(bs[0].nonempty, known, "{}", g.to_c());
        assert_eq!(g.to_c().contains("if (0 <= K - 1)"), !known, "{}", g.to_c());
        same_all(&f, &g, 40);
    }
    // K = 0 over the universe: the range is empty, no label is selected.
    let f = hist(Set::universe(Space::set(&["N", "V", "K"], &[] as &[&str])));
    let g = opt::optimize(&f).expect("optimizes");
    same_runs(&f, &g, &[5, 1, 0], 41);
}
