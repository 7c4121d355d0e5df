//! Step 2 of scanning: a statement's domain in time space. The schedule
//! rows are chosen ([`choose_rows`]) and inverted, and the domain is
//! mapped to the rational polyhedron of its time points with the
//! integrality guards of the iterators ([`TimeStmt`]); its projections
//! onto the outer time dimensions are the rational shadows of
//! `poly::bounds`.
//!
//! Must not know about: loop AST statements, expressions.

use super::domains::*;
use super::matcher::Action;
use super::*;

/// A statement in time space.
pub(super) struct TimeStmt<'a> {
    pub(super) index: usize,
    pub(super) action: Action<'a>,
    /// `i_j = (n_j · (t, p, 1)) / den_j`: per iterator a numerator row
    /// `n_j` over `(t, p, 1)` and a denominator `den_j ≥ 1` in lowest
    /// terms. At the points of the time-space domain that are images of
    /// statement instances the division is exact; at the other integer
    /// points of the (rational) time-space domain some division is not.
    pub(super) iters: Vec<(Vec<i64>, i64)>,
    /// `proj[k]`: projection onto `(t_0..t_{k-1}, p)` (rows over `(t, p, 1)`),
    /// `proj[n_t]` the exact time-space domain.
    pub(super) proj: Vec<System>,
    /// Scalar value per dimension (when the row is constant).
    pub(super) scalar: Vec<Option<i64>>,
    pub(super) param_guards: Vec<(Vec<i64>, bool)>,
    /// A bounding box of the statement's domain (per iterator, affine in
    /// the parameters) when some `den_j > 1`: extra bounds of the one-trip
    /// loops, implied at every instance, that let the JIT's interval
    /// analysis bound the iterators.
    pub(super) ibox: Option<Vec<Dim>>,
}

/// Upper limit on the number of row subsets [`choose_rows`] examines.
pub(super) const MAX_ROW_SUBSETS: usize = 4096;

/// Chooses `d` schedule rows (indices into `rows`, ascending) whose
/// iterator parts form a non-singular matrix `M`, minimizing `|det M|`
/// (1 = unimodular: the statement's iterators are integer affine functions
/// of the time dimensions). Among equal `|det M|` the lexicographically
/// first subset wins; that is the greedy choice of the first independent
/// rows when it is optimal. Subsets are enumerated in lexicographic order
/// (at most [`MAX_ROW_SUBSETS`] of them, after the greedy one). `None`
/// when the rows have rank `< d`.
pub(super) fn choose_rows(rows: &[Vec<i64>], d: usize) -> R<Option<Vec<usize>>> {
    let part =
        |s: &[usize]| -> Vec<Vec<i64>> { s.iter().map(|&k| rows[k][..d].to_vec()).collect() };
    // Greedy: the first independent rows (the lexicographically first basis).
    let mut chosen: Vec<usize> = Vec::new();
    for k in 0..rows.len() {
        if chosen.len() == d {
            break;
        }
        chosen.push(k);
        let m = part(&chosen);
        if bounds::rank(&m).map_err(arith)? < chosen.len() {
            chosen.pop();
        }
    }
    if chosen.len() < d {
        return Ok(None);
    }
    let mut best_det = bounds::det(&part(&chosen)).map(i128::unsigned_abs);
    let mut best = chosen;
    if best_det == Some(1) {
        return Ok(Some(best));
    }
    let cand: Vec<usize> = (0..rows.len())
        .filter(|&k| rows[k][..d].iter().any(|&x| x != 0))
        .collect();
    let mut idx: Vec<usize> = (0..d).collect();
    let mut seen = 0;
    if cand.len() < d {
        return Ok(Some(best));
    }
    loop {
        seen += 1;
        if seen > MAX_ROW_SUBSETS {
            break;
        }
        let s: Vec<usize> = idx.iter().map(|&q| cand[q]).collect();
        if let Some(v) = bounds::det(&part(&s)).map(i128::unsigned_abs) {
            let better = v != 0 && best_det.is_none_or(|b| v < b);
            if better {
                best_det = Some(v);
                best = s;
                if v == 1 {
                    break;
                }
            }
        }
        // Next combination of d out of cand.len().
        let n = cand.len();
        let Some(pos) = (0..d).rev().find(|&q| idx[q] < n - d + q) else {
            break;
        };
        idx[pos] += 1;
        for q in pos + 1..d {
            idx[q] = idx[q - 1] + 1;
        }
    }
    Ok(Some(best))
}

