//! The intermediate representation: checked, typed, normalized programs.
//!
//! Owns: the IR data types (`types`), lowering from the AST with every
//! static check (`lower`, `check*`), conversion of IR domains to
//! polyhedral sets (`poly_bridge`), and the pretty-printer back to valid
//! `.alpha` (`print`), which re-parses to the same IR.
//!
//! Contract for later stages: a `Program` that exists has passed every
//! check — names resolved, types consistent, every output and local defined
//! exactly once over its whole domain, `case` pieces disjoint and covering,
//! reduction bodies bounded, affine reads inside the read variable's domain.
//! Later stages never look at the AST.
//!
//! Must not know about: parsing details (pest), schedules, code generation.

pub mod types;

pub use types::*;
