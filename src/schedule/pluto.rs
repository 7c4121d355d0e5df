//! The Pluto-style band scheduler of isl (report §6.5): a permutable band
//! of schedule rows, each weakly satisfying every remaining dependence
//! piece, minimizing the proximity bound `u·p + w` on dependence distances,
//! linearly independent of the rows found so far and of the statement
//! domain's equalities (§6.5.6; isl compresses the domain by its
//! equalities instead), non-trivial by the case split of §6.5.7, with
//! coefficient bounds against loop coalescing (§7.5.3). Iterators the
//! equalities determine (`k` on `k = 2i + 1`) have coefficient 0.
//!
//! ILP variables: `u⁻_0, u⁺_0, ..., u⁻_{m-1}, u⁺_{m-1}, w` then the
//! statement blocks of [`super::ilp::Layout`]. Constraints per piece
//! (Farkas): `θ_T − θ_S >= 0` and `(u⁺ − u⁻)·p + w − (θ_T − θ_S) >= 0`.
//! Objectives, lexicographically: `Σ(u⁺ + u⁻)`, `w`, `Σ b`, `Σ |a|`, then
//! every variable in layout order. As in Pluto, rows have no parameter
//! coefficients (`b = 0`: constant shifts only), and a member with
//! parametric distances (`u ≠ 0`) gives way to a split into strongly
//! connected components when there are several.
//!
//! The non-triviality search solves an ILP per node; a node keeps its
//! system at the rational lexicographic minimum of the objectives
//! ([`LexSimplex`], each child its parent's with the branching rows added
//! by the dual simplex), which answers the node when it leads to the point
//! the dive of [`super::ilp::lexmin`] would end at; `lexmin` decides the
//! rest.
//!
//! Owns: band construction. Must not know about Feautrier steps, SCC
//! splitting or completion (the driver combines them).

use super::driver::Sub;
use super::error::{ScheduleError, ScheduleResult};
use super::farkas::instantiate;
use super::ilp::{add, lexmin_with, scale, Form, IntegerQueries, Layout};
use crate::poly::linalg;
use crate::poly::solver::{DiveOutcome, LexSimplex, Optimum, Prepared, System};
use crate::poly::PolyError;
use petgraph::algo::tarjan_scc;
use petgraph::graph::DiGraph;

/// The significant objectives (`Σ|u|`, `w`): the search for a
/// non-trivial member looks only for solutions better in one of them.
const SIGNIFICANT: usize = 2;

/// Upper bound on ILP solves spent looking for one non-trivial member.
const SEARCH_BUDGET: usize = 256;

/// Upper bound on ILP solves spent, after the first non-trivial member,
/// looking for a significantly better one (a smaller `Σ|u|` or `w`).
/// Measured on the examples (2026-11-26): every search but the 2-D
/// window sums' ends within 17 solves; those found their improvements
/// within 81 solves of the first member, then spent the rest of
/// [`SEARCH_BUDGET`] failing to find another (integer searches that end
/// on their own work budget). With 96, every example's generated code is
/// the same (`alphac emit` of every system compared) and
/// `window_sum_2d` compiles in 0.70 s instead of 1.14 s.
const IMPROVE_BUDGET: usize = 96;

/// Integer queries (see [`super::ilp::lexmin`]) of one band that may end
/// on their work cap before the band's later nodes skip them: a node whose
/// rational relaxation has no integral lexicographic minimum is then given
/// up at once, like a node whose query spent its work. The band may be
/// less optimal, never illegal.
///
/// Measured on the examples (2026-11-28): every integer query of every
/// band ends on its cap. `window_sum_2d`'s bands make 89 of them, and
/// each costs a second dive to decide the levels' flatness and the
/// capped query, half of its whole compile (79 ms and 8 ms of the
/// solves' 170 ms). With 2, the generated code of every system of
/// `examples/` is unchanged. (Since the nodes are answered by the
/// lexicographic simplex, a node whose dive would end on an empty level
/// is recognized by its cuts and given up without a dive once the
/// allowance is spent.)
const CAPPED_QUERIES: usize = 2;

