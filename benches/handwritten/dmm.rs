//! The three DMM samplers of `examples/dmm_{gs,mh,lw}.alpha` by hand:
//! cluster sizes `m[k]`, term counts `n[k][a]` and token totals `nt[k]`
//! over the current labels, updated in place (a document out of its
//! cluster before it is relabelled, into its new one after), each document
//! kept as its non-zero terms only (a zero count adds exactly
//! `lgamma(n + beta) − lgamma(n + beta) = 0` to the conditional), with the
//! random numbers of alphac's draws. alpha = 1, beta = 0.1.

use crate::common::{categorical, uniform_label, Site};
use alphac::runtime::math::lgamma;

const BETA: f64 = 0.1;

/// The documents: `A` terms, `K` clusters, each document's non-zero
/// `(term, count)` pairs in term order and its length.
pub struct Docs {
    pub a: usize,
    pub k: usize,
    terms: Vec<Vec<(usize, i64)>>,
    len: Vec<i64>,
}

impl Docs {
    /// From the row-major `D × A` count matrix `x`.
    pub fn new(a: usize, k: usize, x: &[i64]) -> Docs {
        let terms: Vec<Vec<(usize, i64)>> = x
            .chunks(a)
            .map(|row| {
                row.iter()
                    .enumerate()
                    .filter(|&(_, &c)| c != 0)
                    .map(|(t, &c)| (t, c))
                    .collect()
            })
            .collect();
        let len = terms
            .iter()
            .map(|r| r.iter().map(|&(_, c)| c).sum())
            .collect();
        Docs { a, k, terms, len }
    }

    /// Number of documents.
    pub fn count(&self) -> usize {
        self.terms.len()
    }
}

/// Cluster statistics: `m[k]`, `n[k][a]` (row-major), `nt[k]`.
struct Clusters {
    m: Vec<i64>,
    n: Vec<i64>,
    nt: Vec<i64>,
}

impl Clusters {
    fn new(docs: &Docs) -> Clusters {
        Clusters {
            m: vec![0; docs.k],
            n: vec![0; docs.k * docs.a],
            nt: vec![0; docs.k],
        }
    }

    fn count(&mut self, docs: &Docs, z: &[usize]) {
        self.m.fill(0);
        self.n.fill(0);
        self.nt.fill(0);
        for (dd, &k) in z.iter().enumerate() {
            self.add(docs, dd, k, 1);
        }
    }

    /// Document `dd` into (`by = 1`) or out of (`by = -1`) cluster `k`.
    #[inline]
    fn add(&mut self, docs: &Docs, dd: usize, k: usize, by: i64) {
        self.m[k] += by;
        let row = &mut self.n[k * docs.a..][..docs.a];
        for &(t, c) in &docs.terms[dd] {
            row[t] += by * c;
        }
        self.nt[k] += by * docs.len[dd];
    }

    /// `Σ_a [lgamma(n_ka + X_a + beta) − lgamma(n_ka + beta)]` over the
    /// terms of document `dd` (the collapsed predictive of its tokens in
    /// cluster `k`, without the totals' ratio).
    #[inline]
    fn terms_ratio(&self, docs: &Docs, dd: usize, k: usize) -> f64 {
        let row = &self.n[k * docs.a..][..docs.a];
        let mut acc = 0.0;
        for &(t, c) in &docs.terms[dd] {
            let n = row[t];
            acc += lgamma((n + c) as f64 + BETA) - lgamma(n as f64 + BETA);
        }
        acc
    }

    /// `log(m_k + alpha) + terms_ratio + lgamma(nt_k + A beta)
    /// − lgamma(nt_k + len + A beta)`: the log collapsed conditional of
    /// document `dd` in cluster `k`, up to a constant.
    #[inline]
    fn log_cond(&self, docs: &Docs, ab: f64, dd: usize, k: usize) -> f64 {
        let nt = self.nt[k];
        (((self.m[k] as f64 + 1.0).ln() + self.terms_ratio(docs, dd, k)) + lgamma(nt as f64 + ab))
            - lgamma((nt + docs.len[dd]) as f64 + ab)
    }

    /// The collapsed log joint: the sum of `lgamma(K) − lgamma(D + K)`,
    /// `Σ_k [lgamma(m_k + 1) + lgamma(A beta) − lgamma(nt_k + A beta)]` and
    /// `Σ_{k,a} [lgamma(n_ka + beta) − lgamma(beta)]` (zero counts add 0).
    fn log_joint(&self, docs: &Docs) -> f64 {
        let ab = BETA * docs.a as f64;
        let (lab, lb) = (lgamma(ab), lgamma(BETA));
        let mut clusters = 0.0;
        for (&m, &nt) in self.m.iter().zip(&self.nt) {
            clusters += (lgamma(m as f64 + 1.0) + lab) - lgamma(nt as f64 + ab);
        }
        let mut terms = 0.0;
        for &n in self.n.iter().filter(|&&n| n != 0) {
            terms += lgamma(n as f64 + BETA) - lb;
        }
        let (d, k) = (docs.count() as f64, docs.k as f64);
        ((lgamma(k) - lgamma(d + k)) + clusters) + terms
    }
}

/// DMM-GS: a collapsed Gibbs sweep over the documents' labels. State: the
/// documents, the labels `z`; a sweep writes `znew` and `logp`.
pub struct DmmGs {
    pub docs: Docs,
    pub z: Vec<usize>,
    pub znew: Vec<usize>,
    pub logp: f64,
    cl: Clusters,
    lw: Vec<f64>,
}

impl DmmGs {
    pub fn new(docs: Docs, z: Vec<usize>) -> DmmGs {
        let (cl, lw, znew) = (Clusters::new(&docs), vec![0.0; docs.k], vec![0; z.len()]);
        DmmGs {
            docs,
            z,
            znew,
            logp: 0.0,
            cl,
            lw,
        }
    }

