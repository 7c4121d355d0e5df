//! Memoized answers to the solver questions that the set operations ask
//! again and again (the optimizer's cleanup, for example, asks whether the
//! same set is empty about five times on average), and the memo itself
//! for the later stages' own repeated questions ([`memoized`]).
//!
//! A memo is per thread and holds at most [`CAPACITY`] answers; when it is
//! full it is cleared. Errors are never stored. The memo is only used
//! outside a work-budget scope
//! ([`solver::with_work_budget`](super::solver::with_work_budget)):
//! a budgeted caller must spend the same work whatever was asked before,
//! so that its decisions never depend on what the memo holds.
//!
//! Owns: the memo. Must not know about spaces, names or what the
//! questions are asked for.

use super::error::PolyResult;
use super::solver;
use hashbrown::Equivalent;
use rustc_hash::FxBuildHasher;
use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::thread::LocalKey;

/// The questions whose answers are memoized.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Question {
    /// No integer point?
    IntEmpty,
    /// The inequalities tight at every rational point.
    ImplicitEqs,
    /// The inequalities that can be removed together.
    Redundant,
}

/// A system as a memo key: its number of variables, equalities and
/// inequalities.
pub type SystemKey = (usize, Vec<Vec<i64>>, Vec<Vec<i64>>);

/// A per-thread memo from keys to answers (see the module comment); used
/// as `thread_local! { static M: Memo<K, V> = Memo::default(); }`. Keys
/// are hashed with FxHash (`rustc_hash`): they are rows of small integers
/// chosen by the compiler, not by an adversary, and SipHash was 5% of
/// compile time.
pub type Memo<K, V> = RefCell<hashbrown::HashMap<K, V, FxBuildHasher>>;

/// The most answers one memo keeps.
pub const CAPACITY: usize = 1 << 14;

/// A question about a system, owned (as stored in a memo).
#[derive(Debug, PartialEq, Eq)]
struct Asked {
    /// `None` for the integer sample.
    q: Option<Question>,
    nv: usize,
    eqs: Vec<Vec<i64>>,
    ineqs: Vec<Vec<i64>>,
}

/// A question about a system, borrowed from the asker: looked up without
/// copying the system (a lookup that copied its rows made 60 k of the
/// 500 k allocations of a sampler's compile); copied only to be stored.
#[derive(Hash)]
struct Asking<'a> {
    q: Option<Question>,
    nv: usize,
    eqs: &'a [Vec<i64>],
    ineqs: &'a [Vec<i64>],
}

impl Asking<'_> {
    fn to_owned(&self) -> Asked {
        Asked {
            q: self.q,
            nv: self.nv,
            eqs: self.eqs.to_vec(),
            ineqs: self.ineqs.to_vec(),
        }
    }
}

impl Hash for Asked {
    /// The hash of the borrowed form (a slice hashes as the vector), so
    /// that [`Asking`] finds it.
    fn hash<H: Hasher>(&self, h: &mut H) {
        Asking {
            q: self.q,
            nv: self.nv,
            eqs: &self.eqs,
            ineqs: &self.ineqs,
        }
        .hash(h)
    }
}

impl Equivalent<Asked> for Asking<'_> {
    fn equivalent(&self, k: &Asked) -> bool {
        self.q == k.q && self.nv == k.nv && self.eqs == &k.eqs[..] && self.ineqs == &k.ineqs[..]
    }
}

thread_local! {
    static BOOLS: Memo<Asked, bool> = Memo::default();
    static INDICES: Memo<Asked, Vec<usize>> = Memo::default();
    static SAMPLES: Memo<Asked, Option<Vec<i64>>> = Memo::default();
    static OPT_INDICES: Memo<Asked, Option<Vec<usize>>> = Memo::default();
}

/// The answer for `key`: from `memo` when it holds one, else `compute`d
/// (and stored when it succeeds). Inside a work-budget scope the memo is
/// neither read nor written.
pub fn memoized<K, V, E>(
    memo: &'static LocalKey<Memo<K, V>>,
    key: impl FnOnce() -> K,
    compute: impl FnOnce() -> Result<V, E>,
) -> Result<V, E>
where
    K: Eq + Hash + 'static,
    V: Clone + 'static,
{
    if solver::work_budget_active() {
        return compute();
    }
    answer(memo, key(), |k| k, compute)
}

/// [`memoized`] for a question about a system, looked up borrowed.
fn asked<V: Clone + 'static>(
    memo: &'static LocalKey<Memo<Asked, V>>,
    q: Option<Question>,
    nv: usize,
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
    compute: impl FnOnce() -> PolyResult<V>,
) -> PolyResult<V> {
    if solver::work_budget_active() {
        return compute();
    }
    let key = Asking { q, nv, eqs, ineqs };
    answer(memo, key, |k| k.to_owned(), compute)
}

