//! Tests of the generalized basis reduction and the search along a reduced
//! basis (`reduce.rs`): against brute-force enumeration, the definition of
//! a reduced basis, and thin polytopes that branching on coordinates
//! creeps along.

use super::integer::build_tab;
use super::reduce::{fix_difference, pair_tab, reduced_basis, search_along, width};
use super::tests::{brute, lex_key, satisfies, sys, system_strategy, with_box};
use super::*;
use proptest::prelude::*;

/// The determinant of a small square integer matrix (cofactor expansion).
fn det(m: &[Vec<i64>]) -> i128 {
    let n = m.len();
    if n == 0 {
        return 1;
    }
    (0..n)
        .map(|j| {
            let minor: Vec<Vec<i64>> = m[1..]
                .iter()
                .map(|row| (0..n).filter(|&c| c != j).map(|c| row[c]).collect())
                .collect();
            let sign = if j % 2 == 0 { 1 } else { -1 };
            sign * m[0][j] as i128 * det(&minor)
        })
        .sum()
}

/// `a + μ b`.
fn plus(a: &[i64], mu: i64, b: &[i64]) -> Vec<i64> {
    a.iter().zip(b).map(|(x, y)| x + mu * y).collect()
}

/// The polytope of the failing case found by a random-seed run of
/// `unboxed_lexmin_is_optimal` (unbounded, thin along `x0 + x1 + x3`).
fn thin() -> System {
    sys(
        4,
        &[],
        &[
            &[2, -3, 2, 0, 4],
            &[-3, 0, 3, 0, -5],
            &[3, 1, -3, -2, -7],
            &[3, -1, -3, 3, 2],
        ],
    )
}

/// `thin()` with `x0 + x1 + x3 <= m`.
fn thin_below(m: i64) -> System {
    let mut s = thin();
    s.add_ineq(vec![-1, -1, 0, -1, m]);
    s
}

/// Branching on coordinates crept along `thin_below(2000)` (bounded) past
/// its budget: 2,448 levels deep. Along a reduced basis the sample is
/// immediate; below the least value of the form (98) there is no point,
/// although the rational polytope is not empty.
#[test]
fn a_thin_polytope_is_sampled_along_a_reduced_basis() {
    for m in [100, 1000, 2000, 100_000] {
        let s = thin_below(m);
        let p = integer_sample(&s).unwrap().expect("a point");
        assert!(satisfies(&s, &p), "{p:?} outside for m = {m}");
    }
    let s = thin_below(97);
    assert!(rational_min(&s, &[0, 0, 0, 0, 0]).unwrap() != Optimum::Empty);
    assert_eq!(integer_sample(&s).unwrap(), None);
}

/// The case itself: the integer minimum of `x0 + x1 + x3` over `thin()`
/// is 98 (its rational minimum 260/3), attained at the point returned, and
/// no point has a smaller value.
#[test]
fn the_lexmin_of_a_thin_unbounded_polyhedron_is_exact() {
    let s = thin();
    let f = vec![1, 1, 0, 1, 0];
    let Optimum::Value(p) = integer_lexmin(&s, std::slice::from_ref(&f)).unwrap() else {
        panic!("a minimum exists");
    };
    assert!(satisfies(&s, &p));
    assert_eq!(lex_key(std::slice::from_ref(&f), &p), vec![98]);
    assert_eq!(integer_sample(&thin_below(97)).unwrap(), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// On boxed systems: the reduced basis is unimodular and satisfies
    /// both conditions of the definition (size reduction against `μ = ±1`
    /// and the 3/4 exchange condition, whenever the reduction finished),
    /// and the search along it finds a point exactly when brute force does.
    #[test]
    fn the_search_along_a_reduced_basis_matches_brute_force(s in system_strategy(0, 5)) {
        const B: i64 = 6;
        let t = with_box(&s, B);
        let n = t.n_vars;
        let (tab, _) = build_tab::<i64>(n, &[], &t.ineqs).unwrap();
        let points = brute(&t, B);
        if tab.empty {
            prop_assert!(points.is_empty());
            return Ok(());
        }
        let basis = reduced_basis::<i64>(n, n, &t.ineqs).unwrap();
        prop_assert_eq!(det(&basis).abs(), 1, "{:?}", basis);
        let mut level = pair_tab::<i64>(n, &t.ineqs).unwrap();
        for i in 0..n.saturating_sub(1) {
            let (bi, bn) = (&basis[i], &basis[i + 1]);
            let f_i = width(&level, bi).unwrap();
            let f_next = width(&level, bn).unwrap();
            for mu in [-1, 1] {
                prop_assert!(width(&level, &plus(bn, mu, bi)).unwrap() >= f_next);
            }
            let three_quarters = BigRational::new(3.into(), 4.into());
            prop_assert!(f_next >= f_i * three_quarters, "{:?} at level {}", basis, i);
            level = fix_difference(&level, bi).unwrap();
        }
        match search_along(tab, &basis).unwrap() {
            None => prop_assert!(points.is_empty()),
            Some(p) => {
                prop_assert!(p.iter().all(|v| v.is_integer()));
                let x: Vec<i64> = p.iter().map(|v| v.to_integer().try_into().unwrap()).collect();
                prop_assert!(satisfies(&t, &x), "{:?}", x);
            }
        }
    }
}
