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
/// has no integer point.
pub fn basic_complexity(b: &BasicSet) -> PolyResult<Complexity> {
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
