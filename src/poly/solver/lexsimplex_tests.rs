//! Tests of the lexicographic simplex (`lexsimplex.rs`): its minimum
//! against [`rational_lexmin`] as rows are added by the dual simplex, and
//! its account of a dive against [`Prepared::dive`].

use super::tests::{system_strategy, with_box};
use super::*;
use proptest::prelude::*;

/// Every variable as an objective after `objs` (so the minimum is one
/// point), the variables in reverse order for variety.
fn covering(n: usize, objs: &[Vec<i64>]) -> Vec<Vec<i64>> {
    let mut all = objs.to_vec();
    for v in (0..n).rev() {
        let mut o = vec![0; n + 1];
        o[v] = 1;
        all.push(o);
    }
    all
}

/// `s` cut to `0 <= x_v <= b`, the signs first (so that, as in the
/// scheduling systems, the variables are nonbasic columns at 0 and the
/// dual simplex compares unit costs).
fn nonneg_box(s: &System, b: i64) -> System {
    let n = s.n_vars;
    let mut t = System::new(n);
    t.eqs = s.eqs.clone();
    for v in 0..n {
        let mut r = vec![0; n + 1];
        r[v] = 1;
        t.add_ineq(r);
    }
    t.ineqs.extend(s.ineqs.iter().cloned());
    for v in 0..n {
        let mut r = vec![0; n + 1];
        r[v] = -1;
        r[n] = b;
        t.add_ineq(r);
    }
    t
}

/// `s` with `eqs` and `ineqs` added.
fn with_rows(s: &System, eqs: &[Vec<i64>], ineqs: &[Vec<i64>]) -> System {
    let mut t = s.clone();
    t.eqs.extend(eqs.iter().cloned());
    t.ineqs.extend(ineqs.iter().cloned());
    t
}

/// The minimum of `lex` as an [`Optimum`].
fn optimum(lex: &LexSimplex) -> Optimum<Vec<num_rational::BigRational>> {
    match lex.minimum() {
        Some(p) => Optimum::Value(p),
        None => Optimum::Empty,
    }
}

#[test]
fn objectives_that_miss_a_variable_do_not_apply() {
    let s = with_box(&System::new(2), 3);
    let p = Prepared::new(s).unwrap();
    assert!(p.lex_simplex(&[vec![1, 1, 0]]).unwrap().is_none());
    assert!(p
        .lex_simplex(&[vec![0, 2, 5], vec![3, 0, 0]])
        .unwrap()
        .is_some());
}

