//! The evaluator proper: memoized demand-driven evaluation of elements
//! and of expressions at points (see the parent module for the semantics).
//!
//! Owns: the per-element memo and its cycle detection, the stack guard,
//! the value semantics of every expression form.
//! Must not know about: argument handling and input validation (done by
//! the parent module before an `Evaluator` exists), file formats.

use super::{element_name, InterpError, Options};
use crate::diag::Span;
use crate::ir::{
    BinOp, Builtin, CallSite, Categorical, Distribution, ElemType, Expr, ExprKind, Program,
    ReduceOp, Reduction, ReductionId, System, UnOp, VarId, VarKind,
};
use crate::poly::points::{self, PointScanError, PointScanner};
use crate::poly::PolyError;
use crate::runtime::rng::Stream;
use crate::runtime::RuntimeError;
use crate::runtime::{math, Array, Scalar};
use std::collections::HashMap;
use std::rc::Rc;

/// State of one memoized element.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Todo,
    Busy,
    Done,
}

/// The memo of a defined variable: its values (also the final output
/// array) and the state of each element.
struct Memo {
    values: Array,
    state: Vec<State>,
}

/// What a cached point scanner belongs to: a reduction (its body domain
/// projected on the outer space) or a categorical draw (its domain).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ScanKey {
    Reduce(ReductionId),
    Categorical(CallSite),
}

pub(super) struct Evaluator<'a> {
    prog: &'a Program,
    sys: &'a System,
    params: &'a [i64],
    seed: u64,
    opts: &'a Options,
    inputs: Vec<Option<Array>>,
    memo: Vec<Option<Memo>>,
    /// Equation index of each defined variable.
    eq_of: Vec<Option<usize>>,
    /// Elements being computed, outermost first.
    stack: Vec<(VarId, Vec<i64>)>,
    /// Scanners of reductions and categoricals, by their ids.
    scanners: HashMap<ScanKey, Rc<PointScanner>>,
    /// Address of a local at the start of the evaluation thread.
    stack_base: usize,
    /// Stack bytes that may be used before evaluation stops.
    stack_limit: usize,
}

/// The address of a local of the caller's frame (stack position).
#[inline(never)]
fn stack_position() -> usize {
    let marker = 0u8;
    std::hint::black_box(std::ptr::addr_of!(marker)) as usize
}

type R<T> = Result<T, InterpError>;

