//! The scheduling driver: combines Pluto bands, Feautrier steps, splitting
//! into strongly connected components with scalar dimensions, and rank
//! completion into one sequential schedule, then verifies it.
//!
//! Algorithm on a subproblem (statements `S`, remaining pieces `D`, rows so
//! far; all statements of `S` have the same number of rows):
//! 1. `D` empty: complete every statement to full column rank with unit
//!    rows (outer iterators first), pad with zero rows; done.
//! 2. Pluto only, some statement not of full rank modulo its domain's
//!    equalities ([`AffineHull`]): compute a band; if it has
//!    members, append them and go on with the uncarried parts of `D`. A
//!    band that ends in favour of a split (its next member's distances
//!    would grow with the parameters while the statements fall apart into
//!    several components, see [`pluto`]) leads to step 4 without step 3;
//!    after its members, straight to step 4 while the uncarried parts
//!    still fall apart, as isl splits after an incomplete band (searching
//!    the same statements again found the same split, at the price of a
//!    second search: `window_sum_2d` 0.2 s).
//! 3. A Feautrier step; if it carries some piece, append the row and go on.
//! 4. Nothing can be carried: split `S` into the strongly connected
//!    components of the graph of `D` (petgraph); one component means an
//!    unschedulable cycle (typed error). Otherwise a scalar dimension orders
//!    the components topologically (carrying every piece between them) and
//!    each component is scheduled on its own; results are padded.
//!
//! After appending rows, each piece `P` is replaced by its uncarried part
//! `P ∧ (θ_T,k(t) = θ_S,k(s))` for the new rows `k` (every row weakly
//! satisfies `P`, so the uncarried pairs are exactly the tied ones); an
//! integer-empty piece is dropped. This is Feautrier's refinement of
//! partially carried dependences ("greedier" than the original).
//!
//! The finished schedule then goes through late placement ([`late`]):
//! statements whose values would stay alive for a parameter-dependent
//! number of steps move to just before their reader where that is legal.
//! Then distribution ([`distribute`]) gives statements of different
//! shapes their own loops below the innermost carrying level, readers of
//! an earlier step's values before their writers. Last, a level whose
//! rows share a stride `g > 1` becomes a unit-stride level and a scalar
//! one ([`stride`]: `5i + 2` becomes `(i, 2)`).
//!
//! Each Pluto band runs under a simplex work budget
//! ([`pluto::BAND_WORK`]); a band that spends it keeps the members found so
//! far and the schedule records `budget_spent`.
//!
//! Owns: the driver, completion and the final verification. Must not know
//! the ILP encodings (those are in `feautrier`, `pluto`, `ilp`).

use super::check::{check_schedule, diff_row, dim_flags, is_sequential, DepStatus, Legality};
use super::error::{ScheduleError, ScheduleResult};
use super::farkas::{valid_cone, FarkasCone};
use super::model::{DepPiece, Model, Schedule};
use super::{distribute, feautrier, late, pluto, stride};
use crate::poly::linalg;
use crate::poly::memo::{memoized, Memo, SystemKey};
use crate::poly::solver::{self, Optimum, System};
use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;

/// Which scheduling algorithm to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// Feautrier's: each level carries as many dependence pieces as possible.
    Feautrier,
    /// isl's Pluto-style bands with Feautrier fallback.
    Pluto,
}

/// A remaining dependence piece with its Farkas cone.
#[derive(Clone, Debug)]
pub(crate) struct Piece {
    pub src: usize,
    pub tgt: usize,
    /// Over `(s, t, p)`, domains included.
    pub poly: System,
    pub cone: FarkasCone,
}

/// A subproblem as seen by the Feautrier and Pluto steps.
pub(crate) struct Sub<'a> {
    pub model: &'a Model,
    /// Global statement indices, in local order.
    pub stmts: &'a [usize],
    pub pieces: &'a [Piece],
    /// Rows so far of every (global) statement.
    pub rows: &'a [Vec<Vec<i64>>],
    /// `sizes[g][j]`: size of statement `g`'s domain in direction `j`
    /// (isl report §7.5.2), `None` if unbounded.
    pub sizes: &'a [Vec<Option<i64>>],
    /// `hulls[g]`: the affine hull of statement `g`'s domain.
    pub hulls: &'a [AffineHull],
}

