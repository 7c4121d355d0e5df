//! The three GMM samplers of `examples/gmm_{gs,mh,lw}.alpha` by hand: one
//! count `n_k` and one sum `s_k` per component over the current labels,
//! updated in place (leave-one-out by a decrement before point `i` and an
//! increment after it), the random numbers of alphac's draws.
//!
//! Model: `x_i ~ N(mu_{z_i}, 1)`, `mu_k ~ N(0, 1)`, Dirichlet(1) weights.
//! With `c = n_k + 1` (the other members plus alpha = 1),
//! `m = s_k / c`, `v = 1 + 1 / c`, the collapsed predictive of `x_i` in
//! component `k` is `N(x_i; m, v)`.

use crate::common::{categorical, uniform_label, Site};
use alphac::runtime::math::lgamma;

/// `log sqrt(2 pi)`.
const LOG_SQRT_2PI: f64 = 0.918_938_533_204_672_7;

/// The collapsed log joint `log p(x, z)` from the counts `n_k`, sums
/// `s_k = Σ x_j` and `q_k = Σ x_j²` over the members of each component:
/// `lgamma(K) − lgamma(N + K) + Σ_k [lgamma(n_k + 1) − ½ log(n_k + 1)
/// − ½ (q_k − s_k² / (n_k + 1))] − N log sqrt(2π)`.
fn log_joint(n: &[i64], s: &[f64], q: &[f64]) -> f64 {
    let (big_n, k) = (n.iter().sum::<i64>(), n.len() as i64);
    let mut acc = 0.0;
    for ((&nk, &sk), &qk) in n.iter().zip(s).zip(q) {
        let c = nk as f64 + 1.0;
        acc += (lgamma(c) - 0.5 * c.ln()) - 0.5 * (qk - sk * sk / c);
    }
    lgamma(k as f64) - lgamma((big_n + k) as f64) + acc - LOG_SQRT_2PI * big_n as f64
}

/// `s_k`, `q_k` of the labels `z` (one pass; `n` is known).
fn sums(x: &[f64], z: &[usize], s: &mut [f64], q: &mut [f64]) {
    s.fill(0.0);
    q.fill(0.0);
    for (&xi, &zi) in x.iter().zip(z) {
        s[zi] += xi;
        q[zi] += xi * xi;
    }
}

/// GMM-GS: a collapsed Gibbs sweep. State: the data `x`, the labels `z`;
/// a sweep writes `znew` and `logp` (then `z <- znew` before the next).
pub struct GmmGs {
    pub x: Vec<f64>,
    pub z: Vec<usize>,
    pub znew: Vec<usize>,
    pub logp: f64,
    n: Vec<i64>,
    s: Vec<f64>,
    q: Vec<f64>,
    w: Vec<f64>,
}

impl GmmGs {
    /// The sampler for `K` components from data `x` and labels `z`.
    pub fn new(k: usize, x: Vec<f64>, z: Vec<usize>) -> GmmGs {
        let len = x.len();
        GmmGs {
            x,
            z,
            znew: vec![0; len],
            logp: 0.0,
            n: vec![0; k],
            s: vec![0.0; k],
            q: vec![0.0; k],
            w: vec![0.0; k],
        }
    }

    /// One sweep seeded with `seed`: for `i = 0..N`, with point `i` taken
    /// out of its component, `p(k) ∝ c · N(x_i; s_k / c, 1 + 1 / c)`,
    /// `c = n_k + 1`; `znew_i` drawn from it (site `znew`, 131072) and put
    /// back in its new component. O(N K).
    pub fn sweep(&mut self, seed: u64) {
        let site = Site::new(seed, 131_072);
        let (n, s) = (&mut self.n, &mut self.s);
        n.fill(0);
        s.fill(0.0);
        for (&xi, &zi) in self.x.iter().zip(&self.z) {
            n[zi] += 1;
            s[zi] += xi;
        }
        for (i, (&xi, &zi)) in self.x.iter().zip(&self.z).enumerate() {
            n[zi] -= 1;
            s[zi] -= xi;
            let mut total = 0.0;
            for ((wk, &nk), &sk) in self.w.iter_mut().zip(n.iter()).zip(s.iter()) {
                let c = nk as f64 + 1.0;
                let d = xi - sk / c;
                let v = 1.0 + 1.0 / c;
                *wk = c * (-0.5 * d * d / v).exp() / v.sqrt();
                total += *wk;
            }
            let k = categorical(&self.w, total, site.uniform(i));
            n[k] += 1;
            s[k] += xi;
            self.znew[i] = k;
        }
        sums(&self.x, &self.znew, &mut self.s, &mut self.q);
        self.logp = log_joint(&self.n, &self.s, &self.q);
    }

    /// `z <- znew`.
    pub fn carry(&mut self) {
        std::mem::swap(&mut self.z, &mut self.znew);
    }
}

