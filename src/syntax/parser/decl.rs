//! Building the AST of files, packages, imports, systems, parameters,
//! declarations and equations (the structure around expressions).

use super::{bad, expr::expr_depth, missing_ident, span_of, Builder, Rule, MAX_DEPTH};
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
}
