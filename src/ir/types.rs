//! The IR data types: a checked, normalized program.
//!
//! Conventions shared by every stage that reads the IR:
//! - A *system* has parameters `p_0..p_{P-1}` (names in `System::params`).
//! - Every expression is evaluated in an *index space*: the names of the
//!   indices in scope, outermost first. The right-hand side of an equation
//!   lives in the space of the equation's left-hand-side indices; the body
//!   of a reduction lives in the reduction's own body space
//!   (`Reduce::dims`).
//! - Affine functions of the indices and parameters are `poly::Aff` values
//!   over the index space they live in (`[params] -> { [indices] }`);
//!   access functions and projections are `poly::MultiAff`s.
//! - Domains are `poly::Set`s over an index space and the parameters: no
//!   stage converts them to another representation.
//! - Dependence expressions `f @ E` of the source do not survive lowering:
//!   `f` is substituted into `E` (the Alpha normalization), so every read is
//!   an access function of the index space it is evaluated in.

use crate::diag::Span;
pub use crate::vocab::{BinOp, Distribution, ElemType, ReduceOp, UnOp};

/// The polyhedral objects of the IR are the polyhedral library's own:
/// - a domain is a [`Set`] over the space `[params] -> { [index names] }`
///   (a finite union of conjunctions of affine constraints; rows are
///   parameters, then dimensions, then the constant);
/// - an affine function of the indices in scope and the parameters is an
///   [`Aff`] over that space;
/// - an access function or a reduction's projection is a [`MultiAff`] from
///   the index space it is evaluated in.
pub use crate::poly::{Aff, ConstraintKind, MultiAff, Set, Space};

/// Index of a variable in `System::vars`.
pub type VarId = usize;

/// Role of a variable in its system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VarKind {
    Input,
    Output,
    Local,
}

/// A declared variable: an array over a polyhedral domain.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub name: String,
    pub kind: VarKind,
    pub ty: ElemType,
    /// The variable's domain; its dimensions are the declared index names
    /// (or generated ones `i0, i1, ...` for the `[N, M]` shorthand).
    pub domain: Set,
    pub span: Span,
}

/// `var[indices] = expr` over the whole domain of `var`.
#[derive(Debug, Clone, PartialEq)]
pub struct Equation {
    pub var: VarId,
    /// The index names bound by the left-hand side (the right-hand side's
    /// index space), one per dimension of the variable.
    pub indices: Vec<String>,
    pub expr: Expr,
    pub span: Span,
}

/// A system of affine recurrence equations.
#[derive(Debug, Clone, PartialEq)]
pub struct System {
    pub name: String,
    pub params: Vec<String>,
    /// Constraints on the parameters (a set with no dimensions).
    pub context: Set,
    pub vars: Vec<Variable>,
    /// Exactly one equation per output and local (checked by lowering),
    /// in source order.
    pub equations: Vec<Equation>,
    /// The state carried from one sweep to the next (`sweep z <- znew;`):
    /// each input appears at most once, with an output of the same type
    /// and domain (checked by lowering).
    pub sweeps: Vec<Sweep>,
    pub span: Span,
}

/// `sweep input <- output` (**ext**): when a system is run repeatedly
/// (sweeps of a sampler), the next run's `input` is this run's `output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sweep {
    pub input: VarId,
    pub output: VarId,
}

impl System {
    pub fn var_by_name(&self, name: &str) -> Option<VarId> {
        self.vars.iter().position(|v| v.name == name)
    }
    /// The equation defining `var`, if any.
    pub fn equation_of(&self, var: VarId) -> Option<&Equation> {
        self.equations.iter().find(|e| e.var == var)
    }
}

impl Expr {
    /// Numbers the reductions of `self` (the right-hand side of the
    /// equation of `var`) in pre-order: `ReductionId { var, ordinal }`
    /// with ordinals from 0.
    pub fn number_reductions(&mut self, var: VarId) {
        fn go(e: &mut Expr, var: VarId, next: &mut u32) {
            if let ExprKind::Reduce(r) = &mut e.kind {
                r.id = ReductionId {
                    var,
                    ordinal: *next,
                };
                *next = next.saturating_add(1);
            }
            e.for_each_child_mut(&mut |c| go(c, var, next));
        }
        let mut next = 0;
        go(self, var, &mut next);
    }
}

impl Equation {
    /// [`Expr::number_reductions`] of the right-hand side.
    pub fn number_reductions(&mut self) {
        self.expr.number_reductions(self.var);
    }
}

impl System {
    /// Renumbers the reductions of every equation (pre-order within each
    /// equation, see [`ReductionId`]). Called by lowering and by every pass
    /// that creates, moves or rebuilds reductions.
    pub fn number_reductions(&mut self) {
        self.equations
            .iter_mut()
            .for_each(Equation::number_reductions);
    }

    /// The reductions of every equation, in equation order and pre-order
    /// within an equation.
    pub fn reductions(&self) -> Vec<&Reduction> {
        self.equations
            .iter()
            .flat_map(|eq| eq.expr.reductions())
            .collect()
    }
}

