//! The loop AST: an explicit, imperative program over dense arrays — the
//! target of polyhedral scanning and the input of the JIT (`crate::jit`).
//!
//! Owns: the data types of a loop program ([`Function`], [`Stmt`],
//! [`Expr`], affine [`Affine`] expressions and loop [`Bound`]s), their
//! static check ([`Function::check`]) and a deterministic C-like printer
//! ([`Function::to_c`]).
//!
//! Files: this one holds the types and their constructors; `check` the
//! static check and typing, `print` the C-like printer, `parallel` the
//! proof that a loop's iterations are independent and the marking of
//! parallel loops, `writes` what a statement list writes and binds.
//!
//! Must not know about: schedules, dependences, Cranelift, the source
//! syntax. It reads only `ElemType` from the IR; domains are `poly::Set`s.
//!
//! # Memory model
//! Every array is a dense row-major buffer over the bounding box of its
//! variable's domain: dimension `k` ranges over
//! `lo_k ..= lo_k + extent_k - 1` where `lo_k` and `extent_k` are affine
//! functions of the parameters; element `x` is at offset
//! `Σ_k (x_k − lo_k)·stride_k` with `stride_k = Π_{j>k} extent_j`.
//!
//! # The access contract
//! An access (load, store, accumulation) is *affine* when every index is an
//! [`Expr::Aff`] or [`Expr::Int`]; otherwise it is *data-dependent*.
//! - Data-dependent accesses are always checked at run time: their
//!   data-dependent indices against the array's box and, when the array
//!   has a `domain`, the whole point against that domain predicate; a
//!   failure is a run-time error naming the array and the point (never
//!   undefined behaviour).
//! - Affine accesses, and the affine indices of data-dependent ones, are
//!   the scanner's responsibility: it only emits statement instances
//!   inside their domains, and domains are inside the boxes, so they are
//!   in bounds *by construction*. The JIT does not trust this blindly:
//!   before a run it proves it with an interval analysis for the given
//!   parameters, and falls back to a variant that checks every index of
//!   every access when the proof fails (a violated contract is then
//!   reported as an error). A checked mode that checks every access is
//!   available for tests.
//!
//! # Semantics of the operations
//! - Int arithmetic (`+ - *`, negation, `abs`, division) on data is
//!   checked: overflow and division by zero are run-time errors. Affine
//!   expressions ([`Affine`], loop bounds) are evaluated in `i64`; the JIT
//!   proves before a run that they cannot overflow for the given
//!   parameters.
//! - `Div`/`Rem` on ints truncate (like Rust); `FloorDiv`, `CeilDiv` round
//!   toward −∞ / +∞; `Mod` is the floor remainder (sign of the divisor).
//! - `Min`/`Max` on floats follow IEEE 754-2019 `minimum`/`maximum`: a NaN
//!   operand gives NaN, and `−0 < +0`.
//! - `And`, `Or` and `Select` evaluate lazily (only the operand that is
//!   needed), so a guard can protect a data-dependent read.
//! - Comparisons of floats follow IEEE (`Ne` is true when either is NaN).
//! - `FloatToInt` truncates toward zero and saturates (NaN gives 0), like
//!   Rust's `as`.
//! - `Random` and `Categorical` are counter-based draws, pure functions of
//!   `(seed, site, point)` and their arguments (`runtime::rng`); invalid
//!   arguments are run-time errors. `External` calls the implementation
//!   supplied for the run (float arguments, float result); a missing one is
//!   a run-time error when the call executes.

mod check;
pub mod parallel;
mod print;
mod writes;

use crate::poly::{ConstraintKind, Set};
pub use crate::vocab::{Distribution, ElemType, ReduceOp, UnOp};
pub use check::{binop_type, AstError};
pub use writes::{bound_vars, Writes};

/// Maximum number of dimensions of an array (the size of the error slot's
/// point record).
pub const MAX_DIMS: usize = 8;

/// A loop variable: an index into [`Function::loop_vars`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LoopVar(pub usize);

