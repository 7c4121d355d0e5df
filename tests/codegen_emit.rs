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

/// An accumulation in a loop that also draws from a categorical is kept in
/// a register when the draw does not touch the accumulated array
/// (`codegen::opt::hoist_accumulators`): GMM-LW's log likelihood.
#[test]
fn an_accumulator_beside_a_draw_is_kept_in_a_register() {
    let code = emit("gmm_lw", true);
    let step = code
        .find("for (t0 = 1;")
        .unwrap_or_else(|| panic!("no step loop in\n{code}"));
    // the loop's statements up to its draw accumulate in the locals (the
    // last point's term follows the loop, as `loglik +=`)
    let body: Vec<&str> = code[step..]
        .lines()
        .skip(1)
        .take_while(|l| !l.contains("categorical("))
        .collect();
    assert!(body.len() < 20, "no draw in the step loop:\n{code}");
    assert!(body[0].contains("loglik_acc = (loglik_acc +"), "{code}");
    assert!(body[1].contains("logw_red_acc = (logw_red_acc +"), "{code}");
    assert!(!body.iter().any(|l| l.contains("loglik +=")), "{code}");
    assert!(code[..step].contains("loglik_acc = loglik;"), "{code}");
}

/// An array whose domain is its bounding box (within the context) carries
/// no domain predicate: the box check of a data-dependent access checks
/// it. A triangle, or a domain the context does not fill, keeps it, and a
/// data-dependent read outside the triangle but inside the box still fails.
/// The inputs of `c` at `params`: `ints` for the int input `int_name`,
/// `floats` for every other input.
fn int_and_float_inputs(
    c: &compile::Compiled,
    params: &[i64],
    int_name: &str,
    ints: Vec<i64>,
    floats: &[f64],
) -> std::collections::HashMap<String, alphac::runtime::Array> {
    let mut m = std::collections::HashMap::new();
    for var in &c.system().vars {
        if var.kind != alphac::ir::VarKind::Input {
            continue;
        }
        let spec = alphac::interp::array_spec(var, params).expect("spec");
        let data = if var.name == int_name {
            alphac::runtime::ArrayData::Int(ints.clone())
        } else {
            alphac::runtime::ArrayData::Float(floats.to_vec())
        };
        m.insert(
            var.name.clone(),
            alphac::runtime::Array::from_data(&spec, data).expect("array"),
        );
    }
    m
}

#[test]
fn domains_implied_at_every_data_dependent_access_are_dropped() {
    // T's triangle `b <= a` is implied where T is read (the reduction's
    // `b <= a`), its rows `0 <= r < N` are its box: only the box is
    // checked. U is read over the whole square: its domain stays.
    let src = "affine dd [N, K] -> { : N > 0 and K > 0 }
    inputs
        e : int [N];
        X : float [N, K];
    outputs
        O, P : float [N, K];
    locals
        T, U : float {[r, a, b] : 0 <= r < N and 0 <= b <= a < K};
    let
        T[r, a, b] = X[r, a] * X[r, b];
        U[r, a, b] = X[r, a] - X[r, b];
        O[i, a] = reduce(+, [b], {: 0 <= b <= a} : T[e[i], a, b]);
        P[i, a] = reduce(+, [b], {: 0 <= b < K} : if b <= a then U[e[i], a, b] else 0.0);
.";
    // unoptimized (the cleanup would inline the tables), unmapped (a
    // mapped table keeps only the projection of its domain)
    let opts = Options {
        optimize: false,
        map_storage: false,
        ..Options::default()
    };
    let c = compile::compile(src, &opts).unwrap_or_else(|e| panic!("{e}"));
    let f = c.function();
    let domain_of = |name: &str| {
        f.arrays
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.domain.is_some())
    };
    // U's guard `b <= a` is an `if` around the read: implied there too
    assert_eq!(
        (domain_of("T"), domain_of("U")),
        (Some(false), Some(false)),
        "{}",
        f.to_c()
    );
    let floats = [1.5, 2.5, 4.0, -1.0, 0.5, 3.0];
    let ins = |v: Vec<i64>| int_and_float_inputs(&c, &[3, 2], "e", v, &floats);
    let want =
        alphac::interp::run(c.program(), "dd", &[3, 2], &ins(vec![2, 0, 1]), 0).expect("runs");
    let got = c.run(&[3, 2], &ins(vec![2, 0, 1]), 0).expect("runs");
    assert_eq!(want["O"].data(), got["O"].data());
    assert_eq!(want["P"].data(), got["P"].data());
    // a row outside the box is still an error naming the table and row
    // (U's, read first in the schedule)
    let err = c
        .run(&[3, 2], &ins(vec![0, 3, 1]), 0)
        .expect_err("row 3 of 3");
    assert!(err.to_string().contains("`U` at [3"), "{err}");
    // read over the whole square, outside the triangle where b > a: kept
    let src = src.replace("if b <= a then U[e[i], a, b] else 0.0", "U[e[i], a, b]");
    let c = compile::compile(&src, &opts).unwrap_or_else(|e| panic!("{e}"));
    let kept = c
        .function()
        .arrays
        .iter()
        .any(|a| a.name == "U" && a.domain.is_some());
    assert!(kept, "{}", c.function().to_c());
}

#[test]
fn only_domains_smaller_than_their_box_are_kept() {
    let src = "affine doms [N, M] -> { : N > 0 and M >= 0 }
    inputs
        idx : int [N];
        A : float [N];
    outputs
        B : float [N];
    locals
        Sq : float {[i, j] : 0 <= i < N and 0 <= j < N and N > 0};
        Tri : float {[i, j] : 0 <= j <= i < N};
        Cut : float {[i] : 0 <= i < N and i < M + 1};
    let
        Sq[i, j] = A[i] * A[j];
        Tri[i, j] = A[i] - A[j];
        Cut[i] = A[i];
        B[i] = Sq[idx[i], i] + Tri[i, idx[i]] + Cut[idx[i]];
.";
    // unoptimized: the cleanup would inline the locals
    let opts = Options {
        optimize: false,
        ..Options::default()
    };
    let c = compile::compile(src, &opts).unwrap_or_else(|e| panic!("{e}"));
    let f = c.function();
    let has_domain = |name: &str| {
        f.arrays
            .iter()
            .find(|a| a.name == name)
            .unwrap_or_else(|| panic!("no {name} in\n{}", f.to_c()))
            .domain
            .is_some()
    };
    assert!(!has_domain("Sq"), "{}", f.to_c());
    assert!(!has_domain("A"), "{}", f.to_c());
    assert!(has_domain("Tri"), "{}", f.to_c());
    // `i < M + 1` is not implied by the box `0 <= i < N`
    assert!(has_domain("Cut"), "{}", f.to_c());
    // N = 3, M = 2; idx = [0, 1, 2] reads inside every domain; idx = [0,
    // 2, 0] reads Tri[1, 2], inside the box, not the triangle
    let ins = |v: Vec<i64>| int_and_float_inputs(&c, &[3, 2], "idx", v, &[1.5, 2.5, 4.0]);
    assert!(c.run(&[3, 2], &ins(vec![0, 1, 2]), 0).is_ok());
    let err = c
        .run(&[3, 2], &ins(vec![0, 2, 0]), 0)
        .expect_err("Tri[1, 2] is outside the triangle");
    assert!(err.to_string().contains("Tri"), "{err}");
}