/// Simplex work (tableau cells touched by pivots, see
/// [`crate::poly::solver::with_work_budget`]) one band may spend. Past it
/// the search keeps the best member found so far (or ends the band, and
/// the driver's Feautrier steps take over): the band may be less
/// optimal, never illegal, and scheduling never hangs.
///
/// The value is a compromise measured on the examples: the largest band of
/// an inference sampler (LDA, 46 statements) needs about 1.1e10 to finish,
/// and cutting it shorter gives a schedule whose code runs 25 times slower;
/// the 2-D window sums of `examples/window_sum_2d.alpha` needed about
/// 4e9 in all once the integer lexmin dived on one tableau per search
/// node (`super::ilp::lexmin`; 1.8e10 before), and need 6.1e7 since the
/// statements' rows count modulo their domains' equalities.
pub const BAND_WORK: u64 = 20_000_000_000;

struct Problem {
    layout: Layout,
    base: Prepared,
    objs: Vec<Form>,
}

impl Problem {
    fn u_minus(&self, j: usize) -> usize {
        2 * j
    }
    fn u_plus(&self, j: usize) -> usize {
        2 * j + 1
    }
    fn w(&self) -> usize {
        2 * self.layout.n_params
    }
}

fn build(sub: &Sub) -> ScheduleResult<Problem> {
    let m = sub.model.n_params;
    let dims: Vec<usize> = sub
        .stmts
        .iter()
        .map(|&g| sub.model.statements[g].n_dims)
        .collect();
    let layout = Layout::new(m, dims, 2 * m + 1, 0);
    let mut p = Problem {
        layout,
        base: Prepared::new(System::new(0))?,
        objs: Vec::new(),
    };
    let l = &p.layout;
    let mut sys = System::new(l.n_vars);
    for v in 0..l.prefix {
        sys.add_ineq(l.var(v));
    }
    for r in l.nonneg_rows() {
        sys.add_ineq(r);
    }
    for piece in sub.pieces {
        let (ls, lt) = (sub.local(piece.src)?, sub.local(piece.tgt)?);
        // Validity: θ_T − θ_S >= 0.
        let (eqs, ineqs) = instantiate(&piece.cone, &l.diff_forms(ls, lt, 1)?)?;
        eqs.into_iter().for_each(|r| sys.add_eq(r));
        ineqs.into_iter().for_each(|r| sys.add_ineq(r));
        // Proximity: (u⁺ − u⁻)·p + w − (θ_T − θ_S) >= 0.
        let mut forms = l.diff_forms(ls, lt, -1)?;
        let (ds, dt) = (l.dims[ls], l.dims[lt]);
        for j in 0..m {
            let mut u = l.zero();
            u[p.u_plus(j)] = 1;
            u[p.u_minus(j)] = -1;
            forms[ds + dt + j] = add(&forms[ds + dt + j], &u)?;
        }
        let last = forms.len() - 1;
        forms[last] = add(&forms[last], &l.var(p.w()))?;
        let (eqs, ineqs) = instantiate(&piece.cone, &forms)?;
        eqs.into_iter().for_each(|r| sys.add_eq(r));
        ineqs.into_iter().for_each(|r| sys.add_ineq(r));
    }
    // Coalescing avoidance (isl (104)): |a_j| <= min_{k != j} ceil(S_k / 2)
    // over the finite sizes S_k >= 1 of the statement's domain.
    for (s, &g) in sub.stmts.iter().enumerate() {
        let d = l.dims[s];
        for j in 0..d {
            let bound = (0..d)
                .filter(|&k| k != j)
                .filter_map(|k| sub.sizes[g][k])
                .filter(|&sz| sz >= 1)
                .map(|sz| sz / 2 + sz % 2)
                .min();
            if let Some(b) = bound {
                for v in [l.a_plus(s, j), l.a_minus(s, j)] {
                    let mut r = scale(&l.var(v), -1)?;
                    r[l.n_vars] = b;
                    sys.add_ineq(r);
                }
            }
        }
    }
    // Iterators the domain's equalities determine without parameters
    // (`AffineHull::determined`) get coefficient 0: any row equals on the
    // domain one without them, up to the statement's constant, so no
    // schedule is lost but the copies of each row that differ on the
    // hull's directions only (`k` against `2i + 1` where `k = 2i + 1`),
    // whose rational relaxations mix them with fractional coefficients and
    // make the integer dives fail.
    for (s, &g) in sub.stmts.iter().enumerate() {
        for &j in &sub.hulls[g].determined {
            sys.add_eq(l.var(l.a_plus(s, j)));
            sys.add_eq(l.var(l.a_minus(s, j)));
        }
    }
    // No parametric shifts (Pluto's hyperplanes `c·i + c_0`): a row with a
    // parameter coefficient interleaves statements by parameter-sized
    // offsets, which code generation can only scan with guards over the
    // union of the shifted ranges (quadratic loops where the statements'
    // own loops are linear). Statements are ordered by the driver's scalar
    // dimensions instead.
    for s in 0..l.dims.len() {
        for j in 0..m {
            sys.add_eq(l.var(l.b(s, j)));
        }
    }
    let mut sum_u = l.zero();
    for j in 0..m {
        sum_u[p.u_plus(j)] = 1;
        sum_u[p.u_minus(j)] = 1;
    }
    let mut objs = vec![sum_u, l.var(p.w()), l.sum_params(), l.sum_abs_coefs()];
    objs.extend((0..l.prefix - 1).map(|v| l.var(v)));
    objs.extend(l.block_objectives());
    p.base = Prepared::new(sys)?;
    p.objs = objs;
    Ok(p)
}

