//! `alphac run`: parameters, inputs (from files, or drawn by the file's
//! generator system), one run or many sweeps, the trace, and the outputs.
//!
//! Owns the command's behaviour; the work is done by the library
//! (`compile::Compiled`, `compile::Sweeper`, `interp`).

use super::{compile_error, split_assignment, CliError};
use crate::compile::{Compiled, Options, Trace};
use crate::interp;
use crate::ir::{self, Program, VarKind};
use crate::runtime::{data, rng, Array, Scalar};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Loading and reading back arrays that take at least this long (in
/// seconds) are reported after the sweeps' time.
const SETUP_SHOWN: f64 = 0.1;

// What `alphac run` was asked to do (the command's arguments; the
// command's description is its variant's, in `cli::Command`).
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The `.alpha` file.
    pub file: PathBuf,
    /// The system to run (default: the one named like the file, else the
    /// only one, else the last one).
    #[arg(long)]
    pub system: Option<String>,
    /// A parameter value, `NAME=VALUE` (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// An input array, `NAME=FILE.npy` or `NAME=FILE.csv` (repeatable).
    #[arg(long = "input", value_name = "NAME=FILE")]
    pub inputs: Vec<String>,
    /// Where to write an output, `NAME=FILE.npy` or `NAME=FILE.csv`
    /// (repeatable); outputs not named are printed.
    #[arg(long = "output", value_name = "NAME=FILE")]
    pub outputs: Vec<String>,
    /// Generate every input that is not given with `--input`: run the
    /// file's generator system `<SYSTEM>_data` (data drawn from the
    /// model), or, without one, seeded uniform values (floats in
    /// [0, 1), ints in [0, 10), bools).
    #[arg(long)]
    pub generate_inputs: bool,
    /// Seed of the random draws and of generated inputs.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Use the reference interpreter instead of the JIT.
    #[arg(long)]
    pub interp: bool,
    /// Run the program as written, without simplifying its reductions.
    #[arg(long)]
    pub no_optimize: bool,
    /// Run N sweeps: each sweep's outputs named in the system's
    /// `sweep IN <- OUT` declarations are the next sweep's inputs.
    /// Prints the outputs of the last sweep.
    #[arg(long, value_name = "N")]
    pub sweeps: Option<u64>,
    /// Number of the first sweep (to resume a run from its saved
    /// state: sweep S draws from a stream derived from the seed and S).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub first_sweep: u64,
    /// Write every scalar output of every sweep to a CSV file.
    #[arg(long, value_name = "FILE.csv")]
    pub trace: Option<PathBuf>,
    /// No progress bar and no timing lines.
    #[arg(long, short)]
    pub quiet: bool,
    /// After the run, print on standard error the bytes each array of
    /// the native code allocates for these parameters, and the total
    /// (with, for a local stored in fewer cells, what its whole box
    /// would take).
    #[arg(long)]
    pub stats: bool,
    /// Threads for the loops the compiler proves parallel (marked
    /// `#pragma parallel` by `alphac emit`); default: all cores. Results
    /// are identical for every number of threads, draws included.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,
}

/// The system `alphac run` runs by default: the named one; else the one
/// named like the file (`gmm_gs` in `gmm_gs.alpha`); else the last one.
pub fn default_system<'a>(
    program: &'a Program,
    file: &Path,
    name: Option<&str>,
) -> Result<&'a ir::System, CliError> {
    let stem = file.file_stem().and_then(|s| s.to_str());
    match (name, stem) {
        (None, Some(stem)) => match program.systems.iter().find(|s| s.name == stem) {
            Some(s) => Ok(s),
            None => super::pick_system(program, None),
        },
        _ => super::pick_system(program, name),
    }
}

/// The generator of `system`'s inputs: the system named `<system>_data`.
pub fn generator_of<'a>(program: &'a Program, system: &str) -> Option<&'a ir::System> {
    let name = format!("{system}_data");
    program.systems.iter().find(|s| s.name == name)
}

