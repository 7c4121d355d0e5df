//! Sweeps: a sampler run again and again on its own state (`sweep z <- znew`),
//! through the library (`Compiled::sweeper`) and the command line
//! (`alphac run --sweeps N --trace FILE`).
//!
//! What must hold: a [`Sweeper`]'s sweeps equal fresh runs with the outputs
//! fed back by hand and sweep `s` seeded with `sweep_seed(seed, s)`; one
//! sweep is one run; `a + b` sweeps equal `a` sweeps and `b` more resumed
//! from the saved state; the interpreter's sweeps equal the JIT's; the
//! trace holds every scalar output of every sweep.

use alphac::compile::{self, Compiled, Options, Sweeper};
use alphac::runtime::{rng, Array, Scalar};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

const GMM: &str = include_str!("../examples/gmm_gs.alpha");

fn compiled(system: &str) -> Compiled {
    let options = Options {
        system: Some(system.to_string()),
        ..Options::default()
    };
    compile::compile(GMM, &options).unwrap_or_else(|e| panic!("{e}"))
}

/// GMM data and an initial labelling from the file's generator.
fn data(n: i64, k: i64, seed: u64) -> HashMap<String, Array> {
    let g = compiled("gmm_gs_data");
    let out = g
        .run(&[n, k], &HashMap::new(), rng::data_seed(seed))
        .unwrap();
    ["x", "z"]
        .iter()
        .map(|name| (name.to_string(), out[*name].clone()))
        .collect()
}

fn assert_same(a: &HashMap<String, Array>, b: &HashMap<String, Array>) {
    assert_eq!(a.len(), b.len());
    for (name, x) in a {
        assert_eq!(x.data(), b[name].data(), "{name}");
    }
}

#[test]
fn sweeps_equal_runs_with_the_state_fed_back() {
    let c = compiled("gmm_gs");
    let (n, k, seed) = (40, 3, 7);
    let start = data(n, k, seed);
    let mut sweeper = c.sweeper(&[n, k], &start, seed).unwrap();
    let trace = sweeper.run(6, |_, _| {}).unwrap();
    let mut state = start.clone();
    let mut last = HashMap::new();
    let mut logp = Vec::new();
    for s in 0..6 {
        last = c.run(&[n, k], &state, rng::sweep_seed(seed, s)).unwrap();
        state.insert("z".into(), last["znew"].clone().with_name("z"));
        logp.push(last["logp"].get(&[]).unwrap());
    }
    assert_same(&sweeper.outputs().unwrap(), &last);
    assert_same(&sweeper.state().unwrap(), &state);
    assert_eq!(trace.names, vec!["logp".to_string()]);
    let rows: Vec<(u64, Vec<Scalar>)> = logp
        .into_iter()
        .enumerate()
        .map(|(s, v)| (s as u64, vec![v]))
        .collect();
    assert_eq!(trace.rows, rows);
    // The labels moved: a sweep is not the identity.
    assert_ne!(start["z"].data(), state["z"].data());
}

