//! Hand-built IR programs run by the reference interpreter and compared
//! with values computed directly in Rust.

use alphac::diag::Span;
use alphac::interp::{self, InterpError, Options};
use alphac::ir::*;
use alphac::poly::Constraint;
use alphac::runtime::rng::Stream;
use alphac::runtime::{Array, ArrayData, ArraySpec, RuntimeError, Scalar};
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

// ---------- builders ----------

fn sp() -> Span {
    Span::default()
}
/// The space of `n` indices (`i`, `j`) and the parameter `N`.
fn space(n: usize) -> Space {
    Space::set(&["N"], &["i", "j"][..n])
}
/// `Σ idx[k]·x_k + Σ par[p]·p_p + c` over the space of `idx.len()` indices.
fn aff(idx: &[i64], par: &[i64], c: i64) -> Aff {
    Aff::from_parts(space(idx.len()), par, idx, c).unwrap()
}
/// The row `[par, idx, c]`.
fn row(idx: &[i64], par: &[i64], c: i64) -> Vec<i64> {
    aff(idx, par, c).row().to_vec()
}
fn ge(idx: &[i64], par: &[i64], c: i64) -> Constraint {
    Constraint::ineq(row(idx, par, c))
}
fn eq(idx: &[i64], par: &[i64], c: i64) -> Constraint {
    Constraint::eq(row(idx, par, c))
}
fn dom(dims: &[&str], pieces: Vec<Vec<Constraint>>) -> Set {
    Set::from_constraints(Space::set(&["N"], dims), pieces).unwrap()
}
/// `{ [i] : 0 <= i < N }` with one parameter `N`.
fn range_n() -> Set {
    dom(&["i"], vec![vec![ge(&[1], &[0], 0), ge(&[-1], &[1], -1)]])
}
/// `{ [i, j] : 0 <= i < N and 0 <= j < N }`.
fn square_n() -> Set {
    dom(
        &["i", "j"],
        vec![vec![
            ge(&[1, 0], &[0], 0),
            ge(&[-1, 0], &[1], -1),
            ge(&[0, 1], &[0], 0),
            ge(&[0, -1], &[1], -1),
        ]],
    )
}
fn ex(kind: ExprKind, ty: ElemType) -> Expr {
    Expr {
        kind,
        ty,
        span: sp(),
    }
}
/// `var[access]` (at least one access function: its space is the read's).
fn read(var: VarId, access: Vec<Aff>, ty: ElemType) -> Expr {
    let access = MultiAff::from_affs(access[0].space().clone(), &access).unwrap();
    ex(ExprKind::Read { var, access }, ty)
}
fn bin(op: BinOp, a: Expr, b: Expr, ty: ElemType) -> Expr {
    ex(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty)
}
fn var(name: &str, kind: VarKind, ty: ElemType, domain: Set) -> Variable {
    Variable {
        name: name.into(),
        kind,
        ty,
        domain,
        span: sp(),
    }
}
fn equation(var: VarId, indices: &[&str], expr: Expr) -> Equation {
    let mut eq = Equation {
        var,
        indices: indices.iter().map(|s| s.to_string()).collect(),
        expr,
        span: sp(),
    };
    eq.number_reductions();
    eq
}
/// A one-system program with parameter `N` and context `N >= 1`.
fn program_n(vars: Vec<Variable>, equations: Vec<Equation>) -> Program {
    Program {
        constants: vec![],
        externals: vec![],
        systems: vec![System {
            name: "S".into(),
            params: vec!["N".into()],
            context: dom(&[], vec![vec![ge(&[], &[1], -1)]]),
            vars,
            equations,
            sweeps: vec![],
            span: sp(),
        }],
    }
}
/// A reduction whose body space is `body_domain`'s.
fn reduce(op: ReduceOp, proj: Vec<Aff>, body_domain: Set, body: Expr, ty: ElemType) -> Expr {
    let proj = MultiAff::from_affs(body_domain.space().clone(), &proj).unwrap();
    ex(
        ExprKind::Reduce(Box::new(Reduction {
            // Numbered by `equation`.
            id: ReductionId { var: 0, ordinal: 0 },
            op,
            proj,
            body_domain,
            body,
        })),
        ty,
    )
}
fn floats(a: &Array) -> Vec<f64> {
    match a.data() {
        ArrayData::Float(v) => v.clone(),
        other => panic!("expected floats, got {other:?}"),
    }
}
fn ints(a: &Array) -> Vec<i64> {
    match a.data() {
        ArrayData::Int(v) => v.clone(),
        other => panic!("expected ints, got {other:?}"),
    }
}
fn spec(name: &str, ty: ElemType, lo: Vec<i64>, hi: Vec<i64>) -> ArraySpec {
    ArraySpec {
        name: name.into(),
        ty,
        lo,
        hi,
    }
}
fn int_array(name: &str, v: Vec<i64>) -> Array {
    let s = spec(name, ElemType::Int, vec![0], vec![v.len() as i64 - 1]);
    Array::from_data(&s, ArrayData::Int(v)).unwrap()
}
fn inputs(list: Vec<(&str, Array)>) -> HashMap<String, Array> {
    list.into_iter().map(|(n, a)| (n.to_string(), a)).collect()
}

