#!/usr/bin/env python3
"""alphac against its peers on real data (issue 16), in one run.

Usage: peers.py --alphac BIN --data DIR [--sweeps N] [--repeats R]
                [--cox-max S] [--cox-steps M] [--md FILE]
(normally run through scripts/peers.sh, which builds alphac, makes the venv
and exports the data with scripts/real_data.sh)

LDA-GS on Reuters (K = 20 and 50, alpha = 0.1, beta = 0.01 as in
examples/lda_gs.alpha): time per sweep of alphac, of the `lda` package and
of tomotopy with one worker. CoxPH on Rossi (Efron ties, as examples/coxph.alpha
and lifelines' CoxPHFitter): Newton steps to convergence, time to
convergence, time per Newton step, and the largest coefficient difference.

Every timing is the best of R repeats (the machine is shared). Nothing is
hard-coded: every figure printed is measured in this run.
"""
import argparse
import csv
import logging
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy.special import gammaln

ALPHA, BETA = 0.1, 0.01  # examples/lda_gs.alpha: (NDK + 0.1) (NWK + 0.01) / (NK + V 0.01)
COVARIATES = ["fin", "age", "race", "wexp", "mar", "paro", "prio"]
# lifelines' convergence tests (CoxPHFitter._newton_raphson_for_efron_model defaults)
PRECISION, R_PRECISION = 1e-7, 1e-9