/// GMM-MH: a Metropolis-Hastings sweep with a uniform proposal. State as
/// [`GmmGs`].
pub struct GmmMh {
    pub x: Vec<f64>,
    pub z: Vec<usize>,
    pub znew: Vec<usize>,
    pub logp: f64,
    n: Vec<i64>,
    s: Vec<f64>,
    q: Vec<f64>,
}

/// `log p_i(k)` up to a constant: `log c − ½ log v − ½ (x − s/c)² / v`
/// with `c = n_k + 1`, `v = 1 + 1/c` (the counts without point `i`).
#[inline]
fn log_cond(xi: f64, nk: i64, sk: f64) -> f64 {
    let c = nk as f64 + 1.0;
    let d = xi - sk / c;
    let v = 1.0 + 1.0 / c;
    (c.ln() - 0.5 * v.ln()) - 0.5 * d * d / v
}

impl GmmMh {
    /// The sampler for `K` components from data `x` and labels `z`.
    pub fn new(k: usize, x: Vec<f64>, z: Vec<usize>) -> GmmMh {
        let len = x.len();
        GmmMh {
            x,
            z,
            znew: vec![0; len],
            logp: 0.0,
            n: vec![0; k],
            s: vec![0.0; k],
            q: vec![0.0; k],
        }
    }

    /// One sweep seeded with `seed`: point `i` proposes `k'` uniformly
    /// (site `kp`, 262144) and moves there when
    /// `u < exp(log p_i(k') − log p_i(z_i))` (site `znew`, 131072); O(N)
    /// plus O(K) for the counts.
    pub fn sweep(&mut self, seed: u64) {
        let (prop, acc) = (Site::new(seed, 262_144), Site::new(seed, 131_072));
        let kk = self.n.len();
        let (n, s) = (&mut self.n, &mut self.s);
        n.fill(0);
        s.fill(0.0);
        for (&xi, &zi) in self.x.iter().zip(&self.z) {
            n[zi] += 1;
            s[zi] += xi;
        }
        for (i, (&xi, &zi)) in self.x.iter().zip(&self.z).enumerate() {
            let kp = uniform_label(prop.uniform(i), kk);
            let mut k = zi;
            if kp != zi {
                n[zi] -= 1;
                s[zi] -= xi;
                let (lp, lz) = (log_cond(xi, n[kp], s[kp]), log_cond(xi, n[zi], s[zi]));
                if acc.uniform(i) < (lp - lz).exp() {
                    k = kp;
                }
                n[k] += 1;
                s[k] += xi;
            }
            self.znew[i] = k;
        }
        sums(&self.x, &self.znew, &mut self.s, &mut self.q);
        self.logp = log_joint(&self.n, &self.s, &self.q);
    }

    /// `z <- znew`.
    pub fn carry(&mut self) {
        std::mem::swap(&mut self.z, &mut self.znew);
    }
}

/// GMM-LW: one likelihood-weighting particle. State: the data `x`; a
/// sweep writes the labels `z`, `loglik` and `logw`.
pub struct GmmLw {
    pub x: Vec<f64>,
    pub z: Vec<usize>,
    pub loglik: f64,
    pub logw: f64,
    n: Vec<i64>,
    s: Vec<f64>,
}

impl GmmLw {
    /// The sampler for `K` components from data `x`.
    pub fn new(k: usize, x: Vec<f64>) -> GmmLw {
        let len = x.len();
        GmmLw {
            x,
            z: vec![0; len],
            loglik: 0.0,
            logw: 0.0,
            n: vec![0; k],
            s: vec![0.0; k],
        }
    }

    /// One particle seeded with `seed`: `z_i` uniform (site `z`, 65536),
    /// `loglik = Σ_i log N(x_i; s/c, 1 + 1/c)` and
    /// `logw = loglik + Σ_i log(K c / (i + K))` with `c = n_{z_i} + 1`
    /// over the points before `i`. O(N) plus O(K).
    pub fn sweep(&mut self, seed: u64) {
        let site = Site::new(seed, 65_536);
        let kk = self.n.len();
        let kf = kk as f64;
        self.n.fill(0);
        self.s.fill(0.0);
        let (mut ll, mut lw) = (0.0, 0.0);
        for (i, &xi) in self.x.iter().enumerate() {
            let k = uniform_label(site.uniform(i), kk);
            let c = self.n[k] as f64 + 1.0;
            let d = xi - self.s[k] / c;
            let v = 1.0 + 1.0 / c;
            ll += (-LOG_SQRT_2PI - 0.5 * v.ln()) - 0.5 * d * d / v;
            lw += (kf * c / (i as f64 + kf)).ln();
            self.n[k] += 1;
            self.s[k] += xi;
            self.z[i] = k;
        }
        self.loglik = ll;
        self.logw = ll + lw;
    }
}
