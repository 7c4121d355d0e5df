//! The atoms of index-set splitting: the affine comparisons on a loop's
//! variable, their cuts (half-lines of the variable), and folding the
//! atoms the facts decide ([`fold_stmts`]) in a piece of a split loop.
//!
//! Must not know about: how the pieces are formed (`split`).

use super::affine::*;
use super::facts::*;
use super::walk::*;
use super::*;
use crate::poly::constraint::gcd128;

/// A cut of a loop over `v`: the half-line `d·v >= e` (`d >= 1`; `e` free
/// of `v` and of the variables bound inside the loop), `e` canonical.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Cut {
    pub(super) e: Affine,
    pub(super) d: i64,
}

/// `>= > <= < == !=`, both operands `Aff` or `Int`), the difference
/// merged; `None` otherwise or on overflow.
pub(super) fn affine_comparison(e: &Expr) -> Option<(BinOp, Affine)> {
    let Expr::Binary(op, a, b) = e else {
        return None;
    };
    if !matches!(
        op,
        BinOp::Ge | BinOp::Gt | BinOp::Le | BinOp::Lt | BinOp::Eq | BinOp::Ne
    ) {
        return None;
    }
    let aff = |x: &Expr| match x {
        Expr::Aff(a) => Some(a.clone()),
        Expr::Int(k) => Some(Affine::cst(*k)),
        _ => None,
    };
    Some((*op, sub_affine(&aff(a)?, &aff(b)?)?))
}

/// Affine `g_k` with `diff op 0 ⇔ ∧_k g_k >= 0` over the integers (for
/// `!=`, those of `==`: the caller negates); `None` on overflow.
pub(super) fn comparison_ineqs(op: BinOp, diff: &Affine) -> Option<Vec<Affine>> {
    let neg = neg_affine(diff)?;
    Some(match op {
        BinOp::Ge => vec![diff.clone()],
        BinOp::Gt => vec![diff.clone().offset(-1)?],
        BinOp::Le => vec![neg],
        BinOp::Lt => vec![neg.offset(-1)?],
        BinOp::Eq | BinOp::Ne => vec![diff.clone(), neg],
        _ => return None,
    })
}

/// True when `a` mentions `v` and every other loop variable it mentions
/// is in `scope`.
pub(super) fn atom_in_scope(a: &Affine, v: LoopVar, scope: &[LoopVar]) -> bool {
    mentions(a, v)
        && a.terms.iter().all(|&(s, c)| match s {
            Sym::Loop(w) => c == 0 || w == v || scope.contains(&w),
            Sym::Param(_) => true,
        })
}

/// The cuts of an atom of a loop over `v` whose outer variables are
/// `scope` (see [`split_loops`]); `None` when `e` is not such an atom or
/// on overflow.
pub(super) fn cuts_of(e: &Expr, v: LoopVar, scope: &[LoopVar]) -> Option<Vec<Cut>> {
    let (op, diff) = affine_comparison(e)?;
    if !atom_in_scope(&diff, v, scope) {
        return None;
    }
    let mut out = Vec::new();
    for g in comparison_ineqs(op, &diff)? {
        let g = merged(&g)?;
        let a: i64 = g
            .terms
            .iter()
            .filter(|(s, _)| *s == Sym::Loop(v))
            .map(|&(_, c)| c)
            .sum();
        let r = Affine {
            terms: g
                .terms
                .iter()
                .filter(|(s, _)| *s != Sym::Loop(v))
                .copied()
                .collect(),
            constant: g.constant,
        };
        let cut = if a > 0 {
            Cut {
                e: neg_affine(&r)?,
                d: a,
            }
        } else {
            Cut {
                e: r.offset(1)?,
                d: a.checked_neg()?,
            }
        };
        out.push(normalize_cut(cut)?);
    }
    Some(out)
}

