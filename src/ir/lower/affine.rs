//! The affine layer of lowering: checked arithmetic on affine expressions
//! and structural operations on domains (intersection, preimage), and the
//! conversion of AST index expressions, affine functions, constraints and
//! domains (declarations and restrictions) to affine form.

use super::*;

/// `a + sign·b` (`None` on overflow; both over the same space).
pub(super) fn aff_add(a: &Aff, b: &Aff, sign: i64) -> Option<Aff> {
    a.add_scaled(sign, b).ok()
}

/// `k·a` (`None` on overflow).
pub(super) fn aff_scale(a: &Aff, k: i64) -> Option<Aff> {
    a.scaled(k).ok()
}

/// The value of `a` when it depends on neither indices nor parameters.
pub(super) fn aff_is_const(a: &Aff) -> Option<i64> {
    a.as_constant()
}

/// `a` over `space`, a space with the same parameters and `a`'s
/// dimensions followed by new ones (zero coefficients for the new ones).
pub(super) fn aff_widen(a: &Aff, space: &Space) -> Option<Aff> {
    let np = a.n_params();
    let mut dims = a.dim_coeffs().to_vec();
    dims.resize(space.n_dims(), 0);
    Aff::from_parts(space.clone(), &a.row()[..np], &dims, a.constant_term()).ok()
}

/// `{ x : f(x) ∈ d }` for the affine `f` (over the space with dims `dims`).
pub(super) fn dom_preimage(d: &Set, f: &MultiAff) -> Option<Set> {
    d.preimage(f).ok()
}

impl SysCx<'_> {
    /// The index space `[params] -> { [dims] }` of this system.
    pub(super) fn space(&self, dims: &[String]) -> Space {
        Space::set(&self.params, dims)
    }

    /// The universe over the index space `dims`.
    pub(super) fn universe(&self, dims: &[String]) -> Set {
        Set::universe(self.space(dims))
    }

    /// A domain over `dims` from constraints in DNF (rows over the system's
    /// parameters and `dims`). Errors (a row of the wrong length) are
    /// internal and reported at `span`.
    pub(super) fn dnf_set(
        &mut self,
        dims: &[String],
        dnf: Vec<Vec<Constraint>>,
        span: Span,
    ) -> Option<Set> {
        match Set::from_constraints(self.space(dims), dnf) {
            Ok(s) => Some(s),
            Err(e) => {
                self.err(format!("internal error in a domain: {e}"), span, "here");
                None
            }
        }
    }
}

