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
            Sym::Loop(v) => name_or_placeholder(&self.loop_vars, v.0, String::as_str, "loop"),
            Sym::Param(p) => name_or_placeholder(&self.params, p, String::as_str, "param"),
        }
    }

    fn local_name(&self, l: LocalId) -> String {
        name_or_placeholder(&self.locals, l, |l| &l.name, "local")
    }

    /// `c0 + c1*x1 + ...` in C syntax.
    pub fn affine_to_c(&self, e: &Affine) -> String {
        let terms = e.terms.iter().copied();
        linear_text(terms, e.constant, |sym| self.sym_name(sym))
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

/// `c_1*x_1 + ... + c_n*x_n + c` in C syntax, in the order of `terms`
/// (`(symbol, coefficient)`, named by `name`): zero coefficients are
/// skipped, coefficients `±1` are not written, signs are written as
/// binary `+`/`-` (a leading `-` for the first term), and the constant is
/// written alone when there is no term, else only when non-zero.
fn linear_text<S>(
    terms: impl Iterator<Item = (S, i64)>,
    constant: i64,
    name: impl Fn(S) -> String,
) -> String {
    let mut s = String::new();
    for (sym, c) in terms {
        if c == 0 {
            continue;
        }
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
        s.push_str(&name(sym));
    }
    if s.is_empty() {
        let _ = write!(s, "{constant}");
    } else if constant != 0 {
        let sign = if constant < 0 { '-' } else { '+' };
        let _ = write!(s, " {sign} {}", constant.unsigned_abs());
    }
    s
}

/// The name of `items[i]` (read by `name`), or `?{what}{i}` when there is
/// no such item (a malformed program still prints).
fn name_or_placeholder<T>(items: &[T], i: usize, name: fn(&T) -> &str, what: &str) -> String {
    items
        .get(i)
        .map(|x| name(x).to_string())
        .unwrap_or_else(|| format!("?{what}{i}"))
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
        // Dimension `k` is column `np + k`, parameter `k` column `k`.
        let dim_terms = row[np..n].iter().enumerate().map(|(k, &co)| (np + k, co));
        let param_terms = row[..np].iter().copied().enumerate();
        let s = linear_text(dim_terms.chain(param_terms), constant, |col| {
            if col < np {
                self.f.sym_name(Sym::Param(col))
            } else {
                let k = col - np;
                dims.get(k).cloned().unwrap_or_else(|| format!("d{k}"))
            }
        });
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
        let mut s = name_or_placeholder(&self.f.arrays, array, |a| &a.name, "array");
        for e in index {
            let _ = write!(s, "[{}]", self.expr(e));
        }
        s
    }

    fn stmt(&mut self, s: &Stmt, depth: usize) {
        match s {
            Stmt::For(l) => {
                let v = self.f.sym_name(Sym::Loop(l.var));
                let lo = self.f.bound_to_c(&l.lower, true);
                let hi = self.f.bound_to_c(&l.upper, false);
                if l.parallel {
                    self.line(depth, "#pragma parallel");
                }
                self.line(depth, &format!("for ({v} = {lo}; {v} <= {hi}; {v}++) {{"));
                for s in &l.body {
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
            Stmt::Accumulate(acc) => {
                let a = self.access(acc.array, &acc.index);
                let v = self.expr(&acc.value);
                let t = match acc.op {
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
                let name = self.f.local_name(*local);
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
            Stmt::Bind(b) => {
                // `if (lo <= hi && guard) { v = value; if (lo <= v && v <=
                // hi) { body }}`: valid C with the binding's semantics.
                let v = self.f.sym_name(Sym::Loop(b.var));
                let lo = self.f.bound_to_c(&b.lower, true);
                let hi = self.f.bound_to_c(&b.upper, false);
                // The guard's top-level `&&` chain, flattened (`&&` is
                // lazy left to right, so the order says it all).
                let mut guard = String::new();
                let mut chain = vec![&b.guard];
                while let Some(c) = chain.pop() {
                    match c {
                        Expr::Binary(BinOp::And, x, y) => chain.extend([&**y, &**x]),
                        Expr::Bool(true) => {}
                        c => {
                            let _ = write!(guard, " && {}", self.expr(c));
                        }
                    }
                }
                let value = self.expr(&b.value);
                let value = strip_outer_parens(&value);
                // A range known non-empty is not tested.
                let cond = match (b.nonempty, guard.strip_prefix(" && ")) {
                    (false, _) => format!("if ({lo} <= {hi}{guard}) "),
                    (true, Some(g)) => format!("if ({g}) "),
                    (true, None) => String::new(),
                };
                self.line(
                    depth,
                    &format!("{cond}{{ {v} = {value}; if ({lo} <= {v} && {v} <= {hi}) {{"),
                );
                for s in &b.body {
                    self.stmt(s, depth + 1);
                }
                self.line(depth, "}}");
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
            Expr::Local(l) => self.f.local_name(*l),
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
            Expr::Selection(s) => format!(
                "selected({}, {}, {})",
                self.expr(&s.value),
                self.expr(&s.lower),
                self.expr(&s.upper)
            ),
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
            Expr::Random(r) => {
                let a: Vec<String> = r.args.iter().map(|a| self.expr(a)).collect();
                let p: Vec<String> = r.point.iter().map(|a| self.expr(a)).collect();
                format!(
                    "{}({}; seed {}, site {}, point [{}])",
                    r.dist.name(),
                    a.join(", "),
                    self.expr(&r.seed),
                    r.site,
                    p.join(", ")
                )
            }
            Expr::Categorical(c) => {
                let v = self.f.sym_name(Sym::Loop(c.var));
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
                let name = name_or_placeholder(&self.f.externals, *index, |e| &e.name, "external");
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
