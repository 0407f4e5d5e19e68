#!/usr/bin/env bash
# Creates .venv with the verified sapiens2 stack (docs/install.md says why each step).
# Idempotent: every step is skipped when its result is already present.
#
# Environment:
#   PYTHON        interpreter used to create the venv (default python3)
#   VENV          venv folder (default .venv)
#   TORCH_SPEC    torch requirement (default torch==2.14.1 torchvision==0.29.1); set it to pick another build,
#                 e.g. TORCH_SPEC="torch==2.14.1 torchvision==0.29.1 --index-url <your CUDA wheel index>"
#   SAPIENS2_CACHE  folder for the compiled mmcv wheel, keyed by torch version (default ~/.cache/sapiens2)
#   SAPIENS2_NEED_GB  free GiB asked for on the venv's disk before torch is installed (default 8; the venv takes 6.6)
set -euo pipefail
cd "$(dirname "$0")/../.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
TORCH_SPEC=${TORCH_SPEC:-"torch==2.14.1 torchvision==0.29.1"}
MMCV_VERSION=2.1.0
CACHE=${SAPIENS2_CACHE:-$HOME/.cache/sapiens2}
PIP="$VENV/bin/python -m pip"

step() { echo "==> $*"; }

# PyPI's torch (a CUDA build) alone takes 5.5 GiB: say so before pip stops half-way with "No space left on device".
NEED_GB=${SAPIENS2_NEED_GB:-8}
if ! [[ $NEED_GB =~ ^[0-9]+$ ]]; then
  echo "setup_env.sh: SAPIENS2_NEED_GB must be a whole number of GiB, got '$NEED_GB'" >&2
  exit 1
fi
if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
  disk=$VENV
  while [ ! -e "$disk" ]; do disk=$(dirname "$disk"); done
  FREE_GB=$("$PYTHON" -c 'import shutil, sys; print(shutil.disk_usage(sys.argv[1]).free >> 30)' "$disk" || true)
  if [ -n "$FREE_GB" ] && [ "$FREE_GB" -lt "$NEED_GB" ]; then
    echo "setup_env.sh: $VENV needs about $NEED_GB GiB (PyPI's torch alone is 5.5 GiB) and its disk has $FREE_GB GiB" \
      "free: free some space, set VENV to a folder on a larger disk, or set SAPIENS2_NEED_GB=N to ask for less" >&2
    exit 1
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  step "creating $VENV"
  "$PYTHON" -m venv "$VENV"
  $PIP install -q --upgrade pip
fi

if ! "$VENV/bin/python" -c "import torch, torchvision" 2>/dev/null; then
  step "installing $TORCH_SPEC"
  # shellcheck disable=SC2086
  $PIP install -q $TORCH_SPEC
fi
TORCH_VERSION=$("$VENV/bin/python" -c "import torch; print(torch.__version__)")
# Keeps every later install from replacing torch.
echo "torch==${TORCH_VERSION%%+*}" > "$VENV/torch-pin.txt"
"$VENV/bin/python" -c "import torchvision; print('torchvision==' + torchvision.__version__.split('+')[0])" >> "$VENV/torch-pin.txt"
PIN="-c $VENV/torch-pin.txt"

step "build requirements"
$PIP install -q $PIN -r requirements/build.txt

if ! "$VENV/bin/python" -c "import mmcv.ops" 2>/dev/null; then
  WHEEL_DIR="$CACHE/mmcv-$MMCV_VERSION/torch-$TORCH_VERSION"
  mkdir -p "$WHEEL_DIR"
  if ! ls "$WHEEL_DIR"/mmcv-*.whl >/dev/null 2>&1; then
    step "compiling mmcv $MMCV_VERSION with ops for torch $TORCH_VERSION (10-15 minutes on 2 cores)"
    SRC=$(mktemp -d)
    $PIP download -q --no-deps --no-binary :all: --no-build-isolation "mmcv==$MMCV_VERSION" -d "$SRC"
    tar -xzf "$SRC"/mmcv-*.tar.gz -C "$SRC"
    # torch >= 2.6 headers need C++20; mmcv 2.1.0 forces c++14/c++17.
    sed -i -e 's/-std=c++14/-std=c++20/g' -e 's/-std=c++17/-std=c++20/g' "$SRC/mmcv-$MMCV_VERSION/setup.py"
    MMCV_WITH_OPS=1 MAX_JOBS=${MAX_JOBS:-$(nproc)} \
      $PIP wheel -q --no-build-isolation --no-deps "$SRC/mmcv-$MMCV_VERSION" -w "$WHEEL_DIR.tmp"
    mv "$WHEEL_DIR.tmp"/mmcv-*.whl "$WHEEL_DIR"/ && rm -rf "$WHEEL_DIR.tmp" "$SRC"
  fi
  step "installing mmcv from $WHEEL_DIR"
  $PIP install -q $PIN --no-deps --force-reinstall "$WHEEL_DIR"/mmcv-*.whl
fi

step "runtime requirements"
$PIP install -q $PIN -r requirements/runtime.txt
step "mmpose, mmsegmentation, mmdet (--no-deps: their metadata pulls chumpy)"
$PIP install -q $PIN --no-deps -r requirements/openmmlab.txt
if ! "$VENV/bin/python" -c "import xtcocotools.coco" 2>/dev/null; then
  step "xtcocotools from source against the installed numpy"
  $PIP install -q $PIN --no-binary xtcocotools --no-build-isolation xtcocotools==1.14.3
fi
step "test and optional requirements (export, logging), sapiens2 (editable)"
$PIP install -q $PIN -r requirements/tests.txt -r requirements/optional.txt
$PIP install -q $PIN --no-deps --no-build-isolation -e .
step "done"
