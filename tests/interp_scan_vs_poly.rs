//! Two independent enumerators must agree: the interpreter's
//! concrete-parameter scanner (`poly::points`, precomputed Fourier–Motzkin
//! levels) and the polyhedral library's solver-based enumeration
//! (`poly::Set::points` / `bounding_box`), on random bounded domains.

use alphac::poly::points::{self, PointScanner};
use alphac::poly::{Aff, Constraint, MultiAff, Set, Space};
use proptest::prelude::*;

/// `p·N + idx·x + c >= 0` (or `== 0`): the row `[p, idx, c]`.
fn con(idx: Vec<i64>, p: i64, c: i64, is_eq: bool) -> Constraint {
    let mut row = vec![p];
    row.extend(idx);
    row.push(c);
    if is_eq {
        Constraint::eq(row)
    } else {
        Constraint::ineq(row)
    }
}

fn arb_domain() -> impl Strategy<Value = Set> {
    (1usize..=3).prop_flat_map(|n| {
        let c = (
            proptest::collection::vec(-3i64..=3, n),
            -2i64..=2,
            -6i64..=6,
            prop::bool::weighted(0.15),
        )
            .prop_map(|(idx, p, c, e)| con(idx, p, c, e));
        proptest::collection::vec(proptest::collection::vec(c, 0..4), 1..3).prop_map(
            move |pieces| {
                let dims: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
                let pieces = pieces
                    .into_iter()
                    .map(|mut p| {
                        // Bounded by -N - 2 <= x_k <= N + 2.
                        for k in 0..n {
                            let mut a = vec![0; n];
                            a[k] = 1;
                            p.push(con(a.clone(), 1, 2, false));
                            a[k] = -1;
                            p.push(con(a, 1, 2, false));
                        }
                        p
                    })
                    .collect();
                Set::from_constraints(Space::set(&["N"], &dims), pieces).unwrap()
            },
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn points_and_boxes_agree_with_poly(set in arb_domain(), n in 0i64..=4) {
        let want = set.points(&[n]).unwrap();
        prop_assert_eq!(points::points(&set, &[n]).unwrap(), want);
        prop_assert_eq!(points::bounding_box(&set, &[n]).unwrap(), set.bounding_box(&[n]).unwrap());
    }

    #[test]
    fn projection_scans_agree_with_poly(set in arb_domain(), n in 0i64..=4,
                                        f in proptest::collection::vec(-2i64..=2, 3), x in -9i64..=9) {
        let dims = set.n_dims();
        let proj = Aff::from_parts(set.space().clone(), &[1], &f[..dims], 0).unwrap();
        let want: Vec<Vec<i64>> = set
            .points(&[n])
            .unwrap()
            .into_iter()
            .filter(|p| proj.eval(&[n], p) == Ok(x))
            .collect();
        let proj = MultiAff::from_affs(set.space().clone(), &[proj]).unwrap();
        let s = PointScanner::for_projection(&set, &proj, &[n]).unwrap();
        prop_assert_eq!(s.points(&[x]).unwrap(), want);
    }
}
