//! Helpers of the optimizer's tests (`sdr_cleanup`, `sdr_specialize`,
//! `sdr_rewrites`): random inputs of a program's first system, exact
//! comparison of results, the decisions taken about a variable and the
//! equations of a transformed program.

use alphac::interp;
use alphac::ir::{ExprKind, Program, VarKind};
use alphac::runtime::{Array, ArrayData};
use alphac::sdr::{Decision, DecisionKind};
use std::collections::HashMap;

/// Random inputs (seed `seed`) for every input of the first system of `p`
/// at the parameter values `params`.
pub fn inputs_for(p: &Program, params: &[i64], seed: u64) -> HashMap<String, Array> {
    p.systems[0]
        .vars
        .iter()
        .filter(|v| v.kind == VarKind::Input)
        .map(|v| {
            let spec = interp::array_spec(v, params).unwrap();
            (v.name.clone(), Array::random(&spec, seed).unwrap())
        })
        .collect()
}

/// [`inputs_for`] with every int in `0 .. m`, `m` the smallest positive
/// parameter value (1 when there is none): labels in range of every
/// index bounded by a parameter, so that selections (a label compared with
/// a result index, which must be in its range) hold and the results, not
/// only the errors, are compared.
pub fn inputs_in_range(p: &Program, params: &[i64], seed: u64) -> HashMap<String, Array> {
    let m = params.iter().copied().filter(|&v| v > 0).min().unwrap_or(1);
    inputs_for(p, params, seed)
        .into_iter()
        .map(|(name, a)| {
            let spec = interp::array_spec(
                &p.systems[0].vars[p.systems[0].var_by_name(&name).unwrap()],
                params,
            )
            .unwrap();
            let a = match a.into_data() {
                ArrayData::Int(v) => Array::from_data(
                    &spec,
                    ArrayData::Int(v.into_iter().map(|x| x.rem_euclid(m)).collect()),
                )
                .unwrap(),
                d => Array::from_data(&spec, d).unwrap(),
            };
            (name, a)
        })
        .collect()
}

/// Equal values: ints and bools exactly, floats equal (`-0.0 == 0.0`) or
/// both NaN.
pub fn exact(a: &Array, b: &Array) -> bool {
    match (a.data(), b.data()) {
        (ArrayData::Float(x), ArrayData::Float(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(u, v)| u == v || (u.is_nan() && v.is_nan()))
        }
        (x, y) => x == y,
    }
}

/// Whether a decision of `kind` about `var` was applied (`Some(true)`),
/// only declined (`Some(false)`) or never taken (`None`).
pub fn decided(ds: &[Decision], var: &str, kind: DecisionKind) -> Option<bool> {
    let mine: Vec<_> = ds
        .iter()
        .filter(|d| d.kind == kind && d.var == var)
        .collect();
    if mine.is_empty() {
        None
    } else {
        Some(mine.iter().any(|d| d.applied))
    }
}

/// Whether the first system of `q` has a variable `name`.
pub fn has_var(q: &Program, name: &str) -> bool {
    q.systems[0].var_by_name(name).is_some()
}

/// The right-hand side of `name`'s equation in the first system of `q`
/// (panics, failing the test, when there is none).
pub fn rhs<'a>(q: &'a Program, name: &str) -> &'a ExprKind {
    let s = &q.systems[0];
    let var = s
        .var_by_name(name)
        .unwrap_or_else(|| panic!("no variable {name}"));
    &s.equation_of(var)
        .unwrap_or_else(|| panic!("no equation of {name}"))
        .expr
        .kind
}
