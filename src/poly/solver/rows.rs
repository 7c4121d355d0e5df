//! The coefficient storage of a simplex tableau: rows of one common width
//! in a single flat vector, so that copying a tableau (the searches copy
//! one per node) is one allocation and one copy instead of one per row.
//!
//! Owns: [`Rows`]. Must not know about: what the entries mean (pivoting,
//! the variables of rows and columns are the tableau's).

use std::ops::{Index, IndexMut};

/// Rows of `width` entries each, row `i` at `cells[i·stride ..][.. width]`
/// (`stride >= width`: deleting a column moves the last one into its
/// place and narrows the width; the cells past it are dead until the
/// storage is compacted).
#[derive(Debug)]
pub(crate) struct Rows<T> {
    cells: Vec<T>,
    stride: usize,
    width: usize,
    n: usize,
}

impl<T: Clone + Default> Rows<T> {
    /// No rows, of `width` entries each.
    pub fn new(width: usize) -> Self {
        Rows {
            cells: Vec::new(),
            stride: width,
            width,
            n: 0,
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Room for `k` more rows without moving the storage.
    pub fn reserve(&mut self, k: usize) {
        self.cells.reserve(k.saturating_mul(self.stride));
    }

    /// Append a row (`row.len()` must be the width).
    pub fn push(&mut self, row: Vec<T>) {
        debug_assert_eq!(row.len(), self.width);
        self.cells.extend(row);
        let pad = self.stride - self.width;
        self.cells.extend(std::iter::repeat_n(T::default(), pad));
        self.n += 1;
    }

    /// Remove row `i`, shifting the later ones up.
    pub fn remove(&mut self, i: usize) {
        let s = self.stride;
        self.cells.drain(i * s..(i + 1) * s);
        self.n -= 1;
    }

    /// Keep the rows `i` with `keep[i]` (in order), in one pass (`keep`
    /// has one entry per row).
    pub fn retain(&mut self, keep: &[bool]) {
        debug_assert_eq!(keep.len(), self.n);
        let s = self.stride;
        let mut k = 0;
        for (i, &kept) in keep.iter().enumerate().take(self.n) {
            if kept {
                if k != i {
                    for c in 0..s {
                        self.cells.swap(k * s + c, i * s + c);
                    }
                }
                k += 1;
            }
        }
        self.n = k;
        self.cells.truncate(k * s);
    }

    /// Remove the last row.
    pub fn pop(&mut self) {
        if self.n > 0 {
            self.n -= 1;
            self.cells.truncate(self.n * self.stride);
        }
    }

    /// Replace row `i` by `row` (of the width).
    pub fn set(&mut self, i: usize, row: &[T]) {
        self[i].clone_from_slice(row);
    }

    /// Delete column `j`: the last column takes its place in every row.
    pub fn swap_remove_col(&mut self, j: usize) {
        let last = self.width - 1;
        if j != last {
            for i in 0..self.n {
                self.cells.swap(i * self.stride + j, i * self.stride + last);
            }
        }
        self.width = last;
        if 2 * self.width < self.stride {
            self.compact();
        }
    }

    /// Storage of stride `width` (drops the dead cells).
    fn compact(&mut self) {
        let mut cells = Vec::with_capacity(self.n * self.width);
        for i in 0..self.n {
            cells.extend_from_slice(&self[i]);
        }
        self.cells = cells;
        self.stride = self.width;
    }
}

/// Rows added to a copy fit without moving it: copies are made to add a
/// few rows (a search node's branching rows, a cut).
const SPARE_ROWS: usize = 4;

/// A copy has no dead cells (stride = width).
impl<T: Clone> Clone for Rows<T> {
    fn clone(&self) -> Self {
        let w = self.width;
        let mut cells = Vec::with_capacity((self.n + SPARE_ROWS) * w);
        if self.stride == w {
            cells.extend_from_slice(&self.cells);
        } else {
            for i in 0..self.n {
                cells.extend_from_slice(&self[i]);
            }
        }
        Rows {
            cells,
            stride: w,
            width: w,
            n: self.n,
        }
    }
}

impl<T> Index<usize> for Rows<T> {
    type Output = [T];
    fn index(&self, i: usize) -> &[T] {
        debug_assert!(i < self.n);
        let at = i * self.stride;
        &self.cells[at..at + self.width]
    }
}

impl<T> IndexMut<usize> for Rows<T> {
    fn index_mut(&mut self, i: usize) -> &mut [T] {
        debug_assert!(i < self.n);
        let at = i * self.stride;
        &mut self.cells[at..at + self.width]
    }
}

#[cfg(test)]
mod tests {
    use super::Rows;

    /// Rows after pushes, column deletions (with the compaction they
    /// trigger), removals and replacements read as the same operations
    /// on a vector of vectors.
    #[test]
    fn rows_behave_as_a_vector_of_rows() {
        let mut rows = Rows::new(5);
        let mut model: Vec<Vec<i64>> = Vec::new();
        for i in 0..4 {
            let r: Vec<i64> = (0..5).map(|j| 10 * i + j).collect();
            rows.push(r.clone());
            model.push(r);
        }
        // The rows and a copy of them (compacted when columns were deleted).
        let check = |rows: &Rows<i64>, model: &Vec<Vec<i64>>| {
            for rows in [rows, &rows.clone()] {
                assert_eq!(rows.len(), model.len());
                for (i, r) in model.iter().enumerate() {
                    assert_eq!(&rows[i], r.as_slice());
                }
            }
        };
        for j in [1, 3, 0] {
            rows.swap_remove_col(j);
            for r in model.iter_mut() {
                r.swap_remove(j);
            }
            check(&rows, &model);
            let r: Vec<i64> = (0..model[0].len() as i64).map(|x| -x).collect();
            rows.push(r.clone());
            model.push(r);
            check(&rows, &model);
        }
        rows.remove(1);
        model.remove(1);
        check(&rows, &model);
        let keep: Vec<bool> = (0..model.len()).map(|i| i % 2 == 0).collect();
        rows.retain(&keep);
        model = model
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, r)| r)
            .collect();
        check(&rows, &model);
        rows.set(0, &[7, 8]);
        model[0] = vec![7, 8];
        rows[2][1] = 42;
        model[2][1] = 42;
        rows.pop();
        model.pop();
        check(&rows, &model);
    }
}
