# Sourced by tools/dist_train.sh, dist_test.sh, slurm_train.sh, dist_infer.sh and slurm_infer.sh once ROOT is the
# checkout: the arguments, and PYTHON ($PYTHON if set, else the checkout's .venv, created by `make install`, when it
# exists, else python on the PATH) with the checkout first on PYTHONPATH.

# take_args TOOL NAME... -- ARG...: set each NAME to the next ARG; print the usage and exit 2 when ARGs run short.
take_args() {
  local tool=$1 names=() name
  shift
  while [ "$1" != -- ]; do
    names+=("$1")
    shift
  done
  shift
  if [ $# -lt ${#names[@]} ]; then
    echo "usage: $0 ${names[*]} [$tool options...]" >&2
    exit 2
  fi
  for name in "${names[@]}"; do
    printf -v "$name" '%s' "$1"
    shift
  done
}

# exec_torchrun GPUS SCRIPT ARG...: run SCRIPT with ARGs on GPUS processes of this node under torchrun (exit 2 unless
# GPUS is an integer >= 1). Multi-node: the same NNODES, MASTER_ADDR, PORT on every node and a distinct NODE_RANK.
exec_torchrun() {
  local gpus=$1
  shift
  case "$gpus" in
    ''|*[!0-9]*|0*) echo "$(basename "$0"): error: GPUS is '$gpus': give the number of processes per node, an integer >= 1 (e.g. 2)" >&2
      exit 2 ;;
  esac
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
  exec "$PYTHON" -m torch.distributed.run --nnodes="${NNODES:-1}" --node_rank="${NODE_RANK:-0}" \
    --master_addr="${MASTER_ADDR:-127.0.0.1}" --nproc_per_node="$gpus" --master_port="${PORT:-29500}" "$@"
}

# exec_srun PARTITION JOB_NAME SCRIPT ARG...: run SCRIPT with ARGs as one SLURM task per GPU. Env: GPUS (total,
# default 8), GPUS_PER_NODE (8), CPUS_PER_TASK (5), SRUN_ARGS (extra srun options).
exec_srun() {
  local partition=$1 job_name=$2
  shift 2
  # shellcheck disable=SC2086
  exec srun -p "$partition" --job-name="$job_name" --gres=gpu:"${GPUS_PER_NODE:-8}" --ntasks="${GPUS:-8}" \
    --ntasks-per-node="${GPUS_PER_NODE:-8}" --cpus-per-task="${CPUS_PER_TASK:-5}" --kill-on-bad-exit=1 ${SRUN_ARGS:-} \
    "$PYTHON" -u "$@"
}

if [ -z "${PYTHON:-}" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON=$ROOT/.venv/bin/python; else PYTHON=python; fi
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
