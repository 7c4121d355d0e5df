//! Step 1 of scanning: the statements of the augmented program (`deps`)
//! matched to what they compute in the IR ([`Action`]: assign, accumulate
//! or nothing), with the accumulator arrays of embedded reductions.
//!
//! Must not know about: schedules, time space, loop generation.

use super::domains::*;
use super::*;

/// What a statement does.
#[derive(Clone)]
pub(super) enum Action<'a> {
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
pub(super) struct AccArray {
    pub(super) array: usize,
    pub(super) op: ReduceOp,
    pub(super) ty: ElemType,
}

pub(super) struct Matcher<'a> {
    pub(super) sys: &'a ir::System,
    pub(super) stmts: &'a [deps::PolyStmt],
    pub(super) n_par: usize,
    /// The index of every statement by its key (`deps::index_by_key`).
    pub(super) index: HashMap<StmtKey, usize>,
    pub(super) actions: Vec<Option<Action<'a>>>,
    /// Extra constraints (over the statement's iterators and params).
    pub(super) extra: Vec<Vec<AffConstraint>>,
    /// (enclosing statement, reduction) → accumulator array.
    pub(super) acc_of: HashMap<(usize, ReductionId), usize>,
    pub(super) arrays: Vec<loop_ast::Array>,
    pub(super) inits: Vec<AccArray>,
    pub(super) counter: usize,
    /// The system draws random numbers: the function gets the seed as an
    /// extra last parameter.
    pub(super) has_random: bool,
}

pub(super) fn cross(a: &[Vec<AffConstraint>], b: &Domain) -> Vec<Vec<AffConstraint>> {
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
pub(super) fn pull_back(
    c: &AffConstraint,
    proj: &[AffExpr],
    nb: usize,
    n_par: usize,
) -> R<AffConstraint> {
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

impl<'a> Matcher<'a> {
    /// The statement `id` (convex piece `piece`) inside the statement
    /// `parent` (none for an equation statement).
    pub(super) fn stmt(&self, id: StmtId, parent: Option<usize>, piece: usize) -> R<usize> {
        let key = StmtKey { id, parent, piece };
        self.index
            .get(&key)
            .copied()
            .ok_or_else(|| ScanError::Internal(format!("no statement {key:?} in the schedule")))
    }

    pub(super) fn walk(
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
            for pi in 0..pieces.len() {
                let c = self.stmt(StmtId::Complete(r.id), Some(stmt), pi)?;
                self.actions[c] = Some(Action::Nothing);
            }
            if pieces.len() == 1 {
                comp_extra = pieces[0].clone();
            }
            // A new accumulator over the box of the enclosing statement.
            let dom = &self.stmts[stmt].domain;
            self.counter += 1;
            let name = format!("{}_red{}", self.sys.vars[var].name, self.counter);
            let dims = symbolic_box(std::slice::from_ref(dom), st_dims, self.n_par, &name)?;
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
            self.acc_of.insert((stmt, r.id), id);
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
            .chain(comp.ineqs.iter().map(|r| (ConstraintKind::Ineq, r)))
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
        for bi in 0..r.body_domain.pieces.len() {
            let acc = self.stmt(StmtId::Accumulate(r.id), Some(stmt), bi)?;
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
