//! Maps: relations between an input and an output tuple, as finite unions
//! of basic maps.
//!
//! Owns: `BasicMap`, `Map` and the relational operations: reverse, domain,
//! range, intersect_domain/range, apply (image of a set), apply_range
//! (composition), plus the set operations lifted to relations.
//!
//! Representation: a map is a `Set` over the map space, whose variables are
//! parameters, input dimensions, then output dimensions; rows follow that
//! layout (see `constraint`).
//!
//! Must not know about: text (see `parse`, `print`), the solver (everything
//! goes through `BasicSet`/`Set`).

use super::basic_set::BasicSet;
use super::constraint::insert_cols;
use super::error::{PolyError, PolyResult};
use super::set::Set;
use super::space::{Space, Tuple};

/// A conjunction of constraints over (parameters, input, output).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BasicMap {
    pub(crate) bset: BasicSet,
}

fn require_map(space: &Space) -> PolyResult<()> {
    if space.is_map() {
        Ok(())
    } else {
        Err(PolyError::SpaceMismatch(format!(
            "{} is a set space, a map space was expected",
            space.describe()
        )))
    }
}

impl BasicMap {
    /// All pairs `(x, y)`.
    pub fn universe(space: Space) -> PolyResult<BasicMap> {
        require_map(&space)?;
        Ok(BasicMap {
            bset: BasicSet::universe(space),
        })
    }
    /// `{ x -> y : eqs·(p,x,y,1) = 0, ineqs·(p,x,y,1) >= 0 }`.
    pub fn from_rows(
        space: Space,
        eqs: Vec<Vec<i64>>,
        ineqs: Vec<Vec<i64>>,
    ) -> PolyResult<BasicMap> {
        require_map(&space)?;
        Ok(BasicMap {
            bset: BasicSet::from_rows(space, eqs, ineqs)?,
        })
    }
    /// Adds `row·(p,x,y,1) = 0`.
    pub fn add_eq(&mut self, row: Vec<i64>) -> PolyResult<()> {
        self.bset.add_eq(row)
    }
    /// Adds `row·(p,x,y,1) >= 0`.
    pub fn add_ineq(&mut self, row: Vec<i64>) -> PolyResult<()> {
        self.bset.add_ineq(row)
    }
    pub fn space(&self) -> &Space {
        &self.bset.space
    }
    /// The constraints as a basic set in the map space.
    pub fn as_basic_set(&self) -> &BasicSet {
        &self.bset
    }
}

/// A finite union of basic maps over one map space.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Map {
    pub(crate) set: Set,
}

impl Map {
    /// The empty relation.
    pub fn empty(space: Space) -> PolyResult<Map> {
        require_map(&space)?;
        Ok(Map {
            set: Set::empty(space),
        })
    }
    /// All pairs.
    pub fn universe(space: Space) -> PolyResult<Map> {
        require_map(&space)?;
        Ok(Map {
            set: Set::universe(space),
        })
    }
    /// The map with one piece.
    pub fn from_basic(b: BasicMap) -> Map {
        Map {
            set: Set::from_basic(b.bset),
        }
    }
    /// The union of the pieces (in `space`).
    pub fn from_basics(space: Space, pieces: Vec<BasicMap>) -> PolyResult<Map> {
        require_map(&space)?;
        Ok(Map {
            set: Set::from_basics(space, pieces.into_iter().map(|b| b.bset).collect())?,
        })
    }
    /// The map whose pairs are the points of `set` (a set or map in a
    /// space with `space.n_vars()` variables), read in `space`'s layout.
    pub fn from_set_in(space: Space, set: &Set) -> PolyResult<Map> {
        require_map(&space)?;
        if set.space.n_vars() != space.n_vars() || set.space.params != space.params {
            return Err(PolyError::SpaceMismatch(format!(
                "cannot read {} as {}",
                set.space.describe(),
                space.describe()
            )));
        }
        Ok(Map {
            set: set.clone().with_space(space),
        })
    }
    pub fn space(&self) -> &Space {
        &self.set.space
    }
    /// The pieces.
    pub fn pieces(&self) -> Vec<BasicMap> {
        self.set
            .pieces
            .iter()
            .map(|b| BasicMap { bset: b.clone() })
            .collect()
    }
    /// The relation as a set over the concatenated dimensions `[x, y]`.
    pub fn wrap(&self) -> Set {
        let s = self.set.space.wrapped();
        self.set.clone().with_space(s)
    }
    /// The relation as a set in the map space (the internal form).
    pub fn as_set(&self) -> &Set {
        &self.set
    }

    fn n(&self) -> (usize, usize, usize) {
        let s = &self.set.space;
        (s.n_params(), s.n_in(), s.n_out())
    }

    /// `{ y -> x : x -> y ∈ self }`.
    pub fn reverse(&self) -> PolyResult<Map> {
        let (np, ni, no) = self.n();
        let space = self.set.space.reverse();
        let swap = |r: &[i64]| {
            let mut v = r[..np].to_vec();
            v.extend_from_slice(&r[np + ni..np + ni + no]);
            v.extend_from_slice(&r[np..np + ni]);
            v.push(r[np + ni + no]);
            Ok(v)
        };
        Ok(Map {
            set: self.set.map_rows(&space, swap)?,
        })
    }

