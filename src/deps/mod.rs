//! Polyhedral statements, access relations and exact flow dependences of
//! an IR program, its dependence graph, and the glue to the scheduler
//! (`schedule_program`) with the textual schedule printer.
//!
//! The *augmented program* (SDR paper §3.2, §6.1): every equation
//! `X[x] = E` is a statement over (each convex piece of) `X`'s domain that
//! writes `X[x]`; every reduction `reduce(op, proj, body)` is an
//! accumulation statement over (each convex piece of) its body domain plus
//! a completion ("redirect") statement over the context where the reduction
//! is evaluated, which reads the accumulator. When the reduction is the
//! whole right-hand side of an equation, the equation statement itself is
//! the completion.
//!
//! Dependences (programs are single-assignment, so flow dependences are
//! all there is): a read `V[f(t)]` evaluated by statement `T` at `t` under
//! context constraints `C(t)` (case branches, restrictions) depends on the
//! unique writer instance `S_V[f(t)]`:
//! `{ S_V[s] -> T[t] : s = f(t), C(t), s ∈ D_S, t ∈ D_T }`, one piece per
//! writer piece and context piece; accumulation `Acc[y] -> Comp[proj(y)]`;
//! completion `Comp[x] -> T[x]` for an embedded reduction. A data-dependent
//! read `V[e_1, ..., e_n]` (some `e_k` not affine) keeps the affine
//! indices exact and leaves only the data-dependent coordinates free: its
//! access relation is `{ t -> s : s_k = e_k(t) for every affine e_k }`,
//! so it depends on every writer instance `S_V[s]` (`s ∈ D_S`, within
//! `V`'s domain) that agrees with the affine indices, whatever the data
//! indices evaluate to. Indices that exist only inside an expression
//! (`categorical`'s drawn index) are projected out rationally (a superset:
//! more dependences, never fewer).
//!
//! Owns: statement extraction, access relations, dependence pieces, the
//! statement graph and `schedule_program`. Must not know about code
//! generation or the SDR transformation itself.

use crate::ir::{self, ConstraintKind, Expr, ExprKind, Program, StmtId, VarId};
use crate::poly::solver::{self, System};
use crate::poly::{project, Aff, Constraint, PolyError, Space};
use crate::schedule::{self, Model, Schedule, ScheduleError, Scheduler};
use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;
use std::collections::HashMap;
use thiserror::Error;

/// Errors of dependence analysis and program scheduling.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DepsError {
    #[error("polyhedral library: {0}")]
    Poly(#[from] PolyError),
    /// The dependences of system `system` form a cycle through these
    /// equations (variables) that no affine schedule can respect.
    #[error("dependence cycle in system {system} through {}", .equations.join(", "))]
    Cycle {
        system: String,
        equations: Vec<String>,
    },
    #[error("scheduling: {0}")]
    Schedule(ScheduleError),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("integer overflow in dependence analysis")]
    Overflow,
}

/// What a polyhedral statement computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StmtKind {
    /// The equation of a variable (possibly also a reduction's completion).
    Equation,
    /// `acc[proj(y)] op= body(y)` of a reduction.
    Accumulate,
    /// The completion of an embedded reduction: reads the accumulator.
    Complete,
}

/// The identity of a polyhedral statement: what it computes in the IR
/// (`id`), where (`parent`: the index in `SystemDeps::stmts` of the
/// statement whose evaluation contains the reduction, `None` for an
/// equation statement; a reduction is walked once per enclosing
/// statement) and which convex piece (`piece`: of the variable's domain
/// for an equation, of the evaluation context for a completion, of the
/// body domain for an accumulation). Unique among a system's statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StmtKey {
    pub id: StmtId,
    pub parent: Option<usize>,
    pub piece: usize,
}

impl StmtKey {
    /// The key of piece `piece` of what `id` computes inside `parent`.
    fn new(id: StmtId, parent: Option<usize>, piece: usize) -> StmtKey {
        StmtKey { id, parent, piece }
    }

    /// The name of this key's statement, one of `n` pieces: `base` when
    /// there is a single piece, else `base_<piece>`.
    fn name(&self, base: &str, n: usize) -> String {
        if n > 1 {
            format!("{base}_{}", self.piece)
        } else {
            base.to_string()
        }
    }
}