/// The affine hull of a statement's domain, as far as scheduling needs it.
///
/// A schedule orders the domain's points once its rows together with the
/// hull's equalities have full column rank: two points of the domain that
/// no row separates differ by a vector orthogonal to every row and every
/// equality, i.e. zero. So the rows need rank `d` only modulo `eqs`.
#[derive(Clone, Debug, Default)]
pub(crate) struct AffineHull {
    /// The domain's equalities, explicit and implicit, as rows over
    /// `(i, p, 1)` like the schedule's.
    pub eqs: Vec<Vec<i64>>,
    /// Iterators the equalities determine as integer affine functions of
    /// the other iterators, without parameters
    /// ([`linalg::determined_columns`], innermost first). On the domain a
    /// row `a·i + k` equals a row with `a_j = 0` for these `j` and another
    /// constant, so a Pluto band may leave them out of its rows.
    pub determined: Vec<usize>,
}

impl AffineHull {
    /// The affine hull of statement `g` of `model`.
    fn of(model: &Model, g: usize) -> ScheduleResult<AffineHull> {
        let st = &model.statements[g];
        let (d, m) = (st.n_dims, model.n_params);
        let mut eqs = st.domain.eqs.clone();
        for k in solver::implicit_equalities(&st.domain)? {
            eqs.push(st.domain.ineqs[k].clone());
        }
        let params: Vec<usize> = (d..d + m).collect();
        let inner_first: Vec<usize> = (0..d).rev().collect();
        let determined = linalg::determined_columns(&eqs, d + m, &inner_first, &params)
            .map_err(ScheduleError::from_rows)?;
        Ok(AffineHull { eqs, determined })
    }

    /// The rank of `rows` (over the first `d` columns) with the hull's
    /// equalities added.
    pub fn rank_with(&self, rows: &[Vec<i64>], d: usize) -> usize {
        let mut c = rows.to_vec();
        c.extend(self.eqs.iter().cloned());
        linalg::rank(&c, d)
    }
}

impl Sub<'_> {
    /// Local index of a global statement.
    pub fn local(&self, g: usize) -> ScheduleResult<usize> {
        self.stmts.iter().position(|&x| x == g).ok_or_else(|| {
            ScheduleError::Internal(format!("statement {g} is not in the subproblem"))
        })
    }
}

struct Ctx<'a> {
    model: &'a Model,
    which: Scheduler,
    rows: Vec<Vec<Vec<i64>>>,
    sizes: Vec<Vec<Option<i64>>>,
    hulls: Vec<AffineHull>,
    /// Some band ran out of its work budget.
    budget_spent: bool,
    /// The work budget of each Pluto band.
    band_work: u64,
}

/// Size of the domain of a statement in direction `j` (isl (98)):
/// `max { x'_j − x_j : x, x' ∈ D, x'_k = x_k (k != j) }`, `None` when
/// unbounded or empty. Memoized per thread on `(D, j)`: the optimizer
/// schedules the program before and after simplification, and most
/// statements keep their domains.
fn size(model: &Model, g: usize, j: usize) -> ScheduleResult<Option<i64>> {
    thread_local! {
        static SIZES: Memo<(SystemKey, usize, usize), Option<i64>> = Memo::default();
    }
    let st = &model.statements[g];
    memoized(
        &SIZES,
        || {
            let dom = &st.domain;
            (
                (dom.n_vars, dom.eqs.clone(), dom.ineqs.clone()),
                st.n_dims,
                j,
            )
        },
        || domain_size(model, g, j),
    )
}

