//! The wording of syntax errors: a pest failure becomes one diagnostic
//! `expected A, B or C, found X` at the failing position, naming grammar
//! rules by their description.

use super::Rule;
use crate::diag::{Diagnostic, Span};
use pest::error::{ErrorVariant, InputLocation};

/// Human description of a named grammar rule in "expected ..." messages;
/// `None` for rules that should not be mentioned.
fn describe_rule(r: Rule) -> Option<&'static str> {
    Some(match r {
        Rule::ident | Rule::ident_list | Rule::name | Rule::qname => "a name",
        Rule::int_lit => "an integer",
        Rule::float_lit | Rule::number => "a number",
        Rule::expr
        | Rule::unary
        | Rule::access
        | Rule::call
        | Rule::restrict
        | Rule::if_expr
        | Rule::dep
        | Rule::case_expr
        | Rule::reduce
        | Rule::val_expr
        | Rule::bool_lit
        | Rule::categorical
        | Rule::juxt
        | Rule::mm_chain
        | Rule::boolean
        | Rule::val_index
        | Rule::val_poly
        | Rule::select_expr
        | Rule::multi_arg
        | Rule::auto_piece => "an expression",
        Rule::pexpr | Rule::pterm | Rule::pfactor | Rule::ppow => "a polynomial",
        Rule::extent => "an extent `N` or a range `a:b`",
        Rule::rel_set | Rule::rel_piece => "a relation `{ [i, ...] -> [e, ...] : ... }`",
        Rule::aexpr | Rule::aexpr_list | Rule::aunary | Rule::acall => "an affine expression",
        Rule::constraint | Rule::conj | Rule::chain => "a constraint",
        Rule::cmp_op => "a comparison",
        Rule::bin_op | Rule::arith_op => "an operator",
        Rule::red_op => "a reduction operator (`+`, `*`, `max`, `min`, `and`, `or`)",
        Rule::domain | Rule::brace_set | Rule::array_dom => "a domain",
        Rule::elem_type => "a type",
        Rule::equation | Rule::let_body | Rule::use_eq | Rule::over_eq | Rule::old_use_eq => {
            "an equation"
        }
        Rule::call_params => "parameters `[...]`",
        Rule::use_domain | Rule::old_set => "a domain",
        Rule::decl => "a declaration",
        Rule::end_dot => "`.`",
        Rule::EOI => "end of file",
        Rule::system | Rule::external | Rule::constant | Rule::package | Rule::import => {
            "`affine`, `external`, `constant`, `package` or `import`"
        }
        Rule::kw_let => "`let`",
        Rule::kw_inputs => "`inputs`",
        Rule::kw_outputs => "`outputs`",
        Rule::kw_locals => "`locals`",
        Rule::kw_then => "`then`",
        Rule::kw_else => "`else`",
        Rule::params | Rule::params_isl | Rule::params_old => "parameters `[N, ...] -> { : ... }`",
        Rule::afun => "a function `(i, ... -> ...)`",
        Rule::projection | Rule::index_list => "a projection `[k, ...]` or `(i, k -> i)`",
        _ => return None,
    })
}

/// Tokens (literal strings) that are operators; collapsed into "an operator".
fn is_operator_token(t: &str) -> bool {
    matches!(
        t,
        "+" | "-"
            | "*"
            | "/"
            | "%"
            | "<"
            | "<="
            | ">"
            | ">="
            | "=="
            | "!="
            | "="
            | "&&"
            | "||"
            | "@"
            | "!"
            | "and"
            | "or"
            | "not"
            | "xor"
            | "max"
            | "min"
    )
}

/// Turns a pest error into a diagnostic whose message lists what was
/// expected in user terms (`expected `;` or `.``), never rule names.
pub(super) fn pest_error(text: &str, e: pest::error::Error<Rule>) -> Diagnostic {
    let mut pos = match e.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    };
    let mut items: Vec<String> = Vec::new();
    let mut has_operator = false;
    let mut use_rules = true;
    if let Some(att) = e.parse_attempts() {
        // Literal tokens are tracked to a farther position than rules
        // (pest records rule attempts at the rule's start): report there.
        if att.max_position > pos {
            pos = att.max_position;
            use_rules = false;
        }
        for t in att.expected_tokens() {
            // `ParsingToken` is not exported by pest; its `Display` is the
            // literal for string tokens. Character ranges (`0..9`) and
            // built-in rules are covered by the rule descriptions instead.
            let token = t.to_string();
            if token == "BUILTIN_RULE" || (token.chars().count() == 4 && token.contains("..")) {
                continue;
            }
            // Whitespace, comments, identifier characters and the
            // unsupported fuzzy brackets are never what the user missed.
            if token.trim().is_empty() || matches!(token.as_str(), "//" | "/*" | "_" | "[[") {
                continue;
            }
            if is_operator_token(&token) {
                has_operator = true;
            } else {
                items.push(format!("`{token}`"));
            }
        }
    }
    if let ErrorVariant::ParsingError { positives, .. } = &e.variant {
        for r in positives {
            match r {
                Rule::bin_op | Rule::arith_op => has_operator = true,
                r if use_rules => {
                    if let Some(d) = describe_rule(*r) {
                        items.push(d.to_string());
                    }
                }
                _ => {}
            }
        }
    }
    if has_operator {
        items.push("an operator".to_string());
    }
    // Where an operand is expected, the tokens that can start one (`(`,
    // `{`, prefix `-`) are part of "an expression"; where a reduction
    // operator is expected, `+`/`*`/`max`... are part of that description.
    if items
        .iter()
        .any(|s| s == "an expression" || s == "an affine expression")
    {
        items.retain(|s| !matches!(s.as_str(), "`(`" | "`{`" | "an operator"));
    }
    if items.iter().any(|s| s.starts_with("a reduction operator")) {
        items.retain(|s| {
            !matches!(
                s.as_str(),
                "`max`" | "`min`" | "`sum`" | "`prod`" | "an operator"
            )
        });
    }
    // Punctuation first, then words; deduplicated.
    let mut seen = std::collections::BTreeSet::new();
    items.retain(|s| seen.insert(s.clone()));
    items.sort_by_key(|s| (!s.starts_with('`'), s.clone()));
    // With very many alternatives (e.g. at the start of an expression), the
    // list of keywords is noise: keep punctuation and descriptions.
    if items.len() > 8 {
        items.retain(|s| !(s.starts_with('`') && s[1..].starts_with(|c: char| c.is_alphabetic())));
    }
    let found = describe_found(text, pos);
    let message = if items.is_empty() {
        format!("syntax error: unexpected {found}")
    } else {
        format!("expected {}, found {found}", join_or(&items))
    };
    let end = next_char_end(text, pos);
    Diagnostic::error(message, Span::new(pos, end)).with_label("here")
}

fn join_or(items: &[String]) -> String {
    match items.len() {
        0 => String::new(),
        1 => items[0].clone(),
        n => format!("{} or {}", items[..n - 1].join(", "), items[n - 1]),
    }
}

fn next_char_end(text: &str, pos: usize) -> usize {
    match text.get(pos..).and_then(|s| s.chars().next()) {
        Some(c) => pos + c.len_utf8(),
        None => pos,
    }
}

/// "end of file" or the token-ish text at `pos`, quoted.
fn describe_found(text: &str, pos: usize) -> String {
    let rest = text.get(pos..).unwrap_or("");
    let Some(c) = rest.chars().next() else {
        return "end of file".to_string();
    };
    let tok: String = if c.is_ascii_alphanumeric() || c == '_' {
        rest.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    } else {
        c.to_string()
    };
    format!("`{tok}`")
}
