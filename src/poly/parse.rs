//! Parsing of isl notation into rows.
//!
//! Owns: the lexer and recursive-descent parser for
//! `[N, M] -> { S[i, j] -> T[i, 0] : 0 <= i < N and j != i; ... }`:
//! parameters, tuples (named or not, entries that are fresh names or affine
//! expressions), unions (`;`), `and`/`&&`, `or`/`||`, `!=`, chains
//! (`0 <= i < j <= N`), lists (`0 <= i, j < N`), `2i` and `2*i`,
//! parentheses, unary minus, `=`/`==`, `true`/`false`, empty constraint
//! lists (`{ [] : }`) and parameter-only pieces (`{ : N > 0 }`).
//! Errors are `PolyError::Parse { pos, msg }` with a byte offset.
//!
//! Produces plain rows (see `constraint`) per piece; `set`, `map` and
//! `multi_aff` turn them into their types. Must not know about the solver.

use super::constraint::dnf_and;
use super::error::{PolyError, PolyResult};
use super::space::Tuple;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Int(i128),
    LBrack,
    RBrack,
    LBrace,
    RBrace,
    LParen,
    RParen,
    Comma,
    Semi,
    Colon,
    Arrow,
    Plus,
    Minus,
    Star,
    Le,
    Lt,
    Ge,
    Gt,
    Eq,
    Ne,
    And,
    Or,
    True,
    False,
    Eof,
}

fn perr<T>(pos: usize, msg: impl Into<String>) -> PolyResult<T> {
    Err(PolyError::Parse {
        pos,
        msg: msg.into(),
    })
}

fn lex(s: &str) -> PolyResult<Vec<(Tok, usize)>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'\'') {
                i += 1;
            }
            let w = &s[start..i];
            let t = match w {
                "and" => Tok::And,
                "or" => Tok::Or,
                "true" => Tok::True,
                "false" => Tok::False,
                _ => Tok::Ident(w.to_string()),
            };
            out.push((t, start));
            continue;
        }
        if c.is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let v: i128 = match s[start..i].parse::<i128>() {
                Ok(v) if v <= i64::MAX as i128 => v,
                _ => return perr(start, "integer literal too large"),
            };
            out.push((Tok::Int(v), start));
            continue;
        }
        let two = if i + 1 < b.len() {
            &b[i..i + 2]
        } else {
            &b[i..i + 1]
        };
        let (t, len) = match two {
            b"->" => (Tok::Arrow, 2),
            b"<=" => (Tok::Le, 2),
            b">=" => (Tok::Ge, 2),
            b"==" => (Tok::Eq, 2),
            b"!=" => (Tok::Ne, 2),
            b"&&" => (Tok::And, 2),
            b"||" => (Tok::Or, 2),
            _ => match c {
                b'[' => (Tok::LBrack, 1),
                b']' => (Tok::RBrack, 1),
                b'{' => (Tok::LBrace, 1),
                b'}' => (Tok::RBrace, 1),
                b'(' => (Tok::LParen, 1),
                b')' => (Tok::RParen, 1),
                b',' => (Tok::Comma, 1),
                b';' => (Tok::Semi, 1),
                b':' => (Tok::Colon, 1),
                b'+' => (Tok::Plus, 1),
                b'-' => (Tok::Minus, 1),
                b'*' => (Tok::Star, 1),
                b'<' => (Tok::Lt, 1),
                b'>' => (Tok::Gt, 1),
                b'=' => (Tok::Eq, 1),
                _ => {
                    let ch = s[i..].chars().next().unwrap_or('?');
                    return perr(i, format!("unexpected character '{ch}'"));
                }
            },
        };
        out.push((t, start));
        i += len;
    }
    out.push((Tok::Eof, s.len()));
    Ok(out)
}

/// A linear expression over the variables of the current scope:
/// coefficients (growing as variables are declared) and a constant.
#[derive(Debug, Clone, Default)]
struct Lin {
    coeffs: Vec<i128>,
    c: i128,
}

const LIMIT: i128 = 1 << 100;

fn chk(v: Option<i128>, pos: usize) -> PolyResult<i128> {
    match v {
        Some(v) if v.abs() < LIMIT => Ok(v),
        _ => perr(pos, "arithmetic overflow in expression"),
    }
}

