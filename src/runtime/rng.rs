//! Counter-based random numbers: a draw is a pure function of
//! `(seed, call site, iteration point)`, so that every back end and every
//! schedule produces the same samples.
//!
//! # Exact construction (the JIT must reproduce it bit for bit)
//! All arithmetic is on `u64`, wrapping.
//! - `mix64(z)` is the SplitMix64 finalizer:
//!   `z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;`
//!   `z = (z ^ (z >> 27)) * 0x94D049BB133111EB;` result `z ^ (z >> 31)`.
//! - `absorb(h, w) = mix64(h ^ mix64(w + GOLDEN))` with
//!   `GOLDEN = 0x9E3779B97F4A7C15`.
//! - The key of a call at iteration point `x = (x_0, ..., x_{n-1})` is
//!   `k = mix64(seed ^ TAG)` (`TAG = 0x616C_7068_6163_0001`), then
//!   `k = absorb(k, site)`, `k = absorb(k, ordinal)`, `k = absorb(k, n)`,
//!   then `k = absorb(k, x_i as u64)` for `i = 0..n` (two's complement).
//!   For a stochastic call of the IR, `site` is the `VarId` of the equation's
//!   variable and `ordinal` the call's [`crate::ir::CallSite::ordinal`].
//! - Raw draw `j` (j = 0, 1, 2, ...) of the key is the SplitMix64 stream
//!   `raw(j) = mix64(k + (j + 1) * GOLDEN)`.
//! - A sub-stream `i` (used by `beta` for its two gammas) has key
//!   `absorb(k, SUB + i)` with `SUB = 0x5355_4253_5452_0000`.
//! - `uniform(j) = (raw(j) >> 11) · 2^-53`, in `[0, 1)`.
//!
//! # Distributions (draw indices used)
//! - `uniform()`: `uniform(0)`.
//! - `normal(m, s)`: Box–Muller, `m + s · sqrt(-2 ln(1 - uniform(0))) ·
//!   cos(2π · uniform(1))`. Requires `s >= 0` finite, `m` finite.
//! - `gamma(a, θ)`: Marsaglia–Tsang for `a >= 1` with `d = a - 1/3`,
//!   `c = 1/sqrt(9d)`; attempt `t = 0, 1, ...` (at most
//!   [`MAX_ATTEMPTS`]) uses a standard normal `z` from draws
//!   `(b + 3t, b + 3t + 1)` (Box–Muller as above) and `u = 1 - uniform(b + 3t
//!   + 2)`; with `v = (1 + cz)^3` it accepts when `v > 0` and
//!   `ln u < z²/2 + d - dv + d ln v`, giving `θ·d·v`. For `a >= 1`, `b = 0`.
//!   For `0 < a < 1`: `gamma(a + 1)` with `b = 1`, times
//!   `(1 - uniform(0))^(1/a)`. Requires `a > 0`, `θ > 0`, both finite.
//! - `beta(a, b)`: `x = gamma(a, 1)` on sub-stream 1, `y = gamma(b, 1)` on
//!   sub-stream 2, result `x / (x + y)`; when both underflow to 0, the result
//!   is `1` if `uniform(0) < a / (a + b)`, else `0`.
//! - `bernoulli(p)`: `uniform(0) < p`. Requires `0 <= p <= 1`.
//! - `poisson(λ)`: `0` for `λ = 0`; for `λ < 10`, inversion with
//!   `u = uniform(0)`: `k = 0, p = e^-λ, F = p`; while `u > F`:
//!   `k += 1, p *= λ/k` (stop when `p` underflows to 0), `F += p`.
//!   For `λ >= 10`, PTRS (Hörmann 1993, as in NumPy) with attempt `t` using
//!   `U = uniform(2t) - 0.5`, `V = uniform(2t + 1)`.
//!   Requires `0 <= λ <= 1e15` (so that the result fits an `i64` exactly).
//! - categorical: with weights `w_0..w_{m-1}` (all finite, `>= 0`, sum
//!   `W > 0` finite), `t = uniform(0) · W`; the result is the first `i` with
//!   `w_0 + ... + w_i > t` (summed left to right), or the last `i` with
//!   `w_i > 0` if rounding leaves none.
//!
//! Must not know about: programs or arrays (the caller supplies the site
//! and the point).

