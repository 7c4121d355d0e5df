//! Step 3 of scanning: loop generation over the time-space domains
//! ([`Gen::level`]): one dimension at a time, scalar dimensions split by
//! value, separation (`separate`), one loop with the bounds valid for the
//! group and guards for the rest, and the one-trip integrality loops of
//! the iterators; the statement instances themselves (`expr`).
//!
//! Must not know about: the IR's statement matching (`matcher`), how the
//! time-space domains were built.

use super::expr::*;
use super::matcher::Action;
use super::separate::separate;
use super::time_space::TimeStmt;
use super::*;

/// The function's loop variable names, made unique: `name`, then
/// `name_2`, `name_3`, … (the first one not taken). Constant time per
/// name: the set of names taken, and per base name the suffix tried last
/// (names are never released, so the ones below it stay taken).
#[derive(Default)]
pub(super) struct Names {
    pub(super) list: Vec<String>,
    pub(super) taken: HashSet<String>,
    pub(super) next: HashMap<String, usize>,
}

impl Names {
    pub(super) fn fresh(&mut self, name: &str) -> LoopVar {
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

pub(super) struct Gen<'a> {
    pub(super) n_par: usize,
    pub(super) loop_vars: Names,
    pub(super) acc_of: &'a HashMap<(usize, ReductionId), usize>,
    pub(super) sys: &'a ir::System,
    /// (statement, iterator) → the loop variable of its one-trip loop,
    /// while that loop encloses the code being generated.
    pub(super) bound_iters: HashMap<(usize, usize), LoopVar>,
}

/// The state of loop generation ([`Gen::level`]) at the current depth.
pub(super) struct Level<'t, 'a> {
    /// The time-space domains of the statements.
    pub(super) ts: &'t [TimeStmt<'a>],
    /// The number of time dimensions.
    pub(super) n_t: usize,
    /// The values of the time dimensions bound so far, `t_0 … t_{k−1}`
    /// (affine in the enclosing loop variables and the parameters).
    pub(super) tvals: Vec<Affine>,
    /// Per statement, the guards not emitted yet.
    pub(super) guards: Vec<Vec<Expr>>,
}

/// A bound term `t_k ≥ ceil(e/d)` or `t_k ≤ floor(e/d)`: (e over (t, p, 1), d).
pub(super) type Term = bounds::VarBound;

