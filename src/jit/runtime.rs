//! Runtime routines called by JIT code: math functions that Cranelift has
//! no instruction for, and the counter-based random number generator.
//!
//! Every routine is a plain `extern "C"` Rust function registered as a JIT
//! symbol; they are also ordinary safe Rust functions, so that the
//! interpreter can call the very same code and agree bit for bit.
//!
//! Must not know about: the loop AST, Cranelift.
//!
//! # The counter-based RNG
//! A draw is a pure function of `(seed, call site, iteration point)`:
//! `key = mix(...mix(mix(seed, site), p_0)..., p_{n-1})`, then the `k`-th
//! uniform of a draw is `(splitmix64(key ^ splitmix64(k)) >> 11) · 2^-53`
//! in `[0, 1)`. Distributions transform uniforms `k = 0, 1, 2, ...`
//! (rejection samplers consume as many as they need). The hashing uses
//! wrapping arithmetic on purpose (it is a hash, not a quantity).

/// `e^x`.
pub extern "C" fn rt_exp(x: f64) -> f64 {
    x.exp()
}

/// Natural logarithm (NaN for `x < 0`, `-inf` at 0).
pub extern "C" fn rt_log(x: f64) -> f64 {
    x.ln()
}

/// `x^y`.
pub extern "C" fn rt_pow(x: f64, y: f64) -> f64 {
    x.powf(y)
}

/// Float remainder with the sign of the dividend (Rust's `%`).
pub extern "C" fn rt_fmod(x: f64, y: f64) -> f64 {
    x % y
}

