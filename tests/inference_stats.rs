//! Statistical sanity of the inference suite, run as samplers (sweeps of
//! the optimized native code):
//! - GMM-GS separates well-separated clusters;
//! - LDA-GS on a corpus drawn from known topics recovers them (the log
//!   joint rises and flattens, and the learned word distributions match the
//!   true ones);
//! - CoxPH sweeps on the Rossi recidivism data reach the coefficients
//!   `lifelines` reports, to 1e-6;
//! - LDA-GS runs on the Reuters corpus (K = 20) in the memory of its count
//!   tables, and its log joint rises.
//!
//! The last two skip, with a message, when `scripts/real_data.sh` has not
//! exported the data.

use alphac::compile::{self, Compiled, Options};
use alphac::interp;
use alphac::runtime::{data, rng, Array, ArrayData, ArraySpec};
use std::collections::HashMap;
use std::path::Path;

fn compiled(name: &str, system: &str) -> Compiled {
    let path = format!("{}/examples/{name}.alpha", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).unwrap();
    let options = Options {
        system: Some(system.to_string()),
        ..Options::default()
    };
    compile::compile(&src, &options).unwrap_or_else(|e| panic!("{system}: {e}"))
}

fn ints(a: &Array) -> Vec<i64> {
    match a.data() {
        ArrayData::Int(v) => v.clone(),
        other => panic!("not ints: {other:?}"),
    }
}

fn floats(a: &Array) -> Vec<f64> {
    match a.data() {
        ArrayData::Float(v) => v.clone(),
        other => panic!("not floats: {other:?}"),
    }
}

fn array(name: &str, shape: &[usize], data: ArrayData) -> Array {
    let spec = ArraySpec {
        name: name.to_string(),
        ty: match data {
            ArrayData::Int(_) => alphac::ir::ElemType::Int,
            ArrayData::Float(_) => alphac::ir::ElemType::Float,
            ArrayData::Bool(_) => alphac::ir::ElemType::Bool,
        },
        lo: vec![0; shape.len()],
        hi: shape.iter().map(|&n| n as i64 - 1).collect(),
    };
    Array::from_data(&spec, data).unwrap()
}

/// The fraction of points whose label agrees with the truth under the best
/// matching of labels (greedy on the confusion matrix, exact for a
/// near-diagonal one).
fn accuracy(labels: &[i64], truth: &[i64], k: usize) -> f64 {
    let mut conf = vec![vec![0usize; k]; k];
    for (&l, &t) in labels.iter().zip(truth) {
        conf[l as usize][t as usize] += 1;
    }
    let (mut used_l, mut used_t, mut hit) = (vec![false; k], vec![false; k], 0);
    for _ in 0..k {
        let mut best = (0, 0, 0);
        for (l, row) in conf.iter().enumerate() {
            for (t, &c) in row.iter().enumerate() {
                if !used_l[l] && !used_t[t] && c >= best.2 {
                    best = (l, t, c);
                }
            }
        }
        used_l[best.0] = true;
        used_t[best.1] = true;
        hit += best.2;
    }
    hit as f64 / labels.len() as f64
}

#[test]
fn gmm_gs_separates_well_separated_clusters() {
    // Three clusters at -8, 0 and 8 (unit variance), random initial labels.
    let (n, k) = (300usize, 3usize);
    let truth: Vec<i64> = (0..n).map(|i| (i % k) as i64).collect();
    let noise = compiled("gmm_gs", "gmm_gs_data")
        .run(&[n as i64, k as i64], &HashMap::new(), rng::data_seed(5))
        .unwrap();
    // The generator's draws supply the noise and the initial labels.
    let z0 = ints(&noise["z"]);
    let eps = floats(&noise["x"]);
    let x: Vec<f64> = (0..n)
        .map(|i| {
            8.0 * (truth[i] as f64 - 1.0) + (eps[i] - eps.iter().sum::<f64>() / n as f64) / 2.0
        })
        .collect();
    let inputs: HashMap<String, Array> = [
        ("x".to_string(), array("x", &[n], ArrayData::Float(x))),
        (
            "z".to_string(),
            array("z", &[n], ArrayData::Int(z0.clone())),
        ),
    ]
    .into();
    assert!(
        accuracy(&z0, &truth, k) < 0.6,
        "the start is not already separated"
    );
    let c = compiled("gmm_gs", "gmm_gs");
    let mut sweeper = c.sweeper(&[n as i64, k as i64], &inputs, 3).unwrap();
    let trace = sweeper.run(30, |_, _| {}).unwrap();
    let z = ints(&sweeper.outputs().unwrap()["znew"]);
    let acc = accuracy(&z, &truth, k);
    assert!(acc > 0.98, "accuracy {acc}");
    let logp = trace.column("logp").unwrap();
    assert!(
        logp[29] > logp[0] + 100.0,
        "log joint {} -> {}",
        logp[0],
        logp[29]
    );
}

