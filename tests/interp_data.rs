//! Data files on disk: `.npy` and CSV through the paths the CLI uses.

use alphac::ir::ElemType;
use alphac::runtime::data::{read_data, read_npy, write_data, write_npy};
use alphac::runtime::{Array, ArraySpec, RuntimeError, Scalar};
use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("alphac-interp-data-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn spec(name: &str, ty: ElemType, lo: Vec<i64>, hi: Vec<i64>) -> ArraySpec {
    ArraySpec {
        name: name.into(),
        ty,
        lo,
        hi,
    }
}

#[test]
fn files_round_trip_by_extension() {
    for ty in [ElemType::Int, ElemType::Float, ElemType::Bool] {
        let s = spec("M", ty, vec![2, -1], vec![5, 3]);
        let a = Array::random(&s, 21).unwrap();
        for ext in ["npy", "csv"] {
            let path = tmp(&format!("m_{}.{ext}", ty.name()));
            write_data(&path, &a).unwrap();
            let b = read_data(&path, &s).unwrap();
            assert_eq!(a, b, "{ext} round trip of {}", ty.name());
        }
    }
}

#[test]
fn special_floats_survive_csv() {
    let s = spec("F", ElemType::Float, vec![0], vec![4]);
    let mut a = Array::zeros(&s).unwrap();
    for (i, x) in [f64::NAN, f64::INFINITY, -0.0, 1e-300, 0.1]
        .into_iter()
        .enumerate()
    {
        a.set(&[i as i64], Scalar::Float(x)).unwrap();
    }
    let path = tmp("special.csv");
    write_data(&path, &a).unwrap();
    let b = read_data(&path, &s).unwrap();
    for i in 0..5 {
        match (a.get(&[i]).unwrap(), b.get(&[i]).unwrap()) {
            (Scalar::Float(x), Scalar::Float(y)) => {
                assert!(
                    x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
                    "{x} vs {y}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn file_errors_name_the_variable() {
    let s = spec("A", ElemType::Float, vec![0], vec![9]);
    match read_npy(&tmp("does-not-exist.npy"), &s) {
        Err(RuntimeError::Io { name, .. }) => assert_eq!(name, "A"),
        other => panic!("{other:?}"),
    }
    let small = Array::zeros(&spec("A", ElemType::Float, vec![0], vec![4])).unwrap();
    let path = tmp("small.npy");
    write_npy(&path, &small).unwrap();
    let e = read_npy(&path, &s).unwrap_err();
    assert_eq!(e.to_string(), "A: expected shape [10], found [5]");
    let ints = Array::zeros(&spec("A", ElemType::Int, vec![0], vec![9])).unwrap();
    write_npy(&path, &ints).unwrap();
    let e = read_npy(&path, &s).unwrap_err();
    assert_eq!(
        e.to_string(),
        "A: expected dtype float64 (or float32), found int64"
    );
    let huge = spec(
        "H",
        ElemType::Float,
        vec![0, 0, 0],
        vec![1 << 12, 1 << 12, 1 << 12],
    );
    let e = read_npy(&path, &huge).unwrap_err();
    assert!(matches!(e, RuntimeError::TooLarge { .. }), "{e}");
}