impl Lin {
    fn constant(c: i128) -> Lin {
        Lin {
            coeffs: Vec::new(),
            c,
        }
    }
    fn var(k: usize) -> Lin {
        let mut coeffs = vec![0; k + 1];
        coeffs[k] = 1;
        Lin { coeffs, c: 0 }
    }
    fn is_const(&self) -> bool {
        self.coeffs.iter().all(|&c| c == 0)
    }
    fn add(&self, o: &Lin, sign: i128, pos: usize) -> PolyResult<Lin> {
        let n = self.coeffs.len().max(o.coeffs.len());
        let mut coeffs = vec![0; n];
        for (k, slot) in coeffs.iter_mut().enumerate() {
            let a = self.coeffs.get(k).copied().unwrap_or(0);
            let b = o.coeffs.get(k).copied().unwrap_or(0);
            *slot = chk(b.checked_mul(sign).and_then(|b| a.checked_add(b)), pos)?;
        }
        let c = chk(
            o.c.checked_mul(sign).and_then(|b| self.c.checked_add(b)),
            pos,
        )?;
        Ok(Lin { coeffs, c })
    }
    fn scale(&self, f: i128, pos: usize) -> PolyResult<Lin> {
        let coeffs = self
            .coeffs
            .iter()
            .map(|&a| chk(a.checked_mul(f), pos))
            .collect::<PolyResult<_>>()?;
        Ok(Lin {
            coeffs,
            c: chk(self.c.checked_mul(f), pos)?,
        })
    }
    /// The row over `nv` variables, or a parse error if a value does not
    /// fit `i64`.
    fn row(&self, nv: usize, pos: usize) -> PolyResult<Vec<i64>> {
        let mut r = Vec::with_capacity(nv + 1);
        for k in 0..nv {
            let v = self.coeffs.get(k).copied().unwrap_or(0);
            r.push(i64::try_from(v).or_else(|_| perr(pos, "coefficient too large"))?);
        }
        r.push(i64::try_from(self.c).or_else(|_| perr(pos, "constant too large"))?);
        Ok(r)
    }
}

/// One atomic constraint: `lin = 0` or `lin >= 0`.
#[derive(Debug, Clone)]
struct Atom {
    eq: bool,
    lin: Lin,
    pos: usize,
}

/// A formula in disjunctive normal form.
type Dnf = Vec<Vec<Atom>>;

const MAX_DISJUNCTS: usize = 4096;

/// `a ∧ b` in disjunctive normal form (see `dnf_and`); a parse error at
/// `pos` when it would have more than [`MAX_DISJUNCTS`] disjuncts.
fn dnf_and_capped(a: &Dnf, b: &Dnf, pos: usize) -> PolyResult<Dnf> {
    if a.len().saturating_mul(b.len()) > MAX_DISJUNCTS {
        return perr(pos, "formula has too many disjuncts");
    }
    Ok(dnf_and(a, b))
}

/// The rows of one parsed piece.
#[derive(Debug, Clone)]
pub struct RawPiece {
    /// Input tuple, for maps.
    pub input: Option<Tuple>,
    pub output: Tuple,
    /// Disjuncts: (equalities, inequalities), rows over parameters, input
    /// and output dimensions, then the constant. The equalities defining
    /// expression entries of the tuples are included in every disjunct.
    pub disjuncts: Vec<super::constraint::EqsIneqs>,
    /// Byte offset of the piece.
    pub pos: usize,
}

/// A parsed `[params] -> { piece; piece }`.
#[derive(Debug, Clone)]
pub struct RawUnion {
    pub params: Vec<String>,
    pub pieces: Vec<RawPiece>,
    /// Byte offset of the `{`.
    pub pos: usize,
}

/// A parsed multi-affine function `[params] -> { [in] -> [exprs] }`.
#[derive(Debug, Clone)]
pub struct RawFunction {
    pub params: Vec<String>,
    pub input: Tuple,
    pub output_name: Option<String>,
    /// One row per output over parameters and input dimensions, then the
    /// constant.
    pub rows: Vec<Vec<i64>>,
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    i: usize,
    /// Names in scope, in variable order; `None` for generated dimensions.
    scope: Vec<Option<String>>,
    /// Nesting depth of expressions (bounded: no stack overflow on input).
    depth: usize,
}

