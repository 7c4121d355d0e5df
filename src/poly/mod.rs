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

pub mod basic_set;
pub mod constraint;
pub mod map;
pub mod multi_aff;
pub mod parse;
pub mod print;
pub mod project;
pub mod set;
pub mod space;
mod sys;

pub use basic_set::BasicSet;
pub use constraint::{Constraint, ConstraintKind};
pub use error::{PolyError, PolyResult};
pub use map::{BasicMap, Map};
pub use multi_aff::{Aff, MultiAff};
pub use set::Set;
pub use space::{Space, Tuple};
