//! Simplification of dependent reductions (SDR): the pass that lowers the
//! asymptotic complexity of reductions (Yang, Atkinson and Carbin, POPL
//! 2021, sections 4–6; Gautam and Rajopadhye 2006).
//!
//! Owns: normalization of reductions (`normalize`: every reduction in an
//! equation of its own, convex body domains), the share space of a
//! reduction body (`share`), and the simplification transformation applied
//! per face with the direction chosen from a sequential schedule of the
//! reduction's result (`transform`), and the cleanup of the tables SDR
//! leaves (`cleanup`: single-point reductions as pointwise equations,
//! identity reads, inlining of pointwise locals, dead locals).
//!
//! Inputs: a checked IR program (normalized with [`normalize::normalize`])
//! and, for every reduction result, the linear part of its schedule in a
//! *sequential* schedule of the augmented program ([`ResultOrder`]). Output:
//! a new IR program (new local variables and equations) computing the same
//! values, with the decisions taken.
//!
//! Must not know about: parsing, code generation, how the schedule was
//! found (any sequential schedule works, paper section 6.3).

pub mod cleanup;
pub mod complement;
pub mod complexity;
pub mod maximal;
pub mod normalize;
pub mod rewrite;
pub mod share;
pub mod split;
pub mod transform;

use crate::ir::VarId;
use crate::poly::PolyError;
use thiserror::Error;

/// Errors of the reduction optimizer: these are internal errors (a checked
/// program never produces them) or limits of the polyhedral library.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SdrError {
    #[error("polyhedral library: {0}")]
    Poly(#[from] PolyError),
    #[error("internal error in the reduction optimizer: {0}")]
    Internal(String),
}

/// The order in which a sequential schedule computes the elements of a
/// reduction's result variable: the linear part `Θ_X` of the schedule of
/// the result (rows over the variable's dimensions, outermost first). The
/// SDR heuristic keeps a reuse vector `r` only when the first non-zero
/// entry of `Θ_X · proj(r)` is positive.
pub trait ResultOrder {
    /// `Θ_X` for variable `var` of system `system`, or `None` when unknown
    /// (no simplification is then attempted on that reduction).
    fn result_rows(&self, system: usize, var: VarId, n_dims: usize) -> Option<Vec<Vec<i64>>>;
}

/// A `ResultOrder` that computes every result in lexicographic order of
/// its indices (`Θ_X = identity`). It is a legal sequential order only for
/// programs whose dependences agree with it; tests use it on independent
/// reductions.
pub struct LexicographicOrder;

impl ResultOrder for LexicographicOrder {
    fn result_rows(&self, _system: usize, _var: VarId, n_dims: usize) -> Option<Vec<Vec<i64>>> {
        Some(
            (0..n_dims)
                .map(|k| (0..n_dims).map(|m| i64::from(k == m)).collect())
                .collect(),
        )
    }
}

/// Which transformation a [`Decision`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DecisionKind {
    /// Reduction normalization (every reduction in an equation of its own).
    Normalize,
    /// A `+` over a domain with a hyperplane hole (`t != s`) as the total
    /// minus the hole (`complement`).
    Complement,
    /// Idempotence: `max`/`min`/`and`/`or` of a body constant along a
    /// direction of the reduction collapses that direction.
    Idempotence,
    /// Higher-order operator: `+` of a body constant along the reduction is
    /// a product with the number of points; `*` is a power.
    HigherOrder,
    /// Distributivity: a factor constant along the reduction moved out.
    Factorization,
    /// Reduction decomposition: one projection as two successive ones.
    Decomposition,
    /// Broadcast: a result constant along a result dimension computed
    /// once without it.
    Broadcast,
    /// Merging nested reductions of one operator into one.
    Merge,
    /// An int total read off a running count at the end of its range
    /// (`nvk[v, k] = NWK[v, k, W − 1] + the last token`).
    Endpoint,
    /// Splitting a reduction's domain along a hyperplane.
    Split,
    /// The simplification transformation (SDR) along a reuse vector.
    Simplification,
    /// Cleanup: a reduction with at most one body point per result became
    /// a pointwise equation.
    Pointwise,
    /// Cleanup: reads of a reduction outside the image of its body domain
    /// became the operator's identity.
    EmptyRead,
    /// Cleanup: a reduction-defined local's domain shrunk to where it is
    /// read.
    Shrink,
    /// Cleanup: a reduction selecting one body point by data
    /// (`if k == e then F else id`) became a pointwise equation.
    Selected,
    /// Cleanup: a reduction-defined local read only at data-selected
    /// points computed at those points alone.
    Specialize,
    /// Cleanup: a pointwise local substituted into its readers.
    Inline,
    /// Cleanup: two int running counts read only as their sum became one.
    Sums,
    /// Cleanup: a local nothing reads removed.
    Dead,
    /// Cleanup: a choice between two values skipped where they are equal
    /// (`if a == b then b else (if C then a else b)`).
    EqualArms,
    /// Cleanup: a reduction-defined local computed only where a condition
    /// known at all its reads holds.
    Guard,
}

