//! Asymptotic cost of programs (SDR paper section 8.1.1): the size of every
//! statement's domain as monomials in all the parameters, per equation and
//! for the whole program, before and after optimization.
//!
//! The cost of an equation `X[x] = E` is `|D_X|` (one evaluation per
//! element) plus, for every reduction in `E`, the number of body points
//! actually used, `|P ∩ proj⁻¹(D_X)|`, and for every `categorical`, its
//! domain over `D_X`. Sizes come from `poly::complexity` (an upper bound
//! where that module says so); sums drop dominated terms.

use super::{Optimized, SdrError};
use crate::ir::*;
use crate::poly::complexity::{complexity, Complexity};
use crate::poly::{MultiAff, Set, Tuple};
use std::collections::HashMap;
use std::fmt;

/// The cost of one equation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EquationCost {
    pub var: String,
    pub cost: Complexity,
}

/// Cost of every equation of a system, in equation order.
pub fn equation_costs(s: &System) -> Result<Vec<EquationCost>, SdrError> {
    let mut out = Vec::with_capacity(s.equations.len());
    for eq in &s.equations {
        let dom = &s.vars[eq.var].domain;
        let mut cost = complexity(dom)?;
        let mut extra = Vec::new();
        collect_work(&eq.expr, dom, &s.params, &mut extra)?;
        for c in extra {
            cost = cost.add(&c)?;
        }
        out.push(EquationCost {
            var: s.vars[eq.var].name.clone(),
            cost,
        });
    }
    Ok(out)
}

/// Work of the reductions and categorical draws in `e`, evaluated over
/// `ctx` (a set over the index space of `e`).
fn collect_work(
    e: &Expr,
    ctx: &Set,
    params: &[String],
    out: &mut Vec<Complexity>,
) -> Result<(), SdrError> {
    match &e.kind {
        ExprKind::Reduce(r) => {
            let used = r.body_domain.intersect(&ctx.preimage(&r.proj)?)?;
            out.push(complexity(&used)?);
            // a reduction nested in the body is evaluated over the body
            collect_work(&r.body, &used, params, out)?;
        }
        ExprKind::Categorical(c) => {
            let dom = &c.domain;
            // ctx × k: extend ctx with the drawn index (unconstrained).
            let np = params.len();
            let n = ctx.space().n_dims();
            let rows: Vec<Vec<i64>> = (0..n)
                .map(|k| {
                    let mut r = vec![0; np + n + 2];
                    r[np + k] = 1;
                    r
                })
                .collect();
            let f = MultiAff::new(dom.space().clone(), Tuple::anonymous("x", n), rows)?;
            let used = dom.intersect(&ctx.preimage(&f)?)?;
            out.push(complexity(&used)?);
        }
        _ => {
            let mut res = Ok(());
            super::normalize::visit_children(e, &mut |c| {
                if res.is_ok() {
                    res = collect_work(c, ctx, params, out);
                }
            });
            res?;
        }
    }
    Ok(())
}

/// Before/after cost of one original equation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CostLine {
    pub var: String,
    pub before: Complexity,
    pub after: Complexity,
}

/// The complexity report of an optimization: one line per equation of the
/// original program (its cost, and the cost of everything it became), and
/// the totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComplexityReport {
    pub lines: Vec<CostLine>,
    pub before: Complexity,
    pub after: Complexity,
    /// The optimizer's budget notes ([`Optimized::notes`]).
    pub notes: Vec<String>,
}

fn sum_by_origin(
    s: &System,
    origin: &HashMap<String, String>,
) -> Result<HashMap<String, Complexity>, SdrError> {
    let mut by: HashMap<String, Complexity> = HashMap::new();
    for c in equation_costs(s)? {
        let root = origin.get(&c.var).cloned().unwrap_or(c.var.clone());
        let total = match by.get(&root) {
            Some(prev) => prev.add(&c.cost)?,
            None => c.cost,
        };
        by.insert(root, total);
    }
    Ok(by)
}

/// The report for an optimization of `original` (all its systems).
pub fn report(original: &Program, o: &Optimized) -> Result<ComplexityReport, SdrError> {
    report_systems(original, o, None)
}

/// The report for an optimization of `original`, restricted to its system
/// number `only` when given.
pub fn report_systems(
    original: &Program,
    o: &Optimized,
    only: Option<usize>,
) -> Result<ComplexityReport, SdrError> {
    let mut lines = Vec::new();
    let mut before: Option<Complexity> = None;
    let mut after: Option<Complexity> = None;
    for (k, s) in original.systems.iter().enumerate() {
        if only.is_some_and(|i| i != k) {
            continue;
        }
        let empty = HashMap::new();
        let origin = o.origin.get(k).unwrap_or(&empty);
        let b = sum_by_origin(&o.normalized.systems[k], origin)?;
        let a = sum_by_origin(&o.program.systems[k], origin)?;
        for eq in &s.equations {
            let var = s.vars[eq.var].name.clone();
            let Some(cb) = b.get(&var) else {
                return Err(SdrError::Internal(format!("no cost for equation {var}")));
            };
            // a local the cleanup inlined into its readers has no equation
            // left: its work is counted where it was inlined
            let none = Complexity::new(s.params.clone(), Vec::new());
            let ca = a.get(&var).unwrap_or(&none);
            before = Some(match before {
                None => cb.clone(),
                Some(t) => t.add(cb)?,
            });
            after = Some(match after {
                None => ca.clone(),
                Some(t) => t.add(ca)?,
            });
            lines.push(CostLine {
                var,
                before: cb.clone(),
                after: ca.clone(),
            });
        }
    }
    let params = original
        .systems
        .get(only.unwrap_or(0))
        .map(|s| s.params.clone())
        .unwrap_or_default();
    Ok(ComplexityReport {
        lines,
        before: before.unwrap_or_else(|| Complexity::new(params.clone(), Vec::new())),
        after: after.unwrap_or_else(|| Complexity::new(params, Vec::new())),
        notes: o.notes.clone(),
    })
}

impl fmt::Display for ComplexityReport {
    /// `X: O(before) -> O(after)` per equation, then
    /// `total: O(BEFORE) -> O(AFTER)`, then `note: ...` per budget note.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for l in &self.lines {
            writeln!(f, "{}: {} -> {}", l.var, l.before, l.after)?;
        }
        writeln!(f, "total: {} -> {}", self.before, self.after)?;
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        Ok(())
    }
}
