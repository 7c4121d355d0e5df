//! Sets: finite unions of basic sets over one space.
//!
//! Owns: `Set` and the operations on unions: union, intersection,
//! subtraction and complement (into disjoint pieces), `make_disjoint`,
//! emptiness, inclusion, equality, coalescing (`simplify`), projection,
//! affine hull, dimension, parametric lexmin/lexmax, and the
//! fixed-parameter queries (contains, points, bounding box, lexmin point).
//!
//! A `Set` may also live in a map space: that is how `Map` stores its
//! relation (over the input dimensions followed by the output ones).
//!
//! Must not know about: text (see `parse`, `print`), affine functions
//! (images and preimages are in `multi_aff`).

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};
use std::sync::Arc;

use super::basic_set::BasicSet;
use super::constraint::Constraint;
use super::error::{PolyError, PolyResult};
use super::space::{Names, Space, Tuple};

/// Why parameter values are refused by [`Set::check_param_values`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamsRefused {
    /// Not one value per parameter.
    Count { expected: usize, got: usize },
    /// The values are outside the context.
    OutsideContext,
}

/// A finite union of basic sets over one space.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Set {
    pub(crate) space: Space,
    pub(crate) pieces: Vec<BasicSet>,
}

impl Set {
    /// The empty set (no pieces).
    pub fn empty(space: Space) -> Set {
        Set {
            space,
            pieces: Vec::new(),
        }
    }

    /// The whole space.
    pub fn universe(space: Space) -> Set {
        Set {
            pieces: vec![BasicSet::universe(space.clone())],
            space,
        }
    }

    /// The set with one piece.
    pub fn from_basic(b: BasicSet) -> Set {
        Set {
            space: b.space.clone(),
            pieces: if b.is_obviously_empty() {
                vec![]
            } else {
                vec![b]
            },
        }
    }

    /// The union of the given pieces (all in `space`).
    pub fn from_basics(space: Space, pieces: Vec<BasicSet>) -> PolyResult<Set> {
        for p in &pieces {
            space.check(&p.space, "from_basics")?;
        }
        Ok(Set {
            space,
            pieces: pieces
                .into_iter()
                .filter(|p| !p.is_obviously_empty())
                .collect(),
        })
    }

    /// The box `{ x : lo_k <= x_k <= hi_k }` (one `(lo, hi)` per dimension).
    pub fn bounded_box(space: Space, bounds: &[(i64, i64)]) -> PolyResult<Set> {
        if bounds.len() != space.n_dims() {
            return Err(PolyError::Invalid(format!(
                "{} bounds for {} dimensions",
                bounds.len(),
                space.n_dims()
            )));
        }
        let nv = space.n_vars();
        let np = space.n_params();
        let mut b = BasicSet::universe(space);
        for (k, &(lo, hi)) in bounds.iter().enumerate() {
            let mut r = vec![0; nv + 1];
            r[np + k] = 1;
            r[nv] = lo.checked_neg().ok_or(PolyError::Overflow)?;
            b.add_ineq(r)?;
            let mut r = vec![0; nv + 1];
            r[np + k] = -1;
            r[nv] = hi;
            b.add_ineq(r)?;
        }
        Ok(Set::from_basic(b))
    }

    pub fn space(&self) -> &Space {
        &self.space
    }
    /// The pieces of the union (possibly overlapping, possibly empty until
    /// `simplify`).
    pub fn pieces(&self) -> &[BasicSet] {
        &self.pieces
    }
    /// The names of the dimensions.
    pub fn dims(&self) -> &[String] {
        &self.space.output.dims
    }
    /// Number of dimensions.
    pub fn n_dims(&self) -> usize {
        self.space.n_dims()
    }
    /// Number of parameters.
    pub fn n_params(&self) -> usize {
        self.space.n_params()
    }
    /// `⋃_pieces { x : ∧ constraints }` over `space` (rows over the
    /// parameters, dimensions and constant of `space`).
    pub fn from_constraints(space: Space, pieces: Vec<Vec<Constraint>>) -> PolyResult<Set> {
        let mut out = Vec::with_capacity(pieces.len());
        for piece in pieces {
            let mut b = BasicSet::universe(space.clone());
            for c in piece {
                b.add_constraint(c)?;
            }
            out.push(b);
        }
        Set::from_basics(space, out)
    }
    /// Whether `values` are admissible parameter values for this set taken
    /// as a parameter context (a set with no dimensions, e.g.
    /// `[N] -> { : N > 0 }`): one value per parameter, and the point
    /// `values` lies in the set. Structural (the constraints are evaluated),
    /// no solver.
    pub fn check_param_values(&self, values: &[i64]) -> Result<(), ParamsRefused> {
        if values.len() != self.space.n_params() {
            return Err(ParamsRefused::Count {
                expected: self.space.n_params(),
                got: values.len(),
            });
        }
        if !self.contains(values, &[]) {
            return Err(ParamsRefused::OutsideContext);
        }
        Ok(())
    }

