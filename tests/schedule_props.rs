//! Property tests of the schedulers against brute-force enumeration.
//!
//! Random programs: 1–3 statements of 1–2 dimensions over boxes
//! `0 <= i_k < N` (with `N <= 5` in half of the cases, so that the
//! loop-coalescing bounds kick in), and random uniform or affine dependence
//! pieces that respect a hidden random order: each piece is restricted to
//! instance pairs ordered by a hidden affine schedule at a random level
//! (equal before it, strictly increasing at it). Such programs are
//! schedulable; both schedulers must return a schedule that (1) the checker
//! accepts, (2) is sequential, and (3) orders every dependence pair of the
//! pieces lexicographically when enumerated for N = 1..4. Adding the
//! reverse of one piece creates a true instance-level cycle: the result
//! must be the typed cycle error naming both statements.

use alphac::poly::solver::{self, System};
use alphac::schedule::{
    check_schedule, is_sequential, schedule, Legality, Model, Schedule, ScheduleError, Scheduler,
};
use proptest::prelude::*;

/// A target dimension of a dependence map: `Some((coefs, c))` means
/// `t_k = coefs·s + c`, `None` leaves `t_k` free.
type MapRow = Option<(Vec<i64>, i64)>;

#[derive(Clone, Debug)]
struct Spec {
    dims: Vec<usize>,
    bounded: bool,
    /// Hidden schedule: per statement, 2 rows over its iterators + constant.
    hidden: Vec<Vec<Vec<i64>>>,
    /// Dependences: (src, tgt, map rows, level). A map row for target dim k
    /// is `Some((coefs over source iterators, constant))` (t_k = coefs·s +
    /// constant) or `None` (t_k free).
    deps: Vec<(usize, usize, Vec<MapRow>, usize)>,
    /// Per statement, an equality added to its box domain: 0 none, 1 the
    /// last iterator equal to the first plus 0 or 1 (`2 + c`: plus `c`;
    /// two-iterator statements only), 3 the first iterator equal to
    /// `N − 1`. The scheduler needs full rank only modulo such
    /// equalities and leaves determined iterators out of its bands.
    flat: Vec<u8>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (1usize..=3, any::<bool>()).prop_flat_map(|(ns, bounded)| {
        proptest::collection::vec(1usize..=2, ns).prop_flat_map(move |dims| {
            let hidden = dims
                .iter()
                .map(|&d| proptest::collection::vec(proptest::collection::vec(-1i64..=1, d + 1), 2))
                .collect::<Vec<_>>();
            let dims2 = dims.clone();
            let dep = (0..ns, 0..ns, 0usize..3).prop_flat_map(move |(s, t, level)| {
                let (ds, dt) = (dims2[s], dims2[t]);
                let row = proptest::option::weighted(
                    0.85,
                    (proptest::collection::vec(-1i64..=1, ds), -2i64..=2),
                );
                proptest::collection::vec(row, dt).prop_map(move |m| (s, t, m, level))
            });
            let flat = proptest::collection::vec(0u8..=4, ns);
            (hidden, proptest::collection::vec(dep, 1..=4), flat).prop_map({
                let dims = dims.clone();
                move |(hidden, deps, flat)| Spec {
                    dims: dims.clone(),
                    bounded,
                    hidden,
                    deps,
                    flat,
                }
            })
        })
    })
}

/// Domain of a statement over (i, N): 0 <= i_k < N, N >= 1 (and N <= 5).
fn domain(d: usize, bounded: bool) -> System {
    let n = d + 1;
    let mut s = System::new(n);
    for k in 0..d {
        let mut r = vec![0; n + 1];
        r[k] = 1;
        s.add_ineq(r);
        let mut r = vec![0; n + 1];
        r[k] = -1;
        r[d] = 1;
        r[n] = -1;
        s.add_ineq(r);
    }
    let mut r = vec![0; n + 1];
    r[d] = 1;
    r[n] = -1;
    s.add_ineq(r);
    if bounded {
        let mut r = vec![0; n + 1];
        r[d] = -1;
        r[n] = 5;
        s.add_ineq(r);
    }
    s
}

