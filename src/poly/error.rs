//! Typed errors of the polyhedral core. Every fallible operation in `poly`
//! returns `PolyResult<T>`; nothing in `poly` panics on user input.

use thiserror::Error;

/// An error from the polyhedral library.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PolyError {
    /// A checked integer operation overflowed where no big-integer path exists
    /// (coefficients of constraints are `i64`).
    #[error("integer overflow in polyhedral arithmetic")]
    Overflow,
    /// Malformed isl-notation text; `pos` is a byte offset into the input.
    #[error("{msg} (at position {pos})")]
    Parse { pos: usize, msg: String },
    /// Operands live in different spaces (dimension counts or names differ).
    #[error("space mismatch: {0}")]
    SpaceMismatch(String),
    /// An optimum or enumeration was asked of an unbounded set.
    #[error("unbounded: {0}")]
    Unbounded(String),
    /// The operation cannot be done exactly with this library (for example a
    /// projection whose integer result is not a union of polyhedra).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An exact query gave up on its work budget (see
    /// `solver::integer::BNB_NODE_BUDGET`): no answer, never a wrong one.
    #[error("the exact integer solver gave up: {0}")]
    Budget(String),
    /// A caller-side misuse reported as a value (wrong number of parameter
    /// values, an index out of range, ...).
    #[error("invalid argument: {0}")]
    Invalid(String),
}

/// Result type of the polyhedral core.
pub type PolyResult<T> = Result<T, PolyError>;
