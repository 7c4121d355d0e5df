//! Alpha's polynomial index expressions, exactly: a written polynomial
//! (`N^2 + 1/2*i`, with `+ - * /`, `^` by an integer, parentheses and `2i`)
//! expanded into a sum of monomials with rational coefficients over the
//! names it mentions (all integers: indices, parameters, constants), then
//! rewritten as ordinary integer arithmetic on their values.
//!
//! The type (documented in docs/language.md): write `p = q / d` with `d`
//! the least common denominator of the coefficients and `q` with integer
//! coefficients. When `p` takes integer values at every integer point
//! (`i*(i+1)/2` does, `i/2` does not), it is `int`: `q / d` in integer
//! arithmetic, exact because `d` divides `q` there. Otherwise it is
//! `float`: `q / d.0`, `q` computed exactly in (checked) integers and
//! divided once, so correctly rounded whenever `|q| < 2^53`.

use std::collections::{BTreeMap, BTreeSet};

use super::super::super::{span_of as full_span, Rule};
use crate::diag::Span;
use crate::syntax::ast::{BinOp, Expr, ExprKind, UnOp};
use pest::iterators::Pair;

/// Largest exponent written after `^`, and largest degree of a monomial.
const MAX_DEGREE: u32 = 64;
/// Most monomials in an expanded polynomial.
const MAX_TERMS: usize = 10_000;
/// Most points examined to decide whether a polynomial is integer-valued.
const MAX_CHECKS: usize = 1_000_000;
/// Largest common denominator (exactly representable as a float).
const MAX_DEN: i128 = 1 << 53;

/// A polynomial error: message, where, and the label there.
#[derive(Debug)]
pub(super) struct PolyError {
    pub message: String,
    pub span: Span,
    pub label: &'static str,
}

fn fail<T>(message: impl Into<String>, span: Span, label: &'static str) -> Result<T, PolyError> {
    Err(PolyError {
        message: message.into(),
        span,
        label,
    })
}

fn overflow<T>(span: Span) -> Result<T, PolyError> {
    fail(
        "integer overflow in a polynomial",
        span,
        "coefficient too large",
    )
}

/// The span of `p` without the whitespace the grammar may leave at its end
/// (after an absent optional part).
fn span_of(p: &Pair<Rule>) -> Span {
    let s = full_span(p);
    let trailing = p.as_str().len() - p.as_str().trim_end().len();
    Span::new(s.start, s.end - trailing)
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    // Both operands are at most i64-sized products kept below i128::MAX by
    // the checked arithmetic, so the gcd fits.
    i128::try_from(a).unwrap_or(i128::MAX)
}

/// A rational `num / den` in lowest terms, `den > 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rat {
    num: i128,
    den: i128,
}

impl Rat {
    fn int(v: i128) -> Rat {
        Rat { num: v, den: 1 }
    }
    fn new(num: i128, den: i128) -> Option<Rat> {
        if den == 0 {
            return None;
        }
        let g = gcd(num, den).max(1);
        let s = if den < 0 { -1 } else { 1 };
        Some(Rat {
            num: num.checked_div(g)?.checked_mul(s)?,
            den: den.checked_div(g)?.checked_mul(s)?,
        })
    }
    fn add(self, o: Rat) -> Option<Rat> {
        let num = self
            .num
            .checked_mul(o.den)?
            .checked_add(o.num.checked_mul(self.den)?)?;
        Rat::new(num, self.den.checked_mul(o.den)?)
    }
    fn mul(self, o: Rat) -> Option<Rat> {
        Rat::new(self.num.checked_mul(o.num)?, self.den.checked_mul(o.den)?)
    }
}

/// A monomial: each name's exponent (names with exponent 0 are absent).
type Monomial = BTreeMap<String, u32>;

/// Monomials as exponent vectors (over a fixed list of names) with their
/// integer coefficients.
type Terms = Vec<(Vec<u32>, i128)>;

/// `Σ coefficient · monomial` with no zero coefficient.
#[derive(Clone, Debug, Default)]
pub(super) struct Poly {
    terms: BTreeMap<Monomial, Rat>,
}

