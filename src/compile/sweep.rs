//! Sweeps: a compiled system run again and again on its own state, as a
//! sampler runs (one Gibbs sweep, one round of messages, one Newton step
//! per run).
//!
//! The system says which output is the next value of which input
//! (`sweep z <- znew;`, [`ir::Sweep`]). A [`Sweeper`] allocates the native
//! code's buffers once, loads the inputs once, and after each sweep carries
//! every such output onto its input in place (the two buffers are swapped
//! when their boxes agree, copied point by point otherwise); inputs that
//! no sweep carries (the data) stay as loaded. Nothing is allocated or
//! compiled between sweeps.
//!
//! Seeds: sweep `s` draws with `runtime::rng::sweep_seed(seed, s)`, a pure
//! function of `(seed, s)`; sweep 0 uses `seed` itself, so a single sweep
//! is exactly [`Compiled::run`]. A run of `a + b` sweeps therefore equals
//! `a` sweeps, then `b` more started at sweep `a` ([`Sweeper::starting_at`])
//! from the saved state ([`Sweeper::state`]).
//!
//! The trace of a run is one row per sweep of every scalar output (a
//! variable with no dimensions: the diagnostic a sampler computes, such as
//! its log joint), in declaration order.
//!
//! Owns: the sweep loop, the carried state and the trace. Must not know
//! about the pipeline that produced the native code.

use super::{load_array, store_array, Compiled, Inputs, RunError};
use crate::ir::{self, VarKind};
use crate::jit::Buffer;
use crate::runtime::{rng, Array, ExternalFn, Scalar};
use std::collections::HashMap;
use std::fmt::Write as _;

/// A compiled system and its state between sweeps.
pub struct Sweeper {
    compiled: Compiled,
    params: Vec<i64>,
    jit_params: Vec<i64>,
    seed: u64,
    /// Index of the next sweep (its seed is `sweep_seed(seed, next)`).
    next: u64,
    boxes: Vec<Vec<(i64, i64)>>,
    bufs: Vec<Buffer>,
    /// The last sweep's outputs are not yet carried onto their inputs
    /// (they are carried just before the next sweep, so that the outputs
    /// of the last sweep stay readable).
    carry_pending: bool,
    externals: HashMap<String, ExternalFn>,
}

/// The scalar outputs of every sweep of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The scalar outputs, in declaration order.
    pub names: Vec<String>,
    /// One row per sweep: the sweep's index and one value per name.
    pub rows: Vec<(u64, Vec<Scalar>)>,
}

impl Trace {
    /// The values of one scalar output, sweep after sweep, as `f64`
    /// (`int` converted, `bool` as 0 or 1).
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let k = self.names.iter().position(|n| n == name)?;
        Some(self.rows.iter().map(|(_, r)| scalar_f64(r[k])).collect())
    }

    /// CSV text: a header `sweep,NAME,...` and one row per sweep. Floats
    /// are printed in their shortest exact form (they read back bit for
    /// bit).
    pub fn to_csv(&self) -> String {
        let mut out = String::from("sweep");
        for n in &self.names {
            out.push(',');
            out.push_str(n);
        }
        out.push('\n');
        for (s, row) in &self.rows {
            let _ = write!(out, "{s}");
            for v in row {
                match v {
                    Scalar::Int(x) => {
                        let _ = write!(out, ",{x}");
                    }
                    Scalar::Float(x) => {
                        let _ = write!(out, ",{x:?}");
                    }
                    Scalar::Bool(x) => {
                        let _ = write!(out, ",{}", u8::from(*x));
                    }
                }
            }
            out.push('\n');
        }
        out
    }
}

fn scalar_f64(v: Scalar) -> f64 {
    match v {
        Scalar::Int(x) => x as f64,
        Scalar::Float(x) => x,
        Scalar::Bool(x) => f64::from(u8::from(x)),
    }
}

impl Compiled {
    /// A [`Sweeper`] over this system for `params` (in the system's order),
    /// starting from `inputs` (every input, as [`Compiled::run`] takes
    /// them), with sweep `s` seeded by `sweep_seed(seed, s)`.
    pub fn sweeper(
        &self,
        params: &[i64],
        inputs: &HashMap<String, Array>,
        seed: u64,
    ) -> Result<Sweeper, RunError> {
        self.sweeper_from(params, Inputs::Borrowed(inputs), seed)
    }

    /// [`Compiled::sweeper`] taking the inputs by value: an input whose
    /// array has exactly its buffer's box becomes that buffer (no copy),
    /// so that a sampler holds its data once.
    pub fn sweeper_owned(
        &self,
        params: &[i64],
        inputs: HashMap<String, Array>,
        seed: u64,
    ) -> Result<Sweeper, RunError> {
        self.sweeper_from(params, Inputs::Owned(inputs), seed)
    }

    fn sweeper_from(
        &self,
        params: &[i64],
        inputs: Inputs<'_>,
        seed: u64,
    ) -> Result<Sweeper, RunError> {
        let (jit_params, boxes, bufs) = self.loaded_buffers(params, inputs, seed)?;
        Ok(Sweeper {
            compiled: self.clone(),
            params: params.to_vec(),
            jit_params,
            seed,
            next: 0,
            boxes,
            bufs,
            carry_pending: false,
            externals: HashMap::new(),
        })
    }
}

