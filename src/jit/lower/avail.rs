//! Available loads: a load (or a checked selection of a loaded label)
//! that one loop iteration computes again, with no store to an array it
//! reads in between, reuses the first value. LDA-MH's token loop reads
//! `z[i]`, `w[i]` and `d[i]` in six count updates and in the acceptance
//! ratio; Cranelift does not merge those loads (its alias analysis keys
//! a load on the address value, and each access computes its own), so
//! every read paid its load and its range check.
//!
//! An entry is the expression (compared structurally), the arrays its
//! value was read from and the value. The lowering keeps the entries in
//! a stack that follows the dominator tree of the code it emits:
//! - a construct that opens blocks a later statement does not pass
//!   through (a branch of an `if` or of a lazy `?:`, the right operand of
//!   a lazy `&&`, a binding's body, a loop, each unrolled copy of a loop
//!   body) is a *scope*: the entries made inside are dropped at its end
//!   ([`Avail::mark`], [`Avail::truncate`]), so a value is only reused
//!   where its definition dominates;
//! - a store to array `a` kills every entry that read `a`
//!   ([`Avail::kill`]), and a loop kills, before its first iteration,
//!   the entries that read an array it writes (a later iteration would
//!   see the store);
//! - where a loop or binding variable takes a new value, the entries
//!   that mention it go ([`Avail::forget`]);
//! - inside a draw and in the vector form of a loop the cache is off
//!   ([`Avail::pause`]): their loops evaluate an expression in several
//!   blocks that do not dominate one another.
//!
//! The same stack holds the *ranges* the checks proved: after a range
//! check of value `x` against `[lo, hi]` (an array's box along one
//! dimension, a selection's range) passes, or after a uniform
//! categorical draw gives `x` in its range, `lo <= x <= hi` holds in the
//! code that check dominates, and a later check of the same SSA value
//! against a range containing `[lo, hi]` is left out ([`Avail::within`]).
//! Only ranges whose bounds are affine functions of the parameters are
//! kept (fixed for the whole run: no loop variable to forget), compared
//! by their canonical forms: `[lo, hi]` is inside `[lo', hi']` when `lo −
//! lo'` and `hi' − hi` are constants `>= 0`. A store kills no range (a
//! range is about a value, not about memory). LDA-MH's acceptance ratio
//! reads six counts at the token's word, document and labels, which the
//! count updates before it checked (and the proposal `kp`, drawn in
//! `0..K`, whose store the next load of `kp` reuses: a store of `v` to
//! `A[x]` makes `v` the available value of `A[x]`).
//!
//! Failing is not a concern: an access whose check fails returns from the
//! function, so a value that is reused got past its checks. Two
//! selections of the same value in the same range are one entry whatever
//! result variable they name (DMM's and LDA's count updates select the
//! same label for each of their tables).
//!
//! Only expressions without locals, draws or external calls are entries
//! ([`cacheable`]): their value is fixed by the loop variables (constant
//! within a scope) and the arrays' contents.
//!
//! Must not know about: Cranelift's instructions (entries hold values).

use super::draws::mentions;
use crate::codegen::loop_ast::{Affine, ArrayId, Expr, Function, LoopVar, Sym};
use cranelift_codegen::ir::Value;

/// The available loads and ranges (see the module comment).
#[derive(Default)]
pub(super) struct Avail {
    entries: Vec<Entry>,
    ranges: Vec<Range>,
    /// Number of enclosing paused regions (draws, vector copies).
    paused: usize,
}

/// The start of a scope: what [`Avail::truncate`] goes back to.
#[derive(Clone, Copy, Default)]
pub(super) struct Mark {
    entries: usize,
    ranges: usize,
}

/// `lo <= value <= hi`, the bounds canonical affine functions of the
/// parameters.
struct Range {
    value: Value,
    lo: Affine,
    hi: Affine,
}

struct Entry {
    expr: Expr,
    reads: Vec<ArrayId>,
    /// `None` once a store to one of `reads` killed it.
    value: Option<Value>,
}

impl Avail {
    /// The value of an entry equal to `e`, if one is alive.
    pub fn find(&self, e: &Expr) -> Option<Value> {
        if self.paused > 0 {
            return None;
        }
        self.entries
            .iter()
            .rev()
            .find(|x| x.value.is_some() && same_value(&x.expr, e))
            .and_then(|x| x.value)
    }

    /// Remember `v` as the value of `e` (when `e` is [`cacheable`] and the
    /// cache is not paused).
    pub fn insert(&mut self, e: &Expr, v: Value) {
        if self.paused > 0 || !cacheable(e) {
            return;
        }
        let mut reads = Vec::new();
        arrays_read(e, &mut reads);
        self.entries.push(Entry {
            expr: e.clone(),
            reads,
            value: Some(v),
        });
    }

    /// After a store of `v` to `a[index]` (and [`Avail::kill`] of `a`):
    /// `v` is the value of the load `a[index]` until the next store to
    /// `a` (when that load is [`cacheable`]).
    pub fn stored(&mut self, a: ArrayId, index: &[Expr], v: Value) {
        if self.paused == 0 {
            let load = Expr::Load {
                array: a,
                index: index.to_vec(),
            };
            self.insert(&load, v);
        }
    }

