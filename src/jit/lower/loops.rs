//! Lowering of statements, and the shape of loops: rotation, unrolling of
//! small innermost loops, and the choice of the vector form (`vector`).

use super::avail::Mark;
use super::rows::Scope;
use super::vector::{vectorizable, Known, LANES};
use super::{mem, Lower};
use crate::codegen::loop_ast::parallel::static_work;
use crate::codegen::loop_ast::{
    acc_bin_op, for_each_stmt_expr, Accumulation, BinOp, Binding, Expr, ForLoop, LoopVar, ReduceOp,
    Stmt,
};
use crate::codegen::loop_ast::{bound_vars, Affine, Writes};
use crate::jit::abi::{rt, status};
use crate::jit::analysis::small_step;
use crate::jit::parallel::MIN_PARALLEL_WORK;
use crate::jit::JitError;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlags, StackSlotData, StackSlotKind, Value};

/// Unroll factor of innermost loops (a multiple of `LANES`).
pub(super) const UNROLL: i64 = 4;
/// Innermost loops whose body has more nodes than this are not unrolled.
pub(super) const UNROLL_MAX_SIZE: usize = 48;

/// True when no `For` occurs in `body`.
/// Nesting bound of [`Lower::loop_per_value`]: a loop body gets at most
/// `2^MAX_COPIES_LOG2` copies.
const MAX_COPIES_LOG2: usize = 2;

fn is_innermost(body: &[Stmt]) -> bool {
    body.iter().all(|s| match s {
        Stmt::For(_) => false,
        Stmt::If { then, els, .. } => is_innermost(then) && is_innermost(els),
        Stmt::Block(b) => is_innermost(b),
        Stmt::Bind(b) => is_innermost(&b.body),
        _ => true,
    })
}

/// True when a loop over `body` that may run more than once gets unrolled
/// copies: an innermost loop of at most [`UNROLL_MAX_SIZE`] nodes.
pub(super) fn unrolled(body: &[Stmt]) -> bool {
    is_innermost(body) && size(body) <= UNROLL_MAX_SIZE
}

/// Number of statement and expression nodes.
fn size(body: &[Stmt]) -> usize {
    fn e(x: &Expr) -> usize {
        1 + match x {
            Expr::Load { index, .. } => index.iter().map(e).sum(),
            Expr::Unary(_, a) | Expr::Cast(_, a) => e(a),
            Expr::Binary(_, a, b) => e(a) + e(b),
            Expr::Select(c, a, b) => e(c) + e(a) + e(b),
            Expr::Math(_, args) => args.iter().map(e).sum(),
            Expr::Random(r) => r.args.iter().chain(&r.point).map(e).sum::<usize>() + e(&r.seed),
            Expr::External { args, .. } => args.iter().map(e).sum(),
            Expr::Selection(s) => e(&s.value) + e(&s.lower) + e(&s.upper),
            // Contains two loops: never worth unrolling around.
            Expr::Categorical(_) => UNROLL_MAX_SIZE + 1,
            _ => 0,
        }
    }
    body.iter()
        .map(|s| {
            1 + match s {
                Stmt::For(ForLoop { body, .. }) | Stmt::Block(body) => size(body),
                Stmt::If { cond, then, els } => e(cond) + size(then) + size(els),
                Stmt::Assign { index, value, .. }
                | Stmt::Accumulate(Accumulation { index, value, .. }) => {
                    index.iter().map(e).sum::<usize>() + e(value)
                }
                Stmt::SetLocal { value, .. } => e(value),
                Stmt::Bind(b) => e(&b.guard) + e(&b.value) + size(&b.body),
            }
        })
        .sum()
}

