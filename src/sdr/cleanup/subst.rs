//! Substitution of a read's index expressions into the right-hand side of
//! the variable it reads: for `X[x] = E(x)` and a read `X[a(c)]` evaluated
//! at a point `c` of the reader's index space, the expression `E(a(c))`
//! evaluated in the reader's space.
//!
//! A read's access `a` has one coordinate per dimension of `X`, each
//! either affine in the reader's indices and the parameters (a
//! `poly::Aff`: every coordinate of an affine read, the `Index` and
//! constant indices of an indirect one) or data-dependent (any other int
//! expression of an indirect read). When every coordinate is affine the
//! substitution is the exact pullback `E ∘ a` (`rewrite::subst::pullback`).
//! Otherwise, in `E`:
//! - an affine value `Index(φ)` becomes `Index(φ_aff) + Σ c_d · e_d`, the
//!   affine coordinates composed into `φ_aff` and each data-dependent
//!   coordinate `e_d` with coefficient `c_d ≠ 0` added as an expression;
//! - a read `Z[ψ(x)]` becomes `Z[ψ(a(c))]`: an affine read when no
//!   coordinate of `ψ ∘ a` involves a data-dependent coordinate, else an
//!   indirect read whose indices are built as above (`Index` expressions
//!   for the affine ones, as lowering builds them);
//! - `case` pieces and restrictions cannot be pulled back through a
//!   data-dependent coordinate: the substitution is refused (`None`), as
//!   for reductions, `categorical` draws, random draws (whose keys are
//!   their evaluation points) and external calls.
//!
//! Integer arithmetic on the new index expressions is checked like any
//! other (an overflow is an error), where `Index` evaluation was checked
//! too; at points where the original read was inside `X`'s domain the
//! values are small (bounded by the domain).

use super::super::rewrite::subst::pullback;
use super::super::SdrError;
use crate::diag::Span;
use crate::ir::*;

/// One coordinate of a read's access (see the module comment).
#[derive(Debug, Clone)]
pub(crate) enum Coord {
    /// Affine in the reader's indices and the parameters.
    Affine(Aff),
    /// Any other int expression of the reader's space.
    Data(Expr),
}

/// The access of a read, coordinate by coordinate, in the reader's index
/// space `space`.
#[derive(Debug, Clone)]
pub(crate) struct Access {
    pub(crate) space: Space,
    pub(crate) coords: Vec<Coord>,
}

impl Access {
    /// The access of the read node `e` evaluated in `space` (`None` when
    /// `e` is not a read).
    pub(crate) fn of_read(e: &Expr, space: &Space) -> Result<Option<Access>, SdrError> {
        let coords = match &e.kind {
            ExprKind::Read { access, .. } => access.affs().into_iter().map(Coord::Affine).collect(),
            ExprKind::IndirectRead { indices, .. } => indices
                .iter()
                .map(|ix| {
                    as_affine(ix, space).map(|a| a.map_or(Coord::Data(ix.clone()), Coord::Affine))
                })
                .collect::<Result<_, _>>()?,
            _ => return Ok(None),
        };
        Ok(Some(Access {
            space: space.clone(),
            coords,
        }))
    }

    /// The access as an affine function when every coordinate is affine.
    pub(crate) fn affine(&self) -> Result<Option<MultiAff>, SdrError> {
        let mut rows = Vec::with_capacity(self.coords.len());
        for c in &self.coords {
            match c {
                Coord::Affine(a) => rows.push(a.row().to_vec()),
                Coord::Data(_) => return Ok(None),
            }
        }
        Ok(Some(MultiAff::from_rows(self.space.clone(), rows)?))
    }

    /// The number of data-dependent coordinates.
    pub(crate) fn n_data(&self) -> usize {
        self.coords
            .iter()
            .filter(|c| matches!(c, Coord::Data(_)))
            .count()
    }

