//! Faces of polyhedra (`poly::faces`): the paper's triangle (SDR, Eq. 16),
//! a square, and properties on random bounded polytopes checked against
//! the definition (a face is P with a subset of its inequalities made
//! equalities) by brute-force point enumeration.

use alphac::poly::{faces, set_faces, BasicSet, Set, Space};
use proptest::prelude::*;

fn bset(s: &str) -> BasicSet {
    BasicSet::parse(s).unwrap()
}

fn same(a: &BasicSet, b: &BasicSet) -> bool {
    Set::from_basic(a.clone())
        .is_equal(&Set::from_basic(b.clone()))
        .unwrap()
}

#[test]
fn triangle_has_the_seven_faces_of_eq16() {
    let p = bset("[N] -> { [i, j] : 0 <= i < N and 0 <= j <= i }");
    let f = faces(&p).unwrap();
    let dims: Vec<i64> = f.iter().map(|x| x.dimension().unwrap()).collect();
    assert_eq!(dims, vec![2, 1, 1, 1, 0, 0, 0, -1], "{f:?}");
    let expected = [
        "[N] -> { [i, j] : 0 <= j <= i < N }",
        "[N] -> { [i, j] : j = 0 and 0 <= i < N }",
        "[N] -> { [i, j] : j = i and 0 <= i < N }",
        "[N] -> { [i, j] : i = N - 1 and 0 <= j < N }",
        "[N] -> { [i, j] : i = 0 and j = 0 and N >= 1 }",
        "[N] -> { [i, j] : i = N - 1 and j = 0 and N >= 1 }",
        "[N] -> { [i, j] : i = N - 1 and j = N - 1 and N >= 1 }",
    ];
    for e in expected {
        let e = bset(e);
        let n = f.iter().filter(|x| same(x, &e)).count();
        assert_eq!(n, 1, "{e} should be exactly one face of {f:?}");
    }
    assert!(f[7].is_empty().unwrap());
    assert!(same(&f[0], &p));
    // deterministic order: same list twice, and as text
    let again: Vec<String> = faces(&p).unwrap().iter().map(|x| x.to_string()).collect();
    let first: Vec<String> = f.iter().map(|x| x.to_string()).collect();
    assert_eq!(first, again);
}

#[test]
fn square_has_ten_faces() {
    let p = bset("{ [i, j] : 0 <= i <= 3 and 0 <= j <= 3 }");
    let f = faces(&p).unwrap();
    let dims: Vec<i64> = f.iter().map(|x| x.dimension().unwrap()).collect();
    assert_eq!(dims, vec![2, 1, 1, 1, 1, 0, 0, 0, 0, -1]);
    for (a, b) in [(0, 0), (0, 3), (3, 0), (3, 3)] {
        let v = bset(&format!("{{ [i, j] : i = {a} and j = {b} }}"));
        assert!(f.iter().any(|x| same(x, &v)), "vertex ({a}, {b}) missing");
    }
}

#[test]
fn empty_and_point() {
    let e = bset("{ [i] : i > 0 and i < 0 }");
    let f = faces(&e).unwrap();
    assert_eq!(f.len(), 1);
    assert!(f[0].is_empty().unwrap());
    let p = bset("{ [i, j] : i = 2 and j = 5 }");
    let f = faces(&p).unwrap();
    assert_eq!(f.len(), 2);
    // an unbounded set: a quadrant has the apex, two rays and itself
    let q = bset("{ [i, j] : i >= 0 and j >= 0 }");
    assert_eq!(faces(&q).unwrap().len(), 5);
}

#[test]
fn set_faces_deduplicates_across_pieces() {
    // two squares sharing the edge i = 3: 10 + 10 faces, minus the shared
    // edge and its two vertices, minus one empty face
    let s = Set::parse(
        "{ [i, j] : 0 <= i <= 3 and 0 <= j <= 3; [i, j] : 3 <= i <= 6 and 0 <= j <= 3 }",
    )
    .unwrap();
    let f = set_faces(&s).unwrap();
    assert_eq!(f.len(), 16, "{f:?}");
}

#[test]
fn hypercube_face_count() {
    // the 4-cube has 3^4 = 81 non-empty faces (each coordinate: lower
    // bound, upper bound or free)
    let p = bset("[N] -> { [i, j, k, l] : 0 <= i, j, k, l < N }");
    let f = faces(&p).unwrap();
    assert_eq!(f.len(), 82);
    let per_dim = |d: i64| f.iter().filter(|x| x.dimension().unwrap() == d).count();
    // C(4, d) * 2^(4 - d) faces of dimension d
    assert_eq!(
        [per_dim(4), per_dim(3), per_dim(2), per_dim(1), per_dim(0)],
        [1, 8, 24, 32, 16]
    );
}

// ---- properties on random bounded polytopes ----

const B: i64 = 3;

fn polytope() -> impl Strategy<Value = (usize, Vec<Vec<i64>>)> {
    (2usize..=3).prop_flat_map(|nd| {
        let row = prop::collection::vec(-2i64..=2, nd + 1);
        (Just(nd), prop::collection::vec(row, 1..=3))
    })
}

/// Polytopes with a totally unimodular constraint matrix (bounds and
/// differences `x_a - x_b`): every face has integral vertices, so faces of
/// faces are faces also over the integers.
fn tu_polytope() -> impl Strategy<Value = (usize, Vec<Vec<i64>>)> {
    (2usize..=3).prop_flat_map(|nd| {
        let row = (0..nd, 0..nd, prop::bool::ANY, -3i64..=3).prop_map(move |(a, b, neg, c)| {
            let mut r = vec![0; nd + 1];
            let s = if neg { -1 } else { 1 };
            r[a] += s;
            if a != b {
                r[b] -= s;
            }
            r[nd] = c;
            r
        });
        (Just(nd), prop::collection::vec(row, 1..=4))
    })
}

