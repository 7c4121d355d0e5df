//! Asymptotic size of parametric integer sets: the number of integer points
//! as a sum of monomials in the parameters, up to constant factors
//! (`O(N^2*K)`, `O(N + K)`, `O(1)`).
//!
//! Owns: [`Monomial`], [`Complexity`] and the degree computation
//! ([`complexity`], [`basic_complexity`]).
//!
//! Must not know about: programs, reductions or anything above `poly`.
//!
//! # Method
//!
//! The parameters are assumed to grow (`p >= 0`). For a basic set
//! `P = { (p, x) : E·(p,x,1) = 0, I·(p,x,1) >= 0 }` (simplified first):
//!
//! * Boundedness: the recession cone of `P` for a fixed parameter value is
//!   `{ x : E_x·x = 0, I_x·x >= 0 }` (parameter and constant columns
//!   dropped). When `P` has an integer point and that cone is not `{0}` the
//!   set is infinite for some parameter value: `PolyError::Unbounded`.
//! * Total degree: `d = dim(C) − dim(proj_p C)` where `C` is the recession
//!   cone of `P ∩ { p >= 0 }` in `(p, x)` (homogenize: drop the constants).
//!   For a cone this is the number of set dimensions minus the rank of `C`'s
//!   hull equalities restricted to the dimension columns, i.e.
//!   `BasicSet::dimension` of `C`. When `C` projects onto the whole
//!   non-negative orthant this is `dim(C) − #params`; a parameter bounded by
//!   `P` (e.g. `N <= 10`) then simply contributes nothing.
//! * Degree in one parameter `q`: `d_q` = the same quantity for the cone of
//!   `P` in `(q, x)`, the other parameters treated as constants (their
//!   columns dropped with the constants) and `q >= 0`.
//! * Terms: if `Σ d_q = d`, the single monomial `∏ q^{d_q}`. Otherwise
//!   all maximal monomials of total degree `d` with exponent of `q` at most
//!   `d_q` (an upper bound). If there is none (`Σ d_q < d`, e.g. for
//!   `{ [i] : 0 <= i <= N and i <= K }`, of size `min(N, K)`, where each
//!   `d_q = 0`), all monomials of total degree `d` (again an upper bound:
//!   `O(N + K)` for `min(N, K)`).
//! * Exact cases: product-like sets (`N^2*K`), simplices in one parameter,
//!   `i + j < N + K` (`N^2 + N*K + K^2`, exact up to constants).
//!   Over-approximations: sets whose size is a minimum of parameters
//!   (above), and sets that only grow on a thin cone of parameter values,
//!   e.g. `{ [i] : N <= i <= K }` is counted `O(K)` although for `K < N` it
//!   is empty.
//! * A second bound, the product of the dimensions' extents (see
//!   `extent_complexity`), is computed too and kept when it is tighter (a
//!   lower degree, or fewer terms): for a sliding window
//!   `{ [i, j] : 0 <= i < N and i - W <= j <= i and j >= 0 }` it gives
//!   `N*W` (the cone degrees give `N^2 + N*W + W^2`). Both are upper
//!   bounds; the extent product depends on the order of the dimensions.
//! * A union is made disjoint (`Set::make_disjoint`), then the pieces'
//!   complexities are summed and dominated terms removed, so overlapping
//!   pieces are not counted twice.

use std::fmt;

use super::basic_set::BasicSet;
use super::error::{PolyError, PolyResult};
use super::set::Set;
use super::space::Space;

/// A monomial `∏ p_k^{exps[k]}` in the parameters (declaration order).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Monomial {
    pub exps: Vec<u32>,
}

impl Monomial {
    /// The total degree `Σ exps`.
    pub fn degree(&self) -> u32 {
        self.exps.iter().sum()
    }
    /// True when every exponent is `>=` the other's (same length).
    pub fn dominates(&self, other: &Monomial) -> bool {
        self.exps.len() == other.exps.len()
            && self.exps.iter().zip(&other.exps).all(|(a, b)| a >= b)
    }
}

/// An asymptotic size `O(Σ terms)`; no term is dominated by another (see
/// [`Monomial::dominates`]); no terms means the
/// empty set (`O(0)`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Complexity {
    pub params: Vec<String>,
    pub terms: Vec<Monomial>,
}

