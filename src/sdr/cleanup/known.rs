//! What is known to hold where a read is evaluated, and the proof that a
//! data-dependent (indirect) read stays inside its variable's domain.
//!
//! *Known conditions* are boolean expressions true at every evaluation of
//! a sub-expression, collected on the way down from the equation's root
//! (all in the sub-expression's own index space):
//! - the conjuncts of `c` in the `then` branch of `if c then a else b`,
//!   and in the right operand of `c and b` (evaluated only when `c`
//!   holds);
//! - the negations of the comparisons of `c` in the `else` branch when `c`
//!   is a comparison or an `or` of comparisons (all of them are false
//!   there), and in the right operand of `c or b`;
//! - inside a reduction body (space `Y`) the outer conditions pulled back
//!   by the projection `Y → X` (they hold at every body point of the
//!   result being computed), likewise for a `categorical` weight; the
//!   pulled-back expression reads the same values.
//!
//! *The proof* ([`inside`]): for a read `X[a(c)]` with data-dependent
//! coordinates `q = (e_1, ..., e_m)`, every point `(c, q)` where it is
//! evaluated lies in `Q = (C × Z^m) ∩ G ∩ R`, where `C` is the read's
//! context (`reads`), `G` the known comparisons `u ⋈ v` whose sides are
//! affine in `c` or one of the `e_i` (syntactically, spans aside), and `R`
//! the value ranges of the `e_i` that are affine reads of a variable
//! defined by a `categorical` draw (`V[v] = categorical([k], D_V : w)`
//! takes values `k` with `(v, k) ∈ D_V`). When `Q ⊆ a⁻¹(D_X)` (exact
//! integer test) the read never fails its run-time domain check, so a
//! rewrite that drops the check loses nothing.

use super::super::rewrite::subst::pullback;
use super::super::SdrError;
use super::reads::{child_contexts, nth_context};
use super::subst::{Access, Coord};
use crate::ir::*;
use crate::poly::Constraint;

/// Conditions known to hold (see the module comment).
#[derive(Debug, Clone, Default)]
pub(crate) struct Known {
    pub(crate) atoms: Vec<Expr>,
}

impl Known {
    fn with(&self, more: Vec<Expr>) -> Known {
        let mut atoms = self.atoms.clone();
        atoms.extend(more);
        Known { atoms }
    }

    /// The conditions pulled back by `g` (those that cannot be moved are
    /// dropped: fewer facts is sound).
    fn pulled(&self, g: &MultiAff) -> Result<Known, SdrError> {
        let mut atoms = Vec::with_capacity(self.atoms.len());
        for a in &self.atoms {
            if let Some(b) = pullback(a, g)? {
                atoms.push(b);
            }
        }
        Ok(Known { atoms })
    }
}

/// The conjuncts of `c` (`a and b` flattened).
pub(crate) fn conjuncts(c: &Expr) -> Vec<Expr> {
    match &c.kind {
        ExprKind::Binary(BinOp::And, a, b) => {
            let mut v = conjuncts(a);
            v.extend(conjuncts(b));
            v
        }
        _ => vec![c.clone()],
    }
}

/// The negations of the comparisons of `c` when `c` is a comparison or an
/// `or` of comparisons (each is false where `c` is); none otherwise.
fn negated(c: &Expr) -> Vec<Expr> {
    fn go(c: &Expr, out: &mut Vec<Expr>) -> bool {
        match &c.kind {
            ExprKind::Binary(BinOp::Or, a, b) => go(a, out) && go(b, out),
            ExprKind::Binary(op, a, b) => {
                let neg = match op {
                    BinOp::Lt => BinOp::Ge,
                    BinOp::Le => BinOp::Gt,
                    BinOp::Gt => BinOp::Le,
                    BinOp::Ge => BinOp::Lt,
                    BinOp::Eq => BinOp::Ne,
                    BinOp::Ne => BinOp::Eq,
                    _ => return false,
                };
                out.push(Expr {
                    kind: ExprKind::Binary(neg, a.clone(), b.clone()),
                    ty: ElemType::Bool,
                    span: c.span,
                });
                true
            }
            _ => false,
        }
    }
    let mut out = Vec::new();
    if go(c, &mut out) {
        out
    } else {
        Vec::new()
    }
}

/// The known conditions of the direct children of `e` (in the order of
/// [`Expr::for_each_child`]) when `known` holds at `e`, evaluated over
/// `ctx` (for the spaces of categorical weights); `None` when `known`
/// holds at every child as it is (most nodes: no copy).
pub(crate) fn child_known(
    e: &Expr,
    known: &Known,
    ctx: &Set,
) -> Result<Option<Vec<Known>>, SdrError> {
    Ok(Some(match &e.kind {
        ExprKind::If(c, _, _) => vec![
            known.clone(),
            known.with(conjuncts(c)),
            known.with(negated(c)),
        ],
        ExprKind::Binary(BinOp::And, a, _) => vec![known.clone(), known.with(conjuncts(a))],
        ExprKind::Binary(BinOp::Or, a, _) => vec![known.clone(), known.with(negated(a))],
        ExprKind::Reduce(r) => vec![known.pulled(&r.proj)?],
        ExprKind::Categorical(c) => {
            let space = c.domain.space().clone();
            let affs: Vec<Aff> = (0..ctx.n_dims())
                .map(|k| Aff::dim(space.clone(), k))
                .collect();
            vec![known.pulled(&MultiAff::from_affs(space, &affs)?)?]
        }
        _ => return Ok(None),
    }))
}

