//! Polyhedral scanning: from a checked IR system and a legal sequential
//! schedule of its augmented program (`crate::deps`) to a loop program
//! ([`loop_ast::Function`]) that executes every statement instance once, in
//! schedule order.
//!
//! Construction:
//! 1. *Statements → IR.* The IR is walked and every polyhedral statement
//!    is looked up by its key (`deps::StmtKey`: the IR construct's
//!    `ir::StmtId`, the enclosing statement and the convex piece), so that
//!    it is matched to what it computes: an equation statement assigns `X[x] = rhs(x)`; an
//!    accumulation statement performs `acc[proj(y)] op= body(y)`; a
//!    completion statement does nothing (the reader loads the accumulator).
//!    A reduction that is the whole right-hand side of `X` accumulates into
//!    `X` itself; an embedded one into an accumulator array over the box of
//!    its enclosing statement's domain. Accumulators are set to the
//!    operator's identity at function entry. An accumulation statement is
//!    restricted to `{ y ∈ D_acc : proj(y) ∈ D_comp }` (its completion's
//!    domain), so every body point contributes exactly once.
//! 2. *Time space.* With schedule rows `θ(i) = T·i + C·p + c` (full column
//!    rank in `i`), `d` linearly independent rows `M` are chosen, with
//!    `|det M|` minimal (a unimodular choice when there is one; see
//!    `choose_rows`). Then `i = M⁻¹(t_sel − C_sel·p − c_sel)`: iterator
//!    `i_j = n_j·(t, p, 1) / den_j` with integer `n_j` and `den_j ≥ 1`
//!    (`den_j = 1` for all `j` when `M` is unimodular). With `L` the lcm of
//!    the `den_j`, the statement's domain maps to the rational polyhedron
//!    `{ (t, p) : L·D(i(t)) ≥ 0, L·t_r = L·θ_r(i(t)) for the other rows }`
//!    (constraints multiplied through by `L`: exact). An integer `t` in it
//!    is the time of an instance iff every `den_j` divides `n_j·(t, p, 1)`
//!    (`M·i = v` has an integer solution iff `M⁻¹v` is integral): that
//!    integrality guard is generated around the statement as one-trip
//!    loops `for i_j in ceil(n_j·t/den_j) ..= floor(n_j·t/den_j)`, which
//!    run once exactly when the division is exact and bind `i_j` as a loop
//!    variable, so that array indices stay affine (`loop_ast`'s access
//!    contract). Time points that fail the guard are visited and skipped
//!    (up to a factor `|det M|` more iterations than instances); for a
//!    statement alone in its loops the one-trip loop is placed as soon as
//!    the time dimensions it depends on are bound, so the inner loops are
//!    skipped there (there is no strided `for` in the loop AST).
//! 3. *Loops.* Projections `P_k` of every time-space domain onto
//!    `(t_0..t_{k-1}, p)` by Fourier–Motzkin (rational: a superset of the
//!    integer projection; redundant rows pruned exactly with the LP solver).
//!    Dimension `k` is generated from the constraints of `P_{k+1}` that
//!    mention `t_k`: a dimension that is constant for every statement of a
//!    group splits the group by value (ascending); otherwise one loop with
//!    bounds `max ceil(e/d)` / `min floor(e/d)` — exactly the statement's
//!    own bounds when it is alone, else the bound terms proven valid for
//!    every statement of the group (solver), and the remaining terms become
//!    guards (`d·t_k ≥ e`) of that statement. Since every constraint of
//!    `P_n` (the exact time-space domain) involves some `t_k` (or only the
//!    parameters: guarded at the top), exactly the domain's points execute.
//!
//! Must not know about: Cranelift, the source syntax, the interpreter.
//!
//! Files: `matcher` (statements → IR actions), `domains` (IR domains as
//! rows, symbolic bounding boxes), `time_space` (a statement's domain in
//! time space), `loops` (loop generation), `separate` (CLooG-style
//! separation), `expr` (IR expressions at a statement instance). The
//! integer-row algebra (rational shadows, bounds, determinants, inverses)
//! is `crate::poly`'s (`poly::bounds`).

