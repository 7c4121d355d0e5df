//! The Python extension module `alphac._alphac` (the `python` feature,
//! built by maturin; the package around it is `python/alphac/`):
//! `compile` a program from source text, then run it on numpy arrays,
//! once or sweep after sweep.
//!
//! Errors are Python exceptions carrying alphac's own text: a source
//! error is a `CompileError` with the rendered diagnostics (file, line,
//! column, caret), parameters or inputs that a system refuses and errors
//! of the running code are a `RunError`; both derive from `AlphaError`.
//!
//! Owns: the Python classes and the mapping of errors to exceptions.
//! Must not know about: how a program is compiled or run (it calls
//! `compile` and `runtime` like any other client of the library).

mod convert;
mod sampler;

use crate::codegen::opt::loop_cost;
use crate::compile::{self, Compiled, Options};
use crate::diag::{render_all, SourceFile};
use crate::ir::{self, VarKind};
use crate::runtime::{Array, ArraySpec};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sampler::Sampler;
use std::collections::HashMap;

create_exception!(
    alphac,
    AlphaError,
    PyException,
    "An error reported by alphac."
);
create_exception!(
    alphac,
    CompileError,
    AlphaError,
    "The program does not compile: its text is alphac's diagnostics."
);
create_exception!(
    alphac,
    RunError,
    AlphaError,
    "A run was refused (parameters, inputs) or failed (an error of the running code)."
);

/// A compiled system.
#[pyclass(unsendable, module = "alphac", name = "Program")]
pub struct Program {
    compiled: Compiled,
    /// The checked program as parsed (for `emit`).
    parsed: ir::Program,
    options: Options,
}

/// The system compiled when none is named: the one named `stem` (the
/// file's name without `.alpha`), else the first.
fn default_system(program: &ir::Program, stem: Option<&str>) -> PyResult<String> {
    if let Some(s) = stem.and_then(|st| program.systems.iter().find(|s| s.name == st)) {
        return Ok(s.name.clone());
    }
    program
        .systems
        .first()
        .map(|s| s.name.clone())
        .ok_or_else(|| CompileError::new_err("the program defines no system"))
}

/// A compile error as a Python exception: source errors rendered against
/// `file_name`; a dependence cycle and an unsupported construct are the
/// user's; anything else is an internal error.
fn compile_err(e: compile::CompileError, file_name: &str) -> PyErr {
    use compile::CompileError as C;
    match e {
        C::Source { diagnostics, file } => {
            let named = SourceFile::new(file_name, &file.text);
            CompileError::new_err(render_all(&diagnostics, &named).trim_end().to_string())
        }
        C::NoSystem(s) => CompileError::new_err(format!("no system named {s}")),
        C::Deps(d @ crate::deps::DepsError::Cycle { .. })
        | C::Optimize(crate::sdr::OptimizeError::Deps(d @ crate::deps::DepsError::Cycle { .. })) => {
            CompileError::new_err(d.to_string())
        }
        C::Scan(crate::codegen::scan::ScanError::Unsupported(why)) => CompileError::new_err(
            format!("the code generator does not support this program: {why}"),
        ),
        other => AlphaError::new_err(format!("internal error (a bug in alphac): {other}")),
    }
}

/// Compiles the system `system` (default: the one named like the file,
/// else the first) of the program `source`, named `file_name` in
/// messages.
#[pyfunction]
#[pyo3(signature = (source, file_name = "<source>", system = None, optimize = true, threads = None))]
fn compile_source(
    source: &str,
    file_name: &str,
    system: Option<String>,
    optimize: bool,
    threads: Option<usize>,
) -> PyResult<Program> {
    if threads == Some(0) {
        return Err(CompileError::new_err("threads must be at least 1"));
    }
    let parsed = compile::parse_program(source).map_err(|e| compile_err(e, file_name))?;
    let stem = std::path::Path::new(file_name)
        .file_stem()
        .and_then(|s| s.to_str());
    let system = match system {
        Some(s) => {
            if !parsed.systems.iter().any(|x| x.name == s) {
                let names: Vec<&str> = parsed.systems.iter().map(|x| x.name.as_str()).collect();
                return Err(CompileError::new_err(format!(
                    "no system named {s} (systems: {})",
                    names.join(", ")
                )));
            }
            s
        }
        None => default_system(&parsed, stem)?,
    };
    let options = Options {
        optimize,
        system: Some(system),
        ..Options::default()
    };
    let compiled = compile::compile(source, &options)
        .map_err(|e| compile_err(e, file_name))?
        .with_threads(threads);
    Ok(Program {
        compiled,
        parsed,
        options,
    })
}

