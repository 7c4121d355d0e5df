//! Lowering of draws: the key of a counter-based draw, the continuous and
//! discrete distributions (host routines), and the categorical draw (each
//! weight evaluated once into a scratch buffer, then a scan of the buffer;
//! or O(1) when its weights are all `1.0`), all exactly as the interpreter
//! draws (`runtime::rng`).

use super::expr::speculable;
use super::rows::Scope;
use super::Lower;
use crate::codegen::loop_ast::{
    for_each_stmt_expr, BinOp, CategoricalDraw, Distribution, Expr, LoopVar, RandomDraw, Stmt, Sym,
};
use crate::jit::abi::{rt, status};
use crate::jit::scratch::VIEW_BYTES;
use crate::jit::JitError;
use crate::runtime::rng;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, Block, InstBuilder, MemFlags, StackSlot, StackSlotData, StackSlotKind, Value,
};
use cranelift_frontend::Variable;

impl Lower<'_, '_> {
    /// A draw from a distribution ([`RandomDraw`]): the counter-based key
    /// of `(seed, site, point)`, then the host routine of the distribution;
    /// an invalid argument of a discrete distribution is a run error.
    pub(super) fn random(&mut self, r: &RandomDraw) -> Result<Value, JitError> {
        let (key, _) = self.rng_key(&r.seed, r.site, &r.point)?;
        let mut vs = vec![key];
        for a in &r.args {
            vs.push(self.expr(a)?);
        }
        let dist = r.dist;
        Ok(match dist {
            Distribution::Uniform => self.uniform01(key),
            Distribution::Normal => self.call(rt::NORMAL, &vs),
            Distribution::Gamma => self.call(rt::GAMMA, &vs),
            Distribution::Beta => self.call(rt::BETA, &vs),
            Distribution::Bernoulli | Distribution::Poisson => {
                let which = if dist == Distribution::Bernoulli {
                    rt::BERNOULLI
                } else {
                    rt::POISSON
                };
                let r = self.call(which, &vs);
                let ok = self.b.ins().icmp_imm(IntCC::SignedGreaterThanOrEqual, r, 0);
                self.guard(ok, status::BAD_RNG_ARG, None, &[]);
                if dist == Distribution::Bernoulli {
                    self.b.ins().ireduce(types::I8, r)
                } else {
                    r
                }
            }
        })
    }

    /// The key of a counter-based draw (`runtime::rng::Stream::new`): the
    /// site packs `(variable << 16) | ordinal`. The point is evaluated
    /// first, then the seed; returns the key and the point's values.
    fn rng_key(
        &mut self,
        seed: &Expr,
        site: u32,
        point: &[Expr],
    ) -> Result<(Value, Vec<Value>), JitError> {
        let point = point
            .iter()
            .map(|p| self.expr(p))
            .collect::<Result<Vec<_>, _>>()?;
        let hoisted = self
            .key_prefixes
            .iter()
            .find(|(s, st, n, _)| s == seed && *st == site && *n == point.len())
            .map(|&(_, _, _, v)| v);
        let mut key = match hoisted {
            Some(v) => v,
            None => self.key_prefix(seed, site, point.len())?,
        };
        for &pv in &point {
            key = self.absorb(key, pv);
        }
        Ok((key, point))
    }

    /// `runtime::rng::mix64` in the compiled code (SplitMix64's finalizer,
    /// wrapping 64-bit arithmetic): `z ^= z >> 30; z *= C1; z ^= z >> 27;
    /// z *= C2; z ^ (z >> 31)`.
    fn mix64(&mut self, z: Value) -> Value {
        let s = self.b.ins().ushr_imm(z, 30);
        let z = self.b.ins().bxor(z, s);
        let z = self.b.ins().imul_imm(z, 0xBF58_476D_1CE4_E5B9_u64 as i64);
        let s = self.b.ins().ushr_imm(z, 27);
        let z = self.b.ins().bxor(z, s);
        let z = self.b.ins().imul_imm(z, 0x94D0_49BB_1331_11EB_u64 as i64);
        let s = self.b.ins().ushr_imm(z, 31);
        self.b.ins().bxor(z, s)
    }

