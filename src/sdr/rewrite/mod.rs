//! Algebraic rewrites of reductions, run on a normalized program (every
//! reduction the whole right-hand side of an equation, over a convex body
//! domain) before SDR: each is a semantics-preserving rewrite recorded as a
//! [`Decision`].
//!
//! A reduction `X[x] = ⊕ { E(y) : y ∈ P, p(y) = x }` is rewritten when `p`
//! is a *coordinate projection* (each result index is one body index, the
//! form `reduce(op, [k, l], …)` lowers to); the body indices `p` drops are
//! the reduction dimensions. First, [`endpoint`]: an int total that a
//! running count of the system reaches at the end of its range is read off
//! that count (plus the rest of its range, a new local). Then, per
//! reduction equation, in this order:
//!
//! 1. [`merge`]: a body that reads a local defined by a reduction of the
//!    same operator becomes one reduction over both (kept only when a
//!    later rewrite then applies and the program's complexity is not
//!    worse; the local is removed when nothing else reads it);
//! 2. [`broadcast`]: a result that does not change along one of its
//!    dimensions becomes a read of a new local without that dimension,
//!    whose equation is rewritten in turn (nothing else is tried on
//!    this one); otherwise
//!    [`idempotence`] (`max`, `min`, `and`, `or`) and [`higher_order`]
//!    (`+`, float `*`) remove the reduction dimensions the body does not
//!    depend on; when only some are removed this is a [`decompose`]ition
//!    whose inner reduction collapsed. When none is left, the equation
//!    becomes the body itself, guarded by a `case` with the operator's
//!    identity where the result's slice is empty;
//! 3. [`factor`]: factors (terms) of the body constant along the remaining
//!    reduction dimensions move out into the result space; the remaining
//!    reduction becomes a new local, rewritten in turn.
//!
//! Bodies with stochastic calls are never rewritten (a draw is keyed by
//! its iteration point). The work is bounded: at most [`MAX_DEPTH`] levels
//! of new locals and [`MAX_STEPS`] equations per system.

pub mod broadcast;
pub mod count;
pub mod decompose;
pub mod endpoint;
pub mod factor;
pub mod higher_order;
pub mod idempotence;
pub mod merge;
pub mod subst;

use super::complexity::equation_costs;
use super::normalize::{used_names, Origins};
use super::{Decision, DecisionKind, SdrError};
use crate::diag::Span;
use crate::ir::*;
use crate::poly::complexity::Complexity;
use crate::vocab::Scalar;
use std::collections::{HashSet, VecDeque};
use subst::{dropping, independent_of, is_opaque, pullback};

/// Levels of locals created by factorization that are rewritten again.
pub const MAX_DEPTH: usize = 4;
/// Equations examined per system (original ones and new ones).
pub const MAX_STEPS: usize = 256;

/// The rewriting context of one system.
#[derive(Clone)]
pub(crate) struct Cx {
    sys_name: String,
    used: HashSet<String>,
    decisions: Vec<Decision>,
    /// `(new variable, variable it was created for)`.
    born: Vec<(String, String)>,
}

impl Cx {
    pub(crate) fn new(s: &System) -> Cx {
        Cx {
            sys_name: s.name.clone(),
            used: used_names(s),
            decisions: Vec::new(),
            born: Vec::new(),
        }
    }

    fn decide(&mut self, var: &str, kind: DecisionKind, applied: bool, reason: &str, detail: &str) {
        let mut d = Decision::new(&self.sys_name, var, kind, applied, reason);
        d.detail = detail.to_string();
        self.decisions.push(d);
    }

    /// A new local `base_tag…` over `domain`, without equation yet.
    pub(crate) fn new_local(
        &mut self,
        s: &mut System,
        base: &str,
        tag: &str,
        domain: Set,
        ty: ElemType,
        span: Span,
    ) -> VarId {
        super::normalize::push_local(
            s,
            &mut self.used,
            &mut self.born,
            base,
            tag,
            domain,
            ty,
            span,
        )
    }
}