/// Parameter values from a dictionary, in the system's order.
fn params_of(sys: &ir::System, params: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<i64>> {
    let mut values = HashMap::new();
    if let Some(d) = params {
        for (k, v) in d.iter() {
            let name: String = k.extract()?;
            let value: i64 = v
                .extract()
                .map_err(|_| RunError::new_err(format!("parameter {name}: expected an integer")))?;
            values.insert(name, value);
        }
    }
    let p = sys
        .resolve_params(&values)
        .map_err(|e| RunError::new_err(e.to_string()))?;
    sys.check_params(&p)
        .map_err(|e| RunError::new_err(e.to_string()))?;
    Ok(p)
}

/// The inputs of `sys` for `params` from a dictionary of arrays: every
/// input given, nothing else.
fn inputs_of(
    py: Python<'_>,
    sys: &ir::System,
    params: &[i64],
    inputs: Option<&Bound<'_, PyDict>>,
) -> PyResult<HashMap<String, Array>> {
    let specs: Vec<ArraySpec> = crate::interp::specs(sys, params, VarKind::Input)
        .map_err(|e| RunError::new_err(e.to_string()))?;
    let mut out = HashMap::new();
    if let Some(d) = inputs {
        for (k, v) in d.iter() {
            let name: String = k.extract()?;
            let spec = specs.iter().find(|s| s.name == name).ok_or_else(|| {
                RunError::new_err(format!("{name} is not an input of system {}", sys.name))
            })?;
            out.insert(name, convert::input_array(py, &v, spec)?);
        }
    }
    if let Some(s) = specs.iter().find(|s| !out.contains_key(&s.name)) {
        return Err(RunError::new_err(format!("missing input {}", s.name)));
    }
    Ok(out)
}

#[pymethods]
impl Program {
    /// The compiled system's name.
    #[getter]
    fn name(&self) -> String {
        self.compiled.system().name.clone()
    }

    /// The parameters' names, in the system's order.
    #[getter]
    fn params(&self) -> Vec<String> {
        self.compiled.system().params.clone()
    }

    /// The inputs: name → numpy dtype name, in declaration order.
    #[getter]
    fn inputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.vars_of(py, VarKind::Input)
    }

    /// The outputs: name → numpy dtype name, in declaration order.
    #[getter]
    fn outputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.vars_of(py, VarKind::Output)
    }

    /// The shape of an input's or output's array for `params`; index 0
    /// of each dimension is the lower bound of the variable's domain
    /// (see `bounds`).
    #[pyo3(signature = (name, params = None))]
    fn shape(&self, name: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<usize>> {
        let spec = self.spec(name, params)?;
        spec.shape().map_err(|e| RunError::new_err(e.to_string()))
    }

    /// The bounding box of a variable's domain for `params`: one
    /// `(lo, hi)` per dimension (the array's index `i` is the point
    /// `lo + i`).
    #[pyo3(signature = (name, params = None))]
    fn bounds(&self, name: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(i64, i64)>> {
        let spec = self.spec(name, params)?;
        Ok(spec
            .lo
            .iter()
            .copied()
            .zip(spec.hi.iter().copied())
            .collect())
    }

    /// The complexity report, as `alphac complexity --system NAME` prints
    /// it: each equation's cost before → after, the total, and the cost
    /// of the generated loops.
    fn complexity(&self) -> String {
        let mut text = match self.compiled.complexity() {
            Some(r) => r.to_string(),
            None => String::new(),
        };
        match loop_cost(self.compiled.function()) {
            Ok(c) => text.push_str(&format!("generated code (upper bound): {c}\n")),
            Err(e) => text.push_str(&format!("generated code (upper bound): unknown ({e})\n")),
        }
        text
    }

    /// The generated loop code (C-like), as `alphac emit` prints it.
    fn emit(&self) -> PyResult<String> {
        let name = self.name();
        compile::emit(&self.parsed, &name, &self.options).map_err(|e| compile_err(e, &name))
    }

    /// The optimizer's decisions, in the order they were taken (what
    /// `alphac optimize --explain` prints): one dictionary each, with
    /// `var`, `transformation`, `applied`, `reason`, `detail`, `reuse`
    /// (the reuse vector or `None`) and `complexity_after` (or `None`).
    fn decisions<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let mut out = Vec::new();
        for d in self.compiled.decisions() {
            let e = PyDict::new(py);
            e.set_item("var", &d.var)?;
            e.set_item("transformation", d.kind.name())?;
            e.set_item("applied", d.applied)?;
            e.set_item("reason", &d.reason)?;
            e.set_item("detail", &d.detail)?;
            e.set_item("reuse", d.reuse.clone())?;
            e.set_item("complexity_after", d.complexity_after.clone())?;
            out.push(e);
        }
        Ok(out)
    }

    /// Runs the system once: `params` by name, `inputs` by name (numpy
    /// arrays of the inputs' shapes), `seed` for the random draws.
    /// Returns the outputs by name as numpy arrays that own the memory
    /// the native code's results were stored in (no copy).
    #[pyo3(signature = (params = None, inputs = None, seed = 0))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        params: Option<&Bound<'py, PyDict>>,
        inputs: Option<&Bound<'py, PyDict>>,
        seed: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let sys = self.compiled.system();
        let p = params_of(sys, params)?;
        let arrays = inputs_of(py, sys, &p, inputs)?;
        let out = self
            .compiled
            .run_owned(&p, arrays, seed)
            .map_err(|e| RunError::new_err(e.to_string()))?;
        convert::array_dict(py, out, &var_names(sys))
    }

    /// A sampler: the system's state for `params` and `inputs`, advanced
    /// one sweep at a time (sweep `s` draws with a seed derived from
    /// `(seed, s)`; numbering starts at `first_sweep`).
    #[pyo3(signature = (params = None, inputs = None, seed = 0, first_sweep = 0))]
    fn sampler(
        &self,
        py: Python<'_>,
        params: Option<&Bound<'_, PyDict>>,
        inputs: Option<&Bound<'_, PyDict>>,
        seed: u64,
        first_sweep: u64,
    ) -> PyResult<Sampler> {
        let sys = self.compiled.system();
        let p = params_of(sys, params)?;
        let arrays = inputs_of(py, sys, &p, inputs)?;
        let sweeper = self
            .compiled
            .sweeper_owned(&p, arrays, seed)
            .map_err(|e| RunError::new_err(e.to_string()))?
            .starting_at(first_sweep);
        Ok(Sampler::new(sweeper))
    }

    /// Runs `n` sweeps from `inputs` (see `sampler`) with a progress bar
    /// (`progress=True`: tqdm's when tqdm is installed, which draws a
    /// widget in notebooks, else a terminal bar on standard error when it
    /// is a terminal) and returns the trace: `sweep` and one array per
    /// scalar output.
    #[pyo3(signature = (n, params = None, inputs = None, seed = 0, progress = true))]
    fn sweeps<'py>(
        &self,
        py: Python<'py>,
        n: u64,
        params: Option<&Bound<'py, PyDict>>,
        inputs: Option<&Bound<'py, PyDict>>,
        seed: u64,
        progress: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut s = self.sampler(py, params, inputs, seed, 0)?;
        s.sweeps(py, n, progress)
    }

    fn __repr__(&self) -> String {
        let sys = self.compiled.system();
        format!(
            "<alphac.Program {} [{}]{}>",
            sys.name,
            sys.params.join(", "),
            if self.options.optimize {
                ""
            } else {
                " (not optimized)"
            }
        )
    }
}

