//! Two running counts read only as their sum, as one running count.
//!
//! SDR turns a leave-one-out count `C[k, i] = Σ_{j < i} [z'_j = k] +
//! Σ_{j > i} [z_j = k]` into two recurrences along `i`, forward and
//! backward, and the inlining leaves every reader with their sum:
//!
//! ```text
//! A[x] = case { P : A[σ(x)] ⊕ dA(x); Q : a0(x) }
//! B[x] = case { P : B[σ(x)] ⊖ dB(x); Q : b0(x) }
//! ... A[f] + B[f] ...
//! ```
//!
//! (`⊕`, `⊖` each `+` or `-`). When `A` and `B` are int locals with the
//! same domain and index names, their pieces match (the same piece domains
//! `P`, `Q`, recurrence pieces with the same access `σ` to themselves,
//! deltas and initial values that read neither), and every other read of
//! either is a term of such a sum at one access (affine, or indirect with
//! the same index expressions), then `T = A + B` satisfies
//!
//! `T[x] = case { P : T[σ(x)] ⊕ dA(x) ⊖ dB(x); Q : a0(x) + b0(x) }`
//!
//! and `A`'s equation becomes that, each sum `A[f] + B[f]` the read
//! `A[f]`, and `B` is left unread (the `dead` pass removes it). Exact in
//! integers by induction along `σ` (the recurrence of `A` is well founded,
//! the program being checked): at a point of `P`, `T[σ(x)] ⊕ dA ⊖ dB =
//! (A[σ(x)] ⊕ dA) + (B[σ(x)] ⊖ dB) = A[x] + B[x]`; at a point of `Q` by
//! definition. (An intermediate `T ⊕ dA` is a sum the program also forms,
//! `A[x] + B[σ(x)]`, only in another order: it overflows only where counts
//! reach 2^63.) Floats are left alone: the sum in another order is not the
//! same number.
//!
//! Why: the readers load one table instead of two (a collapsed Gibbs
//! weight reads three count tables per topic), and the one table is
//! updated in place at the new label (`+ 1`) and the old one (`- 1`) as a
//! hand-written sampler does.

use super::super::{DecisionKind, SdrError};
use super::{reads_var, Cx};
use crate::diag::Span;
use crate::ir::*;

/// Combines every pair of running counts read only as their sum (see the
/// module comment).
pub(crate) fn run(cx: &mut Cx, s: &mut System) -> Result<(), SdrError> {
    let mut changed = true;
    while changed {
        changed = false;
        for (a, b) in candidates(s) {
            let (name_a, name_b) = (s.vars[a].name.clone(), s.vars[b].name.clone());
            let res = combine(s, a, b);
            match cx.declined_on_poly(&name_a, DecisionKind::Sums, res)? {
                Some(Ok(next)) => {
                    *s = next;
                    cx.decide(
                        &name_a,
                        DecisionKind::Sums,
                        true,
                        "applied",
                        format!("{name_a} + {name_b} as one running count in {name_a}"),
                    );
                    changed = true;
                    break;
                }
                Some(Err(reason)) => {
                    cx.decide(&name_a, DecisionKind::Sums, false, &reason, name_b);
                }
                None => {}
            }
        }
    }
    Ok(())
}

/// The pairs `(A, B)` of distinct int locals read somewhere as `A[f] +
/// B[f]`, in order of first appearance.
fn candidates(s: &System) -> Vec<(VarId, VarId)> {
    let mut out = Vec::new();
    for eq in &s.equations {
        find_pairs(&eq.expr, &mut |a, b| {
            let local =
                |v: VarId| s.vars[v].kind == VarKind::Local && s.vars[v].ty == ElemType::Int;
            if a != b && local(a) && local(b) && !out.contains(&(a, b)) && !out.contains(&(b, a)) {
                out.push((a, b));
            }
        });
    }
    out
}

