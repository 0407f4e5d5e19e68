#!/usr/bin/env bash
# Distributed evaluation on torchrun: tools/dist_test.sh CONFIG CHECKPOINT GPUS [tools/test.py options...]
# Metrics are gathered across ranks (each sample counted once). Multi-node variables as in dist_train.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tools/launch_common.sh"
take_args test.py CONFIG CHECKPOINT GPUS -- "$@"
exec_torchrun "$GPUS" "$ROOT/tools/test.py" "$CONFIG" "$CHECKPOINT" --launcher pytorch "${@:4}"
