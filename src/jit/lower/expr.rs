//! Lowering of scalar expressions: constants, loads, unary and binary
//! operators (checked int arithmetic, lazy `&&` / `||`, the int division
//! family), selects, casts, math functions and calls of external
//! functions; and which expressions may be evaluated speculatively.

use super::avail::param_affine;
use super::{cl_type, mem, Lower};
use crate::codegen::loop_ast::{ArrayId, BinOp, Cast, Expr, MathFn, UnOp};
use crate::jit::abi::{rt, status};
use crate::jit::analysis::{gives_no_facts, small_step};
use crate::jit::{host_fns, JitError};
use crate::vocab::ElemType;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, BlockArg, Endianness, InstBuilder, InstructionData, MemFlags, Opcode, StackSlotData,
    StackSlotKind, Value, ValueDef,
};
use cranelift_frontend::FunctionBuilder;

impl Lower<'_, '_> {
    pub(super) fn expr(&mut self, e: &Expr) -> Result<Value, JitError> {
        if let Some(&(_, v)) = self.invariant.iter().find(|(p, _)| std::ptr::eq(*p, e)) {
            return Ok(v);
        }
        // Loads and selections computed earlier in this iteration
        // (`avail`; not in the vector form, whose loads are vectors).
        let reuse = matches!(e, Expr::Load { .. } | Expr::Selection(_)) && self.vec_var.is_none();
        if reuse {
            if let Some(v) = self.avail.find(e) {
                return Ok(v);
            }
        }
        let v = self.compute(e)?;
        if reuse {
            self.avail.insert(e, v);
        }
        Ok(v)
    }

