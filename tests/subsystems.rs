//! Subsystem calls (`over D with [k] : (Y) = sys[M](X);` and AlphaZ's
//! `use D sys[M](X) returns (Y);`), imports across files, `external`
//! declarations of built-ins and the unused-local warning.
//!
//! Calls are checked by lowering, then run by the reference interpreter and
//! by the native code (optimized and not) and compared with a direct
//! computation in Rust; errors at a call are checked by their messages.

mod common;

use alphac::compile::{self, Options};
use alphac::diag::SourceFile;
use alphac::interp;
use alphac::ir::print::{program_to_alpha, without_spans};
use alphac::ir::{Program, VarKind};
use alphac::runtime::{Array, ArrayData};
use common::{all_close, Tol};
use std::collections::HashMap;

const TOL: Tol = Tol::rel_or_abs(1e-12);

/// Deterministic floats in `[-1, 1)`.
fn data(n: usize, seed: u64) -> Vec<f64> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn lower_named(name: &str, text: &str) -> Result<Program, Vec<String>> {
    let src = SourceFile::new(name, text);
    let ast = alphac::syntax::parse(&src)
        .map_err(|ds| ds.iter().map(|d| d.render(&src)).collect::<Vec<_>>())?;
    alphac::ir::lower::lower(&ast, &src).map_err(|ds| ds.iter().map(|d| d.render(&src)).collect())
}

fn lower_ok(text: &str) -> Program {
    lower_named("t.alpha", text).unwrap_or_else(|e| panic!("{}", e.join("\n")))
}

/// The rendered errors of a rejected program, joined.
fn errors(text: &str) -> String {
    match lower_named("t.alpha", text) {
        Ok(p) => panic!("accepted:\n{}", program_to_alpha(&p)),
        Err(es) => es.join("\n"),
    }
}

/// The float inputs of `system` filled from `fill(name, len)`.
fn inputs(
    p: &Program,
    system: &str,
    params: &[i64],
    fill: &dyn Fn(&str, usize) -> Vec<f64>,
) -> HashMap<String, Array> {
    let sys = p.systems.iter().find(|s| s.name == system).expect("system");
    let mut out = HashMap::new();
    for v in sys.vars.iter().filter(|v| v.kind == VarKind::Input) {
        let spec = interp::array_spec(v, params).expect("spec");
        let n = spec.len().expect("len");
        let a = Array::from_data(&spec, ArrayData::Float(fill(&v.name, n))).expect("array");
        out.insert(v.name.clone(), a);
    }
    out
}

fn floats(a: &Array) -> Vec<f64> {
    a.data().as_float().expect("float output").to_vec()
}

/// Runs `system` of `text` with the interpreter and with the native code
/// (optimized and not; compiled from the printed program, which must
/// round-trip), and checks every run's output `out` against `want`.
fn check_runs(
    text: &str,
    system: &str,
    params: &[i64],
    fill: &dyn Fn(&str, usize) -> Vec<f64>,
    out: &str,
    want: &[f64],
) {
    let p = lower_ok(text);
    let ins = inputs(&p, system, params, fill);
    let got = interp::run(&p, system, params, &ins, 1).expect("interp runs");
    assert!(
        all_close(&floats(&got[out]), want, TOL),
        "interp: {:?} vs {want:?}",
        floats(&got[out])
    );
    // `show` round-trips: the printed program lowers to the same IR.
    let printed = program_to_alpha(&p);
    let p2 = lower_ok(&printed);
    let (a, b) = (
        format!("{:?}", without_spans(&p)),
        format!("{:?}", without_spans(&p2)),
    );
    if a != b {
        let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        let lo = at.saturating_sub(300);
        panic!(
            "round trip differs:\n{}\n---\n{}\n{printed}",
            &a[lo..(at + 200).min(a.len())],
            &b[lo..(at + 200).min(b.len())]
        );
    }
    for optimize in [false, true] {
        let opts = Options {
            optimize,
            system: Some(system.to_string()),
            checked: true,
            ..Options::default()
        };
        let c = compile::compile(text, &opts).unwrap_or_else(|e| panic!("{e}"));
        let got = c.run(params, &ins, 1).expect("jit runs");
        assert!(
            all_close(&floats(&got[out]), want, TOL),
            "jit (optimize={optimize}): {:?} vs {want:?}",
            floats(&got[out])
        );
    }
}

