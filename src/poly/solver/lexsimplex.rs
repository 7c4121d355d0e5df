//! A tableau kept at the lexicographic minimum of a list of objectives
//! while constraints are added: the primal simplex with lexicographic
//! pricing finds the minimum once, then each added constraint is restored
//! by the dual simplex with the lexicographic ratio test (a warm start:
//! a few pivots where a [`super::Dive`] on a fresh copy minimizes every
//! objective again).
//!
//! The objectives `f_0, f_1, …` must include every variable (as a form
//! `a·x_v + c` with `a > 0`), so that the minimum is one point: for a
//! nonbasic column `j`, the reduced costs `d_j = (∂f_k/∂N_j)_k` are then
//! never all zero (raising `N_j` moves the point, and some `x_v` with it).
//! At a lexicographic minimum every live column has `d_j ≻ 0`
//! (lexicographically positive: raising it worsens the first objective it
//! touches).
//!
//! Dual simplex step (minimization): a restricted basic row `r` with a
//! negative value leaves; among the columns `j` with `a_rj > 0` (raising
//! them raises the row) the one with the lexicographically least
//! `d_j / a_rj` enters. After the pivot the column of `l` has
//! `d_l − (a_rl / a_rj)·d_j`, still `≻ 0` by that choice (and `≻ 0` for
//! `a_rl <= 0`, as `d_j ≻ 0`), and the objective vector grows by
//! `(−a_r0 / a_rj)·d_j ≻ 0`: it grows strictly at every pivot, so no basis
//! repeats and the restoration ends. No column with `a_rj > 0` proves the
//! row negative on the whole polyhedron: it is empty.
//!
//! Owns: [`LexSimplex`]. Must not know about: schedules, integer points
//! (the caller decides what a fractional minimum means).

use super::integer::sparse_terms;
use super::num::{Int, OResult, Ovf};
use super::tableau::{Pos, Tab};
use crate::poly::{PolyError, PolyResult};
use num_integer::Integer;
use num_rational::BigRational;
use std::sync::Arc;

/// Consecutive degenerate pivots of the primal simplex after which Bland's
/// rule (smallest entering variable id) takes over, as in
/// [`Tab::maximize`].
const DEGENERATE_LIMIT: usize = 30;

/// One objective, as the tableau's reduced costs read it.
#[derive(Clone, Copy, Debug)]
enum Objective {
    /// `a·x_v + c` with `a > 0`: minimizing it minimizes `x_v`, whose
    /// costs are its own row (basic) or a unit column (nonbasic).
    Var(usize),
    /// Any other form: a free (unrestricted) row of the tableau, which
    /// stays basic (no pivot ever leaves an unrestricted row) and up to
    /// date.
    Row(usize),
}

/// A feasible tableau at the lexicographic minimum of its objectives (see
/// the module comment), over `i64` (an overflow gives up: the caller
/// answers the query another way).
#[derive(Clone, Debug)]
pub struct LexSimplex {
    tab: Tab<i64>,
    objs: Vec<Objective>,
    /// The objectives' forms (shared by the copies).
    forms: Arc<[Vec<i64>]>,
    /// Per problem variable, the first level whose objective is that
    /// variable (every variable has one).
    unit_level: Arc<[usize]>,
}

impl LexSimplex {
    /// The lexicographic minimum of `objs` (forms over the tableau's
    /// variables plus a constant) over the feasible tableau `tab`.
    /// `Ok(None)` when it does not apply: a variable is not among the
    /// objectives (the minimum need not be one point), or the minimum is
    /// unbounded. `Ovf` on overflow or a spent work budget.
    pub(super) fn new(mut tab: Tab<i64>, objs: &[Vec<i64>]) -> OResult<Option<LexSimplex>> {
        let n = tab.n_x_vars();
        prune_constant_rows(&mut tab);
        let mut unit_level = vec![usize::MAX; n];
        let mut kinds = Vec::with_capacity(objs.len());
        for f in objs {
            let terms: Vec<(usize, i64)> = sparse_terms(&f[..n]);
            match terms.as_slice() {
                [(v, a)] if *a > 0 => {
                    unit_level[*v] = unit_level[*v].min(kinds.len());
                    kinds.push(Objective::Var(*v));
                }
                _ => kinds.push(Objective::Row(tab.add_free_sparse_row(&terms, &f[n])?)),
            }
        }
        if (0..n).any(|v| unit_level[v] == usize::MAX && !tab.is_dead(v)) {
            return Ok(None);
        }
        let mut lex = LexSimplex {
            tab,
            objs: kinds,
            forms: objs.into(),
            unit_level: unit_level.into(),
        };
        if !lex.tab.empty && !lex.minimize()? {
            return Ok(None);
        }
        Ok(Some(lex))
    }