/// Child `k`'s known conditions from [`child_known`]' answer.
fn nth_known<'a>(knowns: &'a Option<Vec<Known>>, known: &'a Known, k: usize) -> &'a Known {
    knowns.as_ref().and_then(|v| v.get(k)).unwrap_or(known)
}

/// Calls `f(child, ctx, known)` on each direct child of `e` (in the order
/// of [`Expr::for_each_child`]), with the child's context and known
/// conditions when `e` is evaluated over `ctx` where `known` holds; stops
/// at the first error.
pub(crate) fn children_known(
    e: &Expr,
    ctx: &Set,
    known: &Known,
    f: &mut dyn FnMut(&Expr, &Set, &Known) -> Result<(), SdrError>,
) -> Result<(), SdrError> {
    let ctxs = child_contexts(e, ctx)?;
    let knowns = child_known(e, known, ctx)?;
    let mut k = 0;
    let mut res = Ok(());
    e.for_each_child(&mut |c| {
        if res.is_ok() {
            res = f(c, nth_context(&ctxs, ctx, k), nth_known(&knowns, known, k));
        }
        k += 1;
    });
    res
}

/// [`children_known`] on a mutable expression (`f` may rewrite each child;
/// the contexts and known conditions are those of `e` before).
pub(crate) fn children_known_mut(
    e: &mut Expr,
    ctx: &Set,
    known: &Known,
    f: &mut dyn FnMut(&mut Expr, &Set, &Known) -> Result<(), SdrError>,
) -> Result<(), SdrError> {
    let ctxs = child_contexts(e, ctx)?;
    let knowns = child_known(e, known, ctx)?;
    let mut k = 0;
    let mut res = Ok(());
    e.for_each_child_mut(&mut |c| {
        if res.is_ok() {
            res = f(c, nth_context(&ctxs, ctx, k), nth_known(&knowns, known, k));
        }
        k += 1;
    });
    res
}

/// Calls `f(node, ctx, known)` on every affine or indirect read in `e`
/// (evaluated over `ctx` where `known` holds), the indices of an indirect
/// read before the read itself.
pub(crate) fn walk_reads_known(
    e: &Expr,
    ctx: &Set,
    known: &Known,
    f: &mut dyn FnMut(&Expr, &Set, &Known) -> Result<(), SdrError>,
) -> Result<(), SdrError> {
    match &e.kind {
        ExprKind::Read { .. } => f(e, ctx, known),
        ExprKind::IndirectRead { indices, .. } => {
            for ix in indices {
                walk_reads_known(ix, ctx, known, f)?;
            }
            f(e, ctx, known)
        }
        _ => children_known(e, ctx, known, &mut |c, cx, kn| {
            walk_reads_known(c, cx, kn, f)
        }),
    }
}

/// Like [`walk_reads_known`] on a mutable expression: `f(node, ctx,
/// known)` may replace the read node (it is not visited again). The known
/// conditions are those of the expression before any replacement (a
/// replacement computes the same values, so they still hold).
pub(crate) fn rewrite_reads_known(
    e: &mut Expr,
    ctx: &Set,
    known: &Known,
    f: &mut dyn FnMut(&mut Expr, &Set, &Known) -> Result<(), SdrError>,
) -> Result<(), SdrError> {
    match &mut e.kind {
        ExprKind::Read { .. } => f(e, ctx, known),
        ExprKind::IndirectRead { indices, .. } => {
            for ix in indices.iter_mut() {
                rewrite_reads_known(ix, ctx, known, f)?;
            }
            f(e, ctx, known)
        }
        _ => children_known_mut(e, ctx, known, &mut |c, cx, kn| {
            rewrite_reads_known(c, cx, kn, f)
        }),
    }
}