const DOT: &str = "
affine dot [N] -> { : N > 0 }
    inputs  x, y : float [N];
    outputs r : float {};
    let r = reduce(+, [k], {: 0 <= k < N} : x[k] * y[k]);
.
";

#[test]
fn over_with_extension_domain_computes_a_matrix_vector_product() {
    let text = format!(
        "{DOT}
affine mv [R, S] -> {{ : R > 0 and S > 0 }}
    inputs  A : float [R, S];
            v : float [S];
    outputs y : float [R];
    let
        over {{[i] : 0 <= i < R}} with [k] : (y[i]) = dot[S](A[i, k], v[k]);
."
    );
    let (r, s) = (4usize, 5usize);
    let a = data(r * s, 1);
    let v = data(s, 2);
    let want: Vec<f64> = (0..r)
        .map(|i| (0..s).map(|k| a[i * s + k] * v[k]).sum())
        .collect();
    let fill = |name: &str, _n: usize| if name == "A" { a.clone() } else { v.clone() };
    check_runs(&text, "mv", &[r as i64, s as i64], &fill, "y", &want);
}

#[test]
fn alphaz_use_returns_form_with_a_dependence_argument() {
    let text = format!(
        "{DOT}
affine mv [R, S] -> {{ : R > 0 and S > 0 }}
    inputs  mat : float {{[i, j] : 0 <= i < R and 0 <= j < S}};
            vect : float {{[j] : 0 <= j < S}};
    outputs res : float {{[i] : 0 <= i < R}};
    let
        use {{k | 0 <= k < R}} dot[S] (mat, (k, j -> j) @ vect) returns (res);
."
    );
    let (r, s) = (3usize, 6usize);
    let a = data(r * s, 3);
    let v = data(s, 4);
    let want: Vec<f64> = (0..r)
        .map(|i| (0..s).map(|k| a[i * s + k] * v[k]).sum())
        .collect();
    let fill = |name: &str, _n: usize| if name == "mat" { a.clone() } else { v.clone() };
    check_runs(&text, "mv", &[r as i64, s as i64], &fill, "res", &want);
}

#[test]
fn parameters_instantiated_from_the_extension_index() {
    // total[M] sums its first M inputs; instance i gets M = i + 1: a
    // prefix sum, each instance of a different size.
    let text = "
affine total [M] -> { : M > 0 }
    inputs  x : float [M];
    outputs s : float {};
    let s = reduce(+, [k], {: 0 <= k < M} : x[k]);
.
affine prefix [N] -> { : N > 0 }
    inputs  A : float [N];
    outputs P : float [N];
    let
        over {[i] : 0 <= i < N} with [k] : (P[i]) = total[i + 1](A[k]);
.";
    let n = 7usize;
    let a = data(n, 5);
    let want: Vec<f64> = (0..n).map(|i| a[..=i].iter().sum()).collect();
    let fill = |_: &str, _n: usize| a.clone();
    check_runs(text, "prefix", &[n as i64], &fill, "P", &want);
}

#[test]
fn single_call_without_extension_and_output_permutation() {
    // A transpose through a call: the output is written `T[j, i]`.
    let text = "
affine copy [N, M] -> { : N > 0 and M > 0 }
    inputs  X : float [N, M];
    outputs Y : float [N, M];
    let Y[i, j] = 2.0 * X[i, j];
.
affine tr [N] -> { : N > 0 }
    inputs  A : float [N, N + 1];
    outputs T : float [N + 1, N];
    let
        over {: } with [i, j] : (T[j, i]) = copy[N, N + 1](A[i, j]);
.";
    let n = 3usize;
    let a = data(n * (n + 1), 6);
    let mut want = vec![0.0; n * (n + 1)];
    for i in 0..n {
        for j in 0..=n {
            want[j * n + i] = 2.0 * a[i * (n + 1) + j];
        }
    }
    let fill = |_: &str, _n: usize| a.clone();
    check_runs(text, "tr", &[n as i64], &fill, "T", &want);
}

