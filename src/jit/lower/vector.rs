//! The vector form of innermost loops: when iterations provably commute
//! ([`vectorizable`]), a body runs on `f64x2` vectors of `LANES`
//! consecutive iterations, each lane performing the scalar operations (so
//! results are bit-identical to the scalar loop). A running `min` or `max`
//! into a local ([`extremum`]) keeps one vector of partial extrema per
//! unrolled copy, combined after the loop: the same value, as these
//! operations do not depend on grouping (a NaN result may differ in its
//! sign and payload bits only).

use super::expr::float_extremum;
use super::{mem, Lower};
use crate::codegen::loop_ast::{
    Accumulation, ArrayId, BinOp, Expr, Function, LocalId, LoopVar, ReduceOp, Stmt, Sym, UnOp,
};
use crate::jit::JitError;
use crate::vocab::ElemType;
use cranelift_codegen::ir::{types, InstBuilder, MemFlags, Value};

/// Lanes of the vector form (`f64x2`).
pub(super) const LANES: i64 = 2;

/// What the lowering knows of a loop's body before its first iteration.
pub(super) struct Known<'k> {
    /// The branch a `?:` takes in this copy of the loop, if fixed.
    pub taken: &'k dyn Fn(&Expr) -> Option<bool>,
    /// Whether an expression is a float computed before the loop.
    pub hoisted: &'k dyn Fn(&Expr) -> bool,
}

/// Memory flags of vector accesses to array `a`: like [`mem`] but not
/// `aligned` (a vector of two `f64` need not be 16-byte aligned).
fn vmem(a: ArrayId) -> MemFlags {
    let mut m = MemFlags::new().with_notrap();
    m.set_alias_region(mem(a).alias_region());
    m
}

/// The affine coefficients of an index relative to `var`: `Some(k)` when
/// the index is affine, where `k` is its coefficient of `var`; `Some(0)`
/// also for a quasi-affine index free of `var` (such as the
/// `mod(i + 2, 2)` of an array stored modulo: [`quasi_affine_free`]).
fn coeff_of(e: &Expr, var: LoopVar) -> Option<i64> {
    match e {
        Expr::Int(_) => Some(0),
        Expr::Aff(a) => Some(
            a.terms
                .iter()
                .filter(|(s, _)| *s == Sym::Loop(var))
                .map(|&(_, c)| c)
                .sum(),
        ),
        _ if quasi_affine_free(e, var) => Some(0),
        _ => None,
    }
}

/// `e` is an int built from affine expressions free of `var` with `+ − ×`,
/// `⌊/⌋`, `⌈/⌉`, `mod`, `min` and `max`: no load, so its value is the same
/// at every iteration of the loop over `var`.
fn quasi_affine_free(e: &Expr, var: LoopVar) -> bool {
    match e {
        Expr::Int(_) => true,
        Expr::Aff(a) => !a.terms.iter().any(|&(s, c)| c != 0 && s == Sym::Loop(var)),
        Expr::Binary(
            BinOp::Add
            | BinOp::Sub
            | BinOp::Mul
            | BinOp::FloorDiv
            | BinOp::CeilDiv
            | BinOp::Mod
            | BinOp::Min
            | BinOp::Max,
            a,
            b,
        ) => quasi_affine_free(a, var) && quasi_affine_free(b, var),
        _ => false,
    }
}

/// An access is *contiguous* in `var` (consecutive iterations touch
/// consecutive elements) when it is affine, `var` has coefficient 1 in the
/// last index and 0 in the others; it is *invariant* when `var` does not
/// occur.
fn contiguous_or_invariant(index: &[Expr], var: LoopVar) -> Option<bool> {
    let cs: Option<Vec<i64>> = index.iter().map(|e| coeff_of(e, var)).collect();
    let cs = cs?;
    let n = cs.len();
    if cs.iter().all(|&c| c == 0) {
        return Some(false);
    }
    if n > 0 && cs[n - 1] == 1 && cs[..n - 1].iter().all(|&c| c == 0) {
        return Some(true);
    }
    None
}