    /// The access over the reader's space extended by one free dimension
    /// per data-dependent coordinate (taking any value): an affine
    /// function `(c, q) ↦ x` whose image over `ctx × Z^k` contains every
    /// point the read may access. Returns the extended space, the function
    /// and the projection `(c, q) ↦ c`.
    pub(crate) fn extended(&self) -> Result<(Space, MultiAff, MultiAff), SdrError> {
        let np = self.space.n_params();
        let nr = self.space.n_dims();
        let k = self.n_data();
        let mut dims = self.space.output.dims.to_vec();
        dims.extend((0..k).map(|q| format!("q{q}'")));
        let ext = Space::set(&self.space.params, &dims);
        let widen = |row: &[i64]| -> Vec<i64> {
            let mut r = row[..np + nr].to_vec();
            r.extend(std::iter::repeat_n(0, k));
            r.push(row[np + nr]);
            r
        };
        let mut q = 0;
        let mut rows = Vec::with_capacity(self.coords.len());
        for c in &self.coords {
            match c {
                Coord::Affine(a) => rows.push(widen(a.row())),
                Coord::Data(_) => {
                    let mut r = vec![0; np + nr + k + 1];
                    r[np + nr + q] = 1;
                    q += 1;
                    rows.push(r);
                }
            }
        }
        let f = MultiAff::from_rows(ext.clone(), rows)?;
        let drop_rows = (0..nr)
            .map(|d| {
                let mut r = vec![0; np + nr + k + 1];
                r[np + d] = 1;
                r
            })
            .collect();
        let drop = MultiAff::from_rows(ext.clone(), drop_rows)?;
        Ok((ext, f, drop))
    }
}

/// `Some(φ)` when the int expression `e` is affine as lowering writes
/// affine indices (`Index(φ)` or an integer constant).
fn as_affine(e: &Expr, space: &Space) -> Result<Option<Aff>, SdrError> {
    Ok(match &e.kind {
        ExprKind::Index(a) => Some(a.with_space(space.clone())?),
        ExprKind::IntConst(v) => Some(Aff::constant(space.clone(), *v)?),
        _ => None,
    })
}

/// `E(a(c))` in the reader's space (see the module comment), or `None`
/// when `e` cannot be moved. `e` lives in the space of `X`'s equation.
pub(crate) fn substitute(e: &Expr, a: &Access) -> Result<Option<Expr>, SdrError> {
    if let Some(g) = a.affine()? {
        return pullback(e, &g);
    }
    data_subst(e, a)
}

/// The substitution with at least one data-dependent coordinate.
fn data_subst(e: &Expr, a: &Access) -> Result<Option<Expr>, SdrError> {
    let kind = match &e.kind {
        ExprKind::IntConst(_) | ExprKind::FloatConst(_) | ExprKind::BoolConst(_) => e.kind.clone(),
        ExprKind::Index(phi) => return row_expr(phi.row(), a, e.span).map(Some),
        ExprKind::Read { var, access } => {
            let mut indices = Vec::with_capacity(access.n_out());
            for row in access.rows() {
                indices.push(row_expr(row, a, e.span)?);
            }
            read_of(*var, indices, &a.space, false)?
        }
        ExprKind::IndirectRead { var, indices } => {
            let mut out = Vec::with_capacity(indices.len());
            for ix in indices {
                let Some(x) = data_subst(ix, a)? else {
                    return Ok(None);
                };
                out.push(x);
            }
            read_of(*var, out, &a.space, true)?
        }
        ExprKind::Unary(op, x) => {
            let Some(x) = data_subst(x, a)? else {
                return Ok(None);
            };
            ExprKind::Unary(*op, Box::new(x))
        }
        ExprKind::Binary(op, x, y) => {
            let (Some(x), Some(y)) = (data_subst(x, a)?, data_subst(y, a)?) else {
                return Ok(None);
            };
            ExprKind::Binary(*op, Box::new(x), Box::new(y))
        }
        ExprKind::If(c, x, y) => {
            let (Some(c), Some(x), Some(y)) =
                (data_subst(c, a)?, data_subst(x, a)?, data_subst(y, a)?)
            else {
                return Ok(None);
            };
            ExprKind::If(Box::new(c), Box::new(x), Box::new(y))
        }
        ExprKind::Builtin(b, xs) => {
            let mut out = Vec::with_capacity(xs.len());
            for x in xs {
                let Some(x) = data_subst(x, a)? else {
                    return Ok(None);
                };
                out.push(x);
            }
            ExprKind::Builtin(*b, out)
        }
        ExprKind::Selection(x) => match x.try_map(|e| data_subst(e, a))? {
            Some(s) => ExprKind::Selection(Box::new(s)),
            None => return Ok(None),
        },
        ExprKind::Case(_)
        | ExprKind::Restrict(..)
        | ExprKind::Reduce(_)
        | ExprKind::External(..)
        | ExprKind::Random(..)
        | ExprKind::Categorical(_) => return Ok(None),
    };
    Ok(Some(Expr {
        kind,
        ty: e.ty,
        span: e.span,
    }))
}