impl Poly {
    fn constant(c: Rat) -> Poly {
        let mut p = Poly::default();
        if c.num != 0 {
            p.terms.insert(Monomial::new(), c);
        }
        p
    }
    fn var(name: &str) -> Poly {
        let mut p = Poly::default();
        p.terms
            .insert(Monomial::from([(name.to_string(), 1)]), Rat::int(1));
        p
    }
    /// The value when `self` has no variable.
    fn as_constant(&self) -> Option<Rat> {
        match self.terms.len() {
            0 => Some(Rat::int(0)),
            1 => self.terms.get(&Monomial::new()).copied(),
            _ => None,
        }
    }
    fn add_term(&mut self, m: Monomial, c: Rat) -> Option<()> {
        let sum = match self.terms.get(&m) {
            Some(old) => old.add(c)?,
            None => c,
        };
        if sum.num == 0 {
            self.terms.remove(&m);
        } else {
            self.terms.insert(m, sum);
        }
        Some(())
    }
    /// `self + k·o`.
    fn add_scaled(&self, o: &Poly, k: Rat) -> Option<Poly> {
        let mut r = self.clone();
        for (m, c) in &o.terms {
            r.add_term(m.clone(), c.mul(k)?)?;
        }
        Some(r)
    }
    fn mul(&self, o: &Poly, span: Span) -> Result<Poly, PolyError> {
        let mut r = Poly::default();
        for (ma, ca) in &self.terms {
            for (mb, cb) in &o.terms {
                let mut m = ma.clone();
                for (v, e) in mb {
                    *m.entry(v.clone()).or_insert(0) += e;
                }
                if m.values().sum::<u32>() > MAX_DEGREE {
                    return fail(
                        format!("polynomial of degree above {MAX_DEGREE}"),
                        span,
                        "degree too high",
                    );
                }
                let Some(c) = ca.mul(*cb) else {
                    return overflow(span);
                };
                if r.add_term(m, c).is_none() {
                    return overflow(span);
                }
                if r.terms.len() > MAX_TERMS {
                    return fail(
                        format!("polynomial with more than {MAX_TERMS} terms"),
                        span,
                        "too large",
                    );
                }
            }
        }
        Ok(r)
    }
}

/// Expands a `pexpr`: the polynomial, and where each name first appears.
pub(super) fn build(p: Pair<Rule>) -> Result<(Poly, BTreeMap<String, Span>), PolyError> {
    let mut names = BTreeMap::new();
    let poly = sum(p, &mut names)?;
    Ok((poly, names))
}

/// `pterm (padd_op pterm)*`.
fn sum(p: Pair<Rule>, names: &mut BTreeMap<String, Span>) -> Result<Poly, PolyError> {
    let span = span_of(&p);
    let mut acc = Poly::default();
    let mut sign = 1;
    for q in p.into_inner() {
        match q.as_rule() {
            Rule::padd_op => sign = if q.as_str() == "-" { -1 } else { 1 },
            _ => {
                let t = product(q, names)?;
                acc = match acc.add_scaled(&t, Rat::int(sign)) {
                    Some(a) => a,
                    None => return overflow(span),
                };
            }
        }
    }
    Ok(acc)
}

/// `pfactor (pmul_op pfactor)*`; a divisor must be a non-zero constant.
fn product(p: Pair<Rule>, names: &mut BTreeMap<String, Span>) -> Result<Poly, PolyError> {
    let mut acc = Poly::constant(Rat::int(1));
    let mut divide = false;
    for q in p.into_inner() {
        match q.as_rule() {
            Rule::pmul_op => divide = q.as_str() == "/",
            _ => {
                let s = span_of(&q);
                let f = factor(q, names)?;
                acc = if divide {
                    match f.as_constant() {
                        Some(c) if c.num != 0 => {
                            let Some(inv) = Rat::new(c.den, c.num) else {
                                return overflow(s);
                            };
                            match Poly::default().add_scaled(&acc, inv) {
                                Some(a) => a,
                                None => return overflow(s),
                            }
                        }
                        Some(_) => return fail("division by zero in a polynomial", s, "zero"),
                        None => {
                            return fail(
                                "a polynomial can only be divided by a non-zero constant",
                                s,
                                "not a constant",
                            )
                        }
                    }
                } else {
                    acc.mul(&f, s)?
                };
            }
        }
    }
    Ok(acc)
}

