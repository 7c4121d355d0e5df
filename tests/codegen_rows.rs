//! Loops over `k` whose body reads rows chosen by data fixed while `k`
//! runs (LBP's `cost[nbr[i][d]][k]` under `valid[i][d] ? … : 0`):
//! `codegen::opt::unswitch_guards` moves an invariant data condition out
//! of the loop (guarded by the loop's non-emptiness), and the JIT checks
//! each row once before the loop's first iteration (`jit::lower::rows`).
//! Both must leave every run as it was: outcomes (errors with their
//! point) and buffers bit for bit, checked and unchecked.

mod common;

use alphac::codegen::loop_ast::{BinOp, Cast, Expr, Function, Stmt};
use alphac::codegen::opt;
use alphac::jit::ExecError;
use common::loops::*;

/// `for v < V { for k < K { F[v][k] = c ? float(A[z[v]][k]) + x[v] : 0.0 } }`.
fn program(c: Expr) -> Function {
    let row = Expr::load(A, vec![Expr::load(Z, vec![var(V)]), var(K)]);
    let value = Expr::select(
        c,
        Expr::bin(
            BinOp::Add,
            Expr::Cast(Cast::IntToFloat, Box::new(row)),
            Expr::load(X, vec![var(V)]),
        ),
        Expr::Float(0.0),
    );
    assign_vk(value)
}

/// `Bo[v][0]`.
fn valid() -> Expr {
    Expr::load(B, vec![var(V), Expr::Int(0)])
}

#[test]
fn an_invariant_data_condition_leaves_the_loop() {
    let f = program(valid());
    let mut g = f.clone();
    // the condition, then the non-emptiness guard of the `k` loops out of
    // the `v` loop
    assert_eq!(opt::unswitch_guards(&mut g), 2);
    let text = g.to_c();
    assert!(text.contains("if (Bo[v][0]) {"), "{text}");
    assert_eq!(text.matches("for (k =").count(), 2, "{text}");
    for seed in 0..8 {
        same_all(&f, &g, seed);
    }
    // `!Bo[v][0] && v >= 1` is invariant data too
    let c = and(
        Expr::Unary(alphac::vocab::UnOp::Not, Box::new(valid())),
        ge(var(V), Expr::Int(1)),
    );
    let f = program(c);
    let mut g = f.clone();
    assert!(opt::unswitch_guards(&mut g) >= 1, "{}", g.to_c());
    assert!(g.to_c().contains("if (!Bo[v][0]"), "{}", g.to_c());
    for seed in 0..8 {
        same_all(&f, &g, seed);
    }
}

#[test]
fn a_condition_that_varies_or_is_written_stays() {
    for c in [
        // mentions k
        Expr::load(B, vec![var(V), var(K)]),
        // reads F, which the loop writes
        gt(Expr::load(F, vec![var(V), Expr::Int(0)]), Expr::Float(1.0)),
        // data-dependent index
        Expr::load(B, vec![Expr::load(W, vec![var(V)]), Expr::Int(0)]),
    ] {
        let f = program(c);
        let mut g = f.clone();
        assert_eq!(opt::unswitch_guards(&mut g), 0, "{}", g.to_c());
    }
}

