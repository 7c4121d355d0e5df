//! The variable layout of the scheduling (I)LPs, shared by the Feautrier
//! and Pluto steps (isl report §6.4.2 and §6.5.5).
//!
//! For each statement `S` of the subproblem with `d` iterators and the
//! model's `m` parameters, the unknown schedule row
//! `θ_S(i) = (a⁺ − a⁻)·i + b·p + k` is encoded by non-negative integer
//! variables laid out as `a⁻_{d-1}, a⁺_{d-1}, ..., a⁻_0, a⁺_0, b_0..b_{m-1}, k`
//! (reverse iterator order, negative part first: a lexicographic minimum
//! then prefers zero coefficients on inner iterators and positive
//! coefficients). `b, k >= 0` loses nothing: adding the same parameter
//! multiple or constant to every statement of a subproblem changes no
//! difference `θ_T − θ_S`. Callers reserve `prefix` variables before the
//! statement blocks and `suffix` variables after them.
//!
//! Owns: the layout, the linear forms of schedule coefficients and of the
//! Farkas cone variables of a dependence. Must not know about solving.

use super::error::{ScheduleError, ScheduleResult};
use crate::poly::solver::Prepared;

/// Variable layout of one scheduling problem.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub n_params: usize,
    /// Iterator counts of the subproblem's statements (local order).
    pub dims: Vec<usize>,
    /// First variable of each statement block.
    pub off: Vec<usize>,
    pub prefix: usize,
    pub suffix: usize,
    pub n_vars: usize,
}

/// A linear form over the layout's variables plus a constant (last entry).
pub(crate) type Form = Vec<i64>;

impl Layout {
    pub fn new(n_params: usize, dims: Vec<usize>, prefix: usize, suffix: usize) -> Layout {
        let mut off = Vec::with_capacity(dims.len());
        let mut cur = prefix;
        for d in &dims {
            off.push(cur);
            cur += 2 * d + n_params + 1;
        }
        Layout {
            n_params,
            dims,
            off,
            prefix,
            suffix,
            n_vars: cur + suffix,
        }
    }

    /// First variable after the statement blocks.
    pub fn suffix_start(&self) -> usize {
        self.n_vars - self.suffix
    }

    pub fn a_minus(&self, s: usize, j: usize) -> usize {
        self.off[s] + 2 * (self.dims[s] - 1 - j)
    }
    pub fn a_plus(&self, s: usize, j: usize) -> usize {
        self.a_minus(s, j) + 1
    }
    pub fn b(&self, s: usize, j: usize) -> usize {
        self.off[s] + 2 * self.dims[s] + j
    }
    pub fn k(&self, s: usize) -> usize {
        self.off[s] + 2 * self.dims[s] + self.n_params
    }

    pub fn zero(&self) -> Form {
        vec![0; self.n_vars + 1]
    }

    /// The form of a single variable.
    pub fn var(&self, v: usize) -> Form {
        let mut f = self.zero();
        f[v] = 1;
        f
    }

    /// `a⁺_j − a⁻_j` of statement `s`.
    pub fn coef(&self, s: usize, j: usize) -> Form {
        let mut f = self.zero();
        f[self.a_plus(s, j)] = 1;
        f[self.a_minus(s, j)] = -1;
        f
    }

    /// The forms of the Farkas cone variables `(c_s, c_t, c_p, d)` for the
    /// affine form `sign·(θ_T(t) − θ_S(s))` over a dependence polyhedron on
    /// `(s, t, p)`, from source `src` to target `tgt` (local indices).
    /// Works for `src == tgt` too (the parameter and constant parts cancel).
    pub fn diff_forms(&self, src: usize, tgt: usize, sign: i64) -> ScheduleResult<Vec<Form>> {
        let (ds, dt, m) = (self.dims[src], self.dims[tgt], self.n_params);
        let mut forms = Vec::with_capacity(ds + dt + m + 1);
        for j in 0..ds {
            forms.push(scale(&self.coef(src, j), -sign)?);
        }
        for j in 0..dt {
            forms.push(scale(&self.coef(tgt, j), sign)?);
        }
        for j in 0..m {
            let mut f = self.zero();
            f[self.b(tgt, j)] += sign;
            f[self.b(src, j)] -= sign;
            forms.push(f);
        }
        let mut f = self.zero();
        f[self.k(tgt)] += sign;
        f[self.k(src)] -= sign;
        forms.push(f);
        Ok(forms)
    }

