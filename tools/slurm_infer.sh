#!/usr/bin/env bash
# A labelling job on a SLURM cluster: tools/slurm_infer.sh PARTITION JOB_NAME INPUTS... --out OUT [sapiens2-infer options...]
# Env: GPUS (total, default 8), GPUS_PER_NODE (8), CPUS_PER_TASK (5), SRUN_ARGS (extra srun options), PYTHON.
# One task per GPU; sapiens2-infer --launcher slurm reads the rank and master address from SLURM's variables. Submit
# the same command again (e.g. after a pre-emption) to finish the job: the items done are skipped.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tools/launch_common.sh"
take_args infer.py PARTITION JOB_NAME INPUT -- "$@"
exec_srun "$PARTITION" "$JOB_NAME" "$ROOT/tools/infer.py" "${@:3}" --launcher slurm
