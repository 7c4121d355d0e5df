//! Worked cases of the polyhedral core (sets, maps, parsing, printing).

use alphac::poly::{Map, MultiAff, PolyError, Set};

fn set(s: &str) -> Set {
    Set::parse(s).unwrap_or_else(|e| panic!("parse {s}: {e}"))
}

#[test]
fn triangle() {
    let t = set("[N] -> { [i, j] : 0 <= i < N and 0 <= j <= i }");
    let pts = t.points(&[3]).unwrap();
    assert_eq!(
        pts,
        vec![
            vec![0, 0],
            vec![1, 0],
            vec![1, 1],
            vec![2, 0],
            vec![2, 1],
            vec![2, 2]
        ]
    );
    assert_eq!(t.points(&[0]).unwrap(), Vec::<Vec<i64>>::new());
    assert_eq!(t.bounding_box(&[4]).unwrap(), Some(vec![(0, 3), (0, 3)]));
    assert_eq!(t.lexmin_point(&[4]).unwrap(), Some(vec![0, 0]));
    assert_eq!(t.lexmax_point(&[4]).unwrap(), Some(vec![3, 3]));
    assert!(t.contains(&[4], &[3, 2]));
    assert!(!t.contains(&[4], &[2, 3]));
    assert_eq!(t.dimension().unwrap(), 2);
    assert!(!t.is_empty().unwrap());
    assert!(t.is_empty_for(&[0]).unwrap());
    println!("{t}");
    let again = set(&t.to_string());
    assert_eq!(again.to_string(), t.to_string());
}

#[test]
fn integer_emptiness() {
    let s = set("{ [i, j] : 0 <= i, j <= 10 and 2i + 2j = 7 }");
    assert!(s.is_empty().unwrap());
    let s = set("{ [i, j] : 0 <= i, j <= 10 and 2i + 4j >= 3 and 2i + 4j <= 3 }");
    assert!(s.is_empty().unwrap());
}

#[test]
fn inexact_projection() {
    let s = set("{ [i, j] : i = 2j and 0 <= j <= 5 }");
    let (p, exact) = s.project_out(1, 1).unwrap();
    assert!(!exact);
    // the real shadow contains odd i
    assert!(p.contains(&[], &[1]));
    let s = set("{ [i, j] : i = j + 1 and 0 <= j <= 5 }");
    let (p, exact) = s.project_out(1, 1).unwrap();
    assert!(exact);
    assert_eq!(
        p.points(&[]).unwrap(),
        (1..=6).map(|i| vec![i]).collect::<Vec<_>>()
    );
}

#[test]
fn not_equal_and_unions() {
    let s = set("{ [i] : 0 <= i <= 4 and i != 2 }");
    assert_eq!(
        s.points(&[]).unwrap(),
        vec![vec![0], vec![1], vec![3], vec![4]]
    );
    let u = set("{ [i] : 0 <= i <= 2; [i] : 5 <= i <= 6 or i = 10 }");
    assert_eq!(
        u.points(&[]).unwrap(),
        vec![vec![0], vec![1], vec![2], vec![5], vec![6], vec![10]]
    );
    let c = u.complement().unwrap();
    assert!(c.contains(&[], &[3]) && !c.contains(&[], &[5]));
}

#[test]
fn parse_errors() {
    match Set::parse("{ [i] : i <= k }") {
        Err(PolyError::Parse { pos, .. }) => assert_eq!(pos, 13),
        r => panic!("{r:?}"),
    }
    match Set::parse("[N] -> { [i] : i < N ") {
        Err(PolyError::Parse { pos, .. }) => assert_eq!(pos, 21),
        r => panic!("{r:?}"),
    }
    match Set::parse("{ [i] : i * i >= 0 }") {
        Err(PolyError::Parse { pos, .. }) => assert_eq!(pos, 8),
        r => panic!("{r:?}"),
    }
}

