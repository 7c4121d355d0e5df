//! Reductions read only at data-selected points, computed at those points
//! alone.
//!
//! Let `R[x] = ⊕ { E(x, r) : (x, r) ∈ P }` be a local (the projection
//! keeps `x`, `P` one convex piece) whose every read is an indirect read
//! `R[a(c)]`, some coordinates of `a` data-dependent (`nt[z[dd], dd]`,
//! `Lw[kp[dd], dd]`). A table of `R` over all of `D_R` then computes
//! values nobody reads: a sampler needs `R` at one label per step, not at
//! all `K`. For each distinct access `a` (the same index expressions,
//! spans aside, in one equation and one read context `C`), a new local
//!
//! `R_a[c] = ⊕ { if (a(c), r) ∈ P then E(a(c), r) else id : (c, r) ∈ P_a }`
//!
//! over `C`, with `P_a = { (c, r) : c ∈ C, (a(c), r) ∈ P for some values
//! of the labels }` (`P` pulled back through the affine coordinates, the
//! labels projected out: a rational shadow, a superset that the guard
//! cuts back) and the constraints of `P` that involve a label tested in
//! the body (each with a coefficient ±1 on its single label `e`, as the
//! comparison `e ⋈ bound(c, r)`, like `selected`), replaces the reads:
//! `R[a(c)]` becomes `R_a[c]`.
//!
//! Exact, when:
//! 1. every read is provably inside `D_R` (`known::inside`: under its
//!    guards, or by the range of a `categorical` label), so no run-time
//!    domain check is lost;
//! 2. every data-dependent coordinate is an affine read (it cannot fail,
//!    and `R_a` evaluates it at every point of `C`, also where the reader
//!    does not), and `E` has no indirect read, draw, `categorical`, nested
//!    reduction or external call (under the guard `E` is evaluated at a
//!    point of `P`, as the table of `R` evaluated it);
//! 3. then at every `c` where the read is evaluated, `(a(c), r) ∈ P`
//!    exactly when `(c, r) ∈ P_a` and the guard holds, so `R_a[c]` folds
//!    the same body values in the same order of `r` as `R[a(c)]`, with the
//!    identity at the other points of `P_a` (`v ⊕ id = v`; for float `+`
//!    only the sign of a zero may change).
//!
//! The rewritten system must pass the IR's domain checks (affine reads of
//! `E` inside their variables' domains over `P_a`), and it is kept only
//! when it is cheaper: `Σ_a |P_a|` strictly below `|P|` asymptotically
//! (`poly::complexity`).

use super::super::normalize::{fresh_name, identity_read, used_names};
use super::super::rewrite::coordinate_projection;
use super::super::rewrite::subst::{is_opaque, pullback};
use super::super::{DecisionKind, SdrError};
use super::empty::drop_param_constraints;
use super::known::{inside, rewrite_reads_known, same, walk_reads_known, Known};
use super::reads::read_var;
use super::subst::{substitute, Access, Coord};
use super::{eq_domain, identity_const, not_worse, reads_var, Cx};
use crate::ir::*;
use crate::poly::complexity::{complexity, Complexity};

/// Specializes every candidate local (see the module comment); `born`
/// gets `(new, R)` for every variable made.
pub(crate) fn run(
    cx: &mut Cx,
    s: &mut System,
    born: &mut Vec<(String, String)>,
) -> Result<(), SdrError> {
    let mut x = 0;
    while x < s.vars.len() {
        if candidate(s, x) {
            let name = s.vars[x].name.clone();
            let res = try_specialize(s, x);
            match cx.declined_on_poly(&name, DecisionKind::Specialize, res)? {
                Some(Ok((next, made, detail))) => {
                    *s = *next;
                    born.extend(made.into_iter().map(|m| (m, name.clone())));
                    cx.decide(&name, DecisionKind::Specialize, true, "applied", detail);
                }
                Some(Err(reason)) => {
                    cx.decide(
                        &name,
                        DecisionKind::Specialize,
                        false,
                        &reason,
                        String::new(),
                    );
                }
                None => {}
            }
        }
        x += 1;
    }
    Ok(())
}