/// A polyhedral statement of the augmented program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolyStmt {
    pub name: String,
    /// The statement's identity (see [`StmtKey`]).
    pub key: StmtKey,
    pub kind: StmtKind,
    /// The variable whose equation this statement belongs to.
    pub var: VarId,
    /// Names of the iterators.
    pub dims: Vec<String>,
    /// Domain over `(iterators, parameters)`, the system context included.
    pub domain: System,
}

/// An access of a statement: `var[map(t)]` (reads) or the written element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    pub stmt: usize,
    pub var: VarId,
    /// One entry per dimension of `var`: the affine index function over
    /// the statement's iterators (and any expression-local indices) and the
    /// parameters (an `Aff` over that index space), or `None` for a
    /// data-dependent index of an indirect read (any value within `var`'s
    /// domain).
    pub map: Vec<Option<Aff>>,
    pub write: bool,
}

impl Access {
    /// Is every index affine (an ordinary read or a write)?
    pub fn is_affine(&self) -> bool {
        self.map.iter().all(Option::is_some)
    }
}

/// The affine index function of an index expression of an indirect read
/// (an `Index` or an int constant) over the index space `space`; `None`
/// when the index is data-dependent.
fn affine_index(e: &Expr, space: &Space) -> Result<Option<Aff>, DepsError> {
    Ok(match &e.kind {
        ExprKind::Index(a) => Some(a.clone()),
        ExprKind::IntConst(v) => Some(Aff::constant(space.clone(), *v)?),
        _ => None,
    })
}

/// The index of every statement by its key; `None` when two statements
/// share a key (a bug of the construction).
pub fn index_by_key(stmts: &[PolyStmt]) -> Option<HashMap<StmtKey, usize>> {
    let mut out = HashMap::with_capacity(stmts.len());
    for (k, st) in stmts.iter().enumerate() {
        if out.insert(st.key, k).is_some() {
            return None;
        }
    }
    Some(out)
}

/// Statements, accesses, dependences and the statement graph of a system.
#[derive(Debug, Clone)]
pub struct SystemDeps {
    pub name: String,
    pub params: Vec<String>,
    pub stmts: Vec<PolyStmt>,
    pub accesses: Vec<Access>,
    /// The scheduling model: one model statement per `stmts` entry, the
    /// dependence pieces (empty pieces dropped).
    pub model: Model,
    /// Statement graph: a node per statement (weight: its index), an edge
    /// per dependence piece (weight: the piece's index in `model.deps`).
    pub graph: DiGraph<usize, usize>,
}

impl SystemDeps {
    /// Strongly connected components of the statement graph, in
    /// topological order (sources first), as statement indices.
    pub fn sccs(&self) -> Vec<Vec<usize>> {
        let mut s: Vec<Vec<usize>> = tarjan_scc(&self.graph)
            .into_iter()
            .map(|c| {
                let mut v: Vec<usize> = c.into_iter().map(|n| self.graph[n]).collect();
                v.sort_unstable();
                v
            })
            .collect();
        s.reverse();
        s
    }
}

/// Rows over `(iterators, parameters, 1)` of a domain piece: constraints
/// in the IR's layout `[parameters (n_par), indices, constant]`, whose
/// indices are a prefix of the `n_idx` iterators (missing ones are 0).
fn piece_rows(piece: &[Constraint], n_idx: usize, n_par: usize) -> (Vec<Vec<i64>>, Vec<Vec<i64>>) {
    let mut eqs = Vec::new();
    let mut ineqs = Vec::new();
    for c in piece {
        let n = c.row.len().saturating_sub(1);
        let np = n_par.min(n);
        let idx = &c.row[np..n];
        let mut r = vec![0i64; n_idx + n_par + 1];
        r[..idx.len().min(n_idx)].copy_from_slice(&idx[..idx.len().min(n_idx)]);
        r[n_idx..n_idx + np].copy_from_slice(&c.row[..np]);
        r[n_idx + n_par] = c.row.get(n).copied().unwrap_or(0);
        match c.kind {
            ConstraintKind::Eq => eqs.push(r),
            ConstraintKind::Ineq => ineqs.push(r),
        }
    }
    (eqs, ineqs)
}

/// Context: where an expression is evaluated.
#[derive(Clone)]
struct Ctx {
    /// The evaluating statement.
    stmt: usize,
    /// Iterators of the statement.
    n_stmt: usize,
    /// Expression-local indices after them (categorical draws).
    n_ex: usize,
    /// The index space of the expression: the statement's iterators, then
    /// the locals.
    space: Space,
    /// Context pieces over `(stmt iterators, locals, params)`: constraint
    /// lists (rows in the IR's layout, see [`piece_rows`]); the context is
    /// their union.
    pieces: Vec<Vec<Constraint>>,
    /// Is the expression the whole right-hand side of the statement's
    /// equation (a top-level reduction is then completed by it)?
    top: bool,
}

