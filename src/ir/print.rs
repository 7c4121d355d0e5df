//! Pretty-printer from the IR back to valid `.alpha` text.
//!
//! The output re-parses and re-lowers to the same IR (spans aside), given
//! the canonical form documented in `ir/mod.rs`. Printing is deterministic.

use super::types::*;
use crate::poly::Constraint;
use std::fmt::Write;

/// Prints a whole program.
pub fn program_to_alpha(p: &Program) -> String {
    let mut out = String::new();
    for e in &p.externals {
        let _ = writeln!(out, "external {}({})", e.name, e.arity);
    }
    for (name, value) in &p.constants {
        let _ = writeln!(out, "constant {name} = {value}");
    }
    if !p.externals.is_empty() || !p.constants.is_empty() {
        out.push('\n');
    }
    for (k, s) in p.systems.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        out.push_str(&system_to_alpha(p, s));
    }
    out
}

/// Prints one system.
pub fn system_to_alpha(p: &Program, s: &System) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "affine {} [{}] -> {}",
        s.name,
        s.params.join(", "),
        domain_to_alpha(&s.context, &s.params)
    );
    for (kind, title) in [
        (VarKind::Input, "inputs"),
        (VarKind::Output, "outputs"),
        (VarKind::Local, "locals"),
    ] {
        let vars: Vec<&Variable> = s.vars.iter().filter(|v| v.kind == kind).collect();
        if vars.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  {title}");
        for v in vars {
            let _ = writeln!(
                out,
                "    {} : {} {};",
                v.name,
                v.ty.name(),
                domain_to_alpha(&v.domain, &s.params)
            );
        }
    }
    if !s.sweeps.is_empty() {
        let _ = writeln!(out, "  sweep");
        for sw in &s.sweeps {
            let _ = writeln!(
                out,
                "    {} <- {};",
                s.vars[sw.input].name, s.vars[sw.output].name
            );
        }
    }
    let _ = writeln!(out, "  let");
    for eq in &s.equations {
        let var = &s.vars[eq.var];
        let ctx = Ctx {
            program: p,
            system: s,
            names: eq.indices.clone(),
        };
        let lhs = if eq.indices.is_empty() {
            var.name.clone()
        } else {
            format!("{}[{}]", var.name, eq.indices.join(", "))
        };
        let _ = writeln!(out, "    {} = {};", lhs, ctx.expr(&eq.expr, 0));
    }
    out.push_str(".\n");
    out
}

/// `{[i, j] : c and c or c}` (a declaration domain with its tuple).
pub fn domain_to_alpha(d: &Set, params: &[String]) -> String {
    let body = constraints_to_alpha(d, params);
    let tuple = if d.dims().is_empty() {
        String::new()
    } else {
        format!("[{}] ", d.dims().join(", "))
    };
    if body.is_empty() {
        format!("{{{}: }}", tuple)
    } else {
        format!("{{{}: {}}}", tuple, body)
    }
}