/// `d·v >= E + c` as `(d/g)·v >= E/g + ⌈c/g⌉` with `g` the gcd of `d`
/// and `E`'s coefficients (exact over the integers), terms canonical.
pub(super) fn normalize_cut(c: Cut) -> Option<Cut> {
    let mut e = canonical(&c.e)?;
    // `g` divides `d >= 1`, so it fits; `i64::MAX` is skipped as before
    // (the former saturated gcd), which keeps the rewrite unchanged.
    let g = e
        .terms
        .iter()
        .fold(i128::from(c.d), |g, &(_, k)| gcd128(g, i128::from(k)));
    let g = i64::try_from(g).unwrap_or(i64::MAX);
    if g <= 1 || g == i64::MAX {
        return Some(Cut { e, d: c.d });
    }
    for t in e.terms.iter_mut() {
        t.1 /= g;
    }
    let q = e.constant.div_euclid(g);
    e.constant = if e.constant.rem_euclid(g) != 0 {
        q.checked_add(1)?
    } else {
        q
    };
    Some(Cut { e, d: c.d / g })
}

/// True when evaluating `e` can neither fail nor have an effect: constants,
/// affine values, locals and comparisons / `&& || !` of those.
pub(super) fn infallible(e: &Expr) -> bool {
    match e {
        Expr::Int(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => true,
        Expr::Unary(crate::vocab::UnOp::Not, a) => infallible(a),
        Expr::Binary(op, a, b) => {
            matches!(
                op,
                BinOp::And
                    | BinOp::Or
                    | BinOp::Eq
                    | BinOp::Ne
                    | BinOp::Lt
                    | BinOp::Le
                    | BinOp::Gt
                    | BinOp::Ge
            ) && infallible(a)
                && infallible(b)
        }
        _ => false,
    }
}

/// Decides the atom `e` (see [`split_loops`]) of a loop over `v` from the
/// facts: `Some(true)` / `Some(false)` when they imply it / its negation.
pub(super) fn decide(facts: &Facts, e: &Expr, v: LoopVar, scope: &[LoopVar]) -> Option<bool> {
    let (op, diff) = affine_comparison(e)?;
    if !atom_in_scope(&diff, v, scope) {
        return None;
    }
    let rows: Vec<Vec<i64>> = comparison_ineqs(op, &diff)?
        .iter()
        .map(|g| facts.row(g))
        .collect::<Option<_>>()?;
    // g >= 0 fails (over the integers) iff −g − 1 >= 0.
    let fails = |r: &Vec<i64>| -> bool {
        let Some(mut n) = neg_row(r) else {
            return false;
        };
        match n.last_mut().and_then(|c| c.checked_sub(1)) {
            Some(c) => {
                if let Some(last) = n.last_mut() {
                    *last = c;
                }
                facts.implies(&[], &n)
            }
            None => false,
        }
    };
    let holds = if rows.iter().all(|r| facts.implies(&[], r)) {
        Some(true)
    } else if rows.iter().any(fails) {
        Some(false)
    } else {
        None
    };
    if op == BinOp::Ne {
        holds.map(|b| !b)
    } else {
        holds
    }
}

/// Folds the decided atoms of `e` (see [`split_loops`]); `n` counts them.
pub(super) fn fold_expr(
    facts: &Facts,
    e: Expr,
    v: LoopVar,
    scope: &[LoopVar],
    n: &mut usize,
) -> Expr {
    if affine_comparison(&e).is_some() {
        return match decide(facts, &e, v, scope) {
            Some(b) => {
                *n += 1;
                Expr::Bool(b)
            }
            None => e,
        };
    }
    let mut f = |x: Expr| fold_expr(facts, x, v, scope, n);
    match e {
        Expr::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
            let x = f(*a);
            fold_lazy(op, x, f(*b))
        }
        Expr::Unary(crate::vocab::UnOp::Not, a) => match f(*a) {
            Expr::Bool(b) => Expr::Bool(!b),
            x => Expr::Unary(crate::vocab::UnOp::Not, Box::new(x)),
        },
        Expr::Select(c, a, b) => match f(*c) {
            Expr::Bool(true) => f(*a),
            Expr::Bool(false) => f(*b),
            c => {
                let a = f(*a);
                Expr::select(c, a, f(*b))
            }
        },
        e => map_children(e, f),
    }
}