/// The answer stored in `memo` for a key equivalent to `q`, else the one
/// `compute`d, stored under `own(q)` when it succeeds (the memo cleared
/// first when it holds [`CAPACITY`] answers).
fn answer<Q, K, V, E>(
    memo: &'static LocalKey<Memo<K, V>>,
    q: Q,
    own: impl FnOnce(Q) -> K,
    compute: impl FnOnce() -> Result<V, E>,
) -> Result<V, E>
where
    Q: Hash + Equivalent<K>,
    K: Eq + Hash + 'static,
    V: Clone + 'static,
{
    if let Some(a) = memo.with(|m| m.borrow().get(&q).cloned()) {
        return Ok(a);
    }
    let a = compute()?;
    memo.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= CAPACITY {
            m.clear();
        }
        m.insert(own(q), a.clone());
    });
    Ok(a)
}

/// The memoized answer of a yes-or-no question about a system.
pub(crate) fn bool_answer(
    q: Question,
    nv: usize,
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
    compute: impl FnOnce() -> PolyResult<bool>,
) -> PolyResult<bool> {
    asked(&BOOLS, Some(q), nv, eqs, ineqs, compute)
}

/// The memoized integer point of a system (or `None`: no integer point).
/// The sample is a function of the system (the solver is deterministic),
/// so the memo changes no answer, only how often it is computed.
pub(crate) fn sample_answer(
    nv: usize,
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
    compute: impl FnOnce() -> PolyResult<Option<Vec<i64>>>,
) -> PolyResult<Option<Vec<i64>>> {
    asked(&SAMPLES, None, nv, eqs, ineqs, compute)
}

/// The memoized answer of a question whose answer is a list of indices.
pub(crate) fn indices_answer(
    q: Question,
    nv: usize,
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
    compute: impl FnOnce() -> PolyResult<Vec<usize>>,
) -> PolyResult<Vec<usize>> {
    asked(&INDICES, Some(q), nv, eqs, ineqs, compute)
}

/// The memoized answer of a question whose answer is a list of indices,
/// or `None` when the system has no rational point.
pub(crate) fn opt_indices_answer(
    q: Question,
    nv: usize,
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
    compute: impl FnOnce() -> PolyResult<Option<Vec<usize>>>,
) -> PolyResult<Option<Vec<usize>>> {
    asked(&OPT_INDICES, Some(q), nv, eqs, ineqs, compute)
}

#[cfg(test)]
mod tests {
    use super::super::sys::int_empty;
    use crate::poly::solver::with_work_budget;

    /// Inside a work-budget scope every question is answered afresh, so
    /// what it spends does not depend on what was asked before.
    #[test]
    fn budgeted_questions_spend_their_work_every_time() {
        // 1 <= 3x <= 2, 0 <= y <= 10: rationally feasible, no integer
        // point (the answer needs simplex work).
        let eqs: Vec<Vec<i64>> = Vec::new();
        let ineqs = vec![
            vec![3, 0, -1],
            vec![-3, 0, 2],
            vec![0, 1, 0],
            vec![0, -1, 10],
        ];
        let (first, spent1) = with_work_budget(1 << 40, || int_empty(2, &eqs, &ineqs));
        let (second, spent2) = with_work_budget(1 << 40, || int_empty(2, &eqs, &ineqs));
        assert_eq!(first, Ok(true));
        assert_eq!(second, Ok(true));
        assert!(spent1.used > 0);
        assert_eq!(spent1.used, spent2.used);
        // Outside a scope, the answer is memoized and stays the same.
        assert_eq!(int_empty(2, &eqs, &ineqs), Ok(true));
        assert_eq!(int_empty(2, &eqs, &ineqs), Ok(true));
    }

    /// Integer samples too: the memoized point is the one computed afresh
    /// (inside a work-budget scope, where the memo is not used and the
    /// sample spends simplex work), and it satisfies the system.
    #[test]
    fn memoized_samples_equal_fresh_ones() {
        use crate::poly::solver::{integer_sample, System};
        // 1 <= 3x - y <= 2, 0 <= y <= 10: integer points, none at y = 0.
        let mut sys = System::new(2);
        for r in [
            vec![3, -1, -1],
            vec![-3, 1, 2],
            vec![0, 1, 0],
            vec![0, -1, 10],
        ] {
            sys.add_ineq(r);
        }
        let memo1 = integer_sample(&sys).expect("solves");
        let memo2 = integer_sample(&sys).expect("solves");
        let (fresh, spent) = with_work_budget(1 << 40, || integer_sample(&sys));
        assert!(spent.used > 0);
        assert_eq!(memo1, memo2);
        assert_eq!(Ok(memo1.clone()), fresh);
        let p = memo1.expect("a point");
        let v = 3 * p[0] - p[1];
        assert!((1..=2).contains(&v) && (0..=10).contains(&p[1]), "{p:?}");
    }
}
