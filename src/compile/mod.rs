//! The library API of the native path: source text → checked IR →
//! (optionally) SDR-optimized IR → sequential schedule → loop program
//! (`codegen::scan`) → native code (`jit`), compiled once and run many
//! times.
//!
//! # Layout contract
//! `Compiled::run` takes and returns `runtime::Array`s exactly as the
//! interpreter does (`interp::run`): one array per input / output
//! variable, dense row-major over the variable's integer bounding box
//! (`ArraySpec::of_domain`). The JIT's buffers are over a symbolic box
//! (affine in the parameters, proven to contain the domain) that may be
//! larger; values are copied point by point between the two, for the points
//! of the variable's domain. Output points of the box outside the domain
//! are zero (`0`, `0.0`, `false`), as in the interpreter.
//!
//! Compiled code is cached per thread (`JitFunction` holds raw code
//! pointers and is neither `Send` nor `Sync`), keyed by a hash of the
//! source text and the options.
//!
//! Storage: after scanning, the locals are stored in fewer cells when the
//! schedule allows it (`codegen::storage::map_storage`, called right
//! after `scan::scan_system` and before `opt::optimize`; the
//! [`StorageMap`] is kept beside the loop program, printed by [`emit`]
//! and used by [`Compiled::array_bytes`]). Only locals are mapped, and
//! only inputs and outputs are ever copied between the JIT's buffers and
//! `runtime::Array`s (`load_array`, `store_array`), so no mapped array is
//! read back as if it had its full box.
//!
//! Owns: the pipeline glue, the cache and the buffer conversion. Must not
//! know about Cranelift details or the scanning algorithm.

use crate::codegen::loop_ast::Function;
use crate::codegen::opt::{self, OptError};
use crate::codegen::scan::{self, ScanError};
use crate::codegen::storage::{self, StorageMap};
use crate::deps::{self, DepsError};
use crate::diag::{Diagnostic, SourceFile};
use crate::ir::{self, InputError, VarKind};
use crate::jit::{self, Buffer, JitFunction, JitOptions};
use crate::runtime::{Array, ArrayData, ArraySpec, ExternalFn, RuntimeError};
use crate::schedule::Scheduler;
use crate::sdr::complexity::ComplexityReport;
use crate::sdr::{self, Decision};
use std::cell::RefCell;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

mod sweep;
pub use sweep::{Sweeper, Trace};

/// Compilation options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Apply the SDR optimizer (`sdr::optimize` with the Pluto scheduler).
    pub optimize: bool,
    /// The scheduler of the final (sequential) schedule.
    pub scheduler: Scheduler,
    /// The system to compile (`None`: the first one).
    pub system: Option<String>,
    /// Bounds-check every access (tests).
    pub checked: bool,
    /// Store locals in fewer cells when the schedule allows it
    /// (`codegen::storage`).
    pub map_storage: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            optimize: true,
            scheduler: Scheduler::Pluto,
            system: None,
            checked: false,
            map_storage: true,
        }
    }
}

/// A compilation error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CompileError {
    /// Errors in the source (parse, types, domains), with the source.
    #[error("{} error(s) in {}", .diagnostics.len(), .file.name)]
    Source {
        diagnostics: Vec<Diagnostic>,
        file: SourceFile,
    },
    #[error("no system named `{0}`")]
    NoSystem(String),
    #[error("optimizer: {0}")]
    Optimize(sdr::OptimizeError),
    #[error("scheduling: {0}")]
    Deps(DepsError),
    #[error("code generation: {0}")]
    Scan(ScanError),
    #[error("loop optimization: {0}")]
    LoopOpt(OptError),
    #[error("JIT: {0}")]
    Jit(jit::JitError),
    /// The cost of the generated loops could not be computed.
    #[error("cost of the generated code: {0}")]
    Cost(String),
}

/// A run error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// Parameters, inputs or arrays rejected before running.
    #[error("{0}")]
    Input(#[from] InputError),
    #[error("{0}")]
    Runtime(RuntimeError),
    /// An error of the compiled code (e.g. an out-of-domain indirect read,
    /// naming the variable and point).
    #[error("{0}")]
    Jit(jit::ExecError),
}