/// A local defined by a reduction, not reading itself, with at least one
/// indirect read elsewhere.
fn candidate(s: &System, x: VarId) -> bool {
    if s.vars[x].kind != VarKind::Local {
        return false;
    }
    let Some(eq) = s.equation_of(x) else {
        return false;
    };
    matches!(eq.expr.kind, ExprKind::Reduce(_))
        && !reads_var(&eq.expr, x)
        && s.equations
            .iter()
            .any(|e| e.var != x && reads_indirectly(&e.expr, x))
}

/// `e` has an indirect read of `x`.
fn reads_indirectly(e: &Expr, x: VarId) -> bool {
    let mut found = matches!(&e.kind, ExprKind::IndirectRead { var, .. } if *var == x);
    if !found {
        e.for_each_child(&mut |c| found |= reads_indirectly(c, x));
    }
    found
}

/// `e` has an indirect read or an external call.
fn has_indirect_or_external(e: &Expr) -> bool {
    let mut found = matches!(
        e.kind,
        ExprKind::IndirectRead { .. } | ExprKind::External(..)
    );
    if !found {
        e.for_each_child(&mut |c| found |= has_indirect_or_external(c));
    }
    found
}

/// The reads of `R` sharing one specialized variable: the reader's
/// equation, the read context and the index expressions.
struct Group {
    eq: usize,
    ctx: Set,
    indices: Vec<Expr>,
}

impl Group {
    fn matches(&self, eq: usize, ctx: &Set, indices: &[Expr]) -> Result<bool, SdrError> {
        Ok(self.eq == eq
            && self.indices.len() == indices.len()
            && self.indices.iter().zip(indices).all(|(a, b)| same(a, b))
            && self.ctx.space() == ctx.space()
            && self.ctx.is_equal(ctx)?)
    }
}

/// What specializing `R` gave: the new system, the new variables' names
/// and the decision detail.
type Specialized = (Box<System>, Vec<String>, String);

