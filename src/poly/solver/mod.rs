//! The exact solver: rational simplex, lexicographic optimization,
//! integer sampling and integer lexicographic optimization.
//!
//! Owns: [`System`] (integer affine equalities and inequalities over `n`
//! variables) and the exact queries on it: rational feasibility, rational
//! (lexicographic) minimum, integer sampling, integer (lexicographic)
//! minimum, implicit equalities and redundant inequalities.
//!
//! Must not know about: spaces, names, sets and maps (the set library in
//! `poly` builds on this module, never the other way round), or anything in
//! the compiler pipeline.
//!
//! # Method
//!
//! * **Rational simplex** (`tableau`): a dictionary with fraction-free
//!   integer rows (one positive denominator per row, rows divided by their
//!   gcd), problem variables free, one nonnegative slack per inequality.
//!   Equalities are pivoted out and their slack columns deleted.
//!   Feasibility is restored one constraint at a time by maximizing the
//!   violated row over the rows already satisfied (primal simplex); an
//!   optimum below 0 proves emptiness. Dantzig's rule, switching to Bland's
//!   rule after a run of degenerate pivots, so no cycling. The fast path
//!   runs in checked `i64`; an overflow restarts the whole query in checked
//!   `i128`, and another in `BigInt` (`integer::fallback`). No floating
//!   point anywhere.
//! * **Rational lexmin**: maximize the negated objective, then delete the
//!   columns of the nonbasic variables with a nonzero reduced cost (they
//!   are 0 on the optimal face) and go on with the next objective.
//! * **Lexicographic simplex** (`lexsimplex`), for many lexicographic
//!   minima of one polyhedron under added rows: the primal simplex with
//!   lexicographic pricing (a column enters when its reduced costs over
//!   the objectives, in order, are lexicographically negative) reaches the
//!   minimum once; each added row is then restored by the dual simplex
//!   with the lexicographic ratio test, which keeps the minimum. With
//!   every variable among the objectives the costs of a column are never
//!   all zero, so each dual pivot raises the objective vector strictly and
//!   no basis repeats.
//! * **Implicit equalities**: each undecided slack is maximized until it is
//!   seen positive (every slack seen positive on the way is decided too);
//!   a maximum of 0 makes it an implicit equality, and the columns that
//!   would lower it are deleted, so the tableau shrinks to the affine hull.
//! * **Redundancy**: one tableau; each inequality in turn is relaxed (its
//!   slack made unrestricted) and minimized over the others; if the
//!   minimum is `>= 0` it stays relaxed (removed), else it is restored.
//! * **Integer equalities** (`lattice`): a column echelon form by unimodular
//!   column operations gives all integer solutions of `E x + e = 0` as
//!   `x = x0 + B y` (or proves there are none, e.g. `2i + 2j = 7`); integer
//!   sampling then works over `y` with inequalities only.
//! * **Integer sampling** (`integer`): isl's method with the recession
//!   cone — branch and bound only over the directions in which the set is
//!   bounded, and rounding along an interior ray of the cone for the rest.
//!   The termination and exactness proof is in `integer`'s module comment.
//!   The cone's tableau is the polyhedron's with all constants set to 0.
//!   A branch and bound deeper than `integer::DEEP_BRANCHING` levels
//!   (creeping along a polytope thin in a non-coordinate direction)
//!   restarts as a search along a reduced basis (`reduce`: generalized
//!   basis reduction, then enumeration of each reduced direction's
//!   integer values).
//! * **Integer lexicographic minimum**: if the polyhedron is bounded
//!   (its recession cone is `{0}`), lexicographic branch and bound: the
//!   rational lexmin of a node bounds all its integer points, nodes not
//!   lexicographically below the incumbent are pruned, fractional points
//!   split on a coordinate (finite because every coordinate is bounded).
//!   Otherwise, or when that search goes deeper than `DEEP_BRANCHING`, for
//!   each objective in turn: the rational minimum gives a
//!   lower bound `lo` (rationally unbounded and integer-nonempty ⇒
//!   integer-unbounded, since an integer point plus integer multiples of
//!   an integral recession ray stays in the set), an integer point gives an
//!   upper bound `hi`; `lo` itself is tried, then the interval is bisected
//!   with exact integer emptiness tests of `{f <= mid}` (each success
//!   lowers `hi` to the value found); finally `f = hi` is added as an
//!   equality and the next objective follows.
//!
//! Errors: `PolyError::Overflow` when an integer result or a change of
//! coordinates does not fit `i64` (tableau arithmetic itself never fails:
//! it falls back to big integers).