/// `neg_op* ppow`.
fn factor(p: Pair<Rule>, names: &mut BTreeMap<String, Span>) -> Result<Poly, PolyError> {
    let span = span_of(&p);
    let mut negate = false;
    let mut value = Poly::default();
    for q in p.into_inner() {
        match q.as_rule() {
            Rule::neg_op => negate = !negate,
            _ => value = power(q, names)?,
        }
    }
    if negate {
        match Poly::default().add_scaled(&value, Rat::int(-1)) {
            Some(v) => Ok(v),
            None => overflow(span),
        }
    } else {
        Ok(value)
    }
}

/// `patom (^ k)?`; in `2i^k` the exponent applies to `i`.
fn power(p: Pair<Rule>, names: &mut BTreeMap<String, Span>) -> Result<Poly, PolyError> {
    let mut inner = p.into_inner();
    let Some(base) = inner.next() else {
        return Ok(Poly::default());
    };
    let exponent = match inner.next() {
        Some(e) => match e.as_str().parse::<u32>() {
            Ok(k) if k <= MAX_DEGREE => k,
            _ => {
                return fail(
                    format!("exponent above {MAX_DEGREE} in a polynomial"),
                    span_of(&e),
                    "too large",
                )
            }
        },
        None => 1,
    };
    let span = span_of(&base);
    let (coefficient, base) = match base.as_rule() {
        Rule::juxt => {
            let mut parts = base.into_inner();
            let (Some(k), Some(v)) = (parts.next(), parts.next()) else {
                return Ok(Poly::default());
            };
            (Poly::constant(Rat::int(literal(&k)?)), atom(v, names)?)
        }
        _ => (Poly::constant(Rat::int(1)), atom(base, names)?),
    };
    let mut r = coefficient;
    for _ in 0..exponent {
        r = r.mul(&base, span)?;
    }
    Ok(r)
}

/// An integer literal, a name, a parenthesized polynomial, or a call
/// (refused: `floor` and other functions are not polynomial).
fn atom(p: Pair<Rule>, names: &mut BTreeMap<String, Span>) -> Result<Poly, PolyError> {
    let span = span_of(&p);
    match p.as_rule() {
        Rule::int_lit => Ok(Poly::constant(Rat::int(literal(&p)?))),
        Rule::ident => {
            names.entry(p.as_str().to_string()).or_insert(span);
            Ok(Poly::var(p.as_str()))
        }
        Rule::pexpr => sum(p, names),
        _ => {
            let name: String = p
                .as_str()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            fail(
                format!("unsupported: `{name}` in a polynomial"),
                span,
                "only + - * / ^ on integers, indices and parameters",
            )
        }
    }
}

fn literal(p: &Pair<Rule>) -> Result<i128, PolyError> {
    match p.as_str().parse::<i64>() {
        Ok(v) => Ok(i128::from(v)),
        Err(_) => fail(
            "integer literal does not fit in 64 bits",
            span_of(p),
            "too large",
        ),
    }
}

/// `T(a, j) = S(a, j)·j! mod d` for `a, j <= max` (`S` the Stirling numbers
/// of the second kind): `x^a = Σ_j T(a, j)·C(x, j)`. Recurrence
/// `T(a, j) = j·(T(a-1, j) + T(a-1, j-1))`, `T(0, 0) = 1`.
fn stirling_table(max: usize, d: i128) -> Vec<Vec<i128>> {
    let mut t = vec![vec![0i128; max + 1]; max + 1];
    t[0][0] = 1 % d;
    for a in 1..=max {
        for j in 1..=a {
            let j128 = j as i128;
            t[a][j] = (j128 * ((t[a - 1][j] + t[a - 1][j - 1]) % d)) % d;
        }
    }
    t
}

