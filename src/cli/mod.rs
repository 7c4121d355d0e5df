//! The `alphac` command-line interface: argument parsing (clap), dispatch to
//! the pipeline stages, diagnostics rendering and exit codes
//! (0 success, 1 user error, 2 internal error).
//!
//! It owns no compiler logic: every command is a thin call into a library
//! stage. It does own the calculator's expression language (`calc`, the
//! `alphac calc` evaluator over `poly`'s public API), the behaviour of
//! `alphac run` (`run`), and the pictures: the dependence graph as DOT
//! (`graph`), a domain as SVG (`draw`, drawn by `svg`), a sweep trace as
//! an SVG plot (`plot`). Must not know about the internals of any stage.

use crate::diag::{render_all, Diagnostic, SourceFile};
use crate::ir::{self, Program};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

pub mod calc;
mod draw;
mod explain;
mod graph;
mod plot;
mod run;
mod svg;

/// The sweeps' progress bar of `alphac run` and its message (shared with
/// the Python package's samplers).
#[cfg(feature = "python")]
pub(crate) use run::{progress as sweep_progress, scalars_text};

const EXAMPLES: &str = "\
Examples:
  alphac check examples/prefix_sum.alpha
  alphac show examples/cholesky.alpha
  alphac run examples/matmul.alpha --param N=64 --generate-inputs --seed 1
  alphac run examples/prefix_sum.alpha --param N=10 --input A=a.npy --output B=b.npy
  alphac calc '[N] -> { [i, j] : 0 <= j <= i < N }'
  alphac calc 'complexity([N, K] -> { [i, k] : 0 <= i < N and 0 <= k < K })'
  alphac calc 'points({ [i, j] : 0 <= i, j < 3 and i != j })'
  alphac graph examples/prefix_sum_dependent.alpha -o deps.dot
  alphac draw examples/prefix_sum_dependent.alpha --var B --param N=6 -o b.svg
  alphac draw examples/gmm_gs.alpha --var C_red2 --param N=6 --param K=2 --slice k=0
  alphac plot trace.csv -o trace.svg";

/// An optimizing compiler for Alpha-style equational programs.
#[derive(Parser, Debug)]
#[command(name = "alphac", version, about, after_help = EXAMPLES)]
struct Cli {
    /// Print the wall-clock time of each compiler phase (parsing,
    /// optimization and its schedules, scanning, native code) on standard
    /// error.
    #[arg(long, global = true)]
    timings: bool,
    #[command(subcommand)]
    command: Command,
}

/// The scheduling algorithms.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum SchedulerArg {
    /// Feautrier's: each level carries as many dependences as possible.
    Feautrier,
    /// Pluto-style bands (isl's scheduler) with a Feautrier fallback.
    Pluto,
}

