//! Data I/O: `.npy` (via `npyz`) and CSV (via `csv`) files to and from
//! [`Array`]s, checked against an [`ArraySpec`].
//!
//! - `.npy`: dtypes `int64` (and `int32`, widened), `float64` (and
//!   `float32`, widened), `bool`; either byte order; C or Fortran order
//!   (converted to the row-major layout). The shape must equal the spec's
//!   shape exactly (a scalar is shape `()`). Written files are C-order,
//!   native-endian `<i8`, `<f8` or `|b1`.
//! - CSV: no header; a 0-D or 1-D array is one value per line (a single
//!   line holding all the values is accepted too); a 2-D array is one line
//!   per row, comma-separated; more dimensions are an error. Values: ints
//!   as decimal `i64`; floats as Rust/NumPy-style decimal (`nan`, `inf`
//!   accepted); bools as `true`/`false` or `1`/`0`. Floats are written in
//!   the shortest form that reads back to the same `f64`.
//!
//! Every mismatch is an error naming the variable with the expected and
//! found shape or dtype. The spec is sized (and limited, see
//! [`crate::runtime::MAX_ELEMENTS`]) before anything is allocated.
//!
//! Must not know about: programs and evaluation.

use super::array::{Array, ArrayData, ArraySpec};
use super::error::RuntimeError;
use crate::vocab::ElemType;
use npyz::{DType, TypeChar, WriterBuilder};
use std::path::Path;

/// Errors of data I/O are run-time errors.
pub type DataError = RuntimeError;

fn io_err(spec_name: &str, path: &Path, e: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::Io {
        name: spec_name.to_string(),
        path: path.display().to_string(),
        msg: e.to_string(),
    }
}

fn data_err(name: &str, msg: impl Into<String>) -> RuntimeError {
    RuntimeError::Data {
        name: name.to_string(),
        msg: msg.into(),
    }
}

fn npy_dtype_name(d: &DType) -> String {
    match d {
        DType::Plain(ts) => {
            let size = ts.size_field();
            match ts.type_char() {
                TypeChar::Bool => "bool".to_string(),
                TypeChar::Int => format!("int{}", size * 8),
                TypeChar::Uint => format!("uint{}", size * 8),
                TypeChar::Float => format!("float{}", size * 8),
                _ => ts.to_string(),
            }
        }
        other => other.descr(),
    }
}

fn expected_dtype(ty: ElemType) -> &'static str {
    match ty {
        ElemType::Int => "int64 (or int32)",
        ElemType::Float => "float64 (or float32)",
        ElemType::Bool => "bool",
    }
}

