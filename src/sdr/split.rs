//! Splitting a reduction's body domain along a hyperplane (index-set
//! splitting; Narmour, Yuki and Rajopadhye, POPL 2025, section 4).
//!
//! For `X[x] = ⊕ { E(y) : y ∈ P, proj(y) = x }` and an affine form `h(y)`
//! over the parameters and the body indices (a row `[params.., dims..,
//! const]` of the body space), write `P⁺ = P ∩ {h ≥ 0}` and `P⁻ = P ∩ {h ≤
//! −1}`. Every integer point of `P` is in exactly one of them (`h` is an
//! integer on integer points), so for every `x`
//!
//! ```text
//! X[x] = (⊕ { E(y) : y ∈ P⁺, proj(y) = x }) ⊕ (⊕ { E(y) : y ∈ P⁻, proj(y) = x })
//! ```
//!
//! where an empty slice is the operator's identity. This needs only
//! associativity and commutativity of `⊕`, which every reduction operator
//! has.
//!
//! When `h` is constant on the projection's fibres (its linear part lies in
//! the row space of the projection's: `t·h(y) = g(proj(y))` with `t > 0`
//! and `g` affine over the parameters and the result indices), every slice
//! lies entirely on one side, and the split is a split of the *result*
//! domain instead: `X = case { g(x) ≥ 0 : X⁺[x]; g(x) ≤ −1 : X⁻[x] }`, each
//! piece defined only where it is used. This is the form that lets a piece
//! be simplified without an inverse: the new facet `g ≥ 0` is a boundary of
//! the piece's result domain, so the reuse direction may cross it without
//! a subtraction (POPL 2025, "strict boundary" facets).
//!
//! Owns: the geometry of a split ([`split_body`], [`along_result`]), the
//! program rewrite ([`build`], [`split_equation`]) and the text of a
//! hyperplane in decisions ([`hyperplane_text`]). Choosing *which*
//! hyperplane is `maximal`'s job.

use super::normalize::{combine, fresh_name, identity_read, used_names};
use super::{Decision, DecisionKind, SdrError};
use crate::diag::Span;
use crate::ir::*;
use crate::poly::solver::integer_kernel;
use crate::poly::{BasicSet, PolyError};
use std::collections::HashSet;

/// The two sides of a split body domain.
#[derive(Debug, Clone)]
pub struct Split {
    /// The hyperplane `h` (a row over `[params.., body dims.., const]`).
    pub h: Vec<i64>,
    /// `P ∩ {h ≥ 0}` and `P ∩ {h ≤ −1}`, both non-empty.
    pub sides: [Set; 2],
    /// When `h` is constant on the projection's fibres: `g` over
    /// `[params.., result dims.., const]` with `t·h(y) = g(proj(y))`,
    /// `t > 0` (see [`along_result`]).
    pub result_row: Option<Vec<i64>>,
}

fn overflow() -> SdrError {
    SdrError::Poly(PolyError::Overflow)
}

fn mul(a: i64, b: i64) -> Result<i64, SdrError> {
    a.checked_mul(b).ok_or_else(overflow)
}

fn sub(a: i64, b: i64) -> Result<i64, SdrError> {
    a.checked_sub(b).ok_or_else(overflow)
}

/// `−h − 1` (the row of `h ≤ −1` as `−h − 1 ≥ 0`).
fn below(h: &[i64]) -> Result<Vec<i64>, SdrError> {
    let mut r: Vec<i64> = h
        .iter()
        .map(|&c| c.checked_neg().ok_or_else(overflow))
        .collect::<Result<_, _>>()?;
    if let Some(c) = r.last_mut() {
        *c = sub(*c, 1)?;
    }
    Ok(r)
}

/// The half-space `{ y : row(y) ≥ 0 }` in `space`.
fn half_space(space: &Space, row: Vec<i64>) -> Result<Set, SdrError> {
    let mut b = BasicSet::universe(space.clone());
    b.add_ineq(row)?;
    Ok(Set::from_basic(b))
}

/// Splits the body domain `body` along `h`: `Some([P⁺, P⁻])` when both
/// sides have an integer point for some parameter value of `context` (a
/// parameter set), `None` when the split is trivial (one side empty).
pub fn split_body(body: &Set, h: &[i64], context: &Set) -> Result<Option<[Set; 2]>, SdrError> {
    let space = body.space().clone();
    if h.len() != space.n_params() + space.n_dims() + 1 {
        return Err(SdrError::Internal(format!(
            "a split hyperplane has {} coefficients for a space of {} parameters and {} indices",
            h.len(),
            space.n_params(),
            space.n_dims()
        )));
    }
    let pos = body
        .intersect(&half_space(&space, h.to_vec())?)?
        .simplify()?;
    let neg = body
        .intersect(&half_space(&space, below(h)?)?)?
        .simplify()?;
    for side in [&pos, &neg] {
        if side.intersect_params(context)?.is_empty()? {
            return Ok(None);
        }
    }
    Ok(Some([pos, neg]))
}