impl Program {
    fn vars_of<'py>(&self, py: Python<'py>, kind: VarKind) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for v in self
            .compiled
            .system()
            .vars
            .iter()
            .filter(|v| v.kind == kind)
        {
            d.set_item(&v.name, convert::dtype_name(v.ty))?;
        }
        Ok(d)
    }

    /// The array spec of an input or output for `params`.
    fn spec(&self, name: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<ArraySpec> {
        let sys = self.compiled.system();
        let p = params_of(sys, params)?;
        let var = sys
            .var_by_name(name)
            .map(|id| &sys.vars[id])
            .filter(|v| matches!(v.kind, VarKind::Input | VarKind::Output))
            .ok_or_else(|| {
                RunError::new_err(format!(
                    "{name} is not an input or output of system {}",
                    sys.name
                ))
            })?;
        ArraySpec::of_domain(&var.name, var.ty, &var.domain, &p)
            .map_err(|e| RunError::new_err(e.to_string()))
    }
}

/// The names of a system's variables, in declaration order.
fn var_names(sys: &ir::System) -> Vec<String> {
    sys.vars.iter().map(|v| v.name.clone()).collect()
}

/// The extension module.
#[pymodule]
#[pyo3(name = "_alphac")]
fn alphac_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(compile_source, m)?)?;
    m.add_class::<Program>()?;
    m.add_class::<Sampler>()?;
    m.add("AlphaError", py.get_type::<AlphaError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("RunError", py.get_type::<RunError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
