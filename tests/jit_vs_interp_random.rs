//! A generated family of legal programs (recurrences along `i` over an
//! `N x M` box, reading earlier variables at the same or the previous row,
//! with embedded and top-level reductions of random operators): the JIT
//! output equals the interpreter's (floats to 1e-12 relative), with and
//! without the SDR optimizer. The hidden order is (i, variable index).
//! A second family adds data-dependent reads at a column `P[i, j]` (an int
//! input in `[0, M)`) of the same or the previous row, also inside
//! reduction bodies: the dependence analysis keeps their row exact (a read
//! of the previous row of the variable itself is no cycle).

mod common;

use alphac::compile::{self, Options};
use alphac::interp;
use alphac::runtime::{Array, ArrayData};
use common::{all_close, Tol};
use std::collections::HashMap;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// A term readable at `[i, j]` from variable `k` (same row: earlier
/// variables; previous row: any variable up to `k` when `prev`); with
/// `indirect`, also reads at the data-dependent column `P[i, _]`.
fn term(r: &mut Lcg, k: usize, prev: bool, indirect: bool) -> String {
    let row = if prev { "i - 1" } else { "i" };
    let maxv = if prev { k + 1 } else { k };
    let choice = r.next(if indirect { 8 } else { 5 });
    match choice {
        5 => return format!("A[{row}, P[i, j]]"),
        6 if maxv > 0 => return format!("X{}[{row}, P[i, j]]", r.next(maxv as u64)),
        7 if maxv > 0 => {
            let op = ["+", "max", "min"][r.next(3) as usize];
            return format!(
                "reduce({op}, [k], {{: 0 <= k < M}} : X{}[{row}, P[i, k]])",
                r.next(maxv as u64)
            );
        }
        _ => {}
    }
    if maxv == 0 || choice == 0 {
        return format!("A[{row}, j]");
    }
    let v = r.next(maxv as u64) as usize;
    match choice {
        1 | 2 => format!("X{v}[{row}, j]"),
        3 => {
            let op = ["+", "max", "min"][r.next(3) as usize];
            let lo = if r.next(2) == 0 { "0" } else { "j" };
            format!("reduce({op}, [k], {{: {lo} <= k < M}} : X{v}[{row}, k])")
        }
        _ => format!(
            "reduce(+, [k], {{: 0 <= k <= j}} : A[{row}, k] * {}.5)",
            r.next(3)
        ),
    }
}

fn program(seed: u64, indirect: bool) -> String {
    let mut r = Lcg(seed);
    let n = 1 + r.next(3) as usize;
    let mut decls = String::new();
    let mut eqs = String::new();
    for k in 0..n {
        let kind = if k + 1 == n { "outputs" } else { "locals" };
        let _ = kind;
        decls.push_str(&format!("        X{k} : float [N, M];\n"));
        let top = r.next(4) == 0;
        if top {
            let op = ["+", "max"][r.next(2) as usize];
            let t = if k == 0 {
                "A[i, k]".to_string()
            } else {
                format!("X{}[i, k]", r.next(k as u64))
            };
            eqs.push_str(&format!(
                "        X{k}[i, j] = reduce({op}, [k], {{: 0 <= k <= j}} : {t});\n"
            ));
        } else {
            let a = term(&mut r, k, false, indirect);
            let b = term(&mut r, k, false, indirect);
            let c = term(&mut r, k, true, indirect);
            eqs.push_str(&format!(
                "        X{k}[i, j] = case {{\n            {{: i == 0}} : {a} + 1.0;\n            {{: i >= 1}} : {b} * 0.5 + {c} * 0.25;\n        }};\n"
            ));
        }
    }
    // Outputs: the last variable; the others are locals.
    let last = decls.lines().last().unwrap().to_string();
    let locals: Vec<&str> = decls.lines().take(n - 1).collect();
    let locals = if locals.is_empty() {
        String::new()
    } else {
        format!("    locals\n{}\n", locals.join("\n"))
    };
    let p = if indirect {
        "        P : int [N, M];\n"
    } else {
        ""
    };
    format!(
        "affine gen [N, M] -> {{ : N > 0 and M > 0 }}\n    inputs\n        A : float [N, M];\n{p}    outputs\n{last}\n{locals}    let\n{eqs}.\n"
    )
}

