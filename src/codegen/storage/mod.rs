//! Storage mapping after scheduling: the local variables of a scanned
//! loop program stored in fewer cells than their bounding box, by
//! successive modulo (Lefebvre & Feautrier 1998; Darte, Schreiber &
//! Villard 2005). A recurrence `X[k, i] = X[k, i-1] + delta[k, i]` read
//! only by its next step keeps one row `X[k]`, updated in place.
//!
//! Owns: the choice of the mapped variables, the legality analysis of a
//! mapping against the schedule (`conflict`: integer emptiness questions
//! to `poly::solver`), the choice of each dimension's modulus, the rewrite
//! of the loop program's accesses and arrays (`rewrite`), and the
//! [`StorageMap`] that records it (printed by `alphac emit`, used for the
//! byte counts of `alphac run --stats`).
//!
//! Must not know about: Cranelift, the source syntax, how the schedule was
//! found (it only reads the schedule rows, the statement domains and the
//! read accesses of `deps`), the loop-program optimizer (`opt` runs after
//! this pass, on the mapped program, and is semantics-preserving).
//!
//! Which variables: only locals (never inputs or outputs: outputs are read
//! back over their full domain by `compile`), with at least one dimension,
//! whose equation *assigns* them (an equation statement, in the scanner
//! `Action::Assign`, whose right-hand side is not a top-level `reduce`).
//! A variable written by accumulations (a top-level reduction accumulates
//! into the variable's own array) is left alone: accumulators are
//! initialized once at function entry, which would be wrong in reused
//! cells. Accumulator arrays of embedded reductions are the scanner's,
//! not variables, and are left alone too.
//!
//! Data-dependent reads (`NWK[w[i], k, i]`): the analysis takes their
//! data-dependent coordinates as any value of the variable's domain. Such
//! a variable gets no modulo dimension (a modulo dimension is kept whole
//! instead: finer, hence still legal), so that its array keeps a domain:
//! the projection of the variable's domain on the kept dimensions, which
//! the JIT checks on the data-dependent accesses. When that domain is not
//! the variable's box (the scanner gave its array a domain predicate), the
//! variable is kept whole: a constraint that ties a kept coordinate to a
//! dropped one (`T[r, a, b]` over `b <= r`, read at `T[e[i], a, b]`) would
//! otherwise go unchecked, and a read outside the domain, a run-time error
//! of the unmapped code, would read a stale cell. With a box domain the
//! check is the original one on the kept coordinates, and a dropped
//! coordinate's bounds are those of an affine index (the access
//! contract). Programs that run without error compute the same values.
//!
//! The mapping `σ(p) = (p_d mod m_d)_d` (a dropped dimension, `m_d = 1`,
//! disappears; a kept one is `p_d` itself): see [`choose_storage`] for the
//! choice and its legality proof. Dimensions are kept whole when the
//! solver cannot decide (errors, the work budget [`STORAGE_WORK`]).

mod conflict;
mod rewrite;

use super::loop_ast::{ArrayId, Dim, Function};
use super::scan::ScanError;
use crate::deps::{StmtKind, SystemSchedule};
use crate::ir::{self, ExprKind, StmtId, VarId, VarKind};
use crate::poly::solver;
use conflict::VarModel;
use std::collections::HashMap;

/// The largest modulus tried for a dimension (beyond it the dimension is
/// kept whole).
pub const MAX_MODULUS: i64 = 4;

/// Simplex work (tableau cells, see `poly::solver::with_work_budget`)
/// allowed for the analysis of one variable; past it the remaining
/// questions answer "may conflict" and the dimensions are kept.
pub const STORAGE_WORK: u64 = 200_000_000;

/// How one dimension of a variable is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DimStorage {
    /// Kept whole (the original extent).
    Keep,
    /// Dropped: every point along it shares a cell (in place).
    Drop,
    /// `x mod m` (`2 <= m <= MAX_MODULUS`): `m` cells along it.
    Modulo(i64),
}

/// The storage chosen for one variable (at least one dimension not kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarStorage {
    pub var: VarId,
    pub name: String,
    /// The variable's dimension names.
    pub dim_names: Vec<String>,
    /// One entry per dimension.
    pub dims: Vec<DimStorage>,
}

