//! The split of a function's top-level statements into parts, each
//! compiled as a function of its own: the entry function calls them in
//! order, so Cranelift compiles them (and the outlined parallel loops) on
//! all cores instead of one large function on one.
//!
//! A part boundary lies between two top-level statements that share no
//! local: every function starts its locals at zero, and a local's value
//! does not cross a call. A local first mentioned after the boundary is
//! zero there as in the whole function, since nothing before wrote it.
//! Parts are cut greedily once they weigh at least `target` (the weight of
//! a statement: its nodes, not counting the bodies of the parallel loops,
//! which the outlined functions compile).

use crate::codegen::loop_ast::parallel::locals_written;
use crate::codegen::loop_ast::{for_each_stmt_expr, Expr, ForLoop, LocalId, Stmt};
use std::collections::{BTreeSet, HashSet};
use std::ops::Range;

/// The control of a loop (bounds, guard, rotation, test), in nodes.
const LOOP: usize = 8;
/// Functions lighter than this (in nodes, see [`weight`]) are not split:
/// a part costs a call and its own prologue.
const MIN_SPLIT: usize = 600;
/// Number of parts a function heavier than [`MIN_SPLIT`] aims at: enough
/// for the outlined loops and the parts to balance on a few cores.
const PARTS: usize = 6;

/// The parts of `body` (consecutive ranges of its statements covering it,
/// in order); one part when the function is light or no boundary is free.
/// `parallel`: the loops compiled as outlined functions.
pub(super) fn split(body: &[Stmt], parallel: &HashSet<*const ForLoop>) -> Vec<Range<usize>> {
    let weights: Vec<usize> = body.iter().map(|s| weight(s, parallel)).collect();
    let total: usize = weights.iter().sum();
    if total < MIN_SPLIT {
        return std::iter::once(0..body.len()).collect();
    }
    let target = total / PARTS;
    let locals: Vec<BTreeSet<LocalId>> = body.iter().map(locals_of).collect();
    // `after[i]`: the locals of `body[i..]`.
    let mut after = vec![BTreeSet::new(); body.len() + 1];
    for i in (0..body.len()).rev() {
        let mut s = after[i + 1].clone();
        s.extend(locals[i].iter().copied());
        after[i] = s;
    }
    let mut parts = Vec::new();
    let (mut start, mut acc) = (0, 0);
    let mut before: BTreeSet<LocalId> = BTreeSet::new();
    for i in 0..body.len() {
        acc += weights[i];
        before.extend(locals[i].iter().copied());
        let free = before.is_disjoint(&after[i + 1]);
        if acc >= target && free && i + 1 < body.len() {
            parts.push(start..i + 1);
            start = i + 1;
            acc = 0;
        }
    }
    parts.push(start..body.len());
    parts
}

/// An estimate of the code of `s`, in expression nodes: its statement and
/// expression nodes, a loop's control as [`LOOP`] nodes, the body of an
/// innermost loop the lowering unrolls counted once per copy; a loop in
/// `parallel` is one node (its call).
fn weight(s: &Stmt, parallel: &HashSet<*const ForLoop>) -> usize {
    fn e(x: &Expr) -> usize {
        1 + x.children().into_iter().map(e).sum::<usize>()
    }
    fn stmts(body: &[Stmt], parallel: &HashSet<*const ForLoop>) -> usize {
        body.iter().map(|s| weight(s, parallel)).sum()
    }
    1 + match s {
        Stmt::For(l) if parallel.contains(&(l as *const ForLoop)) => 0,
        Stmt::For(l) => {
            let copies = if super::loops::unrolled(&l.body) {
                super::loops::UNROLL as usize + 1
            } else {
                1
            };
            LOOP + copies * stmts(&l.body, parallel)
        }
        Stmt::Block(b) => stmts(b, parallel),
        Stmt::If { cond, then, els } => e(cond) + stmts(then, parallel) + stmts(els, parallel),
        Stmt::Assign { index, value, .. } => index.iter().map(e).sum::<usize>() + e(value),
        Stmt::Accumulate(a) => a.index.iter().map(e).sum::<usize>() + e(&a.value),
        Stmt::SetLocal { value, .. } => e(value),
        Stmt::Bind(b) => e(&b.guard) + e(&b.value) + stmts(&b.body, parallel),
    }
}