#[test]
fn nested_calls_and_stdlib_by_qualified_name() {
    let text = "
import std.linalg
affine twice_dot [N] -> { : N > 0 }
    inputs  x, y : float [N];
    outputs r : float {};
    locals  d : float {};
    let
        (d) = linalg.dot[N](x, y);
        r = 2.0 * d;
.
affine sum_of [R, N] -> { : R > 0 and N > 0 }
    inputs  X : float [R, N];
    outputs t : float [R];
    let
        over {[r] : 0 <= r < R} with [k] : (t[r]) = twice_dot[N](X[r, k], X[r, k]);
.";
    let (r, n) = (3usize, 4usize);
    let x = data(r * n, 7);
    let want: Vec<f64> = (0..r)
        .map(|i| 2.0 * (0..n).map(|k| x[i * n + k] * x[i * n + k]).sum::<f64>())
        .collect();
    let fill = |_: &str, _n: usize| x.clone();
    check_runs(text, "sum_of", &[r as i64, n as i64], &fill, "t", &want);
}

/// The last line of `alphac complexity` for `system`.
fn complexity_total(text: &str, system: &str) -> String {
    let p = lower_ok(text);
    let index = p.systems.iter().position(|s| s.name == system);
    let o = alphac::sdr::optimize(&p, alphac::schedule::Scheduler::Pluto).expect("optimizes");
    let r = alphac::sdr::complexity::report_systems(&p, &o, index)
        .expect("report")
        .to_string();
    r.lines().last().unwrap_or_default().to_string()
}

#[test]
fn a_reduction_inside_a_subsystem_is_simplified_in_its_caller() {
    let text = "
import std.scan.*
affine rows [R, N] -> { : R > 0 and N > 0 }
    inputs  A : float [R, N];
    outputs S : float [R, N];
    let
        over {[r] : 0 <= r < R} with [i] : (S[r, i]) = prefix_sum[N](A[r, i]);
.";
    assert_eq!(complexity_total(text, "rows"), "total: O(R*N^2) -> O(R*N)");
    let (r, n) = (3usize, 6usize);
    let a = data(r * n, 8);
    let mut want = vec![0.0; r * n];
    for i in 0..r {
        let mut acc = 0.0;
        for k in 0..n {
            acc += a[i * n + k];
            want[i * n + k] = acc;
        }
    }
    let fill = |_: &str, _n: usize| a.clone();
    check_runs(text, "rows", &[r as i64, n as i64], &fill, "S", &want);
}

#[test]
fn import_across_files_in_a_directory() {
    let dir = std::env::temp_dir().join(format!("alphac_subsystems_{}", std::process::id()));
    let lib = dir.join("mylib");
    std::fs::create_dir_all(&lib).expect("temp dir");
    std::fs::write(
        lib.join("util.alpha"),
        "package mylib.util {
affine scale [N] -> { : N > 0 }
    inputs  x : float [N];  c : float {};
    outputs y : float [N];
    let y[i] = c * x[i];
.
}",
    )
    .expect("write lib");
    let main = dir.join("main.alpha");
    let text = "import mylib.util.*
import mylib.util
affine m [N] -> { : N > 0 }
    inputs  x : float [N];
    outputs y, z : float [N];
    locals  three : float {};
    let
        three = 3.0;
        (y) = scale[N](x, three);
        (z) = mylib.util.scale[N](x, 0.5[]);
