//! The loop-program rewrite of a storage mapping: every access
//! `X[e_1, ..., e_n]` of a mapped array becomes `X[σ(e)]`, where a dropped
//! dimension's index disappears, a modulo dimension's index `e` becomes
//! `e mod m` (the floor remainder, `BinOp::Mod`) and a kept index stays.
//!
//! Must not know about: schedules, the analysis that chose the mapping.
//!
//! The walk is total over the statement and expression forms it knows;
//! any other form (one added to the loop AST later) makes it give up
//! (`None`), and the caller then maps nothing: an access it did not see
//! would otherwise keep the old layout.

use super::DimStorage;
use crate::codegen::loop_ast::{
    Accumulation, ArrayId, BinOp, CategoricalDraw, Expr, ForLoop, RandomDraw, Selection, Stmt,
};
use std::collections::HashMap;

/// The mapping of each mapped array.
pub(super) type Plan = HashMap<ArrayId, Vec<DimStorage>>;

/// `e mod m` (`m >= 1`), folded when `e` is a constant.
fn modulo(e: Expr, m: i64) -> Expr {
    match e {
        Expr::Int(c) => Expr::Int(c.rem_euclid(m)),
        Expr::Aff(a) if a.terms.iter().all(|&(_, c)| c == 0) => Expr::Int(a.constant.rem_euclid(m)),
        e => Expr::bin(BinOp::Mod, e, Expr::Int(m)),
    }
}

/// The index `σ(index)` of an access to `array` (rewritten inside first);
/// `None` when the arity does not match the mapping.
fn index(plan: &Plan, array: ArrayId, index: Vec<Expr>) -> Option<Vec<Expr>> {
    let index = exprs(plan, index)?;
    let Some(dims) = plan.get(&array) else {
        return Some(index);
    };
    if dims.len() != index.len() {
        return None;
    }
    let mut out = Vec::with_capacity(index.len());
    for (e, d) in index.into_iter().zip(dims) {
        match d {
            DimStorage::Keep => out.push(e),
            DimStorage::Drop => {}
            DimStorage::Modulo(m) => out.push(modulo(e, *m)),
        }
    }
    Some(out)
}

/// Every statement of `body` with its accesses mapped; `None` on a form
/// the walk does not know.
pub(super) fn stmts(plan: &Plan, body: Vec<Stmt>) -> Option<Vec<Stmt>> {
    body.into_iter().map(|s| stmt(plan, s)).collect()
}

/// One statement, mapped (see [`stmts`]).
// The wildcard arm is unreachable today; it is the conservative answer
// for a statement form added to the loop AST later.
#[allow(unreachable_patterns)]
fn stmt(plan: &Plan, s: Stmt) -> Option<Stmt> {
    Some(match s {
        Stmt::For(l) => Stmt::For(ForLoop {
            body: stmts(plan, l.body)?,
            ..l
        }),
        Stmt::If { cond, then, els } => Stmt::If {
            cond: expr(plan, cond)?,
            then: stmts(plan, then)?,
            els: stmts(plan, els)?,
        },
        Stmt::Assign {
            array,
            index: ix,
            value,
        } => Stmt::Assign {
            array,
            index: index(plan, array, ix)?,
            value: expr(plan, value)?,
        },
        Stmt::Accumulate(a) => Stmt::Accumulate(Accumulation {
            index: index(plan, a.array, a.index)?,
            value: expr(plan, a.value)?,
            ..a
        }),
        Stmt::SetLocal { local, value } => Stmt::SetLocal {
            local,
            value: expr(plan, value)?,
        },
        Stmt::Block(b) => Stmt::Block(stmts(plan, b)?),
        _ => return None,
    })
}

fn exprs(plan: &Plan, es: Vec<Expr>) -> Option<Vec<Expr>> {
    es.into_iter().map(|e| expr(plan, e)).collect()
}

/// A boxed sub-expression, mapped in its box.
#[allow(clippy::boxed_local)] // the box is reused, not reallocated
fn boxed(plan: &Plan, mut e: Box<Expr>) -> Option<Box<Expr>> {
    let inner = std::mem::replace(&mut *e, Expr::Bool(false));
    *e = expr(plan, inner)?;
    Some(e)
}

/// One expression, every load mapped (see [`stmts`]).
// As in `stmt`: the wildcard arm is for forms added later.
#[allow(unreachable_patterns)]
fn expr(plan: &Plan, e: Expr) -> Option<Expr> {
    Some(match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Aff(_) | Expr::Local(_) => e,
        Expr::Load { array, index: ix } => Expr::Load {
            array,
            index: index(plan, array, ix)?,
        },
        Expr::Unary(op, a) => Expr::Unary(op, boxed(plan, a)?),
        Expr::Binary(op, a, b) => Expr::Binary(op, boxed(plan, a)?, boxed(plan, b)?),
        Expr::Select(c, a, b) => Expr::Select(boxed(plan, c)?, boxed(plan, a)?, boxed(plan, b)?),
        Expr::Cast(c, a) => Expr::Cast(c, boxed(plan, a)?),
        Expr::Math(f, args) => Expr::Math(f, exprs(plan, args)?),
        Expr::Random(d) => {
            let d = *d;
            Expr::Random(Box::new(RandomDraw {
                args: exprs(plan, d.args)?,
                seed: expr(plan, d.seed)?,
                point: exprs(plan, d.point)?,
                ..d
            }))
        }
        Expr::Categorical(c) => {
            let c = *c;
            Expr::Categorical(Box::new(CategoricalDraw {
                cond: expr(plan, c.cond)?,
                weight: expr(plan, c.weight)?,
                seed: expr(plan, c.seed)?,
                point: exprs(plan, c.point)?,
                ..c
            }))
        }
        Expr::External { index: k, args } => Expr::External {
            index: k,
            args: exprs(plan, args)?,
        },
        Expr::Selection(s) => {
            let s = *s;
            Expr::Selection(Box::new(Selection {
                value: expr(plan, s.value)?,
                lower: expr(plan, s.lower)?,
                upper: expr(plan, s.upper)?,
                ..s
            }))
        }
        _ => return None,
    })
}
