//! Distribution, the last post-pass of the driver: below the innermost
//! level that carries a dependence, statements of different shapes get
//! loop nests of their own.
//!
//! Let `L` be the innermost level at which some dependence piece is
//! carried. Every piece is then carried at a level `<= L`: two dependent
//! instances differ at some level `<= L`, and instances tied at levels
//! `0..=L` are independent. A scalar dimension inserted right after `L`,
//! with a constant per statement, therefore keeps the schedule legal (it
//! changes no difference at levels `<= L`) and only fixes the order of
//! independent instances. What it buys is the code: the scanner gives
//! statements with different constants their own loops below `L`, with
//! their own exact bounds instead of a loop over the union of the
//! statements' ranges with a guard per statement (`t <= K + V + D − 3`
//! around three counts of sizes `K`, `V` and `D`); a lone statement's
//! time-determined iterators (`i = (t − 2) / 2` under a row `2i + 2`) are
//! bound outside its inner loops; and the loop rewrites
//! (`codegen::opt::sparse`) see one statement per loop, so a count
//! updated at one data-selected entry becomes an O(1) update.
//!
//! Statements keep sharing loops (the same constant) when they are alike:
//! below `L` the same rows up to renaming iterators, over the same ranges
//! of those iterators, and unit coefficients in their rows at levels
//! `<= L` (no time-determined iterator to bind). One pass over their common range
//! then does the work of several (LBP's messages, DMM's count tables).
//! Constants are numbered among the statements not already apart at a
//! scalar level `<= L`, readers of values (written at earlier steps)
//! before their writers where possible, else in statement order (see
//! [`readers_first`]).
//!
//! Nothing is inserted when no piece is carried (the statements are then
//! not ordered by anything and keep the scanner's fusion), when `L` is
//! the last level, or when no two statements that may be tied get
//! different constants.
//!
//! Owns: the inserted dimension. Must not know how the rows were found.

use super::check::{is_scalar_level, DepStatus};
use super::error::{ScheduleError, ScheduleResult};
use super::model::Model;
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::HashMap;

/// What must be equal for two statements to keep sharing loops below
/// level `last`, or `None` for a statement that always gets loops of its
/// own (a coefficient other than `0, ±1` at a level `<= last`). Per level
/// below `last`: a row that is one iterator `j` (times a coefficient, plus
/// parameters and a constant) is described by that coefficient, the
/// parameter and constant part, and the domain's constraints on `j` alone
/// (iterator coefficient, parameters, constant; sorted), so that `n[k, a,
/// dd]` and `nt[k, dd, a]` over the same `k` and `a` ranges are alike;
/// any other row by itself.
type Shape = Option<Vec<Vec<Vec<i64>>>>;

fn shape(model: &Model, g: usize, rows: &[Vec<i64>], last: usize) -> Shape {
    let st = &model.statements[g];
    let d = st.n_dims;
    if rows[..=last]
        .iter()
        .any(|r| r[..d].iter().any(|c| c.abs() > 1))
    {
        return None;
    }
    let mut out = Vec::with_capacity(rows.len() - last - 1);
    for r in &rows[last + 1..] {
        let its: Vec<usize> = (0..d).filter(|&j| r[j] != 0).collect();
        let [j] = its[..] else {
            out.push(vec![r.clone()]);
            continue;
        };
        let on_j = |c: &Vec<i64>| (0..d).all(|i| i == j || c[i] == 0) && c[j] != 0;
        let tail = |c: &Vec<i64>, tag: i64| {
            let mut v = vec![tag, c[j]];
            v.extend_from_slice(&c[d..]);
            v
        };
        let mut sig: Vec<Vec<i64>> = st
            .domain
            .eqs
            .iter()
            .filter(|c| on_j(c))
            .map(|c| tail(c, 1))
            .chain(
                st.domain
                    .ineqs
                    .iter()
                    .filter(|c| on_j(c))
                    .map(|c| tail(c, 2)),
            )
            .collect();
        sig.sort();
        sig.dedup();
        sig.insert(0, tail(r, 0));
        out.push(sig);
    }
    Some(out)
}

