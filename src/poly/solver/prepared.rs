//! A system whose tableau is built once and then queried many times, each
//! query with a few extra constraints of its own: the scheduler's searches
//! solve hundreds of lexicographic minima over one base system under
//! different branching and fixing constraints, and building the base's
//! tableau was most of their time.
//!
//! Owns: [`Prepared`]. A query's answer is that of the same query on the
//! materialized system (the base's rows, then the extra rows), computed on
//! a copy of the base's `i64` tableau with the extra rows added; on
//! overflow the whole tableau is rebuilt over `i128`, then big integers,
//! adding the rows in the same order, so every width pivots alike.
//!
//! Must not know about: schedules (the rows are just rows).

use super::dive::{dive_on_tab, Dive};
use super::integer::{build_tab, sparse_terms};
use super::lexsimplex::LexSimplex;
use super::num::{Int, OResult, Ovf};
use super::tableau::Tab;
use super::{each_reaches, lexmin_on_tab, Optimum, System};
use crate::poly::PolyResult;
use num_rational::BigRational;
use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;

/// A base system with its `i64` tableau (see the module comment).
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The presolved base, shared with the [`Self::extended`] systems.
    base: Arc<System>,
    /// The rows [`Self::extended`] added to `base`, in the order they
    /// were added (`true`: an equality).
    added: Vec<(Vec<i64>, bool)>,
    /// `None` when building it overflowed `i64` or spent the work budget:
    /// every query then starts at the `i128` width.
    small: Option<Tab<i64>>,
}

impl Prepared {
    /// Build the tableau of `base` (rows are checked for their length).
    /// The base is first presolved ([`presolve`]): the same rational
    /// polyhedron with fewer rows.
    pub fn new(base: System) -> PolyResult<Prepared> {
        base.check()?;
        let base = presolve(&base);
        let n = base.n_vars;
        let small = build_tab::<i64>(n, &base.eqs, &base.ineqs)
            .ok()
            .map(|(t, _)| t);
        // A failed build may have marked the work budget spent; the
        // queries' own `fallback` decides what that means for them.
        Ok(Prepared {
            base: Arc::new(base),
            added: Vec::new(),
            small,
        })
    }

