//! Asymptotic size (`poly::complexity`): the examples of the task and of
//! the SDR paper, and a check against point counting: scaling the
//! parameters by 2 multiplies the count by about `2^d`, `d` the predicted
//! total degree.

use alphac::poly::complexity::{basic_bounds, basic_complexity, complexity, sum_of_bounds};
use alphac::poly::{BasicSet, Complexity, Monomial, PolyError, Set};

fn cx(s: &str) -> String {
    complexity(&Set::parse(s).unwrap()).unwrap().to_string()
}

#[test]
fn triangle_is_quadratic() {
    assert_eq!(cx("[N] -> { [i, j] : 0 <= j <= i < N }"), "O(N^2)");
}

#[test]
fn product_with_two_parameters() {
    assert_eq!(
        cx("[N, K] -> { [i, k, j] : 0 <= i < N and 0 <= k < K and 0 <= j < N }"),
        "O(N^2*K)"
    );
    // parameter order is declaration order
    assert_eq!(
        cx("[K, N] -> { [i, k, j] : 0 <= i < N and 0 <= k < K and 0 <= j < N }"),
        "O(K*N^2)"
    );
}

#[test]
fn equalities_lower_the_degree() {
    assert_eq!(cx("[N] -> { [i, j] : 0 <= i < N and j = i }"), "O(N)");
    assert_eq!(
        cx("[N] -> { [i, j, k] : 0 <= i < N and 0 <= j < N and k = i + j }"),
        "O(N^2)"
    );
}

#[test]
fn unions_sum_their_pieces() {
    assert_eq!(
        cx("[N, K] -> { [i] : 0 <= i < N or 0 <= i < K }"),
        "O(N + K)"
    );
    // overlapping pieces are not counted twice; the line is dominated
    assert_eq!(
        cx("[N] -> { [i, j] : 0 <= i < N and 0 <= j < N; [i, j] : 0 <= i < N and j = 0 }"),
        "O(N^2)"
    );
    assert_eq!(
        cx("[N, K] -> { [i, j] : 0 <= i < N and 0 <= j < N; [i, j] : 0 <= i < K and j = 0 }"),
        "O(N^2 + K)"
    );
}

#[test]
fn bounded_and_empty_sets() {
    assert_eq!(cx("{ [i] : 0 <= i <= 9 }"), "O(1)");
    assert_eq!(
        cx("[N] -> { [i, j] : 0 <= i <= 3 and 0 <= j <= 3 }"),
        "O(1)"
    );
    // a parameter bounded by the set does not grow
    assert_eq!(cx("[N] -> { [i] : 0 <= i < N and N <= 10 }"), "O(1)");
    assert_eq!(cx("[N] -> { [i] : 0 <= i < N and i > N }"), "O(0)");
}

#[test]
fn non_product_shapes_are_bounded_by_all_maximal_monomials() {
    assert_eq!(
        cx("[N, K] -> { [i, j] : i >= 0 and j >= 0 and i + j < N + K }"),
        "O(N^2 + N*K + K^2)"
    );
    assert_eq!(cx("[N, K] -> { [i] : 0 <= i < N + K }"), "O(N + K)");
    // min(N, K) is bounded by either parameter: the earlier one is shown
    assert_eq!(cx("[N, K] -> { [i] : 0 <= i < N and i < K }"), "O(N)");
    assert_eq!(cx("[K, N] -> { [i] : 0 <= i < N and i < K }"), "O(K)");
}

#[test]
fn unbounded_sets_are_errors() {
    let s = Set::parse("[N] -> { [i] : i >= N }").unwrap();
    assert!(matches!(complexity(&s), Err(PolyError::Unbounded(_))));
    let s = Set::parse("{ [i, j] : 0 <= i <= 3 and j >= i }").unwrap();
    assert!(matches!(complexity(&s), Err(PolyError::Unbounded(_))));
}

#[test]
fn add_and_display() {
    let p = vec!["N".to_string(), "K".to_string()];
    let m = |a: u32, b: u32| Monomial { exps: vec![a, b] };
    let a = Complexity::new(p.clone(), vec![m(1, 1)]);
    let b = Complexity::new(p.clone(), vec![m(2, 1)]);
    assert_eq!(a.add(&b).unwrap().to_string(), "O(N^2*K)");
    let c = Complexity::new(p.clone(), vec![m(0, 1), m(1, 0)]);
    assert_eq!(c.to_string(), "O(N + K)");
    assert_eq!(c.terms.len(), 2);
    let d = Complexity::new(p.clone(), vec![m(0, 2), m(1, 1), m(2, 0), m(0, 0)]);
    assert_eq!(d.to_string(), "O(N^2 + N*K + K^2)");
    assert_eq!(Complexity::one(p.clone()).to_string(), "O(1)");
    let other = Complexity::one(vec!["M".to_string()]);
    assert!(a.add(&other).is_err());
}

