//! Text → AST: runs the pest grammar (`grammar/alpha.pest`) and builds the
//! [`ast`](super::ast) from its pairs, resolving operator precedence by
//! precedence climbing and rejecting the constructs of LANGUAGE.md section 6
//! with `unsupported: <construct>` diagnostics.
//!
//! Owns: syntax errors and their wording. Must not know about names,
//! types, domains' meaning or anything after the AST.

use pest::error::{ErrorVariant, InputLocation};
use pest::iterators::Pair;
use pest::Parser as _;
use pest_derive::Parser;

use super::ast::*;
use crate::diag::{Diagnostic, SourceFile, Span};

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
    pest::set_error_detail(true);
    let mut pairs = match AlphaParser::parse(Rule::file, &file.text) {
        Ok(p) => p,
        Err(e) => return Err(vec![pest_error(&file.text, e)]),
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
        | Rule::juxt => "an expression",
        Rule::aexpr | Rule::aexpr_list | Rule::aunary | Rule::acall => "an affine expression",
        Rule::constraint | Rule::conj | Rule::chain => "a constraint",
        Rule::cmp_op => "a comparison",
        Rule::bin_op | Rule::arith_op => "an operator",
        Rule::red_op => "a reduction operator (`+`, `*`, `max`, `min`, `and`, `or`)",
        Rule::domain | Rule::brace_set | Rule::array_dom => "a domain",
        Rule::elem_type => "a type",
        Rule::equation | Rule::let_body => "an equation",
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
    )
}

