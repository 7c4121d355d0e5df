//! The simplification transformation (ST), applied per face, with the
//! reuse direction chosen from a sequential schedule (SDR paper sections
//! 4.1–4.3, 5.2 and 6; Gautam and Rajopadhye 2006, Theorem 3).
//!
//! For a reduction `X[x] = ⊕ { E(y) : y ∈ P, proj(y) = x }` over the
//! convex body domain `P` and a reuse vector `r` of the share space with
//! `r_X = proj_lin(r) ≠ 0`, write `P_x = P ∩ proj⁻¹(x)` and `P' = P + r`.
//! Because `E(y + r) = E(y)`, `⊕ P'_x = ⊕ P_{x − r_X}`, hence the identity
//!
//! ```text
//! X[x] = X[x − r_X] ⊕ Add[x] ⊖ Sub[x]      for x ∈ R1 = D_X ∩ (D_X + r_X)
//! Add[x] = ⊕ { E(y) : y ∈ P − P',  proj(y) = x }           (added shell)
//! Sub[x] = ⊕ { E(y) : y ∈ P − (P − r), proj(y) + r_X = x } (removed shell)
//! ```
//!
//! For `x ∈ D_X − R1` whose shifted slice is empty (`x ∉ proj(P) + r_X`),
//! `X[x] = Add[x]`; the remaining points (rare: `x − r_X` outside `D_X` but
//! its slice non-empty) keep the original reduction. The shells decompose
//! into disjoint pieces, one per facet `a·y + b ≥ 0` of `P` with `t = a·r >
//! 0` (and `t` slices `a·y + b = c`, `0 ≤ c < t`): each piece lies on a face
//! of `P` (one more independent equality), becomes a reduction of its own,
//! and is simplified recursively — one reuse decision per face, so the
//! recursion terminates (Lemma 5.3).
//!
//! Direction (Figure 8): with `Θ_X` the linear part of the result's
//! sequential schedule, a share-space basis vector `b` is used as `r = b`
//! when the first non-zero entry of `Θ_X · proj_lin(b)` is positive and as
//! `r = −b` when it is negative; the chosen `r` must be profitable (`P` is
//! not of constant thickness along `r`) and, for operators without an
//! inverse, must need no subtraction (`Sub` empty on `R1`), otherwise the
//! next basis vector is tried. Only `+` is treated as invertible: the
//! inverse of `*` fails on zero factors, so `*` is handled like `max`.
//!
//! That rule is for *dependent* reductions (the body reads the result,
//! directly or through other equations), where a direction against the
//! schedule could close a cycle. For an *independent* reduction every
//! face is handed to `maximal::search`, which may use either orientation
//! of each basis vector and split the face (`split`), and keeps the
//! cheapest result (POPL 2025; see `docs/optimizer.md`).

use super::maximal;
use super::normalize::{combine, used_names};
use super::share::share_space;
use super::{Decision, DecisionKind, ResultOrder, SdrError};
use crate::diag::Span;
use crate::ir::*;
use crate::poly::solver::{integer_kernel, rational_max, Optimum, System as LinSystem};
use crate::poly::{BasicSet, MultiAff, Set, Space};
use crate::vocab::Scalar;
use std::collections::HashSet;

/// Applies the SDR heuristic to every reduction equation of a normalized
/// program (see `normalize`). Returns the new program and the decisions.
pub fn simplify(
    p: &Program,
    order: &dyn ResultOrder,
) -> Result<(Program, Vec<Decision>), SdrError> {
    let (out, decisions, _) = simplify_with_origins(p, order)?;
    Ok((out, decisions))
}

/// [`simplify`] with a search budget of `budget` candidate evaluations per
/// reduction instead of `maximal::MAX_CANDIDATES` (0: the schedule-guided
/// heuristic alone, for every reduction).
pub fn simplify_with_budget(
    p: &Program,
    order: &dyn ResultOrder,
    budget: usize,
) -> Result<(Program, Vec<Decision>), SdrError> {
    let (out, decisions, _) = run(p, order, budget)?;
    Ok((out, decisions))
}