/// `at_every_width!(W => expr)`: [`integer::fallback`] of `expr` computed
/// with the tableau integer type `W` bound to `i64`, then `i128`, then
/// `BigInt`: one expression for the three widths of an exact query.
macro_rules! at_every_width {
    ($w:ident => $body:expr) => {
        $crate::poly::solver::integer::fallback(
            || {
                type $w = i64;
                $body
            },
            || {
                type $w = i128;
                $body
            },
            || {
                type $w = num_bigint::BigInt;
                $body
            },
        )
    };
}

mod budget;
mod dive;
mod integer;
mod lattice;
mod lexsimplex;
mod num;
mod prepared;
mod reduce;
mod rows;
mod tableau;

/// Counters for profiling (pivots, big-integer fallbacks, deep searches); relaxed atomics,
/// read by the benchmark's `SOLVER_STATS=1` mode. Not part of the API.
#[doc(hidden)]
pub mod stats {
    use std::sync::atomic::AtomicU64;
    pub static PIVOTS: AtomicU64 = AtomicU64::new(0);
    /// Queries redone on `i128` after an `i64` overflow.
    pub static WIDENINGS: AtomicU64 = AtomicU64::new(0);
    /// Queries redone on big integers after an `i128` overflow.
    pub static FALLBACKS: AtomicU64 = AtomicU64::new(0);
    /// Branch and bounds that went deeper than `DEEP_BRANCHING` levels and
    /// handed over (to a search along a reduced basis, or, for a
    /// lexicographic minimum, to bisection over the sampler).
    pub static DEEP_SEARCHES: AtomicU64 = AtomicU64::new(0);
}

#[cfg(test)]
mod lexsimplex_tests;
#[cfg(test)]
mod reduce_tests;
#[cfg(test)]
mod tests;

use crate::poly::{PolyError, PolyResult};
pub use budget::{with_work_budget, work_budget_active, WorkSpent};
pub use dive::{Dive, DiveEnd};
use integer::{build_tab, fallback, implicit_of_tab, on_nonempty_tab, sample_ineqs, BoundedLex};
pub use lexsimplex::{DiveOutcome, LexSimplex};
use num::{Int, OResult};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;
pub use prepared::Prepared;
use tableau::{MaxOutcome, Mode, Tab};

/// A conjunction of integer affine constraints over `n_vars` variables.
///
/// Every row has `n_vars + 1` entries: `row[0..n]` are the coefficients and
/// `row[n]` the constant. An equality row means `Σ row[k]·x_k + row[n] = 0`,
/// an inequality row `Σ row[k]·x_k + row[n] >= 0`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct System {
    pub n_vars: usize,
    pub eqs: Vec<Vec<i64>>,
    pub ineqs: Vec<Vec<i64>>,
}

impl System {
    /// The unconstrained system over `n_vars` variables.
    pub fn new(n_vars: usize) -> Self {
        System {
            n_vars,
            eqs: Vec::new(),
            ineqs: Vec::new(),
        }
    }
    /// Add `Σ row[k]·x_k + row[n] = 0`.
    pub fn add_eq(&mut self, row: Vec<i64>) {
        self.eqs.push(row);
    }
    /// Add `Σ row[k]·x_k + row[n] >= 0`.
    pub fn add_ineq(&mut self, row: Vec<i64>) {
        self.ineqs.push(row);
    }
    /// Add the equalities and inequalities `(eqs, ineqs)` given over the
    /// variables `x_skip, x_skip+1, …` (each row gets `skip` zero
    /// coefficients in front).
    pub fn add_rows(&mut self, skip: usize, (eqs, ineqs): (Vec<Vec<i64>>, Vec<Vec<i64>>)) {
        let shift = |r: Vec<i64>| {
            let mut out = vec![0; skip];
            out.extend(r);
            out
        };
        self.eqs.extend(eqs.into_iter().map(shift));
        self.ineqs.extend(ineqs.into_iter().map(shift));
    }