    /// The value of `e`, computed here (see [`Lower::expr`]).
    fn compute(&mut self, e: &Expr) -> Result<Value, JitError> {
        // `a mod m` by a positive constant cannot fail: no guard.
        if let Some((a, m)) = e.mod_positive_const() {
            let av = self.expr(a)?;
            return Ok(self.mod_const(av, m));
        }
        Ok(match e {
            Expr::Int(v) => self.iconst(*v),
            Expr::Float(v) => self.b.ins().f64const(*v),
            Expr::Bool(v) => self.b.ins().iconst(types::I8, i64::from(*v)),
            Expr::Aff(a) => self.affine(a),
            Expr::Local(l) => self.b.use_var(self.locals[*l]),
            Expr::Load { array, index } => {
                let addr = self.address(*array, index)?;
                let elem = self.info(*array)?.elem;
                self.b.ins().load(elem, mem(*array), addr, 0)
            }
            Expr::Selection(s) => {
                let v = self.expr(&s.value)?;
                let range = param_affine(&s.lower).zip(param_affine(&s.upper));
                // A value an earlier check proved inside the range here.
                if let Some((lo, hi)) = &range {
                    if self.avail.within(v, lo, hi) {
                        return Ok(v);
                    }
                }
                let lo = self.expr(&s.lower)?;
                let hi = self.expr(&s.upper)?;
                let ok = if s.nonempty {
                    self.in_nonempty_range(v, lo, hi)
                } else {
                    let c1 = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, v, lo);
                    let c2 = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, v, hi);
                    self.b.ins().band(c1, c2)
                };
                // `selection_targets` lists every selection's target.
                let target = self
                    .f
                    .selection_targets()
                    .iter()
                    .position(|&t| t == (s.var.as_str(), s.index.as_str()))
                    .unwrap_or(usize::MAX >> 1);
                self.guard(ok, status::SELECTION, Some(target), &[v, lo, hi]);
                if let Some((lo, hi)) = &range {
                    self.avail.ranged(v, lo, hi);
                }
                v
            }
            Expr::Unary(op, a) => {
                let ty = self.expr_type(a);
                let v = self.expr(a)?;
                match (op, ty) {
                    (UnOp::Not, _) => self.b.ins().bxor_imm(v, 1),
                    (UnOp::Neg, ElemType::Float) => self.b.ins().fneg(v),
                    (UnOp::Neg, _) => {
                        let z = self.iconst(0);
                        let (r, of) = self.b.ins().ssub_overflow(z, v);
                        self.no_overflow(of);
                        r
                    }
                }
            }
            Expr::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                let av = self.expr(a)?;
                self.lazy_logic(av, b, *op == BinOp::And)?
            }
            Expr::Binary(op, a, b) => {
                let ty = self.expr_type(a);
                let av = self.expr(a)?;
                let bv = self.expr(b)?;
                match op {
                    // A count plus or minus a small value cannot overflow
                    // (`analysis::counts`).
                    BinOp::Add if self.count_sum(a, b) => self.b.ins().iadd(av, bv),
                    BinOp::Sub if self.count_sum(a, b) => self.b.ins().isub(av, bv),
                    _ => self.arith(*op, ty, av, bv),
                }
            }
            Expr::Select(c, a, b) => {
                if let Some(then) = self.resolution(e) {
                    return self.expr(if then { a } else { b });
                }
                let cv = self.expr(c)?;
                // In the fast variant an affine load cannot fail where the
                // interval analysis proved it, and under a condition it
                // takes no fact from, it proved it for either branch.
                let free = !self.check_all && gives_no_facts(c);
                let spec = |x: &Expr| speculable(x) || (free && affine_load(x));
                if spec(a) && spec(b) {
                    let av = self.expr(a)?;
                    let bv = self.expr(b)?;
                    self.b.ins().select(cv, av, bv)
                } else {
                    let ty = cl_type(self.expr_type(a));
                    let tb = self.b.create_block();
                    let eb = self.b.create_block();
                    let join = self.b.create_block();
                    let res = self.b.append_block_param(join, ty);
                    self.b.ins().brif(cv, tb, &[], eb, &[]);
                    self.b.seal_block(tb);
                    self.b.seal_block(eb);
                    self.b.switch_to_block(tb);
                    // Each branch is a scope of the available loads.
                    let mark = self.avail.mark();
                    let av = self.expr(a)?;
                    self.avail.truncate(mark);
                    self.b.ins().jump(join, &[BlockArg::from(av)]);
                    self.b.switch_to_block(eb);
                    let bv = self.expr(b)?;
                    self.avail.truncate(mark);
                    self.b.ins().jump(join, &[BlockArg::from(bv)]);
                    self.b.seal_block(join);
                    self.b.switch_to_block(join);
                    res
                }
            }
            Expr::Cast(c, a) => {
                let v = self.expr(a)?;
                match c {
                    Cast::IntToFloat => self.b.ins().fcvt_from_sint(types::F64, v),
                    Cast::FloatToInt => self.b.ins().fcvt_to_sint_sat(types::I64, v),
                    Cast::BoolToInt => self.b.ins().uextend(types::I64, v),
                    Cast::BoolToFloat => {
                        let i = self.b.ins().uextend(types::I64, v);
                        self.b.ins().fcvt_from_sint(types::F64, i)
                    }
                }
            }
            Expr::Math(fun, args) => match folded_math(*fun, args) {
                Some(x) => self.b.ins().f64const(x),
                None => {
                    let ty = self.expr_type(&args[0]);
                    let mut vs = Vec::new();
                    for a in args {
                        vs.push(self.expr(a)?);
                    }
                    match (fun, ty) {
                        (MathFn::Abs, ElemType::Int) => {
                            let ok = self.b.ins().icmp_imm(IntCC::NotEqual, vs[0], i64::MIN);
                            self.guard(ok, status::OVERFLOW, None, &[]);
                            self.b.ins().iabs(vs[0])
                        }
                        (MathFn::Abs, _) => self.b.ins().fabs(vs[0]),
                        (MathFn::Sqrt, _) => self.b.ins().sqrt(vs[0]),
                        (MathFn::Floor, _) => self.b.ins().floor(vs[0]),
                        (MathFn::Ceil, _) => self.b.ins().ceil(vs[0]),
                        (MathFn::Exp, _) => self.call(rt::EXP, &vs),
                        (MathFn::Log, _) => self.call(rt::LOG, &vs),
                        (MathFn::Pow, _) => self.call(rt::POW, &vs),
                        (MathFn::Lgamma, _) => self.call(rt::LGAMMA, &vs),
                    }
                }
            },
            // A draw's loops evaluate its weight in blocks that do not
            // dominate one another: no available loads inside.
            Expr::Categorical(c) => {
                let v = self.without_avail(|l| l.categorical(c))?;
                // A uniform draw gives a point of its range (it fails on
                // an empty one).
                if c.is_uniform() {
                    if let (Some(lo), Some(hi)) = (c.lower.as_affine(), c.upper.as_affine()) {
                        self.avail.ranged(v, lo, hi);
                    }
                }
                v
            }
            Expr::External { index, args } => self.external(*index, args)?,
            Expr::Random(r) => self.without_avail(|l| l.random(r))?,
        })
    }

    /// One of `a`, `b` is a load of a count array and the other a small
    /// value (`analysis::counts`), in the fast variant.
    pub(super) fn count_sum(&self, a: &Expr, b: &Expr) -> bool {
        let count = |e: &Expr| matches!(e, Expr::Load { array, .. } if self.is_count(*array));
        (count(a) && small_step(b).is_some()) || (count(b) && small_step(a).is_some())
    }

    /// Whether `array` is a count array whose sums the fast variant does
    /// not test (`analysis::counts`).
    pub(super) fn is_count(&self, array: ArrayId) -> bool {
        self.counts.get(array).copied().unwrap_or(false)
    }

    /// `lower(self)` with the available loads paused (`avail`).
    fn without_avail(
        &mut self,
        lower: impl FnOnce(&mut Self) -> Result<Value, JitError>,
    ) -> Result<Value, JitError> {
        self.avail.pause(true);
        let v = lower(self);
        self.avail.pause(false);
        v
    }

    /// Whether evaluating the node `e` itself (not its operands) may fail
    /// or have an effect: checked int arithmetic (`+ − ×`, the division
    /// family, negation, `abs`), a draw, an external call, a selection's
    /// range check. Loads and the lazy forms (`?:`, `&&`, `||`) are for the
    /// caller to judge.
    pub(super) fn op_may_fail(&self, e: &Expr) -> bool {
        match e {
            Expr::Unary(UnOp::Neg, a) => self.expr_type(a) != ElemType::Float,
            Expr::Binary(op, a, _) => {
                !(op.is_comparison()
                    || matches!(op, BinOp::Min | BinOp::Max | BinOp::And | BinOp::Or)
                    || self.expr_type(a) == ElemType::Float
                    || e.mod_positive_const().is_some())
            }
            Expr::Math(f, args) => {
                *f == MathFn::Abs && args.first().map(|a| self.expr_type(a)) == Some(ElemType::Int)
            }
            Expr::Random(_) | Expr::Categorical(_) | Expr::External { .. } | Expr::Selection(_) => {
                true
            }
            _ => false,
        }
    }

    /// `e` may be evaluated where the program would not, as the lazy
    /// operand of `&&` or `||`: [`speculable`], or in the fast variant
    /// comparisons, `!` and casts of at most [`SPECULATED_LOADS`] loads
    /// of rows checked before their loop (`rows`, `covered`): such a load
    /// cannot fail (its data-dependent indices were checked and do not
    /// change, the others are affine, proven in bounds at this point by
    /// the interval analysis, which takes no fact from `&&` or `||`) and
    /// has no effect. DMM-LW's `X[d][a] != 0 || !(n[z][a] >= 0)` then
    /// loads `n[z][a]` where the statements after it reuse the value
    /// (`avail`). Not affine loads in general: DMM-GS's same test over an
    /// affine `n_red[k][a]`, whose value nothing reuses, cost 2% more
    /// instructions per sweep that way (the branch on `X[d][a] != 0`
    /// stays, and it is the unpredictable one).
    fn speculable_operand(&self, e: &Expr) -> bool {
        fn loads(l: &Lower<'_, '_>, e: &Expr, count: &mut usize) -> bool {
            match e {
                Expr::Load { index, .. } => {
                    *count += 1;
                    l.has_row(index)
                }
                Expr::Unary(UnOp::Not, a) | Expr::Cast(_, a) => loads(l, a, count),
                Expr::Binary(op, a, b) if cond_codes(*op).is_some() => {
                    loads(l, a, count) && loads(l, b, count)
                }
                _ => speculable(e),
            }
        }
        if speculable(e) {
            return true;
        }
        let mut count = 0;
        !self.check_all && loads(self, e, &mut count) && count <= SPECULATED_LOADS
    }

    /// `a && rhs` / `a || rhs` with `rhs` evaluated only when needed.
    pub(super) fn lazy_logic(
        &mut self,
        a: Value,
        rhs: &Expr,
        is_and: bool,
    ) -> Result<Value, JitError> {
        if self.speculable_operand(rhs) {
            let r = self.expr(rhs)?;
            return Ok(if is_and {
                self.b.ins().band(a, r)
            } else {
                self.b.ins().bor(a, r)
            });
        }
        let eval = self.b.create_block();
        let join = self.b.create_block();
        let res = self.b.append_block_param(join, types::I8);
        let a_arg = [BlockArg::from(a)];
        if is_and {
            self.b.ins().brif(a, eval, &[], join, &a_arg);
        } else {
            self.b.ins().brif(a, join, &a_arg, eval, &[]);
        }
        self.b.seal_block(eval);
        self.b.switch_to_block(eval);
        let mark = self.avail.mark();
        let r = self.expr(rhs)?;
        self.avail.truncate(mark);
        self.b.ins().jump(join, &[BlockArg::from(r)]);
        self.b.seal_block(join);
        self.b.switch_to_block(join);
        Ok(res)
    }

    /// Binary arithmetic and comparisons on two evaluated operands of type
    /// `ty` (not `And`/`Or`, which are lazy).
    pub(super) fn arith(&mut self, op: BinOp, ty: ElemType, a: Value, b: Value) -> Value {
        use BinOp::*;
        match (ty, cond_codes(op)) {
            (ElemType::Float, Some((fcc, _))) => return self.b.ins().fcmp(fcc, a, b),
            (ElemType::Int, Some((_, icc))) => return self.b.ins().icmp(icc, a, b),
            _ => {}
        }
        match ty {
            ElemType::Float => match op {
                Add => self.b.ins().fadd(a, b),
                Sub => self.b.ins().fsub(a, b),
                Mul => self.b.ins().fmul(a, b),
                Div => self.b.ins().fdiv(a, b),
                Rem => self.call(rt::FMOD, &[a, b]),
                Min | Max => float_extremum(&mut self.b, op, a, b, &self.plain_floats),
                // Comparisons are lowered above.
                Eq | Ne | Lt | Le | Gt | Ge => a,
                // Rejected by `Function::check` for floats.
                FloorDiv | CeilDiv | Mod | And | Or => a,
            },
            ElemType::Int => match op {
                Add | Sub | Mul => {
                    let (v, of) = match op {
                        Add => self.b.ins().sadd_overflow(a, b),
                        Sub => self.b.ins().ssub_overflow(a, b),
                        _ => self.b.ins().smul_overflow(a, b),
                    };
                    self.no_overflow(of);
                    v
                }
                Div | Rem | FloorDiv | CeilDiv | Mod => self.int_div(op, a, b),
                Min => self.b.ins().smin(a, b),
                Max => self.b.ins().smax(a, b),
                // Comparisons are lowered above.
                Eq | Ne | Lt | Le | Gt | Ge => a,
                And | Or => a,
            },
            ElemType::Bool => match op {
                Eq => self.b.ins().icmp(IntCC::Equal, a, b),
                Ne => self.b.ins().icmp(IntCC::NotEqual, a, b),
                And => self.b.ins().band(a, b),
                Or => self.b.ins().bor(a, b),
                _ => a,
            },
        }
    }

    fn no_overflow(&mut self, of: Value) {
        let ok = self.b.ins().icmp_imm(IntCC::Equal, of, 0);
        self.guard(ok, status::OVERFLOW, None, &[]);
    }

    /// `a mod m = a − m·⌊a / m⌋ ∈ 0 .. m` for a constant `m > 0`: `a & (m −
    /// 1)` when `m` is a power of two (two's complement), else the
    /// truncated remainder plus `m` when it is negative.
    fn mod_const(&mut self, a: Value, m: i64) -> Value {
        if m.count_ones() == 1 {
            return self.b.ins().band_imm(a, m - 1);
        }
        let r = self.b.ins().srem_imm(a, m);
        let neg = self.b.ins().icmp_imm(IntCC::SignedLessThan, r, 0);
        let plus = self.b.ins().iadd_imm(r, m);
        self.b.ins().select(neg, plus, r)
    }

    /// Int division family with the zero and `MIN / -1` checks.
    fn int_div(&mut self, op: BinOp, a: Value, b: Value) -> Value {
        let nz = self.b.ins().icmp_imm(IntCC::NotEqual, b, 0);
        self.guard(nz, status::DIV_ZERO, None, &[]);
        let a_min = self.b.ins().icmp_imm(IntCC::Equal, a, i64::MIN);
        let b_m1 = self.b.ins().icmp_imm(IntCC::Equal, b, -1);
        let bad = self.b.ins().band(a_min, b_m1);
        let ok = self.b.ins().icmp_imm(IntCC::Equal, bad, 0);
        self.guard(ok, status::OVERFLOW, None, &[]);
        let q = self.b.ins().sdiv(a, b);
        let r = self.b.ins().srem(a, b);
        // r != 0 and sign(r) != sign(b)
        let rnz = self.b.ins().icmp_imm(IntCC::NotEqual, r, 0);
        let x = self.b.ins().bxor(r, b);
        let diff = self.b.ins().icmp_imm(IntCC::SignedLessThan, x, 0);
        let same = self.b.ins().icmp_imm(IntCC::SignedGreaterThanOrEqual, x, 0);
        match op {
            BinOp::Div => q,
            BinOp::Rem => r,
            BinOp::FloorDiv => {
                let adj = self.b.ins().band(rnz, diff);
                let adj = self.b.ins().uextend(types::I64, adj);
                self.b.ins().isub(q, adj)
            }
            BinOp::CeilDiv => {
                let adj = self.b.ins().band(rnz, same);
                let adj = self.b.ins().uextend(types::I64, adj);
                self.b.ins().iadd(q, adj)
            }
            _ => {
                let adj = self.b.ins().band(rnz, diff);
                let plus = self.b.ins().iadd(r, b);
                self.b.ins().select(adj, plus, r)
            }
        }
    }

    /// The type of an expression of the checked function (no validation:
    /// `Function::check` passed; only the spine of the expression is
    /// visited).
    pub(super) fn expr_type(&self, e: &Expr) -> ElemType {
        match e {
            Expr::Int(_) | Expr::Aff(_) => ElemType::Int,
            Expr::Float(_) => ElemType::Float,
            Expr::Bool(_) => ElemType::Bool,
            Expr::Local(l) => self.f.locals[*l].ty,
            Expr::Load { array, .. } => self.f.arrays[*array].ty,
            Expr::Unary(_, a) | Expr::Select(_, a, _) => self.expr_type(a),
            Expr::Binary(op, a, _) => {
                if cond_codes(*op).is_some() || matches!(op, BinOp::And | BinOp::Or) {
                    ElemType::Bool
                } else {
                    self.expr_type(a)
                }
            }
            Expr::Cast(c, _) => match c {
                Cast::IntToFloat | Cast::BoolToFloat => ElemType::Float,
                Cast::FloatToInt | Cast::BoolToInt => ElemType::Int,
            },
            Expr::Math(_, args) => args.first().map_or(ElemType::Float, |a| self.expr_type(a)),
            Expr::Random(r) => r.dist.result(),
            Expr::Categorical(_) | Expr::Selection(_) => ElemType::Int,
            Expr::External { .. } => ElemType::Float,
        }
    }

    /// A call of external `index` through `host_fns::rt_external`: the
    /// arguments go through a stack slot, the result comes back through
    /// another; a missing implementation or a panic is a run error.
    fn external(&mut self, index: usize, args: &[Expr]) -> Result<Value, JitError> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.expr(a)?);
        }
        let too_big = || JitError::Codegen("too many arguments to an external".into());
        let bytes = u32::try_from(8 * vals.len().max(1)).map_err(|_| too_big())?;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            bytes,
            3,
        ));
        for (i, &v) in vals.iter().enumerate() {
            let off = i32::try_from(8 * i).map_err(|_| too_big())?;
            self.b.ins().stack_store(v, slot, off);
        }
        let out =
            self.b
                .create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8, 3));
        let args_ptr = self.b.ins().stack_addr(self.ptr_ty, slot, 0);
        let out_ptr = self.b.ins().stack_addr(self.ptr_ty, out, 0);
        let idx = self.iconst(index as i64);
        let n = self.iconst(vals.len() as i64);
        let st = self.call(rt::EXTERNAL, &[self.ext_ptr, idx, args_ptr, n, out_ptr]);
        let not_missing = self
            .b
            .ins()
            .icmp_imm(IntCC::NotEqual, st, host_fns::EXTERNAL_MISSING);
        self.guard(not_missing, status::EXTERNAL_MISSING, Some(index), &[]);
        let not_panicked = self.b.ins().icmp_imm(IntCC::Equal, st, 0);
        self.guard(not_panicked, status::EXTERNAL_PANICKED, Some(index), &[]);
        Ok(self.b.ins().stack_load(types::F64, out, 0))
    }
}

