//! Rows of data-selected loads: a load such as `NWK[w[i]][k]` in the
//! weight of a draw over `k`, or `cost[nbr[i][d]][k]` in the body of a loop
//! over `k`, reads one row, chosen by data that does not change while `k`
//! runs. Its data-dependent indices are checked, and its offset from them
//! computed, once before the draw's first pass or the loop's first
//! iteration; each access then adds the offset of `k` (an affine index,
//! proven in the box by `analysis` in the fast variant).
//!
//! Must not know about: the scratch buffer and the passes of a draw, how
//! loops are unrolled (`draws` and `loops` call [`Lower::row_loads`],
//! [`Lower::body_row_loads`], [`Lower::declare_rows`] and
//! [`Lower::check_rows`]).

use super::avail::Mark;
use super::draws::mentions;
use super::Lower;
use crate::codegen::loop_ast::{ArrayId, BinOp, Expr, LocalId, LoopVar, ReduceOp, Stmt, UnOp};
use crate::jit::abi::status;
use crate::jit::JitError;
use crate::vocab::ElemType;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::Variable;

/// What stays fixed while a draw's or a loop's variable `var` runs: an
/// index is fixed when it mentions none of `inner` (`var` and the
/// variables bound inside), reads none of the arrays and locals written
/// there, and calls nothing.
pub(super) struct Scope {
    pub var: LoopVar,
    pub inner: Vec<LoopVar>,
    pub arrays: Vec<ArrayId>,
    pub locals: Vec<LocalId>,
    /// Loads with no index that mentions `var` are rows too (a loop's);
    /// a draw leaves them to its invariant parts.
    pub whole: bool,
}

impl Scope {
    /// The scope of a categorical weight over `k`: it writes nothing.
    pub fn draw(k: LoopVar) -> Scope {
        Scope {
            var: k,
            inner: vec![k],
            arrays: Vec::new(),
            locals: Vec::new(),
            whole: false,
        }
    }

    /// `x` has one value while `var` runs.
    pub fn fixed(&self, x: &Expr) -> bool {
        match x {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) => true,
            Expr::Aff(_) => self.inner.iter().all(|&v| !mentions(x, v)),
            Expr::Local(l) => !self.locals.contains(l),
            Expr::Load { array, index } => {
                !self.arrays.contains(array) && index.iter().all(|i| self.fixed(i))
            }
            Expr::Unary(_, a) | Expr::Cast(_, a) => self.fixed(a),
            Expr::Binary(_, a, b) => self.fixed(a) && self.fixed(b),
            Expr::Select(c, a, b) => self.fixed(c) && self.fixed(a) && self.fixed(b),
            Expr::Math(_, args) => args.iter().all(|a| self.fixed(a)),
            Expr::Selection(s) => [&s.value, &s.lower, &s.upper]
                .into_iter()
                .all(|a| self.fixed(a)),
            Expr::Random(_) | Expr::Categorical(_) | Expr::External { .. } => false,
        }
    }
}

impl Lower<'_, '_> {
    /// The branch taken by the `?:` `e` in the copy of the loop being
    /// lowered, if its condition was evaluated before the loop.
    pub(super) fn resolution(&self, e: &Expr) -> Option<bool> {
        self.resolved
            .iter()
            .find(|(p, _)| std::ptr::eq(*p, e))
            .map(|&(_, t)| t)
    }