/// [`size`], computed.
fn domain_size(model: &Model, g: usize, j: usize) -> ScheduleResult<Option<i64>> {
    let st = &model.statements[g];
    let (d, m) = (st.n_dims, model.n_params);
    let n = 2 * d + m;
    let mut sys = System::new(n);
    let embed = |row: &[i64], off: usize| {
        let mut r = vec![0; n + 1];
        r[off..off + d].copy_from_slice(&row[..d]);
        r[2 * d..2 * d + m].copy_from_slice(&row[d..d + m]);
        r[n] = row[d + m];
        r
    };
    for off in [0, d] {
        for r in &st.domain.eqs {
            sys.add_eq(embed(r, off));
        }
        for r in &st.domain.ineqs {
            sys.add_ineq(embed(r, off));
        }
    }
    for k in (0..d).filter(|&k| k != j) {
        let mut r = vec![0; n + 1];
        r[k] = 1;
        r[d + k] = -1;
        sys.add_eq(r);
    }
    let mut obj = vec![0; n + 1];
    obj[d + j] = 1;
    obj[j] = -1;
    Ok(match solver::integer_max(&sys, &obj)? {
        Optimum::Value(v) => Some(v),
        _ => None,
    })
}

/// A dependence piece between `src` and `tgt` over the polyhedron `poly`,
/// or `None` when `poly` has no integer point (or no rational one). The
/// Farkas cone of a polyhedron is memoized per thread: the optimizer
/// schedules the program before and after simplification, and most
/// pieces are the same.
fn make_piece(poly: System, src: usize, tgt: usize) -> ScheduleResult<Option<Piece>> {
    thread_local! {
        static CONES: Memo<SystemKey, Option<FarkasCone>> = Memo::default();
    }
    let cone = memoized(
        &CONES,
        || (poly.n_vars, poly.eqs.clone(), poly.ineqs.clone()),
        || -> ScheduleResult<Option<FarkasCone>> {
            if solver::integer_sample(&poly)?.is_none() {
                return Ok(None);
            }
            valid_cone(&poly)
        },
    )?;
    Ok(cone.map(|cone| Piece {
        src,
        tgt,
        poly,
        cone,
    }))
}

