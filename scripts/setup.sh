#!/usr/bin/env bash
# Creates .venv (Python >= 3.11) and installs Tabletop Companion with its test tools. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

# Debian packages: espeak-ng speaks, alsa-utils (aplay) plays; the card decks (gnome-cards-data,
# kdegames-card-data-kf5, rendered with librsvg2-bin) and table photos (mate-backgrounds, gnubg-data) feed the
# synthetic data engine, and the fonts (fonts-*) its procedural component art prints with; chromium runs the page's
# browser tests. Installed when we may (root with apt-get), otherwise named once.
# The index lettering of procedural decks (vision/synth/procedural.py) is drawn from these font families, split
# by family between training, validation and test.
INDEX_FONTS="fonts-roboto fonts-open-sans fonts-cantarell fonts-lato fonts-crosextra-carlito fonts-crosextra-caladea
 fonts-linuxlibertine fonts-ebgaramond fonts-comic-neue fonts-texgyre fonts-oldstandard fonts-sil-gentium fonts-junicode
 fonts-firacode fonts-hack fonts-league-spartan fonts-bebas-neue fonts-cabin fonts-quicksand fonts-yanone-kaffeesatz
 fonts-paratype fonts-go fonts-jura fonts-karla fonts-adf-accanthis"
APT_PACKAGES="espeak-ng alsa-utils chromium gnome-cards-data kdegames-card-data-kf5 librsvg2-bin mate-backgrounds gnubg-data fonts-dejavu-core fonts-liberation2 fonts-freefont-ttf fonts-urw-base35 $INDEX_FONTS"
missing=""
for pkg in $APT_PACKAGES; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q $missing >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q $missing >/dev/null; }
  else
    echo "setup: for speech, synthetic data and the browser tests, install the Debian packages:$missing (sudo apt-get install$missing); continuing without them."
  fi
fi
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
