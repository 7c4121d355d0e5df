//! Generic walks over loop-AST statements and expressions: visiting the
//! affine expressions, the expression nodes, rebuilding an expression
//! from its mapped children, sizes, and top-level conjunctions.
//!
//! Must not know about: facts, the solver, what a rewrite decides.

use super::*;

/// Calls `g` on every affine expression of `e` (mutably); stops at the
/// first `None`.
pub(super) fn affines_expr(
    e: &mut Expr,
    g: &mut dyn FnMut(&mut Affine) -> Option<()>,
) -> Option<()> {
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Local(_) => Some(()),
        Expr::Aff(a) => g(a),
        Expr::Load { index, .. } => index.iter_mut().try_for_each(|x| affines_expr(x, g)),
        Expr::Unary(_, a) | Expr::Cast(_, a) => affines_expr(a, g),
        Expr::Binary(_, a, b) => {
            affines_expr(a, g)?;
            affines_expr(b, g)
        }
        Expr::Select(c, a, b) => {
            affines_expr(c, g)?;
            affines_expr(a, g)?;
            affines_expr(b, g)
        }
        Expr::Math(_, args) => args.iter_mut().try_for_each(|x| affines_expr(x, g)),
        Expr::Random(r) => {
            r.args.iter_mut().try_for_each(|x| affines_expr(x, g))?;
            affines_expr(&mut r.seed, g)?;
            r.point.iter_mut().try_for_each(|x| affines_expr(x, g))
        }
        Expr::External { args, .. } => args.iter_mut().try_for_each(|x| affines_expr(x, g)),
        Expr::Selection(s) => {
            affines_expr(&mut s.value, g)?;
            affines_expr(&mut s.lower, g)?;
            affines_expr(&mut s.upper, g)
        }
        Expr::Categorical(c) => {
            affines_bounds(&mut c.lower, &mut c.upper, g)?;
            affines_expr(&mut c.cond, g)?;
            affines_expr(&mut c.weight, g)?;
            affines_expr(&mut c.seed, g)?;
            c.point.iter_mut().try_for_each(|x| affines_expr(x, g))
        }
    }
}

/// Calls `g` on the affine expressions of the terms of a pair of bounds
/// (lower, then upper).
fn affines_bounds(
    lower: &mut Bound,
    upper: &mut Bound,
    g: &mut dyn FnMut(&mut Affine) -> Option<()>,
) -> Option<()> {
    lower
        .terms
        .iter_mut()
        .chain(upper.terms.iter_mut())
        .try_for_each(|t| g(&mut t.expr))
}

/// Calls `g` on every affine expression of the statements (bounds,
/// conditions, indices, values).
pub(super) fn affines_stmts(
    body: &mut [Stmt],
    g: &mut dyn FnMut(&mut Affine) -> Option<()>,
) -> Option<()> {
    for s in body {
        match s {
            Stmt::For(l) => {
                affines_bounds(&mut l.lower, &mut l.upper, g)?;
                affines_stmts(&mut l.body, g)?;
            }
            Stmt::If { cond, then, els } => {
                affines_expr(cond, g)?;
                affines_stmts(then, g)?;
                affines_stmts(els, g)?;
            }
            Stmt::Assign { index, value, .. }
            | Stmt::Accumulate(Accumulation { index, value, .. }) => {
                index.iter_mut().try_for_each(|x| affines_expr(x, g))?;
                affines_expr(value, g)?;
            }
            Stmt::SetLocal { value, .. } => affines_expr(value, g)?,
            Stmt::Block(b) => affines_stmts(b, g)?,
            Stmt::Bind(b) => {
                affines_bounds(&mut b.lower, &mut b.upper, g)?;
                affines_expr(&mut b.guard, g)?;
                affines_expr(&mut b.value, g)?;
                affines_stmts(&mut b.body, g)?;
            }
        }
    }
    Some(())
}

/// The operands of the top-level `&&`s of `e`, left to right.
pub(super) fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Binary(BinOp::And, a, b) => {
            let mut v = conjuncts(a);
            v.extend(conjuncts(b));
            v
        }
        _ => vec![e],
    }
}

