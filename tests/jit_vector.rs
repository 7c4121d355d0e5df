//! The vector form of innermost loops (`jit::lower::vector`): `f64x2`
//! lanes for assignments and `+=`/`*=` accumulations at contiguous
//! indices, reading affine loads, rows of data-selected loads checked
//! before the loop, and rows of a written array disjoint from the written
//! ones. The checked variant never vectorizes, so fast and checked runs
//! must agree bit for bit (outcomes, with their error points, and
//! buffers).

mod common;

use alphac::codegen::loop_ast::{
    Accumulation, Affine, BinOp, Bound, Expr, Function, ReduceOp, Stmt,
};
use alphac::jit::{Buffer, JitFunction, JitOptions};
use common::loops::*;

/// `for v in lo..V { for k < K { s } }`.
fn nest(v_lower: i64, s: Stmt) -> Function {
    func(vec![for_(
        V,
        (Bound::aff(Affine::cst(v_lower)), below(1, 1)),
        vec![for_(K, range(p(2)), vec![s])],
    )])
}

fn assign_f(value: Expr) -> Stmt {
    Stmt::Assign {
        array: F,
        index: vec![var(V), var(K)],
        value,
    }
}

/// Fast and checked runs agree on every parameter vector and seed;
/// returns how many runs failed (with the same error on both sides).
fn fast_matches_checked(f: &Function) -> usize {
    let mut failures = 0;
    for params in PARAMS {
        for seed in 0..6 {
            let (fast, bf) = run(f, &params, seed, false);
            let (checked, bc) = run(f, &params, seed, true);
            assert_eq!(fast, checked, "params {params:?} seed {seed}\n{}", f.to_c());
            if fast.is_ok() {
                assert!(
                    bitwise_equal(&bf, &bc),
                    "params {params:?} seed {seed}\n{}",
                    f.to_c()
                );
            } else {
                failures += 1;
            }
        }
    }
    failures
}

/// Whether the fast variant's Cranelift IR holds `f64x2` operations.
fn vectorized(f: &Function) -> bool {
    let d = JitFunction::disassemble(f, JitOptions { checked: false }).expect("compiles");
    d.split("\nVCode").next().unwrap_or(&d).contains("f64x2")
}

#[test]
fn an_accumulation_runs_as_vectors() {
    // F[v][k] += x[v] * G[v][k]
    let f = nest(
        0,
        Stmt::Accumulate(Accumulation {
            array: F,
            index: vec![var(V), var(K)],
            op: ReduceOp::Add,
            value: Expr::bin(BinOp::Mul, data_v(X), at_vk(G)),
        }),
    );
    assert!(vectorized(&f), "{}", f.to_c());
    assert_eq!(fast_matches_checked(&f), 0);
    // `max` is not a lane operation here: scalar.
    let g = nest(
        0,
        Stmt::Accumulate(Accumulation {
            array: F,
            index: vec![var(V), var(K)],
            op: ReduceOp::Max,
            value: at_vk(G),
        }),
    );
    assert!(!vectorized(&g), "{}", g.to_c());
    assert_eq!(fast_matches_checked(&g), 0);
}

#[test]
fn a_data_selected_row_runs_as_vectors_after_its_check() {
    // F[v][k] = G[z[v]][k] * x[v]: `z[v]` is checked once per `v` (some
    // are out of range: the same error, at the same point, as checking
    // every access).
    let row = Expr::load(G, vec![Expr::load(Z, vec![var(V)]), var(K)]);
    let f = nest(0, assign_f(Expr::bin(BinOp::Mul, row, data_v(X))));
    assert!(vectorized(&f), "{}", f.to_c());
    assert!(
        fast_matches_checked(&f) > 0,
        "the data puts some z[v] out of range"
    );
}