/// Most loads the lazy operand of `&&` or `||` may make when evaluated
/// eagerly ([`Lower::speculable_operand`]).
const SPECULATED_LOADS: usize = 2;

/// The condition codes (float, signed int) of a comparison operator.
fn cond_codes(op: BinOp) -> Option<(FloatCC, IntCC)> {
    Some(match op {
        BinOp::Eq => (FloatCC::Equal, IntCC::Equal),
        BinOp::Ne => (FloatCC::NotEqual, IntCC::NotEqual),
        BinOp::Lt => (FloatCC::LessThan, IntCC::SignedLessThan),
        BinOp::Le => (FloatCC::LessThanOrEqual, IntCC::SignedLessThanOrEqual),
        BinOp::Gt => (FloatCC::GreaterThan, IntCC::SignedGreaterThan),
        BinOp::Ge => (FloatCC::GreaterThanOrEqual, IntCC::SignedGreaterThanOrEqual),
        _ => return None,
    })
}

/// A load whose indices are all affine or modular (checked or proven,
/// never data-dependent).
fn affine_load(e: &Expr) -> bool {
    matches!(e, Expr::Load { index, .. } if index.iter().all(Expr::is_data_free_index))
}

/// True when evaluating `e` can neither fail nor touch memory, so it may
/// be evaluated eagerly even where the program would not evaluate it
/// (lazy `Select`, `And`, `Or`).
pub(super) fn speculable(e: &Expr) -> bool {
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => true,
        Expr::Load { .. }
        | Expr::Random(_)
        | Expr::Categorical(_)
        | Expr::External { .. }
        | Expr::Selection(_) => false,
        Expr::Unary(UnOp::Not, a) => speculable(a),
        // Int negation may overflow; float negation cannot, but the type is
        // not known here: be conservative.
        Expr::Unary(UnOp::Neg, _) => false,
        Expr::Binary(op, a, b) => {
            let safe_op = cond_codes(*op).is_some()
                || matches!(op, BinOp::Min | BinOp::Max | BinOp::And | BinOp::Or)
                || e.mod_positive_const().is_some();
            safe_op && speculable(a) && speculable(b)
        }
        Expr::Select(c, a, b) => speculable(c) && speculable(a) && speculable(b),
        Expr::Cast(_, a) => speculable(a),
        Expr::Math(f, args) => *f != MathFn::Abs && args.iter().all(speculable),
    }
}

