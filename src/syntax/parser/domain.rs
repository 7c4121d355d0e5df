//! Building the AST of domains (`{ ... }` sets, array-style boxes),
//! constraints and affine expressions (with `2i` juxtaposition).

use super::{bad, child, children, span_of, Builder, Rule};
use crate::syntax::ast::*;
use pest::iterators::Pair;

impl Builder {
    pub(super) fn domain(&mut self, p: Pair<Rule>) -> Domain {
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

    pub(super) fn brace_set(&mut self, p: Pair<Rule>) -> Domain {
        let span = span_of(&p);
        let pieces = children(p, Rule::basic_set)
            .map(|q| self.basic_set(q))
            .collect();
        Domain {
            kind: DomainKind::Set(pieces),
            span,
        }
    }

    /// `[i, j] : constraint`, `[i, j]` or `: constraint`.
    fn basic_set(&mut self, p: Pair<Rule>) -> BasicSet {
        BasicSet {
            indices: child(&p, Rule::set_tuple).map(|q| self.idents_in(q)),
            constraint: child(&p, Rule::constraint).map(|q| self.constraint(q)),
            span: span_of(&p),
        }
    }

    pub(super) fn constraint(&mut self, p: Pair<Rule>) -> Constraint {
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

    pub(super) fn aexpr_list(&mut self, p: Pair<Rule>) -> Vec<Expr> {
        self.list(p, Rule::aexpr, Self::aexpr)
    }

    /// `aunary (arith_op aunary)*` with precedence climbing.
    pub(super) fn aexpr(&mut self, p: Pair<Rule>) -> Expr {
        self.chain(p, Rule::aunary, Rule::arith_op, Self::aunary)
    }

    /// `neg_op* aatom`.
    fn aunary(&mut self, p: Pair<Rule>) -> Expr {
        self.prefixed(p, Rule::neg_op, Self::aatom)
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
                let (func, args) = self.name_and_list(p, span);
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
    pub(super) fn juxt(&mut self, p: Pair<Rule>) -> Expr {
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
}