/// Reorders a Fortran-order buffer of `shape` into C order.
fn fortran_to_c<T: Clone>(v: Vec<T>, shape: &[usize]) -> Vec<T> {
    let n = shape.len();
    if n <= 1 {
        return v;
    }
    // Fortran strides: stride_0 = 1, stride_k = stride_{k-1} * shape_{k-1}.
    let mut fstride = vec![1usize; n];
    for k in 1..n {
        fstride[k] = fstride[k - 1] * shape[k - 1];
    }
    let mut out = Vec::with_capacity(v.len());
    let mut idx = vec![0usize; n];
    for _ in 0..v.len() {
        let off: usize = idx.iter().zip(&fstride).map(|(i, s)| i * s).sum();
        out.push(v[off].clone());
        for k in (0..n).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

/// Reads a `.npy` image from memory, checked against `spec`.
pub fn read_npy_bytes(bytes: &[u8], spec: &ArraySpec) -> Result<Array, RuntimeError> {
    read_npy_from(bytes, spec)
}

/// Reads a `.npy` image from a reader, checked against `spec`; the
/// elements are decoded as they are read (the image is never held whole).
fn read_npy_from(reader: impl std::io::Read, spec: &ArraySpec) -> Result<Array, RuntimeError> {
    let name = &spec.name;
    let expected_shape = spec.shape()?;
    spec.len()?;
    let npy = npyz::NpyFile::new(reader)
        .map_err(|e| data_err(name, format!("not a valid .npy file: {e}")))?;
    let found: Vec<u64> = npy.shape().to_vec();
    let found_shape: Vec<usize> = found
        .iter()
        .map(|&x| usize::try_from(x).unwrap_or(usize::MAX))
        .collect();
    if found_shape != expected_shape {
        return Err(RuntimeError::Shape {
            name: name.clone(),
            expected: expected_shape,
            found: found_shape,
        });
    }
    let dtype = npy.dtype();
    let fortran = npy.order() == npyz::Order::Fortran;
    let (tc, size) = match &dtype {
        DType::Plain(ts) => (Some(ts.type_char()), ts.size_field()),
        _ => (None, 0),
    };
    let mismatch = || RuntimeError::DType {
        name: name.clone(),
        expected: expected_dtype(spec.ty).to_string(),
        found: npy_dtype_name(&dtype),
    };
    let rd = |e: std::io::Error| data_err(name, format!("reading .npy data: {e}"));
    let data = match (spec.ty, tc, size) {
        (ElemType::Int, Some(TypeChar::Int), 8) => ArrayData::Int(fortran_or_c(
            elements::<i64>(npy).map_err(rd)?,
            fortran,
            &expected_shape,
        )),
        (ElemType::Int, Some(TypeChar::Int), 4) => {
            ArrayData::Int(elements::<i32>(npy).map_err(rd).map(|v| {
                fortran_or_c(
                    v.into_iter().map(i64::from).collect(),
                    fortran,
                    &expected_shape,
                )
            })?)
        }
        (ElemType::Float, Some(TypeChar::Float), 8) => ArrayData::Float(fortran_or_c(
            elements::<f64>(npy).map_err(rd)?,
            fortran,
            &expected_shape,
        )),
        (ElemType::Float, Some(TypeChar::Float), 4) => ArrayData::Float(fortran_or_c(
            elements::<f32>(npy)
                .map_err(rd)?
                .into_iter()
                .map(f64::from)
                .collect(),
            fortran,
            &expected_shape,
        )),
        (ElemType::Bool, Some(TypeChar::Bool), 1) => ArrayData::Bool(fortran_or_c(
            elements::<bool>(npy).map_err(rd)?,
            fortran,
            &expected_shape,
        )),
        _ => return Err(mismatch()),
    };
    Array::from_data(spec, data)
}

/// The elements of a `.npy` image, in stored order, in a vector of
/// exactly their number (allocated once: the header's shape was checked
/// against the spec, whose size is bounded).
fn elements<T: npyz::Deserialize>(
    npy: npyz::NpyFile<impl std::io::Read>,
) -> std::io::Result<Vec<T>> {
    let invalid = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
    let r = npy.data::<T>().map_err(|e| invalid(e.to_string()))?;
    let mut v = Vec::new();
    v.try_reserve_exact(usize::try_from(r.len()).unwrap_or(usize::MAX))
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::OutOfMemory, e.to_string()))?;
    for x in r {
        v.push(x?);
    }
    Ok(v)
}

fn fortran_or_c<T: Clone>(v: Vec<T>, fortran: bool, shape: &[usize]) -> Vec<T> {
    if fortran {
        fortran_to_c(v, shape)
    } else {
        v
    }
}

/// Reads a `.npy` file, checked against `spec` (shape and dtype).
pub fn read_npy(path: &Path, spec: &ArraySpec) -> Result<Array, RuntimeError> {
    let file = std::fs::File::open(path).map_err(|e| io_err(&spec.name, path, e))?;
    read_npy_from(std::io::BufReader::new(file), spec)
}

fn npy_image<T: npyz::AutoSerialize + Clone>(
    v: &[T],
    shape: &[usize],
    name: &str,
) -> Result<Vec<u8>, RuntimeError> {
    let shape: Vec<u64> = shape.iter().map(|&x| x as u64).collect();
    let mut buf = Vec::new();
    let we = |e: std::io::Error| data_err(name, format!("writing .npy: {e}"));
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&shape)
        .writer(&mut buf)
        .begin_nd()
        .map_err(we)?;
    w.extend(v.iter().cloned()).map_err(we)?;
    w.finish().map_err(we)?;
    Ok(buf)
}

/// The `.npy` image of an array (C order, shape = the array's shape).
pub fn write_npy_bytes(a: &Array) -> Result<Vec<u8>, RuntimeError> {
    match a.data() {
        ArrayData::Int(v) => npy_image(v, a.shape(), a.name()),
        ArrayData::Float(v) => npy_image(v, a.shape(), a.name()),
        ArrayData::Bool(v) => npy_image(v, a.shape(), a.name()),
    }
}

/// Writes an array to a `.npy` file.
pub fn write_npy(path: &Path, a: &Array) -> Result<(), RuntimeError> {
    let bytes = write_npy_bytes(a)?;
    std::fs::write(path, bytes).map_err(|e| io_err(a.name(), path, e))
}

fn parse_field(s: &str, ty: ElemType, name: &str, line: usize) -> Result<Scalar, RuntimeError> {
    let s = s.trim();
    let bad = || {
        data_err(
            name,
            format!("line {line}: cannot read {s:?} as {}", ty.name()),
        )
    };
    Ok(match ty {
        ElemType::Int => Scalar::Int(s.parse().map_err(|_| bad())?),
        ElemType::Float => Scalar::Float(s.parse().map_err(|_| bad())?),
        ElemType::Bool => Scalar::Bool(match s {
            "true" | "True" | "1" => true,
            "false" | "False" | "0" => false,
            _ => return Err(bad()),
        }),
    })
}

