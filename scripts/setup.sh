#!/usr/bin/env bash
# Creates .venv (Python >= 3.11) and installs Tabletop Companion with its test tools. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "setup: no '$PY' found. Install Python 3.11 or newer (Debian: apt-get install python3 python3-venv)." >&2
  exit 1
fi
if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  echo "setup: Python 3.11 or newer is needed, found $("$PY" --version 2>&1). Set PYTHON=/path/to/python3.11." >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  if ! "$PY" -m venv .venv; then
    echo "setup: could not create .venv. On Debian/Ubuntu: apt-get install python3-venv" >&2
    exit 1
  fi
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
echo "setup: ready (.venv/bin/tabletop)"