    /// `runtime::rng::absorb(h, w) = mix64(h ^ mix64(w + GOLDEN))` in the
    /// compiled code (it was a host call per coordinate of a draw's point;
    /// the same bits, `tests/jit_categorical.rs` and the inference suite
    /// compare the draws with the interpreter's).
    fn absorb(&mut self, h: Value, w: Value) -> Value {
        let g = self.b.ins().iadd_imm(w, rng::GOLDEN as i64);
        let m = self.mix64(g);
        let x = self.b.ins().bxor(h, m);
        self.mix64(x)
    }

    /// `Stream::from_key(key).uniform(0)` in the compiled code: the top 53
    /// bits of `mix64(key + GOLDEN)` times `2^-53`, in `[0, 1)` (the
    /// 53-bit integer converts to `f64` exactly).
    fn uniform01(&mut self, key: Value) -> Value {
        let g = self.b.ins().iadd_imm(key, rng::GOLDEN as i64);
        let r = self.mix64(g);
        let top = self.b.ins().ushr_imm(r, 11);
        let f = self.b.ins().fcvt_from_sint(types::F64, top);
        let scale = self.b.ins().f64const(1.0 / (1u64 << 53) as f64);
        self.b.ins().fmul(f, scale)
    }

    /// `runtime::rng::key_prefix(seed, site >> 16, site & 0xffff, n)`.
    fn key_prefix(&mut self, seed: &Expr, site: u32, n: usize) -> Result<Value, JitError> {
        let s = self.expr(seed)?;
        let var_v = self.iconst(i64::from(site >> 16));
        let ord_v = self.iconst(i64::from(site & 0xffff));
        let n_v = self.iconst(n as i64);
        Ok(self.call(rt::KEY_PREFIX, &[s, var_v, ord_v, n_v]))
    }

    /// Computes, in the entry block, the key prefix of every draw of
    /// `body` (the code this function runs) whose seed is an int constant or an affine function of
    /// the parameters only: the prefix depends on `(seed, site, point
    /// length)` alone, so one value (it dominates every use, being in the
    /// entry block) serves every execution of the draw, instead of one
    /// host call per draw. Must run right after the prologue.
    pub(super) fn hoist_key_prefixes(&mut self, body: &[Stmt]) -> Result<(), JitError> {
        let mut keys: Vec<(Expr, u32, usize)> = Vec::new();
        for_each_stmt_expr(body, &mut |e| expr_keys(e, &mut keys));
        for (seed, site, n) in keys {
            let v = self.key_prefix(&seed, site, n)?;
            self.key_prefixes.push((seed, site, n, v));
        }
        Ok(())
    }