    /// Kill the entries that read array `a`.
    pub fn kill(&mut self, a: ArrayId) {
        for x in &mut self.entries {
            if x.reads.contains(&a) {
                x.value = None;
            }
        }
    }

    /// The start of a scope.
    pub fn mark(&self) -> Mark {
        Mark {
            entries: self.entries.len(),
            ranges: self.ranges.len(),
        }
    }

    /// The end of the scope started at `mark`: its entries and ranges are
    /// dropped.
    pub fn truncate(&mut self, mark: Mark) {
        self.entries.truncate(mark.entries);
        self.ranges.truncate(mark.ranges);
    }

    /// Remember `lo <= v <= hi` (a check of it passed here), when both
    /// bounds are affine functions of the parameters and the cache is not
    /// paused.
    pub fn ranged(&mut self, v: Value, lo: &Affine, hi: &Affine) {
        if self.paused > 0 || !lo.is_param_only() || !hi.is_param_only() {
            return;
        }
        if let (Some(lo), Some(hi)) = (lo.canonical(), hi.canonical()) {
            self.ranges.push(Range { value: v, lo, hi });
        }
    }

    /// Whether `lo <= v <= hi` is known here: a remembered range of `v`
    /// lies inside `[lo, hi]` (see the module comment).
    pub fn within(&self, v: Value, lo: &Affine, hi: &Affine) -> bool {
        if self.paused > 0 {
            return false;
        }
        let (Some(lo), Some(hi)) = (lo.canonical(), hi.canonical()) else {
            return false;
        };
        self.ranges.iter().any(|r| {
            r.value == v
                && const_excess(&r.lo, &lo).is_some_and(|d| d >= 0)
                && const_excess(&hi, &r.hi).is_some_and(|d| d >= 0)
        })
    }

    /// Drop the entries from `mark` on that mention `var`: at the end of
    /// a stretch whose code dominates what follows but which bound `var`
    /// (no scope started after `mark` is open), and with `mark` 0 where
    /// `var` takes a new value.
    pub fn forget(&mut self, mark: Mark, var: LoopVar) {
        let mut i = 0;
        self.entries.retain(|x| {
            let keep = i < mark.entries || !mentions(&x.expr, var);
            i += 1;
            keep
        });
    }

    /// Enter (`true`) or leave (`false`) a region where nothing is found
    /// or remembered.
    pub fn pause(&mut self, on: bool) {
        if on {
            self.paused += 1;
        } else {
            self.paused = self.paused.saturating_sub(1);
        }
    }
}

/// `a − b` when it is a constant (`a`, `b` canonical: the same terms),
/// else `None` (also on overflow).
fn const_excess(a: &Affine, b: &Affine) -> Option<i64> {
    (a.terms == b.terms).then(|| a.constant.checked_sub(b.constant))?
}

/// The affine function of the parameters `e` is, if it is one: an
/// integer or an affine expression without loop variables.
pub(super) fn param_affine(e: &Expr) -> Option<Affine> {
    match e {
        Expr::Int(c) => Some(Affine::cst(*c)),
        Expr::Aff(a) if a.terms.iter().all(|(s, _)| matches!(s, Sym::Param(_))) => Some(a.clone()),
        _ => None,
    }
}

/// `a` and `b` compute the same value with the same checks: structurally
/// equal, except that two selections need only the same value and range
/// (the variable and index they name are for the error message alone: one
/// that got past its check proves the other's, which would fail only where
/// the first did — and the first failure ends the run).
fn same_value(a: &Expr, b: &Expr) -> bool {
    match (a, b) {
        (Expr::Selection(x), Expr::Selection(y)) => {
            x.value == y.value && x.lower == y.lower && x.upper == y.upper
        }
        _ => a == b,
    }
}

/// Whether `e` is worth remembering and a function of the loop variables
/// and the arrays only: a load or a selection (of a loaded label), whose
/// sub-expressions read no local and make no draw or external call.
fn cacheable(e: &Expr) -> bool {
    let shape = match e {
        Expr::Load { .. } => true,
        Expr::Selection(s) => matches!(s.value, Expr::Load { .. }),
        _ => false,
    };
    shape && pure(e)
}

/// No local, draw or external call anywhere in `e`.
fn pure(e: &Expr) -> bool {
    match e {
        Expr::Local(_) | Expr::Random(_) | Expr::Categorical(_) | Expr::External { .. } => false,
        _ => e.children().into_iter().all(pure),
    }
}

/// The arrays `e` reads, added to `out`.
fn arrays_read(e: &Expr, out: &mut Vec<ArrayId>) {
    if let Expr::Load { array, .. } = e {
        if !out.contains(array) {
            out.push(*array);
        }
    }
    for x in e.children() {
        arrays_read(x, out);
    }
}

/// The box of `array` along dimension `k` as the range `[lo_k, lo_k +
/// extent_k − 1]` of affine functions (`None` on overflow of the
/// constant). Exact as a range of an index that passed the box check:
/// that check passes only for `lo_k <= x < lo_k + max(extent_k, 0)`.
pub(super) fn box_range(f: &Function, array: ArrayId, k: usize) -> Option<(Affine, Affine)> {
    let d = f.arrays.get(array)?.dims.get(k)?;
    Some((d.lower.clone(), d.upper()?))
}
