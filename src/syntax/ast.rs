//! The abstract syntax tree of a `.alpha` file, exactly as written.
//!
//! Owns: the shape of the source program (files, packages, systems,
//! declarations, domains, equations, expressions), each node with the
//! [`Span`] of its text. Names are plain strings, not yet resolved; affine
//! expressions in domains and functions are kept as [`Expr`] trees (the IR
//! lowering turns them into polyhedral constraints and checks that they are
//! affine). Must not know about name resolution, types, or the polyhedral
//! library.

use crate::diag::Span;

/// Binary, unary and reduction operators (`sum`/`prod` are accepted as
/// `+`/`*`) and element types: the shared vocabulary's, the same words the
/// IR uses.
pub use crate::vocab::{BinOp, ElemType, ReduceOp, UnOp};

/// A name with its location.
#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A whole source file: its top-level items in order.
#[derive(Debug, Clone, PartialEq)]
pub struct File {
    pub items: Vec<Item>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    External(External),
    Constant(Constant),
    Package(Package),
    Import(Import),
    System(System),
}

/// `external [TYPE] NAME(ARITY)`: a function implemented outside the
/// program. The optional result type (an extension) defaults to `float`.
#[derive(Debug, Clone, PartialEq)]
pub struct External {
    pub name: Ident,
    pub result: Option<(ElemType, Span)>,
    pub arity: usize,
    pub span: Span,
}

/// `constant NAME = VALUE`: a named integer constant.
#[derive(Debug, Clone, PartialEq)]
pub struct Constant {
    pub name: Ident,
    pub value: i64,
    pub span: Span,
}

/// `package a.b { ... }` (nestable).
#[derive(Debug, Clone, PartialEq)]
pub struct Package {
    pub name: Vec<Ident>,
    pub items: Vec<Item>,
    pub span: Span,
}

/// `import a.b` or `import a.b.*`.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub path: Vec<Ident>,
    pub wildcard: bool,
    pub span: Span,
}

/// `affine NAME [P...] -> { : context } inputs ... outputs ... locals ... let ... .`
#[derive(Debug, Clone, PartialEq)]
pub struct System {
    pub name: Ident,
    /// The parameters, in order (empty when the system has none).
    pub params: Vec<Ident>,
    /// The parameter context: a set with no index tuple (`{ : ... }`), or
    /// `None` when no parameter declaration was written.
    pub context: Option<Domain>,
    pub inputs: Vec<Decl>,
    pub outputs: Vec<Decl>,
    pub locals: Vec<Decl>,
    /// `sweep z <- znew;` declarations (**ext**), in source order.
    pub sweeps: Vec<SweepDecl>,
    pub equations: Vec<Equation>,
    /// Subsystem calls (`over D with [k] : (Y) = sys[M](X);` or
    /// `use D sys[M](X) returns (Y);`), in source order.
    pub uses: Vec<UseEquation>,
    pub span: Span,
}

/// A subsystem call (Alpha's use equation): for every point `e` of the
/// extension domain, the system `system` instantiated with parameters
/// `params(e)` computes its outputs from `inputs`; output `k` defines the
/// caller's variable written in `outputs[k]`.
#[derive(Debug, Clone, PartialEq)]
pub struct UseEquation {
    /// The extension domain `D` (`over D` / `use D`); `None` for a single
    /// instance. Its index names are in scope in every argument.
    pub domain: Option<Domain>,
    /// `with [k, ...]`: names for the called system's own dimensions,
    /// shared by every input and output (the first `d` of them for a
    /// `d`-dimensional one).
    pub sub_dims: Option<Vec<Ident>>,
    /// The caller's variables receiving the outputs (`Y` or `Y[i, k]`).
    pub outputs: Vec<Expr>,
    /// The called system's name, possibly qualified (`std.linalg.dot`).
    pub system: Vec<Ident>,
    /// The called system's parameters as affine functions of the caller's
    /// parameters and the extension indices.
    pub params: Vec<Expr>,
    pub params_span: Span,
    /// The actual inputs, in the order the called system declares them.
    pub inputs: Vec<Expr>,
    pub span: Span,
}

/// `sweep IN <- OUT`: the input `IN` of the next sweep is this sweep's
/// output `OUT` (**ext**).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepDecl {
    pub input: Ident,
    pub output: Ident,
    pub span: Span,
}

/// `A, B : TYPE DOMAIN` — several variables sharing one type and domain.
#[derive(Debug, Clone, PartialEq)]
pub struct Decl {
    pub names: Vec<Ident>,
    /// The element type (an extension; `float` when omitted).
    pub ty: Option<(ElemType, Span)>,
    /// `None` when no domain is written: a scalar.
    pub domain: Option<Domain>,
    pub span: Span,
}

/// A domain as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Domain {
    pub kind: DomainKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum DomainKind {
    /// `{ P1 ; P2 ; ... }`: the union of the pieces. An empty list is `{}`,
    /// which docs/language.md defines as the scalar (zero-dimensional universe).
    Set(Vec<BasicSet>),
    /// `[E1, ..., En]`: `{ [i1..in] : 0 <= i1 < E1 and ... }`. `[]` is a scalar.
    Array(Vec<Expr>),
}