impl VarStorage {
    /// The cell `σ(p)` of point `p`: kept coordinates, dropped ones
    /// removed, modulo ones reduced (floor remainder, in `0..m`).
    pub fn cell(&self, p: &[i64]) -> Vec<i64> {
        p.iter()
            .zip(&self.dims)
            .filter_map(|(&x, d)| match d {
                DimStorage::Keep => Some(x),
                DimStorage::Drop => None,
                DimStorage::Modulo(m) => Some(x.rem_euclid(*m)),
            })
            .collect()
    }

    /// `[k, i] -> [k] (in place along i)`, `[t, i] -> [t mod 2, i]`.
    pub fn describe(&self) -> String {
        let mut kept = Vec::new();
        let mut dropped = Vec::new();
        for (name, d) in self.dim_names.iter().zip(&self.dims) {
            match d {
                DimStorage::Keep => kept.push(name.clone()),
                DimStorage::Drop => dropped.push(name.clone()),
                DimStorage::Modulo(m) => kept.push(format!("{name} mod {m}")),
            }
        }
        let mut s = format!("[{}] -> [{}]", self.dim_names.join(", "), kept.join(", "));
        if !dropped.is_empty() {
            s.push_str(&format!(" (in place along {})", dropped.join(", ")));
        }
        s
    }
}

/// A mapped array of a loop program: its storage and its dimensions
/// before the mapping (for the "was" byte counts).
#[derive(Debug, Clone, PartialEq)]
pub struct MappedArray {
    pub array: ArrayId,
    pub storage: VarStorage,
    /// The array's dimensions before mapping.
    pub original: Vec<Dim>,
}

/// What [`map_storage`] did to a loop program.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StorageMap {
    /// The mapped arrays (every other array is as the scanner made it).
    pub arrays: Vec<MappedArray>,
    /// Why nothing was mapped although some variable could have been
    /// (a loop-program form the rewrite does not know).
    pub skipped: Option<String>,
}

impl StorageMap {
    /// The mapping of array `a`, if it was mapped.
    pub fn get(&self, a: ArrayId) -> Option<&MappedArray> {
        self.arrays.iter().find(|m| m.array == a)
    }

    /// One comment line per mapped array, e.g.
    /// `// storage of C_red: [k, i] -> [k] (in place along i)`.
    pub fn comment_lines(&self) -> String {
        let mut out = String::new();
        for m in &self.arrays {
            out.push_str(&format!(
                "// storage of {}: {}\n",
                m.storage.name,
                m.storage.describe()
            ));
        }
        if let Some(why) = &self.skipped {
            out.push_str(&format!("// storage not mapped: {why}\n"));
        }
        out
    }
}

/// The variables that may be mapped (see the module comment): locals with
/// at least one dimension, assigned by their equation (not a top-level
/// reduction), every equation statement of theirs an `Equation`
/// statement.
pub fn candidates(sys: &ir::System, sched: &SystemSchedule) -> Vec<VarId> {
    let stmts = &sched.deps.stmts;
    sys.vars
        .iter()
        .enumerate()
        .filter(|(v, var)| {
            var.kind == VarKind::Local
                && var.domain.n_dims() > 0
                && sys
                    .equation_of(*v)
                    .is_some_and(|eq| !matches!(eq.expr.kind, ExprKind::Reduce(_)))
                && stmts
                    .iter()
                    .filter(|s| s.key.id == StmtId::Equation(*v))
                    .all(|s| s.kind == StmtKind::Equation && s.var == *v)
        })
        .map(|(v, _)| v)
        .collect()
}

