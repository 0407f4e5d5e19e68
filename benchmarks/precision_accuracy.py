"""What each inference precision costs in accuracy: the shipped tiny models' validation metrics in fp32 (torch eager),
ONNX Runtime fp32, ONNX Runtime int8 (dynamic, ``sapiens2.deploy.quantize``) and torch bf16 (autocast).

    python benchmarks/precision_accuracy.py                                  # all six tasks, 64 validation images
    python benchmarks/precision_accuracy.py --tasks pose seg --num-val 16    # a quick look

Each task's model (``sapiens2/demo_models``) is evaluated by its config's test loop (``runner.test()``, the metrics
of ``tools/misc/train_demo_models.py``) on a fresh SynthHumans validation set rendered at the demo size (seed 1, not
the cards' 200 images: the comparison between precisions is what counts). The ONNX models are exported into a
temporary folder with ``sapiens2.deploy.export.export_model`` (normalised input, fp32 RoPE) and quantized with
``quantize_onnx``; they replace the torch backbone + head in the test loop (the flip test and the decoding stay the
config's). bf16 runs the test step under ``torch.autocast('cpu', torch.bfloat16)``, emulated on a CPU without
AVX512-BF16 or AMX (where ``sapiens2-infer --dtype bf16`` refuses it for speed, not for accuracy). The table gives
each metric and its change relative to fp32 (goal: within 1 %).
"""
import argparse
import contextlib
import logging
import os
import os.path as osp
import sys
import tempfile
import time
from typing import Dict, Iterator, List

import torch
from torch import nn
from torch.utils import _pytree as pytree

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path.insert(0, REPO)

PRECISIONS = ('fp32', 'ort-fp32', 'ort-int8', 'bf16')


def demo_tool():
    """``tools/misc/train_demo_models.py`` as a module (its tasks, configs and data options)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location('train_demo_models',
                                                  osp.join(REPO, 'tools', 'misc', 'train_demo_models.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Inputs:
    """What the patched ``extract_feat`` hands to the head: the network input itself."""

    def __init__(self, inputs: torch.Tensor) -> None:
        self.inputs = inputs


def head_of(model: nn.Module) -> nn.Module:
    return model.head if hasattr(model, 'head') else model.decode_head


@contextlib.contextmanager
def onnx_forward(model: nn.Module, path: str, input_size) -> Iterator[None]:
    """Within the context, ``model``'s backbone + head forward runs the ONNX file ``path`` with ONNX Runtime (the
    estimator's ``extract_feat`` passes its input through; the head's ``forward`` returns the session's outputs in
    the structure of the torch head's)."""
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    session = onnxruntime.InferenceSession(path, options, providers=['CPUExecutionProvider'])
    with torch.no_grad():
        _, spec = pytree.tree_flatten(model(torch.zeros(1, 3, *input_size), None, mode='tensor'))
    head = head_of(model)

    def forward(feats):
        outputs = session.run(None, {session.get_inputs()[0].name: feats.inputs.float().numpy()})
        return pytree.tree_unflatten([torch.from_numpy(o) for o in outputs], spec)

    model.extract_feat, head.forward = _Inputs, forward
    try:
        yield
    finally:
        del model.extract_feat, head.forward


@contextlib.contextmanager
def bf16_test_step(model: nn.Module) -> Iterator[None]:
    test_step = model.test_step

    def autocast_test_step(data):
        with torch.autocast('cpu', dtype=torch.bfloat16):
            return test_step(data)

    model.test_step = autocast_test_step
    try:
        yield
    finally:
        del model.test_step


def build_runner(tool, name: str, data_root: str, work_dir: str):
    """The test runner of task ``name``'s shipped model on ``data_root``."""
    from sapiens2.engine.launch import build_runner as build
    from sapiens2.engine.launch import load_config, prepare_test_config
    task = tool.TASKS[name]
    for module in task.imports:
        __import__(module)
    checkpoint = osp.join(tool.SHIPPED_DIR, f'{tool.config_name(task)}.safetensors')
    cfg = load_config(osp.join(REPO, task.config), task.data_options(data_root))
    cfg = prepare_test_config(cfg, task.config, checkpoint, work_dir)
    cfg.work_dir = work_dir
    cfg.default_hooks.pop('checkpoint', None)
    cfg.default_hooks.pop('visualization', None)
    cfg.log_level = 'WARNING'
    return build(cfg)


