//! Running the parallel loops of a compiled function on several threads
//! (issue 16): the host routine [`rt_parallel`] that compiled code calls
//! in place of a loop marked parallel, the split of the loop's range into
//! chunks, and the thread pools (rayon's).
//!
//! Must not know about: the loop AST's forms beyond the work estimate
//! (`loop_ast::parallel::work`), Cranelift.
//!
//! # Results do not depend on the number of threads
//! A loop is marked parallel only when its iterations are independent
//! (`loop_ast::parallel`: no array cell that one iteration writes is
//! touched by another, no local flows between iterations or out of the
//! loop, no external call; draws are pure functions of `(seed, site,
//! point)`). Each iteration therefore computes the same values whichever
//! thread runs it and whenever, and the memory after the loop is the same
//! as after the sequential loop, bit for bit. Errors: each chunk runs its
//! iterations in order and stops at its first error; the error reported
//! is that of the first failing chunk in iteration order, which is the
//! first error the sequential loop meets (the chunks before it ran
//! completely without error). After an error, buffer contents are
//! unspecified, as for any failed run.
//!
//! # When it pays
//! A rayon dispatch costs microseconds; a loop nested in a sequential
//! loop runs inline in the main function when one thread is asked or when
//! it has fewer than [`MIN_PARALLEL_TRIP`] iterations (a loop inside no
//! other loop always comes here: the main function has no copy of it),
//! and as one chunk on the calling
//! thread when its estimated work (`loop_ast::parallel::work`, in expression and
//! statement nodes, for the actual parameters and enclosing values) is
//! below [`MIN_PARALLEL_WORK`]. Otherwise its range is cut into
//! `min(trip, threads × CHUNKS_PER_THREAD, work / CHUNK_WORK)` (at least
//! 2) chunks of consecutive iterations, run on the pool with work
//! stealing (several chunks per thread balance triangular loops).

use super::abi::{status, NativeFn, ERR_SLOT_LEN};
use super::host_fns::ExternalTable;
use super::lower::ParallelLoop;
use super::scratch::Scratch;
use crate::codegen::loop_ast::parallel::work;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A parallel loop nested in a sequential one with fewer iterations runs
/// inline in the main function (compiled code tests the trip count before
/// calling [`rt_parallel`], so such a small loop costs nothing).
pub const MIN_PARALLEL_TRIP: i64 = 16;

/// The smallest trip count for which compiled code calls
/// [`rt_parallel`] for a loop nested in a sequential one: never with one
/// thread, 2 when tests force the split
/// ([`set_split_mode`]), else [`MIN_PARALLEL_TRIP`].
pub(crate) fn min_trip(threads: Option<usize>) -> i64 {
    if threads == Some(1) {
        i64::MAX
    } else if SPLIT_MODE.load(Ordering::Relaxed) != 0 {
        2
    } else {
        MIN_PARALLEL_TRIP
    }
}

/// 1 when a loop of less work than [`MIN_PARALLEL_WORK`] runs on the
/// calling thread (the default split mode), 0 when tests force splits
/// (see `ExternalTable::work_gated`).
pub(crate) fn work_gated() -> i64 {
    i64::from(SPLIT_MODE.load(Ordering::Relaxed) == 0)
}

/// Estimated work (nodes executed) below which a parallel loop runs on
/// the calling thread. Handing chunks to other threads costs their
/// wake-up, tens of microseconds on an idle machine and far more on a
/// loaded one: CoxPH at N = 424, K = 11 ran 5× slower on 2 threads with
/// a limit of 40,000 on a loaded 2-core machine. At 400,000, DMM-MH (D =
/// 1000, A = 100) and CoxPH (N = 2000) still ran 9% and 20% slower on 2
/// threads than on 1 on a quiet one (2026-11-26); at 2,000,000 no program
/// of the hand-written bench is slower on 2 threads, and LBP keeps most
/// of its gain (2.36 → 2.03 ms per sweep at N = 6912, 87 → 62 ms at N =
/// 110592).
pub const MIN_PARALLEL_WORK: u128 = 2_000_000;
/// Target work of one chunk.
pub const CHUNK_WORK: u128 = 100_000;
/// At most this many chunks per thread.
pub const CHUNKS_PER_THREAD: u128 = 4;

/// How loops are split when testing (see [`set_split_mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitMode {
    /// Split when it pays (the default).
    WhenItPays,
    /// Split every loop of at least two iterations into
    /// `min(trip, threads × CHUNKS_PER_THREAD)` chunks, whatever its work,
    /// and run them on the pool.
    Always,
    /// Split as `Always`, but run the chunks on the calling thread from
    /// the last to the first: a dependence between iterations of
    /// different chunks (which a correct mark excludes) then changes the
    /// results deterministically.
    AlwaysReversed,
}

static SPLIT_MODE: AtomicU8 = AtomicU8::new(0);
static SPLIT_RUNS: AtomicU64 = AtomicU64::new(0);

