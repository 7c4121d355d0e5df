//! The Alpha toolchain's notations (docs/language.md, "Notations of the
//! Alpha toolchain"): each in a small program that is checked, printed by
//! `show` and parsed back (the same text and the same program), and run by
//! the interpreter (on the program and on its printed form) and by the JIT
//! (with and without the optimizer, on both texts); every output is
//! compared with a direct computation in this file.

mod common;

use alphac::compile::{self, Options};
use alphac::interp;
use alphac::ir::print::{program_to_alpha, without_spans};
use alphac::ir::{Program, VarKind};
use alphac::runtime::{Array, ArrayData};
use common::{all_close, close, Tol};
use std::collections::HashMap;

/// Floats: the engines agree to 1e-12 relative; the direct computations
/// below are the same arithmetic in another order.
const TOL: Tol = Tol::rel_or_abs(1e-12);

fn parse(src: &str) -> Program {
    match compile::parse_program(src) {
        Ok(p) => p,
        Err(e) => panic!("{e}\n{src}"),
    }
}

fn same(a: &Array, b: &Array) -> bool {
    a.shape() == b.shape()
        && a.lo() == b.lo()
        && match (a.data(), b.data()) {
            (ArrayData::Int(x), ArrayData::Int(y)) => x == y,
            (ArrayData::Bool(x), ArrayData::Bool(y)) => x == y,
            (ArrayData::Float(x), ArrayData::Float(y)) => all_close(x, y, TOL),
            _ => false,
        }
}

fn same_outputs(what: &str, want: &HashMap<String, Array>, got: &HashMap<String, Array>) {
    assert_eq!(want.len(), got.len(), "{what}: number of outputs");
    for (n, a) in want {
        let b = &got[n];
        assert!(
            same(a, b),
            "{what}: output {n} differs\nwant {:?} {:?}\ngot  {:?} {:?}",
            a.lo(),
            a.data(),
            b.lo(),
            b.data()
        );
    }
}

/// Checks `src`, round-trips it through `show`, runs it on every engine for
/// `params` and `inputs`, and returns the interpreter's outputs.
fn run(src: &str, params: &[i64], inputs: &HashMap<String, Array>) -> HashMap<String, Array> {
    let p1 = parse(src);
    let t1 = program_to_alpha(&p1);
    let p2 = parse(&t1);
    let t2 = program_to_alpha(&p2);
    assert_eq!(t1, t2, "show does not round-trip:\n{t1}");
    assert_eq!(
        without_spans(&p1),
        without_spans(&p2),
        "show changes the program:\n{t1}"
    );
    let name = p1.systems[0].name.clone();
    let want = match interp::run(&p1, &name, params, inputs, 1) {
        Ok(w) => w,
        Err(e) => panic!("{name}: interpreter: {e}"),
    };
    match interp::run(&p2, &name, params, inputs, 1) {
        Ok(w) => same_outputs(&format!("{name}: interpreter on `show`"), &want, &w),
        Err(e) => panic!("{name}: interpreter on `show`: {e}"),
    }
    for (label, text) in [("source", src), ("show", t1.as_str())] {
        for optimize in [false, true] {
            let opts = Options {
                optimize,
                checked: true,
                ..Options::default()
            };
            let c = match compile::compile(text, &opts) {
                Ok(c) => c,
                Err(e) => panic!("{name} ({label}, optimize={optimize}): {e}"),
            };
            match c.run(params, inputs, 1) {
                Ok(g) => same_outputs(
                    &format!("{name}: JIT ({label}, optimize={optimize})"),
                    &want,
                    &g,
                ),
                Err(e) => panic!("{name}: JIT ({label}, optimize={optimize}): {e}"),
            }
        }
    }
    want
}

/// Every point of the box `lo ..= lo + shape - 1`, row-major.
fn box_points(lo: &[i64], shape: &[usize]) -> Vec<Vec<i64>> {
    let mut out = vec![Vec::new()];
    for (&l, &n) in lo.iter().zip(shape) {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..n as i64).map(move |k| {
                    let mut q = p.clone();
                    q.push(l + k);
                    q
                })
            })
            .collect();
    }
    out
}

