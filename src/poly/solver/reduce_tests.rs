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
    use std::sync::atomic::Ordering::Relaxed;
    for m in [100, 1000, 2000, 100_000] {
        let s = thin_below(m);
        let before = stats::DEEP_SEARCHES.load(Relaxed);
        let p = integer_sample(&s).unwrap().expect("a point");
        assert!(satisfies(&s, &p), "{p:?} outside for m = {m}");
        // The branch and bound went deep and handed over (other tests may
        // count too: the counter only grows).
        assert!(stats::DEEP_SEARCHES.load(Relaxed) > before, "m = {m}");
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

/// A unimodular matrix `U` and its inverse, as products of the shears
/// `x_i += c·x_j` (`i ≠ j`) in `shears` (applied in order to the identity).
fn unimodular(n: usize, shears: &[(usize, usize, i64)]) -> (Vec<Vec<i64>>, Vec<Vec<i64>>) {
    let id = |n: usize| -> Vec<Vec<i64>> {
        (0..n)
            .map(|i| (0..n).map(|j| i64::from(i == j)).collect())
            .collect()
    };
    let (mut u, mut inv) = (id(n), id(n));
    for &(i, j, c) in shears {
        let (i, j) = (i % n, j % n);
        if i == j {
            continue;
        }
        // U <- E·U with E = I + c·e_i e_j^T (row i += c·row j);
        // U^{-1} <- U^{-1}·E^{-1} (column j -= c·column i).
        let row_j = u[j].clone();
        for (x, y) in u[i].iter_mut().zip(&row_j) {
            *x += c * y;
        }
        for row in inv.iter_mut() {
            row[j] -= c * row[i];
        }
    }
    (u, inv)
}

/// The skewed box `{x = U y : lo_k <= d_k·y_k <= hi_k}` (a box with
/// fractional faces in `y`, sheared by the unimodular `U`) as rows over
/// `x`: `y = U^{-1} x`, so `d_k·(U^{-1} x)_k − lo_k >= 0` and
/// `hi_k − d_k·(U^{-1} x)_k >= 0`.
fn skewed_box(inv: &[Vec<i64>], faces: &[(i64, i64, i64)]) -> System {
    let n = inv.len();
    let mut s = System::new(n);
    for (k, &(d, lo, hi)) in faces.iter().enumerate() {
        let mut low: Vec<i64> = inv[k].iter().map(|&c| d * c).collect();
        low.push(-lo);
        let mut high: Vec<i64> = inv[k].iter().map(|&c| -d * c).collect();
        high.push(hi);
        s.add_ineq(low);
        s.add_ineq(high);
    }
    s
}

/// The integer points of the skewed box: `x = U y` for the integers `y_k`
/// with `lo_k <= d_k·y_k <= hi_k`.
fn skewed_points(u: &[Vec<i64>], faces: &[(i64, i64, i64)]) -> Vec<Vec<i64>> {
    let ranges: Vec<Vec<i64>> = faces
        .iter()
        .map(|&(d, lo, hi)| {
            (lo.div_euclid(d) - 1..=hi.div_euclid(d) + 1)
                .filter(|y| lo <= d * y && d * y <= hi)
                .collect()
        })
        .collect();
    let mut out = vec![vec![]];
    for r in &ranges {
        out = out
            .into_iter()
            .flat_map(|p: Vec<i64>| {
                r.iter().map(move |&y| {
                    let mut q = p.clone();
                    q.push(y);
                    q
                })
            })
            .collect();
    }
    out.iter()
        .map(|y| {
            u.iter()
                .map(|row| row.iter().zip(y).map(|(a, b)| a * b).sum())
                .collect()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// Long slivers in skewed coordinates (the polytopes coordinate
    /// branching creeps along, often with no integer point at all: a
    /// fractional face pair `1 <= 3 y_k <= 2` in a short direction): the
    /// sample exists exactly when the box has integer points, and the
    /// integer lexicographic minimum of random objectives equals brute
    /// force over the box's points.
    #[test]
    fn skewed_slivers_are_sampled_and_minimized_exactly(
        n in 2usize..=4,
        shears in proptest::collection::vec((0usize..4, 0usize..4, -3i64..=3), 2..8),
        long in 40i64..400,
        short in proptest::collection::vec((1i64..=3, 0i64..=2, 0i64..=3), 3),
        objs in proptest::collection::vec(proptest::collection::vec(-2i64..=2, 5), 1..=2),
    ) {
        let (u, inv) = unimodular(n, &shears);
        // y_0 long; the others short, each `lo <= d·y <= lo + w` (empty
        // when d > 1 and the window holds no multiple of d).
        let mut faces = vec![(2, 1, 2 * long + 1)];
        for &(d, lo, w) in short.iter().take(n - 1) {
            faces.push((d, lo, lo + w));
        }
        let s = skewed_box(&inv, &faces);
        let points = skewed_points(&u, &faces);
        match integer_sample(&s).unwrap() {
            None => prop_assert!(points.is_empty()),
            Some(p) => {
                prop_assert!(satisfies(&s, &p));
                prop_assert!(points.contains(&p));
            }
        }
        let objs: Vec<Vec<i64>> = objs.iter().map(|o| o[..=n].to_vec()).collect();
        let best = points.iter().map(|p| lex_key(&objs, p)).min();
        match integer_lexmin(&s, &objs).unwrap() {
            Optimum::Value(p) => {
                prop_assert!(satisfies(&s, &p));
                prop_assert_eq!(Some(lex_key(&objs, &p)), best);
            }
            Optimum::Empty => prop_assert!(best.is_none()),
            Optimum::Unbounded => prop_assert!(false, "a bounded set"),
        }
    }
}