struct Builder<'a> {
    sys: &'a ir::System,
    n_par: usize,
    stmts: Vec<PolyStmt>,
    accesses: Vec<Access>,
    /// Writer statements of each variable.
    writers: Vec<Vec<usize>>,
    /// Raw pieces (src, tgt, system over (s, t, p)).
    deps: Vec<(usize, usize, System)>,
    counter: Vec<usize>,
}

impl Builder<'_> {
    fn context_rows(&self) -> (Vec<Vec<i64>>, Vec<Vec<i64>>) {
        let mut eqs = Vec::new();
        let mut ineqs = Vec::new();
        for piece in self.sys.context.pieces().iter().take(1) {
            let (e, i) = piece_rows(&piece.constraints(), 0, self.n_par);
            eqs = e;
            ineqs = i;
        }
        (eqs, ineqs)
    }

    fn add_stmt(
        &mut self,
        name: String,
        key: StmtKey,
        var: VarId,
        dims: Vec<String>,
        piece: &[Constraint],
    ) -> usize {
        let d = dims.len();
        let mut dom = System::new(d + self.n_par);
        dom.add_rows(0, piece_rows(piece, d, self.n_par));
        // The context is over the parameters only: after the d indices.
        dom.add_rows(d, self.context_rows());
        let kind = match key.id {
            StmtId::Equation(_) => StmtKind::Equation,
            StmtId::Accumulate(_) => StmtKind::Accumulate,
            StmtId::Complete(_) => StmtKind::Complete,
        };
        self.stmts.push(PolyStmt {
            name,
            key,
            kind,
            var,
            dims,
            domain: dom,
        });
        self.stmts.len() - 1
    }

    /// A dependence piece `src[s] -> ctx.stmt[t]` with `s_k = f_k(t, ex)`
    /// for every affine `f_k` (`s_k` unconstrained, beyond `src`'s domain,
    /// where `f_k` is `None`: a data-dependent index) under one context
    /// piece; the local indices are projected out.
    fn add_read_dep(
        &mut self,
        src: usize,
        ctx: &Ctx,
        f: &[Option<Aff>],
        piece: &[Constraint],
    ) -> Result<(), DepsError> {
        let ds = self.stmts[src].dims.len();
        let (nt, nx, m) = (ctx.n_stmt, ctx.n_ex, self.n_par);
        let n = ds + nt + nx + m;
        let mut sys = System::new(n);
        // Context constraints over (t, ex, p) → shift by ds.
        sys.add_rows(ds, piece_rows(piece, nt + nx, m));
        if f.len() != ds {
            return Err(DepsError::Unsupported(format!(
                "access with {} indices to a statement with {ds} iterators",
                f.len()
            )));
        }
        for (k, a) in f.iter().enumerate() {
            let Some(a) = a else { continue };
            // s_k - a(t, ex, p) = 0
            let mut r = vec![0i64; n + 1];
            r[k] = 1;
            for (j, c) in a.dim_coeffs().iter().enumerate().take(nt + nx) {
                r[ds + j] = c.checked_neg().ok_or(DepsError::Overflow)?;
            }
            for (j, c) in a.param_coeffs().iter().enumerate().take(m) {
                r[ds + nt + nx + j] = c.checked_neg().ok_or(DepsError::Overflow)?;
            }
            r[n] = a.constant_term().checked_neg().ok_or(DepsError::Overflow)?;
            sys.add_eq(r);
        }
        let sys = project_out(sys, ds + nt, nx)?;
        self.deps.push((src, ctx.stmt, sys));
        Ok(())
    }

    /// The access `var[map(t)]` of `ctx.stmt` and its dependences on every
    /// writer of `var`.
    fn read(&mut self, ctx: &Ctx, var: VarId, map: Vec<Option<Aff>>) -> Result<(), DepsError> {
        for w in self.writers[var].clone() {
            for piece in &ctx.pieces {
                self.add_read_dep(w, ctx, &map, piece)?;
            }
        }
        self.accesses.push(Access {
            stmt: ctx.stmt,
            var,
            map,
            write: false,
        });
        Ok(())
    }

    fn fresh(&mut self, var: VarId) -> usize {
        self.counter[var] += 1;
        self.counter[var]
    }

    fn walk(&mut self, e: &Expr, ctx: &Ctx) -> Result<(), DepsError> {
        match &e.kind {
            ExprKind::IntConst(_)
            | ExprKind::FloatConst(_)
            | ExprKind::BoolConst(_)
            | ExprKind::Index(_) => Ok(()),
            ExprKind::Read { var, access } => {
                let map: Vec<Option<Aff>> = access.affs().into_iter().map(Some).collect();
                self.read(ctx, *var, map)
            }
            ExprKind::IndirectRead { var, indices } => {
                let map = indices
                    .iter()
                    .map(|x| affine_index(x, &ctx.space))
                    .collect::<Result<_, _>>()?;
                self.read(ctx, *var, map)?;
                let inner = Ctx {
                    top: false,
                    ..ctx.clone()
                };
                indices.iter().try_for_each(|x| self.walk(x, &inner))
            }
            ExprKind::Unary(_, a) => self.walk(
                a,
                &Ctx {
                    top: false,
                    ..ctx.clone()
                },
            ),
            ExprKind::Binary(_, a, b) => {
                let inner = Ctx {
                    top: false,
                    ..ctx.clone()
                };
                self.walk(a, &inner)?;
                self.walk(b, &inner)
            }
            ExprKind::If(c, a, b) => {
                let inner = Ctx {
                    top: false,
                    ..ctx.clone()
                };
                self.walk(c, &inner)?;
                self.walk(a, &inner)?;
                self.walk(b, &inner)
            }
            ExprKind::Case(branches) => {
                for (d, x) in branches {
                    let inner = Ctx {
                        pieces: d.cross_pieces(&ctx.pieces),
                        top: false,
                        ..ctx.clone()
                    };
                    self.walk(x, &inner)?;
                }
                Ok(())
            }
            ExprKind::Restrict(d, x) => {
                let inner = Ctx {
                    pieces: d.cross_pieces(&ctx.pieces),
                    top: false,
                    ..ctx.clone()
                };
                self.walk(x, &inner)
            }
            ExprKind::Builtin(_, args)
            | ExprKind::External(_, args)
            | ExprKind::Random(_, args, _) => {
                let inner = Ctx {
                    top: false,
                    ..ctx.clone()
                };
                args.iter().try_for_each(|x| self.walk(x, &inner))
            }
            ExprKind::Selection(x) => {
                let inner = Ctx {
                    top: false,
                    ..ctx.clone()
                };
                self.walk(&x.value, &inner)?;
                self.walk(&x.lower, &inner)?;
                self.walk(&x.upper, &inner)
            }
            ExprKind::Categorical(c) => {
                let mut dims = ctx.space.output.dims.to_vec();
                dims.push(c.index.clone());
                let inner = Ctx {
                    n_ex: ctx.n_ex + 1,
                    space: Space::set(&self.sys.params, &dims),
                    pieces: c.domain.cross_pieces(&ctx.pieces),
                    top: false,
                    ..ctx.clone()
                };
                self.walk(&c.weight, &inner)
            }
            ExprKind::Reduce(r) => self.reduce(r, ctx),
        }
    }

    fn reduce(&mut self, r: &ir::Reduction, ctx: &Ctx) -> Result<(), DepsError> {
        if ctx.n_ex > 0 {
            return Err(DepsError::Unsupported(
                "a reduction inside a categorical weight".to_string(),
            ));
        }
        let var = self.stmts[ctx.stmt].var;
        let vname = self.sys.vars[var].name.clone();
        let k = self.fresh(var);
        // Completion statements: the equation statement itself for a
        // top-level reduction, else one per context piece.
        let comps: Vec<usize> = if ctx.top {
            vec![ctx.stmt]
        } else {
            let dims = self.stmts[ctx.stmt].dims.clone();
            let mut v = Vec::new();
            for (pi, piece) in ctx.pieces.iter().enumerate() {
                let key = StmtKey::new(StmtId::Complete(r.id), Some(ctx.stmt), pi);
                let name = key.name(&format!("{vname}_red{k}"), ctx.pieces.len());
                let c = self.add_stmt(name, key, var, dims.clone(), piece);
                // The enclosing statement reads the completed value: identity.
                // (`ctx.n_ex == 0` here: `ctx.space` is the statement's.)
                let ident: Vec<Option<Aff>> = (0..ctx.n_stmt)
                    .map(|j| Some(Aff::dim(ctx.space.clone(), j)))
                    .collect();
                self.add_read_dep(c, ctx, &ident, piece)?;
                v.push(c);
            }
            v
        };
        let nb = r.dims().len();
        for (bi, bpiece) in r.body_domain.pieces().iter().enumerate() {
            let key = StmtKey::new(StmtId::Accumulate(r.id), Some(ctx.stmt), bi);
            let name = key.name(&format!("{vname}_acc{k}"), r.body_domain.pieces().len());
            let acc = self.add_stmt(name, key, var, r.dims().to_vec(), &bpiece.constraints());
            // Acc[y] -> Comp[proj(y)].
            for &c in &comps {
                // Piece over (y, x, p) with x = proj(y).
                let n = nb + self.stmts[c].dims.len() + self.n_par;
                let nc = self.stmts[c].dims.len();
                if r.proj.n_out() != nc {
                    return Err(DepsError::Unsupported(format!(
                        "reduction projection with {} results into a {nc}-dimensional context",
                        r.proj.n_out()
                    )));
                }
                let mut sys = System::new(n);
                for (j, a) in r.proj.affs().iter().enumerate() {
                    // x_j - proj_j(y) = 0
                    let mut row = vec![0i64; n + 1];
                    row[nb + j] = 1;
                    for (q, cf) in a.dim_coeffs().iter().enumerate().take(nb) {
                        row[q] = cf.checked_neg().ok_or(DepsError::Overflow)?;
                    }
                    for (q, cf) in a.param_coeffs().iter().enumerate().take(self.n_par) {
                        row[nb + nc + q] = cf.checked_neg().ok_or(DepsError::Overflow)?;
                    }
                    row[n] = a.constant_term().checked_neg().ok_or(DepsError::Overflow)?;
                    sys.add_eq(row);
                }
                self.deps.push((acc, c, sys));
            }
            let bctx = Ctx {
                stmt: acc,
                n_stmt: nb,
                n_ex: 0,
                space: Space::set(&self.sys.params, r.dims()),
                pieces: vec![Vec::new()],
                top: false,
            };
            self.walk(&r.body, &bctx)?;
        }
        Ok(())
    }
}