#[test]
fn a_row_whose_fixed_index_may_overflow_is_checked_once() {
    // F[v][k] = G[z[v]][k] * x[v] + G[z[v] + w[v]][k]: the int sum
    // `z[v] + w[v]` may overflow, but it is fixed along `k`, so its row is
    // checked before the loop with the other one (CoxPH's `R2[first[i] +
    // m[i]][a][b]`), and the loop runs as vectors.
    let z = || Expr::load(Z, vec![var(V)]);
    let sum = Expr::bin(BinOp::Add, z(), Expr::load(W, vec![var(V)]));
    let value = Expr::bin(
        BinOp::Add,
        Expr::bin(BinOp::Mul, Expr::load(G, vec![z(), var(K)]), data_v(X)),
        Expr::load(G, vec![sum, var(K)]),
    );
    let f = nest(0, assign_f(value));
    assert!(vectorized(&f), "{}", f.to_c());
    assert!(
        fast_matches_checked(&f) > 0,
        "the data puts some rows out of range"
    );
    // The sum overflowing at v = 2, after or before the first row's check
    // fails: the same outcome (error and point) and the same buffers
    // written before it, fast and checked.
    let params = [9, 4, 4];
    for z2 in [1, -1] {
        let mut outcomes = Vec::new();
        for checked in [false, true] {
            let j = JitFunction::compile_with(&f, JitOptions { checked }).expect("compiles");
            let mut bufs = buffers(&j, &params, 1);
            for (a, val) in [(Z, z2), (W, i64::MAX)] {
                if let Buffer::Int(v) = &mut bufs[a] {
                    v.iter_mut().for_each(|x| *x = 0);
                    v[2] = val;
                }
            }
            let r = j.run(&params, &mut bufs);
            assert!(r.is_err(), "z[2] = {z2}: {r:?}");
            outcomes.push((r, bufs));
        }
        assert_eq!(outcomes[0].0, outcomes[1].0, "z[2] = {z2}");
        assert!(bitwise_equal(&outcomes[0].1, &outcomes[1].1), "z[2] = {z2}");
    }
}

#[test]
fn rows_of_a_written_array_are_read_only_when_disjoint() {
    // F[v][k] = F[v − 1][k] + x[v]: row v − 1 is never the row written.
    let prev = Expr::load(F, vec![aff(V, -1), var(K)]);
    let f = nest(1, assign_f(Expr::bin(BinOp::Add, prev, data_v(X))));
    assert!(vectorized(&f), "{}", f.to_c());
    assert_eq!(fast_matches_checked(&f), 0);
    // F[v][k] = F[v][k − 1]-like reads of the written row stay scalar:
    // F[v][0] is written at k = 0 and read at every k.
    let first = Expr::load(F, vec![var(V), Expr::Int(0)]);
    let g = nest(0, assign_f(Expr::bin(BinOp::Add, first, data_v(X))));
    assert!(!vectorized(&g), "{}", g.to_c());
    assert_eq!(fast_matches_checked(&g), 0);
}

/// `a[v]` for an `[N]` array (`V <= N` in every parameter vector).
fn data_v(a: usize) -> Expr {
    Expr::load(a, vec![var(V)])
}

#[test]
fn a_load_at_a_modular_index_free_of_the_loop_is_broadcast() {
    // F[v][k] = G[v][k] + x[mod(v + 1, 2)] (x stored modulo 2, as a
    // storage-mapped weight): the load is the same at every k.
    let md = Expr::bin(BinOp::Mod, aff(V, 1), Expr::Int(2));
    let f = nest(
        0,
        assign_f(Expr::bin(BinOp::Add, at_vk(G), Expr::load(X, vec![md]))),
    );
    assert!(vectorized(&f), "{}", f.to_c());
    // N = 1 (the first parameter vector, six seeds) leaves x[1] outside
    // x's box: the same broken contract on both sides.
    assert_eq!(fast_matches_checked(&f), 6);
    // x[mod(k, 2)] moves with k (not contiguous): scalar.
    let mk = Expr::bin(BinOp::Mod, var(K), Expr::Int(2));
    let g = nest(
        0,
        assign_f(Expr::bin(BinOp::Add, at_vk(G), Expr::load(X, vec![mk]))),
    );
    assert!(!vectorized(&g), "{}", g.to_c());
    assert_eq!(fast_matches_checked(&g), 0);
}

#[test]
fn the_two_rows_of_an_array_stored_modulo_two_are_disjoint() {
    // F[mod(v, 2)][k] = F[mod(v + 1, 2)][k] + G[v][k]: the row read is
    // never the row written (1 ≢ 0 mod 2), as in a two-row stencil.
    let row = |c: i64| Expr::bin(BinOp::Mod, aff(V, c), Expr::Int(2));
    let stencil = |c: i64| {
        nest(
            0,
            Stmt::Assign {
                array: F,
                index: vec![row(0), var(K)],
                value: Expr::bin(BinOp::Add, Expr::load(F, vec![row(c), var(K)]), at_vk(G)),
            },
        )
    };
    let f = stencil(1);
    assert!(vectorized(&f), "{}", f.to_c());
    // V = 1 (the first parameter vector, six seeds) puts row 1 outside
    // F's box: the same broken contract on both sides.
    assert_eq!(fast_matches_checked(&f), 6);
    // mod(v + 2, 2) is the written row itself: scalar.
    let g = stencil(2);
    assert!(!vectorized(&g), "{}", g.to_c());
    assert_eq!(fast_matches_checked(&g), 0);
}

/// Floats where IEEE `minimum` and `maximum` differ from a plain compare:
/// NaNs, both zeros, infinities, and values equal to the constants below.
const SPECIAL: [f64; 10] = [
    f64::NAN,
    -0.0,
    0.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    3.0,
    -3.0,
    0.5,
    -f64::NAN,
    7.25,
];

