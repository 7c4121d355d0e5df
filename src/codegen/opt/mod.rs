//! Loop-AST optimization: semantics-preserving rewrites of a scanned loop
//! program ([`Function`]) before it is printed or JIT-compiled.
//!
//! Owns thirteen rewrites, applied by [`optimize`] in the order: degenerate
//! loops, splitting, degenerate loops again (pieces `[e, e]`), implied
//! domains, guards, interchange, interchange for reuse, fusion, invariant
//! guards out of loops, sparse
//! updates, invariant bindings out of loops, accumulators, zero terms,
//! guards again (the non-emptiness guards hoisting adds), invariant guards
//! again (those of the guarded updates), bindings peeled out of their
//! loop (and the guards once more when either did):
//! 1. [`remove_degenerate_loops`]: a `for` whose lower and upper bounds are
//!    syntactically the same single affine value `e` (one term each,
//!    divisor 1, equal after merging terms) runs exactly once with
//!    `v = e`; it is replaced by its body with `v := e` substituted into
//!    every affine expression (bounds, guards, indices, values). No guard
//!    is needed: `e <= e`.
//! 2. [`split_loops`] (index-set splitting): a loop whose body tests
//!    affine conditions on its variable (against parameters and outer
//!    variables) is cut at the thresholds into consecutive loops in each
//!    of which the conditions are decided and folded away; see its
//!    documentation for the exact rule and the proof.
//! 3. [`hoist_accumulators`] (scalar replacement, "register
//!    accumulators"): see its documentation for the exact rule.
//! 4. [`simplify_guards`]: drops affine conjuncts of `if` conditions that
//!    are implied (over the rationals, hence over the integers) by the
//!    parameter context, the bounds of the enclosing loops, the affine
//!    conjuncts of the enclosing `if`s (then-branches) and the conjuncts of
//!    the same condition that are kept; an `if` whose condition becomes
//!    `true` is replaced by its then-branch; a binding whose range is
//!    implied non-empty there is marked so (`Binding::nonempty`: its
//!    range is not tested).
//! 5. [`sparse_updates`] (issue 15): an update `A[x] = A[x] + (c ? d :
//!    0)` becomes `if (c) A[x] = A[x] + d`, and a loop `for v` whose body
//!    runs only where `v == e` (a data-dependent `e` independent of `v`)
//!    becomes a one-trip [`Binding`] `v := e`; see its documentation.
//! 6. [`unswitch_guards`]: affine guard conjuncts common to every
//!    statement of a loop body and independent of the loop move out of
//!    it (`for i { if (t == 0) S }` → `if (t == 0) { for i { S } }`); a
//!    one-statement body choosing by a condition invariant in the loop
//!    (affine comparisons, or affine loads of data the loop does not
//!    write; a guard of data also when every statement is under it, then
//!    only where the loop runs) becomes two loops under that choice, and so does a small
//!    body of several statements (no nested loop) with such a `?:` or
//!    `if` anywhere in it (DMM-LW's `(z in 0..K) ? n[z][a] : 0` beside
//!    the per-term predictive).
//! 7. [`skip_zero_terms`]: a float sum term `f(u') − f(u)` (`f` one of
//!    `lgamma`, `log`, `exp`) where `u'` is `u` plus an int datum `R` is
//!    skipped where `R == 0` and `f(u)` is finite (DMM's per-term
//!    predictive: a hand-written sampler visits a document's non-zero
//!    terms only).
//! 8. [`interchange_loops`]: the loop `i` of an accumulation nest
//!    `for o { for i { [for b_1 { ... for b_k {] A[x] op= E } } }` moves
//!    out past `o` when the loads of `E` then walk memory more
//!    contiguously or are reloaded less often (matmul's `i, k, j` order;
//!    CoxPH's subjects outside its information matrix's rows and
//!    entries), when `x` is injective in `(o, b_1, ..., b_k)` and no
//!    failure of `E` depends on those loops. It runs again after the
//!    sparse updates, whose scatter loops put a data-selected binding
//!    around the accumulation (DMM's counts rebuilt, `for a { for d {
//!    Bind k := z[d] { n[k][a] += X[d][a] } } }`, documents outside).
//! 9. [`drop_implied_domains`]: an array's domain predicate (checked on
//!    its data-dependent accesses) is dropped when the loops and guards
//!    around each such access imply it, given the box check (CoxPH's
//!    triangular `R2[first[i]][a][b]` inside `b <= a`).
//! 10. [`hoist_bindings`] (in `unswitch`): a loop whose body is one
//!     data-selected binding that does not depend on the loop becomes the
//!     binding around the loop (DMM's `for a { Bind k := z[d] { n[k][a]
//!     += X[d][a] } }`: one range check per document); [`peel_bindings`]:
//!     a loop whose body is several such bindings, each running its body
//!     whenever its selection succeeds, runs its first iteration under
//!     the bindings and the others inside them (DMM's count update, a
//!     document in and a document out).
//! 11. [`interchange_for_reuse`]: a nest `for o { for i { B } }` whose
//!     iterations of `i` touch disjoint cells of what `B` writes, across
//!     every `o`, and whose body cannot fail, runs `i` outside when the
//!     arrays' layout puts `i` before `o` (LBP's prefix and suffix sums
//!     over a pixel's directions run pixel by pixel); the swapped nest is
//!     then split on its own guards.
//! 12. [`fuse_loops`]: consecutive loops over the same range whose
//!     iterations touch only their own cells of what either writes, at
//!     most one of them able to fail, become one loop (LBP's per-pixel
//!     passes; matmul's initialization and accumulation of a row).
//!
//! Every rewrite is conservative: whenever a precondition cannot be
//! established (an unknown statement form, an overflow while substituting,
//! a solver error) the code is left as it was.
//!
//! Adding a statement or expression form to the loop AST: the generic
//! walkers of `walk` (`map_children`, `map_leaf_exprs`, `rewrite_stmts`,
//! `affines_*`, `visit_exprs`, `size_*`) and the other walkers here match
//! exhaustively or delegate their remaining cases to those, so the
//! compiler lists the places. The conservative handling is:
//! `affines_expr`/`affines_stmts` visit every affine expression of the
//! new form (or return `None`, which cancels the degenerate-loop rewrite);
//! `only_accesses_at` inspects its expressions (or returns `false`, which
//! cancels the hoisting); `map_children` (used by `replace_expr`,
//! `Facts::expr` and `fold_expr`) and `map_leaf_exprs` rewrite its
//! sub-expressions (or keep it unchanged); `bound_vars` records a loop
//! variable it binds; `rewrite_stmts`, the statement walk of every
//! rewrite (a hook of `StmtRewrite` per compound form, `on_leaf` for the
//! others), may keep it unchanged (for simplifying guards, fewer facts is
//! sound; for splitting, a form not split); `visit_exprs` visits its
//! expressions (or none: fewer cuts), `fold_*` fold its sub-expressions
//! (or keep it), `size_*` count it, `infallible` says `false` unless
//! it can neither fail nor have an effect, and in `sparse` `Writes` lists
//! what it writes, `Uses` what an expression reads (or marks it opaque)
//! and `fission_scan` refuses it.
//!
//! Files: `affine` (arithmetic on [`Affine`]), `walk` (generic walks over
//! statements and expressions), `facts` (the linear facts known at a
//! statement and the solver questions on them), `degenerate`, `hoist`,
//! `guards`, `split`, `fold`, `sparse`, `unswitch`, `zero`,
//! `interchange`, `reuse`, `fuse` and `domains` (the twelve rewrites; `fold` decides and
//! folds the atoms of a split loop's pieces), `tests`.
//!
//! Must not know about: schedules, the IR, Cranelift. It reads and writes
//! only the loop AST (`super::loop_ast`) and asks `crate::poly::solver`
//! rational implication questions.

