//! The static check of a loop program: every symbol exists and is in
//! scope, bounds and accesses are well formed, every expression is well
//! typed ([`Function::check`], [`Function::type_of`], [`binop_type`]).
//!
//! Must not know about: printing, the scanner, the optimizer, the JIT.

use super::*;

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
    #[error("loop over `{var}` is marked parallel, but {reason}")]
    NotParallel { var: String, reason: String },
}

fn type_err<T>(msg: impl Into<String>) -> Result<T, AstError> {
    Err(AstError::Type(msg.into()))
}

impl Function {
    /// Checks that the program is well formed: every symbol exists and is
    /// in scope (a loop variable only inside its own `For` or the body of
    /// its own `Bind`, never rebound by a nested one), array bounds are affine in the parameters, loop
    /// bounds have terms with divisors `>= 1`, accesses have one index per
    /// dimension, every expression is well typed, and every loop marked
    /// parallel is proven so (`parallel::is_parallel`).
    pub fn check(&self) -> Result<(), AstError> {
        let np = self.params.len();
        if self.context.n_dims() != 0 || self.context.n_params() != np {
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
                let ok = dom.n_dims() == a.dims.len() && dom.n_params() == np;
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
            Stmt::For(l) => {
                self.check_binder(l.var, &l.lower, &l.upper, scope)?;
                if l.parallel {
                    super::parallel::is_parallel(self, l).map_err(|r| AstError::NotParallel {
                        var: self.loop_vars.get(l.var.0).cloned().unwrap_or_default(),
                        reason: r.to_string(),
                    })?;
                }
                scope.push(l.var);
                let r = self.check_stmts(&l.body, scope);
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
            Stmt::Accumulate(a) => {
                let ty = self.check_access(a.array, &a.index, scope)?;
                let vt = self.type_of(&a.value, scope)?;
                binop_type(acc_bin_op(a.op), ty, vt).and_then(|r| {
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
            Stmt::Bind(b) => {
                // `guard` and `value` are evaluated before `var` is bound.
                self.check_binder(b.var, &b.lower, &b.upper, scope)?;
                if self.type_of(&b.guard, scope)? != ElemType::Bool {
                    return type_err("binding guard is not a bool");
                }
                if self.type_of(&b.value, scope)? != ElemType::Int {
                    return type_err("bound value is not an int");
                }
                scope.push(b.var);
                let r = self.check_stmts(&b.body, scope);
                scope.pop();
                r
            }
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
            Expr::Selection(s) => {
                for x in [&s.value, &s.lower, &s.upper] {
                    if self.type_of(x, scope)? != Int {
                        return type_err("a selection value or bound is not an int");
                    }
                }
                Int
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
            Expr::Random(r) => {
                let dist = r.dist;
                if r.args.len() != dist.arity() {
                    return type_err(format!(
                        "{} takes {} argument(s)",
                        dist.name(),
                        dist.arity()
                    ));
                }
                for a in &r.args {
                    if self.type_of(a, scope)? != Float {
                        return type_err(format!("{} of a non-float", dist.name()));
                    }
                }
                self.check_rng_key(&r.seed, &r.point, scope)?;
                dist.result()
            }
            Expr::Categorical(c) => {
                self.check_binder(c.var, &c.lower, &c.upper, scope)?;
                if let Some(a) = c.array {
                    self.arrays.get(a).ok_or(AstError::UnknownArray(a))?;
                }
                self.check_rng_key(&c.seed, &c.point, scope)?;
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

    /// Checks the key of a counter-based draw: an int seed and int point
    /// coordinates.
    fn check_rng_key(
        &self,
        seed: &Expr,
        point: &[Expr],
        scope: &[LoopVar],
    ) -> Result<(), AstError> {
        if self.type_of(seed, scope)? != ElemType::Int {
            return type_err("RNG seed is not an int");
        }
        for p in point {
            if self.type_of(p, scope)? != ElemType::Int {
                return type_err("RNG point coordinate is not an int");
            }
        }
        Ok(())
    }

    /// Checks a variable bound over `lower ..= upper` (a loop's or a
    /// categorical draw's) where the loop variables of `scope` are bound:
    /// the variable exists and is not bound already, and the bounds are
    /// well formed ([`Function::check_bounds`]).
    fn check_binder(
        &self,
        var: LoopVar,
        lower: &Bound,
        upper: &Bound,
        scope: &[LoopVar],
    ) -> Result<(), AstError> {
        let name = self
            .loop_vars
            .get(var.0)
            .ok_or(AstError::UnknownLoopVar(var.0))?;
        if scope.contains(&var) {
            return Err(AstError::LoopVarRebound(name.clone()));
        }
        self.check_bounds(lower, upper, scope)
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
