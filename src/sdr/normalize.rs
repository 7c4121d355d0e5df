//! Normalization of reductions for the optimizer (SDR paper section 3.2,
//! "every reduction is a statement"):
//! 1. every reduction is the whole right-hand side of an equation of its
//!    own: a reduction nested in a larger expression (or in another
//!    reduction's body) is moved into a new local variable defined over
//!    the domain where it is evaluated, and read back with the identity
//!    access;
//! 2. every reduction body domain is convex: a union is split into
//!    disjoint convex pieces `P_1 ⊎ … ⊎ P_m`, each a reduction of its own,
//!    and the result is `R_1 ⊕ … ⊕ R_m` (exact since the pieces are
//!    disjoint).
//!
//! Stochastic call sites keep their identity (`CallSite` is data), so draws
//! are unchanged by the move. Reductions are renumbered
//! (`System::number_reductions`): their ids name their new places.

use super::SdrError;
use crate::ir::*;
use std::collections::HashSet;

/// Normalizes every system of a checked program (see the module comment).
pub fn normalize(p: &Program) -> Result<Program, SdrError> {
    Ok(normalize_with_origins(p)?.0)
}

/// The decisions normalization took (the complements of domains with a
/// hole, `super::complement`).
pub type NormalizeDecisions = Vec<super::Decision>;

/// Per system, `(new variable, variable it came from)` pairs.
pub type Origins = Vec<Vec<(String, String)>>;

/// [`normalize`], also returning, per system, the new local variables
/// with the variable whose equation they came from (`(new, base)` pairs),
/// and the decisions taken.
pub fn normalize_with_origins(
    p: &Program,
) -> Result<(Program, Origins, NormalizeDecisions), SdrError> {
    let mut out = p.clone();
    let mut born = Vec::with_capacity(out.systems.len());
    let mut decisions = Vec::new();
    for s in &mut out.systems {
        born.push(normalize_system(s, &mut decisions)?);
    }
    Ok((out, born, decisions))
}

/// Names used anywhere in a system (variables, parameters, index names),
/// so that generated names never collide.
pub(crate) fn used_names(s: &System) -> HashSet<String> {
    let mut names: HashSet<String> = s.vars.iter().map(|v| v.name.clone()).collect();
    names.extend(s.params.iter().cloned());
    for v in &s.vars {
        names.extend(v.domain.dims().iter().cloned());
    }
    fn walk(e: &Expr, names: &mut HashSet<String>) {
        visit_children(e, &mut |c| walk(c, names));
        match &e.kind {
            ExprKind::Reduce(r) => names.extend(r.dims().iter().cloned()),
            ExprKind::Categorical(c) => {
                names.insert(c.index.clone());
            }
            _ => {}
        }
    }
    for eq in &s.equations {
        names.extend(eq.indices.iter().cloned());
        walk(&eq.expr, &mut names);
    }
    names
}

/// Appends a new local `base_tag…` (named apart from `used`) over
/// `domain` to `s`, records `(name, base)` in `born`, and returns its id.
/// The variable has no equation yet.
#[allow(clippy::too_many_arguments)]
pub(crate) fn push_local(
    s: &mut System,
    used: &mut HashSet<String>,
    born: &mut Vec<(String, String)>,
    base: &str,
    tag: &str,
    domain: crate::poly::Set,
    ty: ElemType,
    span: crate::diag::Span,
) -> VarId {
    let name = fresh_name(used, base, tag);
    born.push((name.clone(), base.to_string()));
    s.vars.push(Variable {
        name,
        kind: VarKind::Local,
        ty,
        domain,
        span,
    });
    s.vars.len() - 1
}

/// A fresh name `base_tag`, `base_tag2`, ... not in `used` (and records it).
pub(crate) fn fresh_name(used: &mut HashSet<String>, base: &str, tag: &str) -> String {
    let mut k = 1usize;
    loop {
        let name = if k == 1 {
            format!("{base}_{tag}")
        } else {
            format!("{base}_{tag}{k}")
        };
        if used.insert(name.clone()) {
            return name;
        }
        k += 1;
    }
}