/// The rational projection (`poly::project::rational_shadow`: a superset
/// of the integer projection) eliminating `count` variables from `first`.
fn project_out(sys: System, first: usize, count: usize) -> Result<System, DepsError> {
    if count == 0 {
        return Ok(sys);
    }
    let n = sys.n_vars;
    let shadow =
        project::rational_shadow(sys.eqs, sys.ineqs, first, count).map_err(|e| match e {
            PolyError::Overflow => DepsError::Overflow,
            e => DepsError::Poly(e),
        })?;
    let mut s = System::new(n - count);
    s.add_rows(0, shadow);
    Ok(s)
}

/// Statements, accesses and flow dependences of system `index` of the
/// program (see the module comment for the construction).
pub fn analyze_system(program: &Program, index: usize) -> Result<SystemDeps, DepsError> {
    let sys = program
        .systems
        .get(index)
        .ok_or_else(|| DepsError::Unsupported(format!("no system {index}")))?;
    let n_par = sys.params.len();
    if sys.context.pieces().len() > 1 {
        return Err(DepsError::Unsupported(format!(
            "system {}: a non-convex parameter context",
            sys.name
        )));
    }
    let mut b = Builder {
        sys,
        n_par,
        stmts: Vec::new(),
        accesses: Vec::new(),
        writers: vec![Vec::new(); sys.vars.len()],
        deps: Vec::new(),
        counter: vec![0; sys.vars.len()],
    };
    // 1. Equation statements (one per convex piece of the variable's domain).
    let mut eq_stmts = Vec::new();
    for eq in &sys.equations {
        let v = &sys.vars[eq.var];
        let np = v.domain.pieces().len();
        let mut mine = Vec::new();
        let space = Space::set(&sys.params, &eq.indices);
        for (pi, piece) in v.domain.pieces().iter().enumerate() {
            let key = StmtKey::new(StmtId::Equation(eq.var), None, pi);
            let name = key.name(&v.name, np);
            let s = b.add_stmt(name, key, eq.var, eq.indices.clone(), &piece.constraints());
            b.writers[eq.var].push(s);
            let ident = (0..eq.indices.len())
                .map(|j| Some(Aff::dim(space.clone(), j)))
                .collect();
            b.accesses.push(Access {
                stmt: s,
                var: eq.var,
                map: ident,
                write: true,
            });
            mine.push((s, piece.clone()));
        }
        eq_stmts.push((eq, mine));
    }
    // 2. Walk every right-hand side.
    for (eq, mine) in eq_stmts {
        for (s, _piece) in mine {
            let ctx = Ctx {
                stmt: s,
                n_stmt: eq.indices.len(),
                n_ex: 0,
                space: Space::set(&sys.params, &eq.indices),
                pieces: vec![Vec::new()],
                top: true,
            };
            b.walk(&eq.expr, &ctx)?;
        }
    }
    // 3. The model, with empty pieces dropped, and the graph.
    let mut model = Model::new(n_par);
    for st in &b.stmts {
        model.add_statement(&st.name, st.dims.len(), st.domain.clone());
    }
    let mut graph = DiGraph::new();
    let nodes: Vec<_> = (0..b.stmts.len()).map(|k| graph.add_node(k)).collect();
    for (src, tgt, poly) in b.deps {
        let piece = schedule::DepPiece {
            source: src,
            target: tgt,
            poly,
        };
        let full = model.dep_with_domains(&piece).map_err(|e| match e {
            ScheduleError::Poly(p) => DepsError::Poly(p),
            other => DepsError::Schedule(other),
        })?;
        if solver::integer_sample(&full)?.is_none() {
            continue;
        }
        model.deps.push(piece);
        graph.add_edge(nodes[src], nodes[tgt], model.deps.len() - 1);
    }
    Ok(SystemDeps {
        name: sys.name.clone(),
        params: sys.params.clone(),
        stmts: b.stmts,
        accesses: b.accesses,
        model,
        graph,
    })
}