/// Examines the local `x` (see the module comment).
fn try_specialize(s: &System, x: VarId) -> Result<Result<Specialized, String>, SdrError> {
    let Some(eq_x) = s.equations.iter().position(|e| e.var == x) else {
        return Ok(Err("no equation".into()));
    };
    let ExprKind::Reduce(r) = &s.equations[eq_x].expr.kind else {
        return Ok(Err("not a reduction".into()));
    };
    let nx = s.vars[x].domain.n_dims();
    if coordinate_projection(&r.proj) != Some((0..nx).collect()) {
        return Ok(Err(
            "the projection does not keep the leading indices".into()
        ));
    }
    if is_opaque(&r.body) || has_indirect_or_external(&r.body) {
        return Ok(Err(
            "the body has an indirect read, a draw, a nested reduction or an external call".into(),
        ));
    }
    if r.body_domain.pieces().len() != 1 {
        return Ok(Err("the body domain is not one convex piece".into()));
    }
    let d_x = eq_domain(s, &s.equations[eq_x])?;
    // the groups of reads, and the first reason to refuse
    let mut groups: Vec<Group> = Vec::new();
    let mut refusal: Option<String> = None;
    for (k, eq) in s.equations.iter().enumerate() {
        if k == eq_x || !reads_var(&eq.expr, x) {
            continue;
        }
        let ctx = eq_domain(s, eq)?;
        walk_reads_known(&eq.expr, &ctx, &Known::default(), &mut |e, c, known| {
            if read_var(e) != Some(x) || refusal.is_some() {
                return Ok(());
            }
            let ExprKind::IndirectRead { indices, .. } = &e.kind else {
                refusal = Some(format!("an affine read in {}", s.vars[eq.var].name));
                return Ok(());
            };
            let Some(access) = Access::of_read(e, c.space())? else {
                return Err(SdrError::Internal("not a read".into()));
            };
            let plain = access.coords.iter().all(|co| match co {
                Coord::Affine(_) => true,
                Coord::Data(d) => matches!(d.kind, ExprKind::Read { .. }),
            });
            if access.n_data() == 0 || !plain {
                refusal = Some("an index that is not an affine read of a label".into());
                return Ok(());
            }
            if !inside(s, e, c, known, &d_x)? {
                refusal = Some("a read not known to be inside the domain".into());
                return Ok(());
            }
            for g in &groups {
                if g.matches(k, c, indices)? {
                    return Ok(());
                }
            }
            groups.push(Group {
                eq: k,
                ctx: c.clone(),
                indices: indices.clone(),
            });
            Ok(())
        })?;
    }
    if let Some(reason) = refusal {
        return Ok(Err(reason));
    }
    let mut new_eqs = Vec::with_capacity(groups.len());
    let mut cost = Complexity::new(s.params.clone(), Vec::new());
    for g in &groups {
        match specialized(s, x, r, g)? {
            Ok(e) => {
                let ExprKind::Reduce(rs) = &e.kind else {
                    return Err(SdrError::Internal("specialized: not a reduction".into()));
                };
                cost = cost.add(&complexity(&rs.body_domain.intersect_params(&s.context)?)?)?;
                new_eqs.push(e);
            }
            Err(reason) => return Ok(Err(reason)),
        }
    }
    let old = complexity(&r.body_domain.intersect_params(&s.context)?)?;
    if !not_worse(&cost, &old) || not_worse(&old, &cost) {
        return Ok(Err(format!(
            "computing it at the points read costs {cost}, the table {old}"
        )));
    }
    // the new system
    let mut out = s.clone();
    let mut used = used_names(s);
    let mut made = Vec::with_capacity(groups.len());
    let mut ids = Vec::with_capacity(groups.len());
    for (g, rhs) in groups.iter().zip(new_eqs) {
        let name = fresh_name(&mut used, &s.vars[x].name, "at");
        let indices = g.ctx.dims().to_vec();
        out.vars.push(Variable {
            name: name.clone(),
            kind: VarKind::Local,
            ty: s.vars[x].ty,
            domain: drop_param_constraints(&g.ctx)?.simplify()?,
            span: s.vars[x].span,
        });
        let var = out.vars.len() - 1;
        out.equations.push(Equation {
            var,
            indices,
            expr: rhs,
            span: s.equations[eq_x].span,
        });
        made.push(name);
        ids.push(var);
    }
    for (k, eq) in s.equations.iter().enumerate() {
        if k == eq_x || !reads_var(&eq.expr, x) {
            continue;
        }
        let ctx = eq_domain(s, eq)?;
        let mut expr = eq.expr.clone();
        rewrite_reads_known(&mut expr, &ctx, &Known::default(), &mut |e, c, _| {
            if read_var(e) != Some(x) {
                return Ok(());
            }
            let ExprKind::IndirectRead { indices, .. } = &e.kind else {
                return Err(SdrError::Internal("specialize: an affine read".into()));
            };
            for (g, &var) in groups.iter().zip(&ids) {
                if g.matches(k, c, indices)? {
                    *e = identity_read(var, c.space(), e.ty, e.span)?;
                    return Ok(());
                }
            }
            Err(SdrError::Internal("specialize: a read in no group".into()))
        })?;
        out.equations[k].expr = expr;
    }
    out.number_reductions();
    let check = Program {
        constants: Vec::new(),
        externals: Vec::new(),
        systems: vec![out.clone()],
    };
    let errors = check_domains(&check);
    if !errors.is_empty() {
        return Ok(Err(format!(
            "the specialized reductions fail the domain checks ({} errors)",
            errors.len()
        )));
    }
    let reads: Vec<String> = groups
        .iter()
        .map(|g| {
            let idx: Vec<String> = g
                .indices
                .iter()
                .map(|e| super::super::rewrite::expr_text(e, s))
                .collect();
            format!(
                "[{}] in {}",
                idx.join(", "),
                s.vars[s.equations[g.eq].var].name
            )
        })
        .collect();
    let detail = format!(
        "as {} at {}: cost {cost} instead of {old}",
        made.join(", "),
        reads.join("; ")
    );
    Ok(Ok((Box::new(out), made, detail)))
}

