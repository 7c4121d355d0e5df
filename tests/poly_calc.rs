//! The `alphac calc` evaluator (`cli::calc::eval`): one test per function
//! with the expected text (worked out by hand), error cases with their
//! positions, and a no-panic property test on random strings and mutations
//! of valid calls.

use alphac::cli::calc::eval;
use alphac::poly::Set;
use proptest::prelude::*;

fn ok(e: &str) -> String {
    match eval(e) {
        Ok(s) => s,
        Err(err) => panic!("{e}: {}", err.render(e)),
    }
}

/// The rendered error of a failing expression.
fn err(e: &str) -> String {
    match eval(e) {
        Ok(s) => panic!("{e} should fail, gave {s}"),
        Err(err) => err.render(e),
    }
}

/// Same integer set (the printed form is the library's; this checks the
/// meaning independently of it).
fn same_set(got: &str, want: &str) {
    let (g, w) = (Set::parse(got).unwrap(), Set::parse(want).unwrap());
    assert!(g.is_equal(&w).unwrap(), "got {got}, want {want}");
}

#[test]
fn intersect_union_subtract() {
    let r = ok("intersect([N] -> { [i] : 0 <= i < N }, [N] -> { [i] : i >= 3 })");
    assert_eq!(r, "[N] -> { [i] : i >= 3 and i < N }");
    let r = ok("union({ [i] : 0 <= i <= 2 }, { [i] : 5 <= i <= 6 })");
    same_set(&r, "{ [i] : 0 <= i <= 2 or 5 <= i <= 6 }");
    assert_eq!(r.matches(';').count(), 1, "{r}");
    assert_eq!(
        ok("subtract({ [i] : 0 <= i <= 9 }, { [i] : 3 <= i <= 9 })"),
        "{ [i] : i >= 0 and i <= 2 }"
    );
    // maps too, and parameters aligned by name
    let r = ok("intersect({ [i] -> [j] : j >= i }, { [i] -> [j] : j <= i })");
    assert!(
        ok(&format!("is_equal({r}, {{ [i] -> [i] }})")) == "true",
        "{r}"
    );
    let r = ok("intersect([N] -> { [i] : 0 <= i < N }, [M] -> { [i] : i < M })");
    assert!(r.starts_with("[N, M] -> "), "{r}");
}

#[test]
fn predicates() {
    assert_eq!(ok("is_empty({ [i] : 0 <= i and 2i = 1 })"), "true");
    assert_eq!(ok("is_empty({ [i] : 0 <= i <= 1 })"), "false");
    assert_eq!(ok("is_empty({ [i] -> [j] : j > i and j < i })"), "true");
    assert_eq!(
        ok("is_subset({ [i] : 1 <= i <= 2 }, { [i] : 0 <= i <= 3 })"),
        "true"
    );
    assert_eq!(
        ok("is_subset({ [i] : 0 <= i <= 3 }, { [i] : 1 <= i <= 2 })"),
        "false"
    );
    assert_eq!(
        ok("is_equal({ [i] : 0 <= i <= 3 and i != 2 }, { [i] : 0 <= i <= 1 or i = 3 })"),
        "true"
    );
    assert_eq!(
        ok("is_equal({ [i] : 0 <= i <= 3 }, { [i] : 0 <= i <= 2 })"),
        "false"
    );
}

#[test]
fn lexmin_lexmax() {
    assert_eq!(
        ok("lexmin([N] -> { [i, j] : 0 <= j <= i < N })"),
        "[N] -> { [0, 0] : N >= 1 }"
    );
    assert_eq!(
        ok("lexmax([N] -> { [i, j] : 0 <= j <= i < N })"),
        "[N] -> { [N - 1, N - 1] : N >= 1 }"
    );
}

#[test]
fn sample() {
    // a single point: the sample is that point
    assert_eq!(ok("sample({ [i, j] : i = 2 and j = 3 })"), "{ [2, 3] }");
    let r = ok("sample({ [i, j] : 2 <= i <= 3 and j = i + 1 })");
    assert_eq!(ok(&format!("dim({r})")), "0");
    assert_eq!(
        ok(&format!(
            "is_subset({r}, {{ [i, j] : 2 <= i <= 3 and j = i + 1 }})"
        )),
        "true"
    );
    assert_eq!(ok("is_empty(sample({ [i] : 2i = 1 }))"), "true");
    let r = ok("sample({ [i] -> [j] : j = i + 1 and 0 <= i <= 5 })");
    assert!(r.contains("->"), "{r}");
}

