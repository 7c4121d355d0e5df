//! Where compile time goes: wall-clock time per phase of the pipeline
//! (`alphac emit --timings`, `alphac run --timings`), measured only when
//! asked for on the current thread.
//!
//! Owns: [`Phase`] guards, the per-thread accumulator, [`Report`].
//!
//! Must not know about: what the phases do. Every stage may open a phase;
//! phases nest (the report shows each with its depth), and a phase opened
//! again at the same depth adds to the same line (the search's several
//! schedules of one program, for instance).

use std::cell::RefCell;
use std::fmt;
use std::time::{Duration, Instant};

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

#[derive(Default)]
struct State {
    /// The names of the open phases, outermost first.
    open: Vec<&'static str>,
    /// One line per (path of names), in first-opened order.
    lines: Vec<(Vec<&'static str>, Duration, usize)>,
}

/// Start recording phases on this thread (clearing earlier records).
pub fn start() {
    STATE.with(|s| *s.borrow_mut() = Some(State::default()));
}

/// Stop recording on this thread and return what was recorded (`None`
/// when [`start`] was not called).
pub fn finish() -> Option<Report> {
    STATE.with(|s| s.borrow_mut().take()).map(|st| Report {
        lines: st
            .lines
            .into_iter()
            .map(|(path, d, n)| (path.len() - 1, path[path.len() - 1], d, n))
            .collect(),
    })
}

/// An open phase: its time is added to the report when it is dropped. Does
/// nothing (and costs one thread-local read) when recording is off.
#[must_use = "a phase is measured until the guard is dropped"]
pub struct Phase {
    started: Option<Instant>,
}

/// Open the phase `name` inside the phases open on this thread.
pub fn phase(name: &'static str) -> Phase {
    let on = STATE.with(|s| match s.borrow_mut().as_mut() {
        Some(st) => {
            st.open.push(name);
            // Lines in first-opened order: an outer phase before its inner
            // ones.
            if !st.lines.iter().any(|(p, _, _)| *p == st.open) {
                st.lines.push((st.open.clone(), Duration::ZERO, 0));
            }
            true
        }
        None => false,
    });
    Phase {
        started: on.then(Instant::now),
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        let Some(t0) = self.started else { return };
        let took = t0.elapsed();
        STATE.with(|s| {
            if let Some(st) = s.borrow_mut().as_mut() {
                let path = st.open.clone();
                st.open.pop();
                if let Some(line) = st.lines.iter_mut().find(|(p, _, _)| *p == path) {
                    line.1 += took;
                    line.2 += 1;
                }
            }
        });
    }
}

/// The recorded phases: depth, name, total time, number of times opened,
/// in the order they were first opened (a phase before the phases inside
/// it).
#[derive(Debug, Clone)]
pub struct Report {
    pub lines: Vec<(usize, &'static str, Duration, usize)>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (depth, name, took, n) in &self.lines {
            let ms = took.as_secs_f64() * 1e3;
            let times = if *n > 1 {
                format!(" ({n}×)")
            } else {
                String::new()
            };
            let width = 30 - 2 * depth.min(&10);
            writeln!(
                f,
                "{:indent$}{name:<width$} {ms:>9.2} ms{times}",
                "",
                indent = 2 * depth
            )?;
        }
        Ok(())
    }
}