fn build(nd: usize, extra: &[Vec<i64>]) -> BasicSet {
    let names: Vec<String> = ["i", "j", "k"][..nd]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let space = Space::set::<String, String>(&[], &names);
    let mut ineqs = extra.to_vec();
    for d in 0..nd {
        let mut lo = vec![0; nd + 1];
        lo[d] = 1;
        lo[nd] = B;
        let mut hi = vec![0; nd + 1];
        hi[d] = -1;
        hi[nd] = B;
        ineqs.push(lo);
        ineqs.push(hi);
    }
    BasicSet::from_rows(space, vec![], ineqs).unwrap()
}

fn pts(b: &BasicSet) -> Vec<Vec<i64>> {
    Set::from_basic(b.clone()).points(&[]).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn faces_follow_the_definition((nd, extra) in polytope()) {
        let p = build(nd, &extra);
        let f = faces(&p).unwrap();
        let last = f.last().unwrap();
        prop_assert!(last.is_empty().unwrap());
        if p.is_empty().unwrap() {
            prop_assert_eq!(f.len(), 1);
            return Ok(());
        }
        let s = p.simplify().unwrap();
        let pp = pts(&p);
        prop_assert!(same(&f[0], &p));
        let dp = p.dimension().unwrap();
        let mut texts = std::collections::BTreeSet::new();
        for x in &f {
            // the max dimension is P's, and the order is by dimension
            prop_assert!(x.dimension().unwrap() <= dp);
            // every face is a subset of P
            prop_assert!(pts(x).iter().all(|q| pp.contains(q)));
            // distinct
            prop_assert!(texts.insert(x.to_string()));
            if x.is_empty().unwrap() {
                continue;
            }
            // definition: x = P with the inequalities tight on x made equalities
            let mut g = s.clone();
            for c in s.ineqs() {
                let mut neg = x.clone();
                neg.add_ineq({
                    let mut r: Vec<i64> = c.clone();
                    let n = r.len() - 1;
                    r[n] -= 1; // c >= 1
                    r
                }).unwrap();
                if neg.is_empty().unwrap() {
                    g.add_eq(c.clone()).unwrap();
                }
            }
            prop_assert_eq!(pts(&g), pts(x), "face {} is not P with its tight inequalities", x);
        }
        let dims: Vec<i64> = f.iter().map(|x| x.dimension().unwrap()).collect();
        prop_assert!(dims.windows(2).all(|w| w[0] >= w[1]));
        // completeness: every non-empty P ∩ {S = 0} is a face
        let ins = s.ineqs().to_vec();
        if ins.len() <= 8 {
            for mask in 1u32..(1 << ins.len()) {
                let mut g = s.clone();
                for (k, c) in ins.iter().enumerate() {
                    if mask & (1 << k) != 0 {
                        g.add_eq(c.clone()).unwrap();
                    }
                }
                let gp = pts(&g);
                if gp.is_empty() {
                    continue;
                }
                prop_assert!(f.iter().any(|z| pts(z) == gp), "P ∩ {{S = 0}} = {} is no face", g);
            }
        }
    }

    #[test]
    fn faces_of_faces_are_faces((nd, extra) in tu_polytope()) {
        let p = build(nd, &extra);
        let f = faces(&p).unwrap();
        for x in &f {
            for y in faces(x).unwrap() {
                prop_assert!(f.iter().any(|z| pts(z) == pts(&y)), "face {} of face {} missing", y, x);
            }
        }
    }
}

/// One-parameter polytopes `[N] -> { x : 0 <= x_d <= N, random rows }`.
fn param_polytope() -> impl Strategy<Value = (usize, Vec<Vec<i64>>)> {
    (2usize..=3).prop_flat_map(|nd| {
        let row = prop::collection::vec(-1i64..=1, nd + 2);
        (Just(nd), prop::collection::vec(row, 1..=2))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// For a large parameter value, the parametric faces (parameters fixed
    /// afterwards) are exactly the faces of the fixed polytope.
    #[test]
    fn parametric_faces_match_fixed_instances((nd, extra) in param_polytope()) {
        let names: Vec<String> = ["i", "j", "k"][..nd].iter().map(|s| s.to_string()).collect();
        let space = Space::set(&["N"], &names);
        let mut ineqs = extra.clone();
        for d in 0..nd {
            let mut lo = vec![0; nd + 2];
            lo[1 + d] = 1;
            let mut hi = vec![0; nd + 2];
            hi[0] = 1;
            hi[1 + d] = -1;
            ineqs.push(lo);
            ineqs.push(hi);
        }
        let p = BasicSet::from_rows(space, vec![], ineqs).unwrap();
        let n = 30;
        let fixed = p.fix_params(&[n]).unwrap();
        let want: std::collections::BTreeSet<Vec<Vec<i64>>> = faces(&fixed)
            .unwrap()
            .iter()
            .map(pts)
            .filter(|v| !v.is_empty())
            .collect();
        let got: std::collections::BTreeSet<Vec<Vec<i64>>> = faces(&p)
            .unwrap()
            .iter()
            .map(|f| pts(&f.fix_params(&[n]).unwrap()))
            .filter(|v| !v.is_empty())
            .collect();
        prop_assert_eq!(got, want, "{}", p);
    }
}