/// The input `var` of `src` for `params`, element `x` set to `f(x)`.
fn input(src: &str, var: &str, params: &[i64], f: impl Fn(&[i64]) -> f64) -> Array {
    let p = parse(src);
    let sys = &p.systems[0];
    let v = &sys.vars[sys.var_by_name(var).expect("declared")];
    assert_eq!(v.kind, VarKind::Input);
    let spec = interp::array_spec(v, params).expect("spec");
    let shape = spec.shape().expect("shape");
    let pts = box_points(&spec.lo, &shape);
    let data = match v.ty {
        alphac::ir::ElemType::Float => ArrayData::Float(pts.iter().map(|x| f(x)).collect()),
        alphac::ir::ElemType::Int => ArrayData::Int(pts.iter().map(|x| f(x) as i64).collect()),
        alphac::ir::ElemType::Bool => ArrayData::Bool(pts.iter().map(|x| f(x) != 0.0).collect()),
    };
    Array::from_data(&spec, data).expect("input")
}

/// Output `name` as `(point, value)` pairs over its box.
fn floats(out: &HashMap<String, Array>, name: &str) -> Vec<(Vec<i64>, f64)> {
    let a = &out[name];
    let pts = box_points(a.lo(), a.shape());
    match a.data() {
        ArrayData::Float(v) => pts.into_iter().zip(v.iter().copied()).collect(),
        d => panic!("{name}: not float: {d:?}"),
    }
}

fn ints(out: &HashMap<String, Array>, name: &str) -> Vec<(Vec<i64>, i64)> {
    let a = &out[name];
    let pts = box_points(a.lo(), a.shape());
    match a.data() {
        ArrayData::Int(v) => pts.into_iter().zip(v.iter().copied()).collect(),
        d => panic!("{name}: not int: {d:?}"),
    }
}

fn bools(out: &HashMap<String, Array>, name: &str) -> Vec<(Vec<i64>, bool)> {
    let a = &out[name];
    let pts = box_points(a.lo(), a.shape());
    match a.data() {
        ArrayData::Bool(v) => pts.into_iter().zip(v.iter().copied()).collect(),
        d => panic!("{name}: not bool: {d:?}"),
    }
}

fn check_floats(out: &HashMap<String, Array>, name: &str, want: impl Fn(&[i64]) -> f64) {
    for (x, v) in floats(out, name) {
        let w = want(&x);
        assert!(close(v, w, TOL), "{name}{x:?} = {v}, expected {w}");
    }
}

fn check_ints(out: &HashMap<String, Array>, name: &str, want: impl Fn(&[i64]) -> i64) {
    for (x, v) in ints(out, name) {
        assert_eq!(v, want(&x), "{name}{x:?}");
    }
}

fn check_bools(out: &HashMap<String, Array>, name: &str, want: impl Fn(&[i64]) -> bool) {
    for (x, v) in bools(out, name) {
        assert_eq!(v, want(&x), "{name}{x:?}");
    }
}

/// Deterministic, distinct input values.
fn val_a(x: &[i64]) -> f64 {
    0.25 + 0.37 * (x[0] as f64) - 0.011 * (x[0] * x[0]) as f64
}
fn val_b(x: &[i64]) -> f64 {
    0.9 - 0.13 * (x[0] as f64)
}

const DOMAINS: &str = "
affine domains [N] -> { : N >= 3 }
  inputs
    X : [N];
    W : [-1:1];
    A : [N:2N];
  outputs
    S : [1:N-2];
    C : [N];
    M : int [N, 2:4];
    T : int [N, 3] as [r, c];
  let
    S[i] = reduce(+, [k], W[k] * X[i + k]);
    C[i] = A[i + N] + A[2N - i];
    M[i, j] = 10 * i + j;
    T[r, c] = val[3r + c];
.
";