/// Rewrites every system of a normalized program (see the module comment).
/// Returns the program, the decisions, and per system the new locals with
/// the variable each was created for.
pub fn rewrite(p: &Program) -> Result<(Program, Vec<Decision>, Origins), SdrError> {
    let mut out = p.clone();
    let mut decisions = Vec::new();
    let mut born = Vec::with_capacity(out.systems.len());
    for s in &mut out.systems {
        let mut cx = Cx::new(s);
        rewrite_system(&mut cx, s)?;
        s.number_reductions();
        decisions.append(&mut cx.decisions);
        born.push(cx.born);
    }
    Ok((out, decisions, born))
}

fn rewrite_system(cx: &mut Cx, s: &mut System) -> Result<(), SdrError> {
    endpoint::run(cx, s)?;
    let mut work: VecDeque<(VarId, usize)> = s
        .equations
        .iter()
        .filter(|e| matches!(e.expr.kind, ExprKind::Reduce(_)))
        .map(|e| (e.var, 0))
        .collect();
    let mut steps = 0;
    while let Some((var, depth)) = work.pop_front() {
        steps += 1;
        if steps > MAX_STEPS {
            break;
        }
        let Some(eq) = s.equations.iter().position(|e| e.var == var) else {
            continue;
        };
        let outcome = process(cx, s, eq)?;
        if let Some(removed) = outcome.removed {
            work.retain(|(v, _)| *v != removed);
            for (v, _) in work.iter_mut() {
                if *v > removed {
                    *v -= 1;
                }
            }
        }
        if depth < MAX_DEPTH {
            work.extend(outcome.new_locals.into_iter().map(|v| (v, depth + 1)));
        }
    }
    Ok(())
}

/// What rewriting one equation did to the system.
#[derive(Default)]
struct Outcome {
    changed: bool,
    /// New locals defined by reductions (to rewrite in turn).
    new_locals: Vec<VarId>,
    /// A local removed by a merge (ids above it moved down by one).
    removed: Option<VarId>,
}

/// Rewrites the reduction equation number `eq` (see the module comment).
fn process(cx: &mut Cx, s: &mut System, eq: usize) -> Result<Outcome, SdrError> {
    let ExprKind::Reduce(r) = &s.equations[eq].expr.kind else {
        return Ok(Outcome::default());
    };
    let r = (**r).clone();
    let ty = s.equations[eq].expr.ty;
    let var = s.equations[eq].var;
    if coordinate_projection(&r.proj).is_none() || r.body_domain.pieces().len() != 1 {
        return Ok(Outcome::default());
    }
    if let Some((m, l)) = merge::merged(s, &r, ty)? {
        let name = s.vars[var].name.clone();
        let l_name = s.vars[l].name.clone();
        let before = total_cost(s)?;
        let (s0, cx0) = (s.clone(), cx.clone());
        let mark = cx.decisions.len();
        s.equations[eq].expr.kind = ExprKind::Reduce(Box::new(m));
        let mut outcome = simplify_eq(cx, s, eq)?;
        let unused = removable(s, l);
        if outcome.changed && unused {
            remove_var(s, l);
            outcome.removed = Some(l);
            outcome.new_locals = outcome
                .new_locals
                .into_iter()
                .filter(|&v| v != l)
                .map(|v| if v > l { v - 1 } else { v })
                .collect();
        }
        let after = total_cost(s)?;
        if outcome.changed && not_worse(&after, &before) {
            let mut d = Decision::new(&cx.sys_name, &name, DecisionKind::Merge, true, "applied");
            d.detail = format!("with {l_name}{}", if unused { " (removed)" } else { "" });
            cx.decisions.insert(mark, d);
            return Ok(outcome);
        }
        let reason = if outcome.changed {
            "the merged reduction would raise the complexity"
        } else {
            "no rewrite applies to the merged reduction"
        };
        *s = s0;
        *cx = cx0;
        cx.decide(
            &name,
            DecisionKind::Merge,
            false,
            reason,
            &format!("with {l_name}"),
        );
    }
    simplify_eq(cx, s, eq)
}

