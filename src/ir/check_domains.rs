//! Domain checks of a lowered program: every output and local defined over
//! its whole domain (no top-level restriction excluding points), `case`
//! pieces disjoint and covering, affine reads inside the read variable's
//! domain, reduction bodies bounded.
//!
//! Owns the checks and their messages. Must not know about the AST or
//! anything after the IR.
//!
//! Method (until the `poly` library lands on `main`; see the report of the
//! `front` branch):
//! - Coverage, overlap and out-of-domain reads are checked by *exact
//!   enumeration for small parameter values*: every parameter valuation in
//!   a small box that satisfies the context, and every index point in a box
//!   around the domains. Every error reported carries a concrete witness
//!   (the point and the parameter values), so no valid program is ever
//!   rejected; a violation that appears only for larger parameters (or
//!   outside the box) is not found. The exact polyhedral version replaces
//!   `enumerate` with `poly` subset/emptiness tests.
//! - Boundedness of reduction bodies is decided exactly over the rationals:
//!   the fiber of a body domain piece over a fixed result point is bounded
//!   iff its recession cone `{d : A d >= 0, E d = 0, proj(d) = 0}` is `{0}`,
//!   tested with Fourier–Motzkin elimination in checked `i128` arithmetic
//!   (pieces that are rationally empty are skipped).

use std::collections::HashSet;

use super::types::*;
use crate::diag::{Diagnostic, Span};

/// Runs every domain check on every equation of `p`.
pub fn check_program(p: &Program) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    for s in &p.systems {
        check_system(s, &mut errors);
    }
    errors
}

/// Upper bound on the index points enumerated for one node and one
/// parameter valuation.
const MAX_POINTS: usize = 200_000;

fn check_system(s: &System, errors: &mut Vec<Diagnostic>) {
    let valuations = parameter_valuations(s);
    for eq in &s.equations {
        let var = &s.vars[eq.var];
        // Boundedness (exact, independent of parameter values).
        bounded_walk(s, &eq.expr, &var.domain, errors);
        let mut w = Walker {
            sys: s,
            eq,
            params: Vec::new(),
            radius: 0,
            errors,
            reported: HashSet::new(),
        };
        for vals in &valuations {
            w.params = vals.clone();
            w.radius = radius(vals, &var.domain);
            let Some(pts) = enumerate(&var.domain, vals, w.radius) else {
                continue;
            };
            w.walk(&eq.expr, &pts, false);
        }
    }
}

/// Parameter values to try: each parameter in `0..=m` (m shrinking with the
/// number of parameters), keeping those that satisfy the context.
fn parameter_valuations(s: &System) -> Vec<Vec<i64>> {
    let n = s.params.len();
    let m: i64 = match n {
        0 => 0,
        1 => 10,
        2 => 6,
        3 => 4,
        4 => 3,
        _ => 2,
    };
    let mut out = Vec::new();
    let mut cur = vec![0i64; n];
    loop {
        if s.context.contains(&[], &cur) {
            out.push(cur.clone());
        }
        // Next tuple in lexicographic order.
        let mut k = n;
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            if cur[k] < m {
                cur[k] += 1;
                for c in cur.iter_mut().skip(k + 1) {
                    *c = 0;
                }
                break;
            }
        }
    }
}

/// Box radius for index points: large enough for domains bounded by small
/// multiples of the parameters plus the constants written.
fn radius(params: &[i64], d: &Domain) -> i64 {
    let pmax = params.iter().copied().map(i64::abs).max().unwrap_or(0);
    let cmax = d
        .pieces
        .iter()
        .flatten()
        .map(|c| c.aff.constant.saturating_abs())
        .max()
        .unwrap_or(0);
    (2 * pmax + 4 + cmax).min(40)
}

