"""Round 4 of the bad-input catalogue (issue 36): lost intent (flags, options and files that would change or write
nothing), manifests that disagree with their bundle, damaged media and checkpoints, and messages that were unclear.
The cases register into :data:`tests.reliability.catalogue.CASES` (this module is imported at its end)."""
import functools
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np

from tests.reliability.catalogue import (
    FAULT_TESTS,
    POSE_NANO,
    REPO,
    CommandError,
    _command,
    _infer_cli,
    case,
)

SEG_NANO = REPO / 'configs/seg/sapiens2_nano_seg_synthhumans-128x96.py'


def _hashes(folder: Path) -> dict:
    import hashlib
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob('*')) if p.is_file()}


# ------------------------------------------------------------------------------------------------- lost intent
@case('infer-out-empty', 'lost intent', "sapiens2-infer --out ''", 'one line: not a folder name (it printed '
      '`seg: results in seg` and wrote nothing)', error=CommandError,
      match=r"^exit 2: .*error: --out '' is not a folder name; give the folder")
def _(tmp):
    from sapiens2.apis.cli import main
    return _command(main, ['a.png', '--task', 'seg', '--out', '']), _one_line_after_usage


@case('infer-writes-nothing', 'lost intent', 'sapiens2-infer --no-vis --no-pred (without --show)',
      'one line: the flags write and show nothing; drop one', error=CommandError,
      match=r'^exit 2: .*error: --no-vis with --no-pred writes nothing and shows nothing; drop one of them')
def _(tmp):
    from sapiens2.apis.cli import main
    return _command(main, ['a.png', '--task', 'pose', '--out', str(tmp / 'o'), '--no-vis', '--no-pred']), \
        _one_line_after_usage


@case('inferencer-writes-nothing', 'lost intent', "Sapiens2Inferencer(...)(image, out_dir=DIR, save_vis=False, "
      "save_pred=False), or out_dir=''", 'ValueError: nothing would be written; keep one, or out_dir=None',
      error=ValueError, match=r"save_vis=False with save_pred=False writes nothing to {tmp}/o; keep one of them.*\n"
      r"out_dir='' is not a folder name")
def _(tmp):
    from sapiens2.apis import Sapiens2Inferencer
    inferencer = Sapiens2Inferencer(str(POSE_NANO), device='cpu')
    image = np.zeros((64, 48, 3), np.uint8)

    def call():
        messages = []
        for options in (dict(out_dir=str(tmp / 'o'), save_vis=False, save_pred=False), dict(out_dir='')):
            try:
                inferencer(image, show_progress=False, **options)
            except ValueError as err:
                messages.append(str(err))
        if len(messages) == 2:
            raise ValueError('\n'.join(messages))

    def verify(_):
        assert not (tmp / 'o').exists(), 'the output folder was created'

    return call, verify


def _one_line_after_usage(err: CommandError) -> None:
    """argparse's usage line, then one error line."""
    lines = str(err).splitlines()
    assert 'Traceback' not in str(err) and len([line for line in lines if 'error:' in line]) == 1, str(err)


@case('cfg-options-unread-top-level', 'lost intent', '--cfg-options max_iters=2 max_iter=5 (a config variable and '
      'a key nothing reads, at the top level)', 'one line each naming the key where it is used '
      '(train_cfg.max_iters); the run trained its 600 iterations', error=ValueError, kind='ConfigOptionError',
      match=r"--cfg-options max_iters: 'max_iters' is a variable of the config, used when the file was read: setting "
      r'it now changes nothing; did you mean train_cfg\.max_iters\?.*\n--cfg-options max_iter: the config has no '
      r"top-level key 'max_iter' and nothing reads it; did you mean .*train_cfg\.max_iters")
def _(tmp):
    from sapiens2.engine.launch import load_config
    return lambda: load_config(str(POSE_NANO), {'max_iters': 2, 'max_iter': 5})


@case('cfg-options-below-none', 'lost intent', '--cfg-options model.backbone.init_cfg.checkpoint=x where init_cfg '
      'is None', "one line: init_cfg is None, replace it as a whole with `_delete_` (MMEngine's traceback)",
      error=ValueError, kind='ConfigOptionError',
      match=r'model\.backbone\.init_cfg is None in the config, not a dict, so it has no key .checkpoint.; replace it '
      r'as a whole: --cfg-options model\.backbone\.init_cfg\._delete_=True')