/// The value of the math call `f(args)` when every argument is a float
/// constant (`lgamma(0.01)` in a log-joint's sum over the non-zero
/// counts), computed now by the very routine the compiled code would call
/// (`host_fns`), so bit for bit the value it would compute at run time;
/// `None` otherwise. Cranelift folds no calls, and a call under an `if`
/// is not hoisted out of its loop (`invariant`).
fn folded_math(f: MathFn, args: &[Expr]) -> Option<f64> {
    let c = |k: usize| match args.get(k) {
        Some(Expr::Float(x)) => Some(*x),
        _ => None,
    };
    Some(match f {
        MathFn::Exp => host_fns::rt_exp(c(0)?),
        MathFn::Log => host_fns::rt_log(c(0)?),
        MathFn::Pow => host_fns::rt_pow(c(0)?, c(1)?),
        MathFn::Lgamma => host_fns::rt_lgamma(c(0)?),
        MathFn::Abs | MathFn::Sqrt | MathFn::Floor | MathFn::Ceil => return None,
    })
}

/// `min(x, y)` or `max(x, y)`, the IEEE 754-2019 `minimum` and `maximum`,
/// of two floats or two `f64x2` vectors. In general, for floats Cranelift's
/// `fmin` and `fmax` (a compare and branches), for vectors
/// [`vector_extremum`] (branch-free). When one operand is a constant `c` that is neither a NaN nor
/// a zero, the x86 form `c < y ? c : y` (`minsd`; `maxsd` for `y < c ? c :
/// y`): it is the IEEE result for every `y`. A NaN `y` fails the
/// comparison and is the result, as it must be; `y = c` gives `y`, which
/// has `c`'s bits (equal floats other than the zeros are identical); and
/// otherwise the comparison picks the smaller (larger). The operands
/// commute (the IEEE `minimum` and `maximum` are symmetric on values).
///
/// `plain` lists values known to be neither a NaN nor a zero (a loop's
/// invariant operand, tested before the loop: `Lower::versioned_loop`);
/// they, and their splats, count as such constants.
pub(super) fn float_extremum(
    b: &mut FunctionBuilder,
    op: BinOp,
    x: Value,
    y: Value,
    plain: &[Value],
) -> Value {
    let known = |b: &FunctionBuilder, v: Value| {
        float_constant(b, v).is_some_and(|c| !c.is_nan() && c != 0.0)
            || plain.contains(&v)
            || splat_of(b, v).is_some_and(|a| plain.contains(&a))
    };
    let (c, y) = if known(b, x) {
        (x, y)
    } else if known(b, y) {
        (y, x)
    } else if b.func.dfg.value_type(x).is_vector() {
        return vector_extremum(b, op, x, y);
    } else {
        return match op {
            BinOp::Min => b.ins().fmin(x, y),
            _ => b.ins().fmax(x, y),
        };
    };
    x86_extremum(b, op, c, y)
}