impl SysCx<'_> {
    /// Converts an AST expression to an affine function of the real space
    /// of `scope` (indices by name, parameters, constants, integers, `+ -`,
    /// `*` by a constant).
    pub(super) fn affine(&mut self, e: &ast::Expr, scope: &Scope) -> Option<Aff> {
        let space = self.space(&scope.real);
        let overflow = |cx: &mut Self| {
            cx.err(
                "integer overflow in an affine expression",
                e.span,
                "too large",
            );
            None
        };
        match &e.kind {
            ast::ExprKind::Int(v) => Some(const_aff(&space, *v)),
            ast::ExprKind::Name(name) => {
                if let Some(a) = scope.lookup(name) {
                    Some(a.clone())
                } else if let Some(k) = self.params.iter().position(|p| p == name) {
                    let mut a = Aff::zero(space);
                    a.param_coeffs_mut()[k] = 1;
                    Some(a)
                } else if let Some(v) = self.g.constants.get(name) {
                    Some(const_aff(&space, *v))
                } else {
                    self.err(
                        format!("unknown name `{name}` in an affine expression"),
                        e.span,
                        "not an index, parameter or constant in scope",
                    );
                    None
                }
            }
            ast::ExprKind::Unary {
                op: ast::UnOp::Neg,
                operand,
            } => {
                let a = self.affine(operand, scope)?;
                aff_scale(&a, -1).or_else(|| overflow(self))
            }
            ast::ExprKind::Binary { op, lhs, rhs } => match op {
                ast::BinOp::Add | ast::BinOp::Sub => {
                    let a = self.affine(lhs, scope);
                    let b = self.affine(rhs, scope);
                    let sign = if *op == ast::BinOp::Add { 1 } else { -1 };
                    aff_add(&a?, &b?, sign).or_else(|| overflow(self))
                }
                ast::BinOp::Mul => {
                    let a = self.affine(lhs, scope)?;
                    let b = self.affine(rhs, scope)?;
                    let r = match (aff_is_const(&a), aff_is_const(&b)) {
                        (Some(k), _) => aff_scale(&b, k),
                        (_, Some(k)) => aff_scale(&a, k),
                        _ => {
                            self.err(
                                "not affine: product of two non-constant terms",
                                e.span,
                                "one factor must be a constant",
                            );
                            return None;
                        }
                    };
                    r.or_else(|| overflow(self))
                }
                ast::BinOp::Div | ast::BinOp::Mod => {
                    self.err(
                        "unsupported: integer division or modulo in an affine expression",
                        e.span,
                        "cannot be eliminated exactly here",
                    );
                    None
                }
                _ => {
                    self.err(
                        "not an affine expression",
                        e.span,
                        "expected an affine function",
                    );
                    None
                }
            },
            ast::ExprKind::Call { func, .. } if matches!(func.name.as_str(), "floor" | "ceil") => {
                self.err(
                    "unsupported: integer division in an affine expression",
                    e.span,
                    "cannot be eliminated exactly here",
                );
                None
            }
            ast::ExprKind::Val(f) => self.val(f, scope, e.span),
            _ => {
                self.err(
                    "not an affine expression",
                    e.span,
                    "expected an affine function",
                );
                None
            }
        }
    }

    /// `val (i, j -> e)`: binds the function's names to the scope's values.
    pub(super) fn val(&mut self, f: &ast::AffineFn, scope: &Scope, span: Span) -> Option<Aff> {
        let inner = self.fn_scope(f, scope)?;
        if f.exprs.len() != 1 {
            self.err(
                format!(
                    "`val` needs a function with one result, this one has {}",
                    f.exprs.len()
                ),
                span,
                "one result expected",
            );
            return None;
        }
        self.affine(&f.exprs[0], &inner)
    }

    /// The scope inside a function `(i, j -> ...)` applied at the current
    /// point: its names bound to the current scope's values.
    pub(super) fn fn_scope(&mut self, f: &ast::AffineFn, scope: &Scope) -> Option<Scope> {
        if f.params.len() != scope.values.len() {
            self.err(
                format!(
                    "the function has {} argument(s) but is used where there are {} index(es)",
                    f.params.len(),
                    scope.values.len()
                ),
                f.span,
                "wrong number of indices",
            );
            return None;
        }
        // The function's names may repeat the indices in scope (they are
        // bound afresh), but not a parameter, variable or constant, nor
        // each other.
        let names = self.bind_index_names(&f.params, Vec::new())?;
        Some(Scope {
            names,
            values: scope.values.clone(),
            real: scope.real.clone(),
        })
    }

    // ------------------------------------------------------------ domains

    /// A constraint as a union (DNF) of conjunctions over the real space.
    pub(super) fn constraint(
        &mut self,
        c: &ast::Constraint,
        scope: &Scope,
    ) -> Option<Vec<Vec<Constraint>>> {
        match &c.kind {
            ast::ConstraintKind::And(cs) => {
                let mut acc: Vec<Vec<Constraint>> = vec![Vec::new()];
                let mut ok = true;
                for sub in cs {
                    match self.constraint(sub, scope) {
                        Some(d) => {
                            let mut next = Vec::new();
                            for p in &acc {
                                for q in &d {
                                    let mut r = p.clone();
                                    r.extend(q.iter().cloned());
                                    next.push(r);
                                }
                            }
                            acc = next;
                        }
                        None => ok = false,
                    }
                }
                ok.then_some(acc)
            }
            ast::ConstraintKind::Or(cs) => {
                let mut acc = Vec::new();
                let mut ok = true;
                for sub in cs {
                    match self.constraint(sub, scope) {
                        Some(d) => acc.extend(d),
                        None => ok = false,
                    }
                }
                ok.then_some(acc)
            }
            ast::ConstraintKind::Chain { operands, ops } => {
                let mut lists = Vec::new();
                for l in operands {
                    let mut v = Vec::new();
                    for e in l {
                        v.push(self.affine(e, scope));
                    }
                    lists.push(v);
                }
                let lists: Vec<Vec<Aff>> = lists
                    .into_iter()
                    .map(|l| l.into_iter().collect::<Option<Vec<_>>>())
                    .collect::<Option<Vec<_>>>()?;
                let mut acc: Vec<Vec<Constraint>> = vec![Vec::new()];
                for (k, (op, span)) in ops.iter().enumerate() {
                    for a in &lists[k] {
                        for b in &lists[k + 1] {
                            let Some(atom) = cmp_atom(*op, a, b) else {
                                self.err("integer overflow in a constraint", *span, "too large");
                                return None;
                            };
                            let mut next = Vec::new();
                            for p in &acc {
                                for q in &atom {
                                    let mut r = p.clone();
                                    r.push(q.clone());
                                    next.push(r);
                                }
                            }
                            acc = next;
                        }
                    }
                }
                Some(acc)
            }
        }
    }

    /// A domain written inside an expression (`{: c}` or `{[i, j] : c}`),
    /// over the real space of `scope`.
    pub(super) fn restriction_domain(&mut self, d: &ast::Domain, scope: &Scope) -> Option<Set> {
        let ast::DomainKind::Set(pieces) = &d.kind else {
            self.err(
                "a restriction needs a set `{: constraints}`",
                d.span,
                "array shorthand is for declarations",
            );
            return None;
        };
        let mut out = Vec::new();
        let mut ok = true;
        for bs in pieces {
            let sc = match &bs.indices {
                None => scope.clone(),
                Some(names) => {
                    if names.len() != scope.values.len() {
                        self.err(
                            format!(
                                "the set has {} index(es) but is used where there are {}",
                                names.len(),
                                scope.values.len()
                            ),
                            bs.span,
                            "wrong number of indices",
                        );
                        ok = false;
                        continue;
                    }
                    Scope {
                        names: names.iter().map(|n| Some(n.name.clone())).collect(),
                        values: scope.values.clone(),
                        real: scope.real.clone(),
                    }
                }
            };
            match &bs.constraint {
                None => out.push(Vec::new()),
                Some(c) => match self.constraint(c, &sc) {
                    Some(p) => out.extend(p),
                    None => ok = false,
                },
            }
        }
        if pieces.is_empty() {
            out.push(Vec::new());
        }
        if !ok {
            return None;
        }
        self.dnf_set(&scope.real, out, d.span)
    }

    /// A declaration's domain: a set with its own index names, or `[E, ...]`.
    pub(super) fn decl_domain(&mut self, d: &ast::Domain) -> Option<Set> {
        match &d.kind {
            ast::DomainKind::Array(extents) => {
                let n = extents.len();
                let dims: Vec<String> = (0..n).map(|k| format!("i{k}")).collect();
                let empty = Scope::identity(&self.space(&[] as &[String]));
                let space = self.space(&dims);
                let mut piece = Vec::new();
                let mut ok = true;
                for (k, e) in extents.iter().enumerate() {
                    match self.affine(e, &empty) {
                        Some(a) => {
                            let x = Aff::dim(space.clone(), k);
                            // 0 <= x_k and x_k <= E - 1
                            piece.push(Constraint::ineq(x.row().to_vec()));
                            match aff_widen(&a, &space)
                                .and_then(|w| aff_add(&w, &x, -1))
                                .and_then(|r| aff_add(&r, &const_aff(&space, 1), -1))
                            {
                                Some(aff) => piece.push(Constraint::ineq(aff.row().to_vec())),
                                None => ok = false,
                            }
                        }
                        None => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                self.dnf_set(&dims, vec![piece], d.span)
            }
            ast::DomainKind::Set(pieces) => {
                if pieces.is_empty() {
                    return Some(self.universe(&[]));
                }
                let first = pieces[0].indices.clone().unwrap_or_default();
                let dims: Vec<String> = first.iter().map(|i| i.name.clone()).collect();
                let mut out = Vec::new();
                let mut ok = true;
                for bs in pieces {
                    let names = bs.indices.clone().unwrap_or_default();
                    if names.len() != dims.len() {
                        self.err(
                            format!(
                                "all pieces of a domain need the same number of indices ({} here, {} in the first)",
                                names.len(),
                                dims.len()
                            ),
                            bs.span,
                            "wrong number of indices",
                        );
                        ok = false;
                        continue;
                    }
                    let mut seen: Vec<Option<String>> = Vec::new();
                    for n in &names {
                        if !self.check_index_name(n, &seen) {
                            ok = false;
                        }
                        seen.push(Some(n.name.clone()));
                    }
                    let real: Vec<String> = names.iter().map(|n| n.name.clone()).collect();
                    let sc = Scope::identity(&self.space(&real));
                    match &bs.constraint {
                        None => out.push(Vec::new()),
                        Some(c) => match self.constraint(c, &sc) {
                            Some(p) => out.extend(p),
                            None => ok = false,
                        },
                    }
                }
                if !ok {
                    return None;
                }
                self.dnf_set(&dims, out, d.span)
            }
        }
    }
}

/// The constant `c` over `space`.
pub(super) fn const_aff(space: &Space, c: i64) -> Aff {
    let mut a = Aff::zero(space.clone());
    *a.constant_term_mut() = c;
    a
}

/// The constraint `a op b` as a list of alternatives, each one affine
/// constraint (one alternative except for `!=`, which is a union).
pub(super) fn cmp_atom(op: ast::CmpOp, a: &Aff, b: &Aff) -> Option<Vec<Constraint>> {
    let one = const_aff(a.space(), 1);
    let ge = |x: Aff| Constraint::ineq(x.row().to_vec());
    let b_minus_a = aff_add(b, a, -1)?;
    let a_minus_b = aff_add(a, b, -1)?;
    Some(match op {
        ast::CmpOp::Le => vec![ge(b_minus_a)],
        ast::CmpOp::Ge => vec![ge(a_minus_b)],
        ast::CmpOp::Lt => vec![ge(aff_add(&b_minus_a, &one, -1)?)],
        ast::CmpOp::Gt => vec![ge(aff_add(&a_minus_b, &one, -1)?)],
        ast::CmpOp::Eq => vec![Constraint::eq(a_minus_b.row().to_vec())],
        ast::CmpOp::Ne => vec![
            ge(aff_add(&a_minus_b, &one, -1)?),
            ge(aff_add(&b_minus_a, &one, -1)?),
        ],
    })
}
