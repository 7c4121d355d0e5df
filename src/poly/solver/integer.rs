//! Integer sampling of polyhedra that may be unbounded (isl's
//! "sample with cone" method), built on the exact tableau.
//!
//! Owns: `sample_ineqs`, which finds an integer point of
//! `P = {y ∈ Q^n : A y + b >= 0}` or proves there is none.
//!
//! Method and termination proof:
//! 1. The recession cone `C = {d : A d >= 0}`. A row `a` of `A` is an
//!    *implicit equality of `C`* if `a·d = 0` on all of `C`. Then `-a` is a
//!    nonnegative combination of rows of `A` (Farkas), so on `P` the form
//!    `a·y` is bounded above and below. Let `r` be the rank of these rows.
//! 2. A unimodular `U` (column echelon form) with `[implicit rows]·U = [H|0]`
//!    gives coordinates `y = U z` (integral `y` ⇔ integral `z`) in which the
//!    implicit rows depend only on `z_0..z_{r-1}`; as `H` is nonsingular,
//!    those coordinates are bounded on `P`.
//! 3. Branch and bound over `z_0..z_{r-1}` only: at a node, the LP
//!    relaxation gives a rational point `p`; if some `p_k` (`k < r`) is
//!    fractional, split into `z_k <= ⌊p_k⌋` and `z_k >= ⌈p_k⌉`. Each split
//!    strictly shrinks the finite integer range of a bounded coordinate, so
//!    the tree is finite. A branch deeper than [`DEEP_BRANCHING`] (a
//!    polytope thin along a non-coordinate direction, which branching on
//!    coordinates creeps along) restarts as a search along a reduced basis
//!    of `Z^r` (`reduce.rs`), which is exhaustive and finite too.
//! 4. A leaf (`p_0..p_{r-1}` integral): `C` restricted to `z_{>=r}` is
//!    full-dimensional there, so there is an integral `d` (with `d_{<r} =
//!    0`) such that `a·d >= 1` for every non-implicit row `a`. With
//!    `t = max_a Σ_{k>=r} |a_k|`, the point `q = (p_{<r}, ⌈p_{>=r}⌉ + t·d)`
//!    is integral and satisfies every row: implicit rows (and branching
//!    rows) only see `p_{<r}`; for the others
//!    `a·q + b >= a·p + b - Σ|a_k| + t·a·d >= 0`.
//!
//! So `P` has an integer point iff the search finds a leaf.
//!
//! Must not know about: the public API types (beyond `PolyResult`).

use super::lattice::col_echelon;
use super::num::{to_i64, Int, OResult, Ovf};
use super::reduce::{reduced_basis, search_along};
use super::tableau::{MaxOutcome, Mode, Tab};
use crate::poly::{PolyError, PolyResult};
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive};

/// The non-zero coefficients `(v, c_v)` of an `i64` row, over `T`.
pub(crate) fn sparse_terms<T: Int>(row: &[i64]) -> Vec<(usize, T)> {
    crate::poly::linalg::nonzeros(row)
        .map(|(v, x)| (v, T::from_i64(x)))
        .collect()
}

/// Build a tableau for `eqs` (`== 0`) and `ineqs` (`>= 0`) over `n`
/// variables; returns it with the slack variable of each inequality.
pub(crate) fn build_tab<T: Int>(
    n: usize,
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
) -> OResult<(Tab<T>, Vec<Option<usize>>)> {
    let mut tab = Tab::<T>::new(n);
    // One row per constraint (two for an equality among restricted
    // variables, the rare case).
    tab.rows.reserve(eqs.len() + ineqs.len());
    for e in eqs {
        tab.add_sparse_constraint(&sparse_terms(&e[..n]), &T::from_i64(e[n]), true)?;
        if tab.empty {
            return Ok((tab, vec![None; ineqs.len()]));
        }
    }
    let mut slacks = Vec::with_capacity(ineqs.len());
    for r in ineqs {
        slacks.push(tab.add_sparse_constraint(
            &sparse_terms(&r[..n]),
            &T::from_i64(r[n]),
            false,
        )?);
        if tab.empty {
            slacks.resize(ineqs.len(), None);
            return Ok((tab, slacks));
        }
    }
    Ok((tab, slacks))
}