/// Parameter values by name: `--param` items, each name at most once, and
/// each a parameter of at least one of `systems`.
pub(super) fn parse_params(
    items: &[String],
    systems: &[&ir::System],
) -> Result<HashMap<String, i64>, CliError> {
    let mut out = HashMap::new();
    for it in items {
        let (k, v) = split_assignment(it, "--param")?;
        let value: i64 = v
            .parse()
            .map_err(|_| CliError::User(format!("parameter {k}: `{v}` is not an integer")))?;
        if !systems.iter().any(|s| s.params.contains(&k)) {
            let s = systems[0];
            return Err(CliError::User(format!(
                "{k} is not a parameter of {} (parameters: {})",
                s.name,
                s.params.join(", ")
            )));
        }
        if out.insert(k.clone(), value).is_some() {
            return Err(CliError::User(format!("parameter {k} given twice")));
        }
    }
    Ok(out)
}

/// The values of `system`'s parameters, in its order.
fn params_of(system: &ir::System, values: &HashMap<String, i64>) -> Result<Vec<i64>, CliError> {
    let mine: HashMap<String, i64> = values
        .iter()
        .filter(|(k, _)| system.params.contains(k))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    system
        .resolve_params(&mine)
        .map_err(|e| CliError::User(e.to_string()))
}

/// A system compiled to native code, or `None` when the code generator
/// cannot handle it (then the interpreter runs it, with a note).
fn compile_native(
    source: &str,
    program: &Program,
    system: &str,
    optimize: bool,
    threads: Option<u64>,
) -> Result<Option<Compiled>, CliError> {
    let threads = threads.and_then(|n| usize::try_from(n).ok());
    let options = Options {
        optimize,
        system: Some(system.to_string()),
        ..Default::default()
    };
    // `program` is `source` checked: not parsed again.
    match crate::compile::compile_program(source, program, &options) {
        Ok(c) => Ok(Some(c.with_threads(threads))),
        Err(crate::compile::CompileError::Scan(crate::codegen::scan::ScanError::Unsupported(
            why,
        ))) => {
            eprintln!(
                "note: the JIT does not support {system} yet ({why}); \
                 running it with the reference interpreter"
            );
            Ok(None)
        }
        Err(e) => Err(compile_error(e)),
    }
}

/// Runs `system` once, natively when compiled, else with the interpreter.
fn run_once(
    program: &Program,
    system: &str,
    compiled: Option<&Compiled>,
    params: &[i64],
    inputs: HashMap<String, Array>,
    seed: u64,
) -> Result<HashMap<String, Array>, CliError> {
    match compiled {
        Some(c) => c
            .run_owned(params, inputs, seed)
            .map_err(|e| CliError::User(e.to_string())),
        None => interp::run(program, system, params, &inputs, seed)
            .map_err(|e| CliError::User(e.to_string())),
    }
}