/// Steps 2 and 3 of the module comment on equation `eq`.
fn simplify_eq(cx: &mut Cx, s: &mut System, eq: usize) -> Result<Outcome, SdrError> {
    let ExprKind::Reduce(r) = &s.equations[eq].expr.kind else {
        return Ok(Outcome::default());
    };
    let mut cur = (**r).clone();
    let ty = s.equations[eq].expr.ty;
    let name = s.vars[s.equations[eq].var].name.clone();
    let mut out = Outcome::default();
    if is_opaque(&cur.body) {
        return Ok(out);
    }
    let Some(kept0) = coordinate_projection(&cur.proj) else {
        return Ok(out);
    };
    if let Some((bc, dim)) = broadcast::broadcast_eq(cx, s, eq, &kept0)? {
        cx.decide(
            &name,
            DecisionKind::Broadcast,
            true,
            "the result does not change along a result dimension",
            &format!("computed once for every {dim}"),
        );
        out.changed = true;
        out.new_locals.push(bc);
        return Ok(out);
    }
    let n0 = cur.body_domain.n_dims();
    let free0 = free_dims(n0, &kept0);
    let mut removed: Vec<String> = Vec::new();
    if cur.op.is_idempotent() {
        let dims: Vec<usize> = free0
            .iter()
            .copied()
            .filter(|&d| independent_of(&cur.body, n0, d))
            .collect();
        if !dims.is_empty() {
            let names: Vec<String> = dims.iter().map(|&d| cur.dims()[d].clone()).collect();
            let (next, gone) = idempotence::collapse(&cur, &dims)?;
            if gone.is_empty() {
                cx.decide(
                    &name,
                    DecisionKind::Idempotence,
                    false,
                    "the projection along the constant directions is not exact",
                    &format!("along [{}]", names.join(", ")),
                );
            } else {
                cx.decide(
                    &name,
                    DecisionKind::Idempotence,
                    true,
                    "applied",
                    &format!("{} along [{}]", cur.op.symbol(), gone.join(", ")),
                );
                removed = gone;
                cur = next;
            }
        }
    } else {
        // All directions first; when some remain, keep only the collapses
        // whose count adds no index the body did not depend on (see
        // `collapse_counted`).
        let mut attempt = collapse_counted(&cx.sys_name, &name, &cur, ty, false)?;
        if !attempt.1.is_empty() && has_free_dims(&attempt.0) {
            attempt = collapse_counted(&cx.sys_name, &name, &cur, ty, true)?;
        }
        let (next, gone, mut ds) = attempt;
        cx.decisions.append(&mut ds);
        removed = gone;
        cur = next;
    }
    let Some(kept) = coordinate_projection(&cur.proj) else {
        return Err(SdrError::Internal(
            "a rewrite broke a coordinate projection".into(),
        ));
    };
    let free = free_dims(cur.body_domain.n_dims(), &kept);
    if !removed.is_empty() {
        out.changed = true;
        if !free.is_empty() {
            let rest: Vec<String> = free.iter().map(|&d| cur.dims()[d].clone()).collect();
            cx.decide(
                &name,
                DecisionKind::Decomposition,
                true,
                "the body is constant along part of the reduction",
                &format!(
                    "inner projection along [{}] collapsed, outer along [{}]",
                    removed.join(", "),
                    rest.join(", ")
                ),
            );
        }
    }
    if free.is_empty() {
        if finalize(s, eq, &cur, &kept)? {
            out.changed = true;
        } else if out.changed {
            set_reduction(s, eq, cur);
        }
        return Ok(out);
    }
    if out.changed {
        set_reduction(s, eq, cur);
    }
    if let Some((fac, text)) = factor::factor_eq(cx, s, eq, &kept, &free)? {
        cx.decide(
            &name,
            DecisionKind::Factorization,
            true,
            "applied",
            &format!("factor {text}"),
        );
        out.changed = true;
        out.new_locals.push(fac);
    }
    Ok(out)
}

/// A reduction equation's parts: its reduction, result type, span,
/// variable and result index space.
pub(crate) struct ReductionEq {
    pub r: Reduction,
    pub ty: ElemType,
    pub span: Span,
    pub var: VarId,
    pub x_space: Space,
}