impl Sweeper {
    /// Numbers the next sweep `first` (to resume a run that stopped after
    /// `first` sweeps from its saved state).
    pub fn starting_at(mut self, first: u64) -> Sweeper {
        self.next = first;
        self
    }

    /// Implementations of the program's `external` functions (see
    /// [`Compiled::run_with`]).
    pub fn with_externals(mut self, externals: HashMap<String, ExternalFn>) -> Sweeper {
        self.externals = externals;
        self
    }

    /// The compiled system.
    pub fn system(&self) -> &ir::System {
        self.compiled.system()
    }

    /// The index of the next sweep.
    pub fn next_sweep(&self) -> u64 {
        self.next
    }

    /// Runs one sweep: carries the previous sweep's outputs onto their
    /// inputs, then runs the native code with this sweep's seed.
    pub fn sweep(&mut self) -> Result<(), RunError> {
        if self.carry_pending {
            self.carry()?;
            self.carry_pending = false;
        }
        let seed = rng::sweep_seed(self.seed, self.next);
        let n = self.params.len();
        if self.jit_params.len() > n {
            self.jit_params[n] = seed as i64;
        }
        self.compiled
            .inner
            .jit
            .run_threads(
                &self.jit_params,
                &mut self.bufs,
                &self.externals,
                self.compiled.threads,
            )
            .map_err(RunError::Jit)?;
        self.next += 1;
        self.carry_pending = true;
        Ok(())
    }

    /// Runs `n` sweeps, calling `each(sweep, scalars)` after every one,
    /// and returns their trace.
    pub fn run(&mut self, n: u64, mut each: impl FnMut(u64, &[Scalar])) -> Result<Trace, RunError> {
        let mut trace = Trace {
            names: self.scalar_names(),
            rows: Vec::new(),
        };
        for _ in 0..n {
            self.sweep()?;
            let row = self.scalars();
            each(self.next - 1, &row);
            trace.rows.push((self.next - 1, row));
        }
        Ok(trace)
    }

    /// Moves every carried output onto its input.
    fn carry(&mut self) -> Result<(), RunError> {
        let sys = self.compiled.system();
        for sw in &sys.sweeps {
            let (i, o) = (sw.input, sw.output);
            if self.boxes[i] == self.boxes[o] {
                self.bufs.swap(i, o);
            } else {
                let a = store_array(&sys.vars[o], &self.params, &self.boxes[o], &self.bufs[o])?;
                load_array(
                    &sys.vars[i],
                    &self.params,
                    &a.with_name(sys.vars[i].name.clone()),
                    &self.boxes[i],
                    &mut self.bufs[i],
                )?;
            }
        }
        Ok(())
    }

    /// The scalar outputs' names, in declaration order.
    pub fn scalar_names(&self) -> Vec<String> {
        self.system()
            .vars
            .iter()
            .filter(|v| v.kind == VarKind::Output && v.domain.n_dims() == 0)
            .map(|v| v.name.clone())
            .collect()
    }

    /// The scalar outputs of the last sweep (zero before the first).
    pub fn scalars(&self) -> Vec<Scalar> {
        let sys = self.system();
        sys.vars
            .iter()
            .enumerate()
            .filter(|(_, v)| v.kind == VarKind::Output && v.domain.n_dims() == 0)
            .map(|(id, _)| match &self.bufs[id] {
                Buffer::Int(b) => Scalar::Int(b.first().copied().unwrap_or(0)),
                Buffer::Float(b) => Scalar::Float(b.first().copied().unwrap_or(0.0)),
                Buffer::Bool(b) => Scalar::Bool(b.first().copied().unwrap_or(false)),
            })
            .collect()
    }

    /// The outputs of the last sweep (zero before the first).
    pub fn outputs(&self) -> Result<HashMap<String, Array>, RunError> {
        self.arrays(VarKind::Output, false)
    }

    /// The state the next sweep starts from: every input, carried outputs
    /// already in place. Saved and passed to a new [`Sweeper`] with
    /// [`Sweeper::starting_at`], it resumes the run exactly.
    pub fn state(&self) -> Result<HashMap<String, Array>, RunError> {
        self.arrays(VarKind::Input, self.carry_pending)
    }

    fn arrays(&self, kind: VarKind, carried: bool) -> Result<HashMap<String, Array>, RunError> {
        let sys = self.system();
        let mut out = HashMap::new();
        for (id, var) in sys.vars.iter().enumerate() {
            if var.kind != kind {
                continue;
            }
            // Before the carry, an input's next value is in its output.
            let src = match sys.sweeps.iter().find(|s| s.input == id) {
                Some(s) if carried => s.output,
                _ => id,
            };
            let a = store_array(
                &sys.vars[src],
                &self.params,
                &self.boxes[src],
                &self.bufs[src],
            )?;
            out.insert(var.name.clone(), a.with_name(var.name.clone()));
        }
        Ok(out)
    }
}