/// A region (§6.5.7): linear forms at least one of which must be non-zero.
type Region = Vec<Form>;

/// The node a child is built from: borrowed, or taken by its last child.
enum Parent<'a> {
    Borrowed(&'a Node),
    Owned(Box<Node>),
}

/// The system of a search node: the base with the node's rows.
enum Node {
    /// Kept at its rational lexicographic minimum by the dual simplex
    /// (each child a copy with its branching rows added): when its cuts
    /// find the integral point the dive would end at
    /// ([`LexSimplex::dive_outcome`]), that is the node's ILP answer,
    /// without a dive.
    Lex(LexSimplex),
    /// A prepared tableau, when the lexicographic simplex does not apply
    /// (an overflow of its `i64` tableau, a spent budget).
    Prepared(Prepared),
}

struct Search<'a> {
    prob: &'a Problem,
    /// The base's lexicographic minimum of the objectives, from which the
    /// nodes' are restored (`None`: the nodes are [`Node::Prepared`]).
    root_lex: Option<&'a LexSimplex>,
    regions: Vec<Region>,
    /// The rows of the regions' test ([`Search::region_groups`]).
    groups: Vec<Vec<Form>>,
    best: Option<Vec<i64>>,
    solves: usize,
    /// The solve count when the first non-trivial member was found.
    first_found: Option<usize>,
    optimal: bool,
    /// The root's [`Search::regions_possible`] test passed (it is done
    /// before the first solve, and not repeated).
    root_possible: bool,
    /// Solves of the band so far (this search and the band's earlier
    /// ones) given up on a work budget (see [`CAPPED_QUERIES`]).
    capped: usize,
    /// How many times `best` was set: the systems of the nodes (which
    /// depend on it, see [`Search::node_eqs`]) built at an earlier count
    /// are out of date.
    generation: usize,
}

