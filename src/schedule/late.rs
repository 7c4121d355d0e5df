//! Late placement, a post-pass of the driver: a statement whose values are
//! read long after they are written is moved to just before its reader.
//!
//! A dependence piece `S[s] -> T[t]` is *long* under a schedule when, at
//! some level `l` with the distances at all earlier levels zero, the
//! distance `δ_l = θ_T,l(t) − θ_S,l(s)` is unbounded above on the piece
//! (it grows with a parameter). A value written by `S[s]` must then stay
//! alive for a number of schedule steps that grows with the problem size,
//! and storage mapping (`codegen::storage`) cannot contract the array it
//! lives in. The Feautrier and Pluto objectives (small coefficients, small
//! distances summed over a band) leave such pieces where a statement has
//! no reason to be early or late: a backward running count
//! `R[k, i] = R[k, i − 1] − …` gets the row `i + 2` while its only reader
//! runs at `2i + 3`, so the whole `K × N` table stays live.
//!
//! The move: for a long piece from `S` to another statement `T` whose
//! target instance is an integer affine function of its source,
//! `t = f(s)` (read off the piece's equalities), the candidate rows of `S`
//! replace the row at the piece's first long level `l` by
//! `θ_T,l ∘ f + c` for `c = 0, −1, −2, −3`. A candidate is kept when `S`
//! stays sequential, the schedule stays legal on every piece with `S` at
//! one end, and the number of long pieces with `S` at one end drops.
//! A move changes only the pieces touching `S`, so every accepted move
//! lowers the total number of long pieces and the pass terminates; the
//! driver's final check verifies the whole schedule again.
//!
//! Owns: the long-piece measure and the moves. Must not know how the
//! schedule was found or what the statements compute.

use super::check::{diff_row, legal_on};
use super::error::{ScheduleError, ScheduleResult};
use super::model::{DepPiece, Model, Schedule};
use crate::poly::linalg;
use crate::poly::memo::{memoized, Memo, SystemKey};
use crate::poly::solver::{self, Optimum, System};

/// The offsets tried below the reader's row, nearest first.
const OFFSETS: [i64; 4] = [0, -1, -2, -3];

/// A dependence piece with its domains, when it has an integer point.
struct Piece<'a> {
    dep: &'a DepPiece,
    poly: System,
}

/// The first level at which the piece is long under `rows`, if any:
/// `max δ_l` over the piece restricted to `δ_k = 0 (k < l)` is unbounded.
/// Rational bounds are enough (a finite rational maximum bounds the
/// integer one); an exhausted piece (no pair tied so far) is short. The
/// restricted piece is never empty at a level's start, so a constant
/// `δ_l = c` needs no solver (`c ≠ 0` exhausts the piece, `c = 0` ties all
/// of it); the other levels are memoized per thread on the restricted
/// piece and `δ_l` (the moves try many candidates on the same pieces).
fn long_level(model: &Model, p: &Piece, rows: &[Vec<Vec<i64>>]) -> ScheduleResult<Option<usize>> {
    let (src, tgt) = (&rows[p.dep.source], &rows[p.dep.target]);
    let mut sys = p.poly.clone();
    for l in 0..src.len().min(tgt.len()) {
        let delta = diff_row(model, p.dep, &src[l], &tgt[l])?;
        let n = delta.len() - 1;
        if delta[..n].iter().all(|&c| c == 0) {
            if delta[n] != 0 {
                return Ok(None);
            }
            continue;
        }
        match level_length(&sys, &delta)? {
            Length::Exhausted => return Ok(None),
            Length::Long => return Ok(Some(l)),
            Length::Tied => sys.add_eq(delta),
        }
    }
    Ok(None)
}

/// One level of [`long_level`].
#[derive(Clone, Copy, Debug)]
enum Length {
    /// `δ` is unbounded above on the piece.
    Long,
    /// No pair of the piece has `δ = 0` (or the piece is empty).
    Exhausted,
    /// `δ` is bounded above and some pair has `δ = 0`.
    Tied,
}

type LevelKey = (SystemKey, Vec<i64>);

thread_local! {
    static LEVELS: Memo<LevelKey, Length> = Memo::default();
}

fn level_length(sys: &System, delta: &[i64]) -> ScheduleResult<Length> {
    memoized(
        &LEVELS,
        || {
            (
                (sys.n_vars, sys.eqs.clone(), sys.ineqs.clone()),
                delta.to_vec(),
            )
        },
        || {
            Ok(match solver::rational_max(sys, delta)? {
                Optimum::Empty => Length::Exhausted,
                Optimum::Unbounded => Length::Long,
                Optimum::Value(_) => {
                    let mut tied = sys.clone();
                    tied.add_eq(delta.to_vec());
                    if solver::rational_feasible(&tied)? {
                        Length::Tied
                    } else {
                        Length::Exhausted
                    }
                }
            })
        },
    )
}

