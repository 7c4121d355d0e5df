//! Variable elimination: Fourier–Motzkin with integer tightening, exact
//! elimination through equalities, and the exactness test of the integer
//! projection.
//!
//! Owns: eliminating variable columns from a system of rows (see
//! `constraint` for the layout) and deciding whether the result is the
//! exact integer projection.
//!
//! Exactness test (per eliminated variable `x`, in this order):
//! 1. an equality with coefficient ±1 on `x`: substitution, always exact;
//! 2. an equality `a·x + r = 0` with `|a| > 1`: substitution gives the
//!    rational shadow; the integer projection is the shadow intersected with
//!    `a | r`, so the step is exact iff `shadow ∧ r = a·q + t ∧ 1 <= t <= a-1`
//!    has no integer point (asked of the solver with two extra variables);
//! 3. no equality: Fourier–Motzkin. For a lower bound `a·x >= -l` and an
//!    upper bound `b·x <= u` the real shadow row is `b·l + a·u >= 0`, the
//!    Omega-test dark shadow row is `b·l + a·u >= (a-1)(b-1)`. The integer
//!    projection lies between the dark and the real shadow, so the step is
//!    exact iff every integer point of the real shadow satisfies every dark
//!    row (always the case when each pair has `a = 1` or `b = 1`; otherwise
//!    asked of the solver, one emptiness test per differing dark row).
//!
//! A variable with no lower (or no upper) bound is dropped with its
//! constraints, which is exact. The whole projection is exact iff every
//! step is.
//!
//! [`rational_shadow`] is the plain rational projection (no normalization,
//! no tightening, no exactness test): a superset of the integer projection
//! whose rows are exactly the Fourier–Motzkin combinations of the input.
//!
//! Must not know about: spaces, names, printing.

use super::constraint::{
    combine, combine_sub, drop_rows, negate_ineq, normalize_eq, normalize_ineq, Norm,
};
use super::error::PolyResult;
use super::sys;

/// A system of rows over `nv` variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSystem {
    pub nv: usize,
    pub eqs: Vec<Vec<i64>>,
    pub ineqs: Vec<Vec<i64>>,
    /// True when a normalization found a contradiction: no integer point.
    pub infeasible: bool,
}

impl RowSystem {
    pub fn new(nv: usize, eqs: Vec<Vec<i64>>, ineqs: Vec<Vec<i64>>) -> PolyResult<RowSystem> {
        let mut r = RowSystem {
            nv,
            eqs: Vec::new(),
            ineqs: Vec::new(),
            infeasible: false,
        };
        for e in eqs {
            r.push_eq(e)?;
        }
        for i in ineqs {
            r.push_ineq(i);
        }
        Ok(r)
    }

    /// Adds an equality after normalization.
    pub fn push_eq(&mut self, mut row: Vec<i64>) -> PolyResult<()> {
        match normalize_eq(&mut row)? {
            Norm::Keep => {
                if !self.eqs.contains(&row) {
                    self.eqs.push(row)
                }
            }
            Norm::Trivial => {}
            Norm::Infeasible => self.infeasible = true,
        }
        Ok(())
    }

    /// Adds an inequality after normalization (integer tightening).
    pub fn push_ineq(&mut self, mut row: Vec<i64>) {
        match normalize_ineq(&mut row) {
            Norm::Keep => self.ineqs.push(row),
            Norm::Trivial => {}
            Norm::Infeasible => self.infeasible = true,
        }
    }