    /// Creates, in the entry block, the frame's table of scratch views
    /// (`jit::scratch`) for the categorical draws of `body` (the code this
    /// function runs): one view `[0, 0]` per nesting depth. Must run right
    /// after the prologue.
    pub(super) fn scratch_views(&mut self, body: &[Stmt]) -> Result<(), JitError> {
        let mut depth = 0;
        for_each_stmt_expr(body, &mut |e| depth = depth.max(draw_depth(e)));
        if depth == 0 {
            return Ok(());
        }
        // The table's size, and so every offset into it, fits in `i32`.
        let too_deep = || JitError::Codegen("too many nested categorical draws".into());
        let bytes = i32::try_from(depth)
            .ok()
            .and_then(|d| d.checked_mul(VIEW_BYTES))
            .ok_or_else(too_deep)?;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            u32::try_from(bytes).map_err(|_| too_deep())?,
            3,
        ));
        let zero = self.iconst(0);
        for off in (0..bytes).step_by(8) {
            self.b.ins().stack_store(zero, slot, off);
        }
        self.scratch_views = Some((slot, depth));
        Ok(())
    }

    /// A categorical draw (see `CategoricalDraw`), in two passes over the
    /// points `k` of the range where the condition holds, in ascending
    /// order, exactly as `runtime::rng::Stream::categorical`:
    /// 1. each weight `w_k` is evaluated once and stored, in order, into
    ///    the scratch buffer of the draw's nesting depth (`jit::scratch`;
    ///    grown when full); `W = Σ w_k` (left to right) and whether no
    ///    `w_k` is below 0; then the check `ok && 0 < W < ∞` (after all
    ///    weights were evaluated, as the interpreter does), which refuses
    ///    exactly what the interpreter refuses: a NaN or infinite weight
    ///    shows in `W`;
    /// 2. `t = uniform · W`; over the stored weights (the condition is
    ///    evaluated again to recover the points), the first `k` with
    ///    `w_k > 0` and running sum `> t`, else the last `k` with `w_k > 0`.
    ///
    /// A draw inside the weight or the condition runs at the next depth,
    /// with its own buffer. A condition that cannot fail and does not
    /// mention `k` is evaluated once, before both passes.
    pub(super) fn categorical(&mut self, c: &CategoricalDraw) -> Result<Value, JitError> {
        if c.is_uniform() {
            return self.uniform_categorical(c);
        }
        let (key, point) = self.rng_key(&c.seed, c.site, &c.point)?;
        let depth = self.draw_depth;
        let views = match self.scratch_views {
            Some((slot, n)) if depth < n => slot,
            _ => {
                return Err(JitError::Codegen(
                    "a categorical draw deeper than the frame's scratch views".into(),
                ))
            }
        };
        // `depth < n`: inside the table, whose size fits in `i32`.
        let view_off = i32::try_from(depth)
            .ok()
            .and_then(|d| d.checked_mul(VIEW_BYTES))
            .ok_or_else(|| JitError::Codegen("too many nested categorical draws".into()))?;
        let lo = self.bound(&c.lower, true);
        let hi = self.bound(&c.upper, false);
        // A condition that cannot fail and does not mention the drawn
        // index (typically the guard of the statement) holds at every
        // point or at none: evaluated once, for both passes.
        let hoisted = if !matches!(c.cond, Expr::Bool(true))
            && speculable(&c.cond)
            && !mentions(&c.cond, c.var)
        {
            Some(self.expr(&c.cond)?)
        } else {
            None
        };
        let k = self.loop_vars[c.var.0];
        let (f64t, i64t) = (types::F64, types::I64);
        let total = self.b.declare_var(f64t);
        let all_ok = self.b.declare_var(types::I8);
        // The buffer's view and the number of weights stored.
        let base = self.b.declare_var(i64t);
        let cap = self.b.declare_var(i64t);
        let count = self.b.declare_var(i64t);
        let zero = self.b.ins().f64const(0.0);
        let inf = self.b.ins().f64const(f64::INFINITY);
        let yes = self.b.ins().iconst(types::I8, 1);
        self.b.def_var(total, zero);
        self.b.def_var(all_ok, yes);
        let base0 = self.b.ins().stack_load(i64t, views, view_off);
        let cap0 = self.b.ins().stack_load(i64t, views, view_off + 8);
        self.b.def_var(base, base0);
        self.b.def_var(cap, cap0);
        let none = self.iconst(0);
        self.b.def_var(count, none);
        let buf = Buffer {
            views,
            view_off,
            depth,
            base,
            cap,
        };
        // When the condition holds at every point or at none, pass 1 stores
        // `hi − lo + 1` weights or none: the buffer is grown once, here,
        // and pass 1 stores without testing its capacity. A range of 2^62
        // points or more asks for 2^62 + 1 elements, more than any `Vec`
        // can hold (2^60 `f64`s): the grow fails, the `NoScratch` error the
        // growing pass would also meet; below that `need` is exact.
        let pregrow = hoisted.is_some() || matches!(c.cond, Expr::Bool(true));
        if pregrow {
            // `hi − lo` as a 64-bit pattern: the true difference when
            // `hi >= lo`, read unsigned.
            let span = self.b.ins().isub(hi, lo);
            let limit = self.iconst(1 << 62);
            let capped = self.b.ins().umin(span, limit);
            let need = self.b.ins().iadd_imm(capped, 1);
            let nonempty = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, hi, lo);
            let short = self.b.ins().icmp(IntCC::UnsignedGreaterThan, need, cap0);
            let grow_now = self.b.ins().band(nonempty, short);
            self.grow_scratch_if(grow_now, &buf, need, c, &point);
        }
        // The parts of the weight that do not depend on `k` (the token's
        // word `w[i]`, its point `x[i]`), evaluated once, before pass 1,
        // when pass 1 evaluates the weight at all (a non-empty range where
        // the condition holds at every point or at none): at the first
        // point, and failing there, exactly where the weight would.
        let mut parts = Vec::new();
        // The rows of the weight's data-selected loads, checked there
        // first (`rows`), in the fast variant.
        let mut rows = Vec::new();
        if hoisted.is_some() || matches!(c.cond, Expr::Bool(true)) {
            invariant_parts(&c.weight, c.var, &mut parts);
            if !self.check_all {
                self.row_loads(&c.weight, &Scope::draw(c.var), &mut rows);
            }
        }
        let after_pass1 = if parts.is_empty() && rows.is_empty() {
            None
        } else {
            let row_vars = self.declare_rows(&rows, c.var);
            let pre = self.b.create_block();
            let join = self.b.create_block();
            let nonempty = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, lo, hi);
            let go = match hoisted {
                Some(h) => self.b.ins().band(nonempty, h),
                None => nonempty,
            };
            self.b.ins().brif(go, pre, &[], join, &[]);
            self.b.switch_to_block(pre);
            self.check_rows(&rows, &row_vars, c.var, lo)?;
            for e in &parts {
                let v = self.expr(e)?;
                self.invariant.push((*e as *const Expr, v));
            }
            Some(join)
        };
        self.draw_depth += 1;
        // Pass 1.
        self.cond_range(c, lo, hi, hoisted, |l, next| {
            let w = l.expr(&c.weight)?;
            // `all_ok` only records "no weight below 0": a NaN or infinite
            // weight makes the total NaN or infinite, which the check after
            // pass 1 refuses (see there).
            let neg = l.b.ins().fcmp(FloatCC::LessThan, w, zero);
            let prev_ok = l.b.use_var(all_ok);
            let now_ok = l.b.ins().band_not(prev_ok, neg);
            l.b.def_var(all_ok, now_ok);
            let t = l.b.use_var(total);
            let t2 = l.b.ins().fadd(t, w);
            l.b.def_var(total, t2);
            // `buffer[count] = w`, growing the buffer when it is full
            // (grown before pass 1 when `pregrow`).
            let n = l.b.use_var(count);
            if !pregrow {
                let room = l.b.use_var(cap);
                let full = l.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, n, room);
                let need = l.b.ins().iadd_imm(n, 1);
                l.grow_scratch_if(full, &buf, need, c, &point);
            }
            let b0 = l.b.use_var(base);
            let off = l.b.ins().ishl_imm(n, 3);
            let at = l.b.ins().iadd(b0, off);
            // In bounds: `0 <= count < capacity` (tested above, or, when
            // `pregrow`, `count < hi − lo + 1 <= capacity`: pass 1 stores
            // one weight per point of the range).
            l.b.ins().store(MemFlags::trusted(), w, at, 0);
            let n1 = l.b.ins().iadd_imm(n, 1);
            l.b.def_var(count, n1);
            l.b.ins().jump(next, &[]);
            Ok(())
        })?;
        self.draw_depth -= 1;
        if let Some(join) = after_pass1 {
            // The values are defined in `pre`, which dominates pass 1 only.
            let mark = self.invariant.len() - parts.len();
            self.invariant.truncate(mark);
            let mark = self.rows.len() - rows.len();
            self.rows.truncate(mark);
            self.b.ins().jump(join, &[]);
            self.b.switch_to_block(join);
        }
        // Every weight finite and `>= 0`, and `0 < W < ∞`, as the
        // interpreter requires: with no weight below 0, a NaN weight makes
        // `W` NaN and a `+∞` one makes it `+∞` (a `−∞` one is below 0),
        // and when all weights are `>= 0` and `W` is finite, each weight
        // is finite (`w <= W`).
        let tw = self.b.use_var(total);
        let okv = self.b.use_var(all_ok);
        let pos = self.b.ins().fcmp(FloatCC::GreaterThan, tw, zero);
        let fin = self.b.ins().fcmp(FloatCC::LessThan, tw, inf);
        let ok = self.b.ins().band(pos, fin);
        let ok = self.b.ins().band(ok, okv);
        self.guard(ok, status::BAD_CATEGORICAL, c.array, &point);
        let u = self.uniform01(key);
        let target = self.b.ins().fmul(u, tw);
        // Pass 2, over the `count` stored weights (the same points).
        let stored = self.b.use_var(base);
        let cum = self.b.declare_var(f64t);
        let last = self.b.declare_var(i64t);
        let res = self.b.declare_var(i64t);
        let idx = self.b.declare_var(i64t);
        self.b.def_var(cum, zero);
        self.b.def_var(last, lo);
        self.b.def_var(idx, none);
        let done = self.b.create_block();
        self.draw_depth += 1;
        self.cond_range(c, lo, hi, hoisted, |l, next| {
            let i = l.b.use_var(idx);
            let off = l.b.ins().ishl_imm(i, 3);
            let at = l.b.ins().iadd(stored, off);
            // Element `i < count` of the buffer, written in pass 1.
            let w = l.b.ins().load(f64t, MemFlags::trusted(), at, 0);
            let i1 = l.b.ins().iadd_imm(i, 1);
            l.b.def_var(idx, i1);
            let s0 = l.b.use_var(cum);
            let s1 = l.b.ins().fadd(s0, w);
            l.b.def_var(cum, s1);
            let positive = l.b.create_block();
            let found = l.b.create_block();
            if pregrow {
                // The first running sum above the target has a positive
                // weight (see `last_positive`): no test of the weight.
                l.b.ins().jump(positive, &[]);
            } else {
                let wpos = l.b.ins().fcmp(FloatCC::GreaterThan, w, zero);
                l.b.ins().brif(wpos, positive, &[], next, &[]);
            }
            l.b.switch_to_block(positive);
            let kv = l.b.use_var(k);
            if !pregrow {
                l.b.def_var(last, kv);
            }
            let hit = l.b.ins().fcmp(FloatCC::GreaterThan, s1, target);
            l.b.ins().brif(hit, found, &[], next, &[]);
            l.b.switch_to_block(found);
            l.b.def_var(res, kv);
            l.b.ins().jump(done, &[]);
            Ok(())
        })?;
        self.draw_depth -= 1;
        // Exhausted without a hit: the last positive weight.
        let lv = if pregrow {
            let n = self.b.use_var(count);
            self.last_positive(stored, n, lo)
        } else {
            self.b.use_var(last)
        };
        self.b.def_var(res, lv);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(self.b.use_var(res))
    }

    /// `lo + i` for the last of the `n` weights stored at `stored` that is
    /// `> 0` (`lo` when none is): the fallback of a categorical draw
    /// whose condition holds at every point, so that weight `i` is the
    /// point `lo + i`.
    ///
    /// Pass 2 of such a draw does not test the weights: the rule's answer,
    /// the first `k` whose weight is `> 0` and whose running sum `S_k`
    /// exceeds `t = u·W`, is the first `k` with `S_k > t`. Pass 1 checked
    /// every weight `>= 0` (or `−0.0`) and a finite total, and `t >= 0`;
    /// rounding is monotone, so `S_k = fl(S_(k−1) + w_k) >= S_(k−1)`, with
    /// equality when `w_k` is `±0`. At the first `k` with `S_k > t`,
    /// `S_(k−1) <= t` (or `k = lo`, `S_(lo−1) = 0 <= t`), so `S_k >
    /// S_(k−1)` and `w_k > 0`; no earlier point qualifies (its sum is `<=
    /// t`). Without such a `k` both take this fallback.
    fn last_positive(&mut self, stored: Value, n: Value, lo: Value) -> Value {
        let i64t = types::I64;
        let idx = self.b.declare_var(i64t);
        let res = self.b.declare_var(i64t);
        let zero = self.iconst(0);
        let body = self.b.create_block();
        let step = self.b.create_block();
        let done = self.b.create_block();
        let last = self.b.ins().iadd_imm(n, -1);
        self.b.def_var(idx, last);
        self.b.def_var(res, zero);
        let more = self.b.ins().icmp_imm(IntCC::SignedGreaterThan, last, 0);
        self.b.ins().brif(more, body, &[], done, &[]);
        self.b.switch_to_block(body);
        let i = self.b.use_var(idx);
        let off = self.b.ins().ishl_imm(i, 3);
        let at = self.b.ins().iadd(stored, off);
        // `0 < i < n`: element `i` was written by pass 1.
        let w = self.b.ins().load(types::F64, MemFlags::trusted(), at, 0);
        let fzero = self.b.ins().f64const(0.0);
        let pos = self.b.ins().fcmp(FloatCC::GreaterThan, w, fzero);
        self.b.def_var(res, i);
        self.b.ins().brif(pos, done, &[], step, &[]);
        self.b.switch_to_block(step);
        let i = self.b.use_var(idx);
        let i1 = self.b.ins().iadd_imm(i, -1);
        self.b.def_var(idx, i1);
        self.b.def_var(res, zero);
        let more = self.b.ins().icmp_imm(IntCC::SignedGreaterThan, i1, 0);
        self.b.ins().brif(more, body, &[], done, &[]);
        self.b.switch_to_block(done);
        let r = self.b.use_var(res);
        self.b.ins().iadd(lo, r)
    }

    /// When `short` holds (a cold path): grows the draw's scratch buffer
    /// `buf` to at least `need` elements through `alphac_rt_scratch_grow`
    /// and reloads its view into `buf.base`, `buf.cap`; a failed
    /// allocation is the draw's `NoScratch` error. Continues in a new
    /// block either way.
    fn grow_scratch_if(
        &mut self,
        short: Value,
        buf: &Buffer,
        need: Value,
        c: &CategoricalDraw,
        point: &[Value],
    ) {
        let grow = self.b.create_block();
        let ready = self.b.create_block();
        self.b.set_cold_block(grow);
        self.b.ins().brif(short, grow, &[], ready, &[]);
        self.b.switch_to_block(grow);
        let view = self
            .b
            .ins()
            .stack_addr(self.ptr_ty, buf.views, buf.view_off);
        let d = self.iconst(buf.depth as i64);
        let got = self.call(rt::SCRATCH_GROW, &[self.scratch_ptr, view, d, need]);
        let ok = self.b.ins().icmp_imm(IntCC::NotEqual, got, 0);
        self.guard(ok, status::NO_SCRATCH, c.array, point);
        // The view now has a capacity of at least `need`.
        let room = self
            .b
            .ins()
            .stack_load(types::I64, buf.views, buf.view_off + 8);
        self.b.def_var(buf.base, got);
        self.b.def_var(buf.cap, room);
        self.b.ins().jump(ready, &[]);
        self.b.switch_to_block(ready);
    }

    /// A uniform categorical draw ([`CategoricalDraw::is_uniform`]) in
    /// O(1), as `runtime::rng::Stream::uniform_index`: with `n = hi − lo +
    /// 1`, the check `1 <= n < 2^53` (an empty range is the error of an
    /// empty categorical), then `lo + min(⌊u·n⌋, n − 1)`. The weights are
    /// the constant `1.0`: nothing to evaluate.
    fn uniform_categorical(&mut self, c: &CategoricalDraw) -> Result<Value, JitError> {
        let (key, point) = self.rng_key(&c.seed, c.site, &c.point)?;
        let lo = self.bound(&c.lower, true);
        let hi = self.bound(&c.upper, false);
        // `hi − lo` as a 64-bit pattern: the true difference when hi >= lo.
        let span = self.b.ins().isub(hi, lo);
        let nonempty = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, hi, lo);
        let small = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThan, span, (1i64 << 53) - 1);
        let ok = self.b.ins().band(nonempty, small);
        self.guard(ok, status::BAD_CATEGORICAL, c.array, &point);
        let n = self.b.ins().iadd_imm(span, 1);
        let nf = self.b.ins().fcvt_from_sint(types::F64, n);
        let u = self.uniform01(key);
        let t = self.b.ins().fmul(u, nf);
        // 0 <= t <= n < 2^53: the conversion (truncating toward zero) is
        // the floor, and exact.
        let ki = self.b.ins().fcvt_to_sint(types::I64, t);
        let k = self.b.ins().smin(ki, span);
        Ok(self.b.ins().iadd(lo, k))
    }

    /// `for k = lo ..= hi { if cond(k) { then(next) } }` over the draw's
    /// variable: `then` is emitted in the block where the condition holds
    /// and must end with a jump (to `next`, the increment, or elsewhere).
    /// `hoisted` is the condition's value when it does not depend on `k`
    /// (then it is tested once, before the loop). Returns in the block
    /// after the loop.
    fn cond_range(
        &mut self,
        c: &CategoricalDraw,
        lo: Value,
        hi: Value,
        hoisted: Option<Value>,
        then: impl FnOnce(&mut Self, Block) -> Result<(), JitError>,
    ) -> Result<(), JitError> {
        let k = self.loop_vars[c.var.0];
        self.b.def_var(k, lo);
        let head = self.b.create_block();
        let body = self.b.create_block();
        let then_blk = self.b.create_block();
        let next = self.b.create_block();
        let exit = self.b.create_block();
        match hoisted {
            Some(holds) => self.b.ins().brif(holds, head, &[], exit, &[]),
            None => self.b.ins().jump(head, &[]),
        };
        self.b.switch_to_block(head);
        let kv = self.b.use_var(k);
        let more = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, kv, hi);
        self.b.ins().brif(more, body, &[], exit, &[]);
        self.b.switch_to_block(body);
        if hoisted.is_some() || matches!(c.cond, Expr::Bool(true)) {
            self.b.ins().jump(then_blk, &[]);
        } else {
            let cv = self.expr(&c.cond)?;
            self.b.ins().brif(cv, then_blk, &[], next, &[]);
        }
        self.b.switch_to_block(then_blk);
        then(self, next)?;
        self.b.switch_to_block(next);
        let kv = self.b.use_var(k);
        let k2 = self.b.ins().iadd_imm(kv, 1);
        self.b.def_var(k, k2);
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(exit);
        Ok(())
    }
}