/// `t = f(s)` on the piece: one row over `(s, p, 1)` per target iterator,
/// or `None` when the piece's equalities (explicit and implicit) do not
/// determine the target instance as an integer affine function of the
/// source instance and the parameters.
fn target_function(model: &Model, p: &Piece) -> ScheduleResult<Option<Vec<Vec<i64>>>> {
    let ds = model.statements[p.dep.source].n_dims;
    let dt = model.statements[p.dep.target].n_dims;
    let n = p.poly.n_vars;
    let mut eqs = p.poly.eqs.clone();
    for i in solver::implicit_equalities(&p.poly)? {
        eqs.push(p.poly.ineqs[i].clone());
    }
    let targets: Vec<usize> = (ds..ds + dt).collect();
    let Some(fs) = linalg::solve_for(&eqs, n, &targets)? else {
        return Ok(None);
    };
    // Over (s, t, p, 1) with zero t-columns → over (s, p, 1).
    Ok(Some(
        fs.into_iter()
            .map(|f| {
                let mut r = f[..ds].to_vec();
                r.extend_from_slice(&f[ds + dt..]);
                r
            })
            .collect(),
    ))
}

/// `θ ∘ f` for a row `θ` over `(t, p, 1)` and `t = f(s)` (rows over
/// `(s, p, 1)`, `s` with `ds` iterators), plus `c`: a row over `(s, p, 1)`.
fn compose(theta: &[i64], f: &[Vec<i64>], ds: usize, c: i64) -> ScheduleResult<Vec<i64>> {
    let dt = f.len();
    let w = ds + theta.len() - dt;
    let mut out = vec![0i64; w];
    for (j, fj) in f.iter().enumerate() {
        for (o, x) in out.iter_mut().zip(fj) {
            *o = theta[j]
                .checked_mul(*x)
                .and_then(|v| o.checked_add(v))
                .ok_or(ScheduleError::Overflow)?;
        }
    }
    for (o, x) in out[ds..].iter_mut().zip(&theta[dt..]) {
        *o = o.checked_add(*x).ok_or(ScheduleError::Overflow)?;
    }
    let last = w - 1;
    out[last] = out[last].checked_add(c).ok_or(ScheduleError::Overflow)?;
    Ok(out)
}