    /// `x_v >= 0` for every statement-block variable.
    pub fn nonneg_rows(&self) -> Vec<Vec<i64>> {
        (self.prefix..self.suffix_start())
            .map(|v| self.var(v))
            .collect()
    }

    /// `Σ_s Σ_j b_{s,j}`.
    pub fn sum_params(&self) -> Form {
        let mut f = self.zero();
        for s in 0..self.dims.len() {
            for j in 0..self.n_params {
                f[self.b(s, j)] = 1;
            }
        }
        f
    }

    /// `Σ_s Σ_j (a⁺_{s,j} + a⁻_{s,j})`.
    pub fn sum_abs_coefs(&self) -> Form {
        let mut f = self.zero();
        for s in 0..self.dims.len() {
            for j in 0..self.dims[s] {
                f[self.a_plus(s, j)] = 1;
                f[self.a_minus(s, j)] = 1;
            }
        }
        f
    }

    /// One objective per statement-block variable, in layout order.
    pub fn block_objectives(&self) -> Vec<Form> {
        (self.prefix..self.suffix_start())
            .map(|v| self.var(v))
            .collect()
    }

    /// The schedule row over `(i, p, 1)` of statement `s` in a solution.
    pub fn extract_row(&self, sol: &[i64], s: usize) -> ScheduleResult<Vec<i64>> {
        let d = self.dims[s];
        let mut row = Vec::with_capacity(d + self.n_params + 1);
        for j in 0..d {
            row.push(
                sol[self.a_plus(s, j)]
                    .checked_sub(sol[self.a_minus(s, j)])
                    .ok_or(ScheduleError::Overflow)?,
            );
        }
        for j in 0..self.n_params {
            row.push(sol[self.b(s, j)]);
        }
        row.push(sol[self.k(s)]);
        Ok(row)
    }
}

/// `c·f`, checked.
///
/// (This and [`add`] run on every coefficient of every Farkas form: the
/// error is built only on overflow, not once per entry as
/// `.ok_or(ScheduleError::Overflow)` in a `map` does, whose unused value
/// was then dropped, 1.7% of compiling CoxPH.)
pub(crate) fn scale(f: &[i64], c: i64) -> ScheduleResult<Form> {
    let mut out = Vec::with_capacity(f.len());
    for x in f {
        match x.checked_mul(c) {
            Some(v) => out.push(v),
            None => return Err(ScheduleError::Overflow),
        }
    }
    Ok(out)
}

/// `f + g`, checked.
pub(crate) fn add(f: &[i64], g: &[i64]) -> ScheduleResult<Form> {
    let mut out = Vec::with_capacity(f.len().min(g.len()));
    for (x, y) in f.iter().zip(g) {
        match x.checked_add(*y) {
            Some(v) => out.push(v),
            None => return Err(ScheduleError::Overflow),
        }
    }
    Ok(out)
}

/// Integer lexicographic minimum of `objs` over `sys`, through rational
/// relaxations (exact; faster than a plain integer lexmin on the scheduling
/// problems, whose relaxations are usually integral or nearly so).
///
/// A [`crate::poly::solver::Dive`] minimizes the objectives one after the
/// other on one tableau, fixing each at the ceiling `lo_j` of its rational
/// minimum over `S_j` (the system with the objectives before `j` fixed),
/// a lower bound of its integer minimum there. If it fixes every objective
/// and the last system has an integer point, that point is an integer
/// lexicographic minimum (it attains every lower bound in turn). Otherwise
/// some `S_L` has no integer point, and the search backtracks: at level
/// `j < L` (from the deepest), `S_{j+1}` has no integer point, so the
/// minimum of objective `j` over the integer points of `S_j`, if any, is at
/// least `lo_j + 1`; the solver computes it exactly over
/// `S_j ∧ f_j >= lo_j + 1` (skipped when the dive proved objective `j` flat
/// on `S_j`: `f_j < lo_j + 1` there) and the search goes on from
/// `S_j ∧ f_j = m` with a new dive. If no level has an integer point above
/// its bound, the system has none.
///
/// The system is `base` (its tableau built once, shared by the many
/// queries of a search) with `eqs` (`== 0`) and `ineqs` (`>= 0`) appended.
pub(crate) fn lexmin(
    base: &Prepared,
    eqs: &[Form],
    ineqs: &[Form],
    objs: &[Form],
) -> ScheduleResult<crate::poly::solver::Optimum<Vec<i64>>> {
    lexmin_with(base, eqs, ineqs, objs, IntegerQueries::Bounded)
}

