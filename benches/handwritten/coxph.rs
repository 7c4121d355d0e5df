//! CoxPH (`examples/coxph.alpha`) by hand: one Newton step of the Efron
//! partial likelihood. The risk-set sums are suffix sums accumulated from
//! the last subject down (`R[i] = R[i + 1] + w_i (1, x_i, x_i x_iᵀ)`, the
//! symmetric `x xᵀ` kept as its lower triangle), read at each event's
//! `first` and `first + m`; then the gradient, the information and the
//! Cholesky solve. O(N K² + K³).

/// The covariates `[N][K]`, the Efron bookkeeping, the coefficients.
pub struct Cox {
    k: usize,
    x: Vec<f64>,
    event: Vec<bool>,
    first: Vec<usize>,
    m: Vec<usize>,
    l: Vec<f64>,
    /// The input coefficients.
    pub beta: Vec<f64>,
    /// A step's outputs.
    pub betanew: Vec<f64>,
    pub loglik: f64,
    eta: Vec<f64>,
    r0: Vec<f64>,
    r1: Vec<f64>,
    r2: Vec<f64>,
}

/// Packed lower triangle: `(a, b)` with `b <= a`.
#[inline]
fn tri(a: usize, b: usize) -> usize {
    a * (a + 1) / 2 + b
}

impl Cox {
    /// From the generated arrays (`X` row-major `[N][K]`).
    pub fn new(
        k: usize,
        x: Vec<f64>,
        event: &[i64],
        first: &[i64],
        m: &[i64],
        l: &[i64],
        beta: Vec<f64>,
    ) -> Cox {
        let n = event.len();
        let idx = |v: &[i64]| -> Vec<usize> {
            v.iter()
                .map(|&x| usize::try_from(x).unwrap_or(usize::MAX))
                .collect()
        };
        let t = k * (k + 1) / 2;
        Cox {
            k,
            x,
            event: event.iter().map(|&e| e == 1).collect(),
            first: idx(first),
            m: idx(m),
            l: l.iter().map(|&v| v as f64).collect(),
            betanew: vec![0.0; k],
            beta,
            loglik: 0.0,
            eta: vec![0.0; n],
            r0: vec![0.0; n + 1],
            r1: vec![0.0; (n + 1) * k],
            r2: vec![0.0; (n + 1) * t],
        }
    }

    /// One Newton step: with `S0, S1, S2` Efron's denominators of event
    /// `i` (`(1 − f) R[first] + f R[first + m]`, `f = l / m`),
    /// `loglik = Σ (eta_i − log S0)`, `g = Σ (x_i − S1/S0)`,
    /// `I = Σ (S2/S0 − S1 S1ᵀ/S0²)`, `betanew = beta + I⁻¹ g`.
    pub fn sweep(&mut self) {
        let (k, n, t) = (self.k, self.event.len(), self.k * (self.k + 1) / 2);
        for (e, row) in self.eta.iter_mut().zip(self.x.chunks_exact(k)) {
            let mut acc = 0.0;
            for (&xa, &ba) in row.iter().zip(&self.beta) {
                acc += xa * ba;
            }
            *e = acc;
        }
        self.r0[n] = 0.0;
        self.r1[n * k..].fill(0.0);
        self.r2[n * t..].fill(0.0);
        for i in (0..n).rev() {
            let w = self.eta[i].exp();
            let row = &self.x[i * k..][..k];
            self.r0[i] = self.r0[i + 1] + w;
            let (r1, r1n) = self.r1.split_at_mut((i + 1) * k);
            for ((a, &b), &xa) in r1[i * k..].iter_mut().zip(&r1n[..k]).zip(row) {
                *a = b + w * xa;
            }
            let (r2, r2n) = self.r2.split_at_mut((i + 1) * t);
            let (r2, r2n) = (&mut r2[i * t..], &r2n[..t]);
            for a in 0..k {
                let wa = w * row[a];
                for b in 0..=a {
                    r2[tri(a, b)] = r2n[tri(a, b)] + wa * row[b];
                }
            }
        }
        let (mut ll, mut g, mut info) = (0.0, vec![0.0; k], vec![0.0; t]);
        let (mut s1, mut s2) = (vec![0.0; k], vec![0.0; t]);
        for i in 0..n {
            if !self.event[i] {
                continue;
            }
            let f = self.l[i] / self.m[i] as f64;
            let (lo, hi) = (self.first[i], self.first[i] + self.m[i]);
            let s0 = (1.0 - f) * self.r0[lo] + f * self.r0[hi];
            let (r1lo, r1hi) = (&self.r1[lo * k..][..k], &self.r1[hi * k..][..k]);
            for ((s, &a), &b) in s1.iter_mut().zip(r1lo).zip(r1hi) {
                *s = (1.0 - f) * a + f * b;
            }
            let (r2lo, r2hi) = (&self.r2[lo * t..][..t], &self.r2[hi * t..][..t]);
            for ((s, &a), &b) in s2.iter_mut().zip(r2lo).zip(r2hi) {
                *s = (1.0 - f) * a + f * b;
            }
            ll += self.eta[i] - s0.ln();
            for a in 0..k {
                g[a] += self.x[i * k + a] - s1[a] / s0;
                for b in 0..=a {
                    info[tri(a, b)] += s2[tri(a, b)] / s0 - s1[a] * s1[b] / (s0 * s0);
                }
            }
        }
        self.loglik = ll;
        let delta = cholesky_solve(k, &info, &g);
        for ((bn, &b), &dl) in self.betanew.iter_mut().zip(&self.beta).zip(&delta) {
            *bn = b + dl;
        }
    }

    /// `beta <- betanew`.
    pub fn carry(&mut self) {
        std::mem::swap(&mut self.beta, &mut self.betanew);
    }
}

/// `x` with `A x = b`, `A` symmetric positive definite given by its packed
/// lower triangle: `A = L Lᵀ` (`L_jj = sqrt(A_jj − Σ_{c<j} L_jc²)`,
/// `L_ij = (A_ij − Σ_{c<j} L_ic L_jc) / L_jj`), `L y = b`, `Lᵀ x = y`.
fn cholesky_solve(k: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut l = vec![0.0; a.len()];
    for j in 0..k {
        for i in j..k {
            let mut acc = 0.0;
            for c in 0..j {
                acc += l[tri(i, c)] * l[tri(j, c)];
            }
            l[tri(i, j)] = if i == j {
                (a[tri(j, j)] - acc).sqrt()
            } else {
                (a[tri(i, j)] - acc) / l[tri(j, j)]
            };
        }
    }
    let mut y = vec![0.0; k];
    for i in 0..k {
        let mut acc = 0.0;
        for c in 0..i {
            acc += l[tri(i, c)] * y[c];
        }
        y[i] = (b[i] - acc) / l[tri(i, i)];
    }
    let mut x = vec![0.0; k];
    for i in (0..k).rev() {
        let mut acc = 0.0;
        for c in i + 1..k {
            acc += l[tri(c, i)] * x[c];
        }
        x[i] = (y[i] - acc) / l[tri(i, i)];
    }
    x
}
