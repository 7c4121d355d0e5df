//! Lowering of a checked loop-AST [`Function`] to Cranelift IR and native
//! code in a `JITModule`.
//!
//! Owns: the driver ([`compile`], [`disassemble`]: module, signature,
//! prologue, Cranelift's compilation of the main function — of its parts
//! when a large body is split between top-level statements (`parts`), the
//! entry function calling them in order — and of each outlined parallel
//! loop on all cores (rayon, one function per task; each from its own IR,
//! then defined in order, so the code does not depend on the threads),
//! finalization), the lowering state ([`Lower`]) and its
//! primitives: affine expressions, loop bounds, run-time guards (the error
//! slot) and array addresses. The forms are lowered in the submodules:
//! statements and loop shape (`loops`), the vector form of innermost loops
//! (`vector`), expressions (`expr`), draws (`draws`), the rows of
//! data-selected loads checked once per loop (`rows`), the loads a
//! loop body computes once before its first iteration (`invariant`) and
//! the loads computed earlier in an iteration that are reused while no
//! store touches their arrays, and the range checks that passed
//! (`avail`). The calling convention and the
//! host routines' symbols are `super::abi`'s.
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
//! performs the scalar operations, so results are bit-identical (a running
//! `min`/`max` keeps partial extrema per lane, combined after the loop).
//! `min` and `max` of floats are the IEEE `minimum` and `maximum`: with a
//! constant operand one x86 instruction, otherwise Cranelift's `fmin`,
//! `fmax` (`expr::float_extremum`); a loop whose `min`/`max` has an
//! operand computed before it is copied, the copy with one instruction
//! run when that operand is neither a NaN nor a zero
//! (`loops::versioned_loop`).

mod avail;
mod covered;
mod draws;
mod expr;
mod invariant;
mod loops;
mod machine;
mod parts;
mod rows;
mod vector;

use super::abi::{host_decls, status};
use super::JitError;
use crate::codegen::loop_ast::{
    for_each_stmt_expr, Affine, ArrayId, Bound, Expr, ForLoop, Function, LocalId, LoopVar, Stmt,
    Sym, Writes,
};
use crate::poly::ConstraintKind;
use crate::vocab::ElemType;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, AliasRegion, FuncRef, InstBuilder, MemFlags, StackSlot, Type, UserFuncName,
    Value,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module};
use std::collections::{HashMap, HashSet};

