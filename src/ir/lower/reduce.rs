//! Lowering of reductions: the projection, the body and its domain (the
//! restriction around the body intersected with where the body reads).

use super::*;

impl SysCx<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn reduce(
        &mut self,
        op: ast::ReduceOp,
        op_span: Span,
        projection: &ast::Projection,
        body: &ast::Expr,
        scope: &Scope,
        span: Span,
    ) -> Lowered {
        let rop = match op {
            ast::ReduceOp::Add => ReduceOp::Add,
            ast::ReduceOp::Mul => ReduceOp::Mul,
            ast::ReduceOp::Max => ReduceOp::Max,
            ast::ReduceOp::Min => ReduceOp::Min,
            ast::ReduceOp::And => ReduceOp::And,
            ast::ReduceOp::Or => ReduceOp::Or,
        };
        let n_outer = scope.real.len();
        let (inner, proj) = match projection {
            ast::Projection::Names(new) => {
                self.bind_index_names(new, scope.names.clone())?;
                let names: Vec<String> = new.iter().map(|i| i.name.clone()).collect();
                let inner = self.extend_scope(scope, &names)?;
                let space = self.space(&inner.real);
                let rows = (0..n_outer)
                    .map(|k| Aff::dim(space.clone(), k).row().to_vec())
                    .collect();
                (inner, self.multi_aff(&space, rows, span)?)
            }
            ast::Projection::Function(f) => {
                if !scope.is_identity() {
                    self.err(
                        "unsupported: a reduction with an explicit projection inside `f @ E`",
                        f.span,
                        "use the `[k]` form here",
                    );
                    return None;
                }
                self.bind_index_names(&f.params, Vec::new())?;
                if f.exprs.len() != n_outer {
                    self.err(
                        format!(
                            "the projection has {} result(s) but the reduction is used where there are {} index(es)",
                            f.exprs.len(),
                            n_outer
                        ),
                        f.span,
                        "wrong number of results",
                    );
                    return None;
                }
                let real: Vec<String> = f.params.iter().map(|i| i.name.clone()).collect();
                let space = self.space(&real);
                let inner = Scope::identity(&space);
                let rows = self.lower_each(&f.exprs, |cx, x| {
                    cx.affine(x, &inner).map(|a| a.row().to_vec())
                })?;
                (inner, self.multi_aff(&space, rows, f.span)?)
            }
        };
        let (restr, b) = self.restricted_body(body, &inner);
        let (restr, b) = (restr?, b?);
        let ok = match rop {
            ReduceOp::Add | ReduceOp::Mul | ReduceOp::Max | ReduceOp::Min => is_numeric(b.ty),
            ReduceOp::And | ReduceOp::Or => b.ty == ElemType::Bool,
        };
        if !ok {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "type error: `reduce({}, ...)` cannot combine {} values",
                        rop.symbol(),
                        b.ty.name()
                    ),
                    body.span,
                )
                .with_label(format!("this is {}", b.ty.name()))
                .with_secondary(op_span, "the operator"),
            );
            return None;
        }
        let body_domain = self.body_domain(&restr, &b, &inner.real)?;
        let ty = b.ty;
        Some(mk(
            ExprKind::Reduce(Box::new(Reduction {
                // Numbered when the equation is complete
                // (`Equation::number_reductions`).
                id: ReductionId {
                    var: self.cur_var,
                    ordinal: 0,
                },
                op: rop,
                proj,
                body_domain,
                body: b,
            })),
            ty,
            span,
        ))
    }

    /// The body of a reduction or a categorical draw, lowered in `inner`:
    /// a restriction directly around it becomes its domain (the universe
    /// otherwise). Both parts are lowered before either error is returned.
    pub(super) fn restricted_body(
        &mut self,
        body: &ast::Expr,
        inner: &Scope,
    ) -> (Option<Set>, Lowered) {
        match &body.kind {
            ast::ExprKind::Restrict { domain, body: b } => {
                (self.restriction_domain(domain, inner), self.expr(b, inner))
            }
            _ => (Some(self.universe(&inner.real)), self.expr(body, inner)),
        }
    }

    /// The domain of a body: its restriction `restr` intersected with
    /// where the body reads (see [`SysCx::read_domain`]).
    pub(super) fn body_domain(&mut self, restr: &Set, body: &Expr, dims: &[String]) -> Option<Set> {
        let reads = self.read_domain(body, dims)?;
        self.intersect(restr, &reads, body.span)
    }

    /// `a ∩ b` (a library error is internal and reported at `span`).
    pub(super) fn intersect(&mut self, a: &Set, b: &Set, span: Span) -> Option<Set> {
        match a.intersect(b) {
            Ok(s) => Some(s),
            Err(e) => {
                self.err(format!("internal error in a domain: {e}"), span, "here");
                None
            }
        }
    }

    /// The function with the given rows from the index space `space`.
    pub(super) fn multi_aff(
        &mut self,
        space: &Space,
        rows: Vec<Vec<i64>>,
        span: Span,
    ) -> Option<MultiAff> {
        match MultiAff::from_rows(space.clone(), rows) {
            Ok(f) => Some(f),
            Err(e) => {
                self.err(
                    format!("internal error in an affine function: {e}"),
                    span,
                    "here",
                );
                None
            }
        }
    }

    /// Where an expression in a reduction body is defined: the intersection
    /// of the preimages of the domains of its affine reads, nested
    /// restrictions, and, for a `case`, the union of its pieces (nested
    /// reductions and categorical draws have their own domains).
    pub(super) fn read_domain(&mut self, e: &Expr, dims: &[String]) -> Option<Set> {
        let all = |cx: &mut Self, xs: &[&Expr]| -> Option<Set> {
            let mut d = cx.universe(dims);
            for x in xs {
                let r = cx.read_domain(x, dims)?;
                d = cx.intersect(&d, &r, x.span)?;
            }
            Some(d)
        };
        match &e.kind {
            ExprKind::Read { var, access } => match dom_preimage(&self.vars[*var].domain, access) {
                Some(d) => Some(d),
                None => {
                    self.err("integer overflow in an access", e.span, "too large");
                    None
                }
            },
            ExprKind::IndirectRead { indices, .. }
            | ExprKind::Builtin(_, indices)
            | ExprKind::External(_, indices)
            | ExprKind::Random(_, indices, _) => all(self, &indices.iter().collect::<Vec<_>>()),
            ExprKind::Unary(_, x) => all(self, &[x]),
            ExprKind::Binary(_, a, b) => all(self, &[a, b]),
            ExprKind::If(a, b, c) => all(self, &[a, b, c]),
            ExprKind::Restrict(d, x) => {
                let r = self.read_domain(x, dims)?;
                self.intersect(d, &r, e.span)
            }
            ExprKind::Case(pieces) => {
                let mut u = Set::empty(self.space(dims));
                for (d, x) in pieces {
                    let r = self.read_domain(x, dims)?;
                    let piece = self.intersect(d, &r, x.span)?;
                    u = match u.union(&piece) {
                        Ok(u) => u,
                        Err(err) => {
                            self.err(format!("internal error in a domain: {err}"), e.span, "here");
                            return None;
                        }
                    };
                }
                Some(u)
            }
            _ => Some(self.universe(dims)),
        }
    }
}
