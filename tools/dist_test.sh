#!/usr/bin/env bash
# Distributed evaluation on torchrun: tools/dist_test.sh CONFIG CHECKPOINT GPUS [tools/test.py options...]
# Metrics are gathered across ranks (each sample counted once). Multi-node variables as in dist_train.sh.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 CONFIG CHECKPOINT GPUS [test.py options...]" >&2
  exit 2
fi
CONFIG=$1
CHECKPOINT=$2
GPUS=$3
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
  --nproc_per_node="$GPUS" --master_port="$PORT" "$ROOT/tools/test.py" "$CONFIG" "$CHECKPOINT" --launcher pytorch \
  "${@:4}"