/// Sets how every run of the process splits its parallel loops (for
/// tests: results must not depend on it). With more than one thread
/// only; `Some(1)` threads always runs loops whole.
pub fn set_split_mode(mode: SplitMode) {
    let m = match mode {
        SplitMode::WhenItPays => 0,
        SplitMode::Always => 1,
        SplitMode::AlwaysReversed => 2,
    };
    SPLIT_MODE.store(m, Ordering::Relaxed);
}

/// How many executions of parallel loops were split into chunks since
/// the process started (all threads).
pub fn split_runs() -> u64 {
    SPLIT_RUNS.load(Ordering::Relaxed)
}

/// What a run's parallel loops need (built by `JitFunction::run_threads`
/// for one call of the compiled function).
pub(crate) struct ParallelRun {
    /// The parallel loops, by id (`lower::parallel_loops`).
    pub(crate) loops: Arc<[ParallelLoop]>,
    /// Their outlined functions (finalized code of the same module as the
    /// main function), by id.
    pub(crate) bodies: Vec<*const u8>,
    /// The buffers' base pointers, as the main function got them.
    pub(crate) bufs: Vec<*mut u8>,
    /// The function's parameters for the run.
    pub(crate) params: Vec<i64>,
    /// `Function::loop_vars.len()`.
    pub(crate) n_loop_vars: usize,
    /// Threads to use (`None`: rayon's global pool, all cores).
    pub(crate) threads: Option<usize>,
}

/// The pool of `n` threads (built once per `n`, kept for the process).
fn pool(n: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS.get_or_init(Default::default).lock().ok()?;
    if let Some(p) = pools.get(&n) {
        return Some(p.clone());
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .ok()?,
    );
    pools.insert(n, p.clone());
    Some(p)
}

/// The outlined function of one loop and its fixed arguments, shared by
/// the chunks.
struct Chunks<'a> {
    body: *const u8,
    bufs: &'a [*mut u8],
    /// The parameters, then the enclosing variables' values (the chunk's
    /// range is appended per chunk).
    prefix: Vec<i64>,
}

// SAFETY: `Chunks` is shared by the threads running the chunks of one
// parallel loop. `body` is finalized, immutable code; `bufs` and
// `prefix` are only read. The buffers the pointers designate are written
// concurrently by the chunks, which is free of data races because the
// loop is proven parallel (`loop_ast::parallel::is_parallel`, re-checked
// by `Function::check` before compilation): distinct iterations — hence
// distinct chunks — never touch a common cell that one of them writes,
// and no iteration touches memory outside the buffers' boxes (the
// run-time analysis or the checked variant, as for the sequential code).
unsafe impl Sync for Chunks<'_> {}

impl Chunks<'_> {
    /// Runs iterations `[lo, hi]`; the status and the error slot.
    fn run(&self, lo: i64, hi: i64) -> (i64, [i64; ERR_SLOT_LEN]) {
        let mut params = Vec::with_capacity(self.prefix.len() + 2);
        params.extend_from_slice(&self.prefix);
        params.push(lo);
        params.push(hi);
        let mut err = [0i64; ERR_SLOT_LEN];
        // The chunk's own scratch memory: chunks running at the same time
        // never share a buffer.
        let mut scratch = Scratch::default();
        // SAFETY: `body` is an outlined function of signature `NativeFn`
        // (`lower::compile`), alive while the `JitFunction` that owns its
        // module runs (this call happens inside that run). Its arguments:
        // `bufs` has one base pointer per array (the main function's);
        // `params` holds the function's parameters, the enclosing
        // variables' values and the range, as the outlined function reads
        // them; `err` has `ERR_SLOT_LEN` slots; the table is null (the body
        // calls no external function and runs its loops sequentially);
        // `scratch` lives until the call returns and nothing else touches
        // it meanwhile (`scratch::rt_scratch_grow`).
        // The accesses are those of the loop's iterations `[lo, hi]` with
        // the enclosing values the main function is at, a subset of the
        // sequential run's, which the run-time analysis covers; concurrent
        // chunks touch disjoint cells (see `impl Sync for Chunks`).
        let code = unsafe {
            let fp: NativeFn = std::mem::transmute::<*const u8, NativeFn>(self.body);
            fp(
                self.bufs.as_ptr(),
                params.as_ptr(),
                err.as_mut_ptr(),
                std::ptr::null(),
                &mut scratch,
            )
        };
        (code, err)
    }
}

