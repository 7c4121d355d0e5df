//! The `alphac calc` evaluator: a small expression language over isl-notation
//! sets and maps.
//!
//! Owns: parsing of calculator expressions (calls, isl literals, name lists
//! `[i, j]`, parameter bindings `N=5`), their evaluation with the `poly`
//! library (through its public API), and the textual output. Never panics;
//! every failure is a [`CalcError`] with a byte position into the
//! expression.
//!
//! Must not know about: the rest of the CLI (it only calls [`eval`] and
//! prints), the `.alpha` language, `poly`'s internals.
//!
//! # Language
//!
//! `EXPR` is an isl set or map (`[N] -> { [i] : 0 <= i < N }`,
//! `{ [i] -> [i + 1] }`) or a call `f(EXPR, ...)`. Arguments are split at
//! top-level commas (not inside `()`, `[]`, `{}`). Functions:
//!
//! | call | result |
//! |------|--------|
//! | `intersect(A, B)`, `union(A, B)`, `subtract(A, B)` | set or map (both the same kind) |
//! | `is_empty(A)`, `is_subset(A, B)`, `is_equal(A, B)` | `true` / `false` |
//! | `lexmin(A)`, `lexmax(A)` | set: parametric integer lexicographic optimum |
//! | `sample(A)` | one integer point `(p, x)` as a set/map with equalities (the empty set if none) |
//! | `project_out(A, [i, j])` | set: the named dimensions eliminated (exact integer projection, or an error) |
//! | `hull(A)` | set or map: the affine hull |
//! | `dim(A)` | integer: dimension (`-1` when empty; map: input + output) |
//! | `faces(A)` | the faces of a set, one per line (see `faces`) |
//! | `apply(A, M)` | set: image of `A` by `M` |
//! | `reverse(M)`, `domain(M)`, `range(M)` | map / set / set |
//! | `compose(M1, M2)` | map: isl's `apply_range`, `M1` first then `M2` |
//! | `points(A, N=5, M=3)` | the integer points, one per line `[1, 2]`, lexicographic |
//! | `count(A, N=5)` | integer: the number of integer points (map: pairs) |
//! | `complexity(A)` | asymptotic size, e.g. `O(N^2*K)` (see `complexity`) |
//!
//! Every parameter of `A` must be bound in `points`/`count`; bindings of
//! unknown names are errors; sets whose bounding box holds more than
//! [`MAX_POINTS`] points are refused. Binary operations first align the
//! parameters by name (those of the first operand, then the new ones of the
//! second), as isl does.

use std::fmt;

use crate::poly::complexity::complexity;
use crate::poly::{set_faces, BasicSet, Map, PolyError, Set};

/// A calculator error: a message and the byte offset in the expression it
/// refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalcError {
    pub msg: String,
    pub pos: usize,
}

impl CalcError {
    fn new(pos: usize, msg: impl Into<String>) -> CalcError {
        CalcError {
            msg: msg.into(),
            pos,
        }
    }

    /// The 1-based column (in characters) of `pos` in `expr`.
    pub fn column(&self, expr: &str) -> usize {
        let mut p = self.pos.min(expr.len());
        while !expr.is_char_boundary(p) {
            p -= 1;
        }
        expr[..p].chars().count() + 1
    }

    /// One-line rendering `error: <msg> at column <c>` for `expr`.
    pub fn render(&self, expr: &str) -> String {
        format!("error: {} at column {}", self.msg, self.column(expr))
    }
}

/// `error: <msg> at column <pos + 1>` (byte-based; see [`CalcError::render`]
/// for a character column).
impl fmt::Display for CalcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {} at column {}", self.msg, self.pos + 1)
    }
}

impl std::error::Error for CalcError {}

type CResult<T> = Result<T, CalcError>;

/// Maximum nesting of calls and brackets.
const MAX_DEPTH: usize = 64;

/// `points` and `count` refuse sets whose bounding box (for the given
/// parameter values) holds more integer points than this.
pub const MAX_POINTS: u128 = 10_000_000;

/// Evaluates a calculator expression and returns its printed result (sets
/// and maps in isl notation, booleans `true`/`false`, integers, one line per
/// face or point).
pub fn eval(expr: &str) -> Result<String, CalcError> {
    let node = parse_node(expr, 0, expr.len(), 0)?;
    let v = eval_node(expr, &node)?;
    Ok(match v {
        Value::Set(s) => s.to_string(),
        Value::Map(m) => m.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Text(t) => t,
    })
}

