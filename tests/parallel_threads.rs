//! Parallel loops (issue 16): for every system of every example
//! (`examples/*.alpha`, optimized and not), one thread and four threads
//! give bit-identical outputs over two sweeps, random draws included, and
//! the same error when a run fails. Every parallel loop is split into
//! chunks whatever its work (`jit::parallel::SplitMode`), and in a second
//! pass the chunks run from the last to the first, so that a dependence
//! between iterations that a wrong mark let through changes the results
//! deterministically rather than by a race.

use alphac::compile::{self, Compiled, Options};
use alphac::interp;
use alphac::ir::VarKind;
use alphac::jit::parallel::{set_split_mode, split_runs, SplitMode};
use alphac::runtime::{rng, Array, ArrayData};
use std::collections::HashMap;
use std::sync::Mutex;

/// The split mode is process-wide: the tests of this file take turns.
static MODE: Mutex<()> = Mutex::new(());

/// Small parameter values by name (every example's context holds).
fn param_value(name: &str) -> i64 {
    match name {
        "N" => 12,
        "K" => 4,
        "D" => 4,
        "W" => 20,
        "V" => 6,
        "A" => 5,
        "L" => 5,
        "P" => 5,
        "Q" => 6,
        "R" => 7,
        "T" => 5,
        _ => 6,
    }
}

fn examples() -> Vec<(String, String)> {
    let dir = format!("{}/examples", env!("CARGO_MANIFEST_DIR"));
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "alpha"))
        .map(|p| {
            let name = p
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            let src = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
            (name, src)
        })
        .collect();
    out.sort();
    out
}

fn compile(src: &str, system: &str, optimize: bool) -> Option<Compiled> {
    let options = Options {
        optimize,
        system: Some(system.to_string()),
        ..Options::default()
    };
    match compile::compile(src, &options) {
        Ok(c) => Some(c),
        // A system the code generator does not support runs on the
        // interpreter only: nothing to compare.
        Err(compile::CompileError::Scan(alphac::codegen::scan::ScanError::Unsupported(_))) => None,
        Err(e) => panic!("{system} (optimize={optimize}): {e}"),
    }
}

fn params_of(c: &Compiled) -> Vec<i64> {
    c.system().params.iter().map(|p| param_value(p)).collect()
}

/// Inputs of `system`: from its generator `<system>_data` when the file
/// has one (run on one thread), else seeded values (floats in [0, 1),
/// ints in [0, 4), bools).
fn inputs(src: &str, c: &Compiled, seed: u64) -> HashMap<String, Array> {
    let sys = c.system();
    let params = params_of(c);
    let gen_name = format!("{}_data", sys.name);
    let has_generator = compile::parse_program(src)
        .map(|p| p.systems.iter().any(|s| s.name == gen_name))
        .unwrap_or(false);
    let generated = has_generator
        .then(|| compile(src, &gen_name, true))
        .flatten()
        .and_then(|g| {
            let g = g.with_threads(Some(1));
            g.run(&params_of(&g), &HashMap::new(), rng::data_seed(seed))
                .ok()
        });
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = HashMap::new();
    for v in sys.vars.iter().filter(|v| v.kind == VarKind::Input) {
        if let Some(a) = generated.as_ref().and_then(|g| g.get(&v.name)) {
            out.insert(v.name.clone(), a.clone());
            continue;
        }
        let spec = interp::array_spec(v, &params).expect("a spec");
        let n = spec.len().expect("small");
        let data = match v.ty {
            alphac::ir::types::ElemType::Float => ArrayData::Float(
                (0..n)
                    .map(|_| (next() >> 11) as f64 / (1u64 << 53) as f64)
                    .collect(),
            ),
            alphac::ir::types::ElemType::Int => {
                ArrayData::Int((0..n).map(|_| (next() % 4) as i64).collect())
            }
            alphac::ir::types::ElemType::Bool => {
                ArrayData::Bool((0..n).map(|_| next() % 2 == 0).collect())
            }
        };
        out.insert(
            v.name.clone(),
            Array::from_data(&spec, data).expect("an array"),
        );
    }
    out
}

/// Outputs of two sweeps (or the error), with floats as bits.
fn two_sweeps(
    c: &Compiled,
    start: &HashMap<String, Array>,
    seed: u64,
) -> Result<Vec<(String, Vec<u64>)>, String> {
    let mut sw = c
        .sweeper(&params_of(c), start, seed)
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for s in 0..2 {
        sw.sweep().map_err(|e| format!("sweep {s}: {e}"))?;
        let mut outputs: Vec<(String, Array)> = sw
            .outputs()
            .map_err(|e| e.to_string())?
            .into_iter()
            .collect();
        outputs.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, a) in outputs {
            let bits = match a.data() {
                ArrayData::Float(v) => v.iter().map(|x| x.to_bits()).collect(),
                ArrayData::Int(v) => v.iter().map(|&x| x as u64).collect(),
                ArrayData::Bool(v) => v.iter().map(|&x| u64::from(x)).collect(),
            };
            out.push((format!("{name} after sweep {s}"), bits));
        }
    }
    Ok(out)
}