/// Index into [`Function::arrays`].
pub type ArrayId = usize;
/// Index into [`Function::locals`].
pub type LocalId = usize;
/// Index into [`Function::params`].
pub type ParamId = usize;

/// A symbol an affine expression may mention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sym {
    Loop(LoopVar),
    Param(ParamId),
}

/// An affine function of loop variables and parameters:
/// `constant + Σ coeff·sym` (evaluated left to right).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Affine {
    pub terms: Vec<(Sym, i64)>,
    pub constant: i64,
}

impl Affine {
    /// The constant function `c`.
    pub fn cst(c: i64) -> Affine {
        Affine {
            terms: Vec::new(),
            constant: c,
        }
    }
    /// The loop variable `v`.
    pub fn var(v: LoopVar) -> Affine {
        Affine {
            terms: vec![(Sym::Loop(v), 1)],
            constant: 0,
        }
    }
    /// The parameter `p`.
    pub fn param(p: ParamId) -> Affine {
        Affine {
            terms: vec![(Sym::Param(p), 1)],
            constant: 0,
        }
    }
    /// `self + c·sym`.
    pub fn plus(mut self, sym: Sym, c: i64) -> Affine {
        self.terms.push((sym, c));
        self
    }
    /// `self + c`; `None` on overflow of the constant.
    pub fn offset(mut self, c: i64) -> Option<Affine> {
        self.constant = self.constant.checked_add(c)?;
        Some(self)
    }
    /// Value for given loop-variable and parameter values (`loops[v.0]`,
    /// `params[p]`); `None` on overflow or an unknown symbol.
    pub fn eval(&self, loops: &[i64], params: &[i64]) -> Option<i64> {
        let mut v = self.constant;
        for &(s, c) in &self.terms {
            let x = match s {
                Sym::Loop(l) => *loops.get(l.0)?,
                Sym::Param(p) => *params.get(p)?,
            };
            v = v.checked_add(c.checked_mul(x)?)?;
        }
        Some(v)
    }
    /// `self` with equal symbols merged (first occurrence order) and zero
    /// coefficients dropped; `None` on overflow.
    pub fn merged(&self) -> Option<Affine> {
        let mut terms: Vec<(Sym, i64)> = Vec::new();
        for &(s, c) in &self.terms {
            match terms.iter_mut().find(|(t, _)| *t == s) {
                Some((_, k)) => *k = k.checked_add(c)?,
                None => terms.push((s, c)),
            }
        }
        terms.retain(|&(_, c)| c != 0);
        Some(Affine {
            terms,
            constant: self.constant,
        })
    }
    /// Canonical form for comparing affine functions: merged and sorted
    /// (equal canonical forms: the same function).
    pub fn canonical(&self) -> Option<Affine> {
        let mut m = self.merged()?;
        m.terms.sort();
        Some(m)
    }
    /// True when no loop variable occurs (with a non-zero coefficient).
    pub fn is_param_only(&self) -> bool {
        self.terms
            .iter()
            .all(|&(s, c)| c == 0 || matches!(s, Sym::Param(_)))
    }
}

/// One term of a loop bound: `e / div` rounded (up for lower bounds, down
/// for upper bounds); `div >= 1`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BoundTerm {
    pub expr: Affine,
    pub div: i64,
}

/// A loop bound: for a lower bound `max_k ceil(e_k / d_k)`, for an upper
/// bound `min_k floor(e_k / d_k)` (inclusive). At least one term.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Bound {
    pub terms: Vec<BoundTerm>,
}