#[test]
fn maps_and_functions() {
    let m = Map::parse("[N] -> { [i, j] -> [i] : 0 <= j <= i < N }").unwrap();
    let d = m.domain().unwrap();
    assert_eq!(
        d.points(&[2]).unwrap(),
        vec![vec![0, 0], vec![1, 0], vec![1, 1]]
    );
    let f = MultiAff::parse("[N] -> { [i, j] -> [i - 1, j] }").unwrap();
    let t = set("[N] -> { [i, j] : 0 <= j <= i < N }");
    let pre = t.preimage(&f).unwrap();
    assert!(pre.contains(&[3], &[1, 0]));
    assert!(!pre.contains(&[3], &[0, 0]));
    let img = t.image(&f).unwrap();
    assert!(img.contains(&[3], &[-1, 0]));
    println!("{m}\n{f}\n{pre}\n{img}");
}

#[test]
fn parametric_lexmin_of_triangle() {
    let t = set("[N] -> { [i, j] : 0 <= i < N and 0 <= j <= i }");
    let lmin = t.lexmin().unwrap();
    let lmax = t.lexmax().unwrap();
    for n in 0..5 {
        let want: Vec<Vec<i64>> = if n == 0 { vec![] } else { vec![vec![0, 0]] };
        assert_eq!(lmin.points(&[n]).unwrap(), want);
        let want: Vec<Vec<i64>> = if n == 0 {
            vec![]
        } else {
            vec![vec![n - 1, n - 1]]
        };
        assert_eq!(lmax.points(&[n]).unwrap(), want);
    }
    // the strided set {i : i = 2j} needs an existential variable
    let s = set("{ [i, j] : i = 2j and 0 <= i <= 10 and 0 <= j <= 10 }");
    let r = s.project_out(1, 1);
    assert!(matches!(r, Ok((_, false))));
}

#[test]
fn unbounded_enumeration_is_an_error() {
    let s = set("[N] -> { [i, j] : 0 <= i < N and j >= i }");
    assert!(matches!(s.points(&[3]), Err(PolyError::Unbounded(_))));
    assert!(matches!(s.bounding_box(&[3]), Err(PolyError::Unbounded(_))));
    assert!(matches!(s.lexmax_point(&[3]), Err(PolyError::Unbounded(_))));
    // lexmin exists though
    assert_eq!(s.lexmin_point(&[3]).unwrap(), Some(vec![0, 0]));
    // empty for N = 0 even though unbounded in general
    assert_eq!(s.points(&[0]).unwrap(), Vec::<Vec<i64>>::new());
}

#[test]
fn named_tuples_and_notation() {
    let s = set("[N] -> { S[i, j] : 0 <= i, j < N && (i < j || i > j) }");
    let t = s.to_string();
    assert!(t.starts_with("[N] -> { S[i, j]"), "{t}");
    assert_eq!(set(&t).to_string(), t);
    assert_eq!(s.points(&[2]).unwrap(), vec![vec![0, 1], vec![1, 0]]);
    // mismatched tuple names in one union
    assert!(matches!(
        Set::parse("{ S[i] : i = 0; T[i] : i = 1 }"),
        Err(PolyError::Parse { pos: 16, .. })
    ));
    // empty tuples and parameter-only constraints
    let e = set("{ [] : }");
    assert_eq!(e.points(&[]).unwrap(), vec![Vec::<i64>::new()]);
    let c = set("[N] -> { : N > 0 }");
    assert!(c.is_empty_for(&[0]).unwrap() && !c.is_empty_for(&[1]).unwrap());
    // constants in output tuples, == and 2*i
    let m = Map::parse("{ [i] -> [i, 0] : 0 <= 2*i == 2 }").unwrap();
    assert_eq!(m.pairs(&[]).unwrap(), vec![(vec![1], vec![1, 0])]);
    // chains with lists
    let s = set("[N] -> { [i, j] : 0 <= i, j < N <= 3 }");
    assert_eq!(s.points(&[2]).unwrap().len(), 4);
    assert!(s.is_empty_for(&[4]).unwrap());
    // the empty set prints as false and re-parses
    let z = set("{ [i] : i > 0 and i < 0 }");
    assert_eq!(z.to_string(), "{ [i] : false }");
    assert!(set(&z.to_string()).is_empty().unwrap());
    // tightening and gcd normalization in the printed form
    assert_eq!(
        set("{ [i] : 2i >= 1 and 4i <= 14 }").to_string(),
        "{ [i] : i >= 1 and i <= 3 }"
    );
}

