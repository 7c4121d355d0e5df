//! The raw polyhedral scheduling model: statements with integer polyhedral
//! domains, dependence pieces between statement instances, and affine
//! multidimensional schedules.
//!
//! Layouts (all rows are integer, "variables then constant", as in
//! `poly::solver::System`):
//! * a statement domain is a `System` over `(i_1..i_d, p_1..p_m)`: the
//!   statement's iterators, then the model's parameters;
//! * a dependence piece is a `System` over `(s_1..s_dS, t_1..t_dT, p_1..p_m)`:
//!   the source instance, the target instance, the parameters. It says "the
//!   target instance `T[t]` reads a value produced by `S[s]`", so `S[s]` must be
//!   scheduled strictly before `T[t]`. A union of dependence polyhedra is
//!   given as several pieces. The domains of `S` and `T` are intersected
//!   with the piece by every consumer, so a piece need not repeat them;
//! * a schedule row of a statement is an affine function over
//!   `(i_1..i_d, p_1..p_m, 1)`.
//!
//! Owns: these data types and their validation. Must not know about the
//! `.alpha` language or the IR (phase 2, `deps`, builds models from it).

use super::error::{ScheduleError, ScheduleResult};
use crate::poly::solver::System;

/// A statement: a name, `n_dims` iterators and an integer polyhedral
/// domain over `(iterators, parameters)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    pub name: String,
    pub n_dims: usize,
    /// Domain over `(i_1..i_n_dims, p_1..p_m)`.
    pub domain: System,
}

/// One convex piece of a dependence relation `S[s] -> T[t]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepPiece {
    /// Index of the source statement (the writer).
    pub source: usize,
    /// Index of the target statement (the reader).
    pub target: usize,
    /// Polyhedron over `(s, t, p)`.
    pub poly: System,
}

/// A scheduling problem: parameters, statements and dependence pieces.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Model {
    /// Number of symbolic parameters (shared by every statement).
    pub n_params: usize,
    pub statements: Vec<Statement>,
    pub deps: Vec<DepPiece>,
}

/// Per schedule dimension: what kind of loop it becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DimInfo {
    /// No dependence piece is carried at this dimension: for every piece,
    /// on the instance pairs equal at all earlier dimensions, source and
    /// target get the same value here. The loop is parallel with respect
    /// to the model's dependences. Note: in the augmented program of `deps`
    /// a reduction's accumulation instances have no dependences among each
    /// other (the operator is associative and commutative), so a coincident
    /// dimension may still accumulate into one cell from several iterations:
    /// a parallel *reduction* loop.
    pub coincident: bool,
    /// Every statement's row at this dimension is a constant (no iterator
    /// and no parameter coefficient): a statement-ordering dimension.
    pub scalar: bool,
}

/// A multidimensional affine schedule: statement instance `S[i]` runs at
/// time `(rows[S][0]·(i,p,1), rows[S][1]·(i,p,1), ...)`, ordered
/// lexicographically. All statements have the same number of rows.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Schedule {
    /// `rows[s][k]` has `n_dims(s) + n_params + 1` entries.
    pub rows: Vec<Vec<Vec<i64>>>,
    /// One entry per dimension.
    pub dims: Vec<DimInfo>,
    /// Whether some Pluto band ran out of its work budget (the schedule is
    /// legal and sequential, but may be less optimal than the search
    /// would have found without the budget).
    pub budget_spent: bool,
}

impl Schedule {
    /// Number of schedule dimensions.
    pub fn n_dims(&self) -> usize {
        self.dims.len()
    }
}

impl Model {
    /// An empty model over `n_params` parameters.
    pub fn new(n_params: usize) -> Self {
        Model {
            n_params,
            statements: Vec::new(),
            deps: Vec::new(),
        }
    }