impl Bound {
    /// The bound `e` (one term, divisor 1).
    pub fn aff(e: Affine) -> Bound {
        Bound {
            terms: vec![BoundTerm { expr: e, div: 1 }],
        }
    }
    /// The bound `e / d` (rounded by the bound's side).
    pub fn div(e: Affine, d: i64) -> Bound {
        Bound {
            terms: vec![BoundTerm { expr: e, div: d }],
        }
    }
    /// Adds one more term (`max` for lower bounds, `min` for upper bounds).
    pub fn and(mut self, e: Affine, d: i64) -> Bound {
        self.terms.push(BoundTerm { expr: e, div: d });
        self
    }
    /// The bound's value as an affine function when it is one (one term,
    /// divisor 1).
    pub fn as_affine(&self) -> Option<&Affine> {
        match self.terms.as_slice() {
            [t] if t.div == 1 => Some(&t.expr),
            _ => None,
        }
    }
    /// True when the bound is exactly the value of the affine expression
    /// `e` (one term, divisor 1, the same function).
    pub fn is_value_of(&self, e: &Expr) -> bool {
        let [t] = self.terms.as_slice() else {
            return false;
        };
        let a = match e {
            Expr::Aff(a) => a.clone(),
            Expr::Int(c) => Affine::cst(*c),
            _ => return false,
        };
        t.div == 1 && t.expr.canonical().is_some_and(|x| Some(x) == a.canonical())
    }
}

/// One dimension of an array's bounding box: `lower ..= lower + extent - 1`.
/// Both are affine in the parameters only.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Dim {
    pub lower: Affine,
    pub extent: Affine,
}

impl Dim {
    /// The last index `lower + extent − 1` (`None` on overflow of the
    /// constant).
    pub fn upper(&self) -> Option<Affine> {
        let mut hi = self.lower.clone();
        hi.terms.extend(self.extent.terms.iter().copied());
        hi.constant = hi
            .constant
            .checked_add(self.extent.constant)?
            .checked_sub(1)?;
        Some(hi)
    }
}

/// An array argument of the function.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    pub name: String,
    pub ty: ElemType,
    pub dims: Vec<Dim>,
    /// The variable's domain when it is not its bounding box: checked
    /// (besides the box) on data-dependent accesses. A domain over the
    /// array's dimensions and the function's parameters.
    pub domain: Option<Set>,
}

/// A scalar local variable (e.g. a register accumulator). Every local
/// starts as zero / `false` at function entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Local {
    pub name: String,
    pub ty: ElemType,
}

/// A loop program: one native function per system.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    /// Parameter names (`i64` values at run time).
    pub params: Vec<String>,
    /// Constraints on the parameters (a domain with no dimensions); a run
    /// with parameters outside it is rejected before anything runs.
    pub context: Set,
    pub arrays: Vec<Array>,
    /// Names of the loop variables; each `For` (or `Bind`) binds one.
    pub loop_vars: Vec<String>,
    pub locals: Vec<Local>,
    /// External functions the body calls ([`Expr::External`] indexes this
    /// list); their implementations are supplied at run time.
    pub externals: Vec<ExternalDecl>,
    pub body: Vec<Stmt>,
}

/// An external function: `arity` float arguments, a float result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalDecl {
    pub name: String,
    pub arity: usize,
}

/// Binary operators (operands of the same type; see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// Truncating on ints, IEEE on floats.
    Div,
    /// Truncating remainder on ints, `fmod` on floats.
    Rem,
    /// Ints only: `⌊a / b⌋`.
    FloorDiv,
    /// Ints only: `⌈a / b⌉`.
    CeilDiv,
    /// Ints only: `a − b·⌊a / b⌋`.
    Mod,
    Min,
    Max,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Bools, lazy.
    And,
    /// Bools, lazy.
    Or,
}

impl BinOp {
    /// `== != < <= > >=`: a bool from two operands of one type, which
    /// cannot fail.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// Conversions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cast {
    IntToFloat,
    /// Truncation toward zero, saturating, NaN → 0 (Rust's `as`).
    FloatToInt,
    BoolToInt,
    BoolToFloat,
}

/// Runtime math functions (float → float; `Abs` also int → int, checked).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MathFn {
    Exp,
    Log,
    Sqrt,
    /// Two arguments: `pow(x, y)`.
    Pow,
    Lgamma,
    Floor,
    Ceil,
    Abs,
}

