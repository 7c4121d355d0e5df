//! Removal of dead locals: a local that no other equation reads (its own
//! equation may read it) is removed with its equation; variables above it
//! move down by one.
//!
//! Stochastic call sites name the variable of their equation by number and
//! key the random streams with it, so a local is removed only when no
//! other equation has a site naming a variable above it (those numbers
//! would change); otherwise it stays declared with an empty domain, so that
//! nothing of it is computed or stored.
//! Locals are examined from the last one down, so removing several keeps
//! the lower numbers.

use super::super::rewrite::remove_var;
use super::super::{DecisionKind, SdrError};
use super::{reads_var, Cx};
use crate::ir::*;

/// Removes dead locals until none is left (see the module comment).
pub(crate) fn run(cx: &mut Cx, s: &mut System) -> Result<(), SdrError> {
    'outer: loop {
        for l in (0..s.vars.len()).rev() {
            if s.vars[l].kind != VarKind::Local
                || s.equations
                    .iter()
                    .any(|e| e.var != l && reads_var(&e.expr, l))
            {
                continue;
            }
            let name = s.vars[l].name.clone();
            if s.equations
                .iter()
                .any(|e| e.var != l && max_site(&e.expr).is_some_and(|v| v > l))
            {
                // Keep the variable (its number) but compute none of it.
                if s.vars[l].domain.is_empty()? {
                    continue;
                }
                s.vars[l].domain = Set::empty(s.vars[l].domain.space().clone());
                let reason = "nothing reads it; its domain is emptied, since a stochastic call \
                              site names a variable after it (removing it would renumber them)";
                cx.decide(&name, DecisionKind::Dead, true, reason, String::new());
                continue;
            }
            remove_var(s, l);
            let reason = "nothing reads it";
            cx.decide(&name, DecisionKind::Dead, true, reason, String::new());
            continue 'outer;
        }
        return Ok(());
    }
}

/// The largest variable number named by a stochastic call site in `e`.
fn max_site(e: &Expr) -> Option<VarId> {
    let mut m = match &e.kind {
        ExprKind::Random(_, _, site) => Some(site.var),
        ExprKind::Categorical(c) => Some(c.site.var),
        _ => None,
    };
    e.for_each_child(&mut |c| m = m.max(max_site(c)));
    m
}
