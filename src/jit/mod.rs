//! The JIT: a loop-AST [`Function`] lowered with Cranelift into one native
//! function, and a safe API to run it on owned, typed buffers.
//!
//! Owns: compilation (`lower`), the run-time proof obligations of
//! unchecked code (`analysis`), the host routines compiled code calls
//! (`host_fns`, `scratch`), the calling convention (`abi`), the running
//! of parallel loops on several threads (`parallel`), the buffer
//! type [`Buffer`] and the only `unsafe` code of the crate, at the JIT
//! boundary: the call of a finalized function pointer, in
//! [`JitFunction::run`], the release of its code memory when it is
//! dropped (`lower::Compiled`), the trampoline through which compiled
//! code calls a user's external function (`host_fns::rt_external`),
//! the calls of a parallel loop's outlined function from the pool's
//! threads (`parallel`, whose argument is the disjointness proof of
//! `loop_ast::parallel`), and the routine through which compiled code
//! grows its scratch memory (`scratch`).
//!
//! Must not know about: schedules, the IR's equations, the interpreter
//! (its arrays convert to and from [`Buffer`] at one point, to be added
//! where the two meet).
//!
//! Safety argument of a run (checked in this order before the call):
//! 1. the parameter count and the context (the function's parameter
//!    constraints) hold;
//! 2. every array's box is computed with checked arithmetic, extents are
//!    `>= 0`, the element count and byte size fit in `isize`;
//! 3. one buffer per array, of the array's element type and exactly the
//!    box's element count;
//! 4. the interval analysis proves that affine arithmetic cannot overflow
//!    and either proves every affine access inside its box (then the fast
//!    variant runs) or not (then a variant that checks every access runs,
//!    compiled on first need);
//! 5. data-dependent accesses, int arithmetic on data and distribution
//!    arguments are checked by the compiled code itself, which returns a
//!    status code instead of touching memory out of bounds.

pub mod abi;
mod analysis;
pub mod host_fns;
pub mod lower;
pub mod parallel;
pub mod scratch;

use crate::codegen::loop_ast::{AstError, Function, MAX_DIMS};
use crate::runtime::ExternalFn;
use crate::vocab::ElemType;
use abi::{status, NativeFn, ERR_SLOT_LEN};
use analysis::Verdict;
use host_fns::ExternalTable;
use lower::{Compiled, ParallelLoop};
use parallel::ParallelRun;
use scratch::Scratch;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Compilation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JitError {
    #[error("malformed loop program: {0}")]
    Ast(#[from] AstError),
    #[error("the host machine is not supported by Cranelift: {0}")]
    UnsupportedHost(String),
    #[error("code generation failed: {0}")]
    Codegen(String),
}

/// An execution of native code failed (its parameters and buffers were
/// rejected before the call, or the code returned an error status); no
/// partial guarantees are made about buffer contents after an error during
/// execution. (The library's `compile::RunError` wraps it.)
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExecError {
    #[error("expected {expected} parameters, got {got}")]
    ParamCount { expected: usize, got: usize },
    #[error("parameters {0:?} violate the function's parameter constraints")]
    ParamsOutsideContext(Vec<i64>),
    #[error("expected {expected} buffers, got {got}")]
    BufferCount { expected: usize, got: usize },
    #[error("buffer of `{array}` holds {got} values, expected {expected}")]
    BufferType {
        array: String,
        expected: &'static str,
        got: &'static str,
    },
    #[error("buffer of `{array}` has {got} elements, its box needs {expected}")]
    BufferSize {
        array: String,
        expected: usize,
        got: usize,
    },
    #[error("array `{0}`: its box does not fit in memory (or its bounds overflow)")]
    TooLarge(String),
    #[error("index arithmetic may overflow 64-bit integers for these parameters")]
    MayOverflow,
    #[error("read or write of `{array}` at {point:?}, outside its domain")]
    OutOfBounds { array: String, point: Vec<i64> },
    #[error("affine access to `{array}` at {point:?} out of bounds: the loop program violates the access contract")]
    ContractViolation { array: String, point: Vec<i64> },
    #[error("integer division by zero")]
    DivisionByZero,
    #[error("integer overflow")]
    Overflow,
    #[error("invalid argument of a discrete distribution")]
    BadDistributionArgument,
    #[error("categorical draw of `{array}` at {point:?}: the weights must be finite and non-negative with a positive finite sum")]
    BadCategorical { array: String, point: Vec<i64> },
    #[error("categorical draw of `{array}` at {point:?}: no memory for its weights")]
    NoScratch { array: String, point: Vec<i64> },
    #[error("{}", crate::runtime::error::selection_out_of_range(*value, *lower, *upper, index, var))]
    SelectionOutOfRange {
        var: String,
        index: String,
        value: i64,
        lower: i64,
        upper: i64,
    },
    #[error("no implementation of external function {0}")]
    ExternalMissing(String),
    #[error("external function {0} panicked")]
    ExternalPanicked(String),
    #[error("compiling the checked variant failed: {0}")]
    Jit(JitError),
    #[error("a chunk of a parallel loop failed to run (internal error)")]
    ParallelFailed,
    #[error("unknown status {0} returned by compiled code")]
    UnknownStatus(i64),
}

/// An owned, typed, dense buffer holding one array (row-major over its
/// box): the runtime's element buffer, the type the interpreter's arrays
/// hold.
pub use crate::runtime::ArrayData as Buffer;

/// The address of a buffer's first element, as the compiled code takes it.
fn base_ptr(b: &mut Buffer) -> *mut u8 {
    match b {
        Buffer::Int(v) => v.as_mut_ptr().cast(),
        Buffer::Float(v) => v.as_mut_ptr().cast(),
        Buffer::Bool(v) => v.as_mut_ptr().cast(),
    }
}

/// Compilation options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JitOptions {
    /// Bounds-check every access, affine ones included (for tests: a
    /// violated access contract becomes [`ExecError::ContractViolation`]).
    pub checked: bool,
}