/// The constraint part `c and c or c` of a domain; empty for the universe,
/// `0 = 1` for the empty domain.
pub fn constraints_to_alpha(d: &Set, params: &[String]) -> String {
    if d.pieces().is_empty() {
        return "0 = 1".to_string();
    }
    if d.pieces().iter().any(|p| p.constraints().is_empty()) {
        return String::new();
    }
    d.pieces()
        .iter()
        .map(|piece| {
            piece
                .constraints()
                .iter()
                .map(|c| constraint_to_alpha(c, d.dims(), params))
                .collect::<Vec<_>>()
                .join(" and ")
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

/// `lhs >= rhs` / `lhs = rhs` with positive terms on the left and negative
/// terms on the right (`i - j + 3 >= 0` prints as `i + 3 >= j`).
pub fn constraint_to_alpha(c: &Constraint, dims: &[String], params: &[String]) -> String {
    let np = params.len();
    let n = c.row.len().saturating_sub(1);
    let (par, idx) = c.row[..n].split_at(np.min(n));
    let constant = c.row.get(n).copied().unwrap_or(0);
    let split = |keep: &dyn Fn(i64) -> i64| -> Vec<i64> {
        par.iter().chain(idx).map(|&v| keep(v)).collect()
    };
    let pos = split(&|v| v.max(0));
    let neg = split(&|v| v.min(0).saturating_neg());
    // A positive constant stays on the left, a negative one goes right:
    // `i - j - 1 >= 0` prints as `i >= j + 1`.
    let (pc, nc) = if constant > 0 {
        (constant, 0)
    } else {
        (0, constant.saturating_neg())
    };
    let op = match c.kind {
        ConstraintKind::Ineq => ">=",
        ConstraintKind::Eq => "=",
    };
    format!(
        "{} {} {}",
        terms_to_alpha(&pos[np..], &pos[..np], pc, dims, params),
        op,
        terms_to_alpha(&neg[np..], &neg[..np], nc, dims, params)
    )
}

/// An affine expression as `2*i - j + N - 1` (`0` when zero).
pub fn aff_to_alpha(a: &Aff, dims: &[String], params: &[String]) -> String {
    terms_to_alpha(
        a.dim_coeffs(),
        a.param_coeffs(),
        a.constant_term(),
        dims,
        params,
    )
}

/// `Σ idx[k]·dims[k] + Σ par[p]·params[p] + c` as `2*i - j + N - 1`.
fn terms_to_alpha(idx: &[i64], par: &[i64], c: i64, dims: &[String], params: &[String]) -> String {
    let mut terms: Vec<(i64, String)> = Vec::new();
    for (k, &v) in idx.iter().enumerate() {
        if v != 0 {
            let name = dims.get(k).cloned().unwrap_or_else(|| format!("i{k}"));
            terms.push((v, name));
        }
    }
    for (k, &v) in par.iter().enumerate() {
        if v != 0 {
            let name = params.get(k).cloned().unwrap_or_else(|| format!("p{k}"));
            terms.push((v, name));
        }
    }
    let mut out = String::new();
    for (v, name) in &terms {
        let mag = v.unsigned_abs();
        let term = if mag == 1 {
            name.clone()
        } else {
            format!("{mag}*{name}")
        };
        if out.is_empty() {
            if *v < 0 {
                out.push('-');
            }
            out.push_str(&term);
        } else {
            out.push_str(if *v < 0 { " - " } else { " + " });
            out.push_str(&term);
        }
    }
    if out.is_empty() {
        out = c.to_string();
    } else if c != 0 {
        out.push_str(if c < 0 { " - " } else { " + " });
        out.push_str(&c.unsigned_abs().to_string());
    }
    out
}

/// Printing context of an expression: the names of its index space.
struct Ctx<'a> {
    program: &'a Program,
    system: &'a System,
    names: Vec<String>,
}

/// Binding strength of printed forms (higher binds tighter): binary
/// operators bind as [`BinOp::precedence`] says (the parser's), between
/// the forms that extend to the right and the prefix operators.
const PREC_LOW: u8 = 0; // if, restriction (extend to the right)
const PREC_ADD: u8 = BinOp::Add.precedence();
const PREC_UNARY: u8 = BinOp::Mul.precedence() + 1;
const PREC_ATOM: u8 = PREC_UNARY + 1;

fn builtin_name(b: Builtin) -> &'static str {
    match b {
        Builtin::Exp => "exp",
        Builtin::Log => "log",
        Builtin::Sqrt => "sqrt",
        Builtin::Abs => "abs",
        Builtin::Pow => "pow",
        Builtin::Floor => "floor",
        Builtin::Ceil => "ceil",
        Builtin::Lgamma => "lgamma",
        Builtin::ToFloat => "float",
        Builtin::ToInt => "int",
        Builtin::Max => "max",
        Builtin::Min => "min",
    }
}

/// A float literal that re-parses to the same value (always with a `.` or
/// an exponent so that it stays a float).
fn float_literal(v: f64) -> String {
    let s = format!("{v:?}");
    if s.contains('.') || s.contains('e') || s.contains("inf") || s.contains("NaN") {
        s
    } else {
        format!("{s}.0")
    }
}

impl Ctx<'_> {
    fn with_names(&self, names: Vec<String>) -> Ctx<'_> {
        Ctx {
            program: self.program,
            system: self.system,
            names,
        }
    }

    fn paren(s: String, prec: u8, min: u8) -> String {
        if prec < min {
            format!("({s})")
        } else {
            s
        }
    }

    /// Prints `e` so that it binds at least as tightly as `min`.
    fn expr(&self, e: &Expr, min: u8) -> String {
        let params = &self.system.params;
        match &e.kind {
            // i64::MIN has no literal form: write it as arithmetic, which
            // lowering folds back into the constant.
            ExprKind::IntConst(i64::MIN) => "(-9223372036854775807 - 1)".to_string(),
            // Non-finite floats (identities of max/min) have no literal
            // form either: IEEE division produces them.
            ExprKind::FloatConst(v) if v.is_nan() => "(0.0 / 0.0)".to_string(),
            ExprKind::FloatConst(v) if v.is_infinite() && *v > 0.0 => "(1.0 / 0.0)".to_string(),
            ExprKind::FloatConst(v) if v.is_infinite() => "(-1.0 / 0.0)".to_string(),
            ExprKind::IntConst(v) => Self::paren(
                v.to_string(),
                if *v < 0 { PREC_UNARY } else { PREC_ATOM },
                min,
            ),
            ExprKind::FloatConst(v) => {
                let s = float_literal(*v);
                let p = if s.starts_with('-') {
                    PREC_UNARY
                } else {
                    PREC_ATOM
                };
                Self::paren(s, p, min)
            }
            ExprKind::BoolConst(b) => b.to_string(),
            ExprKind::Index(a) => {
                let s = aff_to_alpha(a, &self.names, params);
                let coeffs = &a.row()[..a.row().len() - 1];
                let nterms = coeffs.iter().filter(|&&v| v != 0).count()
                    + usize::from(a.constant_term() != 0);
                let simple = nterms <= 1 && coeffs.iter().all(|&v| v == 0 || v == 1);
                Self::paren(s, if simple { PREC_ATOM } else { PREC_ADD }, min)
            }
            ExprKind::Read { var, access } => {
                let name = &self.system.vars[*var].name;
                if access.n_out() == 0 {
                    name.clone()
                } else {
                    let idx: Vec<String> = access
                        .affs()
                        .iter()
                        .map(|a| aff_to_alpha(a, &self.names, params))
                        .collect();
                    format!("{}[{}]", name, idx.join(", "))
                }
            }
            ExprKind::IndirectRead { var, indices } => {
                let name = &self.system.vars[*var].name;
                let idx: Vec<String> = indices.iter().map(|i| self.expr(i, PREC_LOW)).collect();
                format!("{}[{}]", name, idx.join(", "))
            }
            // The source form: lowering wraps the guard's value again
            // (`ir::lower::selection`), so the round trip keeps the check.
            ExprKind::Selection(x) => self.expr(&x.value, min),
            ExprKind::Unary(UnOp::Neg, x) => {
                Self::paren(format!("-{}", self.expr(x, PREC_UNARY)), PREC_UNARY, min)
            }
            ExprKind::Unary(UnOp::Not, x) => {
                Self::paren(format!("not {}", self.expr(x, PREC_UNARY)), PREC_UNARY, min)
            }
            ExprKind::Binary(op, l, r) => {
                let p = op.precedence();
                // Left-associative: the right operand must bind tighter.
                // Comparisons do not chain in expressions: both sides tighter.
                let lmin = if op.is_comparison() { p + 1 } else { p };
                let s = format!(
                    "{} {} {}",
                    self.expr(l, lmin),
                    op.symbol(),
                    self.expr(r, p + 1)
                );
                Self::paren(s, p, min)
            }
            ExprKind::If(c, a, b) => {
                let s = format!(
                    "if {} then {} else {}",
                    self.expr(c, PREC_LOW),
                    self.expr(a, PREC_LOW),
                    self.expr(b, PREC_LOW)
                );
                Self::paren(s, PREC_LOW, min)
            }
            ExprKind::Case(pieces) => {
                let items: Vec<String> = pieces
                    .iter()
                    .map(|(d, x)| {
                        format!(
                            "{{: {}}} : {};",
                            constraints_to_alpha(d, params),
                            self.expr(x, PREC_LOW)
                        )
                    })
                    .collect();
                format!("case {{ {} }}", items.join(" "))
            }
            ExprKind::Restrict(d, x) => {
                let s = format!(
                    "{{: {}}} : {}",
                    constraints_to_alpha(d, params),
                    self.expr(x, PREC_LOW)
                );
                Self::paren(s, PREC_LOW, min)
            }
            ExprKind::Reduce(r) => self.reduction(r),
            ExprKind::Builtin(b, args) => self.call(builtin_name(*b), args),
            ExprKind::External(k, args) => {
                let name = self
                    .program
                    .externals
                    .get(*k)
                    .map(|e| e.name.as_str())
                    .unwrap_or("external?");
                self.call(name, args)
            }
            ExprKind::Random(d, args, _) => self.call(d.name(), args),
            ExprKind::Categorical(c) => {
                let mut names = self.names.clone();
                names.push(c.index.clone());
                let inner = self.with_names(names);
                format!(
                    "categorical([{}], {{: {}}} : {})",
                    c.index,
                    constraints_to_alpha(&c.domain, params),
                    inner.expr(&c.weight, PREC_LOW)
                )
            }
        }
    }

    fn call(&self, name: &str, args: &[Expr]) -> String {
        let a: Vec<String> = args.iter().map(|x| self.expr(x, PREC_LOW)).collect();
        format!("{}({})", name, a.join(", "))
    }

    /// `reduce(op, [k, l], {: D} : body)` when the projection keeps the outer
    /// indices as a prefix of the body space with the same names; otherwise
    /// `reduce(op, (i, k -> i), {: D} : body)`.
    fn reduction(&self, r: &Reduction) -> String {
        let params = &self.system.params;
        let n_outer = r.proj.n_out();
        let dims = r.dims();
        let prefix_form = dims.len() >= n_outer
            && dims[..n_outer] == self.names[..]
            && r.proj.affs().iter().enumerate().all(|(k, a)| {
                a.constant_term() == 0
                    && a.param_coeffs().iter().all(|&v| v == 0)
                    && a.dim_coeffs()
                        .iter()
                        .enumerate()
                        .all(|(m, &v)| v == i64::from(m == k))
            });
        let head = if prefix_form {
            format!("[{}]", dims[n_outer..].join(", "))
        } else {
            let outs: Vec<String> = r
                .proj
                .affs()
                .iter()
                .map(|a| aff_to_alpha(a, dims, params))
                .collect();
            format!("({} -> {})", dims.join(", "), outs.join(", "))
        };
        let inner = self.with_names(dims.to_vec());
        let dom = constraints_to_alpha(&r.body_domain, params);
        format!(
            "reduce({}, {}, {{: {}}} : {})",
            r.op.symbol(),
            head,
            dom,
            inner.expr(&r.body, PREC_LOW)
        )
    }
}

