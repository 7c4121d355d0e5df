//! Compile latency: source text → callable native code (parse, check,
//! reduction optimization, scheduling, scanning, loop optimization,
//! Cranelift), uncached and on a fresh thread, for every program in `examples/` (the inference
//! suite included), with and without the optimizer. Issue 13's target:
//! at most 50 ms per program, optimized.

use alphac::compile::{compile_uncached, Options};
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

// The allocator of the `alphac` binary (`src/main.rs`): compilation
// allocates many small rows and tableaux, and the latency measured here is
// the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Every `examples/*.alpha`, sorted by name.
fn examples() -> Vec<(String, String)> {
    let dir = format!("{}/examples", env!("CARGO_MANIFEST_DIR"));
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("examples/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "alpha"))
        .map(|p| {
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let src = std::fs::read_to_string(&p).expect("example is readable");
            (name, src)
        })
        .collect();
    out.sort();
    out
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("compile");
    g.sample_size(10).measurement_time(Duration::from_secs(2));
    for (name, src) in examples() {
        for optimize in [false, true] {
            let opts = Options {
                optimize,
                ..Options::default()
            };
            let label = format!("{name}{}", if optimize { "/sdr" } else { "" });
            // Each compilation on a fresh thread: the solver's per-thread
            // memos (`alphac::poly::memo`) start empty, as in a new
            // `alphac` process (a thread costs microseconds).
            g.bench_function(label, |b| {
                b.iter(|| {
                    std::thread::scope(|s| {
                        s.spawn(|| compile_uncached(&src, &opts).map(|_| ()))
                            .join()
                            .expect("no panic")
                            .expect("compiles")
                    })
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
