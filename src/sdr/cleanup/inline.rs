//! Inlining of pointwise locals into their readers.
//!
//! A local `X` (not an input or output) whose equation `X[x] = E` is
//! *pointwise* — no reduction, `categorical`, random draw or external call
//! anywhere in `E` (moving or duplicating those is not allowed), and no
//! read of `X` itself — is substituted into every read of it (`subst`),
//! then left unread (the `dead` pass removes it), when:
//!
//! 1. **cost**: `Σ_reads |C_read| ≤ |D_X|` asymptotically (every term of
//!    the sum dominated by a term of `|D_X|`, `poly::complexity`), where
//!    `C_read` is the read's context (`reads`: a read in a reduction body
//!    counts once per body point);
//! 2. **one piece**: when `E` is `case { B_k : E_k }` (or a restriction),
//!    the points the read may access that lie in `D_X` fall in one piece
//!    `B_k`, and `E_k` is inlined (converted to `X`'s type as `case`
//!    converts it). The accessed points are `a(C × Z^m)`, the `m`
//!    data-dependent coordinates taking any value (`subst::Access`);
//! 3. **domain checks**: an affine read is inside `D_X` at every point of
//!    its context (`C ⊆ a⁻¹(D_X)`, checked again here), so no check is
//!    lost. An indirect read fails at run time when its point is outside
//!    `D_X`; inlining through it is allowed when the read is proven inside
//!    `D_X` wherever it is evaluated (`known::inside`: the guards around it,
//!    the range of a `categorical` label), or when the inlined `E_k`
//!    fails there too and nowhere else (`checks_kept`): every affine read
//!    of `E_k` either becomes an indirect read (its access involves a
//!    data-dependent coordinate: a run-time check) or stays inside its
//!    variable's domain at every point of the reader's context, and the
//!    points where all the unconditional checks pass (reads not under an
//!    `if` branch or the right operand of `and`/`or`) are inside `D_X`.
//!    `P[k, i] = ... NK[k, i] ...` read at `P[z[i], i]` is inlined: the
//!    read `NK[z[i], i]` fails exactly when `z[i]` is outside `0..K`.
//!    Indirect reads inside `E_k` keep their own checks. Inside `D_X`
//!    every read of `E_k` is inside its variable's domain (the program was
//!    checked).
//!
//! When any test cannot be decided (a limit of the polyhedral library),
//! nothing is inlined.

use super::super::{DecisionKind, SdrError};
use super::empty::simplify;
use super::known::{inside, rewrite_reads_known, Known};
use super::reads::{read_var, walk_reads};
use super::subst::{substitute, Access};
use super::{eq_domain, not_worse, reads_var, Cx};
use crate::ir::*;
use crate::poly::complexity::{complexity, Complexity};

/// What examining one local gave.
enum Outcome {
    /// The system with every read of the local inlined, and the detail.
    Applied(Box<System>, String),
    /// Not inlined, with the reason.
    Declined(String),
}

/// Inlines pointwise locals until none can be (each success leaves one
/// local unread, so this ends). Each round tries first the candidates
/// whose equations read no other candidate: a local is substituted into
/// its readers before they are themselves inlined, where its reads are
/// still affine (through an indirect read, test 3 may refuse what it
/// would have allowed at the affine read: `h[p, s, k] = … all[p, k] …`
/// inlined into `out[nbr[q, t], rev[q, t], k]` no longer reads anything
/// of `all`'s domain at `rev[q, t]`).
pub(crate) fn run(cx: &mut Cx, s: &mut System) -> Result<(), SdrError> {
    let mut changed = true;
    while changed {
        changed = false;
        let leaves: Vec<VarId> = (0..s.vars.len())
            .filter(|&x| candidate(s, x) && !reads_candidate(s, x))
            .collect();
        let order: Vec<VarId> = leaves
            .iter()
            .copied()
            .chain((0..s.vars.len()).filter(|x| !leaves.contains(x)))
            .collect();
        for x in order {
            if x >= s.vars.len() || !candidate(s, x) {
                continue;
            }
            let name = s.vars[x].name.clone();
            let res = try_inline(s, x);
            match cx.declined_on_poly(&name, DecisionKind::Inline, res)? {
                Some(Outcome::Applied(next, detail)) => {
                    *s = *next;
                    cx.decide(&name, DecisionKind::Inline, true, "applied", detail);
                    changed = true;
                }
                Some(Outcome::Declined(reason)) => {
                    cx.decide(&name, DecisionKind::Inline, false, &reason, String::new());
                }
                None => {}
            }
        }
    }
    Ok(())
}

/// The equation of `x` reads another candidate ([`candidate`]).
fn reads_candidate(s: &System, x: VarId) -> bool {
    s.equation_of(x).is_some_and(|eq| {
        (0..s.vars.len()).any(|y| y != x && reads_var(&eq.expr, y) && candidate(s, y))
    })
}

