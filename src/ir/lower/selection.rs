//! Selection guards: the data-dependent side of `e == k` in a reduction
//! body, `k` an index of the reduction's result, wrapped in
//! [`ExprKind::Selection`] so that a value of `e` outside `k`'s range is a
//! run-time error (LANGUAGE: "selections").
//!
//! A reduction `X[.., k, ..] = reduce(op, [j], D : if e(j, ..) == k then A
//! else B)` adds into the result at `k = e(j)` (a histogram, a count by
//! label); it is computed that way after scheduling (`codegen::opt::sparse`:
//! one pass over `j` with a data-selected `k`). A value of `e` outside the
//! range of `k` would contribute to no result: in a sampler it is a label
//! out of range in the data, a bug that must not pass silently. So such a
//! value is an error wherever the guard is evaluated, by the interpreter
//! (at every `k`) and by the generated code (at every `k`, or once per `j`
//! after the sparse rewrite), with the same range:
//!
//! *The rule.* In the body of a reduction whose result space is the
//! equation's (not nested in another reduction's body or a `categorical`
//! weight), a conjunct (of an `and` chain) of an `if` condition that is
//! `e == k` or `k == e`, where
//! - `k` is the index whose value the projection gives to result dimension
//!   `m` (the projection's row `m` is the body dimension `d` alone),
//! - `e` is an int expression that reads data (an array read), does not
//!   mention `d`, and holds no reduction, draw, external call, `case` or
//!   restriction,
//!
//! gets `e` wrapped: the value must lie in `lo ..= hi`, the bounds of
//! dimension `m` of the equation's variable's domain (`poly::boxes`, the
//! same as the variable's array box; no wrapping when the domain has no
//! affine box in that dimension). The bounds are `Index` expressions of the
//! parameters in the body space, so every rewrite that moves the body
//! moves them with it.
//!
//! Idempotent (a wrapped `e` is not wrapped again), so the printer writes
//! the plain `e` and the round trip gives the same IR.
//!
//! Must not know about: schedules, code generation.

use crate::ir::types::*;
use crate::poly::Aff;

/// Wraps the selection values of every equation of `sys` (see the module
/// comment).
pub(super) fn mark_selections(sys: &mut System) {
    for eq in 0..sys.equations.len() {
        let var = &sys.vars[sys.equations[eq].var];
        let target = Target {
            var: var.name.clone(),
            indices: sys.equations[eq].indices.clone(),
            domain: var.domain.clone(),
        };
        equation_level(&mut sys.equations[eq].expr, &target);
    }
}

/// The variable an equation defines: its name, its index names and domain.
struct Target {
    var: String,
    indices: Vec<String>,
    domain: crate::poly::Set,
}

/// Visits the reductions whose result space is the equation's.
fn equation_level(e: &mut Expr, t: &Target) {
    match &mut e.kind {
        ExprKind::Reduce(r) => {
            let r = &mut **r;
            let selects: Vec<Option<(usize, usize)>> = (0..r.proj.n_out())
                .map(|m| unit_row(&r.proj.rows()[m], r.proj.n_params()).map(|d| (m, d)))
                .collect();
            let mut body = std::mem::replace(&mut r.body, placeholder());
            in_body(&mut body, r, &selects, t);
            r.body = body;
        }
        // Their bodies live in spaces of their own.
        ExprKind::Categorical(_) => {}
        _ => e.for_each_child_mut(&mut |c| equation_level(c, t)),
    }
}

fn placeholder() -> Expr {
    Expr {
        kind: ExprKind::BoolConst(false),
        ty: crate::vocab::ElemType::Bool,
        span: Default::default(),
    }
}

/// `Some(d)` when the projection row (`[params, dims, 1]`) is the body
/// dimension `d` alone.
fn unit_row(row: &[i64], np: usize) -> Option<usize> {
    let (dims, rest) = row.get(np..)?.split_at(row.len().checked_sub(np + 1)?);
    if row[..np].iter().any(|&c| c != 0) || rest != [0] {
        return None;
    }
    let mut nz = dims.iter().enumerate().filter(|(_, &c)| c != 0);
    match (nz.next(), nz.next()) {
        (Some((d, 1)), None) => Some(d),
        _ => None,
    }
}

/// Wraps the selections in the conditions of the `if`s of a body (not in
/// nested reductions or `categorical` weights).
fn in_body(e: &mut Expr, r: &Reduction, selects: &[Option<(usize, usize)>], t: &Target) {
    match &mut e.kind {
        ExprKind::Reduce(_) | ExprKind::Categorical(_) => {}
        ExprKind::If(c, a, b) => {
            conjuncts(c, r, selects, t);
            in_body(c, r, selects, t);
            in_body(a, r, selects, t);
            in_body(b, r, selects, t);
        }
        _ => e.for_each_child_mut(&mut |c| in_body(c, r, selects, t)),
    }
}

