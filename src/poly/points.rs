//! Bounding boxes and lexicographic point scanning of a [`Set`] for
//! concrete parameter values, with a prefix of outer dimensions fixed per
//! call, by exact Fourier–Motzkin elimination on integer rows (`i128`,
//! checked; overflow is an error).
//!
//! This is the fast concrete-parameter enumerator (the interpreter scans
//! reduction bodies and categorical domains with it; array sizes are its
//! bounding boxes). Math: for one conjunction `P = { y : A y + c >= 0 }`
//! (parameters substituted; equalities are two inequalities) and variables
//! ordered `y_0, ..., y_{n-1}`, level `k` holds the rows of `P` with
//! `y_{k+1..}` eliminated (the rational projection, tightened by dividing
//! each row by the gcd of its variable coefficients and flooring the
//! constant, which keeps every integer point). Scanning fixes
//! `y_0..y_{k-1}` and runs `y_k` from the largest lower bound
//! `ceil(-(rest)/a)` (`a > 0`) to the smallest upper bound
//! `floor(rest/(-a))` (`a < 0`) of the level-`k` rows. Every point produced
//! satisfies every row of `P` (the last level is `P` itself and rows free
//! of `y_k` are carried to lower levels), and every integer point of `P` is
//! produced (projections contain the projected points), so the scan is
//! exact; the order is lexicographic. A union is scanned piece by piece and
//! merged (sorted, duplicates removed).
//!
//! The bounding box is exact over the integers (the same as
//! [`Set::bounding_box`], without the solver): per piece and dimension
//! `k`, the rational bounds of `y_k` (all other columns eliminated) are
//! tightened by stepping inward until some integer point of the piece has
//! that value of `y_k` (an early-exit scan with `y_k` first); the box of a
//! union is the hull of its pieces' boxes.
//!
//! Owns: [`PointScanner`], [`bounding_box`], [`points`] and their errors
//! ([`PointScanError`]). Must not know about: what the points are used for.

use super::constraint::{floor_div, gcd128 as gcd, IntRange};
use super::multi_aff::MultiAff;
use super::set::Set;
use std::collections::{BTreeSet, HashSet};
use thiserror::Error;

/// Largest number of values tried when tightening one bounding-box
/// dimension to the integer points (a safeguard against integer-empty
/// slivers of huge rational extent; exceeding it is `TooComplex`).
pub const MAX_TIGHTEN_STEPS: u32 = 1_000_000;

/// Largest number of rows one elimination step may produce.
pub const MAX_ROWS: usize = 4096;

/// Why a set could not be scanned for the given parameter values.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PointScanError {
    /// Integer overflow while computing bounds.
    #[error("integer overflow while computing domain bounds")]
    Overflow,
    /// A dimension (named) has no finite bound.
    #[error("unbounded in dimension {0}")]
    Unbounded(String),
    /// Too many intermediate constraints (Fourier–Motzkin blow-up).
    #[error("too many constraints after elimination")]
    TooComplex,
    /// A fixed prefix of the wrong length.
    #[error("point {point:?} has {found} coordinates, expected {expected}")]
    Arity {
        point: Vec<i64>,
        expected: usize,
        found: usize,
    },
    /// Fewer parameter values than the set has parameters.
    #[error("missing value of parameter {0}")]
    MissingParam(usize),
    /// A projection whose space does not match the set.
    #[error("{0}")]
    Invalid(String),
}

type R<T> = Result<T, PointScanError>;

/// `Σ a_k y_k + c >= 0`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Row {
    a: Vec<i128>,
    c: i128,
}

impl Row {
    /// Divides by the gcd of the variable coefficients (flooring the
    /// constant): same integer points.
    fn normalize(mut self) -> Row {
        let g = self.a.iter().fold(0, |g, &x| gcd(g, x));
        if g > 1 {
            for x in &mut self.a {
                *x /= g;
            }
            self.c = floor_div(self.c, g);
        }
        self
    }
    fn is_constant(&self) -> bool {
        self.a.iter().all(|&x| x == 0)
    }
    fn negated(&self) -> Row {
        Row {
            a: self.a.iter().map(|x| -x).collect(),
            c: -self.c,
        }
    }
}