#[test]
fn array_domains_with_ranges_and_names() {
    for n in [3i64, 6] {
        let params = [n];
        let x = |p: &[i64]| 1.0 + (p[0] * p[0]) as f64;
        let w = |p: &[i64]| [0.5, -2.0, 0.25][(p[0] + 1) as usize];
        let a = |p: &[i64]| (p[0] * 3) as f64 - 0.5;
        let inputs = HashMap::from([
            ("X".to_string(), input(DOMAINS, "X", &params, x)),
            ("W".to_string(), input(DOMAINS, "W", &params, w)),
            ("A".to_string(), input(DOMAINS, "A", &params, a)),
        ]);
        // `[-1:1]` has 3 points, `[N:2N]` has N + 1.
        assert_eq!(inputs["W"].shape(), &[3]);
        assert_eq!(inputs["W"].lo(), &[-1]);
        assert_eq!(inputs["A"].shape(), &[n as usize + 1]);
        let out = run(DOMAINS, &params, &inputs);
        assert_eq!(out["S"].lo(), &[1]);
        assert_eq!(out["S"].shape(), &[n as usize - 2]);
        check_floats(&out, "S", |p| {
            (-1..=1).map(|k| w(&[k]) * x(&[p[0] + k])).sum()
        });
        check_floats(&out, "C", |p| a(&[p[0] + n]) + a(&[2 * n - p[0]]));
        assert_eq!(out["M"].lo(), &[0, 2]);
        assert_eq!(out["M"].shape(), &[n as usize, 3]);
        check_ints(&out, "M", |p| 10 * p[0] + p[1]);
        check_ints(&out, "T", |p| 3 * p[0] + p[1]);
    }
}

const CONSTANTS: &str = "
affine constants [N] -> { : N >= 1 }
  inputs A : [N];
  outputs
    C : {};
    K : int {};
    T : bool {};
    B : [N];
  let
    C = -1[] + 0.5[];
    K = 2[] * -1[] - -3[];
    T = true[] and not false[];
    B[i] = -1[] * A[i] + 2[];
.
";

#[test]
fn constants_with_a_domain() {
    let params = [4];
    let inputs = HashMap::from([("A".to_string(), input(CONSTANTS, "A", &params, val_a))]);
    let out = run(CONSTANTS, &params, &inputs);
    check_floats(&out, "C", |_| -1.0 + 0.5);
    check_ints(&out, "K", |_| -2 + 3);
    check_bools(&out, "T", |_| true);
    check_floats(&out, "B", |p| -val_a(p) + 2.0);
}

const VALUES: &str = "
affine values [N] -> { : N >= 2 }
  outputs
    D : int [N];
    P1 : int [N];
    P2 : [N];
    P3 : int [N];
    P4 : int [N];
    Q : [N, N];
    R : int [N, N];
    V : int [N, N];
  let
    D[i] = val[i + 1] + val(i -> 2*i) + val[N];
    P1[i] = val { N^2 + N };
    P2[i] = val { [k] -> N^2 + 1/2*k };
    P3[i] = val { [k] -> k*(k+1)/2 };
    P4[i] = val { [k] -> k^3 - 2k : k >= 2; [k] -> -k : k = 0 };
    Q[i, j] = val { [a, b] -> (a - b)^2 / 2 + a*b };
    R[i, j] = val { [a, b] -> (a + b)*(a + b + 1)/2 + b };
    V[i, j] = val { i^2 - j^2 - (i - j)*(i + j) + N };
.
";