#[test]
fn equalities_and_redundancy() {
    let s = set("{ [i, j] : i <= j and j <= i and 0 <= i <= 5 and i <= 7 and j >= -3 }");
    let b = &s.pieces()[0];
    let d = b.detect_equalities().unwrap();
    assert_eq!(d.eqs().len(), 1);
    let r = b.remove_redundancies().unwrap();
    assert!(r.ineqs().len() < b.ineqs().len());
    assert!(Set::from_basic(r).is_equal(&s).unwrap());
    // an implicit equality that only the solver sees
    let s = set("{ [i, j] : i + j >= 4 and i <= 2 and j <= 2 }");
    assert_eq!(s.pieces()[0].detect_equalities().unwrap().eqs().len(), 2);
    assert_eq!(s.dimension().unwrap(), 0);
    let bx = Set::r#box(
        alphac::poly::Space::set::<&str, &str>(&[], &["a", "b"]),
        &[(0, 1), (2, 2)],
    )
    .unwrap();
    assert_eq!(bx.points(&[]).unwrap(), vec![vec![0, 2], vec![1, 2]]);
    // affine hull of a union of two points
    let u = set("{ [i, j] : i = 0 and j = 1; [i, j] : i = 2 and j = 3 }");
    let h = u.affine_hull().unwrap();
    assert_eq!(h.eqs().len(), 1);
    assert!(h.contains(&[], &[5, 6]) && !h.contains(&[], &[5, 5]));
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!(
        "{{ [i] : {}i{} >= 0 }}",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    assert!(matches!(Set::parse(&deep), Err(PolyError::Parse { .. })));
    let minus = format!("{{ [i] : {}i >= 0 }}", "-".repeat(100_000));
    assert!(matches!(Set::parse(&minus), Err(PolyError::Parse { .. })));
    let nested_ok = format!("{{ [i] : {}i >= 0{} }}", "(".repeat(50), ")".repeat(50));
    assert!(Set::parse(&nested_ok).is_ok());
}

#[test]
fn align_params_and_deltas() {
    let s = set("[N] -> { [i] : 0 <= i < N }");
    let a = s.align_params(&["K", "N"]).unwrap();
    assert_eq!(a.space().params.to_vec(), vec!["K", "N"]);
    assert_eq!(a.points(&[7, 3]).unwrap(), vec![vec![0], vec![1], vec![2]]);
    assert!(s.align_params(&["K"]).is_err());
    let m = Map::parse("[N] -> { [i, j] -> [i + 1, j - 2] : 0 <= i, j < N }").unwrap();
    let d = m.deltas().unwrap();
    assert_eq!(d.points(&[3]).unwrap(), vec![vec![1, -2]]);
    assert!(d.is_empty_for(&[0]).unwrap());
    let m = Map::parse("{ [i] -> [j] : 0 <= i < j <= 3 }").unwrap();
    assert_eq!(
        m.deltas().unwrap().points(&[]).unwrap(),
        vec![vec![1], vec![2], vec![3]]
    );
}

