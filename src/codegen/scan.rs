//! Polyhedral scanning: from a checked IR system and a legal sequential
//! schedule of its augmented program (`crate::deps`) to a loop program
//! ([`loop_ast::Function`]) that executes every statement instance once, in
//! schedule order.
//!
//! Construction:
//! 1. *Statements → IR.* The IR is walked in the order `deps` builds the
//!    augmented program, so that every polyhedral statement is matched to
//!    what it computes: an equation statement assigns `X[x] = rhs(x)`; an
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

use super::loop_ast::{self, Affine, Bound, Cast, Dim, Expr, Function, LoopVar, MathFn, Stmt, Sym};
use crate::deps::{self, DepsError, StmtKind, SystemSchedule};
use crate::ir::{
    self, AffConstraint, AffExpr, BinOp, Builtin, ConstraintKind, Domain, ElemType, ExprKind,
    ReduceOp, UnOp, VarId,
};
use crate::poly::solver::{self, System};
use crate::poly::PolyError;
use crate::schedule::Scheduler;
use crate::vocab::Scalar;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

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

/// `gcd` on `i64` (non-negative; `1` in the one case, `gcd(i64::MIN, 0)`,
/// whose value does not fit).
fn gcd(a: i64, b: i64) -> i64 {
    i64::try_from(gcd128(i128::from(a), i128::from(b))).unwrap_or(1)
}

/// A polyhedron over `n` variables, rows "variables then constant".
#[derive(Debug, Clone)]
struct Poly {
    n: usize,
    eqs: Vec<Vec<i64>>,
    ineqs: Vec<Vec<i64>>,
}

impl Poly {
    fn to_system(&self) -> System {
        let mut s = System::new(self.n);
        s.eqs = self.eqs.clone();
        s.ineqs = self.ineqs.clone();
        s
    }
}

/// Normalizes an inequality row: divide the variable part by its gcd and
/// floor the constant (exact on integer points).
fn norm_ineq(mut r: Vec<i64>) -> Vec<i64> {
    let n = r.len() - 1;
    let g = r[..n].iter().fold(0, |g, &x| gcd(g, x));
    if g > 1 {
        for x in &mut r[..n] {
            *x /= g;
        }
        r[n] = r[n].div_euclid(g);
    }
    r
}

fn norm_eq(mut r: Vec<i64>) -> Vec<i64> {
    let g = r.iter().fold(0, |g, &x| gcd(g, x));
    if g > 1 {
        for x in &mut r {
            *x /= g;
        }
    }
    r
}

/// `a·x + b·y` row-wise, checked.
fn comb(a: i64, x: &[i64], b: i64, y: &[i64]) -> R<Vec<i64>> {
    x.iter()
        .zip(y)
        .map(|(&u, &v)| {
            ov(a.checked_mul(u)
                .and_then(|p| b.checked_mul(v).and_then(|q| p.checked_add(q))))
        })
        .collect()
}

/// Eliminates variable `col` (rationally; the column stays, zeroed).
fn eliminate(p: &Poly, col: usize) -> R<Poly> {
    let n = p.n;
    // Exact substitution through an equality when one mentions `col`.
    if let Some(k) = p
        .eqs
        .iter()
        .position(|r| r[col].abs() == 1)
        .or_else(|| p.eqs.iter().position(|r| r[col] != 0))
    {
        let e = p.eqs[k].clone();
        let a = e[col];
        let mut out = Poly {
            n,
            eqs: Vec::new(),
            ineqs: Vec::new(),
        };
        for (j, r) in p.eqs.iter().enumerate() {
            if j == k {
                continue;
            }
            let r2 = if r[col] == 0 {
                r.clone()
            } else {
                comb(a, r, -r[col], &e)?
            };
            out.eqs.push(norm_eq(r2));
        }
        for r in &p.ineqs {
            let r2 = if r[col] == 0 {
                r.clone()
            } else {
                // |a|·r − sign(a)·r[col]·e keeps the direction.
                comb(a.abs(), r, -a.signum() * r[col], &e)?
            };
            out.ineqs.push(norm_ineq(r2));
        }
        return cleanup(out);
    }
    let mut out = Poly {
        n,
        eqs: p.eqs.clone(),
        ineqs: Vec::new(),
    };
    let (mut pos, mut neg) = (Vec::new(), Vec::new());
    for r in &p.ineqs {
        match r[col].signum() {
            0 => out.ineqs.push(r.clone()),
            1 => pos.push(r),
            _ => neg.push(r),
        }
    }
    for a in &pos {
        for b in &neg {
            let r = comb(-b[col], a, a[col], b)?;
            out.ineqs.push(norm_ineq(r));
        }
    }
    cleanup(out)
}

/// Dedups, drops trivial rows and prunes redundant inequalities (LP).
fn cleanup(mut p: Poly) -> R<Poly> {
    let n = p.n;
    p.ineqs
        .retain(|r| !(r[..n].iter().all(|&x| x == 0) && r[n] >= 0));
    p.eqs.retain(|r| !r.iter().all(|&x| x == 0));
    p.ineqs.sort();
    p.ineqs.dedup();
    p.eqs.sort();
    p.eqs.dedup();
    if p.ineqs.len() > 1 {
        let red = solver::redundant_ineqs(&p.to_system())?;
        if red.len() < p.ineqs.len() {
            let keep: Vec<Vec<i64>> = p
                .ineqs
                .iter()
                .enumerate()
                .filter(|(k, _)| !red.contains(k))
                .map(|(_, r)| r.clone())
                .collect();
            p.ineqs = keep;
        }
    }
    Ok(p)
}

/// What a statement does.
#[derive(Clone)]
enum Action<'a> {
    /// `X[x] = expr(x)`.
    Assign { var: VarId, expr: &'a ir::Expr },
    /// Nothing (a completion).
    Nothing,
    /// `array[proj(y)] op= body(y)`.
    Accumulate {
        array: usize,
        proj: Vec<AffExpr>,
        op: ReduceOp,
        ty: ElemType,
        body: &'a ir::Expr,
    },
}

/// An accumulator: array, operator and type (initialized at entry).
struct AccArray {
    array: usize,
    op: ReduceOp,
    ty: ElemType,
}

struct Matcher<'a> {
    sys: &'a ir::System,
    stmts: &'a [deps::PolyStmt],
    n_par: usize,
    next: usize,
    actions: Vec<Option<Action<'a>>>,
    /// Extra constraints (over the statement's iterators and params).
    extra: Vec<Vec<AffConstraint>>,
    /// (enclosing statement, reduction node address) → accumulator array.
    acc_of: HashMap<(usize, usize), usize>,
    arrays: Vec<loop_ast::Array>,
    inits: Vec<AccArray>,
    counter: usize,
    /// The system draws random numbers: the function gets the seed as an
    /// extra last parameter.
    has_random: bool,
}

fn cross(a: &[Vec<AffConstraint>], b: &Domain) -> Vec<Vec<AffConstraint>> {
    let mut out = Vec::new();
    for p in a {
        for q in &b.pieces {
            let mut r = p.clone();
            r.extend(q.iter().cloned());
            out.push(r);
        }
    }
    out
}

/// `c(proj(y))`: a constraint over the completion space pulled back to the
/// body space through `proj`.
fn pull_back(c: &AffConstraint, proj: &[AffExpr], nb: usize, n_par: usize) -> R<AffConstraint> {
    let mut a = AffExpr::zero(nb, n_par);
    a.constant = c.aff.constant;
    for (p, &cp) in c.aff.par.iter().enumerate() {
        a.par[p] = cp;
    }
    for (j, &cj) in c.aff.idx.iter().enumerate() {
        if cj == 0 {
            continue;
        }
        let f = proj
            .get(j)
            .ok_or_else(|| ScanError::Internal("projection arity".into()))?;
        for (q, &fq) in f.idx.iter().enumerate() {
            a.idx[q] = ov(a.idx[q].checked_add(ov(cj.checked_mul(fq))?))?;
        }
        for (q, &fq) in f.par.iter().enumerate() {
            a.par[q] = ov(a.par[q].checked_add(ov(cj.checked_mul(fq))?))?;
        }
        a.constant = ov(a.constant.checked_add(ov(cj.checked_mul(f.constant))?))?;
    }
    Ok(AffConstraint {
        aff: a,
        kind: c.kind,
    })
}

/// Rows over `(dims, params, 1)` of a statement domain system.
fn sys_poly(s: &System) -> Poly {
    Poly {
        n: s.n_vars,
        eqs: s.eqs.clone(),
        ineqs: s.ineqs.clone(),
    }
}

fn constraint_row(c: &AffConstraint, n_idx: usize, n_par: usize) -> Vec<i64> {
    let mut r = vec![0i64; n_idx + n_par + 1];
    for (k, &x) in c.aff.idx.iter().enumerate().take(n_idx) {
        r[k] = x;
    }
    for (k, &x) in c.aff.par.iter().enumerate().take(n_par) {
        r[n_idx + k] = x;
    }
    r[n_idx + n_par] = c.aff.constant;
    r
}