/// What [`lexmin`] may do at a node whose dive does not end at an integer
/// point (the only nodes that need an integer query).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum IntegerQueries {
    /// Run the integer queries, each bounded by [`INTEGER_WORK`].
    Bounded,
    /// Give up at once, as a query that spent its work would
    /// (`PolyError::Budget`): the caller's allowance of such queries is
    /// spent.
    Skipped,
}

/// [`lexmin`], with the integer queries `queries` allows.
pub(crate) fn lexmin_with(
    base: &Prepared,
    eqs: &[Form],
    ineqs: &[Form],
    objs: &[Form],
    queries: IntegerQueries,
) -> ScheduleResult<crate::poly::solver::Optimum<Vec<i64>>> {
    lexmin_from(
        Restricted {
            base,
            eqs: eqs.to_vec(),
            ineqs: ineqs.to_vec(),
        },
        objs,
        0,
        queries,
    )
}

impl IntegerQueries {
    /// `Ok` when an integer query may run; for [`IntegerQueries::Skipped`]
    /// the budget error the query is given up with.
    fn may_run(self) -> ScheduleResult<()> {
        match self {
            IntegerQueries::Bounded => Ok(()),
            IntegerQueries::Skipped => Err(ScheduleError::Poly(crate::poly::PolyError::Budget(
                "integer query skipped: the search's allowance of capped queries is spent"
                    .to_string(),
            ))),
        }
    }
}

/// Simplex work (tableau cells, see [`crate::poly::solver::with_work_budget`])
/// one integer query of [`lexmin`] may spend (within the band's budget):
/// a branch and bound that needs more fails with `PolyError::Budget`,
/// which the Pluto search treats as an empty branch. Thin scheduling
/// polytopes can make branch and bound explode; without this cap one
/// query could take the whole band's budget.
///
/// Measured on the examples (2026-11-28): integer queries are rare (the
/// dives end at integral points). Outside `window_sum_2d` there are four
/// (LDA-GS and LDA-MH, two each), and all four reach a cap of 2e6 as they
/// reach this one. `window_sum_2d`'s searches for a better band member
/// make 105: 89 reach the cap, 16 (one query, repeated) end after 1.36e6
/// cells. With 5e5 instead of 2e6 those 16 reach the cap too, the
/// searches find the same members (the emitted code of every system of
/// `examples/` is unchanged), and `window_sum_2d` compiles in 400 ms
/// instead of 455.
const INTEGER_WORK: u64 = 500_000;

/// `base` with extra equalities and inequalities (the objectives fixed so
/// far), materialized only when a solver runs: the scheduling systems are
/// large and most levels of [`lexmin_from`] need no solver call.
#[derive(Clone)]
struct Restricted<'a> {
    base: &'a Prepared,
    eqs: Vec<Form>,
    ineqs: Vec<Form>,
}

impl Restricted<'_> {
    fn system(&self) -> crate::poly::solver::System {
        self.base.with_rows(&self.eqs, &self.ineqs)
    }

    /// `self ∧ f = m`.
    fn fixed(&self, f: &[i64], m: i64) -> ScheduleResult<Self> {
        let mut r = self.clone();
        r.eqs.push(fixed_row(f, m)?);
        Ok(r)
    }
}

/// The equality `f − m = 0` (`f` with its constant lowered by `m`).
fn fixed_row(f: &[i64], m: i64) -> ScheduleResult<Form> {
    let n = f.len() - 1;
    let mut eq = f.to_vec();
    eq[n] = eq[n].checked_sub(m).ok_or(ScheduleError::Overflow)?;
    Ok(eq)
}