/// All integer points of `d` with every coordinate in `[-r, r]`, or `None`
/// when there would be too many to enumerate.
fn enumerate(d: &Domain, params: &[i64], r: i64) -> Option<Vec<Vec<i64>>> {
    let n = d.n_dims();
    let side = usize::try_from(2 * r + 1).ok()?;
    let total = side.checked_pow(u32::try_from(n).ok()?)?;
    if total > MAX_POINTS {
        return None;
    }
    let mut out = Vec::new();
    let mut p = vec![-r; n];
    loop {
        if d.contains(&p, params) {
            out.push(p.clone());
        }
        let mut k = n;
        loop {
            if k == 0 {
                return Some(out);
            }
            k -= 1;
            if p[k] < r {
                p[k] += 1;
                for c in p.iter_mut().skip(k + 1) {
                    *c = -r;
                }
                break;
            }
        }
    }
}

fn apply(f: &[AffExpr], x: &[i64], params: &[i64]) -> Option<Vec<i64>> {
    f.iter().map(|a| a.eval(x, params)).collect()
}

struct Walker<'a> {
    sys: &'a System,
    eq: &'a Equation,
    params: Vec<i64>,
    radius: i64,
    errors: &'a mut Vec<Diagnostic>,
    /// (node span, check kind) already reported: one witness per node.
    reported: HashSet<(usize, usize, u8)>,
}

impl Walker<'_> {
    fn report(&mut self, span: Span, kind: u8, d: Diagnostic) {
        if self.reported.insert((span.start, span.end, kind)) {
            self.errors.push(d);
        }
    }

    /// `i = 1, j = 2 with N = 3`.
    fn witness(&self, names: &[String], x: &[i64]) -> String {
        let pt: Vec<String> = names
            .iter()
            .zip(x)
            .map(|(n, v)| format!("{n} = {v}"))
            .collect();
        let ps: Vec<String> = self
            .sys
            .params
            .iter()
            .zip(&self.params)
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

    /// Walks `e` evaluated at the points `pts` of the equation's space
    /// (`in_body` false) or of a reduction body's space (`in_body` true:
    /// there, reads and restrictions shape the body domain instead of
    /// being errors).
    fn walk(&mut self, e: &Expr, pts: &[Vec<i64>], in_body: bool) {
        let names = self.eq.indices.clone();
        match &e.kind {
            ExprKind::Read { var, access } => {
                if in_body {
                    return;
                }
                let v = &self.sys.vars[*var];
                for x in pts {
                    let inside = apply(access, x, &self.params)
                        .map(|y| v.domain.contains(&y, &self.params))
                        .unwrap_or(false);
                    if !inside {
                        let y = apply(access, x, &self.params).unwrap_or_default();
                        let ys: Vec<String> = y.iter().map(|c| c.to_string()).collect();
                        let msg = format!(
                            "read of `{}[{}]` outside the domain of `{}` {}",
                            v.name,
                            ys.join(", "),
                            v.name,
                            self.witness(&names, x)
                        );
                        let d = Diagnostic::error(msg, e.span)
                            .with_label("reads outside the declared domain")
                            .with_secondary(v.span, "declared here");
                        self.report(e.span, 0, d);
                        break;
                    }
                }
            }
            ExprKind::Restrict(d, x) => {
                let mut sub = Vec::new();
                for p in pts {
                    if d.contains(p, &self.params) {
                        sub.push(p.clone());
                    } else if !in_body {
                        let msg = format!(
                            "`{}` is only partly defined: `{}` is excluded by this restriction ({})",
                            self.sys.vars[self.eq.var].name,
                            self.lhs(p),
                            self.witness(&names, p)
                        );
                        let diag = Diagnostic::error(msg, e.span)
                            .with_label("the equation is undefined outside this restriction")
                            .with_secondary(self.sys.vars[self.eq.var].span, "declared domain");
                        self.report(e.span, 1, diag);
                    }
                }
                self.walk(x, &sub, in_body);
            }
            ExprKind::Case(pieces) => {
                let mut subs: Vec<Vec<Vec<i64>>> = vec![Vec::new(); pieces.len()];
                for p in pts {
                    let hits: Vec<usize> = pieces
                        .iter()
                        .enumerate()
                        .filter(|(_, (d, _))| d.contains(p, &self.params))
                        .map(|(k, _)| k)
                        .collect();
                    if hits.len() > 1 {
                        let msg = format!(
                            "`case` pieces {} and {} overlap {}",
                            hits[0] + 1,
                            hits[1] + 1,
                            self.witness(&names_for(in_body, &names, p.len()), p)
                        );
                        let d = Diagnostic::error(msg, e.span)
                            .with_label("pieces must be disjoint")
                            .with_secondary(pieces[hits[0]].1.span, "this piece")
                            .with_secondary(pieces[hits[1]].1.span, "and this one");
                        self.report(e.span, 2, d);
                    } else if hits.is_empty() && !in_body {
                        let msg = format!(
                            "`case` does not cover `{}` ({}): no piece contains this point",
                            self.lhs(p),
                            self.witness(&names, p)
                        );
                        let d = Diagnostic::error(msg, e.span)
                            .with_label("pieces leave a gap")
                            .with_secondary(self.sys.vars[self.eq.var].span, "declared domain");
                        self.report(e.span, 3, d);
                    }
                    for k in hits {
                        subs[k].push(p.clone());
                    }
                }
                for ((_, x), sub) in pieces.iter().zip(&subs) {
                    self.walk(x, sub, in_body);
                }
            }
            ExprKind::Reduce(r) => {
                let outer: HashSet<&Vec<i64>> = pts.iter().collect();
                let Some(body_pts) = enumerate(&r.body_domain, &self.params, self.radius) else {
                    return;
                };
                let sub: Vec<Vec<i64>> = body_pts
                    .into_iter()
                    .filter(|y| {
                        apply(&r.proj, y, &self.params)
                            .map(|x| outer.contains(&x))
                            .unwrap_or(false)
                    })
                    .collect();
                self.walk(&r.body, &sub, true);
            }
            ExprKind::Categorical(c) => {
                let mut sub = Vec::new();
                for x in pts {
                    for k in -self.radius..=self.radius {
                        let mut y = x.clone();
                        y.push(k);
                        if c.domain.contains(&y, &self.params) {
                            sub.push(y);
                        }
                    }
                }
                self.walk(&c.weight, &sub, true);
            }
            ExprKind::IndirectRead { indices: xs, .. }
            | ExprKind::Builtin(_, xs)
            | ExprKind::External(_, xs)
            | ExprKind::Random(_, xs, _) => {
                for x in xs {
                    self.walk(x, pts, in_body);
                }
            }
            ExprKind::Unary(_, x) => self.walk(x, pts, in_body),
            ExprKind::Binary(_, a, b) => {
                self.walk(a, pts, in_body);
                self.walk(b, pts, in_body);
            }
            ExprKind::If(a, b, c) => {
                self.walk(a, pts, in_body);
                self.walk(b, pts, in_body);
                self.walk(c, pts, in_body);
            }
            ExprKind::IntConst(_)
            | ExprKind::FloatConst(_)
            | ExprKind::BoolConst(_)
            | ExprKind::Index(_) => {}
        }
    }
}