/// The IR's domain checks of a program.
fn check_domains(p: &Program) -> Vec<crate::diag::Diagnostic> {
    crate::ir::check_domains::check_program(p)
}

/// The right-hand side of the specialized variable of group `g` (see the
/// module comment), or the reason it cannot be built.
fn specialized(
    s: &System,
    x: VarId,
    r: &Reduction,
    g: &Group,
) -> Result<Result<Expr, String>, SdrError> {
    let y = g.ctx.space().clone();
    let ny = y.n_dims();
    let nx = s.vars[x].domain.n_dims();
    let n = r.body_domain.n_dims();
    // the body space (c, r), the reduced indices named apart
    let mut names: Vec<String> = y.output.dims.to_vec();
    let mut taken: std::collections::HashSet<String> =
        names.iter().chain(&s.params).cloned().collect();
    for d in &r.dims()[nx..] {
        let name = if taken.insert(d.clone()) {
            d.clone()
        } else {
            fresh_name(&mut taken, d, "r")
        };
        names.push(name);
    }
    let b = Space::set(&s.params, &names);
    let drop_r = MultiAff::from_affs(
        b.clone(),
        &(0..ny).map(|k| Aff::dim(b.clone(), k)).collect::<Vec<_>>(),
    )?;
    // the access (c, r) ↦ (a(c), r), and its affine part (data
    // coordinates at 0)
    let mut coords = Vec::with_capacity(n);
    let mut affine_part = Vec::with_capacity(n);
    let mut data: Vec<Option<Expr>> = Vec::with_capacity(nx);
    let access_y = Access::of_read(
        &Expr {
            kind: ExprKind::IndirectRead {
                var: x,
                indices: g.indices.clone(),
            },
            ty: s.vars[x].ty,
            span: Default::default(),
        },
        &y,
    )?
    .ok_or_else(|| SdrError::Internal("specialize: not a read".into()))?;
    for c in &access_y.coords {
        match c {
            Coord::Affine(a) => {
                let a = a.pullback(&drop_r)?;
                coords.push(Coord::Affine(a.clone()));
                affine_part.push(a);
                data.push(None);
            }
            Coord::Data(e) => {
                let Some(e) = pullback(e, &drop_r)? else {
                    return Ok(Err("a label cannot be moved".into()));
                };
                coords.push(Coord::Data(e.clone()));
                affine_part.push(Aff::zero(b.clone()));
                data.push(Some(e));
            }
        }
    }
    for j in nx..n {
        let a = Aff::dim(b.clone(), ny + j - nx);
        coords.push(Coord::Affine(a.clone()));
        affine_part.push(a);
    }
    let access = Access {
        space: b.clone(),
        coords,
    };
    let g_aff = MultiAff::from_affs(b.clone(), &affine_part)?;
    let Some(body) = substitute(&r.body, &access)? else {
        return Ok(Err("the body cannot be moved through the access".into()));
    };
    let [piece] = r.body_domain.pieces() else {
        return Ok(Err("the body domain is not one convex piece".into()));
    };
    let p_space = r.body_domain.space().clone();
    let span = r.body.span;
    let mut atoms = Vec::new();
    for (list, is_eq) in [(piece.eqs(), true), (piece.ineqs(), false)] {
        for row in list {
            let mut phi = Aff::new(p_space.clone(), row.to_vec())?;
            let hits: Vec<usize> = (0..nx)
                .filter(|&i| data[i].is_some() && phi.dim_coeffs()[i] != 0)
                .collect();
            match hits.as_slice() {
                [] => {}
                [i] => {
                    let c = phi.dim_coeffs()[*i];
                    if c.abs() != 1 {
                        return Ok(Err("a coefficient other than ±1 on a label".into()));
                    }
                    phi.dim_coeffs_mut()[*i] = 0;
                    // c·e + φ ⋈ 0  ⟺  e ⋈' −c·φ
                    let bound = phi.pullback(&g_aff)?.scaled(-c)?;
                    let op = match (is_eq, c > 0) {
                        (true, _) => BinOp::Eq,
                        (false, true) => BinOp::Ge,
                        (false, false) => BinOp::Le,
                    };
                    let Some(label) = data[*i].clone() else {
                        return Err(SdrError::Internal("specialize: not a label".into()));
                    };
                    atoms.push(Expr {
                        kind: ExprKind::Binary(
                            op,
                            Box::new(label),
                            Box::new(Expr {
                                kind: ExprKind::Index(bound),
                                ty: ElemType::Int,
                                span,
                            }),
                        ),
                        ty: ElemType::Bool,
                        span,
                    });
                }
                _ => return Ok(Err("a constraint couples two labels".into())),
            }
        }
    }
    let domain = body_domain(r, &g.ctx, &b, &drop_r, &affine_part, &data)?;
    let body = match atoms.into_iter().reduce(super::selected::and) {
        Some(guard) => {
            let ty = body.ty;
            Expr {
                kind: ExprKind::If(
                    Box::new(guard),
                    Box::new(body),
                    Box::new(identity_const(r.op, ty, span)),
                ),
                ty,
                span,
            }
        }
        None => body,
    };
    let red = Reduction {
        id: r.id,
        op: r.op,
        proj: drop_r,
        body_domain: domain,
        body,
    };
    Ok(Ok(Expr {
        kind: ExprKind::Reduce(Box::new(red)),
        ty: s.vars[x].ty,
        span: s
            .equations
            .iter()
            .find(|e| e.var == x)
            .map_or(span, |e| e.expr.span),
    }))
}

