//! Lowering of a checked loop-AST [`Function`] to Cranelift IR and native
//! code in a `JITModule`.
//!
//! Owns: the native calling convention of compiled functions (see
//! [`NativeFn`]), the error-slot layout and status codes (see
//! [`status`]), the translation of every loop-AST form.
//!
//! Must not know about: buffers and parameters of a particular run (those
//! are checked by `jit::mod` before the call), schedules, the IR.
//!
//! Code shape: loops are rotated (guard, body, test at the bottom).
//! Innermost loops with small bodies are unrolled 4 times, iterations in
//! order; inside a copy, the loop variable is `base + offset` with the
//! offset folded into affine constants, so equal indices of different
//! copies are equal SSA values and Cranelift's alias analysis (one alias
//! category per array, `mem`) removes redundant loads. Innermost loops
//! whose iterations provably commute (`vectorizable`) run as `f64x2`
//! vectors, two vectors per trip, then a scalar remainder loop; each lane
//! performs the scalar operations, so results are bit-identical.

use super::runtime;
use super::JitError;
use crate::codegen::loop_ast::{
    acc_bin_op, Affine, ArrayId, BinOp, Bound, Cast, CategoricalDraw, Distribution, Expr, Function,
    LoopVar, MathFn, ReduceOp, Stmt, Sym, UnOp, MAX_DIMS,
};
use crate::ir::types::ConstraintKind;
use crate::vocab::ElemType;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, AbiParam, AliasRegion, Block, BlockArg, FuncRef, InstBuilder, MemFlags, StackSlotData,
    StackSlotKind, Type, UserFuncName, Value,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};

/// The native signature of a compiled function:
/// `(buffers: *const *mut u8, params: *const i64, err: *mut i64) -> i64`.
/// `buffers[a]` is the base of array `a`'s dense buffer, `params[p]` the
/// value of parameter `p`; `err` points to [`ERR_SLOT_LEN`] `i64`s. The
/// result is a [`status`] code; on failure the error slot holds
/// `[code, array, n, point_0, ..., point_{n-1}]`.
pub type NativeFn =
    extern "C" fn(*const *mut u8, *const i64, *mut i64, *const runtime::ExternalTable) -> i64;

/// Length of the error slot in `i64`s.
pub const ERR_SLOT_LEN: usize = 3 + MAX_DIMS;

/// Status codes returned by compiled functions.
pub mod status {
    pub const OK: i64 = 0;
    /// A data-dependent access outside the array's box or domain.
    pub const OUT_OF_BOUNDS: i64 = 1;
    /// An affine access out of bounds (checked mode: the scanner's
    /// contract is violated).
    pub const CONTRACT: i64 = 2;
    pub const DIV_ZERO: i64 = 3;
    pub const OVERFLOW: i64 = 4;
    /// An invalid argument of a discrete distribution.
    pub const BAD_RNG_ARG: i64 = 5;
    /// Invalid weights of a categorical draw (the error slot names the
    /// array and the point).
    pub const BAD_CATEGORICAL: i64 = 6;
    /// An external function without implementation (the error slot's
    /// "array" is the external's index).
    pub const EXTERNAL_MISSING: i64 = 7;
    /// An external function panicked (index as for `EXTERNAL_MISSING`).
    pub const EXTERNAL_PANICKED: i64 = 8;
}

/// A finalized native function and the module that owns its code.
pub(crate) struct Compiled {
    /// Owns the executable memory `code` points into; must stay alive as
    /// long as `code` may be called, freed on drop (`None` only then).
    module: Option<JITModule>,
    pub(crate) code: *const u8,
}

impl Drop for Compiled {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: `code` is the only pointer into the module's memory
            // that leaves this file, and it is called only by
            // `JitFunction::run` through a borrow of the `JitFunction` that
            // owns this `Compiled`; while it is being dropped no call is in
            // progress and none can start, and `code` is never used again.
            unsafe { m.free_memory() };
        }
    }
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("code", &self.code)
            .finish()
    }
}

fn cl_err(e: impl std::fmt::Display) -> JitError {
    JitError::Codegen(e.to_string())
}

/// A runtime routine: its JIT symbol, address and signature.
struct RtDecl {
    name: &'static str,
    addr: *const u8,
    params: &'static [Type],
    ret: Type,
}

