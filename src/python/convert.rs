//! Arrays between numpy and alphac: an input `ndarray` checked against
//! the [`ArraySpec`] of the input it is given for (element type, shape)
//! and copied into an [`Array`]; an output [`Array`] moved into a numpy
//! array without copying (numpy owns the buffer alphac allocated, and the
//! reshape is a view of it); scalar outputs, traces and dictionaries.
//!
//! Element types: `float` is `float64`, `int` is `int64`, `bool` is
//! `bool`. An input may be given in any dtype numpy casts *safely* to the
//! input's (`int32` for `int`, `float32` or an integer dtype for
//! `float`); anything else is an error naming the input.
//!
//! Must not know about: the pipeline, native code or sweeps.

use super::RunError;
use crate::runtime::{Array, ArrayData, ArraySpec, Scalar};
use crate::vocab::ElemType;
use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The numpy dtype name of an alphac element type.
pub fn dtype_name(ty: ElemType) -> &'static str {
    match ty {
        ElemType::Int => "int64",
        ElemType::Float => "float64",
        ElemType::Bool => "bool",
    }
}

/// `obj` (anything `numpy.asarray` takes) as an [`Array`] of `spec`: an
/// error naming the input when its dtype does not cast safely to the
/// spec's or its shape differs.
pub fn input_array(py: Python<'_>, obj: &Bound<'_, PyAny>, spec: &ArraySpec) -> PyResult<Array> {
    let np = py.import("numpy")?;
    let arr = np.call_method1("asarray", (obj,))?;
    let target = dtype_name(spec.ty);
    let found = arr.getattr("dtype")?;
    let safe: bool = np
        .call_method1("can_cast", (&found, target, "safe"))?
        .extract()?;
    if !safe {
        return Err(RunError::new_err(format!(
            "input {}: expected {} elements ({}), found dtype {}",
            spec.name,
            spec.ty.name(),
            target,
            found.str()?
        )));
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", target)?;
    let arr = np.call_method("ascontiguousarray", (arr,), Some(&kwargs))?;
    let expected = spec.shape().map_err(|e| RunError::new_err(e.to_string()))?;
    let data = match spec.ty {
        ElemType::Int => ArrayData::Int(contiguous::<i64>(&arr, spec, &expected)?),
        ElemType::Float => ArrayData::Float(contiguous::<f64>(&arr, spec, &expected)?),
        ElemType::Bool => ArrayData::Bool(contiguous::<bool>(&arr, spec, &expected)?),
    };
    Array::from_data(spec, data).map_err(|e| RunError::new_err(e.to_string()))
}

/// The elements of a C-contiguous array of `T` whose shape must be
/// `expected` (copied: alphac's buffers are its own).
fn contiguous<T: numpy::Element + Copy>(
    arr: &Bound<'_, PyAny>,
    spec: &ArraySpec,
    expected: &[usize],
) -> PyResult<Vec<T>> {
    let a = arr.cast::<PyArrayDyn<T>>()?;
    if a.shape() != expected {
        return Err(RunError::new_err(format!(
            "input {}: expected shape {}, found {}",
            spec.name,
            shape_text(expected),
            shape_text(a.shape())
        )));
    }
    let ro = a.readonly();
    let slice = ro
        .as_slice()
        .map_err(|e| RunError::new_err(format!("input {}: {e}", spec.name)))?;
    Ok(slice.to_vec())
}

/// A shape as numpy prints it: `(3, 4)`, `(5,)`, `()`.
fn shape_text(s: &[usize]) -> String {
    match s {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            s.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `a` as a numpy array of its shape, owning `a`'s buffer (no copy).
pub fn output_array<'py>(py: Python<'py>, a: Array) -> PyResult<Bound<'py, PyAny>> {
    let shape = a.shape().to_vec();
    Ok(match a.into_data() {
        ArrayData::Int(v) => PyArray1::from_vec(py, v).reshape(shape)?.into_any(),
        ArrayData::Float(v) => PyArray1::from_vec(py, v).reshape(shape)?.into_any(),
        ArrayData::Bool(v) => PyArray1::from_vec(py, v).reshape(shape)?.into_any(),
    })
}

/// A dictionary of numpy arrays, by name, in the order of `order` (the
/// system's declaration order; names not in it come last, sorted).
pub fn array_dict<'py>(
    py: Python<'py>,
    arrays: std::collections::HashMap<String, Array>,
    order: &[String],
) -> PyResult<Bound<'py, PyDict>> {
    let mut named: Vec<(String, Array)> = arrays.into_iter().collect();
    let rank = |n: &str| order.iter().position(|o| o == n).unwrap_or(order.len());
    named.sort_by(|a, b| (rank(&a.0), &a.0).cmp(&(rank(&b.0), &b.0)));
    let d = PyDict::new(py);
    for (name, a) in named {
        d.set_item(name, output_array(py, a)?)?;
    }
    Ok(d)
}

/// A scalar as a Python number or bool.
pub fn scalar<'py>(py: Python<'py>, v: Scalar) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Scalar::Int(x) => x.into_pyobject(py)?.into_any(),
        Scalar::Float(x) => x.into_pyobject(py)?.into_any(),
        Scalar::Bool(x) => x.into_pyobject(py)?.to_owned().into_any(),
    })
}

/// A trace (the sweep indices and one column per scalar output) as a
/// dictionary of one-dimensional numpy arrays: `sweep` (int64), then one
/// array per name, of the output's own dtype.
pub fn trace_dict<'py>(
    py: Python<'py>,
    names: &[String],
    rows: &[(u64, Vec<Scalar>)],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let sweeps: Vec<i64> = rows
        .iter()
        .map(|(s, _)| i64::try_from(*s).unwrap_or(i64::MAX))
        .collect();
    d.set_item("sweep", PyArray1::from_vec(py, sweeps))?;
    for (k, name) in names.iter().enumerate() {
        let column = rows.iter().filter_map(|(_, r)| r.get(k).copied());
        let arr = match rows.first().and_then(|(_, r)| r.get(k)) {
            Some(Scalar::Int(_)) => PyArray1::from_vec(
                py,
                column
                    .map(|v| match v {
                        Scalar::Int(x) => x,
                        _ => 0,
                    })
                    .collect(),
            )
            .into_any(),
            Some(Scalar::Bool(_)) => PyArray1::from_vec(
                py,
                column.map(|v| matches!(v, Scalar::Bool(true))).collect(),
            )
            .into_any(),
            _ => PyArray1::from_vec(
                py,
                column
                    .map(|v| match v {
                        Scalar::Float(x) => x,
                        Scalar::Int(x) => x as f64,
                        Scalar::Bool(x) => f64::from(u8::from(x)),
                    })
                    .collect::<Vec<f64>>(),
            )
            .into_any(),
        };
        d.set_item(name, arr)?;
    }
    Ok(d)
}
