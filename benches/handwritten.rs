//! The 11 inference programs (`examples/`, BENCHMARKS.md) against the
//! manual algorithm written by hand in Rust (`benches/handwritten/`): the
//! practical limit for the generated code. For each program the data is
//! generated once by its `NAME_data` system (as `alphac run
//! --generate-inputs` does, seed 1); then one sweep of the optimized JIT
//! code (a `Sweeper`: state in place, nothing compiled or allocated
//! between sweeps) and one sweep of the hand-written sampler run on it,
//! each carrying its own state from sweep to sweep with the same seeds
//! (the hand-written samplers draw alphac's random numbers, so both chains
//! are the same chain; `tests/handwritten_agree.rs` checks it).
//!
//! Criterion measures each pair in a group named after the program and its
//! sizes (functions `alphac` and `hand`); at the end a table prints the
//! median time per sweep of each (7 rounds of interleaved batches of about
//! 0.1 s) and the ratio alphac / hand.
//!
//! Run: `cargo bench --bench handwritten -- --warm-up-time 1 --measurement-time 3`.

#[path = "handwritten/common.rs"]
mod common;
#[path = "handwritten/coxph.rs"]
mod coxph;
#[path = "handwritten/dmm.rs"]
mod dmm;
#[path = "handwritten/gmm.rs"]
mod gmm;
#[path = "handwritten/lbp.rs"]
mod lbp;
#[path = "handwritten/lda.rs"]
mod lda;

use alphac::runtime::rng::sweep_seed;
use common::{bools, compiled, floats, generate, ints, labels, params_of};
use criterion::{criterion_group, criterion_main, Criterion};
use std::cell::RefCell;
use std::time::Instant;

/// The seed of the sweeps (`sweep_seed(SEED, s)` for sweep `s`).
const SEED: u64 = 7;

/// One row of the summary: program, sizes, median seconds per sweep.
struct Row {
    name: &'static str,
    sizes: String,
    alphac: f64,
    hand: f64,
}

thread_local! {
    static ROWS: RefCell<Vec<Row>> = const { RefCell::new(Vec::new()) };
}

/// Median seconds per call of `a` and of `b`, over 7 rounds of
/// interleaved batches of about 0.1 s each.
fn medians(a: &mut dyn FnMut(), b: &mut dyn FnMut()) -> (f64, f64) {
    let reps = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        ((0.1 / t.elapsed().as_secs_f64().max(1e-7)) as usize).clamp(1, 100_000)
    };
    let (ra, rb) = (reps(a), reps(b));
    let batch = |f: &mut dyn FnMut(), r: usize| {
        let t = Instant::now();
        for _ in 0..r {
            f();
        }
        t.elapsed().as_secs_f64() / r as f64
    };
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        ta.push(batch(a, ra));
        tb.push(batch(b, rb));
    }
    ta.sort_by(f64::total_cmp);
    tb.sort_by(f64::total_cmp);
    (ta[3], tb[3])
}

/// A criterion group `NAME SIZES` with the functions `alphac` and `hand`,
/// then the row of the summary.
fn compare(
    c: &mut Criterion,
    name: &'static str,
    values: &[(&str, i64)],
    alphac: &mut dyn FnMut(),
    hand: &mut dyn FnMut(),
) {
    let sizes = values
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut g = c.benchmark_group(format!("{name} {sizes}"));
    g.sample_size(10);
    g.bench_function("alphac", |b| b.iter(&mut *alphac));
    g.bench_function("hand", |b| b.iter(&mut *hand));
    g.finish();
    let (ta, th) = medians(alphac, hand);
    ROWS.with(|r| {
        r.borrow_mut().push(Row {
            name,
            sizes,
            alphac: ta,
            hand: th,
        })
    });
}

/// The optimized sampler `name` as a closure running one sweep on `data`.
fn jit_sweeper(
    name: &str,
    values: &[(&str, i64)],
    data: &std::collections::HashMap<String, alphac::runtime::Array>,
) -> impl FnMut() {
    let c = compiled(name, name).with_threads(Some(1));
    let mut sw = c
        .sweeper(&params_of(&c, values), data, SEED)
        .expect("sweeper");
    move || sw.sweep().expect("sweep runs")
}

/// `f(seed)` for sweep 0, 1, 2, ... (seeded as alphac's sweeps).
fn seeded(mut f: impl FnMut(u64)) -> impl FnMut() {
    let mut s = 0;
    move || {
        f(sweep_seed(SEED, s));
        s += 1;
    }
}

fn bench_gmm(c: &mut Criterion) {
    let values = [("N", 20_000), ("K", 10)];
    let k = 10;
    for name in ["gmm_gs", "gmm_mh", "gmm_lw"] {
        let data = generate(name, &values, 1);
        let x = floats(&data, "x");
        let mut jit = jit_sweeper(name, &values, &data);
        match name {
            "gmm_gs" => {
                let mut h = gmm::GmmGs::new(k, x, labels(&ints(&data, "z"), k));
                let mut hand = seeded(|s| {
                    h.sweep(s);
                    h.carry();
                });
                compare(c, name, &values, &mut jit, &mut hand);
            }
            "gmm_mh" => {
                let mut h = gmm::GmmMh::new(k, x, labels(&ints(&data, "z"), k));
                let mut hand = seeded(|s| {
                    h.sweep(s);
                    h.carry();
                });
                compare(c, name, &values, &mut jit, &mut hand);
            }
            _ => {
                let mut h = gmm::GmmLw::new(k, x);
                let mut hand = seeded(|s| h.sweep(s));
                compare(c, name, &values, &mut jit, &mut hand);
            }
        }
    }
}