struct Inner {
    program: ir::Program,
    system: usize,
    decisions: Vec<Decision>,
    /// The compiled system's cost before and after optimization.
    complexity: Option<ComplexityReport>,
    /// The storage mapping applied to the loop program.
    storage: StorageMap,
    jit: JitFunction,
}

/// A compiled system: cheap to clone, not `Send` (native code is cached
/// per thread).
#[derive(Clone)]
pub struct Compiled {
    inner: Rc<Inner>,
    /// Threads its parallel loops run on (`None`: all cores); see
    /// [`Compiled::with_threads`].
    threads: Option<usize>,
}

thread_local! {
    static CACHE: RefCell<HashMap<u64, Rc<Inner>>> = RefCell::new(HashMap::new());
}

/// Parses and checks `src`.
pub fn parse_program(src: &str) -> Result<ir::Program, CompileError> {
    let _t = crate::timing::phase("parse and check");
    let file = SourceFile::new("<source>", src);
    let ast = crate::syntax::parse(&file).map_err(|d| CompileError::Source {
        diagnostics: d,
        file: file.clone(),
    })?;
    ir::lower::lower(&ast, &file).map_err(|d| CompileError::Source {
        diagnostics: d,
        file: file.clone(),
    })
}

fn system_index(program: &ir::Program, system: Option<&str>) -> Result<usize, CompileError> {
    match system {
        None if !program.systems.is_empty() => Ok(0),
        None => Err(CompileError::NoSystem("<any>".into())),
        Some(n) => program
            .systems
            .iter()
            .position(|s| s.name == n)
            .ok_or_else(|| CompileError::NoSystem(n.to_string())),
    }
}

/// The loop program of a checked program's system (scheduled with
/// `options.scheduler`, after SDR when `options.optimize`), and the
/// program it was generated from with the optimizer's decisions.
pub fn loop_program(
    program: &ir::Program,
    options: &Options,
) -> Result<(Function, ir::Program, Vec<Decision>), CompileError> {
    let l = lower(program, options)?;
    Ok((l.function, l.program, l.decisions))
}

/// The cost of the loop program of `options.system` as it will run
/// (`codegen::opt::loop_cost`: loop iterations and statement executions
/// after SDR, storage mapping and the loop rewrites, scatter loops and
/// sparse updates included), as an asymptotic complexity.
pub fn generated_cost(
    program: &ir::Program,
    options: &Options,
) -> Result<crate::poly::complexity::Complexity, CompileError> {
    let l = lower(program, options)?;
    opt::loop_cost(&l.function).map_err(|e| CompileError::Cost(e.to_string()))
}

/// What [`lower`] makes of a program.
struct Lowered {
    function: Function,
    /// The program the loop program was generated from (after SDR).
    program: ir::Program,
    decisions: Vec<Decision>,
    /// The compiled system's complexity report before and after
    /// optimization (`None` without optimization, or when the cost cannot
    /// be computed: it is information, never a reason to fail).
    complexity: Option<ComplexityReport>,
    storage: StorageMap,
}

/// Optimize (when asked), schedule, scan, map storage (when asked) and
/// optimize the loops of the system `options.system` of `original`.
fn lower(whole: &ir::Program, options: &Options) -> Result<Lowered, CompileError> {
    // Only the compiled system is optimized and scheduled (the others of
    // the file, such as a sampler's data generator, cost time and are not
    // run); it is system 0 of `original`.
    let chosen = system_index(whole, options.system.as_deref())?;
    let original = &whole
        .only_system(chosen)
        .ok_or_else(|| CompileError::NoSystem(chosen.to_string()))?;
    let index = 0;
    let (program, decisions, verified, complexity) = if options.optimize {
        let o = sdr::optimize(original, Scheduler::Pluto).map_err(CompileError::Optimize)?;
        let t = crate::timing::phase("complexity report");
        let report = sdr::complexity::report_systems(original, &o, Some(index)).ok();
        drop(t);
        (o.program, o.decisions, Some(o.schedule), report)
    } else {
        (original.clone(), Vec::new(), None, None)
    };
    // The optimizer's verification already scheduled the optimized program
    // with Pluto: reuse that schedule when it is the one asked for.
    let sched = match verified {
        Some(s) if options.scheduler == Scheduler::Pluto => s,
        _ => {
            let _t = crate::timing::phase("schedule");
            deps::schedule_program(&program, options.scheduler).map_err(CompileError::Deps)?
        }
    };
    let s = sched
        .systems
        .get(index)
        .ok_or_else(|| CompileError::NoSystem(index.to_string()))?;
    let t = crate::timing::phase("scan");
    let mut f = scan::scan_system(&program, index, s).map_err(CompileError::Scan)?;
    drop(t);
    let t = crate::timing::phase("storage mapping");
    let storage = if options.map_storage {
        let sys = program
            .systems
            .get(index)
            .ok_or_else(|| CompileError::NoSystem(index.to_string()))?;
        storage::map_storage(&mut f, sys, s).map_err(CompileError::Scan)?
    } else {
        StorageMap::default()
    };
    drop(t);
    let t = crate::timing::phase("loop rewrites");
    let mut f = opt::optimize(&f).map_err(CompileError::LoopOpt)?;
    drop(t);
    // Last: the marks are proven on the final loop program (storage
    // mapping and the loop rewrites may add dependences the schedule's
    // coincidence does not see).
    crate::codegen::loop_ast::parallel::mark_parallel(&mut f);
    Ok(Lowered {
        function: f,
        program,
        decisions,
        complexity,
        storage,
    })
}

