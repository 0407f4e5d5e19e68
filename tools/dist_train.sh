#!/usr/bin/env bash
# Distributed training on torchrun: tools/dist_train.sh CONFIG GPUS [tools/train.py options...]
# Multi-node: run on every node with the same NNODES, MASTER_ADDR, PORT and a distinct NODE_RANK.
# Without a GPU the processes train on the CPU over gloo (see docs/distributed.md).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tools/launch_common.sh"
take_args train.py CONFIG GPUS -- "$@"
exec_torchrun "$GPUS" "$ROOT/tools/train.py" "$CONFIG" --launcher pytorch "${@:3}"