#[test]
fn composition_order_and_function_text() {
    let m1 = Map::parse("{ [i] -> [i + 1] }").unwrap();
    let m2 = Map::parse("{ [i] -> [2i] }").unwrap();
    // apply_range: first m1, then m2
    let c = m1.apply_range(&m2).unwrap();
    assert!(c.contains(&[], &[3], &[8]));
    assert!(!c.contains(&[], &[3], &[7]));
    let f = MultiAff::parse("[N] -> { S[i, j] -> A[i - 1, 2j + N, 0] }").unwrap();
    let t = f.to_string();
    assert_eq!(t, "[N] -> { S[i, j] -> A[i - 1, N + 2j, 0] }");
    assert_eq!(MultiAff::parse(&t).unwrap(), f);
    assert_eq!(f.eval(&[10], &[3, 4]).unwrap(), vec![2, 18, 0]);
    let g = MultiAff::parse("[N] -> { [a, b, c] -> [a + c, b] }").unwrap();
    let h = g.pullback(&f).unwrap(); // g(f(x))
    assert_eq!(h.eval(&[10], &[3, 4]).unwrap(), vec![2, 18]);
    let a = alphac::poly::Aff::parse("[N] -> { [i] -> [N - i] }").unwrap();
    assert_eq!(a.to_string(), "[N] -> { [i] -> [N - i] }");
    assert_eq!(a.eval(&[5], &[2]).unwrap(), 3);
    // image of a strided set is not a polyhedron: typed error
    let s = set("{ [i] : 0 <= i <= 4 }");
    let dbl = MultiAff::parse("{ [i] -> [2i] }").unwrap();
    assert!(matches!(s.image(&dbl), Err(PolyError::Unsupported(_))));
    assert_eq!(
        s.image(&MultiAff::parse("{ [i] -> [i + 3] }").unwrap())
            .unwrap()
            .points(&[])
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn fix_dims_slices_a_set() {
    // The slice k = 1 of a 3-D set, over [i, j]: exactly the points of the
    // set with k = 1, with k dropped.
    let s = set("[N] -> { [k, i, j] : 0 <= k < 3 and 0 <= i < N and i < j < N + k }");
    let slice = s.fix_dims(&[(0, 1)]).unwrap();
    assert_eq!(slice.dims(), ["i".to_string(), "j".to_string()]);
    let expected: Vec<Vec<i64>> = s
        .points(&[4])
        .unwrap()
        .into_iter()
        .filter(|p| p[0] == 1)
        .map(|p| p[1..].to_vec())
        .collect();
    assert_eq!(slice.points(&[4]).unwrap(), expected);
    // Out of range and twice are errors.
    assert!(s.fix_dims(&[(3, 0)]).is_err());
    assert!(s.fix_dims(&[(1, 0), (1, 2)]).is_err());
}

#[test]
fn solve_each_reports_each_determined_variable() {
    // Over (s0, s1, t0, 1): s0 = t0 - 1, s1 free.
    let eqs = vec![vec![1, 0, -1, 1]];
    let f = alphac::poly::linalg::solve_each(&eqs, 3, &[0, 1]).unwrap();
    assert_eq!(f, vec![Some(vec![0, 0, 1, -1]), None]);
    assert_eq!(
        alphac::poly::linalg::solve_for(&eqs, 3, &[0, 1]).unwrap(),
        None
    );
}

#[test]
fn contains_box_is_sound_and_holds_for_box_domains() {
    // (set, holds on its bounding box at every parameter value where it
    // is not empty: one piece, every constraint on one dimension)
    let cases = [
        ("[N] -> { [i, j] : 0 <= i < N and 0 <= j <= 3 }", true),
        (
            "[N] -> { [i, j] : j = 2 and 0 <= i <= N and 2i >= 1 }",
            true,
        ),
        ("[N] -> { [i] : N >= 5 and 0 <= i < N }", true),
        ("[N] -> { [i, j] : 0 <= j <= i < N }", false),
        ("[N] -> { [i] : 0 <= i <= 2 or 4 <= i <= N }", false),
        (
            "[N] -> { [i, j] : 0 <= i < N and 0 <= j < N and i + j <= 4 }",
            false,
        ),
    ];
    for (text, boxy) in cases {
        let s = set(text);
        let d = s.n_dims();
        for n in 0..7 {
            let params = [n];
            // Soundness: every box answered `true` has all its points in
            // the set (boxes around the set, empty ones included).
            let mut corners = vec![vec![]];
            for _ in 0..2 * d {
                corners = corners
                    .into_iter()
                    .flat_map(|c: Vec<i64>| {
                        (-1..=6).map(move |x| {
                            let mut c = c.clone();
                            c.push(x);
                            c
                        })
                    })
                    .collect();
            }
            for c in &corners {
                let (lo, hi) = c.split_at(d);
                if !s.contains_box(&params, lo, hi) {
                    continue;
                }
                let mut p = lo.to_vec();
                if lo.iter().zip(hi).any(|(l, h)| l > h) {
                    continue;
                }
                'points: loop {
                    assert!(
                        s.contains(&params, &p),
                        "{text} at N = {n}: {p:?} in {lo:?}..{hi:?}"
                    );
                    for k in (0..d).rev() {
                        if p[k] < hi[k] {
                            p[k] += 1;
                            continue 'points;
                        }
                        p[k] = lo[k];
                    }
                    break;
                }
            }
            // The bounding box of a box domain is in it.
            if let Some(b) = s.bounding_box(&params).expect("bounded") {
                let (lo, hi): (Vec<i64>, Vec<i64>) = b.into_iter().unzip();
                assert_eq!(s.contains_box(&params, &lo, &hi), boxy, "{text} at N = {n}");
            }
        }
    }
}