/// Names for the coordinates of a point: the equation's indices, or
/// positional names inside a reduction body.
fn names_for(in_body: bool, eq_names: &[String], n: usize) -> Vec<String> {
    if in_body || eq_names.len() != n {
        (0..n).map(|k| format!("x{k}")).collect()
    } else {
        eq_names.to_vec()
    }
}

// ---------------------------------------------------------------- boundedness

/// Checks every reduction in `e` (evaluated over `ctx`, a domain of the
/// current real space) for a bounded body.
fn bounded_walk(s: &System, e: &Expr, ctx: &Domain, errors: &mut Vec<Diagnostic>) {
    match &e.kind {
        ExprKind::Reduce(r) => {
            // The body points that matter: proj(y) in ctx.
            let Some(pulled) = preimage(ctx, &r.proj, &r.dims) else {
                return;
            };
            let np = s.params.len();
            let mut unbounded = false;
            'pieces: for bp in &r.body_domain.pieces {
                for cp in &pulled.pieces {
                    for xp in &s.context.pieces {
                        let mut piece: Vec<AffConstraint> = bp.clone();
                        piece.extend(cp.iter().cloned());
                        let ctx_cons: Vec<AffConstraint> = xp
                            .iter()
                            .map(|c| AffConstraint {
                                aff: AffExpr {
                                    idx: vec![0; r.dims.len()],
                                    par: c.aff.par.clone(),
                                    constant: c.aff.constant,
                                },
                                kind: c.kind,
                            })
                            .collect();
                        piece.extend(ctx_cons);
                        if piece_unbounded(&piece, &r.proj, r.dims.len(), np) == Some(true) {
                            unbounded = true;
                            break 'pieces;
                        }
                    }
                }
            }
            if unbounded {
                errors.push(
                    Diagnostic::error(
                        "the body of this reduction is unbounded: for a fixed result point, its domain has infinitely many points",
                        e.span,
                    )
                    .with_label("bound the new indices with a restriction, e.g. `{: 0 <= k < N} : ...`"),
                );
            }
            let inner = Domain {
                dims: r.dims.clone(),
                pieces: intersect_pieces(&r.body_domain.pieces, &pulled.pieces),
            };
            bounded_walk(s, &r.body, &inner, errors);
        }
        ExprKind::Restrict(d, x) => {
            let inner = Domain {
                dims: ctx.dims.clone(),
                pieces: intersect_pieces(&ctx.pieces, &d.pieces),
            };
            bounded_walk(s, x, &inner, errors);
        }
        ExprKind::Case(pieces) => {
            for (d, x) in pieces {
                let inner = Domain {
                    dims: ctx.dims.clone(),
                    pieces: intersect_pieces(&ctx.pieces, &d.pieces),
                };
                bounded_walk(s, x, &inner, errors);
            }
        }
        ExprKind::Categorical(c) => {
            let n_outer = ctx.dims.len();
            let mut dims = ctx.dims.clone();
            dims.push(c.index.clone());
            let lifted: Vec<Vec<AffConstraint>> = ctx
                .pieces
                .iter()
                .map(|p| {
                    p.iter()
                        .map(|k| {
                            let mut a = k.aff.clone();
                            a.idx.push(0);
                            AffConstraint {
                                aff: a,
                                kind: k.kind,
                            }
                        })
                        .collect()
                })
                .collect();
            let proj: Vec<AffExpr> = (0..n_outer)
                .map(|k| AffExpr::index(n_outer + 1, s.params.len(), k))
                .collect();
            let mut unbounded = false;
            for bp in &c.domain.pieces {
                for lp in &lifted {
                    let mut piece = bp.clone();
                    piece.extend(lp.iter().cloned());
                    if piece_unbounded(&piece, &proj, n_outer + 1, s.params.len()) == Some(true) {
                        unbounded = true;
                    }
                }
            }
            if unbounded {
                errors.push(
                    Diagnostic::error(
                        format!(
                            "the domain of `{}` in this `categorical` is unbounded",
                            c.index
                        ),
                        e.span,
                    )
                    .with_label(
                        "bound the drawn index with a restriction, e.g. `{: 0 <= k < K} : ...`",
                    ),
                );
            }
            let inner = Domain {
                dims,
                pieces: intersect_pieces(&c.domain.pieces, &lifted),
            };
            bounded_walk(s, &c.weight, &inner, errors);
        }
        ExprKind::IndirectRead { indices: xs, .. }
        | ExprKind::Builtin(_, xs)
        | ExprKind::External(_, xs)
        | ExprKind::Random(_, xs, _) => {
            for x in xs {
                bounded_walk(s, x, ctx, errors);
            }
        }
        ExprKind::Unary(_, x) => bounded_walk(s, x, ctx, errors),
        ExprKind::Binary(_, a, b) => {
            bounded_walk(s, a, ctx, errors);
            bounded_walk(s, b, ctx, errors);
        }
        ExprKind::If(a, b, c) => {
            bounded_walk(s, a, ctx, errors);
            bounded_walk(s, b, ctx, errors);
            bounded_walk(s, c, ctx, errors);
        }
        _ => {}
    }
}