/// A finalized native function and the module that owns its code.
pub(crate) struct Compiled {
    /// Owns the executable memory `code` points into; must stay alive as
    /// long as `code` may be called, freed on drop (`None` only then).
    module: Option<JITModule>,
    pub(crate) code: *const u8,
    /// Per parallel loop of [`parallel_loops`] (same order), the outlined
    /// function running its iterations `[lo, hi]` (see [`compile`]).
    pub(crate) outlined: Vec<*const u8>,
    /// The number of functions the body was compiled as (`parts::split`;
    /// 1 when the entry function runs it all).
    pub(crate) parts: usize,
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

/// A loop the JIT runs on several threads: an outermost loop marked
/// parallel (`ForLoop::parallel`; marks nested in it run sequentially),
/// with the loop and `Bind` variables enclosing it, outermost first.
#[derive(Debug, Clone)]
pub(crate) struct ParallelLoop {
    pub(crate) lp: ForLoop,
    pub(crate) enclosing: Vec<LoopVar>,
}

/// The parallel loops of `f` in pre-order (their index is the `id` the
/// compiled code passes to `host_fns::rt_parallel`).
pub(crate) fn parallel_loops(f: &Function) -> Vec<ParallelLoop> {
    parallel_loop_refs(f)
        .into_iter()
        .map(|(l, enclosing)| ParallelLoop {
            lp: l.clone(),
            enclosing,
        })
        .collect()
}

/// [`parallel_loops`] by reference.
fn parallel_loop_refs(f: &Function) -> Vec<(&ForLoop, Vec<LoopVar>)> {
    fn walk<'a>(
        body: &'a [Stmt],
        enclosing: &mut Vec<LoopVar>,
        out: &mut Vec<(&'a ForLoop, Vec<LoopVar>)>,
    ) {
        for s in body {
            match s {
                Stmt::For(l) if l.parallel => out.push((l, enclosing.clone())),
                Stmt::For(l) => {
                    enclosing.push(l.var);
                    walk(&l.body, enclosing, out);
                    enclosing.pop();
                }
                Stmt::Bind(b) => {
                    enclosing.push(b.var);
                    walk(&b.body, enclosing, out);
                    enclosing.pop();
                }
                Stmt::If { then, els, .. } => {
                    walk(then, enclosing, out);
                    walk(els, enclosing, out);
                }
                Stmt::Block(b) => walk(b, enclosing, out),
                Stmt::Assign { .. } | Stmt::Accumulate(_) | Stmt::SetLocal { .. } => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(&f.body, &mut Vec::new(), &mut out);
    out
}

/// Compiles a checked function (the caller ran `Function::check`).
/// `check_all`: bounds-check every access, affine ones included.
///
/// Each parallel loop `k` of [`parallel_loops`] becomes, besides a call
/// of `host_fns::rt_parallel(table, k, lo, hi, vars, err)` in the main
/// function (when `lo <= hi`; `vars` holds the enclosing variables'
/// values), an outlined function of the same signature [`NativeFn`]
/// whose parameter array is the function's parameters, then the
/// enclosing variables' values, then `lo'` and `hi'`: it binds the
/// enclosing variables and runs the loop over
/// `[max(lower, lo'), min(upper, hi')]` (its own bounds evaluated again:
/// it never leaves the range the loop would run), sequentially, with the
/// locals starting at zero (the proof of the mark says no iteration reads
/// a local it has not written). It is the same code the loop would be in
/// the main function, so the run-time analysis of the whole function
/// (`jit::analysis`) covers its accesses, for the enclosing values the
/// main function passes.
///
/// [`NativeFn`]: super::abi::NativeFn
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
    // Cranelift's IR verifier was a third of the JIT's time (8% of
    // `alphac run` on CoxPH): it checks our lowering, so it runs in debug
    // builds (the test suite, CI) and when a listing is asked for (tests
    // of the code's shape), not in release builds.
    let verify = if cfg!(debug_assertions) || disasm {
        "true"
    } else {
        "false"
    };
    flags.set("enable_verifier", verify).map_err(cl_err)?;
    let isa_builder =
        cranelift_native::builder().map_err(|m| JitError::UnsupportedHost(m.to_string()))?;
    let isa = isa_builder
        .finish(settings::Flags::new(flags))
        .map_err(cl_err)?;
    let mut jb = JITBuilder::with_isa(isa.clone(), default_libcall_names());
    let decls = host_decls();
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
    // `NativeFn`: buffers, params, err, table, scratch.
    for _ in 0..5 {
        sig.params.push(AbiParam::new(ptr_ty));
    }
    sig.returns.push(AbiParam::new(types::I64));
    let t = crate::timing::phase("Cranelift IR");
    let par = parallel_loop_refs(f);
    let ids: HashMap<*const ForLoop, i64> = par
        .iter()
        .enumerate()
        .map(|(k, (l, _))| (*l as *const ForLoop, k as i64))
        .collect();
    let mut listing = None;
    // A listing shows the whole body in one function.
    let parts = if disasm {
        std::iter::once(0..f.body.len()).collect()
    } else {
        let outlined: HashSet<*const ForLoop> = ids.keys().copied().collect();
        parts::split(&f.body, &outlined)
    };
    // The entry function, then the parts (when there are several), then
    // one function per parallel loop.
    let counts = crate::jit::analysis::Counts::of(f).mask(f.arrays.len(), !check_all);
    let mut roles = vec![Role::Entry];
    if parts.len() > 1 {
        roles.extend(parts.iter().cloned().map(Role::Part));
    }
    roles.extend((0..par.len()).map(Role::Outlined));
    let mut fids = Vec::with_capacity(roles.len());
    for (n, role) in roles.iter().enumerate() {
        let name = match role {
            Role::Entry => format!("alphac_{}", f.name),
            Role::Part(_) => format!("alphac_{}_part{n}", f.name),
            Role::Outlined(k) => format!("alphac_{}_par{k}", f.name),
        };
        fids.push(
            module
                .declare_function(&name, Linkage::Local, &sig)
                .map_err(cl_err)?,
        );
    }
    let part_ids: Vec<FuncId> = roles
        .iter()
        .zip(&fids)
        .filter(|(r, _)| matches!(r, Role::Part(_)))
        .map(|(_, &id)| id)
        .collect();
    let mut funcs: Vec<(FuncId, Context)> = Vec::new();
    for (role, &fid) in roles.iter().zip(&fids) {
        let mut ctx = module.make_context();
        ctx.func.signature = sig.clone();
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
            if matches!(role, Role::Entry) && !part_ids.is_empty() {
                let refs: Vec<FuncRef> = part_ids
                    .iter()
                    .map(|&id| module.declare_func_in_func(id, b.func))
                    .collect();
                call_parts(&mut b, &refs, &args);
                b.seal_all_blocks();
                b.finalize();
                funcs.push((fid, ctx));
                continue;
            }
            let mut l = Lower {
                f,
                b,
                check_all,
                counts: &counts,
                ptr_ty,
                params: Vec::new(),
                arrays: Vec::new(),
                loop_vars: Vec::new(),
                offsets: vec![0; f.loop_vars.len()],
                vec_var: None,
                vector_copy: 0,
                vector_extrema: Vec::new(),
                locals: Vec::new(),
                err_ptr: args[2],
                ext_ptr: args[3],
                scratch_ptr: args[4],
                scratch_views: None,
                draw_depth: 0,
                rt: rt_refs,
                parallel_ids: if matches!(role, Role::Outlined(_)) {
                    HashMap::new()
                } else {
                    ids.clone()
                },
                enclosing: Vec::new(),
                key_prefixes: Vec::new(),
                invariant: Vec::new(),
                plain_floats: Vec::new(),
                rows: Vec::new(),
                resolved: Vec::new(),
                avail: avail::Avail::default(),
            };
            let body: &[Stmt] = match role {
                Role::Entry => &f.body,
                Role::Part(r) => &f.body[r.clone()],
                Role::Outlined(k) => &par[*k].0.body,
            };
            let touched = arrays_touched(body, f.arrays.len());
            l.prologue(args[0], args[1], &touched)?;
            l.hoist_key_prefixes(body)?;
            l.scratch_views(body)?;
            match role {
                Role::Entry | Role::Part(_) => l.stmts(body)?,
                Role::Outlined(k) => l.outlined(par[*k].0, &par[*k].1, args[1])?,
            }
            let ok = l.b.ins().iconst(types::I64, status::OK);
            l.b.ins().return_(&[ok]);
            l.b.seal_all_blocks();
            l.b.finalize();
        }
        ctx.set_disasm(disasm && matches!(role, Role::Entry));
        funcs.push((fid, ctx));
    }
    // Cranelift compiles the functions independently (each from its own
    // IR, with the shared ISA): on all cores (`machine`), then defined in
    // order, so that the module's layout does not depend on the threads.
    drop(t);
    let t = crate::timing::phase("machine code (all cores)");
    let codes = machine::generate_all(&mut funcs, &*isa);
    drop(t);
    for ((fid, _), code) in funcs.iter().zip(codes) {
        let code = code?;
        module
            .define_function_bytes(*fid, code.align, &code.bytes, &code.relocs)
            .map_err(cl_err)?;
    }
    if disasm {
        if let Some((_, ctx)) = funcs.first() {
            let vcode = ctx.compiled_code().and_then(|c| c.vcode.clone());
            listing = vcode.map(|l| format!("{}\n{l}", ctx.func.display()));
        }
    }
    module.finalize_definitions().map_err(cl_err)?;
    let mut codes = funcs
        .iter()
        .zip(&roles)
        .filter(|(_, r)| !matches!(r, Role::Part(_)))
        .map(|(&(id, _), _)| module.get_finalized_function(id));
    let code = codes
        .next()
        .ok_or_else(|| JitError::Codegen("no main function".into()))?;
    let outlined = codes.collect();
    Ok((
        Compiled {
            module: Some(module),
            code,
            outlined,
            parts: parts.len(),
        },
        listing,
    ))
}

/// What one compiled function runs.
enum Role {
    /// The function called by `JitFunction::run`: the whole body, or,
    /// when the body is split (`parts::split`), calls of the parts.
    Entry,
    /// Consecutive top-level statements of the body.
    Part(std::ops::Range<usize>),
    /// Parallel loop `k` of [`parallel_loops`], outlined.
    Outlined(usize),
}

/// The entry function of a split body: each part called in order with the
/// entry's arguments; a status other than OK is returned at once (the part
/// filled the error slot), so the first error stops the run as it would in
/// one function.
fn call_parts(b: &mut FunctionBuilder, parts: &[FuncRef], args: &[Value]) {
    for &p in parts {
        let call = b.ins().call(p, args);
        let st = b.inst_results(call)[0];
        let ok = b.ins().icmp_imm(IntCC::Equal, st, status::OK);
        let next = b.create_block();
        let fail = b.create_block();
        b.ins().brif(ok, next, &[], fail, &[]);
        b.switch_to_block(fail);
        b.ins().return_(&[st]);
        b.switch_to_block(next);
    }
    let ok = b.ins().iconst(types::I64, status::OK);
    b.ins().return_(&[ok]);
}

struct ArrInfo {
    base: Value,
    lo: Vec<Value>,
    /// The extent per dimension, at least 0.
    extent: Vec<Value>,
    stride: Vec<Value>,
    elem: Type,
    size_log2: u8,
}

struct Lower<'a, 'b> {
    f: &'a Function,
    b: FunctionBuilder<'b>,
    check_all: bool,
    /// Per array: a count array whose sums with a small value the fast
    /// variant does not test for overflow (`analysis::Counts`; none in
    /// the checked variant).
    counts: &'a [bool],
    ptr_ty: Type,
    params: Vec<Value>,
    /// Per array, its buffer's address and box, computed in the entry
    /// block for the arrays the function touches ([`arrays_touched`];
    /// `None` for the others: an outlined parallel loop touches few of
    /// the program's arrays).
    arrays: Vec<Option<ArrInfo>>,
    loop_vars: Vec<Variable>,
    /// Per loop variable, the offset of the unrolled copy being lowered
    /// (0 outside unrolled loops).
    offsets: Vec<i64>,
    /// The loop variable of the vector loop being lowered, if any.
    vec_var: Option<LoopVar>,
    /// The unrolled copy of the vector loop being lowered (0, 1, ...).
    vector_copy: usize,
    /// The running extrema of the vector loop being lowered: per local,
    /// one variable of partial extrema per unrolled copy
    /// (`vector::Lower::begin_extrema`).
    vector_extrema: Vec<(LocalId, Vec<Variable>)>,
    locals: Vec<Variable>,
    err_ptr: Value,
    /// The `ExternalTable` of the run.
    ext_ptr: Value,
    /// The invocation's `jit::scratch::Scratch`.
    scratch_ptr: Value,
    /// The frame's table of scratch views and its number of views (one
    /// per nesting depth of categorical draws; see `draws`), if any.
    scratch_views: Option<(StackSlot, usize)>,
    /// The nesting depth of the categorical draw being lowered: the
    /// number of draws whose condition or weight is being lowered.
    draw_depth: usize,
    rt: Vec<FuncRef>,
    /// Key prefixes computed once in the entry block: `(seed, site,
    /// point length, prefix)` for the draws whose seed mentions no loop
    /// variable (see `draws::hoist_key_prefixes`).
    key_prefixes: Vec<(Expr, u32, usize, Value)>,
    /// In the main function: the id of each parallel loop, by address
    /// (`parallel_loops`); empty in an outlined function, where every
    /// loop runs sequentially.
    parallel_ids: HashMap<*const ForLoop, i64>,
    /// The loop and `Bind` variables enclosing the statement being
    /// lowered, outermost first.
    enclosing: Vec<LoopVar>,
    /// Values of sub-expressions computed once, by address: of the
    /// categorical weights being lowered, those that do not depend on the
    /// drawn index, before the draw's first pass
    /// (`draws::invariant_parts`); of the loop bodies being lowered, the
    /// invariant loads, before the loop's first iteration (`invariant`).
    invariant: Vec<(*const Expr, Value)>,
    /// Floats known to be neither a NaN nor a zero where they are used
    /// (the invariant `min`/`max` operands of the loop copy being lowered,
    /// tested before it: `Lower::versioned_loop`).
    plain_floats: Vec<Value>,
    /// The loads of the categorical weights and loop bodies being lowered
    /// whose data-dependent indices do not change while the drawn index or
    /// the loop variable `k` runs: by the address of their index list,
    /// `k` and the variable holding the part of their offset from the
    /// other indices, checked once before the draw's first pass or the
    /// loop's first iteration (`rows`).
    rows: Vec<(*const Expr, LoopVar, Variable)>,
    /// The `?:` of the loop bodies being lowered whose condition was
    /// evaluated once before the loop (`loops`: one copy of the loop per
    /// value): by address, the branch this copy takes (`true`: then).
    resolved: Vec<(*const Expr, bool)>,
    /// The loads computed earlier in the code being emitted that are
    /// still valid here (`avail`).
    avail: avail::Avail,
}

/// Which of the `n` arrays the statements of `body` read or write.
fn arrays_touched(body: &[Stmt], n: usize) -> Vec<bool> {
    fn loads(e: &Expr, out: &mut [bool]) {
        if let Expr::Load { array, .. } = e {
            if let Some(t) = out.get_mut(*array) {
                *t = true;
            }
        }
        for c in e.children() {
            loads(c, out);
        }
    }
    let mut out = vec![false; n];
    for (array, _) in Writes::of(body).arrays {
        if let Some(t) = out.get_mut(array) {
            *t = true;
        }
    }
    for_each_stmt_expr(body, &mut |e| loads(e, &mut out));
    out
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

    fn prologue(&mut self, bufs: Value, params: Value, touched: &[bool]) -> Result<(), JitError> {
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
            if !touched.get(a).copied().unwrap_or(true) {
                self.arrays.push(None);
                continue;
            }
            let off = a
                .checked_mul(psize)
                .and_then(|o| i32::try_from(o).ok())
                .ok_or_else(too_many)?;
            let base = self
                .b
                .ins()
                .load(self.ptr_ty, MemFlags::trusted(), bufs, off);
            let mut lo = Vec::new();
            let mut ext = Vec::new();
            for d in &arr.dims {
                let l = self.affine(&d.lower);
                // A negative extent is an empty box (`JitFunction::boxes`
                // clamps it at 0 too).
                let e = self.affine(&d.extent);
                let zero = self.iconst(0);
                let e = self.b.ins().smax(e, zero);
                lo.push(l);
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
            self.arrays.push(Some(ArrInfo {
                base,
                lo,
                extent: ext,
                stride,
                elem,
                size_log2,
            }));
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
        // The terms, then the constant (when not 0): no `iconst 0` and
        // `iadd 0` for Cranelift to fold away (array boxes and indices are
        // mostly `i`, `N`, `i + 1`), so smaller functions to compile.
        let mut acc: Option<Value> = None;
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
            acc = Some(match acc {
                None => t,
                Some(a) => self.b.ins().iadd(a, t),
            });
        }
        match acc {
            None => self.iconst(k),
            Some(a) if k == 0 => a,
            Some(a) => self.b.ins().iadd_imm(a, k),
        }
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
        if let Some(a) = self.row_address(array, index)? {
            return Ok(a);
        }
        let mut xs = Vec::with_capacity(index.len());
        for e in index {
            xs.push(self.expr(e)?);
        }
        let data_dependent = !index.iter().all(Expr::is_data_free_index);
        if data_dependent || self.check_all {
            let mut ok = None;
            let mut checked = Vec::new();
            for (k, &x) in xs.iter().enumerate() {
                // An affine index of a data-dependent access is proven in
                // the box by `analysis` for the fast variant.
                if !self.check_all && index[k].is_data_free_index() {
                    continue;
                }
                // A value an earlier check proved inside the box here.
                let range = avail::box_range(self.f, array, k);
                if let Some((lo, hi)) = &range {
                    if self.avail.within(x, lo, hi) {
                        continue;
                    }
                }
                let c = self.in_box(array, k, x)?;
                ok = Some(match ok {
                    None => c,
                    Some(o) => self.b.ins().band(o, c),
                });
                checked.extend(range.map(|r| (x, r)));
            }
            let code = if data_dependent {
                status::OUT_OF_BOUNDS
            } else {
                status::CONTRACT
            };
            if let Some(ok) = ok {
                self.guard(ok, code, Some(array), &xs);
            }
            for (x, (lo, hi)) in checked {
                self.avail.ranged(x, &lo, &hi);
            }
            if data_dependent {
                if let Some(dom) = &self.f.arrays[array].domain {
                    // Inside the box, the constraints cannot overflow
                    // (proved before the run by `analysis`).
                    let mut any = self.b.ins().iconst(types::I8, 0);
                    let np = dom.n_params();
                    for piece in dom.pieces() {
                        let mut all = self.b.ins().iconst(types::I8, 1);
                        for c in piece.constraints() {
                            // `[params, dims, 1]` (shapes checked).
                            let (par, rest) = c.row.split_at(np.min(c.row.len()));
                            let (&constant, idx) = rest.split_last().unwrap_or((&0, &[]));
                            let mut v = self.iconst(constant);
                            for (k, &co) in idx.iter().enumerate() {
                                if co != 0 {
                                    let t = self.b.ins().imul_imm(xs[k], co);
                                    v = self.b.ins().iadd(v, t);
                                }
                            }
                            for (p, &co) in par.iter().enumerate() {
                                if co != 0 {
                                    let t = self.b.ins().imul_imm(self.params[p], co);
                                    v = self.b.ins().iadd(v, t);
                                }
                            }
                            let cc = match c.kind {
                                ConstraintKind::Ineq => IntCC::SignedGreaterThanOrEqual,
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
        let positions: Vec<(usize, Value)> = xs.into_iter().enumerate().collect();
        let off = self.offset_of(array, &positions, None)?;
        self.byte_address(array, off)
    }

    /// `lo_k <= x < lo_k + extent_k` for dimension `k` of `array`'s box
    /// (an `i8` flag), as the one unsigned comparison `x − lo_k <u
    /// extent_k` (wrapping subtraction; the prologue clamps the extent at
    /// 0). Exact for every `x`: let `d = x − lo_k` (mathematical). For
    /// `0 <= d` the wrapped value is `d` itself (`d < 2^64`); for `d < 0`
    /// it is `d + 2^64 >= x + 2^64 − lo_k >= 2^63 − lo_k`, which is at
    /// least `extent_k` because `lo_k + extent_k <= i64::MAX` (checked
    /// before every run, `JitFunction::boxes`).
    fn in_box(&mut self, array: ArrayId, k: usize, x: Value) -> Result<Value, JitError> {
        let info = self.info(array)?;
        let (lo, extent) = (info.lo[k], info.extent[k]);
        let d = self.b.ins().isub(x, lo);
        Ok(self.b.ins().icmp(IntCC::UnsignedLessThan, d, extent))
    }

    /// `lo <= x <= hi` (an `i8` flag) where `lo <= hi` is known, as the one
    /// unsigned comparison `x − lo <=u hi − lo` (wrapping subtractions).
    /// Exact for every `x`: `hi − lo` lies in `[0, 2^64)`, so its wrapped
    /// value is exact; for `lo <= x` so is `x − lo`; for `x < lo` the
    /// wrapped value is `x − lo + 2^64 > hi − lo`, since `x + 2^64 >= 2^63
    /// > hi`.
    pub(super) fn in_nonempty_range(&mut self, x: Value, lo: Value, hi: Value) -> Value {
        let d = self.b.ins().isub(x, lo);
        let w = self.b.ins().isub(hi, lo);
        self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, d, w)
    }

    /// The buffer and box of `array`, which the function touches (the
    /// prologue computed them for every array its statements read or
    /// write; anything else is a lowering bug, reported as such).
    fn info(&self, array: ArrayId) -> Result<&ArrInfo, JitError> {
        self.arrays
            .get(array)
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                JitError::Codegen(format!(
                    "array {array} is not among the arrays the function touches"
                ))
            })
    }

    /// `start + Σ (x_k − lo_k)·stride_k` over the positions `(k, x_k)` of
    /// an index of `array` (the last dimension's stride is 1); `0` when
    /// there are none and no `start`.
    fn offset_of(
        &mut self,
        array: ArrayId,
        xs: &[(usize, Value)],
        start: Option<Value>,
    ) -> Result<Value, JitError> {
        let info = self.info(array)?;
        let rank = info.lo.len();
        let los = info.lo.clone();
        let strides = info.stride.clone();
        let mut off = start;
        for &(k, x) in xs {
            let rel = self.b.ins().isub(x, los[k]);
            let t = if k + 1 == rank {
                rel
            } else {
                self.b.ins().imul(rel, strides[k])
            };
            off = Some(match off {
                None => t,
                Some(o) => self.b.ins().iadd(o, t),
            });
        }
        Ok(match off {
            Some(o) => o,
            None => self.iconst(0),
        })
    }

    /// The address of element offset `off` of `array`.
    fn byte_address(&mut self, array: ArrayId, off: Value) -> Result<Value, JitError> {
        let base = self.info(array)?.base;
        self.byte_address_from(array, base, off)
    }

    /// `base` plus `off` elements of `array`.
    fn byte_address_from(
        &mut self,
        array: ArrayId,
        base: Value,
        off: Value,
    ) -> Result<Value, JitError> {
        let size_log2 = self.info(array)?.size_log2;
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

    fn call(&mut self, which: usize, args: &[Value]) -> Value {
        let inst = self.b.ins().call(self.rt[which], args);
        self.b.inst_results(inst)[0]
    }
}