/// A pointwise local that some other equation reads.
fn candidate(s: &System, x: VarId) -> bool {
    if s.vars[x].kind != VarKind::Local {
        return false;
    }
    let Some(eq) = s.equation_of(x) else {
        return false;
    };
    is_pointwise(&eq.expr)
        && !reads_var(&eq.expr, x)
        && s.equations
            .iter()
            .any(|e| e.var != x && reads_var(&e.expr, x))
}

/// No reduction, `categorical`, random draw or external call in `e`.
fn is_pointwise(e: &Expr) -> bool {
    let mut ok = !matches!(
        e.kind,
        ExprKind::Reduce(_)
            | ExprKind::Categorical(_)
            | ExprKind::Random(..)
            | ExprKind::External(..)
    );
    if ok {
        e.for_each_child(&mut |c| ok &= is_pointwise(c));
    }
    ok
}

/// The pieces of `X`'s right-hand side `rhs` over its domain `d_x`.
fn branches<'a>(rhs: &'a Expr, d_x: &Set) -> Vec<(Set, &'a Expr)> {
    match &rhs.kind {
        ExprKind::Case(pieces) => pieces.iter().map(|(d, e)| (d.clone(), e)).collect(),
        ExprKind::Restrict(d, e) => vec![(d.clone(), &**e)],
        _ => vec![(d_x.clone(), rhs)],
    }
}

/// Examines the local `x` (see the module comment).
fn try_inline(s: &System, x: VarId) -> Result<Outcome, SdrError> {
    let Some(eq_x) = s.equations.iter().position(|e| e.var == x) else {
        return Ok(Outcome::Declined("no equation".into()));
    };
    let d_x = eq_domain(s, &s.equations[eq_x])?;
    let rhs = &s.equations[eq_x].expr;
    let pieces = branches(rhs, &d_x);
    // Test 1 first: it needs only the reads' contexts (`walk_reads`, no
    // known conditions), and a local it refuses is examined again in
    // every later round of `run` (tests 2 and 3 then run while rewriting).
    let mut total = Complexity::new(s.params.clone(), Vec::new());
    let mut readers: Vec<String> = Vec::new();
    for (k, eq) in s.equations.iter().enumerate() {
        if k == eq_x || !reads_var(&eq.expr, x) {
            continue;
        }
        readers.push(s.vars[eq.var].name.clone());
        let ctx = eq_domain(s, eq)?;
        walk_reads(&eq.expr, &ctx, &mut |e, c| {
            if read_var(e) == Some(x) {
                total = total.add(&complexity(c)?)?;
            }
            Ok(())
        })?;
    }
    let cost = complexity(&d_x)?;
    if !not_worse(&total, &cost) {
        return Ok(Outcome::Declined(format!(
            "reading it costs {total}, computing it {cost}"
        )));
    }
    let mut out = s.clone();
    for k in 0..out.equations.len() {
        if k == eq_x || !reads_var(&out.equations[k].expr, x) {
            continue;
        }
        let ctx = eq_domain(&out, &out.equations[k])?;
        let mut expr = out.equations[k].expr.clone();
        let mut failed = None;
        rewrite_reads_known(&mut expr, &ctx, &Known::default(), &mut |e, c, known| {
            if read_var(e) != Some(x) || failed.is_some() {
                return Ok(());
            }
            match plan(s, x, e, c, known, &d_x, &pieces)? {
                Ok(new) => *e = new,
                Err(reason) => failed = Some(reason),
            }
            Ok(())
        })?;
        if let Some(reason) = failed {
            return Ok(Outcome::Declined(reason));
        }
        // a piece inlined as the identity constant leaves `x + 0`, ...
        simplify(&mut expr);
        out.equations[k].expr = expr;
    }
    readers.dedup();
    let detail = format!(
        "into {}: reads cost {total}, computing it {cost}",
        readers.join(", ")
    );
    Ok(Outcome::Applied(Box::new(out), detail))
}

