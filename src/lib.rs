//! alphac: an optimizing compiler for Alpha-style equational programs.
//!
//! The pipeline runs one way (see `DESIGN.md`):
//! `syntax` → `ir` → `deps` → `schedule` → `sdr` → `codegen` → `jit`,
//! with `poly` (exact integer sets and relations) underneath all of them
//! and `interp` (the reference interpreter) beside them as the oracle.

pub mod cli;
pub mod codegen;
pub mod compile;
pub mod deps;
pub mod diag;
pub mod interp;
pub mod ir;
pub mod jit;
pub mod poly;
pub mod runtime;
pub mod schedule;
pub mod sdr;
pub mod syntax;
pub mod vocab;