/// The hidden row `k` of statement `st` as a difference row over (s, t, N, 1)
/// for a piece from `src` (dims ds) to `tgt` (dims dt).
fn hidden_diff(spec: &Spec, src: usize, tgt: usize, k: usize) -> Vec<i64> {
    let (ds, dt) = (spec.dims[src], spec.dims[tgt]);
    let n = ds + dt + 1;
    let mut r = vec![0; n + 1];
    let hs = &spec.hidden[src][k];
    let ht = &spec.hidden[tgt][k];
    for j in 0..ds {
        r[j] -= hs[j];
    }
    for j in 0..dt {
        r[ds + j] += ht[j];
    }
    // Constant: statement index at the last hidden level keeps statements
    // of equal times apart.
    r[n] = ht[dt] - hs[ds];
    r
}

/// The piece `src -> tgt` for the map and hidden level `level`.
fn piece(spec: &Spec, src: usize, tgt: usize, map: &[MapRow], level: usize) -> System {
    let (ds, dt) = (spec.dims[src], spec.dims[tgt]);
    let n = ds + dt + 1;
    let mut p = System::new(n);
    for (k, row) in map.iter().enumerate() {
        if let Some((coefs, c)) = row {
            let mut r = vec![0; n + 1];
            r[ds + k] = 1;
            for j in 0..ds {
                r[j] = -coefs[j];
            }
            r[n] = -c;
            p.add_eq(r);
        }
    }
    // Hidden order: levels < level tied, level strictly increasing; the
    // "level 2" case means: tied on both hidden rows, ordered by the
    // statement index (only possible from a lower to a higher index).
    for k in 0..level.min(2) {
        p.add_eq(hidden_diff(spec, src, tgt, k));
    }
    if level < 2 {
        let mut r = hidden_diff(spec, src, tgt, level);
        r[n] -= 1;
        p.add_ineq(r);
    } else if src >= tgt {
        let mut r = vec![0; n + 1];
        r[n] = -1;
        p.add_ineq(r);
    }
    p
}

/// The model; each dependence takes the first hidden level (from its own
/// on, cyclically) that leaves it non-empty, so that most pieces matter.
fn build(spec: &Spec) -> Model {
    let mut m = Model::new(1);
    for (k, &d) in spec.dims.iter().enumerate() {
        let mut dom = domain(d, spec.bounded);
        // Over (i, N, 1).
        let mut eq = vec![0; d + 2];
        match spec.flat[k] {
            c @ (1 | 2) if d == 2 => {
                eq[1] = 1;
                eq[0] = -1;
                eq[3] = -i64::from(c - 1);
            }
            3 => {
                eq[0] = 1;
                eq[d] = -1;
                eq[d + 1] = 1;
            }
            _ => {}
        }
        if eq.iter().any(|&x| x != 0) {
            dom.add_eq(eq);
        }
        m.add_statement(&format!("S{k}"), d, dom);
    }
    for (src, tgt, map, level) in &spec.deps {
        let mut chosen = piece(spec, *src, *tgt, map, *level);
        for l in 1..3 {
            let cand = m.clone();
            let mut cand = cand;
            cand.add_dep(*src, *tgt, chosen.clone());
            let last = cand.deps.len() - 1;
            if nonempty(&cand.dep_with_domains(&cand.deps[last]).unwrap()) {
                break;
            }
            chosen = piece(spec, *src, *tgt, map, (*level + l) % 3);
        }
        m.add_dep(*src, *tgt, chosen);
    }
    m
}

fn eval(row: &[i64], it: &[i64], n: i64) -> i64 {
    let d = it.len();
    row[..d].iter().zip(it).map(|(a, b)| a * b).sum::<i64>() + row[d] * n + row[d + 1]
}

fn boxes(d: usize, n: i64) -> Vec<Vec<i64>> {
    let mut pts = vec![vec![]];
    for _ in 0..d {
        pts = pts
            .into_iter()
            .flat_map(|p| {
                (0..n).map(move |v| {
                    let mut q = p.clone();
                    q.push(v);
                    q
                })
            })
            .collect();
    }
    pts
}

fn satisfies(sys: &System, pt: &[i64]) -> bool {
    let val = |r: &Vec<i64>| {
        r[..pt.len()]
            .iter()
            .zip(pt)
            .map(|(a, b)| a * b)
            .sum::<i64>()
            + r[pt.len()]
    };
    sys.eqs.iter().all(|r| val(r) == 0) && sys.ineqs.iter().all(|r| val(r) >= 0)
}

