//! Lowering: AST → checked IR [`Program`].
//!
//! Owns name resolution (indices, parameters, constants, variables,
//! built-ins, externals), typing (int/float/bool with int → float
//! promotion), arity and dimension checks, definition checks (every output
//! and local defined exactly once, inputs never), conversion of domains and
//! index expressions to affine form, substitution of `f @ E`, and the
//! canonical forms listed in `ir/mod.rs` (domains simplified through
//! `poly::Set::simplify`). The domain checks (coverage, overlaps,
//! out-of-domain reads, bounded reductions) are in
//! [`crate::ir::check_domains`], run on the lowered program when everything
//! else is correct.
//!
//! Choices where Alpha or docs/language.md leave room (documented for users):
//! - `if c then a else b` is strict for the domain checks: reads in both
//!   branches must be inside their variables' domains (use `case` to guard
//!   a read by a domain).
//! - A `case` piece written without a restriction is defined where its
//!   affine reads are (the preimages of the read variables' domains).
//! - Integer division and modulo in constraints are rejected as
//!   unsupported (they are never approximated).
//! - `external` functions return float (`external int f(1)` is rejected);
//!   an `external` declaration of a built-in name with the built-in's
//!   arity is accepted and the built-in is used.
//! - A local neither defined nor used is a warning (and is dropped), not
//!   an error.
//! - Subsystem calls are inlined here ([`subsystem`]), so that no later
//!   stage knows about them; imported files are found, parsed and lowered
//!   by [`import`].
//!
//! Must not know about pest, schedules or code generation.

mod affine;
mod call;
mod expr;
pub mod import;
mod reduce;
mod selection;
mod subsystem;
mod subsystem_inline;
mod system;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use crate::diag::{Diagnostic, Severity, SourceFile, Span};
use crate::ir::types::*;
use crate::poly::Constraint;
use crate::syntax::ast;
use affine::*;
use import::{Loader, Origin, Visible};
use subsystem::{Callee, Target};
use system::*;

/// A checked program and the warnings found while checking it.
#[derive(Debug, Clone)]
pub struct Checked {
    pub program: Program,
    /// Warnings (a local neither defined nor used, ...): the program is
    /// accepted; the CLI prints them.
    pub warnings: Vec<Diagnostic>,
}

/// Lowers a parsed file to a checked program.
///
/// Every error found is returned (several at once where they are
/// independent): unknown or duplicate names, type errors, arity of calls,
/// dimension of accesses, outputs/locals not defined or defined twice,
/// inputs defined, non-affine domains, subsystem calls and imports; then,
/// when those pass, the domain checks of
/// [`crate::ir::check_domains::check_program`]. Warnings are dropped (see
/// [`lower_with_warnings`]).
///
/// Imports other than the standard library (`std.*`) are looked up next to
/// the file `src.name` names, when it names an existing file (see
/// [`import`]).
pub fn lower(file: &ast::File, src: &SourceFile) -> Result<Program, Vec<Diagnostic>> {
    lower_with_warnings(file, src).map(|l| l.program)
}

/// [`lower`], keeping the warnings.
pub fn lower_with_warnings(file: &ast::File, src: &SourceFile) -> Result<Checked, Vec<Diagnostic>> {
    let origin = Origin::of_source(src);
    let mut loader = Loader::default();
    loader.enter(&origin);
    let unit = lower_unit(file, &origin, &mut loader)?;
    Ok(Checked {
        program: unit.program,
        warnings: unit.warnings,
    })
}

/// A lowered file: its program, each system's package path and name, the
/// packages it declares, and its warnings.
struct Unit {
    pub program: Program,
    pub qnames: Vec<Vec<String>>,
    pub packages: Vec<Vec<String>>,
    pub warnings: Vec<Diagnostic>,
}

/// A warning at `span`.
pub(super) fn warning(message: impl Into<String>, span: Span) -> Diagnostic {
    Diagnostic {
        severity: Severity::Warning,
        ..Diagnostic::error(message, span)
    }
}

/// The arity a built-in accepts: `(min, max)`.
fn builtin_arity(k: CallKind) -> (usize, usize) {
    match k {
        CallKind::Builtin(Builtin::Pow) => (2, 2),
        CallKind::Builtin(Builtin::Max | Builtin::Min) => (1, usize::MAX),
        CallKind::Builtin(_) => (1, 1),
        CallKind::Random(d) => (d.arity(), d.arity()),
    }
}