/// `alphac run`.
pub fn run(args: RunArgs) -> Result<String, CliError> {
    let (source, program) = super::compile_file(&args.file)?;
    let sys = default_system(&program, &args.file, args.system.as_deref())?;
    let generator = if args.generate_inputs {
        generator_of(&program, &sys.name)
    } else {
        None
    };
    let mut systems = vec![sys];
    systems.extend(generator);
    let values = parse_params(&args.params, &systems)?;
    let params = params_of(sys, &values)?;
    let user = |e: interp::InterpError| CliError::User(e.to_string());
    let specs = interp::specs(sys, &params, VarKind::Input).map_err(user)?;

    // Inputs: files first, then the generator's outputs, then (with
    // --generate-inputs and no generator) seeded uniform values.
    let mut given: HashMap<String, PathBuf> = HashMap::new();
    for it in &args.inputs {
        let (k, v) = split_assignment(it, "--input")?;
        if !specs.iter().any(|s| s.name == k) {
            return Err(CliError::User(format!(
                "{k} is not an input of system {}",
                sys.name
            )));
        }
        given.insert(k, PathBuf::from(v));
    }
    let mut arrays: HashMap<String, Array> = HashMap::new();
    for spec in &specs {
        if let Some(path) = given.get(&spec.name) {
            let a = data::read_data(path, spec).map_err(|e| CliError::User(e.to_string()))?;
            arrays.insert(spec.name.clone(), a);
        }
    }
    let missing: Vec<&str> = specs
        .iter()
        .filter(|s| !arrays.contains_key(&s.name))
        .map(|s| s.name.as_str())
        .collect();
    if !missing.is_empty() {
        if let Some(g) = generator {
            let generated = generate(
                &source.text,
                &program,
                g,
                &values,
                &given,
                args.seed,
                args.threads,
            )?;
            for name in &missing {
                let a = generated.get(*name).ok_or_else(|| {
                    CliError::User(format!(
                        "the generator {} does not produce the input {name} of {}",
                        g.name, sys.name
                    ))
                })?;
                arrays.insert(name.to_string(), a.clone().with_name(*name));
            }
        } else {
            for (k, spec) in specs.iter().enumerate() {
                if arrays.contains_key(&spec.name) {
                    continue;
                }
                if !args.generate_inputs {
                    return Err(CliError::User(format!(
                        "missing input {} (give --input {}=FILE.npy, or --generate-inputs)",
                        spec.name, spec.name
                    )));
                }
                let a = Array::random(spec, args.seed.wrapping_add(k as u64))
                    .map_err(|e| CliError::User(e.to_string()))?;
                arrays.insert(spec.name.clone(), a);
            }
        }
    }

    let mut wanted: Vec<(String, PathBuf)> = Vec::new();
    for it in &args.outputs {
        let (k, v) = split_assignment(it, "--output")?;
        match sys.var_by_name(&k) {
            Some(id) if sys.vars[id].kind == VarKind::Output => {}
            _ => {
                return Err(CliError::User(format!(
                    "{k} is not an output of system {}",
                    sys.name
                )))
            }
        }
        wanted.push((k, PathBuf::from(v)));
    }

    let started = Instant::now();
    let compiled = if args.interp {
        None
    } else {
        compile_native(
            &source.text,
            &program,
            &sys.name,
            !args.no_optimize,
            args.threads,
        )?
    };
    let compile_time = started.elapsed();
    let program = match (&compiled, args.no_optimize) {
        (Some(c), _) => c.program().clone(),
        (None, true) => program.clone(),
        (None, false) => super::optimize_program(&program)?.program,
    };

    let results = match args.sweeps {
        None => {
            if args.first_sweep != 0 || args.trace.is_some() {
                return Err(CliError::User(
                    "--first-sweep and --trace go with --sweeps N".into(),
                ));
            }
            run_once(
                &program,
                &sys.name,
                compiled.as_ref(),
                &params,
                arrays,
                args.seed,
            )?
        }
        Some(n) => {
            if !args.quiet {
                let what = match compiled.as_ref().and_then(|c| c.complexity()) {
                    Some(r) => format!("{} -> {} per sweep", r.before, r.after),
                    None if args.interp => "reference interpreter".to_string(),
                    None => "not optimized".to_string(),
                };
                eprintln!(
                    "{}: {what}; compiled in {:.0} ms",
                    sys.name,
                    compile_time.as_secs_f64() * 1e3
                );
            }
            let started = Instant::now();
            let (outputs, trace, swept) =
                sweeps(&program, sys, compiled.as_ref(), &params, arrays, n, &args)?;
            // The sweeps' own time; loading the arrays into the native
            // code's buffers and reading them back is reported apart.
            let secs = swept.as_secs_f64();
            let setup = started.elapsed().as_secs_f64() - secs;
            if let Some(path) = &args.trace {
                std::fs::write(path, trace.to_csv())
                    .map_err(|e| CliError::User(format!("cannot write {}: {e}", path.display())))?;
            }
            if !args.quiet {
                let last = trace
                    .rows
                    .last()
                    .map(|(_, row)| scalars_text(&trace.names, row))
                    .unwrap_or_default();
                let per = if n > 0 { secs / n as f64 } else { 0.0 };
                eprintln!(
                    "{n} sweep{} in {secs:.3} s ({:.3} ms per sweep){}{last}",
                    if n == 1 { "" } else { "s" },
                    per * 1e3,
                    if last.is_empty() { "" } else { "; last: " },
                );
                if setup >= SETUP_SHOWN {
                    eprintln!(
                        "arrays loaded and read back in {setup:.3} s (not in the sweeps' time)"
                    );
                }
            }
            outputs
        }
    };

    if args.stats {
        match &compiled {
            Some(c) => eprint!("{}", memory_stats(c, sys, &params, args.seed)?),
            None => eprintln!("--stats: no native code (the interpreter ran), no arrays to count"),
        }
    }

    let mut out = String::new();
    for v in sys.vars.iter().filter(|v| v.kind == VarKind::Output) {
        let Some(a) = results.get(&v.name) else {
            return Err(CliError::Internal(format!(
                "output {} was not produced",
                v.name
            )));
        };
        if let Some((_, path)) = wanted.iter().find(|(n, _)| n == &v.name) {
            data::write_data(path, a).map_err(|e| CliError::User(e.to_string()))?;
            out.push_str(&format!("{}: written to {}\n", v.name, path.display()));
        } else {
            out.push_str(&summarize(&v.name, a));
        }
    }
    Ok(out)
}