impl Parser {
    fn new(s: &str) -> PolyResult<Parser> {
        Ok(Parser {
            toks: lex(s)?,
            i: 0,
            scope: Vec::new(),
            depth: 0,
        })
    }
    fn peek(&self) -> &Tok {
        &self.toks[self.i.min(self.toks.len() - 1)].0
    }
    fn peek2(&self) -> &Tok {
        &self.toks[(self.i + 1).min(self.toks.len() - 1)].0
    }
    fn pos(&self) -> usize {
        self.toks[self.i.min(self.toks.len() - 1)].1
    }
    fn bump(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.i < self.toks.len() - 1 {
            self.i += 1;
        }
        t
    }
    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == t {
            self.bump();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, t: &Tok, what: &str) -> PolyResult<()> {
        if self.eat(t) {
            Ok(())
        } else {
            perr(
                self.pos(),
                format!("expected {what}, found {}", show(self.peek())),
            )
        }
    }

    fn lookup(&self, name: &str) -> Option<usize> {
        self.scope.iter().position(|n| n.as_deref() == Some(name))
    }

    /// A parser of `s` past its parameter list `[N, M] ->` (optional),
    /// with the parameters in scope; returns them too.
    fn with_params(s: &str) -> PolyResult<(Parser, Vec<String>)> {
        let mut p = Parser::new(s)?;
        let params = p.params()?;
        p.scope = params.iter().cloned().map(Some).collect();
        Ok((p, params))
    }

    /// The end of the input after the closing `}`.
    fn expect_end(&mut self) -> PolyResult<()> {
        if self.peek() != &Tok::Eof {
            return perr(
                self.pos(),
                format!("unexpected {} after '}}'", show(self.peek())),
            );
        }
        Ok(())
    }

    /// `[N, M] ->` (optional).
    fn params(&mut self) -> PolyResult<Vec<String>> {
        if self.peek() != &Tok::LBrack {
            return Ok(Vec::new());
        }
        self.bump();
        let mut ps = Vec::new();
        if !self.eat(&Tok::RBrack) {
            loop {
                let p = self.pos();
                match self.bump() {
                    Tok::Ident(n) => {
                        if ps.contains(&n) {
                            return perr(p, format!("parameter '{n}' declared twice"));
                        }
                        ps.push(n)
                    }
                    t => return perr(p, format!("expected a parameter name, found {}", show(&t))),
                }
                if self.eat(&Tok::RBrack) {
                    break;
                }
                self.expect(&Tok::Comma, "',' or ']'")?;
            }
        }
        self.expect(&Tok::Arrow, "'->' after the parameters")?;
        Ok(ps)
    }

    /// The head `name? [` of a tuple: its optional name.
    fn tuple_head(&mut self) -> PolyResult<Option<String>> {
        let name = if let Tok::Ident(n) = self.peek().clone() {
            self.bump();
            Some(n)
        } else {
            None
        };
        self.expect(&Tok::LBrack, "'['")?;
        Ok(name)
    }

    /// A tuple `name? [entries]`; declares its dimensions. Entries that are
    /// expressions (or names already in scope) become fresh dimensions with
    /// an equality, returned in `eqs` (as `Lin`s equal to zero).
    fn tuple(&mut self, eqs: &mut Vec<Atom>) -> PolyResult<Tuple> {
        let name = self.tuple_head()?;
        let mut dims = Vec::new();
        if !self.eat(&Tok::RBrack) {
            loop {
                let p = self.pos();
                let fresh = match (self.peek().clone(), self.peek2()) {
                    (Tok::Ident(n), Tok::Comma | Tok::RBrack) if self.lookup(&n).is_none() => {
                        Some(n)
                    }
                    _ => None,
                };
                if let Some(n) = fresh {
                    self.bump();
                    self.scope.push(Some(n.clone()));
                    dims.push(n);
                } else {
                    let e = self.expr()?;
                    let k = self.scope.len();
                    self.scope.push(None);
                    dims.push(String::new());
                    // x_k - e = 0
                    let lin = Lin::var(k).add(&e, -1, p)?;
                    eqs.push(Atom {
                        eq: true,
                        lin,
                        pos: p,
                    });
                }
                if self.eat(&Tok::RBrack) {
                    break;
                }
                self.expect(&Tok::Comma, "',' or ']'")?;
            }
        }
        Ok(Tuple {
            name: name.map(Into::into),
            dims: dims.into(),
        })
    }