/// Insert the distributing scalar dimension into `rows` (every statement
/// has the same number of rows) after the innermost level any of
/// `statuses` (the legality check's result for `rows`) is carried at.
/// Returns whether a dimension was inserted.
pub(crate) fn distribute(
    model: &Model,
    rows: &mut [Vec<Vec<i64>>],
    statuses: &[DepStatus],
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
        .filter(|&l| is_scalar_level(model, rows, l))
        .collect();
    let keys: Vec<Vec<i64>> = rows
        .iter()
        .map(|st| scalar.iter().map(|&l| st[l][st[l].len() - 1]).collect())
        .collect();
    let shapes: Vec<Shape> = (0..rows.len())
        .map(|g| shape(model, g, &rows[g], last))
        .collect();
    // Per statement: its constant, shared with the first earlier statement
    // of its class and shape, else the next free one of its class.
    let mut number: Vec<usize> = Vec::with_capacity(rows.len());
    for q in 0..rows.len() {
        let same_class: Vec<usize> = (0..q).filter(|&o| keys[o] == keys[q]).collect();
        let fused = shapes[q].as_ref().and_then(|sq| {
            same_class
                .iter()
                .find(|&&o| shapes[o].as_ref() == Some(sq))
                .map(|&o| number[o])
        });
        let next = same_class.iter().map(|&o| number[o] + 1).max().unwrap_or(0);
        number.push(fused.unwrap_or(next));
    }
    let split =
        (0..rows.len()).any(|q| (0..q).any(|o| keys[o] == keys[q] && number[o] != number[q]));
    if !split {
        return Ok(false);
    }
    let number = readers_first(model, &keys, &number);
    let w_of = |g: usize| model.statements[g].n_dims + model.n_params + 1;
    for (g, (st, q)) in rows.iter_mut().zip(number).enumerate() {
        let mut r = vec![0i64; w_of(g)];
        r[w_of(g) - 1] = i64::try_from(q).map_err(|_| ScheduleError::Overflow)?;
        st.insert(last + 1, r);
    }
    Ok(true)
}

