#!/usr/bin/env bash
# Distributed evaluation on torchrun: tools/dist_test.sh CONFIG CHECKPOINT GPUS [tools/test.py options...]
# Metrics are gathered across ranks (each sample counted once). Multi-node variables as in dist_train.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tools/launch_common.sh"
require_args 3 "CONFIG CHECKPOINT GPUS [test.py options...]" "$@"
CONFIG=$1
CHECKPOINT=$2
GPUS=$3
require_gpus "$GPUS"
exec_torchrun "$GPUS" "$ROOT/tools/test.py" "$CONFIG" "$CHECKPOINT" --launcher pytorch "${@:4}"