/// The parts of equation number `eq` of `s`, or `None` when its right-hand
/// side is not a reduction.
pub(crate) fn reduction_eq(s: &System, eq: usize) -> Option<ReductionEq> {
    let equation = &s.equations[eq];
    let ExprKind::Reduce(r) = &equation.expr.kind else {
        return None;
    };
    Some(ReductionEq {
        r: (**r).clone(),
        ty: equation.expr.ty,
        span: equation.expr.span,
        var: equation.var,
        x_space: Space::set(&s.params, &equation.indices),
    })
}

/// True when the reduction's projection drops some body dimension.
fn has_free_dims(r: &Reduction) -> bool {
    coordinate_projection(&r.proj).is_none_or(|k| k.len() < r.body_domain.n_dims())
}

/// The indices (of an `n`-dimensional space) `e` may depend on.
fn dependences(e: &Expr, n: usize) -> Vec<bool> {
    (0..n).map(|d| !independent_of(e, n, d)).collect()
}

/// Higher-order operators (`+`, float `*`) along every reduction dimension
/// the body does not depend on, one at a time (each count may make the
/// body depend on other dimensions). With `strict`, a collapse is kept only
/// when its count depends on no index the body did not already depend on:
/// when the reduction does not collapse completely, what remains goes to
/// SDR, whose share space (the directions the body does not depend on)
/// must not shrink. Returns the reduction, the dimensions removed and the
/// decisions.
fn collapse_counted(
    sys: &str,
    name: &str,
    r: &Reduction,
    ty: ElemType,
    strict: bool,
) -> Result<(Reduction, Vec<String>, Vec<Decision>), SdrError> {
    let mut cur = r.clone();
    let mut removed = Vec::new();
    let mut ds = Vec::new();
    let decide = |ds: &mut Vec<Decision>, applied: bool, reason: &str, detail: String| {
        let mut d = Decision::new(sys, name, DecisionKind::HigherOrder, applied, reason);
        d.detail = detail;
        ds.push(d);
    };
    let mut tried: HashSet<String> = HashSet::new();
    loop {
        let n = cur.body_domain.n_dims();
        let Some(kept) = coordinate_projection(&cur.proj) else {
            break;
        };
        let cands: Vec<usize> = free_dims(n, &kept)
            .into_iter()
            .filter(|&d| !tried.contains(&cur.dims()[d]) && independent_of(&cur.body, n, d))
            .collect();
        let Some(&d) = cands.first() else {
            break;
        };
        let dim = cur.dims()[d].clone();
        tried.insert(dim.clone());
        if cur.op == ReduceOp::Mul && ty != ElemType::Float {
            let reason = "an int power would lose the overflow check of the repeated product";
            decide(&mut ds, false, reason, format!("along {dim}"));
            break;
        }
        let Some((next, count)) = higher_order::collapse_one(&cur, d, ty)? else {
            let reason = "the line count is not expressible or the projection is not exact";
            decide(&mut ds, false, reason, format!("along {dim}"));
            continue;
        };
        if strict {
            let old = dependences(&cur.body, n);
            let new = dependences(&next.body, n - 1);
            let widens = new
                .iter()
                .enumerate()
                .any(|(m, &dep)| dep && !old[if m < d { m } else { m + 1 }]);
            if widens {
                // a choice left to SDR, not a failure: not recorded (SDR's
                // own decision is the one reported for this reduction)
                continue;
            }
        }
        let what = if cur.op == ReduceOp::Add {
            "count"
        } else {
            "power"
        };
        let detail = format!("{} along {dim}: {what} = {count}", cur.op.symbol());
        decide(&mut ds, true, "applied", detail);
        removed.push(dim);
        cur = next;
    }
    Ok((cur, removed, ds))
}

fn set_reduction(s: &mut System, eq: usize, r: Reduction) {
    s.equations[eq].expr.kind = ExprKind::Reduce(Box::new(r));
}

