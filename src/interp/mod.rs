//! The reference interpreter: computes any checked [`Program`] directly
//! from its equations, demand-driven and memoized, with no schedule. It is
//! the oracle every transformation and the JIT are tested against, so it
//! favours obvious correctness over speed.
//!
//! Semantics (see `docs/language.md`):
//! - The value of `X[p]` is the value of `X`'s equation at `p`, computed on
//!   first demand and memoized per element. An element demanded while it
//!   is being computed is a dependence cycle, reported with the elements
//!   on it (`B[3] -> A[3] -> B[3]`).
//! - Every output and every local is evaluated over its whole domain (so
//!   that run-time errors do not depend on which elements happen to be
//!   demanded; the JIT computes them all too).
//! - Integer arithmetic is checked: overflow, division or remainder by
//!   zero are errors. Float arithmetic is IEEE-754. An int operand meeting
//!   a float is promoted. `and`/`or` and `if` evaluate only the operands
//!   they need (this matters only for which errors can occur).
//! - `reduce(op, proj, body)` at `x` combines `body(y)` over the integer
//!   points `y` of the body domain with `proj(y) = x`, in lexicographic
//!   order of `y`, starting from the identity (`0`, `1`, `-inf`/`i64::MIN`,
//!   `+inf`/`i64::MAX`, `true`, `false`). Float `max`/`min` are IEEE
//!   754-2019 `maximum`/`minimum` (NaN-propagating, `-0 < +0`), and float
//!   to int conversion truncates and saturates (NaN gives 0), exactly as in
//!   the JIT (`runtime::math::{fmax, fmin, float_to_int}`).
//! - Random calls use [`runtime::rng`] with site `(var, ordinal)` of the
//!   call and the point of the index space the call is evaluated in (the
//!   body point inside a reduction; the outer point for `categorical`).
//! - Outputs are [`Array`]s over the bounding box of their domain; box
//!   elements outside the domain are `0` / `0.0` / `false`.
//!
//! Deep dependence chains (a suffix sum over 10^5 elements demanded from its
//! far end) recurse once per element: evaluation runs on a thread with a
//! large stack ([`Options::stack_bytes`], 1 GiB by default: about 4·10^5
//! nested elements in the dev profile) and a guard checks the stack use at
//! every expression; exceeding it is an error, never a crash.
//!
//! Must not know about: schedules, code generation, the syntax.

mod eval;

use crate::diag::{Diagnostic, Span};
use crate::ir::{InputError, Program, System, VarKind, Variable};
use crate::runtime::{Array, ArraySpec, RuntimeError};
use std::collections::HashMap;
use thiserror::Error;

/// Stack kept free below the guard (frames between two checks, plus the
/// runtime's own needs).
pub const STACK_MARGIN: usize = 1 << 20;

pub use crate::runtime::ExternalFn;

/// Evaluation options.
#[derive(Clone)]
pub struct Options {
    /// Implementations of the program's `external` functions, by name.
    pub externals: HashMap<String, ExternalFn>,
    /// Stack size of the evaluation thread.
    pub stack_bytes: usize,
    /// Largest nesting of element evaluations (the length of the longest
    /// chain of demanded elements). Independently, evaluation stops with
    /// [`InterpError::TooDeep`] when less than [`STACK_MARGIN`] bytes of
    /// the thread's stack remain (measured from the address of a local at
    /// thread start), so a deep chain is an error, never a stack overflow.
    pub max_depth: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            externals: HashMap::new(),
            stack_bytes: 1 << 30,
            max_depth: usize::MAX,
        }
    }
}

/// An error of the interpreter. Messages name the variable and point.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum InterpError {
    #[error("no system named {0:?} in the program")]
    UnknownSystem(String),
    /// Parameters or inputs the system refuses (`ir::inputs`).
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("{0}")]
    Runtime(#[from] RuntimeError),
    #[error("dependence cycle: {}", .path.join(" -> "))]
    Cycle { path: Vec<String> },
    /// `at` is the element being computed, `point` the point of the
    /// expression's index space (a reduction body point, for example).
    #[error("while computing {at} (at point {point:?}): {msg}")]
    Eval {
        at: String,
        point: Vec<i64>,
        msg: String,
        span: Span,
    },
    /// The evaluation nested too deeply: the number of elements in progress
    /// when the stack guard or [`Options::max_depth`] stopped it.
    #[error("evaluation nested too deeply ({0} elements in progress); raise Options::stack_bytes / max_depth")]
    TooDeep(usize),
    #[error("internal error: {0}")]
    Internal(String),
}