/// A compiled loop program.
#[derive(Debug)]
pub struct JitFunction {
    func: Function,
    options: JitOptions,
    fast: Compiled,
    /// The variant that checks every access (compiled on first need when
    /// `fast` is not already checked).
    checked: OnceLock<Result<Compiled, JitError>>,
    /// The parallel loops (`lower::parallel_loops`), by id.
    par_loops: Arc<[ParallelLoop]>,
    /// The analysis verdict of the last run's parameters and boxes (a
    /// sampler runs the same parameters sweep after sweep, and the exact
    /// proofs of skewed accesses cost solver calls).
    last_verdict: Mutex<Option<(Vec<i64>, analysis::Boxes, Verdict)>>,
    /// The count arrays (`analysis::counts`), whose bounds the verdict
    /// checks for each run's parameters.
    counts: analysis::Counts,
}

/// The box of every array for given parameters: `(lo, extent)` per
/// dimension, and the element count.
fn boxes(f: &Function, params: &[i64]) -> Result<(analysis::Boxes, Vec<usize>), ExecError> {
    let mut all = Vec::new();
    let mut sizes = Vec::new();
    for a in &f.arrays {
        let too_large = || ExecError::TooLarge(a.name.clone());
        let mut dims = Vec::new();
        let mut count: usize = 1;
        for d in &a.dims {
            let lo = d.lower.eval(&[], params).ok_or_else(too_large)?;
            // A negative extent is a domain that is empty for these
            // parameters (legal: e.g. a piece the optimizer split off that
            // exists only for larger sizes): the array has no elements, and
            // no statement instance reads or writes it.
            let ext = d.extent.eval(&[], params).ok_or_else(too_large)?.max(0);
            // lo + ext is computed by the compiled code.
            lo.checked_add(ext).ok_or_else(too_large)?;
            let e = usize::try_from(ext).map_err(|_| too_large())?;
            count = count.checked_mul(e).ok_or_else(too_large)?;
            dims.push((lo, ext));
        }
        let elem = match a.ty {
            ElemType::Int | ElemType::Float => 8,
            ElemType::Bool => 1,
        };
        let bytes = count.checked_mul(elem).ok_or_else(too_large)?;
        if isize::try_from(bytes).is_err() || i64::try_from(bytes).is_err() {
            return Err(too_large());
        }
        all.push(dims);
        sizes.push(count);
    }
    Ok((all, sizes))
}