/// Run `fast` (on `i64`); on overflow run `wide` (on `i128`), and on
/// overflow again `big` (on `BigInt`, which never overflows: its `Ovf`
/// means a spent work budget or an internal limit). The three compute the
/// same thing at different widths ([`at_every_width!`] writes them from
/// one expression). A spent work budget ends the cascade with
/// [`PolyError::Budget`].
pub(crate) fn fallback<R>(
    fast: impl FnOnce() -> OResult<R>,
    wide: impl FnOnce() -> OResult<R>,
    big: impl FnOnce() -> OResult<R>,
) -> PolyResult<R> {
    super::budget::take_spent();
    let spent = super::budget::take_spent;
    let budget_error = || {
        PolyError::Budget(format!(
            "integer branch and bound exceeded {BNB_NODE_BUDGET} nodes or {BNB_CELL_BUDGET} depth × tableau cells, or the caller's simplex work budget"
        ))
    };
    match fast() {
        Ok(r) => return Ok(r),
        Err(Ovf) if spent() => return Err(budget_error()),
        Err(Ovf) => {}
    }
    super::stats::WIDENINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    match wide() {
        Ok(r) => return Ok(r),
        Err(Ovf) if spent() => return Err(budget_error()),
        Err(Ovf) => {}
    }
    super::stats::FALLBACKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    big().map_err(|_| {
        if spent() {
            budget_error()
        } else {
            PolyError::Overflow
        }
    })
}

/// Nodes one search (a branch and bound, or a search along a reduced
/// basis) may explore; past this budget the query fails with
/// [`PolyError::Budget`] instead of running out of memory. (A branch and
/// bound that goes deeper than [`DEEP_BRANCHING`] hands over to the search
/// along a reduced basis before that.)
pub(crate) const BNB_NODE_BUDGET: usize = 2_000_000;

/// Bound on `depth × cells` of a branch-and-bound node: the stack keeps a
/// tableau (one row more per level) for every pending sibling, so this
/// bounds its memory (about 8 bytes per cell on the fast path). Past it
/// the query fails with [`PolyError::Budget`].
pub(crate) const BNB_CELL_BUDGET: usize = 30_000_000;

/// Depth past which a branch and bound stops branching on coordinates: a
/// search this deep is creeping along a polytope that is thin in some
/// other direction (each level moves one coordinate's bound by one). The
/// sampler then searches along a reduced basis ([`reduced_basis`],
/// [`search_along`]), and the lexicographic minimum hands over to the
/// general method (bisection over that sampler).
pub(crate) const DEEP_BRANCHING: usize = 16;

/// Runs `query` on the tableau of `eqs` (`== 0`) and `ineqs` (`>= 0`) over
/// `n` variables, given with the slack variable of each inequality; `None`
/// when the rational polyhedron is empty (no query is run).
pub(crate) fn on_nonempty_tab<T: Int, R>(
    n: usize,
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
    query: impl FnOnce(&mut Tab<T>, &[Option<usize>]) -> OResult<R>,
) -> OResult<Option<R>> {
    let (mut tab, slacks) = build_tab::<T>(n, eqs, ineqs)?;
    if tab.empty {
        return Ok(None);
    }
    query(&mut tab, &slacks).map(Some)
}

