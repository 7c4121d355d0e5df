//! Rewrite 10b: several data-selected bindings out of a loop by peeling
//! its first iteration ([`peel_bindings`]).
//!
//! Must not know about: facts, the solver, accumulators.

use super::affine::{mentions, subst_affine};
use super::hoist::{nonempty_cond, Guard};
use super::unswitch::invariant_data;
use super::walk::*;
use super::*;

/// Moves the selections of a loop whose body is several data-selected
/// bindings out of it, by running its first iteration on its own.
///
/// Rule: `L = for (v = lo; v <= hi; v++) { B_1 ... B_k }` (`k >= 2`, `lo`
/// one affine term with divisor 1), where every `B_j = Bind u_j := s_j in
/// [l_j, h_j] if (true) { T_j }` is known non-empty (`l_j <= h_j` proved
/// where it stands: [`Binding::nonempty`]), and `s_j` is a selection whose
/// range is `[l_j, h_j]` itself and whose parts (value, bounds), like
/// `l_j` and `h_j`, mention neither `v` nor a variable bound in the body,
/// read nothing the body writes and cannot fail (constants, affine values,
/// locals, affine loads, comparisons). Then `L` becomes
///
/// ```text
/// if (lo <= hi) {
///   Bind u'_1 := s_1 in [l_1, h_1] { T_1[v := lo];
///     ...
///       Bind u'_k := s_k in [l_k, h_k] { T_k[v := lo];
///         for (v = lo + 1; v <= hi; v++) { T_1 ... T_k } } ... }
/// }
/// ```
///
/// with fresh variables `u'_j` for the `u_j` (two bindings of one loop
/// often share their variable).
///
/// Why this is exact: each `B_j` either fails (its selection's value lies
/// outside `[l_j, h_j]`) or runs `T_j` with `u_j` in range — its range is
/// not empty and its guard is `true`. Its selection has the same value at
/// every iteration (nothing it reads changes in `L`), so it fails at the
/// first iteration or never. The original therefore runs `s_1, T_1(lo),
/// s_2, T_2(lo), ..., s_k, T_k(lo)` and then, for each later `v`, `T_1(v)
/// ... T_k(v)` with the same selections evaluated again to the same
/// values, which neither fail nor have effects; the rewritten loop runs
/// exactly that sequence without the re-evaluations. Every failure
/// (of a selection or of a `T_j`) happens at the same step with the same
/// state. An empty loop runs nothing in either form. What it buys: DMM's
/// count update `for a { Bind k := znew[d − 1] { n[k][a] += X[d − 1][a] }
/// Bind k := z[d] { n[k][a] −= X[d][a] } }` loads and checks the two
/// labels once per document instead of once per term.
///
/// Returns the number of loops peeled.
pub fn peel_bindings(f: &mut Function) -> usize {
    let mut p = Peel {
        peeled: 0,
        names: std::mem::take(&mut f.loop_vars),
    };
    f.body = rewrite_stmts(&mut p, std::mem::take(&mut f.body));
    f.loop_vars = p.names;
    p.peeled
}

struct Peel {
    peeled: usize,
    /// The function's loop variable names (fresh ones appended).
    names: Vec<String>,
}

impl StmtRewrite for Peel {
    fn on_for(&mut self, l: ForLoop, out: &mut Vec<Stmt>) {
        let l = l.map_body(|b| rewrite_stmts(self, b));
        match self.peel(&l) {
            Some(s) => {
                self.peeled += 1;
                out.extend(s);
            }
            None => out.push(Stmt::For(l)),
        }
    }
}

impl Peel {
    /// The rewritten loop (see [`peel_bindings`]), or `None`.
    fn peel(&mut self, l: &ForLoop) -> Option<Vec<Stmt>> {
        let [lo] = l.lower.terms.as_slice() else {
            return None;
        };
        if lo.div != 1 || l.body.len() < 2 {
            return None;
        }
        let binds: Vec<&Binding> = l
            .body
            .iter()
            .map(|s| match s {
                Stmt::Bind(b) => Some(&**b),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let mut inner = vec![l.var];
        bound_vars(&l.body, &mut inner);
        let writes = Writes::of(&l.body);
        for b in &binds {
            if !self.qualifies(b, &inner, &writes) {
                return None;
            }
        }
        let lo_aff = lo.expr.clone();
        let next = Bound::aff(lo_aff.clone().offset(1)?);
        // fresh binding variables, substituted into the bodies
        let mut fresh = Vec::with_capacity(binds.len());
        let mut rest = Vec::new();
        let mut first = Vec::with_capacity(binds.len());
        for b in &binds {
            let u = self.fresh(b.var);
            fresh.push(u);
            let mut body = b.body.clone();
            let to = Affine::var(u);
            affines_stmts(&mut body, &mut |x| {
                *x = subst_affine(x, b.var, &to)?;
                Some(())
            })?;
            let mut once = body.clone();
            affines_stmts(&mut once, &mut |x| {
                *x = subst_affine(x, l.var, &lo_aff)?;
                Some(())
            })?;
            rest.extend(body);
            first.push(once);
        }
        let mut nest = vec![Stmt::For(ForLoop {
            var: l.var,
            lower: next,
            upper: l.upper.clone(),
            parallel: false,
            body: rest,
        })];
        for ((b, u), once) in binds.iter().zip(&fresh).zip(first).rev() {
            let mut body = once;
            body.append(&mut nest);
            // Out of the loop, the facts that proved `l_j <= h_j` may no
            // longer hold: tested again (it holds when the loop runs).
            nest = vec![Stmt::from(Binding {
                var: *u,
                lower: b.lower.clone(),
                upper: b.upper.clone(),
                guard: b.guard.clone(),
                value: b.value.clone(),
                body,
                nonempty: false,
            })];
        }
        match nonempty_cond(&l.lower, &l.upper) {
            Guard::Always => Some(nest),
            Guard::Never => Some(Vec::new()),
            Guard::Cond(c) => Some(vec![Stmt::If {
                cond: c,
                then: nest,
                els: Vec::new(),
            }]),
        }
    }

    /// `b` qualifies (see [`peel_bindings`]) in a loop binding `inner` and
    /// writing `writes`.
    fn qualifies(&self, b: &Binding, inner: &[LoopVar], writes: &Writes) -> bool {
        let Expr::Selection(s) = &b.value else {
            return false;
        };
        let fixed = |e: &Expr| invariant_data(e, inner, writes);
        let bound_fixed = |bd: &Bound| {
            bd.terms
                .iter()
                .all(|t| inner.iter().all(|&x| !mentions(&t.expr, x)))
        };
        let mut own = Vec::new();
        bound_vars(&b.body, &mut own);
        b.nonempty
            && matches!(b.guard, Expr::Bool(true))
            && b.lower.is_value_of(&s.lower)
            && b.upper.is_value_of(&s.upper)
            && bound_fixed(&b.lower)
            && bound_fixed(&b.upper)
            && [&s.value, &s.lower, &s.upper].into_iter().all(fixed)
            && !own.contains(&b.var)
    }

    /// A new loop variable named after `v`.
    fn fresh(&mut self, v: LoopVar) -> LoopVar {
        let base = self.names[v.0].clone();
        let mut k = 2;
        let mut name = format!("{base}_{k}");
        while self.names.contains(&name) {
            k += 1;
            name = format!("{base}_{k}");
        }
        self.names.push(name);
        LoopVar(self.names.len() - 1)
    }
}