impl Ctx<'_> {
    /// The subproblem of `stmts` and `pieces` with the rows so far.
    fn sub<'s>(&'s self, stmts: &'s [usize], pieces: &'s [Piece]) -> Sub<'s> {
        Sub {
            model: self.model,
            stmts,
            pieces,
            rows: &self.rows,
            sizes: &self.sizes,
            hulls: &self.hulls,
        }
    }

    fn n_rows(&self, stmts: &[usize]) -> usize {
        stmts.iter().map(|&g| self.rows[g].len()).max().unwrap_or(0)
    }

    /// Pad every statement of `stmts` with zero rows to the same length.
    fn pad(&mut self, stmts: &[usize]) {
        let len = self.n_rows(stmts);
        for &g in stmts {
            let w = self.model.statements[g].n_dims + self.model.n_params + 1;
            while self.rows[g].len() < len {
                self.rows[g].push(vec![0; w]);
            }
        }
    }

    /// Refine pieces by the equalities of the rows appended from `from` on.
    fn refine(&self, pieces: Vec<Piece>, from: usize) -> ScheduleResult<Vec<Piece>> {
        let mut out = Vec::with_capacity(pieces.len());
        for p in pieces {
            let len = self.rows[p.src].len();
            if from >= len {
                out.push(p);
                continue;
            }
            let mut poly = p.poly.clone();
            let dep = DepPiece {
                source: p.src,
                target: p.tgt,
                poly: System::new(0),
            };
            for k in from..len {
                poly.add_eq(diff_row(
                    self.model,
                    &dep,
                    &self.rows[p.src][k],
                    &self.rows[p.tgt][k],
                )?);
            }
            if let Some(np) = make_piece(poly, p.src, p.tgt)? {
                out.push(np);
            }
        }
        Ok(out)
    }

    /// Append unit rows until every statement has full column rank.
    fn complete(&mut self, stmts: &[usize]) {
        for &g in stmts {
            let d = self.model.statements[g].n_dims;
            let w = d + self.model.n_params + 1;
            let mut r = linalg::rank(&self.rows[g], d);
            for j in 0..d {
                if r == d {
                    break;
                }
                let mut e = vec![0; w];
                e[j] = 1;
                self.rows[g].push(e);
                let r2 = linalg::rank(&self.rows[g], d);
                if r2 == r {
                    self.rows[g].pop();
                } else {
                    r = r2;
                }
            }
        }
        self.pad(stmts);
    }

    fn run(&mut self, stmts: Vec<usize>, mut pieces: Vec<Piece>) -> ScheduleResult<()> {
        // The last band ended, after its members, in favour of a split.
        let mut split_pending = false;
        loop {
            if pieces.is_empty() {
                self.complete(&stmts);
                return Ok(());
            }
            let from = self.n_rows(&stmts);
            // The Pluto band ended in favour of a split into components.
            let mut prefer_split = false;
            if self.which == Scheduler::Pluto {
                // Full rank modulo the domain's equalities is enough for a
                // band (see `AffineHull`); `complete` adds the rest.
                let needs_rank = stmts.iter().any(|&g| {
                    let d = self.model.statements[g].n_dims;
                    self.hulls[g].rank_with(&self.rows[g], d) < d
                });
                let pending = std::mem::take(&mut split_pending);
                if needs_rank && pending && pluto::splittable(&self.sub(&stmts, &pieces)) {
                    prefer_split = true;
                } else if needs_rank {
                    let _t = crate::timing::phase("band search");
                    let sub = self.sub(&stmts, &pieces);
                    let (band, spent) =
                        solver::with_work_budget(self.band_work, || pluto::band(&sub));
                    self.budget_spent |= spent.exhausted;
                    let band = band?;
                    prefer_split = band.split;
                    if !band.members.is_empty() {
                        split_pending = band.split;
                        for member in band.members {
                            for (s, row) in member.into_iter().enumerate() {
                                self.rows[stmts[s]].push(row);
                            }
                        }
                        let _t = crate::timing::phase("refine");
                        pieces = self.refine(pieces, from)?;
                        continue;
                    }
                }
            }
            let sub = self.sub(&stmts, &pieces);
            let step = if prefer_split {
                None
            } else {
                let _t = crate::timing::phase("Feautrier step");
                feautrier::step(&sub)?
            };
            if let Some(step) = step {
                for (s, row) in step.rows.into_iter().enumerate() {
                    self.rows[stmts[s]].push(row);
                }
                pieces = self.refine(pieces, from)?;
                continue;
            }
            // Nothing can be carried: split into strongly connected components.
            let mut graph = DiGraph::<usize, ()>::new();
            let nodes: Vec<_> = stmts.iter().map(|&g| graph.add_node(g)).collect();
            for p in &pieces {
                let (a, b) = (sub.local(p.src)?, sub.local(p.tgt)?);
                graph.add_edge(nodes[a], nodes[b], ());
            }
            // tarjan_scc lists components in reverse topological order.
            let mut sccs = tarjan_scc(&graph);
            sccs.reverse();
            if sccs.len() == 1 {
                let mut names: Vec<usize> = stmts.clone();
                names.sort_unstable();
                return Err(ScheduleError::Cycle {
                    statements: names
                        .iter()
                        .map(|&g| self.model.statements[g].name.clone())
                        .collect(),
                });
            }
            let comps: Vec<Vec<usize>> = sccs
                .iter()
                .map(|c| {
                    let mut v: Vec<usize> = c.iter().map(|&n| graph[n]).collect();
                    v.sort_unstable();
                    v
                })
                .collect();
            for (q, comp) in comps.iter().enumerate() {
                for &g in comp {
                    let w = self.model.statements[g].n_dims + self.model.n_params + 1;
                    let mut r = vec![0; w];
                    r[w - 1] = i64::try_from(q).map_err(|_| ScheduleError::Overflow)?;
                    self.rows[g].push(r);
                }
            }
            let pieces = self.refine(pieces, from)?;
            for comp in comps {
                let inner: Vec<Piece> = pieces
                    .iter()
                    .filter(|p| comp.contains(&p.src) && comp.contains(&p.tgt))
                    .cloned()
                    .collect();
                if pieces
                    .iter()
                    .any(|p| comp.contains(&p.src) != comp.contains(&p.tgt))
                {
                    return Err(ScheduleError::Internal(
                        "a piece between components survived the ordering dimension".to_string(),
                    ));
                }
                self.run(comp, inner)?;
            }
            self.pad(&stmts);
            return Ok(());
        }
    }
}

