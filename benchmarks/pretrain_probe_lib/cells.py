"""Where each cell of the benchmark keeps its files (one JSON per cell under ``--results``, training work
dirs and checkpoints under ``--work-dir``), and how they are read and written."""
import json
import os
import os.path as osp
import resource

from . import ROOT, Setting, variant_iters


def data_roots(setting: Setting) -> tuple[str, str]:
    suffix = '' if setting.name == 'full' else f'_{setting.name}'
    return (osp.join(ROOT, 'data', f'synthhumans_unlabeled{suffix}'),
            osp.join(ROOT, 'data', f'synthhumans_probe{suffix}'))


def pretrain_json(args, variant: str, seed: int) -> str:
    return osp.join(args.results, 'pretrain', f'{variant}-s{seed}.json')


def probe_json(args, backbone: str, seed: int, task: str, budget: int) -> str:
    return osp.join(args.results, 'probe', f'{backbone}-s{seed}-{task}-{budget}.json')


def backbone_file(args, variant: str, seed: int) -> str:
    return osp.join(args.work_dir, f'{variant}-s{seed}', 'teacher_backbone.safetensors')


def semantic_json(args, backbone: str, seed: int, feature: str = 'pooled') -> str:
    """The semantic cell of one backbone on one feature (``SEMANTIC_FEATURES``)."""
    suffix = '' if feature == 'pooled' else f'-{feature}'
    return osp.join(args.results, 'probe', f'{backbone}-s{seed}-semantic{suffix}.json')


def finetune_json(args, run: str, seed: int) -> str:
    """The cell of one fine-tuning run (``FINETUNE_RUNS``) and seed."""
    return osp.join(args.results, 'finetune', f'{run}-s{seed}.json')


def health_json(args, lever: str, seed: int = 0) -> str:
    return osp.join(args.health_results, f'{lever}-s{seed}.json')


def lever_work_dir(args, lever: str, seed: int = 0) -> str:
    return osp.join(args.work_dir, 'health', f'{lever}-s{seed}')


def lever_checkpoint(args, lever: str, seed: int = 0) -> str:
    """The final pretraining checkpoint of a lever cell (its teacher is ``lever-<name>``'s probed backbone)."""
    return osp.join(lever_work_dir(args, lever, seed), f'iter_{args.setting.iters}.pth')


def variant_checkpoint(args, variant: str, seed: int) -> str:
    """The final pretraining checkpoint of a variant's run."""
    return osp.join(args.work_dir, f'{variant}-s{seed}', f'iter_{variant_iters(args.setting, variant)}.pth')


def write_json(path: str, data: dict) -> None:
    os.makedirs(osp.dirname(path), exist_ok=True)
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def read_json(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
