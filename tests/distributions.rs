//! The stochastic built-ins, drawn by compiled `.alpha` programs at fixed
//! seeds, against their distributions: sample moments within five standard
//! errors of the true ones, and a goodness-of-fit test — Kolmogorov–Smirnov
//! for the continuous ones (`uniform`, `normal`, `gamma` with shape below
//! and above 1, `beta`), chi-square for the discrete ones (`bernoulli`,
//! `poisson` on both sides of its algorithm switch at λ = 10,
//! `categorical`). The tests are at significance 0.001 with fixed seeds, so
//! they are deterministic; a wrong transform (a swapped parameter, a wrong
//! scale, an off-by-one in a table) fails them by a wide margin.
//!
//! The reference CDFs are written here from their definitions (series and
//! continued fractions of the incomplete gamma and beta functions), with
//! `lgamma` from the runtime.

use alphac::compile::{self, Options};
use alphac::runtime::{math::lgamma, ArrayData};
use std::collections::HashMap;

const N: i64 = 20_000;

/// `N` draws of `expr` (one per point `i`), by the JIT, with `seed`.
fn draws(ty: &str, expr: &str, seed: u64) -> ArrayData {
    let src = format!(
        "affine d [N] -> {{ : N > 0 }}\n  outputs X : {ty} [N];\n  let X[i] = {expr};\n.\n"
    );
    let c = compile::compile(&src, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let out = c.run(&[N], &HashMap::new(), seed).expect("run");
    out["X"].data().clone()
}

fn floats(expr: &str, seed: u64) -> Vec<f64> {
    match draws("float", expr, seed) {
        ArrayData::Float(v) => v,
        other => panic!("not floats: {other:?}"),
    }
}

fn ints(expr: &str, seed: u64) -> Vec<i64> {
    match draws("int", expr, seed) {
        ArrayData::Int(v) => v,
        other => panic!("not ints: {other:?}"),
    }
}

/// Sample mean and variance (unbiased).
fn moments(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|y| (y - m) * (y - m)).sum::<f64>() / (n - 1.0);
    (m, v)
}

/// Mean within 5 standard errors, and the variance within 5 standard
/// errors of the sample variance (`sd(s²) ≈ σ² sqrt((κ − 1)/n)` with the
/// kurtosis `kurt` of the distribution).
fn check_moments(name: &str, x: &[f64], mean: f64, var: f64, kurt: f64) {
    let n = x.len() as f64;
    let (m, v) = moments(x);
    let se_m = (var / n).sqrt();
    assert!(
        (m - mean).abs() < 5.0 * se_m,
        "{name}: mean {m}, expected {mean} (se {se_m})"
    );
    let se_v = var * ((kurt - 1.0) / n).sqrt();
    assert!(
        (v - var).abs() < 5.0 * se_v,
        "{name}: variance {v}, expected {var} (se {se_v})"
    );
}

/// Kolmogorov–Smirnov statistic `sup |F_n − F|` and the test at level
/// 0.001 (critical value `1.949 / sqrt(n)`, asymptotic).
fn check_ks(name: &str, x: &[f64], cdf: impl Fn(f64) -> f64) {
    let mut s = x.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).expect("no NaN draws"));
    let n = s.len() as f64;
    let mut d: f64 = 0.0;
    for (k, &v) in s.iter().enumerate() {
        let f = cdf(v);
        d = d
            .max((f - k as f64 / n).abs())
            .max(((k + 1) as f64 / n - f).abs());
    }
    let crit = 1.949 / n.sqrt();
    assert!(d < crit, "{name}: KS statistic {d} >= {crit}");
}

/// Pearson's chi-square over cells of expected count >= 5 (the others
/// pooled into one), against the level-0.001 critical value of the
/// Wilson–Hilferty approximation.
fn check_chi2(
    name: &str,
    counts: &HashMap<i64, usize>,
    pmf: impl Fn(i64) -> f64,
    support: (i64, i64),
) {
    let n: usize = counts.values().sum();
    let n = n as f64;
    let (mut stat, mut cells) = (0.0, 0usize);
    let (mut pooled_obs, mut pooled_exp) = (0.0, 0.0);
    for k in support.0..=support.1 {
        let e = n * pmf(k);
        let o = *counts.get(&k).unwrap_or(&0) as f64;
        if e >= 5.0 {
            stat += (o - e) * (o - e) / e;
            cells += 1;
        } else {
            pooled_obs += o;
            pooled_exp += e;
        }
    }
    // Everything outside the support counts against the fit.
    let outside: usize = counts
        .iter()
        .filter(|(k, _)| **k < support.0 || **k > support.1)
        .map(|(_, c)| *c)
        .sum();
    pooled_obs += outside as f64;
    pooled_exp += n - (support.0..=support.1).map(|k| n * pmf(k)).sum::<f64>();
    if pooled_exp > 1e-9 || pooled_obs > 0.0 {
        let e = pooled_exp.max(1e-9);
        stat += (pooled_obs - e) * (pooled_obs - e) / e;
        cells += 1;
    }
    let df = (cells - 1) as f64;
    // Wilson–Hilferty: chi2_q(df) ≈ df (1 − 2/(9df) + z_q sqrt(2/(9df)))^3.
    let z = 3.090; // upper 0.001 quantile of N(0, 1)
    let crit = df * (1.0 - 2.0 / (9.0 * df) + z * (2.0 / (9.0 * df)).sqrt()).powi(3);
    assert!(stat < crit, "{name}: chi-square {stat} >= {crit} ({df} df)");
}