/// The loop program of `system` as C-like text (`alphac emit`), after
/// one comment line per array whose storage was mapped (e.g.
/// `// storage of C_red: [k, i] -> [k] (in place along i)`).
pub fn emit(
    program: &ir::Program,
    system: &str,
    options: &Options,
) -> Result<String, CompileError> {
    let o = Options {
        system: Some(system.to_string()),
        ..options.clone()
    };
    let l = lower(program, &o)?;
    Ok(format!(
        "{}{}",
        l.storage.comment_lines(),
        l.function.to_c()
    ))
}

/// Parse, check, optimize (when `options.optimize`), schedule, scan and
/// JIT-compile `src`; cached per thread by (source, options).
pub fn compile(src: &str, options: &Options) -> Result<Compiled, CompileError> {
    cached(src, options, || build(src, options))
}

/// [`compile`] of `program`, the program `src` parses and checks to (the
/// caller already has it: the CLI checks a file before running it), so
/// that the source is not parsed and checked again; cached with
/// [`compile`]'s entries (by the source and the options).
pub fn compile_program(
    src: &str,
    program: &ir::Program,
    options: &Options,
) -> Result<Compiled, CompileError> {
    cached(src, options, || build_program(program, options))
}

/// The cached compilation of `src` with `options`, made by `make` when
/// missing.
fn cached(
    src: &str,
    options: &Options,
    make: impl FnOnce() -> Result<Inner, CompileError>,
) -> Result<Compiled, CompileError> {
    let mut h = DefaultHasher::new();
    src.hash(&mut h);
    options.optimize.hash(&mut h);
    format!("{:?}", options.scheduler).hash(&mut h);
    options.system.hash(&mut h);
    options.checked.hash(&mut h);
    options.map_storage.hash(&mut h);
    let key = h.finish();
    if let Some(inner) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(Compiled {
            inner,
            threads: None,
        });
    }
    let inner = Rc::new(make()?);
    CACHE.with(|c| c.borrow_mut().insert(key, inner.clone()));
    Ok(Compiled {
        inner,
        threads: None,
    })
}

/// [`compile`] without the cache (every call parses, schedules, scans and
/// generates native code again; for measuring compile latency).
pub fn compile_uncached(src: &str, options: &Options) -> Result<Compiled, CompileError> {
    Ok(Compiled {
        inner: Rc::new(build(src, options)?),
        threads: None,
    })
}

fn build(src: &str, options: &Options) -> Result<Inner, CompileError> {
    build_program(&parse_program(src)?, options)
}

fn build_program(parsed: &ir::Program, options: &Options) -> Result<Inner, CompileError> {
    let Lowered {
        function: f,
        program,
        decisions,
        complexity,
        storage,
    } = lower(parsed, options)?;
    let system = system_index(&program, options.system.as_deref())?;
    let t = crate::timing::phase("native code (Cranelift)");
    let jit = JitFunction::compile_with(
        &f,
        JitOptions {
            checked: options.checked,
        },
    )
    .map_err(CompileError::Jit)?;
    drop(t);
    Ok(Inner {
        program,
        system,
        decisions,
        complexity,
        storage,
        jit,
    })
}