/// Every system of every example, one thread against four, in `mode`;
/// returns how many (system, optimize) pairs have parallel loops.
fn all_examples_agree(mode: SplitMode) -> usize {
    let _turn = MODE.lock().unwrap_or_else(|p| p.into_inner());
    set_split_mode(mode);
    let mut with_parallel = 0;
    for (file, src) in examples() {
        let program = compile::parse_program(&src).unwrap_or_else(|e| panic!("{file}: {e}"));
        for sys in &program.systems {
            for optimize in [true, false] {
                let Some(c) = compile(&src, &sys.name, optimize) else {
                    continue;
                };
                if c.parallel_loops() > 0 {
                    with_parallel += 1;
                }
                for seed in [1u64, 2] {
                    let start = inputs(&src, &c, seed);
                    let one = two_sweeps(&c.clone().with_threads(Some(1)), &start, seed);
                    let before = split_runs();
                    let four = two_sweeps(&c.clone().with_threads(Some(4)), &start, seed);
                    if c.parallel_loops() > 0 && one.is_ok() {
                        assert!(
                            split_runs() > before,
                            "{file} {} (optimize={optimize}): no loop was split",
                            sys.name
                        );
                    }
                    match (&one, &four) {
                        (Ok(a), Ok(b)) => {
                            assert_eq!(a.len(), b.len());
                            for ((n1, x), (_, y)) in a.iter().zip(b) {
                                assert!(
                                    x == y,
                                    "{file} {} (optimize={optimize}, seed {seed}): {n1} differs \
                                     between 1 and 4 threads",
                                    sys.name
                                );
                            }
                        }
                        _ => assert_eq!(
                            one.as_ref().err(),
                            four.as_ref().err(),
                            "{file} {} (optimize={optimize}, seed {seed})",
                            sys.name
                        ),
                    }
                }
            }
        }
    }
    set_split_mode(SplitMode::WhenItPays);
    with_parallel
}

#[test]
fn one_and_four_threads_agree_bit_for_bit() {
    let n = all_examples_agree(SplitMode::Always);
    // The inference programs, their generators and the kernels have
    // parallel loops.
    assert!(n >= 30, "only {n} compiled systems have parallel loops");
}

#[test]
fn chunks_in_reverse_order_agree_bit_for_bit() {
    all_examples_agree(SplitMode::AlwaysReversed);
}

/// The loops that must run in parallel do, in the programs issue 16
/// names: LBP's per-pixel loops (inside the sequential slot loop too),
/// CoxPH's per-subject and per-covariate loops.
#[test]
fn the_expected_loops_are_marked() {
    let src = |n: &str| {
        std::fs::read_to_string(format!("{}/examples/{n}.alpha", env!("CARGO_MANIFEST_DIR")))
            .expect("the example")
    };
    let lbp = compile::emit(
        &compile::parse_program(&src("lbp_stereo")).expect("parses"),
        "lbp_stereo",
        &Options::default(),
    )
    .expect("emits");
    // Every loop over the pixels but the energy's two (sums into one
    // scalar) is marked. The passes of one pixel are fused
    // (`codegen::opt::fuse_loops`), and the loop over the slots runs
    // inside the pixel loop (`codegen::opt::interchange_for_reuse`), so
    // the marked pixel loop holds the slot loop.
    let pixel_loops = lbp.lines().filter(|l| l.contains("<= N - 1; ")).count();
    let marked = lbp
        .lines()
        .zip(lbp.lines().skip(1))
        .filter(|(a, b)| a.trim() == "#pragma parallel" && b.contains("<= N - 1; "))
        .count();
    assert!(
        marked >= 4 && marked + 2 == pixel_loops,
        "{marked} of {pixel_loops} pixel loops marked:\n{lbp}"
    );
    let slots = lbp
        .lines()
        .position(|l| l.contains("<= D - 1; ") && l.trim_start().starts_with("for ("))
        .expect("the slot loop");
    let lines: Vec<&str> = lbp.lines().collect();
    let around = lines[..slots]
        .iter()
        .rposition(|l| l.starts_with("  for ("))
        .expect("a loop around the slots");
    assert!(
        lines[around].contains("<= N - 1; ") && lines[around - 1].trim() == "#pragma parallel",
        "the pixel loop around the slot loop is marked:\n{lbp}"
    );
    let energy = lbp
        .lines()
        .position(|l| l.contains("energy_red2_acc = (energy_red2_acc"))
        .expect("the energy sum");
    assert!(
        !lines[energy - 3].contains("#pragma parallel"),
        "the energy's sum is not parallel:\n{lbp}"
    );
    let cox = compile(&src("coxph"), "coxph", true).expect("compiles");
    assert!(cox.parallel_loops() >= 10, "{}", cox.parallel_loops());
}
