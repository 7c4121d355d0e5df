//! `alphac.Sampler`: a compiled system's state between sweeps
//! ([`Sweeper`]), advanced from Python one sweep or `n` sweeps at a time,
//! with a progress bar, Ctrl-C honoured between sweeps, and the trace
//! returned as numpy arrays.
//!
//! Progress: tqdm's bar when the `tqdm` package is installed (its `auto`
//! flavour draws a widget in notebooks and text on a terminal), else
//! alphac's own terminal bar on standard error (indicatif, hidden when
//! standard error is not a terminal).
//!
//! Must not know about: how the native code was produced.

use super::convert;
use super::RunError;
use crate::compile::Sweeper;
use crate::runtime::Scalar;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A system's state between sweeps.
#[pyclass(unsendable, module = "alphac", name = "Sampler")]
pub struct Sampler {
    sweeper: Sweeper,
}

impl Sampler {
    pub fn new(sweeper: Sweeper) -> Sampler {
        Sampler { sweeper }
    }

    /// One sweep; its scalar outputs.
    fn step(&mut self) -> PyResult<Vec<Scalar>> {
        self.sweeper
            .sweep()
            .map_err(|e| RunError::new_err(e.to_string()))?;
        Ok(self.sweeper.scalars())
    }
}

/// A progress bar over `n` sweeps: tqdm's, or the terminal's.
enum Bar<'py> {
    Tqdm(Bound<'py, PyAny>),
    Terminal(indicatif::ProgressBar),
}

impl<'py> Bar<'py> {
    fn new(py: Python<'py>, n: u64, progress: bool) -> PyResult<Bar<'py>> {
        if progress {
            if let Ok(tqdm) = py.import("tqdm.auto").and_then(|m| m.getattr("tqdm")) {
                let kwargs = PyDict::new(py);
                kwargs.set_item("total", n)?;
                kwargs.set_item("unit", "sweep")?;
                return Ok(Bar::Tqdm(tqdm.call((), Some(&kwargs))?));
            }
        }
        Ok(Bar::Terminal(crate::cli::sweep_progress(n, !progress)))
    }

    fn step(&self, message: String) -> PyResult<()> {
        match self {
            Bar::Tqdm(b) => {
                b.call_method1("set_postfix_str", (message, false))?;
                b.call_method1("update", (1,))?;
            }
            Bar::Terminal(b) => {
                b.set_message(message);
                b.inc(1);
            }
        }
        Ok(())
    }

    fn close(&self) {
        match self {
            // A failure to close a display is not the run's failure.
            Bar::Tqdm(b) => {
                let _ = b.call_method0("close");
            }
            Bar::Terminal(b) => b.finish_and_clear(),
        }
    }
}

#[pymethods]
impl Sampler {
    /// The index of the next sweep.
    #[getter]
    fn next_sweep(&self) -> u64 {
        self.sweeper.next_sweep()
    }

    /// The scalar outputs' names (the trace's columns), in declaration
    /// order.
    #[getter]
    fn scalar_names(&self) -> Vec<String> {
        self.sweeper.scalar_names()
    }

    /// Runs one sweep and returns its scalar outputs by name.
    fn sweep<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let row = self.step()?;
        let d = PyDict::new(py);
        for (n, v) in self.sweeper.scalar_names().iter().zip(row) {
            d.set_item(n, convert::scalar(py, v)?)?;
        }
        Ok(d)
    }

    /// Runs `n` sweeps with a progress bar (see the module comment) and
    /// returns their trace: `sweep` (the sweeps' indices) and one array
    /// per scalar output. Ctrl-C stops between two sweeps
    /// (KeyboardInterrupt); the state stays that of the last sweep run.
    #[pyo3(signature = (n, progress = true))]
    pub fn sweeps<'py>(
        &mut self,
        py: Python<'py>,
        n: u64,
        progress: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let names = self.sweeper.scalar_names();
        let bar = Bar::new(py, n, progress)?;
        let mut rows = Vec::new();
        let mut run = || -> PyResult<()> {
            for _ in 0..n {
                let row = self.step()?;
                bar.step(crate::cli::scalars_text(&names, &row))?;
                rows.push((self.sweeper.next_sweep() - 1, row));
                py.check_signals()?;
            }
            Ok(())
        };
        let result = run();
        bar.close();
        result?;
        convert::trace_dict(py, &names, &rows)
    }

    /// The outputs of the last sweep, by name.
    fn outputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = self
            .sweeper
            .outputs()
            .map_err(|e| RunError::new_err(e.to_string()))?;
        convert::array_dict(py, out, &super::var_names(self.sweeper.system()))
    }

    /// The state the next sweep starts from (every input, carried outputs
    /// in place): given as `inputs` to a new sampler with
    /// `first_sweep=next_sweep` and the same seed, it resumes the run
    /// draw for draw.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = self
            .sweeper
            .state()
            .map_err(|e| RunError::new_err(e.to_string()))?;
        convert::array_dict(py, out, &super::var_names(self.sweeper.system()))
    }

    fn __repr__(&self) -> String {
        format!(
            "<alphac.Sampler {} at sweep {}>",
            self.sweeper.system().name,
            self.sweeper.next_sweep()
        )
    }
}
