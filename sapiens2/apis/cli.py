"""``sapiens2-infer`` / ``tools/infer.py``: run Sapiens2 task models on photos, folders or videos."""
import argparse
import functools
import os.path as osp
import sys
from typing import Callable, List, Optional

from sapiens2.engine.checkpoint.policy import TRUST_CHECKPOINT_HELP
from sapiens2.hub.locate import fetch_released
from sapiens2.hub.model_zoo import alias_for, resolve_model, sizes, tasks
from sapiens2.registration import register_modules
from sapiens2.structures.keypoint_formats import FORMAT_NAMES
from sapiens2.utils.cli_errors import add_debug_argument, run_cli
from sapiens2.utils.cli_types import non_negative, positive, smoothing_lag, threshold
from sapiens2.utils.devices import AUTO, DTYPES

from .io.output_switches import OUTPUT_SWITCHES


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description='Run Sapiens2 models on images, folders of images, or videos. Pictures and raw results go to '
        '--out/<task>/.',
        epilog='examples:\n'
        '  sapiens2-infer photos/ --task pose seg normal --size 1b --out outputs/\n'
        '  sapiens2-infer clip.mp4 --model configs/pose/my_config.py --weights work_dirs/x/iter_1000.pth --out o/\n'
        '  tools/dist_infer.sh 8 photos/ --task pose --size 0.4b --out labels/   # a labelling job on 8 GPUs '
        '(docs/inference.md: labelling a dataset)',
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('inputs', nargs='*', help='image files, folders of images, video files or GIFs, .txt files '
                        'listing such paths (one per line), glob patterns (quoted: \'data/**/*.jpg\'), webcam or '
                        'webcam:N, stream URLs (http://, rtsp://...)')
    parser.add_argument('--recursive', action='store_true',
                        help='also read the sub-folders of folder inputs (outputs keep their relative paths)')
    parser.add_argument('--out', help='output folder')
    parser.add_argument('--launcher', choices=('none', 'pytorch', 'slurm'), default=None,
                        help='run as a labelling job: sharded over the ranks torchrun (pytorch: tools/dist_infer.sh) '
                        'or srun (slurm: tools/slurm_infer.sh) starts, or one process (none); resumable (a rerun '
                        'skips the items done), unreadable items recorded in failures.jsonl, merged COCO files at '
                        'the end (docs/inference.md: labelling a dataset)')
    parser.add_argument('--workers', type=int, default=0,
                        help='decode images in this many DataLoader worker processes (default 0: one thread)')
    parser.add_argument('--merge', metavar='OUT', default=None,
                        help='only write the merged files (index.jsonl, failures.jsonl, COCO results and keypoint '
                        'annotations) of the labelling job in OUT, e.g. of one still running or stopped')
    parser.add_argument('--task', nargs='+', choices=tasks(), default=[],
                        help='tasks to run with the released models (aliases <task>-<size>, downloaded from the '
                        'Hugging Face Hub on first use)')
    parser.add_argument('--size', default='1b', choices=sizes(), help='model size for --task (default 1b)')
    parser.add_argument('--model', nargs='+', default=[],
                        help='config files, aliases such as pose-1b, or exported bundle folders '
                        '(tools/deploy/export.py)')
    parser.add_argument('--weights', nargs='+', default=None,
                        help='checkpoints (.safetensors/.pth, hf://org/repo[@revision][/<file>] or an alias), one per '
                        '--model (default: the alias checkpoint)')
    parser.add_argument('--trust-checkpoint', action='store_true', help=TRUST_CHECKPOINT_HELP)
    parser.add_argument('--device', default=None, help='cpu, cuda or cuda:N (default: cuda when available)')
    parser.add_argument('--dtype', default=AUTO, choices=DTYPES + (AUTO, ),
                        help='forward precision (default auto: bf16 on CPUs with AVX512-BF16 or AMX and on CUDA GPUs '
                        'that compute bf16 natively, int8 on CPU classes where it was measured to pay (AVX2) and for '
                        'a bundle with an int8 model, else fp32; the pick is said in one line and recorded in the '
                        'outputs: docs/inference.md). fp32: the official numerics; bf16/fp16 use autocast (fp16 on '
                        'GPUs only); int8: an int8 bundle with onnxruntime, or with torch the backbone\'s linear '
                        'layers in int8 (AVX2: torch\'s dynamic int8 layers; VNNI: compiled at the first call)')
    parser.add_argument('--compile', action='store_true',
                        help='run the backbone compiled (torch): seconds to a minute at the first call, then faster '
                        '(e.g. bf16 on AMX CPUs 1.1-1.2x); for folders and videos (docs/performance.md)')
    parser.add_argument('--backend', choices=('torch', 'onnxruntime'), default=None,
                        help='default: onnxruntime for bundle folders, torch otherwise')
    parser.add_argument('--providers', nargs='+', default=None,
                        help='ONNX Runtime execution providers, e.g. CUDAExecutionProvider CPUExecutionProvider '
                        '(default: from --device)')
    parser.add_argument('--batch-size', type=int, default=4, help='images (pose: person crops) per forward')
    parser.add_argument('--bboxes', default=None,
                        help='JSON file with person boxes for pose: {image name: [[x1, y1, x2, y2(, score)], ...]}, a '
                        'COCO annotation file or COCO detection results (scoring >= --bbox-thr); it may cover more '
                        'images than the inputs')
    parser.add_argument('--det-config', default=None,
                        help='mmdet config of a person detector for pose (and for --people without pose)')
    parser.add_argument('--det-checkpoint', default=None,
                        help='checkpoint of the person detector (a file, hf://..., or pose-bbox-detector)')
    parser.add_argument('--person-finder', default='matting-tiny', metavar='MODEL',
                        help='without --bboxes or --det-config, people are the person regions of this matting or seg '
                        'model (alias or config; default the shipped matting-tiny); "none": the whole image is one '
                        'person box')
    parser.add_argument('--bbox-thr', type=threshold, default=0.3,
                        help='detector score threshold (also for the boxes of COCO detection results in --bboxes)')
    parser.add_argument('--nms-thr', type=threshold, default=0.3, help='detector box NMS IoU threshold')
    parser.add_argument('--kpt-thr', type=threshold, default=0.3, help='keypoint score threshold for drawing')
    parser.add_argument('--keypoint-format', choices=FORMAT_NAMES, default=None,
                        help='pose keypoints in this layout instead of the 308, for models that predict the 308 '
                        'keypoints (docs/pose.md: keypoint formats)')
    parser.add_argument('--no-track', action='store_true',
                        help='videos and streams: no track ids (and no smoothing); every frame on its own')
    parser.add_argument('--smooth', action=argparse.BooleanOptionalAction, default=True,
                        help='videos and streams: smoothing of the tracked keypoints and boxes (default on; two-sided '
                        'One-Euro in video files, a constant-velocity Kalman filter for live input; images are never '
                        'smoothed)')
    parser.add_argument('--smooth-min-cutoff', type=positive, default=None,
                        help='One-Euro cut-off at rest in Hz (lower: smoother; default 1.5 for video files; given '
                        'for causal smoothing, One-Euro replaces the Kalman filter, beta 1.5 unless given)')
    parser.add_argument('--smooth-beta', type=non_negative, default=None,
                        help='One-Euro speed coefficient, per box height per second (higher: less lag in fast '
                        'motion; default 0 for video files; given for causal smoothing, One-Euro replaces the Kalman '
                        'filter, min cut-off 1.0 unless given)')
    parser.add_argument('--smooth-lag', type=smoothing_lag, default=None, metavar='SECONDS',
                        help='seconds of later frames the smoothing waits for: two-sided, no lag in the result '
                        '(default 1 for video files, 0 for live input; 0: causal)')
    parser.add_argument('--det-interval', type=int, default=1,
                        help='videos and streams: run the person detector every N frames; the boxes in between come '
                        'from the tracked keypoints')
    parser.add_argument('--people', action='store_true',
                        help='one record per person from pose (or --bboxes) with seg, matting and/or pointmap: mask '
                        '(COCO RLE), 3D keypoints in metres, in the pose JSON and in --out/people/ (COCO results, '
                        '3D skeleton .ply, pictures; docs/inference.md: people)')
    parser.add_argument('--per-person', action='store_true',
                        help='with --people (implied): each dense map cropped to each person, no data outside its mask '
                        '(--out/people/<image>_person<k>_<task>.png and .npy)')
    parser.add_argument('--show', action='store_true', help='also show the pictures in a window as they are drawn')
    for switch in OUTPUT_SWITCHES:
        parser.add_argument(switch.flag, action='store_true', help=switch.help)
    parser.add_argument('--overwrite', action='store_true',
                        help='replace files in --out that sapiens2 did not write there (outputs never replace inputs)')
    parser.add_argument('--quiet', action='store_true', help='no progress bar')
    add_debug_argument(parser)
    args = parser.parse_args(argv)
    if args.merge is not None:
        if args.inputs or args.out or args.task or args.model:
            parser.error('--merge OUT takes no inputs, --out, --task or --model: it merges the outputs of the job in '
                         'OUT as they are')
        return args
    if not args.inputs:
        parser.error('give the inputs: images, folders, videos, .txt lists of paths or glob patterns')
    if args.out is None:
        parser.error('the following arguments are required: --out')
    if args.workers < 0:
        parser.error(f'--workers {args.workers}: give a number of decoding processes >= 0')
    if args.launcher is not None and args.show:
        parser.error('--show shows nothing in a labelling job (--launcher); drop one of them')
    if not args.out.strip():
        parser.error(f'--out {args.out!r} is not a folder name; give the folder to write the results to, e.g. --out '
                     'outputs/')
    if all(getattr(args, switch.dest) for switch in OUTPUT_SWITCHES) and not args.show:
        parser.error(f'{" with ".join(switch.flag for switch in OUTPUT_SWITCHES)} writes nothing and shows nothing; '
                     'drop one of them (or add --show)')
    if not args.task and not args.model:
        parser.error('give --task (released models) and/or --model (config files or aliases)')
    if args.weights is not None and len(args.weights) != len(args.model):
        parser.error(f'--weights needs one checkpoint per --model ({len(args.model)}), got {len(args.weights)}')
    if bool(args.det_config) != bool(args.det_checkpoint):
        parser.error('--det-config and --det-checkpoint go together')
    if args.det_interval < 1 or (args.det_interval > 1 and not args.det_config):
        parser.error(f'--det-interval {args.det_interval}: give a number >= 1, and --det-config/--det-checkpoint '
                     'for more than 1 (the detector it runs every N frames)')
    if args.recursive:
        out = osp.realpath(args.out)
        for folder in filter(osp.isdir, args.inputs):
            if out == osp.realpath(folder) or out.startswith(osp.join(osp.realpath(folder), '')):
                parser.error(f'--out {args.out} is inside the input folder {folder}: with --recursive a later run '
                             'would read its outputs as inputs; choose an --out outside it')
    try:
        args.aliases = [alias_for(task, args.size) for task in args.task]
    except ValueError as err:
        parser.error(str(err))
    return args


