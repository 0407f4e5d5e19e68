#!/usr/bin/env bash
# Distributed training on torchrun: tools/dist_train.sh CONFIG GPUS [tools/train.py options...]
# Multi-node: run on every node with the same NNODES, MASTER_ADDR, PORT and a distinct NODE_RANK.
# Without a GPU the processes train on the CPU over gloo (see docs/distributed.md).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 CONFIG GPUS [train.py options...]" >&2
  exit 2
fi
CONFIG=$1
GPUS=$2
case "$GPUS" in
  ''|*[!0-9]*|0*) echo "$(basename "$0"): error: GPUS is '$GPUS': give the number of processes per node, an integer >= 1 (e.g. 2)" >&2
    exit 2 ;;
esac
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# $PYTHON if set, else the repository's .venv (created by `make install`) when it exists, else python on the PATH
if [ -z "${PYTHON:-}" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON=$ROOT/.venv/bin/python; else PYTHON=python; fi
fi

export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
exec "$PYTHON" -m torch.distributed.run --nnodes="$NNODES" --node_rank="$NODE_RANK" --master_addr="$MASTER_ADDR" \
  --nproc_per_node="$GPUS" --master_port="$PORT" "$ROOT/tools/train.py" "$CONFIG" --launcher pytorch "${@:3}"