impl Gen<'_> {
    pub(super) fn fresh(&mut self, name: String) -> LoopVar {
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

    pub(super) fn row_cond(&self, r: &[i64], n_t: usize, tvals: &[Affine], eq: bool) -> R<Expr> {
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
                l = bounds::lcm(l, *d).map_err(arith)?;
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
    fn implied(p: &System, k: usize, t: &Term, lower: bool) -> R<bool> {
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
        let mut s = p.clone();
        s.add_ineq(r);
        Ok(solver::integer_sample(&s)?.is_none())
    }

    /// [`Gen::implied`] for every statement of `group` (each one asked,
    /// then the answers combined).
    fn implied_for_all(
        ts: &[TimeStmt],
        group: &[usize],
        k: usize,
        t: &Term,
        lower: bool,
    ) -> R<bool> {
        Ok(group
            .iter()
            .map(|&s| Self::implied(&ts[s].proj[k + 1], k, t, lower))
            .collect::<R<Vec<bool>>>()?
            .iter()
            .all(|&b| b))
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

    pub(super) fn level(
        &mut self,
        lv: &mut Level<'_, '_>,
        group: &[usize],
        k: usize,
    ) -> R<Vec<Stmt>> {
        let (ts, n_t) = (lv.ts, lv.n_t);
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
                let inner = self.level(lv, group, k);
                for &j in &ready {
                    self.bound_iters.remove(&(t.index, j));
                }
                let mut out = inner?;
                for (j, v) in made.into_iter().rev() {
                    out = vec![self.one_trip(t, j, v, n_t, &lv.tvals, out)?];
                }
                return Ok(out);
            }
        }
        // A lone statement with pending guards: hoist them here.
        if group.len() == 1 && !lv.guards[group[0]].is_empty() {
            let conds = std::mem::take(&mut lv.guards[group[0]]);
            let inner = self.level(lv, group, k)?;
            return Ok(vec![Stmt::If {
                cond: Expr::and_all(conds),
                then: inner,
                els: Vec::new(),
            }]);
        }
        if k == n_t {
            let mut out = Vec::new();
            for &s in group {
                let st = self.stmt_body(&ts[s], n_t, &lv.tvals)?;
                let conds = std::mem::take(&mut lv.guards[s]);
                if conds.is_empty() {
                    out.push(st);
                } else {
                    out.push(Stmt::If {
                        cond: Expr::and_all(conds),
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
                lv.tvals.push(Affine::cst(v));
                let r = self.level(lv, &sub, k + 1);
                lv.tvals.pop();
                out.extend(r?);
            }
            return Ok(out);
        }
        // Separation: statements whose instances are ordered along t_k
        // (at every point of the outer dimensions) get loops of their own.
        if group.len() > 1 {
            if let Some(parts) = separate(ts, group, k)? {
                let mut out = Vec::new();
                for part in parts {
                    out.extend(self.level(lv, &part, k)?);
                }
                return Ok(out);
            }
        }
        // One loop over t_k.
        let per: Vec<(Vec<Term>, Vec<Term>)> = group
            .iter()
            .map(|&s| bounds::var_bounds(&ts[s].proj[k + 1], k))
            .collect();
        let (lower, upper) = if group.len() == 1 {
            per[0].clone()
        } else {
            let mut lo = Vec::new();
            let mut up = Vec::new();
            for (l, u) in &per {
                for t in l {
                    if !lo.contains(t) && Self::implied_for_all(ts, group, k, t, true)? {
                        lo.push(t.clone());
                    }
                }
                for t in u {
                    if !up.contains(t) && Self::implied_for_all(ts, group, k, t, false)? {
                        up.push(t.clone());
                    }
                }
            }
            (lo, up)
        };
        let lower_opts = Self::bound_options(ts, group, &per, k, lower, true)?;
        let upper_opts = Self::bound_options(ts, group, &per, k, upper, false)?;
        if lower_opts.iter().any(|o| o.is_empty()) || upper_opts.iter().any(|o| o.is_empty()) {
            return Err(ScanError::Unsupported(format!(
                "schedule dimension {k} is unbounded"
            )));
        }
        let mut branches: Vec<(Option<Expr>, Stmt)> = Vec::new();
        for (li, lo) in lower_opts.iter().enumerate() {
            for (ui, up) in upper_opts.iter().enumerate() {
                let mut conds = self.option_conds(&lower_opts, li, n_t, &lv.tvals, true)?;
                conds.extend(self.option_conds(&upper_opts, ui, n_t, &lv.tvals, false)?);
                let saved = lv.guards.clone();
                let st = self.one_loop(lv, group, k, &per, lo, up);
                lv.guards = saved;
                branches.push(((!conds.is_empty()).then(|| Expr::and_all(conds)), st?));
            }
        }
        // Drain the guards the branches consumed (each branch used a copy).
        for &s in group {
            lv.guards[s].clear();
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

    /// The options for one side (`lower` or upper) of the loop over `t_k`
    /// of `group`, given the statements' terms valid for the whole group
    /// (`valid`): those terms, or else a looser common bound when one is
    /// proven valid (every statement's own terms become its guards in
    /// `one_loop`, so the instances that run are the same; the loop may
    /// visit up to about as many more points as there are statements'
    /// terms), or else one option per statement, chosen at run time (the
    /// union's range is within [min of the statements' lowers, max of
    /// their uppers]).
    fn bound_options(
        ts: &[TimeStmt],
        group: &[usize],
        per: &[(Vec<Term>, Vec<Term>)],
        k: usize,
        valid: Vec<Term>,
        lower: bool,
    ) -> R<Vec<Vec<Term>>> {
        let valid = if valid.is_empty() {
            Self::common_bound(ts, group, per, k, lower)?
                .map(|t| vec![t])
                .unwrap_or_default()
        } else {
            valid
        };
        if !valid.is_empty() {
            return Ok(vec![valid]);
        }
        let mut v: Vec<Vec<Term>> = per
            .iter()
            .map(|(l, u)| if lower { l.clone() } else { u.clone() })
            .collect();
        v.dedup();
        Ok(v)
    }

    /// The conditions under which option `i` of `opts` (the options of
    /// one side, see [`Gen::bound_options`]) is the bound of the loop that
    /// runs: for a lower bound, its value is at most every other option's
    /// (the union starts at the smallest); for an upper bound, at least
    /// every other option's. None when there is a single option.
    fn option_conds(
        &self,
        opts: &[Vec<Term>],
        i: usize,
        n_t: usize,
        tvals: &[Affine],
        lower: bool,
    ) -> R<Vec<Expr>> {
        let mut conds = Vec::new();
        if opts.len() > 1 {
            let me = self.bound_value(&opts[i], n_t, tvals, lower)?;
            let op = if lower {
                loop_ast::BinOp::Le
            } else {
                loop_ast::BinOp::Ge
            };
            for (j, other) in opts.iter().enumerate() {
                if j != i {
                    let o = self.bound_value(other, n_t, tvals, lower)?;
                    conds.push(Expr::bin(op, me.clone(), o));
                }
            }
        }
        Ok(conds)
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

    fn one_loop(
        &mut self,
        lv: &mut Level<'_, '_>,
        group: &[usize],
        k: usize,
        per: &[(Vec<Term>, Vec<Term>)],
        lower: &[Term],
        upper: &[Term],
    ) -> R<Stmt> {
        let n_t = lv.n_t;
        let var = self.fresh(format!("t{k}"));
        lv.tvals.push(Affine::var(var));
        let res = (|| -> R<Stmt> {
            if group.len() > 1 {
                for (gi, &s) in group.iter().enumerate() {
                    let (l, u) = &per[gi];
                    for t in l {
                        if !lower.contains(t) {
                            let c = self.term_cond(t, k, n_t, &lv.tvals, true)?;
                            lv.guards[s].push(c);
                        }
                    }
                    for t in u {
                        if !upper.contains(t) {
                            let c = self.term_cond(t, k, n_t, &lv.tvals, false)?;
                            lv.guards[s].push(c);
                        }
                    }
                }
            }
            let lb = self.bound(lower, n_t, &lv.tvals[..k])?;
            let ub = self.bound(upper, n_t, &lv.tvals[..k])?;
            let body = self.level(lv, group, k + 1)?;
            Ok(Stmt::For(ForLoop {
                var,
                parallel: false,
                lower: lb,
                upper: ub,
                body,
            }))
        })();
        lv.tvals.pop();
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
            lower = lower.and(dim.lower.clone(), 1);
            upper = upper.and(simplify(dim_upper(dim)?), 1);
        }
        Ok(Stmt::For(ForLoop {
            var,
            parallel: false,
            lower,
            upper,
            body,
        }))
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
            } => Stmt::Accumulate(Accumulation {
                array: *array,
                index: proj
                    .affs()
                    .iter()
                    .map(|a| ex.aff(a, &x).map(Expr::Aff))
                    .collect::<R<_>>()?,
                op: *op,
                value: ex.expr(body, &x, Some(*ty))?,
            }),
        })
    }
}