/// The row of a poly row `[params, dims, constant]` with the parameters
/// substituted, its dimensions laid out at columns `offset..` of `n_cols`.
fn subst_row(row: &[i64], params: &[i64], np: usize, n_cols: usize, offset: usize) -> R<Row> {
    let nd = row.len() - 1 - np;
    if offset + nd > n_cols {
        return Err(PointScanError::Invalid(format!(
            "constraint has {nd} index coefficients, expected fewer"
        )));
    }
    let mut a = vec![0i128; n_cols];
    for (k, &x) in row[np..np + nd].iter().enumerate() {
        a[offset + k] = x as i128;
    }
    let mut c = row[np + nd] as i128;
    for (k, &p) in row[..np].iter().enumerate() {
        let v = params
            .get(k)
            .copied()
            .ok_or(PointScanError::MissingParam(k))?;
        c = c
            .checked_add(
                (p as i128)
                    .checked_mul(v as i128)
                    .ok_or(PointScanError::Overflow)?,
            )
            .ok_or(PointScanError::Overflow)?;
    }
    Ok(Row { a, c })
}

/// The rows of every piece of `set` with the parameters substituted, laid
/// out at columns `offset..offset + dims` of `n_cols` columns (an
/// equality is two rows), not yet cleaned.
fn piece_rows(set: &Set, params: &[i64], n_cols: usize, offset: usize) -> R<Vec<Vec<Row>>> {
    let np = set.space().n_params();
    set.pieces()
        .iter()
        .map(|b| {
            let mut rows = Vec::with_capacity(2 * b.eqs().len() + b.ineqs().len());
            for e in b.eqs() {
                let r = subst_row(e, params, np, n_cols, offset)?;
                rows.push(r.negated());
                rows.push(r);
            }
            for i in b.ineqs() {
                rows.push(subst_row(i, params, np, n_cols, offset)?);
            }
            Ok(rows)
        })
        .collect()
}

/// Normalizes, removes duplicates and trivially true rows; `None` when a
/// constant row is false.
fn clean(rows: Vec<Row>) -> R<Option<Vec<Row>>> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for r in rows {
        let r = r.normalize();
        if r.is_constant() {
            if r.c < 0 {
                return Ok(None);
            }
            continue;
        }
        if seen.insert(r.clone()) {
            out.push(r);
        }
    }
    if out.len() > MAX_ROWS {
        return Err(PointScanError::TooComplex);
    }
    Ok(Some(out))
}

/// Fourier–Motzkin elimination of column `k`; `None` when infeasible.
fn eliminate(rows: &[Row], k: usize) -> R<Option<Vec<Row>>> {
    let ov = || PointScanError::Overflow;
    let mut out = Vec::new();
    let (mut pos, mut neg) = (Vec::new(), Vec::new());
    for r in rows {
        match r.a[k].signum() {
            0 => out.push(r.clone()),
            1 => pos.push(r),
            _ => neg.push(r),
        }
    }
    if pos.len().saturating_mul(neg.len()) > MAX_ROWS * 4 {
        return Err(PointScanError::TooComplex);
    }
    for p in &pos {
        for n in &neg {
            let (fp, fnn) = (-n.a[k], p.a[k]); // both > 0
            let mut a = Vec::with_capacity(p.a.len());
            for j in 0..p.a.len() {
                let v = p.a[j]
                    .checked_mul(fp)
                    .and_then(|x| x.checked_add(n.a[j].checked_mul(fnn)?))
                    .ok_or_else(ov)?;
                a.push(v);
            }
            let c =
                p.c.checked_mul(fp)
                    .and_then(|x| x.checked_add(n.c.checked_mul(fnn)?))
                    .ok_or_else(ov)?;
            out.push(Row { a, c });
        }
    }
    clean(out)
}