/// Turns a pest error into a diagnostic whose message lists what was
/// expected in user terms (`expected `;` or `.``), never rule names.
fn pest_error(text: &str, e: pest::error::Error<Rule>) -> Diagnostic {
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
    fn unsupported(&mut self, what: &str, p: &Pair<Rule>, kw_len: usize) {
        let s = span_of(p);
        let end = (s.start + kw_len).min(s.end).max(s.start);
        self.errors.push(
            Diagnostic::error(format!("unsupported: {what}"), Span::new(s.start, end))
                .with_label("not in the supported subset of Alpha")
                .with_note("see LANGUAGE.md, section 6"),
        );
    }

    fn file(&mut self, p: Pair<Rule>) -> File {
        let span = span_of(&p);
        let items = self.items(p.into_inner());
        File { items, span }
    }

    fn items<'i>(&mut self, pairs: impl Iterator<Item = Pair<'i, Rule>>) -> Vec<Item> {
        let mut out = Vec::new();
        for p in pairs {
            match p.as_rule() {
                Rule::external => out.push(Item::External(self.external(p))),
                Rule::constant => {
                    if let Some(c) = self.constant(p) {
                        out.push(Item::Constant(c))
                    }
                }
                Rule::package => out.push(Item::Package(self.package(p))),
                Rule::import => out.push(Item::Import(self.import(p))),
                Rule::system => out.push(Item::System(self.system(p))),
                _ => {}
            }
        }
        out
    }

    fn ident(&self, p: Pair<Rule>) -> Ident {
        Ident {
            name: p.as_str().to_string(),
            span: span_of(&p),
        }
    }

    fn ident_list(&self, p: Pair<Rule>) -> Vec<Ident> {
        p.into_inner()
            .filter(|q| q.as_rule() == Rule::ident)
            .map(|q| self.ident(q))
            .collect()
    }

    /// Identifiers inside an optional `ident_list` child of `p`.
    fn idents_in(&self, p: Pair<Rule>) -> Vec<Ident> {
        p.into_inner()
            .find(|q| q.as_rule() == Rule::ident_list)
            .map(|q| self.ident_list(q))
            .unwrap_or_default()
    }

    fn int(&mut self, p: &Pair<Rule>) -> i64 {
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

    fn elem_type(p: &Pair<Rule>) -> (ElemType, Span) {
        let t = match p.as_str() {
            "int" => ElemType::Int,
            "bool" => ElemType::Bool,
            _ => ElemType::Float,
        };
        (t, span_of(p))
    }

    fn external(&mut self, p: Pair<Rule>) -> External {
        let span = span_of(&p);
        let mut name = None;
        let mut result = None;
        let mut arity = 0usize;
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::ident => name = Some(self.ident(q)),
                Rule::elem_type => result = Some(Self::elem_type(&q)),
                Rule::int_lit => {
                    let v = self.int(&q);
                    arity = usize::try_from(v).unwrap_or(0);
                }
                _ => {}
            }
        }
        External {
            name: name.unwrap_or_else(|| missing_ident(span)),
            result,
            arity,
            span,
        }
    }

    fn constant(&mut self, p: Pair<Rule>) -> Option<Constant> {
        let span = span_of(&p);
        let mut name = None;
        let mut negative = false;
        let mut value = 0i64;
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::ident => name = Some(self.ident(q)),
                Rule::neg_sign => negative = true,
                Rule::int_lit => value = self.int(&q),
                _ => {}
            }
        }
        let value = if negative {
            value.checked_neg()?
        } else {
            value
        };
        Some(Constant {
            name: name.unwrap_or_else(|| missing_ident(span)),
            value,
            span,
        })
    }

    fn qname(&self, p: Pair<Rule>) -> Vec<Ident> {
        p.into_inner().map(|q| self.ident(q)).collect()
    }

    fn package(&mut self, p: Pair<Rule>) -> Package {
        let span = span_of(&p);
        let mut inner = p.into_inner().peekable();
        let mut name = Vec::new();
        // kw_package, qname, items...
        let mut rest = Vec::new();
        for q in inner.by_ref() {
            match q.as_rule() {
                Rule::kw_package => {}
                Rule::qname => name = self.qname(q),
                _ => rest.push(q),
            }
        }
        let items = self.items(rest.into_iter());
        Package { name, items, span }
    }

    fn import(&mut self, p: Pair<Rule>) -> Import {
        let span = span_of(&p);
        let mut path = Vec::new();
        let mut wildcard = false;
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::qname => path = self.qname(q),
                Rule::import_all => wildcard = true,
                _ => {}
            }
        }
        Import {
            path,
            wildcard,
            span,
        }
    }

    fn system(&mut self, p: Pair<Rule>) -> System {
        let span = span_of(&p);
        let mut sys = System {
            name: missing_ident(span),
            params: Vec::new(),
            context: None,
            inputs: Vec::new(),
            outputs: Vec::new(),
            locals: Vec::new(),
            sweeps: Vec::new(),
            equations: Vec::new(),
            span,
        };
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::ident => sys.name = self.ident(q),
                Rule::params => self.params(q, &mut sys),
                Rule::inputs_sec => sys.inputs.extend(self.decls(q)),
                Rule::outputs_sec => sys.outputs.extend(self.decls(q)),
                Rule::locals_sec => sys.locals.extend(self.decls(q)),
                Rule::sweep_sec => {
                    for pair in q.into_inner().filter(|r| r.as_rule() == Rule::sweep_pair) {
                        let span = span_of(&pair);
                        let mut names = pair
                            .into_inner()
                            .filter(|r| r.as_rule() == Rule::ident)
                            .map(|r| self.ident(r));
                        // The grammar's `sweep_pair` is `ident <- ident`.
                        if let (Some(input), Some(output)) = (names.next(), names.next()) {
                            sys.sweeps.push(SweepDecl {
                                input,
                                output,
                                span,
                            });
                        }
                    }
                }
                Rule::let_body => sys.equations.extend(self.let_body(q)),
                Rule::unsup_define => self.unsupported("`define`", &q, 6),
                Rule::unsup_fuzzy_sec => self.unsupported("fuzzy variables", &q, 5),
                Rule::unsup_over_while => self.unsupported("`over ... while` iteration", &q, 4),
                Rule::unsup_when => self.unsupported("`when` system body", &q, 4),
                Rule::unsup_else => self.unsupported("`else` system body", &q, 4),
                _ => {}
            }
        }
        sys
    }

    fn params(&mut self, p: Pair<Rule>, sys: &mut System) {
        for q in p.into_inner() {
            let qspan = span_of(&q);
            match q.as_rule() {
                Rule::params_isl => {
                    for r in q.into_inner() {
                        match r.as_rule() {
                            Rule::ident_list => sys.params = self.ident_list(r),
                            Rule::brace_set => sys.context = Some(self.brace_set(r)),
                            _ => {}
                        }
                    }
                }
                Rule::params_old => {
                    let mut constraint = None;
                    for r in q.into_inner() {
                        match r.as_rule() {
                            Rule::ident_list => sys.params = self.ident_list(r),
                            Rule::constraint => constraint = Some(self.constraint(r)),
                            _ => {}
                        }
                    }
                    sys.context = Some(Domain {
                        kind: DomainKind::Set(vec![BasicSet {
                            indices: None,
                            constraint,
                            span: qspan,
                        }]),
                        span: qspan,
                    });
                }
                _ => {}
            }
        }
    }

    fn decls(&mut self, p: Pair<Rule>) -> Vec<Decl> {
        let mut out = Vec::new();
        for q in p.into_inner() {
            if q.as_rule() != Rule::decl {
                continue;
            }
            let span = span_of(&q);
            let mut d = Decl {
                names: Vec::new(),
                ty: None,
                domain: None,
                span,
            };
            for r in q.into_inner() {
                match r.as_rule() {
                    Rule::ident_list => d.names = self.ident_list(r),
                    Rule::elem_type => d.ty = Some(Self::elem_type(&r)),
                    Rule::domain => d.domain = Some(self.domain(r)),
                    _ => {}
                }
            }
            out.push(d);
        }
        out
    }

    fn let_body(&mut self, p: Pair<Rule>) -> Vec<Equation> {
        let mut out = Vec::new();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::equation => out.push(self.equation(q)),
                Rule::unsup_use => {
                    let len = if q.as_str().starts_with('(') { 1 } else { 4 };
                    let len = if q.as_str().starts_with("use") {
                        3
                    } else {
                        len
                    };
                    self.unsupported("subsystem `use` equation", &q, len)
                }
                _ => {}
            }
        }
        out
    }

    fn equation(&mut self, p: Pair<Rule>) -> Equation {
        let span = span_of(&p);
        let mut var = missing_ident(span);
        let mut indices = None;
        let mut rhs = bad();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::ident => var = self.ident(q),
                Rule::lhs_indices => indices = Some(self.idents_in(q)),
                Rule::expr => rhs = self.expr(q),
                _ => {}
            }
        }
        if expr_depth(&rhs) > MAX_DEPTH {
            self.errors.push(
                Diagnostic::error(
                    format!("expression nested more than {MAX_DEPTH} deep"),
                    rhs.span,
                )
                .with_label("split it into several equations"),
            );
        }
        Equation {
            var,
            indices,
            rhs,
            span,
        }
    }

    // ------------------------------------------------------------ domains

    fn domain(&mut self, p: Pair<Rule>) -> Domain {
        let span = span_of(&p);
        match p.into_inner().next() {
            Some(q) if q.as_rule() == Rule::brace_set => self.brace_set(q),
            Some(q) if q.as_rule() == Rule::array_dom => {
                let exprs = match q.into_inner().next() {
                    Some(l) => self.aexpr_list(l),
                    None => Vec::new(),
                };
                Domain {
                    kind: DomainKind::Array(exprs),
                    span,
                }
            }
            _ => Domain {
                kind: DomainKind::Set(Vec::new()),
                span,
            },
        }
    }

    fn brace_set(&mut self, p: Pair<Rule>) -> Domain {
        let span = span_of(&p);
        let mut pieces = Vec::new();
        for q in p.into_inner() {
            if q.as_rule() != Rule::basic_set {
                continue;
            }
            let bspan = span_of(&q);
            let mut bs = BasicSet {
                indices: None,
                constraint: None,
                span: bspan,
            };
            for r in q.into_inner() {
                match r.as_rule() {
                    Rule::set_tuple => bs.indices = Some(self.idents_in(r)),
                    Rule::constraint => bs.constraint = Some(self.constraint(r)),
                    _ => {}
                }
            }
            pieces.push(bs);
        }
        Domain {
            kind: DomainKind::Set(pieces),
            span,
        }
    }

    fn constraint(&mut self, p: Pair<Rule>) -> Constraint {
        let span = span_of(&p);
        match p.as_rule() {
            Rule::constraint | Rule::conj => {
                let is_or = p.as_rule() == Rule::constraint;
                let mut parts: Vec<Constraint> = p
                    .into_inner()
                    .filter(|q| matches!(q.as_rule(), Rule::constraint | Rule::conj | Rule::chain))
                    .map(|q| self.constraint(q))
                    .collect();
                if parts.len() == 1 {
                    // Only child: this level adds nothing. (`pop` of a
                    // one-element vector cannot fail.)
                    if let Some(c) = parts.pop() {
                        return c;
                    }
                }
                let kind = if is_or {
                    ConstraintKind::Or(parts)
                } else {
                    ConstraintKind::And(parts)
                };
                Constraint { kind, span }
            }
            Rule::chain => {
                let mut operands = Vec::new();
                let mut ops = Vec::new();
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::aexpr_list => operands.push(self.aexpr_list(q)),
                        Rule::cmp_op => {
                            let op = match q.as_str() {
                                "<=" => CmpOp::Le,
                                ">=" => CmpOp::Ge,
                                "<" => CmpOp::Lt,
                                ">" => CmpOp::Gt,
                                "!=" => CmpOp::Ne,
                                _ => CmpOp::Eq,
                            };
                            ops.push((op, span_of(&q)));
                        }
                        _ => {}
                    }
                }
                Constraint {
                    kind: ConstraintKind::Chain { operands, ops },
                    span,
                }
            }
            _ => Constraint {
                kind: ConstraintKind::And(Vec::new()),
                span,
            },
        }
    }

    fn aexpr_list(&mut self, p: Pair<Rule>) -> Vec<Expr> {
        p.into_inner()
            .filter(|q| q.as_rule() == Rule::aexpr)
            .map(|q| self.aexpr(q))
            .collect()
    }

    /// `aunary (arith_op aunary)*` with precedence climbing.
    fn aexpr(&mut self, p: Pair<Rule>) -> Expr {
        let mut operands = Vec::new();
        let mut ops = Vec::new();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::aunary => operands.push(self.aunary(q)),
                Rule::arith_op => ops.push((bin_op_of(q.as_str()), span_of(&q))),
                _ => {}
            }
        }
        self.climb(operands, ops)
    }

    fn aunary(&mut self, p: Pair<Rule>) -> Expr {
        let mut negs = Vec::new();
        let mut atom = bad();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::neg_op => negs.push(span_of(&q)),
                _ => atom = self.aatom(q),
            }
        }
        apply_prefix(negs.into_iter().map(|s| (UnOp::Neg, s)).collect(), atom)
    }

    fn aatom(&mut self, p: Pair<Rule>) -> Expr {
        let span = span_of(&p);
        match p.as_rule() {
            Rule::juxt => self.juxt(p),
            Rule::int_lit => Expr {
                kind: ExprKind::Int(self.int(&p)),
                span,
            },
            Rule::ident => Expr {
                kind: ExprKind::Name(p.as_str().to_string()),
                span,
            },
            Rule::acall => {
                let mut func = missing_ident(span);
                let mut args = Vec::new();
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::ident => func = self.ident(q),
                        Rule::aexpr_list => args = self.aexpr_list(q),
                        _ => {}
                    }
                }
                Expr {
                    kind: ExprKind::Call { func, args },
                    span,
                }
            }
            Rule::aexpr => self.aexpr(p),
            _ => bad(),
        }
    }

    /// `2i` → `2 * i`.
    fn juxt(&mut self, p: Pair<Rule>) -> Expr {
        let span = span_of(&p);
        let mut k = bad();
        let mut v = bad();
        for q in p.into_inner() {
            let s = span_of(&q);
            match q.as_rule() {
                Rule::int_lit => {
                    k = Expr {
                        kind: ExprKind::Int(self.int(&q)),
                        span: s,
                    }
                }
                Rule::ident => {
                    v = Expr {
                        kind: ExprKind::Name(q.as_str().to_string()),
                        span: s,
                    }
                }
                _ => {}
            }
        }
        Expr {
            kind: ExprKind::Binary {
                op: BinOp::Mul,
                lhs: Box::new(k),
                rhs: Box::new(v),
            },
            span,
        }
    }

    /// Precedence climbing over `operands[0] ops[0] operands[1] ...`; all
    /// operators left-associative.
    fn climb(&mut self, operands: Vec<Expr>, ops: Vec<(BinOp, Span)>) -> Expr {
        if operands.len() > MAX_CHAIN {
            let s = operands
                .first()
                .map(|e| e.span)
                .unwrap_or_default()
                .join(operands.last().map(|e| e.span).unwrap_or_default());
            self.errors.push(Diagnostic::error(
                format!("expression with more than {MAX_CHAIN} operands"),
                s,
            ));
            return bad();
        }
        // Shunting-yard: operand stack and operator stack.
        let mut out: Vec<Expr> = Vec::new();
        let mut stack: Vec<(BinOp, Span)> = Vec::new();
        let mut it = operands.into_iter();
        if let Some(first) = it.next() {
            out.push(first);
        }
        for ((op, s), rhs) in ops.into_iter().zip(it) {
            while let Some(&(top, _)) = stack.last() {
                if prec(top) >= prec(op) {
                    reduce_top(&mut out, &mut stack);
                } else {
                    break;
                }
            }
            stack.push((op, s));
            out.push(rhs);
        }
        while !stack.is_empty() {
            reduce_top(&mut out, &mut stack);
        }
        out.pop().unwrap_or_else(bad)
    }

    // ------------------------------------------------------------ expressions

    fn expr(&mut self, p: Pair<Rule>) -> Expr {
        let mut operands = Vec::new();
        let mut ops = Vec::new();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::unary => operands.push(self.unary(q)),
                Rule::bin_op => ops.push((bin_op_of(q.as_str()), span_of(&q))),
                _ => {}
            }
        }
        self.climb(operands, ops)
    }

    fn unary(&mut self, p: Pair<Rule>) -> Expr {
        let mut prefixes = Vec::new();
        let mut operand = bad();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::prefix_op => {
                    let op = if q.as_str().starts_with('-') {
                        UnOp::Neg
                    } else {
                        UnOp::Not
                    };
                    prefixes.push((op, span_of(&q)));
                }
                _ => operand = self.operand(q),
            }
        }
        apply_prefix(prefixes, operand)
    }

    fn afun(&mut self, p: Pair<Rule>) -> AffineFn {
        let span = span_of(&p);
        let mut params = Vec::new();
        let mut exprs = Vec::new();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::ident_list => params = self.ident_list(q),
                Rule::aexpr_list => exprs = self.aexpr_list(q),
                _ => {}
            }
        }
        AffineFn {
            params,
            exprs,
            span,
        }
    }

    fn expr_list(&mut self, p: Pair<Rule>) -> Vec<Expr> {
        p.into_inner()
            .filter(|q| q.as_rule() == Rule::expr)
            .map(|q| self.expr(q))
            .collect()
    }

    fn operand(&mut self, p: Pair<Rule>) -> Expr {
        let span = span_of(&p);
        let kind = match p.as_rule() {
            Rule::expr => return self.expr(p),
            Rule::restrict => {
                let mut domain = None;
                let mut body = bad();
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::brace_set => domain = Some(self.brace_set(q)),
                        Rule::expr => body = self.expr(q),
                        _ => {}
                    }
                }
                let domain = domain.unwrap_or(Domain {
                    kind: DomainKind::Set(Vec::new()),
                    span,
                });
                ExprKind::Restrict {
                    domain,
                    body: Box::new(body),
                }
            }
            Rule::if_expr => {
                let mut es: Vec<Expr> = p
                    .into_inner()
                    .filter(|q| q.as_rule() == Rule::expr)
                    .map(|q| self.expr(q))
                    .collect();
                let else_branch = es.pop().unwrap_or_else(bad);
                let then_branch = es.pop().unwrap_or_else(bad);
                let cond = es.pop().unwrap_or_else(bad);
                ExprKind::If {
                    cond: Box::new(cond),
                    then_branch: Box::new(then_branch),
                    else_branch: Box::new(else_branch),
                }
            }
            Rule::dep => {
                let mut func = None;
                let mut body = bad();
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::afun => func = Some(self.afun(q)),
                        _ => body = self.operand(q),
                    }
                }
                let func = func.unwrap_or(AffineFn {
                    params: Vec::new(),
                    exprs: Vec::new(),
                    span,
                });
                ExprKind::Dep {
                    func,
                    body: Box::new(body),
                }
            }
            Rule::val_expr => match p.into_inner().find(|q| q.as_rule() == Rule::afun) {
                Some(f) => ExprKind::Val(self.afun(f)),
                None => return bad(),
            },
            Rule::reduce => {
                let mut op = ReduceOp::Add;
                let mut op_span = span;
                let mut projection = Projection::Names(Vec::new());
                let mut body = bad();
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::red_op => {
                            op_span = span_of(&q);
                            op = match q.as_str() {
                                "*" | "prod" => ReduceOp::Mul,
                                "max" => ReduceOp::Max,
                                "min" => ReduceOp::Min,
                                "and" | "&&" => ReduceOp::And,
                                "or" | "||" => ReduceOp::Or,
                                _ => ReduceOp::Add,
                            };
                        }
                        Rule::projection => {
                            if let Some(r) = q.into_inner().next() {
                                projection = if r.as_rule() == Rule::afun {
                                    Projection::Function(self.afun(r))
                                } else {
                                    Projection::Names(self.idents_in(r))
                                };
                            }
                        }
                        Rule::expr => body = self.expr(q),
                        _ => {}
                    }
                }
                ExprKind::Reduce {
                    op,
                    op_span,
                    projection,
                    body: Box::new(body),
                }
            }
            Rule::case_expr => ExprKind::Case(
                p.into_inner()
                    .filter(|q| q.as_rule() == Rule::expr)
                    .map(|q| self.expr(q))
                    .collect(),
            ),
            Rule::categorical => {
                let mut indices = Vec::new();
                let mut body = bad();
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::index_list => indices = self.idents_in(q),
                        Rule::expr => body = self.expr(q),
                        _ => {}
                    }
                }
                ExprKind::Categorical {
                    indices,
                    body: Box::new(body),
                }
            }
            Rule::bool_lit => ExprKind::Bool(p.as_str() == "true"),
            Rule::number => match p.into_inner().next() {
                Some(q) if q.as_rule() == Rule::float_lit => match q.as_str().parse::<f64>() {
                    Ok(v) if v.is_finite() => ExprKind::Float(v),
                    _ => {
                        self.errors.push(Diagnostic::error(
                            "floating-point literal out of range",
                            span_of(&q),
                        ));
                        return bad();
                    }
                },
                Some(q) if q.as_rule() == Rule::juxt => return self.juxt(q),
                Some(q) => ExprKind::Int(self.int(&q)),
                None => return bad(),
            },
            Rule::access => {
                let mut var = missing_ident(span);
                let mut indices = Vec::new();
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::ident => var = self.ident(q),
                        Rule::expr_list => indices = self.expr_list(q),
                        _ => {}
                    }
                }
                ExprKind::Access { var, indices }
            }
            Rule::call => {
                let mut func = missing_ident(span);
                let mut args = Vec::new();
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::ident => func = self.ident(q),
                        Rule::expr_list => args = self.expr_list(q),
                        _ => {}
                    }
                }
                ExprKind::Call { func, args }
            }
            Rule::name => ExprKind::Name(p.as_str().to_string()),
            Rule::unsup_auto => {
                self.unsupported("`auto` restriction", &p, 4);
                return bad();
            }
            Rule::unsup_val_fuzzy => {
                self.unsupported("fuzzy function `[[ ]]`", &p, 3);
                return bad();
            }
            Rule::unsup_fuzzy_access => {
                self.unsupported("fuzzy function `[[ ]]`", &p, p.as_str().len());
                return bad();
            }
            Rule::unsup_argreduce => {
                self.unsupported("`argreduce`", &p, 9);
                return bad();
            }
            Rule::unsup_conv => {
                self.unsupported("`conv` expression", &p, 4);
                return bad();
            }
            Rule::unsup_select => {
                self.unsupported("`select` expression", &p, 6);
                return bad();
            }
            _ => return bad(),
        };
        Expr { kind, span }
    }
}