/// The expression replacing the read `node` of `x` (evaluated over
/// `ctx`), or the reason it cannot be inlined (tests 2 and 3 of the
/// module comment).
fn plan(
    s: &System,
    x: VarId,
    node: &Expr,
    ctx: &Set,
    known: &Known,
    d_x: &Set,
    pieces: &[(Set, &Expr)],
) -> Result<Result<Expr, String>, SdrError> {
    let Some(access) = Access::of_read(node, ctx.space())? else {
        return Err(SdrError::Internal("not a read".into()));
    };
    let (_, a_ext, drop) = access.extended()?;
    let ext_ctx = ctx.preimage(&drop)?;
    let pre_dx = d_x.preimage(&a_ext)?;
    let in_domain = match node.kind {
        ExprKind::Read { .. } => ext_ctx.is_subset(&pre_dx)?,
        _ => inside(s, node, ctx, known, d_x)?,
    };
    let reach = ext_ctx.intersect(&pre_dx)?;
    let mut chosen = None;
    for (b, e) in pieces {
        if reach.is_subset(&b.preimage(&a_ext)?)? {
            chosen = Some(*e);
            break;
        }
    }
    let Some(e) = chosen else {
        return Ok(Err("a read reaches several case pieces".into()));
    };
    if !in_domain {
        if access.n_data() == 0 {
            return Ok(Err("a read not known to be inside the domain".into()));
        }
        if !checks_kept(s, e, &a_ext, access.n_data(), &ext_ctx, &pre_dx)? {
            return Ok(Err(
                "an indirect read would lose its domain check (the inlined expression does not \
                 read, at the same point, a variable of the same domain)"
                    .into(),
            ));
        }
    }
    let Some(mut new) = substitute(e, &access)? else {
        return Ok(Err(
            "the expression cannot be moved through this access".into()
        ));
    };
    let ty = s.vars[x].ty;
    if new.ty != ty {
        if ty != ElemType::Float || new.ty != ElemType::Int {
            return Ok(Err(format!(
                "a piece of type {} in a {} variable",
                new.ty.name(),
                ty.name()
            )));
        }
        new = Expr {
            span: new.span,
            kind: ExprKind::Builtin(Builtin::ToFloat, vec![new]),
            ty,
        };
    }
    Ok(Ok(new))
}

/// Test 3 of the module comment for the expression `e` of `X` (domain
/// `d_x`, within the parameter context), read through the access `a_ext`
/// (`(c, q) ↦ x`, the data-dependent coordinates as free dimensions `q`)
/// over `ext_ctx` (the reader's context, `q` free): after the
/// substitution, each affine read `Z[ψ(x)]` of `e` is either
/// - still affine (`ψ ∘ a_ext` has no `q`): then it must be inside `D_Z`
///   at every point of `ext_ctx`, since nothing checks it; or
/// - indirect (checked at run time): when it is evaluated unconditionally
///   its check passes exactly on `(ψ ∘ a_ext)⁻¹(D_Z)`,
///
/// and the points where every unconditional check passes lie in
/// `a_ext⁻¹(D_X)`: wherever the original read of `X` would fail, one of the
/// inlined reads fails. (LDA-MH's `P[z[i], i]`, whose body reads `NK[k,
/// i]`, `NWK[w[i], k, i]`, ...: the read of `NK` at `(z[i], i)` fails
/// exactly when `z[i]` is outside `0..K`.) Indirect reads of `e` keep their
/// own checks.
fn checks_kept(
    s: &System,
    e: &Expr,
    a_ext: &MultiAff,
    n_data: usize,
    ext_ctx: &Set,
    pre_dx: &Set,
) -> Result<bool, SdrError> {
    let mut reads = Vec::new();
    affine_reads(e, true, &mut reads);
    let np = a_ext.n_params();
    // the columns of `q` in rows over `(p, c, q, 1)`
    let q_cols = np + a_ext.n_in() - n_data..np + a_ext.n_in();
    let mut passing = ext_ctx.clone();
    for (var, psi, unconditional) in reads {
        let composed = psi.pullback(a_ext)?;
        let checked = composed
            .rows()
            .iter()
            .any(|r| r[q_cols.clone()].iter().any(|&c| c != 0));
        let domain = s.vars[var].domain.intersect_params(&s.context)?;
        let inside = domain.preimage(&composed)?;
        if checked {
            if unconditional {
                passing = passing.intersect(&inside)?;
            }
        } else if !ext_ctx.is_subset(&inside)? {
            return Ok(false);
        }
    }
    Ok(passing.is_subset(pre_dx)?)
}
/// Every affine read of `e` with its access, and whether it is evaluated
/// whenever `e` is (`always`: not under an `if` branch or the right
/// operand of `and`/`or`).
fn affine_reads(e: &Expr, always: bool, out: &mut Vec<(VarId, MultiAff, bool)>) {
    match &e.kind {
        ExprKind::Read { var, access } => out.push((*var, access.clone(), always)),
        ExprKind::Binary(BinOp::And | BinOp::Or, a, b) => {
            affine_reads(a, always, out);
            affine_reads(b, false, out);
        }
        ExprKind::If(c, a, b) => {
            affine_reads(c, always, out);
            affine_reads(a, false, out);
            affine_reads(b, false, out);
        }
        // unary and binary operators, built-ins and indirect reads'
        // indices evaluate all their operands; anything else (cases,
        // restrictions) only some
        ExprKind::Unary(..)
        | ExprKind::Binary(..)
        | ExprKind::Builtin(..)
        | ExprKind::IndirectRead { .. } => {
            e.for_each_child(&mut |c| affine_reads(c, always, out));
        }
        _ => e.for_each_child(&mut |c| affine_reads(c, false, out)),
    }
}
