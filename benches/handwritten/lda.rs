//! The three LDA samplers of `examples/lda_{gs,mh,lw}.alpha` by hand:
//! word-topic counts `nwk[v][k]`, document-topic counts `ndk[e][k]` and
//! topic totals `nk[k]` over the current labels, updated in place
//! (leave-one-out by a decrement before token `i`, an increment after it),
//! with the random numbers of alphac's draws. alpha = 0.1, beta = 0.01.

use crate::common::{categorical, uniform_label, Site};
use alphac::runtime::math::lgamma;

const ALPHA: f64 = 0.1;
const BETA: f64 = 0.01;

/// The corpus: word and document of every token, `K` topics, `V` words,
/// `D` documents.
pub struct Corpus {
    pub w: Vec<usize>,
    pub d: Vec<usize>,
    pub k: usize,
    pub v: usize,
    pub nd: usize,
}

/// Count tables of a labelling, row-major `[V][K]`, `[D][K]`, `[K]`.
struct Counts {
    nwk: Vec<i64>,
    ndk: Vec<i64>,
    nk: Vec<i64>,
}

impl Counts {
    fn new(c: &Corpus) -> Counts {
        Counts {
            nwk: vec![0; c.v * c.k],
            ndk: vec![0; c.nd * c.k],
            nk: vec![0; c.k],
        }
    }

    /// The counts of the labels `z`.
    fn count(&mut self, c: &Corpus, z: &[usize]) {
        self.nwk.fill(0);
        self.ndk.fill(0);
        self.nk.fill(0);
        for ((&w, &d), &t) in c.w.iter().zip(&c.d).zip(z) {
            self.add(c.k, w, d, t, 1);
        }
    }

    #[inline]
    fn add(&mut self, k: usize, w: usize, d: usize, t: usize, by: i64) {
        self.nwk[w * k + t] += by;
        self.ndk[d * k + t] += by;
        self.nk[t] += by;
    }

    /// The collapsed conditional `(n_dk + alpha)(n_wk + beta)/(n_k + V beta)`.
    #[inline]
    fn cond(&self, kk: usize, vb: f64, w: usize, d: usize, t: usize) -> f64 {
        (self.ndk[d * kk + t] as f64 + ALPHA) * (self.nwk[w * kk + t] as f64 + BETA)
            / (self.nk[t] as f64 + vb)
    }

    /// The collapsed log joint `log p(w, z)` of the labels counted, the sum
    /// of `Σ_e [lgamma(K alpha) − lgamma(n_e + K alpha)]`,
    /// `Σ_{e,k} [lgamma(n_ek + alpha) − lgamma(alpha)]`,
    /// `Σ_k [lgamma(V beta) − lgamma(n_k + V beta)]` and
    /// `Σ_{v,k} [lgamma(n_vk + beta) − lgamma(beta)]`; a zero count adds
    /// exactly 0 and is skipped.
    fn log_joint(&self, c: &Corpus, ne: &[i64]) -> f64 {
        let (ka, vb) = (c.k as f64 * ALPHA, c.v as f64 * BETA);
        let (lka, lvb) = (lgamma(ka), lgamma(vb));
        let sparse = |counts: &[i64], prior: f64| {
            let l0 = lgamma(prior);
            let mut acc = 0.0;
            for &n in counts.iter().filter(|&&n| n != 0) {
                acc += lgamma(n as f64 + prior) - l0;
            }
            acc
        };
        let docs: f64 = ne.iter().map(|&n| lka - lgamma(n as f64 + ka)).sum();
        let topics: f64 = self.nk.iter().map(|&n| lvb - lgamma(n as f64 + vb)).sum();
        docs + sparse(&self.ndk, ALPHA) + topics + sparse(&self.nwk, BETA)
    }
}

/// Tokens per document.
fn doc_lengths(c: &Corpus) -> Vec<i64> {
    let mut ne = vec![0; c.nd];
    for &d in &c.d {
        ne[d] += 1;
    }
    ne
}

/// LDA-GS: a collapsed Gibbs sweep. State: the corpus, the labels `z`; a
/// sweep writes `znew` and `logp` (then `z <- znew`).
pub struct LdaGs {
    pub c: Corpus,
    pub z: Vec<usize>,
    pub znew: Vec<usize>,
    pub logp: f64,
    counts: Counts,
    ne: Vec<i64>,
    p: Vec<f64>,
}

impl LdaGs {
    pub fn new(c: Corpus, z: Vec<usize>) -> LdaGs {
        let (counts, ne, p) = (Counts::new(&c), doc_lengths(&c), vec![0.0; c.k]);
        let znew = vec![0; z.len()];
        LdaGs {
            c,
            z,
            znew,
            logp: 0.0,
            counts,
            ne,
            p,
        }
    }

