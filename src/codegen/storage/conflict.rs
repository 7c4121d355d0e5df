//! The conflict test of the successive-modulo analysis: may two distinct
//! points `p != p'` of a variable `X` share a cell while `p` is still to
//! be read?
//!
//! Must not know about: the loop AST, how the moduli are chosen (that is
//! `super`'s), the JIT.
//!
//! # The conflict set
//! With `w(p)` the equation statement instance that writes `p` (equation
//! statements iterate over the variable's own indices: `w(p) = p` in the
//! statement `S` whose domain piece holds `p`), `θ_S` its schedule rows and
//! `T[q]` an instance of a statement that reads `X[f(q, ex)]` (`ex`: the
//! expression-local indices of a categorical draw, free integers; a `None`
//! coordinate of `f`: free, any value of `X`'s domain), a conflict is an
//! integer point `(p, p', q, ex, params)` with
//! `p ∈ D_S, p' ∈ D_S', q ∈ D_T, p_k = f_k(q, ex)` for every affine
//! coordinate, and
//! `θ_S(p) ≺ θ_S'(p') ≺ θ_T(q)`:
//! `p` is written, then `p'`, then `p` is read. The strict lexicographic
//! order `a ≺ b` on integer time vectors is the union over levels `l` of
//! `{a_k = b_k for k < l, b_l − a_l − 1 >= 0}`. Two instances of one
//! statement never share a time vector (the schedule is sequential:
//! `schedule::check::is_sequential`, verified by the driver for every
//! schedule it returns), so equal times mean the same instance: `w(p')`
//! at the very time of the read `q` is the statement reading before it
//! writes (`X[k, i] = X[k, i-1] + ...` may overwrite the cell it reads):
//! no conflict. Instances of *different* statements may share a time
//! vector (the scanner then runs them in an order this module does not
//! assume), so between different statements the order is taken
//! non-strictly (one more level: all rows equal): a superset.
//!
//! The successive-modulo test for dimension `d` with the dimensions `E`
//! already processed adds `p_e = p'_e (e ∈ E)` and `±(p_d − p'_d) >= m`
//! (two signs, two tests) and asks whether the set is empty for every
//! parameter value of the context (the parameters are variables of the
//! system, the context is part of every statement domain).
//!
//! # The solver questions
//! The levels are explored depth first: the prefix `{rows < l equal}` only
//! shrinks as `l` grows, so a rationally infeasible prefix cuts every
//! deeper level. Each system is a prepared tableau
//! ([`solver::Prepared::extended`]): a level's is a copy of its parent's
//! with one row added, not a tableau built from scratch. Leaves are
//! decided by rational feasibility first (a quick filter, known from the
//! way down), then by integer emptiness. Every solver failure (an
//! overflow, a spent work budget) answers "may conflict": conservative.

use crate::deps::{Access, SystemSchedule};
use crate::poly::solver::{self, Prepared, System};

/// One variable's writers, readers and schedule, for the conflict tests.
pub(super) struct VarModel<'a> {
    /// Number of dimensions of the variable.
    pub(super) n: usize,
    /// Number of parameters of the system.
    pub(super) m: usize,
    /// The equation statements writing it (one per convex domain piece).
    pub(super) writers: Vec<usize>,
    /// Its read accesses (affine or data-dependent).
    pub(super) reads: Vec<&'a Access>,
    pub(super) sched: &'a SystemSchedule,
}

/// A statement instance's place in a conflict system: the statement, its
/// number of iterators and the column of its first iterator.
#[derive(Clone, Copy)]
struct Inst {
    stmt: usize,
    k: usize,
    off: usize,
}

/// Column layout of one conflict system: `p` at 0, `p'` at `n`, the
/// reader's iterators at `2n`, its expression-local indices after them,
/// the parameters at `par`; `nv` variables in all.
struct Layout {
    par: usize,
    nv: usize,
}

impl Layout {
    /// `row` (over `k` iterators, the parameters, the constant) with the
    /// iterators placed at column `off`: a row over the system's `nv`
    /// variables and the constant; `None` on a length mismatch.
    fn embed(&self, row: &[i64], k: usize, off: usize, m: usize) -> Option<Vec<i64>> {
        if row.len() != k + m + 1 || off + k > self.par {
            return None;
        }
        let mut out = vec![0i64; self.nv + 1];
        out[off..off + k].copy_from_slice(&row[..k]);
        out[self.par..self.par + m].copy_from_slice(&row[k..k + m]);
        out[self.nv] = row[k + m];
        Some(out)
    }
}

/// `a − b` entrywise, checked.
fn sub(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    a.iter().zip(b).map(|(x, y)| x.checked_sub(*y)).collect()
}

/// May the system have a rational point? (Errors: yes.)
fn maybe(sys: &Prepared) -> bool {
    !matches!(sys.rational_empty(), Ok(true))
}

