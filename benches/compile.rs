//! Compile latency: source text → callable native code (parse, check,
//! SDR optimization, scheduling, scanning, loop optimization, Cranelift),
//! uncached, for every example, with and without the optimizer.

use alphac::compile::{compile_uncached, Options};
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

const EXAMPLES: &[&str] = &[
    "prefix_sum",
    "prefix_sum_dependent",
    "prefix_max",
    "segment_sum",
    "triangle_sums",
    "matmul",
    "jacobi_1d",
    "cholesky",
    "nussinov",
    "gmm_counts",
];

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("compile");
    g.sample_size(10).measurement_time(Duration::from_secs(2));
    for name in EXAMPLES {
        let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(path).expect("example exists");
        for optimize in [false, true] {
            let opts = Options {
                optimize,
                ..Options::default()
            };
            let label = format!("{name}{}", if optimize { "/sdr" } else { "" });
            g.bench_function(label, |b| {
                b.iter(|| compile_uncached(&src, &opts).expect("compiles"))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