fn runtime_decls() -> Vec<RtDecl> {
    use types::{F64, I64};
    vec![
        RtDecl {
            name: "alphac_rt_exp",
            addr: runtime::rt_exp as *const u8,
            params: &[F64],
            ret: F64,
        },
        RtDecl {
            name: "alphac_rt_log",
            addr: runtime::rt_log as *const u8,
            params: &[F64],
            ret: F64,
        },
        RtDecl {
            name: "alphac_rt_pow",
            addr: runtime::rt_pow as *const u8,
            params: &[F64, F64],
            ret: F64,
        },
        RtDecl {
            name: "alphac_rt_fmod",
            addr: runtime::rt_fmod as *const u8,
            params: &[F64, F64],
            ret: F64,
        },
        RtDecl {
            name: "alphac_rt_lgamma",
            addr: runtime::rt_lgamma as *const u8,
            params: &[F64],
            ret: F64,
        },
        RtDecl {
            name: "alphac_rng_absorb",
            addr: crate::runtime::rng::abi::alphac_rng_absorb as *const u8,
            params: &[I64, I64],
            ret: I64,
        },
        RtDecl {
            name: "alphac_rng_uniform",
            addr: crate::runtime::rng::abi::alphac_rng_uniform as *const u8,
            params: &[I64],
            ret: F64,
        },
        RtDecl {
            name: "alphac_rng_normal",
            addr: crate::runtime::rng::abi::alphac_rng_normal as *const u8,
            params: &[I64, F64, F64],
            ret: F64,
        },
        RtDecl {
            name: "alphac_rng_gamma",
            addr: crate::runtime::rng::abi::alphac_rng_gamma as *const u8,
            params: &[I64, F64, F64],
            ret: F64,
        },
        RtDecl {
            name: "alphac_rng_beta",
            addr: crate::runtime::rng::abi::alphac_rng_beta as *const u8,
            params: &[I64, F64, F64],
            ret: F64,
        },
        RtDecl {
            name: "alphac_rng_bernoulli",
            addr: crate::runtime::rng::abi::alphac_rng_bernoulli as *const u8,
            params: &[I64, F64],
            ret: I64,
        },
        RtDecl {
            name: "alphac_rng_poisson",
            addr: crate::runtime::rng::abi::alphac_rng_poisson as *const u8,
            params: &[I64, F64],
            ret: I64,
        },
        RtDecl {
            name: "alphac_rng_key_prefix",
            addr: crate::runtime::rng::abi::alphac_rng_key_prefix as *const u8,
            params: &[I64, I64, I64, I64],
            ret: I64,
        },
        RtDecl {
            // (table, index, args, n, out); pointers are I64 (the host
            // check in `compile_inner` requires 64-bit pointers).
            name: "alphac_rt_external",
            addr: runtime::rt_external as *const u8,
            params: &[I64, I64, I64, I64, I64],
            ret: I64,
        },
    ]
}

/// Indices into `runtime_decls()`.
mod rt {
    pub const EXP: usize = 0;
    pub const LOG: usize = 1;
    pub const POW: usize = 2;
    pub const FMOD: usize = 3;
    pub const LGAMMA: usize = 4;
    pub const MIX: usize = 5;
    pub const UNIFORM: usize = 6;
    pub const NORMAL: usize = 7;
    pub const GAMMA: usize = 8;
    pub const BETA: usize = 9;
    pub const BERNOULLI: usize = 10;
    pub const POISSON: usize = 11;
    pub const KEY_PREFIX: usize = 12;
    pub const EXTERNAL: usize = 13;
}

/// Compiles a checked function (the caller ran `Function::check`).
/// `check_all`: bounds-check every access, affine ones included.
pub(crate) fn compile(f: &Function, check_all: bool) -> Result<Compiled, JitError> {
    compile_inner(f, check_all, false).map(|(c, _)| c)
}

/// The optimized Cranelift IR followed by the machine code (Cranelift's
/// VCode listing, after register allocation) that [`compile`] produces
/// for a checked function, for inspecting code quality.
pub(crate) fn disassemble(f: &Function, check_all: bool) -> Result<String, JitError> {
    compile_inner(f, check_all, true).map(|(_, d)| d.unwrap_or_default())
}

