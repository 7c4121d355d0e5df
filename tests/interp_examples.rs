//! The `examples/*.alpha` programs, parsed, lowered and run by the
//! reference interpreter, against direct Rust implementations.

use alphac::diag::{render_all, SourceFile};
use alphac::interp;
use alphac::ir::ElemType;
use alphac::ir::Program;
use alphac::runtime::{Array, ArrayData, ArraySpec};
use std::collections::HashMap;

fn load(name: &str) -> Program {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("example file exists");
    let src = SourceFile::new(path, text);
    let ast = match alphac::syntax::parse(&src) {
        Ok(a) => a,
        Err(d) => panic!("{}", render_all(&d, &src)),
    };
    match alphac::ir::lower::lower(&ast, &src) {
        Ok(p) => p,
        Err(d) => panic!("{}", render_all(&d, &src)),
    }
}

fn run(
    p: &Program,
    params: &[(&str, i64)],
    inputs: Vec<(&str, Array)>,
    seed: u64,
) -> HashMap<String, Array> {
    let sys = &p.systems[0];
    let map: HashMap<String, i64> = params.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    let pv = sys.resolve_params(&map).unwrap();
    let inputs = inputs
        .into_iter()
        .map(|(n, a)| (n.to_string(), a))
        .collect();
    match interp::run(p, &sys.name, &pv, &inputs, seed) {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    }
}

/// A random input for variable `name` of the first system.
fn random_input(p: &Program, params: &[i64], name: &str, seed: u64) -> Array {
    let sys = &p.systems[0];
    let v = sys.var_by_name(name).unwrap();
    Array::random(&interp::array_spec(&sys.vars[v], params).unwrap(), seed).unwrap()
}

fn floats(a: &Array) -> Vec<f64> {
    match a.data() {
        ArrayData::Float(v) => v.clone(),
        other => panic!("expected floats, got {other:?}"),
    }
}

#[test]
fn prefix_sum() {
    let p = load("prefix_sum");
    let n = 50;
    let a = random_input(&p, &[n], "A", 1);
    let av = floats(&a);
    let out = run(&p, &[("N", n)], vec![("A", a)], 0);
    let mut acc = 0.0;
    let want: Vec<f64> = av
        .iter()
        .map(|x| {
            acc += x;
            acc
        })
        .collect();
    assert_eq!(floats(&out["B"]), want);
}

#[test]
fn prefix_sum_dependent() {
    let p = load("prefix_sum_dependent");
    let n = 40;
    let x = random_input(&p, &[n], "X", 2);
    let xv = floats(&x);
    let out = run(&p, &[("N", n)], vec![("X", x)], 0);
    let n = n as usize;
    let mut a = vec![0.0f64; n];
    let mut b = vec![0.0f64; n];
    for i in 0..n {
        a[i] = if i == 0 {
            xv[0]
        } else {
            b[i - 1].abs().sqrt() + xv[i]
        };
        let mut s = 0.0;
        for aj in &a[..=i] {
            s += aj;
        }
        b[i] = s;
    }
    assert_eq!(floats(&out["B"]), b);
}

#[test]
fn matmul() {
    let p = load("matmul");
    let (pp, q, r) = (4i64, 5i64, 3i64);
    let a = random_input(&p, &[pp, q, r], "A", 3);
    let b = random_input(&p, &[pp, q, r], "B", 4);
    let (av, bv) = (floats(&a), floats(&b));
    let out = run(
        &p,
        &[("P", pp), ("Q", q), ("R", r)],
        vec![("A", a), ("B", b)],
        0,
    );
    let c = floats(&out["C"]);
    assert_eq!(out["C"].shape(), &[4, 3]);
    let (q, r) = (q as usize, r as usize);
    for i in 0..pp as usize {
        for j in 0..r {
            let mut s = 0.0;
            for k in 0..q {
                s += av[i * q + k] * bv[k * r + j];
            }
            assert_eq!(c[i * r + j], s, "C[{i}, {j}]");
        }
    }
}

