//! The shared vocabulary at the bottom of the pipeline: the words every
//! stage uses for the same thing, one enum per concept.
//!
//! Owns: element types ([`ElemType`]) and element values ([`Scalar`]);
//! unary operators ([`UnOp`]); the source's binary operators ([`BinOp`])
//! with their symbols and binding strengths; reduction operators
//! ([`ReduceOp`]) with their identity, inverse and idempotence; the
//! distributions of the stochastic built-ins ([`Distribution`]) with their
//! names, arities and result types.
//!
//! Must not know about: anything else. It imports nothing from the crate,
//! so `syntax`, `ir`, `runtime`, `jit`, `interp` and `codegen` can share
//! these words without importing `ir` or each other.

use std::fmt;

/// Element type of a variable or expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElemType {
    Int,
    Float,
    Bool,
}

impl ElemType {
    /// The type as written in `.alpha` (`int`, `float`, `bool`).
    pub fn name(self) -> &'static str {
        match self {
            ElemType::Int => "int",
            ElemType::Float => "float",
            ElemType::Bool => "bool",
        }
    }
}

/// One element value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    /// The element type of the value.
    pub fn ty(self) -> ElemType {
        match self {
            Scalar::Int(_) => ElemType::Int,
            Scalar::Float(_) => ElemType::Float,
            Scalar::Bool(_) => ElemType::Bool,
        }
    }
    /// The zero of a type: `0`, `0.0`, `false`.
    pub fn zero(ty: ElemType) -> Scalar {
        match ty {
            ElemType::Int => Scalar::Int(0),
            ElemType::Float => Scalar::Float(0.0),
            ElemType::Bool => Scalar::Bool(false),
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::Float(v) => write!(f, "{v}"),
            Scalar::Bool(v) => write!(f, "{v}"),
        }
    }
}

/// Unary operators: int (checked) or float negation, bool negation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
}

/// The binary operators of `.alpha` expressions, from the parser to the
/// IR (one enum: lowering does not translate them). Arithmetic on two ints
/// is int (`/` and `%` truncate like Rust; division by zero is a runtime
/// error); with a float operand the int is promoted. Comparisons yield
/// bool; `And`/`Or` take bools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    /// `%`: the truncating remainder (sign of the dividend), `fmod` on
    /// floats.
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    /// The operator as the printer writes it in `.alpha` (the parser also
    /// accepts `=` for `==`, `&&` for `and`, `||` for `or`).
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
        }
    }
    /// Binding strength, higher binds tighter: `or` 1 < `and` 2 <
    /// comparisons 3 < `+ -` 4 < `* / %` 5. Every operator is
    /// left-associative.
    pub const fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 3,
            BinOp::Add | BinOp::Sub => 4,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 5,
        }
    }
    /// True for the comparisons (`== != < <= > >=`).
    pub const fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// Reduction (and accumulation) operators: `a ⊕ b` for
/// `⊕ ∈ {+, *, max, min, and, or}`, all associative and commutative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Add,
    Mul,
    Max,
    Min,
    And,
    Or,
}

