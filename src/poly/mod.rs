//! The exact polyhedral core: integer sets and relations in pure Rust.
//!
//! Owns: checked integer arithmetic, the exact solver (rational simplex,
//! lexicographic optimization, integer sampling and branch-and-bound),
//! spaces, affine expressions, constraints, basic sets / sets (finite
//! unions), basic maps / maps, multi-affine functions, their operations,
//! isl-notation parsing and printing, faces, point enumeration (also the
//! fast concrete-parameter scanner with a fixed outer prefix, [`points`]),
//! asymptotic size (complexity), and the integer-row algebra every stage
//! uses (bounds and rational shadows [`bounds`], cones [`cone`], linear
//! algebra [`linalg`]).
//!
//! Must not know about: the `.alpha` language, programs, statements,
//! schedules or anything above it in the pipeline. No floating point.
//!
//! # Types and layout
//!
//! * [`Space`]: named parameters and one [`Tuple`] of dimensions (a set) or
//!   an input and an output tuple (a map). Tuple names are optional
//!   (`S1[i, j]`); dimension names do not matter for compatibility.
//! * Rows: every constraint and affine expression is a `Vec<i64>` of the
//!   coefficients of the **parameters, then the dimensions (for maps: input
//!   then output), then the constant** (see [`constraint`]). An equality row
//!   means `row·(p, x, 1) = 0`, an inequality row `row·(p, x, 1) >= 0`.
//!   Rows are gcd-normalized and inequalities tightened on insertion.
//! * [`BasicSet`] (conjunction), [`Set`] (finite union over one space),
//!   [`BasicMap`] / [`Map`] (the same over a map space), [`Aff`] / [`MultiAff`]
//!   (affine functions of parameters and input dimensions).
//! * Text: `X::parse` reads isl notation ([`parse`]); `Display` prints the
//!   normalized form (module `print`); `print → parse → print` is stable.
//!
//! # Semantics
//!
//! Sets are sets of integer points. "Empty" means no integer point for any
//! parameter value (parameters are variables: constraints on them are part
//! of the set); `*_for(params)` questions fix the parameters first.
//! Projections (`project_out`, `domain`, `range`, `apply`, `apply_range`,
//! `image`, parametric `lexmin`) use Fourier–Motzkin with an exactness test
//! ([`project`]); where the result must be exact and is not known to be,
//! the operation returns `PolyError::Unsupported` instead of a wrong answer.

pub mod error;
pub mod solver;

pub mod basic_set;
pub mod bounds;
pub mod boxes;
pub mod complexity;
pub mod cone;
pub mod constraint;
pub mod faces;
pub mod linalg;
pub mod map;
pub mod memo;
pub mod multi_aff;
pub mod parse;
pub mod points;
pub mod print;
pub mod project;
pub mod set;
pub mod space;
mod sys;

pub use basic_set::BasicSet;
pub use complexity::{Complexity, Monomial};
pub use constraint::{Constraint, ConstraintKind};
pub use error::{PolyError, PolyResult};
pub use faces::{faces, set_faces};
pub use map::{BasicMap, Map};
pub use multi_aff::{Aff, MultiAff};
pub use set::{ParamsRefused, Set};
pub use space::{Space, Tuple};
