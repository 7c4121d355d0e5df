//! Loop interchange for locality (`codegen::opt::interchange_loops`): the
//! inner loop of an accumulation nest `I[a][b] += … R[e[i]][a][b] …` moves
//! out past the loop over `b` where the rows are then read contiguously.
//! Where it applies the emitted code shows the accumulation in memory
//! inside the moved loop; where the failures of the body would depend on
//! the crossed loop it does not; and in every case the compiled program
//! equals the interpreter's bit for bit, and a run that fails reports the
//! interpreter's error.

mod common;

use alphac::compile::{self, Options};
use alphac::interp;
use alphac::runtime::{Array, ArrayData};
use common::cleanup::exact;
use common::option_sets;
use std::collections::HashMap;

/// `I[a, b] = Σ_i (if COND then BODY else 0.0)` over a triangle of
/// entries, with the table `T` (domain `T_DOMAIN`) built from `X`.
fn program(cond: &str, body: &str, t_domain: &str) -> String {
    format!(
        "affine ic [N, K] -> {{ : N > 0 and K > 0 }}
    inputs
        X : float [N, K];
        e : int [N];
    outputs
        I : float {{[a, b] : 0 <= b <= a < K}};
    locals
        T : float {{[r, a, b] : {t_domain}}};
    let
        T[r, a, b] = X[r, a] * X[r, b] + 1.0;
        I[a, b] = reduce(+, [i], {{: 0 <= i < N}} : if {cond} then {body} else 0.0);
."
    )
}

const BOX: &str = "0 <= r < N and 0 <= a < K and 0 <= b < K";
const TRIANGLE: &str = "0 <= r < N and 0 <= b <= a < K";