/// Brute force: every dependence pair (for N = 1..4) between points of
/// the statements' domains is ordered lexicographically by the schedule.
fn brute_force_legal(m: &Model, sched: &Schedule) -> Result<(), String> {
    for n in 1..=4 {
        for dep in &m.deps {
            let poly = m.dep_with_domains(dep).map_err(|e| e.to_string())?;
            let (ds, dt) = (
                m.statements[dep.source].n_dims,
                m.statements[dep.target].n_dims,
            );
            for s in boxes(ds, n) {
                for t in boxes(dt, n) {
                    let mut pt = s.clone();
                    pt.extend(&t);
                    pt.push(n);
                    if !satisfies(&poly, &pt) {
                        continue;
                    }
                    let a: Vec<i64> = sched.rows[dep.source]
                        .iter()
                        .map(|r| eval(r, &s, n))
                        .collect();
                    let b: Vec<i64> = sched.rows[dep.target]
                        .iter()
                        .map(|r| eval(r, &t, n))
                        .collect();
                    if a >= b {
                        return Err(format!("N={n}: {s:?} at {a:?} -> {t:?} at {b:?}"));
                    }
                }
            }
        }
    }
    Ok(())
}

fn nonempty(p: &System) -> bool {
    solver::integer_sample(p).unwrap().is_some()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn schedulable_programs_get_legal_sequential_schedules(spec in spec()) {
        let m = build(&spec);
        let live = m.deps.iter().filter(|d| nonempty(&m.dep_with_domains(d).unwrap())).count();
        if std::env::var("SCHED_PROP_STATS").is_ok() {
            eprintln!("live pieces: {live} of {}", m.deps.len());
        }
        for which in [Scheduler::Feautrier, Scheduler::Pluto] {
            let sched = schedule(&m, which);
            let sched = match sched {
                Ok(s) => s,
                Err(e) => return Err(TestCaseError::fail(format!("{which:?}: {e}"))),
            };
            prop_assert!(matches!(check_schedule(&m, &sched).unwrap(), Legality::Legal(_)));
            prop_assert!(is_sequential(&m, &sched).unwrap());
            if let Err(e) = brute_force_legal(&m, &sched) {
                return Err(TestCaseError::fail(format!("{which:?}: {e}; rows {:?}", sched.rows)));
            }
        }
    }

    #[test]
    fn reversed_piece_gives_cycle_error(spec in spec(), pick in 0usize..4) {
        let mut m = build(&spec);
        let nd = m.deps.len();
        let k = (0..nd).map(|x| (x + pick) % nd).find(|&k| nonempty(&m.dep_with_domains(&m.deps[k]).unwrap()));
        prop_assume!(k.is_some());
        let d = m.deps[k.unwrap_or(0)].clone();
        // Reverse (s, t, p) -> (t, s, p) as a piece from d.target to d.source.
        let (ds, dt) = (m.statements[d.source].n_dims, m.statements[d.target].n_dims);
        let perm = |r: &Vec<i64>| {
            let mut out = Vec::with_capacity(r.len());
            out.extend_from_slice(&r[ds..ds + dt]);
            out.extend_from_slice(&r[..ds]);
            out.extend_from_slice(&r[ds + dt..]);
            out
        };
        let mut rev = System::new(d.poly.n_vars);
        d.poly.eqs.iter().for_each(|r| rev.add_eq(perm(r)));
        d.poly.ineqs.iter().for_each(|r| rev.add_ineq(perm(r)));
        m.add_dep(d.target, d.source, rev);
        for which in [Scheduler::Feautrier, Scheduler::Pluto] {
            match schedule(&m, which) {
                Err(ScheduleError::Cycle { statements }) => {
                    prop_assert!(statements.contains(&m.statements[d.source].name));
                    prop_assert!(statements.contains(&m.statements[d.target].name));
                }
                other => return Err(TestCaseError::fail(format!("{which:?}: expected a cycle, got {other:?}"))),
            }
        }
    }
}