/// IEEE 754-2019 `minimum` (`maximum`) of two `f64x2` vectors, lane by
/// lane, in three (five) x86 instructions where Cranelift's `fmin`
/// (`fmax`) takes seven (eight): the same value, a NaN's sign and payload
/// bits aside (they carry no meaning in the language; Cranelift's extra
/// instructions only make a NaN result the canonical one).
///
/// With `p = x86min(x, y)` (`x < y ? x : y`, [`x86_extremum`]) and `q =
/// x86min(y, x)`: when neither is a NaN and they are not zeros of
/// opposite signs, `p = q` is the IEEE minimum (equal floats other than
/// the zeros have the same bits), and so is `p | q`. Zeros of opposite
/// signs: `p | q` has the sign bit, `−0`, the IEEE minimum. A NaN
/// operand fails the comparison in both, so `{p, q} = {x, y}` and `p |
/// q` has the NaN's all-ones exponent and non-zero fraction (or-ed with
/// anything): a NaN. Maximum, with `p = x86max(x, y)`, `q =
/// x86max(y, x)` and `d = p ^ q`: `(p | d) − d`. Equal `p`, `q`: `d = +0`
/// and `p − (+0) = p` (also for `p = −0`). Zeros of opposite signs: `d =
/// −0` (the sign bit), `p | d = −0`, and `−0 − (−0) = +0`, the IEEE
/// maximum. A NaN operand: `{p, q} = {x, y}`, `p | d = p | q` is a NaN
/// (as above), and so is the difference.
fn vector_extremum(b: &mut FunctionBuilder, op: BinOp, x: Value, y: Value) -> Value {
    let p = x86_extremum(b, op, x, y);
    let q = x86_extremum(b, op, y, x);
    match op {
        BinOp::Min => b.ins().bor(p, q),
        _ => {
            let d = b.ins().bxor(p, q);
            let o = b.ins().bor(p, d);
            b.ins().fsub(o, d)
        }
    }
}

