//! End-to-end tests of the `alphac` binary: exit codes, messages, files.

use std::path::PathBuf;
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

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("alphac-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn check_accepts_every_example() {
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "alpha") {
            let p = path.to_string_lossy().into_owned();
            let (code, out, err) = alphac(&["check", &p]);
            assert_eq!(code, 0, "{p}: {err}");
            assert!(out.contains("ok"), "{out}");
        }
    }
}

#[test]
fn check_reports_location_and_exits_1() {
    let (code, _, err) = alphac(&["check", "tests/bad/unknown_name.alpha"]);
    assert_eq!(code, 1);
    assert!(err.contains("tests/bad/unknown_name.alpha:"), "{err}");
    assert!(err.contains('^'), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn missing_file_is_a_user_error() {
    let (code, _, err) = alphac(&["check", "no/such/file.alpha"]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot read no/such/file.alpha"), "{err}");
}

#[test]
fn show_and_optimize_print_programs_that_check_again() {
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "alpha") {
            continue;
        }
        let p = path.to_string_lossy().into_owned();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        for cmd in ["show", "optimize"] {
            let (code, out, err) = alphac(&[cmd, &p]);
            assert_eq!(code, 0, "{cmd} {p}: {err}");
            let again = tmp(&format!("{stem}_{cmd}.alpha"));
            std::fs::write(&again, &out).unwrap();
            let (code, out2, err) = alphac(&["show", again.to_str().unwrap()]);
            assert_eq!(code, 0, "{cmd} {p} does not check again: {err}");
            if cmd == "show" {
                assert_eq!(out, out2, "show is a fixpoint on {p}");
            }
        }
    }
}

#[test]
fn complexity_and_schedule_commands() {
    let (code, out, err) = alphac(&["complexity", "examples/prefix_sum.alpha"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "B: O(N^2) -> O(N)\ntotal: O(N^2) -> O(N)\n");
    for s in ["pluto", "feautrier"] {
        let (code, out, err) = alphac(&["schedule", "examples/matmul.alpha", "--scheduler", s]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("-> [") && out.contains("dimensions:"), "{out}");
    }
    let (code, out, _) = alphac(&["calc", "count([N] -> { [i, j] : 0 <= j <= i < N }, N=5)"]);
    assert_eq!((code, out.as_str()), (0, "15\n"));
    let (code, _, err) = alphac(&["calc", "intersect({ [i] : i > 0 }"]);
    assert_eq!(code, 1);
    assert!(err.contains("column"), "{err}");
}

#[test]
fn a_cycle_is_a_user_error_naming_the_equations() {
    let src = "affine cyc [N] -> { : N > 0 }
        outputs X, Y : int [N];
        let X[i] = Y[i] + 1; Y[i] = X[i] * 2;
    .";
    let path = tmp("cycle.alpha");
    std::fs::write(&path, src).unwrap();
    let (code, _, err) = alphac(&["optimize", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains('X') && err.contains('Y'), "{err}");
    let (code, _, err) = alphac(&[
        "run",
        path.to_str().unwrap(),
        "--param",
        "N=2",
        "--no-optimize",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cycle"), "{err}");
}

#[test]
fn run_with_generated_inputs_prints_outputs() {
    let (code, out, err) = alphac(&[
        "run",
        "examples/prefix_sum.alpha",
        "--param",
        "N=5",
        "--generate-inputs",
        "--seed",
        "3",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("B (float, shape [5]): ["), "{out}");
}

#[test]
fn run_reads_and_writes_files() {
    // A = [1, 2, 3, 4] as CSV; B is its prefix sum.
    let a = tmp("a.csv");
    std::fs::write(&a, "1\n2\n3\n4\n").unwrap();
    let b = tmp("b.csv");
    let (code, out, err) = alphac(&[
        "run",
        "examples/prefix_sum.alpha",
        "--param",
        "N=4",
        "--input",
        &format!("A={}", a.display()),
        "--output",
        &format!("B={}", b.display()),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("written to"), "{out}");
    let text = std::fs::read_to_string(&b).unwrap();
    let vals: Vec<f64> = text.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(vals, vec![1.0, 3.0, 6.0, 10.0]);
}

#[test]
fn run_errors_are_user_errors() {
    // outside the context
    let (code, _, err) = alphac(&[
        "run",
        "examples/prefix_sum.alpha",
        "--param",
        "N=0",
        "--generate-inputs",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("outside the context"), "{err}");
    // missing input
    let (code, _, err) = alphac(&["run", "examples/prefix_sum.alpha", "--param", "N=3"]);
    assert_eq!(code, 1);
    assert!(err.contains("missing input A"), "{err}");
    // wrong shape
    let a = tmp("short.csv");
    std::fs::write(&a, "1\n2\n").unwrap();
    let (code, _, err) = alphac(&[
        "run",
        "examples/prefix_sum.alpha",
        "--param",
        "N=3",
        "--input",
        &format!("A={}", a.display()),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains('A') && err.contains("[3]") && err.contains("[2]"),
        "{err}"
    );
    // a malformed parameter
    let (code, _, err) = alphac(&["run", "examples/prefix_sum.alpha", "--param", "N=x"]);
    assert_eq!(code, 1);
    assert!(err.contains("not an integer"), "{err}");
}

#[test]
fn help_has_examples() {
    let (code, out, _) = alphac(&["--help"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("Examples:") && out.contains("alphac run"),
        "{out}"
    );
}

#[test]
fn run_uses_the_jit_and_agrees_with_the_interpreter() {
    let args = [
        "run",
        "examples/prefix_sum_dependent.alpha",
        "--param",
        "N=30",
        "--generate-inputs",
        "--seed",
        "5",
    ];
    let (code, jit, err) = alphac(&args);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "no fallback note expected: {err}");
    let mut with_interp = args.to_vec();
    with_interp.push("--interp");
    let (code, interp, err) = alphac(&with_interp);
    assert_eq!(code, 0, "{err}");
    assert_eq!(jit, interp);
    // categorical draws run natively too, with the interpreter's draws
    let gmm = [
        "run",
        "examples/gmm_counts.alpha",
        "--param",
        "N=200",
        "--param",
        "K=3",
        "--generate-inputs",
        "--seed",
        "9",
    ];
    let (code, jit, err) = alphac(&gmm);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "no fallback note expected: {err}");
    assert!(jit.starts_with("znew"), "{jit}");
    let mut with_interp = gmm.to_vec();
    with_interp.push("--interp");
    let (code, interp, err) = alphac(&with_interp);
    assert_eq!(code, 0, "{err}");
    assert_eq!(jit, interp);
}

#[test]
fn emit_prints_loops() {
    let (code, out, err) = alphac(&["emit", "examples/matmul.alpha"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("for (") && out.contains("void matmul("),
        "{out}"
    );
}

#[test]
fn optimize_explain_prints_each_decision_with_its_complexity() {
    let (code, out, err) = alphac(&["optimize", "--explain", "examples/constant_sum.alpha"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Y: higher-order operator applied") && out.contains("count = 2*i + 2"),
        "{out}"
    );
    assert!(out.contains("total: O(N^2) -> O(N)"), "{out}");
    // A dependent reduction says where its direction came from.
    let (code, out, err) = alphac(&[
        "optimize",
        "--explain",
        "examples/prefix_sum_dependent.alpha",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("simplification applied") && out.contains("direction from the schedule"),
        "{out}"
    );
    assert!(out.contains("reuse vector (1, 0)"), "{out}");
}

#[test]
fn timings_list_the_phases_on_stderr() {
    let (code, out, err) = alphac(&[
        "emit",
        "--timings",
        "examples/gmm_gs.alpha",
        "--system",
        "gmm_gs",
    ]);
    assert_eq!(code, 0, "{err}");
    // the emitted code is unchanged on stdout, the phases go to stderr
    assert!(out.contains("void gmm_gs("), "{out}");
    assert!(!out.contains(" ms"), "{out}");
    let line = |name: &str| {
        err.lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no `{name}` line in\n{err}"))
            .to_string()
    };
    // the optimizer's two schedules, nested under it (deeper indentation)
    let indent = |l: &str| l.len() - l.trim_start().len();
    let opt = line("optimize (SDR)");
    let dirs = line("schedule (directions)");
    assert!(indent(&dirs) > indent(&opt), "{err}");
    for name in [
        "total",
        "parse and check",
        "schedule (final)",
        "scan",
        "band search",
    ] {
        let l = line(name);
        let words: Vec<&str> = l.split_whitespace().collect();
        let ms: f64 = words
            .iter()
            .position(|w| *w == "ms")
            .and_then(|k| words.get(k.checked_sub(1)?))
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("no time in `{l}`"));
        assert!(ms >= 0.0, "{l}");
    }
    // without the flag, nothing on stderr
    let (_, _, err) = alphac(&["emit", "examples/gmm_gs.alpha", "--system", "gmm_gs"]);
    assert!(err.is_empty(), "{err}");
}