use super::loop_ast::{
    self, Accumulation, Affine, Bound, Cast, Dim, Expr, ForLoop, Function, LoopVar, MathFn,
    RandomDraw, Stmt, Sym,
};
use crate::deps::{self, DepsError, StmtKey, SystemSchedule};
use crate::ir::{
    self, BinOp, Builtin, ElemType, ExprKind, ReduceOp, ReductionId, StmtId, UnOp, VarId,
};
use crate::poly::solver::{self, System};
use crate::poly::{bounds, boxes};
use crate::poly::{Aff, Constraint, ConstraintKind, MultiAff, PolyError, Set};
use crate::vocab::Scalar;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

mod domains;
mod expr;
mod loops;
mod matcher;
mod separate;
mod time_space;

use domains::{box_is_domain, constraint_row, dim_upper, domain_polys, symbolic_box};
use loops::{Gen, Level, Names};
use matcher::{Action, Matcher};
use time_space::time_space;

/// Errors of scanning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScanError {
    #[error("{0}")]
    Deps(#[from] DepsError),
    #[error("polyhedral library: {0}")]
    Poly(#[from] PolyError),
    #[error("no system named `{0}`")]
    NoSystem(String),
    /// A program feature or schedule the scanner does not handle.
    #[error("{0}")]
    Unsupported(String),
    #[error("integer overflow while generating loops")]
    Overflow,
    /// The statements of the schedule do not match the IR (a bug).
    #[error("internal error: {0}")]
    Internal(String),
}

type R<T> = Result<T, ScanError>;

fn ov<T>(x: Option<T>) -> R<T> {
    x.ok_or(ScanError::Overflow)
}

/// An overflow of a `poly` arithmetic primitive (no solver involved) as
/// the scanner's own overflow.
fn arith(e: PolyError) -> ScanError {
    match e {
        PolyError::Overflow => ScanError::Overflow,
        e => ScanError::Poly(e),
    }
}

/// The loop program of system `index` of `program` under `sched` (the
/// schedule computed by `deps::schedule_program` for that system).
pub fn scan_system(program: &ir::Program, index: usize, sched: &SystemSchedule) -> R<Function> {
    let sys = program
        .systems
        .get(index)
        .ok_or_else(|| ScanError::NoSystem(index.to_string()))?;
    let n_par = sys.params.len();
    let stmts = &sched.deps.stmts;
    let mut arrays = Vec::new();
    let ctx = domain_polys(&sys.context, n_par);
    for v in &sys.vars {
        let pieces = domain_polys(&v.domain, n_par);
        let dims = symbolic_box(&pieces, v.domain.n_dims(), n_par, &v.name)?;
        // A domain that is its box needs no check beyond the box's.
        let domain = if box_is_domain(&pieces, &dims, &ctx, n_par)? {
            None
        } else {
            Some(v.domain.clone())
        };
        arrays.push(loop_ast::Array {
            name: v.name.clone(),
            ty: v.ty,
            dims,
            domain,
        });
    }
    let index = deps::index_by_key(stmts)
        .ok_or_else(|| ScanError::Internal("two statements with the same key".into()))?;
    let mut m = Matcher {
        sys,
        stmts,
        n_par,
        index,
        actions: vec![None; stmts.len()],
        extra: vec![Vec::new(); stmts.len()],
        acc_of: HashMap::new(),
        arrays,
        inits: Vec::new(),
        counter: 0,
        has_random: false,
    };
    let mut eq_stmts = Vec::new();
    for eq in &sys.equations {
        let mut mine = Vec::new();
        for pi in 0..sys.vars[eq.var].domain.pieces().len() {
            mine.push(m.stmt(StmtId::Equation(eq.var), None, pi)?);
        }
        eq_stmts.push((eq, mine));
    }
    for (eq, mine) in eq_stmts {
        for s in mine {
            m.actions[s] = Some(if matches!(eq.expr.kind, ExprKind::Reduce(_)) {
                Action::Nothing
            } else {
                Action::Assign {
                    var: eq.var,
                    expr: &eq.expr,
                }
            });
            m.walk(&eq.expr, s, &[Vec::new()], true)?;
        }
    }
    let mut g = Gen {
        n_par,
        loop_vars: Names::default(),
        acc_of: &m.acc_of,
        sys,
        bound_iters: HashMap::new(),
    };
    let mut body = Vec::new();
    // Accumulator initialization.
    for a in &m.inits {
        let dims = m.arrays[a.array].dims.clone();
        let value = identity(a.op, a.ty);
        let mut vars = Vec::new();
        for (k, _) in dims.iter().enumerate() {
            vars.push(g.fresh(format!("z{k}")));
        }
        let mut s = Stmt::Assign {
            array: a.array,
            index: vars.iter().map(|&v| Expr::var(v)).collect(),
            value,
        };
        for (k, d) in dims.iter().enumerate().rev() {
            s = Stmt::For(ForLoop {
                var: vars[k],
                parallel: false,
                lower: Bound::aff(d.lower.clone()),
                upper: Bound::aff(dim_upper(d)?),
                body: vec![s],
            });
        }
        body.push(s);
    }
    // Time-space domains.
    let rows = &sched.schedule.rows;
    let n_t = sched.schedule.n_dims();
    let mut ts = Vec::new();
    for (k, st) in stmts.iter().enumerate() {
        let Some(action) = m.actions[k].clone() else {
            return Err(ScanError::Internal(format!(
                "statement {} unmatched",
                st.name
            )));
        };
        if matches!(action, Action::Nothing) {
            continue;
        }
        let mut dom = st.domain.clone();
        let d = st.dims.len();
        for c in &m.extra[k] {
            let r = constraint_row(&c.row, n_par, d, n_par);
            match c.kind {
                ConstraintKind::Eq => dom.eqs.push(r),
                ConstraintKind::Ineq => dom.ineqs.push(r),
            }
        }
        ts.push(time_space(
            k, &st.name, d, n_par, n_t, &rows[k], &dom, action,
        )?);
    }
    let mut guards = Vec::new();
    let all: Vec<usize> = (0..ts.len()).collect();
    // Parameter-only guards.
    let ctx = domain_polys(&sys.context, n_par);
    for t in &mut ts {
        let p0 = &t.proj[0];
        let mut gs = Vec::new();
        for r in p0.ineqs.iter() {
            let implied = match ctx.first() {
                Some(c) => {
                    let mut s = c.clone();
                    let mut neg: Vec<i64> = r[n_t..].iter().map(|x| -x).collect();
                    neg[n_par] -= 1;
                    s.add_ineq(neg);
                    solver::integer_sample(&s)?.is_none()
                }
                None => true,
            };
            if !implied {
                gs.push((r.clone(), false));
            }
        }
        for r in p0.eqs.iter() {
            gs.push((r.clone(), true));
        }
        t.param_guards = gs;
    }
    guards.resize(ts.len(), Vec::new());
    for (k, t) in ts.iter().enumerate() {
        for (r, eq) in &t.param_guards {
            guards[k].push(g.row_cond(r, n_t, &[], *eq)?);
        }
    }
    let mut lv = Level {
        ts: &ts,
        n_t,
        tvals: Vec::new(),
        guards,
    };
    body.extend(g.level(&mut lv, &all, 0)?);
    let mut params = sys.params.clone();
    let mut context = sys.context.clone();
    if m.has_random {
        // The seed is one more parameter (named apart from the system's),
        // unconstrained in the context and the array domains.
        let seed = (0..)
            .map(|k| {
                if k == 0 {
                    "seed".to_string()
                } else {
                    format!("seed{k}")
                }
            })
            .find(|n| !params.contains(n))
            .unwrap_or_default();
        params.push(seed);
        context = context.align_params(&params)?;
        for a in &mut m.arrays {
            if let Some(d) = &mut a.domain {
                *d = d.align_params(&params)?;
            }
        }
    }
    Ok(Function {
        name: sys.name.clone(),
        params,
        context,
        arrays: m.arrays,
        loop_vars: g.loop_vars.list,
        locals: Vec::new(),
        externals: program
            .externals
            .iter()
            .map(|e| loop_ast::ExternalDecl {
                name: e.name.clone(),
                arity: e.arity,
            })
            .collect(),
        body,
    })
}

/// The identity of `op` at `ty` as a constant expression.
fn identity(op: ReduceOp, ty: ElemType) -> Expr {
    match op.identity(ty) {
        Scalar::Int(v) => Expr::Int(v),
        Scalar::Float(v) => Expr::Float(v),
        Scalar::Bool(v) => Expr::Bool(v),
    }
}
