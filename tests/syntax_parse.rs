//! Parser tests: every example parses; each construct of docs/language.md
//! sections 1–5 parses to the expected AST shape (checked through a fully
//! parenthesised rendering); section 6 constructs are rejected with
//! `unsupported: ...` at the right line:col; syntax errors are readable.

use alphac::diag::{Diagnostic, SourceFile};
use alphac::syntax::ast::*;
use alphac::syntax::parse;

fn src(text: &str) -> SourceFile {
    SourceFile::new("t.alpha", text)
}

fn parse_ok(text: &str) -> File {
    let f = src(text);
    match parse(&f) {
        Ok(a) => a,
        Err(ds) => panic!("{}", alphac::diag::render_all(&ds, &f)),
    }
}

fn parse_err(text: &str) -> Vec<String> {
    let f = src(text);
    match parse(&f) {
        Ok(a) => panic!("expected an error, parsed {a:?}"),
        Err(ds) => ds.iter().map(|d: &Diagnostic| d.one_line(&f)).collect(),
    }
}

fn systems(f: &File) -> Vec<&System> {
    fn walk<'a>(items: &'a [Item], out: &mut Vec<&'a System>) {
        for i in items {
            match i {
                Item::System(s) => out.push(s),
                Item::Package(p) => walk(&p.items, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(&f.items, &mut out);
    out
}

/// A system with one input `A : [N]`, output `B : [N]`, equation `B[i] = E`.
fn in_system(e: &str) -> String {
    format!("affine s [N] -> {{ : N > 0 }} inputs A, Z : [N] outputs B : [N] let B[i] = {e}; .")
}

/// Parses `e` as the right-hand side of an equation and renders it.
fn rhs(e: &str) -> String {
    let f = parse_ok(&in_system(e));
    sx(&systems(&f)[0].equations[0].rhs)
}

fn op(b: BinOp) -> &'static str {
    match b {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Rem => "%",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::And => "and",
        BinOp::Or => "or",
    }
}

fn list(es: &[Expr]) -> String {
    es.iter().map(sx).collect::<Vec<_>>().join(", ")
}

fn names(is: &[Ident]) -> String {
    is.iter()
        .map(|i| i.name.clone())
        .collect::<Vec<_>>()
        .join(", ")
}

fn afun(f: &AffineFn) -> String {
    format!("({} -> {})", names(&f.params), list(&f.exprs))
}

/// Fully parenthesised rendering of an expression.
fn sx(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Float(v) => format!("{v:?}"),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Name(n) => n.clone(),
        ExprKind::Val(f) => format!("val{}", afun(f)),
        ExprKind::Access { var, indices } => format!("{}[{}]", var.name, list(indices)),
        ExprKind::Dep { func, body } => format!("({} @ {})", afun(func), sx(body)),
        ExprKind::Unary { op, operand } => match op {
            UnOp::Neg => format!("(-{})", sx(operand)),
            UnOp::Not => format!("(not {})", sx(operand)),
        },
        ExprKind::Binary { op: o, lhs, rhs } => format!("({} {} {})", sx(lhs), op(*o), sx(rhs)),
        ExprKind::Call { func, args } => format!("{}({})", func.name, list(args)),
        ExprKind::If {
            cond,
            then_branch,
            else_branch,
        } => format!(
            "(if {} then {} else {})",
            sx(cond),
            sx(then_branch),
            sx(else_branch)
        ),
        ExprKind::Case(ps) => format!(
            "case{{{}}}",
            ps.iter().map(sx).collect::<Vec<_>>().join("; ")
        ),
        ExprKind::Restrict { domain, body } => format!("({} : {})", dom(domain), sx(body)),
        ExprKind::Reduce {
            op,
            projection,
            body,
            ..
        } => {
            let p = match projection {
                Projection::Names(n) => format!("[{}]", names(n)),
                Projection::Function(f) => afun(f),
            };
            format!("reduce({op:?}, {p}, {})", sx(body))
        }
        ExprKind::Categorical { indices, body } => {
            format!("categorical([{}], {})", names(indices), sx(body))
        }
    }
}

fn cmp(c: CmpOp) -> &'static str {
    match c {
        CmpOp::Eq => "=",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

fn con(c: &Constraint) -> String {
    match &c.kind {
        ConstraintKind::And(cs) => {
            format!("({})", cs.iter().map(con).collect::<Vec<_>>().join(" and "))
        }
        ConstraintKind::Or(cs) => {
            format!("({})", cs.iter().map(con).collect::<Vec<_>>().join(" or "))
        }
        ConstraintKind::Chain { operands, ops } => {
            let mut s = list(&operands[0]);
            for (k, (o, _)) in ops.iter().enumerate() {
                s.push_str(&format!(" {} {}", cmp(*o), list(&operands[k + 1])));
            }
            s
        }
    }
}

fn dom(d: &Domain) -> String {
    match &d.kind {
        DomainKind::Array(es) => format!("[{}]", list(es)),
        DomainKind::Set(ps) => format!(
            "{{{}}}",
            ps.iter()
                .map(|b| {
                    let t = match &b.indices {
                        Some(is) => format!("[{}]", names(is)),
                        None => String::new(),
                    };
                    match &b.constraint {
                        Some(c) => format!("{t}: {}", con(c)),
                        None if b.indices.is_none() => ":".to_string(),
                        None => t,
                    }
                })
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

/// Domain of the first input of a system whose inputs section is `decl`.
fn input_domain(decl: &str) -> String {
    let f = parse_ok(&format!("affine s [N, M] -> {{ : }} inputs {decl} ."));
    dom(systems(&f)[0].inputs[0].domain.as_ref().expect("a domain"))
}

// ------------------------------------------------------------------ examples

#[test]
fn every_example_parses() {
    let mut n = 0;
    for entry in std::fs::read_dir("examples").expect("examples/ exists") {
        let path = entry.expect("readable dir").path();
        if path.extension().and_then(|e| e.to_str()) != Some("alpha") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable example");
        let f = SourceFile::new(path.display().to_string(), text);
        match parse(&f) {
            Ok(ast) => {
                // An example holds one system, or a sampler named like the
                // file plus its data generator `<stem>_data`.
                let names: Vec<String> =
                    systems(&ast).iter().map(|s| s.name.name.clone()).collect();
                let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                let ok = names.len() == 1
                    || (names.len() == 2
                        && names.iter().any(|n| n == stem)
                        && names.iter().any(|n| *n == format!("{stem}_data")));
                assert!(ok, "{}: systems {names:?}", path.display());
            }
            Err(ds) => panic!("{}", alphac::diag::render_all(&ds, &f)),
        }
        n += 1;
    }
    assert!(n >= 6, "only {n} examples");
}

#[test]
fn prefix_sum_example_structure() {
    let text = std::fs::read_to_string("examples/prefix_sum.alpha").expect("example");
    let f = parse_ok(&text);
    let s = systems(&f)[0];
    assert_eq!(s.name.name, "prefix_sum");
    assert_eq!(names(&s.params), "N");
    assert_eq!(dom(s.context.as_ref().expect("context")), "{: N > 0}");
    assert_eq!(names(&s.inputs[0].names), "A");
    assert_eq!(dom(s.outputs[0].domain.as_ref().expect("dom")), "[N]");
    let eq = &s.equations[0];
    assert_eq!(eq.var.name, "B");
    assert_eq!(names(eq.indices.as_ref().expect("array notation")), "i");
    assert_eq!(sx(&eq.rhs), "reduce(Add, [j], ({: 0 <= j <= i} : A[j]))");
    // Spans point at the text.
    assert_eq!(&text[eq.var.span.start..eq.var.span.end], "B");
    assert_eq!(
        &text[eq.rhs.span.start..eq.rhs.span.end],
        "reduce(+, [j], {: 0 <= j <= i} : A[j])"
    );
}

#[test]
fn dependent_prefix_sum_structure() {
    let text = std::fs::read_to_string("examples/prefix_sum_dependent.alpha").expect("example");
    let f = parse_ok(&text);
    let s = systems(&f)[0];
    assert_eq!(s.equations.len(), 2);
    assert_eq!(
        sx(&s.equations[0].rhs),
        "case{({: i = 0} : X[0]); ({: i > 0} : (sqrt(abs(B[(i - 1)])) + X[i]))}"
    );
}

// ------------------------------------------------------------------ files

#[test]
fn top_level_items() {
    let f = parse_ok(
        "// comment\n/* block\n comment */ external foo(2) external int bar(1)\n\
         constant T = 10 constant U = -3;\n\
         package a.b { constant K = 1 package c { affine s [N] -> { : } . } }\n\
         import a.b.*\nimport a.b.c",
    );
    let kinds: Vec<String> = f
        .items
        .iter()
        .map(|i| match i {
            Item::External(e) => format!(
                "external {} {} {:?}",
                e.name.name,
                e.arity,
                e.result.map(|r| r.0)
            ),
            Item::Constant(c) => format!("constant {} {}", c.name.name, c.value),
            Item::Package(p) => format!("package {} {}", names(&p.name), p.items.len()),
            Item::Import(i) => format!("import {} {}", names(&i.path), i.wildcard),
            Item::System(s) => format!("system {}", s.name.name),
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "external foo 2 None",
            "external bar 1 Some(Int)",
            "constant T 10",
            "constant U -3",
            "package a, b 2",
            "import a, b true",
            "import a, b, c false",
        ]
    );
    assert_eq!(systems(&f)[0].name.name, "s");
}

#[test]
fn declarations_sections_and_types() {
    let f = parse_ok(
        "affine s [N, K] -> { : N > 0 and K > 1 }\n\
         inputs A, B : [N]; z : int [N] obs : float {[i] : 0 <= i < N}\n\
         outputs ok : bool [N];\n locals t : {} u : { [] : } v\n:\n[]\n\
         let ok = A; t = 1.5; u = 2; v[] = 0.33333[]; .",
    );
    let s = systems(&f)[0];
    assert_eq!(names(&s.params), "N, K");
    assert_eq!(s.inputs.len(), 3);
    assert_eq!(names(&s.inputs[0].names), "A, B");
    assert_eq!(s.inputs[1].ty.map(|t| t.0), Some(ElemType::Int));
    assert_eq!(s.inputs[2].ty.map(|t| t.0), Some(ElemType::Float));
    assert_eq!(s.inputs[0].ty, None);
    assert_eq!(s.outputs[0].ty.map(|t| t.0), Some(ElemType::Bool));
    let locals: Vec<String> = s
        .locals
        .iter()
        .map(|d| dom(d.domain.as_ref().expect("dom")))
        .collect();
    assert_eq!(locals, vec!["{}", "{[]}", "[]"]);
    let eqs: Vec<String> = s
        .equations
        .iter()
        .map(|e| {
            format!(
                "{} {:?} {}",
                e.var.name,
                e.indices.as_ref().map(|v| v.len()),
                sx(&e.rhs)
            )
        })
        .collect();
    assert_eq!(
        eqs,
        vec!["ok None A", "t None 1.5", "u None 2", "v Some(0) 0.33333"]
    );
}

#[test]
fn last_semicolon_optional_and_no_let() {
    let f = parse_ok("affine s [N] -> { : } inputs A : [N] outputs B : [N] let B = A .");
    assert_eq!(systems(&f)[0].equations.len(), 1);
    let f = parse_ok("affine s [] -> { : } inputs A : {} .");
    assert!(systems(&f)[0].equations.is_empty());
    // Alpha's older parameter syntax.
    let f = parse_ok("affine s {N, M | N > 0 && M > 0} inputs A : [N, M] .");
    let s = systems(&f)[0];
    assert_eq!(names(&s.params), "N, M");
    assert_eq!(
        dom(s.context.as_ref().expect("ctx")),
        "{: (N > 0 and M > 0)}"
    );
}

// ------------------------------------------------------------------ domains

#[test]
fn domain_forms() {
    assert_eq!(input_domain("A : [N, M]"), "[N, M]");
    assert_eq!(input_domain("A : [N + 1]"), "[(N + 1)]");
    assert_eq!(
        input_domain("A : { [i, j] : 0 <= i < N and 0 <= j <= i }"),
        "{[i, j]: (0 <= i < N and 0 <= j <= i)}"
    );
    assert_eq!(
        input_domain("A : { [i] : i < 3 or i > 7 }"),
        "{[i]: (i < 3 or i > 7)}"
    );
    assert_eq!(
        input_domain("A : { [i] : 0 <= i < 3 ; [i] : 7 < i < N }"),
        "{[i]: 0 <= i < 3; [i]: 7 < i < N}"
    );
    assert_eq!(input_domain("A : { [i] : i != 2 }"), "{[i]: i != 2}");
    assert_eq!(
        input_domain("A : { [i, j] : 0 <= i < j <= N }"),
        "{[i, j]: 0 <= i < j <= N}"
    );
    assert_eq!(
        input_domain("A : { [i, j] : i == j > 0 }"),
        "{[i, j]: i = j > 0}"
    );
    assert_eq!(
        input_domain("A : { [i, j] : 0 <= i, j < N }"),
        "{[i, j]: 0 <= i, j < N}"
    );
    assert_eq!(
        input_domain("A : { [i] : 2i <= N && 0 <= 2*i || -(i + 1) >= N - 1 }"),
        "{[i]: (((2 * i) <= N and 0 <= (2 * i)) or (-(i + 1)) >= (N - 1))}"
    );
    assert_eq!(
        input_domain("A : { [i] : (i < 3 or i > 7) and i % 2 = 0 and floor(i / 2) <= N }"),
        "{[i]: ((i < 3 or i > 7) and (i % 2) = 0 and floor((i / 2)) <= N)}"
    );
    assert_eq!(input_domain("A : { [i] }"), "{[i]}");
    assert_eq!(input_domain("A : { : }"), "{:}");
}

// ------------------------------------------------------------------ expressions

#[test]
fn precedence_of_binary_operators() {
    assert_eq!(rhs("A[i] + Z[i] * 2"), "(A[i] + (Z[i] * 2))");
    assert_eq!(rhs("A[i] - Z[i] - 1"), "((A[i] - Z[i]) - 1)");
    assert_eq!(rhs("A[i] / 2 % 3 * 4"), "(((A[i] / 2) % 3) * 4)");
    assert_eq!(
        rhs("i < N or i > 0 and A[i] + 1 >= 2"),
        "((i < N) or ((i > 0) and ((A[i] + 1) >= 2)))"
    );
    assert_eq!(
        rhs("i == 0 || i != 1 && i <= 2"),
        "((i == 0) or ((i != 1) and (i <= 2)))"
    );
    assert_eq!(rhs("-A[i] * 2"), "((-A[i]) * 2)");
    assert_eq!(rhs("not i > 0"), "((not i) > 0)");
    assert_eq!(rhs("!(i > 0)"), "(not (i > 0))");
    assert_eq!(rhs("(A[i] + 1) * 2"), "((A[i] + 1) * 2)");
}

#[test]
fn dependence_and_restriction_binding() {
    assert_eq!(
        rhs("(i -> i - 1) @ A + Z[i]"),
        "(((i -> (i - 1)) @ A) + Z[i])"
    );
    assert_eq!(
        rhs("(i -> i) @ (j -> j) @ A"),
        "((i -> i) @ ((j -> j) @ A))"
    );
    assert_eq!(
        rhs("{: i > 0} : A[i] + Z[i]"),
        "({: i > 0} : (A[i] + Z[i]))"
    );
    assert_eq!(
        rhs("Z[i] + {: i > 0} : A[i]"),
        "(Z[i] + ({: i > 0} : A[i]))"
    );
    assert_eq!(
        rhs("{[i] : i > 0 and i < N} : A[i]"),
        "({[i]: (i > 0 and i < N)} : A[i])"
    );
    assert_eq!(
        rhs("if i > 0 then A[i] else Z[i] + 1"),
        "(if (i > 0) then A[i] else (Z[i] + 1))"
    );
}

#[test]
fn expression_forms() {
    assert_eq!(rhs("val (i -> i + N)"), "val(i -> (i + N))");
    assert_eq!(rhs("A[i, Z[i]]"), "A[i, Z[i]]");
    assert_eq!(rhs("A[2i + 1]"), "A[((2 * i) + 1)]");
    assert_eq!(
        rhs("case { {: i == 0} : A[i]; {: i > 0} : B[i-1] + A[i]; }"),
        "case{({: i = 0} : A[i]); ({: i > 0} : (B[(i - 1)] + A[i]))}"
    );
    assert_eq!(
        rhs("case { {: i == 0} : 1; {: i > 0} : 2 }"),
        "case{({: i = 0} : 1); ({: i > 0} : 2)}"
    );
    assert_eq!(
        rhs("reduce(max, (i, k -> i), {: 0 <= k < N} : A[k])"),
        "reduce(Max, (i, k -> i), ({: 0 <= k < N} : A[k]))"
    );
    assert_eq!(
        rhs("reduce(*, [k, l], A[k] * A[l])"),
        "reduce(Mul, [k, l], (A[k] * A[l]))"
    );
    for (o, n) in [
        ("+", "Add"),
        ("min", "Min"),
        ("and", "And"),
        ("or", "Or"),
        ("&&", "And"),
        ("||", "Or"),
    ] {
        assert_eq!(
            rhs(&format!("reduce({o}, [k], A[k])")),
            format!("reduce({n}, [k], A[k])")
        );
    }
    assert_eq!(rhs("max(A[i], Z[i], 0)"), "max(A[i], Z[i], 0)");
    assert_eq!(rhs("min(A[i], 1)"), "min(A[i], 1)");
    assert_eq!(
        rhs("sqrt(abs(A[i])) + exp(1.0)"),
        "(sqrt(abs(A[i])) + exp(1.0))"
    );
    assert_eq!(rhs("uniform()"), "uniform()");
    assert_eq!(rhs("normal(0.0, 1e-3)"), "normal(0.0, 0.001)");
    assert_eq!(
        rhs("categorical([k], {: 0 <= k < N} : A[k])"),
        "categorical([k], ({: 0 <= k < N} : A[k]))"
    );
    assert_eq!(rhs("0.33333[] * A[i]"), "(0.33333 * A[i])");
    assert_eq!(rhs("true"), "true");
    assert_eq!(rhs("A"), "A");
    assert_eq!(rhs("foo(A[i], 2) + bar()"), "(foo(A[i], 2) + bar())");
    assert_eq!(rhs("Z[]"), "Z[]");
    assert_eq!(rhs("float(i) + int(A[i])"), "(float(i) + int(A[i]))");
}

#[test]
fn spans_cover_the_source_text() {
    let text = in_system("{: i > 0} : A[i-1] + Z[i]");
    let f = parse_ok(&text);
    let e = &systems(&f)[0].equations[0].rhs;
    assert_eq!(&text[e.span.start..e.span.end], "{: i > 0} : A[i-1] + Z[i]");
    let ExprKind::Restrict { domain, body } = &e.kind else {
        panic!("not a restriction: {e:?}")
    };
    assert_eq!(&text[domain.span.start..domain.span.end], "{: i > 0}");
    assert_eq!(&text[body.span.start..body.span.end], "A[i-1] + Z[i]");
}

// ------------------------------------------------------------------ errors

/// `line:col` of the first diagnostic.
fn err_at(text: &str) -> String {
    parse_err(text)[0].clone()
}

#[test]
fn unsupported_constructs_are_named_with_their_location() {
    let head = "affine s [N] -> { : }\ninputs A : [N]\noutputs B : [N]\n";
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{head}when {{: N > 0}} let B = A;\n."),
            "t.alpha:4:1: error: unsupported: `when` system body",
        ),
        (
            format!("{head}over {{[t] : t >= 0}} while (B[0] > 1.0)\nlet B = A;\n."),
            "t.alpha:4:1: error: unsupported: `over ... while` iteration",
        ),
        (
            "affine s [N] -> { : }\ndefine D = {[i] : 0 <= i < N}\ninputs A : [N] .".to_string(),
            "t.alpha:2:1: error: unsupported: `define`",
        ),
        (
            format!("{head}fuzzy f : [N]\nlet B = A;\n."),
            "t.alpha:4:1: error: unsupported: fuzzy variables",
        ),
        (
            format!("{head}let B[i] = A[[i]];\n."),
            "t.alpha:4:12: error: unsupported: fuzzy function `[[ ]]`",
        ),
        (
            format!("{head}let B[i] = val [[i]];\n."),
            "t.alpha:4:12: error: unsupported: fuzzy function `[[ ]]`",
        ),
        (
            format!("{head}let B[i] = argreduce(max, [j], A[j]);\n."),
            "t.alpha:4:12: error: unsupported: `argreduce`",
        ),
        (
            format!("{head}let B[i] = 1 +\n    conv({{[k] : 0 <= k < 3}}, A, A);\n."),
            "t.alpha:5:5: error: unsupported: `conv` expression",
        ),
        (
            format!("{head}let B[i] = select domain(X) from A;\n."),
            "t.alpha:4:12: error: unsupported: `select` expression",
        ),
        (
            format!("{head}let B[i] = auto : A[i];\n."),
            "t.alpha:4:12: error: unsupported: `auto` restriction",
        ),
    ];
    for (text, want) in cases {
        let got = parse_err(&text);
        assert_eq!(got, vec![want.to_string()], "for\n{text}");
    }
}

#[test]
fn several_unsupported_constructs_are_all_reported() {
    let got = parse_err(
        "affine s [N] -> { : } inputs A : [N] outputs B, C : [N]\n\
         let B[i] = auto : A[i];\n C[i] = argreduce(max, [j], A[j]); .",
    );
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        got[0].contains("2:12") && got[0].contains("`auto`"),
        "{got:?}"
    );
    assert!(
        got[1].contains("3:9") && got[1].contains("`argreduce`"),
        "{got:?}"
    );
}

#[test]
fn syntax_errors_are_readable() {
    let e = err_at("affine s [N] -> { : } inputs A : [N] outputs B : [N]\nlet B = A\nB = A; .");
    assert!(e.starts_with("t.alpha:3:1: error: expected "), "{e}");
    assert!(e.contains("`;`") && e.contains("`.`"), "{e}");
    assert!(!e.contains("expr") && !e.contains("_"), "{e}");

    let e = err_at("affine s [N] -> { : } inputs A : [N] outputs B : [N]\nlet B[i] = A[i] + ;\n.");
    assert_eq!(e, "t.alpha:2:19: error: expected an expression, found `;`");

    let e = err_at("affine s [N] -> { : } inputs A : [N]");
    assert!(e.starts_with("t.alpha:1:37: error: expected "), "{e}");
    assert!(e.contains("end of file"), "{e}");

    let e = err_at("affine s [N] -> { : N > } .");
    assert!(e.starts_with("t.alpha:1:25: error: expected "), "{e}");
    assert!(e.contains("affine expression"), "{e}");

    let e = err_at("affine s [N] -> { : } outputs B : [N] let B[i] = reduce(-, [j], 1); .");
    assert!(
        e.ends_with(
            "error: expected a reduction operator (`+`, `*`, `max`, `min`, `and`, `or`), found `-`"
        ),
        "{e}"
    );

    let e = err_at("affine s [N] -> { : } let B = 99999999999999999999; .");
    assert!(e.contains("64 bits"), "{e}");
}

#[test]
fn pathological_inputs_do_not_crash() {
    let deep = format!(
        "affine s [] -> {{ : }} outputs B : {{}} let B = {}1{}; .",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    assert!(parse_err(&deep)[0].contains("nested"));
    let long = format!(
        "affine s [] -> {{ : }} outputs B : {{}} let B = 1{}; .",
        " + 1".repeat(3000)
    );
    assert!(parse_err(&long)[0].contains("operands"));
    for text in [
        "",
        ".",
        "affine",
        "affine s [N] -> {",
        "/* unterminated",
        "affine s [N] -> { : } let B = ((((; .",
    ] {
        let f = src(text);
        let _ = parse(&f);
    }
    assert!(parse(&src("")).map(|f| f.items.is_empty()).unwrap_or(false));
}

/// The resource limits leave room for the later stages: the deepest
/// accepted expressions parse and lower on a default 2 MiB test thread.
#[test]
fn deepest_accepted_expressions_parse_and_lower() {
    let forms = [
        ("(", ")"),
        ("-(", ")"),
        ("case { {: i >= 0} : ", "; }"),
        ("{: i >= 0} : (", ")"),
    ];
    for (open, close) in forms {
        let brackets = open.matches(['(', '{', '[']).count();
        let n = 199 / brackets;
        let text = in_system(&format!("{}A[i]{}", open.repeat(n), close.repeat(n)));
        let f = src(&text);
        let ast = parse(&f).unwrap_or_else(|ds| panic!("{}", alphac::diag::render_all(&ds, &f)));
        assert!(alphac::ir::lower::lower(&ast, &f).is_ok(), "{open}");
    }
    // A chain of 399 operands (a tree of depth 400) is accepted; deeper
    // trees and chains of more than 1000 operands are not.
    let text = in_system(&format!("A[i]{}", " + A[i]".repeat(398)));
    let f = src(&text);
    let ast = parse(&f).unwrap_or_else(|ds| panic!("{}", alphac::diag::render_all(&ds, &f)));
    assert!(alphac::ir::lower::lower(&ast, &f).is_ok());
    assert!(parse(&src(&in_system(&format!("A[i]{}", " + A[i]".repeat(1000))))).is_err());
}

mod no_panics {
    use super::*;
    use proptest::prelude::*;

    const TOKENS: &[&str] = &[
        "affine",
        "inputs",
        "outputs",
        "locals",
        "let",
        "reduce",
        "case",
        "if",
        "then",
        "else",
        "val",
        "true",
        "and",
        "or",
        "not",
        "external",
        "constant",
        "package",
        "import",
        "over",
        "when",
        "use",
        "auto",
        "argreduce",
        "conv",
        "select",
        "categorical",
        "int",
        "float",
        "A",
        "B",
        "i",
        "j",
        "k",
        "N",
        "max",
        "sqrt",
        "0",
        "1",
        "2",
        "2i",
        "0.5",
        "1e300",
        "9999999999999999999",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "[[",
        "]]",
        ":",
        ";",
        ",",
        ".",
        ".*",
        "->",
        "@",
        "+",
        "-",
        "*",
        "/",
        "%",
        "<",
        "<=",
        "==",
        "=",
        "!=",
        ">",
        ">=",
        "&&",
        "||",
        "!",
        "//",
        "/*",
        "*/",
    ];

    fn run(text: &str) {
        let f = src(text);
        if let Ok(ast) = parse(&f) {
            let _ = alphac::ir::lower::lower(&ast, &f);
        }
    }

    proptest! {
        /// Token soup, alone or inside a valid system skeleton: parsing and
        /// lowering return values, never panic.
        #[test]
        fn token_soup(toks in proptest::collection::vec(0..TOKENS.len(), 0..40), wrap in any::<bool>()) {
            let body: Vec<&str> = toks.iter().map(|&t| TOKENS[t]).collect();
            let body = body.join(" ");
            let text = if wrap {
                format!("affine s [N] -> {{ : N > 0 }} inputs A : [N] outputs B : [N] let B[i] = {body}; .")
            } else {
                body
            };
            run(&text);
        }

        /// Every example with one character deleted or replaced: no panic.
        #[test]
        fn mutated_examples(which in 0usize..6, pos in any::<prop::sample::Index>(), c in prop::sample::select(vec!["", "(", ")", "[", "]", "{", "}", ";", ".", "-", "k", "0", " "])) {
            let names = ["prefix_sum", "prefix_sum_dependent", "matmul", "cholesky", "jacobi_1d", "nussinov"];
            let text = std::fs::read_to_string(format!("examples/{}.alpha", names[which])).expect("example");
            let chars: Vec<char> = text.chars().collect();
            let p = pos.index(chars.len());
            let mut mutated: String = chars[..p].iter().collect();
            mutated.push_str(c);
            mutated.extend(chars[p + 1..].iter());
            run(&mutated);
        }
    }
}
