#!/usr/bin/env bash
# Time per sweep of each inference program, optimized against as written
# (--no-optimize), on data from its own generator, with the compile time of
# each; one Markdown row per program. Figures, not tests: run on a quiet
# machine.
#
# Usage: scripts/suite_figures.sh [SWEEPS]        (default 10 sweeps)
# Env:   ALPHAC   the alphac binary (default: target/release/alphac, built if absent)
#        SIZES    "moderate" (default) or "paper" (BENCHMARKS.md Table 3 sizes)
#        NAIVE    0 to skip the unoptimized runs (they are O(original) per sweep)
#        PROGRAMS the programs to run (default: all 11)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SWEEPS="${1:-10}"
ALPHAC="${ALPHAC:-$ROOT/target/release/alphac}"
[[ -x "$ALPHAC" ]] || cargo build --release --quiet
SIZES="${SIZES:-moderate}"
NAIVE="${NAIVE:-1}"
PROGRAMS="${PROGRAMS:-gmm_gs gmm_mh gmm_lw lda_gs lda_mh lda_lw dmm_gs dmm_mh dmm_lw lbp_stereo coxph}"

declare -A P
if [[ "$SIZES" == paper ]]; then
  P[gmm_gs]="N=10000 K=10"; P[gmm_mh]="N=10000 K=10"; P[gmm_lw]="N=10000 K=10"
  P[lda_gs]="W=466000 K=50 V=4258 D=395"; P[lda_mh]="W=466000 K=50 V=4258 D=395"
  P[lda_lw]="W=466000 K=50 V=4258 D=395"
  P[dmm_gs]="D=278 A=129 K=4 L=3202"; P[dmm_mh]="D=278 A=129 K=4 L=3202"; P[dmm_lw]="D=278 A=129 K=4 L=3202"
  P[lbp_stereo]="N=110592 K=16 D=4"; P[coxph]="N=424 K=11"
else
  P[gmm_gs]="N=2000 K=10"; P[gmm_mh]="N=2000 K=10"; P[gmm_lw]="N=2000 K=10"
  P[lda_gs]="W=400 K=5 V=50 D=10"; P[lda_mh]="W=400 K=5 V=50 D=10"; P[lda_lw]="W=400 K=5 V=50 D=10"
  P[dmm_gs]="D=278 A=129 K=4 L=40"; P[dmm_mh]="D=278 A=129 K=4 L=40"; P[dmm_lw]="D=278 A=129 K=4 L=40"
  P[lbp_stereo]="N=6912 K=8 D=4"; P[coxph]="N=424 K=11"
fi

# One run: prints "compile_ms per_sweep_ms" from alphac's timing lines.
measure() {
  local name="$1"; shift
  local args=()
  for kv in ${P[$name]}; do args+=(--param "$kv"); done
  local err
  if ! err=$("$ALPHAC" run "examples/$name.alpha" "${args[@]}" --generate-inputs --seed 1 \
      --sweeps "$SWEEPS" "$@" 2>&1 >/dev/null); then
    echo "failed: ${err//$'\n'/ }" >&2
    echo "- -"
    return
  fi
  local compile per
  compile=$(sed -n 's/.*compiled in \([0-9.]*\) ms.*/\1/p' <<<"$err" | head -1)
  per=$(sed -n 's/.*(\([0-9.]*\) ms per sweep).*/\1/p' <<<"$err" | head -1)
  echo "${compile:--} ${per:--}"
}

echo "| program | sizes | compile (ms) | ms/sweep optimized | ms/sweep as written | ratio |"
echo "| --- | --- | --- | --- | --- | --- |"
for name in $PROGRAMS; do
  read -r c_opt t_opt < <(measure "$name")
  if [[ "$NAIVE" == 1 ]]; then
    read -r _ t_naive < <(measure "$name" --no-optimize)
  else
    t_naive="-"
  fi
  ratio="-"
  if [[ "$t_opt" != "-" && "$t_naive" != "-" ]]; then
    ratio=$(awk -v a="$t_naive" -v b="$t_opt" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }')
  fi
  echo "| $name | ${P[$name]} | $c_opt | $t_opt | $t_naive | $ratio |"
done
