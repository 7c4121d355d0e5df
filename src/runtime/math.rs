//! The deterministic math built-ins, as the interpreter and the JIT call
//! them (the JIT registers these functions as symbols so that both back
//! ends round identically). Floating point is IEEE-754 binary64; `exp`,
//! `ln`, `sqrt`, `powf`, `floor`, `ceil`, `abs` are Rust's `f64` methods.
//!
//! Must not know about: programs, arrays, random numbers.

/// `e^x`.
pub fn exp(x: f64) -> f64 {
    x.exp()
}
/// Natural logarithm (`-inf` at 0, NaN below).
pub fn log(x: f64) -> f64 {
    x.ln()
}
/// Square root (NaN below 0).
pub fn sqrt(x: f64) -> f64 {
    x.sqrt()
}
/// `x^y` (IEEE `pow`).
pub fn pow(x: f64, y: f64) -> f64 {
    x.powf(y)
}
/// Largest integer `<= x` (as a float).
pub fn floor(x: f64) -> f64 {
    x.floor()
}
/// Smallest integer `>= x` (as a float).
pub fn ceil(x: f64) -> f64 {
    x.ceil()
}
/// `|x|`.
pub fn abs(x: f64) -> f64 {
    x.abs()
}

/// Lanczos coefficients for `g = 7`, `n = 9` (Godfrey's set, as used by
/// Numerical Recipes and many libraries).
const LANCZOS_G: f64 = 7.0;
const LANCZOS: [f64; 9] = [
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

/// `ln |Γ(x)|` by the Lanczos approximation (relative error about 1e-15
/// away from the zeros of `ln Γ` at 1 and 2, absolute error about 1e-15
/// near them), with the reflection formula
/// `ln|Γ(x)| = ln(π / |sin(πx)|) - ln|Γ(1 - x)|` for `x < 0.5`.
/// `+inf` at the poles `0, -1, -2, ...`; NaN for NaN; `+inf` for `±inf`.
pub fn lgamma(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x.is_infinite() {
        return f64::INFINITY;
    }
    if x <= 0.0 && x == x.floor() {
        return f64::INFINITY;
    }
    // Exact small values avoid the approximation's error at the zeros.
    if x == 1.0 || x == 2.0 {
        return 0.0;
    }
    if x < 0.5 {
        let s = (std::f64::consts::PI * x).sin().abs();
        return (std::f64::consts::PI / s).ln() - lgamma(1.0 - x);
    }
    let z = x - 1.0;
    let mut a = LANCZOS[0];
    for (i, c) in LANCZOS.iter().enumerate().skip(1) {
        a += c / (z + i as f64);
    }
    let t = z + LANCZOS_G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (z + 0.5) * t.ln() - t + a.ln()
}

/// C-ABI entry point of [`lgamma`] for JIT code (same value).
pub extern "C" fn alphac_lgamma(x: f64) -> f64 {
    lgamma(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lgamma_matches_factorials() {
        // ln((n-1)!) computed by summing logs.
        let mut acc = 0.0f64;
        for n in 1..=170u32 {
            if n > 1 {
                acc += ((n - 1) as f64).ln();
            }
            let l = lgamma(n as f64);
            assert!(
                (l - acc).abs() <= 1e-12 * acc.abs().max(1.0),
                "lgamma({n}) = {l}, expected {acc}"
            );
        }
    }

    #[test]
    fn lgamma_half_integers_and_reflection() {
        let sqrt_pi_ln = 0.5 * std::f64::consts::PI.ln();
        assert!((lgamma(0.5) - sqrt_pi_ln).abs() < 1e-14);
        // Γ(1.5) = sqrt(pi)/2, Γ(-0.5) = -2 sqrt(pi)
        assert!((lgamma(1.5) - (sqrt_pi_ln - 2f64.ln())).abs() < 1e-14);
        assert!((lgamma(-0.5) - (sqrt_pi_ln + 2f64.ln())).abs() < 1e-13);
        assert_eq!(lgamma(0.0), f64::INFINITY);
        assert_eq!(lgamma(-3.0), f64::INFINITY);
        assert!(lgamma(f64::NAN).is_nan());
        // Recurrence ln Γ(x+1) = ln Γ(x) + ln x on a grid.
        let mut x = 0.05;
        while x < 30.0 {
            let d = lgamma(x + 1.0) - lgamma(x) - x.ln();
            assert!(d.abs() < 1e-12, "recurrence at {x}: {d}");
            x += 0.37;
        }
    }

    #[test]
    fn lgamma_is_finite_on_the_band_of_skipped_zero_terms() {
        // `codegen::opt::skip_zero_terms` relies on lgamma being finite on
        // [1e-300, 1e300] (and ln there): the ends, values near the poles'
        // neighbours and the zeros, and a log-uniform sweep of the band.
        let mut xs = vec![1e-300, 1e300, 0.5, 1.0, 2.0, 1.0 - 1e-16, 2.0 + 4e-16];
        let mut e = -300.0f64;
        while e <= 300.0 {
            for m in [1.0, 1.7, 3.3, 9.99] {
                xs.push(m * 10f64.powf(e));
            }
            e += 0.25;
        }
        for x in xs.into_iter().filter(|x| (1e-300..=1e300).contains(x)) {
            assert!(lgamma(x).is_finite(), "lgamma({x}) = {}", lgamma(x));
            assert!(x.ln().is_finite(), "ln({x})");
        }
    }
}

/// IEEE 754-2019 `maximum` (as the JIT's `fmax`): NaN if either operand is
/// NaN, and `+0 > -0`.
pub fn fmax(a: f64, b: f64) -> f64 {
    ieee_extremum(a, b, true)
}

/// IEEE 754-2019 `minimum` (as the JIT's `fmin`): NaN if either operand is
/// NaN, and `-0 < +0`.
pub fn fmin(a: f64, b: f64) -> f64 {
    ieee_extremum(a, b, false)
}

/// IEEE 754-2019 `maximum` (`max`) or `minimum`: NaN if either operand is
/// NaN; of two equal values (which can differ only in the sign of zero)
/// the maximum takes the positive one and the minimum the negative one.
fn ieee_extremum(a: f64, b: f64, max: bool) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b {
        if a.is_sign_negative() == max {
            b
        } else {
            a
        }
    } else if (a > b) == max {
        a
    } else {
        b
    }
}

/// Float to int conversion of `int(x)` and of int-typed math results, as
/// the JIT's saturating conversion: truncation toward zero, values beyond
/// the `i64` range saturate, NaN gives 0 (Rust's `as`).
pub fn float_to_int(x: f64) -> i64 {
    x as i64
}

#[cfg(test)]
mod ieee_tests {
    use super::*;

    #[test]
    fn maximum_and_minimum_follow_ieee_2019() {
        assert!(fmax(f64::NAN, 1.0).is_nan() && fmax(1.0, f64::NAN).is_nan());
        assert!(fmin(f64::NAN, 1.0).is_nan() && fmin(1.0, f64::NAN).is_nan());
        assert_eq!(fmax(-0.0, 0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(fmax(0.0, -0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(fmin(-0.0, 0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(fmin(0.0, -0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(fmax(2.0, 3.0), 3.0);
        assert_eq!(fmin(2.0, 3.0), 2.0);
        assert_eq!(fmax(f64::NEG_INFINITY, -1e300), -1e300);
    }

    #[test]
    fn conversion_saturates() {
        assert_eq!(float_to_int(2.9), 2);
        assert_eq!(float_to_int(-2.9), -2);
        assert_eq!(float_to_int(f64::NAN), 0);
        assert_eq!(float_to_int(1e300), i64::MAX);
        assert_eq!(float_to_int(-1e300), i64::MIN);
    }
}
