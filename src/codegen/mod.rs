//! Code generation: from a scheduled program to an explicit loop AST.
//!
//! Owns: the loop AST (`loop_ast`), the target of polyhedral scanning and
//! the input of the JIT (`crate::jit`), scanning (`scan`: schedule → loops)
//! and loop-program rewrites (`opt`: degenerate loops, register
//! accumulators, redundant guards) and storage mapping (`storage`: locals
//! stored in fewer cells than their box, after scheduling).
//!
//! Must not know about: Cranelift or any other back end, the source syntax.

pub mod loop_ast;
pub mod opt;
pub mod scan;
pub mod storage;
