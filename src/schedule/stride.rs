//! Minimal stride, the driver's last rewrite of the rows: a level whose
//! rows are all multiples of a common stride `g > 1` (up to their
//! constants) becomes a unit-stride level followed by a scalar one.
//!
//! Let level `k` have rows `θ_S(x) = a_S·(x, p) + c_S` and let
//! `g = gcd_S gcd(a_S) > 1` (the gcd of every statement's iterator and
//! parameter coefficients at `k`; a row without any counts as `0`, which
//! every `g` divides). Write `c_S = g·q_S + r_S` with `0 <= r_S < g`
//! (Euclidean division) and `φ_S(x) = (a_S/g)·(x, p) + q_S`, an integer
//! affine function. Then `θ_S(x) = g·φ_S(x) + r_S`, and because
//! `0 <= r < g`,
//!
//! `θ_S(x) < θ_T(y)  ⇔  (φ_S(x), r_S) <_lex (φ_T(y), r_T)`,
//!
//! with equality exactly when both pairs are equal. Replacing row `k` by
//! the two rows `φ_S` and the constant `r_S` therefore orders every pair
//! of instances as before (the schedule stays legal and sequential, and
//! every later level sees the same ties). When every `r_S` is the same,
//! the constant row orders nothing and is left out.
//!
//! What it buys is the code: under a row `5i + 2` the scanner visits every
//! time `t` and binds `i = (t − 2)/5` with a one-trip integrality loop
//! (`ceild`/`floord`) around the statement, so four of five time points
//! do nothing; under `(i, 2)` the loop runs over `i` itself and the
//! statements of one `i` follow each other in the order of their `r`.
//!
//! Owns: the split of strided levels. Must not know how the rows were
//! found.

use super::error::{ScheduleError, ScheduleResult};
use super::model::Model;
use crate::poly::bounds::gcd;

/// Split every strided level of `rows` (`rows[s][k]` over statement `s`'s
/// iterators, the parameters and a constant) as described in the module
/// comment; returns whether any level changed. Every statement must have
/// the same number of rows.
pub(crate) fn unstride(model: &Model, rows: &mut [Vec<Vec<i64>>]) -> ScheduleResult<bool> {
    let m = model.n_params;
    let n_levels = rows.first().map_or(0, Vec::len);
    let mut changed = false;
    let mut k = 0;
    let mut left = n_levels;
    while left > 0 {
        left -= 1;
        let g = rows.iter().enumerate().fold(0i64, |g, (s, r)| {
            let d = model.statements[s].n_dims;
            r[k][..d + m].iter().fold(g, |g, &c| gcd(g, c))
        });
        if g <= 1 {
            k += 1;
            continue;
        }
        let mut rests = Vec::with_capacity(rows.len());
        for (s, r) in rows.iter_mut().enumerate() {
            let d = model.statements[s].n_dims;
            let row = &mut r[k];
            let c = row[d + m];
            for x in &mut row[..d + m] {
                // g divides every coefficient (it is their gcd's divisor).
                *x /= g;
            }
            row[d + m] = c.div_euclid(g);
            rests.push(c.rem_euclid(g));
        }
        changed = true;
        if rests.iter().all(|&r| r == rests[0]) {
            k += 1;
            continue;
        }
        for (s, r) in rows.iter_mut().enumerate() {
            let w = model.statements[s].n_dims + m + 1;
            let mut row = vec![0; w];
            row[w - 1] = rests[s];
            r.insert(k + 1, row);
        }
        k += 2;
    }
    if rows.iter().any(|r| r.len() != rows[0].len()) {
        return Err(ScheduleError::Internal(
            "statements have different numbers of schedule rows".to_string(),
        ));
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poly::solver::System;

    fn model(dims: &[usize]) -> Model {
        let mut m = Model {
            n_params: 1,
            ..Model::default()
        };
        for (i, &d) in dims.iter().enumerate() {
            m.add_statement(&format!("S{i}"), d, System::new(d + 1));
        }
        m
    }

    #[test]
    fn a_common_stride_becomes_a_unit_level_and_a_scalar_one() {
        // S0[i] -> [5i + 2, 0], S1[i] -> [5i + 7, 0], S2[] -> [5N - 1, 0].
        let m = model(&[1, 1, 0]);
        let mut rows = vec![
            vec![vec![5, 0, 2], vec![0, 0, 0]],
            vec![vec![5, 0, 7], vec![0, 0, 0]],
            vec![vec![5, -1], vec![0, 0]],
        ];
        assert!(unstride(&m, &mut rows).expect("same row counts"));
        assert_eq!(rows[0], vec![vec![1, 0, 0], vec![0, 0, 2], vec![0, 0, 0]]);
        assert_eq!(rows[1], vec![vec![1, 0, 1], vec![0, 0, 2], vec![0, 0, 0]]);
        assert_eq!(rows[2], vec![vec![1, -1], vec![0, 4], vec![0, 0]]);
    }

    #[test]
    fn equal_rests_need_no_scalar_level_and_unit_strides_stay() {
        let m = model(&[1, 2]);
        let mut rows = vec![vec![vec![2, 0, 4]], vec![vec![2, 4, 2, 0]]];
        assert!(unstride(&m, &mut rows).expect("same row counts"));
        assert_eq!(rows, vec![vec![vec![1, 0, 2]], vec![vec![1, 2, 1, 0]]]);
        let mut unit = vec![vec![vec![1, 0, 4]], vec![vec![2, 4, 2, 0]]];
        assert!(!unstride(&m, &mut unit).expect("same row counts"));
        assert_eq!(unit, vec![vec![vec![1, 0, 4]], vec![vec![2, 4, 2, 0]]]);
    }
}
