//! Text → AST: runs the pest grammar (`grammar/alpha.pest`) and builds the
//! [`ast`](super::ast) from its pairs, resolving operator precedence by
//! precedence climbing and rejecting the constructs of docs/language.md section 6
//! with `unsupported: <construct>` diagnostics.
//!
//! Owns: syntax errors and their wording. Must not know about names,
//! types, domains' meaning or anything after the AST.
//!
//! This file: the entry point [`parse`], the resource guards, and the
//! [`Builder`]'s leaves (names, literals, types). The builder's other
//! methods are in `decl` (files, packages, systems, declarations,
//! equations), `domain` (domains, constraints, affine expressions) and
//! `expr` (expressions, precedence climbing); `errors` words pest's
//! failures.

mod decl;
mod domain;
mod errors;
mod expr;

use pest::iterators::Pair;
use pest::Parser as _;
use pest_derive::Parser;

use super::ast::*;
use crate::diag::{Diagnostic, SourceFile, Span};
use errors::pest_error;

#[derive(Parser)]
#[grammar = "../grammar/alpha.pest"]
struct AlphaParser;

/// Deepest bracket nesting accepted (keeps the recursive parser and the
/// recursive passes after it far from a stack overflow).
const MAX_NESTING: usize = 200;
/// Longest flat operator chain accepted (`a + b + ...`), for the same reason
/// (the chain becomes a left-deep tree).
const MAX_CHAIN: usize = 1000;
/// Deepest expression tree accepted in an equation (later stages recurse
/// over expressions; this keeps them within a 2 MiB thread stack).
const MAX_DEPTH: usize = 400;

/// Parses a whole `.alpha` file.
///
/// Returns the AST, or every diagnostic found: one for a syntax error (with
/// the position and what was expected), or one per unsupported construct.
pub fn parse(file: &SourceFile) -> Result<File, Vec<Diagnostic>> {
    if let Some(d) = check_nesting(&file.text) {
        return Err(vec![d]);
    }
    // pest's detailed error information (what was expected where) costs
    // about a tenth of a successful parse: it is collected only to report
    // an error, by parsing again. It is a process-wide switch, turned on
    // and never off, so that every error message is the detailed one.
    let mut pairs = match AlphaParser::parse(Rule::file, &file.text) {
        Ok(p) => p,
        Err(_) => {
            pest::set_error_detail(true);
            let e = match AlphaParser::parse(Rule::file, &file.text) {
                Err(e) => e,
                Ok(_) => {
                    return Err(vec![Diagnostic::error_nowhere(
                        "internal error: the parser accepted the text on a second attempt",
                    )])
                }
            };
            return Err(vec![pest_error(&file.text, e)]);
        }
    };
    let mut b = Builder { errors: Vec::new() };
    let file_ast = match pairs.next() {
        Some(p) => b.file(p),
        None => return Err(vec![Diagnostic::error_nowhere("empty parse")]),
    };
    if b.errors.is_empty() {
        Ok(file_ast)
    } else {
        Err(b.errors)
    }
}

/// Rejects bracket nesting deeper than [`MAX_NESTING`] (counted over
/// `( [ {`, ignoring comments only approximately: this is a resource guard,
/// not a syntax check).
fn check_nesting(text: &str) -> Option<Diagnostic> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(
                        Diagnostic::error(
                            format!("brackets nested more than {MAX_NESTING} deep"),
                            Span::new(i, i + 1),
                        )
                        .with_label("too deep"),
                    );
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

fn span_of(p: &Pair<Rule>) -> Span {
    let s = p.as_span();
    Span::new(s.start(), s.end())
}

/// The first child of `p` of rule `rule` (the builder asks only for
/// rules that the grammar gives at most once there).
fn child<'i>(p: &Pair<'i, Rule>, rule: Rule) -> Option<Pair<'i, Rule>> {
    p.clone().into_inner().find(|q| q.as_rule() == rule)
}

/// The children of `p` of rule `rule`, in order.
fn children<'i>(p: Pair<'i, Rule>, rule: Rule) -> impl Iterator<Item = Pair<'i, Rule>> {
    p.into_inner().filter(move |q| q.as_rule() == rule)
}

