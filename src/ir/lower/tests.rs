//! Unit tests of lowering (round trips through the printer, canonical
//! forms, errors).

use super::*;
use crate::ir::print::{program_to_alpha, without_spans};

fn lower_text(text: &str) -> Result<Program, Vec<String>> {
    let src = SourceFile::new("t.alpha", text);
    let ast = crate::syntax::parse(&src)
        .map_err(|ds| ds.iter().map(|d| d.one_line(&src)).collect::<Vec<_>>())?;
    lower(&ast, &src).map_err(|ds| ds.iter().map(|d| d.one_line(&src)).collect())
}

fn ok(text: &str) -> Program {
    match lower_text(text) {
        Ok(p) => p,
        Err(es) => panic!("{}", es.join("\n")),
    }
}

fn errs(text: &str) -> Vec<String> {
    match lower_text(text) {
        Ok(p) => panic!("accepted:\n{}", program_to_alpha(&p)),
        Err(es) => es,
    }
}

/// The right-hand side of the first equation of a one-input system.
fn rhs(decls: &str, eq: &str) -> Expr {
    let p = ok(&format!(
        "affine s [N] -> {{ : N > 2 }} {decls} let {eq}; ."
    ));
    p.systems[0].equations[0].expr.clone()
}

/// The affine function that an int right-hand side folds into.
fn rhs_index(decls: &str, eq: &str) -> Aff {
    match rhs(decls, eq).kind {
        ExprKind::Index(a) => a,
        k => panic!("not an affine index: {k:?}"),
    }
}

/// The access function of a right-hand side that is one affine read.
fn rhs_access(decls: &str, eq: &str) -> MultiAff {
    match rhs(decls, eq).kind {
        ExprKind::Read { access, .. } => access,
        k => panic!("not an affine read: {k:?}"),
    }
}

/// The reduction of a right-hand side that is one reduction.
fn rhs_reduction(decls: &str, eq: &str) -> Reduction {
    match rhs(decls, eq).kind {
        ExprKind::Reduce(r) => *r,
        k => panic!("not a reduction: {k:?}"),
    }
}

#[test]
fn examples_round_trip_through_the_printer() {
    for entry in std::fs::read_dir("examples").expect("examples/") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("example");
        let p1 = ok(&text);
        let printed = program_to_alpha(&p1);
        let p2 = match lower_text(&printed) {
            Ok(p) => p,
            Err(es) => panic!(
                "{}: printed text rejected:\n{printed}\n{}",
                path.display(),
                es.join("\n")
            ),
        };
        assert_eq!(
            without_spans(&p1),
            without_spans(&p2),
            "{}:\n{printed}",
            path.display()
        );
    }
}

#[test]
fn more_programs_round_trip_through_the_printer() {
    let programs = [
        "constant K = 3 external g(1)\n\
         affine s [N] -> { : N > K } inputs A : [N] outputs B : [N] locals W : [K]\n\
         let W[k] = g(val(k -> k)); B[i] = A[i] * W[0] + categorical([k], {: 0 <= k < K} : W[k]); .",
        "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : [N]\n\
         let B[i] = reduce(max, (i2, k -> i2), {: 0 <= k <= i2} : A[k]); .",
        "affine s [N] -> { : N > 0 } inputs A : {[i, j] : 0 <= i, j < N} outputs B : {[i, j] : 0 <= i, j < N}\n\
         let B = (a, b -> b, a) @ A; .",
        "affine s [N, M] -> { : N > 0 and M > 0 } inputs A : [N, M]; z : int [N] outputs B : [N]; c : bool {}\n\
         let B[i] = if z[i] >= 0 and z[i] < M then A[i, z[i]] else -1.5 * normal(0.0, 1.0);\n\
             c = reduce(or, [i], {: 0 <= i < N} : A[i, 0] > 0.0); .",
        "affine s [N] -> { : N > 3 } inputs A : [N] outputs B : [N]\n\
         let B[i] = case { {: i != 2} : A[i]; {: i == 2} : -A[i] % 2.0; }; .",
    ];
    for text in programs {
        let p1 = ok(text);
        let printed = program_to_alpha(&p1);
        let p2 = match lower_text(&printed) {
            Ok(p) => p,
            Err(es) => panic!("printed text rejected:\n{printed}\n{}", es.join("\n")),
        };
        assert_eq!(without_spans(&p1), without_spans(&p2), "\n{printed}");
    }
}

