//! The inference suite (BENCHMARKS.md): the 11 samplers of the SDR paper's
//! Section 8, each in `examples/NAME.alpha` with its generator `NAME_data`.
//!
//! For every program, on small data drawn from its own generator at
//! several seeds: the optimized native code, the unoptimized native code
//! and the reference interpreter agree draw for draw — integer and boolean
//! outputs exactly, floats to a relative 1e-9 (the optimizer may
//! reassociate sums) — over two sweeps with the state fed back; and the
//! native code is used, never the interpreter as a fallback (compiling is
//! an error otherwise).

mod common;

use alphac::compile::{self, Compiled, Options};
use alphac::interp;
use alphac::ir::VarKind;
use alphac::runtime::{rng, Array, ArrayData};
use common::{close, Tol};
use std::collections::HashMap;

/// The 11 programs with small parameter values.
pub const SUITE: [(&str, &[(&str, i64)]); 11] = [
    ("gmm_gs", &[("N", 24), ("K", 3)]),
    ("gmm_mh", &[("N", 24), ("K", 3)]),
    ("gmm_lw", &[("N", 24), ("K", 3)]),
    ("lda_gs", &[("W", 30), ("K", 3), ("V", 8), ("D", 3)]),
    ("lda_mh", &[("W", 30), ("K", 3), ("V", 8), ("D", 3)]),
    ("lda_lw", &[("W", 30), ("K", 3), ("V", 8), ("D", 3)]),
    ("dmm_gs", &[("D", 8), ("A", 5), ("K", 3), ("L", 6)]),
    ("dmm_mh", &[("D", 8), ("A", 5), ("K", 3), ("L", 6)]),
    ("dmm_lw", &[("D", 8), ("A", 5), ("K", 3), ("L", 6)]),
    ("lbp_stereo", &[("N", 30), ("K", 4), ("D", 4)]),
    ("coxph", &[("N", 12), ("K", 3)]),
];

fn source(name: &str) -> String {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn compile(src: &str, system: &str, optimize: bool) -> Compiled {
    let options = Options {
        optimize,
        system: Some(system.to_string()),
        ..Options::default()
    };
    compile::compile(src, &options)
        .unwrap_or_else(|e| panic!("{system} (optimize={optimize}): {e}"))
}

fn params_of(c: &Compiled, values: &[(&str, i64)]) -> Vec<i64> {
    let by: HashMap<String, i64> = values
        .iter()
        .filter(|(k, _)| c.system().params.iter().any(|p| p == k))
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    c.system().resolve_params(&by).unwrap()
}

/// The sampler's inputs, drawn by the file's generator.
fn generated(src: &str, name: &str, values: &[(&str, i64)], seed: u64) -> HashMap<String, Array> {
    let g = compile(src, &format!("{name}_data"), true);
    let out = g
        .run(
            &params_of(&g, values),
            &HashMap::new(),
            rng::data_seed(seed),
        )
        .unwrap_or_else(|e| panic!("{name}_data: {e}"));
    let s = compile(src, name, false);
    s.system()
        .vars
        .iter()
        .filter(|v| v.kind == VarKind::Input)
        .map(|v| {
            let a = out
                .get(&v.name)
                .unwrap_or_else(|| panic!("{name}_data does not produce {}", v.name));
            (v.name.clone(), a.clone())
        })
        .collect()
}

fn assert_close(what: &str, a: &ArrayData, b: &ArrayData) {
    match (a, b) {
        (ArrayData::Float(x), ArrayData::Float(y)) => {
            assert_eq!(x.len(), y.len(), "{what}");
            for (k, (u, v)) in x.iter().zip(y).enumerate() {
                assert!(
                    close(*u, *v, Tol::rel_or_abs(1e-9)),
                    "{what}[{k}]: {u} vs {v}"
                );
            }
        }
        _ => assert_eq!(a, b, "{what}"),
    }
}

/// Two sweeps of the three engines from the same generated state.
fn engines_agree(name: &str, values: &[(&str, i64)]) {
    let src = source(name);
    let opt = compile(&src, name, true);
    let naive = compile(&src, name, false);
    let params = params_of(&opt, values);
    for seed in [1u64, 2, 3] {
        let start = generated(&src, name, values, seed);
        let mut fast = opt.sweeper(&params, &start, seed).unwrap();
        let mut slow = naive.sweeper(&params, &start, seed).unwrap();
        let mut state = start.clone();
        for s in 0..2 {
            fast.sweep()
                .unwrap_or_else(|e| panic!("{name} optimized: {e}"));
            slow.sweep().unwrap_or_else(|e| panic!("{name} naive: {e}"));
            let want = interp::run(
                naive.program(),
                name,
                &params,
                &state,
                rng::sweep_seed(seed, s),
            )
            .unwrap_or_else(|e| panic!("{name} interpreter: {e}"));
            let (f, n) = (fast.outputs().unwrap(), slow.outputs().unwrap());
            for (var, a) in &want {
                let what = format!("{name} seed {seed} sweep {s}: {var}");
                assert_close(&format!("{what} (optimized)"), a.data(), f[var].data());
                assert_close(&format!("{what} (naive)"), a.data(), n[var].data());
            }
            let sys = naive.system();
            for sw in &sys.sweeps {
                let (i, o) = (&sys.vars[sw.input].name, &sys.vars[sw.output].name);
                state.insert(i.clone(), want[o].clone().with_name(i.clone()));
            }
        }
    }
}

macro_rules! suite {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let (_, values) = SUITE
                    .iter()
                    .find(|(n, _)| *n == stringify!($name))
                    .expect("listed in SUITE");
                engines_agree(stringify!($name), values);
            }
        )*
    };
}

