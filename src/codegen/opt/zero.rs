//! Rewrite 7: sums of terms that vanish where an int datum is zero
//! ([`skip_zero_terms`]) — the sparsity a hand-written DMM sampler gets by
//! keeping each document as its non-zero terms.
//!
//! Must not know about: facts, the solver, accumulators.

use super::sparse::overflow_only;
use super::walk::*;
use super::*;
use crate::codegen::loop_ast::{Cast, MathFn};
use crate::vocab::{ElemType, UnOp};

/// Lower bound of the band where the guarded math functions are finite.
const FINITE_LO: f64 = 1e-300;
/// Upper bound of that band.
const FINITE_HI: f64 = 1e300;
/// Below this, `exp` is finite.
const EXP_HI: f64 = 700.0;

/// Skips the float sum terms `f(u') − f(u)` at the points where an int
/// datum they add is zero.
///
/// Rule: a float update `s = s + E` (`s` a local, or `A[x] = A[x] + E`
/// with the load at the syntactically same affine index, or `A[x] += E`)
/// where `E = f(u') − f(u)`, `f` one of `lgamma`, `log`, `exp`, and `u'`
/// contains an int expression `R` such that `u'` with `R := 0`
/// simplifies to `u`: `R` an affine load of an int array, or, when
/// nothing in `u'` and `u` can fail but by an integer overflow, the
/// operand of a cast `float(R)` that evaluating `u'` always evaluates
/// (through float `+ − * /` and negation only; `R = n[x] + (c ? 1 : 0)`,
/// a final count read as a running count plus its last step). The
/// simplifications are `x + 0`, `0 + x`, `x − 0` on ints; an int constant
/// to float; `+ − *` of two float constants, folded in IEEE double, as the
/// JIT computes them; then syntactically equal, float constants bit for
/// bit), becomes
///
/// ```text
/// if (R != 0 || !fin_f(u)) S
/// ```
///
/// with `fin_f(u)` = `1e-300 <= u && u <= 1e300` for `lgamma` and `log`
/// (`m >= 0` when `u = float(m) + b` with `1e-300 <= b <= 1e299`: then
/// `b <= u < b + 1e19`), `u <= 700` for `exp`. `u'` and `u` contain no
/// draw, categorical or external call. A term `E = c ? E' : 0.0` (`c`
/// without a draw, categorical or external call, `E'` of that form) makes
/// `if (c && (R != 0 || !fin_f(u))) S'` with `S'` adding `E'`: where `c`
/// is false the original adds `+0.0`, where it holds it adds `E'`.
///
/// Why this is exact: when `R != 0` (an affine load: it cannot fail under
/// the access contract and has no effect) `S` runs as before. (A cast
/// operand `R` has no effect either; where it overflows, the original
/// fails too, by an overflow, since it evaluates `R` in `u'` and
/// everything it evaluates before can fail only by an overflow.) When `R ==
/// 0`, `u'` evaluates the operations of `u` on the same values, plus
/// additions of an int `0` (which cannot overflow) and constant folds the
/// JIT computes identically, so `u'` and `u` have the same value and fail
/// (overflow) at the same operation; the guard evaluates `u` first (or
/// `m`, which holds every operation of `u = float(m) + b` that may fail),
/// so it fails where the original fails. When `fin_f(u)` holds, `f(u)` is
/// finite
/// (`runtime::math::lgamma` is finite on `[1e-300, 1e300]`: the reflection
/// formula's `π / |sin πx|` stays below `1e301` there and the Lanczos sum
/// is positive; `ln` is finite on positive finite numbers; `exp` below
/// `709.78`), so `E = f(u) − f(u) = +0.0` and `s + 0.0 = s` except that a
/// `−0.0` sum would become `+0.0` (equal values; the optimizer's accepted
/// difference, as for sparse updates). Otherwise the guard lets `S` run.
/// The rewrite evaluates `u` twice only where `R == 0` and `fin_f(u)`
/// fails; `c` is evaluated once, first, as in the original.
///
/// Returns the number of updates guarded.
pub fn skip_zero_terms(f: &mut Function) -> usize {
    let mut z = Zero {
        arrays: f.arrays.iter().map(|a| a.ty).collect(),
        locals: f.locals.iter().map(|l| l.ty).collect(),
        guarded: 0,
    };
    f.body = rewrite_stmts(&mut z, std::mem::take(&mut f.body));
    z.guarded
}

/// The rewrite of [`skip_zero_terms`]: the element types of the arrays
/// and locals, and the number of updates guarded.
struct Zero {
    arrays: Vec<ElemType>,
    locals: Vec<ElemType>,
    guarded: usize,
}