/// For a feasible tableau and the slack variables of its inequalities:
/// which of them are 0 at every point. Each undecided slack is maximized
/// until it becomes positive; every slack seen positive on the way is
/// decided too. A slack whose maximum is 0 is an implicit equality, and the
/// nonbasic variables that would lower it are then 0 at every point, so
/// their columns are deleted (the tableau shrinks to the affine hull).
/// The tableau is left describing the same polyhedron.
pub(crate) fn implicit_of_tab<T: Int>(
    tab: &mut Tab<T>,
    slacks: &[Option<usize>],
) -> OResult<Vec<bool>> {
    let mut index_of = vec![usize::MAX; tab.n_vars_total()];
    for (k, s) in slacks.iter().enumerate() {
        if let Some(v) = s {
            index_of[*v] = k;
        }
    }
    let m = slacks.len();
    let mut positive = vec![false; m];
    let mark = |tab: &Tab<T>, positive: &mut Vec<bool>| {
        for v in tab.positive_vars() {
            if v < index_of.len() && index_of[v] != usize::MAX {
                positive[index_of[v]] = true;
            }
        }
    };
    mark(tab, &mut positive);
    let mut implicit = vec![false; m];
    for k in 0..m {
        if positive[k] {
            continue;
        }
        let Some(v) = slacks[k] else { continue };
        if tab.is_dead(v) {
            // Fixed at 0 by an earlier restriction to the affine hull.
            implicit[k] = true;
            continue;
        }
        match tab.maximize(v, Mode::UntilPositive)? {
            MaxOutcome::Reached | MaxOutcome::Unbounded => positive[k] = true,
            MaxOutcome::Optimal => {
                implicit[k] = true;
                tab.restrict_to_optimal_face(v);
            }
        }
        mark(tab, &mut positive);
    }
    Ok(implicit)
}

/// Which inequalities (given by their slacks in the feasible tableau `tab`)
/// are implicit equalities of the recession cone: [`implicit_of_tab`] on
/// the same dictionary with all constants 0 (the cone's tableau at the
/// same basis).
fn cone_implicit<T: Int>(tab: &Tab<T>, slacks: &[Option<usize>]) -> OResult<Vec<bool>> {
    let mut cone = tab.clone();
    cone.zero_constants();
    implicit_of_tab(&mut cone, slacks)
}

/// Depth-first branch and bound over the first `r` variables of a feasible
/// tableau (built from the inequalities `rows`); returns the LP point of
/// the first node whose first `r` coordinates are integral. Past
/// [`DEEP_BRANCHING`] levels it restarts from the root as a search along a
/// reduced basis.
fn bnb<T: Int>(tab: Tab<T>, r: usize, rows: &[Vec<i64>]) -> OResult<Option<Vec<BigRational>>> {
    let n = tab.n_x_vars();
    let mut stack = vec![(tab, 0usize)];
    let mut nodes = 0usize;
    while let Some((tab, depth)) = stack.pop() {
        if depth > DEEP_BRANCHING {
            super::stats::DEEP_SEARCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let basis = reduced_basis::<T>(n, r, rows)?;
            // The root again (rebuilt rather than kept: deep searches are
            // rare, and the common shallow ones then copy nothing).
            let (root, _) = build_tab::<T>(n, &[], rows)?;
            return search_along(root, &basis);
        }
        charge_node(&mut nodes, depth, &tab)?;
        let mut frac = None;
        for k in 0..r {
            if !tab.value_is_integer(k)? {
                frac = Some(k);
                break;
            }
        }
        let Some(k) = frac else {
            return Ok(Some(tab.point()));
        };
        let v = tab.value(k);
        branch(&mut stack, tab, depth, k, &v)?;
    }
    Ok(None)
}

/// Counts one more branch-and-bound node at `depth` and fails with `Ovf`
/// (flagging the spent budget for [`fallback`]) past [`BNB_NODE_BUDGET`]
/// nodes or [`BNB_CELL_BUDGET`] `depth × cells`.
pub(crate) fn charge_node<T: Int>(nodes: &mut usize, depth: usize, tab: &Tab<T>) -> OResult<()> {
    *nodes += 1;
    if *nodes > BNB_NODE_BUDGET || depth.saturating_mul(tab.n_cells()) > BNB_CELL_BUDGET {
        super::budget::mark_spent();
        return Err(Ovf);
    }
    Ok(())
}