impl JitFunction {
    /// Checks and compiles `f` (fast variant: affine accesses unchecked).
    pub fn compile(f: &Function) -> Result<JitFunction, JitError> {
        JitFunction::compile_with(f, JitOptions::default())
    }

    /// Checks and compiles `f` with `options`.
    pub fn compile_with(f: &Function, options: JitOptions) -> Result<JitFunction, JitError> {
        f.check()?;
        let fast = lower::compile(f, options.checked)?;
        Ok(JitFunction {
            func: f.clone(),
            options,
            fast,
            par_loops: lower::parallel_loops(f).into(),
            checked: OnceLock::new(),
            last_verdict: Mutex::new(None),
            counts: analysis::Counts::of(f),
        })
    }

    /// The optimized Cranelift IR and the machine code listing of `f`
    /// compiled with `options` (for inspecting code quality; the format is
    /// Cranelift's and may change). Cranelift's verifier checks the IR
    /// first, in every build: a lowering error is a `JitError`.
    pub fn disassemble(f: &Function, options: JitOptions) -> Result<String, JitError> {
        f.check()?;
        lower::disassemble(f, options.checked)
    }

    /// The loop program this was compiled from.
    pub fn function(&self) -> &Function {
        &self.func
    }

    /// Whether, for `params`, the interval analysis proves every affine
    /// access in bounds, so that a run uses the fast variant (no checks on
    /// affine accesses); `false` means a run falls back to the variant
    /// that checks every access. Errors as in [`JitFunction::run`] for the
    /// parameters (count, context, boxes, possible overflow).
    pub fn proves_affine_accesses(&self, params: &[i64]) -> Result<bool, ExecError> {
        let f = &self.func;
        self.check_params(params)?;
        let (bx, _) = boxes(f, params)?;
        match self.verdict(params, &bx) {
            Verdict::MayOverflow => Err(ExecError::MayOverflow),
            Verdict::Safe => Ok(true),
            Verdict::NeedsChecks => Ok(false),
        }
    }

    /// The bounding box of every array for `params`: per dimension
    /// `(lower, extent)`, the element at `x` being at offset
    /// `Σ_k (x_k − lower_k)·Π_{j>k} extent_j`. Errors as in
    /// [`JitFunction::run`] (count, context, negative extent, size).
    pub fn boxes(&self, params: &[i64]) -> Result<Vec<Vec<(i64, i64)>>, ExecError> {
        self.check_params(params)?;
        Ok(boxes(&self.func, params)?.0)
    }

    /// Zero-filled buffers (zero, `0.0`, `false`) of the right type and
    /// size for every array, for `params`; [`ExecError::TooLarge`] naming
    /// the first array the allocator refuses.
    pub fn zeroed_buffers(&self, params: &[i64]) -> Result<Vec<Buffer>, ExecError> {
        self.zeroed_buffers_except(params, |_| false)
    }

    /// [`JitFunction::zeroed_buffers`], except that the arrays `k` with
    /// `skip(k)` get an empty buffer of their type (for a caller that
    /// fills them itself, such as an input moved in whole).
    pub fn zeroed_buffers_except(
        &self,
        params: &[i64],
        skip: impl Fn(usize) -> bool,
    ) -> Result<Vec<Buffer>, ExecError> {
        self.check_params(params)?;
        let (_, sizes) = boxes(&self.func, params)?;
        self.func
            .arrays
            .iter()
            .zip(sizes)
            .enumerate()
            .map(|(k, (a, n))| {
                Buffer::try_zeros(a.ty, if skip(k) { 0 } else { n })
                    .map_err(|_| ExecError::TooLarge(a.name.clone()))
            })
            .collect()
    }

    /// [`analysis::analyse`] of the function for `params` and `bx`,
    /// remembered for the last parameters and boxes asked.
    fn verdict(&self, params: &[i64], bx: &analysis::Boxes) -> Verdict {
        // A poisoned lock only loses the memo: analyse afresh.
        if let Ok(last) = self.last_verdict.lock() {
            if let Some((p, b, v)) = last.as_ref() {
                if p.as_slice() == params && b == bx {
                    return *v;
                }
            }
        }
        let v = analysis::analyse(&self.func, &self.counts, params, bx);
        if let Ok(mut last) = self.last_verdict.lock() {
            *last = Some((params.to_vec(), bx.clone(), v));
        }
        v
    }