/// Calls `f` on every direct sub-expression of `e`.
pub(crate) fn visit_children(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    e.for_each_child(f)
}

/// `a ⊕ b` as an expression, for a reduction operator `⊕`.
pub(crate) fn combine(op: ReduceOp, a: Expr, b: Expr, ty: ElemType) -> Expr {
    let span = a.span.join(b.span);
    let kind = match op {
        ReduceOp::Add => ExprKind::Binary(BinOp::Add, Box::new(a), Box::new(b)),
        ReduceOp::Mul => ExprKind::Binary(BinOp::Mul, Box::new(a), Box::new(b)),
        ReduceOp::And => ExprKind::Binary(BinOp::And, Box::new(a), Box::new(b)),
        ReduceOp::Or => ExprKind::Binary(BinOp::Or, Box::new(a), Box::new(b)),
        ReduceOp::Max => ExprKind::Builtin(Builtin::Max, vec![a, b]),
        ReduceOp::Min => ExprKind::Builtin(Builtin::Min, vec![a, b]),
    };
    Expr { kind, ty, span }
}

/// The identity read `var[x]` over the index space `space`.
pub(crate) fn identity_read(
    var: VarId,
    space: &Space,
    ty: ElemType,
    span: Span,
) -> Result<Expr, SdrError> {
    let n = space.n_dims();
    let out = crate::poly::Tuple::anonymous("o", n);
    Ok(Expr {
        kind: ExprKind::Read {
            var,
            access: MultiAff::translation(space.clone(), out, &vec![0; n])?,
        },
        ty,
        span,
    })
}

use crate::diag::Span;

/// `a ∩ b` of two domains over the same index space (named as `a`),
/// canonical.
pub(crate) fn intersect_domains(a: &Set, b: &Set) -> Result<Set, SdrError> {
    Ok(a.intersect(b)?.simplify()?)
}

/// `P ∩ proj⁻¹(ctx)` for a reduction evaluated over `ctx`, canonical.
fn restrict_to_used(r: &Reduction, ctx: &Set) -> Result<Set, SdrError> {
    let used = r.body_domain.intersect(&ctx.preimage(&r.proj)?)?;
    Ok(used.simplify()?)
}

struct Normalizer<'a> {
    sys: &'a mut System,
    used: HashSet<String>,
    /// New equations, added after the walk.
    new_eqs: Vec<Equation>,
    /// `(new variable, variable it was extracted from)`.
    born: Vec<(String, String)>,
    decisions: &'a mut NormalizeDecisions,
}

fn normalize_system(
    s: &mut System,
    decisions: &mut NormalizeDecisions,
) -> Result<Vec<(String, String)>, SdrError> {
    let used = used_names(s);
    let eqs = std::mem::take(&mut s.equations);
    let mut n = Normalizer {
        sys: s,
        used,
        new_eqs: Vec::new(),
        born: Vec::new(),
        decisions,
    };
    let mut out = Vec::with_capacity(eqs.len());
    for eq in eqs {
        let ctx = n.sys.vars[eq.var]
            .domain
            .renamed(Space::set(&n.sys.params, &eq.indices))?;
        let owner = n.sys.vars[eq.var].name.clone();
        let expr = n.expr(eq.expr, &ctx, true, &owner)?;
        out.push(Equation { expr, ..eq });
    }
    out.append(&mut n.new_eqs);
    let born = std::mem::take(&mut n.born);
    s.equations = out;
    // Reductions moved into new equations or split into pieces get the
    // ids of their new places.
    s.number_reductions();
    Ok(born)
}