/// The schedule of one system.
#[derive(Debug, Clone)]
pub struct SystemSchedule {
    pub deps: SystemDeps,
    pub schedule: Schedule,
    pub scheduler: Scheduler,
}

/// Schedules of every system of a program.
#[derive(Debug, Clone)]
pub struct ProgramSchedule {
    pub systems: Vec<SystemSchedule>,
}

impl ProgramSchedule {
    /// Whether the scheduler spent its work budget on some system (the
    /// schedules are legal but may be less optimal).
    pub fn budget_spent(&self) -> bool {
        self.systems.iter().any(|s| s.schedule.budget_spent)
    }
}

/// Analyze and schedule every system of the program with the chosen
/// scheduler. The schedules are legal and sequential (verified by the
/// checker in `schedule`). An unschedulable dependence cycle is reported
/// with the variables (equations) whose statements are on it.
pub fn schedule_program(
    program: &Program,
    scheduler: Scheduler,
) -> Result<ProgramSchedule, DepsError> {
    let systems = (0..program.systems.len())
        .map(|k| schedule_system(program, k, scheduler))
        .collect::<Result<_, _>>()?;
    Ok(ProgramSchedule { systems })
}

/// [`schedule_program`] of `program`, reusing `previous` (a schedule of
/// `before` with the same scheduler) for every system identical to the one
/// at the same index of `before`: scheduling is deterministic, so the
/// result is the one [`schedule_program`] computes, without the work. The
/// optimizer uses it to verify its output, where systems it left alone
/// keep their schedules.
pub fn reschedule_program(
    program: &Program,
    scheduler: Scheduler,
    before: &Program,
    previous: &ProgramSchedule,
) -> Result<ProgramSchedule, DepsError> {
    let systems = (0..program.systems.len())
        .map(|k| match (before.systems.get(k), previous.systems.get(k)) {
            (Some(b), Some(s)) if *b == program.systems[k] && s.scheduler == scheduler => {
                Ok(s.clone())
            }
            _ => schedule_system(program, k, scheduler),
        })
        .collect::<Result<_, _>>()?;
    Ok(ProgramSchedule { systems })
}

