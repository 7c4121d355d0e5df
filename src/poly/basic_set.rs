//! Basic sets: conjunctions of affine constraints over the integer points
//! of a space (parameters and dimensions).
//!
//! Owns: `BasicSet` (also the representation of a basic map, over the
//! concatenated input and output dimensions), constraint rows in canonical
//! form, and the operations on one conjunction: intersection, integer
//! emptiness, simplification (implicit equalities, redundancy), affine hull,
//! dimension, projection, subtraction into disjoint pieces, and the
//! fixed-parameter queries (contains, sample, lexmin/lexmax point, bounding
//! box, point enumeration).
//!
//! Row layout (see `constraint`): parameters, then dimensions, then the
//! constant. A basic set `{ x : E·(p,x,1) = 0, I·(p,x,1) >= 0 }` with `p` the
//! parameters; "empty" always means *no integer point `(p, x)` at all*
//! (parameters are treated as variables), while `*_for(params)` questions fix
//! the parameters first.
//!
//! Must not know about: text (parsing and printing live in `parse`/`print`),
//! unions (see `set`).

use super::constraint::{
    combine_sub, complement_ineqs, drop_rows, eval_at, negate, normalize, normalize_eq,
    remove_cols, split_rows, substitute_prefix, to_i64, Constraint, ConstraintKind, EqsIneqs,
    IntRange, Norm,
};
use super::error::{PolyError, PolyResult};
use super::project::{eliminate, RowSystem};
use super::solver::Optimum;
use super::space::{Names, Space, Tuple};
use super::sys;

/// A conjunction of constraints `e = 0` and `e >= 0` over a space.
///
/// Invariants: every row has `space.n_vars() + 1` entries and is
/// gcd-normalized; a basic set found empty while normalizing is stored as
/// the single contradiction `-1 >= 0`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BasicSet {
    pub(crate) space: Space,
    pub(crate) eqs: Vec<Vec<i64>>,
    pub(crate) ineqs: Vec<Vec<i64>>,
}

impl BasicSet {
    /// The whole space `{ x : true }`.
    pub fn universe(space: Space) -> BasicSet {
        BasicSet {
            space,
            eqs: Vec::new(),
            ineqs: Vec::new(),
        }
    }

    /// The empty basic set `{ x : false }`.
    pub fn empty(space: Space) -> BasicSet {
        let mut r = vec![0; space.n_vars() + 1];
        let n = r.len() - 1;
        r[n] = -1;
        BasicSet {
            space,
            eqs: Vec::new(),
            ineqs: vec![r],
        }
    }

    /// `{ x : eqs·(p,x,1) = 0 and ineqs·(p,x,1) >= 0 }`; each row has
    /// `space.n_vars() + 1` entries (parameters, dimensions, constant).
    pub fn from_rows(
        space: Space,
        eqs: Vec<Vec<i64>>,
        ineqs: Vec<Vec<i64>>,
    ) -> PolyResult<BasicSet> {
        let mut b = BasicSet::universe(space);
        for e in eqs {
            b.add_eq(e)?;
        }
        for i in ineqs {
            b.add_ineq(i)?;
        }
        Ok(b)
    }

    /// The space.
    pub fn space(&self) -> &Space {
        &self.space
    }
    /// The equality rows (`row·(p,x,1) = 0`).
    pub fn eqs(&self) -> &[Vec<i64>] {
        &self.eqs
    }
    /// The inequality rows (`row·(p,x,1) >= 0`).
    pub fn ineqs(&self) -> &[Vec<i64>] {
        &self.ineqs
    }
    /// All constraints, equalities first.
    pub fn constraints(&self) -> Vec<Constraint> {
        self.eqs
            .iter()
            .map(|r| Constraint::eq(r.clone()))
            .chain(self.ineqs.iter().map(|r| Constraint::ineq(r.clone())))
            .collect()
    }

    fn check_len(&self, row: &[i64]) -> PolyResult<()> {
        if row.len() != self.space.n_vars() + 1 {
            return Err(PolyError::Invalid(format!(
                "constraint row has {} entries, the space {} needs {}",
                row.len(),
                self.space.describe(),
                self.space.n_vars() + 1
            )));
        }
        Ok(())
    }

    fn set_empty(&mut self) {
        *self = BasicSet::empty(self.space.clone());
    }

