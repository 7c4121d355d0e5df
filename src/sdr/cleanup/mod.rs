//! Cleanup of the program SDR produced: the tables a hand-written sampler
//! never has, removed by nine exact rewrites run in rounds (at most
//! [`MAX_ROUNDS`], until nothing changes), each recorded as a [`Decision`]:
//!
//! 1. [`pointwise`]: a reduction `X[x] = ⊕ { E(y) : y ∈ P, p(y) = x }`
//!    whose projection is injective on `P` with an integer affine inverse
//!    `g` (`g(p(y)) = y` on `P`) is the pointwise equation
//!    `X[x] = case { I : E(g(x)); D_X − I : identity }` with `I` the image
//!    `{ x : g(x) ∈ P, p(g(x)) = x }` (each result is a sum of at most one
//!    body value: the operator's identity combined with `v` is `v`, up to
//!    the sign of a float zero);
//! 2. [`selected`]: a reduction over one index `k` whose body is
//!    `if k == e then F else identity` (`e` a data-dependent label not
//!    depending on `k`) is the pointwise `if (x, e) ∈ P then F(x, e) else
//!    identity`: one body value per result, chosen by data;
//! 3. [`empty`]: a read `R[f(c)]` of a reduction-defined variable whose
//!    points all lie outside the image `p(P)` of its body domain reads the
//!    identity: it becomes the identity constant, and `x + 0`, `x - 0`,
//!    `x * 1`, `max(x, -inf)`, … are simplified where the types allow it.
//!    A local whose remaining reads all fall inside `p(P)` (parameter-only
//!    constraints dropped) gets that smaller domain;
//! 4. [`inline`]: a pointwise local (no reduction, `categorical`, random
//!    draw or external call: duplicating or moving those is not allowed)
//!    is substituted into its readers when reading it costs no more than
//!    computing it (asymptotically), through affine and data-dependent
//!    (indirect) reads; see that module for the rule that keeps the
//!    run-time domain check of an indirect read;
//! 5. [`sums`]: two int running counts read only as their sum (the
//!    forward and backward halves of a leave-one-out count) become one
//!    running count;
//! 6. [`specialize`]: a reduction-defined local read only through indirect
//!    reads at data-selected points, each proven inside its domain
//!    ([`known`]), is computed at those points alone (one new reduction per
//!    distinct read), when that is asymptotically cheaper;
//! 7. [`dead`]: locals nothing reads any more are removed (also before
//!    `specialize`, so that readers inlined away do not count);
//! 8. [`arms`]: a choice `if C then a else b` between two int or bool
//!    atoms, `C` costly and unable to fail, is skipped where `a == b`;
//! 9. [`guard`]: a reduction-defined local read only under a condition
//!    known at every read is computed only where the condition holds.
//!
//! Everything preserves the program's values exactly: integers and booleans
//! bit for bit, floats bit for bit except that `-0.0` may become `+0.0`.
//! Contexts of reads (the points where a read may be evaluated) are
//! computed by [`reads`], the conditions known to hold there by [`known`];
//! substitution of index expressions into an expression by [`subst`].
//!
//! Must not know about: schedules, code generation. Stochastic call sites
//! keep their numbers (a draw is keyed by its site): no pass moves a draw,
//! and a variable is removed only when no site names a variable above it.

pub mod arms;
pub mod dead;
pub mod empty;
pub mod guard;
pub mod inline;
pub mod known;
pub mod pointwise;
pub mod reads;
pub mod selected;
pub mod specialize;
pub mod subst;
pub mod sums;

use super::{Decision, DecisionKind, SdrError};
use crate::ir::*;
use crate::poly::complexity::Complexity;
use crate::poly::PolyError;

/// Rounds of the nine rewrites per system.
pub const MAX_ROUNDS: usize = 4;

/// The cleanup context of one system: its name and the decisions taken.
pub(crate) struct Cx {
    pub(crate) sys_name: String,
    pub(crate) decisions: Vec<Decision>,
}

