//! Dense arrays over the bounding box of a variable's domain.
//!
//! # Layout (shared with the JIT)
//! A variable with `n` dimensions and bounding box `lo_k ..= hi_k`
//! (`k = 0..n`, for given parameter values) is stored as one contiguous
//! buffer of `Π_k extent_k` elements, `extent_k = hi_k - lo_k + 1` (0 when
//! the box is empty), in row-major (C) order: the element of point `p` is
//! at offset `Σ_k (p_k - lo_k) · stride_k` with `stride_{n-1} = 1` and
//! `stride_k = stride_{k+1} · extent_{k+1}`. A 0-dimensional variable is a
//! scalar: shape `[]`, one element at offset 0. Element types: `int` is
//! `i64`, `float` is `f64`, `bool` is `bool` (one byte, 0 or 1).
//!
//! Points of the box that are outside the domain hold 0 / 0.0 / false.
//!
//! # Size limit
//! A box may hold at most [`MAX_ELEMENTS`] = 2^31 elements (16 GiB of
//! `f64`); the element count is computed with checked arithmetic, and the
//! allocation itself goes through `try_reserve_exact`, so exceeding the
//! limit or the available memory is an error value, never an abort.

use super::error::RuntimeError;
use super::rng;
use crate::poly::points;
use crate::poly::Set;
pub use crate::vocab::{ElemType, Scalar};
use std::collections::TryReserveError;

/// Largest number of elements of one array (2^31).
pub const MAX_ELEMENTS: u64 = 1 << 31;

/// What an array must look like: its name (for messages), element type
/// and bounding box `lo ..= hi` (one entry per dimension).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArraySpec {
    pub name: String,
    pub ty: ElemType,
    pub lo: Vec<i64>,
    pub hi: Vec<i64>,
}

impl ArraySpec {
    /// The spec of an array named `name` of `ty` elements over `domain`
    /// for given parameter values: the integer bounding box of the domain
    /// (an empty domain gets the empty box `0 ..= -1` in every dimension).
    pub fn of_domain(
        name: &str,
        ty: ElemType,
        domain: &Set,
        params: &[i64],
    ) -> Result<ArraySpec, RuntimeError> {
        let n = domain.n_dims();
        let bx = points::bounding_box(domain, params).map_err(|e| RuntimeError::scan(name, e))?;
        let (lo, hi) = match bx {
            Some(b) => b.into_iter().unzip(),
            None => (vec![0; n], vec![-1; n]),
        };
        Ok(ArraySpec {
            name: name.to_string(),
            ty,
            lo,
            hi,
        })
    }

    /// Extent of each dimension, `max(0, hi - lo + 1)`; an error if one
    /// does not fit (see [`ArraySpec::len`]).
    pub fn shape(&self) -> Result<Vec<usize>, RuntimeError> {
        self.lo
            .iter()
            .zip(&self.hi)
            .map(|(&l, &h)| {
                if h < l {
                    return Ok(0);
                }
                let e = (h as i128) - (l as i128) + 1;
                if e > MAX_ELEMENTS as i128 {
                    Err(self.too_large(format!("extent {e} exceeds {MAX_ELEMENTS}")))
                } else {
                    // e <= 2^31 fits in usize on every supported target.
                    Ok(e as usize)
                }
            })
            .collect()
    }

    /// Number of elements `Π extents` (1 for a scalar), checked against
    /// [`MAX_ELEMENTS`].
    pub fn len(&self) -> Result<usize, RuntimeError> {
        let mut n: u64 = 1;
        for e in self.shape()? {
            n = n
                .checked_mul(e as u64)
                .filter(|&n| n <= MAX_ELEMENTS)
                .ok_or_else(|| self.too_large(format!("more than {MAX_ELEMENTS} elements")))?;
        }
        Ok(n as usize)
    }

    /// True when the box holds no element.
    pub fn is_empty(&self) -> Result<bool, RuntimeError> {
        Ok(self.len()? == 0)
    }

    /// `Ok(())` when `found` is the spec's element type, else a `DType`
    /// error naming the array.
    pub fn check_type(&self, found: ElemType) -> Result<(), RuntimeError> {
        if found != self.ty {
            return Err(RuntimeError::DType {
                name: self.name.clone(),
                expected: self.ty.name().to_string(),
                found: found.name().to_string(),
            });
        }
        Ok(())
    }

    /// Checks that `a` fits the spec: its element type (`DType` error) and
    /// its shape (`Shape` error); the box's lower corner may differ.
    pub fn check_array(&self, a: &Array) -> Result<(), RuntimeError> {
        let shape = self.shape()?;
        self.check_type(a.ty())?;
        if a.shape() != shape.as_slice() {
            return Err(RuntimeError::Shape {
                name: self.name.clone(),
                expected: shape,
                found: a.shape().to_vec(),
            });
        }
        Ok(())
    }