#[test]
fn jacobi_1d() {
    let p = load("jacobi_1d");
    let (t, n) = (6i64, 10i64);
    let x0 = random_input(&p, &[t, n], "X0", 5);
    let mut x = floats(&x0);
    let out = run(&p, &[("T", t), ("N", n)], vec![("X0", x0)], 0);
    let n = n as usize;
    for _ in 0..t {
        let prev = x.clone();
        for i in 1..n - 1 {
            x[i] = 0.33333 * (prev[i - 1] + prev[i] + prev[i + 1]);
        }
    }
    assert_eq!(floats(&out["Y"]), x);
}

#[test]
fn cholesky() {
    let p = load("cholesky");
    let n = 6usize;
    // A = M M^T + n I (symmetric positive definite), lower triangle.
    let m = floats(
        &Array::random(
            &ArraySpec {
                name: "M".into(),
                ty: ElemType::Float,
                lo: vec![0, 0],
                hi: vec![n as i64 - 1, n as i64 - 1],
            },
            6,
        )
        .unwrap(),
    );
    let full = |i: usize, j: usize| -> f64 {
        let mut s = if i == j { n as f64 } else { 0.0 };
        for k in 0..n {
            s += m[i * n + k] * m[j * n + k];
        }
        s
    };
    let spec = interp::array_spec(&p.systems[0].vars[0], &[n as i64]).unwrap();
    let mut a = Array::zeros(&spec).unwrap();
    for i in 0..n {
        for j in 0..=i {
            a.set(
                &[i as i64, j as i64],
                alphac::runtime::Scalar::Float(full(i, j)),
            )
            .unwrap();
        }
    }
    let out = run(&p, &[("N", n as i64)], vec![("A", a)], 0);
    let l = floats(&out["L"]);
    for i in 0..n {
        for j in 0..n {
            if j > i {
                assert_eq!(l[i * n + j], 0.0, "outside the domain");
                continue;
            }
            let mut s = 0.0;
            for k in 0..=j {
                s += l[i * n + k] * l[j * n + k];
            }
            assert!(
                (s - full(i, j)).abs() < 1e-9 * full(i, i).abs(),
                "(L L^T)[{i}, {j}] = {s}, A = {}",
                full(i, j)
            );
        }
    }
}

#[test]
fn nussinov() {
    let p = load("nussinov");
    let n = 14usize;
    let seq: Vec<i64> = (0..n).map(|i| ((i * 7 + 3) % 4) as i64).collect();
    let spec = ArraySpec {
        name: "seq".into(),
        ty: ElemType::Int,
        lo: vec![0],
        hi: vec![n as i64 - 1],
    };
    let s_in = Array::from_data(&spec, ArrayData::Int(seq.clone())).unwrap();
    let out = run(&p, &[("N", n as i64)], vec![("seq", s_in)], 0);
    let got = match out["S"].data() {
        ArrayData::Int(v) => v.clone(),
        other => panic!("{other:?}"),
    };
    let pair = |i: usize, j: usize| (seq[i] + seq[j] == 3) as i64;
    let mut s = vec![vec![0i64; n]; n];
    for len in 1..n {
        for i in 0..n - len {
            let j = i + len;
            s[i][j] = if len == 1 {
                pair(i, j)
            } else {
                let mut best = s[i + 1][j]
                    .max(s[i][j - 1])
                    .max(s[i + 1][j - 1] + pair(i, j));
                for k in i + 1..j {
                    best = best.max(s[i][k] + s[k + 1][j]);
                }
                best
            };
        }
    }
    for i in 0..n {
        for j in 0..n {
            let want = if j >= i { s[i][j] } else { 0 };
            assert_eq!(got[i * n + j], want, "S[{i}, {j}]");
        }
    }
}

fn lower_text(text: &str) -> Program {
    let src = SourceFile::new("test.alpha", text);
    let ast = match alphac::syntax::parse(&src) {
        Ok(a) => a,
        Err(d) => panic!("{}", render_all(&d, &src)),
    };
    match alphac::ir::lower::lower(&ast, &src) {
        Ok(p) => p,
        Err(d) => panic!("{}", render_all(&d, &src)),
    }
}