fn intersect_pieces(a: &[Vec<AffConstraint>], b: &[Vec<AffConstraint>]) -> Vec<Vec<AffConstraint>> {
    let mut out = Vec::new();
    for p in a {
        for q in b {
            let mut r = p.clone();
            r.extend(q.iter().cloned());
            out.push(r);
        }
    }
    out
}

/// `{ y : f(y) ∈ d }` for `f` from a space with `dims` (`None` on overflow).
fn preimage(d: &Domain, f: &[AffExpr], dims: &[String]) -> Option<Domain> {
    let n = dims.len();
    let mut pieces = Vec::new();
    for p in &d.pieces {
        let mut q = Vec::new();
        for c in p {
            let mut a = AffExpr {
                idx: vec![0; n],
                par: c.aff.par.clone(),
                constant: c.aff.constant,
            };
            for (coef, fk) in c.aff.idx.iter().zip(f) {
                if *coef == 0 {
                    continue;
                }
                for (t, v) in fk.idx.iter().enumerate() {
                    a.idx[t] = a.idx[t].checked_add(coef.checked_mul(*v)?)?;
                }
                for (t, v) in fk.par.iter().enumerate() {
                    a.par[t] = a.par[t].checked_add(coef.checked_mul(*v)?)?;
                }
                a.constant = a.constant.checked_add(coef.checked_mul(fk.constant)?)?;
            }
            q.push(AffConstraint {
                aff: a,
                kind: c.kind,
            });
        }
        pieces.push(q);
    }
    Some(Domain {
        dims: dims.to_vec(),
        pieces,
    })
}