/// [`simplify`], also returning, per system, the new local variables with
/// the variable they were generated for (`(new, base)` pairs).
#[allow(clippy::type_complexity)]
pub fn simplify_with_origins(
    p: &Program,
    order: &dyn ResultOrder,
) -> Result<(Program, Vec<Decision>, Vec<Vec<(String, String)>>), SdrError> {
    run(p, order, maximal::MAX_CANDIDATES)
}

#[allow(clippy::type_complexity)]
fn run(
    p: &Program,
    order: &dyn ResultOrder,
    budget: usize,
) -> Result<(Program, Vec<Decision>, Vec<Vec<(String, String)>>), SdrError> {
    let mut out = p.clone();
    let mut decisions = Vec::new();
    let mut born_all = Vec::new();
    for (si, s) in out.systems.iter_mut().enumerate() {
        let context = s.context.clone();
        let mut cx = Cx {
            used: used_names(s),
            params: s.params.clone(),
            context,
            decisions: Vec::new(),
            sys_name: s.name.clone(),
            born: Vec::new(),
            evaluations: 0,
            budget,
            budget_noted: false,
        };
        let n_eqs = s.equations.len();
        for e in 0..n_eqs {
            let var = s.equations[e].var;
            let ExprKind::Reduce(r) = &s.equations[e].expr.kind else {
                continue;
            };
            let r = (**r).clone();
            let ty = s.equations[e].expr.ty;
            let span = s.equations[e].expr.span;
            let n_dims = s.equations[e].indices.len();
            let Some(theta) = order.result_rows(si, var, n_dims) else {
                cx.decide(&s.vars[var].name, -1, None, "no schedule for the result");
                continue;
            };
            // The search budget is per reduction of the program.
            cx.evaluations = 0;
            cx.budget_noted = false;
            let independent = maximal::is_independent(s, var, &r.body);
            let job = Job {
                target: var,
                red: r,
                ty,
                span,
                theta,
                independent,
                splits_left: maximal::MAX_SPLITS,
            };
            let expr = cx.process(s, job, 0)?;
            s.equations[e].expr = expr;
        }
        // The reductions moved into new locals get the ids of their new
        // places.
        s.number_reductions();
        decisions.append(&mut cx.decisions);
        born_all.push(cx.born);
    }
    Ok((out, decisions, born_all))
}

/// One reduction to simplify: `target[x] = reduce(red)`.
#[derive(Clone)]
pub(super) struct Job {
    pub(super) target: VarId,
    pub(super) red: Reduction,
    pub(super) ty: ElemType,
    pub(super) span: Span,
    /// `Θ_X`: rows over the target's dimensions.
    pub(super) theta: Vec<Vec<i64>>,
    /// The body does not read the target, directly or through other
    /// equations: any reuse direction keeps the program acyclic, and the
    /// maximal-simplification search (`maximal`) chooses among them.
    pub(super) independent: bool,
    /// How many more nested splits the search may try on this reduction.
    pub(super) splits_left: usize,
}

impl Job {
    /// The reduction unchanged, as the right-hand side it came from.
    pub(super) fn original(&self) -> Expr {
        Expr {
            kind: ExprKind::Reduce(Box::new(self.red.clone())),
            ty: self.ty,
            span: self.span,
        }
    }
}

/// The state of the pass over one system. Cloned to evaluate a candidate
/// of the maximal-simplification search in isolation.
#[derive(Clone)]
pub(super) struct Cx {
    pub(super) used: HashSet<String>,
    pub(super) params: Vec<String>,
    /// The parameter context (a set with no dimensions).
    pub(super) context: Set,
    pub(super) decisions: Vec<Decision>,
    pub(super) sys_name: String,
    /// `(new variable, variable it was generated for)`.
    pub(super) born: Vec<(String, String)>,
    /// Candidate evaluations spent on the current reduction.
    pub(super) evaluations: usize,
    /// The bound on `evaluations` (`maximal::MAX_CANDIDATES` unless a
    /// caller asked for another).
    pub(super) budget: usize,
    /// Whether the spent budget was already recorded for it.
    pub(super) budget_noted: bool,
}

