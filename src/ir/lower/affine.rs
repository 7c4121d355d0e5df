//! The affine layer of lowering: checked arithmetic on affine expressions
//! and structural operations on domains (intersection, preimage), and the
//! conversion of AST index expressions, affine functions, constraints and
//! domains (declarations and restrictions) to affine form.

use super::*;
use crate::poly::constraint::dnf_and;

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
        let unsupported_division = |cx: &mut Self, what: &str| {
            cx.err(
                format!("unsupported: {what} in an affine expression"),
                e.span,
                "cannot be eliminated exactly here",
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
            ast::ExprKind::Binary {
                op: op @ (BinOp::Add | BinOp::Sub),
                lhs,
                rhs,
            } => {
                let a = self.affine(lhs, scope);
                let b = self.affine(rhs, scope);
                let sign = if *op == BinOp::Add { 1 } else { -1 };
                aff_add(&a?, &b?, sign).or_else(|| overflow(self))
            }
            ast::ExprKind::Binary {
                op: BinOp::Mul,
                lhs,
                rhs,
            } => {
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
            ast::ExprKind::Binary {
                op: BinOp::Div | BinOp::Rem,
                ..
            } => unsupported_division(self, "integer division or modulo"),
            ast::ExprKind::Call { func, .. } if matches!(func.name.as_str(), "floor" | "ceil") => {
                unsupported_division(self, "integer division")
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
                let parts = self.lower_each(cs, |cx, sub| cx.constraint(sub, scope))?;
                Some(
                    parts
                        .iter()
                        .fold(vec![Vec::new()], |acc, d| dnf_and(&acc, d)),
                )
            }
            ast::ConstraintKind::Or(cs) => {
                let parts = self.lower_each(cs, |cx, sub| cx.constraint(sub, scope))?;
                Some(parts.concat())
            }
            ast::ConstraintKind::Chain { operands, ops } => {
                let lists = self.lower_each(operands, |cx, l| {
                    cx.lower_each(l, |cx, e| cx.affine(e, scope))
                })?;
                let mut acc: Vec<Vec<Constraint>> = vec![Vec::new()];
                for (k, (op, span)) in ops.iter().enumerate() {
                    for a in &lists[k] {
                        for b in &lists[k + 1] {
                            let Some(atom) = cmp_atom(*op, a, b) else {
                                self.err("integer overflow in a constraint", *span, "too large");
                                return None;
                            };
                            acc = dnf_and(&acc, &atom);
                        }
                    }
                }
                Some(acc)
            }
        }
    }

    /// The constraint of one piece of a set in DNF (`true` when none is
    /// written), over the real space of `sc`.
    fn piece_constraint(&mut self, bs: &ast::BasicSet, sc: &Scope) -> Option<Vec<Vec<Constraint>>> {
        match &bs.constraint {
            None => Some(vec![Vec::new()]),
            Some(c) => self.constraint(c, sc),
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
        let parts = self.lower_each(pieces, |cx, bs| {
            let sc = match &bs.indices {
                None => scope.clone(),
                Some(names) => {
                    if names.len() != scope.values.len() {
                        cx.err(
                            format!(
                                "the set has {} index(es) but is used where there are {}",
                                names.len(),
                                scope.values.len()
                            ),
                            bs.span,
                            "wrong number of indices",
                        );
                        return None;
                    }
                    Scope {
                        names: names.iter().map(|n| Some(n.name.clone())).collect(),
                        values: scope.values.clone(),
                        real: scope.real.clone(),
                    }
                }
            };
            cx.piece_constraint(bs, &sc)
        })?;
        let mut out = parts.concat();
        if pieces.is_empty() {
            out.push(Vec::new());
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
                let extents = self.lower_each(extents, |cx, e| cx.affine(e, &empty))?;
                let mut piece = Vec::new();
                for (k, a) in extents.iter().enumerate() {
                    let x = Aff::dim(space.clone(), k);
                    // 0 <= x_k and x_k <= E - 1
                    let upper = aff_widen(a, &space)
                        .and_then(|w| aff_add(&w, &x, -1))
                        .and_then(|r| aff_add(&r, &const_aff(&space, 1), -1))?;
                    piece.push(Constraint::ineq(x.row().to_vec()));
                    piece.push(Constraint::ineq(upper.row().to_vec()));
                }
                self.dnf_set(&dims, vec![piece], d.span)
            }
            ast::DomainKind::Set(pieces) => {
                if pieces.is_empty() {
                    return Some(self.universe(&[]));
                }
                let first = pieces[0].indices.clone().unwrap_or_default();
                let dims: Vec<String> = first.iter().map(|i| i.name.clone()).collect();
                let parts = self.lower_each(pieces, |cx, bs| {
                    let names = bs.indices.clone().unwrap_or_default();
                    if names.len() != dims.len() {
                        cx.err(
                            format!(
                                "all pieces of a domain need the same number of indices ({} here, {} in the first)",
                                names.len(),
                                dims.len()
                            ),
                            bs.span,
                            "wrong number of indices",
                        );
                        return None;
                    }
                    let mut seen: Vec<Option<String>> = Vec::new();
                    let mut names_ok = true;
                    for n in &names {
                        names_ok &= cx.check_index_name(n, &seen);
                        seen.push(Some(n.name.clone()));
                    }
                    let real: Vec<String> = names.iter().map(|n| n.name.clone()).collect();
                    let sc = Scope::identity(&cx.space(&real));
                    // The constraint is lowered (and its errors reported)
                    // even when a name clashes.
                    cx.piece_constraint(bs, &sc).filter(|_| names_ok)
                })?;
                self.dnf_set(&dims, parts.concat(), d.span)
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

/// The constraint `a op b` in DNF: one conjunction of one affine
/// constraint, except for `!=`, which is the union `a > b or a < b`.
pub(super) fn cmp_atom(op: ast::CmpOp, a: &Aff, b: &Aff) -> Option<Vec<Vec<Constraint>>> {
    let one = const_aff(a.space(), 1);
    let ge = |x: Aff| vec![Constraint::ineq(x.row().to_vec())];
    let b_minus_a = aff_add(b, a, -1)?;
    let a_minus_b = aff_add(a, b, -1)?;
    Some(match op {
        ast::CmpOp::Le => vec![ge(b_minus_a)],
        ast::CmpOp::Ge => vec![ge(a_minus_b)],
        ast::CmpOp::Lt => vec![ge(aff_add(&b_minus_a, &one, -1)?)],
        ast::CmpOp::Gt => vec![ge(aff_add(&a_minus_b, &one, -1)?)],
        ast::CmpOp::Eq => vec![vec![Constraint::eq(a_minus_b.row().to_vec())]],
        ast::CmpOp::Ne => vec![
            ge(aff_add(&a_minus_b, &one, -1)?),
            ge(aff_add(&b_minus_a, &one, -1)?),
        ],
    })
}