/// `x op y` for a lazy `op` (`&&`, whose absorbing value is `false`, or
/// `||`, `true`) with folded operands: `absorbing op y → absorbing`,
/// `neutral op y → y`, `x op neutral → x`, `x op absorbing → absorbing`
/// only when `x` is infallible (`y` is not evaluated when `x` is
/// absorbing, and `x`'s failures must stay).
fn fold_lazy(op: BinOp, x: Expr, y: Expr) -> Expr {
    let absorbing = op == BinOp::Or;
    match (x, y) {
        (Expr::Bool(x), _) if x == absorbing => Expr::Bool(absorbing),
        (Expr::Bool(_), y) => y,
        (x, Expr::Bool(y)) if y != absorbing => x,
        (x, Expr::Bool(_)) if infallible(&x) => Expr::Bool(absorbing),
        (x, y) => Expr::bin(op, x, y),
    }
}

/// Folds the decided atoms of the statements; an `if` whose condition is
/// decided is replaced by the branch taken.
pub(super) fn fold_stmts(
    facts: &Facts,
    body: Vec<Stmt>,
    v: LoopVar,
    scope: &[LoopVar],
    n: &mut usize,
) -> Vec<Stmt> {
    rewrite_stmts(&mut Fold { facts, v, scope, n }, body)
}

/// The rewrite of [`fold_stmts`] in a loop over `v` whose outer variables
/// are `scope`; `n` counts the atoms decided.
struct Fold<'a> {
    facts: &'a Facts,
    v: LoopVar,
    scope: &'a [LoopVar],
    n: &'a mut usize,
}

impl Fold<'_> {
    fn expr(&mut self, e: Expr) -> Expr {
        fold_expr(self.facts, e, self.v, self.scope, self.n)
    }
}

impl StmtRewrite for Fold<'_> {
    fn on_for(&mut self, l: ForLoop, out: &mut Vec<Stmt>) {
        let l = l.map_body(|b| rewrite_stmts(self, b));
        // A loop that does nothing goes (its bounds are affine:
        // evaluating them cannot fail).
        if !l.body.is_empty() {
            out.push(Stmt::For(l));
        }
    }

    /// The guard and value are folded (the piece's facts hold where the
    /// binding stands, and in its body); a binding whose guard folds to
    /// `false` goes (evaluating it could not fail: see `fold_lazy`).
    fn on_bind(&mut self, b: Binding, out: &mut Vec<Stmt>) {
        let guard = self.expr(b.guard);
        if guard == Expr::Bool(false) {
            return;
        }
        let value = self.expr(b.value);
        let body = rewrite_stmts(self, b.body);
        out.push(Stmt::from(Binding {
            guard,
            value,
            body,
            ..b
        }));
    }

    fn on_if(&mut self, cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>, out: &mut Vec<Stmt>) {
        match self.expr(cond) {
            Expr::Bool(true) => out.extend(rewrite_stmts(self, then)),
            Expr::Bool(false) => out.extend(rewrite_stmts(self, els)),
            cond => {
                let then = rewrite_stmts(self, then);
                let els = rewrite_stmts(self, els);
                // An `if` that does nothing goes when evaluating its
                // condition cannot fail.
                if !(then.is_empty() && els.is_empty() && infallible(&cond)) {
                    out.push(Stmt::If { cond, then, els });
                }
            }
        }
    }

    fn on_leaf(&mut self, s: Stmt, out: &mut Vec<Stmt>) {
        out.push(map_leaf_exprs(s, |x| self.expr(x)).unwrap_or_else(|s| s));
    }
}