def _(tmp):
    from sapiens2.engine.launch import load_config
    return lambda: load_config(str(POSE_NANO), {'model.backbone.init_cfg.checkpoint': 'x.pth'})


@case('train-max-iters-0', 'lost intent', 'tools/train.py --cfg-options train_cfg.max_iters=0',
      'one line: the run would train nothing (it exited 0 silently); nothing written', error=ValueError,
      match=r'train_cfg\.max_iters = 0 in .*: the run would train nothing; give a number >= 1')
def _(tmp):
    from sapiens2.engine.launch import load_config, prepare_train_config

    def train():
        cfg = load_config(str(POSE_NANO), {'train_cfg.max_iters': 0})
        return prepare_train_config(cfg, str(POSE_NANO), str(tmp / 'work'))

    def verify(_):
        assert not (tmp / 'work').exists(), 'the work dir was created'

    return train, verify


# ------------------------------------------------------------------------------------------------------ bundles
@functools.lru_cache(maxsize=None)
def _exported(task: str) -> Path:
    """A bundle of the nano ``task`` config (random weights), exported once per process."""
    import torch

    from sapiens2.apis import init_model
    from sapiens2.deploy.bundle import write_bundle
    folder = Path(tempfile.mkdtemp(prefix=f'catalogue-bundle-{task}-'))
    torch.manual_seed(0)
    write_bundle(init_model(str(POSE_NANO if task == 'pose' else SEG_NANO), device='cpu'), str(folder))
    return folder


