//! The loop AST: an explicit, imperative program over dense arrays — the
//! target of polyhedral scanning and the input of the JIT (`crate::jit`).
//!
//! Owns: the data types of a loop program ([`Function`], [`Stmt`],
//! [`Expr`], affine [`Affine`] expressions and loop [`Bound`]s), their
//! static check ([`Function::check`]) and a deterministic C-like printer
//! ([`Function::to_c`]).
//!
//! Must not know about: schedules, dependences, Cranelift, the source
//! syntax. It reads only `ElemType` and `Domain` from the IR.
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
//! - Data-dependent accesses are always bounds-checked at run time against
//!   the array's box and, when the array has a `domain`, against that
//!   domain predicate; a failure is a run-time error naming the array and
//!   the point (never undefined behaviour).
//! - Affine accesses are the scanner's responsibility: it only emits
//!   statement instances inside their domains, and domains are inside the
//!   boxes, so affine accesses are in bounds *by construction*. The JIT
//!   does not trust this blindly: before a run it proves it with an
//!   interval analysis for the given parameters, and falls back to a
//!   variant that checks every access when the proof fails (a violated
//!   contract is then reported as an error). A checked mode that checks
//!   every access is available for tests.
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

use crate::ir::types::{ConstraintKind, Domain};
pub use crate::vocab::{Distribution, ElemType, ReduceOp, UnOp};
use std::fmt::{self, Write as _};

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
}

/// One dimension of an array's bounding box: `lower ..= lower + extent - 1`.
/// Both are affine in the parameters only.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Dim {
    pub lower: Affine,
    pub extent: Affine,
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
    pub domain: Option<Domain>,
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
    pub context: Domain,
    pub arrays: Vec<Array>,
    /// Names of the loop variables; each `For` binds one.
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
    /// A counter-based draw: a pure function of `(seed, site, point)` and
    /// the distribution's arguments.
    Random {
        dist: Distribution,
        args: Vec<Expr>,
        /// An int expression (typically a parameter).
        seed: Box<Expr>,
        site: u32,
        /// The iteration point (ints).
        point: Vec<Expr>,
    },
    /// A categorical draw (int): see [`CategoricalDraw`].
    Categorical(Box<CategoricalDraw>),
    /// A call of external function `externals[index]` (float arguments,
    /// float result); it runs the implementation supplied for the run.
    External {
        index: usize,
        args: Vec<Expr>,
    },
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
    /// As in [`Expr::Random`]: `(variable << 16) | ordinal`.
    pub site: u32,
    /// The iteration point (ints), excluding `var`.
    pub point: Vec<Expr>,
    /// The array named in errors (the variable whose equation draws).
    pub array: Option<ArrayId>,
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
    /// `for (var = lower; var <= upper; var++) body` (step 1).
    For {
        var: LoopVar,
        lower: Bound,
        upper: Bound,
        body: Vec<Stmt>,
    },
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
    /// `array[index] = array[index] op value`.
    Accumulate {
        array: ArrayId,
        index: Vec<Expr>,
        op: ReduceOp,
        value: Expr,
    },
    /// `local = value`.
    SetLocal {
        local: LocalId,
        value: Expr,
    },
    Block(Vec<Stmt>),
}

// ---------------------------------------------------------------------------
// Convenience constructors (for the scanner and for tests).

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
    /// True when the expression is an affine index (no data involved).
    pub fn is_affine(&self) -> bool {
        matches!(self, Expr::Aff(_) | Expr::Int(_))
    }
}

// ---------------------------------------------------------------------------
// Static check.