#[test]
fn project_out() {
    assert_eq!(
        ok("project_out([N] -> { [i, j] : 0 <= j <= i < N }, [i])"),
        "[N] -> { [j] : j >= 0 and j < N }"
    );
    let r = ok("project_out({ [i, j, k] : 0 <= i <= 2 and 0 <= j <= 3 and k = i + j }, [i, k])");
    same_set(&r, "{ [j] : 0 <= j <= 3 }");
    assert_eq!(
        err("project_out({ [i, j] : 0 <= i, j <= 2 }, [k])"),
        "error: project_out: the set has no dimension 'k' at column 43"
    );
}

#[test]
fn hull_and_dim() {
    assert_eq!(
        ok("hull({ [i, j] : 0 <= i <= 5 and j = 2i })"),
        "{ [i, j] : j = 2i }"
    );
    assert_eq!(ok("dim([N] -> { [i, j] : 0 <= i < N and j = N })"), "1");
    assert_eq!(ok("dim({ [i, j, k] : 0 <= i, j, k <= 1 })"), "3");
    assert_eq!(ok("dim({ [i] : 2i = 1 })"), "-1");
    assert_eq!(ok("dim({ [i] -> [j] : 0 <= i <= 3 and j = i })"), "1");
}

#[test]
fn faces() {
    assert_eq!(
        ok("faces({ [i] : 0 <= i <= 4 })"),
        "{ [i] : i >= 0 and i <= 4 }\n{ [0] }\n{ [4] }\n{ [i] : false }"
    );
    let r = ok("faces([N] -> { [i, j] : 0 <= i < N and 0 <= j <= i })");
    assert_eq!(r.lines().count(), 8, "{r}");
}

#[test]
fn apply_reverse_domain_range_compose() {
    let r = ok("apply([N] -> { [i] : 0 <= i < N }, { [i] -> [i + 1] })");
    same_set(&r, "[N] -> { [i] : 1 <= i <= N }");
    let r = ok("reverse({ [i] -> [i + 1] })");
    assert_eq!(
        ok(&format!("is_equal({r}, {{ [j] -> [j - 1] }})")),
        "true",
        "{r}"
    );
    assert_eq!(
        ok("domain({ [i] -> [j] : 0 <= i < j <= 4 })"),
        "{ [i] : i >= 0 and i <= 3 }"
    );
    assert_eq!(
        ok("range({ [i] -> [j] : 0 <= i < j <= 4 })"),
        "{ [j] : j >= 1 and j <= 4 }"
    );
    // M1 first, then M2: i -> i + 1 -> 2(i + 1)
    assert_eq!(
        ok("compose({ [i] -> [i + 1] }, { [j] -> [2j] })"),
        "{ [i] -> [2i + 2] }"
    );
    assert_eq!(
        ok("compose({ [j] -> [2j] }, { [i] -> [i + 1] })"),
        "{ [j] -> [2j + 1] }"
    );
}

#[test]
fn points_and_count() {
    assert_eq!(
        ok("points([N, M] -> { [i, j] : 0 <= i < N and 0 <= j < M }, N=2, M=3)"),
        "[0, 0]\n[0, 1]\n[0, 2]\n[1, 0]\n[1, 1]\n[1, 2]"
    );
    // bindings in any order
    assert_eq!(
        ok("points([N, M] -> { [i] : N <= i < M }, M=7, N=5)"),
        "[5]\n[6]"
    );
    assert_eq!(ok("points({ [i] : 2i = 1 })"), "");
    assert_eq!(ok("count([N] -> { [i, j] : 0 <= j <= i < N }, N=5)"), "15");
    assert_eq!(
        ok("count(intersect([N] -> { [i] : 0 <= i < N }, [N] -> { [i] : i >= 3 }), N=10)"),
        "7"
    );
    assert_eq!(
        ok("count({ [i] -> [j] : 0 <= i <= 2 and 0 <= j <= i })"),
        "6"
    );
    assert_eq!(ok("count([N] -> { [i] : 0 <= i < N }, N=-3)"), "0");
}

