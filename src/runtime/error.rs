//! Typed errors of the run-time support (arrays, domain scanning, data
//! I/O). Nothing in `runtime` panics on user input.

use crate::poly::points::PointScanError;
use thiserror::Error;

/// An error from the run-time support.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RuntimeError {
    /// A point outside an array's bounding box.
    #[error("{name}{point:?} is outside the bounding box {lo:?}..={hi:?}")]
    OutOfBounds {
        name: String,
        point: Vec<i64>,
        lo: Vec<i64>,
        hi: Vec<i64>,
    },
    /// A point of the wrong dimension.
    #[error("{name}: point {point:?} has {found} coordinates, expected {expected}")]
    Arity {
        name: String,
        point: Vec<i64>,
        expected: usize,
        found: usize,
    },
    /// An element of the wrong type written into an array.
    #[error("{name}: expected a {expected} element, found {found}")]
    ElemType {
        name: String,
        expected: &'static str,
        found: &'static str,
    },
    /// A bounding box too large to allocate (see [`crate::runtime::MAX_ELEMENTS`]).
    #[error("{name}: bounding box {lo:?}..={hi:?} is too large ({detail})")]
    TooLarge {
        name: String,
        lo: Vec<i64>,
        hi: Vec<i64>,
        detail: String,
    },
    /// A domain with no finite bounding box for the given parameters.
    #[error("{name}: domain is unbounded in dimension {dim} for the given parameters")]
    Unbounded { name: String, dim: String },
    /// Integer overflow while computing bounds or scanning a domain.
    #[error("{0}: integer overflow while computing domain bounds")]
    Overflow(String),
    /// A domain whose exact scanning would need too many intermediate
    /// constraints (Fourier–Motzkin blow-up).
    #[error("{0}: domain too complex to scan (too many constraints after elimination)")]
    TooComplex(String),
    /// Array shape mismatch (data I/O or inputs).
    #[error("{name}: expected shape {expected:?}, found {found:?}")]
    Shape {
        name: String,
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    /// Array dtype mismatch (data I/O or inputs).
    #[error("{name}: expected dtype {expected}, found {found}")]
    DType {
        name: String,
        expected: String,
        found: String,
    },
    /// Malformed or unreadable data file.
    #[error("{name}: {msg}")]
    Data { name: String, msg: String },
    /// File system error.
    #[error("{name}: {path}: {msg}")]
    Io {
        name: String,
        path: String,
        msg: String,
    },
}

impl RuntimeError {
    /// The error of scanning (or bounding) the domain of `name`.
    pub fn scan(name: &str, e: PointScanError) -> RuntimeError {
        let name = name.to_string();
        match e {
            PointScanError::Overflow => RuntimeError::Overflow(name),
            PointScanError::Unbounded(dim) => RuntimeError::Unbounded { name, dim },
            PointScanError::TooComplex => RuntimeError::TooComplex(name),
            PointScanError::Arity {
                point,
                expected,
                found,
            } => RuntimeError::Arity {
                name,
                point,
                expected,
                found,
            },
            PointScanError::MissingParam(k) => RuntimeError::Data {
                name,
                msg: format!("missing value of parameter {k}"),
            },
            PointScanError::Invalid(msg) => RuntimeError::Data { name, msg },
        }
    }
}

/// The message of a selection value outside its range (a label compared
/// with a result index, `ir::Selection`): one wording for the interpreter
/// and the generated code.
pub fn selection_out_of_range(
    value: i64,
    lower: i64,
    upper: i64,
    index: &str,
    var: &str,
) -> String {
    format!("selection value {value} is outside the range {lower}..={upper} of `{index}` in the domain of {var}")
}
