#!/usr/bin/env bash
# Training on a SLURM cluster: tools/slurm_train.sh PARTITION JOB_NAME CONFIG [tools/train.py options...]
# Env: GPUS (total, default 8), GPUS_PER_NODE (8), CPUS_PER_TASK (5), SRUN_ARGS (extra srun options), PYTHON.
# One task per GPU; tools/train.py --launcher slurm reads the rank and master address from SLURM's variables.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tools/launch_common.sh"
take_args train.py PARTITION JOB_NAME CONFIG -- "$@"
exec_srun "$PARTITION" "$JOB_NAME" "$ROOT/tools/train.py" "$CONFIG" --launcher slurm "${@:4}"
