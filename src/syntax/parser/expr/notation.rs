//! Building Alpha's notations into the AST: `case NAME { ...; auto : E }`,
//! `val[e]`, polynomial values `val { ... }`, `select R from E`, and the
//! multi-argument operators `+(...)`, `*(...)`, `and(...)`, `or(...)`.
//! Each becomes an existing AST form or a call of a keyword
//! ([`crate::syntax::ast::notation`]).

mod poly;

use super::super::{bad, child, span_of, Builder, Rule};
use crate::diag::{Diagnostic, Span};
use crate::syntax::ast::notation::{AUTO, SELECT, VAL};
use crate::syntax::ast::*;
use pest::iterators::Pair;

/// The call `name(args)` written at `span`, its name at `name_span`.
fn call(name: &str, name_span: Span, args: Vec<Expr>, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Call {
            func: Ident {
                name: name.to_string(),
                span: name_span,
            },
            args,
        },
        span,
    }
}

/// The first `n` bytes of `s` (a keyword at the start of a construct).
fn head(s: Span, n: usize) -> Span {
    Span::new(s.start, (s.start + n).min(s.end))
}

impl Builder {
    /// Reports `unsupported: {what}` at `span`, like the constructs of
    /// [`super::super::unsupported_construct`].
    pub(super) fn unsupported_at(&mut self, what: &str, span: Span) {
        self.errors.push(
            Diagnostic::error(format!("unsupported: {what}"), span)
                .with_label("not in the supported subset of Alpha")
                .with_note("see docs/language.md, section 6"),
        );
    }