/// Bounds of column `k` from the rows with a non-zero coefficient on it,
/// the columns `< k` having the values `prefix`; `(lo, hi)` as `i128`
/// (`None` = unbounded on that side).
fn bounds(rows: &[Row], k: usize, prefix: &[i64]) -> R<(Option<i128>, Option<i128>)> {
    let ov = || PointScanError::Overflow;
    let mut range = IntRange::default();
    for r in rows {
        let a = r.a[k];
        if a == 0 {
            continue;
        }
        let mut rest = r.c;
        for (j, &v) in prefix.iter().enumerate().take(k) {
            if r.a[j] != 0 {
                rest = rest
                    .checked_add(r.a[j].checked_mul(v as i128).ok_or_else(ov)?)
                    .ok_or_else(ov)?;
            }
        }
        range.add_ineq(a, rest);
    }
    Ok((range.lo, range.hi))
}

fn to_i64(v: i128) -> R<i64> {
    i64::try_from(v).map_err(|_| PointScanError::Overflow)
}

fn dim_name(set: &Set, k: usize) -> String {
    set.space()
        .output
        .dims
        .get(k)
        .cloned()
        .unwrap_or_else(|| k.to_string())
}

/// The integer bounding box `[(lo_k, hi_k)]` of `set` for `params`:
/// `lo_k = min { y_k : y ∈ set ∩ Z^n }`, `hi_k` the max (exact, see the
/// module comment); `Ok(None)` when the set has no integer point; an error
/// when it is unbounded.
pub fn bounding_box(set: &Set, params: &[i64]) -> R<Option<Vec<(i64, i64)>>> {
    let n = set.space().n_dims();
    let mut hull: Option<Vec<(i64, i64)>> = None;
    'pieces: for (piece, raw) in set.pieces().iter().zip(piece_rows(set, params, n, 0)?) {
        let Some(rows) = clean(raw)? else {
            continue;
        };
        let single = Set::from_basic(piece.clone());
        let mut bx = Vec::with_capacity(n);
        for k in 0..n {
            // Rational bounds of y_k: eliminate every other column.
            let mut r = rows.clone();
            for j in 0..n {
                if j != k {
                    match eliminate(&r, j)? {
                        Some(e) => r = e,
                        None => continue 'pieces,
                    }
                }
            }
            let (lo, hi) = bounds(&r, k, &[])?;
            let unb = || PointScanError::Unbounded(dim_name(set, k));
            let (lo, hi) = (to_i64(lo.ok_or_else(unb)?)?, to_i64(hi.ok_or_else(unb)?)?);
            if lo > hi {
                continue 'pieces;
            }
            // Integer tightening: the first values from each end that some
            // integer point of the piece takes (y_k scanned first).
            let s = PointScanner::permuted(&single, k, params)?;
            let mut steps = 0u32;
            let mut step = || {
                steps += 1;
                if steps > MAX_TIGHTEN_STEPS {
                    Err(PointScanError::TooComplex)
                } else {
                    Ok(())
                }
            };
            let mut ilo = None;
            let mut v = lo;
            while v <= hi {
                step()?;
                if s.has_point(&[v])? {
                    ilo = Some(v);
                    break;
                }
                v += 1;
            }
            let Some(ilo) = ilo else {
                continue 'pieces;
            };
            let mut ihi = hi;
            while ihi > ilo && !s.has_point(&[ihi])? {
                step()?;
                ihi -= 1;
            }
            bx.push((ilo, ihi));
        }
        hull = Some(match hull {
            None => bx,
            Some(h) => h
                .iter()
                .zip(&bx)
                .map(|(&(l1, h1), &(l2, h2))| (l1.min(l2), h1.max(h2)))
                .collect(),
        });
    }
    Ok(hull)
}

/// All integer points of `set` for `params`, in lexicographic order.
pub fn points(set: &Set, params: &[i64]) -> R<Vec<Vec<i64>>> {
    PointScanner::new(set, 0, params)?.points(&[])
}

/// The elimination levels of one conjunction.
#[derive(Debug, Clone)]
struct PiecePlan {
    /// Rows over the fixed columns only (checked before scanning).
    fixed_rows: Vec<Row>,
    /// `levels[k]`: rows with the free columns after `k` eliminated.
    levels: Vec<Vec<Row>>,
}

/// A precomputed scanner of the integer points of a set (for fixed
/// parameter values), in lexicographic order, with some leading
/// coordinates fixed per call.
#[derive(Debug, Clone)]
pub struct PointScanner {
    n_fixed: usize,
    n_free: usize,
    /// Names of the free coordinates (for `Unbounded`).
    dim_names: Vec<String>,
    pieces: Vec<PiecePlan>,
}