/// One piece `[i, j] : constraint` of a set. `indices` is `None` for the
/// restriction form `{ : constraint }`, whose indices are those in scope;
/// `constraint` is `None` when no constraint is written (`{ [i] }`, `{ : }`).
#[derive(Debug, Clone, PartialEq)]
pub struct BasicSet {
    pub indices: Option<Vec<Ident>>,
    pub constraint: Option<Constraint>,
    pub span: Span,
}

/// A Boolean combination of affine comparisons.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    pub kind: ConstraintKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ConstraintKind {
    /// Conjunction (`and`, `&&`) of at least two constraints.
    And(Vec<Constraint>),
    /// Disjunction (`or`, `||`) of at least two constraints.
    Or(Vec<Constraint>),
    /// A comparison chain `L0 op1 L1 op2 L2 ...` with `ops.len() + 1 ==
    /// operands.len()`, meaning `L0 op1 L1 and L1 op2 L2 and ...`. Each
    /// operand is a non-empty list (tuple shorthand): `0 <= i, j < N` means
    /// the comparison holds for every choice of one element per list.
    Chain {
        operands: Vec<Vec<Expr>>,
        ops: Vec<(CmpOp, Span)>,
    },
}

/// Comparison operators. `=` and `==` are both `Eq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// `X[i, j] = E` (array notation, `indices` is `Some`) or `X = E`
/// (whole-variable notation, `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Equation {
    pub var: Ident,
    pub indices: Option<Vec<Ident>>,
    pub rhs: Expr,
    pub span: Span,
}

/// An expression with its location.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// `(i, j -> e1, e2)`: an affine function written in function notation.
#[derive(Debug, Clone, PartialEq)]
pub struct AffineFn {
    pub params: Vec<Ident>,
    pub exprs: Vec<Expr>,
    pub span: Span,
}

/// The projection of a reduction.
#[derive(Debug, Clone, PartialEq)]
pub enum Projection {
    /// `[k, l]`: new index names appended to the indices in scope; the
    /// projection drops them.
    Names(Vec<Ident>),
    /// `(i, k -> i)`: an explicit function from the body's space.
    Function(AffineFn),
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// An integer literal (also `3[]`).
    Int(i64),
    /// A floating-point literal (also `0.33333[]`).
    Float(f64),
    Bool(bool),
    /// A bare name: an index, a parameter, a constant, or a whole variable.
    Name(String),
    /// `val (i, j -> e)`: the value of an affine function of the indices.
    Val(AffineFn),
    /// `A[e1, ..., en]`: a read of variable `A` (indices may be any int
    /// expressions; affine ones are ordinary dependences).
    Access {
        var: Ident,
        indices: Vec<Expr>,
    },
    /// `(i, j -> ...) @ E`.
    Dep {
        func: AffineFn,
        body: Box<Expr>,
    },
    Unary {
        op: UnOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `f(e1, ..., en)`: a built-in or external function call (includes
    /// n-ary `max`/`min` and stochastic functions other than `categorical`).
    /// Alpha's operator notations are calls too: `sum`/`prod`/`and`/`or`/
    /// `xor`/`max`/`min` (`+(a, b)` is `sum(a, b)`, `a max b` is
    /// `max(a, b)`, `a xor b` is `xor(a, b)`), and the notation forms of
    /// [`notation`] are calls of a keyword (a name no function can have).
    Call {
        func: Ident,
        args: Vec<Expr>,
    },
    If {
        cond: Box<Expr>,
        then_branch: Box<Expr>,
        else_branch: Box<Expr>,
    },
    /// `case { E1; E2; ... }`: each piece is typically a restriction `D : E`.
    Case(Vec<Expr>),
    /// `D : E`.
    Restrict {
        domain: Domain,
        body: Box<Expr>,
    },
    /// `reduce(OP, PROJ, BODY)`.
    Reduce {
        op: ReduceOp,
        op_span: Span,
        projection: Projection,
        body: Box<Expr>,
    },
    /// `categorical([k], BODY)`: draws `k` with probability proportional to
    /// the weights `BODY` over the body's domain.
    Categorical {
        indices: Vec<Ident>,
        body: Box<Expr>,
    },
}

/// Alpha notations that the AST writes as a call (`ExprKind::Call`) of a
/// keyword, which no user function can be named; lowering gives each its
/// meaning.
pub mod notation {
    /// `val[e]` is `val(e)`: the value of the affine expression `e` of the
    /// indices in scope. A polynomial piece with its own index names,
    /// `val { [i, j] -> p }`, is `val(val (i, j -> p))`: `p` (already
    /// expanded into ordinary arithmetic by the parser) evaluated with
    /// `i, j` bound to the indices in scope.
    pub const VAL: &str = "val";
    /// `auto : E`, a piece of a `case`, is `auto(E)`: `E` where no other
    /// piece of the `case` is defined.
    pub const AUTO: &str = "auto";
    /// `select R from E` is `select(R, E)`: `R` is written
    /// `{[i, ...] : c} : val (i, ... -> e1, ..., en)` (or without the
    /// restriction), and the value at `x` is `E` at `(e1, ..., en)(x)`,
    /// where `x` satisfies `c`; inside `E` the results are named by the
    /// `ek` that are bare names.
    pub const SELECT: &str = "select";
}