fn emit(src: &str) -> String {
    let p = compile::parse_program(src).unwrap_or_else(|e| panic!("{e}"));
    compile::emit(&p, "ic", &Options::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// The accumulation runs in memory under the loop over `i` (`t3`): its
/// innermost index is the loop over `b` (`t1`), inside `t3`. (The loop
/// over the rows `a` may be fused with the initialization of `I`.)
fn interchanged(code: &str) -> bool {
    let at = |p: &str| code.find(p);
    let accumulated = code
        .lines()
        .any(|l| l.trim_start().starts_with("I[") && l.contains("][t1] += "));
    accumulated
        && !code.contains("I_acc")
        && matches!((at("for (t3 = "), at("for (t1 = ")), (Some(i), Some(b)) if i < b)
}

/// The loop over the subjects `i` (`t3`) runs outside the loop over the
/// rows `a` of the accumulation (whatever that loop is called: `t0`, or
/// `z0` where it is fused with the initialization of `I`).
fn subjects_outside_rows(code: &str) -> bool {
    let row = code
        .lines()
        .map(str::trim_start)
        .find(|l| l.starts_with("I[") && l.contains(" += "))
        .and_then(|l| l.strip_prefix("I["))
        .and_then(|r| r.split(']').next());
    match (row, code.find("for (t3 = ")) {
        (Some(r), Some(i)) => code.find(&format!("for ({r} = ")).is_some_and(|a| i < a),
        _ => false,
    }
}

fn inputs(p: &alphac::ir::Program, params: &[i64], e: &[i64]) -> HashMap<String, Array> {
    let mut m = HashMap::new();
    for v in &p.systems[0].vars {
        if v.kind != alphac::ir::VarKind::Input {
            continue;
        }
        let spec = interp::array_spec(v, params).expect("a spec");
        let n = (params[0] * params[1]) as usize;
        let data = if v.name == "e" {
            ArrayData::Int(e.to_vec())
        } else {
            ArrayData::Float((0..n).map(|x| 0.25 * x as f64 - 1.3).collect())
        };
        m.insert(
            v.name.clone(),
            Array::from_data(&spec, data).expect("an array"),
        );
    }
    m
}

/// The compiled program under every option set and the interpreter give
/// the same outputs, bit for bit, or both fail at the same row.
fn agree(src: &str, params: &[i64], e: &[i64]) {
    let p = compile::parse_program(src).unwrap_or_else(|e| panic!("{e}"));
    let ins = inputs(&p, params, e);
    let want = interp::run(&p, "ic", params, &ins, 0);
    for opts in option_sets() {
        let c = compile::compile(src, &opts).unwrap_or_else(|e| panic!("{e}"));
        let got = c.run(params, &ins, 0);
        match (&want, got) {
            (Ok(w), Ok(g)) => {
                for (name, a) in w {
                    assert!(exact(a, &g[name]), "{opts:?} e {e:?}: {name} differs");
                }
            }
            // the engines word it differently; both name the row of the
            // first failing point (of `T`, or of `X` where the optimizer
            // inlined `T`)
            (Err(w), Err(g)) => {
                let (w, g) = (w.to_string(), g.to_string());
                let row = w
                    .split("indirect read T[")
                    .nth(1)
                    .and_then(|r| r.split(',').next())
                    .unwrap_or_else(|| panic!("{w}"));
                assert!(g.contains(&format!("` at [{row}")), "{opts:?}: {w} / {g}");
            }
            (w, g) => panic!("{opts:?} e {e:?}: interpreter {w:?}, compiled {g:?}"),
        }
    }
}

/// Rows inside `T`'s domain (`e >= 2 = K − 1` or negative: skipped),
/// then rows outside it: e[3] = 7 is outside T's rows, so the first
/// failing point is (0, 0, 3) in both loop orders (e[4] = 9 names
/// another row); and e[1] = 0, a row of the box outside the domain `b <=
/// r` of the coupled case (an error there, a value elsewhere: the table
/// is not storage-mapped, so the JIT checks its whole domain).
fn agree_on_data(src: &str) {
    agree(src, &[5, 3], &[4, -1, 2, 3, 2]);
    agree(src, &[1, 1], &[0]);
    agree(src, &[5, 3], &[4, 2, -1, 7, 9]);
    agree(src, &[5, 3], &[4, 0, -1, 2, 2]);
}

#[test]
fn a_gathered_row_is_read_contiguously() {
    for domain in [BOX, TRIANGLE] {
        let src = program("e[i] >= 0", "T[e[i], a, b] * X[i, a]", domain);
        assert!(interchanged(&emit(&src)), "{domain}:\n{}", emit(&src));
        agree_on_data(&src);
    }
}

#[test]
fn failures_that_depend_on_the_crossed_loop_keep_the_order() {
    for (cond, body, domain) in [
        // the load runs under a condition on b
        ("e[i] >= b", "T[e[i], a, b]", BOX),
        // the data index mentions b: int arithmetic on it
        ("e[i] >= 0", "T[e[i] + b, a, b]", BOX),
        // the domain couples the data row with b
        (
            "e[i] >= 0",
            "T[e[i], a, b]",
            "0 <= r < N and 0 <= b <= a < K and b <= r",
        ),
    ] {
        let src = program(cond, body, domain);
        let code = emit(&src);
        assert!(!interchanged(&code), "{cond} / {body} / {domain}:\n{code}");
        agree_on_data(&src);
    }
}

/// Where the body reads more values of the subject `i` than of the row
/// `a` (CoxPH's information matrix), the loop over the subjects moves out
/// past the rows too (`i, a, b`): each subject's values are read once,
/// not once per row. Where it reads as many (`X[i, a] * X[i, b]` under
/// `e[i] >= 0`: three loads move with `i`, and with `a` `X[i, a]` and
/// `I`'s load and store), the nest stays `a, i, b`.
#[test]
fn the_subjects_run_outside_the_rows_where_they_are_read_more() {
    let more = "(T[e[i], a, b] * X[i, a] + X[i, b]) / (1.0 + X[i, 0] * X[i, 0])";
    for domain in [BOX, TRIANGLE] {
        let src = program("e[i] >= 0", more, domain);
        let code = emit(&src);
        assert!(
            interchanged(&code) && subjects_outside_rows(&code),
            "{domain}:\n{code}"
        );
        agree_on_data(&src);
        let src = program("e[i] >= 0", "X[i, a] * X[i, b]", domain);
        let code = emit(&src);
        assert!(
            interchanged(&code) && !subjects_outside_rows(&code),
            "{domain}:\n{code}"
        );
        agree_on_data(&src);
    }
}

/// The rows stay outside the subjects when a failure would then depend
/// on the row (the load under a condition on `a`); the results equal the
/// interpreter's, and a failing run fails at the same row.
#[test]
fn rows_stay_outside_where_a_failure_depends_on_them() {
    let more = "(T[e[i], a, b] * X[i, a] + X[i, b]) / (1.0 + X[i, 0] * X[i, 0])";
    let src = program("e[i] >= a", more, BOX);
    let code = emit(&src);
    assert!(
        interchanged(&code) && !subjects_outside_rows(&code),
        "{code}"
    );
    agree_on_data(&src);
}

/// DMM's per-term counts rebuilt at the start of a sweep, `n[z[d]][a] +=
/// X[d][a]` (a scatter loop: the label `z[d]` is a binding around the
/// accumulation), run the documents outside and the terms inside, so that
/// both the row of `X` and the row of the count are walked contiguously
/// (the sparse updates had left the terms outside). That the compiled
/// samplers still equal the interpreter is `tests/inference_suite.rs`.
#[test]
fn a_scatter_count_runs_its_documents_outside() {
    for name in ["dmm_gs", "dmm_mh"] {
        let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(&path).expect("the example");
        let p = compile::parse_program(&src).unwrap_or_else(|e| panic!("{e}"));
        let code = compile::emit(&p, name, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
        let line = code
            .lines()
            .find(|l| l.contains("_add[") && l.contains("] += X["))
            .unwrap_or_else(|| panic!("{name}: no count rebuild\n{code}"));
        // `X[doc][term]`: the loop variables of its two positions.
        let x = line.split("X[").nth(1).expect("a read of X");
        let mut vars = x.split(['[', ']']).filter(|s| !s.is_empty());
        let (doc, term) = (vars.next().expect("doc"), vars.next().expect("term"));
        let before = &code[..code.find(line).expect("the line")];
        let (d, t) = (
            before.rfind(&format!("for ({doc} = ")),
            before.rfind(&format!("for ({term} = ")),
        );
        assert!(
            matches!((d, t), (Some(d), Some(t)) if d < t),
            "{name}: documents not outside the terms\n{code}"
        );
    }
}