#[test]
fn a_fractional_minimum_is_cut_as_a_dive_fixes_it() {
    // 2 x0 >= 1, x0 <= 3, 0 <= x1 <= 3, x1 >= x0 − 1/2 (as
    // 2 x1 − 2 x0 + 1 >= 0): the rational minimum of x0 is 1/2; the dive
    // fixes x0 at 1, then x1 at 1 (x1 >= 1/2).
    let mut s = System::new(2);
    s.add_ineq(vec![2, 0, -1]);
    s.add_ineq(vec![-1, 0, 3]);
    s.add_ineq(vec![0, 1, 0]);
    s.add_ineq(vec![0, -1, 3]);
    s.add_ineq(vec![-2, 2, 1]);
    let objs = vec![vec![1, 0, 0], vec![0, 1, 0]];
    let p = Prepared::new(s).unwrap();
    let lex = p.lex_simplex(&objs).unwrap().unwrap();
    assert_eq!(lex.integral_minimum(), None);
    assert_eq!(lex.dive_outcome(), DiveOutcome::Point(vec![1, 1]));
    // With x1 <= 2 − 2 x0 added the level x0 = 1 has no point (x1 <= 0
    // and x1 >= 1/2), though x0 = 1/2, x1 = 0 is one: the dive ends there.
    let cut = lex.extended(&[], &[vec![-2, -1, 2]]).unwrap().unwrap();
    assert!(!cut.is_empty());
    assert_eq!(cut.dive_outcome(), DiveOutcome::EmptyBelow);
    let dive = p.dive(&[], &[vec![-2, -1, 2]], &objs, false).unwrap();
    assert_eq!(dive.end, DiveEnd::Empty);
    assert_eq!(dive.values, vec![1]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The minimum of the objectives (every variable among them) equals
    /// the rational lexicographic minimum, at the start and after random
    /// equalities and inequalities are added (the dual simplex,
    /// including emptiness).
    #[test]
    fn the_minimum_follows_added_rows(
        s in system_strategy(1, 4),
        objs in proptest::collection::vec(proptest::collection::vec(-3i64..=3, 5), 0..3),
        extra in proptest::collection::vec(
            (proptest::collection::vec(-3i64..=3, 5), any::<bool>()), 1..5),
        signs in any::<bool>(),
    ) {
        let n = s.n_vars;
        let s = if signs { nonneg_box(&s, 6) } else { with_box(&s, 6) };
        let fit = |r: &Vec<i64>| {
            let mut f = r[..n].to_vec();
            f.push(r[4]);
            f
        };
        let objs = covering(n, &objs.iter().map(fit).collect::<Vec<_>>());
        let p = Prepared::new(s.clone()).unwrap();
        let Some(mut lex) = p.lex_simplex(&objs).unwrap() else {
            return Err(TestCaseError::fail("covering objectives must apply"));
        };
        prop_assert_eq!(optimum(&lex), rational_lexmin(&s, &objs).unwrap());
        let mut cur = s;
        for (r, is_eq) in &extra {
            let r = fit(r);
            let (eqs, ineqs) = if *is_eq { (vec![r], vec![]) } else { (vec![], vec![r]) };
            cur = with_rows(&cur, &eqs, &ineqs);
            lex = match lex.extended(&eqs, &ineqs).unwrap() {
                Some(l) => l,
                None => return Err(TestCaseError::fail("no overflow on small rows")),
            };
            prop_assert_eq!(optimum(&lex), rational_lexmin(&cur, &objs).unwrap());
        }
    }

    /// What the lexicographic simplex says of a dive is what the dive
    /// does: an integral end point is the dive's, and an empty level
    /// below the first is a dive ending empty after fixing a level.
    #[test]
    fn the_dive_outcome_is_the_dives(
        s in system_strategy(1, 4),
        objs in proptest::collection::vec(proptest::collection::vec(-3i64..=3, 5), 0..3),
        cut in proptest::collection::vec(proptest::collection::vec(-4i64..=4, 5), 0..3),
        signs in any::<bool>(),
    ) {
        let n = s.n_vars;
        let fit = |r: &Vec<i64>| {
            let mut f = r[..n].to_vec();
            f.push(r[4]);
            f
        };
        let objs = covering(n, &objs.iter().map(fit).collect::<Vec<_>>());
        let cut: Vec<Vec<i64>> = cut.iter().map(fit).collect();
        let p = Prepared::new(if signs { nonneg_box(&s, 5) } else { with_box(&s, 5) }).unwrap();
        let lex = p.lex_simplex(&objs).unwrap().unwrap().extended(&[], &cut).unwrap().unwrap();
        let dive = p.dive(&[], &cut, &objs, false).unwrap();
        match lex.dive_outcome() {
            DiveOutcome::Point(x) => {
                let q: Vec<num_rational::BigRational> = x
                    .iter()
                    .map(|&v| num_rational::BigRational::from_integer(v.into()))
                    .collect();
                prop_assert_eq!(dive.end, DiveEnd::Point(q));
            }
            DiveOutcome::EmptyBelow => {
                prop_assert_eq!(dive.end, DiveEnd::Empty);
                prop_assert!(!dive.values.is_empty());
            }
            DiveOutcome::Unknown => {
                // Only an empty polyhedron or a fractional end point.
                let fractional = matches!(&dive.end, DiveEnd::Point(q) if q.iter().any(|v| !v.is_integer()));
                prop_assert!(lex.is_empty() || fractional, "{:?}", dive);
            }
        }
    }
}