/// Number of integer points at the given parameter values.
fn count(s: &Set, params: &[i64]) -> usize {
    s.points(params).unwrap().len()
}

#[test]
fn degree_matches_point_counts() {
    let cases = [
        "[N] -> { [i, j] : 0 <= j <= i < N }",
        "[N] -> { [i] : 0 <= i < N }",
        "[N] -> { [i, j, k] : 0 <= i <= j <= k < N }",
        "[N] -> { [i, j] : 0 <= i < N and j = 2i }",
        "[N] -> { [i, j] : 0 <= i < N and 0 <= j < 5 }",
        "[N, K] -> { [i, j] : 0 <= i < N and 0 <= j < K }",
        "[N, K] -> { [i, j] : i >= 0 and j >= 0 and i + j < N + K }",
        "[N, K] -> { [i] : 0 <= i < N or 0 <= i < K }",
        "[N, K] -> { [i, k, j] : 0 <= i < N and 0 <= k < K and 0 <= j < N }",
        "[N, K] -> { [i, j] : 0 <= i < N and i <= j < i + K }",
        "[N, K] -> { [i, j] : 0 <= i < N and 0 <= j < N and i + j >= N - K }",
    ];
    for text in cases {
        let s = Set::parse(text).unwrap();
        let c = complexity(&s).unwrap();
        let d = c.degree().unwrap();
        let np = s.space().n_params();
        let directions: &[(i64, i64)] = if np == 1 {
            &[(1, 0)]
        } else {
            &[(1, 1), (1, 2), (2, 1)]
        };
        for &(a, b) in directions {
            let at = |k: i64| -> usize {
                let vals: Vec<i64> = [a * k, b * k][..np].to_vec();
                count(&s, &vals)
            };
            let (c1, c2) = (at(6), at(12));
            assert!(c1 > 0, "{text}: no points at k = 6");
            // 2^d / 1.5 < c2 / c1 < 2^d * 1.5, in integers
            let want = 1usize << d;
            assert!(
                3 * c2 > 2 * want * c1 && 2 * c2 < 3 * want * c1,
                "{text} ({a}, {b}): counts {c1} -> {c2}, predicted {c}"
            );
        }
    }
}

#[test]
fn basic_complexity_of_an_empty_piece() {
    let b = BasicSet::parse("{ [i] : i > 0 and i < 0 }").unwrap();
    assert_eq!(basic_complexity(&b).unwrap().to_string(), "O(0)");
}

// ---- random one-parameter polytopes: predicted degree vs counts ----

use proptest::prelude::*;