/// `sys` with `eqs` and `ineqs` added (`None` on a solver error: the
/// caller answers "may conflict").
fn extended(sys: &Prepared, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> Option<Prepared> {
    sys.extended(eqs, ineqs).ok()
}

/// May the system, rationally non-empty, have an integer point? (Errors:
/// yes.)
fn maybe_integer(sys: &Prepared) -> bool {
    !matches!(solver::integer_sample(&sys.system()), Ok(None))
}

impl VarModel<'_> {
    /// May a conflicting pair `(p, p')` (see the module comment) have
    /// `p_e = p'_e` for every `e` in `equal` and `sign·(p_d − p'_d) >= modulus`
    /// for some `sign ∈ {+1, −1}`? `false` only when every such set is
    /// proven integer-empty.
    pub(super) fn may_conflict(&self, equal: &[usize], d: usize, modulus: i64) -> bool {
        for &s in &self.writers {
            for &s2 in &self.writers {
                for a in &self.reads {
                    for sign in [1i64, -1] {
                        match self.piece(s, s2, a, equal, d, sign, modulus) {
                            Some(false) => {}
                            _ => return true,
                        }
                    }
                }
            }
        }
        false
    }

    /// One conflict set: writers `s` (of `p`) and `s2` (of `p'`), the read
    /// `a`, the equalities and the distance along `d`. `Some(false)`: proven
    /// empty; `Some(true)`: may have a point; `None`: malformed input
    /// (treated as a conflict by the caller).
    #[allow(clippy::too_many_arguments)]
    fn piece(
        &self,
        s: usize,
        s2: usize,
        a: &Access,
        equal: &[usize],
        d: usize,
        sign: i64,
        modulus: i64,
    ) -> Option<bool> {
        let (n, m) = (self.n, self.m);
        let stmts = &self.sched.deps.stmts;
        let nq = stmts.get(a.stmt)?.dims.len();
        // Expression-local indices: the access's index space beyond the
        // statement's iterators.
        let n_space = a
            .map
            .iter()
            .flatten()
            .map(|f| f.n_dims())
            .max()
            .unwrap_or(nq);
        let nx = n_space.checked_sub(nq)?;
        let par = 2 * n + nq + nx;
        let lay = Layout { par, nv: par + m };
        if a.map.len() != n {
            return None;
        }
        let w = Inst {
            stmt: s,
            k: n,
            off: 0,
        };
        let w2 = Inst {
            stmt: s2,
            k: n,
            off: n,
        };
        let r = Inst {
            stmt: a.stmt,
            k: nq,
            off: 2 * n,
        };
        let mut base = System::new(lay.nv);
        for i in [w, w2, r] {
            let st = stmts.get(i.stmt)?;
            if st.dims.len() != i.k || st.domain.n_vars != i.k + m {
                return None;
            }
            for row in &st.domain.eqs {
                base.add_eq(lay.embed(row, i.k, i.off, m)?);
            }
            for row in &st.domain.ineqs {
                base.add_ineq(lay.embed(row, i.k, i.off, m)?);
            }
        }
        // The read: p_k = f_k(q, ex, params) for every affine coordinate.
        for (k, f) in a.map.iter().enumerate() {
            let Some(f) = f else { continue };
            if f.n_params() != m || f.n_dims() != nq + nx {
                return None;
            }
            let mut row = vec![0i64; lay.nv + 1];
            row[k] = 1;
            for (j, c) in f.dim_coeffs().iter().enumerate() {
                row[2 * n + j] = c.checked_neg()?;
            }
            for (j, c) in f.param_coeffs().iter().enumerate() {
                row[par + j] = c.checked_neg()?;
            }
            row[lay.nv] = f.constant_term().checked_neg()?;
            base.add_eq(row);
        }
        // p_e = p'_e for the processed dimensions.
        for &e in equal {
            let mut row = vec![0i64; lay.nv + 1];
            row[e] = 1;
            row[n + e] = -1;
            base.add_eq(row);
        }
        // sign·(p_d − p'_d) − modulus >= 0.
        let mut row = vec![0i64; lay.nv + 1];
        row[d] = sign;
        row[n + d] = -sign;
        row[lay.nv] = modulus.checked_neg()?;
        base.add_ineq(row);
        let base = Prepared::new(base).ok()?;
        if !maybe(&base) {
            return Some(false);
        }
        // θ(w) ≺ θ(w2), then θ(w2) ≺ θ(r).
        self.before(&lay, base, w, w2, &mut |sys| {
            self.before(&lay, sys, w2, r, &mut |leaf| Some(maybe_integer(&leaf)))
        })
    }

    /// Does `sys ∧ θ(x) ≺ θ(y)` (non-strictly when `x` and `y` are
    /// different statements: all rows equal is one more case) make `then`
    /// answer `true` for some level? The levels are explored with the
    /// equal prefix growing; a rationally infeasible prefix ends the walk.
    /// The systems are prepared tableaux, each level's a copy of the one
    /// before with its row added: no system is built from scratch.
    fn before(
        &self,
        lay: &Layout,
        mut sys: Prepared,
        x: Inst,
        y: Inst,
        then: &mut dyn FnMut(Prepared) -> Option<bool>,
    ) -> Option<bool> {
        let m = self.m;
        let rows_x = self.sched.schedule.rows.get(x.stmt)?;
        let rows_y = self.sched.schedule.rows.get(y.stmt)?;
        let n_t = self.sched.schedule.n_dims();
        if rows_x.len() != n_t || rows_y.len() != n_t {
            return None;
        }
        for l in 0..=n_t {
            if l == n_t {
                // All rows equal: the same instance when the statements
                // agree (no order), either order otherwise.
                if x.stmt != y.stmt && then(sys)? {
                    return Some(true);
                }
                break;
            }
            // θ_y,l − θ_x,l.
            let diff = sub(
                &lay.embed(&rows_y[l], y.k, y.off, m)?,
                &lay.embed(&rows_x[l], x.k, x.off, m)?,
            )?;
            let mut lt = diff.clone();
            let last = lt.len() - 1;
            lt[last] = lt[last].checked_sub(1)?;
            let strict = extended(&sys, &[], &[lt])?;
            if maybe(&strict) && then(strict)? {
                return Some(true);
            }
            sys = extended(&sys, &[diff], &[])?;
            if !maybe(&sys) {
                break;
            }
        }
        Some(false)
    }
}