    /// `⋃_{p, q} (p ∧ q)` for the conjunctions `p` of `pieces` and the
    /// pieces `q` of `self`, as constraint lists (structural: no
    /// normalization, the rows of `p` may be over a different space than
    /// `self`'s).
    pub fn cross_pieces(&self, pieces: &[Vec<Constraint>]) -> Vec<Vec<Constraint>> {
        let mut out = Vec::with_capacity(pieces.len() * self.pieces.len());
        for p in pieces {
            for q in &self.pieces {
                let mut r = p.clone();
                r.extend(q.constraints());
                out.push(r);
            }
        }
        out
    }
    /// The same set over a space with the same numbers of parameters and
    /// dimensions (new names; the rows are unchanged).
    pub fn renamed(&self, space: Space) -> PolyResult<Set> {
        if space.n_params() != self.space.n_params() || space.n_dims() != self.space.n_dims() {
            return Err(PolyError::SpaceMismatch(format!(
                "renamed: {} as {}",
                self.space.describe(),
                space.describe()
            )));
        }
        let mut s = self.clone();
        for p in &mut s.pieces {
            p.space = space.clone();
        }
        s.space = space;
        Ok(s)
    }

    /// `self ∪ other`.
    pub fn union(&self, other: &Set) -> PolyResult<Set> {
        self.space.check(&other.space, "union")?;
        let mut s = self.clone();
        s.pieces.extend(other.pieces.iter().cloned());
        Ok(s)
    }

    /// `self ∩ other = ⋃_{i,j} (A_i ∩ B_j)`.
    pub fn intersect(&self, other: &Set) -> PolyResult<Set> {
        self.space.check(&other.space, "intersect")?;
        let mut pieces = Vec::new();
        for a in &self.pieces {
            for b in &other.pieces {
                let p = a.intersect(b)?;
                if !p.is_obviously_empty() {
                    pieces.push(p);
                }
            }
        }
        Ok(Set {
            space: self.space.clone(),
            pieces,
        })
    }

    /// Intersection with a parameter-only set `ctx` (a set with zero
    /// dimensions over the same parameters, e.g. `[N] -> { : N > 0 }`).
    pub fn intersect_params(&self, ctx: &Set) -> PolyResult<Set> {
        if ctx.space.params != self.space.params || ctx.space.n_dims() != 0 {
            return Err(PolyError::SpaceMismatch(format!(
                "intersect_params: {} is not a parameter set of {}",
                ctx.space.describe(),
                self.space.describe()
            )));
        }
        let np = self.space.n_params();
        let nd = self.space.n_dims();
        let lifted = ctx.map_rows(&self.space, |r| {
            Ok(super::constraint::insert_cols(r, np, nd))
        })?;
        self.intersect(&lifted)
    }

    /// The same set as a union of pairwise disjoint pieces:
    /// `P_1, P_2 − P_1, P_3 − (P_1 ∪ P_2), …`.
    pub fn make_disjoint(&self) -> PolyResult<Set> {
        let mut out: Vec<BasicSet> = Vec::new();
        let simple = self.simplified_pieces()?;
        for (i, p) in self.pieces.iter().enumerate() {
            let rest = subtract_pieces(vec![p.clone()], &simple[..i])?;
            for r in rest {
                if !r.is_empty()? {
                    out.push(r);
                }
            }
        }
        Ok(Set {
            space: self.space.clone(),
            pieces: out,
        })
    }

    /// `self − other = { x ∈ self : x ∉ other }`, as pairwise disjoint
    /// pieces (`self` is first made disjoint, then each piece of `other` is
    /// subtracted from every piece; see `BasicSet::subtract`).
    pub fn subtract(&self, other: &Set) -> PolyResult<Set> {
        self.space.check(&other.space, "subtract")?;
        let pieces = subtract_pieces(self.make_disjoint()?.pieces, &other.simplified_pieces()?)?;
        Ok(Set {
            space: self.space.clone(),
            pieces,
        })
    }

