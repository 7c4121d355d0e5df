//! Test helpers for the scheduler tests: a tiny constraint notation for
//! building `solver::System`s by hand. Used as a module (`#[path]`) by the
//! other `schedule_*` tests; as its own test target it only tests itself.

#![allow(dead_code)]

use alphac::poly::solver::System;
use alphac::schedule::Model;

/// Parse a linear expression over `vars` into a row (coefficients then
/// constant). Terms: `3`, `i`, `2i`, `2*i`, joined by `+` / `-`.
pub fn lin(vars: &[&str], s: &str) -> Vec<i64> {
    let n = vars.len();
    let mut row = vec![0i64; n + 1];
    let s = s.replace(' ', "");
    let s = s.replace('-', "+-");
    for term in s.split('+').filter(|t| !t.is_empty()) {
        let (sign, t) = match term.strip_prefix('-') {
            Some(rest) => (-1, rest),
            None => (1, term),
        };
        let t = t.replace('*', "");
        let digits: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
        let name = &t[digits.len()..];
        let coef: i64 = if digits.is_empty() {
            1
        } else {
            digits.parse().unwrap()
        };
        if name.is_empty() {
            row[n] += sign * coef;
        } else {
            let k = vars
                .iter()
                .position(|v| *v == name)
                .unwrap_or_else(|| panic!("unknown variable {name} in {s}"));
            row[k] += sign * coef;
        }
    }
    row
}

fn sub(a: &[i64], b: &[i64]) -> Vec<i64> {
    a.iter().zip(b).map(|(x, y)| x - y).collect()
}

/// Build a system over `vars` from `;`-separated chains such as
/// `0 <= i < N`, `j = i + 1`, `i >= j`.
pub fn sys(vars: &[&str], cons: &str) -> System {
    let n = vars.len();
    let mut s = System::new(n);
    for chain in cons.split(';').map(str::trim).filter(|c| !c.is_empty()) {
        // Tokenize into expressions and operators.
        let mut exprs = Vec::new();
        let mut ops = Vec::new();
        let mut cur = String::new();
        let cs: Vec<char> = chain.chars().collect();
        let mut i = 0;
        while i < cs.len() {
            let c = cs[i];
            let two = if i + 1 < cs.len() {
                format!("{}{}", c, cs[i + 1])
            } else {
                String::new()
            };
            if two == "<=" || two == ">=" {
                exprs.push(cur.clone());
                cur.clear();
                ops.push(two);
                i += 2;
            } else if c == '<' || c == '>' || c == '=' {
                exprs.push(cur.clone());
                cur.clear();
                ops.push(c.to_string());
                i += 1;
            } else {
                cur.push(c);
                i += 1;
            }
        }
        exprs.push(cur);
        for (k, op) in ops.iter().enumerate() {
            let a = lin(vars, &exprs[k]);
            let b = lin(vars, &exprs[k + 1]);
            match op.as_str() {
                "<=" => s.add_ineq(sub(&b, &a)),
                ">=" => s.add_ineq(sub(&a, &b)),
                "<" => {
                    let mut r = sub(&b, &a);
                    r[n] -= 1;
                    s.add_ineq(r)
                }
                ">" => {
                    let mut r = sub(&a, &b);
                    r[n] -= 1;
                    s.add_ineq(r)
                }
                "=" => s.add_eq(sub(&a, &b)),
                _ => unreachable!(),
            }
        }
    }
    s
}

/// A model builder with named iterators.
pub struct Builder {
    pub model: Model,
    pub params: Vec<String>,
    pub iters: Vec<Vec<String>>,
}

impl Builder {
    pub fn new(params: &[&str]) -> Self {
        Builder {
            model: Model::new(params.len()),
            params: params.iter().map(|s| s.to_string()).collect(),
            iters: Vec::new(),
        }
    }

    /// `stmt("S", &["i", "j"], "0 <= i < N; 0 <= j < N")`.
    pub fn stmt(&mut self, name: &str, iters: &[&str], dom: &str) -> usize {
        let mut vars: Vec<&str> = iters.to_vec();
        vars.extend(self.params.iter().map(|s| s.as_str()));
        let d = sys(&vars, dom);
        self.iters
            .push(iters.iter().map(|s| s.to_string()).collect());
        self.model.add_statement(name, iters.len(), d)
    }

    /// A dependence piece; source iterators are written with a trailing
    /// `'` is not supported, so give explicit names: `dep(s, t, &["i0","j0"],
    /// &["i","j"], "i = i0; j = j0 + 1")`.
    pub fn dep(
        &mut self,
        src: usize,
        tgt: usize,
        src_names: &[&str],
        tgt_names: &[&str],
        cons: &str,
    ) {
        let mut vars: Vec<&str> = src_names.to_vec();
        vars.extend_from_slice(tgt_names);
        vars.extend(self.params.iter().map(|s| s.as_str()));
        let p = sys(&vars, cons);
        self.model.add_dep(src, tgt, p);
    }

    /// Render a schedule row of statement `s` as text, e.g. `2t + i + 1`.
    pub fn row_text(&self, s: usize, row: &[i64]) -> String {
        let mut names: Vec<&str> = self.iters[s].iter().map(|x| x.as_str()).collect();
        names.extend(self.params.iter().map(|x| x.as_str()));
        let mut out = String::new();
        for (k, name) in names.iter().enumerate() {
            let c = row[k];
            if c == 0 {
                continue;
            }
            if !out.is_empty() {
                out.push_str(if c > 0 { " + " } else { " - " });
            } else if c < 0 {
                out.push('-');
            }
            if c.abs() != 1 {
                out.push_str(&c.abs().to_string());
            }
            out.push_str(name);
        }
        let c = row[names.len()];
        if c != 0 || out.is_empty() {
            if out.is_empty() {
                out = c.to_string();
            } else {
                out.push_str(if c > 0 { " + " } else { " - " });
                out.push_str(&c.abs().to_string());
            }
        }
        out
    }

    /// All rows of statement `s` as text.
    pub fn rows_text(&self, sched: &alphac::schedule::Schedule, s: usize) -> Vec<String> {
        sched.rows[s].iter().map(|r| self.row_text(s, r)).collect()
    }
}

#[test]
fn parser_builds_rows() {
    let s = sys(&["i", "j", "N"], "0 <= i < N; j = 2i + 1");
    assert_eq!(s.ineqs, vec![vec![1, 0, 0, 0], vec![-1, 0, 1, -1]]);
    assert_eq!(s.eqs, vec![vec![-2, 1, 0, -1]]);
}