/// The dependences and schedule of system `k` of `program`.
fn schedule_system(
    program: &Program,
    k: usize,
    scheduler: Scheduler,
) -> Result<SystemSchedule, DepsError> {
    let t = crate::timing::phase("dependences");
    let deps = analyze_system(program, k)?;
    drop(t);
    let sched = match schedule::schedule(&deps.model, scheduler) {
        Ok(s) => s,
        Err(ScheduleError::Cycle { statements }) => {
            let mut eqs: Vec<String> = statements
                .iter()
                .filter_map(|n| deps.stmts.iter().find(|s| &s.name == n))
                .map(|s| program.systems[k].vars[s.var].name.clone())
                .collect();
            eqs.sort();
            eqs.dedup();
            return Err(DepsError::Cycle {
                system: deps.name.clone(),
                equations: eqs,
            });
        }
        Err(ScheduleError::Poly(p)) => return Err(DepsError::Poly(p)),
        Err(e) => return Err(DepsError::Schedule(e)),
    };
    Ok(SystemSchedule {
        deps,
        schedule: sched,
        scheduler,
    })
}

/// `row` (coefficients of `names`, then the constant) as an affine
/// expression, in the isl notation of `poly`'s printer (`2i - j + 1`).
fn aff_text(row: &[i64], names: &[String]) -> String {
    let wide: Vec<i128> = row[..=names.len()].iter().map(|&c| i128::from(c)).collect();
    crate::poly::print::fmt_expr(&wide, names)
}

