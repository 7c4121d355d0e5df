//! [`ForLoop::runs_at_most_once`]: sound by enumeration, and exactly the
//! bound pairs it describes.

use super::*;
use proptest::prelude::*;

/// `Σ coefs[i]·v_i + cst` over loop variables `v_0, v_1`.
fn aff(coefs: [i64; 2], cst: i64) -> Affine {
    Affine {
        terms: vec![
            (Sym::Loop(LoopVar(0)), coefs[0]),
            (Sym::Loop(LoopVar(1)), coefs[1]),
        ],
        constant: cst,
    }
}

fn for_loop(lower: Bound, upper: Bound) -> ForLoop {
    ForLoop {
        var: LoopVar(2),
        lower,
        upper,
        body: Vec::new(),
        parallel: false,
    }
}

/// `⌈x / k⌉` and `⌊x / k⌋` for `k >= 1`.
fn ceil_div(x: i64, k: i64) -> i64 {
    -(-x).div_euclid(k)
}

proptest! {
    /// `for (v = ⌈a/k⌉; v <= ⌊(a + c)/k⌋)`: the predicate holds exactly
    /// when `c <= k − 1`; then the loop never runs twice at any point of a
    /// grid of the outer variables, and otherwise it does wherever `a` is
    /// a multiple of `k`.
    #[test]
    fn one_divisor_pairs_run_at_most_once(
        p in -3i64..=3, q in -3i64..=3, a0 in -7i64..=7, k in 1i64..=5, c in -6i64..=8,
    ) {
        let lo = Bound::div(aff([p, q], a0), k);
        let hi = Bound::div(aff([p, q], a0 + c), k);
        let once = for_loop(lo, hi).runs_at_most_once();
        prop_assert_eq!(once, c < k);
        for x in -12..=12 {
            for y in -12..=12 {
                let a = p * x + q * y + a0;
                let trips = (a + c).div_euclid(k) - ceil_div(a, k) + 1;
                if once {
                    prop_assert!(trips <= 1, "a = {} runs {} times", a, trips);
                } else if a.rem_euclid(k) == 0 {
                    // `c >= k`: from a multiple of `k` it runs twice.
                    prop_assert!(trips >= 2, "a = {} runs {} times", a, trips);
                }
            }
        }
    }
}

#[test]
fn a_stride_two_scan_runs_at_most_once() {
    // for (i = ⌈t/2⌉; i <= ⌊t/2⌋): t = 2i, one value of i for an even t.
    let t = aff([1, 0], 0);
    assert!(for_loop(Bound::div(t.clone(), 2), Bound::div(t.clone(), 2)).runs_at_most_once());
    // for (i = ⌈t/2⌉; i <= ⌊(t + 2)/2⌋) runs twice at t = 0.
    let t2 = aff([1, 0], 2);
    assert!(!for_loop(Bound::div(t.clone(), 2), Bound::div(t2, 2)).runs_at_most_once());
}

#[test]
fn one_pair_of_terms_is_enough_and_other_divisors_or_variables_are_not() {
    let t = aff([1, 0], 0);
    let n = aff([0, 1], 0);
    // max(⌈t/2⌉, 0) .. min(⌊t/2⌋, N): the first pair decides.
    let lo = Bound::div(t.clone(), 2).and(Affine::cst(0), 1);
    let hi = Bound::div(t.clone(), 2).and(n.clone(), 1);
    assert!(for_loop(lo, hi).runs_at_most_once());
    // ⌈t/2⌉ .. ⌊t/3⌋: divisors differ (it runs twice at t = −6: −3 .. −2).
    assert!(!for_loop(Bound::div(t.clone(), 2), Bound::div(t.clone(), 3)).runs_at_most_once());
    // ⌈t/2⌉ .. ⌊N/2⌋: the linear parts differ.
    assert!(!for_loop(Bound::div(t, 2), Bound::div(n, 2)).runs_at_most_once());
}