impl StmtRewrite for Zero {
    fn on_leaf(&mut self, s: Stmt, out: &mut Vec<Stmt>) {
        match self.term(&s).and_then(|e| self.guard(e)) {
            Some(cond) => {
                self.guarded += 1;
                out.push(Stmt::If {
                    cond,
                    then: vec![unselect(s)],
                    els: vec![],
                });
            }
            None => out.push(s),
        }
    }
}

impl Zero {
    /// The term `E` a float update `s = s + E`, `A[x] = A[x] + E` or
    /// `A[x] += E` adds (`x` affine).
    fn term<'a>(&self, s: &'a Stmt) -> Option<&'a Expr> {
        match s {
            Stmt::SetLocal { local, value } => {
                if self.locals.get(*local)? != &ElemType::Float {
                    return None;
                }
                match value {
                    Expr::Binary(BinOp::Add, a, e) if **a == Expr::Local(*local) => Some(e),
                    _ => None,
                }
            }
            Stmt::Assign {
                array,
                index,
                value,
            } => {
                if !self.float_affine(*array, index) {
                    return None;
                }
                match value {
                    Expr::Binary(BinOp::Add, a, e)
                        if **a
                            == (Expr::Load {
                                array: *array,
                                index: index.clone(),
                            }) =>
                    {
                        Some(e)
                    }
                    _ => None,
                }
            }
            Stmt::Accumulate(acc) if acc.op == ReduceOp::Add => self
                .float_affine(acc.array, &acc.index)
                .then_some(&acc.value),
            _ => None,
        }
    }

    /// `array` holds floats and `index` is affine.
    fn float_affine(&self, array: ArrayId, index: &[Expr]) -> bool {
        self.arrays.get(array) == Some(&ElemType::Float) && index.iter().all(is_affine_index)
    }

    /// The guard `R != 0 || !fin_f(u)` of the term `e`, when it has the
    /// form of the rule.
    fn guard(&self, e: &Expr) -> Option<Expr> {
        if let Expr::Select(c, t, z) = e {
            // `c ? T : 0.0` adds nothing where `c` is false
            if !matches!(**z, Expr::Float(x) if x.to_bits() == 0) || !plain(c) {
                return None;
            }
            return Some(Expr::bin(BinOp::And, (**c).clone(), self.guard(t)?));
        }
        let Expr::Binary(BinOp::Sub, fa, fb) = e else {
            return None;
        };
        let (Expr::Math(f, a), Expr::Math(g, b)) = (&**fa, &**fb) else {
            return None;
        };
        if f != g || a.len() != 1 || b.len() != 1 {
            return None;
        }
        let (u2, u) = (&a[0], &b[0]);
        if !plain(u2) || !plain(u) {
            return None;
        }
        let fin = finite_band(*f, u)?;
        // a constant `u`: the band decided now
        let fin = match (u, &fin) {
            (Expr::Float(_), _) if decide(&fin)? => None,
            _ => Some(fin),
        };
        let mut cands = Vec::new();
        int_loads(u2, &self.arrays, &mut cands);
        // the int operands of casts `u'` always evaluates, when nothing in
        // `u'` or `u` can fail but by an overflow
        if overflow_only(u2) && overflow_only(u) {
            cast_operands(u2, &mut cands);
        }
        let r = cands
            .into_iter()
            .find(|r| same(&simplify(substitute(u2.clone(), r)), u))?;
        let nonzero = Expr::bin(BinOp::Ne, r, Expr::Int(0));
        Some(match fin {
            Some(fin) => Expr::bin(BinOp::Or, nonzero, Expr::Unary(UnOp::Not, Box::new(fin))),
            None => nonzero,
        })
    }
}

/// The update `s` with a term `c ? E' : 0.0` replaced by `E'` (under the
/// guard, `c` holds and has no effect).
fn unselect(s: Stmt) -> Stmt {
    let strip = |e: Expr| match e {
        Expr::Select(_, t, _) => *t,
        other => other,
    };
    let add = |v: Expr| match v {
        Expr::Binary(BinOp::Add, a, e) => Expr::Binary(BinOp::Add, a, Box::new(strip(*e))),
        other => other,
    };
    match s {
        Stmt::SetLocal { local, value } => Stmt::SetLocal {
            local,
            value: add(value),
        },
        Stmt::Assign {
            array,
            index,
            value,
        } => Stmt::Assign {
            array,
            index,
            value: add(value),
        },
        Stmt::Accumulate(acc) => Stmt::Accumulate(Accumulation {
            value: strip(acc.value),
            ..acc
        }),
        other => other,
    }
}

/// An affine index: an affine expression or an int constant.
fn is_affine_index(e: &Expr) -> bool {
    matches!(e, Expr::Aff(_) | Expr::Int(_))
}

