//! IR expressions translated at one statement instance ([`ExprGen`]):
//! values, affine indices, domain predicates, built-ins, categorical
//! draws; and the small affine and boolean builders the loop generator
//! shares (`lin_comb`, `simplify`).
//!
//! Must not know about: schedules, time space, loop bounds.

use super::domains::*;
use super::*;

/// `constant + Σ_k coefs[k]·xs[k] + Σ_p pars[p]·p` (the `xs` affine in loop
/// variables and parameters), merged; checked arithmetic. A non-zero
/// coefficient without its `xs[k]` is an internal error (`missing`).
pub(super) fn lin_comb(
    coefs: &[i64],
    xs: &[Affine],
    pars: &[i64],
    constant: i64,
    missing: &str,
) -> R<Affine> {
    let mut out = Affine::cst(constant);
    for (k, &c) in coefs.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let xv = xs
            .get(k)
            .ok_or_else(|| ScanError::Internal(missing.into()))?;
        for &(s, v) in &xv.terms {
            out.terms.push((s, ov(c.checked_mul(v))?));
        }
        out.constant = ov(out.constant.checked_add(ov(c.checked_mul(xv.constant))?))?;
    }
    for (p, &c) in pars.iter().enumerate() {
        if c != 0 {
            out.terms.push((Sym::Param(p), c));
        }
    }
    Ok(simplify(out))
}

/// Merges equal symbols and drops zero coefficients.
pub(super) fn simplify(a: Affine) -> Affine {
    let mut terms: Vec<(Sym, i64)> = Vec::new();
    for (s, c) in a.terms {
        if let Some(t) = terms.iter_mut().find(|t| t.0 == s) {
            t.1 = t.1.saturating_add(c);
        } else {
            terms.push((s, c));
        }
    }
    terms.retain(|t| t.1 != 0);
    terms.sort_by_key(|t| t.0);
    Affine {
        terms,
        constant: a.constant,
    }
}

/// Expression translation at one statement instance.
pub(super) struct ExprGen<'a> {
    pub(super) n_par: usize,
    pub(super) acc_of: &'a HashMap<(usize, ReductionId), usize>,
    pub(super) stmt: usize,
    /// The function's loop variables (a categorical draw binds a new one).
    pub(super) loop_vars: RefCell<&'a mut Names>,
}

