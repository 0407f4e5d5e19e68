"""A new dense task as a project touches only its own folder: a toy ``brightness`` project, written into a temporary
folder (its head, its inference task with its panel and its raw output, its config), runs through
``Sapiens2Inferencer`` and appears in the composite picture without any change to ``sapiens2/``."""
import sys
import textwrap

import cv2
import numpy as np
import pytest

from sapiens2.apis import Sapiens2Inferencer
from sapiens2.registry import INFERENCE_TASKS, MODELS
from sapiens2.visualization.composite import PANELS, composite_picture, panel_layout, title_height
from sapiens2.visualization.panels import TASK_PANELS

#: The project, file by file, as a contributor would write it under projects/brightness/.
PROJECT = {
    'sapiens2_brightness/__init__.py': '''
        """A toy dense task: the image's brightness, loaded by ``custom_imports``."""
        from .brightness_head import BrightnessHead, ImageBackbone  # noqa: F401
        from .brightness_inference_task import BrightnessInferenceTask  # noqa: F401
        ''',
    'sapiens2_brightness/brightness_head.py': '''
        import torch
        from mmengine.model import BaseModule
        from torch import nn

        from sapiens2.models.heads import DenseTrunkHead
        from sapiens2.registry import MODELS


        @MODELS.register_module()
        class ImageBackbone(BaseModule):
            """The image itself as the only feature map."""

            def __init__(self, init_cfg=None):
                super().__init__(init_cfg)
                self.gain = nn.Parameter(torch.ones(()))

            def forward(self, x):
                return [x * self.gain]


        @MODELS.register_module()
        class BrightnessHead(DenseTrunkHead):
            """The mean of the channels, in [0, 1]."""

            def __init__(self):
                super().__init__(in_channels=3, upsample_channels=(), conv_out_channels=())

            def forward(self, x):
                return x.mean(1, keepdim=True) / 255
        ''',
    'sapiens2_brightness/brightness_inference_task.py': '''
        import cv2
        import numpy as np

        from sapiens2.apis import DenseInferenceTask
        from sapiens2.utils.atomic_save import atomic_save_npy
        from sapiens2.registry import INFERENCE_TASKS
        from sapiens2.visualization.dense_maps import side_by_side
        from sapiens2.visualization.panels import Panel


        def brightness_panel(image, result, mask, options):
            """The brightness in the magma colour map."""
            grey = np.round(np.clip(result['brightness'], 0, 1) * 255).astype(np.uint8)
            return cv2.applyColorMap(grey, cv2.COLORMAP_MAGMA)


        @INFERENCE_TASKS.register_module()
        class BrightnessInferenceTask(DenseInferenceTask):
            """``brightness`` (H, W) in [0, 1]; ``<stem>_brightness.npy``; [image | brightness]."""
            name, head_types = 'brightness', ('BrightnessHead', )
            raw_suffixes = ('_brightness.npy', )
            panel = Panel('brightness', brightness_panel)

            def decode(self, sample):
                return dict(brightness=sample.pred_dense.data[0].float().cpu().numpy())

            def visualize(self, image, result, context=None):
                return side_by_side(image, brightness_panel(image, result, None, None))

            def save(self, image, result, out_dir, stem, context=None):
                path = self.out_path(out_dir, stem, '_brightness.npy')
                atomic_save_npy(path, result['brightness'])
                return [path]
        ''',
    'configs/sapiens2_toy_brightness-64x48.py': '''
        custom_imports = dict(imports=['sapiens2_brightness'], allow_failed_imports=False)
        default_scope = 'sapiens2'
        model = dict(type='DenseEstimator', backbone=dict(type='ImageBackbone'),
                     decode_head=dict(type='BrightnessHead'),
                     data_preprocessor=dict(type='ImgDataPreprocessor', mean=[0, 0, 0], std=[1, 1, 1]))
        test_dataloader = dict(dataset=dict(pipeline=[
            dict(type='LoadImageFromFile'),
            dict(type='Letterbox', size=(64, 48), test_mode=True),
            dict(type='PackDenseInputs', target_key=None),
        ]))
        ''',
}
REGISTERED = {MODELS: ('ImageBackbone', 'BrightnessHead'), INFERENCE_TASKS: ('BrightnessInferenceTask', )}


@pytest.fixture
def brightness_project(tmp_path, monkeypatch):
    """The project's folder on the import path (as projects/<name> is); its registrations are undone afterwards."""
    root = tmp_path / 'brightness'
    for name, text in PROJECT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip())
    monkeypatch.syspath_prepend(str(root))
    yield root
    for registry, names in REGISTERED.items():
        for name in names:
            registry._module_dict.pop(name, None)
    TASK_PANELS.pop('brightness', None)
    for module in [m for m in sys.modules if m.split('.')[0] == 'sapiens2_brightness']:
        del sys.modules[module]


def test_a_new_dense_project_runs_writes_its_output_and_draws_its_panel(brightness_project, tmp_path):
    inferencer = Sapiens2Inferencer(str(brightness_project / 'configs' / 'sapiens2_toy_brightness-64x48.py'),
                                    device='cpu')
    assert [task.name for task in inferencer.tasks] == ['brightness']
    image = np.random.default_rng(0).integers(0, 255, (96, 72, 3), dtype=np.uint8)
    image[:, :36] //= 4  # a dark left half
    result = inferencer([image], out_dir=str(tmp_path / 'out'), show_progress=False)[0]
    brightness = result['brightness']['brightness']
    assert brightness.shape == (96, 72)
    np.testing.assert_allclose(brightness.mean(), image.mean() / 255, atol=0.02)
    assert brightness[:, :30].mean() < brightness[:, 42:].mean() / 2
    written = sorted(str(p.relative_to(tmp_path / 'out')) for p in (tmp_path / 'out').rglob('*') if p.is_file())
    raw = [name for name in written if name.startswith('brightness/') and name.endswith('_brightness.npy')]
    assert len(raw) == 1 and any(name.endswith('.png') for name in written), written
    np.testing.assert_array_equal(np.load(tmp_path / 'out' / raw[0]), brightness)

    results = {'brightness': result['brightness']}
    assert panel_layout(results) == list(PANELS) + [('brightness', 'brightness')]
    picture = composite_picture(image, results)
    assert picture.shape == (96 + title_height(96), 8 * 72, 3)
    grey = np.round(np.clip(brightness, 0, 1) * 255).astype(np.uint8)
    np.testing.assert_array_equal(picture[title_height(96):, 7 * 72:], cv2.applyColorMap(grey, cv2.COLORMAP_MAGMA))