#[test]
fn a_case_piece_without_restriction_is_defined_where_it_reads() {
    // The second piece reads B[i - 1]: it covers 1 <= i < N.
    let p = ok(
        "affine s [N] -> { : N > 0 } inputs X : [N] outputs B : [N]\n\
                let B[i] = case { {: i == 0} : X[0]; B[i - 1] + X[i]; }; .",
    );
    let ExprKind::Case(pieces) = &p.systems[0].equations[0].expr.kind else {
        panic!()
    };
    for i in -1..5 {
        assert_eq!(
            pieces[1].0.contains(&[4], &[i]),
            (1..4).contains(&i),
            "i = {i}"
        );
    }
    let es = errs(
        "affine s [N] -> { : N > 0 } inputs X : [N] outputs B : [N]\n\
                   let B[i] = case { {: i <= 1} : X[0]; B[i - 1] + X[i]; }; .",
    );
    assert!(es[0].contains("overlap at i = 1 when N = 2"), "{es:?}");
}

#[test]
fn function_names_must_not_hide_parameters() {
    let es = errs(
        "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : [N] let B[i] = (N -> N) @ A; .",
    );
    assert!(
        es[0].contains("duplicate name `N`: it is already a parameter"),
        "{es:?}"
    );
    let es = errs("affine s [N] -> { : N > 0 } inputs A : [N] outputs B : int [N] let B[i] = val(j, j -> j); .");
    assert!(es[0].contains("the function has 2 argument(s)"), "{es:?}");
    let es = errs("affine s [N] -> { : N > 0 } inputs A : {[i, j] : 0 <= i, j < N} outputs B : {[i, j] : 0 <= i, j < N} let B[i, j] = (a, a -> a, a) @ A; .");
    assert!(es[0].contains("duplicate name `a`"), "{es:?}");
    // Repeating the names in scope is the ordinary case.
    ok("affine s [N] -> { : N > 0 } inputs A : [N] outputs B : int [N] let B[i] = val(i -> i); .");
}

#[test]
fn affine_int_arithmetic_folds_into_index() {
    let a = rhs_index(
        "inputs A : [N] outputs B : int [N]",
        "B[i] = 2*i - (N - 1) + 3",
    );
    assert_eq!(
        (a.dim_coeffs(), a.param_coeffs(), a.constant_term()),
        (&[2][..], &[-1][..], 4)
    );
    let e = rhs("outputs B : int [N]", "B[i] = 2 * 3 - 1");
    assert_eq!(e.kind, ExprKind::IntConst(5));
    let a = rhs_index("outputs B : int [N]", "B[i] = val(j -> j + N)");
    assert_eq!((a.dim_coeffs(), a.param_coeffs()), (&[1][..], &[1][..]));
    // A product of two indices is not affine: it stays a product.
    let e = rhs("outputs B : int [N]", "B[i] = i * i");
    assert!(
        matches!(e.kind, ExprKind::Binary(BinOp::Mul, _, _)),
        "{e:?}"
    );
    let e = rhs("outputs B : [N]", "B[i] = -2.5");
    assert_eq!(e.kind, ExprKind::FloatConst(-2.5));
}

#[test]
fn dependences_and_whole_variables_become_reads() {
    let access = rhs_access(
        "inputs A : {[i, j] : 0 <= i, j < N} outputs B : {[i, j] : 0 <= i, j < N}",
        "B = (a, b -> b, a) @ A",
    );
    assert_eq!(access.get(0).dim_coeffs(), [0, 1]);
    assert_eq!(access.get(1).dim_coeffs(), [1, 0]);
    let access = rhs_access(
        "inputs A : [N] outputs B : [N]",
        "B[i] = (j -> j + 2) @ (k -> k - 2) @ A",
    );
    let a0 = access.get(0);
    assert_eq!((a0.dim_coeffs(), a0.constant_term()), (&[1][..], 0));
    let e = rhs("inputs x : {} outputs B : [N]", "B[i] = x");
    assert!(matches!(&e.kind, ExprKind::Read { access, .. } if access.n_out() == 0));
    let e = rhs(
        "inputs A, z : int [N] outputs B : int [N]",
        "B[i] = A[z[i]]",
    );
    assert!(matches!(e.kind, ExprKind::IndirectRead { .. }), "{e:?}");
}

