//! Affine functions: `Aff` (one integer affine expression of the
//! parameters and dimensions of a set space) and `MultiAff` (a tuple of
//! them: a function from an input tuple to an output tuple, e.g. an access
//! function `[i, j] -> [i - 1, j]`).
//!
//! Owns: these types, their evaluation and composition, the graph of a
//! `MultiAff` as a `Map`, and images/preimages of sets by them.
//!
//! Row layout: an `Aff` row over a set space has the coefficients of the
//! parameters, then of the dimensions, then the constant.
//!
//! Must not know about: the solver (images go through `Map`).

use super::constraint::{eval_at, to_i64};
use super::error::{PolyError, PolyResult};
use super::map::{BasicMap, Map};
use super::set::Set;
use super::space::{Space, Tuple};

/// An affine expression `c·(p, x) + c_0` over a set space.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Aff {
    pub(crate) space: Space,
    pub(crate) row: Vec<i64>,
}

impl Aff {
    /// The expression with the given row (parameters, dimensions,
    /// constant) over the set space `space`.
    pub fn new(space: Space, row: Vec<i64>) -> PolyResult<Aff> {
        if space.is_map() {
            return Err(PolyError::SpaceMismatch(
                "an Aff lives over a set space".into(),
            ));
        }
        if row.len() != space.n_vars() + 1 {
            return Err(PolyError::Invalid(format!(
                "Aff row has {} entries, expected {}",
                row.len(),
                space.n_vars() + 1
            )));
        }
        Ok(Aff { space, row })
    }
    /// The constant `c`.
    pub fn constant(space: Space, c: i64) -> PolyResult<Aff> {
        let mut row = vec![0; space.n_vars() + 1];
        let n = row.len() - 1;
        row[n] = c;
        Aff::new(space, row)
    }
    /// Variable `k` (parameters first, then dimensions).
    pub fn var(space: Space, k: usize) -> PolyResult<Aff> {
        let nv = space.n_vars();
        if k >= nv {
            return Err(PolyError::Invalid(format!("variable {k} of {nv}")));
        }
        let mut row = vec![0; nv + 1];
        row[k] = 1;
        Aff::new(space, row)
    }
    /// Parses `[N] -> { [i, j] -> [e] }` (one output expression).
    pub fn parse(s: &str) -> PolyResult<Aff> {
        let f = MultiAff::parse(s)?;
        if f.rows.len() != 1 {
            return Err(PolyError::Parse {
                pos: 0,
                msg: format!("expected one affine expression, found {}", f.rows.len()),
            });
        }
        Ok(f.get(0))
    }
    pub fn space(&self) -> &Space {
        &self.space
    }
    /// The zero expression over the set space `space` (for a map space:
    /// over its wrapped set space).
    pub fn zero(space: Space) -> Aff {
        let space = space.wrapped();
        let row = vec![0; space.n_vars() + 1];
        Aff { space, row }
    }
    /// Dimension `k` of the set space `space` (parameters not counted);
    /// the zero expression when `k` is out of range.
    pub fn dim(space: Space, k: usize) -> Aff {
        let mut a = Aff::zero(space);
        let np = a.space.n_params();
        if k < a.space.n_dims() {
            a.row[np + k] = 1;
        }
        a
    }
    /// `Σ par[p]·p_p + Σ dims[k]·x_k + constant` over the set space
    /// `space` (`par` and `dims` must have the space's lengths).
    pub fn from_parts(space: Space, par: &[i64], dims: &[i64], constant: i64) -> PolyResult<Aff> {
        let mut row = Vec::with_capacity(par.len() + dims.len() + 1);
        row.extend_from_slice(par);
        row.extend_from_slice(dims);
        row.push(constant);
        Aff::new(space, row)
    }
    /// Number of parameters of the space.
    pub fn n_params(&self) -> usize {
        self.space.n_params()
    }
    /// Number of dimensions of the space.
    pub fn n_dims(&self) -> usize {
        self.space.n_dims()
    }
    /// The coefficients of the parameters.
    pub fn param_coeffs(&self) -> &[i64] {
        &self.row[..self.space.n_params()]
    }
    /// The coefficients of the dimensions.
    pub fn dim_coeffs(&self) -> &[i64] {
        let np = self.space.n_params();
        &self.row[np..np + self.space.n_dims()]
    }
    /// Mutable coefficients of the dimensions.
    pub fn dim_coeffs_mut(&mut self) -> &mut [i64] {
        let np = self.space.n_params();
        let nd = self.space.n_dims();
        &mut self.row[np..np + nd]
    }
    /// Mutable coefficients of the parameters.
    pub fn param_coeffs_mut(&mut self) -> &mut [i64] {
        let np = self.space.n_params();
        &mut self.row[..np]
    }
    /// The constant term.
    pub fn constant_term(&self) -> i64 {
        self.row.last().copied().unwrap_or(0)
    }
    /// Mutable constant term.
    pub fn constant_term_mut(&mut self) -> &mut i64 {
        let n = self.row.len() - 1;
        &mut self.row[n]
    }
    /// True when the expression does not depend on the dimensions.
    pub fn is_dim_free(&self) -> bool {
        self.dim_coeffs().iter().all(|&c| c == 0)
    }
    /// The same expression over a space with the same numbers of
    /// parameters and dimensions (new names).
    pub fn with_space(&self, space: Space) -> PolyResult<Aff> {
        Aff::new(space.wrapped(), self.row.clone())
    }
    /// The row: coefficients of parameters, dimensions, then the constant.
    pub fn row(&self) -> &[i64] {
        &self.row
    }
    /// `self + k·other` (checked).
    pub fn add_scaled(&self, k: i64, other: &Aff) -> PolyResult<Aff> {
        self.space.check(&other.space, "Aff::add")?;
        Ok(Aff {
            space: self.space.clone(),
            row: super::constraint::combine(1, &self.row, k, &other.row)?,
        })
    }
    /// `k·self` (checked).
    pub fn scaled(&self, k: i64) -> PolyResult<Aff> {
        let zero = vec![0; self.row.len()];
        Ok(Aff {
            space: self.space.clone(),
            row: super::constraint::combine(k, &self.row, 0, &zero)?,
        })
    }
    /// The constant value when the expression depends on neither the
    /// parameters nor the dimensions.
    pub fn as_constant(&self) -> Option<i64> {
        let n = self.row.len() - 1;
        self.row[..n].iter().all(|&c| c == 0).then(|| self.row[n])
    }
    /// `self ∘ g`: `x -> self(g(x))` (`g`'s outputs are `self`'s
    /// dimensions).
    pub fn pullback(&self, g: &MultiAff) -> PolyResult<Aff> {
        if !g.feeds(&self.space) {
            return Err(pullback_mismatch(&self.space, g));
        }
        Ok(Aff {
            space: g.space.domain(),
            row: g.substitute_into(&self.row)?,
        })
    }
    /// The value at `(params, point)`.
    pub fn eval(&self, params: &[i64], point: &[i64]) -> PolyResult<i64> {
        if params.len() != self.space.n_params() || point.len() != self.space.n_dims() {
            return Err(PolyError::Invalid(
                "Aff::eval: wrong number of values".into(),
            ));
        }
        to_i64(eval_at(&self.row, params, point))
    }
}

