#!/usr/bin/env bash
# Create the separate venv that only the Exudyn side of the benchmark uses
# (benchmarks/.exudyn-venv, gitignored): exudyn, numpy, scipy from PyPI, no flexmbs.
#
#   bash benchmarks/exudyn/make_env.sh            # exudyn==1.13.6 (the version PEER_EXUDYN.md measured)
#   EXUDYN_VERSION= bash benchmarks/exudyn/make_env.sh    # the newest exudyn
#   PYTHON=/path/to/python3 bash benchmarks/exudyn/make_env.sh
#
# Exudyn ships wheels for CPython 3.8-3.13 on x86-64 Linux; checked with Debian's
# /usr/bin/python3 (3.11) and pyenv's 3.11/3.12.  Prints the installed exudyn version.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${EXUDYN_VENV:-$HERE/../.exudyn-venv}"
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
    for p in /usr/bin/python3 python3; do
        if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import venv, ensurepip' 2>/dev/null; then
            PYTHON="$p"; break
        fi
    done
fi
if [ -z "$PYTHON" ]; then
    echo "make_env.sh: no python3 with the venv and ensurepip modules found; set PYTHON=..." >&2
    exit 1
fi
VERSION="${EXUDYN_VERSION-1.13.6}"
SPEC="exudyn${VERSION:+==$VERSION}"
"$PYTHON" -m venv "$VENV"
if ! "$VENV/bin/python" -m pip install --disable-pip-version-check -q "$SPEC" numpy scipy; then
    echo "make_env.sh: 'pip install $SPEC numpy scipy' failed (is PyPI reachable from here?);" \
         "the venv at $VENV is incomplete: remove it and retry when pip has network" >&2
    exit 2
fi
"$VENV/bin/python" -c 'import exudyn, numpy, scipy; print("exudyn", exudyn.__version__, "numpy", numpy.__version__, "scipy", scipy.__version__)'
