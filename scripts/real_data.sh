#!/usr/bin/env bash
# Export the real benchmark data sets (Reuters for LDA, Rossi for Cox/Efron) as .npy files.
#
# Usage: scripts/real_data.sh [OUT_DIR]      (OUT_DIR defaults to <repo>/data)
# Env:   ALPHAC_VENV   virtual environment to use/create (default <repo>/target/real-data-venv)
#        PYTHON        interpreter used to create the venv (default python3)
#
# Needs only python3 with the venv module and pip; packages come from PyPI, pinned below.
# Idempotent: when the venv already holds exactly these pins, installation is skipped.
# Nothing written here is meant to be committed (/data/ is git-ignored).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ALPHAC_VENV:-$ROOT/target/real-data-venv}"
OUT="${1:-$ROOT/data}"
PYTHON="${PYTHON:-python3}"

# Direct requirements (verified with Python 3.11.7), then the transitive closure pinned as
# resolved on that machine, so CI and developers get the same numerics.
PINS=(
  lda==3.0.2
  lifelines==0.30.3
  numpy==2.3.5
  scipy==1.17.1
  pandas==2.3.3
  autograd==1.9.1
  autograd-gamma==0.5.0
  formulaic==1.2.2
  matplotlib==3.11.2
  contourpy==1.3.3
  cycler==0.12.1
  fonttools==4.68.0
  interface_meta==2.0.1
  kiwisolver==1.5.1
  narwhals==2.29.0
  packaging==26.3
  pillow==13.0.0
  pyparsing==3.3.3
  python-dateutil==4.0.0
  pytz==2026.6
  typing_extensions==4.16.0
  tzdata==2026.6
  wrapt==2.5.2
)
STAMP="$VENV/.alphac-pins"
WANT="$(printf '%s\n' "${PINS[@]}")"

if [[ ! -x "$VENV/bin/python" ]]; then
  echo "real_data: creating venv $VENV" >&2
  mkdir -p "$(dirname "$VENV")"
  "$PYTHON" -m venv "$VENV"
fi

if [[ -f "$STAMP" ]] && [[ "$(cat "$STAMP")" == "$WANT" ]]; then
  echo "real_data: venv up to date, skipping install" >&2
else
  echo "real_data: installing ${PINS[*]:0:3} (+ pinned deps) into $VENV" >&2
  rm -f "$STAMP"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "${PINS[@]}"
  printf '%s\n' "$WANT" > "$STAMP"
fi

"$VENV/bin/python" "$ROOT/scripts/export_real_data.py" "$OUT"