/// Whether `Σ q_m·m / d` is an integer at every integer point. In the basis
/// of products of binomials `Π C(x_k, j_k)` (in which a polynomial is
/// integer-valued exactly when its coefficients are integers), the
/// coefficient of `J` is `Σ_m q_m·Π_k T(a_mk, j_k) / d`; it is an integer
/// when the sum is 0 mod `d`. Only `J <= a_m` (componentwise, for some `m`)
/// can be non-zero. `None` when more than [`MAX_CHECKS`] coefficients
/// would be examined.
fn integer_valued(terms: &[(Vec<u32>, i128)], d: i128) -> Option<bool> {
    if d == 1 {
        return Some(true);
    }
    let max = terms
        .iter()
        .flat_map(|(a, _)| a.iter().copied())
        .max()
        .unwrap_or(0) as usize;
    let t = stirling_table(max, d);
    let mut seen: BTreeSet<Vec<u32>> = BTreeSet::new();
    for (a, _) in terms {
        // Every J <= a, odometer order.
        let mut j = vec![0u32; a.len()];
        loop {
            if seen.insert(j.clone()) && seen.len() > MAX_CHECKS {
                return None;
            }
            let Some(k) = (0..j.len()).find(|&k| j[k] < a[k]) else {
                break;
            };
            j[k] += 1;
            j[..k].iter_mut().for_each(|x| *x = 0);
        }
    }
    Some(seen.iter().all(|j| {
        let mut s: i128 = 0;
        for (a, q) in terms {
            let mut w: i128 = q.rem_euclid(d);
            for (k, &jk) in j.iter().enumerate() {
                let (ak, jk) = (a[k] as usize, jk as usize);
                w = if jk > ak { 0 } else { (w * t[ak][jk]) % d };
            }
            s = (s + w) % d;
        }
        s == 0
    }))
}