impl From<SchedulerArg> for crate::schedule::Scheduler {
    fn from(s: SchedulerArg) -> Self {
        match s {
            SchedulerArg::Feautrier => crate::schedule::Scheduler::Feautrier,
            SchedulerArg::Pluto => crate::schedule::Scheduler::Pluto,
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse and check a program; report every error with its location.
    Check {
        /// The `.alpha` file.
        file: PathBuf,
    },
    /// Print the checked, normalized program as `.alpha`.
    Show {
        /// The `.alpha` file.
        file: PathBuf,
    },
    /// Run a system on inputs and write or print its outputs.
    Run(run::RunArgs),
    /// Print each statement's affine schedule in isl notation.
    Schedule {
        /// The `.alpha` file.
        file: PathBuf,
        /// The scheduling algorithm.
        #[arg(long, value_enum, default_value_t = SchedulerArg::Pluto)]
        scheduler: SchedulerArg,
    },
    /// Print the generated loop code (C-like) of a system.
    Emit {
        /// The `.alpha` file.
        file: PathBuf,
        /// The system (default: the last one).
        #[arg(long)]
        system: Option<String>,
        /// Emit the program as written, without simplifying its reductions.
        #[arg(long)]
        no_optimize: bool,
    },
    /// Simplify the reductions (SDR) and print the optimized program as `.alpha`.
    Optimize {
        /// The `.alpha` file.
        file: PathBuf,
        /// Print the optimizer's decisions instead (transformation, faces,
        /// split, reuse vector, direction and why), each with the
        /// complexity after it.
        #[arg(long)]
        explain: bool,
    },
    /// Print each equation's asymptotic cost before and after optimization,
    /// then `total: O(BEFORE) -> O(AFTER)`.
    Complexity {
        /// The `.alpha` file.
        file: PathBuf,
        /// Only this system (default: every system of the file).
        #[arg(long)]
        system: Option<String>,
    },
    /// Print a system's reduced dependence graph as Graphviz DOT:
    /// statements, dependences labelled with their affine maps, ranked by
    /// the outer schedule dimension, simplified reductions with their
    /// reuse vector.
    Graph {
        /// The `.alpha` file.
        file: PathBuf,
        /// The system (default: the one named like the file, else the last).
        #[arg(long)]
        system: Option<String>,
        /// The program as written, without simplifying its reductions.
        #[arg(long)]
        no_optimize: bool,
        /// Write the DOT text to this file instead of standard output.
        #[arg(short, long, value_name = "FILE.dot")]
        output: Option<PathBuf>,
    },
    /// Draw a variable's domain, or its reduction's body domain, as SVG:
    /// integer points, faces, and for a simplified reduction the reuse
    /// vector and the added and subtracted faces.
    Draw(draw::DrawArgs),
    /// Plot a sweep trace (`alphac run --sweeps N --trace T.csv`) as SVG,
    /// one line per column.
    Plot(plot::PlotArgs),
    /// Evaluate an isl-notation expression with the polyhedral library.
    Calc {
        /// A set, a map, or a call such as `intersect(A, B)`, `lexmin(A)`,
        /// `points(A, N=5)`, `complexity(A)`.
        expr: String,
    },
}

/// A failure of a command: user errors exit with 1, internal ones with 2.
#[derive(Debug)]
pub enum CliError {
    /// Diagnostics about a source file.
    Diagnostics(SourceFile, Vec<Diagnostic>),
    /// A user error without a source location.
    User(String),
    /// A user error already rendered as one line (printed as is).
    Plain(String),
    /// A bug in alphac.
    Internal(String),
}

impl CliError {
    fn exit_code(&self) -> i32 {
        match self {
            CliError::Diagnostics(..) | CliError::User(_) | CliError::Plain(_) => 1,
            CliError::Internal(_) => 2,
        }
    }
    fn render(&self) -> String {
        match self {
            CliError::Diagnostics(file, diags) => render_all(diags, file),
            CliError::User(m) => format!("error: {m}\n"),
            CliError::Plain(m) => format!("{}\n", m.trim_end()),
            CliError::Internal(m) => format!("internal error: {m}\n"),
        }
    }
}

/// Runs the command line and returns the process exit code. A panic inside
/// a stage is reported as an internal error (exit 2) without a backtrace.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 1 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    std::panic::set_hook(Box::new(|_| {}));
    let timings = cli.timings;
    if timings {
        crate::timing::start();
    }
    let result = std::panic::catch_unwind(|| {
        let _t = crate::timing::phase("total");
        dispatch(cli)
    });
    let _ = std::panic::take_hook();
    if let Some(report) = crate::timing::finish().filter(|_| timings) {
        eprint!("{report}");
    }
    match result {
        Ok(Ok(out)) => {
            print!("{out}");
            0
        }
        Ok(Err(e)) => {
            eprint!("{}", e.render());
            e.exit_code()
        }
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".to_string());
            eprintln!("internal error: {msg}\nThis is a bug in alphac; please report it with the input that caused it.");
            2
        }
    }
}

