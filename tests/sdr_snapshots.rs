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
            assert_eq!(report.lines().last().unwrap(), $total);
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