/// Move statements later where that shortens long dependence pieces (see
/// the module comment). `rows` is a legal, sequential schedule with the
/// same number of rows for every statement; it stays legal and sequential.
pub(crate) fn place_late(model: &Model, rows: &mut [Vec<Vec<i64>>]) -> ScheduleResult<()> {
    let n_levels = rows.first().map_or(0, Vec::len);
    if n_levels == 0 {
        return Ok(());
    }
    let mut pieces: Vec<Option<Piece>> = Vec::with_capacity(model.deps.len());
    for dep in &model.deps {
        let poly = model.dep_with_domains(dep)?;
        pieces.push(solver::integer_sample(&poly)?.map(|_| Piece { dep, poly }));
    }
    let mut long: Vec<Option<usize>> = Vec::with_capacity(pieces.len());
    for p in &pieces {
        long.push(match p {
            Some(p) => long_level(model, p, rows)?,
            None => None,
        });
    }
    let touching = |s: usize| -> Vec<usize> {
        (0..pieces.len())
            .filter(|&k| {
                pieces[k]
                    .as_ref()
                    .is_some_and(|p| p.dep.source == s || p.dep.target == s)
            })
            .collect()
    };
    let mut sched = Schedule {
        rows: rows.to_vec(),
        dims: vec![Default::default(); n_levels],
        budget_spent: false,
    };
    loop {
        let mut moved = false;
        for s in 0..model.statements.len() {
            let mine = touching(s);
            let before = mine.iter().filter(|&&k| long[k].is_some()).count();
            let candidates: Vec<(usize, usize)> = mine
                .iter()
                .filter_map(|&k| {
                    let p = pieces[k].as_ref()?;
                    let l = long[k]?;
                    (p.dep.source == s && p.dep.target != s).then_some((k, l))
                })
                .collect();
            'pieces: for (k, l) in candidates {
                let Some(p) = pieces[k].as_ref() else {
                    continue;
                };
                let Some(f) = target_function(model, p)? else {
                    continue;
                };
                let d = model.statements[s].n_dims;
                for c in OFFSETS {
                    let row = compose(&sched.rows[p.dep.target][l], &f, d, c)?;
                    if row == sched.rows[s][l] {
                        continue;
                    }
                    let old = std::mem::replace(&mut sched.rows[s][l], row);
                    if linalg::rank(&sched.rows[s], d) == d && legal_on(model, &sched, &mine)? {
                        let mut now = Vec::with_capacity(mine.len());
                        for &q in &mine {
                            now.push(match &pieces[q] {
                                Some(pq) => long_level(model, pq, &sched.rows)?,
                                None => None,
                            });
                        }
                        if now.iter().filter(|x| x.is_some()).count() < before {
                            for (&q, v) in mine.iter().zip(now) {
                                long[q] = v;
                            }
                            moved = true;
                            break 'pieces;
                        }
                    }
                    sched.rows[s][l] = old;
                }
            }
        }
        if !moved {
            break;
        }
    }
    rows.clone_from_slice(&sched.rows);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `{ [i] : 0 <= i < N }` over `(i, N)`.
    fn line() -> System {
        let mut s = System::new(2);
        s.add_ineq(vec![1, 0, 0]);
        s.add_ineq(vec![-1, 1, -1]);
        s
    }

    /// `t = s + shift` over `(s, t, N)`.
    fn shifted(shift: i64) -> System {
        let mut s = System::new(3);
        s.add_eq(vec![1, -1, 0, shift]);
        s
    }

    /// A recurrence `A[i] = A[i-1] ...` read by `B[i]`, and optionally `A`
    /// reading `X[i]`; rows `A: i`, `B: 2i + 1`, `X: i`.
    fn model(with_input: bool) -> (Model, Vec<Vec<Vec<i64>>>) {
        let mut m = Model::new(1);
        let a = m.add_statement("A", 1, line());
        let b = m.add_statement("B", 1, line());
        m.add_dep(a, a, shifted(1));
        m.add_dep(a, b, shifted(0));
        let mut rows = vec![vec![vec![1, 0, 0]], vec![vec![2, 0, 1]]];
        if with_input {
            let x = m.add_statement("X", 1, line());
            m.add_dep(x, a, shifted(0));
            rows.push(vec![vec![1, 0, 0]]);
        }
        (m, rows)
    }

    #[test]
    fn a_recurrence_moves_to_just_before_its_reader() {
        let (m, mut rows) = model(false);
        place_late(&m, &mut rows).unwrap();
        // 2i + 1 (c = 0) ties A[i] with B[i]; 2i (c = −1) is the first legal.
        assert_eq!(rows[0], vec![vec![2, 0, 0]]);
        assert_eq!(rows[1], vec![vec![2, 0, 1]]);
        let sched = Schedule {
            rows,
            dims: vec![Default::default(); 1],
            budget_spent: false,
        };
        assert!(matches!(
            super::super::check_schedule(&m, &sched).unwrap(),
            super::super::Legality::Legal(_)
        ));
    }

    #[test]
    fn a_move_that_only_shifts_the_long_piece_is_not_made() {
        // Moving A to 2i would make X -> A long instead of A -> B.
        let (m, mut rows) = model(true);
        let before = rows.clone();
        place_late(&m, &mut rows).unwrap();
        assert_eq!(rows, before);
    }

    #[test]
    fn short_pieces_are_left_alone() {
        let (m, mut rows) = model(false);
        rows[0] = vec![vec![2, 0, 0]];
        rows[1] = vec![vec![2, 0, 1]];
        let before = rows.clone();
        place_late(&m, &mut rows).unwrap();
        assert_eq!(rows, before);
        let p = Piece {
            dep: &m.deps[1],
            poly: m.dep_with_domains(&m.deps[1]).unwrap(),
        };
        assert_eq!(long_level(&m, &p, &rows).unwrap(), None);
        rows[0] = vec![vec![1, 0, 0]];
        assert_eq!(long_level(&m, &p, &rows).unwrap(), Some(0));
    }

    #[test]
    fn compose_substitutes_the_target_function() {
        // θ(t0, t1, N) = 2 t0 + t1 + N + 3 with t0 = s1 - 1, t1 = s0 (s over 2
        // dims): 2 s1 - 2 + s0 + N + 3 + c.
        let theta = [2, 1, 1, 3];
        let f = vec![vec![0, 1, 0, -1], vec![1, 0, 0, 0]];
        assert_eq!(compose(&theta, &f, 2, -1).unwrap(), vec![1, 2, 1, 0]);
        // A reader without iterators: its row, as a row over (s, N, 1).
        assert_eq!(compose(&[1, 5], &[], 1, 0).unwrap(), vec![0, 1, 5]);
    }
}