fn compile_inner(
    f: &Function,
    check_all: bool,
    disasm: bool,
) -> Result<(Compiled, Option<String>), JitError> {
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").map_err(cl_err)?;
    flags
        .set("use_colocated_libcalls", "false")
        .map_err(cl_err)?;
    flags.set("is_pic", "false").map_err(cl_err)?;
    let isa_builder =
        cranelift_native::builder().map_err(|m| JitError::UnsupportedHost(m.to_string()))?;
    let isa = isa_builder
        .finish(settings::Flags::new(flags))
        .map_err(cl_err)?;
    let mut jb = JITBuilder::with_isa(isa, default_libcall_names());
    let decls = runtime_decls();
    for d in &decls {
        jb.symbol(d.name, d.addr);
    }
    let mut module = JITModule::new(jb);
    let ptr_ty = module.target_config().pointer_type();
    if ptr_ty != types::I64 {
        return Err(JitError::UnsupportedHost(
            "only hosts with 64-bit pointers are supported".into(),
        ));
    }

    let mut rt_ids = Vec::new();
    for d in &decls {
        let mut sig = module.make_signature();
        for &p in d.params {
            sig.params.push(AbiParam::new(p));
        }
        sig.returns.push(AbiParam::new(d.ret));
        let id = module
            .declare_function(d.name, Linkage::Import, &sig)
            .map_err(cl_err)?;
        rt_ids.push(id);
    }

    let mut sig = module.make_signature();
    sig.params.push(AbiParam::new(ptr_ty));
    sig.params.push(AbiParam::new(ptr_ty));
    sig.params.push(AbiParam::new(ptr_ty));
    sig.params.push(AbiParam::new(ptr_ty));
    sig.returns.push(AbiParam::new(types::I64));
    let fid = module
        .declare_function(&format!("alphac_{}", f.name), Linkage::Local, &sig)
        .map_err(cl_err)?;
    let mut ctx = module.make_context();
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(0, fid.as_u32());
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let rt_refs: Vec<FuncRef> = rt_ids
            .iter()
            .map(|&id| module.declare_func_in_func(id, b.func))
            .collect();
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let args = b.block_params(entry).to_vec();
        let mut l = Lower {
            f,
            b,
            check_all,
            ptr_ty,
            params: Vec::new(),
            arrays: Vec::new(),
            loop_vars: Vec::new(),
            offsets: vec![0; f.loop_vars.len()],
            vec_var: None,
            locals: Vec::new(),
            err_ptr: args[2],
            ext_ptr: args[3],
            rt: rt_refs,
        };
        l.prologue(args[0], args[1])?;
        l.stmts(&f.body)?;
        let ok = l.b.ins().iconst(types::I64, status::OK);
        l.b.ins().return_(&[ok]);
        l.b.seal_all_blocks();
        l.b.finalize();
    }
    ctx.set_disasm(disasm);
    module.define_function(fid, &mut ctx).map_err(cl_err)?;
    let listing = ctx.compiled_code().and_then(|c| c.vcode.clone());
    let listing = if disasm {
        listing.map(|l| format!("{}\n{l}", ctx.func.display()))
    } else {
        None
    };
    module.clear_context(&mut ctx);
    module.finalize_definitions().map_err(cl_err)?;
    let code = module.get_finalized_function(fid);
    Ok((
        Compiled {
            module: Some(module),
            code,
        },
        listing,
    ))
}

struct ArrInfo {
    base: Value,
    lo: Vec<Value>,
    /// `lo + extent` (exclusive upper bound) per dimension.
    hi: Vec<Value>,
    stride: Vec<Value>,
    elem: Type,
    size_log2: u8,
}

struct Lower<'a, 'b> {
    f: &'a Function,
    b: FunctionBuilder<'b>,
    check_all: bool,
    ptr_ty: Type,
    params: Vec<Value>,
    arrays: Vec<ArrInfo>,
    loop_vars: Vec<Variable>,
    /// Per loop variable, the offset of the unrolled copy being lowered
    /// (0 outside unrolled loops).
    offsets: Vec<i64>,
    /// The loop variable of the vector loop being lowered, if any.
    vec_var: Option<LoopVar>,
    locals: Vec<Variable>,
    err_ptr: Value,
    /// The `ExternalTable` of the run.
    ext_ptr: Value,
    rt: Vec<FuncRef>,
}

fn cl_type(t: ElemType) -> Type {
    match t {
        ElemType::Int => types::I64,
        ElemType::Float => types::F64,
        ElemType::Bool => types::I8,
    }
}

/// Memory flags of the accesses to array `a`: in bounds (checked or
/// proven), aligned (the buffers are `Vec`s of the element type), and in
/// the alias category `a mod 4` of Cranelift's alias analysis. The
/// buffers of distinct arrays are disjoint (distinct `Vec`s, exclusively
/// borrowed for the run), so every memory location is accessed under one
/// category only, as the alias analysis requires; arrays sharing a
/// category are merely treated as possibly aliasing. This lets redundant
/// loads of one array be eliminated across stores to another.
fn mem(a: ArrayId) -> MemFlags {
    let region = match a % 4 {
        0 => None,
        1 => Some(AliasRegion::Heap),
        2 => Some(AliasRegion::Table),
        _ => Some(AliasRegion::Vmctx),
    };
    MemFlags::trusted().with_alias_region(region)
}

impl Lower<'_, '_> {
    fn iconst(&mut self, v: i64) -> Value {
        self.b.ins().iconst(types::I64, v)
    }

