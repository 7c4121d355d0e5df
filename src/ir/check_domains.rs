//! Domain checks of a lowered program: every output and local defined over
//! its whole domain (no top-level restriction excluding points), `case`
//! pieces disjoint and covering, affine reads inside the read variable's
//! domain, reduction bodies bounded, every variable's domain bounded.
//!
//! Owns the checks and their messages. Must not know about the AST or
//! anything after the IR.
//!
//! Method: every check builds the set of *violating* points — over the
//! parameters (within the system's context) and the indices — with `poly`
//! (the IR's domains are `poly::Set`s, so the checks are set operations on
//! them) and asks for an integer sample. The checks are
//! exact (integer emptiness, no parameter values assumed) and every error
//! names a witness: the point and the parameter values.
//! Boundedness of a reduction body is decided separately, for all
//! parameter values at once: the fiber of a body piece over a fixed result
//! point is bounded iff its recession cone `{d : A d >= 0, E d = 0,
//! proj(d) = 0}` is `{0}`, tested with `poly` (one emptiness question per
//! direction `±d_t >= 1`; pieces without integer points are skipped).

use std::collections::HashSet;

use super::types::*;
use crate::diag::{Diagnostic, Span};
use crate::poly::solver::{self, rational_feasible};
use crate::poly::{BasicSet, MultiAff, PolyError, PolyResult, Set};

/// Runs every domain check on every variable and equation of `p`.
pub fn check_program(p: &Program) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    for s in &p.systems {
        let ctx = &s.context;
        for v in &s.vars {
            if let Some(d) = unbounded_variable(v, ctx) {
                errors.push(d);
            }
        }
        for eq in &s.equations {
            let mut w = Walker {
                sys: s,
                eq,
                context: ctx,
                errors: &mut errors,
                reported: HashSet::new(),
            };
            // Name the points with the equation's own index names.
            let dom = &s.vars[eq.var].domain;
            match dom.renamed(Space::set(&s.params, &eq.indices)) {
                Ok(dom) => w.walk(&eq.expr, &dom, false),
                Err(e) => w.errors.push(poly_failure(e, eq.expr.span)),
            }
        }
    }
    errors
}

fn poly_failure(e: PolyError, span: Span) -> Diagnostic {
    Diagnostic::error(format!("the domain checks failed here: {e}"), span)
        .with_label("the polyhedral library could not decide this")
}

fn apply(f: &MultiAff, x: &[i64], params: &[i64]) -> Option<Vec<i64>> {
    f.eval(params, x).ok()
}

struct Walker<'a> {
    sys: &'a System,
    eq: &'a Equation,
    /// The parameter context as a set with no dimensions.
    context: &'a Set,
    errors: &'a mut Vec<Diagnostic>,
    /// (node span, check) already reported: one witness per node.
    reported: HashSet<(usize, usize, Check)>,
}

/// The kinds of check, for reporting each node once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Check {
    /// An affine read outside the read variable's domain.
    Read,
    /// A top-level restriction excluding points of the defined variable.
    Partial,
    /// Two `case` pieces overlapping.
    Overlap,
    /// `case` pieces not covering the domain.
    Gap,
    /// An unbounded reduction body or categorical domain.
    Unbounded,
    /// The polyhedral library failed.
    Failed,
}