fn dispatch(cli: Cli) -> Result<String, CliError> {
    match cli.command {
        Command::Check { file } => {
            let (_, program) = compile_file(&file)?;
            let n: usize = program.systems.len();
            Ok(format!(
                "{}: ok ({} system{})\n",
                file.display(),
                n,
                if n == 1 { "" } else { "s" }
            ))
        }
        Command::Show { file } => {
            let (_, program) = compile_file(&file)?;
            Ok(ir::print::program_to_alpha(&program))
        }
        Command::Calc { expr } => calc(&expr),
        Command::Graph {
            file,
            system,
            no_optimize,
            output,
        } => {
            let (_, program) = compile_file(&file)?;
            let name = run::default_system(&program, &file, system.as_deref())?
                .name
                .clone();
            let text = if no_optimize {
                let sched =
                    crate::deps::schedule_program(&program, crate::schedule::Scheduler::Pluto)
                        .map_err(deps_error)?;
                graph_of(&program, &sched, &[], &name)?
            } else {
                let o = optimize_program(&program)?;
                graph_of(&o.program, &o.schedule, &o.decisions, &name)?
            };
            write_or_print(output.as_deref(), text)
        }
        Command::Draw(args) => draw::draw(args),
        Command::Plot(args) => plot::plot(args),
        Command::Run(args) => run::run(args),
        Command::Emit {
            file,
            system,
            no_optimize,
        } => {
            let (_, program) = compile_file(&file)?;
            let sys_name = pick_system(&program, system.as_deref())?.name.clone();
            let options = crate::compile::Options {
                optimize: !no_optimize,
                system: Some(sys_name.clone()),
                ..Default::default()
            };
            crate::compile::emit(&program, &sys_name, &options).map_err(compile_error)
        }
        Command::Schedule { file, scheduler } => {
            let (_, program) = compile_file(&file)?;
            crate::deps::schedule_text(&program, scheduler.into()).map_err(deps_error)
        }
        Command::Complexity { file, system } => {
            let (_, program) = compile_file(&file)?;
            let only = match system {
                Some(name) => Some(
                    program
                        .systems
                        .iter()
                        .position(|s| s.name == name)
                        .ok_or_else(|| CliError::User(format!("no system named {name}")))?,
                ),
                None => None,
            };
            let o = optimize_program(&program)?;
            let mut text = crate::sdr::complexity::report_systems(&program, &o, only)
                .map(|r| r.to_string())
                .map_err(|e| CliError::Internal(e.to_string()))?;
            // With one system: the cost of its generated loops (storage
            // mapping, scatter loops and sparse updates included).
            if let Some(k) = only {
                let options = crate::compile::Options {
                    system: Some(program.systems[k].name.clone()),
                    ..crate::compile::Options::default()
                };
                match crate::compile::generated_cost(&program, &options) {
                    Ok(c) => text.push_str(&format!("generated code (upper bound): {c}\n")),
                    Err(e) => {
                        text.push_str(&format!("generated code (upper bound): unknown ({e})\n"))
                    }
                }
            }
            Ok(text)
        }
        Command::Optimize { file, explain } => {
            let (_, program) = compile_file(&file)?;
            let o = optimize_program(&program)?;
            if explain {
                return Ok(explain::explain(&program, &o));
            }
            // Budget notes as comments: the output stays a valid program.
            let notes: String = o.notes.iter().map(|n| format!("// note: {n}\n")).collect();
            Ok(notes + &ir::print::program_to_alpha(&o.program))
        }
    }
}

/// The dependence graph of system `name` of `program` scheduled as `sched`.
fn graph_of(
    program: &Program,
    sched: &crate::deps::ProgramSchedule,
    decisions: &[crate::sdr::Decision],
    name: &str,
) -> Result<String, CliError> {
    let k = program
        .systems
        .iter()
        .position(|s| s.name == name)
        .ok_or_else(|| CliError::Internal(format!("system {name} lost by the optimizer")))?;
    let s = sched
        .systems
        .get(k)
        .ok_or_else(|| CliError::Internal(format!("no schedule for system {name}")))?;
    graph::dot(&program.systems[k], s, decisions).map_err(|e| CliError::Internal(e.to_string()))
}

