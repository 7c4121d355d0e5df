//! Building the AST of expressions: precedence climbing over operator
//! chains (with Alpha's infix `xor`, `max`, `min`), prefix operators,
//! lists, and every operand form (restrictions, `if`, dependences, `val`,
//! reductions, `case`, categorical draws, literals, accesses, calls, and
//! the unsupported forms). Alpha's other notations are built in
//! [`notation`], its polynomials expanded in [`notation::poly`].

mod notation;

use super::{bad, child, missing_ident, span_of, Builder, Rule, MAX_CHAIN};
use crate::diag::{Diagnostic, Span};
use crate::syntax::ast::*;
use pest::iterators::Pair;

/// A binary operator of a chain: the source language's, or Alpha's `xor`
/// (on bools, as loose as `or`), which the AST writes as a call.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Op {
    Bin(BinOp),
    Xor,
}

impl Op {
    fn precedence(self) -> u8 {
        match self {
            Op::Bin(b) => b.precedence(),
            Op::Xor => BinOp::Or.precedence(),
        }
    }
}

impl Builder {
    /// Precedence climbing over `operands[0] ops[0] operands[1] ...`; all
    /// operators left-associative.
    pub(super) fn climb(&mut self, operands: Vec<Expr>, ops: Vec<(Op, Span)>) -> Expr {
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
        let mut stack: Vec<(Op, Span)> = Vec::new();
        let mut it = operands.into_iter();
        if let Some(first) = it.next() {
            out.push(first);
        }
        for ((op, s), rhs) in ops.into_iter().zip(it) {
            while let Some(&(top, _)) = stack.last() {
                if top.precedence() >= op.precedence() {
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

    /// `mm_chain (bin_op mm_chain)*` with precedence climbing.
    pub(super) fn expr(&mut self, p: Pair<Rule>) -> Expr {
        self.chain(p, Rule::mm_chain, Rule::bin_op, Self::mm_chain)
    }

    /// `unary (mm_op unary)*`: Alpha's infix `a max b min c` is
    /// `min(max(a, b), c)` (left-associative).
    fn mm_chain(&mut self, p: Pair<Rule>) -> Expr {
        let mut acc: Option<Expr> = None;
        let mut op: Option<Ident> = None;
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::mm_op => op = Some(self.ident(q)),
                _ => {
                    let rhs = self.unary(q);
                    acc = Some(match (acc.take(), op.take()) {
                        (Some(lhs), Some(func)) => {
                            let span = lhs.span.join(rhs.span);
                            Expr {
                                kind: ExprKind::Call {
                                    func,
                                    args: vec![lhs, rhs],
                                },
                                span,
                            }
                        }
                        _ => rhs,
                    });
                }
            }
        }
        acc.unwrap_or_else(bad)
    }

    /// `prefix_op* operand`.
    fn unary(&mut self, p: Pair<Rule>) -> Expr {
        self.prefixed(p, Rule::prefix_op, Self::operand)
    }

    /// `operand (operator operand)*`, the children of `p` of the rules
    /// `operand_rule` (built by `build`) and `operator_rule`, with
    /// precedence climbing.
    pub(super) fn chain(
        &mut self,
        p: Pair<Rule>,
        operand_rule: Rule,
        operator_rule: Rule,
        build: fn(&mut Self, Pair<Rule>) -> Expr,
    ) -> Expr {
        let mut operands = Vec::new();
        let mut ops = Vec::new();
        for q in p.into_inner() {
            if q.as_rule() == operand_rule {
                operands.push(build(self, q));
            } else if q.as_rule() == operator_rule {
                ops.push((op_of(q.as_str()), span_of(&q)));
            }
        }
        self.climb(operands, ops)
    }

    /// `prefix* operand`: the children of `p` of rule `prefix_rule` (`-` is
    /// negation, anything else `not`) applied to the last other child
    /// (built by `build`).
    pub(super) fn prefixed(
        &mut self,
        p: Pair<Rule>,
        prefix_rule: Rule,
        build: fn(&mut Self, Pair<Rule>) -> Expr,
    ) -> Expr {
        let mut prefixes = Vec::new();
        let mut operand = bad();
        for q in p.into_inner() {
            if q.as_rule() == prefix_rule {
                let op = if q.as_str().starts_with('-') {
                    UnOp::Neg
                } else {
                    UnOp::Not
                };
                prefixes.push((op, span_of(&q)));
            } else {
                operand = build(self, q);
            }
        }
        apply_prefix(prefixes, operand)
    }

    pub(super) fn afun(&mut self, p: Pair<Rule>) -> AffineFn {
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

    /// The `expr` child of `p` (a placeholder when missing).
    pub(super) fn expr_child(&mut self, p: &Pair<Rule>) -> Expr {
        child(p, Rule::expr).map_or_else(bad, |q| self.expr(q))
    }

    /// The `expr` children of `p`.
    fn expr_list(&mut self, p: Pair<Rule>) -> Vec<Expr> {
        self.list(p, Rule::expr, Self::expr)
    }

    /// The children of `p` of rule `item_rule`, built by `build`.
    pub(super) fn list(
        &mut self,
        p: Pair<Rule>,
        item_rule: Rule,
        build: fn(&mut Self, Pair<Rule>) -> Expr,
    ) -> Vec<Expr> {
        p.into_inner()
            .filter(|q| q.as_rule() == item_rule)
            .map(|q| build(self, q))
            .collect()
    }

    /// `ident [ expr_list ]`, `ident ( expr_list )` or
    /// `ident ( aexpr_list )`: the name and the (possibly empty) list.
    pub(super) fn name_and_list(&mut self, p: Pair<Rule>, span: Span) -> (Ident, Vec<Expr>) {
        let mut name = missing_ident(span);
        let mut list = Vec::new();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::ident => name = self.ident(q),
                Rule::expr_list => list = self.expr_list(q),
                Rule::aexpr_list => list = self.aexpr_list(q),
                _ => {}
            }
        }
        (name, list)
    }

    fn operand(&mut self, p: Pair<Rule>) -> Expr {
        let span = span_of(&p);
        let kind = match p.as_rule() {
            Rule::expr => return self.expr(p),
            Rule::restrict => {
                let domain = child(&p, Rule::brace_set).map_or_else(
                    || Domain {
                        kind: DomainKind::Set(Vec::new()),
                        span,
                    },
                    |q| self.brace_set(q),
                );
                ExprKind::Restrict {
                    domain,
                    body: Box::new(self.expr_child(&p)),
                }
            }
            Rule::if_expr => {
                let mut es = self.expr_list(p);
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
                let func = child(&p, Rule::afun).map_or_else(
                    || AffineFn {
                        params: Vec::new(),
                        exprs: Vec::new(),
                        span,
                    },
                    |q| self.afun(q),
                );
                // The operand after `@`: the one child that is not `afun`.
                let body = p
                    .into_inner()
                    .find(|q| q.as_rule() != Rule::afun)
                    .map_or_else(bad, |q| self.operand(q));
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
                let (op, op_span) = child(&p, Rule::red_op).map_or((ReduceOp::Add, span), |q| {
                    (reduce_op_of(q.as_str()), span_of(&q))
                });
                if child(&p, Rule::red_op).is_some_and(|q| q.as_str() == "xor") {
                    self.unsupported_at("`reduce(xor, ...)`", op_span);
                    return bad();
                }
                let projection =
                    match child(&p, Rule::projection).and_then(|q| q.into_inner().next()) {
                        Some(r) if r.as_rule() == Rule::afun => Projection::Function(self.afun(r)),
                        Some(r) => Projection::Names(self.idents_in(r)),
                        None => Projection::Names(Vec::new()),
                    };
                ExprKind::Reduce {
                    op,
                    op_span,
                    projection,
                    body: Box::new(self.expr_child(&p)),
                }
            }
            Rule::case_expr => return self.case_expr(p),
            Rule::val_index => return self.val_index(p),
            Rule::val_poly => return self.val_poly(p),
            Rule::select_expr => return self.select_expr(p),
            Rule::multi_arg => return self.multi_arg(p),
            Rule::boolean => ExprKind::Bool(p.as_str().starts_with("true")),
            Rule::categorical => ExprKind::Categorical {
                indices: child(&p, Rule::index_list)
                    .map(|q| self.idents_in(q))
                    .unwrap_or_default(),
                body: Box::new(self.expr_child(&p)),
            },
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
                let (var, indices) = self.name_and_list(p, span);
                ExprKind::Access { var, indices }
            }
            Rule::call => {
                let (func, args) = self.name_and_list(p, span);
                ExprKind::Call { func, args }
            }
            Rule::name => ExprKind::Name(p.as_str().to_string()),
            Rule::unsup_ext_reduce => {
                // Underline the function's name: `reduce ( NAME ,`.
                let text = p.as_str();
                let start = text.find('(').map_or(0, |k| k + 1);
                let rest = &text[start..];
                let name_start = start + (rest.len() - rest.trim_start().len());
                let name_len = text[name_start..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(0);
                let at = Span::new(span.start + name_start, span.start + name_start + name_len);
                self.unsupported_at("a reduction with an external function", at);
                return bad();
            }
            // `auto` outside a `case`, fuzzy functions, `argreduce`,
            // `conv`, `select` from a calculator expression.
            _ => {
                self.unsupported(&p);
                return bad();
            }
        };
        Expr { kind, span }
    }
}

/// Depth of an expression tree (a leaf has depth 1), computed without
/// recursion so that it is safe on any tree.
pub(super) fn expr_depth(e: &Expr) -> usize {
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
/// The reduction operator written `s` (`sum`/`prod` are `+`/`*`).
fn reduce_op_of(s: &str) -> ReduceOp {
    match s {
        "*" | "prod" => ReduceOp::Mul,
        "max" => ReduceOp::Max,
        "min" => ReduceOp::Min,
        "and" | "&&" => ReduceOp::And,
        "or" | "||" => ReduceOp::Or,
        _ => ReduceOp::Add,
    }
}

/// The chain operator written `s`.
fn op_of(s: &str) -> Op {
    if s == "xor" {
        Op::Xor
    } else {
        Op::Bin(bin_op_of(s))
    }
}

/// The binary operator written `s`.
fn bin_op_of(s: &str) -> BinOp {
    match s {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Rem,
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

/// Pops one operator and two operands, pushes the combined node (`a xor b`
/// is the call `xor(a, b)`).
fn reduce_top(out: &mut Vec<Expr>, stack: &mut Vec<(Op, Span)>) {
    let (Some((op, op_span)), Some(rhs), Some(lhs)) = (stack.pop(), out.pop(), out.pop()) else {
        return;
    };
    let span = lhs.span.join(rhs.span);
    let kind = match op {
        Op::Bin(op) => ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        Op::Xor => ExprKind::Call {
            func: Ident {
                name: "xor".to_string(),
                span: op_span,
            },
            args: vec![lhs, rhs],
        },
    };
    out.push(Expr { kind, span });
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