/// The value the interpreter gives `op(a, b)` (`runtime::math`), and
/// whether `x` is it: the same bits, or both NaN (a NaN's sign and payload
/// carry no meaning in the language).
fn is_ieee(op: BinOp, a: f64, b: f64, x: f64) -> bool {
    let want = match op {
        BinOp::Min => alphac::runtime::math::fmin(a, b),
        _ => alphac::runtime::math::fmax(a, b),
    };
    (want.is_nan() && x.is_nan()) || want.to_bits() == x.to_bits()
}

/// Runs `f` (checked or fast) at `V = 3`, `K = 5` (lanes, the remainder
/// and both unrolled copies) with `G[v][k]` set to `g(v, k)`.
fn run_on_g(f: &Function, checked: bool, g: &dyn Fn(usize, usize) -> f64) -> Vec<Buffer> {
    let j = JitFunction::compile_with(f, JitOptions { checked }).expect("compiles");
    let params = [3, 3, 5];
    let mut bufs = buffers(&j, &params, 1);
    if let Buffer::Float(v) = &mut bufs[G] {
        for (i, x) in v.iter_mut().enumerate() {
            *x = g(i / 5, i % 5);
        }
    }
    j.run(&params, &mut bufs).expect("runs");
    bufs
}

fn floats(b: &[Buffer], a: usize) -> Vec<f64> {
    match &b[a] {
        Buffer::Float(v) => v.clone(),
        _ => panic!("array {a} is not a float array"),
    }
}

#[test]
fn min_and_max_with_a_constant_are_the_ieee_ones_in_both_forms() {
    // F[v][k] = op(G[v][k], c) and op(c, G[v][k]) for special G and c
    // (a constant operand neither a NaN nor a zero is lowered as one x86
    // min/max instruction; the zeros and the NaN take the general vector
    // form, `expr::vector_extremum`, against every special value).
    for op in [BinOp::Min, BinOp::Max] {
        for c in [3.0, -3.0, 0.5, f64::INFINITY, 0.0, -0.0, f64::NAN] {
            for flip in [false, true] {
                let (a, b) = (at_vk(G), Expr::Float(c));
                let value = if flip {
                    Expr::bin(op, b, a)
                } else {
                    Expr::bin(op, a, b)
                };
                let f = nest(0, assign_f(value));
                assert!(vectorized(&f), "{}", f.to_c());
                let g = |v: usize, k: usize| SPECIAL[(v * 5 + k) % SPECIAL.len()];
                for checked in [false, true] {
                    let out = floats(&run_on_g(&f, checked, &g), F);
                    for (i, &x) in out.iter().enumerate() {
                        let y = g(i / 5, i % 5);
                        let (l, r) = if flip { (c, y) } else { (y, c) };
                        assert!(
                            is_ieee(op, l, r, x),
                            "{op:?}({l}, {r}) = {x} (checked {checked})\n{}",
                            f.to_c()
                        );
                    }
                }
            }
        }
    }
}

/// `for v < V { m = start; for k < K { m = op(m, G[v][k] * x[v]) };
/// F[v][0] = m }`, with the float local `m`.
fn running_extremum(op: BinOp, start: f64, flip: bool) -> Function {
    let mut f = func(vec![]);
    f.locals.push(alphac::codegen::loop_ast::Local {
        name: "m".into(),
        ty: alphac::vocab::ElemType::Float,
    });
    let term = Expr::bin(BinOp::Mul, at_vk(G), data_v(X));
    let value = if flip {
        Expr::bin(op, term, Expr::Local(0))
    } else {
        Expr::bin(op, Expr::Local(0), term)
    };
    f.body = vec![for_(
        V,
        range(p(1)),
        vec![
            Stmt::SetLocal {
                local: 0,
                value: Expr::Float(start),
            },
            for_(K, range(p(2)), vec![Stmt::SetLocal { local: 0, value }]),
            Stmt::Assign {
                array: F,
                index: vec![var(V), Expr::Int(0)],
                value: Expr::Local(0),
            },
        ],
    )];
    f
}

