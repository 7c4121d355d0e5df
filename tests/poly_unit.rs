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