impl PointScanner {
    /// Scans `{ y_{m..} : (x, y_{m..}) ∈ set }` for a fixed prefix `x` of
    /// the set's first `m = n_fixed` dimensions (`n_fixed = 0`: the whole
    /// set).
    pub fn new(set: &Set, n_fixed: usize, params: &[i64]) -> R<PointScanner> {
        let n = set.space().n_dims();
        let n_fixed = n_fixed.min(n);
        let dims = &set.space().output.dims;
        let names = dims.get(n_fixed..).unwrap_or_default().to_vec();
        PointScanner::from_pieces(piece_rows(set, params, n, 0)?, n_fixed, n, names)
    }

    /// [`PointScanner::new`] with one fixed coordinate, dimension `k` of
    /// `set`, the others in order after it.
    fn permuted(set: &Set, k: usize, params: &[i64]) -> R<PointScanner> {
        let n = set.space().n_dims();
        let perm = |r: Row| -> Row {
            let mut a = Vec::with_capacity(n);
            a.push(r.a[k]);
            a.extend(
                r.a.iter()
                    .enumerate()
                    .filter(|(j, _)| *j != k)
                    .map(|(_, &x)| x),
            );
            Row { a, c: r.c }
        };
        let pieces = piece_rows(set, params, n, 0)?
            .into_iter()
            .map(|p| p.into_iter().map(perm).collect())
            .collect();
        let names = (0..n)
            .filter(|&j| j != k)
            .map(|j| dim_name(set, j))
            .collect();
        PointScanner::from_pieces(pieces, 1.min(n), n, names)
    }

    /// Scans `{ y ∈ set : proj(y) = x }` for a fixed outer point `x` (a
    /// reduction body's points for one result element); `proj` is a
    /// function on the set's space, one output per coordinate of `x`.
    pub fn for_projection(set: &Set, proj: &MultiAff, params: &[i64]) -> R<PointScanner> {
        let m = proj.n_out();
        let d = set.space().n_dims();
        let n = m + d;
        let np = set.space().n_params();
        let mut links = Vec::new();
        for (i, f) in proj.rows().iter().enumerate() {
            if f.len() != np + d + 1 {
                return Err(PointScanError::Invalid(format!(
                    "projection row has {} entries, expected {}",
                    f.len(),
                    np + d + 1
                )));
            }
            // proj_i(y) - x_i == 0, as two rows.
            let mut r = subst_row(f, params, np, n, m)?;
            r.a[i] = -1;
            links.push(r.negated());
            links.push(r);
        }
        let pieces = piece_rows(set, params, n, m)?
            .into_iter()
            .map(|mut rows| {
                rows.extend(links.iter().cloned());
                rows
            })
            .collect();
        PointScanner::from_pieces(pieces, m, n, set.space().output.dims.to_vec())
    }

    fn from_pieces(
        pieces: Vec<Vec<Row>>,
        n_fixed: usize,
        n: usize,
        dim_names: Vec<String>,
    ) -> R<PointScanner> {
        let mut plans = Vec::new();
        for rows in pieces {
            if let Some(rows) = clean(rows)? {
                if let Some(p) = plan(rows, n_fixed, n)? {
                    plans.push(p);
                }
            }
        }
        Ok(PointScanner {
            n_fixed,
            n_free: n - n_fixed,
            dim_names,
            pieces: plans,
        })
    }

    /// Number of fixed leading coordinates expected by [`PointScanner::points`].
    pub fn n_fixed(&self) -> usize {
        self.n_fixed
    }

    /// The integer points (free coordinates only) for the fixed values
    /// `fixed`, in lexicographic order without duplicates.
    pub fn points(&self, fixed: &[i64]) -> R<Vec<Vec<i64>>> {
        if fixed.len() != self.n_fixed {
            return Err(PointScanError::Arity {
                point: fixed.to_vec(),
                expected: self.n_fixed,
                found: fixed.len(),
            });
        }
        if self.pieces.len() == 1 {
            let mut out = Vec::new();
            self.scan_piece(&self.pieces[0], fixed, &mut out, false)?;
            return Ok(out);
        }
        let mut all = BTreeSet::new();
        for p in &self.pieces {
            let mut out = Vec::new();
            self.scan_piece(p, fixed, &mut out, false)?;
            all.extend(out);
        }
        Ok(all.into_iter().collect())
    }

