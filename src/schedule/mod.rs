//! Affine scheduling of polyhedral programs.
//!
//! Owns: the raw scheduling model ([`model`]: statements with integer
//! polyhedral domains, dependence pieces, multidimensional affine
//! schedules), the Farkas linearization ([`farkas`]), Feautrier's scheduler
//! and isl's Pluto-style band scheduler (with Feautrier fallback, linear
//! independence, non-trivial search and loop-coalescing avoidance), SCC
//! ordering by scalar dimensions, completion to a *sequential* schedule,
//! late placement of statements read long after they run ([`late`]),
//! distribution of statements below the innermost carrying level, the
//! split of strided levels into unit-stride and scalar ones ([`stride`]), and
//! the legality checker ([`check`]) through which every result passes.
//!
//! Must not know about: the `.alpha` language, the IR, or how dependences
//! are computed (`deps` builds a [`Model`] from a program); it only uses
//! `poly`'s exact solver and integer-row algebra (`poly::linalg`,
//! `poly::cone`).
//!
//! References: the isl/PPCG scheduler report (§6.1–6.5, §7.5) and
//! Feautrier's multidimensional scheduling, in `shared/papers/`.

pub mod check;
mod distribute;
mod driver;
pub mod error;
pub mod farkas;
mod feautrier;
mod ilp;
mod late;
pub mod model;
mod pluto;
mod stride;

pub use check::{check_schedule, is_sequential, DepStatus, Legality, Violation};
pub use driver::{schedule, schedule_with_budget, Scheduler};
pub use error::{ScheduleError, ScheduleResult};
pub use model::{DepPiece, DimInfo, Model, Schedule, Statement};
pub use pluto::BAND_WORK;