impl Search<'_> {
    fn eval(form: &[i64], sol: &[i64]) -> ScheduleResult<i64> {
        let n = sol.len();
        let v = linalg::dot(&form[..n], sol).map_err(ScheduleError::from_rows)?;
        v.checked_add(form[n]).ok_or(ScheduleError::Overflow)
    }

    /// The extra rows of a search node: its branching constraints, and,
    /// once a solution is known, only significantly better ones (isl
    /// §6.5.7): the first significant objective (Σ|u|, then w) that is
    /// non-zero in the best solution must be zero, and the ones before it
    /// (zero in the best solution) stay zero.
    fn node_eqs(&self, extra_eqs: &[Form]) -> ScheduleResult<Vec<Form>> {
        let mut eqs = extra_eqs.to_vec();
        if let Some(best) = &self.best {
            for obj in &self.prob.objs[..SIGNIFICANT] {
                eqs.push(obj.clone());
                if Self::eval(obj, best)? != 0 {
                    break;
                }
            }
        }
        Ok(eqs)
    }

    /// Can every region still be non-trivial below this node? A necessary
    /// condition, on the rational relaxation: for each region some form
    /// `f` of it reaches `f >= 1` or `−f >= 1`. When a region fails it, `f`
    /// lies in `(−1, 1)` at every point, so `f = 0` at every integer point
    /// and no solution of the subtree is non-trivial: the search prunes it
    /// instead of enumerating its `2^depth` branches.
    ///
    /// Only the regions `trivial` (those all zero at the node's integer
    /// solution) are tested: at that point every other region has a form
    /// with an integer value other than 0, so `|f| >= 1` there already.
    fn regions_possible(
        &self,
        node: &Node,
        eqs: &[Form],
        ineqs: &[Form],
        trivial: &[usize],
    ) -> ScheduleResult<bool> {
        let groups: Vec<Vec<Form>> = trivial.iter().map(|&k| self.groups[k].clone()).collect();
        match node {
            Node::Lex(lex) => match lex.each_reaches(&groups) {
                Some(possible) => Ok(possible),
                None => Self::reach(&self.prepared(eqs, ineqs)?, &groups),
            },
            Node::Prepared(p) => Self::reach(p, &groups),
        }
    }

    /// Can a significantly better solution than `best` still exist (see
    /// [`Self::node_eqs`])? A necessary condition, on the rational
    /// relaxation of the root with the better solutions' rows: every
    /// region can still be non-trivial (as in [`Self::regions_possible`]).
    /// When it fails, no node of the rest of the search can give a new
    /// best, and the search is over with the same answer.
    ///
    /// Asked when the new best has a parametric distance (`Σ|u| > 0`):
    /// a better solution needs `Σ|u| = 0`, which the statements of a band
    /// often cannot have at all (CoxPH's 42 statements, whose search then
    /// tried 7 more branches, or the 2-D window sums'), and the test costs
    /// about one solve. Measured with callgrind on one compilation:
    /// `window_sum_2d` 7.7% fewer instructions, CoxPH 2.0%, the others
    /// within 0.01%; `alphac emit` of every system of `examples/` is
    /// unchanged.
    fn better_possible(&self) -> ScheduleResult<bool> {
        let root = self.node_system(&[], &[])?;
        let groups = &self.groups;
        match &root {
            Node::Lex(lex) if lex.is_empty() => Ok(false),
            Node::Lex(lex) => match lex.each_reaches(groups) {
                Some(possible) => Ok(possible),
                None => Self::reach(&self.prepared(&[], &[])?, groups),
            },
            Node::Prepared(p) => Self::reach(p, groups),
        }
    }

    /// The rows of [`Self::regions_possible`]: per region, `±f − 1 >= 0`
    /// for each of its forms `f` (`n` variables).
    fn region_groups(regions: &[Region], n: usize) -> ScheduleResult<Vec<Vec<Form>>> {
        let mut groups = Vec::with_capacity(regions.len());
        for reg in regions {
            let mut rows = Vec::with_capacity(2 * reg.len());
            for f in reg {
                for sign in [1i64, -1] {
                    let mut g = scale(f, sign)?;
                    g[n] = g[n].checked_sub(1).ok_or(ScheduleError::Overflow)?;
                    rows.push(g);
                }
            }
            groups.push(rows);
        }
        Ok(groups)
    }

    /// Does each group of rows have one reaching `>= 0` on `node`?
    fn reach(node: &Prepared, groups: &[Vec<Form>]) -> ScheduleResult<bool> {
        match node.each_reaches(&[], &[], groups) {
            // Out of budget: no pruning (the search's own limits apply).
            Err(PolyError::Budget(_)) => Ok(true),
            r => Ok(r?),
        }
    }

    /// The system of a node with branching rows `eqs` and `ineqs`: the
    /// base with [`Self::node_eqs`] and `ineqs` added.
    fn node_system(&self, eqs: &[Form], ineqs: &[Form]) -> ScheduleResult<Node> {
        if let Some(root) = self.root_lex {
            if let Some(lex) = root.extended(&self.node_eqs(eqs)?, ineqs)? {
                return Ok(Node::Lex(lex));
            }
        }
        Ok(Node::Prepared(self.prepared(eqs, ineqs)?))
    }

    /// The prepared tableau of the node with branching rows `eqs` and
    /// `ineqs` (see [`Self::node_system`]).
    fn prepared(&self, eqs: &[Form], ineqs: &[Form]) -> ScheduleResult<Prepared> {
        Ok(self.prob.base.extended(&self.node_eqs(eqs)?, ineqs)?)
    }

    /// The node with branching rows `eqs` and `ineqs`, built from its
    /// parent's system by adding the equalities `e` and the inequality `i`
    /// (from the base when the lexicographic simplex gives up on it).
    fn child(
        &self,
        parent: Parent,
        (e, i): (&[Form], &Form),
        eqs: &[Form],
        ineqs: &[Form],
    ) -> ScheduleResult<Node> {
        let i = std::slice::from_ref(i);
        let lex = match parent {
            Parent::Borrowed(Node::Lex(lex)) => lex.extended(e, i)?,
            Parent::Borrowed(Node::Prepared(p)) => return Ok(Node::Prepared(p.extended(e, i)?)),
            Parent::Owned(node) => match *node {
                Node::Lex(lex) => lex.into_extended(e, i)?,
                Node::Prepared(p) => return Ok(Node::Prepared(p.extended(e, i)?)),
            },
        };
        Ok(match lex {
            Some(c) => Node::Lex(c),
            None => Node::Prepared(self.prepared(eqs, ineqs)?),
        })
    }

    /// The integer lexicographic minimum of the objectives over a node's
    /// system (see [`Self::node_system`]; its branching rows `eqs` and
    /// `ineqs`), `None` when there is none or the solver gave up. A
    /// dive's point found by the lexicographic simplex
    /// ([`LexSimplex::dive_point`]) is the answer (`lexmin` would end its
    /// first dive there); otherwise the dives and integer queries of
    /// [`super::ilp::lexmin`] decide.
    fn solve(
        &mut self,
        node: &Node,
        eqs: &[Form],
        ineqs: &[Form],
    ) -> ScheduleResult<Option<Vec<i64>>> {
        self.solves += 1;
        let queries = if self.capped < CAPPED_QUERIES {
            IntegerQueries::Bounded
        } else {
            IntegerQueries::Skipped
        };
        let built;
        let node = match node {
            Node::Lex(lex) if lex.is_empty() => return Ok(None),
            Node::Lex(lex) => match lex.dive_outcome() {
                DiveOutcome::Point(p) => return Ok(Some(p)),
                // `lexmin`'s dive ends on an empty level, after which only
                // integer queries could answer: skipped, it gives up.
                DiveOutcome::EmptyBelow if queries == IntegerQueries::Skipped => {
                    self.capped += 1;
                    return Ok(None);
                }
                _ => {
                    built = self.prepared(eqs, ineqs)?;
                    &built
                }
            },
            Node::Prepared(p) => p,
        };
        let opt_r = lexmin_with(node, &[], &[], &self.prob.objs, queries);
        let opt = match opt_r {
            // The exact solver gave up on this branch of the search: treat
            // it as empty (another branch, or the Feautrier fallback, still
            // gives a legal schedule; only optimality is lost).
            Err(ScheduleError::Poly(PolyError::Budget(_))) => {
                self.capped += 1;
                return Ok(None);
            }
            r => r?,
        };
        match opt {
            Optimum::Value(v) => Ok(Some(v)),
            Optimum::Empty => Ok(None),
            Optimum::Unbounded => Err(ScheduleError::Internal(
                "Pluto ILP objective unbounded below".to_string(),
            )),
        }
    }

    /// The search is over: optimal, or one of its budgets spent.
    fn done(&self) -> bool {
        self.optimal
            || self.solves >= SEARCH_BUDGET
            || self
                .first_found
                .is_some_and(|f| self.solves >= f + IMPROVE_BUDGET)
    }

    /// Search the node with branching rows `eqs` and `ineqs`. `from` is
    /// its parent's system (built since the last new best solution) and
    /// the rows the node adds to it, so that the node's tableau is the
    /// parent's with a few rows added rather than the base's with all of
    /// them (the answers are the same: every query of the search has one
    /// answer whatever the order of the rows).
    fn run(
        &mut self,
        eqs: Vec<Form>,
        ineqs: Vec<Form>,
        from: Option<(Parent, &[Form], &Form)>,
    ) -> ScheduleResult<()> {
        if self.done() {
            return Ok(());
        }
        let node = match from {
            Some((parent, e, i)) => self.child(parent, (e, i), &eqs, &ineqs)?,
            None => self.node_system(&eqs, &ineqs)?,
        };
        let mut generation = self.generation;
        let Some(sol) = self.solve(&node, &eqs, &ineqs)? else {
            return Ok(());
        };
        // The regions trivial at `sol` (every form zero).
        let mut trivial = Vec::new();
        for (ri, reg) in self.regions.iter().enumerate() {
            let mut all_zero = true;
            for f in reg {
                if Self::eval(f, &sol)? != 0 {
                    all_zero = false;
                    break;
                }
            }
            if all_zero {
                trivial.push(ri);
            }
        }
        let Some(&ri) = trivial.first() else {
            let sig_zero = self.prob.objs[..SIGNIFICANT]
                .iter()
                .map(|o| Self::eval(o, &sol))
                .collect::<ScheduleResult<Vec<_>>>()?
                .iter()
                .all(|v| *v == 0);
            let u_nonzero = Self::eval(&self.prob.objs[0], &sol)? != 0;
            self.best = Some(sol);
            self.generation += 1;
            self.first_found.get_or_insert(self.solves);
            if sig_zero || (u_nonzero && !self.better_possible()?) {
                self.optimal = true;
            }
            return Ok(());
        };
        let known_possible = self.root_possible && eqs.is_empty() && ineqs.is_empty();
        if !known_possible && !self.regions_possible(&node, &eqs, &ineqs, &trivial)? {
            return Ok(());
        }
        let region = self.regions[ri].clone();
        let n = self.prob.layout.n_vars;
        let mut node = Some(node);
        for r in 0..region.len() {
            for sign in [1i64, -1] {
                let mut e = eqs.clone();
                e.extend(region[..r].iter().cloned());
                let mut i = ineqs.clone();
                // sign·f − 1 >= 0.
                let mut f = scale(&region[r], sign)?;
                f[n] = f[n].checked_sub(1).ok_or(ScheduleError::Overflow)?;
                i.push(f.clone());
                // A new best solution below an earlier branch changed the
                // node's system (see `node_eqs`).
                if generation != self.generation {
                    node = Some(self.node_system(&eqs, &ineqs)?);
                    generation = self.generation;
                }
                // The last child takes the node's tableau instead of a
                // copy of it.
                let parent = match node.as_ref() {
                    Some(_) if r + 1 == region.len() && sign == -1 => {
                        node.take().map(|n| Parent::Owned(Box::new(n)))
                    }
                    Some(n) => Some(Parent::Borrowed(n)),
                    None => None,
                };
                let Some(parent) = parent else {
                    return Err(ScheduleError::Internal(
                        "a search node's tableau was used after its last child".to_string(),
                    ));
                };
                self.run(e, i, Some((parent, &region[..r], &f)))?;
                if self.done() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

/// Iterator-coefficient rows of global statement `g`: its rows so far, the
/// band members found, and its domain's equalities (a new member must be
/// independent of them too: see `AffineHull`).
fn iter_rows(sub: &Sub, members: &[Vec<Vec<i64>>], s: usize) -> Vec<Vec<i64>> {
    let g = sub.stmts[s];
    let mut c: Vec<Vec<i64>> = sub.rows[g].clone();
    c.extend(members.iter().map(|mem| mem[s].clone()));
    c.extend(sub.hulls[g].eqs.iter().cloned());
    c
}

/// A band: its members (each one row per local statement) and whether it
/// ended in favour of a split into strongly connected components.
pub(crate) struct Band {
    pub members: Vec<Vec<Vec<i64>>>,
    pub split: bool,
}

/// True when the remaining dependences of `sub` leave its statements in more
/// than one strongly connected component.
pub(crate) fn splittable(sub: &Sub) -> bool {
    let mut graph = DiGraph::<(), ()>::new();
    let nodes: Vec<_> = sub.stmts.iter().map(|_| graph.add_node(())).collect();
    for p in sub.pieces {
        if let (Ok(a), Ok(b)) = (sub.local(p.src), sub.local(p.tgt)) {
            graph.add_edge(nodes[a], nodes[b], ());
        }
    }
    tarjan_scc(&graph).len() > 1
}

/// Compute a band for the subproblem (see [`Band`]); no members when not
/// even a first member exists.
pub(crate) fn band(sub: &Sub) -> ScheduleResult<Band> {
    let prob = build(sub)?;
    let l = &prob.layout;
    let mut members: Vec<Vec<Vec<i64>>> = Vec::new();
    let mut capped = 0;
    let root_lex = prob.base.lex_simplex(&prob.objs)?;
    loop {
        // Linear independence (§6.5.6) on the statements of maximal slack.
        let mut slack = Vec::with_capacity(l.dims.len());
        let mut kernels = Vec::with_capacity(l.dims.len());
        for s in 0..l.dims.len() {
            let c = iter_rows(sub, &members, s);
            let k = linalg::kernel_basis(&c, l.dims[s]).map_err(ScheduleError::from_rows)?;
            slack.push(k.len());
            kernels.push(k);
        }
        let max_slack = slack.iter().copied().max().unwrap_or(0);
        if max_slack == 0 {
            return Ok(Band {
                members,
                split: false,
            });
        }
        let mut regions = Vec::new();
        for s in 0..l.dims.len() {
            if slack[s] != max_slack {
                continue;
            }
            let mut reg = Vec::new();
            for krow in &kernels[s] {
                // Orient the kernel vector (first non-zero entry positive):
                // the search tries `f >= 1` first, so ties between `x` and
                // `−x` go to the forward direction of the iterators.
                let neg = krow.iter().find(|&&v| v != 0).is_some_and(|&v| v < 0);
                let krow: Vec<i64> = if neg {
                    krow.iter()
                        .map(|&v| v.checked_neg().ok_or(ScheduleError::Overflow))
                        .collect::<ScheduleResult<_>>()?
                } else {
                    krow.clone()
                };
                let mut f = l.zero();
                for (j, &kj) in krow.iter().enumerate() {
                    if kj != 0 {
                        f = add(&f, &scale(&l.coef(s, j), kj)?)?;
                    }
                }
                reg.push(f);
            }
            regions.push(reg);
        }
        let groups = Search::region_groups(&regions, l.n_vars)?;
        let mut search = Search {
            prob: &prob,
            root_lex: root_lex.as_ref(),
            regions,
            groups,
            best: None,
            solves: 0,
            first_found: None,
            optimal: false,
            root_possible: false,
            capped,
            generation: 0,
        };
        // When some region is trivial at every point, no member exists:
        // the test (a few LPs) is done before the root's ILP, which would
        // only find a trivial solution and then fail the same test.
        if !Search::reach(&prob.base, &search.groups)? {
            return Ok(Band {
                members,
                split: false,
            });
        }
        search.root_possible = true;
        search.run(Vec::new(), Vec::new(), None)?;
        capped = search.capped;
        let Some(sol) = search.best else {
            return Ok(Band {
                members,
                split: false,
            });
        };
        // A member whose dependence distances grow with the parameters
        // (`u ≠ 0`) is not taken when the statements fall apart into
        // several strongly connected components of the remaining
        // dependences: the band ends and the driver separates the
        // components by a scalar dimension (isl's fallback), scheduling each
        // anew. Example: matmul's accumulation over `k` and its completion,
        // which would otherwise get `−k` (the completion at 0, after every
        // `k`).
        if Search::eval(&prob.objs[0], &sol)? != 0 && splittable(sub) {
            return Ok(Band {
                members,
                split: true,
            });
        }
        let member = (0..l.dims.len())
            .map(|s| l.extract_row(&sol, s))
            .collect::<ScheduleResult<Vec<_>>>()?;
        members.push(member);
    }
}