suite!(gmm_gs, gmm_mh, gmm_lw, lda_gs, lda_mh, lda_lw, dmm_gs, dmm_mh, dmm_lw, lbp_stereo, coxph,);

#[test]
fn every_sampler_has_a_generator_and_a_scalar_diagnostic() {
    for (name, _) in SUITE {
        let src = source(name);
        let p = compile::parse_program(&src).unwrap_or_else(|e| panic!("{name}: {e}"));
        let s = p
            .systems
            .iter()
            .find(|s| s.name == name)
            .expect("sampler named like the file");
        assert!(
            p.systems.iter().any(|g| g.name == format!("{name}_data")),
            "{name}: no generator"
        );
        assert!(
            s.vars
                .iter()
                .any(|v| v.kind == VarKind::Output && v.domain.n_dims() == 0),
            "{name}: no scalar diagnostic output"
        );
        // Likelihood weighting carries no state; the others do.
        assert_eq!(
            s.sweeps.is_empty(),
            name.ends_with("_lw"),
            "{name}: sweep section"
        );
    }
}

/// The large samplers' native code is compiled as several functions (the
/// JIT splits a large body between top-level statements that share no
/// local, `jit::lower::parts`, and Cranelift compiles the parts on all
/// cores): the agreement tests above run that code.
#[test]
fn large_samplers_are_compiled_in_parts() {
    for name in ["lda_gs", "lda_mh", "coxph"] {
        let c = compile(&source(name), name, true);
        assert!(c.native_parts() > 1, "{name}: {} part", c.native_parts());
    }
}

/// An error in a later part stops the run and is reported as such: CoxPH's
/// risk sums read `R1[first[i], k]` and `R0[first[i]]` in its third part
/// (of five; its first computes the running sums); an out-of-range
/// `first` is a run error naming the array and the point, as the
/// interpreter's (which meets `R0`'s read first: it evaluates on demand).
#[test]
fn an_error_in_a_later_part_is_reported_like_the_interpreter() {
    let (name, values) = SUITE[10];
    assert_eq!(name, "coxph");
    let src = source(name);
    let c = compile(&src, name, true);
    assert!(c.native_parts() > 1);
    let params = params_of(&c, values);
    let mut inputs = generated(&src, name, values, 1);
    let first = inputs.get_mut("first").expect("coxph reads first");
    first.ints_mut().expect("first is an int array")[5] = 1000;
    let native = c.run(&params, &inputs, 1).expect_err("out-of-range first");
    let want = interp::run(c.program(), name, &params, &inputs, 1)
        .expect_err("the interpreter reports it too");
    let (n, w) = (native.to_string(), want.to_string());
    assert!(
        (n.contains("`R0`") || n.contains("`R1`")) && n.contains("[1000"),
        "{n}"
    );
    assert!(w.contains("R0[1000]"), "{w}");
}