    fn check(&self) -> PolyResult<()> {
        let n = self.n_vars;
        for r in self.eqs.iter().chain(&self.ineqs) {
            if r.len() != n + 1 {
                return Err(PolyError::Invalid(format!(
                    "constraint row has {} entries, expected {}",
                    r.len(),
                    n + 1
                )));
            }
        }
        Ok(())
    }

    fn check_obj(&self, obj: &[i64]) -> PolyResult<()> {
        if obj.len() != self.n_vars + 1 {
            return Err(PolyError::Invalid(format!(
                "objective has {} entries, expected {}",
                obj.len(),
                self.n_vars + 1
            )));
        }
        Ok(())
    }
}

/// Result of an optimization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Optimum<T> {
    /// The feasible set is empty.
    Empty,
    /// The objective is unbounded below on the feasible set.
    Unbounded,
    /// The optimal value (or point).
    Value(T),
}

impl<T> Optimum<T> {
    /// The same outcome with the optimal value (or point) mapped by `f`.
    pub fn try_map<U>(self, f: impl FnOnce(T) -> PolyResult<U>) -> PolyResult<Optimum<U>> {
        Ok(match self {
            Optimum::Empty => Optimum::Empty,
            Optimum::Unbounded => Optimum::Unbounded,
            Optimum::Value(v) => Optimum::Value(f(v)?),
        })
    }
}

fn neg_row(obj: &[i64]) -> PolyResult<Vec<i64>> {
    obj.iter()
        .map(|v| v.checked_neg().ok_or(PolyError::Overflow))
        .collect()
}

/// Does `{x ∈ Q^n : eqs = 0, ineqs >= 0}` have a point?
pub fn rational_feasible(sys: &System) -> PolyResult<bool> {
    sys.check()?;
    let n = sys.n_vars;
    at_every_width!(W => Ok(!build_tab::<W>(n, &sys.eqs, &sys.ineqs)?.0.empty))
}

fn lexmin_gen<T: Int>(sys: &System, objs: &[Vec<i64>]) -> OResult<Optimum<Vec<BigRational>>> {
    let n = sys.n_vars;
    let (mut tab, _) = build_tab::<T>(n, &sys.eqs, &sys.ineqs)?;
    if tab.empty {
        return Ok(Optimum::Empty);
    }
    lexmin_on_tab(&mut tab, objs)
}

/// The rational lexicographic minimum of `objs` over a non-empty tableau
/// (see [`rational_lexmin`]); the tableau is left on the optimal face.
pub(crate) fn lexmin_on_tab<T: Int>(
    tab: &mut Tab<T>,
    objs: &[Vec<i64>],
) -> OResult<Optimum<Vec<BigRational>>> {
    let n = tab.n_x_vars();
    for obj in objs {
        // Maximize -obj.
        let c: Vec<T> = obj[..n]
            .iter()
            .map(|&v| T::from_i64(v).neg())
            .collect::<OResult<_>>()?;
        let v = tab.add_free_row(&c, &T::from_i64(obj[n]).neg()?)?;
        match tab.maximize(v, Mode::Full)? {
            MaxOutcome::Unbounded => return Ok(Optimum::Unbounded),
            MaxOutcome::Optimal | MaxOutcome::Reached => {}
        }
        tab.restrict_to_optimal_face(v);
        tab.drop_row_var(v);
    }
    Ok(Optimum::Value(tab.point()))
}

/// Lexicographic rational minimum: minimize `objs[0]` over
/// `P = {x ∈ Q^n : eqs = 0, ineqs >= 0}`, then `objs[1]` over the
/// minimizers, and so on; returns one point of the final optimal face.
/// `Unbounded` if some objective is unbounded below at its turn.
pub fn rational_lexmin(sys: &System, objs: &[Vec<i64>]) -> PolyResult<Optimum<Vec<BigRational>>> {
    sys.check()?;
    for o in objs {
        sys.check_obj(o)?;
    }
    at_every_width!(W => lexmin_gen::<W>(sys, objs))
}