/// Expressions.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Int(i64),
    Float(f64),
    Bool(bool),
    /// An affine int of loop variables and parameters.
    Aff(Affine),
    Local(LocalId),
    /// `array[index]`; affine or data-dependent (see the module comment).
    Load {
        array: ArrayId,
        index: Vec<Expr>,
    },
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `cond ? a : b`, lazy.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    Cast(Cast, Box<Expr>),
    Math(MathFn, Vec<Expr>),
    /// A draw from a distribution: see [`RandomDraw`].
    Random(Box<RandomDraw>),
    /// A categorical draw (int): see [`CategoricalDraw`].
    Categorical(Box<CategoricalDraw>),
    /// A call of external function `externals[index]` (float arguments,
    /// float result); it runs the implementation supplied for the run.
    External {
        index: usize,
        args: Vec<Expr>,
    },
    /// A selection value: see [`Selection`].
    Selection(Box<Selection>),
}

/// `value` (an int), checked to lie in `lower ..= upper` (ints that cannot
/// fail, typically affine in the parameters): outside, the run fails with
/// an error naming `var` and `index`. The value of a guard `e == k` in a
/// reduction body, `k` an index of the result (`ir::Selection`), so that a
/// data-selected label outside `k`'s range is an error wherever the guard
/// is evaluated — at every `k` or, after the sparse rewrite, once as a
/// binding's value.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    pub value: Expr,
    pub lower: Expr,
    pub upper: Expr,
    /// The result variable and the name of its index, for the message.
    pub var: String,
    pub index: String,
    /// `lower <= upper` holds wherever the selection is evaluated (proved
    /// from the facts there by `opt::simplify_guards`; `false`: unknown).
    /// The JIT then tests the range with one unsigned comparison.
    pub nonempty: bool,
}

/// A counter-based draw from `dist`: a pure function of `(seed, site,
/// point)` and the distribution's arguments (`runtime::rng`).
#[derive(Debug, Clone, PartialEq)]
pub struct RandomDraw {
    pub dist: Distribution,
    /// The distribution's arguments (floats, `dist.arity()` of them).
    pub args: Vec<Expr>,
    /// An int expression (typically a parameter).
    pub seed: Expr,
    /// The call site: `(variable << 16) | ordinal`.
    pub site: u32,
    /// The iteration point (ints).
    pub point: Vec<Expr>,
}

/// `categorical(var = lower..=upper if cond : weight)`: the points `k` of
/// the range where `cond` holds, in ascending order, with the float
/// weights `w_k = weight(k)`, define the draw of `runtime::rng` (the first
/// `k` whose running sum `w_lo + ... + w_k` exceeds `u·W`, `u` the uniform
/// draw of `(seed, site, point)` and `W` the total; or the last `k` with
/// `w_k > 0` when rounding leaves none). The weights must be finite and
/// `>= 0` with a positive finite total, else the run fails with an error
/// naming `array` and `point`. `var` is bound inside `cond` and `weight`
/// only; `lower`/`upper` are loop bounds (affine, outside `var`'s scope).
#[derive(Debug, Clone, PartialEq)]
pub struct CategoricalDraw {
    pub var: LoopVar,
    pub lower: Bound,
    pub upper: Bound,
    /// A bool condition on `var` (and the enclosing loop variables).
    pub cond: Expr,
    /// A float weight; evaluated only where `cond` holds.
    pub weight: Expr,
    /// An int expression (typically the seed parameter).
    pub seed: Expr,
    /// As in [`RandomDraw`]: `(variable << 16) | ordinal`.
    pub site: u32,
    /// The iteration point (ints), excluding `var`.
    pub point: Vec<Expr>,
    /// The array named in errors (the variable whose equation draws).
    pub array: Option<ArrayId>,
}

