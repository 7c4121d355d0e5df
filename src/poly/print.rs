//! Printing in isl notation.
//!
//! Owns: the text form of expressions, constraints, tuples and unions.
//! Output is deterministic and re-parsable: variable names are made unique
//! and valid (invalid, generated or clashing dimension names become
//! `i0`, `o1`, ... with primes appended if needed); a constraint is written
//! around its last variable (`j <= i`, `i < N`, `2j = i`), equalities
//! first. Normalization (simplification) is done by the callers (`Display`
//! impls in `set`, `map`, ...), not here.
//!
//! Must not know about: the solver, parsing.

use std::collections::HashSet;

use super::basic_set::last_nonzero;
use super::constraint::EqsIneqsRef;
use super::space::{Space, Tuple};

fn valid_ident(s: &str) -> bool {
    let mut cs = s.chars();
    match cs.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    cs.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '\'')
        && !matches!(s, "and" | "or" | "true" | "false")
}

/// Printable names for every variable of the space (parameters, input,
/// output), unique and valid identifiers.
pub fn var_names(space: &Space) -> Vec<String> {
    let mut used: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(space.n_vars());
    let take = |cand: &str, prefix: &str, k: usize, used: &mut HashSet<String>| {
        let mut name = if valid_ident(cand) && !used.contains(cand) {
            cand.to_string()
        } else {
            format!("{prefix}{k}")
        };
        while used.contains(&name) {
            name.push('\'');
        }
        used.insert(name.clone());
        name
    };
    for (k, p) in space.params.iter().enumerate() {
        out.push(take(p, "p", k, &mut used));
    }
    if let Some(t) = &space.input {
        for (k, d) in t.dims.iter().enumerate() {
            out.push(take(d, "i", k, &mut used));
        }
    }
    let prefix = if space.is_map() { "o" } else { "i" };
    for (k, d) in space.output.dims.iter().enumerate() {
        out.push(take(d, prefix, k, &mut used));
    }
    out
}

fn term(out: &mut String, first: bool, c: i128, name: &str) {
    if c == 0 {
        return;
    }
    if first {
        if c < 0 {
            out.push('-');
        }
    } else if c < 0 {
        out.push_str(" - ");
    } else {
        out.push_str(" + ");
    }
    let a = c.abs();
    if name.is_empty() {
        out.push_str(&a.to_string());
    } else {
        if a != 1 {
            out.push_str(&a.to_string());
        }
        out.push_str(name);
    }
}

/// `sum_k c_k * names_k + constant`, terms in variable order, constant
/// last (`0` when all are zero). `coeffs` has one more entry than `names`.
pub fn fmt_expr(coeffs: &[i128], names: &[String]) -> String {
    let mut s = String::new();
    let mut first = true;
    for (c, n) in coeffs.iter().zip(names) {
        if *c != 0 {
            term(&mut s, first, *c, n);
            first = false;
        }
    }
    let c = coeffs[coeffs.len() - 1];
    if c != 0 || first {
        if first && c == 0 {
            s.push('0');
        } else {
            term(&mut s, first, c, "");
        }
    }
    s
}

/// A constraint row (`= 0` or `>= 0`) written around its last variable.
pub fn fmt_constraint(row: &[i64], eq: bool, names: &[String]) -> String {
    let n = row.len() - 1;
    let Some(m) = last_nonzero(row) else {
        let holds = if eq { row[n] == 0 } else { row[n] >= 0 };
        return if holds { "true".into() } else { "false".into() };
    };
    let mut r: Vec<i128> = row.iter().map(|&c| c as i128).collect();
    let a = r[m];
    if eq {
        if a < 0 {
            r.iter_mut().for_each(|c| *c = -*c);
        }
        let lhs = fmt_expr(&unit_at(&r, m, n), names);
        let rest: Vec<i128> = rest_neg(&r, m);
        return format!("{lhs} = {}", fmt_expr(&rest, names));
    }
    if a > 0 {
        // a x_m >= -(rest)
        let lhs = fmt_expr(&unit_at(&r, m, n), names);
        format!("{lhs} >= {}", fmt_expr(&rest_neg(&r, m), names))
    } else {
        // (-a) x_m <= rest ; with a negative constant c: < rest + 1
        let mut neg: Vec<i128> = r.iter().map(|c| -c).collect();
        let lhs = fmt_expr(&unit_at(&neg, m, n), names);
        neg[m] = 0;
        let mut rhs: Vec<i128> = neg.iter().map(|c| -c).collect();
        rhs[m] = 0;
        if rhs[n] < 0 {
            rhs[n] += 1;
            format!("{lhs} < {}", fmt_expr(&rhs, names))
        } else {
            format!("{lhs} <= {}", fmt_expr(&rhs, names))
        }
    }
}