/// Calls `f` on every point of the box `lo ..= hi` (row-major order).
fn for_box(
    lo: &[i64],
    hi: &[i64],
    mut f: impl FnMut(&[i64]) -> Result<(), RunError>,
) -> Result<(), RunError> {
    if lo.iter().zip(hi).any(|(l, h)| l > h) {
        return Ok(());
    }
    let mut p = lo.to_vec();
    loop {
        f(&p)?;
        let mut k = p.len();
        loop {
            if k == 0 {
                return Ok(());
            }
            k -= 1;
            if p[k] < hi[k] {
                p[k] += 1;
                break;
            }
            p[k] = lo[k];
        }
    }
}

/// Offset of `p` in a JIT box, if inside.
fn jit_offset(bx: &[(i64, i64)], p: &[i64]) -> Option<usize> {
    let mut off: i128 = 0;
    for (&(lo, ext), &x) in bx.iter().zip(p) {
        let d = i128::from(x) - i128::from(lo);
        if d < 0 || d >= i128::from(ext) {
            return None;
        }
        off = off * i128::from(ext) + d;
    }
    usize::try_from(off).ok()
}

impl Compiled {
    /// The JIT's parameters: the system's, then (for a system with random
    /// draws) the seed's bits as an `i64`.
    fn jit_params(&self, params: &[i64], seed: u64) -> Vec<i64> {
        let mut jit_params = params.to_vec();
        if self.inner.jit.function().params.len() == params.len() + 1 {
            jit_params.push(seed as i64);
        }
        jit_params
    }

    /// The same compiled system, running its parallel loops (the loops
    /// `alphac emit` marks `#pragma parallel`) on `threads` threads:
    /// `None` (the default) uses all cores, `Some(1)` runs every loop on
    /// the calling thread. Results, random draws included, are identical
    /// for every number of threads (`jit::parallel`).
    pub fn with_threads(mut self, threads: Option<usize>) -> Compiled {
        self.threads = threads;
        self
    }

    /// The threads the parallel loops run on (`None`: all cores).
    pub fn threads(&self) -> Option<usize> {
        self.threads
    }

    /// The number of loops that run on several threads.
    pub fn parallel_loops(&self) -> usize {
        self.inner.jit.parallel_loops()
    }

    /// The number of functions the native code's body was compiled as
    /// ([`JitFunction::parts`]).
    pub fn native_parts(&self) -> usize {
        self.inner.jit.parts()
    }

    /// The IR that was compiled (after optimization).
    pub fn program(&self) -> &ir::Program {
        &self.inner.program
    }
    /// The compiled system.
    pub fn system(&self) -> &ir::System {
        &self.inner.program.systems[self.inner.system]
    }
    /// The optimizer's decisions (empty without optimization).
    pub fn decisions(&self) -> &[Decision] {
        &self.inner.decisions
    }
    /// The compiled system's cost before and after optimization (`None`
    /// when compiled without optimization).
    pub fn complexity(&self) -> Option<&ComplexityReport> {
        self.inner.complexity.as_ref()
    }
    /// The loop program.
    pub fn function(&self) -> &Function {
        self.inner.jit.function()
    }
    /// The storage mapping applied to the loop program.
    pub fn storage(&self) -> &StorageMap {
        &self.inner.storage
    }

    /// The bytes every array of the loop program allocates for `params`
    /// (in the system's order; `seed` only completes the JIT's
    /// parameters): element size × cells of its box, and for a mapped
    /// array what its unmapped box would have taken.
    pub fn array_bytes(&self, params: &[i64], seed: u64) -> Result<Vec<ArrayBytes>, RunError> {
        let jit = &self.inner.jit;
        let f = jit.function();
        let jit_params = self.jit_params(params, seed);
        let boxes = jit.boxes(&jit_params).map_err(RunError::Jit)?;
        let shape = |dims: &[crate::codegen::loop_ast::Dim]| -> String {
            dims.iter()
                .map(|d| format!("[{}]", f.affine_to_c(&d.extent)))
                .collect()
        };
        let mut out = Vec::new();
        for (k, (a, bx)) in f.arrays.iter().zip(&boxes).enumerate() {
            let size = elem_size(a.ty);
            let cells = bx
                .iter()
                .fold(1u128, |c, &(_, e)| c.saturating_mul(e.max(0) as u128));
            let was = match self.inner.storage.get(k) {
                Some(m) if m.storage.name == a.name => {
                    let mut old = 1u128;
                    for d in &m.original {
                        let e = d.extent.eval(&[], &jit_params).unwrap_or(i64::MAX);
                        old = old.saturating_mul(e.max(0) as u128);
                    }
                    Some((shape(&m.original), old.saturating_mul(size)))
                }
                _ => None,
            };
            out.push(ArrayBytes {
                name: a.name.clone(),
                shape: shape(&a.dims),
                bytes: cells.saturating_mul(size),
                was,
            });
        }
        Ok(out)
    }