#[test]
fn index_and_polynomial_values() {
    // The declared types are checked: `P1`, `P3`, `P4`, `R`, `V` are int
    // (integer-valued polynomials), `P2` and `Q` float.
    for n in [2i64, 5] {
        let out = run(VALUES, &[n], &HashMap::new());
        check_ints(&out, "D", |p| p[0] + 1 + 2 * p[0] + n);
        check_ints(&out, "P1", |_| n * n + n);
        check_floats(&out, "P2", |p| (n * n) as f64 + p[0] as f64 / 2.0);
        check_ints(&out, "P3", |p| p[0] * (p[0] + 1) / 2);
        // 0 outside the pieces (k = 1), as in isl.
        check_ints(&out, "P4", |p| {
            let k = p[0];
            if k >= 2 {
                k * k * k - 2 * k
            } else {
                0
            }
        });
        check_floats(&out, "Q", |p| ((p[0] * p[0] + p[1] * p[1]) as f64) / 2.0);
        check_ints(&out, "R", |p| (p[0] + p[1]) * (p[0] + p[1] + 1) / 2 + p[1]);
        check_ints(&out, "V", |_| n);
    }
    let p = parse(VALUES);
    let ty = |v: &str| {
        let s = &p.systems[0];
        s.equation_of(s.var_by_name(v).expect("declared"))
            .expect("defined")
            .expr
            .ty
    };
    assert_eq!(ty("P2"), alphac::ir::ElemType::Float);
    assert_eq!(ty("Q"), alphac::ir::ElemType::Float);
    assert_eq!(ty("P3"), alphac::ir::ElemType::Int);
}

const MINUS: &str = "
affine minus [N] -> { : N >= 2 }
  inputs A : [N]; B : [N];
  outputs U : [N]; V : int [N]; W : [N];
  let
    U[i] = -1*-1 + A[i] * -B[i] + 2 - -3 + - -A[i];
    V[i] = -val[i] * -2 - -i;
    W[i] = -reduce(+, [k], {: 0 <= k <= i} : A[k]) + -max(A[i], B[i])
           - -case { {: i = 0} : 1.0; auto : -A[i - 1]; };
.
";

#[test]
fn unary_minus_wherever_an_expression_starts() {
    let params = [5];
    let inputs = HashMap::from([
        ("A".to_string(), input(MINUS, "A", &params, val_a)),
        ("B".to_string(), input(MINUS, "B", &params, val_b)),
    ]);
    let out = run(MINUS, &params, &inputs);
    check_floats(&out, "U", |p| {
        1.0 - val_a(p) * val_b(p) + 2.0 + 3.0 + val_a(p)
    });
    check_ints(&out, "V", |p| 3 * p[0]);
    check_floats(&out, "W", |p| {
        let i = p[0];
        let s: f64 = (0..=i).map(|k| val_a(&[k])).sum();
        let c = if i == 0 { 1.0 } else { -val_a(&[i - 1]) };
        -s - val_a(p).max(val_b(p)) + c
    });
}

const NARY: &str = "
affine nary [N] -> { : N >= 2 }
  inputs A : [N]; B : [N]; Z : int [N];
  outputs
    S : [N]; P : [N]; M : [N]; L : int [N]; I : int [N]; F : [N];
    X : bool [N]; Y : bool [N];
  let
    S[i] = sum(A[i]) + sum(A[i], B[i], 1) + +(A[i], 2.0, B[i]);
    P[i] = prod(A[i], B[i], 2) + *(A[i], A[i]);
    M[i] = max(A[i], B[i], 0.5) + min(A[i], B[i], 0.25, 0.75) + max(A[i]);
    L[i] = max(Z[i], 3, val[i]) + min(Z[i], 5) + sum(Z[i], i, 1) + prod(Z[i], 2);
    I[i] = Z[i] max 4 min 6 + Z[i] * i max 1;
    F[i] = A[i] max B[i] * 2 + -A[i] min B[i];
    X[i] = and(A[i] > 0.5, B[i] > 0.5) or or(A[i] < 0.1) xor xor(true, B[i] < 0.5, Z[i] > 4);
    Y[i] = A[i] > 0.5 xor B[i] > 0.5 and Z[i] > 2;
.
";

