//! Rows of a categorical weight's data-selected loads: a load such as
//! `NWK[w[i]][k]` in the weight of a draw over `k` reads one row, chosen
//! by data that does not depend on `k`. Its data-dependent indices are
//! checked, and its offset from them computed, once per draw before the
//! first pass; each weight then adds the offset of `k` (an affine index,
//! proven in the box by `analysis` in the fast variant).
//!
//! Must not know about: the scratch buffer and the passes of a draw
//! (`draws` calls [`Lower::row_loads`] and [`Lower::check_rows`]).

use super::draws::mentions;
use super::Lower;
use crate::codegen::loop_ast::{BinOp, Cast, Expr, LoopVar, MathFn, UnOp};
use crate::jit::abi::status;
use crate::jit::JitError;
use crate::vocab::ElemType;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};

impl Lower<'_, '_> {
    /// The loads of the weight `e` of a draw over `k` whose row can be
    /// checked once per draw, in evaluation order: data-dependent loads
    /// of an array without a domain predicate whose data-dependent
    /// indices do not mention `k`, whose other indices are affine and
    /// mention `k`, and before which (in the weight's evaluation order)
    /// nothing may fail. The walk stops at the first operation that may
    /// fail (int arithmetic, another data-dependent load, an int `abs`,
    /// a draw or external call) or that is evaluated lazily (`?:`, `&&`,
    /// `||`). Returns `false` when it stopped.
    ///
    /// Why checking them first is exact: at the first point of pass 1
    /// the weight evaluates these checks, on the same values (their
    /// indices do not depend on `k` and nothing before them has an
    /// effect), before anything else that may fail; at every later point
    /// the same checks pass again. Only the fast variant uses it: the
    /// checked one checks every index where it is.
    pub(super) fn row_loads<'e>(&self, e: &'e Expr, k: LoopVar, out: &mut Vec<&'e Expr>) -> bool {
        match e {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => true,
            Expr::Load { array, index } => {
                if !index.iter().all(|x| self.row_loads(x, k, out)) {
                    return false;
                }
                if index.iter().all(Expr::is_affine) {
                    return true;
                }
                let row = self.f.arrays[*array].domain.is_none()
                    && index.iter().any(|x| mentions(x, k))
                    && index
                        .iter()
                        .all(|x| if x.is_affine() { true } else { !mentions(x, k) });
                if row {
                    out.push(e);
                }
                row
            }
            Expr::Unary(UnOp::Not, a) => self.row_loads(a, k, out),
            Expr::Unary(UnOp::Neg, a) => {
                self.expr_type(a) == ElemType::Float && self.row_loads(a, k, out)
            }
            Expr::Binary(BinOp::And | BinOp::Or, _, _) | Expr::Select(..) => false,
            Expr::Binary(op, a, b) => {
                let safe = self.expr_type(a) == ElemType::Float
                    || matches!(
                        op,
                        BinOp::Eq
                            | BinOp::Ne
                            | BinOp::Lt
                            | BinOp::Le
                            | BinOp::Gt
                            | BinOp::Ge
                            | BinOp::Min
                            | BinOp::Max
                    );
                safe && self.row_loads(a, k, out) && self.row_loads(b, k, out)
            }
            Expr::Cast(
                Cast::IntToFloat | Cast::FloatToInt | Cast::BoolToInt | Cast::BoolToFloat,
                a,
            ) => self.row_loads(a, k, out),
            Expr::Math(f, args) => {
                let int_abs = *f == MathFn::Abs
                    && args.first().map(|a| self.expr_type(a)) == Some(ElemType::Int);
                !int_abs && args.iter().all(|a| self.row_loads(a, k, out))
            }
            Expr::Random(_) | Expr::Categorical(_) | Expr::External { .. } => false,
        }
    }

    /// Checks the rows of `loads` (from [`Lower::row_loads`] for a draw over
    /// `k` that starts at `lo`), in order, and records their partial
    /// offsets for [`Lower::row_address`]. A failing check reports the
    /// load's point at `k = lo`, the first point where the weight reads it.
    pub(super) fn check_rows(
        &mut self,
        loads: &[&Expr],
        k: LoopVar,
        lo: Value,
    ) -> Result<(), JitError> {
        let kv = self.loop_vars[k.0];
        self.b.def_var(kv, lo);
        for e in loads {
            let Expr::Load { array, index } = e else {
                continue;
            };
            let mut xs = Vec::with_capacity(index.len());
            for x in index {
                xs.push(self.expr(x)?);
            }
            let mut ok = self.b.ins().iconst(types::I8, 1);
            let mut fixed = Vec::new();
            for (j, (x, &v)) in index.iter().zip(&xs).enumerate() {
                if !mentions(x, k) {
                    fixed.push((j, v));
                }
                if x.is_affine() {
                    continue;
                }
                let lo = self.arrays[*array].lo[j];
                let hi = self.arrays[*array].hi[j];
                let c1 = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, v, lo);
                let c2 = self.b.ins().icmp(IntCC::SignedLessThan, v, hi);
                let c = self.b.ins().band(c1, c2);
                ok = self.b.ins().band(ok, c);
            }
            self.guard(ok, status::OUT_OF_BOUNDS, Some(*array), &xs);
            let partial = self.offset_of(*array, &fixed, None);
            self.rows.push((index.as_ptr(), k, partial));
        }
        Ok(())
    }

    /// The address of a load recorded by [`Lower::check_rows`]: its
    /// partial offset plus the offsets of the indices that mention the
    /// drawn index (affine). `None` for another access, and always in the
    /// checked variant.
    pub(super) fn row_address(
        &mut self,
        array: usize,
        index: &[Expr],
    ) -> Result<Option<Value>, JitError> {
        if self.check_all {
            return Ok(None);
        }
        let Some(&(_, k, partial)) = self
            .rows
            .iter()
            .find(|(p, _, _)| std::ptr::eq(*p, index.as_ptr()))
        else {
            return Ok(None);
        };
        let mut moving = Vec::new();
        for (j, x) in index.iter().enumerate() {
            if mentions(x, k) {
                moving.push((j, self.expr(x)?));
            }
        }
        let off = self.offset_of(array, &moving, Some(partial));
        Ok(Some(self.byte_address(array, off)))
    }
}