// ---- syntax ----

#[derive(Debug, Clone)]
enum Node {
    /// `name(args)`; `pos` = position of the name.
    Call {
        name: String,
        pos: usize,
        args: Vec<Node>,
    },
    /// isl text `src[start..end]`.
    Isl { start: usize, end: usize },
    /// `[a, b]`: names with their positions.
    List {
        names: Vec<(String, usize)>,
        pos: usize,
    },
    /// `name = value`.
    Bind {
        name: String,
        value: i64,
        pos: usize,
    },
}

impl Node {
    fn pos(&self) -> usize {
        match self {
            Node::Call { pos, .. } | Node::List { pos, .. } | Node::Bind { pos, .. } => *pos,
            Node::Isl { start, .. } => *start,
        }
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}
fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '\''
}

/// Trims `src[start..end]` (whitespace), returning the new bounds.
fn trim(src: &str, start: usize, end: usize) -> (usize, usize) {
    let s = &src[start..end];
    let lead = s.len() - s.trim_start().len();
    let tail = s.len() - s.trim_end().len();
    if lead == s.len() {
        return (start, start);
    }
    (start + lead, end - tail)
}

/// The identifier at `src[start..end]`'s beginning: its end.
fn ident_end(src: &str, start: usize, end: usize) -> usize {
    let mut e = start;
    for (k, c) in src[start..end].char_indices() {
        if (k == 0 && is_ident_start(c)) || (k > 0 && is_ident_char(c)) {
            e = start + k + c.len_utf8();
        } else {
            break;
        }
    }
    e
}

/// Position of the bracket matching the opening one at `open`, checking the
/// nesting of `()[]{}` in between; `None` if unbalanced before `end`.
fn matching(src: &str, open: usize, end: usize) -> CResult<usize> {
    let mut stack: Vec<(char, usize)> = Vec::new();
    for (k, c) in src[open..end].char_indices() {
        let p = open + k;
        match c {
            '(' | '[' | '{' => {
                stack.push((c, p));
                if stack.len() > MAX_DEPTH * 4 {
                    return Err(CalcError::new(p, "brackets nested too deeply"));
                }
            }
            ')' | ']' | '}' => {
                let want = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                match stack.pop() {
                    Some((o, _)) if o == want => {
                        if stack.is_empty() {
                            return Ok(p);
                        }
                    }
                    _ => return Err(CalcError::new(p, format!("unbalanced '{c}'"))),
                }
            }
            _ => {}
        }
    }
    let p = stack.last().map_or(open, |&(_, p)| p);
    Err(CalcError::new(p, "unclosed bracket"))
}

/// Splits `src[start..end]` at top-level commas: the bounds of each part.
fn split_args(src: &str, start: usize, end: usize) -> CResult<Vec<(usize, usize)>> {
    let mut parts = Vec::new();
    let mut depth: Vec<char> = Vec::new();
    let mut from = start;
    for (k, c) in src[start..end].char_indices() {
        let p = start + k;
        match c {
            '(' | '[' | '{' => depth.push(c),
            ')' | ']' | '}' if depth.pop().is_none() => {
                return Err(CalcError::new(p, format!("unbalanced '{c}'")));
            }
            ',' if depth.is_empty() => {
                parts.push((from, p));
                from = p + 1;
            }
            _ => {}
        }
    }
    parts.push((from, end));
    Ok(parts)
}