    /// `{ x : ∃ y, x -> y ∈ self }` with the exactness flag of the
    /// projection (see `BasicSet::project_out`).
    pub fn domain_with_exactness(&self) -> PolyResult<(Set, bool)> {
        let (_, ni, no) = self.n();
        let (s, exact) = self.set.project_out(ni, no)?;
        Ok((s.with_space(self.set.space.domain()), exact))
    }

    /// `{ y : ∃ x, x -> y ∈ self }` with the exactness flag.
    pub fn range_with_exactness(&self) -> PolyResult<(Set, bool)> {
        let (_, ni, _) = self.n();
        let (s, exact) = self.set.project_out(0, ni)?;
        Ok((s.with_space(self.set.space.range()), exact))
    }

    /// The domain `{ x : ∃ y, x -> y ∈ self }`; `Unsupported` when the
    /// projection is not known to be exact over the integers.
    pub fn domain(&self) -> PolyResult<Set> {
        exact_or_err(self.domain_with_exactness()?, "domain")
    }

    /// The range `{ y : ∃ x, x -> y ∈ self }`; `Unsupported` when inexact.
    pub fn range(&self) -> PolyResult<Set> {
        exact_or_err(self.range_with_exactness()?, "range")
    }

    /// `{ x -> y ∈ self : x ∈ dom }`.
    pub fn intersect_domain(&self, dom: &Set) -> PolyResult<Map> {
        let (np, ni, no) = self.n();
        let part = self.set.space.domain();
        self.intersect_part(&part, dom, np + ni, no, "intersect_domain")
    }

    /// `{ x -> y ∈ self : y ∈ ran }`.
    pub fn intersect_range(&self, ran: &Set) -> PolyResult<Map> {
        let (np, ni, _) = self.n();
        let part = self.set.space.range();
        self.intersect_part(&part, ran, np, ni, "intersect_range")
    }

    /// `self ∩ s` for a set `s` over `part`, the domain or range space: `s`
    /// lifted to the map space by `count` zero columns at `at` (for the
    /// other tuple's variables).
    fn intersect_part(
        &self,
        part: &Space,
        s: &Set,
        at: usize,
        count: usize,
        what: &str,
    ) -> PolyResult<Map> {
        part.check(&s.space, what)?;
        let lifted = lift(s, &self.set.space, at, count)?;
        Ok(Map {
            set: self.set.intersect(&lifted)?,
        })
    }

    /// The image of a set: `{ y : ∃ x ∈ set, x -> y ∈ self }`;
    /// `Unsupported` when the projection is inexact.
    pub fn apply_to(&self, set: &Set) -> PolyResult<Set> {
        self.intersect_domain(set)?.range()
    }

    /// Composition in isl's `apply_range` order: for `self: X -> Y` and
    /// `other: Y -> Z`, `{ x -> z : ∃ y, x -> y ∈ self, y -> z ∈ other }`
    /// (i.e. `other ∘ self`: first `self`, then `other`). `Unsupported`
    /// when eliminating `y` is inexact.
    pub fn apply_range(&self, other: &Map) -> PolyResult<Map> {
        let (np, nx, ny) = self.n();
        let (np2, ny2, nz) = other.n();
        let y_self = self.set.space.range();
        let y_other = other.set.space.domain();
        if np != np2 || ny != ny2 || !y_self.compatible(&y_other) {
            return Err(PolyError::SpaceMismatch(format!(
                "apply_range: {} then {}",
                self.set.space.describe(),
                other.set.space.describe()
            )));
        }
        let space = Space {
            params: self.set.space.params.clone(),
            input: self.set.space.input.clone(),
            output: other.set.space.output.clone(),
        };
        let mut names: Vec<String> = Vec::new();
        if let Some(t) = &self.set.space.input {
            names.extend(t.dims.iter().cloned());
        }
        names.extend(self.set.space.output.dims.iter().cloned());
        names.extend(other.set.space.output.dims.iter().cloned());
        let big = Space::set_tuple(
            &self.set.space.params,
            Tuple {
                name: None,
                dims: names.into(),
            },
        );
        let a = lift(&self.set, &big, np + nx + ny, nz)?;
        let b = lift(&other.set, &big, np, nx)?;
        let joint = a.intersect(&b)?;
        let (proj, exact) = joint.project_out(nx, ny)?;
        if !exact {
            return Err(PolyError::Unsupported(
                "apply_range: eliminating the middle tuple is inexact over the integers".into(),
            ));
        }
        Ok(Map {
            set: proj.with_space(space),
        })
    }

    /// Same as `apply_range`: `self` first, then `other`.
    pub fn compose(&self, other: &Map) -> PolyResult<Map> {
        self.apply_range(other)
    }

