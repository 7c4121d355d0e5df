//! Lowering: AST → checked IR [`Program`].
//!
//! Owns name resolution (indices, parameters, constants, variables,
//! built-ins, externals), typing (int/float/bool with int → float
//! promotion), arity and dimension checks, definition checks (every output
//! and local defined exactly once, inputs never), conversion of domains and
//! index expressions to affine form, substitution of `f @ E`, and the
//! canonical forms listed in `ir/mod.rs` (domains simplified through
//! `poly_bridge::canonical_domain`). The domain checks (coverage, overlaps,
//! out-of-domain reads, bounded reductions) are in
//! [`super::check_domains`], run on the lowered program when everything
//! else is correct.
//!
//! Choices where Alpha or LANGUAGE.md leave room (documented for users):
//! - `if c then a else b` is strict for the domain checks: reads in both
//!   branches must be inside their variables' domains (use `case` to guard
//!   a read by a domain).
//! - A `case` piece written without a restriction is defined where its
//!   affine reads are (the preimages of the read variables' domains).
//! - Integer division and modulo in constraints are rejected as
//!   unsupported (they are never approximated).
//! - `external` functions return float (`external int f(1)` is rejected).
//!
//! Must not know about pest, schedules or code generation.

use std::collections::HashMap;

use super::types::*;
use crate::diag::{Diagnostic, SourceFile, Span};
use crate::syntax::ast;

/// Lowers a parsed file to a checked program.
///
/// Every error found is returned (several at once where they are
/// independent): unknown or duplicate names, type errors, arity of calls,
/// dimension of accesses, outputs/locals not defined or defined twice,
/// inputs defined, non-affine domains; then, when those pass, the domain
/// checks of [`super::check_domains::check_program`].
pub fn lower(file: &ast::File, src: &SourceFile) -> Result<Program, Vec<Diagnostic>> {
    let _ = src; // Spans are byte offsets into `src`; rendering is the caller's.
    let mut errors = Vec::new();
    let mut items = Vec::new();
    flatten(&file.items, &mut items);

    // Global names: constants, externals, systems.
    let mut constants: Vec<(String, i64)> = Vec::new();
    let mut const_map: HashMap<String, i64> = HashMap::new();
    let mut externals: Vec<External> = Vec::new();
    let mut global_spans: HashMap<String, Span> = HashMap::new();
    let mut declare_global = |name: &ast::Ident, errors: &mut Vec<Diagnostic>| -> bool {
        if let Some(prev) = global_spans.get(&name.name) {
            errors.push(
                Diagnostic::error(format!("duplicate name `{}`", name.name), name.span)
                    .with_label("declared again here")
                    .with_secondary(*prev, "first declared here"),
            );
            false
        } else {
            global_spans.insert(name.name.clone(), name.span);
            true
        }
    };
    for it in &items {
        match it {
            ast::Item::Constant(c) if declare_global(&c.name, &mut errors) => {
                constants.push((c.name.name.clone(), c.value));
                const_map.insert(c.name.name.clone(), c.value);
            }
            ast::Item::External(e) => {
                if builtin_kind(&e.name.name).is_some() {
                    errors.push(
                        Diagnostic::error(
                            format!(
                                "`{}` is a built-in function and cannot be redeclared",
                                e.name.name
                            ),
                            e.name.span,
                        )
                        .with_label("built-in name"),
                    );
                    continue;
                }
                if let Some((t, s)) = e.result {
                    if t != ast::ElemType::Float {
                        errors.push(
                            Diagnostic::error("unsupported: external functions return float", s)
                                .with_label("only `float` is supported here"),
                        );
                    }
                }
                if declare_global(&e.name, &mut errors) {
                    externals.push(External {
                        name: e.name.name.clone(),
                        arity: e.arity,
                        span: e.span,
                    });
                }
            }
            ast::Item::System(s) => {
                declare_global(&s.name, &mut errors);
            }
            _ => {}
        }
    }
    let g = Globals {
        constants: const_map,
        externals: &externals,
    };
    let mut systems = Vec::new();
    for it in &items {
        if let ast::Item::System(s) = it {
            if let Some(sys) = lower_system(&g, s, &mut errors) {
                systems.push(sys);
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut program = Program {
        constants,
        externals,
        systems,
    };
    let canon_errors = canonicalize_program(&mut program);
    if !canon_errors.is_empty() {
        return Err(canon_errors);
    }
    let domain_errors = super::check_domains::check_program(&program);
    if domain_errors.is_empty() {
        Ok(program)
    } else {
        Err(domain_errors)
    }
}

/// Canonical form 3 of `ir/mod.rs`: every domain of the program through
/// `poly_bridge::canonical_domain` (exact simplification).
fn canonicalize_program(p: &mut Program) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    for s in &mut p.systems {
        let params = s.params.clone();
        let span = s.span;
        canon(&mut s.context, &params, span, &mut errors);
        for v in &mut s.vars {
            canon(&mut v.domain, &params, v.span, &mut errors);
        }
        for eq in &mut s.equations {
            canon_expr(&mut eq.expr, &params, &mut errors);
        }
    }
    errors
}

fn canon(d: &mut Domain, params: &[String], span: Span, errors: &mut Vec<Diagnostic>) {
    match super::poly_bridge::canonical_domain(d, params) {
        Ok(c) => *d = c,
        Err(e) => errors.push(
            Diagnostic::error(format!("this domain could not be simplified: {e}"), span)
                .with_label("polyhedral library error"),
        ),
    }
}

fn canon_expr(e: &mut Expr, params: &[String], errors: &mut Vec<Diagnostic>) {
    let span = e.span;
    match &mut e.kind {
        ExprKind::IntConst(_)
        | ExprKind::FloatConst(_)
        | ExprKind::BoolConst(_)
        | ExprKind::Index(_)
        | ExprKind::Read { .. } => {}
        ExprKind::IndirectRead { indices: xs, .. }
        | ExprKind::Builtin(_, xs)
        | ExprKind::External(_, xs)
        | ExprKind::Random(_, xs, _) => xs.iter_mut().for_each(|x| canon_expr(x, params, errors)),
        ExprKind::Unary(_, x) => canon_expr(x, params, errors),
        ExprKind::Restrict(d, x) => {
            canon(d, params, span, errors);
            canon_expr(x, params, errors);
        }
        ExprKind::Binary(_, a, b) => {
            canon_expr(a, params, errors);
            canon_expr(b, params, errors);
        }
        ExprKind::If(a, b, c) => {
            canon_expr(a, params, errors);
            canon_expr(b, params, errors);
            canon_expr(c, params, errors);
        }
        ExprKind::Case(pieces) => {
            for (d, x) in pieces {
                canon(d, params, span, errors);
                canon_expr(x, params, errors);
            }
        }
        ExprKind::Reduce(r) => {
            canon(&mut r.body_domain, params, span, errors);
            canon_expr(&mut r.body, params, errors);
        }
        ExprKind::Categorical(c) => {
            canon(&mut c.domain, params, span, errors);
            canon_expr(&mut c.weight, params, errors);
        }
    }
}

fn flatten<'a>(items: &'a [ast::Item], out: &mut Vec<&'a ast::Item>) {
    for it in items {
        match it {
            ast::Item::Package(p) => flatten(&p.items, out),
            _ => out.push(it),
        }
    }
}

struct Globals<'a> {
    constants: HashMap<String, i64>,
    externals: &'a [External],
}

/// What a call name denotes.
#[derive(Clone, Copy)]
enum CallKind {
    Builtin(Builtin),
    Random(Distribution),
}

fn builtin_kind(name: &str) -> Option<CallKind> {
    use Builtin as B;
    use Distribution as D;
    Some(match name {
        "exp" => CallKind::Builtin(B::Exp),
        "log" => CallKind::Builtin(B::Log),
        "sqrt" => CallKind::Builtin(B::Sqrt),
        "abs" => CallKind::Builtin(B::Abs),
        "pow" => CallKind::Builtin(B::Pow),
        "floor" => CallKind::Builtin(B::Floor),
        "ceil" => CallKind::Builtin(B::Ceil),
        "lgamma" => CallKind::Builtin(B::Lgamma),
        "float" => CallKind::Builtin(B::ToFloat),
        "int" => CallKind::Builtin(B::ToInt),
        "max" => CallKind::Builtin(B::Max),
        "min" => CallKind::Builtin(B::Min),
        _ => return D::from_name(name).map(CallKind::Random),
    })
}

/// The names visible in an expression and their values as affine functions
/// of the *real* index space (the equation's or a reduction body's).
/// Inside `f @ E`, `E`'s indices are anonymous (`None`) and their values are
/// `f`'s results.
#[derive(Clone)]
struct Scope {
    names: Vec<Option<String>>,
    values: Vec<AffExpr>,
    /// Names of the real space's dimensions.
    real: Vec<String>,
}

impl Scope {
    fn identity(real: Vec<String>, n_par: usize) -> Scope {
        let n = real.len();
        Scope {
            names: real.iter().cloned().map(Some).collect(),
            values: (0..n).map(|k| AffExpr::index(n, n_par, k)).collect(),
            real,
        }
    }
    fn lookup(&self, name: &str) -> Option<&AffExpr> {
        self.names
            .iter()
            .rposition(|n| n.as_deref() == Some(name))
            .map(|k| &self.values[k])
    }
    fn is_identity(&self) -> bool {
        self.names.len() == self.real.len()
            && self
                .names
                .iter()
                .zip(&self.real)
                .all(|(a, b)| a.as_deref() == Some(b.as_str()))
    }
}

struct SysCx<'a> {
    g: &'a Globals<'a>,
    params: Vec<String>,
    vars: Vec<Variable>,
    var_map: HashMap<String, VarId>,
    errors: &'a mut Vec<Diagnostic>,
    /// The variable whose equation is being lowered, and its next call-site
    /// ordinal.
    cur_var: VarId,
    next_site: u32,
}