/// Writes `text` to `path` (and prints nothing), or returns it for
/// standard output.
pub(crate) fn write_or_print(path: Option<&Path>, text: String) -> Result<String, CliError> {
    match path {
        Some(p) => {
            std::fs::write(p, text)
                .map_err(|e| CliError::User(format!("cannot write {}: {e}", p.display())))?;
            Ok(String::new())
        }
        None => Ok(text),
    }
}

/// Reads, parses and checks a file.
pub fn compile_file(path: &Path) -> Result<(SourceFile, Program), CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::User(format!("cannot read {}: {e}", path.display())))?;
    let file = SourceFile::new(path.display().to_string(), text);
    let _t = crate::timing::phase("parse and check");
    let ast = crate::syntax::parse(&file).map_err(|d| CliError::Diagnostics(file.clone(), d))?;
    let checked = ir::lower::lower_with_warnings(&ast, &file)
        .map_err(|d| CliError::Diagnostics(file.clone(), d))?;
    // Warnings (a local neither defined nor used, ...) do not stop the
    // command: they go to standard error with their location.
    if !checked.warnings.is_empty() {
        eprint!("{}", render_all(&checked.warnings, &file));
    }
    Ok((file, checked.program))
}

/// Splits `NAME=VALUE`.
pub(crate) fn split_assignment(s: &str, what: &str) -> Result<(String, String), CliError> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => {
            Ok((k.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(CliError::User(format!(
            "expected {what} as NAME=VALUE, found `{s}`"
        ))),
    }
}

/// Chooses the system to run: the named one, or the only / last one.
pub(crate) fn pick_system<'a>(
    program: &'a Program,
    name: Option<&str>,
) -> Result<&'a ir::System, CliError> {
    match name {
        Some(n) => program.systems.iter().find(|s| s.name == n).ok_or_else(|| {
            let names: Vec<&str> = program.systems.iter().map(|s| s.name.as_str()).collect();
            CliError::User(format!(
                "no system named {n} (systems: {})",
                names.join(", ")
            ))
        }),
        None => program
            .systems
            .last()
            .ok_or_else(|| CliError::User("the file defines no system".into())),
    }
}

/// `alphac calc`: the polyhedral calculator; errors are one line with the
/// column.
fn calc(expr: &str) -> Result<String, CliError> {
    match calc::eval(expr) {
        Ok(mut out) => {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            Ok(out)
        }
        Err(e) => Err(CliError::Plain(e.render(expr))),
    }
}

/// A dependence-analysis error: a cycle (or an unschedulable program) is
/// the user's; anything else is ours.
fn deps_error(e: crate::deps::DepsError) -> CliError {
    match e {
        crate::deps::DepsError::Cycle { .. } => CliError::User(e.to_string()),
        other => CliError::Internal(other.to_string()),
    }
}

/// The SDR pipeline with the default (Pluto) scheduler.
pub(crate) fn optimize_program(program: &Program) -> Result<crate::sdr::Optimized, CliError> {
    crate::sdr::optimize(program, crate::schedule::Scheduler::Pluto).map_err(|e| match e {
        crate::sdr::OptimizeError::Deps(d) => deps_error(d),
        other => CliError::Internal(other.to_string()),
    })
}

/// A compilation error: source errors and cycles are the user's; failures
/// of later stages are ours.
pub(crate) fn compile_error(e: crate::compile::CompileError) -> CliError {
    use crate::compile::CompileError as C;
    match e {
        C::Source { diagnostics, file } => CliError::Diagnostics(file, diagnostics),
        C::NoSystem(s) => CliError::User(format!("no system named {s}")),
        C::Deps(d) => deps_error(d),
        C::Optimize(crate::sdr::OptimizeError::Deps(d)) => deps_error(d),
        C::Scan(crate::codegen::scan::ScanError::Unsupported(why)) => CliError::User(format!(
            "the code generator does not support this program: {why}"
        )),
        other => CliError::Internal(other.to_string()),
    }
}