/// The storage of every candidate variable ([`candidates`]) under the
/// schedule `sched` of `sys`; only variables with some dimension not kept
/// are returned.
///
/// # The choice (successive modulo)
/// The dimensions are processed one at a time; with `E` the dimensions
/// processed so far, dimension `d` gets the smallest `m_d ∈ 1..=MAX_MODULUS`
/// such that no conflicting pair `(p, p')` (`p` written, then `p'`, then
/// `p` read: see `conflict`) has `p_e = p'_e` for every `e ∈ E` and
/// `|p_d − p'_d| >= m_d`; if there is none, `d` is kept whole. The order:
/// first every dimension that cannot be contracted even when all the
/// others are equal (it will be kept whole in any order; processing it
/// first gives the others its equality), then, repeatedly, the remaining
/// dimension with the smallest modulus given `E` (ties: declared order),
/// or, when none can be contracted, the first remaining one kept whole.
/// A variable with a data-dependent read then has its modulo dimensions
/// kept whole (see the module comment).
///
/// # Legality
/// Claim: for `p != p'` with `σ(p) = σ(p')`, `(p, p')` is not a
/// conflicting pair. Let `d` be the first processed dimension with
/// `p_d != p'_d` (one exists: `p != p'`); then `p_e = p'_e` for every `e`
/// processed before `d`. `d` is not kept whole (`σ` would separate `p` and
/// `p'`), so `m_d <= MAX_MODULUS` was accepted, and `p_d ≡ p'_d (mod m_d)`
/// with `p_d != p'_d` gives `|p_d − p'_d| >= m_d`: exactly the pairs the
/// test for `d` proved non-conflicting. Hence no value is overwritten by
/// another point's value before its last read: with `W` the last write
/// into `σ(p)` before a read `q` of `p` (execution order is time order,
/// ties between different statements taken either way by the conflict
/// set), `W` writes `p` itself — otherwise `W` writes some `p' != p` after
/// the write of `p` that precedes `q` (every writer of `p` precedes its
/// readers: the schedule is legal), a conflict. Keeping a modulo
/// dimension whole instead gives a finer mapping `σ'` (`σ'(p) = σ'(p')`
/// implies `σ(p) = σ(p')`), legal as well.
pub fn choose_storage(sys: &ir::System, sched: &SystemSchedule) -> Vec<VarStorage> {
    let m = sys.params.len();
    let mut out = Vec::new();
    for v in candidates(sys, sched) {
        let var = &sys.vars[v];
        let n = var.domain.n_dims();
        let model = VarModel {
            n,
            m,
            writers: sched
                .deps
                .stmts
                .iter()
                .enumerate()
                .filter(|(_, s)| s.key.id == StmtId::Equation(v))
                .map(|(k, _)| k)
                .collect(),
            reads: sched
                .deps
                .accesses
                .iter()
                .filter(|a| a.var == v && !a.write)
                .collect(),
            sched,
        };
        let data_read = model.reads.iter().any(|a| !a.is_affine());
        let (mut dims, _) = solver::with_work_budget(STORAGE_WORK, || moduli(&model));
        if data_read {
            for d in &mut dims {
                if matches!(d, DimStorage::Modulo(_)) {
                    *d = DimStorage::Keep;
                }
            }
        }
        if dims.iter().any(|d| *d != DimStorage::Keep) {
            out.push(VarStorage {
                var: v,
                name: var.name.clone(),
                dim_names: var.domain.dims().to_vec(),
                dims,
            });
        }
    }
    out
}

/// The per-dimension storage of one variable (see [`choose_storage`]).
fn moduli(model: &VarModel<'_>) -> Vec<DimStorage> {
    let n = model.n;
    let mut cache: HashMap<(u64, usize), Option<i64>> = HashMap::new();
    // The smallest modulus of `d` given the equal dimensions `equal`. A
    // conflict at modulus `m` needs a pair with `|p_d − p'_d| >= m`, a set
    // that shrinks as `m` grows: when `MAX_MODULUS` conflicts, every
    // smaller modulus does, and `d` is kept whole after one test instead
    // of `MAX_MODULUS` (the common case: every candidate dimension of the
    // inference programs' data generators is kept whole; CoxPH's
    // compilation 2.4% fewer instructions, callgrind). When it does not,
    // the first modulus below it that does not conflict is the answer,
    // else `MAX_MODULUS` itself. The choice is the same (`alphac emit` of
    // every system of `examples/` unchanged).
    let mut min_mod = |equal: &[usize], d: usize| -> Option<i64> {
        let mask = equal.iter().fold(0u64, |acc, &e| acc | (1u64 << e.min(63)));
        *cache.entry((mask, d)).or_insert_with(|| {
            if model.may_conflict(equal, d, MAX_MODULUS) {
                return None;
            }
            Some(
                (1..MAX_MODULUS)
                    .find(|&md| !model.may_conflict(equal, d, md))
                    .unwrap_or(MAX_MODULUS),
            )
        })
    };
    let mut out = vec![DimStorage::Keep; n];
    let mut equal: Vec<usize> = Vec::new();
    let mut rest: Vec<usize> = Vec::new();
    for d in 0..n {
        let others: Vec<usize> = (0..n).filter(|&e| e != d).collect();
        if min_mod(&others, d).is_none() {
            equal.push(d);
        } else {
            rest.push(d);
        }
    }
    while !rest.is_empty() {
        let mut best: Option<(i64, usize)> = None;
        for (j, &d) in rest.iter().enumerate() {
            if let Some(md) = min_mod(&equal, d) {
                if best.is_none_or(|(b, _)| md < b) {
                    best = Some((md, j));
                }
            }
        }
        let (j, storage) = match best {
            Some((1, j)) => (j, DimStorage::Drop),
            Some((md, j)) => (j, DimStorage::Modulo(md)),
            None => (0, DimStorage::Keep),
        };
        let d = rest.remove(j);
        out[d] = storage;
        equal.push(d);
    }
    out
}

