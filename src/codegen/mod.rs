//! Code generation: from a scheduled program to an explicit loop AST.
//!
//! Owns: the loop AST (`loop_ast`), the target of polyhedral scanning and
//! the input of the JIT (`crate::jit`). Scanning itself (schedule → loops)
//! will live beside it.
//!
//! Must not know about: Cranelift or any other back end, the source syntax.

pub mod loop_ast;
pub mod scan;