.";
    std::fs::write(&main, text).expect("write main");
    let p = lower_named(&main.display().to_string(), text)
        .unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let n = 5usize;
    let x = data(n, 9);
    let ins = inputs(&p, "m", &[n as i64], &|_, _| x.clone());
    let got = interp::run(&p, "m", &[n as i64], &ins, 0).expect("runs");
    let y: Vec<f64> = x.iter().map(|v| 3.0 * v).collect();
    let z: Vec<f64> = x.iter().map(|v| 0.5 * v).collect();
    assert!(all_close(&floats(&got["y"]), &y, TOL));
    assert!(all_close(&floats(&got["z"]), &z, TOL));
    // The printed program stands alone (the call is inlined) and compiles.
    let printed = program_to_alpha(&p);
    let c = compile::compile(
        &printed,
        &Options {
            system: Some("m".into()),
            ..Options::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}\n{printed}"));
    let got = c.run(&[n as i64], &ins, 0).expect("jit runs");
    assert!(all_close(&floats(&got["z"]), &z, TOL));

    // An unknown package, and an import cycle between two files.
    std::fs::write(dir.join("a.alpha"), "import b.*\npackage a { }").expect("write");
    std::fs::write(dir.join("b.alpha"), "import a.*\npackage b { }").expect("write");
    let cyc = "import a.*\naffine s [N] -> { : N > 0 } inputs x : [N] outputs y : [N] let y = x; .";
    std::fs::write(dir.join("s.alpha"), cyc).expect("write");
    let e = lower_named(&dir.join("s.alpha").display().to_string(), cyc)
        .unwrap_err()
        .join("\n");
    assert!(
        e.contains("import cycle:") && e.contains("a.alpha -> ") && e.contains("b.alpha"),
        "{e}"
    );
    let unknown = "import nowhere.pkg.*\naffine s [N] -> { : N > 0 } inputs x : [N] outputs y : [N] let y = x; .";
    let e = lower_named(&main.display().to_string(), unknown)
        .unwrap_err()
        .join("\n");
    assert!(e.contains("cannot find the package `nowhere.pkg`"), "{e}");
    assert!(e.contains("nowhere/pkg.alpha"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cyclic_calls_are_rejected_with_the_cycle() {
    let e = errors(
        "
affine a [N] -> { : N > 0 } inputs x : [N] outputs y : [N] let (y) = b[N](x); .
affine b [N] -> { : N > 0 } inputs x : [N] outputs y : [N] let (y) = a[N](x); .",
    );
    assert!(
        e.contains("cyclic subsystem calls: a -> b -> a")
            || e.contains("cyclic subsystem calls: b -> a -> b"),
        "{e}"
    );
    let e =
        errors("affine a [N] -> { : N > 0 } inputs x : [N] outputs y : [N] let (y) = a[N](x); .");
    assert!(e.contains("cyclic subsystem calls: a -> a"), "{e}");
}

#[test]
fn errors_at_a_call() {
    let call = |body: &str, decls: &str| {
        errors(&format!(
            "{DOT}
affine c [N] -> {{ : N > 1 }}
    inputs  u, w : float [N];  b : bool [N];
    outputs r : float {{}};  q : float [N];
    {decls}
    let {body}
."
        ))
    };
    // Arity: inputs, outputs, parameters.
    let e = call("(r) = dot[N](u, w, u);", "");
    assert!(e.contains("`dot` takes 2 input(s), 3 given"), "{e}");
    let e = call("(r, q) = dot[N](u, w); q[i] = 0.0;", "");
    assert!(e.contains("`dot` takes 1 output(s), 2 given"), "{e}");
    let e = call("(r) = dot[](u, w);", "");
    assert!(e.contains("`dot` takes 1 parameter(s), 0 given"), "{e}");
    // Types.
    let e = call("(r) = dot[N](u, b);", "");
    assert!(
        e.contains("type error: input `y` of `dot` is float but this argument is bool"),
        "{e}"
    );
    // Shapes: the output's dimensions, and its domain.
    let e = call("(q) = dot[N](u, w); r = 0.0;", "");
    assert!(
        e.contains("`q` has 1 dimension(s) but output `r` of `dot` gives 0"),
        "{e}"
    );
    let e = call(
        "over {[i] : 0 <= i < N - 1} : (q) = dot[N](u, w); r = 0.0;",
        "",
    );
    assert!(
        e.contains("`q` is declared on") && e.contains("but the call defines it on"),
        "{e}"
    );
    // An input that does not cover the instance: read outside `u`.
    let e = call("(r) = dot[N + 1](u, w);", "");
    assert!(e.contains("u"), "{e}");
    // The callee's context.
    let e = call("(r) = dot[N - 2](u, w);", "");
    assert!(e.contains("do not satisfy its context"), "{e}");
    // Unknown system, and defining an output twice.
    let e = call("(r) = nosuch[N](u, w);", "");
    assert!(e.contains("unknown system `nosuch`"), "{e}");
    let e = call("(r) = dot[N](u, w); r = 1.0;", "");
    assert!(e.contains("`r` is defined twice"), "{e}");
}

#[test]
fn external_declarations_of_builtins() {
    let p = lower_ok(
        "external sqrt(1) external float exp(1) external pow(2) external max(2)
affine s [N] -> { : N > 0 } inputs x : [N] outputs y : [N] let y[i] = sqrt(exp(x[i])) + pow(x[i], 2.0); .",
    );
    // The built-ins are used: nothing is declared external.
    assert!(p.externals.is_empty());
    let x = data(4, 10).iter().map(|v| v.abs()).collect::<Vec<_>>();
    let ins = inputs(&p, "s", &[4], &|_, _| x.clone());
    let got = interp::run(&p, "s", &[4], &ins, 0).expect("runs");
    let want: Vec<f64> = x.iter().map(|v| v.exp().sqrt() + v.powf(2.0)).collect();
    assert!(all_close(&floats(&got["y"]), &want, TOL));
    let e = errors(
        "external sqrt(2) affine s [N] -> { : N > 0 } inputs x : [N] outputs y : [N] let y = x; .",
    );
    assert!(
        e.contains("`sqrt` is a built-in function of 1 argument(s), declared here with 2"),
        "{e}"
    );
    let e = errors("external int exp(1) affine s [N] -> { : N > 0 } inputs x : [N] outputs y : [N] let y = x; .");
    assert!(e.contains("returning float, declared here as int"), "{e}");
}

#[test]
fn a_local_neither_defined_nor_used_is_a_warning() {
    let text = "affine s [N] -> { : N > 0 } inputs x : [N] outputs y : [N] locals spare : [N]; t : [N]\n let t = x; y = t; .";
    let src = SourceFile::new("t.alpha", text);
    let ast = alphac::syntax::parse(&src).expect("parses");
    let checked = alphac::ir::lower::lower_with_warnings(&ast, &src).expect("accepted");
    assert_eq!(checked.warnings.len(), 1);
    let w = checked.warnings[0].render(&src);
    assert!(
        w.contains("warning: local `spare` is neither defined nor used"),
        "{w}"
    );
    assert!(w.contains("t.alpha:1:"), "{w}");
    // The local is dropped; the others keep working.
    let sys = &checked.program.systems[0];
    assert!(sys.var_by_name("spare").is_none());
    let ins = inputs(&checked.program, "s", &[3], &|_, _| vec![1.0, 2.0, 3.0]);
    let got = interp::run(&checked.program, "s", &[3], &ins, 0).expect("runs");
    assert_eq!(floats(&got["y"]), vec![1.0, 2.0, 3.0]);
    // A local that is used but not defined is still an error.
    let e = errors(
        "affine s [N] -> { : N > 0 } inputs x : [N] outputs y : [N] locals t : [N] let y = t; .",
    );
    assert!(e.contains("local `t` is never defined"), "{e}");
}

#[test]
fn alphac_check_prints_the_warning_and_succeeds() {
    let dir = std::env::temp_dir().join(format!("alphac_warn_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let f = dir.join("w.alpha");
    std::fs::write(
        &f,
        "affine s [N] -> { : N > 0 } inputs x : [N] outputs y : [N]\n  locals spare : [N]\n let y = x; .",
    )
    .expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_alphac"))
        .arg("check")
        .arg(&f)
        .output()
        .expect("runs alphac");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: local `spare` is neither defined nor used"),
        "{stderr}"
    );
    assert!(stderr.contains("w.alpha:2:10"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