/// Maps the storage of `f` (the loop program the scanner made from `sys`
/// under `sched`, before `opt`): chooses the storage of every candidate
/// variable ([`choose_storage`]) and rewrites the arrays (a dropped
/// dimension disappears, a modulo dimension becomes `0 ..= m − 1`; the
/// domain is the projection on the kept dimensions, or none with a modulo
/// dimension: the domain is only checked on non-affine accesses, and a
/// variable with a modulo dimension has no data-dependent read, so its
/// only non-affine indices are its `mod` ones, always inside the box) and
/// every access ([`rewrite`]). A modulo dimension whose
/// extent is a constant `<= m` is kept whole instead (never larger). When
/// the program holds a statement or expression form the rewrite does not
/// know, nothing is mapped and the map says why.
pub fn map_storage(
    f: &mut Function,
    sys: &ir::System,
    sched: &SystemSchedule,
) -> Result<StorageMap, ScanError> {
    let mut chosen = Vec::new();
    for mut s in choose_storage(sys, sched) {
        let a = s.var;
        let Some(arr) = f.arrays.get(a) else {
            return Err(ScanError::Internal(format!(
                "no array for variable {}",
                s.name
            )));
        };
        if arr.name != s.name || arr.dims.len() != s.dims.len() {
            return Err(ScanError::Internal(format!(
                "array {} does not match variable {}",
                arr.name, s.name
            )));
        }
        // Read through data and not its box: kept whole, so that the JIT
        // checks the whole domain (see the module comment).
        let data_read = sched
            .deps
            .accesses
            .iter()
            .any(|x| x.var == a && !x.write && !x.is_affine());
        if data_read && arr.domain.is_some() {
            continue;
        }
        for (d, dim) in s.dims.iter_mut().zip(&arr.dims) {
            if let DimStorage::Modulo(m) = *d {
                if dim.extent.is_param_only()
                    && dim.extent.terms.iter().all(|&(_, c)| c == 0)
                    && dim.extent.constant <= m
                {
                    *d = DimStorage::Keep;
                }
            }
        }
        if s.dims.iter().any(|d| *d != DimStorage::Keep) {
            chosen.push(s);
        }
    }
    if chosen.is_empty() {
        return Ok(StorageMap::default());
    }
    let plan: rewrite::Plan = chosen.iter().map(|s| (s.var, s.dims.clone())).collect();
    let Some(body) = rewrite::stmts(&plan, f.body.clone()) else {
        return Ok(StorageMap {
            arrays: Vec::new(),
            skipped: Some("a loop-program form the storage rewrite does not know".into()),
        });
    };
    f.body = body;
    let mut arrays = Vec::new();
    for s in chosen {
        let arr = &mut f.arrays[s.var];
        let original = arr.dims.clone();
        let mut dims = Vec::new();
        for (d, dim) in s.dims.iter().zip(&original) {
            match d {
                DimStorage::Keep => dims.push(dim.clone()),
                DimStorage::Drop => {}
                DimStorage::Modulo(m) => dims.push(Dim {
                    lower: super::loop_ast::Affine::cst(0),
                    extent: super::loop_ast::Affine::cst(*m),
                }),
            }
        }
        arr.dims = dims;
        arr.domain = if s.dims.iter().any(|d| matches!(d, DimStorage::Modulo(_))) {
            None
        } else {
            match &arr.domain {
                Some(dom) => project_dropped(dom, &s.dims),
                None => None,
            }
        };
        arrays.push(MappedArray {
            array: s.var,
            storage: s,
            original,
        });
    }
    Ok(StorageMap {
        arrays,
        skipped: None,
    })
}

/// `dom` with the dropped dimensions projected out (a rational shadow per
/// piece: a superset, which only weakens a check no access of a mapped
/// array needs); `None` when the projection fails.
fn project_dropped(dom: &crate::poly::Set, dims: &[DimStorage]) -> Option<crate::poly::Set> {
    let mut s = dom.clone();
    for (d, st) in dims.iter().enumerate().rev() {
        if *st == DimStorage::Drop {
            s = s.project_out(d, 1).ok()?.0;
        }
    }
    Some(s)
}
