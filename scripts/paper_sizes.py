#!/usr/bin/env python3
"""The 11 inference programs at the paper's sizes (shared BENCHMARKS.md,
Table 3): time per sweep of the optimized program against the program as
written (`--no-optimize`), in one run, as a Markdown table.

The optimized program runs at the full size. The program as written runs
at the full size when one run fits in the time cap; otherwise it runs at
growing fractions `f` of the size parameters (`f = 1/2^k`, the size
parameters of the row scaled together, the others fixed) until a run
passes the cap or fails (memory), and its time per sweep at the full size
is extrapolated from the last two runs that finished, `t(1) = t(f2) *
(1/f2)^e` with the measured growth `e = log(t(f2)/t(f1)) / log(f2/f1)`.
Such rows are labelled "extrapolated" with the fractions and the growth.

Usage: scripts/paper_sizes.py [--sweeps N] [--cap SECONDS] [PROGRAM ...]
Env:   ALPHAC  the alphac binary (default target/release/alphac; built if absent)
Figures, not tests: run on a quiet machine.
"""

import argparse
import math
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name -> (parameters at the paper's size, the size parameters scaled together)
GMM = ({"N": 10000, "K": 10}, ["N"])
LDA = ({"W": 466000, "K": 50, "V": 4258, "D": 395}, ["W", "V", "D"])
DMM = ({"D": 278, "A": 129, "K": 4, "L": 3202}, ["D", "L"])
PROGRAMS = {
    "gmm_gs": GMM,
    "gmm_mh": GMM,
    "gmm_lw": GMM,
    "lda_gs": LDA,
    "lda_mh": LDA,
    "lda_lw": LDA,
    "dmm_gs": DMM,
    "dmm_mh": DMM,
    "dmm_lw": DMM,
    "lbp_stereo": ({"N": 110592, "K": 16, "D": 4}, ["N"]),
    "coxph": ({"N": 424, "K": 11}, ["N"]),
}
# Lower limits of the contexts (LDA's generator needs W >= D; CoxPH K < N).
MINIMUM = {"N": 12, "W": 40, "V": 2, "D": 1, "L": 4}

PER_SWEEP = re.compile(r"\(([0-9.]+) ms per sweep\)")


def alphac():
    exe = os.environ.get("ALPHAC", os.path.join(ROOT, "target", "release", "alphac"))
    if not os.path.exists(exe):
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    return exe


def run(exe, name, params, sweeps, cap, optimize):
    """ms per sweep, or None when the run failed or passed the cap."""
    args = [exe, "run", f"examples/{name}.alpha", "--generate-inputs", "--seed", "1"]
    args += ["--sweeps", str(sweeps)]
    for k, v in params.items():
        args += ["--param", f"{k}={v}"]
    if not optimize:
        args.append("--no-optimize")
    try:
        p = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=cap)
    except subprocess.TimeoutExpired:
        return None
    m = PER_SWEEP.search(p.stderr + p.stdout)
    if p.returncode != 0 or not m:
        return None
    return float(m.group(1))


def scaled(params, which, f):
    out = dict(params)
    for k in which:
        out[k] = max(MINIMUM.get(k, 1), round(params[k] * f))
    return out


def as_written(exe, name, sweeps, cap):
    """(ms per sweep at the full size, how it was obtained)."""
    params, which = PROGRAMS[name]
    t = run(exe, name, params, sweeps, cap, False)
    if t is not None:
        return t, "measured"
    points = []
    k = 12
    while k >= 1:
        f = 1 / 2**k
        started = time.monotonic()
        t = run(exe, name, scaled(params, which, f), sweeps, cap, False)
        if t is None:
            break
        points.append((f, t))
        if time.monotonic() - started > cap / 4:
            break
        k -= 1
    # Fractions whose sizes all sit above the lower limits (a clamped size
    # would distort the growth).
    points = [
        (f, t)
        for f, t in points
        if all(round(params[p] * f) >= MINIMUM.get(p, 1) for p in which)
    ]
    if len(points) < 2:
        return None, "not measurable under the cap"
    (f1, t1), (f2, t2) = points[-2], points[-1]
    e = math.log(t2 / t1) / math.log(f2 / f1)
    return t2 * (1 / f2) ** e, (
        f"extrapolated from f = 1/{round(1 / f1)}, 1/{round(1 / f2)} "
        f"({t1:.3g}, {t2:.3g} ms), growth f^{e:.2f}"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweeps", type=int, default=3)
    ap.add_argument("--cap", type=float, default=60.0, help="seconds per run")
    ap.add_argument("programs", nargs="*", default=list(PROGRAMS))
    a = ap.parse_args()
    exe = alphac()
    print(f"Sweeps per run: {a.sweeps}; cap per run: {a.cap:g} s; binary: {exe}\n")
    print("| program | paper's size | optimized ms/sweep | as written ms/sweep | as written: how | ratio |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in a.programs:
        if name not in PROGRAMS:
            sys.exit(f"unknown program {name}; known: {', '.join(PROGRAMS)}")
        params, _ = PROGRAMS[name]
        size = " ".join(f"{k}={v}" for k, v in params.items())
        opt = run(exe, name, params, a.sweeps, a.cap, True)
        naive, how = as_written(exe, name, a.sweeps, a.cap)
        ratio = f"{naive / opt:,.0f}x" if opt and naive else "-"
        fmt = lambda t: f"{t:,.3f}" if t is not None else "-"
        print(f"| {name} | {size} | {fmt(opt)} | {fmt(naive)} | {how} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
