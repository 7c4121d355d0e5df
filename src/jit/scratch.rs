//! Scratch memory of compiled code (issue 16): the buffers into which a
//! categorical draw stores its weights, so that each weight is evaluated
//! once (`lower::draws`).
//!
//! Owns: [`Scratch`], the memory of one invocation of a compiled function
//! (one per run of the main function, one per chunk of a parallel loop:
//! concurrent chunks never share a buffer), the layout of the table of
//! views that compiled code keeps in its frame ([`VIEW_BYTES`]), and the
//! host routine [`rt_scratch_grow`] that compiled code calls when a view
//! is too small.
//!
//! Must not know about: the loop AST, Cranelift.
//!
//! # Protocol
//! Buffer `d` serves the categorical draws at nesting depth `d` (a draw in
//! the weight or condition of a draw at depth `d` is at depth `d + 1`), so
//! the buffers of the draws that are in progress at one time are
//! distinct, and the draws that follow one another at one depth reuse one
//! buffer. Compiled code keeps, in a stack slot of its frame, one view
//! `[base, capacity]` (two `i64`s, [`VIEW_BYTES`]) per depth, `[0, 0]` at
//! entry; before storing element `n` of a buffer whose view has capacity
//! `n` it calls [`rt_scratch_grow`], which grows buffer `d` (keeping its
//! elements), writes the new view and returns the base. A buffer only
//! grows during an invocation, and only through that call, so a view is
//! valid until the next call for the same depth and until the
//! invocation's `Scratch` is dropped, after the compiled function
//! returned.

/// Bytes of one view `[base: *mut f64, capacity: i64]` in the frame's
/// table.
pub(crate) const VIEW_BYTES: i32 = 16;

/// The smallest capacity of a buffer that grows (in `f64`s).
const MIN_CAPACITY: usize = 64;

/// The scratch buffers of one invocation of a compiled function, by depth
/// (see the module comment). Empty until compiled code asks for memory.
#[derive(Debug, Default)]
pub struct Scratch {
    bufs: Vec<Vec<f64>>,
}

impl Scratch {
    /// Grows buffer `depth` to at least `need` elements, keeping its
    /// contents (its length is its capacity as views report it): at least
    /// doubled, at least [`MIN_CAPACITY`]. The base and length; `None`
    /// when the memory cannot be allocated.
    pub(crate) fn grow(&mut self, depth: usize, need: usize) -> Option<(*mut f64, usize)> {
        if self.bufs.len() <= depth {
            self.bufs.resize_with(depth + 1, Vec::new);
        }
        let buf = &mut self.bufs[depth];
        if buf.len() < need {
            let len = need.max(buf.len().saturating_mul(2)).max(MIN_CAPACITY);
            // `try_reserve_exact` reports a capacity overflow or an
            // allocation failure instead of panicking or aborting.
            buf.try_reserve_exact(len - buf.len()).ok()?;
            buf.resize(len, 0.0);
        }
        Some((buf.as_mut_ptr(), buf.len()))
    }
}

/// Grows buffer `depth` of `scratch` to at least `need` elements
/// ([`Scratch::grow`]), writes its view `[base, capacity]` to `view` and
/// returns the base; returns 0 (null) and writes nothing when an argument
/// is invalid or the memory cannot be allocated (compiled code turns it
/// into a run error).
///
/// # Safety
/// `scratch` is null or points to the live `Scratch` of the invocation,
/// not otherwise borrowed during the call; `view` points to two writable,
/// aligned `i64`s. Only compiled code calls it (`Lower::categorical`),
/// with the scratch pointer it received and the address of its frame's
/// view for `depth`.
pub(crate) unsafe extern "C" fn rt_scratch_grow(
    scratch: *mut Scratch,
    view: *mut i64,
    depth: i64,
    need: i64,
) -> i64 {
    let (Ok(depth), Ok(need)) = (usize::try_from(depth), usize::try_from(need)) else {
        return 0;
    };
    if scratch.is_null() || view.is_null() {
        return 0;
    }
    // SAFETY: compiled code passes the pointer it received from
    // `JitFunction::run_threads` or `parallel::Chunks::run`, each of which
    // owns a `Scratch` for the whole call and does not touch it meanwhile;
    // compiled code is single-threaded within one invocation, so this is
    // the only reference to it.
    let scratch = unsafe { &mut *scratch };
    let Some((base, len)) = scratch.grow(depth, need) else {
        return 0;
    };
    let Ok(cap) = i64::try_from(len) else {
        return 0;
    };
    // SAFETY: `view` is the frame's two-`i64` view for `depth` (see the
    // function's contract).
    unsafe {
        view.write(base as i64);
        view.add(1).write(cap);
    }
    base as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growing_keeps_the_contents_and_at_least_doubles() {
        let mut s = Scratch::default();
        let len = |s: &Scratch, d: usize| s.bufs.get(d).map_or(0, Vec::len);
        let (p, n) = s.grow(1, 3).expect("small");
        assert_eq!((n, len(&s, 0), len(&s, 1)), (MIN_CAPACITY, 0, MIN_CAPACITY));
        for i in 0..n {
            // SAFETY: `p` is the base of `n` elements of buffer 1.
            unsafe { p.add(i).write(i as f64) };
        }
        let (q, m) = s.grow(1, n + 1).expect("small");
        assert!(m >= 2 * n);
        for i in 0..n {
            // SAFETY: the buffer grew to `m > n` elements, keeping them.
            assert_eq!(unsafe { q.add(i).read() }, i as f64);
        }
        // Asking for no more than the length keeps the buffer.
        assert_eq!(s.grow(1, 5), Some((q, m)));
    }

    #[test]
    fn impossible_sizes_and_bad_arguments_are_reported() {
        let mut s = Scratch::default();
        assert_eq!(s.grow(0, usize::MAX), None);
        let mut view = [7i64, 7];
        // SAFETY: a live scratch and a two-element view.
        let r = unsafe { rt_scratch_grow(&mut s, view.as_mut_ptr(), 0, -1) };
        assert_eq!((r, view), (0, [7, 7]));
        // SAFETY: as above.
        let r = unsafe { rt_scratch_grow(std::ptr::null_mut(), view.as_mut_ptr(), 0, 1) };
        assert_eq!((r, view), (0, [7, 7]));
        // SAFETY: as above.
        let r = unsafe { rt_scratch_grow(&mut s, view.as_mut_ptr(), 2, 10) };
        assert_ne!(r, 0);
        assert_eq!(view, [r, MIN_CAPACITY as i64]);
        assert_eq!(s.bufs[2].len(), MIN_CAPACITY);
    }
}