/// The number of scratch buffers that evaluating `e` holds at one time:
/// a non-uniform categorical draw holds one while its condition and
/// weight are evaluated (a draw there is one level deeper); its seed and
/// point are evaluated before it takes its buffer.
fn draw_depth(e: &Expr) -> usize {
    let deepest = |xs: &[&Expr]| xs.iter().map(|x| draw_depth(x)).max().unwrap_or(0);
    match e {
        Expr::Categorical(c) if !c.is_uniform() => {
            let inner = 1 + deepest(&[&c.cond, &c.weight]);
            let before: Vec<&Expr> = std::iter::once(&c.seed).chain(&c.point).collect();
            inner.max(deepest(&before))
        }
        _ => deepest(&e.children()),
    }
}

/// A categorical draw's scratch buffer as compiled code sees it: the
/// frame's table of views, this draw's view in it, its nesting depth, and
/// the variables holding the view's base and capacity.
struct Buffer {
    views: StackSlot,
    view_off: i32,
    depth: usize,
    base: Variable,
    cap: Variable,
}

/// The maximal sub-expressions of a categorical weight `e` worth
/// evaluating once per draw (see `Lower::categorical`): they do not
/// mention the drawn index `k`, hold no draw or external call, contain a
/// load or a math call (what Cranelift cannot hoist out of the loop
/// itself), and are evaluated whenever `e` is (not inside a branch of a
/// `select` or the right operand of `&&`/`||`, which may not run).
fn invariant_parts<'e>(e: &'e Expr, k: LoopVar, out: &mut Vec<&'e Expr>) {
    if !mentions(e, k) && !has_call_or_draw(e) && costly(e) {
        out.push(e);
        return;
    }
    match e {
        Expr::Select(c, _, _) => invariant_parts(c, k, out),
        Expr::Binary(BinOp::And | BinOp::Or, a, _) => invariant_parts(a, k, out),
        Expr::Random(_) | Expr::Categorical(_) | Expr::External { .. } => {}
        _ => e
            .children()
            .into_iter()
            .for_each(|x| invariant_parts(x, k, out)),
    }
}

