//! Subsystem calls (Alpha's use equations), lowered by inlining.
//!
//! A call `over D with [k] : (Y1, ...) = sys[f(p, e)](X1, ...)` (or
//! `use D sys[f](X1, ...) returns (Y1, ...)`) means: for every point `e`
//! of the extension domain `D`, the system `sys` with parameters
//! `q = f(p, e)` computes its outputs from the given inputs. It becomes
//! ordinary equations of the caller: every variable `V` of `sys` becomes a
//! fresh local `sys_V` over `{ (e, x) : e ∈ D, x ∈ dom V (q = f(p, e)) }`,
//! each equation of `sys` is copied with `q` substituted and `e`
//! prepended ([`Instance`]), each actual input `Xk` defines the local of
//! the `k`-th input (its expression is evaluated at `(e, x)`, with the
//! extension names and the `with` names in scope), and each output
//! variable `Yk` is defined by reading the local of the `k`-th output. So
//! later stages see one flat system, and a reduction of `sys` is
//! optimized in its caller.
//!
//! Checked like an equation: the number of parameters, inputs and
//! outputs; the parameters affine, and satisfying `sys`'s context for every
//! `e ∈ D` in the caller's context; the types of inputs and outputs; each
//! output variable's domain equal to the domain the call defines (so
//! outputs are covered exactly once); the inputs' reads (checked on the
//! input equations like any other). Calls that form a cycle are rejected
//! with the cycle named (`a -> b -> a`).

use std::rc::Rc;

use super::import::{LibSystem, Visible};
use super::subsystem_inline::{dim_names, Instance};
use super::*;

/// The system a call names.
pub(super) enum Target {
    /// A system of the same file (its index among the file's systems).
    Local(usize),
    /// A system of an imported file.
    Lib(Rc<LibSystem>),
}

/// The calls of every system of a file, resolved, and an order in which to
/// lower the systems so that every callee comes before its callers.
pub(super) struct Plan {
    /// For each system, for each of its calls, the callee (`None` when it
    /// is unknown or closes a cycle; the error is reported).
    pub targets: Vec<Vec<Option<Target>>>,
    pub order: Vec<usize>,
}

/// A lowered callee, ready to inline.
pub(super) struct Callee {
    pub name: String,
    /// Whether it is a system of the same file (its spans point into the
    /// caller's file; an imported system's do not, and are not shown).
    pub local: bool,
    pub system: System,
    /// The caller's external index for each external of the callee's file.
    pub externals: Vec<usize>,
}

/// Resolves every call of the file's `systems` (package path and AST) and
/// orders the systems callees first; unknown systems and cycles are
/// reported in `errors`.
pub(super) fn plan(
    systems: &[(Vec<String>, &ast::System)],
    vis: &Visible,
    errors: &mut Vec<Diagnostic>,
) -> Plan {
    let mut targets: Vec<Vec<Option<Target>>> = Vec::new();
    for (_, s) in systems {
        let mut ts = Vec::new();
        for u in &s.uses {
            ts.push(resolve(&u.system, u.span, systems, vis, errors));
        }
        targets.push(ts);
    }
    // Depth-first search: post-order is callees first; an edge to a system
    // on the stack closes a cycle.
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        OnStack,
        Done,
    }
    struct Dfs<'a> {
        systems: &'a [(Vec<String>, &'a ast::System)],
        state: Vec<State>,
        stack: Vec<usize>,
        order: Vec<usize>,
    }
    impl Dfs<'_> {
        fn visit(
            &mut self,
            u: usize,
            targets: &mut [Vec<Option<Target>>],
            errors: &mut Vec<Diagnostic>,
        ) {
            self.state[u] = State::OnStack;
            self.stack.push(u);
            for k in 0..targets[u].len() {
                let Some(Target::Local(v)) = targets[u][k] else {
                    continue;
                };
                match self.state[v] {
                    State::OnStack => {
                        let pos = self.stack.iter().position(|&x| x == v).unwrap_or(0);
                        let mut names: Vec<&str> = self.stack[pos..]
                            .iter()
                            .map(|&x| self.systems[x].1.name.name.as_str())
                            .collect();
                        names.push(self.systems[v].1.name.name.as_str());
                        let call = &self.systems[u].1.uses[k];
                        errors.push(
                            Diagnostic::error(
                                format!("cyclic subsystem calls: {}", names.join(" -> ")),
                                call.span,
                            )
                            .with_label("this call closes the cycle")
                            .with_note("a system cannot call itself, directly or through others"),
                        );
                        targets[u][k] = None;
                    }
                    State::New => self.visit(v, targets, errors),
                    State::Done => {}
                }
            }
            self.stack.pop();
            self.state[u] = State::Done;
            self.order.push(u);
        }
    }
    let mut dfs = Dfs {
        systems,
        state: vec![State::New; systems.len()],
        stack: Vec::new(),
        order: Vec::new(),
    };
    for u in 0..systems.len() {
        if dfs.state[u] == State::New {
            dfs.visit(u, &mut targets, errors);
        }
    }
    Plan {
        targets,
        order: dfs.order,
    }
}