#[test]
fn complexity() {
    assert_eq!(
        ok("complexity([N, K] -> {[i,k,j] : 0 <= i < N and 0 <= k < K and 0 <= j < N})"),
        "O(N^2*K)"
    );
    assert_eq!(
        ok("complexity([N] -> { [i, j] : 0 <= j <= i < N })"),
        "O(N^2)"
    );
    assert_eq!(ok("complexity({ [i] : 0 <= i <= 9 })"), "O(1)");
}

#[test]
fn cli_help_examples() {
    // a bare set prints in the library's normalized notation
    let r = ok("[N] -> { [i, j] : 0 <= j <= i < N }");
    same_set(&r, "[N] -> { [i, j] : 0 <= j <= i < N }");
    assert_eq!(r, ok(&r), "printing is stable");
    assert_eq!(
        ok("complexity([N, K] -> { [i, k] : 0 <= i < N and 0 <= k < K })"),
        "O(N*K)"
    );
    assert_eq!(
        ok("points({ [i, j] : 0 <= i, j < 3 and i != j })"),
        "[0, 1]\n[0, 2]\n[1, 0]\n[1, 2]\n[2, 0]\n[2, 1]"
    );
}

#[test]
fn nested_calls() {
    assert_eq!(
        ok("count(union(domain({ [i] -> [j] : 0 <= i < j <= 4 }), { [i] : 10 <= i <= 11 }))"),
        "6"
    );
}

#[test]
fn errors_with_positions() {
    assert_eq!(
        err("frob({ [i] })"),
        "error: unknown function 'frob' at column 1"
    );
    assert_eq!(
        err("intersect({ [i] : i >= 0 })"),
        "error: intersect expects 2 arguments, found 1 at column 1"
    );
    assert_eq!(
        err("intersect({ [i] : i >= 0 }, { [i] -> [j] })"),
        "error: intersect: argument 2 must be a set like argument 1, found a map at column 29"
    );
    assert_eq!(
        err("domain({ [i] : i >= 0 })"),
        "error: domain: argument 1 must be a map, found a set at column 8"
    );
    assert_eq!(
        err("apply({ [i] -> [i] }, { [i] -> [i] })"),
        "error: apply: argument 1 must be a set, found a map at column 7"
    );
    // bad isl text: the position inside the argument
    assert!(err("union({ [i] : i >= }, { [i] })").ends_with("at column 20"));
    assert!(err("count({ [i] : i <= k })").ends_with("at column 20"));
    assert_eq!(
        err("points({ [i] : 0 <= i <= 4 }, N=5)"),
        "error: points: the set has no parameter 'N' at column 31"
    );
    assert_eq!(
        err("points([N, M] -> { [i] : 0 <= i < N + M }, N=2)"),
        "error: points: missing parameter value(s): M at column 1"
    );
    assert!(err("count({ [i] : i >= 0 })").contains("unbounded"));
    assert!(err("count([N] -> { [i, j] : 0 <= i, j < N }, N=100000)").contains("limit"));
    assert_eq!(err(""), "error: expected an expression at column 1");
    assert_eq!(
        err("intersect({ [i] }, { [i] }) x"),
        "error: unexpected text after ')' at column 28"
    );
    assert!(err("intersect({ [i] }, { [i] }").contains("unclosed"));
    assert_eq!(
        err("count({ [i] : 0 <= i <= 1 }, N)"),
        "error: expected a call 'N(...)', a set or a map at column 30"
    );
    assert!(err("count({ [i] : 0 <= i <= 1 }, [N])").contains("binding"));
    assert!(err("[i, j]").contains("name list"));
    // character columns with non-ASCII text before the error
    assert_eq!(err("x(é)y"), "error: unexpected text after ')' at column 5");
    let e = eval("x(é)y").unwrap_err();
    assert_eq!(e.pos, 5); // bytes
    assert_eq!(
        e.to_string(),
        "error: unexpected text after ')' at column 6"
    );
}

#[test]
fn extreme_values_are_errors_not_panics() {
    let cases = [
        "count([N] -> { [i] : 0 <= i < N }, N=9223372036854775807)",
        "count([N] -> { [i] : -N <= i < N }, N=-9223372036854775808)",
        "points({ [i] : 0 <= i <= 9223372036854775807 })",
        "count({ [i, j] : 0 <= i <= 9223372036854775807 and 0 <= j <= 9223372036854775807 })",
        "complexity([N] -> { [i] : 0 <= 9223372036854775807i < N })",
        "faces({ [i, j] : 4611686018427387904i + 4611686018427387904j >= 3 and i <= 5 })",
        "sample({ [i] : i = 9223372036854775807 })",
        "dim({ })",
        "faces({ : })",
        "complexity({ [i] -> [j] : 0 <= i < 3 and j = i })",
    ];
    for c in cases {
        let _ = eval(c);
    }
}