/// Splits the node `tab` (at `depth`) on variable `k` with the fractional
/// LP value `v`: `x_k <= ⌊v⌋` (down) and `x_k >= ⌊v⌋ + 1` (up). The
/// non-empty children go on the depth-first `stack`, the side nearer to
/// `v` last so that it is explored first.
fn branch<T: Int>(
    stack: &mut Vec<(Tab<T>, usize)>,
    tab: Tab<T>,
    depth: usize,
    k: usize,
    v: &BigRational,
) -> OResult<()> {
    let fl = v.floor().to_integer();
    let nearer_down =
        (v - BigRational::from_integer(fl.clone())) * BigInt::from(2) <= BigRational::one();
    let mut coef = vec![T::zero(); tab.n_x_vars()];
    // down: fl - x_k >= 0
    coef[k] = T::from_i64(-1);
    let mut down = tab.clone();
    down.add_constraint(&coef, &T::from_big(&fl)?, false)?;
    // up: x_k - (fl + 1) >= 0
    coef[k] = T::one();
    let mut up = tab;
    up.add_constraint(&coef, &T::from_big(&(-(fl + BigInt::from(1))))?, false)?;
    let (first, second) = if nearer_down { (down, up) } else { (up, down) };
    if !second.empty {
        stack.push((second, depth + 1));
    }
    if !first.empty {
        stack.push((first, depth + 1));
    }
    Ok(())
}

fn ovf<T>(r: PolyResult<T>) -> OResult<T> {
    r.map_err(|_| Ovf)
}

fn big_to_i64(v: &BigInt) -> OResult<i64> {
    v.to_i64().ok_or(Ovf)
}

/// Integer point of `{y ∈ Q^n : Σ row[k] y_k + row[n] >= 0 ∀ rows}`, or
/// `None` if it has none. Exact and terminating, also when unbounded.
pub(crate) fn sample_ineqs(n: usize, rows: &[Vec<i64>]) -> PolyResult<Option<Vec<i64>>> {
    if n == 0 {
        return Ok(if rows.iter().all(|r| r[0] >= 0) {
            Some(vec![])
        } else {
            None
        });
    }
    at_every_width!(W => sample_gen::<W>(n, rows)
    )
}