    fn check_params(&self, params: &[i64]) -> Result<(), ExecError> {
        use crate::poly::ParamsRefused;
        // The context has one parameter per function parameter
        // (`Function::check`).
        match self.func.context.check_param_values(params) {
            Ok(()) => Ok(()),
            Err(ParamsRefused::Count { expected, got }) => {
                Err(ExecError::ParamCount { expected, got })
            }
            Err(ParamsRefused::OutsideContext) => {
                Err(ExecError::ParamsOutsideContext(params.to_vec()))
            }
        }
    }

    /// Runs the function on `params` (one value per parameter) and
    /// `buffers` (one per array, in order, each exactly the array's box
    /// for these parameters). Arrays are read and written in place.
    pub fn run(&self, params: &[i64], buffers: &mut [Buffer]) -> Result<(), ExecError> {
        self.run_with(params, buffers, &HashMap::new())
    }

    /// [`JitFunction::run`] with implementations of the function's
    /// external functions, by name. A call of an external without one is
    /// a run error when (and only when) it is executed, as in the
    /// interpreter.
    pub fn run_with(
        &self,
        params: &[i64],
        buffers: &mut [Buffer],
        externals: &HashMap<String, ExternalFn>,
    ) -> Result<(), ExecError> {
        self.run_threads(params, buffers, externals, None)
    }

    /// The number of loops that run on several threads (the outermost
    /// loops marked parallel).
    pub fn parallel_loops(&self) -> usize {
        self.par_loops.len()
    }

    /// The number of functions the body was compiled as: large bodies are
    /// split between top-level statements into parts Cranelift compiles
    /// on all cores, called in order by the entry function (see
    /// `jit::lower`); 1 for a body compiled as one function.
    pub fn parts(&self) -> usize {
        self.fast.parts
    }

    /// [`JitFunction::run_with`] on `threads` threads (`None`: all cores,
    /// rayon's global pool; `Some(1)`: every loop on the calling thread).
    /// The results do not depend on `threads`, bit for bit (see
    /// `jit::parallel`).
    pub fn run_threads(
        &self,
        params: &[i64],
        buffers: &mut [Buffer],
        externals: &HashMap<String, ExternalFn>,
        threads: Option<usize>,
    ) -> Result<(), ExecError> {
        let f = &self.func;
        self.check_params(params)?;
        let (bx, sizes) = boxes(f, params)?;
        if buffers.len() != f.arrays.len() {
            return Err(ExecError::BufferCount {
                expected: f.arrays.len(),
                got: buffers.len(),
            });
        }
        for ((a, buf), &size) in f.arrays.iter().zip(buffers.iter()).zip(&sizes) {
            if buf.ty() != a.ty {
                return Err(ExecError::BufferType {
                    array: a.name.clone(),
                    expected: a.ty.name(),
                    got: buf.ty().name(),
                });
            }
            if buf.len() != size {
                return Err(ExecError::BufferSize {
                    array: a.name.clone(),
                    expected: size,
                    got: buf.len(),
                });
            }
        }
        let compiled = match self.verdict(params, &bx) {
            Verdict::MayOverflow => return Err(ExecError::MayOverflow),
            Verdict::Safe => &self.fast,
            Verdict::NeedsChecks if self.options.checked => &self.fast,
            Verdict::NeedsChecks => self
                .checked
                .get_or_init(|| lower::compile(f, true))
                .as_ref()
                .map_err(|e| ExecError::Jit(e.clone()))?,
        };
        let ptrs: Vec<*mut u8> = buffers.iter_mut().map(base_ptr).collect();
        let par = (!compiled.outlined.is_empty()).then(|| ParallelRun {
            loops: self.par_loops.clone(),
            bodies: compiled.outlined.clone(),
            bufs: ptrs.clone(),
            params: params.to_vec(),
            n_loop_vars: f.loop_vars.len(),
            threads,
        });
        let table = ExternalTable {
            min_parallel_trip: parallel::min_trip(threads),
            work_gated: parallel::work_gated(),
            fns: f
                .externals
                .iter()
                .map(|e| externals.get(&e.name).cloned())
                .collect(),
            par,
        };
        let mut err = [0i64; ERR_SLOT_LEN];
        let mut scratch = Scratch::default();
        // SAFETY: `compiled.code` is a finalized function of the signature
        // `NativeFn` (built by `lower::compile`), whose module is alive as
        // long as `self`. Its arguments are valid: `ptrs` has one base
        // pointer per array, each into a live, exclusively borrowed buffer
        // of the array's element type with exactly the box's element count
        // (checked above); `params` has one value per parameter; `err` has
        // `ERR_SLOT_LEN` slots; `table` lives until the call returns and
        // has one entry per external of `f` (`host_fns::rt_external` checks
        // the index anyway); `scratch` lives until the call returns and is
        // not touched meanwhile but through `scratch::rt_scratch_grow`,
        // called by this invocation only (its parallel chunks have their
        // own); the compiled code accesses a scratch buffer only below the
        // capacity that call reported. The code only accesses buffer elements
        // inside the boxes: affine accesses are proven inside by the
        // interval analysis (`Verdict::Safe`) or checked at run time (the
        // checked variant), data-dependent ones are always checked; affine
        // arithmetic cannot overflow (the analysis did not report
        // `MayOverflow`). It stores only 0/1 into bool buffers. Its
        // parallel loops run their outlined functions (same module, same
        // variant) through `parallel::rt_parallel` on other threads, with
        // the same base pointers and parameters (`table.par`, alive until
        // the call returns, and every chunk has finished before
        // `rt_parallel` returns); they access the cells the sequential loop
        // would, and concurrent chunks disjoint ones (`parallel`'s
        // argument, from the marks `Function::check` proved).
        // `fast` and `checked` are compiled from the same function, so
        // `par_loops` describes the outlined functions of either.
        let code = unsafe {
            let fp: NativeFn = std::mem::transmute::<*const u8, NativeFn>(compiled.code);
            fp(
                ptrs.as_ptr(),
                params.as_ptr(),
                err.as_mut_ptr(),
                &table,
                &mut scratch,
            )
        };
        decode(f, code, &err)
    }
}

