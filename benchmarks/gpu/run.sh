#!/usr/bin/env bash
# The GPU suite (benchmarks/gpu/README.md): bash benchmarks/gpu/run.sh [--dry-run] [suite.py options]
# Needs torch; mmengine and its pure-Python dependencies come from the wheels in .whl/ when not installed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
SITE="$ROOT/.whl/site"
if ! "$PYTHON" -c 'import mmengine' 2>/dev/null; then
  if ! PYTHONPATH="$SITE" "$PYTHON" -c 'import mmengine' 2>/dev/null; then
    if ! ls "$ROOT"/.whl/*.whl >/dev/null 2>&1; then
      echo "mmengine is not importable and $ROOT/.whl holds no wheels: see benchmarks/gpu/README.md" >&2
      exit 2
    fi
    "$PYTHON" -m pip install --quiet --no-index --no-deps --target "$SITE" "$ROOT"/.whl/*.whl
  fi
  export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1
exec "$PYTHON" "$ROOT/benchmarks/gpu/suite.py" "$@"
