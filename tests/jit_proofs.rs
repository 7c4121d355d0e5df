//! Every example and inference program runs the fast JIT variant (no
//! bounds checks on affine accesses) at the sizes below: the interval
//! analysis, with its exact fallback from the loops', guards' and
//! selects' affine facts, proves every affine access in bounds. A refusal
//! is not an error (the checked variant runs), but it costs a second
//! compilation and slower code, so it is pinned here per program.

use alphac::compile::{self, Options};
use alphac::jit::JitFunction;

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
