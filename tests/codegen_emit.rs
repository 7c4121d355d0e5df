//! Snapshots of the emitted loop programs (`compile::emit`) for prefix sum,
//! matmul and cholesky (optimizer off, so that the loops of the source's
//! reductions are visible), and the documented error of a bad indirect
//! index through `Compiled::run`.

use alphac::compile::{self, Options};
use alphac::interp;
use alphac::runtime::{Array, ArrayData};
use std::collections::HashMap;

fn emit(name: &str, optimize: bool) -> String {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).unwrap();
    let p = compile::parse_program(&src).unwrap();
    let sys = p.systems[0].name.clone();
    compile::emit(
        &p,
        &sys,
        &Options {
            optimize,
            ..Options::default()
        },
    )
    .unwrap()
}

#[test]
fn emit_prefix_sum() {
    insta::assert_snapshot!("codegen_prefix_sum", emit("prefix_sum", false));
    insta::assert_snapshot!("codegen_prefix_sum_sdr", emit("prefix_sum", true));
}

#[test]
fn emit_matmul() {
    insta::assert_snapshot!("codegen_matmul", emit("matmul", false));
}

#[test]
fn emit_cholesky() {
    insta::assert_snapshot!("codegen_cholesky", emit("cholesky", false));
}

#[test]
fn bad_indirect_index_names_the_variable_and_point() {
    let src = "affine gather [N] -> { : N > 0 }
    inputs
        idx : int [N];
        A : float [N];
    outputs
        B : float [N];
    let
        B[i] = A[idx[i]];
.";
    let c = compile::compile(src, &Options::default()).unwrap();
    let sys = c.system().clone();
    let spec = |n: &str| interp::array_spec(&sys.vars[sys.var_by_name(n).unwrap()], &[3]).unwrap();
    let idx = Array::from_data(&spec("idx"), ArrayData::Int(vec![0, 7, 1])).unwrap();
    let a = Array::from_data(&spec("A"), ArrayData::Float(vec![1.0, 2.0, 3.0])).unwrap();
    let inputs: HashMap<String, Array> = [
        ("idx".to_string(), idx.clone()),
        ("A".to_string(), a.clone()),
    ]
    .into();
    let err = c.run(&[3], &inputs, 0).unwrap_err().to_string();
    assert!(err.contains('A') && err.contains('7'), "{err}");
    assert!(err.contains("outside its domain"), "{err}");
    // A good index runs and gathers.
    let idx = Array::from_data(&spec("idx"), ArrayData::Int(vec![2, 0, 1])).unwrap();
    let inputs: HashMap<String, Array> = [("idx".to_string(), idx), ("A".to_string(), a)].into();
    let out = c.run(&[3], &inputs, 0).unwrap();
    assert_eq!(out["B"].data(), &ArrayData::Float(vec![3.0, 1.0, 2.0]));
}
