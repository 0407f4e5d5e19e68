# Sourced by tools/dist_train.sh, dist_test.sh and slurm_train.sh once ROOT is the checkout: the argument checks, and
# PYTHON ($PYTHON if set, else the checkout's .venv, created by `make install`, when it exists, else python on the
# PATH) with the checkout first on PYTHONPATH.

# require_args COUNT USAGE ARGS...: print the usage and exit 2 when fewer than COUNT ARGS are given.
require_args() {
  local count=$1 usage=$2
  shift 2
  if [ $# -lt "$count" ]; then
    echo "usage: $0 $usage" >&2
    exit 2
  fi
}

# require_gpus GPUS: exit 2 unless GPUS, the processes per node, is an integer >= 1.
require_gpus() {
  case "$1" in
    ''|*[!0-9]*|0*) echo "$(basename "$0"): error: GPUS is '$1': give the number of processes per node, an integer >= 1 (e.g. 2)" >&2
      exit 2 ;;
  esac
}

# exec_torchrun GPUS SCRIPT ARGS...: run SCRIPT with ARGS on GPUS processes of this node under torchrun. Multi-node:
# the same NNODES, MASTER_ADDR, PORT on every node and a distinct NODE_RANK.
exec_torchrun() {
  local gpus=$1
  shift
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
  exec "$PYTHON" -m torch.distributed.run --nnodes="${NNODES:-1}" --node_rank="${NODE_RANK:-0}" \
    --master_addr="${MASTER_ADDR:-127.0.0.1}" --nproc_per_node="$gpus" --master_port="${PORT:-29500}" "$@"
}

if [ -z "${PYTHON:-}" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON=$ROOT/.venv/bin/python; else PYTHON=python; fi
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