impl ExprGen<'_> {
    /// A new loop variable named after `name` (made unique).
    fn fresh(&self, name: &str) -> LoopVar {
        self.loop_vars.borrow_mut().fresh(name)
    }

    /// The loop program of `categorical([k], D : W)` at point `x`: `k`
    /// ranges over `D`'s points above `x` in ascending order. When `D` is
    /// one piece, its constraints on `k` give the exact bounds
    /// (`a·k + r >= 0` is `k >= ceil(-r/a)` for `a > 0` and
    /// `k <= floor(r/-a)` for `a < 0`; an equality gives both) and the
    /// others the condition; otherwise the bounds are `D`'s parametric box
    /// in `k` and the condition is membership in `D`.
    fn categorical(&self, c: &ir::Categorical, x: &[Affine]) -> R<Expr> {
        let n = x.len();
        if c.domain.n_dims() != n + 1 {
            return Err(ScanError::Internal(
                "categorical domain of the wrong dimension".into(),
            ));
        }
        let var = self.fresh(&c.index);
        let mut xk = x.to_vec();
        xk.push(Affine::var(var));
        let mut lower: Vec<(Affine, i64)> = Vec::new();
        let mut upper: Vec<(Affine, i64)> = Vec::new();
        let mut conds = Vec::new();
        let single = c.domain.pieces().len() == 1;
        if let (true, Some(piece)) = (single, c.domain.pieces().first()) {
            for con in piece.constraints() {
                // `a·k + rest`: the drawn index is the last dimension.
                let (par, idx, constant) = row_parts(&con.row, c.domain.n_params());
                let a = idx.get(n).copied().unwrap_or(0);
                let r = self.aff_parts(par, &idx[..n.min(idx.len())], constant, x)?;
                let neg = || -> R<Affine> {
                    Ok(simplify(Affine {
                        terms: r
                            .terms
                            .iter()
                            .map(|&(s, v)| ov(v.checked_neg()).map(|v| (s, v)))
                            .collect::<R<_>>()?,
                        constant: ov(r.constant.checked_neg())?,
                    }))
                };
                match (con.kind, a.signum()) {
                    (_, 0) => conds.push(Expr::bin(
                        match con.kind {
                            ConstraintKind::Ineq => loop_ast::BinOp::Ge,
                            ConstraintKind::Eq => loop_ast::BinOp::Eq,
                        },
                        Expr::Aff(r.clone()),
                        Expr::Int(0),
                    )),
                    (ConstraintKind::Ineq, 1) => lower.push((neg()?, a)),
                    (ConstraintKind::Ineq, _) => upper.push((r.clone(), ov(a.checked_neg())?)),
                    (ConstraintKind::Eq, 1) => {
                        lower.push((neg()?, a));
                        upper.push((neg()?, a));
                    }
                    (ConstraintKind::Eq, _) => {
                        let m = ov(a.checked_neg())?;
                        lower.push((r.clone(), m));
                        upper.push((r.clone(), m));
                    }
                }
            }
        }
        let (lb, ub, cond) = if single && !lower.is_empty() && !upper.is_empty() {
            let mk = |ts: Vec<(Affine, i64)>| Bound {
                terms: ts
                    .into_iter()
                    .map(|(expr, div)| loop_ast::BoundTerm { expr, div })
                    .collect(),
            };
            (mk(lower), mk(upper), Expr::and_all(conds))
        } else {
            // The pieces projected onto (k, p) (rational shadows: a
            // superset of the points; the condition is exact).
            let mut polys = Vec::new();
            for mut q in domain_polys(&c.domain, self.n_par) {
                for j in 0..n {
                    q = bounds::shadow_eliminate(&q, j)?;
                }
                let drop = |r: &Vec<i64>| r[n..].to_vec();
                polys.push(System {
                    n_vars: q.n_vars - n,
                    eqs: q.eqs.iter().map(drop).collect(),
                    ineqs: q.ineqs.iter().map(drop).collect(),
                });
            }
            let dims = symbolic_box(&polys, 1, self.n_par, &c.index).map_err(|_| {
                ScanError::Unsupported(format!(
                    "categorical draw over `{}`: the range of the drawn index is not bounded by the parameters",
                    c.index
                ))
            })?;
            let d = &dims[0];
            (
                Bound::aff(d.lower.clone()),
                Bound::aff(simplify(dim_upper(d)?)),
                self.domain_cond(&c.domain, &xk)?,
            )
        };
        Ok(Expr::Categorical(Box::new(loop_ast::CategoricalDraw {
            var,
            lower: lb,
            upper: ub,
            cond,
            weight: self.expr(&c.weight, &xk, Some(ElemType::Float))?,
            seed: Expr::param(self.n_par),
            site: (c.site.var as u32) << 16 | c.site.ordinal,
            point: x.iter().map(|a| Expr::Aff(a.clone())).collect(),
            array: Some(c.site.var),
        })))
    }

    pub(super) fn aff(&self, a: &Aff, x: &[Affine]) -> R<Affine> {
        self.aff_parts(a.param_coeffs(), a.dim_coeffs(), a.constant_term(), x)
    }

    /// `Σ idx[k]·x_k + Σ par[p]·p + constant` (parameters beyond the
    /// system's ignored).
    fn aff_parts(&self, par: &[i64], idx: &[i64], constant: i64, x: &[Affine]) -> R<Affine> {
        let np = par.len().min(self.n_par);
        lin_comb(idx, x, &par[..np], constant, "index out of the space")
    }

    fn domain_cond(&self, d: &Set, x: &[Affine]) -> R<Expr> {
        let mut alts = Vec::new();
        for piece in d.pieces() {
            let mut cs = Vec::new();
            for c in piece.constraints() {
                let (par, idx, constant) = row_parts(&c.row, d.n_params());
                let idx = &idx[..idx.len().min(x.len())];
                let e = Expr::Aff(self.aff_parts(par, idx, constant, x)?);
                cs.push(Expr::bin(
                    match c.kind {
                        ConstraintKind::Ineq => loop_ast::BinOp::Ge,
                        ConstraintKind::Eq => loop_ast::BinOp::Eq,
                    },
                    e,
                    Expr::Int(0),
                ));
            }
            alts.push(Expr::and_all(cs));
        }
        Ok(Expr::chain(loop_ast::BinOp::Or, alts, Expr::Bool(false)))
    }

    /// `e` at point `x`, converted to `want` (int/bool → float promotion).
    pub(super) fn expr(&self, e: &ir::Expr, x: &[Affine], want: Option<ElemType>) -> R<Expr> {
        let v = self.raw(e, x)?;
        Ok(convert(v, e.ty, want.unwrap_or(e.ty)))
    }

    fn raw(&self, e: &ir::Expr, x: &[Affine]) -> R<Expr> {
        use loop_ast::BinOp as B;
        Ok(match &e.kind {
            ExprKind::IntConst(v) => Expr::Int(*v),
            ExprKind::FloatConst(v) => Expr::Float(*v),
            ExprKind::BoolConst(v) => Expr::Bool(*v),
            ExprKind::Index(a) => Expr::Aff(self.aff(a, x)?),
            ExprKind::Read { var, access } => Expr::Load {
                array: *var,
                index: access
                    .affs()
                    .iter()
                    .map(|a| self.aff(a, x).map(Expr::Aff))
                    .collect::<R<_>>()?,
            },
            ExprKind::IndirectRead { var, indices } => Expr::Load {
                array: *var,
                index: indices
                    .iter()
                    .map(|i| self.expr(i, x, Some(ElemType::Int)))
                    .collect::<R<_>>()?,
            },
            ExprKind::Selection(s) => Expr::Selection(Box::new(loop_ast::Selection {
                value: self.expr(&s.value, x, Some(ElemType::Int))?,
                lower: self.expr(&s.lower, x, Some(ElemType::Int))?,
                upper: self.expr(&s.upper, x, Some(ElemType::Int))?,
                var: s.var.clone(),
                index: s.index.clone(),
                nonempty: false,
            })),
            ExprKind::Unary(op, a) => match op {
                UnOp::Neg => Expr::Unary(UnOp::Neg, Box::new(self.expr(a, x, Some(e.ty))?)),
                UnOp::Not => Expr::Unary(UnOp::Not, Box::new(self.expr(a, x, None)?)),
            },
            ExprKind::Binary(op, a, b) => {
                let arith = |o: B| -> R<Expr> {
                    Ok(Expr::bin(
                        o,
                        self.expr(a, x, Some(e.ty))?,
                        self.expr(b, x, Some(e.ty))?,
                    ))
                };
                let cmp = |o: B| -> R<Expr> {
                    let t = if a.ty == ElemType::Float || b.ty == ElemType::Float {
                        ElemType::Float
                    } else {
                        a.ty
                    };
                    Ok(Expr::bin(
                        o,
                        self.expr(a, x, Some(t))?,
                        self.expr(b, x, Some(t))?,
                    ))
                };
                match op {
                    BinOp::Add => arith(B::Add)?,
                    BinOp::Sub => arith(B::Sub)?,
                    BinOp::Mul => arith(B::Mul)?,
                    BinOp::Div => arith(B::Div)?,
                    BinOp::Rem => arith(B::Rem)?,
                    BinOp::Eq => cmp(B::Eq)?,
                    BinOp::Ne => cmp(B::Ne)?,
                    BinOp::Lt => cmp(B::Lt)?,
                    BinOp::Le => cmp(B::Le)?,
                    BinOp::Gt => cmp(B::Gt)?,
                    BinOp::Ge => cmp(B::Ge)?,
                    BinOp::And => arith(B::And)?,
                    BinOp::Or => arith(B::Or)?,
                }
            }
            ExprKind::If(c, a, b) => Expr::select(
                self.expr(c, x, None)?,
                self.expr(a, x, Some(e.ty))?,
                self.expr(b, x, Some(e.ty))?,
            ),
            ExprKind::Case(branches) => {
                let mut it = branches.iter().rev();
                let Some((_, last)) = it.next() else {
                    return Err(ScanError::Internal("empty case".into()));
                };
                let mut acc = self.expr(last, x, Some(e.ty))?;
                for (d, b) in it {
                    acc = Expr::select(self.domain_cond(d, x)?, self.expr(b, x, Some(e.ty))?, acc);
                }
                acc
            }
            ExprKind::Restrict(_, a) => self.expr(a, x, Some(e.ty))?,
            ExprKind::Reduce(r) => {
                let key = (self.stmt, r.id);
                let Some(&arr) = self.acc_of.get(&key) else {
                    return Err(ScanError::Internal("reduction without accumulator".into()));
                };
                Expr::Load {
                    array: arr,
                    index: x.iter().map(|a| Expr::Aff(a.clone())).collect(),
                }
            }
            ExprKind::Builtin(b, args) => self.builtin(*b, args, e.ty, x)?,
            ExprKind::External(i, args) => Expr::External {
                index: *i,
                args: args
                    .iter()
                    .map(|a| self.expr(a, x, Some(ElemType::Float)))
                    .collect::<R<_>>()?,
            },
            ExprKind::Random(d, args, site) => {
                let dist = *d;

                let conv = convert(
                    Expr::Random(Box::new(RandomDraw {
                        dist,
                        args: args
                            .iter()
                            .map(|a| self.expr(a, x, Some(ElemType::Float)))
                            .collect::<R<_>>()?,
                        seed: Expr::param(self.n_par),
                        site: (site.var as u32) << 16 | site.ordinal,
                        point: x.iter().map(|a| Expr::Aff(a.clone())).collect(),
                    })),
                    dist.result(),
                    e.ty,
                );
                conv
            }
            ExprKind::Categorical(c) => self.categorical(c, x)?,
        })
    }

    fn builtin(&self, b: Builtin, args: &[ir::Expr], ty: ElemType, x: &[Affine]) -> R<Expr> {
        let arg = |k: usize, t: Option<ElemType>| -> R<Expr> {
            let a = args
                .get(k)
                .ok_or_else(|| ScanError::Internal(format!("builtin {b:?}: missing argument")))?;
            self.expr(a, x, t)
        };
        let fl = Some(ElemType::Float);
        let math = |f: MathFn| -> R<Expr> {
            let m = Expr::Math(f, vec![arg(0, fl)?]);
            Ok(if ty == ElemType::Int {
                Expr::cast(Cast::FloatToInt, m)
            } else {
                m
            })
        };
        Ok(match b {
            Builtin::Exp => math(MathFn::Exp)?,
            Builtin::Log => math(MathFn::Log)?,
            Builtin::Sqrt => math(MathFn::Sqrt)?,
            Builtin::Floor => math(MathFn::Floor)?,
            Builtin::Ceil => math(MathFn::Ceil)?,
            Builtin::Lgamma => math(MathFn::Lgamma)?,
            Builtin::Pow => {
                let m = Expr::Math(MathFn::Pow, vec![arg(0, fl)?, arg(1, fl)?]);
                if ty == ElemType::Int {
                    Expr::cast(Cast::FloatToInt, m)
                } else {
                    m
                }
            }
            Builtin::Abs => Expr::Math(MathFn::Abs, vec![arg(0, Some(ty))?]),
            Builtin::ToFloat => arg(0, fl)?,
            Builtin::ToInt => {
                let a0 = args
                    .first()
                    .ok_or_else(|| ScanError::Internal("int(): missing argument".into()))?;
                let v = self.expr(a0, x, None)?;
                match a0.ty {
                    ElemType::Float => Expr::cast(Cast::FloatToInt, v),
                    ElemType::Bool => Expr::cast(Cast::BoolToInt, v),
                    ElemType::Int => v,
                }
            }
            Builtin::Max | Builtin::Min => {
                let op = if b == Builtin::Max {
                    loop_ast::BinOp::Max
                } else {
                    loop_ast::BinOp::Min
                };
                let mut acc: Option<Expr> = None;
                for k in 0..args.len() {
                    let v = arg(k, Some(ty))?;
                    acc = Some(match acc {
                        None => v,
                        Some(a) => Expr::bin(op, a, v),
                    });
                }
                acc.ok_or_else(|| ScanError::Internal("max/min of nothing".into()))?
            }
        })
    }
}

/// Converts a value of type `from` to `to` (the IR leaves int → float
/// promotion implicit).
pub(super) fn convert(v: Expr, from: ElemType, to: ElemType) -> Expr {
    match (from, to) {
        (ElemType::Int, ElemType::Float) => Expr::cast(Cast::IntToFloat, v),
        (ElemType::Bool, ElemType::Float) => Expr::cast(Cast::BoolToFloat, v),
        (ElemType::Bool, ElemType::Int) => Expr::cast(Cast::BoolToInt, v),
        _ => v,
    }
}