/// A malformed loop program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AstError {
    #[error("unknown parameter #{0}")]
    UnknownParam(usize),
    #[error("unknown array #{0}")]
    UnknownArray(usize),
    #[error("unknown local #{0}")]
    UnknownLocal(usize),
    #[error("unknown external function #{0}")]
    UnknownExternal(usize),
    #[error("unknown loop variable #{0}")]
    UnknownLoopVar(usize),
    #[error("loop variable `{0}` used outside its loop")]
    LoopVarOutOfScope(String),
    #[error("loop variable `{0}` bound by nested loops")]
    LoopVarRebound(String),
    #[error("array `{array}` has {got} dimensions, more than {max}", max = MAX_DIMS)]
    TooManyDims { array: String, got: usize },
    #[error("array `{0}`: bounds must be affine in the parameters only")]
    ArrayBoundNotParametric(String),
    #[error("array `{0}`: its domain does not match its dimensions and the parameters")]
    BadDomain(String),
    #[error("the parameter context must have no dimensions and one coefficient per parameter")]
    BadContext,
    #[error("a loop bound has no term or a divisor < 1")]
    BadBound,
    #[error("access to `{array}` with {got} indices, expected {expected}")]
    IndexCount {
        array: String,
        expected: usize,
        got: usize,
    },
    #[error("type error: {0}")]
    Type(String),
}

fn type_err<T>(msg: impl Into<String>) -> Result<T, AstError> {
    Err(AstError::Type(msg.into()))
}

impl Function {
    /// Checks that the program is well formed: every symbol exists and is
    /// in scope (a loop variable only inside its own `For`, never rebound
    /// by a nested `For`), array bounds are affine in the parameters, loop
    /// bounds have terms with divisors `>= 1`, accesses have one index per
    /// dimension, and every expression is well typed.
    pub fn check(&self) -> Result<(), AstError> {
        let np = self.params.len();
        if self.context.n_dims() != 0
            || self
                .context
                .pieces
                .iter()
                .flatten()
                .any(|c| c.aff.par.len() != np || !c.aff.idx.is_empty())
        {
            return Err(AstError::BadContext);
        }
        for a in &self.arrays {
            if a.dims.len() > MAX_DIMS {
                return Err(AstError::TooManyDims {
                    array: a.name.clone(),
                    got: a.dims.len(),
                });
            }
            for d in &a.dims {
                for e in [&d.lower, &d.extent] {
                    if !e.is_param_only() {
                        return Err(AstError::ArrayBoundNotParametric(a.name.clone()));
                    }
                    self.check_affine(e, &[])?;
                }
            }
            if let Some(dom) = &a.domain {
                let ok = dom.n_dims() == a.dims.len()
                    && dom
                        .pieces
                        .iter()
                        .flatten()
                        .all(|c| c.aff.idx.len() == a.dims.len() && c.aff.par.len() == np);
                if !ok {
                    return Err(AstError::BadDomain(a.name.clone()));
                }
            }
        }
        let mut scope = Vec::new();
        self.check_stmts(&self.body, &mut scope)
    }

    fn check_affine(&self, e: &Affine, scope: &[LoopVar]) -> Result<(), AstError> {
        for &(s, _) in &e.terms {
            match s {
                Sym::Param(p) if p >= self.params.len() => return Err(AstError::UnknownParam(p)),
                Sym::Param(_) => {}
                Sym::Loop(v) => {
                    let name = self
                        .loop_vars
                        .get(v.0)
                        .ok_or(AstError::UnknownLoopVar(v.0))?;
                    if !scope.contains(&v) {
                        return Err(AstError::LoopVarOutOfScope(name.clone()));
                    }
                }
            }
        }
        Ok(())
    }

    fn check_stmts(&self, body: &[Stmt], scope: &mut Vec<LoopVar>) -> Result<(), AstError> {
        for s in body {
            self.check_stmt(s, scope)?;
        }
        Ok(())
    }

    fn check_access(
        &self,
        array: ArrayId,
        index: &[Expr],
        scope: &[LoopVar],
    ) -> Result<ElemType, AstError> {
        let a = self
            .arrays
            .get(array)
            .ok_or(AstError::UnknownArray(array))?;
        if index.len() != a.dims.len() {
            return Err(AstError::IndexCount {
                array: a.name.clone(),
                expected: a.dims.len(),
                got: index.len(),
            });
        }
        for e in index {
            if self.type_of(e, scope)? != ElemType::Int {
                return type_err(format!("index of `{}` is not an int", a.name));
            }
        }
        Ok(a.ty)
    }

