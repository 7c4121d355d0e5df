//! CLooG-style separation: the statements of a group partitioned into
//! parts whose instances are ordered along one time dimension, so that
//! each part gets loops of its own (decided with the integer solver on
//! the time-space projections).
//!
//! Must not know about: loop AST statements, expressions.

use super::time_space::TimeStmt;
use super::*;

/// True when at every point `(t_0..t_{k-1}, p)` of the outer dimensions,
/// every instance of `a` (projection `pa = P_{k+1}`) has a smaller `t_k`
/// than every instance of `b`: no integer `(t_<k, p, x, y)` with
/// `(t_<k, x, p) ∈ pa`, `(t_<k, y, p) ∈ pb` and `x ≥ y`. Sound since
/// the projections contain the instances' time points.
fn before(pa: &System, pb: &System, k: usize) -> R<bool> {
    let n = pa.n_vars;
    // Variables (t, p, y): y is a second copy of t_k.
    let mut s = System::new(n + 1);
    let widen = |r: &[i64], swap: bool| -> Vec<i64> {
        let mut w = Vec::with_capacity(n + 2);
        w.extend_from_slice(&r[..n]);
        w.push(0);
        w.push(r[n]);
        if swap {
            w[n] = w[k];
            w[k] = 0;
        }
        w
    };
    for r in &pa.eqs {
        s.add_eq(widen(r, false));
    }
    for r in &pa.ineqs {
        s.add_ineq(widen(r, false));
    }
    for r in &pb.eqs {
        s.add_eq(widen(r, true));
    }
    for r in &pb.ineqs {
        s.add_ineq(widen(r, true));
    }
    // x − y ≥ 0
    let mut r = vec![0i64; n + 2];
    r[k] = 1;
    r[n] = -1;
    s.add_ineq(r);
    Ok(solver::integer_sample(&s)?.is_none())
}

/// CLooG-style separation at dimension `k`: the statements of `group`
/// partitioned into parts, in an order such that at every point of
/// the outer dimensions every instance of an earlier part has a
/// smaller `t_k` than every instance of a later part ([`Gen::before`]
/// for every pair of statements of different parts). Generating the
/// parts one after the other (each with its own loop bounds) then runs
/// the same instances in the same (schedule) order as one loop over
/// the union. Two statements neither of which is before the other
/// share a part; `None` when there is a single part.
pub(super) fn separate(ts: &[TimeStmt], group: &[usize], k: usize) -> R<Option<Vec<Vec<usize>>>> {
    let n = group.len();
    let mut comp: Vec<usize> = (0..n).collect();
    fn find(c: &mut [usize], mut i: usize) -> usize {
        while c[i] != i {
            c[i] = c[c[i]];
            i = c[i];
        }
        i
    }
    // Directed pairs (i before j) between statements of different parts.
    let mut edges: Vec<(usize, usize)> = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if find(&mut comp, i) == find(&mut comp, j) {
                continue;
            }
            let (pi, pj) = (&ts[group[i]].proj[k + 1], &ts[group[j]].proj[k + 1]);
            if before(pi, pj, k)? {
                edges.push((i, j));
            } else if before(pj, pi, k)? {
                edges.push((j, i));
            } else {
                let (a, b) = (find(&mut comp, i), find(&mut comp, j));
                comp[a.max(b)] = a.min(b);
            }
        }
    }
    // Parts ordered both ways are merged, until the order is acyclic
    // between pairs of parts; then a topological order (earliest
    // statement first among the ready parts).
    loop {
        let mut merged = false;
        let mut dir: HashMap<(usize, usize), ()> = HashMap::new();
        for &(i, j) in &edges {
            let (a, b) = (find(&mut comp, i), find(&mut comp, j));
            if a == b {
                continue;
            }
            if dir.contains_key(&(b, a)) {
                comp[a.max(b)] = a.min(b);
                merged = true;
                break;
            }
            dir.insert((a, b), ());
        }
        if !merged {
            break;
        }
    }
    let roots: Vec<usize> = (0..n).map(|i| find(&mut comp, i)).collect();
    let mut parts: Vec<usize> = roots.clone();
    parts.sort_unstable();
    parts.dedup();
    if parts.len() < 2 {
        return Ok(None);
    }
    let mut succ: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut indeg: HashMap<usize, usize> = parts.iter().map(|&p| (p, 0)).collect();
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    for &(i, j) in &edges {
        let (a, b) = (roots[i], roots[j]);
        if a != b && seen.insert((a, b)) {
            succ.entry(a).or_default().push(b);
            *indeg.entry(b).or_default() += 1;
        }
    }
    let mut order = Vec::new();
    let mut ready: Vec<usize> = parts.iter().copied().filter(|p| indeg[p] == 0).collect();
    while let Some(pos) = (0..ready.len()).min_by_key(|&q| ready[q]) {
        let p = ready.swap_remove(pos);
        order.push(p);
        for &q in succ.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
            let d = indeg.entry(q).or_default();
            *d -= 1;
            if *d == 0 {
                ready.push(q);
            }
        }
    }
    if order.len() != parts.len() {
        // A cycle through three or more parts: no separation.
        return Ok(None);
    }
    Ok(Some(
        order
            .iter()
            .map(|&p| {
                (0..n)
                    .filter(|&i| roots[i] == p)
                    .map(|i| group[i])
                    .collect()
            })
            .collect(),
    ))
}
