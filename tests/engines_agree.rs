//! The interpreter and the JIT agree on the corner cases of float
//! semantics: NaN-propagating max/min (IEEE 754-2019), signed zeros, and
//! saturating float-to-int conversion.

use alphac::compile::{compile, parse_program, Options};
use alphac::interp;
use alphac::runtime::{Array, ArrayData};
use std::collections::HashMap;

const SRC: &str = "affine corners [N] -> { : N > 0 }
    inputs A : float [N];
    outputs
        M : float [N];
        L : float [N];
        R : float [N];
        I : int [N];
    let
        M[i] = max(A[i], 0.0);
        L[i] = min(A[i], -0.0);
        R[i] = reduce(max, [j], {: 0 <= j <= i} : A[j]);
        I[i] = int(A[i] * 1e300);
.";

#[test]
fn float_corner_cases_agree_bit_for_bit() {
    let values = [
        1.5,
        f64::NAN,
        -0.0,
        0.0,
        -2.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        3.0,
    ];
    let n = values.len() as i64;
    let program = parse_program(SRC).unwrap();
    let sys = &program.systems[0];
    let spec = interp::array_spec(&sys.vars[sys.var_by_name("A").unwrap()], &[n]).unwrap();
    let a = Array::from_data(&spec, ArrayData::Float(values.to_vec())).unwrap();
    let inputs: HashMap<String, Array> = [("A".to_string(), a)].into_iter().collect();
    let by_interp = alphac::interp::run(&program, "corners", &[n], &inputs, 0).unwrap();
    for optimize in [false, true] {
        let compiled = compile(
            SRC,
            &Options {
                optimize,
                ..Default::default()
            },
        )
        .unwrap();
        let by_jit = compiled.run(&[n], &inputs, 0).unwrap();
        for name in ["M", "L", "R", "I"] {
            match (by_interp[name].data(), by_jit[name].data()) {
                (ArrayData::Float(x), ArrayData::Float(y)) => {
                    for (k, (a, b)) in x.iter().zip(y).enumerate() {
                        assert!(
                            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                            "{name}[{k}]: interpreter {a:?}, JIT {b:?} (optimize {optimize})"
                        );
                    }
                }
                (x, y) => assert_eq!(x, y, "{name} (optimize {optimize})"),
            }
        }
    }
    // the semantics themselves
    let m = match by_interp["M"].data() {
        ArrayData::Float(v) => v.clone(),
        _ => unreachable!("M is float"),
    };
    assert!(m[1].is_nan(), "max propagates NaN");
    assert_eq!(m[2].to_bits(), 0.0f64.to_bits(), "max(-0, +0) = +0");
    let r = match by_interp["R"].data() {
        ArrayData::Float(v) => v.clone(),
        _ => unreachable!("R is float"),
    };
    assert!(
        r[1..].iter().all(|x| x.is_nan()),
        "a NaN poisons the running max"
    );
    let i = match by_interp["I"].data() {
        ArrayData::Int(v) => v.clone(),
        _ => unreachable!("I is int"),
    };
    assert_eq!(i[0], i64::MAX, "saturates");
    assert_eq!(i[1], 0, "NaN converts to 0");
}