/// `P_a`: the points `(c, r)` with `c ∈ C` and `(a(c), r) ∈ P` for some
/// value of the labels — `P` pulled back through the affine coordinates
/// with one free dimension per label, the labels projected out (a
/// rational shadow: a superset, which the guard in the body cuts back
/// to `P` exactly), without parameter-only constraints.
fn body_domain(
    r: &Reduction,
    ctx: &Set,
    b: &Space,
    drop_r: &MultiAff,
    affine_part: &[Aff],
    data: &[Option<Expr>],
) -> Result<Set, SdrError> {
    let nb = b.n_dims();
    let nq = data.iter().filter(|d| d.is_some()).count();
    let mut dims = b.output.dims.to_vec();
    dims.extend((0..nq).map(|q| format!("q{q}'")));
    let ext = Space::set(&b.params, &dims);
    // (c, r, q) ↦ (c, r): the affine coordinates pulled back along it
    let to_b = MultiAff::from_affs(
        ext.clone(),
        &(0..nb)
            .map(|k| Aff::dim(ext.clone(), k))
            .collect::<Vec<_>>(),
    )?;
    let mut q = 0;
    let mut affs = Vec::with_capacity(affine_part.len());
    for (k, a) in affine_part.iter().enumerate() {
        if data.get(k).is_some_and(Option::is_some) {
            affs.push(Aff::dim(ext.clone(), nb + q));
            q += 1;
        } else {
            affs.push(a.pullback(&to_b)?);
        }
    }
    let m = MultiAff::from_affs(ext, &affs)?;
    let (shadow, _) = r.body_domain.preimage(&m)?.project_out(nb, nq)?;
    let shadow = shadow.renamed(b.clone())?;
    Ok(drop_param_constraints(&shadow.intersect(&ctx.preimage(drop_r)?)?)?.simplify()?)
}