impl Walker<'_> {
    fn report(&mut self, span: Span, check: Check, d: Diagnostic) {
        if self.reported.insert((span.start, span.end, check)) {
            self.errors.push(d);
        }
    }

    /// Reports `msg` at the node `span` with `label`, pointing at the
    /// declaration of the variable being defined (checks of points of its
    /// left-hand side).
    fn report_lhs(&mut self, span: Span, check: Check, msg: String, label: &str) {
        let declared = self.sys.vars[self.eq.var].span;
        let d = Diagnostic::error(msg, span)
            .with_label(label)
            .with_secondary(declared, "declared domain");
        self.report(span, check, d);
    }

    fn np(&self) -> usize {
        self.sys.params.len()
    }

    /// An integer point of `v` within the context, as (parameters, point):
    /// the smallest parameter values first (small non-negative values in
    /// order of their sum), then the lexicographically smallest point; any
    /// sample when no small parameter values work.
    fn witness_of(&self, v: &Set) -> PolyResult<Option<(Vec<i64>, Vec<i64>)>> {
        let v = v.intersect_params(self.context)?;
        let np = self.np();
        if v.is_empty()? {
            return Ok(None);
        }
        let max: i64 = match np {
            0 => 0,
            1 => 12,
            2 => 8,
            3 => 5,
            _ => 3,
        };
        for total in 0..=max * i64::try_from(np).unwrap_or(1) {
            for ps in tuples_with_sum(np, total, max) {
                let point = match v.lexmin_point(&ps) {
                    Ok(x) => x,
                    // No lexicographic minimum (unbounded below): any point.
                    Err(PolyError::Unbounded(_)) => v.sample_for(&ps)?,
                    Err(e) => return Err(e),
                };
                if let Some(x) = point {
                    return Ok(Some((ps, x)));
                }
            }
        }
        Ok(v.sample()?.map(|w| {
            let k = np.min(w.len());
            (w[..k].to_vec(), w[k..].to_vec())
        }))
    }

    /// `i = 1, j = 2 when N = 3`.
    fn witness(&self, names: &[String], x: &[i64], params: &[i64]) -> String {
        let pt: Vec<String> = names
            .iter()
            .zip(x)
            .map(|(n, v)| format!("{n} = {v}"))
            .collect();
        let ps: Vec<String> = self
            .sys
            .params
            .iter()
            .zip(params)
            .map(|(n, v)| format!("{n} = {v}"))
            .collect();
        match (pt.is_empty(), ps.is_empty()) {
            (true, true) => "at the (only) point".to_string(),
            (true, false) => format!("when {}", ps.join(", ")),
            (false, true) => format!("at {}", pt.join(", ")),
            (false, false) => format!("at {} when {}", pt.join(", "), ps.join(", ")),
        }
    }

    fn lhs(&self, x: &[i64]) -> String {
        let v = &self.sys.vars[self.eq.var];
        if x.is_empty() {
            v.name.clone()
        } else {
            let xs: Vec<String> = x.iter().map(|c| c.to_string()).collect();
            format!("{}[{}]", v.name, xs.join(", "))
        }
    }

    /// Walks `e`, evaluated at the points of `ctx` (a domain of the current
    /// real space: the equation's when `in_body` is false, a reduction
    /// body's or a categorical's otherwise — there, reads and restrictions
    /// shape the body domain instead of being errors).
    fn walk(&mut self, e: &Expr, ctx: &Set, in_body: bool) {
        if let Err(err) = self.walk_inner(e, ctx, in_body) {
            let d = poly_failure(err, e.span);
            self.report(e.span, Check::Failed, d);
        }
    }

    fn walk_inner(&mut self, e: &Expr, ctx: &Set, in_body: bool) -> PolyResult<()> {
        let dims = &ctx.space().output.dims;
        match &e.kind {
            ExprKind::Read { var, access } => {
                if in_body {
                    return Ok(());
                }
                let v = &self.sys.vars[*var];
                let pre = v.domain.preimage(access)?;
                let bad = ctx.subtract(&pre)?;
                if let Some((ps, x)) = self.witness_of(&bad)? {
                    let y = apply(access, &x, &ps).unwrap_or_default();
                    let ys: Vec<String> = y.iter().map(|c| c.to_string()).collect();
                    let msg = format!(
                        "read of `{}[{}]` outside the domain of `{}` {}",
                        v.name,
                        ys.join(", "),
                        v.name,
                        self.witness(dims, &x, &ps)
                    );
                    let d = Diagnostic::error(msg, e.span)
                        .with_label("reads outside the declared domain")
                        .with_secondary(v.span, "declared here");
                    self.report(e.span, Check::Read, d);
                }
            }
            ExprKind::Restrict(d, x) => {
                if !in_body {
                    let bad = ctx.subtract(d)?;
                    if let Some((ps, p)) = self.witness_of(&bad)? {
                        let msg = format!(
                            "`{}` is only partly defined: `{}` is excluded by this restriction ({})",
                            self.sys.vars[self.eq.var].name,
                            self.lhs(&p),
                            self.witness(dims, &p, &ps)
                        );
                        self.report_lhs(
                            e.span,
                            Check::Partial,
                            msg,
                            "the equation is undefined outside this restriction",
                        );
                    }
                }
                let inner = ctx.intersect(d)?;
                self.walk(x, &inner, in_body);
            }
            ExprKind::Case(pieces) => {
                let c = ctx;
                let sets: Vec<&Set> = pieces.iter().map(|(d, _)| d).collect();
                'overlap: for i in 0..sets.len() {
                    for j in i + 1..sets.len() {
                        let both = c.intersect(sets[i])?.intersect(sets[j])?;
                        if let Some((ps, p)) = self.witness_of(&both)? {
                            let names = if in_body {
                                (0..p.len()).map(|k| format!("x{k}")).collect()
                            } else {
                                dims.clone()
                            };
                            let msg = format!(
                                "`case` pieces {} and {} overlap {}",
                                i + 1,
                                j + 1,
                                self.witness(&names, &p, &ps)
                            );
                            let d = Diagnostic::error(msg, e.span)
                                .with_label("pieces must be disjoint")
                                .with_secondary(pieces[i].1.span, "this piece")
                                .with_secondary(pieces[j].1.span, "and this one");
                            self.report(e.span, Check::Overlap, d);
                            break 'overlap;
                        }
                    }
                }
                if !in_body {
                    let mut union = Set::empty(c.space().clone());
                    for s in &sets {
                        union = union.union(s)?;
                    }
                    let gap = c.subtract(&union)?;
                    if let Some((ps, p)) = self.witness_of(&gap)? {
                        let msg = format!(
                            "`case` does not cover `{}` ({}): no piece contains this point",
                            self.lhs(&p),
                            self.witness(dims, &p, &ps)
                        );
                        self.report_lhs(e.span, Check::Gap, msg, "pieces leave a gap");
                    }
                }
                for ((_, x), d) in pieces.iter().zip(&sets) {
                    let inner = ctx.intersect(d)?;
                    self.walk(x, &inner, in_body);
                }
            }
            ExprKind::Reduce(r) => {
                let proj = &r.proj;
                let pulled = ctx.preimage(proj)?;
                let inner = r.body_domain.intersect(&pulled)?;
                if self.unbounded(&inner, proj) {
                    let d = Diagnostic::error(
                        "the body of this reduction is unbounded: for a fixed result point, its domain has infinitely many points",
                        e.span,
                    )
                    .with_label("bound the new indices with a restriction, e.g. `{: 0 <= k < N} : ...`");
                    self.report(e.span, Check::Unbounded, d);
                }
                self.walk(&r.body, &inner, true);
            }
            ExprKind::Categorical(c) => {
                let n_outer = dims.len();
                let mut dims = dims.to_vec();
                dims.push(c.index.clone());
                let space = Space::set(&self.sys.params, &dims);
                let rows = (0..n_outer)
                    .map(|k| Aff::dim(space.clone(), k).row().to_vec())
                    .collect();
                let proj = MultiAff::from_rows(space, rows)?;
                let lifted = ctx.preimage(&proj)?;
                let inner = c.domain.intersect(&lifted)?;
                if self.unbounded(&inner, &proj) {
                    let d = Diagnostic::error(
                        format!(
                            "the domain of `{}` in this `categorical` is unbounded",
                            c.index
                        ),
                        e.span,
                    )
                    .with_label(
                        "bound the drawn index with a restriction, e.g. `{: 0 <= k < K} : ...`",
                    );
                    self.report(e.span, Check::Unbounded, d);
                }
                self.walk(&c.weight, &inner, true);
            }
            ExprKind::IndirectRead { indices: xs, .. }
            | ExprKind::Builtin(_, xs)
            | ExprKind::External(_, xs)
            | ExprKind::Random(_, xs, _) => {
                for x in xs {
                    self.walk(x, ctx, in_body);
                }
            }
            ExprKind::Unary(_, x) => self.walk(x, ctx, in_body),
            ExprKind::Selection(x) => {
                self.walk(&x.value, ctx, in_body);
                self.walk(&x.lower, ctx, in_body);
                self.walk(&x.upper, ctx, in_body);
            }
            ExprKind::Binary(_, a, b) => {
                self.walk(a, ctx, in_body);
                self.walk(b, ctx, in_body);
            }
            ExprKind::If(a, b, c) => {
                self.walk(a, ctx, in_body);
                self.walk(b, ctx, in_body);
                self.walk(c, ctx, in_body);
            }
            ExprKind::IntConst(_)
            | ExprKind::FloatConst(_)
            | ExprKind::BoolConst(_)
            | ExprKind::Index(_) => {}
        }
        Ok(())
    }

    /// Is some piece of `body` (within the context) unbounded along the
    /// fibers of `proj`?
    fn unbounded(&self, body: &Set, proj: &MultiAff) -> bool {
        let Ok(body) = body.intersect_params(self.context) else {
            return false;
        };
        body.pieces()
            .iter()
            .any(|b| piece_unbounded(b, proj) == Ok(true))
    }
}