/// Parses the expression in `src[start..end]`.
fn parse_node(src: &str, start: usize, end: usize, depth: usize) -> CResult<Node> {
    if depth > MAX_DEPTH {
        return Err(CalcError::new(start, "expression nested too deeply"));
    }
    let (s, e) = trim(src, start, end);
    if s == e {
        return Err(CalcError::new(s, "expected an expression"));
    }
    let first = src[s..e].chars().next().unwrap_or(' ');
    if is_ident_start(first) {
        let ie = ident_end(src, s, e);
        let name = src[s..ie].to_string();
        let (rs, re) = trim(src, ie, e);
        if rs < re && src[rs..].starts_with('(') {
            let close = matching(src, rs, re)?;
            if close + 1 != re {
                return Err(CalcError::new(close + 1, "unexpected text after ')'"));
            }
            let mut args = Vec::new();
            let (is, ie2) = trim(src, rs + 1, close);
            if is < ie2 {
                for (a, b) in split_args(src, rs + 1, close)? {
                    args.push(parse_node(src, a, b, depth + 1)?);
                }
            }
            return Ok(Node::Call { name, pos: s, args });
        }
        if rs < re && src[rs..].starts_with('=') {
            let (vs, ve) = trim(src, rs + 1, re);
            let text = &src[vs..ve];
            let value: i64 = text.parse().map_err(|_| {
                CalcError::new(vs, format!("expected an integer value for '{name}'"))
            })?;
            return Ok(Node::Bind {
                name,
                value,
                pos: s,
            });
        }
        return Err(CalcError::new(
            s,
            format!("expected a call '{name}(...)', a set or a map"),
        ));
    }
    if first == '[' {
        let close = matching(src, s, e)?;
        let (rs, re) = trim(src, close + 1, e);
        if rs == re {
            // a name list `[i, j]`
            let mut names = Vec::new();
            let (is, ie) = trim(src, s + 1, close);
            if is < ie {
                for (a, b) in split_args(src, s + 1, close)? {
                    let (a, b) = trim(src, a, b);
                    if a == b || ident_end(src, a, b) != b {
                        return Err(CalcError::new(a, "expected a dimension name"));
                    }
                    names.push((src[a..b].to_string(), a));
                }
            }
            return Ok(Node::List { names, pos: s });
        }
    } else if first != '{' {
        return Err(CalcError::new(
            s,
            format!("unexpected '{first}': expected a call, a set or a map"),
        ));
    }
    Ok(Node::Isl { start: s, end: e })
}

// ---- values and evaluation ----

#[derive(Debug, Clone)]
enum Value {
    Set(Set),
    Map(Map),
    Bool(bool),
    Int(i128),
    Text(String),
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Set(_) => "a set",
            Value::Map(_) => "a map",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Text(_) => "text",
        }
    }
}

/// A library error as a calculator error at `pos`.
fn lib_err(pos: usize, what: &str, e: PolyError) -> CalcError {
    CalcError::new(pos, format!("{what}: {e}"))
}

/// Parses isl text as a set, or else as a map.
fn parse_isl(src: &str, start: usize, end: usize) -> CResult<Value> {
    let text = &src[start..end];
    let at = |e: PolyError| match e {
        PolyError::Parse { pos, msg } => CalcError::new(start + pos.min(text.len()), msg),
        other => CalcError::new(start, other.to_string()),
    };
    match Set::parse(text) {
        Ok(s) => Ok(Value::Set(s)),
        Err(PolyError::Parse { msg, .. }) if msg.starts_with("expected a set, found a map") => {
            Map::parse(text).map(Value::Map).map_err(at)
        }
        Err(e) => Err(at(e)),
    }
}

/// The two operands over the same parameter list: the parameters of `x`,
/// then those of `y` not in `x` (isl's alignment by name).
fn align(x: Value, y: Value) -> Result<(Value, Value), PolyError> {
    let params_of = |v: &Value| match v {
        Value::Set(s) => s.space().params.to_vec(),
        Value::Map(m) => m.space().params.to_vec(),
        _ => Vec::new(),
    };
    let (px, py) = (params_of(&x), params_of(&y));
    if px == py {
        return Ok((x, y));
    }
    let mut all = px;
    for p in py {
        if !all.contains(&p) {
            all.push(p);
        }
    }
    let al = |v: Value| -> Result<Value, PolyError> {
        Ok(match v {
            Value::Set(s) => Value::Set(s.align_params(&all)?),
            Value::Map(m) => Value::Map(m.align_params(&all)?),
            other => other,
        })
    };
    Ok((al(x)?, al(y)?))
}

struct Args<'a> {
    src: &'a str,
    fname: &'a str,
    nodes: &'a [Node],
}