impl Complexity {
    /// The complexity of the given terms, dominated ones removed, sorted
    /// (decreasing total degree, then decreasing exponents in parameter
    /// order).
    pub fn new(params: Vec<String>, terms: Vec<Monomial>) -> Complexity {
        let mut kept: Vec<Monomial> = Vec::new();
        for (k, t) in terms.iter().enumerate() {
            let dominated = terms
                .iter()
                .enumerate()
                .any(|(j, u)| j != k && u.dominates(t) && (u != t || j < k));
            if !dominated {
                kept.push(t.clone());
            }
        }
        kept.sort_by(|a, b| {
            b.degree()
                .cmp(&a.degree())
                .then_with(|| b.exps.cmp(&a.exps))
        });
        Complexity {
            params,
            terms: kept,
        }
    }

    /// `O(1)`.
    pub fn one(params: Vec<String>) -> Complexity {
        let n = params.len();
        Complexity {
            params,
            terms: vec![Monomial { exps: vec![0; n] }],
        }
    }

    /// The sum: all terms of both, dominated ones removed. `Invalid` when
    /// the parameter lists differ.
    pub fn add(&self, other: &Complexity) -> PolyResult<Complexity> {
        if self.params != other.params {
            return Err(PolyError::Invalid(format!(
                "complexities over different parameters: {:?} vs {:?}",
                self.params, other.params
            )));
        }
        let mut t = self.terms.clone();
        t.extend(other.terms.iter().cloned());
        Ok(Complexity::new(self.params.clone(), t))
    }

    /// The total degree of the leading terms (`None` for the empty set).
    pub fn degree(&self) -> Option<u32> {
        self.terms.iter().map(Monomial::degree).max()
    }
}

impl fmt::Display for Complexity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terms.is_empty() {
            return f.write_str("O(0)");
        }
        let terms: Vec<String> = self
            .terms
            .iter()
            .map(|m| {
                let fs: Vec<String> = m
                    .exps
                    .iter()
                    .zip(&self.params)
                    .filter(|(e, _)| **e > 0)
                    .map(|(e, p)| {
                        if *e == 1 {
                            p.clone()
                        } else {
                            format!("{p}^{e}")
                        }
                    })
                    .collect();
                if fs.is_empty() {
                    "1".to_string()
                } else {
                    fs.join("*")
                }
            })
            .collect();
        write!(f, "O({})", terms.join(" + "))
    }
}

/// The asymptotic number of integer points of a set (see the module doc):
/// the sum over the pieces of `s.make_disjoint()` of [`basic_complexity`].
/// `Unbounded` when the set is infinite for some parameter value.
pub fn complexity(s: &Set) -> PolyResult<Complexity> {
    let params = s.space().params.clone();
    let mut acc = Complexity::new(params, Vec::new());
    for p in s.make_disjoint()?.pieces() {
        acc = acc.add(&basic_complexity(p)?)?;
    }
    Ok(acc)
}

/// The asymptotic number of integer points of one basic set (see the module
/// doc for the method and where it is only an upper bound); `O(0)` when it
/// has no integer point. Both bounds of the module doc (the cone degrees and
/// the extent product) are computed and the tighter one is kept.
pub fn basic_complexity(b: &BasicSet) -> PolyResult<Complexity> {
    let by_cones = cone_complexity(b)?;
    if by_cones.terms.is_empty() {
        return Ok(by_cones);
    }
    match extent_complexity(b)? {
        Some(by_extents) if tighter(&by_extents, &by_cones) => Ok(by_extents),
        _ => Ok(by_cones),
    }
}

/// `a` is a strictly better bound than `b`: a lower maximal degree, or the
/// same degree with fewer terms.
fn tighter(a: &Complexity, b: &Complexity) -> bool {
    let key = |c: &Complexity| (c.degree().unwrap_or(0), c.terms.len());
    key(a) < key(b)
}

/// The product of two complexities (expanded, dominated terms removed).
fn product(a: &Complexity, b: &Complexity) -> Complexity {
    let mut terms = Vec::new();
    for x in &a.terms {
        for y in &b.terms {
            terms.push(Monomial {
                exps: x.exps.iter().zip(&y.exps).map(|(p, q)| p + q).collect(),
            });
        }
    }
    Complexity::new(a.params.clone(), terms)
}