def _edited_bundle(tmp: Path, edit=None, onnx_of: str = 'pose', truncate: bool = False):
    """A copy of the pose bundle in ``{tmp}/b`` with its manifest edited by ``edit`` (in place), its model.onnx
    that of the ``onnx_of`` bundle (cut in half with ``truncate``); the inferencer built on it, and a check that
    the bundle's files are unchanged."""
    from sapiens2.apis import Sapiens2Inferencer
    folder = tmp / 'b'
    shutil.copytree(_exported('pose'), folder)
    manifest = json.loads((folder / 'sapiens2_bundle.json').read_text())
    if edit is not None:
        edit(manifest)
    (folder / 'sapiens2_bundle.json').write_text(json.dumps(manifest))
    onnx = (_exported(onnx_of) / 'model.onnx').read_bytes()
    (folder / 'model.onnx').write_bytes(onnx[:len(onnx) // 2] if truncate else onnx)
    before = _hashes(folder)

    def verify(_):
        assert _hashes(folder) == before, 'a file of the bundle changed'

    return (lambda: Sapiens2Inferencer(str(folder), device='cpu')), verify


@case('bundle-in-graph-false', 'bundles', 'a manifest whose preprocess.in_graph was set to false',
      'BundleError: the layout it records disagrees (preprocessing twice; keypoints were 144 px off, exit 0)',
      error=ValueError, kind='BundleError',
      match=r'preprocess\.in_graph is false but input\.layout says the graph takes .BGR pixels in \[0, 255\], NCHW. '
      r'\(the preprocessing would be applied twice\); export the bundle again')
def _(tmp):
    return _edited_bundle(tmp, lambda m: m['preprocess'].update(in_graph=False))


@case('bundle-in-graph-false-and-layout', 'bundles', 'a manifest whose preprocess.in_graph and input.layout were both '
      'edited to say the graph takes normalised RGB', 'BundleError: the graph holds the normalisation constants',
      error=ValueError, kind='BundleError',
      match=r'preprocess\.in_graph is false but {tmp}/b/model\.onnx normalises its input itself \(it holds the mean '
      r'and std constants\): the images would be normalised twice')
def _(tmp):
    return _edited_bundle(tmp, lambda m: (m['preprocess'].update(in_graph=False),
                                          m['input'].update(layout='normalised RGB, NCHW')))


@case('bundle-outputs-shape-edited', 'bundles', "a manifest whose outputs shape was edited",
      "BundleError naming the output, the graph's shape and the manifest's (was `'list' object has no attribute "
      "'flip'`)", error=ValueError, kind='BundleError',
      match=r'model\.onnx does not match its manifest: output \S+ is \[batch, 308, 32, 24\] in the graph but '
      r"\['batch', 308, 16, 24\] in the manifest")
def _(tmp):
    return _edited_bundle(tmp, lambda m: m['outputs'].update(shapes=[['batch', 308, 16, 24]]))


@case('bundle-outputs-structure-edited', 'bundles', 'a manifest whose outputs structure was edited (tensor to list)',
      "BundleError: the head of the bundle's config returns a tensor", error=ValueError, kind='BundleError',
      match=r"its manifest records outputs list \[\['batch', 308, 32, 24\]\] but the Sapiens2HeatmapHead of its "
      r"config returns tensor")
def _(tmp):
    return _edited_bundle(tmp, lambda m: m['outputs'].update(structure='list'))


@case('bundle-other-task-onnx', 'bundles', "a pose bundle holding the seg bundle's model.onnx",
      "BundleError: the graph's input and outputs are not the manifest's (was an AssertionError in mmpose's "
      'flip_heatmaps)', error=ValueError, kind='BundleError',
      match=r"does not match its manifest: .*output \S+ is \[batch, 29, \d+, \d+\] in the graph but "
      r"\['batch', 308, 32, 24\] in the manifest; the ONNX file belongs to another model")
def _(tmp):
    return _edited_bundle(tmp, onnx_of='seg')


@case('bundle-truncated-onnx', 'bundles', 'a bundle whose model.onnx is cut in half',
      'one line: not a complete ONNX model, copy or export again (was an InvalidProtobuf traceback)', error=ValueError,
      match=r'{tmp}/b/model\.onnx is not a complete ONNX model \(truncated or damaged')
def _(tmp):
    return _edited_bundle(tmp, truncate=True)


@case('bundle-manifest-wrong-type', 'bundles', 'a manifest whose input_size is the string "128x96"',
      'BundleError naming the field and what export writes', error=ValueError, kind='BundleError',
      match=r"sapiens2_bundle\.json: input_size is '128x96'; export writes \[H, W\]")
def _(tmp):
    return _edited_bundle(tmp, lambda m: m.update(input_size='128x96'))


# ------------------------------------------------------------------------------------------------- checkpoints
def _mislabelled_f16(path: Path) -> None:
    """A .safetensors file of F16 weights whose header says BF16 (sizes stay valid)."""
    import torch
    from safetensors.torch import save_file
    generator = torch.Generator().manual_seed(0)
    save_file({'proj.weight': (torch.randn(64, 64, generator=generator) * 0.02).half(),
               'norm.weight': torch.ones(64).half()}, str(path))
    data = path.read_bytes()
    size = struct.unpack('<Q', data[:8])[0]
    header = json.loads(data[8:8 + size])
    for value in header.values():
        if isinstance(value, dict) and value.get('dtype') == 'F16':
            value['dtype'] = 'BF16'
    text = json.dumps(header).encode()
    text += b' ' * (-len(text) % 8)
    path.write_bytes(struct.pack('<Q', len(text)) + text + data[8 + size:])


@case('checkpoint-f16-labelled-bf16', 'checkpoints', 'a .safetensors whose header labels F16 data BF16 (sizes valid)',
      'names the tensors and what their bytes are (it loaded garbage: keypoints 93 px off)', error=ValueError,
      match=r'{tmp}/w\.safetensors: the header labels proj\.weight BF16, but their bytes are F16 values')
def _(tmp):
    from sapiens2.engine.checkpoint import load_weights
    _mislabelled_f16(tmp / 'w.safetensors')
    return lambda: load_weights(str(tmp / 'w.safetensors'))


@case('checkpoint-safetensors-named-pth', 'checkpoints', 'a .safetensors file renamed .pth',
      'loaded as what it is, with a warning to rename it (was UnsafeCheckpointError recommending --trust-checkpoint)',
      warning=UserWarning, match=r'{tmp}/w\.pth is a \.safetensors file under another suffix; it is loaded as one')
def _(tmp):
    import torch

    from sapiens2.engine.checkpoint import load_weights, save_weights
    save_weights({'w': torch.arange(4.0)}, str(tmp / 'w.safetensors'))
    (tmp / 'w.safetensors').rename(tmp / 'w.pth')

    def verify(state_dict):
        assert torch.equal(state_dict['w'], torch.arange(4.0)), 'not the weights of the file'

    return lambda: load_weights(str(tmp / 'w.pth')), verify


@case('checkpoint-folder', 'checkpoints', '--weights DIR or --resume DIR (a work dir)',
      'one line: a folder, its newest checkpoint, and --resume without a path (was "does not exist")',
      error=IsADirectoryError, match=r'{tmp} is a folder, not a checkpoint file: pass one of its checkpoint files '
      r'\(its newest: {tmp}/iter_2\.pth\) \(tools/train\.py --resume without a path resumes from the work dir')
def _(tmp):
    import os

    import torch

    from sapiens2.engine.checkpoint import load_weights
    for step in (1, 2):
        torch.save({'w': torch.zeros(1)}, tmp / f'iter_{step}.pth')
        os.utime(tmp / f'iter_{step}.pth', (step, step))
    return lambda: load_weights(str(tmp))


@case('checkpoint-not-a-checkpoint', 'checkpoints', 'a text file given as a .pth checkpoint',
      'names the file: not a checkpoint (no advice to trust it)', error=ValueError,
      match=r'{tmp}/notes\.pth is not a checkpoint: neither a torch file \(zip archive or pickle\) nor a \.safetensors')
def _(tmp):
    from sapiens2.engine.checkpoint import load_weights
    (tmp / 'notes.pth').write_text('my notes\n')

    def verify(err):
        assert 'trust' not in str(err), f'suggests trusting a file that is no checkpoint: {err}'

    return lambda: load_weights(str(tmp / 'notes.pth')), verify


@case('resume-record-names-a-non-checkpoint', 'checkpoints', '--resume whose last_checkpoint names a text file',
      'names the record and why: not a checkpoint (it suggested trusting the file)', error=FileNotFoundError,
      match=r'Cannot resume: the latest checkpoint {tmp}/notes\.txt is truncated or damaged \(not a checkpoint: '
      r'neither a torch zip archive, a pickle nor a \.safetensors file\)')
def _(tmp):
    from sapiens2.engine.checkpoint import find_resume_checkpoint
    (tmp / 'notes.txt').write_text('my notes\n')
    (tmp / 'last_checkpoint').write_text(str(tmp / 'notes.txt'))
    return lambda: find_resume_checkpoint(str(tmp))


# ------------------------------------------------------------------------------------------------- media, writes
@case('video-truncated', 'inputs', 'an MJPEG AVI cut at 50 % (20 frames announced)',
      'a warning: how many of the announced frames were decoded (it gave 10 of 20 frames without a word)',
      warning=UserWarning, kind='DamagedInputWarning',
      match=r'video {tmp}/cut\.avi: \d+ of the 20 frames its container announces could be decoded \(the file is '
      r'truncated or damaged\)')
def _(tmp):
    from sapiens2.apis.io.sources import collect_sources
    writer = cv2.VideoWriter(str(tmp / 'clip.avi'), cv2.VideoWriter_fourcc(*'MJPG'), 10, (48, 64))
    for i in range(20):
        writer.write(np.random.default_rng(i).integers(0, 255, (64, 48, 3), np.uint8))
    writer.release()
    data = (tmp / 'clip.avi').read_bytes()
    (tmp / 'cut.avi').write_bytes(data[:len(data) // 2])
    return lambda: sum(1 for _ in collect_sources([str(tmp / 'cut.avi')])[0].frames())


@case('image-too-large', 'inputs', 'a photo of more pixels than sapiens2 reads (a 108 MP photo peaked at 14.3 GB)',
      'read reduced to MAX_INPUT_PIXELS (JPEG decoded reduced), keeping its aspect, with a warning naming both sizes',
      warning=UserWarning, kind='ReducedInputWarning',
      match=r'image {tmp}/big\.jpg \(400x300\) is read at 115x86, 10000 pixels at most .*its results are at that size')
def _(tmp):
    from sapiens2.apis.io.sources import MAX_INPUT_PIXELS, read_image
    cv2.imwrite(str(tmp / 'big.jpg'), np.random.default_rng(0).integers(0, 255, (300, 400, 3), np.uint8))

    def verify(image):
        assert image.shape == (86, 115, 3), image.shape
        assert MAX_INPUT_PIXELS == 4096 * 4096

    return lambda: read_image(str(tmp / 'big.jpg'), max_pixels=10000), verify


@case('pose-image-empty-file', 'inputs', "a 0-byte image read by mmpose's LoadImage",
      "names the file: empty (0 bytes) (was OpenCV's `!buf.empty()` assertion)", error=OSError,
      match=r'cannot read image {tmp}/a\.png: the file is empty \(0 bytes\)')
def _(tmp):
    from mmpose.datasets.transforms import LoadImage
    (tmp / 'a.png').write_bytes(b'')
    return lambda: LoadImage()(dict(img_path=str(tmp / 'a.png')))


@case('picture-disk-full', 'outputs', 'a picture written to a full disk (/dev/full)',
      "names the file and the OS's reason (was `cannot write .../000001.png` alone)", error=OSError,
      match=r'cannot write /dev/full: No space left on device')
def _(tmp):
    from sapiens2.utils.image_write import write_image
    return lambda: write_image('/dev/full', np.zeros((8, 8, 3), np.uint8))


# ------------------------------------------------------------------------------------------------ messages
@case('smooth-beta-nan', 'inference', 'sapiens2-infer --smooth-beta nan', 'one line naming the argument and the '
      'range (was `cannot convert float NaN to integer`)', error=CommandError,
      match=r'^exit 2: .*error: argument --smooth-beta: nan is out of range; give a finite number >= 0')
def _(tmp):
    return _infer_cli(tmp, '--smooth-beta', 'nan'), _one_line_after_usage


@case('dist-train-gpus', 'training', 'tools/dist_train.sh CONFIG 0 (and CONFIG abc)', 'one line: GPUS must be an '
      'integer >= 1 (were torchrun tracebacks)', error=CommandError,
      match=r"^exit 2: dist_train\.sh: error: GPUS is '0': give the number of processes per node, an integer >= 1.*"
      r"\nexit 2: dist_train\.sh: error: GPUS is 'abc'")
def _(tmp):
    def run():
        lines = []
        for gpus in ('0', 'abc'):
            proc = subprocess.run(['bash', str(REPO / 'tools/dist_train.sh'), 'c.py', gpus], capture_output=True,
                                  text=True, env={'PATH': os.defpath, 'PYTHON': sys.executable})
            lines.append(f'exit {proc.returncode}: {proc.stderr.strip()}')
        if any(not line.startswith('exit 0') for line in lines):
            raise CommandError('\n'.join(lines))

    return run


@case('ctrl-c-message', 'training', 'Ctrl-C in a tool while nothing says what was kept (during a checkpoint save)',
      'exit 130 and `<tool>: interrupted` (was an empty `train.py: ` line)', error=CommandError,
      match=r'^exit 130: train\.py: interrupted$')
def _(tmp):
    from sapiens2.utils.cli_errors import run_cli

    def interrupted(argv):
        raise KeyboardInterrupt()

    return _command(lambda argv: run_cli(interrupted, argv, prog='train.py'), [])


@case('custom-imports-missing', 'configs', 'custom_imports naming a module that is not installed',
      "names the module (MMEngine's message lists sys.path only)", error=ImportError,
      match=r"config {tmp}/c\.py: custom_imports cannot be imported: no module named 'my_missing_module'")
def _(tmp):
    from sapiens2.engine.launch import load_config
    (tmp / 'c.py').write_text(f"_base_ = ['{POSE_NANO}']\n"
                              "custom_imports = dict(imports=['my_missing_module'], allow_failed_imports=False)\n")
    return lambda: load_config(str(tmp / 'c.py'))


@case('pose-layout-count-mismatch', 'inference', "a pose model predicting 308 keypoints whose dataset_meta names 17",
      'the counts the right way round: the metainfo describes 17, the model predicts 308', error=ValueError,
      match=r"the model's dataset_meta describes 17 keypoints but the model predicts 308")
def _(tmp):
    from sapiens2.apis import build_task, init_model
    model = init_model(str(POSE_NANO), device='cpu')
    model.dataset_meta = dict(model.dataset_meta, keypoint_id2name={i: f'k{i}' for i in range(17)}, num_keypoints=17)
    return lambda: build_task(model, model.cfg).keypoint_names()


FAULT_TESTS.extend([
        ('transformers import of a seg folder with a pose config', 'TransformersConversionError saying the folder '
         'holds a seg model and the config builds a pose one',
         'tests/interop/test_transformers.py::test_import_checks_config_json_against_the_config'),
        ('a file that is not a picture uploaded to the web demo (and an error of a run)', 'a gr.Error the page shows '
         "as it is, no server traceback (was Gradio's \"has not enabled verbose error reporting\")",
         'tests/apis/test_web_demo.py::test_unreadable_uploads_and_user_errors_are_page_messages'),
        ("the web demo's upload limit and Gradio's copies of uploads", 'max_file_size at launch; GRADIO_TEMP_DIR in '
         'the run\'s folder, removed when the server stops',
         'tests/apis/test_web_demo.py::test_gradio_keeps_its_files_in_the_runs_folder'),
])