impl CategoricalDraw {
    /// The draw is uniform over its range: the weight is the constant
    /// `1.0` and the condition `true`. Then the running sums of the
    /// inverse-CDF rule are the exact integers `1, 2, ..., n` (`n` the
    /// number of points, below `2^53`), the total is `n` and the rule picks
    /// `lo + min(⌊u·n⌋, n − 1)` for the uniform `u` of the draw's key
    /// (`runtime::rng::Stream::uniform_index`): an O(1) draw with the same
    /// value as the O(n) scan.
    pub fn is_uniform(&self) -> bool {
        matches!(self.weight, Expr::Float(w) if w == 1.0) && matches!(self.cond, Expr::Bool(true))
    }
}

/// The binary operator an accumulation `a[x] = a[x] op v` applies.
pub fn acc_bin_op(op: ReduceOp) -> BinOp {
    match op {
        ReduceOp::Add => BinOp::Add,
        ReduceOp::Mul => BinOp::Mul,
        ReduceOp::Max => BinOp::Max,
        ReduceOp::Min => BinOp::Min,
        ReduceOp::And => BinOp::And,
        ReduceOp::Or => BinOp::Or,
    }
}

/// Statements.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// A loop: see [`ForLoop`].
    For(ForLoop),
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
    },
    /// `array[index] = value`.
    Assign {
        array: ArrayId,
        index: Vec<Expr>,
        value: Expr,
    },
    /// An accumulation: see [`Accumulation`].
    Accumulate(Accumulation),
    /// `local = value`.
    SetLocal {
        local: LocalId,
        value: Expr,
    },
    Block(Vec<Stmt>),
    /// A data-selected one-trip loop: see [`Binding`] (boxed: it is the
    /// largest form).
    Bind(Box<Binding>),
}

/// `for (var = lower; var <= upper; var++) body` (step 1).
#[derive(Debug, Clone, PartialEq)]
pub struct ForLoop {
    pub var: LoopVar,
    pub lower: Bound,
    pub upper: Bound,
    pub body: Vec<Stmt>,
    /// The iterations may run concurrently, in any order (issue 16): no
    /// two distinct iterations touch a common array cell that one of them
    /// writes, no local is carried from one iteration to another or out
    /// of the loop, and the body calls no external function
    /// ([`parallel::is_parallel`], the proof; [`Function::check`] refuses
    /// a mark it cannot prove). The JIT runs such a loop (when it is not
    /// inside another parallel loop) as chunks of its range on a thread
    /// pool; every other engine, and nested marks, run it sequentially.
    pub parallel: bool,
}

impl ForLoop {
    /// Does the loop run at most once, whatever the values of the
    /// variables and parameters its bounds read? True when a lower term
    /// `⌈a/k⌉` and an upper term `⌊b/k⌋` of one divisor have `b − a` a
    /// constant `c <= k − 1`: then `⌊b/k⌋ <= ⌈a/k⌉` (with `a = qk + r`,
    /// `0 <= r < k`: for `r = 0`, `⌊(qk + c)/k⌋ <= q` as `c < k`; for
    /// `r > 0`, `⌊(qk + r + c)/k⌋ <= q + 1` as `r + c < 2k`), so the range
    /// `[max lower, min upper]` holds at most one value. A strided
    /// schedule's loops (`t0 = 2i` scanned as `i` from `⌈t0/2⌉` to
    /// `⌊t0/2⌋`) are of this kind.
    pub fn runs_at_most_once(&self) -> bool {
        self.lower.terms.iter().any(|lo| {
            self.upper.terms.iter().any(|hi| {
                if lo.div != hi.div {
                    return false;
                }
                let mut diff = hi.expr.terms.clone();
                for &(s, c) in &lo.expr.terms {
                    match c.checked_neg() {
                        Some(n) => diff.push((s, n)),
                        None => return false,
                    }
                }
                let d = Affine {
                    terms: diff,
                    constant: 0,
                };
                let c = hi.expr.constant.checked_sub(lo.expr.constant);
                matches!((d.merged(), c), (Some(m), Some(c)) if m.terms.is_empty() && c < lo.div)
            })
        })
    }