/// The integer lexicographic minimum of `objs[k..]` over `cur` (see
/// [`lexmin`]).
fn lexmin_from(
    cur: Restricted,
    objs: &[Form],
    k: usize,
    queries: IntegerQueries,
) -> ScheduleResult<crate::poly::solver::Optimum<Vec<i64>>> {
    use crate::poly::solver::{self, DiveEnd, Optimum};
    use num_traits::ToPrimitive;
    // First without the tableau copies that decide flatness: most dives
    // end at an integral point and never look at it.
    let dive = cur.base.dive(&cur.eqs, &cur.ineqs, &objs[k..], false)?;
    let depth = dive.values.len();
    // S_j: `cur` with objectives k..k + j fixed at the dive's values.
    let level = |j: usize| -> ScheduleResult<Restricted> {
        let mut r = cur.clone();
        r.eqs.reserve(j);
        for (i, &m) in dive.values[..j].iter().enumerate() {
            r.eqs.push(fixed_row(&objs[k + i], m)?);
        }
        Ok(r)
    };
    match &dive.end {
        DiveEnd::Point(p) => {
            let ints: Option<Vec<i64>> = p
                .iter()
                .map(|x| x.is_integer().then(|| x.to_integer().to_i64()).flatten())
                .collect();
            if let Some(ints) = ints {
                return Ok(Optimum::Value(ints));
            }
            queries.may_run()?;
            let sys = level(depth)?.system();
            let (r, _) = solver::with_work_budget(INTEGER_WORK, || solver::integer_sample(&sys));
            if let Some(p) = r? {
                return Ok(Optimum::Value(p));
            }
        }
        DiveEnd::Empty => {}
        DiveEnd::Unbounded => {
            queries.may_run()?;
            let sys = level(depth)?.system();
            let (r, _) = solver::with_work_budget(INTEGER_WORK, || {
                solver::integer_lexmin(&sys, &objs[k + depth..])
            });
            return Ok(r?);
        }
    }
    // Backtracking: the same dive again (the flatness tests work on
    // copies, so it pivots alike and fixes the same values), with every
    // level's flatness decided.
    let flat = if depth == 0 {
        Vec::new()
    } else {
        queries.may_run()?;
        let exact = cur.base.dive(&cur.eqs, &cur.ineqs, &objs[k..], true)?;
        if exact.values != dive.values {
            return Err(ScheduleError::Internal(
                "the two dives of one ILP node differ".to_string(),
            ));
        }
        exact.flat
    };
    for j in (0..depth).rev() {
        if flat[j] {
            continue;
        }
        let f = &objs[k + j];
        let n = f.len() - 1;
        let mut above = level(j)?;
        let mut r = f.clone();
        r[n] = dive.values[j]
            .checked_add(1)
            .and_then(|b| r[n].checked_sub(b))
            .ok_or(ScheduleError::Overflow)?;
        above.ineqs.push(r);
        let sys = above.system();
        let (m, _) = solver::with_work_budget(INTEGER_WORK, || solver::integer_min(&sys, f));
        match m? {
            Optimum::Value(m) => return lexmin_from(above.fixed(f, m)?, objs, k + j + 1, queries),
            Optimum::Empty => {}
            Optimum::Unbounded => return Ok(Optimum::Unbounded),
        }
    }
    Ok(Optimum::Empty)
}

#[cfg(test)]
mod tests {
    use super::{lexmin, lexmin_with, IntegerQueries};
    use crate::poly::solver::{integer_lexmin, rational_lexmin, Optimum, Prepared, System};
    use crate::poly::PolyError;
    use crate::schedule::error::ScheduleError;
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    /// `x_0 = 1/2` in a box: rationally feasible, no integer point. With
    /// integer queries the search proves it empty; without, it gives up
    /// with a budget error rather than answer.
    #[test]
    fn skipped_integer_queries_give_up_on_a_fractional_relaxation() {
        let mut sys = cut_box(2, 4, vec![vec![2, 0, -1], vec![-2, 0, 1]]);
        sys.add_ineq(vec![0, 1, 0]);
        let objs = vec![vec![1, 0, 0], vec![0, 1, 0]];
        let base = Prepared::new(sys).unwrap();
        assert_eq!(lexmin(&base, &[], &[], &objs).unwrap(), Optimum::Empty);
        assert!(matches!(
            lexmin_with(&base, &[], &[], &objs, IntegerQueries::Skipped),
            Err(ScheduleError::Poly(PolyError::Budget(_)))
        ));
        // Fixed at x_0 = 2 the relaxation is integral: answered either way.
        let eq = vec![vec![1, 0, -2]];
        let objs2 = vec![vec![0, 1, 0]];
        let base2 = Prepared::new(cut_box(2, 4, vec![])).unwrap();
        for q in [IntegerQueries::Bounded, IntegerQueries::Skipped] {
            assert_eq!(
                lexmin_with(&base2, &eq, &[], &objs2, q).unwrap(),
                Optimum::Value(vec![2, 0])
            );
        }
    }