fn histogram(x: &[i64]) -> HashMap<i64, usize> {
    let mut h = HashMap::new();
    for &v in x {
        *h.entry(v).or_insert(0) += 1;
    }
    h
}

/// `erf` by its Maclaurin series for |x| < 3 and the asymptotic continued
/// fraction of `erfc` beyond (absolute error far below the KS resolution).
fn erf(x: f64) -> f64 {
    if x < 0.0 {
        return -erf(-x);
    }
    if x < 3.0 {
        let (mut term, mut sum, mut k) = (x, x, 0.0);
        while term.abs() > 1e-17 * sum.abs() {
            k += 1.0;
            term *= -x * x / k;
            sum += term / (2.0 * k + 1.0);
        }
        return sum * 2.0 / std::f64::consts::PI.sqrt();
    }
    // erfc(x) = exp(-x²)/sqrt(π) · 1/(x + 1/2/(x + 1/(x + 3/2/(x + ...))))
    let mut f = x;
    for k in (1..60).rev() {
        f = x + (k as f64 / 2.0) / f;
    }
    1.0 - (-x * x).exp() / std::f64::consts::PI.sqrt() / f
}

fn normal_cdf(x: f64, m: f64, s: f64) -> f64 {
    0.5 * (1.0 + erf((x - m) / (s * std::f64::consts::SQRT_2)))
}

/// Regularized lower incomplete gamma `P(a, x)`: its series for
/// `x < a + 1`, the continued fraction of `Q` otherwise.
fn gamma_p(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let lead = (a * x.ln() - x - lgamma(a)).exp();
    if x < a + 1.0 {
        let (mut term, mut sum, mut n) = (1.0 / a, 1.0 / a, a);
        for _ in 0..10_000 {
            n += 1.0;
            term *= x / n;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        sum * lead
    } else {
        // Lentz's method for the continued fraction of Q(a, x).
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        1.0 - lead * h
    }
}

/// Regularized incomplete beta `I_x(a, b)` by its continued fraction
/// (Lentz), using the symmetry `I_x(a, b) = 1 − I_{1−x}(b, a)` where it
/// converges faster.
fn beta_i(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - beta_i(b, a, 1.0 - x);
    }
    let lead = (lgamma(a + b) - lgamma(a) - lgamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    let tiny = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..10_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = 1.0 + aa / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = 1.0 + aa / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-16 {
            break;
        }
    }
    lead * h / a
}

#[test]
fn the_reference_cdfs_are_right() {
    // Known values, so that the tests below test the draws, not these.
    assert!((erf(1.0) - 0.842_700_792_949_714_9).abs() < 1e-14);
    assert!((erf(3.5) - 0.999_999_256_901_627_7).abs() < 1e-14);
    assert!((normal_cdf(1.959_963_984_540_054, 0.0, 1.0) - 0.975).abs() < 1e-12);
    // P(1, x) = 1 − e^-x; P(3, 2) from the closed form of integer shapes.
    assert!((gamma_p(1.0, 0.7) - (1.0 - (-0.7f64).exp())).abs() < 1e-14);
    let p32 = 1.0 - (-2.0f64).exp() * (1.0 + 2.0 + 2.0);
    assert!((gamma_p(3.0, 2.0) - p32).abs() < 1e-13);
    assert!((gamma_p(3.0, 9.0) - (1.0 - (-9.0f64).exp() * (1.0 + 9.0 + 40.5))).abs() < 1e-13);
    // I_x(a, 1) = x^a; I_x(2, 2) = 3x² − 2x³.
    assert!((beta_i(2.5, 1.0, 0.3) - 0.3f64.powf(2.5)).abs() < 1e-13);
    assert!((beta_i(2.0, 2.0, 0.8) - (3.0 * 0.64 - 2.0 * 0.512)).abs() < 1e-13);
}

#[test]
fn uniform_draws_are_uniform() {
    let x = floats("uniform()", 11);
    assert!(x.iter().all(|&v| (0.0..1.0).contains(&v)));
    check_moments("uniform", &x, 0.5, 1.0 / 12.0, 1.8);
    check_ks("uniform", &x, |v| v.clamp(0.0, 1.0));
}