/// The locals `s` reads or writes.
fn locals_of(s: &Stmt) -> BTreeSet<LocalId> {
    fn e(x: &Expr, out: &mut BTreeSet<LocalId>) {
        if let Expr::Local(l) = x {
            out.insert(*l);
        }
        x.children().into_iter().for_each(|c| e(c, out));
    }
    let mut out = BTreeSet::new();
    let body = std::slice::from_ref(s);
    locals_written(body, &mut out);
    for_each_stmt_expr(body, &mut |x| e(x, &mut out));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::loop_ast::{Affine, BinOp, Bound, LoopVar};

    /// `for v in 0..=9 { a[v] = ((local + v) + ...) }` with `n` terms:
    /// a statement of weight about `2n`, reading `local` when given.
    fn heavy(v: usize, local: Option<LocalId>, n: usize) -> Stmt {
        let mut e = local.map_or(Expr::Float(0.0), Expr::Local);
        for _ in 0..n {
            e = Expr::bin(BinOp::Add, e, Expr::var(LoopVar(v)));
        }
        Stmt::For(ForLoop {
            var: LoopVar(v),
            lower: Bound::aff(Affine::cst(0)),
            upper: Bound::aff(Affine::cst(9)),
            body: vec![Stmt::Assign {
                array: 0,
                index: vec![Expr::var(LoopVar(v))],
                value: e,
            }],
            parallel: false,
        })
    }

    fn set(local: LocalId) -> Stmt {
        Stmt::SetLocal {
            local,
            value: Expr::Float(1.0),
        }
    }

    /// The parts cover the body in order, and no local is mentioned on
    /// both sides of a boundary.
    fn check(body: &[Stmt], parts: &[Range<usize>]) {
        assert_eq!(parts.first().map(|r| r.start), Some(0));
        assert_eq!(parts.last().map(|r| r.end), Some(body.len()));
        for w in parts.windows(2) {
            assert_eq!(w[0].end, w[1].start);
            assert!(w[0].start < w[0].end);
            let before: BTreeSet<LocalId> = body[..w[0].end].iter().flat_map(locals_of).collect();
            let after: BTreeSet<LocalId> = body[w[0].end..].iter().flat_map(locals_of).collect();
            assert!(before.is_disjoint(&after), "a local crosses {w:?}");
        }
    }

    #[test]
    fn a_light_body_is_one_part() {
        let body: Vec<Stmt> = (0..4).map(|v| heavy(v, None, 10)).collect();
        assert_eq!(split(&body, &HashSet::new()), vec![0..4]);
    }

    #[test]
    fn a_heavy_body_is_split_where_no_local_crosses() {
        // Statements 0..4 share local 0 (set in 0, read in 3), 4..8 local
        // 1, 8..12 none: boundaries only at 4 and at 8..12.
        let mut body = Vec::new();
        for v in 0..12 {
            let local = match v {
                0..=3 => Some(0),
                4..=7 => Some(1),
                _ => None,
            };
            if v == 0 || v == 4 {
                body.push(set(local.unwrap_or(0)));
            }
            body.push(heavy(v, local.filter(|_| v == 3 || v == 7), 60));
        }
        let parts = split(&body, &HashSet::new());
        check(&body, &parts);
        assert!(parts.len() >= 3, "{parts:?}");
        // The first boundary comes after the read of local 0.
        assert!(parts[0].end >= 5, "{parts:?}");
    }

    #[test]
    fn a_local_read_everywhere_keeps_one_part() {
        let mut body = vec![set(0)];
        body.extend((0..12).map(|v| heavy(v, Some(0), 60)));
        assert_eq!(split(&body, &HashSet::new()), vec![0..13]);
    }

    #[test]
    fn parallel_loops_weigh_one_node() {
        let body: Vec<Stmt> = (0..12).map(|v| heavy(v, None, 60)).collect();
        assert!(split(&body, &HashSet::new()).len() > 1);
        let all: HashSet<*const ForLoop> = body
            .iter()
            .filter_map(|s| match s {
                Stmt::For(l) => Some(l as *const ForLoop),
                _ => None,
            })
            .collect();
        assert_eq!(split(&body, &all), vec![0..12]);
    }
}