    /// The same loop (variable and bounds) over `f(body)`.
    pub fn map_body(self, f: impl FnOnce(Vec<Stmt>) -> Vec<Stmt>) -> ForLoop {
        ForLoop {
            body: f(self.body),
            ..self
        }
    }
}

impl From<ForLoop> for Stmt {
    fn from(l: ForLoop) -> Stmt {
        Stmt::For(l)
    }
}

/// A data-selected one-trip loop over `var` (issue 15: sparse updates):
/// when `lower <= upper` and `guard` (a bool, evaluated lazily, only
/// then) holds, `value` (an int) is evaluated once; when
/// `lower <= value <= upper`, `body` runs once with `var = value`;
/// otherwise nothing happens.
///
/// When neither `guard` nor `value` mentions `var` or reads anything
/// `body` writes, this is exactly
/// `for (var = lower; var <= upper; var++) if (guard && var == value) body`
/// (every iteration computes the same `guard` and `value`, and only the
/// iteration `var = value` runs `body`), at the cost of one iteration.
/// `var` is bound like a loop variable: in `body` only (not in `guard`,
/// `value` or the bounds), and inside `body` it ranges over
/// `[lower, upper]`, so affine accesses in `body` are proven in bounds
/// like those of a `for`.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub var: LoopVar,
    pub lower: Bound,
    pub upper: Bound,
    /// A bool, evaluated (lazily) only when `lower <= upper`.
    pub guard: Expr,
    /// An int, evaluated once when `lower <= upper` and `guard` holds.
    pub value: Expr,
    pub body: Vec<Stmt>,
    /// `lower <= upper` is known to hold wherever the binding stands
    /// (`codegen::opt::simplify_guards` proves it from the facts there),
    /// so that the range test is not evaluated. A rewrite that moves a
    /// binding elsewhere must reset it.
    pub nonempty: bool,
}

impl Binding {
    /// The same binding (variable, bounds, guard, value) over `f(body)`.
    pub fn map_body(self, f: impl FnOnce(Vec<Stmt>) -> Vec<Stmt>) -> Binding {
        Binding {
            body: f(self.body),
            ..self
        }
    }
}

impl From<Binding> for Stmt {
    fn from(b: Binding) -> Stmt {
        Stmt::Bind(Box::new(b))
    }
}

/// `array[index] = array[index] op value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Accumulation {
    pub array: ArrayId,
    pub index: Vec<Expr>,
    pub op: ReduceOp,
    pub value: Expr,
}

// ---------------------------------------------------------------------------
// Convenience constructors (for the scanner and for tests).

impl Function {
    /// The distinct targets `(var, index)` of the [`Selection`]s of the
    /// body, in pre-order (run-time errors name a selection by its
    /// position here).
    pub fn selection_targets(&self) -> Vec<(&str, &str)> {
        fn expr<'a>(e: &'a Expr, out: &mut Vec<(&'a str, &'a str)>) {
            if let Expr::Selection(s) = e {
                let t = (s.var.as_str(), s.index.as_str());
                if !out.contains(&t) {
                    out.push(t);
                }
            }
            e.children().into_iter().for_each(|c| expr(c, out));
        }
        let mut out = Vec::new();
        for_each_stmt_expr(&self.body, &mut |e| expr(e, &mut out));
        out
    }
}

/// Calls `f` on each top-level expression of the statements of `body`
/// (conditions, indices then values, a binding's guard then value; not
/// their sub-expressions), in program order, nested statements included.
/// Loop bounds are affine and not visited.
pub fn for_each_stmt_expr<'a>(body: &'a [Stmt], f: &mut impl FnMut(&'a Expr)) {
    for s in body {
        match s {
            Stmt::For(l) => for_each_stmt_expr(&l.body, f),
            Stmt::Block(b) => for_each_stmt_expr(b, f),
            Stmt::If { cond, then, els } => {
                f(cond);
                for_each_stmt_expr(then, f);
                for_each_stmt_expr(els, f);
            }
            Stmt::Assign { index, value, .. }
            | Stmt::Accumulate(Accumulation { index, value, .. }) => {
                index.iter().for_each(&mut *f);
                f(value);
            }
            Stmt::SetLocal { value, .. } => f(value),
            Stmt::Bind(b) => {
                f(&b.guard);
                f(&b.value);
                for_each_stmt_expr(&b.body, f);
            }
        }
    }
}