#[test]
fn rows_checked_before_the_loop_fail_where_the_loop_would() {
    // The unswitched loop reads `A[z[v]][k]` first in its body: the JIT
    // checks `z[v]` once per loop (fast variant). Against the checked
    // variant, which checks every access where it is: the same outcome
    // (an out-of-range `z[v]` reported at `[z[v], 0]`) and buffers.
    let mut g = program(valid());
    opt::unswitch_guards(&mut g);
    let mut failures = 0;
    for params in PARAMS {
        for seed in 0..16 {
            let (fast, bf) = run(&g, &params, seed, false);
            let (checked, bc) = run(&g, &params, seed, true);
            assert_eq!(fast, checked, "params {params:?} seed {seed}\n{}", g.to_c());
            match fast {
                Ok(()) => assert!(bitwise_equal(&bf, &bc), "params {params:?} seed {seed}"),
                Err(ExecError::OutOfBounds { array, point }) => {
                    assert_eq!(array, "A");
                    assert_eq!(point.get(1), Some(&0), "{point:?}");
                    failures += 1;
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    // the data puts some `z[v]` out of range
    assert!(failures > 0);
}

#[test]
fn an_accumulation_under_an_invariant_data_condition_leaves_the_loop() {
    // for v < V { for k < K { h[0] += (w[v] >= 1) ? A[z[v]][k] : 0 } }
    // → for v < V { if (0 <= K − 1) { if (w[v] >= 1) { for k { h[0] += A[z[v]][k] } } } }
    let acc = add_to_h(Expr::select(
        ge(Expr::load(W, vec![var(V)]), Expr::Int(1)),
        Expr::load(A, vec![Expr::load(Z, vec![var(V)]), var(K)]),
        Expr::Int(0),
    ));
    let f = vk(vec![acc]);
    let mut g = f.clone();
    assert!(opt::unswitch_guards(&mut g) >= 1, "{}", g.to_c());
    let text = g.to_c();
    assert!(text.contains("if (w[v] >= 1) {"), "{text}");
    assert!(text.contains("h[0] += A[z[v]][k];"), "{text}");
    assert_eq!(text.matches("for (k =").count(), 1, "{text}");
    for seed in 0..8 {
        same_all(&f, &g, seed);
    }
    // the whole optimizer: the same runs too
    let h = opt::optimize(&f).expect("optimizes");
    for seed in 0..8 {
        same_all(&f, &h, seed);
    }
}

#[test]
fn a_loop_of_several_statements_is_copied_per_value_of_an_invariant_data_choice() {
    // for v < V { for k < K {
    //   F[v][k] = float(A[w[v]][k]);
    //   h[0] += (w[v] >= 1) ? A[z[v]][k] : 0;
    // } }
    // → the `k` loop copied under `if (w[v] >= 1)`: `h[0] += A[z[v]][k]`
    // in one copy (a row the JIT checks once), `h[0] += 0` in the other.
    // The first statement may fail before the choice is evaluated (an
    // out-of-range `w[v]`): every run, fast and checked, ends as before.
    let first = Stmt::Assign {
        array: F,
        index: vec![var(V), var(K)],
        value: Expr::Cast(
            Cast::IntToFloat,
            Box::new(Expr::load(A, vec![Expr::load(W, vec![var(V)]), var(K)])),
        ),
    };
    let acc = add_to_h(Expr::select(
        ge(Expr::load(W, vec![var(V)]), Expr::Int(1)),
        Expr::load(A, vec![Expr::load(Z, vec![var(V)]), var(K)]),
        Expr::Int(0),
    ));
    let f = vk(vec![first, acc]);
    let mut g = f.clone();
    assert!(opt::unswitch_guards(&mut g) >= 1, "{}", g.to_c());
    let text = g.to_c();
    assert!(text.contains("if (w[v] >= 1) {"), "{text}");
    assert!(text.contains("h[0] += A[z[v]][k];"), "{text}");
    assert!(text.contains("h[0] += 0;"), "{text}");
    assert_eq!(text.matches("for (k =").count(), 2, "{text}");
    for seed in 0..8 {
        same_all(&f, &g, seed);
    }
    let (ok, failed) = fast_as_checked(&g, 16);
    assert!(ok > 0 && failed.iter().any(|a| a == "A"), "{ok} {failed:?}");
    // the whole optimizer: the same runs too
    let h = opt::optimize(&f).expect("optimizes");
    for seed in 0..8 {
        same_all(&f, &h, seed);
    }
    // a condition the loop writes, or that varies with `k`, is kept
    for c in [
        ge(Expr::load(H, vec![Expr::Int(0)]), Expr::Int(1)),
        ge(Expr::load(A, vec![var(V), var(K)]), Expr::Int(1)),
    ] {
        let mut body = inner_body(&f);
        let Stmt::Accumulate(a) = &mut body[1] else {
            panic!("the accumulation")
        };
        let Expr::Select(k, _, _) = &mut a.value else {
            panic!("a choice")
        };
        **k = c;
        let f = vk(body);
        let mut g = f.clone();
        assert_eq!(opt::unswitch_guards(&mut g), 0, "{}", g.to_c());
    }
}

/// `for v < V { for k < K { body } }`.
fn vk(body: Vec<Stmt>) -> Function {
    func(vec![for_(
        V,
        (zero(), below(1, 1)),
        vec![for_(K, (zero(), below(2, 1)), body)],
    )])
}

/// A copy of the body of the `k` loop of [`vk`].
fn inner_body(f: &Function) -> Vec<Stmt> {
    let [Stmt::For(outer)] = &f.body[..] else {
        panic!("a loop")
    };
    let [Stmt::For(inner)] = &outer.body[..] else {
        panic!("a loop")
    };
    inner.body.clone()
}

/// `h[0] += value`.
fn add_to_h(value: Expr) -> Stmt {
    Stmt::Accumulate(alphac::codegen::loop_ast::Accumulation {
        array: H,
        index: vec![Expr::Int(0)],
        op: alphac::codegen::loop_ast::ReduceOp::Add,
        value,
    })
}

/// `for v < V { for k < K { F[v][k] = value } }`.
fn assign_vk(value: Expr) -> Function {
    vk(vec![Stmt::Assign {
        array: F,
        index: vec![var(V), var(K)],
        value,
    }])
}

/// Runs `f`'s fast and checked variants on `seeds` seeds of every
/// parameter vector: the same outcomes (errors with their array and
/// point) and, on success, bit-identical buffers. Returns the successes
/// and the names of the arrays of the failures.
fn fast_as_checked(f: &Function, seeds: u64) -> (usize, Vec<String>) {
    let (mut ok, mut failed) = (0, Vec::new());
    for params in PARAMS {
        for seed in 0..seeds {
            let (fast, bf) = run(f, &params, seed, false);
            let (checked, bc) = run(f, &params, seed, true);
            assert_eq!(fast, checked, "params {params:?} seed {seed}");
            match fast {
                Ok(()) => {
                    assert!(bitwise_equal(&bf, &bc), "params {params:?} seed {seed}");
                    ok += 1;
                }
                Err(ExecError::OutOfBounds { array, .. }) => failed.push(array),
                Err(e) => panic!("{e}"),
            }
        }
    }
    (ok, failed)
}

#[test]
fn a_loop_is_copied_per_value_of_a_fixed_data_condition_and_fails_where_it_would() {
    // for v < V { for k < K { F[v][k] = float(A[z[v]][k])
    //                                  + (Bo[w[v]][0] ? float(A[w[v]][k]) : x[v]) } }
    // The `?:` is nested in the value (no unswitching applies) and its
    // condition is a data-selected load fixed in `k`: the JIT checks the
    // row of `A[z[v]]`, then `Bo[w[v]]`, before the loop and runs one copy
    // of it per value (`jit::lower::loops::loop_per_value`), whose rows of
    // `A[w[v]]` are checked once too. Against the checked variant (every
    // access checked where it is): the same outcome, errors with their
    // array and point, and bit-identical buffers.
    let sel = Expr::select(
        Expr::load(B, vec![Expr::load(W, vec![var(V)]), Expr::Int(0)]),
        Expr::Cast(
            Cast::IntToFloat,
            Box::new(Expr::load(A, vec![Expr::load(W, vec![var(V)]), var(K)])),
        ),
        Expr::load(X, vec![var(V)]),
    );
    let value = Expr::bin(
        BinOp::Add,
        Expr::Cast(
            Cast::IntToFloat,
            Box::new(Expr::load(A, vec![Expr::load(Z, vec![var(V)]), var(K)])),
        ),
        sel,
    );
    let (ok, failed) = fast_as_checked(&assign_vk(value), 24);
    // the data exercise successes and both failures
    let at = |a: &str| failed.iter().filter(|x| *x == a).count();
    assert!(ok > 0 && at("A") > 0 && at("Bo") > 0, "{ok} {failed:?}");
}

#[test]
fn a_checked_row_read_at_a_fixed_offset_is_loaded_once() {
    // for v < V { for k < K { F[v][k] = float(A[z[v]][k]) * x[v] + float(A[z[v]][0]) } }
    // `A[z[v]][0]` is a row of the loop over `k` whose offset does not
    // move: checked with the others before the first iteration, then
    // loaded once there (`jit::lower::invariant`). Against the checked
    // variant: the same outcomes (errors at their point) and buffers.
    let row = |k: Expr| {
        Expr::Cast(
            Cast::IntToFloat,
            Box::new(Expr::load(A, vec![Expr::load(Z, vec![var(V)]), k])),
        )
    };
    let value = Expr::bin(
        BinOp::Add,
        Expr::bin(BinOp::Mul, row(var(K)), Expr::load(X, vec![var(V)])),
        row(Expr::Int(0)),
    );
    let (ok, failed) = fast_as_checked(&assign_vk(value), 16);
    assert!(ok > 0 && !failed.is_empty(), "{ok} {failed:?}");
}

/// `for v < V { for k < K { S1; h[0] += A[z[v]][k] } }`.
fn then_row(first: Stmt) -> Function {
    let acc = add_to_h(Expr::load(A, vec![Expr::load(Z, vec![var(V)]), var(K)]));
    vk(vec![first, acc])
}

#[test]
fn a_row_read_after_lazy_reads_of_itself_is_checked_once() {
    // S1 = if (Bo[v][k] || !(A[z[v]][k] >= 0)) F[v][k] = float(A[z[v]][k] + A[v][k]):
    // before the last statement's `A[z[v]][k]` only loads of that row may
    // fail (the `+` only after one): the JIT checks `z[v]` once before
    // the `k` loop, and every `A[z[v]][k]` reads the checked row.
    let row = || Expr::load(A, vec![Expr::load(Z, vec![var(V)]), var(K)]);
    let first = Stmt::If {
        cond: Expr::bin(
            BinOp::Or,
            Expr::load(B, vec![var(V), var(K)]),
            Expr::Unary(alphac::vocab::UnOp::Not, Box::new(ge(row(), Expr::Int(0)))),
        ),
        then: vec![Stmt::Assign {
            array: F,
            index: vec![var(V), var(K)],
            value: Expr::Cast(
                Cast::IntToFloat,
                Box::new(Expr::bin(BinOp::Add, row(), at_vk(A))),
            ),
        }],
        els: vec![],
    };
    let covered = then_row(first);
    let (ok, failed) = fast_as_checked(&covered, 24);
    assert!(ok > 0 && failed.iter().any(|a| a == "A"), "{ok} {failed:?}");
    // The same first statement before a last one that reads another row
    // (`A[v][k]`, affine): each lazy `A[z[v]][k]` keeps its own check.
    let mut body = inner_body(&covered);
    let Stmt::Accumulate(acc) = &mut body[1] else {
        panic!("the accumulation")
    };
    acc.value = at_vk(A);
    let apart = vk(body);
    assert!(
        cold_blocks(&covered) < cold_blocks(&apart),
        "{} against {}",
        cold_blocks(&covered),
        cold_blocks(&apart)
    );
    // The `||` evaluates its checked-row operand eagerly, and the then-branch
    // and the last statement reuse that load: fewer int loads than when
    // the condition is `Bo[v][k]` alone (the then-branch's load is then
    // under the `if`, and the last statement loads again).
    let mut body = inner_body(&covered);
    let Stmt::If { cond, .. } = &mut body[0] else {
        panic!("the if")
    };
    *cond = Expr::load(B, vec![var(V), var(K)]);
    let plain = vk(body);
    let (lc, lp) = (int_loads(&covered), int_loads(&plain));
    assert!(lc < lp, "{lc} against {lp}");
    let (ok, failed) = fast_as_checked(&plain, 8);
    assert!(ok > 0 && failed.iter().any(|a| a == "A"), "{ok} {failed:?}");
}

#[test]
fn a_row_read_after_another_row_that_may_fail_is_checked_where_it_is() {
    // S1 = if (Bo[v][k]) F[v][k] = float(A[w[v]][k]): a load of another
    // row may fail first. Checking `z[v]` before the loop would report
    // `A` at `[z[v], 0]` where the program fails at `[w[v], k]`: the
    // fast variant must end every run as the checked one (the same
    // failing point), both rows failing in some runs.
    let first = Stmt::If {
        cond: Expr::load(B, vec![var(V), var(K)]),
        then: vec![Stmt::Assign {
            array: F,
            index: vec![var(V), var(K)],
            value: Expr::Cast(
                Cast::IntToFloat,
                Box::new(Expr::load(A, vec![Expr::load(W, vec![var(V)]), var(K)])),
            ),
        }],
        els: vec![],
    };
    let f = then_row(first);
    let (ok, failed) = fast_as_checked(&f, 24);
    assert!(ok > 0 && failed.iter().any(|a| a == "A"), "{ok} {failed:?}");
}

#[test]
fn a_guard_reading_invariant_data_leaves_the_loop_under_its_non_emptiness() {
    // for v < V { for k < K { if (w[v] >= 1) h[0] += A[z[v]][k] } }
    // → for v < V { if (0 <= K − 1) { if (w[v] >= 1) { for k { … } } } }:
    // the guard read once per `v`, only where the loop runs.
    let guarded = |c: Expr| {
        vk(vec![Stmt::If {
            cond: c,
            then: vec![add_to_h(Expr::load(
                A,
                vec![Expr::load(Z, vec![var(V)]), var(K)],
            ))],
            els: vec![],
        }])
    };
    let f = guarded(ge(Expr::load(W, vec![var(V)]), Expr::Int(1)));
    let mut g = f.clone();
    assert!(opt::unswitch_guards(&mut g) >= 1, "{}", g.to_c());
    let text = g.to_c();
    let guard = text.find("if (w[v] >= 1) {").expect("moved");
    let inner = text.find("for (k =").expect("the loop");
    assert!(guard < inner, "{text}");
    for seed in 0..8 {
        same_all(&f, &g, seed);
    }
    let (ok, failed) = fast_as_checked(&g, 16);
    assert!(ok > 0 && failed.iter().any(|a| a == "A"), "{ok} {failed:?}");
    // A guard selecting a value of an enclosing loop's variable is the
    // sparse updates' (a binding), a guard reading what the loop writes
    // or varying with `k` stays.
    for c in [
        eq(Expr::load(W, vec![Expr::Int(0)]), var(V)),
        ge(Expr::load(H, vec![Expr::Int(0)]), Expr::Int(1)),
        ge(Expr::load(A, vec![var(V), var(K)]), Expr::Int(1)),
    ] {
        let mut g = guarded(c);
        assert_eq!(opt::unswitch_guards(&mut g), 0, "{}", g.to_c());
    }
}