/// A read of `var` at the given indices: affine when every index is an
/// `Index` expression and the read was affine, indirect otherwise (an
/// indirect read keeps its run-time domain check).
fn read_of(
    var: VarId,
    indices: Vec<Expr>,
    space: &Space,
    indirect: bool,
) -> Result<ExprKind, SdrError> {
    if indirect {
        return Ok(ExprKind::IndirectRead { var, indices });
    }
    let rows: Option<Vec<Vec<i64>>> = indices
        .iter()
        .map(|ix| match &ix.kind {
            ExprKind::Index(phi) => Some(phi.row().to_vec()),
            _ => None,
        })
        .collect();
    Ok(match rows {
        Some(rows) => ExprKind::Read {
            var,
            access: MultiAff::from_rows(space.clone(), rows)?,
        },
        None => ExprKind::IndirectRead { var, indices },
    })
}

/// The int expression `φ(a(c))` for a row `φ` over `X`'s space
/// (parameters, dimensions, constant): `Index(φ_aff)` plus the
/// data-dependent terms `c_d · e_d` (see the module comment).
fn row_expr(row: &[i64], a: &Access, span: Span) -> Result<Expr, SdrError> {
    let np = a.space.n_params();
    let nr = a.space.n_dims();
    let nx = a.coords.len();
    let mut aff = Aff::from_parts(a.space.clone(), &row[..np], &vec![0; nr], row[np + nx])?;
    let mut terms: Vec<(i64, &Expr)> = Vec::new();
    for (d, c) in a.coords.iter().enumerate() {
        let k = row[np + d];
        if k == 0 {
            continue;
        }
        match c {
            Coord::Affine(phi) => aff = aff.add_scaled(k, phi)?,
            Coord::Data(x) => terms.push((k, x)),
        }
    }
    let int = |kind: ExprKind| Expr {
        kind,
        ty: ElemType::Int,
        span,
    };
    let zero = aff.row().iter().all(|&c| c == 0);
    let mut acc: Option<Expr> = (!zero || terms.is_empty()).then(|| int(ExprKind::Index(aff)));
    for (k, x) in terms {
        let mag = k
            .checked_abs()
            .ok_or_else(|| SdrError::Internal("index coefficient overflow".into()))?;
        let term = if mag == 1 {
            x.clone()
        } else {
            int(ExprKind::Binary(
                BinOp::Mul,
                Box::new(int(ExprKind::IntConst(mag))),
                Box::new(x.clone()),
            ))
        };
        acc = Some(match acc {
            None if k < 0 => int(ExprKind::Unary(UnOp::Neg, Box::new(term))),
            None => term,
            Some(s) => {
                let op = if k < 0 { BinOp::Sub } else { BinOp::Add };
                int(ExprKind::Binary(op, Box::new(s), Box::new(term)))
            }
        });
    }
    acc.ok_or_else(|| SdrError::Internal("empty index expression".into()))
}
