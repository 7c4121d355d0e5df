//! Count arrays: int arrays whose values stay small because every value
//! ever stored in them is an initial constant (or a copy of another count
//! array) moved by small steps a bounded number of times. The fast
//! variant adds to their loads without an overflow test (a sampler's
//! count updates `n[w][z] = n[w][z] + 1`, its leave-one-out
//! `n[w][z] − 1`), when the bound, evaluated for the run's parameters,
//! is far from `i64`'s limits.
//!
//! An int array `A` is a count array when
//! 1. the first top-level statement that mentions `A` (reads or writes
//!    it, anywhere inside) is an *initialization*: a nest of `for` loops,
//!    each body exactly the next loop, around the single statement `A[x] =
//!    v`, whose index covers `A`'s box — index `k` is either a loop
//!    variable (each of the nest's variables once) whose bounds are
//!    exactly `[lo_k, lo_k + extent_k − 1]`, or the constant `lo_k` with
//!    `extent_k = 1` — and `v` is an int constant or a load of a count
//!    array initialized before;
//! 2. every other statement that writes `A` is a *step* `A[x] = A[y] + e`,
//!    `A[x] = e + A[y]`, `A[x] = A[y] − e` or `A[x] += e`, `e` *small*: an
//!    int constant or a `?:` of two, each at most [`SMALL`] in magnitude.
//!
//! Why the values stay bounded: after the initialization every cell of `A`
//! holds the constant `c` (or a value of the count array `B` it copies,
//! at most `bound(B)` in magnitude, since `B` satisfies this at all times
//! after its own initialization, which came first), and nothing read `A`
//! before (the initialization is the first statement mentioning it, and a
//! top-level statement completes before the next). A step stores the
//! value of some cell plus or minus at most `m_s`, so the largest
//! magnitude over `A`'s cells grows by at most `m_s` per execution of
//! step `s`: `|A| <= |c| + Σ_s m_s · runs(s)`. `runs(s)`, the number of
//! executions of `s`, is at most the product of the trip counts of its
//! enclosing loops (a binding or a branch runs at most once per
//! iteration), which the interval analysis bounds for the run's
//! parameters ([`super::analyse`]); the run uses the fast variant only
//! when every count array's bound is at most [`LIMIT`]. Then a load of
//! `A` plus or minus a small value is at most `2^61 + 2^61 < 2^63` in
//! magnitude: the sum cannot overflow, and the fast variant does not test
//! it (`lower::expr`, `lower::loops`). The checked variant tests every
//! sum.
//!
//! Must not know about: Cranelift.

use crate::codegen::loop_ast::{
    Accumulation, Affine, ArrayId, BinOp, Bound, Expr, ForLoop, Function, ReduceOp, Stmt, Sym,
};
use crate::vocab::ElemType;

/// The largest magnitude of a small step, and of a count array's bound
/// for the fast variant: their sum is below `2^63`.
pub(crate) const SMALL: i128 = 1 << 61;
/// See [`SMALL`].
pub(crate) const LIMIT: i128 = 1 << 61;

/// The count arrays of a function, each with what its initialization
/// stores (see the module comment).
#[derive(Debug, Clone, Default)]
pub(crate) struct Counts {
    arrays: Vec<(ArrayId, Base)>,
}

/// What a count array's initialization stores.
#[derive(Debug, Clone, Copy)]
enum Base {
    Const(i128),
    Copy(ArrayId),
}