impl InterpError {
    /// The error as a diagnostic (with the expression's location when
    /// there is one).
    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            InterpError::Eval { span, .. } => Diagnostic::error(self.to_string(), *span),
            _ => Diagnostic::error_nowhere(self.to_string()),
        }
    }
}

/// `X[1, 2]`-style rendering of an element.
pub fn element_name(var: &str, point: &[i64]) -> String {
    let p: Vec<String> = point.iter().map(|x| x.to_string()).collect();
    format!("{var}[{}]", p.join(", "))
}

/// The system named `name`.
pub fn find_system<'a>(program: &'a Program, name: &str) -> Result<&'a System, InterpError> {
    program
        .systems
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| InterpError::UnknownSystem(name.to_string()))
}

/// The array spec of a variable for given parameter values: its element
/// type and the bounding box of its domain (`ArraySpec::of_domain`).
pub fn array_spec(var: &Variable, params: &[i64]) -> Result<ArraySpec, RuntimeError> {
    ArraySpec::of_domain(&var.name, var.ty, &var.domain, params)
}

/// The array spec of every variable of a kind (inputs, outputs, locals),
/// in declaration order, for given (checked) parameter values.
pub fn specs(
    system: &System,
    params: &[i64],
    kind: VarKind,
) -> Result<Vec<ArraySpec>, InterpError> {
    system.check_params(params)?;
    system
        .vars
        .iter()
        .filter(|v| v.kind == kind)
        .map(|v| array_spec(v, params).map_err(InterpError::from))
        .collect()
}

/// Runs `system` of `program` with default [`Options`]: see [`run_with`].
pub fn run(
    program: &Program,
    system: &str,
    params: &[i64],
    inputs: &HashMap<String, Array>,
    seed: u64,
) -> Result<HashMap<String, Array>, InterpError> {
    run_with(program, system, params, inputs, seed, &Options::default())
}

/// Runs `system` for parameter values `params` (in `System::params`
/// order) on `inputs` (one array per input variable, by name, of the
/// variable's element type and bounding-box shape), returning one array
/// per output variable over its bounding box.
pub fn run_with(
    program: &Program,
    system: &str,
    params: &[i64],
    inputs: &HashMap<String, Array>,
    seed: u64,
    opts: &Options,
) -> Result<HashMap<String, Array>, InterpError> {
    let sys = find_system(program, system)?;
    sys.check_params(params)?;
    let mut input_arrays: Vec<Option<Array>> = vec![None; sys.vars.len()];
    sys.check_input_names(inputs.keys())?;
    for (id, var) in sys.vars.iter().enumerate() {
        if var.kind != VarKind::Input {
            continue;
        }
        let spec = array_spec(var, params)?;
        let a = inputs
            .get(&var.name)
            .ok_or_else(|| InputError::MissingInput(var.name.clone()))?;
        spec.check_array(a)?;
        input_arrays[id] = Some(
            a.clone()
                .with_name(var.name.clone())
                .with_lo(spec.lo.clone()),
        );
    }
    let stack = opts.stack_bytes.max(4 * STACK_MARGIN);
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("alphac-interp".into())
            .stack_size(stack)
            .spawn_scoped(scope, || {
                eval::Evaluator::new(
                    program,
                    sys,
                    params,
                    input_arrays,
                    seed,
                    opts,
                    stack - STACK_MARGIN,
                )?
                .run_all()
            })
            .map_err(|e| {
                InterpError::Internal(format!("cannot start the evaluation thread: {e}"))
            })?;
        handle
            .join()
            .map_err(|_| InterpError::Internal("the evaluation thread panicked".into()))?
    })
}