fn bench_lda(c: &mut Criterion) {
    let values = [("W", 50_000), ("K", 20), ("V", 1_000), ("D", 100)];
    let (k, v, nd) = (20, 1_000, 100);
    let data = generate("lda_gs", &values, 1);
    let corpus = || lda::Corpus {
        w: labels(&ints(&data, "w"), v),
        d: labels(&ints(&data, "d"), nd),
        k,
        v,
        nd,
    };
    let z = labels(&ints(&data, "z"), k);
    {
        let mut jit = jit_sweeper("lda_gs", &values, &data);
        let mut h = lda::LdaGs::new(corpus(), z.clone());
        let mut hand = seeded(|s| {
            h.sweep(s);
            h.carry();
        });
        compare(c, "lda_gs", &values, &mut jit, &mut hand);
    }
    {
        let mut jit = jit_sweeper("lda_mh", &values, &data);
        let mut h = lda::LdaMh::new(corpus(), z);
        let mut hand = seeded(|s| {
            h.sweep(s);
            h.carry();
        });
        compare(c, "lda_mh", &values, &mut jit, &mut hand);
    }
    let mut lw_data = data.clone();
    lw_data.remove("z");
    let mut jit = jit_sweeper("lda_lw", &values, &lw_data);
    let mut h = lda::LdaLw::new(corpus());
    let mut hand = seeded(|s| h.sweep(s));
    compare(c, "lda_lw", &values, &mut jit, &mut hand);
}

fn bench_dmm(c: &mut Criterion) {
    let values = [("D", 1_000), ("A", 100), ("K", 4), ("L", 100)];
    let (a, k) = (100, 4);
    let data = generate("dmm_gs", &values, 1);
    let x = ints(&data, "X");
    let z = labels(&ints(&data, "z"), k);
    {
        let mut jit = jit_sweeper("dmm_gs", &values, &data);
        let mut h = dmm::DmmGs::new(dmm::Docs::new(a, k, &x), z.clone());
        let mut hand = seeded(|s| {
            h.sweep(s);
            h.carry();
        });
        compare(c, "dmm_gs", &values, &mut jit, &mut hand);
    }
    {
        let mut jit = jit_sweeper("dmm_mh", &values, &data);
        let mut h = dmm::DmmMh::new(dmm::Docs::new(a, k, &x), z);
        let mut hand = seeded(|s| {
            h.sweep(s);
            h.carry();
        });
        compare(c, "dmm_mh", &values, &mut jit, &mut hand);
    }
    let mut lw_data = data.clone();
    lw_data.remove("z");
    let mut jit = jit_sweeper("dmm_lw", &values, &lw_data);
    let mut h = dmm::DmmLw::new(dmm::Docs::new(a, k, &x));
    let mut hand = seeded(|s| h.sweep(s));
    compare(c, "dmm_lw", &values, &mut jit, &mut hand);
}

fn bench_lbp(c: &mut Criterion) {
    let values = [("N", 6_912), ("K", 16), ("D", 4)];
    let data = generate("lbp_stereo", &values, 1);
    let mut jit = jit_sweeper("lbp_stereo", &values, &data);
    let mut h = lbp::Lbp::new(
        16,
        4,
        floats(&data, "left"),
        floats(&data, "right"),
        ints(&data, "xs"),
        &ints(&data, "nbr"),
        &ints(&data, "rev"),
        bools(&data, "valid"),
        floats(&data, "msg"),
    );
    let mut hand = || {
        h.sweep();
        h.carry();
    };
    compare(c, "lbp_stereo", &values, &mut jit, &mut hand);
}

fn bench_coxph(c: &mut Criterion) {
    let values = [("N", 2_000), ("K", 10)];
    let data = generate("coxph", &values, 1);
    let mut jit = jit_sweeper("coxph", &values, &data);
    let mut h = coxph::Cox::new(
        10,
        floats(&data, "X"),
        &ints(&data, "event"),
        &ints(&data, "first"),
        &ints(&data, "m"),
        &ints(&data, "l"),
        floats(&data, "beta"),
    );
    // Newton converges in a few steps; both sides keep stepping from the
    // optimum (the same work per step).
    let mut hand = || {
        h.sweep();
        h.carry();
    };
    compare(c, "coxph", &values, &mut jit, &mut hand);
}

fn summary(_: &mut Criterion) {
    let ms = |s: f64| format!("{:.3} ms", s * 1e3);
    println!(
        "\n| program | sizes | alphac (JIT) per sweep | hand-written per sweep | alphac / hand |"
    );
    println!("| --- | --- | --- | --- | --- |");
    ROWS.with(|r| {
        for row in r.borrow().iter() {
            println!(
                "| {} | {} | {} | {} | {:.2}× |",
                row.name,
                row.sizes,
                ms(row.alphac),
                ms(row.hand),
                row.alphac / row.hand
            );
        }
    });
}

criterion_group!(
    handwritten,
    bench_gmm,
    bench_lda,
    bench_dmm,
    bench_lbp,
    bench_coxph,
    summary
);
criterion_main!(handwritten);