    /// `self ∩ other`.
    pub fn intersect(&self, other: &Map) -> PolyResult<Map> {
        Ok(Map {
            set: self.set.intersect(&other.set)?,
        })
    }
    /// `self ∪ other`.
    pub fn union(&self, other: &Map) -> PolyResult<Map> {
        Ok(Map {
            set: self.set.union(&other.set)?,
        })
    }
    /// `self − other`, disjoint pieces.
    pub fn subtract(&self, other: &Map) -> PolyResult<Map> {
        Ok(Map {
            set: self.set.subtract(&other.set)?,
        })
    }
    /// Complement in the universe of the map space.
    pub fn complement(&self) -> PolyResult<Map> {
        Ok(Map {
            set: self.set.complement()?,
        })
    }
    /// No integer pair for any parameter value.
    pub fn is_empty(&self) -> PolyResult<bool> {
        self.set.is_empty()
    }
    /// `self ⊆ other` over the integers.
    pub fn is_subset(&self, other: &Map) -> PolyResult<bool> {
        self.set.is_subset(&other.set)
    }
    /// Equal as integer relations.
    pub fn is_equal(&self, other: &Map) -> PolyResult<bool> {
        self.set.is_equal(&other.set)
    }
    /// Normalized form (see `Set::simplify`).
    pub fn simplify(&self) -> PolyResult<Map> {
        Ok(Map {
            set: self.set.simplify()?,
        })
    }
    /// The same relation over the parameter list `params` (a superset of
    /// the map's parameters; see `Set::align_params`).
    pub fn align_params<S: AsRef<str>>(&self, params: &[S]) -> PolyResult<Map> {
        Ok(Map {
            set: self.set.align_params(params)?,
        })
    }

    /// The difference set `{ y - x : x -> y ∈ self }` (input and output of
    /// the same size), e.g. the dependence distance vectors: the projection
    /// of `{ (x, y, d) : x -> y ∈ self, d = y - x }` on `d`; `Unsupported`
    /// when that projection is inexact over the integers.
    pub fn deltas(&self) -> PolyResult<Set> {
        let (np, ni, no) = self.n();
        if ni != no {
            return Err(PolyError::SpaceMismatch(format!(
                "deltas of {}: input and output sizes differ",
                self.set.space.describe()
            )));
        }
        // (p, x, y, d): d_k - y_k + x_k = 0, then project out x and y
        let nv = np + 3 * ni;
        let mut dims: Vec<String> = self.set.space.var_names()[np..].to_vec();
        dims.extend((0..ni).map(|k| format!("d{k}")));
        let big = Space::set_tuple(
            &self.set.space.params,
            Tuple {
                name: None,
                dims: dims.into(),
            },
        );
        let lifted = lift(&self.set, &big, np + 2 * ni, ni)?;
        let mut defs = BasicSet::universe(big.clone());
        for k in 0..ni {
            let mut e = vec![0; nv + 1];
            e[np + 2 * ni + k] = 1;
            e[np + ni + k] = -1;
            e[np + k] = 1;
            defs.add_eq(e)?;
        }
        let joint = lifted.intersect(&Set::from_basic(defs))?;
        let (d, exact) = joint.project_out(0, 2 * ni)?;
        if !exact {
            return Err(PolyError::Unsupported("deltas: inexact projection".into()));
        }
        let space = Space::set_tuple(&self.set.space.params, Tuple::anonymous("d", ni));
        Ok(d.with_space(space))
    }

    /// `x -> y ∈ self` for the parameter values (wrong lengths: `false`).
    pub fn contains(&self, params: &[i64], x: &[i64], y: &[i64]) -> bool {
        let (_, ni, no) = self.n();
        if x.len() != ni || y.len() != no {
            return false;
        }
        let pt: Vec<i64> = x.iter().chain(y).copied().collect();
        self.set.contains(params, &pt)
    }
    /// The integer pairs for `p = params`, in lexicographic order of `(x, y)`.
    pub fn pairs(&self, params: &[i64]) -> PolyResult<Vec<(Vec<i64>, Vec<i64>)>> {
        let (_, ni, _) = self.n();
        Ok(self
            .set
            .points(params)?
            .into_iter()
            .map(|p| (p[..ni].to_vec(), p[ni..].to_vec()))
            .collect())
    }
}

impl Set {
    /// The image of the set by a map: `{ y : ∃ x ∈ self, x -> y ∈ map }`;
    /// `Unsupported` when inexact.
    pub fn apply(&self, map: &Map) -> PolyResult<Set> {
        map.apply_to(self)
    }

    /// The same pieces read in another space with the same number of
    /// variables (the caller guarantees the layout matches).
    pub(crate) fn with_space(mut self, space: Space) -> Set {
        for p in &mut self.pieces {
            p.space = space.clone();
        }
        self.space = space;
        self
    }
}

fn exact_or_err((s, exact): (Set, bool), what: &str) -> PolyResult<Set> {
    if exact {
        Ok(s)
    } else {
        Err(PolyError::Unsupported(format!(
            "{what}: the integer projection is not exact (needs existential variables)"
        )))
    }
}

/// `s` read in the larger `space`: `count` unconstrained variables
/// (zero columns) inserted at variable position `at` of every row.
fn lift(s: &Set, space: &Space, at: usize, count: usize) -> PolyResult<Set> {
    s.map_rows(space, |r| Ok(insert_cols(r, at, count)))
}
