//! Building the AST of files, packages, imports, systems, parameters,
//! declarations and equations (the structure around expressions).

use super::{child, children, expr::expr_depth, missing_ident, span_of, Builder, Rule, MAX_DEPTH};
use crate::diag::Diagnostic;
use crate::syntax::ast::*;
use pest::iterators::Pair;

impl Builder {
    pub(super) fn items<'i>(&mut self, pairs: impl Iterator<Item = Pair<'i, Rule>>) -> Vec<Item> {
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

    fn external(&mut self, p: Pair<Rule>) -> External {
        let arity =
            child(&p, Rule::int_lit).map_or(0, |q| usize::try_from(self.int(&q)).unwrap_or(0));
        External {
            name: self.name_of(&p),
            result: child(&p, Rule::elem_type).map(|q| Self::elem_type(&q)),
            arity,
            span: span_of(&p),
        }
    }

    /// `constant NAME = [-]VALUE`; `None` when `-VALUE` does not fit.
    fn constant(&mut self, p: Pair<Rule>) -> Option<Constant> {
        let value = child(&p, Rule::int_lit).map_or(0, |q| self.int(&q));
        let value = if child(&p, Rule::neg_sign).is_some() {
            value.checked_neg()?
        } else {
            value
        };
        Some(Constant {
            name: self.name_of(&p),
            value,
            span: span_of(&p),
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
        Import {
            path: child(&p, Rule::qname)
                .map(|q| self.qname(q))
                .unwrap_or_default(),
            wildcard: child(&p, Rule::import_all).is_some(),
            span: span_of(&p),
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
            uses: Vec::new(),
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
                Rule::let_body => self.let_body(q, &mut sys),
                // `define`, fuzzy variables, `over ... while`, `when`, `else`.
                _ => self.unsupported(&q),
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
        children(p, Rule::decl).map(|q| self.decl(q)).collect()
    }

    /// `A, B : TYPE DOMAIN`.
    fn decl(&mut self, p: Pair<Rule>) -> Decl {
        Decl {
            names: child(&p, Rule::ident_list)
                .map(|q| self.ident_list(q))
                .unwrap_or_default(),
            ty: child(&p, Rule::elem_type).map(|q| Self::elem_type(&q)),
            domain: child(&p, Rule::domain).map(|q| self.domain(q)),
            span: span_of(&p),
        }
    }

    fn let_body(&mut self, p: Pair<Rule>, sys: &mut System) {
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::equation => sys.equations.push(self.equation(q)),
                Rule::use_eq => {
                    if let Some(u) = q.into_inner().next() {
                        sys.uses.push(self.use_equation(u));
                    }
                }
                _ => {}
            }
        }
    }

    /// `over D with [k] : (OUT, ...) = sys[P, ...](IN, ...)` (`over_eq`) or
    /// `use D sys[P, ...](IN, ...) returns (OUT, ...)` (`old_use_eq`).
    fn use_equation(&mut self, p: Pair<Rule>) -> UseEquation {
        let span = span_of(&p);
        let old_form = p.as_rule() == Rule::old_use_eq;
        let mut u = UseEquation {
            domain: None,
            sub_dims: None,
            outputs: Vec::new(),
            system: Vec::new(),
            params: Vec::new(),
            params_span: span,
            inputs: Vec::new(),
            span,
        };
        // Expression lists before the system's name are outputs (`over`
        // form), after it inputs.
        let mut seen_name = false;
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::use_domain => u.domain = q.into_inner().next().map(|d| self.use_domain(d)),
                Rule::index_list => u.sub_dims = Some(self.idents_in(q)),
                Rule::qname => {
                    u.system = self.qname(q);
                    seen_name = true;
                }
                Rule::call_params => {
                    u.params_span = span_of(&q);
                    u.params = child(&q, Rule::expr_list)
                        .map(|l| self.list(l, Rule::expr, Self::expr))
                        .unwrap_or_default();
                }
                Rule::expr_list => {
                    let list = self.list(q, Rule::expr, Self::expr);
                    if seen_name {
                        u.inputs = list;
                    } else {
                        u.outputs = list;
                    }
                }
                // `returns (Y, ...)`: whole variables.
                Rule::ident_list if old_form => {
                    u.outputs = self
                        .ident_list(q)
                        .into_iter()
                        .map(|id| Expr {
                            span: id.span,
                            kind: ExprKind::Name(id.name),
                        })
                        .collect();
                }
                _ => {}
            }
        }
        for e in u.outputs.iter().chain(&u.inputs).chain(&u.params) {
            if expr_depth(e) > MAX_DEPTH {
                self.errors.push(
                    Diagnostic::error(
                        format!("expression nested more than {MAX_DEPTH} deep"),
                        e.span,
                    )
                    .with_label("split it into several equations"),
                );
            }
        }
        u
    }

    /// An extension domain: an isl set, `[N, ...]`, or AlphaZ's
    /// `{ k, l | constraint }` (the set of `[k, l]` satisfying it).
    fn use_domain(&mut self, p: Pair<Rule>) -> Domain {
        let span = span_of(&p);
        if p.as_rule() != Rule::old_set {
            return self.domain(p);
        }
        let mut indices = Vec::new();
        let mut constraint = None;
        for r in p.into_inner() {
            match r.as_rule() {
                Rule::ident_list => indices = self.ident_list(r),
                Rule::constraint => constraint = Some(self.constraint(r)),
                _ => {}
            }
        }
        Domain {
            kind: DomainKind::Set(vec![BasicSet {
                indices: Some(indices),
                constraint,
                span,
            }]),
            span,
        }
    }

    fn equation(&mut self, p: Pair<Rule>) -> Equation {
        let span = span_of(&p);
        let var = self.name_of(&p);
        let indices = child(&p, Rule::lhs_indices).map(|q| self.idents_in(q));
        let rhs = self.expr_child(&p);
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
}