    /// Runs with parameters by name (see [`Compiled::run`]).
    pub fn run_named(
        &self,
        params: &HashMap<String, i64>,
        inputs: &HashMap<String, Array>,
        seed: u64,
    ) -> Result<HashMap<String, Array>, RunError> {
        let p = self.system().resolve_params(params)?;
        self.run(&p, inputs, seed)
    }

    /// Runs the compiled system for `params` (in the system's order) on
    /// `inputs` (arrays as the interpreter takes them; see the module
    /// comment), returning one array per output. `seed` keys the random
    /// draws exactly as in the interpreter (`runtime::rng`).
    pub fn run(
        &self,
        params: &[i64],
        inputs: &HashMap<String, Array>,
        seed: u64,
    ) -> Result<HashMap<String, Array>, RunError> {
        self.run_with(params, inputs, seed, &HashMap::new())
    }

    /// [`Compiled::run`] with implementations of the program's `external`
    /// functions, by name (as `interp::Options::externals`). Calling an
    /// external without implementation is a run error, raised when the
    /// call executes.
    pub fn run_with(
        &self,
        params: &[i64],
        inputs: &HashMap<String, Array>,
        seed: u64,
        externals: &HashMap<String, ExternalFn>,
    ) -> Result<HashMap<String, Array>, RunError> {
        let loaded = self.loaded_buffers(params, Inputs::Borrowed(inputs), seed)?;
        self.run_loaded(params, loaded, externals)
    }

    /// [`Compiled::run`] taking the inputs by value: an input whose array
    /// has exactly its buffer's box moves into it instead of being copied
    /// (the caller's memory is the native code's).
    pub fn run_owned(
        &self,
        params: &[i64],
        inputs: HashMap<String, Array>,
        seed: u64,
    ) -> Result<HashMap<String, Array>, RunError> {
        let loaded = self.loaded_buffers(params, Inputs::Owned(inputs), seed)?;
        self.run_loaded(params, loaded, &HashMap::new())
    }

    /// Runs the native code on loaded buffers; the outputs.
    fn run_loaded(
        &self,
        params: &[i64],
        (jit_params, boxes, mut bufs): Loaded,
        externals: &HashMap<String, ExternalFn>,
    ) -> Result<HashMap<String, Array>, RunError> {
        let sys = self.system();
        let jit = &self.inner.jit;
        jit.run_threads(&jit_params, &mut bufs, externals, self.threads)
            .map_err(RunError::Jit)?;
        let mut out = HashMap::new();
        for (id, var) in sys.vars.iter().enumerate() {
            if var.kind != VarKind::Output {
                continue;
            }
            out.insert(
                var.name.clone(),
                store_array(var, params, &boxes[id], &bufs[id])?,
            );
        }
        Ok(out)
    }

