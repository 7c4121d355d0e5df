//! The deterministic C-like printer of a loop program
//! ([`Function::to_c`], [`Function::affine_to_c`]; `Display`), used by
//! `alphac emit` and the snapshot tests: its output is part of the
//! observable behaviour.
//!
//! Must not know about: the static check, the scanner, the JIT.

use super::*;
use crate::poly::Constraint;
use std::fmt::{self, Write as _};

impl Function {
    /// Deterministic C-like rendering of the function (for humans and
    /// snapshot tests). Bounds print as `max(...)`/`min(...)` of
    /// `ceild(e, d)`/`floord(e, d)`; array arguments show each dimension
    /// as `[lower : extent]`.
    pub fn to_c(&self) -> String {
        let mut p = Printer {
            f: self,
            out: String::new(),
        };
        p.function();
        p.out
    }

    fn sym_name(&self, s: Sym) -> String {
        match s {
            Sym::Loop(v) => self
                .loop_vars
                .get(v.0)
                .cloned()
                .unwrap_or_else(|| format!("?loop{}", v.0)),
            Sym::Param(p) => self
                .params
                .get(p)
                .cloned()
                .unwrap_or_else(|| format!("?param{p}")),
        }
    }

    /// `c0 + c1*x1 + ...` in C syntax.
    pub fn affine_to_c(&self, e: &Affine) -> String {
        let mut s = String::new();
        for &(sym, c) in &e.terms {
            if c == 0 {
                continue;
            }
            let name = self.sym_name(sym);
            let mag = c.unsigned_abs();
            if s.is_empty() {
                if c < 0 {
                    s.push('-');
                }
            } else {
                s.push_str(if c < 0 { " - " } else { " + " });
            }
            if mag != 1 {
                let _ = write!(s, "{mag}*");
            }
            s.push_str(&name);
        }
        if s.is_empty() {
            let _ = write!(s, "{}", e.constant);
        } else if e.constant != 0 {
            let _ = write!(
                s,
                " {} {}",
                if e.constant < 0 { '-' } else { '+' },
                e.constant.unsigned_abs()
            );
        }
        s
    }

    fn bound_to_c(&self, b: &Bound, lower: bool) -> String {
        let parts: Vec<String> = b
            .terms
            .iter()
            .map(|t| {
                let e = self.affine_to_c(&t.expr);
                if t.div == 1 {
                    e
                } else {
                    format!("{}({e}, {})", if lower { "ceild" } else { "floord" }, t.div)
                }
            })
            .collect();
        if parts.len() == 1 {
            parts.into_iter().next().unwrap_or_default()
        } else {
            format!(
                "{}({})",
                if lower { "max" } else { "min" },
                parts.join(", ")
            )
        }
    }
}

/// `s` without one pair of parentheses enclosing all of it.
fn strip_outer_parens(s: &str) -> &str {
    let Some(inner) = s.strip_prefix('(').and_then(|t| t.strip_suffix(')')) else {
        return s;
    };
    let mut depth = 0i32;
    for ch in inner.chars() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return s; // the first '(' closes before the end
                }
            }
            _ => {}
        }
    }
    inner
}

struct Printer<'a> {
    f: &'a Function,
    out: String,
}

fn c_type(t: ElemType) -> &'static str {
    match t {
        ElemType::Int => "long",
        ElemType::Float => "double",
        ElemType::Bool => "bool",
    }
}

