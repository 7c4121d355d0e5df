//! Lowering of one system: declarations (parameters, variables and their
//! domains), the equations (each variable defined once over its whole
//! domain, inputs never) and sweep declarations.

use super::subsystem_inline::{reads_var, remap_vars};
use super::*;

/// Lowers the system `s`; `callees` are its calls' systems (see
/// [`super::subsystem`]), `None` for a call already reported as wrong.
pub(super) fn lower_system(
    g: &Globals,
    s: &ast::System,
    callees: &[Option<Callee>],
    errors: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) -> Option<System> {
    let before = errors.len();
    let mut cx = SysCx {
        g,
        params: Vec::new(),
        context: Set::universe(Space::set::<String, String>(&[], &[])),
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
        Some(d) => cx.decl_domain(d).map(|d| {
            if d.n_dims() != 0 {
                cx.errors.push(
                    Diagnostic::error(
                        "the parameter context must not have index dimensions",
                        s.context.as_ref().map(|c| c.span).unwrap_or(s.span),
                    )
                    .with_label("write `{ : constraints }`"),
                );
                return cx.universe(&[]);
            }
            d
        }),
        None => Some(cx.universe(&[])),
    }
    .unwrap_or_else(|| cx.universe(&[]));
    cx.context = context.clone();

    // Variables.
    for (decls, kind) in [
        (&s.inputs, VarKind::Input),
        (&s.outputs, VarKind::Output),
        (&s.locals, VarKind::Local),
    ] {
        for d in decls {
            let ty = d.ty.map_or(ElemType::Float, |t| t.0);
            let domain = match &d.domain {
                Some(dom) => cx.decl_domain(dom),
                None => Some(cx.universe(&[])),
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
    let calls_ok = super::subsystem::lower_uses(&mut cx, s, callees, &mut defined, &mut equations);
    let mut unused = Vec::new();
    for (k, var) in cx.vars.iter().enumerate() {
        if var.kind != VarKind::Input && !defined.contains_key(&k) {
            let kind = if var.kind == VarKind::Output {
                "output"
            } else {
                "local"
            };
            let read = equations.iter().any(|eq| reads_var(&eq.expr, k));
            if var.kind == VarKind::Local && !read {
                warnings.push(
                    warning(
                        format!("local `{}` is neither defined nor used", var.name),
                        var.span,
                    )
                    .with_label("declared here only")
                    .with_note("it is ignored; remove the declaration"),
                );
                unused.push(k);
                continue;
            }
            cx.errors.push(
                Diagnostic::error(format!("{kind} `{}` is never defined", var.name), var.span)
                    .with_label("no equation defines it"),
            );
        }
    }
    let (vars, var_map) = drop_vars(cx.vars, &unused, &mut equations);
    let sweeps = lower_sweeps(&s.sweeps, &vars, &var_map, cx.errors);
    let mut sys = System {
        name: s.name.name.clone(),
        params: cx.params,
        context,
        vars,
        equations,
        sweeps,
        span: s.span,
    };
    super::selection::mark_selections(&mut sys);
    if errors.len() > before || !calls_ok {
        None
    } else {
        Some(sys)
    }
}

/// `vars` without the variables `drop` (which no equation reads nor
/// defines), the ids in `equations` renumbered; and the new name → id map.
fn drop_vars(
    vars: Vec<Variable>,
    drop: &[VarId],
    equations: &mut [Equation],
) -> (Vec<Variable>, HashMap<String, VarId>) {
    let mut map = Vec::with_capacity(vars.len());
    let mut kept = Vec::new();
    for (k, v) in vars.into_iter().enumerate() {
        map.push(kept.len());
        if !drop.contains(&k) {
            kept.push(v);
        }
    }
    if !drop.is_empty() {
        for eq in equations.iter_mut() {
            eq.var = map[eq.var];
            remap_vars(&mut eq.expr, &map);
            eq.number_reductions();
        }
    }
    let names = kept
        .iter()
        .enumerate()
        .map(|(k, v)| (v.name.clone(), k))
        .collect();
    (kept, names)
}

/// Checks `sweep IN <- OUT` declarations: `IN` an input and `OUT` an
/// output of the same type and the same domain (equal as integer sets for
/// every parameter value), each input and each output named at most once.
pub(super) fn lower_sweeps(
    decls: &[ast::SweepDecl],
    vars: &[Variable],
    var_map: &HashMap<String, VarId>,
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
        let same = vi.domain.n_dims() == vo.domain.n_dims()
            && vi.domain.is_equal(&vo.domain).unwrap_or(false);
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

impl SysCx<'_> {
    pub(super) fn equation(&mut self, v: VarId, eq: &ast::Equation) -> Option<Equation> {
        let var_dims = self.vars[v].domain.dims().to_vec();
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
        let scope = Scope::identity(&self.space(&indices));
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
        let mut eq = Equation {
            var: v,
            indices,
            expr: rhs,
            span: eq.span,
        };
        eq.number_reductions();
        Some(eq)
    }
}
