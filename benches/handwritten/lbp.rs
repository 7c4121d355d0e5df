//! LBP-Stereo (`examples/lbp_stereo.alpha`) by hand: one synchronous round
//! of min-sum messages with a Potts smoothness term, the leave-one-out sum
//! of the incoming messages as the total minus the one left out, each
//! message written straight into its receiver's slot.
//!
//! For pixel `p` with data cost `cost_k = min(|left_p − right_{p−k}|, tau)`
//! (`tau` when the match is outside the image) and incoming messages
//! `msg[p, t, k]`, `tot_k = cost_k + Σ_{t valid} msg[p, t, k]`; the message
//! to the neighbour in slot `s` is `h_k = tot_k − msg[p, s, k]`,
//! `out_k = min(h_k, min h + lambda) − min h`, received by `nbr[p, s]` in
//! its slot `rev[p, s]`. tau = lambda = 0.5. With the generated data (grey
//! levels in eighths, zero initial messages) every value is a small
//! multiple of 1/8, so all arithmetic is exact and the order of the sums
//! does not matter.

const TAU: f64 = 0.5;
const LAMBDA: f64 = 0.5;

/// The stereo pair, the neighbour table and the messages.
pub struct Lbp {
    k: usize,
    d: usize,
    left: Vec<f64>,
    right: Vec<f64>,
    xs: Vec<i64>,
    nbr: Vec<usize>,
    rev: Vec<usize>,
    valid: Vec<bool>,
    /// Messages into each pixel, `[N][D][K]`.
    pub msg: Vec<f64>,
    /// The next messages (a sweep's output).
    pub msgnew: Vec<f64>,
    pub label: Vec<i64>,
    pub energy: f64,
    cost: Vec<f64>,
    tot: Vec<f64>,
}

impl Lbp {
    /// From the generated arrays (row-major `[N][D]`, `[N][D][K]`). The
    /// neighbour table must be symmetric: for a valid slot `(p, s)`, the
    /// slot `(nbr[p, s], rev[p, s])` is valid and points back at `(p, s)`
    /// (so that every message has exactly one sender); checked. Messages
    /// of invalid slots are set to 0 (they are never read).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        k: usize,
        d: usize,
        left: Vec<f64>,
        right: Vec<f64>,
        xs: Vec<i64>,
        nbr: &[i64],
        rev: &[i64],
        valid: Vec<bool>,
        mut msg: Vec<f64>,
    ) -> Lbp {
        let n = left.len();
        let idx = |v: &[i64]| -> Vec<usize> {
            v.iter()
                .map(|&x| usize::try_from(x).unwrap_or(usize::MAX))
                .collect()
        };
        let (nbr, rev) = (idx(nbr), idx(rev));
        for ps in 0..n * d {
            if valid[ps] {
                let qt = nbr[ps] * d + rev[ps];
                assert!(
                    valid[qt] && nbr[qt] * d + rev[qt] == ps,
                    "neighbour table not symmetric at slot {ps}"
                );
            } else {
                msg[ps * k..][..k].fill(0.0);
            }
        }
        Lbp {
            k,
            d,
            left,
            right,
            xs,
            nbr,
            rev,
            valid,
            msgnew: vec![0.0; msg.len()],
            msg,
            label: vec![0; n],
            energy: 0.0,
            cost: vec![0.0; n * k],
            tot: vec![0.0; k],
        }
    }

    /// One round: `msgnew` from `msg`, then the labels minimizing the
    /// beliefs `cost_k + Σ_t msgnew[p, t, k]` (the smallest on ties) and
    /// their energy `Σ_p cost[p, label_p] + lambda · #{edges with unequal
    /// labels}`. O(N K D).
    pub fn sweep(&mut self) {
        let (k, d) = (self.k, self.d);
        for p in 0..self.left.len() {
            let cost = &mut self.cost[p * k..][..k];
            for (kk, c) in cost.iter_mut().enumerate() {
                *c = if kk <= p && self.xs[p] >= kk as i64 {
                    (self.left[p] - self.right[p - kk]).abs().min(TAU)
                } else {
                    TAU
                };
            }
            self.tot.copy_from_slice(cost);
            let inc = &self.msg[p * d * k..][..d * k];
            for (t, m) in inc.chunks_exact(k).enumerate() {
                if self.valid[p * d + t] {
                    for (a, &b) in self.tot.iter_mut().zip(m) {
                        *a += b;
                    }
                }
            }
            for (s, m) in inc.chunks_exact(k).enumerate() {
                let ps = p * d + s;
                if !self.valid[ps] {
                    continue;
                }
                let mut hmin = f64::INFINITY;
                for (&a, &b) in self.tot.iter().zip(m) {
                    hmin = hmin.min(a - b);
                }
                let out = &mut self.msgnew[(self.nbr[ps] * d + self.rev[ps]) * k..][..k];
                for ((o, &a), &b) in out.iter_mut().zip(&self.tot).zip(m) {
                    *o = (a - b).min(hmin + LAMBDA) - hmin;
                }
            }
        }
        let mut energy = 0.0;
        for p in 0..self.left.len() {
            let cost = &self.cost[p * k..][..k];
            self.tot.copy_from_slice(cost);
            for (t, m) in self.msgnew[p * d * k..][..d * k]
                .chunks_exact(k)
                .enumerate()
            {
                if self.valid[p * d + t] {
                    for (a, &b) in self.tot.iter_mut().zip(m) {
                        *a += b;
                    }
                }
            }
            let mut best = 0;
            for (kk, &b) in self.tot.iter().enumerate() {
                if b < self.tot[best] {
                    best = kk;
                }
            }
            self.label[p] = best as i64;
            energy += cost[best];
        }
        let mut cut = 0.0;
        for p in 0..self.left.len() {
            for t in 0..d {
                let q = self.nbr[p * d + t];
                if self.valid[p * d + t] && q > p && self.label[p] != self.label[q] {
                    cut += 1.0;
                }
            }
        }
        self.energy = energy + LAMBDA * cut;
    }

    /// `msg <- msgnew`.
    pub fn carry(&mut self) {
        std::mem::swap(&mut self.msg, &mut self.msgnew);
    }
}