impl Args<'_> {
    fn value(&self, k: usize) -> CResult<(Value, usize)> {
        let n = &self.nodes[k];
        Ok((eval_node(self.src, n)?, n.pos()))
    }
    /// Argument `k`, which must be `what` (`accept` returns it, or `None`).
    fn typed<T>(
        &self,
        k: usize,
        what: &str,
        accept: impl FnOnce(Value) -> Option<T>,
    ) -> CResult<T> {
        let (v, p) = self.value(k)?;
        let kind = v.kind();
        accept(v).ok_or_else(|| {
            CalcError::new(
                p,
                format!(
                    "{}: argument {} must be {what}, found {kind}",
                    self.fname,
                    k + 1,
                ),
            )
        })
    }
    fn set(&self, k: usize) -> CResult<Set> {
        self.typed(k, "a set", |v| match v {
            Value::Set(s) => Some(s),
            _ => None,
        })
    }
    fn map(&self, k: usize) -> CResult<Map> {
        self.typed(k, "a map", |v| match v {
            Value::Map(m) => Some(m),
            _ => None,
        })
    }
    /// A set or a map (as its internal set, with the map's space to read
    /// the result back).
    fn set_or_map(&self, k: usize) -> CResult<Value> {
        self.typed(k, "a set or a map", |v| match v {
            v @ (Value::Set(_) | Value::Map(_)) => Some(v),
            _ => None,
        })
    }
}

fn arity(name: &str, pos: usize, args: &[Node], want: usize) -> CResult<()> {
    if args.len() != want {
        return Err(CalcError::new(
            pos,
            format!(
                "{name} expects {want} argument{}, found {}",
                if want == 1 { "" } else { "s" },
                args.len()
            ),
        ));
    }
    Ok(())
}

fn eval_node(src: &str, node: &Node) -> CResult<Value> {
    match node {
        Node::Isl { start, end } => parse_isl(src, *start, *end),
        Node::List { pos, .. } => Err(CalcError::new(
            *pos,
            "a name list is only allowed as the second argument of project_out",
        )),
        Node::Bind { pos, .. } => Err(CalcError::new(
            *pos,
            "a parameter binding is only allowed in points(...) and count(...)",
        )),
        Node::Call { name, pos, args } => call(src, name, *pos, args),
    }
}

/// The binary operation `$name` (`intersect`, `union`, `subtract`,
/// `is_subset`, else `is_equal`) of two sets or two maps, which have these
/// methods under the same names; a set or map result is wrapped by `$wrap`,
/// errors mapped by `$le`.
macro_rules! binary_op {
    ($name:expr, $x:expr, $y:expr, $wrap:path, $le:expr) => {
        match $name {
            "intersect" => $wrap($x.intersect(&$y).map_err($le)?),
            "union" => $wrap($x.union(&$y).map_err($le)?),
            "subtract" => $wrap($x.subtract(&$y).map_err($le)?),
            "is_subset" => Value::Bool($x.is_subset(&$y).map_err($le)?),
            _ => Value::Bool($x.is_equal(&$y).map_err($le)?),
        }
    };
}