/// The last index of a load contiguous in `var` and every other index free
/// of `var`: affine with coefficient 0, or data-dependent without `var`
/// (a row of a data-selected load, `jit::lower::rows`, which the loop must
/// have checked before its first iteration for the vector form to be
/// used: see [`Lower::rows_cover`]).
fn row_contiguous(index: &[Expr], var: LoopVar) -> bool {
    let Some((last, rest)) = index.split_last() else {
        return false;
    };
    coeff_of(last, var) == Some(1)
        && rest.iter().all(|e| match coeff_of(e, var) {
            Some(c) => c == 0,
            None => !super::draws::mentions(e, var),
        })
}

/// The accesses `a` and `b` of one array never touch a common element
/// while `var` runs: some dimension is free of `var` in both and differs
/// between them by a constant `c` it can never equal: affine in both with
/// `c ≠ 0` (`R2[t − 5][a][b]` against `R2[t − 6][a][b]`), or `mod(e + c₁,
/// m)` against `mod(e + c₂, m)` with `c₁ − c₂ ≢ 0 (mod m)` (the two rows of
/// an array stored modulo 2, `X[mod(t, 2)]` against `X[mod(t − 1, 2)]`).
fn disjoint_rows(a: &[Expr], b: &[Expr], var: LoopVar) -> bool {
    let canon = |t: &[(Sym, i64)]| {
        let mut t: Vec<(Sym, i64)> = t.iter().copied().filter(|&(_, c)| c != 0).collect();
        t.sort();
        t
    };
    // `Some(c)` when `x − y` is the constant `c` (both affine, free of
    // `var`).
    let offset = |x: &Expr, y: &Expr| -> Option<i128> {
        if coeff_of(x, var) != Some(0) || coeff_of(y, var) != Some(0) {
            return None;
        }
        match (x, y) {
            (Expr::Aff(p), Expr::Aff(q)) if canon(&p.terms) == canon(&q.terms) => {
                Some(i128::from(p.constant) - i128::from(q.constant))
            }
            (Expr::Int(u), Expr::Int(v)) => Some(i128::from(*u) - i128::from(*v)),
            _ => None,
        }
    };
    a.iter()
        .zip(b)
        .any(|(x, y)| match (x.modular(), y.modular()) {
            (Some((p, m)), Some((q, n))) if m == n => {
                offset(p, q).is_some_and(|c| c.rem_euclid(i128::from(m)) != 0)
            }
            _ => {
                matches!((x, y), (Expr::Aff(_), Expr::Aff(_)))
                    && offset(x, y).is_some_and(|c| c != 0)
            }
        })
}