impl ProgramSchedule {
    /// The schedule as text, per system: a comment line naming the
    /// scheduler and the parallel (coincident) and scalar dimensions, then
    /// one line per statement in isl notation, e.g.
    /// `[N] -> { S1[i, j] -> [0, i, j] }`.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for s in &self.systems {
            let kinds: Vec<&str> = s
                .schedule
                .dims
                .iter()
                .map(|d| {
                    if d.scalar {
                        "scalar"
                    } else if d.coincident {
                        "parallel"
                    } else {
                        "sequential"
                    }
                })
                .collect();
            out.push_str(&format!(
                "// system {} ({} scheduler); dimensions: [{}]\n",
                s.deps.name,
                match s.scheduler {
                    Scheduler::Feautrier => "feautrier",
                    Scheduler::Pluto => "pluto",
                },
                kinds.join(", ")
            ));
            let params = if s.deps.params.is_empty() {
                String::new()
            } else {
                format!("[{}] -> ", s.deps.params.join(", "))
            };
            for (k, st) in s.deps.stmts.iter().enumerate() {
                let mut names = st.dims.clone();
                names.extend(s.deps.params.iter().cloned());
                let rows: Vec<String> = s.schedule.rows[k]
                    .iter()
                    .map(|r| aff_text(r, &names))
                    .collect();
                out.push_str(&format!(
                    "{params}{{ {}[{}] -> [{}] }}\n",
                    st.name,
                    st.dims.join(", "),
                    rows.join(", ")
                ));
            }
        }
        out
    }

    /// `Θ_X` for the SDR heuristic: the linear part (iterator columns) of
    /// the schedule rows of the (first) equation statement of variable
    /// `var` in system `system`, outermost first; `None` if unknown.
    pub fn result_rows(&self, system: usize, var: VarId) -> Option<Vec<Vec<i64>>> {
        let s = self.systems.get(system)?;
        let k = s
            .deps
            .stmts
            .iter()
            .position(|st| st.var == var && st.kind == StmtKind::Equation)?;
        let d = s.deps.stmts[k].dims.len();
        Some(s.schedule.rows[k].iter().map(|r| r[..d].to_vec()).collect())
    }
}

