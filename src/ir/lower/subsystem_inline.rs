//! Inlining a called system's IR into its caller: the change of variables
//! that instantiates the callee's parameters and prepends the extension
//! dimensions, applied to every set, affine function, access and
//! expression of the callee; and the renumbering of variable ids (used
//! also to drop unused locals).

use super::*;
use crate::poly::PolyResult;

/// One family of instances of a called system inside its caller.
///
/// The callee lives over `[q_0 .. q_{Q-1}] -> { [s] }`; its instances live
/// over `[p_0 .. p_{P-1}] -> { [e_0 .. e_{E-1}, s] }`, where `e` ranges
/// over the extension domain and the callee's parameters are the affine
/// functions `q_j = inst_j(p, e)`. A constraint row `[a_q, a_s, c]`
/// (`Σ a_q·q + Σ a_s·s + c`) becomes `[Σ_j a_q_j·inst_j|_p, Σ_j
/// a_q_j·inst_j|_e, a_s, c + Σ_j a_q_j·inst_j|_1]`: the same affine form
/// with `q` substituted. Every set is intersected with `e ∈ ext`, and every
/// access `x ↦ f(x)` of the callee becomes `(e, x) ↦ (e, f(x))` (each
/// instance reads its own copy of the callee's variables).
pub(super) struct Instance {
    /// The caller's parameters.
    pub params: Vec<String>,
    /// The names of the extension dimensions in the caller.
    pub ext_names: Vec<String>,
    /// The extension domain, over `[p] -> { [e] }`.
    pub ext: Set,
    /// `inst_j` as rows `[p coefficients, e coefficients, constant]`.
    pub inst: Vec<Vec<i64>>,
    /// The callee's dimension names that must be renamed in the caller.
    pub rename: HashMap<String, String>,
    /// The caller's variable for each variable of the callee.
    pub var_map: Vec<VarId>,
    /// The caller's external function for each external of the callee.
    pub external_map: Vec<usize>,
    /// Where every inlined expression points (the call).
    pub span: Span,
}

impl Instance {
    fn n_ext(&self) -> usize {
        self.ext_names.len()
    }

    /// The caller's name of a callee dimension.
    pub(super) fn dim_name(&self, d: &str) -> String {
        self.rename.get(d).cloned().unwrap_or_else(|| d.to_string())
    }

    /// The instance space `[p] -> { [e, s'] }` of a callee set space over
    /// the dimensions `dims` (`s'` are the renamed `dims`).
    pub(super) fn space(&self, dims: &[String]) -> Space {
        let mut all = self.ext_names.clone();
        all.extend(dims.iter().map(|d| self.dim_name(d)));
        Space::set(&self.params, &all)
    }

    /// The row `[a_q, a_s, c]` of a callee space with `ns` dimensions as a
    /// row of the instance space (see the type's comment); `None` on
    /// overflow.
    fn row(&self, r: &[i64], ns: usize) -> Option<Vec<i64>> {
        let nq = self.inst.len();
        let np = self.params.len();
        let ne = self.n_ext();
        if r.len() != nq + ns + 1 {
            return None;
        }
        let mut out = vec![0i64; np + ne + ns + 1];
        let last = np + ne + ns;
        for (j, &a) in r[..nq].iter().enumerate() {
            if a == 0 {
                continue;
            }
            let f = &self.inst[j];
            for t in 0..np + ne {
                out[t] = out[t].checked_add(a.checked_mul(f[t])?)?;
            }
            out[last] = out[last].checked_add(a.checked_mul(f[np + ne])?)?;
        }
        out[np + ne..last].copy_from_slice(&r[nq..nq + ns]);
        out[last] = out[last].checked_add(r[nq + ns])?;
        Some(out)
    }

    /// `{ (e, s') : e ∈ ext, s ∈ d(inst(p, e)) }` for a callee set `d`.
    pub(super) fn set(&self, d: &Set) -> Result<Set, String> {
        let ns = d.n_dims();
        let space = self.space(d.dims());
        let mapped = d
            .map_rows(&space, |r| {
                self.row(r, ns).ok_or(crate::poly::PolyError::Overflow)
            })
            .map_err(|e| e.to_string())?;
        let ne = self.n_ext();
        let ext = self
            .ext
            .map_rows(&space, |r: &[i64]| -> PolyResult<Vec<i64>> {
                let np = self.params.len();
                let mut out = r[..np + ne].to_vec();
                out.extend(std::iter::repeat_n(0, ns));
                out.push(r[np + ne]);
                Ok(out)
            })
            .map_err(|e| e.to_string())?;
        mapped.intersect(&ext).map_err(|e| e.to_string())
    }

    /// A callee affine function over `dims` as one of the instance space.
    fn aff(&self, a: &Aff) -> Result<Aff, String> {
        let dims = a.space().output.dims.clone();
        let row = self.row(a.row(), dims.len()).ok_or_else(overflow)?;
        Aff::new(self.space(&dims), row).map_err(|e| e.to_string())
    }