#[test]
fn reductions_merge_their_restriction_and_reads() {
    let r = rhs_reduction(
        "inputs A : [N] outputs B : [N]",
        "B[i] = reduce(+, [j], {: j <= i} : A[j])",
    );
    assert_eq!(r.dims(), ["i", "j"]);
    assert_eq!(r.proj.n_out(), 1);
    assert_eq!(r.proj.get(0).dim_coeffs(), [1, 0]);
    assert!(matches!(r.body.kind, ExprKind::Read { .. }));
    // j <= i, and 0 <= j <= N - 1 from A's domain.
    for (pt, inside) in [
        ([3, 0], true),
        ([3, 3], true),
        ([3, 4], false),
        ([3, -1], false),
    ] {
        assert_eq!(r.body_domain.contains(&[5], &pt), inside, "{pt:?}");
    }
    let r = rhs_reduction(
        "inputs A : [N] outputs B : [N]",
        "B[i] = reduce(max, (i2, k -> i2), {: 0 <= k < i2} : A[k])",
    );
    assert_eq!(r.dims(), ["i2", "k"]);
    assert_eq!(r.op, ReduceOp::Max);
}

#[test]
fn promotion_and_types() {
    let e = rhs(
        "inputs A : [N] outputs B : [N]",
        "B[i] = if i > 0 then 1 else A[i]",
    );
    assert_eq!(e.ty, ElemType::Float);
    let e = rhs(
        "inputs z : int [N] outputs B : int [N]",
        "B[i] = max(z[i], 0, 1)",
    );
    assert_eq!(e.ty, ElemType::Int);
    let e = rhs("outputs B : bool [N]", "B[i] = bernoulli(0.5) and i < 2");
    assert_eq!(e.ty, ElemType::Bool);
    let es = errs(
        "affine s [N] -> { : } inputs A : [N] outputs B : bool [N] let B[i] = A[i] and true; .",
    );
    assert!(
        es[0].contains("type error") && es[0].contains("`and` needs bools"),
        "{es:?}"
    );
    let es = errs("affine s [N] -> { : } inputs A : [N] outputs B : [N] let B[i] = case { {: i < 1} : true; {: i >= 1} : A[i]; }; .");
    assert!(es[0].contains("`case` branches disagree"), "{es:?}");
}

#[test]
fn stochastic_call_sites_are_numbered_in_pre_order() {
    let e = rhs(
        "outputs B : [N]",
        "B[i] = normal(uniform(), 1.0) + uniform()",
    );
    let mut sites = Vec::new();
    fn collect(e: &Expr, out: &mut Vec<u32>) {
        match &e.kind {
            ExprKind::Random(_, args, s) => {
                out.push(s.ordinal);
                args.iter().for_each(|a| collect(a, out));
            }
            ExprKind::Binary(_, a, b) => {
                collect(a, out);
                collect(b, out);
            }
            _ => {}
        }
    }
    collect(&e, &mut sites);
    assert_eq!(sites, vec![0, 1, 2]);
}

#[test]
fn several_independent_errors_are_reported_together() {
    let es = errs(
        "affine s [N] -> { : N > 0 } inputs A : [N] outputs B, C, D : [N]\n\
         let B[i] = Q[i];\nC[i] = sqrt(1.0, 2.0); .",
    );
    assert_eq!(es.len(), 3, "{es:?}");
    assert!(
        es[0].contains("2:12") && es[0].contains("unknown variable `Q`"),
        "{es:?}"
    );
    assert!(
        es[1].contains("3:8:") && es[1].contains("`sqrt` takes 1"),
        "{es:?}"
    );
    assert!(es[2].contains("`D` is never defined"), "{es:?}");
}