    fn check_stmt(&self, s: &Stmt, scope: &mut Vec<LoopVar>) -> Result<(), AstError> {
        match s {
            Stmt::For {
                var,
                lower,
                upper,
                body,
            } => {
                let name = self
                    .loop_vars
                    .get(var.0)
                    .ok_or(AstError::UnknownLoopVar(var.0))?;
                if scope.contains(var) {
                    return Err(AstError::LoopVarRebound(name.clone()));
                }
                self.check_bounds(lower, upper, scope)?;
                scope.push(*var);
                let r = self.check_stmts(body, scope);
                scope.pop();
                r
            }
            Stmt::If { cond, then, els } => {
                if self.type_of(cond, scope)? != ElemType::Bool {
                    return type_err("`if` condition is not a bool");
                }
                self.check_stmts(then, scope)?;
                self.check_stmts(els, scope)
            }
            Stmt::Assign {
                array,
                index,
                value,
            } => {
                let ty = self.check_access(*array, index, scope)?;
                if self.type_of(value, scope)? != ty {
                    return type_err(format!(
                        "value stored into `{}` is not a {}",
                        self.arrays[*array].name,
                        ty.name()
                    ));
                }
                Ok(())
            }
            Stmt::Accumulate {
                array,
                index,
                op,
                value,
            } => {
                let ty = self.check_access(*array, index, scope)?;
                let vt = self.type_of(value, scope)?;
                binop_type(acc_bin_op(*op), ty, vt).and_then(|r| {
                    if r == ty {
                        Ok(())
                    } else {
                        type_err("accumulation changes the element type")
                    }
                })
            }
            Stmt::SetLocal { local, value } => {
                let l = self
                    .locals
                    .get(*local)
                    .ok_or(AstError::UnknownLocal(*local))?;
                if self.type_of(value, scope)? != l.ty {
                    return type_err(format!(
                        "value assigned to `{}` is not a {}",
                        l.name,
                        l.ty.name()
                    ));
                }
                Ok(())
            }
            Stmt::Block(b) => self.check_stmts(b, scope),
        }
    }

