//! Helpers shared by the integration tests (`mod common;` in a test file).
//!
//! Owns: the one float comparison of the tests ([`close`], [`all_close`])
//! and its tolerance ([`Tol`]). Each test states its tolerance; none is
//! implied.

// Every test crate compiles this module; each uses only part of it.
#![allow(dead_code)]

pub mod cleanup;
pub mod kernels;
pub mod loops;
pub mod opt;

/// The four option sets compiled programs are compared under: optimized
/// or not, checked or not.
pub fn option_sets() -> Vec<alphac::compile::Options> {
    let mut out = Vec::new();
    for optimize in [false, true] {
        for checked in [false, true] {
            out.push(alphac::compile::Options {
                optimize,
                checked,
                ..alphac::compile::Options::default()
            });
        }
    }
    out
}

/// How far two floats may differ: `|a - b| <= rel · max(|a|, |b|, floor)`.
/// With `floor = 0` the tolerance is purely relative; with `floor = 1` it is
/// also an absolute `rel` for values of magnitude below 1 (where a relative
/// tolerance would demand more than the arithmetic can give near 0).
#[derive(Clone, Copy, Debug)]
pub struct Tol {
    pub rel: f64,
    pub floor: f64,
}

impl Tol {
    /// Relative tolerance `rel`.
    pub const fn rel(rel: f64) -> Tol {
        Tol { rel, floor: 0.0 }
    }
    /// Relative tolerance `rel`, absolute `rel` below magnitude 1.
    pub const fn rel_or_abs(rel: f64) -> Tol {
        Tol { rel, floor: 1.0 }
    }
}

/// `a` and `b` agree within `tol`. Equal values agree (infinities
/// included) and NaN agrees with NaN: two engines that both produce NaN at
/// the same place agree.
pub fn close(a: f64, b: f64, tol: Tol) -> bool {
    (a.is_nan() && b.is_nan())
        || a == b
        || (a - b).abs() <= tol.rel * a.abs().max(b.abs()).max(tol.floor)
}

/// Equal lengths and [`close`] element by element.
pub fn all_close(x: &[f64], y: &[f64], tol: Tol) -> bool {
    x.len() == y.len() && x.iter().zip(y).all(|(&a, &b)| close(a, b, tol))
}
