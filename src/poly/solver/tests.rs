//! Tests of the solver: unit tests and property tests against brute-force
//! enumeration.

use super::*;

pub(super) fn sys(n: usize, eqs: &[&[i64]], ineqs: &[&[i64]]) -> System {
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

#[test]
fn overflow_prone_inputs_do_not_panic() {
    let big = i64::MAX;
    let s = sys(
        2,
        &[],
        &[
            &[big, -big, 1],
            &[-big, big - 1, 0],
            &[1, 0, big],
            &[0, 1, big],
        ],
    );
    // Whatever the answer, it must be a value or an Overflow error, and a
    // returned point must satisfy the system.
    let _ = rational_feasible(&s);
    match integer_sample(&s) {
        Ok(Some(p)) => assert!(satisfies(&s, &p)),
        Ok(None) | Err(PolyError::Overflow) => {}
        Err(e) => panic!("unexpected error {e:?}"),
    }
    let _ = rational_min(&s, &[1, 1, 0]);
    let _ = implicit_equalities(&s);
    let _ = redundant_ineqs(&s);
    match integer_lexmin(&s, &[vec![1, 0, 0], vec![0, 1, 0]]) {
        Ok(Optimum::Value(p)) => assert!(satisfies(&s, &p)),
        Ok(_) | Err(PolyError::Overflow) => {}
        Err(e) => panic!("unexpected error {e:?}"),
    }
    // x = MAX, y = MAX: x + y - 2 MAX = 0 is fine with big arithmetic.
    let s = sys(2, &[&[1, -1, 0]], &[&[1, 0, -big], &[-1, 0, big]]);
    match integer_sample(&s) {
        Ok(Some(p)) => assert_eq!(p, vec![big, big]),
        Ok(None) => panic!("point (MAX, MAX) exists"),
        Err(e) => assert_eq!(e, PolyError::Overflow),
    }
    assert!(rational_feasible(&s).unwrap());
}

#[test]
fn lexmin_simple() {
    // 0 <= y <= x <= 5, x + y >= 3: lexmin (x, y) = (2, 1)
    let s = sys(2, &[], &[&[0, 1, 0], &[1, -1, 0], &[-1, 0, 5], &[1, 1, -3]]);
    assert_eq!(
        integer_lexmin(&s, &[vec![1, 0, 0], vec![0, 1, 0]]).unwrap(),
        Optimum::Value(vec![2, 1])
    );
    assert_eq!(
        integer_lexmax(&s, &[vec![1, 0, 0], vec![0, 1, 0]]).unwrap(),
        Optimum::Value(vec![5, 5])
    );
    let half = BigRational::new(BigInt::from(3), BigInt::from(2));
    assert_eq!(
        rational_lexmin(&s, &[vec![1, 0, 0], vec![0, 1, 0]]).unwrap(),
        Optimum::Value(vec![half.clone(), half])
    );
    assert_eq!(integer_max(&s, &[1, 1, 0]).unwrap(), Optimum::Value(10));
    assert_eq!(
        rational_max(&s, &[1, 1, 0]).unwrap(),
        Optimum::Value(BigRational::from_integer(BigInt::from(10)))
    );
}

// ---------------------------------------------------------------------
// Oracles: satisfaction, brute-force enumeration, Fourier–Motzkin.

fn eval(row: &[i64], x: &[i64]) -> i128 {
    let n = x.len();
    let mut s = row[n] as i128;
    for k in 0..n {
        s += row[k] as i128 * x[k] as i128;
    }
    s
}

pub(super) fn satisfies(s: &System, x: &[i64]) -> bool {
    s.eqs.iter().all(|r| eval(r, x) == 0) && s.ineqs.iter().all(|r| eval(r, x) >= 0)
}

/// All integer points of `s` in the box `[-b, b]^n`.
pub(super) fn brute(s: &System, b: i64) -> Vec<Vec<i64>> {
    let n = s.n_vars;
    let mut out = Vec::new();
    let mut x = vec![-b; n];
    loop {
        if satisfies(s, &x) {
            out.push(x.clone());
        }
        let mut k = 0;
        loop {
            if k == n {
                return out;
            }
            if x[k] < b {
                x[k] += 1;
                break;
            }
            x[k] = -b;
            k += 1;
        }
    }
}

pub(super) fn with_box(s: &System, b: i64) -> System {
    let mut t = s.clone();
    let n = s.n_vars;
    for k in 0..n {
        let mut r = vec![0; n + 1];
        r[k] = 1;
        r[n] = b;
        t.add_ineq(r.clone());
        r[k] = -1;
        t.add_ineq(r);
    }
    t
}

type Rat = BigRational;

fn rat(v: i64) -> Rat {
    Rat::from_integer(BigInt::from(v))
}

/// Range `(lower, upper)` of `f` over the rational polyhedron of `s` by
/// Fourier–Motzkin elimination with Chernikov's rule (`None` bounds are
/// infinite); `None` if the polyhedron is empty. Independent of the simplex.
fn fm_range(s: &System, f: &[i64]) -> Option<(Option<Rat>, Option<Rat>)> {
    let n = s.n_vars;
    // Variables x_0..x_{n-1}, t (index n); entry n+1 is the constant.
    // Each row carries the set of original rows it combines (bit mask).
    let mut rows: Vec<(Vec<i128>, u64)> = Vec::new();
    let conv = |r: &[i64], t: i128| -> Vec<i128> {
        let mut v: Vec<i128> = r[..n].iter().map(|&c| c as i128).collect();
        v.push(t);
        v.push(r[n] as i128);
        v
    };
    let add = |v: Vec<i128>, rows: &mut Vec<(Vec<i128>, u64)>| {
        let bit = 1u64 << rows.len();
        rows.push((v, bit));
    };
    for e in &s.eqs {
        add(conv(e, 0), &mut rows);
        add(conv(e, 0).iter().map(|v| -v).collect(), &mut rows);
    }
    for i in &s.ineqs {
        add(conv(i, 0), &mut rows);
    }
    add(conv(f, -1), &mut rows);
    add(conv(f, -1).iter().map(|v| -v).collect(), &mut rows);
    fn gcd(a: i128, b: i128) -> i128 {
        if b == 0 {
            a.abs()
        } else {
            gcd(b, a % b)
        }
    }
    for v in 0..n {
        let (mut pos, mut negs, mut rest) = (Vec::new(), Vec::new(), Vec::new());
        for r in rows.drain(..) {
            match r.0[v].signum() {
                1 => pos.push(r),
                -1 => negs.push(r),
                _ => rest.push(r),
            }
        }
        // Rows are deduplicated on (row, history), never on the row alone:
        // the same row can arise from different multiplier vectors (e.g.
        // `eq` and `-eq` cancel, or two inequalities differ by a multiple
        // of an equality), and Chernikov's rule is only valid for the
        // history of the multiplier that generated the row. Merging two
        // histories into one (even the shorter) can make a later
        // combination of the extreme multiplier look too long, and the
        // only row carrying a bound is then pruned.
        let mut seen: std::collections::HashSet<(Vec<i128>, u64)> = rest.iter().cloned().collect();
        for p in &pos {
            for q in &negs {
                let mask = p.1 | q.1;
                // Chernikov: after eliminating v+1 variables, an extreme
                // multiplier has at most v+2 nonzero entries (its support
                // solves v+1 homogeneous linear equations); longer
                // histories are nonnegative combinations of shorter ones.
                if mask.count_ones() as usize > v + 2 {
                    continue;
                }
                let a = p.0[v];
                let b = -q.0[v];
                let mut comb: Vec<i128> =
                    p.0.iter().zip(&q.0).map(|(x, y)| x * b + y * a).collect();
                let g = comb.iter().fold(0, |g, &x| gcd(g, x));
                if g > 1 {
                    comb.iter_mut().for_each(|x| *x /= g);
                }
                if seen.insert((comb.clone(), mask)) {
                    rest.push((comb, mask));
                }
            }
        }
        rows = rest;
    }
    let zero = rat(0);
    let mut lo: Option<Rat> = None;
    let mut hi: Option<Rat> = None;
    for (r, _) in &rows {
        let (ct, c) = (r[n], r[n + 1]);
        if ct == 0 {
            if c < 0 {
                return None;
            }
        } else {
            let b = Rat::new(BigInt::from(-c), BigInt::from(ct));
            if ct > 0 {
                if lo.as_ref().is_none_or(|l| b > *l) {
                    lo = Some(b);
                }
            } else if hi.as_ref().is_none_or(|h| b < *h) {
                hi = Some(b);
            }
        }
    }
    let _ = zero;
    if let (Some(l), Some(h)) = (&lo, &hi) {
        if l > h {
            return None;
        }
    }
    Some((lo, hi))
}

pub(super) fn lex_key(objs: &[Vec<i64>], x: &[i64]) -> Vec<i128> {
    objs.iter().map(|o| eval(o, x)).collect()
}

// ---------------------------------------------------------------------
// Property tests.

use proptest::prelude::*;

fn row_strategy(n: usize, cmax: i64) -> impl Strategy<Value = Vec<i64>> {
    (proptest::collection::vec(-3i64..=3, n), -cmax..=cmax).prop_map(|(mut c, k)| {
        c.push(k);
        c
    })
}

pub(super) fn system_strategy(max_eqs: usize, max_ineqs: usize) -> impl Strategy<Value = System> {
    (1usize..=4).prop_flat_map(move |n| {
        (
            proptest::collection::vec(row_strategy(n, 6), 0..=max_eqs),
            proptest::collection::vec(row_strategy(n, 8), 0..=max_ineqs),
        )
            .prop_map(move |(eqs, ineqs)| System {
                n_vars: n,
                eqs,
                ineqs,
            })
    })
}

fn obj_strategy(n: usize) -> impl Strategy<Value = Vec<i64>> {
    row_strategy(n, 3)
}

/// The integer lexicographic minimum of `objs` over `s` cut to the box of
/// [`BOX`] is a point of the box set attaining the least key of brute
/// force. Returns the box set and its points.
fn check_boxed_lexmin(
    s: &System,
    objs: &[Vec<i64>],
) -> Result<(System, Vec<Vec<i64>>), TestCaseError> {
    let t = with_box(s, BOX);
    let pts = brute(&t, BOX);
    let best = pts.iter().map(|p| lex_key(objs, p)).min();
    match integer_lexmin(&t, objs).unwrap() {
        Optimum::Empty => prop_assert!(best.is_none()),
        Optimum::Unbounded => prop_assert!(false, "boxed set cannot be unbounded"),
        Optimum::Value(p) => {
            prop_assert!(satisfies(&t, &p));
            prop_assert_eq!(Some(lex_key(objs, &p)), best);
        }
    }
    Ok((t, pts))
}

/// The inequalities found implicit equalities of `s` are those whose
/// maximum is 0 by Fourier–Motzkin (all of them when `s` is empty).
fn check_implicit_equalities(s: &System) -> Result<(), TestCaseError> {
    let imp = implicit_equalities(s).unwrap();
    let nonempty = fm_range(s, &vec![0; s.n_vars + 1]).is_some();
    for (k, row) in s.ineqs.iter().enumerate() {
        let is_imp = if nonempty {
            matches!(fm_range(s, row), Some((_, Some(h))) if h == rat(0))
        } else {
            true
        };
        prop_assert_eq!(imp.contains(&k), is_imp, "row {}", k);
    }
    Ok(())
}

const BOX: i64 = 5;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn sample_matches_brute_force_in_box(s in system_strategy(2, 5)) {
        let t = with_box(&s, BOX);
        let pts = brute(&t, BOX);
        let got = integer_sample(&t).unwrap();
        match &got {
            Some(p) => prop_assert!(satisfies(&t, p), "point {:?} outside", p),
            None => prop_assert!(pts.is_empty(), "missed points, e.g. {:?}", pts[0]),
        }
        prop_assert_eq!(got.is_some(), !pts.is_empty());
        // Rational feasibility is implied by an integer point.
        let rf = rational_feasible(&t).unwrap();
        if !pts.is_empty() {
            prop_assert!(rf);
        }
    }

    #[test]
    fn unboxed_sample_is_consistent(s in system_strategy(2, 4)) {
        let got = integer_sample(&s).unwrap();
        let pts = brute(&s, 8);
        match &got {
            Some(p) => prop_assert!(satisfies(&s, p), "point {:?} outside", p),
            None => prop_assert!(pts.is_empty(), "missed points, e.g. {:?}", pts[0]),
        }
    }

    #[test]
    fn lexmin_matches_brute_force(
        (s, objs) in system_strategy(1, 5).prop_flat_map(|s| {
            let n = s.n_vars;
            (Just(s), proptest::collection::vec(obj_strategy(n), 1..=3))
        })
    ) {
        let (t, pts) = check_boxed_lexmin(&s, &objs)?;
        let min0 = pts.iter().map(|p| eval(&objs[0], p)).min();
        match integer_min(&t, &objs[0]).unwrap() {
            Optimum::Empty => prop_assert!(min0.is_none()),
            Optimum::Unbounded => prop_assert!(false),
            Optimum::Value(v) => prop_assert_eq!(Some(v as i128), min0),
        }
        let max0 = pts.iter().map(|p| eval(&objs[0], p)).max();
        match integer_max(&t, &objs[0]).unwrap() {
            Optimum::Empty => prop_assert!(max0.is_none()),
            Optimum::Unbounded => prop_assert!(false),
            Optimum::Value(v) => prop_assert_eq!(Some(v as i128), max0),
        }
    }

    #[test]
    fn unboxed_min_is_consistent(
        (s, obj) in system_strategy(1, 4).prop_flat_map(|s| {
            let n = s.n_vars;
            (Just(s), obj_strategy(n))
        })
    ) {
        let pts = brute(&s, 7);
        let bmin = pts.iter().map(|p| eval(&obj, p)).min();
        match integer_min(&s, &obj).unwrap() {
            Optimum::Empty => prop_assert!(pts.is_empty()),
            Optimum::Unbounded => {
                // The rational minimum is then unbounded as well.
                let r = fm_range(&s, &obj);
                prop_assert!(matches!(r, Some((None, _))), "FM says {:?}", r);
            }
            Optimum::Value(v) => {
                if let Some(b) = bmin {
                    prop_assert!(v as i128 <= b);
                }
                // Attained: v is a value at some integer point, and no
                // integer point has a smaller value (checked by sampling).
                let mut t = s.clone();
                let mut row: Vec<i64> = obj.iter().map(|c| -c).collect();
                row[s.n_vars] += v - 1;
                t.add_ineq(row);
                prop_assert_eq!(integer_sample(&t).unwrap(), None);
            }
        }
    }

    #[test]
    fn rational_queries_match_fourier_motzkin(
        (s, obj) in system_strategy(1, 5).prop_flat_map(|s| {
            let n = s.n_vars;
            (Just(s), obj_strategy(n))
        })
    ) {
        let fm = fm_range(&s, &obj);
        prop_assert_eq!(rational_feasible(&s).unwrap(), fm.is_some());
        let expect_min = match &fm {
            None => Optimum::Empty,
            Some((None, _)) => Optimum::Unbounded,
            Some((Some(l), _)) => Optimum::Value(l.clone()),
        };
        prop_assert_eq!(rational_min(&s, &obj).unwrap(), expect_min);
        let expect_max = match &fm {
            None => Optimum::Empty,
            Some((_, None)) => Optimum::Unbounded,
            Some((_, Some(h))) => Optimum::Value(h.clone()),
        };
        prop_assert_eq!(rational_max(&s, &obj).unwrap(), expect_max);
        // The lexmin point is feasible and attains the minimum.
        if let Optimum::Value(x) = rational_lexmin(&s, std::slice::from_ref(&obj)).unwrap() {
            let zero = rat(0);
            for e in &s.eqs {
                prop_assert_eq!(eval_rat(e, &x), zero.clone());
            }
            for i in &s.ineqs {
                prop_assert!(eval_rat(i, &x) >= zero);
            }
            if let Some((Some(l), _)) = &fm {
                prop_assert_eq!(&eval_rat(&obj, &x), l);
            }
        }
    }

    #[test]
    fn implicit_equalities_match_fourier_motzkin(s in system_strategy(1, 6)) {
        check_implicit_equalities(&s)?;
    }

    #[test]
    fn redundancy_keeps_the_polyhedron(
        (s, objs) in system_strategy(1, 6).prop_flat_map(|s| {
            let n = s.n_vars;
            (Just(s), proptest::collection::vec(obj_strategy(n), 3))
        })
    ) {
        let red = redundant_ineqs(&s).unwrap();
        if let Err(msg) = check_redundancy(&s, &red, &objs) {
            return Err(TestCaseError::fail(msg));
        }
    }
}

