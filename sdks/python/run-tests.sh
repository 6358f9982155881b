#!/usr/bin/env bash
# The Python SDK's suite, as CI runs it: mypy --strict, then pytest (unit and integration tests;
# the integration tests start a real server through sdks/launcher). Exits non-zero on any failure.
#
#   sdks/python/run-tests.sh                 # from anywhere
#   sdks/python/run-tests.sh --install-deps  # first installs the Debian packages it needs (root)
#   FILESHARE_SLOW_TESTS=1 sdks/python/run-tests.sh   # also the 1 GiB memory measurements
#
# Needs Debian's /usr/bin/python3 (>= 3.11) with python3-httpx and python3-pytest, mypy,
# python3-venv, python3-pip, python3-setuptools and python3-wheel (the wheel-in-a-venv test), and
# Node.js >= 20 with the repository root built (`npm run build` at the root: dist/server.js).
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-/usr/bin/python3}

if [ "${1:-}" = "--install-deps" ]; then
  shift
  missing=()
  "$PYTHON" -c 'import httpx' 2>/dev/null || missing+=(python3-httpx)
  "$PYTHON" -c 'import pytest' 2>/dev/null || missing+=(python3-pytest)
  # The "from source" test: a wheel built offline and installed into a fresh venv.
  "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
  "$PYTHON" -c 'import pip' 2>/dev/null || missing+=(python3-pip)
  "$PYTHON" -c 'import setuptools' 2>/dev/null || missing+=(python3-setuptools)
  "$PYTHON" -c 'import wheel' 2>/dev/null || missing+=(python3-wheel)
  # The webhook verifier's tests with FastAPI's (Starlette) and Flask's (Werkzeug) request headers;
  # skipped without them.
  "$PYTHON" -c 'import starlette' 2>/dev/null || missing+=(python3-starlette)
  "$PYTHON" -c 'import werkzeug' 2>/dev/null || missing+=(python3-werkzeug)
  command -v mypy >/dev/null || missing+=(mypy)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]} (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
  fi
fi

echo "== $("$PYTHON" --version), httpx $("$PYTHON" -c 'import httpx; print(httpx.__version__)'), $(mypy --version)"
if [ ! -f ../../dist/server.js ]; then
  echo "!! ../../dist/server.js is missing: run 'npm run build' at the repository root first" >&2
  exit 2
fi

echo "== sync client up to date with the async one (scripts/unasync.py --check)"
"$PYTHON" scripts/unasync.py --check

echo "== mypy --strict (package, examples, scripts, tests)"
MYPYPATH=src:tests mypy --strict --python-executable "$PYTHON" -p fileshare
MYPYPATH=src:tests mypy --strict --python-executable "$PYTHON" --explicit-package-bases examples scripts tests

echo "== pytest"
exec "$PYTHON" -m pytest -p no:cacheprovider "$@"
