//! Benchmarks of the exact solver on scheduling-sized systems: about 25
//! variables and 200 constraints (Farkas-like: nonnegative variables, sparse
//! rows with small coefficients, a few equalities), generated from a fixed
//! seed so that runs are comparable.
//!
//! Run: `cargo bench --bench poly_solver -- --warm-up-time 1 --measurement-time 3`

use alphac::poly::solver::{
    implicit_equalities, integer_lexmin, integer_sample, rational_min, redundant_ineqs,
    with_work_budget, Optimum, System,
};
use criterion::{black_box, criterion_group, Criterion};

/// xorshift64*: a tiny deterministic generator (no dependency needed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % ((hi - lo + 1) as u64)) as i64
    }
}

const N: usize = 25;

/// A non-empty system: `x >= 0`, `Σ x <= 200`, 5 sparse equalities and
/// 169 sparse inequalities, all satisfied by a hidden integer point.
fn feasible_system(seed: u64) -> (System, Vec<i64>) {
    let mut rng = Rng(seed);
    let xs: Vec<i64> = (0..N).map(|_| rng.range(0, 4)).collect();
    let mut s = System::new(N);
    for k in 0..N {
        let mut r = vec![0; N + 1];
        r[k] = 1;
        s.add_ineq(r);
    }
    let mut r = vec![-1; N + 1];
    r[N] = 200;
    s.add_ineq(r);
    let sparse = |rng: &mut Rng| {
        let mut r = vec![0i64; N + 1];
        let nnz = rng.range(3, 5);
        for _ in 0..nnz {
            let k = rng.range(0, N as i64 - 1) as usize;
            r[k] = rng.range(-3, 3);
        }
        let dot: i64 = (0..N).map(|k| r[k] * xs[k]).sum();
        r[N] = -dot;
        r
    };
    for _ in 0..5 {
        let r = sparse(&mut rng);
        s.add_eq(r);
    }
    for _ in 0..169 {
        let mut r = sparse(&mut rng);
        r[N] += rng.range(0, 3);
        s.add_ineq(r);
    }
    (s, xs)
}

/// Rationally non-empty but integer-empty: adds `2 x0 + 2 x1 = 2c + 1`.
fn parity_infeasible(seed: u64) -> System {
    let (mut s, xs) = feasible_system(seed);
    let c = xs[0] + xs[1];
    let mut r = vec![0; N + 1];
    r[0] = 2;
    r[1] = 2;
    r[N] = -(2 * c + 1);
    s.add_ineq(r.clone());
    s.add_ineq(r.iter().map(|v| -v).collect());
    s
}

/// Rationally empty: `Σ x <= -1` with `x >= 0`.
fn rational_infeasible(seed: u64) -> System {
    let (mut s, _) = feasible_system(seed);
    let mut r = vec![-1; N + 1];
    r[N] = -1;
    s.add_ineq(r);
    s
}

fn unit(k: usize) -> Vec<i64> {
    let mut r = vec![0; N + 1];
    r[k] = 1;
    r
}

fn bench(c: &mut Criterion) {
    let (feas, _) = feasible_system(0x5eed_0001);
    assert!(integer_sample(&feas).unwrap().is_some());
    let par = parity_infeasible(0x5eed_0001);
    assert!(integer_sample(&par).unwrap().is_none());
    let rinf = rational_infeasible(0x5eed_0001);
    let lex: Vec<Vec<i64>> = (0..N).map(unit).collect();
    let mut sum_then_lex = vec![{
        let mut r = vec![1; N + 1];
        r[N] = 0;
        r
    }];
    sum_then_lex.extend((0..3).map(unit));
    assert!(matches!(
        integer_lexmin(&feas, &lex).unwrap(),
        Optimum::Value(_)
    ));

    c.bench_function("rational_min 25x200", |b| {
        b.iter(|| rational_min(black_box(&feas), &sum_then_lex[0]).unwrap())
    });
    c.bench_function("integer_sample feasible 25x200", |b| {
        b.iter(|| sample_uncached(black_box(&feas)))
    });
    c.bench_function("integer_sample parity-empty 25x200", |b| {
        b.iter(|| sample_uncached(black_box(&par)))
    });
    c.bench_function("integer_sample rationally-empty 25x200", |b| {
        b.iter(|| sample_uncached(black_box(&rinf)))
    });
    c.bench_function("integer_lexmin sum,x0..x2 25x200", |b| {
        b.iter(|| integer_lexmin(black_box(&feas), &sum_then_lex).unwrap())
    });
    c.bench_function("integer_lexmin x0..x24 25x200", |b| {
        b.iter(|| integer_lexmin(black_box(&feas), &lex).unwrap())
    });
    c.bench_function("implicit_equalities 25x200", |b| {
        b.iter(|| implicit_equalities(black_box(&feas)).unwrap())
    });
    c.bench_function("redundant_ineqs 25x200", |b| {
        b.iter(|| redundant_ineqs(black_box(&feas)).unwrap())
    });
    // A sliver thin along a diagonal (4 variables): coordinate branching
    // creeps along it (2,448 levels before it gave up on its budget); the
    // sampler hands over to the search along a reduced basis. With and
    // without an integer point.
    let (sliver, lattice_free) = (thin_sliver(2000), thin_sliver(97));
    assert!(integer_sample(&sliver).unwrap().is_some());
    assert!(integer_sample(&lattice_free).unwrap().is_none());
    c.bench_function("integer_sample thin sliver 4 vars", |b| {
        b.iter(|| sample_uncached(black_box(&sliver)))
    });
    c.bench_function("integer_sample thin lattice-free 4 vars", |b| {
        b.iter(|| sample_uncached(black_box(&lattice_free)))
    });
}

