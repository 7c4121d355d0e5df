//! Cranelift's compilation of the functions of one module to machine
//! code, on all cores.
//!
//! Owns: the order in which the functions are compiled and how they are
//! shared between rayon's threads, and the bytes, alignment and
//! relocations each function hands to the module ([`MachineCode`]).
//!
//! Must not know about: the loop program, the lowering (each function
//! arrives as finished Cranelift IR), the module's layout (the caller
//! defines the functions in its own order, so the code does not depend
//! on the threads).

use super::cl_err;
use crate::jit::JitError;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::Context;
use cranelift_module::{FuncId, ModuleReloc};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The machine code of one function, for `define_function_bytes`.
pub(super) struct MachineCode {
    pub(super) bytes: Vec<u8>,
    pub(super) align: u64,
    pub(super) relocs: Vec<ModuleReloc>,
}

impl MachineCode {
    /// Compiles the IR in `ctx` (function `fid`) for `isa`; `ctx` keeps
    /// the compiled code (for a listing).
    fn generate(ctx: &mut Context, isa: &dyn TargetIsa, fid: FuncId) -> Result<Self, JitError> {
        ctx.compile(isa, &mut ControlPlane::default())
            .map_err(|e| cl_err(e.inner))?;
        let code = ctx
            .compiled_code()
            .ok_or_else(|| JitError::Codegen("Cranelift kept no code".into()))?;
        Ok(MachineCode {
            bytes: code.code_buffer().to_vec(),
            align: u64::from(code.buffer.alignment),
            relocs: code
                .buffer
                .relocs()
                .iter()
                .map(|r| ModuleReloc::from_mach_reloc(r, &ctx.func, fid))
                .collect(),
        })
    }
}

/// The machine code of every function of `funcs`, in their order,
/// compiled on all of rayon's threads, largest first.
///
/// Each thread takes the next function from one queue sorted by IR size
/// (Cranelift's time grows with it): the longest-processing-time-first
/// rule, whose last function to finish is a small one, so the threads
/// finish close together (at most 4/3 of the optimum). Rayon's own split
/// of an indexed iterator hands each thread a contiguous range, and a
/// program whose large functions are adjacent (CoxPH's three parts of
/// 1,400 to 1,500 instructions, 29 functions in all) left one thread
/// working alone at the end: 10.9 ms against 18.6 ms of compilation on
/// two threads, where 9.3 ms is the bound.
pub(super) fn generate_all(
    funcs: &mut [(FuncId, Context)],
    isa: &dyn TargetIsa,
) -> Vec<Result<MachineCode, JitError>> {
    let mut order: Vec<usize> = (0..funcs.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(funcs[k].1.func.dfg.num_insts()));
    let workers = rayon::current_num_threads().clamp(1, funcs.len().max(1));
    let slots: Vec<Mutex<Option<&mut (FuncId, Context)>>> =
        funcs.iter_mut().map(|f| Mutex::new(Some(f))).collect();
    let codes: Vec<Mutex<Option<Result<MachineCode, JitError>>>> =
        slots.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    (0..workers).into_par_iter().with_max_len(1).for_each(|_| {
        // Each index is taken once (`fetch_add`), so every slot is locked
        // by one thread only: the locks are never contended.
        while let Some(&k) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            let Ok(mut slot) = slots[k].lock() else {
                continue;
            };
            let Some((fid, ctx)) = slot.take() else {
                continue;
            };
            let code = MachineCode::generate(ctx, isa, *fid);
            if let Ok(mut c) = codes[k].lock() {
                *c = Some(code);
            }
        }
    });
    codes
        .into_iter()
        .map(|c| {
            c.into_inner().ok().flatten().unwrap_or_else(|| {
                Err(JitError::Codegen(
                    "a function was not compiled (a compiling thread panicked)".into(),
                ))
            })
        })
        .collect()
}
