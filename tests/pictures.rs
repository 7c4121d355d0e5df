//! `alphac graph`, `alphac draw` and `alphac plot`: snapshots of the DOT
//! and SVG they print for small examples, the SVGs parse as XML, and
//! their user errors (exit code 1, a clear message).

use std::process::Command;

fn alphac(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_alphac"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the alphac binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = alphac(args);
    assert_eq!(code, 0, "alphac {args:?}: {err}");
    out
}

fn tmp(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("alphac-pictures-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// The SVG parses as XML with an `svg` root; returns its `<text>` contents.
fn svg_texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.tag_name().name() == "text")
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect()
}

#[test]
fn graph_of_the_dependent_prefix_sum() {
    // As written: A and B in the outer loop i, the reduction body in j;
    // B[i] reads the body's column, A[i] reads B[i - 1], the body reads A[j].
    let dot = ok(&[
        "graph",
        "examples/prefix_sum_dependent.alpha",
        "--no-optimize",
    ]);
    assert!(
        dot.contains("s1 -> s0 [label=\"B[i - 1] -> A[i]\"]"),
        "{dot}"
    );
    assert!(
        dot.contains("s2 -> s1 [label=\"B_acc1[i, j] -> B[i]\"]"),
        "{dot}"
    );
    assert!(
        dot.contains("s0 -> s2 [label=\"A[j] -> B_acc1[i, j]\"]"),
        "{dot}"
    );
    assert!(dot.contains("{ rank=same; s0; s1; }  // outer schedule dimension: i"));
    insta::assert_snapshot!("graph_prefix_sum_dependent_as_written", dot);
    // Optimized: B alone, reading B[i - 1], marked with its reuse vector.
    let dot = ok(&["graph", "examples/prefix_sum_dependent.alpha"]);
    assert!(dot.contains("simplified: reuse vector (1, 0)"), "{dot}");
    assert!(
        dot.contains("s0 -> s0 [label=\"B[i - 1] -> B[i]\"]"),
        "{dot}"
    );
    insta::assert_snapshot!("graph_prefix_sum_dependent", dot);
}

#[test]
fn graph_writes_a_file_and_names_systems() {
    let out = tmp("g.dot", "");
    let (code, stdout, err) = alphac(&["graph", "examples/gmm_gs.alpha", "-o", &out]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.is_empty());
    let dot = std::fs::read_to_string(&out).unwrap();
    assert!(dot.starts_with("digraph \"gmm_gs\" {"), "{dot}");
    assert!(dot.contains("simplified: reuse vector (0, 1, 0)"), "{dot}");
    let (code, _, err) = alphac(&["graph", "examples/gmm_gs.alpha", "--system", "nope"]);
    assert_eq!(code, 1);
    assert!(err.contains("no system named nope"), "{err}");
}

#[test]
fn draw_the_simplified_prefix_sum() {
    let svg = ok(&[
        "draw",
        "examples/prefix_sum_dependent.alpha",
        "--var",
        "B",
        "--param",
        "N=4",
    ]);
    let texts = svg_texts(&svg);
    for t in [
        "B: body domain of its reduction [i, j] at N = 4",
        "reuse vector r = (1, 0) over [i, j]",
        "added face: j = i",
        "subtracted face: none",
        "j = 0",
        "i = N - 1",
    ] {
        assert!(texts.iter().any(|x| x == t), "{t} missing from {texts:?}");
    }
    // 10 points of the triangle 0 <= j <= i < 4.
    assert_eq!(svg.matches("r=\"4\"/>").count(), 10, "{svg}");
    insta::assert_snapshot!("draw_prefix_sum_dependent_b", svg);
}

#[test]
fn draw_a_slice_with_added_and_subtracted_faces() {
    let svg = ok(&[
        "draw",
        "examples/gmm_gs.alpha",
        "--var",
        "C_red2",
        "--param",
        "N=4",
        "--param",
        "K=2",
        "--slice",
        "k=1",
    ]);
    let texts = svg_texts(&svg);
    for t in [
        "C_red2: body domain of its reduction [k, i, j] at N = 4, K = 2, k = 1",
        "reuse vector r = (0, 1, 0) over [k, i, j]",
        "added face: i = 0",
        "subtracted face: j = i + 1",
    ] {
        assert!(texts.iter().any(|x| x == t), "{t} missing from {texts:?}");
    }
    // The points 0 <= i < j < 4: 6 of them.
    assert_eq!(svg.matches("r=\"4\"/>").count(), 6, "{svg}");
    insta::assert_snapshot!("draw_gmm_gs_c_red2_slice", svg);
}

