//! The hand-written samplers of `benches/handwritten/` compute what the
//! programs of `examples/` compute, so that `benches/handwritten.rs`
//! compares like with like.
//!
//! The hand-written samplers ask `alphac::runtime::rng` for the same keys
//! as the generated code (`site` and point as `alphac emit` prints them),
//! so they draw the same random numbers, and the chains can be compared
//! draw for draw: on small data from each program's generator, two sweeps
//! (state carried) of the optimized JIT code and of the hand-written
//! sampler give the same labels, exactly. The floats:
//! - bit for bit where both sides do the same operations in the same order
//!   (GMM-LW, LDA-LW, DMM-LW, the DMM log joints, LBP whose values are all
//!   small multiples of 1/8 so that every sum is exact);
//! - to a relative 1e-12 where a sum is accumulated in another order: the
//!   GMM log joints (alphac keeps the forward and backward sums
//!   `S_red + S_red2` apart, the hand-written sampler one running sum per
//!   component; the labels agree because a rounding difference of a
//!   weight moves a categorical draw only when the uniform falls within an
//!   ulp of a boundary), the LDA log joint (the lgamma terms of the count
//!   tables summed in another order) and CoxPH (suffix sums and the K × K
//!   solve, reassociated by the compiler).

#[path = "../benches/handwritten/common.rs"]
mod common;
#[path = "../benches/handwritten/coxph.rs"]
mod coxph;
#[path = "../benches/handwritten/dmm.rs"]
mod dmm;
#[path = "../benches/handwritten/gmm.rs"]
mod gmm;
#[path = "../benches/handwritten/lbp.rs"]
mod lbp;
#[path = "../benches/handwritten/lda.rs"]
mod lda;

use alphac::compile::Sweeper;
use alphac::runtime::rng::sweep_seed;
use alphac::runtime::Array;
use common::{bools, compiled, floats, generate, ints, labels, params_of};
use std::collections::HashMap;

const SEED: u64 = 11;

fn sweeper(name: &str, values: &[(&str, i64)], data: &HashMap<String, Array>) -> Sweeper {
    let c = compiled(name, name);
    c.sweeper(&params_of(&c, values), data, SEED).unwrap()
}

/// `a` and `b` equal to a relative `tol` (0: bit for bit).
fn same(what: &str, a: f64, b: f64, tol: f64) {
    if tol == 0.0 {
        assert_eq!(a.to_bits(), b.to_bits(), "{what}: {a} vs {b}");
    } else {
        assert!(
            (a - b).abs() <= tol * a.abs().max(b.abs()),
            "{what}: {a} vs {b} (relative {tol})"
        );
    }
}

fn same_labels(what: &str, jit: &[i64], hand: &[usize]) {
    let hand: Vec<i64> = hand.iter().map(|&k| k as i64).collect();
    assert_eq!(jit, &hand[..], "{what}");
}

/// Two sweeps of alphac's `name` and of `hand` (`step(s)` runs sweep `s`
/// seeded `sweep_seed(SEED, s)` and checks the outputs against alphac's).
fn chains(
    name: &str,
    values: &[(&str, i64)],
    data: &HashMap<String, Array>,
    mut step: impl FnMut(u64, &HashMap<String, Array>),
) {
    let mut sw = sweeper(name, values, data);
    for s in 0..2 {
        sw.sweep().unwrap();
        let out = sw.outputs().unwrap();
        step(s, &out);
    }
}

#[test]
fn gmm_gs_agrees() {
    let values = [("N", 300), ("K", 4)];
    let data = generate("gmm_gs", &values, 3);
    let mut h = gmm::GmmGs::new(4, floats(&data, "x"), labels(&ints(&data, "z"), 4));
    chains("gmm_gs", &values, &data, |s, out| {
        h.sweep(sweep_seed(SEED, s));
        same_labels("gmm_gs znew", &ints(out, "znew"), &h.znew);
        same("gmm_gs logp", floats(out, "logp")[0], h.logp, 1e-12);
        h.carry();
    });
}

#[test]
fn gmm_mh_agrees() {
    let values = [("N", 300), ("K", 4)];
    let data = generate("gmm_mh", &values, 3);
    let mut h = gmm::GmmMh::new(4, floats(&data, "x"), labels(&ints(&data, "z"), 4));
    chains("gmm_mh", &values, &data, |s, out| {
        h.sweep(sweep_seed(SEED, s));
        same_labels("gmm_mh znew", &ints(out, "znew"), &h.znew);
        same("gmm_mh logp", floats(out, "logp")[0], h.logp, 1e-12);
        h.carry();
    });
}

#[test]
fn gmm_lw_agrees() {
    let values = [("N", 300), ("K", 4)];
    let data = generate("gmm_lw", &values, 3);
    let mut h = gmm::GmmLw::new(4, floats(&data, "x"));
    chains("gmm_lw", &values, &data, |s, out| {
        h.sweep(sweep_seed(SEED, s));
        same_labels("gmm_lw z", &ints(out, "z"), &h.z);
        same("gmm_lw loglik", floats(out, "loglik")[0], h.loglik, 0.0);
        same("gmm_lw logw", floats(out, "logw")[0], h.logw, 0.0);
    });
}

const LDA: [(&str, i64); 4] = [("W", 400), ("K", 5), ("V", 30), ("D", 8)];