/// `e` holds a draw or an external call.
fn has_call_or_draw(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Random(_) | Expr::Categorical(_) | Expr::External { .. }
    ) || e.children().into_iter().any(has_call_or_draw)
}

/// `e` holds a load or a math call.
pub(super) fn costly(e: &Expr) -> bool {
    matches!(e, Expr::Load { .. } | Expr::Math(..)) || e.children().into_iter().any(costly)
}

/// True when `e` mentions loop variable `v` outside the bounds of a
/// nested draw (enough for a [`speculable`] expression, which has none).
pub(super) fn mentions(e: &Expr, v: LoopVar) -> bool {
    match e {
        Expr::Aff(a) => a.terms.iter().any(|&(s, c)| c != 0 && s == Sym::Loop(v)),
        _ => e.children().into_iter().any(|x| mentions(x, v)),
    }
}

/// The distinct `(seed, site, point length)` of the draws in `e` whose
/// seed mentions no loop variable, in order of appearance.
fn expr_keys(e: &Expr, out: &mut Vec<(Expr, u32, usize)>) {
    let mut add = |seed: &Expr, site: u32, n: usize| {
        let invariant = match seed {
            Expr::Int(_) => true,
            Expr::Aff(a) => a.is_param_only(),
            _ => false,
        };
        if invariant
            && !out
                .iter()
                .any(|(s, st, m)| s == seed && *st == site && *m == n)
        {
            out.push((seed.clone(), site, n));
        }
    };
    match e {
        Expr::Random(r) => add(&r.seed, r.site, r.point.len()),
        Expr::Categorical(c) => add(&c.seed, c.site, c.point.len()),
        _ => {}
    }
    e.children().into_iter().for_each(|x| expr_keys(x, out));
}