/// Lowers one file (the root or an imported one) with `loader` for its
/// imports.
fn lower_unit(
    file: &ast::File,
    origin: &Origin,
    loader: &mut Loader,
) -> Result<Unit, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut items = Vec::new();
    let mut packages = Vec::new();
    flatten(&file.items, &[], &mut items, &mut packages);

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
    for (_, it) in &items {
        match it {
            ast::Item::Constant(c) if declare_global(&c.name, &mut errors) => {
                constants.push((c.name.name.clone(), c.value));
                const_map.insert(c.name.name.clone(), c.value);
            }
            ast::Item::External(e) => {
                if let Some(kind) = builtin_kind(&e.name.name) {
                    // Alpha files declare the math functions they use
                    // (`external sqrt(1)`): the built-in is used when the
                    // arity agrees.
                    let (min, max) = builtin_arity(kind);
                    if e.arity < min || e.arity > max {
                        let takes = if max == usize::MAX {
                            format!("at least {min} arguments")
                        } else {
                            format!("{min} argument(s)")
                        };
                        errors.push(
                            Diagnostic::error(
                                format!(
                                    "`{}` is a built-in function of {takes}, declared here with {}",
                                    e.name.name, e.arity
                                ),
                                e.span,
                            )
                            .with_label("arity differs from the built-in's"),
                        );
                    } else if let Some((t, s)) = e.result {
                        let result = match kind {
                            CallKind::Random(d) => Some(d.result()),
                            CallKind::Builtin(Builtin::ToInt) => Some(ElemType::Int),
                            CallKind::Builtin(Builtin::Max | Builtin::Min) => None,
                            CallKind::Builtin(_) => Some(ElemType::Float),
                        };
                        if result.is_some_and(|r| r != t) {
                            errors.push(
                                Diagnostic::error(
                                    format!(
                                        "`{}` is a built-in function returning {}, declared here as {}",
                                        e.name.name,
                                        result.map_or("", |r| r.name()),
                                        t.name()
                                    ),
                                    s,
                                )
                                .with_label("result type differs from the built-in's"),
                            );
                        }
                    }
                    continue;
                }
                if let Some((t, s)) = e.result {
                    if t != ElemType::Float {
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

    // Imports, and the externals of the imported files.
    let mut vis = Visible::default();
    for (_, it) in &items {
        if let ast::Item::Import(imp) = it {
            if let Err(d) = loader.import(imp, origin, &mut vis) {
                errors.push(*d);
            }
        }
    }
    let mut libs: Vec<_> = vis.qualified.values().cloned().collect();
    libs.sort_by_key(|l| l.qualified());
    for l in &libs {
        for e in &l.externals {
            match externals.iter().find(|x| x.name == e.name) {
                Some(x) if x.arity != e.arity => errors.push(
                    Diagnostic::error(
                        format!(
                            "external `{}` has {} argument(s) here but {} in `{}`",
                            e.name,
                            x.arity,
                            e.arity,
                            l.qualified()
                        ),
                        x.span,
                    )
                    .with_label("differs from the imported declaration"),
                ),
                Some(_) => {}
                None => externals.push(External {
                    name: e.name.clone(),
                    arity: e.arity,
                    span: Span::default(),
                }),
            }
        }
    }

    // Systems, callees first.
    let systems: Vec<(Vec<String>, &ast::System)> = items
        .iter()
        .filter_map(|(pkg, it)| match it {
            ast::Item::System(s) => Some((pkg.clone(), s)),
            _ => None,
        })
        .collect();
    let plan = subsystem::plan(&systems, &vis, &mut errors);
    let g = Globals {
        constants: const_map,
        externals: &externals,
    };
    let mut lowered: Vec<Option<System>> = vec![None; systems.len()];
    for &k in &plan.order {
        let callees: Vec<Option<Callee>> = plan.targets[k]
            .iter()
            .map(|t| match t {
                Some(Target::Local(j)) => lowered[*j].as_ref().map(|s| Callee {
                    name: s.name.clone(),
                    local: true,
                    system: s.clone(),
                    externals: (0..externals.len()).collect(),
                }),
                Some(Target::Lib(l)) => Some(Callee {
                    name: l.simple().to_string(),
                    local: false,
                    system: l.system.clone(),
                    externals: l
                        .externals
                        .iter()
                        .map(|e| externals.iter().position(|x| x.name == e.name).unwrap_or(0))
                        .collect(),
                }),
                None => None,
            })
            .collect();
        lowered[k] = lower_system(&g, systems[k].1, &callees, &mut errors, &mut warnings);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let qnames = systems
        .iter()
        .map(|(pkg, s)| {
            let mut q = pkg.clone();
            q.push(s.name.name.clone());
            q
        })
        .collect();
    let mut program = Program {
        constants,
        externals,
        systems: lowered.into_iter().flatten().collect(),
    };
    let canon_errors = canonicalize_program(&mut program);
    if !canon_errors.is_empty() {
        return Err(canon_errors);
    }
    let domain_errors = super::check_domains::check_program(&program);
    if domain_errors.is_empty() {
        Ok(Unit {
            program,
            qnames,
            packages,
            warnings,
        })
    } else {
        Err(domain_errors)
    }
}

/// Canonical form 3 of `ir/mod.rs`: every domain of the program through
/// `Set::simplify` (exact simplification).
fn canonicalize_program(p: &mut Program) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    for s in &mut p.systems {
        let span = s.span;
        canon(&mut s.context, span, &mut errors);
        for v in &mut s.vars {
            canon(&mut v.domain, v.span, &mut errors);
        }
        for eq in &mut s.equations {
            canon_expr(&mut eq.expr, &mut errors);
        }
    }
    errors
}

fn canon(d: &mut Set, span: Span, errors: &mut Vec<Diagnostic>) {
    match d.simplify() {
        Ok(c) => *d = c,
        Err(e) => errors.push(
            Diagnostic::error(format!("this domain could not be simplified: {e}"), span)
                .with_label("polyhedral library error"),
        ),
    }
}

fn canon_expr(e: &mut Expr, errors: &mut Vec<Diagnostic>) {
    let span = e.span;
    match &mut e.kind {
        ExprKind::Restrict(d, _) => canon(d, span, errors),
        ExprKind::Case(pieces) => {
            for (d, _) in pieces {
                canon(d, span, errors);
            }
        }
        ExprKind::Reduce(r) => canon(&mut r.body_domain, span, errors),
        ExprKind::Categorical(c) => canon(&mut c.domain, span, errors),
        _ => {}
    }
    e.for_each_child_mut(&mut |x| canon_expr(x, errors));
}

/// The items of `items` with their package path (`prefix` and the
/// enclosing `package` names), packages flattened; every package path in
/// `packages`.
fn flatten<'a>(
    items: &'a [ast::Item],
    prefix: &[String],
    out: &mut Vec<(Vec<String>, &'a ast::Item)>,
    packages: &mut Vec<Vec<String>>,
) {
    for it in items {
        match it {
            ast::Item::Package(p) => {
                let mut path = prefix.to_vec();
                path.extend(p.name.iter().map(|i| i.name.clone()));
                packages.push(path.clone());
                flatten(&p.items, &path, out, packages);
            }
            _ => out.push((prefix.to_vec(), it)),
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
    values: Vec<Aff>,
    /// Names of the real space's dimensions.
    real: Vec<String>,
}

impl Scope {
    /// Every dimension of `space` in scope under its own name.
    fn identity(space: &Space) -> Scope {
        let real = space.output.dims.to_vec();
        Scope {
            names: real.iter().cloned().map(Some).collect(),
            values: (0..real.len())
                .map(|k| Aff::dim(space.clone(), k))
                .collect(),
            real,
        }
    }
    fn lookup(&self, name: &str) -> Option<&Aff> {
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
    /// The parameter context (universe until lowered).
    context: Set,
    vars: Vec<Variable>,
    var_map: HashMap<String, VarId>,
    errors: &'a mut Vec<Diagnostic>,
    /// The variable whose equation is being lowered, and its next call-site
    /// ordinal.
    cur_var: VarId,
    next_site: u32,
}

/// Typed result of lowering one AST expression.
type Lowered = Option<Expr>;

fn mk(kind: ExprKind, ty: ElemType, span: Span) -> Expr {
    Expr { kind, ty, span }
}

fn is_numeric(t: ElemType) -> bool {
    matches!(t, ElemType::Int | ElemType::Float)
}

/// What an operand must be (operators, conditions, indices, arguments).
#[derive(Clone, Copy)]
enum Need {
    /// An int or a float.
    Number,
    Bool,
    Int,
}

impl Need {
    /// Is a value of type `t` what is needed?
    fn admits(self, t: ElemType) -> bool {
        match self {
            Need::Number => is_numeric(t),
            Need::Bool => t == ElemType::Bool,
            Need::Int => t == ElemType::Int,
        }
    }

    /// The label of an operand that is not what is needed.
    fn label(self) -> &'static str {
        match self {
            Need::Number => "not a number",
            Need::Bool => "not a bool",
            Need::Int => "not an int",
        }
    }
}

/// The affine value of an already-lowered int expression, if it is one.
fn as_aff(e: &Expr, space: &Space) -> Option<Aff> {
    match &e.kind {
        ExprKind::Index(a) => Some(a.clone()),
        ExprKind::IntConst(v) => Some(const_aff(space, *v)),
        _ => None,
    }
}

/// `Index(a)`, or `IntConst` when `a` has no index or parameter term.
fn index_expr(a: Aff, span: Span) -> Expr {
    match aff_is_const(&a) {
        Some(v) => mk(ExprKind::IntConst(v), ElemType::Int, span),
        None => mk(ExprKind::Index(a), ElemType::Int, span),
    }
}

impl SysCx<'_> {
    fn err(&mut self, msg: impl Into<String>, span: Span, label: &str) {
        self.errors
            .push(Diagnostic::error(msg, span).with_label(label.to_string()));
    }

    /// `f` on every item, in order and on all of them (so that independent
    /// errors are all reported): the results, or `None` if any failed.
    fn lower_each<T, U>(
        &mut self,
        items: &[T],
        mut f: impl FnMut(&mut Self, &T) -> Option<U>,
    ) -> Option<Vec<U>> {
        let all: Vec<Option<U>> = items.iter().map(|x| f(self, x)).collect();
        all.into_iter().collect()
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
}