/// The system `name` (simple or qualified) as seen from this file: one of
/// its own (by simple name, or by package path and name), else an imported
/// one.
fn resolve(
    name: &[ast::Ident],
    span: Span,
    systems: &[(Vec<String>, &ast::System)],
    vis: &Visible,
    errors: &mut Vec<Diagnostic>,
) -> Option<Target> {
    let parts: Vec<String> = name.iter().map(|i| i.name.clone()).collect();
    let dotted = parts.join(".");
    let name_span = match (name.first(), name.last()) {
        (Some(a), Some(b)) => a.span.join(b.span),
        _ => span,
    };
    let local = systems.iter().position(|(pkg, s)| {
        if parts.len() == 1 {
            s.name.name == parts[0]
        } else {
            let mut q = pkg.clone();
            q.push(s.name.name.clone());
            q == parts
        }
    });
    if let Some(k) = local {
        return Some(Target::Local(k));
    }
    match vis.lookup(&parts) {
        Ok(Some(s)) => Some(Target::Lib(s)),
        Ok(None) => {
            errors.push(
                Diagnostic::error(format!("unknown system `{dotted}`"), name_span)
                    .with_label("no system of this name in this file or its imports")
                    .with_note(
                        "systems of other files are reached with `import` (see docs/language.md)",
                    ),
            );
            None
        }
        Err(cands) => {
            errors.push(
                Diagnostic::error(format!("ambiguous system name `{dotted}`"), name_span)
                    .with_label("imported more than once")
                    .with_note(format!(
                        "it may be {}; write the qualified name",
                        cands.join(" or ")
                    )),
            );
            None
        }
    }
}

/// The caller's variable an output expression names (`Y` or `Y[...]`).
fn output_var(e: &ast::Expr) -> Option<&str> {
    match &e.kind {
        ast::ExprKind::Name(n) => Some(n),
        ast::ExprKind::Access { var, .. } => Some(&var.name),
        _ => None,
    }
}