#[test]
fn valid_programs_with_cases_and_restrictions_are_accepted() {
    ok(
        "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : [N]\n\
        let B[i] = case { {: i == 0} : A[i]; {: i > 0} : B[i-1] + A[i]; }; .",
    );
    ok(
        "affine s [N] -> { : N > 1 } inputs A : [N] outputs B : [N]\n\
        let B[i] = case { {: i < N - 1} : A[i + 1]; {: i == N - 1} : {: i >= 0} : A[i]; }; .",
    );
    // A reduction body may read outside A: its domain is cut down to A's.
    ok(
        "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : [N]\n\
        let B[i] = reduce(+, [j], A[i + j]); .",
    );
    // `!=` and `or` in a case.
    ok(
        "affine s [N] -> { : N > 3 } inputs A : [N] outputs B : [N]\n\
        let B[i] = case { {: i != 2} : A[i]; {: i == 2} : 0.0; }; .",
    );
    ok("constant K = 3 external g(1) affine s [N] -> { : N > K } inputs A : [N] outputs B : [N] locals W : [K]\n\
        let W[k] = g(val(k -> k)); B[i] = A[i] * W[0] + categorical([k], {: 0 <= k < K} : W[k]); .");
}

#[test]
fn unbounded_variable_domains_are_checked_too() {
    // B is declared over i >= 0 (unbounded): that is an error of its own,
    // and the equation's checks still run: the restriction excludes B[0];
    // the read A[i] is outside A beyond N.
    let es = errs(
        "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : {[i] : i >= 0}\n\
         let B[i] = {: i >= 1} : 1.0; .",
    );
    assert!(
        es[0].contains("domain of output `B` is unbounded") && es[0].contains("+i"),
        "{es:?}"
    );
    assert!(es[1].contains("`B[0]` is excluded"), "{es:?}");
    let es = errs(
        "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : {[i] : i >= 0}\n\
         let B[i] = A[i]; .",
    );
    assert!(
        es[0].contains("domain of output `B` is unbounded"),
        "{es:?}"
    );
    assert!(
        es[1].contains("read of `A[1]`") && es[1].contains("N = 1"),
        "{es:?}"
    );
    // Bounded only through the context: fine.
    ok("affine s [N] -> { : 0 < N < 10 } inputs A : {[i] : i >= 0 and i < N} .");
    // Unbounded in one of two dimensions, below: named.
    let es = errs("affine s [N] -> { : N > 0 } inputs A : {[i, j] : 0 <= i < N and j <= i} .");
    assert!(
        es[0].contains("input `A`") && es[0].contains("-j"),
        "{es:?}"
    );
}

#[test]
fn domain_errors_name_a_witness() {
    let es =
        errs("affine s [N] -> { : N > 0 } inputs A : [N] outputs B : [N] let B[i] = A[i + 1]; .");
    assert_eq!(es.len(), 1, "{es:?}");
    assert!(
        es[0].contains("read of `A[1]`") && es[0].contains("i = 0 when N = 1"),
        "{es:?}"
    );
    let es = errs(
        "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : [N]\n\
         let B[i] = reduce(+, (i, k -> i), {: k >= 0} : A[i] * 1.0); .",
    );
    assert!(es[0].contains("unbounded"), "{es:?}");
    let es = errs(
        "affine s [N] -> { : N > 0 } inputs A : [N] outputs B : int [N]\n\
         let B[i] = categorical([k], {: k >= 0} : A[i]); .",
    );
    assert!(es[0].contains("unbounded"), "{es:?}");
}

/// A random constraint over `i`, `j` and the parameter `N`, rendered
/// as `.alpha` text together with a direct evaluator.
#[derive(Debug, Clone)]
enum C {
    Cmp(Vec<[i64; 4]>, u8, Vec<[i64; 4]>),
    And(Box<C>, Box<C>),
    Or(Box<C>, Box<C>),
}

const OPS: [&str; 7] = ["<", "<=", ">", ">=", "=", "==", "!="];

fn lin_text(l: &[i64; 4]) -> String {
    // Written with juxtaposition (`2i`), explicit `*` and parentheses.
    let sign = if l[0] < 0 { "-" } else { "" };
    format!(
        "{sign}{}i + {} * j - ({}) * N + ({})",
        l[0].abs(),
        l[1],
        -l[2],
        l[3]
    )
}

fn lin_eval(l: &[i64; 4], i: i64, j: i64, n: i64) -> i64 {
    l[0] * i + l[1] * j + l[2] * n + l[3]
}

