//! The standard library (`stdlib/`, embedded in the binary and reached
//! with `import std.NAME`): every system, run by the reference interpreter
//! and by the native code (optimized and not), against a direct
//! computation in Rust.

mod common;

use alphac::compile::{self, Options};
use alphac::diag::SourceFile;
use alphac::interp;
use alphac::ir::lower::import::{stdlib_file, stdlib_names};
use alphac::ir::{Program, VarKind};
use alphac::runtime::{Array, ArrayData};
use common::{all_close, Tol};
use std::collections::HashMap;

const TOL: Tol = Tol::rel_or_abs(1e-10);

/// Deterministic floats in `[lo, hi)`.
fn data(n: usize, seed: u64, lo: f64, hi: f64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            lo + (hi - lo) * ((x >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

fn lgamma(x: f64) -> f64 {
    alphac::runtime::math::lgamma(x)
}

/// The standard-library file `std.NAME`, lowered as a program of its own.
fn program(name: &str) -> (String, Program) {
    let text = stdlib_file(name).expect("stdlib file").to_string();
    let src = SourceFile::new(format!("{name}.alpha"), text.clone());
    let ast = alphac::syntax::parse(&src).unwrap_or_else(|d| panic!("{d:?}"));
    let p = alphac::ir::lower::lower(&ast, &src)
        .unwrap_or_else(|ds| panic!("{}", alphac::diag::render_all(&ds, &src)));
    (text, p)
}

/// Runs `system` of `std.file` on `inputs` (by name) with the interpreter
/// and the native code, and checks the float output `out` against `want`.
fn check(
    file: &str,
    system: &str,
    params: &[i64],
    data_of: &dyn Fn(&str) -> ArrayData,
    out: &str,
    want: &[f64],
) {
    let (text, p) = program(file);
    let sys = p.systems.iter().find(|s| s.name == system).expect("system");
    let mut ins = HashMap::new();
    for v in sys.vars.iter().filter(|v| v.kind == VarKind::Input) {
        let spec = interp::array_spec(v, params).expect("spec");
        let a = Array::from_data(&spec, data_of(&v.name)).expect("input array");
        ins.insert(v.name.clone(), a);
    }
    let float = |a: &Array| a.data().as_float().expect("float").to_vec();
    let got = interp::run(&p, system, params, &ins, 0).expect("interp runs");
    assert!(
        all_close(&float(&got[out]), want, TOL),
        "{system} interp: {:?} vs {want:?}",
        float(&got[out])
    );
    for optimize in [false, true] {
        let opts = Options {
            optimize,
            system: Some(system.to_string()),
            checked: true,
            ..Options::default()
        };
        let c = compile::compile(&text, &opts).unwrap_or_else(|e| panic!("{system}: {e}"));
        let got = c.run(params, &ins, 0).expect("jit runs");
        assert!(
            all_close(&float(&got[out]), want, TOL),
            "{system} jit (optimize={optimize}): {:?} vs {want:?}",
            float(&got[out])
        );
    }
}

fn floats(v: &[f64]) -> ArrayData {
    ArrayData::Float(v.to_vec())
}

#[test]
fn every_stdlib_file_is_checked_and_tested_here() {
    assert_eq!(stdlib_names(), vec!["linalg", "stats", "scan"]);
    for n in stdlib_names() {
        let (_, p) = program(n);
        assert!(!p.systems.is_empty());
    }
}

#[test]
fn dot_matvec_matmul() {
    let n = 6;
    let (x, y) = (data(n, 1, -1.0, 1.0), data(n, 2, -1.0, 1.0));
    let want = [x.iter().zip(&y).map(|(a, b)| a * b).sum::<f64>()];
    check(
        "linalg",
        "dot",
        &[n as i64],
        &|v| floats(if v == "x" { &x } else { &y }),
        "r",
        &want,
    );

    let (m, k) = (4, 5);
    let a = data(m * k, 3, -1.0, 1.0);
    let v = data(k, 4, -1.0, 1.0);
    let want: Vec<f64> = (0..m)
        .map(|i| (0..k).map(|j| a[i * k + j] * v[j]).sum())
        .collect();
    check(
        "linalg",
        "matvec",
        &[m as i64, k as i64],
        &|name| floats(if name == "A" { &a } else { &v }),
        "y",
        &want,
    );

    let nn = 3;
    let b = data(k * nn, 5, -1.0, 1.0);
    let mut want = vec![0.0; m * nn];
    for i in 0..m {
        for j in 0..nn {
            want[i * nn + j] = (0..k).map(|t| a[i * k + t] * b[t * nn + j]).sum();
        }
    }
    check(
        "linalg",
        "matmul",
        &[m as i64, k as i64, nn as i64],
        &|name| floats(if name == "A" { &a } else { &b }),
        "C",
        &want,
    );
}

/// A symmetric positive-definite `n x n` matrix (row-major, full) and its
/// lower triangle packed over the bounding box (`n x n`, upper part 0).
fn spd(n: usize) -> Vec<f64> {
    let g = data(n * n, 6, -1.0, 1.0);
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] = (0..n).map(|t| g[i * n + t] * g[j * n + t]).sum::<f64>()
                + if i == j { n as f64 } else { 0.0 };
        }
    }
    a
}