/// `fin_f(u)`: a condition under which `f(u)` is finite (see
/// [`skip_zero_terms`]); `None` for the other functions.
fn finite_band(f: MathFn, u: &Expr) -> Option<Expr> {
    // `float(m) + b` with `b` in the band, far below its top: `m >= 0`
    // suffices (`0 <= float(m) < 2^63`, so `b <= u < b + 1e19`)
    if let (MathFn::Lgamma | MathFn::Log, Expr::Binary(BinOp::Add, a, b)) = (f, u) {
        if let (Expr::Cast(Cast::IntToFloat, m), Expr::Float(c)) = (&**a, &**b) {
            if (FINITE_LO..=1e299).contains(c) {
                return Some(Expr::bin(BinOp::Ge, (**m).clone(), Expr::Int(0)));
            }
        }
    }
    match f {
        MathFn::Lgamma | MathFn::Log => Some(Expr::bin(
            BinOp::And,
            Expr::bin(BinOp::Ge, u.clone(), Expr::Float(FINITE_LO)),
            Expr::bin(BinOp::Le, u.clone(), Expr::Float(FINITE_HI)),
        )),
        MathFn::Exp => Some(Expr::bin(BinOp::Le, u.clone(), Expr::Float(EXP_HI))),
        _ => None,
    }
}

/// The value of a band condition of [`finite_band`] over a float
/// constant (`None` for another form).
fn decide(c: &Expr) -> Option<bool> {
    match c {
        Expr::Binary(BinOp::And, a, b) => Some(decide(a)? && decide(b)?),
        Expr::Binary(op @ (BinOp::Ge | BinOp::Le), a, b) => match (&**a, &**b) {
            (Expr::Float(x), Expr::Float(y)) => {
                Some(if *op == BinOp::Ge { x >= y } else { x <= y })
            }
            _ => None,
        },
        _ => None,
    }
}

/// `e` is made of constants, affine values, locals, loads, operators,
/// casts and math functions only (no draw, categorical or external call).
fn plain(e: &Expr) -> bool {
    !matches!(
        e,
        Expr::Random(_) | Expr::Categorical(_) | Expr::External { .. }
    ) && e.children().into_iter().all(plain)
}

/// The distinct affine loads of int arrays in the plain expression `e`,
/// in order of appearance.
fn int_loads(e: &Expr, types: &[ElemType], out: &mut Vec<Expr>) {
    if let Expr::Load { array, index } = e {
        if types.get(*array) == Some(&ElemType::Int)
            && index.iter().all(is_affine_index)
            && !out.contains(e)
        {
            out.push(e.clone());
        }
    }
    for c in e.children() {
        int_loads(c, types, out);
    }
}

/// The int operands `m` of the casts `float(m)` that evaluating `e`
/// always evaluates (reached from `e` through float `+ − * /` and
/// negation only: not under a `select` branch or a lazy operator), in
/// order of appearance.
fn cast_operands(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Cast(Cast::IntToFloat, m) if !out.contains(m) => out.push((**m).clone()),
        Expr::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div, a, b) => {
            cast_operands(a, out);
            cast_operands(b, out);
        }
        Expr::Unary(UnOp::Neg, a) => cast_operands(a, out),
        _ => {}
    }
}

/// `e` with every occurrence of the int expression `r` replaced by `0`.
fn substitute(e: Expr, r: &Expr) -> Expr {
    if &e == r {
        return Expr::Int(0);
    }
    map_children(e, |c| substitute(c, r))
}

/// The int-zero and float-constant simplifications of [`skip_zero_terms`],
/// bottom-up.
fn simplify(e: Expr) -> Expr {
    match map_children(e, simplify) {
        Expr::Binary(BinOp::Add, a, b) if *b == Expr::Int(0) => *a,
        Expr::Binary(BinOp::Add, a, b) if *a == Expr::Int(0) => *b,
        Expr::Binary(BinOp::Sub, a, b) if *b == Expr::Int(0) => *a,
        Expr::Cast(Cast::IntToFloat, a) => match *a {
            // exact: |n| <= 2^53
            Expr::Int(n) if n.unsigned_abs() <= 1 << 53 => Expr::Float(n as f64),
            other => Expr::Cast(Cast::IntToFloat, Box::new(other)),
        },
        Expr::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => match (*a, *b) {
            (Expr::Float(x), Expr::Float(y)) => Expr::Float(match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                _ => x * y,
            }),
            (a, b) => Expr::bin(op, a, b),
        },
        other => other,
    }
}

/// Syntactic equality with float constants compared bit for bit (the
/// derived `==` takes `0.0` for `-0.0`).
fn same(a: &Expr, b: &Expr) -> bool {
    let (mut fa, mut fb) = (Vec::new(), Vec::new());
    float_bits(a, &mut fa);
    float_bits(b, &mut fb);
    a == b && fa == fb
}

/// The bits of the float constants of the plain expression `e`, in order.
fn float_bits(e: &Expr, out: &mut Vec<u64>) {
    if let Expr::Float(x) = e {
        out.push(x.to_bits());
    }
    for c in e.children() {
        float_bits(c, out);
    }
}