impl Normalizer<'_> {
    fn params(&self) -> Vec<String> {
        self.sys.params.clone()
    }

    /// Adds a local variable over `domain` defined by `expr` (in the index
    /// space `domain.dims()`); returns its id.
    fn new_local(&mut self, owner: &str, tag: &str, domain: Set, expr: Expr) -> VarId {
        let name = fresh_name(&mut self.used, owner, tag);
        self.born.push((name.clone(), owner.to_string()));
        let id = self.sys.vars.len();
        self.sys.vars.push(Variable {
            name,
            kind: VarKind::Local,
            ty: expr.ty,
            domain: domain.clone(),
            span: expr.span,
        });
        self.new_eqs.push(Equation {
            var: id,
            indices: domain.dims().to_vec(),
            span: expr.span,
            expr,
        });
        id
    }

    /// Normalizes `e`, evaluated over the domain `ctx` (whose dims are the
    /// index space of `e`). `top` is true when `e` is the whole right-hand
    /// side of an equation.
    fn expr(&mut self, e: Expr, ctx: &Set, top: bool, owner: &str) -> Result<Expr, SdrError> {
        let Expr { kind, ty, span } = e;
        let params = self.params();
        let kind = match kind {
            ExprKind::Reduce(r) => {
                let mut r = *r;
                // Only body points projecting into the evaluation domain are
                // used: P := P ∩ proj⁻¹(ctx). This also bounds the body
                // dimensions that lowering leaves free (a prefix sum's `i`),
                // so that locals extracted from the body have bounded domains.
                r.body_domain = restrict_to_used(&r, ctx)?;
                let body_ctx = r.body_domain.clone();
                let body = self.expr(r.body, &body_ctx, false, owner)?;
                let dom = r.body_domain.simplify()?;
                let pieces = dom.make_disjoint()?;
                let mut parts: Vec<Expr> = Vec::new();
                let n_pieces = pieces.pieces().len();
                if n_pieces <= 1 {
                    let reduction = Reduction {
                        body_domain: dom,
                        body,
                        ..r
                    };
                    let red = Expr {
                        kind: ExprKind::Reduce(Box::new(reduction)),
                        ty,
                        span,
                    };
                    if top {
                        return Ok(red);
                    }
                    let id = self.new_local(owner, "red", ctx.clone(), red);
                    return identity_read(id, ctx.space(), ty, span);
                }
                if let Some((all, hole)) = super::complement::hole(r.op, &r.proj, &pieces)? {
                    let (all_text, hole_text) = (all.to_string(), hole.to_string());
                    // `⊕ over F \ H` as `(⊕ over F) − (⊕ over H)`
                    // (`complement`).
                    let mut reads = Vec::with_capacity(2);
                    for (tag, d) in [("all", all), ("hole", hole)] {
                        let reduction = Reduction {
                            id: r.id,
                            op: r.op,
                            proj: r.proj.clone(),
                            body_domain: d.renamed(dom.space().clone())?,
                            body: body.clone(),
                        };
                        let red = Expr {
                            kind: ExprKind::Reduce(Box::new(reduction)),
                            ty,
                            span,
                        };
                        let id = self.new_local(owner, tag, ctx.clone(), red);
                        reads.push(identity_read(id, ctx.space(), ty, span)?);
                    }
                    let hole_read = reads.pop();
                    let all_read = reads.pop();
                    let (Some(a), Some(h)) = (all_read, hole_read) else {
                        return Err(SdrError::Internal("a complement has no two parts".into()));
                    };
                    let mut d = super::Decision::new(
                        &self.sys.name,
                        owner,
                        super::DecisionKind::Complement,
                        true,
                        "a `+` over a domain with a hyperplane hole",
                    );
                    d.detail = format!("total over {all_text} minus the hole {hole_text}");
                    self.decisions.push(d);
                    return Ok(Expr {
                        kind: ExprKind::Binary(BinOp::Sub, Box::new(a), Box::new(h)),
                        ty,
                        span,
                    });
                }
                for piece in pieces.pieces() {
                    let one = Set::from_basic(piece.clone());
                    let d = one.renamed(dom.space().clone())?.simplify()?;
                    let reduction = Reduction {
                        id: r.id,
                        op: r.op,
                        proj: r.proj.clone(),
                        body_domain: d,
                        body: body.clone(),
                    };
                    let red = Expr {
                        kind: ExprKind::Reduce(Box::new(reduction)),
                        ty,
                        span,
                    };
                    let id = self.new_local(owner, "part", ctx.clone(), red);
                    parts.push(identity_read(id, ctx.space(), ty, span)?);
                }
                let mut it = parts.into_iter();
                // Invariant: n_pieces >= 2 here, so there is a first part.
                let first = it
                    .next()
                    .ok_or_else(|| SdrError::Internal("a split reduction has no pieces".into()))?;
                let combined = it.fold(first, |acc, x| combine(r.op, acc, x, ty));
                return Ok(combined);
            }
            ExprKind::Restrict(d, x) => {
                let inner = intersect_domains(ctx, &d)?;
                ExprKind::Restrict(d, Box::new(self.expr(*x, &inner, false, owner)?))
            }
            ExprKind::Case(pieces) => {
                let mut out = Vec::with_capacity(pieces.len());
                for (d, x) in pieces {
                    let inner = intersect_domains(ctx, &d)?;
                    out.push((d, self.expr(x, &inner, false, owner)?));
                }
                ExprKind::Case(out)
            }
            ExprKind::Categorical(c) => {
                let c = *c;
                let mut dims = ctx.dims().to_vec();
                dims.push(c.index.clone());
                let inner = c.domain.renamed(Space::set(&params, &dims))?;
                let weight = self.expr(c.weight, &inner, false, owner)?;
                ExprKind::Categorical(Box::new(Categorical { weight, ..c }))
            }
            ExprKind::IndirectRead { var, indices } => ExprKind::IndirectRead {
                var,
                indices: self.exprs(indices, ctx, owner)?,
            },
            ExprKind::Builtin(b, xs) => ExprKind::Builtin(b, self.exprs(xs, ctx, owner)?),
            ExprKind::Selection(x) => {
                let x = *x;
                ExprKind::Selection(Box::new(Selection {
                    value: self.expr(x.value, ctx, false, owner)?,
                    lower: self.expr(x.lower, ctx, false, owner)?,
                    upper: self.expr(x.upper, ctx, false, owner)?,
                    ..x
                }))
            }
            ExprKind::External(f, xs) => ExprKind::External(f, self.exprs(xs, ctx, owner)?),
            ExprKind::Random(d, xs, site) => ExprKind::Random(d, self.exprs(xs, ctx, owner)?, site),
            ExprKind::Unary(op, x) => {
                ExprKind::Unary(op, Box::new(self.expr(*x, ctx, false, owner)?))
            }
            ExprKind::Binary(op, a, b) => ExprKind::Binary(
                op,
                Box::new(self.expr(*a, ctx, false, owner)?),
                Box::new(self.expr(*b, ctx, false, owner)?),
            ),
            ExprKind::If(c, a, b) => ExprKind::If(
                Box::new(self.expr(*c, ctx, false, owner)?),
                Box::new(self.expr(*a, ctx, false, owner)?),
                Box::new(self.expr(*b, ctx, false, owner)?),
            ),
            k @ (ExprKind::IntConst(_)
            | ExprKind::FloatConst(_)
            | ExprKind::BoolConst(_)
            | ExprKind::Index(_)
            | ExprKind::Read { .. }) => k,
        };
        Ok(Expr { kind, ty, span })
    }

    fn exprs(&mut self, xs: Vec<Expr>, ctx: &Set, owner: &str) -> Result<Vec<Expr>, SdrError> {
        xs.into_iter()
            .map(|x| self.expr(x, ctx, false, owner))
            .collect()
    }
}