    fn prologue(&mut self, bufs: Value, params: Value) -> Result<(), JitError> {
        let f = self.f;
        let too_many = || JitError::Codegen("too many parameters or arrays".into());
        for p in 0..f.params.len() {
            let off = p
                .checked_mul(8)
                .and_then(|o| i32::try_from(o).ok())
                .ok_or_else(too_many)?;
            let v = self
                .b
                .ins()
                .load(types::I64, MemFlags::trusted(), params, off);
            self.params.push(v);
        }
        let psize = self.ptr_ty.bytes() as usize;
        for (a, arr) in f.arrays.iter().enumerate() {
            let off = a
                .checked_mul(psize)
                .and_then(|o| i32::try_from(o).ok())
                .ok_or_else(too_many)?;
            let base = self
                .b
                .ins()
                .load(self.ptr_ty, MemFlags::trusted(), bufs, off);
            let mut lo = Vec::new();
            let mut hi = Vec::new();
            let mut ext = Vec::new();
            for d in &arr.dims {
                let l = self.affine(&d.lower);
                let e = self.affine(&d.extent);
                let h = self.b.ins().iadd(l, e);
                lo.push(l);
                hi.push(h);
                ext.push(e);
            }
            let n = arr.dims.len();
            let mut stride = vec![self.iconst(1); n];
            for k in (0..n.saturating_sub(1)).rev() {
                stride[k] = self.b.ins().imul(stride[k + 1], ext[k + 1]);
            }
            let (elem, size_log2) = match arr.ty {
                ElemType::Int => (types::I64, 3),
                ElemType::Float => (types::F64, 3),
                ElemType::Bool => (types::I8, 0),
            };
            self.arrays.push(ArrInfo {
                base,
                lo,
                hi,
                stride,
                elem,
                size_log2,
            });
        }
        for _ in &f.loop_vars {
            let v = self.b.declare_var(types::I64);
            self.loop_vars.push(v);
        }
        for l in &f.locals {
            let ty = cl_type(l.ty);
            let v = self.b.declare_var(ty);
            let z = match l.ty {
                ElemType::Float => self.b.ins().f64const(0.0),
                _ => self.b.ins().iconst(ty, 0),
            };
            self.b.def_var(v, z);
            self.locals.push(v);
        }
        Ok(())
    }

    /// `constant + Σ c·sym` (the caller proved before the run that the
    /// value cannot overflow). A loop variable inside an unrolled copy is
    /// `base + offset`; `c·offset` is folded into the constant, so that
    /// equal indices of different copies are equal SSA values (which lets
    /// Cranelift eliminate redundant loads). The folding wraps: arithmetic
    /// modulo 2^64 gives the exact value whenever the value fits in `i64`,
    /// which the analysis proved.
    fn affine(&mut self, e: &Affine) -> Value {
        let mut k = e.constant;
        for &(s, c) in &e.terms {
            if let Sym::Loop(v) = s {
                k = k.wrapping_add(c.wrapping_mul(self.offsets[v.0]));
            }
        }
        let mut acc = self.iconst(k);
        for &(s, c) in &e.terms {
            if c == 0 {
                continue;
            }
            let x = match s {
                Sym::Loop(v) => self.b.use_var(self.loop_vars[v.0]),
                Sym::Param(p) => self.params[p],
            };
            let t = if c == 1 {
                x
            } else {
                self.b.ins().imul_imm(x, c)
            };
            acc = self.b.ins().iadd(acc, t);
        }
        acc
    }

    /// `⌊a / d⌋` (`floor`) or `⌈a / d⌉` for a constant `d >= 1`.
    fn div_const(&mut self, a: Value, d: i64, floor: bool) -> Value {
        if d == 1 {
            return a;
        }
        let (cc, adj) = if floor {
            (IntCC::SignedLessThan, -(d - 1))
        } else {
            (IntCC::SignedGreaterThan, d - 1)
        };
        let cond = self.b.ins().icmp_imm(cc, a, 0);
        let shifted = self.b.ins().iadd_imm(a, adj);
        let t = self.b.ins().select(cond, shifted, a);
        self.b.ins().sdiv_imm(t, d)
    }

    fn bound(&mut self, b: &Bound, lower: bool) -> Value {
        let mut acc: Option<Value> = None;
        for t in &b.terms {
            let e = self.affine(&t.expr);
            let v = self.div_const(e, t.div, !lower);
            acc = Some(match acc {
                None => v,
                Some(a) if lower => self.b.ins().smax(a, v),
                Some(a) => self.b.ins().smin(a, v),
            });
        }
        // `Function::check` guarantees at least one term.
        acc.unwrap_or_else(|| self.iconst(0))
    }