    /// The system: the presolved base and the rows [`Self::extended`]
    /// added.
    pub fn system(&self) -> Cow<'_, System> {
        if self.added.is_empty() {
            Cow::Borrowed(&self.base)
        } else {
            Cow::Owned(self.with_rows(&[], &[]))
        }
    }

    /// The system with `eqs` (`== 0`) and `ineqs` (`>= 0`) added for good:
    /// a copy of the tableau with the rows added (they are not presolved),
    /// for a sequence of growing systems (each query on the result is
    /// that of the same query on [`Self::with_rows`]). The base's rows
    /// are shared, not copied.
    pub fn extended(&self, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> PolyResult<Prepared> {
        self.check_rows(eqs, ineqs, &[])?;
        let small = match &self.small {
            // Overflow (or a spent work budget) leaves no `i64` tableau:
            // queries then start at the wider widths, as after `new`.
            Some(t) => add_rows(t.clone(), eqs, ineqs).ok(),
            None => None,
        };
        let mut added = Vec::with_capacity(self.added.len() + eqs.len() + ineqs.len());
        added.extend(self.added.iter().cloned());
        added.extend(eqs.iter().map(|r| (r.clone(), true)));
        added.extend(ineqs.iter().map(|r| (r.clone(), false)));
        Ok(Prepared {
            base: Arc::clone(&self.base),
            added,
            small,
        })
    }

    /// Has the system no rational point? ([`super::rational_feasible`],
    /// answered by the prepared tableau when there is one: a tableau is
    /// kept feasible or marked empty as rows are added.)
    pub fn rational_empty(&self) -> PolyResult<bool> {
        match &self.small {
            Some(t) => Ok(t.empty),
            None => Ok(!super::rational_feasible(&self.system())?),
        }
    }

    /// The lexicographic minimum of `objs` over the system, kept as a
    /// [`LexSimplex`] to which rows can be added (see there). `Ok(None)`
    /// when it does not apply: a variable is not among the objectives, the
    /// minimum is unbounded, the `i64` tableau overflowed, or the work
    /// budget is spent; the queries of this `Prepared` answer then.
    pub fn lex_simplex(&self, objs: &[Vec<i64>]) -> PolyResult<Option<LexSimplex>> {
        self.check_rows(&[], &[], objs)?;
        let Some(tab) = &self.small else {
            return Ok(None);
        };
        Ok(LexSimplex::new(tab.clone(), objs).ok().flatten())
    }

    /// The system with `eqs` (`== 0`) and `ineqs` (`>= 0`) appended.
    pub fn with_rows(&self, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> System {
        let mut s = (*self.base).clone();
        for (r, is_eq) in &self.added {
            if *is_eq {
                s.eqs.push(r.clone());
            } else {
                s.ineqs.push(r.clone());
            }
        }
        s.eqs.extend(eqs.iter().cloned());
        s.ineqs.extend(ineqs.iter().cloned());
        s
    }

    /// [`super::rational_lexmin`] of `objs` over the base with `eqs` and
    /// `ineqs` appended.
    pub fn rational_lexmin(
        &self,
        eqs: &[Vec<i64>],
        ineqs: &[Vec<i64>],
        objs: &[Vec<i64>],
    ) -> PolyResult<Optimum<Vec<BigRational>>> {
        self.check_rows(eqs, ineqs, objs)?;
        at_every_width!(W => match self.tab_with::<W>(eqs, ineqs)? {
            mut t if !t.empty => lexmin_on_tab(&mut t, objs),
            _ => Ok(Optimum::Empty),
        })
    }

    /// The [`Dive`] of `objs` over the base with `eqs` and `ineqs`
    /// appended, on one copy of the base's tableau; `exact_flat` decides
    /// every level's flatness exactly (at the price of a tableau copy per
    /// level), otherwise only the obvious ones are found.
    pub fn dive(
        &self,
        eqs: &[Vec<i64>],
        ineqs: &[Vec<i64>],
        objs: &[Vec<i64>],
        exact_flat: bool,
    ) -> PolyResult<Dive> {
        self.check_rows(eqs, ineqs, objs)?;
        at_every_width!(W => dive_on_tab(self.tab_with::<W>(eqs, ineqs)?, objs, exact_flat))
    }

    /// [`super::rational_each_reaches`] over the base with `eqs` and
    /// `ineqs` appended.
    pub fn each_reaches(
        &self,
        eqs: &[Vec<i64>],
        ineqs: &[Vec<i64>],
        groups: &[Vec<Vec<i64>>],
    ) -> PolyResult<bool> {
        let rows: Vec<Vec<i64>> = groups.iter().flatten().cloned().collect();
        self.check_rows(eqs, ineqs, &rows)?;
        at_every_width!(W => {
            let mut t = self.tab_with::<W>(eqs, ineqs)?;
            Ok(!t.empty && each_reaches(&mut t, groups)?)
        })
    }

    fn check_rows(
        &self,
        eqs: &[Vec<i64>],
        ineqs: &[Vec<i64>],
        objs: &[Vec<i64>],
    ) -> PolyResult<()> {
        for r in eqs.iter().chain(ineqs).chain(objs) {
            self.base.check_obj(r)?;
        }
        Ok(())
    }

    /// The tableau of the system over `T` with the extra rows added: a
    /// copy of the prepared `i64` one at that width (`Ovf` when building
    /// it overflowed), else built anew from the base's rows and the added
    /// ones, in their order.
    fn tab_with<T: Int>(&self, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> OResult<Tab<T>> {
        let prepared: &dyn Any = &self.small;
        let tab = match prepared.downcast_ref::<Option<Tab<T>>>() {
            Some(small) => small.clone().ok_or(Ovf)?,
            None => {
                let mut tab = build_tab::<T>(self.base.n_vars, &self.base.eqs, &self.base.ineqs)?.0;
                for (r, is_eq) in &self.added {
                    add_row(&mut tab, r, *is_eq)?;
                }
                tab
            }
        };
        add_rows(tab, eqs, ineqs)
    }
}

/// Add equalities, then inequalities, to `tab` (stops once it is empty).
fn add_rows<T: Int>(mut tab: Tab<T>, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> OResult<Tab<T>> {
    for (r, is_eq) in eqs
        .iter()
        .map(|r| (r, true))
        .chain(ineqs.iter().map(|r| (r, false)))
    {
        add_row(&mut tab, r, is_eq)?;
    }
    Ok(tab)
}

/// Add the row `r` (an equality when `is_eq`) to `tab`, unless it is
/// already empty.
fn add_row<T: Int>(tab: &mut Tab<T>, r: &[i64], is_eq: bool) -> OResult<()> {
    if !tab.empty {
        let n = tab.n_x_vars();
        tab.add_sparse_constraint(&sparse_terms(&r[..n]), &T::from_i64(r[n]), is_eq)?;
    }
    Ok(())
}

/// The same rational polyhedron as `sys`, cheaper to tableau: a variable
/// fixed to 0 by an equality `c·x_v = 0` (`c ≠ 0`) is dropped from every
/// inequality; an inequality left without coefficients goes when its
/// constant is `>= 0` (it holds everywhere); of parallel inequalities
/// `g·a·x + c >= 0` (one primitive `a`, `g > 0`) only the tightest, the
/// least `c / g`, stays (it implies the others). The equalities are kept,
/// and the rows that stay keep their order.
fn presolve(sys: &System) -> System {
    use rustc_hash::FxHashMap;
    use std::collections::hash_map::Entry;
    let n = sys.n_vars;
    let mut fixed = vec![false; n];
    for e in &sys.eqs {
        let mut nz = (0..n).filter(|&k| e[k] != 0);
        if let (Some(v), None) = (nz.next(), nz.next()) {
            if e[n] == 0 {
                fixed[v] = true;
            }
        }
    }
    // For each primitive direction, as its non-zero entries (the rows are
    // sparse: a few coefficients among hundreds of variables, so the key
    // is short to build, hash and compare): the index (in `kept`) of its
    // tightest row and that row's `(c, g)`.
    let mut best: FxHashMap<Vec<(usize, i64)>, (usize, i64, i64)> = FxHashMap::default();
    let mut kept: Vec<Option<Vec<i64>>> = Vec::with_capacity(sys.ineqs.len());
    let mut nz: Vec<(usize, i64)> = Vec::new();
    for r in &sys.ineqs {
        nz.clear();
        let mut g = 0i64;
        let mut touches_fixed = false;
        for (k, x) in crate::poly::linalg::nonzeros(&r[..n]) {
            if fixed[k] {
                touches_fixed = true;
                continue;
            }
            g = num_integer::gcd(g, x);
            nz.push((k, x));
        }
        let row = || {
            let mut row = r.clone();
            if touches_fixed {
                for (k, &f) in fixed.iter().enumerate() {
                    if f {
                        row[k] = 0;
                    }
                }
            }
            row
        };
        if g == 0 {
            if r[n] < 0 {
                kept.push(Some(row()));
            }
            continue;
        }
        let dir: Vec<(usize, i64)> = nz.iter().map(|&(k, x)| (k, x / g)).collect();
        let c = r[n];
        match best.entry(dir) {
            Entry::Vacant(v) => {
                v.insert((kept.len(), c, g));
                kept.push(Some(row()));
            }
            Entry::Occupied(mut o) => {
                let (at, c0, g0) = *o.get();
                // c / g < c0 / g0, with g, g0 > 0 (i128: no overflow).
                if i128::from(c) * i128::from(g0) < i128::from(c0) * i128::from(g) {
                    kept[at] = Some(row());
                    o.insert((at, c, g));
                }
            }
        }
    }
    System {
        n_vars: n,
        eqs: sys.eqs.clone(),
        ineqs: kept.into_iter().flatten().collect(),
    }
}
