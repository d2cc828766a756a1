#!/bin/sh
# Schemathesis' positive phase against a real svc on loopback (bench/schemathesis.ts says what runs and what counts).
# Installs schemathesis from PyPI once into a venv in a cache folder outside the repository (SVC_BENCH_HOME, default
# ~/.cache/svc-bench) and reuses it while the pinned version is there. A tool run by hand, not a CI test.
#
#   sh bench/schemathesis.sh [--max-examples N] [--seed S] [--workers W] [--har FILE]
set -e
VERSION=4.32.5
HOME_DIR=${SVC_BENCH_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-bench}
VENV="$HOME_DIR/schemathesis-venv"
ST="$VENV/bin/st"
if ! { [ -x "$ST" ] && "$ST" --version 2>/dev/null | grep -q "version $VERSION\$"; }; then
  PY=$(command -v python3 || true)
  [ -n "$PY" ] || { echo "schemathesis.sh: python3 is missing (install python3 and python3-venv)" >&2; exit 2; }
  echo "schemathesis.sh: installing schemathesis $VERSION (PyPI) into $VENV" >&2
  rm -rf "$VENV"
  mkdir -p "$HOME_DIR"
  "$PY" -m venv "$VENV" || { echo "schemathesis.sh: python3 -m venv failed (apt-get install python3-venv)" >&2; exit 2; }
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "schemathesis==$VERSION" >&2
fi
cd "$(dirname "$0")/.."
exec node --import tsx bench/schemathesis.ts --st "$ST" "$@"