/// A symbolic box of a union of polyhedra over `(x_0..x_{d-1}, p)`: per
/// dimension an affine lower bound and extent in the parameters, proven
/// (solver) to contain every piece.
fn symbolic_box(pieces: &[Poly], d: usize, n_par: usize, name: &str) -> R<Vec<Dim>> {
    let mut dims = Vec::new();
    for k in 0..d {
        let mut lows: Vec<Vec<i64>> = Vec::new();
        let mut ups: Vec<Vec<i64>> = Vec::new();
        let mut projs = Vec::new();
        for p in pieces {
            let mut q = p.clone();
            for j in 0..d {
                if j != k {
                    q = eliminate(&q, j)?;
                }
            }
            let mut rows = q.ineqs.clone();
            for e in &q.eqs {
                rows.push(e.clone());
                rows.push(e.iter().map(|x| -x).collect());
            }
            for r in rows {
                let a = r[k];
                // a·x_k + e ≥ 0 with e over params: candidate only if |a| = 1.
                let mut e: Vec<i64> = r[d..].to_vec();
                if a == 1 {
                    // x_k ≥ −e
                    e.iter_mut().for_each(|x| *x = -*x);
                    lows.push(e);
                } else if a == -1 {
                    ups.push(e);
                }
            }
            projs.push(p.clone());
        }
        // Valid: no point of any piece with x_k < lo (resp. > up).
        let valid = |bound: &[i64], lower: bool| -> R<bool> {
            for p in &projs {
                let mut s = p.to_system();
                let mut r = vec![0i64; d + n_par + 1];
                // lower: lo − x_k − 1 ≥ 0 ; upper: x_k − up − 1 ≥ 0
                for (j, &b) in bound.iter().enumerate() {
                    r[d + j] = if lower { b } else { ov(b.checked_neg())? };
                }
                r[k] = if lower { -1 } else { 1 };
                r[d + n_par] = ov(r[d + n_par].checked_sub(1))?;
                s.add_ineq(r);
                if solver::integer_sample(&s)?.is_some() {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        let mut lo = None;
        for c in &lows {
            if valid(c, true)? {
                lo = Some(c.clone());
                break;
            }
        }
        let mut up = None;
        for c in &ups {
            if valid(c, false)? {
                up = Some(c.clone());
                break;
            }
        }
        let (Some(lo), Some(up)) = (lo, up) else {
            if pieces.is_empty() {
                dims.push(Dim {
                    lower: Affine::cst(0),
                    extent: Affine::cst(0),
                });
                continue;
            }
            return Err(ScanError::Unsupported(format!(
                "array `{name}`: no affine bounding box in dimension {k}"
            )));
        };
        let to_aff = |v: &[i64]| -> Affine {
            let mut a = Affine::cst(v[n_par]);
            for (p, &c) in v[..n_par].iter().enumerate() {
                if c != 0 {
                    a.terms.push((Sym::Param(p), c));
                }
            }
            a
        };
        // extent = up − lo + 1
        let ext: Vec<i64> = ov(up
            .iter()
            .zip(&lo)
            .map(|(u, l)| u.checked_sub(*l))
            .collect::<Option<Vec<i64>>>())?;
        let mut ext = ext;
        ext[n_par] = ov(ext[n_par].checked_add(1))?;
        dims.push(Dim {
            lower: to_aff(&lo),
            extent: to_aff(&ext),
        });
    }
    Ok(dims)
}

fn domain_polys(d: &Domain, n_par: usize) -> Vec<Poly> {
    let nd = d.n_dims();
    d.pieces
        .iter()
        .map(|piece| {
            let mut p = Poly {
                n: nd + n_par,
                eqs: Vec::new(),
                ineqs: Vec::new(),
            };
            for c in piece {
                let r = constraint_row(c, nd, n_par);
                match c.kind {
                    ConstraintKind::Eq => p.eqs.push(r),
                    ConstraintKind::Ge => p.ineqs.push(r),
                }
            }
            p
        })
        .collect()
}

impl<'a> Matcher<'a> {
    fn take(&mut self, kind: StmtKind) -> R<usize> {
        let k = self.next;
        let st = self
            .stmts
            .get(k)
            .ok_or_else(|| ScanError::Internal("fewer statements than the IR needs".into()))?;
        if st.kind != kind {
            return Err(ScanError::Internal(format!(
                "statement {} is not of the expected kind",
                st.name
            )));
        }
        self.next += 1;
        Ok(k)
    }

    fn walk(
        &mut self,
        e: &'a ir::Expr,
        stmt: usize,
        pieces: &[Vec<AffConstraint>],
        top: bool,
    ) -> R<()> {
        match &e.kind {
            ExprKind::IntConst(_)
            | ExprKind::FloatConst(_)
            | ExprKind::BoolConst(_)
            | ExprKind::Index(_)
            | ExprKind::Read { .. } => Ok(()),
            ExprKind::IndirectRead { indices, .. } => {
                for x in indices {
                    self.walk(x, stmt, pieces, false)?;
                }
                Ok(())
            }
            ExprKind::Unary(_, a) => self.walk(a, stmt, pieces, false),
            ExprKind::Binary(_, a, b) => {
                self.walk(a, stmt, pieces, false)?;
                self.walk(b, stmt, pieces, false)
            }
            ExprKind::If(c, a, b) => {
                self.walk(c, stmt, pieces, false)?;
                self.walk(a, stmt, pieces, false)?;
                self.walk(b, stmt, pieces, false)
            }
            ExprKind::Case(branches) => {
                for (d, x) in branches {
                    self.walk(x, stmt, &cross(pieces, d), false)?;
                }
                Ok(())
            }
            ExprKind::Restrict(d, x) => self.walk(x, stmt, &cross(pieces, d), false),
            ExprKind::Builtin(_, args) => {
                for x in args {
                    self.walk(x, stmt, pieces, false)?;
                }
                Ok(())
            }
            ExprKind::External(_, args) => {
                for x in args {
                    self.walk(x, stmt, pieces, false)?;
                }
                Ok(())
            }
            ExprKind::Random(_, args, site) => {
                if site.var >= 1 << 16 || site.ordinal >= 1 << 16 {
                    return Err(ScanError::Unsupported(
                        "too many variables or random call sites for the JIT".into(),
                    ));
                }
                self.has_random = true;
                for x in args {
                    self.walk(x, stmt, pieces, false)?;
                }
                Ok(())
            }
            ExprKind::Categorical(c) => {
                if c.site.var >= 1 << 16 || c.site.ordinal >= 1 << 16 {
                    return Err(ScanError::Unsupported(
                        "too many variables or random call sites for the JIT".into(),
                    ));
                }
                self.has_random = true;
                self.walk(&c.weight, stmt, pieces, false)
            }
            ExprKind::Reduce(r) => self.reduce(e, r, stmt, pieces, top),
        }
    }

    fn reduce(
        &mut self,
        e: &'a ir::Expr,
        r: &'a ir::Reduction,
        stmt: usize,
        pieces: &[Vec<AffConstraint>],
        top: bool,
    ) -> R<()> {
        let var = self.stmts[stmt].var;
        let st_dims = self.stmts[stmt].dims.len();
        // The completion domain: the enclosing statement's domain (and the
        // context piece when there is exactly one).
        let mut comp_extra: Vec<AffConstraint> = Vec::new();
        let array = if top {
            // Accumulate into the variable itself.
            if !self.inits.iter().any(|a| a.array == var) {
                self.inits.push(AccArray {
                    array: var,
                    op: r.op,
                    ty: e.ty,
                });
            }
            var
        } else {
            for _ in pieces {
                let c = self.take(StmtKind::Complete)?;
                self.actions[c] = Some(Action::Nothing);
            }
            if pieces.len() == 1 {
                comp_extra = pieces[0].clone();
            }
            // A new accumulator over the box of the enclosing statement.
            let dom = sys_poly(&self.stmts[stmt].domain);
            self.counter += 1;
            let name = format!("{}_red{}", self.sys.vars[var].name, self.counter);
            let dims = symbolic_box(std::slice::from_ref(&dom), st_dims, self.n_par, &name)?;
            self.arrays.push(loop_ast::Array {
                name,
                ty: e.ty,
                dims,
                domain: None,
            });
            let id = self.arrays.len() - 1;
            self.inits.push(AccArray {
                array: id,
                op: r.op,
                ty: e.ty,
            });
            self.acc_of
                .insert((stmt, r as *const ir::Reduction as usize), id);
            id
        };
        // Pull back the completion statement's domain (and context piece).
        let nb = r.dims.len();
        let mut restrict = Vec::new();
        let comp = &self.stmts[stmt].domain;
        let rows: Vec<(ConstraintKind, &Vec<i64>)> = comp
            .eqs
            .iter()
            .map(|r| (ConstraintKind::Eq, r))
            .chain(comp.ineqs.iter().map(|r| (ConstraintKind::Ge, r)))
            .collect();
        for (kind, row) in rows {
            let c = AffConstraint {
                aff: AffExpr {
                    idx: row[..st_dims].to_vec(),
                    par: row[st_dims..st_dims + self.n_par].to_vec(),
                    constant: row[st_dims + self.n_par],
                },
                kind,
            };
            restrict.push(pull_back(&c, &r.proj, nb, self.n_par)?);
        }
        for c in &comp_extra {
            let mut c = c.clone();
            c.aff.idx.resize(st_dims, 0);
            restrict.push(pull_back(&c, &r.proj, nb, self.n_par)?);
        }
        for _ in &r.body_domain.pieces {
            let acc = self.take(StmtKind::Accumulate)?;
            self.actions[acc] = Some(Action::Accumulate {
                array,
                proj: r.proj.clone(),
                op: r.op,
                ty: e.ty,
                body: &r.body,
            });
            self.extra[acc] = restrict.clone();
            self.walk(&r.body, acc, &[Vec::new()], false)?;
        }
        Ok(())
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
    for v in &sys.vars {
        let dims = symbolic_box(
            &domain_polys(&v.domain, n_par),
            v.domain.n_dims(),
            n_par,
            &v.name,
        )?;
        arrays.push(loop_ast::Array {
            name: v.name.clone(),
            ty: v.ty,
            dims,
            domain: Some(v.domain.clone()),
        });
    }
    let mut m = Matcher {
        sys,
        stmts,
        n_par,
        next: 0,
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
        for _ in &sys.vars[eq.var].domain.pieces {
            mine.push(m.take(StmtKind::Equation)?);
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
    if m.next != stmts.len() {
        return Err(ScanError::Internal(
            "more statements than the IR accounts for".into(),
        ));
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
            let mut up = d.lower.clone();
            up.terms.extend(d.extent.terms.iter().cloned());
            up.constant = ov(up
                .constant
                .checked_add(d.extent.constant)
                .and_then(|c| c.checked_sub(1)))?;
            s = Stmt::For {
                var: vars[k],
                lower: Bound::aff(d.lower.clone()),
                upper: Bound::aff(up),
                body: vec![s],
            };
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
        let mut dom = sys_poly(&st.domain);
        let d = st.dims.len();
        for c in &m.extra[k] {
            let r = constraint_row(c, d, n_par);
            match c.kind {
                ConstraintKind::Eq => dom.eqs.push(r),
                ConstraintKind::Ge => dom.ineqs.push(r),
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
                    let mut s = c.to_system();
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
    let mut tvals = Vec::new();
    body.extend(g.level(&ts, &all, 0, n_t, &mut tvals, &mut guards)?);
    let mut params = sys.params.clone();
    let mut context = sys.context.clone();
    if m.has_random {
        params.push("seed".to_string());
        // Constraints gain a zero coefficient for the seed.
        let widen = |d: &mut Domain| {
            for piece in &mut d.pieces {
                for c in piece {
                    c.aff.par.resize(n_par + 1, 0);
                }
            }
        };
        widen(&mut context);
        for a in &mut m.arrays {
            if let Some(d) = &mut a.domain {
                widen(d);
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

/// A statement in time space.
struct TimeStmt<'a> {
    index: usize,
    action: Action<'a>,
    /// `i_j = (n_j · (t, p, 1)) / den_j`: per iterator a numerator row
    /// `n_j` over `(t, p, 1)` and a denominator `den_j ≥ 1` in lowest
    /// terms. At the points of the time-space domain that are images of
    /// statement instances the division is exact; at the other integer
    /// points of the (rational) time-space domain some division is not.
    iters: Vec<(Vec<i64>, i64)>,
    /// `proj[k]`: projection onto `(t_0..t_{k-1}, p)` (rows over `(t, p, 1)`),
    /// `proj[n_t]` the exact time-space domain.
    proj: Vec<Poly>,
    /// Scalar value per dimension (when the row is constant).
    scalar: Vec<Option<i64>>,
    param_guards: Vec<(Vec<i64>, bool)>,
    /// A bounding box of the statement's domain (per iterator, affine in
    /// the parameters) when some `den_j > 1`: extra bounds of the one-trip
    /// loops, implied at every instance, that let the JIT's interval
    /// analysis bound the iterators.
    ibox: Option<Vec<Dim>>,
}

/// `gcd` on `i128` (non-negative result).
fn gcd128(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    i128::try_from(a).unwrap_or(1)
}

/// The determinant of the square integer matrix `m` (Bareiss' fraction-free
/// elimination: every intermediate is a minor of `m`, and every division
/// is exact). `None` on `i128` overflow (only).
fn det(m: &[Vec<i64>]) -> Option<i128> {
    let d = m.len();
    let mut a: Vec<Vec<i128>> = m
        .iter()
        .map(|r| r.iter().map(|&x| i128::from(x)).collect())
        .collect();
    let mut sign = 1i128;
    let mut prev = 1i128;
    for c in 0..d {
        let Some(p) = (c..d).find(|&r| a[r][c] != 0) else {
            return Some(0);
        };
        if p != c {
            a.swap(p, c);
            sign = -sign;
        }
        for r in c + 1..d {
            for j in c + 1..d {
                let x = a[r][j]
                    .checked_mul(a[c][c])?
                    .checked_sub(a[r][c].checked_mul(a[c][j])?)?;
                a[r][j] = x.checked_div(prev)?;
            }
            a[r][c] = 0;
        }
        prev = a[c][c];
    }
    if d == 0 {
        return Some(1);
    }
    a[d - 1][d - 1].checked_mul(sign)
}

/// A rational row `num / den` (`den ≥ 1`).
type RatRow = (Vec<i64>, i64);

/// The exact inverse of the square integer matrix `m`: row `j` of `m⁻¹` is
/// `num_j / den_j` with `num_j` integer, `den_j ≥ 1` and
/// `gcd(num_j, den_j) = 1`. `Ok(None)` when `m` is singular.
///
/// Gauss–Jordan elimination on `[m | I]` with integer row operations
/// (`row_r ← a·row_r − b·row_c`, each row divided by the gcd of its
/// entries afterwards); at the end the left block is diagonal, so row `j`
/// of the right block divided by the diagonal entry is row `j` of `m⁻¹`.
fn rational_inverse(m: &[Vec<i64>]) -> R<Option<Vec<RatRow>>> {
    let d = m.len();
    let mut a: Vec<Vec<i128>> = m
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut row: Vec<i128> = r.iter().map(|&x| i128::from(x)).collect();
            row.extend((0..d).map(|j| i128::from(i == j)));
            row
        })
        .collect();
    let reduce = |row: &mut Vec<i128>| {
        let g = row.iter().fold(0i128, |g, &x| gcd128(g, x));
        if g > 1 {
            row.iter_mut().for_each(|x| *x /= g);
        }
    };
    for c in 0..d {
        let Some(p) = (c..d)
            .filter(|&r| a[r][c] != 0)
            .min_by_key(|&r| a[r][c].unsigned_abs())
        else {
            return Ok(None);
        };
        a.swap(c, p);
        let pivot = a[c].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r == c || row[c] == 0 {
                continue;
            }
            let g = gcd128(pivot[c], row[c]);
            let (pa, rb) = (pivot[c] / g, row[c] / g);
            for (x, &y) in row.iter_mut().zip(&pivot) {
                let v = x
                    .checked_mul(pa)
                    .and_then(|u| y.checked_mul(rb).and_then(|w| u.checked_sub(w)));
                *x = v.ok_or(ScanError::Overflow)?;
            }
            reduce(row);
        }
    }
    let mut inv = Vec::with_capacity(d);
    for (j, row) in a.iter().enumerate() {
        let mut den = row[j];
        let mut num: Vec<i128> = row[d..].to_vec();
        if den < 0 {
            den = den.checked_neg().ok_or(ScanError::Overflow)?;
            for x in &mut num {
                *x = x.checked_neg().ok_or(ScanError::Overflow)?;
            }
        }
        let g = num.iter().fold(den, |g, &x| gcd128(g, x));
        let conv = |x: i128| i64::try_from(x / g).map_err(|_| ScanError::Overflow);
        inv.push((
            num.iter().map(|&x| conv(x)).collect::<R<Vec<i64>>>()?,
            conv(den)?,
        ));
    }
    Ok(Some(inv))
}

/// Upper limit on the number of row subsets [`choose_rows`] examines.
const MAX_ROW_SUBSETS: usize = 4096;

/// Chooses `d` schedule rows (indices into `rows`, ascending) whose
/// iterator parts form a non-singular matrix `M`, minimizing `|det M|`
/// (1 = unimodular: the statement's iterators are integer affine functions
/// of the time dimensions). Among equal `|det M|` the lexicographically
/// first subset wins; that is the greedy choice of the first independent
/// rows when it is optimal. Subsets are enumerated in lexicographic order
/// (at most [`MAX_ROW_SUBSETS`] of them, after the greedy one). `None`
/// when the rows have rank `< d`.
fn choose_rows(rows: &[Vec<i64>], d: usize) -> R<Option<Vec<usize>>> {
    let part =
        |s: &[usize]| -> Vec<Vec<i64>> { s.iter().map(|&k| rows[k][..d].to_vec()).collect() };
    // Greedy: the first independent rows (the lexicographically first basis).
    let mut chosen: Vec<usize> = Vec::new();
    for k in 0..rows.len() {
        if chosen.len() == d {
            break;
        }
        chosen.push(k);
        let m = part(&chosen);
        if rank(&m)? < chosen.len() {
            chosen.pop();
        }
    }
    if chosen.len() < d {
        return Ok(None);
    }
    let mut best_det = det(&part(&chosen)).map(i128::unsigned_abs);
    let mut best = chosen;
    if best_det == Some(1) {
        return Ok(Some(best));
    }
    let cand: Vec<usize> = (0..rows.len())
        .filter(|&k| rows[k][..d].iter().any(|&x| x != 0))
        .collect();
    let mut idx: Vec<usize> = (0..d).collect();
    let mut seen = 0;
    if cand.len() < d {
        return Ok(Some(best));
    }
    loop {
        seen += 1;
        if seen > MAX_ROW_SUBSETS {
            break;
        }
        let s: Vec<usize> = idx.iter().map(|&q| cand[q]).collect();
        if let Some(v) = det(&part(&s)).map(i128::unsigned_abs) {
            let better = v != 0 && best_det.is_none_or(|b| v < b);
            if better {
                best_det = Some(v);
                best = s;
                if v == 1 {
                    break;
                }
            }
        }
        // Next combination of d out of cand.len().
        let n = cand.len();
        let Some(pos) = (0..d).rev().find(|&q| idx[q] < n - d + q) else {
            break;
        };
        idx[pos] += 1;
        for q in pos + 1..d {
            idx[q] = idx[q - 1] + 1;
        }
    }
    Ok(Some(best))
}

/// Rank of an integer matrix (fraction-free elimination in `i128`, rows
/// divided by their gcd after each step).
fn rank(m: &[Vec<i64>]) -> R<usize> {
    let mut a: Vec<Vec<i128>> = m
        .iter()
        .map(|r| r.iter().map(|&x| i128::from(x)).collect())
        .collect();
    let cols = a.first().map_or(0, Vec::len);
    let mut r = 0;
    for c in 0..cols {
        let Some(p) = (r..a.len()).find(|&q| a[q][c] != 0) else {
            continue;
        };
        a.swap(r, p);
        let pivot = a[r].clone();
        for row in a.iter_mut().skip(r + 1) {
            if row[c] == 0 {
                continue;
            }
            let g = gcd128(pivot[c], row[c]);
            let (pa, rb) = (pivot[c] / g, row[c] / g);
            for (x, &y) in row.iter_mut().zip(&pivot) {
                let v = x
                    .checked_mul(pa)
                    .and_then(|u| y.checked_mul(rb).and_then(|w| u.checked_sub(w)));
                *x = v.ok_or(ScanError::Overflow)?;
            }
            let g = row.iter().fold(0i128, |g, &x| gcd128(g, x));
            if g > 1 {
                row.iter_mut().for_each(|x| *x /= g);
            }
        }
        r += 1;
    }
    Ok(r)
}

#[allow(clippy::too_many_arguments)]
fn time_space<'a>(
    index: usize,
    name: &str,
    d: usize,
    n_par: usize,
    n_t: usize,
    rows: &[Vec<i64>],
    dom: &Poly,
    action: Action<'a>,
) -> R<TimeStmt<'a>> {
    let Some(chosen) = choose_rows(rows, d)? else {
        return Err(ScanError::Unsupported(format!(
            "the schedule of statement {name} is not injective"
        )));
    };
    let mmat: Vec<Vec<i64>> = chosen.iter().map(|&k| rows[k][..d].to_vec()).collect();
    let Some(inv) = rational_inverse(&mmat)? else {
        return Err(ScanError::Internal(format!(
            "the chosen schedule rows of statement {name} are singular"
        )));
    };
    let w = n_t + n_par + 1;
    // i_j = Σ_q inv[j][q]·(t_{chosen q} − rest_q(p, 1)), with
    // inv[j] = num_j / den_j: the numerator row over (t, p, 1).
    let mut iters = Vec::new();
    for (num, den) in inv.iter() {
        let mut r = vec![0i64; w];
        for (q, &c) in num.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let ck = chosen[q];
            r[ck] = ov(r[ck].checked_add(c))?;
            for p in 0..=n_par {
                let v = ov(c.checked_mul(rows[ck][d + p]))?;
                r[n_t + p] = ov(r[n_t + p].checked_sub(v))?;
            }
        }
        // Lowest terms: already so, since the t columns are num_j (kept as
        // a cheap guarantee of the invariant the one-trip loops rely on).
        let g = r.iter().fold(*den, |g, &x| gcd(g, x));
        let den = if g > 1 {
            r.iter_mut().for_each(|x| *x /= g);
            den / g
        } else {
            *den
        };
        iters.push((r, den));
    }
    // The common denominator L of the iterators: L·i(t) is integral.
    let mut l = 1i64;
    for (_, den) in &iters {
        l = ov(l.checked_mul(den / gcd(l, *den)))?;
    }
    // L·row(i(t), p, 1) for a row over (i, p, 1) → a row over (t, p, 1).
    let subst = |row: &[i64]| -> R<Vec<i64>> {
        let mut out = vec![0i64; w];
        for (q, &c) in row[d..=d + n_par].iter().enumerate() {
            out[n_t + q] = ov(c.checked_mul(l))?;
        }
        for (j, (it, den)) in iters.iter().enumerate() {
            if row[j] == 0 {
                continue;
            }
            let f = ov(row[j].checked_mul(l / den))?;
            for q in 0..w {
                out[q] = ov(out[q].checked_add(ov(f.checked_mul(it[q]))?))?;
            }
        }
        Ok(out)
    };
    let mut full = Poly {
        n: n_t + n_par,
        eqs: Vec::new(),
        ineqs: Vec::new(),
    };
    for r in &dom.eqs {
        full.eqs.push(norm_eq(subst(r)?));
    }
    for r in &dom.ineqs {
        full.ineqs.push(norm_ineq(subst(r)?));
    }
    let mut scalar = Vec::new();
    for (k, r) in rows.iter().enumerate() {
        let is_const = r[..d + n_par].iter().all(|&x| x == 0);
        scalar.push(is_const.then_some(r[d + n_par]));
        if chosen.contains(&k) {
            continue;
        }
        // L·t_k − L·θ_k(i(t)) = 0
        let mut e = subst(r)?;
        e.iter_mut().for_each(|x| *x = -*x);
        e[k] = ov(e[k].checked_add(l))?;
        full.eqs.push(norm_eq(e));
    }
    let ibox = if iters.iter().any(|(_, den)| *den > 1) {
        match symbolic_box(std::slice::from_ref(dom), d, n_par, name) {
            Ok(b) => Some(b),
            // No affine box: the one-trip loops get no extra bounds.
            Err(ScanError::Unsupported(_)) => None,
            Err(e) => return Err(e),
        }
    } else {
        None
    };
    let full = cleanup(full)?;
    let mut proj = vec![full.clone()];
    let mut cur = full;
    for k in (0..n_t).rev() {
        cur = eliminate(&cur, k)?;
        proj.push(cur.clone());
    }
    proj.reverse();
    Ok(TimeStmt {
        index,
        action,
        iters,
        proj,
        scalar,
        param_guards: Vec::new(),
        ibox,
    })
}

/// The function's loop variable names, made unique: `name`, then
/// `name_2`, `name_3`, … (the first one not taken). Constant time per
/// name: the set of names taken, and per base name the suffix tried last
/// (names are never released, so the ones below it stay taken).
#[derive(Default)]
struct Names {
    list: Vec<String>,
    taken: HashSet<String>,
    next: HashMap<String, usize>,
}

impl Names {
    fn fresh(&mut self, name: &str) -> LoopVar {
        let mut c = self.next.get(name).copied().unwrap_or(1);
        let mut n = if c == 1 {
            name.to_string()
        } else {
            format!("{name}_{c}")
        };
        while self.taken.contains(&n) {
            c += 1;
            n = format!("{name}_{c}");
        }
        self.next.insert(name.to_string(), c);
        self.taken.insert(n.clone());
        self.list.push(n);
        LoopVar(self.list.len() - 1)
    }
}

struct Gen<'a> {
    n_par: usize,
    loop_vars: Names,
    acc_of: &'a HashMap<(usize, usize), usize>,
    sys: &'a ir::System,
    /// (statement, iterator) → the loop variable of its one-trip loop,
    /// while that loop encloses the code being generated.
    bound_iters: HashMap<(usize, usize), LoopVar>,
}

/// A bound term `t_k ≥ ceil(e/d)` or `t_k ≤ floor(e/d)`: (e over (t, p, 1), d).
type Term = (Vec<i64>, i64);

impl Gen<'_> {
    fn fresh(&mut self, name: String) -> LoopVar {
        self.loop_vars.fresh(&name)
    }

    /// Affine of a row over `(t, p, 1)` (columns `t_j` for `j < tvals.len()`
    /// replaced by their values; later `t` columns must be zero).
    fn row_aff(&self, r: &[i64], n_t: usize, tvals: &[Affine]) -> R<Affine> {
        lin_comb(
            &r[..n_t],
            tvals,
            &r[n_t..n_t + self.n_par],
            r[n_t + self.n_par],
            "time dimension out of scope",
        )
    }

    fn row_cond(&self, r: &[i64], n_t: usize, tvals: &[Affine], eq: bool) -> R<Expr> {
        let a = self.row_aff(r, n_t, tvals)?;
        Ok(Expr::bin(
            if eq {
                loop_ast::BinOp::Eq
            } else {
                loop_ast::BinOp::Ge
            },
            Expr::Aff(a),
            Expr::Int(0),
        ))
    }

    /// Bound terms on `t_k` in `P_{k+1}`: (lowers, uppers).
    fn terms(p: &Poly, k: usize) -> (Vec<Term>, Vec<Term>) {
        let mut lo = Vec::new();
        let mut up = Vec::new();
        let mut add = |r: &Vec<i64>| {
            let a = r[k];
            if a > 0 {
                // a t + e ≥ 0 → t ≥ ceil(−e/a)
                let mut e: Vec<i64> = r.iter().map(|x| x.saturating_neg()).collect();
                e[k] = 0;
                lo.push((e, a));
            } else if a < 0 {
                let mut e = r.clone();
                e[k] = 0;
                up.push((e, a.saturating_neg()));
            }
        };
        for r in &p.ineqs {
            add(r);
        }
        for r in &p.eqs {
            add(r);
            let neg: Vec<i64> = r.iter().map(|x| x.saturating_neg()).collect();
            add(&neg);
        }
        (lo, up)
    }

    /// A bound on `t_k` valid for every statement of `group` (checked with
    /// [`Gen::implied`]) when no statement's own term is: for an upper
    /// bound the sum of one term per statement (the first, over a common
    /// denominator; valid when the other statements' terms are
    /// non-negative there, e.g. `t ≤ (K − 1) + (D − 1)` for `t ≤ K − 1`
    /// and `t ≤ D − 1` with `K, D ≥ 1`); for a lower bound the smallest
    /// constant term, or `0`. `None` when no candidate is valid. A single
    /// loop then replaces the run-time choice between the statements'
    /// bounds, which duplicates the loop (and, nested, multiplies).
    fn common_bound(
        ts: &[TimeStmt],
        group: &[usize],
        per: &[(Vec<Term>, Vec<Term>)],
        k: usize,
        lower: bool,
    ) -> R<Option<Term>> {
        let picks: Vec<&Term> = per
            .iter()
            .filter_map(|(l, u)| if lower { l.first() } else { u.first() })
            .collect();
        let Some(first) = picks.first() else {
            return Ok(None);
        };
        let w = first.0.len();
        let mut cands: Vec<Term> = Vec::new();
        if lower {
            let consts = picks
                .iter()
                .filter(|(e, _)| e[..w - 1].iter().all(|&x| x == 0))
                .map(|(e, d)| e[w - 1].div_euclid(*d));
            let c = consts.min().map_or(0, |c| c.min(0));
            let mut e = vec![0i64; w];
            e[w - 1] = c;
            cands.push((e, 1));
            if c != 0 {
                cands.push((vec![0i64; w], 1));
            }
        } else {
            let mut distinct: Vec<&Term> = Vec::new();
            for t in picks {
                if !distinct.contains(&t) {
                    distinct.push(t);
                }
            }
            // Σ e_i/d_i = (Σ (L/d_i)·e_i) / L
            let mut l = 1i64;
            for (_, d) in &distinct {
                l = ov(l.checked_mul(d / gcd(l, *d)))?;
            }
            let mut e = vec![0i64; w];
            for (ei, d) in &distinct {
                let f = l / d;
                for (x, &y) in e.iter_mut().zip(ei) {
                    *x = ov(x.checked_add(ov(f.checked_mul(y))?))?;
                }
            }
            cands.push((e, l));
        }
        for c in cands {
            let mut ok = true;
            for &s in group {
                if !Self::implied(&ts[s].proj[k + 1], k, &c, lower)? {
                    ok = false;
                    break;
                }
            }
            if ok {
                return Ok(Some(c));
            }
        }
        Ok(None)
    }

    /// True when every point of `p` satisfies `t_k ≥ ceil(e/d)` (lower) or
    /// `t_k ≤ floor(e/d)`.
    fn implied(p: &Poly, k: usize, t: &Term, lower: bool) -> R<bool> {
        let (e, d) = t;
        // violation: lower: e − d·t_k − 1 ≥ 0 ; upper: d·t_k − e − 1 ≥ 0
        let mut r: Vec<i64> = if lower {
            e.clone()
        } else {
            e.iter().map(|x| x.saturating_neg()).collect()
        };
        r[k] = if lower { -d } else { *d };
        let n = r.len() - 1;
        r[n] = ov(r[n].checked_sub(1))?;
        let mut s = p.to_system();
        s.add_ineq(r);
        Ok(solver::integer_sample(&s)?.is_none())
    }

    fn term_cond(&self, t: &Term, k: usize, n_t: usize, tvals: &[Affine], lower: bool) -> R<Expr> {
        // lower: d·t_k − e ≥ 0 ; upper: e − d·t_k ≥ 0
        let (e, d) = t;
        let mut r: Vec<i64> = if lower {
            e.iter().map(|x| x.saturating_neg()).collect()
        } else {
            e.clone()
        };
        r[k] = if lower { *d } else { -d };
        self.row_cond(&r, n_t, tvals, false)
    }

    fn bound(&self, ts: &[Term], n_t: usize, tvals: &[Affine]) -> R<Bound> {
        let mut terms = Vec::new();
        for (e, d) in ts {
            terms.push(loop_ast::BoundTerm {
                expr: self.row_aff(e, n_t, tvals)?,
                div: *d,
            });
        }
        Ok(Bound { terms })
    }

    #[allow(clippy::too_many_arguments)]
    fn level(
        &mut self,
        ts: &[TimeStmt],
        group: &[usize],
        k: usize,
        n_t: usize,
        tvals: &mut Vec<Affine>,
        guards: &mut Vec<Vec<Expr>>,
    ) -> R<Vec<Stmt>> {
        if group.is_empty() {
            return Ok(Vec::new());
        }
        // A lone statement whose rational iterators are determined by the
        // time dimensions bound so far: their one-trip (integrality) loops
        // enclose the rest of its nest, so that the inner loops do not run
        // at times that are not images of instances.
        if group.len() == 1 {
            let t = &ts[group[0]];
            let ready: Vec<usize> = t
                .iters
                .iter()
                .enumerate()
                .filter(|(j, (r, den))| {
                    *den > 1
                        && !self.bound_iters.contains_key(&(t.index, *j))
                        && r[k..n_t].iter().all(|&c| c == 0)
                })
                .map(|(j, _)| j)
                .collect();
            if !ready.is_empty() {
                let mut made = Vec::new();
                for &j in &ready {
                    let v = self.fresh(format!("i{j}"));
                    self.bound_iters.insert((t.index, j), v);
                    made.push((j, v));
                }
                let inner = self.level(ts, group, k, n_t, tvals, guards);
                for &j in &ready {
                    self.bound_iters.remove(&(t.index, j));
                }
                let mut out = inner?;
                for (j, v) in made.into_iter().rev() {
                    out = vec![self.one_trip(t, j, v, n_t, tvals, out)?];
                }
                return Ok(out);
            }
        }
        // A lone statement with pending guards: hoist them here.
        if group.len() == 1 && !guards[group[0]].is_empty() {
            let conds = std::mem::take(&mut guards[group[0]]);
            let inner = self.level(ts, group, k, n_t, tvals, guards)?;
            return Ok(vec![Stmt::If {
                cond: and_all(conds),
                then: inner,
                els: Vec::new(),
            }]);
        }
        if k == n_t {
            let mut out = Vec::new();
            for &s in group {
                let st = self.stmt_body(&ts[s], n_t, tvals)?;
                let conds = std::mem::take(&mut guards[s]);
                if conds.is_empty() {
                    out.push(st);
                } else {
                    out.push(Stmt::If {
                        cond: and_all(conds),
                        then: vec![st],
                        els: Vec::new(),
                    });
                }
            }
            return Ok(out);
        }
        if group.iter().all(|&s| ts[s].scalar[k].is_some()) {
            let mut vals: Vec<i64> = group.iter().filter_map(|&s| ts[s].scalar[k]).collect();
            vals.sort_unstable();
            vals.dedup();
            let mut out = Vec::new();
            for v in vals {
                let sub: Vec<usize> = group
                    .iter()
                    .copied()
                    .filter(|&s| ts[s].scalar[k] == Some(v))
                    .collect();
                tvals.push(Affine::cst(v));
                let r = self.level(ts, &sub, k + 1, n_t, tvals, guards);
                tvals.pop();
                out.extend(r?);
            }
            return Ok(out);
        }
        // Separation: statements whose instances are ordered along t_k
        // (at every point of the outer dimensions) get loops of their own.
        if group.len() > 1 {
            if let Some(parts) = Self::separate(ts, group, k)? {
                let mut out = Vec::new();
                for part in parts {
                    out.extend(self.level(ts, &part, k, n_t, tvals, guards)?);
                }
                return Ok(out);
            }
        }
        // One loop over t_k.
        let per: Vec<(Vec<Term>, Vec<Term>)> = group
            .iter()
            .map(|&s| Self::terms(&ts[s].proj[k + 1], k))
            .collect();
        let (lower, upper) = if group.len() == 1 {
            per[0].clone()
        } else {
            let mut lo = Vec::new();
            let mut up = Vec::new();
            for (l, u) in &per {
                for t in l {
                    if !lo.contains(t)
                        && group
                            .iter()
                            .map(|&s| Self::implied(&ts[s].proj[k + 1], k, t, true))
                            .collect::<R<Vec<bool>>>()?
                            .iter()
                            .all(|&b| b)
                    {
                        lo.push(t.clone());
                    }
                }
                for t in u {
                    if !up.contains(t)
                        && group
                            .iter()
                            .map(|&s| Self::implied(&ts[s].proj[k + 1], k, t, false))
                            .collect::<R<Vec<bool>>>()?
                            .iter()
                            .all(|&b| b)
                    {
                        up.push(t.clone());
                    }
                }
            }
            (lo, up)
        };
        // No term of a statement is valid for the whole group: a looser
        // common bound when one is proven valid (every statement's own
        // terms become its guards in `one_loop`, so the instances that
        // run are the same; the loop may visit up to about as many more
        // points as there are statements' terms).
        let lower = if lower.is_empty() {
            Self::common_bound(ts, group, &per, k, true)?
                .map(|t| vec![t])
                .unwrap_or_default()
        } else {
            lower
        };
        let upper = if upper.is_empty() {
            Self::common_bound(ts, group, &per, k, false)?
                .map(|t| vec![t])
                .unwrap_or_default()
        } else {
            upper
        };
        // Bound options: the terms valid for the whole group, or else one
        // option per statement, chosen at run time (the union's range is
        // within [min of the statements' lowers, max of their uppers]).
        let lower_opts: Vec<Vec<Term>> = if lower.is_empty() {
            let mut v: Vec<Vec<Term>> = per.iter().map(|p| p.0.clone()).collect();
            v.dedup();
            v
        } else {
            vec![lower]
        };
        let upper_opts: Vec<Vec<Term>> = if upper.is_empty() {
            let mut v: Vec<Vec<Term>> = per.iter().map(|p| p.1.clone()).collect();
            v.dedup();
            v
        } else {
            vec![upper]
        };
        if lower_opts.iter().any(|o| o.is_empty()) || upper_opts.iter().any(|o| o.is_empty()) {
            return Err(ScanError::Unsupported(format!(
                "schedule dimension {k} is unbounded"
            )));
        }
        let mut branches: Vec<(Option<Expr>, Stmt)> = Vec::new();
        for (li, lo) in lower_opts.iter().enumerate() {
            for (ui, up) in upper_opts.iter().enumerate() {
                let mut conds = Vec::new();
                if lower_opts.len() > 1 {
                    let me = self.bound_value(lo, n_t, tvals, true)?;
                    for (lj, other) in lower_opts.iter().enumerate() {
                        if lj != li {
                            let o = self.bound_value(other, n_t, tvals, true)?;
                            conds.push(Expr::bin(loop_ast::BinOp::Le, me.clone(), o));
                        }
                    }
                }
                if upper_opts.len() > 1 {
                    let me = self.bound_value(up, n_t, tvals, false)?;
                    for (uj, other) in upper_opts.iter().enumerate() {
                        if uj != ui {
                            let o = self.bound_value(other, n_t, tvals, false)?;
                            conds.push(Expr::bin(loop_ast::BinOp::Ge, me.clone(), o));
                        }
                    }
                }
                let saved = guards.clone();
                let st = self.one_loop(ts, group, k, n_t, tvals, guards, &per, lo, up);
                *guards = saved;
                branches.push(((!conds.is_empty()).then(|| and_all(conds)), st?));
            }
        }
        // Drain the guards the branches consumed (each branch used a copy).
        for &s in group {
            guards[s].clear();
        }
        let mut out: Option<Stmt> = None;
        for (cond, st) in branches.into_iter().rev() {
            out = Some(match (out, cond) {
                (None, _) => st,
                (Some(e), Some(c)) => Stmt::If {
                    cond: c,
                    then: vec![st],
                    els: vec![e],
                },
                (Some(e), None) => Stmt::Block(vec![st, e]),
            });
        }
        Ok(out.into_iter().collect())
    }

    /// True when at every point `(t_0..t_{k-1}, p)` of the outer dimensions,
    /// every instance of `a` (projection `pa = P_{k+1}`) has a smaller `t_k`
    /// than every instance of `b`: no integer `(t_<k, p, x, y)` with
    /// `(t_<k, x, p) ∈ pa`, `(t_<k, y, p) ∈ pb` and `x ≥ y`. Sound since
    /// the projections contain the instances' time points.
    fn before(pa: &Poly, pb: &Poly, k: usize) -> R<bool> {
        let n = pa.n;
        // Variables (t, p, y): y is a second copy of t_k.
        let mut s = System::new(n + 1);
        let widen = |r: &[i64], swap: bool| -> Vec<i64> {
            let mut w = Vec::with_capacity(n + 2);
            w.extend_from_slice(&r[..n]);
            w.push(0);
            w.push(r[n]);
            if swap {
                w[n] = w[k];
                w[k] = 0;
            }
            w
        };
        for r in &pa.eqs {
            s.add_eq(widen(r, false));
        }
        for r in &pa.ineqs {
            s.add_ineq(widen(r, false));
        }
        for r in &pb.eqs {
            s.add_eq(widen(r, true));
        }
        for r in &pb.ineqs {
            s.add_ineq(widen(r, true));
        }
        // x − y ≥ 0
        let mut r = vec![0i64; n + 2];
        r[k] = 1;
        r[n] = -1;
        s.add_ineq(r);
        Ok(solver::integer_sample(&s)?.is_none())
    }

    /// CLooG-style separation at dimension `k`: the statements of `group`
    /// partitioned into parts, in an order such that at every point of
    /// the outer dimensions every instance of an earlier part has a
    /// smaller `t_k` than every instance of a later part ([`Gen::before`]
    /// for every pair of statements of different parts). Generating the
    /// parts one after the other (each with its own loop bounds) then runs
    /// the same instances in the same (schedule) order as one loop over
    /// the union. Two statements neither of which is before the other
    /// share a part; `None` when there is a single part.
    fn separate(ts: &[TimeStmt], group: &[usize], k: usize) -> R<Option<Vec<Vec<usize>>>> {
        let n = group.len();
        let mut comp: Vec<usize> = (0..n).collect();
        fn find(c: &mut [usize], mut i: usize) -> usize {
            while c[i] != i {
                c[i] = c[c[i]];
                i = c[i];
            }
            i
        }
        // Directed pairs (i before j) between statements of different parts.
        let mut edges: Vec<(usize, usize)> = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                if find(&mut comp, i) == find(&mut comp, j) {
                    continue;
                }
                let (pi, pj) = (&ts[group[i]].proj[k + 1], &ts[group[j]].proj[k + 1]);
                if Self::before(pi, pj, k)? {
                    edges.push((i, j));
                } else if Self::before(pj, pi, k)? {
                    edges.push((j, i));
                } else {
                    let (a, b) = (find(&mut comp, i), find(&mut comp, j));
                    comp[a.max(b)] = a.min(b);
                }
            }
        }
        // Parts ordered both ways are merged, until the order is acyclic
        // between pairs of parts; then a topological order (earliest
        // statement first among the ready parts).
        loop {
            let mut merged = false;
            let mut dir: HashMap<(usize, usize), ()> = HashMap::new();
            for &(i, j) in &edges {
                let (a, b) = (find(&mut comp, i), find(&mut comp, j));
                if a == b {
                    continue;
                }
                if dir.contains_key(&(b, a)) {
                    comp[a.max(b)] = a.min(b);
                    merged = true;
                    break;
                }
                dir.insert((a, b), ());
            }
            if !merged {
                break;
            }
        }
        let roots: Vec<usize> = (0..n).map(|i| find(&mut comp, i)).collect();
        let mut parts: Vec<usize> = roots.clone();
        parts.sort_unstable();
        parts.dedup();
        if parts.len() < 2 {
            return Ok(None);
        }
        let mut succ: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut indeg: HashMap<usize, usize> = parts.iter().map(|&p| (p, 0)).collect();
        let mut seen: HashSet<(usize, usize)> = HashSet::new();
        for &(i, j) in &edges {
            let (a, b) = (roots[i], roots[j]);
            if a != b && seen.insert((a, b)) {
                succ.entry(a).or_default().push(b);
                *indeg.entry(b).or_default() += 1;
            }
        }
        let mut order = Vec::new();
        let mut ready: Vec<usize> = parts.iter().copied().filter(|p| indeg[p] == 0).collect();
        while let Some(pos) = (0..ready.len()).min_by_key(|&q| ready[q]) {
            let p = ready.swap_remove(pos);
            order.push(p);
            for &q in succ.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
                let d = indeg.entry(q).or_default();
                *d -= 1;
                if *d == 0 {
                    ready.push(q);
                }
            }
        }
        if order.len() != parts.len() {
            // A cycle through three or more parts: no separation.
            return Ok(None);
        }
        Ok(Some(
            order
                .iter()
                .map(|&p| {
                    (0..n)
                        .filter(|&i| roots[i] == p)
                        .map(|i| group[i])
                        .collect()
                })
                .collect(),
        ))
    }

    /// `max_j ceil(e_j/d_j)` (lower) or `min_j floor(e_j/d_j)` as an int
    /// expression of the outer loop variables.
    fn bound_value(&self, ts: &[Term], n_t: usize, tvals: &[Affine], lower: bool) -> R<Expr> {
        let mut acc: Option<Expr> = None;
        for (e, d) in ts {
            let a = Expr::Aff(self.row_aff(e, n_t, tvals)?);
            let v = if *d == 1 {
                a
            } else {
                Expr::bin(
                    if lower {
                        loop_ast::BinOp::CeilDiv
                    } else {
                        loop_ast::BinOp::FloorDiv
                    },
                    a,
                    Expr::Int(*d),
                )
            };
            acc = Some(match acc {
                None => v,
                Some(x) => Expr::bin(
                    if lower {
                        loop_ast::BinOp::Max
                    } else {
                        loop_ast::BinOp::Min
                    },
                    x,
                    v,
                ),
            });
        }
        acc.ok_or_else(|| ScanError::Internal("empty bound".into()))
    }

    #[allow(clippy::too_many_arguments)]
    fn one_loop(
        &mut self,
        ts: &[TimeStmt],
        group: &[usize],
        k: usize,
        n_t: usize,
        tvals: &mut Vec<Affine>,
        guards: &mut Vec<Vec<Expr>>,
        per: &[(Vec<Term>, Vec<Term>)],
        lower: &[Term],
        upper: &[Term],
    ) -> R<Stmt> {
        let var = self.fresh(format!("t{k}"));
        tvals.push(Affine::var(var));
        let res = (|| -> R<Stmt> {
            if group.len() > 1 {
                for (gi, &s) in group.iter().enumerate() {
                    let (l, u) = &per[gi];
                    for t in l {
                        if !lower.contains(t) {
                            let c = self.term_cond(t, k, n_t, tvals, true)?;
                            guards[s].push(c);
                        }
                    }
                    for t in u {
                        if !upper.contains(t) {
                            let c = self.term_cond(t, k, n_t, tvals, false)?;
                            guards[s].push(c);
                        }
                    }
                }
            }
            let lb = self.bound(lower, n_t, &tvals[..k])?;
            let ub = self.bound(upper, n_t, &tvals[..k])?;
            let body = self.level(ts, group, k + 1, n_t, tvals, guards)?;
            Ok(Stmt::For {
                var,
                lower: lb,
                upper: ub,
                body,
            })
        })();
        tvals.pop();
        res
    }

    /// The statement instance at time `tvals`. An iterator
    /// `i_j = (n_j·(t, p, 1)) / den_j` with `den_j > 1` is bound by a
    /// one-trip loop (see [`Gen::one_trip`]), here unless an enclosing one
    /// already binds it.
    fn stmt_body(&mut self, t: &TimeStmt, n_t: usize, tvals: &[Affine]) -> R<Stmt> {
        let mut x: Vec<Affine> = Vec::new();
        let mut made: Vec<(usize, LoopVar)> = Vec::new();
        for (j, (r, den)) in t.iters.iter().enumerate() {
            if *den == 1 {
                x.push(self.row_aff(r, n_t, tvals)?);
            } else if let Some(&v) = self.bound_iters.get(&(t.index, j)) {
                x.push(Affine::var(v));
            } else {
                let v = self.fresh(format!("i{j}"));
                made.push((j, v));
                x.push(Affine::var(v));
            }
        }
        let mut out = vec![self.instance(t, &x)?];
        for (j, v) in made.into_iter().rev() {
            out = vec![self.one_trip(t, j, v, n_t, tvals, out)?];
        }
        Ok(match out.pop() {
            Some(s) if out.is_empty() => s,
            Some(s) => {
                out.push(s);
                Stmt::Block(out)
            }
            None => Stmt::Block(Vec::new()),
        })
    }

    /// The loop `for var in ceil(e/den) ..= floor(e/den) { body }` binding
    /// iterator `i_j = e/den` of `t` (`e = n_j·(t, p, 1)`, all of whose
    /// time columns are in `tvals`): it runs once, with `var = e/den`, when
    /// `den` divides `e`, and never otherwise — the integrality guard of a
    /// non-unimodular schedule, with the iterator an affine loop variable
    /// (so accesses stay affine). The bounds also hold the statement's
    /// bounding box in `i_j` (implied at every instance) for the JIT's
    /// interval analysis.
    fn one_trip(
        &self,
        t: &TimeStmt,
        j: usize,
        var: LoopVar,
        n_t: usize,
        tvals: &[Affine],
        body: Vec<Stmt>,
    ) -> R<Stmt> {
        let (r, den) = t
            .iters
            .get(j)
            .ok_or_else(|| ScanError::Internal("iterator out of range".into()))?;
        let e = self.row_aff(r, n_t, tvals)?;
        let mut lower = Bound::div(e.clone(), *den);
        let mut upper = Bound::div(e, *den);
        if let Some(dim) = t.ibox.as_ref().and_then(|b| b.get(j)) {
            // lo ≤ i_j ≤ lo + extent − 1 at every instance.
            let mut hi = dim.lower.clone();
            hi.terms.extend(dim.extent.terms.iter().cloned());
            hi.constant = ov(hi
                .constant
                .checked_add(dim.extent.constant)
                .and_then(|c| c.checked_sub(1)))?;
            lower = lower.and(dim.lower.clone(), 1);
            upper = upper.and(simplify(hi), 1);
        }
        Ok(Stmt::For {
            var,
            lower,
            upper,
            body,
        })
    }

    /// The statement instance at iterator values `x`.
    fn instance(&mut self, t: &TimeStmt, x: &[Affine]) -> R<Stmt> {
        let x = x.to_vec();
        let ex = ExprGen {
            n_par: self.n_par,
            acc_of: self.acc_of,
            stmt: t.index,
            loop_vars: RefCell::new(&mut self.loop_vars),
        };
        Ok(match &t.action {
            Action::Nothing => Stmt::Block(Vec::new()),
            Action::Assign { var, expr } => Stmt::Assign {
                array: *var,
                index: x.iter().map(|a| Expr::Aff(a.clone())).collect(),
                value: ex.expr(expr, &x, Some(self.sys.vars[*var].ty))?,
            },
            Action::Accumulate {
                array,
                proj,
                op,
                ty,
                body,
            } => Stmt::Accumulate {
                array: *array,
                index: proj
                    .iter()
                    .map(|a| ex.aff(a, &x).map(Expr::Aff))
                    .collect::<R<_>>()?,
                op: match op {
                    ReduceOp::Add => ReduceOp::Add,
                    ReduceOp::Mul => ReduceOp::Mul,
                    ReduceOp::Max => ReduceOp::Max,
                    ReduceOp::Min => ReduceOp::Min,
                    ReduceOp::And => ReduceOp::And,
                    ReduceOp::Or => ReduceOp::Or,
                },
                value: ex.expr(body, &x, Some(*ty))?,
            },
        })
    }
}

fn and_all(mut conds: Vec<Expr>) -> Expr {
    let mut c = conds.pop().unwrap_or(Expr::Bool(true));
    while let Some(d) = conds.pop() {
        c = Expr::bin(loop_ast::BinOp::And, d, c);
    }
    c
}

/// `constant + Σ_k coefs[k]·xs[k] + Σ_p pars[p]·p` (the `xs` affine in loop
/// variables and parameters), merged; checked arithmetic. A non-zero
/// coefficient without its `xs[k]` is an internal error (`missing`).
fn lin_comb(coefs: &[i64], xs: &[Affine], pars: &[i64], constant: i64, missing: &str) -> R<Affine> {
    let mut out = Affine::cst(constant);
    for (k, &c) in coefs.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let xv = xs
            .get(k)
            .ok_or_else(|| ScanError::Internal(missing.into()))?;
        for &(s, v) in &xv.terms {
            out.terms.push((s, ov(c.checked_mul(v))?));
        }
        out.constant = ov(out.constant.checked_add(ov(c.checked_mul(xv.constant))?))?;
    }
    for (p, &c) in pars.iter().enumerate() {
        if c != 0 {
            out.terms.push((Sym::Param(p), c));
        }
    }
    Ok(simplify(out))
}