/// Calls `f(A, B)` for every sum `A[f] + B[f]` of two reads at one
/// access in `e`.
fn find_pairs(e: &Expr, f: &mut dyn FnMut(VarId, VarId)) {
    if let ExprKind::Binary(BinOp::Add, x, y) = &e.kind {
        if let (Some(a), Some(b)) = (read_of(x), read_of(y)) {
            if same_access(x, y) {
                f(a, b);
            }
        }
    }
    e.for_each_child(&mut |c| find_pairs(c, f));
}

/// The variable `e` reads, when `e` is a read.
fn read_of(e: &Expr) -> Option<VarId> {
    match &e.kind {
        ExprKind::Read { var, .. } | ExprKind::IndirectRead { var, .. } => Some(*var),
        _ => None,
    }
}

/// `x` and `y` are reads at the same point: the same affine access, or the
/// same index expressions (source locations aside).
fn same_access(x: &Expr, y: &Expr) -> bool {
    match (&x.kind, &y.kind) {
        (ExprKind::Read { access: f, .. }, ExprKind::Read { access: g, .. }) => f == g,
        (ExprKind::IndirectRead { indices: f, .. }, ExprKind::IndirectRead { indices: g, .. }) => {
            f.len() == g.len() && f.iter().zip(g).all(|(p, q)| unspanned(p) == unspanned(q))
        }
        _ => false,
    }
}

/// `e` with every source location cleared (for comparing shapes).
fn unspanned(e: &Expr) -> Expr {
    let mut c = e.clone();
    clear_spans(&mut c);
    c
}

fn clear_spans(e: &mut Expr) {
    e.span = Span::default();
    e.for_each_child_mut(&mut |c| clear_spans(c));
}

/// One piece of a running count's equation.
enum Piece {
    /// `X[σ(x)] op d(x)` (`op` is `+` or `-`): the read, the rows of `σ`,
    /// `op`, `d`.
    Step {
        own: Box<Expr>,
        shift: Vec<Vec<i64>>,
        op: BinOp,
        delta: Box<Expr>,
    },
    /// Any other expression (an initial value).
    Init(Expr),
}

/// The pieces of `X`'s equation `rhs`: `(domain, piece)` per `case` piece.
fn pieces(rhs: &Expr, x: VarId) -> Option<Vec<(Set, Piece)>> {
    let ExprKind::Case(ps) = &rhs.kind else {
        return None;
    };
    let mut out = Vec::with_capacity(ps.len());
    for (d, e) in ps {
        let piece = match &e.kind {
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), l, delta) => match &l.kind {
                ExprKind::Read { var, access } if *var == x => Piece::Step {
                    own: l.clone(),
                    shift: access.rows().to_vec(),
                    op: *op,
                    delta: delta.clone(),
                },
                _ => Piece::Init(e.clone()),
            },
            _ => Piece::Init(e.clone()),
        };
        out.push((d.clone(), piece));
    }
    Some(out)
}