impl Cx {
    /// The number of applied decisions so far.
    pub(crate) fn applied(&self) -> usize {
        self.decisions.iter().filter(|d| d.applied).count()
    }

    /// Records a decision about `var` (a declined one only once: the
    /// rounds examine the same variables again).
    pub(crate) fn decide(
        &mut self,
        var: &str,
        kind: DecisionKind,
        applied: bool,
        reason: &str,
        detail: String,
    ) {
        let seen = |d: &Decision| {
            !d.applied && d.var == var && d.kind == kind && d.reason == reason && d.detail == detail
        };
        if !applied && self.decisions.iter().any(seen) {
            return;
        }
        let mut d = Decision::new(&self.sys_name, var, kind, applied, reason);
        d.detail = detail;
        self.decisions.push(d);
    }

    /// Turns a limit of the polyhedral library met while examining `var`
    /// into a declined decision (the rewrite is not applied: when unsure,
    /// nothing changes); other errors are passed on.
    pub(crate) fn declined_on_poly<T>(
        &mut self,
        var: &str,
        kind: DecisionKind,
        r: Result<T, SdrError>,
    ) -> Result<Option<T>, SdrError> {
        match r {
            Ok(v) => Ok(Some(v)),
            Err(SdrError::Poly(e)) => {
                let reason = match &e {
                    PolyError::Budget(_) => format!("budget: {e}"),
                    _ => format!("the polyhedral library could not decide: {e}"),
                };
                self.decide(var, kind, false, &reason, String::new());
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

/// Cleans up every system of `program` (see the module comment). Returns
/// the new program and the decisions, in the order they were taken.
pub fn cleanup(program: &Program) -> Result<(Program, Vec<Decision>), SdrError> {
    cleanup_with_origins(program).map(|(p, d, _)| (p, d))
}

/// [`cleanup`], also returning, per system, the variables it made with
/// the variable each came from (`(new, base)` pairs: `specialize`).
pub fn cleanup_with_origins(
    program: &Program,
) -> Result<(Program, Vec<Decision>, super::normalize::Origins), SdrError> {
    let mut out = program.clone();
    let mut decisions = Vec::new();
    let mut origins = Vec::with_capacity(out.systems.len());
    for s in &mut out.systems {
        let mut born = Vec::new();
        let mut cx = Cx {
            sys_name: s.name.clone(),
            decisions: Vec::new(),
        };
        // Per pass, the generation at which it last changed nothing (see
        // `skip_idle`); the generation counts the changes to `s`.
        let mut idle: [Option<usize>; 10] = Default::default();
        let mut renumbered = 0;
        for _ in 0..MAX_ROUNDS {
            let before = cx.applied();
            let [p, sel, e, inl, sums_idle, d1, sp, d2, arms_idle, g_idle] = &mut idle;
            let g = |cx: &Cx| cx.applied() + renumbered;
            skip_idle("pointwise", p, g, &mut cx, s, pointwise::run)?;
            skip_idle("selected", sel, g, &mut cx, s, selected::run)?;
            skip_idle("empty reads", e, g, &mut cx, s, empty::run)?;
            skip_idle("inline", inl, g, &mut cx, s, inline::run)?;
            skip_idle("running counts", sums_idle, g, &mut cx, s, sums::run)?;
            // the readers inlined away must not count as reads
            skip_idle("dead", d1, g, &mut cx, s, dead::run)?;
            skip_idle("specialize", sp, g, &mut cx, s, |cx, s| {
                specialize::run(cx, s, &mut born)
            })?;
            skip_idle("dead", d2, g, &mut cx, s, dead::run)?;
            skip_idle("equal arms", arms_idle, g, &mut cx, s, arms::run)?;
            skip_idle("guard", g_idle, g, &mut cx, s, guard::run)?;
            let ids = |s: &System| s.reductions().iter().map(|r| r.id).collect::<Vec<_>>();
            let old_ids = ids(s);
            s.number_reductions();
            if ids(s) != old_ids {
                renumbered += 1;
            }
            if cx.applied() == before {
                break;
            }
        }
        decisions.append(&mut cx.decisions);
        origins.push(born);
    }
    Ok((out, decisions, origins))
}

/// Runs `pass` on `s` unless it changed nothing the last time it ran and
/// `s` has not changed since: `idle` is the generation (`generation(cx)`,
/// which grows with every change to `s`) at which the pass last changed
/// nothing. Each pass is a deterministic function of the system (its
/// declined decisions are recorded once, see [`Cx::decide`]), so it would
/// leave it unchanged again. The last round of the cleanup, which only
/// confirms that nothing changes, costs nothing for the passes whose input
/// did not change.
///
/// A pass changes `s` only together with an applied decision (every
/// rewrite is recorded): that is what makes the count of applied decisions
/// a generation of `s` without copying or comparing systems. Debug builds
/// (the test suite) check it on every pass that decides nothing.
fn skip_idle(
    name: &'static str,
    idle: &mut Option<usize>,
    generation: impl Fn(&Cx) -> usize,
    cx: &mut Cx,
    s: &mut System,
    pass: impl FnOnce(&mut Cx, &mut System) -> Result<(), SdrError>,
) -> Result<(), SdrError> {
    let start = generation(cx);
    if *idle == Some(start) {
        return Ok(());
    }
    let _t = crate::timing::phase(name);
    #[cfg(debug_assertions)]
    let before = s.clone();
    pass(cx, s)?;
    let unchanged = generation(cx) == start;
    #[cfg(debug_assertions)]
    if unchanged && *s != before {
        return Err(SdrError::Internal(format!(
            "the cleanup pass `{name}` changed system `{}` without recording an applied decision",
            cx.sys_name
        )));
    }
    *idle = unchanged.then_some(start);
    Ok(())
}

/// The domain of `eq`'s variable over the index space of its right-hand
/// side (the equation's index names), within the system's parameter
/// context (every engine checks the parameters against it first): the
/// points where the right-hand side is evaluated.
pub(crate) fn eq_domain(s: &System, eq: &Equation) -> Result<Set, SdrError> {
    Ok(raw_domain(s, eq)?.intersect_params(&s.context)?)
}

/// The declared domain of `eq`'s variable over the index space of its
/// right-hand side, without the parameter context (for building domains
/// and `case` pieces).
pub(crate) fn raw_domain(s: &System, eq: &Equation) -> Result<Set, SdrError> {
    let space = Space::set(&s.params, &eq.indices);
    Ok(s.vars[eq.var].domain.renamed(space)?)
}

/// Every term of `new` is dominated by a term of `old`: `O(new) ⊆ O(old)`.
pub(crate) fn not_worse(new: &Complexity, old: &Complexity) -> bool {
    new.terms
        .iter()
        .all(|t| old.terms.iter().any(|u| u.dominates(t)))
}

/// True when `e` reads `var` (affine or indirect read) anywhere.
pub(crate) fn reads_var(e: &Expr, var: VarId) -> bool {
    let mut found = matches!(
        &e.kind,
        ExprKind::Read { var: v, .. } | ExprKind::IndirectRead { var: v, .. } if *v == var
    );
    if !found {
        e.for_each_child(&mut |c| found |= reads_var(c, var));
    }
    found
}

/// The identity of `op` at type `ty` as a constant expression.
pub(crate) fn identity_const(op: ReduceOp, ty: ElemType, span: crate::diag::Span) -> Expr {
    super::rewrite::identity_const(op, ty, span)
}

/// A short text of a multi-affine function for decision details:
/// `(v, k, i - 1)`.
pub(crate) fn multi_aff_text(f: &MultiAff, params: &[String]) -> String {
    let dims = f.domain_space().output.dims;
    let parts: Vec<String> = f
        .affs()
        .iter()
        .map(|a| crate::ir::print::aff_to_alpha(a, &dims, params))
        .collect();
    format!("({})", parts.join(", "))
}