impl<'a> Evaluator<'a> {
    pub(super) fn new(
        prog: &'a Program,
        sys: &'a System,
        params: &'a [i64],
        inputs: Vec<Option<Array>>,
        seed: u64,
        opts: &'a Options,
        stack_limit: usize,
    ) -> R<Evaluator<'a>> {
        let mut memo = Vec::with_capacity(sys.vars.len());
        let mut eq_of = vec![None; sys.vars.len()];
        for (i, e) in sys.equations.iter().enumerate() {
            if e.var < eq_of.len() {
                eq_of[e.var] = Some(i);
            }
        }
        for (id, var) in sys.vars.iter().enumerate() {
            if var.kind == VarKind::Input {
                memo.push(None);
                continue;
            }
            if eq_of[id].is_none() {
                return Err(InterpError::Internal(format!(
                    "{} has no equation",
                    var.name
                )));
            }
            let spec = super::array_spec(var, params)?;
            let values = Array::zeros(&spec)?;
            let state = vec![State::Todo; values.len()];
            memo.push(Some(Memo { values, state }));
        }
        Ok(Evaluator {
            prog,
            sys,
            params,
            seed,
            opts,
            inputs,
            memo,
            eq_of,
            stack: Vec::new(),
            scanners: HashMap::new(),
            stack_base: stack_position(),
            stack_limit,
        })
    }

    /// Evaluates every element of every output, then of every local, and
    /// returns the outputs.
    pub(super) fn run_all(mut self) -> R<HashMap<String, Array>> {
        for kind in [VarKind::Output, VarKind::Local] {
            for (id, var) in self.sys.vars.iter().enumerate() {
                if var.kind != kind {
                    continue;
                }
                let points = points::points(&var.domain, self.params)
                    .map_err(|e| RuntimeError::scan(&var.name, e))?;
                for p in points {
                    self.element(id, &p, var.span)?;
                }
            }
        }
        let mut out = HashMap::new();
        for (id, var) in self.sys.vars.iter().enumerate() {
            if var.kind == VarKind::Output {
                if let Some(m) = self.memo[id].take() {
                    out.insert(var.name.clone(), m.values);
                }
            }
        }
        Ok(out)
    }

    /// The element being computed and the error for `msg` at `point`.
    fn err(&self, point: &[i64], span: Span, msg: impl Into<String>) -> InterpError {
        let at = match self.stack.last() {
            Some((v, p)) => element_name(&self.sys.vars[*v].name, p),
            None => "(top level)".to_string(),
        };
        InterpError::Eval {
            at,
            point: point.to_vec(),
            msg: msg.into(),
            span,
        }
    }

    /// The value of element `v[p]` (`p` must be in `v`'s domain).
    fn element(&mut self, v: VarId, p: &[i64], span: Span) -> R<Scalar> {
        if let Some(a) = &self.inputs[v] {
            return Ok(a.get(p)?);
        }
        let m = self.memo[v].as_ref().ok_or_else(|| {
            InterpError::Internal(format!("no values for {}", self.sys.vars[v].name))
        })?;
        let off = m.values.offset(p)?;
        match m.state[off] {
            State::Done => return Ok(m.values.get(p)?),
            State::Busy => {
                let start = self
                    .stack
                    .iter()
                    .position(|(w, q)| *w == v && q.as_slice() == p)
                    .unwrap_or(0);
                let mut path: Vec<String> = self.stack[start..]
                    .iter()
                    .map(|(w, q)| element_name(&self.sys.vars[*w].name, q))
                    .collect();
                path.push(element_name(&self.sys.vars[v].name, p));
                return Err(InterpError::Cycle { path });
            }
            State::Todo => {}
        }
        if self.stack.len() >= self.opts.max_depth
            || self.stack_base.abs_diff(stack_position()) > self.stack_limit
        {
            return Err(InterpError::TooDeep(self.stack.len()));
        }
        let eq = self.eq_of[v]
            .map(|i| &self.sys.equations[i])
            .ok_or_else(|| {
                InterpError::Internal(format!("{} has no equation", self.sys.vars[v].name))
            })?;
        self.set_state(v, off, State::Busy);
        self.stack.push((v, p.to_vec()));
        let val = self.eval(&eq.expr, p)?;
        let val = self.coerce(val, self.sys.vars[v].ty, p, span)?;
        self.stack.pop();
        if let Some(m) = self.memo[v].as_mut() {
            m.values.set(p, val)?;
            m.state[off] = State::Done;
        }
        Ok(val)
    }

    fn set_state(&mut self, v: VarId, off: usize, s: State) {
        if let Some(m) = self.memo[v].as_mut() {
            m.state[off] = s;
        }
    }

    /// Promotes int to float where the type asks for it.
    fn coerce(&self, v: Scalar, ty: ElemType, p: &[i64], span: Span) -> R<Scalar> {
        match (v, ty) {
            (Scalar::Int(x), ElemType::Float) => Ok(Scalar::Float(x as f64)),
            (v, t) if v.ty() == t => Ok(v),
            (v, t) => Err(self.err(
                p,
                span,
                format!(
                    "type error: {} value where {} expected",
                    v.ty().name(),
                    t.name()
                ),
            )),
        }
    }

    /// The error of evaluating an affine function (`what`) at `p`: an
    /// overflow, or (malformed IR) a function over the wrong space.
    fn affine_err(&self, e: PolyError, p: &[i64], span: Span, what: &str) -> InterpError {
        match e {
            PolyError::Overflow => self.err(p, span, format!("integer overflow in {what}")),
            e => InterpError::Internal(format!("{what} at {p:?}: {e}")),
        }
    }

    fn as_float(&self, v: Scalar, p: &[i64], span: Span) -> R<f64> {
        match v {
            Scalar::Float(x) => Ok(x),
            Scalar::Int(x) => Ok(x as f64),
            other => Err(self.wrong_type(other, "a number", p, span)),
        }
    }

    fn as_int(&self, v: Scalar, p: &[i64], span: Span) -> R<i64> {
        match v {
            Scalar::Int(x) => Ok(x),
            other => Err(self.wrong_type(other, "int", p, span)),
        }
    }

    fn as_bool(&self, v: Scalar, p: &[i64], span: Span) -> R<bool> {
        match v {
            Scalar::Bool(x) => Ok(x),
            other => Err(self.wrong_type(other, "bool", p, span)),
        }
    }

    /// The error for the value `v` where `want` is expected.
    fn wrong_type(&self, v: Scalar, want: &str, p: &[i64], span: Span) -> InterpError {
        let msg = format!("type error: {} where {want} is expected", v.ty().name());
        self.err(p, span, msg)
    }

    /// Reads `v` at `q`, checking `q` against `v`'s domain.
    fn read(&mut self, v: VarId, q: &[i64], p: &[i64], span: Span, indirect: bool) -> R<Scalar> {
        let var = self
            .sys
            .vars
            .get(v)
            .ok_or_else(|| InterpError::Internal(format!("variable id {v}")))?;
        if q.len() != var.domain.n_dims() || !var.domain.contains(self.params, q) {
            let kind = if indirect { "indirect read" } else { "read" };
            return Err(self.err(
                p,
                span,
                format!(
                    "{kind} {} is outside the domain of {}",
                    element_name(&var.name, q),
                    var.name
                ),
            ));
        }
        self.element(v, q, span)
    }

    /// The value of `e` at point `p` of its index space.
    fn eval(&mut self, e: &Expr, p: &[i64]) -> R<Scalar> {
        if self.stack_base.abs_diff(stack_position()) > self.stack_limit {
            return Err(InterpError::TooDeep(self.stack.len()));
        }
        let span = e.span;
        match &e.kind {
            ExprKind::IntConst(x) => Ok(Scalar::Int(*x)),
            ExprKind::FloatConst(x) => Ok(Scalar::Float(*x)),
            ExprKind::BoolConst(x) => Ok(Scalar::Bool(*x)),
            ExprKind::Index(a) => a
                .eval(self.params, p)
                .map(Scalar::Int)
                .map_err(|e| self.affine_err(e, p, span, "an index expression")),
            ExprKind::Read { var, access } => {
                let q = access
                    .eval(self.params, p)
                    .map_err(|e| self.affine_err(e, p, span, "an access function"))?;
                self.read(*var, &q, p, span, false)
            }
            ExprKind::IndirectRead { var, indices } => {
                let mut q = Vec::with_capacity(indices.len());
                for ix in indices {
                    let v = self.eval(ix, p)?;
                    q.push(self.as_int(v, p, ix.span)?);
                }
                self.read(*var, &q, p, span, true)
            }
            ExprKind::Unary(op, a) => {
                let v = self.eval(a, p)?;
                match (op, v) {
                    (UnOp::Neg, Scalar::Int(x)) => x
                        .checked_neg()
                        .map(Scalar::Int)
                        .ok_or_else(|| self.err(p, span, "integer overflow in negation")),
                    (UnOp::Neg, Scalar::Float(x)) => Ok(Scalar::Float(-x)),
                    (UnOp::Not, Scalar::Bool(x)) => Ok(Scalar::Bool(!x)),
                    (op, v) => {
                        Err(self.err(p, span, format!("type error: {op:?} of {}", v.ty().name())))
                    }
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, p, span),
            ExprKind::If(c, a, b) => {
                let cv = self.eval(c, p)?;
                let v = if self.as_bool(cv, p, c.span)? {
                    self.eval(a, p)?
                } else {
                    self.eval(b, p)?
                };
                self.coerce(v, e.ty, p, span)
            }
            ExprKind::Case(pieces) => {
                for (d, x) in pieces {
                    if d.contains(self.params, p) {
                        let v = self.eval(x, p)?;
                        return self.coerce(v, e.ty, p, span);
                    }
                }
                Err(self.err(p, span, "no case branch contains the point"))
            }
            ExprKind::Restrict(d, x) => {
                if !d.contains(self.params, p) {
                    return Err(self.err(p, span, "the point is outside the restriction's domain"));
                }
                let v = self.eval(x, p)?;
                self.coerce(v, e.ty, p, span)
            }
            ExprKind::Reduce(r) => self.reduce(e, r, p),
            ExprKind::Builtin(b, args) => self.builtin(*b, args, e.ty, p, span),
            ExprKind::Selection(x) => {
                let v = self.eval(&x.value, p)?;
                let v = self.as_int(v, p, x.value.span)?;
                let lo = self.eval(&x.lower, p)?;
                let lo = self.as_int(lo, p, x.lower.span)?;
                let hi = self.eval(&x.upper, p)?;
                let hi = self.as_int(hi, p, x.upper.span)?;
                if v < lo || v > hi {
                    return Err(self.err(
                        p,
                        x.value.span,
                        crate::runtime::error::selection_out_of_range(v, lo, hi, &x.index, &x.var),
                    ));
                }
                Ok(Scalar::Int(v))
            }
            ExprKind::External(i, args) => {
                let ext = self
                    .prog
                    .externals
                    .get(*i)
                    .ok_or_else(|| InterpError::Internal(format!("external #{i}")))?;
                let mut xs = Vec::with_capacity(args.len());
                for a in args {
                    let v = self.eval(a, p)?;
                    xs.push(self.as_float(v, p, a.span)?);
                }
                let f = self.opts.externals.get(&ext.name).ok_or_else(|| {
                    self.err(
                        p,
                        span,
                        format!("no implementation of external function {}", ext.name),
                    )
                })?;
                Ok(Scalar::Float(f(&xs)))
            }
            ExprKind::Random(d, args, site) => {
                let mut xs = Vec::with_capacity(args.len());
                for a in args {
                    let v = self.eval(a, p)?;
                    xs.push(self.as_float(v, p, a.span)?);
                }
                let s = Stream::new(self.seed, site.var as u64, site.ordinal as u64, p);
                let arg = |k: usize| -> R<f64> {
                    xs.get(k).copied().ok_or_else(|| {
                        self.err(p, span, format!("{d:?} needs {} arguments", k + 1))
                    })
                };
                let r = match d {
                    Distribution::Uniform => Ok(Scalar::Float(s.uniform(0))),
                    Distribution::Normal => s.normal(arg(0)?, arg(1)?).map(Scalar::Float),
                    Distribution::Gamma => s.gamma(arg(0)?, arg(1)?).map(Scalar::Float),
                    Distribution::Beta => s.beta(arg(0)?, arg(1)?).map(Scalar::Float),
                    Distribution::Bernoulli => s.bernoulli(arg(0)?).map(Scalar::Bool),
                    Distribution::Poisson => s.poisson(arg(0)?).map(Scalar::Int),
                };
                let v = r.map_err(|de| self.err(p, span, de.to_string()))?;
                self.coerce(v, e.ty, p, span)
            }
            ExprKind::Categorical(c) => self.categorical(e, c, p),
        }
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, p: &[i64], span: Span) -> R<Scalar> {
        use BinOp::*;
        let x = self.eval(a, p)?;
        if matches!(op, And | Or) {
            let xb = self.as_bool(x, p, a.span)?;
            if (op == And && !xb) || (op == Or && xb) {
                return Ok(Scalar::Bool(xb));
            }
            let y = self.eval(b, p)?;
            return Ok(Scalar::Bool(self.as_bool(y, p, b.span)?));
        }
        let y = self.eval(b, p)?;
        let ovf = |s: &Self| s.err(p, span, format!("integer overflow in {op:?}"));
        match (x, y) {
            (Scalar::Int(i), Scalar::Int(j)) => {
                let r = match op {
                    Add => i.checked_add(j).ok_or_else(|| ovf(self))?,
                    Sub => i.checked_sub(j).ok_or_else(|| ovf(self))?,
                    Mul => i.checked_mul(j).ok_or_else(|| ovf(self))?,
                    Div | Rem => {
                        if j == 0 {
                            return Err(self.err(p, span, "integer division by zero"));
                        }
                        let r = if op == Div {
                            i.checked_div(j)
                        } else {
                            i.checked_rem(j)
                        };
                        r.ok_or_else(|| ovf(self))?
                    }
                    Eq => return Ok(Scalar::Bool(i == j)),
                    Ne => return Ok(Scalar::Bool(i != j)),
                    Lt => return Ok(Scalar::Bool(i < j)),
                    Le => return Ok(Scalar::Bool(i <= j)),
                    Gt => return Ok(Scalar::Bool(i > j)),
                    Ge => return Ok(Scalar::Bool(i >= j)),
                    And | Or => return Err(InterpError::Internal("and/or handled above".into())),
                };
                Ok(Scalar::Int(r))
            }
            (Scalar::Bool(i), Scalar::Bool(j)) => match op {
                Eq => Ok(Scalar::Bool(i == j)),
                Ne => Ok(Scalar::Bool(i != j)),
                _ => Err(self.err(p, span, format!("type error: {op:?} of two bools"))),
            },
            (x, y) => {
                let i = self.as_float(x, p, a.span)?;
                let j = self.as_float(y, p, b.span)?;
                Ok(match op {
                    Add => Scalar::Float(i + j),
                    Sub => Scalar::Float(i - j),
                    Mul => Scalar::Float(i * j),
                    Div => Scalar::Float(i / j),
                    Rem => Scalar::Float(i % j),
                    Eq => Scalar::Bool(i == j),
                    Ne => Scalar::Bool(i != j),
                    Lt => Scalar::Bool(i < j),
                    Le => Scalar::Bool(i <= j),
                    Gt => Scalar::Bool(i > j),
                    Ge => Scalar::Bool(i >= j),
                    And | Or => return Err(InterpError::Internal("and/or handled above".into())),
                })
            }
        }
    }

    /// The points `y` with the outer point `p` as prefix (or as
    /// projection) of the scanner cached for the reduction or categorical
    /// `key`, built by `make` from the parameter values on first use. A
    /// scanning failure is reported against the variable being computed.
    fn scan_points(
        &mut self,
        key: ScanKey,
        p: &[i64],
        make: impl FnOnce(&[i64]) -> Result<PointScanner, PointScanError>,
    ) -> R<Vec<Vec<i64>>> {
        let name = self
            .stack
            .last()
            .map(|(v, _)| self.sys.vars[*v].name.as_str())
            .unwrap_or_default();
        let s = match self.scanners.get(&key) {
            Some(s) => s.clone(),
            None => {
                let s = Rc::new(make(self.params).map_err(|e| RuntimeError::scan(name, e))?);
                self.scanners.insert(key, s.clone());
                s
            }
        };
        Ok(s.points(p).map_err(|e| RuntimeError::scan(name, e))?)
    }

    fn reduce(&mut self, e: &Expr, r: &Reduction, p: &[i64]) -> R<Scalar> {
        let span = e.span;
        let points = self.scan_points(ScanKey::Reduce(r.id), p, |params| {
            PointScanner::for_projection(&r.body_domain, &r.proj, params)
        })?;
        let mut acc = r.op.identity(e.ty);
        for y in &points {
            let v = self.eval(&r.body, y)?;
            let v = self.coerce(v, e.ty, y, r.body.span)?;
            acc = self.combine(r.op, acc, v, y, span)?;
        }
        Ok(acc)
    }

    fn combine(&self, op: ReduceOp, acc: Scalar, v: Scalar, p: &[i64], span: Span) -> R<Scalar> {
        use Scalar::*;
        let ovf = || {
            self.err(
                p,
                span,
                format!("integer overflow in reduction {}", op.symbol()),
            )
        };
        Ok(match (op, acc, v) {
            (ReduceOp::Add, Int(a), Int(b)) => Int(a.checked_add(b).ok_or_else(ovf)?),
            (ReduceOp::Mul, Int(a), Int(b)) => Int(a.checked_mul(b).ok_or_else(ovf)?),
            (ReduceOp::Max, Int(a), Int(b)) => Int(a.max(b)),
            (ReduceOp::Min, Int(a), Int(b)) => Int(a.min(b)),
            (ReduceOp::Add, Float(a), Float(b)) => Float(a + b),
            (ReduceOp::Mul, Float(a), Float(b)) => Float(a * b),
            (ReduceOp::Max, Float(a), Float(b)) => Float(math::fmax(a, b)),
            (ReduceOp::Min, Float(a), Float(b)) => Float(math::fmin(a, b)),
            (ReduceOp::And, Bool(a), Bool(b)) => Bool(a && b),
            (ReduceOp::Or, Bool(a), Bool(b)) => Bool(a || b),
            (op, a, b) => {
                return Err(self.err(
                    p,
                    span,
                    format!(
                        "type error: reduction {} of {} and {}",
                        op.symbol(),
                        a.ty().name(),
                        b.ty().name()
                    ),
                ))
            }
        })
    }

    fn categorical(&mut self, e: &Expr, c: &Categorical, p: &[i64]) -> R<Scalar> {
        let span = e.span;
        let n = p.len();
        if c.domain.n_dims() != n + 1 {
            return Err(InterpError::Internal(format!(
                "categorical domain has {} dimensions in a space of {n}",
                c.domain.n_dims()
            )));
        }
        let ks = self.scan_points(ScanKey::Categorical(c.site), p, |params| {
            PointScanner::new(&c.domain, n, params)
        })?;
        let mut weights = Vec::with_capacity(ks.len());
        let mut q = p.to_vec();
        q.push(0);
        for k in &ks {
            q[n] = k[0];
            let w = self.eval(&c.weight, &q)?;
            weights.push(self.as_float(w, &q, c.weight.span)?);
        }
        let st = Stream::new(self.seed, c.site.var as u64, c.site.ordinal as u64, p);
        let i = st
            .categorical(&weights)
            .map_err(|de| self.err(p, span, de.to_string()))?;
        Ok(Scalar::Int(ks[i][0]))
    }

    fn builtin(
        &mut self,
        b: Builtin,
        args: &[Expr],
        ty: ElemType,
        p: &[i64],
        span: Span,
    ) -> R<Scalar> {
        let mut vs = Vec::with_capacity(args.len());
        for a in args {
            vs.push(self.eval(a, p)?);
        }
        let need = |k: usize| -> R<()> {
            if vs.len() < k {
                Err(self.err(
                    p,
                    span,
                    format!("{b:?} needs {k} arguments, {} given", vs.len()),
                ))
            } else {
                Ok(())
            }
        };
        let f0 = |s: &Self| s.as_float(vs[0], p, span);
        let v = match b {
            Builtin::Exp
            | Builtin::Log
            | Builtin::Sqrt
            | Builtin::Floor
            | Builtin::Ceil
            | Builtin::Lgamma => {
                need(1)?;
                let x = f0(self)?;
                let r = match b {
                    Builtin::Exp => math::exp(x),
                    Builtin::Log => math::log(x),
                    Builtin::Sqrt => math::sqrt(x),
                    Builtin::Floor => math::floor(x),
                    Builtin::Ceil => math::ceil(x),
                    _ => math::lgamma(x),
                };
                if ty == ElemType::Int {
                    Scalar::Int(self.float_to_int(r, p, span)?)
                } else {
                    Scalar::Float(r)
                }
            }
            Builtin::Abs => {
                need(1)?;
                match vs[0] {
                    Scalar::Int(i) => Scalar::Int(
                        i.checked_abs()
                            .ok_or_else(|| self.err(p, span, "integer overflow in abs"))?,
                    ),
                    _ => Scalar::Float(math::abs(f0(self)?)),
                }
            }
            Builtin::Pow => {
                need(2)?;
                match (vs[0], vs[1], ty) {
                    (Scalar::Int(x), Scalar::Int(y), ElemType::Int) => {
                        let y = u32::try_from(y).map_err(|_| {
                            self.err(p, span, format!("pow: negative or huge int exponent {y}"))
                        })?;
                        Scalar::Int(
                            x.checked_pow(y)
                                .ok_or_else(|| self.err(p, span, "integer overflow in pow"))?,
                        )
                    }
                    _ => Scalar::Float(math::pow(f0(self)?, self.as_float(vs[1], p, span)?)),
                }
            }
            Builtin::ToFloat => {
                need(1)?;
                Scalar::Float(match vs[0] {
                    Scalar::Bool(x) => x as u8 as f64,
                    Scalar::Int(x) => x as f64,
                    Scalar::Float(x) => x,
                })
            }
            Builtin::ToInt => {
                need(1)?;
                Scalar::Int(match vs[0] {
                    Scalar::Bool(x) => x as i64,
                    Scalar::Int(x) => x,
                    Scalar::Float(x) => self.float_to_int(x.trunc(), p, span)?,
                })
            }
            Builtin::Max | Builtin::Min => {
                need(1)?;
                let is_max = b == Builtin::Max;
                if vs.iter().all(|v| matches!(v, Scalar::Int(_))) && ty == ElemType::Int {
                    let mut acc = self.as_int(vs[0], p, span)?;
                    for v in &vs[1..] {
                        let x = self.as_int(*v, p, span)?;
                        acc = if is_max { acc.max(x) } else { acc.min(x) };
                    }
                    Scalar::Int(acc)
                } else {
                    let mut acc = f0(self)?;
                    for v in &vs[1..] {
                        let x = self.as_float(*v, p, span)?;
                        acc = if is_max {
                            math::fmax(acc, x)
                        } else {
                            math::fmin(acc, x)
                        };
                    }
                    Scalar::Float(acc)
                }
            }
        };
        self.coerce(v, ty, p, span)
    }

    /// A float to `i64` exactly as the JIT converts: truncation toward
    /// zero, saturation beyond the `i64` range, NaN to 0
    /// (`runtime::math::float_to_int`).
    fn float_to_int(&self, x: f64, _p: &[i64], _span: Span) -> R<i64> {
        Ok(math::float_to_int(x))
    }
}