impl Printer<'_> {
    fn line(&mut self, depth: usize, text: &str) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// `c ≥ 0` / `c = 0` for a constraint row over `[params, dims, 1]`
    /// (`n_par` parameters): the dimension terms first, then the
    /// parameters, then the constant.
    fn constraint_text(&self, c: &Constraint, n_par: usize, dims: &[String]) -> String {
        let row = &c.row;
        let n = row.len().saturating_sub(1);
        let np = n_par.min(n);
        let constant = row.get(n).copied().unwrap_or(0);
        let mut terms = Vec::new();
        for (k, &co) in row[np..n].iter().enumerate() {
            let name = dims.get(k).cloned().unwrap_or_else(|| format!("d{k}"));
            terms.push((name, co));
        }
        for (k, &co) in row[..np].iter().enumerate() {
            terms.push((self.f.sym_name(Sym::Param(k)), co));
        }
        let mut s = String::new();
        for (name, co) in terms {
            if co == 0 {
                continue;
            }
            if s.is_empty() {
                if co < 0 {
                    s.push('-');
                }
            } else {
                s.push_str(if co < 0 { " - " } else { " + " });
            }
            if co.unsigned_abs() != 1 {
                let _ = write!(s, "{}*", co.unsigned_abs());
            }
            s.push_str(&name);
        }
        if s.is_empty() {
            let _ = write!(s, "{constant}");
        } else if constant != 0 {
            let _ = write!(
                s,
                " {} {}",
                if constant < 0 { '-' } else { '+' },
                constant.unsigned_abs()
            );
        }
        let rel = match c.kind {
            ConstraintKind::Ineq => ">=",
            ConstraintKind::Eq => "==",
        };
        format!("{s} {rel} 0")
    }

    fn domain_text(&self, d: &Set) -> String {
        let pieces: Vec<String> = d
            .pieces()
            .iter()
            .map(|p| {
                let cs = p.constraints();
                if cs.is_empty() {
                    "true".to_string()
                } else {
                    cs.iter()
                        .map(|c| self.constraint_text(c, d.n_params(), d.dims()))
                        .collect::<Vec<_>>()
                        .join(" && ")
                }
            })
            .collect();
        if pieces.is_empty() {
            "false".to_string()
        } else {
            pieces.join(" || ")
        }
    }

    fn function(&mut self) {
        let f = self.f;
        let params: Vec<String> = f.params.iter().map(|p| format!("long {p}")).collect();
        let arrays: Vec<String> = f
            .arrays
            .iter()
            .map(|a| {
                let mut s = format!("{} {}", c_type(a.ty), a.name);
                for d in &a.dims {
                    let lo = f.affine_to_c(&d.lower);
                    let ext = f.affine_to_c(&d.extent);
                    let _ = write!(s, "[{lo} : {ext}]");
                }
                s
            })
            .collect();
        let mut sig = format!("void {}(", f.name);
        sig.push_str(
            &params
                .into_iter()
                .chain(arrays)
                .collect::<Vec<_>>()
                .join(", "),
        );
        sig.push_str(") {");
        if !f
            .context
            .pieces()
            .iter()
            .all(|p| p.eqs().is_empty() && p.ineqs().is_empty())
        {
            let ctx = self.domain_text(&f.context);
            self.line(0, &format!("// requires {ctx}"));
        }
        for a in &f.arrays {
            if let Some(d) = &a.domain {
                let t = self.domain_text(d);
                self.line(0, &format!("// domain of {}: {t}", a.name));
            }
        }
        for e in &f.externals {
            let args = vec!["double"; e.arity].join(", ");
            self.line(0, &format!("extern double {}({args});", e.name));
        }
        self.line(0, &sig);
        for l in &f.locals {
            let init = match l.ty {
                ElemType::Int => "0",
                ElemType::Float => "0.0",
                ElemType::Bool => "false",
            };
            self.line(1, &format!("{} {} = {init};", c_type(l.ty), l.name));
        }
        for s in &f.body {
            self.stmt(s, 1);
        }
        self.line(0, "}");
    }

    fn access(&self, array: ArrayId, index: &[Expr]) -> String {
        let mut s = self
            .f
            .arrays
            .get(array)
            .map(|a| a.name.clone())
            .unwrap_or_else(|| format!("?array{array}"));
        for e in index {
            let _ = write!(s, "[{}]", self.expr(e));
        }
        s
    }

    fn stmt(&mut self, s: &Stmt, depth: usize) {
        match s {
            Stmt::For {
                var,
                lower,
                upper,
                body,
            } => {
                let v = self.f.sym_name(Sym::Loop(*var));
                let lo = self.f.bound_to_c(lower, true);
                let hi = self.f.bound_to_c(upper, false);
                self.line(depth, &format!("for ({v} = {lo}; {v} <= {hi}; {v}++) {{"));
                for s in body {
                    self.stmt(s, depth + 1);
                }
                self.line(depth, "}");
            }
            Stmt::If { cond, then, els } => {
                let c = self.expr(cond);
                let c = strip_outer_parens(&c);
                self.line(depth, &format!("if ({c}) {{"));
                for s in then {
                    self.stmt(s, depth + 1);
                }
                if !els.is_empty() {
                    self.line(depth, "} else {");
                    for s in els {
                        self.stmt(s, depth + 1);
                    }
                }
                self.line(depth, "}");
            }
            Stmt::Assign {
                array,
                index,
                value,
            } => {
                let t = format!("{} = {};", self.access(*array, index), self.expr(value));
                self.line(depth, &t);
            }
            Stmt::Accumulate {
                array,
                index,
                op,
                value,
            } => {
                let a = self.access(*array, index);
                let v = self.expr(value);
                let t = match op {
                    ReduceOp::Add => format!("{a} += {v};"),
                    ReduceOp::Mul => format!("{a} *= {v};"),
                    ReduceOp::And => format!("{a} = {a} && {v};"),
                    ReduceOp::Or => format!("{a} = {a} || {v};"),
                    ReduceOp::Max => format!("{a} = max({a}, {v});"),
                    ReduceOp::Min => format!("{a} = min({a}, {v});"),
                };
                self.line(depth, &t);
            }
            Stmt::SetLocal { local, value } => {
                let name = self
                    .f
                    .locals
                    .get(*local)
                    .map(|l| l.name.clone())
                    .unwrap_or_else(|| format!("?local{local}"));
                let t = format!("{name} = {};", self.expr(value));
                self.line(depth, &t);
            }
            Stmt::Block(b) => {
                self.line(depth, "{");
                for s in b {
                    self.stmt(s, depth + 1);
                }
                self.line(depth, "}");
            }
        }
    }

    fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Int(v) => v.to_string(),
            Expr::Float(v) => format!("{v:?}"),
            Expr::Bool(b) => b.to_string(),
            Expr::Aff(a) => {
                let s = self.f.affine_to_c(a);
                if a.terms.iter().filter(|t| t.1 != 0).count() + usize::from(a.constant != 0) > 1 {
                    format!("({s})")
                } else {
                    s
                }
            }
            Expr::Local(l) => self
                .f
                .locals
                .get(*l)
                .map(|l| l.name.clone())
                .unwrap_or_else(|| format!("?local{l}")),
            Expr::Load { array, index } => self.access(*array, index),
            Expr::Unary(UnOp::Neg, a) => format!("-{}", self.expr(a)),
            Expr::Unary(UnOp::Not, a) => format!("!{}", self.expr(a)),
            Expr::Binary(op, a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                let inf = |o: &str| format!("({x} {o} {y})");
                match op {
                    BinOp::Add => inf("+"),
                    BinOp::Sub => inf("-"),
                    BinOp::Mul => inf("*"),
                    BinOp::Div => inf("/"),
                    BinOp::Rem => inf("%"),
                    BinOp::Eq => inf("=="),
                    BinOp::Ne => inf("!="),
                    BinOp::Lt => inf("<"),
                    BinOp::Le => inf("<="),
                    BinOp::Gt => inf(">"),
                    BinOp::Ge => inf(">="),
                    BinOp::And => inf("&&"),
                    BinOp::Or => inf("||"),
                    BinOp::FloorDiv => format!("floord({x}, {y})"),
                    BinOp::CeilDiv => format!("ceild({x}, {y})"),
                    BinOp::Mod => format!("mod({x}, {y})"),
                    BinOp::Min => format!("min({x}, {y})"),
                    BinOp::Max => format!("max({x}, {y})"),
                }
            }
            Expr::Select(c, a, b) => {
                format!("({} ? {} : {})", self.expr(c), self.expr(a), self.expr(b))
            }
            Expr::Cast(c, a) => {
                let t = match c {
                    Cast::IntToFloat | Cast::BoolToFloat => "double",
                    Cast::FloatToInt | Cast::BoolToInt => "long",
                };
                format!("({t}){}", self.expr(a))
            }
            Expr::Math(f, args) => {
                let name = match f {
                    MathFn::Exp => "exp",
                    MathFn::Log => "log",
                    MathFn::Sqrt => "sqrt",
                    MathFn::Pow => "pow",
                    MathFn::Lgamma => "lgamma",
                    MathFn::Floor => "floor",
                    MathFn::Ceil => "ceil",
                    MathFn::Abs => "abs",
                };
                let a: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("{name}({})", a.join(", "))
            }
            Expr::Random {
                dist,
                args,
                seed,
                site,
                point,
            } => {
                let a: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                let p: Vec<String> = point.iter().map(|a| self.expr(a)).collect();
                format!(
                    "{}({}; seed {}, site {site}, point [{}])",
                    dist.name(),
                    a.join(", "),
                    self.expr(seed),
                    p.join(", ")
                )
            }
            Expr::Categorical(c) => {
                let v = self
                    .f
                    .loop_vars
                    .get(c.var.0)
                    .cloned()
                    .unwrap_or_else(|| format!("?loop{}", c.var.0));
                let p: Vec<String> = c.point.iter().map(|a| self.expr(a)).collect();
                format!(
                    "categorical({v} = {} .. {} if {} : {}; seed {}, site {}, point [{}])",
                    self.f.bound_to_c(&c.lower, true),
                    self.f.bound_to_c(&c.upper, false),
                    strip_outer_parens(&self.expr(&c.cond)),
                    strip_outer_parens(&self.expr(&c.weight)),
                    self.expr(&c.seed),
                    c.site,
                    p.join(", ")
                )
            }
            Expr::External { index, args } => {
                let name = self
                    .f
                    .externals
                    .get(*index)
                    .map(|e| e.name.clone())
                    .unwrap_or_else(|| format!("?external{index}"));
                let a: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("{name}({})", a.join(", "))
            }
        }
    }
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_c())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outer_parens_are_stripped_only_when_enclosing() {
        assert_eq!(strip_outer_parens("(a < b)"), "a < b");
        assert_eq!(strip_outer_parens("(a) + (b)"), "(a) + (b)");
        assert_eq!(strip_outer_parens("((a) + (b))"), "(a) + (b)");
        assert_eq!(strip_outer_parens("a"), "a");
    }

    #[test]
    fn affine_printing_and_evaluation() {
        let f = Function {
            name: "f".into(),
            params: vec!["N".into()],
            context: Set::universe(crate::poly::Space::set(&["N"], &[] as &[&str])),
            arrays: vec![],
            externals: vec![],
            loop_vars: vec!["i".into(), "j".into()],
            locals: vec![],
            body: vec![],
        };
        let e = Affine::cst(-3)
            .plus(Sym::Loop(LoopVar(0)), -1)
            .plus(Sym::Param(0), 2)
            .plus(Sym::Loop(LoopVar(1)), 0);
        assert_eq!(f.affine_to_c(&e), "-i + 2*N - 3");
        assert_eq!(e.eval(&[4, 100], &[10]), Some(13));
        assert_eq!(f.affine_to_c(&Affine::cst(0)), "0");
        let big = Affine::cst(i64::MAX).plus(Sym::Param(0), 1);
        assert_eq!(big.eval(&[], &[1]), None);
        assert!(!e.is_param_only());
    }
}