/// `g` with `t·h(y) = g(proj(y))` for some `t > 0`, when `h` is constant
/// on the fibres of `proj` (its linear part is a rational combination
/// `μ·F` of the projection's linear rows `F`); `None` otherwise. With
/// `proj(y) = F·y + G·p + g₀`: `g = [t·h_p − μ·G, μ, t·h₀ − μ·g₀]`.
pub fn along_result(proj: &MultiAff, h: &[i64]) -> Result<Option<Vec<i64>>, SdrError> {
    let np = proj.n_params();
    let n = proj.n_in();
    let rows = proj.rows();
    let nx = rows.len();
    // Unknowns (μ_0..μ_{nx-1}, t): Σ μ_k F_k[c] − t·h[c] = 0 per index c.
    let eqs: Vec<Vec<i64>> = (0..n)
        .map(|c| {
            let mut e: Vec<i64> = rows.iter().map(|r| r[np + c]).collect();
            e.push(-h[np + c]);
            e
        })
        .collect();
    let kernel = integer_kernel(&eqs, nx + 1)?;
    let Some(v) = kernel.iter().find(|v| v[nx] != 0) else {
        return Ok(None);
    };
    let sign = v[nx].signum();
    let mu: Vec<i64> = v[..nx].iter().map(|&m| m * sign).collect();
    let t = v[nx] * sign;
    let mut g = Vec::with_capacity(np + nx + 1);
    for p in 0..np {
        let mut c = mul(t, h[p])?;
        for (k, r) in rows.iter().enumerate() {
            c = sub(c, mul(mu[k], r[p])?)?;
        }
        g.push(c);
    }
    g.extend(mu.iter().copied());
    let mut c0 = mul(t, h[np + n])?;
    for (k, r) in rows.iter().enumerate() {
        c0 = sub(c0, mul(mu[k], r[np + n])?)?;
    }
    g.push(c0);
    crate::poly::linalg::normalize_row(&mut g);
    Ok(Some(g))
}

/// `h ≥ 0` in isl-like notation over the names of `space` (for example
/// `2i <= N` written as `N - 2i >= 0` around its last variable).
pub fn hyperplane_text(space: &Space, h: &[i64]) -> String {
    let mut names: Vec<String> = space.params.to_vec();
    names.extend(space.output.dims.iter().cloned());
    let c = crate::poly::print::fmt_constraint(h, false, &names);
    format!(
        "{} -> {{ [{}] : {c} }}",
        fmt_params(space),
        space.output.dims.join(", ")
    )
}

fn fmt_params(space: &Space) -> String {
    format!("[{}]", space.params.join(", "))
}

/// The split of reduction `red` (the right-hand side of `target`) along
/// `h`, or `None` when trivial: the two sides and, when `h` is constant on
/// the projection's fibres, the result-domain form.
pub fn plan(red: &Reduction, h: &[i64], context: &Set) -> Result<Option<Split>, SdrError> {
    let Some(sides) = split_body(&red.body_domain, h, context)? else {
        return Ok(None);
    };
    Ok(Some(Split {
        h: h.to_vec(),
        sides,
        result_row: along_result(&red.proj, h)?,
    }))
}

/// The locals a split created (declared, not yet defined): each with its
/// piece's reduction, to be defined (or simplified first) by the caller.
pub struct Built {
    /// The new right-hand side of the split variable.
    pub expr: Expr,
    /// `(local, its reduction, its index names)`.
    pub pieces: Vec<(VarId, Reduction, Vec<String>)>,
}

/// Fresh names and the record of what each new local came from.
pub struct Names<'a> {
    pub used: &'a mut HashSet<String>,
    pub born: &'a mut Vec<(String, String)>,
}