/// Whether the innermost loop over `var` with this body may run as
/// vectors of `LANES` consecutive iterations, bit-exactly: the body is
/// assignments `F[..] = e` and accumulations `F[..] += e`, `F[..] *= e`
/// to float arrays, each written array written by exactly one statement
/// at a contiguous index, and running extrema `m = min(m, e)`, `m =
/// max(m, e)` into float locals, one statement per local ([`extremum`]);
/// `e` is built from float constants, float loads, `+ − × ÷`, `min`,
/// `max` and negation; a load is affine (contiguous or
/// invariant) or a row contiguous in `var` ([`row_contiguous`]), and
/// reads a written array only at elements disjoint from the written ones
/// ([`disjoint_rows`]). A float computed once before the loop
/// (`known.hoisted`, `loops`' invariant parts) is a constant; a `?:` whose
/// branch this copy of the loop takes (`known.taken`: its condition was
/// evaluated before the loop, as in `loops::loop_per_value`) is that
/// branch. `min` and `max` are the IEEE
/// 754-2019 `minimum` and `maximum` in both forms (on `f64x2` a
/// branch-free sequence, `expr::vector_extremum`, where the scalar form,
/// Cranelift's `fmin` and `fmax`, compares and branches); a NaN result may
/// differ in its sign and payload bits, never in being a NaN. Then distinct iterations touch disjoint
/// written elements and read nothing written (an accumulation reads only
/// its own element), so they commute, and each lane performs the scalar
/// operations in the scalar order.
pub(super) fn vectorizable(f: &Function, var: LoopVar, body: &[Stmt], known: &Known) -> bool {
    let mut written: Vec<(ArrayId, &[Expr])> = Vec::new();
    let mut extrema: Vec<LocalId> = Vec::new();
    for s in body {
        if let Some((local, _, _)) = extremum(s) {
            if f.locals[local].ty != ElemType::Float || extrema.contains(&local) {
                return false;
            }
            extrema.push(local);
            continue;
        }
        let (array, index) = match s {
            Stmt::Assign { array, index, .. } => (*array, index),
            Stmt::Accumulate(Accumulation {
                array,
                index,
                op: ReduceOp::Add | ReduceOp::Mul,
                ..
            }) => (*array, index),
            _ => return false,
        };
        if f.arrays[array].ty != ElemType::Float
            || written.iter().any(|(a, _)| *a == array)
            || contiguous_or_invariant(index, var) != Some(true)
        {
            return false;
        }
        written.push((array, index));
    }
    fn ok(
        f: &Function,
        var: LoopVar,
        e: &Expr,
        written: &[(ArrayId, &[Expr])],
        known: &Known,
    ) -> bool {
        let ok = |x: &Expr| ok(f, var, x, written, known);
        if (known.hoisted)(e) {
            return true;
        }
        match e {
            Expr::Float(_) => true,
            Expr::Load { array, index } => {
                f.arrays[*array].ty == ElemType::Float
                    && written
                        .iter()
                        .all(|(a, w)| a != array || disjoint_rows(w, index, var))
                    && (contiguous_or_invariant(index, var).is_some() || row_contiguous(index, var))
            }
            Expr::Unary(UnOp::Neg, a) => ok(a),
            Expr::Binary(
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Min | BinOp::Max,
                a,
                b,
            ) => ok(a) && ok(b),
            Expr::Select(_, a, b) => match (known.taken)(e) {
                Some(then) => ok(if then { a } else { b }),
                None => false,
            },
            _ => false,
        }
    }
    !body.is_empty()
        && body.iter().all(|s| match (s, extremum(s)) {
            (_, Some((_, _, e))) => ok(f, var, e, &written, known),
            (Stmt::Assign { value, .. } | Stmt::Accumulate(Accumulation { value, .. }), None) => {
                ok(f, var, value, &written, known)
            }
            _ => false,
        })
}

/// `local = min(local, e)` or `local = max(local, e)` (either operand
/// order), as `(local, op, e)`: a running extremum. In a vectorizable body
/// `e` reads no local (`vectorizable`'s expressions have none), so the
/// local is read only by its own statement: the loop computes the
/// extremum of the local's value before it and of `e` at every iteration.
/// The vector form keeps one vector of partial extrema per unrolled copy
/// ([`Lower::begin_extrema`]), each lane a running extremum of its own
/// iterations, and combines them after the loop ([`Lower::end_extrema`]):
/// exact, as the IEEE `minimum` and `maximum` are associative, commutative
/// and idempotent (on values; a NaN stays a NaN), so the extremum of a
/// multiset does not depend on the grouping or on a repeated start value.
pub(super) fn extremum(s: &Stmt) -> Option<(LocalId, BinOp, &Expr)> {
    let Stmt::SetLocal { local, value } = s else {
        return None;
    };
    let Expr::Binary(op @ (BinOp::Min | BinOp::Max), a, b) = value else {
        return None;
    };
    match (&**a, &**b) {
        (Expr::Local(l), e) | (e, Expr::Local(l)) if l == local => Some((*local, *op, e)),
        _ => None,
    }
}