def log(msg):
    print(f"peers: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- alphac --

SWEEPS_RE = re.compile(r"^(\d+) sweeps? in ([0-9.]+) s \(([0-9.]+) ms per sweep\)", re.M)
COMPILED_RE = re.compile(r"compiled in (\d+) ms")


def alphac_run(binary, args):
    """Runs `alphac run ARGS`; returns (compile s, sweeps s, process wall s)."""
    cmd = [binary, "run"] + args
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"peers: alphac failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    m, c = SWEEPS_RE.search(p.stderr), COMPILED_RE.search(p.stderr)
    if not m or not c:
        sys.exit(f"peers: cannot read alphac's timing from:\n{p.stderr}")
    # n x (ms per sweep, printed to the microsecond) is finer than the seconds printed
    return int(c.group(1)) / 1e3, int(m.group(1)) * float(m.group(3)) / 1e3, wall


def read_trace(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return rows


def marginal(t_n, n, t_1):
    """Per-sweep time from the best n-sweep and 1-sweep runs (sampler setup excluded)."""
    return (t_n - t_1) / (n - 1) if n > 1 else t_n


# ------------------------------------------------------------------- LDA --

def log_joint(nek, nvk):
    """Collapsed log p(w, z) from the document-topic (D x K) and word-topic
    (V x K) counts: the diagnostic `logp` of examples/lda_gs.alpha."""
    nek = np.asarray(nek, np.float64)
    nvk = np.asarray(nvk, np.float64)
    D, K = nek.shape
    V = nvk.shape[0]
    ne, nk = nek.sum(1), nvk.sum(0)
    return float(
        np.sum(gammaln(K * ALPHA) - gammaln(ne + K * ALPHA))
        + np.sum(gammaln(nek + ALPHA) - gammaln(ALPHA))
        + np.sum(gammaln(V * BETA) - gammaln(nk + V * BETA))
        + np.sum(gammaln(nvk + BETA) - gammaln(BETA))
    )


def counts(w, d, z, V, D, K):
    nek = np.zeros((D, K), np.int64)
    nvk = np.zeros((V, K), np.int64)
    np.add.at(nek, (d, z), 1)
    np.add.at(nvk, (w, z), 1)
    return nek, nvk


def lda_alphac(binary, data, K, n, repeats, tmp, seed):
    w = np.load(os.path.join(data, "w.npy"))
    d = np.load(os.path.join(data, "d.npy"))
    X = np.load(os.path.join(data, "X.npy"))
    D, V = X.shape
    W = len(w)
    z0 = np.random.default_rng(seed).integers(0, K, W).astype(np.int64)
    zpath = os.path.join(tmp, f"z{K}.npy")
    np.save(zpath, z0)
    znew, trace = os.path.join(tmp, f"znew{K}.npy"), os.path.join(tmp, f"lda{K}.csv")
    base = ["examples/lda_gs.alpha", "--param", f"W={W}", "--param", f"V={V}",
            "--param", f"D={D}", "--param", f"K={K}",
            "--input", f"w={data}/w.npy", "--input", f"d={data}/d.npy",
            "--input", f"z={zpath}", "--seed", str(seed)]
    best_n, best_1, comp = float("inf"), float("inf"), float("inf")
    for _ in range(repeats):
        c, s, _ = alphac_run(binary, base + ["--sweeps", str(n), "--output", f"znew={znew}",
                                             "--trace", trace])
        best_n, comp = min(best_n, s), min(comp, c)
        _, s1, _ = alphac_run(binary, base + ["--sweeps", "1"])
        best_1 = min(best_1, s1)
    z = np.load(znew)
    lj = log_joint(*counts(w, d, z, V, D, K))
    traced = float(read_trace(trace)[-1]["logp"])
    if abs(lj - traced) > 1e-6 * abs(lj):
        sys.exit(f"peers: alphac's logp {traced} disagrees with the numpy log joint {lj}")
    per = marginal(best_n, n, best_1)
    return {"per_sweep": per, "per_sweep_incl": best_n / n, "setup": best_1 - per,
            "compile": comp, "log_joint": lj}


def lda_package(X, K, n, repeats, seed):
    import lda

    logging.getLogger("lda").setLevel(logging.WARNING)
    best = None
    for _ in range(repeats):
        # refresh = n: the log likelihood only at sweep 0 (and once after the
        # last), so that the sweeps are the sampler's.
        model = lda.LDA(n_topics=K, n_iter=n, alpha=ALPHA, eta=BETA, random_state=seed, refresh=n)
        inner, spent = model._sample_topics, [0.0]

        def timed(rands, inner=inner, spent=spent):
            t = time.perf_counter()
            inner(rands)
            spent[0] += time.perf_counter() - t

        model._sample_topics = timed  # _fit calls self._sample_topics once per sweep
        t0 = time.perf_counter()
        model.fit(X)
        total = time.perf_counter() - t0
        r = {"fit": total, "sampling": spent[0], "model": model}
        if best is None or total < best["fit"]:
            best = r
    m = best["model"]
    lj = log_joint(m.ndz_, m.nzw_.T)
    return {"per_sweep": best["sampling"] / n, "per_sweep_incl": best["fit"] / n,
            "setup": best["fit"] - best["sampling"], "log_joint": lj}


def lda_tomotopy(X, K, n, repeats, seed):
    import tomotopy as tp

    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        model = tp.LDAModel(tw=tp.TermWeight.ONE, min_cf=0, min_df=0, rm_top=0,
                            k=K, alpha=ALPHA, eta=BETA, seed=seed)
        model.optim_interval = 0  # keep alpha fixed (tomotopy optimizes it every 10 sweeps by default)
        model.burn_in = 0
        for row in X:
            model.add_doc([str(v) for v in np.repeat(np.arange(len(row)), row)])
        model.train(0, workers=1, parallel=tp.ParallelScheme.NONE)  # initial topics
        setup = time.perf_counter() - t0
        t0 = time.perf_counter()
        model.train(n, workers=1, parallel=tp.ParallelScheme.NONE)
        secs = time.perf_counter() - t0
        if best is None or secs < best["secs"]:
            best = {"secs": secs, "setup": setup, "model": model}
    m = best["model"]
    if m.num_words != int(X.sum()) or len(m.used_vocabs) != X.shape[1]:
        sys.exit("peers: tomotopy's corpus is not Reuters as exported")
    w = np.concatenate([np.asarray(doc.words, np.int64) for doc in m.docs])
    z = np.concatenate([np.asarray(doc.topics, np.int64) for doc in m.docs])
    d = np.concatenate([np.full(len(doc.words), e, np.int64) for e, doc in enumerate(m.docs)])
    lj = log_joint(*counts(w, d, z, X.shape[1], X.shape[0], K))
    return {"per_sweep": best["secs"] / n, "per_sweep_incl": best["secs"] / n,
            "setup": best["setup"], "log_joint": lj, "alpha": float(np.mean(m.alpha)),
            "eta": float(m.eta)}


# ---------------------------------------------------------------- CoxPH --

def cox_alphac(binary, data, max_steps, steps, repeats, tmp):
    X = np.load(os.path.join(data, "X.npy"))
    N, K = X.shape
    base = ["examples/coxph.alpha", "--param", f"N={N}", "--param", f"K={K}"] + sum(
        (["--input", f"{v}={data}/{v}.npy"] for v in ["X", "event", "first", "m", "l", "beta"]), [])
    trace = os.path.join(tmp, "cox.csv")
    betas = [np.load(os.path.join(data, "beta.npy"))]
    for s in range(1, max_steps + 1):
        out = os.path.join(tmp, f"beta{s}.npy")
        alphac_run(binary, base + ["--sweeps", str(s), "--output", f"betanew={out}"]
                   + (["--trace", trace] if s == max_steps else []))
        betas.append(np.load(out))
    ll = [float(r["loglik"]) for r in read_trace(trace)]  # ll[s-1]: at the input of sweep s
    # lifelines' tests on iteration s (gradient at beta_{s-1}, step delta_s)
    conv = None
    for s in range(1, max_steps + 1):
        norm_delta = float(np.linalg.norm(betas[s] - betas[s - 1]))
        rel = abs(ll[s - 1] - ll[s - 2]) / -ll[s - 2] if s >= 2 else float("inf")
        if norm_delta < PRECISION or rel < R_PRECISION:
            conv = s
            break
    if conv is None:
        sys.exit(f"peers: alphac's Newton iteration did not converge in {max_steps} steps")
    best_c, best_1, best_m, wall, comp = (float("inf"),) * 5
    for _ in range(repeats):
        c, sc, wl = alphac_run(binary, base + ["--sweeps", str(conv)])
        best_c, wall, comp = min(best_c, sc), min(wall, wl), min(comp, c)
        best_1 = min(best_1, alphac_run(binary, base + ["--sweeps", "1"])[1])
        best_m = min(best_m, alphac_run(binary, base + ["--sweeps", str(steps)])[1])
    per = marginal(best_m, steps, best_1)
    return {"steps": conv, "beta": betas[conv], "to_conv": best_c, "per_step": per,
            "setup": best_1 - per, "compile": comp, "wall": wall, "loglik": ll[conv - 1],
            "betas": betas}


def cox_lifelines(repeats):
    from lifelines import CoxPHFitter
    from lifelines.datasets import load_rossi
    from lifelines.fitters.coxph_fitter import SemiParametricPHFitter as Fitter

    df = load_rossi()[["week", "arrest"] + COVARIATES]
    # CoxPHFitter fits through a SemiParametricPHFitter (Efron's ties, Newton
    # steps of size 0.95 growing to 1, precision 1e-7: the defaults). Its
    # Newton loop and gradient calculator are wrapped, for the duration of
    # this function, to time them and count the steps.
    choose, nr = Fitter._choose_gradient_calculator, Fitter._newton_raphson_for_efron_model
    stats = {}

    def choose_timed(self, *a):
        g = choose(self, *a)
        stats["which"] = getattr(g, "__name__", str(g))

        def counted(*b):
            t = time.perf_counter()
            r = g(*b)
            stats["steps"] += 1
            stats["grad"] += time.perf_counter() - t
            return r
        return counted

    def nr_timed(self, *a, **k):
        t = time.perf_counter()
        r = nr(self, *a, **k)
        stats["newton"] += time.perf_counter() - t
        return r

    best = None
    Fitter._choose_gradient_calculator, Fitter._newton_raphson_for_efron_model = choose_timed, nr_timed
    try:
        for _ in range(repeats):
            stats.update(steps=0, grad=0.0, newton=0.0)
            cph = CoxPHFitter()
            t0 = time.perf_counter()
            cph.fit(df, "week", "arrest")
            total = time.perf_counter() - t0
            if best is None or total < best["fit"]:
                best = dict(stats, fit=total, cph=cph)
    finally:
        Fitter._choose_gradient_calculator, Fitter._newton_raphson_for_efron_model = choose, nr
    cph = best["cph"]
    return {"steps": best["steps"], "to_conv": best["newton"], "per_step": best["newton"] / best["steps"],
            "grad_per_step": best["grad"] / best["steps"], "fit": best["fit"],
            "beta": cph.params_[COVARIATES].to_numpy(np.float64), "loglik": float(cph.log_likelihood_),
            "which": best["which"]}


# ------------------------------------------------------------------ main --

def ms(x):
    return f"{x * 1e3:.2f} ms" if x >= 1e-3 else f"{x * 1e6:.1f} µs"


def ratio(a, b):
    return f"{a / b:.2f}×"


def machine():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    from importlib.metadata import version
    import tomotopy

    vs = ", ".join(f"{p} {version(p)}" for p in ["lda", "tomotopy", "lifelines", "numpy"])
    return (f"{model}, {os.cpu_count()} cores; Python {platform.python_version()}; {vs} "
            f"(tomotopy ISA: {tomotopy.isa})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--alphac", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--sweeps", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cox-max", type=int, default=10, help="Newton steps tried for convergence")
    ap.add_argument("--cox-steps", type=int, default=2000, help="steps timed for the per-step figure")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--md", help="also write the report (markdown) to this file")
    a = ap.parse_args()
    if a.sweeps < 2 or a.repeats < 1 or a.cox_steps < 2:
        sys.exit("peers: need --sweeps >= 2, --repeats >= 1, --cox-steps >= 2")

    reuters, rossi = os.path.join(a.data, "reuters"), os.path.join(a.data, "rossi")
    X = np.load(os.path.join(reuters, "X.npy"))
    lines = [f"Machine: {machine()}", "",
             f"Reuters: {X.shape[0]} documents, {X.shape[1]} words, {int(X.sum())} tokens; "
             f"{a.sweeps} sweeps per run, best of {a.repeats} runs per figure.", ""]
    lines += ["| LDA-GS, Reuters | alphac | lda | tomotopy (1 worker) | alphac / lda | alphac / tomotopy |",
              "| --- | --- | --- | --- | --- | --- |"]
    notes = []
    with tempfile.TemporaryDirectory(prefix="alphac-peers-") as tmp:
        for K in (20, 50):
            log(f"LDA-GS K={K}: alphac")
            al = lda_alphac(a.alphac, reuters, K, a.sweeps, a.repeats, tmp, a.seed)
            log(f"LDA-GS K={K}: lda")
            ld = lda_package(X, K, a.sweeps, a.repeats, a.seed)
            log(f"LDA-GS K={K}: tomotopy")
            tp = lda_tomotopy(X, K, a.sweeps, a.repeats, a.seed)
            lines.append(f"| K = {K}: time per sweep | {ms(al['per_sweep'])} | {ms(ld['per_sweep'])} | "
                         f"{ms(tp['per_sweep'])} | {ratio(al['per_sweep'], ld['per_sweep'])} | "
                         f"{ratio(al['per_sweep'], tp['per_sweep'])} |")
            lines.append(f"| K = {K}: whole run / sweeps | {ms(al['per_sweep_incl'])} | "
                         f"{ms(ld['per_sweep_incl'])} | {ms(tp['per_sweep_incl'])} | "
                         f"{ratio(al['per_sweep_incl'], ld['per_sweep_incl'])} | "
                         f"{ratio(al['per_sweep_incl'], tp['per_sweep_incl'])} |")
            lines.append(f"| K = {K}: log p(w, z) after {a.sweeps} sweeps | {al['log_joint']:.0f} | "
                         f"{ld['log_joint']:.0f} | {tp['log_joint']:.0f} | | |")
            notes.append(f"K = {K}: alphac compiled in {ms(al['compile'])}, sampler setup "
                         f"{ms(al['setup'])}; lda per-fit overhead (initialization, 2 log "
                         f"likelihoods) {ms(ld['setup'])}; tomotopy model setup {ms(tp['setup'])} "
                         f"(alpha {tp['alpha']:g}, eta {tp['eta']:g} as float32)")

        log("CoxPH: alphac")
        ca = cox_alphac(a.alphac, rossi, a.cox_max, a.cox_steps, a.repeats, tmp)
        log("CoxPH: lifelines")
        cl = cox_lifelines(a.repeats)
    diff = float(np.max(np.abs(ca["beta"] - cl["beta"])))
    lines += ["", "| CoxPH, Rossi (Efron) | alphac | lifelines | alphac / lifelines |",
              "| --- | --- | --- | --- |",
              f"| Newton steps to convergence | {ca['steps']} | {cl['steps']} | |",
              f"| time to convergence (Newton steps only) | {ms(ca['to_conv'])} | {ms(cl['to_conv'])} | "
              f"{ratio(ca['to_conv'], cl['to_conv'])} |",
              f"| time per Newton step | {ms(ca['per_step'])} | {ms(cl['per_step'])} | "
              f"{ratio(ca['per_step'], cl['per_step'])} |",
              f"| whole fit (alphac: process incl. compile; lifelines: fit()) | {ms(ca['wall'])} | "
              f"{ms(cl['fit'])} | {ratio(ca['wall'], cl['fit'])} |",
              f"| partial log likelihood | {ca['loglik']:.10f} | {cl['loglik']:.10f} | |",
              f"| max abs coefficient difference | {diff:.2e} | | |"]
    notes.append(f"CoxPH: alphac compiled in {ms(ca['compile'])}, sampler setup {ms(ca['setup'])} "
                 f"(inside its time to convergence); per step from {a.cox_steps} steps; lifelines "
                 f"gradient+Hessian per step {ms(cl['grad_per_step'])} (lifelines' {cl['which']})")
    steps_diff = ", ".join(f"{s}: {np.max(np.abs(b - cl['beta'])):.1e}" for s, b in enumerate(ca["betas"][1:], 1))
    notes.append(f"CoxPH: alphac max |beta_s - lifelines| after step s: {steps_diff}")
    report = "\n".join(lines + [""] + [f"- {n}" for n in notes]) + "\n"
    print(report)
    if a.md:
        with open(a.md, "w") as f:
            f.write(report)
    if not diff <= 1e-6:
        sys.exit(f"peers: coefficients differ by {diff:.2e} > 1e-6")


if __name__ == "__main__":
    main()