use std::f64::consts::PI;

/// SplitMix64 increment (golden ratio).
pub const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
/// Domain-separation tag mixed into the seed.
pub const TAG: u64 = 0x616C_7068_6163_0001;
/// Base of sub-stream indices.
pub const SUB: u64 = 0x5355_4253_5452_0000;
/// Bound on rejection-sampling attempts (gamma, poisson); the chance of
/// reaching it is below 1e-300 for valid parameters.
pub const MAX_ATTEMPTS: u64 = 1000;

/// The SplitMix64 finalizer.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `absorb(h, w) = mix64(h ^ mix64(w + GOLDEN))`.
pub fn absorb(h: u64, w: u64) -> u64 {
    mix64(h ^ mix64(w.wrapping_add(GOLDEN)))
}

/// The key before the point's coordinates are absorbed:
/// `absorb(absorb(absorb(mix64(seed ^ TAG), site), ordinal), n_coords)`.
/// The full key of a point `x` is then `absorb(.., x_i as u64)` for
/// `i = 0..n_coords` in order (see [`Stream::new`]).
pub fn key_prefix(seed: u64, site: u64, ordinal: u64, n_coords: u64) -> u64 {
    let mut k = mix64(seed ^ TAG);
    k = absorb(k, site);
    k = absorb(k, ordinal);
    absorb(k, n_coords)
}

/// Domain-separation tag of the seeds of sweeps after the first.
pub const SWEEP_TAG: u64 = 0x616C_7068_6163_5357;
/// Domain-separation tag of the seed of generated data.
pub const DATA_TAG: u64 = 0x616C_7068_6163_4441;

/// The seed of sweep `s` of a run seeded with `seed`: `seed` itself for
/// `s = 0` (so one sweep is exactly one run), otherwise
/// `absorb(mix64(seed ^ SWEEP_TAG), s)`. A pure function of `(seed, s)`, so
/// that 100 sweeps equal 50 sweeps and 50 more resumed at sweep 50.
pub fn sweep_seed(seed: u64, s: u64) -> u64 {
    if s == 0 {
        seed
    } else {
        absorb(mix64(seed ^ SWEEP_TAG), s)
    }
}

/// The seed of the data a generator system draws for a run seeded with
/// `seed` (`absorb(mix64(seed ^ DATA_TAG), 0)`): independent of every
/// sweep's draws, although both systems number their call sites alike.
pub fn data_seed(seed: u64) -> u64 {
    absorb(mix64(seed ^ DATA_TAG), 0)
}

/// FNV-1a 64-bit hash (used to derive a site from a name).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// An invalid distribution argument or a rejection loop that hit
/// [`MAX_ATTEMPTS`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DrawError {
    #[error("{dist}: invalid argument: {msg}")]
    InvalidArgument { dist: &'static str, msg: String },
    #[error("{dist}: rejection sampling did not accept within {MAX_ATTEMPTS} attempts")]
    NoAcceptance { dist: &'static str },
}

fn invalid(dist: &'static str, msg: String) -> DrawError {
    DrawError::InvalidArgument { dist, msg }
}

/// The keyed stream of one call at one iteration point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    key: u64,
}

impl Stream {
    /// The stream of call `(site, ordinal)` at iteration point `point` for
    /// `seed` (see the module comment for the construction).
    pub fn new(seed: u64, site: u64, ordinal: u64, point: &[i64]) -> Stream {
        let mut k = key_prefix(seed, site, ordinal, point.len() as u64);
        for &x in point {
            k = absorb(k, x as u64);
        }
        Stream { key: k }
    }