impl SysCx<'_> {
    /// Marks the variables the call's outputs name as defined (reporting
    /// unknown names, inputs and second definitions); their ids, `None`
    /// for a bad one.
    pub(super) fn use_outputs(
        &mut self,
        u: &ast::UseEquation,
        defined: &mut HashMap<VarId, Span>,
    ) -> Vec<Option<VarId>> {
        let mut out = Vec::new();
        for o in &u.outputs {
            let Some(name) = output_var(o) else {
                self.err(
                    "an output of a subsystem call must be a variable",
                    o.span,
                    "write `Y` or `Y[i, ...]`",
                );
                out.push(None);
                continue;
            };
            let Some(&v) = self.var_map.get(name) else {
                self.err(
                    format!("unknown variable `{name}`"),
                    o.span,
                    "not declared in this system",
                );
                out.push(None);
                continue;
            };
            if self.vars[v].kind == VarKind::Input {
                self.errors.push(
                    Diagnostic::error(
                        format!("input `{name}` cannot be defined by a subsystem call"),
                        o.span,
                    )
                    .with_label("an input")
                    .with_secondary(self.vars[v].span, "declared as an input here"),
                );
                out.push(None);
                continue;
            }
            if let Some(prev) = defined.get(&v) {
                self.errors.push(
                    Diagnostic::error(format!("`{name}` is defined twice"), o.span)
                        .with_label("second definition")
                        .with_secondary(*prev, "first definition"),
                );
                out.push(None);
                continue;
            }
            defined.insert(v, o.span);
            out.push(Some(v));
        }
        out
    }

    /// Lowers the call `u` of `callee` (the `nth` call of it in this
    /// system, from 0): fresh locals and their equations appended to
    /// `self.vars` and `equations`. `outs` are the caller's variables from
    /// [`Self::use_outputs`].
    pub(super) fn use_equation(
        &mut self,
        u: &ast::UseEquation,
        callee: &Callee,
        nth: usize,
        outs: &[Option<VarId>],
        defined: &mut HashMap<VarId, Span>,
        equations: &mut Vec<Equation>,
    ) -> Option<()> {
        let cs = &callee.system;
        let name = &callee.name;
        let ins: Vec<VarId> = (0..cs.vars.len())
            .filter(|&k| cs.vars[k].kind == VarKind::Input)
            .collect();
        let couts: Vec<VarId> = (0..cs.vars.len())
            .filter(|&k| cs.vars[k].kind == VarKind::Output)
            .collect();
        let mut ok = true;
        for (what, want, given, span) in [
            ("parameter", cs.params.len(), u.params.len(), u.params_span),
            ("input", ins.len(), u.inputs.len(), u.span),
            ("output", couts.len(), u.outputs.len(), u.span),
        ] {
            if want != given {
                self.errors.push(
                    Diagnostic::error(
                        format!("`{name}` takes {want} {what}(s), {given} given"),
                        span,
                    )
                    .with_label(format!("wrong number of {what}s"))
                    .with_note(format!("declared as {}", signature(cs))),
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }

        // The extension domain and the names in scope in the arguments.
        let ext = match &u.domain {
            Some(d) => self.decl_domain(d)?,
            None => self.universe(&[]),
        };
        let ext_names: Vec<String> = ext.dims().to_vec();
        let taken: Vec<Option<String>> = ext_names.iter().cloned().map(Some).collect();
        let sub: Vec<String> = match &u.sub_dims {
            Some(ids) => {
                self.bind_index_names(ids, taken)?;
                ids.iter().map(|i| i.name.clone()).collect()
            }
            None => Vec::new(),
        };

        // Parameters: affine functions of the caller's parameters and `e`.
        let ext_scope = Scope::identity(&self.space(&ext_names));
        let inst = self.lower_each(&u.params, |cx, e| cx.affine(e, &ext_scope))?;
        let inst: Vec<Vec<i64>> = inst.iter().map(|a| a.row().to_vec()).collect();

        // Fresh names for the callee's variables and renamed dimensions.
        let prefix = if nth == 0 {
            name.clone()
        } else {
            format!("{name}{}", nth + 1)
        };
        let mut reserved: Vec<String> = self.params.clone();
        reserved.extend(self.var_map.keys().cloned());
        reserved.extend(self.g.constants.keys().cloned());
        reserved.extend(ext_names.iter().cloned());
        reserved.extend(sub.iter().cloned());
        let mut fresh = Vec::new();
        for v in &cs.vars {
            let mut n = format!("{prefix}_{}", v.name);
            while reserved.contains(&n) {
                n.push('_');
            }
            reserved.push(n.clone());
            fresh.push(n);
        }
        let callee_dims = dim_names(cs);
        let mut rename = HashMap::new();
        let mut generated: Vec<String> = Vec::new();
        for d in &callee_dims {
            if reserved.contains(d) {
                let mut k = 1;
                let new = loop {
                    let c = format!("{d}_{k}");
                    if !reserved.contains(&c)
                        && !callee_dims.contains(&c)
                        && !generated.contains(&c)
                    {
                        break c;
                    }
                    k += 1;
                };
                generated.push(new.clone());
                rename.insert(d.clone(), new);
            }
        }
        let base = self.vars.len();
        let instance = Instance {
            params: self.params.clone(),
            ext_names: ext_names.clone(),
            ext: ext.clone(),
            inst,
            rename,
            var_map: (base..base + cs.vars.len()).collect(),
            external_map: callee.externals.clone(),
            span: u.span,
        };
        let internal = |cx: &mut Self, e: String| {
            cx.err(
                format!("cannot instantiate `{name}` here: {e}"),
                u.span,
                "in this call",
            );
        };

        // The callee's context must hold for every instance.
        match self.context_holds(&instance, cs) {
            Ok(true) => {}
            Ok(false) => {
                self.errors.push(
                    Diagnostic::error(
                        format!("the parameters given to `{name}` do not satisfy its context"),
                        u.params_span,
                    )
                    .with_label("not in the context for every instance")
                    .with_note(format!(
                        "`{name}` requires {}",
                        crate::ir::print::domain_to_alpha(&cs.context, &cs.params)
                    )),
                );
                return None;
            }
            Err(e) => {
                internal(self, e);
                return None;
            }
        }

        // The fresh locals.
        let mut new_vars = Vec::new();
        for (v, n) in cs.vars.iter().zip(&fresh) {
            let domain = match instance.set(&v.domain) {
                Ok(d) => d,
                Err(e) => {
                    internal(self, e);
                    return None;
                }
            };
            new_vars.push(Variable {
                name: n.clone(),
                kind: VarKind::Local,
                ty: v.ty,
                domain,
                span: u.span,
            });
        }
        let mut new_eqs = Vec::new();
        for eq in &cs.equations {
            match instance.equation(eq) {
                Ok(e) => new_eqs.push(e),
                Err(e) => {
                    internal(self, e);
                    return None;
                }
            }
        }
        for v in new_vars {
            self.var_map.insert(v.name.clone(), self.vars.len());
            self.vars.push(v);
        }

        // The inputs, evaluated at (e, x).
        let mut all_ok = true;
        for (k, &x) in ins.iter().enumerate() {
            let local = base + x;
            let dims: Vec<String> = self.vars[local].domain.dims()[ext_names.len()..].to_vec();
            let mut names: Vec<Option<String>> = ext_names.iter().cloned().map(Some).collect();
            let mut real = ext_names.clone();
            for (t, d) in dims.iter().enumerate() {
                match sub.get(t) {
                    Some(s) => {
                        names.push(Some(s.clone()));
                        real.push(s.clone());
                    }
                    None => {
                        names.push(None);
                        real.push(d.clone());
                    }
                }
            }
            let space = self.space(&real);
            let scope = Scope {
                names,
                values: (0..real.len())
                    .map(|t| Aff::dim(space.clone(), t))
                    .collect(),
                real: real.clone(),
            };
            // Reported once: a failed argument does not also leave its
            // local undefined.
            defined.entry(local).or_insert(u.span);
            self.cur_var = local;
            self.next_site = 0;
            let arg = &u.inputs[k];
            let Some(rhs) = self.expr(arg, &scope) else {
                all_ok = false;
                continue;
            };
            let want = self.vars[local].ty;
            if !(want == rhs.ty || (want == ElemType::Float && rhs.ty == ElemType::Int)) {
                let mut d = Diagnostic::error(
                    format!(
                        "type error: input `{}` of `{name}` is {} but this argument is {}",
                        cs.vars[x].name,
                        want.name(),
                        rhs.ty.name()
                    ),
                    arg.span,
                )
                .with_label(format!("this is {}", rhs.ty.name()));
                if callee.local {
                    d = d.with_secondary(cs.vars[x].span, format!("declared {} here", want.name()));
                }
                self.errors.push(d);
                all_ok = false;
                continue;
            }
            let mut eq = Equation {
                var: local,
                indices: real,
                expr: rhs,
                span: arg.span,
            };
            eq.number_reductions();
            new_eqs.push(eq);
        }

        // The outputs: `Y[c] = sys_Y[π⁻¹(c)]`.
        for (k, &y) in couts.iter().enumerate() {
            let Some(target) = outs.get(k).copied().flatten() else {
                continue;
            };
            match self.use_output(
                &u.outputs[k],
                target,
                base + y,
                &ext_names,
                &sub,
                name,
                &cs.vars[y],
            ) {
                Some(eq) => new_eqs.push(eq),
                None => all_ok = false,
            }
        }
        for eq in &new_eqs {
            defined.entry(eq.var).or_insert(u.span);
        }
        equations.extend(new_eqs);
        all_ok.then_some(())
    }

    /// Is `ext ∩ context ⊆ { (p, e) : f(p, e) ∈ context of the callee }`?
    fn context_holds(&self, inst: &Instance, cs: &System) -> Result<bool, String> {
        let needed = inst.set(&cs.context)?;
        let have = inst
            .ext
            .intersect_params(&self.context)
            .map_err(|e| e.to_string())?
            .renamed(needed.space().clone())
            .map_err(|e| e.to_string())?;
        have.is_subset(&needed).map_err(|e| e.to_string())
    }

    /// The equation defining the caller's `target` from the instance local
    /// `local` of the callee's output `y` (written `o` in the call).
    #[allow(clippy::too_many_arguments)]
    fn use_output(
        &mut self,
        o: &ast::Expr,
        target: VarId,
        local: VarId,
        ext_names: &[String],
        sub: &[String],
        name: &str,
        y: &Variable,
    ) -> Option<Equation> {
        let n_ext = ext_names.len();
        let dy = y.domain.n_dims();
        let tv = &self.vars[target];
        let (tname, tdims, tspan, tty) = (tv.name.clone(), tv.domain.n_dims(), tv.span, tv.ty);
        if tdims != n_ext + dy {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "`{tname}` has {tdims} dimension(s) but output `{}` of `{name}` gives {} ({n_ext} of the extension domain, {dy} of its own)",
                        y.name,
                        n_ext + dy
                    ),
                    o.span,
                )
                .with_label("wrong number of dimensions")
                .with_secondary(tspan, "declared here"),
            );
            return None;
        }
        if !(tty == y.ty || (tty == ElemType::Float && y.ty == ElemType::Int)) {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "type error: `{tname}` is {} but output `{}` of `{name}` is {}",
                        tty.name(),
                        y.name,
                        y.ty.name()
                    ),
                    o.span,
                )
                .with_label(format!("receives {}", y.ty.name()))
                .with_secondary(tspan, format!("declared {} here", tty.name())),
            );
            return None;
        }
        // The call's index names for this output: the extension's, then
        // the `with` names (or the local's own names).
        let local_dims = self.vars[local].domain.dims().to_vec();
        let call_names: Vec<String> = (0..n_ext + dy)
            .map(|t| {
                if t < n_ext {
                    ext_names[t].clone()
                } else {
                    sub.get(t - n_ext)
                        .cloned()
                        .unwrap_or_else(|| local_dims[t].clone())
                }
            })
            .collect();
        // `perm[t]`: the position among the call's names of the name
        // written at index `t` of the output.
        let perm: Vec<usize> = match &o.kind {
            ast::ExprKind::Name(_) => (0..n_ext + dy).collect(),
            ast::ExprKind::Access { indices, .. } => {
                let mut perm = Vec::new();
                for ix in indices {
                    let pos = match &ix.kind {
                        ast::ExprKind::Name(n) => call_names.iter().position(|c| c == n),
                        _ => None,
                    };
                    match pos {
                        Some(p) if !perm.contains(&p) => perm.push(p),
                        _ => {
                            self.errors.push(
                                Diagnostic::error(
                                    "unsupported: an output index of a subsystem call other than a distinct index name of the call",
                                    ix.span,
                                )
                                .with_label("expected one of the call's index names")
                                .with_note(format!(
                                    "the call's index names here are [{}] (the extension domain's, then `with`'s)",
                                    call_names.join(", ")
                                )),
                            );
                            return None;
                        }
                    }
                }
                if perm.len() != n_ext + dy {
                    self.err(
                        format!(
                            "`{tname}` is written with {} index(es) but has {tdims}",
                            perm.len()
                        ),
                        o.span,
                        "wrong number of indices",
                    );
                    return None;
                }
                perm
            }
            _ => return None,
        };
        // The equation's index names: the target's positions named after
        // the call's names; the read maps them back.
        let indices: Vec<String> = perm
            .iter()
            .map(|&p| {
                if p < n_ext {
                    ext_names[p].clone()
                } else {
                    local_dims[p].clone()
                }
            })
            .collect();
        let space = self.space(&indices);
        let np = self.params.len();
        let width = np + indices.len() + 1;
        let mut rows = vec![vec![0i64; width]; n_ext + dy];
        for (t, &p) in perm.iter().enumerate() {
            rows[p][np + t] = 1;
        }
        let access = self.multi_aff(&space, rows, o.span)?;
        let defined_on = match dom_preimage(&self.vars[local].domain, &access) {
            Some(d) => d,
            None => {
                self.err("internal error: the output's domain", o.span, "here");
                return None;
            }
        };
        let declared = self.vars[target].domain.clone();
        let same = defined_on
            .renamed(declared.space().clone())
            .and_then(|d| d.is_equal(&declared))
            .unwrap_or(false);
        if !same {
            let shown = defined_on
                .renamed(declared.space().clone())
                .map(|d| crate::ir::print::domain_to_alpha(&d, &self.params))
                .unwrap_or_default();
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "`{tname}` is declared on {} but the call defines it on {shown}",
                        crate::ir::print::domain_to_alpha(&declared, &self.params)
                    ),
                    o.span,
                )
                .with_label("the call defines a different set of points")
                .with_secondary(tspan, "declared here")
                .with_note(format!(
                    "each instance (one per point of the extension domain) defines {} of output `{}` of `{name}`",
                    if y.domain.n_dims() == 0 {
                        "the scalar".to_string()
                    } else {
                        format!("the points {}", crate::ir::print::domain_to_alpha(&y.domain, &[]))
                    },
                    y.name,
                )),
            );
            return None;
        }
        let read = mk(
            ExprKind::Read { var: local, access },
            self.vars[local].ty,
            o.span,
        );
        Some(Equation {
            var: target,
            indices,
            expr: read,
            span: o.span,
        })
    }
}