use super::array::Scalar;

/// Reads CSV text, checked against `spec` (see the module comment).
pub fn read_csv_str(text: &str, spec: &ArraySpec) -> Result<Array, RuntimeError> {
    let name = &spec.name;
    let shape = spec.shape()?;
    if shape.len() > 2 {
        return Err(data_err(
            name,
            format!(
                "CSV holds at most 2 dimensions; {name} has {} (use .npy)",
                shape.len()
            ),
        ));
    }
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows: Vec<Vec<String>> = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| data_err(name, format!("malformed CSV: {e}")))?;
        if rec.len() == 1 && rec[0].trim().is_empty() {
            continue; // blank line
        }
        rows.push(rec.iter().map(|s| s.to_string()).collect());
    }
    let found: Vec<usize> = if rows.len() == 1 && shape.len() == 1 && shape[0] != 1 {
        vec![rows[0].len()]
    } else if shape.len() <= 1 {
        if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != 1) {
            return Err(data_err(
                name,
                format!(
                    "line {}: expected one value per line, found {}",
                    i + 1,
                    r.len()
                ),
            ));
        }
        vec![rows.len()]
    } else {
        let cols = rows.first().map_or(0, |r| r.len());
        if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != cols) {
            return Err(data_err(
                name,
                format!(
                    "line {}: {} values, but the first line has {cols}",
                    i + 1,
                    r.len()
                ),
            ));
        }
        vec![rows.len(), cols]
    };
    let want: Vec<usize> = if shape.is_empty() {
        vec![1]
    } else {
        shape.clone()
    };
    if found != want {
        return Err(RuntimeError::Shape {
            name: name.clone(),
            expected: shape,
            found,
        });
    }
    let mut a = Array::zeros(spec)?;
    let flat: Vec<(usize, &String)> = if rows.len() == 1 {
        rows[0].iter().map(|s| (1, s)).collect()
    } else {
        rows.iter()
            .enumerate()
            .flat_map(|(i, r)| r.iter().map(move |s| (i + 1, s)))
            .collect()
    };
    let lo = spec.lo.clone();
    let cols = if shape.len() == 2 { shape[1] } else { 1 };
    for (k, (line, s)) in flat.into_iter().enumerate() {
        let v = parse_field(s, spec.ty, name, line)?;
        let point: Vec<i64> = match shape.len() {
            0 => vec![],
            1 => vec![lo[0] + k as i64],
            _ => vec![lo[0] + (k / cols) as i64, lo[1] + (k % cols) as i64],
        };
        a.set(&point, v)?;
    }
    Ok(a)
}

/// Reads a CSV file, checked against `spec`.
pub fn read_csv(path: &Path, spec: &ArraySpec) -> Result<Array, RuntimeError> {
    let text = std::fs::read_to_string(path).map_err(|e| io_err(&spec.name, path, e))?;
    read_csv_str(&text, spec)
}

fn fmt_elem(d: &ArrayData, i: usize) -> String {
    match d {
        ArrayData::Int(v) => v[i].to_string(),
        ArrayData::Float(v) => format!("{:?}", v[i]).replace("NaN", "nan"),
        ArrayData::Bool(v) => v[i].to_string(),
    }
}

/// The CSV text of a 0-, 1- or 2-dimensional array.
pub fn write_csv_string(a: &Array) -> Result<String, RuntimeError> {
    let shape = a.shape();
    if shape.len() > 2 {
        return Err(data_err(
            a.name(),
            format!(
                "CSV holds at most 2 dimensions; {} has {} (use .npy)",
                a.name(),
                shape.len()
            ),
        ));
    }
    let cols = if shape.len() == 2 { shape[1] } else { 1 };
    let mut out = String::new();
    if cols == 0 {
        return Ok(out);
    }
    for (i, _) in (0..a.len()).enumerate() {
        out.push_str(&fmt_elem(a.data(), i));
        out.push(if (i + 1) % cols == 0 { '\n' } else { ',' });
    }
    Ok(out)
}

/// Writes a 0-, 1- or 2-dimensional array to a CSV file.
pub fn write_csv(path: &Path, a: &Array) -> Result<(), RuntimeError> {
    let text = write_csv_string(a)?;
    std::fs::write(path, text).map_err(|e| io_err(a.name(), path, e))
}

/// Reads `.npy` or `.csv` by the file extension (anything but `.csv` is
/// read as `.npy`).
pub fn read_data(path: &Path, spec: &ArraySpec) -> Result<Array, RuntimeError> {
    if is_csv(path) {
        read_csv(path, spec)
    } else {
        read_npy(path, spec)
    }
}