/// Floats: 1e-12 relative.
const TOL: Tol = Tol::rel(1e-12);

/// The column input `P` of the indirect family: values in `[0, M)`.
fn columns(prog: &alphac::ir::Program, params: &[i64], seed: u64) -> Array {
    let sys = &prog.systems[0];
    let p = &sys.vars[sys.var_by_name("P").unwrap()];
    let spec = interp::array_spec(p, params).unwrap();
    let mut r = Lcg(seed ^ 0x5eed);
    let data = (0..params[0] * params[1])
        .map(|_| r.next(params[1] as u64) as i64)
        .collect();
    Array::from_data(&spec, ArrayData::Int(data)).unwrap()
}

#[test]
fn random_programs_agree_with_the_interpreter() {
    agree(false);
}

#[test]
fn random_programs_with_indirect_reads_agree_with_the_interpreter() {
    agree(true);
}

fn agree(indirect: bool) {
    let mut compiled = 0;
    for seed in 0..40u64 {
        let src = program(seed, indirect);
        let Ok(prog) = compile::parse_program(&src) else {
            panic!("generator produced an invalid program:\n{src}");
        };
        for optimize in [false, true] {
            let opts = Options {
                optimize,
                checked: true,
                ..Options::default()
            };
            let c = match compile::compile(&src, &opts) {
                Ok(c) => c,
                Err(e) => panic!("seed {seed} optimize {optimize}: {e}\n{src}"),
            };
            compiled += 1;
            for params in [vec![1, 1], vec![3, 4]] {
                let sys = &prog.systems[0];
                let spec = interp::array_spec(&sys.vars[0], &params).unwrap();
                let a = Array::random(&spec, seed).unwrap();
                let mut inputs: HashMap<String, Array> = [("A".to_string(), a)].into();
                if indirect {
                    inputs.insert("P".to_string(), columns(&prog, &params, seed));
                }
                let want = interp::run(&prog, "gen", &params, &inputs, 0).unwrap();
                let got = c.run(&params, &inputs, 0).unwrap();
                for (n, w) in &want {
                    let (ArrayData::Float(x), ArrayData::Float(y)) = (w.data(), got[n].data())
                    else {
                        panic!("types")
                    };
                    assert!(
                        all_close(x, y, TOL),
                        "seed {seed} optimize {optimize} params {params:?}: {n}\n{x:?}\n{y:?}\n{src}\n{}",
                        c.function().to_c()
                    );
                }
            }
        }
    }
    assert_eq!(compiled, 80);
}

/// `alphac show` round-trips: printing a checked program and checking the
/// text again gives the same program (spans aside) and the same text, for
/// both generated families and for every example.
#[test]
fn show_round_trips_on_random_programs_and_examples() {
    use alphac::diag::SourceFile;
    use alphac::ir::print::{program_to_alpha, without_spans};
    fn lower(name: &str, text: &str) -> alphac::ir::Program {
        let src = SourceFile::new(name, text);
        let ast = alphac::syntax::parse(&src).unwrap_or_else(|d| panic!("{name}: {d:?}\n{text}"));
        alphac::ir::lower::lower(&ast, &src).unwrap_or_else(|d| panic!("{name}: {d:?}\n{text}"))
    }
    let mut texts: Vec<(String, String)> = Vec::new();
    for seed in 0..60 {
        for indirect in [false, true] {
            texts.push((format!("random {seed} {indirect}"), program(seed, indirect)));
        }
    }
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    for e in std::fs::read_dir(dir).expect("examples/") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "alpha") {
            let text = std::fs::read_to_string(&p).expect("readable");
            texts.push((p.display().to_string(), text));
        }
    }
    for (name, text) in texts {
        let p1 = lower(&name, &text);
        let shown = program_to_alpha(&p1);
        let p2 = lower(&format!("{name} (shown)"), &shown);
        assert!(
            without_spans(&p1) == without_spans(&p2),
            "{name}: the shown program differs\n{shown}"
        );
        assert_eq!(program_to_alpha(&p2), shown, "{name}: show is not stable");
    }
}
