//! Every example and inference program runs the fast JIT variant (no
//! bounds checks on affine accesses) at the sizes below: the interval
//! analysis, with its exact fallback from the loops', guards' and
//! selects' affine facts, proves every affine access in bounds. A refusal
//! is not an error (the checked variant runs), but it costs a second
//! compilation and slower code, so it is pinned here per program.

mod common;

use alphac::codegen::loop_ast::{Affine, BinOp, Expr, Stmt};
use alphac::compile::{self, Options};
use alphac::jit::{Buffer, ExecError, JitFunction};
use common::loops::*;

const PROGRAMS: &[(&str, &[i64])] = &[
    ("gmm_gs", &[200, 10]),
    ("gmm_mh", &[200, 10]),
    ("gmm_lw", &[200, 10]),
    ("lda_gs", &[400, 5, 50, 10]),
    ("lda_mh", &[400, 5, 50, 10]),
    ("lda_lw", &[400, 5, 50, 10]),
    ("dmm_gs", &[30, 20, 4, 10]),
    ("dmm_mh", &[30, 20, 4, 10]),
    ("dmm_lw", &[30, 20, 4, 10]),
    ("lbp_stereo", &[96, 8, 4]),
    ("coxph", &[60, 7]),
    ("prefix_sum", &[20]),
    ("triangle_sums", &[20]),
    ("matmul", &[12, 10, 8]),
    ("cholesky", &[12]),
    ("nussinov", &[12]),
];

#[test]
fn every_affine_access_of_the_examples_is_proven_in_bounds() {
    for &(name, params) in PROGRAMS {
        let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let options = Options {
            system: Some(name.to_string()),
            ..Options::default()
        };
        let c = compile::compile(&src, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        let sys = c.system();
        assert_eq!(sys.params.len(), params.len(), "{name}: {:?}", sys.params);
        let f = c.function();
        let mut p = params.to_vec();
        // The seed of a program with draws is the JIT's last parameter.
        p.resize(f.params.len(), 7);
        let jit = JitFunction::compile(f).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            jit.proves_affine_accesses(&p),
            Ok(true),
            "{name}: {}",
            f.to_c()
        );
    }
}

/// The affine index of a data-dependent access is proven in the box like
/// an affine access's (the fast variant checks only the data-dependent
/// index): `F[w[i]][i + s]` over `0 <= i < N` with `F` of `V × K` is
/// proven for `N <= K − s` and refused otherwise, and then the checked
/// variant reports the access instead of reading outside `F`.
#[test]
fn the_affine_index_of_a_data_dependent_access_is_proven_or_checked() {
    for s in [0, 1] {
        // x[i] = F[w[i]][i + s]
        let load = Expr::load(
            F,
            vec![
                Expr::load(W, vec![var(I)]),
                Expr::Aff(Affine::var(I).offset(s).expect("small")),
            ],
        );
        let body = vec![for_(
            I,
            (zero(), below(0, 1)),
            vec![Stmt::Assign {
                array: X,
                index: vec![var(I)],
                value: load,
            }],
        )];
        let f = func(body);
        let jit = JitFunction::compile(&f).expect("compiles");
        // N = K = 6, V = 4
        let params = [6, 4, 6];
        assert_eq!(jit.proves_affine_accesses(&params), Ok(s == 0), "shift {s}");
        let mut bufs = jit.zeroed_buffers(&params).expect("buffers");
        let r = jit.run(&params, &mut bufs);
        if s == 0 {
            assert_eq!(r, Ok(()));
        } else {
            // i = 5 reads F[0][6], outside the box: the error names it
            match r {
                Err(ExecError::OutOfBounds { ref point, .. }) => {
                    assert_eq!(point, &vec![0, 6], "{r:?}")
                }
                other => panic!("shift {s}: {other:?}"),
            }
        }
    }
}

/// An index `mod(a, m)` (an array stored modulo `m`, `codegen::storage`)
/// is proven in its box by its value range `0 .. m` and computed as the
/// floor modulus, negative `a` included (no guard: `m > 0`). With a box
/// of `m` cells the access is proven; with `m − 1` it is not, and the
/// checked run reports the cell outside as a broken contract (like an
/// affine index: the compiler's, not the data's).
#[test]
fn modular_indices_are_proven_by_their_range_and_computed_as_floor_mod() {
    for m in [2i64, 3, 4, 5] {
        for extent in [m, m - 1] {
            // w[i] = mod(i − 7, m); z[i] = h[mod(i − 7, m)] + 1
            let md = || Expr::bin(BinOp::Mod, aff(I, -7), Expr::Int(m));
            let body = vec![for_(
                I,
                (zero(), below(0, 1)),
                vec![
                    Stmt::Assign {
                        array: W,
                        index: vec![var(I)],
                        value: md(),
                    },
                    Stmt::Assign {
                        array: Z,
                        index: vec![var(I)],
                        value: Expr::bin(BinOp::Add, Expr::load(H, vec![md()]), Expr::Int(1)),
                    },
                ],
            )];
            let f = func(body);
            let jit = JitFunction::compile(&f).expect("compiles");
            // N = 12, V = 1, K + 1 = extent (the box of h)
            let params = [12, 1, extent - 1];
            assert_eq!(
                jit.proves_affine_accesses(&params),
                Ok(extent >= m),
                "m = {m}, extent {extent}"
            );
            let mut bufs = jit.zeroed_buffers(&params).expect("buffers");
            let r = jit.run(&params, &mut bufs);
            if extent >= m {
                assert_eq!(r, Ok(()), "m = {m}");
                let want: Vec<i64> = (0..12).map(|i: i64| (i - 7).rem_euclid(m)).collect();
                assert_eq!(bufs[W], Buffer::Int(want), "m = {m}");
                assert_eq!(bufs[Z], Buffer::Int(vec![1; 12]), "m = {m}");
            } else {
                match r {
                    Err(ExecError::ContractViolation { ref point, .. }) => {
                        assert_eq!(point, &vec![m - 1], "m = {m}")
                    }
                    other => panic!("m = {m}, extent {extent}: {other:?}"),
                }
            }
        }
    }
}
