//! Reproducers of solver problems found by the set-library property tests
//! (kept `#[ignore]`d until fixed in `poly::solver`).

use alphac::poly::solver::{integer_sample, System};

/// `integer_sample` reports `Overflow` on this small system (11 variables,
/// coefficients below 50, several unconstrained variables). Found by
/// `poly_props::images_and_preimages` through the exactness test of an
/// equality elimination.
#[test]
#[ignore = "solver returns Overflow on a small system with free variables"]
fn integer_sample_small_system_does_not_overflow() {
    let mut s = System::new(11);
    s.add_eq(vec![0, 9, 0, 0, 2, 0, -2, 2, 3, -2, -1, 1]);
    for r in [
        [-12, -49, 0, 0, 4, 0, 8, -10, -17, 0, 0, -5],
        [-3, 8, 0, 0, -1, 0, -2, 1, 2, 0, 0, 2],
        [-2, -5, 0, 0, 2, 0, 1, -1, -2, 0, 0, -1],
        [0, 2, 0, 0, 0, 0, 0, 1, 1, 0, 0, 2],
        [0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3],
        [0, 9, 0, 0, 2, 0, -2, 2, 3, 0, 0, 7],
        [0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 3],
        [0, -9, 0, 0, -2, 0, 2, -2, -3, 0, 0, 5],
        [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        [0, -2, 0, 0, 0, 0, 0, -1, -1, 0, 0, 4],
        [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        [1, 5, 0, 0, 0, 0, -1, 1, 2, 0, 0, 4],
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, -1],
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 1],
    ] {
        s.add_ineq(r.to_vec());
    }
    assert!(integer_sample(&s).is_ok());
}

/// `integer_lexmin` (lexicographic branch and bound) runs for minutes on
/// this 2-variable system with huge coefficients (found by
/// `poly_props::huge_coefficients_never_panic` through `lexmin_point`).
#[test]
#[ignore = "solver integer_lexmin takes minutes on huge coefficients"]
fn integer_lexmin_huge_coefficients_terminates_quickly() {
    use alphac::poly::solver::integer_lexmin;
    let mut s = System::new(2);
    s.add_eq(vec![
        3074457345618258602,
        -9223372036854775807,
        3074457345618258602,
    ]);
    s.add_ineq(vec![597503200641, -1, 1537228672809129301]);
    s.add_ineq(vec![1593655850847, -3074457345618258602, -3]);
    let t = std::time::Instant::now();
    let _ = integer_lexmin(&s, &[vec![1, 0, 0], vec![0, 1, 0]]);
    assert!(t.elapsed().as_secs() < 5);
}