/// Wraps `e` in the conjuncts `e == k` / `k == e` of the condition `c`.
fn conjuncts(c: &mut Expr, r: &Reduction, selects: &[Option<(usize, usize)>], t: &Target) {
    match &mut c.kind {
        ExprKind::Binary(BinOp::And, a, b) => {
            conjuncts(a, r, selects, t);
            conjuncts(b, r, selects, t);
        }
        ExprKind::Binary(BinOp::Eq, a, b) => {
            if let Some(m) = selected_index(a, b, selects) {
                wrap(b, m, r, t);
            } else if let Some(m) = selected_index(b, a, selects) {
                wrap(a, m, r, t);
            }
        }
        _ => {}
    }
}

/// `m` when `k` is the body dimension `d` that result dimension `m` takes
/// and `e` is a selection value for it (see the module comment).
fn selected_index(k: &Expr, e: &Expr, selects: &[Option<(usize, usize)>]) -> Option<usize> {
    let ExprKind::Index(a) = &k.kind else {
        return None;
    };
    let d = unit_row(a.row(), a.n_params())?;
    let (m, d) = selects.iter().flatten().copied().find(|&(_, x)| x == d)?;
    let ok = e.ty == crate::vocab::ElemType::Int
        && !matches!(e.kind, ExprKind::Selection(_))
        && reads_data(e)
        && plain_without(e, d);
    ok.then_some(m)
}

/// `e` reads an array.
fn reads_data(e: &Expr) -> bool {
    let mut found = matches!(
        e.kind,
        ExprKind::Read { .. } | ExprKind::IndirectRead { .. }
    );
    if !found {
        e.for_each_child(&mut |c| found |= reads_data(c));
    }
    found
}

/// `e` does not mention body dimension `d` and holds only reads, indices,
/// constants, operators, `if` and built-ins.
fn plain_without(e: &Expr, d: usize) -> bool {
    let here = match &e.kind {
        ExprKind::IntConst(_) | ExprKind::FloatConst(_) | ExprKind::BoolConst(_) => true,
        ExprKind::Index(a) => a.dim_coeffs().get(d).is_none_or(|&c| c == 0),
        ExprKind::Read { access, .. } => {
            let col = access.n_params() + d;
            access
                .rows()
                .iter()
                .all(|row| row.get(col).is_none_or(|&c| c == 0))
        }
        ExprKind::IndirectRead { .. }
        | ExprKind::Unary(..)
        | ExprKind::Binary(..)
        | ExprKind::If(..)
        | ExprKind::Builtin(..) => true,
        _ => false,
    };
    let mut ok = here;
    if ok {
        e.for_each_child(&mut |c| ok &= plain_without(c, d));
    }
    ok
}

/// Replaces `e` by its selection wrapper for result dimension `m`, when the
/// variable's domain has an affine box in that dimension.
fn wrap(e: &mut Expr, m: usize, r: &Reduction, t: &Target) {
    let Ok(Some((lo, hi))) = t.domain.dim_range(m) else {
        return;
    };
    let space = r.body_domain.space().clone();
    let np = space.n_params();
    let nd = r.body_domain.n_dims();
    if lo.len() != np + 1 || t.domain.n_params() != np {
        return;
    }
    // In the canonical form of lowering: an `Index`, or an `IntConst`
    // when no parameter appears.
    let bound = |b: &[i64]| -> Option<Expr> {
        let kind = if b[..np].iter().all(|&c| c == 0) {
            ExprKind::IntConst(b[np])
        } else {
            let mut row = b[..np].to_vec();
            row.extend(std::iter::repeat_n(0, nd));
            row.push(b[np]);
            ExprKind::Index(Aff::new(space.clone(), row).ok()?)
        };
        Some(Expr {
            kind,
            ty: crate::vocab::ElemType::Int,
            span: e.span,
        })
    };
    let (Some(lower), Some(upper)) = (bound(&lo), bound(&hi)) else {
        return;
    };
    let value = std::mem::replace(e, placeholder());
    let span = value.span;
    *e = Expr {
        kind: ExprKind::Selection(Box::new(Selection {
            value,
            lower,
            upper,
            var: t.var.clone(),
            index: t.indices.get(m).cloned().unwrap_or_else(|| format!("#{m}")),
        })),
        ty: crate::vocab::ElemType::Int,
        span,
    };
}