    fn too_large(&self, detail: String) -> RuntimeError {
        RuntimeError::TooLarge {
            name: self.name.clone(),
            lo: self.lo.clone(),
            hi: self.hi.clone(),
            detail,
        }
    }
}

/// The element buffer of an array (row-major, see the module comment).
#[derive(Debug, Clone, PartialEq)]
pub enum ArrayData {
    Int(Vec<i64>),
    Float(Vec<f64>),
    Bool(Vec<bool>),
}

impl ArrayData {
    /// `len` zeros (0 / 0.0 / false) of type `ty`; an error when the
    /// allocator refuses them (instead of aborting the process).
    pub fn try_zeros(ty: ElemType, len: usize) -> Result<ArrayData, TryReserveError> {
        fn filled<T: Clone>(len: usize, x: T) -> Result<Vec<T>, TryReserveError> {
            let mut v = Vec::new();
            v.try_reserve_exact(len)?;
            v.resize(len, x);
            Ok(v)
        }
        Ok(match ty {
            ElemType::Int => ArrayData::Int(filled(len, 0)?),
            ElemType::Float => ArrayData::Float(filled(len, 0.0)?),
            ElemType::Bool => ArrayData::Bool(filled(len, false)?),
        })
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            ArrayData::Int(v) => v.len(),
            ArrayData::Float(v) => v.len(),
            ArrayData::Bool(v) => v.len(),
        }
    }
    /// True when there is no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Element type.
    pub fn ty(&self) -> ElemType {
        match self {
            ArrayData::Int(_) => ElemType::Int,
            ArrayData::Float(_) => ElemType::Float,
            ArrayData::Bool(_) => ElemType::Bool,
        }
    }
    /// The int elements; `None` for another element type.
    pub fn as_int(&self) -> Option<&[i64]> {
        match self {
            ArrayData::Int(v) => Some(v),
            _ => None,
        }
    }
    /// The float elements; `None` for another element type.
    pub fn as_float(&self) -> Option<&[f64]> {
        match self {
            ArrayData::Float(v) => Some(v),
            _ => None,
        }
    }
    /// The bool elements; `None` for another element type.
    pub fn as_bool(&self) -> Option<&[bool]> {
        match self {
            ArrayData::Bool(v) => Some(v),
            _ => None,
        }
    }
}

impl From<Vec<i64>> for ArrayData {
    fn from(v: Vec<i64>) -> ArrayData {
        ArrayData::Int(v)
    }
}
impl From<Vec<f64>> for ArrayData {
    fn from(v: Vec<f64>) -> ArrayData {
        ArrayData::Float(v)
    }
}
impl From<Vec<bool>> for ArrayData {
    fn from(v: Vec<bool>) -> ArrayData {
        ArrayData::Bool(v)
    }
}

/// A dense array over a bounding box (see the module comment for the
/// layout).
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    name: String,
    lo: Vec<i64>,
    shape: Vec<usize>,
    data: ArrayData,
}

impl Array {
    /// The array of `spec` with every element 0 / 0.0 / false.
    pub fn zeros(spec: &ArraySpec) -> Result<Array, RuntimeError> {
        let n = spec.len()?;
        let data = ArrayData::try_zeros(spec.ty, n)
            .map_err(|e| spec.too_large(format!("allocation failed: {e}")))?;
        Ok(Array {
            name: spec.name.clone(),
            lo: spec.lo.clone(),
            shape: spec.shape()?,
            data,
        })
    }

    /// An array of `spec` holding `data` (row-major); an error when the
    /// element type or the number of elements differs from the spec.
    pub fn from_data(spec: &ArraySpec, data: ArrayData) -> Result<Array, RuntimeError> {
        let shape = spec.shape()?;
        spec.check_type(data.ty())?;
        if data.len() != spec.len()? {
            return Err(RuntimeError::Shape {
                name: spec.name.clone(),
                expected: shape,
                found: vec![data.len()],
            });
        }
        Ok(Array {
            name: spec.name.clone(),
            lo: spec.lo.clone(),
            shape,
            data,
        })
    }