fn lower_part(a: &[f64], n: usize) -> Vec<f64> {
    let mut l = a.to_vec();
    for i in 0..n {
        for j in i + 1..n {
            l[i * n + j] = 0.0;
        }
    }
    l
}

#[test]
fn cholesky_and_triangular_solves() {
    let n = 5;
    let a = spd(n);
    // Direct Cholesky–Banachiewicz.
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum();
            l[i * n + j] = if i == j {
                (a[i * n + i] - s).sqrt()
            } else {
                (a[i * n + j] - s) / l[j * n + j]
            };
        }
    }
    let al = lower_part(&a, n);
    check("linalg", "cholesky", &[n as i64], &|_| floats(&al), "L", &l);

    let b = data(n, 7, -1.0, 1.0);
    // L y = b, then L^T x = y.
    let mut y = vec![0.0; n];
    for i in 0..n {
        let s: f64 = (0..i).map(|k| l[i * n + k] * y[k]).sum();
        y[i] = (b[i] - s) / l[i * n + i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|k| l[k * n + i] * x[k]).sum();
        x[i] = (y[i] - s) / l[i * n + i];
    }
    check(
        "linalg",
        "forward_solve",
        &[n as i64],
        &|v| floats(if v == "L" { &l } else { &b }),
        "y",
        &y,
    );
    check(
        "linalg",
        "back_solve",
        &[n as i64],
        &|v| floats(if v == "L" { &l } else { &y }),
        "x",
        &x,
    );
    check(
        "linalg",
        "cholesky_solve",
        &[n as i64],
        &|v| floats(if v == "A" { &al } else { &b }),
        "x",
        &x,
    );
    // And x solves A x = b.
    for i in 0..n {
        let r: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
        assert!((r - b[i]).abs() < 1e-10, "residual {}", r - b[i]);
    }
}

#[test]
fn logsumexp_softmax_normalize() {
    let n = 7;
    let x = data(n, 8, -30.0, 30.0);
    let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let s: f64 = x.iter().map(|v| (v - m).exp()).sum();
    check(
        "stats",
        "logsumexp",
        &[n as i64],
        &|_| floats(&x),
        "r",
        &[m + s.ln()],
    );
    let p: Vec<f64> = x.iter().map(|v| (v - m).exp() / s).collect();
    check("stats", "softmax", &[n as i64], &|_| floats(&x), "p", &p);
    let w = data(n, 9, 0.0, 5.0);
    let t: f64 = w.iter().sum();
    let q: Vec<f64> = w.iter().map(|v| v / t).collect();
    check("stats", "normalize", &[n as i64], &|_| floats(&w), "p", &q);
}

fn normal_logpdf(x: f64, mu: f64, sigma: f64) -> f64 {
    let z = (x - mu) / sigma;
    -0.5 * z * z - sigma.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()
}