fn read(dir: &Path, name: &str, spec: &ArraySpec) -> Array {
    data::read_data(&dir.join(format!("{name}.npy")), spec).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn coxph_sweeps_on_rossi_reach_the_lifelines_coefficients() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/rossi");
    if !dir.join("lifelines_beta.npy").exists() {
        eprintln!(
            "SKIPPED: {} is absent (run scripts/real_data.sh to export the Rossi data)",
            dir.display()
        );
        return;
    }
    let (n, k) = (432i64, 7i64);
    let c = compiled("coxph", "coxph");
    let params = [n, k];
    let mut inputs = HashMap::new();
    for var in c
        .system()
        .vars
        .iter()
        .filter(|v| v.kind == alphac::ir::VarKind::Input)
    {
        let spec = interp::array_spec(var, &params).unwrap();
        inputs.insert(var.name.clone(), read(&dir, &var.name, &spec));
    }
    let beta_spec = interp::array_spec(
        &c.system().vars[c.system().var_by_name("beta").unwrap()],
        &params,
    )
    .unwrap();
    let want = floats(&read(&dir, "lifelines_beta", &beta_spec));
    let mut sweeper = c.sweeper(&params, &inputs, 0).unwrap();
    let trace = sweeper.run(10, |_, _| {}).unwrap();
    let got = floats(&sweeper.outputs().unwrap()["betanew"]);
    for (a, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() < 1e-6,
            "coefficient {a}: {g} vs lifelines {w}"
        );
    }
    // The partial log likelihood rises and settles (Newton converges).
    let ll = trace.column("loglik").unwrap();
    assert!(ll.windows(2).all(|w| w[1] >= w[0] - 1e-9), "{ll:?}");
    assert!((ll[9] - ll[8]).abs() < 1e-9, "{ll:?}");
    let lifelines_ll = floats(&read(
        &dir,
        "lifelines_loglik",
        &ArraySpec {
            name: "lifelines_loglik".into(),
            ty: alphac::ir::ElemType::Float,
            lo: vec![0],
            hi: vec![0],
        },
    ));
    assert!(
        (ll[9] - lifelines_ll[0]).abs() < 1e-6,
        "{} vs {}",
        ll[9],
        lifelines_ll[0]
    );
}

#[test]
fn lda_gs_runs_on_reuters_in_the_memory_of_its_counts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/reuters");
    if !dir.join("w.npy").exists() {
        eprintln!(
            "SKIPPED: {} is absent (run scripts/real_data.sh to export the Reuters corpus)",
            dir.display()
        );
        return;
    }
    let (w, k, v, d) = (84010i64, 20i64, 4258i64, 395i64);
    let c = compiled("lda_gs", "lda_gs");
    let params = [w, k, v, d];
    // Every array of the sweep, count tables included, in a few MB: the
    // running counts are one V × K (D × K, K) copy each, not × W.
    let bytes = c.array_bytes(&params, 0).unwrap();
    let total: u128 = bytes.iter().map(|b| b.bytes).sum();
    assert!(total < 8_000_000, "{total} bytes: {bytes:?}");
    // (the forward and backward word-topic counts are one table)
    let nwk = bytes.iter().find(|b| b.name == "NWK_red").unwrap();
    assert_eq!(nwk.bytes, (v * k * 8) as u128);
    assert!(!bytes.iter().any(|b| b.name == "NWK_red2"), "{bytes:?}");
    let mut inputs = HashMap::new();
    for name in ["w", "d"] {
        let var = &c.system().vars[c.system().var_by_name(name).unwrap()];
        let spec = interp::array_spec(var, &params).unwrap();
        inputs.insert(name.to_string(), read(&dir, name, &spec));
    }
    // A deterministic initial labelling: token i gets topic i mod K.
    let z: Vec<i64> = (0..w).map(|i| i % k).collect();
    inputs.insert("z".into(), array("z", &[w as usize], ArrayData::Int(z)));
    let mut sweeper = c.sweeper(&params, &inputs, 7).unwrap();
    let trace = sweeper.run(5, |_, _| {}).unwrap();
    let lp = trace.column("logp").unwrap();
    assert!(lp.windows(2).all(|p| p[1] > p[0]), "{lp:?}");
    let znew = ints(&sweeper.outputs().unwrap()["znew"]);
    assert!(znew.iter().all(|&t| (0..k).contains(&t)));
}