/// The data-dependent loads of a body accepted by [`vectorizable`] over
/// `var`. A load at a quasi-affine index free of `var` is not one: the
/// vector form loads it as a scalar, through the same checked address as
/// the scalar form.
fn data_loads<'e>(body: &'e [Stmt], var: LoopVar, known: &Known, out: &mut Vec<&'e [Expr]>) {
    fn walk<'e>(e: &'e Expr, var: LoopVar, known: &Known, out: &mut Vec<&'e [Expr]>) {
        if (known.hoisted)(e) {
            // Computed before the loop, not in it.
            return;
        }
        if let Expr::Load { index, .. } = e {
            if !index
                .iter()
                .all(|x| quasi_affine_free(x, var) || x.is_affine())
            {
                out.push(index);
            }
        }
        if let (Expr::Select(_, a, b), Some(then)) = (e, (known.taken)(e)) {
            // Only the taken branch is evaluated in the loop.
            return walk(if then { a } else { b }, var, known, out);
        }
        e.children()
            .into_iter()
            .for_each(|x| walk(x, var, known, out));
    }
    for s in body {
        if let Stmt::Assign { value, .. }
        | Stmt::Accumulate(Accumulation { value, .. })
        | Stmt::SetLocal { value, .. } = s
        {
            walk(value, var, known, out);
        }
    }
}

impl Lower<'_, '_> {
    /// The vector form (lanes `v + offset`, `v + offset + 1`) of a body
    /// accepted by [`vectorizable`].
    pub(super) fn vstmts(&mut self, body: &[Stmt]) -> Result<(), JitError> {
        for s in body {
            if let Some((local, op, e)) = extremum(s) {
                // The copy's vector of partial extrema (`begin_extrema`).
                let x = self.vexpr(e)?;
                let Some((_, vars)) = self.vector_extrema.iter().find(|(l, _)| *l == local) else {
                    return Err(JitError::Codegen("extremum without partials".into()));
                };
                let v = vars[self.vector_copy];
                let acc = self.b.use_var(v);
                let new = float_extremum(&mut self.b, op, acc, x, &self.plain_floats);
                self.b.def_var(v, new);
                continue;
            }
            match s {
                Stmt::Assign {
                    array,
                    index,
                    value,
                } => {
                    let x = self.vexpr(value)?;
                    let addr = self.address(*array, index)?;
                    self.b.ins().store(vmem(*array), x, addr, 0);
                }
                Stmt::Accumulate(acc) => {
                    // As the scalar form: the address, the old value, the
                    // value, then `old op value`.
                    let addr = self.address(acc.array, &acc.index)?;
                    let old = self.b.ins().load(types::F64X2, vmem(acc.array), addr, 0);
                    let x = self.vexpr(&acc.value)?;
                    let new = match acc.op {
                        ReduceOp::Mul => self.b.ins().fmul(old, x),
                        _ => self.b.ins().fadd(old, x),
                    };
                    self.b.ins().store(vmem(acc.array), new, addr, 0);
                }
                // `vectorizable` admits no other form.
                _ => return Err(JitError::Codegen("unvectorizable statement".into())),
            }
        }
        Ok(())
    }

    /// Before a vector loop over `body` with `copies` unrolled copies: for
    /// each running extremum of the body ([`extremum`]), `copies` vectors
    /// of partial extrema, each lane starting at the local's value.
    pub(super) fn begin_extrema(&mut self, body: &[Stmt], copies: usize) {
        for s in body {
            if let Some((local, _, _)) = extremum(s) {
                let start = self.b.use_var(self.locals[local]);
                let start = self.b.ins().splat(types::F64X2, start);
                let vars = (0..copies)
                    .map(|_| {
                        let v = self.b.declare_var(types::F64X2);
                        self.b.def_var(v, start);
                        v
                    })
                    .collect();
                self.vector_extrema.push((local, vars));
            }
        }
    }