    /// Adds the equality `row·(p,x,1) = 0` (gcd-normalized; a contradiction
    /// makes the set empty).
    pub fn add_eq(&mut self, row: Vec<i64>) -> PolyResult<()> {
        self.add_constraint(Constraint::eq(row))
    }

    /// Adds the inequality `row·(p,x,1) >= 0`, gcd-normalized with integer
    /// tightening (`2i - 1 >= 0` becomes `i - 1 >= 0`).
    pub fn add_ineq(&mut self, row: Vec<i64>) -> PolyResult<()> {
        self.add_constraint(Constraint::ineq(row))
    }

    /// Adds a constraint, normalized (see `add_eq`, `add_ineq`): a trivial
    /// one or a duplicate is dropped, a contradiction makes the set empty.
    pub fn add_constraint(&mut self, c: Constraint) -> PolyResult<()> {
        self.check_len(&c.row)?;
        let mut row = c.row;
        let norm = normalize(c.kind, &mut row)?;
        let rows = match c.kind {
            ConstraintKind::Eq => &mut self.eqs,
            ConstraintKind::Ineq => &mut self.ineqs,
        };
        match norm {
            Norm::Keep => {
                if !rows.contains(&row) {
                    rows.push(row)
                }
            }
            Norm::Trivial => {}
            Norm::Infeasible => self.set_empty(),
        }
        Ok(())
    }

    /// True when the constraints contain a syntactic contradiction (cheap,
    /// incomplete; see `is_empty`).
    pub fn is_obviously_empty(&self) -> bool {
        self.ineqs.iter().any(|r| sys::is_contradiction(r))
    }

    /// `self ∩ other`: the conjunction of both constraint systems.
    pub fn intersect(&self, other: &BasicSet) -> PolyResult<BasicSet> {
        self.space.check(&other.space, "intersect")?;
        let mut b = self.clone();
        for e in &other.eqs {
            b.add_eq(e.clone())?;
        }
        for i in &other.ineqs {
            b.add_ineq(i.clone())?;
        }
        Ok(b)
    }

    /// True when no integer point `(p, x)` satisfies the constraints (the
    /// parameters are variables: "empty for every parameter value").
    pub fn is_empty(&self) -> PolyResult<bool> {
        sys::int_empty(self.space.n_vars(), &self.eqs, &self.ineqs)
    }

    /// An integer point `(p, x)` (parameters then dimensions), if any.
    pub fn sample(&self) -> PolyResult<Option<Vec<i64>>> {
        sys::int_sample(self.space.n_vars(), &self.eqs, &self.ineqs)
    }

    /// The basic set with the parameters fixed to `params`: same dimensions,
    /// a space without parameters.
    pub fn fix_params(&self, params: &[i64]) -> PolyResult<BasicSet> {
        self.space.check_params(params)?;
        let mut space = self.space.clone();
        space.params = Names::default();
        let mut b = BasicSet::universe(space);
        for e in &self.eqs {
            b.add_eq(substitute_prefix(e, params)?)?;
        }
        for i in &self.ineqs {
            b.add_ineq(substitute_prefix(i, params)?)?;
        }
        Ok(b)
    }

    /// The slice of the set at fixed values of some dimensions:
    /// `{ x' : (x with x_k = v for every (k, v) in fixed) ∈ self }` over the
    /// remaining dimensions (same parameters, the other dimensions in their
    /// order). An error when a dimension is out of range or given twice.
    pub fn fix_dims(&self, fixed: &[(usize, i64)]) -> PolyResult<BasicSet> {
        let np = self.space.n_params();
        let nd = self.space.n_dims();
        let mut seen = vec![false; nd];
        for &(k, _) in fixed {
            if k >= nd || std::mem::replace(&mut seen[k], true) {
                return Err(PolyError::Invalid(format!(
                    "fix_dims: dimension {k} out of range or fixed twice"
                )));
            }
        }
        let kept: Vec<String> = (0..nd)
            .filter(|&k| !seen[k])
            .map(|k| self.space.output.dims[k].clone())
            .collect();
        let mut space = self.space.clone();
        space.output.dims = kept.into();
        let slice = |row: &Vec<i64>| -> PolyResult<Vec<i64>> {
            let n = row.len() - 1;
            let mut c = i128::from(row[n]);
            for &(k, v) in fixed {
                c += i128::from(row[np + k]) * i128::from(v);
            }
            let mut out: Vec<i64> = row[..np].to_vec();
            out.extend((0..nd).filter(|&k| !seen[k]).map(|k| row[np + k]));
            out.push(i64::try_from(c).map_err(|_| PolyError::Overflow)?);
            Ok(out)
        };
        let eqs = self.eqs.iter().map(slice).collect::<PolyResult<_>>()?;
        let ineqs = self.ineqs.iter().map(slice).collect::<PolyResult<_>>()?;
        BasicSet::from_rows(space, eqs, ineqs)
    }