/// Declares the pieces of `split` for `target[x] = reduce(red)` (of type
/// `ty`) as new locals `target_split`, `target_split2` and returns the
/// combining expression: `X⁺[x] ⊕ X⁻[x]` over the whole result domain, or
/// `case { g ≥ 0 : X⁺[x]; g ≤ −1 : X⁻[x] }` (each local defined only on its
/// part) when the split is along the result (see the module comment).
pub fn build(
    s: &mut System,
    target: VarId,
    red: &Reduction,
    ty: ElemType,
    span: Span,
    split: &Split,
    names: Names<'_>,
) -> Result<Built, SdrError> {
    let x_names = s
        .equation_of(target)
        .map(|e| e.indices.clone())
        .unwrap_or_else(|| s.vars[target].domain.dims().to_vec());
    let x_space = Space::set(&s.params, &x_names);
    let d_x = s.vars[target].domain.renamed(x_space.clone())?;
    let base = s.vars[target].name.clone();
    let domains: [Set; 2] = match &split.result_row {
        Some(g) => [
            d_x.intersect(&half_space(&x_space, g.clone())?)?
                .simplify()?,
            d_x.intersect(&half_space(&x_space, below(g)?)?)?
                .simplify()?,
        ],
        None => [d_x.clone(), d_x.clone()],
    };
    let mut pieces = Vec::with_capacity(2);
    let mut reads = Vec::with_capacity(2);
    for (side, domain) in split.sides.iter().zip(domains) {
        let name = fresh_name(names.used, &base, "split");
        names.born.push((name.clone(), base.clone()));
        s.vars.push(Variable {
            name,
            kind: VarKind::Local,
            ty,
            domain: domain.clone(),
            span,
        });
        let id = s.vars.len() - 1;
        let piece = Reduction {
            body_domain: side.clone(),
            ..red.clone()
        };
        pieces.push((id, piece, x_names.clone()));
        reads.push((domain, identity_read(id, &x_space, ty, span)?));
    }
    let expr = if split.result_row.is_some() {
        let parts: Vec<(Set, Expr)> = reads
            .into_iter()
            .filter_map(|(d, e)| match d.is_empty() {
                Ok(true) => None,
                Ok(false) => Some(Ok((d, e))),
                Err(err) => Some(Err(err)),
            })
            .collect::<Result<_, _>>()?;
        Expr {
            kind: ExprKind::Case(parts),
            ty,
            span,
        }
    } else {
        let mut it = reads.into_iter().map(|(_, e)| e);
        match (it.next(), it.next()) {
            (Some(a), Some(b)) => combine(red.op, a, b, ty),
            _ => return Err(SdrError::Internal("a split without two sides".into())),
        }
    };
    Ok(Built { expr, pieces })
}

/// The split transformation on its own: rewrites equation number `eq` of
/// `s` (whose right-hand side must be a reduction, as after
/// `normalize`) along `h` (over the reduction's body space), defining each
/// piece as a plain reduction. Returns the decision (declined, with the
/// reason, when one side is empty or the equation is not a reduction).
pub fn split_equation(s: &mut System, eq: usize, h: &[i64]) -> Result<Decision, SdrError> {
    let Some(equation) = s.equations.get(eq) else {
        return Err(SdrError::Internal(format!("no equation number {eq}")));
    };
    let target = equation.var;
    let var_name = s.vars[target].name.clone();
    let ExprKind::Reduce(red) = &equation.expr.kind else {
        return Ok(Decision::new(
            &s.name,
            &var_name,
            DecisionKind::Split,
            false,
            "not a reduction",
        ));
    };
    let red = (**red).clone();
    let (ty, span) = (equation.expr.ty, equation.expr.span);
    let detail = hyperplane_text(red.body_domain.space(), h);
    let Some(split) = plan(&red, h, &s.context)? else {
        return Ok(Decision {
            detail,
            ..Decision::new(
                &s.name,
                &var_name,
                DecisionKind::Split,
                false,
                "one side of the hyperplane is empty",
            )
        });
    };
    let mut used = used_names(s);
    let mut born = Vec::new();
    let built = build(
        s,
        target,
        &red,
        ty,
        span,
        &split,
        Names {
            used: &mut used,
            born: &mut born,
        },
    )?;
    s.equations[eq].expr = built.expr;
    for (id, piece, indices) in built.pieces {
        s.equations.push(Equation {
            var: id,
            indices,
            span,
            expr: Expr {
                kind: ExprKind::Reduce(Box::new(piece)),
                ty,
                span,
            },
        });
    }
    s.number_reductions();
    let form = if split.result_row.is_some() {
        "result domain split (case)"
    } else {
        "body split, pieces combined with the operator"
    };
    Ok(Decision {
        detail,
        ..Decision::new(&s.name, &var_name, DecisionKind::Split, true, form)
    })
}