impl Expr {
    pub fn var(v: LoopVar) -> Expr {
        Expr::Aff(Affine::var(v))
    }
    pub fn param(p: ParamId) -> Expr {
        Expr::Aff(Affine::param(p))
    }
    pub fn load(array: ArrayId, index: Vec<Expr>) -> Expr {
        Expr::Load { array, index }
    }
    pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b))
    }
    pub fn select(c: Expr, a: Expr, b: Expr) -> Expr {
        Expr::Select(Box::new(c), Box::new(a), Box::new(b))
    }
    pub fn cast(c: Cast, e: Expr) -> Expr {
        Expr::Cast(c, Box::new(e))
    }
    /// The direct sub-expressions, in evaluation order as printed: a
    /// load's indices; operands; a draw's arguments, seed and point; a
    /// categorical's condition, weight, seed and point.
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => {
                Vec::new()
            }
            Expr::Load { index, .. } => index.iter().collect(),
            Expr::Unary(_, a) | Expr::Cast(_, a) => vec![a],
            Expr::Binary(_, a, b) => vec![a, b],
            Expr::Select(c, a, b) => vec![c, a, b],
            Expr::Math(_, args) | Expr::External { args, .. } => args.iter().collect(),
            Expr::Random(r) => r
                .args
                .iter()
                .chain(std::iter::once(&r.seed))
                .chain(&r.point)
                .collect(),
            Expr::Categorical(c) => [&c.cond, &c.weight, &c.seed]
                .into_iter()
                .chain(&c.point)
                .collect(),
            Expr::Selection(s) => vec![&s.value, &s.lower, &s.upper],
        }
    }
    /// True when the expression is an affine index (no data involved).
    pub fn is_affine(&self) -> bool {
        matches!(self, Expr::Aff(_) | Expr::Int(_))
    }
    /// `Some((a, m))` when the expression is `mod(a, m)` with `m > 0` a
    /// constant: a value in `0 .. m` whatever `a`, computed without a
    /// failure (no division by zero, no overflow).
    pub fn mod_positive_const(&self) -> Option<(&Expr, i64)> {
        match self {
            Expr::Binary(BinOp::Mod, a, m) => match **m {
                Expr::Int(m) if m > 0 => Some((a, m)),
                _ => None,
            },
            _ => None,
        }
    }
    /// [`Expr::mod_positive_const`] with `a` affine: the index of an array
    /// stored modulo `m` (`codegen::storage`).
    pub fn modular(&self) -> Option<(&Expr, i64)> {
        self.mod_positive_const().filter(|(a, _)| a.is_affine())
    }
    /// True when the expression is an index free of data: affine, or
    /// affine modulo a positive constant ([`Expr::modular`]).
    pub fn is_data_free_index(&self) -> bool {
        self.is_affine() || self.modular().is_some()
    }
    /// `c_1 op (c_2 op (… op c_n))` (right-nested, in order), or `empty`
    /// when there is no operand.
    pub fn chain(op: BinOp, mut items: Vec<Expr>, empty: Expr) -> Expr {
        let Some(mut c) = items.pop() else {
            return empty;
        };
        while let Some(d) = items.pop() {
            c = Expr::bin(op, d, c);
        }
        c
    }
    /// The conjunction `c_1 && (c_2 && …)`, `true` when empty.
    pub fn and_all(conds: Vec<Expr>) -> Expr {
        Expr::chain(BinOp::And, conds, Expr::Bool(true))
    }
}

#[cfg(test)]
mod once_tests;