/// A legal reuse direction with everything [`Cx::build`] needs (see the
/// module comment for the sets).
pub(super) struct Prepared {
    pub(super) r_x: Vec<i64>,
    add_pieces: Vec<BasicSet>,
    subs_used: Vec<BasicSet>,
    r1: Set,
    r2a: Set,
    r2b: Set,
}

/// Recursion guard: a face has at most as many dimensions as the body
/// space, and every level adds one independent equality.
const MAX_DEPTH: usize = 64;

fn lin(row: &[i64], n_par: usize, n: usize) -> Vec<i64> {
    row[n_par..n_par + n].to_vec()
}

fn dot(a: &[i64], b: &[i64]) -> Result<i64, SdrError> {
    let mut s: i64 = 0;
    for (x, y) in a.iter().zip(b) {
        s = x
            .checked_mul(*y)
            .and_then(|v| s.checked_add(v))
            .ok_or(crate::poly::PolyError::Overflow)?;
    }
    Ok(s)
}

/// Whether some equation of `s` reads `var` at affine indices (a `Read`;
/// reads at data-dependent indices are `IndirectRead`s).
fn read_affinely(s: &System, var: VarId) -> bool {
    fn walk(e: &Expr, var: VarId) -> bool {
        if matches!(e.kind, ExprKind::Read { var: v, .. } if v == var) {
            return true;
        }
        let mut found = false;
        e.for_each_child(&mut |c| found = found || walk(c, var));
        found
    }
    s.equations.iter().any(|eq| walk(&eq.expr, var))
}

/// `{ x : x − v ∈ s }` (the translate `s + v`).
fn translate(s: &Set, v: &[i64]) -> Result<Set, SdrError> {
    let space = s.space().clone();
    let minus_v = crate::poly::constraint::negate(v)?;
    let f = MultiAff::translation(space.clone(), space.output.clone(), &minus_v)?;
    Ok(s.preimage(&f)?)
}

impl Cx {
    pub(super) fn decide(
        &mut self,
        var: &str,
        face_dim: i64,
        reuse: Option<Vec<i64>>,
        reason: &str,
    ) {
        let applied = reuse.is_some();
        self.decisions.push(Decision {
            face_dim,
            reuse,
            ..Decision::new(
                &self.sys_name,
                var,
                DecisionKind::Simplification,
                applied,
                reason,
            )
        });
    }

    /// Records the applied simplification of `var`'s face `piece` along
    /// `r`, with the shells `prep` found (see [`super::Shells`]).
    pub(super) fn decide_applied(
        &mut self,
        var: &str,
        face_dim: i64,
        piece: &BasicSet,
        r: Vec<i64>,
        prep: &Prepared,
    ) {
        self.decide(var, face_dim, Some(r), "applied");
        if let Some(d) = self.decisions.last_mut() {
            d.shells = Some(Box::new(super::Shells {
                body: piece.clone(),
                added: prep.add_pieces.clone(),
                subtracted: prep.subs_used.clone(),
            }));
        }
    }

    /// The body domain of a reduction as one basic set (normalized
    /// reductions have a single convex piece); `None` when empty.
    fn piece(&self, r: &Reduction) -> Result<Option<BasicSet>, SdrError> {
        match r.body_domain.pieces() {
            [] => Ok(None),
            [one] => Ok(Some(one.clone())),
            _ => Err(SdrError::Internal(
                "a reduction body domain was not split into convex pieces".into(),
            )),
        }
    }