/// Writes `.npy` or `.csv` by the file extension (anything but `.csv` is
/// written as `.npy`).
pub fn write_data(path: &Path, a: &Array) -> Result<(), RuntimeError> {
    if is_csv(path) {
        write_csv(path, a)
    } else {
        write_npy(path, a)
    }
}

fn is_csv(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(ty: ElemType, lo: Vec<i64>, hi: Vec<i64>) -> ArraySpec {
        ArraySpec {
            name: "X".into(),
            ty,
            lo,
            hi,
        }
    }

    #[test]
    fn npy_round_trip_all_types() {
        for ty in [ElemType::Int, ElemType::Float, ElemType::Bool] {
            let s = spec(ty, vec![1, 0], vec![3, 4]);
            let a = Array::random(&s, 9).unwrap();
            let bytes = write_npy_bytes(&a).unwrap();
            let b = read_npy_bytes(&bytes, &s).unwrap();
            assert_eq!(a, b);
        }
        let s = spec(ElemType::Float, vec![], vec![]);
        let a = Array::random(&s, 1).unwrap();
        assert_eq!(
            read_npy_bytes(&write_npy_bytes(&a).unwrap(), &s).unwrap(),
            a
        );
    }

    fn image<T: npyz::AutoSerialize + Clone>(v: &[T], shape: &[usize]) -> Vec<u8> {
        npy_image(v, shape, "t").unwrap()
    }

    #[test]
    fn npy_widening_and_mismatches() {
        let s = spec(ElemType::Int, vec![0], vec![2]);
        let a = read_npy_bytes(&image(&[1i32, -2, 3], &[3]), &s).unwrap();
        assert_eq!(a.data(), &ArrayData::Int(vec![1, -2, 3]));
        let f = spec(ElemType::Float, vec![0], vec![2]);
        let a = read_npy_bytes(&image(&[1.5f32, 2.0, 3.0], &[3]), &f).unwrap();
        assert_eq!(a.data(), &ArrayData::Float(vec![1.5, 2.0, 3.0]));
        match read_npy_bytes(&image(&[1.0f64, 2.0], &[2]), &f) {
            Err(RuntimeError::Shape {
                name,
                expected,
                found,
            }) => {
                assert_eq!(name, "X");
                assert_eq!(expected, vec![3]);
                assert_eq!(found, vec![2]);
            }
            other => panic!("expected a shape error, got {other:?}"),
        }
        match read_npy_bytes(&image(&[1.0f64, 2.0, 3.0], &[3]), &s) {
            Err(RuntimeError::DType { found, .. }) => assert_eq!(found, "float64"),
            other => panic!("expected a dtype error, got {other:?}"),
        }
        assert!(read_npy_bytes(b"not npy", &s).is_err());
    }

    #[test]
    fn npy_fortran_order_is_converted() {
        let s = spec(ElemType::Int, vec![0, 0], vec![1, 2]);
        let mut buf = Vec::new();
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&[2, 3])
            .order(npyz::Order::Fortran)
            .writer(&mut buf)
            .begin_nd()
            .unwrap();
        // Column-major image of [[0, 1, 2], [10, 11, 12]].
        w.extend([0i64, 10, 1, 11, 2, 12]).unwrap();
        w.finish().unwrap();
        let a = read_npy_bytes(&buf, &s).unwrap();
        assert_eq!(a.data(), &ArrayData::Int(vec![0, 1, 2, 10, 11, 12]));
    }

    #[test]
    fn csv_round_trip_and_errors() {
        let s = spec(ElemType::Float, vec![0, 0], vec![2, 1]);
        let a = Array::random(&s, 3).unwrap();
        let t = write_csv_string(&a).unwrap();
        assert_eq!(t.lines().count(), 3);
        assert_eq!(read_csv_str(&t, &s).unwrap(), a);
        let v = spec(ElemType::Int, vec![5], vec![7]);
        let a = read_csv_str("1\n2\n3\n", &v).unwrap();
        assert_eq!(a.get(&[7]).unwrap(), Scalar::Int(3));
        assert_eq!(read_csv_str("1,2,3\n", &v).unwrap(), a);
        assert!(matches!(
            read_csv_str("1\n2\n", &v),
            Err(RuntimeError::Shape { .. })
        ));
        assert!(read_csv_str("1\nx\n3\n", &v).is_err());
        assert!(read_csv_str("1,2\n3\n4\n", &v).is_err());
        let b = spec(ElemType::Bool, vec![0], vec![1]);
        assert_eq!(
            read_csv_str("true\n0\n", &b).unwrap().data(),
            &ArrayData::Bool(vec![true, false])
        );
        let three = spec(ElemType::Int, vec![0, 0, 0], vec![1, 1, 1]);
        assert!(read_csv_str("", &three).is_err());
        assert!(write_csv_string(&Array::zeros(&three).unwrap()).is_err());
    }
}
