//! The exact simplex tableau (dictionary form, fraction-free rows).
//!
//! Owns: a dictionary over variables of two kinds — the `n_x` problem
//! variables `x` (free, i.e. of any sign, until a sign constraint
//! `a·x_v >= 0` restricts one: the variable is then that constraint's
//! slack) and one slack variable per other added constraint (restricted to
//! be `>= 0`).  A restricted problem variable deleted with a column is
//! fixed at 0, like a slack.  Every basic variable `B` has a row
//! `den · B = row[0] + Σ_j row[j] · N_j` where `N_j` is the variable of
//! column `j >= 1`; `den > 0` and the row is kept divided by the gcd of its
//! entries.  Nonbasic variables are at value 0, so a basic variable's value
//! is `row[0] / den`.  Equalities become dead columns (a slack fixed at 0).
//!
//! Invariants:
//! * feasibility: every restricted basic row has `row[0] >= 0` (unless the
//!   tableau was found empty);
//! * a free (unrestricted) nonbasic column has coefficient 0 in every
//!   restricted row, so free columns never limit or help feasibility.
//!
//! Pivoting uses Dantzig's rule (steepest coefficient enters) and switches
//! to Bland's rule (smallest variable id enters, ties on the leaving side go
//! to the smallest variable id) after a run of degenerate pivots, so no loop
//! cycles.
//! All arithmetic is checked (`Ovf` on overflow); callers redo the whole
//! computation with `BigInt` in that case.
//!
//! The rows are stored in one flat vector ([`super::rows::Rows`]). The
//! dictionary's fields and its pivot primitives are visible to the
//! solver's other modules for the one that prices and pivots by other
//! rules (`lexsimplex`: lexicographic primal and dual simplex); the
//! invariants above are theirs to keep too.
//!
//! Must not know about: integer sampling, lattices, the public API types.

use super::num::{normalize, Int, OResult, Ovf};
use super::rows::Rows;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;

/// The non-zero entries `(v, c[v])` of a dense row.
fn terms<T: Int>(c: &[T]) -> Vec<(usize, T)> {
    c.iter()
        .enumerate()
        .filter(|(_, x)| !x.is_zero())
        .map(|(v, x)| (v, x.clone()))
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Pos {
    Row(usize),
    Col(usize),
    Dead,
}

/// Consecutive degenerate pivots after which Bland's rule takes over.
const DEGENERATE_LIMIT: usize = 30;

/// What a maximization stops at.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    /// Stop as soon as the value is `>= 0` (feasibility restoration).
    UntilNonneg,
    /// Stop as soon as the value is `> 0`.
    UntilPositive,
    /// Stop as soon as the value is `>= 0`, never pivoting the variable
    /// itself out of its row (a free row can then be dropped).
    UntilNonnegInRow,
    /// Run to the optimum.
    Full,
}

/// Outcome of a maximization.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum MaxOutcome {
    /// The mode's stopping condition was reached.
    Reached,
    /// The maximum is attained at the current basis (and the stopping
    /// condition, if any, was not reached).
    Optimal,
    /// The variable is unbounded above.
    Unbounded,
}

/// A simplex tableau over the integer type `T`.
#[derive(Clone, Debug)]
pub(crate) struct Tab<T> {
    n_x: usize,
    pub(super) restricted: Vec<bool>,
    pub(super) pos: Vec<Pos>,
    /// `col_var[j]` is the variable of column `j`; column 0 is the constant.
    pub(super) col_var: Vec<usize>,
    pub(super) rows: Rows<T>,
    pub(super) den: Vec<T>,
    pub(super) row_var: Vec<usize>,
    /// Set once the constraints are found to have no rational solution.
    pub empty: bool,
    /// While `Some`, every pivot `(r, j)` is recorded, so that a test can
    /// pivot back to the basis it started from ([`Self::can_lower_by_one`]).
    pivot_log: Option<Vec<(usize, usize)>>,
}