/// The error for a variable whose domain (within the context `ctx`) is
/// unbounded for some parameter values: the fiber `{x : (p, x) ∈ D}` of a
/// piece is unbounded iff the piece has an integer point and its
/// recession cone over the dimensions is not `{0}` ([`piece_unbounded`]
/// with no projection). Such a variable has infinitely many elements:
/// no engine can allocate or compute it.
fn unbounded_variable(v: &Variable, ctx: &Set) -> Option<Diagnostic> {
    let dom = v.domain.intersect_params(ctx).ok()?;
    let none = MultiAff::from_rows(dom.space().clone(), Vec::new()).ok()?;
    let (piece, dir) = dom
        .pieces()
        .iter()
        .find_map(|b| match recession_ray(b, &none) {
            Ok(Some(dir)) => Some((b, dir)),
            _ => None,
        })?;
    let what = match v.kind {
        VarKind::Input => "input",
        VarKind::Output => "output",
        VarKind::Local => "local",
    };
    let ray = dir
        .iter()
        .zip(piece.space().output.dims.iter())
        .filter(|(d, _)| **d != 0)
        .map(|(d, n)| format!("{}{n}", if *d > 0 { "+" } else { "-" }))
        .collect::<Vec<_>>()
        .join(", ");
    Some(
        Diagnostic::error(
            format!(
                "the domain of {what} `{}` is unbounded (it grows without limit along {ray})",
                v.name
            ),
            v.span,
        )
        .with_label("declared here; bound every dimension (by the parameters)"),
    )
}