/// Runs parallel loop `id` of the run over `[lo, hi]` with the enclosing
/// variables' values `vars`; the status, and the error slot of the first
/// failing chunk.
fn execute(
    run: &ParallelRun,
    id: usize,
    lo: i64,
    hi: i64,
    vars: &[i64],
) -> (i64, [i64; ERR_SLOT_LEN]) {
    let failed = (status::PARALLEL_FAILED, [0; ERR_SLOT_LEN]);
    let (Some(pl), Some(&body)) = (run.loops.get(id), run.bodies.get(id)) else {
        return failed;
    };
    let mut prefix = run.params.clone();
    prefix.extend_from_slice(vars);
    let chunks = Chunks {
        body,
        bufs: &run.bufs,
        prefix,
    };
    let threads = run
        .threads
        .unwrap_or_else(rayon::current_num_threads)
        .max(1);
    let trip = i128::from(hi) - i128::from(lo) + 1;
    if threads == 1 || trip < 2 {
        return chunks.run(lo, hi);
    }
    let mut env = vec![0i64; run.n_loop_vars];
    for (v, &x) in pl.enclosing.iter().zip(vars) {
        if let Some(slot) = env.get_mut(v.0) {
            *slot = x;
        }
    }
    let mode = SPLIT_MODE.load(Ordering::Relaxed);
    let w = work(&pl.lp, lo, hi, &mut env, &run.params);
    if w < MIN_PARALLEL_WORK && mode == 0 {
        return chunks.run(lo, hi);
    }
    let mut n = (trip as u128).min(threads as u128 * CHUNKS_PER_THREAD);
    if mode == 0 {
        n = n.min((w / CHUNK_WORK).max(2));
    }
    SPLIT_RUNS.fetch_add(1, Ordering::Relaxed);
    // `2 <= n <= trip`; chunk `c` is `[lo + ⌊trip·c/n⌋, lo + ⌊trip·(c+1)/n⌋ − 1]`,
    // inside `[lo, hi]` (so in `i64`).
    let n = n as i128;
    let at = |c: i128| (i128::from(lo) + trip * c / n) as i64;
    let go = || {
        (0..n)
            .into_par_iter()
            .map(|c| chunks.run(at(c), at(c + 1) - 1))
            .collect::<Vec<_>>()
    };
    if mode == 2 {
        let mut results: Vec<_> = (0..n)
            .rev()
            .map(|c| chunks.run(at(c), at(c + 1) - 1))
            .collect();
        results.reverse();
        return first_error(results);
    }
    let results = match run.threads {
        None => go(),
        Some(t) => match pool(t) {
            Some(p) => p.install(go),
            None => return chunks.run(lo, hi),
        },
    };
    first_error(results)
}

/// The first failing chunk's status and error slot (chunks in iteration
/// order), else `OK`.
fn first_error(results: Vec<(i64, [i64; ERR_SLOT_LEN])>) -> (i64, [i64; ERR_SLOT_LEN]) {
    results
        .into_iter()
        .find(|r| r.0 != status::OK)
        .unwrap_or((status::OK, [0; ERR_SLOT_LEN]))
}

/// The host routine compiled code calls for parallel loop `id` over
/// `[lo, hi]` (`lo <= hi`): runs its outlined function on chunks of the
/// range (see the module comment); on failure, copies the failing
/// chunk's error slot into `err` and returns its status.
///
/// # Safety
/// `table` is null or points to the live `ExternalTable` of the run;
/// `vars` points to as many initialized `i64`s as the loop has enclosing
/// variables; `err` points to `ERR_SLOT_LEN` writable `i64`s. Only JIT
/// code calls it (`Lower::parallel_call`), with the pointers it received.
pub(crate) unsafe extern "C" fn rt_parallel(
    table: *const ExternalTable,
    id: i64,
    lo: i64,
    hi: i64,
    vars: *const i64,
    err: *mut i64,
) -> i64 {
    let write_err = |e: &[i64; ERR_SLOT_LEN]| {
        // SAFETY: `err` is the caller's error slot of `ERR_SLOT_LEN`
        // `i64`s (see the function's contract).
        unsafe { std::ptr::copy_nonoverlapping(e.as_ptr(), err, ERR_SLOT_LEN) };
    };
    let mut failed = [0i64; ERR_SLOT_LEN];
    failed[0] = status::PARALLEL_FAILED;
    failed[1] = id;
    if table.is_null() {
        write_err(&failed);
        return status::PARALLEL_FAILED;
    }
    // SAFETY: JIT code passes the table pointer it received from
    // `JitFunction::run_threads`, which borrows a live `ExternalTable` for
    // the whole call.
    let table = unsafe { &*table };
    let Some(run) = table.par.as_ref() else {
        write_err(&failed);
        return status::PARALLEL_FAILED;
    };
    let Some(k) = usize::try_from(id).ok().filter(|&k| k < run.loops.len()) else {
        write_err(&failed);
        return status::PARALLEL_FAILED;
    };
    let n_vars = run.loops[k].enclosing.len();
    // SAFETY: `vars` points to the caller's stack slot holding the values
    // of the loop's `n_vars` enclosing variables (`Lower::parallel_call`).
    let vars = unsafe { std::slice::from_raw_parts(vars, n_vars) };
    // A panic must not unwind into JIT code.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        execute(run, k, lo, hi, vars)
    }));
    match outcome {
        Ok((code, e)) => {
            if code != status::OK {
                write_err(&e);
            }
            code
        }
        Err(_) => {
            write_err(&failed);
            status::PARALLEL_FAILED
        }
    }
}