/// `a` and `b` are the same expression (spans aside): the same forms,
/// variables, affine functions and constants. Conservative: `false` for
/// forms it does not compare.
pub(crate) fn same(a: &Expr, b: &Expr) -> bool {
    if a.ty != b.ty {
        return false;
    }
    let all = |xs: &[Expr], ys: &[Expr]| {
        xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same(x, y))
    };
    match (&a.kind, &b.kind) {
        (ExprKind::IntConst(x), ExprKind::IntConst(y)) => x == y,
        (ExprKind::BoolConst(x), ExprKind::BoolConst(y)) => x == y,
        (ExprKind::FloatConst(x), ExprKind::FloatConst(y)) => x.to_bits() == y.to_bits(),
        (ExprKind::Index(x), ExprKind::Index(y)) => x == y,
        (ExprKind::Read { var: v, access: f }, ExprKind::Read { var: w, access: g }) => {
            v == w && f == g
        }
        (
            ExprKind::IndirectRead {
                var: v,
                indices: xs,
            },
            ExprKind::IndirectRead {
                var: w,
                indices: ys,
            },
        ) => v == w && all(xs, ys),
        (ExprKind::Unary(o, x), ExprKind::Unary(p, y)) => o == p && same(x, y),
        (ExprKind::Binary(o, x1, x2), ExprKind::Binary(p, y1, y2)) => {
            o == p && same(x1, y1) && same(x2, y2)
        }
        (ExprKind::If(x1, x2, x3), ExprKind::If(y1, y2, y3)) => {
            same(x1, y1) && same(x2, y2) && same(x3, y3)
        }
        (ExprKind::Builtin(f, xs), ExprKind::Builtin(g, ys)) => f == g && all(xs, ys),
        _ => false,
    }
}

/// True when the read `node` of `X` (domain `d_x`, within the parameter
/// context), evaluated over `ctx` where `known` holds, is provably inside
/// `d_x` at every evaluation (see the module comment).
pub(crate) fn inside(
    s: &System,
    node: &Expr,
    ctx: &Set,
    known: &Known,
    d_x: &Set,
) -> Result<bool, SdrError> {
    let Some(access) = Access::of_read(node, ctx.space())? else {
        return Ok(false);
    };
    let (ext, a_ext, drop) = access.extended()?;
    let nr = ctx.n_dims();
    let data: Vec<&Expr> = access
        .coords
        .iter()
        .filter_map(|c| match c {
            Coord::Data(e) => Some(e),
            Coord::Affine(_) => None,
        })
        .collect();
    // the affine form over (c, q) of a side of a comparison
    let side = |e: &Expr| -> Result<Option<Aff>, SdrError> {
        if let Some(i) = data.iter().position(|d| same(d, e)) {
            return Ok(Some(Aff::dim(ext.clone(), nr + i)));
        }
        Ok(match &e.kind {
            ExprKind::Index(a) => Some(a.with_space(ctx.space().clone())?.pullback(&drop)?),
            ExprKind::IntConst(v) => Some(Aff::constant(ext.clone(), *v)?),
            _ => None,
        })
    };
    let mut q = ctx.preimage(&drop)?;
    let mut rows = Vec::new();
    for atom in &known.atoms {
        let ExprKind::Binary(op, u, v) = &atom.kind else {
            continue;
        };
        let (Some(u), Some(v)) = (side(u)?, side(v)?) else {
            continue;
        };
        let one = Aff::constant(ext.clone(), 1)?;
        let c = match op {
            BinOp::Eq => Constraint::eq(u.add_scaled(-1, &v)?.row().to_vec()),
            BinOp::Ge => Constraint::ineq(u.add_scaled(-1, &v)?.row().to_vec()),
            BinOp::Gt => {
                Constraint::ineq(u.add_scaled(-1, &v)?.add_scaled(-1, &one)?.row().to_vec())
            }
            BinOp::Le => Constraint::ineq(v.add_scaled(-1, &u)?.row().to_vec()),
            BinOp::Lt => {
                Constraint::ineq(v.add_scaled(-1, &u)?.add_scaled(-1, &one)?.row().to_vec())
            }
            _ => continue,
        };
        rows.push(c);
    }
    if !rows.is_empty() {
        q = q.intersect(&Set::from_constraints(ext.clone(), vec![rows])?)?;
    }
    for (i, e) in data.iter().enumerate() {
        if let Some(range) = categorical_range(s, e, ctx, &ext, &drop, nr + i)? {
            q = q.intersect(&range)?;
        }
    }
    Ok(q.is_subset(&d_x.preimage(&a_ext)?)?)
}

/// For `e` an affine read `V[ψ(c)]` of a variable defined by
/// `V[v] = categorical([k], D_V : w)`: the set `{ (c, q) : (ψ(c), q_j) ∈
/// D_V }` over the extended space `ext` (`j` the coordinate's dimension),
/// which holds every value `e` takes.
fn categorical_range(
    s: &System,
    e: &Expr,
    ctx: &Set,
    ext: &Space,
    drop: &MultiAff,
    j: usize,
) -> Result<Option<Set>, SdrError> {
    let ExprKind::Read { var, access } = &e.kind else {
        return Ok(None);
    };
    let Some(eq) = s.equation_of(*var) else {
        return Ok(None);
    };
    let ExprKind::Categorical(c) = &eq.expr.kind else {
        return Ok(None);
    };
    let mut affs = Vec::with_capacity(access.n_out() + 1);
    for a in access.affs() {
        affs.push(a.with_space(ctx.space().clone())?.pullback(drop)?);
    }
    affs.push(Aff::dim(ext.clone(), j));
    let m = MultiAff::from_affs(ext.clone(), &affs)?;
    Ok(Some(c.domain.preimage(&m)?))
}
