use alphac::diag::SourceFile;

fn optimize(path: &str) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let file = SourceFile::new(path, text);
    let ast = alphac::syntax::parse(&file).unwrap();
    let p = alphac::ir::lower::lower(&ast, &file).unwrap();
    let n = alphac::sdr::normalize::normalize(&p).unwrap();
    let (o, d) = alphac::sdr::transform::simplify(&n, &alphac::sdr::LexicographicOrder).unwrap();
    format!("{:#?}\n{}", d, alphac::ir::print::program_to_alpha(&o))
}

#[test]
fn smoke() {
    for f in [
        "prefix_sum",
        "prefix_max",
        "segment_sum",
        "triangle_sums",
        "gmm_counts",
    ] {
        println!("===== {f}\n{}", optimize(&format!("examples/{f}.alpha")));
    }
}