#[test]
fn lda_gs_recovers_the_topics_of_a_corpus_drawn_from_them() {
    // A corpus drawn from K = 3 known, well-separated topics over V = 9
    // words: topic t puts probability 0.97 evenly on words 3t..3t+2 and 0.03
    // evenly on the other 6. D = 12 documents of 40 tokens; document e
    // draws each token's topic from (0.8 on topic e mod 3, 0.1 on each
    // other), then its word from the topic. The initial labels are
    // uniform. (The model's own generator, `lda_gs_data`, draws topics
    // from Dirichlet(0.5), which at a size this test can afford overlap
    // too much to be told apart.)
    let (w, k, v, d) = (480i64, 3i64, 9i64, 12i64);
    let (ku, vu) = (k as usize, v as usize);
    let phi: Vec<f64> = (0..ku * vu)
        .map(|x| {
            if x % vu / 3 == x / vu {
                0.97 / 3.0
            } else {
                0.03 / 6.0
            }
        })
        .collect();
    let root = rng::Stream::new(2, 0, 0, &[]);
    let (mut words, mut docs, mut z0) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..w {
        let doc = i * d / w;
        let s = root.sub(i as u64);
        let theta: Vec<f64> = (0..k)
            .map(|t| if t == doc % k { 0.8 } else { 0.1 })
            .collect();
        let topic = s.sub(0).categorical(&theta).unwrap();
        let word = s
            .sub(1)
            .categorical(&phi[topic * vu..(topic + 1) * vu])
            .unwrap();
        words.push(word as i64);
        docs.push(doc);
        z0.push(s.sub(2).categorical(&[1.0; 3]).unwrap() as i64);
    }
    let wu = w as usize;
    let inputs: HashMap<String, Array> = [("w", words.clone()), ("d", docs), ("z", z0)]
        .into_iter()
        .map(|(n, x)| (n.to_string(), array(n, &[wu], ArrayData::Int(x))))
        .collect();
    let c = compiled("lda_gs", "lda_gs");
    let mut sweeper = c.sweeper(&[w, k, v, d], &inputs, 9).unwrap();
    let trace = sweeper.run(40, |_, _| {}).unwrap();
    // The log joint rises, then flattens: its mean change per sweep late
    // in the run (sweeps 20-39, windows of 10) is under a tenth of that of
    // the first 5 sweeps.
    let logp = trace.column("logp").unwrap();
    let early = (logp[5] - logp[0]) / 5.0;
    assert!(early > 10.0, "{logp:?}");
    let mean = |r: std::ops::Range<usize>| logp[r.clone()].iter().sum::<f64>() / r.len() as f64;
    let late = (mean(30..40) - mean(20..30)) / 10.0;
    assert!(
        late.abs() < 0.1 * early,
        "still rising late: {late} per sweep vs {early} early: {logp:?}"
    );
    // The topics' word distributions, estimated from the final labels,
    // match the true ones (best matching of topics): mean total variation
    // distance below 0.15 (distinct true topics are 0.94 apart; with
    // beta = 0.01 each rare off-topic word type ends up in one topic, which
    // alone costs up to about 0.07).
    let z = ints(&sweeper.outputs().unwrap()["znew"]);
    let mut counts = vec![vec![0.01f64; vu]; ku];
    for (&wi, &zi) in words.iter().zip(&z) {
        counts[zi as usize][wi as usize] += 1.0;
    }
    let est: Vec<Vec<f64>> = counts
        .iter()
        .map(|row| {
            let t: f64 = row.iter().sum();
            row.iter().map(|c| c / t).collect()
        })
        .collect();
    let tv = |a: usize, b: usize| -> f64 {
        (0..vu)
            .map(|x| (est[a][x] - phi[b * vu + x]).abs())
            .sum::<f64>()
            / 2.0
    };
    let mut best = f64::INFINITY;
    // All matchings of K = 3 topics.
    for p in [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ] {
        let m = (0..ku).map(|t| tv(t, p[t])).sum::<f64>() / ku as f64;
        best = best.min(m);
    }
    assert!(
        best < 0.15,
        "mean total variation {best}: estimated {est:?}"
    );
}