fn call(src: &str, name: &str, pos: usize, nodes: &[Node]) -> CResult<Value> {
    let a = Args {
        src,
        fname: name,
        nodes,
    };
    let le = |e: PolyError| lib_err(pos, name, e);
    match name {
        "intersect" | "union" | "subtract" | "is_subset" | "is_equal" => {
            arity(name, pos, nodes, 2)?;
            let x = a.set_or_map(0)?;
            let y = a.set_or_map(1)?;
            let (x, y) = align(x, y).map_err(le)?;
            match (x, y) {
                // As in isl: a parameter-only set intersects the
                // parameters of the other argument.
                (Value::Set(x), Value::Set(y))
                    if name == "intersect" && (x.n_dims() == 0) != (y.n_dims() == 0) =>
                {
                    let (set, ctx) = if y.n_dims() == 0 { (x, y) } else { (y, x) };
                    Ok(Value::Set(set.intersect_params(&ctx).map_err(le)?))
                }
                (Value::Set(x), Value::Set(y)) => Ok(binary_op!(name, x, y, Value::Set, le)),
                (Value::Map(x), Value::Map(y)) => Ok(binary_op!(name, x, y, Value::Map, le)),
                (x, y) => Err(CalcError::new(
                    nodes[1].pos(),
                    format!(
                        "{name}: argument 2 must be {} like argument 1, found {}",
                        x.kind(),
                        y.kind()
                    ),
                )),
            }
        }
        "is_empty" => {
            arity(name, pos, nodes, 1)?;
            match a.set_or_map(0)? {
                Value::Map(m) => Ok(Value::Bool(m.is_empty().map_err(le)?)),
                Value::Set(s) => Ok(Value::Bool(s.is_empty().map_err(le)?)),
                _ => Err(CalcError::new(pos, "is_empty: internal kind error")),
            }
        }
        "lexmin" | "lexmax" => {
            arity(name, pos, nodes, 1)?;
            let s = a.set(0)?;
            let r = if name == "lexmin" {
                s.lexmin()
            } else {
                s.lexmax()
            };
            Ok(Value::Set(r.map_err(le)?))
        }
        "sample" => {
            arity(name, pos, nodes, 1)?;
            let (set, map_space) = match a.set_or_map(0)? {
                Value::Map(m) => (m.as_set().clone(), Some(m.space().clone())),
                Value::Set(s) => (s, None),
                _ => return Err(CalcError::new(pos, "sample: internal kind error")),
            };
            let space = set.space().clone();
            let out = match set.sample().map_err(le)? {
                None => Set::empty(space.clone()),
                Some(pt) => {
                    let n = space.n_vars();
                    let mut eqs = Vec::with_capacity(n);
                    for (k, v) in pt.iter().enumerate() {
                        let mut r = vec![0i64; n + 1];
                        r[k] = 1;
                        r[n] = v.checked_neg().ok_or_else(|| le(PolyError::Overflow))?;
                        eqs.push(r);
                    }
                    let b = BasicSet::from_rows(space.clone(), eqs, vec![]).map_err(le)?;
                    Set::from_basic(b)
                }
            };
            match map_space {
                Some(ms) => Ok(Value::Map(Map::from_set_in(ms, &out).map_err(le)?)),
                None => Ok(Value::Set(out)),
            }
        }
        "project_out" => {
            arity(name, pos, nodes, 2)?;
            let mut s = a.set(0)?;
            let Node::List { names, .. } = &nodes[1] else {
                return Err(CalcError::new(
                    nodes[1].pos(),
                    "project_out: argument 2 must be a list of dimension names [i, j]",
                ));
            };
            for (n, npos) in names {
                let Some(k) = s.space().output.dims.iter().position(|d| d == n) else {
                    return Err(CalcError::new(
                        *npos,
                        format!("project_out: the set has no dimension '{n}'"),
                    ));
                };
                s = s.project_out_exact(k, 1).map_err(le)?;
            }
            Ok(Value::Set(s))
        }
        "hull" => {
            arity(name, pos, nodes, 1)?;
            match a.set_or_map(0)? {
                Value::Set(s) => Ok(Value::Set(Set::from_basic(s.affine_hull().map_err(le)?))),
                Value::Map(m) => {
                    let h = Set::from_basic(m.as_set().affine_hull().map_err(le)?);
                    Ok(Value::Map(
                        Map::from_set_in(m.space().clone(), &h).map_err(le)?,
                    ))
                }
                _ => Err(CalcError::new(pos, "hull: internal kind error")),
            }
        }
        "dim" => {
            arity(name, pos, nodes, 1)?;
            let d = match a.set_or_map(0)? {
                Value::Set(s) => s.dimension(),
                Value::Map(m) => m.as_set().dimension(),
                _ => return Err(CalcError::new(pos, "dim: internal kind error")),
            };
            Ok(Value::Int(d.map_err(le)? as i128))
        }
        "faces" => {
            arity(name, pos, nodes, 1)?;
            let s = a.set(0)?;
            let fs = set_faces(&s).map_err(le)?;
            let lines: Vec<String> = fs.iter().map(|f| f.to_string()).collect();
            Ok(Value::Text(lines.join("\n")))
        }
        "apply" => {
            arity(name, pos, nodes, 2)?;
            let s = a.set(0)?;
            let m = a.map(1)?;
            let (Value::Set(s), Value::Map(m)) = align(Value::Set(s), Value::Map(m)).map_err(le)?
            else {
                return Err(CalcError::new(pos, "apply: internal kind error"));
            };
            Ok(Value::Set(s.apply(&m).map_err(le)?))
        }
        "reverse" => {
            arity(name, pos, nodes, 1)?;
            Ok(Value::Map(a.map(0)?.reverse().map_err(le)?))
        }
        "domain" => {
            arity(name, pos, nodes, 1)?;
            Ok(Value::Set(a.map(0)?.domain().map_err(le)?))
        }
        "range" => {
            arity(name, pos, nodes, 1)?;
            Ok(Value::Set(a.map(0)?.range().map_err(le)?))
        }
        "compose" => {
            arity(name, pos, nodes, 2)?;
            let m1 = a.map(0)?;
            let m2 = a.map(1)?;
            let (Value::Map(m1), Value::Map(m2)) =
                align(Value::Map(m1), Value::Map(m2)).map_err(le)?
            else {
                return Err(CalcError::new(pos, "compose: internal kind error"));
            };
            Ok(Value::Map(m1.apply_range(&m2).map_err(le)?))
        }
        "points" | "count" => {
            if nodes.is_empty() {
                return Err(CalcError::new(
                    pos,
                    format!("{name} expects a set and parameter values, found no argument"),
                ));
            }
            let (set, is_map) = match a.set_or_map(0)? {
                Value::Set(s) => (s, false),
                Value::Map(m) => (m.as_set().clone(), true),
                _ => return Err(CalcError::new(pos, "points: internal kind error")),
            };
            if is_map && name == "points" {
                return Err(CalcError::new(
                    nodes[0].pos(),
                    "points: argument 1 must be a set, found a map",
                ));
            }
            let params = &set.space().params;
            let mut vals: Vec<Option<i64>> = vec![None; params.len()];
            for n in &nodes[1..] {
                let Node::Bind {
                    name: pn,
                    value,
                    pos: bpos,
                } = n
                else {
                    return Err(CalcError::new(
                        n.pos(),
                        format!("{name}: expected a parameter binding NAME=value"),
                    ));
                };
                let Some(k) = params.iter().position(|p| p == pn) else {
                    return Err(CalcError::new(
                        *bpos,
                        format!("{name}: the set has no parameter '{pn}'"),
                    ));
                };
                if vals[k].is_some() {
                    return Err(CalcError::new(
                        *bpos,
                        format!("{name}: parameter '{pn}' bound twice"),
                    ));
                }
                vals[k] = Some(*value);
            }
            let missing: Vec<&str> = params
                .iter()
                .zip(&vals)
                .filter(|(_, v)| v.is_none())
                .map(|(p, _)| p.as_str())
                .collect();
            if !missing.is_empty() {
                return Err(CalcError::new(
                    pos,
                    format!("{name}: missing parameter value(s): {}", missing.join(", ")),
                ));
            }
            let vals: Vec<i64> = vals.into_iter().flatten().collect();
            if let Some(bb) = set.bounding_box(&vals).map_err(le)? {
                let mut size: u128 = 1;
                for (lo, hi) in bb {
                    let ext = (hi as i128 - lo as i128 + 1).max(0) as u128;
                    size = size.saturating_mul(ext);
                }
                if size > MAX_POINTS {
                    return Err(CalcError::new(
                        pos,
                        format!(
                            "{name}: the bounding box has {size} points, more than the \
                             enumeration limit {MAX_POINTS}"
                        ),
                    ));
                }
            }
            let pts = set.points(&vals).map_err(le)?;
            if name == "count" {
                return Ok(Value::Int(pts.len() as i128));
            }
            let lines: Vec<String> = pts
                .iter()
                .map(|p| {
                    let xs: Vec<String> = p.iter().map(|v| v.to_string()).collect();
                    format!("[{}]", xs.join(", "))
                })
                .collect();
            Ok(Value::Text(lines.join("\n")))
        }
        "complexity" => {
            arity(name, pos, nodes, 1)?;
            let s = match a.set_or_map(0)? {
                Value::Set(s) => s,
                Value::Map(m) => m.as_set().clone(),
                _ => return Err(CalcError::new(pos, "complexity: internal kind error")),
            };
            Ok(Value::Text(complexity(&s).map_err(le)?.to_string()))
        }
        _ => Err(CalcError::new(pos, format!("unknown function '{name}'"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_calls() {
        assert_eq!(
            eval("count([N] -> { [i, j] : 0 <= j <= i < N }, N=5)").unwrap(),
            "15"
        );
        assert_eq!(eval("is_empty({ [i] : i > 0 and i < 0 })").unwrap(), "true");
        let e = eval("foo({ [i] })").unwrap_err();
        assert_eq!(e.pos, 0);
    }
}
