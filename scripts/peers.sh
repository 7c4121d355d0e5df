#!/usr/bin/env bash
# alphac against its peers on real data (issue 16), side by side in one run:
#   LDA-GS on Reuters (K = 20, 50): alphac vs `lda` vs tomotopy (one worker), time per sweep;
#   CoxPH on Rossi (Efron ties): alphac vs lifelines' CoxPHFitter, Newton steps, time to
#   convergence and per step, largest coefficient difference (must be <= 1e-6).
#
# Usage: scripts/peers.sh [REPORT.md]      (also writes the printed report to REPORT.md)
# Env:   PEERS_SWEEPS     LDA sweeps per timed run (default 50)
#        PEERS_REPEATS    runs per figure, the best is kept (default 3)
#        PEERS_COX_STEPS  Newton steps timed for alphac's per-step figure (default 2000)
#        ALPHAC_VENV, PYTHON   as for scripts/real_data.sh (the same venv is used)
#
# Builds alphac (cargo build --release), calls scripts/real_data.sh (venv with lda and
# lifelines pinned, data exported to data/, which is git-ignored), adds tomotopy (pinned)
# to that venv, then runs scripts/peers.py. Idempotent; a few minutes with the defaults.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ALPHAC_VENV:-$ROOT/target/real-data-venv}"
export ALPHAC_VENV="$VENV"
DATA="$ROOT/data"
SWEEPS="${PEERS_SWEEPS:-50}"
REPEATS="${PEERS_REPEATS:-3}"
COX_STEPS="${PEERS_COX_STEPS:-2000}"

# tomotopy has no dependencies beyond numpy (pinned by real_data.sh).
PEER_PINS=(tomotopy==0.14.0)

cd "$ROOT"
echo "peers: building alphac (release)" >&2
cargo build --release --quiet
ALPHAC="$ROOT/target/release/alphac"

echo "peers: exporting Reuters and Rossi (scripts/real_data.sh)" >&2
bash "$ROOT/scripts/real_data.sh" "$DATA" >/dev/null

STAMP="$VENV/.alphac-peer-pins"
WANT="$(printf '%s\n' "${PEER_PINS[@]}")"
if [[ -f "$STAMP" ]] && [[ "$(cat "$STAMP")" == "$WANT" ]]; then
  echo "peers: ${PEER_PINS[*]} already installed" >&2
else
  echo "peers: installing ${PEER_PINS[*]} into $VENV" >&2
  rm -f "$STAMP"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "${PEER_PINS[@]}"
  printf '%s\n' "$WANT" > "$STAMP"
fi

MD=()
if [[ $# -ge 1 ]]; then MD=(--md "$1"); fi
echo "peers: running (sweeps=$SWEEPS, repeats=$REPEATS, cox steps=$COX_STEPS)" >&2
"$VENV/bin/python" "$ROOT/scripts/peers.py" --alphac "$ALPHAC" --data "$DATA" \
  --sweeps "$SWEEPS" --repeats "$REPEATS" --cox-steps "$COX_STEPS" "${MD[@]}"