/// Compute a sequential affine schedule of `model` with the chosen
/// algorithm. The result is legal (every dependence piece is carried at
/// some level, checked by [`check_schedule`]) and sequential (every
/// statement's iterator coefficients have full column rank, checked by
/// [`is_sequential`]); otherwise an `Internal` error is returned, never an
/// illegal schedule. Dimension flags are computed from the check.
pub fn schedule(model: &Model, which: Scheduler) -> ScheduleResult<Schedule> {
    schedule_with_budget(model, which, pluto::BAND_WORK)
}

/// [`schedule`] with `band_work` as the simplex work budget of each Pluto
/// band instead of [`pluto::BAND_WORK`] (tests use tiny budgets to check
/// that a spent budget still gives a legal schedule).
pub fn schedule_with_budget(
    model: &Model,
    which: Scheduler,
    band_work: u64,
) -> ScheduleResult<Schedule> {
    let _t = crate::timing::phase("scheduler");
    model.validate()?;
    let t = crate::timing::phase("sizes and pieces");
    let mut sizes = Vec::with_capacity(model.statements.len());
    for (g, st) in model.statements.iter().enumerate() {
        sizes.push(
            (0..st.n_dims)
                .map(|j| size(model, g, j))
                .collect::<ScheduleResult<Vec<_>>>()?,
        );
    }
    let hulls = (0..model.statements.len())
        .map(|g| AffineHull::of(model, g))
        .collect::<ScheduleResult<Vec<_>>>()?;
    let mut pieces = Vec::new();
    for dep in &model.deps {
        if let Some(p) = make_piece(model.dep_with_domains(dep)?, dep.source, dep.target)? {
            pieces.push(p);
        }
    }
    let mut ctx = Ctx {
        model,
        which,
        rows: vec![Vec::new(); model.statements.len()],
        sizes,
        hulls,
        budget_spent: false,
        band_work,
    };
    drop(t);
    let all: Vec<usize> = (0..model.statements.len()).collect();
    ctx.run(all.clone(), pieces)?;
    ctx.pad(&all);
    let t = crate::timing::phase("post-passes");
    late::place_late(model, &mut ctx.rows)?;
    let n = ctx.n_rows(&all);
    let mut sched = Schedule {
        rows: ctx.rows,
        dims: vec![Default::default(); n],
        budget_spent: ctx.budget_spent,
    };
    let mut statuses = legal_statuses(model, &sched)?;
    if distribute::distribute(model, &mut sched.rows, &statuses)? {
        sched.dims = vec![Default::default(); n + 1];
        statuses = legal_statuses(model, &sched)?;
    }
    if stride::unstride(model, &mut sched.rows)? {
        sched.dims = vec![Default::default(); ctx_levels(&sched.rows)];
        statuses = legal_statuses(model, &sched)?;
    }
    if !is_sequential(model, &sched)? {
        return Err(ScheduleError::Internal(
            "computed schedule is not sequential".to_string(),
        ));
    }
    sched.dims = dim_flags(model, &sched, &statuses)?;
    drop(t);
    Ok(sched)
}

/// The number of levels of `rows` (every statement has as many).
fn ctx_levels(rows: &[Vec<Vec<i64>>]) -> usize {
    rows.first().map_or(0, Vec::len)
}

/// The status of every piece under `sched`, or an `Internal` error naming
/// the violated piece (a computed schedule is never returned illegal).
fn legal_statuses(model: &Model, sched: &Schedule) -> ScheduleResult<Vec<DepStatus>> {
    match check_schedule(model, sched)? {
        Legality::Legal(statuses) => Ok(statuses),
        Legality::Illegal(v) => Err(ScheduleError::Internal(format!(
            "computed schedule violates dependence piece {} at level {:?}: {:?} -> {:?} (params {:?})",
            v.dep, v.level, v.source, v.target, v.params
        ))),
    }
}