def pose_options(args: argparse.Namespace) -> dict:
    """Pose task arguments from the command line."""
    options = dict(kpt_thr=args.kpt_thr, keypoint_format=args.keypoint_format, track=not args.no_track,
                   smooth=args.smooth, person_finder=None if args.person_finder == 'none' else args.person_finder)
    for name in ('min_cutoff', 'beta', 'lag'):
        if getattr(args, f'smooth_{name}') is not None:
            options[name] = getattr(args, f'smooth_{name}')
    if args.det_config:
        options.update(det_config=args.det_config, det_checkpoint=args.det_checkpoint, bbox_thr=args.bbox_thr,
                       nms_thr=args.nms_thr, det_interval=args.det_interval)
    return options


def people_detector(args: argparse.Namespace, tasks: List[str], device: Optional[str] = None) -> Optional[Callable]:
    """The person detector of ``--det-config`` (else the ``--person-finder``) for the people of dense tasks without
    pose (pose runs its own), on ``device`` (default ``--device``)."""
    if 'pose' in tasks or not (args.people or args.per_person):
        return None
    if not args.det_config:
        from .person_finder import ForegroundPersonFinder
        if args.person_finder == 'none':
            return None
        return ForegroundPersonFinder(args.person_finder, device=device or args.device)
    from sapiens2.utils.devices import resolve_device

    from .pose_video.topdown import detect_persons, init_person_detector
    detector = init_person_detector(args.det_config, args.det_checkpoint, resolve_device(device or args.device))
    return functools.partial(detect_persons, detector, score_thr=args.bbox_thr, nms_thr=args.nms_thr)