impl Lower<'_, '_> {
    pub(super) fn stmts(&mut self, body: &[Stmt]) -> Result<(), JitError> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), JitError> {
        match s {
            Stmt::For(l) => {
                let lo = self.bound(&l.lower, true);
                let hi = self.bound(&l.upper, false);
                let id = self.parallel_ids.get(&(l as *const ForLoop)).copied();
                // The loop is a scope of the available loads, and none
                // of an array it writes survives its first iteration.
                self.kill_written(&l.body);
                let mark = self.avail.mark();
                match id {
                    Some(id) => self.parallel_call(l, id, lo, hi)?,
                    None => {
                        self.enclosing.push(l.var);
                        let r = self.for_loop(l, lo, hi);
                        self.enclosing.pop();
                        r?;
                    }
                }
                self.avail.truncate(mark);
            }
            Stmt::If { cond, then, els } => {
                let c = self.expr(cond)?;
                let tb = self.b.create_block();
                let eb = self.b.create_block();
                let join = self.b.create_block();
                self.b.ins().brif(c, tb, &[], eb, &[]);
                self.b.seal_block(tb);
                self.b.seal_block(eb);
                self.b.switch_to_block(tb);
                let mark = self.avail.mark();
                self.stmts(then)?;
                self.avail.truncate(mark);
                self.b.ins().jump(join, &[]);
                self.b.switch_to_block(eb);
                self.stmts(els)?;
                self.avail.truncate(mark);
                self.b.ins().jump(join, &[]);
                self.b.seal_block(join);
                self.b.switch_to_block(join);
            }
            Stmt::Assign {
                array,
                index,
                value,
            } => {
                let v = self.expr(value)?;
                let addr = self.address(*array, index)?;
                self.b.ins().store(mem(*array), v, addr, 0);
                self.avail.kill(*array);
                self.avail.stored(*array, index, v);
            }
            Stmt::Accumulate(acc) => {
                let array = acc.array;
                let addr = self.address(array, &acc.index)?;
                let elem = self.info(array)?.elem;
                let ty = self.f.arrays[array].ty;
                let old = self.b.ins().load(elem, mem(array), addr, 0);
                let v = match acc.op {
                    // Lazy like the binary operators: the value is only
                    // needed when the accumulator does not decide.
                    ReduceOp::And | ReduceOp::Or => {
                        let is_and = acc.op == ReduceOp::And;
                        self.lazy_logic(old, &acc.value, is_and)?
                    }
                    // A count plus a small value cannot overflow
                    // (`analysis::counts`).
                    ReduceOp::Add if self.is_count(array) && small_step(&acc.value).is_some() => {
                        let v = self.expr(&acc.value)?;
                        self.b.ins().iadd(old, v)
                    }
                    op => {
                        let v = self.expr(&acc.value)?;
                        self.arith(acc_bin_op(op), ty, old, v)
                    }
                };
                self.b.ins().store(mem(array), v, addr, 0);
                self.avail.kill(array);
                self.avail.stored(array, &acc.index, v);
            }
            Stmt::SetLocal { local, value } => {
                let v = self.expr(value)?;
                self.b.def_var(self.locals[*local], v);
            }
            Stmt::Block(b) => self.stmts(b)?,
            Stmt::Bind(b) => self.binding(b)?,
        }
        Ok(())
    }

    /// The loop `l` over `[lo, hi]`.
    pub(super) fn for_loop(&mut self, l: &ForLoop, lo: Value, hi: Value) -> Result<(), JitError> {
        let (var, body) = (l.var, &l.body);
        // A loop that runs at most once gets neither unrolled copies nor a
        // vector form (their main loops would never run), nor a back edge.
        let once = l.runs_at_most_once();
        let mut vector = false;
        // The rows of the body's data-selected loads, checked before the
        // first iteration (`rows`), in the fast variant.
        // And the body's invariant loads (`invariant`), computed there
        // too: then the loop runs in the block that computes them.
        let mark = self.rows.len();
        let inv_mark = self.invariant.len();
        let mut cont = None;
        if !self.check_all {
            let scope = self.loop_scope(l);
            let mut rows = Vec::new();
            let whole = self.body_row_loads(body, &scope, &mut rows);
            if let Some(&sel @ Expr::Select(c, _, _)) = rows.last() {
                rows.pop();
                if self.resolved.len() < MAX_COPIES_LOG2 {
                    return self.loop_per_value(l, lo, hi, (sel, c), &rows);
                }
            } else if !whole {
                // A row read later, whatever fails before it is covered
                // (`covered`).
                rows.extend(self.covered_row(body, &scope, &rows));
            }
            // Rows first: a load of a checked row whose offset does not
            // move is an invariant part too (`invariant`).
            let vars = self.declare_rows(&rows, var);
            self.share_rows(body, &rows, &vars, var);
            let mut parts = Vec::new();
            self.loop_invariants(body, &scope, &mut parts);
            if !rows.is_empty() || !parts.is_empty() {
                let join = self.enter_when_nonempty(lo, hi);
                self.check_rows(&rows, &vars, var, lo)?;
                for e in parts {
                    let v = self.expr(e)?;
                    self.invariant.push((e as *const Expr, v));
                }
                cont = Some(join);
            }
            // The loads of the checks and invariants above read no
            // array the loop writes (else they would not be hoisted);
            // kept sound whatever those analyses become.
            self.kill_written(body);
            // The vector form reads data-selected rows only at their
            // checked offsets.
            let (taken, hoisted) = (
                |e: &Expr| self.resolution(e),
                |e: &Expr| {
                    self.invariant.iter().any(|&(p, v)| {
                        std::ptr::eq(p, e) && self.b.func.dfg.value_type(v) == types::F64
                    })
                },
            );
            let known = Known {
                taken: &taken,
                hoisted: &hoisted,
            };
            vector = !once
                && vectorizable(self.f, var, body, &known)
                && self.rows_cover(body, var, &known);
        }
        let plain = if once {
            Vec::new()
        } else {
            self.plain_candidates(body)
        };
        self.versioned_loop(&plain, |l| l.loop_forms(var, lo, hi, body, vector, once))?;
        self.rows.truncate(mark);
        if let Some(join) = cont {
            // The invariant values are defined in `pre`, which dominates
            // the loop only.
            self.invariant.truncate(inv_mark);
            self.b.ins().jump(join, &[]);
            self.b.seal_block(join);
            self.b.switch_to_block(join);
        }
        Ok(())
    }

    /// The iterations of a loop over `var` from `lo` to `hi`: a main loop
    /// over blocks of `UNROLL` iterations while `i <= hi − (UNROLL − 1)`
    /// (scalar copies in order, or the vector form where iterations
    /// commute: `vector`), then the remainder loop (one iteration when the
    /// loop runs at most `once`).
    fn loop_forms(
        &mut self,
        var: LoopVar,
        lo: Value,
        hi: Value,
        body: &[Stmt],
        vector: bool,
        once: bool,
    ) -> Result<(), JitError> {
        // `var` starts again: no load in it is available.
        self.avail.forget(Mark::default(), var);
        self.b.def_var(self.loop_vars[var.0], lo);
        if vector {
            let hi_main = self.b.ins().iadd_imm(hi, -(UNROLL - 1));
            self.begin_extrema(body, (UNROLL / LANES) as usize);
            self.rotated_loop(var, hi_main, body, UNROLL / LANES, LANES)?;
            self.end_extrema(body);
        } else if !once && unrolled(body) {
            let hi_main = self.b.ins().iadd_imm(hi, -(UNROLL - 1));
            self.rotated_loop(var, hi_main, body, UNROLL, 1)?;
        }
        if once {
            self.once(var, hi, body)?;
        } else {
            self.rotated_loop(var, hi, body, 1, 1)?;
        }
        Ok(())
    }

    /// The float values computed before the loop (`invariant`) that are
    /// an operand of a `min` or `max` in `body` (fast variant only).
    fn plain_candidates(&self, body: &[Stmt]) -> Vec<Value> {
        fn walk(l: &Lower, e: &Expr, out: &mut Vec<Value>) {
            if let Expr::Binary(BinOp::Min | BinOp::Max, a, b) = e {
                for x in [&**a, &**b] {
                    let hit = l.invariant.iter().find(|&&(p, v)| {
                        std::ptr::eq(p, x) && l.b.func.dfg.value_type(v) == types::F64
                    });
                    if let Some(&(_, v)) = hit {
                        if !out.contains(&v) {
                            out.push(v);
                        }
                    }
                }
            }
            e.children().into_iter().for_each(|x| walk(l, x, out));
        }
        let mut out = Vec::new();
        if !self.check_all {
            for_each_stmt_expr(body, &mut |e| walk(self, e, &mut out));
        }
        out
    }

    /// `lower` twice (once when `plain` is empty) under a test of the
    /// floats `plain` computed before the loop: where each is neither a NaN nor a zero (`fcmp one` with
    /// `0.0`), a copy in which a `min` or `max` with one of them is the one
    /// x86 instruction (`expr::float_extremum`: exact for such an operand,
    /// whatever the other), else the general copy. LBP's messages are
    /// `min(h[k], hmin + λ) − hmin` with `hmin + λ` fixed along `k`.
    fn versioned_loop(
        &mut self,
        plain: &[Value],
        lower: impl Fn(&mut Self) -> Result<(), JitError>,
    ) -> Result<(), JitError> {
        if plain.is_empty() {
            return lower(self);
        }
        let zero = self.b.ins().f64const(0.0);
        let mut ok = None;
        for &h in plain {
            let c = self.b.ins().fcmp(FloatCC::OrderedNotEqual, h, zero);
            ok = Some(match ok {
                None => c,
                Some(o) => self.b.ins().band(o, c),
            });
        }
        let Some(ok) = ok else {
            return lower(self);
        };
        let join = self.b.create_block();
        self.copy_per_branch(ok, join, |me, fast| {
            let saved = me.plain_floats.len();
            if fast {
                me.plain_floats.extend_from_slice(plain);
            }
            let r = lower(me);
            me.plain_floats.truncate(saved);
            r
        })?;
        self.b.seal_block(join);
        self.b.switch_to_block(join);
        Ok(())
    }

    /// `if (c) copy(true) else copy(false)`, both then jumping to `join`
    /// (which the caller seals and continues in). Each copy is a scope of
    /// the available loads.
    fn copy_per_branch(
        &mut self,
        c: Value,
        join: cranelift_codegen::ir::Block,
        mut copy: impl FnMut(&mut Self, bool) -> Result<(), JitError>,
    ) -> Result<(), JitError> {
        let then_b = self.b.create_block();
        let else_b = self.b.create_block();
        self.b.ins().brif(c, then_b, &[], else_b, &[]);
        self.b.seal_block(then_b);
        self.b.seal_block(else_b);
        for (blk, taken) in [(then_b, true), (else_b, false)] {
            self.b.switch_to_block(blk);
            let mark = self.avail.mark();
            let r = copy(self, taken);
            self.avail.truncate(mark);
            r?;
            self.b.ins().jump(join, &[]);
        }
        Ok(())
    }

    /// The loop `l` over `[lo, hi]` as one copy per value of the
    /// condition `c` of the `?:` `sel` (`c ? a : b`) of its body, chosen before the
    /// first iteration: `sel` is evaluated at every iteration, `c` does not
    /// change while the loop runs, and before `c` (in the order the body
    /// is evaluated) only the data-selected loads `rows` may fail
    /// ([`Lower::body_row_loads`]). LBP's `msgnew` loop over `k` reads
    /// `valid[nbr][rev] ? msg[nbr][rev][k] : 0.0`: the loads of the taken
    /// branch, and those after the `?:`, become rows checked once too.
    ///
    /// Why it is exact: when the loop runs, its first iteration evaluates
    /// the checks of `rows` in order, then `c`, on the values used here
    /// (they are fixed), before anything else that may fail; each copy
    /// then takes at every iteration the branch the original takes, and
    /// its own checks (`for_loop` on the copy) pass again at the first
    /// iteration before the branch's.
    fn loop_per_value(
        &mut self,
        l: &ForLoop,
        lo: Value,
        hi: Value,
        (sel, c): (&Expr, &Expr),
        rows: &[&Expr],
    ) -> Result<(), JitError> {
        let mark = self.rows.len();
        let vars = self.declare_rows(rows, l.var);
        let join = self.enter_when_nonempty(lo, hi);
        self.check_rows(rows, &vars, l.var, lo)?;
        let cv = self.expr(c)?;
        self.copy_per_branch(cv, join, |me, then| {
            me.resolved.push((sel as *const Expr, then));
            let r = me.for_loop(l, lo, hi);
            me.resolved.pop();
            r
        })?;
        self.rows.truncate(mark);
        self.b.seal_block(join);
        self.b.switch_to_block(join);
        Ok(())
    }

    /// Continues in a new block entered when `lo <= hi` and returns the
    /// block where both ways join (the caller jumps there and seals it).
    fn enter_when_nonempty(&mut self, lo: Value, hi: Value) -> cranelift_codegen::ir::Block {
        let pre = self.b.create_block();
        let join = self.b.create_block();
        let nonempty = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, lo, hi);
        self.b.ins().brif(nonempty, pre, &[], join, &[]);
        self.b.seal_block(pre);
        self.b.switch_to_block(pre);
        join
    }

    /// The [`Scope`] of loop `l`'s variable: the variables bound in `l`,
    /// the arrays and locals its body writes.
    fn loop_scope(&self, l: &ForLoop) -> Scope {
        let mut inner = vec![l.var];
        bound_vars(&l.body, &mut inner);
        let w = Writes::of(&l.body);
        Scope {
            var: l.var,
            inner,
            arrays: w.arrays.into_iter().map(|(a, _)| a).collect(),
            locals: w.locals,
            whole: true,
        }
    }

    /// Parallel loop `l` (id `id`) over `[lo, hi]`: when it has at least
    /// `min_parallel_trip` iterations (read from the run's table, at offset
    /// 0), the call of `jit::parallel::rt_parallel` with the enclosing
    /// variables' values in a stack slot (a non-zero status, for which the
    /// host filled the error slot, is returned at once); otherwise the
    /// loop inline. A loop inside no other loop runs once per call of the
    /// function: it is not copied inline (the host runs its outlined
    /// function on the calling thread when it does not split it), which
    /// keeps the main function small for Cranelift.
    fn parallel_call(
        &mut self,
        l: &ForLoop,
        id: i64,
        lo: Value,
        hi: Value,
    ) -> Result<(), JitError> {
        let call_blk = self.b.create_block();
        let inline_blk = self.b.create_block();
        let join = self.b.create_block();
        if self.enclosing.is_empty() {
            // `rt_parallel` wants a non-empty range.
            let go = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, lo, hi);
            self.b.ins().brif(go, call_blk, &[], inline_blk, &[]);
            self.b.seal_block(call_blk);
            self.b.seal_block(inline_blk);
            self.b.switch_to_block(inline_blk);
            self.b.ins().jump(join, &[]);
            self.b.switch_to_block(call_blk);
            return self.call_parallel(id, lo, hi, join);
        }
        // `hi − lo + 1 >= min`, as `lo <= hi − (min − 1)` without overflow:
        // `min >= 2` and `hi − (min − 1)` is computed only when
        // `hi >= i64::MIN + min − 1` (else the trip is below `min` anyway,
        // since `lo >= i64::MIN`).
        let mut min = self
            .b
            .ins()
            .load(types::I64, MemFlags::trusted(), self.ext_ptr, 0);
        // A loop whose iterations each do the same static work `s` runs
        // inline below `⌈MIN_PARALLEL_WORK / s⌉` iterations too: the host
        // would run it on the calling thread anyway (work `trip · s`
        // below the limit), so the call and its work estimate are skipped.
        // Not when tests force splits (`work_gated` 0).
        if let Some(s) = static_work(&l.body).filter(|&s| s > 0) {
            let t = i64::try_from(MIN_PARALLEL_WORK.div_ceil(s)).unwrap_or(i64::MAX);
            let gated = self
                .b
                .ins()
                .load(types::I64, MemFlags::trusted(), self.ext_ptr, 8);
            let t = self.iconst(t);
            let raised = self.b.ins().smax(min, t);
            min = self.b.ins().select(gated, raised, min);
        }
        let min_m1 = self.b.ins().iadd_imm(min, -1);
        let floor = self.b.ins().iadd_imm(min_m1, i64::MIN);
        let room = self
            .b
            .ins()
            .icmp(IntCC::SignedGreaterThanOrEqual, hi, floor);
        let last_start = self.b.ins().isub(hi, min_m1);
        let fits = self
            .b
            .ins()
            .icmp(IntCC::SignedLessThanOrEqual, lo, last_start);
        let big = self.b.ins().band(room, fits);
        self.b.ins().brif(big, call_blk, &[], inline_blk, &[]);
        self.b.seal_block(call_blk);
        self.b.seal_block(inline_blk);
        self.b.switch_to_block(inline_blk);
        self.enclosing.push(l.var);
        let r = self.for_loop(l, lo, hi);
        self.enclosing.pop();
        r?;
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(call_blk);
        self.call_parallel(id, lo, hi, join)
    }

    /// In the current block: the call of `rt_parallel` for loop `id` over
    /// `[lo, hi]` (non-empty) with the enclosing variables' values, then
    /// `join` (or the return of the host's non-zero status).
    fn call_parallel(
        &mut self,
        id: i64,
        lo: Value,
        hi: Value,
        join: cranelift_codegen::ir::Block,
    ) -> Result<(), JitError> {
        let n = self.enclosing.len();
        let too_deep = || JitError::Codegen("too many enclosing loops".into());
        let bytes = u32::try_from(8 * n.max(1)).map_err(|_| too_deep())?;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            bytes,
            3,
        ));
        for (k, v) in self.enclosing.clone().into_iter().enumerate() {
            let x = self.affine(&Affine::var(v));
            let off = i32::try_from(8 * k).map_err(|_| too_deep())?;
            self.b.ins().stack_store(x, slot, off);
        }
        let vars = self.b.ins().stack_addr(self.ptr_ty, slot, 0);
        let id_v = self.iconst(id);
        let st = self.call(
            rt::PARALLEL,
            &[self.ext_ptr, id_v, lo, hi, vars, self.err_ptr],
        );
        let ok = self.b.ins().icmp_imm(IntCC::Equal, st, status::OK);
        let fail = self.b.create_block();
        self.b.set_cold_block(fail);
        self.b.ins().brif(ok, join, &[], fail, &[]);
        self.b.seal_block(fail);
        self.b.switch_to_block(fail);
        self.b.ins().return_(&[st]);
        self.b.seal_block(join);
        self.b.switch_to_block(join);
        Ok(())
    }

    /// The body of the outlined function of parallel loop `l` (see
    /// `lower::compile`): the enclosing variables and the range are read
    /// from the parameter array after the function's parameters.
    pub(super) fn outlined(
        &mut self,
        l: &ForLoop,
        enclosing: &[LoopVar],
        params: Value,
    ) -> Result<(), JitError> {
        let np = self.f.params.len();
        let load = |this: &mut Self, k: usize| -> Result<Value, JitError> {
            let off = (np + k)
                .checked_mul(8)
                .and_then(|o| i32::try_from(o).ok())
                .ok_or_else(|| JitError::Codegen("too many parameters".into()))?;
            Ok(this
                .b
                .ins()
                .load(types::I64, MemFlags::trusted(), params, off))
        };
        for (k, &v) in enclosing.iter().enumerate() {
            let x = load(self, k)?;
            self.b.def_var(self.loop_vars[v.0], x);
        }
        let lo_p = load(self, enclosing.len())?;
        let hi_p = load(self, enclosing.len() + 1)?;
        let lo = self.bound(&l.lower, true);
        let hi = self.bound(&l.upper, false);
        let lo = self.b.ins().smax(lo, lo_p);
        let hi = self.b.ins().smin(hi, hi_p);
        self.for_loop(l, lo, hi)
    }

    /// `if (lo <= hi && guard) { x = value; if (lo <= x && x <= hi)
    /// { var = x; body } }` (see [`Binding`]; no test of `lo <= hi` when
    /// it is known, none of `guard` when it is `true`): the range check on the
    /// data-dependent value is what makes the body's affine accesses in
    /// `var` safe (the interval analysis gives `var` the range
    /// `[lo, hi]` there).
    ///
    /// The binding is a scope of the available loads; when its range is
    /// known non-empty and it has no guard, its value is computed where
    /// the binding stands, and only the body is a scope (not even the
    /// body when the value is a selection into the binding's range).
    fn binding(&mut self, b: &Binding) -> Result<(), JitError> {
        let mut mark = self.avail.mark();
        let lo = self.bound(&b.lower, true);
        let hi = self.bound(&b.upper, false);
        let join = self.b.create_block();
        let guard_blk = self.b.create_block();
        if b.nonempty {
            // Proven by the loop rewrites from the facts here.
            self.b.ins().jump(guard_blk, &[]);
        } else {
            let nonempty = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, lo, hi);
            self.b.ins().brif(nonempty, guard_blk, &[], join, &[]);
        }
        self.b.seal_block(guard_blk);
        self.b.switch_to_block(guard_blk);
        // A guard that is the constant `true` (the common case: a label
        // selected unconditionally) needs no branch.
        if !matches!(b.guard, Expr::Bool(true)) {
            let c = self.expr(&b.guard)?;
            let value_blk = self.b.create_block();
            self.b.ins().brif(c, value_blk, &[], join, &[]);
            self.b.seal_block(value_blk);
            self.b.switch_to_block(value_blk);
        }
        let x = self.expr(&b.value)?;
        let straight = b.nonempty && matches!(b.guard, Expr::Bool(true));
        if straight {
            mark = self.avail.mark();
        }
        let body_blk = self.b.create_block();
        // A selection checked against the binding's own bounds (a label
        // bound in its result's range) got past its check only inside.
        let checked = matches!(&b.value, Expr::Selection(s)
            if b.lower.is_value_of(&s.lower) && b.upper.is_value_of(&s.upper));
        // Then the body is entered unconditionally too: it dominates what
        // follows, and only the loads in `var` are forgotten after it.
        let straight = straight && checked;
        if checked {
            self.b.ins().jump(body_blk, &[]);
        } else {
            // `lo <= hi` holds here (proved, or tested above).
            let inside = self.in_nonempty_range(x, lo, hi);
            self.b.ins().brif(inside, body_blk, &[], join, &[]);
        }
        self.b.seal_block(body_blk);
        self.b.switch_to_block(body_blk);
        // Not an unrolled copy of a loop over `var`: no offset.
        let saved = self.offsets[b.var.0];
        self.offsets[b.var.0] = 0;
        self.avail.forget(Mark::default(), b.var);
        self.b.def_var(self.loop_vars[b.var.0], x);
        self.enclosing.push(b.var);
        let r = self.stmts(&b.body);
        self.enclosing.pop();
        r?;
        self.offsets[b.var.0] = saved;
        if straight {
            self.avail.forget(mark, b.var);
        } else {
            self.avail.truncate(mark);
        }
        self.b.ins().jump(join, &[]);
        self.b.seal_block(join);
        self.b.switch_to_block(join);
        Ok(())
    }

    /// Kill the available loads that read an array `body` writes.
    fn kill_written(&mut self, body: &[Stmt]) {
        for (a, _) in Writes::of(body).arrays {
            self.avail.kill(a);
        }
    }

    /// Branches to a new block when `v <= hi` (the current value of `v`),
    /// else to an exit block; continues in the first. Returns both.
    fn enter_when_le(
        &mut self,
        var: LoopVar,
        hi: Value,
    ) -> (cranelift_codegen::ir::Block, cranelift_codegen::ir::Block) {
        let body_blk = self.b.create_block();
        let exit = self.b.create_block();
        let start = self.b.use_var(self.loop_vars[var.0]);
        let enter = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, start, hi);
        self.b.ins().brif(enter, body_blk, &[], exit, &[]);
        self.b.switch_to_block(body_blk);
        (body_blk, exit)
    }

    /// `if (v <= hi) body`, from the current value of `v`: a loop that
    /// runs at most once ([`ForLoop::runs_at_most_once`]).
    fn once(&mut self, var: LoopVar, hi: Value, body: &[Stmt]) -> Result<(), JitError> {
        let (body_blk, exit) = self.enter_when_le(var, hi);
        self.b.seal_block(body_blk);
        let mark = self.avail.mark();
        self.stmts(body)?;
        self.avail.truncate(mark);
        self.b.ins().jump(exit, &[]);
        self.b.seal_block(exit);
        self.b.switch_to_block(exit);
        Ok(())
    }

    /// `while (v <= hi) { copies × (body; v += lanes) }` as a rotated loop
    /// (guard, then body and test at the bottom), starting from the
    /// current value of `v`; with `lanes > 1` each copy is the vector form
    /// of the body over `lanes` consecutive iterations.
    fn rotated_loop(
        &mut self,
        var: LoopVar,
        hi: Value,
        body: &[Stmt],
        copies: i64,
        lanes: i64,
    ) -> Result<(), JitError> {
        let v = self.loop_vars[var.0];
        let (body_blk, exit) = self.enter_when_le(var, hi);
        if lanes > 1 {
            self.vec_var = Some(var);
        }
        for u in 0..copies {
            self.offsets[var.0] = u * lanes;
            self.vector_copy = u as usize;
            // Each copy is a scope of the available loads (its loop
            // variable has another value).
            let mark = self.avail.mark();
            if lanes == 1 {
                self.stmts(body)?;
            } else {
                self.vstmts(body)?;
            }
            self.avail.truncate(mark);
        }
        self.offsets[var.0] = 0;
        self.vec_var = None;
        let i = self.b.use_var(v);
        let next = self.b.ins().iadd_imm(i, copies * lanes);
        self.b.def_var(v, next);
        let again = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, next, hi);
        self.b.ins().brif(again, body_blk, &[], exit, &[]);
        self.b.seal_block(body_blk);
        self.b.seal_block(exit);
        self.b.switch_to_block(exit);
        Ok(())
    }
}