fn decode(f: &Function, code: i64, err: &[i64; ERR_SLOT_LEN]) -> Result<(), ExecError> {
    let point = || {
        let n = usize::try_from(err[2]).unwrap_or(0).min(MAX_DIMS);
        err[3..3 + n].to_vec()
    };
    let array = || {
        usize::try_from(err[1])
            .ok()
            .and_then(|a| f.arrays.get(a))
            .map(|a| a.name.clone())
            .unwrap_or_else(|| format!("#{}", err[1]))
    };
    match code {
        status::OK => Ok(()),
        status::OUT_OF_BOUNDS => Err(ExecError::OutOfBounds {
            array: array(),
            point: point(),
        }),
        status::CONTRACT => Err(ExecError::ContractViolation {
            array: array(),
            point: point(),
        }),
        status::DIV_ZERO => Err(ExecError::DivisionByZero),
        status::PARALLEL_FAILED => Err(ExecError::ParallelFailed),
        status::NO_SCRATCH => Err(ExecError::NoScratch {
            array: array(),
            point: point(),
        }),
        status::OVERFLOW => Err(ExecError::Overflow),
        status::BAD_RNG_ARG => Err(ExecError::BadDistributionArgument),
        status::BAD_CATEGORICAL => Err(ExecError::BadCategorical {
            array: array(),
            point: point(),
        }),
        status::SELECTION => {
            let targets = f.selection_targets();
            let (var, index) = usize::try_from(err[1])
                .ok()
                .and_then(|t| targets.get(t))
                .map_or(("?".to_string(), "?".to_string()), |(v, i)| {
                    (v.to_string(), i.to_string())
                });
            Err(ExecError::SelectionOutOfRange {
                var,
                index,
                value: err[3],
                lower: err[4],
                upper: err[5],
            })
        }
        status::EXTERNAL_MISSING | status::EXTERNAL_PANICKED => {
            let name = usize::try_from(err[1])
                .ok()
                .and_then(|i| f.externals.get(i))
                .map(|e| e.name.clone())
                .unwrap_or_else(|| format!("#{}", err[1]));
            Err(if code == status::EXTERNAL_MISSING {
                ExecError::ExternalMissing(name)
            } else {
                ExecError::ExternalPanicked(name)
            })
        }
        other => Err(ExecError::UnknownStatus(other)),
    }
}