    /// Removes duplicate inequalities, keeping for each variable part the
    /// tightest constant; detects opposite pairs `e >= 0, -e >= 0` (turned
    /// into the equality `e = 0`) and contradictory pairs.
    pub fn dedup(&mut self) -> PolyResult<()> {
        let n = self.nv;
        self.ineqs.sort();
        let mut out: Vec<Vec<i64>> = Vec::with_capacity(self.ineqs.len());
        for r in self.ineqs.drain(..) {
            if let Some(last) = out.last_mut() {
                if last[..n] == r[..n] {
                    if r[n] < last[n] {
                        *last = r;
                    }
                    continue;
                }
            }
            out.push(r);
        }
        // opposite pairs
        let mut keep = vec![true; out.len()];
        let mut new_eqs = Vec::new();
        for i in 0..out.len() {
            if !keep[i] {
                continue;
            }
            let neg: Vec<i128> = out[i][..n].iter().map(|&c| -(c as i128)).collect();
            if let Ok(j) =
                out.binary_search_by(|r| r[..n].iter().map(|&c| c as i128).cmp(neg.iter().copied()))
            {
                if j != i && keep[j] {
                    let s = out[i][n] as i128 + out[j][n] as i128;
                    if s < 0 {
                        self.infeasible = true;
                    } else if s == 0 {
                        new_eqs.push(out[i].clone());
                        keep[i] = false;
                        keep[j] = false;
                    }
                }
            }
        }
        self.ineqs = out
            .into_iter()
            .zip(keep)
            .filter_map(|(r, k)| k.then_some(r))
            .collect();
        for e in new_eqs {
            self.push_eq(e)?;
        }
        Ok(())
    }
}

/// Eliminates the variables `cols` (column indices; the columns stay, with
/// zero coefficients). With `check_exact`, returns whether the result is
/// the exact integer projection (see the module doc); without it, the
/// returned flag is `false` unless every step was trivially exact.
pub fn eliminate(
    mut rows: RowSystem,
    cols: &[usize],
    check_exact: bool,
) -> PolyResult<(RowSystem, bool)> {
    let mut exact = true;
    let mut todo: Vec<usize> = cols.to_vec();
    todo.sort_unstable();
    todo.dedup();
    while !todo.is_empty() {
        if rows.infeasible {
            return Ok((rows, exact));
        }
        // candidates in order of preference: unit equality first, then any
        // equality, then fewest Fourier–Motzkin pairs; when checking
        // exactness, an inexact step is postponed if another variable can
        // be eliminated exactly first (up to 4 trials)
        let order = ranked(&rows, &todo);
        let mut fallback: Option<(usize, RowSystem)> = None;
        let mut chosen: Option<(usize, RowSystem, bool)> = None;
        for (attempt, &k) in order.iter().enumerate() {
            let mut trial = rows.clone();
            let ex = eliminate_one(&mut trial, todo[k], check_exact)?;
            if ex || !check_exact || todo.len() == 1 {
                chosen = Some((k, trial, ex));
                break;
            }
            if fallback.is_none() {
                fallback = Some((k, trial));
            }
            if attempt >= 3 {
                break;
            }
        }
        let (k, next, step_exact) = match (chosen, fallback) {
            (Some(c), _) => c,
            (None, Some((k, t))) => (k, t, false),
            // `order` lists every index of the non-empty `todo`, so the
            // loop ran at least once and set one of the two
            (None, None) => {
                return Err(super::error::PolyError::Invalid(
                    "empty elimination order".into(),
                ))
            }
        };
        todo.remove(k);
        rows = next;
        exact &= step_exact;
        rows.dedup()?;
        if !rows.infeasible && (rows.ineqs.len() > 24 || (check_exact && !todo.is_empty())) {
            prune_redundant(&mut rows)?;
        }
    }
    Ok((rows, exact))
}

/// Equality rows and inequality rows.
pub type EqsIneqs = (Vec<Vec<i64>>, Vec<Vec<i64>>);