impl C {
    fn text(&self) -> String {
        match self {
            C::Cmp(a, op, b) => {
                let side =
                    |v: &Vec<[i64; 4]>| v.iter().map(lin_text).collect::<Vec<_>>().join(", ");
                format!("{} {} {}", side(a), OPS[*op as usize], side(b))
            }
            C::And(a, b) => format!("({} and {})", a.text(), b.text()),
            C::Or(a, b) => format!("({} || {})", a.text(), b.text()),
        }
    }
    fn eval(&self, i: i64, j: i64, n: i64) -> bool {
        match self {
            C::Cmp(a, op, b) => a.iter().all(|x| {
                b.iter().all(|y| {
                    let (x, y) = (lin_eval(x, i, j, n), lin_eval(y, i, j, n));
                    match op {
                        0 => x < y,
                        1 => x <= y,
                        2 => x > y,
                        3 => x >= y,
                        4 | 5 => x == y,
                        _ => x != y,
                    }
                })
            }),
            C::And(a, b) => a.eval(i, j, n) && b.eval(i, j, n),
            C::Or(a, b) => a.eval(i, j, n) || b.eval(i, j, n),
        }
    }
}

fn arb_c() -> impl proptest::strategy::Strategy<Value = C> {
    use proptest::prelude::*;
    let lin = prop::array::uniform4(-2i64..=2);
    let side = prop::collection::vec(lin, 1..3);
    let leaf = (side.clone(), 0u8..7, side).prop_map(|(a, op, b)| C::Cmp(a, op, b));
    leaf.prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| C::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner).prop_map(|(a, b)| C::Or(Box::new(a), Box::new(b))),
        ]
    })
}

proptest::proptest! {
    /// Parsing and lowering a domain constraint (comparisons, chains of
    /// tuples, `!=`, `and`, `||`, `2i`, `*`, parentheses) gives a
    /// domain with exactly the points that satisfy the constraint.
    #[test]
    fn lowered_domains_match_direct_evaluation(c in arb_c()) {
        // Within a box (an unbounded variable domain is an error): the
        // points checked lie inside it.
        let text = format!(
            "affine s [N] -> {{ : }} inputs A : {{ [i, j] : -5 <= i <= 5 and -5 <= j <= 5 and ({}) }} .",
            c.text()
        );
        let p = ok(&text);
        let d = &p.systems[0].vars[0].domain;
        for n in 0..3 {
            for i in -3..=3 {
                for j in -3..=3 {
                    proptest::prop_assert_eq!(d.contains(&[n], &[i, j]), c.eval(i, j, n), "{} at i={} j={} N={}", text, i, j, n);
                }
            }
        }
    }
}

#[test]
fn reduction_ids_are_pre_order_per_equation_and_survive_the_round_trip() {
    let text = "affine s [N] -> { : N > 3 } inputs A : [N]\n\
         outputs B : [N]; C : [N]; D : {}\n\
         let B[i] = reduce(+, [k], {: 0 <= k <= i} : A[k]);\n\
             C[i] = reduce(max, [k], {: 0 <= k <= i} : A[k] * reduce(+, [l], {: 0 <= l <= k} : A[l]))\n\
                  + reduce(+, [k], {: i <= k < N} : A[k]);\n\
             D = reduce(+, [i], {: 0 <= i < N} : B[i] + C[i]); .";
    let p1 = ok(text);
    let ids = |p: &Program| -> Vec<ReductionId> {
        p.systems[0].reductions().iter().map(|r| r.id).collect()
    };
    let id = |var, ordinal| ReductionId { var, ordinal };
    // Variables: A = 0, B = 1, C = 2, D = 3; pre-order within C's equation
    // (the outer max, its nested sum, then the second sum).
    let want = vec![id(1, 0), id(2, 0), id(2, 1), id(2, 2), id(3, 0)];
    assert_eq!(ids(&p1), want);
    let ExprKind::Binary(_, a, b) = &p1.systems[0].equations[1].expr.kind else {
        panic!("C is a sum")
    };
    assert_eq!(a.reductions()[0].op, ReduceOp::Max);
    assert_eq!(a.reductions()[1].id, id(2, 1));
    assert_eq!(b.reductions()[0].id, id(2, 2));
    let printed = program_to_alpha(&p1);
    let p2 = match lower_text(&printed) {
        Ok(p) => p,
        Err(es) => panic!("printed text rejected:\n{printed}\n{}", es.join("\n")),
    };
    assert_eq!(ids(&p2), want, "\n{printed}");
    // Renumbering a numbered system changes nothing.
    let mut s = p2.systems[0].clone();
    s.number_reductions();
    assert_eq!(s, p2.systems[0]);
}