/// All tuples of `n` values in `0..=max` summing to `total`, in
/// lexicographic order.
fn tuples_with_sum(n: usize, total: i64, max: i64) -> Vec<Vec<i64>> {
    if n == 0 {
        return if total == 0 {
            vec![Vec::new()]
        } else {
            Vec::new()
        };
    }
    let mut out = Vec::new();
    for first in 0..=max.min(total) {
        for mut rest in tuples_with_sum(n - 1, total - first, max) {
            rest.insert(0, first);
            out.push(rest);
        }
    }
    out
}

// ---------------------------------------------------------------- boundedness

/// Has the piece an integer point and a non-zero recession direction `d`
/// (over the dimensions, parameters fixed) with `proj(d) = 0`? The cone is
/// homogeneous, so its rational and integer emptiness agree.
fn piece_unbounded(b: &BasicSet, proj: &MultiAff) -> PolyResult<bool> {
    Ok(recession_ray(b, proj)?.is_some())
}

/// [`piece_unbounded`], naming the first coordinate direction `±e_t` (as
/// a vector of signs) along which the cone has a ray. The cone is
/// homogeneous (`C = {d : A·d >= 0, E·d = 0}`), so `C ∧ s·d_t >= 1` has a
/// rational point exactly when it has an integer one (scale it): each
/// direction is one rational feasibility test, no integer search.
fn recession_ray(b: &BasicSet, proj: &MultiAff) -> PolyResult<Option<Vec<i64>>> {
    if b.is_empty()? {
        return Ok(None);
    }
    let np = b.space().n_params();
    let n = b.space().n_dims();
    let linear = |r: &[i64]| -> Vec<i64> {
        let mut v = r[np..np + n].to_vec();
        v.push(0);
        v
    };
    let mut cone = solver::System::new(n);
    for r in b.eqs().iter().chain(proj.rows()) {
        cone.add_eq(linear(r));
    }
    for r in b.ineqs() {
        cone.add_ineq(linear(r));
    }
    for t in 0..n {
        for s in [1i64, -1] {
            let mut ray = cone.clone();
            let mut row = vec![0i64; n + 1];
            row[t] = s;
            row[n] = -1;
            ray.add_ineq(row);
            if rational_feasible(&ray)? {
                let mut dir = vec![0; n];
                dir[t] = s;
                return Ok(Some(dir));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::poly::Constraint;

    /// `i·x0 + k·x1 + c >= 0` (or `= 0`) over two dimensions, no parameters.
    fn ge(i: i64, k: i64, c: i64, eq: bool) -> Constraint {
        if eq {
            Constraint::eq(vec![i, k, c])
        } else {
            Constraint::ineq(vec![i, k, c])
        }
    }

    /// The projection `(x0, x1) -> x0`.
    fn proj_i() -> Vec<Vec<i64>> {
        vec![vec![1, 0, 0]]
    }

    fn set_of(piece: &[Constraint], n: usize) -> Option<Set> {
        let dims: Vec<String> = (0..n).map(|k| format!("x{k}")).collect();
        Set::from_constraints(
            Space::set::<String, String>(&[], &dims),
            vec![piece.to_vec()],
        )
        .ok()
    }

    /// `piece_unbounded` of a constraint list over `n` indices (`None` on
    /// failure).
    fn unbounded_of(piece: &[Constraint], proj: &[Vec<i64>], n: usize) -> Option<bool> {
        let set = set_of(piece, n)?;
        let f = MultiAff::from_rows(set.space().clone(), proj.to_vec()).ok()?;
        let mut any = false;
        for b in set.pieces() {
            any |= piece_unbounded(b, &f).ok()?;
        }
        Some(any)
    }

    #[test]
    fn boundedness_examples() {
        // 0 <= k <= i: bounded for fixed i.
        let p = vec![ge(0, 1, 0, false), ge(1, -1, 0, false)];
        assert_eq!(unbounded_of(&p, &proj_i(), 2), Some(false));
        // k >= i: unbounded.
        let p = vec![ge(-1, 1, 0, false)];
        assert_eq!(unbounded_of(&p, &proj_i(), 2), Some(true));
        // k >= i and 2k = 2i + 1: no integer point, so not reported.
        let p = vec![ge(-1, 1, 0, false), ge(-2, 2, -1, true)];
        assert_eq!(unbounded_of(&p, &proj_i(), 2), Some(false));
        // k = 2i: one point per i.
        let p = vec![ge(2, -1, 0, true)];
        assert_eq!(unbounded_of(&p, &proj_i(), 2), Some(false));
    }

    proptest! {
        /// If a fiber {k : (i, k) in P} has a point far away (|k| >= 50 for
        /// some small i), the piece must be reported unbounded; if reported
        /// unbounded, a point of a small fiber leads to far ones. (With
        /// coefficients <= 2 and constants <= 4, bounded fibers stay within
        /// |k| <= 20 for |i| <= 5.)
        #[test]
        fn boundedness_agrees_with_enumeration(
            cons in proptest::collection::vec((-2i64..=2, -2i64..=2, -4i64..=4, proptest::bool::weighted(0.2)), 1..4)
        ) {
            let piece: Vec<Constraint> = cons.iter().map(|&(a, b, c, e)| ge(a, b, c, e)).collect();
            let verdict = unbounded_of(&piece, &proj_i(), 2);
            let d = set_of(&piece, 2).expect("rows of the right length");
            let (mut far, mut near) = (false, false);
            for i in -5i64..=5 {
                for k in -60i64..=60 {
                    if d.contains(&[], &[i, k]) {
                        far |= k.abs() >= 50;
                        near |= k.abs() < 50;
                    }
                }
            }
            if far {
                prop_assert_eq!(verdict, Some(true));
            }
            // Conversely, an unbounded fiber holds, with a point `(i, k)`,
            // every `(i, k ± t)` along its ray: from a near point, far ones.
            if verdict == Some(true) && near {
                prop_assert!(far);
            }
        }
    }
}
