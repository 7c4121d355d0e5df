//! Lowering of Alpha's notations to the IR's existing forms: `case` with an
//! `auto` piece, `val[e]` and polynomial pieces (`val(...)` calls of the
//! AST, see [`ast::notation`]), `select R from E`, and the n-ary operators
//! `sum`, `prod`, `and`, `or`, `xor`.

use super::super::*;

/// Is `p` the `auto : E` piece of a `case` (the call `auto(E)`)?
fn auto_body(p: &ast::Expr) -> Option<&ast::Expr> {
    match &p.kind {
        ast::ExprKind::Call { func, args } if func.name == ast::notation::AUTO => args.first(),
        _ => None,
    }
}

/// The names an affine AST expression mentions.
fn names_in(e: &ast::Expr, out: &mut Vec<String>) {
    match &e.kind {
        ast::ExprKind::Name(n) => out.push(n.clone()),
        ast::ExprKind::Unary { operand, .. } => names_in(operand, out),
        ast::ExprKind::Binary { lhs, rhs, .. } => {
            names_in(lhs, out);
            names_in(rhs, out);
        }
        ast::ExprKind::Call { args, .. } => args.iter().for_each(|a| names_in(a, out)),
        _ => {}
    }
}

/// The chains of a conjunction (the top-level `and` of `c`, or `c`).
fn conjuncts(c: &ast::Constraint) -> Vec<&ast::Constraint> {
    match &c.kind {
        ast::ConstraintKind::And(cs) => cs.iter().flat_map(conjuncts).collect(),
        _ => vec![c],
    }
}

