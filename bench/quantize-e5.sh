#!/bin/sh
# multilingual-e5-small re-quantised to int8 (bench/quantize-e5.py says how and what it checks), written OUTSIDE the
# repository: model files never go into the project. Installs onnx, onnxruntime, numpy and tokenizers from PyPI once
# into a venv under SVC_BENCH_HOME (default ~/.cache/svc-bench). A tool run by hand, not a CI step.
#
#   sh bench/quantize-e5.sh [--check-only] [--passages N]
#   sh bench/quantize-e5.sh --check-only --timing-only --passages 32 --rounds 3   (q4 and int8 speed, alternating)
#
# Then: SVC_MODEL_DIR=<SVC_BENCH_HOME>/models SVC_MODEL=multilingual-e5-small-int8 svc ...
# (<SVC_BENCH_HOME>/models also gets symlinks to the shared models, so one SVC_MODEL_DIR serves all three).
set -e
HOME_DIR=${SVC_BENCH_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-bench}
VENV="$HOME_DIR/quant-venv"
cd "$(dirname "$0")/.."
SHARED="$(cd ../shared/data/models && pwd)"
if ! "$VENV/bin/python" -c 'import onnx, onnxruntime, tokenizers, numpy' 2>/dev/null; then
  PY=$(command -v python3 || true)
  [ -n "$PY" ] || { echo "quantize-e5.sh: python3 is missing (install python3 and python3-venv)" >&2; exit 2; }
  echo "quantize-e5.sh: installing onnx, onnxruntime, numpy, tokenizers (PyPI) into $VENV" >&2
  rm -rf "$VENV"
  mkdir -p "$HOME_DIR"
  "$PY" -m venv "$VENV" || { echo "quantize-e5.sh: python3 -m venv failed (apt-get install python3-venv)" >&2; exit 2; }
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check onnx==1.23.2 onnxruntime==1.32.0 numpy tokenizers >&2
fi
mkdir -p "$HOME_DIR/models"
for m in all-MiniLM-L6-v2 multilingual-e5-small; do
  [ -e "$HOME_DIR/models/$m" ] || ln -s "$SHARED/$m" "$HOME_DIR/models/$m"
done
exec "$VENV/bin/python" bench/quantize-e5.py "$SHARED/multilingual-e5-small" "$HOME_DIR/models/multilingual-e5-small-int8" "$@"
