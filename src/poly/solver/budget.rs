//! Work budgets of the exact solver: the branch-and-bound limits of one
//! query and an optional, caller-scoped budget on simplex work.
//!
//! A query that runs out of budget fails with [`PolyError::Budget`]
//! (never a wrong answer): the tableau arithmetic returns `Ovf` with the
//! budget flagged, and `integer::fallback` turns that into the error
//! instead of retrying with big integers.
//!
//! Simplex work is measured in tableau cells touched by pivots (a pivot on
//! an `r × c` tableau costs `r·c`), a deterministic measure: the same
//! query spends the same work on every machine, so a budgeted caller (the
//! Pluto scheduler, see `schedule::pluto`) makes the same decisions
//! everywhere.
//!
//! [`PolyError::Budget`]: crate::poly::PolyError::Budget

use super::num::{OResult, Ovf};
use std::cell::Cell;

thread_local! {
    /// Set when a query gave up on a budget.
    static SPENT: Cell<bool> = const { Cell::new(false) };
    /// Remaining simplex work (cells) of the innermost
    /// [`with_work_budget`] scope; `None` outside any scope.
    static WORK_LEFT: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Flags the budget of the running query as spent.
pub(crate) fn mark_spent() {
    SPENT.with(|b| b.set(true));
}

/// Clears the flag, returning whether it was set.
pub(crate) fn take_spent() -> bool {
    SPENT.with(|b| b.replace(false))
}

/// Charges `cells` of simplex work to the current scope; fails with `Ovf`
/// (budget flagged) once the scope's work is spent. Free outside a scope.
pub(crate) fn charge_work(cells: usize) -> OResult<()> {
    WORK_LEFT.with(|w| match w.get() {
        None => Ok(()),
        Some(left) => {
            let cost = u64::try_from(cells).unwrap_or(u64::MAX);
            if cost > left {
                w.set(Some(0));
                mark_spent();
                Err(Ovf)
            } else {
                w.set(Some(left - cost));
                Ok(())
            }
        }
    })
}

/// Is a [`with_work_budget`] scope active on this thread?
pub fn work_budget_active() -> bool {
    WORK_LEFT.with(|w| w.get().is_some())
}

/// What a [`with_work_budget`] scope spent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkSpent {
    /// Simplex work used (tableau cells touched by pivots).
    pub used: u64,
    /// Whether the budget ran out (some query failed with `Budget`).
    pub exhausted: bool,
}

/// Runs `f` with at most `cells` of simplex work (within any enclosing
/// scope's remaining work). Solver queries inside `f` past the budget fail
/// with `PolyError::Budget`. Returns `f`'s result and what it spent.
pub fn with_work_budget<R>(cells: u64, f: impl FnOnce() -> R) -> (R, WorkSpent) {
    let outer = WORK_LEFT.with(|w| w.get());
    let mine = outer.map_or(cells, |o| o.min(cells));
    WORK_LEFT.with(|w| w.set(Some(mine)));
    let r = f();
    let left = WORK_LEFT.with(|w| w.get()).unwrap_or(0);
    let used = mine - left.min(mine);
    WORK_LEFT.with(|w| w.set(outer.map(|o| o.saturating_sub(used))));
    (
        r,
        WorkSpent {
            used,
            exhausted: left == 0,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::{rational_lexmin, Optimum, System};
    use super::*;
    use crate::poly::PolyError;

    /// `{x, y : 0 <= x <= 5, 0 <= y <= 5, x + y >= 3}`: minimizing `-x - y`
    /// needs pivots.
    fn square() -> System {
        let mut s = System::new(2);
        s.add_ineq(vec![1, 0, 0]);
        s.add_ineq(vec![-1, 0, 5]);
        s.add_ineq(vec![0, 1, 0]);
        s.add_ineq(vec![0, -1, 5]);
        s.add_ineq(vec![1, 1, -3]);
        s
    }

    #[test]
    fn spent_work_is_a_budget_error_and_plenty_changes_nothing() {
        let s = square();
        let obj = vec![vec![-1, -1, 0]];
        let free = rational_lexmin(&s, &obj).unwrap();
        let (r, spent) = with_work_budget(0, || rational_lexmin(&s, &obj));
        assert!(matches!(r, Err(PolyError::Budget(_))), "{r:?}");
        assert!(spent.exhausted);
        let (r, spent) = with_work_budget(1_000_000, || rational_lexmin(&s, &obj));
        assert_eq!(r.unwrap(), free);
        assert!(!spent.exhausted);
        assert!(spent.used > 0);
        assert!(matches!(free, Optimum::Value(_)));
        // Outside any scope, nothing is charged.
        assert!(charge_work(usize::MAX).is_ok());
    }

    #[test]
    fn nested_scopes_share_the_outer_budget() {
        let s = square();
        let obj = vec![vec![-1, -1, 0]];
        let (_, one) = with_work_budget(1_000_000, || rational_lexmin(&s, &obj));
        // An outer budget of exactly two runs: the inner scope asks for
        // more, but gets what the outer one has left.
        let (_, outer) = with_work_budget(2 * one.used, || {
            let (a, _) = with_work_budget(u64::MAX, || rational_lexmin(&s, &obj));
            let (b, _) = with_work_budget(u64::MAX, || rational_lexmin(&s, &obj));
            let (c, spent) = with_work_budget(u64::MAX, || rational_lexmin(&s, &obj));
            assert!(a.is_ok() && b.is_ok());
            assert!(c.is_err() && spent.exhausted);
        });
        assert!(outer.exhausted);
    }
}