    /// The JIT's parameters (`params` then the seed), the arrays' boxes,
    /// and buffers for every array with `inputs` loaded (checked: the
    /// parameters within the context, every input given, nothing else).
    pub(crate) fn loaded_buffers(
        &self,
        params: &[i64],
        inputs: Inputs<'_>,
        seed: u64,
    ) -> Result<Loaded, RunError> {
        let sys = self.system();
        sys.check_params(params)?;
        let jit = &self.inner.jit;
        let jit_params = self.jit_params(params, seed);
        let boxes = jit.boxes(&jit_params).map_err(RunError::Jit)?;
        // Owned inputs fill their own buffers (`move_array`).
        let owned = matches!(inputs, Inputs::Owned(_));
        let is_input = |k: usize| sys.vars.get(k).is_some_and(|v| v.kind == VarKind::Input);
        let mut bufs = jit
            .zeroed_buffers_except(&jit_params, |k| owned && is_input(k))
            .map_err(RunError::Jit)?;
        let mut inputs = inputs;
        match &inputs {
            Inputs::Borrowed(m) => sys.check_input_names(m.keys())?,
            Inputs::Owned(m) => sys.check_input_names(m.keys())?,
        }
        for (id, var) in sys.vars.iter().enumerate() {
            if var.kind != VarKind::Input {
                continue;
            }
            let missing = || InputError::MissingInput(var.name.clone());
            let (bx, buf) = (&boxes[id], &mut bufs[id]);
            match &mut inputs {
                Inputs::Borrowed(m) => {
                    load_array(var, params, m.get(&var.name).ok_or_else(missing)?, bx, buf)?
                }
                Inputs::Owned(m) => move_array(
                    var,
                    params,
                    m.remove(&var.name).ok_or_else(missing)?,
                    bx,
                    buf,
                )?,
            }
        }
        Ok((jit_params, boxes, bufs))
    }
}

/// The inputs of a run: borrowed (copied into the native code's buffers)
/// or owned (moved into them where the layouts agree, see
/// [`move_array`]).
pub(crate) enum Inputs<'a> {
    Borrowed(&'a HashMap<String, Array>),
    Owned(HashMap<String, Array>),
}

/// [`load_array`] for an array given by value into the empty buffer
/// `buf` of its type: when its box is exactly the buffer's box `bx` (same
/// lower corner and extents; the element type is checked first), its
/// elements become the buffer without a copy and the points of the box
/// outside `var`'s domain are zeroed (as in a loaded buffer); otherwise
/// the buffer is allocated with zeros and the array copied point by
/// point.
fn move_array(
    var: &ir::Variable,
    params: &[i64],
    a: Array,
    bx: &[(i64, i64)],
    buf: &mut Buffer,
) -> Result<(), RunError> {
    let spec =
        ArraySpec::of_domain(&var.name, var.ty, &var.domain, params).map_err(RunError::Runtime)?;
    spec.check_array(&a).map_err(RunError::Runtime)?;
    // `a` has the spec's shape (checked), so its box is the spec's.
    if !same_box(bx, &spec.lo, &spec.hi) || a.ty() != buf.ty() {
        // The box's size was accepted when the buffers were sized
        // (`JitFunction::boxes`), so the product fits.
        let len = bx
            .iter()
            .try_fold(1usize, |n, &(_, e)| {
                n.checked_mul(usize::try_from(e.max(0)).ok()?)
            })
            .ok_or_else(|| RunError::Jit(crate::jit::ExecError::TooLarge(var.name.clone())))?;
        *buf = Buffer::try_zeros(buf.ty(), len)
            .map_err(|_| RunError::Jit(crate::jit::ExecError::TooLarge(var.name.clone())))?;
        return load_array(var, params, &a, bx, buf);
    }
    *buf = a.into_data();
    if var.domain.contains_box(params, &spec.lo, &spec.hi) {
        // No point of the box is outside the domain.
        return Ok(());
    }
    for_box(&spec.lo, &spec.hi, |p| {
        if var.domain.contains(params, p) {
            return Ok(());
        }
        if let Some(off) = jit_offset(bx, p) {
            match &mut *buf {
                Buffer::Int(d) => d[off] = 0,
                Buffer::Float(d) => d[off] = 0.0,
                Buffer::Bool(d) => d[off] = false,
            }
        }
        Ok(())
    })
}

/// The memory of one array of a compiled loop program for given
/// parameters ([`Compiled::array_bytes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayBytes {
    pub name: String,
    /// The symbolic extents of its box, e.g. `[K][N]`.
    pub shape: String,
    /// Element size × cells of its box.
    pub bytes: u128,
    /// For a mapped array: the unmapped box's extents and bytes.
    pub was: Option<(String, u128)>,
}

/// Bytes per element of a JIT buffer of type `ty` (`i64`, `f64`, `bool`).
fn elem_size(ty: crate::codegen::loop_ast::ElemType) -> u128 {
    use crate::codegen::loop_ast::ElemType;
    match ty {
        ElemType::Int | ElemType::Float => 8,
        ElemType::Bool => 1,
    }
}