fn lower_system(g: &Globals, s: &ast::System, errors: &mut Vec<Diagnostic>) -> Option<System> {
    let before = errors.len();
    let mut cx = SysCx {
        g,
        params: Vec::new(),
        vars: Vec::new(),
        var_map: HashMap::new(),
        errors,
        cur_var: 0,
        next_site: 0,
    };
    // Parameters.
    let mut seen: HashMap<String, Span> = HashMap::new();
    for p in &s.params {
        if cx.check_fresh(&p.name, p.span, &seen) {
            seen.insert(p.name.clone(), p.span);
            cx.params.push(p.name.clone());
        }
    }
    let context = match &s.context {
        Some(d) => cx.decl_domain(d).map(|mut d| {
            if !d.dims.is_empty() {
                cx.errors.push(
                    Diagnostic::error(
                        "the parameter context must not have index dimensions",
                        s.context.as_ref().map(|c| c.span).unwrap_or(s.span),
                    )
                    .with_label("write `{ : constraints }`"),
                );
            }
            d.dims.clear();
            for piece in &mut d.pieces {
                for c in piece {
                    c.aff.idx.clear();
                }
            }
            d
        }),
        None => Some(Domain::universe(Vec::new())),
    }
    .unwrap_or_else(|| Domain::universe(Vec::new()));

    // Variables.
    for (decls, kind) in [
        (&s.inputs, VarKind::Input),
        (&s.outputs, VarKind::Output),
        (&s.locals, VarKind::Local),
    ] {
        for d in decls {
            let ty = match d.ty.map(|t| t.0) {
                Some(ast::ElemType::Int) => ElemType::Int,
                Some(ast::ElemType::Bool) => ElemType::Bool,
                _ => ElemType::Float,
            };
            let domain = match &d.domain {
                Some(dom) => cx.decl_domain(dom),
                None => Some(Domain::universe(Vec::new())),
            };
            let Some(domain) = domain else { continue };
            for n in &d.names {
                if !cx.check_fresh(&n.name, n.span, &seen) {
                    continue;
                }
                seen.insert(n.name.clone(), n.span);
                cx.var_map.insert(n.name.clone(), cx.vars.len());
                cx.vars.push(Variable {
                    name: n.name.clone(),
                    kind,
                    ty,
                    domain: domain.clone(),
                    span: n.span,
                });
            }
        }
    }

    // Equations.
    let mut equations: Vec<Equation> = Vec::new();
    let mut defined: HashMap<VarId, Span> = HashMap::new();
    for eq in &s.equations {
        let Some(&v) = cx.var_map.get(&eq.var.name) else {
            let what = if cx.params.contains(&eq.var.name) {
                format!("`{}` is a parameter, not a variable", eq.var.name)
            } else {
                format!("unknown variable `{}`", eq.var.name)
            };
            cx.errors.push(
                Diagnostic::error(what, eq.var.span).with_label("not declared in this system"),
            );
            continue;
        };
        if cx.vars[v].kind == VarKind::Input {
            cx.errors.push(
                Diagnostic::error(
                    format!("input `{}` cannot be defined by an equation", eq.var.name),
                    eq.var.span,
                )
                .with_label("an input")
                .with_secondary(cx.vars[v].span, "declared as an input here"),
            );
            continue;
        }
        if let Some(prev) = defined.get(&v) {
            cx.errors.push(
                Diagnostic::error(format!("`{}` is defined twice", eq.var.name), eq.var.span)
                    .with_label("second definition")
                    .with_secondary(*prev, "first definition"),
            );
            continue;
        }
        defined.insert(v, eq.var.span);
        if let Some(e) = cx.equation(v, eq) {
            equations.push(e);
        }
    }
    for (k, var) in cx.vars.iter().enumerate() {
        if var.kind != VarKind::Input && !defined.contains_key(&k) {
            let kind = if var.kind == VarKind::Output {
                "output"
            } else {
                "local"
            };
            cx.errors.push(
                Diagnostic::error(format!("{kind} `{}` is never defined", var.name), var.span)
                    .with_label("no equation defines it"),
            );
        }
    }
    let sweeps = lower_sweeps(&s.sweeps, &cx.vars, &cx.var_map, &cx.params, cx.errors);
    let sys = System {
        name: s.name.name.clone(),
        params: cx.params,
        context,
        vars: cx.vars,
        equations,
        sweeps,
        span: s.span,
    };
    if errors.len() > before {
        None
    } else {
        Some(sys)
    }
}

/// Checks `sweep IN <- OUT` declarations: `IN` an input and `OUT` an
/// output of the same type and the same domain (equal as integer sets for
/// every parameter value), each input and each output named at most once.
fn lower_sweeps(
    decls: &[ast::SweepDecl],
    vars: &[Variable],
    var_map: &HashMap<String, VarId>,
    params: &[String],
    errors: &mut Vec<Diagnostic>,
) -> Vec<Sweep> {
    let mut out: Vec<Sweep> = Vec::new();
    let mut seen_in: HashMap<VarId, Span> = HashMap::new();
    let mut seen_out: HashMap<VarId, Span> = HashMap::new();
    for d in decls {
        let lookup = |id: &ast::Ident, kind: VarKind, errors: &mut Vec<Diagnostic>| {
            let what = if kind == VarKind::Input {
                "an input"
            } else {
                "an output"
            };
            match var_map.get(&id.name) {
                Some(&v) if vars[v].kind == kind => Some(v),
                Some(&v) => {
                    errors.push(
                        Diagnostic::error(format!("`{}` is not {what}", id.name), id.span)
                            .with_label(format!("`sweep` takes {what} here"))
                            .with_secondary(vars[v].span, "declared here"),
                    );
                    None
                }
                None => {
                    errors.push(
                        Diagnostic::error(format!("unknown variable `{}`", id.name), id.span)
                            .with_label("not declared in this system"),
                    );
                    None
                }
            }
        };
        let input = lookup(&d.input, VarKind::Input, errors);
        let output = lookup(&d.output, VarKind::Output, errors);
        let (Some(input), Some(output)) = (input, output) else {
            continue;
        };
        if let Some(prev) = seen_in.insert(input, d.span) {
            errors.push(
                Diagnostic::error(format!("input `{}` is carried twice", d.input.name), d.span)
                    .with_label("second `sweep` of this input")
                    .with_secondary(prev, "first one"),
            );
            continue;
        }
        if let Some(prev) = seen_out.insert(output, d.span) {
            errors.push(
                Diagnostic::error(
                    format!("output `{}` feeds two inputs", d.output.name),
                    d.span,
                )
                .with_label("second `sweep` from this output")
                .with_secondary(prev, "first one"),
            );
            continue;
        }
        let (vi, vo) = (&vars[input], &vars[output]);
        if vi.ty != vo.ty {
            errors.push(
                Diagnostic::error(
                    format!(
                        "`{}` is {} but `{}` is {}",
                        vi.name,
                        vi.ty.name(),
                        vo.name,
                        vo.ty.name()
                    ),
                    d.span,
                )
                .with_label("a sweep carries a value of one type")
                .with_secondary(vi.span, "input declared here")
                .with_secondary(vo.span, "output declared here"),
            );
            continue;
        }
        let same = match (
            super::poly_bridge::to_set(&vi.domain, params),
            super::poly_bridge::to_set(&vo.domain, params),
        ) {
            (Ok(a), Ok(b)) => {
                vi.domain.n_dims() == vo.domain.n_dims() && a.is_equal(&b).unwrap_or(false)
            }
            _ => false,
        };
        if !same {
            errors.push(
                Diagnostic::error(
                    format!("`{}` and `{}` have different domains", vi.name, vo.name),
                    d.span,
                )
                .with_label("a sweep carries an array onto one of the same domain")
                .with_secondary(vi.span, "input declared here")
                .with_secondary(vo.span, "output declared here"),
            );
            continue;
        }
        out.push(Sweep { input, output });
    }
    out
}

/// Checked arithmetic on affine expressions (`None` on overflow).
fn aff_add(a: &AffExpr, b: &AffExpr, sign: i64) -> Option<AffExpr> {
    let comb = |x: i64, y: i64| x.checked_add(y.checked_mul(sign)?);
    Some(AffExpr {
        idx: a
            .idx
            .iter()
            .zip(&b.idx)
            .map(|(x, y)| comb(*x, *y))
            .collect::<Option<_>>()?,
        par: a
            .par
            .iter()
            .zip(&b.par)
            .map(|(x, y)| comb(*x, *y))
            .collect::<Option<_>>()?,
        constant: comb(a.constant, b.constant)?,
    })
}

fn aff_scale(a: &AffExpr, k: i64) -> Option<AffExpr> {
    Some(AffExpr {
        idx: a
            .idx
            .iter()
            .map(|x| x.checked_mul(k))
            .collect::<Option<_>>()?,
        par: a
            .par
            .iter()
            .map(|x| x.checked_mul(k))
            .collect::<Option<_>>()?,
        constant: a.constant.checked_mul(k)?,
    })
}

fn aff_is_const(a: &AffExpr) -> Option<i64> {
    if a.idx.iter().chain(&a.par).all(|&c| c == 0) {
        Some(a.constant)
    } else {
        None
    }
}

/// Extends an affine expression with `extra` zero index coefficients.
fn aff_widen(a: &AffExpr, extra: usize) -> AffExpr {
    let mut b = a.clone();
    b.idx.extend(std::iter::repeat_n(0, extra));
    b
}

/// `a(f(x))`: substitutes the functions `f` (over a space of `n` indices)
/// for the indices of `a`.
fn aff_compose(a: &AffExpr, f: &[AffExpr], n: usize, n_par: usize) -> Option<AffExpr> {
    let mut r = AffExpr::zero(n, n_par);
    r.constant = a.constant;
    for (k, c) in a.par.iter().enumerate() {
        r.par[k] = *c;
    }
    for (c, fk) in a.idx.iter().zip(f) {
        if *c != 0 {
            r = aff_add(&r, &aff_scale(fk, *c)?, 1)?;
        }
    }
    Some(r)
}

/// Domain in the space of `n` indices: intersection (pairwise products of
/// pieces).
fn dom_intersect(a: &Domain, b: &Domain) -> Domain {
    let mut pieces = Vec::new();
    for p in &a.pieces {
        for q in &b.pieces {
            let mut r = p.clone();
            r.extend(q.iter().cloned());
            pieces.push(dedup_piece(r));
        }
    }
    Domain {
        dims: a.dims.clone(),
        pieces,
    }
}