/// Stochastic calls through the front end: call sites are numbered in
/// pre-order per equation, draws depend on (seed, site, point) only.
#[test]
fn stochastic_program() {
    let p = lower_text(
        "affine sto [N, K] -> { : N > 0 and K > 1 }
            inputs  W : { [i, k] : 0 <= i < N and 0 <= k < K }
            outputs
                Z : int [N]
                U : [N]
                S : [N]
            let
                Z[i] = categorical([k], {: 0 <= k < K} : W[i, k]);
                U[i] = normal(0.0, 1.0) + uniform();
                S[i] = reduce(+, [j], {: 0 <= j < K} : gamma(2.0, 1.0));
        .",
    );
    let (n, k) = (5i64, 3i64);
    let w = random_input(&p, &[n, k], "W", 11);
    let wv = floats(&w);
    let out = run(&p, &[("N", n), ("K", k)], vec![("W", w.clone())], 77);
    let sys = &p.systems[0];
    let (zid, uid, sid) = (
        sys.var_by_name("Z").unwrap(),
        sys.var_by_name("U").unwrap(),
        sys.var_by_name("S").unwrap(),
    );
    use alphac::runtime::rng::Stream;
    let z = match out["Z"].data() {
        ArrayData::Int(v) => v.clone(),
        o => panic!("{o:?}"),
    };
    let (u, s) = (floats(&out["U"]), floats(&out["S"]));
    for i in 0..n as usize {
        let row = &wv[i * k as usize..(i + 1) * k as usize];
        let st = Stream::new(77, zid as u64, 0, &[i as i64]);
        assert_eq!(z[i], st.categorical(row).unwrap() as i64, "Z[{i}]");
        let want_u = Stream::new(77, uid as u64, 0, &[i as i64])
            .normal(0.0, 1.0)
            .unwrap()
            + Stream::new(77, uid as u64, 1, &[i as i64]).uniform(0);
        assert_eq!(u[i], want_u, "U[{i}]");
        let mut acc = 0.0;
        for j in 0..k {
            acc += Stream::new(77, sid as u64, 0, &[i as i64, j])
                .gamma(2.0, 1.0)
                .unwrap();
        }
        assert_eq!(s[i], acc, "S[{i}]");
    }
}

fn run_err(p: &Program, params: &[i64], inputs: Vec<(&str, Array)>) -> String {
    let sys = &p.systems[0];
    let inputs = inputs
        .into_iter()
        .map(|(n, a)| (n.to_string(), a))
        .collect();
    match interp::run(p, &sys.name, params, &inputs, 0) {
        Ok(_) => panic!("expected a run-time error"),
        Err(e) => e.to_string(),
    }
}

fn int_input(name: &str, v: Vec<i64>) -> Array {
    let spec = ArraySpec {
        name: name.into(),
        ty: ElemType::Int,
        lo: vec![0],
        hi: vec![v.len() as i64 - 1],
    };
    Array::from_data(&spec, ArrayData::Int(v)).unwrap()
}

#[test]
fn run_time_errors_through_the_front_end() {
    let gather = lower_text(
        "affine g [N] -> { : N > 0 }
            inputs
                z : int [N]
                A : [N]
            outputs C : [N]
            let C[i] = A[z[i]];
        .",
    );
    let a = random_input(&gather, &[4], "A", 1);
    let msg = run_err(
        &gather,
        &[4],
        vec![("z", int_input("z", vec![0, 3, 4, 1])), ("A", a)],
    );
    assert!(msg.contains("A[4]") && msg.contains("C[2]"), "{msg}");

    let div = lower_text(
        "affine d [N] -> { : N > 0 }
            outputs Q : int [N]
            let Q[i] = 12 / (i - 1);
        .",
    );
    let msg = run_err(&div, &[3], vec![]);
    assert!(
        msg.contains("division by zero") && msg.contains("Q[1]"),
        "{msg}"
    );

    let cyc = lower_text(
        "affine c [N] -> { : N > 2 }
            outputs X : int [N]
            locals Y : int [N]
            let
                X[i] = case { {: i < 2} : Y[i + 1]; {: i >= 2} : 0; };
                Y[i] = case { {: i >= 1} : X[i - 1] + 1; {: i < 1} : 0; };
        .",
    );
    let msg = run_err(&cyc, &[3], vec![]);
    assert_eq!(msg, "dependence cycle: X[0] -> Y[1] -> X[0]");

    let msg = run_err(&div, &[0], vec![]);
    assert!(msg.contains("N=0") && msg.contains("context"), "{msg}");
}