#[test]
fn n_ary_and_infix_operators() {
    let params = [7];
    let z = |p: &[i64]| ((p[0] * 5 + 2) % 9) as f64;
    let inputs = HashMap::from([
        ("A".to_string(), input(NARY, "A", &params, val_a)),
        ("B".to_string(), input(NARY, "B", &params, val_b)),
        ("Z".to_string(), input(NARY, "Z", &params, z)),
    ]);
    let out = run(NARY, &params, &inputs);
    let (a, b) = (val_a, val_b);
    let zi = |p: &[i64]| z(p) as i64;
    check_floats(&out, "S", |p| {
        a(p) + (a(p) + b(p) + 1.0) + (a(p) + 2.0 + b(p))
    });
    check_floats(&out, "P", |p| a(p) * b(p) * 2.0 + a(p) * a(p));
    check_floats(&out, "M", |p| {
        a(p).max(b(p)).max(0.5) + a(p).min(b(p)).min(0.25).min(0.75) + a(p)
    });
    check_ints(&out, "L", |p| {
        let (zv, i) = (zi(p), p[0]);
        zv.max(3).max(i) + zv.min(5) + (zv + i + 1) + zv * 2
    });
    check_ints(&out, "I", |p| zi(p).clamp(4, 6) + zi(p) * p[0].max(1));
    check_floats(&out, "F", |p| a(p).max(b(p)) * 2.0 + (-a(p)).min(b(p)));
    check_bools(&out, "X", |p| {
        let r = (true ^ (b(p) < 0.5)) ^ (zi(p) > 4);
        ((a(p) > 0.5 && b(p) > 0.5) || a(p) < 0.1) ^ r
    });
    check_bools(&out, "Y", |p| (a(p) > 0.5) ^ (b(p) > 0.5 && zi(p) > 2));
}

const CASES: &str = "
affine cases [N] -> { : N >= 3 }
  inputs A : [N];
  outputs B : [N]; C : [N]; R : [N];
  let
    B[i] = case first { {: i = 0} : A[i]; {: i = N - 1} : -A[i]; auto : 2 * A[i]; };
    C[i] = case { auto : A[i] + 1; {: i >= 1} : C[i - 1] + A[i]; };
    R[i] = reduce(+, [k], {: 0 <= k <= i} : case { {: k = i} : 100.0; auto : A[k]; });
.
";

#[test]
fn named_cases_and_auto_pieces() {
    for n in [3i64, 8] {
        let params = [n];
        let inputs = HashMap::from([("A".to_string(), input(CASES, "A", &params, val_a))]);
        let out = run(CASES, &params, &inputs);
        check_floats(&out, "B", |p| {
            let i = p[0];
            if i == 0 {
                val_a(p)
            } else if i == n - 1 {
                -val_a(p)
            } else {
                2.0 * val_a(p)
            }
        });
        check_floats(&out, "C", |p| {
            (0..=p[0]).map(|k| val_a(&[k])).sum::<f64>() + 1.0
        });
        check_floats(&out, "R", |p| {
            (0..p[0]).map(|k| val_a(&[k])).sum::<f64>() + 100.0
        });
    }
}

const SELECTS: &str = "
affine selects [N] -> { : N >= 3 }
  inputs A : [N]; M : [N, 3];
  outputs H : [N]; S : [N - 1]; T : [N]; G : [N]; K : [N];
  let
    H[i] = select {[k] -> [m] : m = N - 1 - k} from A[m];
    S[i] = select {[k] -> [k + 1]} from A;
    T[i] = select {[k] -> [k, j] : j = 2} from M[k, j];
    G[i] = select (k -> k, 0) from M;
    K[i] = case { {: i = 0} : 0.0; auto : select {[k] -> [k - 1] : k >= 1} from A; };
.
";

#[test]
fn select_from_a_function() {
    let params = [6];
    let n = params[0];
    let m = |p: &[i64]| (p[0] * 10 + p[1]) as f64 + 0.5;
    let inputs = HashMap::from([
        ("A".to_string(), input(SELECTS, "A", &params, val_a)),
        ("M".to_string(), input(SELECTS, "M", &params, m)),
    ]);
    let out = run(SELECTS, &params, &inputs);
    check_floats(&out, "H", |p| val_a(&[n - 1 - p[0]]));
    check_floats(&out, "S", |p| val_a(&[p[0] + 1]));
    check_floats(&out, "T", |p| m(&[p[0], 2]));
    check_floats(&out, "G", |p| m(&[p[0], 0]));
    check_floats(
        &out,
        "K",
        |p| if p[0] == 0 { 0.0 } else { val_a(&[p[0] - 1]) },
    );
}