fn unit_at(r: &[i128], m: usize, n: usize) -> Vec<i128> {
    let mut v = vec![0; n + 1];
    v[m] = r[m];
    v
}

fn rest_neg(r: &[i128], m: usize) -> Vec<i128> {
    let mut v: Vec<i128> = r.iter().map(|c| -c).collect();
    v[m] = 0;
    v
}

fn fmt_tuple(t: &Tuple, names: &[String]) -> String {
    format!(
        "{}[{}]",
        t.name.clone().unwrap_or_default(),
        names.join(", ")
    )
}

/// `[p] -> ` (empty when there are no parameters).
pub fn fmt_params(space: &Space, names: &[String]) -> String {
    if space.params.is_empty() {
        String::new()
    } else {
        format!("[{}] -> ", names[..space.n_params()].join(", "))
    }
}

/// The tuple part of a piece: `S[i, j]` or `[i] -> [o0]`.
pub fn fmt_tuples(space: &Space, names: &[String]) -> String {
    let np = space.n_params();
    let ni = space.n_in();
    match &space.input {
        Some(t) => format!(
            "{} -> {}",
            fmt_tuple(t, &names[np..np + ni]),
            fmt_tuple(&space.output, &names[np + ni..])
        ),
        None => fmt_tuple(&space.output, &names[np..]),
    }
}

/// For a map piece: output dimensions defined by an equality with a unit
/// coefficient on them (as their last variable) and appearing in no other
/// row, printed as the expression in the output tuple (`[i] -> [i - 1]`).
/// Returns the tuple text and the indices of the equalities used.
fn piece_tuples(
    space: &Space,
    names: &[String],
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
) -> (String, Vec<usize>) {
    let np = space.n_params();
    let ni = space.n_in();
    let Some(input) = &space.input else {
        return set_point_tuple(space, names, eqs, ineqs)
            .unwrap_or_else(|| (fmt_tuples(space, names), Vec::new()));
    };
    let mut used = Vec::new();
    let mut entries: Vec<String> = names[np + ni..].to_vec();
    for (ei, e) in eqs.iter().enumerate() {
        let Some(m) = last_nonzero(e) else { continue };
        if m < np + ni || e[m].unsigned_abs() != 1 {
            continue;
        }
        let elsewhere = eqs.iter().enumerate().any(|(k, r)| k != ei && r[m] != 0)
            || ineqs.iter().any(|r| r[m] != 0);
        if elsewhere {
            continue;
        }
        // e[m] x_m + rest = 0  =>  x_m = -rest / e[m]
        let s = -(e[m] as i128);
        let mut c: Vec<i128> = e.iter().map(|&v| v as i128 * s).collect();
        c[m] = 0;
        entries[m - np - ni] = fmt_expr(&c, names);
        used.push(ei);
    }
    let text = format!(
        "{} -> {}[{}]",
        fmt_tuple(input, &names[np..np + ni]),
        space.output.name.clone().unwrap_or_default(),
        entries.join(", ")
    );
    (text, used)
}