/// Calls `g` on every expression node of the statements (pre-order;
/// not inside categorical draws).
pub(super) fn visit_exprs(body: &[Stmt], g: &mut dyn FnMut(&Expr)) {
    fn expr(e: &Expr, g: &mut dyn FnMut(&Expr)) {
        g(e);
        match e {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => {}
            Expr::Load { index, .. } => index.iter().for_each(|x| expr(x, g)),
            Expr::Unary(_, a) | Expr::Cast(_, a) => expr(a, g),
            Expr::Binary(_, a, b) => {
                expr(a, g);
                expr(b, g);
            }
            Expr::Select(c, a, b) => {
                expr(c, g);
                expr(a, g);
                expr(b, g);
            }
            Expr::Math(_, args) | Expr::External { args, .. } => {
                args.iter().for_each(|x| expr(x, g))
            }
            Expr::Random(r) => {
                r.args.iter().chain(&r.point).for_each(|x| expr(x, g));
                expr(&r.seed, g);
            }
            Expr::Selection(s) => {
                expr(&s.value, g);
                expr(&s.lower, g);
                expr(&s.upper, g);
            }
            // Its condition binds a variable of its own: left alone.
            Expr::Categorical(_) => {}
        }
    }
    for_each_stmt_expr(body, &mut |e| expr(e, g));
}

/// Size of an expression: its number of nodes (a categorical draw counts
/// its condition and weight).
pub(super) fn size_expr(e: &Expr) -> usize {
    1 + match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => 0,
        Expr::Load { index, .. } => index.iter().map(size_expr).sum(),
        Expr::Unary(_, a) | Expr::Cast(_, a) => size_expr(a),
        Expr::Binary(_, a, b) => size_expr(a) + size_expr(b),
        Expr::Select(c, a, b) => size_expr(c) + size_expr(a) + size_expr(b),
        Expr::Math(_, args) | Expr::External { args, .. } => args.iter().map(size_expr).sum(),
        Expr::Random(r) => {
            r.args.iter().chain(&r.point).map(size_expr).sum::<usize>() + size_expr(&r.seed)
        }
        Expr::Categorical(c) => size_expr(&c.cond) + size_expr(&c.weight),
        Expr::Selection(s) => size_expr(&s.value) + size_expr(&s.lower) + size_expr(&s.upper),
    }
}

/// Size of statements: one per statement plus the sizes of its
/// expressions (a loop counts its bound terms).
pub(super) fn size_stmts(body: &[Stmt]) -> usize {
    body.iter()
        .map(|s| {
            1 + match s {
                Stmt::For(l) => l.lower.terms.len() + l.upper.terms.len() + size_stmts(&l.body),
                Stmt::If { cond, then, els } => {
                    size_expr(cond) + size_stmts(then) + size_stmts(els)
                }
                Stmt::Assign { index, value, .. }
                | Stmt::Accumulate(Accumulation { index, value, .. }) => {
                    index.iter().map(size_expr).sum::<usize>() + size_expr(value)
                }
                Stmt::SetLocal { value, .. } => size_expr(value),
                Stmt::Block(b) => size_stmts(b),
                Stmt::Bind(b) => {
                    b.lower.terms.len()
                        + b.upper.terms.len()
                        + size_expr(&b.guard)
                        + size_expr(&b.value)
                        + size_stmts(&b.body)
                }
            }
        })
        .sum()
}

/// `e` with each direct sub-expression `x` replaced by `f(x)`, left to
/// right (a random draw: its arguments, its seed, then its point); leaves
/// and categorical draws (whose sub-expressions bind a variable of their
/// own) are returned unchanged.
pub(super) fn map_children(e: Expr, mut f: impl FnMut(Expr) -> Expr) -> Expr {
    match e {
        Expr::Load { array, index } => Expr::Load {
            array,
            index: index.into_iter().map(&mut f).collect(),
        },
        Expr::Unary(op, a) => Expr::Unary(op, Box::new(f(*a))),
        Expr::Cast(c, a) => Expr::Cast(c, Box::new(f(*a))),
        Expr::Binary(op, a, b) => {
            let a = f(*a);
            Expr::bin(op, a, f(*b))
        }
        Expr::Select(c, a, b) => {
            let c = f(*c);
            let a = f(*a);
            Expr::select(c, a, f(*b))
        }
        Expr::Math(m, args) => Expr::Math(m, args.into_iter().map(f).collect()),
        Expr::Random(r) => {
            let args = r.args.into_iter().map(&mut f).collect();
            let seed = f(r.seed);
            let point = r.point.into_iter().map(f).collect();
            Expr::Random(Box::new(RandomDraw {
                args,
                seed,
                point,
                ..*r
            }))
        }
        Expr::External { index, args } => Expr::External {
            index,
            args: args.into_iter().map(f).collect(),
        },
        Expr::Selection(s) => {
            let s = *s;
            let value = f(s.value);
            let lower = f(s.lower);
            let upper = f(s.upper);
            Expr::Selection(Box::new(Selection {
                value,
                lower,
                upper,
                ..s
            }))
        }
        e @ (Expr::Categorical(_)
        | Expr::Int(_)
        | Expr::Float(_)
        | Expr::Bool(_)
        | Expr::Aff(_)
        | Expr::Local(_)) => e,
    }
}

