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
        proj: MultiAff,
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
    /// Extra constraints (rows over the parameters, the statement's
    /// iterators and the constant).
    pub(super) extra: Vec<Vec<Constraint>>,
    /// (enclosing statement, reduction) → accumulator array.
    pub(super) acc_of: HashMap<(usize, ReductionId), usize>,
    pub(super) arrays: Vec<loop_ast::Array>,
    pub(super) inits: Vec<AccArray>,
    pub(super) counter: usize,
    /// The system draws random numbers: the function gets the seed as an
    /// extra last parameter.
    pub(super) has_random: bool,
}

/// `c(proj(y))`: a constraint over the completion space (row over
/// `[params (n_par), dims, 1]`) pulled back to the body space (`nb`
/// dimensions) through `proj`.
pub(super) fn pull_back(c: &Constraint, proj: &MultiAff, nb: usize, n_par: usize) -> R<Constraint> {
    let (par, idx, constant) = row_parts(&c.row, n_par);
    let mut a = vec![0i64; n_par + nb + 1];
    a[n_par + nb] = constant;
    for (p, &cp) in par.iter().enumerate() {
        a[p] = cp;
    }
    let rows = proj.rows();
    for (j, &cj) in idx.iter().enumerate() {
        if cj == 0 {
            continue;
        }
        let f = rows
            .get(j)
            .ok_or_else(|| ScanError::Internal("projection arity".into()))?;
        let (fpar, fidx, fconst) = row_parts(f, proj.n_params());
        for (q, &fq) in fidx.iter().enumerate() {
            let slot = a
                .get_mut(n_par + q)
                .ok_or_else(|| ScanError::Internal("projection arity".into()))?;
            *slot = ov(slot.checked_add(ov(cj.checked_mul(fq))?))?;
        }
        for (q, &fq) in fpar.iter().enumerate().take(n_par) {
            a[q] = ov(a[q].checked_add(ov(cj.checked_mul(fq))?))?;
        }
        a[n_par + nb] = ov(a[n_par + nb].checked_add(ov(cj.checked_mul(fconst))?))?;
    }
    Ok(Constraint {
        kind: c.kind,
        row: a,
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
        pieces: &[Vec<Constraint>],
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
                    self.walk(x, stmt, &d.cross_pieces(pieces), false)?;
                }
                Ok(())
            }
            ExprKind::Restrict(d, x) => self.walk(x, stmt, &d.cross_pieces(pieces), false),
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
            ExprKind::Selection(x) => {
                self.walk(&x.value, stmt, pieces, false)?;
                self.walk(&x.lower, stmt, pieces, false)?;
                self.walk(&x.upper, stmt, pieces, false)
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
        pieces: &[Vec<Constraint>],
        top: bool,
    ) -> R<()> {
        let var = self.stmts[stmt].var;
        let st_dims = self.stmts[stmt].dims.len();
        // The completion domain: the enclosing statement's domain (and the
        // context piece when there is exactly one).
        let mut comp_extra: Vec<Constraint> = Vec::new();
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
        let nb = r.dims().len();
        let n_par = self.n_par;
        let mut restrict = Vec::new();
        let comp = &self.stmts[stmt].domain;
        // The completion's rows over `(iterators, params, 1)` as rows over
        // `[params, iterators, 1]`.
        let to_poly = |row: &[i64]| -> Vec<i64> {
            let mut out = row[st_dims..st_dims + n_par].to_vec();
            out.extend_from_slice(&row[..st_dims]);
            out.push(row[st_dims + n_par]);
            out
        };
        let rows: Vec<Constraint> = comp
            .eqs
            .iter()
            .map(|r| Constraint::eq(to_poly(r)))
            .chain(comp.ineqs.iter().map(|r| Constraint::ineq(to_poly(r))))
            .collect();
        for c in &rows {
            restrict.push(pull_back(c, &r.proj, nb, n_par)?);
        }
        for c in &comp_extra {
            // Over the enclosing statement's iterators (missing
            // coefficients are zero, extra ones dropped).
            let (par, idx, constant) = row_parts(&c.row, n_par);
            let mut row = par.to_vec();
            row.extend(
                idx.iter()
                    .copied()
                    .chain(std::iter::repeat(0))
                    .take(st_dims),
            );
            row.push(constant);
            let c = Constraint { kind: c.kind, row };
            restrict.push(pull_back(&c, &r.proj, nb, n_par)?);
        }
        for bi in 0..r.body_domain.pieces().len() {
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