/// Replaces a reduction with no reduction dimension left by its body moved
/// to the result space, guarded by `case` with the operator's identity
/// where the body domain does not cover the result's domain. `false` when
/// the body cannot be moved (nothing changed).
fn finalize(s: &mut System, eq: usize, r: &Reduction, kept: &[usize]) -> Result<bool, SdrError> {
    let equation = &s.equations[eq];
    let (ty, span, var) = (equation.expr.ty, equation.expr.span, equation.var);
    let x_space = Space::set(&s.params, &equation.indices);
    let h = dropping(&x_space, r.body_domain.n_dims(), kept)?;
    let Some(mut body) = pullback(&r.body, &h)? else {
        return Ok(false);
    };
    if body.ty != ty {
        // the reduction coerced each body value to its type
        body = coerce(body, ty);
    }
    let image = r.body_domain.preimage(&h)?.simplify()?;
    let d_x = s.vars[var].domain.renamed(x_space)?;
    let outside = d_x.subtract(&image)?.simplify()?;
    let rhs = if outside.is_empty()? {
        body
    } else {
        identity_case(&d_x, &image, body, r.op, span)?
    };
    s.equations[eq].expr = rhs;
    Ok(true)
}

/// `case { d_x ∩ image : body ; d_x \ image : identity of op }`: a
/// reduction's value where its body domain maps to a single point per
/// result point (`image`) and the identity elsewhere in the domain `d_x`.
pub(crate) fn identity_case(
    d_x: &Set,
    image: &Set,
    body: Expr,
    op: ReduceOp,
    span: Span,
) -> Result<Expr, SdrError> {
    let ty = body.ty;
    let inside = d_x.intersect(image)?.simplify()?;
    let outside = d_x.subtract(image)?.simplify()?;
    Ok(Expr {
        kind: ExprKind::Case(vec![
            (inside, body),
            (outside, identity_const(op, ty, span)),
        ]),
        ty,
        span,
    })
}

/// `e` converted to `ty` as a reduction converts its body values (int or
/// bool to float).
fn coerce(e: Expr, ty: ElemType) -> Expr {
    let span = e.span;
    match ty {
        ElemType::Float => Expr {
            kind: ExprKind::Builtin(Builtin::ToFloat, vec![e]),
            ty,
            span,
        },
        _ => e,
    }
}

/// For a projection whose every output is one input dimension (no
/// parameter, no constant, distinct dimensions): `kept[k]` = the body
/// dimension giving output `k`. `None` otherwise.
pub fn coordinate_projection(proj: &MultiAff) -> Option<Vec<usize>> {
    let np = proj.n_params();
    let n = proj.n_in();
    let mut kept = Vec::with_capacity(proj.n_out());
    for row in proj.rows() {
        if row[..np].iter().any(|&c| c != 0) || row[np + n] != 0 {
            return None;
        }
        let nz: Vec<usize> = (0..n).filter(|&d| row[np + d] != 0).collect();
        match nz.as_slice() {
            [d] if row[np + d] == 1 && !kept.contains(d) => kept.push(*d),
            _ => return None,
        }
    }
    Some(kept)
}

/// The body dimensions a coordinate projection drops (increasing).
pub fn free_dims(n: usize, kept: &[usize]) -> Vec<usize> {
    (0..n).filter(|d| !kept.contains(d)).collect()
}

/// The image `p(P)` of the body domain in the result space `x_space`, for
/// a coordinate projection `kept`; `None` when the projection along the
/// reduction dimensions is not exact.
pub(crate) fn image_in_outer(
    r: &Reduction,
    kept: &[usize],
    x_space: &Space,
) -> Result<Option<Set>, SdrError> {
    let n = r.body_domain.n_dims();
    let mut projected = r.body_domain.clone();
    for d in free_dims(n, kept).into_iter().rev() {
        let (p, exact) = projected.project_out(d, 1)?;
        if !exact {
            return Ok(None);
        }
        projected = p;
    }
    let mut remaining: Vec<usize> = kept.to_vec();
    remaining.sort_unstable();
    let keep: Vec<usize> = kept
        .iter()
        .map(|d| remaining.iter().position(|x| x == d).unwrap_or(0))
        .collect();
    let h = dropping(x_space, remaining.len(), &keep)?;
    Ok(Some(projected.preimage(&h)?.simplify()?))
}

/// The identity of `op` at type `ty` as a constant.
pub(crate) fn identity_const(op: ReduceOp, ty: ElemType, span: Span) -> Expr {
    let kind = match op.identity(ty) {
        Scalar::Int(v) => ExprKind::IntConst(v),
        Scalar::Float(v) => ExprKind::FloatConst(v),
        Scalar::Bool(v) => ExprKind::BoolConst(v),
    };
    Expr { kind, ty, span }
}