    /// This polyhedron with `eqs` (`== 0`) and `ineqs` (`>= 0`) (forms over
    /// its variables plus a constant) added, at its lexicographic minimum
    /// (or empty): a copy of the tableau, restored by the dual simplex.
    /// `Ok(None)` when the `i64` tableau overflowed or the work budget (see
    /// [`super::with_work_budget`]) is spent: the caller answers another
    /// way (the minimum over [`super::Prepared::with_rows`]).
    pub fn extended(&self, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> PolyResult<Option<LexSimplex>> {
        self.check_rows(eqs, ineqs)?;
        let mut lex = self.clone();
        Ok(lex.add_rows(eqs, ineqs).ok().map(|()| lex))
    }

    /// Every row has one entry per variable and a constant.
    fn check_rows(&self, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> PolyResult<()> {
        let n = self.tab.n_x_vars();
        match eqs.iter().chain(ineqs).find(|r| r.len() != n + 1) {
            Some(r) => Err(PolyError::Invalid(format!(
                "row has {} entries, expected {}",
                r.len(),
                n + 1
            ))),
            None => Ok(()),
        }
    }

    /// [`Self::extended`] on this tableau itself rather than a copy.
    pub fn into_extended(
        mut self,
        eqs: &[Vec<i64>],
        ineqs: &[Vec<i64>],
    ) -> PolyResult<Option<LexSimplex>> {
        self.check_rows(eqs, ineqs)?;
        Ok(self.add_rows(eqs, ineqs).ok().map(|()| self))
    }

    /// Does every group hold a form reaching `>= 0` somewhere on the
    /// polyhedron (the test of [`super::Prepared::each_reaches`], on a
    /// copy of this tableau)?
    /// `None` as for [`Self::extended`].
    pub fn each_reaches(&self, groups: &[Vec<Vec<i64>>]) -> Option<bool> {
        if self.tab.empty {
            return Some(false);
        }
        super::each_reaches(&mut self.tab.clone(), groups).ok()
    }

    /// Add the rows (see [`Self::extended`]); `Ovf` on overflow, a spent
    /// work budget, or a row with an entry in a free column (none exist
    /// when the minimum is bounded).
    fn add_rows(&mut self, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> OResult<()> {
        let n = self.tab.n_x_vars();
        for e in eqs {
            if self.tab.empty {
                break;
            }
            self.add_eq(&sparse_terms(&e[..n]), e[n])?;
        }
        for r in ineqs {
            if self.tab.empty {
                break;
            }
            self.add_ineq(&sparse_terms(&r[..n]), r[n])?;
        }
        Ok(())
    }

    /// Has the polyhedron no rational point?
    pub fn is_empty(&self) -> bool {
        self.tab.empty
    }

    /// The minimum (`None` when the polyhedron is empty).
    pub fn minimum(&self) -> Option<Vec<BigRational>> {
        (!self.tab.empty).then(|| self.tab.point())
    }

    /// The minimum when every coordinate is an integer fitting `i64`.
    pub fn integral_minimum(&self) -> Option<Vec<i64>> {
        if self.tab.empty {
            return None;
        }
        self.tab.integral_point().ok().flatten()
    }

    /// How a [`super::Dive`] of the objectives over this polyhedron ends,
    /// found on this tableau by cuts alone (see [`DiveOutcome`]).
    ///
    /// The dive fixes each objective `f_k` in turn at `c = ⌈m_k⌉`, `m_k`
    /// its rational minimum given the earlier levels. While the minima are
    /// integral that is the lexicographic minimum. At the first fractional
    /// `m_k`, the cut `f_k >= c` is added (on a copy): if the new minimum
    /// keeps `f_0 … f_{k-1}` at their levels, the fixed set `S_k` has
    /// points with `f_k >= c` besides those at `m_k < c`, hence (convexity)
    /// with `f_k = c`, and the new minimum lies in `S_k ∧ f_k = c` — the
    /// dive's next set — and continues as the dive does. If it moves an
    /// earlier level (or the cut empties the polyhedron), `S_k ∧ f_k = c`
    /// is empty: the dive ends there.
    pub fn dive_outcome(&self) -> DiveOutcome {
        if self.tab.empty {
            return DiveOutcome::Unknown;
        }
        let mut cut_copy: Option<LexSimplex> = None;
        let mut levels: Vec<(i128, i128)> = Vec::new();
        let n = self.tab.n_x_vars();
        loop {
            let cur = cut_copy.as_ref().unwrap_or(self);
            if cur.tab.empty {
                return DiveOutcome::EmptyBelow;
            }
            let mut cut = None;
            for (k, f) in self.forms.iter().enumerate() {
                let Some(v) = cur.objective_value(k) else {
                    return DiveOutcome::Unknown;
                };
                match levels.get(k) {
                    Some(l) if *l != v => return DiveOutcome::EmptyBelow,
                    Some(_) => {}
                    None if v.1 == 1 => levels.push(v),
                    None => {
                        let c = -Integer::div_floor(&-v.0, &v.1);
                        let Some(cst) = i64::try_from(c).ok().and_then(|c| f[n].checked_sub(c))
                        else {
                            return DiveOutcome::Unknown;
                        };
                        levels.push((c, 1));
                        cut = Some((sparse_terms::<i64>(&f[..n]), cst));
                        break;
                    }
                }
            }
            let Some((row, cst)) = cut else {
                return match cur.tab.integral_point() {
                    Ok(Some(p)) => DiveOutcome::Point(p),
                    _ => DiveOutcome::Unknown,
                };
            };
            let copy = cut_copy.get_or_insert_with(|| self.clone());
            if copy.add_ineq(&row, cst).is_err() {
                return DiveOutcome::Unknown;
            }
        }
    }

    /// The current value of objective `k` as a fraction in lowest terms
    /// (`None` on overflow).
    fn objective_value(&self, k: usize) -> Option<(i128, i128)> {
        let t = &self.tab;
        let at = |v: usize| match t.pos[v] {
            Pos::Row(i) => (i128::from(t.rows[i][0]), i128::from(t.den[i])),
            _ => (0, 1),
        };
        let (num, den) = match self.objs[k] {
            Objective::Row(u) => at(u),
            Objective::Var(v) => {
                let f = &self.forms[k];
                let (x, d) = at(v);
                let num = i128::from(f[v])
                    .checked_mul(x)?
                    .checked_add(i128::from(f[f.len() - 1]).checked_mul(d)?)?;
                (num, d)
            }
        };
        if den == 1 {
            return Some((num, 1));
        }
        let g = Integer::gcd(&num, &den);
        Some((num / g, den / g))
    }

    /// Objective `o`'s reduced cost in column `j`, scaled by the positive
    /// denominator of its row (the same for every column).
    fn cost(&self, o: Objective, j: usize) -> i64 {
        let t = &self.tab;
        let v = match o {
            Objective::Var(v) | Objective::Row(v) => v,
        };
        match t.pos[v] {
            Pos::Row(i) => t.rows[i][j],
            Pos::Col(c) => i64::from(c == j),
            Pos::Dead => 0,
        }
    }

    /// Primal simplex to the lexicographic minimum from a feasible basis.
    /// `false` when it is unbounded.
    fn minimize(&mut self) -> OResult<bool> {
        let mut bland = false;
        let mut degenerate = 0usize;
        loop {
            let j = match self.entering(bland) {
                Entering::Optimal => return Ok(true),
                Entering::Unbounded => return Ok(false),
                Entering::Column(j) => j,
            };
            let Some(i) = self.tab.ratio_test(j, None)? else {
                return Ok(false);
            };
            if self.tab.rows[i][0] == 0 {
                degenerate += 1;
                bland |= degenerate >= DEGENERATE_LIMIT;
            } else {
                degenerate = 0;
            }
            self.tab.pivot(i, j)?;
        }
    }

    /// A column whose raising lowers the objectives lexicographically
    /// (`d_j ≺ 0`): with Dantzig's rule, one of the first objective that
    /// any column lowers, of the steepest cost (ties to the smallest
    /// variable id); with Bland's, the one of smallest variable id.
    fn entering(&self, bland: bool) -> Entering {
        let t = &self.tab;
        let mut undecided: Vec<usize> = (1..t.ncols()).collect();
        let mut best: Option<(usize, i64)> = None;
        for &o in &self.objs {
            let mut unbounded = false;
            undecided.retain(|&j| {
                let c = self.cost(o, j);
                if c == 0 {
                    return true;
                }
                if t.is_free_col(j) {
                    unbounded = true;
                } else if c < 0 {
                    let better = match best {
                        None => true,
                        Some((b, _)) if bland => t.col_var[j] < t.col_var[b],
                        Some((b, cb)) => c < cb || (c == cb && t.col_var[j] < t.col_var[b]),
                    };
                    if better {
                        best = Some((j, c));
                    }
                }
                false
            });
            if unbounded {
                return Entering::Unbounded;
            }
            if !bland && best.is_some() || undecided.is_empty() {
                break;
            }
        }
        best.map_or(Entering::Optimal, |(j, _)| Entering::Column(j))
    }

    /// The levels whose costs are read off a row (the free rows of the
    /// general objectives, the rows of the basic objective variables), in
    /// level order: a column's cost is zero at every other level but the
    /// unit one of its own variable ([`Self::unit_level`]).
    fn row_levels(&self) -> Vec<(usize, usize)> {
        let t = &self.tab;
        self.objs
            .iter()
            .enumerate()
            .filter_map(|(k, &o)| {
                let v = match o {
                    Objective::Var(v) | Objective::Row(v) => v,
                };
                match t.pos[v] {
                    Pos::Row(i) => Some((k, i)),
                    _ => None,
                }
            })
            .collect()
    }

    /// The level at which column `j` has the unit cost of its own
    /// variable's objective (`usize::MAX` for a slack).
    fn unit_level(&self, j: usize) -> usize {
        let v = self.tab.col_var[j];
        self.unit_level.get(v).copied().unwrap_or(usize::MAX)
    }

    /// `d_j / a_rj ≺ d_b / a_rb` (`a_rj, a_rb > 0`), ties to the smaller
    /// variable id; `levels` are [`Self::row_levels`]. Up to the first
    /// unit level of the two columns only the row levels can differ; at
    /// that level the column with the unit has cost 1 and the other 0.
    fn ratio_less(&self, r: usize, j: usize, b: usize, levels: &[(usize, usize)]) -> OResult<bool> {
        let t = &self.tab;
        let (arj, arb) = (t.rows[r][j], t.rows[r][b]);
        let (uj, ub) = (self.unit_level(j), self.unit_level(b));
        let first_unit = uj.min(ub);
        for &(k, i) in levels {
            if k > first_unit {
                break;
            }
            let lhs = t.rows[i][j].mul(&arb)?;
            let rhs = t.rows[i][b].mul(&arj)?;
            if lhs != rhs {
                return Ok(lhs < rhs);
            }
        }
        if first_unit != usize::MAX {
            // `1·a_rb > 0·a_rj` when the unit is `j`'s.
            return Ok(ub < uj);
        }
        Ok(t.col_var[j] < t.col_var[b])
    }

    /// Dual simplex until every restricted row is non-negative (or the
    /// tableau is found empty), keeping the lexicographic minimum. Each
    /// step first looks at every negative row: one without a positive
    /// entry stays negative at every point (its columns are non-negative),
    /// so the polyhedron is empty, found before the pivots the leaving
    /// rule would make to reach that row (a search child is often empty:
    /// 122 of `window_sum_2d`'s ~270).
    fn restore(&mut self) -> OResult<()> {
        loop {
            let t = &self.tab;
            let negative =
                (0..t.rows.len()).filter(|&i| t.restricted[t.row_var[i]] && t.rows[i][0] < 0);
            // A negative row with no positive entry cannot rise: empty
            // (whichever negative row the rule would pivot on first).
            let mut leaving: Option<usize> = None;
            for i in negative {
                if t.rows[i][1..].iter().all(|&a| a <= 0) {
                    self.tab.empty = true;
                    return Ok(());
                }
                if leaving.is_none_or(|l| t.row_var[i] < t.row_var[l]) {
                    leaving = Some(i);
                }
            }
            let Some(r) = leaving else {
                return Ok(());
            };
            let mut enter: Option<usize> = None;
            let mut levels = None;
            for j in 1..t.ncols() {
                if t.rows[r][j] <= 0 {
                    continue;
                }
                enter = match enter {
                    Some(b) => {
                        let levels = levels.get_or_insert_with(|| self.row_levels());
                        if self.ratio_less(r, j, b, levels)? {
                            Some(j)
                        } else {
                            Some(b)
                        }
                    }
                    None => Some(j),
                };
            }
            let Some(j) = enter else {
                self.tab.empty = true;
                return Ok(());
            };
            self.tab.pivot(r, j)?;
        }
    }

    /// Add `Σ c_v·x_v + cst >= 0`; returns its slack variable.
    fn add_ineq(&mut self, c: &[(usize, i64)], cst: i64) -> OResult<usize> {
        let (nums, den) = self.tab.expr_of(c, &cst)?;
        if (1..nums.len()).any(|j| nums[j] != 0 && self.tab.is_free_col(j)) {
            return Err(Ovf);
        }
        let v = self.tab.push_row(nums, den, true);
        self.restore()?;
        Ok(v)
    }

    /// Add `Σ c_v·x_v + cst == 0`: the two inequalities; then, when one of
    /// the two slacks is nonbasic, its column is deleted (the slack fixed
    /// at 0, which keeps both the feasibility and the costs of the other
    /// columns) and the other's row, now zero, dropped.
    fn add_eq(&mut self, c: &[(usize, i64)], cst: i64) -> OResult<()> {
        let s = self.add_ineq(c, cst)?;
        if self.tab.empty {
            return Ok(());
        }
        let neg: Vec<(usize, i64)> = c
            .iter()
            .map(|&(v, a)| Ok((v, a.neg()?)))
            .collect::<OResult<_>>()?;
        let t = self.add_ineq(&neg, cst.neg()?)?;
        if self.tab.empty {
            return Ok(());
        }
        for (fixed, other) in [(s, t), (t, s)] {
            if let Pos::Col(j) = self.tab.pos[fixed] {
                self.tab.kill_col(j);
                if let Pos::Row(i) = self.tab.pos[other] {
                    if self.tab.rows[i].iter().all(|x| *x == 0) {
                        self.tab.drop_row_var(other);
                    }
                }
                break;
            }
        }
        Ok(())
    }
}

/// Drop the rows no pivot and no added row can involve: a row with no
/// non-zero coefficient never changes. A restricted slack's is a
/// constraint that holds for good (the tableau is feasible); a problem
/// variable's at value 0 is the variable fixed at 0, which a deleted
/// variable stands for (rows added later read it as 0). Copies of the
/// tableau get smaller (the scheduling systems fix every parameter
/// coefficient at 0).
fn prune_constant_rows(tab: &mut Tab<i64>) {
    let n = tab.n_x_vars();
    let dead: Vec<usize> = (0..tab.rows.len())
        .filter(|&i| {
            let (row, v) = (&tab.rows[i], tab.row_var[i]);
            row[1..].iter().all(|x| *x == 0)
                && ((v >= n && tab.restricted[v]) || (v < n && row[0] == 0))
        })
        .map(|i| tab.row_var[i])
        .collect();
    tab.drop_row_vars(&dead);
}

/// How a dive ends (see [`LexSimplex::dive_outcome`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiveOutcome {
    /// It fixes every objective and ends at this integral point.
    Point(Vec<i64>),
    /// Some level `k >= 1` (fixing `f_{k-1}` at the ceiling of its
    /// fractional minimum) has no rational point.
    EmptyBelow,
    /// Not decided here (an empty polyhedron, a fractional end point, an
    /// overflow): the caller dives.
    Unknown,
}

/// What the lexicographic pricing found.
enum Entering {
    Optimal,
    Unbounded,
    Column(usize),
}