#[test]
fn draw_a_plain_domain() {
    let svg = ok(&[
        "draw",
        "examples/gmm_gs.alpha",
        "--var",
        "Wt",
        "--param",
        "N=3",
        "--param",
        "K=2",
    ]);
    let texts = svg_texts(&svg);
    assert!(
        texts
            .iter()
            .any(|x| x == "Wt: domain [k, i] at N = 3, K = 2"),
        "{texts:?}"
    );
    assert_eq!(svg.matches("r=\"4\"/>").count(), 6, "{svg}");
    assert!(!texts.iter().any(|x| x.starts_with("reuse")), "{texts:?}");
}

#[test]
fn draw_errors_are_user_errors() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--var", "Q", "--param", "N=4", "--param", "K=2"],
            "error: no variable named Q in system gmm_gs (variables: x, z, znew, logp, C, S, Wt, n, s, q",
        ),
        (
            &["--var", "C_red2", "--param", "N=4", "--param", "K=2"],
            "error: C_red2: body domain of its reduction [k, i, j] has 3 dimensions: fix all but two with --slice (e.g. --slice k=0)",
        ),
        (
            &["--var", "C_red2", "--param", "N=4", "--param", "K=2", "--slice", "m=0"],
            "error: --slice m: m is not a dimension of C_red2: body domain of its reduction [k, i, j]",
        ),
        (&["--var", "C", "--param", "N=4"], "error: parameters: missing value of parameter K"),
        (
            &["--var", "C", "--param", "N=0", "--param", "K=2"],
            "error: ",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["draw", "examples/gmm_gs.alpha"];
        all.extend_from_slice(args);
        let (code, out, err) = alphac(&all);
        assert_eq!(code, 1, "{all:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(err.starts_with(expected), "{all:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("internal"),
            "{err}"
        );
    }
}

const TRACE: &str = "sweep,logp,acc\n0,-10.5,0.25\n1,-8.0,0.5\n2,-7.25,0.5\n3,-7.0,0.75\n";

#[test]
fn plot_a_trace() {
    let csv = tmp("trace.csv", TRACE);
    let svg = ok(&["plot", &csv, "--title", "a trace"]);
    let texts = svg_texts(&svg);
    for t in ["a trace", "sweep", "logp", "acc"] {
        assert!(texts.iter().any(|x| x == t), "{t} missing from {texts:?}");
    }
    // Per series, its line and its legend mark (2 px wide).
    let wide = svg
        .lines()
        .filter(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"2\""))
        .count();
    assert_eq!(wide, 4, "{svg}");
    insta::assert_snapshot!("plot_trace", svg);
    // -o writes the file and prints nothing.
    let out = tmp("trace.svg", "");
    let (code, stdout, err) = alphac(&["plot", &csv, "-o", &out]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.is_empty());
    svg_texts(&std::fs::read_to_string(&out).unwrap());
}

#[test]
fn plot_errors_are_user_errors() {
    let cases = [
        (
            "words.csv",
            "sweep,logp\n0,-1.5\n1,abc\n",
            ":3: `abc` in column logp is not a number",
        ),
        (
            "ragged.csv",
            "sweep,logp\n0,-1.5\n1\n",
            ":3: 1 fields where the header has 2",
        ),
        (
            "header.csv",
            "sweep\n0\n",
            ":1: expected a header `sweep,NAME,...` with at least one series, found `sweep`",
        ),
        ("empty.csv", "sweep,logp\n", ": no sweeps (only the header)"),
    ];
    for (name, text, expected) in cases {
        let csv = tmp(name, text);
        let (code, out, err) = alphac(&["plot", &csv]);
        assert_eq!(code, 1, "{name}: {err}");
        assert!(out.is_empty(), "{out}");
        assert_eq!(err, format!("error: {csv}{expected}\n"), "{name}");
    }
    let (code, _, err) = alphac(&["plot", "no/such/trace.csv"]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot read no/such/trace.csv"), "{err}");
}