/// An external function declaration `external foo(2)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct External {
    pub name: String,
    pub arity: usize,
    pub span: Span,
}

/// A whole checked program: its systems, named constants (already
/// substituted into the systems; kept for printing) and externals.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    pub constants: Vec<(String, i64)>,
    pub externals: Vec<External>,
    pub systems: Vec<System>,
}

impl Program {
    /// The program of system `index` alone, with every constant and
    /// external, or `None` when there is no such system. Systems never
    /// refer to each other in the IR (lowering inlines subsystem calls),
    /// so a system optimizes, schedules and runs the same on its own: the
    /// compiler works on this one instead of every system of the file.
    pub fn only_system(&self, index: usize) -> Option<Program> {
        Some(Program {
            constants: self.constants.clone(),
            externals: self.externals.clone(),
            systems: vec![self.systems.get(index)?.clone()],
        })
    }
}

/// A typed expression with its source location.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: ElemType,
    pub span: Span,
}

/// Deterministic built-in functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Builtin {
    Exp,
    Log,
    Sqrt,
    Abs,
    Pow,
    Floor,
    Ceil,
    Lgamma,
    /// `float(x)`: int or bool to float.
    ToFloat,
    /// `int(x)`: float to int (truncation toward zero), bool to 0/1.
    ToInt,
    /// n-ary `max(a, b, ...)` (int if all int, else float).
    Max,
    /// n-ary `min(a, b, ...)`.
    Min,
}

/// The identity of a stochastic call: the system, the variable whose
/// equation contains it, and the call's position (pre-order ordinal among
/// the stochastic calls of that equation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallSite {
    pub var: VarId,
    pub ordinal: u32,
}

/// The identity of a reduction: the variable whose equation contains it
/// and its position (pre-order ordinal among the reductions of that
/// equation), like [`CallSite`] for stochastic calls. Assigned by
/// [`System::number_reductions`] (lowering and every pass that builds
/// reductions), so it depends only on the program's structure: the
/// printer → parser → lowering round trip gives back the same ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReductionId {
    pub var: VarId,
    pub ordinal: u32,
}

/// The identity of a statement of the augmented program (`deps`): the
/// equation of a variable, or the accumulation or the completion of a
/// reduction. One IR construct may give several polyhedral statements
/// (one per convex piece, and one per enclosing statement); `deps` adds
/// that to the id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StmtId {
    Equation(VarId),
    Accumulate(ReductionId),
    Complete(ReductionId),
}

/// Expression forms. Index spaces: every form is evaluated at a point of
/// the index space of its context (see the module comment).
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    IntConst(i64),
    FloatConst(f64),
    BoolConst(bool),
    /// The value of an affine function of the indices and parameters
    /// (`i`, `N`, `val (i, j -> i + j)`), an int.
    Index(Aff),
    /// `var[f(x)]`: an affine read.
    Read {
        var: VarId,
        access: MultiAff,
    },
    /// `var[e_1, ..., e_n]` where some `e_k` is data-dependent; every index
    /// is an int expression (affine ones are `Index` expressions). A point
    /// outside `var`'s domain is a runtime error naming `var` and the point.
    IndirectRead {
        var: VarId,
        indices: Vec<Expr>,
    },
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `if c then a else b`, pointwise.
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `case { D_1 : E_1; ... }`: the pieces' domains are disjoint (checked).
    Case(Vec<(Set, Expr)>),
    /// `{: c} : E`: `E` restricted to a subdomain of the current space.
    Restrict(Set, Box<Expr>),
    /// `reduce(op, proj, body)`: for an outer point `x`,
    /// `⊕ { body(y) : y ∈ body_domain, proj(y) = x }` (the operator's
    /// identity when empty). The body lives in the space `dims`; for the
    /// `[k, l]` form, `dims` is the outer indices followed by `k, l` and
    /// `proj` keeps the outer ones.
    Reduce(Box<Reduction>),
    /// A call of a deterministic built-in.
    Builtin(Builtin, Vec<Expr>),
    /// A call of a declared external function (index into
    /// `Program::externals`); float arguments and result.
    External(usize, Vec<Expr>),
    /// A stochastic call.
    Random(Distribution, Vec<Expr>, CallSite),
    /// `categorical([k], D : W)`: draws `k` with probability proportional
    /// to the weights `W(x, k)` over the points `k` of `D` (one new index
    /// appended to the outer space; `domain` lives in that extended space).
    Categorical(Box<Categorical>),
    /// A selection value: the data-dependent side `e` of a guard `e == k`
    /// in a reduction body, `k` an index of the reduction's result (see
    /// [`Selection`]); its value is `e`'s, and a value outside `k`'s range
    /// is a run-time error naming the result variable and the index.
    Selection(Box<Selection>),
}

/// The parts of a reduction (see [`ExprKind::Reduce`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Reduction {
    /// The reduction's identity (see [`ReductionId`]).
    pub id: ReductionId,
    pub op: ReduceOp,
    /// The projection: for each outer index, an affine function of the body
    /// space and the parameters (input space: `body_domain`'s).
    pub proj: MultiAff,
    /// Where the body is evaluated: the explicit restriction intersected
    /// with the domains of everything the body reads, over the body space
    /// (whose dimension names are [`Reduction::dims`]).
    pub body_domain: Set,
    pub body: Expr,
}

