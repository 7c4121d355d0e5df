//! What a statement list writes and binds: the queries the loop-program
//! rewrites (`codegen::opt`) and the JIT's lowering ask before moving an
//! expression out of a loop.

use super::{Accumulation, ArrayId, Expr, ForLoop, LocalId, LoopVar, Stmt};

/// What statements write: arrays (with the indices of the stores and
/// accumulations) and locals.
#[derive(Debug, Default)]
pub struct Writes {
    pub arrays: Vec<(ArrayId, Vec<Expr>)>,
    pub locals: Vec<LocalId>,
}

impl Writes {
    /// The writes of `body`, at any depth.
    pub fn of(body: &[Stmt]) -> Writes {
        let mut w = Writes::default();
        w.add(body);
        w
    }

    fn add(&mut self, body: &[Stmt]) {
        for s in body {
            match s {
                Stmt::For(ForLoop { body, .. }) | Stmt::Block(body) => self.add(body),
                Stmt::Bind(b) => self.add(&b.body),
                Stmt::If { then, els, .. } => {
                    self.add(then);
                    self.add(els);
                }
                Stmt::Assign { array, index, .. }
                | Stmt::Accumulate(Accumulation { array, index, .. }) => {
                    self.arrays.push((*array, index.clone()));
                }
                Stmt::SetLocal { local, .. } => self.locals.push(*local),
            }
        }
    }

    /// Whether `array` is written.
    pub fn array(&self, array: ArrayId) -> bool {
        self.arrays.iter().any(|(a, _)| *a == array)
    }
}

/// Appends the variables bound in `body` (by `for` and `Bind`, at any
/// depth) to `out`.
pub fn bound_vars(body: &[Stmt], out: &mut Vec<LoopVar>) {
    for s in body {
        match s {
            Stmt::For(l) => {
                out.push(l.var);
                bound_vars(&l.body, out);
            }
            Stmt::If { then, els, .. } => {
                bound_vars(then, out);
                bound_vars(els, out);
            }
            Stmt::Block(b) => bound_vars(b, out),
            Stmt::Bind(b) => {
                out.push(b.var);
                bound_vars(&b.body, out);
            }
            Stmt::Assign { .. } | Stmt::Accumulate(_) | Stmt::SetLocal { .. } => {}
        }
    }
}