/// [`sample_ineqs`] over the tableau integer type `T` (`Ovf` also stands
/// for a change of coordinates or a result that does not fit `i64`).
fn sample_gen<T: Int>(n: usize, rows: &[Vec<i64>]) -> OResult<Option<Vec<i64>>> {
    let (ptab, slacks) = build_tab::<T>(n, &[], rows)?;
    if ptab.empty {
        return Ok(None);
    }
    // The tableau's basic point, when it is integral, is a sample: no cone
    // analysis, change of coordinates or branch and bound is needed (the
    // common case of dependence and scheduling polyhedra, whose vertices
    // are mostly integral).
    // (The point of a feasible tableau satisfies every row; checked all
    // the same, as the general path's result is, before it is returned.)
    if let Some(p) = ptab.integral_point()? {
        if !satisfies_rows(rows, &p) {
            return Err(Ovf);
        }
        return Ok(Some(p));
    }
    // 1. Implicit equalities of the recession cone.
    let implicit = cone_implicit(&ptab, &slacks)?;
    // 2. Unimodular change of coordinates.
    let m: Vec<Vec<i128>> = rows
        .iter()
        .zip(&implicit)
        .filter(|(_, &imp)| imp)
        .map(|(row, _)| row[..n].iter().map(|&v| v as i128).collect())
        .collect();
    let ech = ovf(col_echelon(&m, n))?;
    let r = ech.rank;
    if r == n {
        // Bounded: plain branch and bound in the original coordinates.
        let Some(p) = bnb(ptab, n, rows)? else {
            return Ok(None);
        };
        return p
            .iter()
            .map(|v| big_to_i64(&v.to_integer()))
            .collect::<OResult<Vec<i64>>>()
            .map(Some);
    }
    drop(ptab);
    let u = ech.u;
    let mut zrows: Vec<Vec<i64>> = Vec::with_capacity(rows.len());
    for row in rows {
        let mut out = Vec::with_capacity(n + 1);
        for c in 0..n {
            let mut s = 0i128;
            for (v, uv) in u.iter().enumerate() {
                if row[v] != 0 && uv[c] != 0 {
                    s = s
                        .checked_add((row[v] as i128).checked_mul(uv[c]).ok_or(Ovf)?)
                        .ok_or(Ovf)?;
                }
            }
            out.push(ovf(to_i64(s))?);
        }
        out.push(row[n]);
        zrows.push(out);
    }
    // 4 (prepared). Interior direction of the cone in z_{>=r}.
    let mut dir = vec![0i64; n];
    let mut t: i128 = 0;
    let nd = n - r;
    let drows: Vec<Vec<i64>> = zrows
        .iter()
        .zip(&implicit)
        .filter(|(_, &imp)| !imp)
        .map(|(zr, _)| {
            let mut d = zr[r..n].to_vec();
            d.push(-1);
            d
        })
        .collect();
    for zr in zrows.iter().zip(&implicit).filter(|(_, &i)| !i) {
        let s: i128 = zr.0[r..n].iter().map(|&v| (v as i128).abs()).sum();
        t = t.max(s);
    }
    let (dtab, _) = build_tab::<T>(nd, &[], &drows)?;
    // Non-empty: the sum of witnesses of the non-implicit rows, scaled.
    if dtab.empty {
        return Err(Ovf);
    }
    let pt = dtab.point();
    let mut l = BigInt::from(1);
    for v in &pt {
        l = l.lcm(v.denom());
    }
    for (k, v) in pt.iter().enumerate() {
        // `v·l` with `denom(v) | l`: an integer, without a rational
        // product (and its gcds).
        let dv = v.numer() * (&l / v.denom());
        dir[r + k] = big_to_i64(&dv)?;
    }
    // 3. Branch and bound over the bounded coordinates.
    let (ztab, _) = build_tab::<T>(n, &[], &zrows)?;
    if ztab.empty {
        return Ok(None);
    }
    let Some(p) = bnb(ztab, r, &zrows)? else {
        return Ok(None);
    };
    // 4. Round.
    let mut q = Vec::with_capacity(n);
    for (k, pk) in p.iter().enumerate() {
        let base = if k < r {
            pk.to_integer()
        } else {
            pk.ceil().to_integer() + BigInt::from(t) * BigInt::from(dir[k])
        };
        q.push(big_to_i64(&base)?);
    }
    // Defensive check of the proof's conclusion (cheap): never return a
    // point outside the set.
    if !satisfies_rows(&zrows, &q) {
        return Err(Ovf);
    }
    // y = U q
    let mut y = Vec::with_capacity(n);
    for uv in u.iter() {
        y.push(big_to_i64(&exact_dot(uv.iter().copied(), &q, 0))?);
    }
    Ok(Some(y))
}

/// Does the integer point `x` satisfy every row (`row·(x, 1) >= 0`)?
/// Exact ([`exact_dot`]).
fn satisfies_rows(rows: &[Vec<i64>], x: &[i64]) -> bool {
    let n = x.len();
    rows.iter().all(|row| {
        let coefs = row[..n].iter().map(|&a| i128::from(a));
        !exact_dot(coefs, x, i128::from(row[n])).is_negative()
    })
}

/// `c + Σ a_k·x_k` over the integers: in `i128` while the partial sums
/// fit, else again in `BigInt` (exact either way).
fn exact_dot(a: impl Iterator<Item = i128> + Clone, x: &[i64], c: i128) -> BigInt {
    let mut s = c;
    for (ak, &xk) in a.clone().zip(x) {
        match ak
            .checked_mul(i128::from(xk))
            .and_then(|p| s.checked_add(p))
        {
            Some(t) => s = t,
            None => {
                let mut b = BigInt::from(c);
                for (ak, &xk) in a.zip(x) {
                    b += BigInt::from(ak) * BigInt::from(xk);
                }
                return b;
            }
        }
    }
    BigInt::from(s)
}

/// Outcome of [`lexmin_if_bounded`].
pub(crate) enum BoundedLex {
    /// The rational polyhedron is empty.
    Empty,
    /// The polyhedron is unbounded: use the general method.
    NotBounded,
    /// The branch and bound went deeper than [`DEEP_BRANCHING`] (a thin
    /// polytope, along which it would creep): use the general method,
    /// whose sampler searches along a reduced basis.
    Deep,
    /// No integer point.
    NoInteger,
    /// The integer lexicographic minimum.
    Point(Vec<i64>),
}

