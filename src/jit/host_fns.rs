//! Host functions called by JIT code: math functions that Cranelift has
//! no instruction for, and the counter-based random number generator.
//!
//! Every routine is a plain `extern "C"` Rust function registered as a JIT
//! symbol; they are also ordinary safe Rust functions, so that the
//! interpreter can call the very same code and agree bit for bit.
//!
//! Must not know about: the loop AST, Cranelift.
//!
//! # The counter-based RNG
//! One implementation, the interpreter's (`crate::runtime::rng`): a draw is
//! a pure function of `(seed, call site (variable, ordinal), iteration
//! point)`, keyed as in `rng::Stream::new`; the entry points below forward
//! to `rng::abi`. `lgamma` likewise forwards to `runtime::math`.

/// The implementations of a function's external functions for one run,
/// by index (`Function::externals`); `None` where none was supplied.
///
/// Also the run's context for parallel loops: `repr(C)` with
/// `min_parallel_trip` and `work_gated` first, because compiled code
/// reads them at offsets 0 and 8 (`Lower::parallel_call`).
#[repr(C)]
pub struct ExternalTable {
    /// A parallel loop with fewer iterations runs inline on the calling
    /// thread, without calling `jit::parallel::rt_parallel`.
    pub(crate) min_parallel_trip: i64,
    /// 1 when `rt_parallel` runs a loop of less work than
    /// `jit::parallel::MIN_PARALLEL_WORK` on the calling thread (the
    /// default), 0 when tests force every loop to split: compiled code
    /// then also skips the call for a loop of static work below it (read
    /// at offset 8).
    pub(crate) work_gated: i64,
    pub fns: Vec<Option<crate::runtime::ExternalFn>>,
    /// What `jit::parallel::rt_parallel` needs to run the function's
    /// parallel loops (`None` for a function without any).
    pub(crate) par: Option<super::parallel::ParallelRun>,
}

/// Status of [`rt_external`]: no implementation for the index.
pub const EXTERNAL_MISSING: i64 = 1;
/// Status of [`rt_external`]: the implementation panicked.
pub const EXTERNAL_PANICKED: i64 = 2;

/// Calls external `index` of `table` on `args[0..n]` and writes the result
/// to `out`; returns 0, [`EXTERNAL_MISSING`] or [`EXTERNAL_PANICKED`] (a
/// panic is caught here: it must not unwind into JIT code).
///
/// # Safety
/// `table` is null or points to a live `ExternalTable`; `args` points to
/// `n` initialized `f64`s; `out` points to one writable, aligned `f64`.
/// Only JIT code calls it (see `Lower::external` in `lower::expr`).
pub(crate) unsafe extern "C" fn rt_external(
    table: *const ExternalTable,
    index: i64,
    args: *const f64,
    n: i64,
    out: *mut f64,
) -> i64 {
    let (Ok(index), Ok(n)) = (usize::try_from(index), usize::try_from(n)) else {
        return EXTERNAL_MISSING;
    };
    if table.is_null() {
        return EXTERNAL_MISSING;
    }
    // SAFETY: JIT code passes the table pointer it received from
    // `JitFunction::run`, which borrows a live `ExternalTable` for the
    // whole call; `args` points to `n` initialized `f64`s in the caller's
    // stack slot (`Lower::external` stores all of them before the
    // call) and `out` to one writable `f64` slot of the same frame.
    let (table, args) = unsafe { (&*table, std::slice::from_raw_parts(args, n)) };
    let Some(Some(f)) = table.fns.get(index) else {
        return EXTERNAL_MISSING;
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(args))) {
        Ok(v) => {
            // SAFETY: see above (`out` is a valid, aligned f64 slot).
            unsafe { out.write(v) };
            0
        }
        Err(_) => EXTERNAL_PANICKED,
    }
}

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

/// `ln |Γ(x)|`: the interpreter's `runtime::math::lgamma` (one
/// implementation for both engines).
pub extern "C" fn rt_lgamma(x: f64) -> f64 {
    crate::runtime::math::lgamma(x)
}

// The random number generator is the interpreter's (`runtime::rng`): these
// entry points forward to `runtime::rng::abi`, so a draw of
// `(seed, call site, point)` is the same in both engines. JIT code builds
// the key with `alphac_rng_key_prefix(seed, var, ordinal, n)` and absorbs
// each coordinate, as `rng::Stream::new` does; the absorbing and
// `uniform()` are inlined there (`lower::draws`), the same arithmetic as
// `rt_rng_mix` and `rt_uniform` below (which tests use to predict keys).
use crate::runtime::rng::abi;

/// One coordinate absorbed into a key (`runtime::rng::absorb`).
pub extern "C" fn rt_rng_mix(h: i64, x: i64) -> i64 {
    abi::alphac_rng_absorb(h, x)
}

/// `uniform()` in `[0, 1)`.
pub extern "C" fn rt_uniform(key: i64) -> f64 {
    abi::alphac_rng_uniform(key)
}

/// `normal(mean, sd)`; NaN on invalid arguments.
pub extern "C" fn rt_normal(key: i64, mean: f64, sd: f64) -> f64 {
    abi::alphac_rng_normal(key, mean, sd)
}

/// `gamma(shape, scale)`; NaN on invalid arguments.
pub extern "C" fn rt_gamma(key: i64, shape: f64, scale: f64) -> f64 {
    abi::alphac_rng_gamma(key, shape, scale)
}

/// `beta(a, b)`; NaN on invalid arguments.
pub extern "C" fn rt_beta(key: i64, a: f64, b: f64) -> f64 {
    abi::alphac_rng_beta(key, a, b)
}

/// `bernoulli(p)` as 0/1; -1 on an invalid `p`.
pub extern "C" fn rt_bernoulli(key: i64, p: f64) -> i64 {
    abi::alphac_rng_bernoulli(key, p)
}

/// `poisson(lambda)`; -1 on an invalid `lambda`.
pub extern "C" fn rt_poisson(key: i64, lambda: f64) -> i64 {
    abi::alphac_rng_poisson(key, lambda)
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