#[test]
fn a_running_minimum_or_maximum_runs_as_vectors() {
    for op in [BinOp::Min, BinOp::Max] {
        for flip in [false, true] {
            for start in [f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 1.0] {
                let f = running_extremum(op, start, flip);
                assert!(vectorized(&f), "{}", f.to_c());
                // Ordinary data: fast and checked (scalar) agree bit for bit.
                assert_eq!(fast_matches_checked(&f), 0);
                // Special values, rows of each: a NaN anywhere, zeros of
                // both signs at any lane, ties between lanes.
                let rows: [&dyn Fn(usize, usize) -> f64; 4] = [
                    &|v, k| SPECIAL[(v * 5 + k) % SPECIAL.len()],
                    &|v, k| if (v + k) % 2 == 0 { 0.0 } else { -0.0 },
                    &|v, k| [1.0, 2.0, 1.0, 2.0, 1.0][k] + v as f64,
                    &|v, k| if k == v { f64::NAN } else { 4.0 - k as f64 },
                ];
                for g in rows {
                    let fast = run_on_g(&f, false, g);
                    let (x, out) = (floats(&fast, X), floats(&fast, F));
                    for v in 0..3 {
                        let want = (0..5).fold(start, |m, k| {
                            let t = g(v, k) * x[v];
                            let (a, b) = if flip { (t, m) } else { (m, t) };
                            match op {
                                BinOp::Min => alphac::runtime::math::fmin(a, b),
                                _ => alphac::runtime::math::fmax(a, b),
                            }
                        });
                        let got = out[v * 5];
                        assert!(
                            (want.is_nan() && got.is_nan()) || want.to_bits() == got.to_bits(),
                            "{op:?} row {v}: {got} for {want}\n{}",
                            f.to_c()
                        );
                    }
                }
            }
        }
    }
    // A `+` running sum is not reassociated: scalar.
    let mut f = running_extremum(BinOp::Min, 0.0, false);
    if let Stmt::For(outer) = &mut f.body[0] {
        if let Stmt::For(inner) = &mut outer.body[1] {
            if let Stmt::SetLocal {
                value: Expr::Binary(op, _, _),
                ..
            } = &mut inner.body[0]
            {
                *op = BinOp::Add;
            }
        }
    }
    assert!(!vectorized(&f), "{}", f.to_c());
}

#[test]
fn a_loop_copy_per_value_of_a_fixed_condition_runs_as_vectors() {
    // F[v][k] = x[v] > 20 ? G[v][k] * x[v] : G[v][k]: the condition is
    // fixed while k runs, each copy of the loop takes one branch.
    let c = Expr::bin(BinOp::Gt, data_v(X), Expr::Float(20.0));
    let f = nest(
        0,
        assign_f(Expr::select(
            c,
            Expr::bin(BinOp::Mul, at_vk(G), data_v(X)),
            at_vk(G),
        )),
    );
    assert!(vectorized(&f), "{}", f.to_c());
    assert_eq!(fast_matches_checked(&f), 0);
}

#[test]
fn min_and_max_with_an_operand_fixed_along_the_loop_are_the_ieee_ones() {
    // F[v][k] = op(G[v][k], x[v]) and op(x[v], G[v][k]): `x[v]` is computed
    // before the loop over `k`, which is copied under the test that it is
    // neither a NaN nor a zero (`fcmp one`), the copy using one x86
    // min/max instruction. Every special value on both sides, fast and
    // checked, gives the interpreter's IEEE value; an operand that varies
    // along `k` gets no such test.
    let n = SPECIAL.len();
    let params = [n as i64, n as i64, 5];
    for op in [BinOp::Min, BinOp::Max] {
        for flip in [false, true] {
            let (a, b) = (at_vk(G), Expr::load(X, vec![var(V)]));
            let value = if flip {
                Expr::bin(op, b, a)
            } else {
                Expr::bin(op, a, b)
            };
            let f = nest(0, assign_f(value));
            let clif =
                JitFunction::disassemble(&f, JitOptions { checked: false }).expect("compiles");
            assert!(clif.contains("fcmp one"), "{}", f.to_c());
            for checked in [false, true] {
                let j = JitFunction::compile_with(&f, JitOptions { checked }).expect("compiles");
                let mut bufs = buffers(&j, &params, 1);
                if let Buffer::Float(v) = &mut bufs[X] {
                    v.copy_from_slice(&SPECIAL);
                }
                let g = |v: usize, k: usize| SPECIAL[(v + 3 * k + 1) % n];
                if let Buffer::Float(v) = &mut bufs[G] {
                    for (i, x) in v.iter_mut().enumerate() {
                        *x = g(i / 5, i % 5);
                    }
                }
                j.run(&params, &mut bufs).expect("runs");
                for (i, &out) in floats(&bufs, F).iter().enumerate() {
                    let (y, c) = (g(i / 5, i % 5), SPECIAL[i / 5]);
                    let (l, r) = if flip { (c, y) } else { (y, c) };
                    assert!(
                        is_ieee(op, l, r, out),
                        "{op:?}({l}, {r}) = {out} (checked {checked})\n{}",
                        f.to_c()
                    );
                }
            }
        }
    }
    let varying = nest(0, assign_f(Expr::bin(BinOp::Min, at_vk(G), at_vk(F))));
    let clif = JitFunction::disassemble(&varying, JitOptions { checked: false }).expect("compiles");
    assert!(!clif.contains("fcmp one"), "{}", varying.to_c());
}
