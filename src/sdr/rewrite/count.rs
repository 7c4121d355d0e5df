//! The number of integer points on a line of a convex body domain, as an
//! IR integer expression of the other indices and the parameters.
//!
//! For a basic set `P` and a dimension `d`, write every inequality of `P`
//! that involves `y_d` as `w·y_d + rest(y') >= 0` (`y'`: the other
//! dimensions and the parameters). A row with `w = b > 0` is the lower
//! bound `y_d >= ⌈−rest/b⌉ = −⌊rest/b⌋`, a row with `w = −a < 0` the upper
//! bound `y_d <= ⌊rest/a⌋`. So for every `y'` with at least one point on
//! its line (every `y'` of the exact integer projection of `P` along `d`),
//!
//! ```text
//! count(y') = #{ y_d : (y', y_d) ∈ P }
//!           = min_upper ⌊rest_u / a_u⌋ + min_lower ⌊rest_l / b_l⌋ + 1   (>= 1)
//! ```
//!
//! (no `max(0, ·)` is needed where the line is not empty). `⌊e / a⌋` with a
//! coefficient `a` dividing every non-constant coefficient of `e` is the
//! affine `e/a` with the constant floored; otherwise it is written with the
//! IR's truncating operators as `(e − ((e % a + a) % a)) / a`, exact for
//! every sign of `e`.

use super::super::SdrError;
use crate::diag::Span;
use crate::ir::*;
use crate::poly::BasicSet;

/// The count expression of the line along dimension `d` of the basic set
/// `piece` (see the module comment), over `space` (the piece's space with
/// dimension `d` removed), with a readable form for reports. `None` when
/// `y_d` appears in an equality of `piece` (a line of at most one point:
/// nothing to count) or lacks a lower or an upper bound.
pub fn line_count(
    piece: &BasicSet,
    d: usize,
    space: &Space,
    span: Span,
) -> Result<Option<(Expr, String)>, SdrError> {
    let np = space.n_params();
    let col = np + d;
    if piece.eqs().iter().any(|r| r[col] != 0) {
        return Ok(None);
    }
    let mut upper: Vec<(Aff, i64)> = Vec::new();
    let mut lower: Vec<(Aff, i64)> = Vec::new();
    for r in piece.ineqs() {
        let w = r[col];
        if w == 0 {
            continue;
        }
        let rest: Vec<i64> = r
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != col)
            .map(|(_, &c)| c)
            .collect();
        let rest = Aff::new(space.clone(), rest)?;
        let a = w.checked_abs().ok_or(crate::poly::PolyError::Overflow)?;
        if w < 0 {
            upper.push((rest, a));
        } else {
            lower.push((rest, a));
        }
    }
    if upper.is_empty() || lower.is_empty() {
        return Ok(None);
    }
    let names: Vec<String> = space.output.dims.to_vec();
    let params = space.params.clone();
    let (u, u_txt) = min_of_floors(&upper, &names, &params, span)?;
    let (l, l_txt) = min_of_floors(&lower, &names, &params, span)?;
    let text = format!("{u_txt} + {l_txt} + 1");
    // Fold into one affine expression when both sides are affine.
    if let (ExprKind::Index(ua), ExprKind::Index(la)) = (&u.kind, &l.kind) {
        let mut sum = ua.add_scaled(1, la)?;
        let c = sum.constant_term_mut();
        *c = c.checked_add(1).ok_or(crate::poly::PolyError::Overflow)?;
        let text = crate::ir::print::aff_to_alpha(&sum, &names, &params);
        return Ok(Some((int_index(sum, span), text)));
    }
    // One side constant: add it (and the 1) to the other.
    let sum = match (&u.kind, &l.kind) {
        (ExprKind::IntConst(c), _) => plus_const(l, *c, span)?,
        (_, ExprKind::IntConst(c)) => plus_const(u, *c, span)?,
        _ => bin(BinOp::Add, bin(BinOp::Add, u, l, span), int(1, span), span),
    };
    Ok(Some((sum, text)))
}

/// `e + c + 1` with the constants folded.
fn plus_const(e: Expr, c: i64, span: Span) -> Result<Expr, SdrError> {
    let k = c.checked_add(1).ok_or(crate::poly::PolyError::Overflow)?;
    Ok(match k {
        0 => e,
        k if k < 0 => {
            let m = k.checked_neg().ok_or(crate::poly::PolyError::Overflow)?;
            bin(BinOp::Sub, e, int(m, span), span)
        }
        k => bin(BinOp::Add, e, int(k, span), span),
    })
}

/// `min_k ⌊e_k / a_k⌋` and its text.
fn min_of_floors(
    terms: &[(Aff, i64)],
    names: &[String],
    params: &[String],
    span: Span,
) -> Result<(Expr, String), SdrError> {
    let mut exprs = Vec::with_capacity(terms.len());
    let mut texts = Vec::with_capacity(terms.len());
    for (e, a) in terms {
        let (x, t) = floor_div(e, *a, names, params, span)?;
        exprs.push(x);
        texts.push(t);
    }
    if exprs.len() == 1 {
        let (Some(x), Some(t)) = (exprs.pop(), texts.pop()) else {
            return Err(SdrError::Internal("count: no bound".into()));
        };
        return Ok((x, t));
    }
    let text = format!("min({})", texts.join(", "));
    Ok((
        Expr {
            kind: ExprKind::Builtin(Builtin::Min, exprs),
            ty: ElemType::Int,
            span,
        },
        text,
    ))
}

/// `⌊e / a⌋` for `a >= 1` (see the module comment) and its text.
fn floor_div(
    e: &Aff,
    a: i64,
    names: &[String],
    params: &[String],
    span: Span,
) -> Result<(Expr, String), SdrError> {
    let row = e.row();
    let n = row.len() - 1;
    if row[..n].iter().all(|c| c % a == 0) {
        let mut q: Vec<i64> = row[..n].iter().map(|c| c / a).collect();
        q.push(row[n].div_euclid(a));
        let q = Aff::new(e.space().clone(), q)?;
        let text = crate::ir::print::aff_to_alpha(&q, names, params);
        return Ok((int_index(q, span), text));
    }
    let text = format!(
        "floor(({}) / {a})",
        crate::ir::print::aff_to_alpha(e, names, params)
    );
    let x = || int_index(e.clone(), span);
    let ka = || int(a, span);
    // ((e % a) + a) % a  is  e mod a  in [0, a)
    let m = bin(
        BinOp::Rem,
        bin(BinOp::Add, bin(BinOp::Rem, x(), ka(), span), ka(), span),
        ka(),
        span,
    );
    let q = bin(BinOp::Div, bin(BinOp::Sub, x(), m, span), ka(), span);
    Ok((q, text))
}

/// The int expression of an affine function (an `IntConst` when constant,
/// the IR's canonical form).
pub fn int_index(a: Aff, span: Span) -> Expr {
    let kind = match a.as_constant() {
        Some(c) => ExprKind::IntConst(c),
        None => ExprKind::Index(a),
    };
    Expr {
        kind,
        ty: ElemType::Int,
        span,
    }
}

fn int(v: i64, span: Span) -> Expr {
    Expr {
        kind: ExprKind::IntConst(v),
        ty: ElemType::Int,
        span,
    }
}

fn bin(op: BinOp, a: Expr, b: Expr, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
        ty: ElemType::Int,
        span,
    }
}