/// `s` with `A` and `B` combined into `A`, or why not.
fn combine(s: &System, a: VarId, b: VarId) -> Result<Result<System, String>, SdrError> {
    let (Some(ea), Some(eb)) = (
        s.equations.iter().position(|e| e.var == a),
        s.equations.iter().position(|e| e.var == b),
    ) else {
        return Ok(Err("not both defined by an equation".into()));
    };
    let (eqa, eqb) = (&s.equations[ea], &s.equations[eb]);
    if eqa.indices != eqb.indices {
        return Ok(Err("different index names".into()));
    }
    if !s.vars[a].domain.is_equal(&s.vars[b].domain)? {
        return Ok(Err("different domains".into()));
    }
    let (Some(pa), Some(pb)) = (pieces(&eqa.expr, a), pieces(&eqb.expr, b)) else {
        return Ok(Err("not both defined by cases".into()));
    };
    if pa.len() != pb.len() {
        return Ok(Err("different pieces".into()));
    }
    // Every other read of A or B is a term of A[f] + B[f].
    for (k, eq) in s.equations.iter().enumerate() {
        if k != ea && k != eb && !only_in_sums(&eq.expr, a, b) {
            return Ok(Err("read other than in a sum of both".into()));
        }
    }
    let mut merged = Vec::with_capacity(pa.len());
    for (da, piece_a) in &pa {
        let mut matched = None;
        for (db, piece_b) in &pb {
            if db.renamed(da.space().clone())?.is_equal(da)? {
                matched = Some(piece_b);
                break;
            }
        }
        let Some(piece_b) = matched else {
            return Ok(Err("the pieces' domains differ".into()));
        };
        let ty = ElemType::Int;
        let span = eqa.expr.span;
        let clean = |e: &Expr| !reads_var(e, a) && !reads_var(e, b);
        let rhs = match (piece_a, piece_b) {
            (
                Piece::Step {
                    own,
                    shift: sa,
                    op: oa,
                    delta: xa,
                },
                Piece::Step {
                    shift: sb,
                    op: ob,
                    delta: xb,
                    ..
                },
            ) => {
                if sa != sb {
                    return Ok(Err("the recurrences step differently".into()));
                }
                if !clean(xa) || !clean(xb) {
                    return Ok(Err("a delta reads the counts".into()));
                }
                let first = Expr {
                    kind: ExprKind::Binary(*oa, own.clone(), xa.clone()),
                    ty,
                    span,
                };
                Expr {
                    kind: ExprKind::Binary(*ob, Box::new(first), xb.clone()),
                    ty,
                    span,
                }
            }
            (Piece::Init(ia), Piece::Init(ib)) => {
                if !clean(ia) || !clean(ib) {
                    return Ok(Err("an initial value reads the counts".into()));
                }
                match (&ia.kind, &ib.kind) {
                    (ExprKind::IntConst(0), _) => ib.clone(),
                    (_, ExprKind::IntConst(0)) => ia.clone(),
                    _ => Expr {
                        kind: ExprKind::Binary(
                            BinOp::Add,
                            Box::new(ia.clone()),
                            Box::new(ib.clone()),
                        ),
                        ty,
                        span,
                    },
                }
            }
            _ => {
                return Ok(Err(
                    "a step piece of one is an initial piece of the other".into()
                ))
            }
        };
        merged.push((da.clone(), rhs));
    }
    let mut out = s.clone();
    out.equations[ea].expr.kind = ExprKind::Case(merged);
    for (k, eq) in out.equations.iter_mut().enumerate() {
        if k != ea && k != eb {
            replace_sums(&mut eq.expr, a, b);
        }
    }
    Ok(Ok(out))
}

/// Every read of `a` or `b` in `e` is a term of a sum `a[f] + b[f]`.
fn only_in_sums(e: &Expr, a: VarId, b: VarId) -> bool {
    if let ExprKind::Binary(BinOp::Add, x, y) = &e.kind {
        if let (Some(p), Some(q)) = (read_of(x), read_of(y)) {
            if ((p, q) == (a, b) || (p, q) == (b, a)) && same_access(x, y) {
                // the indices of an indirect read are checked too
                let mut ok = true;
                x.for_each_child(&mut |c| ok &= !reads_var(c, a) && !reads_var(c, b));
                return ok;
            }
        }
    }
    if matches!(read_of(e), Some(v) if v == a || v == b) {
        return false;
    }
    let mut ok = true;
    e.for_each_child(&mut |c| ok &= only_in_sums(c, a, b));
    ok
}

/// Replaces every sum `a[f] + b[f]` (either order) of `e` by `a[f]`.
fn replace_sums(e: &mut Expr, a: VarId, b: VarId) {
    if let ExprKind::Binary(BinOp::Add, x, y) = &e.kind {
        if let (Some(p), Some(q)) = (read_of(x), read_of(y)) {
            if ((p, q) == (a, b) || (p, q) == (b, a)) && same_access(x, y) {
                let keep = if p == a { (**x).clone() } else { (**y).clone() };
                *e = keep;
                return;
            }
        }
    }
    e.for_each_child_mut(&mut |c| replace_sums(c, a, b));
}