/// The constructs of docs/language.md section 6 that the grammar
/// recognises (the `unsup_*` rules): what the diagnostic calls each, and
/// how many characters (its keyword) it underlines. `None` for any other
/// rule.
fn unsupported_construct(p: &Pair<Rule>) -> Option<(&'static str, usize)> {
    let text = p.as_str();
    Some(match p.as_rule() {
        Rule::unsup_define => ("`define`", 6),
        Rule::unsup_fuzzy_sec => ("fuzzy variables", 5),
        Rule::unsup_over_while => ("`over ... while` iteration", 4),
        Rule::unsup_when => ("`when` system body", 4),
        Rule::unsup_else => ("`else` system body", 4),
        Rule::unsup_auto => ("`auto` restriction", 4),
        Rule::unsup_val_fuzzy => ("fuzzy function `[[ ]]`", 3),
        Rule::unsup_fuzzy_access => ("fuzzy function `[[ ]]`", text.len()),
        Rule::unsup_argreduce => ("`argreduce`", 9),
        Rule::unsup_conv => ("`conv` expression", 4),
        Rule::unsup_select => ("`select` expression", 6),
        _ => return None,
    })
}

/// Builds the AST from pest pairs; records unsupported constructs and
/// literal errors in `errors` (building continues so that all are found).
struct Builder {
    errors: Vec<Diagnostic>,
}

fn bad() -> Expr {
    // Placeholder for a rejected construct; the builder's errors make
    // `parse` return `Err`, so it never reaches a caller.
    Expr {
        kind: ExprKind::Int(0),
        span: Span::default(),
    }
}
impl Builder {
    /// Reports `p` as `unsupported: ...` if it is one of the constructs of
    /// [`unsupported_construct`] (nothing otherwise).
    fn unsupported(&mut self, p: &Pair<Rule>) {
        let Some((what, kw_len)) = unsupported_construct(p) else {
            return;
        };
        let s = span_of(p);
        let end = (s.start + kw_len).min(s.end).max(s.start);
        self.errors.push(
            Diagnostic::error(format!("unsupported: {what}"), Span::new(s.start, end))
                .with_label("not in the supported subset of Alpha")
                .with_note("see docs/language.md, section 6"),
        );
    }

    fn file(&mut self, p: Pair<Rule>) -> File {
        let span = span_of(&p);
        let items = self.items(p.into_inner());
        File { items, span }
    }
    /// The `ident` child of `p` (an empty name at `p` when missing).
    pub(super) fn name_of(&self, p: &Pair<Rule>) -> Ident {
        child(p, Rule::ident).map_or_else(|| missing_ident(span_of(p)), |q| self.ident(q))
    }

    pub(super) fn ident(&self, p: Pair<Rule>) -> Ident {
        Ident {
            name: p.as_str().to_string(),
            span: span_of(&p),
        }
    }

    pub(super) fn ident_list(&self, p: Pair<Rule>) -> Vec<Ident> {
        p.into_inner()
            .filter(|q| q.as_rule() == Rule::ident)
            .map(|q| self.ident(q))
            .collect()
    }

    /// Identifiers inside an optional `ident_list` child of `p`.
    pub(super) fn idents_in(&self, p: Pair<Rule>) -> Vec<Ident> {
        p.into_inner()
            .find(|q| q.as_rule() == Rule::ident_list)
            .map(|q| self.ident_list(q))
            .unwrap_or_default()
    }

    pub(super) fn int(&mut self, p: &Pair<Rule>) -> i64 {
        match p.as_str().parse::<i64>() {
            Ok(v) => v,
            Err(_) => {
                self.errors.push(
                    Diagnostic::error("integer literal does not fit in 64 bits", span_of(p))
                        .with_label("too large"),
                );
                0
            }
        }
    }

    pub(super) fn elem_type(p: &Pair<Rule>) -> (ElemType, Span) {
        let t = match p.as_str() {
            "int" => ElemType::Int,
            "bool" => ElemType::Bool,
            _ => ElemType::Float,
        };
        (t, span_of(p))
    }
}

fn missing_ident(span: Span) -> Ident {
    Ident {
        name: String::new(),
        span,
    }
}
