//! The calling convention of compiled functions and their link to the host.
//!
//! Owns: the native signature ([`NativeFn`]), the error slot's layout
//! ([`ERR_SLOT_LEN`]) and the status codes ([`status`]) that compiled code
//! returns; the host routines compiled code calls (their JIT symbols,
//! addresses and Cranelift signatures, [`host_decls`]) and their indices
//! ([`rt`]). Both sides of the boundary read these: `lower` emits code
//! against them, `jit::mod` calls the code and decodes its status.
//!
//! Must not know about: the loop AST's forms, a particular run.

use super::{host_fns, scratch};
use crate::codegen::loop_ast::MAX_DIMS;
use crate::runtime::rng::abi as rng;
use cranelift_codegen::ir::{types, Type};

/// The native signature of a compiled function:
/// `(buffers: *const *mut u8, params: *const i64, err: *mut i64, table:
/// *const ExternalTable, scratch: *mut Scratch) -> i64`.
/// `buffers[a]` is the base of array `a`'s dense buffer, `params[p]` the
/// value of parameter `p`; `err` points to [`ERR_SLOT_LEN`] `i64`s;
/// `table` is the run's externals and parallel context (null in an
/// outlined function); `scratch` is the invocation's own scratch memory
/// (`super::scratch`). The result is a [`status`] code; on failure the
/// error slot holds `[code, array, n, point_0, ..., point_{n-1}]`.
pub type NativeFn = extern "C" fn(
    *const *mut u8,
    *const i64,
    *mut i64,
    *const host_fns::ExternalTable,
    *mut scratch::Scratch,
) -> i64;

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
    /// A chunk of a parallel loop panicked or could not be started (a
    /// bug: the outlined code does not panic).
    pub const PARALLEL_FAILED: i64 = 9;
    /// The scratch memory for a categorical draw's weights could not be
    /// allocated (the error slot names the array and the point).
    pub const NO_SCRATCH: i64 = 10;
    /// A selection value outside its range (the error slot's "array" is
    /// the index of the selection's target in
    /// `Function::selection_targets`, the point is `[value, lower,
    /// upper]`).
    pub const SELECTION: i64 = 11;
}

/// A host routine: its JIT symbol, address and signature.
pub(super) struct RtDecl {
    pub name: &'static str,
    pub addr: *const u8,
    pub params: &'static [Type],
    pub ret: Type,
}

/// `name = address, (params) -> ret;` per routine, in order.
macro_rules! decls {
    ($($name:literal = $addr:expr, ($($p:ident),*) -> $ret:ident;)*) => {
        vec![$(RtDecl { name: $name, addr: $addr as *const u8, params: &[$($p),*], ret: $ret }),*]
    };
}

/// The host routines, in the order of the indices of [`rt`]. Pointers are
/// `I64` (the host check in `lower::compile_inner` requires 64-bit
/// pointers); `alphac_rt_external` takes `(table, index, args, n, out)`,
/// `alphac_rt_parallel` `(table, loop, lo, hi, vars, err)`,
/// `alphac_rt_scratch_grow` `(scratch, view, depth, need)`.
pub(super) fn host_decls() -> Vec<RtDecl> {
    use types::{F64, I64};
    decls! {
        "alphac_rt_exp" = host_fns::rt_exp, (F64) -> F64;
        "alphac_rt_log" = host_fns::rt_log, (F64) -> F64;
        "alphac_rt_pow" = host_fns::rt_pow, (F64, F64) -> F64;
        "alphac_rt_fmod" = host_fns::rt_fmod, (F64, F64) -> F64;
        "alphac_rt_lgamma" = host_fns::rt_lgamma, (F64) -> F64;
        "alphac_rng_normal" = rng::alphac_rng_normal, (I64, F64, F64) -> F64;
        "alphac_rng_gamma" = rng::alphac_rng_gamma, (I64, F64, F64) -> F64;
        "alphac_rng_beta" = rng::alphac_rng_beta, (I64, F64, F64) -> F64;
        "alphac_rng_bernoulli" = rng::alphac_rng_bernoulli, (I64, F64) -> I64;
        "alphac_rng_poisson" = rng::alphac_rng_poisson, (I64, F64) -> I64;
        "alphac_rng_key_prefix" = rng::alphac_rng_key_prefix, (I64, I64, I64, I64) -> I64;
        "alphac_rt_external" = host_fns::rt_external, (I64, I64, I64, I64, I64) -> I64;
        "alphac_rt_parallel" = super::parallel::rt_parallel, (I64, I64, I64, I64, I64, I64) -> I64;
        "alphac_rt_scratch_grow" = scratch::rt_scratch_grow, (I64, I64, I64, I64) -> I64;
    }
}

/// Indices into [`host_decls`].
pub(super) mod rt {
    pub const EXP: usize = 0;
    pub const LOG: usize = 1;
    pub const POW: usize = 2;
    pub const FMOD: usize = 3;
    pub const LGAMMA: usize = 4;
    // (absorbing a coordinate into a key and `uniform()` are inlined:
    // `lower::draws`)
    pub const NORMAL: usize = 5;
    pub const GAMMA: usize = 6;
    pub const BETA: usize = 7;
    pub const BERNOULLI: usize = 8;
    pub const POISSON: usize = 9;
    pub const KEY_PREFIX: usize = 10;
    pub const EXTERNAL: usize = 11;
    pub const PARALLEL: usize = 12;
    pub const SCRATCH_GROW: usize = 13;
}