#[test]
fn normal_draws_are_normal() {
    let x = floats("normal(1.5, 2.0)", 12);
    check_moments("normal", &x, 1.5, 4.0, 3.0);
    check_ks("normal", &x, |v| normal_cdf(v, 1.5, 2.0));
}

#[test]
fn gamma_draws_are_gamma_on_both_sides_of_shape_one() {
    for (shape, scale, seed) in [(3.5, 0.5, 13u64), (0.4, 2.0, 14)] {
        let x = floats(&format!("gamma({shape}, {scale})"), seed);
        assert!(x.iter().all(|&v| v >= 0.0));
        let kurt = 3.0 + 6.0 / shape;
        check_moments("gamma", &x, shape * scale, shape * scale * scale, kurt);
        check_ks("gamma", &x, |v| gamma_p(shape, v / scale));
    }
}

#[test]
fn beta_draws_are_beta() {
    for (a, b, seed) in [(2.0, 5.0, 15u64), (0.5, 0.5, 16)] {
        let x = floats(&format!("beta({a}, {b})"), seed);
        assert!(x.iter().all(|&v| (0.0..=1.0).contains(&v)));
        let mean = a / (a + b);
        let var = a * b / ((a + b) * (a + b) * (a + b + 1.0));
        let ex = 6.0 * ((a - b) * (a - b) * (a + b + 1.0) - a * b * (a + b + 2.0))
            / (a * b * (a + b + 2.0) * (a + b + 3.0));
        check_moments("beta", &x, mean, var, 3.0 + ex);
        check_ks("beta", &x, |v| beta_i(a, b, v));
    }
}

#[test]
fn bernoulli_draws_are_bernoulli() {
    let x = ints("if bernoulli(0.3) then 1 else 0", 17);
    let p = 0.3;
    let xf: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let kurt = (1.0 - 6.0 * p * (1.0 - p)) / (p * (1.0 - p)) + 3.0;
    check_moments("bernoulli", &xf, p, p * (1.0 - p), kurt);
    check_chi2(
        "bernoulli",
        &histogram(&x),
        |k| if k == 1 { p } else { 1.0 - p },
        (0, 1),
    );
}

fn poisson_pmf(lambda: f64, k: i64) -> f64 {
    (k as f64 * lambda.ln() - lambda - lgamma(k as f64 + 1.0)).exp()
}

#[test]
fn poisson_draws_are_poisson_by_inversion_and_by_ptrs() {
    for (lambda, seed) in [(3.2, 18u64), (37.5, 19)] {
        let x = ints(&format!("poisson({lambda})"), seed);
        assert!(x.iter().all(|&v| v >= 0));
        let xf: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        check_moments("poisson", &xf, lambda, lambda, 3.0 + 1.0 / lambda);
        let hi = (lambda + 10.0 * lambda.sqrt() + 10.0) as i64;
        check_chi2(
            "poisson",
            &histogram(&x),
            |k| poisson_pmf(lambda, k),
            (0, hi),
        );
    }
}

#[test]
fn categorical_draws_follow_their_weights() {
    // Weights depending on k, one of them zero: never drawn.
    let x = ints(
        "categorical([k], {: 0 <= k < 6} : float(k * k) + 0.5 * float(k))",
        20,
    );
    assert!(
        x.iter().all(|&v| (1..6).contains(&v)),
        "index 0 has weight 0"
    );
    let w: Vec<f64> = (0..6).map(|k| (k * k) as f64 + 0.5 * k as f64).collect();
    let total: f64 = w.iter().sum();
    check_chi2(
        "categorical",
        &histogram(&x),
        |k| w.get(k as usize).map_or(0.0, |v| v / total),
        (0, 5),
    );
}

#[test]
fn a_wrong_distribution_fails_the_tests() {
    // The tests have power: N(1.6, 2) draws are not N(1.5, 2) (KS), and
    // N(1.5, 2.1) draws do not have the variance of N(1.5, 2) (moments).
    let x = floats("normal(1.6, 2.0)", 12);
    let fit = std::panic::catch_unwind(|| check_ks("normal", &x, |v| normal_cdf(v, 1.5, 2.0)));
    assert!(fit.is_err());
    let x = floats("normal(1.5, 2.1)", 12);
    let fit = std::panic::catch_unwind(|| check_moments("normal", &x, 1.5, 4.0, 3.0));
    assert!(fit.is_err());
    // And Poisson(3.4) draws are not Poisson(3.2).
    let x = ints("poisson(3.4)", 18);
    let fit = std::panic::catch_unwind(|| {
        check_chi2("poisson", &histogram(&x), |k| poisson_pmf(3.2, k), (0, 40))
    });
    assert!(fit.is_err());
}