/// `n` with thousands separators: `8,000,000`.
fn grouped(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (k, ch) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The `--stats` text: a header with the parameters, one line per array
/// of the native code (`NAME  BYTES B  SHAPE`, and for a mapped local
/// `(was SHAPE = BYTES B)`), then the total before and after mapping.
fn memory_stats(
    c: &Compiled,
    sys: &ir::System,
    params: &[i64],
    seed: u64,
) -> Result<String, CliError> {
    let arrays = c
        .array_bytes(params, seed)
        .map_err(|e| CliError::User(e.to_string()))?;
    let given: Vec<String> = sys
        .params
        .iter()
        .zip(params)
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    let mut out = format!("memory of {} ({}):\n", sys.name, given.join(", "));
    let width = arrays
        .iter()
        .map(|a| a.name.len())
        .max()
        .unwrap_or(0)
        .max(5);
    let bytes: Vec<String> = arrays.iter().map(|a| grouped(a.bytes)).collect();
    let bwidth = bytes.iter().map(String::len).max().unwrap_or(1);
    let (mut total, mut was_total) = (0u128, 0u128);
    for (a, b) in arrays.iter().zip(&bytes) {
        total = total.saturating_add(a.bytes);
        let was = match &a.was {
            Some((shape, old)) => {
                was_total = was_total.saturating_add(*old);
                format!("  (was {shape} = {} B)", grouped(*old))
            }
            None => {
                was_total = was_total.saturating_add(a.bytes);
                String::new()
            }
        };
        let shape = if a.shape.is_empty() {
            "scalar"
        } else {
            &a.shape
        };
        out.push_str(&format!(
            "  {:<width$}  {:>bwidth$} B  {shape}{was}\n",
            a.name, b
        ));
    }
    out.push_str(&format!(
        "  {:<width$}  {:>bwidth$} B  (without storage mapping: {} B)\n",
        "total",
        grouped(total),
        grouped(was_total)
    ));
    Ok(out)
}

/// Runs the generator system `g` (parameters by name from `values`, its
/// own inputs from `given` files) with the data seed of `seed`.
fn generate(
    source: &str,
    program: &Program,
    g: &ir::System,
    values: &HashMap<String, i64>,
    given: &HashMap<String, PathBuf>,
    seed: u64,
    threads: Option<u64>,
) -> Result<HashMap<String, Array>, CliError> {
    let params = params_of(g, values)?;
    let specs =
        interp::specs(g, &params, VarKind::Input).map_err(|e| CliError::User(e.to_string()))?;
    let mut inputs = HashMap::new();
    for spec in &specs {
        let path = given.get(&spec.name).ok_or_else(|| {
            CliError::User(format!(
                "the generator {} needs its input {} (give --input {}=FILE)",
                g.name, spec.name, spec.name
            ))
        })?;
        let a = data::read_data(path, spec).map_err(|e| CliError::User(e.to_string()))?;
        inputs.insert(spec.name.clone(), a);
    }
    let compiled = compile_native(source, program, &g.name, true, threads)?;
    let program = match &compiled {
        Some(c) => c.program().clone(),
        None => program.clone(),
    };
    run_once(
        &program,
        &g.name,
        compiled.as_ref(),
        &params,
        inputs,
        rng::data_seed(seed),
    )
}

/// `name = value, ...` of a trace row.
pub(crate) fn scalars_text(names: &[String], row: &[Scalar]) -> String {
    names
        .iter()
        .zip(row)
        .map(|(n, v)| match v {
            Scalar::Int(x) => format!("{n} = {x}"),
            Scalar::Float(x) => format!("{n} = {x:.6}"),
            Scalar::Bool(x) => format!("{n} = {x}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A progress bar on standard error when it is a terminal (and not
/// `--quiet`): sweeps done, sweeps per second, the last scalar outputs.
pub(crate) fn progress(n: u64, quiet: bool) -> indicatif::ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(n);
    let style = indicatif::ProgressStyle::with_template(
        "{bar:30} {pos}/{len} sweeps  {per_sec}  eta {eta}  {msg}",
    );
    if let Ok(style) = style {
        bar.set_style(style);
    }
    bar
}

/// `n` sweeps from `arrays`: natively with a [`crate::compile::Sweeper`]
/// (state kept in place), else with the interpreter (outputs fed back as
/// inputs). Returns the last sweep's outputs, the trace and the time the
/// sweeps took (without loading the arrays and reading them back).
fn sweeps(
    program: &Program,
    sys: &ir::System,
    compiled: Option<&Compiled>,
    params: &[i64],
    arrays: HashMap<String, Array>,
    n: u64,
    args: &RunArgs,
) -> Result<(HashMap<String, Array>, Trace, Duration), CliError> {
    let bar = progress(n, args.quiet);
    let user = |e: crate::compile::RunError| CliError::User(e.to_string());
    let result = match compiled {
        Some(c) => {
            // The inputs move into the native code's buffers.
            let mut sweeper = c
                .sweeper_owned(params, arrays, args.seed)
                .map_err(user)?
                .starting_at(args.first_sweep);
            let names = sweeper.scalar_names();
            let started = Instant::now();
            let trace = sweeper
                .run(n, |_, row| {
                    bar.set_message(scalars_text(&names, row));
                    bar.inc(1);
                })
                .map_err(user)?;
            let swept = started.elapsed();
            (sweeper.outputs().map_err(user)?, trace, swept)
        }
        None => {
            let names: Vec<String> = sys
                .vars
                .iter()
                .filter(|v| v.kind == VarKind::Output && v.domain.n_dims() == 0)
                .map(|v| v.name.clone())
                .collect();
            let mut trace = Trace {
                names: names.clone(),
                rows: Vec::new(),
            };
            let mut state = arrays;
            let mut outputs = HashMap::new();
            let started = Instant::now();
            for s in args.first_sweep..args.first_sweep + n {
                if s > args.first_sweep {
                    for sw in &sys.sweeps {
                        let (i, o) = (&sys.vars[sw.input].name, &sys.vars[sw.output].name);
                        if let Some(a) = outputs.get(o) {
                            let a: &Array = a;
                            state.insert(i.clone(), a.clone().with_name(i.clone()));
                        }
                    }
                }
                outputs = interp::run(
                    program,
                    &sys.name,
                    params,
                    &state,
                    rng::sweep_seed(args.seed, s),
                )
                .map_err(|e| CliError::User(e.to_string()))?;
                let row: Vec<Scalar> = names
                    .iter()
                    .map(|name| {
                        outputs
                            .get(name)
                            .and_then(|a| a.get(&[]).ok())
                            .unwrap_or(Scalar::Float(0.0))
                    })
                    .collect();
                bar.set_message(scalars_text(&names, &row));
                bar.inc(1);
                trace.rows.push((s, row));
            }
            (outputs, trace, started.elapsed())
        }
    };
    bar.finish_and_clear();
    Ok(result)
}

/// `NAME (type, shape [..]): [v0, v1, ...]` with at most 16 values, and
/// the sum of numeric arrays.
pub fn summarize(name: &str, a: &Array) -> String {
    use crate::runtime::ArrayData;
    const SHOWN: usize = 16;
    let shape: Vec<String> = a.shape().iter().map(|d| d.to_string()).collect();
    let (vals, sum): (Vec<String>, Option<String>) = match a.data() {
        ArrayData::Int(v) => (
            v.iter().take(SHOWN).map(|x| x.to_string()).collect(),
            Some(v.iter().fold(0i128, |s, &x| s + i128::from(x)).to_string()),
        ),
        ArrayData::Float(v) => (
            v.iter().take(SHOWN).map(|x| format!("{x:.6}")).collect(),
            Some(format!("{:.6}", v.iter().sum::<f64>())),
        ),
        ArrayData::Bool(v) => (v.iter().take(SHOWN).map(|x| x.to_string()).collect(), None),
    };
    let more = if a.len() > SHOWN { ", ..." } else { "" };
    let sum = sum.map(|s| format!("  sum = {s}")).unwrap_or_default();
    format!(
        "{name} ({}, shape [{}]): [{}{}]{}\n",
        a.ty().name(),
        shape.join(", "),
        vals.join(", "),
        more,
        sum
    )
}