/// [`integer_sample`] past its memo (which answers a repeated system from
/// a table, outside work-budget scopes): inside a scope with a budget no
/// query reaches, every call solves.
fn sample_uncached(s: &System) -> Option<Vec<i64>> {
    with_work_budget(u64::MAX, || integer_sample(s)).0.unwrap()
}

/// `{x : the rows below, x0 + x1 + x3 <= m}`: unbounded without the last
/// row, thin along `x0 + x1 + x3` (whose integer minimum is 98 and
/// rational minimum 260/3), so the set has no integer point for `m < 98`.
fn thin_sliver(m: i64) -> System {
    let mut s = System::new(4);
    for row in [
        [2, -3, 2, 0, 4],
        [-3, 0, 3, 0, -5],
        [3, 1, -3, -2, -7],
        [3, -1, -3, 3, 2],
        [-1, -1, 0, -1, m],
    ] {
        s.add_ineq(row.to_vec());
    }
    s
}

/// With `SOLVER_STATS=1`, print pivot and fallback counts and wall times
/// per query instead of benchmarking.
fn stats() {
    use alphac::poly::solver::stats::{DEEP_SEARCHES, FALLBACKS, PIVOTS};
    use std::sync::atomic::Ordering::Relaxed;
    let (feas, _) = feasible_system(0x5eed_0001);
    let par = parity_infeasible(0x5eed_0001);
    let rinf = rational_infeasible(0x5eed_0001);
    let lex: Vec<Vec<i64>> = (0..N).map(unit).collect();
    let mut sum = vec![1; N + 1];
    sum[N] = 0;
    // CPU time of this process (user + system, clock ticks of 10 ms) from
    // /proc/self/stat: unlike wall time, not inflated by other processes.
    fn cpu_ticks() -> Option<u64> {
        let st = std::fs::read_to_string("/proc/self/stat").ok()?;
        let rest = &st[st.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
    }
    let run = |name: &str, f: &dyn Fn()| {
        PIVOTS.store(0, Relaxed);
        FALLBACKS.store(0, Relaxed);
        DEEP_SEARCHES.store(0, Relaxed);
        let t = std::time::Instant::now();
        f();
        let wall = t.elapsed();
        let (pivots, fallbacks) = (PIVOTS.load(Relaxed), FALLBACKS.load(Relaxed));
        let deep = DEEP_SEARCHES.load(Relaxed);
        // Repeat to measure CPU time per call.
        let reps = 40u64;
        let c0 = cpu_ticks();
        for _ in 0..reps {
            f();
        }
        let cpu_ms = match (c0, cpu_ticks()) {
            (Some(a), Some(b)) => format!("{:.2} ms", (b - a) as f64 * 10.0 / reps as f64),
            _ => "n/a".to_string(),
        };
        println!(
            "{name}: wall {wall:?} (first call), cpu {cpu_ms}/call, {pivots} pivots, {fallbacks} fallbacks, {deep} deep searches"
        );
    };
    run("rational_min", &|| {
        rational_min(&feas, &sum).unwrap();
    });
    run("sample feasible", &|| {
        integer_sample(&feas).unwrap();
    });
    run("sample parity", &|| {
        integer_sample(&par).unwrap();
    });
    run("sample rinf", &|| {
        integer_sample(&rinf).unwrap();
    });
    run("lexmin", &|| {
        integer_lexmin(&feas, &lex).unwrap();
    });
    run("implicit", &|| {
        implicit_equalities(&feas).unwrap();
    });
    run("redundant", &|| {
        redundant_ineqs(&feas).unwrap();
    });
    let sliver = thin_sliver(2000);
    run("sample thin sliver", &|| {
        integer_sample(&sliver).unwrap();
    });
}

criterion_group!(benches, bench);

fn main() {
    if std::env::var_os("SOLVER_STATS").is_some() {
        stats();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
