//! Lowering of expressions: names, literals, operators, `if`,
//! restrictions, dependence expressions, `categorical`; typing with int →
//! float promotion and the folding of int arithmetic into affine indices.
//! `case` (with `auto` pieces) and Alpha's other notations are lowered in
//! [`notation`].

mod notation;

use super::*;

impl SysCx<'_> {
    pub(super) fn type_err(&mut self, msg: String, span: Span, label: String) {
        self.errors
            .push(Diagnostic::error(format!("type error: {msg}"), span).with_label(label));
    }

    /// Requires `x` (written at `span`) to be what `need` says: otherwise
    /// reports `type error: {what}, this is {x's type}` and gives `None`.
    pub(super) fn require(&mut self, need: Need, x: &Expr, span: Span, what: &str) -> Option<()> {
        if need.admits(x.ty) {
            return Some(());
        }
        self.type_err(
            format!("{what}, this is {}", x.ty.name()),
            span,
            need.label().into(),
        );
        None
    }

    /// [`Self::require`] of each operand at its own span; the first that
    /// fails is reported.
    pub(super) fn require_each<'e>(
        &mut self,
        need: Need,
        xs: impl IntoIterator<Item = &'e Expr>,
        what: &str,
    ) -> Option<()> {
        xs.into_iter()
            .try_for_each(|x| self.require(need, x, x.span, what))
    }

    pub(super) fn expr(&mut self, e: &ast::Expr, scope: &Scope) -> Lowered {
        let space = self.space(&scope.real);
        let span = e.span;
        match &e.kind {
            ast::ExprKind::Int(v) => Some(mk(ExprKind::IntConst(*v), ElemType::Int, span)),
            ast::ExprKind::Float(v) => Some(mk(ExprKind::FloatConst(*v), ElemType::Float, span)),
            ast::ExprKind::Bool(b) => Some(mk(ExprKind::BoolConst(*b), ElemType::Bool, span)),
            ast::ExprKind::Name(name) => {
                if let Some(a) = scope.lookup(name) {
                    return Some(index_expr(a.clone(), span));
                }
                if let Some(k) = self.params.iter().position(|p| p == name) {
                    let mut a = Aff::zero(space);
                    a.param_coeffs_mut()[k] = 1;
                    return Some(index_expr(a, span));
                }
                if let Some(v) = self.g.constants.get(name) {
                    return Some(mk(ExprKind::IntConst(*v), ElemType::Int, span));
                }
                if let Some(&v) = self.var_map.get(name) {
                    // Whole-variable notation: the same indices (or none
                    // for a scalar).
                    let d = self.vars[v].domain.n_dims();
                    let access = if d == 0 || d == scope.values.len() {
                        let rows = if d == 0 {
                            Vec::new()
                        } else {
                            scope.values.iter().map(|a| a.row().to_vec()).collect()
                        };
                        self.multi_aff(&space, rows, span)?
                    } else {
                        self.err(
                            format!(
                                "`{name}` has {d} dimension(s) but is used where there are {} index(es)",
                                scope.values.len()
                            ),
                            span,
                            "write the indices explicitly",
                        );
                        return None;
                    };
                    return Some(mk(ExprKind::Read { var: v, access }, self.vars[v].ty, span));
                }
                self.err(format!("unknown name `{name}`"), span, "not declared");
                None
            }
            ast::ExprKind::Val(f) => {
                let a = self.val(f, scope, span)?;
                Some(index_expr(a, span))
            }
            ast::ExprKind::Access { var, indices } => {
                let Some(&v) = self.var_map.get(&var.name) else {
                    let msg =
                        if scope.lookup(&var.name).is_some() || self.params.contains(&var.name) {
                            format!("`{}` is an index or parameter, not a variable", var.name)
                        } else {
                            format!("unknown variable `{}`", var.name)
                        };
                    self.err(msg, var.span, "not a variable of this system");
                    return None;
                };
                let d = self.vars[v].domain.n_dims();
                if d != indices.len() {
                    self.err(
                        format!(
                            "`{}` has {d} dimension(s) but is accessed with {} index(es)",
                            var.name,
                            indices.len()
                        ),
                        span,
                        "wrong number of indices",
                    );
                    return None;
                }
                let lowered = self.lower_each(indices, |cx, ix| {
                    let x = cx.expr(ix, scope)?;
                    cx.require(Need::Int, &x, ix.span, "an index must be int")?;
                    Some(x)
                })?;
                let ty = self.vars[v].ty;
                let affs: Option<Vec<Vec<i64>>> = lowered
                    .iter()
                    .map(|x| as_aff(x, &space).map(|a| a.row().to_vec()))
                    .collect();
                Some(match affs {
                    Some(rows) => {
                        let access = self.multi_aff(&space, rows, span)?;
                        mk(ExprKind::Read { var: v, access }, ty, span)
                    }
                    None => mk(
                        ExprKind::IndirectRead {
                            var: v,
                            indices: lowered,
                        },
                        ty,
                        span,
                    ),
                })
            }
            ast::ExprKind::Dep { func, body } => {
                let inner = self.fn_scope(func, scope)?;
                let outs = self.lower_each(&func.exprs, |cx, x| cx.affine(x, &inner))?;
                let target = Scope {
                    names: vec![None; outs.len()],
                    values: outs,
                    real: scope.real.clone(),
                };
                self.expr(body, &target)
            }
            ast::ExprKind::Unary { op, operand } => {
                let x = self.expr(operand, scope)?;
                match op {
                    ast::UnOp::Neg => {
                        self.require(Need::Number, &x, operand.span, "`-` needs a number")?;
                        match &x.kind {
                            ExprKind::FloatConst(v) => {
                                Some(mk(ExprKind::FloatConst(-v), ElemType::Float, span))
                            }
                            _ => match as_aff(&x, &space) {
                                Some(a) => match aff_scale(&a, -1) {
                                    Some(a) => Some(index_expr(a, span)),
                                    None => {
                                        self.err("integer overflow", span, "too large");
                                        None
                                    }
                                },
                                None => Some(mk(
                                    ExprKind::Unary(UnOp::Neg, Box::new(x.clone())),
                                    x.ty,
                                    span,
                                )),
                            },
                        }
                    }
                    ast::UnOp::Not => {
                        self.require(Need::Bool, &x, operand.span, "`not` needs a bool")?;
                        Some(mk(
                            ExprKind::Unary(UnOp::Not, Box::new(x)),
                            ElemType::Bool,
                            span,
                        ))
                    }
                }
            }
            ast::ExprKind::Binary { op, lhs, rhs } => {
                let a = self.expr(lhs, scope);
                let b = self.expr(rhs, scope);
                let (a, b) = (a?, b?);
                self.binary(*op, a, b, span)
            }
            ast::ExprKind::Call { func, args } => self.call(func, args, scope, span),
            ast::ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let c = self.expr(cond, scope);
                let t = self.expr(then_branch, scope);
                let f = self.expr(else_branch, scope);
                let (c, t, f) = (c?, t?, f?);
                self.require(
                    Need::Bool,
                    &c,
                    cond.span,
                    "the condition of `if` must be bool",
                )?;
                let ty = self.unify(
                    &[(&t, then_branch.span), (&f, else_branch.span)],
                    "`if` branches",
                )?;
                Some(mk(
                    ExprKind::If(Box::new(c), Box::new(t), Box::new(f)),
                    ty,
                    span,
                ))
            }
            ast::ExprKind::Case(pieces) => self.case(pieces, scope, span),
            ast::ExprKind::Restrict { domain, body } => {
                let d = self.restriction_domain(domain, scope);
                let b = self.expr(body, scope);
                let (d, b) = (d?, b?);
                let ty = b.ty;
                Some(mk(ExprKind::Restrict(d, Box::new(b)), ty, span))
            }
            ast::ExprKind::Reduce {
                op,
                op_span,
                projection,
                body,
            } => self.reduce(*op, *op_span, projection, body, scope, span),
            ast::ExprKind::Categorical { indices, body } => {
                let site = self.site();
                if indices.len() != 1 {
                    self.err(
                        format!(
                            "`categorical` draws one index, {} are listed",
                            indices.len()
                        ),
                        span,
                        "write `categorical([k], ...)`",
                    );
                    return None;
                }
                if !self.check_index_name(&indices[0], &scope.names) {
                    return None;
                }
                let k = indices[0].name.clone();
                let inner = self.extend_scope(scope, std::slice::from_ref(&k))?;
                let (dom, w) = self.restricted_body(body, &inner);
                let (dom, w) = (dom?, w?);
                if !is_numeric(w.ty) {
                    self.type_err(
                        format!(
                            "categorical weights must be numbers, these are {}",
                            w.ty.name()
                        ),
                        body.span,
                        "not a number".into(),
                    );
                    return None;
                }
                // Like a reduction body: the drawn index ranges over the
                // restriction intersected with the domains the weight reads.
                let dom = self.body_domain(&dom, &w, &inner.real)?;
                Some(mk(
                    ExprKind::Categorical(Box::new(Categorical {
                        index: k,
                        domain: dom,
                        weight: w,
                        site,
                    })),
                    ElemType::Int,
                    span,
                ))
            }
        }
    }

    pub(super) fn site(&mut self) -> CallSite {
        let s = CallSite {
            var: self.cur_var,
            ordinal: self.next_site,
        };
        self.next_site = self.next_site.saturating_add(1);
        s
    }

    /// The scope of a body with new indices appended to the real space.
    pub(super) fn extend_scope(&self, scope: &Scope, new: &[String]) -> Option<Scope> {
        let n_old = scope.real.len();
        let mut real = scope.real.clone();
        real.extend(new.iter().cloned());
        let space = self.space(&real);
        let mut names = scope.names.clone();
        let mut values: Vec<Aff> = scope
            .values
            .iter()
            .map(|a| aff_widen(a, &space))
            .collect::<Option<_>>()?;
        for (k, name) in new.iter().enumerate() {
            names.push(Some(name.clone()));
            values.push(Aff::dim(space.clone(), n_old + k));
        }
        Some(Scope {
            names,
            values,
            real,
        })
    }

    /// The common type of branches: all equal, or int and float (→ float).
    pub(super) fn unify(&mut self, branches: &[(&Expr, Span)], what: &str) -> Option<ElemType> {
        let first = branches.first()?.0.ty;
        let mut ty = first;
        for (b, s) in branches {
            ty = match (ty, b.ty) {
                (a, c) if a == c => a,
                (ElemType::Int, ElemType::Float) | (ElemType::Float, ElemType::Int) => {
                    ElemType::Float
                }
                (a, c) => {
                    self.type_err(
                        format!("{what} disagree: {} and {}", a.name(), c.name()),
                        *s,
                        format!("this is {}", c.name()),
                    );
                    return None;
                }
            };
        }
        Some(ty)
    }

    /// `a op b`, typed: arithmetic on numbers (int when both are), the
    /// order comparisons on numbers, `==`/`!=` on two numbers or two bools,
    /// `and`/`or` on bools.
    pub(super) fn binary(&mut self, op: BinOp, a: Expr, b: Expr, span: Span) -> Lowered {
        let sym = op.symbol();
        let ty = match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => {
                self.require_each(Need::Number, [&a, &b], &format!("`{sym}` needs numbers"))?;
                if a.ty == ElemType::Int && b.ty == ElemType::Int {
                    ElemType::Int
                } else {
                    ElemType::Float
                }
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                self.require_each(Need::Number, [&a, &b], &format!("`{sym}` compares numbers"))?;
                ElemType::Bool
            }
            BinOp::Eq | BinOp::Ne => {
                let ok = (is_numeric(a.ty) && is_numeric(b.ty))
                    || (a.ty == ElemType::Bool && b.ty == ElemType::Bool);
                if !ok {
                    self.type_err(
                        format!("`{sym}` compares {} with {}", a.ty.name(), b.ty.name()),
                        span,
                        "operands of different kinds".into(),
                    );
                    return None;
                }
                ElemType::Bool
            }
            BinOp::And | BinOp::Or => {
                self.require_each(Need::Bool, [&a, &b], &format!("`{sym}` needs bools"))?;
                ElemType::Bool
            }
        };
        // Canonical form 2: fold affine int arithmetic into `Index`.
        if ty == ElemType::Int && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul) {
            let both_const = matches!(
                (&a.kind, &b.kind),
                (ExprKind::IntConst(_), ExprKind::IntConst(_))
            );
            // The space of the folded function: an operand's, or none at all
            // for two literals.
            let space = match (&a.kind, &b.kind) {
                (ExprKind::Index(x), _) | (_, ExprKind::Index(x)) => Some(x.space().clone()),
                _ if both_const => Some(Space::set::<String, String>(&[], &[])),
                _ => None,
            };
            if let Some(space) = space {
                if let (Some(x), Some(y)) = (as_aff(&a, &space), as_aff(&b, &space)) {
                    let r = match op {
                        BinOp::Add => Some(aff_add(&x, &y, 1)),
                        BinOp::Sub => Some(aff_add(&x, &y, -1)),
                        _ => match (aff_is_const(&x), aff_is_const(&y)) {
                            (Some(k), _) => Some(aff_scale(&y, k)),
                            (_, Some(k)) => Some(aff_scale(&x, k)),
                            _ => None,
                        },
                    };
                    match r {
                        Some(Some(aff)) => {
                            return Some(if both_const {
                                mk(ExprKind::IntConst(aff.constant_term()), ElemType::Int, span)
                            } else {
                                index_expr(aff, span)
                            })
                        }
                        Some(None) => {
                            self.err("integer overflow", span, "too large");
                            return None;
                        }
                        None => {}
                    }
                }
            }
        }
        Some(mk(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty, span))
    }
}