/// The classes' constants renumbered so that, within each group of equal
/// `keys`, a class that reads values another class writes (a dependence
/// piece, carried further out) comes before it where no cycle of such
/// reads forbids it: a topological order of the reader → writer graph's
/// strongly connected components (petgraph), ties and cycles in the
/// given order. Then the last read of a recurrence's previous value comes
/// before the next value is written at the same step, and storage mapping
/// can update it in place (LDA-LW's log weight of token `i − 1`, read at
/// step `i` where the counts of token `i` are written). Any order is
/// legal here: every piece is carried at a level `<= L`.
fn readers_first(model: &Model, keys: &[Vec<i64>], number: &[usize]) -> Vec<usize> {
    let mut graph = DiGraph::<(usize, usize), ()>::new();
    let mut node: HashMap<(usize, usize), NodeIndex> = HashMap::new();
    let mut class_of = Vec::with_capacity(number.len());
    for q in 0..number.len() {
        // The first statement with the same key stands for the key.
        let k = keys.iter().position(|k| *k == keys[q]).unwrap_or(q);
        let c = (k, number[q]);
        class_of.push(c);
        node.entry(c).or_insert_with(|| graph.add_node(c));
    }
    for dep in &model.deps {
        let (w, r) = (class_of[dep.source], class_of[dep.target]);
        if w != r && w.0 == r.0 {
            graph.update_edge(node[&r], node[&w], ());
        }
    }
    // Kahn's algorithm on the strongly connected components, the ready
    // component with the smallest class first.
    let sccs = tarjan_scc(&graph);
    let mut comp = vec![0usize; graph.node_count()];
    for (i, scc) in sccs.iter().enumerate() {
        for &n in scc {
            comp[n.index()] = i;
        }
    }
    let mut indeg = vec![0usize; sccs.len()];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); sccs.len()];
    for e in graph.raw_edges() {
        let (a, b) = (comp[e.source().index()], comp[e.target().index()]);
        if a != b && !succ[a].contains(&b) {
            succ[a].push(b);
            indeg[b] += 1;
        }
    }
    let first = |i: usize| sccs[i].iter().map(|&n| graph[n]).min();
    let mut ready: Vec<usize> = (0..sccs.len()).filter(|&i| indeg[i] == 0).collect();
    let mut order: Vec<(usize, usize)> = Vec::new();
    while let Some(pos) = (0..ready.len()).min_by_key(|&q| first(ready[q])) {
        let i = ready.swap_remove(pos);
        let mut cs: Vec<(usize, usize)> = sccs[i].iter().map(|&n| graph[n]).collect();
        cs.sort_unstable();
        order.extend(cs);
        for &j in &succ[i] {
            indeg[j] -= 1;
            if indeg[j] == 0 {
                ready.push(j);
            }
        }
    }
    class_of
        .iter()
        .map(|c| {
            order
                .iter()
                .filter(|o| o.0 == c.0)
                .position(|o| o == c)
                .unwrap_or(c.1)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poly::solver::System;

    /// `{ [i, j] : 0 <= i < N and 0 <= j < M_j }` over `(i, j, N, M)` where
    /// `M_j` is `N` (`wide`: false) or `M`.
    fn square(wide: bool) -> System {
        let mut s = System::new(4);
        s.add_ineq(vec![1, 0, 0, 0, 0]);
        s.add_ineq(vec![-1, 0, 1, 0, -1]);
        s.add_ineq(vec![0, 1, 0, 0, 0]);
        if wide {
            s.add_ineq(vec![0, -1, 0, 1, -1]);
        } else {
            s.add_ineq(vec![0, -1, 1, 0, -1]);
        }
        s
    }

    fn model(wides: &[bool]) -> Model {
        let mut m = Model::new(2);
        for (q, &w) in wides.iter().enumerate() {
            m.add_statement(&format!("S{q}"), 2, square(w));
        }
        m
    }

    /// Rows `[a·i + c, j]` over `(i, j, N, M, 1)`.
    fn rows(a: i64, c: i64) -> Vec<Vec<i64>> {
        vec![vec![a, 0, 0, 0, c], vec![0, 1, 0, 0, 0]]
    }

    fn inserted(rows: &[Vec<Vec<i64>>]) -> Vec<i64> {
        rows.iter().map(|st| st[1][4]).collect()
    }

    #[test]
    fn different_ranges_get_loops_of_their_own() {
        let m = model(&[false, true]);
        let mut r = vec![rows(1, 0), rows(1, 0)];
        assert!(distribute(&m, &mut r, &[DepStatus::Carried(0)]).unwrap());
        assert_eq!(inserted(&r), vec![0, 1]);
        assert_eq!(r[0][2], vec![0, 1, 0, 0, 0]);
    }

    #[test]
    fn alike_statements_keep_sharing_loops_unless_strided() {
        let m = model(&[false, false, true]);
        let mut r = vec![rows(1, 0), rows(1, 0), rows(1, 0)];
        assert!(distribute(&m, &mut r, &[DepStatus::Carried(0)]).unwrap());
        assert_eq!(inserted(&r), vec![0, 0, 1]);
        // Stride 2 at the outer level: each statement alone.
        let mut r = vec![rows(2, 0), rows(2, 0), rows(2, 1)];
        assert!(distribute(&m, &mut r, &[DepStatus::Carried(0)]).unwrap());
        assert_eq!(inserted(&r), vec![0, 1, 2]);
    }

    #[test]
    fn a_reader_comes_before_the_writer_it_reads_from() {
        // S1 reads S0 (carried at level 0): S1 first at the new level.
        let mut m = model(&[false, true]);
        let mut dep = System::new(6);
        dep.add_eq(vec![1, 0, -1, 0, 0, 0, 1]);
        m.add_dep(0, 1, dep);
        let mut r = vec![rows(1, 0), rows(1, 0)];
        assert!(distribute(&m, &mut r, &[DepStatus::Carried(0)]).unwrap());
        assert_eq!(inserted(&r), vec![1, 0]);
    }

    #[test]
    fn alike_up_to_iterator_order() {
        // S0 over (i, j), rows [i, j]; S1 over (j, i) (same box), rows [i, j]
        // written in its own order.
        let m = model(&[false, false]);
        let mut r = vec![rows(1, 0), vec![vec![0, 1, 0, 0, 0], vec![1, 0, 0, 0, 0]]];
        assert!(!distribute(&m, &mut r, &[DepStatus::Carried(0)]).unwrap());
        // A skewed inner row is compared as it is.
        let mut r = vec![rows(1, 0), vec![vec![1, 0, 0, 0, 0], vec![1, 1, 0, 0, 0]]];
        assert!(distribute(&m, &mut r, &[DepStatus::Carried(0)]).unwrap());
    }

    #[test]
    fn nothing_is_inserted_when_nothing_would_split() {
        let m = model(&[false, false]);
        let orig = vec![rows(1, 0), rows(1, 0)];
        let mut r = orig.clone();
        // Alike statements.
        assert!(!distribute(&m, &mut r, &[DepStatus::Carried(0)]).unwrap());
        // Carried at the last level, or nothing carried.
        let m2 = model(&[false, true]);
        assert!(!distribute(&m2, &mut r, &[DepStatus::Carried(1)]).unwrap());
        assert!(!distribute(&m2, &mut r, &[DepStatus::Empty]).unwrap());
        assert!(!distribute(&m2, &mut r, &[]).unwrap());
        // Already apart at a scalar level.
        let mut apart = vec![
            vec![
                vec![0, 0, 0, 0, 0],
                vec![1, 0, 0, 0, 0],
                vec![0, 1, 0, 0, 0],
            ],
            vec![
                vec![0, 0, 0, 0, 1],
                vec![1, 0, 0, 0, 0],
                vec![0, 1, 0, 0, 0],
            ],
        ];
        let before = apart.clone();
        assert!(!distribute(&m2, &mut apart, &[DepStatus::Carried(1)]).unwrap());
        assert_eq!(apart, before);
        assert_eq!(r, orig);
    }
}