/// Merges equal symbols and drops zero coefficients.
fn simplify(a: Affine) -> Affine {
    let mut terms: Vec<(Sym, i64)> = Vec::new();
    for (s, c) in a.terms {
        if let Some(t) = terms.iter_mut().find(|t| t.0 == s) {
            t.1 = t.1.saturating_add(c);
        } else {
            terms.push((s, c));
        }
    }
    terms.retain(|t| t.1 != 0);
    terms.sort_by_key(|t| t.0);
    Affine {
        terms,
        constant: a.constant,
    }
}

/// Expression translation at one statement instance.
struct ExprGen<'a> {
    n_par: usize,
    acc_of: &'a HashMap<(usize, usize), usize>,
    stmt: usize,
    /// The function's loop variables (a categorical draw binds a new one).
    loop_vars: RefCell<&'a mut Names>,
}

impl ExprGen<'_> {
    /// A new loop variable named after `name` (made unique).
    fn fresh(&self, name: &str) -> LoopVar {
        self.loop_vars.borrow_mut().fresh(name)
    }

    /// The loop program of `categorical([k], D : W)` at point `x`: `k`
    /// ranges over `D`'s points above `x` in ascending order. When `D` is
    /// one piece, its constraints on `k` give the exact bounds
    /// (`a·k + r >= 0` is `k >= ceil(-r/a)` for `a > 0` and
    /// `k <= floor(r/-a)` for `a < 0`; an equality gives both) and the
    /// others the condition; otherwise the bounds are `D`'s parametric box
    /// in `k` and the condition is membership in `D`.
    fn categorical(&self, c: &ir::Categorical, x: &[Affine]) -> R<Expr> {
        let n = x.len();
        if c.domain.n_dims() != n + 1 {
            return Err(ScanError::Internal(
                "categorical domain of the wrong dimension".into(),
            ));
        }
        let var = self.fresh(&c.index);
        let mut xk = x.to_vec();
        xk.push(Affine::var(var));
        let mut lower: Vec<(Affine, i64)> = Vec::new();
        let mut upper: Vec<(Affine, i64)> = Vec::new();
        let mut conds = Vec::new();
        let single = c.domain.pieces.len() == 1;
        if single {
            for con in &c.domain.pieces[0] {
                let mut rest = con.aff.clone();
                rest.idx.resize(n + 1, 0);
                let a = rest.idx[n];
                rest.idx[n] = 0;
                let r = self.aff(&rest, x)?;
                let neg = || -> R<Affine> {
                    Ok(simplify(Affine {
                        terms: r
                            .terms
                            .iter()
                            .map(|&(s, v)| ov(v.checked_neg()).map(|v| (s, v)))
                            .collect::<R<_>>()?,
                        constant: ov(r.constant.checked_neg())?,
                    }))
                };
                match (con.kind, a.signum()) {
                    (_, 0) => conds.push(Expr::bin(
                        match con.kind {
                            ConstraintKind::Ge => loop_ast::BinOp::Ge,
                            ConstraintKind::Eq => loop_ast::BinOp::Eq,
                        },
                        Expr::Aff(r.clone()),
                        Expr::Int(0),
                    )),
                    (ConstraintKind::Ge, 1) => lower.push((neg()?, a)),
                    (ConstraintKind::Ge, _) => upper.push((r.clone(), ov(a.checked_neg())?)),
                    (ConstraintKind::Eq, 1) => {
                        lower.push((neg()?, a));
                        upper.push((neg()?, a));
                    }
                    (ConstraintKind::Eq, _) => {
                        let m = ov(a.checked_neg())?;
                        lower.push((r.clone(), m));
                        upper.push((r.clone(), m));
                    }
                }
            }
        }
        let (lb, ub, cond) = if single && !lower.is_empty() && !upper.is_empty() {
            let mk = |ts: Vec<(Affine, i64)>| Bound {
                terms: ts
                    .into_iter()
                    .map(|(expr, div)| loop_ast::BoundTerm { expr, div })
                    .collect(),
            };
            (mk(lower), mk(upper), and_all(conds))
        } else {
            // The pieces projected onto (k, p) (rational shadows: a
            // superset of the points; the condition is exact).
            let mut polys = Vec::new();
            for mut q in domain_polys(&c.domain, self.n_par) {
                for j in 0..n {
                    q = eliminate(&q, j)?;
                }
                let drop = |r: &Vec<i64>| r[n..].to_vec();
                polys.push(Poly {
                    n: q.n - n,
                    eqs: q.eqs.iter().map(drop).collect(),
                    ineqs: q.ineqs.iter().map(drop).collect(),
                });
            }
            let dims = symbolic_box(&polys, 1, self.n_par, &c.index).map_err(|_| {
                ScanError::Unsupported(format!(
                    "categorical draw over `{}`: the range of the drawn index is not bounded by the parameters",
                    c.index
                ))
            })?;
            let d = &dims[0];
            let mut up = d.lower.clone();
            up.terms.extend(d.extent.terms.iter().cloned());
            up.constant = ov(up
                .constant
                .checked_add(d.extent.constant)
                .and_then(|v| v.checked_sub(1)))?;
            (
                Bound::aff(d.lower.clone()),
                Bound::aff(simplify(up)),
                self.domain_cond(&c.domain, &xk)?,
            )
        };
        Ok(Expr::Categorical(Box::new(loop_ast::CategoricalDraw {
            var,
            lower: lb,
            upper: ub,
            cond,
            weight: self.expr(&c.weight, &xk, Some(ElemType::Float))?,
            seed: Expr::param(self.n_par),
            site: (c.site.var as u32) << 16 | c.site.ordinal,
            point: x.iter().map(|a| Expr::Aff(a.clone())).collect(),
            array: Some(c.site.var),
        })))
    }

    fn aff(&self, a: &AffExpr, x: &[Affine]) -> R<Affine> {
        let np = a.par.len().min(self.n_par);
        lin_comb(
            &a.idx,
            x,
            &a.par[..np],
            a.constant,
            "index out of the space",
        )
    }

    fn domain_cond(&self, d: &Domain, x: &[Affine]) -> R<Expr> {
        let mut alts = Vec::new();
        for piece in &d.pieces {
            let mut cs = Vec::new();
            for c in piece {
                let mut a = c.aff.clone();
                a.idx.resize(x.len(), 0);
                let e = Expr::Aff(self.aff(&a, x)?);
                cs.push(Expr::bin(
                    match c.kind {
                        ConstraintKind::Ge => loop_ast::BinOp::Ge,
                        ConstraintKind::Eq => loop_ast::BinOp::Eq,
                    },
                    e,
                    Expr::Int(0),
                ));
            }
            alts.push(and_all(cs));
        }
        let mut c = alts.pop().unwrap_or(Expr::Bool(false));
        while let Some(d) = alts.pop() {
            c = Expr::bin(loop_ast::BinOp::Or, d, c);
        }
        Ok(c)
    }

    /// `e` at point `x`, converted to `want` (int/bool → float promotion).
    fn expr(&self, e: &ir::Expr, x: &[Affine], want: Option<ElemType>) -> R<Expr> {
        let v = self.raw(e, x)?;
        Ok(convert(v, e.ty, want.unwrap_or(e.ty)))
    }

    fn raw(&self, e: &ir::Expr, x: &[Affine]) -> R<Expr> {
        use loop_ast::BinOp as B;
        Ok(match &e.kind {
            ExprKind::IntConst(v) => Expr::Int(*v),
            ExprKind::FloatConst(v) => Expr::Float(*v),
            ExprKind::BoolConst(v) => Expr::Bool(*v),
            ExprKind::Index(a) => Expr::Aff(self.aff(a, x)?),
            ExprKind::Read { var, access } => Expr::Load {
                array: *var,
                index: access
                    .iter()
                    .map(|a| self.aff(a, x).map(Expr::Aff))
                    .collect::<R<_>>()?,
            },
            ExprKind::IndirectRead { var, indices } => Expr::Load {
                array: *var,
                index: indices
                    .iter()
                    .map(|i| self.expr(i, x, Some(ElemType::Int)))
                    .collect::<R<_>>()?,
            },
            ExprKind::Unary(op, a) => match op {
                UnOp::Neg => Expr::Unary(UnOp::Neg, Box::new(self.expr(a, x, Some(e.ty))?)),
                UnOp::Not => Expr::Unary(UnOp::Not, Box::new(self.expr(a, x, None)?)),
            },
            ExprKind::Binary(op, a, b) => {
                let arith = |o: B| -> R<Expr> {
                    Ok(Expr::bin(
                        o,
                        self.expr(a, x, Some(e.ty))?,
                        self.expr(b, x, Some(e.ty))?,
                    ))
                };
                let cmp = |o: B| -> R<Expr> {
                    let t = if a.ty == ElemType::Float || b.ty == ElemType::Float {
                        ElemType::Float
                    } else {
                        a.ty
                    };
                    Ok(Expr::bin(
                        o,
                        self.expr(a, x, Some(t))?,
                        self.expr(b, x, Some(t))?,
                    ))
                };
                match op {
                    BinOp::Add => arith(B::Add)?,
                    BinOp::Sub => arith(B::Sub)?,
                    BinOp::Mul => arith(B::Mul)?,
                    BinOp::Div => arith(B::Div)?,
                    BinOp::Rem => arith(B::Rem)?,
                    BinOp::Eq => cmp(B::Eq)?,
                    BinOp::Ne => cmp(B::Ne)?,
                    BinOp::Lt => cmp(B::Lt)?,
                    BinOp::Le => cmp(B::Le)?,
                    BinOp::Gt => cmp(B::Gt)?,
                    BinOp::Ge => cmp(B::Ge)?,
                    BinOp::And => arith(B::And)?,
                    BinOp::Or => arith(B::Or)?,
                }
            }
            ExprKind::If(c, a, b) => Expr::select(
                self.expr(c, x, None)?,
                self.expr(a, x, Some(e.ty))?,
                self.expr(b, x, Some(e.ty))?,
            ),
            ExprKind::Case(branches) => {
                let mut it = branches.iter().rev();
                let Some((_, last)) = it.next() else {
                    return Err(ScanError::Internal("empty case".into()));
                };
                let mut acc = self.expr(last, x, Some(e.ty))?;
                for (d, b) in it {
                    acc = Expr::select(self.domain_cond(d, x)?, self.expr(b, x, Some(e.ty))?, acc);
                }
                acc
            }
            ExprKind::Restrict(_, a) => self.expr(a, x, Some(e.ty))?,
            ExprKind::Reduce(r) => {
                let key = (self.stmt, &**r as *const ir::Reduction as usize);
                let Some(&arr) = self.acc_of.get(&key) else {
                    return Err(ScanError::Internal("reduction without accumulator".into()));
                };
                Expr::Load {
                    array: arr,
                    index: x.iter().map(|a| Expr::Aff(a.clone())).collect(),
                }
            }
            ExprKind::Builtin(b, args) => self.builtin(*b, args, e.ty, x)?,
            ExprKind::External(i, args) => Expr::External {
                index: *i,
                args: args
                    .iter()
                    .map(|a| self.expr(a, x, Some(ElemType::Float)))
                    .collect::<R<_>>()?,
            },
            ExprKind::Random(d, args, site) => {
                let dist = *d;

                let conv = convert(
                    Expr::Random {
                        dist,
                        args: args
                            .iter()
                            .map(|a| self.expr(a, x, Some(ElemType::Float)))
                            .collect::<R<_>>()?,
                        seed: Box::new(Expr::param(self.n_par)),
                        site: (site.var as u32) << 16 | site.ordinal,
                        point: x.iter().map(|a| Expr::Aff(a.clone())).collect(),
                    },
                    dist.result(),
                    e.ty,
                );
                conv
            }
            ExprKind::Categorical(c) => self.categorical(c, x)?,
        })
    }

    fn builtin(&self, b: Builtin, args: &[ir::Expr], ty: ElemType, x: &[Affine]) -> R<Expr> {
        let arg = |k: usize, t: Option<ElemType>| -> R<Expr> {
            let a = args
                .get(k)
                .ok_or_else(|| ScanError::Internal(format!("builtin {b:?}: missing argument")))?;
            self.expr(a, x, t)
        };
        let fl = Some(ElemType::Float);
        let math = |f: MathFn| -> R<Expr> {
            let m = Expr::Math(f, vec![arg(0, fl)?]);
            Ok(if ty == ElemType::Int {
                Expr::cast(Cast::FloatToInt, m)
            } else {
                m
            })
        };
        Ok(match b {
            Builtin::Exp => math(MathFn::Exp)?,
            Builtin::Log => math(MathFn::Log)?,
            Builtin::Sqrt => math(MathFn::Sqrt)?,
            Builtin::Floor => math(MathFn::Floor)?,
            Builtin::Ceil => math(MathFn::Ceil)?,
            Builtin::Lgamma => math(MathFn::Lgamma)?,
            Builtin::Pow => {
                let m = Expr::Math(MathFn::Pow, vec![arg(0, fl)?, arg(1, fl)?]);
                if ty == ElemType::Int {
                    Expr::cast(Cast::FloatToInt, m)
                } else {
                    m
                }
            }
            Builtin::Abs => Expr::Math(MathFn::Abs, vec![arg(0, Some(ty))?]),
            Builtin::ToFloat => arg(0, fl)?,
            Builtin::ToInt => {
                let a0 = args
                    .first()
                    .ok_or_else(|| ScanError::Internal("int(): missing argument".into()))?;
                let v = self.expr(a0, x, None)?;
                match a0.ty {
                    ElemType::Float => Expr::cast(Cast::FloatToInt, v),
                    ElemType::Bool => Expr::cast(Cast::BoolToInt, v),
                    ElemType::Int => v,
                }
            }
            Builtin::Max | Builtin::Min => {
                let op = if b == Builtin::Max {
                    loop_ast::BinOp::Max
                } else {
                    loop_ast::BinOp::Min
                };
                let mut acc: Option<Expr> = None;
                for k in 0..args.len() {
                    let v = arg(k, Some(ty))?;
                    acc = Some(match acc {
                        None => v,
                        Some(a) => Expr::bin(op, a, v),
                    });
                }
                acc.ok_or_else(|| ScanError::Internal("max/min of nothing".into()))?
            }
        })
    }
}

