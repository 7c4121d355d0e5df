//! Complexity snapshots of the inference suite: for each of the 11 samplers,
//! `alphac complexity examples/NAME.alpha --system NAME` (each equation's
//! cost as written and after SDR, then the total per sweep). Reviewed by
//! hand against the paper's Table 2 (BENCHMARKS.md): the README's table is
//! made from these totals. The totals are also asserted literally, so that
//! a regression shows as a failing test and not only as a snapshot diff.

use alphac::diag::SourceFile;
use alphac::schedule::Scheduler;

fn report(name: &str) -> String {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    let file = SourceFile::new(
        format!("{name}.alpha"),
        std::fs::read_to_string(&path).unwrap(),
    );
    let ast = alphac::syntax::parse(&file).unwrap();
    let p = alphac::ir::lower::lower(&ast, &file).unwrap();
    let index = p
        .systems
        .iter()
        .position(|s| s.name == name)
        .expect("sampler named like the file");
    let o = alphac::sdr::optimize(&p, Scheduler::Pluto).unwrap();
    alphac::sdr::complexity::report_systems(&p, &o, Some(index))
        .unwrap()
        .to_string()
}

macro_rules! complexity {
    ($($name:ident => $total:literal),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let r = report(stringify!($name));
                insta::assert_snapshot!(concat!(stringify!($name), "_complexity"), r);
                // The totals line (budget notes, if any, follow it).
                let total = r.lines().find(|l| l.starts_with("total:"));
                assert_eq!(total, Some($total));
            }
        )*
    };
}

complexity!(
    gmm_gs => "total: O(N^2*K) -> O(N*K)",
    gmm_mh => "total: O(N^2*K) -> O(N*K)",
    gmm_lw => "total: O(N^2*K) -> O(N*K)",
    lda_gs => "total: O(W^2*K*V + W^2*K*D) -> O(W*K*V + W*K*D)",
    lda_mh => "total: O(W^2*K*V + W^2*K*D) -> O(W*K*V + W*K*D)",
    lda_lw => "total: O(W^2*K*V) -> O(W*K*V)",
    dmm_gs => "total: O(D^2*A*K) -> O(D*A*K)",
    dmm_mh => "total: O(D^2*A*K) -> O(D*A*K)",
    dmm_lw => "total: O(D^2*A*K) -> O(D*A*K)",
    lbp_stereo => "total: O(N*K*D^2) -> O(N*K*D)",
    coxph => "total: O(N^2*K^2 + K^3) -> O(N*K^2 + K^3)",
);

/// The cost of the generated loops of a sampler (`alphac complexity
/// --system NAME`, line `generated code (upper bound)`): after SDR, the
/// cleanup, storage mapping and the sparse/scatter loop rewrites.
fn generated(name: &str) -> String {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    let p = alphac::compile::parse_program(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let options = alphac::compile::Options {
        system: Some(name.to_string()),
        ..alphac::compile::Options::default()
    };
    alphac::compile::generated_cost(&p, &options)
        .unwrap()
        .to_string()
}

/// The generated code's cost, literally: an upper bound by
/// `poly::complexity`. Skewed time-space sets (CoxPH's Cholesky nest, whose
/// loops run from `N + 9` to `N + 4K + 6`) are bounded by eliminating the
/// outer loop variables from each loop's width, and triangles such as
/// LBP's `for t4 <= min(K - 1, t3)` count as `N*K` (beside the `N*K*D`
/// nests) rather than `N^2 + K^2`. GMM-GS
/// is at the manual complexity O(NK): its counts are histograms (scatter
/// loops) and running counts updated in place. GMM-MH, GMM-LW and LDA-LW
/// draw their uniform proposals and prior labels in O(1)
/// (`CategoricalDraw::is_uniform`); LDA-LW's `K*V` is its count table.
/// DMM-MH and DMM-LW compute their per-cluster conditionals only at the
/// labels they read (the cleanup's "selected point" and "specialize"),
/// their counts in place and their initial histograms as scatters:
/// O(D*A), plus `A*K` for the count tables (and MH's `logp`).
#[test]
fn generated_code_costs() {
    let expected = [
        ("gmm_gs", "O(N*K)"),
        ("gmm_mh", "O(N + K)"),
        ("gmm_lw", "O(N + K)"),
        ("lda_gs", "O(W*K + K*V + K*D)"),
        ("lda_mh", "O(K*V + K*D + W)"),
        ("lda_lw", "O(K*V + W)"),
        ("dmm_gs", "O(D*A*K)"),
        ("dmm_mh", "O(D*A + A*K)"),
        ("dmm_lw", "O(D*A + A*K)"),
        ("lbp_stereo", "O(N*K*D)"),
        ("coxph", "O(N*K^2 + K^3)"),
    ];
    for (name, cost) in expected {
        assert_eq!(generated(name), cost, "{name}");
    }
}
