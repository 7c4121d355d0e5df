//! Syntax: `.alpha` text → AST with source spans.
//!
//! Owns the grammar (`grammar/alpha.pest`), the AST types ([`ast`]) and the
//! parser ([`parse`]), including the wording of syntax errors and the
//! rejection of unsupported Alpha constructs. Must not know about name
//! resolution, types, domains' meaning, or any later stage.

pub mod ast;
pub mod parser;

pub use parser::parse;