    /// The image `{ proj(y) + shift : y ∈ piece }` in the space of the
    /// target (over-approximated by the rational shadow when the integer
    /// projection is not exact — callers only use it where that is safe).
    fn image(
        &self,
        piece: &BasicSet,
        proj: &MultiAff,
        shift: &[i64],
        target: &Space,
    ) -> Result<Set, SdrError> {
        let np = self.params.len();
        let ny = piece.space().n_dims();
        let nx = proj.n_out();
        let mut dims: Vec<String> = (0..ny).map(|k| format!("y{k}")).collect();
        dims.extend((0..nx).map(|k| format!("x{k}")));
        let joint = Space::set(&self.params, &dims);
        let widen = |r: &[i64]| {
            let mut w = r[..np + ny].to_vec();
            w.extend(vec![0; nx]);
            w.push(r[np + ny]);
            w
        };
        let mut b = BasicSet::universe(joint);
        for r in piece.eqs() {
            b.add_eq(widen(r))?;
        }
        for r in piece.ineqs() {
            b.add_ineq(widen(r))?;
        }
        for (k, pr) in proj.rows().iter().enumerate() {
            // x_k − proj_k(y) − shift_k = 0
            let mut row = vec![0i64; np + ny + nx + 1];
            for c in 0..np + ny {
                row[c] = -pr[c];
            }
            row[np + ny + k] = 1;
            row[np + ny + nx] = pr[np + ny]
                .checked_add(shift[k])
                .map(|v| -v)
                .ok_or(crate::poly::PolyError::Overflow)?;
            b.add_eq(row)?;
        }
        let (img, _exact) = b.project_out(0, ny)?;
        let img = BasicSet::from_rows(target.clone(), img.eqs().to_vec(), img.ineqs().to_vec())?;
        Ok(Set::from_basic(img))
    }

    /// `P` is not of constant thickness along `r`: `max { t : y ∈ P,
    /// y + t·r ∈ P, params ∈ context }` is unbounded.
    pub(super) fn profitable(&self, piece: &BasicSet, r: &[i64]) -> Result<bool, SdrError> {
        let np = self.params.len();
        let n = r.len();
        let nv = np + n + 1;
        let mut sys = LinSystem::new(nv);
        let place = |row: &[i64], t: i64| {
            let mut w = row[..np + n].to_vec();
            w.push(t);
            w.push(row[np + n]);
            w
        };
        for row in piece.eqs() {
            sys.add_eq(place(row, 0));
            sys.add_eq(place(row, dot(&lin(row, np, n), r)?));
        }
        for row in piece.ineqs() {
            sys.add_ineq(place(row, 0));
            sys.add_ineq(place(row, dot(&lin(row, np, n), r)?));
        }
        // The context is a conjunction in practice; with several pieces we
        // use the first (unbounded there implies unbounded in the union).
        if let Some(cp) = self.context.pieces().first() {
            for row in cp.eqs() {
                let mut w = row[..np].to_vec();
                w.extend(vec![0; n + 1]);
                w.push(row[np]);
                sys.add_eq(w);
            }
            for row in cp.ineqs() {
                let mut w = row[..np].to_vec();
                w.extend(vec![0; n + 1]);
                w.push(row[np]);
                sys.add_ineq(w);
            }
        }
        let mut obj = vec![0; nv + 1];
        obj[nv - 1] = 1;
        Ok(matches!(rational_max(&sys, &obj)?, Optimum::Unbounded))
    }

    /// The disjoint pieces of `P − (P + r)`: for each inequality `a·y + b ≥
    /// 0` of `P` with `t = a·r > 0` (in order), the slices `a·y + b = c`
    /// (`0 ≤ c < t`) where the earlier such inequalities have `a'·y + b' ≥
    /// t'`. Each piece has one more independent equality than `P`.
    fn shell(&self, piece: &BasicSet, r: &[i64]) -> Result<Vec<BasicSet>, SdrError> {
        let np = self.params.len();
        let n = r.len();
        let mut pieces = Vec::new();
        let mut earlier: Vec<Vec<i64>> = Vec::new();
        for row in piece.ineqs() {
            let t = dot(&lin(row, np, n), r)?;
            if t <= 0 {
                continue;
            }
            for c in 0..t {
                let mut q = piece.clone();
                let mut eq = row.clone();
                eq[np + n] = eq[np + n]
                    .checked_sub(c)
                    .ok_or(crate::poly::PolyError::Overflow)?;
                q.add_eq(eq)?;
                for e in &earlier {
                    q.add_ineq(e.clone())?;
                }
                if !q.is_empty()? {
                    pieces.push(q.simplify()?);
                }
            }
            // later pieces: a·y + b ≥ t
            let mut ge = row.clone();
            ge[np + n] = ge[np + n]
                .checked_sub(t)
                .ok_or(crate::poly::PolyError::Overflow)?;
            earlier.push(ge);
        }
        Ok(pieces)
    }