/// A copy of the program with every span set to the default, for comparing
/// IR values structurally (round-trip tests).
pub fn without_spans(p: &Program) -> Program {
    let mut p = p.clone();
    for e in &mut p.externals {
        e.span = Default::default();
    }
    for s in &mut p.systems {
        s.span = Default::default();
        for v in &mut s.vars {
            v.span = Default::default();
        }
        for eq in &mut s.equations {
            eq.span = Default::default();
            eq.expr.clear_spans();
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `idx·x + par·p + constant >= 0` as a row `[par, idx, constant]`.
    fn ge(idx: Vec<i64>, par: Vec<i64>, constant: i64) -> Constraint {
        let mut row = par;
        row.extend(idx);
        row.push(constant);
        Constraint::ineq(row)
    }

    #[test]
    fn constraints_put_negative_terms_on_the_right() {
        let dims = vec!["i".to_string(), "j".to_string()];
        let params = vec!["N".to_string()];
        assert_eq!(
            constraint_to_alpha(&ge(vec![1, -1], vec![0], 3), &dims, &params),
            "i + 3 >= j"
        );
        assert_eq!(
            constraint_to_alpha(&ge(vec![-1, 0], vec![1], -1), &dims, &params),
            "N >= i + 1"
        );
        assert_eq!(
            constraint_to_alpha(&ge(vec![1, 0], vec![0], 0), &dims, &params),
            "i >= 0"
        );
        assert_eq!(
            constraint_to_alpha(&ge(vec![2, 0], vec![0], -5), &dims, &params),
            "2*i >= 5"
        );
    }

    #[test]
    fn domains_print_with_tuple_and_or() {
        let d = Set::from_constraints(
            Space::set::<String, _>(&[], &["i"]),
            vec![vec![ge(vec![-1], vec![], 2)], vec![ge(vec![1], vec![], -8)]],
        )
        .unwrap();
        assert_eq!(domain_to_alpha(&d, &[]), "{[i] : 2 >= i or i >= 8}");
        let none = Space::set::<String, String>(&[], &[]);
        assert_eq!(domain_to_alpha(&Set::empty(none.clone()), &[]), "{: 0 = 1}");
        assert_eq!(domain_to_alpha(&Set::universe(none), &[]), "{: }");
    }

    #[test]
    fn floats_stay_floats() {
        assert_eq!(float_literal(1.0), "1.0");
        assert_eq!(float_literal(0.1), "0.1");
        assert_eq!(float_literal(1e-7), "1e-7");
        assert_eq!(float_literal(-2.5), "-2.5");
    }
}
