//! Distribution, the last post-pass of the driver: below the innermost
//! level that carries a dependence, every statement gets a loop nest of
//! its own.
//!
//! Let `L` be the innermost level at which some dependence piece is
//! carried. Every piece is then carried at a level `<= L`: two dependent
//! instances differ at some level `<= L`, and instances tied at levels
//! `0..=L` are independent. A scalar dimension inserted right after `L`,
//! with a distinct constant per statement (in statement order, counted
//! among the statements not already apart at a scalar level `<= L`), therefore
//! keeps the schedule legal (it changes no difference at levels `<= L`)
//! and only fixes the order of independent instances. What it buys is the
//! code: the scanner then gives each statement its own loops below `L`,
//! with its own exact bounds instead of a loop over the union of the
//! statements' ranges with a guard per statement (`t <= K + V + D − 3`
//! around three counts of sizes `K`, `V` and `D`); a lone statement's
//! time-determined iterators are bound outside its inner loops; and the
//! loop rewrites (`codegen::opt::sparse`) see one statement per loop, so a
//! count updated at one data-selected entry becomes an O(1) update.
//!
//! Nothing is inserted when no piece is carried (the statements are then
//! not ordered by anything and keep the scanner's fusion), when `L` is
//! the last level, or when scalar levels `<= L` already set every
//! statement apart.
//!
//! Owns: the inserted dimension. Must not know how the rows were found.

use super::check::DepStatus;
use super::error::{ScheduleError, ScheduleResult};

/// Insert the distributing scalar dimension into `rows` (every statement
/// has the same number of rows) after the innermost level any of
/// `statuses` (the legality check's result for `rows`) is carried at.
/// Returns whether a dimension was inserted.
pub(crate) fn distribute(
    rows: &mut [Vec<Vec<i64>>],
    statuses: &[DepStatus],
    n_params: usize,
) -> ScheduleResult<bool> {
    let n_levels = rows.first().map_or(0, Vec::len);
    let Some(last) = statuses
        .iter()
        .filter_map(|s| match s {
            DepStatus::Carried(l) => Some(*l),
            DepStatus::Empty => None,
        })
        .max()
    else {
        return Ok(false);
    };
    if last + 1 >= n_levels || rows.len() < 2 {
        return Ok(false);
    }
    // Statements already apart at a scalar level `<= last` are never tied:
    // number the statements within each class of equal constants there.
    let scalar: Vec<usize> = (0..=last)
        .filter(|&l| {
            rows.iter().all(|st| {
                let r = &st[l];
                r[..r.len() - 1].iter().all(|x| *x == 0)
            })
        })
        .collect();
    let key = |st: &Vec<Vec<i64>>| -> Vec<i64> {
        scalar.iter().map(|&l| st[l][st[l].len() - 1]).collect()
    };
    let keys: Vec<Vec<i64>> = rows.iter().map(key).collect();
    let mut number = Vec::with_capacity(rows.len());
    for (q, k) in keys.iter().enumerate() {
        number.push(keys[..q].iter().filter(|o| *o == k).count());
    }
    if number.iter().all(|&x| x == 0) {
        return Ok(false);
    }
    for (st, q) in rows.iter_mut().zip(number) {
        let w = st.first().map_or(n_params + 1, Vec::len);
        let mut r = vec![0i64; w];
        r[w - 1] = i64::try_from(q).map_err(|_| ScheduleError::Overflow)?;
        st.insert(last + 1, r);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scalar_dimension_follows_the_innermost_carrying_level() {
        // Two statements over (i, N): rows [i, i] and [i, 0].
        let mut rows = vec![
            vec![vec![1, 0, 0], vec![1, 0, 0]],
            vec![vec![1, 0, 0], vec![0, 0, 0]],
        ];
        let statuses = [DepStatus::Carried(0), DepStatus::Empty];
        assert!(distribute(&mut rows, &statuses, 1).unwrap());
        assert_eq!(rows[0], vec![vec![1, 0, 0], vec![0, 0, 0], vec![1, 0, 0]]);
        assert_eq!(rows[1], vec![vec![1, 0, 0], vec![0, 0, 1], vec![0, 0, 0]]);
    }

    #[test]
    fn statements_apart_at_a_scalar_level_are_numbered_within_their_class() {
        // Rows [0, i, i], [0, i, 0], [1, i, 0]: level 0 is scalar and sets the
        // third statement apart.
        let mut rows = vec![
            vec![vec![0, 0, 0], vec![1, 0, 0], vec![1, 0, 0]],
            vec![vec![0, 0, 0], vec![1, 0, 0], vec![0, 0, 0]],
            vec![vec![0, 0, 1], vec![1, 0, 0], vec![0, 0, 0]],
        ];
        assert!(distribute(&mut rows, &[DepStatus::Carried(1)], 1).unwrap());
        let inserted: Vec<i64> = rows.iter().map(|st| st[2][2]).collect();
        assert_eq!(inserted, vec![0, 1, 0]);
        // Every statement apart already: nothing to insert.
        let mut apart = vec![
            vec![vec![0, 0, 0], vec![1, 0, 0], vec![1, 0, 0]],
            vec![vec![0, 0, 1], vec![1, 0, 0], vec![0, 0, 0]],
        ];
        let before = apart.clone();
        assert!(!distribute(&mut apart, &[DepStatus::Carried(1)], 1).unwrap());
        assert_eq!(apart, before);
    }

    #[test]
    fn nothing_is_inserted_after_the_last_level_or_without_carried_pieces() {
        let orig = vec![
            vec![vec![1, 0, 0], vec![1, 0, 0]],
            vec![vec![1, 0, 0], vec![0, 0, 0]],
        ];
        let mut rows = orig.clone();
        assert!(!distribute(&mut rows, &[DepStatus::Carried(1)], 1).unwrap());
        assert!(!distribute(&mut rows, &[DepStatus::Empty], 1).unwrap());
        assert!(!distribute(&mut rows, &[], 1).unwrap());
        assert_eq!(rows, orig);
    }
}