/// Depth of an expression tree (a leaf has depth 1), computed without
/// recursion so that it is safe on any tree.
fn expr_depth(e: &Expr) -> usize {
    let mut max = 0;
    let mut stack: Vec<(&Expr, usize)> = vec![(e, 1)];
    while let Some((e, d)) = stack.pop() {
        max = max.max(d);
        let children: Vec<&Expr> = match &e.kind {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Name(_)
            | ExprKind::Val(_) => Vec::new(),
            ExprKind::Access { indices: xs, .. }
            | ExprKind::Call { args: xs, .. }
            | ExprKind::Case(xs) => xs.iter().collect(),
            ExprKind::Dep { body, .. }
            | ExprKind::Restrict { body, .. }
            | ExprKind::Reduce { body, .. }
            | ExprKind::Categorical { body, .. } => vec![body],
            ExprKind::Unary { operand, .. } => vec![operand],
            ExprKind::Binary { lhs, rhs, .. } => vec![lhs, rhs],
            ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => vec![cond, then_branch, else_branch],
        };
        stack.extend(children.into_iter().map(|c| (c, d + 1)));
    }
    max
}

fn missing_ident(span: Span) -> Ident {
    Ident {
        name: String::new(),
        span,
    }
}

fn bin_op_of(s: &str) -> BinOp {
    match s {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Mod,
        "==" | "=" => BinOp::Eq,
        "!=" => BinOp::Ne,
        "<" => BinOp::Lt,
        "<=" => BinOp::Le,
        ">" => BinOp::Gt,
        ">=" => BinOp::Ge,
        "&&" | "and" => BinOp::And,
        _ => BinOp::Or,
    }
}

/// Binding strength: `or` < `and` < comparisons < `+ -` < `* / %`.
fn prec(op: BinOp) -> u8 {
    match op {
        BinOp::Or => 1,
        BinOp::And => 2,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 3,
        BinOp::Add | BinOp::Sub => 4,
        BinOp::Mul | BinOp::Div | BinOp::Mod => 5,
    }
}

/// Pops one operator and two operands, pushes the combined node.
fn reduce_top(out: &mut Vec<Expr>, stack: &mut Vec<(BinOp, Span)>) {
    let (Some((op, _)), Some(rhs), Some(lhs)) = (stack.pop(), out.pop(), out.pop()) else {
        return;
    };
    let span = lhs.span.join(rhs.span);
    out.push(Expr {
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        span,
    });
}

/// Applies prefix operators, innermost (rightmost) first.
fn apply_prefix(prefixes: Vec<(UnOp, Span)>, operand: Expr) -> Expr {
    prefixes.into_iter().rev().fold(operand, |e, (op, s)| {
        let span = s.join(e.span);
        Expr {
            kind: ExprKind::Unary {
                op,
                operand: Box::new(e),
            },
            span,
        }
    })
}