    // ---- expressions ----

    fn expr(&mut self) -> PolyResult<Lin> {
        let p = self.pos();
        let mut acc = if self.eat(&Tok::Minus) {
            self.term()?.scale(-1, p)?
        } else {
            self.eat(&Tok::Plus);
            self.term()?
        };
        loop {
            let p = self.pos();
            let sign = match self.peek() {
                Tok::Plus => 1,
                Tok::Minus => -1,
                _ => break,
            };
            self.bump();
            let t = self.term()?;
            acc = acc.add(&t, sign, p)?;
        }
        Ok(acc)
    }

    fn term(&mut self) -> PolyResult<Lin> {
        let p = self.pos();
        let mut acc = self.factor()?;
        loop {
            let p2 = self.pos();
            let implicit = matches!(self.peek(), Tok::Ident(_) | Tok::LParen | Tok::Int(_))
                && acc.is_const()
                && acc.coeffs.is_empty()
                && matches!(self.toks[self.i.saturating_sub(1)].0, Tok::Int(_));
            if self.eat(&Tok::Star) || implicit {
                let f = self.factor()?;
                acc = if acc.is_const() {
                    f.scale(acc.c, p2)?
                } else if f.is_const() {
                    acc.scale(f.c, p2)?
                } else {
                    return perr(p, "non-affine product of two variables");
                };
            } else {
                break;
            }
        }
        Ok(acc)
    }

    fn factor(&mut self) -> PolyResult<Lin> {
        let p = self.pos();
        if self.depth > 256 {
            return perr(p, "expression nested too deeply");
        }
        self.depth += 1;
        let r = self.factor_inner(p);
        self.depth -= 1;
        r
    }

    fn factor_inner(&mut self, p: usize) -> PolyResult<Lin> {
        match self.bump() {
            Tok::Int(v) => Ok(Lin::constant(v)),
            Tok::Ident(n) => match self.lookup(&n) {
                Some(k) => Ok(Lin::var(k)),
                None => perr(p, format!("unknown identifier '{n}'")),
            },
            Tok::LParen => {
                let e = self.expr()?;
                self.expect(&Tok::RParen, "')'")?;
                Ok(e)
            }
            Tok::Minus => Ok(self.factor()?.scale(-1, p)?),
            t => perr(p, format!("expected an expression, found {}", show(&t))),
        }
    }

    // ---- formulas ----

    fn disj(&mut self, depth: usize) -> PolyResult<Dnf> {
        let mut acc = self.conj(depth)?;
        while self.eat(&Tok::Or) {
            let p = self.pos();
            acc.extend(self.conj(depth)?);
            if acc.len() > MAX_DISJUNCTS {
                return perr(p, "formula has too many disjuncts");
            }
        }
        Ok(acc)
    }

    fn conj(&mut self, depth: usize) -> PolyResult<Dnf> {
        let mut acc = self.atom(depth)?;
        while self.eat(&Tok::And) {
            let p = self.pos();
            let rhs = self.atom(depth)?;
            acc = dnf_and_capped(&acc, &rhs, p)?;
        }
        Ok(acc)
    }