/// Inputs given by value move into the native code's buffers when their
/// boxes agree (no copy); the results are those of borrowed inputs, for a
/// box-shaped domain, a triangular one (points of the box outside the
/// domain must read as zero, not as what the caller left there) and a
/// domain whose box does not start at 0.
#[test]
fn owned_inputs_give_the_results_of_borrowed_ones() {
    let c = compiled("gmm_gs");
    let (n, k, seed) = (40, 3, 11);
    let start = data(n, k, seed);
    let borrowed = c.run(&[n, k], &start, seed).unwrap();
    let owned = c.run_owned(&[n, k], start.clone(), seed).unwrap();
    assert_same(&borrowed, &owned);
    let mut a = c.sweeper(&[n, k], &start, seed).unwrap();
    let mut b = c.sweeper_owned(&[n, k], start.clone(), seed).unwrap();
    let (ta, tb) = (a.run(4, |_, _| {}).unwrap(), b.run(4, |_, _| {}).unwrap());
    assert_eq!(ta, tb);
    assert_same(&a.state().unwrap(), &b.state().unwrap());

    let src = "affine tri [N] -> { : N > 1 }
    inputs
        A : {[i, j] : 0 <= j <= i < N};
        B : {[i] : 1 <= i <= N};
    outputs
        S : [N];
        T : {[i] : 1 <= i <= N};
    let
        S[i] = reduce(+, [j], {: 0 <= j <= i} : A[i, j]);
        T[i] = B[i] * 2.0;
.";
    let c = compile::compile(src, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let n = 5i64;
    let sys = c.system().clone();
    let spec_a = alphac::runtime::ArraySpec::of_domain(
        "A",
        alphac::vocab::ElemType::Float,
        &sys.vars[sys.var_by_name("A").unwrap()].domain,
        &[n],
    )
    .unwrap();
    let spec_b = alphac::runtime::ArraySpec::of_domain(
        "B",
        alphac::vocab::ElemType::Float,
        &sys.vars[sys.var_by_name("B").unwrap()].domain,
        &[n],
    )
    .unwrap();
    assert_eq!(spec_b.lo, vec![1]);
    // Every cell of the box holds 1000 + its offset, those above the
    // diagonal included (they are not A's: no path may read them).
    let cells: Vec<f64> = (0..25).map(|x| 1000.0 + f64::from(x)).collect();
    let a = Array::from_data(&spec_a, alphac::runtime::ArrayData::Float(cells)).unwrap();
    let b = Array::from_data(
        &spec_b,
        alphac::runtime::ArrayData::Float(vec![1.0, 2.0, 3.0, 4.0, 5.0]),
    )
    .unwrap()
    .with_lo(vec![0]);
    let inputs: HashMap<String, Array> = [("A".to_string(), a), ("B".to_string(), b)].into();
    let borrowed = c.run(&[n], &inputs, 0).unwrap();
    let owned = c.run_owned(&[n], inputs, 0).unwrap();
    assert_same(&borrowed, &owned);
    let s = owned["S"].data().as_float().unwrap().to_vec();
    let expected: Vec<f64> = (0..5)
        .map(|i| (0..=i).map(|j| 1000.0 + f64::from(i * 5 + j)).sum())
        .collect();
    assert_eq!(s, expected);
    assert_eq!(
        owned["T"].data().as_float().unwrap(),
        &[2.0, 4.0, 6.0, 8.0, 10.0]
    );
}

#[test]
fn one_sweep_is_one_run() {
    let c = compiled("gmm_gs");
    let start = data(30, 4, 3);
    let mut sweeper = c.sweeper(&[30, 4], &start, 3).unwrap();
    sweeper.sweep().unwrap();
    assert_same(
        &sweeper.outputs().unwrap(),
        &c.run(&[30, 4], &start, 3).unwrap(),
    );
}

#[test]
fn a_resumed_run_equals_an_uninterrupted_one() {
    let c = compiled("gmm_gs");
    let (n, k, seed) = (50, 3, 11);
    let start = data(n, k, seed);
    let mut whole = c.sweeper(&[n, k], &start, seed).unwrap();
    let t_whole = whole.run(8, |_, _| {}).unwrap();

    let mut first: Sweeper = c.sweeper(&[n, k], &start, seed).unwrap();
    let t1 = first.run(5, |_, _| {}).unwrap();
    let saved = first.state().unwrap();
    let mut second = c.sweeper(&[n, k], &saved, seed).unwrap().starting_at(5);
    let t2 = second.run(3, |_, _| {}).unwrap();

    assert_same(&whole.outputs().unwrap(), &second.outputs().unwrap());
    assert_same(&whole.state().unwrap(), &second.state().unwrap());
    let joined: Vec<_> = t1.rows.iter().chain(&t2.rows).cloned().collect();
    assert_eq!(t_whole.rows, joined);
    assert_eq!(t_whole.rows.last().map(|r| r.0), Some(7));
}

#[test]
fn sweep_seeds_are_distinct_and_the_first_is_the_seed() {
    assert_eq!(rng::sweep_seed(42, 0), 42);
    let seeds: std::collections::HashSet<u64> = (0..1000).map(|s| rng::sweep_seed(42, s)).collect();
    assert_eq!(seeds.len(), 1000);
    assert_ne!(rng::data_seed(42), 42);
}

#[test]
fn the_trace_csv_reads_back_exactly() {
    let c = compiled("gmm_gs");
    let start = data(20, 2, 5);
    let mut sweeper = c.sweeper(&[20, 2], &start, 5).unwrap();
    let trace = sweeper.run(3, |_, _| {}).unwrap();
    let csv = trace.to_csv();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("sweep,logp"));
    let col = trace.column("logp").unwrap();
    for (s, line) in lines.enumerate() {
        let (sweep, v) = line.split_once(',').unwrap();
        assert_eq!(sweep.parse::<usize>().unwrap(), s);
        assert_eq!(v.parse::<f64>().unwrap().to_bits(), col[s].to_bits());
    }
}

// ---------------------------------------------------------------- CLI

