//! Tests of the solver: unit tests and property tests against brute-force
//! enumeration.

use super::*;

fn sys(n: usize, eqs: &[&[i64]], ineqs: &[&[i64]]) -> System {
    let mut s = System::new(n);
    for e in eqs {
        s.add_eq(e.to_vec());
    }
    for i in ineqs {
        s.add_ineq(i.to_vec());
    }
    s
}

#[test]
fn two_i_plus_two_j_is_seven() {
    let s = sys(
        2,
        &[&[2, 2, -7]],
        &[&[1, 0, 0], &[0, 1, 0], &[-1, 0, 10], &[0, -1, 10]],
    );
    assert!(rational_feasible(&s).unwrap());
    assert_eq!(integer_sample(&s).unwrap(), None);
}

#[test]
fn unbounded_with_points() {
    // x - y >= 0
    let s = sys(2, &[], &[&[1, -1, 0]]);
    let p = integer_sample(&s).unwrap().expect("has points");
    assert!(p[0] - p[1] >= 0);
    assert_eq!(integer_min(&s, &[1, 0, 0]).unwrap(), Optimum::Unbounded);
}

#[test]
fn unbounded_without_points() {
    // 2x = 2y + 1, y free
    let s = sys(2, &[&[2, -2, -1]], &[]);
    assert!(rational_feasible(&s).unwrap());
    assert_eq!(integer_sample(&s).unwrap(), None);
    // 2x - 2y - 1 >= 0 and <= 0 as inequalities: same, unbounded, no eqs.
    let s = sys(2, &[], &[&[2, -2, -1], &[-2, 2, 1]]);
    assert_eq!(integer_sample(&s).unwrap(), None);
    assert_eq!(implicit_equalities(&s).unwrap(), vec![0, 1]);
}