    /// True when no integer `x` satisfies the constraints with `p = params`.
    pub fn is_empty_for(&self, params: &[i64]) -> PolyResult<bool> {
        self.fix_params(params)?.is_empty()
    }

    /// An integer point `x` for `p = params`, if any.
    pub fn sample_for(&self, params: &[i64]) -> PolyResult<Option<Vec<i64>>> {
        self.fix_params(params)?.sample()
    }

    /// True when `(params, point)` satisfies every constraint. Wrong lengths
    /// give `false`.
    pub fn contains(&self, params: &[i64], point: &[i64]) -> bool {
        if params.len() != self.space.n_params() || point.len() != self.space.n_dims() {
            return false;
        }
        self.eqs.iter().all(|r| eval_at(r, params, point) == 0)
            && self.ineqs.iter().all(|r| eval_at(r, params, point) >= 0)
    }

    /// Simplified, canonical form of the same integer set:
    /// equalities in reduced echelon form (pivot = last variable), used to
    /// eliminate their pivots from the inequalities; inequalities
    /// gcd-normalized and tightened, duplicates and opposite pairs merged,
    /// implicit equalities (tight at every rational point, found by the
    /// solver) turned into equalities, redundant inequalities (rationally
    /// implied by the others) removed; rows sorted. The integer points are
    /// unchanged. A rationally infeasible system becomes `empty`.
    pub fn simplify(&self) -> PolyResult<BasicSet> {
        if self.is_obviously_empty() {
            return Ok(BasicSet::empty(self.space.clone()));
        }
        let n = self.space.n_vars();
        let mut eqs = self.eqs.clone();
        let mut ineqs = self.ineqs.clone();
        loop {
            let Some((e2, i2)) = reduce_eqs(n, eqs, ineqs)? else {
                return Ok(BasicSet::empty(self.space.clone()));
            };
            let n_eqs = e2.len();
            let mut rows = RowSystem {
                nv: n,
                eqs: e2,
                ineqs: i2,
                infeasible: false,
            };
            rows.dedup()?;
            if rows.infeasible {
                return Ok(BasicSet::empty(self.space.clone()));
            }
            eqs = rows.eqs;
            ineqs = rows.ineqs;
            if eqs.len() > n_eqs {
                continue;
            }
            // No separate feasibility test: on a rationally empty system
            // every inequality counts as implicit, and the equalities they
            // become have no rational solution either (they imply the
            // inequalities), which the next `reduce_eqs` finds.
            let imp = sys::implicit_eqs(n, &eqs, &ineqs)?;
            if !imp.is_empty() {
                let (tight, rest) = split_rows(ineqs, &imp);
                eqs.extend(tight);
                ineqs = rest;
                continue;
            }
            let red = sys::redundant(n, &eqs, &ineqs)?;
            let mut kept = drop_rows(ineqs, &red);
            sort_rows(&mut eqs);
            sort_rows(&mut kept);
            return Ok(BasicSet {
                space: self.space.clone(),
                eqs,
                ineqs: kept,
            });
        }
    }

    /// Implicit-equality detection: opposite inequality pairs `e >= 0,
    /// -e >= 0` and inequalities tight at every rational point (solver) become
    /// equalities, which are then put in reduced echelon form and eliminated
    /// from the inequalities (no redundancy removal).
    pub fn detect_equalities(&self) -> PolyResult<BasicSet> {
        if self.is_obviously_empty() {
            return Ok(self.clone());
        }
        let n = self.space.n_vars();
        let mut rows = RowSystem::new(n, self.eqs.clone(), self.ineqs.clone())?;
        rows.dedup()?;
        if rows.infeasible || !sys::rat_feasible(n, &rows.eqs, &rows.ineqs)? {
            return Ok(BasicSet::empty(self.space.clone()));
        }
        let imp = sys::implicit_eqs(n, &rows.eqs, &rows.ineqs)?;
        let mut eqs = rows.eqs;
        let (tight, ineqs) = split_rows(rows.ineqs, &imp);
        eqs.extend(tight);
        match reduce_eqs(n, eqs, ineqs)? {
            None => Ok(BasicSet::empty(self.space.clone())),
            Some((eqs, ineqs)) => BasicSet::from_rows(self.space.clone(), eqs, ineqs),
        }
    }