/// Integer lexicographic minimum over a *bounded* polyhedron by
/// lexicographic branch and bound: at each node the rational lexmin of the
/// objectives (successive maximization of the negated objectives, each
/// followed by restriction to the optimal face) is a lower bound for every
/// integer point of the node; nodes whose bound is not lexicographically
/// below the incumbent are pruned; an integral rational lexmin point is a
/// new incumbent; otherwise the node splits on a fractional coordinate
/// `x_k <= ⌊p_k⌋ | x_k >= ⌈p_k⌉`. Every coordinate has a finite integer
/// range on a bounded polyhedron and each split shrinks one, so the search
/// is finite. Boundedness is decided first: the recession cone (the same
/// dictionary with zero constants) is `{0}` iff the equalities and the
/// cone's implicit equalities have rank `n`.
pub(crate) fn lexmin_if_bounded<T: Int>(
    n: usize,
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
    objs: &[Vec<i64>],
) -> OResult<BoundedLex> {
    let (tab, slacks) = build_tab::<T>(n, eqs, ineqs)?;
    if tab.empty {
        return Ok(BoundedLex::Empty);
    }
    let implicit = cone_implicit(&tab, &slacks)?;
    let m: Vec<Vec<i128>> = eqs
        .iter()
        .chain(
            ineqs
                .iter()
                .zip(&implicit)
                .filter(|(_, &i)| i)
                .map(|(r, _)| r),
        )
        .map(|row| row[..n].iter().map(|&v| v as i128).collect())
        .collect();
    if ovf(col_echelon(&m, n))?.rank < n {
        return Ok(BoundedLex::NotBounded);
    }
    let negobjs: Vec<(Vec<T>, T)> = objs
        .iter()
        .map(|o| -> OResult<(Vec<T>, T)> {
            let c = o[..n]
                .iter()
                .map(|&v| T::from_i64(v).neg())
                .collect::<OResult<Vec<T>>>()?;
            Ok((c, T::from_i64(o[n]).neg()?))
        })
        .collect::<OResult<_>>()?;
    let mut best: Option<(Vec<BigRational>, Vec<BigRational>)> = None;
    let mut stack = vec![(tab, 0usize)];
    let mut nodes = 0usize;
    while let Some((node, depth)) = stack.pop() {
        if depth > DEEP_BRANCHING {
            super::stats::DEEP_SEARCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Ok(BoundedLex::Deep);
        }
        charge_node(&mut nodes, depth, &node)?;
        let mut t = node.clone();
        let mut vals = Vec::with_capacity(objs.len());
        let mut pruned = false;
        for (c, c0) in &negobjs {
            let v = t.add_free_row(c, c0)?;
            match t.maximize(v, Mode::Full)? {
                // Impossible on a bounded polyhedron; be safe.
                MaxOutcome::Unbounded => return Ok(BoundedLex::NotBounded),
                MaxOutcome::Optimal | MaxOutcome::Reached => {}
            }
            vals.push(-t.value(v));
            t.restrict_to_optimal_face(v);
            t.drop_row_var(v);
            if let Some((bv, _)) = &best {
                // Prune as soon as the prefix is decided.
                let k = vals.len() - 1;
                if vals[..k] == bv[..k] && vals[k] > bv[k] {
                    pruned = true;
                    break;
                }
            }
        }
        if pruned {
            continue;
        }
        if let Some((bv, _)) = &best {
            if vals >= *bv {
                continue;
            }
        }
        let p = t.point();
        let Some(k) = (0..n).find(|&k| !p[k].is_integer()) else {
            best = Some((vals, p));
            continue;
        };
        branch(&mut stack, node, depth, k, &p[k])?;
    }
    Ok(match best {
        None => BoundedLex::NoInteger,
        Some((_, p)) => BoundedLex::Point(
            p.iter()
                .map(|v| big_to_i64(&v.to_integer()))
                .collect::<OResult<Vec<i64>>>()?,
        ),
    })
}