/// For a set piece whose every dimension is fixed by an equality with a
/// unit coefficient on it and no other dimension (`x_m = f(params)`), the
/// tuple of values as isl prints it: `{ [2, 1] }`, `[N] -> { [N, 0] }`.
/// `None` when some dimension is not fixed that way (the tuple of names
/// is printed instead, as it is when another constraint still mentions a
/// dimension). Returns the tuple and the equalities used.
fn set_point_tuple(
    space: &Space,
    names: &[String],
    eqs: &[Vec<i64>],
    ineqs: &[Vec<i64>],
) -> Option<(String, Vec<usize>)> {
    let np = space.n_params();
    let nd = space.n_dims();
    if nd == 0 {
        return None;
    }
    let mut entries: Vec<Option<String>> = vec![None; nd];
    let mut used = Vec::new();
    for (ei, e) in eqs.iter().enumerate() {
        let dims: Vec<usize> = (np..np + nd).filter(|&k| e[k] != 0).collect();
        let [m] = dims[..] else { continue };
        if e[m].unsigned_abs() != 1 || entries[m - np].is_some() {
            continue;
        }
        let s = -(e[m] as i128);
        let mut c: Vec<i128> = e.iter().map(|&v| v as i128 * s).collect();
        c[m] = 0;
        entries[m - np] = Some(fmt_expr(&c, names));
        used.push(ei);
    }
    let mentions_dims = |r: &Vec<i64>| r[np..np + nd].iter().any(|&c| c != 0);
    let others = eqs
        .iter()
        .enumerate()
        .filter(|(k, _)| !used.contains(k))
        .map(|(_, r)| r)
        .chain(ineqs);
    if others.into_iter().any(mentions_dims) {
        return None;
    }
    let entries: Option<Vec<String>> = entries.into_iter().collect();
    let text = format!(
        "{}[{}]",
        space.output.name.clone().unwrap_or_default(),
        entries?.join(", ")
    );
    Some((text, used))
}

/// `[p] -> { tuples : c and c; tuples : ... }` for the given pieces, each a
/// pair (equalities, inequalities); no pieces prints `tuples : false`.
pub fn fmt_union(space: &Space, pieces: &[EqsIneqsRef<'_>]) -> String {
    let names = var_names(space);
    let mut parts = Vec::new();
    if pieces.is_empty() {
        parts.push(format!("{} : false", fmt_tuples(space, &names)));
    }
    for (eqs, ineqs) in pieces {
        let (tup, used) = piece_tuples(space, &names, eqs, ineqs);
        let cs: Vec<String> = eqs
            .iter()
            .enumerate()
            .filter(|(k, _)| !used.contains(k))
            .map(|(_, r)| fmt_constraint(r, true, &names))
            .chain(ineqs.iter().map(|r| fmt_constraint(r, false, &names)))
            .collect();
        if cs.is_empty() {
            parts.push(tup);
        } else {
            parts.push(format!("{tup} : {}", cs.join(" and ")));
        }
    }
    format!("{}{{ {} }}", fmt_params(space, &names), parts.join("; "))
}

// ---- Display of the polyhedral types ----

use std::fmt;

use super::basic_set::BasicSet;
use super::map::{BasicMap, Map};
use super::multi_aff::{Aff, MultiAff};
use super::set::Set;

fn fmt_set(s: &Set) -> String {
    // normalized form; if the solver fails (overflow), the raw pieces
    let s = s.simplify().unwrap_or_else(|_| s.clone());
    let pieces: Vec<EqsIneqsRef<'_>> = s
        .pieces
        .iter()
        .map(|b| (b.eqs.as_slice(), b.ineqs.as_slice()))
        .collect();
    fmt_union(&s.space, &pieces)
}

/// Normalized isl notation (see `Set::simplify`): deterministic, and
/// `parse(print(s))` prints the same.
impl fmt::Display for Set {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fmt_set(self))
    }
}

impl fmt::Display for BasicSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fmt_set(&Set::from_basic(self.clone())))
    }
}

impl fmt::Display for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fmt_set(self.as_set()))
    }
}

impl fmt::Display for BasicMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fmt_set(&Set::from_basic(self.as_basic_set().clone())))
    }
}

fn fmt_function(space: &Space, rows: &[Vec<i64>]) -> String {
    let dom = space.domain();
    let names = var_names(&dom);
    let exprs: Vec<String> = rows
        .iter()
        .map(|r| {
            let c: Vec<i128> = r.iter().map(|&v| v as i128).collect();
            fmt_expr(&c, &names)
        })
        .collect();
    format!(
        "{}{{ {} -> {}[{}] }}",
        fmt_params(&dom, &names),
        fmt_tuples(&dom, &names),
        space.output.name.clone().unwrap_or_default(),
        exprs.join(", ")
    )
}

/// `[N] -> { [i, j] -> [i - 1, j] }`.
impl fmt::Display for MultiAff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fmt_function(self.space(), self.rows()))
    }
}

/// `[N] -> { [i, j] -> [i + N] }`.
impl fmt::Display for Aff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let space = Space {
            params: self.space().params.clone(),
            input: Some(self.space().output.clone()),
            output: Tuple::default(),
        };
        f.write_str(&fmt_function(&space, &[self.row().to_vec()]))
    }
}