fn eval_rat(obj: &[i64], x: &[BigRational]) -> BigRational {
    let n = x.len();
    let mut s = BigRational::from_integer(BigInt::from(obj[n]));
    for (k, xk) in x.iter().enumerate() {
        if obj[k] != 0 {
            s += xk * BigRational::from_integer(BigInt::from(obj[k]));
        }
    }
    s
}

/// `min { obj·x + obj[n] : x ∈ Q^n, eqs = 0, ineqs >= 0 }`.
pub fn rational_min(sys: &System, obj: &[i64]) -> PolyResult<Optimum<BigRational>> {
    sys.check_obj(obj)?;
    rational_lexmin(sys, &[obj.to_vec()])?.try_map(|x| Ok(eval_rat(obj, &x)))
}

/// `max { obj·x + obj[n] : x ∈ Q^n, eqs = 0, ineqs >= 0 }` (`Unbounded`
/// means unbounded above).
pub fn rational_max(sys: &System, obj: &[i64]) -> PolyResult<Optimum<BigRational>> {
    Ok(match rational_min(sys, &neg_row(obj)?)? {
        Optimum::Value(v) => Optimum::Value(-v),
        o => o,
    })
}

/// Does every group of rows have a row `o` with
/// `{x ∈ P : o·x + o[n] >= 0}` non-empty, over the rational polyhedron
/// `P = {x ∈ Q^n : eqs = 0, ineqs >= 0}`? False when `P` is empty. One
/// tableau for all rows: each is added as a free row, maximized until it
/// reaches 0 (or shown to stay negative) and dropped again; a group stops
/// at its first row that reaches, the query at the first group that fails.
pub fn rational_each_reaches(sys: &System, groups: &[Vec<Vec<i64>>]) -> PolyResult<bool> {
    sys.check()?;
    for o in groups.iter().flatten() {
        sys.check_obj(o)?;
    }
    let n = sys.n_vars;
    let r = at_every_width!(W => on_nonempty_tab(n, &sys.eqs, &sys.ineqs, |t, _| {
        each_reaches::<W>(t, groups)
    }))?;
    Ok(r == Some(true))
}

pub(crate) fn each_reaches<T: Int>(tab: &mut Tab<T>, groups: &[Vec<Vec<i64>>]) -> OResult<bool> {
    let n = tab.n_x_vars();
    for group in groups {
        let mut any = false;
        for obj in group {
            let c: Vec<T> = obj[..n].iter().map(|&v| T::from_i64(v)).collect();
            let v = tab.add_free_row(&c, &T::from_i64(obj[n]))?;
            let out = tab.maximize(v, Mode::UntilNonnegInRow)?;
            tab.drop_row_var(v);
            if out != MaxOutcome::Optimal {
                any = true;
                break;
            }
        }
        if !any {
            return Ok(false);
        }
    }
    Ok(true)
}

/// An integer point of `{x ∈ Z^n : eqs = 0, ineqs >= 0}`, or `None` if it
/// has none. Exact, and terminates on unbounded systems too.
///
/// Memoized per system (`poly::memo`, outside work-budget scopes): the
/// compiler samples the same polyhedron from several places (a dependence
/// piece when it is built, when the schedule is checked, when statements
/// are placed; two in five of CoxPH's samples repeat an earlier one).
pub fn integer_sample(sys: &System) -> PolyResult<Option<Vec<i64>>> {
    sys.check()?;
    crate::poly::memo::sample_answer(sys.n_vars, &sys.eqs, &sys.ineqs, || {
        integer_sample_uncached(sys)
    })
}

/// [`integer_sample`] without the memo (`sys` checked).
fn integer_sample_uncached(sys: &System) -> PolyResult<Option<Vec<i64>>> {
    let n = sys.n_vars;
    let Some((x0, b)) = lattice::eliminate_eqs(n, &sys.eqs)? else {
        return Ok(None);
    };
    let rows: Vec<Vec<i64>> = sys
        .ineqs
        .iter()
        .map(|r| lattice::substitute(r, &x0, &b))
        .collect::<PolyResult<_>>()?;
    // Number of free integer parameters y (columns of B).
    let k = b.first().map_or(0, |r| r.len());
    let Some(y) = sample_ineqs(k, &rows)? else {
        return Ok(None);
    };
    Ok(Some(lattice::apply(&x0, &b, &y)?))
}