/// The rational projection of `{ x : eqs·(x,1) = 0, ineqs·(x,1) >= 0 }`
/// (rows over `nv` variables then the constant) eliminating the `count`
/// variables from `first`: each is eliminated through the first equality
/// involving it (`r·|e_v| - e·sign(e_v)·r_v`), else by Fourier–Motzkin
/// pairs of a lower and an upper bound; rows are not normalized. Returns
/// `(eqs, ineqs)` with the eliminated columns removed.
pub fn rational_shadow(
    eqs: Vec<Vec<i64>>,
    ineqs: Vec<Vec<i64>>,
    first: usize,
    count: usize,
) -> PolyResult<EqsIneqs> {
    use super::error::PolyError;
    let (mut eqs, mut ineqs) = (eqs, ineqs);
    for v in first..first + count {
        if let Some(pos) = eqs.iter().position(|r| r[v] != 0) {
            let p = eqs.remove(pos);
            let pv = p[v].checked_abs().ok_or(PolyError::Overflow)?;
            let sign = p[v].signum();
            for r in eqs.iter_mut().chain(ineqs.iter_mut()) {
                if r[v] != 0 {
                    let b = sign.checked_mul(r[v]).ok_or(PolyError::Overflow)?;
                    *r = combine_sub(pv, r, b, &p)?;
                }
            }
            continue;
        }
        let (with, mut out): (Vec<_>, Vec<_>) = ineqs.into_iter().partition(|r| r[v] != 0);
        for p in with.iter().filter(|r| r[v] > 0) {
            for q in with.iter().filter(|r| r[v] < 0) {
                let a = q[v].checked_neg().ok_or(PolyError::Overflow)?;
                let b = p[v].checked_neg().ok_or(PolyError::Overflow)?;
                out.push(combine_sub(a, p, b, q)?);
            }
        }
        ineqs = out;
    }
    let cut = |r: Vec<i64>| -> Vec<i64> {
        r.iter()
            .enumerate()
            .filter(|(k, _)| *k < first || *k >= first + count)
            .map(|(_, x)| *x)
            .collect()
    };
    Ok((
        eqs.into_iter().map(cut).collect(),
        ineqs.into_iter().map(cut).collect(),
    ))
}

/// Indices into `todo` sorted by preference (see `eliminate`).
fn ranked(rows: &RowSystem, todo: &[usize]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..todo.len()).collect();
    idx.sort_by_key(|&k| (key(rows, todo[k]), k));
    idx
}

fn key(rows: &RowSystem, x: usize) -> (u8, usize) {
    if rows.eqs.iter().any(|e| e[x].unsigned_abs() == 1) {
        (0, 0)
    } else if rows.eqs.iter().any(|e| e[x] != 0) {
        (1, 0)
    } else {
        let lo = rows.ineqs.iter().filter(|r| r[x] > 0).count();
        let up = rows.ineqs.iter().filter(|r| r[x] < 0).count();
        (2, lo * up)
    }
}

fn prune_redundant(rows: &mut RowSystem) -> PolyResult<()> {
    let Some(red) = sys::redundant_if_feasible(rows.nv, &rows.eqs, &rows.ineqs)? else {
        rows.infeasible = true;
        return Ok(());
    };
    if !red.is_empty() {
        rows.ineqs = drop_rows(std::mem::take(&mut rows.ineqs), &red);
    }
    Ok(())
}