/// A statement without sub-statements (`Assign`, `Accumulate`,
/// `SetLocal`) with each of its expressions (indices, then the value)
/// replaced by `f(x)`; `Err(s)`, unchanged, for a statement with
/// sub-statements.
pub(super) fn map_leaf_exprs(s: Stmt, mut f: impl FnMut(Expr) -> Expr) -> Result<Stmt, Stmt> {
    Ok(match s {
        Stmt::Assign {
            array,
            index,
            value,
        } => {
            let index = index.into_iter().map(&mut f).collect();
            Stmt::Assign {
                array,
                index,
                value: f(value),
            }
        }
        Stmt::Accumulate(a) => {
            let index = a.index.into_iter().map(&mut f).collect();
            let value = f(a.value);
            Stmt::Accumulate(Accumulation { index, value, ..a })
        }
        Stmt::SetLocal { local, value } => Stmt::SetLocal {
            local,
            value: f(value),
        },
        compound @ (Stmt::For(_) | Stmt::If { .. } | Stmt::Block(_) | Stmt::Bind(_)) => {
            return Err(compound)
        }
    })
}

/// A rewrite of a statement list, statement by statement
/// ([`rewrite_stmts`]): each hook appends what replaces its statement to
/// `out`. Blocks are always rewritten recursively (and stay blocks).
pub(super) trait StmtRewrite {
    /// Appends what replaces the loop `l` (its body as it was: the
    /// rewrite recurses into it when it wants to). By default, the loop
    /// with its body rewritten.
    fn on_for(&mut self, l: ForLoop, out: &mut Vec<Stmt>) {
        out.push(Stmt::For(l.map_body(|b| rewrite_stmts(self, b))));
    }

    /// Appends what replaces `if (cond) then else els` (branches as they
    /// were). By default, the condition kept and both branches
    /// rewritten.
    fn on_if(&mut self, cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>, out: &mut Vec<Stmt>) {
        let then = rewrite_stmts(self, then);
        let els = rewrite_stmts(self, els);
        out.push(Stmt::If { cond, then, els });
    }

    /// Appends what replaces the binding `b` (its body as it was). By
    /// default, the binding (bounds, guard, value kept) with its body
    /// rewritten.
    fn on_bind(&mut self, b: Binding, out: &mut Vec<Stmt>) {
        out.push(Stmt::from(b.map_body(|x| rewrite_stmts(self, x))));
    }

    /// Appends what replaces a statement without sub-statements
    /// (`Assign`, `Accumulate`, `SetLocal`). By default, the statement.
    fn on_leaf(&mut self, s: Stmt, out: &mut Vec<Stmt>) {
        out.push(s);
    }
}

/// `body` with each statement replaced by what the hook of `r` for its
/// form makes of it, in order.
pub(super) fn rewrite_stmts<R: StmtRewrite + ?Sized>(r: &mut R, body: Vec<Stmt>) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        match s {
            Stmt::For(l) => r.on_for(l, &mut out),
            Stmt::If { cond, then, els } => r.on_if(cond, then, els, &mut out),
            Stmt::Bind(b) => r.on_bind(*b, &mut out),
            Stmt::Block(b) => {
                let b = rewrite_stmts(r, b);
                out.push(Stmt::Block(b));
            }
            leaf => r.on_leaf(leaf, &mut out),
        }
    }
    out
}