    /// Simplifies `job` and returns the new right-hand side of its target.
    pub(super) fn process(
        &mut self,
        s: &mut System,
        job: Job,
        depth: usize,
    ) -> Result<Expr, SdrError> {
        let target_name = s.vars[job.target].name.clone();
        let original = job.original();
        let np = self.params.len();
        let n = job.red.dims().len();
        let Some(piece) = self.piece(&job.red)? else {
            self.decide(&target_name, -1, None, "empty body domain");
            return Ok(original);
        };
        // Only body points that project into the result's domain are ever
        // used: P := P ∩ proj⁻¹(D_X) (when D_X is convex), which makes the
        // share space and the shells those of the reduction actually
        // computed.
        let d_x = s.vars[job.target].domain.clone();
        let mut job = job;
        let piece = match d_x.pieces() {
            [one] => {
                let pre = Set::from_basic(one.clone()).preimage(&job.red.proj)?;
                match pre.pieces() {
                    [p] => {
                        let eff = piece.intersect(p)?.simplify()?;
                        if eff.is_empty()? {
                            self.decide(&target_name, -1, None, "empty body domain");
                            return Ok(identity(job.red.op, job.ty, job.span));
                        }
                        job.red.body_domain = Set::from_basic(eff.clone())
                            .renamed(job.red.body_domain.space().clone())?
                            .simplify()?;
                        eff
                    }
                    _ => piece,
                }
            }
            _ => piece,
        };
        let face_dim = piece.dimension()?;
        if depth > MAX_DEPTH {
            self.decide(&target_name, face_dim, None, "recursion limit");
            return Ok(original);
        }
        let eq_lin: Vec<Vec<i64>> = piece.eqs().iter().map(|r| lin(r, np, n)).collect();
        let basis = share_space(&job.red.body, n, &eq_lin)?;
        if basis.is_empty() {
            self.decide(&target_name, face_dim, None, "no share direction");
            return Ok(original);
        }
        if job.independent {
            return maximal::search(self, s, job, depth, &piece, &basis, face_dim);
        }
        let mut reason = "share directions lie in the projection's kernel";
        for b in &basis {
            let r_x = self.result_shift(&job, b)?;
            if r_x.iter().all(|&v| v == 0) {
                continue;
            }
            let sign = schedule_sign(&job.theta, &r_x)?;
            if sign == 0 {
                reason = "the schedule does not order the reuse direction";
                continue;
            }
            let r: Vec<i64> = b.iter().map(|&v| v * sign).collect();
            match self.prepare(s, &job, &piece, &r)? {
                Err(why) => reason = why,
                Ok(prep) => {
                    // Why this direction: the result's sequential schedule
                    // computes X[x − r_X] before X[x] (dependent reduction:
                    // the only legal orientation).
                    let shift: Vec<String> = r_x.iter().map(|v| (v * sign).to_string()).collect();
                    let detail = format!(
                        "dependent reduction: direction from the schedule (X[x] reuses X[x - ({})], computed earlier)",
                        shift.join(", ")
                    );
                    self.decide_applied(&target_name, face_dim, &piece, r, &prep);
                    if let Some(d) = self.decisions.last_mut() {
                        d.detail = detail;
                    }
                    return self.build(s, &job, depth, prep);
                }
            }
        }
        self.decide(&target_name, face_dim, None, reason);
        Ok(original)
    }

    /// `r_X = proj_lin · r`: the shift of the result a body vector `r`
    /// makes.
    pub(super) fn result_shift(&self, job: &Job, r: &[i64]) -> Result<Vec<i64>, SdrError> {
        job.red
            .proj
            .affs()
            .iter()
            .map(|a| dot(a.dim_coeffs(), r))
            .collect()
    }