    /// Emits `if !ok { record error; return code }` and continues in a
    /// fresh block.
    fn guard(&mut self, ok: Value, code: i64, array: Option<ArrayId>, point: &[Value]) {
        let fail = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(fail);
        self.b.ins().brif(ok, cont, &[], fail, &[]);
        self.b.seal_block(fail);
        self.b.seal_block(cont);
        self.b.switch_to_block(fail);
        let c = self.iconst(code);
        self.b.ins().store(MemFlags::trusted(), c, self.err_ptr, 0);
        let a = self.iconst(array.map_or(-1, |a| a as i64));
        self.b.ins().store(MemFlags::trusted(), a, self.err_ptr, 8);
        let n = self.iconst(point.len() as i64);
        self.b.ins().store(MemFlags::trusted(), n, self.err_ptr, 16);
        for (k, &p) in point.iter().enumerate() {
            self.b
                .ins()
                .store(MemFlags::trusted(), p, self.err_ptr, (24 + 8 * k) as i32);
        }
        self.b.ins().return_(&[c]);
        self.b.switch_to_block(cont);
    }

    /// Address of `array[index]`, with the run-time check that the access
    /// contract requires (data-dependent indices, or every access in
    /// checked mode).
    fn address(&mut self, array: ArrayId, index: &[Expr]) -> Result<Value, JitError> {
        let mut xs = Vec::with_capacity(index.len());
        for e in index {
            xs.push(self.expr(e)?);
        }
        let data_dependent = !index.iter().all(Expr::is_affine);
        if data_dependent || self.check_all {
            let mut ok = self.b.ins().iconst(types::I8, 1);
            for (k, &x) in xs.iter().enumerate() {
                let lo = self.arrays[array].lo[k];
                let hi = self.arrays[array].hi[k];
                let c1 = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, x, lo);
                let c2 = self.b.ins().icmp(IntCC::SignedLessThan, x, hi);
                let c = self.b.ins().band(c1, c2);
                ok = self.b.ins().band(ok, c);
            }
            let code = if data_dependent {
                status::OUT_OF_BOUNDS
            } else {
                status::CONTRACT
            };
            self.guard(ok, code, Some(array), &xs);
            if data_dependent {
                if let Some(dom) = &self.f.arrays[array].domain {
                    // Inside the box, the constraints cannot overflow
                    // (proved before the run by `analysis`).
                    let mut any = self.b.ins().iconst(types::I8, 0);
                    for piece in &dom.pieces {
                        let mut all = self.b.ins().iconst(types::I8, 1);
                        for c in piece {
                            let mut v = self.iconst(c.aff.constant);
                            for (k, &co) in c.aff.idx.iter().enumerate() {
                                if co != 0 {
                                    let t = self.b.ins().imul_imm(xs[k], co);
                                    v = self.b.ins().iadd(v, t);
                                }
                            }
                            for (p, &co) in c.aff.par.iter().enumerate() {
                                if co != 0 {
                                    let t = self.b.ins().imul_imm(self.params[p], co);
                                    v = self.b.ins().iadd(v, t);
                                }
                            }
                            let cc = match c.kind {
                                ConstraintKind::Ge => IntCC::SignedGreaterThanOrEqual,
                                ConstraintKind::Eq => IntCC::Equal,
                            };
                            let sat = self.b.ins().icmp_imm(cc, v, 0);
                            all = self.b.ins().band(all, sat);
                        }
                        any = self.b.ins().bor(any, all);
                    }
                    self.guard(any, status::OUT_OF_BOUNDS, Some(array), &xs);
                }
            }
        }
        let info = &self.arrays[array];
        let (base, size_log2) = (info.base, info.size_log2);
        let los = info.lo.clone();
        let strides = info.stride.clone();
        let mut off: Option<Value> = None;
        for (k, &x) in xs.iter().enumerate() {
            let rel = self.b.ins().isub(x, los[k]);
            let t = if k + 1 == xs.len() {
                rel
            } else {
                self.b.ins().imul(rel, strides[k])
            };
            off = Some(match off {
                None => t,
                Some(o) => self.b.ins().iadd(o, t),
            });
        }
        let off = match off {
            Some(o) => o,
            None => self.iconst(0),
        };
        let bytes = if size_log2 == 0 {
            off
        } else {
            self.b.ins().ishl_imm(off, i64::from(size_log2))
        };
        let bytes = if self.ptr_ty == types::I64 {
            bytes
        } else {
            self.b.ins().ireduce(self.ptr_ty, bytes)
        };
        Ok(self.b.ins().iadd(base, bytes))
    }

    fn stmts(&mut self, body: &[Stmt]) -> Result<(), JitError> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), JitError> {
        match s {
            Stmt::For {
                var,
                lower,
                upper,
                body,
            } => {
                let lo = self.bound(lower, true);
                let hi = self.bound(upper, false);
                let v = self.loop_vars[var.0];
                self.b.def_var(v, lo);
                // Main loop over blocks of UNROLL iterations while
                // `i <= hi − (UNROLL − 1)`, then the remainder loop. Scalar
                // copies run the iterations in order; the vector form is
                // used only where iterations commute (`vectorizable`).
                if !self.check_all && vectorizable(self.f, *var, body) {
                    let hi_main = self.b.ins().iadd_imm(hi, -(UNROLL - 1));
                    self.rotated_loop(*var, hi_main, body, UNROLL / LANES, LANES)?;
                } else if is_innermost(body) && size(body) <= UNROLL_MAX_SIZE {
                    let hi_main = self.b.ins().iadd_imm(hi, -(UNROLL - 1));
                    self.rotated_loop(*var, hi_main, body, UNROLL, 1)?;
                }
                self.rotated_loop(*var, hi, body, 1, 1)?;
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
                self.stmts(then)?;
                self.b.ins().jump(join, &[]);
                self.b.switch_to_block(eb);
                self.stmts(els)?;
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
            }
            Stmt::Accumulate {
                array,
                index,
                op,
                value,
            } => {
                let addr = self.address(*array, index)?;
                let elem = self.arrays[*array].elem;
                let ty = self.f.arrays[*array].ty;
                let old = self.b.ins().load(elem, mem(*array), addr, 0);
                let v = match op {
                    // Lazy like the binary operators: the value is only
                    // needed when the accumulator does not decide.
                    ReduceOp::And | ReduceOp::Or => {
                        let is_and = *op == ReduceOp::And;
                        self.lazy_logic(old, value, is_and)?
                    }
                    _ => {
                        let v = self.expr(value)?;
                        self.arith(acc_bin_op(*op), ty, old, v)
                    }
                };
                self.b.ins().store(mem(*array), v, addr, 0);
            }
            Stmt::SetLocal { local, value } => {
                let v = self.expr(value)?;
                self.b.def_var(self.locals[*local], v);
            }
            Stmt::Block(b) => self.stmts(b)?,
        }
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
        let body_blk = self.b.create_block();
        let exit = self.b.create_block();
        let start = self.b.use_var(v);
        let enter = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, start, hi);
        self.b.ins().brif(enter, body_blk, &[], exit, &[]);
        self.b.switch_to_block(body_blk);
        if lanes > 1 {
            self.vec_var = Some(var);
        }
        for u in 0..copies {
            self.offsets[var.0] = u * lanes;
            if lanes == 1 {
                self.stmts(body)?;
            } else {
                self.vstmts(body)?;
            }
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

    /// The vector form (lanes `v + offset`, `v + offset + 1`) of a body
    /// accepted by [`vectorizable`].
    fn vstmts(&mut self, body: &[Stmt]) -> Result<(), JitError> {
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

    /// `a && rhs` / `a || rhs` with `rhs` evaluated only when needed.
    fn lazy_logic(&mut self, a: Value, rhs: &Expr, is_and: bool) -> Result<Value, JitError> {
        if speculable(rhs) {
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
        let r = self.expr(rhs)?;
        self.b.ins().jump(join, &[BlockArg::from(r)]);
        self.b.seal_block(join);
        self.b.switch_to_block(join);
        Ok(res)
    }

    /// Binary arithmetic and comparisons on two evaluated operands of type
    /// `ty` (not `And`/`Or`, which are lazy).
    fn arith(&mut self, op: BinOp, ty: ElemType, a: Value, b: Value) -> Value {
        use BinOp::*;
        match ty {
            ElemType::Float => match op {
                Add => self.b.ins().fadd(a, b),
                Sub => self.b.ins().fsub(a, b),
                Mul => self.b.ins().fmul(a, b),
                Div => self.b.ins().fdiv(a, b),
                Rem => self.call(rt::FMOD, &[a, b]),
                Min => self.b.ins().fmin(a, b),
                Max => self.b.ins().fmax(a, b),
                Eq => self.b.ins().fcmp(FloatCC::Equal, a, b),
                Ne => self.b.ins().fcmp(FloatCC::NotEqual, a, b),
                Lt => self.b.ins().fcmp(FloatCC::LessThan, a, b),
                Le => self.b.ins().fcmp(FloatCC::LessThanOrEqual, a, b),
                Gt => self.b.ins().fcmp(FloatCC::GreaterThan, a, b),
                Ge => self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, a, b),
                // Rejected by `Function::check` for floats.
                FloorDiv | CeilDiv | Mod | And | Or => a,
            },
            ElemType::Int => match op {
                Add => {
                    let (v, of) = self.b.ins().sadd_overflow(a, b);
                    self.no_overflow(of);
                    v
                }
                Sub => {
                    let (v, of) = self.b.ins().ssub_overflow(a, b);
                    self.no_overflow(of);
                    v
                }
                Mul => {
                    let (v, of) = self.b.ins().smul_overflow(a, b);
                    self.no_overflow(of);
                    v
                }
                Div | Rem | FloorDiv | CeilDiv | Mod => self.int_div(op, a, b),
                Min => self.b.ins().smin(a, b),
                Max => self.b.ins().smax(a, b),
                Eq => self.b.ins().icmp(IntCC::Equal, a, b),
                Ne => self.b.ins().icmp(IntCC::NotEqual, a, b),
                Lt => self.b.ins().icmp(IntCC::SignedLessThan, a, b),
                Le => self.b.ins().icmp(IntCC::SignedLessThanOrEqual, a, b),
                Gt => self.b.ins().icmp(IntCC::SignedGreaterThan, a, b),
                Ge => self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, a, b),
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

    fn call(&mut self, which: usize, args: &[Value]) -> Value {
        let inst = self.b.ins().call(self.rt[which], args);
        self.b.inst_results(inst)[0]
    }

    /// The type of an expression of the checked function (no validation:
    /// `Function::check` passed; only the spine of the expression is
    /// visited).
    fn expr_type(&self, e: &Expr) -> ElemType {
        match e {
            Expr::Int(_) | Expr::Aff(_) => ElemType::Int,
            Expr::Float(_) => ElemType::Float,
            Expr::Bool(_) => ElemType::Bool,
            Expr::Local(l) => self.f.locals[*l].ty,
            Expr::Load { array, .. } => self.f.arrays[*array].ty,
            Expr::Unary(_, a) | Expr::Select(_, a, _) => self.expr_type(a),
            Expr::Binary(op, a, _) => match op {
                BinOp::Eq
                | BinOp::Ne
                | BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::And
                | BinOp::Or => ElemType::Bool,
                _ => self.expr_type(a),
            },
            Expr::Cast(c, _) => match c {
                Cast::IntToFloat | Cast::BoolToFloat => ElemType::Float,
                Cast::FloatToInt | Cast::BoolToInt => ElemType::Int,
            },
            Expr::Math(_, args) => args.first().map_or(ElemType::Float, |a| self.expr_type(a)),
            Expr::Random { dist, .. } => dist.result(),
            Expr::Categorical(_) => ElemType::Int,
            Expr::External { .. } => ElemType::Float,
        }
    }

    /// The key of a counter-based draw (`runtime::rng::Stream::new`): the
    /// site packs `(variable << 16) | ordinal`.
    fn rng_key(&mut self, seed: &Expr, site: u32, point: &[Value]) -> Result<Value, JitError> {
        let s = self.expr(seed)?;
        let var_v = self.iconst(i64::from(site >> 16));
        let ord_v = self.iconst(i64::from(site & 0xffff));
        let n_v = self.iconst(point.len() as i64);
        let mut key = self.call(rt::KEY_PREFIX, &[s, var_v, ord_v, n_v]);
        for &pv in point {
            key = self.call(rt::MIX, &[key, pv]);
        }
        Ok(key)
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
    fn categorical(&mut self, c: &CategoricalDraw) -> Result<Value, JitError> {
        let point = c
            .point
            .iter()
            .map(|p| self.expr(p))
            .collect::<Result<Vec<_>, _>>()?;
        let key = self.rng_key(&c.seed, c.site, &point)?;
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

    /// A call of external `index` through `runtime::rt_external`: the
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
            .icmp_imm(IntCC::NotEqual, st, runtime::EXTERNAL_MISSING);
        self.guard(not_missing, status::EXTERNAL_MISSING, Some(index), &[]);
        let not_panicked = self.b.ins().icmp_imm(IntCC::Equal, st, 0);
        self.guard(not_panicked, status::EXTERNAL_PANICKED, Some(index), &[]);
        Ok(self.b.ins().stack_load(types::F64, out, 0))
    }

    fn expr(&mut self, e: &Expr) -> Result<Value, JitError> {
        Ok(match e {
            Expr::Int(v) => self.iconst(*v),
            Expr::Float(v) => self.b.ins().f64const(*v),
            Expr::Bool(v) => self.b.ins().iconst(types::I8, i64::from(*v)),
            Expr::Aff(a) => self.affine(a),
            Expr::Local(l) => self.b.use_var(self.locals[*l]),
            Expr::Load { array, index } => {
                let addr = self.address(*array, index)?;
                let elem = self.arrays[*array].elem;
                self.b.ins().load(elem, mem(*array), addr, 0)
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
                self.arith(*op, ty, av, bv)
            }
            Expr::Select(c, a, b) => {
                let cv = self.expr(c)?;
                if speculable(a) && speculable(b) {
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
                    let av = self.expr(a)?;
                    self.b.ins().jump(join, &[BlockArg::from(av)]);
                    self.b.switch_to_block(eb);
                    let bv = self.expr(b)?;
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
            Expr::Math(fun, args) => {
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
            Expr::Categorical(c) => self.categorical(c)?,
            Expr::External { index, args } => self.external(*index, args)?,
            Expr::Random {
                dist,
                args,
                seed,
                site,
                point,
            } => {
                let pvs = point
                    .iter()
                    .map(|p| self.expr(p))
                    .collect::<Result<Vec<_>, _>>()?;
                let key = self.rng_key(seed, *site, &pvs)?;
                let mut vs = vec![key];
                for a in args {
                    vs.push(self.expr(a)?);
                }
                match dist {
                    Distribution::Uniform => self.call(rt::UNIFORM, &vs),
                    Distribution::Normal => self.call(rt::NORMAL, &vs),
                    Distribution::Gamma => self.call(rt::GAMMA, &vs),
                    Distribution::Beta => self.call(rt::BETA, &vs),
                    Distribution::Bernoulli | Distribution::Poisson => {
                        let which = if *dist == Distribution::Bernoulli {
                            rt::BERNOULLI
                        } else {
                            rt::POISSON
                        };
                        let r = self.call(which, &vs);
                        let ok = self.b.ins().icmp_imm(IntCC::SignedGreaterThanOrEqual, r, 0);
                        self.guard(ok, status::BAD_RNG_ARG, None, &[]);
                        if *dist == Distribution::Bernoulli {
                            self.b.ins().ireduce(types::I8, r)
                        } else {
                            r
                        }
                    }
                }
            }
        })
    }
}

/// Unroll factor of innermost loops (a multiple of `LANES`).
const UNROLL: i64 = 4;
/// Lanes of the vector form (`f64x2`).
const LANES: i64 = 2;

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
fn vectorizable(f: &Function, var: LoopVar, body: &[Stmt]) -> bool {
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
/// Innermost loops whose body has more nodes than this are not unrolled.
const UNROLL_MAX_SIZE: usize = 48;

/// True when no `For` occurs in `body`.
fn is_innermost(body: &[Stmt]) -> bool {
    body.iter().all(|s| match s {
        Stmt::For { .. } => false,
        Stmt::If { then, els, .. } => is_innermost(then) && is_innermost(els),
        Stmt::Block(b) => is_innermost(b),
        _ => true,
    })
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
            Expr::Random {
                args, seed, point, ..
            } => args.iter().chain(point).map(e).sum::<usize>() + e(seed),
            Expr::External { args, .. } => args.iter().map(e).sum(),
            // Contains two loops: never worth unrolling around.
            Expr::Categorical(_) => UNROLL_MAX_SIZE + 1,
            _ => 0,
        }
    }
    body.iter()
        .map(|s| {
            1 + match s {
                Stmt::For { body, .. } | Stmt::Block(body) => size(body),
                Stmt::If { cond, then, els } => e(cond) + size(then) + size(els),
                Stmt::Assign { index, value, .. } | Stmt::Accumulate { index, value, .. } => {
                    index.iter().map(e).sum::<usize>() + e(value)
                }
                Stmt::SetLocal { value, .. } => e(value),
            }
        })
        .sum()
}

/// True when evaluating `e` can neither fail nor touch memory, so it may
/// be evaluated eagerly even where the program would not evaluate it
/// (lazy `Select`, `And`, `Or`).
pub(crate) fn speculable(e: &Expr) -> bool {
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => true,
        Expr::Load { .. } | Expr::Random { .. } | Expr::Categorical(_) | Expr::External { .. } => {
            false
        }
        Expr::Unary(UnOp::Not, a) => speculable(a),
        // Int negation may overflow; float negation cannot, but the type is
        // not known here: be conservative.
        Expr::Unary(UnOp::Neg, _) => false,
        Expr::Binary(op, a, b) => {
            let safe_op = matches!(
                op,
                BinOp::Min
                    | BinOp::Max
                    | BinOp::Eq
                    | BinOp::Ne
                    | BinOp::Lt
                    | BinOp::Le
                    | BinOp::Gt
                    | BinOp::Ge
                    | BinOp::And
                    | BinOp::Or
            );
            safe_op && speculable(a) && speculable(b)
        }
        Expr::Select(c, a, b) => speculable(c) && speculable(a) && speculable(b),
        Expr::Cast(_, a) => speculable(a),
        Expr::Math(f, args) => *f != MathFn::Abs && args.iter().all(speculable),
    }
}