    /// The stream of a key computed elsewhere (by JIT code: `key_prefix`
    /// once, then `absorb(key, x_i)` per coordinate of the point).
    pub fn from_key(key: u64) -> Stream {
        Stream { key }
    }

    /// The key (for tests and the JIT).
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Sub-stream `i`: key `absorb(k, SUB + i)`.
    pub fn sub(&self, i: u64) -> Stream {
        Stream {
            key: absorb(self.key, SUB.wrapping_add(i)),
        }
    }

    /// Raw draw `j`: `mix64(k + (j + 1)·GOLDEN)`.
    pub fn raw(&self, j: u64) -> u64 {
        mix64(
            self.key
                .wrapping_add(j.wrapping_add(1).wrapping_mul(GOLDEN)),
        )
    }

    /// Uniform draw `j` in `[0, 1)` from the top 53 bits of `raw(j)`.
    pub fn uniform(&self, j: u64) -> f64 {
        (self.raw(j) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal from draws `j`, `j + 1` (Box–Muller, cosine branch).
    fn std_normal(&self, j: u64) -> f64 {
        let u1 = 1.0 - self.uniform(j); // in (0, 1]
        let u2 = self.uniform(j + 1);
        (-2.0 * u1.ln()).sqrt() * (2.0 * PI * u2).cos()
    }

    /// `normal(mean, sd)`.
    pub fn normal(&self, mean: f64, sd: f64) -> Result<f64, DrawError> {
        if !mean.is_finite() || !sd.is_finite() || sd < 0.0 {
            return Err(invalid("normal", format!("mean {mean}, sd {sd}")));
        }
        Ok(mean + sd * self.std_normal(0))
    }

    /// Marsaglia–Tsang for `a >= 1`, scale 1, draws from index `base`.
    fn gamma_mt(&self, a: f64, base: u64) -> Result<f64, DrawError> {
        let d = a - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        for t in 0..MAX_ATTEMPTS {
            let j = base + 3 * t;
            let z = self.std_normal(j);
            let v = 1.0 + c * z;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = 1.0 - self.uniform(j + 2);
            if u.ln() < 0.5 * z * z + d - d * v + d * v.ln() {
                return Ok(d * v);
            }
        }
        Err(DrawError::NoAcceptance { dist: "gamma" })
    }

    /// `gamma(shape, scale)` (mean `shape·scale`).
    pub fn gamma(&self, shape: f64, scale: f64) -> Result<f64, DrawError> {
        if !(shape.is_finite() && scale.is_finite() && shape > 0.0 && scale > 0.0) {
            return Err(invalid("gamma", format!("shape {shape}, scale {scale}")));
        }
        if shape >= 1.0 {
            Ok(scale * self.gamma_mt(shape, 0)?)
        } else {
            let g = self.gamma_mt(shape + 1.0, 1)?;
            let u = 1.0 - self.uniform(0);
            Ok(scale * g * u.powf(1.0 / shape))
        }
    }

    /// `beta(a, b)` from two gammas on sub-streams 1 and 2.
    pub fn beta(&self, a: f64, b: f64) -> Result<f64, DrawError> {
        if !(a.is_finite() && b.is_finite() && a > 0.0 && b > 0.0) {
            return Err(invalid("beta", format!("a {a}, b {b}")));
        }
        let x = self.sub(1).gamma(a, 1.0)?;
        let y = self.sub(2).gamma(b, 1.0)?;
        if x + y == 0.0 {
            return Ok(if self.uniform(0) < a / (a + b) {
                1.0
            } else {
                0.0
            });
        }
        Ok(x / (x + y))
    }

    /// `bernoulli(p)`.
    pub fn bernoulli(&self, p: f64) -> Result<bool, DrawError> {
        if !(0.0..=1.0).contains(&p) {
            return Err(invalid("bernoulli", format!("p {p} not in [0, 1]")));
        }
        Ok(self.uniform(0) < p)
    }

    /// `poisson(lambda)`.
    pub fn poisson(&self, lambda: f64) -> Result<i64, DrawError> {
        if !(0.0..=1e15).contains(&lambda) {
            return Err(invalid(
                "poisson",
                format!("lambda {lambda} not in [0, 1e15]"),
            ));
        }
        if lambda == 0.0 {
            return Ok(0);
        }
        if lambda < 10.0 {
            let u = self.uniform(0);
            let mut k: i64 = 0;
            let mut p = (-lambda).exp();
            let mut f = p;
            while u > f {
                k += 1;
                p *= lambda / k as f64;
                if p == 0.0 {
                    break;
                }
                f += p;
            }
            return Ok(k);
        }
        // PTRS (Hörmann 1993), as in NumPy's random_poisson_ptrs.
        let slam = lambda.sqrt();
        let loglam = lambda.ln();
        let b = 0.931 + 2.53 * slam;
        let a = -0.059 + 0.02483 * b;
        let invalpha = 1.1239 + 1.1328 / (b - 3.4);
        let vr = 0.9277 - 3.6224 / (b - 2.0);
        for t in 0..MAX_ATTEMPTS {
            let u = self.uniform(2 * t) - 0.5;
            let v = self.uniform(2 * t + 1);
            let us = 0.5 - u.abs();
            let k = ((2.0 * a / us + b) * u + lambda + 0.43).floor();
            if us >= 0.07 && v <= vr {
                return Ok(k as i64);
            }
            if k < 0.0 || (us < 0.013 && v > us) {
                continue;
            }
            if v.ln() + invalpha.ln() - (a / (us * us) + b).ln()
                <= -lambda + k * loglam - super::math::lgamma(k + 1.0)
            {
                // 0 <= k and k is within a few sd of lambda <= 1e15.
                return Ok(k as i64);
            }
        }
        Err(DrawError::NoAcceptance { dist: "poisson" })
    }

    /// [`Stream::categorical`] over `n` weights all `1.0`, in O(1): the
    /// running sums `1, ..., n` are exact (`n < 2^53`), so the first index
    /// whose sum exceeds `t = u·n` is `⌊t⌋`, or the last one, `n − 1`, when
    /// rounding made `t = n`. `n = 0` is the same error as an empty
    /// categorical.
    pub fn uniform_index(&self, n: u64) -> Result<u64, DrawError> {
        if n == 0 || n >= 1 << 53 {
            return Err(invalid(
                "categorical",
                format!("{n} equal weights (need 1 to 2^53 - 1)"),
            ));
        }
        let t = self.uniform(0) * n as f64;
        // 0 <= t <= n < 2^53: the floor is exact and fits.
        Ok((t.floor() as u64).min(n - 1))
    }

    /// Inverse-CDF categorical draw over `weights` in index order.
    pub fn categorical(&self, weights: &[f64]) -> Result<usize, DrawError> {
        let mut total = 0.0;
        for (i, &w) in weights.iter().enumerate() {
            if !(w.is_finite() && w >= 0.0) {
                return Err(invalid("categorical", format!("weight {i} is {w}")));
            }
            total += w;
        }
        if !(total > 0.0 && total.is_finite()) {
            return Err(invalid(
                "categorical",
                format!("weights sum to {total} (need a positive finite sum)"),
            ));
        }
        let target = self.uniform(0) * total;
        let mut cum = 0.0;
        let mut last_pos = 0;
        for (i, &w) in weights.iter().enumerate() {
            cum += w;
            if w > 0.0 {
                last_pos = i;
                if cum > target {
                    return Ok(i);
                }
            }
        }
        Ok(last_pos)
    }
}

/// C-ABI entry points for JIT code, with the same values as [`Stream`]
/// (they call it). Keys travel as `i64` bit patterns. An invalid argument
/// (or a rejection loop reaching [`MAX_ATTEMPTS`]) yields NaN for float
/// results and `-1` for `bernoulli` / `poisson`, for the caller to turn
/// into an error naming the variable and point.
pub mod abi {
    use super::{absorb, key_prefix, Stream};

    /// [`key_prefix`]`(seed, site, ordinal, n)`.
    pub extern "C" fn alphac_rng_key_prefix(seed: i64, site: i64, ordinal: i64, n: i64) -> i64 {
        key_prefix(seed as u64, site as u64, ordinal as u64, n as u64) as i64
    }
    /// [`absorb`]`(key, x)`: absorbs one coordinate of the point.
    pub extern "C" fn alphac_rng_absorb(key: i64, x: i64) -> i64 {
        absorb(key as u64, x as u64) as i64
    }
    /// `uniform()`.
    pub extern "C" fn alphac_rng_uniform(key: i64) -> f64 {
        Stream::from_key(key as u64).uniform(0)
    }
    /// `normal(mean, sd)`; NaN on invalid arguments.
    pub extern "C" fn alphac_rng_normal(key: i64, mean: f64, sd: f64) -> f64 {
        Stream::from_key(key as u64)
            .normal(mean, sd)
            .unwrap_or(f64::NAN)
    }
    /// `gamma(shape, scale)`; NaN on invalid arguments.
    pub extern "C" fn alphac_rng_gamma(key: i64, shape: f64, scale: f64) -> f64 {
        Stream::from_key(key as u64)
            .gamma(shape, scale)
            .unwrap_or(f64::NAN)
    }
    /// `beta(a, b)`; NaN on invalid arguments.
    pub extern "C" fn alphac_rng_beta(key: i64, a: f64, b: f64) -> f64 {
        Stream::from_key(key as u64).beta(a, b).unwrap_or(f64::NAN)
    }
    /// `bernoulli(p)` as 0/1; -1 on an invalid `p`.
    pub extern "C" fn alphac_rng_bernoulli(key: i64, p: f64) -> i64 {
        Stream::from_key(key as u64)
            .bernoulli(p)
            .map_or(-1, i64::from)
    }
    /// `poisson(lambda)`; -1 on an invalid `lambda`.
    pub extern "C" fn alphac_rng_poisson(key: i64, lambda: f64) -> i64 {
        Stream::from_key(key as u64).poisson(lambda).unwrap_or(-1)
    }
    /// The categorical draw over `weights[0..n]` (index order) as an index,
    /// or -1 when the weights are invalid. Safe: the caller passes a slice.
    pub fn alphac_rng_categorical(key: i64, weights: &[f64]) -> i64 {
        Stream::from_key(key as u64)
            .categorical(weights)
            .map_or(-1, |i| i as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: i64 = 100_000;

    fn streams(ordinal: u64) -> impl Iterator<Item = Stream> {
        (0..N).map(move |i| Stream::new(42, 3, ordinal, &[i, -i]))
    }

    fn moments(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let m = xs.iter().sum::<f64>() / n;
        let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
        (m, v)
    }

    /// Mean within 5 standard errors, variance within 5% (plus an absolute
    /// slack for tiny variances).
    fn check(name: &str, xs: &[f64], mean: f64, var: f64) {
        let (m, v) = moments(xs);
        let se = (var / xs.len() as f64).sqrt();
        assert!(
            (m - mean).abs() <= 5.0 * se + 1e-12,
            "{name}: mean {m}, expected {mean}"
        );
        assert!(
            (v - var).abs() <= 0.05 * var + 1e-12,
            "{name}: var {v}, expected {var}"
        );
    }

    #[test]
    fn construction_is_pinned() {
        // SplitMix64 reference: the first output of seed 0 is
        // mix64(0 + GOLDEN) = 0xE220A8397B1DCDAF.
        assert_eq!(mix64(GOLDEN), 0xE220_A839_7B1D_CDAF);
        let s = Stream::new(1, 2, 3, &[4, -5]);
        let mut k = mix64(1 ^ TAG);
        for w in [2u64, 3, 2, 4, (-5i64) as u64] {
            k = mix64(k ^ mix64(w.wrapping_add(GOLDEN)));
        }
        assert_eq!(s.key(), k);
        let chained = absorb(absorb(key_prefix(1, 2, 3, 2), 4), (-5i64) as u64);
        assert_eq!(Stream::from_key(chained), s);
        assert_eq!(s.raw(0), mix64(k.wrapping_add(GOLDEN)));
        assert_eq!(s.raw(1), mix64(k.wrapping_add(GOLDEN.wrapping_mul(2))));
    }

    #[test]
    fn abi_agrees_with_streams() {
        for i in 0..200i64 {
            let s = Stream::new(9, 4, 2, &[i, 3 - i]);
            let mut k = abi::alphac_rng_key_prefix(9, 4, 2, 2);
            k = abi::alphac_rng_absorb(k, i);
            k = abi::alphac_rng_absorb(k, 3 - i);
            assert_eq!(k as u64, s.key());
            assert_eq!(abi::alphac_rng_uniform(k), s.uniform(0));
            assert_eq!(
                abi::alphac_rng_normal(k, 1.0, 2.0),
                s.normal(1.0, 2.0).unwrap()
            );
            assert_eq!(
                abi::alphac_rng_gamma(k, 0.7, 2.0),
                s.gamma(0.7, 2.0).unwrap()
            );
            assert_eq!(abi::alphac_rng_beta(k, 2.0, 3.0), s.beta(2.0, 3.0).unwrap());
            assert_eq!(
                abi::alphac_rng_bernoulli(k, 0.4),
                s.bernoulli(0.4).unwrap() as i64
            );
            assert_eq!(abi::alphac_rng_poisson(k, 40.0), s.poisson(40.0).unwrap());
            assert_eq!(
                abi::alphac_rng_categorical(k, &[1.0, 2.0, 3.0]),
                s.categorical(&[1.0, 2.0, 3.0]).unwrap() as i64
            );
        }
        assert!(abi::alphac_rng_normal(0, 0.0, -1.0).is_nan());
        assert_eq!(abi::alphac_rng_bernoulli(0, 2.0), -1);
        assert_eq!(abi::alphac_rng_poisson(0, -1.0), -1);
        assert_eq!(abi::alphac_rng_categorical(0, &[0.0]), -1);
    }

    #[test]
    fn pure_and_point_sensitive() {
        let a = Stream::new(7, 1, 0, &[3, 4]);
        assert_eq!(a.uniform(0), Stream::new(7, 1, 0, &[3, 4]).uniform(0));
        assert_ne!(a.raw(0), Stream::new(7, 1, 0, &[4, 3]).raw(0));
        assert_ne!(a.raw(0), Stream::new(7, 1, 1, &[3, 4]).raw(0));
        assert_ne!(a.raw(0), Stream::new(7, 2, 0, &[3, 4]).raw(0));
        assert_ne!(a.raw(0), Stream::new(8, 1, 0, &[3, 4]).raw(0));
        assert_ne!(a.raw(0), Stream::new(7, 1, 0, &[3, 4, 0]).raw(0));
        // Distinct points give distinct raw draws across a grid.
        let mut seen = std::collections::HashSet::new();
        for i in -50..50 {
            for j in -50..50 {
                assert!(seen.insert(Stream::new(7, 1, 0, &[i, j]).raw(0)));
            }
        }
    }

    #[test]
    fn uniform_moments() {
        let xs: Vec<f64> = streams(0).map(|s| s.uniform(0)).collect();
        assert!(xs.iter().all(|&x| (0.0..1.0).contains(&x)));
        check("uniform", &xs, 0.5, 1.0 / 12.0);
    }

    #[test]
    fn normal_moments() {
        let xs: Vec<f64> = streams(1).map(|s| s.normal(2.0, 3.0).unwrap()).collect();
        check("normal", &xs, 2.0, 9.0);
        assert!(Stream::new(0, 0, 0, &[]).normal(0.0, -1.0).is_err());
    }

    #[test]
    fn gamma_moments() {
        for &(a, th) in &[(0.3, 2.0), (1.0, 1.0), (2.5, 0.5), (50.0, 1.0)] {
            let xs: Vec<f64> = streams(2).map(|s| s.gamma(a, th).unwrap()).collect();
            assert!(xs.iter().all(|&x| x >= 0.0));
            check("gamma", &xs, a * th, a * th * th);
        }
        assert!(Stream::new(0, 0, 0, &[]).gamma(0.0, 1.0).is_err());
        assert!(Stream::new(0, 0, 0, &[]).gamma(1.0, f64::NAN).is_err());
    }

    #[test]
    fn beta_moments() {
        for &(a, b) in &[(0.5, 0.5), (2.0, 5.0), (10.0, 3.0)] {
            let xs: Vec<f64> = streams(3).map(|s| s.beta(a, b).unwrap()).collect();
            assert!(xs.iter().all(|&x| (0.0..=1.0).contains(&x)));
            let m = a / (a + b);
            let v = a * b / ((a + b) * (a + b) * (a + b + 1.0));
            check("beta", &xs, m, v);
        }
    }

    #[test]
    fn bernoulli_moments() {
        for &p in &[0.0, 0.1, 0.5, 1.0] {
            let xs: Vec<f64> = streams(4)
                .map(|s| s.bernoulli(p).unwrap() as u8 as f64)
                .collect();
            check("bernoulli", &xs, p, p * (1.0 - p));
        }
        assert!(Stream::new(0, 0, 0, &[]).bernoulli(1.5).is_err());
        assert!(Stream::new(0, 0, 0, &[]).bernoulli(f64::NAN).is_err());
    }

    #[test]
    fn poisson_moments() {
        for &l in &[0.5, 3.0, 9.9, 10.0, 25.0, 1000.0] {
            let xs: Vec<f64> = streams(5).map(|s| s.poisson(l).unwrap() as f64).collect();
            assert!(xs.iter().all(|&x| x >= 0.0));
            check("poisson", &xs, l, l);
        }
        assert_eq!(Stream::new(0, 0, 0, &[]).poisson(0.0).unwrap(), 0);
        assert!(Stream::new(0, 0, 0, &[]).poisson(-1.0).is_err());
    }

    proptest::proptest! {
        /// The O(1) uniform index is the categorical draw over equal
        /// weights `1.0`, for every key.
        #[test]
        fn uniform_index_is_the_categorical_of_ones(
            seed in 0u64..1000, site in 0u64..64, point in 0i64..10_000, n in 1usize..300,
        ) {
            let s = Stream::new(seed, site, 0, &[point]);
            let want = s.categorical(&vec![1.0; n]).expect("positive weights");
            proptest::prop_assert_eq!(s.uniform_index(n as u64).expect("n >= 1"), want as u64);
        }
    }

    #[test]
    fn uniform_index_of_nothing_is_an_error() {
        assert!(Stream::new(0, 0, 0, &[]).uniform_index(0).is_err());
    }

    #[test]
    fn categorical_frequencies() {
        let w = [1.0, 0.0, 3.0, 6.0];
        let mut counts = [0usize; 4];
        for s in streams(6) {
            counts[s.categorical(&w).unwrap()] += 1;
        }
        assert_eq!(counts[1], 0);
        for (i, &c) in counts.iter().enumerate() {
            let p = w[i] / 10.0;
            let se = (p * (1.0 - p) / N as f64).sqrt();
            let f = c as f64 / N as f64;
            assert!(
                (f - p).abs() <= 5.0 * se + 1e-12,
                "category {i}: {f} vs {p}"
            );
        }
        let s = Stream::new(0, 0, 0, &[]);
        assert!(s.categorical(&[0.0, 0.0]).is_err());
        assert!(s.categorical(&[1.0, -1.0]).is_err());
        assert!(s.categorical(&[1.0, f64::NAN]).is_err());
        assert!(s.categorical(&[]).is_err());
    }
}