/// `[N] -> { [x_0 .. x_{nd-1}] : 0 <= x_d <= N, extra rows >= 0 }`, rows over
/// (N, x, 1) with small coefficients, so that lower-order effects are small
/// at N = 40 and N = 80.
fn param_polytope() -> impl Strategy<Value = (usize, Vec<(bool, Vec<i64>)>)> {
    (1usize..=2).prop_flat_map(|nd| {
        let row = (
            prop::bool::weighted(0.2),
            prop::collection::vec(-1i64..=1, nd + 1),
            -3i64..=3,
        )
            .prop_map(|(eq, mut r, c)| {
                r.push(c);
                (eq, r)
            });
        (Just(nd), prop::collection::vec(row, 0..=2))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_degrees_match_counts((nd, extra) in param_polytope()) {
        let names: Vec<String> = ["i", "j"][..nd].iter().map(|s| s.to_string()).collect();
        let space = alphac::poly::Space::set(&["N"], &names);
        let mut ineqs = Vec::new();
        let mut eqs = Vec::new();
        for d in 0..nd {
            let mut lo = vec![0; nd + 2];
            lo[1 + d] = 1;
            let mut hi = vec![0; nd + 2];
            hi[0] = 1;
            hi[1 + d] = -1;
            ineqs.push(lo);
            ineqs.push(hi);
        }
        for (eq, r) in extra {
            if eq { eqs.push(r) } else { ineqs.push(r) }
        }
        let b = BasicSet::from_rows(space, eqs, ineqs).unwrap();
        let s = Set::from_basic(b);
        let c = complexity(&s).unwrap();
        let (c1, c2) = (count(&s, &[40]), count(&s, &[80]));
        match c.degree() {
            None => prop_assert_eq!((c1, c2), (0, 0)),
            Some(d) => {
                prop_assume!(c1 > 0);
                let want = 1usize << d;
                prop_assert!(
                    3 * c2 > 2 * want * c1 && 2 * c2 < 3 * want * c1,
                    "{}: counts {} -> {}, predicted {}", s, c1, c2, c
                );
            }
        }
    }
}

/// Two parameters: along a fixed direction `(N, K) = k·(a, b)` the count
/// may grow slower than the predicted total degree (the set may be thin in
/// that direction), never faster.
fn two_param_polytope() -> impl Strategy<Value = (usize, Vec<(bool, Vec<i64>)>)> {
    (1usize..=2).prop_flat_map(|nd| {
        let row = (
            prop::bool::weighted(0.2),
            prop::collection::vec(-1i64..=1, nd + 2),
            -3i64..=3,
        )
            .prop_map(|(eq, mut r, c)| {
                r.push(c);
                (eq, r)
            });
        (Just(nd), prop::collection::vec(row, 0..=2))
    })
}

/// `[N, K] -> { [x_0 .. x_{nd-1}] : 0 <= x_d <= N + K, extra rows }`
/// (rows over `(N, K, x, 1)`, `true` for an equality).
fn two_param_set(nd: usize, extra: Vec<(bool, Vec<i64>)>) -> BasicSet {
    let names: Vec<String> = ["i", "j"][..nd].iter().map(|s| s.to_string()).collect();
    let space = alphac::poly::Space::set(&["N", "K"], &names);
    let mut ineqs = Vec::new();
    let mut eqs = Vec::new();
    for d in 0..nd {
        let mut lo = vec![0; nd + 3];
        lo[2 + d] = 1;
        let mut hi = vec![0; nd + 3];
        hi[0] = 1;
        hi[1] = 1;
        hi[2 + d] = -1;
        ineqs.push(lo);
        ineqs.push(hi);
    }
    for (eq, r) in extra {
        if eq {
            eqs.push(r)
        } else {
            ineqs.push(r)
        }
    }
    BasicSet::from_rows(space, eqs, ineqs).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn two_parameter_counts_never_outgrow_the_degree((nd, extra) in two_param_polytope()) {
        let b = two_param_set(nd, extra);
        let s = Set::from_basic(b);
        let c = complexity(&s).unwrap();
        for (a, bb) in [(1i64, 1i64), (1, 2), (2, 1)] {
            let (c1, c2) = (count(&s, &[20 * a, 20 * bb]), count(&s, &[40 * a, 40 * bb]));
            match c.degree() {
                None => prop_assert_eq!((c1, c2), (0, 0)),
                Some(d) => {
                    if c1 == 0 {
                        continue;
                    }
                    let want = 1usize << d;
                    prop_assert!(
                        2 * c2 < 3 * want * c1,
                        "{} ({}, {}): counts {} -> {}, predicted {}", s, a, bb, c1, c2, c
                    );
                }
            }
        }
    }
}

#[test]
fn sliding_windows_grow_with_the_window() {
    // size ~ N * min(N, W + 1): the extent product gives N*W where the cone
    // degrees alone would give N^2 + N*W + W^2
    assert_eq!(
        cx("[N, W] -> { [i, j] : 0 <= i < N and i - W <= j <= i and j >= 0 }"),
        "O(N*W)"
    );
    // a band of constant width is linear
    assert_eq!(
        cx("[N] -> { [i, j] : 0 <= i < N and i - 3 <= j <= i }"),
        "O(N)"
    );
}

fn bounds(s: &str) -> Vec<String> {
    basic_bounds(&BasicSet::parse(s).unwrap())
        .unwrap()
        .iter()
        .map(|c| c.to_string())
        .collect()
}

#[test]
fn a_minimum_has_one_bound_per_choice() {
    // `i` runs to min(N, K - 1), `j` from `i + 1` to `K - 1` (LBP's else
    // branch of `for t4 <= min(K - 1, t3)`): min(N, K) * K points
    assert_eq!(
        bounds("[N, K] -> { [i, j] : 0 <= i < N and i <= K - 2 and i + 1 <= j <= K - 1 }"),
        ["O(N*K)", "O(K^2)"]
    );
    // the triangle itself: j <= min(K - 1, i)
    assert_eq!(
        bounds("[N, K] -> { [i, j] : 0 <= i < N and 0 <= j <= K - 1 and j <= i }"),
        ["O(N*K)", "O(N^2)"]
    );
}

#[test]
fn a_skewed_width_is_bounded_through_the_outer_loop() {
    // `t` runs over a band of width 4K starting at N (a skewed time loop);
    // `s`'s width is `t - N`, which grows with K only
    assert_eq!(
        cx("[N, K] -> { [t, s, i] : N <= t <= N + 4K and 0 <= s <= t - N and 0 <= i < K }"),
        "O(K^3)"
    );
    assert_eq!(
        cx("[N, K] -> { [i, t, s] : 0 <= i < N and i <= t <= i + K and t - i <= s <= 2t - 2i }"),
        "O(N*K^2)"
    );
}

#[test]
fn a_sum_takes_the_bound_the_other_terms_absorb() {
    let p = |s: &str| basic_bounds(&BasicSet::parse(s).unwrap()).unwrap();
    let nest = p("[N, K, D] -> { [i, k, d] : 0 <= i < N and 0 <= k < K and 0 <= d < D }");
    let triangle = p("[N, K, D] -> { [i, j] : 0 <= i < N and 0 <= j <= K - 1 and j <= i }");
    let params: Vec<String> = ["N", "K", "D"].iter().map(|s| s.to_string()).collect();
    let both = sum_of_bounds(&params, &[triangle.clone(), nest]).unwrap();
    assert_eq!(both.to_string(), "O(N*K*D)");
    // alone, the triangle takes its first bound
    assert_eq!(
        sum_of_bounds(&params, &[triangle]).unwrap().to_string(),
        "O(N*K)"
    );
    // beside an N^2 term, the N^2 bound adds nothing
    let square = p("[N, K, D] -> { [i, j] : 0 <= i < N and 0 <= j < N }");
    let triangle = p("[N, K, D] -> { [i, j] : 0 <= i < N and 0 <= j <= K - 1 and j <= i }");
    assert_eq!(
        sum_of_bounds(&params, &[square, triangle])
            .unwrap()
            .to_string(),
        "O(N^2)"
    );
}

/// The largest exponent of parameter `q` in `c` (`dir = None`: the total
/// degree).
fn degree_along(c: &Complexity, dir: Option<usize>) -> u32 {
    c.terms
        .iter()
        .map(|m| match dir {
            Some(q) => m.exps[q],
            None => m.degree(),
        })
        .max()
        .unwrap_or(0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Every bound `basic_bounds` returns is an upper bound on its own:
    /// growing one parameter (the other fixed) or both, the count never
    /// grows faster than the bound's degree in that direction. A bound that
    /// picked the wrong side of a minimum (`O(N)` for a set of `K` points)
    /// fails this.
    #[test]
    fn every_alternative_bound_is_an_upper_bound((nd, extra) in two_param_polytope()) {
        let b = two_param_set(nd, extra);
        let all = basic_bounds(&b).unwrap();
        let s = Set::from_basic(b);
        // (N, K) at t and 2t along three directions: N grows, K grows, both
        for (dir, at) in [
            (Some(0), [[40i64, 3], [80, 3]]),
            (Some(1), [[3, 40], [3, 80]]),
            (None, [[20, 20], [40, 40]]),
        ] {
            let (c1, c2) = (count(&s, &at[0]), count(&s, &at[1]));
            if c1 == 0 {
                prop_assert!(c2 == 0 || all.iter().all(|c| degree_along(c, dir) > 0),
                    "{}: counts {} -> {} along {:?}, bounds {:?}", s, c1, c2, dir,
                    all.iter().map(|c| c.to_string()).collect::<Vec<_>>());
                continue;
            }
            for c in &all {
                let want = 1usize << degree_along(c, dir);
                prop_assert!(
                    2 * c2 < 3 * want * c1,
                    "{}: counts {} -> {} along {:?}, bound {}", s, c1, c2, dir, c
                );
            }
        }
    }
}

#[test]
fn a_remembered_size_is_that_of_the_same_set_in_the_same_space() {
    // `complexity` is memoized per thread: asking again gives the same
    // answer, and a set of another space (other parameter names, even
    // with no piece at all) gets its own.
    assert_eq!(cx("[N] -> { [i] : 0 <= i < N }"), "O(N)");
    assert_eq!(cx("[N] -> { [i] : 0 <= i < N }"), "O(N)");
    assert_eq!(cx("[M] -> { [i] : 0 <= i < M }"), "O(M)");
    let none = |p: &str| {
        let s = Set::parse(&format!("[{p}] -> {{ [i] : 0 <= i < {p} }}")).unwrap();
        complexity(&Set::empty(s.space().clone())).unwrap()
    };
    let (n, m) = (none("N"), none("M"));
    assert_eq!(n.to_string(), "O(0)");
    assert_eq!(n.params, vec!["N".to_string()]);
    assert_eq!(m.params, vec!["M".to_string()]);
}