    /// A demo input for `spec`: every element is a pure function of
    /// `(seed, name, flat offset)` through [`rng`]: floats uniform in
    /// `[0, 1)`, ints uniform in `0..10`, bools fair coins. The call site
    /// is `(fnv1a64(name), 0)` and the iteration point is `[offset]`.
    pub fn random(spec: &ArraySpec, seed: u64) -> Result<Array, RuntimeError> {
        let mut a = Array::zeros(spec)?;
        let site = rng::fnv1a64(spec.name.as_bytes());
        let draw = |i: usize| rng::Stream::new(seed, site, 0, &[i as i64]).uniform(0);
        match &mut a.data {
            ArrayData::Int(v) => {
                for (i, x) in v.iter_mut().enumerate() {
                    // uniform in [0,1) times 10 is in [0, 10): the cast is exact.
                    *x = (draw(i) * 10.0).floor() as i64;
                }
            }
            ArrayData::Float(v) => {
                for (i, x) in v.iter_mut().enumerate() {
                    *x = draw(i);
                }
            }
            ArrayData::Bool(v) => {
                for (i, x) in v.iter_mut().enumerate() {
                    *x = draw(i) < 0.5;
                }
            }
        }
        Ok(a)
    }

    /// The name the array was created for (used in messages).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Lower corner of the bounding box.
    pub fn lo(&self) -> &[i64] {
        &self.lo
    }
    /// Upper corner of the bounding box (`lo + extent - 1`).
    pub fn hi(&self) -> Vec<i64> {
        self.lo
            .iter()
            .zip(&self.shape)
            .map(|(&l, &e)| l.saturating_add(e as i64).saturating_sub(1))
            .collect()
    }
    /// Extents of the box.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// Element type.
    pub fn ty(&self) -> ElemType {
        self.data.ty()
    }
    /// The row-major element buffer.
    pub fn data(&self) -> &ArrayData {
        &self.data
    }
    /// The int buffer, mutable (its length cannot change); `None` for
    /// another element type.
    pub fn ints_mut(&mut self) -> Option<&mut [i64]> {
        match &mut self.data {
            ArrayData::Int(v) => Some(v),
            _ => None,
        }
    }
    /// The float buffer, mutable; `None` for another element type.
    pub fn floats_mut(&mut self) -> Option<&mut [f64]> {
        match &mut self.data {
            ArrayData::Float(v) => Some(v),
            _ => None,
        }
    }
    /// The bool buffer, mutable; `None` for another element type.
    pub fn bools_mut(&mut self) -> Option<&mut [bool]> {
        match &mut self.data {
            ArrayData::Bool(v) => Some(v),
            _ => None,
        }
    }
    /// Row-major strides in elements: `stride_{n-1} = 1`,
    /// `stride_k = stride_{k+1} · extent_{k+1}`.
    pub fn strides(&self) -> Vec<usize> {
        let n = self.shape.len();
        let mut st = vec![1usize; n];
        for k in (0..n.saturating_sub(1)).rev() {
            // Products of extents are bounded by len() <= MAX_ELEMENTS.
            st[k] = st[k + 1] * self.shape[k + 1];
        }
        st
    }
    /// Consumes the array, returning its buffer.
    pub fn into_data(self) -> ArrayData {
        self.data
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }
    /// True when the array has no element.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    /// Renames the array (messages only; the layout is unchanged).
    pub fn with_name(mut self, name: impl Into<String>) -> Array {
        self.name = name.into();
        self
    }
    /// Moves the box to a new lower corner (same shape and buffer).
    pub fn with_lo(mut self, lo: Vec<i64>) -> Array {
        if lo.len() == self.lo.len() {
            self.lo = lo;
        }
        self
    }

    /// Row-major offset of `point`: `Σ_k (p_k - lo_k)·stride_k`; an error
    /// when the point has the wrong dimension or is outside the box.
    pub fn offset(&self, point: &[i64]) -> Result<usize, RuntimeError> {
        self.offset_in_box_at(&self.lo, point)
    }

    /// The offset of `point` in this array's buffer as if its box started
    /// at `lo` (same shape): `Σ_k (p_k - lo_k)·stride_k`, without moving
    /// the array (see [`Array::with_lo`]).
    pub fn offset_in_box_at(&self, lo: &[i64], point: &[i64]) -> Result<usize, RuntimeError> {
        if point.len() != self.lo.len() || lo.len() != self.lo.len() {
            return Err(RuntimeError::Arity {
                name: self.name.clone(),
                point: point.to_vec(),
                expected: self.lo.len(),
                found: point.len(),
            });
        }
        let mut off: usize = 0;
        for k in 0..point.len() {
            let d = (point[k] as i128) - (lo[k] as i128);
            if d < 0 || d >= self.shape[k] as i128 {
                return Err(RuntimeError::OutOfBounds {
                    name: self.name.clone(),
                    point: point.to_vec(),
                    lo: lo.to_vec(),
                    hi: lo
                        .iter()
                        .zip(&self.shape)
                        .map(|(&l, &e)| l.saturating_add(e as i64).saturating_sub(1))
                        .collect(),
                });
            }
            // 0 <= d < extent <= 2^31 and the total size is <= 2^31, so
            // neither the cast nor the arithmetic can overflow.
            off = off * self.shape[k] + d as usize;
        }
        Ok(off)
    }