impl Counts {
    /// The count arrays of `f`.
    pub(crate) fn of(f: &Function) -> Counts {
        let mut counts = Counts::default();
        for (a, arr) in f.arrays.iter().enumerate() {
            if arr.ty != ElemType::Int {
                continue;
            }
            let Some(first) = f.body.iter().position(|s| mentions(s, a)) else {
                continue;
            };
            let Some(base) = initialization(f, &f.body[first], a) else {
                continue;
            };
            if let Base::Copy(b) = base {
                // `b` must be initialized by an earlier top-level statement.
                let earlier = f.body[..first].iter().any(|s| mentions(s, b));
                if !earlier {
                    continue;
                }
            }
            let others_step = f
                .body
                .iter()
                .enumerate()
                .all(|(i, s)| i == first || writes_only_by_steps(s, a));
            if others_step {
                counts.arrays.push((a, base));
            }
        }
        // A copy's source must itself be a count array (accepted above,
        // in any order): drop copies of others, until none is left.
        loop {
            let ids: Vec<ArrayId> = counts.arrays.iter().map(|x| x.0).collect();
            let before = counts.arrays.len();
            counts
                .arrays
                .retain(|(_, b)| !matches!(b, Base::Copy(s) if !ids.contains(s)));
            if counts.arrays.len() == before {
                break;
            }
        }
        counts
    }

    /// Whether `a` is a count array.
    pub(crate) fn contains(&self, a: ArrayId) -> bool {
        self.arrays.iter().any(|x| x.0 == a)
    }

    /// Per array of `n`, whether it is a count array (none unless `on`).
    pub(crate) fn mask(&self, n: usize, on: bool) -> Vec<bool> {
        (0..n).map(|a| on && self.contains(a)).collect()
    }

    /// Whether every count array's bound fits: `growth[a]` is `Σ_s m_s ·
    /// runs(s)` over the steps of `a` (saturating).
    pub(crate) fn fit(&self, growth: &[i128]) -> bool {
        let mut bounds: Vec<(ArrayId, i128)> = Vec::new();
        // A source's initialization comes first, but its bound is kept
        // whatever the order: look it up among the computed ones.
        let mut pending: Vec<(ArrayId, Base)> = self.arrays.clone();
        while !pending.is_empty() {
            let before = pending.len();
            pending.retain(|&(a, base)| {
                let start = match base {
                    Base::Const(c) => Some(c.abs()),
                    Base::Copy(s) => bounds.iter().find(|x| x.0 == s).map(|x| x.1),
                };
                match start {
                    Some(s) => {
                        let g = growth.get(a).copied().unwrap_or(i128::MAX);
                        bounds.push((a, s.saturating_add(g)));
                        false
                    }
                    None => true,
                }
            });
            if pending.len() == before {
                return false; // a cycle of copies: no bound
            }
        }
        bounds.iter().all(|&(_, b)| b <= LIMIT)
    }
}

/// The array a statement steps and the step's largest magnitude `m` (see
/// the module comment), when it is a step.
pub(crate) fn step(s: &Stmt) -> Option<(ArrayId, i128)> {
    match s {
        Stmt::Assign {
            array,
            index: _,
            value: Expr::Binary(op, x, y),
        } => {
            let own = |e: &Expr| matches!(e, Expr::Load { array: b, .. } if b == array);
            let m = match op {
                BinOp::Add if own(x) => small(y)?,
                BinOp::Add if own(y) => small(x)?,
                BinOp::Sub if own(x) => small(y)?,
                _ => return None,
            };
            Some((*array, m))
        }
        Stmt::Accumulate(Accumulation {
            array,
            op: ReduceOp::Add,
            value,
            ..
        }) => Some((*array, small(value)?)),
        _ => None,
    }
}

/// The largest magnitude of a small value: an int constant or a `?:` of
/// two, at most [`SMALL`] in magnitude.
pub(crate) fn small(e: &Expr) -> Option<i128> {
    let m = match e {
        Expr::Int(c) => i128::from(*c).abs(),
        Expr::Select(_, a, b) => match (&**a, &**b) {
            (Expr::Int(x), Expr::Int(y)) => i128::from(*x).abs().max(i128::from(*y).abs()),
            _ => return None,
        },
        _ => return None,
    };
    (m <= SMALL).then_some(m)
}