    /// Redundancy removal: drops the inequalities implied (over the
    /// rationals) by the remaining constraints; same integer points. This is
    /// part of `simplify`, which also canonicalizes.
    pub fn remove_redundancies(&self) -> PolyResult<BasicSet> {
        if self.is_obviously_empty() {
            return Ok(self.clone());
        }
        let n = self.space.n_vars();
        let Some(red) = sys::redundant_if_feasible(n, &self.eqs, &self.ineqs)? else {
            return Ok(BasicSet::empty(self.space.clone()));
        };
        let mut b = self.clone();
        b.ineqs = drop_rows(b.ineqs, &red);
        Ok(b)
    }

    /// The affine hull: the smallest affine subspace (given by equalities)
    /// containing the set's rational relaxation after integer tightening;
    /// `empty` when the set has no integer point.
    pub fn affine_hull(&self) -> PolyResult<BasicSet> {
        if self.is_empty()? {
            return Ok(BasicSet::empty(self.space.clone()));
        }
        let s = self.simplify()?;
        Ok(BasicSet {
            space: s.space,
            eqs: s.eqs,
            ineqs: Vec::new(),
        })
    }

    /// Dimension: `-1` when empty (no integer point); otherwise the number
    /// of set dimensions minus the rank of the affine hull's equalities
    /// restricted to the dimension columns (parameters are not counted, so
    /// `{ [i, j] : i = N }` has dimension 1).
    pub fn dimension(&self) -> PolyResult<i64> {
        if self.is_empty()? {
            return Ok(-1);
        }
        let s = self.simplify()?;
        let np = self.space.n_params();
        // equalities are in echelon form with decreasing pivots (the last
        // non-zero column); rows with a pivot among the dimensions are
        // independent on the dimension columns, the others are zero there.
        let rank = s
            .eqs
            .iter()
            .filter(|r| last_nonzero(r).is_some_and(|c| c >= np))
            .count();
        Ok((self.space.n_dims() - rank) as i64)
    }

    /// Projection `{ x' : ∃ y, (x', y) ∈ self }` eliminating the `n`
    /// dimensions starting at dimension `first` (0 = first set dimension;
    /// for a map, input dimensions come first). Returns the real shadow with
    /// integer tightening and a flag that is true when it is exactly the
    /// integer projection (see `project` for the test).
    pub fn project_out(&self, first: usize, n: usize) -> PolyResult<(BasicSet, bool)> {
        let nd = self.space.n_dims();
        if first + n > nd {
            return Err(PolyError::Invalid(format!(
                "project_out({first}, {n}) on a space with {nd} dimensions"
            )));
        }
        let np = self.space.n_params();
        let space = remove_dims(&self.space, first, n);
        if self.is_obviously_empty() {
            return Ok((BasicSet::empty(space), true));
        }
        // redundant constraints would only add Fourier–Motzkin pairs (and
        // spurious inexactness): simplify first
        let s = self.simplify()?;
        if s.is_obviously_empty() {
            return Ok((BasicSet::empty(space), true));
        }
        let cols: Vec<usize> = (np + first..np + first + n).collect();
        let rows = RowSystem::new(self.space.n_vars(), s.eqs, s.ineqs)?;
        let (rows, exact) = eliminate(rows, &cols, true)?;
        if rows.infeasible {
            return Ok((BasicSet::empty(space), true));
        }
        let eqs = rows
            .eqs
            .iter()
            .map(|r| remove_cols(r, np + first, n))
            .collect();
        let ineqs = rows
            .ineqs
            .iter()
            .map(|r| remove_cols(r, np + first, n))
            .collect();
        Ok((BasicSet::from_rows(space, eqs, ineqs)?, exact))
    }