impl SysCx<'_> {
    /// `case { P1; ...; Pn }`: each piece `D : E` is defined on `D`, a
    /// piece without a restriction where its reads are (a piece that lowers
    /// to a restriction, like a restricted polynomial piece, on that
    /// restriction), and the one `auto : E` piece on the complement of the
    /// union of the others (within the universe of the index space, hence
    /// within wherever the `case` is used).
    pub(in crate::ir::lower) fn case(
        &mut self,
        pieces: &[ast::Expr],
        scope: &Scope,
        span: Span,
    ) -> Lowered {
        let autos: Vec<&ast::Expr> = pieces.iter().filter(|p| auto_body(p).is_some()).collect();
        if let [first, second, ..] = autos.as_slice() {
            self.errors.push(
                Diagnostic::error("a `case` has at most one `auto` piece", second.span)
                    .with_label("second `auto` piece")
                    .with_secondary(first.span, "first `auto` piece"),
            );
            return None;
        }
        let out = self.lower_each(pieces, |cx, p| {
            let (dom, body) = match (&p.kind, auto_body(p)) {
                (_, Some(b)) => (Some(None), cx.expr(b, scope)),
                (ast::ExprKind::Restrict { domain, body }, _) => (
                    cx.restriction_domain(domain, scope).map(Some),
                    cx.expr(body, scope),
                ),
                // A piece without a restriction is defined where its reads
                // are (Alpha: the expression's domain).
                _ => match cx.expr(p, scope) {
                    Some(b) => {
                        let d = cx.read_domain(&b, &scope.real).map(Some);
                        let b = match b.kind {
                            ExprKind::Restrict(_, x) => *x,
                            kind => Expr { kind, ..b },
                        };
                        (d, Some(b))
                    }
                    None => (None, None),
                },
            };
            Some((dom?, body?, p.span))
        })?;
        let typed: Vec<(&Expr, Span)> = out.iter().map(|(_, b, s)| (b, *s)).collect();
        let ty = self.unify(&typed, "`case` branches")?;
        let internal = |cx: &mut Self, e: crate::poly::PolyError| -> Lowered {
            cx.err(format!("internal error in a domain: {e}"), span, "here");
            None
        };
        let mut others = Set::empty(self.space(&scope.real));
        for d in out.iter().filter_map(|(d, _, _)| d.as_ref()) {
            others = match others.union(d) {
                Ok(u) => u,
                Err(e) => return internal(self, e),
            };
        }
        let mut result = Vec::new();
        for (d, b, _) in out {
            let d = match d {
                Some(d) => d,
                None => match self.universe(&scope.real).subtract(&others) {
                    Ok(c) => c,
                    Err(e) => return internal(self, e),
                },
            };
            result.push((d, b));
        }
        Some(mk(ExprKind::Case(result), ty, span))
    }

    /// The notation calls: `val(...)`, `select(...)`, `auto(...)` outside a
    /// `case`, and the n-ary operators; `None` (nothing reported) for any
    /// other call.
    pub(in crate::ir::lower) fn notation_call(
        &mut self,
        func: &ast::Ident,
        args: &[ast::Expr],
        scope: &Scope,
        span: Span,
    ) -> Option<Lowered> {
        Some(match func.name.as_str() {
            ast::notation::VAL => self.val_notation(args, scope, span),
            ast::notation::SELECT => self.select(args, scope, span),
            ast::notation::AUTO => {
                self.err(
                    "`auto : E` is only a piece of a `case`",
                    func.span,
                    "not in a `case`",
                );
                None
            }
            "sum" | "prod" | "and" | "or" | "xor" => self.n_ary(func, args, scope, span),
            _ => return None,
        })
    }

    /// `val[e]`: the value of the affine `e` at the current point; and a
    /// polynomial piece with its own names `val(val (i, j -> p))`: `p`
    /// lowered with `i, j` bound to the indices in scope.
    fn val_notation(&mut self, args: &[ast::Expr], scope: &Scope, span: Span) -> Lowered {
        match args {
            [ast::Expr {
                kind: ast::ExprKind::Val(f),
                ..
            }] => {
                let inner = self.fn_scope(f, scope)?;
                let body = f.exprs.first()?;
                self.expr(body, &inner)
            }
            [e] => {
                let a = self.affine(e, scope)?;
                Some(index_expr(a, span))
            }
            _ => {
                self.err(
                    format!("`val[...]` takes one expression, {} given", args.len()),
                    span,
                    "write `val[e]`",
                );
                None
            }
        }
    }

    /// `sum(e1, ..., en)` is `e1 + ... + en`, `prod` the product, `and`,
    /// `or` the conjunction and disjunction, `xor` the exclusive or
    /// (`a != b` on bools), folded from the left; n >= 1.
    fn n_ary(
        &mut self,
        func: &ast::Ident,
        args: &[ast::Expr],
        scope: &Scope,
        span: Span,
    ) -> Lowered {
        let name = func.name.as_str();
        let (op, need, what) = match name {
            "sum" => (BinOp::Add, Need::Number, "numbers"),
            "prod" => (BinOp::Mul, Need::Number, "numbers"),
            "and" => (BinOp::And, Need::Bool, "bools"),
            "or" => (BinOp::Or, Need::Bool, "bools"),
            _ => (BinOp::Ne, Need::Bool, "bools"),
        };
        if args.is_empty() {
            self.err(
                format!("`{name}` takes at least 1 argument(s), 0 given"),
                span,
                "wrong number of arguments",
            );
            return None;
        }
        let lowered = self.lower_each(args, |cx, a| cx.expr(a, scope))?;
        self.require_each(need, &lowered, &format!("`{name}` needs {what}"))?;
        let mut it = lowered.into_iter();
        let first = it.next()?;
        it.try_fold(first, |acc, x| {
            let s = acc.span.join(x.span);
            self.binary(op, acc, x, s)
        })
    }

    /// `select R from E` (the call `select(R, E)`, see
    /// [`ast::notation::SELECT`]): `R`'s inputs are bound to the indices in
    /// scope; each output is an affine function of them, or a new name
    /// given by an equality `j = e` of the relation's constraint (a relation
    /// that is not a function is refused). The value is `E` at the outputs
    /// (named inside `E` by the outputs that are names), restricted to the
    /// constraint: `{: c} : (i -> outputs) @ E`.
    fn select(&mut self, args: &[ast::Expr], scope: &Scope, span: Span) -> Lowered {
        let [rel, body] = args else {
            return None;
        };
        let (domain, f) = match &rel.kind {
            ast::ExprKind::Restrict { domain, body } => match &body.kind {
                ast::ExprKind::Val(f) => (Some(domain), f),
                _ => return None,
            },
            ast::ExprKind::Val(f) => (None, f),
            _ => return None,
        };
        let inner = self.fn_scope(f, scope)?;
        let bound = |cx: &Self, n: &str| {
            inner.lookup(n).is_some()
                || cx.params.iter().any(|p| p == n)
                || cx.g.constants.contains_key(n)
        };
        // New output names, to be solved from the constraint's equalities.
        let mut fresh: Vec<(String, Span, Option<Aff>)> = Vec::new();
        for e in &f.exprs {
            if let ast::ExprKind::Name(n) = &e.kind {
                if !bound(self, n) && !fresh.iter().any(|(m, _, _)| m == n) {
                    fresh.push((n.clone(), e.span, None));
                }
            }
        }
        let constraint = domain.and_then(|d| match &d.kind {
            ast::DomainKind::Set(pieces) => pieces.first().and_then(|b| b.constraint.as_ref()),
            ast::DomainKind::Array(_) => None,
        });
        let scope_with = |fresh: &[(String, Span, Option<Aff>)]| {
            let mut sc = inner.clone();
            for (n, _, a) in fresh {
                if let Some(a) = a {
                    sc.names.push(Some(n.clone()));
                    sc.values.push(a.clone());
                }
            }
            sc
        };
        // Solve `j = e` (or `e = j`) where `e` mentions no unsolved name.
        let equalities: Vec<(&ast::Expr, &ast::Expr)> = constraint
            .map(conjuncts)
            .unwrap_or_default()
            .into_iter()
            .flat_map(|c| match &c.kind {
                ast::ConstraintKind::Chain { operands, ops } => ops
                    .iter()
                    .enumerate()
                    .filter(|(_, (op, _))| *op == ast::CmpOp::Eq)
                    .filter_map(|(k, _)| {
                        match (operands[k].as_slice(), operands[k + 1].as_slice()) {
                            ([a], [b]) => Some((a, b)),
                            _ => None,
                        }
                    })
                    .collect::<Vec<_>>(),
                _ => Vec::new(),
            })
            .collect();
        loop {
            let mut progress = false;
            for (a, b) in &equalities {
                for (lhs, rhs) in [(a, b), (b, a)] {
                    let ast::ExprKind::Name(n) = &lhs.kind else {
                        continue;
                    };
                    let Some(k) = fresh.iter().position(|(m, _, v)| m == n && v.is_none()) else {
                        continue;
                    };
                    let mut used = Vec::new();
                    names_in(rhs, &mut used);
                    let open = used
                        .iter()
                        .any(|u| fresh.iter().any(|(m, _, v)| m == u && v.is_none()));
                    if open {
                        continue;
                    }
                    let sc = scope_with(&fresh);
                    let v = self.affine(rhs, &sc)?;
                    fresh[k].2 = Some(v);
                    progress = true;
                }
            }
            if !progress {
                break;
            }
        }
        if let Some((n, s, _)) = fresh.iter().find(|(_, _, v)| v.is_none()) {
            self.err(
                format!("unsupported: `select` with a relation that is not a function (`{n}` is not given by an equality `{n} = ...`)"),
                *s,
                "an output of the relation that is not determined",
            );
            return None;
        }
        let sc = scope_with(&fresh);
        // The constraint, unless it holds everywhere (as the equalities
        // that give the outputs do).
        let restr = match constraint {
            Some(c) => {
                let dnf = self.constraint(c, &sc)?;
                let d = self.dnf_set(&scope.real, dnf, rel.span)?;
                let everywhere = self.universe(&scope.real).is_subset(&d).unwrap_or(false);
                (!everywhere).then_some(d)
            }
            None => None,
        };
        let values = self.lower_each(&f.exprs, |cx, e| cx.affine(e, &sc))?;
        let target = Scope {
            names: f
                .exprs
                .iter()
                .map(|e| match &e.kind {
                    ast::ExprKind::Name(n) => Some(n.clone()),
                    _ => None,
                })
                .collect(),
            values,
            real: scope.real.clone(),
        };
        let b = self.expr(body, &target)?;
        Some(match restr {
            Some(d) => {
                let ty = b.ty;
                mk(ExprKind::Restrict(d, Box::new(b)), ty, span)
            }
            None => b,
        })
    }
}