impl<T: Int> Tab<T> {
    /// A tableau over `n_x` free variables and no constraints.
    pub fn new(n_x: usize) -> Self {
        let mut col_var = vec![usize::MAX];
        col_var.extend(0..n_x);
        Tab {
            n_x,
            restricted: vec![false; n_x],
            pos: (0..n_x).map(|v| Pos::Col(v + 1)).collect(),
            col_var,
            rows: Rows::new(n_x + 1),
            den: Vec::new(),
            row_var: Vec::new(),
            empty: false,
            pivot_log: None,
        }
    }

    pub(super) fn ncols(&self) -> usize {
        self.col_var.len()
    }

    pub(super) fn is_free_col(&self, j: usize) -> bool {
        !self.restricted[self.col_var[j]]
    }

    /// The row `(nums, den)` of the affine form `Σ c_v·x_v + cst` (the
    /// terms `(v, c_v)` of `c`, zero ones ignored) in terms of the current
    /// nonbasic variables.
    pub(super) fn expr_of(&self, c: &[(usize, T)], cst: &T) -> OResult<(Vec<T>, T)> {
        let nc = self.ncols();
        let mut acc = vec![T::zero(); nc];
        acc[0] = cst.clone();
        let mut d = T::one();
        for (v, cv) in c.iter().map(|(v, cv)| (*v, cv)) {
            if cv.is_zero() || v >= self.n_x {
                continue;
            }
            match self.pos[v] {
                Pos::Col(j) => acc[j] = acc[j].add(&cv.mul(&d)?)?,
                Pos::Row(i) => {
                    let di = &self.den[i];
                    let g = d.gcd(di)?;
                    let fa = di.div_exact(&g)?; // multiply acc by this
                    let fr = d.div_exact(&g)?; // multiply row by this
                    let m = cv.mul(&fr)?;
                    if !fa.is_one() {
                        for a in acc.iter_mut() {
                            if !a.is_zero() {
                                *a = a.mul(&fa)?;
                            }
                        }
                        d = d.mul(&fa)?;
                    }
                    for (a, r) in acc.iter_mut().zip(self.rows[i].iter()) {
                        if !r.is_zero() {
                            *a = a.add(&r.mul(&m)?)?;
                        }
                    }
                }
                // A dead problem variable is a restricted column deleted
                // by a restriction to a face: fixed at 0, it adds nothing.
                // (Only temporary free rows are dropped, never problem
                // variables.)
                Pos::Dead => {}
            }
        }
        normalize(&mut acc, &mut d)?;
        Ok((acc, d))
    }

    /// The problem variable `v` when `c` is `a·e_v` with `a > 0` and `x_v`
    /// is a free nonbasic variable.
    fn unit_free_col(&self, c: &[(usize, T)]) -> Option<usize> {
        let mut nz = c.iter().filter(|(_, x)| !x.is_zero());
        let &(v, ref a) = nz.next()?;
        if nz.next().is_some() || !a.is_pos() || v >= self.n_x || self.restricted[v] {
            return None;
        }
        matches!(self.pos[v], Pos::Col(_)).then_some(v)
    }

    pub(super) fn push_row(&mut self, nums: Vec<T>, den: T, restricted: bool) -> usize {
        let v = self.restricted.len();
        self.restricted.push(restricted);
        self.pos.push(Pos::Row(self.rows.len()));
        self.rows.push(nums);
        self.den.push(den);
        self.row_var.push(v);
        v
    }

    /// Add the constraint `Σ c[v]·x_v + cst >= 0` (or `== 0` if `is_eq`):
    /// [`Self::add_sparse_constraint`] of the non-zero entries of `c`.
    pub fn add_constraint(&mut self, c: &[T], cst: &T, is_eq: bool) -> OResult<Option<usize>> {
        self.add_sparse_constraint(&terms(c), cst, is_eq)
    }

