//! What the hand-written samplers share: alphac's counter-based draws
//! (`alphac::runtime::rng`: a draw is a pure function of `(seed, site,
//! point)`, so a hand-written sampler that asks for the same keys gets the
//! same random numbers as the generated code), the categorical draw's rule,
//! and the glue that compiles an example and generates its data.
#![allow(dead_code)]

use alphac::compile::{self, Compiled, Options};
use alphac::runtime::rng::{self, Stream};
use alphac::runtime::{Array, ArrayData};
use std::collections::HashMap;

/// The keys of one random call of a program for one sweep: the key of the
/// call at point `[i]` is `absorb(prefix, i)` with
/// `prefix = key_prefix(seed, var, ordinal, 1)` computed once per sweep.
/// `site` packs `(var << 16) | ordinal` as `alphac emit` prints it
/// (`site 131072, point [i0]`: variable 2, ordinal 0).
#[derive(Clone, Copy)]
pub struct Site {
    prefix: u64,
}

impl Site {
    /// The call `site` (as printed by `alphac emit`) for a sweep seeded
    /// with `seed`, at one-dimensional points.
    pub fn new(seed: u64, site: u64) -> Site {
        Site {
            prefix: rng::key_prefix(seed, site >> 16, site & 0xffff, 1),
        }
    }

    /// The uniform draw in `[0, 1)` of the call at point `[i]`.
    #[inline]
    pub fn uniform(&self, i: usize) -> f64 {
        Stream::from_key(rng::absorb(self.prefix, i as u64)).uniform(0)
    }
}

/// `categorical` over `w` (non-negative, summing to `total` left to right)
/// with the uniform `u`, exactly as `runtime::rng::Stream::categorical`:
/// the first `k` with `w_k > 0` and `w_0 + ... + w_k > u · total`, or the
/// last `k` with `w_k > 0` when rounding leaves none.
#[inline]
pub fn categorical(w: &[f64], total: f64, u: f64) -> usize {
    let t = u * total;
    let mut cum = 0.0;
    let mut last = 0;
    for (k, &wk) in w.iter().enumerate() {
        cum += wk;
        if wk > 0.0 {
            last = k;
            if cum > t {
                return k;
            }
        }
    }
    last
}

/// `categorical` over `K` weights all `1.0` with the uniform `u`, in O(1):
/// the running sums are the exact integers `k + 1`, so the rule above
/// picks `floor(u · K)` (at most `K − 1`).
#[inline]
pub fn uniform_label(u: f64, k: usize) -> usize {
    ((u * k as f64) as usize).min(k - 1)
}

/// The text of `examples/NAME.alpha`.
pub fn source(name: &str) -> String {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// System `system` of `examples/NAME.alpha`, optimized (the defaults of
/// `alphac run`).
pub fn compiled(name: &str, system: &str) -> Compiled {
    let options = Options {
        system: Some(system.to_string()),
        ..Options::default()
    };
    compile::compile(&source(name), &options).unwrap_or_else(|e| panic!("{system}: {e}"))
}

/// The system's parameters in its order, from `(name, value)` pairs (extra
/// names ignored).
pub fn params_of(c: &Compiled, values: &[(&str, i64)]) -> Vec<i64> {
    c.system()
        .params
        .iter()
        .map(|p| {
            values
                .iter()
                .find(|(n, _)| n == p)
                .map(|&(_, v)| v)
                .unwrap_or_else(|| panic!("parameter {p} not given"))
        })
        .collect()
}

/// The sampler's inputs drawn by the file's generator `NAME_data` with the
/// seed `--generate-inputs` uses (`rng::data_seed(seed)`).
pub fn generate(name: &str, values: &[(&str, i64)], seed: u64) -> HashMap<String, Array> {
    let g = compiled(name, &format!("{name}_data"));
    let mut out = g
        .run(
            &params_of(&g, values),
            &HashMap::new(),
            rng::data_seed(seed),
        )
        .unwrap_or_else(|e| panic!("{name}_data: {e}"));
    let s = compiled(name, name);
    s.system()
        .vars
        .iter()
        .filter(|v| v.kind == alphac::ir::VarKind::Input)
        .map(|v| {
            let a = out
                .remove(&v.name)
                .unwrap_or_else(|| panic!("{name}_data does not produce {}", v.name));
            (v.name.clone(), a)
        })
        .collect()
}

/// The integers of array `name`.
pub fn ints(m: &HashMap<String, Array>, name: &str) -> Vec<i64> {
    match m.get(name).map(Array::data) {
        Some(ArrayData::Int(v)) => v.clone(),
        _ => panic!("{name}: no int array"),
    }
}

/// The floats of array `name` (a scalar is one element).
pub fn floats(m: &HashMap<String, Array>, name: &str) -> Vec<f64> {
    match m.get(name).map(Array::data) {
        Some(ArrayData::Float(v)) => v.clone(),
        _ => panic!("{name}: no float array"),
    }
}

/// The booleans of array `name`.
pub fn bools(m: &HashMap<String, Array>, name: &str) -> Vec<bool> {
    match m.get(name).map(Array::data) {
        Some(ArrayData::Bool(v)) => v.clone(),
        _ => panic!("{name}: no bool array"),
    }
}

/// The label arrays as indices (`usize`), checked to be in `0..k`.
pub fn labels(v: &[i64], k: usize) -> Vec<usize> {
    v.iter()
        .map(|&x| {
            let l = usize::try_from(x).unwrap_or(usize::MAX);
            assert!(l < k, "label {x} not in 0..{k}");
            l
        })
        .collect()
}
