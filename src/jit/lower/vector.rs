//! The vector form of innermost loops: when iterations provably commute
//! ([`vectorizable`]), a body runs on `f64x2` vectors of `LANES`
//! consecutive iterations, each lane performing the scalar operations (so
//! results are bit-identical to the scalar loop).

use super::{mem, Lower};
use crate::codegen::loop_ast::{ArrayId, BinOp, Expr, Function, LoopVar, Stmt, Sym, UnOp};
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
/// the index is affine, where `k` is its coefficient of `var`.
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
        _ => None,
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

/// Whether the innermost loop over `var` with this body may run as
/// vectors of `LANES` consecutive iterations, bit-exactly: the body is
/// assignments `F[..] = e` to float arrays, each written array written by
/// exactly one statement at a contiguous index and never read in the
/// body, and `e` is built from float constants, affine float loads
/// (contiguous or invariant) and `+ − × ÷`, negation. Then distinct
/// iterations touch disjoint written elements and read nothing written,
/// so they commute, and each lane performs the scalar operations.
pub(super) fn vectorizable(f: &Function, var: LoopVar, body: &[Stmt]) -> bool {
    let mut written = Vec::new();
    for s in body {
        let Stmt::Assign { array, index, .. } = s else {
            return false;
        };
        if f.arrays[*array].ty != ElemType::Float
            || written.contains(array)
            || contiguous_or_invariant(index, var) != Some(true)
        {
            return false;
        }
        written.push(*array);
    }
    fn ok(f: &Function, var: LoopVar, e: &Expr, written: &[ArrayId]) -> bool {
        match e {
            Expr::Float(_) => true,
            Expr::Load { array, index } => {
                f.arrays[*array].ty == ElemType::Float
                    && !written.contains(array)
                    && contiguous_or_invariant(index, var).is_some()
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
            Stmt::Assign { value, .. } => ok(f, var, value, &written),
            _ => false,
        })
}

impl Lower<'_, '_> {
    /// The vector form (lanes `v + offset`, `v + offset + 1`) of a body
    /// accepted by [`vectorizable`].
    pub(super) fn vstmts(&mut self, body: &[Stmt]) -> Result<(), JitError> {
        for s in body {
            if let Stmt::Assign {
                array,
                index,
                value,
            } = s
            {
                let x = self.vexpr(value)?;
                let addr = self.address(*array, index)?;
                self.b.ins().store(vmem(*array), x, addr, 0);
            }
        }
        Ok(())
    }

    fn vexpr(&mut self, e: &Expr) -> Result<Value, JitError> {
        Ok(match e {
            Expr::Float(c) => {
                let x = self.b.ins().f64const(*c);
                self.b.ins().splat(types::F64X2, x)
            }
            Expr::Load { array, index } => {
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