    /// Add the constraint `Σ c_v·x_v + cst >= 0` (or `== 0` if `is_eq`),
    /// given by its terms `(v, c_v)` (zero ones are ignored; the rows of
    /// scheduling systems have a few non-zero entries among hundreds).
    /// Returns the id of its slack variable (`None` for an equality, whose
    /// slack is eliminated; the variable itself for a sign constraint on a
    /// free nonbasic variable). Restores feasibility or sets `empty`.
    pub fn add_sparse_constraint(
        &mut self,
        c: &[(usize, T)],
        cst: &T,
        is_eq: bool,
    ) -> OResult<Option<usize>> {
        if self.empty {
            return Ok(None);
        }
        if !is_eq && cst.is_zero() {
            if let Some(v) = self.unit_free_col(c) {
                // `a·x_v >= 0` (`a > 0`) on a free nonbasic `x_v`: the
                // variable itself becomes the constraint's slack. At value
                // 0 it is feasible, and no restricted row has an entry in
                // its column (the free-column invariant), so restricting it
                // breaks no invariant and saves the pivot (and the row)
                // the general path would spend.
                self.restricted[v] = true;
                return Ok(Some(v));
            }
        }
        let (nums, den) = self.expr_of(c, cst)?;
        if is_eq {
            let free = self.free_col_in(&nums);
            if let Some(j) = free {
                let v = self.push_row(nums, den, true);
                let r = self.rows.len() - 1;
                self.pivot(r, j)?;
                self.kill_col(j);
                let _ = v;
                return Ok(None);
            }
            if nums[1..].iter().all(|x| x.is_zero()) {
                if !nums[0].is_zero() {
                    self.empty = true;
                }
                return Ok(None);
            }
            // An equality among restricted variables: two inequalities.
            let neg: Vec<T> = nums.iter().map(|x| x.neg()).collect::<OResult<_>>()?;
            self.add_row_ineq(nums, den.clone())?;
            if !self.empty {
                // Re-express (the basis may have changed).
                let (n2, d2) = self.expr_of(c, cst)?;
                let neg2: Vec<T> = n2.iter().map(|x| x.neg()).collect::<OResult<_>>()?;
                let _ = neg;
                self.add_row_ineq(neg2, d2)?;
            }
            return Ok(None);
        }
        Ok(Some(self.add_row_ineq(nums, den)?))
    }