use super::loop_ast::{
    acc_bin_op, bound_vars, for_each_stmt_expr, Accumulation, Affine, ArrayId, AstError, BinOp,
    Binding, Bound, BoundTerm, Expr, ForLoop, Function, Local, LocalId, LoopVar, RandomDraw,
    ReduceOp, Selection, Stmt, Sym, Writes,
};

mod affine;
mod cost;
mod degenerate;
mod domains;
mod facts;
mod fold;
mod fuse;
mod guards;
mod hoist;
mod interchange;
mod peel;
mod reuse;
mod sparse;
mod split;
#[cfg(test)]
mod tests;
mod unswitch;
mod walk;
mod zero;

pub use cost::loop_cost;
pub use degenerate::remove_degenerate_loops;
pub use domains::drop_implied_domains;
pub use fuse::fuse_loops;
pub use guards::simplify_guards;
pub use hoist::hoist_accumulators;
pub use interchange::interchange_loops;
pub use peel::peel_bindings;
pub use reuse::interchange_for_reuse;
pub use sparse::{sparse_updates, SparseCounts};
pub use split::{split_loops, SPLIT_GROWTH, SPLIT_MAX_BODY, SPLIT_MAX_CUTS};
pub use unswitch::{hoist_bindings, unswitch_guards};
pub use zero::skip_zero_terms;

/// Why the optimizer refused a program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptError {
    /// The input program is malformed (`Function::check` fails).
    #[error("malformed loop program: {0}")]
    Malformed(AstError),
    /// The rewritten program fails `Function::check` (a bug of this pass;
    /// reported rather than handed to the JIT).
    #[error("internal error: the optimized loop program is malformed: {0}")]
    Internal(AstError),
}

