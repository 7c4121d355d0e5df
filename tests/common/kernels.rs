//! Builders of hand-made loop programs for the JIT tests (`jit_kernels`,
//! `jit_constructs`): affine expressions, loops, contexts, arrays, the
//! buffers' element views and deterministic data.

use alphac::codegen::loop_ast::{
    Affine, Array, BinOp, Bound, Dim, Expr, ForLoop, LoopVar, Stmt, Sym,
};
use alphac::ir::types::{ElemType, Set, Space};
use alphac::jit::Buffer;
use alphac::poly::Constraint;

// ---------------------------------------------------------------------------
// Builders.

pub fn p(k: usize) -> Affine {
    Affine::param(k)
}
pub fn v(k: usize) -> Affine {
    Affine::var(LoopVar(k))
}
pub fn c(x: i64) -> Affine {
    Affine::cst(x)
}
/// `a + k·b` for affine `a`, symbol `b`.
pub fn plus(a: Affine, s: Sym, k: i64) -> Affine {
    a.plus(s, k)
}
pub fn pv(k: usize) -> Sym {
    Sym::Param(k)
}
pub fn ev(k: usize) -> Expr {
    Expr::var(LoopVar(k))
}
pub fn load(a: usize, idx: Vec<Expr>) -> Expr {
    Expr::load(a, idx)
}
pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::bin(op, a, b)
}
pub fn for_(var: usize, lo: Bound, hi: Bound, body: Vec<Stmt>) -> Stmt {
    Stmt::For(ForLoop {
        var: LoopVar(var),
        parallel: false,
        lower: lo,
        upper: hi,
        body,
    })
}
/// Constraints `Σ coeffs·p + k >= 0` on the parameters `params`.
pub fn context(params: &[&str], cons: &[(&[i64], i64)]) -> Set {
    let np = params.len();
    let piece = cons
        .iter()
        .map(|(co, k)| {
            let mut row = vec![0; np + 1];
            row[..co.len()].copy_from_slice(co);
            row[np] = *k;
            Constraint::ineq(row)
        })
        .collect();
    Set::from_constraints(Space::set(params, &[] as &[&str]), vec![piece]).unwrap()
}
/// An array with box `[0, ext_k)` per dimension.
pub fn array(name: &str, ty: ElemType, exts: Vec<Affine>) -> Array {
    Array {
        name: name.into(),
        ty,
        dims: exts
            .into_iter()
            .map(|e| Dim {
                lower: c(0),
                extent: e,
            })
            .collect(),
        domain: None,
    }
}
pub fn floats(b: &Buffer) -> &[f64] {
    b.as_float().expect("float buffer")
}
pub fn ints(b: &Buffer) -> &[i64] {
    b.as_int().expect("int buffer")
}
pub fn bools(b: &Buffer) -> &[bool] {
    b.as_bool().expect("bool buffer")
}
/// Deterministic pseudo-random floats in [-1, 1).
pub fn data(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}