    /// The box `0 <= x_v <= hi` of `n` variables cut by `rows` (`>= 0`).
    fn cut_box(n: usize, hi: i64, rows: Vec<Vec<i64>>) -> System {
        let mut sys = System::new(n);
        for v in 0..n {
            let mut lo = vec![0; n + 1];
            lo[v] = 1;
            sys.add_ineq(lo);
            let mut up = vec![0; n + 1];
            up[v] = -1;
            up[n] = hi;
            sys.add_ineq(up);
        }
        for r in rows {
            sys.add_ineq(r);
        }
        sys
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        /// The dive-and-backtrack integer lexmin equals the solver's
        /// integer lexmin, on boxes cut by random inequalities (fractional
        /// vertices, thin and integer-empty pieces); every variable is
        /// also an objective, so the minimum is one point.
        #[test]
        fn lexmin_agrees_with_the_solver(
            rows in prop::collection::vec(prop::collection::vec(-5i64..=5, 4), 1..5),
            objs in prop::collection::vec(prop::collection::vec(-3i64..=3, 4), 0..3),
        ) {
            let n = 3;
            let sys = cut_box(n, 6, rows);
            let mut objs = objs;
            for v in 0..n {
                let mut o = vec![0; n + 1];
                o[v] = 1;
                objs.push(o);
            }
            let ours = lexmin(&Prepared::new(sys.clone()).unwrap(), &[], &[], &objs).unwrap();
            let theirs = integer_lexmin(&sys, &objs).unwrap();
            prop_assert_eq!(&ours, &theirs);
            // Without integer queries: the same answer, or a budget error,
            // and that only when the rational lexmin is not integral (the
            // dive then cannot end at it).
            let skipped = lexmin_with(
                &Prepared::new(sys.clone()).unwrap(), &[], &[], &objs, IntegerQueries::Skipped,
            );
            match skipped {
                Ok(v) => prop_assert_eq!(v, theirs),
                Err(ScheduleError::Poly(PolyError::Budget(_))) => {
                    let Optimum::Value(q) = rational_lexmin(&sys, &objs).unwrap() else {
                        return Err(TestCaseError::fail("skipped with no rational minimum"));
                    };
                    prop_assert!(q.iter().any(|x| !x.is_integer()));
                }
                Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
            }
        }

        /// The same with the objectives fixed and bounded by extra rows
        /// (the Pluto search's nodes): `lexmin` over a base with `eqs`
        /// and `ineqs` is the lexmin over the materialized system.
        #[test]
        fn lexmin_with_rows_is_lexmin_of_the_rows(
            rows in prop::collection::vec(prop::collection::vec(-5i64..=5, 4), 0..3),
            extra in prop::collection::vec(prop::collection::vec(-4i64..=4, 4), 1..3),
            eq in prop::collection::vec(-2i64..=2, 4),
        ) {
            let n = 3;
            let sys = cut_box(n, 5, rows);
            let objs: Vec<Vec<i64>> = (0..n)
                .map(|v| {
                    let mut o = vec![0; n + 1];
                    o[v] = if v == 1 { -1 } else { 1 };
                    o
                })
                .collect();
            let base = Prepared::new(sys.clone()).unwrap();
            let ours = lexmin(&base, std::slice::from_ref(&eq), &extra, &objs).unwrap();
            let theirs = integer_lexmin(&base.with_rows(&[eq], &extra), &objs).unwrap();
            prop_assert!(!matches!(ours, Optimum::Unbounded));
            prop_assert_eq!(ours, theirs);
        }
    }
}
