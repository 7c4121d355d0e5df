//! Lowering of draws: the key of a counter-based draw, the continuous and
//! discrete distributions (host routines), and the categorical draw (two
//! passes over its range, or O(1) when its weights are all `1.0`), all
//! exactly as the interpreter draws (`runtime::rng`).

use super::Lower;
use crate::codegen::loop_ast::{CategoricalDraw, Distribution, Expr, RandomDraw, Stmt};
use crate::jit::abi::{rt, status};
use crate::jit::JitError;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, Block, InstBuilder, Value};

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
            Distribution::Uniform => self.call(rt::UNIFORM, &vs),
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
            key = self.call(rt::MIX, &[key, pv]);
        }
        Ok((key, point))
    }

    /// `runtime::rng::key_prefix(seed, site >> 16, site & 0xffff, n)`.
    fn key_prefix(&mut self, seed: &Expr, site: u32, n: usize) -> Result<Value, JitError> {
        let s = self.expr(seed)?;
        let var_v = self.iconst(i64::from(site >> 16));
        let ord_v = self.iconst(i64::from(site & 0xffff));
        let n_v = self.iconst(n as i64);
        Ok(self.call(rt::KEY_PREFIX, &[s, var_v, ord_v, n_v]))
    }

    /// Computes, in the entry block, the key prefix of every draw of the
    /// function whose seed is an int constant or an affine function of
    /// the parameters only: the prefix depends on `(seed, site, point
    /// length)` alone, so one value (it dominates every use, being in the
    /// entry block) serves every execution of the draw, instead of one
    /// host call per draw. Must run right after the prologue.
    pub(super) fn hoist_key_prefixes(&mut self) -> Result<(), JitError> {
        let mut keys: Vec<(Expr, u32, usize)> = Vec::new();
        collect_keys(&self.f.body, &mut keys);
        for (seed, site, n) in keys {
            let v = self.key_prefix(&seed, site, n)?;
            self.key_prefixes.push((seed, site, n, v));
        }
        Ok(())
    }

    /// A categorical draw (see `CategoricalDraw`), in two passes over the
    /// points `k` of the range where the condition holds, in ascending
    /// order, exactly as `runtime::rng::Stream::categorical`:
    /// 1. `W = Σ w_k` (left to right) and whether every `w_k` is finite and
    ///    `>= 0`; then the check `ok && 0 < W < ∞` (after all weights were
    ///    evaluated, as the interpreter does);
    /// 2. `t = uniform · W`; the first `k` with `w_k > 0` and running sum
    ///    `> t`, else the last `k` with `w_k > 0`.
    ///
    /// The weights are evaluated twice (they are pure: the same loads and
    /// the same counter-based draws), which needs no scratch memory.
    pub(super) fn categorical(&mut self, c: &CategoricalDraw) -> Result<Value, JitError> {
        if c.is_uniform() {
            return self.uniform_categorical(c);
        }
        let (key, point) = self.rng_key(&c.seed, c.site, &c.point)?;
        let lo = self.bound(&c.lower, true);
        let hi = self.bound(&c.upper, false);
        let k = self.loop_vars[c.var.0];
        let f64t = types::F64;
        let total = self.b.declare_var(f64t);
        let all_ok = self.b.declare_var(types::I8);
        let zero = self.b.ins().f64const(0.0);
        let inf = self.b.ins().f64const(f64::INFINITY);
        let yes = self.b.ins().iconst(types::I8, 1);
        self.b.def_var(total, zero);
        self.b.def_var(all_ok, yes);
        // Pass 1.
        self.cond_range(c, lo, hi, |l, next| {
            let w = l.expr(&c.weight)?;
            let ge0 = l.b.ins().fcmp(FloatCC::GreaterThanOrEqual, w, zero);
            let fin = l.b.ins().fcmp(FloatCC::LessThan, w, inf);
            let okw = l.b.ins().band(ge0, fin);
            let prev_ok = l.b.use_var(all_ok);
            let now_ok = l.b.ins().band(prev_ok, okw);
            l.b.def_var(all_ok, now_ok);
            let t = l.b.use_var(total);
            let t2 = l.b.ins().fadd(t, w);
            l.b.def_var(total, t2);
            l.b.ins().jump(next, &[]);
            Ok(())
        })?;
        let tw = self.b.use_var(total);
        let okv = self.b.use_var(all_ok);
        let pos = self.b.ins().fcmp(FloatCC::GreaterThan, tw, zero);
        let fin = self.b.ins().fcmp(FloatCC::LessThan, tw, inf);
        let ok = self.b.ins().band(pos, fin);
        let ok = self.b.ins().band(ok, okv);
        self.guard(ok, status::BAD_CATEGORICAL, c.array, &point);
        let u = self.call(rt::UNIFORM, &[key]);
        let target = self.b.ins().fmul(u, tw);
        // Pass 2.
        let cum = self.b.declare_var(f64t);
        let last = self.b.declare_var(types::I64);
        let res = self.b.declare_var(types::I64);
        self.b.def_var(cum, zero);
        self.b.def_var(last, lo);
        let done = self.b.create_block();
        self.cond_range(c, lo, hi, |l, next| {
            let w = l.expr(&c.weight)?;
            let s0 = l.b.use_var(cum);
            let s1 = l.b.ins().fadd(s0, w);
            l.b.def_var(cum, s1);
            let positive = l.b.create_block();
            let found = l.b.create_block();
            let wpos = l.b.ins().fcmp(FloatCC::GreaterThan, w, zero);
            l.b.ins().brif(wpos, positive, &[], next, &[]);
            l.b.switch_to_block(positive);
            let kv = l.b.use_var(k);
            l.b.def_var(last, kv);
            let hit = l.b.ins().fcmp(FloatCC::GreaterThan, s1, target);
            l.b.ins().brif(hit, found, &[], next, &[]);
            l.b.switch_to_block(found);
            l.b.def_var(res, kv);
            l.b.ins().jump(done, &[]);
            Ok(())
        })?;
        // Exhausted without a hit: the last positive weight.
        let lv = self.b.use_var(last);
        self.b.def_var(res, lv);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(self.b.use_var(res))
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
        let u = self.call(rt::UNIFORM, &[key]);
        let t = self.b.ins().fmul(u, nf);
        // 0 <= t <= n < 2^53: the floor converts exactly.
        let fl = self.b.ins().floor(t);
        let ki = self.b.ins().fcvt_to_sint(types::I64, fl);
        let k = self.b.ins().smin(ki, span);
        Ok(self.b.ins().iadd(lo, k))
    }

    /// `for k = lo ..= hi { if cond(k) { then(next) } }` over the draw's
    /// variable: `then` is emitted in the block where the condition holds
    /// and must end with a jump (to `next`, the increment, or elsewhere).
    /// Returns in the block after the loop.
    fn cond_range(
        &mut self,
        c: &CategoricalDraw,
        lo: Value,
        hi: Value,
        then: impl FnOnce(&mut Self, Block) -> Result<(), JitError>,
    ) -> Result<(), JitError> {
        let k = self.loop_vars[c.var.0];
        self.b.def_var(k, lo);
        let head = self.b.create_block();
        let body = self.b.create_block();
        let then_blk = self.b.create_block();
        let next = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(head, &[]);
        self.b.switch_to_block(head);
        let kv = self.b.use_var(k);
        let more = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, kv, hi);
        self.b.ins().brif(more, body, &[], exit, &[]);
        self.b.switch_to_block(body);
        let cv = self.expr(&c.cond)?;
        self.b.ins().brif(cv, then_blk, &[], next, &[]);
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

/// The distinct `(seed, site, point length)` of the draws in `body` whose
/// seed mentions no loop variable, in order of appearance.
fn collect_keys(body: &[Stmt], out: &mut Vec<(Expr, u32, usize)>) {
    for s in body {
        match s {
            // Bounds are affine: no draws.
            Stmt::For(l) => collect_keys(&l.body, out),
            Stmt::If { cond, then, els } => {
                expr_keys(cond, out);
                collect_keys(then, out);
                collect_keys(els, out);
            }
            Stmt::Assign { index, value, .. } => {
                index.iter().for_each(|e| expr_keys(e, out));
                expr_keys(value, out);
            }
            Stmt::Accumulate(a) => {
                a.index.iter().for_each(|e| expr_keys(e, out));
                expr_keys(&a.value, out);
            }
            Stmt::SetLocal { value, .. } => expr_keys(value, out),
            Stmt::Block(b) => collect_keys(b, out),
            Stmt::Bind(b) => {
                expr_keys(&b.guard, out);
                expr_keys(&b.value, out);
                collect_keys(&b.body, out);
            }
        }
    }
}

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