/// Does the integer point `x` satisfy every constraint of `sys`?
fn satisfies(sys: &System, x: &[i64]) -> PolyResult<bool> {
    let n = sys.n_vars;
    let val = |r: &Vec<i64>| {
        let mut s = BigInt::from(r[n]);
        for k in 0..n {
            s += BigInt::from(r[k]) * BigInt::from(x[k]);
        }
        s
    };
    let zero = BigInt::from(0);
    Ok(x.len() == n
        && sys.eqs.iter().all(|r| val(r) == zero)
        && sys.ineqs.iter().all(|r| val(r) >= zero))
}

fn eval_int(obj: &[i64], x: &[i64]) -> PolyResult<i64> {
    let n = x.len();
    let mut s = BigInt::from(obj[n]);
    for k in 0..n {
        s += BigInt::from(obj[k]) * BigInt::from(x[k]);
    }
    s.to_i64().ok_or(PolyError::Overflow)
}

/// Integer lexicographic minimum: an integer point of
/// `P = {x ∈ Z^n : eqs = 0, ineqs >= 0}` minimizing `objs[0]`, then
/// `objs[1]` among those, and so on. `Unbounded` if some objective is
/// unbounded below over the (remaining) integer points.
pub fn integer_lexmin(sys: &System, objs: &[Vec<i64>]) -> PolyResult<Optimum<Vec<i64>>> {
    sys.check()?;
    for o in objs {
        sys.check_obj(o)?;
    }
    let n = sys.n_vars;
    // Bounded polyhedra: lexicographic branch and bound.
    let bounded = at_every_width!(
        W => integer::lexmin_if_bounded::<W>(n, &sys.eqs, &sys.ineqs, objs)
    )?;
    match bounded {
        BoundedLex::Empty | BoundedLex::NoInteger => return Ok(Optimum::Empty),
        BoundedLex::Point(p) => {
            if !satisfies(sys, &p)? {
                return Err(PolyError::Unsupported("solver: bad lexmin point".into()));
            }
            return Ok(Optimum::Value(p));
        }
        BoundedLex::NotBounded | BoundedLex::Deep => {}
    }
    // General method (possibly unbounded polyhedra): successive
    // minimization by bisection with exact integer emptiness tests.
    let mut cur = sys.clone();
    let Some(mut best) = integer_sample(&cur)? else {
        return Ok(Optimum::Empty);
    };
    for f in objs {
        let lo = match rational_min(&cur, f)? {
            Optimum::Unbounded => return Ok(Optimum::Unbounded),
            // `best` is a point of `cur`.
            Optimum::Empty => {
                return Err(PolyError::Unsupported(
                    "solver: inconsistent emptiness".into(),
                ))
            }
            Optimum::Value(v) => v.ceil().to_integer(),
        };
        let mut lo = lo.to_i64().ok_or(PolyError::Overflow)?;
        let mut hi = eval_int(f, &best)?;
        let mut first = true;
        while lo < hi {
            let mid = if first {
                lo
            } else {
                // lo + floor((hi - lo) / 2), in i128 (hi - lo may not fit
                // i64); lo <= mid < hi, so it fits i64.
                let m = lo as i128 + (hi as i128 - lo as i128) / 2;
                num::to_i64(m)?
            };
            first = false;
            let mut test = cur.clone();
            let mut row = neg_row(f)?;
            row[n] = row[n].checked_add(mid).ok_or(PolyError::Overflow)?;
            test.add_ineq(row);
            match integer_sample(&test)? {
                Some(p) => {
                    hi = eval_int(f, &p)?;
                    best = p;
                }
                None => lo = mid + 1,
            }
        }
        let mut eq = f.clone();
        eq[n] = eq[n].checked_sub(hi).ok_or(PolyError::Overflow)?;
        cur.add_eq(eq);
    }
    Ok(Optimum::Value(best))
}

/// Integer lexicographic maximum (lexmin of the negated objectives).
pub fn integer_lexmax(sys: &System, objs: &[Vec<i64>]) -> PolyResult<Optimum<Vec<i64>>> {
    let neg: Vec<Vec<i64>> = objs.iter().map(|o| neg_row(o)).collect::<PolyResult<_>>()?;
    integer_lexmin(sys, &neg)
}

