//! alphac: an optimizing compiler for Alpha-style equational programs.
//!
//! The pipeline runs one way (the map is `docs/architecture.md`):
//! `syntax` → `ir` → `deps` → `schedule` → `sdr` → `codegen` → `jit`,
//! with `vocab` (the shared words) and `poly` (exact integer sets and
//! relations) underneath all of them and `interp` (the reference
//! interpreter) beside them as the oracle.

// Library code reports failures as errors: no `unwrap`, `expect` or
// `panic!` outside tests (an invariant that makes failure impossible is
// written as a match with the invariant in a comment, or as `unreachable!`
// with its argument).
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod cli;
pub mod codegen;
pub mod compile;
pub mod deps;
pub mod diag;
pub mod interp;
pub mod ir;
pub mod jit;
pub mod poly;
#[cfg(feature = "python")]
pub mod python;
pub mod runtime;
pub mod schedule;
pub mod sdr;
pub mod syntax;
pub mod timing;
pub mod vocab;