    /// After the vector loop of [`Lower::begin_extrema`]: each local is
    /// the extremum of its partial extrema's lanes.
    pub(super) fn end_extrema(&mut self, body: &[Stmt]) {
        for s in body {
            if let Some((local, op, _)) = extremum(s) {
                let Some(i) = self.vector_extrema.iter().position(|(l, _)| *l == local) else {
                    continue;
                };
                let (_, vars) = self.vector_extrema.swap_remove(i);
                let mut acc = self.b.use_var(vars[0]);
                for &v in &vars[1..] {
                    let x = self.b.use_var(v);
                    acc = float_extremum(&mut self.b, op, acc, x, &self.plain_floats);
                }
                // Lane 0 of `acc op [acc₁, ·]`: branch-free (the lanes are
                // often equal, which the scalar form's branch mispredicts).
                let hi = self.b.ins().extractlane(acc, 1);
                let hi = self.b.ins().scalar_to_vector(types::F64X2, hi);
                let both = float_extremum(&mut self.b, op, acc, hi, &self.plain_floats);
                let r = self.b.ins().extractlane(both, 0);
                self.b.def_var(self.locals[local], r);
            }
        }
    }

    /// Whether every data-dependent load of a vectorizable `body` is one of
    /// the rows checked before the loop (`rows`, by the address of the
    /// index list): the vector form reads a row at its checked offset.
    pub(super) fn rows_cover(&self, body: &[Stmt], var: LoopVar, known: &Known) -> bool {
        let mut loads = Vec::new();
        data_loads(body, var, known, &mut loads);
        loads.iter().all(|index| {
            self.rows
                .iter()
                .any(|(p, _, _)| std::ptr::eq(*p, index.as_ptr()))
        })
    }

    fn vexpr(&mut self, e: &Expr) -> Result<Value, JitError> {
        if let Some(&(_, x)) = self.invariant.iter().find(|(p, _)| std::ptr::eq(*p, e)) {
            // A float computed before the loop (`invariant`).
            return Ok(self.b.ins().splat(types::F64X2, x));
        }
        Ok(match e {
            Expr::Float(c) => {
                let x = self.b.ins().f64const(*c);
                self.b.ins().splat(types::F64X2, x)
            }
            Expr::Load { array, index } => {
                // A row's address is its checked offset plus the lane's
                // (`rows`); an affine one is proven in the box.
                let addr = self.address(*array, index)?;
                let invariant = self
                    .vec_var
                    .is_some_and(|v| contiguous_or_invariant(index, v) == Some(false));
                if invariant {
                    let x = self.b.ins().load(types::F64, mem(*array), addr, 0);
                    self.b.ins().splat(types::F64X2, x)
                } else {
                    self.b.ins().load(types::F64X2, vmem(*array), addr, 0)
                }
            }
            Expr::Unary(UnOp::Neg, a) => {
                let x = self.vexpr(a)?;
                self.b.ins().fneg(x)
            }
            Expr::Select(_, a, b) if self.resolution(e).is_some() => {
                let then = self.resolution(e) == Some(true);
                self.vexpr(if then { a } else { b })?
            }
            Expr::Binary(op, a, b) => {
                let x = self.vexpr(a)?;
                let y = self.vexpr(b)?;
                match op {
                    BinOp::Add => self.b.ins().fadd(x, y),
                    BinOp::Sub => self.b.ins().fsub(x, y),
                    BinOp::Mul => self.b.ins().fmul(x, y),
                    BinOp::Min | BinOp::Max => {
                        float_extremum(&mut self.b, *op, x, y, &self.plain_floats)
                    }
                    _ => self.b.ins().fdiv(x, y),
                }
            }
            // `vectorizable` admits no other form.
            _ => return Err(JitError::Codegen("unvectorizable expression".into())),
        })
    }
}
