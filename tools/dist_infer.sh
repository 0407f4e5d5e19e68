#!/usr/bin/env bash
# A labelling job on torchrun: tools/dist_infer.sh GPUS INPUTS... --out OUT [sapiens2-infer options...]
# e.g. tools/dist_infer.sh 8 photos/ --task pose --size 0.4b --out labels/   (docs/inference.md: labelling a dataset)
# Multi-node: run on every node with the same NNODES, MASTER_ADDR, PORT and a distinct NODE_RANK. Each rank labels its
# share on cuda:LOCAL_RANK (without a GPU: on the CPU over gloo); run the same command again to finish a stopped job.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tools/launch_common.sh"
take_args infer.py GPUS INPUT -- "$@"
exec_torchrun "$GPUS" "$ROOT/tools/infer.py" "${@:2}" --launcher pytorch