#[test]
fn normal_log_density() {
    let (x, mu, sigma) = (1.3, -0.4, 2.5);
    check(
        "stats",
        "normal_logpdf",
        &[],
        &|v| {
            floats(&[match v {
                "x" => x,
                "mu" => mu,
                _ => sigma,
            }])
        },
        "lp",
        &[normal_logpdf(x, mu, sigma)],
    );
    let n = 9;
    let xs = data(n, 10, -3.0, 3.0);
    let want: f64 = xs.iter().map(|&v| normal_logpdf(v, 0.3, 1.7)).sum();
    check(
        "stats",
        "normal_loglik",
        &[n as i64],
        &|v| match v {
            "x" => floats(&xs),
            "mu" => floats(&[0.3]),
            _ => floats(&[1.7]),
        },
        "ll",
        &[want],
    );
}

#[test]
fn beta_binomial_log_pmf() {
    let (k, n, a, b) = (3i64, 10i64, 2.5, 0.7);
    let (kf, nf) = (k as f64, n as f64);
    let want = lgamma(nf + 1.0) - lgamma(kf + 1.0) - lgamma(nf - kf + 1.0)
        + lgamma(kf + a)
        + lgamma(nf - kf + b)
        - lgamma(nf + a + b)
        - (lgamma(a) + lgamma(b) - lgamma(a + b));
    check(
        "stats",
        "beta_binomial_logpmf",
        &[],
        &|v| match v {
            "k" => ArrayData::Int(vec![k]),
            "n" => ArrayData::Int(vec![n]),
            "a" => floats(&[a]),
            _ => floats(&[b]),
        },
        "lp",
        &[want],
    );
    // The pmf sums to one over k = 0..n.
    let total: f64 = (0..=n)
        .map(|k| {
            let kf = k as f64;
            (lgamma(nf + 1.0) - lgamma(kf + 1.0) - lgamma(nf - kf + 1.0)
                + lgamma(kf + a)
                + lgamma(nf - kf + b)
                - lgamma(nf + a + b)
                - (lgamma(a) + lgamma(b) - lgamma(a + b)))
            .exp()
        })
        .sum();
    assert!((total - 1.0).abs() < 1e-12, "{total}");
}

#[test]
fn dirichlet_multinomial_log_pmfs() {
    let counts = vec![3i64, 0, 5, 1];
    let alpha = vec![0.5, 1.5, 2.0, 0.1];
    let n: f64 = counts.iter().sum::<i64>() as f64;
    let a: f64 = alpha.iter().sum();
    let seq = lgamma(a) - lgamma(n + a)
        + counts
            .iter()
            .zip(&alpha)
            .map(|(&c, &al)| lgamma(c as f64 + al) - lgamma(al))
            .sum::<f64>();
    let pmf = seq + lgamma(n + 1.0) - counts.iter().map(|&c| lgamma(c as f64 + 1.0)).sum::<f64>();
    let k = counts.len() as i64;
    let inputs = |v: &str| {
        if v == "n" {
            ArrayData::Int(counts.clone())
        } else {
            floats(&alpha)
        }
    };
    check(
        "stats",
        "dirichlet_multinomial_seq_logp",
        &[k],
        &inputs,
        "lp",
        &[seq],
    );
    check(
        "stats",
        "dirichlet_multinomial_logpmf",
        &[k],
        &inputs,
        "lp",
        &[pmf],
    );
}

#[test]
fn prefix_and_suffix_scans() {
    let n = 8;
    let x = data(n, 11, -1.0, 1.0);
    let mut s = vec![0.0; n];
    let mut m = vec![0.0; n];
    let mut acc = 0.0;
    let mut best = f64::NEG_INFINITY;
    for i in 0..n {
        acc += x[i];
        best = best.max(x[i]);
        s[i] = acc;
        m[i] = best;
    }
    let mut t = vec![0.0; n];
    let mut acc = 0.0;
    for i in (0..n).rev() {
        acc += x[i];
        t[i] = acc;
    }
    check("scan", "prefix_sum", &[n as i64], &|_| floats(&x), "s", &s);
    check("scan", "prefix_max", &[n as i64], &|_| floats(&x), "m", &m);
    check("scan", "suffix_sum", &[n as i64], &|_| floats(&x), "s", &t);
}