/// A function `x -> (f_1(p, x), ..., f_m(p, x))` with affine `f_k`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MultiAff {
    /// The map space `input -> output`.
    pub(crate) space: Space,
    /// One row per output over (parameters, input dimensions, constant).
    pub(crate) rows: Vec<Vec<i64>>,
}

impl MultiAff {
    /// The function with the given rows (one per output, each over the
    /// parameters and dimensions of the set space `domain`, then the
    /// constant); the output tuple gives the names of the results.
    pub fn new(domain: Space, output: Tuple, rows: Vec<Vec<i64>>) -> PolyResult<MultiAff> {
        if domain.is_map() {
            return Err(PolyError::SpaceMismatch(
                "the domain of a MultiAff is a set space".into(),
            ));
        }
        if output.len() != rows.len() {
            return Err(PolyError::Invalid(format!(
                "{} rows for an output tuple of {} dimensions",
                rows.len(),
                output.len()
            )));
        }
        for r in &rows {
            if r.len() != domain.n_vars() + 1 {
                return Err(PolyError::Invalid(format!(
                    "MultiAff row has {} entries, expected {}",
                    r.len(),
                    domain.n_vars() + 1
                )));
            }
        }
        Ok(MultiAff {
            space: Space {
                params: domain.params.clone(),
                input: Some(domain.output),
                output,
            },
            rows,
        })
    }
    /// The tuple of the given expressions (all over the same set space).
    pub fn from_affs(domain: Space, affs: &[Aff]) -> PolyResult<MultiAff> {
        for a in affs {
            domain.check(&a.space, "MultiAff::from_affs")?;
        }
        let out = Tuple::anonymous("o", affs.len());
        MultiAff::new(domain, out, affs.iter().map(|a| a.row.clone()).collect())
    }
    /// The tuple of the given rows (one per output, over the parameters
    /// and dimensions of the set space `domain`, then the constant), with
    /// an anonymous output tuple.
    pub fn from_rows(domain: Space, rows: Vec<Vec<i64>>) -> PolyResult<MultiAff> {
        let out = Tuple::anonymous("o", rows.len());
        MultiAff::new(domain, out, rows)
    }
    /// The outputs as `Aff`s over the domain.
    pub fn affs(&self) -> Vec<Aff> {
        (0..self.rows.len()).map(|k| self.get(k)).collect()
    }
    /// Number of input dimensions.
    pub fn n_in(&self) -> usize {
        self.space.n_in()
    }
    /// Number of parameters.
    pub fn n_params(&self) -> usize {
        self.space.n_params()
    }
    /// The identity on a set space.
    pub fn identity(domain: Space) -> PolyResult<MultiAff> {
        let out = domain.output.clone();
        let zero = vec![0; domain.n_dims()];
        MultiAff::translation(domain, out, &zero)
    }
    /// The translation `x -> x + v` on a set space (`v` has one entry per
    /// dimension), its results named by the tuple `output`.
    pub fn translation(domain: Space, output: Tuple, v: &[i64]) -> PolyResult<MultiAff> {
        let np = domain.n_params();
        let nd = domain.n_dims();
        if v.len() != nd {
            return Err(PolyError::Invalid(format!(
                "translation by {} values in a space of {nd} dimensions",
                v.len()
            )));
        }
        let rows = (0..nd)
            .map(|k| {
                let mut r = vec![0; np + nd + 1];
                r[np + k] = 1;
                r[np + nd] = v[k];
                r
            })
            .collect();
        MultiAff::new(domain, output, rows)
    }
    /// Parses `[N] -> { [i, j] -> [i - 1, j] }` (input entries are fresh
    /// names, outputs affine expressions; `S[..]` names are kept).
    pub fn parse(s: &str) -> PolyResult<MultiAff> {
        let f = super::parse::parse_function(s)?;
        let domain = Space::set_tuple(&f.params, f.input);
        let out = Tuple {
            name: f.output_name.map(Into::into),
            dims: vec![String::new(); f.rows.len()].into(),
        };
        MultiAff::new(domain, out, f.rows)
    }
    /// The map space `input -> output`.
    pub fn space(&self) -> &Space {
        &self.space
    }
    /// The domain (a set space over the input tuple).
    pub fn domain_space(&self) -> Space {
        self.space.domain()
    }
    /// Number of outputs.
    pub fn n_out(&self) -> usize {
        self.rows.len()
    }
    /// The rows (one per output).
    pub fn rows(&self) -> &[Vec<i64>] {
        &self.rows
    }
    /// Output `k` as an `Aff` over the domain (`k < n_out()`, else the
    /// constant 0).
    pub fn get(&self, k: usize) -> Aff {
        let row = self
            .rows
            .get(k)
            .cloned()
            .unwrap_or_else(|| vec![0; self.space.n_params() + self.space.n_in() + 1]);
        Aff {
            space: self.space.domain(),
            row,
        }
    }
    /// The value `f(params, point)`.
    pub fn eval(&self, params: &[i64], point: &[i64]) -> PolyResult<Vec<i64>> {
        if params.len() != self.space.n_params() || point.len() != self.space.n_in() {
            return Err(PolyError::Invalid(
                "MultiAff::eval: wrong number of values".into(),
            ));
        }
        self.rows
            .iter()
            .map(|r| to_i64(eval_at(r, params, point)))
            .collect()
    }
    /// `self ∘ g`: `x -> self(g(x))` (`g`'s output feeds `self`'s input).
    pub fn pullback(&self, g: &MultiAff) -> PolyResult<MultiAff> {
        if !g.feeds(&self.domain_space()) {
            return Err(pullback_mismatch(&self.space, g));
        }
        let rows = self
            .rows
            .iter()
            .map(|r| g.substitute_into(r))
            .collect::<PolyResult<_>>()?;
        MultiAff::new(g.space.domain(), self.space.output.clone(), rows)
    }
    /// True when `self` can stand for the dimensions of the set space
    /// `target`: the same parameters and one output per dimension.
    fn feeds(&self, target: &Space) -> bool {
        self.rows.len() == target.n_dims() && self.space.params == target.params
    }
    /// `r(p, self(p, x), 1)`: a row over the parameters, the dimensions fed
    /// by `self` (see `feeds`) and the constant, rewritten over `self`'s
    /// domain.
    fn substitute_into(&self, r: &[i64]) -> PolyResult<Vec<i64>> {
        let width = self.space.n_params() + self.space.n_in() + 1;
        substitute(r, self.space.n_params(), width, &self.rows)
    }
    /// The graph `{ x -> f(x) }` as a map.
    pub fn to_map(&self) -> PolyResult<Map> {
        let np = self.space.n_params();
        let ni = self.space.n_in();
        let no = self.rows.len();
        let mut eqs = Vec::new();
        for (k, r) in self.rows.iter().enumerate() {
            // y_k - f_k(p, x) = 0
            let mut e: Vec<i64> = r[..np + ni]
                .iter()
                .map(|c| c.checked_neg().ok_or(PolyError::Overflow))
                .collect::<PolyResult<_>>()?;
            e.extend(std::iter::repeat_n(0, no));
            e[np + ni + k] = 1;
            e.push(r[np + ni].checked_neg().ok_or(PolyError::Overflow)?);
            eqs.push(e);
        }
        Ok(Map::from_basic(BasicMap::from_rows(
            self.space.clone(),
            eqs,
            vec![],
        )?))
    }
}

