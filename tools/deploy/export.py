"""Export a config's model (backbone + head) into a bundle folder that ``sapiens2-infer --model FOLDER`` runs with ONNX
Runtime, checking parity with eager.

Usage: python tools/deploy/export.py CONFIG [CHECKPOINT] --out FOLDER [--formats onnx pt2] [--int8] [--opset 18|23]
       [--no-preprocess]

CONFIG is a config file or a model alias (``seg-1b``: its config and, without CHECKPOINT, its checkpoint);
CHECKPOINT a file, ``hf://org/repo[@revision][/<file>]`` or an alias.

Writes FOLDER/sapiens2_bundle.json (the manifest: task, input size, preprocessing, the model's layout, outputs,
parity figures, schema version), FOLDER/config.py (the model's config) and FOLDER/model.onnx, plus FOLDER/model.pt2
with ``--formats pt2`` (:mod:`sapiens2.deploy.bundle`). Fails with a non-zero exit code when an export does not
match the eager model within tolerance (docs/inference.md). Existing files are replaced only when an earlier export
wrote them there, or with --overwrite. Two exports into one FOLDER at once run one after the other (the second waits,
saying so), so a bundle's files always come from one model.
"""
import argparse
import contextlib
import importlib.util
import json
import os
import os.path as osp
import sys
from typing import Optional

import sapiens2_entry  # noqa: F401  (first: sapiens2 imports without torch until main() registers its modules)

# isort: split
from sapiens2.deploy.bundle import bundle_files
from sapiens2.deploy.onnx_opsets import DEFAULT_OPSET, ONNX_OPSETS
from sapiens2.engine.checkpoint.policy import TRUST_CHECKPOINT_HELP
from sapiens2.hub.locate import fetch_released
from sapiens2.hub.model_zoo import resolve_model
from sapiens2.registration import register_all_modules
from sapiens2.utils.cli_errors import add_debug_argument, run_cli


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description='Export a Sapiens2 model into a bundle folder (ONNX, config, '
                                     'manifest), optionally with a torch.export program')
    parser.add_argument('config', help='config file, or a model alias such as seg-1b')
    parser.add_argument('checkpoint', nargs='?', default=None,
                        help='weights: a file, hf://org/repo[@revision][/<file>] or an alias (default: the alias of '
                        'CONFIG; random weights for a config file)')
    parser.add_argument('--out', required=True, help='bundle folder, e.g. exports/pose-1b')
    parser.add_argument('--formats', nargs='+', choices=('onnx', 'pt2'), default=None,
                        help='model files to write (default: onnx, which the bundle runs with; pt2 alone when '
                        'onnxruntime is not installed)')
    parser.add_argument('--int8', action='store_true',
                        help='also write model.int8.onnx (ONNX Runtime dynamic int8 of the linear layers), which '
                        'sapiens2-infer --dtype int8 runs')
    parser.add_argument('--opset', type=int, choices=ONNX_OPSETS, default=DEFAULT_OPSET,
                        help='ONNX opset (default %(default)s: attention as one fused Attention node; 18 writes it as '
                        'MatMul-Softmax-MatMul and RMSNorm as primitive ops, for runtimes without opset 23 (older '
                        'onnxruntime or TensorRT builds)')
    parser.add_argument('--no-preprocess', action='store_true',
                        help='export without mean/std + BGR->RGB (input = normalised RGB)')
    parser.add_argument('--trust-checkpoint', action='store_true', help=TRUST_CHECKPOINT_HELP)
    parser.add_argument('--overwrite', action='store_true',
                        help='replace existing files in FOLDER that an earlier export did not write')
    parser.add_argument('--batch-size', type=int, default=2, help='batch of the tracing example')
    parser.add_argument('--atol', type=float, default=1e-4, help='ONNX parity absolute tolerance')
    parser.add_argument('--rtol', type=float, default=1e-4, help='ONNX parity tolerance relative to max |output|')
    add_debug_argument(parser)
    args = parser.parse_args()
    if args.batch_size < 2:
        parser.error('--batch-size must be at least 2: torch.export fixes a batch dimension traced at size 1')
    if args.int8 and args.formats is not None and 'onnx' not in args.formats:
        parser.error('--int8 quantizes the ONNX model: add onnx to --formats')
    return args


def main() -> int:
    args = parse_args()
    from sapiens2.apis.io.output_guard import writing_into
    config, checkpoint = resolve_model(args.config, args.checkpoint)
    formats = args.formats
    if formats is None:
        formats = ['onnx'] if importlib.util.find_spec('onnxruntime') else ['pt2']
        if 'onnx' not in formats:
            print('onnxruntime is not installed: exporting pt2 only, a bundle that sapiens2-infer cannot run '
                  '(pip install -r requirements/optional.txt)')
    if args.int8 and 'onnx' not in formats:
        raise ValueError('--int8 quantizes the ONNX model, which needs onnxruntime (pip install -r '
                         'requirements/optional.txt)')
    created = not osp.isdir(args.out)
    try:
        with writing_into(args.out, '--out'):  # a second export into --out waits: a bundle's files are of one model
            files = _export(args, config, checkpoint, formats)
    except BaseException:  # a full disk, Ctrl-C...: a folder this run made holds no half bundle afterwards
        if created:
            for path in bundle_files(args.out, formats, args.int8).values():
                with contextlib.suppress(OSError):
                    os.remove(path)
            with contextlib.suppress(OSError):
                os.rmdir(args.out)  # only when empty (the folder's lock is gone with the lock)
        raise
    if files is None:
        return 1
    for kind, path in files.items():
        print(f'{kind}: {path}')
    with open(files['manifest']) as f:
        for report in json.load(f)['parity']:
            print(f"parity {report['backend']}: passed, max |exported - eager| "
                  f"{_figures(report['max_abs_diff'])} <= bound {_figures(report['bound'])}")
    return 0


def _export(args: argparse.Namespace, config: str, checkpoint: str, formats: list) -> Optional[dict]:
    """Write the bundle into ``args.out`` (holding its lock); its files by kind, None when parity failed."""
    from sapiens2.apis.io.output_guard import OutputGuard
    guard = OutputGuard(args.out, overwrite=args.overwrite)
    outputs = list(bundle_files(args.out, formats, args.int8).values())
    for path in outputs:
        guard.check(path)
    fetch_released(checkpoint)  # an unreachable released checkpoint fails before torch is imported
    register_all_modules()
    from sapiens2.deploy.bundle import write_bundle
    from sapiens2.deploy.export import ExportParityError, Tolerance, build_for_export
    from sapiens2.deploy.quantize import add_int8
    model, _ = build_for_export(config, checkpoint, args.trust_checkpoint or None)
    try:
        files = write_bundle(model, args.out, formats, include_preprocess=not args.no_preprocess,
                             batch_size=args.batch_size, tol=Tolerance(args.atol, args.rtol), opset=args.opset)
        if args.int8:
            files['int8'] = add_int8(args.out, overwrite=True)  # the guard has checked the file
    except ExportParityError as err:
        print(f'parity: FAILED, {err}')
        return None
    finally:
        guard.record(path for path in outputs if osp.exists(path))
    return files


def _figures(values) -> str:
    return ', '.join(f'{v:.2e}' for v in values)


if __name__ == '__main__':
    sys.exit(run_cli(main))