    fn atom(&mut self, depth: usize) -> PolyResult<Dnf> {
        if depth > 200 {
            return perr(self.pos(), "formula nested too deeply");
        }
        match self.peek() {
            Tok::True => {
                self.bump();
                return Ok(vec![vec![]]);
            }
            Tok::False => {
                self.bump();
                return Ok(vec![]);
            }
            Tok::LParen => {
                let save = self.i;
                match self.chain() {
                    Ok(d) => return Ok(d),
                    Err(e1) => {
                        self.i = save;
                        self.bump();
                        match self.disj(depth + 1).and_then(|d| {
                            self.expect(&Tok::RParen, "')'")?;
                            Ok(d)
                        }) {
                            Ok(d) => return Ok(d),
                            Err(e2) => {
                                // report the error that got further
                                let p1 = err_pos(&e1);
                                let p2 = err_pos(&e2);
                                return Err(if p1 >= p2 { e1 } else { e2 });
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        self.chain()
    }

    fn expr_list(&mut self) -> PolyResult<Vec<(Lin, usize)>> {
        let mut v = vec![(self.expr()?, self.pos())];
        while self.eat(&Tok::Comma) {
            let p = self.pos();
            v.push((self.expr()?, p));
        }
        Ok(v)
    }

    /// `list op list op list ...`
    fn chain(&mut self) -> PolyResult<Dnf> {
        let mut left = self.expr_list()?;
        let mut acc: Dnf = vec![vec![]];
        let mut n_ops = 0;
        loop {
            let op = self.peek().clone();
            let op_pos = self.pos();
            if !matches!(
                op,
                Tok::Le | Tok::Lt | Tok::Ge | Tok::Gt | Tok::Eq | Tok::Ne
            ) {
                break;
            }
            self.bump();
            n_ops += 1;
            let right = self.expr_list()?;
            for (l, _) in &left {
                for (r, _) in &right {
                    let atoms: Dnf = match op {
                        // r - l >= 0
                        Tok::Le => vec![vec![ineq(r.add(l, -1, op_pos)?, op_pos)]],
                        Tok::Lt => {
                            vec![vec![ineq(r.add(l, -1, op_pos)?.plus(-1, op_pos)?, op_pos)]]
                        }
                        Tok::Ge => vec![vec![ineq(l.add(r, -1, op_pos)?, op_pos)]],
                        Tok::Gt => {
                            vec![vec![ineq(l.add(r, -1, op_pos)?.plus(-1, op_pos)?, op_pos)]]
                        }
                        Tok::Eq => vec![vec![Atom {
                            eq: true,
                            lin: l.add(r, -1, op_pos)?,
                            pos: op_pos,
                        }]],
                        _ => vec![
                            vec![ineq(l.add(r, -1, op_pos)?.plus(-1, op_pos)?, op_pos)],
                            vec![ineq(r.add(l, -1, op_pos)?.plus(-1, op_pos)?, op_pos)],
                        ],
                    };
                    acc = dnf_and_capped(&acc, &atoms, op_pos)?;
                }
            }
            left = right;
        }
        if n_ops == 0 {
            return perr(
                self.pos(),
                format!("expected a comparison, found {}", show(self.peek())),
            );
        }
        Ok(acc)
    }

    /// `{ piece ; piece }` after the parameters; `function` pieces are not
    /// allowed here.
    fn union_body(&mut self, np: usize) -> PolyResult<Vec<RawPiece>> {
        self.expect(&Tok::LBrace, "'{'")?;
        let mut pieces = Vec::new();
        if self.eat(&Tok::RBrace) {
            return Ok(pieces);
        }
        loop {
            pieces.push(self.piece(np)?);
            if self.eat(&Tok::RBrace) {
                break;
            }
            self.expect(&Tok::Semi, "';' or '}'")?;
        }
        Ok(pieces)
    }

    fn piece(&mut self, np: usize) -> PolyResult<RawPiece> {
        let pos = self.pos();
        self.scope.truncate(np);
        let mut tuple_eqs = Vec::new();
        let (input, output) = match self.peek() {
            Tok::Colon => (None, Tuple::default()),
            _ => {
                let first = self.tuple(&mut tuple_eqs)?;
                if self.eat(&Tok::Arrow) {
                    let second = self.tuple(&mut tuple_eqs)?;
                    (Some(first), second)
                } else {
                    (None, first)
                }
            }
        };
        let dnf = if self.eat(&Tok::Colon) {
            if matches!(self.peek(), Tok::Semi | Tok::RBrace) {
                vec![vec![]]
            } else {
                self.disj(0)?
            }
        } else {
            vec![vec![]]
        };
        let nv = self.scope.len();
        let mut disjuncts = Vec::with_capacity(dnf.len());
        for conj in dnf {
            let mut eqs = Vec::new();
            let mut ineqs = Vec::new();
            for a in tuple_eqs.iter().chain(conj.iter()) {
                let r = a.lin.row(nv, a.pos)?;
                if a.eq {
                    eqs.push(r)
                } else {
                    ineqs.push(r)
                }
            }
            disjuncts.push((eqs, ineqs));
        }
        Ok(RawPiece {
            input,
            output,
            disjuncts,
            pos,
        })
    }
}

impl Lin {
    fn plus(&self, c: i128, pos: usize) -> PolyResult<Lin> {
        Ok(Lin {
            coeffs: self.coeffs.clone(),
            c: chk(self.c.checked_add(c), pos)?,
        })
    }
}

fn ineq(lin: Lin, pos: usize) -> Atom {
    Atom {
        eq: false,
        lin,
        pos,
    }
}

fn err_pos(e: &PolyError) -> usize {
    match e {
        PolyError::Parse { pos, .. } => *pos,
        _ => 0,
    }
}

fn show(t: &Tok) -> String {
    match t {
        Tok::Ident(n) => format!("'{n}'"),
        Tok::Int(v) => format!("'{v}'"),
        Tok::Eof => "end of input".into(),
        Tok::LBrack => "'['".into(),
        Tok::RBrack => "']'".into(),
        Tok::LBrace => "'{'".into(),
        Tok::RBrace => "'}'".into(),
        Tok::LParen => "'('".into(),
        Tok::RParen => "')'".into(),
        Tok::Comma => "','".into(),
        Tok::Semi => "';'".into(),
        Tok::Colon => "':'".into(),
        Tok::Arrow => "'->'".into(),
        Tok::Plus => "'+'".into(),
        Tok::Minus => "'-'".into(),
        Tok::Star => "'*'".into(),
        Tok::Le => "'<='".into(),
        Tok::Lt => "'<'".into(),
        Tok::Ge => "'>='".into(),
        Tok::Gt => "'>'".into(),
        Tok::Eq => "'='".into(),
        Tok::Ne => "'!='".into(),
        Tok::And => "'and'".into(),
        Tok::Or => "'or'".into(),
        Tok::True => "'true'".into(),
        Tok::False => "'false'".into(),
    }
}

/// Parses `[params] -> { pieces }` (sets and maps alike).
pub fn parse_union(s: &str) -> PolyResult<RawUnion> {
    let (mut p, params) = Parser::with_params(s)?;
    let pos = p.pos();
    let pieces = p.union_body(params.len())?;
    p.expect_end()?;
    Ok(RawUnion {
        params,
        pieces,
        pos,
    })
}

/// Parses `[params] -> { [in] -> [e_1, ..., e_m] }` where the input
/// entries are distinct fresh names and the outputs are affine expressions
/// of the parameters and inputs.
pub fn parse_function(s: &str) -> PolyResult<RawFunction> {
    let (mut p, params) = Parser::with_params(s)?;
    p.expect(&Tok::LBrace, "'{'")?;
    let tpos = p.pos();
    let mut eqs = Vec::new();
    let input = p.tuple(&mut eqs)?;
    if !eqs.is_empty() {
        return perr(tpos, "the input tuple of a function must list fresh names");
    }
    p.expect(&Tok::Arrow, "'->'")?;
    let output_name = p.tuple_head()?;
    let nv = p.scope.len();
    let mut rows = Vec::new();
    if !p.eat(&Tok::RBrack) {
        loop {
            let ep = p.pos();
            let e = p.expr()?;
            rows.push(e.row(nv, ep)?);
            if p.eat(&Tok::RBrack) {
                break;
            }
            p.expect(&Tok::Comma, "',' or ']'")?;
        }
    }
    p.expect(&Tok::RBrace, "'}'")?;
    p.expect_end()?;
    Ok(RawFunction {
        params,
        input,
        output_name,
        rows,
    })
}

// ---- constructors of the set types from text ----

use super::basic_set::BasicSet;
use super::map::Map;
use super::set::Set;
use super::space::Space;

fn build(u: RawUnion, want_map: bool) -> PolyResult<Set> {
    let kind = if want_map { "map" } else { "set" };
    let mut space: Option<Space> = None;
    let mut pieces = Vec::new();
    let mut raw = Vec::new();
    for p in u.pieces {
        if p.input.is_some() != want_map {
            return perr(
                p.pos,
                format!(
                    "expected a {kind}, found a {}",
                    if p.input.is_some() { "map" } else { "set" }
                ),
            );
        }
        let ps = Space {
            params: u.params.as_slice().into(),
            input: p.input.clone(),
            output: p.output.clone(),
        };
        match &space {
            None => {
                space = Some(ps);
            }
            Some(s) => {
                let same_names = s.output.name == ps.output.name
                    && s.input.as_ref().map(|t| &t.name) == ps.input.as_ref().map(|t| &t.name);
                if s.n_in() != ps.n_in() || s.n_out() != ps.n_out() || !same_names {
                    return perr(
                        p.pos,
                        format!(
                            "all pieces of a {kind} must have the same tuples: {} vs {}",
                            s.describe(),
                            ps.describe()
                        ),
                    );
                }
            }
        }
        // dimensions named in no earlier piece take this piece's names
        if let Some(s) = &mut space {
            merge_names(&mut s.output, &p.output);
            if let (Some(a), Some(b)) = (&mut s.input, &p.input) {
                merge_names(a, b);
            }
        }
        raw.push(p.disjuncts);
    }
    if let Some(sp) = &space {
        for disjuncts in raw {
            for (eqs, ineqs) in disjuncts {
                let b = BasicSet::from_rows(sp.clone(), eqs, ineqs)?;
                if !b.is_obviously_empty() {
                    pieces.push(b);
                }
            }
        }
    }
    let space = match space {
        Some(s) => s,
        None if want_map => Space::map(&u.params, Tuple::default(), Tuple::default()),
        None => Space::set::<String, String>(&u.params, &[]),
    };
    Set::from_basics(space, pieces)
}

fn merge_names(into: &mut Tuple, from: &Tuple) {
    let mut dims = into.dims.to_vec();
    for (a, b) in dims.iter_mut().zip(from.dims.iter()) {
        if a.is_empty() && !b.is_empty() {
            *a = b.clone();
        }
    }
    into.dims = dims.into();
}

impl Set {
    /// Parses isl notation, e.g. `[N] -> { [i, j] : 0 <= j <= i < N }` or a
    /// union `{ [i] : i < 0; [i] : i > 5 }` (see the `parse` module for the
    /// accepted syntax). Errors are `PolyError::Parse { pos, msg }`.
    pub fn parse(s: &str) -> PolyResult<Set> {
        build(parse_union(s)?, false)
    }
}

impl BasicSet {
    /// Parses a set with a single conjunction (see `Set::parse`).
    pub fn parse(s: &str) -> PolyResult<BasicSet> {
        let set = Set::parse(s)?;
        match set.pieces.len() {
            0 => Ok(BasicSet::empty(set.space)),
            1 => Ok(set.pieces[0].clone()),
            n => perr(
                0,
                format!("expected a basic set, found a union of {n} pieces"),
            ),
        }
    }
}

impl Map {
    /// Parses isl notation, e.g. `[N] -> { [i, j] -> [i] : 0 <= j <= i < N }`;
    /// output entries may be expressions (`[i] -> [i + 1, 0]`).
    pub fn parse(s: &str) -> PolyResult<Map> {
        let set = build(parse_union(s)?, true)?;
        let space = set.space.clone();
        Map::from_set_in(space, &set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_and_parses() {
        let u = parse_union("[N] -> { [i, j] : 0 <= j <= i < N }").unwrap();
        assert_eq!(u.params, vec!["N"]);
        assert_eq!(u.pieces.len(), 1);
        assert_eq!(u.pieces[0].disjuncts.len(), 1);
        assert_eq!(u.pieces[0].disjuncts[0].1.len(), 3);
        let u = parse_union("{ [i] : i != 0 }").unwrap();
        assert_eq!(u.pieces[0].disjuncts.len(), 2);
    }

    #[test]
    fn error_positions() {
        let e = parse_union("{ [i] : i <= k }").unwrap_err();
        assert_eq!(
            e,
            PolyError::Parse {
                pos: 13,
                msg: "unknown identifier 'k'".into()
            }
        );
        let e = parse_union("{ [i] : i # 0 }").unwrap_err();
        assert!(matches!(e, PolyError::Parse { pos: 10, .. }));
    }
}