/// `min { obj·x + obj[n] : x ∈ Z^n, eqs = 0, ineqs >= 0 }`.
pub fn integer_min(sys: &System, obj: &[i64]) -> PolyResult<Optimum<i64>> {
    sys.check_obj(obj)?;
    integer_lexmin(sys, &[obj.to_vec()])?.try_map(|x| eval_int(obj, &x))
}

/// `max { obj·x + obj[n] : x ∈ Z^n, eqs = 0, ineqs >= 0 }` (`Unbounded`
/// means unbounded above).
pub fn integer_max(sys: &System, obj: &[i64]) -> PolyResult<Optimum<i64>> {
    sys.check_obj(obj)?;
    integer_lexmax(sys, &[obj.to_vec()])?.try_map(|x| eval_int(obj, &x))
}

/// Indices `i` of inequalities with `ineqs[i]·x = 0` at every point of the
/// rational polyhedron `P = {x ∈ Q^n : eqs = 0, ineqs >= 0}`. If `P` is
/// empty this holds vacuously and all indices are returned.
pub fn implicit_equalities(sys: &System) -> PolyResult<Vec<usize>> {
    let imp = tab_query(
        sys,
        implicit_of_tab::<i64>,
        implicit_of_tab::<i128>,
        implicit_of_tab::<BigInt>,
    )?;
    Ok(match imp {
        None => (0..sys.ineqs.len()).collect(),
        Some(v) => (0..v.len()).filter(|&k| v[k]).collect(),
    })
}

/// The same tableau query (one generic function, instantiated at the
/// three widths) on the rational polyhedron of `sys`: `fast` on the `i64`
/// tableau, then `wide` on the `i128` one and `big` on the `BigInt` one
/// after overflows ([`fallback`]); `None` when the polyhedron is empty.
fn tab_query<R>(
    sys: &System,
    fast: fn(&mut Tab<i64>, &[Option<usize>]) -> OResult<R>,
    wide: fn(&mut Tab<i128>, &[Option<usize>]) -> OResult<R>,
    big: fn(&mut Tab<BigInt>, &[Option<usize>]) -> OResult<R>,
) -> PolyResult<Option<R>> {
    sys.check()?;
    let n = sys.n_vars;
    fallback(
        || on_nonempty_tab(n, &sys.eqs, &sys.ineqs, fast),
        || on_nonempty_tab(n, &sys.eqs, &sys.ineqs, wide),
        || on_nonempty_tab(n, &sys.eqs, &sys.ineqs, big),
    )
}

/// The inequalities (by index) found redundant in a feasible tableau with
/// the given slacks: each in turn is relaxed and minimized over the others
/// (`Tab::test_redundant`), staying relaxed when its minimum is `>= 0`.
fn redundant_of_tab<T: Int>(tab: &mut Tab<T>, slacks: &[Option<usize>]) -> OResult<Vec<usize>> {
    let mut red = Vec::new();
    for (k, s) in slacks.iter().enumerate() {
        // Every inequality of a non-empty system has a slack.
        let Some(v) = *s else { return Err(num::Ovf) };
        if tab.test_redundant(v)? {
            red.push(k);
        }
    }
    Ok(red)
}

/// Indices of inequalities that can all be removed together without
/// changing the rational polyhedron `P = {x ∈ Q^n : eqs = 0, ineqs >= 0}`.
/// Computed sequentially: inequality `i` is removed if it is implied by the
/// equalities and the inequalities not yet removed (other than `i`), i.e.
/// if `min ineqs[i]` over them is `>= 0` or they are empty. Of a set of
/// duplicates, the last one is kept.
pub fn redundant_ineqs(sys: &System) -> PolyResult<Vec<usize>> {
    if let Some(red) = redundant_ineqs_if_feasible(sys)? {
        return Ok(red);
    }
    redundant_ineqs_of_empty(sys)
}