    /// The type of an expression whose loop variables in scope are
    /// `scope`; an error when it is ill formed.
    pub fn type_of(&self, e: &Expr, scope: &[LoopVar]) -> Result<ElemType, AstError> {
        use ElemType::*;
        Ok(match e {
            Expr::Int(_) => Int,
            Expr::Float(_) => Float,
            Expr::Bool(_) => Bool,
            Expr::Aff(a) => {
                self.check_affine(a, scope)?;
                Int
            }
            Expr::Local(l) => self.locals.get(*l).ok_or(AstError::UnknownLocal(*l))?.ty,
            Expr::Load { array, index } => self.check_access(*array, index, scope)?,
            Expr::Unary(op, a) => {
                let t = self.type_of(a, scope)?;
                match (op, t) {
                    (UnOp::Neg, Int | Float) | (UnOp::Not, Bool) => t,
                    _ => return type_err(format!("{op:?} of a {}", t.name())),
                }
            }
            Expr::Binary(op, a, b) => {
                let ta = self.type_of(a, scope)?;
                let tb = self.type_of(b, scope)?;
                binop_type(*op, ta, tb)?
            }
            Expr::Select(c, a, b) => {
                if self.type_of(c, scope)? != Bool {
                    return type_err("select condition is not a bool");
                }
                let ta = self.type_of(a, scope)?;
                if self.type_of(b, scope)? != ta {
                    return type_err("select arms of different types");
                }
                ta
            }
            Expr::Cast(c, a) => {
                let t = self.type_of(a, scope)?;
                let (from, to) = match c {
                    Cast::IntToFloat => (Int, Float),
                    Cast::FloatToInt => (Float, Int),
                    Cast::BoolToInt => (Bool, Int),
                    Cast::BoolToFloat => (Bool, Float),
                };
                if t != from {
                    return type_err(format!("{c:?} of a {}", t.name()));
                }
                to
            }
            Expr::Math(f, args) => {
                let n = if *f == MathFn::Pow { 2 } else { 1 };
                if args.len() != n {
                    return type_err(format!("{f:?} takes {n} argument(s)"));
                }
                let t = self.type_of(&args[0], scope)?;
                for a in &args[1..] {
                    if self.type_of(a, scope)? != Float {
                        return type_err(format!("{f:?} of a non-float"));
                    }
                }
                match (f, t) {
                    (_, Float) => Float,
                    (MathFn::Abs, Int) => Int,
                    _ => return type_err(format!("{f:?} of a {}", t.name())),
                }
            }
            Expr::Random {
                dist,
                args,
                seed,
                point,
                ..
            } => {
                if args.len() != dist.arity() {
                    return type_err(format!(
                        "{} takes {} argument(s)",
                        dist.name(),
                        dist.arity()
                    ));
                }
                for a in args {
                    if self.type_of(a, scope)? != Float {
                        return type_err(format!("{} of a non-float", dist.name()));
                    }
                }
                if self.type_of(seed, scope)? != Int {
                    return type_err("RNG seed is not an int");
                }
                for p in point {
                    if self.type_of(p, scope)? != Int {
                        return type_err("RNG point coordinate is not an int");
                    }
                }
                dist.result()
            }
            Expr::Categorical(c) => {
                let name = self
                    .loop_vars
                    .get(c.var.0)
                    .ok_or(AstError::UnknownLoopVar(c.var.0))?;
                if scope.contains(&c.var) {
                    return Err(AstError::LoopVarRebound(name.clone()));
                }
                self.check_bounds(&c.lower, &c.upper, scope)?;
                if let Some(a) = c.array {
                    self.arrays.get(a).ok_or(AstError::UnknownArray(a))?;
                }
                if self.type_of(&c.seed, scope)? != Int {
                    return type_err("RNG seed is not an int");
                }
                for p in &c.point {
                    if self.type_of(p, scope)? != Int {
                        return type_err("RNG point coordinate is not an int");
                    }
                }
                let mut inner = scope.to_vec();
                inner.push(c.var);
                if self.type_of(&c.cond, &inner)? != Bool {
                    return type_err("categorical condition is not a bool");
                }
                if self.type_of(&c.weight, &inner)? != Float {
                    return type_err("categorical weight is not a float");
                }
                Int
            }
            Expr::External { index, args } => {
                let ext = self
                    .externals
                    .get(*index)
                    .ok_or(AstError::UnknownExternal(*index))?;
                if args.len() != ext.arity {
                    return type_err(format!(
                        "external `{}` takes {} argument(s), {} given",
                        ext.name,
                        ext.arity,
                        args.len()
                    ));
                }
                for a in args {
                    if self.type_of(a, scope)? != Float {
                        return type_err(format!("argument of `{}` is not a float", ext.name));
                    }
                }
                Float
            }
        })
    }

    /// Checks a pair of loop bounds: at least one term each, divisors
    /// `>= 1`, affine in the symbols of `scope` and the parameters.
    fn check_bounds(
        &self,
        lower: &Bound,
        upper: &Bound,
        scope: &[LoopVar],
    ) -> Result<(), AstError> {
        for b in [lower, upper] {
            if b.terms.is_empty() {
                return Err(AstError::BadBound);
            }
            for t in &b.terms {
                if t.div < 1 {
                    return Err(AstError::BadBound);
                }
                self.check_affine(&t.expr, scope)?;
            }
        }
        Ok(())
    }
}

