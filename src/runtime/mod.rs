//! The run-time support shared by the reference interpreter (`interp`) and
//! the JIT (`jit`): dense arrays over bounding boxes (computed by
//! `poly::points`), data I/O (`.npy`, CSV), counter-based random numbers and
//! the math built-ins.
//!
//! Owns: the array layout (see [`array`]), the exact construction of every
//! random draw (see [`rng`]), the numerical definition of the built-ins
//! (see [`math`]), and the file formats.
//!
//! Must not know about: how a program is evaluated or scheduled (no
//! interpreter or code generator logic), the `.alpha` syntax, the AST.
//! It does not read the IR: arrays are sized from `poly` sets.

pub mod array;
pub mod data;
pub mod error;
pub mod math;
pub mod rng;

pub use array::{Array, ArrayData, ArraySpec, Scalar, MAX_ELEMENTS};
pub use error::RuntimeError;

/// An external function: float arguments, float result (supplied by the
/// library user to both the interpreter and compiled code).
pub type ExternalFn = std::sync::Arc<dyn Fn(&[f64]) -> f64 + Send + Sync>;