    /// The reuse directions the search may try for an independent
    /// reduction, in order of preference: every share-basis vector `b`
    /// with `proj_lin · b ≠ 0` in its preferred orientation, then the same
    /// vectors reversed. The preferred orientation is the one the schedule
    /// orders (`+b` when the schedule does not), except when nothing reads
    /// the target at affine indices (an output, or a table read only at
    /// data-selected points, such as a risk-set sum read at `first[i]`)
    /// and exactly one of `±b` leaves no body facet of `piece` (`a·r ≥ 0`
    /// for every inequality `a·y + c ≥ 0` not on the result alone). Then no
    /// reader can be fused with the recurrence whatever its orientation,
    /// and the orientation without a removed shell, `X[x] = X[x − r_X] ⊕
    /// Add[x]`, needs no inverse (no cancellation in floating point) and
    /// starts from the thin end of the domain (a suffix sum from its empty
    /// end instead of from the total). The search keeps the first of
    /// equally cheap candidates, so this order decides ties.
    pub(super) fn directions(
        &self,
        s: &System,
        job: &Job,
        piece: &BasicSet,
        basis: &[Vec<i64>],
    ) -> Result<Vec<Vec<i64>>, SdrError> {
        let np = self.params.len();
        let n = job.red.dims().len();
        // Facets that constrain the result only (`a_lin · k = 0` on the
        // projection's kernel) are left out: the slice a step along `r`
        // removes there lands outside the result's domain (the piece is
        // restricted to `proj⁻¹(D_X)`), not in a subtraction.
        let proj_lin: Vec<Vec<i64>> = job
            .red
            .proj
            .affs()
            .iter()
            .map(|a| a.dim_coeffs().to_vec())
            .collect();
        let free = !read_affinely(s, job.target);
        // Only needed when the target is free of affine readers.
        let kernel = if free {
            integer_kernel(&proj_lin, n)?
        } else {
            Vec::new()
        };
        let mut body_facets = Vec::new();
        if free {
            for row in piece.ineqs() {
                let a = lin(row, np, n);
                let mut result_only = true;
                for k in &kernel {
                    if dot(&a, k)? != 0 {
                        result_only = false;
                        break;
                    }
                }
                if !result_only {
                    body_facets.push(a);
                }
            }
        }
        // Whether `r` leaves some body facet of the piece (`a·r < 0`).
        let leaves = |r: &[i64]| -> Result<bool, SdrError> {
            for a in &body_facets {
                if dot(a, r)? < 0 {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        let mut first = Vec::new();
        let mut second = Vec::new();
        for b in basis {
            let r_x = self.result_shift(job, b)?;
            if r_x.iter().all(|&v| v == 0) {
                continue;
            }
            let sign = match schedule_sign(&job.theta, &r_x)? {
                0 => 1,
                s => s,
            };
            let fwd: Vec<i64> = b.iter().map(|&v| v * sign).collect();
            let back: Vec<i64> = b.iter().map(|&v| -v * sign).collect();
            if free && leaves(&fwd)? && !leaves(&back)? {
                first.push(back);
                second.push(fwd);
            } else {
                first.push(fwd);
                second.push(back);
            }
        }
        first.append(&mut second);
        Ok(first)
    }

    /// Checks that the reuse vector `r` (with `proj_lin · r ≠ 0`) can be
    /// applied to `piece` (the body domain of `job`, restricted to where
    /// it is used): it must be profitable, and for an operator without an
    /// inverse it must need no subtraction. `Ok(Err(reason))` when not.
    pub(super) fn prepare(
        &self,
        s: &System,
        job: &Job,
        piece: &BasicSet,
        r: &[i64],
    ) -> Result<Result<Prepared, &'static str>, SdrError> {
        let d_x = s.vars[job.target].domain.clone();
        let x_space = d_x.space().clone();
        let r_x = self.result_shift(job, r)?;
        if !self.profitable(piece, r)? {
            return Ok(Err("constant thickness along every share direction"));
        }
        let neg_r: Vec<i64> = r.iter().map(|&v| -v).collect();
        let add_pieces = self.shell(piece, r)?;
        let sub_pieces = self.shell(piece, &neg_r)?;
        let r1 = d_x.intersect(&translate(&d_x, &r_x)?)?;
        let natural = self.image(piece, &job.red.proj, &vec![0; r_x.len()], &x_space)?;
        let r2 = d_x.subtract(&r1)?;
        let r2b = r2.intersect(&translate(&natural, &r_x)?)?.simplify()?;
        let r2a = r2.subtract(&r2b)?.simplify()?;
        let r1 = r1.simplify()?;
        // The removed shell's contributions on R1.
        let mut subs_used = Vec::new();
        for q in &sub_pieces {
            let img = self.image(q, &job.red.proj, &r_x, &x_space)?;
            if !img.intersect(&r1)?.is_empty()? {
                subs_used.push(q.clone());
            }
        }
        if !subs_used.is_empty() && job.red.op != ReduceOp::Add {
            return Ok(Err(
                "the operator has no inverse and the direction needs one",
            ));
        }
        Ok(Ok(Prepared {
            r_x,
            add_pieces,
            subs_used,
            r1,
            r2a,
            r2b,
        }))
    }

    /// Builds the transformed equations (see the module comment).
    pub(super) fn build(
        &mut self,
        s: &mut System,
        job: &Job,
        depth: usize,
        prep: Prepared,
    ) -> Result<Expr, SdrError> {
        let Prepared {
            r_x,
            add_pieces,
            subs_used: sub_pieces,
            r1,
            r2a,
            r2b,
            ..
        } = prep;
        let r_x = &r_x[..];
        let np = self.params.len();
        let x_names = s
            .equation_of(job.target)
            .map(|e| e.indices.clone())
            .unwrap_or_else(|| s.vars[job.target].domain.dims().to_vec());
        let nx = x_names.len();
        let x_space = Space::set(&self.params, &x_names);
        let base = s.vars[job.target].name.clone();
        let dom =
            |set: &Set| -> Result<Set, SdrError> { Ok(set.renamed(x_space.clone())?.simplify()?) };
        // R1 ∪ R2a = D_X − R2b, written as the latter so that it stays one
        // piece when R2b is empty (the usual case).
        let d_x = s.vars[job.target].domain.clone();
        let use_add = if r2b.is_empty()? {
            d_x
        } else {
            d_x.subtract(&r2b)?.simplify()?
        };
        // Added shell: one local per piece, defined where it is used.
        let mut adds: Vec<VarId> = Vec::new();
        if !use_add.is_empty()? {
            let domain = dom(&use_add)?;
            for q in add_pieces {
                let proj = job.red.proj.clone();
                adds.push(self.shell_local(s, job, depth, q, proj, &domain, "add", &x_names)?);
            }
        }
        // Removed shell: proj(y) + r_X, defined on R1.
        let mut subs: Vec<VarId> = Vec::new();
        let r1_domain = dom(&r1)?;
        for q in sub_pieces {
            let mut rows = job.red.proj.rows().to_vec();
            for (row, &d) in rows.iter_mut().zip(r_x) {
                if let Some(c) = row.last_mut() {
                    *c = c.checked_add(d).ok_or(crate::poly::PolyError::Overflow)?;
                }
            }
            let proj = MultiAff::new(
                job.red.proj.domain_space(),
                job.red.proj.space().output.clone(),
                rows,
            )?;
            subs.push(self.shell_local(s, job, depth, q, proj, &r1_domain, "sub", &x_names)?);
        }
        let read = |var: VarId, shift: Option<&[i64]>| -> Result<Expr, SdrError> {
            let rows = (0..nx)
                .map(|k| {
                    let mut r = vec![0; np + nx + 1];
                    r[np + k] = 1;
                    if let Some(d) = shift {
                        r[np + nx] = -d[k];
                    }
                    r
                })
                .collect();
            Ok(Expr {
                kind: ExprKind::Read {
                    var,
                    access: MultiAff::from_rows(x_space.clone(), rows)?,
                },
                ty: job.ty,
                span: job.span,
            })
        };
        let sum_adds = |start: Option<Expr>| -> Result<Option<Expr>, SdrError> {
            let mut acc = start;
            for &id in &adds {
                let term = read(id, None)?;
                acc = Some(match acc {
                    None => term,
                    Some(a) => combine(job.red.op, a, term, job.ty),
                });
            }
            Ok(acc)
        };
        let mut pieces: Vec<(Set, Expr)> = Vec::new();
        if !r1.is_empty()? {
            let mut e = sum_adds(Some(read(job.target, Some(r_x))?))?
                .ok_or_else(|| SdrError::Internal("empty reuse expression".into()))?;
            for &id in &subs {
                e = Expr {
                    kind: ExprKind::Binary(BinOp::Sub, Box::new(e), Box::new(read(id, None)?)),
                    ty: job.ty,
                    span: job.span,
                };
            }
            pieces.push((dom(&r1)?, e));
        }
        if !r2a.is_empty()? {
            let e = match sum_adds(None)? {
                Some(e) => e,
                None => identity(job.red.op, job.ty, job.span),
            };
            pieces.push((dom(&r2a)?, e));
        }
        if !r2b.is_empty()? {
            let original = job.original();
            let id = self.new_local(s, &base, "init", dom(&r2b)?, job.ty, job.span);
            self.define(s, id, &x_names, original);
            pieces.push((dom(&r2b)?, read(id, None)?));
        }
        Ok(match pieces.len() {
            0 => identity(job.red.op, job.ty, job.span),
            _ => Expr {
                kind: ExprKind::Case(pieces),
                ty: job.ty,
                span: job.span,
            },
        })
    }

    /// A new local `base_tag` over `domain`, defined by the reduction of
    /// `job` restricted to the shell piece `piece` with projection `proj`,
    /// itself simplified recursively (its face gets its own reuse choice).
    #[allow(clippy::too_many_arguments)]
    fn shell_local(
        &mut self,
        s: &mut System,
        job: &Job,
        depth: usize,
        piece: BasicSet,
        proj: MultiAff,
        domain: &Set,
        tag: &str,
        x_names: &[String],
    ) -> Result<VarId, SdrError> {
        let red = Reduction {
            proj,
            body_domain: Set::from_basic(piece)
                .renamed(job.red.body_domain.space().clone())?
                .simplify()?,
            ..job.red.clone()
        };
        let base = s.vars[job.target].name.clone();
        let id = self.new_local(s, &base, tag, domain.clone(), job.ty, job.span);
        let sub_job = Job {
            target: id,
            red,
            ty: job.ty,
            span: job.span,
            theta: job.theta.clone(),
            independent: job.independent,
            splits_left: job.splits_left,
        };
        let e = self.process(s, sub_job, depth + 1)?;
        self.define(s, id, x_names, e);
        Ok(id)
    }

    pub(super) fn new_local(
        &mut self,
        s: &mut System,
        base: &str,
        tag: &str,
        domain: Set,
        ty: ElemType,
        span: Span,
    ) -> VarId {
        super::normalize::push_local(
            s,
            &mut self.used,
            &mut self.born,
            base,
            tag,
            domain,
            ty,
            span,
        )
    }

    pub(super) fn define(&mut self, s: &mut System, var: VarId, names: &[String], expr: Expr) {
        s.equations.push(Equation {
            var,
            indices: names.to_vec(),
            span: expr.span,
            expr,
        });
    }
}

/// The identity element of a reduction operator as a constant.
pub fn identity(op: ReduceOp, ty: ElemType, span: Span) -> Expr {
    let kind = match op.identity(ty) {
        Scalar::Int(v) => ExprKind::IntConst(v),
        Scalar::Float(v) => ExprKind::FloatConst(v),
        Scalar::Bool(v) => ExprKind::BoolConst(v),
    };
    Expr { kind, ty, span }
}

/// The sign of the first non-zero entry of `Θ_X · r_X` (0 when the
/// schedule does not order `r_X`).
fn schedule_sign(theta: &[Vec<i64>], r_x: &[i64]) -> Result<i64, SdrError> {
    for row in theta {
        let v = dot(row, r_x)?;
        if v != 0 {
            return Ok(v.signum());
        }
    }
    Ok(0)
}
