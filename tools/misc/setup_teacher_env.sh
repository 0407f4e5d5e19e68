#!/usr/bin/env bash
# Creates .venv-teacher for the MediaPipe teacher (tools/dataset_converters/mediapipe_teacher.py): mediapipe 0.10.21
# pins numpy<2 and protobuf<5, which the stack's .venv cannot take, so it gets a venv of its own with nothing of the
# stack in it (the teacher tool needs only mediapipe, OpenCV and numpy). Idempotent.
#
# Environment: TEACHER_VENV (default .venv-teacher), PYTHON (a Python 3.11 or 3.12; default the stack's base Python)
set -euo pipefail
cd "$(dirname "$0")/../.."

TEACHER_VENV=${TEACHER_VENV:-.venv-teacher}
if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then
    PYTHON=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')
  else
    PYTHON=python3
  fi
fi
if [ ! -x "$TEACHER_VENV/bin/python" ]; then
  echo "==> creating $TEACHER_VENV ($PYTHON)"
  "$PYTHON" -m venv "$TEACHER_VENV"
fi
if ! "$TEACHER_VENV/bin/python" -c "import mediapipe.solutions.holistic" 2>/dev/null; then
  echo "==> mediapipe (requirements/teacher.txt)"
  "$TEACHER_VENV/bin/python" -m pip install -q -r requirements/teacher.txt
fi
echo "==> done: $TEACHER_VENV/bin/python tools/dataset_converters/mediapipe_teacher.py --help"