/// The x86 `min`/`max` of two floats or `f64x2` vectors: `c < y ? c : y`
/// (`minsd`, `minpd`), or `y < c ? c : y` (`maxsd`, `maxpd`): `y` when
/// the comparison fails (a NaN operand, equal operands).
fn x86_extremum(b: &mut FunctionBuilder, op: BinOp, c: Value, y: Value) -> Value {
    // Cranelift's x86 backend matches these exact forms (`select` of
    // `fcmp lt` on the same operands; for vectors, `bitselect` of its
    // mask) as one `min`/`max` instruction.
    let cmp = match op {
        BinOp::Min => b.ins().fcmp(FloatCC::LessThan, c, y),
        _ => b.ins().fcmp(FloatCC::LessThan, y, c),
    };
    let ty = b.func.dfg.value_type(c);
    if ty.is_vector() {
        let flags = MemFlags::new().with_endianness(Endianness::Little);
        let mask = b.ins().bitcast(ty, flags, cmp);
        b.ins().bitselect(mask, c, y)
    } else {
        b.ins().select(cmp, c, y)
    }
}

/// The scalar `v` is a `splat` of, if it is one.
fn splat_of(b: &FunctionBuilder, v: Value) -> Option<Value> {
    let dfg = &b.func.dfg;
    let ValueDef::Result(inst, 0) = dfg.value_def(v) else {
        return None;
    };
    match dfg.insts[inst] {
        InstructionData::Unary {
            opcode: Opcode::Splat,
            arg,
        } => Some(arg),
        _ => None,
    }
}

/// The value of `v` when it is a float constant (`f64const`, or its
/// `splat` into a vector).
fn float_constant(b: &FunctionBuilder, v: Value) -> Option<f64> {
    if let Some(a) = splat_of(b, v) {
        return float_constant(b, a);
    }
    let dfg = &b.func.dfg;
    let ValueDef::Result(inst, 0) = dfg.value_def(v) else {
        return None;
    };
    match dfg.insts[inst] {
        InstructionData::UnaryIeee64 {
            opcode: Opcode::F64const,
            imm,
        } => Some(f64::from_bits(imm.bits())),
        _ => None,
    }
}
