//! Scheduling time against the number of statements, on an unrolled
//! program (as in `sub-polyhedral-tvpi-scheduling.txt`, Figure 1): a
//! time-stepped 3-point stencil whose body is unrolled into `n` statements
//! `S_k[t, i]`, each reading `S_{k-1}[t, i-1..i+1]`, and `S_0` reading
//! `S_{n-1}[t-1, i-1..i+1]`. Both schedulers, n = 5, 10, 20, 40.
//!
//! Run: `cargo bench --bench schedule`.

use alphac::poly::solver::System;
use alphac::schedule::{schedule, Model, Scheduler};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::time::Duration;

/// Domain over (t, i, T, N): 0 <= t < T, 1 <= i <= N - 2.
fn domain() -> System {
    let mut s = System::new(4);
    s.add_ineq(vec![1, 0, 0, 0, 0]);
    s.add_ineq(vec![-1, 0, 1, 0, -1]);
    s.add_ineq(vec![0, 1, 0, 0, -1]);
    s.add_ineq(vec![0, -1, 0, 1, -2]);
    s
}

/// Piece `S[t0, i0] -> T[t, i]` with `t = t0 + dt`, `i = i0 + di`, over
/// `(t0, i0, t, i, T, N)`.
fn uniform(dt: i64, di: i64) -> System {
    let mut s = System::new(6);
    s.add_eq(vec![-1, 0, 1, 0, 0, 0, -dt]);
    s.add_eq(vec![0, -1, 0, 1, 0, 0, -di]);
    s
}

/// The unrolled stencil with `n` statements.
pub fn unrolled_stencil(n: usize) -> Model {
    let mut m = Model::new(2);
    for k in 0..n {
        m.add_statement(&format!("S{k}"), 2, domain());
    }
    for k in 0..n {
        let (src, dt) = if k == 0 { (n - 1, 1) } else { (k - 1, 0) };
        for di in -1..=1 {
            m.add_dep(src, k, uniform(dt, di));
        }
    }
    m
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("schedule_unrolled_stencil");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(5));
    for n in [5usize, 10, 20, 40] {
        let m = unrolled_stencil(n);
        for (name, which) in [
            ("feautrier", Scheduler::Feautrier),
            ("pluto", Scheduler::Pluto),
        ] {
            g.bench_with_input(BenchmarkId::new(name, n), &m, |b, m| {
                b.iter(|| schedule(m, which).expect("the unrolled stencil is schedulable"))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