    /// Add a statement; returns its index.
    pub fn add_statement(&mut self, name: &str, n_dims: usize, domain: System) -> usize {
        self.statements.push(Statement {
            name: name.to_string(),
            n_dims,
            domain,
        });
        self.statements.len() - 1
    }

    /// Add a dependence piece `source -> target` over `(s, t, p)`.
    pub fn add_dep(&mut self, source: usize, target: usize, poly: System) {
        self.deps.push(DepPiece {
            source,
            target,
            poly,
        });
    }

    /// Check every row length and statement index.
    pub fn validate(&self) -> ScheduleResult<()> {
        let m = self.n_params;
        for s in &self.statements {
            let n = s.n_dims + m;
            if s.domain.n_vars != n {
                return Err(ScheduleError::InvalidModel(format!(
                    "domain of {} has {} variables, expected {}",
                    s.name, s.domain.n_vars, n
                )));
            }
            check_rows(&s.domain, &s.name)?;
        }
        for (k, d) in self.deps.iter().enumerate() {
            let (Some(s), Some(t)) = (self.statements.get(d.source), self.statements.get(d.target))
            else {
                return Err(ScheduleError::InvalidModel(format!(
                    "dependence piece {k} names an unknown statement"
                )));
            };
            let n = s.n_dims + t.n_dims + m;
            if d.poly.n_vars != n {
                return Err(ScheduleError::InvalidModel(format!(
                    "dependence piece {k} ({} -> {}) has {} variables, expected {}",
                    s.name, t.name, d.poly.n_vars, n
                )));
            }
            check_rows(&d.poly, &format!("dependence piece {k}"))?;
        }
        Ok(())
    }

    /// The dependence piece intersected with the domains of its source and
    /// target, as a system over `(s, t, p)`. Errors (instead of panicking)
    /// on an unknown statement or rows of the wrong length.
    pub fn dep_with_domains(&self, dep: &DepPiece) -> ScheduleResult<System> {
        let m = self.n_params;
        let (Some(s), Some(t)) = (
            self.statements.get(dep.source),
            self.statements.get(dep.target),
        ) else {
            return Err(ScheduleError::InvalidModel(
                "dependence piece names an unknown statement".to_string(),
            ));
        };
        let (ds, dt) = (s.n_dims, t.n_dims);
        let n = ds + dt + m;
        if dep.poly.n_vars != n || s.domain.n_vars != ds + m || t.domain.n_vars != dt + m {
            return Err(ScheduleError::InvalidModel(format!(
                "dependence piece {} -> {} does not match the statement dimensions",
                s.name, t.name
            )));
        }
        check_rows(&dep.poly, "dependence piece")?;
        check_rows(&s.domain, &s.name)?;
        check_rows(&t.domain, &t.name)?;
        let mut sys = dep.poly.clone();
        // Domain row over (i, p, 1) -> (s, t, p, 1).
        let embed = |row: &[i64], off: usize, d: usize| -> Vec<i64> {
            let mut r = vec![0; n + 1];
            r[off..off + d].copy_from_slice(&row[..d]);
            r[ds + dt..ds + dt + m].copy_from_slice(&row[d..d + m]);
            r[n] = row[d + m];
            r
        };
        for r in &s.domain.eqs {
            sys.add_eq(embed(r, 0, ds));
        }
        for r in &s.domain.ineqs {
            sys.add_ineq(embed(r, 0, ds));
        }
        for r in &t.domain.eqs {
            sys.add_eq(embed(r, ds, dt));
        }
        for r in &t.domain.ineqs {
            sys.add_ineq(embed(r, ds, dt));
        }
        Ok(sys)
    }
}

fn check_rows(sys: &System, what: &str) -> ScheduleResult<()> {
    let n = sys.n_vars + 1;
    if sys.eqs.iter().chain(&sys.ineqs).any(|r| r.len() != n) {
        return Err(ScheduleError::InvalidModel(format!(
            "{what}: a constraint row does not have {n} entries"
        )));
    }
    Ok(())
}