/// A linear inequality `coeffs · x + constant >= 0` over the rationals.
type Ineq = (Vec<i128>, i128);

/// Is the piece (over `n` indices and `np` parameters) rationally
/// non-empty with a non-zero recession direction `d` (over the indices,
/// with parameters fixed) such that `proj(d) = 0`? `None` when the
/// arithmetic overflows or the elimination grows too large.
fn piece_unbounded(piece: &[AffConstraint], proj: &[AffExpr], n: usize, np: usize) -> Option<bool> {
    // Non-emptiness over (indices, parameters).
    let mut sys: Vec<Ineq> = Vec::new();
    for c in piece {
        let coeffs: Vec<i128> = c
            .aff
            .idx
            .iter()
            .chain(&c.aff.par)
            .map(|&v| i128::from(v))
            .collect();
        push_constraint(&mut sys, coeffs, i128::from(c.aff.constant), c.kind);
    }
    if !fm_feasible(sys, n + np)? {
        return Some(false);
    }
    // The recession cone over the indices.
    let mut cone: Vec<Ineq> = Vec::new();
    for c in piece {
        let coeffs: Vec<i128> = c.aff.idx.iter().map(|&v| i128::from(v)).collect();
        push_constraint(&mut cone, coeffs, 0, c.kind);
    }
    for f in proj {
        let coeffs: Vec<i128> = f.idx.iter().map(|&v| i128::from(v)).collect();
        push_constraint(&mut cone, coeffs, 0, ConstraintKind::Eq);
    }
    for t in 0..n {
        for s in [1i128, -1] {
            let mut sys = cone.clone();
            let mut coeffs = vec![0i128; n];
            coeffs[t] = s;
            sys.push((coeffs, -1));
            if fm_feasible(sys, n)? {
                return Some(true);
            }
        }
    }
    Some(false)
}

/// Adds `coeffs · x + constant >= 0` (and `<= 0` for an equality), each
/// divided by the gcd of its coefficients with the constant rounded down
/// (valid for integer points; makes `2k = 2i + 1` infeasible).
fn push_constraint(sys: &mut Vec<Ineq>, coeffs: Vec<i128>, constant: i128, kind: ConstraintKind) {
    if kind == ConstraintKind::Eq {
        let neg: Vec<i128> = coeffs.iter().map(|c| -c).collect();
        sys.push(tighten(neg, -constant));
    }
    sys.push(tighten(coeffs, constant));
}