    /// The free column with a non-zero entry in the row `nums`, of least
    /// variable id (not of least position: the columns' order carries no
    /// meaning, see [`Self::kill_col`]).
    fn free_col_in(&self, nums: &[T]) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (j, x) in nums.iter().enumerate().skip(1) {
            if !x.is_zero()
                && self.is_free_col(j)
                && best.is_none_or(|b| self.col_var[j] < self.col_var[b])
            {
                best = Some(j);
            }
        }
        best
    }

    fn add_row_ineq(&mut self, nums: Vec<T>, den: T) -> OResult<usize> {
        let free = self.free_col_in(&nums);
        let v = self.push_row(nums, den, true);
        let r = self.rows.len() - 1;
        if let Some(j) = free {
            // The slack becomes nonbasic (value 0, feasible); the free
            // variable becomes basic. Other restricted rows have 0 in column
            // j, so their values do not change.
            self.pivot(r, j)?;
            return Ok(v);
        }
        if self.rows[r][0].is_neg() {
            match self.maximize(v, Mode::UntilNonneg)? {
                MaxOutcome::Reached | MaxOutcome::Unbounded => {}
                MaxOutcome::Optimal => self.empty = true,
            }
        }
        Ok(v)
    }

    /// Add an unrestricted row for `Σ c[v]·x_v + cst`; returns its variable.
    pub fn add_free_row(&mut self, c: &[T], cst: &T) -> OResult<usize> {
        self.add_free_sparse_row(&terms(c), cst)
    }

    /// [`Self::add_free_row`] of the terms `(v, c_v)` (zero ones ignored).
    pub fn add_free_sparse_row(&mut self, c: &[(usize, T)], cst: &T) -> OResult<usize> {
        let (nums, den) = self.expr_of(c, cst)?;
        Ok(self.push_row(nums, den, false))
    }

    /// Remove a basic variable's row (the variable is forgotten).
    pub fn drop_row_var(&mut self, v: usize) {
        if let Pos::Row(i) = self.pos[v] {
            self.rows.remove(i);
            self.den.remove(i);
            self.row_var.remove(i);
            for (k, &rv) in self.row_var.iter().enumerate().skip(i) {
                self.pos[rv] = Pos::Row(k);
            }
            self.pos[v] = Pos::Dead;
        }
    }

    /// [`Self::drop_row_var`] of every basic variable in `vars`, in one
    /// pass over the rows (the later rows move up once, not once per
    /// dropped row).
    pub fn drop_row_vars(&mut self, vars: &[usize]) {
        let mut keep = vec![true; self.rows.len()];
        for &v in vars {
            if let Pos::Row(i) = self.pos[v] {
                keep[i] = false;
                self.pos[v] = Pos::Dead;
            }
        }
        self.rows.retain(&keep);
        let mut k = 0;
        for (i, &kept) in keep.iter().enumerate() {
            if kept {
                self.den.swap(k, i);
                self.row_var.swap(k, i);
                self.pos[self.row_var[k]] = Pos::Row(k);
                k += 1;
            }
        }
        self.den.truncate(k);
        self.row_var.truncate(k);
    }

    /// Remove column `j` (its variable is fixed at 0 for good).
    /// The columns' order carries no meaning (every choice of a pivot breaks
    /// ties by variable id, never by column): the last column takes the
    /// dead one's place (`swap_remove`), and no row's tail is shifted.
    pub(super) fn kill_col(&mut self, j: usize) {
        self.rows.swap_remove_col(j);
        let v = self.col_var.swap_remove(j);
        self.pos[v] = Pos::Dead;
        if let Some(&moved) = self.col_var.get(j) {
            self.pos[moved] = Pos::Col(j);
        }
    }

    /// [`Self::kill_col`] for every column `j >= 1` with `dead[j]`, from the
    /// highest down, so that the column moved into a dead one's place is
    /// never dead itself.
    fn kill_cols(&mut self, dead: &[bool]) {
        for j in (1..dead.len()).rev() {
            if dead[j] {
                self.kill_col(j);
            }
        }
    }

    /// Pivot: the basic variable of row `r` leaves, the variable of column
    /// `j` (with `row[r][j] != 0`) enters.
    pub(super) fn pivot(&mut self, r: usize, j: usize) -> OResult<()> {
        super::stats::PIVOTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        super::budget::charge_work(self.rows.len().saturating_mul(self.ncols()))?;
        if let Some(log) = &mut self.pivot_log {
            log.push((r, j));
        }
        self.pivot_uncharged(r, j)
    }

    /// [`Self::pivot`] without its charge to the work budget or its count.
    /// Pivoting at `(r, j)` again after a pivot at `(r, j)` gives back the
    /// same tableau, entry for entry: the variables of row `r` and column
    /// `j` trade places back, and a row of a given basis is unique once
    /// divided by the gcd of its entries with `den > 0`.
    fn pivot_uncharged(&mut self, r: usize, j: usize) -> OResult<()> {
        let a = self.rows[r][j].clone();
        let dr = self.den[r].clone();
        let mut nr: Vec<T> = Vec::with_capacity(self.ncols());
        for (k, x) in self.rows[r].iter().enumerate() {
            if k == j {
                nr.push(dr.clone());
            } else {
                nr.push(x.neg()?);
            }
        }
        let mut nd = a;
        if nd.is_neg() {
            for x in nr.iter_mut() {
                *x = x.neg()?;
            }
            nd = nd.neg()?;
        }
        normalize(&mut nr, &mut nd)?;
        // The pivot row is sparse in scheduling problems (Farkas rows):
        // the update `row_i·f + e·nr` touches only its non-zero columns
        // beyond the scaling by `f`.
        let nz: Vec<usize> = (0..nr.len())
            .filter(|&k| k != j && !nr[k].is_zero())
            .collect();
        for i in 0..self.rows.len() {
            if i == r || self.rows[i][j].is_zero() {
                continue;
            }
            // Row i: d_i·B_i = Σ_{k≠j} row_i[k]·N_k + e·N_j with
            // N_j = (Σ nr[k]·N_k)/nd; multiply by nd/g, g = gcd(nd, e).
            let e0 = self.rows[i][j].clone();
            let g = nd.gcd(&e0)?;
            let (f, e) = if g.is_one() {
                (nd.clone(), e0)
            } else {
                (nd.div_exact(&g)?, e0.div_exact(&g)?)
            };
            let row = &mut self.rows[i];
            if !f.is_one() {
                for x in row.iter_mut() {
                    if !x.is_zero() {
                        *x = x.mul(&f)?;
                    }
                }
            }
            for &k in &nz {
                row[k] = row[k].add(&e.mul(&nr[k])?)?;
            }
            row[j] = e.mul(&nr[j])?;
            let mut d = self.den[i].mul(&f)?;
            normalize(row, &mut d)?;
            self.den[i] = d;
        }
        self.rows.set(r, &nr);
        self.den[r] = nd;
        let rv = self.row_var[r];
        let cv = self.col_var[j];
        self.row_var[r] = cv;
        self.col_var[j] = rv;
        self.pos[cv] = Pos::Row(r);
        self.pos[rv] = Pos::Col(j);
        Ok(())
    }

    /// Ratio test for increasing column `j`: the restricted row (other than
    /// `skip`) that first hits 0, with Bland's tie-break. Returns the row
    /// index and the ratio as `(num, den)` (`row[0]` and `-row[j]`).
    pub(super) fn ratio_test(&self, j: usize, skip: Option<usize>) -> OResult<Option<usize>> {
        let mut best: Option<usize> = None;
        for i in 0..self.rows.len() {
            if Some(i) == skip || !self.restricted[self.row_var[i]] || !self.rows[i][j].is_neg() {
                continue;
            }
            match best {
                None => best = Some(i),
                Some(b) => {
                    // compare rows[i][0] / -rows[i][j]  vs  rows[b][0] / -rows[b][j]
                    let lhs = self.rows[i][0].mul(&self.rows[b][j].neg()?)?;
                    let rhs = self.rows[b][0].mul(&self.rows[i][j].neg()?)?;
                    if lhs < rhs || (lhs == rhs && self.row_var[i] < self.row_var[b]) {
                        best = Some(i);
                    }
                }
            }
        }
        Ok(best)
    }

    /// Make a nonbasic restricted variable basic by a feasible pivot in the
    /// increasing direction. Returns false if nothing limits its increase
    /// (it is unbounded above).
    fn bring_into_basis(&mut self, v: usize) -> OResult<bool> {
        if let Pos::Col(j) = self.pos[v] {
            match self.ratio_test(j, None)? {
                None => return Ok(false),
                Some(i) => self.pivot(i, j)?,
            }
        }
        Ok(true)
    }

    /// Maximize variable `v` (basic or a restricted nonbasic) by primal
    /// simplex over the current feasible region, with Bland's rule.
    pub fn maximize(&mut self, v: usize, mode: Mode) -> OResult<MaxOutcome> {
        if let Pos::Col(_) = self.pos[v] {
            if mode == Mode::UntilNonneg {
                return Ok(MaxOutcome::Reached);
            }
            if !self.bring_into_basis(v)? {
                return Ok(MaxOutcome::Unbounded);
            }
        }
        // Dantzig's rule until a run of degenerate pivots, then Bland's rule
        // for the rest of the call. Termination: a nondegenerate pivot
        // strictly increases the objective, so no basis repeats across
        // them; runs of degenerate pivots are bounded before Bland starts,
        // and Bland's rule never cycles.
        let mut bland = false;
        let mut degenerate = 0usize;
        loop {
            let r = match self.pos[v] {
                Pos::Row(r) => r,
                Pos::Col(_) => return Ok(MaxOutcome::Reached),
                Pos::Dead => return Err(Ovf),
            };
            let c0 = &self.rows[r][0];
            match mode {
                Mode::UntilNonneg | Mode::UntilNonnegInRow if !c0.is_neg() => {
                    return Ok(MaxOutcome::Reached)
                }
                Mode::UntilPositive if c0.is_pos() => return Ok(MaxOutcome::Reached),
                _ => {}
            }
            let mut enter: Option<usize> = None;
            for j in 1..self.ncols() {
                let a = &self.rows[r][j];
                if a.is_zero() {
                    continue;
                }
                if self.is_free_col(j) {
                    // Only unrestricted rows can have a free column entry.
                    return Ok(MaxOutcome::Unbounded);
                }
                if !a.is_pos() {
                    continue;
                }
                let better = match enter {
                    None => true,
                    Some(e) if bland => self.col_var[j] < self.col_var[e],
                    // Dantzig: steepest coefficient (same row, same den).
                    Some(e) => {
                        *a > self.rows[r][e]
                            || (*a == self.rows[r][e] && self.col_var[j] < self.col_var[e])
                    }
                };
                if better {
                    enter = Some(j);
                }
            }
            let Some(j) = enter else {
                return Ok(MaxOutcome::Optimal);
            };
            let leave = self.ratio_test(j, Some(r))?;
            if mode == Mode::UntilNonneg {
                // Does row r itself reach 0 no later than the limiting row?
                let own_first = match leave {
                    None => true,
                    Some(i) => {
                        // -c_r / a_rj  <=  c_i / -a_ij
                        let lhs = self.rows[r][0].neg()?.mul(&self.rows[i][j].neg()?)?;
                        let rhs = self.rows[i][0].mul(&self.rows[r][j])?;
                        lhs <= rhs
                    }
                };
                if own_first {
                    self.pivot(r, j)?;
                    return Ok(MaxOutcome::Reached);
                }
            }
            match leave {
                None => return Ok(MaxOutcome::Unbounded),
                Some(i) => {
                    if self.rows[i][0].is_zero() {
                        degenerate += 1;
                        if degenerate >= DEGENERATE_LIMIT {
                            bland = true;
                        }
                    } else {
                        degenerate = 0;
                    }
                    self.pivot(i, j)?
                }
            }
        }
    }

    /// Is the inequality with slack `v` implied by the other restricted
    /// variables of this feasible tableau (the minimum of `v` over the
    /// polyhedron without `v >= 0` is `>= 0`)? If so, `v` is left
    /// unrestricted (the inequality is dropped); otherwise the tableau is
    /// restored to a feasible basis of the same polyhedron.
    pub fn test_redundant(&mut self, v: usize) -> OResult<bool> {
        if let Pos::Col(j) = self.pos[v] {
            // Make v basic without losing feasibility: a pivot in the
            // decreasing direction (rows with a positive entry limit it).
            let mut best: Option<usize> = None;
            for i in 0..self.rows.len() {
                if !self.restricted[self.row_var[i]] || !self.rows[i][j].is_pos() {
                    continue;
                }
                match best {
                    None => best = Some(i),
                    Some(b) => {
                        // compare rows[i][0] / rows[i][j] vs rows[b][0] / rows[b][j]
                        let lhs = self.rows[i][0].mul(&self.rows[b][j])?;
                        let rhs = self.rows[b][0].mul(&self.rows[i][j])?;
                        if lhs < rhs || (lhs == rhs && self.row_var[i] < self.row_var[b]) {
                            best = Some(i);
                        }
                    }
                }
            }
            match best {
                // Nothing limits decreasing v: not redundant.
                None => return Ok(false),
                Some(i) => self.pivot(i, j)?,
            }
        }
        let Pos::Row(r) = self.pos[v] else {
            return Err(Ovf);
        };
        if self.rows[r][0].is_neg() {
            // Only possible right after the pivot above: v < 0 is feasible
            // for the others. Restore.
            self.maximize(v, Mode::UntilNonneg)?;
            return Ok(false);
        }
        self.restricted[v] = false;
        let neg: Vec<T> = self.rows[r]
            .iter()
            .map(|x| x.neg())
            .collect::<OResult<_>>()?;
        let w = self.push_row(neg, self.den[r].clone(), false);
        let out = self.maximize(w, Mode::UntilPositive)?;
        self.drop_row_var(w);
        let redundant = out == MaxOutcome::Optimal;
        if !redundant {
            self.restricted[v] = true;
            if self.value_is_neg(v) && self.maximize(v, Mode::UntilNonneg)? != MaxOutcome::Reached {
                // The polyhedron is non-empty, so this cannot happen.
                return Err(Ovf);
            }
        }
        Ok(redundant)
    }

    fn value_is_neg(&self, v: usize) -> bool {
        matches!(self.pos[v], Pos::Row(r) if self.rows[r][0].is_neg())
    }

    /// Is `v` fixed at 0 (an eliminated equality or a deleted column)?
    pub fn is_dead(&self, v: usize) -> bool {
        self.pos[v] == Pos::Dead
    }

    /// For a basic variable `v` at the current (feasible) basis with value
    /// `v0`: can `v <= v0 - 1` hold on the polyhedron? `false` proves
    /// `v > v0 - 1` everywhere. A constant row (no nonbasic variable
    /// moves `v`) answers at once; otherwise it is decided on a copy, by
    /// maximizing the free row `u = v0 - 1 - v` until it is `>= 0`
    /// (`den·v = c0 + Σ a_j N_j` gives `den·u = -den - Σ a_j N_j`).
    ///
    /// Without `exact`, only the constant row is recognized (no copy):
    /// anything else answers `true` (unknown).
    pub fn can_lower_by_one(&mut self, v: usize, exact: bool) -> OResult<bool> {
        let Pos::Row(r) = self.pos[v] else {
            return Ok(true);
        };
        if self.rows[r][1..].iter().all(|x| x.is_zero()) {
            return Ok(false);
        }
        if !exact {
            return Ok(true);
        }
        if self.lowers_by_one_alone(r)? {
            return Ok(true);
        }
        let mut nums: Vec<T> = Vec::with_capacity(self.ncols());
        nums.push(self.den[r].neg()?);
        for x in &self.rows[r][1..] {
            nums.push(x.neg()?);
        }
        // On this tableau, not a copy of it: the pivots of the test are
        // undone in reverse order (see [`Self::pivot_uncharged`]), and the
        // test's row, which never leaves its row (`UntilNonnegInRow`) and
        // is the last row and variable, is removed. An error leaves the
        // tableau changed, but every caller then drops it (the query is
        // redone at a wider width).
        let u = self.push_row(nums, self.den[r].clone(), false);
        self.pivot_log = Some(Vec::new());
        let out = self.maximize(u, Mode::UntilNonnegInRow);
        let log = self.pivot_log.take().unwrap_or_default();
        let out = out?;
        for &(pr, pj) in log.iter().rev() {
            self.pivot_uncharged(pr, pj)?;
        }
        debug_assert!(matches!(self.pos[u], Pos::Row(i) if i + 1 == self.rows.len()));
        self.rows.pop();
        self.den.pop();
        self.row_var.pop();
        self.restricted.pop();
        self.pos.pop();
        Ok(out != MaxOutcome::Optimal)
    }

    /// Can one nonbasic variable alone, increased as far as the ratio test
    /// allows, lower the variable of row `r` by at least 1? A sufficient
    /// condition for [`Self::can_lower_by_one`], without a copy: column
    /// `j` with `a = row_r[j] < 0` can grow by `t = min_i c_i / -a_ij` over
    /// the restricted rows with `a_ij < 0` (unbounded without one), which
    /// lowers the variable by `-a·t / den_r`; `≥ 1` iff
    /// `-a·c_i >= den_r·(-a_ij)` for the limiting row. Free columns
    /// (which restricted rows do not see) lower it without limit.
    fn lowers_by_one_alone(&self, r: usize) -> OResult<bool> {
        for j in 1..self.ncols() {
            let a = &self.rows[r][j];
            if a.is_zero() {
                continue;
            }
            if self.is_free_col(j) {
                return Ok(true);
            }
            if !a.is_neg() {
                continue;
            }
            let Some(i) = self.ratio_test(j, Some(r))? else {
                return Ok(true);
            };
            let lhs = a.neg()?.mul(&self.rows[i][0])?;
            let rhs = self.den[r].mul(&self.rows[i][j].neg()?)?;
            if lhs >= rhs {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Number of coefficients stored (rows × columns): the size measure
    /// of the branch-and-bound memory budget.
    pub fn n_cells(&self) -> usize {
        self.rows.len().saturating_mul(self.col_var.len())
    }

    /// Number of problem variables.
    pub fn n_x_vars(&self) -> usize {
        self.n_x
    }

    /// Set every constant to 0: the dictionary of the homogeneous system
    /// (the recession cone) at the same basis. Only valid for a tableau
    /// without deleted equality columns whose constants matter (deleted
    /// columns are fixed at 0 in both).
    pub fn zero_constants(&mut self) {
        for i in 0..self.rows.len() {
            self.rows[i][0] = T::zero();
        }
        self.empty = false;
    }

    /// Current value of variable `v`: `row[0] / den` in lowest terms.
    /// The fraction is reduced in `T` (`den > 0`, so the gcd `g >= 1`
    /// divides both exactly and leaves `den / g > 0`) and built without a
    /// second reduction: reducing big integers was 1% of compiling CoxPH.
    pub fn value(&self, v: usize) -> BigRational {
        match self.pos[v] {
            Pos::Row(r) => {
                let (n, d) = (&self.rows[r][0], &self.den[r]);
                let reduced = n
                    .gcd(d)
                    .and_then(|g| Ok((n.div_exact(&g)?, d.div_exact(&g)?)));
                match reduced {
                    Ok((n, d)) if d.is_pos() => BigRational::new_raw(n.to_big(), d.to_big()),
                    // Only at a width where the gcd does not fit (`T =
                    // i64`, `|n| = 2^63`): the big-integer reduction.
                    _ => BigRational::new(n.to_big(), d.to_big()),
                }
            }
            _ => BigRational::from_integer(BigInt::from(0)),
        }
    }

    /// Is the current value of `v` an integer? (`row[0] / den` is one
    /// when `den` divides `row[0]`, i.e. `gcd(row[0], den) = den`, as
    /// `den > 0`; nonbasic and deleted variables are at 0.) The same
    /// answer as `value(v).is_integer()`, without building the fraction.
    pub fn value_is_integer(&self, v: usize) -> OResult<bool> {
        match self.pos[v] {
            Pos::Row(r) => {
                let d = &self.den[r];
                Ok(d.is_one() || self.rows[r][0].gcd(d)? == *d)
            }
            _ => Ok(true),
        }
    }

    /// The current values of the problem variables when they are all
    /// integers (`None` otherwise), as `i64` (`Ovf` when one does not fit).
    pub fn integral_point(&self) -> OResult<Option<Vec<i64>>> {
        let mut p = Vec::with_capacity(self.n_x);
        for v in 0..self.n_x {
            let x = match self.pos[v] {
                Pos::Row(r) => {
                    let d = &self.den[r];
                    let c = &self.rows[r][0];
                    if d.is_one() {
                        c.clone()
                    } else if c.gcd(d)? == *d {
                        c.div_exact(d)?
                    } else {
                        return Ok(None);
                    }
                }
                _ => T::zero(),
            };
            p.push(x.to_big().to_i64().ok_or(Ovf)?);
        }
        Ok(Some(p))
    }

    /// Current values of the problem variables.
    pub fn point(&self) -> Vec<BigRational> {
        (0..self.n_x).map(|v| self.value(v)).collect()
    }

    /// Restricted variables whose current value is positive.
    pub fn positive_vars(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.rows.len())
            .filter(|&i| self.restricted[self.row_var[i]] && self.rows[i][0].is_pos())
            .map(|i| self.row_var[i])
    }

    /// After `maximize(v, Full)` returned `Optimal` for the basic variable
    /// `v`: fix at 0 every nonbasic variable whose increase would lower `v`
    /// (they are 0 at every maximizer), restricting the tableau to the
    /// optimal face.
    pub fn restrict_to_optimal_face(&mut self, v: usize) {
        if let Pos::Row(r) = self.pos[v] {
            let dead: Vec<bool> = (0..self.ncols())
                .map(|j| j > 0 && !self.rows[r][j].is_zero() && !self.is_free_col(j))
                .collect();
            if dead.iter().any(|&d| d) {
                self.kill_cols(&dead);
            }
        }
    }

    /// Variable id of the slack of the last added constraint (for tests).
    pub fn n_vars_total(&self) -> usize {
        self.restricted.len()
    }
}
