//! Snapshots of `alphac optimize` and `alphac complexity` for the
//! reduction examples (reviewed by hand: each optimized program reuses the
//! previous result along the schedule's direction, and each complexity
//! drops as the SDR paper predicts).

use alphac::diag::SourceFile;
use alphac::schedule::Scheduler;

fn optimize_and_report(name: &str) -> (String, String) {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    let file = SourceFile::new(
        format!("{name}.alpha"),
        std::fs::read_to_string(&path).unwrap(),
    );
    let ast = alphac::syntax::parse(&file).unwrap();
    let p = alphac::ir::lower::lower(&ast, &file).unwrap();
    let o = alphac::sdr::optimize(&p, Scheduler::Pluto).unwrap();
    let text = alphac::ir::print::program_to_alpha(&o.program);
    let report = alphac::sdr::complexity::report(&p, &o).unwrap().to_string();
    (text, report)
}

macro_rules! snap {
    ($test:ident, $name:literal, $total:literal) => {
        #[test]
        fn $test() {
            let (text, report) = optimize_and_report($name);
            insta::assert_snapshot!(concat!($name, "_optimize"), text);
            insta::assert_snapshot!(concat!($name, "_complexity"), report);
            // The totals line (budget notes, if any, follow it).
            let total = report.lines().find(|l| l.starts_with("total:"));
            assert_eq!(total, Some($total));
        }
    };
}

snap!(prefix_sum, "prefix_sum", "total: O(N^2) -> O(N)");
snap!(
    prefix_sum_dependent,
    "prefix_sum_dependent",
    "total: O(N^2) -> O(N)"
);
snap!(prefix_max, "prefix_max", "total: O(N^2) -> O(N)");
snap!(segment_sum, "segment_sum", "total: O(N*W) -> O(N)");
snap!(triangle_sums, "triangle_sums", "total: O(N^3) -> O(N)");
snap!(gmm_counts, "gmm_counts", "total: O(N^2*K) -> O(N*K)");
snap!(matmul, "matmul", "total: O(P*Q*R) -> O(P*Q*R)");
snap!(cholesky, "cholesky", "total: O(N^3) -> O(N^3)");
snap!(jacobi_1d, "jacobi_1d", "total: O(T*N) -> O(T*N)");
snap!(nussinov, "nussinov", "total: O(N^3) -> O(N^3)");
// Issue 13's three programs: a sum of a constant (higher-order operator),
// a maximum of a constant (idempotence), 2-D windows (maximal
// simplification: split, then prefix sums in both directions).
snap!(constant_sum, "constant_sum", "total: O(N^2) -> O(N)");
snap!(constant_max, "constant_max", "total: O(N^3) -> O(N^2)");
snap!(window_sum_2d, "window_sum_2d", "total: O(N^4) -> O(N^2)");