    /// `(e, x) ↦ (e, f(x))` for a callee function `f`.
    fn multi_aff(&self, f: &MultiAff) -> Result<MultiAff, String> {
        let dims = f.domain_space().output.dims;
        let space = self.space(&dims);
        let np = self.params.len();
        let width = space.n_vars() + 1;
        let mut rows: Vec<Vec<i64>> = (0..self.n_ext())
            .map(|k| {
                let mut r = vec![0; width];
                r[np + k] = 1;
                r
            })
            .collect();
        for r in f.rows() {
            rows.push(self.row(r, dims.len()).ok_or_else(overflow)?);
        }
        MultiAff::from_rows(space, rows).map_err(|e| e.to_string())
    }

    /// A callee equation as an equation of the caller's variable
    /// `var_map[eq.var]`, over `[e, indices']`.
    pub(super) fn equation(&self, eq: &Equation) -> Result<Equation, String> {
        let mut indices = self.ext_names.clone();
        indices.extend(eq.indices.iter().map(|d| self.dim_name(d)));
        let space = Space::set(&self.params, &indices);
        let mut expr = eq.expr.clone();
        self.expr(&mut expr, &space)?;
        let mut eq = Equation {
            var: self.var_map[eq.var],
            indices,
            expr,
            span: self.span,
        };
        // Reduction ids name the equation's variable: the caller's now.
        eq.number_reductions();
        Ok(eq)
    }

    /// Rewrites a callee expression, evaluated in `space` (already the
    /// instance space), in place.
    fn expr(&self, e: &mut Expr, space: &Space) -> Result<(), String> {
        e.span = self.span;
        match &mut e.kind {
            ExprKind::Index(a) => {
                let a = self.aff(a)?;
                e.kind = match a.as_constant() {
                    Some(v) => ExprKind::IntConst(v),
                    None => ExprKind::Index(a),
                };
                return Ok(());
            }
            ExprKind::Read { var, access } => {
                *var = self.var_map[*var];
                *access = self.multi_aff(access)?;
                return Ok(());
            }
            ExprKind::IndirectRead { var, indices } => {
                *var = self.var_map[*var];
                for x in indices.iter_mut() {
                    self.expr(x, space)?;
                }
                let ext: Vec<Expr> = (0..self.n_ext())
                    .map(|k| {
                        mk(
                            ExprKind::Index(Aff::dim(space.clone(), k)),
                            ElemType::Int,
                            self.span,
                        )
                    })
                    .collect();
                indices.splice(0..0, ext);
                return Ok(());
            }
            ExprKind::Restrict(d, x) => {
                *d = self.set(d)?;
                return self.expr(x, space);
            }
            ExprKind::Case(pieces) => {
                for (d, x) in pieces.iter_mut() {
                    *d = self.set(d)?;
                    self.expr(x, space)?;
                }
                return Ok(());
            }
            ExprKind::Reduce(r) => {
                r.body_domain = self.set(&r.body_domain)?;
                r.proj = self.multi_aff(&r.proj)?;
                let body_space = r.body_domain.space().clone();
                return self.expr(&mut r.body, &body_space);
            }
            ExprKind::Categorical(c) => {
                c.index = self.dim_name(&c.index);
                c.domain = self.set(&c.domain)?;
                c.site.var = self.var_map[c.site.var];
                let inner = c.domain.space().clone();
                return self.expr(&mut c.weight, &inner);
            }
            ExprKind::Random(_, _, site) => site.var = self.var_map[site.var],
            ExprKind::External(k, _) => *k = self.external_map[*k],
            _ => {}
        }
        let mut result = Ok(());
        e.for_each_child_mut(&mut |x| {
            if result.is_ok() {
                result = self.expr(x, space);
            }
        });
        result
    }
}

fn overflow() -> String {
    "integer overflow while instantiating the parameters".to_string()
}

/// Every dimension name used by `s`'s variables, equations, reductions
/// and draws (names the extension indices and the caller's names must not
/// collide with).
pub(super) fn dim_names(s: &System) -> Vec<String> {
    fn go(e: &Expr, out: &mut Vec<String>) {
        match &e.kind {
            ExprKind::Reduce(r) => out.extend(r.dims().iter().cloned()),
            ExprKind::Categorical(c) => out.push(c.index.clone()),
            _ => {}
        }
        e.for_each_child(&mut |x| go(x, out));
    }
    let mut out: Vec<String> = Vec::new();
    for v in &s.vars {
        out.extend(v.domain.dims().iter().cloned());
    }
    for eq in &s.equations {
        out.extend(eq.indices.iter().cloned());
        go(&eq.expr, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// Does `e` read variable `v` (affinely or indirectly)?
pub(super) fn reads_var(e: &Expr, v: VarId) -> bool {
    let here = matches!(
        &e.kind,
        ExprKind::Read { var, .. } | ExprKind::IndirectRead { var, .. } if *var == v
    );
    let mut found = here;
    e.for_each_child(&mut |x| found = found || reads_var(x, v));
    found
}

/// Renames variable ids in `e` through `map` (reads, call sites).
pub(super) fn remap_vars(e: &mut Expr, map: &[VarId]) {
    match &mut e.kind {
        ExprKind::Read { var, .. } | ExprKind::IndirectRead { var, .. } => *var = map[*var],
        ExprKind::Random(_, _, site) => site.var = map[site.var],
        ExprKind::Categorical(c) => c.site.var = map[c.site.var],
        _ => {}
    }
    e.for_each_child_mut(&mut |x| remap_vars(x, map));
}