/// What [`Compiled::loaded_buffers`] returns: the JIT's parameters, the
/// arrays' boxes (per dimension `(lower, extent)`), the buffers.
pub(crate) type Loaded = (Vec<i64>, Vec<Vec<(i64, i64)>>, Vec<Buffer>);

/// Copies `a` (an array of `var` as the interpreter takes it) into the
/// JIT buffer `buf` over the box `bx`, point by point for the points of
/// `var`'s domain; checks the array's type and shape first.
fn load_array(
    var: &ir::Variable,
    params: &[i64],
    a: &Array,
    bx: &[(i64, i64)],
    buf: &mut Buffer,
) -> Result<(), RunError> {
    let spec =
        ArraySpec::of_domain(&var.name, var.ty, &var.domain, params).map_err(RunError::Runtime)?;
    spec.check_array(a).map_err(RunError::Runtime)?;
    // Every point of a box domain's box is in it: no test per point.
    let whole = var.domain.contains_box(params, &spec.lo, &spec.hi);
    if whole && same_box(bx, &spec.lo, &spec.hi) && buf.ty() == a.ty() && buf.len() == a.len() {
        // The array is the buffer, row-major over the same box.
        buf.clone_from(a.data());
        return Ok(());
    }
    // `a` has the spec's shape; its own lower corner may differ, so its
    // elements are addressed from the spec's (no copy of `a`).
    for_box(&spec.lo, &spec.hi, |p| {
        if !whole && !var.domain.contains(params, p) {
            return Ok(());
        }
        let Some(off) = jit_offset(bx, p) else {
            return Ok(());
        };
        let src = a.offset_in_box_at(&spec.lo, p).map_err(RunError::Runtime)?;
        match (&mut *buf, a.data()) {
            (Buffer::Int(d), ArrayData::Int(s)) => d[off] = s[src],
            (Buffer::Float(d), ArrayData::Float(s)) => d[off] = s[src],
            (Buffer::Bool(d), ArrayData::Bool(s)) => d[off] = s[src],
            _ => {}
        }
        Ok(())
    })
}

/// The JIT box `bx` (per dimension `(lower, extent)`) is the box from
/// `lo` to `hi`.
fn same_box(bx: &[(i64, i64)], lo: &[i64], hi: &[i64]) -> bool {
    bx.len() == lo.len()
        && bx
            .iter()
            .zip(lo.iter().zip(hi))
            .all(|(&(b, ext), (&l, &h))| b == l && h.checked_sub(l) == ext.checked_sub(1))
}

/// The array of `var` (over its bounding box, as the interpreter returns
/// it) read from the JIT buffer `buf` over the box `bx`; points of the box
/// outside the domain are zero.
fn store_array(
    var: &ir::Variable,
    params: &[i64],
    bx: &[(i64, i64)],
    buf: &Buffer,
) -> Result<Array, RunError> {
    let spec =
        ArraySpec::of_domain(&var.name, var.ty, &var.domain, params).map_err(RunError::Runtime)?;
    // Every point of a box domain's box is in it: no test per point.
    let whole = var.domain.contains_box(params, &spec.lo, &spec.hi);
    if whole && same_box(bx, &spec.lo, &spec.hi) && buf.ty() == var.ty {
        // The buffer is the array, row-major over the same box (its
        // length is the box's: checked by `from_data`, else copied below).
        if let Ok(a) = Array::from_data(&spec, buf.clone()) {
            return Ok(a);
        }
    }
    let mut a = Array::zeros(&spec).map_err(RunError::Runtime)?;
    let hi = a.hi();
    let lo = a.lo().to_vec();
    for_box(&lo, &hi, |p| {
        if !whole && !var.domain.contains(params, p) {
            return Ok(());
        }
        let Some(off) = jit_offset(bx, p) else {
            return Ok(());
        };
        let dst = a.offset(p).map_err(RunError::Runtime)?;
        match buf {
            Buffer::Int(s) => {
                if let Some(d) = a.ints_mut() {
                    d[dst] = s[off];
                }
            }
            Buffer::Float(s) => {
                if let Some(d) = a.floats_mut() {
                    d[dst] = s[off];
                }
            }
            Buffer::Bool(s) => {
                if let Some(d) = a.bools_mut() {
                    d[dst] = s[off];
                }
            }
        }
        Ok(())
    })?;
    Ok(a)
}
