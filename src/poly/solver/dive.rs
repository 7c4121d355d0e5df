//! The rational part of an integer lexicographic minimum by diving: the
//! objectives are minimized one after the other on one tableau, each fixed
//! at the least integer value its rational minimum allows, until a
//! fixed system is found to have no integer point.
//!
//! Owns: [`Dive`] and [`dive_on_tab`]. The integer reasoning (which value
//! to try after a failed level) is the caller's (`schedule::ilp`); this
//! module only answers the rational questions, on one tableau instead of
//! one rebuilt per level.
//!
//! Must not know about: schedules.

use super::num::{Int, OResult};
use super::tableau::{MaxOutcome, Mode, Tab};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::ToPrimitive;

/// The levels of a dive over a polyhedron `P` and objectives `f_0, f_1, …`.
/// Let `S_0 = P` and `S_{j+1} = S_j ∧ f_j = values[j]`, where
/// `values[j] = ⌈min_{S_j} f_j⌉` (rational minimum).
///
/// Then every integer point of `S_j` has `f_j >= values[j]`, and an integer
/// lexicographic minimum of `f_j, f_{j+1}, …` over `S_j` either lies in
/// `S_{j+1}` or has `f_j >= values[j] + 1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dive {
    /// The values the objectives were fixed at, for the levels reached.
    pub values: Vec<i64>,
    /// `flat[j]` (same length as `values`): `f_j < min_{S_j} f_j + 1` on
    /// all of `S_j`, so `S_j` has no point with `f_j >= values[j] + 1`.
    /// `false` means unknown, unless the dive was exact.
    pub flat: Vec<bool>,
    /// How the dive ended, at level `values.len()`.
    pub end: DiveEnd,
}

/// See [`Dive`]; `L = values.len()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiveEnd {
    /// Every objective was fixed (`L` is their number): `S_L` is non-empty
    /// and this is one of its rational points (when the objectives
    /// determine every variable, its only point).
    Point(Vec<BigRational>),
    /// `S_L` has no rational point (`L >= 1`: fixing `f_{L-1}` at the
    /// ceiling of its fractional minimum emptied it; `L = 0`: `P` is
    /// empty).
    Empty,
    /// `f_L` is unbounded below on `S_L`.
    Unbounded,
}

/// `⌈a⌉` as `i64` (`None` if it does not fit).
fn ceil_div(a: &BigRational) -> Option<i64> {
    a.ceil().to_integer().to_i64()
}

/// Runs the dive of `objs` over the polyhedron of the feasible tableau
/// `tab` (consumed: it ends on `S_L`). Integral minima restrict the tableau
/// to their optimal face (the face is `S_{j+1}`); fractional ones add the
/// equality `f_j = ⌈min⌉`. With `exact_flat`, flatness is decided exactly,
/// on a copy of the tableau at the optimum ([`Tab::can_lower_by_one`]);
/// without, only objectives constant on `S_j` at the optimal basis are
/// found flat (no copies). The flatness tests never change the tableau,
/// so both kinds of dive pivot alike. `Ovf` also stands for a value that
/// does not fit `i64`.
pub(crate) fn dive_on_tab<T: Int>(
    mut tab: Tab<T>,
    objs: &[Vec<i64>],
    exact_flat: bool,
) -> OResult<Dive> {
    let n = tab.n_x_vars();
    let mut values = Vec::with_capacity(objs.len());
    let mut flat = Vec::with_capacity(objs.len());
    if tab.empty {
        return Ok(Dive {
            values,
            flat,
            end: DiveEnd::Empty,
        });
    }
    for obj in objs {
        // Maximize v = -f (the objective's non-zero terms: the scheduling
        // objectives touch a few of hundreds of variables).
        let c: Vec<(usize, T)> = crate::poly::linalg::nonzeros(&obj[..n])
            .map(|(v, x)| Ok((v, T::from_i64(x).neg()?)))
            .collect::<OResult<_>>()?;
        let v = tab.add_free_sparse_row(&c, &T::from_i64(obj[n]).neg()?)?;
        if tab.maximize(v, Mode::Full)? == MaxOutcome::Unbounded {
            return Ok(Dive {
                values,
                flat,
                end: DiveEnd::Unbounded,
            });
        }
        let min = -tab.value(v);
        // f >= min + 1 is v <= -min - 1.
        flat.push(!tab.can_lower_by_one(v, exact_flat)?);
        let lo = ceil_div(&min).ok_or(super::num::Ovf)?;
        values.push(lo);
        if min.is_integer() {
            tab.restrict_to_optimal_face(v);
            tab.drop_row_var(v);
        } else {
            tab.drop_row_var(v);
            let c: Vec<(usize, T)> = super::integer::sparse_terms(&obj[..n]);
            let cst = T::from_big(&(BigInt::from(obj[n]) - BigInt::from(lo)))?;
            tab.add_sparse_constraint(&c, &cst, true)?;
            if tab.empty {
                return Ok(Dive {
                    values,
                    flat,
                    end: DiveEnd::Empty,
                });
            }
        }
    }
    Ok(Dive {
        values,
        flat,
        end: DiveEnd::Point(tab.point()),
    })
}
