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