    /// True when some integer point has the fixed values `fixed`.
    pub fn has_point(&self, fixed: &[i64]) -> R<bool> {
        let mut out = Vec::new();
        for p in &self.pieces {
            self.scan_piece(p, fixed, &mut out, true)?;
            if !out.is_empty() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Appends the points of one piece to `out` (only the first one when
    /// `first_only`).
    fn scan_piece(
        &self,
        p: &PiecePlan,
        fixed: &[i64],
        out: &mut Vec<Vec<i64>>,
        first_only: bool,
    ) -> R<()> {
        let ov = || PointScanError::Overflow;
        for r in &p.fixed_rows {
            let mut v = r.c;
            for (j, &x) in fixed.iter().enumerate() {
                v = v
                    .checked_add(r.a[j].checked_mul(x as i128).ok_or_else(ov)?)
                    .ok_or_else(ov)?;
            }
            if v < 0 {
                return Ok(());
            }
        }
        if self.n_free == 0 {
            out.push(Vec::new());
            return Ok(());
        }
        let m = self.n_fixed;
        let mut cur: Vec<i64> = fixed.to_vec();
        cur.resize(m + self.n_free, 0);
        let mut his = vec![0i64; self.n_free];
        // Depth-first scan: `k` is the free level being advanced.
        let mut k = 0usize;
        let mut descending = true;
        loop {
            if descending {
                let (lo, hi) = bounds(&p.levels[k], m + k, &cur)?;
                let unb = || {
                    PointScanError::Unbounded(
                        self.dim_names
                            .get(k)
                            .cloned()
                            .unwrap_or_else(|| k.to_string()),
                    )
                };
                let (lo, hi) = (lo.ok_or_else(unb)?, hi.ok_or_else(unb)?);
                if lo <= hi {
                    cur[m + k] = to_i64(lo)?;
                    his[k] = to_i64(hi)?;
                    if k + 1 == self.n_free {
                        out.push(cur[m..].to_vec());
                        if first_only {
                            return Ok(());
                        }
                        descending = false;
                    } else {
                        k += 1;
                    }
                    continue;
                }
                descending = false;
                if k == 0 {
                    return Ok(());
                }
                k -= 1;
            }
            // Advance level k (its current value was already used).
            if cur[m + k] < his[k] {
                cur[m + k] += 1;
                if k + 1 == self.n_free {
                    out.push(cur[m..].to_vec());
                    if first_only {
                        return Ok(());
                    }
                } else {
                    k += 1;
                    descending = true;
                }
            } else if k == 0 {
                return Ok(());
            } else {
                k -= 1;
            }
        }
    }
}

/// Builds the elimination levels of one conjunction over `n` columns, the
/// first `n_fixed` fixed; `None` when it is empty.
fn plan(rows: Vec<Row>, n_fixed: usize, n: usize) -> R<Option<PiecePlan>> {
    let n_free = n - n_fixed;
    let mut levels = vec![Vec::new(); n_free];
    let mut cur = rows;
    for k in (0..n_free).rev() {
        levels[k] = cur.clone();
        match eliminate(&cur, n_fixed + k)? {
            Some(e) => cur = e,
            None => return Ok(None),
        }
    }
    Ok(Some(PiecePlan {
        fixed_rows: cur,
        levels,
    }))
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::poly::{BasicSet, Space, Tuple};
    use proptest::prelude::*;

    /// A constraint `idx·y + par·p + c (>= | =) 0` of the tests.
    #[derive(Debug, Clone)]
    struct AffConstraint {
        idx: Vec<i64>,
        par: Vec<i64>,
        c: i64,
        eq: bool,
    }

    /// A test domain: dimension count and pieces, with one parameter.
    #[derive(Debug, Clone)]
    struct Domain {
        n: usize,
        pieces: Vec<Vec<AffConstraint>>,
    }

    impl Domain {
        fn n_dims(&self) -> usize {
            self.n
        }
        fn set(&self, np: usize) -> Set {
            let names: Vec<String> = (0..self.n).map(|i| format!("i{i}")).collect();
            let pnames: Vec<String> = (0..np).map(|i| format!("p{i}")).collect();
            let space = Space::set(&pnames, &names);
            let pieces = self
                .pieces
                .iter()
                .map(|p| {
                    let mut b = BasicSet::universe(space.clone());
                    for c in p {
                        let mut row = vec![0; np];
                        row[..c.par.len()].copy_from_slice(&c.par);
                        row.extend_from_slice(&c.idx);
                        row.push(c.c);
                        if c.eq {
                            b.add_eq(row).unwrap();
                        } else {
                            b.add_ineq(row).unwrap();
                        }
                    }
                    b
                })
                .collect();
            Set::from_basics(space, pieces).unwrap()
        }
        fn contains(&self, point: &[i64], params: &[i64]) -> bool {
            self.set(params.len()).contains(params, point)
        }
    }

    /// `idx·y + par·p + c` as a one-output function of the test domain.
    fn proj_of(idx: &[i64], par: &[i64], n: usize) -> MultiAff {
        let pnames: Vec<String> = (0..par.len()).map(|i| format!("p{i}")).collect();
        let names: Vec<String> = (0..n).map(|i| format!("i{i}")).collect();
        let mut row = par.to_vec();
        row.extend_from_slice(idx);
        row.push(0);
        MultiAff::new(
            Space::set(&pnames, &names),
            Tuple::anonymous("o", 1),
            vec![row],
        )
        .unwrap()
    }

    fn points(d: &Domain, params: &[i64], _name: &str) -> R<Vec<Vec<i64>>> {
        super::points(&d.set(params.len()), params)
    }
    fn bounding_box(d: &Domain, params: &[i64], _name: &str) -> R<Option<Vec<(i64, i64)>>> {
        super::bounding_box(&d.set(params.len()), params)
    }

    fn ge(idx: Vec<i64>, par: Vec<i64>, c: i64) -> AffConstraint {
        AffConstraint {
            idx,
            par,
            c,
            eq: false,
        }
    }
    fn eq(idx: Vec<i64>, par: Vec<i64>, c: i64) -> AffConstraint {
        AffConstraint {
            idx,
            par,
            c,
            eq: true,
        }
    }
    fn dom(n: usize, pieces: Vec<Vec<AffConstraint>>) -> Domain {
        Domain { n, pieces }
    }

    #[test]
    fn triangle() {
        // { [i, j] : 0 <= j <= i < N }
        let d = dom(
            2,
            vec![vec![
                ge(vec![0, 1], vec![0], 0),
                ge(vec![1, -1], vec![0], 0),
                ge(vec![-1, 0], vec![1], -1),
            ]],
        );
        let pts = points(&d, &[4], "T").unwrap();
        assert_eq!(pts.len(), 10);
        assert_eq!(pts[0], vec![0, 0]);
        assert_eq!(pts[9], vec![3, 3]);
        assert_eq!(
            bounding_box(&d, &[4], "T").unwrap(),
            Some(vec![(0, 3), (0, 3)])
        );
        assert_eq!(bounding_box(&d, &[0], "T").unwrap(), None);
        assert!(points(&d, &[0], "T").unwrap().is_empty());
    }

    #[test]
    fn unbounded_is_an_error() {
        let d = dom(1, vec![vec![ge(vec![1], vec![], 0)]]);
        assert!(matches!(
            bounding_box(&d, &[], "U"),
            Err(PointScanError::Unbounded(_))
        ));
        assert!(points(&d, &[], "U").is_err());
    }

    #[test]
    fn projection_scan() {
        // body { [i, j] : 0 <= j <= i < 5 }, proj (i, j -> i): x = 3 gives j = 0..=3
        let d = dom(
            2,
            vec![vec![
                ge(vec![0, 1], vec![], 0),
                ge(vec![1, -1], vec![], 0),
                ge(vec![-1, 0], vec![], 4),
            ]],
        );
        let s = PointScanner::for_projection(&d.set(0), &proj_of(&[1, 0], &[], 2), &[]).unwrap();
        let pts = s.points(&[3]).unwrap();
        assert_eq!(pts, vec![vec![3, 0], vec![3, 1], vec![3, 2], vec![3, 3]]);
        assert!(s.points(&[7]).unwrap().is_empty());
        assert!(s.points(&[]).is_err());
    }

    #[test]
    fn scalar_domain() {
        let d = dom(0, vec![vec![]]);
        assert_eq!(points(&d, &[], "S").unwrap(), vec![Vec::<i64>::new()]);
        assert_eq!(bounding_box(&d, &[], "S").unwrap(), Some(vec![]));
        let e = dom(0, vec![]);
        assert!(points(&e, &[], "S").unwrap().is_empty());
    }

    fn arb_con(n: usize) -> impl Strategy<Value = AffConstraint> {
        (
            proptest::collection::vec(-3i64..=3, n),
            -3i64..=3,
            -6i64..=6,
            prop::bool::weighted(0.15),
        )
            .prop_map(|(idx, p, c, is_eq)| {
                if is_eq {
                    eq(idx, vec![p], c)
                } else {
                    ge(idx, vec![p], c)
                }
            })
    }

    /// Pieces bounded by the box `[-5, 5]^n` plus random constraints.
    fn arb_domain() -> impl Strategy<Value = Domain> {
        (1usize..=3).prop_flat_map(|n| {
            proptest::collection::vec(proptest::collection::vec(arb_con(n), 0..4), 1..3).prop_map(
                move |pieces| {
                    let pieces = pieces
                        .into_iter()
                        .map(|mut p| {
                            for k in 0..n {
                                let mut a = vec![0; n];
                                a[k] = 1;
                                p.push(ge(a.clone(), vec![0], 5));
                                a[k] = -1;
                                p.push(ge(a, vec![0], 5));
                            }
                            p
                        })
                        .collect();
                    dom(n, pieces)
                },
            )
        })
    }

    fn brute(d: &Domain, params: &[i64]) -> Vec<Vec<i64>> {
        let n = d.n_dims();
        let mut out = Vec::new();
        let mut p = vec![-5i64; n];
        loop {
            if d.contains(&p, params) {
                out.push(p.clone());
            }
            let mut k = n;
            loop {
                if k == 0 {
                    return out;
                }
                k -= 1;
                if p[k] < 5 {
                    p[k] += 1;
                    break;
                }
                p[k] = -5;
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn scan_matches_brute_force(d in arb_domain(), par in -3i64..=3) {
            let want = brute(&d, &[par]);
            let got = points(&d, &[par], "P").unwrap();
            prop_assert_eq!(&got, &want);
            let bx = bounding_box(&d, &[par], "P").unwrap();
            match bx {
                None => prop_assert!(want.is_empty()),
                Some(b) => {
                    prop_assert!(!want.is_empty());
                    for (k, &(lo, hi)) in b.iter().enumerate() {
                        let min = want.iter().map(|p| p[k]).min();
                        let max = want.iter().map(|p| p[k]).max();
                        prop_assert_eq!((Some(lo), Some(hi)), (min, max));
                    }
                }
            }
        }

        #[test]
        fn prefix_scan_matches_brute_force(d in arb_domain(), par in -3i64..=3, x in -5i64..=5) {
            let want: Vec<Vec<i64>> = brute(&d, &[par])
                .into_iter()
                .filter(|p| p[0] == x)
                .map(|p| p[1..].to_vec())
                .collect();
            let s = PointScanner::new(&d.set(1), 1, &[par]).unwrap();
            prop_assert_eq!(s.points(&[x]).unwrap(), want);
        }

        #[test]
        fn projection_scan_matches_brute_force(d in arb_domain(), par in -3i64..=3,
                                               f in proptest::collection::vec(-2i64..=2, 3),
                                               x in -8i64..=8) {
            let n = d.n_dims();
            let proj = proj_of(&f[..n], &[0], n);
            let want: Vec<Vec<i64>> = brute(&d, &[par])
                .into_iter()
                .filter(|p| proj.eval(&[par], p).ok() == Some(vec![x]))
                .collect();
            let s = PointScanner::for_projection(&d.set(1), &proj, &[par]).unwrap();
            prop_assert_eq!(s.points(&[x]).unwrap(), want);
        }
    }
}