/// Removes constraints that repeat an earlier one of the same piece
/// (syntactically), keeping the first occurrence. This keeps
/// print → parse → lower a fixpoint until domains are canonicalized
/// through `poly`.
fn dedup_piece(p: Vec<AffConstraint>) -> Vec<AffConstraint> {
    let mut out: Vec<AffConstraint> = Vec::with_capacity(p.len());
    for c in p {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

fn dedup_domain(mut d: Domain) -> Domain {
    d.pieces = d.pieces.into_iter().map(dedup_piece).collect();
    d
}

/// `{ x : f(x) ∈ d }` for affine `f` from a space with dims `dims`.
fn dom_preimage(d: &Domain, f: &[AffExpr], dims: &[String], n_par: usize) -> Option<Domain> {
    let n = dims.len();
    let mut pieces = Vec::new();
    for p in &d.pieces {
        let mut q = Vec::new();
        for c in p {
            q.push(AffConstraint {
                aff: aff_compose(&c.aff, f, n, n_par)?,
                kind: c.kind,
            });
        }
        pieces.push(q);
    }
    Some(Domain {
        dims: dims.to_vec(),
        pieces,
    })
}

/// Typed result of lowering one AST expression.
type Lowered = Option<Expr>;

fn mk(kind: ExprKind, ty: ElemType, span: Span) -> Expr {
    Expr { kind, ty, span }
}

fn is_numeric(t: ElemType) -> bool {
    matches!(t, ElemType::Int | ElemType::Float)
}

/// The affine value of an already-lowered int expression, if it is one.
fn as_aff(e: &Expr, n: usize, n_par: usize) -> Option<AffExpr> {
    match &e.kind {
        ExprKind::Index(a) => Some(a.clone()),
        ExprKind::IntConst(v) => Some(AffExpr::constant(n, n_par, *v)),
        _ => None,
    }
}

/// `Index(a)`, or `IntConst` when `a` has no index or parameter term.
fn index_expr(a: AffExpr, span: Span) -> Expr {
    match aff_is_const(&a) {
        Some(v) => mk(ExprKind::IntConst(v), ElemType::Int, span),
        None => mk(ExprKind::Index(a), ElemType::Int, span),
    }
}

impl SysCx<'_> {
    fn n_par(&self) -> usize {
        self.params.len()
    }

    fn err(&mut self, msg: impl Into<String>, span: Span, label: &str) {
        self.errors
            .push(Diagnostic::error(msg, span).with_label(label.to_string()));
    }

    /// A new system-level name must not clash with an earlier one.
    fn check_fresh(&mut self, name: &str, span: Span, seen: &HashMap<String, Span>) -> bool {
        if let Some(prev) = seen.get(name) {
            self.errors.push(
                Diagnostic::error(format!("duplicate name `{name}`"), span)
                    .with_label("declared again here")
                    .with_secondary(*prev, "first declared here"),
            );
            false
        } else {
            true
        }
    }

    /// An index name bound by an equation, a reduction or a function must
    /// not hide a parameter, a variable or another index in scope.
    /// Binds `ids` as fresh index names after the names already `taken`
    /// (checked with `check_index_name`, which reports each clash); the
    /// extended list, or `None` at the first error.
    fn bind_index_names(
        &mut self,
        ids: &[ast::Ident],
        mut taken: Vec<Option<String>>,
    ) -> Option<Vec<Option<String>>> {
        for id in ids {
            if !self.check_index_name(id, &taken) {
                return None;
            }
            taken.push(Some(id.name.clone()));
        }
        Some(taken)
    }

    fn check_index_name(&mut self, id: &ast::Ident, taken: &[Option<String>]) -> bool {
        let clash = if self.params.contains(&id.name) {
            Some("a parameter")
        } else if self.var_map.contains_key(&id.name) {
            Some("a variable")
        } else if self.g.constants.contains_key(&id.name) {
            Some("a constant")
        } else if taken.iter().any(|t| t.as_deref() == Some(id.name.as_str())) {
            Some("an index in scope")
        } else {
            None
        };
        match clash {
            Some(what) => {
                self.err(
                    format!("duplicate name `{}`: it is already {what}", id.name),
                    id.span,
                    "choose another index name",
                );
                false
            }
            None => true,
        }
    }

    // ------------------------------------------------------------ affine

    /// Converts an AST expression to an affine function of the real space
    /// of `scope` (indices by name, parameters, constants, integers, `+ -`,
    /// `*` by a constant).
    fn affine(&mut self, e: &ast::Expr, scope: &Scope) -> Option<AffExpr> {
        let n = scope.real.len();
        let np = self.n_par();
        let overflow = |cx: &mut Self| {
            cx.err(
                "integer overflow in an affine expression",
                e.span,
                "too large",
            );
            None
        };
        match &e.kind {
            ast::ExprKind::Int(v) => Some(AffExpr::constant(n, np, *v)),
            ast::ExprKind::Name(name) => {
                if let Some(a) = scope.lookup(name) {
                    Some(a.clone())
                } else if let Some(k) = self.params.iter().position(|p| p == name) {
                    let mut a = AffExpr::zero(n, np);
                    a.par[k] = 1;
                    Some(a)
                } else if let Some(v) = self.g.constants.get(name) {
                    Some(AffExpr::constant(n, np, *v))
                } else {
                    self.err(
                        format!("unknown name `{name}` in an affine expression"),
                        e.span,
                        "not an index, parameter or constant in scope",
                    );
                    None
                }
            }
            ast::ExprKind::Unary {
                op: ast::UnOp::Neg,
                operand,
            } => {
                let a = self.affine(operand, scope)?;
                aff_scale(&a, -1).or_else(|| overflow(self))
            }
            ast::ExprKind::Binary { op, lhs, rhs } => match op {
                ast::BinOp::Add | ast::BinOp::Sub => {
                    let a = self.affine(lhs, scope);
                    let b = self.affine(rhs, scope);
                    let sign = if *op == ast::BinOp::Add { 1 } else { -1 };
                    aff_add(&a?, &b?, sign).or_else(|| overflow(self))
                }
                ast::BinOp::Mul => {
                    let a = self.affine(lhs, scope)?;
                    let b = self.affine(rhs, scope)?;
                    let r = match (aff_is_const(&a), aff_is_const(&b)) {
                        (Some(k), _) => aff_scale(&b, k),
                        (_, Some(k)) => aff_scale(&a, k),
                        _ => {
                            self.err(
                                "not affine: product of two non-constant terms",
                                e.span,
                                "one factor must be a constant",
                            );
                            return None;
                        }
                    };
                    r.or_else(|| overflow(self))
                }
                ast::BinOp::Div | ast::BinOp::Mod => {
                    self.err(
                        "unsupported: integer division or modulo in an affine expression",
                        e.span,
                        "cannot be eliminated exactly here",
                    );
                    None
                }
                _ => {
                    self.err(
                        "not an affine expression",
                        e.span,
                        "expected an affine function",
                    );
                    None
                }
            },
            ast::ExprKind::Call { func, .. } if matches!(func.name.as_str(), "floor" | "ceil") => {
                self.err(
                    "unsupported: integer division in an affine expression",
                    e.span,
                    "cannot be eliminated exactly here",
                );
                None
            }
            ast::ExprKind::Val(f) => self.val(f, scope, e.span),
            _ => {
                self.err(
                    "not an affine expression",
                    e.span,
                    "expected an affine function",
                );
                None
            }
        }
    }

    /// `val (i, j -> e)`: binds the function's names to the scope's values.
    fn val(&mut self, f: &ast::AffineFn, scope: &Scope, span: Span) -> Option<AffExpr> {
        let inner = self.fn_scope(f, scope)?;
        if f.exprs.len() != 1 {
            self.err(
                format!(
                    "`val` needs a function with one result, this one has {}",
                    f.exprs.len()
                ),
                span,
                "one result expected",
            );
            return None;
        }
        self.affine(&f.exprs[0], &inner)
    }

    /// The scope inside a function `(i, j -> ...)` applied at the current
    /// point: its names bound to the current scope's values.
    fn fn_scope(&mut self, f: &ast::AffineFn, scope: &Scope) -> Option<Scope> {
        if f.params.len() != scope.values.len() {
            self.err(
                format!(
                    "the function has {} argument(s) but is used where there are {} index(es)",
                    f.params.len(),
                    scope.values.len()
                ),
                f.span,
                "wrong number of indices",
            );
            return None;
        }
        // The function's names may repeat the indices in scope (they are
        // bound afresh), but not a parameter, variable or constant, nor
        // each other.
        let names = self.bind_index_names(&f.params, Vec::new())?;
        Some(Scope {
            names,
            values: scope.values.clone(),
            real: scope.real.clone(),
        })
    }

    // ------------------------------------------------------------ domains

    /// A constraint as a union (DNF) of conjunctions over the real space.
    fn constraint(
        &mut self,
        c: &ast::Constraint,
        scope: &Scope,
    ) -> Option<Vec<Vec<AffConstraint>>> {
        match &c.kind {
            ast::ConstraintKind::And(cs) => {
                let mut acc: Vec<Vec<AffConstraint>> = vec![Vec::new()];
                let mut ok = true;
                for sub in cs {
                    match self.constraint(sub, scope) {
                        Some(d) => {
                            let mut next = Vec::new();
                            for p in &acc {
                                for q in &d {
                                    let mut r = p.clone();
                                    r.extend(q.iter().cloned());
                                    next.push(r);
                                }
                            }
                            acc = next;
                        }
                        None => ok = false,
                    }
                }
                ok.then_some(acc)
            }
            ast::ConstraintKind::Or(cs) => {
                let mut acc = Vec::new();
                let mut ok = true;
                for sub in cs {
                    match self.constraint(sub, scope) {
                        Some(d) => acc.extend(d),
                        None => ok = false,
                    }
                }
                ok.then_some(acc)
            }
            ast::ConstraintKind::Chain { operands, ops } => {
                let mut lists = Vec::new();
                for l in operands {
                    let mut v = Vec::new();
                    for e in l {
                        v.push(self.affine(e, scope));
                    }
                    lists.push(v);
                }
                let lists: Vec<Vec<AffExpr>> = lists
                    .into_iter()
                    .map(|l| l.into_iter().collect::<Option<Vec<_>>>())
                    .collect::<Option<Vec<_>>>()?;
                let mut acc: Vec<Vec<AffConstraint>> = vec![Vec::new()];
                for (k, (op, span)) in ops.iter().enumerate() {
                    for a in &lists[k] {
                        for b in &lists[k + 1] {
                            let Some(atom) = cmp_atom(*op, a, b) else {
                                self.err("integer overflow in a constraint", *span, "too large");
                                return None;
                            };
                            let mut next = Vec::new();
                            for p in &acc {
                                for q in &atom {
                                    let mut r = p.clone();
                                    r.push(q.clone());
                                    next.push(r);
                                }
                            }
                            acc = next;
                        }
                    }
                }
                Some(acc)
            }
        }
    }

    /// A domain written inside an expression (`{: c}` or `{[i, j] : c}`),
    /// over the real space of `scope`.
    fn restriction_domain(&mut self, d: &ast::Domain, scope: &Scope) -> Option<Domain> {
        let ast::DomainKind::Set(pieces) = &d.kind else {
            self.err(
                "a restriction needs a set `{: constraints}`",
                d.span,
                "array shorthand is for declarations",
            );
            return None;
        };
        let mut out = Vec::new();
        let mut ok = true;
        for bs in pieces {
            let sc = match &bs.indices {
                None => scope.clone(),
                Some(names) => {
                    if names.len() != scope.values.len() {
                        self.err(
                            format!(
                                "the set has {} index(es) but is used where there are {}",
                                names.len(),
                                scope.values.len()
                            ),
                            bs.span,
                            "wrong number of indices",
                        );
                        ok = false;
                        continue;
                    }
                    Scope {
                        names: names.iter().map(|n| Some(n.name.clone())).collect(),
                        values: scope.values.clone(),
                        real: scope.real.clone(),
                    }
                }
            };
            match &bs.constraint {
                None => out.push(Vec::new()),
                Some(c) => match self.constraint(c, &sc) {
                    Some(p) => out.extend(p),
                    None => ok = false,
                },
            }
        }
        if pieces.is_empty() {
            out.push(Vec::new());
        }
        ok.then(|| {
            dedup_domain(Domain {
                dims: scope.real.clone(),
                pieces: out,
            })
        })
    }

    /// A declaration's domain: a set with its own index names, or `[E, ...]`.
    fn decl_domain(&mut self, d: &ast::Domain) -> Option<Domain> {
        let np = self.n_par();
        match &d.kind {
            ast::DomainKind::Array(extents) => {
                let n = extents.len();
                let dims: Vec<String> = (0..n).map(|k| format!("i{k}")).collect();
                let empty = Scope::identity(Vec::new(), np);
                let mut piece = Vec::new();
                let mut ok = true;
                for (k, e) in extents.iter().enumerate() {
                    match self.affine(e, &empty) {
                        Some(a) => {
                            let x = AffExpr::index(n, np, k);
                            // 0 <= x_k and x_k <= E - 1
                            piece.push(AffConstraint {
                                aff: x.clone(),
                                kind: ConstraintKind::Ge,
                            });
                            let w = aff_widen(&a, n);
                            match aff_add(&w, &x, -1)
                                .and_then(|r| aff_add(&r, &AffExpr::constant(n, np, 1), -1))
                            {
                                Some(aff) => piece.push(AffConstraint {
                                    aff,
                                    kind: ConstraintKind::Ge,
                                }),
                                None => ok = false,
                            }
                        }
                        None => ok = false,
                    }
                }
                ok.then(|| Domain {
                    dims,
                    pieces: vec![piece],
                })
            }
            ast::DomainKind::Set(pieces) => {
                if pieces.is_empty() {
                    return Some(Domain::universe(Vec::new()));
                }
                let first = pieces[0].indices.clone().unwrap_or_default();
                let dims: Vec<String> = first.iter().map(|i| i.name.clone()).collect();
                let mut out = Vec::new();
                let mut ok = true;
                for bs in pieces {
                    let names = bs.indices.clone().unwrap_or_default();
                    if names.len() != dims.len() {
                        self.err(
                            format!(
                                "all pieces of a domain need the same number of indices ({} here, {} in the first)",
                                names.len(),
                                dims.len()
                            ),
                            bs.span,
                            "wrong number of indices",
                        );
                        ok = false;
                        continue;
                    }
                    let mut seen: Vec<Option<String>> = Vec::new();
                    for n in &names {
                        if !self.check_index_name(n, &seen) {
                            ok = false;
                        }
                        seen.push(Some(n.name.clone()));
                    }
                    let real: Vec<String> = names.iter().map(|n| n.name.clone()).collect();
                    let sc = Scope::identity(real, np);
                    match &bs.constraint {
                        None => out.push(Vec::new()),
                        Some(c) => match self.constraint(c, &sc) {
                            Some(p) => out.extend(p),
                            None => ok = false,
                        },
                    }
                }
                ok.then(|| dedup_domain(Domain { dims, pieces: out }))
            }
        }
    }

    // ------------------------------------------------------------ equations

    fn equation(&mut self, v: VarId, eq: &ast::Equation) -> Option<Equation> {
        let var_dims = self.vars[v].domain.dims.clone();
        let indices: Vec<String> = match &eq.indices {
            Some(ids) => {
                if ids.len() != var_dims.len() {
                    self.err(
                        format!(
                            "`{}` has {} dimension(s) but the left-hand side binds {} index(es)",
                            eq.var.name,
                            var_dims.len(),
                            ids.len()
                        ),
                        eq.var
                            .span
                            .join(ids.last().map(|i| i.span).unwrap_or(eq.var.span)),
                        "wrong number of indices",
                    );
                    return None;
                }
                self.bind_index_names(ids, Vec::new())?;
                ids.iter().map(|i| i.name.clone()).collect()
            }
            None => var_dims,
        };
        self.cur_var = v;
        self.next_site = 0;
        let scope = Scope::identity(indices.clone(), self.n_par());
        let rhs = self.expr(&eq.rhs, &scope)?;
        let vty = self.vars[v].ty;
        let ok = match (vty, rhs.ty) {
            (a, b) if a == b => true,
            (ElemType::Float, ElemType::Int) => true,
            _ => false,
        };
        if !ok {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "type error: `{}` is {} but its equation has type {}",
                        eq.var.name,
                        vty.name(),
                        rhs.ty.name()
                    ),
                    eq.rhs.span,
                )
                .with_label(format!("this is {}", rhs.ty.name()))
                .with_secondary(self.vars[v].span, format!("declared {} here", vty.name())),
            );
            return None;
        }
        Some(Equation {
            var: v,
            indices,
            expr: rhs,
            span: eq.span,
        })
    }

    // ------------------------------------------------------------ expressions

    fn type_err(&mut self, msg: String, span: Span, label: String) {
        self.errors
            .push(Diagnostic::error(format!("type error: {msg}"), span).with_label(label));
    }

    fn expr(&mut self, e: &ast::Expr, scope: &Scope) -> Lowered {
        let n = scope.real.len();
        let np = self.n_par();
        let span = e.span;
        match &e.kind {
            ast::ExprKind::Int(v) => Some(mk(ExprKind::IntConst(*v), ElemType::Int, span)),
            ast::ExprKind::Float(v) => Some(mk(ExprKind::FloatConst(*v), ElemType::Float, span)),
            ast::ExprKind::Bool(b) => Some(mk(ExprKind::BoolConst(*b), ElemType::Bool, span)),
            ast::ExprKind::Name(name) => {
                if let Some(a) = scope.lookup(name) {
                    return Some(index_expr(a.clone(), span));
                }
                if let Some(k) = self.params.iter().position(|p| p == name) {
                    let mut a = AffExpr::zero(n, np);
                    a.par[k] = 1;
                    return Some(index_expr(a, span));
                }
                if let Some(v) = self.g.constants.get(name) {
                    return Some(mk(ExprKind::IntConst(*v), ElemType::Int, span));
                }
                if let Some(&v) = self.var_map.get(name) {
                    // Whole-variable notation: the same indices (or none
                    // for a scalar).
                    let d = self.vars[v].domain.n_dims();
                    let access = if d == 0 {
                        Vec::new()
                    } else if d == scope.values.len() {
                        scope.values.clone()
                    } else {
                        self.err(
                            format!(
                                "`{name}` has {d} dimension(s) but is used where there are {} index(es)",
                                scope.values.len()
                            ),
                            span,
                            "write the indices explicitly",
                        );
                        return None;
                    };
                    return Some(mk(ExprKind::Read { var: v, access }, self.vars[v].ty, span));
                }
                self.err(format!("unknown name `{name}`"), span, "not declared");
                None
            }
            ast::ExprKind::Val(f) => {
                let a = self.val(f, scope, span)?;
                Some(index_expr(a, span))
            }
            ast::ExprKind::Access { var, indices } => {
                let Some(&v) = self.var_map.get(&var.name) else {
                    let msg =
                        if scope.lookup(&var.name).is_some() || self.params.contains(&var.name) {
                            format!("`{}` is an index or parameter, not a variable", var.name)
                        } else {
                            format!("unknown variable `{}`", var.name)
                        };
                    self.err(msg, var.span, "not a variable of this system");
                    return None;
                };
                let d = self.vars[v].domain.n_dims();
                if d != indices.len() {
                    self.err(
                        format!(
                            "`{}` has {d} dimension(s) but is accessed with {} index(es)",
                            var.name,
                            indices.len()
                        ),
                        span,
                        "wrong number of indices",
                    );
                    return None;
                }
                let mut lowered = Vec::new();
                let mut ok = true;
                for ix in indices {
                    match self.expr(ix, scope) {
                        Some(x) if x.ty == ElemType::Int => lowered.push(x),
                        Some(x) => {
                            self.type_err(
                                format!("an index must be int, this is {}", x.ty.name()),
                                ix.span,
                                "not an int".into(),
                            );
                            ok = false;
                        }
                        None => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                let ty = self.vars[v].ty;
                let affs: Option<Vec<AffExpr>> = lowered.iter().map(|x| as_aff(x, n, np)).collect();
                Some(match affs {
                    Some(access) => mk(ExprKind::Read { var: v, access }, ty, span),
                    None => mk(
                        ExprKind::IndirectRead {
                            var: v,
                            indices: lowered,
                        },
                        ty,
                        span,
                    ),
                })
            }
            ast::ExprKind::Dep { func, body } => {
                let inner = self.fn_scope(func, scope)?;
                let mut outs = Vec::new();
                for x in &func.exprs {
                    outs.push(self.affine(x, &inner));
                }
                let outs: Vec<AffExpr> = outs.into_iter().collect::<Option<_>>()?;
                let target = Scope {
                    names: vec![None; outs.len()],
                    values: outs,
                    real: scope.real.clone(),
                };
                self.expr(body, &target)
            }
            ast::ExprKind::Unary { op, operand } => {
                let x = self.expr(operand, scope)?;
                match op {
                    ast::UnOp::Neg => {
                        if !is_numeric(x.ty) {
                            self.type_err(
                                format!("`-` needs a number, this is {}", x.ty.name()),
                                operand.span,
                                "not a number".into(),
                            );
                            return None;
                        }
                        match &x.kind {
                            ExprKind::FloatConst(v) => {
                                Some(mk(ExprKind::FloatConst(-v), ElemType::Float, span))
                            }
                            _ => match as_aff(&x, n, np) {
                                Some(a) => match aff_scale(&a, -1) {
                                    Some(a) => Some(index_expr(a, span)),
                                    None => {
                                        self.err("integer overflow", span, "too large");
                                        None
                                    }
                                },
                                None => Some(mk(
                                    ExprKind::Unary(UnOp::Neg, Box::new(x.clone())),
                                    x.ty,
                                    span,
                                )),
                            },
                        }
                    }
                    ast::UnOp::Not => {
                        if x.ty != ElemType::Bool {
                            self.type_err(
                                format!("`not` needs a bool, this is {}", x.ty.name()),
                                operand.span,
                                "not a bool".into(),
                            );
                            return None;
                        }
                        Some(mk(
                            ExprKind::Unary(UnOp::Not, Box::new(x)),
                            ElemType::Bool,
                            span,
                        ))
                    }
                }
            }
            ast::ExprKind::Binary { op, lhs, rhs } => {
                let a = self.expr(lhs, scope);
                let b = self.expr(rhs, scope);
                let (a, b) = (a?, b?);
                self.binary(*op, a, b, span)
            }
            ast::ExprKind::Call { func, args } => self.call(func, args, scope, span),
            ast::ExprKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let c = self.expr(cond, scope);
                let t = self.expr(then_branch, scope);
                let f = self.expr(else_branch, scope);
                let (c, t, f) = (c?, t?, f?);
                if c.ty != ElemType::Bool {
                    self.type_err(
                        format!(
                            "the condition of `if` must be bool, this is {}",
                            c.ty.name()
                        ),
                        cond.span,
                        "not a bool".into(),
                    );
                    return None;
                }
                let ty = self.unify(
                    &[(&t, then_branch.span), (&f, else_branch.span)],
                    "`if` branches",
                )?;
                Some(mk(
                    ExprKind::If(Box::new(c), Box::new(t), Box::new(f)),
                    ty,
                    span,
                ))
            }
            ast::ExprKind::Case(pieces) => {
                let mut out = Vec::new();
                let mut ok = true;
                for p in pieces {
                    let (dom, body) = match &p.kind {
                        ast::ExprKind::Restrict { domain, body } => (
                            self.restriction_domain(domain, scope),
                            self.expr(body, scope),
                        ),
                        // A piece without a restriction is defined where
                        // its reads are (Alpha: the expression's domain).
                        _ => match self.expr(p, scope) {
                            Some(b) => (self.read_domain(&b, &scope.real), Some(b)),
                            None => (None, None),
                        },
                    };
                    match (dom, body) {
                        (Some(d), Some(b)) => out.push((d, b, p.span)),
                        _ => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                let typed: Vec<(&Expr, Span)> = out.iter().map(|(_, b, s)| (b, *s)).collect();
                let ty = self.unify(&typed, "`case` branches")?;
                Some(mk(
                    ExprKind::Case(out.into_iter().map(|(d, b, _)| (d, b)).collect()),
                    ty,
                    span,
                ))
            }
            ast::ExprKind::Restrict { domain, body } => {
                let d = self.restriction_domain(domain, scope);
                let b = self.expr(body, scope);
                let (d, b) = (d?, b?);
                let ty = b.ty;
                Some(mk(ExprKind::Restrict(d, Box::new(b)), ty, span))
            }
            ast::ExprKind::Reduce {
                op,
                op_span,
                projection,
                body,
            } => self.reduce(*op, *op_span, projection, body, scope, span),
            ast::ExprKind::Categorical { indices, body } => {
                let site = self.site();
                if indices.len() != 1 {
                    self.err(
                        format!(
                            "`categorical` draws one index, {} are listed",
                            indices.len()
                        ),
                        span,
                        "write `categorical([k], ...)`",
                    );
                    return None;
                }
                if !self.check_index_name(&indices[0], &scope.names) {
                    return None;
                }
                let k = indices[0].name.clone();
                let inner = self.extend_scope(scope, std::slice::from_ref(&k));
                let (dom, w) = match &body.kind {
                    ast::ExprKind::Restrict { domain, body: b } => (
                        self.restriction_domain(domain, &inner),
                        self.expr(b, &inner),
                    ),
                    _ => (
                        Some(Domain::universe(inner.real.clone())),
                        self.expr(body, &inner),
                    ),
                };
                let (dom, w) = (dom?, w?);
                if !is_numeric(w.ty) {
                    self.type_err(
                        format!(
                            "categorical weights must be numbers, these are {}",
                            w.ty.name()
                        ),
                        body.span,
                        "not a number".into(),
                    );
                    return None;
                }
                // Like a reduction body: the drawn index ranges over the
                // restriction intersected with the domains the weight reads.
                let reads = self.read_domain(&w, &inner.real)?;
                let dom = dom_intersect(&dom, &reads);
                Some(mk(
                    ExprKind::Categorical(Box::new(Categorical {
                        index: k,
                        domain: dom,
                        weight: w,
                        site,
                    })),
                    ElemType::Int,
                    span,
                ))
            }
        }
    }

    fn site(&mut self) -> CallSite {
        let s = CallSite {
            var: self.cur_var,
            ordinal: self.next_site,
        };
        self.next_site = self.next_site.saturating_add(1);
        s
    }

    /// The scope of a body with new indices appended to the real space.
    fn extend_scope(&self, scope: &Scope, new: &[String]) -> Scope {
        let np = self.n_par();
        let n_old = scope.real.len();
        let mut real = scope.real.clone();
        real.extend(new.iter().cloned());
        let n = real.len();
        let mut names = scope.names.clone();
        let mut values: Vec<AffExpr> = scope
            .values
            .iter()
            .map(|a| aff_widen(a, new.len()))
            .collect();
        for (k, name) in new.iter().enumerate() {
            names.push(Some(name.clone()));
            values.push(AffExpr::index(n, np, n_old + k));
        }
        Scope {
            names,
            values,
            real,
        }
    }

    /// The common type of branches: all equal, or int and float (→ float).
    fn unify(&mut self, branches: &[(&Expr, Span)], what: &str) -> Option<ElemType> {
        let first = branches.first()?.0.ty;
        let mut ty = first;
        for (b, s) in branches {
            ty = match (ty, b.ty) {
                (a, c) if a == c => a,
                (ElemType::Int, ElemType::Float) | (ElemType::Float, ElemType::Int) => {
                    ElemType::Float
                }
                (a, c) => {
                    self.type_err(
                        format!("{what} disagree: {} and {}", a.name(), c.name()),
                        *s,
                        format!("this is {}", c.name()),
                    );
                    return None;
                }
            };
        }
        Some(ty)
    }

    fn binary(&mut self, op: ast::BinOp, a: Expr, b: Expr, span: Span) -> Lowered {
        use ast::BinOp as A;
        let (bop, sym) = match op {
            A::Add => (BinOp::Add, "+"),
            A::Sub => (BinOp::Sub, "-"),
            A::Mul => (BinOp::Mul, "*"),
            A::Div => (BinOp::Div, "/"),
            A::Mod => (BinOp::Rem, "%"),
            A::Eq => (BinOp::Eq, "=="),
            A::Ne => (BinOp::Ne, "!="),
            A::Lt => (BinOp::Lt, "<"),
            A::Le => (BinOp::Le, "<="),
            A::Gt => (BinOp::Gt, ">"),
            A::Ge => (BinOp::Ge, ">="),
            A::And => (BinOp::And, "and"),
            A::Or => (BinOp::Or, "or"),
        };
        let ty = match bop {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => {
                for x in [&a, &b] {
                    if !is_numeric(x.ty) {
                        self.type_err(
                            format!("`{sym}` needs numbers, this is {}", x.ty.name()),
                            x.span,
                            "not a number".into(),
                        );
                        return None;
                    }
                }
                if a.ty == ElemType::Int && b.ty == ElemType::Int {
                    ElemType::Int
                } else {
                    ElemType::Float
                }
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                for x in [&a, &b] {
                    if !is_numeric(x.ty) {
                        self.type_err(
                            format!("`{sym}` compares numbers, this is {}", x.ty.name()),
                            x.span,
                            "not a number".into(),
                        );
                        return None;
                    }
                }
                ElemType::Bool
            }
            BinOp::Eq | BinOp::Ne => {
                let ok = (is_numeric(a.ty) && is_numeric(b.ty))
                    || (a.ty == ElemType::Bool && b.ty == ElemType::Bool);
                if !ok {
                    self.type_err(
                        format!("`{sym}` compares {} with {}", a.ty.name(), b.ty.name()),
                        span,
                        "operands of different kinds".into(),
                    );
                    return None;
                }
                ElemType::Bool
            }
            BinOp::And | BinOp::Or => {
                for x in [&a, &b] {
                    if x.ty != ElemType::Bool {
                        self.type_err(
                            format!("`{sym}` needs bools, this is {}", x.ty.name()),
                            x.span,
                            "not a bool".into(),
                        );
                        return None;
                    }
                }
                ElemType::Bool
            }
        };
        // Canonical form 2: fold affine int arithmetic into `Index`.
        if ty == ElemType::Int && matches!(bop, BinOp::Add | BinOp::Sub | BinOp::Mul) {
            let (na, np) = match (&a.kind, &b.kind) {
                (ExprKind::Index(x), _) => (x.idx.len(), x.par.len()),
                (_, ExprKind::Index(x)) => (x.idx.len(), x.par.len()),
                _ => (usize::MAX, 0),
            };
            let both_const = matches!(
                (&a.kind, &b.kind),
                (ExprKind::IntConst(_), ExprKind::IntConst(_))
            );
            if na != usize::MAX || both_const {
                let (na, np) = if both_const { (0, 0) } else { (na, np) };
                if let (Some(x), Some(y)) = (as_aff(&a, na, np), as_aff(&b, na, np)) {
                    let r = match bop {
                        BinOp::Add => Some(aff_add(&x, &y, 1)),
                        BinOp::Sub => Some(aff_add(&x, &y, -1)),
                        _ => match (aff_is_const(&x), aff_is_const(&y)) {
                            (Some(k), _) => Some(aff_scale(&y, k)),
                            (_, Some(k)) => Some(aff_scale(&x, k)),
                            _ => None,
                        },
                    };
                    match r {
                        Some(Some(aff)) => {
                            return Some(if both_const {
                                mk(ExprKind::IntConst(aff.constant), ElemType::Int, span)
                            } else {
                                index_expr(aff, span)
                            })
                        }
                        Some(None) => {
                            self.err("integer overflow", span, "too large");
                            return None;
                        }
                        None => {}
                    }
                }
            }
        }
        Some(mk(
            ExprKind::Binary(bop, Box::new(a), Box::new(b)),
            ty,
            span,
        ))
    }

    fn call(
        &mut self,
        func: &ast::Ident,
        args: &[ast::Expr],
        scope: &Scope,
        span: Span,
    ) -> Lowered {
        let kind = builtin_kind(&func.name);
        let ext = self.g.externals.iter().position(|e| e.name == func.name);
        if kind.is_none() && ext.is_none() {
            let msg = if self.var_map.contains_key(&func.name) {
                format!(
                    "`{}` is a variable, not a function (use `[ ]` to read it)",
                    func.name
                )
            } else {
                format!("unknown function `{}`", func.name)
            };
            self.err(msg, func.span, "not a built-in or declared external");
            return None;
        }
        // Pre-order numbering of stochastic call sites: the call's own
        // ordinal is taken before its arguments'.
        let site = match kind {
            Some(CallKind::Random(_)) => Some(self.site()),
            _ => None,
        };
        let mut lowered = Vec::new();
        let mut ok = true;
        for a in args {
            match self.expr(a, scope) {
                Some(x) => lowered.push(x),
                None => ok = false,
            }
        }
        if !ok {
            return None;
        }
        let arity_err = |cx: &mut Self, want: String| {
            cx.err(
                format!(
                    "`{}` takes {want} argument(s), {} given",
                    func.name,
                    lowered_len(args)
                ),
                span,
                "wrong number of arguments",
            );
            None
        };
        let numeric_args = |cx: &mut Self, xs: &[Expr]| -> bool {
            for x in xs {
                if !is_numeric(x.ty) {
                    cx.type_err(
                        format!("`{}` needs numbers, this is {}", func.name, x.ty.name()),
                        x.span,
                        "not a number".into(),
                    );
                    return false;
                }
            }
            true
        };
        match (kind, ext) {
            (Some(CallKind::Builtin(b)), _) => {
                let (min, max): (usize, usize) = match b {
                    Builtin::Pow => (2, 2),
                    Builtin::Max | Builtin::Min => (1, usize::MAX),
                    _ => (1, 1),
                };
                if lowered.len() < min || lowered.len() > max {
                    let want = if max == usize::MAX {
                        format!("at least {min}")
                    } else {
                        min.to_string()
                    };
                    return arity_err(self, want);
                }
                let ty = match b {
                    Builtin::ToFloat => ElemType::Float,
                    Builtin::ToInt => ElemType::Int,
                    Builtin::Max | Builtin::Min => {
                        if !numeric_args(self, &lowered) {
                            return None;
                        }
                        if lowered.iter().all(|x| x.ty == ElemType::Int) {
                            ElemType::Int
                        } else {
                            ElemType::Float
                        }
                    }
                    _ => {
                        if !numeric_args(self, &lowered) {
                            return None;
                        }
                        ElemType::Float
                    }
                };
                Some(mk(ExprKind::Builtin(b, lowered), ty, span))
            }
            (Some(CallKind::Random(d)), _) => {
                let want = d.arity();
                if lowered.len() != want {
                    return arity_err(self, want.to_string());
                }
                if !numeric_args(self, &lowered) {
                    return None;
                }
                let ty = d.result();
                let site = site.unwrap_or(CallSite {
                    var: self.cur_var,
                    ordinal: 0,
                });
                Some(mk(ExprKind::Random(d, lowered, site), ty, span))
            }
            (None, Some(k)) => {
                let want = self.g.externals[k].arity;
                if lowered.len() != want {
                    return arity_err(self, want.to_string());
                }
                if !numeric_args(self, &lowered) {
                    return None;
                }
                Some(mk(ExprKind::External(k, lowered), ElemType::Float, span))
            }
            (None, None) => None,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn reduce(
        &mut self,
        op: ast::ReduceOp,
        op_span: Span,
        projection: &ast::Projection,
        body: &ast::Expr,
        scope: &Scope,
        span: Span,
    ) -> Lowered {
        let np = self.n_par();
        let rop = match op {
            ast::ReduceOp::Add => ReduceOp::Add,
            ast::ReduceOp::Mul => ReduceOp::Mul,
            ast::ReduceOp::Max => ReduceOp::Max,
            ast::ReduceOp::Min => ReduceOp::Min,
            ast::ReduceOp::And => ReduceOp::And,
            ast::ReduceOp::Or => ReduceOp::Or,
        };
        let n_outer = scope.real.len();
        let (inner, proj) = match projection {
            ast::Projection::Names(new) => {
                self.bind_index_names(new, scope.names.clone())?;
                let names: Vec<String> = new.iter().map(|i| i.name.clone()).collect();
                let inner = self.extend_scope(scope, &names);
                let n = inner.real.len();
                let proj: Vec<AffExpr> = (0..n_outer).map(|k| AffExpr::index(n, np, k)).collect();
                (inner, proj)
            }
            ast::Projection::Function(f) => {
                if !scope.is_identity() {
                    self.err(
                        "unsupported: a reduction with an explicit projection inside `f @ E`",
                        f.span,
                        "use the `[k]` form here",
                    );
                    return None;
                }
                self.bind_index_names(&f.params, Vec::new())?;
                if f.exprs.len() != n_outer {
                    self.err(
                        format!(
                            "the projection has {} result(s) but the reduction is used where there are {} index(es)",
                            f.exprs.len(),
                            n_outer
                        ),
                        f.span,
                        "wrong number of results",
                    );
                    return None;
                }
                let real: Vec<String> = f.params.iter().map(|i| i.name.clone()).collect();
                let inner = Scope::identity(real, np);
                let mut proj = Vec::new();
                for x in &f.exprs {
                    proj.push(self.affine(x, &inner));
                }
                let proj: Vec<AffExpr> = proj.into_iter().collect::<Option<_>>()?;
                (inner, proj)
            }
        };
        let (restr, b) = match &body.kind {
            ast::ExprKind::Restrict { domain, body: b } => (
                self.restriction_domain(domain, &inner),
                self.expr(b, &inner),
            ),
            _ => (
                Some(Domain::universe(inner.real.clone())),
                self.expr(body, &inner),
            ),
        };
        let (restr, b) = (restr?, b?);
        let ok = match rop {
            ReduceOp::Add | ReduceOp::Mul | ReduceOp::Max | ReduceOp::Min => is_numeric(b.ty),
            ReduceOp::And | ReduceOp::Or => b.ty == ElemType::Bool,
        };
        if !ok {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "type error: `reduce({}, ...)` cannot combine {} values",
                        rop.symbol(),
                        b.ty.name()
                    ),
                    body.span,
                )
                .with_label(format!("this is {}", b.ty.name()))
                .with_secondary(op_span, "the operator"),
            );
            return None;
        }
        let reads = self.read_domain(&b, &inner.real)?;
        let body_domain = dom_intersect(&restr, &reads);
        let ty = b.ty;
        Some(mk(
            ExprKind::Reduce(Box::new(Reduction {
                op: rop,
                dims: inner.real.clone(),
                proj,
                body_domain,
                body: b,
            })),
            ty,
            span,
        ))
    }

    /// Where an expression in a reduction body is defined: the intersection
    /// of the preimages of the domains of its affine reads, nested
    /// restrictions, and, for a `case`, the union of its pieces (nested
    /// reductions and categorical draws have their own domains).
    fn read_domain(&mut self, e: &Expr, dims: &[String]) -> Option<Domain> {
        let np = self.n_par();
        let all = |cx: &mut Self, xs: &[&Expr]| -> Option<Domain> {
            let mut d = Domain::universe(dims.to_vec());
            for x in xs {
                let r = cx.read_domain(x, dims)?;
                d = dom_intersect(&d, &r);
            }
            Some(d)
        };
        match &e.kind {
            ExprKind::Read { var, access } => {
                match dom_preimage(&self.vars[*var].domain, access, dims, np) {
                    Some(d) => Some(d),
                    None => {
                        self.err("integer overflow in an access", e.span, "too large");
                        None
                    }
                }
            }
            ExprKind::IndirectRead { indices, .. }
            | ExprKind::Builtin(_, indices)
            | ExprKind::External(_, indices)
            | ExprKind::Random(_, indices, _) => all(self, &indices.iter().collect::<Vec<_>>()),
            ExprKind::Unary(_, x) => all(self, &[x]),
            ExprKind::Binary(_, a, b) => all(self, &[a, b]),
            ExprKind::If(a, b, c) => all(self, &[a, b, c]),
            ExprKind::Restrict(d, x) => {
                let r = self.read_domain(x, dims)?;
                Some(dom_intersect(d, &r))
            }
            ExprKind::Case(pieces) => {
                let mut u = Domain {
                    dims: dims.to_vec(),
                    pieces: Vec::new(),
                };
                for (d, x) in pieces {
                    let r = self.read_domain(x, dims)?;
                    u.pieces.extend(dom_intersect(d, &r).pieces);
                }
                Some(u)
            }
            _ => Some(Domain::universe(dims.to_vec())),
        }
    }
}

fn lowered_len(args: &[ast::Expr]) -> usize {
    args.len()
}

/// The constraint `a op b` as a list of alternatives, each one affine
/// constraint (one alternative except for `!=`, which is a union).
fn cmp_atom(op: ast::CmpOp, a: &AffExpr, b: &AffExpr) -> Option<Vec<AffConstraint>> {
    let n = a.idx.len();
    let np = a.par.len();
    let one = AffExpr::constant(n, np, 1);
    let ge = |x: AffExpr| AffConstraint {
        aff: x,
        kind: ConstraintKind::Ge,
    };
    let b_minus_a = aff_add(b, a, -1)?;
    let a_minus_b = aff_add(a, b, -1)?;
    Some(match op {
        ast::CmpOp::Le => vec![ge(b_minus_a)],
        ast::CmpOp::Ge => vec![ge(a_minus_b)],
        ast::CmpOp::Lt => vec![ge(aff_add(&b_minus_a, &one, -1)?)],
        ast::CmpOp::Gt => vec![ge(aff_add(&a_minus_b, &one, -1)?)],
        ast::CmpOp::Eq => vec![AffConstraint {
            aff: a_minus_b,
            kind: ConstraintKind::Eq,
        }],
        ast::CmpOp::Ne => vec![
            ge(aff_add(&a_minus_b, &one, -1)?),
            ge(aff_add(&b_minus_a, &one, -1)?),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::print::{program_to_alpha, without_spans};

    fn lower_text(text: &str) -> Result<Program, Vec<String>> {
        let src = SourceFile::new("t.alpha", text);
        let ast = crate::syntax::parse(&src)
            .map_err(|ds| ds.iter().map(|d| d.one_line(&src)).collect::<Vec<_>>())?;
        lower(&ast, &src).map_err(|ds| ds.iter().map(|d| d.one_line(&src)).collect())
    }

    fn ok(text: &str) -> Program {
        match lower_text(text) {
            Ok(p) => p,
            Err(es) => panic!("{}", es.join("\n")),
        }
    }

    fn errs(text: &str) -> Vec<String> {
        match lower_text(text) {
            Ok(p) => panic!("accepted:\n{}", program_to_alpha(&p)),
            Err(es) => es,
        }
    }

    /// The right-hand side of the first equation of a one-input system.
    fn rhs(decls: &str, eq: &str) -> Expr {
        let p = ok(&format!(
            "affine s [N] -> {{ : N > 2 }} {decls} let {eq}; ."
        ));
        p.systems[0].equations[0].expr.clone()
    }

    #[test]
    fn examples_round_trip_through_the_printer() {
        for entry in std::fs::read_dir("examples").expect("examples/") {
            let path = entry.expect("entry").path();
            let text = std::fs::read_to_string(&path).expect("example");
            let p1 = ok(&text);
            let printed = program_to_alpha(&p1);
            let p2 = match lower_text(&printed) {
                Ok(p) => p,
                Err(es) => panic!(
                    "{}: printed text rejected:\n{printed}\n{}",
                    path.display(),
                    es.join("\n")
                ),
            };
            assert_eq!(
                without_spans(&p1),
                without_spans(&p2),
                "{}:\n{printed}",
                path.display()
            );
        }
    }

    #[test]
    fn more_programs_round_trip_through_the_printer() {
        let programs = [
            "constant K = 3 external g(1)\n\
             affine s [N] -> { : N > K } inputs A : [N] outputs B : [N] locals W : [K]\n\
             let W[k] = g(val(k -> k)); B[i] = A[i] * W[0] + categorical([k], {: 0 <= k < K} : W[k]); .",
            "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : [N]\n\
             let B[i] = reduce(max, (i2, k -> i2), {: 0 <= k <= i2} : A[k]); .",
            "affine s [N] -> { : N > 0 } inputs A : {[i, j] : 0 <= i, j < N} outputs B : {[i, j] : 0 <= i, j < N}\n\
             let B = (a, b -> b, a) @ A; .",
            "affine s [N, M] -> { : N > 0 and M > 0 } inputs A : [N, M]; z : int [N] outputs B : [N]; c : bool {}\n\
             let B[i] = if z[i] >= 0 and z[i] < M then A[i, z[i]] else -1.5 * normal(0.0, 1.0);\n\
                 c = reduce(or, [i], {: 0 <= i < N} : A[i, 0] > 0.0); .",
            "affine s [N] -> { : N > 3 } inputs A : [N] outputs B : [N]\n\
             let B[i] = case { {: i != 2} : A[i]; {: i == 2} : -A[i] % 2.0; }; .",
        ];
        for text in programs {
            let p1 = ok(text);
            let printed = program_to_alpha(&p1);
            let p2 = match lower_text(&printed) {
                Ok(p) => p,
                Err(es) => panic!("printed text rejected:\n{printed}\n{}", es.join("\n")),
            };
            assert_eq!(without_spans(&p1), without_spans(&p2), "\n{printed}");
        }
    }

    #[test]
    fn a_case_piece_without_restriction_is_defined_where_it_reads() {
        // The second piece reads B[i - 1]: it covers 1 <= i < N.
        let p = ok(
            "affine s [N] -> { : N > 0 } inputs X : [N] outputs B : [N]\n\
                    let B[i] = case { {: i == 0} : X[0]; B[i - 1] + X[i]; }; .",
        );
        let ExprKind::Case(pieces) = &p.systems[0].equations[0].expr.kind else {
            panic!()
        };
        for i in -1..5 {
            assert_eq!(
                pieces[1].0.contains(&[i], &[4]),
                (1..4).contains(&i),
                "i = {i}"
            );
        }
        let es = errs(
            "affine s [N] -> { : N > 0 } inputs X : [N] outputs B : [N]\n\
                       let B[i] = case { {: i <= 1} : X[0]; B[i - 1] + X[i]; }; .",
        );
        assert!(es[0].contains("overlap at i = 1 when N = 2"), "{es:?}");
    }

    #[test]
    fn function_names_must_not_hide_parameters() {
        let es = errs(
            "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : [N] let B[i] = (N -> N) @ A; .",
        );
        assert!(
            es[0].contains("duplicate name `N`: it is already a parameter"),
            "{es:?}"
        );
        let es = errs("affine s [N] -> { : N > 0 } inputs A : [N] outputs B : int [N] let B[i] = val(j, j -> j); .");
        assert!(es[0].contains("the function has 2 argument(s)"), "{es:?}");
        let es = errs("affine s [N] -> { : N > 0 } inputs A : {[i, j] : 0 <= i, j < N} outputs B : {[i, j] : 0 <= i, j < N} let B[i, j] = (a, a -> a, a) @ A; .");
        assert!(es[0].contains("duplicate name `a`"), "{es:?}");
        // Repeating the names in scope is the ordinary case.
        ok("affine s [N] -> { : N > 0 } inputs A : [N] outputs B : int [N] let B[i] = val(i -> i); .");
    }

    #[test]
    fn affine_int_arithmetic_folds_into_index() {
        let e = rhs(
            "inputs A : [N] outputs B : int [N]",
            "B[i] = 2*i - (N - 1) + 3",
        );
        let ExprKind::Index(a) = &e.kind else {
            panic!("{e:?}")
        };
        assert_eq!(
            (a.idx.clone(), a.par.clone(), a.constant),
            (vec![2], vec![-1], 4)
        );
        let e = rhs("outputs B : int [N]", "B[i] = 2 * 3 - 1");
        assert_eq!(e.kind, ExprKind::IntConst(5));
        let e = rhs("outputs B : int [N]", "B[i] = val(j -> j + N)");
        let ExprKind::Index(a) = &e.kind else {
            panic!("{e:?}")
        };
        assert_eq!((a.idx.clone(), a.par.clone()), (vec![1], vec![1]));
        // A product of two indices is not affine: it stays a product.
        let e = rhs("outputs B : int [N]", "B[i] = i * i");
        assert!(
            matches!(e.kind, ExprKind::Binary(BinOp::Mul, _, _)),
            "{e:?}"
        );
        let e = rhs("outputs B : [N]", "B[i] = -2.5");
        assert_eq!(e.kind, ExprKind::FloatConst(-2.5));
    }

    #[test]
    fn dependences_and_whole_variables_become_reads() {
        let e = rhs(
            "inputs A : {[i, j] : 0 <= i, j < N} outputs B : {[i, j] : 0 <= i, j < N}",
            "B = (a, b -> b, a) @ A",
        );
        let ExprKind::Read { access, .. } = &e.kind else {
            panic!("{e:?}")
        };
        assert_eq!(access[0].idx, vec![0, 1]);
        assert_eq!(access[1].idx, vec![1, 0]);
        let e = rhs(
            "inputs A : [N] outputs B : [N]",
            "B[i] = (j -> j + 2) @ (k -> k - 2) @ A",
        );
        let ExprKind::Read { access, .. } = &e.kind else {
            panic!("{e:?}")
        };
        assert_eq!((access[0].idx.clone(), access[0].constant), (vec![1], 0));
        let e = rhs("inputs x : {} outputs B : [N]", "B[i] = x");
        assert!(matches!(&e.kind, ExprKind::Read { access, .. } if access.is_empty()));
        let e = rhs(
            "inputs A, z : int [N] outputs B : int [N]",
            "B[i] = A[z[i]]",
        );
        assert!(matches!(e.kind, ExprKind::IndirectRead { .. }), "{e:?}");
    }

    #[test]
    fn reductions_merge_their_restriction_and_reads() {
        let e = rhs(
            "inputs A : [N] outputs B : [N]",
            "B[i] = reduce(+, [j], {: j <= i} : A[j])",
        );
        let ExprKind::Reduce(r) = &e.kind else {
            panic!("{e:?}")
        };
        assert_eq!(r.dims, vec!["i", "j"]);
        assert_eq!(r.proj.len(), 1);
        assert_eq!(r.proj[0].idx, vec![1, 0]);
        assert!(matches!(r.body.kind, ExprKind::Read { .. }));
        // j <= i, and 0 <= j <= N - 1 from A's domain.
        for (pt, inside) in [
            ([3, 0], true),
            ([3, 3], true),
            ([3, 4], false),
            ([3, -1], false),
        ] {
            assert_eq!(r.body_domain.contains(&pt, &[5]), inside, "{pt:?}");
        }
        let e = rhs(
            "inputs A : [N] outputs B : [N]",
            "B[i] = reduce(max, (i2, k -> i2), {: 0 <= k < i2} : A[k])",
        );
        let ExprKind::Reduce(r) = &e.kind else {
            panic!("{e:?}")
        };
        assert_eq!(r.dims, vec!["i2", "k"]);
        assert_eq!(r.op, ReduceOp::Max);
    }

    #[test]
    fn promotion_and_types() {
        let e = rhs(
            "inputs A : [N] outputs B : [N]",
            "B[i] = if i > 0 then 1 else A[i]",
        );
        assert_eq!(e.ty, ElemType::Float);
        let e = rhs(
            "inputs z : int [N] outputs B : int [N]",
            "B[i] = max(z[i], 0, 1)",
        );
        assert_eq!(e.ty, ElemType::Int);
        let e = rhs("outputs B : bool [N]", "B[i] = bernoulli(0.5) and i < 2");
        assert_eq!(e.ty, ElemType::Bool);
        let es = errs(
            "affine s [N] -> { : } inputs A : [N] outputs B : bool [N] let B[i] = A[i] and true; .",
        );
        assert!(
            es[0].contains("type error") && es[0].contains("`and` needs bools"),
            "{es:?}"
        );
        let es = errs("affine s [N] -> { : } inputs A : [N] outputs B : [N] let B[i] = case { {: i < 1} : true; {: i >= 1} : A[i]; }; .");
        assert!(es[0].contains("`case` branches disagree"), "{es:?}");
    }

    #[test]
    fn stochastic_call_sites_are_numbered_in_pre_order() {
        let e = rhs(
            "outputs B : [N]",
            "B[i] = normal(uniform(), 1.0) + uniform()",
        );
        let mut sites = Vec::new();
        fn collect(e: &Expr, out: &mut Vec<u32>) {
            match &e.kind {
                ExprKind::Random(_, args, s) => {
                    out.push(s.ordinal);
                    args.iter().for_each(|a| collect(a, out));
                }
                ExprKind::Binary(_, a, b) => {
                    collect(a, out);
                    collect(b, out);
                }
                _ => {}
            }
        }
        collect(&e, &mut sites);
        assert_eq!(sites, vec![0, 1, 2]);
    }

    #[test]
    fn several_independent_errors_are_reported_together() {
        let es = errs(
            "affine s [N] -> { : N > 0 } inputs A : [N] outputs B, C, D : [N]\n\
             let B[i] = Q[i];\nC[i] = sqrt(1.0, 2.0); .",
        );
        assert_eq!(es.len(), 3, "{es:?}");
        assert!(
            es[0].contains("2:12") && es[0].contains("unknown variable `Q`"),
            "{es:?}"
        );
        assert!(
            es[1].contains("3:8:") && es[1].contains("`sqrt` takes 1"),
            "{es:?}"
        );
        assert!(es[2].contains("`D` is never defined"), "{es:?}");
    }

    #[test]
    fn valid_programs_with_cases_and_restrictions_are_accepted() {
        ok(
            "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : [N]\n\
            let B[i] = case { {: i == 0} : A[i]; {: i > 0} : B[i-1] + A[i]; }; .",
        );
        ok(
            "affine s [N] -> { : N > 1 } inputs A : [N] outputs B : [N]\n\
            let B[i] = case { {: i < N - 1} : A[i + 1]; {: i == N - 1} : {: i >= 0} : A[i]; }; .",
        );
        // A reduction body may read outside A: its domain is cut down to A's.
        ok(
            "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : [N]\n\
            let B[i] = reduce(+, [j], A[i + j]); .",
        );
        // `!=` and `or` in a case.
        ok(
            "affine s [N] -> { : N > 3 } inputs A : [N] outputs B : [N]\n\
            let B[i] = case { {: i != 2} : A[i]; {: i == 2} : 0.0; }; .",
        );
        ok("constant K = 3 external g(1) affine s [N] -> { : N > K } inputs A : [N] outputs B : [N] locals W : [K]\n\
            let W[k] = g(val(k -> k)); B[i] = A[i] * W[0] + categorical([k], {: 0 <= k < K} : W[k]); .");
    }

    #[test]
    fn unbounded_variable_domains_are_checked_too() {
        // B is declared over i >= 0 (unbounded): the restriction excludes
        // B[0]; the read A[i] is outside A beyond N.
        let es = errs(
            "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : {[i] : i >= 0}\n\
             let B[i] = {: i >= 1} : 1.0; .",
        );
        assert!(es[0].contains("`B[0]` is excluded"), "{es:?}");
        let es = errs(
            "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : {[i] : i >= 0}\n\
             let B[i] = A[i]; .",
        );
        assert!(
            es[0].contains("read of `A[1]`") && es[0].contains("N = 1"),
            "{es:?}"
        );
    }

    #[test]
    fn domain_errors_name_a_witness() {
        let es = errs(
            "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : [N] let B[i] = A[i + 1]; .",
        );
        assert_eq!(es.len(), 1, "{es:?}");
        assert!(
            es[0].contains("read of `A[1]`") && es[0].contains("i = 0 when N = 1"),
            "{es:?}"
        );
        let es = errs(
            "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : [N]\n\
             let B[i] = reduce(+, (i, k -> i), {: k >= 0} : A[i] * 1.0); .",
        );
        assert!(es[0].contains("unbounded"), "{es:?}");
        let es = errs(
            "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : int [N]\n\
             let B[i] = categorical([k], {: k >= 0} : A[i]); .",
        );
        assert!(es[0].contains("unbounded"), "{es:?}");
    }

    /// A random constraint over `i`, `j` and the parameter `N`, rendered
    /// as `.alpha` text together with a direct evaluator.
    #[derive(Debug, Clone)]
    enum C {
        Cmp(Vec<[i64; 4]>, u8, Vec<[i64; 4]>),
        And(Box<C>, Box<C>),
        Or(Box<C>, Box<C>),
    }

    const OPS: [&str; 7] = ["<", "<=", ">", ">=", "=", "==", "!="];

    fn lin_text(l: &[i64; 4]) -> String {
        // Written with juxtaposition (`2i`), explicit `*` and parentheses.
        let sign = if l[0] < 0 { "-" } else { "" };
        format!(
            "{sign}{}i + {} * j - ({}) * N + ({})",
            l[0].abs(),
            l[1],
            -l[2],
            l[3]
        )
    }

    fn lin_eval(l: &[i64; 4], i: i64, j: i64, n: i64) -> i64 {
        l[0] * i + l[1] * j + l[2] * n + l[3]
    }

    impl C {
        fn text(&self) -> String {
            match self {
                C::Cmp(a, op, b) => {
                    let side =
                        |v: &Vec<[i64; 4]>| v.iter().map(lin_text).collect::<Vec<_>>().join(", ");
                    format!("{} {} {}", side(a), OPS[*op as usize], side(b))
                }
                C::And(a, b) => format!("({} and {})", a.text(), b.text()),
                C::Or(a, b) => format!("({} || {})", a.text(), b.text()),
            }
        }
        fn eval(&self, i: i64, j: i64, n: i64) -> bool {
            match self {
                C::Cmp(a, op, b) => a.iter().all(|x| {
                    b.iter().all(|y| {
                        let (x, y) = (lin_eval(x, i, j, n), lin_eval(y, i, j, n));
                        match op {
                            0 => x < y,
                            1 => x <= y,
                            2 => x > y,
                            3 => x >= y,
                            4 | 5 => x == y,
                            _ => x != y,
                        }
                    })
                }),
                C::And(a, b) => a.eval(i, j, n) && b.eval(i, j, n),
                C::Or(a, b) => a.eval(i, j, n) || b.eval(i, j, n),
            }
        }
    }

    fn arb_c() -> impl proptest::strategy::Strategy<Value = C> {
        use proptest::prelude::*;
        let lin = prop::array::uniform4(-2i64..=2);
        let side = prop::collection::vec(lin, 1..3);
        let leaf = (side.clone(), 0u8..7, side).prop_map(|(a, op, b)| C::Cmp(a, op, b));
        leaf.prop_recursive(3, 8, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| C::And(Box::new(a), Box::new(b))),
                (inner.clone(), inner).prop_map(|(a, b)| C::Or(Box::new(a), Box::new(b))),
            ]
        })
    }

    proptest::proptest! {
        /// Parsing and lowering a domain constraint (comparisons, chains of
        /// tuples, `!=`, `and`, `||`, `2i`, `*`, parentheses) gives a
        /// domain with exactly the points that satisfy the constraint.
        #[test]
        fn lowered_domains_match_direct_evaluation(c in arb_c()) {
            let text = format!("affine s [N] -> {{ : }} inputs A : {{ [i, j] : {} }} .", c.text());
            let p = ok(&text);
            let d = &p.systems[0].vars[0].domain;
            for n in 0..3 {
                for i in -3..=3 {
                    for j in -3..=3 {
                        proptest::prop_assert_eq!(d.contains(&[i, j], &[n]), c.eval(i, j, n), "{} at i={} j={} N={}", text, i, j, n);
                    }
                }
            }
        }
    }
}