/// Result type of a binary operator on operand types, or a type error.
pub fn binop_type(op: BinOp, a: ElemType, b: ElemType) -> Result<ElemType, AstError> {
    use BinOp::*;
    use ElemType::*;
    if a != b {
        return type_err(format!("{op:?} of a {} and a {}", a.name(), b.name()));
    }
    let ok = match op {
        Add | Sub | Mul | Div | Rem | Min | Max | Lt | Le | Gt | Ge => a != Bool,
        FloorDiv | CeilDiv | Mod => a == Int,
        Eq | Ne => true,
        And | Or => a == Bool,
    };
    if !ok {
        return type_err(format!("{op:?} of {}s", a.name()));
    }
    Ok(match op {
        Eq | Ne | Lt | Le | Gt | Ge => Bool,
        _ => a,
    })
}

// ---------------------------------------------------------------------------
// Printer.

impl Function {
    /// Deterministic C-like rendering of the function (for humans and
    /// snapshot tests). Bounds print as `max(...)`/`min(...)` of
    /// `ceild(e, d)`/`floord(e, d)`; array arguments show each dimension
    /// as `[lower : extent]`.
    pub fn to_c(&self) -> String {
        let mut p = Printer {
            f: self,
            out: String::new(),
        };
        p.function();
        p.out
    }

    fn sym_name(&self, s: Sym) -> String {
        match s {
            Sym::Loop(v) => self
                .loop_vars
                .get(v.0)
                .cloned()
                .unwrap_or_else(|| format!("?loop{}", v.0)),
            Sym::Param(p) => self
                .params
                .get(p)
                .cloned()
                .unwrap_or_else(|| format!("?param{p}")),
        }
    }

    /// `c0 + c1*x1 + ...` in C syntax.
    pub fn affine_to_c(&self, e: &Affine) -> String {
        let mut s = String::new();
        for &(sym, c) in &e.terms {
            if c == 0 {
                continue;
            }
            let name = self.sym_name(sym);
            let mag = c.unsigned_abs();
            if s.is_empty() {
                if c < 0 {
                    s.push('-');
                }
            } else {
                s.push_str(if c < 0 { " - " } else { " + " });
            }
            if mag != 1 {
                let _ = write!(s, "{mag}*");
            }
            s.push_str(&name);
        }
        if s.is_empty() {
            let _ = write!(s, "{}", e.constant);
        } else if e.constant != 0 {
            let _ = write!(
                s,
                " {} {}",
                if e.constant < 0 { '-' } else { '+' },
                e.constant.unsigned_abs()
            );
        }
        s
    }

    fn bound_to_c(&self, b: &Bound, lower: bool) -> String {
        let parts: Vec<String> = b
            .terms
            .iter()
            .map(|t| {
                let e = self.affine_to_c(&t.expr);
                if t.div == 1 {
                    e
                } else {
                    format!("{}({e}, {})", if lower { "ceild" } else { "floord" }, t.div)
                }
            })
            .collect();
        if parts.len() == 1 {
            parts.into_iter().next().unwrap_or_default()
        } else {
            format!(
                "{}({})",
                if lower { "max" } else { "min" },
                parts.join(", ")
            )
        }
    }
}

/// `s` without one pair of parentheses enclosing all of it.
fn strip_outer_parens(s: &str) -> &str {
    let Some(inner) = s.strip_prefix('(').and_then(|t| t.strip_suffix(')')) else {
        return s;
    };
    let mut depth = 0i32;
    for ch in inner.chars() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return s; // the first '(' closes before the end
                }
            }
            _ => {}
        }
    }
    inner
}

struct Printer<'a> {
    f: &'a Function,
    out: String,
}

fn c_type(t: ElemType) -> &'static str {
    match t {
        ElemType::Int => "long",
        ElemType::Float => "double",
        ElemType::Bool => "bool",
    }
}