fn tighten(coeffs: Vec<i128>, constant: i128) -> Ineq {
    let g = coeffs.iter().fold(0, |g, &x| gcd(g, x));
    if g > 1 {
        (
            coeffs.iter().map(|x| x / g).collect(),
            constant.div_euclid(g),
        )
    } else {
        (coeffs, constant)
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

/// Feasibility of `{ x : coeffs · x + c >= 0 for all }` by Fourier–Motzkin
/// elimination with gcd tightening: `false` means there is no integer
/// point; `true` means there is a rational one. `None` on overflow or when
/// the system grows beyond a fixed size.
fn fm_feasible(mut sys: Vec<Ineq>, n: usize) -> Option<bool> {
    for v in 0..n {
        let mut pos = Vec::new();
        let mut neg = Vec::new();
        let mut rest = Vec::new();
        for c in sys {
            match c.0[v].signum() {
                1 => pos.push(c),
                -1 => neg.push(c),
                _ => rest.push(c),
            }
        }
        for p in &pos {
            for q in &neg {
                let a = p.0[v];
                let b = q.0[v].checked_neg()?;
                let mut coeffs = Vec::with_capacity(n);
                for k in 0..n {
                    coeffs.push(p.0[k].checked_mul(b)?.checked_add(q.0[k].checked_mul(a)?)?);
                }
                let c = p.1.checked_mul(b)?.checked_add(q.1.checked_mul(a)?)?;
                let g = coeffs.iter().fold(0, |g, &x| gcd(g, x));
                let (coeffs, c) = if g > 1 {
                    // Dividing by the gcd and rounding the constant down is
                    // valid for every integer point (a Chvátal–Gomory cut),
                    // so "infeasible" still means "no integer point"; the
                    // cone tests are scale-invariant.
                    (coeffs.iter().map(|x| x / g).collect(), c.div_euclid(g))
                } else {
                    (coeffs, c)
                };
                rest.push((coeffs, c));
            }
        }
        if rest.len() > 20_000 {
            return None;
        }
        rest.sort();
        rest.dedup();
        sys = rest;
    }
    Some(sys.iter().all(|(_, c)| *c >= 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ge(i: i64, k: i64, c: i64, eq: bool) -> AffConstraint {
        AffConstraint {
            aff: AffExpr {
                idx: vec![i, k],
                par: vec![],
                constant: c,
            },
            kind: if eq {
                ConstraintKind::Eq
            } else {
                ConstraintKind::Ge
            },
        }
    }

    fn proj_i() -> Vec<AffExpr> {
        vec![AffExpr::index(2, 0, 0)]
    }

    #[test]
    fn boundedness_examples() {
        // 0 <= k <= i: bounded for fixed i.
        let p = vec![ge(0, 1, 0, false), ge(1, -1, 0, false)];
        assert_eq!(piece_unbounded(&p, &proj_i(), 2, 0), Some(false));
        // k >= i: unbounded.
        let p = vec![ge(-1, 1, 0, false)];
        assert_eq!(piece_unbounded(&p, &proj_i(), 2, 0), Some(true));
        // k >= i and 2k = 2i + 1: no integer point, so not reported.
        let p = vec![ge(-1, 1, 0, false), ge(-2, 2, -1, true)];
        assert_eq!(piece_unbounded(&p, &proj_i(), 2, 0), Some(false));
        // k = 2i: one point per i.
        let p = vec![ge(2, -1, 0, true)];
        assert_eq!(piece_unbounded(&p, &proj_i(), 2, 0), Some(false));
    }

    proptest! {
        /// If a fiber {k : (i, k) in P} has a point far away (|k| >= 50 for
        /// some small i), the piece must be reported unbounded; if reported
        /// bounded, no fiber has a far point. (With coefficients <= 2 and
        /// constants <= 4, bounded fibers stay within |k| <= 20 for |i| <= 5.)
        #[test]
        fn boundedness_agrees_with_enumeration(
            cons in proptest::collection::vec((-2i64..=2, -2i64..=2, -4i64..=4, proptest::bool::weighted(0.2)), 1..4)
        ) {
            let piece: Vec<AffConstraint> = cons.iter().map(|&(a, b, c, e)| ge(a, b, c, e)).collect();
            let verdict = piece_unbounded(&piece, &proj_i(), 2, 0);
            let d = Domain { dims: vec!["i".into(), "k".into()], pieces: vec![piece.clone()] };
            let mut far = false;
            for i in -5i64..=5 {
                for k in -60i64..=60 {
                    if k.abs() >= 50 && d.contains(&[i, k], &[]) {
                        far = true;
                    }
                }
            }
            if far {
                prop_assert_eq!(verdict, Some(true));
            }
            if verdict == Some(false) {
                prop_assert!(!far);
            }
        }
    }
}