fn valid_calls() -> Vec<&'static str> {
    vec![
        "intersect([N] -> { [i] : 0 <= i < N }, [N] -> { [i] : i >= 3 })",
        "count([N] -> { [i, j] : 0 <= j <= i < N }, N=5)",
        "points([N, M] -> { [i, j] : 0 <= i < N and 0 <= j < M }, N=2, M=3)",
        "project_out({ [i, j] : 0 <= j <= i < 4 }, [i])",
        "compose({ [i] -> [i + 1] }, { [j] -> [2j] })",
        "faces({ [i, j] : 0 <= i <= 2 and 0 <= j <= i })",
        "complexity([N] -> { [i, j] : 0 <= j <= i < N })",
        "lexmin({ [i, j] : 0 <= j <= i < 3 })",
        "subtract({ [i] : 0 <= i <= 9 }, { [i] : 3 <= i <= 9 })",
        "apply({ [i] : 0 <= i < 3 }, { [i] -> [j] : j = 2i })",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_strings_never_panic(s in "[a-z_(){}\\[\\],:;=<>+*0-9 ,.é-]{0,40}") {
        let _ = eval(&s);
    }

    #[test]
    fn mutations_never_panic(
        k in 0usize..10,
        edits in prop::collection::vec((0usize..200, 0u8..3, prop::sample::select(
            vec!['(', ')', '[', ']', '{', '}', ',', ':', '=', '-', '>', '<', 'i', 'N', '0', '7', ' ', 'é', ';'])), 1..4),
    ) {
        let mut s: Vec<char> = valid_calls()[k].chars().collect();
        for (at, op, c) in edits {
            let at = at % (s.len() + 1);
            match op {
                0 => s.insert(at, c),
                1 if at < s.len() => { s.remove(at); }
                _ if at < s.len() => s[at] = c,
                _ => s.push(c),
            }
        }
        let text: String = s.into_iter().collect();
        if let Err(e) = eval(&text) {
            // the error position is inside the text (or at its end)
            prop_assert!(e.pos <= text.len(), "{text}: {e:?}");
            prop_assert!(e.render(&text).starts_with("error: "));
        }
    }
}

/// As in isl: a parameter-only set intersects the parameters of the other
/// argument (either order), and a set of one point prints as its tuple of
/// values.
#[test]
fn isl_conventions_parameter_sets_and_single_points() {
    let r = ok("intersect([N] -> { [i] : 0 <= i <= N }, [N] -> { : N = 3 })");
    same_set(&r, "[N] -> { [i] : N = 3 and 0 <= i <= 3 }");
    let r2 = ok("intersect([N] -> { : N = 3 }, [N] -> { [i] : 0 <= i <= N })");
    same_set(&r2, &r);
    // Parameters are aligned first (the parameter set may name others).
    let r = ok("intersect([N] -> { [i] : 0 <= i <= N }, [M] -> { : M = 2 })");
    same_set(&r, "[N, M] -> { [i] : M = 2 and 0 <= i <= N }");
    // One point.
    assert_eq!(ok("{ [i, j] : i = 2 and j = 1 }"), "{ [2, 1] }");
    assert_eq!(
        ok("lexmin({ [i, j] : 0 <= i <= 3 and 1 <= j <= 2 })"),
        "{ [0, 1] }"
    );
    assert_eq!(
        ok("[N] -> { [i] : i = N and N >= 0 }"),
        "[N] -> { [N] : N >= 0 }"
    );
    assert_eq!(ok("{ S[i] : i = -4 }"), "{ S[-4] }");
    // Printed points parse back to the same set.
    for t in [
        "{ [i, j] : i = 2 and j = 1 }",
        "[N] -> { [i, j] : i = N and j = 2N + 1 and N > 0 }",
    ] {
        let printed = ok(t);
        same_set(&printed, t);
    }
    // Not one point: the names stay.
    assert_eq!(
        ok("{ [i, j] : i = 2 and 0 <= j <= 3 }"),
        "{ [i, j] : i = 2 and j >= 0 and j <= 3 }"
    );
}