impl Printer<'_> {
    fn line(&mut self, depth: usize, text: &str) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn constraint_text(&self, c: &crate::ir::types::AffConstraint, dims: &[String]) -> String {
        let mut terms = Vec::new();
        for (k, &co) in c.aff.idx.iter().enumerate() {
            let name = dims.get(k).cloned().unwrap_or_else(|| format!("d{k}"));
            terms.push((name, co));
        }
        for (k, &co) in c.aff.par.iter().enumerate() {
            terms.push((self.f.sym_name(Sym::Param(k)), co));
        }
        let mut s = String::new();
        for (name, co) in terms {
            if co == 0 {
                continue;
            }
            if s.is_empty() {
                if co < 0 {
                    s.push('-');
                }
            } else {
                s.push_str(if co < 0 { " - " } else { " + " });
            }
            if co.unsigned_abs() != 1 {
                let _ = write!(s, "{}*", co.unsigned_abs());
            }
            s.push_str(&name);
        }
        if s.is_empty() {
            let _ = write!(s, "{}", c.aff.constant);
        } else if c.aff.constant != 0 {
            let _ = write!(
                s,
                " {} {}",
                if c.aff.constant < 0 { '-' } else { '+' },
                c.aff.constant.unsigned_abs()
            );
        }
        let rel = match c.kind {
            ConstraintKind::Ge => ">=",
            ConstraintKind::Eq => "==",
        };
        format!("{s} {rel} 0")
    }

    fn domain_text(&self, d: &Domain) -> String {
        let pieces: Vec<String> = d
            .pieces
            .iter()
            .map(|p| {
                if p.is_empty() {
                    "true".to_string()
                } else {
                    p.iter()
                        .map(|c| self.constraint_text(c, &d.dims))
                        .collect::<Vec<_>>()
                        .join(" && ")
                }
            })
            .collect();
        if pieces.is_empty() {
            "false".to_string()
        } else {
            pieces.join(" || ")
        }
    }

    fn function(&mut self) {
        let f = self.f;
        let params: Vec<String> = f.params.iter().map(|p| format!("long {p}")).collect();
        let arrays: Vec<String> = f
            .arrays
            .iter()
            .map(|a| {
                let mut s = format!("{} {}", c_type(a.ty), a.name);
                for d in &a.dims {
                    let lo = f.affine_to_c(&d.lower);
                    let ext = f.affine_to_c(&d.extent);
                    let _ = write!(s, "[{lo} : {ext}]");
                }
                s
            })
            .collect();
        let mut sig = format!("void {}(", f.name);
        sig.push_str(
            &params
                .into_iter()
                .chain(arrays)
                .collect::<Vec<_>>()
                .join(", "),
        );
        sig.push_str(") {");
        if !f.context.pieces.iter().all(|p| p.is_empty()) {
            let ctx = self.domain_text(&f.context);
            self.line(0, &format!("// requires {ctx}"));
        }
        for a in &f.arrays {
            if let Some(d) = &a.domain {
                let t = self.domain_text(d);
                self.line(0, &format!("// domain of {}: {t}", a.name));
            }
        }
        for e in &f.externals {
            let args = vec!["double"; e.arity].join(", ");
            self.line(0, &format!("extern double {}({args});", e.name));
        }
        self.line(0, &sig);
        for l in &f.locals {
            let init = match l.ty {
                ElemType::Int => "0",
                ElemType::Float => "0.0",
                ElemType::Bool => "false",
            };
            self.line(1, &format!("{} {} = {init};", c_type(l.ty), l.name));
        }
        for s in &f.body {
            self.stmt(s, 1);
        }
        self.line(0, "}");
    }

    fn access(&self, array: ArrayId, index: &[Expr]) -> String {
        let mut s = self
            .f
            .arrays
            .get(array)
            .map(|a| a.name.clone())
            .unwrap_or_else(|| format!("?array{array}"));
        for e in index {
            let _ = write!(s, "[{}]", self.expr(e));
        }
        s
    }

    fn stmt(&mut self, s: &Stmt, depth: usize) {
        match s {
            Stmt::For {
                var,
                lower,
                upper,
                body,
            } => {
                let v = self.f.sym_name(Sym::Loop(*var));
                let lo = self.f.bound_to_c(lower, true);
                let hi = self.f.bound_to_c(upper, false);
                self.line(depth, &format!("for ({v} = {lo}; {v} <= {hi}; {v}++) {{"));
                for s in body {
                    self.stmt(s, depth + 1);
                }
                self.line(depth, "}");
            }
            Stmt::If { cond, then, els } => {
                let c = self.expr(cond);
                let c = strip_outer_parens(&c);
                self.line(depth, &format!("if ({c}) {{"));
                for s in then {
                    self.stmt(s, depth + 1);
                }
                if !els.is_empty() {
                    self.line(depth, "} else {");
                    for s in els {
                        self.stmt(s, depth + 1);
                    }
                }
                self.line(depth, "}");
            }
            Stmt::Assign {
                array,
                index,
                value,
            } => {
                let t = format!("{} = {};", self.access(*array, index), self.expr(value));
                self.line(depth, &t);
            }
            Stmt::Accumulate {
                array,
                index,
                op,
                value,
            } => {
                let a = self.access(*array, index);
                let v = self.expr(value);
                let t = match op {
                    ReduceOp::Add => format!("{a} += {v};"),
                    ReduceOp::Mul => format!("{a} *= {v};"),
                    ReduceOp::And => format!("{a} = {a} && {v};"),
                    ReduceOp::Or => format!("{a} = {a} || {v};"),
                    ReduceOp::Max => format!("{a} = max({a}, {v});"),
                    ReduceOp::Min => format!("{a} = min({a}, {v});"),
                };
                self.line(depth, &t);
            }
            Stmt::SetLocal { local, value } => {
                let name = self
                    .f
                    .locals
                    .get(*local)
                    .map(|l| l.name.clone())
                    .unwrap_or_else(|| format!("?local{local}"));
                let t = format!("{name} = {};", self.expr(value));
                self.line(depth, &t);
            }
            Stmt::Block(b) => {
                self.line(depth, "{");
                for s in b {
                    self.stmt(s, depth + 1);
                }
                self.line(depth, "}");
            }
        }
    }

    fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Int(v) => v.to_string(),
            Expr::Float(v) => format!("{v:?}"),
            Expr::Bool(b) => b.to_string(),
            Expr::Aff(a) => {
                let s = self.f.affine_to_c(a);
                if a.terms.iter().filter(|t| t.1 != 0).count() + usize::from(a.constant != 0) > 1 {
                    format!("({s})")
                } else {
                    s
                }
            }
            Expr::Local(l) => self
                .f
                .locals
                .get(*l)
                .map(|l| l.name.clone())
                .unwrap_or_else(|| format!("?local{l}")),
            Expr::Load { array, index } => self.access(*array, index),
            Expr::Unary(UnOp::Neg, a) => format!("-{}", self.expr(a)),
            Expr::Unary(UnOp::Not, a) => format!("!{}", self.expr(a)),
            Expr::Binary(op, a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                let inf = |o: &str| format!("({x} {o} {y})");
                match op {
                    BinOp::Add => inf("+"),
                    BinOp::Sub => inf("-"),
                    BinOp::Mul => inf("*"),
                    BinOp::Div => inf("/"),
                    BinOp::Rem => inf("%"),
                    BinOp::Eq => inf("=="),
                    BinOp::Ne => inf("!="),
                    BinOp::Lt => inf("<"),
                    BinOp::Le => inf("<="),
                    BinOp::Gt => inf(">"),
                    BinOp::Ge => inf(">="),
                    BinOp::And => inf("&&"),
                    BinOp::Or => inf("||"),
                    BinOp::FloorDiv => format!("floord({x}, {y})"),
                    BinOp::CeilDiv => format!("ceild({x}, {y})"),
                    BinOp::Mod => format!("mod({x}, {y})"),
                    BinOp::Min => format!("min({x}, {y})"),
                    BinOp::Max => format!("max({x}, {y})"),
                }
            }
            Expr::Select(c, a, b) => {
                format!("({} ? {} : {})", self.expr(c), self.expr(a), self.expr(b))
            }
            Expr::Cast(c, a) => {
                let t = match c {
                    Cast::IntToFloat | Cast::BoolToFloat => "double",
                    Cast::FloatToInt | Cast::BoolToInt => "long",
                };
                format!("({t}){}", self.expr(a))
            }
            Expr::Math(f, args) => {
                let name = match f {
                    MathFn::Exp => "exp",
                    MathFn::Log => "log",
                    MathFn::Sqrt => "sqrt",
                    MathFn::Pow => "pow",
                    MathFn::Lgamma => "lgamma",
                    MathFn::Floor => "floor",
                    MathFn::Ceil => "ceil",
                    MathFn::Abs => "abs",
                };
                let a: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("{name}({})", a.join(", "))
            }
            Expr::Random {
                dist,
                args,
                seed,
                site,
                point,
            } => {
                let a: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                let p: Vec<String> = point.iter().map(|a| self.expr(a)).collect();
                format!(
                    "{}({}; seed {}, site {site}, point [{}])",
                    dist.name(),
                    a.join(", "),
                    self.expr(seed),
                    p.join(", ")
                )
            }
            Expr::Categorical(c) => {
                let v = self
                    .f
                    .loop_vars
                    .get(c.var.0)
                    .cloned()
                    .unwrap_or_else(|| format!("?loop{}", c.var.0));
                let p: Vec<String> = c.point.iter().map(|a| self.expr(a)).collect();
                format!(
                    "categorical({v} = {} .. {} if {} : {}; seed {}, site {}, point [{}])",
                    self.f.bound_to_c(&c.lower, true),
                    self.f.bound_to_c(&c.upper, false),
                    strip_outer_parens(&self.expr(&c.cond)),
                    strip_outer_parens(&self.expr(&c.weight)),
                    self.expr(&c.seed),
                    c.site,
                    p.join(", ")
                )
            }
            Expr::External { index, args } => {
                let name = self
                    .f
                    .externals
                    .get(*index)
                    .map(|e| e.name.clone())
                    .unwrap_or_else(|| format!("?external{index}"));
                let a: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("{name}({})", a.join(", "))
            }
        }
    }
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_c())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outer_parens_are_stripped_only_when_enclosing() {
        assert_eq!(strip_outer_parens("(a < b)"), "a < b");
        assert_eq!(strip_outer_parens("(a) + (b)"), "(a) + (b)");
        assert_eq!(strip_outer_parens("((a) + (b))"), "(a) + (b)");
        assert_eq!(strip_outer_parens("a"), "a");
    }

    #[test]
    fn affine_printing_and_evaluation() {
        let f = Function {
            name: "f".into(),
            params: vec!["N".into()],
            context: Domain::universe(vec![]),
            arrays: vec![],
            externals: vec![],
            loop_vars: vec!["i".into(), "j".into()],
            locals: vec![],
            body: vec![],
        };
        let e = Affine::cst(-3)
            .plus(Sym::Loop(LoopVar(0)), -1)
            .plus(Sym::Param(0), 2)
            .plus(Sym::Loop(LoopVar(1)), 0);
        assert_eq!(f.affine_to_c(&e), "-i + 2*N - 3");
        assert_eq!(e.eval(&[4, 100], &[10]), Some(13));
        assert_eq!(f.affine_to_c(&Affine::cst(0)), "0");
        let big = Affine::cst(i64::MAX).plus(Sym::Param(0), 1);
        assert_eq!(big.eval(&[], &[1]), None);
        assert!(!e.is_param_only());
    }
}