fn corpus(data: &HashMap<String, Array>) -> lda::Corpus {
    lda::Corpus {
        w: labels(&ints(data, "w"), 30),
        d: labels(&ints(data, "d"), 8),
        k: 5,
        v: 30,
        nd: 8,
    }
}

#[test]
fn lda_gs_agrees() {
    let data = generate("lda_gs", &LDA, 3);
    let mut h = lda::LdaGs::new(corpus(&data), labels(&ints(&data, "z"), 5));
    chains("lda_gs", &LDA, &data, |s, out| {
        h.sweep(sweep_seed(SEED, s));
        same_labels("lda_gs znew", &ints(out, "znew"), &h.znew);
        same("lda_gs logp", floats(out, "logp")[0], h.logp, 1e-12);
        h.carry();
    });
}

#[test]
fn lda_mh_agrees() {
    let data = generate("lda_mh", &LDA, 3);
    let mut h = lda::LdaMh::new(corpus(&data), labels(&ints(&data, "z"), 5));
    chains("lda_mh", &LDA, &data, |s, out| {
        h.sweep(sweep_seed(SEED, s));
        same_labels("lda_mh znew", &ints(out, "znew"), &h.znew);
        same("lda_mh logp", floats(out, "logp")[0], h.logp, 1e-12);
        h.carry();
    });
}

#[test]
fn lda_lw_agrees() {
    let data = generate("lda_lw", &LDA, 3);
    let mut h = lda::LdaLw::new(corpus(&data));
    chains("lda_lw", &LDA, &data, |s, out| {
        h.sweep(sweep_seed(SEED, s));
        same_labels("lda_lw z", &ints(out, "z"), &h.z);
        same("lda_lw logw", floats(out, "logw")[0], h.logw, 0.0);
    });
}

const DMM: [(&str, i64); 4] = [("D", 40), ("A", 12), ("K", 3), ("L", 15)];

#[test]
fn dmm_gs_agrees() {
    let data = generate("dmm_gs", &DMM, 3);
    let docs = dmm::Docs::new(12, 3, &ints(&data, "X"));
    let mut h = dmm::DmmGs::new(docs, labels(&ints(&data, "z"), 3));
    chains("dmm_gs", &DMM, &data, |s, out| {
        h.sweep(sweep_seed(SEED, s));
        same_labels("dmm_gs znew", &ints(out, "znew"), &h.znew);
        same("dmm_gs logp", floats(out, "logp")[0], h.logp, 0.0);
        h.carry();
    });
}

#[test]
fn dmm_mh_agrees() {
    let data = generate("dmm_mh", &DMM, 3);
    let docs = dmm::Docs::new(12, 3, &ints(&data, "X"));
    let mut h = dmm::DmmMh::new(docs, labels(&ints(&data, "z"), 3));
    chains("dmm_mh", &DMM, &data, |s, out| {
        h.sweep(sweep_seed(SEED, s));
        same_labels("dmm_mh znew", &ints(out, "znew"), &h.znew);
        same("dmm_mh logp", floats(out, "logp")[0], h.logp, 0.0);
        h.carry();
    });
}

#[test]
fn dmm_lw_agrees() {
    let data = generate("dmm_lw", &DMM, 3);
    let mut h = dmm::DmmLw::new(dmm::Docs::new(12, 3, &ints(&data, "X")));
    chains("dmm_lw", &DMM, &data, |s, out| {
        h.sweep(sweep_seed(SEED, s));
        same_labels("dmm_lw z", &ints(out, "z"), &h.z);
        same("dmm_lw loglik", floats(out, "loglik")[0], h.loglik, 0.0);
        same("dmm_lw logw", floats(out, "logw")[0], h.logw, 0.0);
    });
}

#[test]
fn lbp_stereo_agrees() {
    let values = [("N", 300), ("K", 5), ("D", 4)];
    let data = generate("lbp_stereo", &values, 3);
    let mut h = lbp::Lbp::new(
        5,
        4,
        floats(&data, "left"),
        floats(&data, "right"),
        ints(&data, "xs"),
        &ints(&data, "nbr"),
        &ints(&data, "rev"),
        bools(&data, "valid"),
        floats(&data, "msg"),
    );
    chains("lbp_stereo", &values, &data, |_, out| {
        h.sweep();
        assert_eq!(ints(out, "label"), h.label, "lbp label");
        let jit = floats(out, "msgnew");
        assert_eq!(jit.len(), h.msgnew.len());
        for (i, (&a, &b)) in jit.iter().zip(&h.msgnew).enumerate() {
            same(&format!("lbp msgnew[{i}]"), a, b, 0.0);
        }
        same("lbp energy", floats(out, "energy")[0], h.energy, 0.0);
        h.carry();
    });
}

#[test]
fn coxph_agrees() {
    let values = [("N", 60), ("K", 3)];
    let data = generate("coxph", &values, 3);
    let mut h = coxph::Cox::new(
        3,
        floats(&data, "X"),
        &ints(&data, "event"),
        &ints(&data, "first"),
        &ints(&data, "m"),
        &ints(&data, "l"),
        floats(&data, "beta"),
    );
    chains("coxph", &values, &data, |_, out| {
        h.sweep();
        same("coxph loglik", floats(out, "loglik")[0], h.loglik, 1e-12);
        for (a, (&x, &y)) in floats(out, "betanew").iter().zip(&h.betanew).enumerate() {
            same(&format!("coxph betanew[{a}]"), x, y, 1e-12);
        }
        h.carry();
    });
}