    /// One sweep seeded with `seed`: document `dd` out of its cluster, its
    /// label drawn with weights `exp(lw_k − max lw)` (site `znew`, 131072),
    /// into its new cluster. O(D K (nnz + 1)), nnz ≤ min(A, L) the
    /// document's distinct terms.
    pub fn sweep(&mut self, seed: u64) {
        let site = Site::new(seed, 131_072);
        let (docs, cl) = (&self.docs, &mut self.cl);
        let ab = BETA * docs.a as f64;
        cl.count(docs, &self.z);
        for (dd, &old) in self.z.iter().enumerate() {
            cl.add(docs, dd, old, -1);
            let mut mx = f64::NEG_INFINITY;
            for (k, l) in self.lw.iter_mut().enumerate() {
                *l = cl.log_cond(docs, ab, dd, k);
                mx = mx.max(*l);
            }
            let mut total = 0.0;
            for l in self.lw.iter_mut() {
                *l = (*l - mx).exp();
                total += *l;
            }
            let k = categorical(&self.lw, total, site.uniform(dd));
            cl.add(docs, dd, k, 1);
            self.znew[dd] = k;
        }
        self.logp = cl.log_joint(docs);
    }

    /// `z <- znew`.
    pub fn carry(&mut self) {
        std::mem::swap(&mut self.z, &mut self.znew);
    }
}

/// DMM-MH: a Metropolis-Hastings sweep with a uniform proposal. State as
/// [`DmmGs`].
pub struct DmmMh {
    pub docs: Docs,
    pub z: Vec<usize>,
    pub znew: Vec<usize>,
    pub logp: f64,
    cl: Clusters,
}

impl DmmMh {
    pub fn new(docs: Docs, z: Vec<usize>) -> DmmMh {
        let (cl, znew) = (Clusters::new(&docs), vec![0; z.len()]);
        DmmMh {
            docs,
            z,
            znew,
            logp: 0.0,
            cl,
        }
    }

    /// One sweep seeded with `seed`: document `dd` proposes `k'` uniformly
    /// (site `kp`, 327680) and moves there when
    /// `u < exp(Lw(k') − Lw(z_dd))` (site `znew`, 131072). O(D (nnz + 1))
    /// plus O(K A) for the counts and `logp`.
    pub fn sweep(&mut self, seed: u64) {
        let (prop, acc) = (Site::new(seed, 327_680), Site::new(seed, 131_072));
        let (docs, cl) = (&self.docs, &mut self.cl);
        let ab = BETA * docs.a as f64;
        cl.count(docs, &self.z);
        for (dd, &old) in self.z.iter().enumerate() {
            let kp = uniform_label(prop.uniform(dd), docs.k);
            let mut k = old;
            if kp != old {
                cl.add(docs, dd, old, -1);
                let (lp, lz) = (
                    cl.log_cond(docs, ab, dd, kp),
                    cl.log_cond(docs, ab, dd, old),
                );
                if acc.uniform(dd) < (lp - lz).exp() {
                    k = kp;
                }
                cl.add(docs, dd, k, 1);
            }
            self.znew[dd] = k;
        }
        self.logp = cl.log_joint(docs);
    }

    /// `z <- znew`.
    pub fn carry(&mut self) {
        std::mem::swap(&mut self.z, &mut self.znew);
    }
}

/// DMM-LW: one likelihood-weighting particle. State: the documents; a
/// sweep writes the labels `z`, `loglik` and `logw`.
pub struct DmmLw {
    pub docs: Docs,
    pub z: Vec<usize>,
    pub loglik: f64,
    pub logw: f64,
    cl: Clusters,
}

impl DmmLw {
    pub fn new(docs: Docs) -> DmmLw {
        let (cl, z) = (Clusters::new(&docs), vec![0; docs.count()]);
        DmmLw {
            docs,
            z,
            loglik: 0.0,
            logw: 0.0,
            cl,
        }
    }

    /// One particle seeded with `seed`: `z_dd` uniform (site `z`, 65536);
    /// `loglik = Σ_dd [terms_ratio + lgamma(nt + A beta)
    /// − lgamma(nt + len + A beta)]` and `logw = loglik + Σ_dd log(K (m + 1) / (dd + K))`
    /// over the documents before `dd` in cluster `z_dd`. O(D (nnz + 1))
    /// plus O(K A) to clear the counts.
    pub fn sweep(&mut self, seed: u64) {
        let site = Site::new(seed, 65_536);
        let (docs, cl) = (&self.docs, &mut self.cl);
        let (ab, kf) = (BETA * docs.a as f64, docs.k as f64);
        cl.m.fill(0);
        cl.n.fill(0);
        cl.nt.fill(0);
        let (mut terms, mut totals, mut prior) = (0.0, 0.0, 0.0);
        for dd in 0..docs.count() {
            let k = uniform_label(site.uniform(dd), docs.k);
            let row = &cl.n[k * docs.a..][..docs.a];
            for &(t, c) in &docs.terms[dd] {
                let n = row[t];
                terms += lgamma((n + c) as f64 + BETA) - lgamma(n as f64 + BETA);
            }
            let nt = cl.nt[k];
            totals += lgamma(nt as f64 + ab) - lgamma((nt + docs.len[dd]) as f64 + ab);
            prior += (kf * (cl.m[k] as f64 + 1.0) / (dd as f64 + kf)).ln();
            cl.add(docs, dd, k, 1);
            self.z[dd] = k;
        }
        self.loglik = terms + totals;
        self.logw = self.loglik + prior;
    }
}