impl DecisionKind {
    /// The name printed by `alphac optimize --explain`.
    pub fn name(self) -> &'static str {
        match self {
            DecisionKind::Normalize => "normalize",
            DecisionKind::Complement => "complement",
            DecisionKind::Idempotence => "idempotence",
            DecisionKind::HigherOrder => "higher-order operator",
            DecisionKind::Factorization => "factorization",
            DecisionKind::Decomposition => "decomposition",
            DecisionKind::Broadcast => "broadcast",
            DecisionKind::Merge => "merge",
            DecisionKind::Endpoint => "endpoint",
            DecisionKind::Split => "split",
            DecisionKind::Simplification => "simplification",
            DecisionKind::Pointwise => "pointwise",
            DecisionKind::EmptyRead => "empty read",
            DecisionKind::Shrink => "shrink domain",
            DecisionKind::Selected => "selected point",
            DecisionKind::Specialize => "specialize",
            DecisionKind::Inline => "inline",
            DecisionKind::Sums => "one running count",
            DecisionKind::Dead => "dead local",
            DecisionKind::EqualArms => "equal arms",
            DecisionKind::Guard => "guard",
        }
    }
}

/// What the optimizer did (or declined to do) with one reduction, one face
/// of it, or one piece of it: the record `alphac optimize --explain`
/// prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The system's name.
    pub system: String,
    /// The variable the reduction defines.
    pub var: String,
    /// The transformation considered.
    pub kind: DecisionKind,
    /// Whether it was applied (`false`: considered and declined; `reason`
    /// says why).
    pub applied: bool,
    /// Dimension of the body domain (the face) that was considered, or -1
    /// when not about a face.
    pub face_dim: i64,
    /// The reuse vector applied, in the body space, or `None`.
    pub reuse: Option<Vec<i64>>,
    /// Why (for reports): "applied", "no share direction", ...
    pub reason: String,
    /// Further detail in isl-like notation (the faces, the split
    /// hyperplane, the count expression...), or empty.
    pub detail: String,
    /// The asymptotic complexity of the equations the decision produced
    /// (for example `O(N^2)`), when the pass computed it.
    pub complexity_after: Option<String>,
    /// For an applied simplification: the body domain it was applied to
    /// and the faces it added and subtracted (what `alphac draw` shows).
    pub shells: Option<Box<Shells>>,
}

/// The geometry of one applied simplification (SDR paper, Figure 1 and
/// Section 4): the body domain `P` the reuse vector `r` was applied to,
/// and the pieces of the two shells, all over the reduction's body space.
/// `X[x] = X[x − r_X] ⊕ Add[x] ⊖ Sub[x]`: `added` are the disjoint pieces
/// of `P − (P + r)` (each on a face of `P` whose inequality `a·y + b ≥ 0`
/// has `a·r > 0`), `subtracted` the pieces of `P − (P − r)` whose
/// contributions are removed (empty when the direction needs no
/// subtraction).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shells {
    /// `P`: the body domain, restricted to where the result is used.
    pub body: crate::poly::BasicSet,
    /// The added shell's pieces.
    pub added: Vec<crate::poly::BasicSet>,
    /// The subtracted shell's pieces that are used.
    pub subtracted: Vec<crate::poly::BasicSet>,
}

impl Decision {
    /// A decision with no face, reuse vector, detail or complexity.
    pub fn new(system: &str, var: &str, kind: DecisionKind, applied: bool, reason: &str) -> Self {
        Decision {
            system: system.to_string(),
            var: var.to_string(),
            kind,
            applied,
            face_dim: -1,
            reuse: None,
            reason: reason.to_string(),
            detail: String::new(),
            complexity_after: None,
            shells: None,
        }
    }
}

use crate::deps::{reschedule_program, schedule_program, DepsError, ProgramSchedule};
use crate::ir::Program;
use crate::schedule::Scheduler;
use std::collections::HashMap;

impl ResultOrder for ProgramSchedule {
    fn result_rows(&self, system: usize, var: VarId, n_dims: usize) -> Option<Vec<Vec<i64>>> {
        let rows = ProgramSchedule::result_rows(self, system, var)?;
        rows.iter().all(|r| r.len() == n_dims).then_some(rows)
    }
}

