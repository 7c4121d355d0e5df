//! The intermediate representation: checked, typed, normalized programs.
//!
//! Owns: the IR data types (`types`), lowering from the AST with every
//! static check (`lower`, `check*`), the checks of parameter values and
//! inputs every engine runs first (`inputs`), and the pretty-printer back to valid
//! `.alpha` (`print`), which re-parses to the same IR.
//!
//! Contract for later stages: a `Program` that exists has passed every
//! check — names resolved, types consistent, every output and local defined
//! exactly once over its whole domain, `case` pieces disjoint and covering,
//! reduction bodies bounded, affine reads inside the read variable's domain.
//! Later stages never look at the AST.
//!
//! Canonical form (so that `print` → parse → lower gives back the same IR,
//! spans aside). Lowering guarantees:
//! 1. Named constants are substituted; whole-variable notation `C = A`
//!    becomes a read with the identity access; dependence expressions
//!    `f @ E` are substituted into `E`.
//! 2. An int-typed expression built only from indices, parameters, int
//!    literals, `val(...)`, `+`, binary and unary `-`, and `*` by an int
//!    literal folds into one `ExprKind::Index(aff)`; when `aff` has no index
//!    and no parameter term it is `ExprKind::IntConst` instead. Unary minus
//!    of a float literal folds into the literal.
//! 3. Every domain (a `poly::Set` over the system's parameters and the
//!    index space it lives in) is in the canonical form of `Set::simplify`
//!    (redundant constraints removed, equalities detected, empty pieces
//!    dropped, normalized order).
//! 4. A restriction directly around a reduction body (`reduce(+, [k],
//!    {: c} : E)`) is merged into `Reduction::body_domain`, not kept as a
//!    `Restrict` node; `body_domain` is that restriction intersected with the
//!    domains of the affine reads of the body (and of nested restrictions
//!    and case pieces' union), canonicalized.
//! 5. Stochastic call sites are numbered in pre-order within each equation.
//! 6. Reductions are numbered in pre-order within each equation
//!    ([`ReductionId`], `System::number_reductions`); `deps`, `codegen` and
//!    `interp` identify reductions (and the statements made of them,
//!    [`StmtId`]) by these ids, never by position or address.
//!
//! Must not know about: parsing details (pest), schedules, code generation.

pub mod check_domains;
pub mod inputs;
pub mod lower;
pub mod print;
pub mod types;

pub use inputs::InputError;
pub use types::*;