    /// The complement in the universe of the space (parameters included):
    /// `universe − self`, as disjoint pieces.
    pub fn complement(&self) -> PolyResult<Set> {
        Set::universe(self.space.clone()).subtract(self)
    }

    /// True when the set has no integer point `(p, x)` (parameters treated
    /// as variables: empty for every parameter value).
    pub fn is_empty(&self) -> PolyResult<bool> {
        self.all_pieces(BasicSet::is_empty)
    }

    /// True when the set has no integer point for `p = params`.
    pub fn is_empty_for(&self, params: &[i64]) -> PolyResult<bool> {
        self.space.check_params(params)?;
        self.all_pieces(|p| p.is_empty_for(params))
    }

    /// True when `f` holds for every piece (asked in order, stopping at the
    /// first piece where it does not).
    fn all_pieces(&self, f: impl Fn(&BasicSet) -> PolyResult<bool>) -> PolyResult<bool> {
        for p in &self.pieces {
            if !f(p)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The first point `f` finds in a piece, asking the pieces in order.
    fn first_point(
        &self,
        f: impl Fn(&BasicSet) -> PolyResult<Option<Vec<i64>>>,
    ) -> PolyResult<Option<Vec<i64>>> {
        for p in &self.pieces {
            if let Some(v) = f(p)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    /// The pieces simplified (see `BasicSet::simplify`); pieces found empty
    /// on the way are kept as `empty` (they still subtract nothing).
    fn simplified_pieces(&self) -> PolyResult<Vec<BasicSet>> {
        self.pieces.iter().map(|p| p.simplify()).collect()
    }

    /// `self ⊆ other` over the integers (all parameter values): `self −
    /// other` is empty.
    pub fn is_subset(&self, other: &Set) -> PolyResult<bool> {
        self.space.check(&other.space, "is_subset")?;
        // One piece: each of ours inside it (`BasicSet::is_subset`, no
        // simplification needed).
        if let [b] = other.pieces.as_slice() {
            for a in &self.pieces {
                if !a.is_subset(b)? {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        let others = other.simplified_pieces()?;
        for a in &self.pieces {
            if a.is_empty()? {
                continue;
            }
            if !subtract_pieces(vec![a.clone()], &others)?.is_empty() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// `self = other` as integer sets: inclusion both ways.
    pub fn is_equal(&self, other: &Set) -> PolyResult<bool> {
        Ok(self.is_subset(other)? && other.is_subset(self)?)
    }

    /// Normalized form of the same set: every piece simplified (see
    /// `BasicSet::simplify`), integer-empty pieces and pieces contained in
    /// another piece dropped, pieces sorted. Deterministic.
    pub fn simplify(&self) -> PolyResult<Set> {
        let mut ps: Vec<BasicSet> = Vec::new();
        for p in &self.pieces {
            if p.is_empty()? {
                continue;
            }
            let s = p.simplify()?;
            if !s.is_obviously_empty() && !ps.contains(&s) {
                ps.push(s);
            }
        }
        ps.sort_by(|a, b| (&a.eqs, &a.ineqs).cmp(&(&b.eqs, &b.ineqs)));
        let mut keep = vec![true; ps.len()];
        for i in 0..ps.len() {
            for j in 0..ps.len() {
                if i != j && keep[j] && keep[i] && ps[i].is_subset(&ps[j])? {
                    keep[i] = false;
                }
            }
        }
        Ok(Set {
            space: self.space.clone(),
            pieces: ps
                .into_iter()
                .zip(keep)
                .filter_map(|(p, k)| k.then_some(p))
                .collect(),
        })
    }

    /// Redundancy removal in every piece (see `BasicSet::remove_redundancies`).
    pub fn remove_redundancies(&self) -> PolyResult<Set> {
        self.map_pieces(BasicSet::remove_redundancies)
    }

    /// Implicit-equality detection in every piece (see
    /// `BasicSet::detect_equalities`).
    pub fn detect_equalities(&self) -> PolyResult<Set> {
        self.map_pieces(BasicSet::detect_equalities)
    }

    /// The set of the pieces `f` makes of this set's pieces, in the same
    /// space (obviously empty results dropped).
    fn map_pieces(&self, f: impl Fn(&BasicSet) -> PolyResult<BasicSet>) -> PolyResult<Set> {
        let pieces = self.pieces.iter().map(f).collect::<PolyResult<Vec<_>>>()?;
        Set::from_basics(self.space.clone(), pieces)
    }

    /// The box `{ x : lo_k <= x_k <= hi_k }` (same as `bounded_box`).
    pub fn r#box(space: Space, bounds: &[(i64, i64)]) -> PolyResult<Set> {
        Set::bounded_box(space, bounds)
    }

    /// Same as `simplify` (isl's name).
    pub fn coalesce(&self) -> PolyResult<Set> {
        self.simplify()
    }

    /// True when every integer point `x` with `lo <= x <= hi` (each
    /// dimension) lies in the set for `p = params`; a sufficient test,
    /// exact for a set of one piece whose every constraint involves at
    /// most one dimension (`false` for other sets). Such a set is, for
    /// each `p`, a product of integer intervals `I_1 × ... × I_n` (a row
    /// without dimensions only decides whether it is empty), so when the
    /// corners `lo` and `hi` lie in it, `lo_d, hi_d ∈ I_d` and, intervals
    /// being convex, `[lo_d, hi_d] ⊆ I_d` for every `d`: the box is in the
    /// set. An empty box (`lo_d > hi_d` somewhere) is in every set.
    pub fn contains_box(&self, params: &[i64], lo: &[i64], hi: &[i64]) -> bool {
        if lo.iter().zip(hi).any(|(l, h)| l > h) {
            return lo.len() == hi.len();
        }
        let [piece] = self.pieces.as_slice() else {
            return false;
        };
        let (np, nd) = (self.space.n_params(), self.space.n_dims());
        let one_dim = |r: &Vec<i64>| r[np..np + nd].iter().filter(|&&c| c != 0).count() <= 1;
        piece.eqs().iter().all(one_dim)
            && piece.ineqs().iter().all(one_dim)
            && piece.contains(params, lo)
            && piece.contains(params, hi)
    }

    /// True when `(params, point)` lies in some piece (wrong lengths give
    /// `false`).
    pub fn contains(&self, params: &[i64], point: &[i64]) -> bool {
        self.pieces.iter().any(|p| p.contains(params, point))
    }

    /// The integer points for `p = params` in lexicographic order, without
    /// duplicates (see `BasicSet::points`).
    pub fn points(&self, params: &[i64]) -> PolyResult<Vec<Vec<i64>>> {
        self.space.check_params(params)?;
        let mut out = Vec::new();
        for p in &self.pieces {
            out.extend(p.points(params)?);
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// Per-dimension `(min, max)` over the integer points for `p = params`;
    /// `None` when empty, `Unbounded` when some dimension is unbounded.
    pub fn bounding_box(&self, params: &[i64]) -> PolyResult<Option<Vec<(i64, i64)>>> {
        self.space.check_params(params)?;
        let mut acc: Option<Vec<(i64, i64)>> = None;
        for p in &self.pieces {
            if let Some(b) = p.bounding_box(params)? {
                acc = Some(match acc {
                    None => b,
                    Some(a) => a
                        .iter()
                        .zip(&b)
                        .map(|(x, y)| (x.0.min(y.0), x.1.max(y.1)))
                        .collect(),
                });
            }
        }
        Ok(acc)
    }

    /// The integer lexicographic minimum for `p = params` (`None` if empty).
    pub fn lexmin_point(&self, params: &[i64]) -> PolyResult<Option<Vec<i64>>> {
        self.lexopt_point(params, false)
    }

    /// The integer lexicographic maximum for `p = params` (`None` if empty).
    pub fn lexmax_point(&self, params: &[i64]) -> PolyResult<Option<Vec<i64>>> {
        self.lexopt_point(params, true)
    }

    /// The lexicographic minimum (`max = false`) or maximum of the union:
    /// the least (greatest) of the pieces' optima.
    fn lexopt_point(&self, params: &[i64], max: bool) -> PolyResult<Option<Vec<i64>>> {
        self.space.check_params(params)?;
        let mut best: Option<Vec<i64>> = None;
        for p in &self.pieces {
            if let Some(v) = p.lexopt_point(params, max)? {
                if best
                    .as_ref()
                    .is_none_or(|b| if max { v > *b } else { v < *b })
                {
                    best = Some(v);
                }
            }
        }
        Ok(best)
    }

    /// An integer point `(p, x)` (parameters then dimensions), if any.
    pub fn sample(&self) -> PolyResult<Option<Vec<i64>>> {
        self.first_point(BasicSet::sample)
    }

    /// An integer point `x` for `p = params`, if any.
    pub fn sample_for(&self, params: &[i64]) -> PolyResult<Option<Vec<i64>>> {
        self.space.check_params(params)?;
        self.first_point(|p| p.sample_for(params))
    }

    /// Projection eliminating `n` dimensions from `first`, piece by piece
    /// (see `BasicSet::project_out`); the flag is true when the result is
    /// exactly the integer projection.
    pub fn project_out(&self, first: usize, n: usize) -> PolyResult<(Set, bool)> {
        let space = super::basic_set::remove_dims(&self.space, first, n);
        if first + n > self.space.n_dims() {
            return Err(PolyError::Invalid(format!(
                "project_out({first}, {n}) on a space with {} dimensions",
                self.space.n_dims()
            )));
        }
        let mut exact = true;
        let mut pieces = Vec::new();
        for p in &self.pieces {
            let (q, e) = p.project_out(first, n)?;
            exact &= e;
            if !q.is_obviously_empty() {
                pieces.push(q);
            }
        }
        Ok((Set { space, pieces }, exact))
    }

    /// Like `project_out` but `Unsupported` when the result is not known to
    /// be the exact integer projection.
    pub fn project_out_exact(&self, first: usize, n: usize) -> PolyResult<Set> {
        let (s, exact) = self.project_out(first, n)?;
        if !exact {
            return Err(PolyError::Unsupported(format!(
                "the integer projection of {} is not a union of polyhedra without \
                 existential variables (inexact Fourier–Motzkin step)",
                self.space.describe()
            )));
        }
        Ok(s)
    }

    /// The affine hull of the union: the equalities valid on every
    /// non-empty piece. Computed in homogeneous coordinates: with `N_i` a
    /// basis of the null space of piece `i`'s hull equalities, the hull's
    /// equalities span the null space of all `N_i` stacked (exact rational
    /// arithmetic). `empty` when the set has no integer point.
    pub fn affine_hull(&self) -> PolyResult<BasicSet> {
        let ncols = self.space.n_vars() + 1;
        let mut gens: Vec<Vec<BigRational>> = Vec::new();
        let mut any = false;
        for p in &self.pieces {
            let h = p.affine_hull()?;
            if h.is_obviously_empty() {
                continue;
            }
            any = true;
            let m: Vec<Vec<BigRational>> = h.eqs.iter().map(|r| to_rat(r)).collect();
            gens.extend(nullspace(&m, ncols));
        }
        if !any {
            return Ok(BasicSet::empty(self.space.clone()));
        }
        let eqs: Vec<Vec<BigRational>> = nullspace(&gens, ncols);
        let mut rows = Vec::new();
        for e in eqs {
            rows.push(integer_row(&e)?);
        }
        BasicSet::from_rows(self.space.clone(), rows, vec![])?.simplify()
    }

    /// The dimension: the largest dimension of a piece (see
    /// `BasicSet::dimension`), `-1` when empty.
    pub fn dimension(&self) -> PolyResult<i64> {
        let mut d = -1;
        for p in &self.pieces {
            d = d.max(p.dimension()?);
        }
        Ok(d)
    }

    /// The parametric integer lexicographic minimum: the points of the set
    /// with no lexicographically smaller point in the set for the same
    /// parameters, `self − { x : ∃ y ∈ self, y ≺ x }`. The second set is the
    /// union over pieces and levels `k` of the projections of
    /// `{ (x, y) : y ∈ piece, y_i = x_i (i < k), y_k <= x_k - 1 }` on `x`;
    /// `Unsupported` if one of these projections is not exact.
    pub fn lexmin(&self) -> PolyResult<Set> {
        self.lexopt(false)
    }

    /// The parametric integer lexicographic maximum (see `lexmin`).
    pub fn lexmax(&self) -> PolyResult<Set> {
        self.lexopt(true)
    }

    fn lexopt(&self, max: bool) -> PolyResult<Set> {
        if self.space.is_map() {
            return Err(PolyError::Invalid("lexmin/lexmax of a map space".into()));
        }
        let np = self.space.n_params();
        let n = self.space.n_dims();
        let nv = np + 2 * n;
        let mut dims = self.space.output.dims.to_vec();
        dims.extend((0..n).map(|k| format!("y{k}")));
        let big = Space::set_tuple(
            &self.space.params,
            Tuple {
                name: None,
                dims: dims.into(),
            },
        );
        let embed = |r: &Vec<i64>| {
            let mut v = r[..np].to_vec();
            v.extend(std::iter::repeat_n(0, n));
            v.extend_from_slice(&r[np..]);
            v
        };
        let mut smaller = Vec::new();
        for q in &self.pieces {
            if q.is_empty()? {
                continue;
            }
            for k in 0..n {
                let mut eqs: Vec<Vec<i64>> = q.eqs.iter().map(embed).collect();
                let mut ineqs: Vec<Vec<i64>> = q.ineqs.iter().map(embed).collect();
                for i in 0..k {
                    let mut e = vec![0; nv + 1];
                    e[np + n + i] = 1;
                    e[np + i] = -1;
                    eqs.push(e);
                }
                // lexmin: x_k - y_k - 1 >= 0; lexmax: y_k - x_k - 1 >= 0
                let mut r = vec![0; nv + 1];
                let s = if max { -1 } else { 1 };
                r[np + k] = s;
                r[np + n + k] = -s;
                r[nv] = -1;
                ineqs.push(r);
                let b = BasicSet::from_rows(big.clone(), eqs, ineqs)?;
                let (p, exact) = b.project_out(n, n)?;
                if !exact {
                    return Err(PolyError::Unsupported(
                        "parametric lexicographic optimum needs an inexact projection".into(),
                    ));
                }
                if !p.is_obviously_empty() {
                    let mut p = p;
                    p.space = self.space.clone();
                    smaller.push(p);
                }
            }
        }
        self.subtract(&Set {
            space: self.space.clone(),
            pieces: smaller,
        })
    }

    /// The set with the parameters fixed to `params` (a space without
    /// parameters).
    pub fn fix_params(&self, params: &[i64]) -> PolyResult<Set> {
        self.space.check_params(params)?;
        let mut space = self.space.clone();
        space.params = Names::default();
        let mut pieces = Vec::new();
        for p in &self.pieces {
            let q = p.fix_params(params)?;
            if !q.is_obviously_empty() {
                pieces.push(q);
            }
        }
        Ok(Set { space, pieces })
    }

    /// The slice of the set at fixed values of some dimensions (see
    /// [`BasicSet::fix_dims`]), over the remaining dimensions.
    pub fn fix_dims(&self, fixed: &[(usize, i64)]) -> PolyResult<Set> {
        let mut space = None;
        let mut pieces = Vec::new();
        for p in &self.pieces {
            let q = p.fix_dims(fixed)?;
            space.get_or_insert_with(|| q.space().clone());
            if !q.is_obviously_empty() {
                pieces.push(q);
            }
        }
        let space = match space {
            Some(s) => s,
            // No piece: slice the universe for the space.
            None => BasicSet::universe(self.space.clone())
                .fix_dims(fixed)?
                .space()
                .clone(),
        };
        Ok(Set { space, pieces })
    }

    /// The same set over the parameter list `params`, which must contain
    /// every parameter of the set (by name, in any order; the new ones are
    /// unconstrained). Rows are remapped column by column.
    pub fn align_params<S: AsRef<str>>(&self, params: &[S]) -> PolyResult<Set> {
        let new: Vec<String> = params.iter().map(|s| s.as_ref().to_string()).collect();
        for (k, p) in new.iter().enumerate() {
            if new[..k].contains(p) {
                return Err(PolyError::Invalid(format!("parameter '{p}' listed twice")));
            }
        }
        let mut pos = Vec::with_capacity(self.space.n_params());
        for p in self.space.params.iter() {
            match new.iter().position(|q| q == p) {
                Some(k) => pos.push(k),
                None => {
                    return Err(PolyError::SpaceMismatch(format!(
                        "align_params: parameter '{p}' is missing from [{}]",
                        new.join(", ")
                    )))
                }
            }
        }
        let np = self.space.n_params();
        let nd = self.space.n_dims();
        let remap = |r: &[i64]| {
            let mut v = vec![0; new.len() + nd + 1];
            for (k, &c) in r[..np].iter().enumerate() {
                v[pos[k]] = c;
            }
            v[new.len()..].copy_from_slice(&r[np..]);
            v
        };
        let mut space = self.space.clone();
        space.params = new.as_slice().into();
        self.map_rows(&space, |r| Ok(remap(r)))
    }

    /// The set over `space` whose pieces have the rows of this set's pieces
    /// mapped by `f` (a change of variables: `f` takes a row over this
    /// space to a row over `space`); pieces that become obviously empty are
    /// dropped.
    pub fn map_rows(
        &self,
        space: &Space,
        f: impl Fn(&[i64]) -> PolyResult<Vec<i64>>,
    ) -> PolyResult<Set> {
        let mut pieces = Vec::with_capacity(self.pieces.len());
        for b in &self.pieces {
            let eqs = b.eqs.iter().map(|r| f(r)).collect::<PolyResult<_>>()?;
            let ineqs = b.ineqs.iter().map(|r| f(r)).collect::<PolyResult<_>>()?;
            pieces.push(BasicSet::from_rows(space.clone(), eqs, ineqs)?);
        }
        Set::from_basics(space.clone(), pieces)
    }

    /// The same set with its tuple renamed (`None` removes the name).
    pub fn set_tuple_name(&self, name: Option<&str>) -> Set {
        let name: Option<Arc<str>> = name.map(Arc::from);
        let mut s = self.clone();
        s.space.output.name = name.clone();
        for p in &mut s.pieces {
            p.space.output.name = name.clone();
        }
        s
    }
}

/// `(⋃ pieces) − (⋃ others)` as disjoint pieces when `pieces` are: each
/// piece of `others` (already simplified, see `BasicSet::subtract_prepared`)
/// is subtracted from every remaining piece in turn, stopping early once
/// nothing is left.
fn subtract_pieces(mut pieces: Vec<BasicSet>, others: &[BasicSet]) -> PolyResult<Vec<BasicSet>> {
    for b in others {
        let mut next = Vec::new();
        for p in &pieces {
            next.extend(p.subtract_prepared(b)?);
        }
        pieces = next;
        if pieces.is_empty() {
            break;
        }
    }
    Ok(pieces)
}

fn to_rat(r: &[i64]) -> Vec<BigRational> {
    r.iter()
        .map(|&c| BigRational::from_integer(BigInt::from(c)))
        .collect()
}

#[allow(clippy::needless_range_loop)]
/// A basis of `{ v : M v = 0 }` for the rows of `m` over `ncols` columns.
fn nullspace(m: &[Vec<BigRational>], ncols: usize) -> Vec<Vec<BigRational>> {
    let mut a: Vec<Vec<BigRational>> = m.to_vec();
    let mut pivots: Vec<usize> = Vec::new();
    let mut row = 0;
    for col in 0..ncols {
        let Some(p) = (row..a.len()).find(|&r| !a[r][col].is_zero()) else {
            continue;
        };
        a.swap(row, p);
        let inv = BigRational::one() / a[row][col].clone();
        for c in 0..ncols {
            a[row][c] = &a[row][c] * &inv;
        }
        for r in 0..a.len() {
            if r != row && !a[r][col].is_zero() {
                let f = a[r][col].clone();
                for c in 0..ncols {
                    let d = &f * &a[row][c];
                    a[r][c] = &a[r][c] - d;
                }
            }
        }
        pivots.push(col);
        row += 1;
        if row == a.len() {
            break;
        }
    }
    let mut basis = Vec::new();
    for free in 0..ncols {
        if pivots.contains(&free) {
            continue;
        }
        let mut v = vec![BigRational::zero(); ncols];
        v[free] = BigRational::one();
        for (r, &pc) in pivots.iter().enumerate() {
            v[pc] = -a[r][free].clone();
        }
        basis.push(v);
    }
    basis
}

/// The primitive integer multiple of a rational row.
fn integer_row(v: &[BigRational]) -> PolyResult<Vec<i64>> {
    let mut l = BigInt::one();
    for x in v {
        let d = x.denom().clone();
        let g = num_integer::Integer::gcd(&l, &d);
        l = &l * &d / g;
    }
    let ints: Vec<BigInt> = v.iter().map(|x| (x * &l).to_integer()).collect();
    let mut g = BigInt::zero();
    for x in &ints {
        g = num_integer::Integer::gcd(&g, x);
    }
    if g.is_zero() {
        g = BigInt::one();
    }
    ints.iter()
        .map(|x| (x / &g).to_i64().ok_or(PolyError::Overflow))
        .collect()
}