/// The whole system's cost (sum of `complexity::equation_costs`).
fn total_cost(s: &System) -> Result<Complexity, SdrError> {
    let mut acc = Complexity::new(s.params.clone(), Vec::new());
    for c in equation_costs(s)? {
        acc = acc.add(&c.cost)?;
    }
    Ok(acc)
}

/// Every term of `new` is dominated by a term of `old`.
fn not_worse(new: &Complexity, old: &Complexity) -> bool {
    new.terms
        .iter()
        .all(|t| old.terms.iter().any(|u| u.dominates(t)))
}

/// Calls `f` on `e` and every sub-expression.
fn walk(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    e.for_each_child(&mut |c| walk(c, f));
}

fn walk_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    f(e);
    e.for_each_child_mut(&mut |c| walk_mut(c, f));
}

/// A local nothing reads, removable without touching a stochastic call
/// site (sites name variables by number: every site must name a variable
/// below `l`, which keeps its number).
fn removable(s: &System, l: VarId) -> bool {
    if s.vars[l].kind != VarKind::Local {
        return false;
    }
    let mut ok = true;
    for eq in &s.equations {
        walk(&eq.expr, &mut |e| match &e.kind {
            ExprKind::Read { var, .. } | ExprKind::IndirectRead { var, .. } if *var == l => {
                ok = false
            }
            ExprKind::Random(_, _, site) if site.var >= l => ok = false,
            ExprKind::Categorical(c) if c.site.var >= l => ok = false,
            _ => {}
        });
    }
    ok
}

/// Removes the local `l` and its equation (see [`removable`]; the cleanup's
/// dead-local removal uses it too); variables above `l` move down by one
/// (reads, equations, sweeps; a caller makes sure no stochastic call site
/// names them, since sites key the random streams).
pub(crate) fn remove_var(s: &mut System, l: VarId) {
    let shift = |v: &mut VarId| {
        if *v > l {
            *v -= 1;
        }
    };
    s.vars.remove(l);
    s.equations.retain(|e| e.var != l);
    for eq in &mut s.equations {
        shift(&mut eq.var);
        walk_mut(&mut eq.expr, &mut |e| match &mut e.kind {
            ExprKind::Read { var, .. } | ExprKind::IndirectRead { var, .. } => shift(var),
            _ => {}
        });
    }
    for sw in &mut s.sweeps {
        shift(&mut sw.input);
        shift(&mut sw.output);
    }
}

/// A short readable form of an expression for decision details.
pub(crate) fn expr_text(e: &Expr, s: &System) -> String {
    let params = &s.params;
    match &e.kind {
        ExprKind::IntConst(v) => v.to_string(),
        ExprKind::FloatConst(v) => v.to_string(),
        ExprKind::BoolConst(v) => v.to_string(),
        ExprKind::Index(a) => crate::ir::print::aff_to_alpha(a, &a.space().output.dims, params),
        ExprKind::Read { var, access } => {
            let dims = access.domain_space().output.dims;
            let idx: Vec<String> = access
                .affs()
                .iter()
                .map(|a| crate::ir::print::aff_to_alpha(a, &dims, params))
                .collect();
            format!("{}[{}]", s.vars[*var].name, idx.join(", "))
        }
        ExprKind::IndirectRead { var, indices } => {
            let idx: Vec<String> = indices.iter().map(|x| expr_text(x, s)).collect();
            format!("{}[{}]", s.vars[*var].name, idx.join(", "))
        }
        ExprKind::Binary(op, a, b) => {
            format!("({} {} {})", expr_text(a, s), op.symbol(), expr_text(b, s))
        }
        ExprKind::Unary(UnOp::Neg, a) => format!("-{}", expr_text(a, s)),
        ExprKind::Unary(UnOp::Not, a) => format!("not {}", expr_text(a, s)),
        ExprKind::Builtin(b, xs) => {
            let args: Vec<String> = xs.iter().map(|x| expr_text(x, s)).collect();
            format!("{b:?}({})", args.join(", ")).to_lowercase()
        }
        _ => "…".to_string(),
    }
}
