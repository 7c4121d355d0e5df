#!/usr/bin/env python3
"""Export Reuters (LDA) and Rossi (Cox, Efron ties) as .npy arrays for alphac benchmarks.

Usage: export_real_data.py OUT_DIR     (normally run through scripts/real_data.sh)

Writes OUT_DIR/reuters/{w,d,X}.npy + params.txt and
       OUT_DIR/rossi/{X,event,first,m,l,beta,lifelines_beta,lifelines_loglik}.npy
       + params.txt + lifelines_seconds.txt.
Ints are int64, floats float64, all C-order. Fails (exit 1) if the independent
Efron log-likelihood check disagrees with lifelines by more than 1e-8.
"""
import os
import sys
import time

import numpy as np

COVARIATES = ["fin", "age", "race", "wexp", "mar", "paro", "prio"]
TOL = 1e-8


def save(path, arr, dtype):
    arr = np.ascontiguousarray(np.asarray(arr, dtype=dtype))
    np.save(path, arr)
    print(f"  {path}  {arr.dtype} {list(arr.shape)}  {os.path.getsize(path)} bytes")


def write_text(path, text):
    with open(path, "w") as f:
        f.write(text)
    print(f"  {path}  " + text.strip().replace("\n", " "))


def export_reuters(out):
    import lda.datasets

    X = np.asarray(lda.datasets.load_reuters(), dtype=np.int64)
    D, V = X.shape
    docs, words = np.nonzero(X)  # C order: by document, then word
    counts = X[docs, words]
    d = np.repeat(docs, counts).astype(np.int64)
    w = np.repeat(words, counts).astype(np.int64)
    W = int(X.sum())
    assert len(w) == len(d) == W
    assert np.all(np.diff(d * V + w) >= 0), "tokens not sorted by (document, word)"
    os.makedirs(out, exist_ok=True)
    print(f"reuters: D={D} V={V} W={W}")
    save(os.path.join(out, "w.npy"), w, np.int64)
    save(os.path.join(out, "d.npy"), d, np.int64)
    save(os.path.join(out, "X.npy"), X, np.int64)
    write_text(os.path.join(out, "params.txt"), f"W={W}\nV={V}\nD={D}\n")


def efron_loglik(X, event, first, m, l, beta):
    """Efron partial log likelihood from the exported (sorted) arrays."""
    eta = X @ beta
    r = np.exp(eta)
    R0 = np.concatenate([np.cumsum(r[::-1])[::-1], [0.0]])  # R0[j] = sum_{j'>=j} r[j'], R0[N] = 0
    ev = event == 1
    f, mm, ll = first[ev], m[ev], l[ev]
    S0 = R0[f] - (ll / mm) * (R0[f] - R0[f + mm])
    return float(np.sum(eta[ev] - np.log(S0)))


def export_rossi(out):
    from lifelines import CoxPHFitter
    from lifelines.datasets import load_rossi

    df = load_rossi()
    N, K = len(df), len(COVARIATES)
    time_ = df["week"].to_numpy(np.int64)
    arrest = df["arrest"].to_numpy(np.int64)
    # Sort by time ascending; within a tied time events before censored; otherwise stable.
    order = np.argsort(time_ * 2 + (1 - arrest), kind="stable")
    t = time_[order]
    event = arrest[order]
    X = df[COVARIATES].to_numpy(np.float64)[order]

    first = np.searchsorted(t, t, side="left").astype(np.int64)
    m = np.zeros(N, np.int64)
    l = np.zeros(N, np.int64)
    for i in range(N):
        if i == first[i]:
            j = i
            while j < N and t[j] == t[i] and event[j] == 1:
                j += 1
            k = j
            while k < N and t[k] == t[i]:
                if event[k] == 1:
                    sys.exit("rossi: an event follows a censored subject at a tied time")
                k += 1
            m[i:k] = j - i
            l[i:j] = np.arange(j - i)

    cph = CoxPHFitter()
    t0 = time.perf_counter()
    cph.fit(df[["week", "arrest"] + COVARIATES], "week", "arrest")
    secs = time.perf_counter() - t0
    lbeta = cph.params_[COVARIATES].to_numpy(np.float64)
    lll = float(cph.log_likelihood_)

    mine = efron_loglik(X, event, first, m, l, lbeta)
    diff = abs(mine - lll)
    if not diff <= TOL:
        sys.exit(f"rossi: Efron check FAILED: ours {mine!r} vs lifelines {lll!r} (|diff|={diff:.3e} > {TOL})")

    os.makedirs(out, exist_ok=True)
    print(f"rossi: N={N} K={K} events={int(event.sum())} lifelines fit {secs:.3f}s")
    print("  lifelines beta (" + ", ".join(COVARIATES) + "):")
    print("   " + " ".join(f"{b:.10f}" for b in lbeta))
    print(f"  lifelines loglik {lll!r}; numpy Efron check {mine!r} (|diff|={diff:.2e} <= {TOL}) OK")
    save(os.path.join(out, "X.npy"), X, np.float64)
    save(os.path.join(out, "event.npy"), event, np.int64)
    save(os.path.join(out, "first.npy"), first, np.int64)
    save(os.path.join(out, "m.npy"), m, np.int64)
    save(os.path.join(out, "l.npy"), l, np.int64)
    save(os.path.join(out, "beta.npy"), np.zeros(K), np.float64)
    save(os.path.join(out, "lifelines_beta.npy"), lbeta, np.float64)
    save(os.path.join(out, "lifelines_loglik.npy"), np.array(lll), np.float64)
    write_text(os.path.join(out, "params.txt"), f"N={N}\nK={K}\n")
    write_text(os.path.join(out, "lifelines_seconds.txt"), f"{secs:.6f}\n")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: export_real_data.py OUT_DIR")
    out = sys.argv[1]
    export_reuters(os.path.join(out, "reuters"))
    export_rossi(os.path.join(out, "rossi"))
    print(f"wrote {os.path.abspath(out)}")


if __name__ == "__main__":
    main()