def main(argv: Optional[List[str]] = None) -> int:
    """The command; a user mistake (missing file, unknown alias, bad config...) is one error line, exit code 1."""
    return run_cli(_main, argv, prog='sapiens2-infer')


def _main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    if args.merge is not None:
        from .labelling import merge_outputs
        counts = merge_outputs(args.merge, args.overwrite)
        print(f'merged {counts["done"]} labelled items ({counts["failed"]} failed) in {args.merge} (index.jsonl, '
              'failures.jsonl)')
        return 0
    from .io.input_lists import expand_inputs
    from .io.sources import collect_sources
    # input mistakes show before any model is built; a labelling job records an unreadable image and goes on
    sources = collect_sources(expand_inputs(args.inputs), args.recursive, check_images=args.launcher is None)
    if args.launcher is not None:
        live = [source.path for source in sources if source.live]
        if live:
            raise ValueError(f'a labelling job (--launcher) labels files; {live[0]} is a live stream: run it without '
                             '--launcher')
    if args.show:
        from .io.display import check_display
        check_display()
    models = list(args.model) + args.aliases
    weights = (list(args.weights) if args.weights else [None] * len(args.model)) + [None] * len(args.task)
    bboxes = None
    if args.bboxes:  # read and matched to the inputs before any model is built
        from .bbox_files import load_bboxes, match_bboxes
        bboxes = match_bboxes(load_bboxes(args.bboxes, args.bbox_thr), sources, f'--bboxes {args.bboxes}')
    for model, checkpoint in zip(models, weights):
        if not osp.isdir(model):  # a folder is a bundle, read when the inferencer is built
            # unknown aliases, missing configs and unreachable released checkpoints fail before torch is imported
            fetch_released(resolve_model(model, checkpoint)[1])
    if args.person_finder != 'none' and not osp.isdir(args.person_finder):  # its model is built at the first need
        try:
            resolve_model(args.person_finder, None)
        except FileNotFoundError as err:
            raise FileNotFoundError(f'--person-finder {args.person_finder}: {err}') from None
    register_modules()

    def build(device: Optional[str]) -> Callable:
        from .inferencer import Sapiens2Inferencer
        inferencer = Sapiens2Inferencer(models, weights, device=device, dtype=args.dtype,
                                        batch_size=args.batch_size, task_options=dict(pose=pose_options(args)),
                                        trust_checkpoint=args.trust_checkpoint, backend=args.backend,
                                        providers=args.providers, compile=args.compile)
        build.task_names = [task.name for task in inferencer.tasks]
        return functools.partial(
            inferencer, out_dir=args.out, bboxes=bboxes, return_results=False, overwrite=args.overwrite,
            show=args.show, people=args.people, per_person=args.per_person, workers=args.workers,
            person_detector=people_detector(args, build.task_names, device),
            **{switch.keyword: not getattr(args, switch.dest) for switch in OUTPUT_SWITCHES})

    if args.launcher is not None:
        from .labelling import run_job
        return run_job(args, sources, build)
    build(args.device)(sources, show_progress=not args.quiet)
    for name in build.task_names + (['people'] if args.people or args.per_person else []):
        print(f'{name}: results in {osp.join(args.out, name)}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