#[allow(clippy::too_many_arguments)]
pub(super) fn time_space<'a>(
    index: usize,
    name: &str,
    d: usize,
    n_par: usize,
    n_t: usize,
    rows: &[Vec<i64>],
    dom: &System,
    action: Action<'a>,
) -> R<TimeStmt<'a>> {
    let Some(chosen) = choose_rows(rows, d)? else {
        return Err(ScanError::Unsupported(format!(
            "the schedule of statement {name} is not injective"
        )));
    };
    let mmat: Vec<Vec<i64>> = chosen.iter().map(|&k| rows[k][..d].to_vec()).collect();
    let Some(inv) = bounds::rational_inverse(&mmat).map_err(arith)? else {
        return Err(ScanError::Internal(format!(
            "the chosen schedule rows of statement {name} are singular"
        )));
    };
    let w = n_t + n_par + 1;
    // i_j = Σ_q inv[j][q]·(t_{chosen q} − rest_q(p, 1)), with
    // inv[j] = num_j / den_j: the numerator row over (t, p, 1).
    let mut iters = Vec::new();
    for (num, den) in inv.iter() {
        let mut r = vec![0i64; w];
        for (q, &c) in num.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let ck = chosen[q];
            r[ck] = ov(r[ck].checked_add(c))?;
            for p in 0..=n_par {
                let v = ov(c.checked_mul(rows[ck][d + p]))?;
                r[n_t + p] = ov(r[n_t + p].checked_sub(v))?;
            }
        }
        // Lowest terms: already so, since the t columns are num_j (kept as
        // a cheap guarantee of the invariant the one-trip loops rely on).
        let g = r.iter().fold(*den, |g, &x| bounds::gcd(g, x));
        let den = if g > 1 {
            r.iter_mut().for_each(|x| *x /= g);
            den / g
        } else {
            *den
        };
        iters.push((r, den));
    }
    // The common denominator L of the iterators: L·i(t) is integral.
    let mut l = 1i64;
    for (_, den) in &iters {
        l = bounds::lcm(l, *den).map_err(arith)?;
    }
    // L·row(i(t), p, 1) for a row over (i, p, 1) → a row over (t, p, 1).
    let subst = |row: &[i64]| -> R<Vec<i64>> {
        let mut out = vec![0i64; w];
        for (q, &c) in row[d..=d + n_par].iter().enumerate() {
            out[n_t + q] = ov(c.checked_mul(l))?;
        }
        for (j, (it, den)) in iters.iter().enumerate() {
            if row[j] == 0 {
                continue;
            }
            let f = ov(row[j].checked_mul(l / den))?;
            for q in 0..w {
                out[q] = ov(out[q].checked_add(ov(f.checked_mul(it[q]))?))?;
            }
        }
        Ok(out)
    };
    let mut full = System::new(n_t + n_par);
    for r in &dom.eqs {
        full.eqs.push(bounds::reduce_eq(subst(r)?));
    }
    for r in &dom.ineqs {
        full.ineqs.push(bounds::reduce_ineq(subst(r)?));
    }
    let mut scalar = Vec::new();
    for (k, r) in rows.iter().enumerate() {
        let is_const = r[..d + n_par].iter().all(|&x| x == 0);
        scalar.push(is_const.then_some(r[d + n_par]));
        if chosen.contains(&k) {
            continue;
        }
        // L·t_k − L·θ_k(i(t)) = 0
        let mut e = subst(r)?;
        e.iter_mut().for_each(|x| *x = -*x);
        e[k] = ov(e[k].checked_add(l))?;
        full.eqs.push(bounds::reduce_eq(e));
    }
    let ibox = if iters.iter().any(|(_, den)| *den > 1) {
        match symbolic_box(std::slice::from_ref(dom), d, n_par, name) {
            Ok(b) => Some(b),
            // No affine box: the one-trip loops get no extra bounds.
            Err(ScanError::Unsupported(_)) => None,
            Err(e) => return Err(e),
        }
    } else {
        None
    };
    let full = bounds::prune(full)?;
    let mut proj = vec![full.clone()];
    let mut cur = full;
    for k in (0..n_t).rev() {
        cur = bounds::shadow_eliminate(&cur, k)?;
        proj.push(cur.clone());
    }
    proj.reverse();
    Ok(TimeStmt {
        index,
        action,
        iters,
        proj,
        scalar,
        param_guards: Vec::new(),
        ibox,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `choose_rows` picks `d` rows of minimal non-zero `|det|`
        /// (brute force over all subsets), the first such subset in
        /// lexicographic order, and `None` exactly when the rank is `< d`.
        #[test]
        fn row_choice_minimizes_the_determinant(
            (d, rows) in (1usize..=3).prop_flat_map(|d| {
                (Just(d), proptest::collection::vec(
                    proptest::collection::vec(-2i64..=2, d + 1), 0..=5))
            })
        ) {
            let n = rows.len();
            let mut best: Option<(u128, Vec<usize>)> = None;
            for mask in 0u32..(1 << n) {
                if mask.count_ones() as usize != d {
                    continue;
                }
                let s: Vec<usize> = (0..n).filter(|&k| mask >> k & 1 == 1).collect();
                let m: Vec<Vec<i64>> = s.iter().map(|&k| rows[k][..d].to_vec()).collect();
                let v = bounds::det(&m).unwrap().unsigned_abs();
                if v != 0 && best.as_ref().is_none_or(|(b, bs)| v < *b || (v == *b && s < *bs)) {
                    best = Some((v, s));
                }
            }
            let got = choose_rows(&rows, d).unwrap();
            match (got, best) {
                (None, None) => {}
                (Some(g), Some((v, s))) => {
                    let m: Vec<Vec<i64>> = g.iter().map(|&k| rows[k][..d].to_vec()).collect();
                    prop_assert_eq!(bounds::det(&m).unwrap().unsigned_abs(), v);
                    prop_assert_eq!(g, s);
                }
                (g, b) => prop_assert!(false, "got {:?}, brute force {:?}", g, b),
            }
        }
    }
}