/// How many rewrites each pass applied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OptStats {
    /// Loops replaced by their body ([`remove_degenerate_loops`], both
    /// runs).
    pub degenerate_loops: usize,
    /// Array elements replaced by a register local around a loop
    /// ([`hoist_accumulators`]).
    pub accumulators: usize,
    /// Guard conjuncts removed ([`simplify_guards`], both runs).
    pub guard_conjuncts: usize,
    /// Loops split into pieces ([`split_loops`]).
    pub split_loops: usize,
    /// Updates `A[x] = A[x] op (c ? d : id)` made `if (c) A[x] = A[x] op
    /// d` ([`sparse_updates`]).
    pub guarded_updates: usize,
    /// Bindings made of loops that select one iteration
    /// ([`sparse_updates`]).
    pub selected_loops: usize,
    /// Loop pairs interchanged into a scatter ([`sparse_updates`]).
    pub scatter_loops: usize,
    /// Invariant guard conjuncts moved out of loops ([`unswitch_guards`]).
    pub unswitched_guards: usize,
    /// Sum terms skipped where an int datum is zero ([`skip_zero_terms`]).
    pub zero_terms: usize,
    /// Accumulation nests whose inner loop moved out by one level
    /// ([`interchange_loops`]).
    pub interchanged_loops: usize,
    /// Nests `for o { for i }` run as `for i { for o }` for reuse
    /// ([`interchange_for_reuse`]).
    pub reuse_interchanges: usize,
    /// Consecutive loops over one range fused ([`fuse_loops`]).
    pub fused_loops: usize,
    /// Array domain predicates implied at every data-dependent access
    /// ([`drop_implied_domains`]).
    pub dropped_domains: usize,
    /// Bindings moved out of a loop they do not depend on
    /// ([`hoist_bindings`]).
    pub hoisted_bindings: usize,
}

/// Applies the rewrites of this module in order (degenerate loops,
/// splitting, degenerate loops, implied domains, guards, interchange,
/// interchange for reuse, fusion, invariant guards, sparse updates, invariant bindings, accumulators,
/// zero terms, guards, invariant guards, peeled bindings, guards) to a copy
/// of `f`. The result computes the same
/// array contents as `f` for every parameter vector of the context, bit for
/// bit (the same operations on the same values in the same order).
pub fn optimize(f: &Function) -> Result<Function, OptError> {
    optimize_with_stats(f).map(|(g, _)| g)
}

/// [`optimize`], also returning how many rewrites were applied.
pub fn optimize_with_stats(f: &Function) -> Result<(Function, OptStats), OptError> {
    f.check().map_err(OptError::Malformed)?;
    let mut g = f.clone();
    let mut stats = OptStats {
        degenerate_loops: remove_degenerate_loops(&mut g),
        ..OptStats::default()
    };
    stats.split_loops = split_loops(&mut g);
    // Pieces `[e, e]` of split loops run once.
    stats.degenerate_loops += remove_degenerate_loops(&mut g);
    // After splitting: a split loop's bounds are facts at the accesses.
    stats.dropped_domains = drop_implied_domains(&mut g);
    // Guards made redundant by the pieces' bounds go before hoisting
    // (an accumulation under an `if` is not hoisted), and the guards
    // hoisting adds are simplified after it.
    stats.guard_conjuncts = simplify_guards(&mut g);
    // Before unswitching (a condition of the moved-out loop's variable is
    // then invariant in the new inner loop).
    stats.interchanged_loops = interchange_loops(&mut g);
    stats.reuse_interchanges = interchange_for_reuse(&mut g);
    // After the interchanges (they make loops over the same outer range),
    // before hoisting (no local is set yet).
    stats.fused_loops = fuse_loops(&mut g);
    // Guards that do not depend on a loop leave it (before hoisting: an
    // accumulation no longer under an `if` may be hoisted).
    stats.unswitched_guards = unswitch_guards(&mut g);
    // After the guards (fewer affine conjuncts in front of the selecting
    // equality), before hoisting (an update made sparse is no longer an
    // accumulation of the loop it left).
    let sparse = sparse_updates(&mut g);
    stats.guarded_updates = sparse.updates;
    stats.selected_loops = sparse.selected;
    stats.scatter_loops = sparse.interchanged;
    // The scatter loops the sparse updates made (a binding around the
    // accumulation) walk memory better documents outside.
    stats.interchanged_loops += interchange_loops(&mut g);
    // After the sparse updates made the bindings, before hoisting (the
    // loop a binding left may hold an accumulation).
    stats.hoisted_bindings = hoist_bindings(&mut g);
    stats.accumulators = hoist_accumulators(&mut g);
    // After hoisting (an update under an `if` is not hoisted).
    stats.zero_terms = skip_zero_terms(&mut g);
    stats.guard_conjuncts += simplify_guards(&mut g);
    // The guarded updates the sparse updates made (`if (c) A[x] += d`),
    // once the guards proved true are gone, have invariant guards too
    // (CoxPH's `event[i] == 1` around its information matrix's entries);
    // the guards of the loops' non-emptiness it adds are proved next.
    let unswitched = unswitch_guards(&mut g);
    stats.unswitched_guards += unswitched;
    // After the guards (they prove the bindings' ranges non-empty); the
    // bindings it moves out of their loop are then proved again.
    let peeled = peel_bindings(&mut g);
    if peeled + unswitched > 0 {
        stats.hoisted_bindings += peeled;
        stats.guard_conjuncts += simplify_guards(&mut g);
    }
    g.check().map_err(OptError::Internal)?;
    Ok((g, stats))
}