/// The optimizer's result: the optimized program and what was decided.
#[derive(Debug, Clone)]
pub struct Optimized {
    pub program: Program,
    pub decisions: Vec<Decision>,
    /// The program after normalization only (each reduction in its own
    /// equation): the baseline the optimized program is compared with.
    pub normalized: Program,
    /// Per system: every variable the optimizer introduced (normalization
    /// included), with the original variable whose equation it came from.
    pub origin: Vec<HashMap<String, String>>,
    /// The verified sequential schedule of `program` (computed with the
    /// scheduler `optimize` was given): code generation may reuse it.
    pub schedule: ProgramSchedule,
    /// Where a budget cut the search short (the scheduler's, or a pass's
    /// recorded as a decision whose reason starts with "budget"): the
    /// program is correct but may not be the best the search could find.
    /// `alphac complexity` and `alphac optimize` print these.
    pub notes: Vec<String>,
}

/// The notes of an optimization: the decisions whose reason starts with
/// "budget", and the schedules that spent the scheduler's work budget.
fn budget_notes(decisions: &[Decision], schedules: &[&ProgramSchedule]) -> Vec<String> {
    let mut notes: Vec<String> = decisions
        .iter()
        .filter(|d| d.reason.contains("budget"))
        .map(|d| {
            format!(
                "{} of `{}` in system {}: {}; the best program found so far is kept",
                d.kind.name(),
                d.var,
                d.system,
                d.reason
            )
        })
        .collect();
    if schedules.iter().any(|s| s.budget_spent()) {
        notes.push(
            "the scheduler spent its work budget: the schedule is legal but may not be the best one"
                .to_string(),
        );
    }
    notes
}

/// Resolves `(new, base)` pairs (in creation order) to the original
/// variable each new one descends from.
fn resolve_origins(pairs: &[(String, String)]) -> HashMap<String, String> {
    let mut origin: HashMap<String, String> = HashMap::new();
    for (new, base) in pairs {
        let root = origin.get(base).cloned().unwrap_or_else(|| base.clone());
        origin.insert(new.clone(), root);
    }
    origin
}

/// An error of the whole optimization pipeline.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum OptimizeError {
    /// The input program has a dependence cycle or cannot be scheduled.
    #[error("{0}")]
    Deps(#[from] DepsError),
    #[error("{0}")]
    Sdr(#[from] SdrError),
    /// The optimized program failed verification: a bug in the optimizer.
    #[error("internal error: the optimized program is not schedulable: {0}")]
    Verification(DepsError),
}

/// The SDR heuristic end to end (paper, Figure 8): normalize the
/// reductions, compute a sequential schedule of the augmented program with
/// `scheduler`, simplify every reduction along the directions that agree
/// with it, clean up the result ([`cleanup::cleanup`]), and verify that it
/// is still schedulable (acyclic, with a legal sequential schedule checked
/// by the legality checker).
pub fn optimize(program: &Program, scheduler: Scheduler) -> Result<Optimized, OptimizeError> {
    let _t = crate::timing::phase("optimize (SDR)");
    let t = crate::timing::phase("normalize and rewrite");
    let (normalized, born_n, mut decisions) = normalize::normalize_with_origins(program)?;
    // Algebraic rewrites (merge, idempotence, higher-order operators,
    // decomposition, factorization) before SDR.
    let (rewritten, decisions_r, born_r) = rewrite::rewrite(&normalized)?;
    decisions.extend(decisions_r);
    drop(t);
    let t = crate::timing::phase("schedule (directions)");
    let schedule = schedule_program(&rewritten, scheduler)?;
    drop(t);
    let t = crate::timing::phase("simplify");
    let (optimized, decisions_t, born_t) = transform::simplify_with_origins(&rewritten, &schedule)?;
    drop(t);
    decisions.extend(decisions_t);
    // Cleanup (pointwise single-point reductions, identity reads, inlining
    // of pointwise locals, specialization at data-selected points, dead
    // locals): removed variables simply no longer appear in the origins,
    // specialized ones descend from the reduction they compute.
    let t = crate::timing::phase("cleanup");
    let (optimized, decisions_c, born_c) = cleanup::cleanup_with_origins(&optimized)?;
    drop(t);
    decisions.extend(decisions_c);
    let t = crate::timing::phase("schedule (final)");
    let verified = reschedule_program(&optimized, scheduler, &rewritten, &schedule)
        .map_err(OptimizeError::Verification)?;
    drop(t);
    let origin = born_n
        .iter()
        .zip(&born_r)
        .zip(&born_t)
        .zip(&born_c)
        .map(|(((a, r), b), c)| {
            let all: Vec<(String, String)> = a.iter().chain(r).chain(b).chain(c).cloned().collect();
            resolve_origins(&all)
        })
        .collect();
    let notes = budget_notes(&decisions, &[&schedule, &verified]);
    Ok(Optimized {
        program: optimized,
        decisions,
        normalized,
        origin,
        schedule: verified,
        notes,
    })
}