impl Reduction {
    /// Names of the body space's dimensions.
    pub fn dims(&self) -> &[String] {
        self.body_domain.dims()
    }
}

/// The parts of a categorical draw (see [`ExprKind::Categorical`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Categorical {
    /// Name of the drawn index.
    pub index: String,
    /// Domain over the outer indices followed by the drawn index.
    pub domain: Set,
    pub weight: Expr,
    pub site: CallSite,
}

/// The parts of a selection value (see [`ExprKind::Selection`]).
/// Lowering wraps `e` (`ir::lower::selection`); evaluation order: `value`,
/// then the bounds (which cannot fail).
///
/// Equality ignores `var` and `index`, which only word the message (as
/// [`Expr::same_as`] ignores spans): the same label checked against the
/// same range in the equations of two variables is the same expression,
/// so that rewrites comparing bodies (a total read off a running count)
/// still recognise them.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The data-dependent int expression `e`.
    pub value: Expr,
    /// The range of `k`: the bounds of the result variable's domain in
    /// `k`'s dimension, `Index` expressions of the parameters only (the
    /// bounding box `poly::boxes` gives, the same as the variable's array
    /// box).
    pub lower: Expr,
    pub upper: Expr,
    /// For messages: the result variable and the name of `k`.
    pub var: String,
    pub index: String,
}

impl Selection {
    /// The selection with `value`, `lower` and `upper` (in this order)
    /// replaced by `f` of each; `None` when `f` gives `None` for one.
    pub fn try_map<E>(
        &self,
        mut f: impl FnMut(&Expr) -> Result<Option<Expr>, E>,
    ) -> Result<Option<Selection>, E> {
        let (Some(value), Some(lower), Some(upper)) =
            (f(&self.value)?, f(&self.lower)?, f(&self.upper)?)
        else {
            return Ok(None);
        };
        Ok(Some(Selection {
            value,
            lower,
            upper,
            var: self.var.clone(),
            index: self.index.clone(),
        }))
    }
}

impl PartialEq for Selection {
    fn eq(&self, other: &Selection) -> bool {
        self.value == other.value && self.lower == other.lower && self.upper == other.upper
    }
}

/// Calls `$f` on every direct sub-expression of `$e` (an `Expr`), in
/// source order: `visit_children!(self, f)` borrows shared,
/// `visit_children!(self, f, mut)` mutably.
macro_rules! visit_children {
    ($e:ident, $f:ident $(, $m:tt)?) => {
        match &$($m)? $e.kind {
            ExprKind::IntConst(_)
            | ExprKind::FloatConst(_)
            | ExprKind::BoolConst(_)
            | ExprKind::Index(_)
            | ExprKind::Read { .. } => {}
            ExprKind::IndirectRead { indices: xs, .. }
            | ExprKind::Builtin(_, xs)
            | ExprKind::External(_, xs)
            | ExprKind::Random(_, xs, _) => xs.into_iter().for_each($f),
            ExprKind::Unary(_, x) | ExprKind::Restrict(_, x) => $f(x),
            ExprKind::Binary(_, a, b) => {
                $f(a);
                $f(b);
            }
            ExprKind::If(a, b, c) => {
                $f(a);
                $f(b);
                $f(c);
            }
            ExprKind::Case(pieces) => pieces.into_iter().for_each(|(_, x)| $f(x)),
            ExprKind::Reduce(r) => $f(&$($m)? r.body),
            ExprKind::Categorical(c) => $f(&$($m)? c.weight),
            ExprKind::Selection(x) => {
                $f(&$($m)? x.value);
                $f(&$($m)? x.lower);
                $f(&$($m)? x.upper);
            }
        }
    };
}

impl Expr {
    /// Calls `f` on every direct sub-expression, in source order.
    pub fn for_each_child(&self, f: &mut dyn FnMut(&Expr)) {
        visit_children!(self, f)
    }

    /// Calls `f` on every direct sub-expression, mutably, in source order.
    pub fn for_each_child_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        visit_children!(self, f, mut)
    }
}

impl Expr {
    /// `self` with every span set to the default.
    pub fn clear_spans(&mut self) {
        self.span = Default::default();
        self.for_each_child_mut(&mut Expr::clear_spans);
    }

    /// Structural equality up to source locations (spans).
    pub fn same_as(&self, other: &Expr) -> bool {
        let (mut a, mut b) = (self.clone(), other.clone());
        a.clear_spans();
        b.clear_spans();
        a == b
    }

    /// The reductions of `self`, nested ones included, in pre-order.
    pub fn reductions(&self) -> Vec<&Reduction> {
        fn go<'a>(e: &'a Expr, out: &mut Vec<&'a Reduction>) {
            if let ExprKind::Reduce(r) = &e.kind {
                out.push(r);
            }
            let f = &mut |c: &'a Expr| go(c, out);
            visit_children!(e, f);
        }
        let mut out = Vec::new();
        go(self, &mut out);
        out
    }
}
