//! Every program in `tests/bad/` is rejected: parse, then lower, and the
//! rendered diagnostics (message, `file:line:col`, caret) are snapshot-tested.
//! The file name in the snapshot is relative (`tests/bad/NAME.alpha`), so the
//! snapshots do not depend on the machine.

use alphac::diag::{render_all, SourceFile};

fn diagnose(name: &str) -> String {
    let path = format!("tests/bad/{name}.alpha");
    let text = std::fs::read_to_string(&path).expect("bad program exists");
    let src = SourceFile::new(path, text);
    let diags = match alphac::syntax::parse(&src) {
        Err(ds) => ds,
        Ok(ast) => match alphac::ir::lower::lower(&ast, &src) {
            Err(ds) => ds,
            Ok(_) => panic!("{name}: accepted, but it is invalid"),
        },
    };
    assert!(!diags.is_empty());
    render_all(&diags, &src)
}

macro_rules! bad {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                insta::assert_snapshot!(diagnose(stringify!($name)));
            }
        )*
    };
}

bad!(
    parse_error,
    unsupported_argreduce,
    subsystem_cycle,
    subsystem_arity,
    subsystem_shape,
    subsystem_type,
    import_unknown,
    unknown_name,
    duplicate_name,
    type_error,
    arity,
    access_dimension,
    undefined_output,
    double_definition,
    partial_definition,
    case_overlap,
    case_gap,
    unbounded_reduction,
    unbounded_domain,
    out_of_domain_read,
    input_defined,
    bad_sweep,
    notation_parse,
    notation_lower,
);

/// Every file in `tests/bad/` has a test above.
#[test]
fn every_bad_program_is_listed() {
    let listed = [
        "parse_error",
        "bad_sweep",
        "unsupported_argreduce",
        "subsystem_cycle",
        "subsystem_arity",
        "subsystem_shape",
        "subsystem_type",
        "import_unknown",
        "unknown_name",
        "duplicate_name",
        "type_error",
        "arity",
        "access_dimension",
        "undefined_output",
        "double_definition",
        "partial_definition",
        "case_overlap",
        "case_gap",
        "unbounded_reduction",
        "unbounded_domain",
        "out_of_domain_read",
        "input_defined",
        "notation_parse",
        "notation_lower",
    ];
    for e in std::fs::read_dir("tests/bad").expect("tests/bad exists") {
        let p = e.expect("entry").path();
        let stem = p
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        assert!(listed.contains(&stem.as_str()), "{stem} has no test");
    }
}