/// Parse-free convenience for the CLI: schedule a program and return the
/// text of [`ProgramSchedule::to_text`].
pub fn schedule_text(program: &Program, scheduler: Scheduler) -> Result<String, DepsError> {
    Ok(schedule_program(program, scheduler)?.to_text())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::SourceFile;
    use crate::ir::{ReductionId, StmtId};
    use std::collections::HashSet;

    fn lower(text: &str) -> Program {
        let src = SourceFile::new("t.alpha", text);
        let ast = crate::syntax::parse(&src).expect("parses");
        crate::ir::lower::lower(&ast, &src).expect("lowers")
    }

    /// Every kind of multiplicity: a variable domain of two pieces (its
    /// reduction is walked once per piece), a reduction in a case branch
    /// over a union (two completions), a nested reduction (walked once per
    /// piece of its parent's body domain) and a body domain of two pieces.
    const PROGRAM: &str = "affine s [N] -> { : N > 5 } inputs A : [N]\n\
         outputs E : { [i] : 0 <= i < 2 or N - 2 <= i < N }; C : [N]; B : [N]\n\
         let E[i] = A[i] + reduce(+, [k], {: 0 <= k <= i} : A[k]);\n\
             C[i] = case { {: i == 1} : A[i];\n\
                           {: i != 1} : A[i] * reduce(max, [k], {: 0 <= k <= i} : A[k]\n\
                               + reduce(+, [l], {: 0 <= l <= k} : A[l])); };\n\
             B[i] = reduce(+, [k], {: k == 0 or 2 <= k <= i} : A[k] * reduce(+, [l], {: 0 <= l <= k} : A[l])); .";

    #[test]
    fn statement_keys_are_unique_and_name_their_reductions() {
        let p = lower(PROGRAM);
        let sys = &p.systems[0];
        let d = analyze_system(&p, 0).expect("analysis");
        let index = index_by_key(&d.stmts).expect("unique keys");
        assert_eq!(index.len(), d.stmts.len());
        let reds: HashMap<ReductionId, &ir::Reduction> =
            sys.reductions().into_iter().map(|r| (r.id, r)).collect();
        assert_eq!(reds.len(), sys.reductions().len(), "reduction ids unique");
        let mut accumulated = HashSet::new();
        for (k, st) in d.stmts.iter().enumerate() {
            assert_eq!(index[&st.key], k);
            let (rid, kind) = match st.key.id {
                StmtId::Equation(v) => {
                    assert_eq!(
                        (st.kind, st.var, st.key.parent),
                        (StmtKind::Equation, v, None)
                    );
                    assert!(st.key.piece < sys.vars[v].domain.pieces().len());
                    assert_eq!(Some(&st.dims), sys.equation_of(v).map(|e| &e.indices));
                    continue;
                }
                StmtId::Accumulate(r) => (r, StmtKind::Accumulate),
                StmtId::Complete(r) => (r, StmtKind::Complete),
            };
            assert_eq!((st.kind, st.var), (kind, rid.var), "{}", st.name);
            let r = reds[&rid];
            let parent = st.key.parent.expect("a reduction statement has a parent");
            assert!(parent < k);
            assert_eq!(d.stmts[parent].var, rid.var);
            if kind == StmtKind::Accumulate {
                accumulated.insert(rid);
                assert_eq!(st.dims, r.dims(), "{}", st.name);
                assert!(st.key.piece < r.body_domain.pieces().len());
                // The key's piece is the body domain's piece: same points.
                let rows = piece_rows(
                    &r.body_domain.pieces()[st.key.piece].constraints(),
                    r.dims().len(),
                    1,
                );
                let mut dom = System::new(r.dims().len() + 1);
                dom.add_rows(0, rows);
                assert_eq!(
                    (&dom.eqs, &dom.ineqs),
                    (
                        &st.domain.eqs[..dom.eqs.len()].to_vec(),
                        &st.domain.ineqs[..dom.ineqs.len()].to_vec()
                    ),
                    "{}",
                    st.name
                );
            } else {
                assert_eq!(st.dims, d.stmts[parent].dims);
            }
        }
        assert_eq!(accumulated.len(), reds.len(), "every reduction accumulates");
        let count = |f: &dyn Fn(&PolyStmt) -> bool| d.stmts.iter().filter(|s| f(s)).count();
        let id = |var, ordinal| ReductionId { var, ordinal };
        let (e, c, b) = (1, 2, 3);
        // E has two domain pieces: two equation statements, each the parent
        // of an accumulation (and of a completion) of E's reduction.
        assert_eq!(count(&|s| s.key.id == StmtId::Equation(e)), 2);
        assert_eq!(count(&|s| s.key.id == StmtId::Accumulate(id(e, 0))), 2);
        assert_eq!(count(&|s| s.key.id == StmtId::Complete(id(e, 0))), 2);
        // C's max is completed over `i != 1`: two context pieces.
        assert_eq!(
            count(&|s| s.key.id == StmtId::Complete(id(c, 0)) && s.key.piece == 1),
            1
        );
        // B's body domain has two pieces, each the parent of the nested sum.
        let outer = reds[&id(b, 0)].body_domain.pieces().len();
        assert_eq!(outer, 2);
        assert_eq!(count(&|s| s.key.id == StmtId::Accumulate(id(b, 0))), outer);
        assert_eq!(count(&|s| s.key.id == StmtId::Accumulate(id(b, 1))), outer);
        let parents: HashSet<Option<usize>> = d
            .stmts
            .iter()
            .filter(|s| s.key.id == StmtId::Accumulate(id(b, 1)))
            .map(|s| s.key.parent)
            .collect();
        assert_eq!(parents.len(), outer);
    }

    #[test]
    fn normalized_programs_keep_unique_keys() {
        let p = crate::sdr::normalize::normalize(&lower(PROGRAM)).expect("normalizes");
        let sys = &p.systems[0];
        let mut renumbered = sys.clone();
        renumbered.number_reductions();
        assert_eq!(&renumbered, sys, "normalize numbers its reductions");
        let d = analyze_system(&p, 0).expect("analysis");
        assert!(index_by_key(&d.stmts).is_some());
    }
}