/// The `SpaceMismatch` of `consumer.pullback(g)`.
fn pullback_mismatch(consumer: &Space, g: &MultiAff) -> PolyError {
    PolyError::SpaceMismatch(format!(
        "pullback: {} after {}",
        consumer.describe(),
        g.space.describe()
    ))
}

/// The row `r` over (params, y, 1) with `y_k` replaced by `fs[k]` over
/// (params, x, 1).
fn substitute(r: &[i64], np: usize, width: usize, fs: &[Vec<i64>]) -> PolyResult<Vec<i64>> {
    let mut out = vec![0i128; width];
    for k in 0..np {
        out[k] = r[k] as i128;
    }
    out[width - 1] = r[r.len() - 1] as i128;
    for (k, f) in fs.iter().enumerate() {
        let c = r[np + k] as i128;
        if c == 0 {
            continue;
        }
        for (o, &v) in out.iter_mut().zip(f.iter()) {
            *o = o
                .checked_add(c.checked_mul(v as i128).ok_or(PolyError::Overflow)?)
                .ok_or(PolyError::Overflow)?;
        }
    }
    out.into_iter().map(to_i64).collect()
}

impl Set {
    /// The preimage `{ x : f(x) ∈ self }` (exact: substitution of `y = f(x)`
    /// in every constraint).
    pub fn preimage(&self, f: &MultiAff) -> PolyResult<Set> {
        if !f.feeds(&self.space) {
            return Err(PolyError::SpaceMismatch(format!(
                "preimage of {} by {}",
                self.space.describe(),
                f.space.describe()
            )));
        }
        self.map_rows(&f.space.domain(), |r| f.substitute_into(r))
    }

    /// The image `{ f(x) : x ∈ self }`: the range of the graph of `f`
    /// restricted to `self`; `Unsupported` when the projection is inexact
    /// (e.g. the image of `{ [i] }` by `i -> 2i`).
    pub fn image(&self, f: &MultiAff) -> PolyResult<Set> {
        f.to_map()?.apply_to(self)
    }
}