impl ReduceOp {
    /// True for the operators with an inverse (`+` has `-`, `*` has `/`),
    /// the ones whose reductions SDR may simplify by subtraction.
    pub fn has_inverse(self) -> bool {
        matches!(self, ReduceOp::Add | ReduceOp::Mul)
    }
    /// True for the idempotent operators (`a ⊕ a = a`: `max`, `min`,
    /// `and`, `or`).
    pub fn is_idempotent(self) -> bool {
        !self.has_inverse()
    }
    /// The operator as written in `.alpha` (`+`, `*`, `max`, ...).
    pub fn symbol(self) -> &'static str {
        match self {
            ReduceOp::Add => "+",
            ReduceOp::Mul => "*",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::And => "and",
            ReduceOp::Or => "or",
        }
    }
    /// The identity `e` of the operator at a type (`e ⊕ a = a`): the value
    /// of a reduction over an empty set. For `max`/`min` on ints it is
    /// `i64::MIN`/`i64::MAX`, on floats `-∞`/`+∞`; `and`/`or` are on bools
    /// whatever `ty` says.
    pub fn identity(self, ty: ElemType) -> Scalar {
        match (self, ty) {
            (ReduceOp::Add, ElemType::Int) => Scalar::Int(0),
            (ReduceOp::Mul, ElemType::Int) => Scalar::Int(1),
            (ReduceOp::Max, ElemType::Int) => Scalar::Int(i64::MIN),
            (ReduceOp::Min, ElemType::Int) => Scalar::Int(i64::MAX),
            (ReduceOp::Add, _) => Scalar::Float(0.0),
            (ReduceOp::Mul, _) => Scalar::Float(1.0),
            (ReduceOp::Max, _) => Scalar::Float(f64::NEG_INFINITY),
            (ReduceOp::Min, _) => Scalar::Float(f64::INFINITY),
            (ReduceOp::And, _) => Scalar::Bool(true),
            (ReduceOp::Or, _) => Scalar::Bool(false),
        }
    }
}

/// Stochastic built-ins (counter-based: a draw is a pure function of
/// `(seed, call site, iteration point)` and the arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// `uniform()`: float in [0, 1).
    Uniform,
    /// `normal(mean, sd)`: float.
    Normal,
    /// `gamma(shape, scale)`: float.
    Gamma,
    /// `beta(a, b)`: float.
    Beta,
    /// `bernoulli(p)`: bool.
    Bernoulli,
    /// `poisson(lambda)`: int.
    Poisson,
}

impl Distribution {
    /// Every distribution, in declaration order.
    pub const ALL: [Distribution; 6] = [
        Distribution::Uniform,
        Distribution::Normal,
        Distribution::Gamma,
        Distribution::Beta,
        Distribution::Bernoulli,
        Distribution::Poisson,
    ];
    /// Number of (float) arguments.
    pub fn arity(self) -> usize {
        match self {
            Distribution::Uniform => 0,
            Distribution::Bernoulli | Distribution::Poisson => 1,
            Distribution::Normal | Distribution::Gamma | Distribution::Beta => 2,
        }
    }
    /// Type of a draw.
    pub fn result(self) -> ElemType {
        match self {
            Distribution::Bernoulli => ElemType::Bool,
            Distribution::Poisson => ElemType::Int,
            _ => ElemType::Float,
        }
    }
    /// The built-in's name in `.alpha`.
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Normal => "normal",
            Distribution::Gamma => "gamma",
            Distribution::Beta => "beta",
            Distribution::Bernoulli => "bernoulli",
            Distribution::Poisson => "poisson",
        }
    }
    /// The distribution called `name`, if any.
    pub fn from_name(name: &str) -> Option<Distribution> {
        Distribution::ALL.into_iter().find(|d| d.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_is_neutral() {
        let ops = [ReduceOp::Add, ReduceOp::Mul, ReduceOp::Max, ReduceOp::Min];
        for op in ops {
            for x in [-3i64, 0, 7] {
                let Scalar::Int(e) = op.identity(ElemType::Int) else {
                    panic!("int identity of {op:?} is not an int");
                };
                let y = match op {
                    ReduceOp::Add => e + x,
                    ReduceOp::Mul => e * x,
                    ReduceOp::Max => e.max(x),
                    _ => e.min(x),
                };
                assert_eq!(y, x, "{op:?}");
            }
        }
        assert_eq!(ReduceOp::And.identity(ElemType::Bool), Scalar::Bool(true));
        assert_eq!(ReduceOp::Or.identity(ElemType::Bool), Scalar::Bool(false));
    }

    #[test]
    fn distribution_names_round_trip() {
        for d in Distribution::ALL {
            assert_eq!(Distribution::from_name(d.name()), Some(d));
        }
        assert_eq!(Distribution::from_name("cauchy"), None);
    }
}