/// Regression (found by the property test; value checked by hand:
/// `x2 >= max(x3 - 2, -4 x3 - 3)` is smallest at `x3 = -1/5`).
#[test]
fn unbounded_below_bounded_above() {
    let s = sys(
        4,
        &[&[0, 1, 0, 0, 0]],
        &[&[1, 0, 0, 1, 5], &[0, -1, 1, -1, 2], &[-2, -2, 1, 2, -7]],
    );
    let obj = [0, 1, -2, 0, 0];
    assert_eq!(rational_min(&s, &obj).unwrap(), Optimum::Unbounded);
    assert_eq!(
        rational_max(&s, &obj).unwrap(),
        Optimum::Value(BigRational::new(BigInt::from(22), BigInt::from(5)))
    );
    assert_eq!(
        fm_range(&s, &obj),
        Some((
            None,
            Some(BigRational::new(BigInt::from(22), BigInt::from(5)))
        ))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn unboxed_lexmin_is_optimal(
        (s, objs) in system_strategy(1, 4).prop_flat_map(|s| {
            let n = s.n_vars;
            (Just(s), proptest::collection::vec(obj_strategy(n), 1..=2))
        })
    ) {
        let n = s.n_vars;
        match integer_lexmin(&s, &objs).unwrap() {
            Optimum::Empty => prop_assert!(brute(&s, 7).is_empty()),
            Optimum::Unbounded => {
                // Only a non-empty set can be unbounded, and then it is
                // unbounded rationally too (weak check; the bounded cases
                // are checked exactly below and in the boxed tests).
                prop_assert!(integer_sample(&s).unwrap().is_some());
                prop_assert!(fm_range(&s, &vec![0; n + 1]).is_some());
            }
            Optimum::Value(p) => {
                prop_assert!(satisfies(&s, &p));
                let key = lex_key(&objs, &p);
                for q in brute(&s, 7) {
                    prop_assert!(lex_key(&objs, &q) >= key, "{:?} beats {:?}", q, p);
                }
                // Exact optimality: fixing earlier objectives at their
                // optimum, no integer point improves the next one.
                let mut t = s.clone();
                for (o, v) in objs.iter().zip(&key) {
                    let mut row: Vec<i64> = o.iter().map(|c| -c).collect();
                    row[n] += *v as i64 - 1;
                    let mut u = t.clone();
                    u.add_ineq(row);
                    prop_assert_eq!(integer_sample(&u).unwrap(), None);
                    let mut e = o.clone();
                    e[n] -= *v as i64;
                    t.add_eq(e);
                }
            }
        }
    }
}

/// Coefficients near 2^60: the i128 tableau overflows and the query is
/// redone with big integers; answers are compared with brute force
/// (evaluated in i128, where these rows cannot overflow).
#[test]
fn huge_coefficients_use_big_integers_correctly() {
    let a: i64 = (1 << 59) + 12345;
    let b: i64 = (1 << 59) - 977;
    let c: i64 = (1 << 58) + 31;
    let d = a + 2 * b + 3 * c; // (1, 2, 3) is on the hyperplane
    let before = stats::FALLBACKS.load(std::sync::atomic::Ordering::Relaxed);
    let mut s = with_box(&System::new(3), 10);
    s.add_ineq(vec![a, b, c, -d]);
    s.add_ineq(vec![-a, -b, -c, d]);
    s.add_ineq(vec![b, -a, c, 0]);
    let pts = brute(&s, 10);
    assert!(!pts.is_empty());
    let p = integer_sample(&s).unwrap().expect("(1, 2, 3) is a point");
    assert!(satisfies(&s, &p));
    let objs = vec![vec![1, 0, 0, 0], vec![0, -1, 0, 0], vec![0, 0, 1, 0]];
    let best = pts.iter().map(|p| lex_key(&objs, p)).min();
    match integer_lexmin(&s, &objs).unwrap() {
        Optimum::Value(p) => assert_eq!(Some(lex_key(&objs, &p)), best),
        o => panic!("expected a point, got {o:?}"),
    }
    assert!(rational_feasible(&s).unwrap());
    let imp = implicit_equalities(&s).unwrap();
    assert!(imp.contains(&6) && imp.contains(&7));
    let after = stats::FALLBACKS.load(std::sync::atomic::Ordering::Relaxed);
    assert!(after > before, "expected the big-integer path to run");
}

/// Coefficients near 2^40: their products overflow `i64` but not `i128`,
/// so the queries are redone at the middle width; answers are compared
/// with brute force.
#[test]
fn wide_coefficients_use_the_i128_width_correctly() {
    let a: i64 = (1 << 40) + 7;
    let b: i64 = (1 << 40) - 3;
    let c: i64 = (1 << 39) + 1;
    let before = stats::WIDENINGS.load(std::sync::atomic::Ordering::Relaxed);
    let mut s = with_box(&System::new(3), 6);
    s.add_ineq(vec![a, -b, c, 0]);
    s.add_ineq(vec![-b, a, -c, 3 * c]);
    s.add_ineq(vec![c, c, -a, b]);
    let pts = brute(&s, 6);
    assert!(pts.len() > 1 && pts.len() < 13 * 13 * 13, "a proper subset");
    let objs = vec![vec![-1, 0, 0, 0], vec![0, 1, 0, 0], vec![0, 0, -1, 0]];
    let best = pts.iter().map(|p| lex_key(&objs, p)).min();
    match integer_lexmin(&s, &objs).unwrap() {
        Optimum::Value(p) => {
            assert!(satisfies(&s, &p));
            assert_eq!(Some(lex_key(&objs, &p)), best);
        }
        Optimum::Empty => assert!(pts.is_empty()),
        o => panic!("a bounded system, got {o:?}"),
    }
    assert_eq!(integer_sample(&s).unwrap().is_some(), !pts.is_empty());
    let after = stats::WIDENINGS.load(std::sync::atomic::Ordering::Relaxed);
    assert!(after > before, "expected the i128 width to run");
}

/// `row` composed with the unimodular shear `x_i = y_i + k[i]·y_{i+1}`.
fn shear(row: &[i64], k: &[i64]) -> Vec<i64> {
    let n = row.len() - 1;
    let mut out = row.to_vec();
    for j in 1..n {
        out[j] = row[j] + row[j - 1] * k[j - 1];
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A unimodular change of coordinates with huge entries keeps every
    /// objective value, so no rational answer changes; but the
    /// coefficients (~2^42) push the tableau beyond i128 (big-integer path).
    #[test]
    fn huge_unimodular_shear_changes_nothing(
        (s, objs, ks) in system_strategy(1, 5).prop_flat_map(|s| {
            let n = s.n_vars;
            (
                Just(s),
                proptest::collection::vec(obj_strategy(n), 1..=2),
                proptest::collection::vec((1i64 << 40)..(1i64 << 42), n),
            )
        })
    ) {
        let t = with_box(&s, BOX);
        let big = System {
            n_vars: t.n_vars,
            eqs: t.eqs.iter().map(|r| shear(r, &ks)).collect(),
            ineqs: t.ineqs.iter().map(|r| shear(r, &ks)).collect(),
        };
        let bobjs: Vec<Vec<i64>> = objs.iter().map(|o| shear(o, &ks)).collect();
        // Only the rational queries: in sheared coordinates the polytope is
        // long and thin, and plain branch and bound would need ~2^40 nodes
        // (integer queries on huge coefficients are covered by
        // `huge_coefficients_use_big_integers_correctly`).
        prop_assert_eq!(rational_feasible(&t).unwrap(), rational_feasible(&big).unwrap());
        let (a, b) = (rational_lexmin(&t, &objs).unwrap(), rational_lexmin(&big, &bobjs).unwrap());
        match (&a, &b) {
            (Optimum::Value(p), Optimum::Value(q)) => {
                for (o, bo) in objs.iter().zip(&bobjs) {
                    prop_assert_eq!(eval_rat(o, p), eval_rat(bo, q));
                }
            }
            _ => prop_assert_eq!(a, b),
        }
        prop_assert_eq!(rational_min(&t, &objs[0]).unwrap(), rational_min(&big, &bobjs[0]).unwrap());
        prop_assert_eq!(implicit_equalities(&t).unwrap(), implicit_equalities(&big).unwrap());
        prop_assert_eq!(redundant_ineqs(&t).unwrap(), redundant_ineqs(&big).unwrap());
    }
}

/// Regression (shrunk failure of `redundancy_keeps_the_polyhedron`): the
/// same checks as the property, on its exact input. The solver was right;
/// the oracle `fm_range` was wrong on `s` (it returned an unbounded
/// minimum). By hand, with `z = 3x + y + 6` from the equality, the rows
/// become `8x + y + 25 >= 0`, `y + 1 >= 0` (rows 1 and 3 are equal),
/// `7 <= 2x + y <= 8`, so `x ∈ [-11/2, 9/2]`, the objective is
/// `-3x - 12 ∈ [-51/2, 9/2]`, and exactly row 1 is redundant (the
/// duplicate kept last). The lower bound's Farkas certificate uses the
/// equality once, and the simple elimination used to merge it with
/// another history of the same row and prune it by Chernikov's rule.
#[test]
fn redundancy_regression_3_vars_one_eq() {
    let s = sys(
        3,
        &[&[3, 1, -1, 6]],
        &[
            &[-1, -2, 3, 7],
            &[3, 2, -1, 7],
            &[2, 1, 0, -7],
            &[-3, 0, 1, -5],
            &[-2, -1, 0, 8],
        ],
    );
    let objs = [vec![0, 0, 0, 0], vec![3, 2, -2, 0], vec![0, 0, 0, 0]];
    let half = |v: i64| BigRational::new(BigInt::from(v), BigInt::from(2));
    assert_eq!(
        fm_range(&s, &objs[1]),
        Some((Some(half(-51)), Some(half(9))))
    );
    assert_eq!(
        rational_min(&s, &objs[1]).unwrap(),
        Optimum::Value(half(-51))
    );
    assert_eq!(rational_max(&s, &objs[1]).unwrap(), Optimum::Value(half(9)));
    let red = redundant_ineqs(&s).unwrap();
    assert_eq!(red, vec![1]);
    check_redundancy(&s, &red, &objs).unwrap();
}

/// The property of `redundant_ineqs`: dropping the rows `red` of `s` keeps
/// the integer points of a box and the rational range of every objective
/// in `objs`, and no kept inequality is implied by the other kept rows.
fn check_redundancy(s: &System, red: &[usize], objs: &[Vec<i64>]) -> Result<(), String> {
    let mut kept = s.clone();
    kept.ineqs = crate::poly::constraint::drop_rows(s.ineqs.clone(), red);
    if brute(&with_box(s, 4), 4) != brute(&with_box(&kept, 4), 4) {
        return Err("the integer points changed".into());
    }
    for o in objs {
        let (a, b) = (fm_range(s, o), fm_range(&kept, o));
        if a != b {
            return Err(format!("range of {o:?}: {a:?} before, {b:?} after"));
        }
    }
    for (k, row) in kept.ineqs.iter().enumerate() {
        let mut others = kept.clone();
        others.ineqs.remove(k);
        let implied = match fm_range(&others, row) {
            None => true,
            Some((Some(l), _)) => l >= rat(0),
            _ => false,
        };
        if implied {
            return Err(format!("kept row {k} is implied"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// One tableau for many rows answers as one feasibility test per row.
    #[test]
    fn each_reaches_matches_one_feasibility_test_per_row(
        (s, groups) in system_strategy(3, 5).prop_flat_map(|s| {
            let n = s.n_vars;
            (Just(s), prop::collection::vec(prop::collection::vec(obj_strategy(n), 1..4), 0..4))
        }),
    ) {
        let t = with_box(&s, BOX);
        let mut want = rational_feasible(&t).unwrap();
        for g in &groups {
            let mut any = false;
            for o in g {
                let mut u = t.clone();
                u.add_ineq(o.clone());
                any |= rational_feasible(&u).unwrap();
            }
            want &= any;
        }
        prop_assert_eq!(rational_each_reaches(&t, &groups).unwrap(), want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// A prepared (presolved, tableau built once) base answers as the
    /// materialized system: every variable is an objective, so the
    /// lexicographic minimum is one point, whatever the rows' order.
    #[test]
    fn prepared_base_answers_as_the_whole_system(
        (s, extra) in system_strategy(3, 6).prop_flat_map(|s| {
            let n = s.n_vars;
            (Just(s), prop::collection::vec(row_strategy(n, 4), 0..3))
        }),
    ) {
        let t = with_box(&s, BOX);
        let n = t.n_vars;
        let objs: Vec<Vec<i64>> = (0..n)
            .map(|k| (0..=n).map(|c| i64::from(c == k)).collect())
            .collect();
        let prep = Prepared::new(t.clone()).unwrap();
        let whole = prep.with_rows(&[], &extra);
        let mut direct = t.clone();
        extra.iter().for_each(|r| direct.add_ineq(r.clone()));
        prop_assert_eq!(
            prep.rational_lexmin(&[], &extra, &objs).unwrap(),
            rational_lexmin(&direct, &objs).unwrap()
        );
        prop_assert_eq!(rational_feasible(&whole).unwrap(), rational_feasible(&direct).unwrap());
        prop_assert_eq!(brute(&whole, BOX), brute(&direct, BOX));
    }
}

/// `system_strategy` with sign constraints `a·x_v >= 0` (`a` in 1..=2)
/// on random variables inserted among the inequalities, at the front, the
/// middle or the end: on a variable still free and nonbasic the tableau
/// makes the variable itself the constraint's slack instead of adding a
/// row, and such a variable can later be deleted by a restriction to an
/// optimal face (then fixed at 0).
fn signed_system_strategy() -> impl Strategy<Value = System> {
    system_strategy(1, 4).prop_flat_map(|s| {
        let n = s.n_vars;
        let m = s.ineqs.len();
        (
            Just(s),
            proptest::collection::vec((0..n, 1i64..=2, 0..=m), 1..=n + 1),
        )
            .prop_map(move |(mut s, signs)| {
                for (v, a, at) in signs {
                    let mut r = vec![0; n + 1];
                    r[v] = a;
                    let at = at.min(s.ineqs.len());
                    s.ineqs.insert(at, r);
                }
                s
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Sign constraints (the scheduling systems' `x >= 0` rows) agree with
    /// brute force and Fourier–Motzkin in every query that builds a
    /// tableau: integer lexmin and sample (boxed), rational minimum,
    /// implicit equalities, redundancy.
    #[test]
    fn sign_constraints_match_the_oracles(
        (s, objs) in signed_system_strategy().prop_flat_map(|s| {
            let n = s.n_vars;
            (Just(s), proptest::collection::vec(obj_strategy(n), 1..=3))
        })
    ) {
        let (t, pts) = check_boxed_lexmin(&s, &objs)?;
        prop_assert_eq!(integer_sample(&t).unwrap().is_some(), !pts.is_empty());
        let fm = fm_range(&s, &objs[0]);
        let expect_min = match &fm {
            None => Optimum::Empty,
            Some((None, _)) => Optimum::Unbounded,
            Some((Some(l), _)) => Optimum::Value(l.clone()),
        };
        prop_assert_eq!(rational_min(&s, &objs[0]).unwrap(), expect_min);
        check_implicit_equalities(&s)?;
        let red = redundant_ineqs(&s).unwrap();
        if let Err(msg) = check_redundancy(&s, &red, &objs) {
            return Err(TestCaseError::fail(msg));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// A prepared system extended twice (the storage conflict tests' growing
    /// systems) answers as the system with all the rows: emptiness at every
    /// step, and the lexicographic minimum at the end.
    #[test]
    fn extended_preparation_answers_as_the_whole_system(
        (s, first, second) in system_strategy(2, 4).prop_flat_map(|s| {
            let n = s.n_vars;
            (
                Just(s),
                (prop::collection::vec(row_strategy(n, 3), 0..2), prop::collection::vec(row_strategy(n, 4), 0..3)),
                (prop::collection::vec(row_strategy(n, 3), 0..2), prop::collection::vec(row_strategy(n, 4), 0..3)),
            )
        }),
    ) {
        let t = with_box(&s, BOX);
        let n = t.n_vars;
        let objs: Vec<Vec<i64>> = (0..n)
            .map(|k| (0..=n).map(|c| i64::from(c == k)).collect())
            .collect();
        let mut direct = t.clone();
        let mut prep = Prepared::new(t).unwrap();
        prop_assert_eq!(prep.rational_empty().unwrap(), !rational_feasible(&direct).unwrap());
        for (eqs, ineqs) in [first, second] {
            prep = prep.extended(&eqs, &ineqs).unwrap();
            eqs.iter().for_each(|r| direct.add_eq(r.clone()));
            ineqs.iter().for_each(|r| direct.add_ineq(r.clone()));
            prop_assert_eq!(prep.rational_empty().unwrap(), !rational_feasible(&direct).unwrap());
        }
        prop_assert_eq!(
            prep.rational_lexmin(&[], &[], &objs).unwrap(),
            rational_lexmin(&direct, &objs).unwrap()
        );
        prop_assert_eq!(brute(&prep.system(), BOX), brute(&direct, BOX));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// The exact flatness test of a dive level ([`Tab::can_lower_by_one`],
    /// which pivots on the tableau itself and back): at the minimum of an
    /// objective `f` over a boxed polyhedron, it answers whether `f`
    /// reaches its minimum + 1 (the rational maximum of `f`, by another
    /// query), and leaves the tableau as it found it, entry for entry.
    #[test]
    fn flatness_test_answers_and_restores_the_tableau(
        (s, f, band) in system_strategy(1, 4).prop_flat_map(|s| {
            let n = s.n_vars;
            (Just(s), obj_strategy(n), prop::option::of((-4i64..=4, 1i64..=3)))
        })
    ) {
        let mut t = with_box(&s, BOX);
        let n = t.n_vars;
        // Often `f` is confined to a band `m <= f <= m + w/2` (w = 1, 2, 3):
        // the thin polyhedra where the answer takes pivots to find.
        if let Some((m, w)) = band {
            let mut lo = f.clone();
            lo[n] -= m;
            t.add_ineq(lo);
            let mut hi: Vec<i64> = f.iter().map(|x| -2 * x).collect();
            hi[n] += 2 * m + w;
            t.add_ineq(hi);
        }
        let (mut tab, _) = build_tab::<i64>(n, &t.eqs, &t.ineqs).unwrap();
        prop_assume!(!tab.empty);
        // v = −f, maximized: its value is −min f.
        let neg: Vec<i64> = f[..n].iter().map(|x| -x).collect();
        let v = tab.add_free_row(&neg, &-f[n]).unwrap();
        prop_assert_eq!(tab.maximize(v, Mode::Full).unwrap(), MaxOutcome::Optimal);
        let before = format!("{tab:?}");
        let lowers = tab.can_lower_by_one(v, true).unwrap();
        prop_assert_eq!(format!("{tab:?}"), before);
        let Optimum::Value(min) = rational_min(&t, &f).unwrap() else {
            return Err(TestCaseError::fail("a boxed non-empty polyhedron has a minimum"));
        };
        let negf: Vec<i64> = f.iter().map(|x| -x).collect();
        let Optimum::Value(neg_max) = rational_min(&t, &negf).unwrap() else {
            return Err(TestCaseError::fail("a boxed non-empty polyhedron has a maximum"));
        };
        let one = BigRational::from_integer(BigInt::from(1));
        prop_assert_eq!(lowers, -neg_max >= min + one);
    }
}