/// What the initialization `s` of `a` stores, if it is one (rule 1).
fn initialization(f: &Function, s: &Stmt, a: ArrayId) -> Option<Base> {
    let mut loops: Vec<&ForLoop> = Vec::new();
    let mut cur = s;
    while let Stmt::For(l) = cur {
        let [inner] = l.body.as_slice() else {
            return None;
        };
        loops.push(l);
        cur = inner;
    }
    let Stmt::Assign {
        array,
        index,
        value,
    } = cur
    else {
        return None;
    };
    let dims = &f.arrays.get(a)?.dims;
    if *array != a || index.len() != dims.len() {
        return None;
    }
    let mut used = vec![false; loops.len()];
    for (x, d) in index.iter().zip(dims) {
        let lo = d.lower.canonical()?;
        let hi = d.upper()?.canonical()?;
        let x = match x {
            Expr::Int(c) => Affine::cst(*c),
            Expr::Aff(e) => e.canonical()?,
            _ => return None,
        };
        match x.terms.as_slice() {
            [] => {
                // The constant `lo_k` of a dimension of one point.
                if x != lo || d.extent.canonical()? != Affine::cst(1) {
                    return None;
                }
            }
            [(Sym::Loop(v), 1)] if x.constant == 0 => {
                let j = loops.iter().position(|l| l.var == *v)?;
                if used[j] || !exactly(&loops[j].lower, &lo) || !exactly(&loops[j].upper, &hi) {
                    return None;
                }
                used[j] = true;
            }
            _ => return None,
        }
    }
    if !used.iter().all(|&u| u) {
        return None;
    }
    match value {
        Expr::Int(c) => Some(Base::Const(i128::from(*c))),
        Expr::Load { array: b, index } if *b != a && index.iter().all(|e| !reads(e, a)) => {
            Some(Base::Copy(*b))
        }
        _ => None,
    }
}

/// The bound is the single affine value `e` (canonical).
fn exactly(b: &Bound, e: &Affine) -> bool {
    b.as_affine()
        .and_then(Affine::canonical)
        .is_some_and(|x| &x == e)
}

/// Whether `s` reads or writes `a` anywhere.
fn mentions(s: &Stmt, a: ArrayId) -> bool {
    let mut found = writes(s, a);
    crate::codegen::loop_ast::for_each_stmt_expr(std::slice::from_ref(s), &mut |e| {
        found |= reads(e, a);
    });
    found
}

/// Whether `e` reads `a`.
fn reads(e: &Expr, a: ArrayId) -> bool {
    matches!(e, Expr::Load { array, .. } if *array == a)
        || e.children().into_iter().any(|x| reads(x, a))
}

/// Whether a statement of `s` writes `a`.
fn writes(s: &Stmt, a: ArrayId) -> bool {
    let mut found = false;
    visit_stmts(s, &mut |x| {
        if let Stmt::Assign { array, .. } | Stmt::Accumulate(Accumulation { array, .. }) = x {
            found |= *array == a;
        }
    });
    found
}

/// Whether every statement of `s` that writes `a` is a step of `a`.
fn writes_only_by_steps(s: &Stmt, a: ArrayId) -> bool {
    let mut ok = true;
    visit_stmts(s, &mut |x| {
        if let Stmt::Assign { array, .. } | Stmt::Accumulate(Accumulation { array, .. }) = x {
            if *array == a && step(x).is_none() {
                ok = false;
            }
        }
    });
    ok
}

/// `visit` on `s` and every statement nested in it.
fn visit_stmts<'a>(s: &'a Stmt, visit: &mut impl FnMut(&'a Stmt)) {
    visit(s);
    let inner: &[Stmt] = match s {
        Stmt::For(l) => &l.body,
        Stmt::Block(b) => b,
        Stmt::Bind(b) => &b.body,
        Stmt::If { then, els, .. } => {
            then.iter().for_each(|x| visit_stmts(x, visit));
            els
        }
        Stmt::Assign { .. } | Stmt::Accumulate(_) | Stmt::SetLocal { .. } => &[],
    };
    inner.iter().for_each(|x| visit_stmts(x, visit));
}
