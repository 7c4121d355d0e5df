//! Building the AST of domains (`{ ... }` sets, Alpha's rectangular
//! domains with ranges), constraints and affine expressions (with `2i`
//! juxtaposition).

use super::{bad, child, children, span_of, Builder, Rule};
use crate::diag::{Diagnostic, Span};
use crate::syntax::ast::*;
use pest::iterators::Pair;

impl Builder {
    pub(super) fn domain(&mut self, p: Pair<Rule>) -> Domain {
        let span = span_of(&p);
        match p.into_inner().next() {
            Some(q) if q.as_rule() == Rule::brace_set => self.brace_set(q),
            Some(q) if q.as_rule() == Rule::array_dom => self.array_dom(q, span),
            _ => Domain {
                kind: DomainKind::Set(Vec::new()),
                span,
            },
        }
    }

    /// Alpha's rectangular domain `[E1, ..., En]` (kept as
    /// [`DomainKind::Array`]), or, when some extent is a range `a:b` or
    /// index names are given (`as [i, j]`), the set it stands for:
    /// `{ [i1, ..., in] : C1 and ... and Cn }` with `Ck` = `0 <= ik < Ek`
    /// for an extent and `a <= ik <= b` for a range (both ends included).
    /// The indices are the `as` names, else `i0, i1, ...`.
    fn array_dom(&mut self, p: Pair<Rule>, span: Span) -> Domain {
        let mut extents: Vec<(Vec<Expr>, Span)> = Vec::new();
        let mut names: Option<(Vec<Ident>, Span)> = None;
        for q in p.into_inner() {
            let s = span_of(&q);
            match q.as_rule() {
                Rule::extent => extents.push((self.list(q, Rule::aexpr, Self::aexpr), s)),
                Rule::array_names => {
                    names = child(&q, Rule::set_tuple).map(|t| (self.idents_in(t), s));
                }
                _ => {}
            }
        }
        let ranged = extents.iter().any(|(e, _)| e.len() > 1);
        if !ranged && names.is_none() {
            let uppers = extents
                .into_iter()
                .filter_map(|(mut e, _)| e.pop())
                .collect();
            return Domain {
                kind: DomainKind::Array(uppers),
                span,
            };
        }
        let indices: Vec<Ident> = match names {
            Some((ns, s)) => {
                if ns.len() != extents.len() {
                    self.errors.push(
                        Diagnostic::error(
                            format!(
                                "`as` names {} index(es) but the domain has {}",
                                ns.len(),
                                extents.len()
                            ),
                            s,
                        )
                        .with_label("one name per dimension"),
                    );
                }
                ns
            }
            None => extents
                .iter()
                .enumerate()
                .map(|(k, (_, s))| Ident {
                    name: format!("i{k}"),
                    span: *s,
                })
                .collect(),
        };
        let mut chains: Vec<Constraint> = Vec::new();
        for ((mut bounds, s), index) in extents.into_iter().zip(&indices) {
            let x = vec![Expr {
                kind: ExprKind::Name(index.name.clone()),
                span: index.span,
            }];
            let (lower, upper, op) = match (bounds.pop(), bounds.pop()) {
                (Some(b), Some(a)) => (a, b, CmpOp::Le),
                (Some(n), None) => (
                    Expr {
                        kind: ExprKind::Int(0),
                        span: s,
                    },
                    n,
                    CmpOp::Lt,
                ),
                _ => continue,
            };
            chains.push(Constraint {
                kind: ConstraintKind::Chain {
                    operands: vec![vec![lower], x, vec![upper]],
                    ops: vec![(CmpOp::Le, s), (op, s)],
                },
                span: s,
            });
        }
        let constraint = match chains.len() {
            0 => None,
            1 => chains.pop(),
            _ => Some(Constraint {
                kind: ConstraintKind::And(chains),
                span,
            }),
        };
        Domain {
            kind: DomainKind::Set(vec![BasicSet {
                indices: Some(indices),
                constraint,
                span,
            }]),
            span,
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