    /// The element at `point` (bounds-checked).
    pub fn get(&self, point: &[i64]) -> Result<Scalar, RuntimeError> {
        let o = self.offset(point)?;
        Ok(self.get_flat(o))
    }

    /// The element at a row-major offset, which must be `< len()`.
    fn get_flat(&self, o: usize) -> Scalar {
        match &self.data {
            ArrayData::Int(v) => Scalar::Int(v[o]),
            ArrayData::Float(v) => Scalar::Float(v[o]),
            ArrayData::Bool(v) => Scalar::Bool(v[o]),
        }
    }

    /// Writes `value` at `point` (bounds- and type-checked).
    pub fn set(&mut self, point: &[i64], value: Scalar) -> Result<(), RuntimeError> {
        let o = self.offset(point)?;
        match (&mut self.data, value) {
            (ArrayData::Int(v), Scalar::Int(x)) => v[o] = x,
            (ArrayData::Float(v), Scalar::Float(x)) => v[o] = x,
            (ArrayData::Bool(v), Scalar::Bool(x)) => v[o] = x,
            (d, x) => {
                return Err(RuntimeError::ElemType {
                    name: self.name.clone(),
                    expected: d.ty().name(),
                    found: x.ty().name(),
                })
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(lo: Vec<i64>, hi: Vec<i64>) -> ArraySpec {
        ArraySpec {
            name: "A".into(),
            ty: ElemType::Int,
            lo,
            hi,
        }
    }

    #[test]
    fn row_major_offsets() {
        let a = Array::zeros(&spec(vec![1, -2], vec![3, 2])).unwrap();
        assert_eq!(a.shape(), &[3, 5]);
        assert_eq!(a.offset(&[1, -2]).unwrap(), 0);
        assert_eq!(a.offset(&[1, -1]).unwrap(), 1);
        assert_eq!(a.offset(&[2, -2]).unwrap(), 5);
        assert_eq!(a.offset(&[3, 2]).unwrap(), 14);
        assert!(a.offset(&[4, 0]).is_err());
        assert!(a.offset(&[1, 3]).is_err());
        assert!(a.offset(&[1]).is_err());
        assert_eq!(a.strides(), vec![5, 1]);
        for p in [[1i64, -2], [2, 0], [3, 2]] {
            let o: i64 = p
                .iter()
                .zip(a.lo())
                .zip(a.strides())
                .map(|((x, l), s)| (x - l) * s as i64)
                .sum();
            assert_eq!(a.offset(&p).unwrap() as i64, o);
        }
    }

    #[test]
    fn mutable_buffers_keep_their_type() {
        let mut a = Array::zeros(&spec(vec![0], vec![2])).unwrap();
        assert!(a.floats_mut().is_none() && a.bools_mut().is_none());
        a.ints_mut().unwrap()[1] = 5;
        assert_eq!(a.get(&[1]).unwrap(), Scalar::Int(5));
    }

    #[test]
    fn get_set_and_type_errors() {
        let mut a = Array::zeros(&spec(vec![0], vec![4])).unwrap();
        a.set(&[2], Scalar::Int(7)).unwrap();
        assert_eq!(a.get(&[2]).unwrap(), Scalar::Int(7));
        assert_eq!(a.get(&[3]).unwrap(), Scalar::Int(0));
        assert!(a.set(&[2], Scalar::Float(1.0)).is_err());
        assert!(a.set(&[5], Scalar::Int(1)).is_err());
    }

    #[test]
    fn scalar_and_empty_boxes() {
        let s = Array::zeros(&spec(vec![], vec![])).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s.shape(), &[] as &[usize]);
        assert_eq!(s.get(&[]).unwrap(), Scalar::Int(0));
        let e = Array::zeros(&spec(vec![0, 0], vec![-1, 5])).unwrap();
        assert_eq!(e.len(), 0);
        assert_eq!(e.shape(), &[0, 6]);
    }

    #[test]
    fn size_limits_are_errors() {
        let big = spec(vec![0, 0], vec![1 << 20, 1 << 20]);
        assert!(matches!(big.len(), Err(RuntimeError::TooLarge { .. })));
        let huge = spec(vec![i64::MIN], vec![i64::MAX]);
        assert!(matches!(huge.len(), Err(RuntimeError::TooLarge { .. })));
        assert!(Array::zeros(&huge).is_err());
    }

    #[test]
    fn random_is_deterministic() {
        let s = ArraySpec {
            ty: ElemType::Float,
            ..spec(vec![0], vec![99])
        };
        let a = Array::random(&s, 5).unwrap();
        assert_eq!(a, Array::random(&s, 5).unwrap());
        assert_ne!(a, Array::random(&s, 6).unwrap());
    }
}
