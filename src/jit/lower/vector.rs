//! The vector form of innermost loops: when iterations provably commute
//! ([`vectorizable`]), a body runs on `f64x2` vectors of `LANES`
//! consecutive iterations, each lane performing the scalar operations (so
//! results are bit-identical to the scalar loop).

use super::{mem, Lower};
use crate::codegen::loop_ast::{
    Accumulation, ArrayId, BinOp, Expr, Function, LoopVar, ReduceOp, Stmt, Sym, UnOp,
};
use crate::jit::JitError;
use crate::vocab::ElemType;
use cranelift_codegen::ir::{types, InstBuilder, MemFlags, Value};

/// Lanes of the vector form (`f64x2`).
pub(super) const LANES: i64 = 2;

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
/// at a contiguous index, and `e` is built from float constants, float
/// loads and `+ − × ÷`, negation; a load is affine (contiguous or
/// invariant) or a row contiguous in `var` ([`row_contiguous`]), and
/// reads a written array only at elements disjoint from the written ones
/// ([`disjoint_rows`]). Then distinct iterations touch disjoint written
/// elements and read nothing written (an accumulation reads only its own
/// element), so they commute, and each lane performs the scalar
/// operations in the scalar order.
pub(super) fn vectorizable(f: &Function, var: LoopVar, body: &[Stmt]) -> bool {
    let mut written: Vec<(ArrayId, &[Expr])> = Vec::new();
    for s in body {
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
    fn ok(f: &Function, var: LoopVar, e: &Expr, written: &[(ArrayId, &[Expr])]) -> bool {
        match e {
            Expr::Float(_) => true,
            Expr::Load { array, index } => {
                f.arrays[*array].ty == ElemType::Float
                    && written
                        .iter()
                        .all(|(a, w)| a != array || disjoint_rows(w, index, var))
                    && (contiguous_or_invariant(index, var).is_some() || row_contiguous(index, var))
            }
            Expr::Unary(UnOp::Neg, a) => ok(f, var, a, written),
            Expr::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div, a, b) => {
                ok(f, var, a, written) && ok(f, var, b, written)
            }
            _ => false,
        }
    }
    !body.is_empty()
        && body.iter().all(|s| match s {
            Stmt::Assign { value, .. } | Stmt::Accumulate(Accumulation { value, .. }) => {
                ok(f, var, value, &written)
            }
            _ => false,
        })
}

/// The data-dependent loads of a body accepted by [`vectorizable`] over
/// `var`. A load at a quasi-affine index free of `var` is not one: the
/// vector form loads it as a scalar, through the same checked address as
/// the scalar form.
fn data_loads<'e>(body: &'e [Stmt], var: LoopVar, out: &mut Vec<&'e [Expr]>) {
    fn walk<'e>(e: &'e Expr, var: LoopVar, out: &mut Vec<&'e [Expr]>) {
        if let Expr::Load { index, .. } = e {
            if !index
                .iter()
                .all(|x| quasi_affine_free(x, var) || x.is_affine())
            {
                out.push(index);
            }
        }
        e.children().into_iter().for_each(|x| walk(x, var, out));
    }
    for s in body {
        if let Stmt::Assign { value, .. } | Stmt::Accumulate(Accumulation { value, .. }) = s {
            walk(value, var, out);
        }
    }
}

impl Lower<'_, '_> {
    /// The vector form (lanes `v + offset`, `v + offset + 1`) of a body
    /// accepted by [`vectorizable`].
    pub(super) fn vstmts(&mut self, body: &[Stmt]) -> Result<(), JitError> {
        for s in body {
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

    /// Whether every data-dependent load of a vectorizable `body` is one of
    /// the rows checked before the loop (`rows`, by the address of the
    /// index list): the vector form reads a row at its checked offset.
    pub(super) fn rows_cover(&self, body: &[Stmt], var: LoopVar) -> bool {
        let mut loads = Vec::new();
        data_loads(body, var, &mut loads);
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
            Expr::Binary(op, a, b) => {
                let x = self.vexpr(a)?;
                let y = self.vexpr(b)?;
                match op {
                    BinOp::Add => self.b.ins().fadd(x, y),
                    BinOp::Sub => self.b.ins().fsub(x, y),
                    BinOp::Mul => self.b.ins().fmul(x, y),
                    _ => self.b.ins().fdiv(x, y),
                }
            }
            // `vectorizable` admits no other form.
            _ => return Err(JitError::Codegen("unvectorizable expression".into())),
        })
    }
}
