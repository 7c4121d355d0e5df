//! Typed errors of the scheduler. Nothing in `schedule` panics on input;
//! every failure is one of these values.

use crate::poly::PolyError;
use thiserror::Error;

/// An error from scheduling or from the legality checker.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ScheduleError {
    /// An error of the polyhedral core (overflow, malformed system, ...).
    #[error("polyhedral error: {0}")]
    Poly(#[from] PolyError),
    /// The dependences form a cycle that no affine schedule can respect:
    /// within this strongly connected component of the remaining dependence
    /// graph no affine row can carry any dependence piece.
    #[error("unschedulable dependence cycle through statements {}", .statements.join(", "))]
    Cycle {
        /// Names of the statements on the cycle (the strongly connected
        /// component), in model order.
        statements: Vec<String>,
    },
    /// The model is malformed (wrong row lengths, unknown statement, ...).
    #[error("invalid scheduling model: {0}")]
    InvalidModel(String),
    /// An integer computation left the `i64` range.
    #[error("integer overflow in scheduling")]
    Overflow,
    /// The scheduler produced something the legality checker rejects, or an
    /// internal search limit was hit. Never returned together with a schedule.
    #[error("internal scheduler error: {0}")]
    Internal(String),
}

impl ScheduleError {
    /// An error of `poly`'s integer-row algebra (`poly::linalg`,
    /// `poly::cone`) as the scheduler reports it: an overflow is the
    /// scheduler's [`ScheduleError::Overflow`], anything else a `Poly` error.
    pub fn from_rows(e: PolyError) -> ScheduleError {
        match e {
            PolyError::Overflow => ScheduleError::Overflow,
            e => ScheduleError::Poly(e),
        }
    }
}

/// Result type of the scheduler.
pub type ScheduleResult<T> = Result<T, ScheduleError>;
