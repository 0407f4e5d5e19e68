"""``sapiens2-infer`` / ``tools/infer.py``: run Sapiens2 task models on photos, folders or videos."""
import argparse
import json
import os.path as osp
import sys
from typing import List, Optional

from sapiens2.engine.checkpoint import TRUST_CHECKPOINT_HELP
from .model_zoo import SIZES, TASKS


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description='Run Sapiens2 models on images, folders of images, or videos. Pictures and raw results go to '
        '--out/<task>/.',
        epilog='examples:\n'
        '  sapiens2-infer photos/ --task pose seg normal --size 1b --out outputs/\n'
        '  sapiens2-infer clip.mp4 --model configs/pose/my_config.py --weights work_dirs/x/iter_1000.pth --out o/',
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('inputs', nargs='+', help='image files, folders of images, or video files')
    parser.add_argument('--out', required=True, help='output folder')
    parser.add_argument('--task', nargs='+', choices=TASKS, default=[],
                        help='tasks to run with the released models (aliases <task>-<size>)')
    parser.add_argument('--size', default='1b', choices=SIZES, help='model size for --task (default 1b)')
    parser.add_argument('--model', nargs='+', default=[], help='config files or aliases such as pose-1b')
    parser.add_argument('--weights', nargs='+', default=None,
                        help='checkpoints (.safetensors/.pth), one per --model (default: the alias checkpoint)')
    parser.add_argument('--trust-checkpoint', action='store_true', help=TRUST_CHECKPOINT_HELP)
    parser.add_argument('--device', default=None, help='cpu, cuda or cuda:N (default: cuda when available)')
    parser.add_argument('--dtype', default='fp32', choices=('fp32', 'bf16', 'fp16'),
                        help='forward precision (bf16/fp16 use autocast; meant for GPUs)')
    parser.add_argument('--batch-size', type=int, default=4, help='images (pose: person crops) per forward')
    parser.add_argument('--bboxes', default=None,
                        help='JSON file {image name: [[x1, y1, x2, y2(, score)], ...]} with person boxes for pose')
    parser.add_argument('--det-config', default=None, help='mmdet config of a person detector for pose')
    parser.add_argument('--det-checkpoint', default=None, help='checkpoint of the person detector')
    parser.add_argument('--bbox-thr', type=float, default=0.3, help='detector score threshold')
    parser.add_argument('--nms-thr', type=float, default=0.3, help='detector box NMS IoU threshold')
    parser.add_argument('--kpt-thr', type=float, default=0.3, help='keypoint score threshold for drawing')
    parser.add_argument('--no-vis', action='store_true', help='do not write pictures')
    parser.add_argument('--no-pred', action='store_true', help='do not write raw results')
    parser.add_argument('--quiet', action='store_true', help='no progress bar')
    args = parser.parse_args(argv)
    if not args.task and not args.model:
        parser.error('give --task (released models) and/or --model (config files or aliases)')
    if args.weights is not None and len(args.weights) != len(args.model):
        parser.error(f'--weights needs one checkpoint per --model ({len(args.model)}), got {len(args.weights)}')
    if bool(args.det_config) != bool(args.det_checkpoint):
        parser.error('--det-config and --det-checkpoint go together')
    return args


def pose_options(args: argparse.Namespace) -> dict:
    """Pose task arguments from the command line."""
    options = dict(kpt_thr=args.kpt_thr)
    if args.det_config:
        options.update(det_config=args.det_config, det_checkpoint=args.det_checkpoint, bbox_thr=args.bbox_thr,
                       nms_thr=args.nms_thr)
    return options


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    from .inferencer import Sapiens2Inferencer
    models = list(args.model) + [f'{task}-{args.size}' for task in args.task]
    weights = (list(args.weights) if args.weights else [None] * len(args.model)) + [None] * len(args.task)
    bboxes = None
    if args.bboxes:
        with open(args.bboxes) as f:
            bboxes = json.load(f)
    inferencer = Sapiens2Inferencer(models, weights, device=args.device, dtype=args.dtype,
                                    batch_size=args.batch_size, task_options=dict(pose=pose_options(args)),
                                    trust_checkpoint=args.trust_checkpoint)
    inferencer(args.inputs, out_dir=args.out, save_vis=not args.no_vis, save_pred=not args.no_pred, bboxes=bboxes,
               show_progress=not args.quiet, return_results=False)
    for task in inferencer.tasks:
        print(f'{task.name}: results in {osp.join(args.out, task.name)}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