    /// The loads of `e` whose row can be checked before `scope`'s
    /// variable runs, in evaluation order: data-dependent loads of an
    /// array without a domain predicate whose data-dependent indices are
    /// fixed ([`Scope`]), whose other indices are affine, and before which
    /// (in evaluation order) nothing may fail. The walk stops at the first
    /// operation that may fail (int arithmetic, another data-dependent
    /// load, an int `abs`, a draw or external call) or that is evaluated
    /// lazily (`?:`, `&&`, `||`), except inside a fixed index of a row
    /// (`first[i] + m[i]`): [`Lower::check_rows`] evaluates a row's
    /// indices whole, failures included, in the order the load evaluates
    /// them. Returns `false` when it stopped. A `?:`
    /// whose branch this copy of the loop takes ([`Lower::resolution`])
    /// is its branch; in a loop's walk (`scope.whole`), a `?:` whose
    /// condition is fixed and walked through is pushed last, after the
    /// condition's loads, for `loops` to copy the loop per value.
    ///
    /// Why checking them first is exact: at the first point (of the draw's
    /// pass 1, or the loop's first iteration) these checks are evaluated
    /// on the same values (their indices are fixed and nothing before them
    /// has an effect), before anything else that may fail; at every later
    /// point the same checks pass again. Only the fast variant uses it:
    /// the checked one checks every index where it is.
    pub(super) fn row_loads<'e>(
        &self,
        e: &'e Expr,
        scope: &Scope,
        out: &mut Vec<&'e Expr>,
    ) -> bool {
        match e {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => true,
            Expr::Load { array, index } => {
                let row = !index.iter().all(Expr::is_affine)
                    && self.f.arrays[*array].domain.is_none()
                    && (scope.whole || index.iter().any(|x| mentions(x, scope.var)))
                    && index.iter().all(|x| x.is_affine() || scope.fixed(x));
                if row
                    && !index
                        .iter()
                        .all(|x| self.row_loads(x, scope, &mut Vec::new()))
                {
                    // A fixed index that may fail (CoxPH's `R2[first[i]
                    // + m[i]][a][b]`: an int sum): `check_rows` evaluates
                    // the row's indices whole, in the order the load
                    // does, their failures included.
                    out.push(e);
                    return true;
                }
                if !index.iter().all(|x| self.row_loads(x, scope, out)) {
                    return false;
                }
                if row {
                    out.push(e);
                }
                row || index.iter().all(Expr::is_affine)
            }
            Expr::Unary(UnOp::Not, a) => self.row_loads(a, scope, out),
            Expr::Select(c, a, b) => {
                if let Some(then) = self.resolution(e) {
                    return self.row_loads(if then { a } else { b }, scope, out);
                }
                // A loop's `?:` on a fixed condition is a candidate for a
                // copy of the loop per value (`loops`): its condition is
                // walked, and the `?:` itself ends the list.
                if scope.whole && scope.fixed(c) && self.row_loads(c, scope, out) {
                    out.push(e);
                }
                false
            }
            Expr::Binary(BinOp::And | BinOp::Or, _, _) => false,
            Expr::Unary(UnOp::Neg, _)
            | Expr::Binary(..)
            | Expr::Cast(..)
            | Expr::Math(..)
            | Expr::Random(_)
            | Expr::Categorical(_)
            | Expr::External { .. }
            | Expr::Selection(_) => {
                !self.op_may_fail(e)
                    && e.children()
                        .into_iter()
                        .all(|a| self.row_loads(a, scope, out))
            }
        }
    }

    /// [`Lower::row_loads`] over a loop body, in the order the lowering
    /// evaluates it: an assignment's value, then its index; an
    /// accumulation's index, then its value (a float `+ − * min max`
    /// only: on ints the update may overflow); a local's value. The walk
    /// stops at an `if` (after its condition), a loop, a binding, a
    /// data-dependent store or accumulation, and anything that stops
    /// [`Lower::row_loads`].
    pub(super) fn body_row_loads<'e>(
        &self,
        body: &'e [Stmt],
        scope: &Scope,
        out: &mut Vec<&'e Expr>,
    ) -> bool {
        for s in body {
            let go = match s {
                Stmt::Assign { index, value, .. } => {
                    self.row_loads(value, scope, out)
                        && index.iter().all(|x| self.row_loads(x, scope, out))
                        && index.iter().all(Expr::is_affine)
                }
                Stmt::Accumulate(acc) => {
                    let float = self.f.arrays[acc.array].ty == ElemType::Float;
                    acc.index.iter().all(|x| self.row_loads(x, scope, out))
                        && acc.index.iter().all(Expr::is_affine)
                        && float
                        && !matches!(acc.op, ReduceOp::And | ReduceOp::Or)
                        && self.row_loads(&acc.value, scope, out)
                }
                Stmt::SetLocal { value, .. } => self.row_loads(value, scope, out),
                Stmt::Block(b) => self.body_row_loads(b, scope, out),
                Stmt::If { cond, .. } => {
                    self.row_loads(cond, scope, out);
                    false
                }
                Stmt::For(_) | Stmt::Bind(_) => false,
            };
            if !go {
                return false;
            }
        }
        true
    }

    /// One variable per load of `loads` (in [`Lower::row_loads`]'s
    /// order) for the address of its row (the element where the indices
    /// that mention the running variable are at their arrays' lower
    /// bounds), recorded for [`Lower::row_address`] and defined as `0`
    /// here, where the checks may not run (the code that reads them runs
    /// only after [`Lower::check_rows`] defined them). An address rather
    /// than an offset: the loop then needs one register per row, not the
    /// row's offset and its array's base (LDA-GS's weight loop reloaded
    /// three bases from the stack at every topic).
    pub(super) fn declare_rows(&mut self, loads: &[&Expr], k: LoopVar) -> Vec<Variable> {
        let zero = self.b.ins().iconst(self.ptr_ty, 0);
        let mut vars = Vec::with_capacity(loads.len());
        for e in loads {
            let Expr::Load { index, .. } = e else {
                continue;
            };
            let v = self.b.declare_var(self.ptr_ty);
            self.b.def_var(v, zero);
            self.rows.push((index.as_ptr(), k, v));
            vars.push(v);
        }
        vars
    }

    /// Checks the rows of `loads` (declared by [`Lower::declare_rows`] as
    /// `vars`, for a variable `k` that starts at `lo`), in order, and
    /// defines their row addresses. A failing check reports the load's
    /// point at `k = lo`, the first point where it is read.
    pub(super) fn check_rows(
        &mut self,
        loads: &[&Expr],
        vars: &[Variable],
        k: LoopVar,
        lo: Value,
    ) -> Result<(), JitError> {
        let kv = self.loop_vars[k.0];
        // `k` takes the value `lo`: no load in it is available.
        self.avail.forget(Mark::default(), k);
        self.b.def_var(kv, lo);
        let loads = loads.iter().filter_map(|e| match e {
            Expr::Load { array, index } => Some((*array, index)),
            _ => None,
        });
        for ((array, index), &var) in loads.zip(vars) {
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
                let c = self.in_box(array, j, v)?;
                ok = self.b.ins().band(ok, c);
            }
            self.guard(ok, status::OUT_OF_BOUNDS, Some(array), &xs);
            let partial = self.offset_of(array, &fixed, None)?;
            let row = self.byte_address(array, partial)?;
            self.b.def_var(var, row);
        }
        Ok(())
    }

    /// A load with indices `index` reads a row checked before its loop
    /// ([`Lower::declare_rows`]; never in the checked variant).
    pub(super) fn has_row(&self, index: &[Expr]) -> bool {
        !self.check_all
            && self
                .rows
                .iter()
                .any(|(p, _, _)| std::ptr::eq(*p, index.as_ptr()))
    }

    /// The address of a load recorded by [`Lower::declare_rows`]: its
    /// row's address plus the offsets of the indices that mention the
    /// running variable (affine). `None` for another access, and always in
    /// the checked variant.
    pub(super) fn row_address(
        &mut self,
        array: usize,
        index: &[Expr],
    ) -> Result<Option<Value>, JitError> {
        if self.check_all {
            return Ok(None);
        }
        let Some(&(_, k, var)) = self
            .rows
            .iter()
            .find(|(p, _, _)| std::ptr::eq(*p, index.as_ptr()))
        else {
            return Ok(None);
        };
        let row = self.b.use_var(var);
        let mut moving = Vec::new();
        for (j, x) in index.iter().enumerate() {
            if mentions(x, k) {
                moving.push((j, self.expr(x)?));
            }
        }
        let off = self.offset_of(array, &moving, None)?;
        Ok(Some(self.byte_address_from(array, row, off)?))
    }
}