/// The extent-product bound: scanning the dimensions outermost first, the
/// number of values of `x_k` for fixed outer dimensions is at most the width
/// `u − l + 1` of any pair of a lower bound `l` and an upper bound `u` of
/// `x_k` in the real shadow of the set on `(p, x_0..x_k)`; a width grows at
/// most like the sum of the parameters it increases with (directly, or
/// through an outer dimension whose own bounds grow with them). The bound is
/// the product of the chosen widths (per dimension the width with the fewest
/// parameters, preferring widths that do not go through outer dimensions;
/// equally good widths in different parameters are summed);
/// a dimension fixed by an equality contributes 1. For
/// `{ [i, j] : 0 <= i < N and i - W <= j <= i and j >= 0 }` this gives
/// `N*W` where the cone degrees only give `N^2 + N*W + W^2`. `None` when a
/// dimension has no lower or no upper bound in a shadow.
fn extent_complexity(b: &BasicSet) -> PolyResult<Option<Complexity>> {
    let space = b.space();
    let params = space.params.clone();
    let np = space.n_params();
    let nd = space.n_dims();
    let s = b.simplify()?;
    // growth[m]: the parameters the magnitude of x_m grows with
    let mut growth: Vec<Vec<bool>> = Vec::with_capacity(nd);
    let mut total = Complexity::one(params.clone());
    for k in 0..nd {
        let (shadow, _) = s.project_out(k + 1, nd - k - 1)?;
        let col = np + k;
        let fixed = shadow.eqs().iter().any(|r| r[col] != 0);
        let lowers: Vec<&Vec<i64>> = shadow.ineqs().iter().filter(|r| r[col] > 0).collect();
        let uppers: Vec<&Vec<i64>> = shadow.ineqs().iter().filter(|r| r[col] < 0).collect();
        // magnitude of x_k: anything its bounds involve
        let mut mag = vec![false; np];
        for r in shadow
            .eqs()
            .iter()
            .chain(shadow.ineqs())
            .filter(|r| r[col] != 0)
        {
            let (g, _) = row_growth(r, np, &growth, false);
            for q in 0..np {
                mag[q] |= g[q];
            }
        }
        growth.push(mag);
        if fixed {
            continue;
        }
        if lowers.is_empty() || uppers.is_empty() {
            return Ok(None);
        }
        let mut best: Option<(usize, usize, Vec<bool>)> = None;
        for l in &lowers {
            for u in &uppers {
                // width ∝ a·U + b·L with a = l[col] > 0, b = -u[col] > 0
                let a = i128::from(l[col]);
                let bb = -i128::from(u[col]);
                let mut w = vec![0i64; col + 1];
                for c in 0..col {
                    let v = a * i128::from(u[c]) + bb * i128::from(l[c]);
                    w[c] = v.signum() as i64;
                }
                let (g, outer) = row_growth(&w, np, &growth, true);
                let n = g.iter().filter(|&&x| x).count();
                best = match best {
                    Some((bn, bo, mut bg)) if (n, outer) == (bn, bo) => {
                        // Equally good widths growing with different
                        // parameters (`i < N and i < K`): the extent is
                        // their minimum, which a sum of monomials can only
                        // bound by their union.
                        for q in 0..np {
                            bg[q] |= g[q];
                        }
                        Some((bn, bo, bg))
                    }
                    Some((bn, bo, bg)) if (bn, bo) < (n, outer) => Some((bn, bo, bg)),
                    _ => Some((n, outer, g)),
                };
            }
        }
        let Some((_, _, g)) = best else {
            return Ok(None);
        };
        let terms: Vec<Monomial> = if g.iter().any(|&x| x) {
            (0..np)
                .filter(|&q| g[q])
                .map(|q| Monomial {
                    exps: (0..np).map(|m| u32::from(m == q)).collect(),
                })
                .collect()
        } else {
            vec![Monomial { exps: vec![0; np] }]
        };
        total = product(&total, &Complexity::new(params.clone(), terms));
    }
    Ok(Some(total))
}

/// The parameters a row grows with: its positive parameter coefficients
/// (any non-zero one unless `positive_only`), and the growth of every outer
/// dimension it involves; also the number of outer dimensions involved.
fn row_growth(
    r: &[i64],
    np: usize,
    growth: &[Vec<bool>],
    positive_only: bool,
) -> (Vec<bool>, usize) {
    let mut g = vec![false; np];
    let mut outer = 0;
    for q in 0..np {
        if r[q] > 0 || (!positive_only && r[q] != 0) {
            g[q] = true;
        }
    }
    for (m, gm) in growth.iter().enumerate() {
        if r[np + m] != 0 {
            outer += 1;
            for q in 0..np {
                g[q] |= gm[q];
            }
        }
    }
    (g, outer)
}