/// Eliminates one variable; returns whether the step is exact.
fn eliminate_one(rows: &mut RowSystem, x: usize, check_exact: bool) -> PolyResult<bool> {
    let n = rows.nv;
    // equality with a unit coefficient, else the smallest coefficient
    let eq_idx = rows
        .eqs
        .iter()
        .enumerate()
        .filter(|(_, e)| e[x] != 0)
        .min_by_key(|(_, e)| e[x].unsigned_abs())
        .map(|(k, _)| k);
    if let Some(k) = eq_idx {
        let mut e = rows.eqs.remove(k);
        if e[x] < 0 {
            e = super::constraint::negate(&e)?;
        }
        let a = e[x];
        let old_eqs = std::mem::take(&mut rows.eqs);
        let old_ineqs = std::mem::take(&mut rows.ineqs);
        for r in old_eqs {
            let c = r[x];
            let nr = if c == 0 {
                r
            } else {
                combine_sub(a, &r, c, &e)?
            };
            rows.push_eq(nr)?;
        }
        for r in old_ineqs {
            let c = r[x];
            let nr = if c == 0 {
                r
            } else {
                combine_sub(a, &r, c, &e)?
            };
            rows.push_ineq(nr);
        }
        if a == 1 {
            return Ok(true);
        }
        if !check_exact || rows.infeasible {
            return Ok(rows.infeasible);
        }
        // exact iff no integer point of the shadow has r mod a != 0, where
        // r is e without x: test shadow ∧ r - a q - t = 0 ∧ 1 <= t <= a-1
        let ext = |r: &Vec<i64>| {
            let mut v = r[..n].to_vec();
            v.push(0);
            v.push(0);
            v.push(r[n]);
            v
        };
        let mut eqs: Vec<Vec<i64>> = rows.eqs.iter().map(ext).collect();
        let mut ineqs: Vec<Vec<i64>> = rows.ineqs.iter().map(ext).collect();
        let mut m = ext(&e);
        m[x] = 0;
        m[n] = -a;
        m[n + 1] = -1;
        eqs.push(m);
        let mut t_lo = vec![0; n + 3];
        t_lo[n + 1] = 1;
        t_lo[n + 2] = -1;
        let mut t_hi = vec![0; n + 3];
        t_hi[n + 1] = -1;
        t_hi[n + 2] = a - 1;
        ineqs.push(t_lo);
        ineqs.push(t_hi);
        return known_empty(n + 2, &eqs, &ineqs);
    }
    // Fourier–Motzkin
    let (mut lower, mut upper, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    for r in std::mem::take(&mut rows.ineqs) {
        match r[x].signum() {
            1 => lower.push(r),
            -1 => upper.push(r),
            _ => rest.push(r),
        }
    }
    rows.ineqs = rest;
    let mut darks = Vec::new();
    for l in &lower {
        for u in &upper {
            let a = l[x];
            let b = u[x]
                .checked_neg()
                .ok_or(super::error::PolyError::Overflow)?;
            let real = combine(b, l, a, u)?;
            if a > 1 && b > 1 {
                let mut dark = real.clone();
                let d = ((a - 1) as i128) * ((b - 1) as i128);
                dark[n] = super::constraint::to_i64(dark[n] as i128 - d)?;
                darks.push(dark);
            }
            rows.push_ineq(real);
        }
    }
    if darks.is_empty() {
        return Ok(true);
    }
    if !check_exact {
        return Ok(false);
    }
    rows.dedup()?;
    if rows.infeasible {
        return Ok(true);
    }
    for mut d in darks {
        match normalize_ineq(&mut d) {
            // a trivial dark row holds everywhere
            Norm::Trivial => continue,
            // an empty dark shadow: decide with the gap test
            Norm::Infeasible => return no_gap(rows, x, &lower, &upper),
            Norm::Keep => {}
        }
        if rows.ineqs.contains(&d) {
            continue;
        }
        let mut test = rows.ineqs.clone();
        test.push(negate_ineq(&d)?);
        if !known_empty(n, &rows.eqs, &test)? {
            // some integer point of the real shadow is outside the dark
            // shadow: it may still have an integer preimage
            return no_gap(rows, x, &lower, &upper);
        }
    }
    Ok(true)
}

/// Integer emptiness for the exactness tests: a solver overflow counts as
/// "not known to be empty", which only makes the step inexact (never
/// wrong).
fn known_empty(nv: usize, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> PolyResult<bool> {
    match sys::int_empty(nv, eqs, ineqs) {
        Err(super::error::PolyError::Overflow) => Ok(false),
        r => r,
    }
}

/// The complete exactness test of one Fourier–Motzkin step: the real
/// shadow `R` (already in `rows`) is the integer projection iff no integer
/// `y ∈ R` has an empty integer interval `[L(y), U(y)]` for `x`. With
/// `t = U(y) = min_u floor(u(y)/b_u)`, a gap at `y` means, for some upper
/// bound `u*` (attaining the minimum) and lower bound `l*`:
/// `b_u t <= u(y)` for every upper bound `u`, `b_{u*}(t+1) > u*(y)` and
/// `a_{l*} t < -l*(y)`. One integer-emptiness test per pair `(l*, u*)`, in
/// the variables of `R` plus `t` (stored in `x`'s column).
fn no_gap(rows: &RowSystem, x: usize, lower: &[Vec<i64>], upper: &[Vec<i64>]) -> PolyResult<bool> {
    let n = rows.nv;
    for l in lower {
        for u in upper {
            let mut ineqs = rows.ineqs.clone();
            ineqs.extend(upper.iter().cloned());
            // l(y) + a t <= -1
            ineqs.push(negate_ineq(l)?);
            // -u(y) + b t + (b - 1) >= 0, with b = -u[x] > 0
            let mut r = super::constraint::negate(u)?;
            let b = r[x];
            r[n] = super::constraint::to_i64(r[n] as i128 + b as i128 - 1)?;
            ineqs.push(r);
            if !known_empty(n, &rows.eqs, &ineqs)? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}
