#!/usr/bin/env python3
"""Compile time of two alphac binaries side by side, in one run.

Usage: compare_compile.py OLD_BINARY NEW_BINARY FILE.alpha [FILE.alpha ...]
       [--runs N]   (default 40)

For each file, runs `BINARY emit FILE --system S` for every system S of the
file (source to loop code, without the JIT), the two binaries interleaved
(alternating which goes first), and prints the least and the first-quartile
wall time of each, in ms. Interleaving is the point: this machine's speed
drifts by 20% within an hour, so figures taken at different times (two
criterion runs) do not compare; the least of many interleaved runs does.

Copy both binaries to the same file system first (for example /tmp): the
kernel maps an executable's pages at different costs on different file
systems (about 0.5 ms per process between the repository's target/ and
/tmp on the development machine), which would be charged to the code.
"""
import re
import subprocess
import sys
import time


def main(argv):
    runs = 40
    if "--runs" in argv:
        i = argv.index("--runs")
        runs = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    old, new, files = argv[0], argv[1], argv[2:]
    print("| file | systems | old min / p25 (ms) | new min / p25 (ms) |")
    print("|---|---|---|---|")
    for f in files:
        with open(f) as fh:
            systems = re.findall(r"^affine (\w+)", fh.read(), re.M)
        times = {old: [], new: []}
        for it in range(runs):
            for b in (old, new) if it % 2 == 0 else (new, old):
                t0 = time.perf_counter()
                for s in systems:
                    r = subprocess.run([b, "emit", f, "--system", s],
                                       stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
                    if r.returncode != 0:
                        print(f"{b} emit {f} --system {s} failed", file=sys.stderr)
                        return 1
                times[b].append(time.perf_counter() - t0)
        cells = []
        for b in (old, new):
            ts = sorted(times[b])
            cells.append(f"{ts[0] * 1000:.1f} / {ts[len(ts) // 4] * 1000:.1f}")
        print(f"| {f} | {len(systems)} | {cells[0]} | {cells[1]} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
