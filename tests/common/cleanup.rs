//! Helpers of the cleanup tests (`sdr_cleanup`, `sdr_specialize`): the
//! decisions taken about a variable and the equations of a cleaned
//! program's first system.

use alphac::ir::{ExprKind, Program};
use alphac::sdr::{Decision, DecisionKind};

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
