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
//! * Second bounds, products of the dimensions' extents (see
//!   `extent_bounds`): each width is an affine function of the parameters
//!   and the outer dimensions, bounded above by eliminating the outer
//!   dimensions with their own bounds. For a sliding window
//!   `{ [i, j] : 0 <= i < N and i - W <= j <= i and j >= 0 }` this gives
//!   `N*W` (the cone degrees give `N^2 + N*W + W^2`). Where a width is a
//!   minimum (`j <= min(K - 1, i)`), each choice gives a valid bound, so a
//!   set can have several incomparable ones (`O(N*K)` and `O(K^2)`):
//!   [`basic_bounds`] returns them all, [`basic_complexity`] the tightest
//!   (lowest degree, then fewest terms). All are upper bounds; the extent
//!   products depend on the order of the dimensions.
//! * A union is made disjoint (`Set::make_disjoint`), then the pieces'
//!   bounds are summed and dominated terms removed, so overlapping pieces
//!   are not counted twice; where a piece has several bounds,
//!   [`sum_of_bounds`] takes the one that adds least to the sum (a
//!   triangle `min(N, K) * K` beside an `N*K*D` nest counts as `N*K`).

use std::fmt;

use super::basic_set::BasicSet;
use super::constraint::combine;
use super::error::{PolyError, PolyResult};
use super::linalg::normalize_row;
use super::memo::{memoized, Memo};
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

    /// `O(self) ⊆ O(other)`: every term of `self` is dominated by a term of
    /// `other` (same parameters).
    pub fn at_most(&self, other: &Complexity) -> bool {
        self.params == other.params
            && self
                .terms
                .iter()
                .all(|t| other.terms.iter().any(|u| u.dominates(t)))
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
/// the sum over the pieces of `s.make_disjoint()` of their
/// [`basic_bounds`], one chosen per piece by [`sum_of_bounds`].
/// `Unbounded` when the set is infinite for some parameter value.
///
/// Memoized per thread (`poly::memo`): the optimizer asks for the size of
/// the same domains many times (each decision's report, the cleanup's
/// cost comparisons), at half a million instructions a question.
pub fn complexity(s: &Set) -> PolyResult<Complexity> {
    thread_local! {
        static SIZES: Memo<(Space, Vec<BasicSet>), Complexity> = Memo::default();
    }
    memoized(
        &SIZES,
        || (s.space().clone(), s.pieces().to_vec()),
        || complexity_uncached(s),
    )
}

fn complexity_uncached(s: &Set) -> PolyResult<Complexity> {
    let params = s.space().params.clone();
    let bounds = s
        .make_disjoint()?
        .pieces()
        .iter()
        .map(basic_bounds)
        .collect::<PolyResult<Vec<_>>>()?;
    sum_of_bounds(&params, &bounds)
}

/// The asymptotic number of integer points of one basic set (see the module
/// doc for the method and where it is only an upper bound); `O(0)` when it
/// has no integer point: the first (tightest) of [`basic_bounds`].
pub fn basic_complexity(b: &BasicSet) -> PolyResult<Complexity> {
    let mut bounds = basic_bounds(b)?;
    // `basic_bounds` returns at least the cone bound.
    Ok(bounds.swap_remove(0))
}

/// Upper bounds of the number of integer points of `b`, each valid on its
/// own (the module doc's cone bound and the extent bounds, one per choice
/// of widths), none at least as large as another; the tightest first
/// (lowest degree, then fewest terms; the cone bound first among equals).
/// For a set whose size is a minimum, e.g. `{ [i, j] : 0 <= i < N and
/// 0 <= j < K and j <= i }` (`min(N, K) * K` up to constants), there are
/// several: `O(N*K)` and `O(K^2)`; [`sum_of_bounds`] picks among them.
pub fn basic_bounds(b: &BasicSet) -> PolyResult<Vec<Complexity>> {
    let by_cones = cone_complexity(b)?;
    if by_cones.terms.is_empty() {
        return Ok(vec![by_cones]);
    }
    let mut all = vec![by_cones];
    all.extend(extent_bounds(b)?);
    let mut kept = pareto(all);
    kept.sort_by_key(key);
    Ok(kept)
}

/// The bounds of `all` that no other bound is at most (duplicates kept
/// once, the first).
fn pareto(all: Vec<Complexity>) -> Vec<Complexity> {
    let mut kept: Vec<Complexity> = Vec::new();
    for (k, c) in all.iter().enumerate() {
        let beaten = all
            .iter()
            .enumerate()
            .any(|(j, d)| j != k && d.at_most(c) && (!c.at_most(d) || j < k));
        if !beaten {
            kept.push(c.clone());
        }
    }
    kept
}

/// The order of bounds: lower maximal degree first, then fewer terms.
fn key(c: &Complexity) -> (u32, usize) {
    (c.degree().unwrap_or(0), c.terms.len())
}

/// An upper bound of a sum of counts, given for each count its alternative
/// upper bounds (each valid; e.g. [`basic_bounds`]): one alternative is
/// chosen per count so that the sum is as small as the order of
/// [`basic_bounds`] makes it, greedily: counts with one bound first, then
/// each of the others takes the bound that adds least to the sum so far,
/// then each chooses again knowing all the others' choices. For a loop
/// program with an `O(N*K*D)` nest and a `min(N, K) * K` triangle, the
/// triangle takes `O(N*K)` (absorbed) rather than `O(K^2)`.
pub fn sum_of_bounds(params: &[String], counts: &[Vec<Complexity>]) -> PolyResult<Complexity> {
    let zero = || Complexity::new(params.to_vec(), Vec::new());
    let mut total = zero();
    let mut choice: Vec<usize> = vec![0; counts.len()];
    for c in counts.iter().filter(|c| c.len() == 1) {
        total = total.add(&c[0])?;
    }
    let best = |rest: &Complexity, alts: &[Complexity]| -> PolyResult<usize> {
        let mut pick = 0;
        let mut pick_key = None;
        for (a, alt) in alts.iter().enumerate() {
            let k = key(&rest.add(alt)?);
            if pick_key.is_none_or(|p| k < p) {
                pick = a;
                pick_key = Some(k);
            }
        }
        Ok(pick)
    };
    for (i, c) in counts.iter().enumerate().filter(|(_, c)| c.len() > 1) {
        choice[i] = best(&total, c)?;
        total = total.add(&c[choice[i]])?;
    }
    // One more round: each multi-bound count chooses again against the
    // sum of all the others' choices.
    for i in (0..counts.len()).filter(|&i| counts[i].len() > 1) {
        let mut rest = zero();
        for (j, c) in counts.iter().enumerate() {
            if j != i && !c.is_empty() {
                rest = rest.add(&c[choice[j]])?;
            }
        }
        choice[i] = best(&rest, &counts[i])?;
    }
    let mut total = zero();
    for (j, c) in counts.iter().enumerate() {
        if !c.is_empty() {
            total = total.add(&c[choice[j]])?;
        }
    }
    Ok(total)
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

/// At most this many leaves per width in [`width_growths`]' search.
const WIDTH_LEAVES: usize = 64;
/// At most this many alternative widths per dimension, and alternative
/// products per set, in [`extent_bounds`].
const EXTENT_CHOICES: usize = 8;

/// The extent-product bounds: scanning the dimensions outermost first, the
/// number of values of `x_k` for fixed outer dimensions is at most
/// `w/(a·b) + 1` for any pair of a lower bound `a·x_k + L >= 0` and an
/// upper bound `−b·x_k + U >= 0` of `x_k` in the real shadow of the set on
/// `(p, x_0..x_k)`, where `w = b·L + a·U`. `w` is affine in the parameters
/// and the outer dimensions; [`width_growths`] bounds it above by affine
/// functions of the parameters alone, and such a function grows like the
/// sum of the parameters with a positive coefficient (parameters are
/// non-negative). The count is at most the product of the widths; a
/// dimension fixed by an equality contributes 1. Each choice of one width
/// per dimension is a bound: for `{ [i, j] : 0 <= i < N and i - W <= j <= i
/// and j >= 0 }` this gives `N*W` where the cone degrees only give `N^2 +
/// N*W + W^2`; for `{ [i, j] : 0 <= i < N and i < K and 0 <= j < K }` (`i`
/// runs to `min(N, K)`) both `N*K` and `K^2`. Empty when a dimension has no
/// lower or no upper bound in a shadow.
fn extent_bounds(b: &BasicSet) -> PolyResult<Vec<Complexity>> {
    let space = b.space();
    let params = space.params.to_vec();
    let np = space.n_params();
    let nd = space.n_dims();
    let s = b.simplify()?;
    let mut shadows: Vec<BasicSet> = Vec::with_capacity(nd);
    let mut totals = vec![Complexity::one(params.clone())];
    for k in 0..nd {
        let (shadow, _) = s.project_out(k + 1, nd - k - 1)?;
        shadows.push(shadow);
        let sh = &shadows[k];
        let col = np + k;
        if sh.eqs().iter().any(|r| r[col] != 0) {
            continue;
        }
        let lowers: Vec<&Vec<i64>> = sh.ineqs().iter().filter(|r| r[col] > 0).collect();
        let uppers: Vec<&Vec<i64>> = sh.ineqs().iter().filter(|r| r[col] < 0).collect();
        let mut growths: Vec<(Vec<bool>, usize)> = Vec::new();
        for l in &lowers {
            for u in &uppers {
                // w = b·l + a·u with a = l[col] > 0, b = −u[col] > 0: x_k
                // cancels.
                let w = match combine(-u[col], l, l[col], u) {
                    Ok(w) => w,
                    Err(PolyError::Overflow) => continue,
                    Err(e) => return Err(e),
                };
                let mut budget = WIDTH_LEAVES;
                width_growths(w, k, 0, &shadows, np, &mut budget, &mut growths)?;
            }
        }
        if growths.is_empty() {
            return Ok(Vec::new());
        }
        // Fewest parameters first, then widths bounded directly (fewer
        // outer dimensions eliminated: a window `i - W <= j <= i` is `W`
        // before it is `N`), then the earlier parameters.
        growths.sort_by_key(|(g, depth)| {
            let n = g.iter().filter(|&&x| x).count();
            let order: Vec<bool> = g.iter().map(|&x| !x).collect();
            (n, *depth, order)
        });
        growths.truncate(EXTENT_CHOICES);
        let mut next = Vec::new();
        for t in &totals {
            for (g, _) in &growths {
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
                next.push(product(t, &Complexity::new(params.clone(), terms)));
            }
        }
        totals = pareto(next);
        totals.sort_by_key(key);
        totals.truncate(EXTENT_CHOICES);
    }
    Ok(totals)
}

/// The parameters each of some upper bounds of the affine form `w` grows
/// with, added to `out` with the number of outer dimensions eliminated to
/// reach it (inclusion-minimal sets only, each with its smallest depth).
/// `w` is a row over `(p, x_0..x_k, 1)` whose `x_k` coefficient is zero and
/// which is non-negative on the set. The innermost outer dimension `x_m`
/// with a non-zero coefficient `c` is eliminated with each row `r` of the
/// shadow on `(p, x_0..x_m)` that bounds `c·x_m` from above (an upper bound
/// of `x_m` when `c > 0`, a lower one when `c < 0`, or an equality):
/// `|r_m|·w − sign(r_m)·c·r` is at least `|r_m|·w` on the set and has no
/// `x_m`. With no outer dimension left the bound grows with the parameters
/// whose coefficient is positive. The search stops after `budget` leaves.
fn width_growths(
    w: Vec<i64>,
    k: usize,
    depth: usize,
    shadows: &[BasicSet],
    np: usize,
    budget: &mut usize,
    out: &mut Vec<(Vec<bool>, usize)>,
) -> PolyResult<()> {
    if *budget == 0 {
        return Ok(());
    }
    let Some(m) = (0..k).rev().find(|&m| w[np + m] != 0) else {
        *budget -= 1;
        let g: Vec<bool> = (0..np).map(|q| w[q] > 0).collect();
        let subset = |a: &[bool], b: &[bool]| (0..np).all(|q| b[q] || !a[q]);
        if let Some(same) = out.iter_mut().find(|(h, _)| *h == g) {
            same.1 = same.1.min(depth);
        } else if !out.iter().any(|(h, _)| subset(h, &g)) {
            out.retain(|(h, _)| !subset(&g, h));
            out.push((g, depth));
        }
        return Ok(());
    };
    let c = w[np + m];
    let sh = &shadows[m];
    let rows = sh.eqs().iter().filter(|r| r[np + m] != 0).chain(
        sh.ineqs()
            .iter()
            .filter(|r| (r[np + m] < 0) == (c > 0) && r[np + m] != 0),
    );
    for r in rows {
        let rm = r[np + m];
        // `r` lifted to `w`'s columns: the same parameters and outer
        // dimensions, no `x_{m+1}..x_k`, its constant last.
        let mut lifted = vec![0i64; w.len()];
        lifted[..np + m + 1].copy_from_slice(&r[..np + m + 1]);
        lifted[w.len() - 1] = r[np + m + 1];
        let (Some(a), Some(s)) = (rm.checked_abs(), c.checked_mul(-rm.signum())) else {
            continue;
        };
        let mut next = match combine(a, &w, s, &lifted) {
            Ok(v) => v,
            Err(PolyError::Overflow) => continue,
            Err(e) => return Err(e),
        };
        normalize_row(&mut next);
        width_growths(next, k, depth + 1, shadows, np, budget, out)?;
        if *budget == 0 {
            break;
        }
    }
    Ok(())
}

/// The cone-degree bound (see the module doc).
fn cone_complexity(b: &BasicSet) -> PolyResult<Complexity> {
    let space = b.space();
    let params = space.params.to_vec();
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