def evaluate_precisions(tool, name: str, data_root: str, work_dir: str, precisions) -> Dict[str, Dict[str, float]]:
    """{precision: metrics} of task ``name``; the ONNX models are exported and quantized under ``work_dir``."""
    from mmengine.registry import DefaultScope

    from sapiens2.deploy.export import export_model
    from sapiens2.deploy.quantize import quantize_onnx
    from sapiens2.models.backbones.sapiens2 import Sapiens2
    runner = build_runner(tool, name, data_root, work_dir)
    results = {}
    with DefaultScope.overwrite_default_scope(runner.cfg.default_scope):
        runner.load_or_resume()
        model = getattr(runner.model, 'module', runner.model).eval()
        input_size = tuple(next(m for m in model.modules() if isinstance(m, Sapiens2)).img_size)
        onnx = {}
        if {'ort-fp32', 'ort-int8'} & set(precisions):
            onnx['ort-fp32'] = export_model(model, input_size, osp.join(work_dir, name), formats=('onnx', ),
                                            include_preprocess=False)['onnx']
            onnx['ort-int8'] = osp.join(work_dir, f'{name}.int8.onnx')
            quantize_onnx(onnx['ort-fp32'], onnx['ort-int8'])
        for precision in precisions:
            context = (onnx_forward(model, onnx[precision], input_size) if precision in onnx else
                       bf16_test_step(model) if precision == 'bf16' else contextlib.nullcontext())
            with context:
                results[precision] = {k: float(v) for k, v in runner.test().items()}
    return results


def table(tool, all_results: Dict[str, Dict[str, Dict[str, float]]], precisions) -> List[str]:
    lines = ['| task | metric | ' + ' | '.join(precisions) + ' |', '|---|---|' + '---|' * len(precisions)]
    for name, results in all_results.items():
        metric = tool.TASKS[name].headline
        ref = results[precisions[0]][metric]
        cells = []
        for precision in precisions:
            value = results[precision][metric]
            change = '' if precision == precisions[0] else f' ({100 * (value - ref) / abs(ref):+.2f} %)'
            cells.append(f'{value:.4g}{change}')
        lines.append(f'| {name} | {metric} | ' + ' | '.join(cells) + ' |')
    return lines


def main(argv=None) -> List[str]:
    tool = demo_tool()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--tasks', nargs='+', choices=sorted(tool.TASKS), default=list(tool.TASKS))
    parser.add_argument('--precisions', nargs='+', choices=PRECISIONS, default=list(PRECISIONS))
    parser.add_argument('--num-val', type=int, default=64)
    parser.add_argument('--data-root', help='a SynthHumans folder to (re)use; default: rendered in a temporary one')
    args = parser.parse_args(argv)
    if args.precisions[0] != 'fp32':
        parser.error('the first precision is the reference: give fp32 first')
    from mmengine.logging import MMLogger

    from sapiens2.datasets.synthhumans import ensure_synthhumans
    MMLogger.get_current_instance().setLevel(logging.WARNING)
    start, load = time.time(), os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix='precision-') as tmp:
        root = ensure_synthhumans(args.data_root or osp.join(tmp, 'synthhumans'), num_train=1, num_val=args.num_val,
                                  size=tool.DATA['size'], seed=1)
        results = {}
        for name in args.tasks:
            work_dir = osp.join(tmp, name)
            os.makedirs(work_dir)
            results[name] = evaluate_precisions(tool, name, root, work_dir, args.precisions)
            print(f'{name}: done after {time.time() - start:.0f} s', flush=True)
    lines = table(tool, results, args.precisions)
    print(f'shipped tiny models, {args.num_val} SynthHumans validation images at {tool.DATA["size"]} (seed 1), '
          f'{torch.get_num_threads()} threads, load average {load:.1f} -> {os.getloadavg()[0]:.1f}, '
          f'{time.time() - start:.0f} s')
    print('\n'.join(lines))
    return lines


if __name__ == '__main__':
    main()