/// The cone-degree bound (see the module doc).
fn cone_complexity(b: &BasicSet) -> PolyResult<Complexity> {
    let space = b.space();
    let params = space.params.clone();
    let np = space.n_params();
    if b.is_empty()? {
        return Ok(Complexity::new(params, Vec::new()));
    }
    let s = b.simplify()?;
    // boundedness for fixed parameters: the cone with every parameter dropped
    let fiber = cone(space, s.eqs(), s.ineqs(), &vec![false; np])?;
    if fiber.dimension()? > 0 {
        return Err(PolyError::Unbounded(format!(
            "the set {s} is infinite for some parameter values"
        )));
    }
    let total = cone(space, s.eqs(), s.ineqs(), &vec![true; np])?.dimension()?;
    let total = u32::try_from(total.max(0)).map_err(|_| PolyError::Overflow)?;
    let mut caps = Vec::with_capacity(np);
    for q in 0..np {
        let keep: Vec<bool> = (0..np).map(|k| k == q).collect();
        let dq = cone(space, s.eqs(), s.ineqs(), &keep)?.dimension()?;
        caps.push(u32::try_from(dq.max(0)).map_err(|_| PolyError::Overflow)?);
    }
    let sum: u32 = caps.iter().sum();
    if sum == total {
        return Ok(Complexity::new(params, vec![Monomial { exps: caps }]));
    }
    let mut terms = Vec::new();
    let capped = sum > total;
    let limit: Vec<u32> = if capped { caps } else { vec![total; np] };
    monomials(&limit, total, &mut Vec::new(), &mut terms);
    Ok(Complexity::new(params, terms))
}

/// All monomials of total degree `deg` with `exps[k] <= limit[k]`.
fn monomials(limit: &[u32], deg: u32, cur: &mut Vec<u32>, out: &mut Vec<Monomial>) {
    let k = cur.len();
    if k == limit.len() {
        if cur.iter().sum::<u32>() == deg {
            out.push(Monomial { exps: cur.clone() });
        }
        return;
    }
    let used: u32 = cur.iter().sum();
    let room = deg.saturating_sub(used);
    for e in 0..=limit[k].min(room) {
        cur.push(e);
        monomials(limit, deg, cur, out);
        cur.pop();
    }
}

/// The homogenized cone of `(eqs, ineqs)`: constants dropped, the columns of
/// the parameters with `keep[k] == false` dropped (zeroed), and `p_k >= 0`
/// added for the kept ones. Same space, so `dimension` counts the set
/// dimensions only.
fn cone(
    space: &Space,
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
    keep: &[bool],
) -> PolyResult<BasicSet> {
    let nv = space.n_vars();
    let hom = |r: &Vec<i64>| -> Vec<i64> {
        let mut h = r.clone();
        h[nv] = 0;
        for (k, kp) in keep.iter().enumerate() {
            if !kp {
                h[k] = 0;
            }
        }
        h
    };
    let mut ins: Vec<Vec<i64>> = ineqs.iter().map(hom).collect();
    for (k, kp) in keep.iter().enumerate() {
        if *kp {
            let mut r = vec![0; nv + 1];
            r[k] = 1;
            ins.push(r);
        }
    }
    BasicSet::from_rows(space.clone(), eqs.iter().map(hom).collect(), ins)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx(s: &str) -> String {
        complexity(&Set::parse(s).unwrap()).unwrap().to_string()
    }

    #[test]
    fn paper_examples() {
        assert_eq!(cx("[N] -> { [i, j] : 0 <= j <= i < N }"), "O(N^2)");
        assert_eq!(cx("{ [i] : 0 <= i <= 7 }"), "O(1)");
    }

    #[test]
    fn dominated_terms_removed() {
        let p = vec!["N".to_string(), "K".to_string()];
        let c = Complexity::new(
            p,
            vec![Monomial { exps: vec![1, 1] }, Monomial { exps: vec![2, 1] }],
        );
        assert_eq!(c.to_string(), "O(N^2*K)");
    }
}