/// `sys [N, M] (A : float [N], ...) returns (C : float {})` for notes.
fn signature(s: &System) -> String {
    let list = |kind: VarKind| {
        s.vars
            .iter()
            .filter(|v| v.kind == kind)
            .map(|v| {
                format!(
                    "{} : {} {}",
                    v.name,
                    v.ty.name(),
                    crate::ir::print::domain_to_alpha(&v.domain, &s.params)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{} [{}] ({}) returns ({})",
        s.name,
        s.params.join(", "),
        list(VarKind::Input),
        list(VarKind::Output)
    )
}

/// Lowers the calls of one system (after its equations): outputs marked
/// defined, then each call inlined. `false` when a call's system is
/// unknown or in a cycle (already reported): the system is then not
/// lowered.
pub(super) fn lower_uses(
    cx: &mut SysCx,
    s: &ast::System,
    callees: &[Option<Callee>],
    defined: &mut HashMap<VarId, Span>,
    equations: &mut Vec<Equation>,
) -> bool {
    let mut count: HashMap<String, usize> = HashMap::new();
    let mut all = true;
    for (k, u) in s.uses.iter().enumerate() {
        let outs = cx.use_outputs(u, defined);
        let Some(Some(callee)) = callees.get(k) else {
            all = false;
            continue;
        };
        let nth = count.entry(callee.name.clone()).or_insert(0);
        let this = *nth;
        *nth += 1;
        let _ = cx.use_equation(u, callee, this, &outs, defined, equations);
    }
    all
}