    /// One sweep seeded with `seed`: token `i` out of the counts, its new
    /// topic drawn from the collapsed conditional (site `znew`, 196608),
    /// back in. O(W K) plus O((V + D) K) for the counts and `logp`.
    pub fn sweep(&mut self, seed: u64) {
        let site = Site::new(seed, 196_608);
        let (c, n) = (&self.c, &mut self.counts);
        let (kk, vb) = (c.k, c.v as f64 * BETA);
        n.count(c, &self.z);
        for (i, ((&w, &d), &t)) in c.w.iter().zip(&c.d).zip(&self.z).enumerate() {
            n.add(kk, w, d, t, -1);
            let (nw, nd) = (&n.nwk[w * kk..][..kk], &n.ndk[d * kk..][..kk]);
            let mut total = 0.0;
            for (k, pk) in self.p.iter_mut().enumerate() {
                *pk = (nd[k] as f64 + ALPHA) * (nw[k] as f64 + BETA) / (n.nk[k] as f64 + vb);
                total += *pk;
            }
            let t = categorical(&self.p, total, site.uniform(i));
            n.add(kk, w, d, t, 1);
            self.znew[i] = t;
        }
        self.logp = n.log_joint(c, &self.ne);
    }

    /// `z <- znew`.
    pub fn carry(&mut self) {
        std::mem::swap(&mut self.z, &mut self.znew);
    }
}

/// LDA-MH: a Metropolis-Hastings sweep with a uniform proposal. State as
/// [`LdaGs`].
pub struct LdaMh {
    pub c: Corpus,
    pub z: Vec<usize>,
    pub znew: Vec<usize>,
    pub logp: f64,
    counts: Counts,
    ne: Vec<i64>,
}

impl LdaMh {
    pub fn new(c: Corpus, z: Vec<usize>) -> LdaMh {
        let (counts, ne) = (Counts::new(&c), doc_lengths(&c));
        let znew = vec![0; z.len()];
        LdaMh {
            c,
            z,
            znew,
            logp: 0.0,
            counts,
            ne,
        }
    }

    /// One sweep seeded with `seed`: token `i` proposes `k'` uniformly
    /// (site `kp`, 589824) and moves there when `u < P(k') / P(z_i)` (site
    /// `znew`, 196608), `P` the collapsed conditional without token `i`.
    /// O(W) plus O((V + D) K) for the counts and `logp`.
    pub fn sweep(&mut self, seed: u64) {
        let (prop, acc) = (Site::new(seed, 589_824), Site::new(seed, 196_608));
        let (c, n) = (&self.c, &mut self.counts);
        let (kk, vb) = (c.k, c.v as f64 * BETA);
        n.count(c, &self.z);
        for (i, ((&w, &d), &t)) in c.w.iter().zip(&c.d).zip(&self.z).enumerate() {
            let kp = uniform_label(prop.uniform(i), kk);
            let mut k = t;
            if kp != t {
                n.add(kk, w, d, t, -1);
                if acc.uniform(i) < n.cond(kk, vb, w, d, kp) / n.cond(kk, vb, w, d, t) {
                    k = kp;
                }
                n.add(kk, w, d, k, 1);
            }
            self.znew[i] = k;
        }
        self.logp = n.log_joint(c, &self.ne);
    }

    /// `z <- znew`.
    pub fn carry(&mut self) {
        std::mem::swap(&mut self.z, &mut self.znew);
    }
}

/// LDA-LW: one likelihood-weighting sample. State: the corpus; a sweep
/// writes the labels `z` and `logw`.
pub struct LdaLw {
    pub c: Corpus,
    pub z: Vec<usize>,
    pub logw: f64,
    nwk: Vec<i64>,
    nk: Vec<i64>,
}

impl LdaLw {
    pub fn new(c: Corpus) -> LdaLw {
        let (nwk, nk, z) = (vec![0; c.v * c.k], vec![0; c.k], vec![0; c.w.len()]);
        LdaLw {
            c,
            z,
            logw: 0.0,
            nwk,
            nk,
        }
    }

    /// One sample seeded with `seed`: `z_i` uniform (site `z`, 131072),
    /// `logw = Σ_i log((n_{w_i z_i} + beta) / (n_{z_i} + V beta))` over the
    /// tokens before `i`. O(W) plus O(V K) to clear the counts.
    pub fn sweep(&mut self, seed: u64) {
        let site = Site::new(seed, 131_072);
        let (kk, vb) = (self.c.k, self.c.v as f64 * BETA);
        self.nwk.fill(0);
        self.nk.fill(0);
        let mut lw = 0.0;
        for (i, &w) in self.c.w.iter().enumerate() {
            let k = uniform_label(site.uniform(i), kk);
            let cell = &mut self.nwk[w * kk + k];
            lw += ((*cell as f64 + BETA) / (self.nk[k] as f64 + vb)).ln();
            *cell += 1;
            self.nk[k] += 1;
            self.z[i] = k;
        }
        self.logw = lw;
    }
}