/// The polynomial as ordinary arithmetic on the values `leaf(name)` of its
/// names (all nodes at `span`): `q`, `q / d` (int) or `q / d.0` (float), as
/// the module comment says.
pub(super) fn to_expr(
    p: &Poly,
    span: Span,
    leaf: &dyn Fn(&str) -> Expr,
) -> Result<Expr, PolyError> {
    let mk = |kind: ExprKind| Expr { kind, span };
    let bin = |op: BinOp, a: Expr, b: Expr| {
        mk(ExprKind::Binary {
            op,
            lhs: Box::new(a),
            rhs: Box::new(b),
        })
    };
    let mut d: i128 = 1;
    for c in p.terms.values() {
        let g = gcd(d, c.den).max(1);
        d = match (d / g).checked_mul(c.den) {
            Some(v) if v <= MAX_DEN => v,
            _ => return fail("polynomial denominator above 2^53", span, "too large"),
        };
    }
    let vars: Vec<&String> = p
        .terms
        .keys()
        .flat_map(|m| m.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut terms: Terms = Vec::new();
    let mut sum: Option<Expr> = None;
    for (m, c) in &p.terms {
        let Some(q) = c.num.checked_mul(d / c.den) else {
            return overflow(span);
        };
        let (Ok(q64), Some(mag)) = (
            i64::try_from(q),
            i64::try_from(q).ok().and_then(i64::checked_abs),
        ) else {
            return overflow(span);
        };
        terms.push((
            vars.iter()
                .map(|v| m.get(*v).copied().unwrap_or(0))
                .collect(),
            i128::from(q64),
        ));
        let mut factors = m
            .iter()
            .flat_map(|(v, &e)| (0..e).map(move |_| v.as_str()))
            .map(leaf);
        let term = match factors.next() {
            None => mk(ExprKind::Int(mag)),
            Some(first) => {
                let product = factors.fold(first, |a, b| bin(BinOp::Mul, a, b));
                if mag == 1 {
                    product
                } else {
                    bin(BinOp::Mul, mk(ExprKind::Int(mag)), product)
                }
            }
        };
        sum = Some(match sum {
            None if q64 < 0 => mk(ExprKind::Unary {
                op: UnOp::Neg,
                operand: Box::new(term),
            }),
            None => term,
            Some(s) if q64 < 0 => bin(BinOp::Sub, s, term),
            Some(s) => bin(BinOp::Add, s, term),
        });
    }
    let q = sum.unwrap_or_else(|| mk(ExprKind::Int(0)));
    if d == 1 {
        return Ok(q);
    }
    // `d <= 2^53`: it fits an i64 and converts to f64 exactly.
    let d64 = i64::try_from(d).unwrap_or(i64::MAX);
    match integer_valued(&terms, d) {
        Some(true) => Ok(bin(BinOp::Div, q, mk(ExprKind::Int(d64)))),
        Some(false) => Ok(bin(BinOp::Div, q, mk(ExprKind::Float(d64 as f64)))),
        None => fail(
            "polynomial too large to decide whether it is integer-valued",
            span,
            "too large",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n/d · v^e` as a polynomial.
    fn term(v: &str, e: u32, n: i128, d: i128) -> Poly {
        let mut p = Poly::default();
        let m = Monomial::from([(v.to_string(), e)]);
        p.add_term(m, Rat::new(n, d).unwrap()).unwrap();
        p
    }

    /// Brute force: `Σ q_m·m(x) ≡ 0 mod d` for every `x` in `[-6, 6]^n`.
    fn brute(terms: &[(Vec<u32>, i128)], d: i128, n: usize) -> bool {
        let mut x = vec![-6i128; n];
        loop {
            let v: i128 = terms
                .iter()
                .map(|(a, q)| {
                    q * a
                        .iter()
                        .zip(&x)
                        .map(|(&e, &xi)| xi.pow(e))
                        .product::<i128>()
                })
                .sum();
            if v.rem_euclid(d) != 0 {
                return false;
            }
            let Some(k) = (0..n).find(|&k| x[k] < 6) else {
                return true;
            };
            x[k] += 1;
            x[..k].iter_mut().for_each(|y| *y = -6);
        }
    }

    #[test]
    fn integer_valuedness_matches_brute_force() {
        // (exponents over [i, j], numerator), denominator.
        let cases: Vec<(Terms, i128)> = vec![
            (vec![(vec![2, 0], 1), (vec![1, 0], 1)], 2),  // i(i+1)/2
            (vec![(vec![1, 0], 1)], 2),                   // i/2
            (vec![(vec![3, 0], 1), (vec![1, 0], -1)], 6), // (i^3 - i)/6
            (vec![(vec![3, 0], 1), (vec![1, 0], 1)], 6),  // (i^3 + i)/6
            (vec![(vec![1, 1], 1), (vec![2, 0], 1)], 2),  // (ij + i^2)/2
            (vec![(vec![2, 1], 1), (vec![1, 1], 1)], 2),  // (i^2 j + i j)/2
            (vec![(vec![2, 2], 1), (vec![0, 0], 3)], 4),  // (i^2 j^2 + 3)/4
        ];
        for (terms, d) in cases {
            assert_eq!(
                integer_valued(&terms, d),
                Some(brute(&terms, d, 2)),
                "{terms:?} / {d}"
            );
        }
    }

    #[test]
    fn expansion_is_exact() {
        // (i + 1)^2 - i^2 - 2i = 1
        let i = Poly::var("i");
        let one = Poly::constant(Rat::int(1));
        let s = Span::default();
        let ip1 = i.add_scaled(&one, Rat::int(1)).unwrap();
        let sq = ip1.mul(&ip1, s).unwrap();
        let i2 = i.mul(&i, s).unwrap();
        let r = sq
            .add_scaled(&i2, Rat::int(-1))
            .unwrap()
            .add_scaled(&i, Rat::int(-2))
            .unwrap();
        assert_eq!(r.as_constant(), Some(Rat::int(1)));
        let half = term("i", 1, 1, 2);
        assert_eq!(half.terms.values().next(), Some(&Rat { num: 1, den: 2 }));
    }
}