    /// `case NAME? { P1; P2; ... }`: the name is a label only; a piece
    /// `auto : E` becomes `auto(E)`.
    pub(super) fn case_expr(&mut self, p: Pair<Rule>) -> Expr {
        let span = span_of(&p);
        let mut pieces = Vec::new();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::expr => pieces.push(self.expr(q)),
                Rule::auto_piece => {
                    let s = span_of(&q);
                    let body = self.expr_child(&q);
                    pieces.push(call(AUTO, head(s, 4), vec![body], s));
                }
                // The case's name.
                _ => {}
            }
        }
        Expr {
            kind: ExprKind::Case(pieces),
            span,
        }
    }

    /// `val[e, ...]`: the call `val(e, ...)` (lowering requires one affine
    /// expression).
    pub(super) fn val_index(&mut self, p: Pair<Rule>) -> Expr {
        let span = span_of(&p);
        let es = child(&p, Rule::aexpr_list)
            .map(|q| self.aexpr_list(q))
            .unwrap_or_default();
        call(VAL, head(span, 3), es, span)
    }

    /// `+(e, ...)`, `*(e, ...)`, `and(e, ...)`, `or(e, ...)`: the calls
    /// `sum`, `prod`, `and`, `or`.
    pub(super) fn multi_arg(&mut self, p: Pair<Rule>) -> Expr {
        let span = span_of(&p);
        let (name, op_span) = match child(&p, Rule::multi_op) {
            Some(q) => {
                let name = match q.as_str() {
                    "+" => "sum",
                    "*" => "prod",
                    "and" => "and",
                    _ => "or",
                };
                (name, span_of(&q))
            }
            None => return bad(),
        };
        let args = child(&p, Rule::expr_list)
            .map(|q| self.list(q, Rule::expr, Self::expr))
            .unwrap_or_default();
        call(name, op_span, args, span)
    }

    /// `select R from E`: the call `select(R', E)`, where `R'` is
    /// `{[i, ...] : c} : val (i, ... -> e, ...)` for the relation
    /// `{ [i, ...] -> [e, ...] : c }` (no restriction without `c`), or
    /// `val (i, ... -> e, ...)` for the function `(i, ... -> e, ...)`. A
    /// union of relations is refused.
    pub(super) fn select_expr(&mut self, p: Pair<Rule>) -> Expr {
        let span = span_of(&p);
        let mut relation = None;
        let mut target = None;
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::kw_select | Rule::kw_from => {}
                Rule::afun => {
                    let s = span_of(&q);
                    relation = Some(Expr {
                        kind: ExprKind::Val(self.afun(q)),
                        span: s,
                    });
                }
                Rule::rel_set => relation = self.rel_set(q),
                _ => target = Some(self.operand(q)),
            }
        }
        match (relation, target) {
            (Some(r), Some(t)) => call(SELECT, head(span, 6), vec![r, t], span),
            _ => bad(),
        }
    }

    /// The one piece `{ [i, ...] -> [e, ...] : c }` of a `select`
    /// relation (see [`Self::select_expr`]).
    fn rel_set(&mut self, p: Pair<Rule>) -> Option<Expr> {
        let span = span_of(&p);
        let mut pieces: Vec<Pair<Rule>> = p.into_inner().collect();
        if pieces.len() != 1 {
            self.unsupported_at("`select` with a union of relations", span);
            return None;
        }
        let piece = pieces.pop()?;
        let s = span_of(&piece);
        let mut ins = Vec::new();
        let mut outs = Vec::new();
        let mut constraint = None;
        for q in piece.into_inner() {
            match q.as_rule() {
                Rule::set_tuple => ins = self.idents_in(q),
                Rule::aexpr_list => outs = self.aexpr_list(q),
                Rule::constraint => constraint = Some(self.constraint(q)),
                _ => {}
            }
        }
        let val = Expr {
            kind: ExprKind::Val(AffineFn {
                params: ins.clone(),
                exprs: outs,
                span: s,
            }),
            span: s,
        };
        Some(match constraint {
            None => val,
            Some(c) => Expr {
                kind: ExprKind::Restrict {
                    domain: Domain {
                        kind: DomainKind::Set(vec![BasicSet {
                            indices: Some(ins),
                            constraint: Some(c),
                            span: s,
                        }]),
                        span: s,
                    },
                    body: Box::new(val),
                },
                span: s,
            },
        })
    }

    /// `val { P1; P2; ... }`, Alpha's polynomial index expression (an isl
    /// piecewise quasi-polynomial without `floor`). Each piece `[i] -> p :
    /// c` becomes ordinary arithmetic on the values `val(n)` of its names
    /// (see [`poly::to_expr`] for the type), restricted to `{: c}` and, with
    /// its own names, wrapped as `val(val (i -> ...))`. Several pieces, or
    /// a restricted one, make a `case` with the piece `auto : 0` when every
    /// piece is restricted (isl's value outside a quasi-polynomial's
    /// domain); otherwise the one piece is the expression.
    pub(super) fn val_poly(&mut self, p: Pair<Rule>) -> Expr {
        let span = span_of(&p);
        let mut pieces = Vec::new();
        let mut all_restricted = true;
        for q in p.into_inner().filter(|q| q.as_rule() == Rule::poly_piece) {
            let s = span_of(&q);
            let mut tuple: Option<(Vec<Ident>, Span)> = None;
            let mut body = None;
            let mut constraint = None;
            for r in q.into_inner() {
                match r.as_rule() {
                    Rule::set_tuple => {
                        let ts = span_of(&r);
                        tuple = Some((self.idents_in(r), ts));
                    }
                    Rule::pexpr => match poly::build(r).and_then(|(poly, names)| {
                        poly::to_expr(&poly, s, &|n: &str| {
                            let at = names.get(n).copied().unwrap_or(s);
                            let name = Expr {
                                kind: ExprKind::Name(n.to_string()),
                                span: at,
                            };
                            call(VAL, at, vec![name], at)
                        })
                    }) {
                        Ok(e) => body = Some(e),
                        Err(e) => {
                            self.errors
                                .push(Diagnostic::error(e.message, e.span).with_label(e.label));
                        }
                    },
                    Rule::constraint => constraint = Some(self.constraint(r)),
                    _ => {}
                }
            }
            let Some(mut body) = body else {
                return bad();
            };
            all_restricted &= constraint.is_some();
            if let Some(c) = constraint {
                body = Expr {
                    kind: ExprKind::Restrict {
                        domain: Domain {
                            kind: DomainKind::Set(vec![BasicSet {
                                indices: None,
                                constraint: Some(c),
                                span: s,
                            }]),
                            span: s,
                        },
                        body: Box::new(body),
                    },
                    span: s,
                };
            }
            if let Some((params, ts)) = tuple {
                let f = Expr {
                    kind: ExprKind::Val(AffineFn {
                        params,
                        exprs: vec![body],
                        span: ts,
                    }),
                    span: s,
                };
                body = call(VAL, head(span, 3), vec![f], s);
            }
            pieces.push(body);
        }
        if pieces.len() == 1 && !all_restricted {
            return match pieces.pop() {
                Some(e) => Expr { span, ..e },
                None => bad(),
            };
        }
        if all_restricted {
            let zero = Expr {
                kind: ExprKind::Int(0),
                span,
            };
            pieces.push(call(AUTO, head(span, 3), vec![zero], span));
        }
        Expr {
            kind: ExprKind::Case(pieces),
            span,
        }
    }
}