/// Converts a value of type `from` to `to` (the IR leaves int → float
/// promotion implicit).
fn convert(v: Expr, from: ElemType, to: ElemType) -> Expr {
    match (from, to) {
        (ElemType::Int, ElemType::Float) => Expr::cast(Cast::IntToFloat, v),
        (ElemType::Bool, ElemType::Float) => Expr::cast(Cast::BoolToFloat, v),
        (ElemType::Bool, ElemType::Int) => Expr::cast(Cast::BoolToInt, v),
        _ => v,
    }
}

/// The loop program of the system named `system`, scheduled with
/// `scheduler` (see [`scan_system`]).
pub fn scan(program: &ir::Program, system: &str, scheduler: Scheduler) -> R<Function> {
    let index = program
        .systems
        .iter()
        .position(|s| s.name == system)
        .ok_or_else(|| ScanError::NoSystem(system.to_string()))?;
    let sched = deps::schedule_program(program, scheduler)?;
    let s = sched
        .systems
        .get(index)
        .ok_or_else(|| ScanError::NoSystem(system.to_string()))?;
    scan_system(program, index, s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Determinant by cofactor expansion (small matrices, small entries).
    fn det_ref(m: &[Vec<i64>]) -> i128 {
        if m.is_empty() {
            return 1;
        }
        (0..m.len())
            .map(|c| {
                let minor: Vec<Vec<i64>> = m[1..]
                    .iter()
                    .map(|r| {
                        r.iter()
                            .enumerate()
                            .filter(|&(j, _)| j != c)
                            .map(|(_, &x)| x)
                            .collect()
                    })
                    .collect();
                let sign = if c % 2 == 0 { 1 } else { -1 };
                sign * i128::from(m[0][c]) * det_ref(&minor)
            })
            .sum()
    }

    fn matrix(d: usize) -> impl Strategy<Value = Vec<Vec<i64>>> {
        proptest::collection::vec(proptest::collection::vec(-3i64..=3, d), d)
    }

    #[test]
    fn inverse_of_a_non_unimodular_triangle() {
        // Row reduction that only reduces below the pivot would never
        // clear the 1 above the 2 here.
        let inv = rational_inverse(&[vec![1, 1], vec![0, 2]])
            .unwrap()
            .unwrap();
        assert_eq!(inv, vec![(vec![2, -1], 2), (vec![0, 1], 2)]);
        assert_eq!(det(&[vec![1, 1], vec![0, 2]]), Some(2));
    }

    proptest! {
        /// `det` agrees with cofactor expansion.
        #[test]
        fn det_is_exact(m in (0usize..=4).prop_flat_map(matrix)) {
            prop_assert_eq!(det(&m), Some(det_ref(&m)));
        }

        /// `m⁻¹·m = I` row by row, rows in lowest terms; `None` exactly
        /// for singular matrices.
        #[test]
        fn inverse_is_exact(m in (1usize..=4).prop_flat_map(matrix)) {
            let d = m.len();
            let inv = rational_inverse(&m).unwrap();
            prop_assert_eq!(inv.is_none(), det_ref(&m) == 0);
            let Some(inv) = inv else { return Ok(()) };
            for (j, (num, den)) in inv.iter().enumerate() {
                prop_assert!(*den >= 1);
                prop_assert_eq!(num.iter().fold(*den, |g, &x| gcd(g, x)), 1);
                for c in 0..d {
                    let s: i64 = num.iter().zip(&m).map(|(x, row)| x * row[c]).sum();
                    prop_assert_eq!(s, if j == c { *den } else { 0 });
                }
            }
        }

        /// `choose_rows` picks `d` rows of minimal non-zero `|det|`
        /// (brute force over all subsets), the first such subset in
        /// lexicographic order, and `None` exactly when the rank is `< d`.
        #[test]
        fn row_choice_minimizes_the_determinant(
            (d, rows) in (1usize..=3).prop_flat_map(|d| {
                (Just(d), proptest::collection::vec(
                    proptest::collection::vec(-2i64..=2, d + 1), 0..=5))
            })
        ) {
            let n = rows.len();
            let mut best: Option<(u128, Vec<usize>)> = None;
            for mask in 0u32..(1 << n) {
                if mask.count_ones() as usize != d {
                    continue;
                }
                let s: Vec<usize> = (0..n).filter(|&k| mask >> k & 1 == 1).collect();
                let m: Vec<Vec<i64>> = s.iter().map(|&k| rows[k][..d].to_vec()).collect();
                let v = det_ref(&m).unsigned_abs();
                if v != 0 && best.as_ref().is_none_or(|(b, bs)| v < *b || (v == *b && s < *bs)) {
                    best = Some((v, s));
                }
            }
            let got = choose_rows(&rows, d).unwrap();
            match (got, best) {
                (None, None) => {}
                (Some(g), Some((v, s))) => {
                    let m: Vec<Vec<i64>> = g.iter().map(|&k| rows[k][..d].to_vec()).collect();
                    prop_assert_eq!(det_ref(&m).unsigned_abs(), v);
                    prop_assert_eq!(g, s);
                }
                (g, b) => prop_assert!(false, "got {:?}, brute force {:?}", g, b),
            }
        }
    }
}