fn alphac(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_alphac"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the alphac binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("alphac-sweeps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

const RUN: [&str; 10] = [
    "run",
    "examples/gmm_gs.alpha",
    "--param",
    "N=40",
    "--param",
    "K=3",
    "--generate-inputs",
    "--seed",
    "4",
    "--quiet",
];

#[test]
fn cli_sweeps_agree_between_the_jit_and_the_interpreter() {
    let (t_jit, t_interp) = (tmp("jit.csv"), tmp("interp.csv"));
    let mut jit = RUN.to_vec();
    jit.extend(["--sweeps", "4", "--trace", t_jit.to_str().unwrap()]);
    let (code, out_jit, err) = alphac(&jit);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "--quiet prints nothing on stderr: {err}");
    let mut interp = RUN.to_vec();
    interp.extend([
        "--sweeps",
        "4",
        "--interp",
        "--trace",
        t_interp.to_str().unwrap(),
    ]);
    let (code, out_interp, err) = alphac(&interp);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out_jit, out_interp);
    let csv = std::fs::read_to_string(&t_jit).unwrap();
    assert_eq!(csv, std::fs::read_to_string(&t_interp).unwrap());
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(csv.starts_with("sweep,logp\n0,"), "{csv}");
}

#[test]
fn cli_one_sweep_is_the_plain_run_and_timing_goes_to_stderr() {
    let (code, plain, _) = alphac(&RUN);
    assert_eq!(code, 0);
    let mut one: Vec<&str> = RUN[..9].to_vec();
    one.extend(["--sweeps", "1"]);
    let (code, swept, err) = alphac(&one);
    assert_eq!(code, 0, "{err}");
    assert_eq!(plain, swept);
    assert!(
        err.contains("gmm_gs: O(N^2*K) -> O(N*K) per sweep"),
        "{err}"
    );
    assert!(
        err.contains("1 sweep in") && err.contains("ms per sweep"),
        "{err}"
    );
}

#[test]
fn cli_resumed_sweeps_equal_uninterrupted_ones() {
    let (whole, half, resumed) = (tmp("whole.npy"), tmp("half.npy"), tmp("resumed.npy"));
    let mut a = RUN.to_vec();
    let w = format!("znew={}", whole.display());
    a.extend(["--sweeps", "6", "--output", &w]);
    assert_eq!(alphac(&a).0, 0);
    let mut b = RUN.to_vec();
    let h = format!("znew={}", half.display());
    b.extend(["--sweeps", "3", "--output", &h]);
    assert_eq!(alphac(&b).0, 0);
    let mut c = RUN.to_vec();
    let z = format!("z={}", half.display());
    let r = format!("znew={}", resumed.display());
    c.extend([
        "--input",
        &z,
        "--sweeps",
        "3",
        "--first-sweep",
        "3",
        "--output",
        &r,
    ]);
    let (code, _, err) = alphac(&c);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(&whole).unwrap(),
        std::fs::read(&resumed).unwrap()
    );
    assert_ne!(
        std::fs::read(&whole).unwrap(),
        std::fs::read(&half).unwrap()
    );
}

#[test]
fn cli_trace_without_sweeps_is_a_user_error() {
    let mut a = RUN.to_vec();
    a.extend(["--trace", "x.csv"]);
    let (code, _, err) = alphac(&a);
    assert_eq!(code, 1);
    assert!(err.contains("--sweeps"), "{err}");
}

#[test]
fn cli_generated_data_come_from_the_generator_system() {
    // `--generate-inputs --seed S` runs `gmm_gs_data` with the data seed of
    // S and passes its outputs x and z to gmm_gs.
    let (x, z) = (tmp("gen_x.npy"), tmp("gen_z.npy"));
    let data_seed = rng::data_seed(4).to_string();
    let (ox, oz) = (format!("x={}", x.display()), format!("z={}", z.display()));
    let gen = [
        "run",
        "examples/gmm_gs.alpha",
        "--system",
        "gmm_gs_data",
        "--param",
        "N=40",
        "--param",
        "K=3",
        "--seed",
        &data_seed,
        "--output",
        &ox,
        "--output",
        &oz,
    ];
    let (code, _, err) = alphac(&gen);
    assert_eq!(code, 0, "{err}");
    let (ix, iz) = (format!("x={}", x.display()), format!("z={}", z.display()));
    let given = [
        "run",
        "examples/gmm_gs.alpha",
        "--param",
        "N=40",
        "--param",
        "K=3",
        "--seed",
        "4",
        "--input",
        &ix,
        "--input",
        &iz,
    ];
    let (code, from_files, err) = alphac(&given);
    assert_eq!(code, 0, "{err}");
    let (code, generated, err) = alphac(&RUN);
    assert_eq!(code, 0, "{err}");
    assert_eq!(from_files, generated);
    // A parameter no system declares is an error naming it.
    let mut bad = RUN.to_vec();
    bad.extend(["--param", "Q=3"]);
    let (code, _, err) = alphac(&bad);
    assert_eq!(code, 1);
    assert!(err.contains("Q is not a parameter"), "{err}");
}
