//! The exact polyhedral core: integer sets and relations in pure Rust.
//!
//! Owns: checked integer arithmetic, the exact solver (rational simplex,
//! lexicographic optimization, integer sampling and branch-and-bound),
//! spaces, affine expressions, constraints, basic sets / sets (finite
//! unions), basic maps / maps, multi-affine functions, their operations,
//! isl-notation parsing and printing, faces, point enumeration and
//! asymptotic size (complexity), and the `alphac calc` evaluator.
//!
//! Must not know about: the `.alpha` language, programs, statements,
//! schedules or anything above it in the pipeline. No floating point.

pub mod error;
pub mod solver;

pub use error::{PolyError, PolyResult};