    /// `self − other` as a list of pairwise disjoint basic sets: with
    /// `c_1 … c_m` the constraints of `other`, the pieces are
    /// `self ∧ c_1 ∧ … ∧ c_{k-1} ∧ ¬c_k` (integer negation: `¬(e >= 0)` is
    /// `-e - 1 >= 0`, `¬(e = 0)` is the two pieces `e >= 1`, `e <= -1`);
    /// integer-empty pieces are dropped.
    pub fn subtract(&self, other: &BasicSet) -> PolyResult<Vec<BasicSet>> {
        self.space.check(&other.space, "subtract")?;
        self.subtract_prepared(&other.simplify()?)
    }

    /// `subtract` with `b` already simplified (fewer constraints, fewer
    /// pieces) and in the same space.
    pub(crate) fn subtract_prepared(&self, b: &BasicSet) -> PolyResult<Vec<BasicSet>> {
        if self.is_empty()? {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        let mut prefix = self.clone();
        for c in b.constraints() {
            for ng in complement_ineqs(&c)? {
                let mut piece = prefix.clone();
                piece.add_ineq(ng)?;
                if !piece.is_empty()? {
                    out.push(piece);
                }
            }
            prefix.add_constraint(c)?;
            if prefix.is_empty()? {
                break;
            }
        }
        Ok(out)
    }

    /// `self ⊆ other` over the integers: `self ∧ ¬c` is empty for every
    /// constraint `c` of `other` (`¬(e = 0)` is `e >= 1` or `e <= −1`).
    /// One emptiness test per constraint as it stands (a redundant
    /// constraint costs a test, never a wrong answer), stopping at the
    /// first that leaves a point: neither `other`'s simplification nor
    /// the disjoint pieces of [`Self::subtract`] are needed to decide it.
    pub fn is_subset(&self, other: &BasicSet) -> PolyResult<bool> {
        self.space.check(&other.space, "is_subset")?;
        if self.is_empty()? {
            return Ok(true);
        }
        for c in other.constraints() {
            for ng in complement_ineqs(&c)? {
                let mut outside = self.clone();
                outside.add_ineq(ng)?;
                if !outside.is_empty()? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// The integer lexicographic minimum of the dimensions for `p = params`
    /// (`None` when empty; `Unbounded` when there is none).
    pub fn lexmin_point(&self, params: &[i64]) -> PolyResult<Option<Vec<i64>>> {
        self.lexopt_point(params, false)
    }

    /// The integer lexicographic maximum of the dimensions for `p = params`.
    pub fn lexmax_point(&self, params: &[i64]) -> PolyResult<Option<Vec<i64>>> {
        self.lexopt_point(params, true)
    }

    /// The integer lexicographic minimum (`max = false`) or maximum of the
    /// dimensions for `p = params`.
    pub(crate) fn lexopt_point(&self, params: &[i64], max: bool) -> PolyResult<Option<Vec<i64>>> {
        let b = self.fix_params(params)?;
        if b.is_obviously_empty() {
            return Ok(None);
        }
        let n = b.space.n_vars();
        let objs: Vec<Vec<i64>> = (0..n).map(|k| unit(n, k)).collect();
        match sys::int_lexopt(n, &b.eqs, &b.ineqs, &objs, max)? {
            Optimum::Empty => Ok(None),
            Optimum::Unbounded => Err(PolyError::Unbounded(format!(
                "lexicographic {} of an unbounded set",
                if max { "maximum" } else { "minimum" }
            ))),
            Optimum::Value(v) => Ok(Some(v)),
        }
    }

    /// For `p = params`, the minimum and maximum of each dimension over the
    /// integer points (`None` when there is none; `Unbounded` if some
    /// dimension has no finite bound).
    pub fn bounding_box(&self, params: &[i64]) -> PolyResult<Option<Vec<(i64, i64)>>> {
        let b = self.fix_params(params)?;
        if b.is_obviously_empty() || b.is_empty()? {
            return Ok(None);
        }
        let n = b.space.n_vars();
        let mut out = Vec::with_capacity(n);
        for k in 0..n {
            match sys::int_min_max(n, &b.eqs, &b.ineqs, &unit(n, k))? {
                (Optimum::Value(l), Optimum::Value(h)) => out.push((l, h)),
                (Optimum::Empty, _) | (_, Optimum::Empty) => return Ok(None),
                _ => {
                    return Err(PolyError::Unbounded(format!(
                        "dimension {k} of {} has no finite bound",
                        self.space.describe()
                    )))
                }
            }
        }
        Ok(Some(out))
    }

    /// The integer points `x` for `p = params`, in lexicographic order.
    /// Scans one dimension at a time: the bounds of dimension `k` come from
    /// the (rational, tightened) projection of the set on dimensions
    /// `0..=k` with the earlier dimensions fixed. `Unbounded` when the set
    /// has an integer point and an unbounded dimension.
    pub fn points(&self, params: &[i64]) -> PolyResult<Vec<Vec<i64>>> {
        let b = self.fix_params(params)?;
        let n = b.space.n_vars();
        if b.is_obviously_empty() || b.is_empty()? {
            return Ok(Vec::new());
        }
        // levels[k]: the rows of the projection on 0..=k involving x_k
        let mut levels: Vec<EqsIneqs> = vec![(Vec::new(), Vec::new()); n];
        let mut rows = RowSystem::new(n, b.eqs.clone(), b.ineqs.clone())?;
        for k in (0..n).rev() {
            let trunc = |r: &Vec<i64>| {
                let mut t = r[..=k].to_vec();
                t.push(r[n]);
                t
            };
            levels[k].0 = rows.eqs.iter().filter(|r| r[k] != 0).map(trunc).collect();
            levels[k].1 = rows.ineqs.iter().filter(|r| r[k] != 0).map(trunc).collect();
            let (r, _) = eliminate(rows, &[k], false)?;
            rows = r;
            if rows.infeasible {
                return Ok(Vec::new());
            }
        }
        let mut out = Vec::new();
        let mut cur = Vec::with_capacity(n);
        scan(&levels, &mut cur, &mut out)?;
        Ok(out)
    }
}

/// Depth-first scan of the levels (see `points`).
fn scan(levels: &[EqsIneqs], cur: &mut Vec<i64>, out: &mut Vec<Vec<i64>>) -> PolyResult<()> {
    let k = cur.len();
    if k == levels.len() {
        out.push(cur.clone());
        return Ok(());
    }
    let (eqs, ineqs) = &levels[k];
    let mut range = IntRange::default();
    // a row over x_0..x_k: coefficient a of x_k, rest evaluated at cur
    for r in eqs {
        let a = r[k] as i128;
        let rest = eval_prefix(r, cur);
        if rest % a != 0 {
            return Ok(());
        }
        let v = -rest / a;
        range.at_least(v);
        range.at_most(v);
    }
    for r in ineqs {
        range.add_ineq(r[k] as i128, eval_prefix(r, cur));
    }
    let (Some(lo), Some(hi)) = (range.lo, range.hi) else {
        return Err(PolyError::Unbounded(format!(
            "dimension {k} has no {} bound",
            if range.lo.is_none() { "lower" } else { "upper" }
        )));
    };
    let mut v = lo;
    while v <= hi {
        cur.push(to_i64(v)?);
        scan(levels, cur, out)?;
        cur.pop();
        v += 1;
    }
    Ok(())
}

/// `r[..k]·cur + constant` for a row over `x_0..x_k` (k = cur.len()).
fn eval_prefix(r: &[i64], cur: &[i64]) -> i128 {
    let n = r.len() - 1;
    let mut s = r[n] as i128;
    for (c, v) in r.iter().zip(cur) {
        s += (*c as i128) * (*v as i128);
    }
    s
}

/// The unit objective over `n` variables selecting variable `k`.
pub(crate) fn unit(n: usize, k: usize) -> Vec<i64> {
    let mut v = vec![0; n];
    v[k] = 1;
    v
}

/// Index of the last non-zero variable coefficient.
pub(crate) fn last_nonzero(r: &[i64]) -> Option<usize> {
    let n = r.len() - 1;
    (0..n).rev().find(|&k| r[k] != 0)
}

/// Canonical row order: by the last non-zero variable, lower bounds
/// (positive coefficient there) before upper bounds, then the row.
pub(crate) fn sort_rows(rows: &mut [Vec<i64>]) {
    let key = |r: &Vec<i64>| {
        let m = last_nonzero(r);
        (m, m.is_some_and(|m| r[m] < 0))
    };
    rows.sort_by(|a, b| (key(a), a).cmp(&(key(b), b)));
}

/// Gaussian elimination of the equalities into reduced echelon form (pivot:
/// the last column with a non-zero entry, smallest coefficient first), then
/// elimination of the pivots from the inequalities (`a·r - c·p` with the
/// pivot coefficient `a > 0`, a positive multiple of `r` on the equality's
/// hyperplane). `None` when a contradiction appears.
fn reduce_eqs(n: usize, eqs: Vec<Vec<i64>>, ineqs: Vec<Vec<i64>>) -> PolyResult<Option<EqsIneqs>> {
    let mut pending = eqs;
    let mut done: Vec<(usize, Vec<i64>)> = Vec::new();
    let mut ineqs = ineqs;
    for col in (0..n).rev() {
        let Some((idx, _)) = pending
            .iter()
            .enumerate()
            .filter(|(_, r)| r[col] != 0)
            .min_by(|(_, a), (_, b)| (a[col].unsigned_abs(), *a).cmp(&(b[col].unsigned_abs(), *b)))
        else {
            continue;
        };
        let mut p = pending.remove(idx);
        if p[col] < 0 {
            p = negate(&p)?;
        }
        let a = p[col];
        let Some(next) = eliminate_pivot(pending, &p, col, ConstraintKind::Eq)? else {
            return Ok(None);
        };
        pending = next;
        for (_, d) in done.iter_mut() {
            if d[col] != 0 {
                let mut nr = combine_sub(a, d, d[col], &p)?;
                if normalize_eq(&mut nr)? != Norm::Keep {
                    // a reduced pivot row keeps its own pivot: cannot vanish
                    return Ok(None);
                }
                *d = nr;
            }
        }
        let Some(next) = eliminate_pivot(ineqs, &p, col, ConstraintKind::Ineq)? else {
            return Ok(None);
        };
        ineqs = next;
        if normalize_eq(&mut p)? != Norm::Keep {
            return Ok(None);
        }
        done.push((col, p));
    }
    // Rows left in `pending` have no variable: `c = 0`, a contradiction
    // unless `c` is 0 (normalized rows never are such rows, but equalities
    // made of implicit inequalities are checked here, see `simplify`).
    if pending.iter().any(|r| r[n] != 0) {
        return Ok(None);
    }
    let eqs = done.into_iter().map(|(_, r)| r).collect();
    Ok(Some((eqs, ineqs)))
}

/// `rows` with the column `col` eliminated by the pivot row `p` (`p[col] >
/// 0`): `p[col]·r − r[col]·p`, a positive multiple of `r` on the pivot's
/// hyperplane, normalized as a constraint of `kind`; trivial results are
/// dropped, `None` when one is a contradiction.
fn eliminate_pivot(
    rows: Vec<Vec<i64>>,
    p: &[i64],
    col: usize,
    kind: ConstraintKind,
) -> PolyResult<Option<Vec<Vec<i64>>>> {
    let mut next = Vec::with_capacity(rows.len());
    for r in rows {
        if r[col] == 0 {
            next.push(r);
            continue;
        }
        let mut nr = combine_sub(p[col], &r, r[col], p)?;
        match normalize(kind, &mut nr)? {
            Norm::Keep => next.push(nr),
            Norm::Trivial => {}
            Norm::Infeasible => return Ok(None),
        }
    }
    Ok(Some(next))
}

/// The space without the `n` dimensions starting at set dimension `first`
/// (for a map, dimensions `0..n_in` are the input ones).
pub(crate) fn remove_dims(space: &Space, first: usize, n: usize) -> Space {
    let mut s = space.clone();
    let n_in = space.n_in();
    let range = first..first + n;
    if let Some(t) = &mut s.input {
        let dims: Vec<String> = t
            .dims
            .iter()
            .enumerate()
            .filter(|(k, _)| !range.contains(k))
            .map(|(_, d)| d.clone())
            .collect();
        t.dims = dims.into();
    }
    let dims: Vec<String> = space
        .output
        .dims
        .iter()
        .enumerate()
        .filter(|(k, _)| !range.contains(&(k + n_in)))
        .map(|(_, d)| d.clone())
        .collect();
    s.output = Tuple {
        name: space.output.name.clone(),
        dims: dims.into(),
    };
    s
}
