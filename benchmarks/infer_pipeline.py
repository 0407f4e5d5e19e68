"""How busy ``Sapiens2Inferencer`` (what ``sapiens2-infer`` runs) keeps the model on a folder of images.

    python benchmarks/infer_pipeline.py                      # tiny arch at 256x192 and 0.1b at 512x384, CPU
    python benchmarks/infer_pipeline.py --models tiny --images 64 --batch-size 8 --device cuda

For each model (body-part segmentation with random weights, built from the packaged nano seg config with the arch
and input size overridden) it times, interleaved and repeated: the model's own forward on ready-made input batches
(``model(x, mode='tensor')``, the upper bound), and the inferencer on a folder of JPEG files (reading, decoding,
resizing, forward, post-processing and, as the CLI does, writing pictures and raw results). It prints both
images/s and their ratio (median over repeats); the goal is a ratio >= 0.9.
"""
import argparse
import os
import os.path as osp
import statistics
import tempfile
import time

import cv2
import numpy as np
import torch

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
BASE_CONFIG = osp.join(ROOT, 'configs/seg/sapiens2_nano_seg_synthhumans-128x96.py')
MODELS = {  # name: (arch, embed dims, input (H, W))
    'tiny': ('sapiens2_tiny', 128, (256, 192)),
    '0.1b': ('sapiens2_0.1b', 768, (512, 384)),
}


def write_config(directory: str, arch: str, embed_dims: int, size) -> str:
    """The packaged nano seg config with the arch and the input size (model and test pipeline) overridden."""
    path = osp.join(directory, f'{arch}_seg_{size[0]}x{size[1]}.py')
    with open(path, 'w') as f:
        f.write(f"_base_ = [{BASE_CONFIG!r}]\n"
                f"model = dict(data_preprocessor=dict(size={tuple(size)}), decode_head=dict(in_channels={embed_dims}),"
                f" backbone=dict(arch={arch!r}, img_size={tuple(size)}, patch_size=16))\n"
                f"test_dataloader = dict(dataset=dict(pipeline=[dict(type='LoadImageFromFile'), dict(type='Resize', "
                f"scale={(size[1], size[0])}, keep_ratio=False), dict(type='PackSegInputs')]))\n")
    return path


def check_input_size(inferencer, size) -> None:
    """Fail unless the inferencer's test pipeline resizes to the size the forward-only rate is measured at."""
    from sapiens2.apis.pipeline import config_test_pipeline
    scales = [t['scale'] for t in config_test_pipeline(inferencer.tasks[0].cfg) if t['type'] == 'Resize']
    if scales != [(size[1], size[0])]:
        raise RuntimeError(f'the test pipeline resizes to {scales} (W, H), not to the model input {size[::-1]}')


def write_images(directory: str, count: int, seed: int = 0) -> str:
    """``count`` 640x480 JPEG photos-like images (smooth gradients and noise) in a new folder."""
    folder = osp.join(directory, 'images')
    os.makedirs(folder)
    rng = np.random.default_rng(seed)
    ys, xs = np.mgrid[0:480, 0:640]
    for i in range(count):
        base = (np.sin(xs / rng.uniform(20, 80)) + np.cos(ys / rng.uniform(20, 80)))[..., None] * 60 + 128
        image = np.clip(base + rng.normal(0, 20, (480, 640, 3)), 0, 255).astype(np.uint8)
        cv2.imwrite(osp.join(folder, f'{i:04d}.jpg'), image)
    return folder


def measure(name: str, args: argparse.Namespace, directory: str, folder: str) -> dict:
    from sapiens2.apis import Sapiens2Inferencer
    arch, embed_dims, size = MODELS[name]
    config = write_config(directory, arch, embed_dims, size)
    inferencer = Sapiens2Inferencer(config, device=args.device, dtype=args.dtype, batch_size=args.batch_size,
                                    task_options=dict(pose=dict(person_finder=None)))  # pose: one whole-image box
    check_input_size(inferencer, size)
    task = inferencer.tasks[0]
    x = torch.randn(args.batch_size, 3, *size, device=task.device)
    batches = -(-args.images // args.batch_size)
    sync = torch.cuda.synchronize if task.device.type == 'cuda' else (lambda: None)

    def forward_only() -> float:
        start = time.perf_counter()
        with torch.no_grad(), task.autocast():
            for _ in range(batches):
                task.model(x, mode='tensor')
        sync()
        return batches * args.batch_size / (time.perf_counter() - start)

    def pipeline() -> float:
        out_dir = tempfile.mkdtemp(dir=directory)
        start = time.perf_counter()
        inferencer(folder, out_dir=out_dir, show_progress=False, return_results=False)
        sync()
        return args.images / (time.perf_counter() - start)

    forward_only()
    pipeline()  # warm-up: first calls allocate and initialise
    rates = dict(forward=[], pipeline=[])
    for _ in range(args.repeats):
        rates['forward'].append(forward_only())
        rates['pipeline'].append(pipeline())
    ratio = statistics.median(p / f for p, f in zip(rates['pipeline'], rates['forward']))
    return dict(name=name, size=size, forward=statistics.median(rates['forward']),
                pipeline=statistics.median(rates['pipeline']), ratio=ratio)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--models', nargs='+', choices=sorted(MODELS), default=['tiny', '0.1b'])
    parser.add_argument('--images', type=int, default=32, help='images in the folder')
    parser.add_argument('--batch-size', type=int, default=4)
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')
    parser.add_argument('--dtype', default='fp32', choices=('fp32', 'bf16', 'fp16'))
    args = parser.parse_args()
    print(f'{args.images} JPEG images 640x480, batch {args.batch_size}, {args.dtype}, device {args.device}, '
          f'{torch.get_num_threads()} threads, median of {args.repeats} interleaved repeats, load average '
          f'{os.getloadavg()[0]:.1f}')
    print(f'{"model":6s} {"input":>8s} {"forward img/s":>14s} {"pipeline img/s":>15s} {"ratio":>6s}')
    with tempfile.TemporaryDirectory() as directory:
        folder = write_images(directory, args.images)
        for name in args.models:
            r = measure(name, args, directory, folder)
            print(f'{name:6s} {r["size"][0]:>4d}x{r["size"][1]:<3d} {r["forward"]:14.2f} {r["pipeline"]:15.2f} '
                  f'{r["ratio"]:6.2f}')


if __name__ == '__main__':
    main()