/// `ln |Γ(x)|` by the Lanczos approximation (g = 7, 9 terms; relative
/// error about 1e-15), with the reflection formula
/// `ln|Γ(x)| = ln(π / |sin(πx)|) − ln|Γ(1 − x)|` for `x < 1/2`.
/// `+inf` at the poles (non-positive integers).
pub extern "C" fn rt_lgamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x.is_nan() {
        return x;
    }
    if x.is_infinite() {
        return f64::INFINITY;
    }
    if x <= 0.0 && x == x.floor() {
        return f64::INFINITY; // a pole
    }
    if x < 0.5 {
        let s = (std::f64::consts::PI * x).sin();
        if s == 0.0 {
            return f64::INFINITY;
        }
        return (std::f64::consts::PI / s.abs()).ln() - rt_lgamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

fn splitmix64(z: u64) -> u64 {
    let mut z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One step of the key derivation: `splitmix64(h ^ splitmix64(x))` (bits
/// reinterpreted as `i64`).
pub extern "C" fn rt_rng_mix(h: i64, x: i64) -> i64 {
    splitmix64((h as u64) ^ splitmix64(x as u64)) as i64
}

/// The `k`-th uniform of the draw with key `key`, in `[0, 1)`.
pub fn uniform_k(key: i64, k: u64) -> f64 {
    let bits = splitmix64((key as u64) ^ splitmix64(k)) >> 11;
    bits as f64 * (1.0 / (1u64 << 53) as f64)
}

/// `uniform()`: the 0th uniform of the key.
pub extern "C" fn rt_uniform(key: i64) -> f64 {
    uniform_k(key, 0)
}

/// `normal(mean, sd)` by Box–Muller on uniforms 0 and 1; NaN when `sd` is
/// negative or an argument is not finite.
pub extern "C" fn rt_normal(key: i64, mean: f64, sd: f64) -> f64 {
    if !(sd >= 0.0 && sd.is_finite() && mean.is_finite()) {
        return f64::NAN;
    }
    let u1 = uniform_k(key, 0);
    let u2 = uniform_k(key, 1);
    let z = (-2.0 * (1.0 - u1).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    mean + sd * z
}

/// Standard gamma(shape) (Marsaglia–Tsang), consuming uniforms from
/// `*k` on; NaN when no sample is accepted within a generous bound.
fn std_gamma(key: i64, shape: f64, k: &mut u64) -> f64 {
    if shape < 1.0 {
        let g = std_gamma(key, shape + 1.0, k);
        let u = uniform_k(key, *k);
        *k += 1;
        return g * (1.0 - u).powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    for _ in 0..10_000 {
        let u1 = uniform_k(key, *k);
        let u2 = uniform_k(key, *k + 1);
        *k += 2;
        let z = (-2.0 * (1.0 - u1).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        let v = 1.0 + c * z;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = uniform_k(key, *k);
        *k += 1;
        if (1.0 - u).ln() < 0.5 * z * z + d - d * v + d * v.ln() {
            return d * v;
        }
    }
    f64::NAN
}

/// `gamma(shape, scale)`; NaN unless `shape > 0`, `scale > 0`, both finite.
pub extern "C" fn rt_gamma(key: i64, shape: f64, scale: f64) -> f64 {
    if !(shape > 0.0 && scale > 0.0 && shape.is_finite() && scale.is_finite()) {
        return f64::NAN;
    }
    let mut k = 0;
    std_gamma(key, shape, &mut k) * scale
}

/// `beta(a, b) = X / (X + Y)` with `X ~ gamma(a)`, `Y ~ gamma(b)` drawn
/// from the sub-keys `mix(key, 1)` and `mix(key, 2)`; NaN on invalid
/// arguments.
pub extern "C" fn rt_beta(key: i64, a: f64, b: f64) -> f64 {
    if !(a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite()) {
        return f64::NAN;
    }
    let x = std_gamma(rt_rng_mix(key, 1), a, &mut 0);
    let y = std_gamma(rt_rng_mix(key, 2), b, &mut 0);
    x / (x + y)
}

/// `bernoulli(p)`: 1 when uniform 0 is `< p`, else 0; −1 (an error) when
/// `p` is not in `[0, 1]`.
pub extern "C" fn rt_bernoulli(key: i64, p: f64) -> i64 {
    if !(0.0..=1.0).contains(&p) {
        return -1;
    }
    i64::from(uniform_k(key, 0) < p)
}

/// `poisson(lambda)`: Knuth's product method for `lambda < 30`, the PTRS
/// transformed rejection (Hörmann 1993) otherwise; −1 (an error) unless
/// `0 <= lambda < 1e15` (finite).
pub extern "C" fn rt_poisson(key: i64, lambda: f64) -> i64 {
    if !(0.0..1e15).contains(&lambda) {
        return -1;
    }
    if lambda == 0.0 {
        return 0;
    }
    let mut k: u64 = 0;
    if lambda < 30.0 {
        let limit = (-lambda).exp();
        let mut prod = 1.0;
        let mut n: i64 = 0;
        loop {
            prod *= uniform_k(key, k);
            k += 1;
            if prod <= limit {
                return n;
            }
            n += 1;
        }
    }
    let slam = lambda.sqrt();
    let loglam = lambda.ln();
    let b = 0.931 + 2.53 * slam;
    let a = -0.059 + 0.02483 * b;
    let invalpha = 1.1239 + 1.1328 / (b - 3.4);
    let vr = 0.9277 - 3.6224 / (b - 2.0);
    loop {
        let u = uniform_k(key, k) - 0.5;
        let v = uniform_k(key, k + 1);
        k += 2;
        let us = 0.5 - u.abs();
        let n = ((2.0 * a / us + b) * u + lambda + 0.43).floor();
        if us >= 0.07 && v <= vr {
            return n as i64;
        }
        if n < 0.0 || (us < 0.013 && v > us) {
            continue;
        }
        if v.ln() + invalpha.ln() - (a / (us * us) + b).ln()
            <= -lambda + n * loglam - rt_lgamma(n + 1.0)
        {
            return n as i64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lgamma_matches_log_factorials() {
        let mut fact = 1.0f64;
        for n in 1..30 {
            // Γ(n) = (n-1)!
            let got = rt_lgamma(n as f64);
            assert!(
                (got - fact.ln()).abs() <= 1e-12 * fact.ln().abs().max(1.0),
                "n={n}"
            );
            fact *= n as f64;
        }
        // Γ(1/2) = √π
        let half = rt_lgamma(0.5);
        assert!((half - std::f64::consts::PI.sqrt().ln()).abs() < 1e-13);
        // Γ(-1/2) = -2√π
        let mhalf = rt_lgamma(-0.5);
        assert!((mhalf - (2.0 * std::f64::consts::PI.sqrt()).ln()).abs() < 1e-13);
        assert_eq!(rt_lgamma(0.0), f64::INFINITY);
        assert_eq!(rt_lgamma(-3.0), f64::INFINITY);
    }

    #[test]
    fn rng_moments_are_plausible() {
        let n = 20_000;
        let keys: Vec<i64> = (0..n).map(|i| rt_rng_mix(rt_rng_mix(42, 7), i)).collect();
        let mean = |f: &dyn Fn(i64) -> f64| keys.iter().map(|&k| f(k)).sum::<f64>() / n as f64;
        assert!((mean(&|k| rt_uniform(k)) - 0.5).abs() < 0.01);
        assert!((mean(&|k| rt_normal(k, 3.0, 2.0)) - 3.0).abs() < 0.05);
        assert!((mean(&|k| rt_gamma(k, 2.5, 2.0)) - 5.0).abs() < 0.1);
        assert!((mean(&|k| rt_gamma(k, 0.5, 1.0)) - 0.5).abs() < 0.03);
        assert!((mean(&|k| rt_beta(k, 2.0, 6.0)) - 0.25).abs() < 0.01);
        assert!((mean(&|k| rt_bernoulli(k, 0.3) as f64) - 0.3).abs() < 0.015);
        assert!((mean(&|k| rt_poisson(k, 4.0) as f64) - 4.0).abs() < 0.06);
        assert!((mean(&|k| rt_poisson(k, 100.0) as f64) - 100.0).abs() < 0.3);
        assert!(rt_normal(1, 0.0, -1.0).is_nan());
        assert_eq!(rt_bernoulli(1, 1.5), -1);
        assert_eq!(rt_poisson(1, -1.0), -1);
        assert!(keys.iter().all(|&k| (0.0..1.0).contains(&rt_uniform(k))));
    }
}
