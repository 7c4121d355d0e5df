//! The interpreter as the oracle of the SDR pass: every example, run before
//! and after `normalize` + `simplify` (lexicographic result order), must
//! give the same outputs (floats up to reassociation).

mod common;

use alphac::diag::{render_all, SourceFile};
use alphac::interp;
use alphac::ir::{Program, VarKind};
use alphac::runtime::{Array, ArrayData};
use alphac::sdr::{normalize::normalize, transform::simplify, LexicographicOrder};
use common::{all_close, Tol};
use std::collections::HashMap;

fn lower_text(name: &str, text: &str) -> Program {
    let src = SourceFile::new(name, text);
    let ast = match alphac::syntax::parse(&src) {
        Ok(a) => a,
        Err(d) => panic!("{}", render_all(&d, &src)),
    };
    match alphac::ir::lower::lower(&ast, &src) {
        Ok(p) => p,
        Err(d) => panic!("{}", render_all(&d, &src)),
    }
}

fn example(name: &str) -> Program {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    lower_text(
        &path,
        &std::fs::read_to_string(&path).expect("example exists"),
    )
}

fn close(a: &Array, b: &Array) -> bool {
    match (a.data(), b.data()) {
        (ArrayData::Float(x), ArrayData::Float(y)) => {
            // 1e-9 relative, 1e-9 absolute below magnitude 1.
            all_close(x, y, Tol::rel_or_abs(1e-9))
        }
        (x, y) => x == y,
    }
}

/// Runs `p` before and after SDR on random inputs for `params`; returns
/// whether the pass changed the normalized program.
fn check(p: &Program, params: &[i64], seed: u64) -> bool {
    let sys = &p.systems[0];
    let mut inputs = HashMap::new();
    for v in sys.vars.iter().filter(|v| v.kind == VarKind::Input) {
        let spec = interp::array_spec(v, params).unwrap();
        inputs.insert(v.name.clone(), Array::random(&spec, seed).unwrap());
    }
    let before = interp::run(p, &sys.name, params, &inputs, seed).unwrap();
    let n = normalize(p).unwrap();
    let mid = interp::run(&n, &sys.name, params, &inputs, seed).unwrap();
    let (q, decisions) = simplify(&n, &LexicographicOrder).unwrap();
    let after = interp::run(&q, &sys.name, params, &inputs, seed).unwrap();
    for (name, a) in &before {
        assert!(close(a, &mid[name]), "{name} differs after normalize");
        assert!(
            close(a, &after[name]),
            "{name} differs after simplify: {decisions:?}"
        );
    }
    eprintln!("{decisions:?}");
    q != n
}

#[test]
fn prefix_sum_survives_sdr() {
    let p = example("prefix_sum");
    for n in [1, 2, 5, 17] {
        // The comparison is meaningful only if SDR rewrote the program.
        assert!(check(&p, &[n], 3), "SDR left the prefix sum unchanged");
    }
}

#[test]
fn matmul_survives_sdr() {
    check(&example("matmul"), &[3, 4, 5], 1);
}

#[test]
fn jacobi_survives_sdr() {
    check(&example("jacobi_1d"), &[4, 7], 2);
}

#[test]
fn integer_prefix_sums_and_max_survive_sdr() {
    let p = lower_text(
        "t.alpha",
        "affine t [N] -> { : N > 0 }
            inputs A : int [N]
            outputs
                S : int [N]
                M : int [N]
                W : int [N]
            let
                S[i] = reduce(+, [j], {: 0 <= j <= i} : A[j]);
                M[i] = reduce(max, [j], {: 0 <= j <= i} : A[j]);
                W[i] = reduce(+, [j], {: i - 2 <= j <= i and 0 <= j} : A[j] * 2);
        .",
    );
    for n in [1, 3, 9] {
        check(&p, &[n], 5);
    }
}

#[test]
fn suffix_sums_triangles_and_dependent_sums_survive_sdr() {
    let p = lower_text(
        "u.alpha",
        "affine u [N] -> { : N > 1 }
            inputs
                A : int [N]
                G : int [N, N]
            outputs
                T : int [N]
                X : int [N]
                R : int { [i, j] : 0 <= j <= i < N }
            let
                T[i] = reduce(+, [j], {: i <= j < N} : A[j]);
                X[i] = reduce(max, [j], {: i <= j < N} : A[j]);
                R[i, j] = reduce(+, [k], {: j <= k <= i} : G[i, k]);
        .",
    );
    for n in [2, 3, 8] {
        check(&p, &[n], 7);
    }
    check(&example("prefix_sum_dependent"), &[9], 4);
}