// ---------- programs ----------

/// `B[i] = reduce(+, (i, j -> i), {0 <= j <= i < N} : A[j])` (A: 0, B: 1).
fn prefix_sum_reduce() -> Program {
    let body_dom = dom(
        &["i", "j"],
        vec![vec![
            ge(&[0, 1], &[0], 0),
            ge(&[1, -1], &[0], 0),
            ge(&[-1, 0], &[1], -1),
        ]],
    );
    let body = read(0, vec![aff(&[0, 1], &[0], 0)], ElemType::Float);
    let rhs = reduce(
        ReduceOp::Add,
        vec![aff(&[1, 0], &[0], 0)],
        body_dom,
        body,
        ElemType::Float,
    );
    program_n(
        vec![
            var("A", VarKind::Input, ElemType::Float, range_n()),
            var("B", VarKind::Output, ElemType::Float, range_n()),
        ],
        vec![equation(1, &["i"], rhs)],
    )
}

/// Suffix sum, demanded from `B[0]` first so that evaluation nests N deep:
/// `B[i] = case { {: i == N-1} : A[i]; {: i < N-1} : B[i+1] + A[i] }` (ints).
fn suffix_sum_chain() -> Program {
    let a_i = read(0, vec![aff(&[1], &[0], 0)], ElemType::Int);
    let b_next = read(1, vec![aff(&[1], &[0], 1)], ElemType::Int);
    let rhs = ex(
        ExprKind::Case(vec![
            (dom(&["i"], vec![vec![eq(&[-1], &[1], -1)]]), a_i.clone()),
            (
                dom(&["i"], vec![vec![ge(&[-1], &[1], -2)]]),
                bin(BinOp::Add, b_next, a_i, ElemType::Int),
            ),
        ]),
        ElemType::Int,
    );
    program_n(
        vec![
            var("A", VarKind::Input, ElemType::Int, range_n()),
            var("B", VarKind::Output, ElemType::Int, range_n()),
        ],
        vec![equation(1, &["i"], rhs)],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn prefix_sum_reduction_matches_rust(n in 1i64..40, seed in any::<u64>()) {
        let p = prefix_sum_reduce();
        let a = Array::random(&spec("A", ElemType::Float, vec![0], vec![n - 1]), seed).unwrap();
        let av = floats(&a);
        let out = interp::run(&p, "S", &[n], &inputs(vec![("A", a)]), 0).unwrap();
        let b = floats(&out["B"]);
        let mut acc = 0.0;
        let mut want = Vec::new();
        for x in &av {
            acc += x;
            want.push(acc);
        }
        // Same operation order (lexicographic), so bitwise equal.
        prop_assert_eq!(b, want);
    }
}

#[test]
fn long_suffix_chain_does_not_overflow_the_stack() {
    let n = 100_000i64;
    let p = suffix_sum_chain();
    let av: Vec<i64> = (0..n).map(|i| (i * 7919) % 101 - 50).collect();
    let t = std::time::Instant::now();
    let out = interp::run(
        &p,
        "S",
        &[n],
        &inputs(vec![("A", int_array("A", av.clone()))]),
        0,
    )
    .unwrap();
    eprintln!("suffix chain of {n}: {:?}", t.elapsed());
    let b = ints(&out["B"]);
    let mut acc = 0;
    for (i, x) in av.iter().enumerate().rev() {
        acc += x;
        assert_eq!(b[i], acc, "B[{i}]");
    }
}

#[test]
fn depth_limit_is_an_error_not_a_crash() {
    let p = suffix_sum_chain();
    let n = 1000;
    let opts = Options {
        max_depth: 100,
        ..Options::default()
    };
    let r = interp::run_with(
        &p,
        "S",
        &[n],
        &inputs(vec![("A", int_array("A", vec![1; 1000]))]),
        0,
        &opts,
    );
    assert!(matches!(r, Err(InterpError::TooDeep(100))), "{r:?}");
}

#[test]
fn stack_guard_stops_chains_longer_than_the_stack() {
    // 2 million nested elements do not fit in 64 MiB: an error, not an abort.
    let p = suffix_sum_chain();
    let n = 2_000_000;
    let opts = Options {
        stack_bytes: 64 << 20,
        ..Options::default()
    };
    let a = int_array("A", vec![1; n as usize]);
    let r = interp::run_with(&p, "S", &[n], &inputs(vec![("A", a)]), 0, &opts);
    match r {
        Err(InterpError::TooDeep(d)) => assert!(d > 1000 && d < n as usize, "{d}"),
        other => panic!("expected TooDeep, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn cycle_is_reported_with_its_elements() {
    // A[i] = B[i] + 1 (output), B[i] = A[i] (local).
    let rhs_a = bin(
        BinOp::Add,
        read(1, vec![aff(&[1], &[0], 0)], ElemType::Int),
        ex(ExprKind::IntConst(1), ElemType::Int),
        ElemType::Int,
    );
    let rhs_b = read(0, vec![aff(&[1], &[0], 0)], ElemType::Int);
    let p = program_n(
        vec![
            var("A", VarKind::Output, ElemType::Int, range_n()),
            var("B", VarKind::Local, ElemType::Int, range_n()),
        ],
        vec![equation(0, &["i"], rhs_a), equation(1, &["i"], rhs_b)],
    );
    match interp::run(&p, "S", &[3], &HashMap::new(), 0) {
        Err(e @ InterpError::Cycle { .. }) => {
            assert_eq!(e.to_string(), "dependence cycle: A[0] -> B[0] -> A[0]");
        }
        other => panic!("expected a cycle, got {other:?}"),
    }
}

#[test]
fn self_cycle_through_a_shift() {
    // A[i] = A[(i + 1) mod-free]: A[i] = case { i < N-1 : A[i+1]; i == N-1 : A[0] }.
    let rhs = ex(
        ExprKind::Case(vec![
            (
                dom(&["i"], vec![vec![ge(&[-1], &[1], -2)]]),
                read(0, vec![aff(&[1], &[0], 1)], ElemType::Int),
            ),
            (
                dom(&["i"], vec![vec![eq(&[-1], &[1], -1)]]),
                read(0, vec![aff(&[0], &[0], 0)], ElemType::Int),
            ),
        ]),
        ElemType::Int,
    );
    let p = program_n(
        vec![var("A", VarKind::Output, ElemType::Int, range_n())],
        vec![equation(0, &["i"], rhs)],
    );
    let e = interp::run(&p, "S", &[3], &HashMap::new(), 0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "dependence cycle: A[0] -> A[1] -> A[2] -> A[0]"
    );
}

/// `C[i] = A[z[i]]` (A: 0 float, z: 1 int, C: 2 float).
fn gather() -> Program {
    let z_i = read(1, vec![aff(&[1], &[0], 0)], ElemType::Int);
    let rhs = ex(
        ExprKind::IndirectRead {
            var: 0,
            indices: vec![z_i],
        },
        ElemType::Float,
    );
    program_n(
        vec![
            var("A", VarKind::Input, ElemType::Float, range_n()),
            var("z", VarKind::Input, ElemType::Int, range_n()),
            var("C", VarKind::Output, ElemType::Float, range_n()),
        ],
        vec![equation(2, &["i"], rhs)],
    )
}

#[test]
fn indirect_read_gathers_and_checks_the_domain() {
    let p = gather();
    let a = Array::random(&spec("A", ElemType::Float, vec![0], vec![4]), 1).unwrap();
    let av = floats(&a);
    let z = vec![4, 0, 3, 3, 1];
    let out = interp::run(
        &p,
        "S",
        &[5],
        &inputs(vec![("A", a.clone()), ("z", int_array("z", z.clone()))]),
        0,
    )
    .unwrap();
    let want: Vec<f64> = z.iter().map(|&k| av[k as usize]).collect();
    assert_eq!(floats(&out["C"]), want);

    let bad = vec![4, 0, 5, 3, 1];
    let e = interp::run(
        &p,
        "S",
        &[5],
        &inputs(vec![("A", a.clone()), ("z", int_array("z", bad))]),
        0,
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("A[5]") && msg.contains("outside the domain of A") && msg.contains("C[2]"),
        "{msg}"
    );
    let neg = vec![0, 0, 0, -1, 0];
    let e = interp::run(
        &p,
        "S",
        &[5],
        &inputs(vec![("A", a), ("z", int_array("z", neg))]),
        0,
    )
    .unwrap_err();
    assert!(e.to_string().contains("A[-1]"), "{e}");
}

#[test]
fn max_reduction_and_empty_identity() {
    // M[i] = reduce(max, [i, j], {0 <= j < i} : A[i, j]) over a square input;
    // M[0] reduces over nothing: -inf.
    let body_dom = dom(
        &["i", "j"],
        vec![vec![
            ge(&[0, 1], &[0], 0),
            ge(&[1, -1], &[0], -1),
            ge(&[1, 0], &[0], 0),
            ge(&[-1, 0], &[1], -1),
        ]],
    );
    let body = read(
        0,
        vec![aff(&[1, 0], &[0], 0), aff(&[0, 1], &[0], 0)],
        ElemType::Float,
    );
    let rhs = reduce(
        ReduceOp::Max,
        vec![aff(&[1, 0], &[0], 0)],
        body_dom,
        body,
        ElemType::Float,
    );
    let p = program_n(
        vec![
            var("A", VarKind::Input, ElemType::Float, square_n()),
            var("M", VarKind::Output, ElemType::Float, range_n()),
        ],
        vec![equation(1, &["i"], rhs)],
    );
    let n = 7;
    let a = Array::random(
        &spec("A", ElemType::Float, vec![0, 0], vec![n - 1, n - 1]),
        3,
    )
    .unwrap();
    let out = interp::run(&p, "S", &[n], &inputs(vec![("A", a.clone())]), 0).unwrap();
    let m = floats(&out["M"]);
    assert_eq!(m[0], f64::NEG_INFINITY);
    for i in 1..n {
        let want = (0..i)
            .map(|j| match a.get(&[i, j]).unwrap() {
                Scalar::Float(x) => x,
                _ => unreachable!(),
            })
            .fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(m[i as usize], want);
    }
}

#[test]
fn union_body_counts_each_point_once() {
    // C = reduce(+, [j], {0 <= j < 5} ∪ {3 <= j < 8} : 1) as a scalar.
    let body_dom = dom(
        &["j"],
        vec![
            vec![ge(&[1], &[0], 0), ge(&[-1], &[0], 4)],
            vec![ge(&[1], &[0], -3), ge(&[-1], &[0], 7)],
        ],
    );
    let rhs = reduce(
        ReduceOp::Add,
        vec![],
        body_dom,
        ex(ExprKind::IntConst(1), ElemType::Int),
        ElemType::Int,
    );
    let p = program_n(
        vec![var(
            "C",
            VarKind::Output,
            ElemType::Int,
            dom(&[], vec![vec![]]),
        )],
        vec![equation(0, &[], rhs)],
    );
    let out = interp::run(&p, "S", &[1], &HashMap::new(), 0).unwrap();
    assert_eq!(out["C"].shape(), &[] as &[usize]);
    assert_eq!(ints(&out["C"]), vec![8]);
}

#[test]
fn triangular_output_box_is_zero_outside_the_domain() {
    // T[i, j] = i * 10 + j over {0 <= j <= i < N}.
    let tri = dom(
        &["i", "j"],
        vec![vec![
            ge(&[0, 1], &[0], 0),
            ge(&[1, -1], &[0], 0),
            ge(&[-1, 0], &[1], -1),
        ]],
    );
    let p = program_n(
        vec![var("T", VarKind::Output, ElemType::Int, tri)],
        vec![equation(
            0,
            &["i", "j"],
            ex(ExprKind::Index(aff(&[10, 1], &[0], 0)), ElemType::Int),
        )],
    );
    let out = interp::run(&p, "S", &[4], &HashMap::new(), 0).unwrap();
    let t = &out["T"];
    assert_eq!(t.shape(), &[4, 4]);
    for i in 0..4 {
        for j in 0..4 {
            let want = if j <= i { i * 10 + j } else { 0 };
            assert_eq!(t.get(&[i, j]).unwrap(), Scalar::Int(want));
        }
    }
}

#[test]
fn parameters_and_inputs_are_checked_first() {
    let p = prefix_sum_reduce();
    let a = Array::random(&spec("A", ElemType::Float, vec![0], vec![4]), 0).unwrap();
    // Context N >= 1.
    let e = interp::run(&p, "S", &[0], &inputs(vec![("A", a.clone())]), 0).unwrap_err();
    assert!(
        matches!(e, InterpError::Input(InputError::OutsideContext(..))),
        "{e}"
    );
    assert!(e.to_string().contains("N=0"));
    assert!(matches!(
        interp::run(&p, "S", &[], &HashMap::new(), 0),
        Err(InterpError::Input(InputError::Params(_)))
    ));
    assert!(matches!(
        interp::run(&p, "T", &[5], &HashMap::new(), 0),
        Err(InterpError::UnknownSystem(_))
    ));
    match interp::run(&p, "S", &[5], &HashMap::new(), 0) {
        Err(InterpError::Input(InputError::MissingInput(v))) => assert_eq!(v, "A"),
        other => panic!("{other:?}"),
    }
    match interp::run(&p, "S", &[6], &inputs(vec![("A", a.clone())]), 0) {
        Err(InterpError::Runtime(RuntimeError::Shape {
            name,
            expected,
            found,
        })) => {
            assert_eq!((name.as_str(), expected, found), ("A", vec![6], vec![5]));
        }
        other => panic!("{other:?}"),
    }
    let ai = int_array("A", vec![1, 2, 3, 4, 5]);
    match interp::run(&p, "S", &[5], &inputs(vec![("A", ai)]), 0) {
        Err(InterpError::Runtime(RuntimeError::DType { name, .. })) => assert_eq!(name, "A"),
        other => panic!("{other:?}"),
    }
    let e = interp::run(&p, "S", &[5], &inputs(vec![("A", a.clone()), ("Q", a)]), 0).unwrap_err();
    assert!(
        matches!(e, InterpError::Input(InputError::NotAnInput(ref q)) if q == "Q"),
        "{e}"
    );
    let mut m = HashMap::new();
    m.insert("N".to_string(), 5);
    assert_eq!(p.systems[0].resolve_params(&m).unwrap(), vec![5]);
    m.insert("K".to_string(), 5);
    assert!(p.systems[0].resolve_params(&m).is_err());
}

#[test]
fn integer_errors_are_reported() {
    // D[i] = 10 / (i - 2): division by zero at i = 2.
    let rhs = bin(
        BinOp::Div,
        ex(ExprKind::IntConst(10), ElemType::Int),
        ex(ExprKind::Index(aff(&[1], &[0], -2)), ElemType::Int),
        ElemType::Int,
    );
    let p = program_n(
        vec![var("D", VarKind::Output, ElemType::Int, range_n())],
        vec![equation(0, &["i"], rhs)],
    );
    let e = interp::run(&p, "S", &[5], &HashMap::new(), 0).unwrap_err();
    assert!(
        e.to_string().contains("D[2]") && e.to_string().contains("division by zero"),
        "{e}"
    );
    let out = interp::run(&p, "S", &[2], &HashMap::new(), 0).unwrap();
    assert_eq!(ints(&out["D"]), vec![-5, -10]);
    // Overflow: i64::MAX + i.
    let rhs = bin(
        BinOp::Add,
        ex(ExprKind::IntConst(i64::MAX), ElemType::Int),
        ex(ExprKind::Index(aff(&[1], &[0], 0)), ElemType::Int),
        ElemType::Int,
    );
    let p = program_n(
        vec![var("D", VarKind::Output, ElemType::Int, range_n())],
        vec![equation(0, &["i"], rhs)],
    );
    let e = interp::run(&p, "S", &[2], &HashMap::new(), 0).unwrap_err();
    assert!(
        e.to_string().contains("overflow") && e.to_string().contains("D[1]"),
        "{e}"
    );
}

#[test]
fn restrict_outside_is_an_error() {
    // R[i] = {: i < 2} : 1.0 over 0 <= i < N.
    let rhs = ex(
        ExprKind::Restrict(
            dom(&["i"], vec![vec![ge(&[-1], &[0], 1)]]),
            Box::new(ex(ExprKind::FloatConst(1.0), ElemType::Float)),
        ),
        ElemType::Float,
    );
    let p = program_n(
        vec![var("R", VarKind::Output, ElemType::Float, range_n())],
        vec![equation(0, &["i"], rhs)],
    );
    assert_eq!(
        floats(&interp::run(&p, "S", &[2], &HashMap::new(), 0).unwrap()["R"]),
        vec![1.0, 1.0]
    );
    let e = interp::run(&p, "S", &[3], &HashMap::new(), 0).unwrap_err();
    assert!(e.to_string().contains("R[2]"), "{e}");
}

#[test]
fn random_draws_follow_the_counter_construction() {
    // X[i] = normal(0, 1) + reduce(+, [i, j], {0 <= j < N} : uniform()).
    let normal = ex(
        ExprKind::Random(
            Distribution::Normal,
            vec![
                ex(ExprKind::FloatConst(0.0), ElemType::Float),
                ex(ExprKind::FloatConst(1.0), ElemType::Float),
            ],
            CallSite { var: 0, ordinal: 0 },
        ),
        ElemType::Float,
    );
    let unif = ex(
        ExprKind::Random(
            Distribution::Uniform,
            vec![],
            CallSite { var: 0, ordinal: 1 },
        ),
        ElemType::Float,
    );
    let body_dom = square_n();
    let red = reduce(
        ReduceOp::Add,
        vec![aff(&[1, 0], &[0], 0)],
        body_dom,
        unif,
        ElemType::Float,
    );
    let p = program_n(
        vec![var("X", VarKind::Output, ElemType::Float, range_n())],
        vec![equation(
            0,
            &["i"],
            bin(BinOp::Add, normal, red, ElemType::Float),
        )],
    );
    let n = 6;
    let seed = 1234;
    let out = interp::run(&p, "S", &[n], &HashMap::new(), seed).unwrap();
    let x = floats(&out["X"]);
    for i in 0..n {
        let z = Stream::new(seed, 0, 0, &[i]).normal(0.0, 1.0).unwrap();
        let mut s = 0.0;
        for j in 0..n {
            s += Stream::new(seed, 0, 1, &[i, j]).uniform(0);
        }
        assert_eq!(x[i as usize], z + s);
    }
    assert_eq!(
        x,
        floats(&interp::run(&p, "S", &[n], &HashMap::new(), seed).unwrap()["X"])
    );
    assert_ne!(
        x,
        floats(&interp::run(&p, "S", &[n], &HashMap::new(), seed + 1).unwrap()["X"])
    );
}

/// `K[i] = categorical([k], {0 <= k < N} : W[i, k])`.
fn categorical_program() -> Program {
    let w = read(
        0,
        vec![aff(&[1, 0], &[0], 0), aff(&[0, 1], &[0], 0)],
        ElemType::Float,
    );
    let c = ex(
        ExprKind::Categorical(Box::new(Categorical {
            index: "k".into(),
            domain: square_n(),
            weight: w,
            site: CallSite { var: 1, ordinal: 0 },
        })),
        ElemType::Int,
    );
    program_n(
        vec![
            var("W", VarKind::Input, ElemType::Float, square_n()),
            var("K", VarKind::Output, ElemType::Int, range_n()),
        ],
        vec![equation(1, &["i"], c)],
    )
}

#[test]
fn categorical_draws_and_weight_errors() {
    let p = categorical_program();
    let n = 5;
    let s = spec("W", ElemType::Float, vec![0, 0], vec![n - 1, n - 1]);
    let w = Array::random(&s, 8).unwrap();
    let out = interp::run(&p, "S", &[n], &inputs(vec![("W", w.clone())]), 99).unwrap();
    let k = ints(&out["K"]);
    let wv = floats(&w);
    for i in 0..n as usize {
        let row = &wv[i * n as usize..(i + 1) * n as usize];
        let want = Stream::new(99, 1, 0, &[i as i64]).categorical(row).unwrap() as i64;
        assert_eq!(k[i], want);
    }
    // A row of zeros at i = 2 is an error naming K[2].
    let mut z = wv.clone();
    for x in &mut z[2 * n as usize..3 * n as usize] {
        *x = 0.0;
    }
    let wz = Array::from_data(&s, ArrayData::Float(z)).unwrap();
    let e = interp::run(&p, "S", &[n], &inputs(vec![("W", wz)]), 99).unwrap_err();
    assert!(
        e.to_string().contains("K[2]") && e.to_string().contains("categorical"),
        "{e}"
    );
}

#[test]
fn externals_and_builtins() {
    // E[i] = f(float(i)) + lgamma(float(i + 1)) + max(i, 2)  with f(x) = 2x.
    let i_f = ex(
        ExprKind::Builtin(
            Builtin::ToFloat,
            vec![ex(ExprKind::Index(aff(&[1], &[0], 0)), ElemType::Int)],
        ),
        ElemType::Float,
    );
    let i1_f = ex(
        ExprKind::Builtin(
            Builtin::ToFloat,
            vec![ex(ExprKind::Index(aff(&[1], &[0], 1)), ElemType::Int)],
        ),
        ElemType::Float,
    );
    let f = ex(ExprKind::External(0, vec![i_f]), ElemType::Float);
    let lg = ex(
        ExprKind::Builtin(Builtin::Lgamma, vec![i1_f]),
        ElemType::Float,
    );
    let mx = ex(
        ExprKind::Builtin(
            Builtin::Max,
            vec![
                ex(ExprKind::Index(aff(&[1], &[0], 0)), ElemType::Int),
                ex(ExprKind::IntConst(2), ElemType::Int),
            ],
        ),
        ElemType::Int,
    );
    let rhs = bin(
        BinOp::Add,
        bin(BinOp::Add, f, lg, ElemType::Float),
        mx,
        ElemType::Float,
    );
    let mut p = program_n(
        vec![var("E", VarKind::Output, ElemType::Float, range_n())],
        vec![equation(0, &["i"], rhs)],
    );
    p.externals.push(External {
        name: "f".into(),
        arity: 1,
        span: sp(),
    });
    let e = interp::run(&p, "S", &[4], &HashMap::new(), 0).unwrap_err();
    assert!(e.to_string().contains("external function f"), "{e}");
    let mut opts = Options::default();
    opts.externals
        .insert("f".into(), Arc::new(|x: &[f64]| 2.0 * x[0]));
    let out = interp::run_with(&p, "S", &[4], &HashMap::new(), 0, &opts).unwrap();
    let e = floats(&out["E"]);
    let fact = [1.0f64, 1.0, 2.0, 6.0];
    for i in 0..4 {
        let want = 2.0 * i as f64 + fact[i].ln() + (i.max(2)) as f64;
        assert!(
            (e[i] - want).abs() < 1e-12,
            "E[{i}] = {}, want {want}",
            e[i]
        );
    }
}

#[test]
fn memoization_makes_doubly_recursive_definitions_linear() {
    // F[i] = case { i <= 1 : i; i >= 2 : F[i-1] + F[i-2] }: exponential
    // without memoization, instant with it.
    let rhs = ex(
        ExprKind::Case(vec![
            (
                dom(&["i"], vec![vec![ge(&[-1], &[0], 1)]]),
                ex(ExprKind::Index(aff(&[1], &[0], 0)), ElemType::Int),
            ),
            (
                dom(&["i"], vec![vec![ge(&[1], &[0], -2)]]),
                bin(
                    BinOp::Add,
                    read(0, vec![aff(&[1], &[0], -1)], ElemType::Int),
                    read(0, vec![aff(&[1], &[0], -2)], ElemType::Int),
                    ElemType::Int,
                ),
            ),
        ]),
        ElemType::Int,
    );
    let p = program_n(
        vec![var("F", VarKind::Output, ElemType::Int, range_n())],
        vec![equation(0, &["i"], rhs)],
    );
    let out = interp::run(&p, "S", &[91], &HashMap::new(), 0).unwrap();
    let f = ints(&out["F"]);
    let (mut a, mut b) = (0i64, 1i64);
    for (i, &x) in f.iter().enumerate() {
        assert_eq!(x, a, "F[{i}]");
        (a, b) = (b, a + b);
    }
    // F[93] overflows i64: a checked error, not a wrapped value.
    let e = interp::run(&p, "S", &[94], &HashMap::new(), 0).unwrap_err();
    assert!(e.to_string().contains("overflow"), "{e}");
}

#[test]
fn if_and_logic_evaluate_only_what_they_need() {
    // G[i] = if i > 0 and 10 / i > 2 then 1 else 0: `10 / 0` is never
    // evaluated because `and` stops at `i > 0` being false.
    let i = || ex(ExprKind::Index(aff(&[1], &[0], 0)), ElemType::Int);
    let c1 = bin(
        BinOp::Gt,
        i(),
        ex(ExprKind::IntConst(0), ElemType::Int),
        ElemType::Bool,
    );
    let c2 = bin(
        BinOp::Gt,
        bin(
            BinOp::Div,
            ex(ExprKind::IntConst(10), ElemType::Int),
            i(),
            ElemType::Int,
        ),
        ex(ExprKind::IntConst(2), ElemType::Int),
        ElemType::Bool,
    );
    let rhs = ex(
        ExprKind::If(
            Box::new(bin(BinOp::And, c1, c2, ElemType::Bool)),
            Box::new(ex(ExprKind::IntConst(1), ElemType::Int)),
            Box::new(ex(ExprKind::IntConst(0), ElemType::Int)),
        ),
        ElemType::Int,
    );
    let p = program_n(
        vec![var("G", VarKind::Output, ElemType::Int, range_n())],
        vec![equation(0, &["i"], rhs)],
    );
    let out = interp::run(&p, "S", &[6], &HashMap::new(), 0).unwrap();
    let want: Vec<i64> = (0..6).map(|i| (i > 0 && 10 / i > 2) as i64).collect();
    assert_eq!(ints(&out["G"]), want);
}

fn arb_constraint() -> impl Strategy<Value = Constraint> {
    (
        -2i64..=2,
        -2i64..=2,
        -1i64..=1,
        -4i64..=4,
        prop::bool::weighted(0.1),
    )
        .prop_map(|(a, b, n, c, is_eq)| {
            if is_eq {
                eq(&[a, b], &[n], c)
            } else {
                ge(&[a, b], &[n], c)
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]
    /// `R[i] = reduce(+, (i, j -> i), D : A[j] * (i + 1))` for a random body
    /// domain `D` (random constraints inside `0 <= i, j < N`, possibly a union
    /// of two pieces), against a brute-force sum over `Set::contains`.
    #[test]
    fn random_reduction_domains_match_brute_force(
        pieces in proptest::collection::vec(proptest::collection::vec(arb_constraint(), 0..4), 1..3),
        n in 1i64..9,
        seed in any::<u64>(),
    ) {
        let pieces: Vec<Vec<Constraint>> = pieces
            .into_iter()
            .map(|mut p| {
                p.extend(square_n().pieces()[0].constraints());
                p
            })
            .collect();
        let body_dom = dom(&["i", "j"], pieces);
        let body = bin(
            BinOp::Mul,
            read(0, vec![aff(&[0, 1], &[0], 0)], ElemType::Int),
            ex(ExprKind::Index(aff(&[1, 0], &[0], 1)), ElemType::Int),
            ElemType::Int,
        );
        let rhs = reduce(ReduceOp::Add, vec![aff(&[1, 0], &[0], 0)], body_dom.clone(), body, ElemType::Int);
        let p = program_n(
            vec![
                var("A", VarKind::Input, ElemType::Int, range_n()),
                var("R", VarKind::Output, ElemType::Int, range_n()),
            ],
            vec![equation(1, &["i"], rhs)],
        );
        let a = Array::random(&spec("A", ElemType::Int, vec![0], vec![n - 1]), seed).unwrap();
        let av = ints(&a);
        let out = interp::run(&p, "S", &[n], &inputs(vec![("A", a)]), 0).unwrap();
        let r = ints(&out["R"]);
        for i in 0..n {
            let mut want = 0;
            for j in 0..n {
                if body_dom.contains(&[n], &[i, j]) {
                    want += av[j as usize] * (i + 1);
                }
            }
            prop_assert_eq!(r[i as usize], want, "R[{}]", i);
        }
    }
}

#[test]
fn cycle_through_a_reduction_body() {
    // S[i] = reduce(+, [i, j], {0 <= j < N} : S[j]): S[0] needs S[0].
    let rhs = reduce(
        ReduceOp::Add,
        vec![aff(&[1, 0], &[0], 0)],
        square_n(),
        read(0, vec![aff(&[0, 1], &[0], 0)], ElemType::Int),
        ElemType::Int,
    );
    let p = program_n(
        vec![var("S", VarKind::Output, ElemType::Int, range_n())],
        vec![equation(0, &["i"], rhs)],
    );
    let e = interp::run(&p, "S", &[3], &HashMap::new(), 0).unwrap_err();
    assert_eq!(e.to_string(), "dependence cycle: S[0] -> S[0]");
}

#[test]
fn boxes_with_a_non_zero_origin() {
    // A over {1 <= i <= N}, B[i] = A[i] * i over {2 <= i <= N + 1} reading A[i - 1].
    let a_dom = dom(&["i"], vec![vec![ge(&[1], &[0], -1), ge(&[-1], &[1], 0)]]);
    let b_dom = dom(&["i"], vec![vec![ge(&[1], &[0], -2), ge(&[-1], &[1], 1)]]);
    let rhs = bin(
        BinOp::Mul,
        read(0, vec![aff(&[1], &[0], -1)], ElemType::Int),
        ex(ExprKind::Index(aff(&[1], &[0], 0)), ElemType::Int),
        ElemType::Int,
    );
    let p = program_n(
        vec![
            var("A", VarKind::Input, ElemType::Int, a_dom),
            var("B", VarKind::Output, ElemType::Int, b_dom),
        ],
        vec![equation(1, &["i"], rhs)],
    );
    let specs = interp::specs(&p.systems[0], &[4], VarKind::Input).unwrap();
    assert_eq!(
        (specs[0].lo.clone(), specs[0].hi.clone()),
        (vec![1], vec![4])
    );
    // The caller's array may have any origin: only its shape is checked.
    let out = interp::run(
        &p,
        "S",
        &[4],
        &inputs(vec![("A", int_array("A", vec![10, 20, 30, 40]))]),
        0,
    )
    .unwrap();
    let b = &out["B"];
    assert_eq!((b.lo().to_vec(), b.shape().to_vec()), (vec![2], vec![4]));
    assert_eq!(ints(b), vec![20, 60, 120, 200]);
}