/// Arbitrary (well-shaped) models: random constraint rows for domains and
/// dependence pieces, possibly empty, unbounded or cyclic. The scheduler
/// must return a legal sequential schedule or the cycle error (or a typed
/// polyhedral error), never an internal error, never panic.
fn arbitrary_model() -> impl Strategy<Value = Model> {
    let row = |n: usize| proptest::collection::vec(-2i64..=2, n + 1);
    (1usize..=2, proptest::collection::vec(1usize..=2, 1..=2)).prop_flat_map(move |(np, dims)| {
        let ns = dims.len();
        let doms = dims
            .iter()
            .map(|&d| proptest::collection::vec(row(d + np), 0..=3))
            .collect::<Vec<_>>();
        let dims2 = dims.clone();
        let deps = proptest::collection::vec(
            (0..ns, 0..ns).prop_flat_map(move |(s, t)| {
                let n = dims2[s] + dims2[t] + np;
                (
                    Just((s, t)),
                    proptest::collection::vec(row(n), 0..=2),
                    proptest::collection::vec(row(n), 0..=3),
                )
            }),
            0..=3,
        );
        (Just((np, dims.clone())), doms, deps).prop_map(|((np, dims), doms, deps)| {
            let mut m = Model::new(np);
            for (k, (&d, rows)) in dims.iter().zip(doms).enumerate() {
                let mut s = System::new(d + np);
                rows.into_iter().for_each(|r| s.add_ineq(r));
                m.add_statement(&format!("S{k}"), d, s);
            }
            for ((s, t), eqs, ineqs) in deps {
                let n = dims[s] + dims[t] + np;
                let mut p = System::new(n);
                eqs.into_iter().for_each(|r| p.add_eq(r));
                ineqs.into_iter().for_each(|r| p.add_ineq(r));
                m.add_dep(s, t, p);
            }
            m
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_models_never_give_internal_errors(m in arbitrary_model()) {
        for which in [Scheduler::Feautrier, Scheduler::Pluto] {
            match schedule(&m, which) {
                Ok(sched) => {
                    prop_assert!(matches!(check_schedule(&m, &sched).unwrap(), Legality::Legal(_)));
                    prop_assert!(is_sequential(&m, &sched).unwrap());
                }
                Err(ScheduleError::Cycle { .. }) | Err(ScheduleError::Poly(_)) | Err(ScheduleError::Overflow) => {}
                Err(e) => return Err(TestCaseError::fail(format!("{which:?}: {e}"))),
            }
        }
    }

    #[test]
    fn malformed_models_are_rejected(extra in 1usize..3, which_bad in 0usize..3) {
        let mut m = Model::new(1);
        let d = if which_bad == 0 { 2 + extra } else { 2 };
        m.add_statement("S", 1, System::new(d));
        let nv = if which_bad == 1 { 3 + extra } else { 3 };
        let mut p = System::new(nv);
        if which_bad == 2 {
            p.add_ineq(vec![1; nv + 1 + extra]);
        }
        m.add_dep(0, 0, p);
        for which in [Scheduler::Feautrier, Scheduler::Pluto] {
            prop_assert!(matches!(schedule(&m, which), Err(ScheduleError::InvalidModel(_))));
        }
        let bad = Schedule { rows: vec![vec![vec![1, 0]]], dims: vec![Default::default()], budget_spent: false };
        prop_assert!(check_schedule(&m, &bad).is_err());
    }
}

/// A case found by `arbitrary_models_never_give_internal_errors` (CI seed):
/// the integer branch and bound of one Pluto ILP descended without bound
/// (no lattice basis reduction), exhausting memory. The solver now gives
/// up on a depth × tableau-size budget (`PolyError::Budget`); the Pluto
/// search treats that branch as empty, and the schedule stays legal.
#[test]
fn a_runaway_branch_and_bound_gives_up_and_the_schedule_stays_legal() {
    let mut m = Model::new(2);
    let mut s0 = System::new(4);
    s0.add_ineq(vec![-1, 2, -1, -1, 2]);
    s0.add_ineq(vec![0, -2, 2, 2, 2]);
    m.add_statement("S0", 2, s0);
    m.add_statement("S1", 2, System::new(4));
    let mut p = System::new(6);
    p.add_eq(vec![2, 2, 0, 1, -1, -1, -1]);
    p.add_ineq(vec![-1, -2, -1, -1, -1, -2, -1]);
    p.add_ineq(vec![-1, -1, -2, 0, 0, 0, 2]);
    p.add_ineq(vec![0, 0, 2, -2, 1, 1, 2]);
    m.add_dep(0, 1, p);
    for which in [Scheduler::Feautrier, Scheduler::Pluto] {
        let sched = schedule(&m, which).expect("schedulable");
        assert!(matches!(
            check_schedule(&m, &sched).expect("checks"),
            Legality::Legal(_)
        ));
        assert!(is_sequential(&m, &sched).expect("checks"));
    }
}