/// [`redundant_ineqs`] of a system with a rational point, `None` when it
/// has none: one tableau decides both (a caller that drops an empty
/// system needs no separate feasibility test).
pub fn redundant_ineqs_if_feasible(sys: &System) -> PolyResult<Option<Vec<usize>>> {
    // Non-empty polyhedra: one tableau (see `redundant_of_tab`).
    tab_query(
        sys,
        redundant_of_tab::<i64>,
        redundant_of_tab::<i128>,
        redundant_of_tab::<BigInt>,
    )
}

/// [`redundant_ineqs`] of a rationally empty system.
fn redundant_ineqs_of_empty(sys: &System) -> PolyResult<Vec<usize>> {
    // The same definition, one LP per inequality.
    let m = sys.ineqs.len();
    let mut removed = vec![false; m];
    for i in 0..m {
        let mut rest = System::new(sys.n_vars);
        rest.eqs = sys.eqs.clone();
        for (k, row) in sys.ineqs.iter().enumerate() {
            if k != i && !removed[k] {
                rest.ineqs.push(row.clone());
            }
        }
        let red = match rational_min(&rest, &sys.ineqs[i])? {
            Optimum::Empty => true,
            Optimum::Unbounded => false,
            Optimum::Value(v) => v >= BigRational::from_integer(BigInt::from(0)),
        };
        if red {
            removed[i] = true;
        }
    }
    Ok((0..m).filter(|&k| removed[k]).collect())
}

/// A lattice basis of the integer kernel `{ x ∈ Z^n : M·x = 0 }` of the
/// matrix `m` (rows of `n` entries): every integer solution is an integer
/// combination of the returned vectors. Computed by column echelon form:
/// with `M·U = [H | 0]` and `U` unimodular, the basis is the last
/// `n − rank(M)` columns of `U`.
pub fn integer_kernel(m: &[Vec<i64>], n: usize) -> PolyResult<Vec<Vec<i64>>> {
    if m.iter().any(|r| r.len() < n) {
        return Err(PolyError::Invalid(
            "integer_kernel: a row is shorter than the number of columns".into(),
        ));
    }
    let wide: Vec<Vec<i128>> = m
        .iter()
        .map(|r| r[..n].iter().map(|&v| i128::from(v)).collect())
        .collect();
    let ech = lattice::col_echelon(&wide, n)?;
    let mut basis = Vec::with_capacity(n - ech.rank);
    for c in ech.rank..n {
        let mut v = Vec::with_capacity(n);
        for row in &ech.u {
            v.push(i64::try_from(row[c]).map_err(|_| PolyError::Overflow)?);
        }
        basis.push(v);
    }
    Ok(basis)
}

#[cfg(test)]
mod kernel_tests {
    use super::integer_kernel;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        /// Every basis vector is in the kernel, the basis has n − rank
        /// vectors (rank checked by brute force on small boxes: a kernel
        /// vector in the box that is not spanned would be missed).
        #[test]
        fn kernel_vectors_solve_and_span(rows in prop::collection::vec(prop::collection::vec(-3i64..=3, 3), 0..3)) {
            let n = 3;
            let basis = integer_kernel(&rows, n).unwrap();
            for v in &basis {
                for r in &rows {
                    prop_assert_eq!(r.iter().zip(v).map(|(a, b)| a * b).sum::<i64>(), 0);
                }
            }
            // Every small integer kernel point is an integer combination of
            // the basis: check by solving in the box of coefficients.
            for x0 in -2i64..=2 { for x1 in -2i64..=2 { for x2 in -2i64..=2 {
                let x = [x0, x1, x2];
                if rows.iter().all(|r| r.iter().zip(&x).map(|(a, b)| a * b).sum::<i64>() == 0) {
                    let mut found = false;
                    let k = basis.len();
                    let range: Vec<i64> = (-6..=6).collect();
                    let mut idx = vec![0usize; k];
                    loop {
                        let mut y = [0i64; 3];
                        for (j, b) in basis.iter().enumerate() {
                            for t in 0..3 { y[t] += range[idx[j]] * b[t]; }
                        }
                        if y == x { found = true; break; }
                        let mut j = 0;
                        while j < k { idx[j] += 1; if idx[j] < range.len() { break; } idx[j] = 0; j += 1; }
                        if j == k { break; }
                    }
                    prop_assert!(found, "kernel point {:?} not spanned by {:?}", x, basis);
                }
            }}}
        }
    }
}
